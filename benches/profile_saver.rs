//! The savers' profiling harness (not a timing bench): runs one saver call of the
//! `saver_sqlite` / `saver_postgres` bench workload a given number of times, for
//! instruction counts (`valgrind --tool=callgrind`), syscall counts (`strace -c -f`) and
//! profiles, where criterion's timing loop would only add noise. It also prints the
//! wall clock of the calls (min, median, mean, max), for what that is worth on a busy machine.
//!
//! ```sh
//! cargo bench --features postgres --bench profile_saver --no-run
//! B=$(ls -t target/release/deps/profile_saver-* | grep -v '\.d$' | head -1)
//! $B sqlite get_tuple 1000                     # wall clock per call
//! valgrind --tool=callgrind $B sqlite put 1    # minus a run of 11: 10 calls
//! strace -c -f $B sqlite put_writes 100
//! LGCODEC_TEST_PG_URL=postgresql://… $B postgres put 100
//! ```
//!
//! Arguments: the saver (`sqlite` or `postgres`), the call (`put`, `put_writes`,
//! `get_tuple`, `list_limit10`, or `setup`, which only builds the workload) and how many
//! times. The workload is the benches': a thread of 300 checkpoints holding the first 20
//! messages of messages300 (with 3 pending writes each for SQLite); `put` stores one
//! more checkpoint (the same state, a new id each call: no copy of the messages is
//! counted), `put_writes` 3 writes under a new task id each call, `get_tuple` reads the
//! latest of the 300.
//!
//! `LGCODEC_PROFILE_TIMES=FILE` writes each call's wall clock (µs, in call order) to
//! FILE. `LGCODEC_PROFILE_RT` picks how the calls are made: `current_thread` (default, a
//! current-thread Tokio runtime, `block_on` per call as `benches/saver_sqlite.rs` does),
//! `task` (the whole loop as one task on a one-worker multi-thread runtime, as
//! `benches/saver_postgres.rs` does), or `none` (SQLite only: no runtime at all, the
//! saver then runs its SQL inline on the caller's thread).

use std::future::Future;
use std::hint::black_box;
use std::pin::pin;
use std::task::{Context, Poll, Waker};
use std::time::Instant;

use langgraph_codec::msgpack;
use langgraph_codec::saver::sqlite::SqliteSaver;
use langgraph_codec::saver::{
    uuid6, Checkpoint, CheckpointConfig, CheckpointMetadata, CheckpointSaver, ListOptions,
};
use langgraph_codec::Value;

const CALLS: [&str; 5] = ["put", "put_writes", "get_tuple", "list_limit10", "setup"];

/// Postgres only: the parts of a `put` without the saver, on a pooled connection of
/// the saver's pool, prepared, in the same call shape (see [`postgres_floor`]).
#[cfg(feature = "postgres")]
const FLOOR_CALLS: [&str; 3] = ["select1", "put_const", "put_params"];

fn twenty_messages() -> Vec<Value> {
    let path = format!(
        "{}/vectors/payloads/messages300.msgpack",
        env!("CARGO_MANIFEST_DIR")
    );
    let bytes = std::fs::read(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    msgpack::decode(&bytes)
        .expect("payload decodes")
        .get("messages")
        .and_then(Value::as_array)
        .expect("a messages list")
        .iter()
        .take(20)
        .cloned()
        .collect()
}

/// How the calls reach the saver (`LGCODEC_PROFILE_RT`).
enum Shape {
    CurrentThread(tokio::runtime::Runtime),
    Task(tokio::runtime::Runtime),
    None,
}

impl Shape {
    fn from_env() -> Shape {
        match std::env::var("LGCODEC_PROFILE_RT").as_deref() {
            Ok("none") => Shape::None,
            Ok("task") => Shape::Task(
                tokio::runtime::Builder::new_multi_thread()
                    .worker_threads(1)
                    .enable_all()
                    .build()
                    .expect("runtime"),
            ),
            _ => Shape::CurrentThread(
                tokio::runtime::Builder::new_current_thread()
                    .enable_all()
                    .build()
                    .expect("runtime"),
            ),
        }
    }

    /// Runs one future to completion in this shape.
    fn block_on<T: Send + 'static>(&self, f: impl Future<Output = T> + Send + 'static) -> T {
        match self {
            Shape::CurrentThread(rt) => rt.block_on(f),
            Shape::Task(rt) => rt.block_on(rt.spawn(f)).expect("task"),
            Shape::None => {
                // Without a runtime the SQLite saver never waits: one poll finishes it.
                let mut f = pin!(f);
                match f.as_mut().poll(&mut Context::from_waker(Waker::noop())) {
                    Poll::Ready(v) => v,
                    Poll::Pending => panic!("a call without a runtime did not finish"),
                }
            }
        }
    }

    /// Runs `n` calls of `call`, returning each call's wall clock in µs. In the `task`
    /// shape the loop is one task; otherwise one `block_on` per call.
    fn calls<F, Fut>(&self, n: usize, call: F) -> Vec<f64>
    where
        F: Fn(usize) -> Fut + Send + 'static,
        Fut: Future<Output = ()> + Send + 'static,
    {
        match self {
            Shape::Task(rt) => rt
                .block_on(rt.spawn(async move {
                    let mut out = Vec::with_capacity(n);
                    // The worker thread runs the calls and the connection tasks: its CPU
                    // time per call is the client's whole CPU cost of a call.
                    let cpu = thread_cpu_ns();
                    for i in 0..n {
                        let t = Instant::now();
                        call(i).await;
                        out.push(t.elapsed().as_secs_f64() * 1e6);
                    }
                    if let (Some(a), Some(b)) = (cpu, thread_cpu_ns()) {
                        println!(
                            "worker thread CPU: {:.1} µs per call",
                            (b - a) as f64 / 1e3 / n.max(1) as f64
                        );
                    }
                    out
                }))
                .expect("task"),
            _ => {
                // Where the caller's wall clock went: on a core, waiting for one (other
                // jobs), or blocked (disk syncs, waiting for the blocking pool): the last
                // share is what a busy machine does not inflate much.
                let (start, sched) = (Instant::now(), thread_sched_ns());
                let out = (0..n)
                    .map(|i| {
                        let t = Instant::now();
                        self.block_on(call(i));
                        t.elapsed().as_secs_f64() * 1e6
                    })
                    .collect();
                if let (Some((cpu0, wait0)), Some((cpu1, wait1))) = (sched, thread_sched_ns()) {
                    let per = |ns: f64| ns / 1e3 / n.max(1) as f64;
                    let (cpu, wait) = (per((cpu1 - cpu0) as f64), per((wait1 - wait0) as f64));
                    let wall = start.elapsed().as_secs_f64() * 1e6 / n.max(1) as f64;
                    println!(
                        "caller thread per call: wall {wall:.1} µs = CPU {cpu:.1} + waiting for \
                         a core {wait:.1} + blocked {:.1}",
                        wall - cpu - wait
                    );
                }
                out
            }
        }
    }
}

/// CPU time of the calling thread so far and its time spent runnable but waiting for a
/// core, in ns (Linux: `/proc/thread-self/schedstat`).
fn thread_sched_ns() -> Option<(u64, u64)> {
    let text = std::fs::read_to_string("/proc/thread-self/schedstat").ok()?;
    let mut fields = text.split_whitespace().map(|f| f.parse::<u64>().ok());
    Some((fields.next()??, fields.next()??))
}

/// CPU time of the calling thread so far, in ns (Linux: `/proc/thread-self/schedstat`).
fn thread_cpu_ns() -> Option<u64> {
    std::fs::read_to_string("/proc/thread-self/schedstat")
        .ok()?
        .split_whitespace()
        .next()?
        .parse()
        .ok()
}

fn report(what: &str, mut v: Vec<f64>) {
    if let Ok(path) = std::env::var("LGCODEC_PROFILE_TIMES") {
        let text: String = v.iter().map(|t| format!("{t:.1}\n")).collect();
        std::fs::write(&path, text).unwrap_or_else(|e| panic!("{path}: {e}"));
    }
    if v.is_empty() {
        println!("{what}: no calls");
        return;
    }
    let mean = v.iter().sum::<f64>() / v.len() as f64;
    v.sort_by(|a, b| a.total_cmp(b));
    println!(
        "{what} x{}: min {:.1} µs, median {:.1} µs, mean {mean:.1} µs, max {:.1} µs",
        v.len(),
        v[0],
        v[v.len() / 2],
        v[v.len() - 1]
    );
}

fn sqlite(call: &str, n: usize) {
    let shape = Shape::from_env();
    let messages = twenty_messages();
    let state = Value::Array(messages.clone());
    let writes: Vec<(String, Value)> = vec![
        ("messages".into(), Value::Array(messages[..1].to_vec())),
        ("step".into(), Value::from(1i64)),
        ("notes".into(), Value::from("a short note")),
    ];
    let dir = std::env::temp_dir().join(format!("lgcodec-profile-sqlite-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("temp dir");
    let saver = SqliteSaver::create(dir.join("bench.sqlite")).expect("create");
    let mut cp = Checkpoint::now(0);
    cp.channel_values.insert("messages".into(), state);
    let cp = std::sync::Arc::new(cp);
    let thread = CheckpointConfig::new("bench");
    let md = CheckpointMetadata::new("loop", 1);
    let writes_at = {
        let (saver, cp, writes, md) = (saver.clone(), cp.clone(), writes.clone(), md.clone());
        shape.block_on(async move {
            let mut config = CheckpointConfig::new("bench");
            let mut cp = (*cp).clone();
            for step in 0..300 {
                cp.id = uuid6(step);
                config = saver
                    .put(&config, &cp, &md, &Default::default())
                    .await
                    .expect("put");
                saver
                    .put_writes(&config, &writes, "task-1", "")
                    .await
                    .expect("put_writes");
            }
            cp.id = uuid6(0);
            saver
                .put(
                    &CheckpointConfig::new("bench-writes"),
                    &cp,
                    &md,
                    &Default::default(),
                )
                .await
                .expect("put")
        })
    };
    let times = match call {
        "setup" => Vec::new(),
        "put" => {
            // One checkpoint, a new id per call (a new row, as the bench's puts).
            let ids: Vec<String> = (0..n).map(|i| uuid6(i as i64 + 1)).collect();
            let cps: Vec<std::sync::Arc<Checkpoint>> = ids
                .into_iter()
                .map(|id| {
                    let mut c = Checkpoint::new(id, cp.ts.clone());
                    c.channel_values = cp.channel_values.clone();
                    std::sync::Arc::new(c)
                })
                .collect();
            let (saver, md) = (saver.clone(), md.clone());
            let put_thread = CheckpointConfig::new("bench-put");
            shape.calls(n, move |i| {
                let (saver, cp, md, cfg) = (
                    saver.clone(),
                    cps[i].clone(),
                    md.clone(),
                    put_thread.clone(),
                );
                async move {
                    black_box(
                        saver
                            .put(&cfg, &cp, &md, &Default::default())
                            .await
                            .expect("put"),
                    );
                }
            })
        }
        "put_writes" => {
            let saver = saver.clone();
            shape.calls(n, move |i| {
                let (saver, writes, at) = (saver.clone(), writes.clone(), writes_at.clone());
                async move {
                    saver
                        .put_writes(&at, &writes, &format!("task-{i}"), "")
                        .await
                        .expect("put_writes")
                }
            })
        }
        "get_tuple" => {
            let saver = saver.clone();
            shape.calls(n, move |_| {
                let (saver, thread) = (saver.clone(), thread.clone());
                async move {
                    let t = saver.get_tuple(&thread).await.expect("get_tuple");
                    black_box(t.expect("latest"));
                }
            })
        }
        "list_limit10" => {
            let saver = saver.clone();
            shape.calls(n, move |_| {
                let (saver, thread) = (saver.clone(), thread.clone());
                async move {
                    let page = saver
                        .list(Some(&thread), &ListOptions::new().limit(10))
                        .await
                        .expect("list");
                    assert_eq!(page.len(), 10);
                    black_box(page);
                }
            })
        }
        other => panic!("unknown call {other:?}: one of {CALLS:?}"),
    };
    report(&format!("sqlite {call}"), times);
    drop(saver);
    let _ = std::fs::remove_dir_all(&dir);
}

#[cfg(feature = "postgres")]
fn postgres(call: &str, n: usize) {
    use langgraph_codec::saver::postgres::PostgresSaver;

    let Ok(url) = std::env::var("LGCODEC_TEST_PG_URL") else {
        panic!("postgres: set LGCODEC_TEST_PG_URL");
    };
    let shape = match Shape::from_env() {
        Shape::None => panic!("the Postgres saver needs a runtime"),
        s => s,
    };
    let rt_for_build = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    let saver = {
        let _guard = rt_for_build.enter();
        PostgresSaver::builder_from_url(&url)
            .expect("url")
            .schema("profile_rs")
            .build()
            .expect("saver")
    };
    let messages = Value::Array(twenty_messages());
    let md = CheckpointMetadata::new("loop", 1);
    let next = |saver: &PostgresSaver, id: String, messages: &Value| {
        let mut cp = Checkpoint::new(id, "2025-01-01T00:00:00.000000+00:00");
        cp.channel_values
            .insert("messages".into(), messages.clone());
        let v = saver.get_next_version(None).expect("version");
        cp.channel_versions.insert("messages".into(), v.clone());
        let nv: langgraph_codec::saver::ChannelVersions =
            [("messages".to_owned(), v)].into_iter().collect();
        (cp, nv)
    };
    let thread = CheckpointConfig::new("bench-300");
    let writes_at = {
        let saver = saver.clone();
        let mut prepared: Vec<_> = (0..301)
            .map(|step| next(&saver, uuid6(step), &messages))
            .collect();
        let md = md.clone();
        shape.block_on(async move {
            saver.setup().await.expect("setup");
            for t in ["bench-300", "bench-put", "bench-writes", "bench-floor"] {
                saver.delete_thread(t).await.expect("clean");
            }
            let last = prepared.pop().expect("one more");
            let mut cfg = CheckpointConfig::new("bench-300");
            for (cp, nv) in &prepared {
                cfg = saver.put(&cfg, cp, &md, nv).await.expect("put");
            }
            saver
                .put(
                    &CheckpointConfig::new("bench-writes"),
                    &last.0,
                    &md,
                    &last.1,
                )
                .await
                .expect("put")
        })
    };
    let times = match call {
        "setup" => Vec::new(),
        "put" if std::env::var("LGCODEC_PROFILE_PUT").as_deref() == Ok("hot") => {
            // One checkpoint, its id changed per call: its messages stay in the cache,
            // as Python's bench's one shared list does.
            let one = std::sync::Arc::new(std::sync::Mutex::new(Some(next(
                &saver,
                uuid6(1),
                &messages,
            ))));
            let (saver, md) = (saver.clone(), md.clone());
            let put_thread = CheckpointConfig::new("bench-put");
            shape.calls(n, move |i| {
                let (saver, one, md, cfg) =
                    (saver.clone(), one.clone(), md.clone(), put_thread.clone());
                async move {
                    let mut cp = one.lock().expect("lock").take().expect("checkpoint");
                    cp.0.id = uuid6(i as i64 + 1);
                    // A new version too, so that every call inserts a new blob row.
                    let v = saver.get_next_version(None).expect("version");
                    cp.0.channel_versions.insert("messages".into(), v.clone());
                    cp.1.insert("messages".into(), v);
                    black_box(saver.put(&cfg, &cp.0, &md, &cp.1).await.expect("put"));
                    *one.lock().expect("lock") = Some(cp);
                }
            })
        }
        "put" => {
            let cps: Vec<_> = (0..n)
                .map(|i| std::sync::Arc::new(next(&saver, uuid6(i as i64 + 1), &messages)))
                .collect();
            let (saver, md) = (saver.clone(), md.clone());
            let put_thread = CheckpointConfig::new("bench-put");
            shape.calls(n, move |i| {
                let (saver, cp, md, cfg) = (
                    saver.clone(),
                    cps[i].clone(),
                    md.clone(),
                    put_thread.clone(),
                );
                async move {
                    black_box(saver.put(&cfg, &cp.0, &md, &cp.1).await.expect("put"));
                }
            })
        }
        "put_writes" => {
            let writes: Vec<(String, Value)> = (0..3)
                .map(|i| (format!("channel{i}"), Value::from(format!("value {i}"))))
                .collect();
            let saver = saver.clone();
            shape.calls(n, move |i| {
                let (saver, writes, at) = (saver.clone(), writes.clone(), writes_at.clone());
                async move {
                    saver
                        .put_writes(&at, &writes, &format!("task-{i}"), "")
                        .await
                        .expect("put_writes")
                }
            })
        }
        floor if FLOOR_CALLS.contains(&floor) => {
            use langgraph_codec::Serializer;
            let blob = langgraph_codec::JsonPlusSerializer::new()
                .dumps_typed(&messages)
                .expect("blob")
                .data
                .to_vec();
            postgres_floor(&shape, &saver, floor, n, blob)
        }
        "get_tuple" => {
            let saver = saver.clone();
            shape.calls(n, move |_| {
                let (saver, thread) = (saver.clone(), thread.clone());
                async move {
                    black_box(
                        saver
                            .get_tuple(&thread)
                            .await
                            .expect("get")
                            .expect("latest"),
                    );
                }
            })
        }
        other => panic!("unknown call {other:?}: one of {CALLS:?}"),
    };
    report(&format!("postgres {call}"), times);
}

/// The saver's `put` statement in its lz4 form (as `src/saver/postgres/sql.rs` builds
/// it) for the tables of `schema`, with its ten parameters; `put_const` replaces the
/// values by constants as `benches/postgres_server_time.py --pgbench` does.
#[cfg(feature = "postgres")]
fn put_sql(schema: &str, row: &str, blob_values: &str) -> String {
    format!(
        "WITH z AS MATERIALIZED (SELECT set_config('default_toast_compression', 'lz4', true)),
b AS (
    INSERT INTO {schema}.checkpoint_blobs (thread_id, checkpoint_ns, channel, version, type, blob)
    SELECT {row_key}, u.channel, u.version, u.type, u.blob
    FROM z, unnest({blob_values}) AS u(channel, version, type, blob)
    ON CONFLICT (thread_id, checkpoint_ns, channel, version) DO NOTHING
)
INSERT INTO {schema}.checkpoints (thread_id, checkpoint_ns, checkpoint_id, parent_checkpoint_id, checkpoint, metadata)
SELECT {row} FROM z
ON CONFLICT (thread_id, checkpoint_ns, checkpoint_id)
DO UPDATE SET checkpoint = EXCLUDED.checkpoint, metadata = EXCLUDED.metadata",
        row_key = row.split(", ").take(2).collect::<Vec<_>>().join(", "),
    )
}

/// What a `put` costs without the saver, in the saver's call shape, one connection of
/// its pool per call as the saver takes one: `select1` a bare round trip; `put_const`
/// the statement pgbench runs for the floor (`postgres_server_time.py --pgbench`: the
/// bench's values as constants, only the key a parameter); `put_params` the saver's
/// statement with the saver's parameters, made before the clock (the 10 kB blob sent
/// as a parameter, the JSONB as text), so that what `put` adds to it is the saver's
/// own work (serializing, building the parameters, the pool).
#[cfg(feature = "postgres")]
fn postgres_floor(
    shape: &Shape,
    saver: &langgraph_codec::saver::postgres::PostgresSaver,
    call: &str,
    n: usize,
    blob: Vec<u8>,
) -> Vec<f64> {
    use langgraph_codec::saver::postgres::tokio_postgres::types::{ToSql, Type};
    let schema = "\"profile_rs\"";
    let hex: String = blob.iter().map(|b| format!("{b:02x}")).collect();
    let version = "00000000000000000000000000000001.5";
    let (sql, types): (String, Vec<Type>) = match call {
        "select1" => ("SELECT 1".to_owned(), vec![]),
        "put_const" => (
            put_sql(
                schema,
                "'bench-floor', '', 'id-' || $1::text, NULL, '{\"v\": 4, \"channel_versions\": {\"messages\": \"00000000000000000000000000000001.5\"}}'::jsonb, '{\"source\": \"loop\", \"step\": 1, \"parents\": {}}'::jsonb",
                &format!("ARRAY['messages'], ARRAY[$1::text], ARRAY['msgpack'], ARRAY['\\x{hex}'::bytea]"),
            ),
            vec![Type::TEXT],
        ),
        _ => (
            put_sql(
                schema,
                "$1, $2, $3, $4, $5::jsonb, $6::jsonb",
                "$7::text[], $8::text[], $9::text[], $10::bytea[]",
            ),
            vec![
                Type::TEXT,
                Type::TEXT,
                Type::TEXT,
                Type::TEXT,
                Type::TEXT,
                Type::TEXT,
                Type::TEXT_ARRAY,
                Type::TEXT_ARRAY,
                Type::TEXT_ARRAY,
                Type::BYTEA_ARRAY,
            ],
        ),
    };
    // The checkpoint and metadata texts of a saver's row of this workload.
    let checkpoint = format!(
        "{{\"v\": 4, \"id\": \"ID\", \"ts\": \"2025-01-01T00:00:00.000000+00:00\", \"versions_seen\": {{}}, \"updated_channels\": null, \"channel_values\": {{}}, \"channel_versions\": {{\"messages\": \"{version}\"}}}}"
    );
    let metadata = r#"{"step": 1, "source": "loop", "parents": {}}"#.to_owned();
    let pool = saver.pool().clone();
    let blob = std::sync::Arc::new(blob);
    shape.calls(n, move |i| {
        let (pool, sql, types, blob) = (pool.clone(), sql.clone(), types.clone(), blob.clone());
        let (checkpoint, metadata) = (checkpoint.clone(), metadata.clone());
        async move {
            let client = pool.get().await.expect("pool");
            let st = client
                .prepare_typed_cached(&sql, &types)
                .await
                .expect("prepare");
            let key = format!("{}-{i}", std::process::id());
            let params: Vec<Box<dyn ToSql + Sync + Send>> = match types.len() {
                0 => vec![],
                1 => vec![Box::new(key)],
                _ => vec![
                    Box::new("bench-floor".to_owned()),
                    Box::new(String::new()),
                    Box::new(key.clone()),
                    Box::new(None::<String>),
                    Box::new(checkpoint.replace("ID", &key)),
                    Box::new(metadata),
                    Box::new(vec!["messages".to_owned()]),
                    Box::new(vec![key]),
                    Box::new(vec!["msgpack".to_owned()]),
                    Box::new(vec![(*blob).clone()]),
                ],
            };
            let refs: Vec<&(dyn ToSql + Sync)> =
                params.iter().map(|p| &**p as &(dyn ToSql + Sync)).collect();
            black_box(client.query(&st, &refs).await.expect("statement"));
        }
    })
}

#[cfg(not(feature = "postgres"))]
fn postgres(_: &str, _: usize) {
    panic!("build with --features postgres");
}

fn main() {
    // `cargo bench` appends `--bench` (and hands on criterion's options): skip those.
    let args: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| !a.starts_with("--"))
        .collect();
    match args.as_slice() {
        [saver, call, n] => {
            let n: usize = n
                .parse()
                .unwrap_or_else(|_| panic!("{n:?}: the number of calls, a whole number"));
            match saver.as_str() {
                "sqlite" => sqlite(call, n),
                "postgres" => postgres(call, n),
                other => panic!("unknown saver {other:?}: sqlite or postgres"),
            }
        }
        // A plain `cargo bench`: one call of each, as a check.
        _ => {
            for call in ["put", "put_writes", "get_tuple"] {
                sqlite(call, 1);
            }
        }
    }
}
