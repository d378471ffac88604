#!/usr/bin/env python3
"""The server's execution time of get_tuple's statement and of the alternatives tried in
benches/README.md "Postgres get_tuple": each prepared (so, after five
runs, on its generic plan, as deadpool's statement cache runs the saver's), then
`EXPLAIN (ANALYZE, TIMING OFF, SUMMARY ON) EXECUTE` round-robin over the variants so
that machine load hits every variant alike; min / p25 / median of the execution times.

Run it on the tables a bench filled (a thread of 300 checkpoints, 20 messages each):
    LGCODEC_TEST_PG_URL=postgresql://… python3 benches/postgres_get_tuple_variants.py \
        [SCHEMA (default bench_rs; profile_rs for benches/profile_saver.rs)] [THREAD (bench-300)]
"""
import os
import re
import sys

import psycopg

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import postgres_server_time as pst  # noqa: E402  (the saver's select, as Python text)

URL = os.environ["LGCODEC_TEST_PG_URL"]
SCHEMA = sys.argv[1] if len(sys.argv) > 1 else "bench_rs"
THREAD = sys.argv[2] if len(sys.argv) > 2 else "bench-300"

CP = """SELECT thread_id, checkpoint_ns, checkpoint_id, parent_checkpoint_id, checkpoint, metadata
    FROM checkpoints WHERE thread_id = 'bench-300' AND checkpoint_ns = '' ORDER BY checkpoint_id DESC LIMIT 1"""
W = """LEFT JOIN LATERAL (
    SELECT array_agg(task_id) AS task_ids, array_agg(channel) AS channels,
        array_agg(type) AS types, array_agg(blob) AS blobs,
        array_agg(task_path) AS task_paths, array_agg(idx) AS idxs
    FROM checkpoint_writes cw
    WHERE cw.thread_id = c.thread_id AND cw.checkpoint_ns = c.checkpoint_ns AND cw.checkpoint_id = c.checkpoint_id
) w ON true"""
SEL = """SELECT c.thread_id, c.checkpoint_ns, c.checkpoint_id, c.parent_checkpoint_id,
    c.checkpoint::text, c.metadata::text, w.task_ids, w.channels, w.types, w.blobs, w.task_paths, w.idxs"""
CV = "CASE WHEN jsonb_typeof(c.checkpoint -> 'channel_versions') = 'object' THEN c.checkpoint -> 'channel_versions' END"
LOOKUP = """SELECT channel, version, type, blob FROM checkpoint_blobs b
    WHERE b.thread_id = c.thread_id AND b.checkpoint_ns = c.checkpoint_ns AND b.channel = v.key AND b.version = v.value OFFSET 0"""

VARIANTS = {
    "saver": pst.ours_select(True, 1),
    "no_blobs": pst.ours_select(False, 1),
    "each_only": f"{SEL}, bl.k FROM ({CP}) c {W}\nLEFT JOIN LATERAL (SELECT array_agg(v.key) AS k FROM jsonb_each_text({CV}) v) bl ON true",
    "blob_rows": f"{SEL}, b.channel, b.version, b.type, b.blob FROM ({CP}) c {W}\n"
    f"LEFT JOIN LATERAL jsonb_each_text({CV}) v ON true\nLEFT JOIN LATERAL ({LOOKUP}) b ON true",
    "one_agg": f"{SEL}, bl.b FROM ({CP}) c {W}\nLEFT JOIN LATERAL (SELECT array_agg(array[b.channel::bytea, b.version::bytea, b.type::bytea, b.blob]) AS b "
    f"FROM jsonb_each_text({CV}) v CROSS JOIN LATERAL ({LOOKUP}) b) bl ON true",
    "object_keys": f"{SEL}, bl.b FROM ({CP}) c {W}\nLEFT JOIN LATERAL (SELECT array_agg(b.blob) AS b FROM jsonb_object_keys({CV}) k "
    "CROSS JOIN LATERAL (SELECT blob FROM checkpoint_blobs b WHERE b.thread_id = c.thread_id AND b.checkpoint_ns = c.checkpoint_ns "
    "AND b.channel = k AND b.version = c.checkpoint -> 'channel_versions' ->> k OFFSET 0) b) bl ON true",
    "python_shape": f"{SEL}, (SELECT array_agg(array[b.channel::bytea, b.version::bytea, b.type::bytea, b.blob]) FROM jsonb_each_text({CV}) v "
    f"JOIN checkpoint_blobs b ON b.thread_id = c.thread_id AND b.checkpoint_ns = c.checkpoint_ns AND b.channel = v.key AND b.version = v.value) FROM ({CP}) c {W}",
    "row_only": CP.replace("checkpoint, metadata", "checkpoint::text, metadata::text"),
}


def main():
    with psycopg.connect(URL, autocommit=True, options=f"-c search_path={SCHEMA}") as conn:
        for name, sql in VARIANTS.items():
            sql = sql.replace("'bench-300'", "$1").replace("checkpoint_ns = ''", "checkpoint_ns = $2")
            conn.execute(f"PREPARE v_{name}(text, text) AS {sql}")
        times = {name: [] for name in VARIANTS}
        thread = "'" + THREAD.replace("'", "''") + "'"
        for i in range(600):
            for name in VARIANTS:
                out = "\n".join(r[0] for r in conn.execute(
                    f"EXPLAIN (ANALYZE, TIMING OFF, SUMMARY ON) EXECUTE v_{name}({thread}, '')").fetchall())
                if i >= 10:  # past the custom plans of the first runs
                    times[name].append(float(re.search(r"Execution Time: ([\d.]+)", out).group(1)) * 1000)
        print("| statement | min µs | p25 µs | median µs |\n|---|---:|---:|---:|")
        for name, t in times.items():
            t.sort()
            print(f"| {name} | {t[0]:.0f} | {t[len(t) // 4]:.0f} | {t[len(t) // 2]:.0f} |")


if __name__ == "__main__":
    main()
