//! [`audit`], [`encrypt`], [`rekey`] and their options.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use super::backend::{KeyPart, Row, Table, Update};
use super::classify::{classify, Class, Classified};
use super::error::StoreFault;
use super::keys::StoreKeys;
use super::report::{
    AuditReport, ClassCounts, InlineCounts, SweepReport, SweepTable, TableCounts, Tally,
    UnreadableRow, Verdict,
};
use super::Store;
use crate::error::Error;

/// A progress callback.
pub type ProgressFn = Arc<dyn Fn(&Progress) + Send + Sync>;

/// When a [`Progress`] report is made.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Stage {
    /// A page was read and classified; a sweep has not written its rewrites yet.
    Read,
    /// A page is done (a sweep's batch committed, or skipped in a dry run).
    Done,
}

/// Where an operation is.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct Progress {
    /// `audit`, `encrypt` or `rekey`.
    pub operation: &'static str,
    /// `table.column` being read.
    pub column: &'static str,
    /// Values read so far (every table).
    pub rows_done: u64,
    /// Values in the store when the operation started (an estimate: writers add rows).
    pub total_estimate: u64,
    /// Values rewritten so far (a sweep; in a dry run, that would be).
    pub rewritten: u64,
    /// When this report is made.
    pub stage: Stage,
    /// The keys of the page's rows, first and last (for a caller that wants to act
    /// between a sweep's read and its write, e.g. a test of the compare-and-swap).
    pub page: Option<(Vec<String>, Vec<String>)>,
}

/// Bytes of stored values one page of [`audit`], [`encrypt`] or [`rekey`] reads at most
/// unless its options say (a value larger than this is a page of its own). An audit
/// holds about one page (two on Postgres, with the client's read buffer); a sweep the
/// old bytes its compare-and-swap matches and the rewrites, about twice this (on
/// Postgres also the statement carrying both, about six times). The same budget as a
/// copy's batch
/// ([`DEFAULT_COPY_BATCH_BYTES`](super::DEFAULT_COPY_BATCH_BYTES)).
pub const DEFAULT_PAGE_BYTES: usize = 16 << 20;

/// How many encrypted values the key probe tries at most: at the start of [`audit`],
/// [`encrypt`] and [`rekey`], the first page of each table is read, and when its first
/// encrypted values (up to this many) are each refused by every key given and none
/// opens, the operation stops with [`ErrorKind::NoKeyOpens`](crate::ErrorKind::NoKeyOpens)
/// before reading on or writing anything. One value that opens, under any key, lets it
/// go on (values under a key that is lost are then counted unreadable, as before).
/// Off with [`AuditOptions::key_probe`] / [`SweepOptions::key_probe`].
pub const KEY_PROBE_VALUES: u64 = 50;

/// Options of [`audit`].
#[derive(Clone)]
pub struct AuditOptions {
    allow_clear: bool,
    allow_previous: bool,
    deny_inline: bool,
    allow_free_space: bool,
    page_size: usize,
    page_bytes: usize,
    per_thread: bool,
    max_samples: usize,
    max_reconnects: u32,
    key_probe: bool,
    progress: Option<ProgressFn>,
}

impl std::fmt::Debug for AuditOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AuditOptions")
            .field("allow_clear", &self.allow_clear)
            .field("allow_previous", &self.allow_previous)
            .field("deny_inline", &self.deny_inline)
            .field("page_size", &self.page_size)
            .field("page_bytes", &self.page_bytes)
            .field("per_thread", &self.per_thread)
            .field("max_samples", &self.max_samples)
            .field("key_probe", &self.key_probe)
            .finish_non_exhaustive()
    }
}

impl Default for AuditOptions {
    fn default() -> Self {
        Self::new()
    }
}

impl AuditOptions {
    /// Strict: any value in clear, under a decrypt-only key, or unreadable is a
    /// finding; pages of 1,000 rows and at most [`DEFAULT_PAGE_BYTES`]; per-thread
    /// counts on; 20 unreadable samples.
    pub fn new() -> Self {
        AuditOptions {
            allow_clear: false,
            allow_previous: false,
            deny_inline: false,
            allow_free_space: false,
            page_size: 1000,
            page_bytes: DEFAULT_PAGE_BYTES,
            per_thread: true,
            max_samples: 20,
            max_reconnects: 5,
            key_probe: true,
            progress: None,
        }
    }

    /// The key probe (on by default; see [`KEY_PROBE_VALUES`]): with keys given, stop
    /// with [`ErrorKind::NoKeyOpens`](crate::ErrorKind::NoKeyOpens) when the first
    /// encrypted values are all refused by every key. Without keys there is no probe.
    pub fn key_probe(mut self, on: bool) -> Self {
        self.key_probe = on;
        self
    }

    /// Postgres: how many times in a row a lost connection is re-opened (the page is
    /// read again) before the audit stops with [`ErrorKind::ConnectionLost`](crate::ErrorKind::ConnectionLost).
    pub fn max_reconnects(mut self, n: u32) -> Self {
        self.max_reconnects = n;
        self
    }

    /// Values in clear are not findings (e.g. before encryption is turned on).
    pub fn allow_clear(mut self, on: bool) -> Self {
        self.allow_clear = on;
        self
    }

    /// Values under decrypt-only keys are not findings (e.g. during a rotation).
    pub fn allow_previous(mut self, on: bool) -> Self {
        self.allow_previous = on;
        self
    }

    /// Postgres: inline JSONB channel values count as findings (for stores written
    /// with `all_values_in_blobs`; Python's saver always writes some).
    pub fn deny_inline(mut self, on: bool) -> Self {
        self.deny_inline = on;
        self
    }

    /// Free space that may hold old bytes (SQLite's free pages, Postgres's dead row
    /// versions) is not a finding: acknowledged, or dealt with outside this tool.
    pub fn allow_free_space(mut self, on: bool) -> Self {
        self.allow_free_space = on;
        self
    }

    /// Rows read per query (at least 1).
    pub fn page_size(mut self, rows: usize) -> Self {
        self.page_size = rows.max(1);
        self
    }

    /// Bytes of stored values read per query at most (a larger value is read alone).
    pub fn page_bytes(mut self, bytes: usize) -> Self {
        self.page_bytes = bytes.max(1);
        self
    }

    /// Whether to count per thread (memory grows with the number of threads).
    pub fn per_thread(mut self, on: bool) -> Self {
        self.per_thread = on;
        self
    }

    /// How many unreadable values to describe.
    pub fn max_samples(mut self, n: usize) -> Self {
        self.max_samples = n;
        self
    }

    /// Called after each page.
    pub fn on_progress(mut self, f: impl Fn(&Progress) + Send + Sync + 'static) -> Self {
        self.progress = Some(Arc::new(f));
        self
    }
}

/// Options of [`encrypt`] and [`rekey`].
#[derive(Clone)]
pub struct SweepOptions {
    batch_size: usize,
    batch_bytes: usize,
    dry_run: bool,
    vacuum: bool,
    max_rows_per_sec: Option<u64>,
    max_reconnects: u32,
    key_probe: bool,
    progress: Option<ProgressFn>,
}

impl std::fmt::Debug for SweepOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SweepOptions")
            .field("batch_size", &self.batch_size)
            .field("batch_bytes", &self.batch_bytes)
            .field("dry_run", &self.dry_run)
            .field("max_rows_per_sec", &self.max_rows_per_sec)
            .field("max_reconnects", &self.max_reconnects)
            .field("key_probe", &self.key_probe)
            .finish_non_exhaustive()
    }
}

impl Default for SweepOptions {
    fn default() -> Self {
        Self::new()
    }
}

impl SweepOptions {
    /// Batches of 500 rows and at most [`DEFAULT_PAGE_BYTES`], no rate limit, writing,
    /// up to 5 reconnects in a row.
    pub fn new() -> Self {
        SweepOptions {
            batch_size: 500,
            batch_bytes: DEFAULT_PAGE_BYTES,
            dry_run: false,
            vacuum: false,
            max_rows_per_sec: None,
            max_reconnects: 5,
            key_probe: true,
            progress: None,
        }
    }

    /// The key probe (on by default; see [`KEY_PROBE_VALUES`]): stop with
    /// [`ErrorKind::NoKeyOpens`](crate::ErrorKind::NoKeyOpens), before writing, when the
    /// first encrypted values are all refused by every key.
    pub fn key_probe(mut self, on: bool) -> Self {
        self.key_probe = on;
        self
    }

    /// Rows read and written per transaction (at least 1).
    pub fn batch_size(mut self, rows: usize) -> Self {
        self.batch_size = rows.max(1);
        self
    }

    /// Bytes of stored values read per transaction at most (a larger value goes
    /// alone): what bounds a sweep's memory (see [`DEFAULT_PAGE_BYTES`]).
    pub fn batch_bytes(mut self, bytes: usize) -> Self {
        self.batch_bytes = bytes.max(1);
        self
    }

    /// Count what would change; write nothing.
    pub fn dry_run(mut self, on: bool) -> Self {
        self.dry_run = on;
        self
    }

    /// After the sweep, compact the store so the old bytes leave the database files:
    /// SQLite `VACUUM` (the whole file rewritten, under a write lock for its duration)
    /// and a truncating WAL checkpoint; Postgres `VACUUM (FULL)` of `checkpoint_blobs`
    /// and `checkpoint_writes` (each under an `ACCESS EXCLUSIVE` lock: writers wait).
    /// Not in a dry run.
    pub fn vacuum(mut self, on: bool) -> Self {
        self.vacuum = on;
        self
    }

    /// At most this many rows read per second (0 or `None`: no limit). Needs a Tokio
    /// runtime with time enabled.
    pub fn max_rows_per_sec(mut self, rate: Option<u64>) -> Self {
        self.max_rows_per_sec = rate.filter(|r| *r > 0);
        self
    }

    /// Postgres: how many times in a row a lost connection is re-opened (the batch in
    /// flight is read again) before the sweep stops with
    /// [`ErrorKind::ConnectionLost`](crate::ErrorKind::ConnectionLost).
    pub fn max_reconnects(mut self, n: u32) -> Self {
        self.max_reconnects = n;
        self
    }

    /// Called after each batch is read ([`Stage::Read`]) and when it is done.
    pub fn on_progress(mut self, f: impl Fn(&Progress) + Send + Sync + 'static) -> Self {
        self.progress = Some(Arc::new(f));
        self
    }
}

fn key_strings(key: &[KeyPart]) -> Vec<String> {
    key.iter().map(KeyPart::text).collect()
}

fn page_keys(rows: &[Row]) -> Option<(Vec<String>, Vec<String>)> {
    Some((
        key_strings(&rows.first()?.key),
        key_strings(&rows.last()?.key),
    ))
}

fn stored_len(row: &Row) -> u64 {
    row.data.as_ref().map_or(0, |d| d.len() as u64)
}

async fn total_estimate(store: &Store) -> Result<u64, Error> {
    let mut total = 0u64;
    for t in store.tables() {
        total = total.saturating_add(store.count(t).await?);
    }
    Ok(total)
}

/// Runs `f`; when the Postgres connection is lost, reconnects (backing off) and runs it
/// again, at most `max` times in a row.
async fn retrying<T, F, Fut>(
    store: &Store,
    max: u32,
    reconnects: &mut u64,
    mut f: F,
) -> Result<T, Error>
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = Result<T, Error>>,
{
    let mut lost = 0u32;
    loop {
        match f().await {
            Err(e) if e.is_connection_lost() => {
                lost = lost.saturating_add(1);
                if lost > max {
                    return Err(StoreFault::ConnectionLost {
                        attempts: lost,
                        last: e.to_string(),
                    }
                    .into());
                }
                reconnect(store, lost, reconnects).await?;
            }
            other => return other,
        }
    }
}

/// Waits a little longer each time, then re-opens the Postgres connection (a failed
/// attempt counts as one more loss at the next statement).
async fn reconnect(store: &Store, attempt: u32, reconnects: &mut u64) -> Result<(), Error> {
    sleep(Duration::from_millis(
        100u64.saturating_mul(u64::from(attempt.min(20))),
    ))
    .await;
    match store.reconnect().await {
        Ok(()) => {
            *reconnects = reconnects.saturating_add(1);
            Ok(())
        }
        Err(e) if e.is_connection_lost() => Ok(()),
        Err(e) => Err(e),
    }
}

/// The key probe ([`KEY_PROBE_VALUES`]): reads the first page of each table and tries
/// every key on its encrypted values, up to [`KEY_PROBE_VALUES`] of them; an error when
/// some were tried, each was refused by every key, and none opened. No keys: no probe.
async fn probe_keys(
    store: &Store,
    keys: &StoreKeys,
    operation: &'static str,
    page_size: usize,
    page_bytes: usize,
    retries: u32,
    reconnects: &mut u64,
) -> Result<(), Error> {
    if keys.labels().is_empty() {
        return Ok(());
    }
    let mut refused = 0u64;
    for t in store.tables() {
        let rows = retrying(store, retries, reconnects, || {
            store.page(t, None, page_size, page_bytes)
        })
        .await?;
        for row in &rows {
            let (Some(tag), Some(data)) = (row.tag.as_deref(), row.data.as_deref()) else {
                continue;
            };
            if tag.rsplit_once('+').map(|(_, name)| name) != Some(crate::crypto::AES_CIPHER_NAME) {
                continue;
            }
            match keys.opens(data) {
                Some(true) => return Ok(()),
                Some(false) => refused = refused.saturating_add(1),
                None => {}
            }
            if refused >= KEY_PROBE_VALUES {
                break;
            }
        }
        if refused >= KEY_PROBE_VALUES {
            break;
        }
    }
    if refused == 0 {
        return Ok(());
    }
    Err(StoreFault::NoKeyOpens {
        operation,
        tried: refused,
        keys: keys.labels().to_vec(),
    }
    .into())
}

fn never_encrypted(store: &Store) -> Vec<String> {
    match store.backend_name() {
        "postgres" => vec![
            "checkpoints.metadata (JSONB)".to_owned(),
            "checkpoints.checkpoint (JSONB: ids, timestamps, channel versions, versions_seen; its inline channel values are counted under `inline`)".to_owned(),
            "key columns: thread_id, checkpoint_ns, checkpoint_id, parent_checkpoint_id, channel, version, task_id, task_path, idx".to_owned(),
        ],
        _ => vec![
            "checkpoints.metadata (JSON text)".to_owned(),
            "key columns: thread_id, checkpoint_ns, checkpoint_id, parent_checkpoint_id, task_id, task_path, idx, channel".to_owned(),
        ],
    }
}

/// Reads every stored value of the store and classifies it: in clear, legacy `json`,
/// under the primary key, under decrypt-only key N, unreadable (with why), or an `empty`
/// marker; counts and bytes per table and per thread; on Postgres also the values kept
/// inline in the checkpoint JSONB. The verdict is [`Verdict::Clean`] unless a value is in
/// clear or under a decrypt-only key (each allowed by an option) or unreadable. Writes
/// nothing; pages through each table by primary key.
///
/// # Errors
/// The database's errors (`StoreFault::Sqlite`, `StoreFault::Postgres`).
pub async fn audit(
    store: &Store,
    keys: &StoreKeys,
    options: &AuditOptions,
) -> Result<AuditReport, Error> {
    let started = Instant::now();
    let mut reconnects = 0u64;
    let retries = options.max_reconnects;
    let total = retrying(store, retries, &mut reconnects, || total_estimate(store)).await?;
    #[cfg(feature = "postgres")]
    let total = match store.postgres() {
        Some(pg) => total.saturating_add(
            retrying(store, retries, &mut reconnects, || pg.count_checkpoints()).await?,
        ),
        None => total,
    };
    if options.key_probe {
        let (size, bytes) = (options.page_size, options.page_bytes);
        probe_keys(store, keys, "audit", size, bytes, retries, &mut reconnects).await?;
    }
    let mut done = 0u64;
    let mut tables = Vec::new();
    let mut totals = ClassCounts::default();
    let mut threads: BTreeMap<String, ClassCounts> = BTreeMap::new();
    let mut samples = Vec::new();
    let report = |column: &'static str, done: u64, page| {
        if let Some(f) = &options.progress {
            f(&super::Progress {
                operation: "audit",
                column,
                rows_done: done,
                total_estimate: total.max(done),
                rewritten: 0,
                stage: Stage::Done,
                page,
            });
        }
    };
    for t in store.tables() {
        let mut counts = ClassCounts::default();
        let mut after: Option<Vec<KeyPart>> = None;
        loop {
            let from = after.take();
            let rows = retrying(store, retries, &mut reconnects, || {
                store.page(t, from.clone(), options.page_size, options.page_bytes)
            })
            .await?;
            let Some(last) = rows.last() else { break };
            let next = last.key.clone();
            for row in &rows {
                let Classified { class, .. } =
                    classify(keys, row.tag.as_deref(), row.data.as_deref());
                let bytes = stored_len(row);
                counts.add(&class, |n| keys.label(n), bytes);
                if options.per_thread {
                    threads.entry(row.thread_id()).or_default().add(
                        &class,
                        |n| keys.label(n),
                        bytes,
                    );
                }
                if let Class::Unreadable(reason) = class {
                    if samples.len() < options.max_samples {
                        samples.push(UnreadableRow {
                            column: t.label.to_owned(),
                            key: key_strings(&row.key),
                            reason,
                        });
                    }
                }
            }
            done = done.saturating_add(rows.len() as u64);
            report(t.label, done, page_keys(&rows));
            after = Some(next);
        }
        totals.merge(&counts);
        tables.push(TableCounts {
            column: t.label.to_owned(),
            counts,
        });
    }
    #[allow(unused_mut)]
    let mut inline: Option<InlineCounts> = None;
    #[cfg(feature = "postgres")]
    if let Some(pg) = store.postgres() {
        let mut c = InlineCounts {
            counted_as_findings: options.deny_inline,
            note: "Python's Postgres saver writes every None/str/int/float/bool channel value inline in the checkpoint JSONB, in clear, on every put, whatever the serializer: no key protects them while Python writes. Not a finding unless deny_inline.".to_owned(),
            ..InlineCounts::default()
        };
        let mut after = None;
        loop {
            let from = after.take();
            let rows = retrying(store, retries, &mut reconnects, || {
                pg.inline_page(from.clone(), options.page_size)
            })
            .await?;
            let Some(last) = rows.last() else { break };
            let next = last.key.clone();
            for r in &rows {
                c.checkpoints = c.checkpoints.saturating_add(1);
                c.values.rows = c.values.rows.saturating_add(r.values);
                c.values.bytes = c.values.bytes.saturating_add(r.bytes);
                c.nulls = c.nulls.saturating_add(r.nulls);
                c.markers = c.markers.saturating_add(r.markers);
            }
            done = done.saturating_add(rows.len() as u64);
            report("checkpoints.checkpoint", done, None);
            after = Some(next);
        }
        inline = Some(c);
    }
    let mut findings = Vec::new();
    let clear = totals.clear_total();
    if clear.rows > 0 && !options.allow_clear {
        findings.push(format!(
            "{} value(s) in clear ({} bytes): run `store encrypt`",
            clear.rows, clear.bytes
        ));
    }
    let previous = totals.previous_total();
    if previous.rows > 0 && !options.allow_previous {
        let by_key: Vec<String> = totals
            .previous
            .iter()
            .map(|(k, v)| format!("{} under {k}", v.rows))
            .collect();
        findings.push(format!(
            "{} value(s) under decrypt-only keys ({}): run `store rekey`",
            previous.rows,
            by_key.join(", ")
        ));
    }
    if totals.unreadable.rows > 0 {
        findings.push(format!(
            "{} value(s) unreadable: which, and why, on the `unreadable:` lines (`unreadable_samples` in JSON)",
            totals.unreadable.rows
        ));
    }
    let mut free_space = retrying(store, retries, &mut reconnects, || store.free_space()).await?;
    free_space.counted_as_findings =
        free_space.any() && !options.allow_free_space && !options.allow_clear;
    if free_space.counted_as_findings {
        findings.push(match (free_space.free_pages, free_space.dead_rows) {
            (Some(pages), _) if pages > 0 => format!(
                "{pages} free page(s) ({} bytes) may still hold bytes of deleted or rewritten values: run `store encrypt --vacuum` (or VACUUM), or acknowledge with --allow-free-space",
                free_space.free_bytes.unwrap_or(0)
            ),
            (_, dead) => format!(
                "{} dead row version(s) in checkpoint_blobs/checkpoint_writes still hold their old bytes: run `store encrypt --vacuum` (VACUUM FULL), or acknowledge with --allow-free-space",
                dead.unwrap_or(0)
            ),
        });
    }
    if let Some(c) = &inline {
        if options.deny_inline && c.values.rows > 0 {
            findings.push(format!(
                "{} inline JSONB channel value(s) in clear ({} bytes)",
                c.values.rows, c.values.bytes
            ));
        }
    }
    Ok(AuditReport {
        operation: "audit",
        store: store.location().display(),
        backend: store.backend_name(),
        keys: keys.labels().to_vec(),
        tables,
        inline_values_in_clear: inline.as_ref().map_or(0, |c| c.values.rows),
        inline,
        totals,
        threads,
        unreadable_samples: samples,
        never_encrypted: never_encrypted(store),
        free_space,
        verdict: if findings.is_empty() {
            Verdict::Clean
        } else {
            Verdict::Findings
        },
        findings,
        elapsed_s: started.elapsed().as_secs_f64(),
    })
}

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

/// Paces an operation to at most `rate` rows a second, on average since it started:
/// each [`account`](Self::account) sleeps until the rows done so far are due.
pub(crate) struct Throttle {
    rate: Option<u64>,
    started: Instant,
    done: u64,
}

impl Throttle {
    pub(crate) fn new(rate: Option<u64>) -> Self {
        Throttle {
            rate: rate.filter(|r| *r > 0),
            started: Instant::now(),
            done: 0,
        }
    }

    /// Counts `rows` more and waits until they are due.
    pub(crate) async fn account(&mut self, rows: u64) {
        self.done = self.done.saturating_add(rows);
        let Some(rate) = self.rate else { return };
        let due = Duration::from_secs_f64(self.done as f64 / rate as f64);
        let elapsed = self.started.elapsed();
        if due > elapsed {
            sleep(due.saturating_sub(elapsed)).await;
        }
    }
}

async fn sleep(d: Duration) {
    if tokio::runtime::Handle::try_current().is_ok() {
        tokio::time::sleep(d).await;
    } else {
        std::thread::sleep(d);
    }
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
    if let Some(why) = store.rewrite_refused() {
        return Err(StoreFault::NotAStore {
            location: store.location().display(),
            found: why.to_owned(),
        }
        .into());
    }
    if !options.dry_run && !store.is_writable() {
        return Err(StoreFault::NotWritable {
            operation: op.name(),
        }
        .into());
    }
    let mut reconnects = 0u64;
    let total = retrying(store, options.max_reconnects, &mut reconnects, || {
        total_estimate(store)
    })
    .await?;
    if options.key_probe {
        let (size, bytes, retries) = (
            options.batch_size,
            options.batch_bytes,
            options.max_reconnects,
        );
        probe_keys(
            store,
            keys,
            op.name(),
            size,
            bytes,
            retries,
            &mut reconnects,
        )
        .await?;
    }
    let mut report = SweepReport {
        operation: op.name(),
        store: store.location().display(),
        backend: store.backend_name(),
        dry_run: options.dry_run,
        keys: keys.labels().to_vec(),
        tables: Vec::new(),
        seen: ClassCounts::default(),
        rewritten: Tally::default(),
        changed_by_writer: 0,
        changed_still_pending: 0,
        failed: 0,
        inline_values_left: None,
        batches: 0,
        reconnects,
        failed_samples: Vec::new(),
        elapsed_s: 0.0,
        rows_per_s: 0.0,
        mb_per_s: 0.0,
        complete: false,
        vacuumed: false,
        left_behind: None,
    };
    let mut done = 0u64;
    let mut bytes_read = 0u64;
    let mut lost_in_a_row = 0u32;
    let mut throttle = Throttle::new(options.max_rows_per_sec);
    let progress = |column: &'static str, done: u64, rewritten: u64, stage: Stage, page| {
        if let Some(f) = &options.progress {
            f(&Progress {
                operation: op.name(),
                column,
                rows_done: done,
                total_estimate: total.max(done),
                rewritten,
                stage,
                page,
            });
        }
    };
    for t in store.tables() {
        let mut table = SweepTable {
            column: t.label.to_owned(),
            ..SweepTable::default()
        };
        let mut after: Option<Vec<KeyPart>> = None;
        loop {
            let attempt = batch(
                store,
                keys,
                options,
                op,
                t,
                after.clone(),
                &mut |rows: &[Row]| {
                    progress(
                        t.label,
                        done.saturating_add(rows.len() as u64),
                        report.rewritten.rows.saturating_add(table.rewritten.rows),
                        Stage::Read,
                        page_keys(rows),
                    )
                },
            )
            .await;
            let (result, next, page_bytes) = match attempt {
                Ok(Some(x)) => {
                    lost_in_a_row = 0;
                    x
                }
                Ok(None) => break,
                Err(e) if e.is_connection_lost() => {
                    lost_in_a_row = lost_in_a_row.saturating_add(1);
                    if lost_in_a_row > options.max_reconnects {
                        return Err(StoreFault::ConnectionLost {
                            attempts: lost_in_a_row,
                            last: e.to_string(),
                        }
                        .into());
                    }
                    sleep(Duration::from_millis(
                        100u64.saturating_mul(u64::from(lost_in_a_row)),
                    ))
                    .await;
                    match store.reconnect().await {
                        Ok(()) => report.reconnects = report.reconnects.saturating_add(1),
                        Err(e) if e.is_connection_lost() => {}
                        Err(e) => return Err(e),
                    }
                    continue;
                }
                Err(e) => return Err(e),
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
            progress(
                t.label,
                done,
                report.rewritten.rows.saturating_add(table.rewritten.rows),
                Stage::Done,
                None,
            );
            after = Some(next);
            throttle.account(rows).await;
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
    }
    #[cfg(feature = "postgres")]
    if let Some(pg) = store.postgres() {
        if op == Sweep::Encrypt {
            let mut left = 0u64;
            let mut after = None;
            loop {
                let from = after.take();
                let rows = retrying(
                    store,
                    options.max_reconnects,
                    &mut report.reconnects,
                    || pg.inline_page(from.clone(), 250),
                )
                .await?;
                let Some(last) = rows.last() else { break };
                let next = last.key.clone();
                left = left.saturating_add(rows.iter().map(|r| r.values).sum::<u64>());
                after = Some(next);
            }
            report.inline_values_left = Some(left);
        }
    }
    let elapsed = started.elapsed().as_secs_f64();
    report.elapsed_s = elapsed;
    if elapsed > 0.0 {
        report.rows_per_s = done as f64 / elapsed;
        report.mb_per_s = bytes_read as f64 / 1e6 / elapsed;
    }
    report.complete = report.failed == 0 && report.changed_still_pending == 0;
    if !options.dry_run {
        store.flush_stats().await;
    }
    if !options.dry_run && report.rewritten.rows > 0 {
        report.left_behind = Some(match store.backend_name() {
            "postgres" => "the old versions of the rewritten rows stay in the table files until \
                           VACUUM FULL (run again with --vacuum), and in WAL segments, on replicas \
                           and in backups"
                .to_owned(),
            _ => "the rewrites zeroed what they freed (secure_delete), but a page split leaves \
                  old cell bytes in unused space inside pages until VACUUM (run again with \
                  --vacuum); copies and backups of the file keep theirs"
                .to_owned(),
        });
    }
    if options.vacuum && !options.dry_run {
        report.left_behind = store.vacuum().await?;
        report.vacuumed = true;
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
        .page(t, after, options.batch_size, options.batch_bytes)
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
    if options.dry_run || updates.is_empty() {
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
    let applied = store.apply(t, Arc::clone(&updates)).await?;
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
        if let Some(now) = store.reread(t, u.key.clone()).await? {
            let c = classify(keys, now.tag.as_deref(), now.data.as_deref());
            if op.wants(&c.class) {
                result.changed_still_pending = result.changed_still_pending.saturating_add(1);
            }
        }
    }
    Ok(Some((result, next, page_bytes)))
}
