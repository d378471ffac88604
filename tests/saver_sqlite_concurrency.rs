//! `SqliteSaver` under load: 8 tasks × 1,000 mixed operations on one file while a second
//! process writes the same file. Nothing may fail ("database is locked") or be lost.
#![cfg(feature = "sqlite")]

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command;

use langgraph_codec::saver::sqlite::SqliteSaver;
use langgraph_codec::saver::{
    Checkpoint, CheckpointConfig, CheckpointMetadata, CheckpointSaver, ListOptions,
};
use langgraph_codec::Value;

const TASKS: usize = 8;
const OPS: usize = 1_000;
const CHILD_PUTS: usize = 300;
const CHILD_ENV: &str = "LGCODEC_SQLITE_CHILD_FILE";

/// Every 4th op is a put (so 250 checkpoints per task), every 4th a put_writes of two
/// writes against the latest checkpoint, the others reads.
async fn worker(saver: SqliteSaver, task: usize) -> (BTreeSet<String>, usize) {
    let thread = format!("task-{task}");
    let mut config = CheckpointConfig::new(thread.as_str()).with_ns("");
    let mut ids = BTreeSet::new();
    let mut writes = 0;
    for op in 0..OPS {
        match op % 4 {
            0 => {
                let mut cp = Checkpoint::now(op as i64);
                cp.channel_values.insert("n".into(), Value::from(op as i64));
                let md = CheckpointMetadata::new("loop", op as i64).with("task", task as i64);
                config = saver
                    .put(&config, &cp, &md, &Default::default())
                    .await
                    .unwrap_or_else(|e| panic!("task {task} op {op} put: {e}"));
                ids.insert(cp.id);
            }
            1 => {
                let w = [
                    ("a".to_owned(), Value::from(op as i64)),
                    ("b".to_owned(), Value::from("x")),
                ];
                saver
                    .put_writes(&config, &w, &format!("t{op}"), "")
                    .await
                    .unwrap_or_else(|e| panic!("task {task} op {op} put_writes: {e}"));
                writes += 2;
            }
            2 => {
                let t = saver
                    .get_tuple(&CheckpointConfig::new(thread.as_str()))
                    .await
                    .unwrap_or_else(|e| panic!("task {task} op {op} get_tuple: {e}"))
                    .expect("the task's latest checkpoint");
                assert_eq!(
                    t.checkpoint.channel_values.get("n"),
                    Some(&Value::from(op as i64 - 2))
                );
            }
            _ => {
                let page = saver
                    .list(
                        Some(&CheckpointConfig::new(thread.as_str())),
                        &ListOptions::new().limit(5),
                    )
                    .await
                    .unwrap_or_else(|e| panic!("task {task} op {op} list: {e}"));
                assert_eq!(page.len(), ids.len().min(5));
            }
        }
    }
    (ids, writes)
}

fn temp_file(tag: &str) -> (PathBuf, PathBuf) {
    let dir = tempfile::Builder::new()
        .prefix(&format!("lgcodec-conc-{tag}-"))
        .tempdir()
        .expect("temp dir")
        .keep();
    let file = dir.join("shared.sqlite");
    (dir, file)
}

/// The second process: `CHILD_PUTS` checkpoints on thread `child`, each with a write.
fn child_main(path: &Path) {
    let rt = tokio::runtime::Builder::new_current_thread()
        .build()
        .expect("runtime");
    rt.block_on(async {
        let saver = SqliteSaver::open(path).expect("child open");
        let mut config = CheckpointConfig::new("child").with_ns("");
        for i in 0..CHILD_PUTS {
            let cp = Checkpoint::now(i as i64);
            config = saver
                .put(
                    &config,
                    &cp,
                    &CheckpointMetadata::new("loop", i as i64),
                    &Default::default(),
                )
                .await
                .unwrap_or_else(|e| panic!("child put {i}: {e}"));
            saver
                .put_writes(
                    &config,
                    &[("c".to_owned(), Value::from(i as i64))],
                    "child-task",
                    "",
                )
                .await
                .unwrap_or_else(|e| panic!("child put_writes {i}: {e}"));
        }
    });
}

/// Runs only as the child process of `eight_tasks_and_a_second_process_lose_nothing`.
#[test]
#[ignore = "the child process of eight_tasks_and_a_second_process_lose_nothing"]
fn child_writer() {
    if let Some(path) = std::env::var_os(CHILD_ENV) {
        child_main(Path::new(&path));
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn eight_tasks_and_a_second_process_lose_nothing() {
    let (dir, file) = temp_file("load");
    let saver = SqliteSaver::create(&file).expect("create");
    let mut child = Command::new(std::env::current_exe().expect("test binary"))
        .args([
            "--exact",
            "child_writer",
            "--ignored",
            "--nocapture",
            "--test-threads=1",
        ])
        .env(CHILD_ENV, &file)
        .spawn()
        .expect("spawn the second process");
    let handles: Vec<_> = (0..TASKS)
        .map(|task| tokio::spawn(worker(saver.clone(), task)))
        .collect();
    let mut expected = Vec::new();
    for h in handles {
        expected.push(h.await.expect("worker"));
    }
    let status = tokio::task::spawn_blocking(move || child.wait())
        .await
        .expect("join")
        .expect("wait");
    assert!(status.success(), "the second process failed: {status}");

    // Everything is there, read by a fresh saver.
    let fresh = SqliteSaver::open(&file).expect("reopen");
    for (task, (ids, writes)) in expected.iter().enumerate() {
        let cfg = CheckpointConfig::new(format!("task-{task}"));
        let listed = fresh
            .list(Some(&cfg), &ListOptions::new())
            .await
            .expect("list");
        let got: BTreeSet<String> = listed
            .iter()
            .filter_map(|t| t.config.checkpoint_id.clone())
            .collect();
        assert_eq!(&got, ids, "task {task} checkpoints");
        assert_eq!(ids.len(), OPS / 4);
        let stored: usize = listed.iter().map(|t| t.pending_writes.len()).sum();
        assert_eq!(stored, *writes, "task {task} writes");
    }
    let child = fresh
        .list(Some(&CheckpointConfig::new("child")), &ListOptions::new())
        .await
        .expect("list child");
    assert_eq!(child.len(), CHILD_PUTS);
    assert!(child.iter().all(|t| t.pending_writes.len() == 1));
    drop((saver, fresh));
    let _ = std::fs::remove_dir_all(dir);
}
