#!/usr/bin/env python3
"""Golden vectors for the reference checkpoint saver (`src/saver/`).

Runs a real LangGraph graph (langgraph 1.2 / langgraph-checkpoint 4.3.2) on
Python's own `InMemorySaver`, recording every `put` / `put_writes` call the
graph makes, the rows the saver stores, and what `get_tuple`, `list` and
`get_delta_channel_history` return for every checkpoint.  The Rust tests replay
the recorded calls on the Rust `InMemorySaver` and compare rows byte for byte,
and import Python's rows and compare what the Rust saver reads back.

The graph: a chat-like state (LangChain messages, a datetime, a DeltaChannel
log with snapshot_frequency=2), an input, two supersteps with pending writes,
an interrupt and a resume, and a fork from an older checkpoint.

Usage: /work/venv/bin/python vectors/saver/generate_saver.py
Writes vectors/saver/python_inmemory.json (fresh ids/timestamps each run: the
committed file is the truth; regenerate only on purpose).
"""

from __future__ import annotations

import base64
import json
import pathlib
import random
from datetime import datetime, timezone
from typing import Annotated, Any, TypedDict

from langchain_core.messages import AIMessage, HumanMessage
from langgraph.channels.delta import DeltaChannel
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.checkpoint.serde.jsonplus import JsonPlusSerializer
from langgraph.graph import END, START, StateGraph
from langgraph.graph.message import add_messages
from langgraph.types import Command, interrupt

HERE = pathlib.Path(__file__).resolve().parent
SERDE = JsonPlusSerializer()


def b64(b: bytes) -> str:
    return base64.b64encode(b).decode()


def typed(pair: tuple[str, bytes]) -> dict[str, str]:
    return {"type": pair[0], "data": b64(pair[1])}


def packed(obj: Any) -> str:
    """msgpack (as JsonPlusSerializer writes it) of a Python object, base64."""
    t, data = SERDE.dumps_typed(obj)
    assert t == "msgpack", t
    return b64(data)


def scalar_only(d: dict | None) -> dict:
    # Configs carry runtime objects; only scalars can reach metadata anyway.
    return {
        k: v
        for k, v in (d or {}).items()
        if isinstance(v, (str, int, float, bool)) or v is None
    }


def plain_config(config: dict) -> dict:
    out: dict[str, Any] = {"configurable": scalar_only(config.get("configurable"))}
    if config.get("metadata"):
        out["metadata"] = scalar_only(config.get("metadata"))
    return out


class RecordingSaver(InMemorySaver):
    def __init__(self) -> None:
        super().__init__()
        self.ops: list[dict] = []

    def put(self, config, checkpoint, metadata, new_versions):
        out = super().put(config, checkpoint, metadata, new_versions)
        self.ops.append(
            {
                "op": "put",
                "config": packed(plain_config(config)),
                "checkpoint": packed(checkpoint),
                "metadata": packed(metadata),
                "new_versions": packed(new_versions),
                "returned": packed(out),
            }
        )
        return out

    def put_writes(self, config, writes, task_id, task_path=""):
        super().put_writes(config, writes, task_id, task_path)
        self.ops.append(
            {
                "op": "put_writes",
                "config": packed(plain_config(config)),
                "writes": packed([list(w) for w in writes]),
                "task_id": task_id,
                "task_path": task_path,
            }
        )


def extend(state: list, writes: list) -> list:
    out = list(state)
    for w in writes:
        out.extend(w if isinstance(w, list) else [w])
    return out


class State(TypedDict, total=False):
    messages: Annotated[list, add_messages]
    log: Annotated[list, DeltaChannel(extend, snapshot_frequency=2)]
    when: datetime


def agent(state: State) -> dict:
    n = len(state["messages"])
    return {
        "messages": [AIMessage(content=f"thinking {n}", id=f"ai-{n}")],
        "log": [f"agent saw {n}"],
        "when": datetime(2024, 5, 1, 12, 0, n, tzinfo=timezone.utc),
    }


def review(state: State) -> dict:
    answer = interrupt({"question": "approve?"})
    return {
        "messages": [HumanMessage(content=f"review: {answer}", id="review-1")],
        "log": [f"review {answer}"],
    }


def build(saver: InMemorySaver):
    g = StateGraph(State)
    g.add_node("agent", agent)
    g.add_node("review", review)
    g.add_edge(START, "agent")
    g.add_edge("agent", "review")
    g.add_edge("review", END)
    return g.compile(checkpointer=saver)


def tuple_view(t) -> dict:
    return {
        "config": t.config["configurable"],
        "checkpoint": t.checkpoint,
        "metadata": t.metadata,
        "parent_config": t.parent_config["configurable"] if t.parent_config else None,
        "pending_writes": [list(w) for w in (t.pending_writes or [])],
    }


def main() -> None:
    random.seed(7)
    saver = RecordingSaver()
    graph = build(saver)
    cfg = {"configurable": {"thread_id": "thread-1"}, "metadata": {"user": "ada"}}
    graph.invoke(
        {"messages": [HumanMessage(content="hello", id="h-1")], "log": ["start"]},
        cfg,
    )
    graph.invoke(Command(resume="yes"), cfg)
    # Fork: update state on the checkpoint before the interrupt.
    history = list(graph.get_state_history(cfg))
    older = history[-3].config
    forked = graph.update_state(older, {"log": ["forked"]})
    graph.invoke(None, forked)
    graph.invoke(Command(resume="no"), {"configurable": {"thread_id": "thread-1"}})

    rows = {
        "checkpoints": [
            {
                "thread_id": tid,
                "checkpoint_ns": ns,
                "checkpoint_id": cid,
                "checkpoint": typed(c),
                "metadata": typed(m),
                "parent_checkpoint_id": parent,
            }
            for tid, nss in saver.storage.items()
            for ns, cps in nss.items()
            for cid, (c, m, parent) in cps.items()
        ],
        "blobs": [
            {
                "thread_id": k[0],
                "checkpoint_ns": k[1],
                "channel": k[2],
                "version": packed(k[3]),
                "value": typed(v),
            }
            for k, v in saver.blobs.items()
        ],
        "writes": [
            {
                "thread_id": k[0],
                "checkpoint_ns": k[1],
                "checkpoint_id": k[2],
                "task_id": ik[0],
                "idx": ik[1],
                "channel": w[1],
                "value": typed(w[2]),
                "task_path": w[3],
            }
            for k, inner in saver.writes.items()
            for ik, w in inner.items()
        ],
    }

    listed = list(saver.list(None))
    reads = []
    for t in listed:
        conf = t.config
        hist = saver.get_delta_channel_history(
            config=conf, channels=["log", "messages", "missing"]
        )
        base_hist = super(InMemorySaver, saver).get_delta_channel_history(
            config=conf, channels=["log", "messages", "missing"]
        )
        assert hist == base_hist, "override and default walk disagree"
        reads.append(
            {
                "config": packed(conf["configurable"]),
                "tuple": packed(tuple_view(saver.get_tuple(conf))),
                "history": packed(dict(hist)),
            }
        )
    listing = {
        "all_ids": [t.config["configurable"]["checkpoint_id"] for t in listed],
        "filter_source_loop": [
            t.config["configurable"]["checkpoint_id"]
            for t in saver.list(None, filter={"source": "loop"})
        ],
        "filter_user": [
            t.config["configurable"]["checkpoint_id"]
            for t in saver.list(None, filter={"user": "ada", "step": 1})
        ],
        "before_third_limit_2": [
            t.config["configurable"]["checkpoint_id"]
            for t in saver.list(
                {"configurable": {"thread_id": "thread-1"}},
                before=listed[2].config,
                limit=2,
            )
        ],
    }
    latest = saver.get_tuple({"configurable": {"thread_id": "thread-1"}})
    out = {
        "comment": "Generated by vectors/saver/generate_saver.py from langgraph "
        "1.2.22 / langgraph-checkpoint 4.3.2 InMemorySaver; do not edit.",
        "ops": saver.ops,
        "rows": rows,
        "reads": reads,
        "listing": listing,
        "latest_id": latest.config["configurable"]["checkpoint_id"],
    }
    (HERE / "python_inmemory.json").write_text(json.dumps(out, indent=1) + "\n")
    print(
        f"{len(saver.ops)} ops, {len(rows['checkpoints'])} checkpoints, "
        f"{len(rows['blobs'])} blobs, {len(rows['writes'])} writes"
    )


if __name__ == "__main__":
    main()
