//! Store maintenance (inspect, stats, export/import, copy) on real SQLite files and a
//! real Postgres server: the stores of every release in `vectors/stores/` (written
//! by the real old packages) and stores written by the savers.
//!
//! Postgres tests read `LGCODEC_TEST_PG_URL` and print a skip line without it; each
//! makes its own databases `<that database>_<tag>` and drops them.

use std::fs;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use langgraph_codec::crypto::{AesKey, AesMode, EncryptedSerializer};
use langgraph_codec::saver::sqlite::SqliteSaver;
use langgraph_codec::saver::{
    ChannelVersion, ChannelVersions, Checkpoint, CheckpointConfig, CheckpointMetadata,
    CheckpointSaver,
};
use langgraph_codec::store::{AnyStore, StoreError, StoreKeys};
use langgraph_codec::{JsonPlusSerializer, Value};
use serde_json::Value as Json;

fn stores() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("vectors/stores")
}

fn scratch(tag: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!(
        "lgcodec-maint-{tag}-{}-{}",
        std::process::id(),
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos())
            .unwrap_or(0)
    ));
    fs::create_dir_all(&dir).expect("scratch dir");
    dir
}

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
        let stats = store.stats().await.expect("stats");
        assert_eq!(stats.threads, threads.len() as u64);
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
        .open()
        .expect("open");
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
    assert!(text.contains("(fork: 2 branches)"), "{text}");

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
    assert!(matches!(err, StoreError::Unreadable { .. }), "{err}");
    let _ = fs::remove_dir_all(&dir);
}

pub mod pg {
    use super::*;

    pub fn url() -> Option<String> {
        match std::env::var("LGCODEC_TEST_PG_URL") {
            Ok(u) if !u.is_empty() => Some(u),
            _ => {
                println!(
                    "skipped: LGCODEC_TEST_PG_URL is not set (no PostgreSQL server to test against)"
                );
                None
            }
        }
    }

    pub async fn connect(url: &str) -> tokio_postgres::Client {
        let (client, conn) = tokio_postgres::connect(url, tokio_postgres::NoTls)
            .await
            .expect("connect");
        tokio::spawn(conn);
        client
    }

    /// A fresh, empty database `<base>_<tag>`; its URL.
    pub async fn fresh(url: &str, tag: &str) -> String {
        let cut = url.rfind('/').expect("URL has a database");
        let (server, base) = url.split_at(cut + 1);
        let base = base.split('?').next().unwrap_or(base);
        let db = format!("{base}_{tag}");
        let admin = connect(url).await;
        admin
            .batch_execute(&format!("DROP DATABASE IF EXISTS \"{db}\" WITH (FORCE)"))
            .await
            .expect("drop");
        admin
            .batch_execute(&format!("CREATE DATABASE \"{db}\""))
            .await
            .expect("create");
        format!("{server}{db}")
    }

    /// A fresh database holding `fixture/dump.sql`.
    pub async fn restored(url: &str, fixture: &str) -> String {
        let target = fresh(url, &fixture.replace(['-', '.'], "_")).await;
        let sql = fs::read_to_string(stores().join(fixture).join("dump.sql")).expect("dump");
        connect(&target)
            .await
            .batch_execute(&sql)
            .await
            .expect("restore");
        target
    }

    /// Every row of every table, ordered.
    pub async fn digest(url: &str) -> String {
        let client = connect(url).await;
        let mut out = String::new();
        for t in [
            "checkpoints",
            "checkpoint_blobs",
            "checkpoint_writes",
            "checkpoint_migrations",
        ] {
            let rows = client
                .query(&format!("SELECT t::text FROM {t} t ORDER BY 1"), &[])
                .await
                .map(|rows| {
                    rows.iter()
                        .map(|r| r.get::<_, String>(0))
                        .collect::<Vec<_>>()
                })
                .unwrap_or_default();
            out.push_str(t);
            for r in rows {
                out.push('\n');
                out.push_str(&r);
            }
            out.push('\n');
        }
        out
    }
}

#[tokio::test]
async fn inspect_reads_postgres_stores_of_every_release_without_a_write() {
    let Some(url) = pg::url() else { return };
    for fixture in [
        "postgres-py-1.0.0",
        "postgres-py-2.0.0",
        "postgres-py-2.0.8",
        "postgres-py-3.2.0",
        "postgres-js-1.0.5",
    ] {
        let db = pg::restored(&url, fixture).await;
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
        let stats = store.stats().await.expect("stats");
        assert!(stats.total.blobs.rows > 0, "{fixture}");
        drop(store);
        assert_eq!(pg::digest(&db).await, before, "{fixture}: rows changed");
    }
}
