//! Delta-channel history: the parent-chain walk that rebuilds a `DeltaChannel`.
//!
//! A `DeltaChannel` stores its full value (a `_DeltaSnapshot`) only every few steps;
//! in between, a checkpoint stores nothing for it and the value is rebuilt from the
//! writes along the parent chain. For each requested channel the walk starts at the
//! target's parent, collects that ancestor's writes to the channel (in pending-write
//! order), and stops at the nearest ancestor that stores a value for the channel: that
//! value is the `seed`. Writes come back oldest first; the target's own writes are
//! not included (they are pending for the next step). Forks follow only their own
//! parent chain.

use std::collections::HashSet;

use indexmap::IndexMap;

use super::traits::CheckpointSaver;
use super::types::{CheckpointConfig, DeltaChannelHistory, PendingWrite};
use crate::saver::Result;
use crate::value::Value;

/// Python's default `BaseCheckpointSaver.get_delta_channel_history`: walks
/// [`get_tuple`](CheckpointSaver::get_tuple) and `parent_config` once for all channels.
/// Stops on a parent cycle (which only corrupt storage can have) instead of looping.
///
/// # Errors
///
/// Whatever `saver.get_tuple` returns for a checkpoint of the chain (storage, decoding
/// or config errors); a missing checkpoint is not an error (its history is empty).
pub async fn default_delta_channel_history<S: CheckpointSaver + ?Sized>(
    saver: &S,
    config: &CheckpointConfig,
    channels: &[String],
) -> Result<IndexMap<String, DeltaChannelHistory>> {
    if channels.is_empty() {
        return Ok(IndexMap::new());
    }
    let mut collected: IndexMap<String, Vec<PendingWrite>> =
        channels.iter().map(|c| (c.clone(), Vec::new())).collect();
    let mut seeds: IndexMap<String, Value> = IndexMap::new();
    let mut remaining: HashSet<String> = channels.iter().cloned().collect();
    let mut visited: HashSet<String> = HashSet::new();

    let target = saver.get_tuple(config).await?;
    let mut cursor = target.and_then(|t| t.parent_config);
    while let Some(cfg) = cursor {
        if remaining.is_empty() {
            break;
        }
        if let Some(id) = &cfg.checkpoint_id {
            if !visited.insert(id.clone()) {
                break;
            }
        }
        let Some(tuple) = saver.get_tuple(&cfg).await? else {
            break;
        };
        for write in tuple.pending_writes.iter().rev() {
            if remaining.contains(&write.channel) {
                if let Some(list) = collected.get_mut(&write.channel) {
                    list.push(write.clone());
                }
            }
        }
        let done: Vec<String> = remaining
            .iter()
            .filter(|ch| tuple.checkpoint.channel_values.contains_key(*ch))
            .cloned()
            .collect();
        for ch in done {
            if let Some(v) = tuple.checkpoint.channel_values.get(&ch) {
                seeds.insert(ch.clone(), v.clone());
            }
            remaining.remove(&ch);
        }
        cursor = tuple.parent_config;
    }
    Ok(finish(collected, seeds))
}

/// Turns newest-first collections into the result: writes oldest first, seeds where
/// found, one entry per requested channel in request order.
pub(crate) fn finish(
    collected: IndexMap<String, Vec<PendingWrite>>,
    mut seeds: IndexMap<String, Value>,
) -> IndexMap<String, DeltaChannelHistory> {
    collected
        .into_iter()
        .map(|(ch, mut writes)| {
            writes.reverse();
            let seed = seeds.swap_remove(&ch);
            (ch, DeltaChannelHistory { writes, seed })
        })
        .collect()
}

/// What [`needed_ancestors`] needs to know of one stored checkpoint.
#[derive(Clone, Debug, Default)]
pub(crate) struct ChainNode {
    /// The stored parent id.
    pub parent: Option<String>,
    /// The channels this checkpoint stores a value for; `None` when its checkpoint row
    /// cannot be read.
    pub stored: Option<HashSet<String>>,
    /// The channels of its metadata's `counters_since_delta_snapshot`; `None` when its
    /// metadata cannot be read.
    pub delta_channels: Option<Vec<String>>,
}

/// The ancestors (on the parent chain) that the `keep` checkpoints of one namespace
/// need to rebuild their delta channels: for every channel listed in a kept
/// checkpoint's `counters_since_delta_snapshot` that it does not store a value for,
/// every ancestor up to and including the nearest one that does. A kept checkpoint
/// whose rows cannot be read keeps its whole chain. `load` reads one checkpoint by id
/// (`None`: not stored); each id is loaded at most once.
pub(crate) fn needed_ancestors(
    keep: &std::collections::BTreeSet<String>,
    mut load: impl FnMut(&str) -> Option<ChainNode>,
) -> std::collections::BTreeSet<String> {
    let mut cache: std::collections::HashMap<String, Option<ChainNode>> =
        std::collections::HashMap::new();
    let mut get = |id: &str| -> Option<ChainNode> {
        if let Some(hit) = cache.get(id) {
            return hit.clone();
        }
        let node = load(id);
        cache.insert(id.to_owned(), node.clone());
        node
    };
    let mut needed = std::collections::BTreeSet::new();
    for id in keep {
        let Some(node) = get(id) else {
            continue;
        };
        // `None` = unknown: walk to the root.
        let mut remaining: Option<HashSet<String>> = match (&node.delta_channels, &node.stored) {
            (Some(channels), Some(stored)) => Some(
                channels
                    .iter()
                    .filter(|ch| !stored.contains(*ch))
                    .cloned()
                    .collect(),
            ),
            _ => None,
        };
        let mut visited: HashSet<String> = HashSet::from([id.clone()]);
        let mut cursor = node.parent;
        while let Some(parent_id) = cursor {
            if remaining.as_ref().is_some_and(HashSet::is_empty)
                || !visited.insert(parent_id.clone())
            {
                break;
            }
            let Some(parent) = get(&parent_id) else {
                break;
            };
            needed.insert(parent_id);
            if let (Some(rem), Some(stored)) = (remaining.as_mut(), &parent.stored) {
                rem.retain(|ch| !stored.contains(ch));
            }
            cursor = parent.parent;
        }
    }
    needed
}
