"""`lgcodec store prune` killed with SIGKILL mid-way, then run again: the store ends
exactly as an uninterrupted prune leaves it (nothing kept twice, nothing lost).

    python vectors/store_maint/prune_kill_resume.py [--retain] LGCODEC_BINARY [ROUNDS] [POSTGRES_URL]

With `--retain` the command killed and run again is `lgcodec store retain STORE
--policy FILE --once`, the policy `keep_latest = 2`: the same deletes through the
retention sweep (its sweep lock, its batches), checked the same way.

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
import sqlite3
import sys
import tempfile

from langgraph.checkpoint.sqlite import SqliteSaver

sys.path.insert(0, os.path.dirname(__file__))
from kill_rounds import (Postgres, fail, kill_rounds, pg_python_reads, run,  # noqa: E402
                         sqlite_copy, sqlite_rows)
from make_store import make_store  # noqa: E402

TOTAL, THREADS, KEEP = 10000, 1000, 2


RETAIN = "--retain" in sys.argv[1:]
ARGS = [a for a in sys.argv[1:] if a != "--retain"]
WHAT = "retain" if RETAIN else "prune"


def prune(binary: str, policy: str = ""):
    if RETAIN:
        return lambda path: [binary, "store", "retain", path, "--policy", policy, "--once"]
    return lambda path: [binary, "store", "prune", path, "--keep-latest", str(KEEP)]


def python_reads(path: str) -> list:
    conn = sqlite3.connect(path, check_same_thread=False)
    saver = SqliteSaver(conn)
    out = []
    for t in range(0, THREADS, 37):
        tup = saver.get_tuple({"configurable": {"thread_id": f"t{t}"}})
        out.append((tup.config, tup.checkpoint["channel_values"], tup.metadata, tup.pending_writes))
    conn.close()
    return out


def rounds_on(name: str, binary: str, rounds: int, rng: random.Random, make_victim, rows_of,
              reads_of, reference: str, policy: str) -> None:
    """Kill rounds against `reference` (pruned here without interruption)."""
    took = run(prune(binary, policy)(reference))
    want = rows_of(reference)
    kept = len(want[0])
    if kept != THREADS * KEEP:
        fail(f"{name}: the reference kept {kept} checkpoints, want {THREADS * KEEP}")
    want_reads = reads_of(reference)

    def same_reads(r: int, victim: str) -> None:
        if reads_of(victim) != want_reads:
            fail(f"{name}: round {r}: Python reads other values than from the reference")

    kill_rounds(name, WHAT, rounds, rng, command=prune(binary, policy), make_victim=make_victim,
                state_of=rows_of, want=want, took=took,
                progress_of=lambda victim: len(rows_of(victim)[0]),
                mid_way=lambda left: kept < left < TOTAL, check=same_reads)


def main() -> None:
    if len(ARGS) < 1:
        sys.exit(__doc__)
    binary = ARGS[0]
    rounds = int(ARGS[1]) if len(ARGS) > 1 else 4
    rng = random.Random(int(os.environ.get("PRUNE_KILL_SEED", "7")))
    with tempfile.TemporaryDirectory() as tmp:
        policy = os.path.join(tmp, "retention.toml")
        with open(policy, "w") as f:
            f.write(f"[rules]\nkeep_latest = {KEEP}\n")
        source = os.path.join(tmp, "source.sqlite")
        make_store(source, TOTAL, THREADS)
        reference = os.path.join(tmp, "reference.sqlite")
        sqlite_copy(source, reference)

        def sqlite_victim(r: int) -> str:
            victim = os.path.join(tmp, f"victim-{r}.sqlite")
            sqlite_copy(source, victim)
            return victim

        rounds_on("sqlite", binary, rounds, rng, sqlite_victim, sqlite_rows, python_reads,
                  reference, policy)
        if len(ARGS) > 2:
            pg = Postgres(ARGS[2])
            pg_source = pg.fresh("pk_source")
            run([binary, "store", "copy", source, pg_source])
            rounds_on("postgres", binary, rounds, rng,
                      lambda r: pg.fresh(f"pk_victim_{r}", pg_source), pg.rows,
                      lambda url: pg_python_reads(url, THREADS),
                      pg.fresh("pk_reference", pg_source), policy)


if __name__ == "__main__":
    main()
