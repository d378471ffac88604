//! `SqliteSaver` on real SQLite files: the conformance kit (plain and encrypted), the
//! schema Python makes, and Python's row formats read back from the file itself.
#![cfg(feature = "sqlite")]

use std::path::PathBuf;
use std::sync::Arc;

#[cfg(feature = "conformance")]
use langgraph_codec::crypto::{AesMode, EncryptedSerializer};
#[cfg(feature = "conformance")]
use langgraph_codec::saver::conformance;
use langgraph_codec::saver::sqlite::SqliteSaver;
use langgraph_codec::saver::{
    Checkpoint, CheckpointConfig, CheckpointMetadata, CheckpointSaver, ListOptions,
};
use langgraph_codec::{Error, Value};

/// A fresh directory under the target dir, removed on drop.
struct TempDir(tempfile::TempDir);

impl TempDir {
    fn new(tag: &str) -> Self {
        TempDir(
            tempfile::Builder::new()
                .prefix(&format!("lgcodec-sqlite-{tag}-"))
                .tempdir()
                .expect("temp dir"),
        )
    }
    fn file(&self, name: &str) -> PathBuf {
        self.0.path().join(name)
    }
}

#[cfg(feature = "conformance")]
fn key_serde(mode: AesMode) -> Arc<EncryptedSerializer> {
    Arc::new(
        EncryptedSerializer::from_aes_key(b"0123456789abcdef0123456789abcdef", mode)
            .expect("32-byte key"),
    )
}

#[cfg(feature = "conformance")]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn conformance_full_on_a_real_file() {
    let dir = TempDir::new("conf");
    let mut n = 0;
    let report = conformance::run_conformance_named("SqliteSaver", || {
        n += 1;
        let path = dir.file(&format!("plain-{n}.sqlite"));
        async move { SqliteSaver::create(path).expect("create") }
    })
    .await;
    println!("{report}");
    assert!(report.is_success(), "{report}");
    assert_eq!(report.conformance_level(), "FULL");
    assert_eq!(report.passed(), 98);
}

#[cfg(feature = "conformance")]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn conformance_full_encrypted_both_modes() {
    let dir = TempDir::new("conf-aes");
    for mode in [AesMode::Eax, AesMode::Gcm] {
        let mut n = 0;
        let report = conformance::run_conformance_named("SqliteSaver+aes", || {
            n += 1;
            let path = dir.file(&format!("{mode:?}-{n}.sqlite"));
            async move {
                SqliteSaver::builder(path)
                    .create(true)
                    .serializer(key_serde(mode))
                    .open()
                    .expect("open")
            }
        })
        .await;
        assert!(report.is_success(), "{report}");
        assert_eq!(report.conformance_level(), "FULL");
        assert_eq!(report.passed(), 98);
    }
}

#[cfg(feature = "conformance")]
#[tokio::test]
async fn conformance_on_an_in_memory_database() {
    let report =
        conformance::run_conformance(|| async { SqliteSaver::open_in_memory().expect("open") })
            .await;
    assert!(report.is_success(), "{report}");
    assert_eq!(report.passed(), 98);
}

/// The tables' statements as `sqlite_master` keeps them, and the journal mode.
fn schema_of(path: &std::path::Path) -> (Vec<(String, String)>, String) {
    let conn = rusqlite::Connection::open(path).expect("open");
    let mut stmt = conn
        .prepare("SELECT name, sql FROM sqlite_master ORDER BY name")
        .expect("prepare");
    let rows = stmt
        .query_map([], |r| {
            Ok((
                r.get(0)?,
                r.get::<_, Option<String>>(1)?.unwrap_or_default(),
            ))
        })
        .expect("query")
        .collect::<Result<Vec<_>, _>>()
        .expect("rows");
    let mode: String = conn
        .query_row("PRAGMA journal_mode", [], |r| r.get(0))
        .expect("journal_mode");
    (rows, mode)
}

#[tokio::test]
async fn setup_makes_pythons_tables_and_is_idempotent() {
    let dir = TempDir::new("setup");
    let path = dir.file("a.sqlite");
    let saver = SqliteSaver::create(&path).expect("create");
    let (first, mode) = schema_of(&path);
    assert_eq!(mode, "wal");
    let names: Vec<&str> = first.iter().map(|(n, _)| n.as_str()).collect();
    // The two tables and their primary-key indexes, nothing else.
    assert_eq!(
        names,
        [
            "checkpoints",
            "sqlite_autoindex_checkpoints_1",
            "sqlite_autoindex_writes_1",
            "writes"
        ]
    );
    // The statement text is Python's (whitespace included), so the file is the same
    // whoever set it up: these lines are copied from langgraph-checkpoint-sqlite 3.1.2.
    assert!(first[0]
        .1
        .contains("\n                parent_checkpoint_id TEXT,\n"));
    assert!(first[3]
        .1
        .contains("\n                task_path TEXT NOT NULL DEFAULT '',\n"));
    saver.setup().await.expect("second setup");
    SqliteSaver::open(&path).expect("reopen");
    SqliteSaver::create(&path).expect("create again");
    assert_eq!(schema_of(&path).0, first);
}

#[tokio::test]
async fn a_foreign_layout_is_refused_with_a_schema_error() {
    let dir = TempDir::new("foreign");
    for (name, ddl) in [
        (
            "missing-column",
            "CREATE TABLE checkpoints (thread_id TEXT NOT NULL, checkpoint_ns TEXT NOT NULL DEFAULT '', checkpoint_id TEXT NOT NULL, type TEXT, checkpoint BLOB, metadata BLOB, PRIMARY KEY (thread_id, checkpoint_ns, checkpoint_id))",
        ),
        (
            "shallow-like",
            "CREATE TABLE checkpoints (thread_id TEXT NOT NULL, checkpoint_ns TEXT NOT NULL DEFAULT '', type TEXT, checkpoint BLOB, metadata BLOB, PRIMARY KEY (thread_id, checkpoint_ns))",
        ),
        (
            "extra-column",
            "CREATE TABLE writes (thread_id TEXT NOT NULL, checkpoint_ns TEXT NOT NULL DEFAULT '', checkpoint_id TEXT NOT NULL, task_id TEXT NOT NULL, task_path TEXT NOT NULL DEFAULT '', idx INTEGER NOT NULL, channel TEXT NOT NULL, type TEXT, value BLOB, blob_ref TEXT, PRIMARY KEY (thread_id, checkpoint_ns, checkpoint_id, task_id, idx))",
        ),
    ] {
        let path = dir.file(&format!("{name}.sqlite"));
        rusqlite::Connection::open(&path)
            .expect("open")
            .execute_batch(ddl)
            .expect("ddl");
        match SqliteSaver::open(&path) {
            Err(e) if e.kind() == langgraph_codec::ErrorKind::Schema => {
                let reason = e.reason().expect("what differs");
                assert!(e.to_string().ends_with(reason), "{e}");
                println!("{name}: {reason}");
            }
            other => panic!("{name}: expected a schema error, got {other:?}"),
        }
    }
    // An open without create on a file with only half of Python's tables writes
    // nothing and says what is missing.
    let half = dir.file("half.sqlite");
    rusqlite::Connection::open(&half)
        .expect("open")
        .execute_batch(
            "CREATE TABLE checkpoints (
                thread_id TEXT NOT NULL,
                checkpoint_ns TEXT NOT NULL DEFAULT '',
                checkpoint_id TEXT NOT NULL,
                parent_checkpoint_id TEXT,
                type TEXT,
                checkpoint BLOB,
                metadata BLOB,
                PRIMARY KEY (thread_id, checkpoint_ns, checkpoint_id)
            )",
        )
        .expect("ddl");
    let err = SqliteSaver::open(&half).unwrap_err();
    assert!(
        err.to_string().contains("table writes does not exist"),
        "{err}"
    );
    assert_eq!(schema_of(&half).0.len(), 2, "nothing added");
}

#[tokio::test]
async fn a_file_from_before_task_path_is_migrated_as_python_does() {
    let dir = TempDir::new("old");
    let path = dir.file("old.sqlite");
    rusqlite::Connection::open(&path)
        .expect("open")
        .execute_batch(
            "CREATE TABLE writes (thread_id TEXT NOT NULL, checkpoint_ns TEXT NOT NULL DEFAULT '', checkpoint_id TEXT NOT NULL, task_id TEXT NOT NULL, idx INTEGER NOT NULL, channel TEXT NOT NULL, type TEXT, value BLOB, PRIMARY KEY (thread_id, checkpoint_ns, checkpoint_id, task_id, idx));
             INSERT INTO writes VALUES ('t', '', 'c1', 'task', 0, 'ch', 'null', x'');",
        )
        .expect("old layout");
    // Open alone writes nothing, so it refuses the old layout and says what completes it.
    let err = SqliteSaver::open(&path).unwrap_err();
    assert!(err.to_string().contains("task_path"), "{err}");
    assert!(err.to_string().contains("SqliteSaver::create"), "{err}");
    let saver = SqliteSaver::create(&path).expect("migrated");
    let cols: Vec<String> = {
        let conn = rusqlite::Connection::open(&path).expect("open");
        let mut stmt = conn.prepare("PRAGMA table_info(writes)").expect("pragma");
        stmt.query_map([], |r| r.get(1))
            .expect("query")
            .collect::<Result<_, _>>()
            .expect("cols")
    };
    assert_eq!(cols.last().map(String::as_str), Some("task_path"));
    // The old write is still there (no checkpoint row: get_tuple finds nothing, but the
    // file stays usable for new rows).
    let cfg = CheckpointConfig::new("t");
    let stored = saver
        .put(
            &cfg,
            &Checkpoint::new("c1", "2024-01-01T00:00:00+00:00"),
            &CheckpointMetadata::new("input", -1),
            &Default::default(),
        )
        .await
        .expect("put");
    let t = saver.get_tuple(&stored).await.expect("get").expect("found");
    assert_eq!(t.pending_writes.len(), 1);
    assert_eq!(t.pending_writes[0].value, Value::Nil);
}

#[tokio::test]
async fn metadata_is_stored_as_pythons_json_dumps_text() {
    let dir = TempDir::new("md");
    let path = dir.file("md.sqlite");
    let saver = SqliteSaver::create(&path).expect("create");
    let md = CheckpointMetadata::new("loop", 3)
        .with("score", 0.5)
        .with("big", 1e16)
        .with("nan", f64::NAN)
        .with("name", "café \"x\"\n")
        .with(
            "nested",
            Value::Map(vec![(
                Value::from("k"),
                Value::Array(vec![Value::from(1i64), Value::Nil, Value::Bool(true)]),
            )]),
        );
    let cfg = CheckpointConfig::new("t")
        .with_ns("")
        .with_metadata("user", "ü");
    saver
        .put(
            &cfg,
            &Checkpoint::new("c1", "2024-01-01T00:00:00+00:00"),
            &md,
            &Default::default(),
        )
        .await
        .expect("put");
    let stored: Vec<u8> = rusqlite::Connection::open(&path)
        .expect("open")
        .query_row("SELECT metadata FROM checkpoints", [], |r| r.get(0))
        .expect("row");
    // What CPython 3.11 prints for
    // json.dumps({"source": "loop", "step": 3, "parents": {}, "score": 0.5, "big": 1e16,
    //   "nan": float("nan"), "name": 'café "x"\n', "nested": {"k": [1, None, True]},
    //   "user": "ü"}, ensure_ascii=False).encode()
    let want = "{\"source\": \"loop\", \"step\": 3, \"parents\": {}, \"score\": 0.5, \"big\": 1e+16, \"nan\": NaN, \"name\": \"café \\\"x\\\"\\n\", \"nested\": {\"k\": [1, null, true]}, \"user\": \"ü\"}";
    assert_eq!(String::from_utf8(stored).expect("utf-8"), want);
    // Metadata Python cannot write as JSON is refused, not stored half-way.
    let bad =
        CheckpointMetadata::new("loop", 4).with("raw", Value::Bin(bytes::Bytes::from_static(b"x")));
    let err = saver
        .put(
            &cfg,
            &Checkpoint::new("c2", "2024-01-01T00:00:01+00:00"),
            &bad,
            &Default::default(),
        )
        .await
        .unwrap_err();
    assert_eq!(
        err.kind(),
        langgraph_codec::ErrorKind::InvalidMetadata,
        "{err}"
    );
    let n = saver
        .list(None, &ListOptions::new())
        .await
        .expect("list")
        .len();
    assert_eq!(n, 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn delta_history_stays_correct_past_1024_checkpoints() {
    let dir = TempDir::new("delta");
    let saver = SqliteSaver::builder(dir.file("delta.sqlite"))
        .create(true)
        .synchronous(langgraph_codec::saver::sqlite::Synchronous::Off)
        .open()
        .expect("open");
    const N: i64 = 1_100;
    let mut config = CheckpointConfig::new("long").with_ns("");
    for i in 0..N {
        let mut cp = Checkpoint::now(i);
        if i == 0 {
            // Only the root stores the channel: every later value is rebuilt from writes.
            cp.channel_values.insert(
                "log".into(),
                Value::DeltaSnapshot(Box::new(Value::Array(vec![Value::from("seed")]))),
            );
        }
        config = saver
            .put(
                &config,
                &cp,
                &CheckpointMetadata::new("loop", i),
                &Default::default(),
            )
            .await
            .expect("put");
        saver
            .put_writes(&config, &[("log".to_owned(), Value::from(i))], "task", "")
            .await
            .expect("put_writes");
    }
    let latest = CheckpointConfig::new("long").with_ns("");
    let history = saver
        .get_delta_channel_history(&latest, &["log".to_owned()])
        .await
        .expect("history");
    let log = &history["log"];
    // The target's own writes are not part of its history: ancestors 0..N-1, oldest first.
    let want: Vec<Value> = (0..N - 1).map(Value::from).collect();
    let got: Vec<Value> = log.writes.iter().map(|w| w.value.clone()).collect();
    assert_eq!(got.len(), want.len());
    assert_eq!(got, want);
    assert_eq!(
        log.seed,
        Some(Value::DeltaSnapshot(Box::new(Value::Array(vec![
            Value::from("seed")
        ]))))
    );
}

/// The `+zlib` budget covers a whole call, not each row (as on InMemorySaver).
#[tokio::test]
async fn the_decompression_budget_is_per_call() {
    use langgraph_codec::compression::CompressedSerializer;
    use langgraph_codec::ErrorKind;
    use langgraph_codec::JsonPlusSerializer;
    let dir = TempDir::new("budget");
    // Each checkpoint row inflates to ~100 KB; 250 KB allows two rows per call.
    let saver = SqliteSaver::builder(dir.file("b.sqlite"))
        .create(true)
        .serializer(Arc::new(CompressedSerializer::new(
            JsonPlusSerializer::new(),
        )))
        .max_decompressed_per_call(250_000)
        .open()
        .expect("open");
    let mut config = CheckpointConfig::new("t");
    for step in 0..5i64 {
        let mut cp = Checkpoint::now(step);
        cp.channel_values
            .insert("x".into(), Value::from(format!("{step}").repeat(100_000)));
        config = saver
            .put(
                &config,
                &cp,
                &CheckpointMetadata::new("loop", step),
                &Default::default(),
            )
            .await
            .expect("put");
    }
    let rows = saver.export_rows().await.expect("rows");
    assert!(rows
        .checkpoints
        .iter()
        .all(|r| r.checkpoint.type_tag == "msgpack+zlib"));
    assert!(rows
        .checkpoints
        .iter()
        .all(|r| r.checkpoint.data.len() < 10_000));
    // One row per call: fine, every time.
    for _ in 0..3 {
        saver.get_tuple(&config).await.expect("one row fits");
    }
    let two = saver
        .list(
            Some(&CheckpointConfig::new("t")),
            &ListOptions::new().limit(2),
        )
        .await
        .expect("two rows fit");
    assert_eq!(two.len(), 2);
    let err = saver
        .list(Some(&CheckpointConfig::new("t")), &ListOptions::new())
        .await
        .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::UnreadableRow, "{err}");
    let cause = err.cause().expect("why");
    assert_eq!(
        (cause.kind(), cause.limit()),
        (ErrorKind::DecompressionBudget, Some(250_000)),
        "{err}"
    );
    // The delta walk over the chain is one call too.
    let history = saver
        .get_delta_channel_history(&config, &["y".to_owned()])
        .await;
    assert!(history.is_err(), "walking 4 ancestors inflates ~400 KB");
}

/// `PRAGMA journal_mode` and the user tables of a file, read without changing it.
fn journal_and_tables(path: &std::path::Path) -> (String, Vec<String>) {
    let conn =
        rusqlite::Connection::open_with_flags(path, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY)
            .expect("open read-only");
    let mode: String = conn
        .query_row("PRAGMA journal_mode", [], |r| r.get(0))
        .expect("journal_mode");
    let mut stmt = conn
        .prepare("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")
        .expect("prepare");
    let tables = stmt
        .query_map([], |r| r.get(0))
        .expect("query")
        .collect::<Result<Vec<String>, _>>()
        .expect("tables");
    (mode, tables)
}

/// A mistyped path is an error that says so, and creates nothing.
#[tokio::test]
async fn open_on_a_missing_path_fails_and_creates_nothing() {
    let dir = TempDir::new("missing");
    let path = dir.file("typo.sqlite");
    let err = SqliteSaver::open(&path).unwrap_err();
    assert_eq!(
        err.kind(),
        langgraph_codec::ErrorKind::StoreNotFound,
        "{err}"
    );
    let text = err.to_string();
    assert!(text.contains("typo.sqlite"), "{text}");
    assert!(text.contains("does not exist"), "{text}");
    assert!(text.contains("SqliteSaver::create"), "{text}");
    assert!(!path.exists(), "open created {}", path.display());
    assert_eq!(std::fs::read_dir(dir.0.path()).expect("dir").count(), 0);
    // The builder without create(true) behaves the same.
    let err = SqliteSaver::builder(&path).open().unwrap_err();
    assert_eq!(err.kind(), langgraph_codec::ErrorKind::StoreNotFound);
    assert!(!path.exists());
    // Asking to create makes Python's store.
    SqliteSaver::create(&path).expect("create");
    assert_eq!(
        journal_and_tables(&path),
        (
            "wal".to_owned(),
            vec!["checkpoints".to_owned(), "writes".to_owned()]
        )
    );
}

/// A SQLite file of another application: refused by open and create alike, before a
/// table is added or the journal mode changes.
#[tokio::test]
async fn a_foreign_file_is_refused_before_anything_is_written() {
    let dir = TempDir::new("foreign-file");
    for (name, ddl) in [
        (
            "other-app",
            "CREATE TABLE users (id INTEGER PRIMARY KEY, name TEXT)",
        ),
        (
            "other-checkpoints",
            "CREATE TABLE checkpoints (id INTEGER PRIMARY KEY, payload BLOB)",
        ),
        ("empty-file", ""),
    ] {
        let path = dir.file(&format!("{name}.sqlite"));
        rusqlite::Connection::open(&path)
            .expect("open")
            .execute_batch(ddl)
            .expect("ddl");
        let before = journal_and_tables(&path);
        let bytes = std::fs::read(&path).expect("read");
        assert_eq!(before.0, "delete");
        type Opener = fn(&std::path::Path) -> Result<SqliteSaver, Error>;
        let openers: [(&str, Opener); 3] = [
            ("open", |p| SqliteSaver::open(p)),
            ("create", |p| SqliteSaver::create(p)),
            ("builder", |p| SqliteSaver::builder(p).create(true).open()),
        ];
        for (how, opener) in openers {
            if name == "empty-file" && how != "open" {
                continue; // an empty file is where create makes a new store
            }
            let result = opener(&path);
            let err = result.unwrap_err();
            println!("{name} {how}: {err}");
            let want = if name == "empty-file" {
                langgraph_codec::ErrorKind::StoreNotFound
            } else {
                langgraph_codec::ErrorKind::Schema
            };
            assert_eq!(err.kind(), want, "{name} {how}: {err}");
            assert_eq!(journal_and_tables(&path), before, "{name} {how}");
            assert!(
                std::fs::read(&path).expect("read") == bytes,
                "{name} {how}: the file changed"
            );
        }
    }
}

/// Opening a store Python made (here in rollback-journal mode, as a Python process that
/// never ran setup() itself, or a copy, leaves it) and reading it changes nothing: not a
/// byte, not the modification time, not the journal mode.
#[tokio::test]
async fn open_and_read_leave_a_python_store_as_it_is() {
    let dir = TempDir::new("untouched");
    let path = dir.file("py.sqlite");
    {
        let saver = SqliteSaver::create(&path).expect("create");
        saver
            .put(
                &CheckpointConfig::new("t"),
                &Checkpoint::new("c1", "2024-01-01T00:00:00+00:00"),
                &CheckpointMetadata::new("input", -1),
                &Default::default(),
            )
            .await
            .expect("put");
    }
    {
        let conn = rusqlite::Connection::open(&path).expect("open");
        let mode: String = conn
            .query_row("PRAGMA journal_mode=DELETE", [], |r| r.get(0))
            .expect("journal mode");
        assert_eq!(mode, "delete");
    }
    let bytes = std::fs::read(&path).expect("read");
    let mtime = std::fs::metadata(&path)
        .and_then(|m| m.modified())
        .expect("mtime");
    std::thread::sleep(std::time::Duration::from_millis(20));
    {
        let saver = SqliteSaver::open(&path).expect("open");
        let t = saver
            .get_tuple(&CheckpointConfig::new("t"))
            .await
            .expect("get")
            .expect("stored");
        assert_eq!(t.checkpoint.id, "c1");
        assert_eq!(
            saver
                .list(None, &ListOptions::new())
                .await
                .expect("list")
                .len(),
            1
        );
        saver.verify().await.expect("verify");
    }
    assert!(
        std::fs::read(&path).expect("read") == bytes,
        "open and read changed the file"
    );
    assert_eq!(
        std::fs::metadata(&path)
            .and_then(|m| m.modified())
            .expect("mtime"),
        mtime
    );
    assert_eq!(journal_and_tables(&path).0, "delete");
    let names: Vec<String> = std::fs::read_dir(dir.0.path())
        .expect("dir")
        .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(names, ["py.sqlite"], "no -wal or -shm file left behind");
}

/// One row whose thread id is not UTF-8 text (planted through the driver) does not stop
/// `delete_for_runs`: the matching rows go, the others (that one included) stay.
#[tokio::test]
async fn a_row_with_a_non_utf8_thread_id_does_not_block_delete_for_runs() {
    let dir = TempDir::new("bad-thread");
    let path = dir.file("d.sqlite");
    let saver = SqliteSaver::create(&path).expect("create");
    for (thread, run) in [("a", "r1"), ("b", "r2")] {
        saver
            .put(
                &CheckpointConfig::new(thread),
                &Checkpoint::new("c1", "2024-01-01T00:00:00+00:00"),
                &CheckpointMetadata::new("input", -1).with("run_id", run),
                &Default::default(),
            )
            .await
            .expect("put");
    }
    {
        let conn = rusqlite::Connection::open(&path).expect("open");
        conn.execute(
            "INSERT INTO checkpoints SELECT CAST(x'ff74' AS TEXT), checkpoint_ns, checkpoint_id, \
             parent_checkpoint_id, type, checkpoint, metadata FROM checkpoints WHERE thread_id = 'a'",
            [],
        )
        .expect("plant a text thread id that is not UTF-8");
        conn.execute(
            "INSERT INTO checkpoints SELECT x'fe', checkpoint_ns, checkpoint_id, \
             parent_checkpoint_id, type, checkpoint, metadata FROM checkpoints WHERE thread_id = 'b'",
            [],
        )
        .expect("plant a BLOB thread id");
    }
    saver
        .delete_for_runs(&["r1".to_owned()])
        .await
        .expect("delete_for_runs copes with the bad rows");
    assert!(saver
        .get_tuple(&CheckpointConfig::new("a"))
        .await
        .expect("get a")
        .is_none());
    assert!(saver
        .get_tuple(&CheckpointConfig::new("b"))
        .await
        .expect("get b")
        .is_some());
    let left: i64 = rusqlite::Connection::open(&path)
        .expect("open")
        .query_row("SELECT count(*) FROM checkpoints", [], |r| r.get(0))
        .expect("count");
    assert_eq!(left, 3, "b and both planted rows stay");
}

/// The driver is re-exported, so code that opens the file itself uses the same
/// `rusqlite` (and the same bundled SQLite) as the saver, with no second `sqlite3` link.
#[test]
fn the_driver_is_re_exported() {
    use langgraph_codec::saver::sqlite::rusqlite;
    let conn = rusqlite::Connection::open_in_memory().expect("open");
    let one: i64 = conn.query_row("SELECT 1", [], |r| r.get(0)).expect("query");
    assert_eq!(one, 1);
    assert!(
        rusqlite::version().starts_with("3."),
        "{}",
        rusqlite::version()
    );
}

/// Thread `t`'s first checkpoint, empty, stored: the config the writes go under.
async fn first_checkpoint(saver: &SqliteSaver) -> CheckpointConfig {
    saver
        .put(
            &CheckpointConfig::new("t"),
            &Checkpoint::now(1),
            &CheckpointMetadata::new("loop", 1),
            &Default::default(),
        )
        .await
        .expect("put")
}

/// `put_writes` of more writes than one statement inserts, with a special channel
/// written twice: the rows are Python's `executemany`, one row at a time in order
/// (`INSERT OR IGNORE`: the first of two rows with one key stays; `INSERT OR REPLACE`,
/// every channel special: the last one does), each `idx` its position or the special
/// channel's fixed index (`WRITES_IDX_MAP`: `__error__` -1, `__interrupt__` -3).
#[tokio::test]
async fn put_writes_rows_are_pythons_executemany_rows() {
    let dir = TempDir::new("many-writes");
    let path = dir.file("w.sqlite");
    let saver = SqliteSaver::create(&path).expect("create");
    let stored = first_checkpoint(&saver).await;
    let mut writes: Vec<(String, Value)> = (0..19)
        .map(|i| (format!("ch{i}"), Value::from(i64::from(i))))
        .collect();
    writes.insert(3, ("__error__".into(), Value::from("first error")));
    writes.push(("__error__".into(), Value::from("second error")));
    saver
        .put_writes(&stored, &writes, "task-a", "path-a")
        .await
        .expect("put_writes");
    let special = [
        ("__interrupt__".to_owned(), Value::from("first")),
        ("__interrupt__".to_owned(), Value::from("second")),
    ];
    saver
        .put_writes(&stored, &special, "task-b", "")
        .await
        .expect("put_writes");
    drop(saver);
    let conn = rusqlite::Connection::open(&path).expect("open");
    let mut stmt = conn
        .prepare(
            "SELECT task_id, task_path, idx, channel, type FROM writes \
             ORDER BY task_id, idx",
        )
        .expect("prepare");
    let rows: Vec<(String, String, i64, String, String)> = stmt
        .query_map([], |r| {
            Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?))
        })
        .expect("query")
        .collect::<Result<_, _>>()
        .expect("rows");
    let mut want: Vec<(String, String, i64, String, String)> = vec![(
        "task-a".into(),
        "path-a".into(),
        -1,
        "__error__".into(),
        "msgpack".into(),
    )];
    for (position, (channel, _)) in writes.iter().enumerate() {
        if !channel.starts_with("__") {
            let idx = i64::try_from(position).expect("small");
            want.push((
                "task-a".into(),
                "path-a".into(),
                idx,
                channel.clone(),
                "msgpack".into(),
            ));
        }
    }
    want.push((
        "task-b".into(),
        String::new(),
        -3,
        "__interrupt__".into(),
        "msgpack".into(),
    ));
    assert_eq!(rows, want);
    let values: Vec<(String, Vec<u8>)> = conn
        .prepare("SELECT task_id, value FROM writes WHERE idx < 0 ORDER BY task_id")
        .expect("prepare")
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
        .expect("query")
        .collect::<Result<_, _>>()
        .expect("rows");
    let text = |v: &str| langgraph_codec::msgpack::encode(&Value::from(v)).expect("encode");
    assert_eq!(
        values,
        vec![
            ("task-a".to_owned(), text("first error")),
            ("task-b".to_owned(), text("second")),
        ]
    );
}

/// `put_writes` is one transaction, whatever the number of writes and whichever path
/// runs it (the calling task or the blocking pool): a row the database refuses (here a
/// trigger planted on the file raises `ABORT` at the write on channel `poison`) fails
/// the call and leaves none of its rows, the rows before the refused one included;
/// the saver then writes the next call as usual. Three writes fit one `INSERT`
/// statement; twelve take two, the refused row in the second.
#[tokio::test]
async fn put_writes_is_all_or_nothing_when_the_database_refuses_a_row() {
    for inline in [true, false] {
        let dir = TempDir::new("writes-atomic");
        let path = dir.file("w.sqlite");
        let saver = SqliteSaver::builder(&path)
            .create(true)
            .inline_fast_path(inline)
            .open()
            .expect("create");
        let stored = first_checkpoint(&saver).await;
        rusqlite::Connection::open(&path)
            .expect("open")
            .execute_batch(
                "CREATE TRIGGER refuse_poison BEFORE INSERT ON writes \
                 WHEN NEW.channel = 'poison' BEGIN SELECT RAISE(ABORT, 'poison refused'); END",
            )
            .expect("trigger");
        let count = |task: &str| -> i64 {
            rusqlite::Connection::open(&path)
                .expect("open")
                .query_row(
                    "SELECT count(*) FROM writes WHERE task_id = ?",
                    [task],
                    |r| r.get(0),
                )
                .expect("count")
        };
        for n in [3usize, 12] {
            let mut writes: Vec<(String, Value)> = (0..n - 1)
                .map(|i| {
                    (
                        format!("ch{i}"),
                        Value::from(i64::try_from(i).expect("small")),
                    )
                })
                .collect();
            writes.push(("poison".into(), Value::from("refused")));
            let task = format!("task-{n}");
            let err = saver
                .put_writes(&stored, &writes, &task, "")
                .await
                .expect_err("the trigger refuses the last row");
            assert!(
                err.to_string().contains("poison refused"),
                "inline {inline}, {n} writes: {err}"
            );
            assert_eq!(
                count(&task),
                0,
                "inline {inline}, {n} writes: rows left behind"
            );
            writes.pop();
            saver
                .put_writes(&stored, &writes, &task, "")
                .await
                .expect("the writes without the refused one");
            assert_eq!(
                count(&task),
                i64::try_from(n - 1).expect("small"),
                "inline {inline}, {n} writes"
            );
        }
    }
}
