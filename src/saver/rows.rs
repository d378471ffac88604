//! The rows a saver holds at rest, as `(type, bytes)` pairs: [`RawRows`], what
//! `InMemorySaver::export_rows` and `SqliteSaver::export_rows` return and
//! `InMemorySaver::import_rows` takes.

use super::types::ChannelVersion;
use crate::serializer::TypedBytes;

/// One stored checkpoint row.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RawCheckpointRow {
    /// Thread id.
    pub thread_id: String,
    /// Namespace.
    pub checkpoint_ns: String,
    /// Checkpoint id.
    pub checkpoint_id: String,
    /// `dumps_typed` of the checkpoint dict without `channel_values`.
    pub checkpoint: TypedBytes,
    /// `dumps_typed` of the metadata dict.
    pub metadata: TypedBytes,
    /// The parent checkpoint id, from the config `put` was given.
    pub parent_checkpoint_id: Option<String>,
}

/// One stored channel blob.
#[derive(Clone, Debug, PartialEq)]
pub struct RawBlobRow {
    /// Thread id.
    pub thread_id: String,
    /// Namespace.
    pub checkpoint_ns: String,
    /// Channel name.
    pub channel: String,
    /// Channel version.
    pub version: ChannelVersion,
    /// `dumps_typed` of the value, or `("empty", b"")` when the channel had none.
    pub value: TypedBytes,
}

/// One stored pending write.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RawWriteRow {
    /// Thread id.
    pub thread_id: String,
    /// Namespace.
    pub checkpoint_ns: String,
    /// The checkpoint the write belongs to.
    pub checkpoint_id: String,
    /// Task id.
    pub task_id: String,
    /// Write index: the position in the call, or the channel's negative
    /// `WRITES_IDX_MAP` index.
    pub idx: i64,
    /// Channel name.
    pub channel: String,
    /// `dumps_typed` of the value.
    pub value: TypedBytes,
    /// The task path given to `put_writes`.
    pub task_path: String,
}

/// Every row a saver holds, as `(type, bytes)` pairs: what is at rest.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct RawRows {
    /// Checkpoint + metadata rows: threads and namespaces in insertion order, ids
    /// ascending.
    pub checkpoints: Vec<RawCheckpointRow>,
    /// Channel blobs, sorted by thread, namespace, channel, version.
    pub blobs: Vec<RawBlobRow>,
    /// Pending writes, sorted by thread, namespace, checkpoint, then
    /// `(task_path, task_id, idx)`.
    pub writes: Vec<RawWriteRow>,
}

impl RawRows {
    /// Every `(type, bytes)` pair of every row.
    pub fn typed_bytes(&self) -> impl Iterator<Item = &TypedBytes> {
        self.checkpoints
            .iter()
            .flat_map(|c| [&c.checkpoint, &c.metadata])
            .chain(self.blobs.iter().map(|b| &b.value))
            .chain(self.writes.iter().map(|w| &w.value))
    }
}
