//! `PostgresSaver` on a real server (loopback), the workload of the SAVERS.md baseline:
//! a thread of 300 checkpoints, each holding a 20-message state as a blob.
//! Ids `saver_postgres/{get_tuple,list_limit10,list_all,put,put_writes}` (reads first,
//! on freshly analyzed tables), and `saver_postgres/round_trip`, a bare `SELECT 1`: the
//! floor every operation pays once per round trip. Python's
//! `PostgresSaver` on the same workload is in `benches/python_baseline.py`.
//!
//! Needs `LGCODEC_TEST_PG_URL` (skipped without it):
//! `LGCODEC_TEST_PG_URL=postgresql://… cargo bench --features postgres --bench saver_postgres`

use std::hint::black_box;
use std::sync::atomic::{AtomicU64, Ordering};

use criterion::{criterion_group, criterion_main, Criterion};
use langgraph_codec::msgpack;
use langgraph_codec::saver::postgres::{PostgresSaver, StatementMode};
use langgraph_codec::saver::{
    uuid6, Checkpoint, CheckpointConfig, CheckpointMetadata, CheckpointSaver, ListOptions,
};
use langgraph_codec::Value;

fn twenty_messages() -> Value {
    let path = format!(
        "{}/vectors/payloads/messages300.msgpack",
        env!("CARGO_MANIFEST_DIR")
    );
    let bytes = std::fs::read(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    let all = msgpack::decode(&bytes)
        .expect("payload decodes")
        .get("messages")
        .and_then(Value::as_array)
        .map(<[Value]>::to_vec)
        .expect("a messages list");
    Value::Array(all.into_iter().take(20).collect())
}

/// `LGCODEC_BENCH_PG_MODE=unnamed` measures `StatementMode::Unnamed` (PgBouncer-safe).
fn mode() -> StatementMode {
    match std::env::var("LGCODEC_BENCH_PG_MODE").as_deref() {
        Ok("unnamed") => StatementMode::Unnamed,
        _ => StatementMode::Prepared,
    }
}

fn saver_postgres(c: &mut Criterion) {
    let Ok(url) = std::env::var("LGCODEC_TEST_PG_URL") else {
        eprintln!("saver_postgres: skipped, LGCODEC_TEST_PG_URL is not set");
        return;
    };
    // `LGCODEC_BENCH_PG_RT=current_thread`: the connection tasks run on the benchmark's
    // own thread (no hand-off to a worker thread and back on each round trip).
    let rt = match std::env::var("LGCODEC_BENCH_PG_RT").as_deref() {
        Ok("current_thread") => tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build(),
        _ => tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .enable_all()
            .build(),
    }
    .expect("runtime");
    let saver = PostgresSaver::builder_from_url(&url)
        .expect("url")
        .schema("bench_rs")
        .statement_mode(mode())
        .build()
        .expect("saver");
    let messages = twenty_messages();
    let metadata = CheckpointMetadata::new("loop", 1);
    let next = |saver: &PostgresSaver, prev: Option<&Checkpoint>, step: i64| {
        let mut cp = Checkpoint::new(uuid6(step), "2025-01-01T00:00:00.000000+00:00");
        cp.channel_values
            .insert("messages".into(), messages.clone());
        let v = saver
            .get_next_version(prev.and_then(|p| p.channel_versions.get("messages")))
            .expect("version");
        cp.channel_versions.insert("messages".into(), v.clone());
        let nv = [("messages".to_owned(), v)].into_iter().collect();
        (cp, nv)
    };
    // The 300-checkpoint thread (reads), and a checkpoint of its own thread that
    // `put_writes` adds to (so the reads do not see the writes pile up).
    let thread = CheckpointConfig::new("bench-300");
    let (_last, writes_target) = rt.block_on(async {
        saver.setup().await.expect("setup");
        saver.delete_thread("bench-300").await.expect("clean");
        saver.delete_thread("bench-put").await.expect("clean");
        saver.delete_thread("bench-writes").await.expect("clean");
        let mut cfg = thread.clone();
        let mut prev: Option<Checkpoint> = None;
        for step in 0..300 {
            let (cp, nv) = next(&saver, prev.as_ref(), step);
            cfg = saver.put(&cfg, &cp, &metadata, &nv).await.expect("put");
            prev = Some(cp);
        }
        let (cp, nv) = next(&saver, None, 0);
        let writes_target = saver
            .put(&CheckpointConfig::new("bench-writes"), &cp, &metadata, &nv)
            .await
            .expect("put");
        (cfg, writes_target)
    });
    // Fresh planner statistics for the tables just filled (as a long-running database
    // has), so no plan is picked from the stale ones of an earlier run.
    {
        let (client, conn) = rt
            .block_on(tokio_postgres::connect(&url, tokio_postgres::NoTls))
            .expect("connect");
        rt.spawn(conn);
        rt.block_on(client.batch_execute(
            "ANALYZE bench_rs.checkpoints, bench_rs.checkpoint_blobs, bench_rs.checkpoint_writes",
        ))
        .expect("analyze");
    }
    let mut g = c.benchmark_group("saver_postgres");
    // The floor: one round trip of a statement that does nothing (`SELECT 1`, in the
    // saver's statement mode) on a pooled connection, as every operation pays at least
    // once.
    g.bench_function("round_trip", |b| {
        b.iter(|| {
            rt.block_on(async {
                let client = saver.pool().get().await.expect("pool");
                let row = match mode() {
                    StatementMode::Unnamed => client.query_typed("SELECT 1", &[]).await,
                    _ => {
                        let st = client.prepare_cached("SELECT 1").await.expect("prepare");
                        client.query(&st, &[]).await
                    }
                };
                black_box(row.expect("select 1"))
            })
        })
    });
    g.bench_function("get_tuple", |b| {
        b.iter(|| black_box(rt.block_on(saver.get_tuple(&thread)).expect("get")))
    });
    g.bench_function("list_limit10", |b| {
        b.iter(|| {
            black_box(
                rt.block_on(saver.list(Some(&thread), &ListOptions::new().limit(10)))
                    .expect("list"),
            )
        })
    });
    g.bench_function("list_all", |b| {
        b.iter(|| {
            let all = rt
                .block_on(saver.list(Some(&thread), &ListOptions::new()))
                .expect("list");
            assert_eq!(all.len(), 300);
            black_box(all)
        })
    });
    let put_parent = std::sync::Mutex::new(CheckpointConfig::new("bench-put"));
    g.bench_function("put", |b| {
        b.iter(|| {
            let (cp, nv) = next(&saver, None, 1);
            let parent = put_parent.lock().map(|p| p.clone()).expect("lock");
            let stored = rt
                .block_on(saver.put(&parent, &cp, &metadata, &nv))
                .expect("put");
            *put_parent.lock().expect("lock") = stored;
        })
    });
    let task = AtomicU64::new(0);
    let writes: Vec<(String, Value)> = (0..3)
        .map(|i| (format!("channel{i}"), Value::from(format!("value {i}"))))
        .collect();
    g.bench_function("put_writes", |b| {
        b.iter(|| {
            let id = format!("task-{}", task.fetch_add(1, Ordering::Relaxed));
            rt.block_on(saver.put_writes(&writes_target, &writes, &id, ""))
                .expect("put_writes")
        })
    });
    g.finish();
}

criterion_group!(benches, saver_postgres);
criterion_main!(benches);
