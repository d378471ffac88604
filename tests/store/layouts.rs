//! Layout detection on stores the real old savers wrote (`vectors/stores/`, made by
//! the generators there): each fixture is detected as the layout of the release that
//! wrote it, and detecting writes nothing — SQLite fixtures are opened
//! `SQLITE_OPEN_READ_ONLY` on a read-only copy whose bytes must not change, Postgres
//! fixtures are restored into fresh databases whose rows must not change.
//!
//! Postgres tests read `LGCODEC_TEST_PG_URL` and print a skip line without it; each
//! fixture goes into its own database named `<that URL's database>_layouts_<fixture>`.

use std::fs;
use std::path::Path;

use langgraph_codec::saver::layout::StoreLayout;
use langgraph_codec::saver::layout::{detect_sqlite, open_sqlite_read_only};
use rusqlite::{Connection, OpenFlags};

use crate::support::{scratch, stores};

fn read_only(path: &Path) {
    let mut perms = fs::metadata(path).expect("metadata").permissions();
    perms.set_readonly(true);
    fs::set_permissions(path, perms).expect("chmod 0444");
}

/// Detects the layout of a read-only copy of `fixture/store.sqlite`, opened with
/// `open_sqlite_read_only`, and checks that the file's bytes did not change and no
/// side file (`-wal`, `-shm`, `-journal`) was made.
fn detect_fixture(fixture: &str) -> StoreLayout {
    let src = stores().join(fixture).join("store.sqlite");
    let original = fs::read(&src).expect("fixture present");
    let dir = scratch(fixture);
    let copy = dir.join("store.sqlite");
    fs::write(&copy, &original).expect("copy");
    read_only(&copy);
    let layout = {
        let conn = open_sqlite_read_only(&copy).expect("opens read-only");
        detect_sqlite(&conn).expect("detects")
    };
    assert_eq!(
        fs::read(&copy).expect("read back"),
        original,
        "{fixture}: detection changed the file"
    );
    let left: Vec<String> = fs::read_dir(&dir)
        .expect("list")
        .filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n != "store.sqlite")
        .collect();
    assert!(left.is_empty(), "{fixture}: side files left: {left:?}");
    let mut perms = fs::metadata(&copy).expect("metadata").permissions();
    #[allow(clippy::permissions_set_readonly_false)]
    perms.set_readonly(false);
    let _ = fs::set_permissions(&copy, perms);
    let _ = fs::remove_dir_all(&dir);
    layout
}

/// Every old saver left its file in WAL mode; opened plainly `SQLITE_OPEN_READ_ONLY`,
/// SQLite creates `-wal` and `-shm` beside it (as root; as another user, on a
/// read-only directory, the open fails). `open_sqlite_read_only` makes neither.
#[test]
fn plain_read_only_open_of_a_wal_file_makes_side_files() {
    let dir = scratch("plain-ro");
    let copy = dir.join("store.sqlite");
    fs::copy(stores().join("sqlite-py-2.0.2/store.sqlite"), &copy).expect("copy");
    let header = fs::read(&copy).expect("read");
    assert_eq!(
        header.get(18..20),
        Some(&[2u8, 2][..]),
        "fixture is WAL mode"
    );
    if let Ok(conn) = Connection::open_with_flags(&copy, OpenFlags::SQLITE_OPEN_READ_ONLY) {
        let _ = detect_sqlite(&conn);
    }
    let side = dir.join("store.sqlite-shm").exists() || dir.join("store.sqlite-wal").exists();
    println!("plain read-only open left side files: {side}");
    let _ = fs::remove_dir_all(&dir);
    let copy2 = scratch("helper-ro").join("store.sqlite");
    fs::copy(stores().join("sqlite-py-2.0.2/store.sqlite"), &copy2).expect("copy");
    let conn = open_sqlite_read_only(&copy2).expect("open");
    assert_eq!(
        detect_sqlite(&conn).expect("detect"),
        StoreLayout::SqlitePythonBeforeTaskPath
    );
    drop(conn);
    let parent = copy2.parent().expect("parent");
    assert!(!parent.join("store.sqlite-shm").exists());
    assert!(!parent.join("store.sqlite-wal").exists());
    let _ = fs::remove_dir_all(parent);
}

/// Today's Python cannot read a read-only file in rollback-journal mode (its
/// `PRAGMA journal_mode=WAL` fails: `attempt to write a readonly database`); the
/// helper reads it, and the file stays in rollback mode, byte for byte.
#[test]
fn read_only_rollback_journal_file_reads_and_stays_rollback() {
    let dir = scratch("rollback");
    let path = dir.join("store.sqlite");
    fs::copy(stores().join("sqlite-py-1.0.0/store.sqlite"), &path).expect("copy");
    {
        let conn = Connection::open(&path).expect("open");
        let mode: String = conn
            .query_row("PRAGMA journal_mode=DELETE", [], |r| r.get(0))
            .expect("journal mode");
        assert_eq!(mode, "delete");
    }
    read_only(&path);
    let before = fs::read(&path).expect("read");
    assert_eq!(before.get(18..20), Some(&[1u8, 1][..]), "rollback mode");
    let conn = open_sqlite_read_only(&path).expect("open");
    let layout = detect_sqlite(&conn).expect("detect");
    assert_eq!(layout, StoreLayout::SqlitePythonBeforeTaskPath);
    let rows = read_sqlite_rows(&conn, &layout).expect("rows");
    assert_eq!(
        rows.checkpoints.len(),
        recorded_rows("sqlite-py-1.0.0").checkpoints.len()
    );
    drop(conn);
    assert_eq!(fs::read(&path).expect("read"), before, "file unchanged");
    let left = fs::read_dir(&dir).expect("list").count();
    assert_eq!(left, 1, "no side files");
    let mut perms = fs::metadata(&path).expect("metadata").permissions();
    #[allow(clippy::permissions_set_readonly_false)]
    perms.set_readonly(false);
    let _ = fs::set_permissions(&path, perms);
    let _ = fs::remove_dir_all(&dir);
}

/// A path with URI-special characters opens through the helper's `file:` URI.
#[test]
fn read_only_open_of_an_odd_path() {
    let dir = scratch("odd").join("a dir?#%&=");
    fs::create_dir_all(&dir).expect("dir");
    let copy = dir.join("store 1.sqlite");
    fs::copy(stores().join("sqlite-js-1.0.4/store.sqlite"), &copy).expect("copy");
    let conn = open_sqlite_read_only(&copy).expect("open");
    assert_eq!(detect_sqlite(&conn).expect("detect"), StoreLayout::SqliteJs);
    drop(conn);
    let _ = fs::remove_dir_all(dir.parent().expect("parent"));
}

#[test]
fn langgraph_0_1_sqlite_is_the_thread_ts_layout() {
    let got = detect_fixture("sqlite-lg-0.1.19");
    assert_eq!(got, StoreLayout::SqliteThreadTs { task_path: false });
    assert!(!got.has_namespaces() && !got.is_current() && !got.has_task_path());
}

/// `sqlite-py-1.0.3-json` was written under `langgraph-checkpoint` 1.0.9, whose
/// serializer tagged every value `json` as LangGraphJS's does: Python's statement text
/// makes it Python's all the same.
#[test]
fn sqlite_1_0_0_and_2_0_2_are_before_task_path() {
    // -sqlite 2.0.10 (`sqlite-py-sends-0.4.8`) has no `task_path` column either.
    for fixture in [
        "sqlite-py-1.0.0",
        "sqlite-py-2.0.2",
        "sqlite-py-1.0.3-json",
        "sqlite-py-sends-0.4.8",
        "sqlite-py-aes-0.4.8",
    ] {
        let got = detect_fixture(fixture);
        assert_eq!(got, StoreLayout::SqlitePythonBeforeTaskPath, "{fixture}");
        assert!(!got.is_current() && !got.has_task_path() && got.has_namespaces());
    }
}

#[test]
fn sqlite_3_1_2_is_current() {
    let got = detect_fixture("sqlite-py-3.1.2");
    assert_eq!(got, StoreLayout::SqlitePython);
    assert!(got.is_current() && got.has_task_path());
}

#[test]
fn langgraphjs_sqlite_is_js() {
    assert_eq!(detect_fixture("sqlite-js-1.0.4"), StoreLayout::SqliteJs);
    assert_eq!(detect_fixture("sqlite-js-0.2.2"), StoreLayout::SqliteJs);
}

/// A file whose statement text neither saver wrote (e.g. rebuilt by `VACUUM INTO` from
/// a hand-made schema): the rows decide, by LangGraphJS's numeric channel versions, not
/// by `json` tags (Python's serializer wrote those too, up to langgraph-checkpoint
/// 1.0.9). The rows are the fixtures' own: a Python `json` checkpoint of
/// `sqlite-py-1.0.3-json` and a JS one of `sqlite-js-1.0.4`.
#[test]
fn numeric_versions_not_json_tags_tell_js_rows_in_other_statement_text() {
    let dir = scratch("js-rows");
    let path = dir.join("s.sqlite");
    let conn = Connection::open(&path).expect("open");
    conn.execute_batch(
        "CREATE TABLE checkpoints (thread_id TEXT NOT NULL, checkpoint_ns TEXT NOT NULL DEFAULT '', checkpoint_id TEXT NOT NULL, parent_checkpoint_id TEXT, type TEXT, checkpoint BLOB, metadata BLOB, PRIMARY KEY (thread_id, checkpoint_ns, checkpoint_id));
         CREATE TABLE writes (thread_id TEXT NOT NULL, checkpoint_ns TEXT NOT NULL DEFAULT '', checkpoint_id TEXT NOT NULL, task_id TEXT NOT NULL, idx INTEGER NOT NULL, channel TEXT NOT NULL, type TEXT, value BLOB, PRIMARY KEY (thread_id, checkpoint_ns, checkpoint_id, task_id, idx));",
    )
    .expect("tables");
    assert_eq!(
        detect_sqlite(&conn).expect("detect"),
        StoreLayout::SqlitePythonBeforeTaskPath
    );
    let mut idx = 0i64;
    let mut insert = |fixture: &str, row: usize| {
        let rows = recorded_rows(fixture);
        let cp = &rows.checkpoints[row];
        assert_eq!(cp.checkpoint.type_tag, "json", "{fixture}");
        conn.execute(
            "INSERT INTO checkpoints VALUES (?1, '', ?2, NULL, 'json', ?3, X'7B7D')",
            rusqlite::params![
                format!("{fixture}-{row}"),
                cp.checkpoint_id,
                cp.checkpoint.data.to_vec()
            ],
        )
        .expect("row");
        // A value that is not JSON text is no evidence either way.
        conn.execute(
            "INSERT INTO writes VALUES ('t', '', 'c', 'task', ?1, 'ch', 'json', X'FF00')",
            [idx],
        )
        .expect("write");
        idx += 1;
    };
    for row in 0..3 {
        insert("sqlite-py-1.0.3-json", row);
    }
    assert_eq!(
        detect_sqlite(&conn).expect("detect"),
        StoreLayout::SqlitePythonBeforeTaskPath,
        "json rows with string versions are Python's"
    );
    insert("sqlite-js-1.0.4", 1);
    assert_eq!(detect_sqlite(&conn).expect("detect"), StoreLayout::SqliteJs);
    drop(conn);
    let _ = fs::remove_dir_all(&dir);
}

/// Today's Python `setup()` adds `writes.task_path` to a LangGraph 0.1 file before
/// failing to read it (`no such column: checkpoint_ns`; see vectors/stores/README.md):
/// such a file is still the 0.1 layout.
#[test]
fn thread_ts_file_touched_by_todays_setup() {
    let dir = scratch("ts-touched");
    let path = dir.join("s.sqlite");
    fs::copy(stores().join("sqlite-lg-0.1.19/store.sqlite"), &path).expect("copy");
    let conn = Connection::open(&path).expect("open");
    conn.execute(
        "ALTER TABLE writes ADD COLUMN task_path TEXT NOT NULL DEFAULT ''",
        [],
    )
    .expect("alter");
    let got = detect_sqlite(&conn).expect("detect");
    assert_eq!(got, StoreLayout::SqliteThreadTs { task_path: true });
    assert!(got.has_task_path());
    drop(conn);
    let _ = fs::remove_dir_all(&dir);
}

#[test]
fn empty_and_foreign_sqlite() {
    let conn = Connection::open_in_memory().expect("open");
    assert_eq!(detect_sqlite(&conn).expect("detect"), StoreLayout::Empty);
    conn.execute_batch("CREATE TABLE other (x)").expect("other");
    assert_eq!(detect_sqlite(&conn).expect("detect"), StoreLayout::Empty);
    conn.execute_batch("CREATE TABLE checkpoints (thread_id TEXT, blob BLOB)")
        .expect("checkpoints");
    let only = detect_sqlite(&conn).expect("detect");
    assert!(
        matches!(&only, StoreLayout::Foreign { reason } if reason.contains("only table checkpoints")),
        "{only:?}"
    );
    conn.execute_batch("CREATE TABLE writes (thread_id TEXT)")
        .expect("writes");
    let odd = detect_sqlite(&conn).expect("detect");
    assert!(
        matches!(&odd, StoreLayout::Foreign { reason } if reason.contains("checkpoints has columns (thread_id, blob)")),
        "{odd:?}"
    );
}

#[test]
fn todays_rust_saver_file_is_current() {
    let dir = scratch("rust-saver");
    let path = dir.join("s.sqlite");
    let saver = langgraph_codec::saver::sqlite::SqliteSaver::create(&path).expect("create");
    drop(saver);
    let conn = Connection::open_with_flags(&path, OpenFlags::SQLITE_OPEN_READ_ONLY)
        .expect("open read-only");
    // A file the Rust saver opened but never set up has no tables yet.
    let got = detect_sqlite(&conn).expect("detect");
    assert!(
        got == StoreLayout::SqlitePython || got == StoreLayout::Empty,
        "{got:?}"
    );
    drop(conn);
    let _ = fs::remove_dir_all(&dir);
}

#[test]
fn not_a_database_is_an_error_not_a_panic() {
    let dir = scratch("garbage");
    let path = dir.join("s.sqlite");
    fs::write(
        &path,
        b"this is not an SQLite file, only some text of some length....",
    )
    .expect("write");
    let conn =
        Connection::open_with_flags(&path, OpenFlags::SQLITE_OPEN_READ_ONLY).expect("open is lazy");
    let err = detect_sqlite(&conn).expect_err("not a database");
    assert!(err.to_string().contains("detect layout"), "{err}");
    drop(conn);
    let _ = fs::remove_dir_all(&dir);
}

// --- reading the rows of old SQLite layouts ------------------------------------

use base64::Engine as _;
use langgraph_codec::saver::layout::read_sqlite_rows;
use langgraph_codec::saver::{RawCheckpointRow, RawRows, RawWriteRow};
use langgraph_codec::TypedBytes;
use serde_json::Value as Json;

fn load_json(fixture: &str, file: &str) -> Json {
    let text = fs::read_to_string(stores().join(fixture).join(file)).expect("recorded file");
    serde_json::from_str(&text).expect("valid JSON")
}

/// A `rows.json` cell: `{"$bytes": base64}`, text, or null (empty).
fn cell_bytes(v: &Json) -> Vec<u8> {
    match v {
        Json::Null => Vec::new(),
        Json::String(s) => s.as_bytes().to_vec(),
        Json::Object(o) => base64::engine::general_purpose::STANDARD
            .decode(o.get("$bytes").and_then(Json::as_str).expect("$bytes"))
            .expect("base64"),
        other => panic!("unexpected cell {other}"),
    }
}

fn cell_str(v: &Json) -> String {
    v.as_str().expect("text cell").to_owned()
}

/// What Python's `sqlite3` read from the fixture file (`rows.json`), in the shape
/// and order `read_sqlite_rows` promises.
fn recorded_rows(fixture: &str) -> RawRows {
    let rows = load_json(fixture, "rows.json");
    let table = |name: &str| -> Vec<std::collections::HashMap<String, Json>> {
        let t = &rows[name];
        let cols: Vec<String> = t["columns"]
            .as_array()
            .expect("columns")
            .iter()
            .map(cell_str)
            .collect();
        t["rows"]
            .as_array()
            .expect("rows")
            .iter()
            .map(|r| {
                cols.iter()
                    .cloned()
                    .zip(r.as_array().expect("row").iter().cloned())
                    .collect()
            })
            .collect()
    };
    let ts = |r: &std::collections::HashMap<String, Json>, new: &str, old: &str| {
        r.get(new)
            .or_else(|| r.get(old))
            .cloned()
            .unwrap_or(Json::Null)
    };
    let mut checkpoints: Vec<RawCheckpointRow> = table("checkpoints")
        .iter()
        .map(|r| RawCheckpointRow {
            thread_id: cell_str(&r["thread_id"]),
            checkpoint_ns: r.get("checkpoint_ns").map(cell_str).unwrap_or_default(),
            checkpoint_id: cell_str(&ts(r, "checkpoint_id", "thread_ts")),
            parent_checkpoint_id: ts(r, "parent_checkpoint_id", "parent_ts")
                .as_str()
                .map(str::to_owned),
            checkpoint: TypedBytes::new(
                r.get("type")
                    .and_then(Json::as_str)
                    .unwrap_or(if r.contains_key("thread_ts") {
                        "json"
                    } else {
                        ""
                    }),
                cell_bytes(&r["checkpoint"]),
            ),
            metadata: TypedBytes::new("json", cell_bytes(&r["metadata"])),
        })
        .collect();
    checkpoints.sort_by(|a, b| {
        (&a.thread_id, &a.checkpoint_ns, &a.checkpoint_id).cmp(&(
            &b.thread_id,
            &b.checkpoint_ns,
            &b.checkpoint_id,
        ))
    });
    let mut writes: Vec<RawWriteRow> = table("writes")
        .iter()
        .map(|r| RawWriteRow {
            thread_id: cell_str(&r["thread_id"]),
            checkpoint_ns: r.get("checkpoint_ns").map(cell_str).unwrap_or_default(),
            checkpoint_id: cell_str(&ts(r, "checkpoint_id", "thread_ts")),
            task_id: cell_str(&r["task_id"]),
            idx: r["idx"].as_i64().expect("idx"),
            channel: cell_str(&r["channel"]),
            value: TypedBytes::new(
                r.get("type")
                    .and_then(Json::as_str)
                    .unwrap_or(if r.contains_key("thread_ts") {
                        "json"
                    } else {
                        ""
                    }),
                cell_bytes(&r["value"]),
            ),
            task_path: r.get("task_path").map(cell_str).unwrap_or_default(),
        })
        .collect();
    writes.sort_by(|a, b| {
        (
            &a.thread_id,
            &a.checkpoint_ns,
            &a.checkpoint_id,
            &a.task_path,
            &a.task_id,
            a.idx,
        )
            .cmp(&(
                &b.thread_id,
                &b.checkpoint_ns,
                &b.checkpoint_id,
                &b.task_path,
                &b.task_id,
                b.idx,
            ))
    });
    RawRows {
        checkpoints,
        blobs: Vec::new(),
        writes,
    }
}

/// Each checkpoint the writing saver's `get_tuple` returned (`reads.json`):
/// `(thread, namespace, id, number of pending writes)`.
fn recorded_tuples(fixture: &str) -> Vec<(String, String, String, usize)> {
    let reads = load_json(fixture, "reads.json");
    let mut out = Vec::new();
    for (thread, r) in reads["threads"].as_object().expect("threads") {
        for e in r["get_tuple"].as_array().expect("get_tuple") {
            let t = e.get("$CheckpointTuple").unwrap_or(e);
            let cfg = &t["config"];
            let c = cfg.get("configurable").unwrap_or(cfg);
            let id = c
                .get("checkpoint_id")
                .or_else(|| c.get("thread_ts"))
                .and_then(Json::as_str)
                .expect("id");
            let ns = c.get("checkpoint_ns").and_then(Json::as_str).unwrap_or("");
            let writes = t["pending_writes"].as_array().map_or(0, Vec::len);
            out.push((thread.clone(), ns.to_owned(), id.to_owned(), writes));
        }
    }
    out
}

/// The rows of a copy of the fixture (the committed file is never opened in place).
fn read_fixture_rows(fixture: &str) -> RawRows {
    let dir = scratch(&format!("rows-{fixture}"));
    let copy = dir.join("store.sqlite");
    fs::copy(stores().join(fixture).join("store.sqlite"), &copy).expect("copy");
    let conn = open_sqlite_read_only(&copy).expect("open");
    let layout = detect_sqlite(&conn).expect("detect");
    let rows = read_sqlite_rows(&conn, &layout).expect("rows");
    drop(conn);
    let _ = fs::remove_dir_all(&dir);
    rows
}

#[test]
fn old_sqlite_rows_read_as_python_stored_them() {
    for fixture in [
        "sqlite-lg-0.1.19",
        "sqlite-py-1.0.0",
        "sqlite-py-2.0.2",
        "sqlite-py-3.1.2",
        "sqlite-js-1.0.4",
        "sqlite-js-0.2.2",
        "sqlite-py-aes-0.4.8",
    ] {
        let got = read_fixture_rows(fixture);
        let want = recorded_rows(fixture);
        assert_eq!(got.checkpoints, want.checkpoints, "{fixture}: checkpoints");
        assert_eq!(got.writes, want.writes, "{fixture}: writes");
        assert!(
            !got.checkpoints.is_empty() && !got.writes.is_empty(),
            "{fixture}"
        );
    }
}

/// Every checkpoint the writing release's own saver listed is a row, with as many
/// write rows as that saver returned pending writes, and no row is unaccounted for.
#[test]
fn old_sqlite_rows_match_what_the_writing_saver_read() {
    for fixture in [
        "sqlite-lg-0.1.19",
        "sqlite-py-1.0.0",
        "sqlite-py-2.0.2",
        "sqlite-js-1.0.4",
        "sqlite-js-0.2.2",
    ] {
        let rows = read_fixture_rows(fixture);
        let tuples = recorded_tuples(fixture);
        assert_eq!(
            tuples.len(),
            rows.checkpoints.len(),
            "{fixture}: checkpoint count"
        );
        for (thread, ns, id, n_writes) in tuples {
            assert!(
                rows.checkpoints.iter().any(|c| c.thread_id == thread
                    && c.checkpoint_ns == ns
                    && c.checkpoint_id == id),
                "{fixture}: {thread}/{ns}/{id} missing"
            );
            let have = rows
                .writes
                .iter()
                .filter(|w| w.thread_id == thread && w.checkpoint_ns == ns && w.checkpoint_id == id)
                .count();
            assert_eq!(have, n_writes, "{fixture}: writes of {thread}/{ns}/{id}");
        }
    }
}

#[test]
fn the_0_1_rows_have_the_old_shape() {
    let rows = read_fixture_rows("sqlite-lg-0.1.19");
    for c in &rows.checkpoints {
        assert_eq!(c.checkpoint.type_tag, "json");
        assert_eq!(c.checkpoint_ns, "");
        // LangGraph 0.1's checkpoint JSON still holds the channel values inline.
        let v: Json = serde_json::from_slice(&c.checkpoint.data).expect("json checkpoint");
        assert!(v.get("channel_values").is_some(), "{v}");
    }
    assert!(rows
        .writes
        .iter()
        .all(|w| w.task_path.is_empty() && w.value.type_tag == "json"));
    let roots = rows
        .checkpoints
        .iter()
        .filter(|c| c.parent_checkpoint_id.is_none())
        .count();
    assert_eq!(roots, 2, "one root per thread");
}

#[test]
fn rows_of_a_non_sqlite_layout_are_refused() {
    let conn = Connection::open_in_memory().expect("open");
    for layout in [
        StoreLayout::Empty,
        StoreLayout::PostgresPython {
            migrations: Some(9),
        },
    ] {
        let err = read_sqlite_rows(&conn, &layout).expect_err("refused");
        assert!(err.to_string().contains("cannot read SQLite rows"), "{err}");
    }
}

#[cfg(feature = "postgres")]
mod postgres {
    use langgraph_codec::saver::layout::StoreLayout;
    use langgraph_codec::saver::layout::{detect_postgres, CURRENT_POSTGRES_MIGRATION};

    use crate::support::pg::{connect, fresh, restored, url};

    /// `(server URL with a trailing '/', database name)`.
    fn split(url: &str) -> (String, String) {
        let cut = url.rfind('/').expect("URL has a database");
        let (server, db) = url.split_at(cut + 1);
        let db = db.split('?').next().unwrap_or(db);
        (server.to_owned(), db.to_owned())
    }

    /// Every row of every table in `public`, ordered: what must not change.
    async fn digest(client: &tokio_postgres::Client) -> String {
        let tables = client
            .query(
                "SELECT table_name::text FROM information_schema.tables WHERE table_schema = 'public' ORDER BY 1",
                &[],
            )
            .await
            .expect("tables");
        let mut out = String::new();
        for t in tables {
            let name: String = t.get(0);
            let rows = client
                .query(
                    &format!("SELECT t::text FROM public.\"{name}\" t ORDER BY 1"),
                    &[],
                )
                .await
                .expect("rows");
            out.push_str(&name);
            for r in rows {
                out.push('\n');
                out.push_str(&r.get::<_, String>(0));
            }
            out.push('\n');
        }
        out
    }

    /// Restores `fixture/dump.sql` into a fresh database, detects, checks nothing
    /// changed, drops the database.
    async fn detect_fixture(url: &str, fixture: Option<&str>) -> StoreLayout {
        let target = match fixture {
            Some(fixture) => restored(url, fixture, "layouts").await,
            None => fresh(url, "layouts_empty").await,
        };
        let client = connect(&target).await;
        let before = digest(&client).await;
        let got = detect_postgres(&client, "public").await.expect("detect");
        assert_eq!(digest(&client).await, before, "{fixture:?}: rows changed");
        drop(client);
        let (_, db) = split(&target);
        connect(url)
            .await
            .batch_execute(&format!("DROP DATABASE IF EXISTS \"{db}\" WITH (FORCE)"))
            .await
            .expect("drop");
        got
    }

    #[tokio::test]
    async fn every_postgres_fixture_is_its_layout() {
        let Some(url) = url() else { return };
        for (fixture, want) in [
            (
                "postgres-py-1.0.0",
                StoreLayout::PostgresPython { migrations: None },
            ),
            (
                "postgres-py-2.0.0",
                StoreLayout::PostgresPython {
                    migrations: Some(4),
                },
            ),
            (
                "postgres-py-2.0.8",
                StoreLayout::PostgresPython {
                    migrations: Some(8),
                },
            ),
            (
                "postgres-py-1.0.1-json",
                StoreLayout::PostgresPython {
                    migrations: Some(3),
                },
            ),
            // 0..=7: 2.0.8's list without its no-op 5 (the indexes, no task_path).
            (
                "postgres-py-2.0.10",
                StoreLayout::PostgresPython {
                    migrations: Some(7),
                },
            ),
            ("postgres-py-2.0.12", StoreLayout::PostgresPythonTaskPathAt8),
            (
                "postgres-py-2.0.21",
                StoreLayout::PostgresPython {
                    migrations: Some(CURRENT_POSTGRES_MIGRATION),
                },
            ),
            (
                "postgres-py-3.2.0",
                StoreLayout::PostgresPython {
                    migrations: Some(CURRENT_POSTGRES_MIGRATION),
                },
            ),
            (
                "postgres-py-shallow-2.0.21",
                StoreLayout::PostgresShallow {
                    migrations: Some(7),
                },
            ),
            (
                "postgres-py-shallow-sends-2.0.21",
                StoreLayout::PostgresShallow {
                    migrations: Some(7),
                },
            ),
            (
                "postgres-py-shallow-3.2.0",
                StoreLayout::PostgresShallow {
                    migrations: Some(7),
                },
            ),
            (
                "postgres-js-1.0.5",
                StoreLayout::PostgresJs { migrations: 4 },
            ),
            (
                "postgres-js-0.1.3",
                StoreLayout::PostgresJs { migrations: 4 },
            ),
            // JS's tables column for column, `json` blobs as JS's: its string channel
            // versions make it Python's.
            (
                "postgres-py-1.0.7-json",
                StoreLayout::PostgresPython {
                    migrations: Some(4),
                },
            ),
        ] {
            let got = detect_fixture(&url, Some(fixture)).await;
            assert_eq!(got, want, "{fixture}");
            assert_eq!(
                got.is_current(),
                fixture == "postgres-py-3.2.0" || fixture == "postgres-py-2.0.21",
                "{fixture}"
            );
        }
    }

    #[tokio::test]
    async fn empty_database_is_empty() {
        let Some(url) = url() else { return };
        assert_eq!(detect_fixture(&url, None).await, StoreLayout::Empty);
    }

    #[test]
    fn current_migration_is_the_savers() {
        assert_eq!(
            CURRENT_POSTGRES_MIGRATION,
            langgraph_codec::saver::postgres::LAST_MIGRATION
        );
    }
}

/// Python's `checkpoints` beside a `writes` of another layout: the three views of the
/// one catalog reader agree that this is not a checkpoint store — layout detection
/// says foreign, the saver's setup refuses it (schema), and opening it as a store
/// refuses it (not a store) naming the missing column; none of them writes.
#[test]
fn checkpoints_with_a_foreign_writes_table_is_refused_by_every_view() {
    use langgraph_codec::saver::sqlite::SqliteSaver;
    use langgraph_codec::store::Store;
    use langgraph_codec::ErrorKind;

    let dir = scratch("foreign-writes");
    let path = dir.join("f.sqlite");
    let conn = Connection::open(&path).expect("create");
    conn.execute_batch(
        "CREATE TABLE checkpoints (thread_id TEXT NOT NULL, checkpoint_ns TEXT NOT NULL DEFAULT '', \
         checkpoint_id TEXT NOT NULL, parent_checkpoint_id TEXT, type TEXT, checkpoint BLOB, \
         metadata BLOB, PRIMARY KEY (thread_id, checkpoint_ns, checkpoint_id)); \
         CREATE TABLE writes (thread_id TEXT, payload BLOB);",
    )
    .expect("tables");
    drop(conn);
    let before = fs::read(&path).expect("read");

    let conn = open_sqlite_read_only(&path).expect("open read-only");
    let detected = detect_sqlite(&conn).expect("detect");
    drop(conn);
    assert!(
        matches!(&detected, StoreLayout::Foreign { reason } if reason.contains("writes has columns (thread_id, payload)")),
        "{detected:?}"
    );

    let err = SqliteSaver::create(&path).expect_err("setup refuses a foreign writes");
    assert_eq!(err.kind(), ErrorKind::Schema, "{err}");
    // The saver's check is the strict one: the first column that differs.
    assert!(err.to_string().contains("column writes.thread_id"), "{err}");

    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    let err = rt
        .block_on(Store::open(path.to_str().expect("utf-8")))
        .expect_err("not a store");
    assert_eq!(err.kind(), ErrorKind::NotAStore, "{err}");
    assert!(
        err.to_string()
            .contains("table writes has no column checkpoint_ns"),
        "{err}"
    );

    assert_eq!(
        fs::read(&path).expect("read back"),
        before,
        "nothing written"
    );
    let _ = fs::remove_dir_all(&dir);
}

/// A json-era datetime, `{"lc": 2, "type": "constructor", "id": ["datetime",
/// "datetime"], "method": "fromisoformat", "args": [S]}` as LangGraph 0.1 and
/// `langgraph-checkpoint` 1.0.x wrote them, reads as the datetime the writing release
/// rebuilt (`datetime.fromisoformat(S)`), not as today's Python's `None`: the value, and
/// the msgpack bytes written back, equal Python's own `JsonPlusSerializer().dumps_typed`
/// of `datetime.fromisoformat(S)`.
#[test]
fn json_era_datetimes_read_as_the_release_that_wrote_them_read_them() {
    use base64::engine::general_purpose::STANDARD as B64;
    use base64::Engine as _;
    use langgraph_codec::{JsonPlusSerializer, Serializer};
    let Some(python) = crate::support::python() else {
        return;
    };
    let isos = [
        "2024-05-06T07:08:09+00:00",
        "2024-07-01T12:30:45.123+02:00",
        "2024-01-02T03:04:05",
        "2024-07-01T12:30:45.123456-05:30",
    ];
    let script = "import base64, sys\n\
                  from datetime import datetime\n\
                  from langgraph.checkpoint.serde.jsonplus import JsonPlusSerializer\n\
                  s = JsonPlusSerializer()\n\
                  for iso in sys.argv[1:]:\n    \
                      t, b = s.dumps_typed(datetime.fromisoformat(iso))\n    \
                      print(t, base64.b64encode(b).decode())\n";
    let out = std::process::Command::new(&python)
        .arg("-c")
        .arg(script)
        .args(isos)
        .output()
        .expect("run python");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8(out.stdout).expect("utf-8");
    let serde = JsonPlusSerializer::new();
    for (iso, line) in isos.iter().zip(text.lines()) {
        let (tag, b64) = line.split_once(' ').expect("tag and bytes");
        let envelope = format!(
            r#"{{"lc": 2, "type": "constructor", "id": ["datetime", "datetime"], "method": "fromisoformat", "args": ["{iso}"]}}"#
        );
        let ours = serde
            .loads_typed("json", envelope.as_bytes())
            .expect("reads");
        let back = serde.dumps_typed(&ours).expect("writes");
        assert_eq!(back.type_tag, tag, "{iso}");
        assert_eq!(
            back.data[..],
            B64.decode(b64).expect("base64")[..],
            "{iso}: {ours:?}"
        );
    }
}
