//! The Rust half of `vectors/sqlite/interop.py`: reads and continues a checkpoint file
//! that Python LangGraph's `SqliteSaver` wrote.
//!
//! ```text
//! cargo run --features sqlite --example sqlite_interop -- setup FILE
//! cargo run --features sqlite --example sqlite_interop -- dump FILE [--encrypted]
//! cargo run --features sqlite --example sqlite_interop -- ids FILE FILTER_JSON
//! cargo run --features sqlite --example sqlite_interop -- continue FILE THREAD [--encrypted]
//! ```
//!
//! `setup` creates the store (as Python's `setup()` does) and exits. `ids` prints the ids `list` returns
//! for a metadata filter. `dump` prints one JSON line per checkpoint (newest first, every thread and namespace):
//! its keys, parent, and every value it holds — the checkpoint, the metadata, each pending
//! write and the `log` delta-channel history — re-serialized with the plain
//! `JsonPlusSerializer` as `[tag, base64]`, for byte comparison with what Python reads.
//!
//! `continue` appends a `HumanMessage("edited from Rust")` to the thread's `messages` as
//! the next checkpoint (a human-in-the-loop edit: the pending task stays pending) and
//! prints the new checkpoint id. `--encrypted` keys both from `LANGGRAPH_AES_KEY`.

use std::error::Error;
use std::sync::Arc;

use base64::Engine as _;
use langgraph_codec::crypto::EncryptedSerializer;
use langgraph_codec::saver::sqlite::SqliteSaver;
use langgraph_codec::saver::{
    CheckpointConfig, CheckpointMetadata, CheckpointSaver, ListOptions, PendingWrite,
};
use langgraph_codec::typed::pytypes::HumanMessage;
use langgraph_codec::{typed, JsonPlusSerializer, Serializer, Value};
use serde_json::json;

/// Opens the store at `path`; `create` makes it (as Python's `setup()` does) if needed,
/// otherwise it must exist and nothing is written on opening.
fn open(path: &str, encrypted: bool, create: bool) -> Result<SqliteSaver, Box<dyn Error>> {
    let mut builder = SqliteSaver::builder(path).create(create);
    if encrypted {
        builder = builder.serializer(Arc::new(EncryptedSerializer::from_env()?));
    }
    Ok(builder.open()?)
}

fn plain(serde: &JsonPlusSerializer, value: &Value) -> Result<serde_json::Value, Box<dyn Error>> {
    let row = serde.dumps_typed(value)?;
    Ok(json!([
        row.type_tag,
        base64::engine::general_purpose::STANDARD.encode(&row.data)
    ]))
}

fn writes(
    serde: &JsonPlusSerializer,
    writes: &[PendingWrite],
) -> Result<serde_json::Value, Box<dyn Error>> {
    writes
        .iter()
        .map(|w| Ok(json!([w.task_id, w.channel, plain(serde, &w.value)?])))
        .collect::<Result<Vec<_>, Box<dyn Error>>>()
        .map(serde_json::Value::Array)
}

async fn dump(saver: &SqliteSaver) -> Result<(), Box<dyn Error>> {
    let serde = JsonPlusSerializer::new();
    for t in saver.list(None, &ListOptions::new()).await? {
        let history = saver
            .get_delta_channel_history(&t.config, &["log".to_owned()])
            .await?;
        let log = history.get("log").ok_or("no history entry for log")?;
        let line = json!({
            "thread_id": t.config.thread_id,
            "checkpoint_ns": t.config.ns(),
            "checkpoint_id": t.config.checkpoint_id,
            "parent_checkpoint_id": t.parent_config.as_ref().and_then(|p| p.checkpoint_id.clone()),
            "checkpoint": plain(&serde, &t.checkpoint.to_value())?,
            "metadata": plain(&serde, &t.metadata.to_value())?,
            "writes": writes(&serde, &t.pending_writes)?,
            "log_history": {
                "writes": writes(&serde, &log.writes)?,
                "seed": match &log.seed { Some(v) => plain(&serde, v)?, None => serde_json::Value::Null },
            },
        });
        println!("{line}");
    }
    Ok(())
}

/// The ids `list(None, filter=FILTER)` returns, one per line; FILTER is a JSON object.
async fn list_ids(saver: &SqliteSaver, filter: &str) -> Result<(), Box<dyn Error>> {
    let filter = langgraph_codec::json::parse(filter.as_bytes(), 64)?;
    let mut options = ListOptions::new();
    for (k, v) in filter.as_map().ok_or("the filter must be a JSON object")? {
        options = options.filter(k.as_str().ok_or("filter keys are strings")?, v.clone());
    }
    for t in saver.list(None, &options).await? {
        println!("{}", t.config.checkpoint_id.unwrap_or_default());
    }
    Ok(())
}

async fn continue_thread(saver: &SqliteSaver, thread: &str) -> Result<(), Box<dyn Error>> {
    let latest = saver
        .get_tuple(&CheckpointConfig::new(thread))
        .await?
        .ok_or("the thread has no checkpoint")?;
    let metadata = CheckpointMetadata::for_update(&latest.metadata);
    let step = metadata.step().unwrap_or_default();
    let mut next = latest.checkpoint.next_for_update(step);
    // The edit: one more message, through the typed layer. The pending task stays
    // pending (next_for_update keeps updated_channels), so the graph resumes it.
    let message = typed::to_value(&HumanMessage::new("edited from Rust").with_id("rust-1"))?;
    let mut messages = match next.channel_values.get("messages") {
        Some(Value::Array(items)) => items.clone(),
        _ => return Err("the thread has no messages list".into()),
    };
    messages.push(message);
    let version = saver.get_next_version(next.channel_versions.get("messages"))?;
    next.set_channel("messages", Value::Array(messages), version.clone());
    let new_versions = [("messages".to_owned(), version)].into_iter().collect();
    let stored = saver
        .put(&latest.config, &next, &metadata, &new_versions)
        .await?;
    println!("{}", stored.checkpoint_id.unwrap_or_default());
    Ok(())
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Box<dyn Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let encrypted = args.iter().any(|a| a == "--encrypted");
    let args: Vec<&str> = args
        .iter()
        .map(String::as_str)
        .filter(|a| *a != "--encrypted")
        .collect();
    match args.as_slice() {
        ["setup", path] => open(path, encrypted, true).map(drop),
        ["ids", path, filter] => list_ids(&open(path, encrypted, false)?, filter).await,
        ["dump", path] => dump(&open(path, encrypted, false)?).await,
        ["continue", path, thread] => {
            continue_thread(&open(path, encrypted, false)?, thread).await
        }
        _ => Err(
            "usage: sqlite_interop setup FILE | ids FILE FILTER | dump FILE | continue FILE THREAD  [--encrypted]"
                .into(),
        ),
    }
}
