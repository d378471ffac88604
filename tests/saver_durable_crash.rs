//! Crash test of `DurableSaver` in `async` mode over a real SQLite file: this test
//! binary re-runs itself as a child that writes checkpoints and writes through the
//! wrapper, flushing every 50 steps and saying so on stdout; the parent kills it with
//! SIGKILL while writes are queued, reopens the file and checks the documented loss
//! window: everything a flush acknowledged is there, what is there is a prefix of the
//! thread's history (no gaps, each parent before its child), every checkpoint reads
//! with its exact values, and each `put_writes` call is there whole or not at all. Then
//! Python's `SqliteSaver` reads the same file.

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::time::Duration;

use langgraph_codec::saver::durable::{Durability, DurableOptions, DurableSaver};
use langgraph_codec::saver::sqlite::SqliteSaver;
use langgraph_codec::saver::{
    ChannelVersion, ChannelVersions, Checkpoint, CheckpointConfig, CheckpointMetadata,
    CheckpointSaver, ListOptions,
};
use langgraph_codec::Value;

const CHILD_ENV: &str = "LGCODEC_DURABLE_CRASH_CHILD";
const THREAD: &str = "crash";
const FLUSH_EVERY: usize = 50;
const WRITES_PER_STEP: usize = 3;

fn id(step: usize) -> String {
    format!("{step:08}")
}

/// The value of channel `messages` at `step` (about 1 KB, so the queue holds real work).
fn messages(step: usize) -> Value {
    Value::Array(
        (0..8)
            .map(|m| Value::from(format!("step {step} message {m} {}", "x".repeat(100))))
            .collect(),
    )
}

fn checkpoint(step: usize) -> Checkpoint {
    let mut cp = Checkpoint::new(id(step), "2026-11-25T00:00:00+00:00");
    let v = i64::try_from(step).expect("small") + 1;
    cp.channel_values.insert("messages".into(), messages(step));
    cp.channel_values.insert("step".into(), Value::from(v));
    cp.channel_versions
        .insert("messages".into(), ChannelVersion::Int(v));
    cp.channel_versions
        .insert("step".into(), ChannelVersion::Int(v));
    cp
}

fn writes(step: usize) -> Vec<(String, Value)> {
    (0..WRITES_PER_STEP)
        .map(|k| (format!("ch{k}"), Value::from(format!("write {step}.{k}"))))
        .collect()
}

/// The child: runs only when the parent sets `CHILD_ENV` to the database path.
#[test]
fn crash_child() {
    let Ok(path) = std::env::var(CHILD_ENV) else {
        return;
    };
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime");
    rt.block_on(async move {
        let inner = Arc::new(SqliteSaver::create(&path).expect("create"));
        let saver = DurableSaver::with_options(
            inner,
            DurableOptions::new(Durability::Async).capacity(100_000),
        )
        .expect("durable");
        let mut parent = CheckpointConfig::new(THREAD);
        for step in 0..1_000_000 {
            let cp = checkpoint(step);
            let versions: ChannelVersions = cp.channel_versions.clone();
            parent = saver
                .put(
                    &parent,
                    &cp,
                    &CheckpointMetadata::new("loop", i64::try_from(step).expect("small")),
                    &versions,
                )
                .await
                .expect("put");
            saver
                .put_writes(&parent, &writes(step), &format!("task-{step}"), "")
                .await
                .expect("put_writes");
            if (step + 1) % FLUSH_EVERY == 0 {
                saver.flush(Duration::from_secs(60)).await.expect("flush");
                println!("FLUSHED {step}");
            } else {
                println!("QUEUED {step} PENDING {}", saver.pending().await);
            }
        }
    });
}

#[test]
fn kill_9_with_writes_queued_loses_only_unflushed_writes() {
    if std::env::var(CHILD_ENV).is_ok() {
        return;
    }
    let tmp = tempfile::Builder::new()
        .prefix("lgcodec-durable-crash-")
        .tempdir()
        .expect("temp dir");
    let dir = tmp.path().to_path_buf();
    let path = dir.join("crash.sqlite");

    let mut child = Command::new(std::env::current_exe().expect("exe"))
        .args(["crash_child", "--exact", "--nocapture", "--test-threads=1"])
        .env(CHILD_ENV, &path)
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .expect("spawn child");
    let stdout = child.stdout.take().expect("stdout");
    let mut last_flushed: Option<usize> = None;
    let mut last_queued = 0usize;
    let mut pending_at_kill = 0usize;
    for line in BufReader::new(stdout).lines() {
        let line = line.expect("line");
        let words: Vec<&str> = line.split_whitespace().collect();
        match words.as_slice() {
            ["FLUSHED", step] => last_flushed = Some(step.parse().expect("step")),
            ["QUEUED", step, "PENDING", pending] => {
                last_queued = step.parse().expect("step");
                let pending: usize = pending.parse().expect("pending");
                // Kill once 4 flushes were acknowledged and a good backlog is queued.
                if last_flushed.is_some_and(|f| f >= 4 * FLUSH_EVERY - 1) && pending >= 40 {
                    pending_at_kill = pending;
                    child.kill().expect("SIGKILL");
                    break;
                }
            }
            _ => {}
        }
    }
    let status = child.wait().expect("wait");
    assert!(!status.success(), "the child was killed: {status:?}");
    let last_flushed = last_flushed.expect("the child flushed before it was killed");
    assert!(pending_at_kill > 0, "writes were queued at the kill");

    // Reopen the file as a new process would (SQLite recovers the WAL).
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    let stored = rt.block_on(async {
        let saver = SqliteSaver::open(&path).expect("reopen");
        saver
            .list(Some(&CheckpointConfig::new(THREAD)), &ListOptions::new())
            .await
            .expect("every stored checkpoint reads")
    });
    let n = stored.len();
    // Everything acknowledged is there; what is there is a prefix with no gaps.
    assert!(
        n > last_flushed,
        "flush acknowledged step {last_flushed} but only {n} checkpoints are stored"
    );
    for (step, tuple) in stored.iter().rev().enumerate() {
        assert_eq!(tuple.checkpoint.id, id(step), "a gap in the history");
        let parent = tuple
            .parent_config
            .as_ref()
            .and_then(|c| c.checkpoint_id.clone());
        assert_eq!(parent, step.checked_sub(1).map(id), "parent of {step}");
        assert_eq!(
            tuple.checkpoint.channel_values.get("messages"),
            Some(&messages(step))
        );
        // Each put_writes call is whole or absent; only the newest checkpoint can
        // lack its writes (they are queued after it).
        let got: Vec<(String, String, Value)> = tuple
            .pending_writes
            .iter()
            .map(|w| (w.task_id.clone(), w.channel.clone(), w.value.clone()))
            .collect();
        let want: Vec<(String, String, Value)> = writes(step)
            .into_iter()
            .map(|(c, v)| (format!("task-{step}"), c, v))
            .collect();
        if step + 1 == n && got.is_empty() {
            continue;
        }
        assert_eq!(got, want, "writes of step {step}");
    }
    let lost = last_queued + 1 - n.min(last_queued + 1);
    println!(
        "killed with {pending_at_kill} writes queued; flush acknowledged steps 0..={last_flushed}; \
         {n} checkpoints stored ({} beyond the last flush, written but not acknowledged); \
         {lost} steps reported queued were lost",
        n - 1 - last_flushed
    );

    python_reads(&path, n);
    let _ = std::fs::remove_dir_all(&dir);
}

/// Python's own `SqliteSaver` lists the same history and reads the newest checkpoint.
fn python_reads(path: &std::path::Path, n: usize) {
    // LGCODEC_PYTHON (CI sets it: the read is then required); otherwise a venv with
    // the pinned packages if there is one, or the read is skipped with a reason.
    let required = std::env::var("LGCODEC_PYTHON").ok();
    let python = match &required {
        Some(p) => p.clone(),
        None => {
            let repo = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
            let found = [".venv/bin/python", ".ci-venv/bin/python"]
                .into_iter()
                .map(|p| repo.join(p))
                .find(|p| p.exists());
            match found {
                Some(p) => p.display().to_string(),
                None => {
                    println!("skipping the Python read: no venv found (set LGCODEC_PYTHON)");
                    return;
                }
            }
        }
    };
    let script = r#"
import sys
from langgraph.checkpoint.sqlite import SqliteSaver
with SqliteSaver.from_conn_string(sys.argv[1]) as saver:
    config = {"configurable": {"thread_id": "crash"}}
    tuples = list(saver.list(config))
    ids = [t.checkpoint["id"] for t in tuples]
    assert ids == sorted(ids, reverse=True), ids
    for i, t in enumerate(reversed(tuples)):
        assert t.checkpoint["id"] == "%08d" % i
        assert len(t.checkpoint["channel_values"]["messages"]) == 8
        assert t.checkpoint["channel_values"]["step"] == i + 1
        assert len(t.pending_writes) in (0, 3)
    print(len(tuples))
"#;
    let out = match Command::new(&python)
        .args(["-c", script])
        .arg(path)
        .output()
    {
        Ok(out) => out,
        Err(e) if required.is_none() => {
            println!("skipping the Python read: cannot run {python}: {e}");
            return;
        }
        Err(e) => panic!("cannot run {python}: {e}"),
    };
    assert!(
        out.status.success(),
        "Python failed to read the file: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let count: usize = String::from_utf8_lossy(&out.stdout)
        .trim()
        .parse()
        .expect("a count");
    assert_eq!(count, n, "Python lists what Rust lists");
}
