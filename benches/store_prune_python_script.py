"""What a user does today to keep only the latest checkpoint of every thread: the
baseline `lgcodec store prune --keep-latest 1` is measured against (benches/README.md,
"Store commands beside a Python script").

    python benches/store_prune_python_script.py STORE

- Postgres (`postgres://` / `postgresql://` URL): Python's own
  `PostgresSaver.prune(thread_ids, strategy="keep_latest")` (langgraph-checkpoint-postgres
  3.2.0) over every thread. It keeps the latest checkpoint of each namespace only (no N),
  and refuses every thread if one uses a DeltaChannel.
- SQLite (`sqlite:PATH` or a path): Python's `SqliteSaver` (3.1.2) has no prune
  (`BaseCheckpointSaver.prune` raises NotImplementedError), so this runs the raw SQL a
  user would write instead: delete every checkpoint that is not the latest of its thread
  and namespace, and the writes of those checkpoints, in one transaction. It knows
  nothing of DeltaChannels (a thread using one reads back with its delta channels
  empty).

Prints one JSON object: threads, checkpoints before and after, seconds.
"""

from __future__ import annotations

import json
import sqlite3
import sys
import time

SQLITE_KEEP_LATEST = [
    "DELETE FROM writes WHERE (thread_id, checkpoint_ns, checkpoint_id) NOT IN "
    "(SELECT thread_id, checkpoint_ns, max(checkpoint_id) FROM checkpoints GROUP BY thread_id, checkpoint_ns)",
    "DELETE FROM checkpoints WHERE (thread_id, checkpoint_ns, checkpoint_id) NOT IN "
    "(SELECT thread_id, checkpoint_ns, max(checkpoint_id) FROM checkpoints GROUP BY thread_id, checkpoint_ns)",
]


def main() -> int:
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    store = sys.argv[1]
    t0 = time.perf_counter()
    if store.startswith(("postgres://", "postgresql://")):
        from langgraph.checkpoint.postgres import PostgresSaver

        with PostgresSaver.from_conn_string(store) as s:
            with s._cursor() as cur:
                cur.execute("SELECT count(*) AS n FROM checkpoints")
                before = cur.fetchone()["n"]
                cur.execute("SELECT DISTINCT thread_id FROM checkpoints")
                threads = [r["thread_id"] for r in cur.fetchall()]
            t0 = time.perf_counter()
            s.prune(threads, strategy="keep_latest")
            secs = time.perf_counter() - t0
            with s._cursor() as cur:
                cur.execute("SELECT count(*) AS n FROM checkpoints")
                after = cur.fetchone()["n"]
        how = "PostgresSaver.prune(strategy='keep_latest')"
    else:
        path = store[len("sqlite:"):] if store.startswith("sqlite:") else store
        conn = sqlite3.connect(path)
        before = conn.execute("SELECT count(*) FROM checkpoints").fetchone()[0]
        threads = [r[0] for r in conn.execute("SELECT DISTINCT thread_id FROM checkpoints")]
        t0 = time.perf_counter()
        with conn:
            for sql in SQLITE_KEEP_LATEST:
                conn.execute(sql)
        secs = time.perf_counter() - t0
        after = conn.execute("SELECT count(*) FROM checkpoints").fetchone()[0]
        conn.close()
        how = "raw SQL DELETEs (SqliteSaver has no prune)"
    print(json.dumps({
        "script": "benches/store_prune_python_script.py",
        "how": how,
        "threads": len(threads),
        "checkpoints_before": before,
        "checkpoints_after": after,
        "seconds": round(secs, 3),
    }))
    return 0


if __name__ == "__main__":
    sys.exit(main())
