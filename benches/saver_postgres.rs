//! `PostgresSaver` on a real server (loopback), the `saver_sqlite` bench's workload: a
//! thread of 300 checkpoints, each holding a 20-message state as a blob.
//! Ids `saver_postgres/{get_tuple,list_limit10,list_all,put,put_writes}` (reads first,
//! on freshly analyzed tables), `saver_postgres/round_trip`, a bare `SELECT 1`: the
//! floor every operation pays once per round trip, and `saver_postgres/get_tuple_statement`,
//! `get_tuple`'s statement alone with its reply dropped unread. Python's
//! `PostgresSaver` on the same workload is in `benches/python_baseline.py`.
//!
//! Needs `LGCODEC_TEST_PG_URL` (skipped without it):
//! `LGCODEC_TEST_PG_URL=postgresql://… cargo bench --features postgres --bench saver_postgres`

use std::future::Future;
use std::hint::black_box;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

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

/// How the timed calls reach the runtime. By default (`task`) the loop of calls runs as
/// one task on the runtime, as a service's request handler does: the caller and the
/// connection tasks share the worker thread. `LGCODEC_BENCH_PG_CALLS=block_on` calls
/// `Runtime::block_on` once per call from the benchmark's thread instead, so every
/// round trip also hands the request to the worker thread and the reply back (the
/// shape of the runs before 2026-11-23 night).
fn block_on_each_call() -> bool {
    std::env::var("LGCODEC_BENCH_PG_CALLS").as_deref() == Ok("block_on")
}

/// `iters` calls of `call`, timed, in the shape [`block_on_each_call`] picks.
fn time_calls<F, Fut, T>(rt: &tokio::runtime::Runtime, iters: u64, call: F) -> Duration
where
    F: Fn() -> Fut + Send + 'static,
    Fut: Future<Output = T> + Send,
    T: Send + 'static,
{
    if block_on_each_call() {
        let start = Instant::now();
        for _ in 0..iters {
            black_box(rt.block_on(call()));
        }
        return start.elapsed();
    }
    rt.block_on(rt.spawn(async move {
        let start = Instant::now();
        for _ in 0..iters {
            black_box(call().await);
        }
        start.elapsed()
    }))
    .expect("bench task")
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
    let next = |saver: &PostgresSaver, prev: Option<&Checkpoint>, step: i64, messages: Value| {
        let mut cp = Checkpoint::new(uuid6(step), "2025-01-01T00:00:00.000000+00:00");
        cp.channel_values.insert("messages".into(), messages);
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
            let (cp, nv) = next(&saver, prev.as_ref(), step, messages.clone());
            cfg = saver.put(&cfg, &cp, &metadata, &nv).await.expect("put");
            prev = Some(cp);
        }
        let (cp, nv) = next(&saver, None, 0, messages.clone());
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
        b.iter_custom(|iters| {
            let saver = saver.clone();
            time_calls(&rt, iters, move || {
                let saver = saver.clone();
                async move {
                    let client = saver.pool().get().await.expect("pool");
                    let row = match mode() {
                        StatementMode::Unnamed => client.query_typed("SELECT 1", &[]).await,
                        _ => {
                            let st = client.prepare_cached("SELECT 1").await.expect("prepare");
                            client.query(&st, &[]).await
                        }
                    };
                    row.expect("select 1")
                }
            })
        })
    });
    g.bench_function("get_tuple", |b| {
        b.iter_custom(|iters| {
            let (saver, thread) = (saver.clone(), thread.clone());
            time_calls(&rt, iters, move || {
                let (saver, thread) = (saver.clone(), thread.clone());
                async move { saver.get_tuple(&thread).await.expect("get") }
            })
        })
    });
    // The floor of `get_tuple` for this client stack: the saver's own statement, its
    // text read back from the server (`pg_prepared_statements` of the pooled connection,
    // which prepared it, so it cannot drift from what the saver sends), run by
    // tokio-postgres on that connection with the same parameters and its reply dropped
    // unread: no decoding, no tuple. `get_tuple` minus this is the saver's client work;
    // this minus `round_trip` is the statement's.
    let statement = rt.block_on(async {
        saver.get_tuple(&thread).await.expect("get");
        let client = saver.pool().get().await.expect("pool");
        let texts: Vec<String> = client
            .query(
                "SELECT statement FROM pg_prepared_statements
                 WHERE statement LIKE '%jsonb_each_text%' AND statement LIKE '%LIMIT 1%'
                     AND statement NOT LIKE '%$3%'",
                &[],
            )
            .await
            .expect("pg_prepared_statements")
            .iter()
            .map(|row| row.get(0))
            .collect();
        assert_eq!(texts.len(), 1, "get_tuple's statement, once: {texts:?}");
        Arc::new(texts.concat())
    });
    g.bench_function("get_tuple_statement", |b| {
        b.iter_custom(|iters| {
            let (saver, statement) = (saver.clone(), statement.clone());
            time_calls(&rt, iters, move || {
                let (saver, statement) = (saver.clone(), statement.clone());
                async move {
                    let client = saver.pool().get().await.expect("pool");
                    let params: [&(dyn tokio_postgres::types::ToSql + Sync); 2] =
                        [&"bench-300", &""];
                    let rows = match mode() {
                        StatementMode::Unnamed => {
                            let typed = [
                                (params[0], tokio_postgres::types::Type::TEXT),
                                (params[1], tokio_postgres::types::Type::TEXT),
                            ];
                            client.query_typed(statement.as_str(), &typed).await
                        }
                        _ => {
                            let st = client.prepare_cached(&statement).await.expect("prepare");
                            client.query(&st, &params).await
                        }
                    };
                    let rows = rows.expect("get_tuple's statement");
                    assert_eq!(rows.len(), 1);
                    rows
                }
            })
        })
    });
    for (id, limit, expect) in [("list_limit10", Some(10), 10), ("list_all", None, 300)] {
        g.bench_function(id, |b| {
            b.iter_custom(|iters| {
                let (saver, thread) = (saver.clone(), thread.clone());
                time_calls(&rt, iters, move || {
                    let (saver, thread) = (saver.clone(), thread.clone());
                    async move {
                        let mut options = ListOptions::new();
                        if let Some(l) = limit {
                            options = options.limit(l);
                        }
                        let page = saver.list(Some(&thread), &options).await.expect("list");
                        assert_eq!(page.len(), expect);
                        page
                    }
                })
            })
        });
    }
    let put_parent = Arc::new(Mutex::new(CheckpointConfig::new("bench-put")));
    g.bench_function("put", |b| {
        b.iter_custom(|iters| {
            // Each call stores a new checkpoint (id, version) holding the 20 messages.
            // By default one checkpoint is stored again and again with a new id and
            // version, as Python's bench puts one shared list in every checkpoint: the
            // messages are in the cache, as a state a graph step has just made is.
            // `LGCODEC_BENCH_PG_PUT=copies` gives every call its own copy, made before
            // the clock starts and freed after it stops (every call then reads its
            // messages from memory the cache has not seen: about 9 µs of CPU more per
            // call).
            let copies = std::env::var("LGCODEC_BENCH_PG_PUT").as_deref() == Ok("copies");
            let n = if copies { iters as usize } else { 1 };
            let pool = Arc::new(Mutex::new(vec![messages.clone(); n]));
            let (saver, put_parent) = (saver.clone(), put_parent.clone());
            let (metadata, pool_in) = (metadata.clone(), pool.clone());
            let used = Arc::new(Mutex::new(Vec::with_capacity(n)));
            let used_in = used.clone();
            let elapsed = time_calls(&rt, iters, move || {
                let (saver, put_parent, pool, used) = (
                    saver.clone(),
                    put_parent.clone(),
                    pool_in.clone(),
                    used_in.clone(),
                );
                let messages = pool.lock().expect("lock").pop().expect("messages");
                let (cp, nv) = next(&saver, None, 1, messages);
                let metadata = metadata.clone();
                async move {
                    let parent = put_parent.lock().map(|p| p.clone()).expect("lock");
                    let stored = saver.put(&parent, &cp, &metadata, &nv).await.expect("put");
                    *put_parent.lock().expect("lock") = stored;
                    let mut cp = cp;
                    let messages = cp.channel_values.shift_remove("messages");
                    match messages {
                        // One shared state: back for the next call.
                        Some(m) if !copies => pool.lock().expect("lock").push(m),
                        // A copy: freed after the clock stops.
                        other => used.lock().expect("lock").push(other),
                    }
                }
            });
            drop((pool, used));
            elapsed
        })
    });
    let task = Arc::new(AtomicU64::new(0));
    let writes: Arc<Vec<(String, Value)>> = Arc::new(
        (0..3)
            .map(|i| (format!("channel{i}"), Value::from(format!("value {i}"))))
            .collect(),
    );
    g.bench_function("put_writes", |b| {
        b.iter_custom(|iters| {
            let (saver, task, writes, target) = (
                saver.clone(),
                task.clone(),
                writes.clone(),
                writes_target.clone(),
            );
            time_calls(&rt, iters, move || {
                let (saver, writes, target) = (saver.clone(), writes.clone(), target.clone());
                let id = format!("task-{}", task.fetch_add(1, Ordering::Relaxed));
                async move {
                    saver
                        .put_writes(&target, &writes, &id, "")
                        .await
                        .expect("put_writes")
                }
            })
        })
    });
    g.finish();
}

criterion_group!(benches, saver_postgres);
criterion_main!(benches);
