//! Quickstart: open a checkpoint store that Python LangGraph wrote, read its thread,
//! continue it from Rust, and look at the rows at rest.
//!
//! `cargo run --example quickstart` — no flags, no environment. The store is
//! `vectors/sqlite/python_store.sqlite`, written by a real Python LangGraph 1.2.22 graph
//! on `langgraph-checkpoint-sqlite`'s `SqliteSaver` with `EncryptedSerializer` (AES-EAX;
//! `vectors/sqlite/make_quickstart_store.py` remakes it). The graph planned, fanned out
//! to three workers with `Send`, ran a subgraph, was interrupted, resumed with
//! `Command(resume="yes")`, and now waits at a second interrupt. The example works on a
//! fresh copy of that file in your temporary directory, and leaves the copy there (its
//! path is printed) so you can look at it afterwards.
//!
//! Python resuming from the checkpoint this example writes is checked in CI by
//! `vectors/sqlite/interop.py`, with the same graph.

use std::error::Error;
use std::fmt::Write as _;
use std::path::Path;
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

/// Prints as it goes (the lines are collected in `out`, for the test that runs this
/// example: `tests/interop/quickstart_example.rs`).
macro_rules! say {
    ($out:expr) => { writeln!($out)? };
    ($out:expr, $($arg:tt)*) => { writeln!($out, $($arg)*)? };
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Box<dyn Error>> {
    let dir = std::env::temp_dir().join("lgcodec-quickstart");
    let mut out = String::new();
    let result = run(&dir, &mut out).await;
    print!("{out}");
    result
}

/// The quickstart, on a fresh copy of the Python store in `dir`.
///
/// # Errors
///
/// Any error of the steps (the file, the key, the store).
pub async fn run(dir: &Path, out: &mut String) -> Result<(), Box<dyn Error>> {
    std::fs::create_dir_all(dir)?;
    let path = dir.join("checkpoints.sqlite");
    // A fresh copy each run (and no WAL files left from an earlier one).
    for stale in ["checkpoints.sqlite-wal", "checkpoints.sqlite-shm"] {
        let _ = std::fs::remove_file(dir.join(stale));
    }
    std::fs::write(&path, PYTHON_STORE)?;

    let serde = Arc::new(EncryptedSerializer::from_aes_key(DEMO_KEY, AesMode::Eax)?);
    let saver = SqliteSaver::builder(&path).serializer(serde).open()?;
    say!(
        out,
        "opened a SQLite checkpoint store written by Python LangGraph (AES-EAX at rest)"
    );

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
    say!(
        out,
        "\nthread {THREAD:?}, step {}:",
        latest.metadata.step().unwrap_or_default()
    );
    for m in &messages {
        say!(out, "  {}", describe(m));
    }
    for write in latest
        .pending_writes
        .iter()
        .filter(|w| w.channel == INTERRUPT)
    {
        // Python writes the interrupts of a task as a tuple.
        let interrupts: Vec<Interrupt> = typed::from_value(&write.value)?;
        for interrupt in interrupts {
            say!(
                out,
                "  waiting: a task asks {} (interrupt {})",
                view::to_string(&interrupt.value)?,
                interrupt.id
            );
        }
    }

    // Its history, newest first, subgraph checkpoints (their own namespace) included.
    say!(out, "\nhistory (newest first):");
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
        say!(out, "{}", line.trim_end());
    }

    // The `log` channel only ever grows, so LangGraph stores it the cheap way (a
    // "DeltaChannel"): most checkpoints keep no copy of it, only what each step added.
    // Its value is the last full copy plus the additions made since, which the saver
    // collects by walking back through the parent checkpoints.
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
        let copied = value.len();
        for w in &log.writes {
            value.extend(w.value.as_array().unwrap_or_default().iter().cloned());
        }
        say!(
            out,
            "\nthe `log` channel (stored as additions, not full copies): {} item(s) from the \
             last full copy + {} added by later steps = {}",
            copied,
            value.len() - copied,
            view::to_string(&Value::Array(value))?
        );
    }

    // Continue the thread from Rust: a human edit as the next checkpoint. The task that
    // was waiting stays pending, so Python resumes it with Command(resume=...).
    let mut metadata = CheckpointMetadata::for_update(&latest.metadata);
    // Count this step for `log`'s "full copy every N steps" rule, as Python's
    // update_state does (this edit adds nothing to `log` and stores no copy of it).
    metadata.advance_delta_counters(&["log"], &["messages"], &[]);
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
    // A fresh id, as Python's add_messages gives every message (str(uuid4())).
    updated.push(typed::to_value(
        &HumanMessage::new("Only trains, please").with_new_id(),
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
    say!(
        out,
        "\nRust stored checkpoint {} (step {}, source {:?}); its last message:\n  {}",
        stored.checkpoint_id.as_deref().unwrap_or(""),
        reread.metadata.step().unwrap_or_default(),
        reread.metadata.source().unwrap_or(""),
        last.last().map(describe).unwrap_or_default()
    );
    say!(
        out,
        "  Python resumes from it: graph.invoke(Command(resume=...), config)"
    );

    // What is at rest: every value is ciphertext; metadata and keys are in clear, as in
    // Python's saver (it filters on metadata in SQL).
    let rows = saver.export_rows().await?;
    let leaked = rows
        .typed_bytes()
        .filter(|r| r.type_tag != "json")
        .any(|r| r.data.windows(6).any(|w| w == b"Lisbon" || w == b"trains"));
    say!(out, "\nat rest ({}):", path.display());
    for row in rows
        .checkpoints
        .iter()
        .rev()
        .filter(|r| r.checkpoint_ns.is_empty())
        .take(2)
    {
        say!(
            out,
            "  checkpoint {} type={} {} bytes; metadata in clear: {}",
            row.checkpoint_id,
            row.checkpoint.type_tag,
            row.checkpoint.data.len(),
            String::from_utf8_lossy(&row.metadata.data)
        );
    }
    say!(
        out,
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
    say!(
        out,
        "\nthe store stays at {} (each run starts from a fresh copy).",
        path.display()
    );
    say!(out, "next steps:");
    say!(
        out,
        "  - look at it: sqlite3 {} 'select checkpoint_id, metadata from checkpoints'",
        path.display()
    );
    say!(
        out,
        "  - decode one of its rows: cargo run --features cli --bin lgcodec -- decode --help"
    );
    say!(
        out,
        "  - your own store: SqliteSaver::create(\"my.sqlite\") makes one, \
         SqliteSaver::open(...) opens one Python made (or PostgresSaver, \
         `cargo run --features postgres --example postgres_quickstart`): docs/savers.md"
    );
    Ok(())
}
