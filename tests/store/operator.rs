//! What an operator reads from `lgcodec store stats`: the threads ordered and cut with
//! `--sort`/`--top`, and what the store takes on disk.

use std::path::Path;
use std::process::Command;

use crate::support::scratch;
use crate::support::store_fixture::{sqlite_store, Shape};

const BIN: &str = env!("CARGO_BIN_EXE_lgcodec");

/// A copy of Python's SQLite store (12 checkpoints, `vectors/stores/sqlite-py-3.1.2`)
/// at `dir/name`.
fn python_store_in(dir: &Path, name: &str) -> std::path::PathBuf {
    let path = dir.join(name);
    std::fs::copy(
        crate::support::stores()
            .join("sqlite-py-3.1.2")
            .join("store.sqlite"),
        &path,
    )
    .expect("copy the fixture");
    path
}

fn lgcodec(args: &[&str]) -> (i32, String, String) {
    crate::lgcodec(args, &[])
}

/// Threads by bytes (checkpoint rows + writes), largest first, then by id: what SQLite
/// itself sums.
fn by_size(path: &Path) -> Vec<(String, i64)> {
    ranked(
        path,
        "sum(n)",
        "length(CAST(checkpoint AS BLOB)) + length(CAST(metadata AS BLOB))",
        "length(CAST(value AS BLOB))",
    )
}

/// Every thread with `total` of its `checkpoint` and `write` terms, largest first, then
/// by id, as SQLite itself computes it.
fn ranked(path: &Path, total: &str, checkpoint: &str, write: &str) -> Vec<(String, i64)> {
    let conn = rusqlite::Connection::open(path).expect("open");
    let mut stmt = conn
        .prepare(&format!(
            "SELECT thread_id, {total} FROM ( \
               SELECT thread_id, {checkpoint} AS n, 1 AS c, 0 AS w FROM checkpoints \
               UNION ALL SELECT thread_id, {write}, 0, 1 FROM writes) \
             GROUP BY thread_id ORDER BY 2 DESC, 1",
        ))
        .expect("prepare");
    stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
        .expect("query")
        .collect::<Result<_, _>>()
        .expect("rows")
}

/// The thread ids of `stats`' text report, in the order listed.
fn listed_threads(stdout: &str) -> Vec<&str> {
    stdout
        .lines()
        .skip_while(|l| !l.starts_with("per thread"))
        .skip(1)
        .take_while(|l| l.starts_with("  "))
        .filter_map(|l| l.split_whitespace().next())
        .collect()
}

#[test]
fn stats_sorts_and_cuts_the_threads_and_sizes_the_files() {
    let dir = scratch("stats-top");
    let path = dir.join("store.db");
    for (prefix, steps) in [("a-small-", 2), ("b-big-", 12), ("c-mid-", 6)] {
        let shape = Shape {
            threads: 1,
            steps,
            ..Shape::default()
        };
        sqlite_store(&path, &shape, prefix);
    }
    let s = path.to_str().expect("utf-8");
    let want = by_size(&path);
    assert_eq!(want.len(), 3);
    let (code, stdout, stderr) = lgcodec(&["store", "stats", s, "--top", "2", "--sort", "size"]);
    assert_eq!(code, 0, "{stderr}");
    let listed = listed_threads(&stdout);
    assert_eq!(
        listed,
        want.iter()
            .take(2)
            .map(|(t, _)| t.as_str())
            .collect::<Vec<_>>(),
        "{stdout}"
    );
    // The summary goes to standard error, data to standard output.
    assert!(
        stderr.starts_with("lgcodec store stats: 3 thread(s)"),
        "{stderr}"
    );
    assert!(!stdout.contains("lgcodec store stats:"), "{stdout}");
    // JSON: the chosen threads in order, with their bytes, and the files' sizes.
    let (code, stdout, stderr) = lgcodec(&["store", "stats", s, "--sort", "size", "--json"]);
    assert_eq!(code, 0, "{stderr}");
    let json: serde_json::Value = serde_json::from_str(&stdout).expect("json");
    let top: Vec<(String, i64)> = json["top_threads"]
        .as_array()
        .expect("top_threads")
        .iter()
        .map(|t| {
            (
                t["thread"].as_str().expect("thread").to_owned(),
                t["size"]["total_bytes"].as_i64().expect("bytes"),
            )
        })
        .collect();
    assert_eq!(top, want);
    let len = |p: &Path| std::fs::metadata(p).map(|m| m.len()).unwrap_or(0);
    assert_eq!(json["files"]["database_bytes"], len(&path), "{json}");
    assert_eq!(
        json["files"]["wal_bytes"],
        len(&dir.join("store.db-wal")),
        "{json}"
    );
    // By id, every thread (the default), written as each is counted: the report the
    // library gives with every thread held, field for field, and in text each
    // thread's line in id order.
    let (code, stdout, stderr) = lgcodec(&["store", "stats", s, "--json"]);
    assert_eq!(code, 0, "{stderr}");
    let json: serde_json::Value = serde_json::from_str(&stdout).expect("json");
    assert!(json.get("top_threads").is_none(), "{json}");
    let held = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime")
        .block_on(async {
            langgraph_codec::store::AnyStore::open(s)
                .await?
                .stats(
                    &langgraph_codec::store::StoreKeys::none(),
                    &langgraph_codec::store::StatsOptions::new(),
                )
                .await
        })
        .expect("stats");
    let mut want = serde_json::to_value(&held).expect("json");
    // The files' sizes are read again; the rest is what the rows say.
    want["files"] = json["files"].clone();
    assert_eq!(json, want);
    let (code, stdout, stderr) = lgcodec(&["store", "stats", s]);
    assert_eq!(code, 0, "{stderr}");
    let lines: Vec<&str> = stdout
        .lines()
        .skip_while(|l| !l.starts_with("per thread"))
        .skip(1)
        .take_while(|l| l.starts_with("  "))
        .collect();
    let want: Vec<String> = held
        .per_thread
        .iter()
        .map(|(t, s)| {
            format!(
                "  {t:<36} {:>10} = {} + {} + {} ({} checkpoint(s))",
                s.total_bytes,
                s.checkpoints.bytes,
                s.blobs.bytes,
                s.writes.bytes,
                s.checkpoints.rows
            )
        })
        .collect();
    assert_eq!(lines, want, "{stdout}");
    assert!(
        stdout.contains("3 thread(s), ") && stdout.contains("per channel"),
        "{stdout}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// `--top N` keeps N threads in memory (a heap as the sizes stream by): the threads it
/// lists, and the only ones in `per_thread`, are the first N as SQLite ranks them,
/// ties in id order; the totals still count every thread. Without `--top` (N = 0)
/// every thread is listed in the same order (sorted in a scratch file), in JSON and
/// in text, and `per_thread` holds them all.
#[test]
fn stats_top_keeps_the_first_threads_of_every_order_and_counts_them_all() {
    let dir = scratch("stats-top-orders");
    let path = dir.join("store.db");
    // Ties on purpose: equal checkpoint and write counts in b/e and c/d.
    for (prefix, steps) in [
        ("e-", 12),
        ("a-", 2),
        ("c-", 6),
        ("b-", 12),
        ("f-", 1),
        ("d-", 6),
    ] {
        let shape = Shape {
            threads: 1,
            steps,
            ..Shape::default()
        };
        sqlite_store(&path, &shape, prefix);
    }
    let s = path.to_str().expect("utf-8");
    let bytes = "length(CAST(checkpoint AS BLOB)) + length(CAST(metadata AS BLOB))";
    let value = "length(CAST(value AS BLOB))";
    let mut by_id = ranked(&path, "0", "0", "0");
    by_id.sort();
    let orders = [
        ("size", ranked(&path, "sum(n)", bytes, value)),
        ("checkpoints", ranked(&path, "sum(c)", bytes, value)),
        ("writes", ranked(&path, "sum(w)", bytes, value)),
        ("id", by_id),
    ];
    let all_bytes: i64 = orders[0].1.iter().map(|(_, n)| n).sum();
    for (sort, want) in &orders {
        assert_eq!(want.len(), 6);
        for n in [0usize, 1, 2, 4] {
            let (code, stdout, stderr) = lgcodec(&[
                "store",
                "stats",
                s,
                "--top",
                &n.to_string(),
                "--sort",
                sort,
                "--json",
            ]);
            assert_eq!(code, 0, "{stderr}");
            let json: serde_json::Value = serde_json::from_str(&stdout).expect("json");
            let all = if n == 0 { want.len() } else { n };
            let first: Vec<&str> = want.iter().take(all).map(|(t, _)| t.as_str()).collect();
            if (n, *sort) == (0, "id") {
                // The default report: `per_thread` alone, as the library's.
                assert!(json.get("top_threads").is_none(), "{json}");
            } else {
                let listed: Vec<&str> = json["top_threads"]
                    .as_array()
                    .expect("top_threads")
                    .iter()
                    .map(|t| t["thread"].as_str().expect("thread"))
                    .collect();
                assert_eq!(listed, first, "--top {n} --sort {sort}");
            }
            let mut kept: Vec<&str> = json["per_thread"]
                .as_object()
                .expect("per_thread")
                .keys()
                .map(String::as_str)
                .collect();
            let mut first = first;
            first.sort_unstable();
            kept.sort_unstable();
            assert_eq!(kept, first, "--top {n} --sort {sort}: per_thread");
            assert_eq!(json["threads"], 6, "{json}");
            assert_eq!(json["total"]["total_bytes"], all_bytes, "{json}");
        }
        let (code, stdout, stderr) = lgcodec(&["store", "stats", s, "--sort", sort]);
        assert_eq!(code, 0, "{stderr}");
        let listed = listed_threads(&stdout);
        let every: Vec<&str> = want.iter().map(|(t, _)| t.as_str()).collect();
        assert_eq!(listed, every, "--sort {sort}: {stdout}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// `copy`, `prune`, `audit`, `export` and `import --max-rows-per-sec N` go at most N
/// rows a second on average: 12 checkpoints at 20 a second take at least 0.6 s, by the
/// command's own clock.
#[test]
fn every_paced_command_keeps_to_its_rate() {
    let dir = scratch("rate");
    let source = python_store_in(&dir, "source.sqlite");
    let s = source.to_str().expect("utf-8");
    let target = dir.join("copy.db");
    let t = target.to_str().expect("utf-8");
    let elapsed = |args: &[&str]| {
        let (code, stdout, stderr) = lgcodec(args);
        assert_eq!(code, 0, "{stderr}");
        let json: serde_json::Value = serde_json::from_str(&stdout).expect("json");
        json["elapsed_s"].as_f64().expect("elapsed_s")
    };
    let copy = elapsed(&["store", "copy", s, t, "--max-rows-per-sec", "20", "--json"]);
    assert!(copy >= 12.0 / 20.0, "copy took {copy} s");
    let prune = elapsed(&[
        "store",
        "prune",
        t,
        "--keep-latest",
        "1",
        "--max-rows-per-sec",
        "20",
        "--json",
    ]);
    assert!(prune >= 12.0 / 20.0, "prune took {prune} s");
    // The audit reads at least the 12 checkpoints' values, the export and the import
    // at least their 12 rows.
    let audit = elapsed(&[
        "store",
        "audit",
        s,
        "--allow-clear",
        "--max-rows-per-sec",
        "20",
        "--json",
    ]);
    assert!(audit >= 12.0 / 20.0, "audit took {audit} s");
    let backup = dir.join("backup.jsonl");
    let b = backup.to_str().expect("utf-8");
    let export = elapsed(&[
        "store",
        "export",
        s,
        b,
        "--max-rows-per-sec",
        "20",
        "--json",
    ]);
    assert!(export >= 12.0 / 20.0, "export took {export} s");
    let restored = dir.join("restored.db");
    let r = restored.to_str().expect("utf-8");
    let import = elapsed(&[
        "store",
        "import",
        b,
        r,
        "--max-rows-per-sec",
        "20",
        "--json",
    ]);
    assert!(import >= 12.0 / 20.0, "import took {import} s");
    let _ = std::fs::remove_dir_all(&dir);
}

/// `copy` and `import --batch-size N` write N checkpoints (rows) per transaction: 12
/// checkpoints in batches of 5 are 3 copy batches; the import's batches hold one
/// table's rows each, so 5 at a time over the checkpoints and then the writes.
#[test]
fn copy_and_import_write_in_batches_of_the_size_asked() {
    let dir = scratch("batch_size");
    let source = python_store_in(&dir, "source.sqlite");
    let s = source.to_str().expect("utf-8");
    let conn = rusqlite::Connection::open(&source).expect("open");
    let count = |table: &str| -> u64 {
        conn.query_row(&format!("SELECT count(*) FROM {table}"), [], |r| {
            r.get::<_, i64>(0)
        })
        .map(|n| u64::try_from(n).expect("count"))
        .expect("count")
    };
    let (checkpoints, writes) = (count("checkpoints"), count("writes"));
    drop(conn);
    let json = |args: &[&str]| -> serde_json::Value {
        let (code, stdout, stderr) = lgcodec(args);
        assert_eq!(code, 0, "{stderr}");
        serde_json::from_str(&stdout).expect("json")
    };
    let target = dir.join("copy.db");
    let t = target.to_str().expect("utf-8");
    let copied = json(&["store", "copy", s, t, "--batch-size", "5", "--json"]);
    assert_eq!(copied["batches"], checkpoints.div_ceil(5), "{copied}");
    assert_eq!(copied["verified"], checkpoints, "{copied}");
    let backup = dir.join("backup.jsonl");
    let b = backup.to_str().expect("utf-8");
    json(&["store", "export", s, b, "--json"]);
    let restored = dir.join("restored.db");
    let r = restored.to_str().expect("utf-8");
    let imported = json(&["store", "import", b, r, "--batch-size", "5", "--json"]);
    assert_eq!(
        imported["batches"],
        checkpoints.div_ceil(5) + writes.div_ceil(5),
        "{imported}"
    );
    assert_eq!(imported["inserted"], checkpoints + writes, "{imported}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// `prune --batch-size N` deletes N threads per transaction: six threads of three
/// checkpoints each, kept to their latest, go in three batches of two (in one by
/// default), and both ways delete all but the latest of each namespace.
#[test]
fn prune_deletes_in_batches_of_the_size_asked() {
    let dir = scratch("prune_batch");
    let shape = Shape {
        threads: 6,
        steps: 3,
        ..Shape::default()
    };
    for (name, extra, batches) in [("default.db", None, 1), ("two.db", Some("2"), 3)] {
        let path = dir.join(name);
        sqlite_store(&path, &shape, "t-");
        let conn = rusqlite::Connection::open(&path).expect("open");
        let older: i64 = conn
            .query_row(
                "SELECT count(*) - (SELECT count(*) FROM (SELECT DISTINCT thread_id, checkpoint_ns FROM checkpoints)) FROM checkpoints",
                [],
                |r| r.get(0),
            )
            .expect("count");
        drop(conn);
        let p = path.to_str().expect("utf-8");
        let mut args = vec!["store", "prune", p, "--keep-latest", "1", "--json"];
        if let Some(n) = extra {
            args.extend(["--batch-size", n]);
        }
        let (code, stdout, stderr) = lgcodec(&args);
        assert_eq!(code, 0, "{stderr}");
        let json: serde_json::Value = serde_json::from_str(&stdout).expect("json");
        assert_eq!(json["batches"], batches, "{args:?}: {json}");
        assert_eq!(json["threads"], 6, "{json}");
        assert!(older > 0);
        assert_eq!(json["checkpoints_deleted"], older, "{json}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// Every operation's progress names what it counts (`unit`), and its last report
/// counts all of it, as the store's own tables tell: the audit its values
/// (checkpoints and writes), the export and the import their rows, the copy its
/// checkpoints, the prune its threads.
#[test]
fn each_operation_reports_progress_in_its_own_unit() {
    use langgraph_codec::store::{self, AnyStore, Progress, StoreKeys};
    use std::sync::{Arc, Mutex};

    let dir = scratch("unit");
    let source = python_store_in(&dir, "source.sqlite");
    let s = source.to_str().expect("utf-8");
    let conn = rusqlite::Connection::open(&source).expect("open");
    let count = |sql: &str| -> u64 {
        conn.query_row(sql, [], |r| r.get::<_, i64>(0))
            .map(|n| u64::try_from(n).expect("count"))
            .expect(sql)
    };
    let checkpoints = count("SELECT count(*) FROM checkpoints");
    let writes = count("SELECT count(*) FROM writes");
    let threads = count("SELECT count(DISTINCT thread_id) FROM checkpoints");
    drop(conn);
    type Last = Arc<Mutex<Option<(&'static str, &'static str, u64)>>>;
    let last: Last = Arc::default();
    let seen = || {
        let last = Arc::clone(&last);
        move |p: &Progress| {
            *last.lock().expect("lock") = Some((p.operation, p.unit, p.rows_done));
        }
    };
    let take = |last: &Last| {
        last.lock()
            .expect("lock")
            .take()
            .expect("a progress report")
    };
    let keys = StoreKeys::none();
    let rt = crate::support::rt();
    rt.block_on(async {
        let store = store::Store::open(s).await.expect("open");
        store::audit(
            &store,
            &keys,
            &store::AuditOptions::new().on_progress(seen()),
        )
        .await
        .expect("audit");
        assert_eq!(take(&last), ("audit", "values", checkpoints + writes));

        let any = AnyStore::open(s).await.expect("open");
        let file = dir.join("backup.jsonl");
        let mut out = std::fs::File::create(&file).expect("create");
        store::export(
            &any,
            &mut out,
            &store::ExportOptions::new().on_progress(seen()),
        )
        .await
        .expect("export");
        assert_eq!(take(&last), ("export", "rows", checkpoints + writes));

        let restored = dir.join("restored.db");
        let mut input = std::io::BufReader::new(std::fs::File::open(&file).expect("open"));
        store::import(
            &mut input,
            "backup.jsonl",
            restored.to_str().expect("utf-8"),
            &store::ImportOptions::new().on_progress(seen()),
        )
        .await
        .expect("import");
        assert_eq!(take(&last), ("import", "rows", checkpoints + writes));

        let copied = dir.join("copy.db");
        let c = copied.to_str().expect("utf-8");
        store::copy(s, c, &keys, &store::CopyOptions::new().on_progress(seen()))
            .await
            .expect("copy");
        assert_eq!(take(&last), ("copy", "checkpoints", checkpoints));

        store::prune(
            c,
            &keys,
            &store::PruneOptions::new()
                .keep_latest(1)
                .on_progress(seen()),
        )
        .await
        .expect("prune");
        assert_eq!(take(&last), ("prune", "threads", threads));
    });
    let _ = std::fs::remove_dir_all(&dir);
}

/// SIGINT (and SIGTERM) in the middle of a sweep: the sweep finishes the batch in
/// flight and prints its report (`"stopped": true`), says after how many values it
/// stopped and how to finish (run it again), exits 130 (143), and the rerun completes
/// with every row done once.
#[test]
fn an_interrupted_sweep_says_where_it_stopped_and_the_rerun_finishes() {
    let dir = scratch("sigint");
    let path = dir.join("store.db");
    let shape = Shape {
        threads: 6,
        steps: 10,
        ..Shape::default()
    };
    sqlite_store(&path, &shape, "t-");
    let s = path.to_str().expect("utf-8");
    let key = "interrupt-key-16";
    for (signal, status) in [("-INT", 130), ("-TERM", 143)] {
        let child = Command::new(BIN)
            .args([
                "store",
                "encrypt",
                s,
                "--batch-size",
                "5",
                "--max-rows-per-sec",
                "50",
                "--json",
            ])
            .env("LANGGRAPH_AES_KEY", key)
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .expect("spawn");
        // At 50 rows a second the sweep of 180 values takes over 3 s: stop it after 1 s.
        std::thread::sleep(std::time::Duration::from_secs(1));
        crate::support::signal(&child, signal);
        let out = child.wait_with_output().expect("wait");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(status), "{stderr}");
        assert!(
            stderr.contains("lgcodec store encrypt: ")
                && stderr.contains("finishing the batch in flight")
                && stderr.contains("stopped after ")
                && stderr.contains(" values, the batch in flight finished")
                && stderr.contains("run the same command again to resume"),
            "{stderr}"
        );
        let report: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json");
        assert_eq!(report["stopped"], true, "{report}");
        assert_eq!(report["complete"], false, "{report}");
    }
    let out = Command::new(BIN)
        .args(["store", "encrypt", s, "--json"])
        .env("LANGGRAPH_AES_KEY", key)
        .output()
        .expect("rerun");
    assert_eq!(out.status.code(), Some(0));
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json");
    assert_eq!(json["complete"], true, "{json}");
    let audit = Command::new(BIN)
        .args(["store", "audit", s, "--allow-free-space"])
        .env("LANGGRAPH_AES_KEY", key)
        .output()
        .expect("audit");
    assert_eq!(
        audit.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&audit.stdout)
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// A copy of an encrypted store without its key fails before the target is made, and
/// says which variable to set (not which Rust type to use).
#[test]
fn a_copy_without_the_key_leaves_no_target_and_names_the_variable() {
    let dir = scratch("copy-no-key");
    let source = dir.join("encrypted.sqlite");
    // Python's store of the quickstart, encrypted under its published demo key.
    std::fs::copy(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("vectors/sqlite/python_store.sqlite"),
        &source,
    )
    .expect("copy");
    let target = dir.join("new.db");
    let (code, _, stderr) = lgcodec(&[
        "store",
        "copy",
        source.to_str().expect("utf-8"),
        target.to_str().expect("utf-8"),
    ]);
    assert_eq!(code, 2, "{stderr}");
    assert!(
        stderr.contains("no key was given") && stderr.contains("LANGGRAPH_AES_KEY"),
        "{stderr}"
    );
    assert!(!stderr.contains("EncryptedSerializer"), "{stderr}");
    assert!(
        !target.exists(),
        "the failed copy left {}",
        target.display()
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// One output contract for every store command: without `--json` the one-line summary
/// (`lgcodec store NAME: …`) is the last line of standard error and never on standard
/// output; with `--json` standard output is one JSON document and the summary stays on
/// standard error. Summary lines give sizes in B/KiB/MiB and whole rates.
#[test]
fn every_store_command_puts_data_on_stdout_and_its_summary_on_stderr() {
    let dir = scratch("streams");
    python_store_in(&dir, "s.db");
    let path = |name: &str| dir.join(name).to_str().expect("utf-8").to_owned();
    let (s, b, r, c) = (path("s.db"), path("b.jsonl"), path("r.db"), path("c.db"));
    let commands: Vec<(&str, Vec<&str>)> = vec![
        ("stats", vec![&s]),
        ("inspect", vec![&s]),
        ("export", vec![&s, &b]),
        ("verify", vec![&b]),
        ("import", vec![&b, &r]),
        ("copy", vec![&s, &c]),
        ("prune", vec![&c, "--keep-latest", "1", "--dry-run"]),
        ("upgrade", vec![&s]),
        ("audit", vec![&s, "--allow-clear"]),
        ("encrypt", vec![&s, "--dry-run"]),
    ];
    for json in [false, true] {
        for (name, args) in &commands {
            let mut argv = vec!["store", *name];
            argv.extend(args.iter().copied());
            if json {
                argv.push("--json");
            }
            let out = Command::new(BIN)
                .args(&argv)
                .env("LANGGRAPH_AES_KEY", "stream-key-16byt")
                .output()
                .expect("run");
            let (stdout, stderr) = (
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr),
            );
            assert_eq!(out.status.code(), Some(0), "{argv:?}: {stderr}");
            let prefix = format!("lgcodec store {name}");
            assert!(
                !stdout.contains(&prefix),
                "{argv:?}: a summary on stdout: {stdout}"
            );
            assert!(
                stderr
                    .lines()
                    .last()
                    .is_some_and(|l| l.starts_with(&prefix)),
                "{argv:?}: no summary line on stderr: {stderr}"
            );
            if json {
                serde_json::from_str::<serde_json::Value>(&stdout)
                    .unwrap_or_else(|e| panic!("{argv:?}: not one JSON document ({e}): {stdout}"));
            }
            // Sizes for people (B, KiB, MiB…), never a raw byte count; rates whole.
            let summary = stderr.lines().last().unwrap_or_default();
            let words: Vec<&str> = summary.split_whitespace().collect();
            for pair in words.windows(2) {
                let number = pair[0].trim_start_matches('(');
                assert!(
                    !(number.parse::<u64>().is_ok_and(|n| n >= 1024)
                        && pair[1].trim_end_matches([',', ')', ';']) == "B"),
                    "{argv:?}: a size of 1024 bytes or more not in KiB: {summary}"
                );
                assert!(
                    !pair[1].starts_with("bytes") && !pair[1].starts_with("MB/s"),
                    "{argv:?}: a raw byte count or rate: {summary}"
                );
                assert!(
                    !(pair[0].contains('.') && pair[1].starts_with("rows/s")),
                    "{argv:?}: a fractional rate: {summary}"
                );
            }
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// A copy that fails after it created its target (a checkpoint past the first one
/// cannot be decoded): with no batch committed yet, the new file is removed; with
/// batches committed, it stays, and the error says how many checkpoints it holds. The
/// broken row's thread is then in the target in part: a copy leaving it out says so
/// and what to do, and the same copy run again once the row is mended goes on from
/// there and ends with the source's checkpoints.
#[test]
fn a_copy_that_fails_midway_keeps_a_new_file_only_when_it_holds_checkpoints() {
    use crate::corrupt::sqlite_keys;
    let dir = scratch("copy-fails-midway");
    let source = python_store_in(&dir, "source.sqlite");
    let keys = sqlite_keys(&source);
    assert!(keys.len() > 2, "{keys:?}");
    // The last checkpoint of t-main, the first thread, gets bytes no msgpack decoder
    // reads (0xc1 is never used): the copy's first-row probe passes, and the failure
    // comes later, inside the thread.
    let conn = rusqlite::Connection::open(&source).expect("open");
    let last = "WHERE rowid = (SELECT rowid FROM checkpoints WHERE thread_id = 't-main' \
                ORDER BY checkpoint_ns DESC, checkpoint_id DESC LIMIT 1)";
    let (kind, stored): (String, Vec<u8>) = conn
        .query_row(
            &format!("SELECT type, checkpoint FROM checkpoints {last}"),
            [],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .expect("the last row");
    let set = format!("UPDATE checkpoints SET type = ?1, checkpoint = ?2 {last}");
    let changed = conn
        .execute(&set, rusqlite::params!["msgpack", vec![0xc1u8; 3]])
        .expect("break one row");
    assert_eq!(changed, 1);
    let (s, target) = (source.to_str().expect("utf-8"), dir.join("new.db"));
    let t = target.to_str().expect("utf-8");
    let files = |target: &Path| {
        ["", "-wal", "-shm", "-journal"]
            .iter()
            .map(|suffix| format!("{}{suffix}", target.display()))
            .filter(|name| Path::new(name).exists())
            .collect::<Vec<_>>()
    };

    // One batch of every checkpoint: it fails before anything is committed.
    let (code, _, stderr) = lgcodec(&["store", "copy", s, t]);
    assert_eq!(code, 2, "{stderr}");
    assert_eq!(files(&target), Vec::<String>::new(), "{stderr}");
    assert!(!stderr.contains("keeps the"), "{stderr}");

    // A checkpoint a batch: those before the broken one are committed, and kept.
    let (code, _, stderr) = lgcodec(&["store", "copy", s, t, "--batch-size", "1"]);
    assert_eq!(code, 2, "{stderr}");
    let held = sqlite_keys(&target);
    assert!(!held.is_empty() && held.len() < keys.len(), "{held:?}");
    assert_eq!(
        held[..],
        keys[..held.len()],
        "a prefix of the source, in key order"
    );
    assert!(
        stderr.contains(&format!(
            "{t} was created by this copy and keeps the {} checkpoint(s)",
            held.len()
        )) && stderr.contains("run the same command again"),
        "{stderr}"
    );

    // The broken row's thread, t-main, is in the target in part. A copy leaving it out
    // copies t-short and says so (exit 1) with what to do; the prune it gives deletes
    // the thread there, after which the copy leaving it out is clean.
    let of = |keys: &[(String, String, String)], thread: &str| {
        keys.iter().filter(|k| k.0 == thread).count()
    };
    let (in_target, in_source) = (of(&held, "t-main"), of(&keys, "t-main"));
    assert!(in_target > 0 && in_target < in_source, "{held:?}");
    let out_short = [
        "store",
        "copy",
        s,
        t,
        "--exclude-thread",
        "t-main",
        "--json",
    ];
    let (code, out, stderr) = lgcodec(&out_short);
    assert_eq!(code, 1, "{stderr}");
    let report: serde_json::Value = serde_json::from_str(&out).expect("the report");
    assert_eq!(
        report["excluded_partly_copied"],
        serde_json::json!([{"thread": "t-main", "in_target": in_target, "in_source": in_source}]),
        "{out}"
    );
    assert!(
        stderr.contains(&format!(
            "thread t-main was left out, but {t} holds {in_target} of the source's \
             {in_source} checkpoint(s)"
        )),
        "{stderr}"
    );
    let suggested: Vec<&str> = stderr
        .split('`')
        .filter(|c| c.starts_with("lgcodec store prune"))
        .collect();
    let [prune] = suggested[..] else {
        panic!("one prune to paste: {stderr}")
    };
    let words: Vec<&str> = prune.split_whitespace().skip(1).collect();
    let (code, _, stderr) = lgcodec(&words);
    assert_eq!(code, 0, "{prune}: {stderr}");
    assert_eq!(of(&sqlite_keys(&target), "t-main"), 0, "{prune}");
    let (code, out, stderr) = lgcodec(&out_short);
    assert_eq!(code, 0, "{stderr}");
    let report: serde_json::Value = serde_json::from_str(&out).expect("the report");
    assert_eq!(report["excluded_partly_copied"], serde_json::json!([]));

    conn.execute(&set, rusqlite::params![kind, stored])
        .expect("mend");
    let (code, out, stderr) = lgcodec(&["store", "copy", s, t, "--json"]);
    assert_eq!(code, 0, "{stderr}");
    let report: serde_json::Value = serde_json::from_str(&out).expect("the report");
    assert_eq!(report["already_there"], keys.len() - in_source, "{out}");
    assert_eq!(sqlite_keys(&target), keys);
    let _ = std::fs::remove_dir_all(&dir);
}

/// A fatal error under `--json` is one object on standard output too (`operation`,
/// `error`, and the error's `kind` where the library raised it), the message on
/// standard error as always; without `--json`, standard output stays empty.
#[test]
fn a_fatal_error_under_json_is_one_object_on_stdout() {
    let dir = scratch("json-errors");
    let store = python_store_in(&dir, "s.sqlite");
    let s = store.to_str().expect("utf-8");
    let missing = dir.join("missing.db");
    let m = missing.to_str().expect("utf-8");
    // Port 1: nothing listens there, so the connection is refused at once.
    let refused = "postgresql://nobody@127.0.0.1:1/x?sslmode=disable";
    let cases: [(&[&str], &str, Option<&str>); 5] = [
        (
            &["store", "stats", refused],
            "stats",
            Some("connection_unavailable"),
        ),
        (
            &["store", "prune", s, "--before", "2024-02-30"],
            "prune",
            Some("invalid_date"),
        ),
        (
            &["store", "prune", s, "--idle-since", "2062-01-01"],
            "prune",
            Some("would_delete_all"),
        ),
        (
            &["store", "export", m, "-"],
            "export",
            Some("store_not_found"),
        ),
        (
            &[
                "store",
                "prune",
                s,
                "--keep-latest",
                "1",
                "--metadata",
                "x=",
            ],
            "prune",
            None,
        ),
    ];
    for (args, operation, kind) in cases {
        let (code, out, err) = lgcodec(args);
        assert_eq!(code, 2, "{args:?}: {err}");
        assert!(out.is_empty(), "{args:?} without --json: {out}");
        let message = err.trim().strip_prefix("lgcodec: ").expect("lgcodec: …");
        let with_json = [args, &["--json"]].concat();
        let (code, out, err) = lgcodec(&with_json);
        assert_eq!(code, 2, "{with_json:?}: {err}");
        let lines: Vec<&str> = out.lines().collect();
        assert_eq!(lines.len(), 1, "{with_json:?}: {out}");
        let object: serde_json::Value = serde_json::from_str(lines[0]).expect("JSON");
        assert_eq!(object["operation"], operation, "{object}");
        assert_eq!(object["error"], message, "{object}");
        assert_eq!(object["kind"].as_str(), kind, "{object}");
        assert!(err.contains(message), "{err}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// A Postgres store reached with a password (in the URL's user part and as its
/// `password=` parameter; the test server takes any) has it shown by no command, in
/// text or JSON: each prints the URL with `***`. `inspect`'s listing printed the URL
/// as given ("203 thread(s) in postgresql://app:s3cret@db/app (…)").
#[tokio::test]
async fn no_command_shows_a_postgres_password() {
    let Some(url) = crate::support::pg::url() else {
        return;
    };
    let db = crate::support::pg::restored(&url, "postgres-py-3.2.0", "password").await;
    let (scheme, rest) = db.split_once("://").expect("a URL");
    let rest = match rest.split_once('@') {
        Some((user, host)) if !user.contains(':') => format!("{user}:s3cret@{host}"),
        _ => rest.to_owned(),
    };
    let sep = if rest.contains('?') { '&' } else { '?' };
    let with = format!("{scheme}://{rest}{sep}password=p4ss");
    // Nor does a handle's `Debug`, which a service logging it would show.
    let shown = [
        format!(
            "{:?}",
            langgraph_codec::store::Location::parse(&with).expect("a URL")
        ),
        format!(
            "{:?}",
            langgraph_codec::store::Store::open(&with)
                .await
                .expect("open")
        ),
        format!(
            "{:?}",
            langgraph_codec::store::AnyStore::open(&with)
                .await
                .expect("open")
        ),
    ];
    for debug in &shown {
        assert!(
            !debug.contains("s3cret") && !debug.contains("p4ss") && debug.contains("***"),
            "{debug}"
        );
    }
    let dir = scratch("pg-password");
    let path = |name: &str| dir.join(name).to_str().expect("utf-8").to_owned();
    let (backup, copied, policy) = (path("b.jsonl"), path("copy.db"), path("policy.toml"));
    std::fs::write(&policy, "[rules]\nkeep_latest = 2\n").expect("policy");
    let key = [("LANGGRAPH_AES_KEY", "0123456789abcdef")];
    let keys = [
        ("LANGGRAPH_AES_KEY", "fedcba9876543210"),
        ("LANGGRAPH_AES_KEY_PREVIOUS", "0123456789abcdef"),
    ];
    let (backup, copied, policy) = (backup.as_str(), copied.as_str(), policy.as_str());
    type Env<'a> = &'a [(&'a str, &'a str)];
    let none: Env = &[];
    // The writing ones last, on the same store: encrypt, then rotate its key.
    let runs: [(&[&str], Env); 16] = [
        (&["store", "stats", &with], none),
        (&["store", "stats", &with, "--json"], none),
        (&["store", "inspect", &with], none),
        (&["store", "inspect", &with, "--json"], none),
        (&["store", "audit", &with], none),
        (&["store", "audit", &with, "--json"], none),
        (
            &["store", "prune", &with, "--keep-latest", "1", "--dry-run"],
            none,
        ),
        (
            &[
                "store",
                "prune",
                &with,
                "--keep-latest",
                "1",
                "--dry-run",
                "--json",
            ],
            none,
        ),
        (&["store", "upgrade", &with, "--dry-run"], none),
        (&["store", "export", &with, backup], none),
        (&["store", "export", &with, backup, "--json"], none),
        (&["store", "copy", &with, copied, "--json"], none),
        (&["store", "import", backup, &with, "--json"], none),
        (
            &[
                "store",
                "retain",
                &with,
                "--policy",
                policy,
                "--once",
                "--dry-run",
            ],
            none,
        ),
        (&["store", "encrypt", &with, "--json"], &key),
        (&["store", "rekey", &with], &keys),
    ];
    for (args, env) in runs {
        let (code, out, err) = crate::lgcodec(args, env);
        assert!(code == 0 || code == 1, "{args:?}: exit {code}: {err}");
        assert!(
            !format!("{out}{err}").contains("s3cret") && !format!("{out}{err}").contains("p4ss"),
            "{args:?}:\n{out}\n{err}"
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}
