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

//!
//! The walk itself over any saver's `get_tuple` is
//! [`default_delta_channel_history`](super::default_delta_channel_history), beside the
//! trait whose default it is; this module keeps what the savers' own walks share.

use std::borrow::Borrow;
use std::collections::HashSet;

use indexmap::IndexMap;

use super::types::{DeltaChannelHistory, PendingWrite};
use crate::value::Value;

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
pub(crate) fn needed_ancestors<K: Borrow<str> + Ord>(
    keep: &std::collections::BTreeSet<K>,
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
        let id: &str = id.borrow();
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
        let mut visited: HashSet<String> = HashSet::from([id.to_owned()]);
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
