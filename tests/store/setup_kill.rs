//! A Postgres target's tables are made in one transaction: `lgcodec store copy` killed
//! (and its connection cut) while creating them leaves the database with none of them,
//! and the rerun finishes; a schema whose migrations Python's `setup()` began and did
//! not finish, with no rows, is finished by the rerun too. The tables made at once are
//! the ones Python's own `setup()` makes.

use std::process::Command;
use std::time::{Duration, Instant};

use crate::support::{pg, python, scratch, stores};
use langgraph_codec::saver::postgres::PostgresSaver;

const BIN: &str = env!("CARGO_BIN_EXE_lgcodec");

/// Python's 12 checkpoints (`vectors/stores/sqlite-py-3.1.2`), a copy in `dir`.
fn source(dir: &std::path::Path) -> String {
    let path = dir.join("source.sqlite");
    std::fs::copy(stores().join("sqlite-py-3.1.2").join("store.sqlite"), &path).expect("copy");
    path.to_str().expect("utf-8").to_owned()
}

fn copy(source: &str, target: &str) -> (i32, String) {
    let out = Command::new(BIN)
        .args(["store", "copy", source, target])
        .env_remove("LANGGRAPH_AES_KEY")
        .output()
        .expect("run");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// The tables of the database (a fresh one holds no others than the saver's).
async fn tables(url: &str) -> Vec<String> {
    pg::tables_in(&pg::connect(url).await, "public").await
}

/// Python's first two migrations in a fresh database, each recorded as its `setup()`
/// records it: the migrations table and `checkpoints`, without the rest.
async fn half_set_up(url: &str, saver: &PostgresSaver) {
    let client = pg::connect(url).await;
    for (v, sql) in saver.migration_statements().iter().enumerate().take(2) {
        client
            .batch_execute(&format!(
                "{sql}; INSERT INTO checkpoint_migrations (v) VALUES ({v})"
            ))
            .await
            .expect("migration");
    }
}

#[tokio::test]
async fn a_copy_killed_while_creating_postgres_tables_leaves_none_and_the_rerun_finishes() {
    let Some(base) = pg::url() else { return };
    let dir = scratch("setup-kill");
    let src = source(&dir);
    let target = pg::fresh(&base, "setup_kill").await;
    // Another session creating `checkpoint_writes` and not committing: the copy's
    // setup blocks on that name after creating the tables before it.
    let blocker = pg::connect(&target).await;
    blocker
        .batch_execute("BEGIN; CREATE TABLE checkpoint_writes (x int)")
        .await
        .expect("blocker");
    let blocker_pid: i32 = blocker
        .query_one("SELECT pg_backend_pid()", &[])
        .await
        .expect("pid")
        .get(0);
    let mut child = Command::new(BIN)
        .args(["store", "copy", &src, &target])
        .env_remove("LANGGRAPH_AES_KEY")
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("spawn");
    let watcher = pg::connect(&target).await;
    let started = Instant::now();
    let waiting: i32 = loop {
        let row = watcher
            .query_opt(
                "SELECT pid FROM pg_stat_activity WHERE datname = current_database() \
                 AND wait_event_type = 'Lock' AND pid <> $1",
                &[&blocker_pid],
            )
            .await
            .expect("activity");
        if let Some(r) = row {
            break r.get(0);
        }
        assert!(
            child.try_wait().expect("wait").is_none(),
            "the copy ended without waiting on the blocked table"
        );
        assert!(
            started.elapsed() < Duration::from_secs(60),
            "the copy's setup never waited on checkpoint_writes"
        );
        tokio::time::sleep(Duration::from_millis(5)).await;
    };
    // kill -9 mid-setup, and the server side of its connection with it.
    child.kill().expect("SIGKILL");
    let _ = child.wait();
    watcher
        .execute("SELECT pg_terminate_backend($1)", &[&waiting])
        .await
        .expect("terminate");
    blocker.batch_execute("ROLLBACK").await.expect("rollback");
    assert_eq!(
        tables(&target).await,
        Vec::<String>::new(),
        "a killed setup left part of the schema"
    );
    let (code, stderr) = copy(&src, &target);
    assert_eq!(code, 0, "{stderr}");
    assert!(
        stderr.contains("copied 12") && stderr.contains("12 verified"),
        "{stderr}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[tokio::test]
async fn a_schema_whose_setup_stopped_midway_is_finished_by_the_copy() {
    let Some(base) = pg::url() else { return };
    let dir = scratch("setup-partial");
    let src = source(&dir);
    let target = pg::fresh(&base, "setup_partial").await;
    let saver = PostgresSaver::builder_from_url(&target)
        .expect("url")
        .build()
        .expect("saver");
    half_set_up(&target, &saver).await;
    assert_eq!(
        tables(&target).await,
        ["checkpoint_migrations", "checkpoints"]
    );
    let (code, stderr) = copy(&src, &target);
    assert_eq!(code, 0, "{stderr}");
    assert!(
        stderr.contains("copied 12") && stderr.contains("tables created"),
        "{stderr}"
    );
    // With a row in it, the same half-made schema is not the copy's to finish.
    let other = pg::fresh(&base, "setup_partial_rows").await;
    half_set_up(&other, &saver).await;
    pg::connect(&other)
        .await
        .batch_execute(
            "INSERT INTO checkpoints (thread_id, checkpoint_id, checkpoint) VALUES ('x', '1', '{}')",
        )
        .await
        .expect("row");
    let (code, stderr) = copy(&src, &other);
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("a target must be empty"), "{stderr}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// The tables, columns, indexes and recorded migrations of a one-transaction setup
/// are those of Python's own `setup()` (with the pinned package), or without Python
/// of the saver's migration-by-migration setup.
#[tokio::test]
async fn one_transaction_setup_makes_what_pythons_setup_makes() {
    let Some(base) = pg::url() else { return };
    let ours = pg::fresh(&base, "setup_once").await;
    PostgresSaver::builder_from_url(&ours)
        .expect("url")
        .build()
        .expect("saver")
        .setup_in_one_transaction()
        .await
        .expect("setup");
    let reference = pg::fresh(&base, "setup_reference").await;
    match python() {
        Some(py) => {
            let out = Command::new(py)
                .args([
                    "-c",
                    "import sys\nfrom langgraph.checkpoint.postgres import PostgresSaver\nwith PostgresSaver.from_conn_string(sys.argv[1]) as s:\n    s.setup()",
                    &reference,
                ])
                .output()
                .expect("python");
            assert!(
                out.status.success(),
                "{}",
                String::from_utf8_lossy(&out.stderr)
            );
        }
        None => PostgresSaver::builder_from_url(&reference)
            .expect("url")
            .build()
            .expect("saver")
            .setup()
            .await
            .expect("setup"),
    }
    assert_eq!(pg::digest(&ours).await, pg::digest(&reference).await);
}
