//! The in-memory saver's rows: a checkpoint row and a write row as stored (`(type,
//! bytes)` pairs, as Python's `InMemorySaver` keeps them), and their decoding into
//! checkpoints, metadata, channel values and pending writes with the shared row codec
//! (`saver::codec`), as `sqlite::rows` and `postgres::rows` do.

use indexmap::IndexMap;

use super::InMemorySaver;
use crate::saver::codec::{RowCodec, RowKey, RowKind, RowLocation};
use crate::saver::types::{
    ChannelVersion, Checkpoint, CheckpointConfig, CheckpointMetadata, CheckpointTuple, PendingWrite,
};
use crate::saver::Result;
use crate::serializer::{tags, TypedBytes};
use crate::value::Value;

/// One checkpoint row: the checkpoint without `channel_values`, the metadata, the
/// parent id.
#[derive(Clone, Debug)]
pub(super) struct CheckpointRow {
    pub(super) checkpoint: TypedBytes,
    pub(super) metadata: TypedBytes,
    pub(super) parent: Option<String>,
}

/// One pending-write row (its key, `(task_id, idx)`, is the map's).
#[derive(Clone, Debug)]
pub(super) struct WriteRow {
    pub(super) task_id: String,
    pub(super) channel: String,
    pub(super) value: TypedBytes,
    pub(super) task_path: String,
}

impl InMemorySaver {
    /// The shared row codec over this saver's serializer.
    fn codec(&self) -> RowCodec<'_> {
        RowCodec::new(&*self.serde)
    }

    pub(super) fn load_checkpoint(
        &self,
        thread: &str,
        ns: &str,
        id: &str,
        row: &CheckpointRow,
    ) -> Result<Checkpoint> {
        let stored = &row.checkpoint;
        self.codec().checkpoint(
            RowKey::new(thread, ns, id),
            Some(&stored.type_tag),
            &stored.data,
        )
    }

    pub(super) fn load_metadata(
        &self,
        thread: &str,
        ns: &str,
        id: &str,
        row: &CheckpointRow,
    ) -> Result<CheckpointMetadata> {
        let stored = &row.metadata;
        self.codec().metadata(
            RowKey::new(thread, ns, id),
            Some(&stored.type_tag),
            &stored.data,
        )
    }

    pub(super) fn load_write(
        &self,
        thread: &str,
        ns: &str,
        id: &str,
        idx: i64,
        w: &WriteRow,
    ) -> Result<PendingWrite> {
        self.codec().write(
            |task, _| RowKey::new(thread, ns, id).write_location(task, idx),
            w.task_id.clone(),
            w.channel.clone(),
            Some(&w.value.type_tag),
            &w.value.data,
        )
    }

    /// A channel blob, which belongs to no one checkpoint: its location names the
    /// thread, namespace, channel and version.
    pub(super) fn load_blob(
        &self,
        thread: &str,
        ns: &str,
        channel: &str,
        version: &ChannelVersion,
        b: &TypedBytes,
    ) -> Result<Value> {
        self.codec().value(
            RowKind::Blob,
            || {
                RowLocation::new(RowKind::Blob, thread, ns, "")
                    .with_detail(format!("channel {channel:?} version {version}"))
            },
            Some(&b.type_tag),
            &b.data,
        )
    }

    /// Builds the tuple of one stored checkpoint: decodes the checkpoint row, loads
    /// the blobs of its `channel_versions` and its writes.
    pub(super) fn load_tuple(
        &self,
        thread: &str,
        ns: &str,
        id: &str,
        row: &CheckpointRow,
        metadata: Option<CheckpointMetadata>,
        config: CheckpointConfig,
    ) -> Result<CheckpointTuple> {
        let mut checkpoint = self.load_checkpoint(thread, ns, id, row)?;
        let metadata = match metadata {
            Some(m) => m,
            None => self.load_metadata(thread, ns, id, row)?,
        };
        // Copy the rows out under the lock, decode after releasing it.
        let (blobs, writes) = {
            let store = self.read();
            let space = store.threads.get(thread).and_then(|t| t.get(ns));
            let blobs: Vec<(String, ChannelVersion, TypedBytes)> = checkpoint
                .channel_versions
                .iter()
                .filter_map(|(ch, ver)| {
                    let b = space?.blob(ch, ver)?;
                    (b.type_tag != tags::EMPTY).then(|| (ch.clone(), ver.clone(), b.clone()))
                })
                .collect();
            let writes = space.map(|s| s.ordered_writes(id)).unwrap_or_default();
            (blobs, writes)
        };
        let mut values = IndexMap::with_capacity(blobs.len());
        for (ch, ver, b) in blobs {
            let v = self.load_blob(thread, ns, &ch, &ver, &b)?;
            values.insert(ch, v);
        }
        checkpoint.channel_values = values;
        let pending_writes = writes
            .iter()
            .map(|(idx, w)| self.load_write(thread, ns, id, *idx, w))
            .collect::<Result<Vec<_>>>()?;
        let parent_config = RowKey::new(thread, ns, id).parent_config(row.parent.as_deref());
        Ok(CheckpointTuple {
            config,
            checkpoint,
            metadata,
            parent_config,
            pending_writes,
        })
    }
}
