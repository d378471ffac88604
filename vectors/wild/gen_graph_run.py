"""Rows a real LangGraph graph run leaves in an OLD release's MemorySaver.

Usage: python gen_graph_run.py OUT.jsonl   (a venv with an old langgraph + checkpoint)

Every (type, bytes) pair the saver stores (checkpoints, metadata, channel blobs,
pending writes) is written as one row, labelled graph/<n>. read_with_432.py then adds
what Python 4.3.2 reads from each.
"""
import base64
import json
import operator
import sys
import uuid
from datetime import datetime, timezone
from importlib.metadata import version
from typing import Annotated, TypedDict

from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
from langgraph.checkpoint.memory import MemorySaver
from langgraph.graph import END, START, StateGraph
from langgraph.graph.message import add_messages

WRITER = (
    f"python langgraph-checkpoint=={version('langgraph-checkpoint')}"
    f" langgraph=={version('langgraph')} (graph run)"
)


class State(TypedDict):
    messages: Annotated[list, add_messages]
    steps: Annotated[list, operator.add]
    when: datetime
    run: uuid.UUID


def agent(state: State):
    n = len(state["messages"])
    return {
        "messages": [
            AIMessage(
                content="",
                id=f"ai{n}",
                tool_calls=[{"name": "lookup", "args": {"q": f"x{n}"}, "id": f"call{n}"}],
            )
        ],
        "steps": ["agent"],
        "when": datetime(2024, 5, 1, 12, 0, n, tzinfo=timezone.utc),
    }


def tool(state: State):
    call = state["messages"][-1].tool_calls[0]
    return {
        "messages": [ToolMessage(content=f"result {call['args']['q']}", tool_call_id=call["id"], id=f"t{call['id']}")],
        "steps": ["tool"],
        "run": uuid.UUID("12345678-1234-5678-1234-567812345678"),
    }


builder = StateGraph(State)
builder.add_node("agent", agent)
builder.add_node("tool", tool)
builder.add_edge(START, "agent")
builder.add_edge("agent", "tool")
builder.add_edge("tool", END)
saver = MemorySaver()
graph = builder.compile(checkpointer=saver)
config = {"configurable": {"thread_id": "t1"}}
graph.invoke({"messages": [HumanMessage(content="hi", id="h0")], "steps": []}, config)
graph.invoke({"messages": [HumanMessage(content="again", id="h1")]}, config)

TAGS = {"json", "msgpack", "bytes", "bytearray", "null", "empty"}
pairs = []


def walk(obj, depth=0):
    if depth > 12:
        return
    if isinstance(obj, tuple) and len(obj) == 2 and obj[0] in TAGS and isinstance(obj[1], (bytes, bytearray)):
        pairs.append(obj)
        return
    if isinstance(obj, dict):
        for v in obj.values():
            walk(v, depth + 1)
    elif isinstance(obj, (list, tuple)):
        for v in obj:
            walk(v, depth + 1)


for name in ("storage", "writes", "blobs"):
    walk(getattr(saver, name, {}))
with open(sys.argv[1], "w") as f:
    for i, (tag, data) in enumerate(pairs):
        if tag == "empty":
            continue
        f.write(json.dumps({"writer": WRITER, "label": f"graph/{i}", "type": tag,
                            "data": base64.b64encode(bytes(data)).decode()}) + "\n")
print(f"{WRITER}: {len(pairs)} rows", file=sys.stderr)
