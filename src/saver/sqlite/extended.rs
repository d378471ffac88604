//! The extended operations of the SQLite saver: `delete_for_runs`, `copy_thread`,
//! `prune` and the delta-chain reads behind `get_delta_channel_history`, as the
//! Postgres saver keeps its own in `postgres/extended.rs`.
//!
//! The deleting operations never remove a checkpoint that a kept one needs to rebuild a
//! `DeltaChannel` (every ancestor up to the nearest one storing a value for each
//! channel of the kept checkpoint's `counters_since_delta_snapshot`).

use std::collections::BTreeSet;

use indexmap::IndexMap;
use rusqlite::{params, params_from_iter, Connection};

use super::conn::{Statements, CHECKPOINT_PAGES};
use super::rows::{
    bytes_col, collect_writes, CheckpointRow, WriteRow, WritesByCheckpoint, CHECKPOINT_COLUMNS,
    WRITE_ORDER, WRITE_SELECT,
};
use super::sql::{delete_thread_rows, ids_of, namespaces_of};
use super::{storage, Inner, SqliteSaver};
use crate::saver::delta::{finish, needed_ancestors, ChainNode};
use crate::saver::retention::Removal;
use crate::saver::traits::PruneStrategy;
use crate::saver::types::{DeltaChannelHistory, PendingWrite};
use crate::saver::Result;
use crate::value::Value;

impl Inner {
    /// What the delta-chain walk needs of one checkpoint of a namespace.
    fn chain_node(&self, tx: &Connection, thread: &str, ns: &str, id: &str) -> Option<ChainNode> {
        let row = tx
            .query_row(
                &format!(
                    "SELECT {CHECKPOINT_COLUMNS} FROM checkpoints \
                     WHERE thread_id = ? AND checkpoint_ns = ? AND checkpoint_id = ?"
                ),
                params![thread, ns, id],
                CheckpointRow::from_row,
            )
            .ok()?;
        Some(ChainNode {
            parent: row.parent.clone().filter(|p| !p.is_empty()),
            stored: self
                .decode_checkpoint(&row)
                .ok()
                .map(|cp| cp.channel_values.into_keys().collect()),
            delta_channels: self
                .decode_metadata(&row)
                .ok()
                .map(|md| md.counters_since_delta_snapshot().into_keys().collect()),
        })
    }

    /// Keeps `keep` and the ancestors they need for their delta channels; deletes the
    /// other checkpoints of the namespace among `candidates`, with their writes.
    fn delete_unneeded(
        &self,
        tx: &Connection,
        thread: &str,
        ns: &str,
        keep: &BTreeSet<String>,
        candidates: &BTreeSet<String>,
    ) -> Result<()> {
        let needed = needed_ancestors(keep, |id| self.chain_node(tx, thread, ns, id));
        let mut removal = Removal::default();
        for id in candidates {
            if !keep.contains(id) && !needed.contains(id) {
                removal.doomed.push(thread, ns, id);
            }
        }
        super::retention::remove(tx, &removal, false).map_err(storage("delete"))?;
        Ok(())
    }
}

/// Python's `DELTA_STAGE1_SQL`: the target, then its ancestors nearest first, by
/// following `parent_checkpoint_id` (`CROSS JOIN` keeps each step a primary-key lookup).
const DELTA_CHAIN_SQL: &str =
    "WITH RECURSIVE ancestors(checkpoint_id, parent_checkpoint_id, type, \
     checkpoint) AS (SELECT checkpoint_id, parent_checkpoint_id, type, checkpoint FROM checkpoints \
     WHERE thread_id = ?1 AND checkpoint_ns = ?2 AND checkpoint_id = ?3 UNION ALL \
     SELECT c.checkpoint_id, c.parent_checkpoint_id, c.type, c.checkpoint \
     FROM ancestors a CROSS JOIN checkpoints c ON c.checkpoint_id = a.parent_checkpoint_id \
     WHERE c.thread_id = ?1 AND c.checkpoint_ns = ?2) \
     SELECT checkpoint_id, type, checkpoint FROM ancestors";

impl Inner {
    pub(super) fn delta_history(
        &self,
        thread: &str,
        ns: &str,
        target: Option<String>,
        channels: &[String],
    ) -> Result<IndexMap<String, DeltaChannelHistory>> {
        let op = "get_delta_channel_history";
        // (checkpoint id, the channels still looking for their seed there), newest first.
        let (chain, mut writes, seeds) = self.conns.read(op, |tx| {
            let target = match target {
                Some(id) => id,
                None => match tx.query_row(
                    "SELECT checkpoint_id FROM checkpoints WHERE thread_id = ? AND checkpoint_ns = ? \
                     ORDER BY checkpoint_id DESC LIMIT 1",
                    params![thread, ns],
                    |r| r.get::<_, String>(0),
                ) {
                    Ok(id) => id,
                    Err(rusqlite::Error::QueryReturnedNoRows) => {
                        return Ok((Vec::new(), WritesByCheckpoint::new(), IndexMap::new()))
                    }
                    Err(e) => return Err(storage(op)(e)),
                },
            };
            let mut remaining: Vec<String> = channels.to_vec();
            let mut seeds: IndexMap<String, Value> = IndexMap::new();
            let mut chain: Vec<(String, Vec<String>)> = Vec::new();
            let mut visited: std::collections::HashSet<String> = std::collections::HashSet::new();
            let mut stmt = tx.prepare_cached(DELTA_CHAIN_SQL).map_err(storage(op))?;
            let mut rows = stmt.query(params![thread, ns, target]).map_err(storage(op))?;
            while let Some(r) = rows.next().map_err(storage(op))? {
                let id: String = r.get(0).map_err(storage(op))?;
                if !visited.insert(id.clone()) {
                    break; // a parent cycle: only corrupt storage has one
                }
                if id == target {
                    continue; // the target's own writes and value are not its history
                }
                if remaining.is_empty() {
                    break;
                }
                let row = CheckpointRow {
                    thread_id: thread.to_owned(),
                    checkpoint_ns: ns.to_owned(),
                    checkpoint_id: id.clone(),
                    parent: None,
                    type_tag: r.get(1).map_err(storage(op))?,
                    checkpoint: bytes_col(r, 2).map_err(storage(op))?,
                    metadata: None,
                };
                let mut cp = self.decode_checkpoint(&row)?;
                chain.push((id, remaining.clone()));
                remaining.retain(|ch| match cp.channel_values.swap_remove(ch) {
                    Some(value) => {
                        seeds.insert(ch.clone(), value);
                        false
                    }
                    None => true,
                });
            }
            drop(rows);
            let mut writes = WritesByCheckpoint::new();
            // One query per 500 ids keeps under SQLite's parameter limit.
            for part in chain.chunks(500) {
                let marks = vec!["?"; part.len()].join(", ");
                let sql = format!(
                    "{WRITE_SELECT} WHERE w.thread_id = ? AND w.checkpoint_ns = ? \
                     AND w.checkpoint_id IN ({marks}) {WRITE_ORDER}"
                );
                let mut stmt = tx.prepare(&sql).map_err(storage(op))?;
                let params = [thread, ns]
                    .into_iter()
                    .chain(part.iter().map(|(id, _)| id.as_str()));
                let found = stmt
                    .query(params_from_iter(params))
                    .map_err(storage(op))
                    .and_then(|rows| collect_writes(rows).map_err(storage(op)))?;
                writes.extend(found);
            }
            Ok((chain, writes, seeds))
        })?;
        // Newest first, each checkpoint's writes newest first; `finish` turns them around.
        let mut collected: IndexMap<String, Vec<PendingWrite>> =
            channels.iter().map(|c| (c.clone(), Vec::new())).collect();
        for (id, active) in &chain {
            let key = (thread.to_owned(), ns.to_owned(), id.clone());
            let Some(rows) = writes.remove(&key) else {
                continue;
            };
            let relevant: Vec<WriteRow> = rows
                .into_iter()
                .filter(|w| active.contains(&w.channel))
                .collect();
            let row = CheckpointRow {
                thread_id: thread.to_owned(),
                checkpoint_ns: ns.to_owned(),
                checkpoint_id: id.clone(),
                parent: None,
                type_tag: None,
                checkpoint: None,
                metadata: None,
            };
            for w in self.decode_writes(&row, &relevant)?.into_iter().rev() {
                if let Some(list) = collected.get_mut(&w.channel) {
                    list.push(w);
                }
            }
        }
        Ok(finish(collected, seeds))
    }
}

impl SqliteSaver {
    /// Deletes the checkpoints whose metadata `run_id` is in `run_ids`, with their
    /// writes, in one transaction; a checkpoint that a remaining one still needs to
    /// rebuild a delta channel is kept. Rows whose metadata cannot be read, and rows
    /// whose ids are not UTF-8 text, are never matched (and so stay).
    pub(super) async fn delete_for_runs_rows(&self, run_ids: &[String]) -> Result<()> {
        if run_ids.is_empty() {
            return Ok(());
        }
        let run_ids = run_ids.to_vec();
        self.run(move |inner| {
            inner.conns.write(
                "delete_for_runs",
                CHECKPOINT_PAGES,
                Statements::Many,
                |tx| {
                    // Metadata is read here, not with json_extract, so rows SQLite's JSON
                    // parser refuses still count.
                    let mut doomed: IndexMap<(String, String), BTreeSet<String>> = IndexMap::new();
                    {
                        let mut stmt = tx
                            .prepare_cached(&format!(
                                "SELECT {CHECKPOINT_COLUMNS} FROM checkpoints"
                            ))
                            .map_err(storage("delete_for_runs"))?;
                        let mut rows = stmt.query([]).map_err(storage("delete_for_runs"))?;
                        while let Some(r) = rows.next().map_err(storage("delete_for_runs"))? {
                            // A row whose key or columns do not read (a thread id that is
                            // not UTF-8 text, planted through another driver) cannot be
                            // addressed by its ids: it is skipped, never matched, so one
                            // bad row does not block the operation for every caller.
                            let Ok(row) = CheckpointRow::from_row(r) else {
                                continue;
                            };
                            let matched = inner
                                .decode_metadata(&row)
                                .ok()
                                .and_then(|m| m.run_id().map(|r| run_ids.iter().any(|x| x == r)))
                                .unwrap_or(false);
                            if matched {
                                doomed
                                    .entry((row.thread_id, row.checkpoint_ns))
                                    .or_default()
                                    .insert(row.checkpoint_id);
                            }
                        }
                    }
                    for ((thread, ns), ids) in &doomed {
                        let all = ids_of(tx, thread, ns)?;
                        let survivors: BTreeSet<String> = all.difference(ids).cloned().collect();
                        inner.delete_unneeded(tx, thread, ns, &survivors, ids)?;
                    }
                    Ok(())
                },
            )
        })
        .await
    }

    /// Copies every checkpoint and write of one thread to another (replacing rows with
    /// the same key), in one transaction. A missing source copies nothing.
    pub(super) async fn copy_thread_rows(
        &self,
        source_thread_id: &str,
        target_thread_id: &str,
    ) -> Result<()> {
        if source_thread_id == target_thread_id {
            return Ok(());
        }
        let (src, dst) = (source_thread_id.to_owned(), target_thread_id.to_owned());
        self.run(move |inner| {
            inner.conns.write("copy_thread", CHECKPOINT_PAGES, Statements::Many, |tx| {
                tx.execute(
                    "INSERT OR REPLACE INTO checkpoints (thread_id, checkpoint_ns, checkpoint_id, \
                     parent_checkpoint_id, type, checkpoint, metadata) \
                     SELECT ?2, checkpoint_ns, checkpoint_id, parent_checkpoint_id, type, checkpoint, \
                     metadata FROM checkpoints WHERE thread_id = ?1",
                    params![src, dst],
                )
                .map_err(storage("copy_thread"))?;
                tx.execute(
                    "INSERT OR REPLACE INTO writes (thread_id, checkpoint_ns, checkpoint_id, task_id, \
                     task_path, idx, channel, type, value) \
                     SELECT ?2, checkpoint_ns, checkpoint_id, task_id, task_path, idx, channel, type, \
                     value FROM writes WHERE thread_id = ?1",
                    params![src, dst],
                )
                .map_err(storage("copy_thread"))?;
                Ok(())
            })
        })
        .await
    }

    /// `KeepLatest` keeps the latest checkpoint of every namespace and the ancestors it
    /// needs to rebuild its delta channels, with their writes; `Delete` deletes the
    /// threads. One transaction for all threads.
    pub(super) async fn prune_rows(
        &self,
        thread_ids: &[String],
        strategy: PruneStrategy,
    ) -> Result<()> {
        let threads = thread_ids.to_vec();
        self.run(move |inner| {
            inner.conns.write("prune", CHECKPOINT_PAGES, Statements::Many, |tx| {
                for thread in &threads {
                    match strategy {
                        PruneStrategy::Delete => delete_thread_rows(tx, thread)?,
                        PruneStrategy::KeepLatest => {
                            for ns in namespaces_of(tx, thread)? {
                                let all = ids_of(tx, thread, &ns)?;
                                let Some(latest) = all.last().cloned() else {
                                    continue;
                                };
                                inner.delete_unneeded(tx, thread, &ns, &BTreeSet::from([latest]), &all)?;
                                // Writes of checkpoints that are not stored go too.
                                tx.execute(
                                    "DELETE FROM writes WHERE thread_id = ?1 AND checkpoint_ns = ?2 \
                                     AND checkpoint_id NOT IN (SELECT checkpoint_id FROM checkpoints \
                                     WHERE thread_id = ?1 AND checkpoint_ns = ?2)",
                                    params![thread, ns],
                                )
                                .map_err(storage("prune"))?;
                            }
                        }
                    }
                }
                Ok(())
            })
        })
        .await
    }
}
