"""`lgcodec store copy` killed with SIGKILL mid-way, then run again: nothing lost, nothing
duplicated.

    python vectors/store_maint/kill_resume.py LGCODEC_BINARY POSTGRES_URL [CHECKPOINTS]

Python's SqliteSaver writes CHECKPOINTS (default 3000) checkpoints over 30 threads, two
pending writes each; the copy into the empty Postgres database is killed once some
checkpoints are there; the rerun must report every checkpoint copied or already there
and verified, and Postgres must hold exactly the source's checkpoints and writes (which
Python's PostgresSaver then reads back equal to the SQLite ones, for a sample).
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


def main() -> None:
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    binary, url = sys.argv[1], sys.argv[2]
    total = int(sys.argv[3]) if len(sys.argv) > 3 else 3000
    threads = 30
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "big.sqlite")
        make_store(path, total, threads)

        count_sql = "SELECT (SELECT count(*) FROM checkpoints), (SELECT count(*) FROM checkpoint_writes)"
        proc = subprocess.Popen([binary, "store", "copy", path, url],
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.time() + 60
        seen = 0
        while time.time() < deadline and proc.poll() is None:
            time.sleep(0.05)
            try:
                with psycopg.connect(url) as c:
                    seen = c.execute(count_sql).fetchone()[0]
            except psycopg.Error:
                continue  # the tables are not made yet
            if seen >= total // 10:
                break
        if proc.poll() is not None:
            sys.exit(f"FAIL: the copy ended (exit {proc.returncode}) before it could be killed; raise CHECKPOINTS")
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
        with psycopg.connect(url) as c:
            at_kill = c.execute(count_sql).fetchone()
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
        with psycopg.connect(url) as c:
            got = c.execute(count_sql).fetchone()
        if tuple(got) != (total, 2 * total):
            sys.exit(f"FAIL: Postgres holds {got} checkpoints/writes, want {(total, 2 * total)}")

        conn = sqlite3.connect(path, check_same_thread=False)
        src = SqliteSaver(conn)
        with PostgresSaver.from_conn_string(url) as dst:
            for t in (0, threads // 2, threads - 1):
                config = {"configurable": {"thread_id": f"t{t}"}}
                a, b = list(src.list(config)), list(dst.list(config))
                if len(a) != len(b):
                    sys.exit(f"FAIL: thread t{t}: {len(a)} checkpoints in SQLite, {len(b)} in Postgres")
                for x, y in zip(a, b):
                    if (x.checkpoint["channel_values"] != y.checkpoint["channel_values"]
                            or x.metadata != y.metadata or x.pending_writes != y.pending_writes
                            or x.parent_config != y.parent_config):
                        sys.exit(f"FAIL: thread t{t} checkpoint {x.config} differs in Postgres")
        conn.close()
    print("kill and resume: nothing lost, nothing duplicated")


if __name__ == "__main__":
    main()
