//! Targets a writing command cannot write, each refused or stopped with what to do and
//! nothing lost: a read-only Postgres server (a hot standby, or
//! `default_transaction_read_only`) is refused before anything is written, by every
//! command that writes; a disk that fills up mid-copy stops the copy with exit 2 and
//! "the disk … is full", the batches before stay, and the same command run again once
//! there is space finishes with the target equal to an uninterrupted copy's; an export
//! onto a full disk says so (`disk_full`) and leaves no file there.

use std::path::Path;
use std::process::Command;

use crate::support::store_fixture::{sqlite_store, Shape};
use crate::support::{pg, scratch};

fn lgcodec(args: &[&str]) -> (i32, String) {
    let (code, _, err) = crate::lgcodec(args, &[]);
    (code, err)
}

/// Every row of the SQLite store's two tables, ordered.
fn sqlite_rows(path: &Path) -> Vec<String> {
    let conn = rusqlite::Connection::open(path).expect("open");
    let mut rows = Vec::new();
    for sql in [
        "SELECT thread_id, checkpoint_ns, checkpoint_id, parent_checkpoint_id, type, \
         hex(checkpoint), hex(metadata) FROM checkpoints ORDER BY 1, 2, 3",
        "SELECT thread_id, checkpoint_ns, checkpoint_id, task_id, idx, channel, type, \
         hex(value) FROM writes ORDER BY 1, 2, 3, 4, 5",
    ] {
        let mut stmt = conn.prepare(sql).expect("prepare");
        let n = stmt.column_count();
        let got = stmt
            .query_map([], |r| {
                (0..n)
                    .map(|i| {
                        r.get::<_, rusqlite::types::Value>(i)
                            .map(|v| format!("{v:?}"))
                    })
                    .collect::<Result<Vec<_>, _>>()
                    .map(|cells| cells.join("|"))
            })
            .expect("query")
            .collect::<Result<Vec<_>, _>>()
            .expect("rows");
        rows.extend(got);
    }
    rows
}

/// A scratch directory (`tag`) holding `source.db`, a SQLite store of the default
/// shape (threads `t-0`, …): the directory and the store's path.
async fn default_source(tag: &str) -> (std::path::PathBuf, std::path::PathBuf) {
    let dir = scratch(tag);
    let source = dir.join("source.db");
    let path = source.clone();
    tokio::task::spawn_blocking(move || sqlite_store(&path, &Shape::default(), "t-"))
        .await
        .expect("fixture");
    (dir, source)
}

/// In `dir`: where a backup goes, and a retention policy keeping each thread's latest
/// checkpoint.
fn backup_and_policy(dir: &Path) -> (String, String) {
    let policy = dir.join("p.toml");
    std::fs::write(&policy, "[rules]\nkeep_latest = 1\n").expect("policy");
    let path = |p: std::path::PathBuf| p.to_str().expect("utf-8").to_owned();
    (path(dir.join("backup.jsonl")), path(policy))
}

/// A database set read-only the way a standby or `default_transaction_read_only`
/// makes it: every command that writes exits 2 saying it cannot be written, before
/// writing anything (an empty database gets no tables, a store no row); a dry run of
/// prune or retain answers as on the primary.
#[tokio::test]
async fn a_read_only_postgres_target_is_refused_before_anything_is_written() {
    let Some(url) = pg::url() else { return };
    let (dir, source) = default_source("bad-target-ro").await;
    let src = source.to_str().expect("utf-8");
    let (backup, policy) = backup_and_policy(&dir);
    let (backup, policy) = (backup.as_str(), policy.as_str());

    let db = pg::fresh(&url, "bad_target_ro").await;
    let name = db.rsplit('/').next().expect("db name").to_owned();
    let admin = pg::connect(&url).await;
    let read_only = |on: bool| {
        format!(
            "ALTER DATABASE \"{name}\" SET default_transaction_read_only = {}",
            if on { "on" } else { "off" }
        )
    };
    admin.batch_execute(&read_only(true)).await.expect("alter");
    let (code, err) = lgcodec(&["store", "copy", src, &db]);
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("cannot be written") && err.contains("read-only"),
        "{err}"
    );
    assert!(
        pg::tables_in(&pg::connect(&db).await, "public")
            .await
            .is_empty(),
        "an empty read-only target got tables"
    );

    // A store (one thread copied in while writable), then read-only again.
    admin.batch_execute(&read_only(false)).await.expect("alter");
    let (code, err) = lgcodec(&["store", "copy", src, &db, "--thread", "t-0"]);
    assert_eq!(code, 0, "{err}");
    let (code, err) = lgcodec(&["store", "export", &db, backup]);
    assert_eq!(code, 0, "{err}");
    // Reading and planning need no write: the dry runs answer as on the primary.
    let dry: [&[&str]; 4] = [
        &[
            "store",
            "prune",
            &db,
            "--keep-latest",
            "1",
            "--dry-run",
            "--json",
        ],
        &[
            "store",
            "prune",
            &db,
            "--before",
            "2999-01-01",
            "--dry-run",
            "--json",
        ],
        &[
            "store",
            "retain",
            &db,
            "--policy",
            policy,
            "--once",
            "--dry-run",
        ],
        &["store", "stats", &db, "--json"],
    ];
    let writable: Vec<_> = dry.iter().map(|a| answer(a, &[])).collect();
    admin.batch_execute(&read_only(true)).await.expect("alter");
    let before = pg::digest(&db).await;
    same_answers(&dry, &writable, &[]);
    for args in [
        vec!["store", "copy", src, &db],
        vec!["store", "import", backup, &db],
        vec!["store", "prune", &db, "--keep-latest", "1"],
        vec!["store", "retain", &db, "--policy", policy, "--once"],
    ] {
        let (code, err) = lgcodec(&args);
        assert_eq!(code, 2, "{args:?}: {err}");
        assert!(
            err.contains("cannot be written") && err.contains("read-only"),
            "{args:?}: {err}"
        );
    }
    assert_eq!(pg::digest(&db).await, before, "the read-only store changed");
    admin.batch_execute(&read_only(false)).await.expect("alter");
    let _ = std::fs::remove_dir_all(&dir);
}

/// Mounts a tmpfs of `size` on `at`; false where this machine does not allow it (not
/// root, no CAP_SYS_ADMIN in the container).
fn mount_tmpfs(at: &Path, size: &str) -> bool {
    std::fs::create_dir_all(at).expect("mount point");
    Command::new("mount")
        .args(["-t", "tmpfs", "-o", &format!("size={size}"), "tmpfs"])
        .arg(at)
        .output()
        .is_ok_and(|o| o.status.success())
}

fn remount(at: &Path, size: &str) {
    let ok = Command::new("mount")
        .args(["-o", &format!("remount,size={size}")])
        .arg(at)
        .status()
        .expect("mount");
    assert!(ok.success(), "remount {at:?}");
}

fn umount(at: &Path) {
    let _ = Command::new("umount").arg(at).status();
}

/// Runs `body` with a SQLite store of 200 threads of 10 checkpoints (its path) and a
/// tmpfs of `size` mounted under a scratch directory; unmounts and cleans up after, a
/// failing `body` included. Skipped where the test may not mount.
fn on_a_small_disk(tag: &str, size: &str, body: impl FnOnce(&Path, &Path, &str)) {
    let dir = scratch(tag);
    let mnt = dir.join("disk");
    if !mount_tmpfs(&mnt, size) {
        eprintln!("skipped: this machine does not let the test mount a small tmpfs");
        let _ = std::fs::remove_dir_all(&dir);
        return;
    }
    let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        let source = dir.join("source.db");
        let shape = Shape {
            threads: 200,
            steps: 10,
            ..Shape::default()
        };
        sqlite_store(&source, &shape, "t-");
        body(&dir, &mnt, source.to_str().expect("utf-8"));
    }));
    umount(&mnt);
    let _ = std::fs::remove_dir_all(&dir);
    if let Err(e) = result {
        std::panic::resume_unwind(e);
    }
}

/// A copy into a store on a disk that fills up: exit 2, the message says the disk is
/// full and what to do, the store keeps the batches committed before (it still opens
/// and reads), and once there is room the same command finishes, the target then
/// equal row for row to an uninterrupted copy's.
#[test]
fn a_disk_that_fills_up_stops_a_copy_and_the_rerun_finishes_it() {
    on_a_small_disk("bad-target-full", "3m", |dir, mnt, src| {
        // The reference: the same copy with room to spare.
        let reference = dir.join("reference.db");
        let (code, err) = lgcodec(&["store", "copy", src, reference.to_str().expect("utf-8")]);
        assert_eq!(code, 0, "{err}");
        assert!(
            std::fs::metadata(&reference).expect("size").len() > 3 << 20,
            "the copy must not fit the small disk"
        );

        let target = mnt.join("target.db");
        let tgt = target.to_str().expect("utf-8");
        let (code, err) = lgcodec(&["store", "copy", src, tgt, "--thread", "t-0"]);
        assert_eq!(code, 0, "{err}");
        let (code, err) = lgcodec(&["store", "copy", src, tgt]);
        assert_eq!(code, 2, "{err}");
        assert!(
            err.contains("disk under the store is full")
                && err.contains("run the same command again"),
            "{err}"
        );
        let kept = sqlite_rows(&target);
        assert!(kept.len() > 20, "the batches before the full disk stay");

        remount(mnt, "64m");
        let (code, err) = lgcodec(&["store", "copy", src, tgt]);
        assert_eq!(code, 0, "{err}");
        assert_eq!(sqlite_rows(&target), sqlite_rows(&reference));
    });
}

/// An export onto a disk that fills up: exit 2, kind `disk_full`, the message names
/// the file and says what to do, and no file is left on that disk (neither the backup
/// nor its partial file); once there is room, the same export writes a backup that
/// `verify` finds whole.
#[test]
fn a_disk_that_fills_up_stops_an_export_and_leaves_no_file() {
    on_a_small_disk("bad-target-full-export", "1m", |_, mnt, src| {
        let backup = mnt.join("backup.jsonl");
        let b = backup.to_str().expect("utf-8");
        let out = Command::new(env!("CARGO_BIN_EXE_lgcodec"))
            .args(["store", "export", src, b, "--json"])
            .output()
            .expect("lgcodec");
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{err}");
        let error: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON");
        assert_eq!(error["kind"], "disk_full", "{error}");
        for said in [b, "the disk is full", "run the same export again"] {
            assert!(err.contains(said), "{said:?} not in {err}");
        }
        let left: Vec<_> = std::fs::read_dir(mnt).expect("dir").collect();
        assert!(left.is_empty(), "left on the full disk: {left:?}");

        remount(mnt, "64m");
        let (code, err) = lgcodec(&["store", "export", src, b]);
        assert_eq!(code, 0, "{err}");
        let (code, err) = lgcodec(&["store", "verify", b]);
        assert_eq!(code, 0, "{err}");
    });
}

/// A new SQLite store that cannot be made where it is asked for is refused with what
/// stops it and what to do, kind by kind, and nothing is left behind: a directory that
/// is not there (`store_not_found`, "mkdir -p"; the directory is not made), a path
/// through a file ("not a directory"), a read-only filesystem (`read_only`). SQLite
/// alone says "unable to open database file" to all three.
#[test]
fn a_new_store_that_cannot_be_made_is_refused_with_what_to_do() {
    let dir = scratch("bad-target-new");
    let source = dir.join("source.db");
    sqlite_store(
        &source,
        &Shape {
            threads: 3,
            steps: 2,
            ..Shape::default()
        },
        "t-",
    );
    let src = source.to_str().expect("utf-8");
    let backup = dir.join("backup.jsonl");
    let b = backup.to_str().expect("utf-8");
    let (code, err) = lgcodec(&["store", "export", src, b]);
    assert_eq!(code, 0, "{err}");
    let refused = |target: &Path, kind: &str, said: &[&str]| {
        let t = target.to_str().expect("utf-8");
        for args in [
            ["store", "copy", src, t, "--json"],
            ["store", "import", b, t, "--json"],
        ] {
            let (code, out, err) = crate::lgcodec(&args, &[]);
            assert_eq!(code, 2, "{args:?}: {err}");
            let error: serde_json::Value = serde_json::from_str(&out).expect("JSON");
            assert_eq!(error["kind"], kind, "{args:?}: {error}");
            for s in said {
                assert!(err.contains(s), "{args:?}: {s:?} not in {err}");
            }
            assert!(!target.exists(), "{args:?} left {target:?}");
        }
    };
    let missing = dir.join("missing").join("deeper");
    refused(
        &missing.join("new.db"),
        "store_not_found",
        &["is not there", "mkdir -p"],
    );
    assert!(!dir.join("missing").exists(), "a directory was made");
    refused(
        &source.join("new.db"),
        "store_not_found",
        &["not a directory"],
    );
    let ro = dir.join("ro");
    if mount_tmpfs(&ro, "1m,ro") {
        let result = std::panic::catch_unwind(|| {
            refused(&ro.join("new.db"), "read_only", &["may not create files"]);
        });
        umount(&ro);
        if let Err(e) = result {
            std::panic::resume_unwind(e);
        }
    } else {
        eprintln!("read-only part skipped: this machine does not let the test mount a tmpfs");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// A SQLite store another connection keeps locked (a `BEGIN EXCLUSIVE` left open, as
/// in a `sqlite3` shell) past the command's 30 s wait: exit 2, kind `lock_timeout`,
/// saying what holds it and to run again; nothing changed. Once the lock is let go,
/// the same command goes through.
#[test]
fn a_store_locked_past_the_wait_is_a_lock_timeout_saying_what_to_do() {
    let dir = scratch("bad-target-locked");
    let store = dir.join("store.db");
    sqlite_store(
        &store,
        &Shape {
            threads: 3,
            steps: 4,
            ..Shape::default()
        },
        "t-",
    );
    let s = store.to_str().expect("utf-8");
    let before = sqlite_rows(&store);
    let holder = rusqlite::Connection::open(&store).expect("open");
    holder.execute_batch("BEGIN EXCLUSIVE").expect("lock");
    let started = std::time::Instant::now();
    let (code, out, err) =
        crate::lgcodec(&["store", "prune", s, "--keep-latest", "1", "--json"], &[]);
    let waited = started.elapsed();
    holder.execute_batch("ROLLBACK").expect("unlock");
    drop(holder);
    assert_eq!(code, 2, "{err}");
    assert!(waited >= std::time::Duration::from_secs(30), "{waited:?}");
    let error: serde_json::Value = serde_json::from_str(&out).expect("JSON");
    assert_eq!(error["kind"], "lock_timeout", "{error}");
    for said in [
        "another connection held a lock",
        "30 s",
        "run the same command again",
    ] {
        assert!(err.contains(said), "{said:?} not in {err}");
    }
    assert_eq!(sqlite_rows(&store), before);
    let (code, err) = lgcodec(&["store", "prune", s, "--keep-latest", "1"]);
    assert_eq!(code, 0, "{err}");
    assert_ne!(sqlite_rows(&store), before);
    let _ = std::fs::remove_dir_all(&dir);
}

/// The checkpoints the Postgres store holds.
async fn count(client: &tokio_postgres::Client) -> i64 {
    client
        .query_one("SELECT count(*) FROM checkpoints", &[])
        .await
        .expect("count")
        .get(0)
}

/// A Postgres store whose table another session keeps locked (a transaction left open
/// after `LOCK TABLE`): the command's statement gives up after its 30 s wait, exit 2,
/// kind `lock_timeout`, saying what holds it and to run again, nothing changed; a
/// `lock_timeout` the database sets (2 s here) is kept, not lengthened. Once the lock
/// is let go, the same command goes through. (Before, the command waited as long as
/// the lock was held, saying nothing.)
#[tokio::test]
async fn a_postgres_table_locked_past_the_wait_is_a_lock_timeout_saying_what_to_do() {
    let Some(url) = pg::url() else { return };
    let db = pg::restored(&url, "postgres-py-3.2.0", "locked").await;
    let holder = pg::connect(&db).await;
    let before = count(&holder).await;
    let prune = ["store", "prune", &db, "--keep-latest", "1", "--json"];
    let refused = |args: &[&str], again: &str| {
        let started = std::time::Instant::now();
        let mut child = Command::new(env!("CARGO_BIN_EXE_lgcodec"))
            .args(args)
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .expect("lgcodec");
        // A command that waits for the lock for ever is stopped at 90 s, and fails.
        while child.try_wait().expect("wait").is_none() {
            if started.elapsed() > std::time::Duration::from_secs(90) {
                let _ = child.kill();
                panic!("still waiting for the lock after 90 s");
            }
            std::thread::sleep(std::time::Duration::from_millis(100));
        }
        let out = child.wait_with_output().expect("output");
        let (code, out, err) = (
            out.status.code().unwrap_or(-1),
            String::from_utf8_lossy(&out.stdout).into_owned(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        );
        assert_eq!(code, 2, "{err}");
        let error: serde_json::Value = serde_json::from_str(&out).expect("JSON");
        assert_eq!(error["kind"], "lock_timeout", "{error}");
        for said in ["lock", again] {
            assert!(err.contains(said), "{said:?} not in {err}");
        }
        started.elapsed()
    };
    let name: String = holder
        .query_one("SELECT current_database()", &[])
        .await
        .expect("name")
        .get(0);
    // The database's own 2 s first, then none: the command's 30 s.
    for (setting, waits) in [("'2s'", 2..20), ("DEFAULT", 30..60)] {
        // Two messages: in one, the ALTER would join the open transaction, unseen.
        let set = format!("ALTER DATABASE \"{name}\" SET lock_timeout = {setting}");
        holder.batch_execute(&set).await.expect("set");
        holder
            .batch_execute("BEGIN; LOCK TABLE checkpoints IN ACCESS EXCLUSIVE MODE")
            .await
            .expect("lock");
        let waited = refused(&prune, "pg_locks name it");
        assert!(waits.contains(&waited.as_secs()), "{setting}: {waited:?}");
        holder.batch_execute("ROLLBACK").await.expect("unlock");
    }
    // A read through the saver's own connections (a checkpoint's state, its blobs
    // locked) is bounded the same way.
    let id: String = holder
        .query_one(
            "SELECT max(checkpoint_id) FROM checkpoints WHERE thread_id = 't-main'",
            &[],
        )
        .await
        .expect("id")
        .get(0);
    holder
        .batch_execute("BEGIN; LOCK TABLE checkpoint_blobs IN ACCESS EXCLUSIVE MODE")
        .await
        .expect("lock");
    let state = [
        "store",
        "inspect",
        &db,
        "--thread",
        "t-main",
        "--checkpoint",
        &id,
        "--json",
    ];
    let waited = refused(&state, "run the same call again");
    assert!((30..60).contains(&waited.as_secs()), "{waited:?}");
    holder.batch_execute("ROLLBACK").await.expect("unlock");
    assert_eq!(count(&holder).await, before, "nothing changed");
    let (code, _, err) = crate::lgcodec(&prune, &[]);
    assert_eq!(code, 0, "{err}");
    assert!(count(&holder).await < before);
}

/// An export to a file whose Postgres store has a table another session holds locked
/// waits on the lock; SIGTERM ends it at once (143, saying how far it got), and its
/// partial file goes with it: nothing is left beside the backup's name.
#[cfg(unix)]
#[tokio::test(flavor = "multi_thread")]
async fn an_export_stopped_waiting_on_a_lock_leaves_no_partial_file() {
    let Some(url) = pg::url() else {
        return;
    };
    let db = pg::restored(&url, "postgres-py-3.2.0", "export_locked").await;
    let holder = pg::connect(&db).await;
    holder
        .batch_execute("BEGIN; LOCK TABLE checkpoint_writes IN ACCESS EXCLUSIVE MODE")
        .await
        .expect("lock");
    let dir = scratch("export-locked");
    let mut child = Command::new(env!("CARGO_BIN_EXE_lgcodec"))
        .args(["store", "export", &db, "b.jsonl"])
        .current_dir(&dir)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("run lgcodec store export");
    let listed = |dir: &Path| -> Vec<String> {
        let mut names: Vec<String> = std::fs::read_dir(dir)
            .expect("list")
            .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        names
    };
    // The partial file is made once the store is open, before its rows are read.
    let started = std::time::Instant::now();
    while !listed(&dir).iter().any(|n| n.ends_with(".partial")) {
        assert!(
            child.try_wait().expect("wait").is_none(),
            "the export ended before it made its partial file"
        );
        assert!(
            started.elapsed() < std::time::Duration::from_secs(20),
            "no partial file"
        );
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    std::thread::sleep(std::time::Duration::from_millis(500));
    assert!(
        child.try_wait().expect("wait").is_none(),
        "waiting on the lock"
    );
    crate::support::signal(&child, "-TERM");
    let (status, err) = crate::support::ended_within(
        &mut child,
        std::time::Duration::from_secs(20),
        "the export after SIGTERM",
    );
    holder.batch_execute("ROLLBACK").await.expect("unlock");
    assert_eq!(status.code(), Some(143), "{err}");
    assert!(
        err.contains("lgcodec store export: terminated (SIGTERM) after"),
        "{err}"
    );
    assert_eq!(listed(&dir), Vec::<String>::new(), "{err}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// `stats` with SQLite's temporary files on a disk too small for them (150,000 threads,
/// `SQLITE_TMPDIR` on a tmpfs): exit 2, and the message names SQLITE_TMPDIR and what to
/// do, not only the store's disk, whether the store's own GROUP BY spilled there (a
/// disk of 16 KiB) or `--sort`'s scratch file of every thread did (4 MiB: room for
/// the first, not the second, with the bundled SQLite); `--top 1`, which needs no
/// scratch file, runs there; with room, `--sort size` runs too.
#[test]
fn stats_with_sqlites_temporary_files_on_a_full_disk_says_where_they_go() {
    let dir = scratch("bad-target-stats-tmp");
    let mnt = dir.join("tmp");
    if !mount_tmpfs(&mnt, "16k") {
        eprintln!("skipped: this machine does not let the test mount a small tmpfs");
        let _ = std::fs::remove_dir_all(&dir);
        return;
    }
    let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        let path = dir.join("threads.db");
        crate::support::empty_sqlite_store(&path)
            .execute_batch(
                "WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i < 149999) \
                 INSERT INTO checkpoints (thread_id, checkpoint_ns, checkpoint_id, type, checkpoint, metadata) \
                 SELECT printf('thread-%06d', i), '', 'c1', 'msgpack', x'80', CAST('{}' AS BLOB) FROM n",
            )
            .expect("threads");
        let store = path.to_str().expect("utf-8");
        let tmp = mnt.to_str().expect("utf-8");
        let stats = |args: &[&str]| {
            let mut all = vec!["store", "stats", store];
            all.extend_from_slice(args);
            let (code, _, err) = crate::lgcodec(&all, &[("SQLITE_TMPDIR", tmp)]);
            (code, err)
        };
        for args in [&["--top", "1", "--sort", "size"][..], &["--sort", "size"]] {
            let (code, err) = stats(args);
            assert_eq!(code, 2, "{args:?} on 16 KiB: {err}");
            assert!(
                err.contains("SQLITE_TMPDIR") && err.contains("run the same command again"),
                "{args:?} on 16 KiB: {err}"
            );
        }
        remount(&mnt, "4m");
        let (code, err) = stats(&["--top", "1", "--sort", "size"]);
        assert_eq!(code, 0, "--top 1 on 4 MiB: {err}");
        let (code, err) = stats(&["--sort", "size"]);
        assert_eq!(code, 2, "--sort size on 4 MiB: {err}");
        assert!(
            err.contains("could not be sorted in a scratch file")
                && err.contains("SQLITE_TMPDIR")
                && err.contains("--top N"),
            "--sort size on 4 MiB: {err}"
        );
        remount(&mnt, "64m");
        let (code, err) = stats(&["--sort", "size"]);
        assert_eq!(code, 0, "--sort size on 64 MiB: {err}");
    }));
    umount(&mnt);
    let _ = std::fs::remove_dir_all(&dir);
    if let Err(e) = result {
        std::panic::resume_unwind(e);
    }
}

/// A SQLite store on a read-only mount (a backup volume, a snapshot mounted `ro`): every
/// command that reads it and every dry run answers as on the same file writable (a
/// prune's and a retain's plan the same, row for row); every command that writes exits
/// 2, kind `read_only`, saying it cannot be written and what to do. A WAL file there
/// does not read as a writer opens it (no `-shm` can be made): the writing commands
/// said "not a Python LangGraph checkpoint store" or SQLite's "attempt to write a
/// readonly database", and a dry run of prune or retain, which opened the store for
/// writing, failed with them.
#[test]
fn a_read_only_sqlite_store_is_read_and_planned_and_refused_for_writing() {
    on_a_small_disk("bad-target-ro-sqlite", "8m", read_only_sqlite);
}

fn read_only_sqlite(dir: &Path, mnt: &Path, src: &str) {
    let store = mnt.join("store.db");
    for side in ["", "-wal"] {
        let from = format!("{src}{side}");
        if Path::new(&from).exists() {
            std::fs::copy(&from, format!("{}{side}", store.display())).expect("copy");
        }
    }
    // The case that failed: a store in WAL mode (as Python's `setup()` leaves it).
    let header = std::fs::read(&store).expect("read");
    assert_eq!(header.get(18..20), Some(&[2u8, 2][..]), "not in WAL mode");
    let s = store.to_str().expect("utf-8");
    let (backup, policy) = backup_and_policy(dir);
    let (b, p) = (backup.as_str(), policy.as_str());
    let key = [("LANGGRAPH_AES_KEY", "0123456789abcdef")];
    let (code, _, err) = crate::lgcodec(&["store", "export", src, b], &[]);
    assert_eq!(code, 0, "{err}");
    let reads: [&[&str]; 9] = [
        &["store", "stats", s, "--json"],
        &["store", "audit", s, "--json"],
        &["store", "inspect", s, "--json"],
        &["store", "inspect", s, "--thread", "t-0", "--json"],
        &[
            "store",
            "prune",
            s,
            "--keep-latest",
            "1",
            "--dry-run",
            "--json",
        ],
        &["store", "retain", s, "--policy", p, "--once", "--dry-run"],
        &["store", "encrypt", s, "--dry-run", "--json"],
        &["store", "import", b, s, "--dry-run", "--json"],
        &["store", "copy", src, s, "--dry-run", "--json"],
    ];
    let writable: Vec<_> = reads.iter().map(|a| answer(a, &key)).collect();
    remount(mnt, "8m,ro");
    same_answers(&reads, &writable, &key);
    for args in [
        &["store", "prune", s, "--keep-latest", "1", "--json"][..],
        &["store", "retain", s, "--policy", p, "--once"],
        &["store", "encrypt", s, "--json"],
        &["store", "rekey", s, "--json"],
        &["store", "import", b, s, "--json"],
        &["store", "copy", src, s, "--json"],
    ] {
        let (code, out, err) = crate::lgcodec(args, &key);
        assert_eq!(code, 2, "{args:?}: {err}");
        let error: serde_json::Value = serde_json::from_str(out.trim())
            .unwrap_or_else(|e| panic!("{args:?}: {e}: {out} {err}"));
        assert_eq!(error["kind"], "read_only", "{args:?}: {error}");
        assert!(
            err.contains("cannot be written") && err.contains("--dry-run"),
            "{args:?}: {err}"
        );
    }
}

/// What `lgcodec ARGS` says of a store: its exit status, its JSON lines (timings left
/// out) and its standard error.
fn answer(args: &[&str], env: &[(&str, &str)]) -> (i32, Vec<serde_json::Value>, String) {
    let (code, out, err) = crate::lgcodec(args, env);
    let said = out
        .lines()
        .map(|l| {
            let mut v: serde_json::Value = serde_json::from_str(l).expect("JSON");
            strip_timings(&mut v);
            v
        })
        .collect();
    (code, said, err)
}

/// Each of `commands` answers as it did on the store writable (`writable`).
fn same_answers(
    commands: &[&[&str]],
    writable: &[(i32, Vec<serde_json::Value>, String)],
    env: &[(&str, &str)],
) {
    for (args, (code, said, err)) in commands.iter().zip(writable) {
        assert!(matches!(code, 0 | 1), "{args:?} writable: {err}");
        let (ro_code, ro_said, ro_err) = answer(args, env);
        assert_eq!((ro_code, &ro_said), (*code, said), "{args:?}: {ro_err}");
    }
}

/// `v` without the fields that time a run.
fn strip_timings(v: &mut serde_json::Value) {
    match v {
        serde_json::Value::Object(map) => {
            map.retain(|k, _| {
                !(k.contains("elapsed")
                    || k.contains("duration")
                    || k.ends_with("_at")
                    || k.contains("per_s"))
            });
            map.values_mut().for_each(strip_timings);
        }
        serde_json::Value::Array(items) => items.iter_mut().for_each(strip_timings),
        _ => {}
    }
}

/// A backup at `file` of the SQLite store `source`, made through a fresh Postgres store
/// (database tag `tag`: a backup goes into a store of its own backend): that store's
/// URL and the backup's path.
async fn postgres_backup(url: &str, source: &str, tag: &str, file: &Path) -> (String, String) {
    let db = pg::fresh(url, tag).await;
    let backup = file.to_str().expect("utf-8").to_owned();
    for args in [
        &["store", "copy", source, &db][..],
        &["store", "export", &db, &backup],
    ] {
        let (code, _, err) = crate::lgcodec(args, &[]);
        assert_eq!(code, 0, "{args:?}: {err}");
    }
    (db, backup)
}

/// A dry run (`ARGS`, with `--json`) by a role the run itself would be refused for:
/// exit 1, the note on standard error, and the report's `would_be_refused`, which holds
/// `says`; the `GRANT` statements it gives (up to "; or").
fn refused_dry_run(args: &[&str], env: &[(&str, &str)], says: &[&str]) -> String {
    let (code, out, err) = crate::lgcodec(args, env);
    assert_eq!(code, 1, "{args:?}: {err}");
    let report: serde_json::Value = out
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .find(|v: &serde_json::Value| v.get("dry_run").is_some())
        .unwrap_or_else(|| panic!("{args:?}: no report in {out}"));
    let why = report["would_be_refused"].as_str().unwrap_or_default();
    for words in says {
        assert!(why.contains(words), "{args:?}: {words:?} not in {report}");
    }
    assert!(
        err.contains("a run without --dry-run would be refused"),
        "{args:?}: {err}"
    );
    let from = why.find("GRANT").expect("GRANT");
    let to = why[from..].find("; or ").map_or(why.len(), |e| from + e);
    why[from..to].to_owned()
}

/// A store one migration behind (Python's 9: `checkpoint_writes.task_path`), brought up
/// to date by a role that may write its tables but does not own them: only the owner may
/// `ALTER TABLE`, which no GRANT gives, so the saver's `setup()` and `lgcodec store
/// upgrade` say to run it as the owner, not to grant privileges; the owner's upgrade
/// then works.
#[tokio::test]
async fn a_role_that_does_not_own_the_tables_is_told_only_the_owner_may_change_them() {
    let Some(url) = pg::url() else { return };
    let db = pg::fresh(&url, "bad_target_owner").await;
    let setup = |url: &str| {
        let saver = langgraph_codec::saver::postgres::PostgresSaver::builder_from_url(url)
            .expect("url")
            .build()
            .expect("build");
        async move { saver.setup().await }
    };
    setup(&db).await.expect("setup as the owner");
    let admin = pg::connect(&db).await;
    admin
        .batch_execute(
            "DELETE FROM checkpoint_migrations WHERE v = 9; \
             ALTER TABLE checkpoint_writes DROP COLUMN task_path",
        )
        .await
        .expect("one migration back");
    let (role, as_role) = pg::limited_role(&db, "notowner", 100).await;
    // It may create in the schema (setup() begins with CREATE TABLE IF NOT EXISTS).
    admin
        .batch_execute(&format!("GRANT CREATE ON SCHEMA public TO {role}"))
        .await
        .expect("grant");
    let owner_only = "only the tables' owner (or a superuser) may change them";
    let e = setup(&as_role)
        .await
        .expect_err("setup by a role that does not own");
    let text = e.to_string();
    for words in ["must be owner of table checkpoint_writes", owner_only] {
        assert!(text.contains(words), "{words:?} not in {text}");
    }
    assert!(!text.contains("GRANT it SELECT"), "{text}");
    let (code, out, err) = crate::lgcodec(&["store", "upgrade", &as_role, "--json"], &[]);
    assert_eq!(code, 2, "{out}{err}");
    assert!(err.contains(owner_only), "{err}");
    let (code, out, err) = crate::lgcodec(&["store", "upgrade", &db], &[]);
    assert_eq!(code, 0, "{out}{err}");
    drop(admin);
    pg::drop_role(&db, &role).await;
}

/// A role that may not write the saver's tables, or not even read them, as operators
/// meet it (a reporting role, a role made without its `GRANT`s): a reader's commands
/// work for a role with `SELECT`, and its dry runs report what would go and exit 1,
/// saying that the run itself would be refused, on which tables, and the `GRANT`
/// that lets it (run as given, the prune then works); every command that writes exits
/// 2 saying the role lacks a privilege and what to grant or whom to connect as, the
/// store unchanged; a role without `SELECT` is told it may not read the tables, where
/// `information_schema` hid them from it and the store was "not a Python LangGraph
/// checkpoint store: no checkpoint tables".
#[tokio::test]
async fn a_role_that_may_not_write_or_read_is_told_what_to_grant() {
    let Some(url) = pg::url() else { return };
    let (dir, source) = default_source("bad-target-role").await;
    let src = source.to_str().expect("utf-8");
    let db = pg::fresh(&url, "bad_target_role").await;
    let (code, err) = lgcodec(&["store", "copy", src, &db]);
    assert_eq!(code, 0, "{err}");
    let (role, as_role) = pg::limited_role(&db, "reader", 100).await;
    let admin = pg::connect(&db).await;
    admin
        .batch_execute(&format!(
            "REVOKE INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA public FROM {role}"
        ))
        .await
        .expect("revoke");
    let before = pg::digest(&db).await;
    let key = [("LANGGRAPH_AES_KEY", "0123456789abcdef")];
    let r = as_role.as_str();
    for args in [&["store", "stats", r][..], &["store", "audit", r]] {
        let (code, _, err) = crate::lgcodec(args, &key);
        assert!(matches!(code, 0 | 1), "{args:?}: {err}");
    }
    // Dry runs: what would go, and that the run would be refused, with the GRANT.
    let policy = dir.join("policy.toml");
    std::fs::write(&policy, "[rules]\nkeep_latest = 1\n").expect("policy");
    let policy = policy.to_str().expect("utf-8");
    let all = "public.checkpoints, public.checkpoint_blobs, public.checkpoint_writes";
    let values = "public.checkpoint_blobs, public.checkpoint_writes";
    // Deleting checkpoints clears the parent of a kept one whose parent goes.
    let deletes = format!(
        "lacks DELETE on {all} and UPDATE on public.checkpoints: GRANT DELETE ON {all} TO \
         {role}; GRANT UPDATE ON public.checkpoints TO {role}; or"
    );
    let mut grant_delete = String::new();
    for (args, lacks) in [
        (
            &[
                "store",
                "prune",
                r,
                "--keep-latest",
                "1",
                "--dry-run",
                "--json",
            ][..],
            deletes.clone(),
        ),
        (
            &[
                "store",
                "retain",
                r,
                "--policy",
                policy,
                "--once",
                "--dry-run",
            ],
            deletes.clone(),
        ),
        (
            &["store", "encrypt", r, "--dry-run", "--json"],
            format!("lacks UPDATE on {values}: GRANT UPDATE ON {values} TO {role}; or"),
        ),
    ] {
        let grants = refused_dry_run(args, &key, &[&lacks]);
        if args[1] == "prune" {
            grant_delete = grants;
        }
    }
    for args in [
        &["store", "prune", r, "--keep-latest", "1", "--json"][..],
        &["store", "encrypt", r, "--json"],
        &["store", "copy", src, r, "--json"],
    ] {
        let (code, out, err) = crate::lgcodec(args, &key);
        assert_eq!(code, 2, "{args:?}: {err}");
        assert!(out.contains(r#""kind":"storage""#), "{args:?}: {out}");
        for words in ["permission denied", "lacks a privilege", "GRANT"] {
            assert!(err.contains(words), "{args:?}: {words:?} not in {err}");
        }
    }
    assert_eq!(pg::digest(&db).await, before, "the store changed");
    // The GRANT the dry run gave, run as given: its dry run now says nothing of a
    // refusal, and the prune itself works.
    admin.batch_execute(&grant_delete).await.expect("the GRANT");
    let (code, out, err) = crate::lgcodec(
        &[
            "store",
            "prune",
            r,
            "--keep-latest",
            "1",
            "--dry-run",
            "--json",
        ],
        &key,
    );
    assert_eq!(code, 0, "{err}");
    assert!(!out.contains("would_be_refused"), "{out}");
    let (code, _, err) = crate::lgcodec(&["store", "prune", r, "--keep-latest", "1"], &key);
    assert_eq!(code, 0, "{err}");
    assert_ne!(pg::digest(&db).await, before, "the prune deleted nothing");
    // Copy and import of other threads: INSERT, the GRANT as printed letting the copy.
    let other = dir.join("other.db");
    let path = other.clone();
    tokio::task::spawn_blocking(move || sqlite_store(&path, &Shape::default(), "u-"))
        .await
        .expect("fixture");
    let other = other.to_str().expect("utf-8");
    let (_, backup) = postgres_backup(
        &url,
        other,
        "bad_target_role_other",
        &dir.join("other.jsonl"),
    )
    .await;
    let backup = backup.as_str();
    let inserts = format!("lacks INSERT on {all}: GRANT INSERT ON {all} TO {role}; or");
    let mut grant_insert = String::new();
    for args in [
        &["store", "copy", other, r, "--dry-run", "--json"][..],
        &["store", "import", backup, r, "--dry-run", "--json"],
    ] {
        grant_insert = refused_dry_run(args, &key, &[&inserts]);
    }
    let written = pg::digest(&db).await;
    admin.batch_execute(&grant_insert).await.expect("the GRANT");
    let (code, _, err) = crate::lgcodec(&["store", "copy", other, r], &key);
    assert_eq!(code, 0, "{err}");
    assert_ne!(pg::digest(&db).await, written, "the copy wrote nothing");
    admin
        .batch_execute(&format!(
            "REVOKE ALL ON ALL TABLES IN SCHEMA public FROM {role}"
        ))
        .await
        .expect("revoke");
    for args in [
        &["store", "stats", r, "--json"][..],
        &[
            "store",
            "prune",
            r,
            "--keep-latest",
            "1",
            "--dry-run",
            "--json",
        ],
    ] {
        let (code, out, err) = crate::lgcodec(args, &[]);
        assert_eq!(code, 2, "{args:?}: {err}");
        assert!(out.contains(r#""kind":"storage""#), "{args:?}: {out}");
        for words in [
            &format!("role \"{role}\" may not read the checkpoint tables in schema public"),
            "GRANT",
        ] {
            assert!(err.contains(words), "{args:?}: {words:?} not in {err}");
        }
    }
    drop(admin);
    pg::drop_role(&db, &role).await;
    let _ = std::fs::remove_dir_all(&dir);
}

/// A new, empty database whose schema the role may not create tables in (PostgreSQL 15
/// and later: only the database's owner may in `public`), as an operator meets it when
/// an administrator made the database for the agents' role: the dry runs of copy and
/// import say the run could not make the saver's tables, and the `GRANT` that lets it
/// (exit 1); the copy itself exits 2 saying so, where it said the database "is not a
/// Python LangGraph checkpoint store" and to grant SELECT, INSERT, UPDATE and DELETE
/// on tables that do not exist; run as printed, the `GRANT` lets the copy make them.
#[tokio::test]
async fn a_role_that_may_not_create_the_tables_is_told_what_to_grant() {
    let Some(url) = pg::url() else { return };
    let (dir, source) = default_source("bad-target-create").await;
    let src = source.to_str().expect("utf-8");
    let (full, backup) = postgres_backup(
        &url,
        src,
        "bad_target_create_full",
        &dir.join("backup.jsonl"),
    )
    .await;
    let backup = backup.as_str();
    let db = pg::fresh(&url, "bad_target_create").await;
    let admin = pg::connect(&db).await;
    // As PostgreSQL 15 and later make it (a no-op there), whichever server runs this.
    admin
        .batch_execute("REVOKE CREATE ON SCHEMA public FROM PUBLIC")
        .await
        .expect("revoke");
    let (role, as_role) = pg::limited_role(&db, "maker", 100).await;
    let r = as_role.as_str();
    let says = format!(
        "role {role} may not create tables in schema public of database \"{}\"",
        db.rsplit('/').next().unwrap_or_default()
    );
    let grant = format!("GRANT CREATE ON SCHEMA public TO {role}");
    let mut printed = String::new();
    for args in [
        &["store", "copy", src, r, "--dry-run", "--json"][..],
        &["store", "import", backup, r, "--dry-run", "--json"],
    ] {
        printed = refused_dry_run(args, &[], &[&says, &grant]);
    }
    let (code, out, err) = crate::lgcodec(&["store", "copy", src, r, "--json"], &[]);
    assert_eq!(code, 2, "{err}");
    assert!(out.contains(r#""kind":"storage""#), "{out}");
    for words in [says.as_str(), grant.as_str()] {
        assert!(err.contains(words), "{words:?} not in {err}");
    }
    assert!(!err.contains("is not a Python LangGraph"), "{err}");
    let tables: i64 = admin
        .query_one(
            "SELECT count(*) FROM pg_tables WHERE schemaname = 'public'",
            &[],
        )
        .await
        .expect("count")
        .get(0);
    assert_eq!(tables, 0, "tables were made");
    // The saver's own setup() says what the schema needs, not a GRANT on its tables.
    let saver = langgraph_codec::saver::postgres::PostgresSaver::builder_from_url(r)
        .expect("url")
        .build()
        .expect("build");
    let e = saver.setup().await.expect_err("setup without CREATE");
    let text = e.to_string();
    for words in [
        "permission denied for schema public",
        "may not create tables in that schema",
        "GRANT CREATE, USAGE ON SCHEMA",
    ] {
        assert!(text.contains(words), "{words:?} not in {text}");
    }
    drop(saver);
    // The GRANT as printed: the copy makes the tables and copies.
    admin.batch_execute(&printed).await.expect("the GRANT");
    let (code, _, err) = crate::lgcodec(&["store", "copy", src, r], &[]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(pg::digest(&db).await, pg::digest(&full).await);
    drop(admin);
    pg::drop_role(&db, &role).await;
    let _ = std::fs::remove_dir_all(&dir);
}
