//! `store::rekey` over a whole store shaped like a real graph's (per step: a checkpoint
//! whose `messages` channel holds up to 10 message dicts of 200 characters, small
//! `step`/`notes` values, two pending writes): every value under the old key, rekeyed
//! to the new one. Each iteration rekeys the whole store, the keys swapping roles from
//! one iteration to the next, so every iteration rewrites every value.
//!
//! ```text
//! cargo bench --features sqlite,postgres --bench store_rekey
//! LGCODEC_STORE_BENCH_ROWS=100000 cargo bench --features sqlite,postgres --bench store_rekey
//! ```
//! Default 10,000 values (SQLite layout: checkpoints + writes). Postgres runs when
//! `LGCODEC_TEST_PG_URL` is set (in a schema of its own, dropped at the end). After
//! criterion's numbers it prints one line per backend with rows/s and MB/s of stored
//! bytes read, and the process's peak memory (VmHWM). `benches/rekey_python_script.py`
//! is the Python baseline on the same store (benches/README.md, "Store commands beside a
//! Python script").

#[path = "../tests/support/store_fixture.rs"]
mod store_fixture;

use std::time::{Duration, Instant};

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use langgraph_codec::crypto::AesKey;
use langgraph_codec::saver::postgres::PostgresSaver;
use langgraph_codec::saver::sqlite::SqliteSaver;
use langgraph_codec::store::{self, Store, StoreKeys, SweepOptions};
use store_fixture::{fill, serializer, Shape};

const A: &str = "bench-key-a-0123456789abcdefghij";
const B: &str = "bench-key-b-0123456789abcdefghij";

fn keys(primary: &str, previous: &str) -> StoreKeys {
    StoreKeys::new(AesKey::new(primary.as_bytes()).expect("key"))
        .with_previous(AesKey::new(previous.as_bytes()).expect("key"), "previous")
        .expect("keys")
}

fn shape() -> Shape {
    let rows: usize = std::env::var("LGCODEC_STORE_BENCH_ROWS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(10_000);
    let steps = 10;
    Shape {
        threads: (rows / (3 * steps)).max(1),
        steps,
        key: Some(A.to_owned()),
        ..Shape::default()
    }
}

fn peak_memory_kib() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
}

fn bench_backend(c: &mut Criterion, name: &str, url: &str, rows: u64) {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime");
    let store = runtime
        .block_on(Store::open_for_writing(url))
        .expect("open");
    // Under A now: the first iteration moves A -> B, the next B -> A, and so on.
    let mut under_a = true;
    let mut last = None;
    let mut group = c.benchmark_group("store_rekey");
    group.sample_size(10);
    group.measurement_time(Duration::from_secs(1));
    group.warm_up_time(Duration::from_millis(1));
    group.throughput(Throughput::Elements(rows));
    group.bench_function(name, |b| {
        b.iter_custom(|iters| {
            let mut total = Duration::ZERO;
            for _ in 0..iters {
                let k = if under_a { keys(B, A) } else { keys(A, B) };
                let started = Instant::now();
                let report = runtime
                    .block_on(store::rekey(&store, &k, &SweepOptions::new()))
                    .expect("rekey");
                total += started.elapsed();
                assert_eq!(report.rewritten.rows, rows, "every value rewritten");
                under_a = !under_a;
                last = Some(report);
            }
            total
        })
    });
    group.finish();
    if let Some(r) = last {
        println!(
            "store_rekey/{name}: {} values, {:.1} MB stored, {:.2} s: {:.0} rows/s, {:.1} MB/s; peak memory (VmHWM) {} KiB",
            r.seen.total.rows,
            r.seen.total.bytes as f64 / 1e6,
            r.elapsed_s,
            r.rows_per_s,
            r.mb_per_s,
            peak_memory_kib().map_or("?".to_owned(), |k| k.to_string()),
        );
    }
}

fn store_rekey(c: &mut Criterion) {
    let shape = shape();
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime");
    // SQLite.
    let dir = std::env::temp_dir().join(format!("lgcodec-bench-store-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("temp dir");
    let path = dir.join("store.db");
    let rows = runtime.block_on(async {
        let saver = SqliteSaver::builder(&path)
            .serializer(serializer(&shape))
            .create(true)
            .open()
            .expect("saver");
        fill(&saver, &shape, "thread-").await
    }) as u64;
    bench_backend(c, "sqlite", path.to_str().expect("utf-8"), rows);
    let _ = std::fs::remove_dir_all(&dir);
    // Postgres.
    let Ok(base) = std::env::var("LGCODEC_TEST_PG_URL") else {
        println!("store_rekey/postgres skipped: LGCODEC_TEST_PG_URL is not set");
        return;
    };
    let schema = format!("bench_store_{}", std::process::id());
    let admin = |sql: String| {
        let base = base.clone();
        runtime.block_on(async move {
            let (client, conn) = tokio_postgres::connect(&base, tokio_postgres::NoTls)
                .await
                .expect("connect");
            tokio::spawn(conn);
            client.batch_execute(&sql).await.expect("admin statement");
        })
    };
    admin(format!(
        "DROP SCHEMA IF EXISTS {schema} CASCADE; CREATE SCHEMA {schema}"
    ));
    let sep = if base.contains('?') { '&' } else { '?' };
    let url = format!("{base}{sep}options=-csearch_path%3D{schema}");
    let rows = runtime.block_on(async {
        let saver = PostgresSaver::builder_from_url(&url)
            .expect("url")
            .serializer(serializer(&shape))
            .build()
            .expect("saver");
        saver.setup().await.expect("setup");
        fill(&saver, &shape, "thread-").await
    }) as u64;
    bench_backend(c, "postgres", &url, rows);
    admin(format!("DROP SCHEMA IF EXISTS {schema} CASCADE"));
}

criterion_group!(benches, store_rekey);
criterion_main!(benches);
