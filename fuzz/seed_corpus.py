#!/usr/bin/env python3
"""Seeds fuzz/corpus/<target>/ from the golden vectors (vectors/*.jsonl).

    python3 fuzz/seed_corpus.py

loads_typed: one file per row, a tag-selector byte then the row's data (the selector
indexes TAGS in fuzz_targets/loads_typed.rs). msgpack_roundtrip: every msgpack row and
every encrypted row's plaintext. encrypted_loads: the encrypted rows under the 16-byte
test key, as they are. typed_from_slice and value_ref: every msgpack row (the graph rows hold real
messages). view_roundtrip: every row's JSON view, as the
`lgcodec` CLI writes it (built with `cargo run --features cli`, or the binary named by
`LGCODEC_BIN` when set, as CI does), plus the json rows. backup_verify: a backup
(`lgcodec store export`) of every SQLite store in vectors/stores. store_inputs: a
selector byte (which input, see fuzz_targets/store_inputs.rs) then a location, date,
duration, checkpoint id, policy or key variables as an operator writes them.
The corpus directories are gitignored; libFuzzer adds what it finds next to the seeds.
"""
import base64
import hashlib
import json
import os
import subprocess
import sys
import tempfile

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


# fuzz_targets/store_inputs.rs: its selector (0 location, 1 date, 2 duration, 3 checkpoint
# id, 4 policy, 5 key variables split at NUL) and the text as the CLI's docs write it.
STORE_INPUTS = [
    (0, "sqlite:checkpoints.db"),
    (0, "postgresql://user@localhost:5432/db?sslmode=require"),
    (0, "postgres:/host/db"),
    (1, "2024-01-31"),
    (1, "2024-07-01T12:30:45.5+00:00"),
    (1, "2024-02-29T23:59:59Z"),
    (2, "1h30m"),
    (2, "500ms"),
    (3, "1f1e8e14-15a5-6c9a-8001-73c70dd9ebf6"),
    (4, '{"checkpointer": {"ttl": {"strategy": "delete", "default_ttl": 43200, "sweep_interval_minutes": 10}}}'),
    (4, '{"rules": {"keep_latest": 2, "max_age": "30d"}, "keep": {"labels": ["pin"], "interrupted": true}, '
        '"sweep": {"every": "1h", "batch_size": 100}}'),
    (5, "new-key-16-bytes\0old-key-16-bytes,base64:YSxjZGVmZ2hpamtsbW5vcA==\0label=0123456789abcdef"),
]

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
    stores = os.path.join(ROOT, "vectors", "stores")
    for name in sorted(os.listdir(stores)):
        db = os.path.join(stores, name, "store.sqlite")
        if not os.path.exists(db):
            continue
        with tempfile.TemporaryDirectory() as tmp:
            backup = os.path.join(tmp, "backup.jsonl")
            subprocess.run(cmd + ["store", "export", db, backup], cwd=ROOT, check=True, capture_output=True)
            with open(backup, "rb") as f:
                write("backup_verify", f.read())
            counts["backup_verify"] = counts.get("backup_verify", 0) + 1
            if name == "sqlite-py-3.1.2":
                # A header with threads left out (`excluded_threads`).
                subprocess.run(cmd + ["store", "export", db, backup, "--exclude-thread", "t-short"],
                               cwd=ROOT, check=True, capture_output=True)
                with open(backup, "rb") as f:
                    write("backup_verify", f.read())
                counts["backup_verify"] += 1
    for selector, text in STORE_INPUTS:
        write("store_inputs", bytes([selector]) + text.encode())
        counts["store_inputs"] = counts.get("store_inputs", 0) + 1
    for target, n in sorted(counts.items()):
        print(f"{target}: {n} seeds")


if __name__ == "__main__":
    main()
