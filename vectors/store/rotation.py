"""The zero-downtime runbooks of docs/store-encryption.md, run for real: Python graph
processes (langgraph StateGraph + SqliteSaver / PostgresSaver, serializer from the
`langgraph-codec-keys` package in python/) keep writing and resuming threads while the
operator rotates the key (`rotate`) or turns encryption on (`encrypt`) with
`lgcodec store rekey|encrypt|audit`.

    python vectors/store/rotation.py runbook SCENARIO STORE --lgcodec PATH [--work DIR]

SCENARIO is `rotate` or `encrypt`; STORE is `sqlite:PATH` or a `postgres://` /
`postgresql://` URL of an empty database. Exit status 0 when every check passed.

Every writer owns its threads (no two processes invoke one thread at once, as in a real
deployment where a thread's run is routed to one worker) and, every pass, also reads the
current state of every other writer's threads. A restart replaces one writer with a new
process under the next configuration, one writer at a time (a rolling restart: the
others keep writing); the new process resumes its threads where the old one left them,
and every writer not yet restarted completes a whole pass — reading the rows the
restarted one wrote — before the next restart. After each change the operator waits
until every writer has completed two passes under it. The sweeps are rate-limited and
must overlap writer rounds.

`--skip-fallback-step` leaves out step 1 of either runbook (the key deployed as
decrypt-only everywhere): a writer not yet restarted then fails on a row a restarted one
wrote (`decryption failed` / `Unknown serialization type: msgpack+aes`), and so does the
run — the negative control .ci/checks.d/store_rotation.sh runs first.

Checks: no writer ever fails (any exception ends the writer with status 1 and the run
fails); after the sweep `lgcodec store audit` exits 0; after the old key is dropped (or
strict mode is switched on) every thread resumes; at the end every thread's state holds
exactly the notes of the rounds its writers logged, its checkpoint count equals that of
the same rounds replayed on LangGraph's InMemorySaver, and its whole history is read
under the final configuration only.

    python vectors/store/rotation.py writer STORE --id N --threads K --dir DIR

is one writer process (used by `runbook`).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent
sys.path.insert(0, str(REPO / "python" / "src"))
sys.path.insert(0, str(REPO / "python" / "tests"))

import graphs  # noqa: E402  (python/tests/graphs.py: the graph the package tests use)
import stores  # noqa: E402

OLD = "rotation-old-key-0123456789abcd!"  # 32 bytes
NEW = "rotation-new-key-24bytes"  # 24 bytes (key sizes may differ across a rotation)
KEY_VARS = (
    "LANGGRAPH_AES_KEY",
    "LANGGRAPH_AES_KEY_PREVIOUS",
    "LANGGRAPH_AES_FALLBACK_KEYS",
    "LANGGRAPH_AES_STRICT",
)
WRITERS = 2
THREADS = 3
T0 = time.monotonic()


def say(msg: str) -> None:
    print(f"[{time.monotonic() - T0:6.1f}s] {msg}", flush=True)


# -- stores ----------------------------------------------------------------------------


def is_postgres(store: str) -> bool:
    return store.startswith(("postgres://", "postgresql://"))


def sqlite_path(store: str) -> str:
    return store[len("sqlite:") :] if store.startswith("sqlite:") else store


def open_saver(store: str, serde):
    if is_postgres(store):
        return stores.postgres_saver(store, serde)
    return stores.sqlite_saver(sqlite_path(store), serde)


def checkpoint_counts(store: str) -> dict[str, int]:
    q = "SELECT thread_id, count(*) FROM checkpoints GROUP BY thread_id"
    if is_postgres(store):
        import psycopg

        with psycopg.connect(store, autocommit=True) as conn:
            return dict(conn.execute(q).fetchall())
    import sqlite3

    conn = sqlite3.connect(sqlite_path(store))
    try:
        return dict(conn.execute(q).fetchall())
    finally:
        conn.close()


def tag_counts(store: str) -> dict[str, int]:
    """Rows per type tag over every serialized column (the driver's own tally)."""
    if is_postgres(store):
        import psycopg

        q = ("SELECT type, count(*) FROM (SELECT type FROM checkpoint_blobs UNION ALL "
             "SELECT type FROM checkpoint_writes) t GROUP BY type ORDER BY type")
        with psycopg.connect(store, autocommit=True) as conn:
            return dict(conn.execute(q).fetchall())
    import sqlite3

    q = ("SELECT type, count(*) FROM (SELECT type FROM checkpoints UNION ALL "
         "SELECT type FROM writes) GROUP BY type ORDER BY type")
    conn = sqlite3.connect(sqlite_path(store))
    try:
        return dict(conn.execute(q).fetchall())
    finally:
        conn.close()


def serializer_from_env():
    """The writer's serializer: the package's (which writes in clear when only
    decrypt-only keys are set) when any key variable is set, else LangGraph's default
    (a store in clear)."""
    if not any(os.environ.get(v) for v in KEY_VARS[:3]):
        return None
    from langgraph_codec_keys import encrypted_serializer

    return encrypted_serializer()


# -- a writer process ----------------------------------------------------------------------


def writer(args) -> int:
    d = Path(args.dir)
    log = open(d / f"writer-{args.id}.log", "a", buffering=1)
    stop = d / f"stop-{args.id}"
    threads = [f"w{args.id}-t{i}" for i in range(args.threads)]
    # every pass also reads the current state of the other writers' threads: during a
    # rolling restart, writers not yet restarted read rows the restarted ones wrote
    # under the new configuration (why the new key is deployed as a fallback first)
    others = [f"w{j}-t{i}" for j in range(args.writers) if j != args.id for i in range(args.threads)]
    conf = {v: os.environ[v] for v in KEY_VARS if v in os.environ}
    shown = {k: ("<new>" if v == NEW else "<old>" if v == OLD else v) for k, v in conf.items()}
    try:
        serde = serializer_from_env()
        with open_saver(args.store, serde) as saver:
            graph = graphs.build_graph(saver)
            log.write(json.dumps({"event": "start", "pid": os.getpid(), "config": shown}) + "\n")
            while not stop.exists():
                for t in threads:
                    count = graphs.one_round(graph, t)
                    log.write(json.dumps({"event": "round", "thread": t, "count": count}) + "\n")
                for t in others:
                    graph.get_state(graphs.config(t))
                time.sleep(args.pause)
        log.write(json.dumps({"event": "stop", "pid": os.getpid()}) + "\n")
        return 0
    except BaseException as e:  # any failure fails the run
        log.write(json.dumps({"event": "error", "pid": os.getpid(), "error": f"{type(e).__name__}: {e}"}) + "\n")
        raise


# -- the operator ----------------------------------------------------------------------------


class Fleet:
    def __init__(self, store: str, work: Path, n: int, threads: int):
        self.store, self.work, self.n, self.threads = store, work, n, threads
        self.procs: dict[int, subprocess.Popen] = {}

    def _log(self, i: int) -> list[dict]:
        p = self.work / f"writer-{i}.log"
        return [json.loads(x) for x in p.read_text().splitlines()] if p.exists() else []

    def rounds_since_start(self, i: int) -> int:
        """Rounds the current process of writer i has logged (0 before it started)."""
        p = self.procs.get(i)
        events = self._log(i)
        starts = [k for k, e in enumerate(events) if e["event"] == "start" and p and e["pid"] == p.pid]
        return 0 if not starts else sum(1 for e in events[starts[-1]:] if e["event"] == "round")

    def check_alive(self) -> None:
        for i, p in self.procs.items():
            if p.poll() is not None:
                errors = [e for e in self._log(i) if e["event"] == "error"]
                raise SystemExit(f"FAIL: writer {i} exited with status {p.returncode}: {errors[-1:] or 'no error logged'}")

    def start(self, i: int, env: dict[str, str]) -> None:
        (self.work / f"stop-{i}").unlink(missing_ok=True)
        full = {k: v for k, v in os.environ.items() if k not in KEY_VARS}
        full.update(env)
        self.procs[i] = subprocess.Popen(
            [sys.executable, __file__, "writer", self.store, "--id", str(i),
             "--threads", str(self.threads), "--writers", str(self.n), "--dir", str(self.work)],
            env=full, stderr=open(self.work / f"writer-{i}.stderr", "a"),
        )
        self.wait_rounds(i, 1)

    def wait_rounds(self, i: int, k: int, timeout: float = 120) -> None:
        end = time.monotonic() + timeout
        while self.rounds_since_start(i) < k:
            self.check_alive()
            if time.monotonic() > end:
                raise SystemExit(f"FAIL: writer {i} made no progress in {timeout}s")
            time.sleep(0.05)

    def stop(self, i: int) -> None:
        (self.work / f"stop-{i}").touch()
        p = self.procs.pop(i)
        rc = p.wait(timeout=120)
        if rc != 0:
            errors = [e for e in self._log(i) if e["event"] == "error"]
            raise SystemExit(f"FAIL: writer {i} failed (status {rc}): {errors[-1:]}")

    def roll(self, env: dict[str, str], what: str) -> None:
        """Rolling restart: one writer at a time, the others keep writing."""
        for i in range(self.n):
            if i in self.procs:
                self.stop(i)
            self.start(i, env)
            # every writer not yet restarted completes a whole pass (its rounds and its
            # reads of the others' threads, the restarted one's new rows included)
            # before the next restart
            others = {j: self.rounds_since_start(j) for j in self.procs if j != i}
            for j, seen in others.items():
                self.wait_rounds(j, seen + 2 * self.threads)
        # every writer completed a pass under the new configuration
        for i in range(self.n):
            self.wait_rounds(i, 2 * self.threads)  # two whole passes (reads of the others too)
        say(f"writers restarted: {what}; rows by type tag: {tag_counts(self.store)}")

    def stop_all(self) -> None:
        for i in list(self.procs):
            self.stop(i)

    def kill_all(self) -> None:
        for p in self.procs.values():
            p.kill()

    def total_rounds(self) -> int:
        return sum(1 for i in range(self.n) for e in self._log(i) if e["event"] == "round")

    def last_counts(self) -> dict[str, int]:
        out: dict[str, int] = {}
        for i in range(self.n):
            for e in self._log(i):
                if e["event"] == "round":
                    out[e["thread"]] = e["count"]
                if e["event"] == "error":
                    raise SystemExit(f"FAIL: writer {i} logged an error: {e}")
        return out


def lgcodec(binary: str, args: list[str], env: dict[str, str], ok=(0,)) -> subprocess.CompletedProcess:
    full = {k: v for k, v in os.environ.items() if k not in KEY_VARS}
    full.update(env)
    say("$ " + " ".join(f"{k}=<{'new' if v == NEW else 'old' if v == OLD else v}>" for k, v in env.items())
        + " lgcodec " + " ".join(args))
    p = subprocess.run([binary, *args], env=full, capture_output=True, text=True)
    out = (p.stdout.strip() + "\n" + p.stderr.strip()).strip()
    for line in ([] if "--json" in args else out.splitlines()[-12:]):
        print("    " + line[:300])
    if p.returncode not in ok:
        raise SystemExit(f"FAIL: lgcodec {' '.join(args)} exited {p.returncode} (expected {ok})")
    return p


def sweep(fleet: Fleet, binary: str, args: list[str], env: dict[str, str]) -> None:
    """Runs a sweep and checks that the writers kept writing while it ran."""
    before = fleet.total_rounds()
    lgcodec(binary, args, env)
    fleet.check_alive()
    during = fleet.total_rounds() - before
    if during == 0:
        raise SystemExit("FAIL: no writer completed a round while the sweep ran")
    say(f"writers completed {during} rounds while `{' '.join(args[:2])}` ran")


def audit_json(binary: str, store: str, env: dict[str, str]) -> dict:
    """`lgcodec store audit --json --allow-free-space` (writers keep writing): must exit 0
    with verdict clean, no value in clear,
    none under a decrypt-only key, none unreadable."""
    p = lgcodec(binary, ["store", "audit", store, "--json", "--allow-free-space"], env)
    report = json.loads(p.stdout)
    t = report["totals"]
    bad = {
        "verdict": report["verdict"] != "clean",
        "clear": t["clear"]["rows"] + t["legacy_json"]["rows"] > 0,
        "previous": any(v["rows"] for v in t["previous"].values()),
        "unreadable": t["unreadable"]["rows"] > 0,
        "primary": t["primary"]["rows"] != t["total"]["rows"] - t["empty"]["rows"],
    }
    if any(bad.values()):
        raise SystemExit(f"FAIL: audit --json: {[k for k, v in bad.items() if v]}: {t}")
    say(f"audit --json: clean, {t['primary']['rows']} of {t['total']['rows']} values under the primary key")
    return report


def expected_checkpoints(most: int) -> list[int]:
    """How many checkpoints k rounds leave (index k, up to `most`), replayed on
    LangGraph's InMemorySaver."""
    from langgraph.checkpoint.memory import InMemorySaver
    from langgraph.checkpoint.serde.jsonplus import JsonPlusSerializer

    # saver.list does not go through the graph's allowlist: allow Note here
    saver = InMemorySaver(serde=JsonPlusSerializer(allowed_msgpack_modules=[("graphs", "Note")]))
    graph = graphs.build_graph(saver)
    out = [0]
    for _ in range(most):
        graphs.one_round(graph, "x")
        out.append(len(list(saver.list(graphs.config("x")))))
    return out


def final_check(store: str, fleet: Fleet, env: dict[str, str]) -> None:
    """Every thread under `env` only: its state is the rounds logged, its checkpoint
    count that of the same rounds on InMemorySaver, its whole history readable."""
    for k in KEY_VARS:
        os.environ.pop(k, None)
    os.environ.update(env)
    counts = fleet.last_counts()
    stored = checkpoint_counts(store)
    assert len(counts) == fleet.n * fleet.threads, counts
    expected = expected_checkpoints(max(counts.values()))
    with open_saver(store, serializer_from_env()) as saver:
        graph = graphs.build_graph(saver)
        for t, rounds in sorted(counts.items()):
            graphs.check_thread(graph, t, rounds)
            want = expected[rounds]
            if stored.get(t) != want:
                raise SystemExit(f"FAIL: thread {t}: {stored.get(t)} checkpoints stored, {want} expected after {rounds} rounds")
            history = list(graph.get_state_history(graphs.config(t)))
            assert len(history) == want, (t, len(history), want)
    total = sum(counts.values())
    say(f"final check: {len(counts)} threads, {total} rounds, {sum(stored.values())} checkpoints, "
        "every state and history read under the final keys only")


def runbook(args) -> int:
    work = Path(args.work).resolve()
    work.mkdir(parents=True, exist_ok=True)
    store = args.store
    lg = args.lgcodec
    fleet = Fleet(store, work, args.writers, args.threads)
    # small batches, and a rate limit so that the sweep spans several writer passes
    batch = ["--batch-size", "20", "--max-rows-per-sec", "800"]
    try:
        if args.scenario == "rotate":
            old = {"LANGGRAPH_AES_KEY": OLD}
            fleet.roll(old, "LANGGRAPH_AES_KEY=old (the store today)")
            # 1. the new key deployed as a fallback everywhere (still written under old)
            if not args.skip_fallback_step:
                fleet.roll({**old, "LANGGRAPH_AES_FALLBACK_KEYS": NEW}, "+ LANGGRAPH_AES_FALLBACK_KEYS=new")
            # 2. primary switched, old key kept decrypt-only
            switched = {"LANGGRAPH_AES_KEY": NEW, "LANGGRAPH_AES_FALLBACK_KEYS": OLD}
            fleet.roll(switched, "LANGGRAPH_AES_KEY=new, LANGGRAPH_AES_FALLBACK_KEYS=old")
            lgcodec(lg, ["store", "audit", store], switched, ok=(1,))  # rows under old: findings
            # 3. the sweep, while the writers keep writing
            sweep(fleet, lg, ["store", "rekey", store, *batch], switched)
            # 4. the proof: no row under the old key (the writers' own upserts keep
            # leaving dead row versions on Postgres: free space is acknowledged here and
            # vacuumed in a quiet moment, see docs/store-encryption.md)
            lgcodec(lg, ["store", "audit", store, "--allow-free-space"], switched)
            audit_json(lg, store, switched)
            # 5. old key dropped: every writer restarted with the new key only
            final = {"LANGGRAPH_AES_KEY": NEW}
            fleet.roll(final, "LANGGRAPH_AES_KEY=new only (old key dropped)")
            audit_json(lg, store, final)
        elif args.scenario == "encrypt":
            fleet.roll({}, "no key (a store in clear)")
            # 1. the key deployed as decrypt-only everywhere (rows still written in clear)
            if not args.skip_fallback_step:
                fleet.roll({"LANGGRAPH_AES_FALLBACK_KEYS": NEW}, "LANGGRAPH_AES_FALLBACK_KEYS=new only (writes in clear)")
            # 2. primary set: writers write new rows encrypted, still read rows in clear
            keyed = {"LANGGRAPH_AES_KEY": NEW}
            fleet.roll(keyed, "LANGGRAPH_AES_KEY=new (rows in clear still read)")
            lgcodec(lg, ["store", "audit", store], keyed, ok=(1,))  # rows in clear: findings
            # 3. the sweep, while the writers keep writing
            sweep(fleet, lg, ["store", "encrypt", store, *batch], keyed)
            # 4. the proof: no row in clear
            lgcodec(lg, ["store", "audit", store, "--allow-free-space"], keyed)
            audit_json(lg, store, keyed)
            # 5. fail closed: writers refuse rows in clear from now on
            final = {**keyed, "LANGGRAPH_AES_STRICT": "1"}
            fleet.roll(final, "LANGGRAPH_AES_STRICT=1 (rows in clear refused)")
            audit_json(lg, store, final)
        else:
            raise SystemExit(f"unknown scenario {args.scenario!r}")
        for i in range(fleet.n):
            fleet.wait_rounds(i, fleet.threads)
        fleet.stop_all()
        final_check(store, fleet, final)
    except BaseException:
        fleet.kill_all()
        for p in sorted(work.glob("writer-*.stderr")):
            text = p.read_text().strip()
            if text:
                print(f"--- {p.name}:\n{text[-3000:]}")
        raise
    say(f"PASS: {args.scenario} on {'postgres' if is_postgres(store) else 'sqlite'}")
    return 0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    w = sub.add_parser("writer")
    w.add_argument("store")
    w.add_argument("--id", type=int, required=True)
    w.add_argument("--threads", type=int, default=THREADS)
    w.add_argument("--writers", type=int, default=WRITERS)
    w.add_argument("--dir", required=True)
    w.add_argument("--pause", type=float, default=0.25, help="seconds between passes")
    r = sub.add_parser("runbook")
    r.add_argument("scenario", choices=["rotate", "encrypt"])
    r.add_argument("store")
    r.add_argument("--lgcodec", required=True)
    r.add_argument("--work", default=None)
    r.add_argument("--writers", type=int, default=WRITERS)
    r.add_argument("--threads", type=int, default=THREADS)
    r.add_argument("--skip-fallback-step", action="store_true",
                   help="negative control: switch the primary (rotate) or set it (encrypt) without deploying the key as decrypt-only first: writers not yet restarted then fail on rows the restarted ones wrote")
    args = ap.parse_args()
    if args.cmd == "writer":
        return writer(args)
    if args.work is None:
        import tempfile

        args.work = tempfile.mkdtemp(prefix="lgcodec-rotation-")
    return runbook(args)


if __name__ == "__main__":
    sys.exit(main())
