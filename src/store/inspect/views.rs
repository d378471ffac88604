//! What inspect shows of a store, as values: a thread's summary, its history as a
//! tree, the changes between two checkpoints, and a checkpoint tuple as the JSON view.
//! Read by [`AnyStore`](super::AnyStore); built here from what it read.

use std::collections::BTreeMap;

use serde::Serialize;
use serde_json::{json, Value as Json};

use crate::saver::{Checkpoint, CheckpointTuple};
use crate::value::Value;

/// One thread: [`AnyStore::threads`](super::AnyStore::threads).
#[derive(Clone, Debug, Serialize, PartialEq, Eq)]
#[non_exhaustive]
pub struct ThreadSummary {
    /// Thread id.
    pub thread_id: String,
    /// Checkpoints (every namespace).
    pub checkpoints: u64,
    /// Namespaces.
    pub namespaces: u64,
    /// Pending writes.
    pub writes: u64,
    /// The latest checkpoint of the root namespace (or of any, if it has none).
    pub latest_checkpoint_id: String,
    /// Its `ts`: on Postgres as the row's JSONB holds it (in clear, with or without
    /// encryption); on SQLite decoded, `None` if it cannot be (e.g. without its key).
    pub latest_ts: Option<String>,
    /// Its metadata `step`.
    pub latest_step: Option<i64>,
    /// Stored bytes of its checkpoints, metadata, blobs and writes.
    pub bytes: u64,
}

/// A checkpoint in [`ThreadHistory`].
#[derive(Clone, Debug, Serialize, PartialEq, Eq)]
#[non_exhaustive]
pub struct HistoryNode {
    /// Namespace.
    pub checkpoint_ns: String,
    /// Checkpoint id.
    pub checkpoint_id: String,
    /// Parent id.
    pub parent_checkpoint_id: Option<String>,
    /// Metadata `step`.
    pub step: Option<i64>,
    /// Metadata `source`.
    pub source: Option<String>,
    /// Children ids (more than one: a fork).
    pub children: Vec<String>,
    /// Why the checkpoint does not decode, once the history was checked
    /// ([`AnyStore::check_history`](super::AnyStore::check_history)); `None` when it
    /// decodes or was not checked.
    pub unreadable: Option<String>,
}

/// A thread's checkpoints as a tree: [`AnyStore::history`](super::AnyStore::history).
#[derive(Clone, Debug, Serialize, PartialEq, Eq)]
#[non_exhaustive]
pub struct ThreadHistory {
    /// Thread id.
    pub thread_id: String,
    /// Every checkpoint, by namespace then id (oldest first).
    pub nodes: Vec<HistoryNode>,
    /// Ids with more than one child.
    pub forks: Vec<String>,
}

impl ThreadHistory {
    /// The tree as indented text, one checkpoint a line; forks and checkpoints found
    /// unreadable marked. [`tree`](Self::tree) writes the same without building it.
    pub fn render(&self) -> String {
        self.tree().to_string()
    }

    /// The tree [`render`](Self::render) gives, written as it is walked (to standard
    /// output, a file, a `String`): a thread of 100,000 checkpoints was built as one
    /// 8 MiB string first.
    ///
    /// ```
    /// # use langgraph_codec::store::ThreadHistory;
    /// fn print(history: &ThreadHistory) {
    ///     print!("{}", history.tree());
    /// }
    /// ```
    pub fn tree(&self) -> impl std::fmt::Display + '_ {
        Tree(self)
    }
}

/// [`ThreadHistory::tree`].
struct Tree<'a>(&'a ThreadHistory);

/// Nodes found by (namespace, id): their indices sorted by it, looked up by binary
/// search (8 bytes a node, where a hashed map took 40).
pub(super) struct ByKey<'a> {
    nodes: &'a [HistoryNode],
    order: Vec<usize>,
}

impl<'a> ByKey<'a> {
    pub(super) fn new(nodes: &'a [HistoryNode]) -> Self {
        let mut order: Vec<usize> = (0..nodes.len()).collect();
        // Read in key order (SQLite's, and Postgres's under a bytewise collation)
        // they need no sort; a sort's comparisons touch two nodes anywhere in memory.
        if !nodes.is_sorted_by(|a, b| node_key(a) <= node_key(b)) {
            order.sort_unstable_by(|a, b| {
                nodes
                    .get(*a)
                    .map(node_key)
                    .cmp(&nodes.get(*b).map(node_key))
            });
        }
        ByKey { nodes, order }
    }

    /// The index of the node `(ns, id)`.
    pub(super) fn find(&self, ns: &str, id: &str) -> Option<usize> {
        let at = self
            .order
            .binary_search_by(|i| self.nodes.get(*i).map(node_key).cmp(&Some((ns, id))))
            .ok()?;
        self.order.get(at).copied()
    }
}

fn node_key(n: &HistoryNode) -> (&str, &str) {
    (&n.checkpoint_ns, &n.checkpoint_id)
}

impl std::fmt::Display for Tree<'_> {
    fn fmt(&self, out: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let nodes = &self.0.nodes;
        // (A map of the nodes by key took 4 MiB for a thread of 100,000.)
        let by_key = ByKey::new(nodes);
        let find = |ns: &str, id: &str| by_key.find(ns, id).and_then(|i| nodes.get(i));
        for root in nodes.iter().filter(|n| {
            n.parent_checkpoint_id
                .as_deref()
                .is_none_or(|p| find(&n.checkpoint_ns, p).is_none())
        }) {
            // Iterative depth-first walk (no recursion on stored data).
            let mut stack = vec![(root, 0usize)];
            while let Some((node, depth)) = stack.pop() {
                for _ in 0..depth.min(64) {
                    out.write_str("  ")?;
                }
                write!(out, "{} step=", node.checkpoint_id)?;
                match node.step {
                    Some(step) => write!(out, "{step}")?,
                    None => out.write_str("?")?,
                }
                write!(out, " source={}", node.source.as_deref().unwrap_or("?"))?;
                if !node.checkpoint_ns.is_empty() {
                    write!(out, " ns={:?}", node.checkpoint_ns)?;
                }
                let fork = node.children.len() > 1;
                if fork {
                    write!(out, " (fork: {} branches)", node.children.len())?;
                }
                if let Some(why) = node.unreadable.as_deref() {
                    write!(out, " UNREADABLE: {why}")?;
                }
                out.write_str("\n")?;
                for child in node.children.iter().rev() {
                    if let Some(c) = find(&node.checkpoint_ns, child) {
                        stack.push((c, if fork { depth + 1 } else { depth }));
                    }
                }
            }
        }
        Ok(())
    }
}

/// What changed between two checkpoints: [`AnyStore::diff`](super::AnyStore::diff).
#[derive(Clone, Debug, Serialize, PartialEq)]
#[non_exhaustive]
pub struct CheckpointDiff {
    /// The first checkpoint.
    pub from: String,
    /// The second.
    pub to: String,
    /// Channels present in both whose value or version differ.
    pub changed: Vec<String>,
    /// Channels only in the second.
    pub added: Vec<String>,
    /// Channels only in the first.
    pub removed: Vec<String>,
    /// Per list channel that grew by appending (e.g. `messages`): the items appended,
    /// as the JSON view.
    pub appended: BTreeMap<String, Vec<Json>>,
}

fn view(value: &Value) -> Json {
    crate::view::to_json(value).unwrap_or_else(|e| json!({"$unviewable": e.to_string()}))
}

/// The JSON document `inspect --checkpoint` prints for a tuple.
pub fn tuple_json(t: &CheckpointTuple) -> Json {
    json!({
        "thread_id": t.config.thread_id,
        "checkpoint_ns": t.config.ns(),
        "checkpoint_id": t.checkpoint.id,
        "parent_checkpoint_id": t.parent_config.as_ref().and_then(|p| p.checkpoint_id.clone()),
        "checkpoint": view(&t.checkpoint.to_value()),
        "metadata": view(&t.metadata.to_value()),
        "pending_writes": t.pending_writes.iter().map(|w| json!({
            "task_id": w.task_id, "channel": w.channel, "value": view(&w.value)
        })).collect::<Vec<_>>(),
    })
}

/// Channels changed, added, removed, and items appended to list channels.
pub fn diff_checkpoints(a: &Checkpoint, b: &Checkpoint) -> CheckpointDiff {
    let mut d = CheckpointDiff {
        from: a.id.clone(),
        to: b.id.clone(),
        changed: Vec::new(),
        added: Vec::new(),
        removed: Vec::new(),
        appended: BTreeMap::new(),
    };
    let mut names: Vec<&String> = a
        .channel_versions
        .keys()
        .chain(a.channel_values.keys())
        .chain(b.channel_versions.keys())
        .chain(b.channel_values.keys())
        .collect();
    names.sort();
    names.dedup();
    for name in names {
        let in_a = a.channel_versions.contains_key(name) || a.channel_values.contains_key(name);
        let in_b = b.channel_versions.contains_key(name) || b.channel_values.contains_key(name);
        match (in_a, in_b) {
            (false, true) => d.added.push(name.clone()),
            (true, false) => d.removed.push(name.clone()),
            _ => {
                let (va, vb) = (a.channel_values.get(name), b.channel_values.get(name));
                if va != vb || a.channel_versions.get(name) != b.channel_versions.get(name) {
                    d.changed.push(name.clone());
                }
            }
        }
        let (old, new) = (
            a.channel_values.get(name).and_then(as_list),
            b.channel_values.get(name).and_then(as_list),
        );
        if let Some(new) = new {
            let old = old.unwrap_or(&[]);
            if new.len() > old.len() && new.starts_with(old) {
                d.appended
                    .insert(name.clone(), new.iter().skip(old.len()).map(view).collect());
            }
        }
    }
    d
}

fn as_list(v: &Value) -> Option<&[Value]> {
    match v {
        Value::Array(items) => Some(items),
        Value::DeltaSnapshot(inner) => as_list(inner),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::{ByKey, HistoryNode, ThreadHistory};

    fn node(ns: &str, id: &str, parent: Option<&str>, children: &[&str]) -> HistoryNode {
        HistoryNode {
            checkpoint_ns: ns.to_owned(),
            checkpoint_id: id.to_owned(),
            parent_checkpoint_id: parent.map(str::to_owned),
            step: None,
            source: None,
            children: children.iter().map(|c| (*c).to_owned()).collect(),
            unreadable: None,
        }
    }

    /// Nodes in an order that is not bytewise (a Postgres collation's) are found by
    /// key, and drawn as the same tree as in key order.
    #[test]
    fn nodes_in_any_order_are_found_and_drawn_alike() {
        let sorted = vec![
            node("", "a", None, &["b"]),
            node("", "b", Some("a"), &["c", "d"]),
            node("", "c", Some("b"), &[]),
            node("", "d", Some("b"), &[]),
            node("sub", "a", None, &[]),
        ];
        let mut shuffled = sorted.clone();
        shuffled.swap(0, 3);
        shuffled.swap(1, 4);
        let by_key = ByKey::new(&shuffled);
        for n in &sorted {
            let at = by_key
                .find(&n.checkpoint_ns, &n.checkpoint_id)
                .expect("found");
            assert_eq!(shuffled.get(at), Some(n));
        }
        assert_eq!(by_key.find("", "e"), None);
        let tree = |nodes: Vec<HistoryNode>| {
            ThreadHistory {
                thread_id: "t".to_owned(),
                nodes,
                forks: vec!["b".to_owned()],
            }
            .render()
        };
        let expected = "a step=? source=?\nb step=? source=? (fork: 2 branches)\n  c step=? \
                        source=?\n  d step=? source=?\na step=? source=? ns=\"sub\"\n";
        assert_eq!(tree(sorted), expected);
        // Roots in the order read; each tree the same.
        let drawn = tree(shuffled);
        assert_eq!(drawn.lines().count(), 5, "{drawn}");
        assert!(
            drawn.contains(
                "b step=? source=? (fork: 2 branches)\n  c step=? source=?\n  d step=? source=?\n"
            ),
            "{drawn}"
        );
    }
}
