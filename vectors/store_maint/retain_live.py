"""Retention beside a live LangGraph app: two `lgcodec store retain --every` sweepers
on one store while a real graph (messages, a DeltaChannel log, an interrupt) writes and
resumes threads, then what the policy says checked independently of lgcodec.

    python vectors/store_maint/retain_live.py LGCODEC STORE SECONDS

STORE: a SQLite path or a postgresql:// URL (an empty database). Before the sweepers
start, threads are run at chosen times (langgraph's uuid6 clock set back):
  idle-N     3 runs, 100 days ago            -> idle over 30 days: deleted whole
  waiting-N  2 runs and one stopped at the interrupt, 100 days ago
                                             -> idle but waiting: kept, trimmed
  delta-N    6 runs, 1 day ago               -> trimmed to its latest 2 (and the
                                                ancestors its DeltaChannel needs)
The policy: keep_latest = 2, idle_ttl = "30d", interrupted threads kept. Meanwhile the
app runs live-N threads for SECONDS, each run on the thread's latest checkpoint, every
third one stopping at the interrupt and resumed by the next. Checked afterwards, with
Python's saver and graph only:
  - the app never raised; the sweepers swept, exited 0 on SIGTERM, reported no error;
  - the two never swept at once: no lock span (`lock_held_ms`, which holds every
    delete of a sweep) of one overlaps a span of the other;
  - exactly the idle threads are gone;
  - every other thread reads as it did (the values of its latest checkpoint, the task
    waiting at the interrupt), its latest 2 checkpoints are there, and it has at most
    2 checkpoints besides those its DeltaChannel needs: what `log` reads is the same;
  - the waiting threads resume from the interrupt (Command(resume=...)), and every
    live thread holds one message per run the app made.
Prints one JSON line of counts; exits 1 with the reason on the first failure.
"""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import tempfile
import time
from typing import Annotated, TypedDict

import langgraph.checkpoint.base.id as id_module
from langchain_core.messages import AIMessage, HumanMessage
from langgraph.channels.delta import DeltaChannel
from langgraph.graph import END, START, StateGraph
from langgraph.graph.message import add_messages
from langgraph.types import Command, interrupt

DAY = 86_400.0
POLICY = '[rules]\nkeep_latest = 2\nidle_ttl = "30d"\n[keep]\ninterrupted = "keep"\n'


def extend(state: list, writes: list) -> list:
    out = list(state)
    for w in writes:
        out.extend(w if isinstance(w, list) else [w])
    return out


class State(TypedDict, total=False):
    messages: Annotated[list, add_messages]
    log: Annotated[list, DeltaChannel(extend, snapshot_frequency=3)]
    ask: bool


def work(state: State) -> dict:
    n = len(state["messages"])
    return {"messages": [AIMessage(content=f"work {n}", id=f"work-{n}")], "log": [f"work {n}"]}


def approve(state: State) -> dict:
    answer = interrupt({"question": "approve?"})
    n = len(state["messages"])
    return {"messages": [HumanMessage(content=f"approved {answer}", id=f"ok-{n}")], "log": [f"ok {n}"]}


def build(saver):
    g = StateGraph(State)
    g.add_node("work", work)
    g.add_node("approve", approve)
    g.add_edge(START, "work")
    g.add_conditional_edges("work", lambda s: "approve" if s.get("ask") else END, ["approve", END])
    g.add_edge("approve", END)
    return g.compile(checkpointer=saver)


class Clock:
    at: float | None = None

    def time_ns(self) -> int:
        return int((self.at if self.at is not None else time.time()) * 1e9)


def saver_for(store: str):
    if store.startswith(("postgres://", "postgresql://")):
        from langgraph.checkpoint.postgres import PostgresSaver
        from psycopg import Connection
        from psycopg.rows import dict_row

        conn = Connection.connect(store, autocommit=True, prepare_threshold=0, row_factory=dict_row)
        return PostgresSaver(conn)
    import sqlite3

    from langgraph.checkpoint.sqlite import SqliteSaver

    return SqliteSaver(sqlite3.connect(store, check_same_thread=False))


def fail(why: str) -> None:
    sys.exit(f"FAIL: {why}")


def cfg(thread: str) -> dict:
    return {"configurable": {"thread_id": thread}}


def run(graph, thread: str, ask: bool = False) -> None:
    graph.invoke({"messages": [HumanMessage(content=f"hi {thread}")], "ask": ask}, cfg(thread))


def snapshot(graph, thread: str) -> dict:
    s = graph.get_state(cfg(thread))
    return {
        "messages": [m.content for m in s.values.get("messages", [])],
        "log": list(s.values.get("log", [])),
        "next": list(s.next),
    }


def main() -> int:
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    lgcodec, store, seconds = sys.argv[1], sys.argv[2], float(sys.argv[3])
    saver = saver_for(store)
    saver.setup()
    graph = build(saver)
    clock = Clock()
    id_module.time = clock
    now = time.time()
    plan = {f"idle-{i}": (100, 3, False) for i in range(4)}
    plan |= {f"waiting-{i}": (100, 2, True) for i in range(2)}
    plan |= {f"delta-{i}": (1, 6, False) for i in range(2)}
    for thread, (days, runs, waits) in plan.items():
        for r in range(runs + int(waits)):
            clock.at = now - days * DAY + r * 60
            id_module._last_v6_timestamp = None
            run(graph, thread, ask=waits and r == runs)
    clock.at = None
    id_module._last_v6_timestamp = None
    before = {t: snapshot(graph, t) for t in plan}
    latest2 = {t: [c.config["configurable"]["checkpoint_id"] for c in saver.list(cfg(t), limit=2)]
               for t in plan}
    counts = {t: sum(1 for _ in saver.list(cfg(t))) for t in plan}

    work_dir = tempfile.mkdtemp(prefix="retain-live-")
    policy = f"{work_dir}/policy.toml"
    with open(policy, "w") as f:
        f.write(POLICY)
    sweepers = [
        subprocess.Popen(
            [lgcodec, "store", "retain", store, "--policy", policy, "--every", "1s",
             "--batch-size", "2", "--pause", "20ms"],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        for _ in range(2)
    ]
    runs: dict[str, int] = {}
    waiting: set[str] = set()
    end = time.monotonic() + seconds
    i = 0
    while time.monotonic() < end:
        thread = f"live-{i % 3}"
        i += 1
        if thread in waiting:
            graph.invoke(Command(resume="yes"), cfg(thread))
            waiting.discard(thread)
            continue
        ask = runs.get(thread, 0) % 3 == 2
        run(graph, thread, ask=ask)
        runs[thread] = runs.get(thread, 0) + 1
        if ask:
            waiting.add(thread)
        time.sleep(0.02)
    time.sleep(2.5)  # one more round after the app stopped
    lines = []
    spans = []  # per sweeper: the [taken, released] lock spans of its sweeps, in ms
    for p in sweepers:
        p.send_signal(signal.SIGTERM)
        out, err = p.communicate(timeout=60)
        if p.returncode != 0:
            fail(f"a sweeper exited {p.returncode}: {err}")
        mine = [json.loads(l) for l in out.splitlines() if l.strip()]
        lines += mine
        spans.append([l["lock_held_ms"] for l in mine
                      if l.get("sweep") and not l.get("skipped_locked")])
    swept = [l for l in lines if l.get("sweep") and not l.get("skipped_locked")]
    if len(swept) < 2 or any(l.get("errors") or l.get("error") for l in lines):
        fail(f"sweeps: {lines}")
    # The two sweepers never sweep at once: each sweep's deletes fall inside its lock
    # span, and no span of one sweeper overlaps a span of the other. Both ends are read
    # while the lock is held and are whole milliseconds, so one sweeper may take the
    # lock in the millisecond the other let it go: spans may share an end, no more.
    if any(s is None for mine in spans for s in mine):
        fail(f"a sweep that ran reports no lock span: {lines}")
    both = [(a, b) for a in spans[0] for b in spans[1] if a[0] < b[1] and b[0] < a[1]]
    if both:
        fail(f"the two sweepers swept at once: {both[:3]}")
    if not spans[0] or not spans[1]:
        print(f"note: one sweeper ran every sweep ({len(spans[0])} and {len(spans[1])})")

    threads = {c.config["configurable"]["thread_id"] for c in saver.list(None)}
    gone = {t for t in plan if t not in threads}
    if gone != {t for t in plan if t.startswith("idle-")}:
        fail(f"deleted {sorted(gone)}, the policy deletes the idle threads")
    for t in plan:
        if t.startswith("idle-"):
            continue
        if snapshot(graph, t) != before[t]:
            fail(f"{t} reads {snapshot(graph, t)}, before the sweeps {before[t]}")
        ids = [c.config["configurable"]["checkpoint_id"] for c in saver.list(cfg(t))]
        if not set(latest2[t]) <= set(ids):
            fail(f"{t} lost one of its latest 2 checkpoints")
        # A waiting thread's 9 checkpoints are all its DeltaChannel's chain (snapshots
        # every 3 writes); a delta thread's 18 are not.
        if t.startswith("delta-") and len(ids) >= counts[t]:
            fail(f"{t} kept its {counts[t]} checkpoints: keep_latest = 2 trimmed nothing")
    for t in plan:
        if t.startswith("waiting-"):
            graph.invoke(Command(resume="later"), cfg(t))
            after = snapshot(graph, t)
            if after["next"] or after["messages"][-1] != "approved later":
                fail(f"{t} did not resume from its interrupt: {after}")
    for thread, n in runs.items():
        if thread in waiting:
            graph.invoke(Command(resume="yes"), cfg(thread))
        msgs = snapshot(graph, thread)["messages"]
        if sum(m.startswith("hi ") for m in msgs) != n:
            fail(f"{thread}: {n} runs, {sum(m.startswith('hi ') for m in msgs)} in its state")
    print(json.dumps({
        "sweeps": len(swept), "sweeps_each": [len(m) for m in spans],
        "skipped": sum(1 for l in lines if l.get("skipped_locked")),
        "live_runs": sum(runs.values()), "deleted_threads": sorted(gone),
        "checkpoints_deleted": sum(l.get("checkpoints_deleted", 0) for l in swept),
    }))
    return 0


if __name__ == "__main__":
    sys.exit(main())
