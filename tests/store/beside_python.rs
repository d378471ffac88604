//! `lgcodec store import`, `lgcodec store prune` and `lgcodec store copy` on a store a
//! Python graph is writing to (`vectors/store_maint/retain_fixture.py live`: a
//! checkpoint and its pending write every 20 ms on thread `live`), SQLite and Postgres.
//! Nothing either side wrote is lost: Python's writer reads its latest checkpoint back
//! whole, every imported row is there, the prune leaves each thread its latest
//! checkpoints, and a copy run during the writes and once more after them leaves a
//! target Python reads equal to the source. The writer's slowest checkpoint is printed
//! (how long the operation made it wait).

use std::collections::BTreeMap;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value as Json;

use super::retain::{lgcodec, parse_ids, writer_done, Ids as Listed};
use crate::support::store_fixture::{fill, serializer, sqlite_store, Shape};
use crate::support::{pg, python, python_reads_equal, python_script, scratch};

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

/// The checkpoints of thread `live` in `store` (a SQLite path or a Postgres URL).
async fn live_count(store: &str) -> i64 {
    const COUNT: &str = "SELECT count(*) FROM checkpoints WHERE thread_id = 'live'";
    if store.starts_with("postgres") {
        let c = pg::connect(store).await;
        c.query_one(COUNT, &[])
            .await
            .map(|r| r.get::<_, i64>(0))
            .unwrap_or(0)
    } else {
        rusqlite::Connection::open_with_flags(store, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY)
            .and_then(|conn| conn.query_row(COUNT, [], |r| r.get(0)))
            .unwrap_or(0)
    }
}

/// Starts Python writing thread `live` of `store` for `seconds`, and returns once its
/// first checkpoint is there.
async fn start_writer(py: &str, store: &str, seconds: &str) -> Child {
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
    while live_count(store).await == 0 {
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
    let line = writer_done(writer).await;
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
    // Each imported thread: the latest two checkpoints of each of its namespaces (a
    // subgraph's too), as the source has them (in id order).
    for (thread, cps) in &source_ids {
        let latest_two: Vec<(String, String)> = cps
            .iter()
            .enumerate()
            .filter(|(i, (ns, _))| cps[i + 1..].iter().filter(|(n, _)| n == ns).count() < 2)
            .map(|(_, cp)| cp.clone())
            .collect();
        assert_eq!(after.get(thread), Some(&latest_two), "{thread}");
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

/// `source.db` in `dir`: the fixture's threads, their ids prefixed with `prefix`.
async fn sqlite_fixture(dir: &Path, prefix: &'static str) -> String {
    let source = dir.join("source.db");
    let made = source.clone();
    tokio::task::spawn_blocking(move || sqlite_store(&made, &shape(), prefix))
        .await
        .expect("fixture");
    source.to_str().expect("utf-8").to_owned()
}

/// A new Postgres database (`tag`) with Python's tables and the fixture's threads.
async fn postgres_fixture(url: &str, tag: &str, prefix: &str) -> String {
    let source = pg::fresh(url, tag).await;
    let saver = langgraph_codec::saver::postgres::PostgresSaver::builder_from_url(&source)
        .expect("url")
        .serializer(serializer(&shape()))
        .build()
        .expect("saver");
    saver.setup().await.expect("setup");
    fill(&saver, &shape(), prefix).await;
    source
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
    let source = sqlite_fixture(&dir, "imported-").await;
    let backup = dir.join("backup.jsonl");
    let backup = backup.to_str().expect("utf-8").to_owned();
    lgcodec_json(&["store", "export", &source, &backup, "--json"]);
    let target = dir.join("live.db");
    let target = target.to_str().expect("utf-8").to_owned();
    let written = written_fixture(&py, &target);
    let writer = start_writer(&py, &target, "6").await;
    import_and_prune_beside_the_writer(&py, (&source, &backup, &target), writer, &written).await;
    let _ = std::fs::remove_dir_all(&dir);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_import_and_prune_beside_a_python_writer_lose_nothing() {
    let (Some(url), Some(py)) = (pg::url(), python()) else {
        return;
    };
    let dir = scratch("beside-python-pg");
    let source = postgres_fixture(&url, "beside_python_src", "imported-").await;
    let backup = dir.join("backup.jsonl");
    let backup = backup.to_str().expect("utf-8").to_owned();
    lgcodec_json(&["store", "export", &source, &backup, "--json"]);
    let target = pg::fresh(&url, "beside_python_live").await;
    let written = written_fixture(&py, &target);
    let writer = start_writer(&py, &target, "6").await;
    import_and_prune_beside_the_writer(&py, (&source, &backup, &target), writer, &written).await;
    let _ = std::fs::remove_dir_all(&dir);
}

/// The copy of `source` into `target`, started while Python writes thread `live` of
/// `source`, and the same copy once the writer has stopped; then Python reads both.
async fn copy_beside_the_writer(py: &str, source: &str, target: &str, mut writer: Child) {
    assert!(
        writer.try_wait().expect("writer").is_none(),
        "writer still running"
    );
    let during = lgcodec_json(&["store", "copy", source, target, "--json"]);
    let still_writing = writer.try_wait().expect("writer").is_none();
    let line = writer_done(writer).await;
    let after = lgcodec_json(&["store", "copy", source, target, "--json"]);
    println!(
        "copy {source} -> {target}: Python wrote {} checkpoints beside it, the slowest in {} ms (still writing after the copy: {still_writing}); the rerun copied {}",
        line["written"], line["slowest_ms"], after["copied"]
    );
    for report in [&during, &after] {
        assert_eq!(report["mismatches"], Json::Array(vec![]), "{report}");
        assert_eq!(report["stopped"], false, "{report}");
        // Every checkpoint of the source, written now or before, read back equal.
        assert_eq!(report["verified"], report["checkpoints"], "{report}");
    }
    // The rerun found every checkpoint the first copy wrote, and wrote the rest.
    let written = line["written"].as_u64().expect("written");
    let total = (THREADS * STEPS) as u64 + written;
    assert_eq!(after["checkpoints"].as_u64(), Some(total), "{after}");
    assert_eq!(
        after["already_there"], during["copied"],
        "{during}\n{after}"
    );
    assert_eq!(
        during["copied"]
            .as_u64()
            .zip(after["copied"].as_u64())
            .map(|(a, b)| a + b),
        Some(total),
        "{during}\n{after}"
    );
    // Python reads every checkpoint, its metadata and its pending writes in the target
    // as in the source, the writer's last among them.
    python_reads_equal(py, false, source, &[target]);
    let ids = listed(py, target);
    let live = ids.get("live").expect("live thread");
    assert_eq!(live.len() as u64, written);
    assert_eq!(
        live.last().map(|(_, id)| id.as_str()),
        line["last"].as_str()
    );
}

/// A SQLite file of the fixture's threads, Python writing thread `live` into it.
async fn sqlite_source_being_written(py: &str, dir: &Path) -> (String, Child) {
    let source = sqlite_fixture(dir, "copied-").await;
    let writer = start_writer(py, &source, "5").await;
    (source, writer)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sqlite_copy_of_a_store_python_is_writing_loses_nothing() {
    let Some(py) = python() else { return };
    let dir = scratch("beside-python-copy");
    let (source, writer) = sqlite_source_being_written(&py, &dir).await;
    let target = dir.join("copy.db");
    copy_beside_the_writer(&py, &source, target.to_str().expect("utf-8"), writer).await;
    let _ = std::fs::remove_dir_all(&dir);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn copies_across_backends_of_a_store_python_is_writing_lose_nothing() {
    let (Some(url), Some(py)) = (pg::url(), python()) else {
        return;
    };
    let dir = scratch("beside-python-copy-pg");
    // SQLite, being written, into Postgres.
    let (source, writer) = sqlite_source_being_written(&py, &dir).await;
    let target = pg::fresh(&url, "beside_python_copy").await;
    copy_beside_the_writer(&py, &source, &target, writer).await;
    // Postgres, being written, into SQLite.
    let source = postgres_fixture(&url, "beside_python_copy_src", "copied-").await;
    let writer = start_writer(&py, &source, "5").await;
    let target = dir.join("from-postgres.db");
    copy_beside_the_writer(&py, &source, target.to_str().expect("utf-8"), writer).await;
    let _ = std::fs::remove_dir_all(&dir);
}
