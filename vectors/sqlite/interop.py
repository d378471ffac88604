"""Cross-language proof on one SQLite file: a real Python LangGraph graph and langgraph-codec.

    python vectors/sqlite/interop.py RUST_BINARY [--encrypted]

1. Python runs a real graph on `langgraph-checkpoint-sqlite`'s `SqliteSaver`: messages, a
   `Send` fan-out, a subgraph, a `DeltaChannel`, an interrupt resumed with
   `Command(resume=...)`, and a second interrupt where the thread is left waiting.
2. Rust (`RUST_BINARY dump FILE`) reads every checkpoint, pending write and delta-channel
   history of the file; every value must equal what Python's saver reads (both sides
   re-serialize what they read with the plain JsonPlus serializer; its bytes are compared).
3. Rust (`RUST_BINARY continue FILE THREAD`) writes the next checkpoint of the thread: a
   HumanMessage appended to `messages`, as a human-in-the-loop edit would.
4. Python resumes the graph with `Command(resume=...)` from Rust's checkpoint and finishes;
   the last node must have seen Rust's message, `get_state_history` must list Rust's
   checkpoint, and the delta channel must rebuild to the value computed here from first
   principles. Then Rust reads the whole file again and must agree with Python once more.

With `--encrypted`, both sides use `EncryptedSerializer` keyed from one `LANGGRAPH_AES_KEY`
and the script checks that no channel value is stored in clear.
"""

from __future__ import annotations

import base64
import json
import operator
import os
import sqlite3
import subprocess
import sys
import tempfile
import time
from typing import Annotated, Any, TypedDict

from langchain_core.messages import AIMessage, AnyMessage, HumanMessage
from langgraph.channels import DeltaChannel
from langgraph.checkpoint.serde.encrypted import EncryptedSerializer
from langgraph.checkpoint.serde.jsonplus import JsonPlusSerializer
from langgraph.checkpoint.sqlite import SqliteSaver
from langgraph.graph import END, START, StateGraph
from langgraph.graph.message import add_messages
from langgraph.types import Command, Send, interrupt

PLAIN = JsonPlusSerializer()
THREAD = "interop-thread"


def extend_log(state: list[str] | None, writes: list[list[str]]) -> list[str]:
    out = list(state or [])
    for w in writes:
        out.extend(w)
    return out


class State(TypedDict, total=False):
    messages: Annotated[list[AnyMessage], add_messages]
    results: Annotated[list[str], operator.add]
    log: Annotated[list[str], DeltaChannel(extend_log, snapshot_frequency=3)]
    approved: str


class SubState(TypedDict, total=False):
    messages: Annotated[list[AnyMessage], add_messages]


def sub_step(state: SubState) -> dict[str, Any]:
    return {"messages": [AIMessage("from the subgraph", id="sub-1")]}


def build_graph(saver: SqliteSaver):
    sub = StateGraph(SubState)
    sub.add_node("sub_step", sub_step)
    sub.add_edge(START, "sub_step")
    sub.add_edge("sub_step", END)
    subgraph = sub.compile()

    def plan(state: State) -> dict[str, Any]:
        return {"messages": [AIMessage("planning three workers", id="ai-plan")], "log": ["plan"]}

    def fan_out(state: State) -> list[Send]:
        return [Send("worker", {"item": i}) for i in range(3)]

    def worker(arg: dict[str, Any]) -> dict[str, Any]:
        return {"results": [f"r{arg['item']}"], "log": [f"w{arg['item']}"]}

    def gather(state: State) -> dict[str, Any]:
        return {
            "messages": [AIMessage(f"gathered {sorted(state['results'])}", id="ai-gather")],
            "log": ["gather"],
        }

    def review(state: State) -> dict[str, Any]:
        answer = interrupt("approve the plan?")
        return {"approved": answer, "log": ["review"]}

    def final_review(state: State) -> dict[str, Any]:
        answer = interrupt("final answer?")
        seen = [m.content for m in state["messages"]]
        return {
            "messages": [AIMessage(f"final: {answer}; saw {seen}", id="ai-final")],
            "log": ["final"],
        }

    g = StateGraph(State)
    g.add_node("plan", plan)
    g.add_node("worker", worker)
    g.add_node("gather", gather)
    g.add_node("sub", subgraph)
    g.add_node("review", review)
    g.add_node("final_review", final_review)
    g.add_edge(START, "plan")
    g.add_conditional_edges("plan", fan_out, ["worker"])
    g.add_edge("worker", "gather")
    g.add_edge("gather", "sub")
    g.add_edge("sub", "review")
    g.add_edge("review", "final_review")
    g.add_edge("final_review", END)
    return g.compile(checkpointer=saver)


def b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


def plain(value: Any) -> list[str]:
    tag, data = PLAIN.dumps_typed(value)
    return [tag, b64(data)]


def python_dump(saver: SqliteSaver) -> list[dict[str, Any]]:
    """What Python's saver reads from the file, in the shape `RUST_BINARY dump` prints."""
    out = []
    # list() holds the saver's lock while it yields: read it whole first.
    for t in list(saver.list(None)):
        conf = t.config["configurable"]
        cfg = {"configurable": {"thread_id": conf["thread_id"], "checkpoint_ns": conf["checkpoint_ns"],
                                "checkpoint_id": conf["checkpoint_id"]}}
        history = saver.get_delta_channel_history(config=cfg, channels=["log"])["log"]
        out.append({
            "thread_id": conf["thread_id"],
            "checkpoint_ns": conf["checkpoint_ns"],
            "checkpoint_id": conf["checkpoint_id"],
            "parent_checkpoint_id": (t.parent_config or {}).get("configurable", {}).get("checkpoint_id"),
            "checkpoint": plain(t.checkpoint),
            "metadata": plain(dict(t.metadata)),
            "writes": [[task, ch, plain(v)] for task, ch, v in t.pending_writes],
            "log_history": {
                "writes": [[task, ch, plain(v)] for task, ch, v in history["writes"]],
                "seed": plain(history["seed"]) if "seed" in history else None,
            },
        })
    return out


def run_rust(binary: str, *args: str) -> str:
    started = time.monotonic()
    proc = subprocess.run([binary, *args], capture_output=True, text=True)
    if proc.returncode != 0:
        sys.exit(f"FAIL: {binary} {' '.join(args)} exited {proc.returncode}:\n{proc.stderr}")
    print(f"  rust {args[0]}: {time.monotonic() - started:.2f}s")
    return proc.stdout


def compare(label: str, py: list[dict[str, Any]], rust_text: str) -> int:
    rust = [json.loads(line) for line in rust_text.splitlines() if line.strip()]
    py_by_key = {(r["thread_id"], r["checkpoint_ns"], r["checkpoint_id"]): r for r in py}
    rust_by_key = {(r["thread_id"], r["checkpoint_ns"], r["checkpoint_id"]): r for r in rust}
    if len(py) != len(py_by_key) or len(rust) != len(rust_by_key):
        sys.exit(f"FAIL {label}: duplicate checkpoint keys")
    if py_by_key.keys() != rust_by_key.keys():
        sys.exit(f"FAIL {label}: Python lists {sorted(py_by_key)} but Rust lists {sorted(rust_by_key)}")
    if [r["checkpoint_id"] for r in py] != [r["checkpoint_id"] for r in rust]:
        sys.exit(f"FAIL {label}: list order differs")
    checked = 0
    for key, p in py_by_key.items():
        r = rust_by_key[key]
        for field in ("parent_checkpoint_id", "checkpoint", "metadata", "writes", "log_history"):
            if p[field] != r[field]:
                sys.exit(f"FAIL {label}: {key} {field} differs\n python: {p[field]}\n rust:   {r[field]}")
            checked += 1
    print(f"  {label}: {len(py)} checkpoints, {checked} fields equal "
          f"({sum(len(p['writes']) for p in py)} writes)")
    return checked


def assert_no_clear_values(path: str) -> None:
    conn = sqlite3.connect(path)
    for (typ,) in conn.execute("SELECT type FROM checkpoints"):
        if not typ.endswith("+aes"):
            sys.exit(f"FAIL: a checkpoint row is stored as {typ!r}, not encrypted")
    for (typ,) in conn.execute("SELECT type FROM writes"):
        if not typ.endswith("+aes"):
            sys.exit(f"FAIL: a write row is stored as {typ!r}, not encrypted")
    blob = b"".join(row[0] for row in conn.execute("SELECT checkpoint FROM checkpoints"))
    blob += b"".join(row[0] for row in conn.execute("SELECT value FROM writes"))
    for needle in (b"planning three workers", b"edited from Rust", b"gathered"):
        if needle in blob:
            sys.exit(f"FAIL: {needle!r} is stored in clear")
    conn.close()


def schema(path: str) -> list[tuple[str, str, str]]:
    conn = sqlite3.connect(path)
    rows = conn.execute("SELECT type, name, sql FROM sqlite_master ORDER BY name").fetchall()
    mode = conn.execute("PRAGMA journal_mode").fetchone()[0]
    conn.close()
    return rows + [("pragma", "journal_mode", mode)]


def check_setup(binary: str) -> int:
    """Python's setup() and Rust's make the same file, and each changes nothing after the other."""
    with tempfile.TemporaryDirectory() as tmp:
        py_path, rs_path = os.path.join(tmp, "py.sqlite"), os.path.join(tmp, "rs.sqlite")
        with SqliteSaver.from_conn_string(py_path) as s:
            s.setup()
        run_rust(binary, "setup", rs_path)
        py_schema, rs_schema = schema(py_path), schema(rs_path)
        if py_schema != rs_schema:
            sys.exit(f"FAIL: Rust's setup makes {rs_schema}, Python's {py_schema}")
        run_rust(binary, "setup", py_path)
        with SqliteSaver.from_conn_string(rs_path) as s:
            s.setup()
        if schema(py_path) != py_schema or schema(rs_path) != py_schema:
            sys.exit("FAIL: a setup after the other side's changed the schema")
    print(f"  setup: identical schema both ways ({len(py_schema)} entries)")
    return 3


def main() -> None:
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    binary = sys.argv[1]
    encrypted = "--encrypted" in sys.argv[2:]
    env_key = os.environ.get("LANGGRAPH_AES_KEY")
    if encrypted and not env_key:
        os.environ["LANGGRAPH_AES_KEY"] = "interop-key-0123456789abcdef0123"[:32]
    if not encrypted:
        os.environ.pop("LANGGRAPH_AES_KEY", None)
    rust_flags = ["--encrypted"] if encrypted else []
    label = "encrypted" if encrypted else "plain"
    print(f"SQLite interop, {label}")
    checks = check_setup(binary)

    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "checkpoints.sqlite")
        conn = sqlite3.connect(path, check_same_thread=False)
        serde = EncryptedSerializer.from_pycryptodome_aes() if encrypted else None
        saver = SqliteSaver(conn, serde=serde)
        graph = build_graph(saver)
        config = {"configurable": {"thread_id": THREAD}}

        # 1. Python: run to the first interrupt, resume it, run to the second.
        out = graph.invoke({"messages": [HumanMessage("hi", id="human-1")]}, config)
        if "__interrupt__" not in out:
            sys.exit("FAIL: the graph did not stop at the first interrupt")
        out = graph.invoke(Command(resume="yes"), config)
        interrupts = out.get("__interrupt__") or []
        if not interrupts or interrupts[0].value != "final answer?":
            sys.exit(f"FAIL: the graph did not stop at the second interrupt: {out}")
        if out.get("approved") != "yes":
            sys.exit("FAIL: the first resume value did not reach the state")

        # 2. Rust reads everything Python wrote.
        checks += compare("rust reads python", python_dump(saver),
                         run_rust(binary, "dump", path, *rust_flags))

        # 3. Rust writes the next checkpoint of the thread.
        before = graph.get_state(config)
        rust_id = run_rust(binary, "continue", path, THREAD, *rust_flags).strip()
        after = graph.get_state(config)
        if after.config["configurable"]["checkpoint_id"] != rust_id:
            sys.exit("FAIL: Python's get_state does not see Rust's checkpoint as the latest")
        if after.parent_config["configurable"]["checkpoint_id"] != before.config["configurable"]["checkpoint_id"]:
            sys.exit("FAIL: Rust's checkpoint does not have Python's latest as its parent")
        if after.next != ("final_review",):
            sys.exit(f"FAIL: after Rust's checkpoint the next task is {after.next}, not final_review")
        # Rust's metadata row holds exactly the bytes Python's put would write for it.
        raw = conn.execute("SELECT metadata FROM checkpoints WHERE checkpoint_id = ?", (rust_id,)).fetchone()[0]
        if json.dumps(json.loads(raw), ensure_ascii=False).encode("utf-8") != raw:
            sys.exit(f"FAIL: Rust's metadata bytes are not json.dumps's: {raw!r}")
        if json.loads(raw).get("source") != "update":
            sys.exit(f"FAIL: Rust's metadata is {raw!r}")
        checks += 1
        contents = [m.content for m in after.values["messages"]]
        if contents[-1] != "edited from Rust":
            sys.exit(f"FAIL: Python does not read Rust's message: {contents}")

        # 4. Python resumes from Rust's checkpoint and finishes.
        out = graph.invoke(Command(resume="ok"), config)
        final = out["messages"][-1].content
        want_seen = ["hi", "planning three workers", "gathered ['r0', 'r1', 'r2']",
                     "from the subgraph", "edited from Rust"]
        if final != f"final: ok; saw {want_seen}":
            sys.exit(f"FAIL: the last node did not see Rust's state: {final!r}")
        # The delta channel, from first principles: the nodes in the order they ran.
        want_log = ["plan", "w0", "w1", "w2", "gather", "review", "final"]
        if sorted(out["log"]) != sorted(want_log) or out["log"][0] != "plan" or out["log"][-2:] != ["review", "final"]:
            sys.exit(f"FAIL: the delta channel rebuilt as {out['log']}, want {want_log}")
        history_ids = [s.config["configurable"]["checkpoint_id"] for s in graph.get_state_history(config)]
        if rust_id not in history_ids:
            sys.exit("FAIL: get_state_history does not list Rust's checkpoint")
        if graph.get_state(config).next != ():
            sys.exit("FAIL: the thread did not finish")

        # Python's list filter (json_extract equality) gives the same ids in Rust.
        matched: list[int] = []
        for flt in ({"source": "loop"}, {"source": "update"}, {"step": 3}, {"step": -1},
                    {"parents": {}}, {"counters_since_delta_snapshot": {"log": [1, 2]}},
                    {"source": "loop", "step": 1}, {"missing": None}, {"step": 1.0}):
            want = [t.config["configurable"]["checkpoint_id"] for t in saver.list(None, filter=flt)]
            got = run_rust(binary, "ids", path, json.dumps(flt), *rust_flags).split()
            matched.append(len(want))
            if got != want:
                sys.exit(f"FAIL: list(filter={flt}) gives {want} in Python, {got} in Rust")
            checks += 1
        print(f"  list filters: same ids in Python and Rust (matches per filter: {matched})")

        # 5. Rust reads the finished thread, including Python's checkpoints after its own.
        checks += compare("rust reads the finished thread", python_dump(saver),
                          run_rust(binary, "dump", path, *rust_flags))
        if encrypted:
            assert_no_clear_values(path)
        conn.close()
    print(f"{checks} passed, 0 failed")


if __name__ == "__main__":
    main()
