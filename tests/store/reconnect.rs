//! The writing store operations (prune, copy both ways, import) on a real Postgres
//! server whose backends are terminated mid-run (`pg_terminate_backend`, what a
//! server restart or a failover does to a session): each reconnects, redoes the page
//! or batch in flight and ends where an uninterrupted run on an identical store ends
//! (every row of every table compared). And a server away for 30 s (refusing every
//! connection): the prune waits it out and finishes as an uninterrupted one. And what
//! a copy out of Postgres reads on other connections than its own (the checkpoints,
//! through the saver's pool) is read as of its one snapshot too: threads deleted from
//! the source mid-copy come out as they were.

use std::io::Write;
use std::path::Path;
use std::process::Command;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use crate::support::pg::{connect, digest, fresh, url as pg_base};
use crate::support::rt;
use crate::support::store_fixture::{fill, serializer, sqlite_store, Shape};
use langgraph_codec::saver::postgres::PostgresSaver;
use langgraph_codec::store::{
    self, AnyStore, CopyOptions, CopyReport, ExportOptions, ImportOptions, PruneOptions, StoreKeys,
};
use langgraph_codec::ErrorKind;

const BIN: &str = env!("CARGO_BIN_EXE_lgcodec");

fn db_name(url: &str) -> String {
    url.rsplit('/').next().expect("database").to_owned()
}

/// Runs `sql` (with the database's name as `$1`) from a connection to the server's
/// own database, on a thread and runtime of its own (callable from a progress
/// callback); its first column's count.
fn admin(sql: &str, db: &str) -> i64 {
    let (sql, db) = (sql.to_owned(), db.to_owned());
    std::thread::spawn(move || {
        rt().block_on(async {
            let base = pg_base().expect("server");
            let c = connect(&base).await;
            if sql.contains("$1") {
                c.query_one(&sql, &[&db]).await.expect("admin").get(0)
            } else {
                c.batch_execute(&sql).await.expect("admin");
                0
            }
        })
    })
    .join()
    .expect("admin thread")
}

/// Terminates every backend connected to the database `db` (the operation's); how many.
fn terminate(db: &str) -> i64 {
    admin(
        "SELECT count(*) FILTER (WHERE pg_terminate_backend(pid)) FROM pg_stat_activity \
         WHERE datname = $1 AND pid <> pg_backend_pid()",
        db,
    )
}

/// A callback that terminates `db`'s backends when the progress count reaches one of
/// `at`; the number of terminations done.
fn killer_at(db: &str, at: &'static [u64]) -> (Arc<AtomicU64>, impl Fn(u64) + Send + Sync) {
    let killed = Arc::new(AtomicU64::new(0));
    let (db, k) = (db.to_owned(), Arc::clone(&killed));
    let seen = AtomicU64::new(0);
    (killed, move |done: u64| {
        // Each threshold once, at the first report past it.
        let next = seen.load(Ordering::SeqCst) as usize;
        if at.get(next).is_some_and(|&n| done >= n) {
            seen.fetch_add(1, Ordering::SeqCst);
            if terminate(&db) > 0 {
                k.fetch_add(1, Ordering::SeqCst);
            }
        }
    })
}

/// A fresh database `tag` holding `shape`'s threads, and a copy of it `tag_ref`.
async fn pg_pair(base: &str, tag: &str, shape: &Shape) -> (String, String) {
    let url = fresh(base, tag).await;
    let saver = PostgresSaver::builder_from_url(&url)
        .expect("url")
        .serializer(serializer(shape))
        .build()
        .expect("saver");
    saver.setup().await.expect("setup");
    fill(&saver, shape, "t-").await;
    drop(saver);
    let reference = clone_db(base, &url, &format!("{tag}_ref")).await;
    (url, reference)
}

/// A new database `<base>_<tag>` made from `from` as a template.
async fn clone_db(base: &str, from: &str, tag: &str) -> String {
    let url = fresh(base, tag).await;
    let client = connect(base).await;
    let (new, old) = (db_name(&url), db_name(from));
    // A template database must have no session: the saver's pooled ones go first.
    terminate(&old);
    for sql in [
        format!("DROP DATABASE \"{new}\""),
        format!("CREATE DATABASE \"{new}\" TEMPLATE \"{old}\""),
    ] {
        client.batch_execute(&sql).await.expect("clone");
    }
    url
}

/// Every row of every table of a SQLite store, ordered.
fn sqlite_dump(path: &Path) -> String {
    let conn = rusqlite::Connection::open(path).expect("open");
    let mut out = String::new();
    for t in ["checkpoints", "writes"] {
        let mut stmt = conn
            .prepare(&format!("SELECT * FROM {t} ORDER BY 1, 2, 3, 4"))
            .expect("select");
        let n = stmt.column_count();
        let mut rows: Vec<String> = stmt
            .query_map([], |r| {
                let mut line = String::new();
                for i in 0..n {
                    line.push_str(&format!("{:?}|", r.get_ref(i)?));
                }
                Ok(line)
            })
            .expect("rows")
            .collect::<Result<_, _>>()
            .expect("rows");
        rows.sort();
        out.push_str(t);
        out.push('\n');
        out.push_str(&rows.join("\n"));
        out.push('\n');
    }
    out
}

fn shape(threads: usize, steps: usize) -> Shape {
    Shape {
        threads,
        steps,
        message_len: 40,
        max_messages: 4,
        ..Shape::default()
    }
}

#[test]
fn prune_on_postgres_reconnects_and_ends_as_an_uninterrupted_prune() {
    let Some(base) = pg_base() else { return };
    let runtime = rt();
    // 450 threads of 4 checkpoints: pages of 200 threads, two at a time, then a third.
    let (url, reference) = runtime.block_on(pg_pair(&base, "hrc_prune", &shape(450, 4)));
    let keys = StoreKeys::none();
    let want = runtime
        .block_on(store::prune(
            &reference,
            &keys,
            &PruneOptions::new().keep_latest(1),
        ))
        .expect("uninterrupted prune");
    assert!(want.checkpoints_deleted > 0);
    let (killed, kill) = killer_at(&db_name(&url), &[1]);
    let report = runtime
        .block_on(store::prune(
            &url,
            &keys,
            &PruneOptions::new()
                .keep_latest(1)
                .on_progress(move |p| kill(p.rows_done)),
        ))
        .expect("the prune survives terminated connections");
    assert!(killed.load(Ordering::SeqCst) >= 1, "nothing was terminated");
    assert!(report.reconnects >= 1, "{report:?}");
    assert_eq!(report.reconnects, 1);
    assert_eq!(want.reconnects, 0);
    assert_eq!(
        runtime.block_on(digest(&url)),
        runtime.block_on(digest(&reference))
    );
}

/// Copies `source` into `reference` uninterrupted, then into `target` in batches of 10
/// with `killed_db`'s backends terminated after 25, 55 and 81 checkpoints; checks the
/// three kills landed, the copy reconnected and verified all 100 checkpoints with no
/// mismatch, as many as the uninterrupted copy wrote.
fn copy_with_kills(
    runtime: &tokio::runtime::Runtime,
    source: &str,
    reference: &str,
    target: &str,
    killed_db: &str,
) {
    let keys = StoreKeys::none();
    let want = runtime
        .block_on(store::copy(source, reference, &keys, &CopyOptions::new()))
        .expect("uninterrupted copy");
    let (killed, kill) = killer_at(killed_db, &[25, 55, 81]);
    let report = runtime
        .block_on(store::copy(
            source,
            target,
            &keys,
            &CopyOptions::new()
                .batch_size(10)
                .on_progress(move |p| kill(p.rows_done)),
        ))
        .expect("the copy survives terminated connections");
    assert_eq!(killed.load(Ordering::SeqCst), 3);
    assert!(report.reconnects >= 1, "{report:?}");
    assert_eq!(report.verified, 100, "{report:?}");
    assert!(report.mismatches.is_empty(), "{report:?}");
    assert_eq!(want.copied, 100);
}

#[test]
fn copy_sqlite_to_postgres_reconnects_to_the_target_and_ends_as_an_uninterrupted_copy() {
    let Some(base) = pg_base() else { return };
    let dir = crate::support::scratch("hrc_copy_to_pg");
    let source = dir.join("source.db");
    sqlite_store(&source, &shape(20, 5), "t-");
    let source = source.to_string_lossy().into_owned();
    let runtime = rt();
    let target = runtime.block_on(fresh(&base, "hrc_copy_to_pg"));
    let reference = runtime.block_on(fresh(&base, "hrc_copy_to_pg_ref"));
    copy_with_kills(&runtime, &source, &reference, &target, &db_name(&target));
    assert_eq!(
        runtime.block_on(digest(&target)),
        runtime.block_on(digest(&reference))
    );
}

/// Holds `ACCESS EXCLUSIVE` on the blob table of `db` from a connection of its own (on a
/// thread of its own) until a read-back of a copy (the statement reading the blobs of a
/// batch by ranges of versions) waits on it, terminates that backend alone, then lets go: the returned receiver
/// gives how many it terminated. Returns once the lock is held.
fn kill_the_next_read_back(db: &str) -> std::sync::mpsc::Receiver<i64> {
    let (held_tx, held_rx) = std::sync::mpsc::channel();
    let (done_tx, done_rx) = std::sync::mpsc::channel();
    let db = db.to_owned();
    std::thread::spawn(move || {
        rt().block_on(async {
            let base = pg_base().expect("server");
            let url = format!("{}/{db}", &base[..base.rfind('/').expect("database")]);
            let mut holder = connect(&url).await;
            let tx = holder.transaction().await.expect("begin");
            tx.batch_execute("LOCK TABLE checkpoint_blobs IN ACCESS EXCLUSIVE MODE")
                .await
                .expect("lock");
            held_tx.send(()).expect("held");
            let admin = connect(&base).await;
            let mut killed = 0i64;
            for _ in 0..200 {
                killed = admin
                    .query_one(
                        "SELECT count(*) FILTER (WHERE pg_terminate_backend(pid)) FROM pg_stat_activity \
                         WHERE datname = $1 AND wait_event_type = 'Lock' \
                         AND query LIKE '%b.version BETWEEN r.lo AND r.hi%'",
                        &[&db],
                    )
                    .await
                    .expect("terminate")
                    .get(0);
                if killed > 0 {
                    break;
                }
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
            tx.rollback().await.expect("unlock");
            done_tx.send(killed).expect("done");
        });
    });
    held_rx.recv().expect("the lock is held");
    done_rx
}

/// The read-back of a batch loses its connection while the next batch is written (its
/// statement waits on a lock the test holds, and that backend alone is terminated):
/// the copy reads the batch back again once reconnected and verifies every checkpoint,
/// and the target ends as an uninterrupted copy leaves it.
#[test]
fn copy_into_postgres_reads_a_batch_back_again_after_its_read_back_lost_the_connection() {
    let Some(base) = pg_base() else { return };
    let dir = crate::support::scratch("hrc_copy_read_back");
    let source = dir.join("source.db");
    sqlite_store(&source, &shape(20, 5), "t-");
    let source = source.to_string_lossy().into_owned();
    let runtime = rt();
    let target = runtime.block_on(fresh(&base, "hrc_copy_read_back"));
    let reference = runtime.block_on(fresh(&base, "hrc_copy_read_back_ref"));
    let keys = StoreKeys::none();
    runtime
        .block_on(store::copy(&source, &reference, &keys, &CopyOptions::new()))
        .expect("uninterrupted copy");
    let db = db_name(&target);
    let killed = Arc::new(std::sync::Mutex::new(None));
    let slot = Arc::clone(&killed);
    let report = runtime
        .block_on(store::copy(
            &source,
            &target,
            &keys,
            &CopyOptions::new().batch_size(10).on_progress(move |p| {
                // Reported as the third batch is counted: the fourth is written, and
                // its read-back starts when this report returns.
                let mut slot = slot.lock().expect("slot");
                if p.rows_done == 30 && slot.is_none() {
                    *slot = Some(kill_the_next_read_back(&db));
                }
            }),
        ))
        .expect("the copy survives a read-back's lost connection");
    let done = killed
        .lock()
        .expect("slot")
        .take()
        .expect("the kill was set up");
    assert_eq!(
        done.recv().expect("the killer ends"),
        1,
        "one read-back terminated"
    );
    assert!(report.reconnects >= 1, "{report:?}");
    assert_eq!(report.verified, 100, "{report:?}");
    assert!(report.mismatches.is_empty(), "{report:?}");
    assert_eq!(
        runtime.block_on(digest(&target)),
        runtime.block_on(digest(&reference))
    );
}

#[test]
fn copy_postgres_to_sqlite_reconnects_to_the_source_and_ends_as_an_uninterrupted_copy() {
    let Some(base) = pg_base() else { return };
    let runtime = rt();
    let (source, _) = runtime.block_on(pg_pair(&base, "hrc_copy_from_pg", &shape(20, 5)));
    let dir = crate::support::scratch("hrc_copy_from_pg");
    let (target, reference) = (dir.join("target.db"), dir.join("reference.db"));
    copy_with_kills(
        &runtime,
        &source,
        &reference.to_string_lossy(),
        &target.to_string_lossy(),
        &db_name(&source),
    );
    assert_eq!(sqlite_dump(&target), sqlite_dump(&reference));
}

#[test]
fn import_into_postgres_reconnects_and_ends_as_an_uninterrupted_import() {
    let Some(base) = pg_base() else { return };
    let runtime = rt();
    let (source, _) = runtime.block_on(pg_pair(&base, "hrc_import_src", &shape(20, 5)));
    let dir = crate::support::scratch("hrc_import");
    let file = dir.join("backup.jsonl");
    runtime.block_on(async {
        let store = AnyStore::open(&source).await.expect("open");
        let mut out = std::fs::File::create(&file).expect("file");
        store::export(&store, &mut out, &ExportOptions::new())
            .await
            .expect("export");
        out.flush().expect("flush");
    });
    let import = |target: &str, options: &ImportOptions| {
        let mut input = std::io::BufReader::new(std::fs::File::open(&file).expect("file"));
        runtime.block_on(store::import(
            &mut input,
            &file.to_string_lossy(),
            target,
            options,
        ))
    };
    let target = runtime.block_on(fresh(&base, "hrc_import"));
    let reference = runtime.block_on(fresh(&base, "hrc_import_ref"));
    let want = import(&reference, &ImportOptions::new()).expect("uninterrupted import");
    let (killed, kill) = killer_at(&db_name(&target), &[30, 90, 150]);
    let report = import(
        &target,
        &ImportOptions::new()
            .batch_size(10)
            .on_progress(move |p| kill(p.rows_done)),
    )
    .expect("the import survives terminated connections");
    assert_eq!(killed.load(Ordering::SeqCst), 3);
    assert!(report.reconnects >= 1, "{report:?}");
    assert_eq!(report.conflicts, 0, "{report:?}");
    assert_eq!(report.inserted + report.identical, want.inserted);
    assert_eq!(
        runtime.block_on(digest(&target)),
        runtime.block_on(digest(&reference))
    );
}

/// Runs `sql` in the database at `url`, on a thread and runtime of its own (callable
/// from a progress callback); then the number of checkpoints left there.
fn run_in(url: &str, sql: &str) -> i64 {
    let (url, sql) = (url.to_owned(), sql.to_owned());
    std::thread::spawn(move || {
        rt().block_on(async {
            let c = connect(&url).await;
            c.batch_execute(&sql).await.expect("statement");
            c.query_one("SELECT count(*) FROM checkpoints", &[])
                .await
                .expect("count")
                .get(0)
        })
    })
    .join()
    .expect("statement thread")
}

/// A copy of a new Postgres source of 20 threads of 5 checkpoints (`tag`) into a new
/// SQLite file in batches of 10, `mid(source URL)` called once, at the first progress
/// report past the first batch, its count kept: checks that the copy verified all 100
/// checkpoints with no mismatch and ends equal to a copy of the untouched source, and
/// returns its report and `mid`'s count.
fn copy_out_of_postgres_with(
    tag: &str,
    mid: impl Fn(&str) -> i64 + Send + Sync + 'static,
) -> Option<(CopyReport, i64)> {
    let base = pg_base()?;
    let runtime = rt();
    let (source, _) = runtime.block_on(pg_pair(&base, tag, &shape(20, 5)));
    let dir = crate::support::scratch(tag);
    let (target, reference) = (dir.join("target.db"), dir.join("reference.db"));
    let keys = StoreKeys::none();
    runtime
        .block_on(store::copy(
            &source,
            &reference.to_string_lossy(),
            &keys,
            &CopyOptions::new(),
        ))
        .expect("a copy of the untouched source");
    let got = Arc::new(std::sync::Mutex::new(None));
    let (at, url) = (Arc::clone(&got), source.clone());
    let report = runtime
        .block_on(store::copy(
            &source,
            &target.to_string_lossy(),
            &keys,
            &CopyOptions::new().batch_size(10).on_progress(move |p| {
                let mut at = at.lock().expect("count");
                if p.rows_done >= 10 && at.is_none() {
                    *at = Some(mid(&url));
                }
            }),
        ))
        .expect("the copy finishes");
    assert_eq!(report.copied, 100, "{report:?}");
    assert_eq!(report.verified, 100, "{report:?}");
    assert!(report.mismatches.is_empty(), "{report:?}");
    assert_eq!(sqlite_dump(&target), sqlite_dump(&reference));
    let n = got.lock().expect("count").expect("called mid-copy");
    Some((report, n))
}

/// A copy out of Postgres reads its source as of one point in time: its keys and
/// pending writes in its own `REPEATABLE READ` transaction, the checkpoints on the
/// saver's connections as of that transaction's exported snapshot. Five threads deleted
/// from the source once the first batch is in (as `delete_thread` or a prune deletes
/// them, their writes and blobs with them; the copy's keys of them already read) are
/// copied as they were: the target equals a copy of the untouched source. Without the
/// snapshot the copy stopped: "vanished from the source during the copy".
#[test]
fn copy_out_of_postgres_reads_threads_deleted_meanwhile_as_they_were() {
    // The last five threads in the copy's order (by thread id: t-0, t-1, t-10 … t-19,
    // t-2 … t-9), 25 checkpoints.
    let doomed = "thread_id IN ('t-5', 't-6', 't-7', 't-8', 't-9')";
    let delete = format!(
        "BEGIN; DELETE FROM checkpoint_writes WHERE {doomed}; \
         DELETE FROM checkpoint_blobs WHERE {doomed}; DELETE FROM checkpoints WHERE {doomed}; COMMIT"
    );
    let Some((_, left)) =
        copy_out_of_postgres_with("hrc_copy_snapshot", move |url| run_in(url, &delete))
    else {
        return;
    };
    assert_eq!(left, 75, "the five threads were deleted mid-copy");
}

/// The copy's own connection to its Postgres source lost alone (the oldest open
/// transaction on the source: the one its snapshot lives in), its pool's connections
/// alive: the copy reopens the source, reads as of a new snapshot and finishes, equal
/// to an uninterrupted copy. (A read of checkpoints as of the lost snapshot, on a live
/// pool connection, fails with "invalid snapshot identifier"; that it is reported as
/// the lost connection is `store::inspect`'s unit test: here the copy's own next read
/// on the lost connection usually says so first.)
#[test]
fn copy_out_of_postgres_recovers_when_only_its_snapshot_connection_is_lost() {
    let Some((report, killed)) = copy_out_of_postgres_with("hrc_copy_snaplost", |url| {
        admin(
            "SELECT count(*) FILTER (WHERE pg_terminate_backend(pid)) FROM \
             (SELECT pid FROM pg_stat_activity WHERE datname = $1 \
              AND pid <> pg_backend_pid() AND xact_start IS NOT NULL \
              ORDER BY xact_start LIMIT 1) oldest",
            &db_name(url),
        )
    }) else {
        return;
    };
    assert_eq!(killed, 1);
    assert!(report.reconnects >= 1, "{report:?}");
}

/// `max_reconnects(0)`: the first lost connection stops the copy, the import and the
/// prune with `ConnectionLost`, where the default (16) rides it out (the tests above).
#[test]
fn max_reconnects_zero_stops_copy_import_and_prune_at_the_first_loss() {
    let Some(base) = pg_base() else { return };
    let runtime = rt();
    let keys = StoreKeys::none();
    let lost = |what: &str, result: Result<u64, langgraph_codec::Error>| match result {
        Err(e) => assert_eq!(e.kind(), ErrorKind::ConnectionLost, "{what}: {e}"),
        Ok(n) => panic!("{what} rode out a lost connection ({n} done) with max_reconnects 0"),
    };

    let dir = crate::support::scratch("hrc_max0");
    let source = dir.join("source.db");
    sqlite_store(&source, &shape(20, 5), "t-");
    let source = source.to_string_lossy().into_owned();
    let target = runtime.block_on(fresh(&base, "hrc_max0_copy"));
    let (killed, kill) = killer_at(&db_name(&target), &[25]);
    let copied = runtime.block_on(store::copy(
        &source,
        &target,
        &keys,
        &CopyOptions::new()
            .batch_size(10)
            .max_reconnects(0)
            .on_progress(move |p| kill(p.rows_done)),
    ));
    assert_eq!(killed.load(Ordering::SeqCst), 1);
    lost("copy", copied.map(|r| r.copied));

    let file = dir.join("backup.jsonl");
    runtime.block_on(async {
        let store = AnyStore::open(&target).await.expect("open");
        let mut out = std::fs::File::create(&file).expect("file");
        store::export(&store, &mut out, &ExportOptions::new())
            .await
            .expect("export");
        out.flush().expect("flush");
    });
    let into = runtime.block_on(fresh(&base, "hrc_max0_import"));
    let (killed, kill) = killer_at(&db_name(&into), &[10]);
    let mut input = std::io::BufReader::new(std::fs::File::open(&file).expect("file"));
    let imported = runtime.block_on(store::import(
        &mut input,
        &file.to_string_lossy(),
        &into,
        &ImportOptions::new()
            .batch_size(5)
            .max_reconnects(0)
            .on_progress(move |p| kill(p.rows_done)),
    ));
    assert_eq!(killed.load(Ordering::SeqCst), 1);
    lost("import", imported.map(|r| r.inserted));

    let (url, _) = runtime.block_on(pg_pair(&base, "hrc_max0_prune", &shape(450, 4)));
    let (killed, kill) = killer_at(&db_name(&url), &[1]);
    let pruned = runtime.block_on(store::prune(
        &url,
        &keys,
        &PruneOptions::new()
            .keep_latest(1)
            .max_reconnects(0)
            .on_progress(move |p| kill(p.rows_done)),
    ));
    assert_eq!(killed.load(Ordering::SeqCst), 1);
    lost("prune", pruned.map(|r| r.checkpoints_deleted));
    let _ = std::fs::remove_dir_all(&dir);
}

/// Takes database `db` away: it refuses new connections, and its backends are
/// terminated (how many is returned).
fn go_away(db: &str) -> i64 {
    admin(
        &format!("ALTER DATABASE \"{db}\" ALLOW_CONNECTIONS false"),
        db,
    );
    terminate(db)
}

/// Database `db` takes connections again.
fn come_back(db: &str) {
    admin(
        &format!("ALTER DATABASE \"{db}\" ALLOW_CONNECTIONS true"),
        db,
    );
}

/// A server away for 30 s (the database refuses every connection, its backends are
/// terminated) in the middle of a prune: the prune waits it out, reconnecting as it
/// comes back, and ends exit 0, equal row for row to an uninterrupted prune. (Longer
/// than the retries wait: `retry::tests`, a `ConnectionLost` error, exit 2.)
#[test]
fn a_server_away_for_30_s_is_waited_out_and_the_prune_finishes_equal() {
    let Some(base) = pg_base() else { return };
    let runtime = rt();
    let (url, reference) = runtime.block_on(pg_pair(&base, "hrc_away", &shape(450, 4)));
    let prune = |store: &str, extra: &[&str]| {
        let out = Command::new(BIN)
            .args(["store", "prune", store, "--keep-latest", "1", "--json"])
            .args(extra)
            .output()
            .expect("lgcodec");
        (
            out.status.code().unwrap_or(-1),
            String::from_utf8_lossy(&out.stdout).into_owned(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    };
    let (code, stdout, stderr) = prune(&reference, &[]);
    assert_eq!(code, 0, "{stdout}{stderr}");
    // The first two pages (1,600 checkpoints) are paced to 300 a second: about 5 s. The
    // database refuses new connections and its backends are terminated 1.5 s in, and
    // takes connections again 30 s later.
    let db = db_name(&url);
    let away = {
        let db = db.clone();
        std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(1500));
            let terminated = go_away(&db);
            std::thread::sleep(Duration::from_secs(30));
            come_back(&db);
            terminated
        })
    };
    let started = std::time::Instant::now();
    let (code, stdout, stderr) = prune(&url, &["--max-rows-per-sec", "300"]);
    let terminated = away.join().expect("away");
    assert!(terminated >= 1, "nothing was terminated");
    assert_eq!(code, 0, "{stdout}{stderr}");
    assert!(
        started.elapsed() >= Duration::from_secs(30),
        "the prune ended before the server came back"
    );
    let report: serde_json::Value = serde_json::from_str(&stdout).expect("the JSON report");
    assert!(
        report["reconnects"].as_u64().is_some_and(|n| n >= 1),
        "{stdout}"
    );
    assert_eq!(
        runtime.block_on(digest(&url)),
        runtime.block_on(digest(&reference))
    );
}

/// A SIGTERM while a prune waits for a server that went away: the prune stops within
/// a second or two instead of waiting out its reconnect budget (about a minute), exits
/// 143 saying the connection was lost and a stop was asked for, and the same prune run
/// again once the server is back ends equal row for row to an uninterrupted one.
#[test]
fn a_stop_while_waiting_for_a_server_away_ends_at_once_and_a_rerun_finishes_equal() {
    let Some(base) = pg_base() else { return };
    let runtime = rt();
    let (url, reference) = runtime.block_on(pg_pair(&base, "hrc_stop_away", &shape(450, 4)));
    let prune = |store: &str, extra: &[&str]| {
        Command::new(BIN)
            .args(["store", "prune", store, "--keep-latest", "1", "--json"])
            .args(extra)
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .expect("lgcodec")
    };
    let out = prune(&reference, &[]).wait_with_output().expect("prune");
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    // As in the 30 s test: paced to 300 checkpoints a second, the database refuses
    // connections and its backends are terminated 1.5 s in. The first two pages take
    // about 5 s at that pace, then the prune finds its connection gone and waits to
    // re-open (0.1 s doubling to 5 s: 6.3 s for the first six). The SIGTERM comes 10 s
    // after the server went, inside those waits.
    let db = db_name(&url);
    let child = prune(&url, &["--max-rows-per-sec", "300"]);
    std::thread::sleep(Duration::from_millis(1500));
    let terminated = go_away(&db);
    std::thread::sleep(Duration::from_secs(10));
    let sent = std::time::Instant::now();
    crate::support::signal(&child, "-TERM");
    let out = child.wait_with_output().expect("prune");
    let waited = sent.elapsed();
    come_back(&db);
    assert!(terminated >= 1, "nothing was terminated");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(143), "{stderr}");
    assert!(
        waited < Duration::from_secs(3),
        "stopped {waited:?} after the SIGTERM"
    );
    for said in [
        "a stop was asked for",
        "the batch in flight was not committed",
        "run again to resume",
    ] {
        assert!(stderr.contains(said), "{said:?} not in {stderr}");
    }
    let out = prune(&url, &[]).wait_with_output().expect("prune");
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    assert_eq!(
        runtime.block_on(digest(&url)),
        runtime.block_on(digest(&reference))
    );
}

/// A retention policy keeping the latest checkpoint of each namespace.
fn keep_latest_one() -> store::RetentionPolicy {
    let value = serde_json::json!({ "rules": { "keep_latest": 1 } });
    store::RetentionPolicy::from_value(&value, "test policy").expect("policy")
}

/// The session advisory lock held in database `db` as `(classid, objid)`, if any
/// (`pg_locks` splits a 64-bit key into the two).
fn advisory_lock_in(db: &str) -> Option<(i64, i64)> {
    let n = admin(
        "SELECT count(*) FROM pg_locks l JOIN pg_database d ON d.oid = l.database \
         WHERE l.locktype = 'advisory' AND l.granted AND d.datname = $1",
        db,
    );
    if n == 0 {
        return None;
    }
    let part = |column: &str| {
        admin(
            &format!(
                "SELECT l.{column}::int8 FROM pg_locks l JOIN pg_database d ON d.oid = l.database \
                 WHERE l.locktype = 'advisory' AND l.granted AND d.datname = $1 LIMIT 1"
            ),
            db,
        )
    };
    Some((part("classid"), part("objid")))
}

/// A retention sweep whose connections are terminated after its first pages takes its
/// sweep lock again on the re-opened connection, finishes as an uninterrupted sweep,
/// and lets the lock go at the end.
#[test]
fn retain_on_postgres_takes_its_lock_again_after_a_lost_connection() {
    let Some(base) = pg_base() else { return };
    let runtime = rt();
    let (url, reference) = runtime.block_on(pg_pair(&base, "hrc_retain", &shape(450, 4)));
    let keys = StoreKeys::none();
    let want = runtime
        .block_on(store::retain(
            &reference,
            &keys,
            &store::RetainOptions::new(keep_latest_one()),
        ))
        .expect("uninterrupted sweep");
    assert!(want.checkpoints_deleted > 0);
    let db = db_name(&url);
    let (killed, kill) = killer_at(&db, &[1]);
    // After the kill, the lock the sweep holds, as seen at the next progress report.
    let held_after = Arc::new(std::sync::Mutex::new(Vec::new()));
    let (seen, db2) = (Arc::clone(&held_after), db.clone());
    let report = runtime
        .block_on(store::retain(
            &url,
            &keys,
            &store::RetainOptions::new(keep_latest_one())
                .batch_size(100)
                .on_progress(move |p| {
                    kill(p.rows_done);
                    if p.rows_done > 200 {
                        seen.lock().expect("lock").push(advisory_lock_in(&db2));
                    }
                }),
        ))
        .expect("the sweep survives terminated connections");
    assert!(killed.load(Ordering::SeqCst) >= 1, "nothing was terminated");
    // Pages go two at a time on two connections: each was lost once.
    assert!((1..=2).contains(&report.reconnects), "{report:?}");
    assert!(report.errors.is_empty(), "{report:?}");
    assert!(!report.stopped, "{report:?}");
    let held = held_after.lock().expect("lock").clone();
    assert!(
        !held.is_empty() && held.iter().all(Option::is_some),
        "the lock was not held again after the reconnect: {held:?}"
    );
    assert_eq!(advisory_lock_in(&db), None, "the lock was not let go");
    assert_eq!(
        runtime.block_on(digest(&url)),
        runtime.block_on(digest(&reference))
    );
}

/// Another sweeper taking the lock while the sweep's lost connection is re-opened:
/// the sweep stops after the page in flight and says why.
#[test]
fn retain_stops_when_another_sweeper_took_the_lock_during_a_reconnect() {
    let Some(base) = pg_base() else { return };
    let runtime = rt();
    let (url, _) = runtime.block_on(pg_pair(&base, "hrc_relock", &shape(450, 4)));
    let keys = StoreKeys::none();
    let db = db_name(&url);
    // At the first progress report: the sweep's lock key read, its sessions
    // terminated, and the same key taken by a session of this test, held until the
    // test lets it go.
    let (release, released) = std::sync::mpsc::channel::<()>();
    let released = Arc::new(std::sync::Mutex::new(Some(released)));
    let holder = Arc::new(std::sync::Mutex::new(None));
    let (h, u, d) = (Arc::clone(&holder), url.clone(), db.clone());
    let fired = std::sync::atomic::AtomicBool::new(false);
    let report = runtime
        .block_on(store::retain(
            &url,
            &keys,
            &store::RetainOptions::new(keep_latest_one())
                .batch_size(100)
                .on_progress(move |_| {
                    if fired.swap(true, Ordering::SeqCst) {
                        return;
                    }
                    let (classid, objid) = advisory_lock_in(&d).expect("the sweep's lock");
                    assert!(terminate(&d) >= 1);
                    let wait = released.lock().expect("lock").take().expect("once");
                    let (got_tx, got_rx) = std::sync::mpsc::channel();
                    let u = u.clone();
                    *h.lock().expect("lock") = Some(std::thread::spawn(move || {
                        rt().block_on(async {
                            let c = connect(&u).await;
                            let got: bool = c
                                .query_one(
                                    "SELECT pg_try_advisory_lock(($1::int8 << 32) | $2::int8)",
                                    &[&classid, &objid],
                                )
                                .await
                                .expect("lock")
                                .get(0);
                            got_tx.send(got).expect("send");
                            let _ = wait.recv();
                        })
                    }));
                    assert!(
                        got_rx.recv().expect("holder"),
                        "the test's session got no lock"
                    );
                }),
        ))
        .expect("the sweep ends with a report");
    assert!((1..=2).contains(&report.reconnects), "{report:?}");
    assert!(report.stopped, "{report:?}");
    assert!(
        report
            .errors
            .iter()
            .any(|e| e.contains("another sweeper took the store's lock")),
        "{report:?}"
    );
    drop(release);
    let thread = holder.lock().expect("lock").take();
    if let Some(t) = thread {
        t.join().expect("holder");
    }
}
