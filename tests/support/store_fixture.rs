//! Stores shaped like a real graph's, written with this crate's savers (rows
//! byte-compatible with Python's): per step a checkpoint whose `messages` channel holds
//! a growing list of message dicts (a blob), small `step`/`notes` values (inline on
//! Postgres), and two pending writes; channel versions as Python's savers make them
//! (`"000…0003.0.4201…"`); every fourth thread runs a subgraph (the middle third of its
//! checkpoints in the namespace `inner:<task id>`), and every fifth stops at an
//! interrupt (its last step's writes hold `__interrupt__`). Shared by the store tests
//! (`support::store_fixture`), the store bench and examples/store_fixture.rs (`#[path]`).

#![allow(dead_code)]

use std::sync::Arc;

use langgraph_codec::compression::CompressedSerializer;
use langgraph_codec::crypto::{AesKey, AesMode, EncryptedSerializer, KeyRing};
use langgraph_codec::saver::{
    isoformat_at, uuid6_at, ChannelVersion, ChannelVersions, Checkpoint, CheckpointConfig,
    CheckpointMetadata, CheckpointSaver,
};
use langgraph_codec::typed::pytypes::Interrupt;
use langgraph_codec::typed::to_value;
use langgraph_codec::{JsonPlusSerializer, Serializer, Value};

/// How the rows are serialized.
#[derive(Clone, Debug)]
pub struct Shape {
    pub threads: usize,
    pub steps: usize,
    /// Characters per message.
    pub message_len: usize,
    /// At most this many messages in the list.
    pub max_messages: usize,
    /// Encrypt under this key (EAX), else in clear.
    pub key: Option<String>,
    /// Wrap in upstream's `+zlib` serializer.
    pub zlib: bool,
    /// Date the threads in the past instead of now ([`thread_times`]), over this many
    /// days: for retention rules that read a checkpoint's time from its id.
    pub age_days: Option<u32>,
}

impl Default for Shape {
    fn default() -> Self {
        Shape {
            threads: 4,
            steps: 5,
            message_len: 200,
            max_messages: 10,
            key: None,
            zlib: false,
            age_days: None,
        }
    }
}

pub fn serializer(shape: &Shape) -> Arc<dyn Serializer> {
    let inner: Arc<dyn Serializer> = match (&shape.key, shape.zlib) {
        (None, false) => Arc::new(JsonPlusSerializer::new()),
        (None, true) => Arc::new(CompressedSerializer::new(JsonPlusSerializer::new())),
        (Some(k), false) => {
            Arc::new(EncryptedSerializer::from_aes_key(k.as_bytes(), AesMode::Eax).expect("key"))
        }
        (Some(k), true) => Arc::new(EncryptedSerializer::new(
            KeyRing::new(AesKey::new(k.as_bytes()).expect("key")),
            CompressedSerializer::new(JsonPlusSerializer::new()),
        )),
    };
    inner
}

fn message(thread: usize, step: usize, i: usize, len: usize) -> Value {
    let body: String = format!("t{thread} s{step} m{i} ")
        .chars()
        .cycle()
        .take(len)
        .collect();
    Value::map([
        ("type", Value::from(if i % 2 == 0 { "human" } else { "ai" })),
        ("content", Value::from(body)),
        ("id", Value::from(format!("msg-{thread}-{step}-{i}"))),
    ])
}

/// Channel version `v` as Python's savers make it (`get_next_version`:
/// `f"{v:032}.{random.random():016}"`), the random fraction drawn from `seed`.
fn python_version(v: usize, seed: usize) -> ChannelVersion {
    let fraction = (seed.wrapping_mul(2_654_435_761) % 999_983) as f64 / 999_983.0;
    ChannelVersion::from(format!("{v:032}.{:0>16}", fraction.to_string()))
}

/// Whether thread `t` runs a subgraph: the middle third of its steps
/// ([`subgraph_steps`]) are checkpoints in the namespace [`subgraph_ns`].
fn runs_subgraph(t: usize) -> bool {
    t % 4 == 1
}

fn subgraph_steps(steps: usize) -> std::ops::Range<usize> {
    steps / 3..2 * steps / 3
}

/// The namespace of thread `t`'s subgraph: the node's name and its task's id, as
/// LangGraph names a subgraph's checkpoints.
fn subgraph_ns(t: usize) -> String {
    format!(
        "inner:{:08x}-0000-4000-8000-{t:012x}",
        t.wrapping_mul(2_654_435_761) as u32
    )
}

/// Whether thread `t` stops at an interrupt: its last step's writes hold one.
fn interrupted(t: usize) -> bool {
    t % 5 == 2
}

const MINUTE_NS: u128 = 60_000_000_000;
const HOUR_NS: u128 = 60 * MINUTE_NS;

/// When thread `t`'s checkpoints were made, nanoseconds before `now`, oldest first,
/// with `age_days = Some(span)`: its latest checkpoint a spread-out number of whole hours
/// plus 30 minutes back within `span` days, its first one as recent (a thread of a few
/// minutes, one a minute), or `span / 3` or `2 * span / 3` days earlier (`t % 3`), the
/// rest evenly between. Every time stays at least 30 minutes less one a step from a
/// whole hour, so a rule of whole hours or days decides every thread the same whether
/// it is applied now or a few minutes later.
pub fn thread_times(span_days: u32, t: usize, steps: usize) -> Vec<u128> {
    let span_hours = u128::from(span_days.max(1)) * 24;
    let latest = (t as u128 * 7_919) % span_hours * HOUR_NS + 30 * MINUTE_NS;
    let last_step = steps.saturating_sub(1) as u128;
    let window = (t as u128 % 3) * (span_hours / 3) * HOUR_NS + last_step * MINUTE_NS;
    (0..steps as u128)
        .map(|s| latest + window - window * s / last_step.max(1))
        .collect()
}

/// Writes `shape` into `saver` (set up already). Returns the number of serialized rows
/// the SQLite layout holds (checkpoints + writes).
pub async fn fill(saver: &dyn CheckpointSaver, shape: &Shape, thread_prefix: &str) -> usize {
    let mut rows = 0;
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or(0);
    for t in 0..shape.threads {
        let thread = format!("{thread_prefix}{t}");
        let mut config = CheckpointConfig::new(thread.clone());
        let mut inner = CheckpointConfig::new(thread).with_ns(subgraph_ns(t));
        let mut messages = Vec::new();
        let times = shape
            .age_days
            .map(|span| thread_times(span, t, shape.steps));
        for step in 0..shape.steps {
            messages.push(message(t, step, messages.len(), shape.message_len));
            if messages.len() > shape.max_messages {
                messages.remove(0);
            }
            let mut cp = match &times {
                Some(ago) => {
                    let at = now.saturating_sub(ago[step]);
                    Checkpoint::new(uuid6_at(at, step as i64), isoformat_at(at))
                }
                None => Checkpoint::now(step as i64),
            };
            cp.channel_values
                .insert("messages".into(), Value::Array(messages.clone()));
            cp.channel_values
                .insert("step".into(), Value::from(step as i64));
            cp.channel_values
                .insert("notes".into(), Value::from(format!("note {t}/{step}")));
            let mut versions = ChannelVersions::new();
            for (i, ch) in ["messages", "step", "notes"].into_iter().enumerate() {
                versions.insert(ch.into(), python_version(step + 1, t * 31 + step * 7 + i));
            }
            cp.channel_versions = versions.clone();
            let at = if runs_subgraph(t) && subgraph_steps(shape.steps).contains(&step) {
                &mut inner
            } else {
                &mut config
            };
            *at = saver
                .put(
                    at,
                    &cp,
                    &CheckpointMetadata::new("loop", step as i64),
                    &versions,
                )
                .await
                .expect("put");
            let last = if interrupted(t) && step + 1 == shape.steps {
                let question =
                    Interrupt::new(Value::from(format!("approve t{t}?")), format!("{t:032x}"));
                (
                    "__interrupt__".to_owned(),
                    Value::Array(vec![to_value(&question).expect("an interrupt")]),
                )
            } else {
                ("step".to_owned(), Value::from((step + 1) as i64))
            };
            let writes = vec![
                (
                    "messages".to_owned(),
                    Value::Array(vec![message(t, step, 99, shape.message_len)]),
                ),
                last,
            ];
            saver
                .put_writes(at, &writes, &format!("task-{step}"), "")
                .await
                .expect("put_writes");
            rows += 3;
        }
    }
    rows
}

/// A SQLite store at `path` holding `shape`'s threads (named `prefix` + number), written
/// by this crate's saver on a runtime of its own (for tests that are not async).
#[cfg(feature = "sqlite")]
pub fn sqlite_store(path: &std::path::Path, shape: &Shape, prefix: &str) {
    use langgraph_codec::saver::sqlite::SqliteSaver;
    tokio::runtime::Builder::new_current_thread()
        .build()
        .expect("runtime")
        .block_on(async {
            let saver = SqliteSaver::builder(path)
                .serializer(serializer(shape))
                .create(true)
                .open()
                .expect("saver");
            fill(&saver, shape, prefix).await;
        });
}
