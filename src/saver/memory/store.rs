//! The in-memory store: Python's `InMemorySaver` storage, thread → namespace → rows.

use std::collections::{BTreeMap, HashMap};

use indexmap::IndexMap;

use super::rows::{CheckpointRow, WriteRow};
use crate::saver::types::ChannelVersion;
use crate::serializer::{tags, TypedBytes};

/// A blob's version as a map key, with Python's dict-key equality (`1 == 1.0`).
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub(super) enum VersionKey {
    Int(i64),
    Float(u64),
    Str(String),
}

impl VersionKey {
    pub(super) fn new(v: &ChannelVersion) -> Self {
        match v {
            ChannelVersion::Int(i) => VersionKey::Int(*i),
            ChannelVersion::Float(f) => {
                if f.fract() == 0.0 && f.abs() < 9.0e18 {
                    VersionKey::Int(*f as i64)
                } else if *f == 0.0 {
                    VersionKey::Int(0)
                } else {
                    VersionKey::Float(f.to_bits())
                }
            }
            ChannelVersion::Str(s) => VersionKey::Str(s.clone()),
        }
    }
}

#[derive(Clone, Debug, Default)]
pub(super) struct Namespace {
    pub(super) checkpoints: BTreeMap<String, CheckpointRow>,
    /// checkpoint id → (task id, idx) → write
    pub(super) writes: HashMap<String, HashMap<(String, i64), WriteRow>>,
    /// (channel, version) → value; the version as stored, for export
    pub(super) blobs: HashMap<(String, VersionKey), (ChannelVersion, TypedBytes)>,
}

impl Namespace {
    /// The writes of a checkpoint in `(task_path, task_id, idx)` order.
    pub(super) fn ordered_writes(&self, checkpoint_id: &str) -> Vec<(i64, WriteRow)> {
        let mut out: Vec<(i64, WriteRow)> = self
            .writes
            .get(checkpoint_id)
            .map(|w| {
                w.iter()
                    .map(|((_, idx), row)| (*idx, row.clone()))
                    .collect()
            })
            .unwrap_or_default();
        out.sort_by(|(ia, a), (ib, b)| {
            (a.task_path.as_str(), a.task_id.as_str(), *ia).cmp(&(
                b.task_path.as_str(),
                b.task_id.as_str(),
                *ib,
            ))
        });
        out
    }

    pub(super) fn blob(&self, channel: &str, version: &ChannelVersion) -> Option<&TypedBytes> {
        self.blobs
            .get(&(channel.to_owned(), VersionKey::new(version)))
            .map(|(_, b)| b)
    }

    /// Whether a non-`empty` blob is stored for the channel at this version.
    pub(super) fn has_value(&self, channel: &str, version: Option<&ChannelVersion>) -> bool {
        version
            .and_then(|v| self.blob(channel, v))
            .is_some_and(|b| b.type_tag != tags::EMPTY)
    }
}

#[derive(Clone, Debug, Default)]
pub(super) struct Store {
    /// thread → namespace → data, in insertion order like Python's dicts.
    pub(super) threads: IndexMap<String, IndexMap<String, Namespace>>,
}

pub(super) fn space_mut<'a>(store: &'a mut Store, thread: &str, ns: &str) -> &'a mut Namespace {
    store
        .threads
        .entry(thread.to_owned())
        .or_default()
        .entry(ns.to_owned())
        .or_default()
}
