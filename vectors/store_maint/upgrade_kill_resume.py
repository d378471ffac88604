"""`lgcodec store upgrade` killed with SIGKILL mid-way, then run again: the store ends
exactly as an uninterrupted upgrade leaves it.

    python vectors/store_maint/upgrade_kill_resume.py LGCODEC_BINARY POSTGRES_URL [ROUNDS]

The store: Python's SqliteSaver writes 30,000 checkpoints over 3,000 threads, copied
into Postgres with `lgcodec store copy`, then taken back to the layout
`langgraph-checkpoint-postgres` 2.0.x left (migrations 0..5: no `thread_id` indexes,
no `checkpoint_writes.task_path`). Upgrading it runs Python 3.2.0's migrations 6-9: three
`CREATE INDEX CONCURRENTLY` (each outside a transaction, then recorded) and the column.
One copy is upgraded without interruption: the reference. In each round a fresh copy
(`CREATE DATABASE … TEMPLATE`) is upgraded, killed after a random delay, upgraded again
to completion, and must then equal the reference: every row of every table, the
recorded migrations, the columns, and the indexes with their validity (a kill inside
`CREATE INDEX CONCURRENTLY` leaves an invalid index that `IF NOT EXISTS` would keep:
the victims' server aborts a statement whose client is gone, as after a lost
connection, with `client_connection_check_interval`);
Python's PostgresSaver reads a sample of threads as from the reference. At least one
kill must land mid-way (some of the four steps done, not all).

SQLite has one step (`ALTER TABLE writes ADD COLUMN task_path`, one transaction that
SQLite does without rewriting the table): there is no mid-way to kill it at, so the
rounds run on Postgres.
"""

from __future__ import annotations

import os
import random
import sys
import tempfile

sys.path.insert(0, os.path.dirname(__file__))
from kill_rounds import Postgres, fail, kill_rounds, pg_python_reads, run  # noqa: E402
from make_store import make_store  # noqa: E402

TOTAL, THREADS = 30000, 3000
INDEXES = ["checkpoints_thread_id_idx", "checkpoint_blobs_thread_id_idx",
           "checkpoint_writes_thread_id_idx"]


def schema(pg: Postgres, url: str) -> tuple:
    """The recorded migrations, the writes table's columns, the saver's indexes and
    whether each is valid."""
    with pg.psycopg.connect(url) as c:
        migrations = [r[0] for r in c.execute("SELECT v FROM checkpoint_migrations ORDER BY v")]
        columns = [r[0] for r in c.execute(
            "SELECT column_name FROM information_schema.columns "
            "WHERE table_schema = current_schema() AND table_name = 'checkpoint_writes' "
            "ORDER BY ordinal_position")]
        indexes = c.execute(
            "SELECT x.relname, i.indisvalid FROM pg_index i JOIN pg_class x ON x.oid = i.indexrelid "
            "JOIN pg_namespace n ON n.oid = x.relnamespace "
            "WHERE n.nspname = current_schema() AND x.relname LIKE '%thread_id_idx' ORDER BY 1"
        ).fetchall()
    return migrations, columns, indexes


def steps_done(pg: Postgres, url: str) -> int:
    """Of the upgrade's four steps, how many left a trace (an index, valid or not; the
    column)."""
    migrations, columns, indexes = schema(pg, url)
    return len(indexes) + ("task_path" in columns)


def main() -> None:
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    binary, url = sys.argv[1], sys.argv[2]
    rounds = int(sys.argv[3]) if len(sys.argv) > 3 else 6
    rng = random.Random(int(os.environ.get("UPGRADE_KILL_SEED", "5")))
    pg = Postgres(url)
    with tempfile.TemporaryDirectory() as tmp:
        sqlite_source = os.path.join(tmp, "source.sqlite")
        make_store(sqlite_source, TOTAL, THREADS)
        source = pg.fresh("uk_source")
        run([binary, "store", "copy", sqlite_source, source])
    with pg.psycopg.connect(source, autocommit=True) as c:
        for index in INDEXES:
            c.execute(f"DROP INDEX {index}")
        c.execute("ALTER TABLE checkpoint_writes DROP COLUMN task_path")
        c.execute("DELETE FROM checkpoint_migrations WHERE v > 5")
        c.execute("VACUUM ANALYZE")
    old = schema(pg, source)
    if old[0] != list(range(6)) or old[2]:
        fail(f"the source is not at migration 5 without indexes: {old}")

    def upgrade(target: str) -> list[str]:
        return [binary, "store", "upgrade", target]

    reference = pg.fresh("uk_reference", source)
    took = run(upgrade(reference))
    want = (pg.rows(reference), schema(pg, reference))
    if want[1][0] != list(range(10)) or [v for _, v in want[1][2]] != [True] * 3:
        fail(f"the uninterrupted upgrade left {want[1]}")
    want_reads = pg_python_reads(reference, THREADS)

    def same_reads(r: int, victim: str) -> None:
        if pg_python_reads(victim, THREADS) != want_reads:
            fail(f"round {r}: Python reads other values than from the reference")

    def victim(r: int) -> str:
        # A server that looks for a client gone mid-statement (PG 14+) aborts the
        # statement of a killed upgrade, as a lost connection or a restart does: a
        # `CREATE INDEX CONCURRENTLY` aborted that way leaves its index invalid.
        url = pg.fresh(f"uk_victim_{r}", source)
        with pg.psycopg.connect(pg.admin, autocommit=True) as c:
            c.execute(f'ALTER DATABASE "uk_victim_{r}" SET client_connection_check_interval = 5')
        return url

    kill_rounds("postgres", "upgrade", rounds, rng, command=upgrade, make_victim=victim,
                state_of=lambda v: (pg.rows(v), schema(pg, v)), want=want, took=took,
                progress_of=lambda v: steps_done(pg, v), mid_way=lambda n: 0 < n < 4,
                check=same_reads)


if __name__ == "__main__":
    main()
