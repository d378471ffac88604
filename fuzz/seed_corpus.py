#!/usr/bin/env python3
"""Seeds fuzz/corpus/<target>/ from the golden vectors (vectors/*.jsonl).

    python3 fuzz/seed_corpus.py

loads_typed: one file per row, a tag-selector byte then the row's data (the selector
indexes TAGS in fuzz_targets/loads_typed.rs). msgpack_roundtrip: every msgpack row and
every encrypted row's plaintext. encrypted_loads: the encrypted rows under the 16-byte
test key, as they are. typed_from_slice and value_ref: every msgpack row (the graph rows hold real
messages). view_roundtrip: every row's JSON view, as the
`lgcodec` CLI writes it (built with `cargo run --features cli`, or the binary named by
`LGCODEC_BIN` when set, as CI does), plus the json rows.
The corpus directories are gitignored; libFuzzer adds what it finds next to the seeds.
"""
import base64
import hashlib
import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
TAGS = ["msgpack", "json", "null", "bytes", "bytearray", "pickle", "empty", "yaml"]
# fuzz_targets/encrypted_loads.rs: its tags and key (the 16-byte key of the eax16/gcm16
# vectors, so that real rows authenticate and the fuzzer gets past the tag check).
ENC_TAGS = ["msgpack+aes", "json+aes", "null+aes", "bytes+aes", "msgpack", "msgpack+zlib+aes", "msgpack+des", "+aes"]
ENC_KEY = "0123456789abcdef"


def rows():
    for name in ("unit", "graph_rows", "encrypted"):
        path = os.path.join(ROOT, "vectors", f"{name}.jsonl")
        with open(path) as f:
            for line in f:
                row = json.loads(line)
                if "plain_type" in row:
                    # Encrypted rows: the plaintext pair is what loads_typed sees.
                    yield row["plain_type"], base64.b64decode(row["plain_data"])
                else:
                    yield row["type"], base64.b64decode(row["data"])


# CI seeds a scratch directory (FUZZ_CORPUS_DIR) so a local corpus is never touched.
CORPUS = os.environ.get("FUZZ_CORPUS_DIR") or os.path.join(HERE, "corpus")


def write(target, data):
    d = os.path.join(CORPUS, target)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, hashlib.sha1(data).hexdigest()), "wb") as f:
        f.write(data)


def main():
    counts = {}
    records = []
    with open(os.path.join(ROOT, "vectors", "encrypted.jsonl")) as f:
        for line in f:
            row = json.loads(line)
            if row.get("key") == ENC_KEY and row["type"] in ENC_TAGS:
                write("encrypted_loads", bytes([ENC_TAGS.index(row["type"])]) + base64.b64decode(row["data"]))
                counts["encrypted_loads"] = counts.get("encrypted_loads", 0) + 1
    for tag, data in rows():
        if tag in TAGS:
            write("loads_typed", bytes([TAGS.index(tag)]) + data)
            counts["loads_typed"] = counts.get("loads_typed", 0) + 1
        if tag == "msgpack":
            write("typed_from_slice", data)
            write("value_ref", data)
            write("msgpack_roundtrip", data)
            counts["msgpack_roundtrip"] = counts.get("msgpack_roundtrip", 0) + 1
        if tag == "json":
            write("view_roundtrip", data)
        if tag in ("msgpack", "json", "bytes", "null"):
            records.append(json.dumps({"type": tag, "data": base64.b64encode(data).decode()}))
    cli = os.environ.get("LGCODEC_BIN")
    cmd = [cli] if cli else ["cargo", "run", "-q", "--features", "cli", "--bin", "lgcodec", "--"]
    out = subprocess.run(
        cmd + ["decode", "--jsonl"],
        cwd=ROOT,
        input="\n".join(records) + "\n",
        capture_output=True,
        text=True,
    )
    # Rows the CLI refuses (hostile vectors) answer with an error record: skipped.
    if not out.stdout:
        sys.exit(f"lgcodec decode failed: {out.stderr}")
    for line in out.stdout.split("\n"):
        if not line:
            continue
        rec = json.loads(line)
        if "value" in rec:
            write("view_roundtrip", json.dumps(rec["value"], ensure_ascii=False).encode())
            counts["view_roundtrip"] = counts.get("view_roundtrip", 0) + 1
    for target, n in sorted(counts.items()):
        print(f"{target}: {n} seeds")


if __name__ == "__main__":
    main()
