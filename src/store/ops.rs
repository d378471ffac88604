//! [`audit`] and its options, and what it shares with the sweeps
//! ([`encrypt`](super::encrypt) and [`rekey`](super::rekey), in `sweep.rs`): the page
//! budget and the key probe. Reconnecting after a lost Postgres connection, progress
//! reports and the rate limit, which every operation shares, are the engine's
//! (`engine.rs`).

use std::collections::BTreeMap;
use std::time::Instant;

use super::backend::{KeyPart, Row};
use super::classify::{classify, Class, Classified};
use super::engine::Engine;
use super::error::StoreFault;
use super::keys::StoreKeys;
use super::options::{run_setters, RunOptions};
use super::report::{AuditReport, ClassCounts, InlineCounts, TableCounts, UnreadableRow, Verdict};
use super::spill::Spill;
use super::Store;
use crate::error::Error;

/// Bytes of stored values one page of [`audit`], [`encrypt`](super::encrypt) or
/// [`rekey`](super::rekey) reads at most unless its options say (a value larger than
/// this is a page of its own). An audit holds about one page (two on Postgres, with
/// the client's read buffer); a sweep the old bytes its compare-and-swap matches and
/// the rewrites, about twice this (on Postgres also the statement carrying both, about
/// six times). The same budget as a copy's batch
/// ([`DEFAULT_COPY_BATCH_BYTES`](super::DEFAULT_COPY_BATCH_BYTES)).
pub const DEFAULT_PAGE_BYTES: usize = 16 << 20;

/// How many encrypted values the key probe tries at most: at the start of [`audit`],
/// [`encrypt`](super::encrypt) and [`rekey`](super::rekey), the first page of each
/// table is read, and when its first encrypted values (up to this many) are each
/// refused by every key given and none opens, the operation stops with
/// [`ErrorKind::NoKeyOpens`](crate::ErrorKind::NoKeyOpens) before reading on or
/// writing anything. One value that opens, under any key, lets it
/// go on (values under a key that is lost are then counted unreadable, as before).
/// Off with [`AuditOptions::key_probe`] /
/// [`SweepOptions::key_probe`](super::SweepOptions::key_probe).
pub const KEY_PROBE_VALUES: u64 = 50;

/// A callback given a thread's counts.
type ThreadCountsFn = dyn Fn(&str, &ClassCounts) + Send + Sync;

/// A callback given each thread's counts ([`AuditOptions::on_thread`]).
#[derive(Clone)]
struct OnThread(std::sync::Arc<ThreadCountsFn>);

impl std::fmt::Debug for OnThread {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("OnThread(..)")
    }
}

/// Options of [`audit`].
#[derive(Clone, Debug)]
pub struct AuditOptions {
    run: RunOptions,
    allow_clear: bool,
    allow_previous: bool,
    deny_inline: bool,
    allow_free_space: bool,
    per_thread: bool,
    on_thread: Option<OnThread>,
    max_samples: usize,
    key_probe: bool,
}

impl Default for AuditOptions {
    fn default() -> Self {
        Self::new()
    }
}

/// Rows an audit reads per query unless [`AuditOptions::page_size`] says.
const AUDIT_PAGE: usize = 1000;

impl AuditOptions {
    /// Strict: any value in clear, under a decrypt-only key, or unreadable is a
    /// finding; pages of 1,000 rows and at most [`DEFAULT_PAGE_BYTES`]; no rate limit;
    /// no per-thread counts (memory flat whatever the store's size); 20 unreadable
    /// samples.
    pub fn new() -> Self {
        AuditOptions {
            run: RunOptions::default(),
            allow_clear: false,
            allow_previous: false,
            deny_inline: false,
            allow_free_space: false,
            per_thread: false,
            on_thread: None,
            max_samples: 20,
            key_probe: true,
        }
    }

    /// The key probe (on by default; see [`KEY_PROBE_VALUES`]): with keys given, stop
    /// with [`ErrorKind::NoKeyOpens`](crate::ErrorKind::NoKeyOpens) when the first
    /// encrypted values are all refused by every key. Without keys there is no probe.
    pub fn key_probe(mut self, on: bool) -> Self {
        self.key_probe = on;
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

    /// Whether to count per thread into [`AuditReport::threads`](super::AuditReport)
    /// (off by default: memory then grows with the number of threads;
    /// [`on_thread`](Self::on_thread) hands them over instead, in flat memory).
    pub fn per_thread(mut self, on: bool) -> Self {
        self.per_thread = on;
        self
    }

    /// Each thread's counts (every table together) to `f`, in thread order (bytewise),
    /// once every table is read, instead of into
    /// [`AuditReport::threads`](super::AuditReport), which stays empty: memory holds
    /// no thread, whatever the store holds. Meanwhile each table's counts of a thread
    /// wait in a scratch file SQLite deletes when done (in `SQLITE_TMPDIR` or `TMPDIR`,
    /// else `/var/tmp`, then `/tmp`; without the `sqlite` feature, in memory). Counts
    /// per thread whatever [`per_thread`](Self::per_thread) says.
    ///
    /// ```no_run
    /// # async fn run() -> Result<(), langgraph_codec::Error> {
    /// use langgraph_codec::store::{audit, AuditOptions, Store, StoreKeys};
    /// let store = Store::open("checkpoints.db").await?;
    /// let options = AuditOptions::new().on_thread(|thread, counts| {
    ///     println!("{thread}: {} in clear", counts.clear.rows);
    /// });
    /// let report = audit(&store, &StoreKeys::none(), &options).await?;
    /// println!("{:?}", report.verdict);
    /// # Ok(()) }
    /// ```
    pub fn on_thread(mut self, f: impl Fn(&str, &ClassCounts) + Send + Sync + 'static) -> Self {
        self.on_thread = Some(OnThread(std::sync::Arc::new(f)));
        self
    }

    /// How many unreadable values to describe.
    pub fn max_samples(mut self, n: usize) -> Self {
        self.max_samples = n;
        self
    }

    fn page_size_or_default(&self) -> usize {
        self.run.page_size.unwrap_or(AUDIT_PAGE)
    }

    fn page_bytes_or_default(&self) -> usize {
        self.run.page_bytes.unwrap_or(DEFAULT_PAGE_BYTES)
    }
}

run_setters!(AuditOptions {
    /// Rows read per query (at least 1).
    page_size(rows);
    /// Bytes of stored values read per query at most (a larger value is read alone).
    page_bytes(bytes);
    /// At most this many values read per second, on average (0 or `None`: no limit):
    /// spares a busy store. Needs a Tokio runtime with time enabled.
    max_rows_per_sec;
    /// Postgres: how many times in a row a lost connection is re-opened (the page is
    /// read again) before the audit stops with [`ErrorKind::ConnectionLost`](crate::ErrorKind::ConnectionLost).
    max_reconnects;
    /// Called after each page.
    on_progress;
});

pub(super) fn key_strings(key: &[KeyPart]) -> Vec<String> {
    key.iter().map(KeyPart::text).collect()
}

pub(super) fn page_keys(rows: &[Row]) -> Option<(Vec<String>, Vec<String>)> {
    Some((
        key_strings(&rows.first()?.key),
        key_strings(&rows.last()?.key),
    ))
}

pub(super) fn stored_len(row: &Row) -> u64 {
    row.data.as_ref().map_or(0, |d| d.len() as u64)
}

pub(super) async fn total_estimate(store: &Store) -> Result<u64, Error> {
    let mut total = 0u64;
    for t in store.backend().tables() {
        total = total.saturating_add(store.backend().count(t).await?);
    }
    Ok(total)
}

/// The key probe ([`KEY_PROBE_VALUES`]): reads the first page of each table and tries
/// every key on its encrypted values, up to [`KEY_PROBE_VALUES`] of them; an error when
/// some were tried, each was refused by every key, and none opened. No keys: no probe.
pub(super) async fn probe_keys(
    store: &Store,
    keys: &StoreKeys,
    operation: &'static str,
    page_size: usize,
    page_bytes: usize,
    engine: &mut Engine,
) -> Result<(), Error> {
    if keys.labels().is_empty() {
        return Ok(());
    }
    let mut refused = 0u64;
    for t in store.backend().tables() {
        let rows = engine
            .again(store.backend(), || {
                store.backend().page(t, None, page_size, page_bytes)
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

/// A thread's counts in one table into `spill`, when there is one.
fn spill_thread(spill: &mut Spill, thread: Option<(String, ClassCounts)>) -> Result<(), Error> {
    match thread {
        Some((id, counts)) => spill.push(0, &id, &counts),
        None => Ok(()),
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
    let backend = store.backend();
    let mut engine = Engine::new("audit", "values", &options.run);
    let mut total = engine.again(backend, || total_estimate(store)).await?;
    if backend.holds_inline_values() {
        let inline = engine
            .again(backend, || backend.count_checkpoints())
            .await?;
        total = total.saturating_add(inline);
    }
    engine.set_total(total);
    if options.key_probe {
        let (size, bytes) = (
            options.page_size_or_default(),
            options.page_bytes_or_default(),
        );
        probe_keys(store, keys, "audit", size, bytes, &mut engine).await?;
    }
    let mut tables = Vec::new();
    let mut totals = ClassCounts::default();
    let mut threads: BTreeMap<String, ClassCounts> = BTreeMap::new();
    // With `on_thread`: each table's counts of a thread, spilled as the thread ends
    // (a table's pages go in key order, a thread's rows together).
    let mut spill = match &options.on_thread {
        Some(_) => Some(Spill::new("audit")?),
        None => None,
    };
    let mut samples = Vec::new();
    for t in backend.tables() {
        let mut counts = ClassCounts::default();
        let mut thread: Option<(String, ClassCounts)> = None;
        let mut after: Option<Vec<KeyPart>> = None;
        loop {
            let from = after.take();
            let rows = engine
                .again(backend, || {
                    backend.page(
                        t,
                        from.clone(),
                        options.page_size_or_default(),
                        options.page_bytes_or_default(),
                    )
                })
                .await?;
            let Some(last) = rows.last() else { break };
            let next = last.key.clone();
            for row in &rows {
                let Classified { class, .. } =
                    classify(keys, row.tag.as_deref(), row.data.as_deref());
                let bytes = stored_len(row);
                counts.add(&class, |n| keys.label(n), bytes);
                if let Some(spill) = &mut spill {
                    let id = row.thread_id();
                    if thread.as_ref().is_some_and(|(t, _)| *t != id) {
                        spill_thread(spill, thread.take())?;
                    }
                    thread
                        .get_or_insert_with(|| (id, ClassCounts::default()))
                        .1
                        .add(&class, |n| keys.label(n), bytes);
                } else if options.per_thread {
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
            engine
                .batch_done(t.label, rows.len() as u64, 0, page_keys(&rows))
                .await;
            after = Some(next);
        }
        if let Some(spill) = &mut spill {
            spill_thread(spill, thread.take())?;
        }
        totals.merge(&counts);
        tables.push(TableCounts {
            column: t.label.to_owned(),
            counts,
        });
    }
    if let (Some(spill), Some(OnThread(f))) = (spill.take(), &options.on_thread) {
        // The rows of a thread come together (by id, then as spilled): merged, then
        // handed over.
        let mut current: Option<(String, ClassCounts)> = None;
        spill.each(|id, counts: ClassCounts| {
            match &mut current {
                Some((t, c)) if t == id => c.merge(&counts),
                _ => {
                    if let Some((t, c)) = current.replace((id.to_owned(), counts)) {
                        f(&t, &c);
                    }
                }
            }
            Ok(())
        })?;
        if let Some((t, c)) = current {
            f(&t, &c);
        }
    }
    let mut inline: Option<InlineCounts> = None;
    if backend.holds_inline_values() {
        let mut c = InlineCounts {
            counted_as_findings: options.deny_inline,
            note: "Python's Postgres saver writes every None/str/int/float/bool channel value inline in the checkpoint JSONB, in clear, on every put, whatever the serializer: no key protects them while Python writes. Not a finding unless deny_inline.".to_owned(),
            ..InlineCounts::default()
        };
        let mut after = None;
        loop {
            let from = after.take();
            let rows = engine
                .again(backend, || {
                    backend.inline_page(from.clone(), options.page_size_or_default())
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
            engine
                .batch_done("checkpoints.checkpoint", rows.len() as u64, 0, None)
                .await;
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
    let mut free_space = engine.again(backend, || backend.free_space()).await?;
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
        never_encrypted: backend.never_encrypted(),
        free_space,
        verdict: if findings.is_empty() {
            Verdict::Clean
        } else {
            Verdict::Findings
        },
        findings,
        reconnects: engine.reconnects(),
        elapsed_s: started.elapsed().as_secs_f64(),
    })
}
