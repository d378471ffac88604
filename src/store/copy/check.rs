//! The read-back of a [`copy`](super::copy)'s batch: each checkpoint the target holds
//! compared with its source, as the rows sent (SQLite columns, Postgres rows and blobs)
//! where this copy wrote them, else read back through the target saver and decoded.

use std::borrow::Cow;

use super::super::engine::Engine;
use super::super::error::StoreFault;
use super::super::inspect::decode_sqlite_row;
use super::super::raw::Result;
use super::super::target::Target;
use super::batch::{insert_blobs, Body, Pending, Spent};
use super::writer::{CopyWriter, Writer};
use super::CopyReport;
use crate::error::Error;
use crate::saver::postgres::SentRow;
use crate::saver::sqlite::{StoredRow, StoredWrite};
use crate::saver::CheckpointTuple;
use crate::serializer::Serializer;

/// A checkpoint read back from the target (`None` in the outer option: the read
/// itself did not finish).
pub(super) type ReadBack = std::result::Result<Option<CheckpointTuple>, Error>;

/// What the target saver's `put` wrote for a checkpoint of a batch: what its read-back
/// compares the stored rows with.
pub(super) enum Sent {
    Sqlite(StoredRow),
    Postgres(SentRow),
}

impl Pending {
    /// The whole checkpoint decoded, to compare with a read-back: a decoded one with
    /// its writes (as written, decoded by `serde`, the target's serializer) and the
    /// values it holds as blobs; a split row decoded now; `None` for a row carried as
    /// stored.
    pub(super) fn decoded(
        &self,
        serde: &dyn Serializer,
    ) -> Option<std::result::Result<Cow<'_, CheckpointTuple>, String>> {
        let (tuple, blobs) = match &self.body {
            Body::Decoded(t) if self.writes.is_empty() => return Some(Ok(Cow::Borrowed(&**t))),
            Body::Decoded(t) => (t, &[][..]),
            Body::Split { row: Some(row), .. } => return Some(self.decode_row(row)),
            Body::Split {
                tuple,
                blobs,
                row: None,
            } => (tuple, &blobs[..]),
            Body::Row(_) => return None,
        };
        let mut tuple = (**tuple).clone();
        // Blobs are clear pairs (`TupleParts::raw_blobs`).
        let clear = crate::serializer::JsonPlusSerializer::new();
        if let Err(e) = insert_blobs(&mut tuple, blobs.iter().cloned(), &clear) {
            return Some(Err(e.to_string()));
        }
        let mut writes: Vec<&StoredWrite> = self.writes.iter().collect();
        // The reader's order: Python's `writes_sort_key`, strings by code point.
        writes.sort_by(|a, b| {
            (&a.task_path, &a.task_id, a.idx).cmp(&(&b.task_path, &b.task_id, b.idx))
        });
        for w in writes {
            match serde.loads_typed(w.tag(), w.data()) {
                Ok(value) => tuple.pending_writes.push(crate::saver::PendingWrite {
                    task_id: w.task_id.clone(),
                    channel: w.channel.clone(),
                    value,
                }),
                Err(e) => {
                    return Some(Err(format!(
                        "write {}/{} does not decode: {e}",
                        w.task_id, w.idx
                    )))
                }
            }
        }
        Some(Ok(Cow::Owned(tuple)))
    }

    /// A split SQLite row decoded whole, with its writes (clear: a row is split only
    /// for a clear target).
    fn decode_row(&self, row: &StoredRow) -> std::result::Result<Cow<'_, CheckpointTuple>, String> {
        let writes = self
            .writes
            .iter()
            .map(|w| (w.task_id.as_str(), w.channel.as_str(), w.tag(), w.data()));
        let clear = crate::serializer::JsonPlusSerializer::new();
        decode_sqlite_row(
            &clear,
            (&self.thread, &self.ns, &self.id),
            row.parent.as_deref(),
            (
                row.type_tag.as_deref().unwrap_or_default(),
                row.checkpoint.as_deref().unwrap_or_default(),
                row.metadata.as_deref(),
            ),
            writes,
        )
        .map(Cow::Owned)
        .map_err(|e| format!("the source row does not decode: {e}"))
    }
}

/// Every checkpoint of `batch` read back and compared with its source: `None` where
/// they agree, else why not. A checkpoint this batch put (`sent`) or carried is
/// compared with the rows sent for it, as stored ([`CopyWriter::held`], then
/// [`CopyWriter::finish_check`]). Any other (there before), and one the target holds
/// otherwise than sent, is read back through the saver and decoded, a window at a
/// time (on Postgres the whole batch in one statement; the SQLite saver decodes a few
/// at once on its blocking pool). Measured 2026-11-29, 100,000 checkpoints Postgres →
/// SQLite: reading each back through `get_tuple` and decoding it was a quarter of the
/// copy's CPU.
pub(super) async fn check(
    writer: &dyn CopyWriter,
    batch: &[Pending],
    sent: &[Option<Sent>],
    whole: bool,
) -> Result<Vec<Option<String>>> {
    let mut out: Vec<Option<String>> = batch.iter().map(|_| None).collect();
    let held = writer.held(batch, sent, whole).await?;
    let mut decoded: Vec<(usize, Cow<'_, CheckpointTuple>)> = Vec::new();
    for (i, p) in batch.iter().enumerate() {
        if held.get(i).copied().unwrap_or(false) {
            continue;
        }
        match p.decoded(&**writer.serializer()) {
            Some(Ok(t)) => decoded.push((i, t)),
            Some(Err(why)) => {
                if let Some(slot) = out.get_mut(i) {
                    *slot = Some(why);
                }
            }
            None => {}
        }
    }
    for window in decoded.chunks(writer.verify_window()) {
        let items: Vec<&Pending> = window.iter().filter_map(|(i, _)| batch.get(*i)).collect();
        let back = writer.read_back(&items).await?;
        for ((i, tuple), read) in window.iter().zip(back) {
            if let Some(slot) = out.get_mut(*i) {
                *slot = match read {
                    Some(Ok(Some(b))) => difference(tuple, &b),
                    Some(Ok(None)) => Some("not in the target".to_owned()),
                    Some(Err(e)) => Some(format!("does not read back: {e}")),
                    None => Some("does not read back: the read failed".to_owned()),
                };
            }
        }
    }
    writer.finish_check(batch, sent, whole, &mut out).await?;
    Ok(out)
}

/// The read-back of a written batch, a task of its own: it runs while the next batch
/// is written (and, on a runtime with more than one thread, on another core than the
/// one reading the source and encoding the next batch). It gives back the batch and,
/// per checkpoint, `None` (verified) or why it is not.
///
/// Measured 2026-11-28 (100,000 checkpoints SQLite → Postgres, `log_min_duration_statement
/// = 0` on the target): reading each batch back took the server 5.7 s of a 21.4 s copy,
/// and decoding it this process's CPU besides, all of it in the chain of each batch
/// before the next could be written.
pub(super) struct Verifying(pub(super) tokio::task::JoinHandle<Checked>);

pub(super) type Checked = (
    Vec<Pending>,
    Vec<Option<Sent>>,
    bool,
    Result<Vec<Option<String>>>,
);

/// Waits for the read-back of `verifying` (if any) and counts it: verified checkpoints,
/// mismatches, progress. A read-back that lost its connection is done again once the
/// target is reopened.
pub(super) async fn settle(
    verifying: Option<Verifying>,
    target: &mut Target,
    writer: &Writer,
    (report, engine): (&mut CopyReport, &mut Engine),
    spent: &Spent,
) -> Result<()> {
    let Some(Verifying(task)) = verifying else {
        return Ok(());
    };
    let (items, sent, whole, mut checked) = task
        .await
        .map_err(|e| StoreFault::task("the read-back of a batch", e))?;
    let outcomes = loop {
        match checked {
            Ok(v) => break engine.ok(v),
            Err(e) => {
                engine.recover(&**target, e).await?;
                checked = check(&**writer, &items, &sent, whole).await;
            }
        }
    };
    for (p, outcome) in items.iter().zip(outcomes) {
        match outcome {
            None => report.verified += 1,
            Some(why) => report.mismatches.push(format!("{}: {why}", p.at())),
        }
        engine.advance("checkpoints", 1, 0, None);
    }
    spent.put(items);
    Ok(())
}

/// Why two tuples differ, or `None`.
///
/// One difference is the backends' own: Postgres keeps channel values as blobs keyed by
/// (channel, version), so a checkpoint whose DeltaChannel version did not change
/// reads back the `_DeltaSnapshot` blob an earlier checkpoint stored at that version
/// (Python's Postgres saver does the same), where the SQLite row of that checkpoint
/// has no value for the channel. Such a snapshot, at the same version on both sides,
/// is not a difference.
pub(super) fn difference(a: &CheckpointTuple, b: &CheckpointTuple) -> Option<String> {
    let same_version_snapshot =
        |from: &crate::saver::Checkpoint, other: &crate::saver::Checkpoint, ch: &String| {
            matches!(
                from.channel_values.get(ch),
                Some(crate::Value::DeltaSnapshot(_))
            ) && !other.channel_values.contains_key(ch)
                && from.channel_versions.get(ch).is_some()
                && from.channel_versions.get(ch) == other.channel_versions.get(ch)
        };
    // A channel with a value and no version (LangGraph 0.1 and LangGraphJS write an
    // empty `messages` or `__pregel_tasks` so) is stored by Postgres's layout only under
    // a version: the target has no value there. When the value is empty (an empty list
    // or map, or null; LangGraphJS 0.x's `__pregel_tasks` is its Topic's empty
    // `[seen, values]` pair, `[[], []]`, which its own Postgres saver does not keep
    // either: `vectors/stores/postgres-js-0.1.3/reads.json`), a graph restores that
    // channel empty either way.
    let unversioned_empty =
        |from: &crate::saver::Checkpoint, other: &crate::saver::Checkpoint, ch: &String| {
            let empty_list =
                |v: &crate::Value| matches!(v, crate::Value::Array(items) if items.is_empty());
            let empty = match from.channel_values.get(ch) {
                Some(crate::Value::Array(v)) => {
                    v.is_empty() || (v.len() == 2 && v.iter().all(empty_list))
                }
                Some(crate::Value::Map(m)) => m.is_empty(),
                Some(crate::Value::Nil) => true,
                _ => false,
            };
            empty
                && !other.channel_values.contains_key(ch)
                && !from.channel_versions.contains_key(ch)
                && !other.channel_versions.contains_key(ch)
        };
    let strip = |from: &crate::saver::Checkpoint, other: &crate::saver::Checkpoint| {
        let mut c = from.clone();
        c.channel_values.retain(|ch, _| {
            !same_version_snapshot(from, other, ch) && !unversioned_empty(from, other, ch)
        });
        c
    };
    if strip(&a.checkpoint, &b.checkpoint) != strip(&b.checkpoint, &a.checkpoint) {
        return Some("checkpoint differs".to_owned());
    }
    // Python reads metadata as plain JSON on both backends (the SQLite saver's
    // `json.loads`, Postgres's JSONB), so metadata is the same when its JSON is: an `lc`
    // envelope the SQLite text revives into a message reads as the same dict there.
    if a.metadata != b.metadata {
        let json = |t: &CheckpointTuple| crate::view::to_json(&t.metadata.to_value()).ok();
        if json(a).is_none() || json(a) != json(b) {
            return Some("metadata differs".to_owned());
        }
    }
    let parent = |t: &CheckpointTuple| {
        t.parent_config
            .as_ref()
            .and_then(|p| p.checkpoint_id.clone())
    };
    if parent(a) != parent(b) {
        return Some(format!("parent {:?} != {:?}", parent(a), parent(b)));
    }
    if a.pending_writes != b.pending_writes {
        return Some(format!(
            "pending writes differ ({} in the source, {} in the target)",
            a.pending_writes.len(),
            b.pending_writes.len()
        ));
    }
    None
}
