//! [`copy`]: every thread, or selected ones, from one store to another — SQLite →
//! Postgres, Postgres → SQLite, or the same backend — with ids, parents, pending
//! writes (task ids, task paths, indices) and metadata as Python writes them for the
//! target backend.
//!
//! Each checkpoint is read from the source (any layout `saver::layout` detects:
//! Postgres stores before Python's migration 9 and LangGraphJS's are read, with only
//! `SELECT`s, as Python reads them after its `setup()`: a missing task path is `''`;
//! the shallow saver's as it reads them: one checkpoint per thread and namespace,
//! without a parent) and decoded with the key ring, then
//! written by the **target saver's own `put`** (the SQLite saver serializes the whole checkpoint into one row;
//! the Postgres saver splits channel values into inline JSONB primitives and blobs
//! keyed by channel and version), with its parent as Python's `put` receives it. Its
//! pending writes are written before it, row by row with their stored task id, task
//! path and index (a `put_writes` call would renumber them from their positions),
//! their values serialized by the target's serializer. An empty target first gets
//! Python's tables from the savers' `setup()`.
//!
//! **Pending sends of old checkpoints (into Postgres):** a checkpoint from before `v`
//! 4 (LangGraph 0.2 to 0.4) keeps its pending `Send`s in `pending_sends`, which JSONB
//! cannot hold. Copied into Postgres, they become the `__pregel_tasks` channel at the
//! checkpoint's highest channel version, without `pending_sends`
//! ([`PostgresSaver::pending_sends_to_tasks`](crate::saver::postgres::PostgresSaver::pending_sends_to_tasks)):
//! what langgraph's `Pregel._migrate_checkpoint` makes of the source checkpoint on
//! reading, and where Python's Postgres reader puts them (from the parent's
//! `__pregel_tasks` writes, which the copy carries too). The verification compares the
//! read-back with the checkpoint in that form.
//!
//! **Encryption:** values are decrypted with every key of the ring and written by a
//! serializer with the primary key (`LANGGRAPH_AES_KEY`), so a copy with a new
//! primary key re-encrypts on the way; without keys the target is written in clear
//! (and an encrypted source cannot be read).
//!
//! **Batches:** checkpoints go in batches ([`DEFAULT_COPY_BATCH`] of them, fewer when
//! they hold more than about [`DEFAULT_COPY_BATCH_BYTES`]): one target transaction
//! inserts the batch's pending writes, another puts its checkpoints through the target
//! saver (`put_batch`: the rows of `put`, one commit; into Postgres both with `COPY`),
//! then the batch is verified. While one batch is written and verified, the next is
//! read from the source.
//!
//! **Resumable:** a checkpoint already in the target is not written again (its
//! writes are inserted if missing: inserts only take free keys). Writes commit before
//! their checkpoints, so killed at any point, a copy leaves whole checkpoints whose
//! writes are already there; run it again to finish. **Verified:** every copied or
//! present checkpoint is read back through the target saver's `get_tuple` (a few at a
//! time) and compared with the source (checkpoint, metadata, parent, pending writes in
//! order); counts are reported. Memory holds one batch and one page of keys. Needs a
//! Tokio runtime (the read-backs are Tokio tasks).

use std::sync::Arc;
use std::time::Instant;

use serde::Serialize;
use tokio_postgres::types::ToSql;

use super::error::StoreFault;
mod batch;

use batch::{flush, pending_bytes, Pending, WriteRow, Writer};

use super::inspect::{pg_copy_target, AnyStore};
use super::keys::StoreKeys;
use super::ops::{Progress, ProgressFn, Throttle};
use super::raw::{cell_bytes, pg, ph, serializer, sq, Raw, Result};
use super::retry::{Retry, DEFAULT_MAX_RECONNECTS};
use super::target::{open_target, NewTarget};
use super::Location;
use crate::crypto::EncryptedSerializer;
use crate::error::Error;
use crate::saver::sqlite::SqliteSaver;
use crate::saver::CheckpointTuple;
use crate::serializer::Serializer;
use crate::JsonPlusSerializer;

/// Options of [`copy`].
#[derive(Clone, Default)]
pub struct CopyOptions {
    threads: Vec<String>,
    dry_run: bool,
    merge: bool,
    max_rows_per_sec: Option<u64>,
    page_size: Option<usize>,
    batch_size: Option<usize>,
    batch_bytes: Option<usize>,
    progress: Option<ProgressFn>,
}

/// How long a read of a Postgres source waits for a lock before the copy steps aside
/// (ends its read transaction, waits, and reads on in a new one). The copy's `SELECT`s
/// conflict only with an exclusive table lock (`ALTER TABLE` of `lgcodec store upgrade`
/// or Python's `setup()`, `VACUUM FULL`, `TRUNCATE`). Such a statement waits for the
/// copy's read transaction, and every other reader and writer of the table (the
/// application's) waits behind it: this is how long they stall, so a few seconds, not
/// more. Not less either: an `ALTER TABLE` queued behind someone else's transaction,
/// not the copy's, usually gets its lock and is done within that, and the read then
/// goes through without the copy giving up its snapshot.
const SOURCE_LOCK_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(3);

/// Checkpoints written per target transaction unless [`CopyOptions::batch_size`] says.
pub const DEFAULT_COPY_BATCH: usize = 256;
/// Bytes (about: the decoded values and the pending writes' serialized bytes) a batch
/// holds at most unless [`CopyOptions::batch_bytes`] says; a checkpoint larger than
/// this goes in a batch of its own.
pub const DEFAULT_COPY_BATCH_BYTES: usize = 16 << 20;

impl std::fmt::Debug for CopyOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CopyOptions")
            .field("threads", &self.threads)
            .field("dry_run", &self.dry_run)
            .field("merge", &self.merge)
            .finish_non_exhaustive()
    }
}

impl CopyOptions {
    /// Every thread; writing.
    pub fn new() -> Self {
        Self::default()
    }

    /// Only these threads (none: every thread).
    pub fn threads(mut self, threads: impl IntoIterator<Item = impl Into<String>>) -> Self {
        self.threads = threads.into_iter().map(Into::into).collect();
        self
    }

    /// Count what would be copied; write nothing (the target is not created).
    pub fn dry_run(mut self, on: bool) -> Self {
        self.dry_run = on;
        self
    }

    /// Copy into threads the target already holds with checkpoints the source does not
    /// have, adding the source's checkpoints to that history. Off by default: such a
    /// copy is refused before anything is written
    /// ([`ErrorKind::HistoryConflict`](crate::ErrorKind::HistoryConflict)), since the
    /// merged thread's latest checkpoint (what Python reads) may be the target's own.
    pub fn merge(mut self, on: bool) -> Self {
        self.merge = on;
        self
    }

    /// At most this many checkpoints read per second from the source, on average (0 or
    /// `None`: no limit).
    pub fn max_rows_per_sec(mut self, rate: Option<u64>) -> Self {
        self.max_rows_per_sec = rate.filter(|r| *r > 0);
        self
    }

    /// Checkpoint keys read per query (at least 1).
    pub fn page_size(mut self, rows: usize) -> Self {
        self.page_size = Some(rows.max(1));
        self
    }

    /// Checkpoints written per target transaction (at least 1; default
    /// [`DEFAULT_COPY_BATCH`]). Each batch is read back and verified before the next
    /// one is read.
    pub fn batch_size(mut self, checkpoints: usize) -> Self {
        self.batch_size = Some(checkpoints.max(1));
        self
    }

    /// Bytes a batch holds at most (default [`DEFAULT_COPY_BATCH_BYTES`]): memory stays
    /// within about this much whatever the size of the store.
    pub fn batch_bytes(mut self, bytes: usize) -> Self {
        self.batch_bytes = Some(bytes.max(1));
        self
    }

    /// Called after each checkpoint (once its batch is written and verified).
    pub fn on_progress(mut self, f: impl Fn(&Progress) + Send + Sync + 'static) -> Self {
        self.progress = Some(Arc::new(f));
        self
    }
}

/// What [`copy`] did.
#[derive(Clone, Debug, Default, Serialize, PartialEq)]
#[non_exhaustive]
pub struct CopyReport {
    /// `copy`.
    pub operation: &'static str,
    /// The source.
    pub source: String,
    /// Its layout.
    pub source_layout: String,
    /// The target.
    pub target: String,
    /// Whether the target got Python's tables.
    pub created_tables: bool,
    /// A dry run (nothing written).
    pub dry_run: bool,
    /// Checkpoints in the source (selected threads).
    pub checkpoints: u64,
    /// Checkpoints written (in a dry run: that would be).
    pub copied: u64,
    /// Checkpoints already in the target.
    pub already_there: u64,
    /// Pending-write rows inserted.
    pub writes_inserted: u64,
    /// Checkpoints read back equal to their source.
    pub verified: u64,
    /// Checkpoints that read back differently (or not at all): which, and how.
    pub mismatches: Vec<String>,
    /// Batches: each wrote its pending writes in one target transaction and its
    /// checkpoints in another, then was read back and verified.
    pub batches: u64,
    /// Postgres: connections re-opened (source or target) after the server closed
    /// them; each batch or checkpoint read in flight then was done again (at most 16
    /// losses in a row, then [`ErrorKind::ConnectionLost`](crate::ErrorKind::ConnectionLost)).
    pub reconnects: u64,
    /// Postgres: times a read of the source waited for a lock for longer than the copy
    /// waits (a schema change such as an `ALTER TABLE` queued behind the copy's read
    /// transaction) or was ended by the server as a deadlock: the copy ended its read
    /// transaction, letting the lock holder through, and read on in a new one (counted
    /// in a row with lost connections, then
    /// [`ErrorKind::LockTimeout`](crate::ErrorKind::LockTimeout)).
    pub lock_retries: u64,
    /// Seconds.
    pub elapsed_s: f64,
}

async fn count(raw: &Raw, thread: Option<&str>) -> Result<u64> {
    let sqlite = matches!(raw, Raw::Sqlite { .. });
    let sql = match thread {
        Some(_) => format!(
            "SELECT count(*) FROM checkpoints WHERE thread_id = {}",
            ph(sqlite, 1)
        ),
        None => "SELECT count(*) FROM checkpoints".to_owned(),
    };
    let n: i64 = match raw {
        Raw::Sqlite { conn, .. } => match thread {
            Some(t) => conn.query_row(&sql, [t], |r| r.get(0)),
            None => conn.query_row(&sql, [], |r| r.get(0)),
        }
        .map_err(sq("count"))?,
        Raw::Postgres { client, .. } => {
            let rows = match thread {
                Some(t) => client.query_one(&sql, &[&t]).await,
                None => client.query_one(&sql, &[]).await,
            }
            .map_err(pg("count"))?;
            rows.try_get(0).map_err(pg("count"))?
        }
    };
    Ok(u64::try_from(n).unwrap_or(0))
}

/// A page of `(thread, ns, id)` keys after `after`, in key order.
async fn key_page(
    raw: &Raw,
    thread: Option<&str>,
    after: Option<&(String, String, String)>,
    limit: usize,
) -> Result<Vec<(String, String, String)>> {
    let c = raw.cols();
    let sqlite = matches!(raw, Raw::Sqlite { .. });
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
    match raw {
        Raw::Sqlite { conn, .. } => {
            let mut stmt = conn.prepare_cached(&sql).map_err(sq("copy"))?;
            let rows = stmt
                .query_map(rusqlite::params_from_iter(params), |r| {
                    Ok((r.get(0)?, r.get(1)?, r.get(2)?))
                })
                .map_err(sq("copy"))?
                .collect::<std::result::Result<Vec<_>, _>>()
                .map_err(sq("copy"))?;
            Ok(rows)
        }
        Raw::Postgres { client, .. } => {
            let refs: Vec<&(dyn ToSql + Sync)> =
                params.iter().map(|p| p as &(dyn ToSql + Sync)).collect();
            let rows = client.query(&sql, &refs).await.map_err(pg("copy"))?;
            rows.iter()
                .map(|r| {
                    Ok((
                        r.try_get(0).map_err(pg("copy"))?,
                        r.try_get(1).map_err(pg("copy"))?,
                        r.try_get(2).map_err(pg("copy"))?,
                    ))
                })
                .collect()
        }
    }
}

async fn write_rows(raw: &Raw, thread: &str, ns: &str, id: &str) -> Result<Vec<WriteRow>> {
    let c = raw.cols();
    let sqlite = matches!(raw, Raw::Sqlite { .. });
    let sql = format!(
        "SELECT task_id, {path}, idx, channel, {ty}, {val} FROM {table} \
         WHERE thread_id = {p1} AND {ns} = {p2} AND {wid} = {p3} ORDER BY {path}, task_id, idx",
        path = c.w_path,
        ty = c.w_ty,
        val = if sqlite { "value" } else { "blob" },
        table = raw.writes_table(),
        ns = c.ns,
        wid = c.w_id,
        p1 = ph(sqlite, 1),
        p2 = ph(sqlite, 2),
        p3 = ph(sqlite, 3),
    );
    match raw {
        Raw::Sqlite { conn, .. } => {
            let mut stmt = conn.prepare_cached(&sql).map_err(sq("copy"))?;
            let rows = stmt
                .query_map([thread, ns, id], |r| {
                    Ok(WriteRow {
                        task_id: r.get(0)?,
                        task_path: r.get(1)?,
                        idx: r.get(2)?,
                        channel: r.get(3)?,
                        tag: r.get::<_, Option<String>>(4)?.unwrap_or_default(),
                        data: cell_bytes(r, 5)?.unwrap_or_default(),
                    })
                })
                .map_err(sq("copy"))?
                .collect::<std::result::Result<Vec<_>, _>>()
                .map_err(sq("copy"))?;
            Ok(rows)
        }
        Raw::Postgres { client, .. } => {
            let rows = client
                .query(&sql, &[&thread, &ns, &id])
                .await
                .map_err(pg("copy"))?;
            rows.iter()
                .map(|r| {
                    Ok(WriteRow {
                        task_id: r.try_get(0).map_err(pg("copy"))?,
                        task_path: r.try_get(1).map_err(pg("copy"))?,
                        idx: i64::from(r.try_get::<_, i32>(2).map_err(pg("copy"))?),
                        channel: r.try_get(3).map_err(pg("copy"))?,
                        tag: r
                            .try_get::<_, Option<String>>(4)
                            .map_err(pg("copy"))?
                            .unwrap_or_default(),
                        data: r
                            .try_get::<_, Option<Vec<u8>>>(5)
                            .map_err(pg("copy"))?
                            .unwrap_or_default(),
                    })
                })
                .collect()
        }
    }
}

/// The pending write rows of each of `keys`, in order, each in [`write_rows`]'s order:
/// from Postgres in one statement, from SQLite checkpoint by checkpoint. (The layout's
/// column expressions are unqualified: only the writes table has those names.)
async fn write_rows_of(raw: &Raw, keys: &[(String, String, String)]) -> Result<Vec<Vec<WriteRow>>> {
    let Raw::Postgres { client, .. } = raw else {
        let mut out = Vec::with_capacity(keys.len());
        for (t, ns, id) in keys {
            out.push(write_rows(raw, t, ns, id).await?);
        }
        return Ok(out);
    };
    let c = raw.cols();
    let sql = format!(
        "SELECT k.n, w.task_id, {path}, w.idx, w.channel, {ty}, w.blob \
         FROM unnest($1::text[], $2::text[], $3::text[]) WITH ORDINALITY AS k(t, ns, id, n) \
         JOIN {table} w ON w.thread_id = k.t AND {ns} = k.ns AND {wid} = k.id \
         ORDER BY k.n, {path}, w.task_id, w.idx",
        path = c.w_path,
        ty = c.w_ty,
        table = raw.writes_table(),
        ns = c.ns,
        wid = c.w_id,
    );
    let threads: Vec<&str> = keys.iter().map(|k| k.0.as_str()).collect();
    let nss: Vec<&str> = keys.iter().map(|k| k.1.as_str()).collect();
    let ids: Vec<&str> = keys.iter().map(|k| k.2.as_str()).collect();
    let rows = client
        .query(&sql, &[&threads, &nss, &ids])
        .await
        .map_err(pg("copy"))?;
    let mut out: Vec<Vec<WriteRow>> = keys.iter().map(|_| Vec::new()).collect();
    for r in &rows {
        let n: i64 = r.try_get(0).map_err(pg("copy"))?;
        let Some(slot) = usize::try_from(n - 1).ok().and_then(|i| out.get_mut(i)) else {
            continue;
        };
        slot.push(WriteRow {
            task_id: r.try_get(1).map_err(pg("copy"))?,
            task_path: r.try_get(2).map_err(pg("copy"))?,
            idx: i64::from(r.try_get::<_, i32>(3).map_err(pg("copy"))?),
            channel: r.try_get(4).map_err(pg("copy"))?,
            tag: r
                .try_get::<_, Option<String>>(5)
                .map_err(pg("copy"))?
                .unwrap_or_default(),
            data: r
                .try_get::<_, Option<Vec<u8>>>(6)
                .map_err(pg("copy"))?
                .unwrap_or_default(),
        });
    }
    Ok(out)
}

/// Copies the checkpoints of `source` (every thread, or [`CopyOptions::threads`]) into
/// `target`: written by the target saver, resumable, verified (see
/// `docs/store-maintenance.md`). On an error, a SQLite target file the copy created is
/// removed; a store that existed keeps the batches committed before it.
///
/// # Errors
/// [`ErrorKind::NotAStore`](crate::ErrorKind::NotAStore) for a target in an old layout; [`ErrorKind::UnreadableRow`](crate::ErrorKind::UnreadableRow)
/// for a source row that does not decode (no key for it); [`ErrorKind::ConnectionLost`](crate::ErrorKind::ConnectionLost)
/// or [`ErrorKind::LockTimeout`](crate::ErrorKind::LockTimeout) when the source's
/// connection keeps failing or its tables stay locked (an `ALTER TABLE` …) past the
/// retries; the databases' errors. A
/// checkpoint that reads back differently is not an error: it is listed in
/// [`CopyReport::mismatches`].
pub async fn copy(
    source: &str,
    target: &str,
    keys: &StoreKeys,
    options: &CopyOptions,
) -> Result<CopyReport> {
    let mut src = AnyStore::open_with_lock_timeout(source, SOURCE_LOCK_TIMEOUT).await?;
    let new = NewTarget::note(target);
    // One read transaction over every read of the source: the copy is of one point in
    // time, whatever Python or a prune commits there meanwhile (a source connection
    // lost and re-opened reads on in a new one: a rerun's point in time).
    src.raw.begin_snapshot().await?;
    let report = copy_snapshot(&mut src, source, target, keys, options).await;
    src.raw.end_snapshot().await;
    new.discard_on_error(&report);
    report
}

async fn copy_snapshot(
    src: &mut AnyStore,
    source: &str,
    target: &str,
    keys: &StoreKeys,
    options: &CopyOptions,
) -> Result<CopyReport> {
    let started = Instant::now();
    let read_serde = serializer(keys);
    // Written in clear (no primary key): clear values can keep their bytes.
    let clear = keys.primary_ring().is_none();
    let write_serde: Arc<dyn Serializer> = match keys.primary_ring() {
        Some(primary) => Arc::new(EncryptedSerializer::new(
            primary.clone(),
            JsonPlusSerializer::new(),
        )),
        None => Arc::new(JsonPlusSerializer::new()),
    };
    let mut report = CopyReport {
        operation: "copy",
        source: src.raw.shown().to_owned(),
        source_layout: src.raw.layout().to_string(),
        target: Location::parse(target)?.display(),
        dry_run: options.dry_run,
        ..CopyReport::default()
    };
    let threads: Vec<Option<&str>> = if options.threads.is_empty() {
        vec![None]
    } else {
        options.threads.iter().map(|t| Some(t.as_str())).collect()
    };
    let mut retry = Retry::new(DEFAULT_MAX_RECONNECTS);
    for t in &threads {
        report.checkpoints += loop {
            match count(&src.raw, *t).await {
                Ok(n) => break retry.ok(n),
                Err(e) => reopen_source(src, source, &mut retry, e).await?,
            }
        };
    }
    // A dry run looks at the target only if it is already a store.
    let dry_target = if options.dry_run {
        AnyStore::open(target).await.ok()
    } else {
        None
    };
    // The first checkpoint is read before the target is touched: a copy that cannot
    // read its source (no key for it) fails without leaving a new, empty target.
    if let Some(first) = threads.first() {
        if let Some((t, ns, id)) = key_page(&src.raw, *first, None, 1).await?.first() {
            src.tuple(&read_serde, t, Some(ns), id).await?;
        }
    }
    let mut tgt = None;
    let mut writer = None;
    if !options.dry_run {
        let (t, created, _) = open_target(target, true).await?;
        report.created_tables = created;
        writer = Some(match Location::parse(target)? {
            Location::Sqlite(path) => Writer::Sqlite(Arc::new(
                SqliteSaver::builder(&path)
                    .serializer(Arc::clone(&write_serde))
                    .open()
                    .map_err(super::raw::saver_err(&report.target))?,
            )),
            Location::Postgres(url) => {
                Writer::Postgres(Arc::new(pg_copy_target(&url, &write_serde)?))
            }
        });
        tgt = Some(t);
    }
    let page_size = options.page_size.unwrap_or(500);
    // Threads the target already holds with checkpoints the source lacks: refused
    // before anything is written, unless merging was asked for. (A target that held
    // nothing, or only what an earlier run of this copy wrote, passes.)
    if !options.merge && !report.created_tables {
        let opened;
        let target_raw = match &dry_target {
            Some(d) => Some(&d.raw),
            None if options.dry_run => None,
            None => {
                opened = AnyStore::open(target).await?;
                Some(&opened.raw)
            }
        };
        if let Some(target_raw) = target_raw {
            let (count, sample) = clashes(&src.raw, target_raw, &threads, page_size).await?;
            if count > 0 {
                return Err(StoreFault::HistoryConflict {
                    target: report.target.clone(),
                    count,
                    threads: sample,
                }
                .into());
            }
        }
    }
    let mut cursor = Cursor::new(&threads, page_size);
    let mut throttle = Throttle::new(options.max_rows_per_sec);
    let (Some(target_conn), Some(writer)) = (tgt.as_mut(), writer.as_ref()) else {
        // Dry run: every key counted, each looked up in the target if it is a store.
        while let Some((t, ns, id)) = cursor.next(src, source, &mut retry).await? {
            throttle.account(1).await;
            let there = match &dry_target {
                Some(d) => d.raw.checkpoint_exists(&t, &ns, &id).await.unwrap_or(false),
                None => false,
            };
            if there {
                report.already_there += 1;
            } else {
                report.copied += 1;
            }
        }
        report.reconnects = retry.reconnects;
        report.lock_retries = retry.lock_retries;
        report.elapsed_s = started.elapsed().as_secs_f64();
        return Ok(report);
    };
    let mut reading = Reading {
        cursor,
        throttle,
        retry: Retry::new(DEFAULT_MAX_RECONNECTS),
        ahead: std::collections::VecDeque::new(),
        largest: 0,
        batch_size: options.batch_size.unwrap_or(DEFAULT_COPY_BATCH),
        batch_bytes: options.batch_bytes.unwrap_or(DEFAULT_COPY_BATCH_BYTES),
        serdes: (&read_serde, &write_serde),
        writer,
        clear,
    };
    let mut done = 0u64;
    // While a batch is written and verified, the next one is read from the source:
    // the target's server works on one while this process reads and decodes the
    // other (on one Tokio task; the reads yield after each checkpoint).
    let mut next = reading.batch(src, source).await?;
    while !next.is_empty() {
        let mut current = std::mem::take(&mut next);
        let (written, read) = futures_util::future::join(
            flush(
                &mut current,
                (target_conn, target),
                writer,
                options,
                (&mut report, &mut retry),
                &mut done,
            ),
            reading.batch(src, source),
        )
        .await;
        written?;
        next = read?;
    }
    retry.reconnects += reading.retry.reconnects;
    retry.lock_retries += reading.retry.lock_retries;
    report.reconnects = retry.reconnects;
    report.lock_retries = retry.lock_retries;
    report.elapsed_s = started.elapsed().as_secs_f64();
    Ok(report)
}

/// The source's checkpoint keys in order, a page at a time, thread after thread of
/// the selection.
struct Cursor<'a> {
    threads: &'a [Option<&'a str>],
    thread: usize,
    after: Option<(String, String, String)>,
    page: std::collections::VecDeque<(String, String, String)>,
    page_size: usize,
}

impl<'a> Cursor<'a> {
    fn new(threads: &'a [Option<&'a str>], page_size: usize) -> Self {
        Cursor {
            threads,
            thread: 0,
            after: None,
            page: std::collections::VecDeque::new(),
            page_size,
        }
    }

    /// The next key, `None` after the last; a page read again on a re-opened
    /// connection after a lost one.
    async fn next(
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
            self.page.extend(page);
        }
    }
}

/// Checkpoints read from the source at once at most: from Postgres one statement
/// for their tuples and one for their writes (one round trip per checkpoint made a
/// copy out of Postgres wait on the network most of its time).
const READ_AHEAD: usize = 64;

/// The reading side of a copy: batches of source checkpoints, bounded by count and
/// by bytes.
struct Reading<'a> {
    cursor: Cursor<'a>,
    throttle: Throttle,
    retry: Retry,
    /// Checkpoints read and not yet in a batch: the rest of the last read, and the
    /// one that would have taken the last batch over its bytes.
    ahead: std::collections::VecDeque<Pending>,
    /// The largest checkpoint read so far (bytes, as a batch counts them): how many
    /// are read at once is sized from it.
    largest: usize,
    batch_size: usize,
    batch_bytes: usize,
    serdes: (&'a Arc<dyn Serializer>, &'a Arc<dyn Serializer>),
    writer: &'a Writer,
    clear: bool,
}

impl Reading<'_> {
    /// How many checkpoints the next read takes: from Postgres up to [`READ_AHEAD`]
    /// and one batch, as many as half a batch's bytes holds of the largest seen so far
    /// (one at first); one at a time from SQLite (no round trip to save).
    fn read_size(&self, src: &AnyStore) -> usize {
        if matches!(src.raw, Raw::Sqlite { .. }) || self.largest == 0 {
            return 1;
        }
        (self.batch_bytes / 2 / self.largest).clamp(1, READ_AHEAD.min(self.batch_size))
    }

    /// The next batch (empty after the last): full, or as many checkpoints as fit
    /// its bytes (a checkpoint larger than that goes alone).
    async fn batch(&mut self, src: &mut AnyStore, source: &str) -> Result<Vec<Pending>> {
        let mut batch = Vec::new();
        let mut held = 0usize;
        while batch.len() < self.batch_size {
            if self.ahead.is_empty() {
                let mut keys = Vec::new();
                while keys.len() < self.read_size(src) {
                    match self.cursor.next(src, source, &mut self.retry).await? {
                        Some(key) => keys.push(key),
                        None => break,
                    }
                }
                if keys.is_empty() {
                    break;
                }
                self.throttle.account(keys.len() as u64).await;
                let (read_serde, write_serde) = self.serdes;
                let read = loop {
                    match read_pending(
                        src,
                        read_serde,
                        write_serde,
                        (self.writer, self.clear),
                        &keys,
                    )
                    .await
                    {
                        Ok(p) => break self.retry.ok(p),
                        Err(e) => reopen_source(src, source, &mut self.retry, e).await?,
                    }
                };
                for p in &read {
                    self.largest = self.largest.max(pending_bytes(p));
                }
                self.ahead.extend(read);
                // Lets the batch being written go on between two reads.
                tokio::task::yield_now().await;
            }
            let Some(pending) = self.ahead.pop_front() else {
                break;
            };
            let size = pending_bytes(&pending);
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

/// Source checkpoints read for the batch, in the order of `keys`: each one's tuple
/// (pending `Send`s of a `v < 4` checkpoint put where Python's Postgres reader looks
/// for them, when the target is Postgres) and its pending writes re-serialized for the
/// target. Reads only: done again whole after a lost source connection.
async fn read_pending(
    src: &AnyStore,
    read_serde: &Arc<dyn Serializer>,
    write_serde: &Arc<dyn Serializer>,
    (writer, clear): (&Writer, bool),
    keys: &[(String, String, String)],
) -> Result<Vec<Pending>> {
    let tuples = src.tuples(read_serde, keys).await?;
    let mut writes_of = write_rows_of(&src.raw, keys).await?.into_iter();
    let mut out = Vec::with_capacity(keys.len());
    for ((t, ns, id), tuple) in keys.iter().zip(tuples) {
        let mut tuple = tuple.ok_or_else(|| StoreFault::Unreadable {
            what: format!("checkpoint {t}/{ns:?}/{id}"),
            reason: "vanished from the source during the copy".to_owned(),
        })?;
        // Pending `Send`s of a `v < 4` checkpoint (no JSONB form) go where
        // Python's Postgres reader looks for them; verified as stored so.
        if let Writer::Postgres(s) = writer {
            let parent_sends = parent_sends(&src.raw, read_serde, &tuple, t, ns).await?;
            s.pending_sends_to_tasks(&mut tuple.checkpoint, &parent_sends)?;
        }
        // A value in clear msgpack, written in clear, is carried as its bytes: what
        // `dumps_typed` of its decoded value gives, without the decode and encode (the
        // read-back compares the decoded writes).
        let mut writes = Vec::new();
        for mut w in writes_of.next().unwrap_or_default() {
            if clear && w.tag == "msgpack" {
                let (data, tag) = (std::mem::take(&mut w.data), std::mem::take(&mut w.tag));
                writes.push((w, data, tag));
                continue;
            }
            let at = || format!("write {t}/{ns:?}/{id}/{}/{}", w.task_id, w.idx);
            let value =
                read_serde
                    .loads_typed(&w.tag, &w.data)
                    .map_err(|e| StoreFault::Unreadable {
                        what: at(),
                        reason: super::error::read_failure(&e),
                    })?;
            let typed = write_serde
                .dumps_typed(&value)
                .map_err(|e| StoreFault::Unreadable {
                    what: at(),
                    reason: e.to_string(),
                })?;
            writes.push((w, typed.data.to_vec(), typed.type_tag.to_string()));
        }
        out.push(Pending {
            thread: t.clone(),
            ns: ns.clone(),
            id: id.clone(),
            tuple,
            writes,
        });
    }
    Ok(out)
}

/// After a read of the source `given` failed with `e`: a lost Postgres connection, or
/// a lock wait given up or a deadlock (within `retry`'s limit, in a row with losses), is
/// waited on and the source opened again (its layout detected again: what waited may
/// have been a schema change), in a new read transaction; any other error is returned.
/// After a lock conflict the read transaction ends first, so that what waited for it
/// (an `ALTER TABLE` the read queued behind) goes through while the copy waits.
async fn reopen_source(src: &mut AnyStore, given: &str, retry: &mut Retry, e: Error) -> Result<()> {
    if matches!(src.raw, Raw::Sqlite { .. }) {
        return Err(e);
    }
    let locked = super::retry::is_lock_conflict(&e);
    if locked {
        src.raw.end_snapshot().await;
    }
    retry.lost_or_locked(e).await?;
    let opened = async {
        let new = AnyStore::open_with_lock_timeout(given, SOURCE_LOCK_TIMEOUT).await?;
        new.raw.begin_snapshot().await?;
        Ok(new)
    }
    .await;
    match retry.reopened(opened)? {
        Some(new) => *src = new,
        // Not re-opened (the server away): the old connection, alive, reads in a new
        // read transaction; lost, its next read counts one more loss.
        None if locked => {
            let _ = src.raw.begin_snapshot().await;
        }
        None => {}
    }
    Ok(())
}

/// The `__pregel_tasks` write values of the parent of a `v < 4` checkpoint that has
/// pending sends, in the order Python's Postgres reader takes them (task path, task
/// id, index); empty for any other checkpoint (nothing is read).
async fn parent_sends(
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
                .loads_typed(&w.tag, &w.data)
                .map_err(|e| StoreFault::Unreadable {
                    what: format!("write {thread}/{ns:?}/{parent}/{}/{}", w.task_id, w.idx),
                    reason: super::error::read_failure(&e),
                })?,
        );
    }
    Ok(sends)
}

/// How many threads of the selection `target` holds with a checkpoint `source` does
/// not have (while `source` has the thread), and the first few of them. Reads the
/// target's checkpoint keys a page at a time and asks the source about each page in
/// one query.
async fn clashes(
    source: &Raw,
    target: &Raw,
    threads: &[Option<&str>],
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
                if last_counted.as_ref() == Some(&t) {
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

impl Raw {
    /// Of `keys` (thread, namespace, id), the threads of those this store does not hold
    /// while holding other checkpoints of their thread: one thread per run of such keys,
    /// in order.
    async fn foreign_checkpoints(&self, keys: &[(String, String, String)]) -> Result<Vec<String>> {
        if keys.is_empty() {
            return Ok(Vec::new());
        }
        let c = self.cols();
        let sqlite = matches!(self, Raw::Sqlite { .. });
        let cast = if sqlite { "" } else { "::text" };
        let values: Vec<String> = (0..keys.len())
            .map(|k| {
                format!(
                    "({}{cast}, {}{cast}, {}{cast}, {k})",
                    ph(sqlite, 3 * k + 1),
                    ph(sqlite, 3 * k + 2),
                    ph(sqlite, 3 * k + 3)
                )
            })
            .collect();
        let sql = format!(
            "WITH v(t, n, i, o) AS (VALUES {}) SELECT v.t FROM v \
             WHERE EXISTS (SELECT 1 FROM checkpoints c WHERE c.thread_id = v.t) \
             AND NOT EXISTS (SELECT 1 FROM checkpoints c WHERE c.thread_id = v.t AND {} = v.n AND {} = v.i) \
             ORDER BY v.o",
            values.join(", "),
            c.ns,
            c.id
        );
        let params: Vec<&String> = keys.iter().flat_map(|(t, n, i)| [t, n, i]).collect();
        let mut out: Vec<String> = Vec::new();
        let found: Vec<String> = match self {
            Raw::Sqlite { conn, .. } => {
                let mut stmt = conn.prepare(&sql).map_err(sq("copy"))?;
                let rows = stmt
                    .query_map(rusqlite::params_from_iter(params), |r| r.get(0))
                    .map_err(sq("copy"))?
                    .collect::<std::result::Result<Vec<String>, _>>()
                    .map_err(sq("copy"))?;
                rows
            }
            Raw::Postgres { client, .. } => {
                let refs: Vec<&(dyn ToSql + Sync)> =
                    params.iter().map(|p| *p as &(dyn ToSql + Sync)).collect();
                let rows = client.query(&sql, &refs).await.map_err(pg("copy"))?;
                rows.iter()
                    .map(|r| r.try_get(0))
                    .collect::<std::result::Result<Vec<String>, _>>()
                    .map_err(pg("copy"))?
            }
        };
        for t in found {
            if out.last() != Some(&t) {
                out.push(t);
            }
        }
        Ok(out)
    }

    /// Whether the checkpoint is in this store.
    pub(crate) async fn checkpoint_exists(&self, thread: &str, ns: &str, id: &str) -> Result<bool> {
        let c = self.cols();
        let sqlite = matches!(self, Raw::Sqlite { .. });
        let sql = format!(
            "SELECT count(*) FROM checkpoints WHERE thread_id = {} AND {} = {} AND {} = {}",
            ph(sqlite, 1),
            c.ns,
            ph(sqlite, 2),
            c.id,
            ph(sqlite, 3)
        );
        let n: i64 = match self {
            Raw::Sqlite { conn, .. } => conn
                .query_row(&sql, [thread, ns, id], |r| r.get(0))
                .map_err(sq("copy"))?,
            Raw::Postgres { client, .. } => client
                .query_one(&sql, &[&thread, &ns, &id])
                .await
                .map_err(pg("copy"))?
                .try_get(0)
                .map_err(pg("copy"))?,
        };
        Ok(n > 0)
    }
}
