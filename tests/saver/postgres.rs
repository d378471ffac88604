//! `PostgresSaver` against a real PostgreSQL server: the conformance kit (plain and
//! encrypted), schema/migration behaviour, Python's row semantics, load and faults.
//!
//! The server URL comes from `LGCODEC_TEST_PG_URL` (CI starts a throw-away server, see
//! `.ci/checks.d/postgres.sh`); without it every test prints a skip line and passes.
//! Each test works in its own schema, so tests run in parallel.

use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Arc;

use langgraph_codec::crypto::{AesMode, EncryptedSerializer};
use langgraph_codec::saver::conformance;
use langgraph_codec::saver::postgres::{PostgresSaver, PostgresSaverBuilder, StatementMode};
use langgraph_codec::saver::{
    ChannelVersion, Checkpoint, CheckpointConfig, CheckpointMetadata, CheckpointSaver, ListOptions,
};
use langgraph_codec::{Error, ErrorKind, Value};

// `psql`: one direct client for inspecting rows.
use crate::support::pg::{connect as psql, url};

/// A schema name no other test (or test process) uses.
fn fresh_schema(tag: &str) -> String {
    static N: AtomicU32 = AtomicU32::new(0);
    format!(
        "t_{tag}_{}_{}_{}",
        std::process::id(),
        N.fetch_add(1, Ordering::Relaxed),
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.subsec_nanos())
            .unwrap_or(0)
    )
}

fn builder(url: &str, schema: &str) -> PostgresSaverBuilder {
    PostgresSaver::builder_from_url(url)
        .expect("valid url")
        .schema(schema)
}

async fn saver(url: &str, tag: &str) -> PostgresSaver {
    let s = builder(url, &fresh_schema(tag))
        .build()
        .expect("valid schema");
    s.setup().await.expect("setup");
    s
}

fn key() -> &'static [u8] {
    b"0123456789abcdef0123456789abcdef"
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn conformance_full_plain() {
    let Some(url) = url() else { return };
    for mode in [StatementMode::Prepared, StatementMode::Unnamed] {
        let report = conformance::run_conformance_named("PostgresSaver", || {
            let url = url.clone();
            async move {
                let s = builder(&url, &fresh_schema("conf"))
                    .statement_mode(mode)
                    .build()
                    .expect("builder");
                s.setup().await.expect("setup");
                s
            }
        })
        .await;
        println!("{report}");
        assert!(report.is_success(), "{mode:?}\n{report}");
        assert_eq!(report.conformance_level(), "FULL");
        assert_eq!(report.passed(), 98, "{report}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn conformance_full_encrypted_all_blobs() {
    let Some(url) = url() else { return };
    for all_blobs in [false, true] {
        let report = conformance::run_conformance_named("PostgresSaver+aes", || {
            let url = url.clone();
            async move {
                let serde = EncryptedSerializer::from_aes_key(key(), AesMode::Eax).expect("key");
                let s = builder(&url, &fresh_schema("enc"))
                    .serializer(Arc::new(serde))
                    .all_values_in_blobs(all_blobs)
                    .build()
                    .expect("builder");
                s.setup().await.expect("setup");
                s
            }
        })
        .await;
        println!("{report}");
        assert!(report.is_success(), "all_blobs={all_blobs}\n{report}");
        assert_eq!(report.passed(), 98, "{report}");
    }
}

fn kind(e: &Error) -> &'static str {
    e.kind().as_str()
}

fn err_sqlstate(e: &Error) -> Option<&str> {
    e.sqlstate()
}

fn versions(pairs: &[(&str, ChannelVersion)]) -> langgraph_codec::saver::ChannelVersions {
    pairs
        .iter()
        .map(|(k, v)| ((*k).to_owned(), v.clone()))
        .collect()
}

#[tokio::test]
async fn setup_runs_python_migrations_once_even_from_many_replicas() {
    let Some(url) = url() else { return };
    let schema = fresh_schema("race");
    // Eight replicas start at once on an empty schema.
    let mut tasks = Vec::new();
    for _ in 0..8 {
        let s = builder(&url, &schema).build().expect("builder");
        tasks.push(tokio::spawn(async move { s.setup().await }));
    }
    for t in tasks {
        t.await.expect("task").expect("setup");
    }
    let c = psql(&url).await;
    let vs: Vec<i32> = c
        .query(
            &format!("SELECT v FROM \"{schema}\".checkpoint_migrations ORDER BY v"),
            &[],
        )
        .await
        .expect("query")
        .iter()
        .map(|r| r.get(0))
        .collect();
    assert_eq!(vs, (0..=9).collect::<Vec<i32>>());
    // The three thread_id indexes exist and are valid (CREATE INDEX CONCURRENTLY ran).
    let n: i64 = c
        .query_one(
            "SELECT count(*) FROM pg_index i JOIN pg_class x ON x.oid = i.indexrelid
             JOIN pg_namespace n ON n.oid = x.relnamespace
             WHERE n.nspname = $1 AND x.relname LIKE '%thread_id_idx' AND i.indisvalid",
            &[&schema],
        )
        .await
        .expect("query")
        .get(0);
    assert_eq!(n, 3);
    let s = builder(&url, &schema).build().expect("builder");
    s.setup().await.expect("setup again is a no-op");
    s.verify().await.expect("verify");
}

#[tokio::test]
async fn verify_refuses_missing_shallow_newer_and_incomplete_schemas() {
    let Some(url) = url() else { return };
    let c = psql(&url).await;
    // Missing.
    let missing = builder(&url, &fresh_schema("missing")).build().expect("b");
    let e = missing.verify().await.expect_err("no tables");
    assert_eq!(kind(&e), "schema_missing", "{e}");
    // Shallow saver layout (checkpoints without checkpoint_id).
    let shallow = fresh_schema("shallow");
    c.batch_execute(&format!(
        "CREATE SCHEMA {shallow}; CREATE TABLE {shallow}.checkpoint_migrations (v INTEGER PRIMARY KEY);
         CREATE TABLE {shallow}.checkpoints (thread_id TEXT NOT NULL, checkpoint_ns TEXT NOT NULL DEFAULT '',
           type TEXT, checkpoint JSONB NOT NULL, metadata JSONB NOT NULL DEFAULT '{{}}',
           PRIMARY KEY (thread_id, checkpoint_ns))"
    ))
    .await
    .expect("shallow tables");
    let s = builder(&url, &shallow).build().expect("b");
    assert_eq!(
        kind(&s.verify().await.expect_err("shallow")),
        "shallow_schema"
    );
    assert_eq!(
        kind(&s.setup().await.expect_err("shallow")),
        "shallow_schema"
    );
    // Newer than known, and incomplete.
    let s = saver(&url, "newer").await;
    let schema = format!("{:?}", s);
    let name = schema
        .split("schema: Some(\"")
        .nth(1)
        .and_then(|r| r.split('"').next())
        .expect("schema in Debug")
        .to_owned();
    c.batch_execute(&format!(
        "INSERT INTO {name}.checkpoint_migrations VALUES (10)"
    ))
    .await
    .expect("insert");
    match s.verify().await {
        Err(e) if e.kind() == ErrorKind::SchemaTooNew => {
            assert!(
                e.to_string()
                    .ends_with("is at migration 10, newer than the last known (9)"),
                "{e}"
            );
            assert_eq!(e.subject(), Some(name.as_str()), "{e:?}");
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(kind(&s.setup().await.expect_err("newer")), "schema_too_new");
    c.batch_execute(&format!(
        "DELETE FROM {name}.checkpoint_migrations WHERE v >= 9"
    ))
    .await
    .expect("delete");
    assert_eq!(
        kind(&s.verify().await.expect_err("incomplete")),
        "schema_incomplete"
    );
    s.setup().await.expect("setup completes it");
    s.verify().await.expect("complete again");
    // Invalid schema names are refused before any SQL runs.
    let e = builder(&url, "x; DROP TABLE y")
        .build()
        .expect_err("bad name");
    assert_eq!(kind(&e), "invalid_schema_name");
}

/// The schema of a saver, from its Debug output (tests only).
fn schema_of(s: &PostgresSaver) -> String {
    format!("{s:?}")
        .split("schema: Some(\"")
        .nth(1)
        .and_then(|r| r.split('"').next())
        .expect("schema in Debug")
        .to_owned()
}

async fn rows_of(c: &tokio_postgres::Client, sql: &str) -> Vec<tokio_postgres::Row> {
    c.query(sql, &[]).await.expect(sql)
}

fn delta(v: Value) -> Value {
    Value::DeltaSnapshot(Box::new(v))
}

/// A Python int beyond 64 bits, as the crate holds it.
fn big(digits: &str) -> Value {
    Value::BigInt(Box::new(digits.parse().expect("digits")))
}

#[tokio::test]
async fn put_splits_values_as_python_and_moves_what_jsonb_cannot_hold_to_blobs() {
    let Some(url) = url() else { return };
    let s = saver(&url, "split").await;
    let schema = schema_of(&s);
    let mut cp = Checkpoint::now(0);
    let big = big("1180591620717411303424");
    let values = [
        ("s", Value::from("text")),
        ("i", Value::from(7i64)),
        ("f", Value::F64(1.5)),
        ("b", Value::Bool(true)),
        ("n", Value::Nil),
        ("big", big.clone()),
        ("list", Value::Array(vec![Value::from(1i64)])),
        ("snap", delta(Value::Array(vec![Value::from("m")]))),
        ("nan", Value::F64(f64::NAN)),
        ("nul", Value::from("a\u{0}b")),
    ];
    let mut nv = Vec::new();
    for (k, v) in &values {
        cp.channel_values.insert((*k).to_owned(), v.clone());
        let ver = s.get_next_version(None).expect("version");
        cp.channel_versions.insert((*k).to_owned(), ver.clone());
        nv.push(((*k).to_owned(), ver));
    }
    let new_versions = nv.into_iter().collect();
    let stored = s
        .put(
            &CheckpointConfig::new("t"),
            &cp,
            &CheckpointMetadata::new("input", -1),
            &new_versions,
        )
        .await
        .expect("put");
    let c = psql(&url).await;
    let inline: String = rows_of(
        &c,
        &format!("SELECT (checkpoint -> 'channel_values')::text FROM {schema}.checkpoints"),
    )
    .await[0]
        .get(0);
    // Python's split: primitives inline, a snapshot leaves `true`, no list/NaN/NUL inline.
    let inline = langgraph_codec::json::parse(inline.as_bytes(), 64).expect("json");
    let keys: Vec<&str> = inline
        .as_map()
        .expect("map")
        .iter()
        .filter_map(|(k, _)| k.as_str())
        .collect();
    let mut keys = keys;
    keys.sort();
    assert_eq!(
        keys,
        ["b", "f", "i", "n", "s", "big", "snap"]
            .iter()
            .copied()
            .collect::<std::collections::BTreeSet<_>>()
            .into_iter()
            .collect::<Vec<_>>()
    );
    assert_eq!(inline.get("snap"), Some(&Value::Bool(true)));
    assert_eq!(inline.get("big"), Some(&big));
    let blob_channels: Vec<String> = rows_of(
        &c,
        &format!("SELECT channel FROM {schema}.checkpoint_blobs ORDER BY channel"),
    )
    .await
    .iter()
    .map(|r| r.get(0))
    .collect();
    assert_eq!(blob_channels, ["list", "nan", "nul", "snap"]);
    // Everything reads back.
    let t = s.get_tuple(&stored).await.expect("get").expect("stored");
    for (k, v) in &values {
        let got = t.checkpoint.channel_values.get(*k).expect(k);
        match v {
            Value::F64(f) if f.is_nan() => assert!(matches!(got, Value::F64(g) if g.is_nan())),
            _ => assert_eq!(got, v, "{k}"),
        }
    }
}

#[tokio::test]
async fn all_values_in_blobs_with_encryption_leaves_no_value_in_clear() {
    let Some(url) = url() else { return };
    let serde = EncryptedSerializer::from_aes_key(key(), AesMode::Gcm).expect("key");
    let s = builder(&url, &fresh_schema("allblobs"))
        .serializer(Arc::new(serde))
        .all_values_in_blobs(true)
        .build()
        .expect("b");
    s.setup().await.expect("setup");
    let schema = schema_of(&s);
    let mut cp = Checkpoint::now(0);
    let v1 = s.get_next_version(None).expect("v");
    cp.channel_values
        .insert("secret".into(), Value::from("top secret"));
    cp.channel_values.insert("count".into(), Value::from(3i64));
    cp.channel_versions.insert("secret".into(), v1.clone());
    cp.channel_versions.insert("count".into(), v1.clone());
    let first = s
        .put(
            &CheckpointConfig::new("t"),
            &cp,
            &CheckpointMetadata::new("input", -1),
            &versions(&[("secret", v1.clone()), ("count", v1.clone())]),
        )
        .await
        .expect("put");
    // Next step: only `count` changes; `secret` is unchanged (not in new_versions).
    let mut cp2 = cp.clone();
    cp2.id = langgraph_codec::saver::uuid6(1);
    let v2 = s.get_next_version(Some(&v1)).expect("v");
    cp2.channel_values.insert("count".into(), Value::from(4i64));
    cp2.channel_versions.insert("count".into(), v2.clone());
    let second = s
        .put(
            &first,
            &cp2,
            &CheckpointMetadata::new("loop", 0),
            &versions(&[("count", v2)]),
        )
        .await
        .expect("put");
    let c = psql(&url).await;
    for r in rows_of(
        &c,
        &format!("SELECT checkpoint::text FROM {schema}.checkpoints"),
    )
    .await
    {
        let text: String = r.get(0);
        assert!(
            !text.contains("top secret") && text.contains("\"channel_values\": {}"),
            "{text}"
        );
    }
    for r in rows_of(
        &c,
        &format!("SELECT type, blob FROM {schema}.checkpoint_blobs"),
    )
    .await
    {
        let tag: String = r.get(0);
        let blob: Vec<u8> = r.get(1);
        assert!(tag.ends_with("+aes"), "{tag}");
        assert!(!blob.windows(10).any(|w| w == b"top secret"));
    }
    let t = s.get_tuple(&second).await.expect("get").expect("stored");
    assert_eq!(
        t.checkpoint.channel_values.get("secret"),
        Some(&Value::from("top secret"))
    );
    assert_eq!(
        t.checkpoint.channel_values.get("count"),
        Some(&Value::from(4i64))
    );
}

#[tokio::test]
async fn metadata_jsonb_is_python_s_and_numbers_read_as_json_loads() {
    let Some(url) = url() else { return };
    let s = saver(&url, "meta").await;
    let config = CheckpointConfig::new("t").with_metadata("user", "ann\u{0}");
    let mut config = config;
    config
        .configurable
        .insert("run_name".into(), Value::from("r1"));
    config
        .configurable
        .insert("__hidden".into(), Value::from("x"));
    let md = CheckpointMetadata::new("input", -1)
        .with("writes", Value::map([("a", Value::from(1i64))]))
        .with("big", big("-1180591620717411303424"))
        .with("one", Value::F64(1.0))
        .with("huge", Value::F64(1e100))
        .with(
            "nested",
            Value::map([("k", Value::from("v")), ("l", Value::from(2i64))]),
        );
    let stored = s
        .put(&config, &Checkpoint::now(0), &md, &Default::default())
        .await
        .expect("put");
    let t = s.get_tuple(&stored).await.expect("get").expect("stored");
    let m = &t.metadata;
    assert_eq!(m.get("writes"), None, "Python drops `writes`");
    assert_eq!(m.get("user"), Some(&Value::from("ann")), "NUL stripped");
    assert_eq!(m.get("run_name"), Some(&Value::from("r1")));
    assert_eq!(m.get("__hidden"), None);
    assert_eq!(m.get("one"), Some(&Value::F64(1.0)), "1.0 stays a float");
    // Python's json.loads reads jsonb's 1e100 (printed as 101 digits) as an int.
    let digits = format!("1{}", "0".repeat(100));
    assert_eq!(m.get("huge"), Some(&big(&digits)));
    assert_eq!(m.get("big"), Some(&big("-1180591620717411303424")));
    // Containment filter, as Python's `metadata @> filter`.
    let found = s
        .list(
            None,
            &ListOptions::new().filter("nested", Value::map([("k", Value::from("v"))])),
        )
        .await
        .expect("list");
    assert_eq!(found.len(), 1);
    let none = s
        .list(
            None,
            &ListOptions::new().filter("nested", Value::map([("k", Value::from("w"))])),
        )
        .await
        .expect("list");
    assert!(none.is_empty());
    // Metadata JSONB cannot hold NaN: a typed error, nothing written.
    let e = s
        .put(
            &CheckpointConfig::new("t2"),
            &Checkpoint::now(0),
            &CheckpointMetadata::new("input", -1).with("bad", Value::F64(f64::NAN)),
            &Default::default(),
        )
        .await
        .expect_err("NaN metadata");
    assert_eq!(kind(&e), "not_jsonb", "{e}");
    assert!(e.to_string().contains("$.bad"), "{e}");
    assert!(s
        .get_tuple(&CheckpointConfig::new("t2"))
        .await
        .expect("get")
        .is_none());
}

#[tokio::test]
async fn regular_writes_keep_the_first_special_writes_the_last() {
    let Some(url) = url() else { return };
    let s = saver(&url, "writes").await;
    let cfg = s
        .put(
            &CheckpointConfig::new("t"),
            &Checkpoint::now(0),
            &CheckpointMetadata::new("input", -1),
            &Default::default(),
        )
        .await
        .expect("put");
    s.put_writes(&cfg, &[("a".into(), Value::from(1i64))], "task", "p")
        .await
        .expect("w");
    s.put_writes(&cfg, &[("a".into(), Value::from(2i64))], "task", "p")
        .await
        .expect("w");
    s.put_writes(
        &cfg,
        &[("__interrupt__".into(), Value::from(1i64))],
        "task",
        "p",
    )
    .await
    .expect("w");
    s.put_writes(
        &cfg,
        // Two special writes to one index in one call: Python's executemany upserts
        // both, so the last wins.
        &[
            ("__interrupt__".into(), Value::from(3i64)),
            ("__interrupt__".into(), Value::from(2i64)),
        ],
        "task",
        "p",
    )
    .await
    .expect("w");
    // A mixed call (not all special) inserts-or-ignores one by one in Python: of two
    // errors at index -1 in it, the first wins.
    s.put_writes(
        &cfg,
        &[
            ("__error__".into(), Value::from("first")),
            ("b".into(), Value::from(5i64)),
            ("__error__".into(), Value::from("second")),
        ],
        "task1",
        "p",
    )
    .await
    .expect("w");
    // Order: (task_path, task_id, idx): "" < "p"; idx -3 before 0.
    s.put_writes(&cfg, &[("z".into(), Value::from(0i64))], "task0", "")
        .await
        .expect("w");
    let t = s.get_tuple(&cfg).await.expect("get").expect("stored");
    let got: Vec<(String, String, Value)> = t
        .pending_writes
        .iter()
        .map(|w| (w.task_id.clone(), w.channel.clone(), w.value.clone()))
        .collect();
    assert_eq!(
        got,
        [
            ("task0".into(), "z".into(), Value::from(0i64)),
            ("task".into(), "__interrupt__".into(), Value::from(2i64)),
            ("task".into(), "a".into(), Value::from(1i64)),
            ("task1".into(), "__error__".into(), Value::from("first")),
            ("task1".into(), "b".into(), Value::from(5i64)),
        ]
    );
}

/// A chain longer than Python's 1,024-row page: the seed is at the root, every later
/// checkpoint has one write to the delta channel.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn delta_history_past_1024_checkpoints() {
    let Some(url) = url() else { return };
    let s = saver(&url, "delta").await;
    let n: i64 = 1100;
    let mut cp = Checkpoint::now(-1);
    let v = s.get_next_version(None).expect("v");
    cp.channel_values
        .insert("log".into(), delta(Value::Array(vec![])));
    cp.channel_versions.insert("log".into(), v.clone());
    let mut cfg = s
        .put(
            &CheckpointConfig::new("t"),
            &cp,
            &CheckpointMetadata::new("input", -1),
            &versions(&[("log", v)]),
        )
        .await
        .expect("put");
    for i in 0..n {
        s.put_writes(&cfg, &[("log".into(), Value::from(i))], "task", "")
            .await
            .expect("w");
        // Each step bumps the channel's version without storing a value (what a
        // DeltaChannel between snapshots leaves), so no blob exists at the new version.
        let mut next = cp.clone();
        next.id = langgraph_codec::saver::uuid6(i);
        next.channel_values.clear();
        let bumped = s
            .get_next_version(cp.channel_versions.get("log"))
            .expect("version");
        next.channel_versions.insert("log".into(), bumped);
        cp = next.clone();
        let md = CheckpointMetadata::new("loop", i).with(
            "counters_since_delta_snapshot",
            Value::map([(
                "log",
                Value::Array(vec![Value::from(i + 1), Value::from(i + 1)]),
            )]),
        );
        cfg = s
            .put(&cfg, &next, &md, &Default::default())
            .await
            .expect("put");
    }
    let h = s
        .get_delta_channel_history(&cfg, &["log".to_owned()])
        .await
        .expect("history");
    let log = h.get("log").expect("log");
    assert_eq!(log.seed, Some(delta(Value::Array(vec![]))));
    let got: Vec<Value> = log.writes.iter().map(|w| w.value.clone()).collect();
    assert_eq!(got, (0..n).map(Value::from).collect::<Vec<_>>());
    // The default parent-chain walk (Python's base behaviour) agrees.
    let walk = langgraph_codec::saver::default_delta_channel_history(&s, &cfg, &["log".to_owned()])
        .await
        .expect("walk");
    assert_eq!(&walk, &h);
    // Pruning keeps what the latest checkpoint needs to rebuild `log`.
    s.prune(
        &["t".to_owned()],
        langgraph_codec::saver::PruneStrategy::KeepLatest,
    )
    .await
    .expect("prune");
    let again = s
        .get_delta_channel_history(&cfg, &["log".to_owned()])
        .await
        .expect("history");
    assert_eq!(again, h);
}

/// `prune` reads which channels each checkpoint of the threads stores (for the
/// DeltaChannel walks) by probing the blobs' key: the server does not scan the
/// thread's blobs again for each checkpoint, which made a thread's prune grow with
/// the square of its length. In a database of its own, where the
/// server's scan counts are the saver's alone.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn prune_probes_each_checkpoints_blobs_by_key() {
    let Some(url) = url() else { return };
    let db = crate::support::pg::fresh(&url, "saver_prune_probe").await;
    let n: i64 = 2_000;
    {
        let s = PostgresSaver::builder_from_url(&db)
            .expect("url")
            .build()
            .expect("saver");
        s.setup().await.expect("setup");
        let mut cfg = CheckpointConfig::new("t");
        let mut version = None;
        for i in 0..n {
            // A list (kept in a blob) at a new version each step.
            let v = s.get_next_version(version.as_ref()).expect("version");
            let mut cp = Checkpoint::now(i);
            cp.channel_values
                .insert("msgs".into(), Value::Array(vec![Value::from(i)]));
            cp.channel_versions.insert("msgs".into(), v.clone());
            cfg = s
                .put(
                    &cfg,
                    &cp,
                    &CheckpointMetadata::new("loop", i),
                    &versions(&[("msgs", v.clone())]),
                )
                .await
                .expect("put");
            version = Some(v);
        }
    }
    let client = psql(&db).await;
    client.batch_execute("ANALYZE").await.expect("analyze");
    let before = crate::support::pg::scans_not_by_key(&client, "checkpoint_blobs").await;
    {
        let s = PostgresSaver::builder_from_url(&db)
            .expect("url")
            .build()
            .expect("saver");
        s.prune(
            &["t".to_owned()],
            langgraph_codec::saver::PruneStrategy::KeepLatest,
        )
        .await
        .expect("prune");
    }
    let scanned = crate::support::pg::scans_not_by_key(&client, "checkpoint_blobs").await - before;
    assert!(
        scanned < 10,
        "{scanned} scans of the blobs not by key for {n} checkpoints"
    );
    let left: i64 = client
        .query_one("SELECT count(*) FROM checkpoints", &[])
        .await
        .expect("count")
        .get(0);
    assert_eq!(left, 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sixteen_tasks_times_1000_mixed_operations_lose_nothing() {
    let Some(url) = url() else { return };
    let s = Arc::new(saver(&url, "load").await);
    let mut tasks = Vec::new();
    for task in 0..16i64 {
        let s = Arc::clone(&s);
        tasks.push(tokio::spawn(async move {
            let thread = format!("load-{task}");
            let mut cfg = CheckpointConfig::new(thread.clone());
            let mut puts = 0usize;
            let mut writes = 0usize;
            for op in 0..1000i64 {
                match op % 4 {
                    0 => {
                        let mut cp = Checkpoint::now(op);
                        cp.channel_values.insert("n".into(), Value::from(op));
                        cp.channel_values
                            .insert("msgs".into(), Value::Array(vec![Value::from(op); 3]));
                        let v = ChannelVersion::Int(op + 1);
                        cp.channel_versions.insert("n".into(), v.clone());
                        cp.channel_versions.insert("msgs".into(), v.clone());
                        cfg = s
                            .put(
                                &cfg,
                                &cp,
                                &CheckpointMetadata::new("loop", op),
                                &versions(&[("n", v.clone()), ("msgs", v)]),
                            )
                            .await?;
                        puts += 1;
                    }
                    1 => {
                        s.put_writes(
                            &cfg,
                            &[("w".into(), Value::from(op))],
                            &format!("t{op}"),
                            "",
                        )
                        .await?;
                        writes += 1;
                    }
                    2 => {
                        let t = s.get_tuple(&cfg).await?.expect("just stored");
                        assert_eq!(t.pending_writes.len(), 1);
                    }
                    _ => {
                        let page = s
                            .list(
                                Some(&CheckpointConfig::new(thread.clone())),
                                &ListOptions::new().limit(5),
                            )
                            .await?;
                        assert_eq!(page.len(), puts.min(5));
                    }
                }
            }
            Ok::<_, Error>((thread, puts, writes))
        }));
    }
    for t in tasks {
        let (thread, puts, writes) = t.await.expect("task").expect("ops");
        let all = s
            .list(Some(&CheckpointConfig::new(thread)), &ListOptions::new())
            .await
            .expect("list");
        assert_eq!(all.len(), puts);
        assert_eq!(
            all.iter().map(|t| t.pending_writes.len()).sum::<usize>(),
            writes
        );
        for (i, t) in all.iter().rev().enumerate() {
            let op = i64::try_from(i * 4).expect("small");
            assert_eq!(t.checkpoint.channel_values.get("n"), Some(&Value::from(op)));
        }
    }
}

/// A connection killed in the middle of `put` leaves nothing half-written, and the next
/// call works on a fresh connection.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn connection_killed_mid_put_leaves_no_partial_checkpoint() {
    let Some(url) = url() else { return };
    let s = saver(&url, "fault").await;
    let schema = schema_of(&s);
    let mut locker = psql(&url).await;
    let watcher = psql(&url).await;
    // Hold a lock that makes the checkpoint insert wait (after its blobs are inserted).
    let tx = locker.transaction().await.expect("tx");
    tx.batch_execute(&format!(
        "LOCK TABLE {schema}.checkpoints IN EXCLUSIVE MODE"
    ))
    .await
    .expect("lock");
    let mut cp = Checkpoint::now(0);
    cp.channel_values
        .insert("big".into(), Value::Array(vec![Value::from("x"); 100]));
    cp.channel_versions
        .insert("big".into(), ChannelVersion::Int(1));
    let put = {
        let s = s.clone();
        let cp = cp.clone();
        tokio::spawn(async move { put_big_channel(&s, &cp).await })
    };
    // Find the blocked backend and kill it.
    let mut killed = false;
    for _ in 0..200 {
        let rows = watcher
            .query(
                "SELECT pg_terminate_backend(pid) FROM pg_stat_activity
                 WHERE wait_event_type = 'Lock' AND query LIKE 'WITH %checkpoint_blobs%'",
                &[],
            )
            .await
            .expect("terminate");
        if !rows.is_empty() {
            killed = true;
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    assert!(killed, "the put never blocked");
    // Release the lock before waiting: should the driver report the kill as a closed
    // connection, `put` runs its one statement again on another connection.
    tx.rollback().await.expect("unlock");
    let outcome = put.await.expect("task");
    if let Ok(stored) = &outcome {
        // Retried as a whole: the checkpoint and its blob are both there.
        let t = s.get_tuple(stored).await.expect("get").expect("complete");
        assert!(t.checkpoint.channel_values.contains_key("big"));
        return;
    }
    let err = outcome.expect_err("killed mid-put");
    assert_eq!(kind(&err), "storage", "{err}");
    assert_eq!(
        err_sqlstate(&err),
        Some("57P01"),
        "terminated by the administrator: {err}"
    );
    let c = psql(&url).await;
    for table in ["checkpoints", "checkpoint_blobs"] {
        let n: i64 = c
            .query_one(&format!("SELECT count(*) FROM {schema}.{table}"), &[])
            .await
            .expect("count")
            .get(0);
        assert_eq!(n, 0, "{table} has rows of the killed put");
    }
    // The saver recovers: the pool drops the dead connection.
    let stored = put_big_channel(&s, &cp).await.expect("put after the kill");
    assert!(s.get_tuple(&stored).await.expect("get").is_some());
}

/// 23 kB of msgpack that compresses well: TOAST compresses it in place.
fn big_compressible_value() -> Value {
    Value::Array(vec![Value::from("a message that repeats itself "); 800])
}

/// `put` of `cp` on thread `t`, its channel `big` new at version 1.
async fn put_big_channel(s: &PostgresSaver, cp: &Checkpoint) -> Result<CheckpointConfig, Error> {
    s.put(
        &CheckpointConfig::new("t"),
        cp,
        &CheckpointMetadata::new("input", -1),
        &versions(&[("big", ChannelVersion::Int(1))]),
    )
    .await
}

/// How each `blob` of a table is stored (`pglz`, `lz4`, or `None` uncompressed).
async fn compression_of(
    c: &tokio_postgres::Client,
    schema: &str,
    table: &str,
) -> Vec<Option<String>> {
    rows_of(
        c,
        &format!("SELECT pg_column_compression(blob) FROM {schema}.{table}"),
    )
    .await
    .iter()
    .map(|r| r.get(0))
    .collect()
}

/// `put` of a checkpoint holding `big` (as a blob), then `put_writes` of `big`.
async fn put_big(s: &PostgresSaver, big: &Value) -> Result<CheckpointConfig, Error> {
    let mut cp = Checkpoint::now(0);
    cp.channel_values.insert("big".into(), big.clone());
    cp.channel_versions
        .insert("big".into(), ChannelVersion::Int(1));
    let stored = put_big_channel(s, &cp).await?;
    s.put_writes(&stored, &[("big".to_owned(), big.clone())], "task", "")
        .await?;
    Ok(stored)
}

/// Values large enough for TOAST are compressed with lz4 when the server has it and its
/// configuration left `default_toast_compression` at its default (pglz costs several
/// times the server's CPU); the setting does not outlive the statement, a connection's
/// own choice is kept, and everything reads back (decompression is the server's, so
/// Python reads the same bytes).
#[tokio::test]
async fn large_values_are_toasted_with_lz4_unless_the_connection_chose() {
    let Some(url) = url() else { return };
    let c = psql(&url).await;
    let has_lz4: bool = c
        .query_one(
            "SELECT coalesce(bool_or('lz4' = ANY(enumvals)), false) FROM pg_settings
             WHERE name = 'default_toast_compression'",
            &[],
        )
        .await
        .expect("pg_settings")
        .get(0);
    if !has_lz4 {
        println!("skipped: this server cannot compress with lz4");
        return;
    }
    let server_default: String = c
        .query_one("SHOW default_toast_compression", &[])
        .await
        .expect("show")
        .get(0);
    let big = big_compressible_value();
    let sep = if url.contains('?') { '&' } else { '?' };
    let chose_pglz = format!("{url}{sep}options=-c%20default_toast_compression%3Dpglz");
    for (conn_url, expected) in [(url.as_str(), "lz4"), (chose_pglz.as_str(), "pglz")] {
        let s = PostgresSaver::builder_from_url(conn_url)
            .expect("valid url")
            .schema(fresh_schema("lz4"))
            .build()
            .expect("valid schema");
        s.setup().await.expect("setup");
        let schema = schema_of(&s);
        let stored = put_big(&s, &big).await.expect("put, put_writes");
        for table in ["checkpoint_blobs", "checkpoint_writes"] {
            let methods = compression_of(&c, &schema, table).await;
            assert_eq!(
                methods,
                [Some(expected.to_owned())],
                "{table} via {conn_url}"
            );
        }
        // The pooled connection is back at its own setting.
        let pooled = s.pool().get().await.expect("pool");
        let now: String = pooled
            .query_one("SHOW default_toast_compression", &[])
            .await
            .expect("show")
            .get(0);
        let own = if expected == "pglz" {
            "pglz"
        } else {
            &server_default
        };
        assert_eq!(now, own, "the setting outlived the statement");
        drop(pooled);
        let t = s.get_tuple(&stored).await.expect("get").expect("stored");
        assert_eq!(t.checkpoint.channel_values.get("big"), Some(&big));
        assert_eq!(t.pending_writes.len(), 1);
        assert_eq!(t.pending_writes[0].value, big);
    }
}

/// Where the saver cannot ask whether the server has lz4 (here its role may not read
/// `pg_settings`), its writes still work, with the server's default compression.
#[tokio::test]
async fn writes_work_where_the_lz4_question_cannot_be_asked() {
    let Some(url) = url() else { return };
    let c = psql(&url).await;
    let role = fresh_schema("role");
    let schema = fresh_schema("nolz4");
    c.batch_execute(&format!(
        "CREATE ROLE {role} LOGIN; CREATE SCHEMA {schema} AUTHORIZATION {role};
         DO $$ BEGIN EXECUTE format('GRANT CREATE ON DATABASE %I TO {role}', current_database()); END $$;
         REVOKE SELECT ON pg_catalog.pg_settings FROM PUBLIC"
    ))
    .await
    .expect("role");
    let mut config: tokio_postgres::Config = url.parse().expect("url");
    config.user(&role);
    let manager = deadpool_postgres::Manager::new(config, tokio_postgres::NoTls);
    let pool = langgraph_codec::saver::postgres::deadpool_postgres::Pool::builder(manager)
        .max_size(2)
        .build()
        .expect("pool");
    let s = PostgresSaver::builder(pool)
        .schema(&schema)
        .build()
        .expect("saver");
    let outcome = async {
        s.setup().await?;
        let big = big_compressible_value();
        let stored = put_big(&s, &big).await?;
        Ok::<_, Error>((s.get_tuple(&stored).await?, big))
    }
    .await;
    c.batch_execute("GRANT SELECT ON pg_catalog.pg_settings TO PUBLIC")
        .await
        .expect("grant back");
    let (read, big) = outcome.expect("writes without the lz4 answer");
    let read = read.expect("stored");
    assert_eq!(read.checkpoint.channel_values.get("big"), Some(&big));
    let server_default: String = c
        .query_one(
            "SELECT boot_val FROM pg_settings WHERE name = 'default_toast_compression'",
            &[],
        )
        .await
        .expect("boot_val")
        .get(0);
    let methods = compression_of(&c, &schema, "checkpoint_blobs").await;
    assert_eq!(methods, [Some(server_default)]);
}

/// Python's `v < 4` migration: a checkpoint older than format 4 gets its parent's
/// `__pregel_tasks` writes (in write order) as a `__pregel_tasks` channel value, at the
/// highest of its channel versions.
#[tokio::test]
async fn v_lt_4_checkpoints_get_their_parents_pending_sends() {
    let Some(url) = url() else { return };
    let s = saver(&url, "sends").await;
    let mut parent_cp = Checkpoint::now(0);
    parent_cp.v = 1;
    let parent = s
        .put(
            &CheckpointConfig::new("t"),
            &parent_cp,
            &CheckpointMetadata::new("input", -1),
            &Default::default(),
        )
        .await
        .expect("put");
    s.put_writes(
        &parent,
        &[("__pregel_tasks".into(), Value::from("send-b"))],
        "task-b",
        "",
    )
    .await
    .expect("w");
    s.put_writes(
        &parent,
        &[("__pregel_tasks".into(), Value::from("send-a"))],
        "task-a",
        "",
    )
    .await
    .expect("w");
    let mut child_cp = Checkpoint::now(1);
    child_cp.v = 1;
    let high = ChannelVersion::Str("00000000000000000000000000000002.5".into());
    child_cp.channel_versions.insert(
        "x".into(),
        ChannelVersion::Str("00000000000000000000000000000001.9".into()),
    );
    child_cp.channel_versions.insert("y".into(), high.clone());
    let child = s
        .put(
            &parent,
            &child_cp,
            &CheckpointMetadata::new("loop", 0),
            &Default::default(),
        )
        .await
        .expect("put");
    for t in [
        s.get_tuple(&child).await.expect("get").expect("stored"),
        s.list(Some(&child), &ListOptions::new())
            .await
            .expect("list")
            .remove(0),
    ] {
        assert_eq!(
            t.checkpoint.channel_values.get("__pregel_tasks"),
            Some(&Value::Array(vec![
                Value::from("send-a"),
                Value::from("send-b")
            ]))
        );
        assert_eq!(
            t.checkpoint.channel_versions.get("__pregel_tasks"),
            Some(&high)
        );
    }
    // A v4 checkpoint is left alone.
    let mut v4 = child_cp.clone();
    v4.v = 4;
    v4.id = langgraph_codec::saver::uuid6(2);
    let stored = s
        .put(
            &parent,
            &v4,
            &CheckpointMetadata::new("loop", 1),
            &Default::default(),
        )
        .await
        .expect("put");
    let t = s.get_tuple(&stored).await.expect("get").expect("stored");
    assert!(!t.checkpoint.channel_values.contains_key("__pregel_tasks"));
}

/// Hand-written rows in the layout LangGraphJS's Postgres saver uses (integer channel
/// versions, `json` blobs and writes), kept as a quick in-process check of integer
/// versions and of the next version after one. This is not the evidence that JS rows
/// read: `.ci/checks.d/postgres_js.sh` writes real rows with the pinned
/// `@langchain/langgraph-checkpoint-postgres` and compares every read with JS's own
/// (`examples/postgres_js_rows.rs`).
#[tokio::test]
async fn reads_hand_written_rows_in_the_js_layout() {
    let Some(url) = url() else { return };
    let s = saver(&url, "js").await;
    let schema = schema_of(&s);
    let c = psql(&url).await;
    c.batch_execute(&format!(
        r#"INSERT INTO {schema}.checkpoints (thread_id, checkpoint_ns, checkpoint_id, parent_checkpoint_id, checkpoint, metadata)
           VALUES ('js', '', '1ef0000a-0000-6000-8000-000000000001', NULL,
             '{{"v": 4, "id": "1ef0000a-0000-6000-8000-000000000001", "ts": "2024-07-01T00:00:00.000Z",
               "channel_values": {{}}, "channel_versions": {{"messages": 2, "__start__": 1}},
               "versions_seen": {{"agent": {{"__start__": 1}}}}}}',
             '{{"source": "loop", "step": 1, "parents": {{}}}}');
           INSERT INTO {schema}.checkpoint_blobs (thread_id, checkpoint_ns, channel, version, type, blob)
           VALUES ('js', '', 'messages', '2', 'json', convert_to('[{{"lc": 1, "type": "constructor", "id": ["langchain_core", "messages", "HumanMessage"], "kwargs": {{"content": "hi from js"}}}}]', 'UTF8')),
                  ('js', '', 'messages', '1', 'json', convert_to('[]', 'UTF8'));
           INSERT INTO {schema}.checkpoint_writes (thread_id, checkpoint_ns, checkpoint_id, task_id, idx, channel, type, blob)
           VALUES ('js', '', '1ef0000a-0000-6000-8000-000000000001', 'task-js', 0, 'messages', 'json', convert_to('"next"', 'UTF8'));"#
    ))
    .await
    .expect("JS rows");
    let t = s
        .get_tuple(&CheckpointConfig::new("js"))
        .await
        .expect("get")
        .expect("stored");
    assert_eq!(
        t.checkpoint.channel_versions.get("messages"),
        Some(&ChannelVersion::Int(2))
    );
    let messages = t
        .checkpoint
        .channel_values
        .get("messages")
        .expect("messages");
    // The lc:1 envelope is rebuilt into the same message object as a msgpack row.
    let messages: Vec<langgraph_codec::typed::pytypes::AnyMessage> =
        langgraph_codec::typed::from_value(messages).expect("typed messages");
    match &messages[..] {
        [langgraph_codec::typed::pytypes::AnyMessage::HumanMessage(m)] => {
            assert_eq!(m.content.as_text(), Some("hi from js"))
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(t.pending_writes.len(), 1);
    assert_eq!(t.pending_writes[0].value, Value::from("next"));
    assert_eq!(t.metadata.step(), Some(1));
    // The next version after a JS int version is Python's string form.
    let next = s
        .get_next_version(Some(&ChannelVersion::Int(2)))
        .expect("next");
    assert!(
        matches!(next, ChannelVersion::Str(v) if v.starts_with("00000000000000000000000000000003."))
    );
}

/// Every page shape carries the values kept in blobs and the writes: a small page reads
/// its blobs in the same statement, `list` without a limit (or a limit above 50) in a
/// second one. Each checkpoint's own blob is found by its version, never a neighbour's.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn list_pages_of_every_shape_carry_blob_values_and_writes() {
    let Some(url) = url() else { return };
    let s = saver(&url, "pages").await;
    let thread = CheckpointConfig::new("pages");
    let mut cfg = thread.clone();
    let mut expected: Vec<(String, Value, Value)> = Vec::new();
    for step in 0..3i64 {
        let mut cp = Checkpoint::now(step);
        // A list is no inline primitive: it goes to a blob at this step's version.
        let messages = Value::from(
            (0..=step)
                .map(|i| Value::from(format!("message {i} of step {step}")))
                .collect::<Vec<_>>(),
        );
        let version = ChannelVersion::from(step + 1);
        cp.channel_values
            .insert("messages".into(), messages.clone());
        cp.channel_values.insert("step".into(), Value::from(step));
        cp.channel_versions
            .insert("messages".into(), version.clone());
        cfg = s
            .put(
                &cfg,
                &cp,
                &CheckpointMetadata::new("loop", step),
                &versions(&[("messages", version)]),
            )
            .await
            .expect("put");
        let written = Value::from(format!("write of step {step}"));
        s.put_writes(&cfg, &[("notes".into(), written.clone())], "task", "")
            .await
            .expect("put_writes");
        expected.push((cp.id.clone(), messages, written));
    }
    expected.reverse(); // newest first, as `list` returns them
    for (limit, want) in [(None, 3), (Some(2), 2), (Some(60), 3)] {
        let mut options = ListOptions::new();
        if let Some(l) = limit {
            options = options.limit(l);
        }
        let page = s.list(Some(&thread), &options).await.expect("list");
        assert_eq!(page.len(), want, "limit {limit:?}");
        for (t, (id, messages, written)) in page.iter().zip(&expected) {
            assert_eq!(t.checkpoint.id, *id, "limit {limit:?}");
            assert_eq!(
                t.checkpoint.channel_values.get("messages"),
                Some(messages),
                "limit {limit:?}, checkpoint {id}"
            );
            let writes: Vec<(&str, &Value)> = t
                .pending_writes
                .iter()
                .map(|w| (w.channel.as_str(), &w.value))
                .collect();
            assert_eq!(
                writes,
                [("notes", written)],
                "limit {limit:?}, checkpoint {id}"
            );
        }
    }
}

/// The driver and pool are re-exported: a pool built from the re-exported crates has
/// the type the saver takes, whatever versions the application's `Cargo.toml` names.
#[test]
fn the_driver_and_pool_are_re_exported() {
    use langgraph_codec::saver::postgres::deadpool_postgres::Pool;
    use langgraph_codec::saver::postgres::{deadpool_postgres, tokio_postgres};
    let config: tokio_postgres::Config = "host=127.0.0.1 user=nobody dbname=none"
        .parse()
        .expect("config");
    let manager = deadpool_postgres::Manager::new(config, tokio_postgres::NoTls);
    let pool: Pool = deadpool_postgres::Pool::builder(manager)
        .max_size(1)
        .build()
        .expect("pool");
    let _builder = PostgresSaver::builder(pool);
}
mod edge_cases;
mod page_blobs;
