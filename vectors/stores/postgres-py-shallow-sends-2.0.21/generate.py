"""Writes dump.sql (pg_dump --inserts of a fresh database) with langgraph-checkpoint-postgres 2.0.21's ShallowPostgresSaver
under langgraph 0.4.8 (`v` 3 checkpoints), the `Send` fan-out of `common.build_sends_graph` left waiting: the checkpoint
after the planning step has its sends pending, which the shallow saver reads back as `pending_sends` from the
namespace's `__pregel_tasks` writes. Threads `t-sends` (left there) and `t-sends-done` (resumed to the end). Plus
what that saver reads back (reads.json) and every raw row (rows.json).

    python3.11 -m venv /tmp/venv-x && /tmp/venv-x/bin/pip install -r requirements.txt
    /tmp/venv-x/bin/python generate.py   # needs pg_dump and the server in common.PG_SERVER
"""

import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
import common  # noqa: E402

import psycopg  # noqa: E402
from psycopg.rows import dict_row  # noqa: E402
from langgraph.checkpoint.postgres.shallow import ShallowPostgresSaver  # noqa: E402

url = common.fresh_pg_database("h_old_gen_postgres_py_shallow_sends_2_0_21")
with psycopg.connect(url, autocommit=True, prepare_threshold=0, row_factory=dict_row) as conn:
    saver = ShallowPostgresSaver(conn)
    saver.setup()
    graph = common.build_sends_graph(saver)
    threads = ["t-sends", "t-sends-done"]
    for t in threads:
        cfg = {"configurable": {"thread_id": t}}
        graph.invoke({"topics": ["paris", "rome"], "results": []}, cfg)
        assert saver.get_tuple(cfg).checkpoint["pending_sends"], "sends are pending"
        if t == "t-sends-done":
            graph.invoke(None, cfg)
    common.write_json(
        os.path.join(HERE, "reads.json"),
        {"versions": common.versions(), "threads": common.reads(saver, threads)},
    )
    common.write_json(os.path.join(HERE, "rows.json"), common.postgres_rows(conn))
common.pg_dump(url, os.path.join(HERE, "dump.sql"))
