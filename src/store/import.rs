//! [`import`]: a backup file (`lgcodec-store-backup`, see [`export`](super::export()))
//! restored into a store of the same backend (use [`copy`](super::copy()) between
//! backends): an empty target first gets Python's tables from the saver's own
//! `setup()`. Each row is inserted only if its key is free; a row already there with
//! the same columns is skipped, one with other columns is reported and left alone
//! (never overwritten). Batches of rows are committed one transaction each, so an
//! import stopped anywhere is resumed by running it again.

use std::io::BufRead;
use std::time::Instant;

use serde::Serialize;

use super::backend::{Cell, Spec, Writes};
use super::backup::{key_text, BackupRows};
use super::engine::Engine;
use super::error::StoreFault;
use super::ops::DEFAULT_PAGE_BYTES;
use super::options::{run_setters, RunOptions};
use super::pipeline::{write_behind, BatchSink, BatchSource, WriteOn};
use super::raw::Result;
use super::Location;

use super::target::{create_refused, open_target, open_target_read_only, NewTarget, Target};

/// Options of [`import`].
#[derive(Clone, Debug, Default)]
pub struct ImportOptions {
    run: RunOptions,
    max_line_bytes: Option<usize>,
    max_conflict_samples: Option<usize>,
}

impl ImportOptions {
    /// Batches of 500 rows and at most half [`DEFAULT_PAGE_BYTES`] of values (the
    /// next batch is read from the file while one goes in), no rate limit, 20
    /// conflict samples.
    pub fn new() -> Self {
        Self::default()
    }

    /// How many conflicts to describe ([`ImportReport::conflict_samples`]; default
    /// 20): every conflict is counted, only the first this many are listed.
    pub fn max_conflict_samples(mut self, n: usize) -> Self {
        self.max_conflict_samples = Some(n);
        self
    }

    /// The longest line of the file read, in bytes (default
    /// [`DEFAULT_MAX_BACKUP_LINE_BYTES`](super::DEFAULT_MAX_BACKUP_LINE_BYTES)); a longer line is refused, never held whole.
    pub fn max_line_bytes(mut self, bytes: usize) -> Self {
        self.max_line_bytes = Some(bytes);
        self
    }
}

run_setters!(ImportOptions {
    /// Only the rows of these threads (none given: every thread of the file): to
    /// restore one thread from a backup of the whole store. The other rows are still
    /// read and checked (the file is verified whole), and counted in
    /// [`ImportReport::skipped`].
    threads;
    /// Not the rows of these threads, whatever else selects them; counted in
    /// [`ImportReport::skipped`] and listed in [`ImportReport::excluded_threads`].
    exclude_threads;
    /// Rows per transaction (at least 1).
    batch_size(rows);
    /// Read the whole file and the target and count what would be inserted, identical
    /// or in conflict; write nothing (a missing target is not created).
    dry_run;
    /// Bytes of values per transaction at most (a larger row goes alone): what bounds
    /// the import's memory besides the longest line (two batches: the one going in and
    /// the next, read meanwhile).
    batch_bytes(bytes);
    /// At most this many rows of the file put in per second, on average (0 or `None`:
    /// no limit): spares a store that serves live writers. Needs a Tokio runtime with
    /// time enabled.
    max_rows_per_sec;
    /// Postgres: how many times in a row a lost connection is re-opened (the batch in
    /// flight is written again; rows already in are found there) before the import
    /// stops with [`ErrorKind::ConnectionLost`](crate::ErrorKind::ConnectionLost).
    max_reconnects;
    /// Set it (from a signal handler, say) to end the import after the batch in flight
    /// ([`ImportReport::stopped`]); the same import run again goes on.
    stop_flag;
    /// Called after each batch.
    on_progress;
});

/// A row of the file whose key the target holds with other columns.
#[derive(Clone, Debug, Serialize, PartialEq, Eq)]
#[non_exhaustive]
pub struct ImportConflict {
    /// `checkpoint`, `blob` or `write`.
    pub kind: String,
    /// Its primary key.
    pub key: Vec<String>,
}

/// What [`import`] did.
#[derive(Clone, Debug, Default, Serialize, PartialEq)]
#[non_exhaustive]
pub struct ImportReport {
    /// `import`.
    pub operation: &'static str,
    /// The target.
    pub store: String,
    /// Rows inserted.
    pub inserted: u64,
    /// Rows already there with the same columns.
    pub identical: u64,
    /// Rows already there with other columns (left as they were).
    pub conflicts: u64,
    /// The first conflicts.
    pub conflict_samples: Vec<ImportConflict>,
    /// Whether the file ended with its footer (not cut short).
    pub complete: bool,
    /// Where and how the file was cut short, when its last line is a partial row (the
    /// rows before it were imported).
    pub cut_short: Option<String>,
    /// Rows of the file left out by [`ImportOptions::threads`] and
    /// [`ImportOptions::exclude_threads`]: read and checked, not imported.
    pub skipped: u64,
    /// The threads left out ([`ImportOptions::exclude_threads`]), in order.
    pub excluded_threads: Vec<String>,
    /// Threads named by [`ImportOptions::threads`] or
    /// [`ImportOptions::exclude_threads`] that no row of the file belongs to (a
    /// mistyped id?), in order; only said of a file read to its end (the CLI exits 1).
    pub threads_not_found: Vec<String>,
    /// A dry run: `inserted` counts the rows that would be.
    pub dry_run: bool,
    /// A dry run whose store would refuse the run itself: a Postgres role without the
    /// privilege it needs on the saver's tables (`INSERT`), said with the `GRANT` that
    /// gives it. `None` otherwise.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub would_be_refused: Option<String>,
    /// Whether the target was empty and got Python's tables.
    pub created_tables: bool,
    /// Transactions the rows went in by (a batch holds rows of one table; in a dry
    /// run, the batches read against the target).
    pub batches: u64,
    /// Postgres: connections re-opened after the server closed them; the batch in
    /// flight then was inserted again (a batch whose commit went through before the
    /// connection went then counts its rows identical). At most 16 losses in a row (about a minute of waiting), then
    /// [`ErrorKind::ConnectionLost`](crate::ErrorKind::ConnectionLost).
    pub reconnects: u64,
    /// Asked to stop ([`ImportOptions::stop_flag`]), the import ended after the batch
    /// in flight, before the end of the file (`complete` is false); the same import
    /// run again goes on.
    pub stopped: bool,
    /// Seconds.
    pub elapsed_s: f64,
}

/// Where an import's rows go, a batch at a time.
struct Sink {
    /// `None`: a dry run into a target that is not a store yet.
    tgt: Option<Target>,
    report: ImportReport,
    /// Progress in rows (every table), the pace, and reconnecting.
    engine: Engine,
    max_samples: usize,
    dry_run: bool,
    /// Whether the next batch into Postgres is sent with `COPY` first: after a batch
    /// whose `COPY` met a taken key, not until a batch goes in whole row by row (a
    /// rerun sends each batch once, not twice).
    copy_first: bool,
}

impl Sink {
    /// Inserts `batch` (rows of `spec`'s table) in one transaction, counting each row
    /// inserted, already there, or in conflict; a dry run only counts.
    async fn flush(&mut self, spec: &Spec, batch: &[Vec<Cell>]) -> Result<()> {
        if batch.is_empty() {
            return Ok(());
        }
        let report = &mut self.report;
        report.batches += 1;
        let Some(tgt) = self.tgt.as_mut() else {
            // Every row would go in.
            report.inserted += batch.len() as u64;
            return Ok(());
        };
        let inserted = if self.dry_run {
            vec![false; batch.len()]
        } else {
            loop {
                let sent = tgt.insert_rows(spec, batch, self.copy_first).await;
                if let Some((v, copied)) = self.engine.settle(&**tgt, sent).await? {
                    self.copy_first = copied || v.iter().all(|inserted| *inserted);
                    break v;
                }
            }
        };
        for (row, ok) in batch.iter().zip(inserted) {
            if ok {
                report.inserted += 1;
                continue;
            }
            let key: Vec<Cell> = row.iter().take(spec.keys).cloned().collect();
            let there = loop {
                let read = tgt.row_at(spec, &key).await;
                if let Some(v) = self.engine.settle(&**tgt, read).await? {
                    break v;
                }
            };
            match there {
                None if self.dry_run => report.inserted += 1,
                Some(there) if &there == row => report.identical += 1,
                _ => {
                    report.conflicts += 1;
                    if report.conflict_samples.len() < self.max_samples {
                        report.conflict_samples.push(ImportConflict {
                            kind: spec.kind.to_owned(),
                            key: key_text(row, spec.keys),
                        });
                    }
                }
            }
        }
        Ok(())
    }
}

impl BatchSink for Sink {
    type Batch = (Spec, Vec<Vec<Cell>>);

    fn engine(&self) -> &Engine {
        &self.engine
    }

    async fn put(&mut self, (spec, batch): (Spec, Vec<Vec<Cell>>)) -> Result<()> {
        let inserted = self.report.inserted;
        self.flush(&spec, &batch).await?;
        let rows = batch.len() as u64;
        self.engine
            .batch_done(spec.table, rows, self.report.inserted - inserted, None)
            .await;
        Ok(())
    }
}

/// The backup file's rows, a batch of one table at a time.
struct Batches<'a> {
    rows: BackupRows<'a>,
    specs: Vec<Spec>,
    /// A row of the next table, read to find a batch's end.
    carry: Option<(usize, Vec<Cell>)>,
    /// `(batch_size, batch_bytes)`.
    limits: (usize, usize),
    /// A malformed line, returned after the batch of the rows before it.
    failed: Option<crate::Error>,
}

impl BatchSource for Batches<'_> {
    type Batch = (Spec, Vec<Vec<Cell>>);

    async fn next_batch(&mut self) -> Result<Option<(Spec, Vec<Vec<Cell>>)>> {
        if let Some(e) = self.failed.take() {
            return Err(e);
        }
        let (kind, batch, failed) = next_batch(&mut self.rows, &mut self.carry, self.limits);
        let spec = kind.and_then(|k| self.specs.get(k)).cloned();
        let Some(spec) = spec.filter(|_| !batch.is_empty()) else {
            return failed.map_or(Ok(None), Err);
        };
        // The rows before the malformed line go in first: a rerun of the right file
        // then finds them there.
        self.failed = failed;
        Ok(Some((spec, batch)))
    }
}

/// Restores a backup file (read line by line from `input`) into the store `target`
/// (`sqlite:PATH`, a file path, or a `postgres://` URL) of the backend the file came
/// from: only free keys are inserted, identical rows skipped, different rows
/// reported and never overwritten (see `docs/store-maintenance.md`). On an error, the
/// target keeps the batches committed before it; a SQLite target file the import
/// created is removed if it holds no checkpoint yet, else the error says how many it
/// holds.
///
/// One thread back from a backup of the whole store, the others untouched
/// ([`ImportOptions::threads`]):
///
/// ```
/// use langgraph_codec::store::{
///     export, import, parse_date, prune, AnyStore, ExportOptions, ImportOptions,
///     PruneOptions, StoreKeys,
/// };
/// # fn main() -> Result<(), Box<dyn std::error::Error>> {
/// # let dir = tempfile::tempdir()?;
/// # let path = dir.path().join("checkpoints.db");
/// # std::fs::copy("vectors/stores/sqlite-py-3.1.2/store.sqlite", &path)?;
/// # let store = path.to_str().ok_or("a UTF-8 path")?.to_owned();
/// # let nightly = dir.path().join("nightly.jsonl");
/// let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build()?;
/// runtime.block_on(async {
///     // Last night's backup of the store (a SQLite file Python's SqliteSaver wrote).
///     let mut file = std::fs::File::create(&nightly)?;
///     export(&AnyStore::open(&store).await?, &mut file, &ExportOptions::new()).await?;
///     // Today a prune meant for another thread deletes t-short whole.
///     let idle = PruneOptions::new()
///         .idle_since(parse_date("2999-01-01")?)
///         .threads(["t-short"]);
///     let gone = prune(&store, &StoreKeys::none(), &idle).await?;
///     // t-short comes back from the backup; t-main's rows are read and skipped.
///     let mut backup = std::io::BufReader::new(std::fs::File::open(&nightly)?);
///     let only = ImportOptions::new().threads(["t-short"]);
///     let back = import(&mut backup, "nightly.jsonl", &store, &only).await?;
///     assert_eq!(back.inserted, gone.checkpoints_deleted + gone.writes_deleted);
///     assert!(back.complete && back.skipped > 0 && back.threads_not_found.is_empty());
///     Ok::<_, Box<dyn std::error::Error>>(())
/// })
/// # }
/// ```
///
/// # Errors
/// [`ErrorKind::Backup`](crate::ErrorKind::Backup) for a malformed file (the line is named) or one of
/// another backend; [`ErrorKind::NotAStore`](crate::ErrorKind::NotAStore) for a target in an old layout; the
/// database's errors.
pub async fn import(
    input: &mut dyn BufRead,
    file: &str,
    target: &str,
    options: &ImportOptions,
) -> Result<ImportReport> {
    let new = NewTarget::note(target);
    let report = import_into(input, file, target, options).await;
    new.settle("import", report)
}

async fn import_into(
    input: &mut dyn BufRead,
    file: &str,
    target: &str,
    options: &ImportOptions,
) -> Result<ImportReport> {
    let started = Instant::now();
    let mut rows = BackupRows::open(input, file, options.max_line_bytes)?;
    rows.select(&options.run.threads, &options.run.except_threads);
    // The backends are compared before the target is opened: a refused import leaves
    // no new, empty store behind.
    let backend = match Location::parse(target)? {
        Location::Sqlite(_) => "sqlite",
        Location::Postgres(_) => "postgres",
    };
    if rows.backend != backend {
        return Err(StoreFault::Backup {
            file: format!("{file}:1"),
            reason: format!(
                "a {} backup cannot be imported into a {backend} store (the layouts differ): use `store copy` between backends",
                rows.backend
            ),
        }
        .into());
    }
    // A dry run writes nothing: a target that is not a store yet would get every row.
    let (tgt, created, shown) = if options.run.dry_run {
        match open_target_read_only(target).await? {
            (Some(t), shown) => (Some(t), false, shown),
            (None, shown) => (None, false, shown),
        }
    } else {
        let (t, created, shown) = open_target(target, true).await?;
        (Some(t), created, shown)
    };
    let batch_size = options.run.batch_size.unwrap_or(500);
    // Two batches are held: the one going in and the next, read from the file
    // meanwhile; by default each holds half the page budget.
    let batch_bytes = options.run.batch_bytes.unwrap_or(DEFAULT_PAGE_BYTES / 2);
    let max_samples = options.max_conflict_samples.unwrap_or(20);
    let report = ImportReport {
        operation: "import",
        store: shown,
        created_tables: created,
        excluded_threads: options.run.except_threads.iter().cloned().collect(),
        dry_run: options.run.dry_run,
        would_be_refused: match &tgt {
            _ if !options.run.dry_run => None,
            Some(t) => t.refuses(Writes::Insert).await?,
            None => create_refused(target).await?,
        },
        ..ImportReport::default()
    };
    let sink = Sink {
        tgt,
        report,
        engine: Engine::new("import", "rows", &options.run),
        max_samples,
        dry_run: options.run.dry_run,
        copy_first: true,
    };
    let specs: Vec<Spec> = rows.specs().to_vec();
    let mut batches = Batches {
        rows,
        specs,
        carry: None,
        limits: (batch_size, batch_bytes),
        failed: None,
    };
    // Each batch goes in on a task of its own while the next is read from the file
    // here (on a runtime of more than one thread, on another core).
    let (sink, stopped) = write_behind(&mut batches, sink, WriteOn::OwnTask).await?;
    let mut rows = batches.rows;
    let mut report = sink.report;
    report.reconnects = sink.engine.reconnects();
    report.stopped = stopped;
    report.complete = rows.complete;
    report.skipped = rows.skipped;
    if rows.complete {
        report.threads_not_found = rows.named_unseen();
    }
    report.cut_short = rows.cut_short.take();
    report.elapsed_s = started.elapsed().as_secs_f64();
    Ok(report)
}

/// The next batch of rows of one table from the file: its table (an index into the
/// file's specs), up to `batch_size` rows holding up to `batch_bytes` of values, and
/// the error that ended it early (a malformed line; the rows before it are whole). A
/// row of the next table, read to find the batch's end, waits in `carry`. No rows and
/// no error: the file is done.
fn next_batch(
    rows: &mut BackupRows<'_>,
    carry: &mut Option<(usize, Vec<Cell>)>,
    (batch_size, batch_bytes): (usize, usize),
) -> (Option<usize>, Vec<Vec<Cell>>, Option<crate::Error>) {
    let mut kind = None;
    let mut batch = Vec::new();
    let mut held = 0usize;
    loop {
        if batch.len() >= batch_size || held >= batch_bytes {
            return (kind, batch, None);
        }
        let (i, row) = match carry.take().map(Ok).or_else(|| rows.next_row().transpose()) {
            Some(Ok(next)) => next,
            None => return (kind, batch, None),
            Some(Err(e)) => return (kind, batch, Some(e)),
        };
        if kind.is_some_and(|k| k != i) {
            *carry = Some((i, row));
            return (kind, batch, None);
        }
        kind = Some(i);
        held = held.saturating_add(
            row.iter()
                .map(|c| match c {
                    Cell::Bytes(Some(b)) => b.len(),
                    _ => 0,
                })
                .sum(),
        );
        batch.push(row);
    }
}
