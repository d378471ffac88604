"""What today's Python savers (the pinned /work/venv: langgraph-checkpoint-sqlite 3.1.2,
-postgres 3.2.0) do on each fixture: does the saver open it, what does `list` /
`get_tuple` fail with, does opening change the file (WAL switch, migrations), can it
read a read-only file, and how do its reads differ from what the writing release read
(reads.json). Writes today.json per fixture; README.md summarises them.

    /work/venv/bin/python today.py          # needs the Postgres server in common.PG_SERVER
    /work/venv/bin/python today.py DIR...   # only those fixtures

FIXTURE_PG_SERVER / FIXTURE_PG_ADMIN_DB (common.py) name another server, or another
database to create and drop the scratch databases from.
"""

import glob
import hashlib
import json
import os
import shutil
import stat
import sqlite3
import sys
import tempfile
import warnings

warnings.filterwarnings("ignore")
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import common  # noqa: E402


def err(e: BaseException) -> str:
    return f"{type(e).__module__}.{type(e).__name__}: {e}".strip()


def diff(a, b, path="", out=None):
    """Paths where the recorded read `a` and today's `b` differ."""
    out = [] if out is None else out
    if isinstance(a, dict) and isinstance(b, dict):
        for k in sorted(set(a) | set(b)):
            if k not in a:
                out.append((f"{path}/{k}", "<absent>", b[k]))
            elif k not in b:
                out.append((f"{path}/{k}", a[k], "<absent>"))
            else:
                diff(a[k], b[k], f"{path}/{k}", out)
    elif isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
        for i, (x, y) in enumerate(zip(a, b)):
            diff(x, y, f"{path}/{i}", out)
    elif a != b:
        out.append((path, a, b))
    return out


def short(v):
    s = json.dumps(v, sort_keys=True)
    return s if len(s) <= 160 else s[:157] + "..."


def compare(recorded, saver) -> dict:
    res = {}
    for t, want in recorded["threads"].items():
        try:
            got = common.reads(saver, [t])[t]
        except Exception as e:  # noqa: BLE001
            res[t] = {"error": err(e)}
            continue
        d = diff(want, got)
        res[t] = {
            "checkpoints_recorded": len(want["list"]),
            "checkpoints_today": len(got["list"]),
            "differences": len(d),
            "first_differences": [[p, short(x), short(y)] for p, x, y in d[:12]],
            "datetime_to_none": sorted(
                {p.split("/", 3)[-1] for p, x, y in d if isinstance(x, dict) and "$datetime" in x and y is None}
            ),
        }
    return res


def sha(path):
    return hashlib.sha256(open(path, "rb").read()).hexdigest()


def journal(path):
    b = open(path, "rb").read(20)
    return {1: "rollback", 2: "wal"}.get(b[18], str(b[18]))


# Stores written through `EncryptedSerializer` (`*-aes-*`) are read with their fixture
# key (their generate.py sets it), as their writer read them.
FIXTURE_AES_KEY = b"0123456789abcdef"


def serde_for(d: str):
    if "-aes-" not in os.path.basename(d):
        return None
    from langgraph.checkpoint.serde.encrypted import EncryptedSerializer

    return EncryptedSerializer.from_pycryptodome_aes(key=FIXTURE_AES_KEY)


def sqlite_fixture(d: str) -> dict:
    from langgraph.checkpoint.sqlite import SqliteSaver

    recorded = json.load(open(os.path.join(d, "reads.json")))
    out = {"journal_mode_in_file": journal(os.path.join(d, "store.sqlite"))}
    with tempfile.TemporaryDirectory() as tmp:
        p = os.path.join(tmp, "store.sqlite")
        shutil.copy(os.path.join(d, "store.sqlite"), p)
        before = sha(p)
        conn = sqlite3.connect(p, check_same_thread=False)
        saver = SqliteSaver(conn, serde=serde_for(d))
        out["read_write_file"] = compare(recorded, saver)
        conn.close()
        out["file_changed_by_reading"] = sha(p) != before
        out["journal_mode_after"] = journal(p)
        c = sqlite3.connect(p)
        out["writes_columns_after"] = [r[1] for r in c.execute("PRAGMA table_info(writes)")]
        c.close()
    with tempfile.TemporaryDirectory() as tmp:
        p = os.path.join(tmp, "store.sqlite")
        shutil.copy(os.path.join(d, "store.sqlite"), p)
        os.chmod(p, stat.S_IRUSR | stat.S_IRGRP | stat.S_IROTH)
        os.chmod(tmp, stat.S_IRUSR | stat.S_IXUSR)
        try:
            conn = sqlite3.connect(f"file:{p}?mode=ro", uri=True, check_same_thread=False)
            out["read_only_file"] = compare(recorded, SqliteSaver(conn, serde=serde_for(d)))
            conn.close()
        except Exception as e:  # noqa: BLE001
            out["read_only_file"] = {"error": err(e)}
        finally:
            os.chmod(tmp, stat.S_IRWXU)
    # Every old saver left its file in WAL mode; a file that was since put back to a
    # rollback journal shows what today's setup() does to the mode.
    with tempfile.TemporaryDirectory() as tmp:
        p = os.path.join(tmp, "store.sqlite")
        shutil.copy(os.path.join(d, "store.sqlite"), p)
        c = sqlite3.connect(p)
        c.execute("PRAGMA journal_mode=DELETE")
        c.close()
        res = {"journal_mode_before": journal(p)}
        conn = sqlite3.connect(p, check_same_thread=False)
        try:
            list(SqliteSaver(conn, serde=serde_for(d)).list({"configurable": {"thread_id": "t-main"}}))
            res["list"] = "ok"
        except Exception as e:  # noqa: BLE001
            res["list"] = err(e)
        conn.close()
        res["journal_mode_after"] = journal(p)
        c = sqlite3.connect(p)
        c.execute("PRAGMA journal_mode=DELETE")
        c.close()
        os.chmod(p, stat.S_IRUSR | stat.S_IRGRP | stat.S_IROTH)
        try:
            conn = sqlite3.connect(f"file:{p}?mode=ro", uri=True, check_same_thread=False)
            list(SqliteSaver(conn, serde=serde_for(d)).list({"configurable": {"thread_id": "t-main"}}))
            res["read_only_list"] = "ok"
            conn.close()
        except Exception as e:  # noqa: BLE001
            res["read_only_list"] = err(e)
        out["rollback_journal_copy"] = res
    # A file without `type` columns (LangGraph 0.1) holds JSON: what today's
    # serializer makes of those bytes as ("json", bytes), e.g. after a naive copy.
    c = sqlite3.connect(f"file:{os.path.join(d, 'store.sqlite')}?mode=ro&immutable=1", uri=True)
    cols = [r[1] for r in c.execute("PRAGMA table_info(checkpoints)")]
    if "type" not in cols:
        from langgraph.checkpoint.serde.jsonplus import JsonPlusSerializer

        serde = JsonPlusSerializer()
        recorded = json.load(open(os.path.join(d, "reads.json")))
        want = {}
        for t in recorded["threads"].values():
            for x in t["list"]:
                tup = x["$CheckpointTuple"]
                want[tup["checkpoint"]["id"]] = tup
        diffs = []
        for (blob, meta) in c.execute("SELECT checkpoint, metadata FROM checkpoints"):
            got_cp = common.canon(serde.loads_typed(("json", blob)))
            got_meta = common.canon(serde.loads_typed(("json", meta)))
            w = want.get(got_cp.get("id"))
            if w is None:
                continue
            diffs += [(p, x, y) for p, x, y in diff(w["checkpoint"], got_cp, "/checkpoint")]
            diffs += [(p, x, y) for p, x, y in diff(w["metadata"], got_meta, "/metadata")]
        out["json_bytes_via_todays_serializer"] = {
            "differences": len(diffs),
            "datetime_to_none": sorted(
                {p for p, x, y in diffs if isinstance(x, dict) and "$datetime" in x and y is None}
            ),
            "first_differences": [[p, short(x), short(y)] for p, x, y in diffs[:12]],
        }
    c.close()
    return out


def pg_rows_digest(conn) -> str:
    return hashlib.sha256(json.dumps(common.postgres_rows(conn), sort_keys=True).encode()).hexdigest()


def pg_tables(conn):
    return sorted(
        r["table_name"]
        for r in conn.execute(
            "SELECT table_name FROM information_schema.tables WHERE table_schema = 'public'"
        ).fetchall()
    )


def postgres_fixture(d: str) -> dict:
    import psycopg
    from psycopg.rows import dict_row

    from langgraph.checkpoint.postgres import PostgresSaver

    recorded = json.load(open(os.path.join(d, "reads.json")))
    name = "h_old_today_" + os.path.basename(d).replace("-", "_").replace(".", "_")
    url = common.fresh_pg_database(name)
    with psycopg.connect(url, autocommit=True) as c:
        c.execute(open(os.path.join(d, "dump.sql")).read())
    out = {}
    with psycopg.connect(url, autocommit=True, prepare_threshold=0, row_factory=dict_row) as conn:
        before = pg_rows_digest(conn)
        saver = PostgresSaver(conn)
        out["before_setup"] = compare(recorded, saver)
        out["rows_changed_by_reading"] = pg_rows_digest(conn) != before
        try:
            saver.setup()
            out["setup"] = "ok"
        except Exception as e:  # noqa: BLE001
            out["setup"] = err(e)
        out["migrations_after_setup"] = (
            [r["v"] for r in conn.execute("SELECT v FROM checkpoint_migrations ORDER BY v")]
            if "checkpoint_migrations" in pg_tables(conn)
            else None
        )
        out["after_setup"] = compare(recorded, saver)
    with psycopg.connect(f"{common.PG_SERVER}/{common.PG_ADMIN_DB}", autocommit=True) as c:
        c.execute(f'DROP DATABASE IF EXISTS "{url.rsplit("/", 1)[1]}"')
    return out


def main():
    only = set(sys.argv[1:])
    for d in sorted(glob.glob(os.path.join(HERE, "*/"))):
        d = d.rstrip("/")
        if only and os.path.basename(d) not in only:
            continue
        if os.path.exists(os.path.join(d, "store.sqlite")):
            res = sqlite_fixture(d)
        elif os.path.exists(os.path.join(d, "dump.sql")):
            res = postgres_fixture(d)
        else:
            continue
        res["versions"] = common.versions()
        common.write_json(os.path.join(d, "today.json"), res)
        print(os.path.basename(d), "done")


if __name__ == "__main__":
    main()
