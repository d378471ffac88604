//! `SqliteSaver` on a real file: put, put_writes, get_tuple and list over a thread of 300
//! checkpoints, each holding a 20-message state (the first 20 messages of messages300)
//! and 3 pending writes. `benches/python_baseline.py` runs the same workload on Python's
//! `SqliteSaver` and prints both side by side.
//!
//! Run with `cargo bench --bench saver_sqlite`.

use std::hint::black_box;
use std::time::Duration;

use criterion::{criterion_group, criterion_main, BatchSize, Criterion};
use langgraph_codec::msgpack;
use langgraph_codec::saver::sqlite::SqliteSaver;
use langgraph_codec::saver::{
    Checkpoint, CheckpointConfig, CheckpointMetadata, CheckpointSaver, ListOptions,
};
use langgraph_codec::Value;

const CHECKPOINTS: i64 = 300;

fn saver_sqlite(c: &mut Criterion) {
    let path = format!(
        "{}/vectors/payloads/messages300.msgpack",
        env!("CARGO_MANIFEST_DIR")
    );
    let bytes = std::fs::read(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    let all = msgpack::decode(&bytes).expect("payload decodes");
    let messages: Vec<Value> = all
        .get("messages")
        .and_then(Value::as_array)
        .expect("a messages list")
        .iter()
        .take(20)
        .cloned()
        .collect();
    let state = Value::Array(messages.clone());
    let writes: Vec<(String, Value)> = vec![
        ("messages".into(), Value::Array(messages[..1].to_vec())),
        ("step".into(), Value::from(1i64)),
        ("notes".into(), Value::from("a short note")),
    ];

    let dir = std::env::temp_dir().join(format!("lgcodec-bench-sqlite-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("temp dir");
    let saver = SqliteSaver::create(dir.join("bench.sqlite")).expect("create");
    let runtime = tokio::runtime::Builder::new_current_thread()
        .build()
        .expect("a runtime");

    let checkpoint = |step: i64| {
        let mut cp = Checkpoint::now(step);
        cp.channel_values.insert("messages".into(), state.clone());
        cp
    };
    // The listed thread: 300 checkpoints with 3 writes each.
    let thread = CheckpointConfig::new("bench");
    runtime.block_on(async {
        let mut config = thread.clone();
        for step in 0..CHECKPOINTS {
            config = saver
                .put(
                    &config,
                    &checkpoint(step),
                    &CheckpointMetadata::new("loop", step),
                    &Default::default(),
                )
                .await
                .expect("put");
            saver
                .put_writes(&config, &writes, "task-1", "")
                .await
                .expect("put_writes");
        }
    });

    let mut group = c.benchmark_group("saver_sqlite");
    let put_thread = CheckpointConfig::new("bench-put");
    let md = CheckpointMetadata::new("loop", 1);
    // Each call stores a new checkpoint holding the 20 messages; the copy of the
    // messages is made before the clock starts and freed after it stops (Python's bench
    // puts one shared list in every checkpoint, with nothing to copy or free).
    group.bench_function("put", |b| {
        b.iter_batched(
            || checkpoint(1),
            |cp| {
                runtime.block_on(async {
                    black_box(
                        saver
                            .put(&put_thread, &cp, &md, &Default::default())
                            .await
                            .expect("put"),
                    )
                });
                cp
            },
            BatchSize::SmallInput,
        )
    });
    let writes_at = runtime
        .block_on(saver.put(
            &CheckpointConfig::new("bench-writes"),
            &checkpoint(0),
            &md,
            &Default::default(),
        ))
        .expect("put");
    let mut task = 0u64;
    group.bench_function("put_writes", |b| {
        b.iter(|| {
            task += 1;
            runtime.block_on(async {
                saver
                    .put_writes(&writes_at, &writes, &format!("task-{task}"), "")
                    .await
                    .expect("put_writes")
            })
        })
    });
    group.bench_function("get_tuple", |b| {
        b.iter(|| {
            runtime.block_on(async {
                let t = saver.get_tuple(&thread).await.expect("get_tuple");
                black_box(t.expect("latest"))
            })
        })
    });
    let ten = ListOptions::new().limit(10);
    group.bench_function("list_limit10", |b| {
        b.iter(|| {
            runtime.block_on(async {
                let page = saver.list(Some(&thread), &ten).await.expect("list");
                assert_eq!(page.len(), 10);
                black_box(page)
            })
        })
    });
    let everything = ListOptions::new();
    group.bench_function("list_all", |b| {
        b.iter(|| {
            runtime.block_on(async {
                let page = saver.list(Some(&thread), &everything).await.expect("list");
                assert_eq!(page.len(), CHECKPOINTS as usize);
                black_box(page)
            })
        })
    });
    group.finish();
    drop(saver);
    let _ = std::fs::remove_dir_all(&dir);
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
    targets = saver_sqlite
}
criterion_main!(benches);
