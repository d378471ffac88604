//! The read-back of a [`copy`](super::copy)'s batch: each checkpoint the target holds
//! compared with its source, as the rows sent (SQLite columns, Postgres rows and blobs)
//! where this copy wrote them, else read back through the target saver and decoded.

use std::borrow::Cow;
use std::sync::Arc;

use super::super::error::StoreFault;
use super::super::inspect::decode_sqlite_row;
use super::super::options::{Progress, Stage};
use super::super::raw::{cell_bytes, sq, Result};
use super::super::retry::Retry;
use super::super::target::Target;
use super::batch::{insert_blobs, Body, Pending, Writer};
use super::ranges::{by_ranges, stored_write, writes_by_range, CHECKPOINTS_BY_RANGE};
use super::{CopyOptions, CopyReport};
use crate::error::Error;
use crate::saver::postgres::{PostgresSaver, SentRow, SentWrite, TupleParts};
use crate::saver::sqlite::{SqliteSaver, StoredRow, StoredWrite};
use crate::saver::{CheckpointConfig, CheckpointSaver, CheckpointTuple};
use crate::serializer::Serializer;

/// Checkpoints the SQLite saver reads back at the same time when a batch is verified.
const VERIFY_IN_FLIGHT: usize = 4;

/// A checkpoint read back from the target (`None` in the outer option: the read
/// itself did not finish).
pub(super) type ReadBack = std::result::Result<Option<CheckpointTuple>, Error>;

/// Runs `f`, blocking work, on this thread, telling a multi-thread Tokio runtime to
/// move its other tasks to another worker meanwhile (`block_in_place`; a
/// current-thread runtime runs it as it is). Measured 2026-11-29, 100,000 checkpoints
/// Postgres → SQLite: a read-back blocking one of two workers left the source
/// connection's task waiting behind the copy's own (19.4 s against 17.0 s).
fn off_the_runtime<T>(f: impl FnOnce() -> T) -> T {
    use tokio::runtime::{Handle, RuntimeFlavor};
    match Handle::try_current().map(|h| h.runtime_flavor()) {
        Ok(RuntimeFlavor::MultiThread) => tokio::task::block_in_place(f),
        _ => f(),
    }
}

/// What the target saver's `put` wrote for a checkpoint of a batch: what its read-back
/// compares the stored rows with.
pub(super) enum Sent {
    Sqlite(StoredRow),
    Postgres(SentRow),
}

/// A row sent to a SQLite target (carried, or written by `put`) compared with what the
/// target stores under its key (`stored`: the row and its write rows, `None` when it
/// is not there): the same columns and the same write rows, byte for byte, is
/// verified. Otherwise (a row another release wrote there, or one changed since) the
/// stored one is decoded as `get_tuple` decodes it and compared, as a decoded
/// checkpoint is, with the source (a decoded one's, else the row sent, decoded).
fn check_carried(
    saver: &SqliteSaver,
    p: &Pending,
    sent: &StoredRow,
    stored: Option<(StoredRow, Vec<StoredWrite>)>,
) -> Option<String> {
    let key = (p.thread.as_str(), p.ns.as_str(), p.id.as_str());
    let Some((row, writes)) = stored else {
        return Some("not in the target".to_owned());
    };
    if row == *sent && writes == p.writes {
        return None;
    }
    let source = match p.decoded(&**saver.serializer()) {
        Some(Ok(t)) => t,
        Some(Err(why)) => return Some(why),
        None => match saver.decode_stored(key, sent.clone(), p.writes.clone()) {
            Ok(t) => Cow::Owned(t),
            Err(e) => return Some(format!("the source row does not decode: {e}")),
        },
    };
    match saver.decode_stored(key, row, writes) {
        Ok(back) => difference(&source, &back),
        Err(e) => Some(format!("does not read back: {e}")),
    }
}

/// The SQLite part of [`Writer::check`]: the rows sent (carried, or written by
/// `put`) compared with the file's, and the WAL checkpointed.
fn check_stored(
    saver: &SqliteSaver,
    conn: &std::sync::Mutex<rusqlite::Connection>,
    batch: &[Pending],
    sent: &[Option<Sent>],
    out: &mut [Option<String>],
) -> Result<()> {
    let conn = conn
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    let mut checked: Vec<(usize, (&str, &str, &str), &StoredRow)> = batch
        .iter()
        .zip(sent)
        .enumerate()
        .filter_map(|(i, (p, s))| match (&p.body, s) {
            (Body::Row(row), _)
            | (Body::Decoded(_) | Body::Split { .. }, Some(Sent::Sqlite(row))) => {
                Some((i, (p.thread.as_str(), p.ns.as_str(), p.id.as_str()), row))
            }
            _ => None,
        })
        .collect();
    if !checked.is_empty() {
        // In the file's order, whatever order the source gave them in.
        checked.sort_by_key(|(_, key, _)| *key);
        // One read transaction for the batch (a statement outside one takes and
        // drops the file's read lock each time: 38% of a copy's samples).
        let snapshot = conn.unchecked_transaction().map_err(sq("copy"))?;
        // A thread at a time: only its rows are held.
        for run in checked.chunk_by(|a, b| a.1 .0 == b.1 .0) {
            let keys: Vec<(&str, &str, &str)> = run.iter().map(|(_, key, _)| *key).collect();
            let stored = stored_rows(&snapshot, &keys).map_err(sq("copy"))?;
            for ((i, _, row), stored) in run.iter().zip(stored) {
                if let (Some(p), Some(slot)) = (batch.get(*i), out.get_mut(*i)) {
                    *slot = check_carried(saver, p, row, stored);
                }
            }
        }
    }
    // The WAL is copied into the file here, beside the writer, instead of by the
    // writer's commits (`wal_autocheckpoint` is off on the copy's connection): 10% of
    // a copy's samples were the writer checkpointing. Passive: it waits for no one,
    // and a frame a reader still needs stays.
    conn.query_row("PRAGMA wal_checkpoint(PASSIVE)", [], |_| Ok(()))
        .map_err(sq("copy"))?;
    Ok(())
}

/// Which checkpoints of `batch` the Postgres target holds exactly as sent (`sent`,
/// with their writes), by position: the measured way to verify a batch put by this
/// copy (2026-11-29, 100,000 checkpoints SQLite → Postgres: the read-back through the
/// saver, rows aggregated into JSON by the server and decoded here, took the server
/// 6.0 s of a 16.3 s copy; the rows themselves read in 1.5 s). A lost connection is
/// the error (the batch is checked again); any other failure of the comparison
/// leaves every checkpoint to the read-back through the saver.
async fn held_as_sent(
    saver: &PostgresSaver,
    batch: &[Pending],
    sent: &[Option<Sent>],
) -> Result<Vec<bool>> {
    let mut held = vec![false; batch.len()];
    let (positions, rows): (Vec<usize>, Vec<&SentRow>) = sent
        .iter()
        .enumerate()
        .filter_map(|(i, s)| match s {
            Some(Sent::Postgres(s)) => Some((i, s)),
            _ => None,
        })
        .unzip();
    if positions.is_empty() {
        return Ok(held);
    }
    let items: Vec<&Pending> = positions.iter().filter_map(|i| batch.get(*i)).collect();
    let keys: Vec<(&str, &str, &str)> = items
        .iter()
        .map(|p| (p.thread.as_str(), p.ns.as_str(), p.id.as_str()))
        .collect();
    let writes: Vec<Vec<SentWrite<'_>>> = items
        .iter()
        .map(|p| {
            p.writes
                .iter()
                .map(|w| {
                    let w: SentWrite<'_> = (
                        w.task_id.as_str(),
                        w.task_path.as_str(),
                        w.idx,
                        w.channel.as_str(),
                        w.tag(),
                        w.data(),
                    );
                    w
                })
                .collect()
        })
        .collect();
    match saver.holds_sent(&keys, &rows, &writes).await {
        Ok(found) => {
            for (i, ok) in positions.into_iter().zip(found) {
                if let Some(slot) = held.get_mut(i) {
                    *slot = ok;
                }
            }
        }
        Err(e) if e.is_connection_lost() => return Err(e),
        Err(_) => {}
    }
    Ok(held)
}

/// The stored row of each of `keys` and its write rows (in `get_tuple`'s order), from a
/// SQLite target, by position; `None` where the checkpoint is not there.
///
/// `keys` are in the file's (bytewise) order; each thread's run is read with a range
/// from the lowest of its keys to the highest: a lookup per checkpoint and one per
/// checkpoint's writes took 19% of a 100,000-checkpoint copy's samples out of Postgres
/// (2026-11-29).
#[allow(clippy::type_complexity)]
fn stored_rows(
    conn: &rusqlite::Connection,
    keys: &[(&str, &str, &str)],
) -> rusqlite::Result<Vec<Option<(StoredRow, Vec<StoredWrite>)>>> {
    let mut found: Vec<Option<(StoredRow, Vec<StoredWrite>)>> = keys.iter().map(|_| None).collect();
    by_ranges(conn, CHECKPOINTS_BY_RANGE, keys, |i, _, r| {
        if let Some(slot) = found.get_mut(i) {
            let row = StoredRow {
                parent: r.get(2)?,
                type_tag: r.get(3)?,
                checkpoint: cell_bytes(r, 4)?,
                metadata: cell_bytes(r, 5)?,
            };
            *slot = Some((row, Vec::new()));
        }
        Ok(())
    })?;
    by_ranges(conn, &writes_by_range("task_path"), keys, |i, _, r| {
        // Writes of a checkpoint that is not there are not read back.
        if let Some(Some((_, writes))) = found.get_mut(i) {
            writes.push(stored_write(r, 2)?);
        }
        Ok(())
    })?;
    Ok(found)
}

impl Pending {
    /// The whole checkpoint decoded, to compare with a read-back: a decoded one with
    /// its writes (as written, decoded by `serde`, the target's serializer) and the
    /// values it holds as blobs; a split row decoded now; `None` for a row carried as
    /// stored.
    fn decoded(
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

impl Writer {
    /// How many checkpoints [`read_back`](Self::read_back) takes at once.
    pub(super) fn verify_window(&self) -> usize {
        match self {
            Writer::Sqlite(..) => VERIFY_IN_FLIGHT,
            Writer::Postgres(_) => usize::MAX,
        }
    }

    /// Each of `window` as the target saver's `get_tuple` reads it, in order: on
    /// Postgres one statement for the window, on SQLite a few reads at once. A lost
    /// Postgres connection is the error (the batch is done again), not a mismatch.
    pub(super) async fn read_back(&self, window: &[&Pending]) -> Result<Vec<Option<ReadBack>>> {
        Ok(match self {
            Writer::Postgres(s) => {
                let keys: Vec<(&str, &str, &str)> = window
                    .iter()
                    .map(|p| (p.thread.as_str(), p.ns.as_str(), p.id.as_str()))
                    .collect();
                match s.get_tuples_in_order(&keys, TupleParts::WHOLE).await {
                    Ok(found) => found
                        .into_iter()
                        .map(|t| Some(Ok(t.map(|(tuple, _)| tuple))))
                        .collect(),
                    Err(e) if e.is_connection_lost() => return Err(e),
                    // Every checkpoint of the window is reported with the reason.
                    Err(e) => window
                        .iter()
                        .map(|p| {
                            Some(Err(StoreFault::Unreadable {
                                what: format!("checkpoint {}", p.at()),
                                reason: e.to_string(),
                            }
                            .into()))
                        })
                        .collect(),
                }
            }
            Writer::Sqlite(..) => {
                let saver = self.shared();
                let mut reads = tokio::task::JoinSet::new();
                for (i, p) in window.iter().enumerate() {
                    let saver = Arc::clone(&saver);
                    let config = CheckpointConfig::for_checkpoint(&p.thread, &p.ns, &p.id);
                    reads.spawn(async move { (i, saver.get_tuple(&config).await) });
                }
                let mut back: Vec<Option<ReadBack>> = window.iter().map(|_| None).collect();
                while let Some(joined) = reads.join_next().await {
                    if let Ok((i, read)) = joined {
                        if let Some(slot) = back.get_mut(i) {
                            *slot = Some(read);
                        }
                    }
                }
                back
            }
        })
    }

    /// The target saver's serializer.
    fn serializer(&self) -> &Arc<dyn Serializer> {
        match self {
            Writer::Sqlite(saver, _) => saver.serializer(),
            Writer::Postgres(saver) => saver.serializer(),
        }
    }

    /// Every checkpoint of `batch` read back and compared with its source: `None`
    /// where they agree, else why not. A checkpoint this batch put (`sent`) or carried
    /// is compared with the rows sent for it, as stored: into Postgres by
    /// [`PostgresSaver::holds_sent`], into SQLite by [`check_carried`]. Any other
    /// (there before), and one a Postgres target holds otherwise than sent, is read
    /// back through the saver and decoded, a window at a time (on Postgres the whole
    /// batch in one statement; the SQLite saver decodes a few at once on its blocking
    /// pool). Measured 2026-11-29, 100,000 checkpoints Postgres → SQLite: reading each
    /// back through `get_tuple` and decoding it was a quarter of the copy's CPU.
    pub(super) async fn check(
        &self,
        batch: &[Pending],
        sent: &[Option<Sent>],
    ) -> Result<Vec<Option<String>>> {
        let mut out: Vec<Option<String>> = batch.iter().map(|_| None).collect();
        let held = match self {
            Writer::Postgres(s) => held_as_sent(s, batch, sent).await?,
            // Compared below, with the carried rows.
            Writer::Sqlite(..) => sent
                .iter()
                .map(|s| matches!(s, Some(Sent::Sqlite(_))))
                .collect(),
        };
        let mut decoded: Vec<(usize, Cow<'_, CheckpointTuple>)> = Vec::new();
        for (i, p) in batch.iter().enumerate() {
            if held.get(i).copied().unwrap_or(false) {
                continue;
            }
            match p.decoded(&**self.serializer()) {
                Some(Ok(t)) => decoded.push((i, t)),
                Some(Err(why)) => {
                    if let Some(slot) = out.get_mut(i) {
                        *slot = Some(why);
                    }
                }
                None => {}
            }
        }
        for window in decoded.chunks(self.verify_window()) {
            let items: Vec<&Pending> = window.iter().filter_map(|(i, _)| batch.get(*i)).collect();
            let back = self.read_back(&items).await?;
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
        if let Writer::Sqlite(saver, conn) = self {
            off_the_runtime(|| check_stored(saver, conn, batch, sent, &mut out))?;
        }
        Ok(out)
    }
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

pub(super) type Checked = (Vec<Pending>, Vec<Option<Sent>>, Result<Vec<Option<String>>>);

/// Waits for the read-back of `verifying` (if any) and counts it: verified checkpoints,
/// mismatches, progress. A read-back that lost its connection is done again once the
/// target is reopened.
pub(super) async fn settle(
    verifying: Option<Verifying>,
    target: &mut Target,
    writer: &Writer,
    options: &CopyOptions,
    (report, retry): (&mut CopyReport, &mut Retry),
    done: &mut u64,
) -> Result<()> {
    let Some(Verifying(task)) = verifying else {
        return Ok(());
    };
    let (items, sent, mut checked) = task
        .await
        .map_err(|e| StoreFault::task("the read-back of a batch", e))?;
    let outcomes = loop {
        match checked {
            Ok(v) => break retry.ok(v),
            Err(e) => {
                target.recover(retry, e).await?;
                checked = writer.check(&items, &sent).await;
            }
        }
    };
    for (p, outcome) in items.iter().zip(outcomes) {
        *done += 1;
        match outcome {
            None => report.verified += 1,
            Some(why) => report.mismatches.push(format!("{}: {why}", p.at())),
        }
        options.run.report(&Progress {
            operation: "copy",
            unit: "checkpoints",
            column: "checkpoints",
            rows_done: *done,
            total_estimate: report.checkpoints.max(*done),
            rewritten: report.copied,
            stage: Stage::Done,
            page: None,
        });
    }
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
