//! [`encrypt`] and [`rekey`], the sweeps that rewrite stored values under the primary
//! key, and their options: each page read, classified and rewritten in one
//! transaction, compare-and-swap per row.

use std::sync::Arc;
use std::time::Instant;

use super::backend::{KeyPart, Row, Table, Update, Writes};
use super::classify::{classify, Class, Classified};
use super::engine::Engine;
use super::error::StoreFault;
use super::keys::StoreKeys;
use super::ops::{
    key_strings, page_keys, probe_keys, stored_len, total_estimate, DEFAULT_PAGE_BYTES,
};
use super::options::{run_setters, RunOptions};
use super::report::{ClassCounts, SweepReport, SweepTable, Tally, UnreadableRow};
use super::Store;
use crate::error::Error;

/// Options of [`encrypt`] and [`rekey`].
#[derive(Clone, Debug)]
pub struct SweepOptions {
    run: RunOptions,
    key_probe: bool,
}

impl Default for SweepOptions {
    fn default() -> Self {
        Self::new()
    }
}

/// Rows a sweep reads and writes per transaction unless [`SweepOptions::batch_size`] says.
const SWEEP_BATCH: usize = 500;

impl SweepOptions {
    /// Batches of 500 rows and at most [`DEFAULT_PAGE_BYTES`], no rate limit, writing,
    /// up to 16 reconnects in a row (about a minute of waiting).
    pub fn new() -> Self {
        SweepOptions {
            run: RunOptions::default(),
            key_probe: true,
        }
    }

    /// The key probe (on by default; see [`KEY_PROBE_VALUES`](super::KEY_PROBE_VALUES)): stop with
    /// [`ErrorKind::NoKeyOpens`](crate::ErrorKind::NoKeyOpens), before writing, when the
    /// first encrypted values are all refused by every key.
    pub fn key_probe(mut self, on: bool) -> Self {
        self.key_probe = on;
        self
    }

    fn batch_size_or_default(&self) -> usize {
        self.run.batch_size.unwrap_or(SWEEP_BATCH)
    }

    fn batch_bytes_or_default(&self) -> usize {
        self.run.batch_bytes.unwrap_or(DEFAULT_PAGE_BYTES)
    }
}

run_setters!(SweepOptions {
    /// Rows read and written per transaction (at least 1).
    batch_size(rows);
    /// Bytes of stored values read per transaction at most (a larger value goes
    /// alone): what bounds a sweep's memory (see [`DEFAULT_PAGE_BYTES`]).
    batch_bytes(bytes);
    /// Count what would change; write nothing.
    dry_run;
    /// After the sweep, compact the store so the old bytes leave the database files:
    /// SQLite `VACUUM` (the whole file rewritten, under a write lock for its duration)
    /// and a truncating WAL checkpoint; Postgres `VACUUM (FULL)` of `checkpoint_blobs`
    /// and `checkpoint_writes` (each under an `ACCESS EXCLUSIVE` lock: writers wait).
    /// Not in a dry run.
    vacuum;
    /// At most this many rows read per second (0 or `None`: no limit). Needs a Tokio
    /// runtime with time enabled.
    max_rows_per_sec;
    /// Postgres: how many times in a row a lost connection is re-opened (the batch in
    /// flight is read again) before the sweep stops with
    /// [`ErrorKind::ConnectionLost`](crate::ErrorKind::ConnectionLost).
    max_reconnects;
    /// Set it (from a signal handler, say) to end the sweep after the batch in flight
    /// ([`SweepReport::stopped`]); the same sweep run again goes on.
    stop_flag;
    /// Called after each batch is read ([`Stage::Read`](super::Stage::Read)) and when it
    /// is done.
    on_progress;
});

#[derive(Clone, Copy, PartialEq, Eq)]
enum Sweep {
    Encrypt,
    Rekey,
}

impl Sweep {
    fn name(self) -> &'static str {
        match self {
            Sweep::Encrypt => "encrypt",
            Sweep::Rekey => "rekey",
        }
    }

    /// Whether a value of this class is this sweep's to rewrite.
    fn wants(self, class: &Class) -> bool {
        match self {
            Sweep::Encrypt => class.is_clear(),
            Sweep::Rekey => matches!(class, Class::Previous(_)),
        }
    }
}

/// Rewrites every value in clear under the primary key (`msgpack` → `msgpack+aes`,
/// `msgpack+zlib` → `msgpack+zlib+aes`, legacy `json` → `json+aes`), in batches, one
/// transaction each, compare-and-swap per row. Rows under any key are left alone (see
/// [`rekey`]); Postgres's inline JSONB values are left in place (see the
/// [module docs](super)).
///
/// # Errors
/// [`ErrorKind::MissingKey`](crate::ErrorKind::MissingKey) without a primary key, [`ErrorKind::NotWritable`](crate::ErrorKind::NotWritable) on a
/// read-only handle (unless a dry run), the database's errors;
/// [`ErrorKind::ConnectionLost`](crate::ErrorKind::ConnectionLost) when Postgres keeps dropping the connection. Values
/// that cannot be rewritten are not errors: they are counted (`failed`).
pub async fn encrypt(
    store: &Store,
    keys: &StoreKeys,
    options: &SweepOptions,
) -> Result<SweepReport, Error> {
    sweep(store, keys, options, Sweep::Encrypt).await
}

/// Rewrites every value under a decrypt-only key under the primary key (same tag), in
/// batches, one transaction each, compare-and-swap per row. Values in clear are left
/// (see [`encrypt`]).
///
/// # Errors
/// As [`encrypt`].
pub async fn rekey(
    store: &Store,
    keys: &StoreKeys,
    options: &SweepOptions,
) -> Result<SweepReport, Error> {
    sweep(store, keys, options, Sweep::Rekey).await
}

/// One batch's results, merged into the report only once its transaction committed.
#[derive(Default)]
struct BatchResult {
    seen: ClassCounts,
    rewritten: Tally,
    changed_by_writer: u64,
    changed_still_pending: u64,
    failed: u64,
    samples: Vec<UnreadableRow>,
}

/// The rewrite of one row, if the sweep wants it: the new tag and bytes.
fn rewrite(
    keys: &StoreKeys,
    op: Sweep,
    row: &Row,
    classified: &Classified,
) -> Option<Result<(String, Vec<u8>), String>> {
    if !op.wants(&classified.class) {
        return None;
    }
    let tag = row.tag.as_deref()?;
    Some(match (&classified.opened, op) {
        (Some((inner, plaintext)), Sweep::Rekey) => keys.seal_checked(plaintext).map(|sealed| {
            (
                format!("{inner}+{}", crate::crypto::AES_CIPHER_NAME),
                sealed,
            )
        }),
        (_, Sweep::Encrypt) => {
            let data = row.data.as_deref()?;
            keys.seal_checked(data)
                .map(|sealed| (format!("{tag}+{}", crate::crypto::AES_CIPHER_NAME), sealed))
        }
        (None, Sweep::Rekey) => Err("a previous-key row without its plaintext".to_owned()),
    })
}

async fn sweep(
    store: &Store,
    keys: &StoreKeys,
    options: &SweepOptions,
    op: Sweep,
) -> Result<SweepReport, Error> {
    let started = Instant::now();
    if !keys.has_primary() {
        return Err(crate::crypto::CryptoFault::MissingKey {
            var: crate::crypto::ENV_KEY.to_owned(),
        }
        .into());
    }
    if let Some(why) = store.backend().rewrite_refused() {
        return Err(StoreFault::NotAStore {
            location: store.location().display(),
            found: why.to_owned(),
        }
        .into());
    }
    if !options.run.dry_run && !store.is_writable() {
        return Err(StoreFault::NotWritable {
            operation: op.name(),
        }
        .into());
    }
    let backend = store.backend();
    let mut engine = Engine::new(op.name(), "values", &options.run);
    let total = engine.again(backend, || total_estimate(store)).await?;
    engine.set_total(total);
    if options.key_probe {
        let (size, bytes) = (
            options.batch_size_or_default(),
            options.batch_bytes_or_default(),
        );
        probe_keys(store, keys, op.name(), size, bytes, &mut engine).await?;
    }
    let mut report = SweepReport {
        operation: op.name(),
        store: store.location().display(),
        backend: store.backend_name(),
        dry_run: options.run.dry_run,
        would_be_refused: match options.run.dry_run {
            true => store.backend().refuses(Writes::Rewrite).await?,
            false => None,
        },
        keys: keys.labels().to_vec(),
        tables: Vec::new(),
        seen: ClassCounts::default(),
        rewritten: Tally::default(),
        changed_by_writer: 0,
        changed_still_pending: 0,
        failed: 0,
        inline_values_left: None,
        batches: 0,
        reconnects: 0,
        failed_samples: Vec::new(),
        elapsed_s: 0.0,
        rows_per_s: 0.0,
        mb_per_s: 0.0,
        complete: false,
        stopped: false,
        vacuumed: false,
        left_behind: None,
    };
    let mut done = 0u64;
    let mut bytes_read = 0u64;
    for t in store.backend().tables() {
        let mut table = SweepTable {
            column: t.label.to_owned(),
            ..SweepTable::default()
        };
        let mut after: Option<Vec<KeyPart>> = None;
        loop {
            if engine.stop_here() {
                report.stopped = true;
                break;
            }
            let attempt = batch(
                store,
                keys,
                options,
                op,
                t,
                after.clone(),
                &mut |rows: &[Row]| engine.reading(t.label, rows.len() as u64, page_keys(rows)),
            )
            .await;
            let (result, next, page_bytes) = match engine.settle(backend, attempt).await? {
                Some(Some(x)) => x,
                Some(None) => break,
                None => continue,
            };
            let rows = result.seen.total.rows;
            table.seen.merge(&result.seen);
            table.rewritten.rows = table.rewritten.rows.saturating_add(result.rewritten.rows);
            table.rewritten.bytes = table.rewritten.bytes.saturating_add(result.rewritten.bytes);
            table.changed_by_writer = table
                .changed_by_writer
                .saturating_add(result.changed_by_writer);
            table.changed_still_pending = table
                .changed_still_pending
                .saturating_add(result.changed_still_pending);
            table.failed = table.failed.saturating_add(result.failed);
            for s in result.samples {
                if report.failed_samples.len() < 20 {
                    report.failed_samples.push(s);
                }
            }
            report.batches = report.batches.saturating_add(1);
            done = done.saturating_add(rows);
            bytes_read = bytes_read.saturating_add(page_bytes);
            after = Some(next);
            engine
                .batch_done(t.label, rows, result.rewritten.rows, None)
                .await;
        }
        report.seen.merge(&table.seen);
        report.rewritten.rows = report.rewritten.rows.saturating_add(table.rewritten.rows);
        report.rewritten.bytes = report.rewritten.bytes.saturating_add(table.rewritten.bytes);
        report.changed_by_writer = report
            .changed_by_writer
            .saturating_add(table.changed_by_writer);
        report.changed_still_pending = report
            .changed_still_pending
            .saturating_add(table.changed_still_pending);
        report.failed = report.failed.saturating_add(table.failed);
        report.tables.push(table);
        if report.stopped {
            break;
        }
    }
    if op == Sweep::Encrypt && !report.stopped && store.backend().holds_inline_values() {
        let mut left = 0u64;
        let mut after = None;
        loop {
            let from = after.take();
            let rows = engine
                .again(backend, || backend.inline_page(from.clone(), 250))
                .await?;
            let Some(last) = rows.last() else { break };
            let next = last.key.clone();
            left = left.saturating_add(rows.iter().map(|r| r.values).sum::<u64>());
            after = Some(next);
        }
        report.inline_values_left = Some(left);
    }
    report.reconnects = engine.reconnects();
    let elapsed = started.elapsed().as_secs_f64();
    report.elapsed_s = elapsed;
    if elapsed > 0.0 {
        report.rows_per_s = done as f64 / elapsed;
        report.mb_per_s = bytes_read as f64 / 1e6 / elapsed;
    }
    report.complete = !report.stopped && report.failed == 0 && report.changed_still_pending == 0;
    if !options.run.dry_run {
        store.backend().flush_stats().await;
    }
    if !options.run.dry_run && report.rewritten.rows > 0 {
        report.left_behind = Some(store.backend().left_behind().to_owned());
    }
    if options.run.vacuum && !options.run.dry_run && !report.stopped {
        (report.vacuumed, report.left_behind) = store.backend().vacuum().await?;
        report.elapsed_s = started.elapsed().as_secs_f64();
    }
    Ok(report)
}

/// Reads one page after `after`, rewrites what the sweep wants, and commits the batch:
/// `None` past the last page, else the batch's results, the last key and the bytes
/// read.
async fn batch(
    store: &Store,
    keys: &StoreKeys,
    options: &SweepOptions,
    op: Sweep,
    t: &'static Table,
    after: Option<Vec<KeyPart>>,
    on_read: &mut (dyn FnMut(&[Row]) + Send),
) -> Result<Option<(BatchResult, Vec<KeyPart>, u64)>, Error> {
    let mut rows = store
        .backend()
        .page(
            t,
            after,
            options.batch_size_or_default(),
            options.batch_bytes_or_default(),
        )
        .await?;
    let Some(last) = rows.last() else {
        return Ok(None);
    };
    let next = last.key.clone();
    let mut result = BatchResult::default();
    let mut updates = Vec::new();
    let mut page_bytes = 0u64;
    for row in rows.iter_mut() {
        let classified = classify(keys, row.tag.as_deref(), row.data.as_deref());
        let bytes = stored_len(row);
        page_bytes = page_bytes.saturating_add(bytes);
        result.seen.add(&classified.class, |n| keys.label(n), bytes);
        let failure = match (&classified.class, rewrite(keys, op, row, &classified)) {
            (_, Some(Ok((new_tag, new_data)))) => {
                // The old bytes move into the update (its compare-and-swap needs them):
                // a page's values are held once, not twice.
                if let (Some(old_tag), Some(old_data)) = (row.tag.clone(), row.data.take()) {
                    updates.push(Update {
                        key: row.key.clone(),
                        old_tag,
                        old_data,
                        new_tag,
                        new_data,
                    });
                }
                None
            }
            (_, Some(Err(why))) => Some(why),
            (Class::Unreadable(why), None) => Some(why.clone()),
            _ => None,
        };
        if let Some(reason) = failure {
            result.failed = result.failed.saturating_add(1);
            if result.samples.len() < 20 {
                result.samples.push(UnreadableRow {
                    column: t.label.to_owned(),
                    key: key_strings(&row.key),
                    reason,
                });
            }
        }
    }
    on_read(&rows);
    drop(rows);
    if options.run.dry_run || updates.is_empty() {
        for u in &updates {
            result.rewritten.rows = result.rewritten.rows.saturating_add(1);
            result.rewritten.bytes = result
                .rewritten
                .bytes
                .saturating_add(u.new_data.len() as u64);
        }
        return Ok(Some((result, next, page_bytes)));
    }
    let updates = Arc::new(updates);
    let applied = store.backend().apply(t, Arc::clone(&updates)).await?;
    for (u, ok) in updates.iter().zip(applied) {
        if ok {
            result.rewritten.rows = result.rewritten.rows.saturating_add(1);
            result.rewritten.bytes = result
                .rewritten
                .bytes
                .saturating_add(u.new_data.len() as u64);
            continue;
        }
        // A writer changed (or deleted) the row after it was read: it is the writer's.
        // Read it again to say whether it still needs this sweep.
        result.changed_by_writer = result.changed_by_writer.saturating_add(1);
        if let Some(now) = store.backend().reread(t, u.key.clone()).await? {
            let c = classify(keys, now.tag.as_deref(), now.data.as_deref());
            if op.wants(&c.class) {
                result.changed_still_pending = result.changed_still_pending.saturating_add(1);
            }
        }
    }
    Ok(Some((result, next, page_bytes)))
}
