"""Writes store.sqlite with langgraph-checkpoint-sqlite 2.0.2 (no
`writes.task_path` column: the SQLite saver added it in 3.1.2), plus what that saver reads back
(reads.json) and every raw row (rows.json).

    python3.11 -m venv /tmp/venv-sq && /tmp/venv-sq/bin/pip install -r requirements.txt
    /tmp/venv-sq/bin/python generate.py
"""

import os
import sqlite3
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
import common  # noqa: E402

from langgraph.checkpoint.sqlite import SqliteSaver  # noqa: E402

path = os.path.join(HERE, "store.sqlite")
for suffix in ["", "-wal", "-shm"]:
    if os.path.exists(path + suffix):
        os.remove(path + suffix)
conn = sqlite3.connect(path, check_same_thread=False)
saver = SqliteSaver(conn)
threads = common.run_threads(saver, use_interrupt_fn=True, subgraph=True)
common.write_json(
    os.path.join(HERE, "reads.json"),
    {"versions": common.versions(), "threads": common.reads(saver, threads)},
)
conn.close()
common.write_json(os.path.join(HERE, "rows.json"), common.sqlite_rows(path))
common.finish_sqlite(path)
