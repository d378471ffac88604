#!/usr/bin/env python3
"""Python baseline for the criterion benches, printed side by side with the Rust numbers.

    cargo bench                                  # writes target/criterion/*/*/new/estimates.json
    python3 benches/python_baseline.py           # measures Python, prints the table

Measures the real Python package (langgraph-checkpoint, pycryptodome) on the same
payload files the Rust benches read (vectors/payloads/), reads criterion's mean
estimates, and prints one Markdown table: Rust time, Python time, and the speed-up
(Python time / Rust time), with the speed-up each id aims at (`ROWS` below).

It re-executes itself with /work/venv/bin/python, .venv/bin/python or .ci-venv/bin/python
when the running interpreter lacks langgraph (override with LGCODEC_PYTHON).
Options: --quick (fewer repeats), --json (machine-readable output instead of the table),
--only PREFIX (measure and print only the cases whose id starts with PREFIX, e.g.
`--only saver_postgres/`, to set them beside single criterion ids).
"""
import datetime
import json
import os
import platform
import statistics
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PAYLOADS = os.path.join(ROOT, "vectors", "payloads")
CRITERION = os.path.join(ROOT, "target", "criterion")
KEY = b"0123456789abcdef0123456789abcdef"  # 32 bytes: AES-256, as in the Rust benches


def ensure_python():
    try:
        import langgraph.checkpoint.serde.jsonplus  # noqa: F401
        import Crypto  # noqa: F401
        return
    except ImportError:
        pass
    candidates = [os.environ.get("LGCODEC_PYTHON")] + [
        os.path.join(p, "bin", "python")
        for p in ("/work/venv", os.path.join(ROOT, ".venv"), os.path.join(ROOT, ".ci-venv"))
    ]
    if os.environ.get("LGCODEC_BASELINE_REEXEC"):
        candidates = []
    for py in candidates:
        if py and os.path.exists(py):
            os.environ["LGCODEC_BASELINE_REEXEC"] = "1"
            os.execv(py, [py] + sys.argv)
    sys.exit("needs langgraph-checkpoint==4.3.2 and pycryptodome (pip install -r vectors/requirements.txt)")


def timeit(fn, min_time, repeats):
    """Mean seconds per call: `repeats` rounds of at least `min_time` each, best round."""
    fn()
    n = 1
    while True:
        t0 = time.perf_counter()
        for _ in range(n):
            fn()
        dt = time.perf_counter() - t0
        if dt >= min_time / 4:
            break
        n *= 2
    n = max(1, int(n * (min_time / 4) / dt * 4)) if dt > 0 else n
    rounds = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        for _ in range(n):
            fn()
        rounds.append((time.perf_counter() - t0) / n)
    return min(rounds), statistics.median(rounds)


def only_prefix():
    """The PREFIX of `--only PREFIX`, or "" (everything)."""
    args = sys.argv[1:]
    if "--only" in args and args.index("--only") + 1 < len(args):
        return args[args.index("--only") + 1]
    return ""


def read(name):
    with open(os.path.join(PAYLOADS, name), "rb") as f:
        return f.read()


def python_measurements(min_time, repeats):
    from Crypto.Cipher import AES
    from langgraph.checkpoint.base import empty_checkpoint
    from langgraph.checkpoint.memory import InMemorySaver
    from langgraph.checkpoint.serde.encrypted import EncryptedSerializer
    from langgraph.checkpoint.serde.jsonplus import JsonPlusSerializer

    serde = JsonPlusSerializer()
    messages = read("messages300.msgpack")
    checkpoint = read("checkpoint_plain.msgpack")
    blob = read("blob_1mib.bin")
    messages_obj = serde.loads_typed(("msgpack", messages))
    checkpoint_obj = serde.loads_typed(("msgpack", checkpoint))
    assert serde.dumps_typed(messages_obj) == ("msgpack", messages)
    assert serde.dumps_typed(checkpoint_obj) == ("msgpack", checkpoint)

    eax = EncryptedSerializer.from_pycryptodome_aes(key=KEY)
    gcm = EncryptedSerializer.from_pycryptodome_aes(key=KEY, mode=AES.MODE_GCM)
    eax_row = eax.dumps_typed(blob)
    gcm_row = gcm.dumps_typed(blob)
    assert eax_row[0] == "bytes+aes" and eax.loads_typed(eax_row) == blob
    assert gcm.loads_typed(gcm_row) == blob

    # The small row of benches/crypto.rs `roundtrip/*` (104 msgpack bytes).
    small = {"role": "user", "content": "What is the weather like in Paris today?",
             "id": "msg-0001", "step": 3, "tags": ["a", "b"], "score": 0.5}
    assert len(serde.dumps_typed(small)[1]) == 104

    def roundtrip(enc):
        return lambda: enc.loads_typed(enc.dumps_typed(small))

    def bare_gcm():
        c = AES.new(KEY, AES.MODE_GCM, nonce=os.urandom(16))
        c.encrypt_and_digest(blob)

    def bare_eax():
        c = AES.new(KEY, AES.MODE_EAX, nonce=os.urandom(16))
        c.encrypt_and_digest(blob)

    saver = InMemorySaver(serde=eax)
    config = {"configurable": {"thread_id": "bench", "checkpoint_ns": ""}}
    cp = empty_checkpoint()
    cp["channel_values"] = {"messages": messages_obj["messages"]}
    cp["channel_versions"] = {"messages": saver.get_next_version(None, None)}
    versions = dict(cp["channel_versions"])
    metadata = {"source": "loop", "step": 1, "parents": {}}

    def put_get():
        stored = saver.put(config, cp, metadata, versions)
        got = saver.get_tuple(stored)
        assert got is not None

    put_get()
    got = saver.get_tuple(saver.put(config, cp, metadata, versions))
    assert len(got.checkpoint["channel_values"]["messages"]) == 300

    cases = {
        "loads/messages300": lambda: serde.loads_typed(("msgpack", messages)),
        "dumps/messages300": lambda: serde.dumps_typed(messages_obj),
        "loads/checkpoint_plain": lambda: serde.loads_typed(("msgpack", checkpoint)),
        "dumps/checkpoint_plain": lambda: serde.dumps_typed(checkpoint_obj),
        "encrypt/eax_1mib": lambda: eax.dumps_typed(blob),
        "decrypt/eax_1mib": lambda: eax.loads_typed(eax_row),
        "encrypt/gcm_1mib": lambda: gcm.dumps_typed(blob),
        "decrypt/gcm_1mib": lambda: gcm.loads_typed(gcm_row),
        "roundtrip/eax_small_row": roundtrip(eax),
        "roundtrip/gcm_small_row": roundtrip(gcm),
        "pycryptodome/gcm_1mib": bare_gcm,
        "pycryptodome/eax_1mib": bare_eax,
        "saver/put_get_messages300_encrypted": put_get,
    }
    cases.update(sqlite_cases(messages_obj["messages"][:20]))
    cases.update(postgres_cases(messages_obj["messages"][:20]))
    out = {}
    # The Python cases the selected rows compare with (`--only saver_durable` needs
    # `saver_sqlite/put` and `saver_postgres/put`).
    needed = {pid for rid, pid, *_ in ROWS if pid and (rid or pid).startswith(only_prefix())}
    for name, fn in cases.items():
        if not name.startswith(only_prefix()) and name not in needed:
            continue
        best, median = timeit(fn, min_time, repeats)
        out[name] = {"best_s": best, "median_s": median}
        print(f"  python {name}: {best * 1e6:,.1f} µs", file=sys.stderr)
    return out


def sqlite_cases(messages):
    """Python's SqliteSaver on the workload of benches/saver_sqlite.rs: a thread of 300
    checkpoints holding 20 messages each, with 3 pending writes each."""
    import sqlite3
    import tempfile

    from langgraph.checkpoint.base import empty_checkpoint
    from langgraph.checkpoint.base.id import uuid6
    from langgraph.checkpoint.sqlite import SqliteSaver

    tmp = tempfile.mkdtemp(prefix="lgcodec-bench-py-sqlite-")
    saver = SqliteSaver(sqlite3.connect(os.path.join(tmp, "bench.sqlite"), check_same_thread=False))
    writes = [("messages", messages[:1]), ("step", 1), ("notes", "a short note")]

    def checkpoint(step):
        cp = empty_checkpoint()
        cp["id"] = str(uuid6(clock_seq=step))
        cp["channel_values"] = {"messages": messages}
        return cp

    thread = {"configurable": {"thread_id": "bench", "checkpoint_ns": ""}}
    config = thread
    for step in range(300):
        config = saver.put(config, checkpoint(step), {"source": "loop", "step": step, "parents": {}}, {})
        saver.put_writes(config, writes, "task-1", "")
    put_thread = {"configurable": {"thread_id": "bench-put", "checkpoint_ns": ""}}
    md = {"source": "loop", "step": 1, "parents": {}}
    writes_at = saver.put({"configurable": {"thread_id": "bench-writes", "checkpoint_ns": ""}},
                          checkpoint(0), md, {})
    task = [0]

    def put_writes():
        task[0] += 1
        saver.put_writes(writes_at, writes, f"task-{task[0]}", "")

    def list_limit10():
        assert len(list(saver.list(thread, limit=10))) == 10

    def list_all():
        assert len(list(saver.list(thread))) == 300

    assert len(saver.get_tuple(thread).checkpoint["channel_values"]["messages"]) == 20
    return {
        "saver_sqlite/put": lambda: saver.put(put_thread, checkpoint(1), md, {}),
        "saver_sqlite/put_writes": put_writes,
        "saver_sqlite/get_tuple": lambda: saver.get_tuple(thread),
        "saver_sqlite/list_limit10": list_limit10,
        "saver_sqlite/list_all": list_all,
    }


def postgres_cases(messages):
    """Python's PostgresSaver on the workload of benches/saver_postgres.rs (a thread of
    300 checkpoints holding 20 messages each, in schema bench_py), when
    LGCODEC_TEST_PG_URL names a server; otherwise none."""
    url = os.environ.get("LGCODEC_TEST_PG_URL")
    if not url:
        print("  python saver_postgres/*: skipped, LGCODEC_TEST_PG_URL is not set", file=sys.stderr)
        return {}
    import itertools

    import psycopg
    from psycopg.rows import dict_row
    from langgraph.checkpoint.base import empty_checkpoint
    from langgraph.checkpoint.postgres import PostgresSaver

    admin = psycopg.Connection.connect(url, autocommit=True)
    admin.execute("CREATE SCHEMA IF NOT EXISTS bench_py")
    conn = psycopg.Connection.connect(url, autocommit=True, prepare_threshold=0,
                                      row_factory=dict_row, options="-c search_path=bench_py")
    saver = PostgresSaver(conn)
    saver.setup()
    for t in ("bench-300", "bench-put", "bench-writes"):
        saver.delete_thread(t)
    metadata = {"source": "loop", "step": 1, "parents": {}}

    def checkpoint(prev_version):
        cp = empty_checkpoint()
        cp["channel_values"] = {"messages": messages}
        v = saver.get_next_version(prev_version, None)
        cp["channel_versions"] = {"messages": v}
        return cp, {"messages": v}

    thread = {"configurable": {"thread_id": "bench-300", "checkpoint_ns": ""}}
    cfg, version = thread, None
    for _ in range(300):
        cp, nv = checkpoint(version)
        cfg, version = saver.put(cfg, cp, metadata, nv), nv["messages"]
    cp, nv = checkpoint(None)
    writes_target = saver.put({"configurable": {"thread_id": "bench-writes", "checkpoint_ns": ""}}, cp, metadata, nv)
    admin.execute("ANALYZE bench_py.checkpoints, bench_py.checkpoint_blobs, bench_py.checkpoint_writes")
    latest = {"configurable": {"thread_id": "bench-300"}}
    put_parent = [{"configurable": {"thread_id": "bench-put", "checkpoint_ns": ""}}]
    counter = itertools.count()
    writes = [(f"channel{i}", f"value {i}") for i in range(3)]

    def put():
        cp, nv = checkpoint(None)
        put_parent[0] = saver.put(put_parent[0], cp, metadata, nv)

    def list_all():
        assert len(list(saver.list(latest))) == 300

    def round_trip():
        with conn.cursor() as cur:
            cur.execute("SELECT 1")
            cur.fetchone()

    def get_tuple_statement():
        # PostgresSaver.get_tuple up to its fetchone (langgraph-checkpoint-postgres
        # 3.2.0), without _load_checkpoint_tuple: its statement through its cursor.
        where = "WHERE thread_id = %s AND checkpoint_ns = %s ORDER BY checkpoint_id DESC LIMIT 1"
        with saver._cursor() as cur:
            cur.execute(saver.SELECT_SQL + where, ("bench-300", ""))
            assert cur.fetchone() is not None

    return {
        "saver_postgres/round_trip": round_trip,
        "saver_postgres/get_tuple": lambda: saver.get_tuple(latest),
        "saver_postgres/get_tuple_statement": get_tuple_statement,
        "saver_postgres/list_limit10": lambda: list(saver.list(latest, limit=10)),
        "saver_postgres/list_all": list_all,
        "saver_postgres/put": put,
        "saver_postgres/put_writes": lambda: saver.put_writes(writes_target, writes, f"task-{next(counter)}"),
    }


def criterion_estimates():
    est = {}
    if not os.path.isdir(CRITERION):
        return est
    for group in sorted(os.listdir(CRITERION)):
        gdir = os.path.join(CRITERION, group)
        if not os.path.isdir(gdir):
            continue
        for bench in sorted(os.listdir(gdir)):
            path = os.path.join(gdir, bench, "new", "estimates.json")
            if os.path.exists(path):
                with open(path) as f:
                    e = json.load(f)
                est[f"{group}/{bench}"] = e["mean"]["point_estimate"] * 1e-9
    return est


# (Rust id, Python case, target speed-up or None, note)
ROWS = [
    ("loads/messages300_value", "loads/messages300", 25, "JsonPlus loads_typed"),
    ("loads/messages300_typed", "loads/messages300", 25, "JsonPlus loads_typed"),
    ("loads/messages300_borrowed", "loads/messages300", 60, "JsonPlus loads_typed; Rust: ValueRef, nothing copied"),
    ("loads/messages300_typed_borrowed", "loads/messages300", None,
     "JsonPlus loads_typed; Rust: serde into BorrowedMessage (strings borrowed, each item read twice)"),
    ("dumps/messages300_value", "dumps/messages300", 15, "JsonPlus dumps_typed"),
    ("dumps/messages300_typed", "dumps/messages300", 15, "JsonPlus dumps_typed"),
    ("loads/checkpoint_plain_value", "loads/checkpoint_plain", 20, "JsonPlus loads_typed"),
    ("loads/checkpoint_plain_borrowed", "loads/checkpoint_plain", 5,
     "JsonPlus loads_typed; Rust: ValueRef, nothing copied"),
    ("dumps/checkpoint_plain_value", "dumps/checkpoint_plain", 10, "JsonPlus dumps_typed"),
    ("encrypt/eax_1mib", "encrypt/eax_1mib", 1.5, "EncryptedSerializer EAX dumps_typed"),
    ("decrypt/eax_1mib", "decrypt/eax_1mib", 1.5, "EncryptedSerializer EAX loads_typed"),
    ("encrypt/gcm_1mib", "encrypt/gcm_1mib", 1.0, "EncryptedSerializer GCM dumps_typed"),
    ("decrypt/gcm_1mib", "decrypt/gcm_1mib", 1.0, "EncryptedSerializer GCM loads_typed"),
    ("roundtrip/eax_small_row", "roundtrip/eax_small_row", 20,
     "EncryptedSerializer EAX dumps_typed + loads_typed, 104-byte row"),
    ("roundtrip/gcm_small_row", "roundtrip/gcm_small_row", 20,
     "EncryptedSerializer GCM dumps_typed + loads_typed, 104-byte row"),
    ("saver/put_get_messages300_encrypted", "saver/put_get_messages300_encrypted", 12,
     "InMemorySaver + EncryptedSerializer EAX: put + get_tuple"),
    ("saver_sqlite/put", "saver_sqlite/put", 5, "SqliteSaver.put, 20 messages, file on disk"),
    ("saver_sqlite/put_writes", "saver_sqlite/put_writes", 5, "SqliteSaver.put_writes, 3 writes"),
    ("saver_sqlite/get_tuple", "saver_sqlite/get_tuple", 5, "SqliteSaver.get_tuple (latest of 300)"),
    ("saver_sqlite/list_limit10", "saver_sqlite/list_limit10", 5, "SqliteSaver.list(limit=10)"),
    ("saver_sqlite/list_all", "saver_sqlite/list_all", 5, "SqliteSaver.list, all 300"),
    ("saver_postgres/round_trip", "saver_postgres/round_trip", None, "bare SELECT 1 (psycopg / tokio-postgres): the floor of one round trip"),
    ("saver_postgres/put", "saver_postgres/put", 5, "PostgresSaver put, 20-message blob, loopback"),
    ("saver_postgres/put_writes", "saver_postgres/put_writes", 5, "PostgresSaver put_writes (3 writes)"),
    ("saver_postgres/get_tuple", "saver_postgres/get_tuple", 5, "PostgresSaver get_tuple (latest of 300)"),
    ("saver_postgres/get_tuple_statement", "saver_postgres/get_tuple_statement", None,
     "get_tuple's statement alone, no decoding (tokio-postgres, reply dropped unread / PostgresSaver's cursor up to fetchone)"),
    ("saver_postgres/list_limit10", "saver_postgres/list_limit10", 5, "PostgresSaver list(limit=10)"),
    ("saver_postgres/list_all", "saver_postgres/list_all", 5, "PostgresSaver list (all 300)"),
    ("saver_durable_sqlite/sync_put", "saver_sqlite/put", None,
     "DurableSaver sync over SqliteSaver (the store's put); Python: SqliteSaver.put"),
    ("saver_durable_sqlite/async_put", "saver_sqlite/put", None,
     "DurableSaver async: caller-visible put (queued); Python: SqliteSaver.put"),
    ("saver_durable_sqlite/async_drain_per_put", "saver_sqlite/put", None,
     "DurableSaver async: sustained queue + store, per put (1/x = drain rate)"),
    ("saver_durable_postgres/sync_put", "saver_postgres/put", None,
     "DurableSaver sync over PostgresSaver; Python: PostgresSaver put"),
    ("saver_durable_postgres/async_put", "saver_postgres/put", None,
     "DurableSaver async: caller-visible put (queued); Python: PostgresSaver put"),
    ("saver_durable_postgres/async_drain_per_put", "saver_postgres/put", None,
     "DurableSaver async: sustained queue + store, per put (1/x = drain rate)"),
    ("reference/memcpy_1mib", None, None, "copy 1 MiB"),
    ("reference/aes_gcm_crate_1mib", "pycryptodome/gcm_1mib", None,
     "bare aes-gcm crate vs bare pycryptodome GCM"),
    ("reference/rmpv_decode_messages300", None, None, "generic rmpv decoder"),
    ("reference/rmpv_decode_messages300_deep", None, None, "rmpv, ext payloads decoded too"),
    (None, "pycryptodome/eax_1mib", None, "bare pycryptodome EAX"),
]


def fmt_time(s):
    if s is None:
        return "—"
    if s >= 1e-3:
        return f"{s * 1e3:,.2f} ms"
    return f"{s * 1e6:,.1f} µs"


def machine():
    cpu = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    cpu = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    try:
        rustc = subprocess.run(["rustc", "--version"], capture_output=True, text=True).stdout.strip()
    except OSError:
        rustc = "rustc ?"
    from importlib.metadata import version

    return (
        f"{datetime.date.today().isoformat()}, {cpu}, {os.cpu_count()} logical CPUs, "
        f"{platform.system()} {platform.release()}; {rustc}, default flags; "
        f"Python {platform.python_version()}, langgraph-checkpoint {version('langgraph-checkpoint')}, "
        f"ormsgpack {version('ormsgpack')}, pycryptodome {version('pycryptodome')}"
    )


def main():
    ensure_python()
    quick = "--quick" in sys.argv
    py = python_measurements(min_time=0.2 if quick else 0.5, repeats=3 if quick else 5)
    rust = criterion_estimates()
    if "--json" in sys.argv:
        print(json.dumps({"machine": machine(), "python": py, "rust": rust}, indent=2))
        return
    print(f"Measured {machine()}.\n")
    print("| benchmark | Rust | Python | speed-up | target | Python side |")
    print("|---|---:|---:|---:|---:|---|")
    rows = [r for r in ROWS if (r[0] or r[1]).startswith(only_prefix())]
    for rid, pid, target, note in rows:
        r = rust.get(rid) if rid else None
        p = py[pid]["best_s"] if pid in py else None
        ratio = f"{p / r:,.1f}×" if (r and p) else "—"
        verdict = ""
        if target is not None and r and p:
            verdict = f"≥ {target:g}× {'✓' if p / r >= target else '✗'}"
        elif target is not None:
            verdict = f"≥ {target:g}×"
        print(f"| `{rid or '—'}` | {fmt_time(r)} | {fmt_time(p)} | {ratio} | {verdict} | {note} |")
    missing = [rid for rid, *_ in rows if rid and rid not in rust]
    if missing:
        print(f"\nNo criterion result yet for: {', '.join(missing)} (run `cargo bench`).")
    refs = {k: rust.get(k) for k in ("loads/messages300_value", "reference/rmpv_decode_messages300",
                                      "reference/rmpv_decode_messages300_deep", "loads/messages300_typed")}
    if refs["loads/messages300_value"] and refs["reference/rmpv_decode_messages300"]:
        v = refs["loads/messages300_value"]
        print(f"\nValue loads / bare rmpv: {v / refs['reference/rmpv_decode_messages300']:.2f}× "
              "(target ≤ 1.5×; rmpv leaves the 300 ext payloads undecoded)")
        if refs["reference/rmpv_decode_messages300_deep"]:
            print(f"Value loads / rmpv decoding ext payloads too: "
                  f"{v / refs['reference/rmpv_decode_messages300_deep']:.2f}×")
    borrowed = rust.get("loads/messages300_borrowed")
    if borrowed and refs["loads/messages300_value"]:
        print(f"Borrowed loads / Value loads: {borrowed / refs['loads/messages300_value']:.2f}× "
              "(ValueRef: no string or bytes copied)")
    if refs["loads/messages300_typed"] and refs["loads/messages300_value"]:
        print(f"Typed loads / Value loads: {refs['loads/messages300_typed'] / refs['loads/messages300_value']:.2f}× "
              "(target ≤ 1×)")


if __name__ == "__main__":
    main()
