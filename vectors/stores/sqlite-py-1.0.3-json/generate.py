"""Writes store.sqlite with langgraph-checkpoint-sqlite 1.0.3 under langgraph-checkpoint
1.0.9, the last release whose `JsonPlusSerializer.dumps_typed` wrote every value as
`("json", ...)` (1.0.10 switched to `msgpack`): a Python store (no `task_path`) whose
rows are all `json` typed, as LangGraphJS's are. Plus what that saver reads back
(reads.json) and every raw row (rows.json).

    python3.11 -m venv /tmp/venv-json && /tmp/venv-json/bin/pip install -r requirements.txt
    /tmp/venv-json/bin/python generate.py
"""

import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
import common  # noqa: E402

common.run_sqlite_fixture(
    HERE, lambda saver: common.run_threads(saver, use_interrupt_fn=False, subgraph=True)
)
