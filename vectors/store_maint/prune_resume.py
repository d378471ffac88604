"""`lgcodec store prune --keep-latest 1` on a real graph's store with a DeltaChannel (SQLite,
and the same threads copied into Postgres), then Python resumes every kept thread.

    python vectors/store_maint/prune_resume.py LGCODEC_BINARY POSTGRES_URL

The graph is vectors/sqlite/interop.py's (messages, Send, subgraph, a DeltaChannel
`log` with snapshot_frequency=3, two interrupts). Thread "a" stops at its second
interrupt, "b" at its first. After the prune, the DeltaChannel must rebuild to the
value from first principles (the nodes in the order they ran) when Python resumes.
"""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "sqlite"))
from interop import build_graph  # noqa: E402

from langchain_core.messages import HumanMessage  # noqa: E402
from langgraph.checkpoint.postgres import PostgresSaver  # noqa: E402
from langgraph.checkpoint.sqlite import SqliteSaver  # noqa: E402
from langgraph.types import Command  # noqa: E402

WANT_LOG = ["plan", "w0", "w1", "w2", "gather", "review", "final"]


def cfg(thread: str) -> dict:
    return {"configurable": {"thread_id": thread}}


def lgcodec(binary: str, *args: str) -> dict:
    out = subprocess.run([binary, "store", *args, "--json"], capture_output=True, text=True)
    if out.returncode != 0:
        sys.exit(f"FAIL: lgcodec store {args}: exit {out.returncode}\n{out.stderr}")
    print("  " + out.stderr.strip().splitlines()[-1])
    return json.loads(out.stdout)


def finish(graph, label: str) -> int:
    checks = 0
    for thread, resumes in (("a", ["ok"]), ("b", ["yes", "ok"])):
        state = graph.get_state(cfg(thread))
        if not state.next:
            sys.exit(f"FAIL ({label}): thread {thread} has nothing to resume after the prune")
        for answer in resumes:
            out = graph.invoke(Command(resume=answer), cfg(thread))
        final = out["messages"][-1].content
        if not final.startswith("final: ok"):
            sys.exit(f"FAIL ({label}): thread {thread} did not finish: {final!r}")
        log = out["log"]
        if sorted(log) != sorted(WANT_LOG) or log[0] != "plan" or log[-2:] != ["review", "final"]:
            sys.exit(f"FAIL ({label}): thread {thread}'s DeltaChannel rebuilt as {log}, want {WANT_LOG}")
        checks += 1
    return checks


def main() -> None:
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    binary, url = sys.argv[1], sys.argv[2]
    os.environ.pop("LANGGRAPH_AES_KEY", None)
    checks = 0
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "store.sqlite")
        conn = sqlite3.connect(path, check_same_thread=False)
        graph = build_graph(SqliteSaver(conn))
        graph.invoke({"messages": [HumanMessage("hi", id="human-1")]}, cfg("a"))
        graph.invoke(Command(resume="yes"), cfg("a"))
        graph.invoke({"messages": [HumanMessage("hi", id="human-1")]}, cfg("b"))
        before = {t: graph.get_state(cfg(t)).values for t in ("a", "b")}
        conn.close()
        lgcodec(binary, "copy", path, url)

        print("SQLite")
        report = lgcodec(binary, "prune", path, "--keep-latest", "1", "--vacuum")
        if report["checkpoints_deleted"] == 0 or report["kept_for_delta"] == 0:
            sys.exit(f"FAIL: the prune did not exercise the delta chain: {report}")
        conn = sqlite3.connect(path, check_same_thread=False)
        graph = build_graph(SqliteSaver(conn))
        for t in ("a", "b"):
            if graph.get_state(cfg(t)).values != before[t]:
                sys.exit(f"FAIL: thread {t}'s state changed with the prune")
        checks += 1
        checks += finish(graph, "SQLite")
        conn.close()

        print("Postgres")
        report = lgcodec(binary, "prune", url, "--keep-latest", "1")
        if report["checkpoints_deleted"] == 0 or report["blobs_deleted"] == 0:
            sys.exit(f"FAIL: the prune did not drop checkpoints and blobs: {report}")
        with PostgresSaver.from_conn_string(url) as saver:
            graph = build_graph(saver)
            for t in ("a", "b"):
                if graph.get_state(cfg(t)).values != before[t]:
                    sys.exit(f"FAIL: thread {t}'s state changed with the prune (Postgres)")
            checks += 1
            checks += finish(graph, "Postgres")
    print(f"{checks} passed, 0 failed")


if __name__ == "__main__":
    main()
