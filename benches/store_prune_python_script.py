"""What a user does today to prune a checkpoint store with Python's savers: the baseline
`lgcodec store prune` is measured against (benches/README.md, "Store commands beside a
Python script").

    python benches/store_prune_python_script.py STORE                      # keep the latest
    python benches/store_prune_python_script.py STORE --before DATE        # drop the older
    python benches/store_prune_python_script.py STORE --idle-since DATE    # drop idle threads

DATE is UTC, as `lgcodec store prune` takes it (2024-01-31 or 2024-01-31T12:00:00Z).

Keep the latest (`lgcodec store prune --keep-latest 1`):
- Postgres (`postgres://` / `postgresql://` URL): Python's own
  `PostgresSaver.prune(thread_ids, strategy="keep_latest")` (langgraph-checkpoint-postgres
  3.2.0) over every thread. It keeps the latest checkpoint of each namespace only (no N),
  and refuses every thread if one uses a DeltaChannel.
- SQLite (`sqlite:PATH` or a path): Python's `SqliteSaver` (3.1.2) has no prune
  (`BaseCheckpointSaver.prune` raises NotImplementedError), so this runs the raw SQL a
  user would write instead: delete every checkpoint that is not the latest of its thread
  and namespace, and the writes of those checkpoints, in one transaction. It knows
  nothing of DeltaChannels (a thread using one reads back with its delta channels
  empty).

Before DATE (`--before DATE`: checkpoints older than DATE go, except the latest of each
thread and namespace; a kept checkpoint whose parent goes is left with no parent). No
saver has this rule, so it is SQL in one transaction: the doomed checkpoints into a
temporary table, then their writes, the parent ids pointing at them and the
checkpoints themselves deleted; on Postgres also the blobs they reference that no
remaining checkpoint of their namespace references (what `PostgresSaver.prune` does
with the blobs of the checkpoints it drops). A checkpoint's time: on Postgres its
`checkpoint ->> 'ts'` (ISO 8601, compared as text); on SQLite the checkpoint is a
serialized blob SQL cannot read, so the time in its uuid6 id: the ids are compared
with the smallest uuid6 of DATE (they sort by time). Python makes `ts` and the id from
one clock reading; lgcodec reads the id's.

Idle since DATE (`--idle-since DATE`: threads whose latest checkpoint is older than
DATE go whole): the threads found with one `GROUP BY` (Postgres: `max(ts)`, SQLite:
`max(checkpoint_id)` against DATE's uuid6), then on Postgres Python's own
`PostgresSaver.prune(threads, strategy="delete")`, on SQLite `DELETE … WHERE thread_id
IN (…)` from the writes and the checkpoints in one transaction.

Prints one JSON object: threads, threads deleted whole, checkpoints before and after,
seconds (of the deletes; the bench times the whole process).
"""

from __future__ import annotations

import datetime as dt
import json
import sqlite3
import sys
import time

SQLITE_KEEP_LATEST = [
    "DELETE FROM writes WHERE (thread_id, checkpoint_ns, checkpoint_id) NOT IN "
    "(SELECT thread_id, checkpoint_ns, max(checkpoint_id) FROM checkpoints GROUP BY thread_id, checkpoint_ns)",
    "DELETE FROM checkpoints WHERE (thread_id, checkpoint_ns, checkpoint_id) NOT IN "
    "(SELECT thread_id, checkpoint_ns, max(checkpoint_id) FROM checkpoints GROUP BY thread_id, checkpoint_ns)",
]

# ? : the smallest uuid6 of DATE.
SQLITE_BEFORE = [
    "CREATE TEMP TABLE doomed AS SELECT thread_id, checkpoint_ns, checkpoint_id FROM checkpoints c "
    "WHERE checkpoint_id < ? AND checkpoint_id < (SELECT max(checkpoint_id) FROM checkpoints l "
    "WHERE l.thread_id = c.thread_id AND l.checkpoint_ns = c.checkpoint_ns)",
    "DELETE FROM writes WHERE (thread_id, checkpoint_ns, checkpoint_id) IN (SELECT * FROM doomed)",
    "UPDATE checkpoints SET parent_checkpoint_id = NULL "
    "WHERE (thread_id, checkpoint_ns, parent_checkpoint_id) IN (SELECT * FROM doomed)",
    "DELETE FROM checkpoints WHERE (thread_id, checkpoint_ns, checkpoint_id) IN (SELECT * FROM doomed)",
    "DROP TABLE doomed",
]

SQLITE_IDLE_THREADS = "SELECT thread_id FROM checkpoints GROUP BY thread_id HAVING max(checkpoint_id) < ?"
SQLITE_IDLE = [
    f"DELETE FROM writes WHERE thread_id IN ({SQLITE_IDLE_THREADS})",
    f"DELETE FROM checkpoints WHERE thread_id IN ({SQLITE_IDLE_THREADS})",
]

# %s : DATE as Python's isoformat (2024-01-31T12:00:00+00:00), as `ts` is written.
PG_BEFORE = [
    "CREATE TEMP TABLE doomed ON COMMIT DROP AS "
    "SELECT thread_id, checkpoint_ns, checkpoint_id, checkpoint -> 'channel_versions' AS versions "
    "FROM checkpoints c WHERE checkpoint ->> 'ts' < %s AND checkpoint_id < (SELECT max(checkpoint_id) "
    "FROM checkpoints l WHERE l.thread_id = c.thread_id AND l.checkpoint_ns = c.checkpoint_ns)",
    "DELETE FROM checkpoint_writes w USING doomed d WHERE w.thread_id = d.thread_id "
    "AND w.checkpoint_ns = d.checkpoint_ns AND w.checkpoint_id = d.checkpoint_id",
    "DELETE FROM checkpoints c USING doomed d WHERE c.thread_id = d.thread_id "
    "AND c.checkpoint_ns = d.checkpoint_ns AND c.checkpoint_id = d.checkpoint_id",
    "UPDATE checkpoints c SET parent_checkpoint_id = NULL FROM doomed d WHERE c.thread_id = d.thread_id "
    "AND c.checkpoint_ns = d.checkpoint_ns AND c.parent_checkpoint_id = d.checkpoint_id",
    "DELETE FROM checkpoint_blobs b USING (SELECT DISTINCT d.thread_id, d.checkpoint_ns, e.key, e.value "
    "FROM doomed d CROSS JOIN LATERAL jsonb_each_text(d.versions) e) f "
    "WHERE b.thread_id = f.thread_id AND b.checkpoint_ns = f.checkpoint_ns AND b.channel = f.key "
    "AND b.version = f.value AND NOT EXISTS (SELECT 1 FROM checkpoints c WHERE c.thread_id = b.thread_id "
    "AND c.checkpoint_ns = b.checkpoint_ns AND c.checkpoint -> 'channel_versions' ->> b.channel = b.version)",
]

PG_IDLE_THREADS = "SELECT thread_id FROM checkpoints GROUP BY thread_id HAVING max(checkpoint ->> 'ts') < %s"


def parse_date(text: str) -> dt.datetime:
    """DATE as `lgcodec store prune` takes it: a UTC date or date and time."""
    t = dt.datetime.fromisoformat(text.strip().replace("Z", "+00:00"))
    if t.tzinfo is None:
        t = t.replace(tzinfo=dt.timezone.utc)
    if t.utcoffset() != dt.timedelta(0):
        sys.exit(f"{text}: only UTC is accepted")
    return t.replace(microsecond=0)


def uuid6_floor(t: dt.datetime) -> str:
    """The smallest uuid6 of time `t`: an id sorts below it exactly when it was made
    before `t` (uuid6 puts the time's 100 ns ticks since 1582 first, high bits first)."""
    ticks = int(t.timestamp()) * 10_000_000 + 0x01B21DD213814000
    return f"{ticks >> 28:08x}-{(ticks >> 12) & 0xFFFF:04x}-6{ticks & 0xFFF:03x}-0000-000000000000"


def main() -> int:
    args = sys.argv[1:]
    rule, date = "keep_latest", None
    if len(args) == 3 and args[1] in ("--before", "--idle-since"):
        rule, date = args[1][2:].replace("-", "_"), parse_date(args[2])
    elif len(args) != 1:
        sys.exit(__doc__)
    store = args[0]
    if store.startswith(("postgres://", "postgresql://")):
        from langgraph.checkpoint.postgres import PostgresSaver

        with PostgresSaver.from_conn_string(store) as s:
            with s._cursor() as cur:
                cur.execute("SELECT count(*) AS n FROM checkpoints")
                before = cur.fetchone()["n"]
                cur.execute("SELECT DISTINCT thread_id FROM checkpoints")
                every = [r["thread_id"] for r in cur.fetchall()]
            threads = len(every)
            t0 = time.perf_counter()
            if rule == "keep_latest":
                s.prune(every, strategy="keep_latest")
                how = "PostgresSaver.prune(strategy='keep_latest')"
            elif rule == "before":
                with s._cursor() as cur, cur.connection.transaction():
                    for sql in PG_BEFORE:
                        cur.execute(sql, (date.isoformat(),) if "%s" in sql else ())
                how = "SQL: doomed checkpoints (ts < DATE, not the latest), their writes, parents, blobs"
            else:
                with s._cursor() as cur:
                    cur.execute(PG_IDLE_THREADS, (date.isoformat(),))
                    ids = [r["thread_id"] for r in cur.fetchall()]
                s.prune(ids, strategy="delete")
                how = "GROUP BY max(ts) < DATE, then PostgresSaver.prune(strategy='delete')"
            secs = time.perf_counter() - t0
            with s._cursor() as cur:
                cur.execute("SELECT count(*) AS n, count(DISTINCT thread_id) AS t FROM checkpoints")
                row = cur.fetchone()
                after, threads_after = row["n"], row["t"]
    else:
        path = store[len("sqlite:"):] if store.startswith("sqlite:") else store
        conn = sqlite3.connect(path)
        before = conn.execute("SELECT count(*) FROM checkpoints").fetchone()[0]
        threads = conn.execute("SELECT count(DISTINCT thread_id) FROM checkpoints").fetchone()[0]
        t0 = time.perf_counter()
        with conn:
            if rule == "keep_latest":
                for sql in SQLITE_KEEP_LATEST:
                    conn.execute(sql)
                how = "raw SQL DELETEs (SqliteSaver has no prune)"
            elif rule == "before":
                for sql in SQLITE_BEFORE:
                    conn.execute(sql, (uuid6_floor(date),) if "?" in sql else ())
                how = "raw SQL: doomed checkpoints (id < DATE's uuid6, not the latest), their writes, parents"
            else:
                for sql in SQLITE_IDLE:
                    conn.execute(sql, (uuid6_floor(date),))
                how = "raw SQL: DELETE … WHERE thread_id IN (GROUP BY max(checkpoint_id) < DATE's uuid6)"
        secs = time.perf_counter() - t0
        after, threads_after = conn.execute("SELECT count(*), count(DISTINCT thread_id) FROM checkpoints").fetchone()
        conn.close()
    out = {
        "script": "benches/store_prune_python_script.py",
        "how": how,
        "threads": threads,
        "threads_deleted": threads - threads_after,
        "checkpoints_before": before,
        "checkpoints_after": after,
        "seconds": round(secs, 3),
    }
    print(json.dumps(out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
