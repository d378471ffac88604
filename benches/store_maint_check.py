"""Checks a store the store-maintenance bench wrote, with Python's own savers.

    python benches/store_maint_check.py copy SOURCE TARGET
    python benches/store_maint_check.py prune STORE SOURCE
    python benches/store_maint_check.py same STORE_A STORE_B

copy: the target holds as many checkpoints and writes as the source, and for a sample
of threads (first, middle, last, and every 97th) Python's saver lists the same history
from both (checkpoint values, metadata, parent, pending writes).
prune: one checkpoint per namespace of each of SOURCE's threads (a subgraph's namespace
too) is left, with its two writes, and Python's saver reads the latest checkpoint of
every sampled thread.
same: two stores of one backend hold the same rows by key (checkpoints with their
parent id, writes, and Postgres blobs: thread, namespace, id / channel and version),
e.g. after two tools applied one retention rule to copies of a store.
Exits 1 with the reason on the first difference.
"""

from __future__ import annotations

import logging
import sys

sys.path.insert(0, __import__("os").path.dirname(__file__))
from store_copy_python_script import saver, thread_ids  # noqa: E402


def counts(s, store: str) -> tuple[int, int]:
    if store.startswith(("postgres://", "postgresql://")):
        with s._cursor() as cur:
            cur.execute("SELECT (SELECT count(*) FROM checkpoints) AS a, (SELECT count(*) FROM checkpoint_writes) AS b")
            r = cur.fetchone()
            return r["a"], r["b"]
    return tuple(s.conn.execute("SELECT (SELECT count(*) FROM checkpoints), (SELECT count(*) FROM writes)").fetchone())


def namespaces(s, store: str) -> int:
    """The (thread, namespace) pairs holding checkpoints."""
    sql = "SELECT count(*) AS n FROM (SELECT DISTINCT thread_id, checkpoint_ns FROM checkpoints) AS ns"
    if store.startswith(("postgres://", "postgresql://")):
        with s._cursor() as cur:
            cur.execute(sql)
            return cur.fetchone()["n"]
    return s.conn.execute(sql).fetchone()[0]


KEYS = {
    "checkpoints": "thread_id, checkpoint_ns, checkpoint_id, parent_checkpoint_id",
    "writes": "thread_id, checkpoint_ns, checkpoint_id, task_id, idx",
    "checkpoint_writes": "thread_id, checkpoint_ns, checkpoint_id, task_id, idx",
    "checkpoint_blobs": "thread_id, checkpoint_ns, channel, version",
}


def keys(s, store: str) -> dict[str, set]:
    pg = store.startswith(("postgres://", "postgresql://"))
    tables = ["checkpoints", "checkpoint_writes", "checkpoint_blobs"] if pg else ["checkpoints", "writes"]
    out = {}
    for t in tables:
        sql = f"SELECT {KEYS[t]} FROM {t}"
        if pg:
            with s._cursor() as cur:
                cur.execute(sql)
                out[t] = {tuple(str(v) for v in r.values()) for r in cur.fetchall()}
        else:
            out[t] = {tuple(str(v) for v in r) for r in s.conn.execute(sql).fetchall()}
    return out


def sample(threads: list[str]) -> list[str]:
    picked = {0, len(threads) // 2, len(threads) - 1} | set(range(0, len(threads), 97))
    return [threads[i] for i in sorted(picked) if 0 <= i < len(threads)]


def main() -> int:
    logging.getLogger("langgraph").setLevel(logging.ERROR)
    mode = sys.argv[1] if len(sys.argv) > 1 else ""
    if mode == "copy" and len(sys.argv) == 4:
        with saver(sys.argv[2]) as a, saver(sys.argv[3]) as b:
            ca, cb = counts(a, sys.argv[2]), counts(b, sys.argv[3])
            if ca != cb:
                sys.exit(f"FAIL: source holds {ca} checkpoints/writes, target {cb}")
            threads = sample(thread_ids(a, sys.argv[2]))
            for t in threads:
                config = {"configurable": {"thread_id": t}}
                x, y = list(a.list(config)), list(b.list(config))
                if len(x) != len(y):
                    sys.exit(f"FAIL: thread {t}: {len(x)} checkpoints in the source, {len(y)} in the target")
                for p, q in zip(x, y):
                    if (p.checkpoint["channel_values"] != q.checkpoint["channel_values"]
                            or p.metadata != q.metadata or p.pending_writes != q.pending_writes
                            or p.parent_config != q.parent_config):
                        sys.exit(f"FAIL: thread {t} checkpoint {p.config} differs in the target")
        print(f"ok: {ca[0]} checkpoints, {ca[1]} writes; {len(threads)} threads read equal by Python")
        return 0
    if mode == "prune" and len(sys.argv) == 4:
        with saver(sys.argv[3]) as src:
            want = namespaces(src, sys.argv[3])
        with saver(sys.argv[2]) as s:
            c = counts(s, sys.argv[2])
            if c != (want, 2 * want):
                sys.exit(f"FAIL: {c} checkpoints/writes left, want {(want, 2 * want)}")
            threads = sample(thread_ids(s, sys.argv[2]))
            for t in threads:
                tup = s.get_tuple({"configurable": {"thread_id": t}})
                if tup is None or len(tup.pending_writes) != 2 or not tup.checkpoint["channel_values"].get("messages"):
                    sys.exit(f"FAIL: thread {t} does not read back after the prune: {tup}")
        print(f"ok: {c[0]} checkpoints, {c[1]} writes left; {len(threads)} threads read by Python")
        return 0
    if mode == "same" and len(sys.argv) == 4:
        with saver(sys.argv[2]) as a, saver(sys.argv[3]) as b:
            ka, kb = keys(a, sys.argv[2]), keys(b, sys.argv[3])
            for table in ka:
                if ka[table] != kb[table]:
                    only_a, only_b = sorted(ka[table] - kb[table]), sorted(kb[table] - ka[table])
                    sys.exit(
                        f"FAIL: {table}: {len(only_a)} rows only in the first store (e.g. {only_a[:3]}), "
                        f"{len(only_b)} only in the second (e.g. {only_b[:3]})"
                    )
        threads = len({k[0] for k in ka["checkpoints"]})
        print(f"ok: the same {threads} threads, " + ", ".join(f"{len(v)} {t}" for t, v in ka.items()))
        return 0
    sys.exit(__doc__)


if __name__ == "__main__":
    sys.exit(main())
