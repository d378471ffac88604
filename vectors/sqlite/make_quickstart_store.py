"""Writes vectors/sqlite/python_store.sqlite, the store `cargo run --example quickstart` opens.

    LANGGRAPH_AES_KEY=quickstart-demo-key-0123456789ab python vectors/sqlite/make_quickstart_store.py

A real Python LangGraph graph (the one of interop.py: messages, a Send fan-out, a subgraph,
a DeltaChannel, an interrupt resumed with Command(resume=...)) runs on langgraph-checkpoint-
sqlite's SqliteSaver with EncryptedSerializer (AES-EAX, key from LANGGRAPH_AES_KEY) and stops
at its second interrupt, waiting for an answer. The file is then checkpointed out of WAL
so it is one self-contained file. The key is a published demo key: never use it for data.
"""

import os
import sqlite3
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from interop import THREAD, build_graph  # noqa: E402
from langchain_core.messages import HumanMessage  # noqa: E402
from langgraph.checkpoint.serde.encrypted import EncryptedSerializer  # noqa: E402
from langgraph.checkpoint.sqlite import SqliteSaver  # noqa: E402
from langgraph.types import Command  # noqa: E402

DEMO_KEY = "quickstart-demo-key-0123456789ab"

if os.environ.get("LANGGRAPH_AES_KEY") != DEMO_KEY:
    sys.exit(f"set LANGGRAPH_AES_KEY={DEMO_KEY}")
out = os.path.join(os.path.dirname(os.path.abspath(__file__)), "python_store.sqlite")
for suffix in ("", "-wal", "-shm"):
    if os.path.exists(out + suffix):
        os.remove(out + suffix)
conn = sqlite3.connect(out, check_same_thread=False)
saver = SqliteSaver(conn, serde=EncryptedSerializer.from_pycryptodome_aes())
graph = build_graph(saver)
config = {"configurable": {"thread_id": THREAD}}
graph.invoke({"messages": [HumanMessage("Plan a trip to Lisbon", id="human-1")]}, config)
result = graph.invoke(Command(resume="yes"), config)
assert result["__interrupt__"][0].value == "final answer?", result
conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
conn.close()
print(f"wrote {out} ({os.path.getsize(out)} bytes)")
