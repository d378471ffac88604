//! One batch of a [`copy`](super::copy) in the target: the source checkpoints with
//! their pending writes, which of them the target holds already, their writes inserted
//! and their checkpoints put through the target saver (the read-back: `check`).

use std::sync::{Arc, Mutex, PoisonError};

use futures_util::future::BoxFuture;

use super::super::backend::WriteSet;
use super::super::engine::Engine;
use super::super::raw::Result;
use super::super::target::Target;
use super::check::{check, settle, Sent, Verifying};
use super::writer::Writer;
use super::CopyReport;
use crate::error::Error;

use crate::saver::postgres::{BlobLookUp, Taken};
use crate::saver::sqlite::{StoredRow, StoredWrite};
use crate::saver::CheckpointTuple;
use crate::serializer::Serializer;
use crate::{TypedBytes, Value};

/// A source checkpoint on its way to the target, with its pending writes serialized
/// by the target's serializer.
pub(super) struct Pending {
    pub(super) thread: String,
    pub(super) ns: String,
    pub(super) id: String,
    pub(super) body: Body,
    /// Its pending writes, their values as the target's serializer writes them.
    pub(super) writes: Vec<StoredWrite>,
    /// [`pending_bytes`] of it, counted once when it is read.
    pub(super) bytes: usize,
}

/// How a checkpoint goes to the target.
pub(super) enum Body {
    /// Decoded, to be written by the target saver's `put`, without its pending writes
    /// (they are [`Pending::writes`]).
    Decoded(Box<CheckpointTuple>),
    /// A clear msgpack row of a SQLite source in Python's layout, going into a SQLite
    /// store: its stored columns, carried as they are. They are what the SQLite
    /// saver's `put` of the decoded checkpoint writes, without decoding and encoding
    /// every channel value twice (measured 2026-11-29, 100,000 checkpoints SQLite →
    /// SQLite: decoding, encoding, and decoding the read-back took most of the copy's
    /// CPU; `source::carried_row` says which rows qualify).
    Row(StoredRow),
    /// A checkpoint going into a clear store with some channel values as their
    /// `dumps_typed` pairs, never decoded: the tuple with the other values decoded
    /// (without its pending writes, as `Decoded`), and the blobs.
    /// - A clear msgpack row of a SQLite source in Python's layout, going into
    ///   Postgres: its inline values decoded, the others split off as their blobs
    ///   ([`split_msgpack`](crate::saver::postgres::split_msgpack)), and the `row` (decoded whole only to look closer at a
    ///   target that does not hold what was sent). Measured 2026-11-29, 100,000
    ///   checkpoints SQLite → Postgres: decoding every channel value and encoding it
    ///   again for its blob was most of the CPU of the thread that reads the source.
    /// - A Postgres source's checkpoint (`row` `None`): its clear msgpack, `bytes` and
    ///   `null` blobs as stored (`TupleParts::raw_blobs`), put into a SQLite row as
    ///   their bytes or into Postgres blobs as they are.
    Split {
        tuple: Box<CheckpointTuple>,
        blobs: Vec<(String, TypedBytes)>,
        row: Option<StoredRow>,
    },
}

impl Pending {
    pub(super) fn at(&self) -> String {
        format!("{}/{:?}/{}", self.thread, self.ns, self.id)
    }

    /// What the target saver's `put` takes: the decoded checkpoint and the blobs made
    /// already (a split row's); `None` for a row carried as stored.
    pub(super) fn for_put(&self) -> Option<(&CheckpointTuple, &[(String, TypedBytes)])> {
        match &self.body {
            Body::Decoded(t) => Some((t, &[])),
            Body::Split { tuple, blobs, .. } => Some((tuple, blobs)),
            Body::Row(_) => None,
        }
    }
}

/// About how many bytes `value` holds (strings, bytes, containers): what bounds a batch.
pub(super) fn value_bytes(value: &Value) -> usize {
    let mut total = 0usize;
    let mut stack = vec![value];
    while let Some(v) = stack.pop() {
        total = total.saturating_add(16);
        match v {
            Value::Str(s) => total = total.saturating_add(s.len()),
            Value::Bin(b) => total = total.saturating_add(b.len()),
            Value::Ext(e) => total = total.saturating_add(e.data.len()),
            Value::NdArray(a) => total = total.saturating_add(a.buffer.len()),
            Value::WStr(_) | Value::BigInt(_) => total = total.saturating_add(32),
            Value::Array(items) => stack.extend(items.iter()),
            Value::Map(entries) => stack.extend(entries.iter().flat_map(|(k, v)| [k, v])),
            Value::Object(o) => {
                total = total.saturating_add(o.module.len() + o.name.len());
                stack.push(&o.arg);
            }
            Value::DeltaSnapshot(inner) => stack.push(inner),
            _ => {}
        }
    }
    total
}

/// About how many bytes a checkpoint on its way holds: its channel values (a carried
/// row: its bytes), its writes' bytes and 512 for the rest. What bounds a batch.
pub(super) fn pending_bytes(body: &Body, writes: &[StoredWrite]) -> usize {
    let values: usize = match body {
        Body::Decoded(tuple) => tuple
            .checkpoint
            .channel_values
            .values()
            .map(value_bytes)
            .sum(),
        Body::Row(row) => [&row.checkpoint, &row.metadata]
            .iter()
            .map(|c| c.as_ref().map_or(0, Vec::len))
            .sum(),
        // The row, and its blobs' copies of its values.
        Body::Split { row: Some(row), .. } => [&row.checkpoint, &row.checkpoint, &row.metadata]
            .iter()
            .map(|c| c.as_ref().map_or(0, Vec::len))
            .sum(),
        // The decoded values, the blobs, and the row they are spliced into.
        Body::Split {
            tuple,
            blobs,
            row: None,
        } => {
            let decoded: usize = tuple
                .checkpoint
                .channel_values
                .values()
                .map(value_bytes)
                .sum();
            let blobs: usize = blobs.iter().map(|(_, b)| b.data.len()).sum();
            decoded.saturating_add(blobs.saturating_mul(2))
        }
    };
    let writes: usize = writes.iter().map(|w| w.data().len()).sum();
    values.saturating_add(writes).saturating_add(512)
}

/// Channel values kept as their `dumps_typed` pairs (`TupleParts::raw_blobs`), decoded
/// by `serde` into the tuple as the source's reader reads them: inserted into
/// `channel_values` (a channel there already keeps its place).
///
/// # Errors
/// A pair `serde` cannot read, named by its channel.
pub(super) fn insert_blobs(
    tuple: &mut CheckpointTuple,
    blobs: impl IntoIterator<Item = (String, TypedBytes)>,
    serde: &dyn Serializer,
) -> std::result::Result<(), Error> {
    for (ch, pair) in blobs {
        let value = serde
            .loads_typed(&pair.type_tag, &pair.data)
            .map_err(|e| e.in_context(format_args!("channel {ch:?} does not decode")))?;
        tuple.checkpoint.channel_values.insert(ch, value);
    }
    Ok(())
}

/// Which checkpoints of the batch the target already holds, by position.
pub(super) async fn present(target: &mut Target, batch: &[&Pending]) -> Result<Vec<bool>> {
    if batch.is_empty() {
        return Ok(Vec::new());
    }
    let keys: Vec<[&str; 3]> = batch
        .iter()
        .map(|p| [p.thread.as_str(), p.ns.as_str(), p.id.as_str()])
        .collect();
    target.holds_checkpoints(&keys).await
}

/// Inserts the batch's write rows whose key is free, in one transaction, and into
/// SQLite in the same transaction after them the carried checkpoint rows whose key is
/// free; how many write rows and how many checkpoints were inserted. `fresh`: none of
/// the batch's checkpoints is in the target (into Postgres the writes then go with
/// `COPY`).
pub(super) async fn insert_writes(
    target: &mut Target,
    batch: &[Pending],
    fresh: bool,
) -> Result<(u64, u64)> {
    let sets: Vec<WriteSet<'_>> = batch
        .iter()
        .map(|p| WriteSet {
            key: [p.thread.as_str(), p.ns.as_str(), p.id.as_str()],
            writes: &p.writes,
            row: match &p.body {
                Body::Row(row) => Some(row),
                _ => None,
            },
        })
        .collect();
    target.insert_writes(&sets, fresh).await
}

/// A checkpoint for [`CopyWriter::put_batch`](super::writer::CopyWriter::put_batch): its pending form, decoded checkpoint and
/// blobs made already ([`Pending::for_put`]).
pub(super) type PutOne<'a> = (&'a Pending, &'a CheckpointTuple, &'a [(String, TypedBytes)]);

/// Writes a batch, emptying it: its pending writes in one target transaction
/// (insert-or-ignore), and the checkpoints not yet there through the target saver in
/// another, committed after the first (so a checkpoint in the target always has its
/// writes, and a copy killed at any point is finished by running it again; into
/// Postgres the two are sent at once, see [`write_batch`]). Then the batch written before is
/// [`settle`]d and this one's read-back started ([`Verifying`]): every checkpoint read
/// back through the target saver's `get_tuple` and compared with its source. After a
/// lost connection to the target the whole batch is written again: its
/// writes insert only free keys and its checkpoints go in only where missing, so a
/// transaction that committed before the connection went is found done (its
/// checkpoints then counted as already there). `fresh`: see [`write_batch`] (a batch
/// written again after a lost connection is looked up first).
pub(super) async fn flush(
    batch: &mut Vec<Pending>,
    target: &mut Target,
    writer: &Writer,
    (report, engine): (&mut CopyReport, &mut Engine),
    (verifying, fresh, spent): (&mut Option<Verifying>, &mut bool, &Spent),
) -> Result<()> {
    if batch.is_empty() {
        return Ok(());
    }
    let (inserted, missing, sent, whole) = loop {
        match write_batch(batch, target, writer, fresh).await {
            Ok(v) => break engine.ok(v),
            Err(e) => {
                *fresh = false;
                engine.recover(&**target, e).await?;
            }
        }
    };
    report.batches += 1;
    report.writes_inserted += inserted;
    report.copied += missing;
    engine.add_changed(missing);
    report.already_there += batch.len() as u64 - missing;
    let items: Vec<Pending> = std::mem::take(batch);
    settle(verifying.take(), target, writer, (report, engine), spent).await?;
    let reader = Arc::clone(writer);
    *verifying = Some(Verifying(tokio::spawn(async move {
        let checked = check(&*reader, &items, &sent, whole).await;
        (items, sent, whole, checked)
    })));
    Ok(())
}

/// How many times in a row [`write_batch`] looks up the checkpoints of a batch again
/// after a key its `COPY` wrote was taken, before it puts them with `put`'s statements.
const TAKEN_RETRIES: u32 = 3;

/// One attempt at writing a batch: the write rows inserted, how many checkpoints were
/// put, the rows sent for each checkpoint put, by position, and whether every row of
/// the batch went in as this attempt sent it (each write row and carried row at a free
/// key, no checkpoint there before: [`check`]'s `whole`).
///
/// `fresh`: whether the batch written before found none of its checkpoints in the
/// target, updated for this one. Into Postgres such a batch is taken to be fresh too:
/// its writes and checkpoints go straight in with `COPY`, and only a key taken already
/// (a rerun reaching what an earlier run copied, a writer beside the copy) has its
/// checkpoints looked up, the writes going in as before and the checkpoints that are
/// not there put. A checkpoint someone else put is left as they put it (and reported
/// by the read-back if it differs), whether it was there before the batch or put while
/// the batch's `COPY` ran. The lookup cost 1.8 s of the 12 s a batch's write took in all
/// (100,000 checkpoints SQLite → Postgres, 2026-11-30).
async fn write_batch(
    batch: &[Pending],
    target: &mut Target,
    writer: &Writer,
    fresh: &mut bool,
) -> Result<(u64, u64, Vec<Option<Sent>>, bool)> {
    let decoded: Vec<(usize, PutOne<'_>)> = batch
        .iter()
        .enumerate()
        .filter_map(|(i, p)| p.for_put().map(|(t, blobs)| (i, (p, t, blobs))))
        .collect();
    let pendings: Vec<&Pending> = decoded.iter().map(|(_, (p, ..))| *p).collect();
    let all_decoded = decoded.len() == batch.len();
    let guess = *fresh && all_decoded && writer.round_trips();
    // (Looked up before the writes go in: only `put` adds these checkpoints.)
    let mut there = if guess {
        vec![false; pendings.len()]
    } else {
        present(target, &pendings).await?
    };
    let writes_fresh = all_decoded && !there.contains(&true);
    let put = |taken, there: &[bool], ready: BoxFuture<'static, bool>| {
        let (positions, missing): (Vec<usize>, Vec<PutOne<'_>>) = decoded
            .iter()
            .zip(there)
            .filter(|(_, there)| !**there)
            .map(|(item, _)| *item)
            .unzip();
        async move {
            if missing.is_empty() {
                return Ok(Some((positions, Vec::new())));
            }
            let rows = writer
                .put_batch(&missing, taken, ready)
                .await
                .map_err(|e| {
                    if e.is_connection_lost() {
                        return e;
                    }
                    e.in_context(format_args!(
                        "put of checkpoints {} .. {} into the target",
                        missing.first().map(|(p, ..)| p.at()).unwrap_or_default(),
                        missing.last().map(|(p, ..)| p.at()).unwrap_or_default()
                    ))
                })?;
            Ok::<_, Error>(rows.map(|rows| (positions, rows)))
        }
    };
    // A batch taken to be fresh looks up, at its first try, only the blobs of its first
    // namespace, the one the batch before may have ended in; a retry looks up all.
    let taken = |attempts| {
        let taken = if attempts < TAKEN_RETRIES {
            Taken::Report
        } else {
            Taken::Put
        };
        let blobs = if guess && attempts == 0 {
            BlobLookUp::FirstNamespace
        } else {
            BlobLookUp::All
        };
        (taken, blobs)
    };
    // Into Postgres the checkpoints are sent while the writes go in on the other
    // connection, and committed after them: a checkpoint in the target always has its
    // writes. (Measured 2026-11-30, 100,000 checkpoints SQLite → Postgres: the writes'
    // `COPY` took 3.7 s and the checkpoints' 5.0 s of the 12 s a batch's write took in
    // all, one after the other.)
    let (written, first) = if writer.round_trips() {
        let (done, ready) = tokio::sync::oneshot::channel::<()>();
        let writes = async {
            let written = insert_writes(target, batch, writes_fresh).await;
            if written.is_ok() {
                let _ = done.send(());
            }
            written
        };
        futures_util::future::join(
            writes,
            put(
                taken(0),
                &there,
                Box::pin(async move { ready.await.is_ok() }),
            ),
        )
        .await
    } else {
        let written = insert_writes(target, batch, writes_fresh).await?;
        (
            Ok(written),
            put(taken(0), &there, Box::pin(async { true })).await,
        )
    };
    let (inserted, carried) = written?;
    let mut put_rows = first?;
    // A key taken meanwhile: the checkpoints looked up again and those not there put.
    // Only after that happened `TAKEN_RETRIES` times in a row does the batch go in
    // with `put`'s statements, upserts as Python's `put` writes them.
    let mut attempts = 0;
    let put_rows = loop {
        if let Some(done) = put_rows {
            break done;
        }
        attempts += 1;
        there = present(target, &pendings).await?;
        put_rows = put(taken(attempts), &there, Box::pin(async { true })).await?;
    };
    let mut sent: Vec<Option<Sent>> = batch.iter().map(|_| None).collect();
    let (positions, rows) = put_rows;
    let put_count = positions.len() as u64;
    for (i, row) in positions.into_iter().zip(rows) {
        if let Some(slot) = sent.get_mut(i) {
            *slot = Some(row);
        }
    }
    *fresh = !there.contains(&true);
    let all_writes: usize = batch.iter().map(|p| p.writes.len()).sum();
    let all_carried = batch
        .iter()
        .filter(|p| matches!(p.body, Body::Row(_)))
        .count();
    let whole = *fresh && inserted == all_writes as u64 && carried == all_carried as u64;
    Ok((inserted, carried + put_count, sent, whole))
}

/// A batch done with (written, read back, reported), kept for the reading of the
/// source to drop before it reads the next one: the thread that decoded a batch's
/// values frees them. With mimalloc, a block freed on another thread than the one that
/// allocated it goes through that thread's delayed-free list and is collected there:
/// 7.7% of a copy SQLite → Postgres's samples (100,000 checkpoints, 2026-12-03, `perf
/// record`), where the batches, read on the operation's thread, were dropped by their
/// read-back's task on a worker; 2.1% when the reading drops them. One batch at most
/// waits: a second is dropped where it is done with, as before.
#[derive(Clone, Default)]
pub(super) struct Spent(Arc<Mutex<Option<Vec<Pending>>>>);

impl Spent {
    /// Keeps `batch` for [`drop_here`](Self::drop_here), or drops it now if one waits.
    pub(super) fn put(&self, batch: Vec<Pending>) {
        let mut slot = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        if slot.is_none() {
            *slot = Some(batch);
            return;
        }
        drop(slot);
        drop(batch);
    }

    /// Drops the batch that waits, if any, on this thread.
    pub(super) fn drop_here(&self) {
        let waiting = self.0.lock().unwrap_or_else(PoisonError::into_inner).take();
        drop(waiting);
    }
}
