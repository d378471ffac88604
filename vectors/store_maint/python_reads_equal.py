"""Today's Python savers read the same checkpoints from every TARGET as from REFERENCE.

    python vectors/store_maint/python_reads_equal.py [--setup | --shallow] [--graph-view] [--aes] [--ignore=SUFFIX] REFERENCE TARGET...

REFERENCE and each TARGET is an SQLite file path or a postgres:// URL. Each is read
with today's Python saver (`SqliteSaver` / `PostgresSaver`, langgraph-checkpoint-sqlite
3.1.2 / -postgres 3.2.0): `list` of every thread (every namespace) and `get_tuple` of
every listed config, as vectors/stores/common.py `reads` does. With `--setup`, Python's
own `PostgresSaver.setup()` runs on REFERENCE first (its migrations: the way today's
Python makes an old Postgres store readable; give it a copy). TARGETs are read without
`setup()` on Postgres: what our copy or upgrade left must read as it is.

With `--shallow`, REFERENCE is a store of Python's `ShallowPostgresSaver` (one
checkpoint per thread and namespace) and is read with that saver (-postgres 3.2.0), not
`PostgresSaver` (which cannot read it). That saver adds `pending_sends` to every
checkpoint (the namespace's `__pregel_tasks` writes, whatever checkpoint they belong to);
LangGraph reads `pending_sends` only from checkpoints before `v` 4 (`Pregel.
_migrate_checkpoint`), and today's savers return none on later ones, so the key is left
out of the reference's `v` ≥ 4 checkpoints; everything else is compared as read.

With `--aes`, every store is read through `EncryptedSerializer.from_pycryptodome_aes()`
(the key from `LANGGRAPH_AES_KEY`; values in clear read as well), as a store written
with that serializer is read.

With `--graph-view`, every store's tuples are compared as a graph uses them: after
langgraph's own `Pregel._migrate_checkpoint` (a checkpoint before `v` 4 has its
`pending_sends` moved into the `__pregel_tasks` channel, as today's langgraph does on
every checkpoint it loads, and as Python's Postgres saver already returns them).

With `--ignore=SUFFIX`, differences at paths ending in SUFFIX do not fail the
comparison; they are listed in the JSON line (`ignored`: path, want, got).

Prints one JSON line (`threads`, `checkpoints`, `writes` read per store) and exits 0
when every TARGET reads equal to REFERENCE; exits 1 naming the first differences.
"""

from __future__ import annotations

import json
import os
import sqlite3
import sys
import warnings

warnings.filterwarnings("ignore")
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "stores"))
import common  # noqa: E402
from today import diff, short  # noqa: E402  (the comparison today.json is made with)


class GraphView:
    """A saver whose tuples come back as a graph uses them: each checkpoint through
    langgraph's `Pregel._migrate_checkpoint` (it only reads its argument)."""

    def __init__(self, saver):
        self.saver = saver

    @staticmethod
    def _migrated(t):
        if t is None:
            return t
        from langgraph.pregel.main import Pregel

        cp = dict(t.checkpoint)
        cp["channel_values"] = dict(cp["channel_values"])
        cp["channel_versions"] = dict(cp["channel_versions"])
        Pregel._migrate_checkpoint(None, cp)
        return t._replace(checkpoint=cp)

    def list(self, *args, **kwargs):
        return [self._migrated(t) for t in self.saver.list(*args, **kwargs)]

    def get_tuple(self, config):
        return self._migrated(self.saver.get_tuple(config))


class ShallowView:
    """The shallow saver's tuples without the `pending_sends` it adds to `v` >= 4
    checkpoints, which LangGraph never reads there (see the module docs)."""

    def __init__(self, saver):
        self.saver = saver

    @staticmethod
    def _trimmed(t):
        if t is None or t.checkpoint.get("v", 0) < 4 or "pending_sends" not in t.checkpoint:
            return t
        cp = {k: v for k, v in t.checkpoint.items() if k != "pending_sends"}
        return t._replace(checkpoint=cp)

    def list(self, *args, **kwargs):
        return [self._trimmed(t) for t in self.saver.list(*args, **kwargs)]

    def get_tuple(self, config):
        return self._trimmed(self.saver.get_tuple(config))


def serde(aes: bool):
    if not aes:
        return None
    from langgraph.checkpoint.serde.encrypted import EncryptedSerializer

    return EncryptedSerializer.from_pycryptodome_aes()


def read(store: str, setup: bool = False, graph_view: bool = False, shallow: bool = False,
         aes: bool = False) -> dict:
    view = GraphView if graph_view else (lambda saver: saver)
    if store.startswith(("postgres://", "postgresql://")):
        import psycopg
        from psycopg.rows import dict_row
        from langgraph.checkpoint.postgres import PostgresSaver
        from langgraph.checkpoint.postgres.shallow import ShallowPostgresSaver

        with psycopg.connect(store, autocommit=True, prepare_threshold=0, row_factory=dict_row) as conn:
            saver = (ShallowView(ShallowPostgresSaver(conn, serde=serde(aes))) if shallow
                     else PostgresSaver(conn, serde=serde(aes)))
            if setup:
                saver.setup()
            threads = [r["thread_id"] for r in conn.execute(
                "SELECT DISTINCT thread_id FROM checkpoints ORDER BY 1")]
            return common.reads(view(saver), threads)
    from langgraph.checkpoint.sqlite import SqliteSaver

    conn = sqlite3.connect(store, check_same_thread=False)
    try:
        threads = [r[0] for r in conn.execute("SELECT DISTINCT thread_id FROM checkpoints ORDER BY 1")]
        return common.reads(view(SqliteSaver(conn, serde=serde(aes))), threads)
    finally:
        conn.close()


def main() -> None:
    args = sys.argv[1:]
    flags = {a for a in args if a.startswith("--")}
    args = [a for a in args if not a.startswith("--")]
    setup, graph_view = "--setup" in flags, "--graph-view" in flags
    shallow, aes = "--shallow" in flags, "--aes" in flags
    ignore = [f.split("=", 1)[1] for f in flags if f.startswith("--ignore=")]
    if {f for f in flags if not f.startswith("--ignore=")} - {"--setup", "--graph-view", "--shallow", "--aes"}:
        sys.exit(__doc__)
    if setup and shallow:
        sys.exit("--setup and --shallow exclude each other: PostgresSaver.setup() does not make a shallow store readable")
    ignored = []
    if len(args) < 2:
        sys.exit(__doc__)
    want = read(args[0], setup=setup, graph_view=graph_view, shallow=shallow, aes=aes)
    checkpoints = sum(len(t["get_tuple"]) for t in want.values())
    writes = sum(len(x["$CheckpointTuple"]["pending_writes"]) for t in want.values() for x in t["get_tuple"])
    if checkpoints == 0:
        sys.exit(f"FAIL: the reference {args[0]} reads no checkpoint")
    failed = False
    for target in args[1:]:
        got = read(target, graph_view=graph_view, aes=aes)
        d = diff(want, got)
        ignored += [[p, x, y] for p, x, y in d if any(p.endswith(i) for i in ignore)]
        d = [(p, x, y) for p, x, y in d if not any(p.endswith(i) for i in ignore)]
        if d:
            failed = True
            print(f"FAIL: {target} reads {len(d)} difference(s) from the reference:", file=sys.stderr)
            for p, x, y in d[:8]:
                print(f"  {p}\n    want {short(x)}\n    got  {short(y)}", file=sys.stderr)
    print(json.dumps({"threads": len(want), "checkpoints": checkpoints, "writes": writes,
                      "targets": len(args) - 1, "equal": not failed,
                      **({"ignored": ignored} if ignore else {})}))
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
