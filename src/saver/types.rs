//! The saver's data types, shaped and ordered exactly like Python's dicts.
//!
//! Every type converts to and from [`Value`] the way Python LangGraph writes it, so a
//! checkpoint row (`dumps_typed` of the checkpoint dict without `channel_values`) and a
//! metadata row written here are byte-identical to the rows Python's `InMemorySaver`
//! writes for the same input, and the other way round.

use std::collections::hash_map::RandomState;
use std::fmt;
use std::hash::{BuildHasher, Hasher};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::OnceLock;
use std::time::{SystemTime, UNIX_EPOCH};

use indexmap::IndexMap;

use super::error::SaverError;
use crate::error::Result;
use crate::value::Value;

/// `__error__`: a task's error, stored at write index −1.
pub const ERROR: &str = "__error__";
/// `__scheduled__`: stored at write index −2.
pub const SCHEDULED: &str = "__scheduled__";
/// `__interrupt__`: an interrupt, stored at write index −3.
pub const INTERRUPT: &str = "__interrupt__";
/// `__resume__`: a resume value, stored at write index −4.
pub const RESUME: &str = "__resume__";

/// Python's `WRITES_IDX_MAP`: the fixed (negative) write index of the special
/// channels. Regular writes use their position in the `put_writes` call.
pub const WRITES_IDX_MAP: [(&str, i64); 4] =
    [(ERROR, -1), (SCHEDULED, -2), (INTERRUPT, -3), (RESUME, -4)];

/// The write index Python stores a write under: `WRITES_IDX_MAP.get(channel, position)`.
pub fn write_idx(channel: &str, position: usize) -> i64 {
    WRITES_IDX_MAP
        .iter()
        .find(|(c, _)| *c == channel)
        .map(|(_, idx)| *idx)
        .unwrap_or_else(|| i64::try_from(position).unwrap_or(i64::MAX))
}

/// Python's `EXCLUDED_METADATA_KEYS`: config keys never copied into metadata.
pub const EXCLUDED_METADATA_KEYS: [&str; 9] = [
    "thread_id",
    "checkpoint_id",
    "checkpoint_ns",
    "checkpoint_map",
    "langgraph_step",
    "langgraph_node",
    "langgraph_triggers",
    "langgraph_path",
    "langgraph_checkpoint_ns",
];

/// A channel version: Python's `str | int | float`.
#[derive(Clone, Debug, PartialEq)]
pub enum ChannelVersion {
    /// An integer version (the base saver's default).
    Int(i64),
    /// A float version.
    Float(f64),
    /// A string version (`InMemorySaver`'s `"000…0003.0.123…"`).
    Str(String),
}

impl ChannelVersion {
    /// The version as a [`Value`].
    pub fn to_value(&self) -> Value {
        match self {
            ChannelVersion::Int(i) => Value::from(*i),
            ChannelVersion::Float(f) => Value::F64(*f),
            ChannelVersion::Str(s) => Value::from(s.as_str()),
        }
    }

    /// Reads a version from a [`Value`] (int, float or str).
    pub fn from_value(value: &Value) -> Option<ChannelVersion> {
        match value {
            Value::Int(i) => i.as_i64().map(ChannelVersion::Int),
            Value::F64(f) => Some(ChannelVersion::Float(*f)),
            Value::F32(f) => Some(ChannelVersion::Float(f64::from(*f))),
            Value::Str(s) => Some(ChannelVersion::Str(s.to_string())),
            _ => None,
        }
    }
}

impl fmt::Display for ChannelVersion {
    /// Python's `str(version)`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ChannelVersion::Int(i) => write!(f, "{i}"),
            ChannelVersion::Float(x) => f.write_str(&py_float_repr(*x)),
            ChannelVersion::Str(s) => f.write_str(s),
        }
    }
}

impl From<i64> for ChannelVersion {
    fn from(i: i64) -> Self {
        ChannelVersion::Int(i)
    }
}
impl From<f64> for ChannelVersion {
    fn from(f: f64) -> Self {
        ChannelVersion::Float(f)
    }
}
impl From<&str> for ChannelVersion {
    fn from(s: &str) -> Self {
        ChannelVersion::Str(s.to_owned())
    }
}
impl From<String> for ChannelVersion {
    fn from(s: String) -> Self {
        ChannelVersion::Str(s)
    }
}

/// Python's `ChannelVersions`: channel name → version, in insertion order.
pub type ChannelVersions = IndexMap<String, ChannelVersion>;

fn versions_to_value(versions: &ChannelVersions) -> Value {
    Value::Map(
        versions
            .iter()
            .map(|(k, v)| (Value::from(k.as_str()), v.to_value()))
            .collect(),
    )
}

fn versions_from_value(value: &Value, field: &str) -> Result<ChannelVersions, SaverError> {
    let entries = value.as_map().ok_or_else(|| {
        SaverError::invalid_checkpoint(
            field,
            format!("expected a map, found {}", value.kind_name()),
        )
    })?;
    let mut out = ChannelVersions::with_capacity(entries.len());
    for (k, v) in entries {
        let key = k.as_str().ok_or_else(|| {
            SaverError::invalid_checkpoint(field, format!("a {} key", k.kind_name()))
        })?;
        let version = ChannelVersion::from_value(v).ok_or_else(|| {
            SaverError::invalid_checkpoint(
                format!("{field}.{key}"),
                format!(
                    "a version must be str, int or float, found {}",
                    v.kind_name()
                ),
            )
        })?;
        out.insert(key.to_owned(), version);
    }
    Ok(out)
}

fn str_map_from_value(value: &Value, field: &str) -> Result<IndexMap<String, Value>, SaverError> {
    let entries = value.as_map().ok_or_else(|| {
        SaverError::invalid_checkpoint(
            field,
            format!("expected a map, found {}", value.kind_name()),
        )
    })?;
    let mut out = IndexMap::with_capacity(entries.len());
    for (k, v) in entries {
        let key = k.as_str().ok_or_else(|| {
            SaverError::invalid_checkpoint(field, format!("a {} key", k.kind_name()))
        })?;
        out.insert(key.to_owned(), v.clone());
    }
    Ok(out)
}

fn str_map_to_value(map: &IndexMap<String, Value>) -> Value {
    Value::Map(
        map.iter()
            .map(|(k, v)| (Value::from(k.as_str()), v.clone()))
            .collect(),
    )
}

/// Python's `RunnableConfig` as far as savers read it:
/// `{"configurable": {"thread_id", "checkpoint_ns", "checkpoint_id", …}, "metadata": {…}}`.
///
/// `thread_id` and `checkpoint_ns` are optional because Python distinguishes a missing
/// key: `put`, `put_writes` and `get_tuple` need a thread id; `list` reads every
/// namespace when `checkpoint_ns` is absent and only the given one when it is set
/// (the root namespace is `""`).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct CheckpointConfig {
    /// `configurable.thread_id`.
    pub thread_id: Option<String>,
    /// `configurable.checkpoint_ns`; `None` = not given (reads as `""`, except in `list`).
    pub checkpoint_ns: Option<String>,
    /// `configurable.checkpoint_id`: a specific checkpoint, or the parent for `put`.
    pub checkpoint_id: Option<String>,
    /// Every other `configurable` key, in order. Scalar ones are copied into the
    /// metadata `put` stores, as Python's `get_checkpoint_metadata` does.
    pub configurable: IndexMap<String, Value>,
    /// `config["metadata"]`, copied into stored metadata the same way.
    pub metadata: IndexMap<String, Value>,
}

impl CheckpointConfig {
    /// A config for `thread_id` in the root namespace (`checkpoint_ns = ""`), latest
    /// checkpoint.
    pub fn new(thread_id: impl Into<String>) -> Self {
        CheckpointConfig {
            thread_id: Some(thread_id.into()),
            checkpoint_ns: Some(String::new()),
            ..Default::default()
        }
    }

    /// The config of one stored checkpoint, as savers return it.
    pub fn for_checkpoint(
        thread_id: impl Into<String>,
        checkpoint_ns: impl Into<String>,
        checkpoint_id: impl Into<String>,
    ) -> Self {
        CheckpointConfig {
            thread_id: Some(thread_id.into()),
            checkpoint_ns: Some(checkpoint_ns.into()),
            checkpoint_id: Some(checkpoint_id.into()),
            ..Default::default()
        }
    }

    /// The same config with this namespace.
    pub fn with_ns(mut self, checkpoint_ns: impl Into<String>) -> Self {
        self.checkpoint_ns = Some(checkpoint_ns.into());
        self
    }

    /// The same config pointing at this checkpoint.
    pub fn with_checkpoint_id(mut self, checkpoint_id: impl Into<String>) -> Self {
        self.checkpoint_id = Some(checkpoint_id.into());
        self
    }

    /// The same config with a `config["metadata"]` entry.
    pub fn with_metadata(mut self, key: impl Into<String>, value: impl Into<Value>) -> Self {
        self.metadata.insert(key.into(), value.into());
        self
    }

    /// The namespace, `""` when not given.
    pub fn ns(&self) -> &str {
        self.checkpoint_ns.as_deref().unwrap_or("")
    }

    /// The thread id, or [`SaverError::MissingThreadId`] naming `operation`.
    pub fn require_thread_id(&self, operation: &'static str) -> Result<&str, SaverError> {
        self.thread_id
            .as_deref()
            .ok_or(SaverError::MissingThreadId { operation })
    }

    /// The checkpoint id, or [`SaverError::MissingCheckpointId`] naming `operation`.
    pub fn require_checkpoint_id(&self, operation: &'static str) -> Result<&str, SaverError> {
        self.checkpoint_id
            .as_deref()
            .ok_or(SaverError::MissingCheckpointId { operation })
    }

    /// The config as Python's dict: `{"configurable": {…}}`, plus `"metadata"` when
    /// non-empty.
    pub fn to_value(&self) -> Value {
        let mut conf: Vec<(Value, Value)> = Vec::new();
        if let Some(t) = &self.thread_id {
            conf.push(("thread_id".into(), t.as_str().into()));
        }
        if let Some(ns) = &self.checkpoint_ns {
            conf.push(("checkpoint_ns".into(), ns.as_str().into()));
        }
        if let Some(id) = &self.checkpoint_id {
            conf.push(("checkpoint_id".into(), id.as_str().into()));
        }
        conf.extend(
            self.configurable
                .iter()
                .map(|(k, v)| (Value::from(k.as_str()), v.clone())),
        );
        let mut out = vec![(Value::from("configurable"), Value::Map(conf))];
        if !self.metadata.is_empty() {
            out.push(("metadata".into(), str_map_to_value(&self.metadata)));
        }
        Value::Map(out)
    }

    /// Reads Python's config dict. `thread_id` may be a str or an int (written as its
    /// decimal string); `checkpoint_ns` and `checkpoint_id` must be str (or `None`).
    pub fn from_value(value: &Value) -> Result<Self, SaverError> {
        let invalid = |reason: String| SaverError::InvalidConfig { reason };
        if value.as_map().is_none() {
            return Err(invalid(format!(
                "expected a map, found {}",
                value.kind_name()
            )));
        }
        let mut out = CheckpointConfig::default();
        if let Some(conf) = value.get("configurable") {
            let entries = conf.as_map().ok_or_else(|| {
                invalid(format!(
                    "configurable must be a map, found {}",
                    conf.kind_name()
                ))
            })?;
            for (k, v) in entries {
                let key = k
                    .as_str()
                    .ok_or_else(|| invalid(format!("a {} key in configurable", k.kind_name())))?;
                let as_opt_str = |v: &Value| -> Result<Option<String>, SaverError> {
                    match v {
                        Value::Nil => Ok(None),
                        Value::Str(s) => Ok(Some(s.to_string())),
                        other => Err(invalid(format!(
                            "configurable.{key} must be a str, found {}",
                            other.kind_name()
                        ))),
                    }
                };
                match key {
                    "thread_id" => {
                        out.thread_id = match v {
                            Value::Int(i) => Some(i.to_string()),
                            other => as_opt_str(other)?,
                        }
                    }
                    "checkpoint_ns" => out.checkpoint_ns = as_opt_str(v)?,
                    "checkpoint_id" => out.checkpoint_id = as_opt_str(v)?,
                    _ => {
                        out.configurable.insert(key.to_owned(), v.clone());
                    }
                }
            }
        }
        if let Some(md) = value.get("metadata") {
            if !md.is_nil() {
                out.metadata =
                    str_map_from_value(md, "metadata").map_err(|e| invalid(e.to_string()))?;
            }
        }
        Ok(out)
    }
}

/// The top-level keys of a checkpoint in the order langgraph's `create_checkpoint`
/// writes them.
const CREATE_CHECKPOINT_ORDER: [&str; 7] = [
    "v",
    "ts",
    "id",
    "channel_values",
    "channel_versions",
    "versions_seen",
    "updated_channels",
];

/// Python's `Checkpoint` dict: a state snapshot.
///
/// Unknown top-level keys (e.g. `pending_sends` of older versions) are kept in
/// [`extra`](Self::extra), and the key order read by [`from_value`](Self::from_value)
/// is remembered, so converting back gives the same dict in the same order.
#[derive(Clone, Debug, PartialEq)]
pub struct Checkpoint {
    /// `v`: the format version (langgraph 1.x writes 4).
    pub v: i64,
    /// `id`: a time-ordered UUIDv6 string; the largest id of a thread is its latest.
    pub id: String,
    /// `ts`: ISO-8601 timestamp.
    pub ts: String,
    /// `channel_values`: channel → value.
    pub channel_values: IndexMap<String, Value>,
    /// `channel_versions`: channel → version.
    pub channel_versions: ChannelVersions,
    /// `versions_seen`: node → channel → version.
    pub versions_seen: IndexMap<String, ChannelVersions>,
    /// `updated_channels`: `None` is Python's `None` (or an absent key).
    pub updated_channels: Option<Vec<String>>,
    /// Every other top-level key, in order.
    pub extra: IndexMap<String, Value>,
    /// The top-level key order as read (or langgraph's default for new checkpoints).
    order: Vec<String>,
}

impl Checkpoint {
    /// An empty checkpoint with this id and timestamp, `v = 4` (langgraph 1.x), keys in
    /// `create_checkpoint`'s order.
    pub fn new(id: impl Into<String>, ts: impl Into<String>) -> Self {
        Checkpoint {
            v: 4,
            id: id.into(),
            ts: ts.into(),
            channel_values: IndexMap::new(),
            channel_versions: ChannelVersions::new(),
            versions_seen: IndexMap::new(),
            updated_channels: None,
            extra: IndexMap::new(),
            order: CREATE_CHECKPOINT_ORDER
                .iter()
                .map(|s| (*s).to_owned())
                .collect(),
        }
    }

    /// An empty checkpoint with a fresh id ([`uuid6`] with `clock_seq = step`) and the
    /// current UTC time, as langgraph creates one for a step.
    pub fn now(step: i64) -> Self {
        Checkpoint::new(uuid6(step), now_isoformat())
    }

    /// The top-level keys in the order they are written.
    pub fn key_order(&self) -> Vec<String> {
        let mut keys: Vec<String> = Vec::new();
        for k in &self.order {
            let present = match k.as_str() {
                "v" | "id" | "ts" | "channel_values" | "channel_versions" | "versions_seen"
                | "updated_channels" => true,
                other => self.extra.contains_key(other),
            };
            if present && !keys.contains(k) {
                keys.push(k.clone());
            }
        }
        for k in [
            "v",
            "id",
            "ts",
            "channel_values",
            "channel_versions",
            "versions_seen",
        ] {
            if !keys.iter().any(|x| x == k) {
                keys.push(k.to_owned());
            }
        }
        if self.updated_channels.is_some() && !keys.iter().any(|x| x == "updated_channels") {
            keys.push("updated_channels".to_owned());
        }
        for k in self.extra.keys() {
            if !keys.contains(k) {
                keys.push(k.clone());
            }
        }
        keys
    }

    fn to_value_impl(&self, with_channel_values: bool) -> Value {
        let mut out = Vec::with_capacity(8);
        for key in self.key_order() {
            let value = match key.as_str() {
                "v" => Value::from(self.v),
                "id" => Value::from(self.id.as_str()),
                "ts" => Value::from(self.ts.as_str()),
                "channel_values" if with_channel_values => str_map_to_value(&self.channel_values),
                "channel_values" => continue,
                "channel_versions" => versions_to_value(&self.channel_versions),
                "versions_seen" => Value::Map(
                    self.versions_seen
                        .iter()
                        .map(|(k, v)| (Value::from(k.as_str()), versions_to_value(v)))
                        .collect(),
                ),
                "updated_channels" => match &self.updated_channels {
                    None => Value::Nil,
                    Some(chs) => {
                        Value::Array(chs.iter().map(|c| Value::from(c.as_str())).collect())
                    }
                },
                other => match self.extra.get(other) {
                    Some(v) => v.clone(),
                    None => continue,
                },
            };
            out.push((Value::from(key), value));
        }
        Value::Map(out)
    }

    /// The checkpoint as Python's dict, with `channel_values`.
    pub fn to_value(&self) -> Value {
        self.to_value_impl(true)
    }

    /// The dict a saver stores as the checkpoint row: everything but
    /// `channel_values` (Python's `c = checkpoint.copy(); c.pop("channel_values")`).
    pub fn to_row_value(&self) -> Value {
        self.to_value_impl(false)
    }

    /// Reads Python's checkpoint dict (with or without `channel_values`).
    pub fn from_value(value: &Value) -> Result<Self, SaverError> {
        let entries = value.as_map().ok_or_else(|| {
            SaverError::invalid_checkpoint(
                "$",
                format!("expected a map, found {}", value.kind_name()),
            )
        })?;
        let mut cp = Checkpoint::new("", "");
        cp.order.clear();
        let (mut has_v, mut has_id, mut has_ts) = (false, false, false);
        for (k, v) in entries {
            let key = k.as_str().ok_or_else(|| {
                SaverError::invalid_checkpoint("$", format!("a {} key", k.kind_name()))
            })?;
            let expect_str = |v: &Value| -> Result<String, SaverError> {
                v.as_str().map(str::to_owned).ok_or_else(|| {
                    SaverError::invalid_checkpoint(
                        key,
                        format!("expected a str, found {}", v.kind_name()),
                    )
                })
            };
            match key {
                "v" => {
                    cp.v = v.as_i64().ok_or_else(|| {
                        SaverError::invalid_checkpoint(
                            "v",
                            format!("expected an int, found {}", v.kind_name()),
                        )
                    })?;
                    has_v = true;
                }
                "id" => {
                    cp.id = expect_str(v)?;
                    has_id = true;
                }
                "ts" => {
                    cp.ts = expect_str(v)?;
                    has_ts = true;
                }
                "channel_values" => cp.channel_values = str_map_from_value(v, "channel_values")?,
                "channel_versions" => {
                    cp.channel_versions = versions_from_value(v, "channel_versions")?
                }
                "versions_seen" => {
                    let nodes = str_map_from_value(v, "versions_seen")?;
                    let mut seen = IndexMap::with_capacity(nodes.len());
                    for (node, versions) in &nodes {
                        seen.insert(
                            node.clone(),
                            versions_from_value(versions, &format!("versions_seen.{node}"))?,
                        );
                    }
                    cp.versions_seen = seen;
                }
                "updated_channels" => {
                    cp.updated_channels = match v {
                        Value::Nil => None,
                        Value::Array(items) => Some(
                            items
                                .iter()
                                .map(|c| {
                                    c.as_str().map(str::to_owned).ok_or_else(|| {
                                        SaverError::invalid_checkpoint(
                                            "updated_channels",
                                            format!("a {} item", c.kind_name()),
                                        )
                                    })
                                })
                                .collect::<Result<_, _>>()?,
                        ),
                        other => {
                            return Err(SaverError::invalid_checkpoint(
                                "updated_channels",
                                format!("expected a list or None, found {}", other.kind_name()),
                            ))
                        }
                    }
                }
                other => {
                    cp.extra.insert(other.to_owned(), v.clone());
                }
            }
            if !cp.order.iter().any(|x| x == key) {
                cp.order.push(key.to_owned());
            }
        }
        for (present, name) in [(has_v, "v"), (has_id, "id"), (has_ts, "ts")] {
            if !present {
                return Err(SaverError::invalid_checkpoint(name, "missing"));
            }
        }
        Ok(cp)
    }
}

/// Python's `CheckpointMetadata`: every key, in order, nothing stripped.
///
/// The well-known keys have typed accessors; the map itself is public.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct CheckpointMetadata(pub IndexMap<String, Value>);

impl CheckpointMetadata {
    /// `{"source": source, "step": step, "parents": {}}`, as langgraph writes it.
    pub fn new(source: &str, step: i64) -> Self {
        let mut m = IndexMap::new();
        m.insert("source".to_owned(), Value::from(source));
        m.insert("step".to_owned(), Value::from(step));
        m.insert("parents".to_owned(), Value::Map(Vec::new()));
        CheckpointMetadata(m)
    }

    /// The same metadata with one more key (or a replaced value, kept in place).
    pub fn with(mut self, key: impl Into<String>, value: impl Into<Value>) -> Self {
        self.0.insert(key.into(), value.into());
        self
    }

    /// The value of a key.
    pub fn get(&self, key: &str) -> Option<&Value> {
        self.0.get(key)
    }

    /// `source`: `input`, `loop`, `update` or `fork`.
    pub fn source(&self) -> Option<&str> {
        self.get("source").and_then(Value::as_str)
    }

    /// `step`: −1 for the input checkpoint, then 0, 1, …
    pub fn step(&self) -> Option<i64> {
        self.get("step").and_then(Value::as_i64)
    }

    /// `run_id`.
    pub fn run_id(&self) -> Option<&str> {
        self.get("run_id").and_then(Value::as_str)
    }

    /// `parents`: namespace → checkpoint id.
    pub fn parents(&self) -> Option<&Value> {
        self.get("parents")
    }

    /// `counters_since_delta_snapshot`: channel → `(updates, supersteps)` since the
    /// channel's last `_DeltaSnapshot`. Entries that are not a pair of ints are skipped.
    pub fn counters_since_delta_snapshot(&self) -> IndexMap<String, (i64, i64)> {
        let mut out = IndexMap::new();
        if let Some(entries) = self
            .get("counters_since_delta_snapshot")
            .and_then(Value::as_map)
        {
            for (k, v) in entries {
                let pair = v.as_array().and_then(|a| match a {
                    [u, s] => Some((u.as_i64()?, s.as_i64()?)),
                    _ => None,
                });
                if let (Some(name), Some(pair)) = (k.as_str(), pair) {
                    out.insert(name.to_owned(), pair);
                }
            }
        }
        out
    }

    /// The metadata as Python's dict.
    pub fn to_value(&self) -> Value {
        str_map_to_value(&self.0)
    }

    /// Reads Python's metadata dict (a map with string keys).
    pub fn from_value(value: &Value) -> Result<Self, SaverError> {
        let entries = value.as_map().ok_or_else(|| SaverError::InvalidMetadata {
            reason: format!("expected a map, found {}", value.kind_name()),
        })?;
        let mut out = IndexMap::with_capacity(entries.len());
        for (k, v) in entries {
            let key = k.as_str().ok_or_else(|| SaverError::InvalidMetadata {
                reason: format!("a {} key", k.kind_name()),
            })?;
            out.insert(key.to_owned(), v.clone());
        }
        Ok(CheckpointMetadata(out))
    }
}

/// Python's `get_checkpoint_metadata(config, metadata)`: the metadata a saver stores.
///
/// `\u0000` is removed from string values; then scalar (str, int, float, bool) keys of
/// `config.metadata` and of `config.configurable` that are not present yet, do not start
/// with `__` and are not in [`EXCLUDED_METADATA_KEYS`] are copied in (strings also
/// without `\u0000`).
pub fn checkpoint_metadata(
    config: &CheckpointConfig,
    metadata: &CheckpointMetadata,
) -> CheckpointMetadata {
    let strip = |v: &Value| match v {
        Value::Str(s) if s.contains('\u{0}') => Value::Str(s.replace('\u{0}', "").into()),
        other => other.clone(),
    };
    let mut out: IndexMap<String, Value> = metadata
        .0
        .iter()
        .map(|(k, v)| (k.clone(), strip(v)))
        .collect();
    // Python iterates `config["configurable"]` including thread_id, checkpoint_ns and
    // checkpoint_id, but those are excluded keys, so only the extra keys matter.
    for source in [&config.metadata, &config.configurable] {
        for (key, v) in source {
            if out.contains_key(key)
                || EXCLUDED_METADATA_KEYS.contains(&key.as_str())
                || key.starts_with("__")
            {
                continue;
            }
            match v {
                Value::Str(_) => {
                    out.insert(key.clone(), strip(v));
                }
                Value::Int(_) | Value::Bool(_) | Value::F64(_) | Value::F32(_) => {
                    out.insert(key.clone(), v.clone());
                }
                _ => {}
            }
        }
    }
    CheckpointMetadata(out)
}

/// Python's `PendingWrite`: `(task_id, channel, value)`.
#[derive(Clone, Debug, PartialEq)]
pub struct PendingWrite {
    /// The task that wrote it.
    pub task_id: String,
    /// The channel written.
    pub channel: String,
    /// The value written.
    pub value: Value,
}

impl PendingWrite {
    /// A new write.
    pub fn new(
        task_id: impl Into<String>,
        channel: impl Into<String>,
        value: impl Into<Value>,
    ) -> Self {
        PendingWrite {
            task_id: task_id.into(),
            channel: channel.into(),
            value: value.into(),
        }
    }

    /// The write as Python's tuple (an array of three).
    pub fn to_value(&self) -> Value {
        Value::Array(vec![
            Value::from(self.task_id.as_str()),
            Value::from(self.channel.as_str()),
            self.value.clone(),
        ])
    }
}

/// Python's `CheckpointTuple`.
#[derive(Clone, Debug, PartialEq)]
pub struct CheckpointTuple {
    /// The config of this checkpoint (thread, namespace, id).
    pub config: CheckpointConfig,
    /// The checkpoint, with `channel_values` loaded.
    pub checkpoint: Checkpoint,
    /// Its metadata.
    pub metadata: CheckpointMetadata,
    /// The parent checkpoint's config, if it has one.
    pub parent_config: Option<CheckpointConfig>,
    /// Writes stored against it, in `(task_path, task_id, idx)` order.
    pub pending_writes: Vec<PendingWrite>,
}

/// Python's `DeltaChannelHistory`: what one channel contributed along the parent chain.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct DeltaChannelHistory {
    /// On-path writes to the channel, oldest first (the target's own writes excluded).
    pub writes: Vec<PendingWrite>,
    /// The value stored at the nearest ancestor that has one (usually a
    /// [`Value::DeltaSnapshot`]); `None` when the walk reached the root without one.
    pub seed: Option<Value>,
}

impl DeltaChannelHistory {
    /// Python's dict: `{"writes": [...], "seed"?: value}`.
    pub fn to_value(&self) -> Value {
        let mut out = vec![(
            Value::from("writes"),
            Value::Array(self.writes.iter().map(PendingWrite::to_value).collect()),
        )];
        if let Some(seed) = &self.seed {
            out.push(("seed".into(), seed.clone()));
        }
        Value::Map(out)
    }
}

/// Python's `writes_sort_key`: `(task_path, task_id, idx)`.
pub fn writes_sort_key<'a>(
    task_path: &'a str,
    task_id: &'a str,
    idx: i64,
) -> (&'a str, &'a str, i64) {
    (task_path, task_id, idx)
}

// ---------------------------------------------------------------------------------
// ids, timestamps and versions

/// 64 random bits from a per-process randomly keyed SipHash over a counter: a
/// non-cryptographic source, enough for version tie-breakers and uuid6 node bits.
pub(crate) fn random_u64() -> u64 {
    static STATE: OnceLock<RandomState> = OnceLock::new();
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let mut h = STATE.get_or_init(RandomState::new).build_hasher();
    h.write_u64(COUNTER.fetch_add(1, Ordering::Relaxed));
    h.finish()
}

/// A float in `[0, 1)` with 53 random bits, like Python's `random.random()`.
pub(crate) fn random_f64() -> f64 {
    (random_u64() >> 11) as f64 / (1u64 << 53) as f64
}

/// A time-ordered checkpoint id, as `langgraph.checkpoint.base.id.uuid6(clock_seq=…)`
/// makes it: 100-ns timestamp since 1582 (strictly increasing within this process),
/// the low 14 bits of `clock_seq`, and a random 48-bit node. Ids made later compare
/// greater as strings.
pub fn uuid6(clock_seq: i64) -> String {
    static LAST: AtomicU64 = AtomicU64::new(0);
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or(0);
    let now = u64::try_from(nanos / 100)
        .unwrap_or(u64::MAX)
        .saturating_add(0x01B2_1DD2_1381_4000);
    let mut last = LAST.load(Ordering::Relaxed);
    let timestamp = loop {
        let ts = if now <= last {
            last.saturating_add(1)
        } else {
            now
        };
        match LAST.compare_exchange_weak(last, ts, Ordering::Relaxed, Ordering::Relaxed) {
            Ok(_) => break ts,
            Err(actual) => last = actual,
        }
    };
    let ts = u128::from(timestamp);
    let seq = u128::from((clock_seq & 0x3FFF) as u64);
    let node = u128::from(random_u64() & 0xFFFF_FFFF_FFFF);
    let mut n: u128 = ((ts >> 12) & 0xFFFF_FFFF_FFFF) << 80;
    n |= (ts & 0x0FFF) << 64;
    n |= seq << 48;
    n |= node;
    n &= !(0xC000u128 << 48);
    n |= 0x8000u128 << 48;
    n &= !(0xF000u128 << 64);
    n |= 6u128 << 76;
    let hex = format!("{n:032x}");
    let part = |a: usize, b: usize| hex.get(a..b).unwrap_or("");
    format!(
        "{}-{}-{}-{}-{}",
        part(0, 8),
        part(8, 12),
        part(12, 16),
        part(16, 20),
        part(20, 32)
    )
}

/// `datetime.now(timezone.utc).isoformat()`: `YYYY-MM-DDTHH:MM:SS[.ffffff]+00:00`.
pub fn now_isoformat() -> String {
    let d = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap_or_default();
    let secs = i64::try_from(d.as_secs()).unwrap_or(0);
    let micros = d.subsec_micros();
    let days = secs.div_euclid(86_400);
    let sod = secs.rem_euclid(86_400);
    let (y, m, day) = civil_from_days(days);
    let mut out = format!(
        "{y:04}-{m:02}-{day:02}T{:02}:{:02}:{:02}",
        sod / 3600,
        (sod % 3600) / 60,
        sod % 60
    );
    if micros != 0 {
        out.push_str(&format!(".{micros:06}"));
    }
    out.push_str("+00:00");
    out
}

/// Days since 1970-01-01 → (year, month, day), proleptic Gregorian.
fn civil_from_days(z: i64) -> (i64, u32, u32) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let y = yoe + era * 400;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    (if m <= 2 { y + 1 } else { y }, m, d)
}

/// Python's `repr(float)`: shortest round-trip digits, scientific notation when the
/// decimal exponent is below −4 or at least 16.
pub(crate) fn py_float_repr(x: f64) -> String {
    if x.is_nan() {
        return "nan".to_owned();
    }
    if x.is_infinite() {
        return if x > 0.0 { "inf" } else { "-inf" }.to_owned();
    }
    if x == 0.0 {
        return if x.is_sign_negative() { "-0.0" } else { "0.0" }.to_owned();
    }
    let sign = if x < 0.0 { "-" } else { "" };
    // Rust's `{:e}` gives the shortest round-trip digits: "8.444218515250481e-1".
    let sci = format!("{:e}", x.abs());
    let (mantissa, exp) = sci.split_once('e').unwrap_or((sci.as_str(), "0"));
    let exp: i64 = exp.parse().unwrap_or(0);
    let digits: String = mantissa.chars().filter(char::is_ascii_digit).collect();
    let ndigits = i64::try_from(digits.len()).unwrap_or(i64::MAX);
    let body = if (-4..16).contains(&exp) {
        if exp >= 0 {
            let int_len = usize::try_from(exp + 1).unwrap_or(0);
            if digits.len() <= int_len {
                let zeros = "0".repeat(int_len - digits.len());
                format!("{digits}{zeros}.0")
            } else {
                let (int_part, frac) = digits.split_at(int_len);
                format!("{int_part}.{frac}")
            }
        } else {
            let zeros = "0".repeat(usize::try_from(-exp - 1).unwrap_or(0));
            format!("0.{zeros}{digits}")
        }
    } else {
        let (first, rest) = digits.split_at(1.min(digits.len()));
        let frac = if ndigits > 1 {
            format!(".{rest}")
        } else {
            String::new()
        };
        let esign = if exp < 0 { '-' } else { '+' };
        format!("{first}{frac}e{esign}{:02}", exp.unsigned_abs())
    };
    format!("{sign}{body}")
}

/// `InMemorySaver.get_next_version`'s string: `f"{n:032}.{h:016}"`.
pub(crate) fn format_memory_version(n: i64, h: f64) -> String {
    let frac = py_float_repr(h);
    let frac = if frac.len() < 16 {
        format!("{}{frac}", "0".repeat(16 - frac.len()))
    } else {
        frac
    };
    format!("{n:032}.{frac}")
}

/// `get_next_version` of Python's `InMemorySaver` and `BasePostgresSaver`:
/// `f"{n + 1:032}.{random.random():016}"` where `n` is the current int version, or the
/// integer before the first `.` of the current string version (0 when there is none).
/// Float versions are refused (Python fails on them too).
pub(crate) fn next_string_version(
    current: Option<&ChannelVersion>,
    saver: &str,
) -> Result<ChannelVersion> {
    let n = match current {
        None => 0,
        Some(ChannelVersion::Int(i)) => *i,
        Some(ChannelVersion::Str(s)) => parse_version_prefix(s)?,
        Some(v @ ChannelVersion::Float(_)) => {
            return Err(SaverError::InvalidVersion {
                version: v.to_string(),
                reason: format!("{saver} versions are str or int"),
            }
            .into())
        }
    };
    let next = n
        .checked_add(1)
        .ok_or_else(|| super::traits::overflow(&n.to_string()))?;
    Ok(ChannelVersion::Str(format_memory_version(
        next,
        random_f64(),
    )))
}

/// Python's `int(current.split(".")[0])` for a version string.
pub(crate) fn parse_version_prefix(version: &str) -> Result<i64, SaverError> {
    let head = version.split('.').next().unwrap_or("").trim();
    let cleaned: String = head.chars().filter(|c| *c != '_').collect();
    cleaned
        .parse::<i64>()
        .map_err(|_| SaverError::InvalidVersion {
            version: version.to_owned(),
            reason: "the part before the first '.' is not an integer".to_owned(),
        })
}

/// Python's `==` on decoded values, as `list(filter=…)` compares metadata: numbers
/// compare by value across int, float and bool (`1 == 1.0 == True`), maps compare
/// regardless of key order, everything else structurally.
pub fn python_eq(a: &Value, b: &Value) -> bool {
    fn num(v: &Value) -> Option<Num> {
        match v {
            Value::Bool(b) => Some(Num::I(i128::from(*b))),
            Value::Int(i) => Some(Num::I(i.as_i128())),
            Value::F64(f) => Some(Num::F(*f)),
            Value::F32(f) => Some(Num::F(f64::from(*f))),
            _ => None,
        }
    }
    enum Num {
        I(i128),
        F(f64),
    }
    fn int_eq_float(i: i128, f: f64) -> bool {
        f.is_finite() && f.fract() == 0.0 && f.abs() < 1.7e38 && (f as i128) == i
    }
    if let (Some(x), Some(y)) = (num(a), num(b)) {
        return match (x, y) {
            (Num::I(x), Num::I(y)) => x == y,
            (Num::F(x), Num::F(y)) => x == y,
            (Num::I(i), Num::F(f)) | (Num::F(f), Num::I(i)) => int_eq_float(i, f),
        };
    }
    match (a, b) {
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(p, q)| python_eq(p, q))
        }
        (Value::Map(x), Value::Map(y)) => {
            x.len() == y.len()
                && x.iter().all(|(k, v)| {
                    y.iter()
                        .any(|(k2, v2)| python_eq(k, k2) && python_eq(v, v2))
                })
        }
        (Value::DeltaSnapshot(x), Value::DeltaSnapshot(y)) => python_eq(x, y),
        (Value::F64(_) | Value::F32(_), _) | (_, Value::F64(_) | Value::F32(_)) => false,
        _ => a == b,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn float_repr_matches_python() {
        // Expected strings from Python 3.11: repr(x) and f"{x:016}".
        for (x, repr, padded) in [
            (0.5, "0.5", "00000000000000.5"),
            (
                0.8444218515250481,
                "0.8444218515250481",
                "0.8444218515250481",
            ),
            (1.234e-05, "1.234e-05", "00000001.234e-05"),
            (5e-05, "5e-05", "000000000005e-05"),
            (0.0001, "0.0001", "00000000000.0001"),
            (
                0.00012345678901234,
                "0.00012345678901234",
                "0.00012345678901234",
            ),
            (0.1, "0.1", "00000000000000.1"),
            (0.0, "0.0", "00000000000000.0"),
            (0.25, "0.25", "0000000000000.25"),
        ] {
            assert_eq!(py_float_repr(x), repr);
            let v = format_memory_version(3, x);
            assert_eq!(v, format!("00000000000000000000000000000003.{padded}"));
        }
        assert_eq!(py_float_repr(1e16), "1e+16");
        assert_eq!(py_float_repr(123.0), "123.0");
        assert_eq!(py_float_repr(-2.5), "-2.5");
    }

    #[test]
    fn negative_versions_pad_after_the_sign() {
        // Python: f"{-5:032}" == "-" + "0" * 30 + "5"
        let v = format_memory_version(-5, 0.5);
        assert_eq!(v, format!("-{}5.00000000000000.5", "0".repeat(30)));
    }

    #[test]
    fn uuid6_is_increasing_and_well_formed() {
        let a = uuid6(-1);
        let b = uuid6(-1);
        assert!(b > a, "{b} should sort after {a}");
        assert_eq!(a.len(), 36);
        // version nibble 6, variant 10xx, clock_seq -1 -> 0x3fff -> "bfff"
        assert_eq!(a.get(14..15), Some("6"));
        assert_eq!(a.get(19..23), Some("bfff"));
    }

    #[test]
    fn python_equality() {
        assert!(python_eq(&Value::from(1i64), &Value::F64(1.0)));
        assert!(python_eq(&Value::from(1i64), &Value::Bool(true)));
        assert!(!python_eq(&Value::F64(f64::NAN), &Value::F64(f64::NAN)));
        assert!(!python_eq(&Value::from("1"), &Value::from(1i64)));
        let a = Value::map([("x", 1i64), ("y", 2i64)]);
        let b = Value::map([("y", 2i64), ("x", 1i64)]);
        assert!(python_eq(&a, &b));
        assert!(!python_eq(&a, &Value::map([("x", 1i64)])));
    }

    #[test]
    fn civil_dates() {
        assert_eq!(civil_from_days(0), (1970, 1, 1));
        assert_eq!(civil_from_days(19_844), (2024, 5, 1));
        assert_eq!(civil_from_days(-1), (1969, 12, 31));
    }

    #[test]
    fn metadata_merge_follows_get_checkpoint_metadata() {
        // Python: get_checkpoint_metadata(
        //   {"configurable": {"thread_id": "t", "model": "m\x00x", "__secret": "s",
        //                     "langgraph_step": 3, "obj": {}, "temp": 0.5},
        //    "metadata": {"user": "u", "step": 99}},
        //   {"source": "loop", "step": 1, "note": "a\x00b"})
        // == {'source': 'loop', 'step': 1, 'note': 'ab', 'user': 'u', 'model': 'mx', 'temp': 0.5}
        let mut config = CheckpointConfig::new("t");
        config.configurable.insert("model".into(), "m\u{0}x".into());
        config.configurable.insert("__secret".into(), "s".into());
        config
            .configurable
            .insert("langgraph_step".into(), 3i64.into());
        config.configurable.insert("obj".into(), Value::Map(vec![]));
        config.configurable.insert("temp".into(), 0.5f64.into());
        config.metadata.insert("user".into(), "u".into());
        config.metadata.insert("step".into(), 99i64.into());
        let md = CheckpointMetadata(IndexMap::from([
            ("source".to_owned(), Value::from("loop")),
            ("step".to_owned(), Value::from(1i64)),
            ("note".to_owned(), Value::from("a\u{0}b")),
        ]));
        let merged = checkpoint_metadata(&config, &md);
        let keys: Vec<&str> = merged.0.keys().map(String::as_str).collect();
        assert_eq!(keys, ["source", "step", "note", "user", "model", "temp"]);
        assert_eq!(merged.get("note"), Some(&Value::from("ab")));
        assert_eq!(merged.get("model"), Some(&Value::from("mx")));
        assert_eq!(merged.step(), Some(1));
    }

    #[test]
    fn checkpoint_keeps_key_order_and_unknown_keys() {
        let v = Value::map([
            ("v", Value::from(1i64)),
            ("id", Value::from("x")),
            ("ts", Value::from("t")),
            ("channel_values", Value::map([("a", Value::from(1i64))])),
            ("channel_versions", Value::map([("a", Value::from(1i64))])),
            ("versions_seen", Value::Map(vec![])),
            ("pending_sends", Value::Array(vec![])),
            ("updated_channels", Value::Nil),
        ]);
        let cp = Checkpoint::from_value(&v).expect("valid checkpoint");
        assert_eq!(cp.to_value(), v);
        let row = cp.to_row_value();
        let keys: Vec<&str> = row
            .as_map()
            .unwrap_or(&[])
            .iter()
            .filter_map(|(k, _)| k.as_str())
            .collect();
        assert_eq!(
            keys,
            [
                "v",
                "id",
                "ts",
                "channel_versions",
                "versions_seen",
                "pending_sends",
                "updated_channels"
            ]
        );
    }
}
