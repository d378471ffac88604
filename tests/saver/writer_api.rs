//! The writer API: what a Rust continuation of a Python
//! thread needs from `saver::types`. Expected values come from Python (quoted where
//! they do) or from the rule the docs state.

use std::sync::Arc;

use langgraph_codec::indexmap::IndexMap;
use langgraph_codec::saver::{
    ChannelVersion, Checkpoint, CheckpointConfig, CheckpointMetadata, CheckpointSaver,
    InMemorySaver,
};
use langgraph_codec::typed::pytypes::DeltaSnapshot;
use langgraph_codec::Value;

fn updated(cp: &Checkpoint) -> Vec<&str> {
    cp.updated_channels
        .iter()
        .flatten()
        .map(String::as_str)
        .collect()
}

/// An edit keeps the parent's `updated_channels` (the interrupted tasks stay
/// pending); a continuation lists only what its step changed.
#[test]
fn next_for_update_keeps_updated_channels_next_for_step_starts_empty() {
    let mut parent = Checkpoint::now(3);
    parent.set_channel("messages", Value::from("m"), ChannelVersion::Int(1));
    parent.updated_channels = Some(vec!["branch:to:review".into(), "messages".into()]);

    let mut edit = parent.next_for_update(4);
    edit.set_channel("notes", Value::from("n"), ChannelVersion::Int(2));
    assert_eq!(updated(&edit), ["branch:to:review", "messages", "notes"]);

    let mut step = parent.next_for_step(4);
    step.set_channel("notes", Value::from("n"), ChannelVersion::Int(2));
    assert_eq!(updated(&step), ["notes"]);
    assert_ne!(step.id, parent.id);
    assert!(step.id > parent.id, "ids stay time-ordered");
    // Values, versions and versions_seen carry over.
    assert_eq!(step.channel_values.get("messages"), Some(&Value::from("m")));
    assert_eq!(
        step.channel_versions.get("messages"),
        Some(&ChannelVersion::Int(1))
    );
}

/// A delta channel's superstep: a new version, no value at this checkpoint (a value
/// carried from the parent is dropped, in order), listed in `updated_channels`; the
/// delta walk then rebuilds it from the parent's stored value and the writes since.
#[tokio::test]
async fn bump_channel_gives_a_version_without_a_value() {
    let saver = InMemorySaver::new();
    let mut parent = Checkpoint::now(0);
    parent.set_channel("a", Value::from(1i64), ChannelVersion::Int(1));
    parent.set_channel(
        "log",
        Value::DeltaSnapshot(Box::new(Value::Array(vec![Value::from("x")]))),
        ChannelVersion::Int(1),
    );
    parent.set_channel("z", Value::from(2i64), ChannelVersion::Int(1));
    let versions = parent.channel_versions.clone();
    let stored = saver
        .put(
            &CheckpointConfig::new("t-bump"),
            &parent,
            &CheckpointMetadata::new("loop", 0),
            &versions,
        )
        .await
        .expect("put parent");
    saver
        .put_writes(&stored, &[("log".into(), Value::from("y"))], "task-1", "")
        .await
        .expect("put_writes");

    let mut child = parent.next_for_step(1);
    let old = child.bump_channel("log", ChannelVersion::Int(2));
    assert!(matches!(old, Some(Value::DeltaSnapshot(_))));
    let keys: Vec<&str> = child.channel_values.keys().map(String::as_str).collect();
    assert_eq!(keys, ["a", "z"], "the others keep their order");
    assert_eq!(
        child.channel_versions.get("log"),
        Some(&ChannelVersion::Int(2))
    );
    assert_eq!(updated(&child), ["log"]);

    let new_versions = [("log".to_owned(), ChannelVersion::Int(2))]
        .into_iter()
        .collect();
    let child_cfg = saver
        .put(
            &stored,
            &child,
            &CheckpointMetadata::new("loop", 1),
            &new_versions,
        )
        .await
        .expect("put child");
    let history = saver
        .get_delta_channel_history(&child_cfg, &["log".to_owned()])
        .await
        .expect("history");
    let log = history.get("log").expect("log history");
    assert_eq!(
        log.seed,
        Some(Value::DeltaSnapshot(Box::new(Value::Array(vec![
            Value::from("x")
        ]))))
    );
    let writes: Vec<&Value> = log.writes.iter().map(|w| &w.value).collect();
    assert_eq!(writes, [&Value::from("y")]);
}

/// `remove_channel` keeps the order of the rest (`swap_remove` would move the last
/// channel into the first's place: `{b, c}` would become `{c, b}`).
#[test]
fn remove_channel_keeps_pythons_order() {
    let mut cp = Checkpoint::now(0);
    for (name, i) in [("a", 1i64), ("b", 2), ("c", 3)] {
        cp.set_channel(name, Value::from(i), ChannelVersion::Int(i));
    }
    assert_eq!(cp.remove_channel("a"), Some(Value::from(1i64)));
    let keys: Vec<&str> = cp.channel_values.keys().map(String::as_str).collect();
    assert_eq!(keys, ["b", "c"]);
    let vkeys: Vec<&str> = cp.channel_versions.keys().map(String::as_str).collect();
    assert_eq!(vkeys, ["b", "c"]);
    assert_eq!(updated(&cp), ["b", "c"]);
    assert_eq!(cp.remove_channel("missing"), None);
    // Python's dict after `del d["a"]` writes {"b": 2, "c": 3}: the same order.
    let v = cp.to_value();
    let values = v.get("channel_values").expect("channel_values");
    assert_eq!(
        *values,
        Value::map([("b", Value::from(2i64)), ("c", Value::from(3i64))])
    );
}

/// `counters_since_delta_snapshot` can be set and advanced as Python's `update_state`
/// advances it. Expected, from langgraph 1.2.22:
///   create_checkpoint_plan_for_update_state_api(
///     {"a": Delta(freq 100), "b": Delta(freq 100), "c": Delta(freq 3), "d": LastValue},
///     {"a", "c", "d"}, source="update", step=6, parents={},
///     saved_metadata={"source": "loop", "step": 5,
///                     "counters_since_delta_snapshot": {"a": (2, 5), "c": (2, 4)}},
///     is_fresh_thread=False, fork_channels=set(), channel_versions={a, b, c, d: 1})
///   == (["c"], {"source": "update", "step": 6, "parents": {},
///               "counters_since_delta_snapshot": {"a": (3, 6), "b": (0, 1)}})
#[test]
fn delta_counters_can_be_set_and_advanced_as_python_does() {
    let mut previous = CheckpointMetadata::new("loop", 5);
    let mut counters = IndexMap::new();
    counters.insert("a".to_owned(), (2i64, 5i64));
    counters.insert("c".to_owned(), (2, 4));
    counters.insert("gone".to_owned(), (0, 0));
    previous.set_counters_since_delta_snapshot(&counters);
    // (0, 0) entries are not written, as Python's loop drops them.
    assert_eq!(
        previous.get("counters_since_delta_snapshot"),
        Some(&Value::map([
            ("a", Value::Array(vec![2i64.into(), 5i64.into()])),
            ("c", Value::Array(vec![2i64.into(), 4i64.into()])),
        ]))
    );

    let mut md = CheckpointMetadata::for_update(&previous);
    assert_eq!(md.step(), Some(6));
    assert_eq!(md.source(), Some("update"));
    md.advance_delta_counters(&["a", "b", "c"], &["a", "c", "d"], &["c"]);
    let got = md.counters_since_delta_snapshot();
    let want: IndexMap<String, (i64, i64)> = [("a".to_owned(), (3, 6)), ("b".to_owned(), (0, 1))]
        .into_iter()
        .collect();
    assert_eq!(got, want);

    // Everything back to zero: the key goes, as in Python's loop.
    md.set_counters_since_delta_snapshot(&IndexMap::new());
    assert!(md.get("counters_since_delta_snapshot").is_none());
}

/// JSON in, Python's `json.loads` shape out, in the object's order.
#[test]
fn a_serde_json_value_converts_to_value() {
    let json: serde_json::Value = serde_json::from_str(
        r#"{"b": 1, "a": [null, true, -2, 1.5, "s", 18446744073709551615], "c": {}}"#,
    )
    .expect("json");
    let v = Value::from(json);
    assert_eq!(
        v,
        Value::map([
            ("b", Value::from(1i64)),
            (
                "a",
                Value::Array(vec![
                    Value::Nil,
                    Value::from(true),
                    Value::from(-2i64),
                    Value::from(1.5f64),
                    Value::from("s"),
                    Value::from(u64::MAX),
                ])
            ),
            ("c", Value::Map(Vec::new())),
        ])
    );
}

/// The ids of a tuple without reaching into its configs.
#[tokio::test]
async fn checkpoint_tuple_id_accessors() {
    let saver = InMemorySaver::new();
    let first = Checkpoint::now(0);
    let cfg = CheckpointConfig::new("t-ids").with_ns("child:1");
    let stored = saver
        .put(
            &cfg,
            &first,
            &CheckpointMetadata::new("loop", 0),
            &Default::default(),
        )
        .await
        .expect("put");
    let second = first.next_for_step(1);
    let stored2 = saver
        .put(
            &stored,
            &second,
            &CheckpointMetadata::new("loop", 1),
            &Default::default(),
        )
        .await
        .expect("put");
    let t = saver
        .get_tuple(&stored2)
        .await
        .expect("get")
        .expect("stored");
    assert_eq!(t.thread_id(), "t-ids");
    assert_eq!(t.checkpoint_ns(), "child:1");
    assert_eq!(t.checkpoint_id(), second.id);
    assert_eq!(t.parent_checkpoint_id(), Some(first.id.as_str()));
    let root = saver
        .get_tuple(&stored)
        .await
        .expect("get")
        .expect("stored");
    assert_eq!(root.parent_checkpoint_id(), None);
}

/// The typed `DeltaSnapshot<T>` and `Value::DeltaSnapshot` convert both ways.
#[test]
fn delta_snapshot_forms_bridge() {
    let untyped = Value::DeltaSnapshot(Box::new(Value::Array(vec![Value::from("x")])));
    assert_eq!(
        Value::from(DeltaSnapshot(Value::Array(vec![Value::from("x")]))),
        untyped
    );
    let back = DeltaSnapshot::<Value>::try_from(untyped.clone()).expect("a snapshot");
    assert_eq!(back.0, Value::Array(vec![Value::from("x")]));
    assert_eq!(
        DeltaSnapshot::<Value>::try_from(Value::from(1i64)).unwrap_err(),
        Value::from(1i64)
    );
    let typed = DeltaSnapshot::<Vec<String>>::from_value(&untyped).expect("typed");
    assert_eq!(typed.0, ["x"]);
    assert_eq!(typed.to_value().expect("to_value"), untyped);
    assert!(DeltaSnapshot::<Vec<String>>::from_value(&Value::from(1i64)).is_err());
}

/// `verify` is reachable through the trait: `Ok` for a saver without a schema.
#[tokio::test]
async fn verify_is_reachable_through_the_trait() {
    let saver: Arc<dyn CheckpointSaver> = Arc::new(InMemorySaver::new());
    saver
        .verify()
        .await
        .expect("in-memory has nothing to verify");
}

#[cfg(feature = "sqlite")]
#[tokio::test]
async fn verify_through_the_trait_checks_sqlite_tables() {
    use langgraph_codec::saver::sqlite::SqliteSaver;
    let dir = tempfile::Builder::new()
        .prefix("lgcodec-writer-api-")
        .tempdir()
        .expect("temp dir");
    let path = dir.path().join("v.sqlite");
    let saver: Arc<dyn CheckpointSaver> = Arc::new(SqliteSaver::create(&path).expect("create"));
    saver.verify().await.expect("fresh tables verify");
    rusqlite::Connection::open(&path)
        .expect("open")
        .execute_batch("DROP TABLE writes")
        .expect("drop");
    let err = saver.verify().await.expect_err("a missing table");
    assert!(err.to_string().contains("writes"), "{err}");
    drop(saver);
}

/// `ListOptions::filter` documents each backend's semantics, not only the in-memory
/// one: SQLite's `json_extract` equality and Postgres's `@>` containment.
#[test]
fn list_filter_docs_describe_every_backend() {
    let src = include_str!("../../src/saver/traits.rs");
    let at = src
        .find("pub filter: IndexMap<String, Value>,")
        .expect("filter");
    let docs: String = src[..at]
        .lines()
        .rev()
        .skip(1)
        .take_while(|l| l.trim_start().starts_with("///"))
        .collect::<Vec<_>>()
        .join("\n");
    for words in [
        "InMemorySaver",
        "json_extract",
        "IS NULL",
        "@>",
        "containment",
        "not a missing",
    ] {
        assert!(docs.contains(words), "filter docs lack {words:?}:\n{docs}");
    }
}

/// Messages made in Rust can get the id Python's `add_messages` reducer gives a message
/// without one: `str(uuid.uuid4())` (langgraph/graph/message.py: `if m.id is None:
/// m.id = str(uuid.uuid4())`), 36 characters, version 4, RFC 4122 variant.
#[test]
fn messages_made_in_rust_get_a_uuid4_id_as_add_messages_gives() {
    use langgraph_codec::typed::pytypes::{AiMessage, HumanMessage, Uuid};
    let m = HumanMessage::new("hi").with_new_id();
    let id = m.id.clone().expect("an id");
    let u: Uuid = id.parse().expect("a UUID");
    assert_eq!(u.to_string(), id, "lowercase hyphenated, as str(uuid4())");
    assert_eq!(id.len(), 36);
    assert_eq!(u.as_bytes()[6] >> 4, 4, "version 4");
    assert_eq!(u.as_bytes()[8] >> 6, 0b10, "RFC 4122 variant");
    assert_ne!(HumanMessage::new("hi").with_new_id().id, m.id);

    // ensure_id: only a message without an id gets one, as add_messages does.
    let mut kept = AiMessage::new("a").with_id("a1");
    assert_eq!(kept.ensure_id(), "a1");
    let mut fresh = AiMessage::new("b");
    let given = fresh.ensure_id().to_owned();
    assert_eq!(given.len(), 36);
    assert_eq!(fresh.ensure_id(), given, "stable once given");
}
