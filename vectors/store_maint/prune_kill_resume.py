"""`lgcodec store prune` killed with SIGKILL mid-way, then run again: the store ends
exactly as an uninterrupted prune leaves it (nothing kept twice, nothing lost).

    python vectors/store_maint/prune_kill_resume.py LGCODEC_BINARY [ROUNDS] [POSTGRES_URL]

Python's SqliteSaver writes 10,000 checkpoints over 1,000 threads (two pending writes each):
the prune deletes them in pages of at most 1,000 checkpoints, each page one transaction.
One copy is pruned to `--keep-latest 2` without interruption: the reference. In each
round a fresh copy is pruned, killed after a random delay, pruned again to completion,
and then must hold exactly the reference's rows, byte for byte, and read the same
through Python's SqliteSaver. At least one kill must land mid-way (some threads pruned,
some not), or the check fails and asks for a larger store.

With POSTGRES_URL (a server where databases may be created and dropped), the same
rounds run on Postgres too: the store is copied there with `lgcodec store copy`, each
victim is a fresh `CREATE DATABASE … TEMPLATE` of it, and every table (blobs included)
must equal the uninterrupted prune's, read through Python's PostgresSaver the same.
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

from langgraph.checkpoint.sqlite import SqliteSaver

sys.path.insert(0, os.path.dirname(__file__))
from make_store import make_store  # noqa: E402

TOTAL, THREADS, KEEP = 10000, 1000, 2


def copy(src: str, dst: str) -> None:
    d = sqlite3.connect(dst)
    sqlite3.connect(src).backup(d)
    d.close()


def rows(path: str) -> tuple[list, list]:
    c = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    cps = c.execute("SELECT * FROM checkpoints ORDER BY thread_id, checkpoint_ns, checkpoint_id").fetchall()
    ws = c.execute(
        "SELECT * FROM writes ORDER BY thread_id, checkpoint_ns, checkpoint_id, task_id, idx"
    ).fetchall()
    c.close()
    return cps, ws


def prune(binary: str, path: str) -> subprocess.Popen:
    return subprocess.Popen([binary, "store", "prune", path, "--keep-latest", str(KEEP)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def python_reads(path: str) -> list:
    conn = sqlite3.connect(path, check_same_thread=False)
    saver = SqliteSaver(conn)
    out = []
    for t in range(0, THREADS, 37):
        tup = saver.get_tuple({"configurable": {"thread_id": f"t{t}"}})
        out.append((tup.config, tup.checkpoint["channel_values"], tup.metadata, tup.pending_writes))
    conn.close()
    return out


class Postgres:
    """The same rounds on Postgres databases made from one template."""

    def __init__(self, url: str, binary: str, sqlite_source: str) -> None:
        import psycopg

        self.psycopg = psycopg
        self.admin = url
        self.base = url.rsplit("/", 1)[0]
        self.source = self.fresh("pk_source")
        done = subprocess.run([binary, "store", "copy", sqlite_source, self.source],
                              capture_output=True, text=True)
        if done.returncode != 0:
            sys.exit(f"FAIL: copy into Postgres: {done.stderr}")

    def fresh(self, name: str, template: str | None = None) -> str:
        with self.psycopg.connect(self.admin, autocommit=True) as c:
            c.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
            c.execute(f'CREATE DATABASE "{name}"' + (f' TEMPLATE "{template}"' if template else ""))
        return f"{self.base}/{name}"

    def copy(self, name: str) -> str:
        return self.fresh(name, self.source.rsplit("/", 1)[1])

    def rows(self, url: str) -> tuple:
        with self.psycopg.connect(url) as c:
            return tuple(
                c.execute(f"SELECT * FROM {table} ORDER BY {order}").fetchall()
                for table, order in [
                    ("checkpoints", "thread_id, checkpoint_ns, checkpoint_id"),
                    ("checkpoint_blobs", "thread_id, checkpoint_ns, channel, version"),
                    ("checkpoint_writes", "thread_id, checkpoint_ns, checkpoint_id, task_id, idx"),
                ]
            )

    def python_reads(self, url: str) -> list:
        from langgraph.checkpoint.postgres import PostgresSaver

        out = []
        with PostgresSaver.from_conn_string(url) as saver:
            for t in range(0, THREADS, 37):
                tup = saver.get_tuple({"configurable": {"thread_id": f"t{t}"}})
                out.append((tup.config, tup.checkpoint["channel_values"], tup.metadata,
                            tup.pending_writes))
        return out


def rounds_on(name: str, binary: str, rounds: int, rng: random.Random, make_victim, rows_of,
              reads_of, reference: str) -> None:
    """Kill rounds against `reference` (already pruned without interruption)."""
    started = time.time()
    if prune(binary, reference).wait() != 0:
        sys.exit(f"FAIL: {name}: the uninterrupted prune failed")
    took = time.time() - started
    want = rows_of(reference)
    kept = len(want[0])
    if kept != THREADS * KEEP:
        sys.exit(f"FAIL: {name}: the reference kept {kept} checkpoints, want {THREADS * KEEP}")
    want_reads = reads_of(reference)
    mid_way = 0
    for r in range(rounds):
        victim = make_victim(r)
        proc = prune(binary, victim)
        time.sleep(rng.uniform(0.1, 0.9) * took)
        finished = proc.poll() is not None
        if not finished:
            os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
        at_kill = len(rows_of(victim)[0])
        landed = not finished and kept < at_kill < TOTAL
        mid_way += landed
        if prune(binary, victim).wait() != 0:
            sys.exit(f"FAIL: {name}: round {r}: the rerun failed")
        got = rows_of(victim)
        if got != want:
            sys.exit(f"FAIL: {name}: round {r}: after kill at {at_kill} checkpoints and a rerun, the "
                     f"rows differ from the uninterrupted prune ({len(got[0])}/{len(got[-1])} against "
                     f"{len(want[0])}/{len(want[-1])})")
        if reads_of(victim) != want_reads:
            sys.exit(f"FAIL: {name}: round {r}: Python reads other values than from the reference")
        print(f"  {name} round {r}: killed with {at_kill} of {TOTAL} checkpoints left"
              f"{' (mid-way)' if landed else ' (not mid-way)'}; rerun: rows equal the reference")
    if mid_way == 0:
        sys.exit(f"FAIL: {name}: no kill landed mid-way; raise the store's size")
    print(f"prune kill and resume, {name}: {mid_way} of {rounds} kills mid-way, every store equal "
          "to an uninterrupted prune")


def main() -> None:
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    binary = sys.argv[1]
    rounds = int(sys.argv[2]) if len(sys.argv) > 2 else 4
    rng = random.Random(int(os.environ.get("PRUNE_KILL_SEED", "7")))
    with tempfile.TemporaryDirectory() as tmp:
        source = os.path.join(tmp, "source.sqlite")
        make_store(source, TOTAL, THREADS)
        reference = os.path.join(tmp, "reference.sqlite")
        copy(source, reference)

        def sqlite_victim(r: int) -> str:
            victim = os.path.join(tmp, f"victim-{r}.sqlite")
            copy(source, victim)
            return victim

        rounds_on("sqlite", binary, rounds, rng, sqlite_victim, rows, python_reads, reference)
        if len(sys.argv) > 3:
            pg = Postgres(sys.argv[3], binary, source)
            rounds_on("postgres", binary, rounds, rng, lambda r: pg.copy(f"pk_victim_{r}"),
                      pg.rows, pg.python_reads, pg.copy("pk_reference"))


if __name__ == "__main__":
    main()
