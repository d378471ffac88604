//! Quickstart: open a checkpoint store that Python LangGraph wrote, read its thread,
//! continue it from Rust, and look at the rows at rest.
//!
//! `cargo run --example quickstart` — no flags, no environment. The store is
//! `vectors/sqlite/python_store.sqlite`, written by a real Python LangGraph 1.2.22 graph
//! on `langgraph-checkpoint-sqlite`'s `SqliteSaver` with `EncryptedSerializer` (AES-EAX;
//! `vectors/sqlite/make_quickstart_store.py` remakes it). The graph planned, fanned out
//! to three workers with `Send`, ran a subgraph, was interrupted, resumed with
//! `Command(resume="yes")`, and now waits at a second interrupt. The example works on a
//! copy of that file in a temporary directory.
//!
//! Python resuming from the checkpoint this example writes is checked in CI by
//! `vectors/sqlite/interop.py`, with the same graph.

use std::error::Error;
use std::sync::Arc;

use langgraph_codec::crypto::{AesMode, EncryptedSerializer};
use langgraph_codec::saver::sqlite::SqliteSaver;
use langgraph_codec::saver::{
    CheckpointConfig, CheckpointMetadata, CheckpointSaver, ListOptions, INTERRUPT,
};
use langgraph_codec::typed::{
    self,
    pytypes::{AnyMessage, HumanMessage, Interrupt},
};
use langgraph_codec::{view, Value};

/// The file Python wrote, built into the example so it runs from anywhere.
const PYTHON_STORE: &[u8] = include_bytes!("../vectors/sqlite/python_store.sqlite");
/// The published demo key that store is encrypted with (`LANGGRAPH_AES_KEY` when Python
/// wrote it). Never use it for real data.
const DEMO_KEY: &[u8; 32] = b"quickstart-demo-key-0123456789ab";
const THREAD: &str = "interop-thread";

fn describe(message: &AnyMessage) -> String {
    let (who, content) = match message {
        AnyMessage::HumanMessage(m) => ("human", &m.content),
        AnyMessage::AiMessage(m) => ("ai", &m.content),
        AnyMessage::SystemMessage(m) => ("system", &m.content),
        AnyMessage::ToolMessage(m) => ("tool", &m.content),
        other => return format!("{:>6}: {other:?}", "other"),
    };
    format!(
        "{who:>6}: {}",
        content.as_text().unwrap_or("[content blocks]")
    )
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Box<dyn Error>> {
    let dir = std::env::temp_dir().join(format!("lgcodec-quickstart-{}", std::process::id()));
    std::fs::create_dir_all(&dir)?;
    let path = dir.join("checkpoints.sqlite");
    std::fs::write(&path, PYTHON_STORE)?;

    let serde = Arc::new(EncryptedSerializer::from_aes_key(DEMO_KEY, AesMode::Eax)?);
    let saver = SqliteSaver::builder(&path).serializer(serde).open()?;
    println!("opened a SQLite checkpoint store written by Python LangGraph (AES-EAX at rest)");

    // The thread as Python left it: its messages, read into typed LangChain messages.
    let thread = CheckpointConfig::new(THREAD);
    let latest = saver
        .get_tuple(&thread)
        .await?
        .ok_or("the store has no thread")?;
    let messages: Vec<AnyMessage> = typed::from_value(
        latest
            .checkpoint
            .channel_values
            .get("messages")
            .ok_or("no messages channel")?,
    )?;
    println!(
        "\nthread {THREAD:?}, step {}:",
        latest.metadata.step().unwrap_or_default()
    );
    for m in &messages {
        println!("  {}", describe(m));
    }
    for write in latest
        .pending_writes
        .iter()
        .filter(|w| w.channel == INTERRUPT)
    {
        // Python writes the interrupts of a task as a tuple.
        let interrupts: Vec<Interrupt> = typed::from_value(&write.value)?;
        for interrupt in interrupts {
            println!(
                "  waiting: a task asks {} (interrupt {})",
                view::to_string(&interrupt.value)?,
                interrupt.id
            );
        }
    }

    // Its history, newest first, subgraph checkpoints (their own namespace) included.
    println!("\nhistory (newest first):");
    let every_ns = CheckpointConfig::every_namespace(THREAD);
    for t in saver.list(Some(&every_ns), &ListOptions::new()).await? {
        let line = format!(
            "  step {:>2} {:<6} {} writes={:<2} {}",
            t.metadata.step().unwrap_or_default(),
            t.metadata.source().unwrap_or("?"),
            t.config.checkpoint_id.as_deref().unwrap_or(""),
            t.pending_writes.len(),
            match t.config.ns() {
                "" => String::new(),
                ns => format!("(subgraph {ns})"),
            }
        );
        println!("{}", line.trim_end());
    }

    // The `log` channel is a DeltaChannel: most checkpoints store nothing for it, and its
    // value is rebuilt from a snapshot plus the writes along the parent chain.
    let history = saver
        .get_delta_channel_history(&latest.config, &["log".to_owned()])
        .await?;
    if let Some(log) = history.get("log") {
        let mut value: Vec<Value> = match &log.seed {
            Some(Value::DeltaSnapshot(inner)) => inner.as_array().map(<[Value]>::to_vec),
            Some(other) => other.as_array().map(<[Value]>::to_vec),
            None => None,
        }
        .unwrap_or_default();
        for w in &log.writes {
            value.extend(w.value.as_array().unwrap_or_default().iter().cloned());
        }
        println!(
            "\nthe delta channel `log`, rebuilt from {} write(s): {}",
            log.writes.len(),
            view::to_string(&Value::Array(value))?
        );
    }

    // Continue the thread from Rust: a human edit as the next checkpoint. The task that
    // was waiting stays pending, so Python resumes it with Command(resume=...).
    let metadata = CheckpointMetadata::for_update(&latest.metadata);
    let mut next = latest
        .checkpoint
        .next_for_update(metadata.step().unwrap_or_default());
    let mut updated: Vec<Value> = latest
        .checkpoint
        .channel_values
        .get("messages")
        .and_then(Value::as_array)
        .map(<[Value]>::to_vec)
        .unwrap_or_default();
    updated.push(typed::to_value(
        &HumanMessage::new("Only trains, please").with_id("rust-edit-1"),
    )?);
    let version = saver.get_next_version(next.channel_versions.get("messages"))?;
    next.set_channel("messages", Value::Array(updated), version.clone());
    let stored = saver
        .put(
            &latest.config,
            &next,
            &metadata,
            &[("messages".to_owned(), version)].into_iter().collect(),
        )
        .await?;
    let reread = saver.get_tuple(&stored).await?.ok_or("just stored")?;
    let last: Vec<AnyMessage> = typed::from_value(
        reread
            .checkpoint
            .channel_values
            .get("messages")
            .ok_or("no messages")?,
    )?;
    println!(
        "\nRust stored checkpoint {} (step {}, source {:?}); its last message:\n  {}",
        stored.checkpoint_id.as_deref().unwrap_or(""),
        reread.metadata.step().unwrap_or_default(),
        reread.metadata.source().unwrap_or(""),
        last.last().map(describe).unwrap_or_default()
    );
    println!("  Python resumes from it: graph.invoke(Command(resume=...), config)");

    // What is at rest: every value is ciphertext; metadata and keys are in clear, as in
    // Python's saver (it filters on metadata in SQL).
    let rows = saver.export_rows().await?;
    let leaked = rows
        .typed_bytes()
        .filter(|r| r.type_tag != "json")
        .any(|r| r.data.windows(6).any(|w| w == b"Lisbon" || w == b"trains"));
    println!("\nat rest ({}):", path.display());
    for row in rows
        .checkpoints
        .iter()
        .rev()
        .filter(|r| r.checkpoint_ns.is_empty())
        .take(2)
    {
        println!(
            "  checkpoint {} type={} {} bytes; metadata in clear: {}",
            row.checkpoint_id,
            row.checkpoint.type_tag,
            row.checkpoint.data.len(),
            String::from_utf8_lossy(&row.metadata.data)
        );
    }
    println!(
        "  {} checkpoint rows, {} write rows, tags {:?}; plaintext found in values: {leaked}",
        rows.checkpoints.len(),
        rows.writes.len(),
        rows.typed_bytes()
            .filter(|r| r.type_tag != "json")
            .map(|r| r.type_tag.as_str())
            .collect::<std::collections::BTreeSet<_>>()
    );
    if leaked {
        return Err("a value is stored in clear".into());
    }
    drop(saver);
    std::fs::remove_dir_all(&dir)?;
    Ok(())
}
