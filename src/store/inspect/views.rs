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
    /// unreadable marked.
    pub fn render(&self) -> String {
        let mut out = String::new();
        let by_id: BTreeMap<(&str, &str), &HistoryNode> = self
            .nodes
            .iter()
            .map(|n| ((n.checkpoint_ns.as_str(), n.checkpoint_id.as_str()), n))
            .collect();
        for root in self.nodes.iter().filter(|n| {
            n.parent_checkpoint_id
                .as_deref()
                .is_none_or(|p| !by_id.contains_key(&(n.checkpoint_ns.as_str(), p)))
        }) {
            // Iterative depth-first walk (no recursion on stored data).
            let mut stack = vec![(root, 0usize)];
            while let Some((node, depth)) = stack.pop() {
                let ns = if node.checkpoint_ns.is_empty() {
                    String::new()
                } else {
                    format!(" ns={:?}", node.checkpoint_ns)
                };
                out.push_str(&format!(
                    "{}{} step={} source={}{}{}{}\n",
                    "  ".repeat(depth.min(64)),
                    node.checkpoint_id,
                    node.step.map_or("?".to_owned(), |s| s.to_string()),
                    node.source.as_deref().unwrap_or("?"),
                    ns,
                    if node.children.len() > 1 {
                        format!(" (fork: {} branches)", node.children.len())
                    } else {
                        String::new()
                    },
                    node.unreadable
                        .as_deref()
                        .map(|why| format!(" UNREADABLE: {why}"))
                        .unwrap_or_default()
                ));
                let fork = node.children.len() > 1;
                for child in node.children.iter().rev() {
                    if let Some(c) = by_id.get(&(node.checkpoint_ns.as_str(), child.as_str())) {
                        stack.push((c, if fork { depth + 1 } else { depth }));
                    }
                }
            }
        }
        out
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
