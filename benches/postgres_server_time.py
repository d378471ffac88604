#!/usr/bin/env python3
"""Server-side time of the statements behind saver_postgres/* (the floor no client can
beat), on the tables benches/saver_postgres.rs filled (schema bench_rs; run it after that bench, it empties
the bench's put/put_writes threads as they are when the reads are measured): EXPLAIN (ANALYZE) of each statement,
best of 30, planning + execution as the server reports them. Writes are rolled back.

    LGCODEC_TEST_PG_URL=postgresql://… python3 benches/postgres_server_time.py

`--cpu BENCH_EXE` measures instead where the time of one `put` / `put_writes` goes, as
CPU time, which load on a shared machine inflates far less than wall time: the client
process (every thread) and the server (every process of the cluster, split into
backends and background processes such as the WAL writer), per call, over a 5 s window
of back-to-back calls. The Rust client is its runtime's worker thread, where the calls
run (the bench's own thread prepares copies of the messages outside the clock). The Rust side is the saver_postgres bench executable in
criterion's `--profile-time` mode (`cargo bench --bench saver_postgres --features
postgres --no-run` prints its path), the Python side `PostgresSaver` on the same
workload (benches/python_baseline.py) in this process. Calls are counted from the rows
they add. Needs the server on this machine (it reads /proc).

    LGCODEC_TEST_PG_URL=… python3 benches/postgres_server_time.py --cpu target/release/deps/saver_postgres-…
"""
import glob
import os
import re
import statistics
import time

import psycopg

URL = os.environ["LGCODEC_TEST_PG_URL"]


def bench_blob():
    """The bench's blob: the first 20 messages of messages300 as JsonPlusSerializer
    writes them (10,303 bytes that TOAST compresses about 15-fold; random bytes of that
    size, used here before, are left uncompressed and hid what compression costs)."""
    import sys
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import python_baseline as pb
    from langgraph.checkpoint.serde.jsonplus import JsonPlusSerializer
    serde = JsonPlusSerializer()
    messages = serde.loads_typed(("msgpack", pb.read("messages300.msgpack")))["messages"][:20]
    return serde.dumps_typed(messages)[1]



def ours_select(blobs_inline, limit):
    lim = f" LIMIT {limit}" if limit else ""
    bl_cols = ", bl.channels, bl.versions, bl.types, bl.blobs" if blobs_inline else ""
    bl_join = """
LEFT JOIN LATERAL (
    SELECT array_agg(b.channel) AS channels, array_agg(b.version) AS versions,
        array_agg(b.type) AS types, array_agg(b.blob) AS blobs
    FROM jsonb_each_text(CASE WHEN jsonb_typeof(c.checkpoint -> 'channel_versions') = 'object'
        THEN c.checkpoint -> 'channel_versions' END) v
    CROSS JOIN LATERAL (
        SELECT channel, version, type, blob FROM checkpoint_blobs b
        WHERE b.thread_id = c.thread_id AND b.checkpoint_ns = c.checkpoint_ns
            AND b.channel = v.key AND b.version = v.value
        OFFSET 0) b
) bl ON true""" if blobs_inline else ""
    return f"""SELECT c.thread_id, c.checkpoint_ns, c.checkpoint_id, c.parent_checkpoint_id,
    c.checkpoint::text, c.metadata::text, w.task_ids, w.channels, w.types, w.blobs, w.task_paths, w.idxs{bl_cols}
FROM (SELECT thread_id, checkpoint_ns, checkpoint_id, parent_checkpoint_id, checkpoint, metadata
    FROM checkpoints WHERE thread_id = 'bench-300' AND checkpoint_ns = '' ORDER BY checkpoint_id DESC{lim}) c
LEFT JOIN LATERAL (
    SELECT array_agg(task_id) AS task_ids, array_agg(channel) AS channels,
        array_agg(type) AS types, array_agg(blob) AS blobs,
        array_agg(task_path) AS task_paths, array_agg(idx) AS idxs
    FROM checkpoint_writes cw
    WHERE cw.thread_id = c.thread_id AND cw.checkpoint_ns = c.checkpoint_ns AND cw.checkpoint_id = c.checkpoint_id
) w ON true{bl_join}
ORDER BY c.checkpoint_id DESC"""


def ours_blobs_for(conn, limit):
    rows = conn.execute(
        "SELECT checkpoint->'channel_versions'->>'messages' FROM checkpoints WHERE thread_id = 'bench-300' "
        "ORDER BY checkpoint_id DESC" + (f" LIMIT {limit}" if limit else "")).fetchall()
    versions = "{" + ",".join(f'"{r[0]}"' for r in rows) + "}"
    n = len(rows)
    arr = lambda v: "{" + ",".join([f'"{v}"'] * n) + "}"
    return f"""SELECT thread_id, checkpoint_ns, channel, version, type, blob FROM checkpoint_blobs
WHERE (thread_id, checkpoint_ns, channel, version) IN (
    SELECT * FROM unnest('{arr("bench-300")}'::text[], '{arr("")}'::text[], '{arr("messages")}'::text[], '{versions}'::text[]))"""


def ours_put():
    return """WITH b AS (
    INSERT INTO checkpoint_blobs (thread_id, checkpoint_ns, channel, version, type, blob)
    SELECT 'bench-st', '', u.channel, u.version, u.type, u.blob
    FROM unnest('{messages}'::text[], '{00000000000000000000000000000001.5}'::text[], '{msgpack}'::text[], ARRAY[%(blob)s]::bytea[]) AS u(channel, version, type, blob)
    ON CONFLICT (thread_id, checkpoint_ns, channel, version) DO NOTHING
)
INSERT INTO checkpoints (thread_id, checkpoint_ns, checkpoint_id, parent_checkpoint_id, checkpoint, metadata)
VALUES ('bench-st', '', 'id-1', NULL, '{"v": 4, "channel_versions": {"messages": "00000000000000000000000000000001.5"}}'::jsonb, '{"source": "loop", "step": 1, "parents": {}}'::jsonb)
ON CONFLICT (thread_id, checkpoint_ns, checkpoint_id)
DO UPDATE SET checkpoint = EXCLUDED.checkpoint, metadata = EXCLUDED.metadata"""


def ours_put_lz4():
    """ours_put as the saver sends it when the server has lz4 (see WriteSql in src/saver/postgres/sql.rs)."""
    return ours_put().replace(
        "WITH b AS (",
        "WITH z AS MATERIALIZED (SELECT set_config('default_toast_compression', 'lz4', true)),\nb AS (",
    ).replace("FROM unnest(", "FROM z, unnest(").replace(
        "VALUES ('bench-st', '', 'id-1', NULL, ", "SELECT 'bench-st', '', 'id-1', NULL, "
    ).replace("'::jsonb)\nON CONFLICT", "'::jsonb FROM z\nON CONFLICT")


def ours_put_writes():
    return f"""INSERT INTO checkpoint_writes (thread_id, checkpoint_ns, checkpoint_id, task_id, task_path, idx, channel, type, blob)
SELECT 'bench-st', '', 'id-1', 'task', '', u.idx, u.channel, u.type, u.blob
FROM unnest('{{0,1,2}}'::int4[], '{{c0,c1,c2}}'::text[], '{{msgpack,msgpack,msgpack}}'::text[], ARRAY['\\x01'::bytea, '\\x02', '\\x03']) AS u(idx, channel, type, blob)
ON CONFLICT (thread_id, checkpoint_ns, checkpoint_id, task_id, idx) DO NOTHING"""


def best(conn, sql, params=None, write=False, n=30):
    plan, exe = [], []
    for _ in range(n):
        if write:
            conn.execute("BEGIN")
        out = "\n".join(r[0] for r in conn.execute("EXPLAIN (ANALYZE, TIMING OFF, SUMMARY ON) " + sql, params).fetchall())
        if write:
            conn.execute("ROLLBACK")
        plan.append(float(re.search(r"Planning Time: ([\d.]+)", out).group(1)))
        exe.append(float(re.search(r"Execution Time: ([\d.]+)", out).group(1)))
    return min(plan) * 1000, min(exe) * 1000


def main():
    with psycopg.connect(URL, autocommit=True, options="-c search_path=bench_rs") as conn:
        # The state the reads of saver_postgres/* see: the put/put_writes threads empty,
        # fresh statistics.
        for t in ("bench-put", "bench-writes"):
            for table in ("checkpoints", "checkpoint_blobs", "checkpoint_writes"):
                conn.execute(f"DELETE FROM {table} WHERE thread_id = %s", (t,))
        conn.execute("ANALYZE checkpoints, checkpoint_blobs, checkpoint_writes")
        blob = bench_blob()
        rows = [
            ("get_tuple: page + blobs in one statement (ours)", ours_select(True, 1), None, False),
            ("list_limit10: page + blobs in one statement (ours)", ours_select(True, 10), None, False),
            ("list_all: page (ours)", ours_select(False, None), None, False),
            ("list_all: its blobs (ours, 2nd statement)", ours_blobs_for(conn, None), None, False),
            ("put: one CTE statement, pglz (ours before 2026-11-23 night)", ours_put(), {"blob": blob}, True),
            ("put: one CTE statement, lz4 (ours)", ours_put_lz4(), {"blob": blob}, True),
            ("put_writes: one statement (ours)", ours_put_writes(), None, True),
        ]
        print("| statement | planning µs | execution µs |\n|---|---:|---:|")
        for name, sql, params, write in rows:
            p, e = best(conn, sql, params, write)
            print(f"| {name} | {p:,.0f} | {e:,.0f} |")
        read_ab(conn)


def read_ab(conn):
    """A page read as one statement (blobs inline) or as two (page, then blobs), both
    prepared and with binary results as tokio-postgres runs them, interleaved 400 times
    so that machine load hits both alike."""
    conn.prepare_threshold = 0
    print("\n| read | one statement (min / median µs) | page + blob statements (min / median µs) |")
    print("|---|---:|---:|")
    for limit in (1, 10):
        one, two = ours_select(True, limit), (ours_select(False, limit), ours_blobs_for(conn, limit))
        a, b = [], []
        for _ in range(400):
            t0 = time.perf_counter()
            conn.cursor(binary=True).execute(one).fetchall()
            t1 = time.perf_counter()
            for sql in two:
                conn.cursor(binary=True).execute(sql).fetchall()
            t2 = time.perf_counter()
            a.append(t1 - t0)
            b.append(t2 - t1)
        f = lambda x: f"{min(x) * 1e6:,.0f} / {statistics.median(x) * 1e6:,.0f}"
        print(f"| LIMIT {limit} | {f(a)} | {f(b)} |")


def cpu_ns(pid, thread_name=None):
    """CPU time so far of every thread of a process, or of those named `thread_name`
    (schedstat: ns on a CPU)."""
    total = 0
    try:
        for tid in os.listdir(f"/proc/{pid}/task"):
            if thread_name:
                with open(f"/proc/{pid}/task/{tid}/comm") as f:
                    if f.read().strip() != thread_name:
                        continue
            with open(f"/proc/{pid}/task/{tid}/schedstat") as f:
                total += int(f.read().split()[0])
    except (FileNotFoundError, ProcessLookupError):
        pass
    return total


def cluster(conn):
    """(backend pids, background pids) of the server `conn` is connected to."""
    with open(f"/proc/{conn.info.backend_pid}/stat") as f:
        postmaster = int(f.read().rsplit(")", 1)[1].split()[1])
    backends, background = [], [postmaster]
    for p in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{p}/stat") as f:
                if int(f.read().rsplit(")", 1)[1].split()[1]) != postmaster:
                    continue
            with open(f"/proc/{p}/cmdline") as f:
                cmd = f.read()
        except (FileNotFoundError, ProcessLookupError):
            continue
        (background if cmd.startswith(("postgres: checkpointer", "postgres: background", "postgres: walwriter",
                                        "postgres: autovacuum", "postgres: logical")) else backends).append(int(p))
    return backends, background


def cpu_window(conn, client_pid, count, seconds=5.0, client_thread=None):
    """Per call over `seconds`: wall, client CPU, backends' and background CPU (µs)."""
    def snap():
        backends, background = cluster(conn)
        return (time.perf_counter(), count(), cpu_ns(client_pid, client_thread),
                sum(map(cpu_ns, backends)), sum(map(cpu_ns, background)))
    a = snap()
    time.sleep(seconds)
    b = snap()
    n = b[1] - a[1]
    per = lambda i, scale: (b[i] - a[i]) / n * scale
    return n, per(0, 1e6), per(2, 1e-3), per(3, 1e-3), per(4, 1e-3)


def cpu_main(exe):
    import subprocess
    import threading
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import python_baseline as pb
    from langgraph.checkpoint.serde.jsonplus import JsonPlusSerializer

    counters = {
        "saver_postgres/put": ("checkpoints", "bench-put", 1),
        "saver_postgres/put_writes": ("checkpoint_writes", "bench-writes", 3),
    }
    conn = psycopg.connect(URL, autocommit=True)
    print("| call | side | calls | wall µs | client CPU µs | server backends CPU µs | server background CPU µs |")
    print("|---|---|---:|---:|---:|---:|---:|")

    def row(name, side, r):
        print(f"| {name} | {side} | {r[0]:,} | {r[1]:,.0f} | {r[2]:,.0f} | {r[3]:,.0f} | {r[4]:,.0f} |", flush=True)

    for name, (table, thread, per_call) in counters.items():
        def counter(schema):
            return lambda: conn.execute(
                f"SELECT count(*) FROM {schema}.{table} WHERE thread_id = %s", (thread,)).fetchone()[0] // per_call
        proc = subprocess.Popen([exe, "--bench", f"^{name}$", "--profile-time", "12"],
                                stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        for line in proc.stdout:
            if "Profiling" in line:
                break
        time.sleep(1)
        # The calls run on the runtime's worker thread; the bench's main thread only
        # copies the messages for the next checkpoints (outside criterion's clock too).
        row(name, "Rust", cpu_window(conn, proc.pid, counter("bench_rs"), client_thread="tokio-rt-worker"))
        proc.kill()
        proc.wait()
        messages = JsonPlusSerializer().loads_typed(("msgpack", pb.read("messages300.msgpack")))["messages"][:20]
        fn = pb.postgres_cases(messages)[name]
        stop = threading.Event()

        def loop():
            while not stop.is_set():
                fn()
        t = threading.Thread(target=loop)
        t.start()
        time.sleep(1)
        row(name, "Python", cpu_window(conn, os.getpid(), counter("bench_py")))
        stop.set()
        t.join()


def pgbench_main():
    """The floor with no saver at all: PostgreSQL's own C client (`pgbench`, libpq,
    prepared statements, one connection) runs each statement of our saver back to back
    for 6 s, with the bench's values as constants (only the keys change per call, so
    every write inserts new rows as the saver's do). Beside it, Python's PostgresSaver
    on the same call (best of 5, as python_baseline.py measures it) and the time a call
    would need to be 5x faster than that. (Writes only: pgbench reads results as text,
    so a read's 10 kB blob would come back as 20 kB of hex, slower than the saver's
    binary results; EXPLAIN ANALYZE in main() gives the reads' floor instead.)"""
    import shutil
    import subprocess
    import tempfile
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import python_baseline as pb
    from langgraph.checkpoint.serde.jsonplus import JsonPlusSerializer

    pgbench = shutil.which("pgbench") or next(
        (p for p in sorted(glob.glob("/usr/lib/postgresql/*/bin/pgbench"), reverse=True)), None)
    blob = bench_blob()
    put = ours_put_lz4().replace("'bench-st', '', u.channel", "'bench-floor', '', u.channel").replace(
        "'{messages}'::text[], '{00000000000000000000000000000001.5}'::text[], '{msgpack}'::text[], ARRAY[%(blob)s]::bytea[]",
        "ARRAY['messages'], ARRAY[:r::text], ARRAY['msgpack'], ARRAY['\\x" + blob.hex() + "'::bytea]",
    ).replace("SELECT 'bench-st', '', 'id-1', NULL,", "SELECT 'bench-floor', '', 'id-' || :r, NULL,")
    writes = ours_put_writes().replace("SELECT 'bench-st', '', 'id-1',", "SELECT 'bench-floor', '', 'id-' || :r,")
    cases = [
        ("saver_postgres/round_trip", "SELECT 1"),
        ("saver_postgres/put", put),
        ("saver_postgres/put_writes", writes),
    ]
    messages = JsonPlusSerializer().loads_typed(("msgpack", pb.read("messages300.msgpack")))["messages"][:20]
    python = pb.postgres_cases(messages)
    env = dict(os.environ, PGOPTIONS="-c search_path=bench_rs")
    print("| call | pgbench: our statement, no saver (µs) | Python PostgresSaver (µs) | 5x Python needs (µs) |")
    print("|---|---:|---:|---:|")
    with tempfile.TemporaryDirectory() as d:
        for name, sql in cases:
            script = os.path.join(d, "s.sql")
            with open(script, "w") as f:
                f.write("\\set r random(1, 2000000000)\n" + " ".join(sql.split("\n")) + ";\n")
            out = subprocess.run([pgbench, "-n", "-M", "prepared", "-c1", "-T", "6", "-f", script, URL],
                                 env=env, capture_output=True, text=True, check=True).stdout
            floor = float(re.search(r"latency average = ([\d.]+) ms", out).group(1)) * 1000
            py = pb.timeit(python[name], 1.0, 5)[0] * 1e6
            print(f"| {name} | {floor:,.0f} | {py:,.0f} | {py / 5:,.0f} |", flush=True)
    with psycopg.connect(URL, autocommit=True, options="-c search_path=bench_rs") as conn:
        for table in ("checkpoints", "checkpoint_blobs", "checkpoint_writes"):
            conn.execute(f"DELETE FROM {table} WHERE thread_id = 'bench-floor'")


if __name__ == "__main__":
    import sys
    if "--cpu" in sys.argv:
        cpu_main(sys.argv[sys.argv.index("--cpu") + 1])
    elif "--pgbench" in sys.argv:
        pgbench_main()
    else:
        main()
