"""CLI encryption: `lgcodec decode` decrypts Python-encrypted rows when LANGGRAPH_AES_KEY is
set (answering the inner tag), `lgcodec encode --encrypt` writes rows the real Python
EncryptedSerializer reads, and `lgcodec rekey` moves rows from a previous key to the primary.
`empty` rows (which Python's savers write next to encrypted ones) decode to null and pass
through; without a key, every encrypted row answers a missing_key error that says to set
LANGGRAPH_AES_KEY, and the plaintext rows still decode.

Usage: python vectors/check_cli_crypto.py PATH/TO/lgcodec
"""
import base64
import json
import os
import subprocess
import sys
from pathlib import Path

from langgraph.checkpoint.serde.encrypted import EncryptedSerializer

HERE = Path(__file__).resolve().parent


def run(cli, args, text, env):
    proc = subprocess.run([cli, *args], input=text, capture_output=True, text=True,
                          env={**os.environ, **env})
    return proc.returncode, [l for l in proc.stdout.split("\n") if l], proc.stderr


def main():
    cli = sys.argv[1]
    passed = failed = 0

    def check(ok, what):
        nonlocal passed, failed
        if ok:
            passed += 1
        else:
            failed += 1
            print("FAIL", what)

    rows = [json.loads(l) for l in (HERE / "encrypted.jsonl").read_text().split("\n") if l.strip()]
    for key in sorted({r["key"] for r in rows}):
        mine = [r for r in rows if r["key"] == key]
        text = "".join(json.dumps({"type": r["type"], "data": r["data"]}) + "\n" for r in mine)
        code, out, err = run(cli, ["decode", "--jsonl"], text, {"LANGGRAPH_AES_KEY": key})
        check(code == 0 and len(out) == len(mine), f"decode key {len(key)}: exit {code} {err}")
        # Re-encode the decrypted views unencrypted: must give Python's plaintext bytes.
        code, enc, err = run(cli, ["encode", "--jsonl"], "".join(l + "\n" for l in out), {})
        for r, d, e in zip(mine, out, enc):
            d, e = json.loads(d), json.loads(e)
            check(d.get("type") == r["plain_type"] and e.get("data") == r["plain_data"],
                  f"{r['name']}: decrypted value differs from Python's plaintext")
        # No key: encrypted rows say what to do, the others decode.
        env = {k: v for k, v in os.environ.items() if not k.startswith("LANGGRAPH_AES_KEY")}
        proc = subprocess.run([cli, "decode", "--jsonl"], input=text, capture_output=True, text=True, env=env)
        out = [json.loads(l) for l in proc.stdout.split("\n") if l]
        for r, a in zip(mine, out):
            if r["type"].endswith("+aes"):
                e = a.get("error", {})
                check(e.get("kind") == "missing_key" and "set LANGGRAPH_AES_KEY" in e.get("message", ""),
                      f"{r['name']} without a key: {a}")
            else:
                check(a.get("type") == r["plain_type"], f"{r['name']} (not encrypted) without a key: {a}")

    # encode --encrypt: Python decrypts with the real package, both modes' reader is EAX default.
    key = "0123456789abcdef0123456789abcdef"
    record = {"type": "msgpack", "value": {"step": 3, "when": {"$object": "method_single_arg", "module": "datetime", "name": "datetime", "arg": "2024-05-01T12:00:00+00:00", "method": "fromisoformat"}}}
    code, out, err = run(cli, ["encode", "--encrypt", "--jsonl"], json.dumps(record) + "\n", {"LANGGRAPH_AES_KEY": key})
    check(code == 0 and len(out) == 1, f"encode --encrypt: {err}")
    if out:
        row = json.loads(out[0])
        os.environ["LANGGRAPH_AES_KEY"] = key
        serde = EncryptedSerializer.from_pycryptodome_aes()
        import datetime
        value = serde.loads_typed((row["type"], base64.b64decode(row["data"])))
        check(row["type"] == "msgpack+aes" and value == {"step": 3, "when": datetime.datetime(2024, 5, 1, 12, tzinfo=datetime.timezone.utc)},
              f"Python read {row['type']} as {value!r}")
        # rekey: old key becomes previous, new primary; Python with the new key reads it.
        new = "fedcba9876543210"
        code, out2, err = run(cli, ["rekey"], out[0] + "\n",
                              {"LANGGRAPH_AES_KEY": new, "LANGGRAPH_AES_KEY_PREVIOUS": key})
        check(code == 0 and len(out2) == 1, f"rekey: {err}")
        if out2:
            row2 = json.loads(out2[0])
            os.environ["LANGGRAPH_AES_KEY"] = new
            value2 = EncryptedSerializer.from_pycryptodome_aes().loads_typed((row2["type"], base64.b64decode(row2["data"])))
            check(value2 == value and row2["data"] != row["data"], "rekeyed row unreadable under the new key")
    print(f"cli-crypto-check: {passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
