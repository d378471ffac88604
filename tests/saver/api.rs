//! The saver data types as a user meets them: Python's shapes through serde and
//! `Value`, and a checkpoint that comes back from every saver equal to what was put.

use langgraph_codec::saver::{
    ChannelVersion, Checkpoint, CheckpointConfig, CheckpointMetadata, CheckpointSaver,
    CheckpointTuple, InMemorySaver, PendingWrite,
};
use langgraph_codec::{msgpack, Value};

/// `JsonPlusSerializer().dumps_typed(CheckpointTuple(...))[1].hex()` printed by Python
/// (langgraph-checkpoint 4.3.2) for the tuple `python_tuple()` describes.
const PYTHON_TUPLE_HEX: &str = "c801cd0293b96c616e6767726170682e636865636b706f696e742e62617365af436865636b706f696e745475706c6585a6636f6e66696781ac636f6e666967757261626c6583a97468726561645f6964a174ad636865636b706f696e745f6e73a0ad636865636b706f696e745f6964a53165662d31aa636865636b706f696e7487a17604a27473b9323032342d30312d30315430303a30303a30302b30303a3030a26964a53165662d31ae6368616e6e656c5f76616c75657381a16101b06368616e6e656c5f76657273696f6e7381a161d92430303030303030303030303030303030303030303030303030303030303030312e302e35ad76657273696f6e735f7365656e81a16e81a161d92430303030303030303030303030303030303030303030303030303030303030312e302e35b0757064617465645f6368616e6e656c7391a161a86d6574616461746183a6736f75726365a5696e707574a473746570ffa7706172656e747380ad706172656e745f636f6e66696781ac636f6e666967757261626c6583a97468726561645f6964a174ad636865636b706f696e745f6e73a0ad636865636b706f696e745f6964a53165662d30ae70656e64696e675f7772697465739193a47461736ba2636801";

fn hex(s: &str) -> Vec<u8> {
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&s[i..i + 2], 16).expect("hex"))
        .collect()
}

#[test]
fn checkpoint_tuple_reads_and_writes_pythons_namedtuple_bytes() {
    let bytes = hex(PYTHON_TUPLE_HEX);
    let value = msgpack::decode(&bytes).expect("Python's bytes decode");
    let tuple = CheckpointTuple::from_value(&value).expect("a CheckpointTuple");
    assert_eq!(tuple.config.thread_id.as_deref(), Some("t"));
    assert_eq!(tuple.checkpoint.id, "1ef-1");
    assert_eq!(
        tuple.checkpoint.channel_values.get("a"),
        Some(&Value::from(1i64))
    );
    assert_eq!(tuple.metadata.step(), Some(-1));
    assert_eq!(
        tuple
            .parent_config
            .as_ref()
            .and_then(|p| p.checkpoint_id.as_deref()),
        Some("1ef-0")
    );
    assert_eq!(
        tuple.pending_writes,
        vec![PendingWrite::new("task", "ch", 1i64)]
    );
    // And back to exactly Python's bytes.
    assert_eq!(msgpack::encode(&tuple.to_value()).expect("encodes"), bytes);
}

#[test]
fn config_serializes_to_pythons_json_shape() {
    let cfg = CheckpointConfig::for_checkpoint("t", "", "1");
    let json = serde_json::to_string(&cfg).expect("serializes");
    assert_eq!(
        json,
        r#"{"configurable":{"thread_id":"t","checkpoint_ns":"","checkpoint_id":"1"}}"#
    );
    let back: CheckpointConfig = serde_json::from_str(&json).expect("deserializes");
    assert_eq!(back, cfg);
    let md: CheckpointMetadata =
        serde_json::from_str(r#"{"source": "loop", "step": 3, "parents": {}}"#).expect("md");
    assert_eq!(md.step(), Some(3));
    assert_eq!(
        serde_json::to_string(&md).expect("md"),
        r#"{"source":"loop","step":3,"parents":{}}"#
    );
    let bad = serde_json::from_str::<CheckpointConfig>(r#"{"configurable": {"thread_id": []}}"#);
    assert!(bad.is_err());
}

fn sample_checkpoint() -> Checkpoint {
    let mut cp = Checkpoint::now(1);
    let v = ChannelVersion::Str(format!("{:032}.{:016}", 1, 0.25));
    cp.channel_values
        .insert("messages".into(), Value::Array(vec![Value::from("hi")]));
    cp.channel_values.insert("n".into(), Value::F64(1.5));
    cp.channel_versions.insert("messages".into(), v.clone());
    cp.channel_versions.insert("n".into(), v.clone());
    cp.versions_seen.insert(
        "node".into(),
        [("messages".to_owned(), v)].into_iter().collect(),
    );
    cp.updated_channels = Some(vec!["messages".into(), "n".into()]);
    cp
}

async fn round_trip(saver: &dyn CheckpointSaver) {
    let cp = sample_checkpoint();
    let new_versions = cp.channel_versions.clone();
    let stored = saver
        .put(
            &CheckpointConfig::new("eq"),
            &cp,
            &CheckpointMetadata::new("loop", 1),
            &new_versions,
        )
        .await
        .expect("put");
    let back = saver
        .get_tuple(&stored)
        .await
        .expect("get")
        .expect("stored");
    assert_eq!(back.checkpoint, cp, "what comes back equals what was put");
}

#[tokio::test]
async fn a_checkpoint_comes_back_equal_from_every_saver() {
    round_trip(&InMemorySaver::new()).await;
    #[cfg(feature = "sqlite")]
    round_trip(&langgraph_codec::saver::sqlite::SqliteSaver::open_in_memory().expect("open")).await;
}

async fn pages_equal_one_list(saver: &dyn CheckpointSaver) {
    use langgraph_codec::saver::{ListOptions, ListPages};
    let mut config = CheckpointConfig::new("paged");
    for step in 0..25i64 {
        let md = CheckpointMetadata::new(if step % 3 == 0 { "input" } else { "loop" }, step);
        config = saver
            .put(&config, &Checkpoint::now(step), &md, &Default::default())
            .await
            .expect("put");
    }
    // Another namespace and thread that must not leak into the pages.
    saver
        .put(
            &CheckpointConfig::new("paged").with_ns("sub"),
            &Checkpoint::now(0),
            &CheckpointMetadata::new("loop", 0),
            &Default::default(),
        )
        .await
        .expect("put");
    let root = CheckpointConfig::new("paged");
    let before = saver
        .list(Some(&root), &ListOptions::new())
        .await
        .expect("list")[3]
        .config
        .clone();
    for (options, want_sizes) in [
        (ListOptions::new(), vec![10, 10, 5]),
        (ListOptions::new().limit(22), vec![10, 10, 2]),
        (ListOptions::new().limit(20), vec![10, 10]),
        (ListOptions::new().filter("source", "loop"), vec![10, 6]),
        (ListOptions::new().before(before), vec![10, 10, 1]),
    ] {
        let whole = saver.list(Some(&root), &options).await.expect("list");
        let mut pages = ListPages::new(saver, root.clone(), options.clone(), 10).expect("pages");
        let mut sizes = Vec::new();
        let mut joined = Vec::new();
        while let Some(page) = pages.next_page().await.expect("page") {
            sizes.push(page.len());
            joined.extend(page);
        }
        assert_eq!(sizes, want_sizes, "{options:?}");
        assert_eq!(joined, whole, "{options:?}");
        assert!(pages.next_page().await.expect("done").is_none());
    }
    let every = CheckpointConfig::every_namespace("paged");
    assert!(ListPages::new(saver, every, ListOptions::new(), 10).is_err());
    assert!(ListPages::new(saver, root, ListOptions::new(), 0).is_err());
}

#[tokio::test]
async fn list_pages_give_what_one_list_gives() {
    pages_equal_one_list(&InMemorySaver::new()).await;
    #[cfg(feature = "sqlite")]
    pages_equal_one_list(
        &langgraph_codec::saver::sqlite::SqliteSaver::open_in_memory().expect("open"),
    )
    .await;
}

/// A checkpoint serialized straight from its fields (what SqliteSaver::put writes) gives
/// exactly the bytes of encoding its `to_value()` dict, for every field kind.
#[test]
fn checkpoint_serializes_straight_to_the_bytes_of_its_dict() {
    use langgraph_codec::{typed, JsonPlusSerializer, Serializer};
    let bytes = hex(PYTHON_TUPLE_HEX);
    let tuple =
        CheckpointTuple::from_value(&msgpack::decode(&bytes).expect("decodes")).expect("tuple");
    let mut checkpoints = vec![tuple.checkpoint, sample_checkpoint()];
    let mut odd = sample_checkpoint();
    odd.channel_versions
        .insert("i".into(), ChannelVersion::Int(7));
    odd.channel_versions
        .insert("f".into(), ChannelVersion::Float(2.5));
    odd.extra
        .insert("pending_sends".into(), Value::Array(vec![]));
    odd.updated_channels = None;
    checkpoints.push(odd);
    let serde = JsonPlusSerializer::new();
    for cp in &checkpoints {
        let direct = typed::to_vec(cp).expect("typed");
        let via_value = serde.dumps_typed(&cp.to_value()).expect("value");
        assert_eq!(direct, &via_value.data[..], "{cp:?}");
        let back: Checkpoint = typed::from_slice(&direct).expect("reads back");
        assert_eq!(&back, cp);
    }
}

/// `{"thread_id": …}` without `configurable`: read as LangGraph's `ensure_config` reads a
/// config given to a graph (langgraph 1.2.22, `_internal/_config.py`): every top-level
/// key that is not a `RunnableConfig` key (`tags`, `metadata`, `callbacks`, `run_name`,
/// `max_concurrency`, `recursion_limit`, `configurable`, `run_id`) and is not empty
/// (`None`, `[]`, `{}`) goes into `configurable`, after (so over) its own entries.
#[test]
fn a_config_without_configurable_reads_as_langgraph_reads_it() {
    let cfg: CheckpointConfig =
        serde_json::from_str(r#"{"thread_id": "t1"}"#).expect("deserializes");
    assert_eq!(cfg.thread_id.as_deref(), Some("t1"));
    assert_eq!((cfg.checkpoint_ns, cfg.checkpoint_id), (None, None));
    assert!(cfg.configurable.is_empty());
    let cfg: CheckpointConfig = serde_json::from_str(
        r#"{"thread_id": "t", "checkpoint_ns": "", "checkpoint_id": null, "user": 1,
            "empty": [], "tags": ["x"], "recursion_limit": 5,
            "configurable": {"thread_id": "inner", "model": "m"}}"#,
    )
    .expect("deserializes");
    // What Python's ensure_config gives for the same dict:
    // {'thread_id': 't', 'model': 'm', 'checkpoint_ns': '', 'user': 1}
    assert_eq!(cfg.thread_id.as_deref(), Some("t"));
    assert_eq!(cfg.checkpoint_ns.as_deref(), Some(""));
    assert_eq!(cfg.checkpoint_id, None);
    let extra: Vec<(&str, &Value)> = cfg
        .configurable
        .iter()
        .map(|(k, v)| (k.as_str(), v))
        .collect();
    assert_eq!(
        extra,
        [("model", &Value::from("m")), ("user", &Value::from(1i64))]
    );
    // From a Value too, and a bad value is still named.
    let cfg = CheckpointConfig::from_value(&Value::map([("thread_id", Value::from(7i64))]))
        .expect("reads");
    assert_eq!(cfg.thread_id.as_deref(), Some("7"));
    let err = CheckpointConfig::from_value(&Value::map([("checkpoint_id", Value::from(1.5))]))
        .expect_err("float id");
    assert!(
        err.to_string().contains("checkpoint_id must be a str"),
        "{err}"
    );
}

/// A config with no thread id says where one goes.
#[tokio::test]
async fn a_missing_thread_id_says_where_it_goes() {
    let saver = langgraph_codec::saver::InMemorySaver::new();
    let cfg: CheckpointConfig = serde_json::from_str(r#"{"configurable": {}}"#).expect("config");
    let err = saver.get_tuple(&cfg).await.expect_err("no thread");
    let text = err.to_string();
    assert!(text.contains("configurable"), "{text}");
    assert!(text.contains("thread_id"), "{text}");
}
