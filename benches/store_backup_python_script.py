"""The script a user would write today to back up a LangGraph checkpoint store to a file
and restore it, with Python's own savers (langgraph-checkpoint-sqlite 3.1.2, -postgres
3.2.0): the baseline `lgcodec store export` / `lgcodec store import` are measured against
(benches/README.md, "Store commands beside a Python script").

    python benches/store_backup_python_script.py export STORE FILE
    python benches/store_backup_python_script.py import FILE STORE

STORE: `sqlite:PATH`, a bare path, or a `postgres://` / `postgresql://` URL (opened as
benches/store_copy_python_script.py opens it; an import target gets Python's tables from
the saver's `setup()`).

`export` writes one JSON line per checkpoint: per thread (thread ids from `SELECT
DISTINCT thread_id`), every checkpoint from the saver's `list`, oldest first, with its
namespace, parent id, the checkpoint and its metadata as the saver's serializer's
`dumps_typed` pairs (type and base64 bytes), and its pending writes, each value a
`dumps_typed` pair. `import` reads the file a line at a time and `put`s each checkpoint
with its parent and `new_versions` = its channel versions (the Postgres saver writes a
blob for every channel), then its writes with `put_writes`, one call per task: what
benches/store_copy_python_script.py does, with the file in between. Each prints one JSON
object: checkpoints, writes, seconds, checkpoints_per_s.

What it cannot do, and `lgcodec store export`/`import` do: the file holds decoded and
encoded again values (a class the script cannot import comes back a dict), not the
stored rows; writes lose their task path and `idx` (as in the copy script); a restore
overwrites what the target holds (`INSERT OR REPLACE` / upserts) instead of reporting
conflicts; nothing checks that the file is whole. Each `list` holds one whole thread's
tuples in memory.
"""

from __future__ import annotations

import base64
import json
import logging
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from store_copy_python_script import report, saver, thread_ids  # noqa: E402


def pair(serde, value) -> list[str]:
    tag, data = serde.dumps_typed(value)
    return [tag, base64.b64encode(data).decode("ascii")]


def unpair(serde, p: list[str]):
    return serde.loads_typed((p[0], base64.b64decode(p[1])))


def export(store: str, path: str) -> tuple[int, int]:
    checkpoints = writes = 0
    with saver(store) as src, open(path, "w", encoding="utf-8") as out:
        serde = src.serde
        for thread in thread_ids(src, store):
            history = list(src.list({"configurable": {"thread_id": thread}}))
            for tup in reversed(history):  # oldest first: parents before children
                conf = tup.config["configurable"]
                parent = tup.parent_config["configurable"]["checkpoint_id"] if tup.parent_config else None
                line = {
                    "thread_id": thread,
                    "checkpoint_ns": conf["checkpoint_ns"],
                    "parent_checkpoint_id": parent,
                    "checkpoint": pair(serde, tup.checkpoint),
                    "metadata": pair(serde, tup.metadata),
                    "writes": [[task, ch, pair(serde, v)] for task, ch, v in tup.pending_writes or []],
                }
                out.write(json.dumps(line) + "\n")
                checkpoints += 1
                writes += len(line["writes"])
    return checkpoints, writes


def restore(path: str, store: str) -> tuple[int, int]:
    checkpoints = writes = 0
    with saver(store) as dst, open(path, encoding="utf-8") as lines:
        serde = dst.serde
        for raw in lines:
            row = json.loads(raw)
            config = {"configurable": {"thread_id": row["thread_id"], "checkpoint_ns": row["checkpoint_ns"]}}
            if row["parent_checkpoint_id"] is not None:
                config["configurable"]["checkpoint_id"] = row["parent_checkpoint_id"]
            checkpoint = unpair(serde, row["checkpoint"])
            saved = dst.put(config, checkpoint, unpair(serde, row["metadata"]), checkpoint["channel_versions"])
            by_task: dict[str, list] = {}
            for task_id, channel, value in row["writes"]:
                by_task.setdefault(task_id, []).append((channel, unpair(serde, value)))
            for task_id, ws in by_task.items():
                dst.put_writes(saved, ws, task_id, "")
                writes += len(ws)
            checkpoints += 1
    return checkpoints, writes


def main() -> int:
    if len(sys.argv) != 4 or sys.argv[1] not in ("export", "import"):
        sys.exit(__doc__)
    # Python warns for every msgpack type not on its allowlist; a user silences it.
    logging.getLogger("langgraph").setLevel(logging.ERROR)
    t0 = time.perf_counter()
    if sys.argv[1] == "export":
        checkpoints, writes = export(sys.argv[2], sys.argv[3])
    else:
        checkpoints, writes = restore(sys.argv[2], sys.argv[3])
    report("benches/store_backup_python_script.py", {"command": sys.argv[1]}, checkpoints, writes, t0)
    return 0


if __name__ == "__main__":
    sys.exit(main())
