"""What LangGraph's `durability="exit"` stores, the reference for DurableSaver's `Exit`
flush (tests/saver/durable.rs `exit_flush_stores_only_the_final_checkpoint_and_its_writes`):
a three-node graph run twice on one thread stores one checkpoint per run — the final
one, with the run's last step in its metadata and every channel — the first without a
parent, the second with the first run's final checkpoint as parent; `async` stores every
superstep's checkpoint. Run by .ci/checks.d/durable.sh."""
import operator
from typing import Annotated, TypedDict

from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import END, START, StateGraph


class State(TypedDict):
    a: Annotated[list, operator.add]
    b: str


def graph(saver):
    g = StateGraph(State)
    g.add_node("n1", lambda s: {"a": ["n1"], "b": "x"})
    g.add_node("n2", lambda s: {"a": ["n2"]})
    g.add_node("n3", lambda s: {"a": ["n3"]})
    g.add_edge(START, "n1")
    g.add_edge("n1", "n2")
    g.add_edge("n2", "n3")
    g.add_edge("n3", END)
    return g.compile(checkpointer=saver)


cfg = {"configurable": {"thread_id": "t"}}
saver = InMemorySaver()
app = graph(saver)
app.invoke({"a": ["in"]}, cfg, durability="exit")
first = list(saver.list(cfg))
assert len(first) == 1, first
assert first[0].parent_config is None
assert first[0].metadata["step"] == 3
assert first[0].checkpoint["channel_values"]["a"] == ["in", "n1", "n2", "n3"]
assert first[0].checkpoint["channel_values"]["b"] == "x"
app.invoke({"a": ["again"]}, cfg, durability="exit")
second = list(saver.list(cfg))
assert len(second) == 2, second
assert second[0].parent_config["configurable"]["checkpoint_id"] == first[0].checkpoint["id"]
assert second[1].checkpoint["id"] == first[0].checkpoint["id"]

every = InMemorySaver()
graph(every).invoke({"a": ["in"]}, cfg, durability="async")
assert len(list(every.list(cfg))) == 5  # steps -1 (the input) to 3
print("exit mode: one final checkpoint per run, parent = the previous run's final")
