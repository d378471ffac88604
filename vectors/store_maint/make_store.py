"""Writes a store with Python's SqliteSaver: CHECKPOINTS checkpoints over THREADS threads,
each with a message list of up to 19 strings and two pending writes.

    python vectors/store_maint/make_store.py PATH CHECKPOINTS [THREADS]
"""

from __future__ import annotations

import sqlite3
import sys
import time

from langgraph.checkpoint.base import empty_checkpoint
from langgraph.checkpoint.sqlite import SqliteSaver


def make_store(path: str, total: int, threads: int = 30) -> None:
    conn = sqlite3.connect(path, check_same_thread=False)
    saver = SqliteSaver(conn)
    saver.setup()
    conn.execute("PRAGMA synchronous=OFF")  # a fixture: speed over durability
    started = time.time()
    for t in range(threads):
        config = {"configurable": {"thread_id": f"t{t}", "checkpoint_ns": ""}}
        for i in range(total // threads):
            cp = empty_checkpoint()
            cp["channel_values"] = {"messages": [f"m{j}" * 20 for j in range(i % 20)], "step": i}
            cp["channel_versions"] = {"messages": str(i + 1), "step": str(i + 1)}
            config = saver.put(config, cp, {"source": "loop", "step": i, "parents": {}},
                               cp["channel_versions"])
            saver.put_writes(config, [("messages", ["w"]), ("step", i)], f"task-{i}", "~")
    conn.close()
    print(f"  Python wrote {total} checkpoints in {time.time() - started:.1f} s")


if __name__ == "__main__":
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    make_store(sys.argv[1], int(sys.argv[2]), int(sys.argv[3]) if len(sys.argv) > 3 else 30)
