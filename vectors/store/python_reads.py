"""Reads every checkpoint and pending write of a store with Python's own savers
(langgraph-checkpoint 4.3.2, -sqlite 3.1.2, -postgres 3.2.0), as a Python service would
after `lgcodec store encrypt|rekey`: EncryptedSerializer.from_pycryptodome_aes() when
LANGGRAPH_AES_KEY is set. Prints one JSON line: checkpoints, writes, and a digest of every
value read (equal digests = the same plaintexts). Exit 1 if any row fails to read.

    python vectors/store/python_reads.py STORE      # sqlite:PATH, a path, or postgres:// URL
"""

import hashlib
import json
import os
import sys

from langgraph.checkpoint.serde.encrypted import EncryptedSerializer
from langgraph.checkpoint.serde.jsonplus import JsonPlusSerializer


def serde():
    if os.environ.get("LANGGRAPH_AES_KEY"):
        return EncryptedSerializer.from_pycryptodome_aes()
    return JsonPlusSerializer()


def digest_of(saver):
    h = hashlib.sha256()
    checkpoints = writes = 0
    # Every thread: list() without a config lists the whole store.
    tuples = sorted(
        saver.list(None),
        key=lambda t: (
            t.config["configurable"]["thread_id"],
            t.config["configurable"].get("checkpoint_ns", ""),
            t.config["configurable"]["checkpoint_id"],
        ),
    )
    for t in tuples:
        checkpoints += 1
        values = t.checkpoint["channel_values"]
        h.update(json.dumps(values, sort_keys=True, default=repr).encode())
        for w in sorted(t.pending_writes or [], key=repr):
            writes += 1
            h.update(json.dumps(w, sort_keys=True, default=repr).encode())
    return {"checkpoints": checkpoints, "writes": writes, "digest": h.hexdigest()}


def main():
    store = sys.argv[1]
    if store.startswith(("postgres://", "postgresql://")):
        from langgraph.checkpoint.postgres import PostgresSaver

        with PostgresSaver.from_conn_string(store) as saver:
            saver.serde = serde()
            print(json.dumps(digest_of(saver)))
    else:
        import sqlite3

        from langgraph.checkpoint.sqlite import SqliteSaver

        path = store[len("sqlite:"):] if store.startswith("sqlite:") else store
        saver = SqliteSaver(sqlite3.connect(path, check_same_thread=False), serde=serde())
        print(json.dumps(digest_of(saver)))


if __name__ == "__main__":
    try:
        main()
    except Exception as e:  # noqa: BLE001 - any failure to read is the answer
        print(f"python_reads: {type(e).__name__}: {e}", file=sys.stderr)
        sys.exit(1)
