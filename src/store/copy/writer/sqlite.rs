//! The copy's writer into a SQLite store: the SQLite saver's `put_batch` for decoded
//! checkpoints, rows carried as stored, and the read-back comparing the rows sent with
//! the file's (a connection of its own reads them).

use std::borrow::Cow;
use std::path::Path;
use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use futures_util::future::BoxFuture;

use super::super::super::raw::{cell_bytes, saver_err, sq, Result};
use super::super::batch::{Body, Pending, PutOne};
use super::super::check::{difference, ReadBack, Sent};
use super::super::ranges::{
    by_ranges, row_is, stored_write, write_is, writes_by_range, CHECKPOINTS_BY_RANGE,
};
use super::{put_config, CopyWriter};
use crate::error::Error;
use crate::saver::postgres::{BlobLookUp, Taken};
use crate::saver::sqlite::{SqlitePutItem, SqliteSaver, StoredRow, StoredWrite};
use crate::saver::{Checkpoint, CheckpointConfig, CheckpointSaver, METADATA_MAX_DEPTH};
use crate::serializer::Serializer;
use crate::Value;

/// Checkpoints the SQLite saver reads back at the same time when a batch is verified.
const VERIFY_IN_FLIGHT: usize = 4;

/// The SQLite saver writing the copy, and a connection of its own reading carried rows
/// back as stored.
pub(super) struct SqliteWriter {
    saver: Arc<SqliteSaver>,
    conn: Arc<Mutex<rusqlite::Connection>>,
}

impl SqliteWriter {
    pub(super) fn open(path: &Path, serde: &Arc<dyn Serializer>, shown: &str) -> Result<Self> {
        Ok(SqliteWriter {
            saver: Arc::new(
                SqliteSaver::builder(path)
                    .serializer(Arc::clone(serde))
                    .open()
                    .map_err(saver_err(shown))?,
            ),
            conn: Arc::new(Mutex::new(
                rusqlite::Connection::open_with_flags(
                    path,
                    rusqlite::OpenFlags::SQLITE_OPEN_READ_WRITE,
                )
                .map_err(sq("copy"))?,
            )),
        })
    }
}

#[async_trait]
impl CopyWriter for SqliteWriter {
    fn round_trips(&self) -> bool {
        false
    }

    fn serializer(&self) -> &Arc<dyn Serializer> {
        self.saver.serializer()
    }

    /// Carried as stored when the row reads as `get_tuple` reads it ([`carriable`]):
    /// what the SQLite saver's `put` writes of its decoded checkpoint is these bytes
    /// (Python's msgpack is canonical: the golden vectors).
    fn carry(
        &self,
        _serde: &dyn Serializer,
        (_, _, id): &(String, String, String),
        row: StoredRow,
    ) -> Option<Body> {
        carriable(id, row.checkpoint.as_deref()?, row.metadata.as_deref()?)
            .then_some(Body::Row(row))
    }

    fn moves_sends(&self) -> bool {
        // Python's SQLite saver keeps a `v < 4` checkpoint's pending sends in it.
        false
    }

    fn sends_to_tasks(
        &self,
        _checkpoint: &mut Checkpoint,
        _parent_sends: &[Value],
    ) -> std::result::Result<(), Error> {
        Ok(())
    }

    async fn put_batch(
        &self,
        batch: &[PutOne<'_>],
        _taken: (Taken, BlobLookUp),
        ready: BoxFuture<'static, bool>,
    ) -> std::result::Result<Option<Vec<Sent>>, Error> {
        if !ready.await {
            return Ok(None);
        }
        let items: Vec<SqlitePutItem<'_>> = batch
            .iter()
            .map(|(p, t, blobs)| (put_config(p, t), &t.checkpoint, &t.metadata, *blobs))
            .collect();
        Ok(Some(
            self.saver
                .put_batch(&items)
                .await?
                .into_iter()
                .map(Sent::Sqlite)
                .collect(),
        ))
    }

    async fn held(
        &self,
        _batch: &[Pending],
        sent: &[Option<Sent>],
        _whole: bool,
    ) -> Result<Vec<bool>> {
        // Compared in `finish_check`, with the carried rows.
        Ok(sent
            .iter()
            .map(|s| matches!(s, Some(Sent::Sqlite(_))))
            .collect())
    }

    fn verify_window(&self) -> usize {
        VERIFY_IN_FLIGHT
    }

    /// A few reads at once, through the saver's `get_tuple`.
    async fn read_back(&self, window: &[&Pending]) -> Result<Vec<Option<ReadBack>>> {
        let saver = Arc::clone(&self.saver) as Arc<dyn CheckpointSaver>;
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
        Ok(back)
    }

    async fn finish_check(
        &self,
        batch: &[Pending],
        sent: &[Option<Sent>],
        whole: bool,
        out: &mut [Option<String>],
    ) -> Result<()> {
        off_the_runtime(|| check_stored(&self.saver, &self.conn, (batch, sent, whole), out))
    }
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

/// The rows sent (carried, or written by `put`) compared with the file's, and the WAL
/// checkpointed. A batch that went in whole as sent (`whole`) is verified without
/// reading its rows when the file holds nothing that could differ from them
/// ([`stored_as_sent`]).
fn check_stored(
    saver: &SqliteSaver,
    conn: &Mutex<rusqlite::Connection>,
    (batch, sent, whole): (&[Pending], &[Option<Sent>], bool),
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
        let keys: Vec<(&str, &str, &str)> = checked.iter().map(|(_, key, _)| *key).collect();
        let writes: usize = batch.iter().map(|p| p.writes.len()).sum();
        let as_sent = whole
            && checked.len() == batch.len()
            && stored_as_sent(&snapshot, &keys, writes).map_err(sq("copy"))?;
        // A thread at a time: only its rows are held.
        for run in checked
            .chunk_by(|a, b| a.1 .0 == b.1 .0)
            .filter(|_| !as_sent)
        {
            let keys: Vec<(&str, &str, &str)> = run.iter().map(|(_, key, _)| *key).collect();
            let sent: Vec<(&StoredRow, &[StoredWrite])> = run
                .iter()
                .map(|(i, _, row)| (*row, batch.get(*i).map_or(&[][..], |p| &p.writes)))
                .collect();
            let held = read_back(&snapshot, &keys, &sent).map_err(sq("copy"))?;
            for ((i, _, row), held) in run.iter().zip(held) {
                if let (Some(p), Some(slot)) = (batch.get(*i), out.get_mut(*i)) {
                    *slot = match held {
                        Held::AsSent => None,
                        Held::Missing => check_carried(saver, p, row, None),
                        Held::Other(stored, writes) => {
                            check_carried(saver, p, row, Some((stored, writes)))
                        }
                    };
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

/// Whether the file holds a batch that went in whole (every write row and carried
/// row at a key that was free, every checkpoint `put` where none was) just as it was
/// sent, told without reading its rows: the `checkpoints` and `writes` tables have no
/// trigger (which may change or drop a row as it goes in), and the batch's ranges of
/// keys hold no write rows besides the `writes` sent (one stored under a checkpoint of
/// the batch by someone else). A transaction stores every row it is given as given; a
/// row changed after the batch committed is the writer's, as one changed after a
/// read-back. Reading each batch back row by row was a quarter of a copy's samples
/// Postgres → SQLite (100,000 checkpoints, 2026-12-03).
fn stored_as_sent(
    conn: &rusqlite::Connection,
    keys: &[(&str, &str, &str)],
    writes: usize,
) -> rusqlite::Result<bool> {
    let triggers: bool = conn.query_row(
        "SELECT EXISTS (SELECT 1 FROM sqlite_master WHERE type = 'trigger' \
         AND tbl_name IN ('checkpoints', 'writes'))",
        [],
        |r| r.get(0),
    )?;
    if triggers {
        return Ok(false);
    }
    let mut stored = 0u64;
    for run in keys.chunk_by(|a, b| a.0 == b.0) {
        let (Some(first), Some(last)) = (run.first(), run.last()) else {
            continue;
        };
        let n: i64 = conn
            .prepare_cached(WRITES_IN_RANGE)?
            .query_row([first.0, first.1, first.2, last.1, last.2], |r| r.get(0))?;
        stored = stored.saturating_add(u64::try_from(n).unwrap_or(u64::MAX));
    }
    Ok(stored == writes as u64)
}

/// The write rows of a thread's range of keys (as [`by_ranges`] takes it), counted on
/// the table's primary key.
const WRITES_IN_RANGE: &str = "SELECT count(*) FROM writes WHERE thread_id = ?1 \
     AND (checkpoint_ns, checkpoint_id) >= (?2, ?3) AND (checkpoint_ns, checkpoint_id) <= (?4, ?5)";

/// What a SQLite target holds under a key a copy wrote.
enum Held {
    /// The row and its write rows as sent, byte for byte.
    AsSent,
    /// No checkpoint under the key.
    Missing,
    /// Something else: the row and its write rows (in `get_tuple`'s order) as stored.
    Other(StoredRow, Vec<StoredWrite>),
}

/// What a SQLite target holds under each of `keys`, by position, against what was
/// `sent` there (each row and its write rows). Compared in place, as the file gives
/// the cells, and copied out only where they differ (copying out every row read back
/// took a tenth of a copy's samples out of Postgres, 2026-12-03); a row's cells and
/// write rows found equal before one that differs are `sent`'s.
///
/// `keys` are in the file's (bytewise) order; each thread's run is read with a range
/// from the lowest of its keys to the highest: a lookup per checkpoint and one per
/// checkpoint's writes took 19% of a 100,000-checkpoint copy's samples out of Postgres
/// (2026-11-29).
fn read_back(
    conn: &rusqlite::Connection,
    keys: &[(&str, &str, &str)],
    sent: &[(&StoredRow, &[StoredWrite])],
) -> rusqlite::Result<Vec<Held>> {
    let mut held: Vec<Held> = keys.iter().map(|_| Held::Missing).collect();
    // Per key: how many of its write rows were read.
    let mut writes_read: Vec<usize> = keys.iter().map(|_| 0).collect();
    by_ranges(conn, CHECKPOINTS_BY_RANGE, keys, |i, _, r| {
        if let (Some(slot), Some((row, _))) = (held.get_mut(i), sent.get(i)) {
            *slot = if row_is(r, row)? {
                Held::AsSent
            } else {
                let stored = StoredRow {
                    parent: r.get(2)?,
                    type_tag: r.get(3)?,
                    checkpoint: cell_bytes(r, 4)?,
                    metadata: cell_bytes(r, 5)?,
                };
                Held::Other(stored, Vec::new())
            };
        }
        Ok(())
    })?;
    by_ranges(conn, &writes_by_range("task_path"), keys, |i, _, r| {
        let (Some(slot), Some(read), Some((row, writes))) =
            (held.get_mut(i), writes_read.get_mut(i), sent.get(i))
        else {
            return Ok(());
        };
        let n = *read;
        *read += 1;
        match slot {
            // Writes of a checkpoint that is not there are not read back.
            Held::Missing => {}
            Held::AsSent => {
                let same = match writes.get(n) {
                    Some(w) => write_is(r, 2, w)?,
                    None => false,
                };
                if !same {
                    let mut stored = writes.get(..n).unwrap_or_default().to_vec();
                    stored.push(stored_write(r, 2)?);
                    *slot = Held::Other((*row).clone(), stored);
                }
            }
            Held::Other(_, stored) => stored.push(stored_write(r, 2)?),
        }
        Ok(())
    })?;
    // Fewer write rows than sent.
    for ((slot, read), (row, writes)) in held.iter_mut().zip(&writes_read).zip(sent) {
        if matches!(slot, Held::AsSent) && *read != writes.len() {
            *slot = Held::Other(
                (*row).clone(),
                writes.get(..*read).unwrap_or_default().to_vec(),
            );
        }
    }
    Ok(held)
}

/// Whether a checkpoint and its metadata, as stored, read as `get_tuple` reads them:
/// the checkpoint one well-formed msgpack map whose `id` is `id`, the metadata a JSON
/// object.
fn carriable(id: &str, checkpoint: &[u8], metadata: &[u8]) -> bool {
    let top = crate::msgpack::LazyValue::new(checkpoint);
    let whole = top.bytes().is_ok_and(|b| b.len() == checkpoint.len());
    let id_is_key = matches!(
        top.get("id").map(|v| v.map(|v| v.decode())),
        Ok(Some(Ok(crate::msgpack::ValueRef::Str(s)))) if s == id
    );
    whole
        && id_is_key
        && matches!(
            crate::json::parse(metadata, METADATA_MAX_DEPTH),
            Ok(crate::Value::Map(_))
        )
}
