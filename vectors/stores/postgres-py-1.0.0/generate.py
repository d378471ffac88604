"""Writes dump.sql (pg_dump --inserts of a fresh database) with langgraph-checkpoint-postgres 1.0.0 (no `checkpoint_migrations` table;
`checkpoint_blobs.blob` NOT NULL), plus what that
saver reads back (reads.json) and every raw row (rows.json).

    python3.11 -m venv /tmp/venv-x && /tmp/venv-x/bin/pip install -r requirements.txt
    /tmp/venv-x/bin/python generate.py   # needs pg_dump and the server in common.PG_SERVER

This release writes metadata (which holds each step's node outputs) as plain JSONB
with no serializer, so it fails on message objects or datetimes in the state
(`TypeError: Object of type HumanMessage is not JSON serializable`): the graph here runs
in `plain` mode (messages as dicts, the time as a string).
"""

import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
import common  # noqa: E402

from langgraph.checkpoint.postgres import PostgresSaver  # noqa: E402

common.run_postgres_fixture(
    HERE, "h_old_gen_postgres_py_1_0_0", lambda conn: PostgresSaver(conn), use_interrupt_fn=False, subgraph=True, plain=True
)
