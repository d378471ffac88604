//! Pending writes and what `get_tuple`, `list` and the delta walk return: the special
//! channels and their write indices, [`PendingWrite`], [`CheckpointTuple`],
//! [`DeltaChannelHistory`].

use crate::value::Value;

use super::CheckpointConfig;
use super::{Checkpoint, CheckpointMetadata};

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
