"""A small real LangGraph graph for the tests and the rotation runbook driver
(vectors/store/rotation_driver.py imports it).

State: ``notes`` (a list of ``Note`` dataclasses, appended) and ``count``. Node ``a``
then node ``b``, with an interrupt before ``b``: one *round* on a thread either starts
it / restarts it from its last state (runs ``a``, stops before ``b``) or resumes the
interrupted run (runs ``b``). Every round adds exactly one note ``Note(n, f"{node}{n}")``
with ``n`` = the count before it, so a thread after ``k`` rounds holds notes
``0..k-1``: nothing lost, nothing replayed. ``Note`` puts a custom type into the
schema, so with ``LANGGRAPH_STRICT_MSGPACK`` on LangGraph really rebuilds the saver's
serializer with an extended allowlist (the path that drops subclass methods).
"""

from __future__ import annotations

import operator
from dataclasses import dataclass
from typing import Annotated, TypedDict

from langgraph.graph import END, START, StateGraph


@dataclass
class Note:
    n: int
    text: str


class State(TypedDict):
    notes: Annotated[list[Note], operator.add]
    count: int


def _node(name: str):
    def run(state: State) -> dict:
        n = state["count"]
        return {"notes": [Note(n, f"{name}{n}")], "count": n + 1}

    return run


def build_graph(saver):
    g = StateGraph(State)
    g.add_node("a", _node("a"))
    g.add_node("b", _node("b"))
    g.add_edge(START, "a")
    g.add_edge("a", "b")
    g.add_edge("b", END)
    return g.compile(checkpointer=saver, interrupt_before=["b"])


def config(thread_id: str) -> dict:
    return {"configurable": {"thread_id": thread_id}}


def one_round(graph, thread_id: str) -> int:
    """Runs one round on ``thread_id``; returns the thread's count after it."""
    cfg = config(thread_id)
    snap = graph.get_state(cfg)
    if not snap.values:
        out = graph.invoke({"notes": [], "count": 0}, cfg)
    elif snap.next:
        out = graph.invoke(None, cfg)
    else:
        out = graph.invoke({"notes": []}, cfg)
    return out["count"]


async def one_round_async(graph, thread_id: str) -> int:
    """:func:`one_round` with the async API (for the async savers)."""
    cfg = config(thread_id)
    snap = await graph.aget_state(cfg)
    if not snap.values:
        out = await graph.ainvoke({"notes": [], "count": 0}, cfg)
    elif snap.next:
        out = await graph.ainvoke(None, cfg)
    else:
        out = await graph.ainvoke({"notes": []}, cfg)
    return out["count"]


def check_thread(graph, thread_id: str, rounds: int | None = None) -> int:
    """Reads the thread's state; raises AssertionError unless its notes are exactly
    0..count-1 (and count == rounds when given). Returns count."""
    values = graph.get_state(config(thread_id)).values
    count = values["count"]
    got = [(x.n, x.text) for x in values["notes"]]
    want = [(i, f"{'a' if i % 2 == 0 else 'b'}{i}") for i in range(count)]
    assert got == want, f"thread {thread_id}: notes {got[:5]}... != expected for count {count}"
    if rounds is not None:
        assert count == rounds, f"thread {thread_id}: count {count} after {rounds} rounds"
    return count
