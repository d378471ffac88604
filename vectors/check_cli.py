"""CLI round trip: `lgcodec decode --jsonl | lgcodec encode --jsonl` reproduces the
bytes of every golden vector.

Usage: python vectors/check_cli.py PATH/TO/lgcodec

Rows the codec refuses on purpose (trailing bytes after the value, invalid JSON) must
come back as error records; `json` rows must decode (their whitespace is not kept, so
their bytes are not compared); `empty` markers are saver-level and skipped.
"""
import json
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
REFUSED = {"trailing_bytes_after_value": "trailing_bytes", "json_invalid_syntax": "invalid_json"}


def run(cli, args, text):
    proc = subprocess.run([cli, *args], input=text, capture_output=True, text=True)
    lines = proc.stdout.split("\n")
    return proc.returncode, [l for l in lines if l], proc.stderr


def main():
    cli = sys.argv[1]
    passed = failed = 0
    for file in ("unit.jsonl", "graph_rows.jsonl"):
        rows = [json.loads(l) for l in (HERE / file).read_text().split("\n") if l.strip()]
        rows = [r for r in rows if r["type"] != "empty"]
        text = "".join(json.dumps({"type": r["type"], "data": r["data"]}) + "\n" for r in rows)
        code, decoded, err = run(cli, ["decode", "--jsonl"], text)
        expect_code = 1 if any(r["name"] in REFUSED for r in rows) else 0
        if code != expect_code or len(decoded) != len(rows):
            print(f"FAIL {file}: decode exit {code} (want {expect_code}), {len(decoded)} lines for {len(rows)} rows: {err}")
            failed += 1
            continue
        to_encode, keep = [], []
        for row, line in zip(rows, decoded):
            answer = json.loads(line)
            if row["name"] in REFUSED:
                ok = answer.get("error", {}).get("kind") == REFUSED[row["name"]]
            elif "error" in answer:
                ok = False
            else:
                ok = answer["type"] == row["type"]
                if ok and row["type"] != "json":
                    to_encode.append(line)
                    keep.append(row)
            if not ok:
                print(f"FAIL {file}:{row['name']}: {line[:200]}")
            passed, failed = passed + ok, failed + (not ok)
        code, encoded, err = run(cli, ["encode", "--jsonl"], "".join(l + "\n" for l in to_encode))
        if code != 0 or len(encoded) != len(keep):
            print(f"FAIL {file}: encode exit {code}, {len(encoded)} lines for {len(keep)}: {err}")
            failed += 1
            continue
        for row, line in zip(keep, encoded):
            answer = json.loads(line)
            ok = answer.get("type") == row["type"] and answer.get("data") == row["data"]
            if not ok:
                print(f"FAIL {file}:{row['name']}: re-encoded bytes differ")
            passed, failed = passed + ok, failed + (not ok)
    print(f"cli-check: {passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
