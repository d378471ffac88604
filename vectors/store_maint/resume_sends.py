"""Today's Python resumes the thread `t-sends` of a copy of
vectors/stores/sqlite-py-sends-* (its graph: common.build_sends_graph), left before its
pending `Send`s ran, and prints what it saw as one JSON line per STORE:

    python vectors/store_maint/resume_sends.py STORE...

`next_before` (the tasks the saved state says are next), `results` and `next` after
resuming. STORE: an SQLite path (read with `SqliteSaver`) or a postgres:// URL (read
with `PostgresSaver`, without `setup()`). Exits 1 on Python's error, or when the thread
was not waiting on its sends or did not finish.
"""

from __future__ import annotations

import json
import os
import sqlite3
import sys
import warnings

warnings.filterwarnings("ignore")
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "stores"))
import common  # noqa: E402


def resume(saver) -> dict:
    graph = common.build_sends_graph(saver)
    cfg = {"configurable": {"thread_id": "t-sends"}}
    before = graph.get_state(cfg)
    if not before.next:
        sys.exit(f"FAIL: t-sends is not waiting on its sends (next={before.next})")
    graph.invoke(None, cfg)
    after = graph.get_state(cfg)
    if after.next:
        sys.exit(f"FAIL: t-sends did not finish: next={after.next}")
    return {
        "next_before": list(before.next),
        "results": common.canon(after.values["results"]),
        "next": list(after.next),
    }


def main() -> None:
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    for store in sys.argv[1:]:
        if store.startswith(("postgres://", "postgresql://")):
            import psycopg
            from psycopg.rows import dict_row
            from langgraph.checkpoint.postgres import PostgresSaver

            with psycopg.connect(store, autocommit=True, prepare_threshold=0, row_factory=dict_row) as conn:
                out = resume(PostgresSaver(conn))
        else:
            from langgraph.checkpoint.sqlite import SqliteSaver

            conn = sqlite3.connect(store, check_same_thread=False)
            try:
                out = resume(SqliteSaver(conn))
            finally:
                conn.close()
        print(json.dumps(out, sort_keys=True))


if __name__ == "__main__":
    main()
