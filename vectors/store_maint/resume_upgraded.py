"""Today's Python resumes the interrupted thread `t-short` of an old fixture store after
`lgcodec store upgrade`, without calling `setup()`.

    python vectors/store_maint/resume_upgraded.py STORE INTERRUPT_FN PLAIN

STORE: an SQLite path or a postgres:// URL holding an upgraded copy of a fixture of
vectors/stores/ (its graph: common.build_graph). INTERRUPT_FN / PLAIN (`0`/`1`): the
flags the fixture's generate.py ran the graph with. The thread was left at its
interrupt before the tool; resuming runs the tool and the final AI turn: the last
message must be the final answer and nothing left to run. Exits 1 otherwise (or on
Python's error, e.g. `column cw.task_path does not exist` on a store not upgraded).
"""

from __future__ import annotations

import os
import sqlite3
import sys
import warnings

warnings.filterwarnings("ignore")
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "stores"))
import common  # noqa: E402


def resume(saver, interrupt_fn: bool, plain: bool) -> None:
    graph, resume_input = common.build_graph(
        saver, use_interrupt_fn=interrupt_fn, subgraph=True, plain=plain
    )
    cfg = {"configurable": {"thread_id": "t-short", "user": "ada"}}
    before = graph.get_state(cfg)
    if not before.next:
        sys.exit(f"FAIL: t-short is not interrupted (next={before.next})")
    n_before = len(before.values["messages"])
    graph.invoke(resume_input, cfg)
    after = graph.get_state(cfg)
    msgs = after.values["messages"]
    last = msgs[-1]
    content = last["content"] if isinstance(last, dict) else last.content
    if after.next or len(msgs) <= n_before:
        sys.exit(f"FAIL: not finished: next={after.next}, {n_before} -> {len(msgs)} messages")
    print(f"resumed t-short: {n_before} -> {len(msgs)} messages, last {content!r}")


def main() -> None:
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    store, interrupt_fn, plain = sys.argv[1], sys.argv[2] == "1", sys.argv[3] == "1"
    if store.startswith(("postgres://", "postgresql://")):
        import psycopg
        from psycopg.rows import dict_row
        from langgraph.checkpoint.postgres import PostgresSaver

        with psycopg.connect(store, autocommit=True, prepare_threshold=0, row_factory=dict_row) as conn:
            resume(PostgresSaver(conn), interrupt_fn, plain)
    else:
        from langgraph.checkpoint.sqlite import SqliteSaver

        conn = sqlite3.connect(store, check_same_thread=False)
        try:
            resume(SqliteSaver(conn), interrupt_fn, plain)
        finally:
            conn.close()


if __name__ == "__main__":
    main()
