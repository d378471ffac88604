//! `lgcodec store import` and `lgcodec store prune` on a store a Python graph is writing
//! to (`vectors/store_maint/retain_fixture.py live`: a checkpoint and its pending write
//! every 20 ms on thread `live`), SQLite and Postgres. Nothing either side wrote is
//! lost: Python's writer reads its latest checkpoint back whole, every imported row is
//! there, and the prune leaves each thread its latest checkpoints. The writer's slowest
//! checkpoint is printed (how long the operation made it wait).

use std::collections::BTreeMap;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value as Json;

use super::retain::{lgcodec, parse_ids, Ids as Listed};
use crate::support::store_fixture::{fill, serializer, sqlite_store, Shape};
use crate::support::{pg, python, python_script, scratch};

/// Threads of the source the backup is made of, and checkpoints each.
const THREADS: usize = 150;
const STEPS: usize = 10;

/// `retain_fixture.py read STORE`.
fn listed(py: &str, store: &str) -> Listed {
    parse_ids(&python_script(py, "retain_fixture.py", &["read", store]))
}

/// `retain_fixture.py write STORE`: the fixture's threads, as written.
fn written_fixture(py: &str, store: &str) -> Listed {
    parse_ids(&python_script(py, "retain_fixture.py", &["write", store]))
}

/// `lgcodec ARGS` (which end in `--json`), exit 0: its report.
fn lgcodec_json(args: &[&str]) -> Json {
    let (code, out, err) = lgcodec(args);
    assert_eq!(code, 0, "{args:?}\n{out}{err}");
    serde_json::from_str(&out).expect("--json report")
}

/// Starts Python writing thread `live` of `store` for `seconds`, and returns once its
/// first checkpoint is there (`live_count` > 0).
async fn start_writer(
    py: &str,
    store: &str,
    seconds: &str,
    live_count: impl Fn() -> futures_util::future::BoxFuture<'static, i64>,
) -> Child {
    let script =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("vectors/store_maint/retain_fixture.py");
    let mut writer = Command::new(py)
        .arg(&script)
        .args(["live", store, seconds])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("python");
    let began = Instant::now();
    while live_count().await == 0 {
        if let Ok(Some(status)) = writer.try_wait() {
            panic!("the Python writer ended before writing: {status}");
        }
        assert!(
            began.elapsed() < Duration::from_secs(120),
            "no checkpoint from the Python writer"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    writer
}

/// The import and the prune, each started while the writer writes; then what Python
/// reads. `backup` was exported from `source`; `target` holds the retention fixture
/// Python wrote (`written`).
async fn import_and_prune_beside_the_writer(
    py: &str,
    (source, backup, target): (&str, &str, &str),
    mut writer: Child,
    written: &Listed,
) {
    assert!(
        writer.try_wait().expect("writer").is_none(),
        "writer still running"
    );
    let imported = lgcodec_json(&["store", "import", backup, target, "--json"]);
    let still_writing = writer.try_wait().expect("writer").is_none();
    let pruned = lgcodec_json(&["store", "prune", target, "--keep-latest", "2", "--json"]);
    let out = tokio::task::spawn_blocking(move || writer.wait_with_output().expect("python"))
        .await
        .expect("join");
    assert!(
        out.status.success(),
        "the Python writer: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let line: Json = serde_json::from_slice(&out.stdout).expect("writer's line");
    println!(
        "{}: Python wrote {} checkpoints beside the import and the prune, the slowest in {} ms (still writing after the import: {still_writing})",
        if target.starts_with("postgres") { "Postgres" } else { "SQLite" },
        line["written"],
        line["slowest_ms"]
    );
    // Every row of the backup went in: 10 checkpoints, their writes and blobs per
    // thread, none there before.
    assert_eq!(imported["conflicts"], 0, "{imported}");
    assert_eq!(imported["complete"], true, "{imported}");
    let source_ids = listed(py, source);
    assert_eq!(source_ids.len(), THREADS);
    assert!(source_ids.values().all(|cps| cps.len() == STEPS));
    assert_eq!(pruned["unreadable"], 0, "{pruned}");
    assert_eq!(pruned["dry_run"], false, "{pruned}");
    let after = listed(py, target);
    // Each imported thread: its latest two checkpoints, as the source has them.
    for (thread, cps) in &source_ids {
        assert_eq!(
            after.get(thread),
            Some(&cps[cps.len() - 2..].to_vec()),
            "{thread}"
        );
    }
    // Each thread Python wrote before: its latest checkpoint per namespace stays.
    for (thread, cps) in written {
        let have = after.get(thread).expect("fixture thread kept");
        let mut latest: BTreeMap<&str, &str> = BTreeMap::new();
        for (ns, id) in cps {
            latest.insert(ns, id);
        }
        for (ns, id) in latest {
            assert!(
                have.contains(&(ns.to_owned(), id.to_owned())),
                "{thread}: {ns}/{id} gone"
            );
        }
    }
    // The live thread: its last checkpoint is there (the writer read it back whole).
    let last = line["last"].as_str().expect("last");
    let live = after.get("live").expect("live thread");
    assert_eq!(live.last().map(|(_, id)| id.as_str()), Some(last));
    assert_eq!(
        after.len(),
        THREADS + written.len() + 1,
        "no thread more or less"
    );
}

fn shape() -> Shape {
    Shape {
        threads: THREADS,
        steps: STEPS,
        ..Shape::default()
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sqlite_import_and_prune_beside_a_python_writer_lose_nothing() {
    let Some(py) = python() else { return };
    let dir = scratch("beside-python");
    let source = dir.join("source.db");
    let made = source.clone();
    tokio::task::spawn_blocking(move || sqlite_store(&made, &shape(), "imported-"))
        .await
        .expect("fixture");
    let source = source.to_str().expect("utf-8").to_owned();
    let backup = dir.join("backup.jsonl");
    let backup = backup.to_str().expect("utf-8").to_owned();
    lgcodec_json(&["store", "export", &source, &backup, "--json"]);
    let target = dir.join("live.db");
    let target = target.to_str().expect("utf-8").to_owned();
    let written = written_fixture(&py, &target);
    let count_at = target.clone();
    let writer = start_writer(&py, &target, "6", move || {
        let path = count_at.clone();
        Box::pin(async move {
            let conn = rusqlite::Connection::open_with_flags(
                &path,
                rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY,
            )
            .expect("open");
            conn.query_row(
                "SELECT count(*) FROM checkpoints WHERE thread_id = 'live'",
                [],
                |r| r.get(0),
            )
            .unwrap_or(0)
        })
    })
    .await;
    import_and_prune_beside_the_writer(&py, (&source, &backup, &target), writer, &written).await;
    let _ = std::fs::remove_dir_all(&dir);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_import_and_prune_beside_a_python_writer_lose_nothing() {
    let (Some(url), Some(py)) = (pg::url(), python()) else {
        return;
    };
    let dir = scratch("beside-python-pg");
    let source = pg::fresh(&url, "beside_python_src").await;
    let saver = langgraph_codec::saver::postgres::PostgresSaver::builder_from_url(&source)
        .expect("url")
        .serializer(serializer(&shape()))
        .build()
        .expect("saver");
    saver.setup().await.expect("setup");
    fill(&saver, &shape(), "imported-").await;
    let backup = dir.join("backup.jsonl");
    let backup = backup.to_str().expect("utf-8").to_owned();
    lgcodec_json(&["store", "export", &source, &backup, "--json"]);
    let target = pg::fresh(&url, "beside_python_live").await;
    let written = written_fixture(&py, &target);
    let count_at = target.clone();
    let writer = start_writer(&py, &target, "6", move || {
        let url = count_at.clone();
        Box::pin(async move {
            let c = pg::connect(&url).await;
            c.query_one(
                "SELECT count(*) FROM checkpoints WHERE thread_id = 'live'",
                &[],
            )
            .await
            .map(|r| r.get::<_, i64>(0))
            .unwrap_or(0)
        })
    })
    .await;
    import_and_prune_beside_the_writer(&py, (&source, &backup, &target), writer, &written).await;
    let _ = std::fs::remove_dir_all(&dir);
}
