//! The reading side of a [`copy`](super::copy): the source's checkpoint keys a page at
//! a time ([`Cursor`]), its checkpoints with their pending writes read ahead in batches
//! bounded by count and bytes ([`Reading`]), the source reopened after a lost
//! connection or a lock wait, the threads a target holds that the source does not
//! ([`clashes`]), and the threads left out that a target holds part of
//! ([`partly_copied`]).

use std::collections::BTreeSet;
use std::sync::Arc;

use super::super::backend::ph;
use super::super::engine::Engine;
use super::super::error::{read_failure, StoreFault};
use super::super::inspect::AnyStore;
use super::super::pipeline::BatchSource;
use super::super::raw::{lock, sq, Param, Raw, Result};
use super::super::retry::{is_lock_conflict, Retry};
use super::batch::{insert_blobs, pending_bytes, Body, Pending, Spent};
use super::ranges::{
    by_ranges, runs, stored_write, write_rows, write_rows_of, writes_by_range, CHECKPOINTS_BY_RANGE,
};
use super::writer::Writer;
use super::SOURCE_LOCK_TIMEOUT;
use crate::error::Error;
use crate::kind::ErrorKind;
use crate::saver::layout::StoreLayout;
use crate::saver::sqlite::{StoredRow, StoredWrite};
use crate::saver::CheckpointTuple;
use crate::serializer::Serializer;

pub(super) async fn count(raw: &Raw, thread: Option<&str>) -> Result<u64> {
    let sqlite = raw.is_sqlite();
    let sql = match thread {
        Some(_) => format!(
            "SELECT count(*) FROM checkpoints WHERE thread_id = {}",
            ph(sqlite, 1)
        ),
        None => "SELECT count(*) FROM checkpoints".to_owned(),
    };
    let params: Vec<Param<'_>> = thread.into_iter().map(Param::from).collect();
    let row = raw.first_row("count", &sql, &params).await?;
    row.map_or(Ok(0), |r| r.count(0))
}

/// A page of `(thread, ns, id)` keys after `after`, in key order.
pub(super) async fn key_page(
    raw: &Raw,
    thread: Option<&str>,
    after: Option<&(String, String, String)>,
    limit: usize,
) -> Result<Vec<(String, String, String)>> {
    let c = raw.cols();
    let sqlite = raw.is_sqlite();
    let mut conds = Vec::new();
    let mut params: Vec<String> = Vec::new();
    if let Some(t) = thread {
        params.push(t.to_owned());
        conds.push(format!("thread_id = {}", ph(sqlite, params.len())));
    }
    if let Some((t, n, i)) = after {
        let base = params.len();
        params.extend([t.clone(), n.clone(), i.clone()]);
        conds.push(format!(
            "(thread_id, {}, {}) > ({}, {}, {})",
            c.ns,
            c.id,
            ph(sqlite, base + 1),
            ph(sqlite, base + 2),
            ph(sqlite, base + 3)
        ));
    }
    let sql = format!(
        "SELECT thread_id, {ns}, {id} FROM checkpoints{w} ORDER BY thread_id, {ns}, {id} LIMIT {limit}",
        ns = c.ns,
        id = c.id,
        w = if conds.is_empty() {
            String::new()
        } else {
            format!(" WHERE {}", conds.join(" AND "))
        }
    );
    let params: Vec<Param<'_>> = params.iter().map(|p| Param::from(p.as_str())).collect();
    raw.rows("copy", &sql, &params)
        .await?
        .iter()
        .map(|r| Ok((r.thread(0)?, r.text(1)?, r.text(2)?)))
        .collect()
}

/// The source's checkpoint keys in order, a page at a time, thread after thread of
/// the selection, leaving out the keys of the threads excluded.
pub(super) struct Cursor<'a> {
    threads: &'a [Option<&'a str>],
    except: &'a BTreeSet<String>,
    thread: usize,
    after: Option<(String, String, String)>,
    page: std::collections::VecDeque<(String, String, String)>,
    page_size: usize,
}

impl<'a> Cursor<'a> {
    pub(super) fn new(
        threads: &'a [Option<&'a str>],
        except: &'a BTreeSet<String>,
        page_size: usize,
    ) -> Self {
        Cursor {
            threads,
            except,
            thread: 0,
            after: None,
            page: std::collections::VecDeque::new(),
            page_size,
        }
    }

    /// Whether it reads every thread (not threads named), its keys then all in the
    /// table's order.
    pub(super) fn every_thread(&self) -> bool {
        self.threads.iter().all(Option::is_none)
    }

    /// The next key, `None` after the last; a page read again on a re-opened
    /// connection after a lost one.
    pub(super) async fn next(
        &mut self,
        src: &mut AnyStore,
        source: &str,
        retry: &mut Retry,
    ) -> Result<Option<(String, String, String)>> {
        loop {
            if let Some(key) = self.page.pop_front() {
                return Ok(Some(key));
            }
            let Some(thread) = self.threads.get(self.thread) else {
                return Ok(None);
            };
            let page = loop {
                match key_page(&src.raw, *thread, self.after.as_ref(), self.page_size).await {
                    Ok(page) => break retry.ok(page),
                    Err(e) => reopen_source(src, source, retry, e).await?,
                }
            };
            if page.len() < self.page_size {
                self.thread += 1;
                self.after = None;
            } else {
                self.after = page.last().cloned();
            }
            let except = self.except;
            self.page
                .extend(page.into_iter().filter(|(t, _, _)| !except.contains(t)));
        }
    }
}

/// Checkpoints read from a Postgres source at once at most: one statement for their
/// tuples and one for their writes (one round trip per checkpoint made a copy out of
/// Postgres wait on the network most of its time). Measured 2026-11-29, 100,000
/// checkpoints Postgres → SQLite, each read decoded on a task of its own: 128 took
/// 11.55–12.63 s at a 47–49 MiB peak, 256 11.59–12.11 s at 58–60 MiB, 64 about a
/// second more.
pub(super) const READ_AHEAD: usize = 128;

/// Checkpoints read from a SQLite source at once at most (one range of keys per
/// thread). Fewer than from Postgres: the read blocks the copy's task, and with it
/// whatever that task drives meanwhile (a batch into Postgres, a dozen round trips,
/// once waited for a whole read of 64 at each; that batch now goes on a task of its
/// own, where 64 measured no faster than 16: 13.51–15.24 s against 14.09–15.21 s,
/// 2026-11-29).
pub(super) const READ_AHEAD_SQLITE: usize = 16;

/// Reads of the source (of [`Reading::read_size`] checkpoints each) in flight at once:
/// while one waits for the server, another's rows are decoded. Measured 2026-11-29,
/// 100,000 checkpoints Postgres → SQLite: one read at a time 15.2–15.4 s, two
/// 12.2–14.6 s, three 12.5–12.7 s.
const READS_AT_ONCE: usize = 3;

/// The reading side of a copy: batches of source checkpoints, bounded by count and
/// by bytes.
pub(super) struct Reading<'a> {
    /// The source, and how it was given (to open it again after a lost connection).
    pub(super) src: &'a mut AnyStore,
    pub(super) source: &'a str,
    pub(super) cursor: Cursor<'a>,
    /// The pace, and the source's losses (and lock conflicts) in a row and in all.
    pub(super) engine: Engine,
    /// Checkpoints read and not yet in a batch: the rest of the last read, and the
    /// one that would have taken the last batch over its bytes.
    pub(super) ahead: std::collections::VecDeque<Pending>,
    /// The largest checkpoint read so far (bytes, as a batch counts them): how many
    /// are read at once is sized from it.
    pub(super) largest: usize,
    pub(super) batch_size: usize,
    pub(super) batch_bytes: usize,
    pub(super) serdes: (&'a Arc<dyn Serializer>, &'a Arc<dyn Serializer>),
    pub(super) writer: &'a Writer,
    pub(super) clear: bool,
    /// The batch last done with, dropped here before the next is read.
    pub(super) spent: Spent,
}

impl Reading<'_> {
    /// How many checkpoints the next read of `src` takes: up to [`READ_AHEAD`] (from
    /// SQLite [`READ_AHEAD_SQLITE`]) and one batch, as many as half a batch's bytes
    /// holds of the largest seen so far (one at first).
    pub(super) fn read_size(&self) -> usize {
        if self.largest == 0 {
            return 1;
        }
        let most = match self.src.raw {
            Raw::Sqlite { .. } => READ_AHEAD_SQLITE,
            Raw::Postgres { .. } => READ_AHEAD,
        };
        (self.batch_bytes / 2 / self.largest).clamp(1, most.min(self.batch_size))
    }

    /// The next batch (empty after the last): full, or as many checkpoints as fit
    /// its bytes (a checkpoint larger than that goes alone). The source is read
    /// [`READS_AT_ONCE`] reads of [`read_size`](Self::read_size) at a time.
    pub(super) async fn batch(&mut self) -> Result<Vec<Pending>> {
        let mut batch = Vec::new();
        let mut held = 0usize;
        while batch.len() < self.batch_size {
            if self.ahead.is_empty() {
                let mut keys = Vec::new();
                while keys.len() < self.read_size() * READS_AT_ONCE {
                    match self
                        .cursor
                        .next(self.src, self.source, self.engine.retry())
                        .await?
                    {
                        Some(key) => keys.push(key),
                        None => break,
                    }
                }
                if keys.is_empty() {
                    break;
                }
                self.engine.pace(keys.len() as u64).await;
                let (read_serde, write_serde) = self.serdes;
                let every = self.cursor.every_thread();
                let read = loop {
                    let src: &AnyStore = self.src;
                    let chunks = runs(&keys, self.read_size(), every);
                    // [`READS_AT_ONCE`] reads in flight at most (of threads named, one
                    // thread's keys each: there may be more reads than that).
                    let read = async {
                        let mut read = Vec::new();
                        for group in chunks.chunks(READS_AT_ONCE) {
                            let reads = group.iter().map(|chunk| {
                                read_pending(
                                    src,
                                    read_serde,
                                    write_serde,
                                    (self.writer, self.clear),
                                    chunk,
                                )
                            });
                            read.extend(futures_util::future::try_join_all(reads).await?);
                        }
                        Ok::<_, Error>(read)
                    }
                    .await;
                    match read {
                        Ok(read) => {
                            break self
                                .engine
                                .ok(read.into_iter().flatten().collect::<Vec<_>>())
                        }
                        Err(e) if e.kind() == ErrorKind::UnreadableRow => {
                            return Err(self.stopped_at(e, &keys).await);
                        }
                        Err(e) => {
                            reopen_source(self.src, self.source, self.engine.retry(), e).await?
                        }
                    }
                };
                for p in &read {
                    self.largest = self.largest.max(p.bytes);
                }
                self.ahead.extend(read);
                // Lets the batch being written go on between two reads.
                tokio::task::yield_now().await;
            }
            let Some(pending) = self.ahead.pop_front() else {
                break;
            };
            let size = pending.bytes;
            if !batch.is_empty() && held.saturating_add(size) > self.batch_bytes {
                self.ahead.push_front(pending);
                break;
            }
            held = held.saturating_add(size);
            batch.push(pending);
        }
        Ok(batch)
    }
}

impl Reading<'_> {
    /// `e`, an unreadable row met reading `keys`, as [`StoreFault::CopyStopped`]: the
    /// keys are read again one at a time, and the thread of the first that fails again
    /// is named with what the operator can do. `e` as it is if none does (the row
    /// changed meanwhile).
    async fn stopped_at(&self, e: Error, keys: &[(String, String, String)]) -> Error {
        let (read_serde, write_serde) = self.serdes;
        for key in keys {
            let alone = std::slice::from_ref(key);
            let again = read_pending(
                self.src,
                read_serde,
                write_serde,
                (self.writer, self.clear),
                alone,
            )
            .await;
            if again.is_err_and(|e| e.kind() == ErrorKind::UnreadableRow) {
                return copy_stopped(e, &key.0, self.src);
            }
        }
        e
    }
}

/// `cause`, a row of `thread` the copy cannot read, with what to do next
/// ([`StoreFault::CopyStopped`]).
pub(super) fn copy_stopped(cause: Error, thread: &str, src: &AnyStore) -> Error {
    StoreFault::CopyStopped {
        thread: thread.to_owned(),
        store: src.raw.shown().to_owned(),
        cause,
    }
    .into()
}

impl BatchSource for Reading<'_> {
    type Batch = Vec<Pending>;

    async fn next_batch(&mut self) -> Result<Option<Vec<Pending>>> {
        self.spent.drop_here();
        let batch = self.batch().await?;
        Ok(Some(batch).filter(|b| !b.is_empty()))
    }
}

/// Source checkpoints read for the batch, in the order of `keys`, a run of the source's
/// keys in its own order (as [`runs`] makes them; from Postgres they are read as a
/// range, as [`write_rows_of`] reads them): each one's tuple
/// (pending `Send`s of a `v < 4` checkpoint put where Python's Postgres reader looks
/// for them, when the target is Postgres) and its pending writes re-serialized for the
/// target. Reads only: done again whole after a lost source connection.
pub(super) async fn read_pending(
    src: &AnyStore,
    read_serde: &Arc<dyn Serializer>,
    write_serde: &Arc<dyn Serializer>,
    (writer, clear): (&Writer, bool),
    keys: &[(String, String, String)],
) -> Result<Vec<Pending>> {
    // Clear msgpack rows of Python's SQLite layout, written in clear: into a SQLite
    // store carried as stored, into Postgres split without decoding their blobs.
    let carry = clear
        && matches!(
            src.raw.layout(),
            StoreLayout::SqlitePython | StoreLayout::SqlitePythonBeforeTaskPath
        );
    // Into a clear store, a Postgres source's clear blob values go as stored.
    let (carried, writes_of, tuples): (Vec<Option<Body>>, _, _) = match &src.raw {
        Raw::Sqlite { conn, .. } if carry => {
            let (rows, writes) =
                carried_rows(&lock(conn), src.raw.cols().w_path, keys).map_err(sq("copy"))?;
            let bodies: Vec<Option<Body>> = rows
                .into_iter()
                .zip(keys)
                .map(|(row, key)| row.and_then(|row| writer.carry(&**read_serde, key, row)))
                .collect();
            let decode: Vec<(String, String, String)> = keys
                .iter()
                .zip(&bodies)
                .filter(|(_, c)| c.is_none())
                .map(|(k, _)| k.clone())
                .collect();
            let tuples = src
                .tuples_without_writes(read_serde, &decode, clear)
                .await?;
            (bodies, writes, tuples)
        }
        // The writes and the checkpoints at once (the source saver reads on a
        // connection of its own, so the server works on both).
        _ => {
            let (writes, tuples) = futures_util::future::try_join(
                write_rows_of(&src.raw, keys),
                src.tuples_without_writes(read_serde, keys, clear),
            )
            .await?;
            (keys.iter().map(|_| None).collect(), writes, tuples)
        }
    };
    let mut tuples = tuples.into_iter();
    let mut writes_of = writes_of.into_iter();
    let mut out = Vec::with_capacity(keys.len());
    for ((t, ns, id), carried) in keys.iter().zip(carried) {
        let body = match carried {
            Some(body) => body,
            None => {
                let (mut tuple, mut blobs) =
                    tuples
                        .next()
                        .flatten()
                        .ok_or_else(|| StoreFault::Unreadable {
                            what: format!("checkpoint {t}/{ns:?}/{id}"),
                            reason: "vanished from the source during the copy".to_owned(),
                        })?;
                // Pending `Send`s of a `v < 4` checkpoint (no JSONB form) go where
                // Python's Postgres reader looks for them; verified as stored so.
                if writer.moves_sends() {
                    if tuple.checkpoint.v < 4 {
                        // The sends may take a channel's place: every value decoded.
                        insert_blobs(&mut tuple, blobs.drain(..), &**read_serde)?;
                    }
                    let parent_sends = parent_sends(&src.raw, read_serde, &tuple, t, ns).await?;
                    writer.sends_to_tasks(&mut tuple.checkpoint, &parent_sends)?;
                }
                if blobs.is_empty() {
                    Body::Decoded(Box::new(tuple))
                } else {
                    Body::Split {
                        tuple: Box::new(tuple),
                        blobs,
                        row: None,
                    }
                }
            }
        };
        // A value in clear msgpack, written in clear, is carried as its bytes: what
        // `dumps_typed` of its decoded value gives, without the decode and encode (the
        // read-back compares the decoded writes).
        let mut writes = Vec::new();
        for mut w in writes_of.next().unwrap_or_default() {
            if clear && w.type_tag.as_deref() == Some("msgpack") && w.value.is_some() {
                writes.push(w);
                continue;
            }
            let at = || format!("write {t}/{ns:?}/{id}/{}/{}", w.task_id, w.idx);
            let value =
                read_serde
                    .loads_typed(w.tag(), w.data())
                    .map_err(|e| StoreFault::Unreadable {
                        what: at(),
                        reason: read_failure(&e),
                    })?;
            let typed = write_serde
                .dumps_typed(&value)
                .map_err(|e| StoreFault::Unreadable {
                    what: at(),
                    reason: e.to_string(),
                })?;
            w.value = Some(typed.data.to_vec());
            w.type_tag = Some(typed.type_tag.to_string());
            writes.push(w);
        }
        let bytes = pending_bytes(&body, &writes);
        out.push(Pending {
            thread: t.clone(),
            ns: ns.clone(),
            id: id.clone(),
            body,
            writes,
            bytes,
        });
    }
    Ok(out)
}

/// The stored columns of each of `keys` (a SQLite source in Python's layout) that may
/// be carried into the target without decoding its blobs, and every key's write rows
/// (in [`write_rows`]'s order). A row may be carried when its `type` is `msgpack` (a
/// clear value), its checkpoint a BLOB and its metadata text or a BLOB; the writer's
/// [`carry`](super::writer::CopyWriter::carry) looks closer (into SQLite as stored,
/// into Postgres split), and every other row (`None` here or there) is decoded and
/// written by `put`, which reports what it cannot read.
///
/// Read a thread at a time with a range of keys, in the copy's read transaction
/// (`keys` are the source's keys in order, so each thread's run is every key of that
/// range): one lookup per checkpoint and one per checkpoint's writes took a quarter of
/// a 100,000-checkpoint copy's samples (2026-11-29).
#[allow(clippy::type_complexity)]
fn carried_rows(
    conn: &rusqlite::Connection,
    task_path: &str,
    keys: &[(String, String, String)],
) -> rusqlite::Result<(Vec<Option<StoredRow>>, Vec<Vec<StoredWrite>>)> {
    use rusqlite::types::ValueRef as Cell;
    let mut rows: Vec<Option<StoredRow>> = keys.iter().map(|_| None).collect();
    let mut writes: Vec<Vec<StoredWrite>> = keys.iter().map(|_| Vec::new()).collect();
    by_ranges(conn, CHECKPOINTS_BY_RANGE, keys, |i, _, r| {
        let Some(slot) = rows.get_mut(i) else {
            return Ok(());
        };
        let parent = match r.get_ref(2)? {
            Cell::Text(p) => std::str::from_utf8(p).ok().map(|p| Some(p.to_owned())),
            Cell::Null => Some(None),
            _ => None,
        };
        let (Some(parent), Cell::Text(b"msgpack"), Cell::Blob(checkpoint)) =
            (parent, r.get_ref(3)?, r.get_ref(4)?)
        else {
            return Ok(());
        };
        let (Cell::Blob(metadata) | Cell::Text(metadata)) = r.get_ref(5)? else {
            return Ok(());
        };
        *slot = Some(StoredRow {
            parent,
            type_tag: Some("msgpack".to_owned()),
            checkpoint: Some(checkpoint.to_vec()),
            metadata: Some(metadata.to_vec()),
        });
        Ok(())
    })?;
    by_ranges(conn, &writes_by_range(task_path), keys, |i, _, r| {
        if let Some(slot) = writes.get_mut(i) {
            slot.push(stored_write(r, 2)?);
        }
        Ok(())
    })?;
    Ok((rows, writes))
}

/// After a read of the source `given` failed with `e`: a lost Postgres connection, or
/// a lock wait given up or a deadlock (within `retry`'s limit, in a row with losses), is
/// waited on and the source opened again (its layout detected again: what waited may
/// have been a schema change), in a new read transaction; any other error is returned.
/// After a lock conflict the read transaction ends first, so that what waited for it
/// (an `ALTER TABLE` the read queued behind) goes through while the copy waits.
pub(super) async fn reopen_source(
    src: &mut AnyStore,
    given: &str,
    retry: &mut Retry,
    e: Error,
) -> Result<()> {
    if src.raw.is_sqlite() {
        return Err(e);
    }
    let locked = is_lock_conflict(&e);
    if locked {
        src.raw.end_snapshot().await;
    }
    retry.lost_or_locked(e).await?;
    let opened = async {
        let new = AnyStore::open_with_lock_timeout(given, SOURCE_LOCK_TIMEOUT).await?;
        new.raw.begin_snapshot(true).await?;
        Ok(new)
    }
    .await;
    match retry.reopened(opened)? {
        Some(new) => *src = new,
        // Not re-opened (the server away): the old connection, alive, reads in a new
        // read transaction; lost, its next read counts one more loss.
        None if locked => {
            let _ = src.raw.begin_snapshot(true).await;
        }
        None => {}
    }
    Ok(())
}

/// The `__pregel_tasks` write values of the parent of a `v < 4` checkpoint that has
/// pending sends, in the order Python's Postgres reader takes them (task path, task
/// id, index); empty for any other checkpoint (nothing is read).
pub(super) async fn parent_sends(
    raw: &Raw,
    serde: &Arc<dyn Serializer>,
    tuple: &CheckpointTuple,
    thread: &str,
    ns: &str,
) -> Result<Vec<crate::Value>> {
    let pending = matches!(
        tuple.checkpoint.extra.get("pending_sends"),
        Some(crate::Value::Array(sends)) if !sends.is_empty()
    );
    let parent = tuple
        .parent_config
        .as_ref()
        .and_then(|p| p.checkpoint_id.as_deref());
    let (true, Some(parent)) = (tuple.checkpoint.v < 4 && pending, parent) else {
        return Ok(Vec::new());
    };
    let mut sends = Vec::new();
    for w in write_rows(raw, thread, ns, parent).await? {
        if w.channel != "__pregel_tasks" {
            continue;
        }
        sends.push(
            serde
                .loads_typed(w.tag(), w.data())
                .map_err(|e| StoreFault::Unreadable {
                    what: format!("write {thread}/{ns:?}/{parent}/{}/{}", w.task_id, w.idx),
                    reason: read_failure(&e),
                })?,
        );
    }
    Ok(sends)
}

/// How many threads of the selection `target` holds with a checkpoint `source` does
/// not have (while `source` has the thread), and the first few of them. Reads the
/// target's checkpoint keys a page at a time and asks the source about each page in
/// one query.
pub(super) async fn clashes(
    source: &Raw,
    target: &Raw,
    (threads, except): (&[Option<&str>], &BTreeSet<String>),
    page_size: usize,
) -> Result<(u64, Vec<String>)> {
    const SAMPLE: usize = 10;
    let mut count = 0u64;
    let mut sample = Vec::new();
    // Keys come in thread order, so a thread's clashing keys are contiguous.
    let mut last_counted: Option<String> = None;
    for thread in threads {
        let mut after: Option<(String, String, String)> = None;
        loop {
            let page = key_page(target, *thread, after.as_ref(), page_size).await?;
            let Some(last) = page.last().cloned() else {
                break;
            };
            for t in source.foreign_checkpoints(&page).await? {
                if last_counted.as_ref() == Some(&t) || except.contains(&t) {
                    continue;
                }
                count += 1;
                if sample.len() < SAMPLE {
                    sample.push(t.clone());
                }
                last_counted = Some(t);
            }
            if page.len() < page_size {
                break;
            }
            after = Some(last);
        }
    }
    Ok((count, sample))
}

/// Of the threads left out of a copy (`except`, where the selection `threads` takes
/// them), those `target` holds some but not all of `source`'s checkpoints of: a copy
/// that stopped inside such a thread before it was left out leaves its older
/// checkpoints there, and Python would read an older state. `(thread, checkpoints in
/// the target, in the source)`, by thread.
pub(super) async fn partly_copied(
    source: &Raw,
    target: &Raw,
    (threads, except): (&[Option<&str>], &BTreeSet<String>),
    page_size: usize,
) -> Result<Vec<(String, u64, u64)>> {
    let every = threads.contains(&None);
    let mut out = Vec::new();
    for thread in except
        .iter()
        .filter(|e| every || threads.contains(&Some(e.as_str())))
    {
        let (mut there, mut all) = (0u64, 0u64);
        let mut after: Option<(String, String, String)> = None;
        loop {
            let page = key_page(source, Some(thread), after.as_ref(), page_size).await?;
            let Some(last) = page.last().cloned() else {
                break;
            };
            all += page.len() as u64;
            there += target.present_checkpoints(&page).await?;
            if page.len() < page_size {
                break;
            }
            after = Some(last);
        }
        if there > 0 && there < all {
            out.push((thread.clone(), there, all));
        }
    }
    Ok(out)
}

/// Keys in one `VALUES` list at most: three parameters each, well under SQLite's
/// 32,766 and Postgres's 65,535 parameters a statement, whatever page size the caller
/// reads keys in.
const KEYS_PER_QUERY: usize = 500;

/// `keys` as the rows of a `VALUES` list of `(thread, ns, id, position)` and its
/// parameters, texts on Postgres.
fn key_values(sqlite: bool, keys: &[(String, String, String)]) -> (String, Vec<Param<'_>>) {
    let cast = if sqlite { "" } else { "::text" };
    let values: Vec<String> = (0..keys.len())
        .map(|k| {
            let p = |i| ph(sqlite, 3 * k + i);
            format!("({}{cast}, {}{cast}, {}{cast}, {k})", p(1), p(2), p(3))
        })
        .collect();
    let params = keys
        .iter()
        .flat_map(|(t, n, i)| [t, n, i])
        .map(|p| Param::from(p.as_str()))
        .collect();
    (values.join(", "), params)
}

impl Raw {
    /// How many of `keys` (thread, namespace, id) this store holds.
    async fn present_checkpoints(&self, keys: &[(String, String, String)]) -> Result<u64> {
        let c = self.cols();
        let mut present = 0;
        for chunk in keys.chunks(KEYS_PER_QUERY) {
            let (values, params) = key_values(self.is_sqlite(), chunk);
            let sql = format!(
                "WITH v(t, n, i, o) AS (VALUES {values}) SELECT count(*) FROM v WHERE EXISTS \
                 (SELECT 1 FROM checkpoints c WHERE c.thread_id = v.t AND {} = v.n AND {} = v.i)",
                c.ns, c.id
            );
            let row = self.first_row("copy", &sql, &params).await?;
            present += row.map_or(Ok(0), |r| r.count(0))?;
        }
        Ok(present)
    }

    /// Of `keys` (thread, namespace, id), the threads of those this store does not hold
    /// while holding other checkpoints of their thread: one thread per run of such keys,
    /// in order.
    pub(super) async fn foreign_checkpoints(
        &self,
        keys: &[(String, String, String)],
    ) -> Result<Vec<String>> {
        let c = self.cols();
        let mut out: Vec<String> = Vec::new();
        for chunk in keys.chunks(KEYS_PER_QUERY) {
            let (values, params) = key_values(self.is_sqlite(), chunk);
            let sql = format!(
                "WITH v(t, n, i, o) AS (VALUES {values}) SELECT v.t FROM v \
                 WHERE EXISTS (SELECT 1 FROM checkpoints c WHERE c.thread_id = v.t) \
                 AND NOT EXISTS (SELECT 1 FROM checkpoints c WHERE c.thread_id = v.t AND {} = v.n AND {} = v.i) \
                 ORDER BY v.o",
                c.ns, c.id
            );
            let found: Vec<String> = self
                .rows("copy", &sql, &params)
                .await?
                .iter()
                .map(|r| r.text(0))
                .collect::<Result<_>>()?;
            for t in found {
                if out.last() != Some(&t) {
                    out.push(t);
                }
            }
        }
        Ok(out)
    }

    /// Whether the checkpoint is in this store.
    pub(crate) async fn checkpoint_exists(&self, thread: &str, ns: &str, id: &str) -> Result<bool> {
        let c = self.cols();
        let sqlite = self.is_sqlite();
        let sql = format!(
            "SELECT count(*) FROM checkpoints WHERE thread_id = {} AND {} = {} AND {} = {}",
            ph(sqlite, 1),
            c.ns,
            ph(sqlite, 2),
            c.id,
            ph(sqlite, 3)
        );
        let row = self
            .first_row("copy", &sql, &[thread.into(), ns.into(), id.into()])
            .await?;
        let n = row.map_or(Ok(0), |r| r.count(0))?;
        Ok(n > 0)
    }
}
