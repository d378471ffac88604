//! The SQLite saver's inline fast path (`SqliteSaverBuilder::inline_fast_path`):
//! uncontended `put`, `put_writes` and `get_tuple` run on the calling task, without the
//! blocking pool; a call that would have to wait (another connection holds the lock, a
//! commit that syncs) goes to the pool, where it waits without blocking the executor
//! and succeeds once the lock is released; a `SQLITE_BUSY` at the commit leaves
//! nothing of the first attempt behind.
#![cfg(feature = "sqlite")]

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{mpsc, Arc};
use std::time::{Duration, Instant};

use langgraph_codec::saver::sqlite::rusqlite;
use langgraph_codec::saver::sqlite::{SqliteSaver, Synchronous};
use langgraph_codec::saver::{Checkpoint, CheckpointConfig, CheckpointMetadata, CheckpointSaver};
use langgraph_codec::Value;

/// A fresh directory under the temp dir, removed on drop.
struct TempDir(tempfile::TempDir);

impl TempDir {
    fn new(tag: &str) -> Self {
        TempDir(
            tempfile::Builder::new()
                .prefix(&format!("lgcodec-sqlite-fast-{tag}-"))
                .tempdir()
                .expect("temp dir"),
        )
    }
    fn file(&self) -> PathBuf {
        self.0.path().join("fast.sqlite")
    }
}

/// A current-thread runtime whose blocking pool has a single thread.
fn runtime_with_one_blocking_thread() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .max_blocking_threads(1)
        .enable_time()
        .build()
        .expect("runtime")
}

fn checkpoint(step: i64) -> Checkpoint {
    let mut cp = Checkpoint::now(step);
    cp.channel_values
        .insert("n".into(), Value::from(format!("step {step}")));
    cp
}

/// Stores `checkpoint(step)` as the first checkpoint of `thread`.
fn put_step(saver: &SqliteSaver, thread: &str, step: i64) -> CheckpointConfig {
    runtime_with_one_blocking_thread()
        .block_on(saver.put(
            &CheckpointConfig::new(thread),
            &checkpoint(step),
            &CheckpointMetadata::new("loop", step),
            &Default::default(),
        ))
        .expect("put")
}

/// What finished within a second while the runtime's only blocking thread was busy:
/// `(put, put_writes, get_tuple)`. A call that needs the pool cannot finish until the
/// pool is released.
fn finished_with_the_pool_taken(saver: &SqliteSaver) -> (bool, bool, bool) {
    let rt = runtime_with_one_blocking_thread();
    rt.block_on(async {
        // Warm up: the first write starts the checkpoint thread, the first read opens a
        // reader (on the pool).
        let at = saver
            .put(
                &CheckpointConfig::new("t"),
                &checkpoint(0),
                &CheckpointMetadata::new("loop", 0),
                &Default::default(),
            )
            .await
            .expect("put");
        saver.get_tuple(&at).await.expect("get_tuple");

        let (release, wait) = mpsc::channel::<()>();
        let taken = tokio::task::spawn_blocking(move || {
            let _ = wait.recv();
        });
        let limit = Duration::from_secs(1);
        let put = tokio::time::timeout(
            limit,
            saver.put(
                &at,
                &checkpoint(1),
                &CheckpointMetadata::new("loop", 1),
                &Default::default(),
            ),
        )
        .await;
        let writes = [("a".to_owned(), Value::from(1i64))];
        let put_writes =
            tokio::time::timeout(limit, saver.put_writes(&at, &writes, "task", "")).await;
        let get = tokio::time::timeout(limit, saver.get_tuple(&CheckpointConfig::new("t"))).await;
        release.send(()).expect("the pool's task waits");
        taken.await.expect("pool task");
        if let Ok(put) = &put {
            put.as_ref().expect("put");
        }
        if let Ok(w) = &put_writes {
            w.as_ref().expect("put_writes");
        }
        if let Ok(got) = &get {
            let got = got.as_ref().expect("get_tuple").as_ref().expect("stored");
            let latest = if put.is_ok() { "step 1" } else { "step 0" };
            assert_eq!(
                got.checkpoint.channel_values.get("n"),
                Some(&Value::from(latest))
            );
        }
        (put.is_ok(), put_writes.is_ok(), get.is_ok())
    })
}

#[test]
fn uncontended_calls_run_on_the_calling_task_without_the_blocking_pool() {
    let dir = TempDir::new("inline");
    let saver = SqliteSaver::create(dir.file()).expect("create");
    assert_eq!(
        finished_with_the_pool_taken(&saver),
        (true, true, true),
        "put, put_writes and get_tuple should not need the blocking pool"
    );
}

#[test]
fn with_the_fast_path_off_every_call_goes_to_the_blocking_pool() {
    let dir = TempDir::new("off");
    let saver = SqliteSaver::builder(dir.file())
        .create(true)
        .inline_fast_path(false)
        .open()
        .expect("create");
    assert_eq!(finished_with_the_pool_taken(&saver), (false, false, false));
}

#[test]
fn with_synchronous_full_writes_go_to_the_pool_and_reads_stay_inline() {
    // FULL syncs the WAL at every commit: a write could wait for the disk.
    let dir = TempDir::new("full");
    let saver = SqliteSaver::builder(dir.file())
        .create(true)
        .synchronous(Synchronous::Full)
        .open()
        .expect("create");
    assert_eq!(finished_with_the_pool_taken(&saver), (false, false, true));
}

/// Another connection holds `sql`'s lock on `path` for `hold`, from another thread;
/// returns once the lock is taken.
fn hold_lock(path: &Path, sql: &'static str, hold: Duration) -> std::thread::JoinHandle<()> {
    let path = path.to_path_buf();
    let (locked, is_locked) = mpsc::channel();
    let t = std::thread::spawn(move || {
        let conn = rusqlite::Connection::open(&path).expect("open");
        conn.execute_batch(sql).expect("lock");
        locked.send(()).expect("test waits");
        std::thread::sleep(hold);
        conn.execute_batch("COMMIT").expect("release");
    });
    is_locked.recv().expect("locked");
    t
}

/// Runs `call` on a current-thread runtime beside a task that counts 1 ms ticks; returns
/// its output, how long it took and how many ticks the executor ran meanwhile.
fn beside_a_ticker<T>(call: impl std::future::Future<Output = T>) -> (T, Duration, u64) {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()
        .expect("runtime");
    rt.block_on(async {
        let ticks = Arc::new(AtomicU64::new(0));
        let ticker = {
            let ticks = ticks.clone();
            tokio::spawn(async move {
                loop {
                    tokio::time::sleep(Duration::from_millis(1)).await;
                    ticks.fetch_add(1, Ordering::Relaxed);
                }
            })
        };
        tokio::task::yield_now().await;
        let (start, before) = (Instant::now(), ticks.load(Ordering::Relaxed));
        let out = call.await;
        let (took, ran) = (start.elapsed(), ticks.load(Ordering::Relaxed) - before);
        ticker.abort();
        (out, took, ran)
    })
}

const HOLD: Duration = Duration::from_millis(200);

/// The call waited for the lock (about [`HOLD`]) while the executor thread kept running
/// the ticker (1 ms ticks; a blocked executor runs none).
fn waited_on_the_pool(took: Duration, ticks: u64) {
    assert!(
        took >= HOLD / 2,
        "the call did not wait for the lock ({took:?})"
    );
    assert!(
        ticks >= 20,
        "only {ticks} ticks ran while the call waited {took:?}"
    );
}

/// The id of the checkpoint stored at `at`, read back.
fn stored_id(saver: &SqliteSaver, at: &CheckpointConfig) -> String {
    runtime_with_one_blocking_thread()
        .block_on(saver.get_tuple(at))
        .expect("get_tuple")
        .expect("stored")
        .checkpoint
        .id
}

#[test]
fn a_put_waits_on_the_pool_for_another_connections_write_lock_and_the_executor_runs_on() {
    let dir = TempDir::new("locked");
    let path = dir.file();
    let saver = SqliteSaver::create(&path).expect("create");
    let holder = hold_lock(&path, "BEGIN IMMEDIATE", HOLD);
    let cp = checkpoint(7);
    let md = CheckpointMetadata::new("loop", 7);
    let config = CheckpointConfig::new("locked");
    let (stored, took, ticks) = beside_a_ticker(saver.put(&config, &cp, &md, &Default::default()));
    holder.join().expect("holder");
    let stored = stored.expect("the put succeeds once the lock is released");
    waited_on_the_pool(took, ticks);
    assert_eq!(stored_id(&saver, &stored), cp.id);
    let rt = runtime_with_one_blocking_thread();

    // put_writes the same way.
    let holder = hold_lock(&path, "BEGIN IMMEDIATE", HOLD);
    let writes = [("a".to_owned(), Value::from(1i64))];
    let (done, took, ticks) = beside_a_ticker(saver.put_writes(&stored, &writes, "task", ""));
    holder.join().expect("holder");
    done.expect("put_writes succeeds once the lock is released");
    waited_on_the_pool(took, ticks);
    let got = rt
        .block_on(saver.get_tuple(&stored))
        .expect("get_tuple")
        .expect("stored");
    assert_eq!(got.pending_writes.len(), 1);
}

/// A store in rollback-journal mode (as an older Python file can be): there another
/// connection's locks block readers too, and a commit needs every reader gone.
fn rollback_journal_store(path: &Path, synchronous: Synchronous) -> SqliteSaver {
    drop(SqliteSaver::create(path).expect("create"));
    let conn = rusqlite::Connection::open(path).expect("open");
    let mode: String = conn
        .query_row("PRAGMA journal_mode=DELETE", [], |r| r.get(0))
        .expect("journal mode");
    assert_eq!(mode, "delete");
    drop(conn);
    SqliteSaver::builder(path)
        .synchronous(synchronous)
        .open()
        .expect("open")
}

#[test]
fn a_read_blocked_by_another_connections_exclusive_lock_waits_on_the_pool() {
    let dir = TempDir::new("read-locked");
    let path = dir.file();
    let saver = rollback_journal_store(&path, Synchronous::Normal);
    let rt = runtime_with_one_blocking_thread();
    let stored = put_step(&saver, "r", 3);
    // Warm a reader, so the read below would take the fast path.
    rt.block_on(saver.get_tuple(&stored)).expect("get_tuple");
    let holder = hold_lock(&path, "BEGIN EXCLUSIVE", HOLD);
    let (got, took, ticks) = beside_a_ticker(saver.get_tuple(&stored));
    holder.join().expect("holder");
    let got = got
        .expect("get_tuple succeeds once the lock is released")
        .expect("stored");
    assert_eq!(
        got.checkpoint.channel_values.get("n"),
        Some(&Value::from("step 3"))
    );
    waited_on_the_pool(took, ticks);
}

#[test]
fn a_busy_commit_is_rolled_back_and_the_put_retried_on_the_pool() {
    // Rollback journal with synchronous=OFF: commits do not sync, so puts take the fast
    // path; a commit needs every reader gone, so another connection's open read makes
    // the fast path's COMMIT fail with SQLITE_BUSY after the INSERT ran. The whole
    // transaction must be rolled back (nothing visible, the file not left locked) and
    // the put run again on the pool, where it waits for the reader.
    let dir = TempDir::new("busy-commit");
    let path = dir.file();
    let saver = rollback_journal_store(&path, Synchronous::Off);
    let (release, wait) = mpsc::channel::<()>();
    let (reading, is_reading) = mpsc::channel::<()>();
    let reader = {
        let path = path.clone();
        std::thread::spawn(move || {
            let conn = rusqlite::Connection::open(&path).expect("open");
            conn.execute_batch("BEGIN").expect("begin");
            let n: i64 = conn
                .query_row("SELECT count(*) FROM checkpoints", [], |r| r.get(0))
                .expect("count");
            assert_eq!(n, 0);
            reading.send(()).expect("test waits");
            let _ = wait.recv_timeout(HOLD);
            conn.execute_batch("COMMIT").expect("end the read");
        })
    };
    is_reading.recv().expect("reading");
    let cp = checkpoint(9);
    let md = CheckpointMetadata::new("loop", 9);
    let config = CheckpointConfig::new("busy");
    let (stored, took, ticks) = beside_a_ticker(saver.put(&config, &cp, &md, &Default::default()));
    drop(release);
    reader.join().expect("reader");
    let stored = stored.expect("the put succeeds once the reader is gone");
    waited_on_the_pool(took, ticks);
    let conn = rusqlite::Connection::open(&path).expect("open");
    let n: i64 = conn
        .query_row(
            "SELECT count(*) FROM checkpoints WHERE checkpoint_id = ?",
            [&stored.checkpoint_id],
            |r| r.get(0),
        )
        .expect("count");
    assert_eq!(n, 1, "exactly the retried put's row");
}

/// Write syscalls made so far by the calling thread (`syscw` of `/proc/thread-self/io`).
#[cfg(target_os = "linux")]
fn write_syscalls() -> u64 {
    let io = std::fs::read_to_string("/proc/thread-self/io").expect("/proc/thread-self/io");
    io.lines()
        .find_map(|l| l.strip_prefix("syscw: "))
        .and_then(|n| n.trim().parse().ok())
        .expect("a syscw line")
}

#[cfg(target_os = "linux")]
#[test]
fn no_inline_put_checkpoints_the_wal_on_the_calling_thread() {
    // 2,500 puts of ~7 WAL pages: the WAL passes the writer's own checkpoint threshold
    // (~8,000 frames) twice. That checkpoint (hundreds of writes and two fsyncs, after
    // waiting for the background one) must run on the blocking pool, not inline.
    let dir = TempDir::new("ckpt");
    let saver = SqliteSaver::create(dir.file()).expect("create");
    let big = Value::from("x".repeat(12_000));
    let rt = tokio::runtime::Builder::new_current_thread()
        .build()
        .expect("runtime");
    let (most, total) = rt.block_on(async {
        let mut config = CheckpointConfig::new("t");
        let (mut most, mut total) = (0, 0);
        for step in 0..2_500 {
            let mut cp = Checkpoint::now(step);
            cp.channel_values.insert("state".into(), big.clone());
            let before = write_syscalls();
            config = saver
                .put(
                    &config,
                    &cp,
                    &CheckpointMetadata::new("loop", step),
                    &Default::default(),
                )
                .await
                .expect("put");
            let made = write_syscalls() - before;
            most = most.max(made);
            total += made;
        }
        (most, total)
    });
    // The fast path ran (a put writes its ~7 frames, a header and a page each) ...
    assert!(
        total > 2_500 * 6,
        "{total} writes: the puts did not run inline"
    );
    // ... and never the WAL's copy into the file.
    assert!(
        most < 60,
        "a put made {most} write syscalls on the calling thread: it checkpointed the WAL"
    );
}

/// A Python interpreter: `LGCODEC_PYTHON` (CI sets it; then required), else the venv
/// repository's venv (`.venv`, `.ci-venv`) or `python3` on the path; `None` (the test
/// skipped) if none runs.
fn python() -> Option<String> {
    if let Ok(p) = std::env::var("LGCODEC_PYTHON") {
        return Some(p);
    }
    let repo = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let venvs =
        [".venv/bin/python", ".ci-venv/bin/python"].map(|p| repo.join(p).display().to_string());
    venvs.into_iter().chain(["python3".to_owned()]).find(|p| {
        std::process::Command::new(p)
            .args(["-c", "import sqlite3"])
            .output()
            .is_ok_and(|o| o.status.success())
    })
}

#[test]
fn a_put_waits_for_a_python_process_holding_the_write_lock_without_blocking_the_executor() {
    let Some(python) = python() else {
        println!("skipping: no Python found (set LGCODEC_PYTHON)");
        return;
    };
    let dir = TempDir::new("python");
    let path = dir.file();
    let saver = SqliteSaver::create(&path).expect("create");
    // Python's sqlite3, as langgraph-checkpoint-sqlite uses it, in its own process: a
    // write transaction (a write of its own inside) held for 200 ms.
    let script = r#"
import sqlite3, sys, time
conn = sqlite3.connect(sys.argv[1], isolation_level=None)
conn.execute("BEGIN IMMEDIATE")
conn.execute("INSERT INTO writes (thread_id, checkpoint_ns, checkpoint_id, task_id, idx, channel, type, value) VALUES ('py', '', 'x', 't', 0, 'c', 'msgpack', x'c0')")
print("locked", flush=True)
time.sleep(0.2)
conn.execute("COMMIT")
"#;
    let mut child = std::process::Command::new(&python)
        .args(["-c", script])
        .arg(&path)
        .stdout(std::process::Stdio::piped())
        .spawn()
        .expect("python runs");
    let mut line = String::new();
    std::io::BufRead::read_line(
        &mut std::io::BufReader::new(child.stdout.take().expect("stdout")),
        &mut line,
    )
    .expect("python's line");
    assert_eq!(line.trim(), "locked");
    let cp = checkpoint(11);
    let (stored, took, ticks) = beside_a_ticker(saver.put(
        &CheckpointConfig::new("py-shared"),
        &cp,
        &CheckpointMetadata::new("loop", 11),
        &Default::default(),
    ));
    assert!(child.wait().expect("python ends").success());
    let stored = stored.expect("the put succeeds once Python commits");
    waited_on_the_pool(took, ticks);
    assert_eq!(stored_id(&saver, &stored), cp.id);
    // Python's row is there too: both transactions committed, neither lost.
    let conn = rusqlite::Connection::open(&path).expect("open");
    let n: i64 = conn
        .query_row(
            "SELECT count(*) FROM writes WHERE thread_id = 'py'",
            [],
            |r| r.get(0),
        )
        .expect("count");
    assert_eq!(n, 1);
}

#[test]
fn put_writes_of_many_rows_and_of_special_channels_store_what_python_stores() {
    // 19 writes in one call, then the same task again; special channels twice.
    let dir = TempDir::new("batched");
    let path = dir.file();
    let saver = SqliteSaver::create(&path).expect("create");
    let rt = runtime_with_one_blocking_thread();
    let at = put_step(&saver, "w", 1);
    let writes = |tag: &str| -> Vec<(String, Value)> {
        (0..19)
            .map(|i| (format!("c{i}"), Value::from(format!("{tag} {i}"))))
            .collect()
    };
    rt.block_on(saver.put_writes(&at, &writes("first"), "task", "p"))
        .expect("put_writes");
    // Python's INSERT OR IGNORE: a retried task's first writes win.
    rt.block_on(saver.put_writes(&at, &writes("second"), "task", "p"))
        .expect("put_writes again");
    // Only special channels: INSERT OR REPLACE, idx from Python's WRITES_IDX_MAP.
    let special = |tag: &str| -> Vec<(String, Value)> {
        ["__error__", "__scheduled__", "__interrupt__", "__resume__"]
            .iter()
            .cycle()
            .take(10)
            .enumerate()
            .map(|(i, c)| ((*c).to_owned(), Value::from(format!("{tag} {i}"))))
            .collect()
    };
    rt.block_on(saver.put_writes(&at, &special("first"), "task2", ""))
        .expect("special");
    rt.block_on(saver.put_writes(&at, &special("second"), "task2", ""))
        .expect("special again");

    let conn = rusqlite::Connection::open(&path).expect("open");
    let rows: Vec<(String, String, i64, String)> = conn
        .prepare(
            "SELECT task_id, task_path, idx, channel FROM writes \
             ORDER BY task_id, idx",
        )
        .expect("select")
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)))
        .expect("rows")
        .collect::<Result<_, _>>()
        .expect("rows");
    let mut expected: Vec<(String, String, i64, String)> = (0..19)
        .map(|i| ("task".to_owned(), "p".to_owned(), i, format!("c{i}")))
        .collect();
    // The last of each special channel replaced the earlier ones (same idx).
    for (idx, channel) in [
        (-4, "__resume__"),
        (-3, "__interrupt__"),
        (-2, "__scheduled__"),
        (-1, "__error__"),
    ] {
        expected.push(("task2".to_owned(), String::new(), idx, channel.to_owned()));
    }
    expected.sort();
    let mut rows = rows;
    rows.sort();
    assert_eq!(rows, expected);
    let got = rt
        .block_on(saver.get_tuple(&at))
        .expect("get_tuple")
        .expect("stored");
    let task: Vec<(String, Value)> = got
        .pending_writes
        .iter()
        .filter(|w| w.task_id == "task")
        .map(|w| (w.channel.clone(), w.value.clone()))
        .collect();
    assert_eq!(task, writes("first"));
    let task2: Vec<(String, Value)> = got
        .pending_writes
        .iter()
        .filter(|w| w.task_id == "task2")
        .map(|w| (w.channel.clone(), w.value.clone()))
        .collect();
    // Python's order within a task is by idx: -4 .. -1. The last write of each
    // channel of the second call: positions 9 (__scheduled__... cycle) and so on.
    assert_eq!(
        task2,
        vec![
            ("__resume__".to_owned(), Value::from("second 7")),
            ("__interrupt__".to_owned(), Value::from("second 6")),
            ("__scheduled__".to_owned(), Value::from("second 9")),
            ("__error__".to_owned(), Value::from("second 8")),
        ]
    );
}
