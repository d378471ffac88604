//! Quickstart: a small agent-like thread on `InMemorySaver`.
//!
//! `cargo run --example quickstart` — no setup. It stores an input checkpoint, two
//! supersteps with pending writes, an interrupt and a resume, and a fork from an older
//! checkpoint; rebuilds a delta channel from its history; and prints the history
//! newest first and what the rows at rest look like. The state holds LangChain
//! messages and a datetime, as Python LangGraph writes them.

use std::error::Error;
use std::sync::Arc;

use langgraph_codec::crypto::{AesMode, EncryptedSerializer, ENV_KEY};
use langgraph_codec::saver::{
    ChannelVersions, Checkpoint, CheckpointConfig, CheckpointMetadata, CheckpointSaver,
    InMemorySaver, ListOptions, INTERRUPT, RESUME,
};
use langgraph_codec::{view, ObjectKind, PyObject, Serializer, Value};
use zeroize::Zeroizing;

/// The serializer rows are written with: `EncryptedSerializer` (AES-EAX, Python's
/// `from_pycryptodome_aes`), keyed from `LANGGRAPH_AES_KEY`, or an ephemeral random key
/// when that is unset.
fn make_serializer() -> Result<(Arc<dyn Serializer>, String), Box<dyn Error>> {
    if std::env::var_os(ENV_KEY).is_some() {
        let serde = EncryptedSerializer::from_env()?;
        return Ok((
            Arc::new(serde),
            format!("serializer: EncryptedSerializer, key from {ENV_KEY}"),
        ));
    }
    let mut key = Zeroizing::new([0u8; 32]);
    getrandom::fill(key.as_mut_slice()).map_err(|e| format!("no OS randomness: {e}"))?;
    let serde = EncryptedSerializer::from_aes_key(key.as_slice(), AesMode::Eax)?;
    Ok((
        Arc::new(serde),
        format!("{ENV_KEY} is not set: using an ephemeral random AES-256 key for this run"),
    ))
}

/// A LangChain message as `model_dump()` writes it (langchain-core 1.x field order).
fn message(kind: &str, content: &str, id: &str) -> Value {
    let (module, name) = match kind {
        "human" => ("langchain_core.messages.human", "HumanMessage"),
        _ => ("langchain_core.messages.ai", "AIMessage"),
    };
    let mut fields = vec![
        ("content", Value::from(content)),
        ("additional_kwargs", Value::Map(vec![])),
        ("response_metadata", Value::Map(vec![])),
        ("type", Value::from(kind)),
        ("name", Value::Nil),
        ("id", Value::from(id)),
    ];
    if kind == "ai" {
        fields.push(("tool_calls", Value::Array(vec![])));
        fields.push(("invalid_tool_calls", Value::Array(vec![])));
        fields.push(("usage_metadata", Value::Nil));
    }
    Value::object(
        PyObject::new(ObjectKind::PydanticV2, module, name, Value::map(fields))
            .with_method("model_validate_json"),
    )
}

/// A `datetime` as Python writes it: `datetime.fromisoformat(isoformat())`.
fn datetime(iso: &str) -> Value {
    Value::object(
        PyObject::new(
            ObjectKind::MethodSingleArg,
            "datetime",
            "datetime",
            Value::from(iso),
        )
        .with_method("fromisoformat"),
    )
}

/// `_DeltaSnapshot(list)`.
fn snapshot(items: &[&str]) -> Value {
    Value::DeltaSnapshot(Box::new(Value::Array(
        items.iter().map(|s| Value::from(*s)).collect(),
    )))
}

fn short(id: &Option<String>) -> String {
    let id = id.as_deref().unwrap_or("-");
    id.get(id.len().saturating_sub(8)..)
        .unwrap_or(id)
        .to_owned()
}

/// One superstep's checkpoint: the previous state, the channels that changed, the
/// metadata. Returns the config `put` returned.
struct Thread<'a> {
    saver: &'a InMemorySaver,
    state: Checkpoint,
}

impl Thread<'_> {
    async fn step(
        &mut self,
        parent: Option<&CheckpointConfig>,
        base: CheckpointConfig,
        metadata: CheckpointMetadata,
        changes: Vec<(&str, Option<Value>)>,
    ) -> Result<CheckpointConfig, Box<dyn Error>> {
        let mut cp = Checkpoint::now(metadata.step().unwrap_or(0));
        cp.channel_values = self.state.channel_values.clone();
        cp.channel_versions = self.state.channel_versions.clone();
        let mut new_versions = ChannelVersions::new();
        for (channel, value) in changes {
            let next = self
                .saver
                .get_next_version(cp.channel_versions.get(channel))?;
            cp.channel_versions.insert(channel.to_owned(), next.clone());
            new_versions.insert(channel.to_owned(), next);
            match value {
                Some(v) => cp.channel_values.insert(channel.to_owned(), v),
                // A delta channel between snapshots stores nothing.
                None => cp.channel_values.shift_remove(channel),
            };
        }
        let mut config = base;
        config.checkpoint_id = parent.and_then(|p| p.checkpoint_id.clone());
        let stored = self
            .saver
            .put(&config, &cp, &metadata, &new_versions)
            .await?;
        self.state = cp;
        Ok(stored)
    }
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Box<dyn Error>> {
    let (serde, described) = make_serializer()?;
    println!("{described}");
    let saver = InMemorySaver::with_serializer(serde);
    let thread = CheckpointConfig::new("quickstart").with_metadata("user", "ada");
    let mut t = Thread {
        saver: &saver,
        state: Checkpoint::new("", ""),
    };
    let delta = |n: i64| Value::map([("log", Value::Array(vec![Value::from(n), Value::from(n)]))]);

    // Input checkpoint (step -1): the input sits in __start__; its task writes the state.
    let hello = message("human", "What is the capital of France?", "msg-1");
    let input = t
        .step(
            None,
            thread.clone(),
            CheckpointMetadata::new("input", -1),
            vec![(
                "__start__",
                Some(Value::map([(
                    "messages",
                    Value::Array(vec![hello.clone()]),
                )])),
            )],
        )
        .await?;
    saver
        .put_writes(
            &input,
            &[
                ("messages".into(), Value::Array(vec![hello.clone()])),
                ("log".into(), Value::from("input received")),
            ],
            "task-start",
            "~__pregel_pull, __start__",
        )
        .await?;

    // Superstep 0: state applied; the log is a delta channel, snapshotted here.
    let step0 = t
        .step(
            Some(&input),
            thread.clone(),
            CheckpointMetadata::new("loop", 0),
            vec![
                ("__start__", None),
                ("messages", Some(Value::Array(vec![hello.clone()]))),
                ("log", Some(snapshot(&["input received"]))),
            ],
        )
        .await?;
    let answer = message("ai", "Paris. Shall I book a trip?", "msg-2");
    saver
        .put_writes(
            &step0,
            &[
                ("messages".into(), Value::Array(vec![answer.clone()])),
                ("log".into(), Value::from("agent answered")),
                ("when".into(), datetime("2024-05-01T12:00:01+00:00")),
            ],
            "task-agent",
            "~__pregel_pull, agent",
        )
        .await?;

    // Superstep 1: the review node interrupts, asking for approval.
    let step1 = t
        .step(
            Some(&step0),
            thread.clone(),
            CheckpointMetadata::new("loop", 1).with("counters_since_delta_snapshot", delta(1)),
            vec![
                (
                    "messages",
                    Some(Value::Array(vec![hello.clone(), answer.clone()])),
                ),
                ("log", None),
                ("when", Some(datetime("2024-05-01T12:00:01+00:00"))),
            ],
        )
        .await?;
    let question = Value::map([("question", "Book the trip?")]);
    saver
        .put_writes(
            &step1,
            &[(INTERRUPT.into(), question)],
            "task-review",
            "~__pregel_pull, review",
        )
        .await?;
    println!("interrupted at step 1: the review task asks \"Book the trip?\"");

    // Resume: the answer is a __resume__ write; the review task then finishes.
    saver
        .put_writes(
            &step1,
            &[(RESUME.into(), Value::from("yes"))],
            "00000000-0000-0000-0000-000000000000",
            "",
        )
        .await?;
    let approval = message("human", "review: yes", "msg-3");
    saver
        .put_writes(
            &step1,
            &[
                ("messages".into(), Value::Array(vec![approval.clone()])),
                ("log".into(), Value::from("review approved")),
            ],
            "task-review",
            "~__pregel_pull, review",
        )
        .await?;
    let step2 = t
        .step(
            Some(&step1),
            thread.clone(),
            CheckpointMetadata::new("loop", 2).with("counters_since_delta_snapshot", delta(2)),
            vec![
                (
                    "messages",
                    Some(Value::Array(vec![hello.clone(), answer.clone(), approval])),
                ),
                ("log", None),
            ],
        )
        .await?;
    println!("resumed with \"yes\": step 2 stored");

    // Fork: go back to step 0 and take another path.
    t.state = saver
        .get_tuple(&step0)
        .await?
        .ok_or("step 0 is stored")?
        .checkpoint;
    let fork = t
        .step(
            Some(&step0),
            thread.clone(),
            CheckpointMetadata::new("update", 1).with("counters_since_delta_snapshot", delta(1)),
            vec![("log", None)],
        )
        .await?;
    saver
        .put_writes(
            &fork,
            &[("log".into(), Value::from("forked: no trip"))],
            "task-update",
            "",
        )
        .await?;
    let fork_head = t
        .step(
            Some(&fork),
            thread.clone(),
            CheckpointMetadata::new("loop", 2).with("counters_since_delta_snapshot", delta(2)),
            vec![("log", None)],
        )
        .await?;
    println!(
        "forked from step 0 ({}): a second branch",
        short(&step0.checkpoint_id)
    );

    // Rebuild the delta channel: seed (the snapshot) + writes along each branch.
    for (label, at) in [("main branch", &step2), ("fork", &fork_head)] {
        let history = saver
            .get_delta_channel_history(at, &["log".to_owned()])
            .await?;
        let h = history.get("log").ok_or("log history")?;
        let mut log: Vec<Value> = match &h.seed {
            Some(Value::DeltaSnapshot(inner)) => {
                inner.as_array().map(<[Value]>::to_vec).unwrap_or_default()
            }
            _ => Vec::new(),
        };
        log.extend(h.writes.iter().map(|w| w.value.clone()));
        println!(
            "delta channel `log` on the {label}, from a snapshot + {} writes: {}",
            h.writes.len(),
            view::to_string(&Value::Array(log))
        );
    }

    // The history, newest first.
    println!("history of thread \"quickstart\" (newest first):");
    for tup in saver.list(Some(&thread), &ListOptions::new()).await? {
        let channels: Vec<&str> = tup
            .checkpoint
            .channel_values
            .keys()
            .map(String::as_str)
            .collect();
        println!(
            "  {}  {:<6} step {:>2}  parent {}  {} pending write(s)  values: {}",
            short(&tup.config.checkpoint_id),
            tup.metadata.source().unwrap_or("?"),
            tup.metadata.step().unwrap_or(0),
            short(
                &tup.parent_config
                    .as_ref()
                    .and_then(|p| p.checkpoint_id.clone())
            ),
            tup.pending_writes.len(),
            channels.join(", ")
        );
    }
    let latest = saver.get_tuple(&thread).await?.ok_or("latest")?;
    if let Some(Value::Array(msgs)) = latest.checkpoint.channel_values.get("messages") {
        if let Some(last) = msgs.last() {
            println!(
                "latest checkpoint's last message: {}",
                view::to_string(last)
            );
        }
    }
    if let Some(when) = step1_when(&saver, &step1).await? {
        println!("the datetime at step 1: {}", view::to_string(&when));
    }

    // What is at rest.
    let rows = saver.export_rows();
    let mut tags: Vec<&str> = rows.typed_bytes().map(|t| t.type_tag.as_str()).collect();
    tags.sort_unstable();
    tags.dedup();
    println!(
        "at rest: {} checkpoint rows, {} blobs, {} writes; type tags: {}",
        rows.checkpoints.len(),
        rows.blobs.len(),
        rows.writes.len(),
        tags.join(", ")
    );
    let encrypted = rows
        .typed_bytes()
        .filter(|t| t.type_tag.ends_with("+aes"))
        .count();
    println!(
        "  {encrypted} of {} rows are `<type>+aes` ciphertext (nonce | tag | ciphertext); \
         the rest are the saver's `empty` markers, which carry no data",
        rows.typed_bytes().count()
    );
    if let Some(first) = rows.checkpoints.first() {
        let head: Vec<String> = first
            .checkpoint
            .data
            .iter()
            .take(24)
            .map(|b| format!("{b:02x}"))
            .collect();
        println!(
            "  first checkpoint row: ({:?}, {} bytes: {} …)",
            first.checkpoint.type_tag,
            first.checkpoint.data.len(),
            head.join(" ")
        );
    }
    Ok(())
}

async fn step1_when(
    saver: &InMemorySaver,
    at: &CheckpointConfig,
) -> Result<Option<Value>, Box<dyn Error>> {
    Ok(saver
        .get_tuple(at)
        .await?
        .and_then(|t| t.checkpoint.channel_values.get("when").cloned()))
}
