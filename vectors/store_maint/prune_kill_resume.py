"""`lgcodec store prune` killed with SIGKILL mid-way, then run again: the store ends
exactly as an uninterrupted prune leaves it (nothing kept twice, nothing lost).

    python vectors/store_maint/prune_kill_resume.py LGCODEC_BINARY [ROUNDS]

Python's SqliteSaver writes 10,000 checkpoints over 1,000 threads (two pending writes each):
the prune deletes them in pages of at most 1,000 checkpoints, each page one transaction.
One copy is pruned to `--keep-latest 2` without interruption: the reference. In each
round a fresh copy is pruned, killed after a random delay, pruned again to completion,
and then must hold exactly the reference's rows, byte for byte, and read the same
through Python's SqliteSaver. At least one kill must land mid-way (some threads pruned,
some not), or the check fails and asks for a larger store.
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
        started = time.time()
        if prune(binary, reference).wait() != 0:
            sys.exit("FAIL: the uninterrupted prune failed")
        took = time.time() - started
        want = rows(reference)
        kept = len(want[0])
        if kept != THREADS * KEEP:
            sys.exit(f"FAIL: the reference kept {kept} checkpoints, want {THREADS * KEEP}")
        want_reads = python_reads(reference)
        mid_way = 0
        for r in range(rounds):
            victim = os.path.join(tmp, f"victim-{r}.sqlite")
            copy(source, victim)
            proc = prune(binary, victim)
            time.sleep(rng.uniform(0.1, 0.9) * took)
            finished = proc.poll() is not None
            if not finished:
                os.kill(proc.pid, signal.SIGKILL)
            proc.wait()
            at_kill = len(rows(victim)[0])
            landed = not finished and kept < at_kill < TOTAL
            mid_way += landed
            if prune(binary, victim).wait() != 0:
                sys.exit(f"FAIL: round {r}: the rerun failed")
            got = rows(victim)
            if got != want:
                sys.exit(f"FAIL: round {r}: after kill at {at_kill} checkpoints and a rerun, the rows "
                         f"differ from the uninterrupted prune ({len(got[0])}/{len(got[1])} against "
                         f"{len(want[0])}/{len(want[1])})")
            if python_reads(victim) != want_reads:
                sys.exit(f"FAIL: round {r}: Python reads other values than from the reference")
            print(f"  round {r}: killed with {at_kill} of {TOTAL} checkpoints left"
                  f"{' (mid-way)' if landed else ' (not mid-way)'}; rerun: rows equal the reference")
        if mid_way == 0:
            sys.exit("FAIL: no kill landed mid-way; raise the store's size")
    print(f"prune kill and resume: {mid_way} of {rounds} kills mid-way, every store equal to an uninterrupted prune")


if __name__ == "__main__":
    main()
