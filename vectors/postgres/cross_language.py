#!/usr/bin/env python3
"""Cross-language proof for the Rust `PostgresSaver` on Python's `PostgresSaver` tables.

Subcommands (URL = a postgresql:// URL, SCHEMA = the schema both sides use; with
--encrypted both sides use EncryptedSerializer with LANGGRAPH_AES_KEY):

  run URL SCHEMA OUT [--encrypted]
      Python's setup() (a no-op when Rust already ran its own), then a real graph on
      Python's PostgresSaver: LangChain messages, a Send fan-out, a subgraph, an
      interrupt resumed with Command(resume=...), a DeltaChannel. Writes to OUT what
      Python reads back: every tuple of `list(None)` and the delta history of each,
      packed with JsonPlusSerializer (channel_values sorted by key), plus the ids of
      get_state_history.
  resume URL SCHEMA RUST_ID [--encrypted]
      Checks that Python reads the checkpoint Rust appended (RUST_ID) and lists it in
      get_state_history, then continues the thread from it: a new input, the interrupt
      again, Command(resume=...), to the end; the final state holds Rust's message.
  schema URL SCHEMA
      Creates the schema (Python's setup() does not).
  reads URL SCHEMA READS OUT
      Makes every getTuple/list read listed in READS (the file LangGraphJS's
      vectors/postgres/js/write_rows.mjs writes) with Python's PostgresSaver and
      writes to OUT what Python read, packed as in `run`, one entry per read.
  fingerprint URL SCHEMA
      Prints the schema's layout (columns, defaults, indexes, migration versions) as
      JSON, to show that one side's setup() after the other's changes nothing.
"""

from __future__ import annotations

import base64
import json
import operator
import sys
from typing import Annotated, Any, TypedDict

import psycopg
from psycopg.rows import dict_row
from langchain_core.messages import AIMessage, HumanMessage
from langgraph.channels.delta import DeltaChannel
from langgraph.checkpoint.postgres import PostgresSaver
from langgraph.checkpoint.serde.encrypted import EncryptedSerializer
from langgraph.checkpoint.serde.jsonplus import JsonPlusSerializer
from langgraph.graph import END, START, StateGraph
from langgraph.graph.message import add_messages
from langgraph.types import Command, Send, interrupt

PLAIN = JsonPlusSerializer()
THREAD = "cross-1"


def packed(obj: Any) -> str:
    t, data = PLAIN.dumps_typed(obj)
    assert t == "msgpack", t
    return base64.b64encode(data).decode()


def extend(state: list, writes: list) -> list:
    out = list(state)
    for w in writes:
        out.extend(w if isinstance(w, list) else [w])
    return out


class State(TypedDict, total=False):
    messages: Annotated[list, add_messages]
    log: Annotated[list, DeltaChannel(extend, snapshot_frequency=2)]
    results: Annotated[list, operator.add]
    topic: str


class SubState(TypedDict, total=False):
    messages: Annotated[list, add_messages]
    topic: str


def sub_step(state: SubState) -> dict:
    return {"messages": [AIMessage(content=f"sub on {state.get('topic')}", id=f"sub-{len(state['messages'])}")]}


def build_sub():
    g = StateGraph(SubState)
    g.add_node("sub_step", sub_step)
    g.add_edge(START, "sub_step")
    g.add_edge("sub_step", END)
    return g.compile()


def plan(state: State) -> dict:
    n = len(state["messages"])
    return {
        "messages": [AIMessage(content=f"plan {n}", id=f"plan-{n}")],
        "log": [f"plan {n}"],
        "topic": f"topic {n}",
    }


def fan_out(state: State) -> list[Send]:
    return [Send("worker", {"item": i, "topic": state.get("topic", "")}) for i in range(3)]


def worker(arg: dict) -> dict:
    return {"results": [f"{arg['topic']}#{arg['item']}"], "log": [f"worker {arg['item']}"]}


def approve(state: State) -> dict:
    answer = interrupt({"question": "approve?", "results": len(state.get("results", []))})
    return {
        "messages": [HumanMessage(content=f"approved: {answer}", id=f"approve-{len(state['messages'])}")],
        "log": [f"approve {answer}"],
    }


def build(saver: PostgresSaver):
    g = StateGraph(State)
    g.add_node("plan", plan)
    g.add_node("worker", worker)
    g.add_node("sub", build_sub())
    g.add_node("approve", approve)
    g.add_edge(START, "plan")
    g.add_conditional_edges("plan", fan_out, ["worker"])
    g.add_edge("worker", "sub")
    g.add_edge("sub", "approve")
    g.add_edge("approve", END)
    return g.compile(checkpointer=saver)


def connect(url: str, schema: str) -> psycopg.Connection:
    return psycopg.Connection.connect(
        url,
        autocommit=True,
        prepare_threshold=0,
        row_factory=dict_row,
        options=f"-c search_path={schema}",
    )


def make_saver(conn: psycopg.Connection, encrypted: bool) -> PostgresSaver:
    serde = EncryptedSerializer.from_pycryptodome_aes() if encrypted else None
    return PostgresSaver(conn, serde=serde)


def tuple_view(t) -> dict:
    cp = dict(t.checkpoint)
    cp["channel_values"] = dict(sorted(cp["channel_values"].items()))
    return {
        "config": t.config["configurable"],
        "checkpoint": cp,
        "metadata": t.metadata,
        "parent_config": t.parent_config["configurable"] if t.parent_config else None,
        "pending_writes": [list(w) for w in (t.pending_writes or [])],
    }


def cmd_run(url: str, schema: str, out: str, encrypted: bool) -> None:
    with connect(url, schema) as conn:
        saver = make_saver(conn, encrypted)
        saver.setup()
        graph = build(saver)
        cfg = {"configurable": {"thread_id": THREAD}, "metadata": {"user": "ada"}}
        first = graph.invoke({"messages": [HumanMessage(content="hello", id="h-1")], "log": ["start"]}, cfg)
        assert "__interrupt__" in first, first
        final = graph.invoke(Command(resume="yes"), cfg)
        assert final["messages"][-1].content == "approved: yes", final["messages"]
        assert len(final["results"]) == 3, final
        reads = []
        # list() holds the saver's lock while it yields: collect it before other calls.
        for t in list(saver.list(None)):
            conf = t.config
            hist = saver.get_delta_channel_history(config=conf, channels=["log", "messages"])
            reads.append(
                {
                    "config": conf["configurable"],
                    "tuple": packed(tuple_view(saver.get_tuple(conf))),
                    "listed": packed(tuple_view(t)),
                    "history": packed({k: dict(v) for k, v in hist.items()}),
                }
            )
        history = [s.config["configurable"]["checkpoint_id"] for s in graph.get_state_history(cfg)]
        with open(out, "w") as f:
            json.dump({"reads": reads, "state_history": history, "thread_id": THREAD}, f)
        print(f"python: {len(reads)} checkpoints over {len({r['config']['checkpoint_ns'] for r in reads})} namespaces, "
              f"{sum(1 for r in reads if r['config']['checkpoint_ns'] == '')} in the root history")


def cmd_resume(url: str, schema: str, rust_id: str, encrypted: bool) -> None:
    with connect(url, schema) as conn:
        saver = make_saver(conn, encrypted)
        graph = build(saver)
        cfg = {"configurable": {"thread_id": THREAD}}
        latest = saver.get_tuple(cfg)
        assert latest.config["configurable"]["checkpoint_id"] == rust_id, latest.config
        state = graph.get_state(cfg)
        assert state.values["messages"][-1].content == "from rust", state.values["messages"][-1]
        ids = [s.config["configurable"]["checkpoint_id"] for s in graph.get_state_history(cfg)]
        assert rust_id in ids and ids[0] == rust_id, ids[:3]
        first = graph.invoke({"messages": [HumanMessage(content="again", id="h-2")], "log": ["again"]}, cfg)
        assert "__interrupt__" in first, first
        final = graph.invoke(Command(resume="second"), cfg)
        contents = [m.content for m in final["messages"]]
        assert "from rust" in contents and contents[-1] == "approved: second", contents
        assert final["log"][0] == "start" and "approve second" in final["log"], final["log"]
        after = [s.config["configurable"]["checkpoint_id"] for s in graph.get_state_history(cfg)]
        assert rust_id in after and len(after) > len(ids), (len(after), len(ids))
        print(f"python: resumed from Rust's checkpoint {rust_id}, finished with {len(contents)} messages, "
              f"{len(after)} checkpoints in history")


def cmd_fingerprint(url: str, schema: str) -> None:
    with psycopg.Connection.connect(url, autocommit=True, row_factory=dict_row) as conn:
        cols = conn.execute(
            "SELECT table_name, column_name, ordinal_position, data_type, column_default, is_nullable "
            "FROM information_schema.columns WHERE table_schema = %s ORDER BY table_name, ordinal_position",
            (schema,),
        ).fetchall()
        idx = conn.execute(
            "SELECT indexname, indexdef FROM pg_indexes WHERE schemaname = %s ORDER BY indexname", (schema,)
        ).fetchall()
        vs = [r["v"] for r in conn.execute(f'SELECT v FROM "{schema}".checkpoint_migrations ORDER BY v').fetchall()]
    print(json.dumps({"columns": cols, "indexes": idx, "migrations": vs}, default=str, sort_keys=True))


def cmd_reads(url: str, schema: str, reads_file: str, out: str) -> None:
    with open(reads_file, encoding="utf-8") as f:
        reads = json.load(f)["reads"]
    result = []
    with connect(url, schema) as conn:
        saver = make_saver(conn, False)
        for r in reads:
            cfg = {"configurable": {k: v for k, v in (r["config"] or {}).items() if v is not None}}
            if r["kind"] == "get":
                t = saver.get_tuple(cfg)
                result.append([packed(tuple_view(t))] if t else [])
            else:
                opts = r["options"]
                before = opts.get("before")
                got = list(
                    saver.list(
                        cfg if r["config"] else None,
                        filter=opts.get("filter"),
                        before=before,
                        limit=opts.get("limit"),
                    )
                )
                result.append([packed(tuple_view(t)) for t in got])
    with open(out, "w", encoding="utf-8") as f:
        json.dump({"reads": result}, f)
    print(f"python: made the {len(result)} reads of {reads_file} on schema {schema}")


def main() -> None:
    args = [a for a in sys.argv[1:] if a != "--encrypted"]
    encrypted = "--encrypted" in sys.argv
    cmd = args[0] if args else ""
    if cmd == "run" and len(args) == 4:
        cmd_run(args[1], args[2], args[3], encrypted)
    elif cmd == "resume" and len(args) == 4:
        cmd_resume(args[1], args[2], args[3], encrypted)
    elif cmd == "schema" and len(args) == 3:
        with psycopg.Connection.connect(args[1], autocommit=True) as conn:
            conn.execute(f'CREATE SCHEMA IF NOT EXISTS "{args[2]}"')
    elif cmd == "reads" and len(args) == 5:
        cmd_reads(args[1], args[2], args[3], args[4])
    elif cmd == "fingerprint" and len(args) == 3:
        cmd_fingerprint(args[1], args[2])
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main()
