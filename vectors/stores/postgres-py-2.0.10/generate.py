"""Writes dump.sql (pg_dump --inserts of a fresh database) with langgraph-checkpoint-postgres 2.0.10 (`checkpoint_migrations` v = 0..7: the indexes at 5..7, numbered without the no-op 5 of 2.0.8 and today, no `task_path`), plus what that
saver reads back (reads.json) and every raw row (rows.json).

    python3.11 -m venv /tmp/venv-x && /tmp/venv-x/bin/pip install -r requirements.txt
    /tmp/venv-x/bin/python generate.py   # needs pg_dump and the server in common.PG_SERVER
"""

import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
import common  # noqa: E402

from langgraph.checkpoint.postgres import PostgresSaver  # noqa: E402

common.run_postgres_fixture(
    HERE, "h_old_gen_postgres_py_2_0_10", lambda conn: PostgresSaver(conn), use_interrupt_fn=True, subgraph=True
)
