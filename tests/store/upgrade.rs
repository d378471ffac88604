//! Stores of old releases (`vectors/stores/`, written by the real old packages): read
//! and copied out of old Postgres layouts without a write, upgraded in place only when
//! asked, and read by today's Python savers afterwards. The expected reads are
//! Python's own (`vectors/store_maint/python_reads_equal.py`), never this crate's.
//!
//! Postgres tests read `LGCODEC_TEST_PG_URL` and print a skip line without it; the
//! Python reads use `LGCODEC_PYTHON` (or a venv found on the machine; skipped with a
//! printed reason without one).

use std::fs;

use std::path::Path;

use langgraph_codec::store::{
    copy, export, import, upgrade, AnyStore, CopyOptions, ExportOptions, ImportOptions,
    StatsOptions, StoreKeys, UpgradeOptions, SQLITE_TASK_PATH_MIGRATION,
};

use crate::support::{self, pg, scratch, stores};

/// How many `messages` the writing release's own saver read back at checkpoint `id`
/// of `t-main` (`reads.json`, recorded by the old package).
fn recorded_messages(fixture: &str, id: &str) -> usize {
    let text = fs::read_to_string(stores().join(fixture).join("reads.json")).expect("reads.json");
    let reads: serde_json::Value = serde_json::from_str(&text).expect("json");
    let tuples = reads["threads"]["t-main"]["get_tuple"]
        .as_array()
        .expect("get_tuple");
    for t in tuples {
        let t = t.get("$CheckpointTuple").unwrap_or(t);
        if t["checkpoint"]["id"] == id {
            return t["checkpoint"]["channel_values"]["messages"]
                .as_array()
                .map_or(0, Vec::len);
        }
    }
    panic!("{fixture}: no recorded read of {id}")
}

const OLD_POSTGRES: [&str; 11] = [
    "postgres-py-1.0.0",
    "postgres-py-1.0.1-json",
    "postgres-py-2.0.0",
    "postgres-py-2.0.8",
    "postgres-py-2.0.10",
    "postgres-py-2.0.12",
    "postgres-py-2.0.21",
    "postgres-js-1.0.5",
    "postgres-js-0.1.3",
    "postgres-py-shallow-2.0.21",
    "postgres-py-shallow-3.2.0",
];

/// Python's `ShallowPostgresSaver` stores: no `setup()` makes them readable by today's
/// `PostgresSaver`, so copies of them are compared with what the shallow saver itself
/// reads from them (`python_reads_equal.py --shallow`).
fn shallow(fixture: &str) -> bool {
    fixture.starts_with("postgres-py-shallow-")
}

fn short(fixture: &str) -> String {
    fixture
        .trim_start_matches("postgres-")
        .replace(['-', '.'], "_")
}

/// The differences `python_reads_equal.py --ignore=/when` set aside on a json-era
/// store's copies: today's Python reads its `when` datetimes as `None` after `setup()`,
/// and each copy reads as a datetime the writing release's saver read (`reads.json`).
fn json_era_datetimes_as_the_writer_read_them(fixture: &str, out: &str) {
    let text = fs::read_to_string(stores().join(fixture).join("reads.json")).expect("reads.json");
    let mut recorded = Vec::new();
    for (i, _) in text.match_indices("\"$datetime\": \"") {
        let rest = &text[i + 14..];
        recorded.push(rest[..rest.find('"').expect("end")].to_owned());
    }
    let report: serde_json::Value = serde_json::from_str(out.trim()).expect("json line");
    let ignored = report["ignored"].as_array().expect("ignored");
    assert!(
        !ignored.is_empty(),
        "{fixture}: no json-era datetime set aside"
    );
    for d in ignored {
        let got = d[2]["$datetime"].as_str().unwrap_or_default();
        assert!(
            d[1].is_null() && recorded.iter().any(|r| r == got),
            "{fixture}: {d}"
        );
    }
}

#[tokio::test]
async fn old_postgres_stores_copy_into_fresh_stores_that_python_reads_as_after_its_setup() {
    let Some(url) = pg::url() else { return };
    let python = support::python();
    let dir = scratch("oldcopy");
    for fixture in OLD_POSTGRES {
        let tag = short(fixture);
        let source = pg::restored(&url, fixture, "upc_src").await;
        let before = pg::digest(&source).await;
        let sqlite_target = dir.join(format!("{tag}.sqlite"));
        let sqlite_target = sqlite_target.to_str().expect("utf-8").to_owned();
        let pg_target = pg::fresh(&url, &format!("upc_tgt_{tag}")).await;
        for target in [&sqlite_target, &pg_target] {
            let report = copy(
                &source,
                target,
                &StoreKeys::none(),
                &CopyOptions::new().page_size(3),
            )
            .await
            .unwrap_or_else(|e| panic!("{fixture} -> {target}: {e}"));
            assert!(report.checkpoints > 0, "{fixture}");
            assert_eq!(
                (report.copied, report.verified),
                (report.checkpoints, report.checkpoints),
                "{fixture} -> {target}: {:?}",
                report.mismatches
            );
            assert!(report.created_tables, "{fixture}");
        }
        // And a backup of it (export), restored into a fresh Postgres (import).
        let backup = dir.join(format!("{tag}.jsonl"));
        {
            let store = AnyStore::open(&source).await.expect("open");
            let mut file = std::io::BufWriter::new(fs::File::create(&backup).expect("create"));
            export(&store, &mut file, &ExportOptions::new())
                .await
                .unwrap_or_else(|e| panic!("{fixture}: export: {e}"));
        }
        let imported = pg::fresh(&url, &format!("upc_imp_{tag}")).await;
        let mut input = std::io::BufReader::new(fs::File::open(&backup).expect("open"));
        let report = import(&mut input, "backup", &imported, &ImportOptions::new())
            .await
            .unwrap_or_else(|e| panic!("{fixture}: import: {e}"));
        assert!(
            report.complete && report.conflicts == 0,
            "{fixture}: {report:?}"
        );
        assert_eq!(
            pg::digest(&source).await,
            before,
            "{fixture}: the copy or export changed its source"
        );
        // What Python reads from its own migration of a separate copy (a shallow store:
        // what the shallow saver reads from the source, which is as it was).
        if let Some(py) = &python {
            let targets = [
                sqlite_target.as_str(),
                pg_target.as_str(),
                imported.as_str(),
            ];
            let out = if shallow(fixture) {
                let mut args = vec!["--shallow", source.as_str()];
                args.extend(targets);
                support::python_script(py, "python_reads_equal.py", &args)
            } else if fixture.ends_with("-json") {
                // json-era datetimes: today's Python reads them as `None` after its
                // setup(); the copies hold the datetime the writing release read.
                let reference = pg::restored(&url, fixture, "upc_ref").await;
                let mut args = vec!["--setup", "--ignore=/when", reference.as_str()];
                args.extend(targets);
                let out = support::python_script(py, "python_reads_equal.py", &args);
                json_era_datetimes_as_the_writer_read_them(fixture, &out);
                out
            } else {
                let reference = pg::restored(&url, fixture, "upc_ref").await;
                support::python_reads_equal(py, true, &reference, &targets)
            };
            println!("{fixture}: {}", out.trim());
        }
    }
    let _ = fs::remove_dir_all(&dir);
}

/// Every SQLite store an older release wrote copies into a fresh Postgres database with
/// every checkpoint verified (exit 0). What legitimately differs between the backends
/// is not a mismatch: metadata whose `lc` envelopes the SQLite text revives (Python
/// reads metadata as plain JSON on both), and an empty value of a channel without a
/// version (LangGraph 0.1's `messages: []`, LangGraphJS's `__pregel_tasks: []`), which
/// Postgres's layout stores only under a version.
#[tokio::test]
async fn old_sqlite_stores_copy_into_postgres_with_every_checkpoint_verified() {
    let Some(url) = pg::url() else { return };
    let dir = scratch("oldsqlite-pg");
    for fixture in [
        "sqlite-lg-0.1.19",
        "sqlite-py-1.0.0",
        "sqlite-py-1.0.3-json",
        "sqlite-py-2.0.2",
        "sqlite-py-3.1.2",
        "sqlite-py-sends-0.4.8",
        "sqlite-js-1.0.4",
        "sqlite-js-0.2.2",
    ] {
        let source = dir.join(format!("{}.sqlite", short(fixture)));
        fs::copy(stores().join(fixture).join("store.sqlite"), &source).expect("copy");
        let target = pg::fresh(&url, &format!("osp_{}", short(fixture))).await;
        let report = copy(
            source.to_str().expect("utf-8"),
            &target,
            &StoreKeys::none(),
            &CopyOptions::new(),
        )
        .await
        .unwrap_or_else(|e| panic!("{fixture}: {e}"));
        assert!(report.checkpoints > 0, "{fixture}");
        assert_eq!(
            (report.copied, report.verified),
            (report.checkpoints, report.checkpoints),
            "{fixture}: {:?}",
            report.mismatches
        );
    }
    let _ = fs::remove_dir_all(&dir);
}

#[tokio::test]
async fn old_postgres_stores_show_state_and_diff_without_a_write() {
    let Some(url) = pg::url() else { return };
    for fixture in OLD_POSTGRES {
        let source = pg::restored(&url, fixture, "upi_src").await;
        let before = pg::digest(&source).await;
        let store = AnyStore::open(&source).await.expect(fixture);
        let none = StoreKeys::none();
        let history = store.history("t-main").await.expect("history");
        let root: Vec<_> = history
            .nodes
            .iter()
            .filter(|n| n.checkpoint_ns.is_empty())
            .collect();
        let (first, last) = (root.first().expect("first"), root.last().expect("last"));
        let state = store
            .state(&none, "t-main", &last.checkpoint_id)
            .await
            .unwrap_or_else(|e| panic!("{fixture}: {e}"))
            .expect("present");
        let messages = state["checkpoint"]["channel_values"]["messages"]
            .as_array()
            .unwrap_or_else(|| panic!("{fixture}: {state}"));
        assert_eq!(
            messages.len(),
            recorded_messages(fixture, &last.checkpoint_id),
            "{fixture}: as many messages as the writing saver read back (reads.json)"
        );
        let d = store
            .diff(&none, "t-main", &first.checkpoint_id, &last.checkpoint_id)
            .await
            .unwrap_or_else(|e| panic!("{fixture}: {e}"));
        if shallow(fixture) {
            // One checkpoint per thread and namespace: the first is the last.
            assert_eq!(root.len(), 1, "{fixture}");
            assert!(
                d.changed.is_empty() && d.added.is_empty(),
                "{fixture}: {d:?}"
            );
        } else {
            assert!(
                d.added.iter().any(|c| c == "messages")
                    || d.changed.iter().any(|c| c == "messages"),
                "{fixture}: {d:?}"
            );
        }
        drop(store);
        assert_eq!(pg::digest(&source).await, before, "{fixture}: rows changed");
    }
}

fn sqlite_writes_sql(path: &Path) -> String {
    let conn =
        rusqlite::Connection::open_with_flags(path, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY)
            .expect("open");
    conn.query_row(
        "SELECT sql FROM sqlite_master WHERE type = 'table' AND name = 'writes'",
        [],
        |r| r.get(0),
    )
    .expect("writes table")
}

fn bytes_and_files(dir: &Path, file: &Path) -> (Vec<u8>, Vec<String>) {
    let mut names: Vec<String> = fs::read_dir(dir)
        .expect("dir")
        .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    (fs::read(file).expect("read"), names)
}

/// `sqlite-py-1.0.3-json` (langgraph-checkpoint 1.0.9: every row `json` typed, as
/// LangGraphJS's) is Python's too, and upgrades the same way. After the upgrade today's
/// Python resumes the interrupted thread (`graph`: the fixture's generate.py flags).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sqlite_before_task_path_upgrades_as_pythons_setup_does_and_only_when_asked() {
    let python = support::python();
    for (fixture, graph) in [
        ("sqlite-py-1.0.0", ["0", "0"]),
        ("sqlite-py-2.0.2", ["1", "0"]),
        ("sqlite-py-1.0.3-json", ["0", "0"]),
    ] {
        let dir = scratch(&format!("upsq-{fixture}"));
        let store = dir.join("store.sqlite");
        let reference = dir.join("reference.sqlite");
        for p in [&store, &reference] {
            fs::copy(stores().join(fixture).join("store.sqlite"), p).expect("copy");
        }
        let location = format!("sqlite:{}", store.display());
        // Opening, inspecting and a dry run write nothing.
        let before = bytes_and_files(&dir, &store);
        let opened = AnyStore::open(&location).await.expect("open");
        let _ = opened
            .stats(&StoreKeys::none(), &StatsOptions::new())
            .await
            .expect("stats");
        let dry = opened
            .upgrade(&UpgradeOptions::new().dry_run(true))
            .await
            .expect("dry run");
        drop(opened);
        assert_eq!(
            bytes_and_files(&dir, &store),
            before,
            "{fixture}: dry run wrote"
        );
        assert_eq!(dry.steps.len(), 1, "{fixture}: {dry:?}");
        assert_eq!(dry.steps[0].sql, SQLITE_TASK_PATH_MIGRATION);
        assert!(!dry.steps[0].ran);
        // Two upgrades at once: both succeed, the column is added once.
        let (a, b) = {
            let (x, y) = (location.clone(), location.clone());
            let a = tokio::spawn(async move { upgrade(&x, &UpgradeOptions::new()).await });
            let b = tokio::spawn(async move { upgrade(&y, &UpgradeOptions::new()).await });
            (a.await.expect("join"), b.await.expect("join"))
        };
        let (a, b) = (a.expect("upgrade a"), b.expect("upgrade b"));
        assert!(a.current && b.current, "{a:?} {b:?}");
        let ran = [&a, &b]
            .iter()
            .filter(|r| r.steps.iter().any(|s| s.ran))
            .count();
        assert_eq!(ran, 1, "exactly one of them altered the table: {a:?} {b:?}");
        let again = upgrade(&location, &UpgradeOptions::new())
            .await
            .expect("again");
        assert!(again.steps.is_empty() && again.current, "{again:?}");
        let ours = sqlite_writes_sql(&store);
        if let Some(py) = &python {
            // Python's SqliteSaver runs its setup() on the reference as it reads it.
            let out = support::python_reads_equal(
                py,
                false,
                reference.to_str().expect("utf-8"),
                &[store.to_str().expect("utf-8")],
            );
            println!("{fixture}: {}", out.trim());
            assert_eq!(
                ours,
                sqlite_writes_sql(&reference),
                "{fixture}: the writes table as Python's setup() leaves it"
            );
            let out = resume(py, store.to_str().expect("utf-8"), graph);
            assert!(
                out.status.success(),
                "{fixture}: Python did not resume the upgraded store: {}",
                String::from_utf8_lossy(&out.stderr)
            );
            println!("{fixture}: {}", String::from_utf8_lossy(&out.stdout).trim());
        }
        let _ = fs::remove_dir_all(&dir);
    }
}

#[tokio::test]
async fn layouts_that_cannot_be_upgraded_in_place_are_refused_untouched() {
    for fixture in ["sqlite-lg-0.1.19", "sqlite-js-1.0.4", "sqlite-js-0.2.2"] {
        let dir = scratch(&format!("upno-{fixture}"));
        let store = dir.join("store.sqlite");
        fs::copy(stores().join(fixture).join("store.sqlite"), &store).expect("copy");
        let before = bytes_and_files(&dir, &store);
        for dry_run in [true, false] {
            let err = upgrade(
                store.to_str().expect("utf-8"),
                &UpgradeOptions::new().dry_run(dry_run),
            )
            .await
            .expect_err(fixture);
            assert!(
                err.kind() == langgraph_codec::ErrorKind::CannotUpgrade
                    && err.to_string().contains("store copy"),
                "{fixture}: {err}"
            );
        }
        assert_eq!(bytes_and_files(&dir, &store), before, "{fixture}");
        let _ = fs::remove_dir_all(&dir);
    }
    let Some(url) = pg::url() else { return };
    for fixture in [
        "postgres-js-1.0.5",
        "postgres-js-0.1.3",
        "postgres-py-shallow-2.0.21",
        "postgres-py-shallow-3.2.0",
    ] {
        let db = pg::restored(&url, fixture, "upno").await;
        let before = pg::digest(&db).await;
        let err = upgrade(&db, &UpgradeOptions::new())
            .await
            .expect_err(fixture);
        assert!(
            err.kind() == langgraph_codec::ErrorKind::CannotUpgrade,
            "{fixture}: {err}"
        );
        assert_eq!(pg::digest(&db).await, before, "{fixture}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_upgrade_runs_pythons_missing_migrations_and_python_reads_without_setup() {
    let Some(url) = pg::url() else { return };
    let python = support::python();
    // Python 3.2.0's MIGRATIONS has 10 entries (v = 0..=9); each fixture's README says
    // how far its release got.
    // `graph`: the interrupt_fn / plain flags its generate.py ran the graph with.
    // `has_task_path`: today's Python already reads and resumes it as it is.
    for (fixture, missing, graph, has_task_path) in [
        ("postgres-py-1.0.0", 10, ["0", "1"], false),
        ("postgres-py-2.0.0", 5, ["0", "0"], false),
        // `json` rows as LangGraphJS's, at JS's migrations 0..=4: still Python's.
        ("postgres-py-1.0.7-json", 5, ["0", "0"], false),
        ("postgres-py-2.0.8", 1, ["1", "0"], false),
        // 0..=3: blob NOT NULL, no indexes (`json` rows, langgraph-checkpoint 1.0.9).
        ("postgres-py-1.0.1-json", 6, ["0", "0"], false),
        // 0..=7 numbered without the no-op 5: the three indexes are there already;
        // today's 8 (`IF NOT EXISTS`) adds nothing, 9 adds task_path.
        ("postgres-py-2.0.10", 2, ["1", "0"], false),
        ("postgres-py-2.0.21", 0, ["1", "0"], true),
        // Its v = 8 is task_path: today's 9 adds nothing and records 9.
        ("postgres-py-2.0.12", 1, ["1", "0"], true),
        ("postgres-py-3.2.0", 0, ["1", "0"], true),
    ] {
        let db = pg::restored(&url, fixture, "uppg").await;
        let before = pg::digest(&db).await;
        let dry = upgrade(&db, &UpgradeOptions::new().dry_run(true))
            .await
            .expect("dry run");
        assert_eq!(
            pg::digest(&db).await,
            before,
            "{fixture}: the dry run wrote"
        );
        assert_eq!(dry.steps.len(), missing, "{fixture}: {dry:?}");
        if missing > 0 {
            assert_eq!(
                dry.steps.last().map(|s| s.name.as_str()),
                Some("migration 9")
            );
        }
        // Two upgrades at once, and (with Python) Python's own setup() on the same
        // database at the same time: ours both succeed, nothing runs twice.
        let py_setup = python.as_ref().filter(|_| missing > 0).map(|py| {
            std::process::Command::new(py)
                .args([
                    "-c",
                    "import sys, psycopg\nfrom langgraph.checkpoint.postgres import PostgresSaver\n\
                     with psycopg.connect(sys.argv[1], autocommit=True) as c:\n    PostgresSaver(c).setup()",
                    &db,
                ])
                .stdout(std::process::Stdio::null())
                .stderr(std::process::Stdio::piped())
                .spawn()
                .expect("python setup")
        });
        let (a, b) = {
            let (x, y) = (db.clone(), db.clone());
            let a = tokio::spawn(async move { upgrade(&x, &UpgradeOptions::new()).await });
            let b = tokio::spawn(async move { upgrade(&y, &UpgradeOptions::new()).await });
            (a.await.expect("join"), b.await.expect("join"))
        };
        let (a, b) = (
            a.unwrap_or_else(|e| panic!("{fixture}: {e}")),
            b.unwrap_or_else(|e| panic!("{fixture}: {e}")),
        );
        if let Some(child) = py_setup {
            let out = child.wait_with_output().expect("python setup");
            // Python's setup() takes no lock: it may lose the race for a version our
            // upgrade recorded first (its own two-replica race); ours must not fail.
            println!(
                "{fixture}: Python's concurrent setup() {}",
                if out.status.success() {
                    "succeeded".to_owned()
                } else {
                    format!(
                        "failed: {}",
                        String::from_utf8_lossy(&out.stderr)
                            .lines()
                            .last()
                            .unwrap_or("")
                    )
                }
            );
        }
        assert!(a.current && b.current, "{fixture}: {a:?} {b:?}");
        for step in 0..missing {
            let ran = [&a, &b]
                .iter()
                .filter(|r| r.steps.get(step).is_some_and(|s| s.ran))
                .count();
            assert!(ran <= 1, "{fixture}: step {step} ran twice");
        }
        if let Some(py) = &python {
            // Today's Python reads the upgraded store without setup() as it reads its
            // own setup()-migrated copy, and the two databases are the same, catalog
            // (columns, indexes, migrations) and rows.
            let reference = pg::restored(&url, fixture, "uppg_ref").await;
            let out = support::python_reads_equal(py, true, &reference, &[&db]);
            println!("{fixture}: {}", out.trim());
            assert_eq!(
                pg::digest(&db).await,
                pg::digest(&reference).await,
                "{fixture}: not what Python's setup() makes of it"
            );
            // And resumes the interrupted thread on it (no setup()), which fails on
            // the store as it was (`column cw.task_path does not exist`).
            if !has_task_path {
                let untouched = pg::restored(&url, fixture, "uppg_pre").await;
                let out = resume(py, &untouched, graph);
                assert!(
                    !out.status.success(),
                    "{fixture}: resumed before the upgrade?"
                );
            }
            let out = resume(py, &db, graph);
            assert!(
                out.status.success(),
                "{fixture}: Python did not resume the upgraded store: {}",
                String::from_utf8_lossy(&out.stderr)
            );
            println!("{fixture}: {}", String::from_utf8_lossy(&out.stdout).trim());
        }
    }
}

/// `vectors/store_maint/resume_upgraded.py`: today's Python resumes `t-short`.
fn resume(python: &str, store: &str, graph: [&str; 2]) -> std::process::Output {
    std::process::Command::new(python)
        .arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("vectors/store_maint/resume_upgraded.py"))
        .arg(store)
        .args(graph)
        .output()
        .expect("run python")
}

/// `vectors/store_maint/channel_sizes.py`: Python's per-channel `[rows, bytes]`.
fn python_channel_sizes(
    python: &str,
    store: &Path,
    key: Option<&str>,
) -> std::collections::BTreeMap<String, (u64, u64)> {
    let out = std::process::Command::new(python)
        .arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("vectors/store_maint/channel_sizes.py"))
        .arg(store)
        .args(key)
        .output()
        .expect("run python");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let sizes: std::collections::BTreeMap<String, [u64; 2]> =
        serde_json::from_slice(&out.stdout).expect("json");
    sizes
        .into_iter()
        .map(|(k, [rows, bytes])| (k, (rows, bytes)))
        .collect()
}

#[tokio::test]
async fn sqlite_stats_size_each_channel_value_as_pythons_serializer_encodes_it() {
    use langgraph_codec::crypto::AesKey;
    let python = support::python();
    let dir = scratch("sizes");
    let key = "0123456789abcdef";
    let keys = StoreKeys::new(AesKey::new(key.as_bytes()).expect("key"));
    let mut stores_here = Vec::new();
    for fixture in [
        "sqlite-py-3.1.2",
        "sqlite-py-2.0.2",
        "sqlite-js-1.0.4",
        "sqlite-lg-0.1.19",
    ] {
        let path = dir.join(format!("{fixture}.sqlite"));
        fs::copy(stores().join(fixture).join("store.sqlite"), &path).expect("copy");
        stores_here.push(path);
    }
    // The same checkpoints, encrypted (EAX, Python's default) by a copy.
    let encrypted = dir.join("encrypted.sqlite");
    let report = copy(
        stores_here[0].to_str().expect("utf-8"),
        encrypted.to_str().expect("utf-8"),
        &keys,
        &CopyOptions::new(),
    )
    .await
    .expect("copy");
    assert_eq!(report.copied, 12);
    let none = StoreKeys::none();
    for (path, store_keys, key) in [
        (&stores_here[0], &none, None),
        (&stores_here[1], &none, None),
        (&encrypted, &keys, Some(key)),
    ] {
        let stats = AnyStore::open(path.to_str().expect("utf-8"))
            .await
            .expect("open")
            .stats(store_keys, &StatsOptions::new())
            .await
            .expect("stats");
        assert_eq!(stats.unreadable_checkpoints, 0, "{}", path.display());
        let got: std::collections::BTreeMap<String, (u64, u64)> = stats
            .per_channel_values
            .iter()
            .map(|(k, s)| (k.clone(), (s.rows, s.bytes)))
            .collect();
        assert!(got.contains_key("messages"), "{got:?}");
        // per_channel adds the pending writes' stored bytes.
        for (channel, size) in &stats.per_channel_values {
            assert!(stats.per_channel[channel].bytes >= size.bytes);
        }
        if let Some(py) = &python {
            assert_eq!(
                got,
                python_channel_sizes(py, path, key),
                "{}: sizes as Python's serializer encodes each value",
                path.display()
            );
        }
    }
    // Without the key: every encrypted checkpoint is counted unreadable, no panic.
    let blind = AnyStore::open(encrypted.to_str().expect("utf-8"))
        .await
        .expect("open")
        .stats(&StoreKeys::none(), &StatsOptions::new())
        .await
        .expect("stats without a key");
    assert_eq!(blind.unreadable_checkpoints, 12);
    assert!(blind.per_channel_values.is_empty());
    // JSON rows (LangGraphJS, LangGraph 0.1) are measured too.
    for path in &stores_here[2..] {
        let stats = AnyStore::open(path.to_str().expect("utf-8"))
            .await
            .expect("open")
            .stats(&StoreKeys::none(), &StatsOptions::new())
            .await
            .expect("stats");
        assert_eq!(stats.unreadable_checkpoints, 0, "{}", path.display());
        assert!(
            stats.per_channel_values.contains_key("messages"),
            "{}",
            path.display()
        );
    }
    let _ = fs::remove_dir_all(&dir);
}
