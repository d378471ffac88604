"""A real Python graph's threads moved between SQLite and Postgres with `lgcodec store copy`,
and resumed by Python on each side.

    python vectors/store_maint/copy_resume.py LGCODEC_BINARY POSTGRES_URL

1. Python runs the graph of vectors/sqlite/interop.py (messages, a Send fan-out, a
   subgraph, a DeltaChannel, two interrupts) on `SqliteSaver`: thread "a" stops at its
   second interrupt, thread "b" at its first.
2. `lgcodec store copy` copies the file into the empty Postgres database (Python's tables
   are created by the copy; Python's setup() is never called).
3. Python's `PostgresSaver` reads both threads' state as SQLite gave it, resumes "a" to
   its end (the DeltaChannel rebuilt on Postgres from the copied rows).
4. `lgcodec store copy` copies the Postgres database back into a new SQLite file
   (including the checkpoints Python wrote on Postgres); Python's `SqliteSaver` reads
   "a" finished as on Postgres and resumes "b" through both interrupts to its end.
"""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "sqlite"))
from interop import build_graph  # noqa: E402  (the same real graph)

from langchain_core.messages import HumanMessage  # noqa: E402
from langgraph.checkpoint.postgres import PostgresSaver  # noqa: E402
from langgraph.checkpoint.sqlite import SqliteSaver  # noqa: E402
from langgraph.types import Command  # noqa: E402

WANT_LOG = ["plan", "w0", "w1", "w2", "gather", "review", "final"]


def cfg(thread: str) -> dict:
    return {"configurable": {"thread_id": thread}}


def copy(binary: str, source: str, target: str) -> None:
    out = subprocess.run([binary, "store", "copy", source, target, "--json"],
                         capture_output=True, text=True)
    if out.returncode != 0:
        sys.exit(f"FAIL: lgcodec store copy {source} -> target: exit {out.returncode}\n{out.stderr}")
    print("  " + out.stderr.strip().splitlines()[-1])


def snapshot(graph, thread: str):
    s = graph.get_state(cfg(thread))
    return (
        [m.content for m in s.values.get("messages", [])],
        s.values.get("log"),
        s.next,
        [i.value for t in s.tasks for i in t.interrupts],
        s.config["configurable"]["checkpoint_id"],
        len(list(graph.get_state_history(cfg(thread)))),
    )


def check_finished(out: dict, label: str) -> None:
    final = out["messages"][-1].content
    if not final.startswith("final: ok"):
        sys.exit(f"FAIL ({label}): the thread did not finish: {final!r}")
    log = out["log"]
    if sorted(log) != sorted(WANT_LOG) or log[0] != "plan" or log[-2:] != ["review", "final"]:
        sys.exit(f"FAIL ({label}): the delta channel rebuilt as {log}, want {WANT_LOG}")


def main() -> None:
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    binary, url = sys.argv[1], sys.argv[2]
    os.environ.pop("LANGGRAPH_AES_KEY", None)
    checks = 0
    with tempfile.TemporaryDirectory() as tmp:
        first = os.path.join(tmp, "first.sqlite")
        conn = sqlite3.connect(first, check_same_thread=False)
        graph = build_graph(SqliteSaver(conn))
        graph.invoke({"messages": [HumanMessage("hi", id="human-1")]}, cfg("a"))
        graph.invoke(Command(resume="yes"), cfg("a"))
        graph.invoke({"messages": [HumanMessage("hello", id="human-2")]}, cfg("b"))
        sqlite_view = {t: snapshot(graph, t) for t in ("a", "b")}
        conn.close()

        print("SQLite -> Postgres")
        copy(binary, first, url)
        with PostgresSaver.from_conn_string(url) as saver:
            pg_graph = build_graph(saver)
            for t in ("a", "b"):
                got = snapshot(pg_graph, t)
                if got != sqlite_view[t]:
                    sys.exit(f"FAIL: Postgres reads thread {t} as {got}, SQLite as {sqlite_view[t]}")
                checks += 1
            out = pg_graph.invoke(Command(resume="ok"), cfg("a"))
            check_finished(out, "Python resumes on Postgres")
            checks += 1
            pg_view_a = snapshot(pg_graph, "a")

        print("Postgres -> SQLite")
        back = os.path.join(tmp, "back.sqlite")
        copy(binary, url, back)
        conn = sqlite3.connect(back, check_same_thread=False)
        graph = build_graph(SqliteSaver(conn))
        if snapshot(graph, "a") != pg_view_a:
            sys.exit(f"FAIL: the copy back reads thread a as {snapshot(graph, 'a')}, Postgres as {pg_view_a}")
        checks += 1
        if snapshot(graph, "b") != sqlite_view["b"]:
            sys.exit("FAIL: the copy back changed thread b")
        checks += 1
        graph.invoke(Command(resume="yes"), cfg("b"))
        out = graph.invoke(Command(resume="ok"), cfg("b"))
        check_finished(out, "Python resumes on the copy back")
        checks += 1
        conn.close()
    print(f"{checks} passed, 0 failed")


if __name__ == "__main__":
    main()
