"""Writes store.sqlite with langgraph 0.4.8 (checkpoint `v` 3: pending `Send`s kept in
the checkpoint's `pending_sends`, as LangGraph 0.2 to 0.4 did) and
langgraph-checkpoint-sqlite 2.0.10, plus what that saver reads back (reads.json) and
every raw row (rows.json).

The graph (`common.build_sends_graph`) fans out with `Send` from two nodes of one step
and stops before the sends run, so the checkpoint after the planning step holds them
as `pending_sends` and its parent holds them as `__pregel_tasks` writes. Threads:
`t-sends` (left there) and `t-sends-done` (resumed to the end).

    python3.11 -m venv /tmp/venv-sends && /tmp/venv-sends/bin/pip install -r requirements.txt
    /tmp/venv-sends/bin/python generate.py
"""

import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
import common  # noqa: E402


def run(saver):
    graph = common.build_sends_graph(saver)
    threads = ["t-sends", "t-sends-done"]
    for t in threads:
        cfg = {"configurable": {"thread_id": t}}
        graph.invoke({"topics": ["paris", "rome"], "results": []}, cfg)
        assert saver.get_tuple(cfg).checkpoint["pending_sends"], "sends are pending"
        if t == "t-sends-done":
            graph.invoke(None, cfg)
    return threads


common.run_sqlite_fixture(HERE, run)
