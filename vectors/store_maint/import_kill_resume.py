"""`lgcodec store import` killed with SIGKILL mid-way, then run again: the store ends
exactly as an uninterrupted import leaves it (nothing lost, nothing twice).

    python vectors/store_maint/import_kill_resume.py LGCODEC_BINARY [ROUNDS] [POSTGRES_URL]

Python's SqliteSaver writes 10,000 checkpoints over 1,000 threads (two pending writes
each); `lgcodec store export` makes a backup of it. The backup is imported into a fresh
SQLite file without interruption: the reference. In each round a fresh file gets the
import, killed after a random delay (import goes table by table, so how far it got is
counted in rows of every table), then the same import again to completion; the file
must then hold exactly the reference's rows, byte for byte. With POSTGRES_URL (a server
where databases may be created and dropped), the same rounds run against a Postgres
backup (the store copied there with `lgcodec store copy`, exported), each round into a
fresh database, every table compared. At least one kill per backend must land mid-way
(some rows imported, not all), or the check fails and asks for a larger store.
"""

from __future__ import annotations

import os
import random
import signal
import sqlite3
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(__file__))
from make_store import make_store  # noqa: E402

TOTAL, THREADS = 10000, 1000


def run(binary: str, *args: str) -> None:
    done = subprocess.run([binary, "store", *args], capture_output=True, text=True)
    if done.returncode != 0:
        sys.exit(f"FAIL: lgcodec store {' '.join(args)}: exit {done.returncode}: {done.stderr}")


def importing(binary: str, backup: str, target: str) -> subprocess.Popen:
    return subprocess.Popen([binary, "store", "import", backup, target],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def sqlite_rows(path: str) -> tuple:
    if not os.path.exists(path):
        return ([], [])
    c = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        return (
            c.execute("SELECT * FROM checkpoints ORDER BY thread_id, checkpoint_ns, checkpoint_id").fetchall(),
            c.execute("SELECT * FROM writes ORDER BY thread_id, checkpoint_ns, checkpoint_id, task_id, idx").fetchall(),
        )
    except sqlite3.OperationalError:  # killed before the tables were made
        return ([], [])
    finally:
        c.close()


class Postgres:
    def __init__(self, url: str) -> None:
        import psycopg

        self.psycopg = psycopg
        self.admin = url
        self.base = url.rsplit("/", 1)[0]

    def fresh(self, name: str) -> str:
        with self.psycopg.connect(self.admin, autocommit=True) as c:
            c.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
            c.execute(f'CREATE DATABASE "{name}"')
        return f"{self.base}/{name}"

    def rows(self, url: str) -> tuple:
        with self.psycopg.connect(url) as c:
            try:
                return tuple(
                    c.execute(f"SELECT * FROM {t} ORDER BY {o}").fetchall()
                    for t, o in [
                        ("checkpoints", "thread_id, checkpoint_ns, checkpoint_id"),
                        ("checkpoint_blobs", "thread_id, checkpoint_ns, channel, version"),
                        ("checkpoint_writes", "thread_id, checkpoint_ns, checkpoint_id, task_id, idx"),
                    ]
                )
            except self.psycopg.errors.UndefinedTable:  # killed before the tables were made
                return ([], [], [])


def rounds_on(name: str, binary: str, backup: str, rounds: int, rng: random.Random,
              fresh_target, rows_of) -> None:
    reference = fresh_target("reference")
    started = time.time()
    run(binary, "import", backup, reference)
    took = time.time() - started
    want = rows_of(reference)
    if len(want[0]) != TOTAL:
        sys.exit(f"FAIL: {name}: the reference holds {len(want[0])} checkpoints, want {TOTAL}")
    # Import goes table by table: how far it got is the rows of every table.
    all_rows = sum(len(t) for t in want)
    mid_way = 0
    for r in range(rounds):
        target = fresh_target(f"victim_{r}")
        proc = importing(binary, backup, target)
        time.sleep(rng.uniform(0.1, 0.9) * took)
        finished = proc.poll() is not None
        if not finished:
            os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
        at_kill = sum(len(t) for t in rows_of(target))
        landed = not finished and 0 < at_kill < all_rows
        mid_way += landed
        run(binary, "import", backup, target)
        if rows_of(target) != want:
            sys.exit(f"FAIL: {name}: round {r}: after a kill at {at_kill} rows and a rerun, "
                     "the rows differ from the uninterrupted import")
        print(f"  {name} round {r}: killed with {at_kill} of {all_rows} rows imported"
              f"{' (mid-way)' if landed else ' (not mid-way)'}; rerun: rows equal the reference")
    if mid_way == 0:
        sys.exit(f"FAIL: {name}: no kill landed mid-way; raise the store's size")
    print(f"import kill and resume, {name}: {mid_way} of {rounds} kills mid-way, every store "
          "equal to an uninterrupted import")


def main() -> None:
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    binary = sys.argv[1]
    rounds = int(sys.argv[2]) if len(sys.argv) > 2 else 4
    rng = random.Random(int(os.environ.get("IMPORT_KILL_SEED", "11")))
    with tempfile.TemporaryDirectory() as tmp:
        source = os.path.join(tmp, "source.sqlite")
        make_store(source, TOTAL, THREADS)
        backup = os.path.join(tmp, "backup.jsonl")
        run(binary, "export", source, backup)
        rounds_on("sqlite", binary, backup, rounds, rng,
                  lambda n: os.path.join(tmp, f"{n}.sqlite"), sqlite_rows)
        if len(sys.argv) > 3:
            pg = Postgres(sys.argv[3])
            pg_source = pg.fresh("ik_source")
            run(binary, "copy", source, pg_source)
            pg_backup = os.path.join(tmp, "pg-backup.jsonl")
            run(binary, "export", pg_source, pg_backup)
            rounds_on("postgres", binary, pg_backup, rounds, rng,
                      lambda n: pg.fresh(f"ik_{n}"), pg.rows)


if __name__ == "__main__":
    main()
