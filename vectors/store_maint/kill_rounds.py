"""Kill rounds for the store commands that write: a command run on a fresh copy of a
store, killed with SIGKILL after a random delay, then run again to completion, must
leave the copy exactly as one uninterrupted run leaves it. Shared by
prune_kill_resume.py, import_kill_resume.py and upgrade_kill_resume.py.
"""

from __future__ import annotations

import os
import random
import signal
import sqlite3
import subprocess
import sys
import time
from typing import Callable


def fail(message: str) -> None:
    sys.exit(f"FAIL: {message}")


def run(argv: list[str]) -> float:
    """Runs `argv` to completion (exit 0 required); the seconds it took."""
    started = time.time()
    done = subprocess.run(argv, capture_output=True, text=True)
    if done.returncode != 0:
        fail(f"{' '.join(argv[1:])}: exit {done.returncode}: {done.stderr}")
    return time.time() - started


def kill_rounds(name: str, what: str, rounds: int, rng: random.Random, *,
                command: Callable[[str], list[str]],
                make_victim: Callable[[int], str],
                state_of: Callable[[str], object],
                want: object,
                took: float,
                progress_of: Callable[[str], int],
                mid_way: Callable[[int], bool],
                check: Callable[[int, str], None] | None = None) -> None:
    """`rounds` rounds of `command(victim)` killed after a random part of `took`
    seconds (how long the uninterrupted run took; a run that ends before its kill gives
    its own time for the next draw), then run again: `state_of(victim)`
    must equal `want`. `progress_of(victim)` right after the kill says how far it got
    (printed), and `mid_way(progress)` whether the kill landed mid-way; at least one
    must, or the store is too small for the check to mean anything. `check(round,
    victim)` runs any further check on the finished victim."""
    landed = 0
    for r in range(rounds):
        # A run that ends before its kill shows the uninterrupted run was slow (CI's
        # two cores are shared): the delay is drawn again from the time this run took,
        # on a fresh victim, up to three times.
        for _ in range(4):
            victim = make_victim(r)
            started = time.time()
            proc = subprocess.Popen(command(victim), stdout=subprocess.DEVNULL,
                                    stderr=subprocess.DEVNULL)
            delay = rng.uniform(0.1, 0.9) * took
            while proc.poll() is None and time.time() - started < delay:
                time.sleep(min(0.005, max(0.0, delay - (time.time() - started))))
            finished = proc.poll() is not None
            if not finished:
                os.kill(proc.pid, signal.SIGKILL)
            proc.wait()
            if not finished:
                break
            took = time.time() - started
            print(f"  {name} round {r}: ended after {took:.2f} s, before its kill at "
                  f"{delay:.2f} s; drawn again from {took:.2f} s")
        at_kill = progress_of(victim)
        hit = not finished and mid_way(at_kill)
        landed += hit
        run(command(victim))
        if state_of(victim) != want:
            fail(f"{name}: round {r}: killed at {at_kill} and run again, the store differs "
                 f"from the uninterrupted {what}")
        if check is not None:
            check(r, victim)
        print(f"  {name} round {r}: killed at {at_kill}"
              f"{' (mid-way)' if hit else ' (not mid-way)'}; rerun: equal to the reference")
    if landed == 0:
        fail(f"{name}: no kill landed mid-way; raise the store's size")
    print(f"{what} kill and resume, {name}: {landed} of {rounds} kills mid-way, every store "
          f"equal to an uninterrupted {what}")


def sqlite_copy(src: str, dst: str) -> None:
    d = sqlite3.connect(dst)
    sqlite3.connect(src).backup(d)
    d.close()


def sqlite_rows(path: str) -> tuple:
    """Every row of the saver's two tables, ordered; empty before they exist."""
    if not os.path.exists(path):
        return ([], [])
    c = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        return (
            c.execute("SELECT * FROM checkpoints ORDER BY thread_id, checkpoint_ns, "
                      "checkpoint_id").fetchall(),
            c.execute("SELECT * FROM writes ORDER BY thread_id, checkpoint_ns, checkpoint_id, "
                      "task_id, idx").fetchall(),
        )
    except sqlite3.OperationalError:  # killed before the tables were made
        return ([], [])
    finally:
        c.close()


PG_TABLES = [
    ("checkpoints", "thread_id, checkpoint_ns, checkpoint_id"),
    ("checkpoint_blobs", "thread_id, checkpoint_ns, channel, version"),
    ("checkpoint_writes", "thread_id, checkpoint_ns, checkpoint_id, task_id, idx"),
]


class Postgres:
    """Databases on one server: fresh, or made from a template database."""

    def __init__(self, url: str) -> None:
        import psycopg

        self.psycopg = psycopg
        self.admin = url
        self.base = url.rsplit("/", 1)[0]

    def fresh(self, name: str, template: str | None = None) -> str:
        with self.psycopg.connect(self.admin, autocommit=True) as c:
            c.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
            c.execute(f'CREATE DATABASE "{name}"'
                      + (f' TEMPLATE "{template.rsplit("/", 1)[-1]}"' if template else ""))
        return f"{self.base}/{name}"

    def rows(self, url: str) -> tuple:
        """Every row of the saver's three tables, ordered; empty before they exist."""
        with self.psycopg.connect(url) as c:
            try:
                return tuple(c.execute(f"SELECT * FROM {t} ORDER BY {o}").fetchall()
                             for t, o in PG_TABLES)
            except self.psycopg.errors.UndefinedTable:  # killed before the tables were made
                return ([], [], [])


def pg_python_reads(url: str, threads: int) -> list:
    """What Python's PostgresSaver reads of every 37th thread `t{i}` of make_store's."""
    from langgraph.checkpoint.postgres import PostgresSaver

    out = []
    with PostgresSaver.from_conn_string(url) as saver:
        for t in range(0, threads, 37):
            tup = saver.get_tuple({"configurable": {"thread_id": f"t{t}"}})
            out.append((tup.config, tup.checkpoint["channel_values"], tup.metadata,
                        tup.pending_writes))
    return out
