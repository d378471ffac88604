//! The Postgres saver at its edges: the per-call decompression budget, strict mode
//! against inline values, a cancelled `setup`, connections the server closed, nesting
//! `put` must refuse, a foreign `checkpoints` table, and the errors a first-time user
//! sees when the server is down.

use std::sync::Arc;
use std::time::Duration;

use langgraph_codec::compression::CompressedSerializer;
use langgraph_codec::crypto::{AesMode, EncryptedSerializer};
use langgraph_codec::saver::postgres::PostgresSaver;
use langgraph_codec::saver::{
    ChannelVersion, Checkpoint, CheckpointConfig, CheckpointMetadata, CheckpointSaver, ListOptions,
};
use langgraph_codec::{Error, ErrorKind, JsonPlusSerializer, Value};

use super::{builder, fresh_schema, key, psql, schema_of, url, versions};
use crate::support::pg::tables_in;

/// The kinds of an error and of every `UnreadableRow` source under it, outermost first.
fn kinds(e: &Error) -> Vec<&'static str> {
    let mut out = vec![e.kind().as_str()];
    let mut cur = e;
    while cur.kind() == ErrorKind::UnreadableRow {
        let Some(cause) = cur.cause() else { break };
        out.push(cause.kind().as_str());
        cur = cause;
    }
    out
}

/// 100,000 characters (inflated ~100 kB, a few hundred bytes as `+zlib`), in a list
/// so that it goes to a blob.
fn blob_value(fill: &str) -> Value {
    Value::Array(vec![Value::from(fill.repeat(100_000))])
}

/// Puts one checkpoint with `channels` (each a new 100 kB blob) after `parent`.
async fn put_blobs(
    s: &PostgresSaver,
    parent: &CheckpointConfig,
    step: i64,
    channels: &[&str],
) -> CheckpointConfig {
    let mut cp = Checkpoint::now(step);
    let mut nv = Vec::new();
    for ch in channels {
        cp.channel_values
            .insert((*ch).into(), blob_value(&format!("{step}")));
        let v = ChannelVersion::Int(step + 1);
        cp.channel_versions.insert((*ch).into(), v.clone());
        nv.push((*ch, v));
    }
    s.put(
        parent,
        &cp,
        &CheckpointMetadata::new("loop", step),
        &versions(&nv),
    )
    .await
    .expect("put")
}

fn is_budget(e: &Error, limit: usize) -> bool {
    let mut cur = e;
    loop {
        match cur.kind() {
            ErrorKind::UnreadableRow => match cur.cause() {
                Some(cause) => cur = cause,
                None => return false,
            },
            ErrorKind::DecompressionBudget => return cur.limit() == Some(limit),
            _ => return false,
        }
    }
}

/// `get_tuple`, `list` and delta-channel history each share one
/// decompression budget over all the `+zlib` rows they read, as SQLite and in-memory.
#[tokio::test]
async fn reads_share_one_decompression_budget_per_call() {
    let Some(url) = url() else { return };
    const LIMIT: usize = 250_000;
    let schema = fresh_schema("budget");
    let zlib = Arc::new(CompressedSerializer::new(JsonPlusSerializer::new()));
    let small = builder(&url, &schema)
        .serializer(zlib.clone())
        .max_decompressed_per_call(LIMIT)
        .build()
        .expect("build");
    small.setup().await.expect("setup");
    let roomy = builder(&url, &schema)
        .serializer(zlib)
        .build()
        .expect("build");
    // get_tuple: one checkpoint with three 100 kB blobs (300 kB > 250 kB).
    let wide = put_blobs(&small, &CheckpointConfig::new("wide"), 0, &["a", "b", "c"]).await;
    let e = small.get_tuple(&wide).await.expect_err("over budget");
    assert!(is_budget(&e, LIMIT), "{e} {:?}", kinds(&e));
    assert!(
        kinds(&e).contains(&"decompression_budget"),
        "{:?}",
        kinds(&e)
    );
    let read = roomy
        .get_tuple(&wide)
        .await
        .expect("default budget")
        .expect("stored");
    assert_eq!(read.checkpoint.channel_values.len(), 3);
    // list: three checkpoints of one 100 kB blob each; each alone fits.
    let mut at = CheckpointConfig::new("long");
    for step in 0..3 {
        at = put_blobs(&small, &at, step, &["x"]).await;
    }
    assert!(small.get_tuple(&at).await.expect("one fits").is_some());
    // Each call has its own budget: the same call again works.
    assert!(small.get_tuple(&at).await.expect("again").is_some());
    let e = small
        .list(Some(&CheckpointConfig::new("long")), &ListOptions::new())
        .await
        .expect_err("list over budget");
    assert!(is_budget(&e, LIMIT), "{e}");
    // Large pages select their blobs separately: the same budget applies.
    let e = small
        .list(
            Some(&CheckpointConfig::new("long")),
            &ListOptions::new().limit(1000),
        )
        .await
        .expect_err("large page over budget");
    assert!(is_budget(&e, LIMIT), "{e}");
    assert_eq!(
        roomy
            .list(Some(&CheckpointConfig::new("long")), &ListOptions::new())
            .await
            .expect("default budget")
            .len(),
        3
    );
    // Delta history: three 100 kB writes on the parent of the target.
    let root = put_blobs(&small, &CheckpointConfig::new("delta"), 0, &[]).await;
    for task in ["t1", "t2", "t3"] {
        small
            .put_writes(&root, &[("x".to_owned(), blob_value(task))], task, "")
            .await
            .expect("put_writes");
    }
    let child = put_blobs(&small, &root, 1, &[]).await;
    let e = small
        .get_delta_channel_history(&child, &["x".to_owned()])
        .await
        .expect_err("history over budget");
    assert!(is_budget(&e, LIMIT), "{e}");
    let history = roomy
        .get_delta_channel_history(&child, &["x".to_owned()])
        .await
        .expect("default budget");
    assert_eq!(history.get("x").map(|h| h.writes.len()), Some(3));
}

fn strict_saver_builder(url: &str, schema: &str, strict: bool, all_blobs: bool) -> PostgresSaver {
    let serde = EncryptedSerializer::from_aes_key(key(), AesMode::Eax)
        .expect("key")
        .with_strict(strict);
    builder(url, schema)
        .serializer(Arc::new(serde))
        .all_values_in_blobs(all_blobs)
        .build()
        .expect("build")
}

/// Strict mode with every value in blobs refuses a value planted inline in the
/// `checkpoint` JSONB (a new channel, or an encrypted channel replaced by an inline
/// one) with `plaintext_refused`, in `get_tuple`, `list` and delta history.
#[tokio::test]
async fn strict_all_blobs_refuses_inline_values_planted_in_the_checkpoint_jsonb() {
    let Some(url) = url() else { return };
    let schema = fresh_schema("strict");
    let strict = strict_saver_builder(&url, &schema, true, true);
    strict.setup().await.expect("setup");
    let mut cp = Checkpoint::now(0);
    cp.channel_values.insert("a".into(), Value::from("secret"));
    cp.channel_values.insert("n".into(), Value::from(5));
    cp.channel_values.insert(
        "log".into(),
        Value::DeltaSnapshot(Box::new(Value::from("seed"))),
    );
    let nv = versions(&[
        ("a", ChannelVersion::Int(1)),
        ("n", ChannelVersion::Int(1)),
        ("log", ChannelVersion::Int(1)),
    ]);
    cp.channel_versions = nv.clone();
    let stored = strict
        .put(
            &CheckpointConfig::new("t"),
            &cp,
            &CheckpointMetadata::new("input", -1),
            &nv,
        )
        .await
        .expect("put");
    // What this saver wrote reads back in strict mode (the delta marker included).
    let t = strict
        .get_tuple(&stored)
        .await
        .expect("get")
        .expect("stored");
    assert_eq!(
        t.checkpoint.channel_values.get("a"),
        Some(&Value::from("secret"))
    );
    let child = strict
        .put(
            &stored,
            &Checkpoint::now(1),
            &CheckpointMetadata::new("loop", 0),
            &Default::default(),
        )
        .await
        .expect("child");
    let h = strict
        .get_delta_channel_history(&child, &["a".to_owned()])
        .await
        .expect("history reads");
    assert_eq!(
        h.get("a").and_then(|h| h.seed.clone()),
        Some(Value::from("secret"))
    );
    let c = psql(&url).await;
    let cps = format!("{}.checkpoints", schema_of(&strict));
    let id = stored.checkpoint_id.clone().unwrap_or_default();
    let plants = [
        // A new channel.
        format!(
            "UPDATE {cps} SET checkpoint = jsonb_set(checkpoint, '{{channel_values,planted}}', '\"evil\"') WHERE checkpoint_id = '{id}'"
        ),
        // The encrypted channel `a` replaced: an inline value, its version moved off
        // its blob.
        format!(
            "UPDATE {cps} SET checkpoint = jsonb_set(jsonb_set(checkpoint, '{{channel_values,a}}', '\"evil\"'), '{{channel_versions,a}}', '\"9\"') WHERE checkpoint_id = '{id}'"
        ),
    ];
    let lax = strict_saver_builder(&url, &schema, false, true);
    let not_all_blobs = strict_saver_builder(&url, &schema, true, false);
    for plant in plants {
        let before: String = c
            .query_one(
                &format!("SELECT checkpoint::text FROM {cps} WHERE checkpoint_id = $1"),
                &[&id],
            )
            .await
            .expect("read")
            .get(0);
        c.batch_execute(&plant).await.expect("plant");
        let e = strict.get_tuple(&stored).await.expect_err("planted value");
        assert!(
            kinds(&e).contains(&"plaintext_refused"),
            "{e} {:?}",
            kinds(&e)
        );
        let e = strict
            .list(Some(&CheckpointConfig::new("t")), &ListOptions::new())
            .await
            .expect_err("planted value in list");
        assert!(kinds(&e).contains(&"plaintext_refused"), "{e}");
        let e = strict
            .get_delta_channel_history(&child, &["a".to_owned(), "planted".to_owned()])
            .await
            .expect_err("planted seed");
        assert!(kinds(&e).contains(&"plaintext_refused"), "{e}");
        // Without strict mode, or with Python's inline primitives allowed, the row
        // reads (the planted value is what it holds).
        let read = lax.get_tuple(&stored).await.expect("lax").expect("stored");
        assert!(read
            .checkpoint
            .channel_values
            .values()
            .any(|v| v == &Value::from("evil")));
        assert!(not_all_blobs.get_tuple(&stored).await.is_ok());
        c.execute(
            &format!("UPDATE {cps} SET checkpoint = $2::text::jsonb WHERE checkpoint_id = $1"),
            &[&id, &before],
        )
        .await
        .expect("restore");
        assert!(strict.get_tuple(&stored).await.is_ok());
    }
}

/// The whole kit passes on a strict, all-blobs saver (nothing this saver
/// writes is refused).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn conformance_strict_all_blobs() {
    let Some(url) = url() else { return };
    let report = langgraph_codec::saver::conformance::run_conformance_named(
        "PostgresSaver+aes strict",
        || {
            let url = url.clone();
            async move {
                let s = strict_saver_builder(&url, &fresh_schema("strictconf"), true, true);
                s.setup().await.expect("setup");
                s
            }
        },
    )
    .await;
    assert!(report.is_success(), "{report}");
}

use crate::put_depth_common::{check, nested};

/// `put` refuses metadata (and checkpoint `extra` values) nested deeper than
/// the reader accepts (1,024 levels of JSONB); the thread's latest checkpoint still
/// reads.
#[tokio::test]
async fn put_refuses_nesting_readers_refuse() {
    let Some(url) = url() else { return };
    let s = builder(&url, &fresh_schema("deep")).build().expect("build");
    s.setup().await.expect("setup");
    // The metadata map is level 1: 1,023 levels under a key is the deepest accepted.
    check(&s, 1_023, &[1_024, 5_000]).await;
    let at = CheckpointConfig::new("t");
    for levels in [1_024, 5_000] {
        let mut cp = Checkpoint::now(1);
        cp.extra.insert("deep".into(), nested(levels));
        let e = s
            .put(
                &at,
                &cp,
                &CheckpointMetadata::new("loop", 1),
                &Default::default(),
            )
            .await
            .expect_err("too deep");
        assert_eq!(e.kind().as_str(), "invalid_checkpoint", "{e}");
    }
    assert_eq!(
        s.list(Some(&at), &ListOptions::new())
            .await
            .expect("list")
            .len(),
        2
    );
}

/// A `setup` cancelled at any point (its future dropped by a timeout, maybe
/// while it holds the migration lock or runs a migration) leaves no lock behind on a
/// pooled connection: another saver's `setup` then succeeds, `verify` passes, and so
/// does the cancelled saver's own next `setup`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cancelled_setup_leaves_no_lock_behind() {
    let Some(url) = url() else { return };
    let mut cancelled = 0;
    for delay_us in [
        0u64, 200, 500, 1_000, 2_000, 3_000, 5_000, 8_000, 12_000, 20_000, 30_000, 50_000, 80_000,
        120_000,
    ] {
        let schema = fresh_schema("cancel");
        let a = builder(&url, &schema).build().expect("build");
        if tokio::time::timeout(Duration::from_micros(delay_us), a.setup())
            .await
            .is_err()
        {
            cancelled += 1;
        }
        let b = builder(&url, &schema)
            .lock_timeout(Duration::from_secs(5))
            .build()
            .expect("build");
        b.setup()
            .await
            .unwrap_or_else(|e| panic!("setup after a setup cancelled at {delay_us} us: {e}"));
        b.verify()
            .await
            .unwrap_or_else(|e| panic!("verify after cancel at {delay_us} us: {e}"));
        // The cancelled saver's pool works too (no lock held twice by a pooled session).
        tokio::time::timeout(Duration::from_secs(10), a.setup())
            .await
            .unwrap_or_else(|_| panic!("second setup of the cancelled saver hangs ({delay_us} us)"))
            .unwrap_or_else(|e| panic!("second setup of the cancelled saver ({delay_us} us): {e}"));
        let c = psql(&url).await;
        let invalid = invalid_indexes(&c, &schema).await;
        assert_eq!(
            invalid, 0,
            "invalid index left by a setup cancelled at {delay_us} us"
        );
        // A third saver finds the lock free at once.
        let d = builder(&url, &schema)
            .lock_timeout(Duration::from_millis(200))
            .build()
            .expect("build");
        d.setup().await.expect("lock free");
    }
    assert!(
        cancelled >= 5,
        "only {cancelled} setups were cancelled mid-way"
    );
}

/// `url` with `application_name` set, so a test can find its own pool's backends.
fn url_with_app(url: &str, app: &str) -> String {
    let sep = if url.contains('?') { '&' } else { '?' };
    format!("{url}{sep}application_name={app}")
}

/// After the server terminates every idle connection of the pool, the next
/// `put` succeeds, every time: the retry does not take another dead pooled connection.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn puts_succeed_after_the_server_closes_the_pools_idle_connections() {
    let Some(url) = url() else { return };
    let app = format!("lgcodec_kill_{}", std::process::id());
    let s = PostgresSaver::builder_from_url(&url_with_app(&url, &app))
        .expect("url")
        .schema(fresh_schema("killidle"))
        .build()
        .expect("build");
    s.setup().await.expect("setup");
    let killer = psql(&url).await;
    let mut at = s
        .put(
            &CheckpointConfig::new("t"),
            &Checkpoint::now(-1),
            &CheckpointMetadata::new("input", -1),
            &Default::default(),
        )
        .await
        .expect("first put");
    for round in 0..30 {
        // Several idle connections in the pool.
        let (a, b, c, d) = tokio::join!(
            s.get_tuple(&at),
            s.get_tuple(&at),
            s.get_tuple(&at),
            s.get_tuple(&at)
        );
        for r in [a, b, c, d] {
            r.expect("read");
        }
        let killed = killer
            .query(
                "SELECT pg_terminate_backend(pid) FROM pg_stat_activity
                 WHERE datname = current_database() AND application_name = $1",
                &[&app],
            )
            .await
            .expect("terminate")
            .len();
        assert!(killed >= 1, "no pooled connection to terminate");
        at = s
            .put(
                &at,
                &Checkpoint::now(round),
                &CheckpointMetadata::new("loop", round),
                &Default::default(),
            )
            .await
            .unwrap_or_else(|e| {
                panic!("put after terminating {killed} idle connections (round {round}): {e}")
            });
    }
    let all = s
        .list(Some(&CheckpointConfig::new("t")), &ListOptions::new())
        .await
        .expect("list");
    assert_eq!(all.len(), 31);
}

/// The tables in `schema`, sorted.
/// `setup` over another application's `checkpoints` table (or one of the other
/// names with another layout) is refused with a typed schema error before anything is
/// written: no table created, no migration recorded. Python's deprecated shallow layout
/// likewise, with `shallow_schema`.
#[tokio::test]
async fn setup_refuses_foreign_and_shallow_tables_before_writing_anything() {
    let Some(url) = url() else { return };
    let c = psql(&url).await;
    let foreign = [
        // Another application's table of the same name.
        "CREATE TABLE {s}.checkpoints (id SERIAL PRIMARY KEY, name TEXT, data JSONB)",
        // Our columns, one of another type.
        "CREATE TABLE {s}.checkpoints (thread_id TEXT NOT NULL, checkpoint_ns TEXT NOT NULL DEFAULT '',
           checkpoint_id TEXT NOT NULL, parent_checkpoint_id TEXT, type TEXT,
           checkpoint TEXT NOT NULL, metadata JSONB NOT NULL DEFAULT '{{}}')",
        // Our columns and one more.
        "CREATE TABLE {s}.checkpoint_writes (thread_id TEXT NOT NULL, checkpoint_ns TEXT NOT NULL,
           checkpoint_id TEXT NOT NULL, task_id TEXT NOT NULL, idx INTEGER NOT NULL,
           channel TEXT NOT NULL, type TEXT, blob BYTEA NOT NULL, owner TEXT)",
        // Another migrations table.
        "CREATE TABLE {s}.checkpoint_migrations (name TEXT PRIMARY KEY, applied TIMESTAMPTZ)",
    ];
    for sql in foreign {
        let schema = fresh_schema("foreign");
        c.batch_execute(&format!(
            "CREATE SCHEMA {schema}; {}",
            sql.replace("{s}", &schema).replace("{{}}", "{}")
        ))
        .await
        .expect("foreign table");
        let before = tables_in(&c, &schema).await;
        let s = builder(&url, &schema).build().expect("build");
        let e = s.setup().await.expect_err("foreign layout");
        assert_eq!(e.kind().as_str(), "schema", "{e}");
        assert!(e.to_string().contains(&schema), "{e}");
        assert_eq!(tables_in(&c, &schema).await, before, "setup wrote: {e}");
        let e = s.verify().await.expect_err("foreign layout");
        assert_eq!(e.kind().as_str(), "schema", "{e}");
    }
    // Python's ShallowPostgresSaver, fully set up (its migrations 0..=7 recorded).
    let schema = fresh_schema("shallowsetup");
    c.batch_execute(&format!(
        "CREATE SCHEMA {schema};
         CREATE TABLE {schema}.checkpoint_migrations (v INTEGER PRIMARY KEY);
         CREATE TABLE {schema}.checkpoints (thread_id TEXT NOT NULL, checkpoint_ns TEXT NOT NULL DEFAULT '',
           type TEXT, checkpoint JSONB NOT NULL, metadata JSONB NOT NULL DEFAULT '{{}}',
           PRIMARY KEY (thread_id, checkpoint_ns));
         CREATE TABLE {schema}.checkpoint_blobs (thread_id TEXT NOT NULL, checkpoint_ns TEXT NOT NULL DEFAULT '',
           channel TEXT NOT NULL, type TEXT NOT NULL, blob BYTEA,
           PRIMARY KEY (thread_id, checkpoint_ns, channel));
         CREATE TABLE {schema}.checkpoint_writes (thread_id TEXT NOT NULL, checkpoint_ns TEXT NOT NULL DEFAULT '',
           checkpoint_id TEXT NOT NULL, task_id TEXT NOT NULL, idx INTEGER NOT NULL, channel TEXT NOT NULL,
           type TEXT, blob BYTEA NOT NULL, task_path TEXT NOT NULL DEFAULT '',
           PRIMARY KEY (thread_id, checkpoint_ns, checkpoint_id, task_id, idx));
         INSERT INTO {schema}.checkpoint_migrations SELECT generate_series(0, 7);"
    ))
    .await
    .expect("shallow tables");
    let before = tables_in(&c, &schema).await;
    let s = builder(&url, &schema).build().expect("build");
    let e = s.setup().await.expect_err("shallow layout");
    assert_eq!(e.kind().as_str(), "shallow_schema", "{e}");
    assert_eq!(tables_in(&c, &schema).await, before);
    let n: i64 = c
        .query_one(
            &format!("SELECT count(*) FROM {schema}.checkpoint_migrations"),
            &[],
        )
        .await
        .expect("count")
        .get(0);
    assert_eq!(n, 8, "migrations recorded over the shallow layout");
    // Only the blobs table shallow: refused the same way.
    let schema = fresh_schema("shallowblobs");
    c.batch_execute(&format!(
        "CREATE SCHEMA {schema};
         CREATE TABLE {schema}.checkpoint_blobs (thread_id TEXT NOT NULL, checkpoint_ns TEXT NOT NULL DEFAULT '',
           channel TEXT NOT NULL, type TEXT NOT NULL, blob BYTEA,
           PRIMARY KEY (thread_id, checkpoint_ns, channel));"
    ))
    .await
    .expect("shallow blobs");
    let s = builder(&url, &schema).build().expect("build");
    let e = s.setup().await.expect_err("shallow blobs");
    assert_eq!(e.kind().as_str(), "shallow_schema", "{e}");
    assert_eq!(
        tables_in(&c, &schema).await,
        vec!["checkpoint_blobs".to_owned()]
    );
    // A schema that does not exist yet is created, and set up (creating was asked).
    let schema = fresh_schema("fresh");
    let s = builder(&url, &schema).build().expect("build");
    s.setup().await.expect("setup creates");
    s.verify().await.expect("verify");
    assert_eq!(tables_in(&c, &schema).await.len(), 4);
}

/// The Display of an error and of each of its sources, outermost first.
fn chain(e: &dyn std::error::Error) -> Vec<String> {
    let mut out = vec![e.to_string()];
    let mut cur = e.source();
    while let Some(c) = cur {
        out.push(c.to_string());
        cur = c.source();
    }
    out
}

/// No level of the chain repeats the text of a level under it.
fn each_text_once(texts: &[String]) {
    for (i, outer) in texts.iter().enumerate() {
        for inner in &texts[i + 1..] {
            assert!(
                !outer.contains(inner.as_str()),
                "{outer:?} repeats its source's text {inner:?} (chain {texts:?})"
            );
        }
    }
}

/// With the server down, the error names the host, the port
/// and the cause without walking `source()`; a bad URL says why; a server error gives
/// its SQLSTATE and message; no message repeats its source's text.
#[tokio::test]
async fn connection_errors_name_the_server_and_the_cause_once() {
    let Some(url) = url() else { return };
    // Nothing listens on port 1.
    let down = PostgresSaver::builder_from_url("postgresql://postgres@127.0.0.1:1/h_pg")
        .expect("url")
        .build()
        .expect("build");
    let e = down
        .get_tuple(&CheckpointConfig::new("t"))
        .await
        .expect_err("server down");
    let text = e.to_string();
    assert_eq!(e.kind().as_str(), "connection_unavailable", "{text}");
    assert!(text.contains("127.0.0.1:1"), "{text}");
    assert!(text.contains("connection refused"), "{text}");
    let texts = chain(&e);
    println!("server down: {texts:?}");
    assert!(texts.len() >= 2, "the OS error stays a source: {texts:?}");
    each_text_once(&texts);
    let crate_error = e;
    let texts = chain(&crate_error);
    // What was tried: host and port, database, role and TLS mode.
    assert!(
        texts[0].contains("127.0.0.1:1 (database \"h_pg\", user \"postgres\", sslmode prefer): "),
        "{texts:?}"
    );
    each_text_once(&texts);
    // Setup too.
    let e = down.setup().await.expect_err("server down");
    assert!(
        e.to_string()
            .contains("postgres setup: cannot connect to 127.0.0.1:1"),
        "{e}"
    );
    // A database that does not exist: the server's words, with the address.
    let missing_db = url
        .rsplit_once('/')
        .map(|(base, _)| format!("{base}/h_pg_no_such_database"))
        .expect("url with a database");
    let s = PostgresSaver::builder_from_url(&missing_db)
        .expect("url")
        .build()
        .expect("build");
    let e = s.verify().await.expect_err("no database");
    let text = e.to_string();
    println!("missing database: {:?}", chain(&e));
    assert!(text.contains("3D000"), "{text}");
    assert!(
        text.contains("\"h_pg_no_such_database\" does not exist"),
        "{text}"
    );
    assert!(text.contains(":55432") || !url.contains(":55432"), "{text}");
    each_text_once(&chain(&e));
    // A bad URL says why, and does not echo the password.
    for bad in [
        "postgresql://postgres:s3cret@127.0.0.1:notaport/db",
        "host=127.0.0.1 port=notaport password=s3cret",
    ] {
        let e = PostgresSaver::builder_from_url(bad).expect_err("bad url");
        let text = e.to_string();
        println!("bad url: {:?}", chain(&e));
        assert_eq!(e.kind().as_str(), "invalid_store_location", "{text}");
        assert!(text.contains("port"), "the reason is shown: {text}");
        assert!(!text.contains("s3cret"), "{text}");
        each_text_once(&chain(&e));
    }
    // A server error: SQLSTATE and message in the Display, no repeated source text.
    let s = builder(&url, &fresh_schema("nosetup"))
        .build()
        .expect("build");
    let e = s
        .get_tuple(&CheckpointConfig::new("t"))
        .await
        .expect_err("no tables");
    let text = e.to_string();
    assert!(
        text.contains("42P01") && text.contains("does not exist"),
        "{text}"
    );
    each_text_once(&chain(&e));
}

/// Invalid indexes (left by an interrupted `CREATE INDEX CONCURRENTLY`) in `schema`.
async fn invalid_indexes(c: &tokio_postgres::Client, schema: &str) -> i64 {
    c.query_one(
        "SELECT count(*) FROM pg_index i JOIN pg_class t ON t.oid = i.indrelid
         JOIN pg_namespace n ON n.oid = t.relnamespace
         WHERE n.nspname = $1 AND NOT i.indisvalid",
        &[&schema],
    )
    .await
    .expect("indexes")
    .get(0)
}

/// A cancelled `setup` at the worst point to stop: inside a `CREATE INDEX CONCURRENTLY` migration.
/// A cancelled `setup`'s server session goes on with the statement until it ends (and
/// keeps the lock until then); if that session is killed (`pg_terminate_backend`, a
/// restart), the index stays behind invalid. The next `setup` replaces it (Python's
/// `IF NOT EXISTS` would keep the invalid index for ever).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_setup_killed_inside_create_index_concurrently_leaves_no_invalid_index() {
    let Some(url) = url() else { return };
    let schema = fresh_schema("cic");
    let c = psql(&url).await;
    // An open snapshot makes CREATE INDEX CONCURRENTLY wait (after it has created the
    // index, not yet valid).
    let blocker = psql(&url).await;
    blocker
        .batch_execute("BEGIN ISOLATION LEVEL REPEATABLE READ; SELECT count(*) FROM pg_class")
        .await
        .expect("snapshot");
    let a = builder(&url, &schema).build().expect("build");
    let cancelled = tokio::time::timeout(Duration::from_millis(1500), a.setup()).await;
    assert!(
        cancelled.is_err(),
        "setup did not wait on the index: {cancelled:?}"
    );
    let killed = c
        .query(
            "SELECT pg_terminate_backend(pid, 5000) FROM pg_stat_activity
             WHERE datname = current_database() AND query LIKE 'CREATE INDEX CONCURRENTLY%'
             AND query LIKE '%' || $1 || '%'",
            &[&schema],
        )
        .await
        .expect("terminate")
        .len();
    assert_eq!(
        killed, 1,
        "no CREATE INDEX CONCURRENTLY of this test running"
    );
    blocker.batch_execute("COMMIT").await.expect("commit");
    assert_eq!(
        invalid_indexes(&c, &schema).await,
        1,
        "no invalid index to repair"
    );
    let b = builder(&url, &schema)
        .lock_timeout(Duration::from_secs(5))
        .build()
        .expect("build");
    b.setup().await.expect("setup after the kill");
    b.verify().await.expect("verify");
    assert_eq!(invalid_indexes(&c, &schema).await, 0, "invalid index kept");
    let valid: i64 = c
        .query_one(
            "SELECT count(*) FROM pg_indexes WHERE schemaname = $1 AND indexname LIKE '%thread_id_idx'",
            &[&schema],
        )
        .await
        .expect("indexes")
        .get(0);
    assert_eq!(valid, 3);
}

/// How a saver knows strict mode is on: `Serializer::refuses_plaintext`,
/// answered by `EncryptedSerializer` and forwarded by every wrapper.
#[test]
fn refuses_plaintext_reports_strict_mode_through_wrappers() {
    use langgraph_codec::Serializer;
    let enc = |strict| {
        EncryptedSerializer::from_aes_key(key(), AesMode::Eax)
            .expect("key")
            .with_strict(strict)
    };
    assert!(!JsonPlusSerializer::new().refuses_plaintext());
    assert!(!enc(false).refuses_plaintext());
    assert!(enc(true).refuses_plaintext());
    let wrapped: Arc<dyn Serializer> = Arc::new(CompressedSerializer::new(enc(true)));
    assert!(wrapped.refuses_plaintext());
    let boxed: Box<dyn Serializer> = Box::new(enc(true));
    assert!(boxed.refuses_plaintext());
    let by_ref: &dyn Serializer = &enc(true);
    assert!(by_ref.refuses_plaintext());
    let lax: Arc<dyn Serializer> = Arc::new(CompressedSerializer::new(enc(false)));
    assert!(!lax.refuses_plaintext());
}
