"""Writes dump.sql (pg_dump --inserts of a fresh database) with langgraph-checkpoint-postgres 1.0.1 (`checkpoint_migrations` v = 0..3: blob still NOT NULL, no indexes, no `task_path`) under langgraph-checkpoint 1.0.9 (every value `json`), plus what that
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
    HERE, "h_old_gen_postgres_py_1_0_1_json", lambda conn: PostgresSaver(conn), use_interrupt_fn=False, subgraph=True
)
