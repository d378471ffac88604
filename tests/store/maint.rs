//! Store maintenance (inspect, stats, export/import, copy) on real SQLite files and a
//! real Postgres server: the stores of every release in `vectors/stores/` (written
//! by the real old packages) and stores written by the savers.
//!
//! Postgres tests read `LGCODEC_TEST_PG_URL` and print a skip line without it; each
//! makes its own databases `<that database>_<tag>` and drops them.

use std::fs;
use std::path::Path;
use std::sync::Arc;

use langgraph_codec::crypto::{AesKey, AesMode, EncryptedSerializer};
use langgraph_codec::saver::sqlite::SqliteSaver;
use langgraph_codec::saver::{
    ChannelVersion, ChannelVersions, Checkpoint, CheckpointConfig, CheckpointMetadata,
    CheckpointSaver,
};
use langgraph_codec::store::{AnyStore, HistoryFormat, StatsOptions, StoreKeys, ThreadSummary};
use langgraph_codec::ErrorKind;
use langgraph_codec::{JsonPlusSerializer, Value};
use serde_json::Value as Json;

use crate::support::{pg, scratch, stores};

fn files_in(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = fs::read_dir(dir)
        .expect("read dir")
        .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

/// `(thread, checkpoints, writes)` per thread from the rows Python's sqlite3 read
/// from the fixture (`rows.json`), not from the code under test.
fn recorded_counts(fixture: &str) -> Vec<(String, u64, u64)> {
    let text = fs::read_to_string(stores().join(fixture).join("rows.json")).expect("rows.json");
    let rows: Json = serde_json::from_str(&text).expect("json");
    let mut out: std::collections::BTreeMap<String, (u64, u64)> = Default::default();
    for (table, slot) in [("checkpoints", 0), ("writes", 1)] {
        let columns = rows[table]["columns"].as_array().expect("columns");
        let at = columns
            .iter()
            .position(|c| c == "thread_id")
            .expect("thread_id column");
        for r in rows[table]["rows"].as_array().expect("table rows") {
            let thread = r[at].as_str().expect("thread_id").to_owned();
            let e = out.entry(thread).or_default();
            if slot == 0 {
                e.0 += 1;
            } else {
                e.1 += 1;
            }
        }
    }
    out.into_iter().map(|(t, (c, w))| (t, c, w)).collect()
}

#[tokio::test]
async fn inspect_and_stats_read_every_sqlite_layout_without_a_write() {
    for fixture in [
        "sqlite-lg-0.1.19",
        "sqlite-py-1.0.0",
        "sqlite-py-2.0.2",
        "sqlite-py-3.1.2",
        "sqlite-js-1.0.4",
    ] {
        let dir = scratch(&format!("inspect-{fixture}"));
        let copy = dir.join("store.sqlite");
        fs::copy(stores().join(fixture).join("store.sqlite"), &copy).expect("copy");
        let before = fs::read(&copy).expect("read");
        let store = AnyStore::open(copy.to_str().expect("utf-8"))
            .await
            .expect(fixture);
        let threads = store.threads(&StoreKeys::none()).await.expect(fixture);
        let got: Vec<(String, u64, u64)> = threads
            .iter()
            .map(|t| (t.thread_id.clone(), t.checkpoints, t.writes))
            .collect();
        assert_eq!(got, recorded_counts(fixture), "{fixture}");
        for t in &threads {
            assert!(t.latest_ts.is_some(), "{fixture}: {t:?}");
            assert!(t.latest_step.is_some(), "{fixture}: {t:?}");
            assert!(t.bytes > 0, "{fixture}");
            let history = store.history(&t.thread_id).await.expect("history");
            assert_eq!(history.nodes.len() as u64, t.checkpoints, "{fixture}");
            let state = store
                .state(&StoreKeys::none(), &t.thread_id, &t.latest_checkpoint_id)
                .await
                .expect("state")
                .expect("present");
            assert_eq!(state["checkpoint_id"], t.latest_checkpoint_id.as_str());
        }
        let stats = store
            .stats(&StoreKeys::none(), &StatsOptions::new())
            .await
            .expect("stats");
        assert_eq!(stats.threads, threads.len() as u64);
        // While it is open, a WAL file has SQLite's -wal/-shm beside it (a reader takes
        // part in locking); the last connection's close removes them.
        drop(store);
        assert_eq!(
            fs::read(&copy).expect("read"),
            before,
            "{fixture}: bytes changed"
        );
        assert_eq!(
            files_in(&dir),
            vec!["store.sqlite"],
            "{fixture}: side files"
        );
        let _ = fs::remove_dir_all(&dir);
    }
}

fn key(byte: u8) -> AesKey {
    AesKey::new(&[byte; 16]).expect("key")
}

/// A store written by the SQLite saver: thread `t` with a root `a`, a child `b`
/// (messages [hi]) and two children of `b` (a fork): `c1` (messages [hi, there]) and
/// `c2` (messages [hi, other]), plus a write on `c1`.
async fn forked_store(path: &Path, serde: Arc<dyn langgraph_codec::Serializer>) -> [String; 4] {
    let saver = SqliteSaver::builder(path)
        .serializer(serde)
        .create(true)
        .open()
        .expect("create");
    let mut a = Checkpoint::new(
        "1ef00000-0000-6000-8000-00000000000a",
        "2024-01-01T00:00:00+00:00",
    );
    a.set_channel("messages", Value::Array(vec![]), ChannelVersion::Int(1));
    let versions = |c: &Checkpoint| -> ChannelVersions { c.channel_versions.clone() };
    let cfg = CheckpointConfig::new("t");
    let ca = saver
        .put(
            &cfg,
            &a,
            &CheckpointMetadata::new("input", -1),
            &versions(&a),
        )
        .await
        .expect("put a");
    let mut b = Checkpoint::new(
        "1ef00000-0000-6000-8000-00000000000b",
        "2024-01-01T00:00:01+00:00",
    );
    b.set_channel(
        "messages",
        Value::Array(vec![Value::from("hi")]),
        ChannelVersion::Int(2),
    );
    let cb = saver
        .put(&ca, &b, &CheckpointMetadata::new("loop", 0), &versions(&b))
        .await
        .expect("put b");
    let mut ids = vec![a.id.clone(), b.id.clone()];
    for (n, word) in [("c", "there"), ("d", "other")] {
        let mut c = Checkpoint::new(
            format!("1ef00000-0000-6000-8000-00000000000{n}"),
            "2024-01-01T00:00:02+00:00",
        );
        c.set_channel(
            "messages",
            Value::Array(vec![Value::from("hi"), Value::from(word)]),
            ChannelVersion::Int(3),
        );
        c.set_channel("notes", Value::from(word), ChannelVersion::Int(1));
        let cc = saver
            .put(&cb, &c, &CheckpointMetadata::new("loop", 1), &versions(&c))
            .await
            .expect("put c");
        saver
            .put_writes(
                &cc,
                &[("notes".to_owned(), Value::from("w"))],
                "task-1",
                "~",
            )
            .await
            .expect("writes");
        ids.push(c.id.clone());
    }
    [
        ids[0].clone(),
        ids[1].clone(),
        ids[2].clone(),
        ids[3].clone(),
    ]
}

#[tokio::test]
async fn history_is_a_tree_with_its_fork_and_diff_names_what_changed() {
    let dir = scratch("fork");
    let path = dir.join("s.db");
    let [a, b, c, d] = forked_store(&path, Arc::new(JsonPlusSerializer::new())).await;
    let store = AnyStore::open(path.to_str().expect("utf-8"))
        .await
        .expect("open");
    let h = store.history("t").await.expect("history");
    assert_eq!(h.forks, vec![b.clone()]);
    let node = |id: &str| {
        h.nodes
            .iter()
            .find(|n| n.checkpoint_id == id)
            .expect("node")
    };
    assert_eq!(node(&a).children, vec![b.clone()]);
    assert_eq!(node(&b).children, vec![c.clone(), d.clone()]);
    assert_eq!(node(&c).parent_checkpoint_id.as_deref(), Some(b.as_str()));
    let text = h.render();
    // From the puts above: the root, its child, the fork's two branches one level in.
    assert_eq!(
        text,
        format!(
            "{a} step=-1 source=input\n{b} step=0 source=loop (fork: 2 branches)\n  {c} step=1 source=loop\n  {d} step=1 source=loop\n"
        )
    );
    assert_eq!(h.tree().to_string(), text);
    // Written as walked from the scratch file: the same text, the same JSON.
    let mut walked = Vec::new();
    let counts = store
        .write_history("t", None, HistoryFormat::Tree, &mut walked)
        .await
        .expect("tree");
    assert_eq!(String::from_utf8(walked).expect("utf-8"), text);
    assert_eq!(
        (counts.checkpoints, counts.forks, counts.unreadable),
        (4, 1, None)
    );
    let mut walked = Vec::new();
    store
        .write_history("t", None, HistoryFormat::Json, &mut walked)
        .await
        .expect("json");
    let walked: Json = serde_json::from_slice(&walked).expect("one JSON document");
    assert_eq!(walked["forks"], serde_json::json!([b]));
    assert_eq!(walked["nodes"][1]["children"], serde_json::json!([c, d]));
    assert_eq!(walked, serde_json::to_value(&h).expect("json"));

    let diff = store
        .diff(&StoreKeys::none(), "t", &b, &c)
        .await
        .expect("diff");
    assert_eq!(diff.changed, vec!["messages"]);
    assert_eq!(diff.added, vec!["notes"]);
    assert!(diff.removed.is_empty());
    assert_eq!(diff.appended["messages"], vec![Json::from("there")]);

    let threads = store.threads(&StoreKeys::none()).await.expect("threads");
    assert_eq!(threads.len(), 1);
    assert_eq!(threads[0].latest_checkpoint_id, d);
    assert_eq!(threads[0].latest_step, Some(1));
    assert_eq!(threads[0].writes, 2);
    let _ = fs::remove_dir_all(&dir);
}

/// Trees of every shape the parent ids can make, drawn both ways: the history built
/// in memory (`history`, `tree`, its JSON) and walked from the scratch file
/// (`write_history`) give the same bytes. Random trees of 1 to 300 checkpoints over
/// two namespaces: forks nested in forks, forks of many branches, parents that are
/// not in the thread (each such node a root), a node its own parent and two nodes
/// each other's (never reached from a root, so never drawn), parents named in
/// another namespace only, empty parent ids; `--check` marks on an encrypted
/// store read without its key.
#[tokio::test]
async fn a_history_walked_from_the_scratch_file_is_the_one_built_in_memory() {
    let dir = scratch("walk");
    let mut rng = 0x2545_f491_4f6c_dd1du64;
    let mut next = |n: u64| {
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        rng % n.max(1)
    };
    #[derive(Debug, Default)]
    struct Seen {
        forks: u64,
        unreadable: u64,
        nested: bool,
        roots: usize,
        undrawn: bool,
        checked: u64,
    }
    let mut seen = Seen::default();
    // A checkpoint as the saver stores it, for the rows that decode.
    let (kind, blob): (String, Vec<u8>) = {
        let path = dir.join("one.db");
        let saver = SqliteSaver::builder(&path)
            .create(true)
            .open()
            .expect("saver");
        let cp = Checkpoint::new(
            "1ef00000-0000-6000-8000-000000000001",
            "2024-01-01T00:00:00+00:00",
        );
        saver
            .put(
                &CheckpointConfig::new("x"),
                &cp,
                &CheckpointMetadata::new("loop", 0),
                &ChannelVersions::new(),
            )
            .await
            .expect("put");
        drop(saver);
        rusqlite::Connection::open(&path)
            .expect("open")
            .query_row("SELECT type, checkpoint FROM checkpoints", [], |r| {
                Ok((r.get(0)?, r.get(1)?))
            })
            .expect("row")
    };
    for round in 0..40 {
        let path = dir.join(format!("w{round}.db"));
        let conn = crate::support::empty_sqlite_store(&path);
        let count = 1 + next(300);
        let id = |i: u64| format!("1ef{i:05x}-0000-6000-8000-000000000000");
        for i in 0..count {
            let ns = if next(5) == 0 { "inner:1" } else { "" };
            let parent = match next(20) {
                0 => None,
                1 => Some(String::new()),
                2 => Some(id(count + 7)),
                3 => Some(id(i)),
                4 if i + 1 < count => Some(id(i + 1)),
                // Mostly the one before (a chain), else any earlier one (a fork).
                5..=14 if i > 0 => Some(id(i - 1)),
                _ if i > 0 => Some(id(next(i))),
                _ => None,
            };
            let metadata = match next(4) {
                0 => "not json".to_owned(),
                _ => format!(r#"{{"source":"loop","step":{}}}"#, next(9)),
            };
            // Half decode; the others are an empty map, not a checkpoint.
            let (kind, blob) = match next(2) {
                0 => (kind.as_str(), blob.as_slice()),
                _ => ("msgpack", &[0x80u8][..]),
            };
            conn.execute(
                "INSERT INTO checkpoints (thread_id, checkpoint_ns, checkpoint_id, parent_checkpoint_id, type, checkpoint, metadata) VALUES ('t', ?1, ?2, ?3, ?4, ?5, ?6)",
                rusqlite::params![ns, id(i), parent, kind, blob, metadata.into_bytes()],
            )
            .expect("insert");
        }
        drop(conn);
        let store = AnyStore::open(path.to_str().expect("utf-8"))
            .await
            .expect("open");
        let mut held = store.history("t").await.expect("history");
        let check = round % 3 == 0;
        let keys = StoreKeys::none();
        if check {
            store.check_history(&keys, &mut held).await.expect("check");
        }
        for format in [HistoryFormat::Tree, HistoryFormat::Json] {
            let mut walked = Vec::new();
            let counts = store
                .write_history("t", check.then_some(&keys), format, &mut walked)
                .await
                .expect("walk");
            assert_eq!(counts.checkpoints, count, "round {round}");
            assert_eq!(counts.forks, held.forks.len() as u64, "round {round}");
            seen.forks += counts.forks;
            seen.unreadable += counts.unreadable.unwrap_or(0);
            seen.checked += if check { count } else { 0 };
            let text = held.render();
            seen.nested |= text.lines().any(|l| l.starts_with("    "));
            seen.roots = seen
                .roots
                .max(text.lines().filter(|l| !l.starts_with(' ')).count());
            seen.undrawn |= text.lines().count() < held.nodes.len();
            let want = match format {
                HistoryFormat::Tree => held.render(),
                _ => serde_json::to_string(&held).expect("json"),
            };
            assert_eq!(
                String::from_utf8(walked).expect("utf-8"),
                want,
                "round {round}, {format:?}"
            );
        }
    }
    // The shapes named above were all drawn.
    println!("{seen:?}");
    assert!(seen.forks > 100 && seen.unreadable > 100, "{seen:?}");
    assert!(seen.unreadable < seen.checked * 3 / 4, "{seen:?}");
    assert!(seen.nested && seen.roots > 5 && seen.undrawn, "{seen:?}");
    let _ = fs::remove_dir_all(&dir);
}

#[tokio::test]
async fn state_is_decrypted_with_the_key_ring_and_refused_without_it() {
    let dir = scratch("keys");
    let path = dir.join("s.db");
    let old = EncryptedSerializer::from_aes_key(&[7u8; 16], AesMode::Eax).expect("serde");
    let [_, _, c, _] = forked_store(&path, Arc::new(old)).await;
    let store = AnyStore::open(path.to_str().expect("utf-8"))
        .await
        .expect("open");
    let ring = StoreKeys::new(key(9))
        .with_previous(key(7), "old")
        .expect("ring");
    let state = store
        .state(&ring, "t", &c)
        .await
        .expect("state")
        .expect("present");
    assert_eq!(
        state["checkpoint"]["channel_values"]["messages"],
        serde_json::json!(["hi", "there"])
    );
    assert_eq!(state["pending_writes"][0]["value"], "w");
    let err = store
        .state(&StoreKeys::none(), "t", &c)
        .await
        .expect_err("no key");
    assert_eq!(err.kind(), ErrorKind::UnreadableRow, "{err}");
    let _ = fs::remove_dir_all(&dir);
}

#[tokio::test]
async fn inspect_reads_postgres_stores_of_every_release_without_a_write() {
    let Some(url) = pg::url() else { return };
    for fixture in [
        "postgres-py-1.0.0",
        "postgres-py-1.0.1-json",
        "postgres-py-2.0.0",
        "postgres-py-2.0.8",
        "postgres-py-2.0.10",
        "postgres-py-2.0.12",
        "postgres-py-2.0.21",
        "postgres-py-3.2.0",
        "postgres-js-1.0.5",
        "postgres-js-0.1.3",
        "postgres-py-shallow-2.0.21",
        "postgres-py-shallow-3.2.0",
    ] {
        let db = pg::restored(&url, fixture, "inspect").await;
        let before = pg::digest(&db).await;
        let store = AnyStore::open(&db).await.expect(fixture);
        let threads = store.threads(&StoreKeys::none()).await.expect(fixture);
        let names: Vec<&str> = threads.iter().map(|t| t.thread_id.as_str()).collect();
        assert_eq!(names, ["t-main", "t-short"], "{fixture}");
        for t in &threads {
            let h = store.history(&t.thread_id).await.expect("history");
            assert_eq!(h.nodes.len() as u64, t.checkpoints, "{fixture}");
            assert!(t.latest_step.is_some(), "{fixture}");
        }
        if fixture == "postgres-py-3.2.0" {
            let t = &threads[0];
            assert!(t.latest_ts.is_some());
            let state = store
                .state(&StoreKeys::none(), &t.thread_id, &t.latest_checkpoint_id)
                .await
                .expect("state")
                .expect("present");
            assert!(state["checkpoint"]["channel_values"]["messages"].is_array());
        }
        if fixture.contains("shallow") {
            shallow_reads_as_its_saver_read(fixture, &store, &threads).await;
        }
        let stats = store
            .stats(&StoreKeys::none(), &StatsOptions::new())
            .await
            .expect("stats");
        assert!(stats.total.blobs.rows > 0, "{fixture}");
        drop(store);
        assert_eq!(pg::digest(&db).await, before, "{fixture}: rows changed");
    }
}

/// A shallow saver's store (`postgres-py-shallow-*`) as the shallow saver itself read
/// it back (`reads.json`): per thread the root namespace's one checkpoint is the
/// latest, with no parent, and its state holds the values and pending writes that
/// saver returned.
async fn shallow_reads_as_its_saver_read(
    fixture: &str,
    store: &AnyStore,
    threads: &[ThreadSummary],
) {
    let text = fs::read_to_string(stores().join(fixture).join("reads.json")).expect("reads.json");
    let reads: serde_json::Value = serde_json::from_str(&text).expect("json");
    for t in threads {
        let recorded: Vec<&serde_json::Value> = reads["threads"][&t.thread_id]["get_tuple"]
            .as_array()
            .expect("get_tuple")
            .iter()
            .map(|x| x.get("$CheckpointTuple").unwrap_or(x))
            .collect();
        assert_eq!(recorded.len() as u64, t.checkpoints, "{}", t.thread_id);
        let root = recorded
            .iter()
            .find(|x| x["config"]["configurable"]["checkpoint_ns"] == "")
            .expect("a root checkpoint");
        assert_eq!(
            root["checkpoint"]["id"], t.latest_checkpoint_id,
            "{}",
            t.thread_id
        );
        assert!(root["parent_config"].is_null());
        let state = store
            .state(&StoreKeys::none(), &t.thread_id, &t.latest_checkpoint_id)
            .await
            .expect("state")
            .expect("present");
        assert!(state["parent_checkpoint_id"].is_null(), "{state}");
        let values = state["checkpoint"]["channel_values"]
            .as_object()
            .expect("values");
        let want = root["checkpoint"]["channel_values"]
            .as_object()
            .expect("recorded values");
        let mut got_names: Vec<&String> = values.keys().collect();
        let mut want_names: Vec<&String> = want.keys().collect();
        got_names.sort();
        want_names.sort();
        assert_eq!(got_names, want_names, "{}", t.thread_id);
        assert_eq!(
            values["messages"].as_array().map(Vec::len),
            want["messages"].as_array().map(Vec::len),
            "{}",
            t.thread_id
        );
        assert_eq!(
            state["pending_writes"].as_array().map(Vec::len),
            root["pending_writes"].as_array().map(Vec::len),
            "{}",
            t.thread_id
        );
    }
}

async fn export_to(
    location: &str,
    path: &Path,
    threads: &[&str],
) -> langgraph_codec::store::ExportReport {
    let store = AnyStore::open(location).await.expect("open");
    let mut file = std::io::BufWriter::new(fs::File::create(path).expect("create"));
    let options = langgraph_codec::store::ExportOptions::new()
        .threads(threads.iter().copied())
        .page_size(3);
    langgraph_codec::store::export(&store, &mut file, &options)
        .await
        .expect("export")
}

async fn import_from(path: &Path, target: &str) -> langgraph_codec::store::ImportReport {
    let mut input = std::io::BufReader::new(fs::File::open(path).expect("open"));
    let options = langgraph_codec::store::ImportOptions::new().batch_size(4);
    langgraph_codec::store::import(&mut input, "backup", target, &options)
        .await
        .expect("import")
}

/// Every row of an SQLite store as Python's sqlite3 would list them.
fn sqlite_rows(path: &Path) -> Vec<String> {
    let conn = rusqlite::Connection::open(path).expect("open");
    let mut out = Vec::new();
    for sql in [
        "SELECT thread_id, checkpoint_ns, checkpoint_id, parent_checkpoint_id, type, hex(checkpoint), hex(metadata) FROM checkpoints ORDER BY 1, 2, 3",
        "SELECT thread_id, checkpoint_ns, checkpoint_id, task_id, idx, task_path, channel, type, hex(value) FROM writes ORDER BY 1, 2, 3, 4, 5",
    ] {
        let mut stmt = conn.prepare(sql).expect("prepare");
        let n = stmt.column_count();
        let rows = stmt
            .query_map([], |r| {
                let mut cells = Vec::new();
                for i in 0..n {
                    let v: rusqlite::types::Value = r.get(i)?;
                    cells.push(format!("{v:?}"));
                }
                Ok(cells.join("|"))
            })
            .expect("query")
            .collect::<Result<Vec<_>, _>>()
            .expect("rows");
        out.extend(rows);
    }
    out
}

/// A writer that, the first time it is called, deletes thread `t-short` (its
/// checkpoints and writes) and changes a checkpoint's metadata of `t-main`, committing
/// through a connection of its own that it then closes (the close of a WAL file's last
/// writer checkpoints it into the database file).
fn writer_once(path: &Path) -> impl Fn() + Send + Sync + 'static {
    let path = path.to_path_buf();
    let fired = std::sync::atomic::AtomicBool::new(false);
    move || {
        if fired.swap(true, std::sync::atomic::Ordering::SeqCst) {
            return;
        }
        let conn = rusqlite::Connection::open(&path).expect("writer opens");
        conn.busy_timeout(std::time::Duration::from_secs(10))
            .expect("busy timeout");
        conn.execute_batch(
            "BEGIN IMMEDIATE;
             DELETE FROM writes WHERE thread_id = 't-short';
             DELETE FROM checkpoints WHERE thread_id = 't-short';
             UPDATE checkpoints SET metadata = CAST('{\"step\": 99}' AS BLOB)
               WHERE thread_id = 't-main' AND checkpoint_id = (SELECT max(checkpoint_id) FROM checkpoints WHERE thread_id = 't-main');
             COMMIT;",
        )
        .expect("writer writes");
    }
}

/// Export and copy of a SQLite store a writer changes while they read: each reads one
/// point in time (one read transaction), so the file and the target hold the store as
/// it was when they began — not some pages from before the write and some after. The
/// writer's change is real: the store has it afterwards.
#[tokio::test]
async fn export_and_copy_of_a_live_sqlite_store_are_one_point_in_time() {
    use langgraph_codec::store::{copy, export, CopyOptions, ExportOptions};
    let dir = scratch("snapshot");
    let none = StoreKeys::none();
    // What an export and a copy of the store at rest hold.
    let at_rest = python_store_in(&dir);
    let want_file = dir.join("want.jsonl");
    export_to(&at_rest, &want_file, &[]).await;
    let want_copy = dir.join("want-copy.db");
    copy(
        &at_rest,
        want_copy.to_str().expect("utf-8"),
        &none,
        &CopyOptions::new(),
    )
    .await
    .expect("copy at rest");
    for (i, op) in ["export", "copy"].into_iter().enumerate() {
        let live = dir.join(format!("live-{i}.sqlite"));
        fs::copy(Path::new(&at_rest), &live).expect("copy the store");
        let location = live.to_str().expect("utf-8").to_owned();
        let write = writer_once(&live);
        match op {
            "export" => {
                let store = AnyStore::open(&location).await.expect("open");
                let mut got = Vec::new();
                let options = ExportOptions::new()
                    .page_size(2)
                    .on_progress(move |_| write());
                export(&store, &mut got, &options).await.expect("export");
                drop(store);
                assert_eq!(
                    String::from_utf8(got).expect("utf-8"),
                    fs::read_to_string(&want_file).expect("want"),
                    "the export is not the store as it was when it began"
                );
            }
            _ => {
                let target = dir.join(format!("copy-{i}.db"));
                let report = copy(
                    &location,
                    target.to_str().expect("utf-8"),
                    &none,
                    &CopyOptions::new()
                        .batch_size(2)
                        .page_size(2)
                        .on_progress(move |_| write()),
                )
                .await
                .expect("copy");
                assert!(report.mismatches.is_empty(), "{:?}", report.mismatches);
                assert_eq!(
                    sqlite_rows(&target),
                    sqlite_rows(&want_copy),
                    "the copy is not the store as it was when it began"
                );
            }
        }
        let rows = sqlite_rows(&live);
        assert!(
            !rows.iter().any(|r| r.starts_with("Text(\"t-short\")")),
            "the writer's delete is in the store"
        );
    }
    let _ = fs::remove_dir_all(&dir);
}

/// The same on Postgres: an export reads under one `REPEATABLE READ` snapshot, so a
/// writer's commit between its pages is not in the file. (A copy from Postgres reads the
/// checkpoint keys and writes in the snapshot but each checkpoint through the saver's
/// `get_tuple`: one deleted meanwhile stops the copy, named, and a rerun goes on.)
#[tokio::test]
async fn an_export_of_a_live_postgres_store_is_one_point_in_time() {
    use langgraph_codec::store::{export, ExportOptions};
    let Some(url) = pg::url() else { return };
    let dir = scratch("pg-snapshot");
    let at_rest = pg::restored(&url, "postgres-py-3.2.0", "snapshot_rest").await;
    let want_file = dir.join("want.jsonl");
    export_to(&at_rest, &want_file, &[]).await;
    let live = pg::restored(&url, "postgres-py-3.2.0", "snapshot_live").await;
    // The writer: on the first page, deletes thread t-short in its own transaction.
    let fired = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let write = {
        let (live, fired) = (live.clone(), Arc::clone(&fired));
        move || {
            if fired.swap(true, std::sync::atomic::Ordering::SeqCst) {
                return;
            }
            let live = live.clone();
            std::thread::spawn(move || {
                tokio::runtime::Builder::new_current_thread()
                    .enable_all()
                    .build()
                    .expect("runtime")
                    .block_on(async {
                        pg::connect(&live)
                            .await
                            .batch_execute(
                                "BEGIN;
                                 DELETE FROM checkpoint_writes WHERE thread_id = 't-short';
                                 DELETE FROM checkpoint_blobs WHERE thread_id = 't-short';
                                 DELETE FROM checkpoints WHERE thread_id = 't-short';
                                 COMMIT;",
                            )
                            .await
                            .expect("writer writes");
                    });
            })
            .join()
            .expect("writer");
        }
    };
    let store = AnyStore::open(&live).await.expect("open");
    let mut got = Vec::new();
    let options = ExportOptions::new()
        .page_size(2)
        .on_progress(move |_| write());
    export(&store, &mut got, &options).await.expect("export");
    assert!(fired.load(std::sync::atomic::Ordering::SeqCst));
    assert_eq!(
        String::from_utf8(got).expect("utf-8"),
        fs::read_to_string(&want_file).expect("want"),
        "the export is not the store as it was when it began"
    );
    let left = pg::connect(&live)
        .await
        .query_one(
            "SELECT count(*) FROM checkpoints WHERE thread_id = 't-short'",
            &[],
        )
        .await
        .expect("count")
        .get::<_, i64>(0);
    assert_eq!(left, 0, "the writer's delete is in the store");
    let _ = fs::remove_dir_all(&dir);
}

/// A source whose layout changes under a copy: `lgcodec store upgrade` (Python's
/// `setup()` migrations) run on an old store while a copy of it reads. SQLite: the copy
/// reads one point in time, so the upgrade (its own write transaction) waits for no one
/// and the copy goes on with the columns it began with. Postgres (a 2.0.10 store,
/// migration 9's `ALTER TABLE checkpoint_writes` still to run): the `ALTER TABLE` waits
/// for the copy's read snapshot, and is let run before the copy reads on, so the copy's
/// next read of `checkpoint_writes` queues behind it; the copy gives up that wait after
/// its lock timeout, ends its snapshot (the `ALTER TABLE` goes through) and reads on in
/// a new one. Either way the copy ends with no mismatch, the target equal to a copy of
/// the store at rest, and the source is upgraded. The copy runs under a time limit, so
/// a copy that waits forever fails the test instead of hanging it.
#[tokio::test]
async fn a_source_upgraded_under_a_copy_copies_as_it_was_and_ends_upgraded() {
    use langgraph_codec::store::{copy, upgrade, CopyOptions, UpgradeOptions};
    let dir = scratch("layout-change");
    let none = StoreKeys::none();
    // Runs the upgrade of `source` once, on a thread and runtime of its own, without
    // waiting for it to end; on Postgres, the copy reads on once the upgrade's
    // `ALTER TABLE` waits for the copy's snapshot.
    let upgrade_once = |source: String, postgres: bool| {
        let fired = Arc::new(std::sync::atomic::AtomicBool::new(false));
        let handle: Arc<std::sync::Mutex<Option<std::thread::JoinHandle<bool>>>> = Arc::default();
        let (f, h) = (Arc::clone(&fired), Arc::clone(&handle));
        let callback = move |_: &langgraph_codec::store::Progress| {
            if f.swap(true, std::sync::atomic::Ordering::SeqCst) {
                return;
            }
            let on_thread =
                |work: std::pin::Pin<Box<dyn std::future::Future<Output = bool> + Send>>| {
                    std::thread::spawn(move || {
                        tokio::runtime::Builder::new_current_thread()
                            .enable_all()
                            .build()
                            .expect("runtime")
                            .block_on(work)
                    })
                };
            let s = source.clone();
            *h.lock().expect("handle") = Some(on_thread(Box::pin(async move {
                upgrade(&s, &UpgradeOptions::new())
                    .await
                    .expect("upgrade")
                    .current
            })));
            if postgres {
                let s = source.clone();
                let queued = on_thread(Box::pin(async move {
                    let client = pg::connect(&s).await;
                    for _ in 0..600 {
                        let waiting: i64 = client
                            .query_one(
                                "SELECT count(*) FROM pg_stat_activity \
                                 WHERE datname = current_database() AND wait_event_type = 'Lock' \
                                 AND query LIKE '%ALTER TABLE%task_path%'",
                                &[],
                            )
                            .await
                            .expect("pg_stat_activity")
                            .get(0);
                        if waiting > 0 {
                            return true;
                        }
                        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
                    }
                    false
                }))
                .join()
                .expect("watcher");
                assert!(
                    queued,
                    "the upgrade's ALTER TABLE did not wait for the copy's snapshot within 30 s"
                );
            }
        };
        (callback, fired, handle)
    };
    let mut cases = vec![(
        "sqlite",
        {
            let path = dir.join("old.sqlite");
            fs::copy(stores().join("sqlite-py-2.0.2/store.sqlite"), &path).expect("copy");
            path.to_str().expect("utf-8").to_owned()
        },
        {
            let path = dir.join("old-rest.sqlite");
            fs::copy(stores().join("sqlite-py-2.0.2/store.sqlite"), &path).expect("copy");
            path.to_str().expect("utf-8").to_owned()
        },
    )];
    if let Some(url) = pg::url() {
        cases.push((
            "postgres",
            pg::restored(&url, "postgres-py-2.0.10", "layout_change").await,
            pg::restored(&url, "postgres-py-2.0.10", "layout_rest").await,
        ));
    }
    for (name, source, at_rest) in cases {
        let want = dir.join(format!("{name}-want.db"));
        copy(
            &at_rest,
            want.to_str().expect("utf-8"),
            &none,
            &CopyOptions::new(),
        )
        .await
        .expect("copy at rest");
        let postgres = name == "postgres";
        let (callback, fired, handle) = upgrade_once(source.clone(), postgres);
        let target = dir.join(format!("{name}-copy.db"));
        // Seconds: the copy takes about one lock timeout more than at rest (well
        // under 10 s); a copy that never gives way hits the limit.
        let report = tokio::time::timeout(
            std::time::Duration::from_secs(60),
            copy(
                &source,
                target.to_str().expect("utf-8"),
                &none,
                &CopyOptions::new()
                    .batch_size(2)
                    .page_size(2)
                    .on_progress(callback),
            ),
        )
        .await
        .unwrap_or_else(|_| panic!("{name}: the copy did not end within 60 s"))
        .expect("copy");
        assert!(fired.load(std::sync::atomic::Ordering::SeqCst), "{name}");
        let upgraded = handle
            .lock()
            .expect("handle")
            .take()
            .expect("the upgrade ran")
            .join()
            .expect("upgrade thread");
        assert!(
            upgraded,
            "{name}: the source is in today's layout afterwards"
        );
        assert!(
            report.mismatches.is_empty(),
            "{name}: {:?}",
            report.mismatches
        );
        assert_eq!(
            sqlite_rows(&target),
            sqlite_rows(&want),
            "{name}: the copy is not the store as it was"
        );
        // Postgres: the copy stepped aside for the ALTER TABLE queued behind it; no
        // connection was lost.
        assert_eq!(
            (report.lock_retries > 0, report.reconnects),
            (postgres, 0),
            "{name}: {report:?}"
        );
    }
    let _ = fs::remove_dir_all(&dir);
}

/// Import of a backup that is not whole: cut in the middle of a row, it imports the
/// rows before the cut and reports where it was cut (the CLI exits 1); two backups
/// concatenated, an end line whose counts differ from the rows, and a row of a thread
/// the header does not list are each refused, named by line: the target keeps the
/// batches committed before the bad line, a new file saying how many checkpoints it
/// holds.
#[tokio::test]
async fn import_checks_the_backup_is_whole_and_one() {
    use langgraph_codec::store::{import, ImportOptions};
    let dir = scratch("import-checks");
    let source = python_store_in(&dir);
    let backup = dir.join("b.jsonl");
    export_to(&source, &backup, &[]).await;
    let text = fs::read_to_string(&backup).expect("backup");
    let lines: Vec<&str> = text.lines().collect();
    let run = |body: String, target: &str| {
        let target = dir.join(target).to_str().expect("utf-8").to_owned();
        async move {
            let mut input = std::io::Cursor::new(body.into_bytes());
            import(
                &mut input,
                "b.jsonl",
                &target,
                &ImportOptions::new().batch_size(4),
            )
            .await
        }
    };
    // Cut in the middle of line 10 (the header, then 8 whole rows, then half a row).
    let cut_line = lines[9];
    let mut cut = lines[..9].join("\n");
    cut.push('\n');
    cut.push_str(&cut_line[..cut_line.len() / 2]);
    let report = run(cut, "cut.db")
        .await
        .expect("a cut file imports what it holds");
    assert!(!report.complete);
    assert_eq!(report.inserted, 8, "{report:?}");
    assert!(
        report
            .cut_short
            .as_deref()
            .is_some_and(|c| c.contains("b.jsonl:10")),
        "{report:?}"
    );
    // A refused import into a new file: the file stays when batches were committed
    // (the error says how many checkpoints it holds), else nothing is left.
    let settled = |name: &str, err: &langgraph_codec::Error| -> i64 {
        let path = dir.join(name);
        if !path.exists() {
            for suffix in ["-wal", "-shm", "-journal"] {
                assert!(
                    !dir.join(format!("{name}{suffix}")).exists(),
                    "{name}{suffix}"
                );
            }
            assert!(!err.to_string().contains("keeps the"), "{err}");
            return 0;
        }
        let conn = rusqlite::Connection::open(&path).expect("open");
        let held: i64 = conn
            .query_row("SELECT count(*) FROM checkpoints", [], |r| r.get(0))
            .expect("count");
        let said = format!(
            "{} was created by this import and keeps the {held} checkpoint(s)",
            path.display()
        );
        assert!(held > 0 && err.to_string().contains(&said), "{err}");
        held
    };
    // Two backups, one after the other.
    let err = run(format!("{text}{text}"), "twice.db")
        .await
        .expect_err("concatenated");
    assert!(err.to_string().contains("after the end line"), "{err}");
    assert!(settled("twice.db", &err) > 0, "{err}");
    assert!(
        err.to_string()
            .contains(&format!("b.jsonl:{}", lines.len() + 1)),
        "{err}"
    );
    // An end line that counts one checkpoint more than the file holds.
    let end = lines.last().expect("end line");
    let v: serde_json::Value = serde_json::from_str(end).expect("end json");
    let more = v["checkpoints"].as_u64().expect("count") + 1;
    let wrong = text.replace(
        &format!("\"checkpoints\":{}", v["checkpoints"]),
        &format!("\"checkpoints\":{more}"),
    );
    assert_ne!(wrong, text);
    let err = run(wrong, "count.db").await.expect_err("wrong count");
    assert!(err.to_string().contains("the end line counts"), "{err}");
    assert!(settled("count.db", &err) > 0, "{err}");
    // A backup of t-main with a row of t-short slipped in before its end line.
    let one = dir.join("one.jsonl");
    export_to(&source, &one, &["t-main"]).await;
    let one_text = fs::read_to_string(&one).expect("one");
    let stray = lines
        .iter()
        .find(|l| l.contains("\"thread_id\":\"t-short\""))
        .expect("a t-short row");
    let mut one_lines: Vec<&str> = one_text.lines().collect();
    one_lines.insert(one_lines.len() - 1, stray);
    let err = run(one_lines.join("\n") + "\n", "stray.db")
        .await
        .expect_err("stray thread");
    assert!(err.to_string().contains("does not name"), "{err}");
    // Into stray.db, new: batches of 4 before the stray row were committed, and kept.
    let held_by_stray = settled("stray.db", &err);
    assert!(held_by_stray > 0, "{err}");
    // Into a store that existed, the rows before the stray one went in: a rerun of the
    // right file finds them.
    drop(SqliteSaver::create(dir.join("kept.db")).expect("an empty store"));
    let err = run(one_lines.join("\n") + "\n", "kept.db")
        .await
        .expect_err("stray thread");
    assert!(err.to_string().contains("does not name"), "{err}");
    let before_stray = one_lines.len() - 3; // the header, the stray row, the end line
    assert_eq!(sqlite_rows(&dir.join("kept.db")).len(), before_stray);
    let _ = fs::remove_dir_all(&dir);
}

/// `verify_backup` reads a whole file without a store and finds what import refuses:
/// counts of a whole file, where a cut file stops, and concatenated files, wrong end
/// counts and stray threads as errors naming the line. `import --dry-run` counts what
/// an import would insert, find identical or in conflict, and writes nothing.
/// A backup with a thread left out holds the whole backup's rows less that thread's,
/// line for line, with the thread named in its header; `verify` and `import` refuse
/// that thread's rows put back in. On Python's SQLite and Postgres stores, and through
/// the CLI.
#[tokio::test]
async fn a_backup_without_a_thread_holds_the_rest_and_refuses_its_rows() {
    use langgraph_codec::store::{export, import, verify_backup, ExportOptions, ImportOptions};
    let dir = scratch("export-excluded");
    let sqlite = dir.join("s.sqlite");
    fs::copy(
        stores().join("sqlite-py-3.1.2").join("store.sqlite"),
        &sqlite,
    )
    .expect("copy");
    let mut sources = vec![sqlite.to_str().expect("utf-8").to_owned()];
    if let Some(url) = pg::url() {
        sources.push(pg::restored(&url, "postgres-py-3.2.0", "export_excluded").await);
    }
    let of_thread = |line: &str, thread: &str| -> bool {
        serde_json::from_str::<Json>(line).expect("a JSON line")["thread_id"] == thread
    };
    for (n, source) in sources.iter().enumerate() {
        let whole = dir.join(format!("whole{n}.jsonl"));
        export_to(source, &whole, &[]).await;
        let whole = fs::read_to_string(&whole).expect("whole");
        let store = AnyStore::open(source).await.expect("open");
        let mut out = Vec::new();
        let options = ExportOptions::new()
            .exclude_threads(["t-short"])
            .page_size(3);
        let report = export(&store, &mut out, &options).await.expect("export");
        let text = String::from_utf8(out).expect("UTF-8");
        let (header, rest) = text.split_once('\n').expect("a header");
        let header: Json = serde_json::from_str(header).expect("header");
        assert_eq!(header["excluded_threads"], serde_json::json!(["t-short"]));
        assert_eq!(header["threads"], Json::Null);
        // The rows: the whole backup's (between its header and end line) less t-short's.
        let rows = |body: &str| -> Vec<String> {
            body.lines()
                .filter(|l| !l.starts_with("{\"t\":\"end\"") && !l.contains("\"format\""))
                .map(str::to_owned)
                .collect()
        };
        let expected: Vec<String> = rows(&whole)
            .into_iter()
            .filter(|l| !of_thread(l, "t-short"))
            .collect();
        let left_out = rows(&whole).len() - expected.len();
        assert!(
            left_out > 0 && !expected.is_empty(),
            "{source}: both threads hold rows"
        );
        assert_eq!(rows(rest), expected, "{source}");
        assert_eq!(
            report.checkpoints + report.blobs + report.writes,
            expected.len() as u64
        );
        assert_eq!(report.excluded_threads, ["t-short"]);
        // The thread first in key order left out, pages of several sizes: the other
        // thread's rows that share a page with it are written all the same.
        for size in [2, 3, 4] {
            let mut out = Vec::new();
            let options = ExportOptions::new()
                .exclude_threads(["t-main"])
                .page_size(size);
            export(&store, &mut out, &options).await.expect("export");
            let text = String::from_utf8(out).expect("UTF-8");
            let expected: Vec<String> = rows(&whole)
                .into_iter()
                .filter(|l| !of_thread(l, "t-main"))
                .collect();
            assert_eq!(rows(&text), expected, "{source}, pages of {size}");
        }
        let check = verify_backup(&mut text.as_bytes(), "b.jsonl", None).expect("verify");
        assert!(check.complete, "{check:?}");
        assert_eq!(check.excluded_threads, ["t-short"]);
        // A row of t-short put back (with the end line's counts made to match) is not
        // from this backup: refused by verify and by import, naming its line.
        let theirs = rows(&whole)
            .into_iter()
            .find(|l| of_thread(l, "t-short") && l.contains("\"t\":\"checkpoint\""))
            .expect("a checkpoint of t-short");
        let mut lines: Vec<String> = text.lines().map(str::to_owned).collect();
        let end = lines.pop().expect("the end line");
        let mut end: Json = serde_json::from_str(&end).expect("end");
        end["checkpoints"] = Json::from(end["checkpoints"].as_u64().expect("count") + 1);
        lines.insert(1, theirs);
        lines.push(end.to_string());
        let bad = lines.join("\n");
        let err = verify_backup(&mut bad.as_bytes(), "b.jsonl", None).expect_err("verify");
        assert_eq!(err.kind(), ErrorKind::Backup, "{err}");
        assert!(
            err.to_string().contains("b.jsonl:2") && err.to_string().contains("left out"),
            "{err}"
        );
        let target = dir.join(format!("t{n}.db"));
        if n == 0 {
            let err = import(
                &mut bad.as_bytes(),
                "b.jsonl",
                target.to_str().expect("utf-8"),
                &ImportOptions::new(),
            )
            .await
            .expect_err("import");
            assert!(err.to_string().contains("left out"), "{err}");
            assert!(!target.exists(), "nothing was imported: no file is left");
        }
        // Through the CLI: the summary and the report count the thread left out.
        let file = dir.join(format!("cli{n}.jsonl"));
        let file = file.to_str().expect("utf-8");
        let (code, out, err) = crate::lgcodec(
            &[
                "store",
                "export",
                source,
                file,
                "--exclude-thread",
                "t-short",
                "--json",
            ],
            &[],
        );
        assert_eq!(code, 0, "{err}");
        assert!(err.contains("1 thread(s) left out"), "{err}");
        let json: Json = serde_json::from_str(&out).expect("the report");
        assert_eq!(json["excluded_threads"], serde_json::json!(["t-short"]));
        assert_eq!(fs::read_to_string(file).expect("cli file"), text);
        let (code, out, err) = crate::lgcodec(&["store", "verify", file, "--json"], &[]);
        assert_eq!(code, 0, "{err}");
        assert!(err.contains("1 thread(s) left out"), "{err}");
        let json: Json = serde_json::from_str(&out).expect("the check");
        assert_eq!(json["excluded_threads"], serde_json::json!(["t-short"]));
    }
    let _ = fs::remove_dir_all(&dir);
}

/// One thread restored from a backup of the whole store: `import --thread` puts back a
/// thread deleted from the store and nothing of the others (a write of `t-main`
/// deleted too stays deleted); `--exclude-thread` imports the rest. The rows skipped
/// are counted. On Python's SQLite and Postgres stores, and through the CLI.
#[tokio::test]
async fn one_thread_is_restored_from_a_backup_of_the_whole_store() {
    use langgraph_codec::store::{import, ImportOptions};
    let dir = scratch("import-thread");
    let source = dir.join("s.sqlite");
    fs::copy(
        stores().join("sqlite-py-3.1.2").join("store.sqlite"),
        &source,
    )
    .expect("copy");
    let backup = dir.join("b.jsonl");
    export_to(source.to_str().expect("utf-8"), &backup, &[]).await;
    let text = fs::read_to_string(&backup).expect("backup");
    let count = |thread: &str| {
        text.lines()
            .filter(|l| l.contains(&format!("\"thread_id\":\"{thread}\"")))
            .count() as u64
    };
    let (short, main) = (count("t-short"), count("t-main"));
    assert!(short > 0 && main > 0);
    let restore = |target: std::path::PathBuf, options: ImportOptions| {
        let body = text.clone();
        async move {
            import(
                &mut body.as_bytes(),
                "b.jsonl",
                target.to_str().expect("utf-8"),
                &options.batch_size(3),
            )
            .await
            .expect("import")
        }
    };
    let of = |path: &Path, thread: &str| -> Vec<String> {
        sqlite_rows(path)
            .into_iter()
            .filter(|r| r.contains(&format!("\"{thread}\"")))
            .collect()
    };
    // t-short deleted, and one write of t-main.
    let target = dir.join("t.sqlite");
    fs::copy(&source, &target).expect("copy");
    {
        let conn = rusqlite::Connection::open(&target).expect("open");
        conn.execute_batch(
            "DELETE FROM checkpoints WHERE thread_id = 't-short';
             DELETE FROM writes WHERE thread_id = 't-short';
             DELETE FROM writes WHERE rowid = (SELECT min(rowid) FROM writes WHERE thread_id = 't-main');",
        )
        .expect("delete");
    }
    let main_before = of(&target, "t-main");
    assert!(of(&target, "t-short").is_empty() && !of(&source, "t-short").is_empty());
    let report = restore(target.clone(), ImportOptions::new().threads(["t-short"])).await;
    assert_eq!(
        (report.inserted, report.identical, report.skipped),
        (short, 0, main),
        "{report:?}"
    );
    assert!(report.complete, "{report:?}");
    assert_eq!(of(&target, "t-short"), of(&source, "t-short"));
    assert_eq!(of(&target, "t-main"), main_before, "t-main is not touched");
    // Every thread but t-main into a new file: t-short's rows alone.
    let rest = dir.join("rest.sqlite");
    let report = restore(
        rest.clone(),
        ImportOptions::new().exclude_threads(["t-main"]),
    )
    .await;
    assert_eq!(
        (report.inserted, report.skipped),
        (short, main),
        "{report:?}"
    );
    assert_eq!(report.excluded_threads, ["t-main"]);
    assert_eq!(sqlite_rows(&rest), of(&source, "t-short"));
    // Through the CLI, dry: what would go in, and the rows skipped, said.
    let (code, out, err) = crate::lgcodec(
        &[
            "store",
            "import",
            backup.to_str().expect("utf-8"),
            dir.join("dry.sqlite").to_str().expect("utf-8"),
            "--thread",
            "t-main",
            "--dry-run",
            "--json",
        ],
        &[],
    );
    assert_eq!(code, 0, "{err}");
    assert!(
        err.contains(&format!("{short} row(s) of threads not selected skipped")),
        "{err}"
    );
    let json: Json = serde_json::from_str(&out).expect("the report");
    assert_eq!(
        (&json["inserted"], &json["skipped"]),
        (&Json::from(main), &Json::from(short))
    );
    // Postgres: t-short deleted from a copy of Python's store, restored from the
    // backup of the other, ends row for row as that store.
    if let Some(url) = pg::url() {
        let whole = pg::restored(&url, "postgres-py-3.2.0", "import_thread_a").await;
        let target = pg::restored(&url, "postgres-py-3.2.0", "import_thread_b").await;
        pg::connect(&target)
            .await
            .batch_execute(
                "DELETE FROM checkpoints WHERE thread_id = 't-short';
                 DELETE FROM checkpoint_blobs WHERE thread_id = 't-short';
                 DELETE FROM checkpoint_writes WHERE thread_id = 't-short';",
            )
            .await
            .expect("delete");
        assert_ne!(pg::digest(&whole).await, pg::digest(&target).await);
        let file = dir.join("pg.jsonl");
        export_to(&whole, &file, &[]).await;
        let mut input = std::io::BufReader::new(fs::File::open(&file).expect("open"));
        let report = import(
            &mut input,
            "pg.jsonl",
            &target,
            &ImportOptions::new().threads(["t-short"]).batch_size(3),
        )
        .await
        .expect("import");
        assert_eq!(report.identical, 0, "{report:?}");
        assert!(report.inserted > 0 && report.skipped > 0, "{report:?}");
        assert_eq!(pg::digest(&whole).await, pg::digest(&target).await);
    }
    let _ = fs::remove_dir_all(&dir);
}

#[tokio::test]
async fn a_backup_is_verified_without_a_store_and_an_import_is_tried_dry() {
    use langgraph_codec::store::{import, verify_backup, ImportOptions};
    let dir = scratch("verify-dry");
    let source = python_store_in(&dir);
    let backup = dir.join("b.jsonl");
    export_to(&source, &backup, &[]).await;
    let text = fs::read_to_string(&backup).expect("backup");
    let lines: Vec<&str> = text.lines().collect();
    let verify = |body: &str| {
        let mut input = std::io::Cursor::new(body.as_bytes().to_vec());
        verify_backup(&mut input, "b.jsonl", None)
    };
    // Python's store: 12 checkpoints and 27 writes (vectors/stores/sqlite-py-3.1.2).
    let whole = verify(&text).expect("whole");
    assert!(whole.complete && whole.cut_short.is_none(), "{whole:?}");
    assert_eq!((whole.checkpoints, whole.blobs, whole.writes), (12, 0, 27));
    assert_eq!(whole.backend, "sqlite");
    let cut_line = lines[9];
    let cut = format!(
        "{}\n{}",
        lines[..9].join("\n"),
        &cut_line[..cut_line.len() / 2]
    );
    let report = verify(&cut).expect("a cut file is read to its cut");
    assert!(!report.complete);
    assert_eq!(report.checkpoints + report.writes, 8);
    assert!(report
        .cut_short
        .as_deref()
        .is_some_and(|c| c.contains("b.jsonl:10")));
    let no_end = lines[..lines.len() - 1].join("\n");
    let report = verify(&no_end).expect("no end line");
    assert!(!report.complete && report.cut_short.is_none(), "{report:?}");
    let err = verify(&format!("{text}{text}")).expect_err("concatenated");
    assert!(err.to_string().contains("after the end line"), "{err}");
    let garbled = text.replacen("\"t\":\"write\"", "\"t\":\"wrote\"", 1);
    let err = verify(&garbled).expect_err("unknown kind");
    assert!(err.to_string().contains("unknown row kind"), "{err}");
    // Dry runs: into nothing (nothing created), beside an import, against a change.
    let dry = |target: std::path::PathBuf| {
        let body = text.clone();
        async move {
            let mut input = std::io::Cursor::new(body.into_bytes());
            import(
                &mut input,
                "b.jsonl",
                target.to_str().expect("utf-8"),
                &ImportOptions::new().dry_run(true),
            )
            .await
            .expect("dry run")
        }
    };
    let missing = dir.join("missing.db");
    let report = dry(missing.clone()).await;
    assert_eq!(
        (report.inserted, report.identical, report.conflicts),
        (39, 0, 0)
    );
    assert!(report.dry_run && report.complete && !report.created_tables);
    assert!(!missing.exists(), "a dry run created the target");
    let target = dir.join("restored.db");
    import_from(&backup, target.to_str().expect("utf-8")).await;
    let conn = rusqlite::Connection::open(&target).expect("open");
    conn.execute(
        "UPDATE writes SET value = x'c0' WHERE rowid = (SELECT min(rowid) FROM writes)",
        [],
    )
    .expect("change a write");
    conn.execute(
        "DELETE FROM checkpoints WHERE rowid = (SELECT max(rowid) FROM checkpoints)",
        [],
    )
    .expect("drop a checkpoint");
    drop(conn);
    let before = sqlite_rows(&target);
    let report = dry(target.clone()).await;
    assert_eq!(
        (report.inserted, report.identical, report.conflicts),
        (1, 37, 1)
    );
    assert_eq!(sqlite_rows(&target), before, "a dry run wrote");
    let _ = fs::remove_dir_all(&dir);
}

/// A Postgres store outside `public`, reached as Python reaches it
/// (`options=-csearch_path=app` in the URL): inspect, stats, export and upgrade find its
/// tables where the savers do (the connection's `current_schema()`), not in `public`.
#[tokio::test]
async fn a_postgres_store_in_the_search_path_schema_is_found_by_every_reader() {
    use langgraph_codec::store::{upgrade, UpgradeOptions};
    let Some(url) = pg::url() else { return };
    let dir = scratch("pg-schema");
    let db = pg::restored(&url, "postgres-py-3.2.0", "search_path").await;
    pg::connect(&db)
        .await
        .batch_execute("ALTER SCHEMA public RENAME TO app; CREATE SCHEMA public;")
        .await
        .expect("move the tables to schema app");
    let sep = if db.contains('?') { '&' } else { '?' };
    let in_app = format!("{db}{sep}options=-csearch_path%3Dapp");
    let store = AnyStore::open(&in_app)
        .await
        .expect("opens the store in app");
    let stats = store
        .stats(&StoreKeys::none(), &StatsOptions::new())
        .await
        .expect("stats");
    assert_eq!(stats.threads, 2, "{stats:?}");
    drop(store);
    let exported = export_to(&in_app, &dir.join("b.jsonl"), &[]).await;
    assert_eq!(exported.checkpoints, 12);
    let report = upgrade(&in_app, &UpgradeOptions::new().dry_run(true))
        .await
        .expect("upgrade dry run");
    assert!(report.current && report.steps.is_empty(), "{report:?}");
    // Without the search path, the database's public schema is empty: not a store.
    assert!(AnyStore::open(&db).await.is_err());
    let _ = fs::remove_dir_all(&dir);
}

#[tokio::test]
async fn sqlite_export_import_export_is_byte_identical_and_encrypted_rows_stay_encrypted() {
    let dir = scratch("backup");
    // A store Python wrote, and an encrypted one the saver wrote.
    let python = dir.join("python.sqlite");
    fs::copy(
        stores().join("sqlite-py-3.1.2").join("store.sqlite"),
        &python,
    )
    .expect("copy");
    let encrypted = dir.join("encrypted.db");
    let serde = EncryptedSerializer::from_aes_key(&[7u8; 16], AesMode::Eax).expect("serde");
    forked_store(&encrypted, Arc::new(serde)).await;
    for (name, source) in [("python", &python), ("encrypted", &encrypted)] {
        let first = dir.join(format!("{name}-1.jsonl"));
        let second = dir.join(format!("{name}-2.jsonl"));
        let restored = dir.join(format!("{name}-restored.db"));
        let exported = export_to(source.to_str().expect("utf-8"), &first, &[]).await;
        assert!(exported.checkpoints > 0 && exported.writes > 0);
        let report = import_from(&first, restored.to_str().expect("utf-8")).await;
        assert!(report.complete && report.created_tables, "{report:?}");
        assert_eq!(report.inserted, exported.checkpoints + exported.writes);
        export_to(restored.to_str().expect("utf-8"), &second, &[]).await;
        assert_eq!(
            fs::read(&first).expect("read"),
            fs::read(&second).expect("read"),
            "{name}: export of the import differs"
        );
        assert_eq!(
            sqlite_rows(source),
            sqlite_rows(&restored),
            "{name}: rows differ"
        );
        // Again: every row is already there and identical.
        let again = import_from(&first, restored.to_str().expect("utf-8")).await;
        assert_eq!((again.inserted, again.conflicts), (0, 0));
        assert_eq!(again.identical, exported.checkpoints + exported.writes);
    }
    let text = fs::read_to_string(dir.join("encrypted-1.jsonl")).expect("read");
    assert!(
        text.contains("\"type\":\"msgpack+aes\""),
        "encrypted rows stay encrypted"
    );
    let _ = fs::remove_dir_all(&dir);
}

/// Each line of an export is exactly what `serde_json` prints for its object (the
/// export writes the lines itself): text with quotes, backslashes, control characters
/// and non-ASCII, `null` cells, integers and base64 bytes, compared with the object
/// parsed back and printed again, and with the text put in.
#[tokio::test]
async fn export_lines_are_what_serde_json_prints_for_them() {
    let dir = scratch("export-lines");
    let path = dir.join("odd.sqlite");
    fs::copy(stores().join("sqlite-py-3.1.2").join("store.sqlite"), &path).expect("copy");
    let odd = "t \"q\" \\ \n\t\u{1}\u{1f} \u{7f} é 😀 /";
    {
        let conn = rusqlite::Connection::open(&path).expect("open");
        conn.execute(
            "INSERT INTO checkpoints (thread_id, checkpoint_ns, checkpoint_id, parent_checkpoint_id, type, checkpoint, metadata) \
             SELECT ?1, ?1, checkpoint_id, NULL, type, checkpoint, metadata FROM checkpoints LIMIT 1",
            [odd],
        )
        .expect("insert a checkpoint");
        conn.execute(
            "INSERT INTO writes (thread_id, checkpoint_ns, checkpoint_id, task_id, task_path, idx, channel, type, value) \
             SELECT ?1, ?1, checkpoint_id, ?1, ?1, -3, ?1, type, value FROM writes LIMIT 1",
            [odd],
        )
        .expect("insert a write");
    }
    let file = dir.join("odd.jsonl");
    export_to(path.to_str().expect("utf-8"), &file, &[]).await;
    let text = fs::read_to_string(&file).expect("read");
    let mut odd_rows = 0;
    for line in text.lines() {
        let parsed: serde_json::Value = serde_json::from_str(line).expect("a JSON line");
        assert_eq!(serde_json::to_string(&parsed).expect("print"), line);
        if parsed["thread_id"] == odd {
            odd_rows += 1;
            assert_eq!(parsed["checkpoint_ns"], odd, "{line}");
            match parsed["t"].as_str() {
                Some("checkpoint") => assert!(parsed["parent_checkpoint_id"].is_null()),
                Some("write") => {
                    assert_eq!(parsed["idx"], -3, "{line}");
                    assert_eq!(parsed["task_id"], odd, "{line}");
                }
                other => panic!("an odd row of kind {other:?}: {line}"),
            }
        }
    }
    assert_eq!(odd_rows, 2, "{text}");
    let _ = fs::remove_dir_all(&dir);
}

#[tokio::test]
async fn import_never_overwrites_a_different_row_and_one_thread_exports_alone() {
    let dir = scratch("conflict");
    let source = dir.join("s.sqlite");
    fs::copy(
        stores().join("sqlite-py-3.1.2").join("store.sqlite"),
        &source,
    )
    .expect("copy");
    let file = dir.join("b.jsonl");
    let exported = export_to(source.to_str().expect("utf-8"), &file, &["t-short"]).await;
    assert_eq!(
        (exported.checkpoints, exported.writes),
        (3, 8),
        "t-short's rows as Python's sqlite3 counted them (rows.json)"
    );
    let target = dir.join("t.db");
    import_from(&file, target.to_str().expect("utf-8")).await;
    {
        let conn = rusqlite::Connection::open(&target).expect("open");
        conn.execute(
            "UPDATE checkpoints SET metadata = CAST('{}' AS BLOB) WHERE checkpoint_id = (SELECT max(checkpoint_id) FROM checkpoints)",
            [],
        )
        .expect("change");
        conn.execute(
            "DELETE FROM writes WHERE rowid = (SELECT min(rowid) FROM writes)",
            [],
        )
        .expect("delete");
    }
    let before = sqlite_rows(&target);
    let report = import_from(&file, target.to_str().expect("utf-8")).await;
    assert_eq!(report.conflicts, 1, "{report:?}");
    assert_eq!(report.conflict_samples[0].kind, "checkpoint");
    assert_eq!(report.inserted, 1, "the deleted write comes back");
    assert_eq!(report.identical, 3 + 8 - 2);
    let after = sqlite_rows(&target);
    assert_eq!(after.len(), before.len() + 1);
    assert!(
        after.iter().any(|r| r.ends_with("|Text(\"7B7D\")")),
        "changed row kept"
    );
    // Every checkpoint changed: three conflicts counted, only as many described as asked.
    rusqlite::Connection::open(&target)
        .expect("open")
        .execute("UPDATE checkpoints SET metadata = CAST('{}' AS BLOB)", [])
        .expect("change");
    for (asked, listed) in [(1, 1), (0, 0), (20, 3)] {
        let mut input = std::io::BufReader::new(fs::File::open(&file).expect("open"));
        let options = langgraph_codec::store::ImportOptions::new().max_conflict_samples(asked);
        let report = langgraph_codec::store::import(
            &mut input,
            "backup",
            target.to_str().expect("utf-8"),
            &options,
        )
        .await
        .expect("import");
        assert_eq!(report.conflicts, 3, "{report:?}");
        assert_eq!(report.conflict_samples.len(), listed, "{report:?}");
    }

    // A file cut short restores what it holds and says so.
    let text = fs::read_to_string(&file).expect("read");
    let cut: Vec<&str> = text.lines().take(3).collect();
    let short = dir.join("short.jsonl");
    fs::write(&short, cut.join("\n")).expect("write");
    let partial = import_from(&short, dir.join("p.db").to_str().expect("utf-8")).await;
    assert!(!partial.complete);
    assert_eq!(partial.inserted, 2);
    let _ = fs::remove_dir_all(&dir);
}

#[tokio::test]
async fn postgres_export_import_export_is_byte_identical() {
    let Some(url) = pg::url() else { return };
    let dir = scratch("pg-backup");
    let source = pg::restored(&url, "postgres-py-3.2.0", "backup").await;
    let first = dir.join("1.jsonl");
    let second = dir.join("2.jsonl");
    let exported = export_to(&source, &first, &[]).await;
    assert!(exported.blobs > 0);
    let target = pg::fresh(&url, "backup_target").await;
    let report = import_from(&first, &target).await;
    assert!(report.complete && report.created_tables);
    assert_eq!(
        report.inserted,
        exported.checkpoints + exported.blobs + exported.writes
    );
    export_to(&target, &second, &[]).await;
    assert_eq!(fs::read(&first).expect("1"), fs::read(&second).expect("2"));
    assert_eq!(pg::digest(&source).await, pg::digest(&target).await);
    let again = import_from(&first, &target).await;
    assert_eq!((again.inserted, again.conflicts), (0, 0));
    // A backup of one backend does not go into the other.
    let mut input = std::io::BufReader::new(fs::File::open(&first).expect("open"));
    let err = langgraph_codec::store::import(
        &mut input,
        "backup",
        dir.join("x.db").to_str().expect("utf-8"),
        &langgraph_codec::store::ImportOptions::new(),
    )
    .await
    .expect_err("postgres backup into sqlite");
    assert!(err.to_string().contains("store copy"), "{err}");
    // Refused before the target is opened: no new, empty store is left behind.
    assert!(!dir.join("x.db").exists(), "the refused import made x.db");
    let _ = fs::remove_dir_all(&dir);
}

/// `import --dry-run` into Postgres reads the target in a read-only session and writes
/// nothing: into a database without the saver's tables every row would go in (no table
/// made); into one holding the rows every row is identical (the database unchanged);
/// into an older layout it is refused as not a store.
#[tokio::test]
async fn an_import_tried_dry_into_postgres_reads_the_target_and_writes_nothing() {
    let Some(url) = pg::url() else { return };
    let dir = scratch("pg-dry-import");
    let source = pg::restored(&url, "postgres-py-3.2.0", "dry_import").await;
    let backup = dir.join("b.jsonl");
    let exported = export_to(&source, &backup, &[]).await;
    let rows = exported.checkpoints + exported.blobs + exported.writes;
    let dry = |target: String| {
        let backup = backup.clone();
        async move {
            let mut input = std::io::BufReader::new(fs::File::open(&backup).expect("open"));
            langgraph_codec::store::import(
                &mut input,
                "b.jsonl",
                &target,
                &langgraph_codec::store::ImportOptions::new().dry_run(true),
            )
            .await
        }
    };
    let empty = pg::fresh(&url, "dry_import_empty").await;
    let report = dry(empty.clone()).await.expect("dry run into nothing");
    assert_eq!((report.inserted, report.identical), (rows, 0), "{report:?}");
    assert!(!report.created_tables, "{report:?}");
    let client = pg::connect(&empty).await;
    assert!(pg::tables_in(&client, "public").await.is_empty());
    import_from(&backup, &empty).await;
    let before = pg::digest(&empty).await;
    let report = dry(empty.clone()).await.expect("dry run into the rows");
    assert_eq!((report.inserted, report.identical), (0, rows), "{report:?}");
    assert_eq!(pg::digest(&empty).await, before);
    let old = pg::restored(&url, "postgres-py-1.0.0", "dry_import").await;
    let err = dry(old).await.expect_err("an older layout");
    assert_eq!(err.kind(), langgraph_codec::ErrorKind::NotAStore, "{err}");
    assert!(err.to_string().contains("today's Python layout"), "{err}");
    let _ = fs::remove_dir_all(&dir);
}

/// A Postgres import answers row by row whatever a batch holds: a key the target has
/// (with the same columns, with others), a key twice in one batch (the first goes in,
/// the second is compared with it), NULLs and integers; with every table in one batch
/// and in batches of 3.
#[tokio::test]
async fn postgres_import_counts_each_row_with_keys_taken_and_keys_twice_in_a_batch() {
    let Some(url) = pg::url() else { return };
    let dir = scratch("pg-per-row");
    let source = pg::restored(&url, "postgres-py-3.2.0", "perrow").await;
    let file = dir.join("b.jsonl");
    let exported = export_to(&source, &file, &[]).await;
    let text = fs::read_to_string(&file).expect("read");
    let parsed: Vec<Json> = text
        .lines()
        .map(|l| serde_json::from_str(l).expect("line"))
        .collect();
    let of = |kind: &str| -> Vec<usize> {
        (0..parsed.len())
            .filter(|&i| parsed[i]["t"] == kind)
            .collect()
    };
    let (checkpoints, blobs, writes) = (of("checkpoint"), of("blob"), of("write"));
    assert!(checkpoints.len() >= 3 && !blobs.is_empty() && !writes.is_empty());
    assert!(
        parsed[checkpoints[0]]["parent_checkpoint_id"].is_null(),
        "a NULL cell is among the rows"
    );
    let changed = |i: usize, field: &str, value: &str| -> String {
        let mut row = parsed[i].clone();
        row[field] = Json::String(value.to_owned());
        row.to_string()
    };
    // The rows once, with three keys met twice right after their first line.
    let mut crafted: Vec<String> = Vec::new();
    let mut added = [0u64; 3];
    for (i, line) in text.lines().enumerate() {
        if parsed[i]["t"] == "end" {
            let mut end = parsed[i].clone();
            for (slot, field) in ["checkpoints", "blobs", "writes"].iter().enumerate() {
                end[*field] = Json::from(end[*field].as_u64().expect("count") + added[slot]);
            }
            crafted.push(end.to_string());
            continue;
        }
        crafted.push(line.to_owned());
        if i == checkpoints[2] {
            // The same row again (identical), then other metadata (a conflict).
            crafted.push(line.to_owned());
            crafted.push(changed(i, "metadata", "eyJhIjogMX0="));
            added[0] += 2;
        } else if i == blobs[0] {
            crafted.push(changed(i, "blob", "AAEC"));
            added[1] += 1;
        } else if i == writes[0] {
            crafted.push(line.to_owned());
            added[2] += 1;
        }
    }
    let twice = dir.join("twice.jsonl");
    fs::write(&twice, crafted.join("\n") + "\n").expect("write");
    // The first two checkpoints go in first; one of them is then changed, in the target
    // and in the source (which the target must end equal to).
    let head = dir.join("head.jsonl");
    let first_lines: Vec<&str> = text.lines().take(1 + 2).collect();
    fs::write(&head, first_lines.join("\n") + "\n").expect("write");
    let key = &parsed[checkpoints[1]];
    let change = format!(
        "UPDATE checkpoints SET metadata = '{{\"changed\": true}}' WHERE thread_id = '{}' AND checkpoint_ns = '{}' AND checkpoint_id = '{}'",
        key["thread_id"].as_str().expect("thread"),
        key["checkpoint_ns"].as_str().expect("ns"),
        key["checkpoint_id"].as_str().expect("id"),
    );
    pg::connect(&source)
        .await
        .batch_execute(&change)
        .await
        .expect("change source");
    let rows = exported.checkpoints + exported.blobs + exported.writes;
    for batch in [10_000, 3] {
        let target = pg::fresh(&url, &format!("perrow_target_{batch}")).await;
        let pre = import_from(&head, &target).await;
        assert_eq!((pre.inserted, pre.complete), (2, false), "{pre:?}");
        pg::connect(&target)
            .await
            .batch_execute(&change)
            .await
            .expect("change target");
        let mut input = std::io::BufReader::new(fs::File::open(&twice).expect("open"));
        let options = langgraph_codec::store::ImportOptions::new().batch_size(batch);
        let report = langgraph_codec::store::import(&mut input, "twice", &target, &options)
            .await
            .expect("import");
        assert!(report.complete, "{report:?}");
        assert_eq!(report.inserted, rows - 2, "batch {batch}: {report:?}");
        // The unchanged checkpoint there before, the checkpoint and the write met twice.
        assert_eq!(report.identical, 3, "batch {batch}: {report:?}");
        // The checkpoint changed in the target, the checkpoint and the blob met again
        // with other columns.
        assert_eq!(report.conflicts, 3, "batch {batch}: {report:?}");
        let kinds: Vec<&str> = report
            .conflict_samples
            .iter()
            .map(|c| c.kind.as_str())
            .collect();
        assert_eq!(kinds, ["checkpoint", "checkpoint", "blob"], "batch {batch}");
        assert_eq!(
            pg::digest(&source).await,
            pg::digest(&target).await,
            "batch {batch}: the first of each key went in, nothing was overwritten"
        );
    }
    let _ = fs::remove_dir_all(&dir);
}

/// A scratch directory holding a copy of Python's SQLite store (`vectors/stores`), its
/// path, and a fresh Postgres database `<test database>_<tag>` (with Python's tables
/// when `set_up`); `None` without a server.
async fn python_sqlite_and_fresh_pg(
    dir: &str,
    tag: &str,
    set_up: bool,
) -> Option<(std::path::PathBuf, String, String)> {
    let url = pg::url()?;
    let dir = scratch(dir);
    let source = dir.join("python.sqlite");
    fs::copy(
        stores().join("sqlite-py-3.1.2").join("store.sqlite"),
        &source,
    )
    .expect("copy");
    let source = source.to_str().expect("utf-8").to_owned();
    let target = if set_up {
        pg::fresh_set_up(&url, tag).await
    } else {
        pg::fresh(&url, tag).await
    };
    Some((dir, source, target))
}

#[tokio::test]
async fn copy_sqlite_to_postgres_and_back_verifies_every_checkpoint_and_resumes() {
    let Some((dir, source, target)) =
        python_sqlite_and_fresh_pg("copy", "copy_target", false).await
    else {
        return;
    };
    let none = StoreKeys::none();
    let options = langgraph_codec::store::CopyOptions::new().page_size(4);
    let dry = langgraph_codec::store::copy(&source, &target, &none, &options.clone().dry_run(true))
        .await
        .expect("dry run");
    assert_eq!(
        (dry.checkpoints, dry.copied),
        (12, 12),
        "Python's 12 checkpoints (rows.json)"
    );
    let there = langgraph_codec::store::copy(&source, &target, &none, &options)
        .await
        .expect("copy");
    assert!(there.created_tables);
    assert_eq!(
        (there.copied, there.verified),
        (12, 12),
        "{:?}",
        there.mismatches
    );
    assert_eq!(there.writes_inserted, 27, "Python's 27 writes (rows.json)");
    // Run again: nothing copied twice.
    let again = langgraph_codec::store::copy(&source, &target, &none, &options)
        .await
        .expect("again");
    assert_eq!(
        (again.copied, again.already_there, again.writes_inserted),
        (0, 12, 0)
    );
    // And back into a fresh SQLite file: the rows are the ones Python wrote.
    let back = dir.join("back.sqlite");
    let report =
        langgraph_codec::store::copy(&target, back.to_str().expect("utf-8"), &none, &options)
            .await
            .expect("back");
    assert_eq!(
        (report.copied, report.verified),
        (12, 12),
        "{:?}",
        report.mismatches
    );
    // Through Postgres, metadata comes back in JSONB's key order and channel values
    // in the blobs' order (as Python's savers would move them); the writes are the
    // stored bytes, and every checkpoint's key and parent are the same.
    let (a, b) = (sqlite_rows(Path::new(&source)), sqlite_rows(&back));
    assert_eq!(a.len(), b.len());
    let writes = |rows: &[String]| rows.iter().skip(12).cloned().collect::<Vec<_>>();
    assert!(writes(&a) == writes(&b), "write rows differ");
    let keys = |rows: &[String]| {
        rows.iter()
            .take(12)
            .map(|r| r.split('|').take(4).collect::<Vec<_>>().join("|"))
            .collect::<Vec<_>>()
    };
    assert_eq!(keys(&a), keys(&b));
    let _ = fs::remove_dir_all(&dir);
}

/// A SQLite checkpoint with bytes after its msgpack map is not split into Postgres
/// without them: the copy stops at it as the decoded way does (trailing bytes are
/// corruption), naming it.
#[tokio::test]
async fn a_checkpoint_with_bytes_after_its_map_is_not_copied_into_postgres() {
    let Some((dir, source, target)) =
        python_sqlite_and_fresh_pg("copy_trailing", "copy_trailing", false).await
    else {
        return;
    };
    let conn = rusqlite::Connection::open(&source).expect("open");
    let cut: String = conn
        .query_row(
            "SELECT checkpoint_id FROM checkpoints WHERE type = 'msgpack' ORDER BY checkpoint_id DESC LIMIT 1",
            [],
            |r| r.get(0),
        )
        .expect("a clear checkpoint");
    conn.execute(
        "UPDATE checkpoints SET checkpoint = CAST(checkpoint || x'c0c0' AS BLOB) WHERE checkpoint_id = ?1",
        [&cut],
    )
    .expect("append");
    drop(conn);
    let options = langgraph_codec::store::CopyOptions::new().batch_size(100);
    let err = langgraph_codec::store::copy(&source, &target, &StoreKeys::none(), &options)
        .await
        .expect_err("a checkpoint with bytes after it");
    assert_eq!(err.kind(), ErrorKind::UnreadableRow, "{err}");
    assert!(err.to_string().contains(&cut), "{err}");
    let _ = fs::remove_dir_all(&dir);
}

/// Into Postgres a batch's checkpoints are sent while its pending writes go in on
/// another connection, and committed only after the writes: when the writes cannot go
/// in (here a trigger refuses them), the copy fails and not one checkpoint is stored,
/// so no checkpoint is ever in the target without its writes.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_copy_into_postgres_whose_writes_fail_stores_no_checkpoint() {
    let Some((dir, source, target)) =
        python_sqlite_and_fresh_pg("copy_writes_fail", "copy_writes_fail", true).await
    else {
        return;
    };
    let admin = pg::connect(&target).await;
    admin
        .batch_execute(
            "CREATE FUNCTION refuse_writes() RETURNS trigger LANGUAGE plpgsql AS \
             $$ BEGIN PERFORM pg_sleep(0.5); RAISE EXCEPTION 'writes refused'; END $$; \
             CREATE TRIGGER refuse_writes BEFORE INSERT ON checkpoint_writes \
             FOR EACH ROW EXECUTE FUNCTION refuse_writes();",
        )
        .await
        .expect("trigger");
    let none = StoreKeys::none();
    let options = langgraph_codec::store::CopyOptions::new();
    let failed = langgraph_codec::store::copy(&source, &target, &none, &options).await;
    let e = failed.expect_err("the writes were refused");
    assert!(e.to_string().contains("writes refused"), "{e}");
    let n: i64 = admin
        .query_one("SELECT count(*) FROM checkpoints", &[])
        .await
        .expect("count")
        .get(0);
    assert_eq!(n, 0, "checkpoints stored without their writes");
    let _ = fs::remove_dir_all(&dir);
}

/// A copy dropped (cancelled) while a batch into Postgres waits for a lock writes
/// nothing more: once the lock is gone, the target still holds what it held when the
/// copy was dropped. (SQLite → Postgres writes each batch on a task of its own; that
/// task goes with the copy.)
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_copy_into_postgres_dropped_mid_batch_writes_nothing_after() {
    use langgraph_codec::store::{copy, CopyOptions};
    let Some((dir, source, target)) =
        python_sqlite_and_fresh_pg("copy-dropped", "copy_dropped", false).await
    else {
        return;
    };
    let none = StoreKeys::none();
    // The target's tables, and one thread in them, from a first run.
    let first_thread: String = {
        let conn = rusqlite::Connection::open(&source).expect("open");
        conn.query_row("SELECT min(thread_id) FROM checkpoints", [], |r| r.get(0))
            .expect("a thread")
    };
    copy(
        &source,
        &target,
        &none,
        &CopyOptions::new().threads([first_thread.as_str()]),
    )
    .await
    .expect("first thread");
    let db = pg::connect(&target).await;
    let count = || async {
        let row = db
            .query_one("SELECT count(*) FROM checkpoints", &[])
            .await
            .expect("count");
        row.get::<_, i64>(0)
    };
    let before = count().await;
    assert!(
        before > 0 && before < 12,
        "one thread of 12 checkpoints: {before}"
    );
    // Another session holds the checkpoints' table against writes (reads go on): the
    // next batch's insert waits.
    let holder = pg::connect(&target).await;
    holder
        .batch_execute("BEGIN; LOCK TABLE checkpoints IN EXCLUSIVE MODE")
        .await
        .expect("lock");
    let cut = tokio::time::timeout(
        std::time::Duration::from_millis(1500),
        copy(&source, &target, &none, &CopyOptions::new().batch_size(1)),
    )
    .await;
    assert!(cut.is_err(), "the copy waited for the lock: {cut:?}");
    let at_drop = count().await;
    assert_eq!(at_drop, before, "nothing went in past the lock");
    holder.batch_execute("COMMIT").await.expect("unlock");
    tokio::time::sleep(std::time::Duration::from_millis(1500)).await;
    assert_eq!(
        count().await,
        at_drop,
        "a batch went in after the copy was dropped"
    );
    // Run again, the copy finishes.
    let done = copy(&source, &target, &none, &CopyOptions::new())
        .await
        .expect("rerun");
    assert!(done.mismatches.is_empty(), "{:?}", done.mismatches);
    assert_eq!(count().await, 12);
    let _ = fs::remove_dir_all(&dir);
}

/// A writer that puts one of the source's checkpoints into the target while the copy
/// writes its batch: the copy's `COPY` of that batch meets the writer's row (it waits
/// for the writer's transaction, then fails on the taken key), the batch's checkpoints
/// are looked up again and the others put. The writer's row stays as the writer put
/// it, and the read-back reports it; every other checkpoint is copied and verified.
#[tokio::test]
async fn copy_into_postgres_gives_way_to_a_writer_that_took_a_key_of_its_batch() {
    copy_meets_a_writer(false).await;
}

/// As above, in a batch after one that found a checkpoint in the target (so the batch
/// looks its checkpoints up before its `COPY`, and the writer's row, not committed
/// yet, is not among them).
#[tokio::test]
async fn copy_into_postgres_gives_way_to_a_writer_after_a_batch_found_one_there() {
    copy_meets_a_writer(true).await;
}

async fn copy_meets_a_writer(one_there_before: bool) {
    let Some(url) = pg::url() else { return };
    let name = if one_there_before {
        "copy_race_after"
    } else {
        "copy_race"
    };
    let dir = scratch(name);
    let source = dir.join("python.sqlite");
    fs::copy(
        stores().join("sqlite-py-3.1.2").join("store.sqlite"),
        &source,
    )
    .expect("copy");
    let keys: Vec<(String, String, String)> = rusqlite::Connection::open(&source)
        .expect("open")
        .prepare("SELECT thread_id, checkpoint_ns, checkpoint_id FROM checkpoints ORDER BY 1, 2, 3 LIMIT 2")
        .expect("prepare")
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
        .expect("keys")
        .collect::<Result<_, _>>()
        .expect("keys");
    let source = source.to_str().expect("utf-8").to_owned();
    let target = pg::fresh_set_up(&url, name).await;
    let insert =
        "INSERT INTO checkpoints (thread_id, checkpoint_ns, checkpoint_id, checkpoint, metadata) \
                  VALUES ($1, $2, $3, '{\"writer\": true}', '{}')";
    let mut writer = pg::connect(&target).await;
    // Batches of one: the first checkpoint's batch, then the second's.
    let mut options = langgraph_codec::store::CopyOptions::new();
    let taken = if one_there_before {
        let (t, ns, id) = &keys[0];
        writer.execute(insert, &[t, ns, id]).await.expect("first");
        options = options.batch_size(1);
        &keys[1]
    } else {
        &keys[0]
    };
    // The writer's row, not committed yet: the copy does not see it as there.
    let tx = writer.transaction().await.expect("begin");
    tx.execute(insert, &[&taken.0, &taken.1, &taken.2])
        .await
        .expect("writer's insert");
    let none = StoreKeys::none();
    let copy = langgraph_codec::store::copy(&source, &target, &none, &options);
    // Commit once the copy waits on the writer's key.
    let watcher = pg::connect(&target).await;
    let commit = async {
        loop {
            let n: i64 = watcher
                .query_one(
                    "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() \
                     AND wait_event_type = 'Lock'",
                    &[],
                )
                .await
                .expect("activity")
                .get(0);
            if n > 0 {
                break;
            }
            tokio::time::sleep(std::time::Duration::from_millis(20)).await;
        }
        tx.commit().await.expect("writer's commit");
    };
    let (report, ()) = tokio::time::timeout(std::time::Duration::from_secs(120), async {
        tokio::join!(copy, commit)
    })
    .await
    .expect("the copy never waited on the writer's key, or hung");
    let report = report.expect("copy");
    let theirs: u64 = if one_there_before { 2 } else { 1 };
    assert_eq!(
        (
            report.copied,
            report.already_there,
            report.verified,
            report.mismatches.len()
        ),
        (12 - theirs, theirs, 12 - theirs, theirs as usize),
        "{:?}",
        report.mismatches
    );
    assert!(
        report.mismatches.iter().any(|m| m.contains(&taken.2)),
        "{:?}",
        report.mismatches
    );
    let row: Json = writer
        .query_one(
            "SELECT checkpoint::text FROM checkpoints WHERE thread_id = $1 AND checkpoint_ns = $2 AND checkpoint_id = $3",
            &[&taken.0, &taken.1, &taken.2],
        )
        .await
        .map(|r| serde_json::from_str(r.get::<_, &str>(0)).expect("json"))
        .expect("row");
    assert_eq!(
        row,
        serde_json::json!({"writer": true}),
        "the writer's row was replaced"
    );
    let _ = fs::remove_dir_all(&dir);
}

/// A blob already in the target under a key the copy writes, of a checkpoint outside
/// the first namespace of its batch (a batch taken to be fresh looks up only that
/// namespace's blobs before its `COPY`): the batch meets the key, is looked up whole
/// and goes in all the same. The blob is one Python's saver wrote for the same
/// checkpoint (`benches/store_copy_python_script.py` into a database of its own), and
/// Python's savers then read the target's history as the source's
/// (`benches/store_maint_check.py copy`).
#[tokio::test]
async fn copy_into_postgres_meets_a_blob_there_outside_the_first_namespace() {
    let benches = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("benches");
    if !benches.is_dir() {
        return; // the Python scripts under benches/ are not in the published package
    }
    let Some(py) = crate::support::python() else {
        return;
    };
    let Some((dir, source, target)) =
        python_sqlite_and_fresh_pg("copy_blob_there", "copy_blob_there", true).await
    else {
        return;
    };
    let url = pg::url().expect("python_sqlite_and_fresh_pg found a server");
    let python = |script: &str, args: &[&str]| {
        crate::support::python_file(&py, &format!("benches/{script}"), args)
    };
    let by_python = pg::fresh(&url, "copy_blob_there_py").await;
    python("store_copy_python_script.py", &[&source, &by_python]);
    // A blob of the last namespace that holds a value (the first is "t-main", "").
    let row = pg::connect(&by_python)
        .await
        .query_one(
            "SELECT thread_id, checkpoint_ns, channel, version, type, blob FROM checkpoint_blobs \
             WHERE type <> 'empty' ORDER BY thread_id DESC, checkpoint_ns DESC LIMIT 1",
            &[],
        )
        .await
        .expect("Python wrote a blob");
    let (t, ns): (String, String) = (row.get(0), row.get(1));
    assert_ne!(
        (t.as_str(), ns.as_str()),
        ("t-main", ""),
        "not the first namespace"
    );
    let (ch, v, ty, bytes): (String, String, String, Vec<u8>) =
        (row.get(2), row.get(3), row.get(4), row.get(5));
    let client = pg::connect(&target).await;
    client
        .execute(
            "INSERT INTO checkpoint_blobs (thread_id, checkpoint_ns, channel, version, type, blob) \
             VALUES ($1, $2, $3, $4, $5, $6)",
            &[&t, &ns, &ch, &v, &ty, &bytes],
        )
        .await
        .expect("the blob there before");
    let report = langgraph_codec::store::copy(
        &source,
        &target,
        &StoreKeys::none(),
        &langgraph_codec::store::CopyOptions::new(),
    )
    .await
    .expect("copy");
    assert_eq!(
        (
            report.copied,
            report.already_there,
            report.verified,
            report.mismatches.len()
        ),
        (12, 0, 12, 0),
        "{:?}",
        report.mismatches
    );
    python("store_maint_check.py", &["copy", &source, &target]);
    let _ = fs::remove_dir_all(&dir);
}

#[test]
fn dates_and_checkpoint_id_times_are_unix_seconds() {
    use langgraph_codec::store::{id_time, parse_date};
    // Expected values from Python's datetime(..., tzinfo=timezone.utc).timestamp().
    assert_eq!(
        parse_date("2024-07-01T12:30:45Z").expect("date"),
        1_719_837_045
    );
    assert_eq!(
        parse_date("2024-07-01T12:30:45.5+00:00").expect("date"),
        1_719_837_045
    );
    assert_eq!(parse_date("1999-12-31").expect("date"), 946_598_400);
    assert!(parse_date("2024-07-01T12:30:45+02:00").is_err());
    assert!(parse_date("yesterday").is_err());
    // An age where a date goes is said to be one, with the date it comes to in a shell
    // and the command that keeps to an age.
    for (age, ago) in [("30d", "30 days ago"), ("12h", "43200 seconds ago")] {
        let said = parse_date(age).expect_err("an age").to_string();
        assert!(
            said.contains("a date is wanted, not an age")
                && said.contains(&format!("$(date -u -d '{ago}' +%FT%T)"))
                && said.contains(&format!("max_age = \"{age}\"")),
            "{said}"
        );
    }
    // The edges of Python's datetime (same source), and what its fromisoformat refuses:
    // a day the month lacks, year 0 or 10000, second 60, hour 24. A year past i64's
    // seconds must be refused too, not overflow.
    assert_eq!(parse_date("2024-02-29").expect("leap day"), 1_709_164_800);
    assert_eq!(
        parse_date("9999-12-31T23:59:59Z").expect("last"),
        253_402_300_799
    );
    assert_eq!(parse_date("0001-01-01").expect("first"), -62_135_596_800);
    for refused in [
        "2024-02-30",
        "2023-02-29",
        "2024-04-31",
        "0000-01-01",
        "10000-01-01",
        "2024-01-01T12:00:60",
        "2024-01-01T24:00:00",
        "99999999999999999-01-01",
        "9223372036854775807-12-31T23:59:59",
    ] {
        let err = parse_date(refused).expect_err(refused);
        assert_eq!(
            err.kind(),
            langgraph_codec::ErrorKind::InvalidDate,
            "{refused}"
        );
    }
    // Python's uuid6(clock_seq=1) made at Unix time 1795618958 (time.time()).
    assert_eq!(
        id_time("1f1e8e14-15a5-6c9a-8001-73c70dd9ebf6"),
        Some(1_795_618_958)
    );
    assert_eq!(id_time("not-a-uuid"), None);
}

#[tokio::test]
async fn prune_keeps_the_latest_per_namespace_and_dry_run_deletes_nothing() {
    use langgraph_codec::store::{prune, PruneOptions};
    let dir = scratch("prune");
    let path = dir.join("s.db");
    let [_, _, c, d] = forked_store(&path, Arc::new(JsonPlusSerializer::new())).await;
    let store = path.to_str().expect("utf-8").to_owned();
    let before = sqlite_rows(&path);
    let dry = prune(
        &store,
        &StoreKeys::none(),
        &PruneOptions::new().keep_latest(1).dry_run(true),
    )
    .await
    .expect("dry run");
    assert_eq!((dry.checkpoints_deleted, dry.writes_deleted), (3, 1));
    assert!(dry.bytes_freed > 0);
    assert_eq!(sqlite_rows(&path), before, "a dry run deletes nothing");
    let done = prune(
        &store,
        &StoreKeys::none(),
        &PruneOptions::new().keep_latest(1).vacuum(true),
    )
    .await
    .expect("prune");
    assert_eq!((done.checkpoints_deleted, done.checkpoints_kept), (3, 1));
    let h = AnyStore::open(&store)
        .await
        .expect("open")
        .history("t")
        .await
        .expect("history");
    let ids: Vec<&str> = h.nodes.iter().map(|n| n.checkpoint_id.as_str()).collect();
    assert_eq!(ids, [d.as_str()]);
    assert!(done.file_bytes.is_some());
    let _ = c;
    // A date rule never drops the latest; ids that are not uuid6 have no time: kept.
    let again = prune(
        &store,
        &StoreKeys::none(),
        &PruneOptions::new().before(i64::MAX),
    )
    .await
    .expect("before");
    assert_eq!(again.checkpoints_deleted, 0);
    let _ = fs::remove_dir_all(&dir);
}

/// The bytes of every value a SQLite store holds (checkpoints, metadata, writes),
/// summed from the values as read: a BLOB's length, a TEXT's UTF-8 bytes.
fn value_bytes(path: &Path) -> u64 {
    use rusqlite::types::Value as Cell;
    let conn = rusqlite::Connection::open(path).expect("open");
    let mut total = 0u64;
    for sql in [
        "SELECT checkpoint FROM checkpoints",
        "SELECT metadata FROM checkpoints",
        "SELECT value FROM writes",
    ] {
        let mut stmt = conn.prepare(sql).expect("prepare");
        let cells = stmt
            .query_map([], |r| r.get::<_, Cell>(0))
            .expect("query")
            .collect::<Result<Vec<_>, _>>()
            .expect("rows");
        for cell in cells {
            total += match cell {
                Cell::Blob(b) => b.len() as u64,
                Cell::Text(s) => s.len() as u64,
                Cell::Null => 0,
                Cell::Integer(i) => i.to_string().len() as u64,
                Cell::Real(f) => f.to_string().len() as u64,
            };
        }
    }
    total
}

/// A prune reports as freed the bytes the deleted rows' values held (a dry run the
/// bytes it would free), counting a TEXT value's UTF-8 bytes, not its characters:
/// metadata stored as text with characters of two and four bytes.
#[tokio::test]
async fn prune_reports_the_bytes_the_deleted_values_held() {
    use langgraph_codec::store::{prune, PruneOptions};
    let dir = scratch("prune-bytes");
    let path = dir.join("s.db");
    let [_, _, _, d] = forked_store(&path, Arc::new(JsonPlusSerializer::new())).await;
    rusqlite::Connection::open(&path)
        .expect("open")
        .execute(
            "UPDATE checkpoints SET metadata = CAST(metadata AS TEXT) || ' ' || ?1 \
             WHERE checkpoint_id != ?2",
            rusqlite::params!["\u{e9}\u{1f600}".repeat(50), d],
        )
        .expect("text metadata");
    let store = path.to_str().expect("utf-8").to_owned();
    let before = value_bytes(&path);
    let stats = AnyStore::open(&store)
        .await
        .expect("open")
        .stats(&StoreKeys::none(), &StatsOptions::new())
        .await
        .expect("stats");
    assert_eq!(
        stats.total.total_bytes, before,
        "stats counts bytes as stored"
    );
    let options = PruneOptions::new().keep_latest(1);
    let dry = prune(&store, &StoreKeys::none(), &options.clone().dry_run(true))
        .await
        .expect("dry run");
    let done = prune(&store, &StoreKeys::none(), &options)
        .await
        .expect("prune");
    assert_eq!(done.checkpoints_deleted, 3);
    let freed = before - value_bytes(&path);
    assert_eq!((dry.bytes_freed, done.bytes_freed), (freed, freed));
    let _ = fs::remove_dir_all(&dir);
}

/// After a prune no checkpoint names a parent that is not stored: a kept checkpoint
/// whose parent went is left with no parent, as Python's `PostgresSaver.prune` leaves
/// it (SQLite and Postgres, on the stores Python's savers wrote).
#[tokio::test]
async fn prune_leaves_no_checkpoint_naming_a_parent_that_went() {
    use langgraph_codec::store::{prune, PruneOptions};
    let dangling = "SELECT count(*) FROM checkpoints c WHERE c.parent_checkpoint_id IS NOT NULL \
                    AND NOT EXISTS (SELECT 1 FROM checkpoints p WHERE p.thread_id = c.thread_id \
                    AND p.checkpoint_ns = c.checkpoint_ns AND p.checkpoint_id = c.parent_checkpoint_id)";
    let dir = scratch("prune-parents");
    let path = dir.join("s.sqlite");
    fs::copy(stores().join("sqlite-py-3.1.2").join("store.sqlite"), &path).expect("copy");
    let store = path.to_str().expect("utf-8").to_owned();
    let report = prune(
        &store,
        &StoreKeys::none(),
        &PruneOptions::new().keep_latest(1),
    )
    .await
    .expect("prune");
    assert!(report.checkpoints_deleted > 0, "{report:?}");
    let conn = rusqlite::Connection::open(&path).expect("open");
    let (kept, left): (i64, i64) = conn
        .query_row(
            &format!("SELECT (SELECT count(*) FROM checkpoints), ({dangling})"),
            [],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .expect("count");
    assert_eq!(kept, 3, "the latest of each of the 3 namespaces");
    assert_eq!(left, 0, "a kept checkpoint names a parent that went");
    let _ = fs::remove_dir_all(&dir);
    let Some(url) = pg::url() else { return };
    let db = pg::restored(&url, "postgres-py-3.2.0", "prune_parents").await;
    let report = prune(&db, &StoreKeys::none(), &PruneOptions::new().keep_latest(1))
        .await
        .expect("prune postgres");
    assert!(report.checkpoints_deleted > 0, "{report:?}");
    let left: i64 = pg::connect(&db)
        .await
        .query_one(dangling, &[])
        .await
        .expect("count")
        .get(0);
    assert_eq!(
        left, 0,
        "a kept checkpoint names a parent that went (Postgres)"
    );
}

/// On Postgres a checkpoint from before format 4 reads its pending sends from its
/// parent's `__pregel_tasks` writes (Python's `PostgresSaver`): `prune --keep-latest 1`
/// keeps that parent, and the kept checkpoint still reads both sends.
#[tokio::test]
async fn prune_keeps_the_parent_an_old_postgres_checkpoint_reads_its_sends_from() {
    use langgraph_codec::saver::postgres::PostgresSaver;
    use langgraph_codec::store::{prune, PruneOptions};
    let Some(url) = pg::url() else { return };
    let db = pg::fresh(&url, "prune_sends").await;
    let saver = PostgresSaver::builder_from_url(&db)
        .expect("url")
        .build()
        .expect("saver");
    saver.setup().await.expect("setup");
    let mut first = Checkpoint::now(0);
    first.v = 1;
    let grand = saver
        .put(
            &CheckpointConfig::new("t"),
            &first,
            &CheckpointMetadata::new("input", -1),
            &Default::default(),
        )
        .await
        .expect("put");
    let mut second = Checkpoint::now(1);
    second.v = 1;
    let parent = saver
        .put(
            &grand,
            &second,
            &CheckpointMetadata::new("loop", 0),
            &Default::default(),
        )
        .await
        .expect("put");
    for (task, send) in [("task-a", "send-a"), ("task-b", "send-b")] {
        saver
            .put_writes(
                &parent,
                &[("__pregel_tasks".into(), Value::from(send))],
                task,
                "",
            )
            .await
            .expect("writes");
    }
    let mut third = Checkpoint::now(2);
    third.v = 1;
    let child = saver
        .put(
            &parent,
            &third,
            &CheckpointMetadata::new("loop", 1),
            &Default::default(),
        )
        .await
        .expect("put");
    let sends = Some(Value::Array(vec![
        Value::from("send-a"),
        Value::from("send-b"),
    ]));
    let read = |saver: &PostgresSaver| {
        let child = child.clone();
        let saver = saver.clone();
        async move {
            saver
                .get_tuple(&child)
                .await
                .expect("get")
                .expect("stored")
                .checkpoint
                .channel_values
                .get("__pregel_tasks")
                .cloned()
        }
    };
    assert_eq!(read(&saver).await, sends, "before the prune");
    let report = prune(&db, &StoreKeys::none(), &PruneOptions::new().keep_latest(1))
        .await
        .expect("prune");
    // The first checkpoint goes; the parent the latest reads its sends from stays.
    assert_eq!(
        (report.checkpoints_deleted, report.checkpoints_kept),
        (1, 2),
        "{report:?}"
    );
    assert_eq!(read(&saver).await, sends, "after the prune");
}

#[tokio::test]
async fn prune_by_date_idle_threads_thread_ids_and_metadata() {
    use langgraph_codec::store::{parse_date, prune, PruneOptions};
    let dir = scratch("prune-dates");
    let path = dir.join("s.sqlite");
    // Python wrote this store on 2026-11-25 (its uuid6 ids and ts say so): t-main has 9
    // checkpoints over 2 namespaces, t-short 3 (rows.json).
    fs::copy(stores().join("sqlite-py-3.1.2").join("store.sqlite"), &path).expect("copy");
    let store = path.to_str().expect("utf-8").to_owned();
    let none = StoreKeys::none();
    let run = |o: PruneOptions| {
        let store = store.clone();
        let none = none.clone();
        async move { prune(&store, &none, &o.dry_run(true)).await.expect("prune") }
    };
    let early = parse_date("2026-01-01").expect("date");
    let late = parse_date("2027-01-01").expect("date");
    assert_eq!(
        run(PruneOptions::new().idle_since(early))
            .await
            .threads_deleted,
        0
    );
    // Every thread idle: refused before anything is deleted, dry run or not, unless
    // allow_all is set.
    let rows_before = sqlite_rows(&path);
    for dry in [true, false] {
        let every = PruneOptions::new().idle_since(late).dry_run(dry);
        let err = prune(&store, &none, &every)
            .await
            .expect_err("every thread");
        assert_eq!(err.kind(), ErrorKind::WouldDeleteAll, "{err}");
        let said = err.to_string();
        assert!(said.contains("all 2 thread(s)"), "{said}");
        assert!(said.contains("--allow-all"), "{said}");
    }
    assert_eq!(sqlite_rows(&path), rows_before, "a refused prune deleted");
    let idle = run(PruneOptions::new().idle_since(late).allow_all(true)).await;
    assert_eq!((idle.threads_deleted, idle.checkpoints_deleted), (2, 12));
    assert_eq!(idle.writes_deleted, 27);
    assert_eq!(
        run(PruneOptions::new().before(early))
            .await
            .checkpoints_deleted,
        0
    );
    // Everything is older than 2027, but the latest of each namespace (and what its
    // DeltaChannels need: none in this graph) stays: 3 namespaces.
    let before = run(PruneOptions::new().before(late)).await;
    assert_eq!(before.checkpoints_kept, 3);
    assert_eq!(before.checkpoints_deleted, 9);
    let one = run(PruneOptions::new().idle_since(late).threads(["t-short"])).await;
    assert_eq!((one.threads, one.checkpoints_deleted), (1, 3));
    // Python's metadata on these checkpoints has "user": "ada" (rows.json).
    let by_md = run(PruneOptions::new()
        .idle_since(late)
        .metadata("user", Json::from("bob")))
    .await;
    assert_eq!(by_md.threads, 0);
    let by_md = run(PruneOptions::new()
        .idle_since(late)
        .allow_all(true)
        .metadata("user", Json::from("ada")))
    .await;
    assert_eq!(by_md.threads, 2);
    // And for real: the idle thread goes whole, writes included.
    prune(
        &store,
        &none,
        &PruneOptions::new().idle_since(late).threads(["t-short"]),
    )
    .await
    .expect("prune");
    let threads = AnyStore::open(&store)
        .await
        .expect("open")
        .threads(&none)
        .await
        .expect("threads");
    let names: Vec<&str> = threads.iter().map(|t| t.thread_id.as_str()).collect();
    assert_eq!(names, ["t-main"]);
    let rows = sqlite_rows(&path);
    assert!(!rows.iter().any(|r| r.contains("t-short")));
    let _ = fs::remove_dir_all(&dir);
}

/// Threads left out of a prune (`--exclude-thread`, `PruneOptions::exclude_threads`)
/// keep every row and are counted nowhere but in `excluded_threads`, whatever the
/// rules and `--thread` select; a prune that would delete every other thread is not
/// refused as emptying the store. Python's store of 2026-11-25: t-main has 9
/// checkpoints over 2 namespaces, t-short 3 in one (rows.json).
#[tokio::test]
async fn prune_leaves_the_threads_left_out_as_they_are() {
    use langgraph_codec::store::{parse_date, prune, PruneOptions};
    let dir = scratch("prune-excluded");
    let path = dir.join("s.sqlite");
    fs::copy(stores().join("sqlite-py-3.1.2").join("store.sqlite"), &path).expect("copy");
    let store = path.to_str().expect("utf-8").to_owned();
    let none = StoreKeys::none();
    let late = parse_date("2027-01-01").expect("date");
    let dry = |o: PruneOptions| {
        let (store, none) = (store.clone(), none.clone());
        async move { prune(&store, &none, &o.dry_run(true)).await.expect("prune") }
    };
    let old = dry(PruneOptions::new()
        .before(late)
        .exclude_threads(["t-short"]))
    .await;
    assert_eq!(
        (old.threads, old.checkpoints_deleted, old.checkpoints_kept),
        (1, 7, 2),
        "{old:?}"
    );
    assert_eq!(old.excluded_threads, ["t-short"]);
    let named = dry(PruneOptions::new()
        .idle_since(late)
        .threads(["t-short"])
        .exclude_threads(["t-short"]))
    .await;
    assert_eq!(
        (named.threads, named.checkpoints_deleted),
        (0, 0),
        "{named:?}"
    );
    let rows = |thread: &str| -> Vec<String> {
        sqlite_rows(&path)
            .into_iter()
            .filter(|r| r.contains(thread))
            .collect()
    };
    let main_rows = rows("t-main");
    assert!(!main_rows.is_empty() && !rows("t-short").is_empty());
    // Every thread is idle: without t-main, only t-short goes, with no --allow-all.
    let (code, out, err) = crate::lgcodec(
        &[
            "store",
            "prune",
            &store,
            "--idle-since",
            "2027-01-01",
            "--exclude-thread",
            "t-main",
            "--json",
        ],
        &[],
    );
    assert_eq!(code, 0, "{err}");
    assert!(err.contains("1 thread(s) left out"), "{err}");
    let report: Json = serde_json::from_str(&out).expect("the report");
    assert_eq!(report["excluded_threads"], serde_json::json!(["t-main"]));
    assert_eq!(
        (
            &report["threads"],
            &report["threads_deleted"],
            &report["checkpoints_deleted"]
        ),
        (&Json::from(1), &Json::from(1), &Json::from(3)),
        "{out}"
    );
    assert_eq!(rows("t-main"), main_rows);
    assert!(rows("t-short").is_empty());
    let _ = fs::remove_dir_all(&dir);
}

/// SQL giving thread `t-short`'s rows (Python's, 3 checkpoints) to two more threads:
/// `t-old`, its ids lowercase uuid6s of 2025-10-03 (plus one write stored against a
/// newer checkpoint id, as a live writer's write lands before its checkpoint), and
/// `t-mixed`, whose ids are not in time order bytewise: its oldest is a lowercase
/// uuid6 of 2025-10-03, the others uppercase uuid6s of 2025-10-23 ('F' sorts before
/// 'f'). `writes` / `blob_table`: the tables' names in the store's layout.
fn two_more_threads_sql(writes: &str, blob_table: Option<&str>) -> Vec<String> {
    // uuid6 time: the 60-bit count of 100 ns since 1582-10-15 in the first 15 hex
    // digits (RFC 9562): 0x1f0a0000 << 28 is 2025-10-03 02:23:50 UTC, 0x1f0b0000 << 28
    // is 2025-10-23 11:04:09 UTC.
    let ids = |thread: &str, [a, b, c]: [&str; 3]| {
        format!(
            "CREATE TEMP TABLE ids_{thread} AS SELECT checkpoint_id AS old_id, CASE rank \
             WHEN 1 THEN '{a}' WHEN 2 THEN '{b}' ELSE '{c}' END AS new_id FROM (SELECT \
             checkpoint_id, row_number() OVER (ORDER BY checkpoint_id) AS rank FROM checkpoints \
             WHERE thread_id = 't-short' AND checkpoint_ns = '') AS r"
        )
    };
    let mut sql = vec![
        ids(
            "old",
            [
                "1f0a0000-0000-6000-8000-00000000000a",
                "1f0a0000-0000-6000-8000-00000000000b",
                "1f0a0000-0000-6000-8000-00000000000c",
            ],
        ),
        ids(
            "mixed",
            [
                "1f0a0000-0000-6000-8000-00000000000d",
                "1F0B0000-0000-6000-8000-00000000000E",
                "1F0B0000-0000-6000-8000-00000000000F",
            ],
        ),
    ];
    for thread in ["old", "mixed"] {
        let map = |col: &str| {
            format!("coalesce((SELECT new_id FROM ids_{thread} WHERE old_id = {col}), {col})")
        };
        for (table, cols) in [("checkpoints", "parent_checkpoint_id"), (writes, "")] {
            sql.push(format!(
                "CREATE TEMP TABLE x_{thread}_{table} AS SELECT * FROM {table} WHERE thread_id = 't-short'"
            ));
            let mut set = format!(
                "thread_id = 't-{thread}', checkpoint_id = {}",
                map("checkpoint_id")
            );
            if !cols.is_empty() {
                set.push_str(&format!(", {cols} = {}", map(cols)));
            }
            sql.push(format!("UPDATE x_{thread}_{table} SET {set}"));
            sql.push(format!(
                "INSERT INTO {table} SELECT * FROM x_{thread}_{table}"
            ));
        }
        if let Some(blobs) = blob_table {
            sql.push(format!(
                "INSERT INTO {blobs} (thread_id, checkpoint_ns, channel, version, type, blob) \
                 SELECT 't-{thread}', checkpoint_ns, channel, version, type, blob \
                 FROM {blobs} WHERE thread_id = 't-short'"
            ));
        }
    }
    let value = if blob_table.is_some() {
        "blob"
    } else {
        "value"
    };
    sql.push(format!(
        "INSERT INTO {writes} (thread_id, checkpoint_ns, checkpoint_id, task_id, idx, channel, \
         type, {value}) SELECT 't-old', checkpoint_ns, '1f0b0000-0000-6000-8000-000000000001', \
         task_id, idx, channel, type, {value} FROM {writes} WHERE thread_id = 't-short' LIMIT 1"
    ));
    sql
}

/// `--idle-since` decides a thread from its oldest and newest ids alone only when
/// bytewise order is time order: `t-mixed`'s bytewise newest id is old but an
/// uppercase one is newer than the date, so it is read, found not idle, and stays;
/// `t-old` goes whole (checkpoints, writes, Postgres blobs) except the write stored
/// against a checkpoint id newer than its newest. The result equals a prune that
/// names the threads (which reads every one of them), on SQLite and Postgres.
#[tokio::test]
async fn prune_idle_since_decides_unread_only_threads_whose_ids_sort_by_time() {
    use langgraph_codec::store::{parse_date, prune, PruneOptions};
    let none = StoreKeys::none();
    // Between 2025-10-03 and 2025-10-23; Python's own threads are of 2026-11-25.
    let date = parse_date("2025-10-13").expect("date");
    let all = PruneOptions::new().idle_since(date);
    let named = PruneOptions::new()
        .idle_since(date)
        .threads(["t-main", "t-mixed", "t-old", "t-short"]);
    let dir = scratch("prune-idle-unread");
    let mut dumps = Vec::new();
    for (name, options) in [("all", &all), ("named", &named)] {
        let path = dir.join(format!("{name}.sqlite"));
        fs::copy(stores().join("sqlite-py-3.1.2").join("store.sqlite"), &path).expect("copy");
        let conn = rusqlite::Connection::open(&path).expect("open");
        for sql in two_more_threads_sql("writes", None) {
            conn.execute_batch(&sql)
                .unwrap_or_else(|e| panic!("{sql}: {e}"));
        }
        drop(conn);
        let store = path.to_str().expect("utf-8").to_owned();
        let report = prune(&store, &none, options).await.expect("prune");
        assert_eq!(
            (report.threads, report.threads_deleted),
            (4, 1),
            "{report:?}"
        );
        let conn = rusqlite::Connection::open(&path).expect("open");
        let count = |sql: &str| -> i64 { conn.query_row(sql, [], |r| r.get(0)).expect(sql) };
        assert_eq!(
            count("SELECT count(*) FROM checkpoints WHERE thread_id = 't-mixed'"),
            3
        );
        assert_eq!(
            count("SELECT count(*) FROM checkpoints WHERE thread_id = 't-old'"),
            0
        );
        assert_eq!(
            count("SELECT count(*) FROM writes WHERE thread_id = 't-old'"),
            1,
            "the write against a newer checkpoint id stays"
        );
        dumps.push(sqlite_rows(&path));
    }
    assert_eq!(dumps[0], dumps[1], "unread and read decisions differ");
    let _ = fs::remove_dir_all(&dir);
    let Some(url) = pg::url() else { return };
    let mut digests = Vec::new();
    for (name, options) in [("all", &all), ("named", &named)] {
        let db = pg::restored(
            &url,
            "postgres-py-3.2.0",
            &format!("prune_idle_unread_{name}"),
        )
        .await;
        let client = pg::connect(&db).await;
        for sql in two_more_threads_sql("checkpoint_writes", Some("checkpoint_blobs")) {
            client
                .batch_execute(&sql)
                .await
                .unwrap_or_else(|e| panic!("{sql}: {e}"));
        }
        let blobs_before: i64 = client
            .query_one(
                "SELECT count(*) FROM checkpoint_blobs WHERE thread_id = 't-old'",
                &[],
            )
            .await
            .expect("count")
            .get(0);
        assert!(blobs_before > 0);
        let report = prune(&db, &none, options).await.expect("prune postgres");
        assert_eq!(
            (report.threads, report.threads_deleted),
            (4, 1),
            "{report:?}"
        );
        let count = |sql: &'static str| {
            let client = &client;
            async move {
                client
                    .query_one(sql, &[])
                    .await
                    .expect(sql)
                    .get::<_, i64>(0)
            }
        };
        assert_eq!(
            count("SELECT count(*) FROM checkpoints WHERE thread_id = 't-mixed'").await,
            3
        );
        assert_eq!(
            count("SELECT count(*) FROM checkpoints WHERE thread_id = 't-old'").await,
            0
        );
        assert_eq!(
            count("SELECT count(*) FROM checkpoint_writes WHERE thread_id = 't-old'").await,
            1
        );
        assert_eq!(
            count("SELECT count(*) FROM checkpoint_blobs WHERE thread_id = 't-old'").await,
            0,
            "every blob of t-old was referenced by a checkpoint that went"
        );
        digests.push(pg::digest(&db).await);
    }
    assert_eq!(
        digests[0], digests[1],
        "unread and read decisions differ (Postgres)"
    );
}

#[tokio::test]
async fn copy_re_encrypts_under_the_primary_key_on_the_way() {
    let dir = scratch("reencrypt");
    let source = dir.join("old.db");
    let old = EncryptedSerializer::from_aes_key(&[7u8; 16], AesMode::Eax).expect("serde");
    let [_, _, c, _] = forked_store(&source, Arc::new(old)).await;
    let target = dir.join("new.db");
    let ring = StoreKeys::new(key(9))
        .with_previous(key(7), "old")
        .expect("ring");
    let report = langgraph_codec::store::copy(
        source.to_str().expect("utf-8"),
        target.to_str().expect("utf-8"),
        &ring,
        &langgraph_codec::store::CopyOptions::new(),
    )
    .await
    .expect("copy");
    assert_eq!(
        (report.copied, report.verified),
        (4, 4),
        "{:?}",
        report.mismatches
    );
    let copied = AnyStore::open(target.to_str().expect("utf-8"))
        .await
        .expect("open");
    // The new key alone reads every copied value; the old key alone reads none.
    let state = copied
        .state(&StoreKeys::new(key(9)), "t", &c)
        .await
        .expect("new key")
        .expect("present");
    assert_eq!(state["pending_writes"][0]["value"], "w");
    assert!(copied
        .state(&StoreKeys::new(key(7)), "t", &c)
        .await
        .is_err());
    // Every value row of the copy is encrypted (the type tags say so).
    for row in sqlite_rows(&target) {
        assert!(
            row.contains("msgpack+aes") || row.contains("null+aes"),
            "{row}"
        );
    }
    let _ = fs::remove_dir_all(&dir);
}

/// A backup line longer than the import's line limit is refused, naming the line, and
/// never held whole in memory; lines within the limit import as usual.
#[tokio::test]
async fn import_refuses_a_line_longer_than_its_limit() {
    use langgraph_codec::store::{import, ImportOptions, BACKUP_FORMAT, BACKUP_VERSION};
    let dir = scratch("long-line");
    let target = dir.join("target.sqlite");
    let header = serde_json::json!({
        "format": BACKUP_FORMAT, "version": BACKUP_VERSION, "backend": "sqlite",
        "layout": "Python SQLite saver (today's layout)",
    });
    // A header, then one line of 100 kB (a row's worth of base64, say).
    let text = format!("{header}\n{{\"t\": \"{}\"}}\n", "x".repeat(100_000));
    let limited = ImportOptions::new().max_line_bytes(4_096);
    let err = import(
        &mut text.as_bytes(),
        "backup.jsonl",
        target.to_str().expect("utf-8"),
        &limited,
    )
    .await
    .expect_err("a line over the limit");
    assert_eq!(err.kind(), ErrorKind::Backup, "{err}");
    assert_eq!(err.subject(), Some("backup.jsonl:2"), "{err}");
    assert!(err.reason().is_some_and(|r| r.contains("4096")), "{err}");
}

/// A copy of Python's 3.1.2 SQLite store (12 checkpoints, 27 writes) in `dir`.
fn python_store_in(dir: &Path) -> String {
    let source = dir.join("python.sqlite");
    fs::copy(
        stores().join("sqlite-py-3.1.2").join("store.sqlite"),
        &source,
    )
    .expect("copy");
    source.to_str().expect("utf-8").to_owned()
}

/// Copy writes its checkpoints in batches, each one target transaction for the
/// pending writes and one for the checkpoints: as many checkpoints per batch as
/// `batch_size` says, fewer when `batch_bytes` is reached, and every checkpoint still
/// verified and reported to the progress callback once, in order.
#[tokio::test]
async fn copy_writes_batches_bounded_by_count_and_by_bytes() {
    use langgraph_codec::store::{copy, CopyOptions};
    use std::sync::Mutex;
    let dir = scratch("batches");
    let source = python_store_in(&dir);
    let none = StoreKeys::none();
    let target = |name: &str| dir.join(name).to_str().expect("utf-8").to_owned();
    let seen = Arc::new(Mutex::new(Vec::new()));
    let log = Arc::clone(&seen);
    let by_count = copy(
        &source,
        &target("five.db"),
        &none,
        &CopyOptions::new()
            .batch_size(5)
            .on_progress(move |p| log.lock().expect("lock").push(p.rows_done)),
    )
    .await
    .expect("copy");
    // Python's 12 checkpoints and 27 writes (rows.json): batches of 5, 5 and 2.
    assert_eq!(
        (
            by_count.copied,
            by_count.verified,
            by_count.writes_inserted,
            by_count.batches
        ),
        (12, 12, 27, 3),
        "{:?}",
        by_count.mismatches
    );
    assert_eq!(*seen.lock().expect("lock"), (1..=12).collect::<Vec<u64>>());
    // A byte bound below any checkpoint's size: one checkpoint per batch.
    let by_bytes = copy(
        &source,
        &target("one.db"),
        &none,
        &CopyOptions::new().batch_bytes(1),
    )
    .await
    .expect("copy");
    assert_eq!((by_bytes.verified, by_bytes.batches), (12, 12));
    // The default holds all 12 in one batch; the rows are the same whatever the batches.
    let whole = copy(&source, &target("all.db"), &none, &CopyOptions::new())
        .await
        .expect("copy");
    assert_eq!((whole.verified, whole.batches), (12, 1));
    assert_eq!(
        sqlite_rows(&dir.join("five.db")),
        sqlite_rows(&dir.join("one.db"))
    );
    assert_eq!(
        sqlite_rows(&dir.join("five.db")),
        sqlite_rows(&dir.join("all.db"))
    );
    let _ = fs::remove_dir_all(&dir);
}

/// A rerun over a target that already holds the checkpoints verifies each of them
/// against its source in the batch it falls in: a checkpoint changed in the target is
/// reported (and not overwritten), a write missing from the target is put back.
#[tokio::test]
async fn copy_rerun_reports_a_changed_checkpoint_and_restores_a_missing_write() {
    use langgraph_codec::store::{copy, CopyOptions};
    let dir = scratch("rerun-verify");
    let source = python_store_in(&dir);
    let target = dir.join("copy.db");
    let none = StoreKeys::none();
    let options = CopyOptions::new().batch_size(5);
    let first = copy(&source, target.to_str().expect("utf-8"), &none, &options)
        .await
        .expect("copy");
    assert_eq!((first.copied, first.verified), (12, 12));
    let conn = rusqlite::Connection::open(&target).expect("open");
    let changed: String = conn
        .query_row(
            "SELECT checkpoint_id FROM checkpoints ORDER BY thread_id, checkpoint_ns, checkpoint_id LIMIT 1 OFFSET 6",
            [],
            |r| r.get(0),
        )
        .expect("seventh checkpoint");
    conn.execute(
        "UPDATE checkpoints SET metadata = CAST('{\"step\": 99}' AS BLOB) WHERE checkpoint_id = ?1",
        [&changed],
    )
    .expect("change");
    assert_eq!(
        conn.execute(
            "DELETE FROM writes WHERE rowid = (SELECT max(rowid) FROM writes)",
            []
        )
        .expect("delete"),
        1
    );
    drop(conn);
    let again = copy(&source, target.to_str().expect("utf-8"), &none, &options)
        .await
        .expect("rerun");
    assert_eq!(
        (
            again.copied,
            again.already_there,
            again.writes_inserted,
            again.verified
        ),
        (0, 12, 1, 11)
    );
    assert_eq!(again.mismatches.len(), 1, "{:?}", again.mismatches);
    assert!(
        again.mismatches[0].contains(&changed) && again.mismatches[0].contains("metadata"),
        "{:?}",
        again.mismatches
    );
    let _ = fs::remove_dir_all(&dir);
}

/// The first checkpoint of `path` with its map's entries in reverse order and its
/// metadata as compact JSON: the same checkpoint and metadata to any reader, in other
/// bytes than Python writes (its `put` writes the checkpoint's keys in one order, and
/// `json.dumps` with spaces). Returns the checkpoint id.
fn restate_first_row(path: &Path) -> String {
    let conn = rusqlite::Connection::open(path).expect("open");
    let (id, checkpoint, metadata): (String, Vec<u8>, Vec<u8>) = conn
        .query_row(
            "SELECT checkpoint_id, checkpoint, metadata FROM checkpoints \
             ORDER BY thread_id, checkpoint_ns, checkpoint_id LIMIT 1",
            [],
            |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
        )
        .expect("first row");
    let mut value = langgraph_codec::msgpack::decode(&checkpoint).expect("msgpack");
    let Value::Map(entries) = &mut value else {
        panic!("a checkpoint is a map");
    };
    entries.reverse();
    let restated = langgraph_codec::msgpack::encode(&value).expect("encode");
    assert_ne!(restated, checkpoint);
    let compact =
        serde_json::to_vec(&serde_json::from_slice::<Json>(&metadata).expect("metadata is JSON"))
            .expect("json");
    assert_ne!(compact, metadata, "the fixture's metadata is not compact");
    conn.execute(
        "UPDATE checkpoints SET checkpoint = ?1, metadata = ?2 WHERE checkpoint_id = ?3",
        rusqlite::params![restated, compact, id],
    )
    .expect("update");
    id
}

/// A copy between SQLite stores in clear carries each row of Python's layout as it is
/// stored: the target's rows are the source's byte for byte, a row stored in other
/// bytes than Python writes (its map in another order, compact JSON) included, where
/// decoding and encoding again would write Python's. A rerun over a target row
/// stored in other bytes than its source's, with the same checkpoint, verifies it as
/// decoded. A checkpoint whose bytes are cut short is not carried: the copy stops at
/// it, naming it, as it does for a row it decodes.
#[tokio::test]
async fn copy_between_sqlite_stores_carries_rows_as_stored_and_verifies_them() {
    use langgraph_codec::store::{copy, CopyOptions};
    let dir = scratch("carry");
    let none = StoreKeys::none();
    let options = CopyOptions::new().batch_size(5);
    let source = python_store_in(&dir);
    let restated = restate_first_row(Path::new(&source));
    let target = dir.join("copy.db");
    let target_s = target.to_str().expect("utf-8");
    let first = copy(&source, target_s, &none, &options)
        .await
        .expect("copy");
    assert_eq!(
        (first.copied, first.verified),
        (12, 12),
        "{:?}",
        first.mismatches
    );
    assert_eq!(sqlite_rows(Path::new(&source)), sqlite_rows(&target));

    // The source's first row as Python writes it, the target's as restated: the same
    // checkpoint in other bytes, verified.
    let fresh = dir.join("fresh.sqlite");
    fs::copy(
        stores().join("sqlite-py-3.1.2").join("store.sqlite"),
        &fresh,
    )
    .expect("copy");
    let again = copy(fresh.to_str().expect("utf-8"), target_s, &none, &options)
        .await
        .expect("rerun");
    assert_eq!(
        (again.copied, again.already_there, again.verified),
        (0, 12, 12),
        "{:?}",
        again.mismatches
    );
    assert_ne!(
        sqlite_rows(&fresh),
        sqlite_rows(&target),
        "{restated} restated"
    );

    // A checkpoint cut short: not carried, not copied.
    let conn = rusqlite::Connection::open(&fresh).expect("open");
    conn.execute(
        "UPDATE checkpoints SET checkpoint = substr(checkpoint, 1, length(checkpoint) - 3) \
         WHERE checkpoint_id = (SELECT max(checkpoint_id) FROM checkpoints)",
        [],
    )
    .expect("cut");
    drop(conn);
    let cut_target = dir.join("cut.db");
    let err = copy(
        fresh.to_str().expect("utf-8"),
        cut_target.to_str().expect("utf-8"),
        &none,
        &options,
    )
    .await
    .expect_err("a checkpoint cut short");
    assert_eq!(err.kind(), ErrorKind::UnreadableRow, "{err}");
    let _ = fs::remove_dir_all(&dir);
}

/// The copy's checks that look keys up in the other store (the history clash, a thread
/// left out held in part) take keys a page at a time, and a page may be larger than
/// one statement's parameters allow (SQLite: 32,766; three a key): a thread of 11,000
/// checkpoints read in pages of 20,000 is checked in statements of fewer keys, with
/// the same answers.
#[test]
fn a_copy_checks_pages_of_keys_larger_than_a_statement_takes() {
    use crate::support::store_fixture::{sqlite_store, Shape};
    use langgraph_codec::store::{copy, CopyOptions};
    let dir = scratch("copy-large-pages");
    let source_path = dir.join("s.sqlite");
    let shape = Shape {
        threads: 1,
        steps: 11_000,
        message_len: 4,
        max_messages: 1,
        ..Shape::default()
    };
    sqlite_store(&source_path, &shape, "big-");
    let count = |path: &Path, sql: &str| -> u64 {
        let conn = rusqlite::Connection::open(path).expect("open");
        conn.query_row(sql, [], |r| r.get(0)).expect("count")
    };
    let all = "SELECT count(*) FROM checkpoints";
    let n = count(&source_path, all);
    assert!(n > 32_766 / 3, "{n} checkpoints");
    let source = source_path.to_str().expect("utf-8").to_owned();
    let target_path = dir.join("t.sqlite");
    let target = target_path.to_str().expect("utf-8").to_owned();
    let none = StoreKeys::none();
    let big = || CopyOptions::new().page_size(20_000);
    crate::support::rt().block_on(async {
        let first = copy(&source, &target, &none, &big()).await.expect("copy");
        assert_eq!((first.copied, first.mismatches.len()), (n, 0));
        // Into a store now: the history-clash check reads the target's keys in one
        // page and asks the source about them.
        let again = copy(&source, &target, &none, &big()).await.expect("rerun");
        assert_eq!((again.copied, again.already_there), (0, n));
        // The thread left out: its keys in one page, looked up in the target (all
        // there, so not held in part).
        let out = copy(&source, &target, &none, &big().exclude_threads(["big-0"]))
            .await
            .expect("left out");
        assert_eq!((out.checkpoints, out.excluded_partly_copied.len()), (0, 0));
        // Its newest checkpoint gone from the target: held in part.
        let into = rusqlite::Connection::open(&target_path).expect("open");
        let gone = into
            .execute(
                "DELETE FROM checkpoints WHERE checkpoint_id = (SELECT max(checkpoint_id) \
                 FROM checkpoints)",
                [],
            )
            .expect("delete");
        assert_eq!(gone, 1);
        let out = copy(&source, &target, &none, &big().exclude_threads(["big-0"]))
            .await
            .expect("left out");
        let held: Vec<_> = out
            .excluded_partly_copied
            .iter()
            .map(|p| (p.thread.as_str(), p.in_target, p.in_source))
            .collect();
        assert_eq!(held, [("big-0", n - 1, n)]);
    });
    assert_eq!(count(&target_path, all), n - 1);
    let _ = fs::remove_dir_all(&dir);
}

/// A copy into a target that already holds a thread of the copy with checkpoints the
/// source does not have is refused before anything is written, naming the thread (the
/// merged history's newest checkpoint, which Python reads, could be the target's
/// own); a thread only the target holds, and a rerun of the same copy, are not
/// clashes; `merge` copies anyway.
#[tokio::test]
async fn copy_into_a_target_with_another_history_of_a_thread_is_refused_unless_merging() {
    use langgraph_codec::store::{copy, CopyOptions};
    let dir = scratch("clash");
    let source = python_store_in(&dir);
    let none = StoreKeys::none();
    let target = dir.join("target.db");
    let target_s = target.to_str().expect("utf-8");
    let first = copy(&source, target_s, &none, &CopyOptions::new())
        .await
        .expect("copy");
    assert_eq!(first.copied, 12);
    // A rerun of the same copy finds only its own checkpoints: no clash.
    let again = copy(&source, target_s, &none, &CopyOptions::new())
        .await
        .expect("rerun");
    assert_eq!((again.copied, again.already_there), (0, 12));
    // A second source: one thread without its newest checkpoint (the target now holds
    // a checkpoint of it the source lacks), one thread missing altogether.
    let other = dir.join("other.sqlite");
    fs::copy(&source, &other).expect("copy file");
    let conn = rusqlite::Connection::open(&other).expect("open");
    let threads: Vec<String> = conn
        .prepare("SELECT DISTINCT thread_id FROM checkpoints ORDER BY 1")
        .expect("prepare")
        .query_map([], |r| r.get(0))
        .expect("query")
        .collect::<Result<_, _>>()
        .expect("threads");
    assert!(threads.len() >= 2, "{threads:?}");
    let (cut, gone) = (&threads[0], &threads[1]);
    conn.execute(
        "DELETE FROM checkpoints WHERE thread_id = ?1 AND checkpoint_id = (SELECT max(checkpoint_id) FROM checkpoints WHERE thread_id = ?1)",
        [cut],
    )
    .expect("cut");
    conn.execute("DELETE FROM checkpoints WHERE thread_id = ?1", [gone])
        .expect("gone");
    drop(conn);
    let other_s = other.to_str().expect("utf-8");
    let before = sqlite_rows(&target);
    for dry_run in [true, false] {
        let err = copy(
            other_s,
            target_s,
            &none,
            &CopyOptions::new().dry_run(dry_run),
        )
        .await
        .expect_err("refused");
        assert_eq!(err.kind(), ErrorKind::HistoryConflict, "{err}");
        let message = err.to_string();
        assert!(
            message.contains("1 of the thread(s)") && message.contains(cut.as_str()),
            "{message}"
        );
        assert!(!message.contains(gone.as_str()), "{message}");
        assert!(message.contains("--merge"), "{message}");
    }
    assert_eq!(
        sqlite_rows(&target),
        before,
        "a refused copy writes nothing"
    );
    // Only the other thread: no clash.
    let others: Vec<String> = threads.iter().skip(2).cloned().collect();
    if !others.is_empty() {
        copy(
            other_s,
            target_s,
            &none,
            &CopyOptions::new().threads(others),
        )
        .await
        .expect("threads without a clash");
    }
    let merged = copy(other_s, target_s, &none, &CopyOptions::new().merge(true))
        .await
        .expect("merge");
    assert!(merged.mismatches.is_empty(), "{:?}", merged.mismatches);
    assert_eq!(sqlite_rows(&target), before, "everything was there already");
    let _ = fs::remove_dir_all(&dir);
}

/// Inspecting, pruning and upgrading a path with no file behind it answer "store not
/// found", naming the path, and leave no file there (SQLite would make an empty
/// database if asked to open it).
#[tokio::test]
async fn missing_sqlite_files_are_refused_and_not_created_by_inspect_prune_and_upgrade() {
    let dir = scratch("missing");
    let path = dir.join("nothing.db");
    let location = format!("sqlite:{}", path.display());
    let shown = path.to_str().expect("utf-8");
    let check = |what: &str, err: langgraph_codec::Error| {
        assert_eq!(err.kind(), ErrorKind::StoreNotFound, "{what}: {err}");
        assert_eq!(err.subject(), Some(shown), "{what}: {err:?}");
        assert!(!path.exists(), "{what} created {}", path.display());
    };
    check(
        "inspect",
        match AnyStore::open(&location).await {
            Ok(_) => panic!("inspect opened a store at a missing path"),
            Err(e) => e,
        },
    );
    check(
        "prune",
        langgraph_codec::store::prune(
            &location,
            &StoreKeys::none(),
            &langgraph_codec::store::PruneOptions::new().keep_latest(1),
        )
        .await
        .expect_err("no store"),
    );
    check(
        "upgrade",
        langgraph_codec::store::upgrade(&location, &Default::default())
            .await
            .expect_err("no store"),
    );
    let _ = fs::remove_dir_all(&dir);
}
