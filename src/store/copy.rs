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
//! **Rows carried as stored (SQLite → SQLite):** between SQLite stores written in clear,
//! a row of Python's layout whose checkpoint is a clear msgpack map (its `id` the
//! row's, the whole document well formed) and whose metadata is a JSON object goes in
//! as its stored columns, undecoded: they are what the SQLite saver's `put` of the
//! decoded checkpoint writes. Any other row goes through `put` as above.
//!
//! **Rows split as stored (SQLite → Postgres):** into Postgres written in clear, such a
//! row (a checkpoint from `v` 4 on, or without pending sends) is split as the Postgres
//! saver's `put` splits it without decoding the values that go to blobs: only the
//! document's other parts and its inline values (nil, bool, int, float, str) are
//! decoded and put; each other channel's blob is the value's own msgpack bytes in the
//! row (a bin's content as `bytes`), what `dumps_typed` of the decoded value gives.
//! A `_DeltaSnapshot`, or a blob value whose channel has no version, is decoded whole.
//!
//! **Blob values carried as their bytes (out of Postgres):** into a clear store, a
//! channel value Postgres holds as a clear `msgpack`, `bytes` or `null` blob is not
//! decoded: into SQLite it is spliced into the encoded checkpoint where the decoded
//! value would go (the row is the same), into Postgres it stays the blob it was. The
//! source's writes are read as rows, once, beside its checkpoints, and a few reads of
//! the source are in flight at once.
//!
//! **Batches:** checkpoints go in batches ([`DEFAULT_COPY_BATCH`] of them, fewer when
//! they hold more than about [`DEFAULT_COPY_BATCH_BYTES`]): one target transaction
//! inserts the batch's pending writes (and the rows carried as stored), another puts
//! its checkpoints through the target saver (`put_batch`: the rows of `put`, one
//! commit; into Postgres both with `COPY`, at once on two connections, the
//! checkpoints committed after the writes), then the batch is verified. While one
//! batch is written, the next is read from the source and the one before is read back
//! and compared (a Tokio task of its own).
//!
//! **Resumable:** a checkpoint already in the target is not written again (its
//! writes are inserted if missing: inserts only take free keys). Writes commit before
//! their checkpoints, so killed at any point, a copy leaves whole checkpoints whose
//! writes are already there; run it again to finish. **Verified:** a checkpoint the
//! batch wrote is compared with what the target holds under its key, as stored: the
//! rows sent (into SQLite the columns `put` wrote or the carried row; into Postgres the
//! checkpoint and metadata JSON, as values, and each blob) and its write rows, byte
//! for byte (out of Postgres by ranges of keys). Where they differ, and for a checkpoint that was
//! there before, the checkpoint is read back through the target saver's `get_tuple`
//! and compared decoded with the source (checkpoint, metadata, parent, pending writes
//! in order). Counts are reported. Memory holds five batches at most (the one
//! written, the one read back, the one done with before it until the reading drops it,
//! and out of Postgres or into SQLite one read and waiting and one being read; else the
//! one being read) and one page of keys. Needs a Tokio
//! runtime (the read-backs are Tokio tasks).

use std::sync::Arc;
use std::time::Instant;

use serde::Serialize;

use super::error::StoreFault;
mod batch;
mod check;
mod ranges;
mod source;
mod writer;

use batch::{flush, Pending, Spent};
use check::{settle, Verifying};
use source::{clashes, copy_stopped, count, partly_copied, reopen_source, Cursor, Reading};
use writer::Writer;

use super::backend::Writes;
use super::engine::Engine;
use super::error::{password_left_out, pasted, shell_word};
use super::inspect::AnyStore;
use super::keys::StoreKeys;
use super::options::{run_setters, RunOptions};
use super::pipeline::{write_behind, BatchSink, WriteOn};
use super::raw::{serializer, Result};
use super::target::{open_target, NewTarget, Target};
use super::Location;
use crate::crypto::EncryptedSerializer;
use crate::kind::ErrorKind;
use crate::serializer::Serializer;
use crate::JsonPlusSerializer;

/// Options of [`copy`].
#[derive(Clone, Debug, Default)]
pub struct CopyOptions {
    pub(super) run: RunOptions,
    merge: bool,
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

impl CopyOptions {
    /// Every thread; writing.
    pub fn new() -> Self {
        Self::default()
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
}

run_setters!(CopyOptions {
    /// Only these threads (none: every thread).
    threads;
    /// Not these threads, whatever [`threads`](Self::threads) selects: to copy the
    /// rest of a store past a thread with a row the copy cannot read
    /// ([`ErrorKind::UnreadableRow`](crate::ErrorKind::UnreadableRow), naming it).
    exclude_threads;
    /// Count what would be copied; write nothing (the target is not created).
    dry_run;
    /// At most this many checkpoints read per second from the source, on average (0 or
    /// `None`: no limit).
    max_rows_per_sec;
    /// Postgres, source or target: how many times in a row a lost connection is
    /// re-opened (the batch in flight is read or written again) before the copy stops
    /// with [`ErrorKind::ConnectionLost`](crate::ErrorKind::ConnectionLost).
    max_reconnects;
    /// Checkpoint keys read per query (at least 1).
    page_size(rows);
    /// Checkpoints written per target transaction (at least 1; default
    /// [`DEFAULT_COPY_BATCH`]). Each batch is read back and verified before the next
    /// one is read.
    batch_size(checkpoints);
    /// Bytes a batch holds at most (default [`DEFAULT_COPY_BATCH_BYTES`]): memory stays
    /// within about this much whatever the size of the store.
    batch_bytes(bytes);
    /// Set it (from a signal handler, say) to end the copy after the batch in flight
    /// (written and verified; [`CopyReport::stopped`]); the same copy run again goes on.
    stop_flag;
    /// Called after each checkpoint (once its batch is written and verified).
    on_progress;
});

/// A thread left out of a copy that the target holds part of
/// ([`CopyReport::excluded_partly_copied`]).
#[derive(Clone, Debug, Default, Serialize, PartialEq, Eq)]
#[non_exhaustive]
pub struct PartlyCopied {
    /// The thread.
    pub thread: String,
    /// Of the source's checkpoints of the thread, how many the target holds.
    pub in_target: u64,
    /// The source's checkpoints of the thread.
    pub in_source: u64,
}

impl PartlyCopied {
    /// What it means and what to do, with the commands to paste (shell-quoted): copy
    /// the thread once its rows are mended, or delete it from `target`.
    pub fn advice(&self, source: &str, target: &str) -> String {
        let (t, s, d) = (shell_word(&self.thread), pasted(source), pasted(target));
        format!(
            "thread {} was left out, but {target} holds {} of the source's {} checkpoint(s) \
             of it (a copy that stopped inside it): Python reads an older state of it there \
             than in the source. Copy it once its rows are mended (`lgcodec store copy {s} \
             {d} --thread {t}`), or delete it from the target (`lgcodec store prune {d} \
             --thread {t} --idle-since 9999-12-31`){}",
            self.thread,
            self.in_target,
            self.in_source,
            if password_left_out(source).is_empty() {
                password_left_out(target)
            } else {
                password_left_out(source)
            }
        )
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
    /// A dry run whose store would refuse the run itself: a Postgres role without the
    /// privilege it needs on the saver's tables (`INSERT`), said with the `GRANT` that
    /// gives it. `None` otherwise.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub would_be_refused: Option<String>,
    /// The threads left out ([`CopyOptions::exclude_threads`]), in order.
    pub excluded_threads: Vec<String>,
    /// Threads left out that the target holds some but not all of the source's
    /// checkpoints of, by thread: a copy that stopped inside the thread before it was
    /// left out. Python reads an older state of them in the target than in the source;
    /// the CLI exits 1 and says what to do.
    pub excluded_partly_copied: Vec<PartlyCopied>,
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
    /// them; each batch or checkpoint read in flight then was done again (at most
    /// [`CopyOptions::max_reconnects`] losses in a row, 16 by default, then
    /// [`ErrorKind::ConnectionLost`](crate::ErrorKind::ConnectionLost)).
    pub reconnects: u64,
    /// Postgres: times a read of the source waited for a lock for longer than the copy
    /// waits (a schema change such as an `ALTER TABLE` queued behind the copy's read
    /// transaction) or was ended by the server as a deadlock: the copy ended its read
    /// transaction, letting the lock holder through, and read on in a new one (counted
    /// in a row with lost connections, then
    /// [`ErrorKind::LockTimeout`](crate::ErrorKind::LockTimeout)).
    pub lock_retries: u64,
    /// Asked to stop ([`CopyOptions::stop_flag`]), the copy ended after the batch in
    /// flight, every batch before it written and verified; the same copy run again
    /// goes on.
    pub stopped: bool,
    /// Seconds.
    pub elapsed_s: f64,
}

/// Copies the checkpoints of `source` (every thread, or [`CopyOptions::threads`]) into
/// `target`: written by the target saver, resumable, verified (see
/// `docs/store-maintenance.md`). On an error, the target keeps the batches committed
/// before it, for the same copy run again to go on from; a SQLite target file the copy
/// created is removed if it holds no checkpoint yet, else the error says how many it
/// holds.
///
/// # Errors
/// [`ErrorKind::NotAStore`](crate::ErrorKind::NotAStore) for a target in an old layout; [`ErrorKind::UnreadableRow`](crate::ErrorKind::UnreadableRow)
/// for a source row that does not decode (no key for it); [`ErrorKind::ConnectionLost`](crate::ErrorKind::ConnectionLost)
/// or [`ErrorKind::LockTimeout`](crate::ErrorKind::LockTimeout) when the source's
/// connection keeps failing or its tables stay locked (an `ALTER TABLE` …) past the
/// retries; the databases' errors. A
/// checkpoint that reads back differently is not an error: it is listed in
/// [`CopyReport::mismatches`]. [`ErrorKind::InvalidStoreLocation`](crate::ErrorKind::InvalidStoreLocation)
/// for a target that is the source itself (the same file, or the same URL).
pub async fn copy(
    source: &str,
    target: &str,
    keys: &StoreKeys,
    options: &CopyOptions,
) -> Result<CopyReport> {
    refuse_itself(source, target)?;
    let mut src = AnyStore::open_with_lock_timeout(source, SOURCE_LOCK_TIMEOUT).await?;
    let new = NewTarget::note(target);
    // One read transaction over every read of the source: the copy is of one point in
    // time, whatever Python or a prune commits there meanwhile (a source connection
    // lost and re-opened reads on in a new one: a rerun's point in time).
    // Shared: the checkpoints are read through the source saver's own connections.
    src.raw.begin_snapshot(true).await?;
    let report = copy_snapshot(&mut src, source, target, keys, options).await;
    src.raw.end_snapshot().await;
    new.settle("copy", report)
}

/// A copy into its own source would find every checkpoint there and change nothing,
/// with or without a new key: said before anything is opened, with the commands that
/// rewrite a store in place.
fn refuse_itself(source: &str, target: &str) -> Result<()> {
    let same = match (Location::parse(source)?, Location::parse(target)?) {
        // The same file by another path (`./s.db`, a link) too.
        (Location::Sqlite(a), Location::Sqlite(b)) => {
            a == b
                || matches!(
                    (std::fs::canonicalize(&a), std::fs::canonicalize(&b)),
                    (Ok(a), Ok(b)) if a == b
                )
        }
        (Location::Postgres(a), Location::Postgres(b)) => a == b,
        _ => false,
    };
    if !same {
        return Ok(());
    }
    Err(StoreFault::InvalidLocation {
        given: target.to_owned(),
        reason: "the target is the copy's source itself: every checkpoint is already there, so nothing would change. Give another target; to encrypt or re-key a store in place, `lgcodec store encrypt` or `lgcodec store rekey` does it".to_owned(),
    }
    .into())
}

/// What the write of a batch ([`flush`]) works on: moved into the batch's task and
/// back.
struct Sink {
    target: Target,
    writer: Writer,
    report: CopyReport,
    /// The writes' losses, and progress as batches are read back.
    engine: Engine,
    verifying: Option<Verifying>,
    /// Whether the batch written last found none of its checkpoints in the target.
    fresh: bool,
    /// The batch last done with, for the reading to drop.
    spent: Spent,
}

impl Sink {
    async fn flush(&mut self, batch: &mut Vec<Pending>) -> Result<()> {
        flush(
            batch,
            &mut self.target,
            &self.writer,
            (&mut self.report, &mut self.engine),
            (&mut self.verifying, &mut self.fresh, &self.spent),
        )
        .await
    }

    /// [`settle`]s the read-back still in flight after the last batch.
    async fn settle(&mut self) -> Result<()> {
        settle(
            self.verifying.take(),
            &mut self.target,
            &self.writer,
            (&mut self.report, &mut self.engine),
            &self.spent,
        )
        .await
    }
}

impl BatchSink for Sink {
    type Batch = Vec<Pending>;

    fn engine(&self) -> &Engine {
        &self.engine
    }

    async fn put(&mut self, mut batch: Vec<Pending>) -> Result<()> {
        self.flush(&mut batch).await
    }
}

/// [`partly_copied`], as the report lists them.
async fn left_out_in(
    source: &super::raw::Raw,
    target: &super::raw::Raw,
    selection: (&[Option<&str>], &std::collections::BTreeSet<String>),
    page_size: usize,
) -> Result<Vec<PartlyCopied>> {
    let found = partly_copied(source, target, selection, page_size).await?;
    Ok(found
        .into_iter()
        .map(|(thread, in_target, in_source)| PartlyCopied {
            thread,
            in_target,
            in_source,
        })
        .collect())
}

async fn copy_snapshot(
    src: &mut AnyStore,
    source: &str,
    target: &str,
    keys: &StoreKeys,
    options: &CopyOptions,
) -> Result<CopyReport> {
    let started = Instant::now();
    // Before the target is touched: a mistyped thread id copies nothing.
    src.raw
        .refuse_absent_threads("copy", &options.run.named_threads())
        .await?;
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
        dry_run: options.run.dry_run,
        ..CopyReport::default()
    };
    let threads = options.run.thread_filter();
    let except = &options.run.except_threads;
    report.excluded_threads = except.iter().cloned().collect();
    // The source's engine: its pace, and its losses (and lock conflicts).
    let mut reading_engine = Engine::new("copy", "checkpoints", &options.run);
    // The selection's checkpoints: each thread named and not left out; or, for every
    // thread, the whole store's less those of the threads left out.
    let every = threads.contains(&None);
    let counted = threads
        .iter()
        .copied()
        .filter(|t| t.is_none_or(|t| !except.contains(t)))
        .map(|t| (t, true))
        .chain(
            except
                .iter()
                .filter(|_| every)
                .map(|e| (Some(e.as_str()), false)),
        );
    let mut left_out = 0u64;
    for (t, selected) in counted {
        let n = loop {
            match count(&src.raw, t).await {
                Ok(n) => break reading_engine.ok(n),
                Err(e) => reopen_source(src, source, reading_engine.retry(), e).await?,
            }
        };
        if selected {
            report.checkpoints += n;
        } else {
            left_out += n;
        }
    }
    report.checkpoints = report.checkpoints.saturating_sub(left_out);
    // A dry run looks at the target only if it is already a store.
    let dry_target = if options.run.dry_run {
        AnyStore::open(target).await.ok()
    } else {
        None
    };
    report.would_be_refused = match &dry_target {
        _ if !options.run.dry_run => None,
        Some(d) => d.refuses(Writes::Insert).await?,
        None => super::target::create_refused(target).await?,
    };
    let page_size = options.run.page_size.unwrap_or(500);
    // The first checkpoint is read before the target is touched: a copy that cannot
    // read its source (no key for it) fails without leaving a new, empty target.
    let first = Cursor::new(&threads, except, page_size)
        .next(src, source, reading_engine.retry())
        .await?;
    if let Some((t, ns, id)) = first {
        if let Err(e) = src.tuple(&read_serde, &t, Some(&ns), &id).await {
            return Err(if e.kind() == ErrorKind::UnreadableRow {
                copy_stopped(e, &t, src)
            } else {
                e
            });
        }
    }
    let mut tgt = None;
    let mut writer = None;
    if !options.run.dry_run {
        let (mut t, created, _) = open_target(target, true).await?;
        report.created_tables = created;
        writer = Some(writer::open(target, &write_serde, &report.target)?);
        // The read-back's connection checkpoints the WAL after each batch
        // (`Writer::check`), off the writer's path.
        t.defer_wal_checkpoints().await?;
        tgt = Some(t);
    }
    // Threads the target already holds with checkpoints the source lacks: refused
    // before anything is written, unless merging was asked for. (A target that held
    // nothing, or only what an earlier run of this copy wrote, passes.)
    if !options.merge && !report.created_tables {
        let opened;
        let target_raw = match &dry_target {
            Some(d) => Some(&d.raw),
            None if options.run.dry_run => None,
            None => {
                opened = AnyStore::open(target).await?;
                Some(&opened.raw)
            }
        };
        if let Some(target_raw) = target_raw {
            let (count, sample) =
                clashes(&src.raw, target_raw, (&threads, except), page_size).await?;
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
    let mut cursor = Cursor::new(&threads, except, page_size);
    let (Some(target_conn), Some(writer)) = (tgt.take(), writer.as_ref()) else {
        // Dry run: every key counted, each looked up in the target if it is a store.
        while let Some((t, ns, id)) = cursor.next(src, source, reading_engine.retry()).await? {
            reading_engine.pace(1).await;
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
        if let Some(d) = &dry_target {
            report.excluded_partly_copied =
                left_out_in(&src.raw, &d.raw, (&threads, except), page_size).await?;
        }
        report.reconnects = reading_engine.reconnects();
        report.lock_retries = reading_engine.retry().lock_retries;
        report.elapsed_s = started.elapsed().as_secs_f64();
        return Ok(report);
    };
    // Where each batch is written while the next is read: see below.
    let on = if src.raw.is_sqlite() && writer.round_trips() {
        WriteOn::OwnTask
    } else {
        WriteOn::SameTask
    };
    let spent = Spent::default();
    let mut reading = Reading {
        src,
        source,
        cursor,
        engine: reading_engine,
        ahead: std::collections::VecDeque::new(),
        largest: 0,
        batch_size: options.run.batch_size.unwrap_or(DEFAULT_COPY_BATCH),
        batch_bytes: options.run.batch_bytes.unwrap_or(DEFAULT_COPY_BATCH_BYTES),
        serdes: (&read_serde, &write_serde),
        writer,
        clear,
        spent: spent.clone(),
    };
    let sink = Sink {
        target: target_conn,
        writer: writer.clone(),
        engine: {
            let mut e = Engine::new("copy", "checkpoints", &options.run);
            e.set_total(report.checkpoints);
            e
        },
        report,
        verifying: None,
        fresh: true,
        spent,
    };
    // While a batch is written, the next one is read from the source, and the one
    // before is read back and compared (a task of its own). A SQLite source is read
    // with blocking calls on this task; a batch into Postgres is a chain of round trips
    // this task drives, which those calls would hold up: that batch is written on a
    // task of its own (on a runtime of more than one thread, on another core).
    // Measured 2026-11-29, 100,000 checkpoints SQLite → Postgres: 14.09–15.79 s
    // against 16.61–19.84 s. Not otherwise: a batch into SQLite is written on a thread
    // of its own already (SQLite → SQLite on the batch's own task: 7.87–7.97 s against
    // 5.96–6.66 s), and a Postgres source is read without blocking, its rows decoded on
    // tasks of their own (Postgres → SQLite: 12.00–12.75 s against 11.67–12.62 s, and
    // 4–10 MiB more).
    let (mut sink, stopped) = write_behind(&mut reading, sink, on).await?;
    sink.settle().await?;
    let Sink {
        mut report, engine, ..
    } = sink;
    if !except.is_empty() && !report.created_tables {
        let there = AnyStore::open(target).await?;
        report.excluded_partly_copied =
            left_out_in(&reading.src.raw, &there.raw, (&threads, except), page_size).await?;
    }
    report.reconnects = engine.reconnects() + reading.engine.reconnects();
    report.lock_retries = reading.engine.retry().lock_retries;
    report.stopped = stopped;
    report.elapsed_s = started.elapsed().as_secs_f64();
    Ok(report)
}
