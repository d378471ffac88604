//! Every writing operation stops at a batch boundary when its stop flag is set (what
//! `lgcodec store` does at the first SIGINT or SIGTERM): the batch in flight is
//! committed, no other is begun, the report says `stopped`, and the same operation run
//! again finishes the work, the end state that of an uninterrupted run.
//!
//! Each run sets its flag from its own progress callback at the first batch done, on a
//! SQLite store of 8 threads of 10 checkpoints in batches far smaller than the store.

use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use langgraph_codec::crypto::AesKey;
use langgraph_codec::store::{self, Progress, Stage, StoreKeys};

use crate::support::scratch;
use crate::support::store_fixture::{sqlite_store, Shape};

/// `SELECT count(*)` of `sql`'s rows in the SQLite file at `path`.
fn count(path: &Path, sql: &str) -> u64 {
    let conn = rusqlite::Connection::open(path).expect("open");
    let n: i64 = conn.query_row(sql, [], |r| r.get(0)).expect(sql);
    u64::try_from(n).expect("a count")
}

/// A stop flag, and a progress callback that sets it at the first batch done.
fn stop_at_first_batch() -> (Arc<AtomicBool>, impl Fn(&Progress) + Send + Sync + 'static) {
    let stop = Arc::new(AtomicBool::new(false));
    let set = Arc::clone(&stop);
    (stop, move |p: &Progress| {
        if p.stage == Stage::Done && p.rows_done > 0 {
            set.store(true, Ordering::SeqCst);
        }
    })
}

/// The store every test here runs on: 8 threads of 10 checkpoints, at `path`.
fn eight_threads(path: &Path) {
    let shape = Shape {
        threads: 8,
        steps: 10,
        ..Shape::default()
    };
    sqlite_store(path, &shape, "t-");
}

#[test]
fn every_writing_operation_stops_after_the_batch_in_flight_and_a_rerun_finishes() {
    let dir = scratch("stop");
    let source = dir.join("source.db");
    eight_threads(&source);
    let s = source.to_str().expect("utf-8");
    let checkpoints = count(&source, "SELECT count(*) FROM checkpoints");
    let writes = count(&source, "SELECT count(*) FROM writes");
    assert_eq!(checkpoints, 80);
    let none = StoreKeys::none();
    let rt = crate::support::rt();
    rt.block_on(async {
        // copy, 5 checkpoints a batch
        let target = dir.join("copy.db");
        let t = target.to_str().expect("utf-8");
        let (stop, on) = stop_at_first_batch();
        let options = store::CopyOptions::new().batch_size(5);
        let first = store::copy(
            s,
            t,
            &none,
            &options.clone().stop_flag(stop).on_progress(on),
        )
        .await
        .expect("copy");
        assert!(first.stopped, "{first:?}");
        assert!(first.copied > 0 && first.copied < checkpoints, "{first:?}");
        assert_eq!(first.mismatches, Vec::<String>::new());
        let rerun = store::copy(s, t, &none, &options)
            .await
            .expect("copy again");
        assert!(!rerun.stopped, "{rerun:?}");
        assert_eq!(first.copied + rerun.copied, checkpoints, "{rerun:?}");
        assert_eq!(
            count(&target, "SELECT count(*) FROM checkpoints"),
            checkpoints
        );
        assert_eq!(count(&target, "SELECT count(*) FROM writes"), writes);

        // export, then import 10 rows a batch
        let any = store::AnyStore::open(s).await.expect("open");
        let file = dir.join("backup.jsonl");
        let mut out = std::fs::File::create(&file).expect("create");
        store::export(&any, &mut out, &store::ExportOptions::new())
            .await
            .expect("export");
        drop(out);
        let restored = dir.join("restored.db");
        let r = restored.to_str().expect("utf-8");
        let import = |stop: Option<Arc<AtomicBool>>| {
            let file = file.clone();
            async move {
                let mut input = std::io::BufReader::new(std::fs::File::open(&file).expect("open"));
                let mut options = store::ImportOptions::new().batch_size(10);
                if let Some(stop) = stop {
                    let set = Arc::clone(&stop);
                    options = options.stop_flag(stop).on_progress(move |p: &Progress| {
                        if p.rows_done > 0 {
                            set.store(true, Ordering::SeqCst);
                        }
                    });
                }
                store::import(&mut input, "backup.jsonl", r, &options)
                    .await
                    .expect("import")
            }
        };
        let first = import(Some(Arc::default())).await;
        assert!(first.stopped && !first.complete, "{first:?}");
        assert!(
            first.inserted > 0 && first.inserted < checkpoints + writes,
            "{first:?}"
        );
        let rerun = import(None).await;
        assert!(!rerun.stopped && rerun.complete, "{rerun:?}");
        assert_eq!(rerun.identical, first.inserted, "{rerun:?}");
        assert_eq!(first.inserted + rerun.inserted, checkpoints + writes);

        // prune, one thread a batch; beside it the same prune uninterrupted, on a copy
        let whole = dir.join("whole.db");
        std::fs::copy(&target, &whole).expect("copy the file");
        let options = store::PruneOptions::new().keep_latest(1).batch_size(1);
        let uninterrupted = store::prune(whole.to_str().expect("utf-8"), &none, &options)
            .await
            .expect("prune");
        assert!(!uninterrupted.stopped, "{uninterrupted:?}");
        let (stop, on) = stop_at_first_batch();
        let first = store::prune(t, &none, &options.clone().stop_flag(stop).on_progress(on))
            .await
            .expect("prune");
        assert!(first.stopped, "{first:?}");
        assert!(
            first.checkpoints_deleted > 0
                && first.checkpoints_deleted < uninterrupted.checkpoints_deleted,
            "{first:?}"
        );
        let rerun = store::prune(t, &none, &options).await.expect("prune again");
        assert!(!rerun.stopped, "{rerun:?}");
        assert_eq!(
            first.checkpoints_deleted + rerun.checkpoints_deleted,
            uninterrupted.checkpoints_deleted
        );
        for table in ["checkpoints", "writes"] {
            let rows = format!("SELECT count(*) FROM {table}");
            assert_eq!(count(&target, &rows), count(&whole, &rows), "{table}");
        }

        // encrypt, 5 values a batch
        let keys = StoreKeys::new(AesKey::new(b"stop-flag-key-16").expect("key"));
        let opened = store::Store::open_for_writing(s).await.expect("open");
        let (stop, on) = stop_at_first_batch();
        let options = store::SweepOptions::new().batch_size(5);
        let first = store::encrypt(
            &opened,
            &keys,
            &options.clone().stop_flag(stop).on_progress(on),
        )
        .await
        .expect("encrypt");
        assert!(first.stopped && !first.complete, "{first:?}");
        assert!(
            first.rewritten.rows > 0 && first.rewritten.rows < checkpoints + writes,
            "{first:?}"
        );
        let rerun = store::encrypt(&opened, &keys, &options)
            .await
            .expect("encrypt again");
        assert!(!rerun.stopped && rerun.complete, "{rerun:?}");
        assert_eq!(
            first.rewritten.rows + rerun.rewritten.rows,
            checkpoints + writes,
            "{rerun:?}"
        );
    });
    let _ = std::fs::remove_dir_all(&dir);
}

/// Waits between pages are cut short by a stop, and the pause between pages is only
/// taken before another page: a retain sweep with an hour's `pause` over a store that
/// fits one page ends at once; over eight one-thread pages it ends as soon as its stop
/// flag is set (an hour's pause under way); a prune paced at one checkpoint a second
/// (80 checkpoints: 80 s of waiting) ends as soon as its flag is set. Each within 30 s.
#[test]
fn a_stop_ends_a_pause_or_a_pace_wait_and_no_pause_follows_the_last_page() {
    use std::time::Duration;
    let dir = scratch("stop-pause");
    let path = dir.join("s.db");
    eight_threads(&path);
    let s = path.to_str().expect("utf-8");
    let none = StoreKeys::none();
    let hour = Some(Duration::from_secs(3600));
    let policy = store::RetentionPolicy::new().keep_latest(1);
    let within = Duration::from_secs(30);
    let flag_after = |millis: u64| {
        let stop = Arc::new(AtomicBool::new(false));
        let set = Arc::clone(&stop);
        tokio::spawn(async move {
            tokio::time::sleep(Duration::from_millis(millis)).await;
            set.store(true, Ordering::SeqCst);
        });
        stop
    };
    let rt = crate::support::rt();
    rt.block_on(async {
        // One page (8 threads, batches of 100): no pause at all.
        let one_page = store::RetainOptions::new(policy.clone())
            .dry_run(true)
            .batch_size(100)
            .pause(hour);
        let report = tokio::time::timeout(within, store::retain(s, &none, &one_page))
            .await
            .expect("no pause after the last page")
            .expect("retain");
        assert_eq!((report.threads, report.stopped), (8, false), "{report:?}");
        // Eight pages: the stop set during the first pause ends it.
        let paged = store::RetainOptions::new(policy.clone())
            .dry_run(true)
            .batch_size(1)
            .pause(hour)
            .stop_flag(flag_after(500));
        let report = tokio::time::timeout(within, store::retain(s, &none, &paged))
            .await
            .expect("the stop ends the pause")
            .expect("retain");
        assert!(report.stopped && report.threads < 8, "{report:?}");
        // Paced at one checkpoint a second: the stop ends the wait for the pace.
        let paced = store::PruneOptions::new()
            .keep_latest(1)
            .dry_run(true)
            .batch_size(4)
            .max_rows_per_sec(Some(1))
            .stop_flag(flag_after(500));
        let report = tokio::time::timeout(within, store::prune(s, &none, &paced))
            .await
            .expect("the stop ends the wait for the pace")
            .expect("prune");
        assert!(report.stopped && report.threads < 8, "{report:?}");
    });
    let _ = std::fs::remove_dir_all(&dir);
}
