"""What a Python team runs today for idle and hard-age retention: one sweep of
`langgraph-ephemeral-checkpointer` 0.0.2 (PyPI), the baseline `lgcodec store retain
--once` is measured against (benches/README.md, "Retention beside
langgraph-ephemeral-checkpointer").

    python benches/store_retain_ephemeral.py STORE IDLE_DAYS HARD_DAYS

STORE is a SQLite path or a postgresql:// URL written by Python's savers. Runs
`Sweeper(saver, TTLPolicy(idle_ttl_seconds=…, hard_age_ttl_seconds=…)).sweep()` with the
package's defaults (safe_delete: the latest checkpoint of each expired thread is read
again before the delete) on `SqliteSaver` / `PostgresSaver` (its SQL strategies: one
GROUP BY over `checkpoints`, one delete of the expired thread ids per table).

Prints one JSON object: threads deleted, threads left, seconds.
"""

from __future__ import annotations

import json
import sqlite3
import sys
import time

from langgraph_ephemeral_checkpointer import Sweeper, TTLPolicy

DAY = 86_400


def main() -> int:
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    store, idle_days, hard_days = sys.argv[1], float(sys.argv[2]), float(sys.argv[3])
    policy = TTLPolicy(
        idle_ttl_seconds=int(idle_days * DAY), hard_age_ttl_seconds=int(hard_days * DAY)
    )
    t0 = time.perf_counter()
    if store.startswith(("postgres://", "postgresql://")):
        import psycopg
        from psycopg.rows import dict_row
        from langgraph.checkpoint.postgres import PostgresSaver

        with psycopg.connect(store, autocommit=True, row_factory=dict_row) as conn:
            result = Sweeper(PostgresSaver(conn), policy).sweep()
    else:
        from langgraph.checkpoint.sqlite import SqliteSaver

        conn = sqlite3.connect(store.removeprefix("sqlite:"), check_same_thread=False)
        try:
            result = Sweeper(SqliteSaver(conn), policy).sweep()
        finally:
            conn.close()
    seconds = time.perf_counter() - t0
    print(
        json.dumps(
            {
                "threads_deleted": len(result.deleted_thread_ids),
                "threads_left": result.active_thread_count,
                "seconds": round(seconds, 3),
            }
        )
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
