//! `DurableSaver` on the `saver_sqlite` / `saver_postgres` put workload (a checkpoint
//! holding the first 20 messages of messages300, a new id each time):
//!
//! - `saver_durable_sqlite/sync_put`: `put` through the wrapper in `sync` mode (what
//!   the caller waits for today: the store's own `put`).
//! - `saver_durable_sqlite/async_put`: the caller-visible `put` in `async` mode (queued;
//!   the queue is flushed between timed batches of 500, outside the timing, so it never
//!   fills and this is the queueing cost alone).
//! - `saver_durable_sqlite/async_drain_per_put`: the sustained rate: batches of 500
//!   puts queued and flushed, timed together, per put (1 / this = puts per second the
//!   queue drains at).
//! - the same three under `saver_durable_postgres/` when `LGCODEC_TEST_PG_URL` is set
//!   and the bench is built with `--features postgres` (schema `bench_durable`).
//!
//! Before criterion runs, the peak memory with the queue full: a queue of 10,000 puts
//! in front of a saver that does not drain, VmHWM from /proc/self/status before and
//! after, printed and written to `target/criterion/saver_durable_memory.txt`.
//!
//! `benches/python_baseline.py` prints Python's `put` on the same workload beside these.
//!
//! Run with `cargo bench --features durable,sqlite --bench saver_durable`.

use std::hint::black_box;
use std::sync::Arc;
use std::time::{Duration, Instant};

use criterion::{criterion_group, criterion_main, Criterion};
use langgraph_codec::msgpack;
use langgraph_codec::saver::durable::{Durability, DurableOptions, DurableSaver};
use langgraph_codec::saver::sqlite::SqliteSaver;
use langgraph_codec::saver::{
    async_trait, ChannelVersions, Checkpoint, CheckpointConfig, CheckpointMetadata,
    CheckpointSaver, CheckpointTuple, ListOptions,
};
use langgraph_codec::{Result, Value};

const BATCH: u64 = 500;
const FLUSH: Duration = Duration::from_secs(600);

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

fn checkpoint(state: &Value) -> Checkpoint {
    let mut cp = Checkpoint::now(1);
    cp.channel_values.insert("messages".into(), state.clone());
    cp
}

/// A key from /proc/self/status, in KiB.
fn status_kib(key: &str) -> Option<u64> {
    let text = std::fs::read_to_string("/proc/self/status").ok()?;
    text.lines()
        .find(|l| l.starts_with(key))?
        .split_whitespace()
        .nth(1)?
        .parse()
        .ok()
}

/// A saver that never finishes a write: the queue in front of it only fills.
struct Stuck;

#[async_trait]
impl CheckpointSaver for Stuck {
    async fn put(
        &self,
        _: &CheckpointConfig,
        _: &Checkpoint,
        _: &CheckpointMetadata,
        _: &ChannelVersions,
    ) -> Result<CheckpointConfig> {
        std::future::pending().await
    }
    async fn put_writes(
        &self,
        _: &CheckpointConfig,
        _: &[(String, Value)],
        _: &str,
        _: &str,
    ) -> Result<()> {
        std::future::pending().await
    }
    async fn get_tuple(&self, _: &CheckpointConfig) -> Result<Option<CheckpointTuple>> {
        Ok(None)
    }
    async fn list(
        &self,
        _: Option<&CheckpointConfig>,
        _: &ListOptions,
    ) -> Result<Vec<CheckpointTuple>> {
        Ok(Vec::new())
    }
    async fn delete_thread(&self, _: &str) -> Result<()> {
        Ok(())
    }
}

/// Peak memory of a full queue of `capacity` puts of the workload's checkpoint.
fn queue_memory(rt: &tokio::runtime::Runtime, state: &Value) {
    let capacity = 10_000usize;
    let before_rss = status_kib("VmRSS:").unwrap_or(0);
    let before_hwm = status_kib("VmHWM:").unwrap_or(0);
    let line = rt.block_on(async {
        let saver = DurableSaver::with_options(
            Arc::new(Stuck),
            DurableOptions::new(Durability::Async).capacity(capacity),
        )
        .expect("durable");
        let md = CheckpointMetadata::new("loop", 1);
        let thread = CheckpointConfig::new("bench-memory");
        // `capacity` puts fit; the writer holds the first one in flight.
        for _ in 0..capacity {
            saver
                .put(
                    &thread,
                    &checkpoint(state),
                    &md,
                    &ChannelVersions::default(),
                )
                .await
                .expect("put");
        }
        let pending = saver.pending().await;
        let hwm = status_kib("VmHWM:").unwrap_or(0);
        let grown = hwm.saturating_sub(before_hwm.max(before_rss));
        format!(
            "queue full: {pending} puts of a 20-message checkpoint queued; VmHWM {hwm} KiB \
             (was {before_hwm} KiB, VmRSS {before_rss} KiB before): +{grown} KiB, about {} \
             bytes per queued put",
            grown * 1024 / u64::try_from(pending.max(1)).unwrap_or(1)
        )
    });
    eprintln!("saver_durable: {line}");
    let dir = format!("{}/target/criterion", env!("CARGO_MANIFEST_DIR"));
    let _ = std::fs::create_dir_all(&dir);
    let _ = std::fs::write(
        format!("{dir}/saver_durable_memory.txt"),
        format!("{line}\n"),
    );
}

/// `sync_put`, `async_put` and `async_drain_per_put` on `make()`'s saver.
fn put_benches<S, F>(
    c: &mut Criterion,
    group: &str,
    rt: &tokio::runtime::Runtime,
    state: &Value,
    make: F,
) where
    S: CheckpointSaver + 'static,
    F: Fn() -> Arc<S>,
{
    let md = CheckpointMetadata::new("loop", 1);
    let thread = CheckpointConfig::new("bench-put");
    let mut g = c.benchmark_group(group);
    let sync = DurableSaver::new(make(), Durability::Sync).expect("sync");
    g.bench_function("sync_put", |b| {
        b.iter_custom(|iters| {
            rt.block_on(async {
                let start = Instant::now();
                for _ in 0..iters {
                    black_box(
                        sync.put(
                            &thread,
                            &checkpoint(state),
                            &md,
                            &ChannelVersions::default(),
                        )
                        .await
                        .expect("put"),
                    );
                }
                start.elapsed()
            })
        })
    });
    let durable = rt.block_on(async {
        DurableSaver::with_options(
            make(),
            DurableOptions::new(Durability::Async).capacity(2 * BATCH as usize),
        )
        .expect("async")
    });
    g.bench_function("async_put", |b| {
        b.iter_custom(|iters| {
            rt.block_on(async {
                let mut timed = Duration::ZERO;
                let mut left = iters;
                while left > 0 {
                    let n = left.min(BATCH);
                    left -= n;
                    let start = Instant::now();
                    for _ in 0..n {
                        black_box(
                            durable
                                .put(
                                    &thread,
                                    &checkpoint(state),
                                    &md,
                                    &ChannelVersions::default(),
                                )
                                .await
                                .expect("put"),
                        );
                    }
                    timed += start.elapsed();
                    durable.flush(FLUSH).await.expect("flush");
                }
                timed
            })
        })
    });
    g.bench_function("async_drain_per_put", |b| {
        b.iter_custom(|iters| {
            rt.block_on(async {
                let start = Instant::now();
                let mut left = iters;
                while left > 0 {
                    let n = left.min(BATCH);
                    left -= n;
                    for _ in 0..n {
                        durable
                            .put(
                                &thread,
                                &checkpoint(state),
                                &md,
                                &ChannelVersions::default(),
                            )
                            .await
                            .expect("put");
                    }
                    durable.flush(FLUSH).await.expect("flush");
                }
                start.elapsed()
            })
        })
    });
    g.finish();
}

fn saver_durable(c: &mut Criterion) {
    let state = twenty_messages();
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .expect("runtime");
    queue_memory(&rt, &state);

    let dir = std::env::temp_dir().join(format!("lgcodec-bench-durable-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("temp dir");
    // LGCODEC_BENCH_SQLITE_INLINE=0: the SQLite saver without its inline fast path (every
    // call on the blocking pool), to compare.
    let inline = std::env::var("LGCODEC_BENCH_SQLITE_INLINE").as_deref() != Ok("0");
    let sqlite = Arc::new(
        SqliteSaver::builder(dir.join("bench.sqlite"))
            .create(true)
            .inline_fast_path(inline)
            .open()
            .expect("create"),
    );
    put_benches(c, "saver_durable_sqlite", &rt, &state, || sqlite.clone());

    #[cfg(feature = "postgres")]
    postgres(c, &rt, &state);
    let _ = std::fs::remove_dir_all(&dir);
}

#[cfg(feature = "postgres")]
fn postgres(c: &mut Criterion, rt: &tokio::runtime::Runtime, state: &Value) {
    use langgraph_codec::saver::postgres::PostgresSaver;
    let Ok(url) = std::env::var("LGCODEC_TEST_PG_URL") else {
        eprintln!("saver_durable_postgres: skipped, LGCODEC_TEST_PG_URL is not set");
        return;
    };
    let saver = rt.block_on(async {
        let saver = PostgresSaver::builder_from_url(&url)
            .expect("url")
            .schema("bench_durable")
            .build()
            .expect("saver");
        saver.setup().await.expect("setup");
        saver.delete_thread("bench-put").await.expect("clean");
        Arc::new(saver)
    });
    put_benches(c, "saver_durable_postgres", rt, state, || saver.clone());
}

fn config() -> Criterion {
    Criterion::default()
        .sample_size(20)
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(3))
}

criterion_group! {
    name = benches;
    config = config();
    targets = saver_durable
}
criterion_main!(benches);
