//! Checkpoints from before `v` 4 (LangGraph 0.2 to 0.4) keep their pending `Send`s in
//! `pending_sends`, which JSONB cannot hold. `vectors/stores/sqlite-py-sends-0.4.8`
//! (written by langgraph 0.4.8 and langgraph-checkpoint-sqlite 2.0.10: a fan-out from
//! two nodes, stopped before the sends run) copied into Postgres: today's Python
//! `PostgresSaver` reads every checkpoint as today's `SqliteSaver` reads the source, as
//! a graph uses them (`python_reads_equal.py --graph-view`: langgraph's own
//! `Pregel._migrate_checkpoint` on each), and resumes the waiting thread to the same
//! end as on the source. The expected reads and results are Python's, on the source.
//!
//! Reads `LGCODEC_TEST_PG_URL` (skip line without it) and `LGCODEC_PYTHON`.

use std::fs;

use langgraph_codec::store::{copy, CopyOptions, StoreKeys};

use crate::support::{self, pg, scratch, stores};

#[tokio::test]
async fn pending_sends_of_old_checkpoints_copy_into_postgres_where_python_reads_them() {
    let Some(url) = pg::url() else { return };
    let dir = scratch("sends");
    let fixture = stores().join("sqlite-py-sends-0.4.8/store.sqlite");
    let source = dir.join("source.sqlite");
    fs::copy(&fixture, &source).expect("copy");
    let source = source.to_str().expect("utf-8").to_owned();
    let target = pg::fresh(&url, "sends_tgt").await;
    let report = copy(
        &source,
        &target,
        &StoreKeys::none(),
        &CopyOptions::new().page_size(2).batch_size(2),
    )
    .await
    .unwrap_or_else(|e| panic!("copy: {e}"));
    assert_eq!(report.checkpoints, 7, "{report:?}");
    assert_eq!(
        (report.copied, report.verified),
        (report.checkpoints, report.checkpoints),
        "{:?}",
        report.mismatches
    );
    // Run again: everything is there and still verifies.
    let again = copy(&source, &target, &StoreKeys::none(), &CopyOptions::new())
        .await
        .expect("copy again");
    assert_eq!(
        (again.copied, again.already_there, again.verified),
        (0, 7, 7),
        "{again:?}"
    );
    let Some(py) = support::python() else {
        return;
    };
    // Python's Postgres reader takes a `v < 4` checkpoint's sends from its parent's
    // writes ordered by task id; where that is not their order the copy stores `v` 4 (the
    // sends read as stored): that `v` is the one difference allowed, and only there.
    let reads = support::python_script(
        &py,
        "python_reads_equal.py",
        &["--graph-view", "--ignore=/checkpoint/v", &source, &target],
    );
    println!("{}", reads.trim());
    let reads: serde_json::Value = serde_json::from_str(&reads).expect("json");
    let ignored = reads["ignored"].as_array().expect("ignored");
    for d in ignored {
        assert_eq!(
            (&d[1], &d[2]),
            (&serde_json::json!(3), &serde_json::json!(4)),
            "{d}"
        );
    }
    // At most the two checkpoints waiting on sends, each listed and read by id.
    assert!(ignored.len() <= 4, "{ignored:?}");
    // Both resumed from their own copies: the source file as written, the target.
    let resumed_source = dir.join("resumed.sqlite");
    fs::copy(&fixture, &resumed_source).expect("copy");
    let want = support::python_script(
        &py,
        "resume_sends.py",
        &[resumed_source.to_str().expect("utf-8")],
    );
    let got = support::python_script(&py, "resume_sends.py", &[&target]);
    println!("source: {}target: {}", want, got);
    assert_eq!(got, want, "the target resumes as the source does");
    let _ = fs::remove_dir_all(&dir);
}

/// A `ShallowPostgresSaver` store of langgraph 0.4.8 with a `Send` fan-out left waiting
/// (`postgres-py-shallow-sends-2.0.21`, `v` 3): that saver keeps no parent and reads
/// the pending sends from the namespace's `__pregel_tasks` writes. Copied into a fresh
/// SQLite file and a fresh Postgres database, every checkpoint verifies, and today's
/// Python savers read the targets as a graph uses them equal to what the shallow saver
/// reads from the source (the sends in `__pregel_tasks`); the source is unchanged.
#[tokio::test]
async fn pending_sends_of_a_shallow_store_copy_where_python_reads_them() {
    let Some(url) = pg::url() else { return };
    let fixture = "postgres-py-shallow-sends-2.0.21";
    let source = pg::restored(&url, fixture, "shsends").await;
    let before = pg::digest(&source).await;
    let dir = scratch("shallow-sends");
    let sqlite_target = dir.join("target.sqlite");
    let sqlite_target = sqlite_target.to_str().expect("utf-8").to_owned();
    let pg_target = pg::fresh(&url, "shsends_tgt").await;
    for target in [&sqlite_target, &pg_target] {
        let report = copy(&source, target, &StoreKeys::none(), &CopyOptions::new())
            .await
            .unwrap_or_else(|e| panic!("copy into {target}: {e}"));
        assert_eq!(
            (report.copied, report.verified),
            (report.checkpoints, report.checkpoints),
            "{target}: {:?}",
            report.mismatches
        );
    }
    assert_eq!(
        pg::digest(&source).await,
        before,
        "the copy changed its source"
    );
    if let Some(py) = support::python() {
        let reads = support::python_script(
            &py,
            "python_reads_equal.py",
            &[
                "--shallow",
                "--graph-view",
                &source,
                &sqlite_target,
                &pg_target,
            ],
        );
        println!("{}", reads.trim());
    }
    let _ = fs::remove_dir_all(&dir);
}
