"""Writes dump.sql (pg_dump --inserts of a fresh database) with langgraph-checkpoint-postgres 2.0.21's ShallowPostgresSaver
(one checkpoint per thread and namespace, its migrations v = 0..7) under langgraph 0.4.8 (`v` 3 checkpoints, stored
with `pending_sends: []`), plus what that saver reads back (reads.json) and every raw row (rows.json).

    python3.11 -m venv /tmp/venv-x && /tmp/venv-x/bin/pip install -r requirements.txt
    /tmp/venv-x/bin/python generate.py   # needs pg_dump and the server in common.PG_SERVER
"""

import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
import common  # noqa: E402

from langgraph.checkpoint.postgres.shallow import ShallowPostgresSaver  # noqa: E402

common.run_postgres_fixture(
    HERE, "h_old_gen_postgres_py_shallow_2_0_21", lambda conn: ShallowPostgresSaver(conn), use_interrupt_fn=True, subgraph=True
)
