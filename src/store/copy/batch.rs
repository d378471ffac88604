//! One batch of a [`copy`](super::copy) in the target: the source checkpoints with
//! their pending writes, which of them the target holds already, their writes inserted,
//! their checkpoints put through the target saver, and how a read-back differs.

use std::sync::Arc;

use super::super::error::StoreFault;
use super::super::ops::{Progress, Stage};
use super::super::raw::{cell_bytes, pg, sq, Result};
use super::super::retry::Retry;
use super::super::target::Target;
use super::{CopyOptions, CopyReport};
use crate::error::Error;
use std::borrow::Cow;

use super::super::inspect::decode_sqlite_row;
use crate::saver::postgres::{
    copy_in, found_positions, unique_violation, PostgresSaver, PutItem, SentRow, SentWrite,
    TupleParts,
};
use crate::saver::sqlite::{SqlitePutItem, SqliteSaver, StoredRow, StoredWrite};
use crate::saver::{ChannelVersions, CheckpointConfig, CheckpointSaver, CheckpointTuple};
use crate::serializer::Serializer;
use crate::{TypedBytes, Value};

/// One stored pending write.
pub(super) struct WriteRow {
    pub(super) task_id: String,
    pub(super) task_path: String,
    pub(super) idx: i64,
    pub(super) channel: String,
    pub(super) tag: String,
    pub(super) data: Vec<u8>,
}

/// A source checkpoint on its way to the target, with its pending writes serialized
/// by the target's serializer.
pub(super) struct Pending {
    pub(super) thread: String,
    pub(super) ns: String,
    pub(super) id: String,
    pub(super) body: Body,
    pub(super) writes: Vec<CopiedWrite>,
    /// [`pending_bytes`] of it, counted once when it is read.
    pub(super) bytes: usize,
}

/// A stored pending write with its value as the target's serializer writes it: bytes
/// and type tag.
pub(super) type CopiedWrite = (WriteRow, Vec<u8>, String);

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
    ///   ([`split_msgpack`]), and the `row` (decoded whole only to look closer at a
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
        let mut writes: Vec<&CopiedWrite> = self.writes.iter().collect();
        // The reader's order: Python's `writes_sort_key`, strings by code point.
        writes.sort_by(|(a, ..), (b, ..)| {
            (&a.task_path, &a.task_id, a.idx).cmp(&(&b.task_path, &b.task_id, b.idx))
        });
        for (w, data, tag) in writes {
            match serde.loads_typed(tag, data) {
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
        let writes = self.writes.iter().map(|(w, data, tag)| {
            (
                w.task_id.as_str(),
                w.channel.as_str(),
                tag.as_str(),
                data.as_slice(),
            )
        });
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

    /// Its pending writes as the target stores them.
    fn stored_writes(&self) -> Vec<StoredWrite> {
        self.writes
            .iter()
            .map(|(w, data, tag)| StoredWrite {
                task_id: w.task_id.clone(),
                task_path: w.task_path.clone(),
                idx: w.idx,
                channel: w.channel.clone(),
                type_tag: Some(tag.clone()),
                value: Some(data.clone()),
            })
            .collect()
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
pub(super) fn pending_bytes(body: &Body, writes: &[CopiedWrite]) -> usize {
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
    let writes: usize = writes.iter().map(|(_, data, _)| data.len()).sum();
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
pub(super) async fn present(target: &Target, batch: &[&Pending]) -> Result<Vec<bool>> {
    if batch.is_empty() {
        return Ok(Vec::new());
    }
    match target {
        Target::Sqlite(conn) => {
            let mut stmt = conn
                .prepare_cached(
                    "SELECT EXISTS (SELECT 1 FROM checkpoints WHERE thread_id = ?1 AND checkpoint_ns = ?2 AND checkpoint_id = ?3)",
                )
                .map_err(sq("copy"))?;
            batch
                .iter()
                .map(|p| {
                    stmt.query_row([&p.thread, &p.ns, &p.id], |r| r.get(0))
                        .map_err(sq("copy"))
                })
                .collect()
        }
        Target::Postgres(client) => {
            let threads: Vec<&str> = batch.iter().map(|p| p.thread.as_str()).collect();
            let nss: Vec<&str> = batch.iter().map(|p| p.ns.as_str()).collect();
            let ids: Vec<&str> = batch.iter().map(|p| p.id.as_str()).collect();
            let rows = client
                .query(
                    "SELECT k.n::int8 FROM unnest($1::text[], $2::text[], $3::text[]) WITH ORDINALITY AS k(t, ns, id, n) \
                     WHERE EXISTS (SELECT 1 FROM checkpoints c WHERE c.thread_id = k.t AND c.checkpoint_ns = k.ns AND c.checkpoint_id = k.id)",
                    &[&threads, &nss, &ids],
                )
                .await
                .map_err(pg("copy"))?;
            found_positions(&rows, batch.len()).map_err(pg("copy"))
        }
    }
}

/// Inserts the batch's write rows whose key is free, in one transaction, and into
/// SQLite in the same transaction after them the carried checkpoint rows whose key is
/// free; how many write rows and how many checkpoints were inserted. `fresh`: none of
/// the batch's checkpoints is in the target (into Postgres the writes then go with
/// `COPY`, see [`copy_writes`]).
pub(super) async fn insert_writes(
    target: &mut Target,
    batch: &[Pending],
    fresh: bool,
) -> Result<(u64, u64)> {
    let mut n = 0u64;
    let mut carried = 0u64;
    match target {
        Target::Sqlite(conn) => {
            let tx = conn
                .transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)
                .map_err(sq("copy"))?;
            {
                let mut stmt = tx
                    .prepare_cached(
                        "INSERT OR IGNORE INTO writes (thread_id, checkpoint_ns, checkpoint_id, task_id, task_path, idx, channel, type, value) \
                         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)",
                    )
                    .map_err(sq("copy"))?;
                for p in batch {
                    for (w, data, tag) in &p.writes {
                        n += stmt
                            .execute(rusqlite::params![
                                p.thread,
                                p.ns,
                                p.id,
                                w.task_id,
                                w.task_path,
                                w.idx,
                                w.channel,
                                tag,
                                data
                            ])
                            .map_err(sq("copy"))? as u64;
                    }
                }
                let mut put = tx
                    .prepare_cached(
                        "INSERT OR IGNORE INTO checkpoints (thread_id, checkpoint_ns, checkpoint_id, \
                         parent_checkpoint_id, type, checkpoint, metadata) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
                    )
                    .map_err(sq("copy"))?;
                for p in batch {
                    let Body::Row(row) = &p.body else {
                        continue;
                    };
                    carried += put
                        .execute(rusqlite::params![
                            p.thread,
                            p.ns,
                            p.id,
                            row.parent,
                            row.type_tag,
                            row.checkpoint,
                            row.metadata
                        ])
                        .map_err(sq("copy"))? as u64;
                }
            }
            tx.commit().map_err(sq("copy"))?;
        }
        Target::Postgres(client) => {
            let rows: Vec<(&Pending, &CopiedWrite)> = batch
                .iter()
                .flat_map(|p| p.writes.iter().map(move |w| (p, w)))
                .collect();
            if rows.is_empty() {
                return Ok((0, 0));
            }
            let mut idxs = Vec::with_capacity(rows.len());
            for (p, (w, _, _)) in &rows {
                idxs.push(i32::try_from(w.idx).map_err(|_| StoreFault::Unreadable {
                    what: format!("write {}/{}", p.at(), w.task_id),
                    reason: format!("idx {} does not fit Postgres's INTEGER", w.idx),
                })?);
            }
            let cols = WriteCols {
                threads: rows.iter().map(|(p, _)| p.thread.as_str()).collect(),
                nss: rows.iter().map(|(p, _)| p.ns.as_str()).collect(),
                ids: rows.iter().map(|(p, _)| p.id.as_str()).collect(),
                tasks: rows
                    .iter()
                    .map(|(_, (w, _, _))| w.task_id.as_str())
                    .collect(),
                paths: rows
                    .iter()
                    .map(|(_, (w, _, _))| w.task_path.as_str())
                    .collect(),
                idxs,
                channels: rows
                    .iter()
                    .map(|(_, (w, _, _))| w.channel.as_str())
                    .collect(),
                tags: rows.iter().map(|(_, (_, _, t))| t.as_str()).collect(),
                blobs: rows.iter().map(|(_, (_, d, _))| d.as_slice()).collect(),
            };
            let copied = if fresh {
                match copy_writes(client, &cols).await {
                    Ok(copied) => Some(copied),
                    // A key there already: insert-or-ignore.
                    Err(e) if unique_violation(&e) => None,
                    Err(e) => return Err(pg("copy")(e)),
                }
            } else {
                None
            };
            n += match copied {
                Some(copied) => copied,
                None => insert_writes_ignoring(client, &cols)
                    .await
                    .map_err(pg("copy"))?,
            };
        }
    }
    Ok((n, carried))
}

/// A batch's write rows for Postgres, column by column.
struct WriteCols<'a> {
    threads: Vec<&'a str>,
    nss: Vec<&'a str>,
    ids: Vec<&'a str>,
    tasks: Vec<&'a str>,
    paths: Vec<&'a str>,
    idxs: Vec<i32>,
    channels: Vec<&'a str>,
    tags: Vec<&'a str>,
    blobs: Vec<&'a [u8]>,
}

/// The write rows of a batch none of whose checkpoints is in the target yet (a first
/// run: every batch), in one transaction with one `COPY` (one statement per row cost
/// the server 3.1 s of a 100,000-checkpoint copy's 13.8 s, 2026-11-28); how many rows
/// were inserted. A key the target holds already (the writes of a checkpoint an
/// earlier run stopped before) fails the `COPY` with a unique violation, nothing
/// inserted: then they go in with insert-or-ignore. (Looking first, one statement a
/// batch, cost the server 0.85 s of a 100,000-checkpoint copy, 2026-11-29.)
async fn copy_writes(
    client: &mut tokio_postgres::Client,
    c: &WriteCols<'_>,
) -> std::result::Result<u64, tokio_postgres::Error> {
    use tokio_postgres::types::{ToSql, Type};
    let tx = client.transaction().await?;
    let rows = c
        .threads
        .iter()
        .zip(&c.nss)
        .zip(&c.ids)
        .zip(&c.tasks)
        .zip(&c.paths)
        .zip(&c.idxs)
        .zip(&c.channels)
        .zip(&c.tags)
        .zip(&c.blobs)
        .map(
            |((((((((t, ns), id), task), path), idx), channel), tag), blob)| -> [&(dyn ToSql + Sync); 9] {
                [t, ns, id, task, path, idx, channel, tag, blob]
            },
        );
    let n = copy_in(
        &tx,
        "COPY checkpoint_writes (thread_id, checkpoint_ns, checkpoint_id, task_id, task_path, idx, channel, type, blob) \
         FROM STDIN (FORMAT binary)",
        &[
            Type::TEXT,
            Type::TEXT,
            Type::TEXT,
            Type::TEXT,
            Type::TEXT,
            Type::INT4,
            Type::TEXT,
            Type::TEXT,
            Type::BYTEA,
        ],
        rows,
    )
    .await?;
    tx.commit().await?;
    Ok(n)
}

/// The write rows inserted where their key is free (`ON CONFLICT DO NOTHING`), in one
/// statement; how many were inserted.
async fn insert_writes_ignoring(
    client: &mut tokio_postgres::Client,
    c: &WriteCols<'_>,
) -> std::result::Result<u64, tokio_postgres::Error> {
    let tx = client.transaction().await?;
    let stmt = tx
        .prepare(
            "INSERT INTO checkpoint_writes (thread_id, checkpoint_ns, checkpoint_id, task_id, task_path, idx, channel, type, blob) \
             SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::int4[], $7::text[], $8::text[], $9::bytea[]) \
             ON CONFLICT DO NOTHING",
        )
        .await?;
    let n = tx
        .execute(
            &stmt,
            &[
                &c.threads,
                &c.nss,
                &c.ids,
                &c.tasks,
                &c.paths,
                &c.idxs,
                &c.channels,
                &c.tags,
                &c.blobs,
            ],
        )
        .await?;
    tx.commit().await?;
    Ok(n)
}

/// Checkpoints the SQLite saver reads back at the same time when a batch is verified.
const VERIFY_IN_FLIGHT: usize = 4;

/// A checkpoint read back from the target (`None` in the outer option: the read
/// itself did not finish).
pub(super) type ReadBack = std::result::Result<Option<CheckpointTuple>, Error>;

/// The target saver: `put` of a batch in one transaction, `get_tuple` to verify. A
/// SQLite target has a connection of its own besides, reading carried rows back as
/// stored.
#[derive(Clone)]
pub(super) enum Writer {
    Sqlite(
        Arc<SqliteSaver>,
        Arc<std::sync::Mutex<rusqlite::Connection>>,
    ),
    Postgres(Arc<PostgresSaver>),
}

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
/// target stores under its key: the same columns and the same write rows, byte for
/// byte, is verified. Otherwise (a row another release wrote there, or one changed
/// since) the stored one is decoded as `get_tuple` decodes it and compared, as a
/// decoded checkpoint is, with the source (a decoded one's, else the row sent,
/// decoded).
fn check_carried(
    saver: &SqliteSaver,
    conn: &rusqlite::Connection,
    p: &Pending,
    sent: &StoredRow,
) -> Option<String> {
    let key = (p.thread.as_str(), p.ns.as_str(), p.id.as_str());
    let (row, writes) = match stored(conn, key) {
        Ok(Some(found)) => found,
        Ok(None) => return Some("not in the target".to_owned()),
        Err(e) => return Some(format!("does not read back: {e}")),
    };
    let sent_writes = p.stored_writes();
    if row == *sent && writes == sent_writes {
        return None;
    }
    let source = match p.decoded(&**saver.serializer()) {
        Some(Ok(t)) => t,
        Some(Err(why)) => return Some(why),
        None => match saver.decode_stored(key, sent.clone(), sent_writes) {
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
    {
        let conn = conn
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let rows = batch.iter().zip(sent).map(|(p, s)| match (&p.body, s) {
            (Body::Row(row), _)
            | (Body::Decoded(_) | Body::Split { .. }, Some(Sent::Sqlite(row))) => Some(row),
            _ => None,
        });
        if rows.clone().any(|r| r.is_some()) {
            // One read transaction for the batch (a statement outside one takes and
            // drops the file's read lock each time: 38% of a copy's samples).
            let snapshot = conn.unchecked_transaction().map_err(sq("copy"))?;
            for ((p, row), slot) in batch.iter().zip(rows).zip(out.iter_mut()) {
                if let Some(row) = row {
                    *slot = check_carried(saver, &snapshot, p, row);
                }
            }
        }
        // The WAL is copied into the file here, beside the writer, instead of by
        // the writer's commits (`wal_autocheckpoint` is off on the copy's
        // connection): 10% of a copy's samples were the writer checkpointing.
        // Passive: it waits for no one, and a frame a reader still needs stays.
        conn.query_row("PRAGMA wal_checkpoint(PASSIVE)", [], |_| Ok(()))
            .map_err(sq("copy"))?;
    }
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
                .map(|(w, data, tag)| {
                    let w: SentWrite<'_> = (
                        w.task_id.as_str(),
                        w.task_path.as_str(),
                        w.idx,
                        w.channel.as_str(),
                        tag.as_str(),
                        data.as_slice(),
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

/// The stored row of a checkpoint and its write rows (in `get_tuple`'s order), from a
/// SQLite target; `None` when the checkpoint is not there.
fn stored(
    conn: &rusqlite::Connection,
    (thread, ns, id): (&str, &str, &str),
) -> rusqlite::Result<Option<(StoredRow, Vec<StoredWrite>)>> {
    use rusqlite::OptionalExtension;
    let row = conn
        .prepare_cached(
            "SELECT parent_checkpoint_id, type, checkpoint, metadata FROM checkpoints \
             WHERE thread_id = ?1 AND checkpoint_ns = ?2 AND checkpoint_id = ?3",
        )?
        .query_row([thread, ns, id], |r| {
            Ok(StoredRow {
                parent: r.get(0)?,
                type_tag: r.get(1)?,
                checkpoint: cell_bytes(r, 2)?,
                metadata: cell_bytes(r, 3)?,
            })
        })
        .optional()?;
    let Some(row) = row else {
        return Ok(None);
    };
    let writes = conn
        .prepare_cached(
            "SELECT task_id, task_path, idx, channel, type, value FROM writes \
             WHERE thread_id = ?1 AND checkpoint_ns = ?2 AND checkpoint_id = ?3 \
             ORDER BY task_path, task_id, idx",
        )?
        .query_map([thread, ns, id], |r| {
            Ok(StoredWrite {
                task_id: r.get(0)?,
                task_path: r.get(1)?,
                idx: r.get(2)?,
                channel: r.get(3)?,
                type_tag: r.get(4)?,
                value: cell_bytes(r, 5)?,
            })
        })?
        .collect::<rusqlite::Result<Vec<_>>>()?;
    Ok(Some((row, writes)))
}

impl Writer {
    pub(super) fn shared(&self) -> Arc<dyn CheckpointSaver> {
        match self {
            Writer::Sqlite(s, _) => Arc::clone(s) as Arc<dyn CheckpointSaver>,
            Writer::Postgres(s) => Arc::clone(s) as Arc<dyn CheckpointSaver>,
        }
    }

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
    async fn check(&self, batch: &[Pending], sent: &[Option<Sent>]) -> Result<Vec<Option<String>>> {
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

    /// Puts the checkpoints (each with its parent as Python's `put` receives it) in one
    /// transaction. (Only decoded checkpoints: a carried row goes in with its writes.)
    /// Returns the rows written for each, in order (for [`check`](Self::check)).
    pub(super) async fn put_batch(
        &self,
        batch: &[PutOne<'_>],
    ) -> std::result::Result<Vec<Sent>, Error> {
        let config = |p: &Pending, t: &CheckpointTuple| {
            let config = CheckpointConfig::new(p.thread.clone()).with_ns(p.ns.clone());
            match t
                .parent_config
                .as_ref()
                .and_then(|c| c.checkpoint_id.clone())
            {
                Some(parent) => config.with_checkpoint_id(parent),
                None => config,
            }
        };
        match self {
            Writer::Sqlite(s, _) => {
                let items: Vec<SqlitePutItem<'_>> = batch
                    .iter()
                    .map(|(p, t, blobs)| (config(p, t), &t.checkpoint, &t.metadata, *blobs))
                    .collect();
                Ok(s.put_batch(&items)
                    .await?
                    .into_iter()
                    .map(Sent::Sqlite)
                    .collect())
            }
            Writer::Postgres(s) => {
                // The versions of the channels the checkpoint holds a value for.
                let versions: Vec<ChannelVersions> = batch
                    .iter()
                    .map(|(_, t, _)| {
                        let cp = &t.checkpoint;
                        cp.channel_versions
                            .iter()
                            .filter(|(k, _)| cp.channel_values.contains_key(*k))
                            .map(|(k, v)| (k.clone(), v.clone()))
                            .collect()
                    })
                    .collect();
                let items: Vec<PutItem<'_>> = batch
                    .iter()
                    .zip(&versions)
                    .map(|((p, t, blobs), v)| (config(p, t), &t.checkpoint, &t.metadata, v, *blobs))
                    .collect();
                Ok(s.put_batch(&items)
                    .await?
                    .into_iter()
                    .map(Sent::Postgres)
                    .collect())
            }
        }
    }
}

/// A checkpoint for [`Writer::put_batch`]: its pending form, decoded checkpoint and
/// blobs made already ([`Pending::for_put`]).
pub(super) type PutOne<'a> = (&'a Pending, &'a CheckpointTuple, &'a [(String, TypedBytes)]);

/// The read-back of a written batch, a task of its own: it runs while the next batch
/// is written (and, on a runtime with more than one thread, on another core than the
/// one reading the source and encoding the next batch). It gives back the batch and,
/// per checkpoint, `None` (verified) or why it is not.
///
/// Measured 2026-11-28 (100,000 checkpoints SQLite → Postgres, `log_min_duration_statement
/// = 0` on the target): reading each batch back took the server 5.7 s of a 21.4 s copy,
/// and decoding it this process's CPU besides, all of it in the chain of each batch
/// before the next could be written.
pub(super) struct Verifying(tokio::task::JoinHandle<Checked>);

type Checked = (Vec<Pending>, Vec<Option<Sent>>, Result<Vec<Option<String>>>);

/// Writes a batch, emptying it: its pending writes in one target transaction
/// (insert-or-ignore), then the checkpoints not yet there through the target saver in
/// another (so a checkpoint in the target always has its writes, and a copy killed at
/// any point is finished by running it again). Then the batch written before is
/// [`settle`]d and this one's read-back started ([`Verifying`]): every checkpoint read
/// back through the target saver's `get_tuple` and compared with its source. After a
/// lost connection to the target (`given`) the whole batch is written again: its
/// writes insert only free keys and its checkpoints go in only where missing, so a
/// transaction that committed before the connection went is found done (its
/// checkpoints then counted as already there).
pub(super) async fn flush(
    batch: &mut Vec<Pending>,
    (target, given): (&mut Target, &str),
    writer: &Writer,
    options: &CopyOptions,
    (report, retry): (&mut CopyReport, &mut Retry),
    (done, verifying): (&mut u64, &mut Option<Verifying>),
) -> Result<()> {
    if batch.is_empty() {
        return Ok(());
    }
    let (inserted, missing, sent) = loop {
        match write_batch(batch, target, writer).await {
            Ok(v) => break retry.ok(v),
            Err(e) => target.recover(given, true, retry, e).await?,
        }
    };
    report.batches += 1;
    report.writes_inserted += inserted;
    report.copied += missing;
    report.already_there += batch.len() as u64 - missing;
    let items: Vec<Pending> = std::mem::take(batch);
    settle(
        verifying.take(),
        (target, given),
        writer,
        options,
        (report, retry),
        done,
    )
    .await?;
    let reader = writer.clone();
    *verifying = Some(Verifying(tokio::spawn(async move {
        let checked = reader.check(&items, &sent).await;
        (items, sent, checked)
    })));
    Ok(())
}

/// Waits for the read-back of `verifying` (if any) and counts it: verified checkpoints,
/// mismatches, progress. A read-back that lost its connection is done again once the
/// target is reopened.
pub(super) async fn settle(
    verifying: Option<Verifying>,
    (target, given): (&mut Target, &str),
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
        .map_err(|e| Error::from(StoreFault::Task(format!("the read-back of a batch: {e}"))))?;
    let outcomes = loop {
        match checked {
            Ok(v) => break retry.ok(v),
            Err(e) => {
                target.recover(given, true, retry, e).await?;
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
        if let Some(f) = &options.progress {
            f(&Progress {
                operation: "copy",
                column: "checkpoints",
                rows_done: *done,
                total_estimate: report.checkpoints.max(*done),
                rewritten: report.copied,
                stage: Stage::Done,
                page: None,
            });
        }
    }
    Ok(())
}

/// One attempt at writing a batch: the write rows inserted, how many checkpoints were
/// put, and (into Postgres) the rows sent for each checkpoint put, by position.
async fn write_batch(
    batch: &[Pending],
    target: &mut Target,
    writer: &Writer,
) -> Result<(u64, u64, Vec<Option<Sent>>)> {
    let decoded: Vec<(usize, PutOne<'_>)> = batch
        .iter()
        .enumerate()
        .filter_map(|(i, p)| p.for_put().map(|(t, blobs)| (i, (p, t, blobs))))
        .collect();
    let pendings: Vec<&Pending> = decoded.iter().map(|(_, (p, ..))| *p).collect();
    // (Looked up before the writes go in: only `put` adds these checkpoints.)
    let there = present(target, &pendings).await?;
    let fresh = decoded.len() == batch.len() && !there.contains(&true);
    let (inserted, carried) = insert_writes(target, batch, fresh).await?;
    let (positions, missing): (Vec<usize>, Vec<PutOne<'_>>) = decoded
        .into_iter()
        .zip(&there)
        .filter(|(_, there)| !**there)
        .map(|(item, _)| item)
        .unzip();
    let mut sent: Vec<Option<Sent>> = batch.iter().map(|_| None).collect();
    if !missing.is_empty() {
        let rows = writer.put_batch(&missing).await.map_err(|e| {
            if e.is_connection_lost() {
                return e;
            }
            e.in_context(format_args!(
                "put of checkpoints {} .. {} into the target",
                missing.first().map(|(p, ..)| p.at()).unwrap_or_default(),
                missing.last().map(|(p, ..)| p.at()).unwrap_or_default()
            ))
        })?;
        for (i, row) in positions.into_iter().zip(rows) {
            if let Some(slot) = sent.get_mut(i) {
                *slot = Some(row);
            }
        }
    }
    Ok((inserted, carried + missing.len() as u64, sent))
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
