"""CLI round trip: `lgcodec decode --jsonl | lgcodec encode --jsonl` reproduces the
bytes of every golden vector.

Usage: python vectors/check_cli.py PATH/TO/lgcodec

Rows the codec refuses on purpose (trailing bytes after the value, invalid JSON) must
come back as error records; `json` rows must decode (their whitespace is not kept, so
their bytes are not compared); `empty` markers (which Python's savers write) decode to
null and encode back to empty bytes.

JSONL bookkeeping is checked on the way: every input record carries its vector's
`name`, which each answer must pass through, and a blank line after every tenth record,
which the answers' `line` numbers must count. Error records from decode pass through
encode unchanged.
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
        lines, numbers = [], []
        for i, r in enumerate(rows):
            lines.append(json.dumps({"name": r["name"], "type": r["type"], "data": r["data"]}))
            numbers.append(len(lines))
            if i % 10 == 9:
                lines.append("")  # a blank line: skipped, but counted
        text = "".join(l + "\n" for l in lines)
        code, decoded, err = run(cli, ["decode", "--jsonl"], text)
        expect_code = 1 if any(r["name"] in REFUSED for r in rows) else 0
        if code != expect_code or len(decoded) != len(rows):
            print(f"FAIL {file}: decode exit {code} (want {expect_code}), {len(decoded)} lines for {len(rows)} rows: {err}")
            failed += 1
            continue
        to_encode, keep = [], []
        for row, number, line in zip(rows, numbers, decoded):
            answer = json.loads(line)
            ok = answer.get("line") == number and answer.get("name") == row["name"]
            if row["name"] in REFUSED:
                ok = ok and answer.get("error", {}).get("kind") == REFUSED[row["name"]]
            elif "error" in answer:
                ok = False
            else:
                ok = ok and answer["type"] == row["type"]
                if row["type"] == "empty":
                    ok = ok and answer["value"] is None
            if ok and row["type"] != "json":
                to_encode.append(line)
                keep.append(row)
            if not ok:
                print(f"FAIL {file}:{row['name']}: {line[:200]}")
            passed, failed = passed + ok, failed + (not ok)
        code, encoded, err = run(cli, ["encode", "--jsonl"], "".join(l + "\n" for l in to_encode))
        expect_code = 1 if any(r["name"] in REFUSED for r in keep) else 0
        if code != expect_code or len(encoded) != len(keep):
            print(f"FAIL {file}: encode exit {code}, {len(encoded)} lines for {len(keep)}: {err}")
            failed += 1
            continue
        for i, (row, line) in enumerate(zip(keep, encoded)):
            answer = json.loads(line)
            ok = answer.get("line") == i + 1 and answer.get("name") == row["name"]
            if row["name"] in REFUSED:
                # The decode error passes through encode unchanged.
                ok = ok and answer.get("error", {}).get("kind") == REFUSED[row["name"]]
            else:
                ok = ok and answer.get("type") == row["type"] and answer.get("data") == row["data"]
            if not ok:
                print(f"FAIL {file}:{row['name']}: re-encoded answer differs: {line[:200]}")
            passed, failed = passed + ok, failed + (not ok)
    print(f"cli-check: {passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
