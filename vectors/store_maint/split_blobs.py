"""What Python's Postgres saver stores for each checkpoint of an SQLite store, checked
against a Postgres store the checkpoints were copied into.

    python vectors/store_maint/split_blobs.py make STORE.sqlite
    python vectors/store_maint/split_blobs.py check STORE.sqlite POSTGRES_URL
    python vectors/store_maint/split_blobs.py check-back POSTGRES_URL TARGET.sqlite

`make` writes, with today's Python `SqliteSaver`, a store of 3 threads of 4
checkpoints whose channels hold every kind of value Python's `PostgresSaver.put` sorts:
`None`, `str`, `int`, `float` and `bool` (kept inline in the checkpoint's JSONB), and
`bytes`, a list of messages, a dict and a `datetime` (each stored as a blob, `bytes`
under its own type tag), with pending writes.

`check` reads every checkpoint of the SQLite store with Python's `SqliteSaver` and, for
each channel value, what `PostgresSaver.put` stores for it: an inline value must be
in the target checkpoint's `channel_values` JSONB, equal; any other value's blob row at
(thread, ns, channel, its version) must hold `serde.dumps_typed(value)`, type and bytes.
Prints one JSON line with the counts; exits 1 naming the first difference.

`check-back` reads every checkpoint of the Postgres store with Python's
`PostgresSaver` and the same checkpoint's row in a SQLite store it was copied into:
the row must be a `msgpack` pair whose channel values `loads_typed` reads as the
Postgres reader's, each equal and of the same type, and re-encoding what it read
(`dumps_typed`) must give the row's bytes: the row is what Python's serializer
writes. Prints the counts as one JSON line; exits 1 naming the first difference.
"""

import datetime
import json
import sqlite3
import sys
import warnings

warnings.filterwarnings("ignore")

from langgraph.checkpoint.serde.jsonplus import JsonPlusSerializer  # noqa: E402

INLINE = (str, int, float, bool)


def make(path: str) -> None:
    from langchain_core.messages import AIMessage, HumanMessage
    from langgraph.checkpoint.base import empty_checkpoint
    from langgraph.checkpoint.sqlite import SqliteSaver

    with SqliteSaver.from_conn_string(path) as saver:
        for t in range(3):
            config = {"configurable": {"thread_id": f"split-{t}", "checkpoint_ns": ""}}
            for step in range(4):
                cp = empty_checkpoint()
                cp["channel_values"] = {
                    "raw": bytes([0, 1, 2, step]) + b"bytes",
                    "text": f"step {step}",
                    "steps": step,
                    "ratio": step / 4,
                    "flag": step % 2 == 0,
                    "nothing": None,
                    "messages": [HumanMessage(f"hi {step}"), AIMessage(f"yo {t}")],
                    "doc": {"a": [1, 2, {"b": None}], "step": step},
                    "when": datetime.datetime(2026, 11, 29, 12, step, tzinfo=datetime.timezone.utc),
                }
                version = f"{step + 1:032}.0.{t}"
                cp["channel_versions"] = {k: version for k in cp["channel_values"]}
                config = saver.put(
                    config, cp, {"source": "loop", "step": step}, cp["channel_versions"]
                )
                saver.put_writes(
                    config, [("messages", AIMessage(f"w {step}")), ("raw", b"w")], f"task-{step}"
                )


def check(path: str, url: str) -> None:
    import psycopg
    from langgraph.checkpoint.sqlite import SqliteSaver

    serde = JsonPlusSerializer()
    checked = blobs = inline = 0
    with SqliteSaver.from_conn_string(path) as src, psycopg.connect(url) as pg:
        threads = [r[0] for r in sqlite3.connect(path).execute("SELECT DISTINCT thread_id FROM checkpoints")]
        for thread in threads:
            for tup in src.list({"configurable": {"thread_id": thread}}):
                cfg = tup.config["configurable"]
                ns, cid = cfg.get("checkpoint_ns", ""), cfg["checkpoint_id"]
                row = pg.execute(
                    "SELECT checkpoint FROM checkpoints WHERE thread_id = %s AND checkpoint_ns = %s AND checkpoint_id = %s",
                    (thread, ns, cid),
                ).fetchone()
                at = f"{thread}/{ns!r}/{cid}"
                if row is None:
                    sys.exit(f"{at}: not in the target")
                stored_values = row[0].get("channel_values", {})
                for ch, value in tup.checkpoint["channel_values"].items():
                    if value is None or isinstance(value, INLINE):
                        if ch not in stored_values or stored_values[ch] != value:
                            sys.exit(f"{at}: inline {ch} = {stored_values.get(ch)!r}, Python's put keeps {value!r}")
                        inline += 1
                        continue
                    version = str(tup.checkpoint["channel_versions"][ch])
                    blob = pg.execute(
                        "SELECT type, blob FROM checkpoint_blobs WHERE thread_id = %s AND checkpoint_ns = %s AND channel = %s AND version = %s",
                        (thread, ns, ch, version),
                    ).fetchone()
                    want = serde.dumps_typed(value)
                    if blob is None or (blob[0], bytes(blob[1])) != (want[0], want[1]):
                        sys.exit(f"{at}: blob {ch}@{version} = {blob!r}, Python's put stores {want!r}")
                    if ch in stored_values:
                        sys.exit(f"{at}: {ch} is a blob and inline too")
                    blobs += 1
                checked += 1
    print(json.dumps({"checkpoints": checked, "blobs": blobs, "inline": inline}))


def check_back(url: str, path: str) -> None:
    from langgraph.checkpoint.postgres import PostgresSaver

    serde = JsonPlusSerializer()
    checked = values = 0
    db = sqlite3.connect(path)
    with PostgresSaver.from_conn_string(url) as src:
        threads = sorted({t.config["configurable"]["thread_id"] for t in src.list(None)})
        for thread in threads:
            for tup in src.list({"configurable": {"thread_id": thread}}):
                cfg = tup.config["configurable"]
                ns, cid = cfg.get("checkpoint_ns", ""), cfg["checkpoint_id"]
                at = f"{thread}/{ns!r}/{cid}"
                row = db.execute(
                    "SELECT type, checkpoint FROM checkpoints WHERE thread_id = ? AND checkpoint_ns = ? AND checkpoint_id = ?",
                    (thread, ns, cid),
                ).fetchone()
                if row is None:
                    sys.exit(f"{at}: not in the target")
                if row[0] != "msgpack":
                    sys.exit(f"{at}: a {row[0]!r} row, Python's SqliteSaver writes msgpack")
                read = serde.loads_typed((row[0], row[1]))
                want = tup.checkpoint["channel_values"]
                got = read.get("channel_values", {})
                if set(got) != set(want):
                    sys.exit(f"{at}: channels {sorted(got)}, the Postgres reader reads {sorted(want)}")
                for ch, value in want.items():
                    if type(got.get(ch)) is not type(value) or got.get(ch) != value:
                        sys.exit(f"{at}: {ch} = {got.get(ch)!r}, the Postgres reader reads {value!r}")
                    values += 1
                again = serde.dumps_typed(read)
                if again != (row[0], bytes(row[1])):
                    sys.exit(f"{at}: the row is not what Python's serializer writes of what it holds")
                checked += 1
    print(json.dumps({"checkpoints": checked, "values": values}))


def main() -> None:
    if len(sys.argv) == 3 and sys.argv[1] == "make":
        make(sys.argv[2])
    elif len(sys.argv) == 4 and sys.argv[1] == "check":
        check(sys.argv[2], sys.argv[3])
    elif len(sys.argv) == 4 and sys.argv[1] == "check-back":
        check_back(sys.argv[2], sys.argv[3])
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main()
