"""Shared by the fixture generators in this directory (each runs in its own venv with
the old package versions its requirements.txt pins; see README.md).

- `build_graph(...)`: a small real graph, written so it runs on LangGraph 0.1 through
  today: messages (a human turn, an AI turn with a tool call, a tool answer, a final AI
  turn), a datetime in the state, an interrupt (`interrupt()` where the version has it,
  else `interrupt_before`), and a subgraph where the version namespaces checkpoints.
- `canon(v)`: what a saver returned, as plain JSON (Python-only types become tagged
  objects), so a reader in another language can compare.
- `sqlite_rows(path)` / `postgres_rows(conn)`: every row of every table, as JSON with
  bytes in base64.
"""



import base64
import dataclasses
import os
import datetime as dt
import json
import math
import sqlite3
import sys
from typing import Annotated, Any, Optional

try:
    from typing import TypedDict
except ImportError:  # pragma: no cover
    from typing_extensions import TypedDict

# A fixed instant, so the state and the metadata hold a datetime in every era.
WHEN = dt.datetime(2024, 7, 1, 12, 30, 45, 123456, tzinfo=dt.timezone.utc)


def canon(v: Any) -> Any:
    """A JSON form of what a saver returned."""
    if v is None or isinstance(v, (bool, str)):
        return v
    if isinstance(v, int):
        return v
    if isinstance(v, float):
        return v if math.isfinite(v) else {"$float": repr(v)}
    if isinstance(v, (bytes, bytearray, memoryview)):
        return {"$bytes": base64.b64encode(bytes(v)).decode()}
    if isinstance(v, dt.datetime):
        return {"$datetime": v.isoformat()}
    if isinstance(v, (dt.date, dt.time, dt.timedelta)):
        return {"$" + type(v).__name__: str(v)}
    if isinstance(v, dict):
        if all(isinstance(k, str) for k in v):
            return {k: canon(x) for k, x in v.items()}
        return {"$dict": [[canon(k), canon(x)] for k, x in v.items()]}
    if isinstance(v, tuple) and hasattr(v, "_asdict"):
        return {"$" + type(v).__name__: canon(dict(v._asdict()))}
    if isinstance(v, tuple):
        return {"$tuple": [canon(x) for x in v]}
    if isinstance(v, list):
        return [canon(x) for x in v]
    if isinstance(v, (set, frozenset)):
        return {"$set": sorted((canon(x) for x in v), key=json.dumps)}
    if dataclasses.is_dataclass(v) and not isinstance(v, type):
        return {
            "$" + type(v).__name__: {
                f.name: canon(getattr(v, f.name)) for f in dataclasses.fields(v)
            }
        }
    dump = getattr(v, "model_dump", None) or getattr(v, "dict", None)
    if callable(dump) and hasattr(v, "__fields__"):
        return {"$" + type(v).__name__: canon(dump())}
    return {"$repr": repr(v)}


def _cell(v: Any) -> Any:
    if isinstance(v, (bytes, bytearray, memoryview)):
        return {"$bytes": base64.b64encode(bytes(v)).decode()}
    if v is not None and not isinstance(v, (bool, int, float, str)):
        return {"$text": str(v)}
    return v


def sqlite_rows(path: str) -> dict:
    """Every table's rows, in rowid order, cells as JSON (bytes in base64)."""
    conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    out = {}
    tables = [
        r[0]
        for r in conn.execute(
            "SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name"
        )
    ]
    for t in tables:
        cur = conn.execute(f'SELECT * FROM "{t}" ORDER BY rowid')
        cols = [d[0] for d in cur.description]
        out[t] = {"columns": cols, "rows": [[_cell(c) for c in r] for r in cur]}
    out["$schema"] = [
        r[0] for r in conn.execute("SELECT sql FROM sqlite_master ORDER BY name")
    ]
    conn.close()
    return out


def postgres_rows(conn, schema: str = "public") -> dict:
    """Every table's rows, ordered by all columns, cells as JSON (bytes in base64)."""
    out = {}
    with conn.cursor() as cur:
        cur.execute(
            "SELECT table_name FROM information_schema.tables WHERE table_schema = %s ORDER BY 1",
            (schema,),
        )
        tables = [r[0] if isinstance(r, tuple) else r["table_name"] for r in cur.fetchall()]
        for t in tables:
            cur.execute(f'SELECT * FROM "{schema}"."{t}" LIMIT 0')
            n = len(cur.description)
            order = ", ".join(str(i + 1) for i in range(n))
            cur.execute(f'SELECT * FROM "{schema}"."{t}" ORDER BY {order}')
            cols = [d[0] for d in cur.description]
            rows = []
            for r in cur.fetchall():
                vals = list(r.values()) if isinstance(r, dict) else list(r)
                rows.append([_cell(json.dumps(c, sort_keys=True) if isinstance(c, (dict, list)) else c) for c in vals])
            out[t] = {"columns": cols, "rows": rows}
    return out


def reads(saver, threads) -> dict:
    """What the saver reads back: `list` of each thread (every namespace), then
    `get_tuple` of every listed checkpoint's config."""
    out = {}
    for t in threads:
        listed = list(saver.list({"configurable": {"thread_id": t}}))
        out[t] = {
            "list": [canon(x) for x in listed],
            "get_tuple": [canon(saver.get_tuple(x.config)) for x in listed],
        }
    return out


def write_json(path: str, obj: Any) -> None:
    with open(path, "w") as f:
        json.dump(obj, f, indent=1, sort_keys=True, ensure_ascii=True)
        f.write("\n")


def build_graph(checkpointer, *, use_interrupt_fn: bool, subgraph: bool, plain: bool = False):
    """The fixture graph; returns `(compiled, resume_input)`. `plain`: messages as
    JSON-plain dicts and the time as a string, for savers that write node outputs into
    JSONB metadata with no serializer (postgres 1.0.0)."""
    from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
    from langgraph.graph import END, START, StateGraph
    from langgraph.graph.message import add_messages

    import operator

    if plain:
        msg_reducer = operator.add

        def AIMessage(content, id, tool_calls=None):  # noqa: N802
            return {"type": "ai", "content": content, "id": id, "tool_calls": tool_calls or []}

        def ToolMessage(content, tool_call_id, id):  # noqa: N802
            return {"type": "tool", "content": content, "tool_call_id": tool_call_id, "id": id}

        def is_tool(m):
            return m.get("type") == "tool"

        def tool_calls(m):
            return m.get("tool_calls")

        when = WHEN.isoformat()
    else:
        msg_reducer = add_messages

        def is_tool(m):
            return isinstance(m, ToolMessage)

        def tool_calls(m):
            return getattr(m, "tool_calls", None)

        when = WHEN

    class State(TypedDict):
        messages: Annotated[list, msg_reducer]
        when: Any
        steps: int

    def agent(state: State):
        msgs = state["messages"]
        if any(is_tool(m) for m in msgs):
            return {
                "messages": [AIMessage(content="It is sunny in Paris.", id="ai-2")],
                "steps": state.get("steps", 0) + 1,
            }
        return {
            "messages": [
                AIMessage(
                    content="",
                    id="ai-1",
                    tool_calls=[
                        {"name": "weather", "args": {"city": "Paris"}, "id": "call-1"}
                    ],
                )
            ],
            "when": when,
            "steps": state.get("steps", 0) + 1,
        }

    def tools(state: State):
        answer = "sunny"
        if use_interrupt_fn:
            from langgraph.types import interrupt

            answer = interrupt({"question": "run weather?", "asked_at": WHEN})
        return {
            "messages": [ToolMessage(content=str(answer), tool_call_id="call-1", id="tool-1")]
        }

    def route(state: State):
        last = state["messages"][-1]
        return "tools" if tool_calls(last) else "after"

    builder = StateGraph(State)
    builder.add_node("agent", agent)
    builder.add_node("tools", tools)
    if subgraph:

        class Sub(TypedDict):
            messages: Annotated[list, msg_reducer]

        def note(state: Sub):
            return {"messages": [AIMessage(content="(noted by the subgraph)", id="sub-1")]}

        sb = StateGraph(Sub)
        sb.add_node("note", note)
        sb.add_edge(START, "note")
        sb.add_edge("note", END)
        builder.add_node("after", sb.compile())
    else:

        def after(state: State):
            return {"steps": state.get("steps", 0) + 1}

        builder.add_node("after", after)
    builder.add_edge(START, "agent")
    builder.add_conditional_edges("agent", route, ["tools", "after"])
    builder.add_edge("tools", "agent")
    builder.add_edge("after", END)
    if use_interrupt_fn:
        from langgraph.types import Command

        return builder.compile(checkpointer=checkpointer), Command(resume="sunny")
    return builder.compile(checkpointer=checkpointer, interrupt_before=["tools"]), None


def build_sends_graph(checkpointer):
    """The fan-out graph of `sqlite-py-sends-*` (runs on LangGraph 0.4 through today):
    `plan_a` and `plan_b` run in one step, each sending work to `research` with `Send`
    (arguments holding a string, a datetime and a message); compiled to stop before
    `research`, so the checkpoint after the planning step holds the sends as pending."""
    import operator

    from langchain_core.messages import HumanMessage
    from langgraph.graph import END, START, StateGraph
    from langgraph.types import Send

    class State(TypedDict):
        topics: list
        results: Annotated[list, operator.add]

    def plan_a(state: State):
        return {"results": ["planned a"]}

    def plan_b(state: State):
        return {"results": ["planned b"]}

    def send_a(state: State):
        return [
            Send("research", {"topic": t, "asked_at": WHEN, "by": "a"})
            for t in state["topics"]
        ]

    def send_b(state: State):
        note = HumanMessage(content="and the wind?", id="h-2")
        return [Send("research", {"topic": "weather", "note": note, "by": "b"})]

    def research(arg: dict):
        return {"results": [f"{arg['by']}: {arg['topic']}"]}

    builder = StateGraph(State)
    builder.add_node("plan_a", plan_a)
    builder.add_node("plan_b", plan_b)
    builder.add_node("research", research)
    builder.add_edge(START, "plan_a")
    builder.add_edge(START, "plan_b")
    builder.add_conditional_edges("plan_a", send_a, ["research"])
    builder.add_conditional_edges("plan_b", send_b, ["research"])
    builder.add_edge("research", END)
    return builder.compile(checkpointer=checkpointer, interrupt_before=["research"])


def run_threads(checkpointer, *, use_interrupt_fn, subgraph, plain=False):
    """Runs the graph on two threads: `t-main` (interrupted, then resumed) and
    `t-short` (interrupted, left pending). Config carries a datetime, which the
    savers copy into metadata where the era did."""
    from langchain_core.messages import HumanMessage

    graph, resume = build_graph(
        checkpointer, use_interrupt_fn=use_interrupt_fn, subgraph=subgraph, plain=plain
    )
    for t in ["t-main", "t-short"]:
        cfg = {"configurable": {"thread_id": t, "user": "ada"}}
        if not plain:
            cfg["configurable"]["requested_at"] = WHEN
        first = (
            {"type": "human", "content": "Weather in Paris?", "id": "h-1"}
            if plain
            else HumanMessage(content="Weather in Paris?", id="h-1")
        )
        graph.invoke({"messages": [first], "steps": 0}, cfg)
        if t == "t-main":
            graph.invoke(resume, cfg)
    return ["t-main", "t-short"]


def versions() -> dict:
    from importlib.metadata import PackageNotFoundError, version

    out = {"python": sys.version.split()[0]}
    for p in [
        "langgraph",
        "langgraph-checkpoint",
        "langgraph-checkpoint-sqlite",
        "langgraph-checkpoint-postgres",
        "langchain-core",
        "psycopg",
    ]:
        try:
            out[p] = version(p)
        except PackageNotFoundError:
            pass
    return out


def finish_sqlite(path: str) -> None:
    """Leaves one self-contained file: the WAL folded in, -wal and -shm gone (the
    journal mode the saver chose stays recorded in the file header)."""
    import os

    conn = sqlite3.connect(path)
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.close()
    for suffix in ["-wal", "-shm"]:
        if os.path.exists(path + suffix):
            os.remove(path + suffix)


def run_sqlite_fixture(here: str, run, serde=None) -> None:
    """A fresh `store.sqlite` in `here` written through the release's `SqliteSaver`
    (with `serde`, e.g. an `EncryptedSerializer`, when given): `run(saver)` runs the
    graph and returns the thread ids; then reads.json, rows.json, and the file folded
    into one (`finish_sqlite`)."""
    from langgraph.checkpoint.sqlite import SqliteSaver

    path = os.path.join(here, "store.sqlite")
    for suffix in ["", "-wal", "-shm"]:
        if os.path.exists(path + suffix):
            os.remove(path + suffix)
    conn = sqlite3.connect(path, check_same_thread=False)
    saver = SqliteSaver(conn) if serde is None else SqliteSaver(conn, serde=serde)
    threads = run(saver)
    write_json(
        os.path.join(here, "reads.json"),
        {"versions": versions(), "threads": reads(saver, threads)},
    )
    conn.close()
    write_json(os.path.join(here, "rows.json"), sqlite_rows(path))
    finish_sqlite(path)


PG_SERVER = os.environ.get("FIXTURE_PG_SERVER", "postgresql://postgres@127.0.0.1:55432")
# The database `CREATE DATABASE` / `DROP DATABASE` run from (any existing one).
PG_ADMIN_DB = os.environ.get("FIXTURE_PG_ADMIN_DB", "postgres")


def fresh_pg_database(name: str, server: str = PG_SERVER) -> str:
    """Drops and creates database `name` (after `FIXTURE_PG_DB_PREFIX`, if set: for a
    server where only names with a given prefix may be made) on `server`; returns its URL."""
    import psycopg

    name = os.environ.get("FIXTURE_PG_DB_PREFIX", "") + name

    with psycopg.connect(f"{server}/{PG_ADMIN_DB}", autocommit=True) as c:
        c.execute(f'DROP DATABASE IF EXISTS "{name}"')
        c.execute(f'CREATE DATABASE "{name}"')
    return f"{server}/{name}"


def pg_dump(url: str, out: str) -> None:
    """A plain-SQL dump (INSERT statements, no owners or grants) that psql, or any
    client's simple-query execution, restores into an empty database."""
    import subprocess

    sql = subprocess.run(
        ["pg_dump", "--inserts", "--no-owner", "--no-privileges", "--no-comments", url],
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    # pg_dump's version banner names the machine's client build, and its psql-only
    # `\\restrict KEY` / `\\unrestrict KEY` guard lines carry a random key: drop them,
    # so the dump is stable and plain SQL any client runs as one simple query.
    lines = [
        l
        for l in sql.splitlines()
        if not l.startswith(("-- Dumped ", "\\restrict ", "\\unrestrict "))
    ]
    with open(out, "w") as f:
        f.write("\n".join(lines) + "\n")


def run_postgres_fixture(here: str, db: str, make_saver, *, use_interrupt_fn, subgraph, plain=False):
    """Fresh database `db`, the graph run through `make_saver(conn)`, then dump.sql,
    reads.json and rows.json in `here`."""
    import os

    import psycopg
    from psycopg.rows import dict_row

    url = fresh_pg_database(db)
    with psycopg.connect(
        url, autocommit=True, prepare_threshold=0, row_factory=dict_row
    ) as conn:
        saver = make_saver(conn)
        saver.setup()
        threads = run_threads(
            saver, use_interrupt_fn=use_interrupt_fn, subgraph=subgraph, plain=plain
        )
        write_json(
            os.path.join(here, "reads.json"),
            {"versions": versions(), "threads": reads(saver, threads)},
        )
        write_json(os.path.join(here, "rows.json"), postgres_rows(conn))
    pg_dump(url, os.path.join(here, "dump.sql"))
