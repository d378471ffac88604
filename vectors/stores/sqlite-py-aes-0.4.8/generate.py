"""Writes store.sqlite with langgraph 0.4.8 and langgraph-checkpoint-sqlite 2.0.10 through
langgraph-checkpoint 2.0.26's `EncryptedSerializer.from_pycryptodome_aes()` (AES-EAX,
the key from `LANGGRAPH_AES_KEY`, set below to the fixture key `0123456789abcdef`),
plus what that saver reads back with the key (reads.json) and every raw row
(rows.json: checkpoints and writes `msgpack+aes`, metadata in clear).

    python3.11 -m venv /tmp/venv-aes && /tmp/venv-aes/bin/pip install -r requirements.txt
    /tmp/venv-aes/bin/python generate.py
"""

import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
import common  # noqa: E402

# The fixture's key, in the variable the serializer reads (a test key: never a real one).
os.environ["LANGGRAPH_AES_KEY"] = "0123456789abcdef"

from langgraph.checkpoint.serde.encrypted import EncryptedSerializer  # noqa: E402

common.run_sqlite_fixture(
    HERE,
    lambda saver: common.run_threads(saver, use_interrupt_fn=True, subgraph=True),
    serde=EncryptedSerializer.from_pycryptodome_aes(),
)
