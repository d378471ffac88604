"""The retention fixture and its reader, with today's Python savers.

    python vectors/store_maint/retain_fixture.py write STORE
    python vectors/store_maint/retain_fixture.py read STORE
    python vectors/store_maint/retain_fixture.py live STORE SECONDS

STORE is a SQLite path or a postgresql:// URL. `write` puts threads whose checkpoint ids
are Python's uuid6 made at chosen times (days before now; the clock uuid6 reads is set
for each put; threads go back in time, so uuid6's rising-id guard is reset), one
pending write each, and prints {thread: [[ns, id], ...]} in the order
written. `read` prints what Python's saver lists: {thread: [[ns, id], ...]} (ids
ascending), and checks that the latest checkpoint of each thread loads with
get_tuple and that a `__interrupt__` write is still there where one was put. `live`
writes to thread "live" as a running graph would (a checkpoint and a pending write every
20 ms, each on the last one it wrote) for SECONDS, reads its latest checkpoint back
whole, and prints the last id it wrote, how many it wrote and its slowest checkpoint
with its write (milliseconds).
"""

from __future__ import annotations

import json
import sys
import time

import langgraph.checkpoint.base.id as id_module
from langgraph.checkpoint.base import empty_checkpoint
from langgraph.types import Interrupt

DAY = 86_400.0

# thread -> [(namespace, days before now, metadata)]
THREADS = {
    "active": [("", 40, {}), ("", 39, {}), ("", 38, {}), ("", 37, {}), ("", 1 / 24, {})],
    "idle": [("", 100, {}), ("", 99, {}), ("", 98, {})],
    "vip-7": [("", 100, {}), ("", 99, {}), ("", 98, {})],
    "meta-pin": [("", 100, {}), ("", 99, {}), ("", 98, {"pinned": True})],
    "waiting": [("", 100, {}), ("", 99, {}), ("", 98, {})],
    "labeled": [("", 100, {"label": "release-1"}), ("", 99, {}), ("", 98, {})],
    "own-rules": [("", 100, {}), ("", 99, {}), ("", 98, {"retention": {"idle_ttl": "365d"}})],
    "ancient": [("", 400, {}), ("", 10, {}), ("", 1 / 1440, {})],
    "subgraph": [("", 40, {}), ("child:1", 40.5, {}), ("child:1", 39, {}), ("", 1 / 24, {})],
}


class Clock:
    """`time` for langgraph's uuid6: time_ns() reads `at`."""

    at = 0.0

    def time_ns(self) -> int:
        return int(self.at * 1e9)


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


def write(store: str) -> None:
    saver = saver_for(store)
    saver.setup()
    clock = Clock()
    id_module.time = clock
    now = time.time()
    out: dict[str, list[list[str]]] = {}
    for thread, steps in THREADS.items():
        parents: dict[str, dict] = {}
        for i, (ns, days, metadata) in enumerate(steps):
            clock.at = now - days * DAY
            id_module._last_v6_timestamp = None  # uuid6 keeps its ids rising otherwise
            cp = empty_checkpoint()
            cp["id"] = str(id_module.uuid6(clock_seq=i))
            cp["channel_values"] = {"messages": [f"{thread} {i}"]}
            cp["channel_versions"] = {"messages": str(i + 1)}
            config = parents.get(ns) or {"configurable": {"thread_id": thread, "checkpoint_ns": ns}}
            config = saver.put(config, cp, {"source": "loop", "step": i, **metadata},
                               cp["channel_versions"])
            parents[ns] = config
            saver.put_writes(config, [("messages", [f"w {i}"])], f"task-{i}", "")
            out.setdefault(thread, []).append([ns, cp["id"]])
        if thread == "waiting":
            saver.put_writes(parents[""], [("__interrupt__", [Interrupt(value="approve?", id="i-1")])],
                             "task-ask", "")
    print(json.dumps(out))


def read(store: str) -> None:
    saver = saver_for(store)
    out: dict[str, list[list[str]]] = {}
    for t in saver.list(None):
        c = t.config["configurable"]
        out.setdefault(c["thread_id"], []).append([c["checkpoint_ns"], c["checkpoint_id"]])
    for thread, cps in out.items():
        cps.sort(key=lambda x: (x[1], x[0]))
        latest = saver.get_tuple({"configurable": {"thread_id": thread, "checkpoint_ns": ""}})
        assert latest is not None, thread
        if thread == "waiting":
            assert any(w[1] == "__interrupt__" for w in latest.pending_writes), latest.pending_writes
    print(json.dumps(out, sort_keys=True))


def live(store: str, seconds: float) -> None:
    saver = saver_for(store)
    config = {"configurable": {"thread_id": "live", "checkpoint_ns": ""}}
    end = time.time() + seconds
    i = 0
    last = ""
    slowest = 0.0
    while time.time() < end:
        cp = empty_checkpoint()
        cp["channel_values"] = {"messages": [f"live {i}"]}
        cp["channel_versions"] = {"messages": str(i + 1)}
        began = time.perf_counter()
        config = saver.put(config, cp, {"source": "loop", "step": i}, cp["channel_versions"])
        saver.put_writes(config, [("messages", [f"w {i}"])], f"task-{i}", "")
        slowest = max(slowest, time.perf_counter() - began)
        last = cp["id"]
        i += 1
        time.sleep(0.02)
    latest = saver.get_tuple({"configurable": {"thread_id": "live", "checkpoint_ns": ""}})
    assert latest is not None and latest.checkpoint["id"] == last, (latest, last)
    assert latest.checkpoint["channel_values"] == {"messages": [f"live {i - 1}"]}, latest
    assert [w[2] for w in latest.pending_writes] == [[f"w {i - 1}"]], latest.pending_writes
    print(json.dumps({"last": last, "written": i, "slowest_ms": round(slowest * 1000, 1)}))


if __name__ == "__main__":
    if len(sys.argv) == 4 and sys.argv[1] == "live":
        live(sys.argv[2], float(sys.argv[3]))
    elif len(sys.argv) == 3 and sys.argv[1] in ("write", "read"):
        {"write": write, "read": read}[sys.argv[1]](sys.argv[2])
    else:
        sys.exit(__doc__)
