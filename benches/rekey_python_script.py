"""The script a user would write today to rekey a LangGraph checkpoint store in Python:
read each row, Python's own `EncryptedSerializer` with the old key -> the new key
(`from_pycryptodome_aes`), UPDATE it. The baseline `lgcodec store rekey` is measured
against (benches/README.md).

    LANGGRAPH_AES_KEY=NEW LANGGRAPH_AES_KEY_PREVIOUS=OLD \\
        python benches/rekey_python_script.py STORE [--batch N]

STORE: `sqlite:PATH`, a bare path, or a `postgres://` / `postgresql://` URL. The new
key is LANGGRAPH_AES_KEY; the old key the first entry of LANGGRAPH_AES_KEY_PREVIOUS
(else LANGGRAPH_AES_FALLBACK_KEYS), or `--old-key` / `--new-key`. Rows in clear, and
rows the old key does not open (already rekeyed), are left as they are.

Prints one JSON object: rows read / rewritten / skipped, bytes of the rewritten values
(as stored before), seconds, rows_per_s and mb_per_s (MB = 10^6 bytes).

What it does per row is what such a script does: `loads_typed` (decrypt + msgpack
decode into Python objects) then `dumps_typed` (msgpack encode + encrypt), one UPDATE
per row, a commit every `--batch` rows. It is not careful: no compare-and-swap (a row
a live writer changed in between is overwritten with what was read), no read-back check,
`+zlib` rows are not understood (Python 4.3.2 has no zlib wrapper; counted as skipped).
Worse, decoding into Python objects is lossy: a value of a class the script cannot
import (the graph's own dataclasses, say) is decoded as a dict and written back as a
dict. Run on the rotation runbook's store (vectors/store/rotation.py, whose state holds
`graphs.Note`), the graph afterwards reads `dict`s where it wrote `Note`s
(`AttributeError: 'dict' object has no attribute 'n'`). `lgcodec store rekey` re-encrypts
the stored bytes and never decodes them.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import sys
import time

from langgraph.checkpoint.serde.encrypted import EncryptedSerializer

# (table, value column, key columns) of Python's layouts
SQLITE_TABLES = [
    ("checkpoints", "checkpoint", ("thread_id", "checkpoint_ns", "checkpoint_id")),
    ("writes", "value", ("thread_id", "checkpoint_ns", "checkpoint_id", "task_id", "idx")),
]
POSTGRES_TABLES = [
    ("checkpoint_blobs", "blob", ("thread_id", "checkpoint_ns", "channel", "version")),
    ("checkpoint_writes", "blob", ("thread_id", "checkpoint_ns", "checkpoint_id", "task_id", "idx")),
]


def first_entry(var: str) -> str | None:
    value = os.environ.get(var)
    if not value:
        return None
    return next((e for e in value.split(",") if e), None)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("store")
    ap.add_argument("--old-key", default=None)
    ap.add_argument("--new-key", default=None)
    ap.add_argument("--batch", type=int, default=1000, help="rows per commit")
    args = ap.parse_args()
    new_key = args.new_key or os.environ.get("LANGGRAPH_AES_KEY")
    old_key = args.old_key or first_entry("LANGGRAPH_AES_KEY_PREVIOUS") or first_entry("LANGGRAPH_AES_FALLBACK_KEYS")
    if not new_key or not old_key:
        ap.error("set LANGGRAPH_AES_KEY (new) and LANGGRAPH_AES_KEY_PREVIOUS (old), or --new-key/--old-key")
    # Python's warning for every msgpack type not on the allowlist would flood stderr
    # (and cost time); the script's user would silence it too.
    logging.getLogger("langgraph").setLevel(logging.ERROR)
    old = EncryptedSerializer.from_pycryptodome_aes(key=old_key.encode())
    new = EncryptedSerializer.from_pycryptodome_aes(key=new_key.encode())

    store = args.store
    postgres = store.startswith(("postgres://", "postgresql://"))
    if postgres:
        import psycopg

        conn = psycopg.connect(store)
        tables, ph = POSTGRES_TABLES, "%s"
        backend = "postgres"
    else:
        import sqlite3

        path = store[len("sqlite:"):] if store.startswith("sqlite:") else store
        conn = sqlite3.connect(path)
        tables, ph = SQLITE_TABLES, "?"
        backend = "sqlite"

    read = rewritten = skipped = nbytes = pending = 0
    t0 = time.perf_counter()
    for table, col, keys in tables:
        rows = conn.execute(f"SELECT {', '.join(keys)}, type, {col} FROM {table}").fetchall()
        where = " AND ".join(f"{k} = {ph}" for k in keys)
        update = f"UPDATE {table} SET type = {ph}, {col} = {ph} WHERE {where}"
        for row in rows:
            read += 1
            key, tag, data = row[: len(keys)], row[len(keys)], row[len(keys) + 1]
            if data is None or "+aes" not in tag or "+zlib" in tag:
                skipped += 1
                continue
            data = bytes(data)
            try:
                obj = old.loads_typed((tag, data))
            except ValueError:  # MAC check failed: not under the old key
                skipped += 1
                continue
            new_tag, new_data = new.dumps_typed(obj)
            conn.execute(update, (new_tag, new_data, *key))
            rewritten += 1
            nbytes += len(data)
            pending += 1
            if pending >= args.batch:
                conn.commit()
                pending = 0
    conn.commit()
    conn.close()
    secs = time.perf_counter() - t0
    print(json.dumps({
        "script": "benches/rekey_python_script.py",
        "backend": backend,
        "rows_read": read,
        "rows_rewritten": rewritten,
        "rows_skipped": skipped,
        "bytes": nbytes,
        "seconds": round(secs, 3),
        "rows_per_s": round(rewritten / secs, 1) if secs else None,
        "mb_per_s": round(nbytes / 1e6 / secs, 3) if secs else None,
    }))
    return 0


if __name__ == "__main__":
    sys.exit(main())
