"""`lgcodec store copy` killed with SIGKILL mid-way, then run again: nothing lost, nothing
duplicated.

    python vectors/store_maint/kill_resume.py LGCODEC_BINARY TARGET [CHECKPOINTS]

Python's SqliteSaver writes CHECKPOINTS (default 3000) checkpoints over 30 threads, two
pending writes each; the copy into TARGET (an empty Postgres database's URL, or a SQLite
file that does not exist yet) is killed once some checkpoints are there; the rerun must
report every checkpoint copied or already there and verified, and the target must hold
exactly the source's checkpoints and writes (which Python's PostgresSaver or
SqliteSaver then reads back equal to the source's, for a sample).
"""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import tempfile
import time

import psycopg
from langgraph.checkpoint.postgres import PostgresSaver
from langgraph.checkpoint.sqlite import SqliteSaver

sys.path.insert(0, os.path.dirname(__file__))
from make_store import make_store  # noqa: E402


def counts(target: str) -> tuple[int, int] | None:
    """(checkpoints, writes) in the target; None while its tables are not made."""
    try:
        if target.startswith(("postgres://", "postgresql://")):
            with psycopg.connect(target) as c:
                return tuple(c.execute(
                    "SELECT (SELECT count(*) FROM checkpoints), (SELECT count(*) FROM checkpoint_writes)"
                ).fetchone())
        # Read-only: the copy, not this probe, makes the file.
        with sqlite3.connect(f"file:{target}?mode=ro", uri=True) as c:
            return tuple(c.execute(
                "SELECT (SELECT count(*) FROM checkpoints), (SELECT count(*) FROM writes)"
            ).fetchone())
    except (psycopg.Error, sqlite3.Error):
        return None


def main() -> None:
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    binary, url = sys.argv[1], sys.argv[2]
    total = int(sys.argv[3]) if len(sys.argv) > 3 else 3000
    threads = 30
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "big.sqlite")
        make_store(path, total, threads)

        proc = subprocess.Popen([binary, "store", "copy", path, url],
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.time() + 60
        seen = 0
        while time.time() < deadline and proc.poll() is None:
            time.sleep(0.01)
            seen = (counts(url) or (0, 0))[0]
            if seen >= total // 10:
                break
        if proc.poll() is not None:
            sys.exit(f"FAIL: the copy ended (exit {proc.returncode}) before it could be killed; raise CHECKPOINTS")
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
        at_kill = counts(url) or (0, 0)
        print(f"  killed the copy with {at_kill[0]} of {total} checkpoints copied")
        if not 0 < at_kill[0] < total:
            sys.exit("FAIL: the kill did not land mid-way")

        out = subprocess.run([binary, "store", "copy", path, url, "--json"],
                             capture_output=True, text=True)
        if out.returncode != 0:
            sys.exit(f"FAIL: the rerun exited {out.returncode}: {out.stderr}")
        report = json.loads(out.stdout)
        print("  " + out.stderr.strip().splitlines()[-1])
        if report["copied"] + report["already_there"] != total or report["verified"] != total:
            sys.exit(f"FAIL: rerun report {report}")
        if report["already_there"] < at_kill[0]:
            sys.exit("FAIL: the rerun copied again what was there")
        got = counts(url)
        if got != (total, 2 * total):
            sys.exit(f"FAIL: the target holds {got} checkpoints/writes, want {(total, 2 * total)}")

        conn = sqlite3.connect(path, check_same_thread=False)
        src = SqliteSaver(conn)
        if url.startswith(("postgres://", "postgresql://")):
            with PostgresSaver.from_conn_string(url) as dst:
                same_sample(src, dst, threads)
        else:
            target = sqlite3.connect(url, check_same_thread=False)
            same_sample(src, SqliteSaver(target), threads)
            target.close()
        conn.close()
    print("kill and resume: nothing lost, nothing duplicated")


def same_sample(src, dst, threads: int) -> None:
    """Three threads read through Python's savers equal in the source and the target."""
    for t in (0, threads // 2, threads - 1):
        config = {"configurable": {"thread_id": f"t{t}"}}
        a, b = list(src.list(config)), list(dst.list(config))
        if len(a) != len(b):
            sys.exit(f"FAIL: thread t{t}: {len(a)} checkpoints in the source, {len(b)} in the target")
        for x, y in zip(a, b):
            if (x.checkpoint["channel_values"] != y.checkpoint["channel_values"]
                    or x.metadata != y.metadata or x.pending_writes != y.pending_writes
                    or x.parent_config != y.parent_config):
                sys.exit(f"FAIL: thread t{t} checkpoint {x.config} differs in the target")


if __name__ == "__main__":
    main()
