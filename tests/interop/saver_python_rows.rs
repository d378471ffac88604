//! `InMemorySaver` against Python's `InMemorySaver`, with vectors from
//! `vectors/saver/generate_saver.py` (a real langgraph graph: messages, a datetime, a
//! DeltaChannel with snapshots, pending writes, an interrupt and resume, a fork).
//!
//! 1. Replaying every `put` / `put_writes` call the graph made gives byte-identical
//!    rows (checkpoint, metadata, blobs, writes with their task paths).
//! 2. Reading Python's rows gives what Python's `get_tuple`, `list` and
//!    `get_delta_channel_history` returned, byte for byte once re-encoded.

use base64::Engine;
use indexmap::IndexMap;
use langgraph_codec::msgpack;
use langgraph_codec::saver::{
    ChannelVersion, Checkpoint, CheckpointConfig, CheckpointMetadata, CheckpointSaver,
    CheckpointTuple, InMemorySaver, ListOptions, RawBlobRow, RawCheckpointRow, RawRows,
    RawWriteRow,
};
use langgraph_codec::{TypedBytes, Value};
use serde_json::Value as Json;

fn vectors() -> Json {
    let text = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/vectors/saver/python_inmemory.json"
    ))
    .expect("vector file");
    serde_json::from_str(&text).expect("valid json")
}

fn b64(j: &Json) -> Vec<u8> {
    base64::engine::general_purpose::STANDARD
        .decode(j.as_str().expect("base64 string"))
        .expect("valid base64")
}

fn packed(j: &Json) -> Value {
    msgpack::decode(&b64(j)).expect("python msgpack")
}

fn typed(j: &Json) -> TypedBytes {
    TypedBytes::new(j["type"].as_str().expect("type"), b64(&j["data"]))
}

fn s(j: &Json) -> String {
    j.as_str().expect("string").to_owned()
}

fn python_rows(v: &Json) -> RawRows {
    let rows = &v["rows"];
    RawRows {
        checkpoints: rows["checkpoints"]
            .as_array()
            .expect("checkpoints")
            .iter()
            .map(|r| RawCheckpointRow {
                thread_id: s(&r["thread_id"]),
                checkpoint_ns: s(&r["checkpoint_ns"]),
                checkpoint_id: s(&r["checkpoint_id"]),
                checkpoint: typed(&r["checkpoint"]),
                metadata: typed(&r["metadata"]),
                parent_checkpoint_id: r["parent_checkpoint_id"].as_str().map(str::to_owned),
            })
            .collect(),
        blobs: rows["blobs"]
            .as_array()
            .expect("blobs")
            .iter()
            .map(|r| RawBlobRow {
                thread_id: s(&r["thread_id"]),
                checkpoint_ns: s(&r["checkpoint_ns"]),
                channel: s(&r["channel"]),
                version: ChannelVersion::from_value(&packed(&r["version"])).expect("version"),
                value: typed(&r["value"]),
            })
            .collect(),
        writes: rows["writes"]
            .as_array()
            .expect("writes")
            .iter()
            .map(|r| RawWriteRow {
                thread_id: s(&r["thread_id"]),
                checkpoint_ns: s(&r["checkpoint_ns"]),
                checkpoint_id: s(&r["checkpoint_id"]),
                task_id: s(&r["task_id"]),
                idx: r["idx"].as_i64().expect("idx"),
                channel: s(&r["channel"]),
                value: typed(&r["value"]),
                task_path: s(&r["task_path"]),
            })
            .collect(),
    }
}

fn versions(v: &Value) -> IndexMap<String, ChannelVersion> {
    v.as_map()
        .expect("map")
        .iter()
        .map(|(k, x)| {
            (
                k.as_str().expect("str key").to_owned(),
                ChannelVersion::from_value(x).expect("version"),
            )
        })
        .collect()
}

#[tokio::test]
async fn replaying_python_calls_writes_python_rows() {
    let v = vectors();
    let saver = InMemorySaver::new();
    for op in v["ops"].as_array().expect("ops") {
        let config = CheckpointConfig::from_value(&packed(&op["config"])).expect("config");
        match op["op"].as_str() {
            Some("put") => {
                let cp = Checkpoint::from_value(&packed(&op["checkpoint"])).expect("checkpoint");
                let md =
                    CheckpointMetadata::from_value(&packed(&op["metadata"])).expect("metadata");
                let nv = versions(&packed(&op["new_versions"]));
                let out = saver.put(&config, &cp, &md, &nv).await.expect("put");
                assert_eq!(out.to_value(), packed(&op["returned"]), "returned config");
            }
            Some("put_writes") => {
                let writes: Vec<(String, Value)> = packed(&op["writes"])
                    .as_array()
                    .expect("writes")
                    .iter()
                    .map(|w| match w.as_array() {
                        Some([c, x]) => (c.as_str().expect("channel").to_owned(), x.clone()),
                        other => panic!("bad write {other:?}"),
                    })
                    .collect();
                saver
                    .put_writes(&config, &writes, &s(&op["task_id"]), &s(&op["task_path"]))
                    .await
                    .expect("put_writes");
            }
            other => panic!("unknown op {other:?}"),
        }
    }
    let ours = saver.export_rows();
    let theirs = python_rows(&v);
    // Checkpoint and metadata rows: byte-identical, same parents, same id order.
    assert_eq!(ours.checkpoints, theirs.checkpoints);
    // Blobs and writes: the same sets (Python's dict order is insertion order).
    let mut their_blobs = theirs.blobs.clone();
    their_blobs.sort_by(|a, b| {
        (&a.channel, a.version.to_string()).cmp(&(&b.channel, b.version.to_string()))
    });
    let mut our_blobs = ours.blobs.clone();
    our_blobs.sort_by(|a, b| {
        (&a.channel, a.version.to_string()).cmp(&(&b.channel, b.version.to_string()))
    });
    assert_eq!(our_blobs, their_blobs);
    assert_eq!(ours.blobs.len(), 18);
    let key = |w: &RawWriteRow| {
        (
            w.checkpoint_id.clone(),
            w.task_path.clone(),
            w.task_id.clone(),
            w.idx,
        )
    };
    let mut their_writes = theirs.writes.clone();
    their_writes.sort_by_key(key);
    assert_eq!(ours.writes, their_writes);
    assert_eq!(ours.writes.len(), 17);
}

fn conf_value(c: &CheckpointConfig) -> Value {
    c.to_value()
        .get("configurable")
        .cloned()
        .expect("configurable")
}

fn tuple_view(t: &CheckpointTuple) -> Value {
    Value::map([
        ("config", conf_value(&t.config)),
        ("checkpoint", t.checkpoint.to_value()),
        ("metadata", t.metadata.to_value()),
        (
            "parent_config",
            t.parent_config
                .as_ref()
                .map(conf_value)
                .unwrap_or(Value::Nil),
        ),
        (
            "pending_writes",
            Value::Array(t.pending_writes.iter().map(|w| w.to_value()).collect()),
        ),
    ])
}

fn ids(ts: &[CheckpointTuple]) -> Vec<String> {
    ts.iter().map(|t| t.checkpoint.id.clone()).collect()
}

fn json_ids(j: &Json) -> Vec<String> {
    j.as_array().expect("ids").iter().map(s).collect()
}

#[tokio::test]
async fn reading_python_rows_gives_what_python_read() {
    let v = vectors();
    let saver = InMemorySaver::new();
    saver.import_rows(python_rows(&v));
    let reads = v["reads"].as_array().expect("reads");
    assert_eq!(reads.len(), 6);
    let mut seeded = 0;
    for r in reads {
        let config =
            CheckpointConfig::from_value(&Value::map([("configurable", packed(&r["config"]))]))
                .expect("config");
        let tup = saver
            .get_tuple(&config)
            .await
            .expect("get_tuple")
            .expect("stored");
        assert_eq!(
            msgpack::encode(&tuple_view(&tup)).expect("encode"),
            b64(&r["tuple"]),
            "tuple of {:?}",
            config.checkpoint_id
        );
        let channels = [
            "log".to_owned(),
            "messages".to_owned(),
            "missing".to_owned(),
        ];
        let hist = saver
            .get_delta_channel_history(&config, &channels)
            .await
            .expect("history");
        let hist_value = Value::map(hist.iter().map(|(k, h)| (k.as_str(), h.to_value())));
        assert_eq!(
            msgpack::encode(&hist_value).expect("encode"),
            b64(&r["history"]),
            "history of {:?}",
            config.checkpoint_id
        );
        // The default walk over get_tuple agrees with the override.
        let default =
            langgraph_codec::saver::default_delta_channel_history(&saver, &config, &channels)
                .await
                .expect("default history");
        assert_eq!(default, hist);
        if hist
            .get("log")
            .is_some_and(|h| matches!(h.seed, Some(Value::DeltaSnapshot(_))))
        {
            seeded += 1;
        }
    }
    assert!(seeded >= 2, "the vectors should exercise snapshot seeds");

    let listing = &v["listing"];
    let all = saver.list(None, &ListOptions::new()).await.expect("list");
    assert_eq!(ids(&all), json_ids(&listing["all_ids"]));
    let loops = saver
        .list(None, &ListOptions::new().filter("source", "loop"))
        .await
        .expect("list");
    assert_eq!(ids(&loops), json_ids(&listing["filter_source_loop"]));
    let user = saver
        .list(
            None,
            &ListOptions::new()
                .filter("user", "ada")
                .filter("step", 1i64),
        )
        .await
        .expect("list");
    assert_eq!(ids(&user), json_ids(&listing["filter_user"]));
    let third = all.get(2).expect("six checkpoints").config.clone();
    let page = saver
        .list(
            Some(&CheckpointConfig {
                checkpoint_ns: None,
                ..CheckpointConfig::new("thread-1")
            }),
            &ListOptions::new().before(third).limit(2),
        )
        .await
        .expect("list");
    assert_eq!(ids(&page), json_ids(&listing["before_third_limit_2"]));
    let latest = saver
        .get_tuple(&CheckpointConfig::new("thread-1"))
        .await
        .expect("get")
        .expect("latest");
    assert_eq!(latest.checkpoint.id, s(&v["latest_id"]));
}
