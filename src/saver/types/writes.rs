//! Pending writes and what `get_tuple`, `list` and the delta walk return: the special
//! channels and their write indices, [`PendingWrite`], [`CheckpointTuple`],
//! [`DeltaChannelHistory`].

use super::{Checkpoint, CheckpointConfig, CheckpointMetadata};
use crate::error::Error;
use crate::value::{ObjectKind, PyObject, Value};

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

    /// Reads Python's `(task_id, channel, value)` tuple.
    ///
    /// # Errors
    /// [`ErrorKind::InvalidCheckpoint`](crate::ErrorKind::InvalidCheckpoint) (field `pending_writes`) for anything else.
    pub fn from_value(value: &Value) -> Result<Self, Error> {
        let invalid =
            |reason: String| crate::saver::error::invalid_checkpoint("pending_writes", reason);
        match value.as_array() {
            Some([task_id, channel, value]) => Ok(PendingWrite {
                task_id: task_id
                    .as_str()
                    .ok_or_else(|| invalid(format!("a {} task id", task_id.kind_name())))?
                    .to_owned(),
                channel: channel
                    .as_str()
                    .ok_or_else(|| invalid(format!("a {} channel", channel.kind_name())))?
                    .to_owned(),
                value: value.clone(),
            }),
            _ => Err(invalid(format!(
                "expected a (task_id, channel, value) tuple, found {}",
                value.kind_name()
            ))),
        }
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

impl CheckpointTuple {
    /// The thread id (`config.thread_id`; every saver sets it, `""` if one did not).
    pub fn thread_id(&self) -> &str {
        self.config.thread_id.as_deref().unwrap_or("")
    }

    /// The namespace (`config.checkpoint_ns`, `""` for the root).
    pub fn checkpoint_ns(&self) -> &str {
        self.config.ns()
    }

    /// The checkpoint's id (`checkpoint.id`, which `config.checkpoint_id` repeats).
    pub fn checkpoint_id(&self) -> &str {
        &self.checkpoint.id
    }

    /// The parent checkpoint's id, if it has one.
    pub fn parent_checkpoint_id(&self) -> Option<&str> {
        self.parent_config
            .as_ref()
            .and_then(|p| p.checkpoint_id.as_deref())
            .filter(|id| !id.is_empty())
    }

    /// The module and class of Python's `CheckpointTuple` (a `NamedTuple`).
    pub const PYTHON_CLASS: (&'static str, &'static str) =
        ("langgraph.checkpoint.base", "CheckpointTuple");

    /// Python's `CheckpointTuple` as `JsonPlusSerializer` writes it: a namedtuple
    /// envelope (ext code 2) with the fields `config`, `checkpoint`, `metadata`,
    /// `parent_config` and `pending_writes` (a list of `(task_id, channel, value)`).
    ///
    /// ```
    /// use langgraph_codec::saver::{Checkpoint, CheckpointConfig, CheckpointMetadata, CheckpointTuple};
    ///
    /// let t = CheckpointTuple {
    ///     config: CheckpointConfig::for_checkpoint("t", "", "1"),
    ///     checkpoint: Checkpoint::new("1", "2024-01-01T00:00:00+00:00"),
    ///     metadata: CheckpointMetadata::new("input", -1),
    ///     parent_config: None,
    ///     pending_writes: vec![],
    /// };
    /// assert_eq!(CheckpointTuple::from_value(&t.to_value())?, t);
    /// # Ok::<(), langgraph_codec::Error>(())
    /// ```
    pub fn to_value(&self) -> Value {
        let (module, name) = Self::PYTHON_CLASS;
        Value::object(PyObject::new(
            ObjectKind::ConstructorKwArgs,
            module,
            name,
            Value::map([
                ("config", self.config.to_value()),
                ("checkpoint", self.checkpoint.to_value()),
                ("metadata", self.metadata.to_value()),
                (
                    "parent_config",
                    self.parent_config
                        .as_ref()
                        .map_or(Value::Nil, CheckpointConfig::to_value),
                ),
                (
                    "pending_writes",
                    Value::Array(
                        self.pending_writes
                            .iter()
                            .map(PendingWrite::to_value)
                            .collect(),
                    ),
                ),
            ]),
        ))
    }

    /// Reads a `CheckpointTuple`: the namedtuple envelope [`to_value`](Self::to_value)
    /// writes, or a plain map with the same five fields.
    ///
    /// # Errors
    /// [`Error`](crate::Error) naming the field that does not have Python's shape.
    pub fn from_value(value: &Value) -> Result<Self, Error> {
        let fields = match value.as_object() {
            Some(obj) => &obj.arg,
            None => value,
        };
        let field = |name: &str| {
            fields.get(name).ok_or_else(|| {
                crate::saver::error::invalid_checkpoint(name, "missing from the CheckpointTuple")
            })
        };
        let parent = field("parent_config")?;
        Ok(CheckpointTuple {
            config: CheckpointConfig::from_value(field("config")?)?,
            checkpoint: Checkpoint::from_value(field("checkpoint")?)?,
            metadata: CheckpointMetadata::from_value(field("metadata")?)?,
            parent_config: match parent {
                Value::Nil => None,
                other => Some(CheckpointConfig::from_value(other)?),
            },
            pending_writes: field("pending_writes")?
                .as_array()
                .ok_or_else(|| {
                    crate::saver::error::invalid_checkpoint("pending_writes", "expected a list")
                })?
                .iter()
                .map(PendingWrite::from_value)
                .collect::<Result<_, _>>()?,
        })
    }
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

/// Whether every write goes to a special channel (`__error__`, `__scheduled__`,
/// `__interrupt__`, `__resume__`): Python's savers then replace stored writes with the
/// same key, and otherwise keep the first (`INSERT OR REPLACE` vs `OR IGNORE`).
pub fn all_special(writes: &[(String, Value)]) -> bool {
    writes
        .iter()
        .all(|(ch, _)| WRITES_IDX_MAP.iter().any(|(special, _)| special == ch))
}

/// Python's `writes_sort_key`: `(task_path, task_id, idx)`.
pub fn writes_sort_key<'a>(
    task_path: &'a str,
    task_id: &'a str,
    idx: i64,
) -> (&'a str, &'a str, i64) {
    (task_path, task_id, idx)
}
