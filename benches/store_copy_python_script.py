"""The script a user would write today to move a LangGraph checkpoint store between
SQLite and Postgres with Python's own savers (langgraph-checkpoint-sqlite 3.1.2,
-postgres 3.2.0): the baseline `lgcodec store copy` is measured against
(benches/README.md, "Store commands beside a Python script").

    python benches/store_copy_python_script.py SOURCE TARGET

SOURCE and TARGET: `sqlite:PATH`, a bare path, or a `postgres://` / `postgresql://`
URL. The target gets Python's tables from the saver's `setup()`.

Per thread (thread ids from `SELECT DISTINCT thread_id`: the savers have no call that
lists threads), every checkpoint from the source saver's `list`, oldest first, is
`put` into the target saver with its parent and `new_versions` = its channel versions
(so the Postgres saver writes a blob for every channel), then its pending writes with
`put_writes`, one call per task. Prints one JSON object: checkpoints, writes, seconds,
checkpoints_per_s.

What it cannot do, and `lgcodec store copy` does: a `CheckpointTuple`'s pending writes
carry no task path, so every write is put with Python's default `task_path=""` (on a
graph whose writes have task paths, the target orders them differently), and
`put_writes` renumbers `idx` from positions; it does not verify what it wrote; it is
not resumable (a rerun puts everything again: `INSERT OR REPLACE` / upserts); values
are decoded into Python objects and encoded again (a class the script cannot import
comes back a dict). Each `list` holds one whole thread's tuples.
"""

from __future__ import annotations

import json
import logging
import sqlite3
import sys
import time
from contextlib import contextmanager


def is_pg(store: str) -> bool:
    return store.startswith(("postgres://", "postgresql://"))


@contextmanager
def saver(store: str):
    if is_pg(store):
        from langgraph.checkpoint.postgres import PostgresSaver

        with PostgresSaver.from_conn_string(store) as s:
            s.setup()
            yield s
    else:
        from langgraph.checkpoint.sqlite import SqliteSaver

        path = store[len("sqlite:"):] if store.startswith("sqlite:") else store
        conn = sqlite3.connect(path, check_same_thread=False)
        try:
            s = SqliteSaver(conn)
            s.setup()
            yield s
        finally:
            conn.close()


def thread_ids(src, store: str) -> list[str]:
    sql = "SELECT DISTINCT thread_id FROM checkpoints ORDER BY thread_id"
    if is_pg(store):
        with src._cursor() as cur:
            cur.execute(sql)
            return [r["thread_id"] for r in cur.fetchall()]
    return [r[0] for r in src.conn.execute(sql).fetchall()]


def main() -> int:
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    source, target = sys.argv[1], sys.argv[2]
    # Python warns for every msgpack type not on its allowlist; a user silences it.
    logging.getLogger("langgraph").setLevel(logging.ERROR)
    checkpoints = writes = 0
    t0 = time.perf_counter()
    with saver(source) as src, saver(target) as dst:
        for thread in thread_ids(src, source):
            history = list(src.list({"configurable": {"thread_id": thread}}))
            for tup in reversed(history):  # oldest first: parents before children
                conf = tup.config["configurable"]
                config = {"configurable": {"thread_id": thread, "checkpoint_ns": conf["checkpoint_ns"]}}
                if tup.parent_config:
                    config["configurable"]["checkpoint_id"] = tup.parent_config["configurable"]["checkpoint_id"]
                saved = dst.put(config, tup.checkpoint, tup.metadata, tup.checkpoint["channel_versions"])
                by_task: dict[str, list] = {}
                for task_id, channel, value in tup.pending_writes or []:
                    by_task.setdefault(task_id, []).append((channel, value))
                for task_id, ws in by_task.items():
                    dst.put_writes(saved, ws, task_id, "")
                    writes += len(ws)
                checkpoints += 1
    report("benches/store_copy_python_script.py", {}, checkpoints, writes, t0)
    return 0


def report(script: str, extra: dict, checkpoints: int, writes: int, t0: float) -> None:
    """Prints the run's one JSON line: the script, `extra`, the counts and the time
    since `t0` (`time.perf_counter()`)."""
    secs = time.perf_counter() - t0
    print(json.dumps({
        "script": script,
        **extra,
        "checkpoints": checkpoints,
        "writes": writes,
        "seconds": round(secs, 3),
        "checkpoints_per_s": round(checkpoints / secs, 1) if secs else None,
    }))


if __name__ == "__main__":
    sys.exit(main())
