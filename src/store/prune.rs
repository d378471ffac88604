//! [`prune`]: retention for a store in today's Python layout (SQLite or Postgres).
//!
//! Rules (any together; a checkpoint goes if a rule drops it and nothing keeps it):
//! - **keep latest N** per thread and namespace;
//! - **before DATE**: checkpoints older than DATE go, except the latest of each
//!   namespace (so every kept thread stays resumable);
//! - **idle since DATE**: threads whose latest checkpoint is older than DATE go whole.
//!
//! A checkpoint's time is the one in its id (Python's ids are uuid6, made from the same
//! clock reading as `ts`, to the 100 ns); an id that is not a uuid6 has no known time
//! and is never dropped by a date rule. Threads are every thread, or
//! [`PruneOptions::threads`], narrowed by [`PruneOptions::metadata`] (the latest
//! checkpoint's metadata must hold each key with that JSON value).
//!
//! **DeltaChannel threads stay reconstructible:** for every kept checkpoint, the
//! ancestors it needs to rebuild its delta channels (up to the nearest one storing
//! each channel) are kept, with the savers' own walk (`saver::delta`'s
//! `needed_ancestors`). A checkpoint whose row cannot be read (no key) keeps its whole
//! chain. On Postgres a checkpoint before v4 keeps the parent whose writes Python's
//! reader takes its pending sends from (SQLite keeps them in the checkpoint).
//! Pending writes of dropped checkpoints go with them; on Postgres, the blobs they
//! reference that no remaining checkpoint of the namespace references go too; a kept
//! checkpoint whose parent goes is left with no parent (as Python's prune does).
//!
//! The flags are a set of retention rules run by the pages of threads and planner `retain`
//! uses too (`pages.rs`, `plan.rs`): threads are read a page at a time (at most 200
//! threads, about 1,000 checkpoints; a thread of 10,000 or more a window of 1,000 at a
//! time, `long.rs`) and each page's plan is deleted in one transaction
//! by the savers' own retention code (`saver::sqlite::retention`,
//! `saver::postgres::retention`): killed at any point, a prune leaves each page either
//! as it was or pruned; run it again to finish. A dry run reports what would go and how
//! many bytes. SQLite can `VACUUM` afterwards ([`PruneOptions::vacuum`]) to give the
//! space back to the file system.

use std::collections::BTreeSet;
use std::time::Instant;

use serde::Serialize;
use serde_json::Value as Json;

use super::backend::Writes;
use super::error::StoreFault;
use super::keys::StoreKeys;
use super::options::{run_setters, RunOptions};
use super::pages::{refuse_emptying, run_pass, Pass};
use super::plan::Rules;
use super::raw::{serializer, Result};
use super::target::open_maintained;
use super::Location;

/// Options of [`prune`]. At least one rule must be set.
#[derive(Clone, Debug, Default)]
pub struct PruneOptions {
    run: RunOptions,
    keep_latest: Option<usize>,
    before: Option<i64>,
    idle_since: Option<i64>,
    metadata: Vec<(String, Json)>,
    allow_all: bool,
}

/// Seconds since the Unix epoch of `YYYY-MM-DD` or `YYYY-MM-DDTHH:MM[:SS[.f]]` with
/// an optional `Z` / `+00:00` (UTC; other offsets are refused), within what Python's
/// `datetime` holds (years 1 to 9999, real days of the month, seconds 0 to 59).
///
/// # Errors
/// [`ErrorKind::InvalidDate`](crate::ErrorKind::InvalidDate) naming what was wrong.
pub fn parse_date(text: &str) -> Result<i64> {
    let bad = |reason: &str| StoreFault::InvalidDate {
        given: text.to_owned(),
        reason: reason.to_owned(),
    };
    let t = text.trim();
    let t = t
        .strip_suffix('Z')
        .or_else(|| t.strip_suffix("+00:00"))
        .unwrap_or(t);
    let (date, time) = match t.split_once(['T', ' ']) {
        Some((d, tm)) => (d, Some(tm)),
        None => (t, None),
    };
    let num = |s: &str, what: &str| s.parse::<i64>().map_err(|_| bad(what));
    let mut d = date.split('-');
    let (Some(y), Some(m), Some(day), None) = (d.next(), d.next(), d.next(), d.next()) else {
        // An age where a date goes (`--before 30d`): said how to give the date it is.
        if let Ok(age) = super::policy::parse_duration(t) {
            let secs = age.as_secs();
            let ago = if secs > 0 && secs % 86_400 == 0 {
                format!("{} days ago", secs / 86_400)
            } else {
                format!("{secs} seconds ago")
            };
            return Err(bad(&format!(
                "a date is wanted, not an age: give the date the age comes to (in a shell, \
                 $(date -u -d '{ago}' +%FT%T)), or keep checkpoints by age with \
                 `lgcodec store retain` (max_age = \"{t}\")"
            ))
            .into());
        }
        return Err(bad("expected YYYY-MM-DD[THH:MM[:SS]] in UTC").into());
    };
    let (y, m, day) = (
        num(y, "bad year")?,
        num(m, "bad month")?,
        num(day, "bad day")?,
    );
    // Python's datetime range (years 1 to 9999, the days each month has), which also
    // keeps the seconds below far from i64's limits.
    if !(1..=9999).contains(&y) {
        return Err(bad("year out of range: 1 to 9999").into());
    }
    let leap = y % 4 == 0 && (y % 100 != 0 || y % 400 == 0);
    let month_days = match m {
        2 if leap => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        1..=12 => 31,
        _ => return Err(bad("month out of range: 1 to 12").into()),
    };
    if !(1..=month_days).contains(&day) {
        return Err(bad(&format!("day out of range: that month has {month_days}")).into());
    }
    let mut secs = 0i64;
    if let Some(time) = time {
        if time.contains(['+', '-']) {
            return Err(bad("only UTC (Z or +00:00) is accepted").into());
        }
        let mut parts = time.split(':');
        let h = num(parts.next().unwrap_or(""), "bad hour")?;
        let mi = num(parts.next().unwrap_or("0"), "bad minute")?;
        let s = parts
            .next()
            .map(|s| s.split('.').next().unwrap_or("0"))
            .unwrap_or("0");
        let s = num(s, "bad second")?;
        if !(0..24).contains(&h) || !(0..60).contains(&mi) || !(0..60).contains(&s) {
            return Err(bad("time out of range").into());
        }
        secs = h * 3600 + mi * 60 + s;
    }
    // Days from civil (Howard Hinnant's algorithm).
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + day - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    let days = era * 146_097 + doe - 719_468;
    Ok(days * 86_400 + secs)
}

impl PruneOptions {
    /// No rule yet, writing, no vacuum.
    pub fn new() -> Self {
        Self::default()
    }

    /// Keep the latest `n` checkpoints per thread and namespace (at least 1).
    pub fn keep_latest(mut self, n: usize) -> Self {
        self.keep_latest = Some(n.max(1));
        self
    }

    /// Drop checkpoints older than `unix_seconds` (see [`parse_date`]), keeping the
    /// latest of each namespace.
    pub fn before(mut self, unix_seconds: i64) -> Self {
        self.before = Some(unix_seconds);
        self
    }

    /// Delete threads whose latest checkpoint is older than `unix_seconds`.
    pub fn idle_since(mut self, unix_seconds: i64) -> Self {
        self.idle_since = Some(unix_seconds);
        self
    }

    /// Let the rules delete every thread of the store (default: refused with
    /// [`ErrorKind::WouldDeleteAll`](crate::ErrorKind::WouldDeleteAll), nothing
    /// deleted, as a `--idle-since` date in the future would).
    pub fn allow_all(mut self, on: bool) -> Self {
        self.allow_all = on;
        self
    }

    /// Only threads whose latest checkpoint's metadata has `key` equal to `value`.
    pub fn metadata(mut self, key: impl Into<String>, value: Json) -> Self {
        self.metadata.push((key.into(), value));
        self
    }
}

run_setters!(PruneOptions {
    /// Only these threads.
    threads;
    /// Not these threads, whatever else selects them: left as they are, and counted
    /// nowhere in the report but [`PruneReport::excluded_threads`]. A prune whose rules
    /// would delete every other thread is not refused as deleting every thread.
    exclude_threads;
    /// Report what would go; delete nothing.
    dry_run;
    /// SQLite: `VACUUM` afterwards (the file shrinks; needs free space for a copy).
    vacuum;
    /// At most this many checkpoints read per second, on average (0 or `None`: no
    /// limit). Needs a Tokio runtime with time enabled.
    max_rows_per_sec;
    /// Postgres: how many times in a row a lost connection is re-opened (the page in
    /// flight is done again) before the prune stops with
    /// [`ErrorKind::ConnectionLost`](crate::ErrorKind::ConnectionLost).
    max_reconnects;
    /// Threads per transaction at most (at least 1; default 200). A page also ends at
    /// about 1,000 checkpoints (a larger thread goes alone, a thread of 10,000 or more
    /// a window of 1,000 at a time): smaller pages keep a live
    /// writer's wait for the prune's deletes shorter.
    batch_size(threads);
    /// Set it (from a signal handler, say) to end the prune after the page in flight
    /// ([`PruneReport::stopped`]); the same prune run again goes on.
    stop_flag;
    /// Called after each page of threads (on Postgres, after each two, done at once).
    on_progress;
});

/// What [`prune`] did (or would do).
#[derive(Clone, Debug, Default, Serialize, PartialEq)]
#[non_exhaustive]
pub struct PruneReport {
    /// `prune`.
    pub operation: &'static str,
    /// The store.
    pub store: String,
    /// A dry run.
    pub dry_run: bool,
    /// A dry run whose store would refuse the run itself: a Postgres role without the
    /// privilege it needs on the saver's tables (`DELETE`), said with the `GRANT` that
    /// gives it. `None` otherwise.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub would_be_refused: Option<String>,
    /// Threads looked at (after the selection).
    pub threads: u64,
    /// The threads left out ([`PruneOptions::exclude_threads`]), in order.
    pub excluded_threads: Vec<String>,
    /// Threads of [`PruneOptions::threads`] the store holds no checkpoint of (deleted
    /// whole by an earlier prune, or a mistyped id), in order: nothing to prune there.
    /// (A thread left out that the store does not hold is refused instead:
    /// [`ErrorKind::ThreadNotFound`](crate::ErrorKind::ThreadNotFound).)
    pub threads_not_found: Vec<String>,
    /// Threads deleted whole (idle).
    pub threads_deleted: u64,
    /// Checkpoints dropped (would be).
    pub checkpoints_deleted: u64,
    /// Checkpoints the rules would drop, kept as ancestors of a kept checkpoint: to
    /// rebuild its delta channels, or because some checkpoint on the chain could not be
    /// read (its row or metadata did not decode, e.g. an encrypted SQLite checkpoint
    /// without its key), so what it needs is unknown and its whole chain stays.
    pub kept_for_delta: u64,
    /// Checkpoints of the threads read (not deleted whole) whose row could not be
    /// read: an encrypted row without its key, a value that does not decode. What they
    /// need is unknown, so their chains were kept whole: the prune did not do all it was
    /// asked (the CLI exits 1 and says so). A thread the rules cannot touch, known from
    /// its ids, is not read and not counted here.
    pub unreadable: u64,
    /// Checkpoints kept.
    pub checkpoints_kept: u64,
    /// Pending-write rows dropped.
    pub writes_deleted: u64,
    /// Postgres blob rows dropped.
    pub blobs_deleted: u64,
    /// Bytes of the dropped rows' values (Postgres: with their JSONB's stored size).
    pub bytes_freed: u64,
    /// SQLite with vacuum: file size before and after.
    pub file_bytes: Option<(u64, u64)>,
    /// Pages of threads read or deleted, each in one transaction (a page passed over
    /// whole, its threads untouched by the rules, is not one).
    pub batches: u64,
    /// Postgres: connections re-opened after the server closed them (each page in
    /// flight then was done again; at most [`PruneOptions::max_reconnects`] losses in a
    /// row, 16 by default (about a minute of waiting), then
    /// [`ErrorKind::ConnectionLost`](crate::ErrorKind::ConnectionLost)).
    pub reconnects: u64,
    /// Postgres: connections the server refused for want of a slot (SQLSTATE 53300:
    /// the role's `CONNECTION LIMIT`, the server's `max_connections`) where the prune
    /// asked for one more to work beside the first (a second page at a time, a long
    /// thread's next window read ahead): that work was done on the connections it had,
    /// and took longer. 0 when every connection was given.
    pub connections_refused: u64,
    /// Asked to stop ([`PruneOptions::stop_flag`]), the prune ended after the page in
    /// flight; the same prune run again goes on (no vacuum was done).
    pub stopped: bool,
    /// Seconds.
    pub elapsed_s: f64,
}

impl PruneOptions {
    /// The rules these options set (times as given; nothing pinned or overridden).
    fn rules(&self) -> Rules {
        Rules {
            keep_latest: self.keep_latest,
            older_than: self.before,
            idle_before: self.idle_since,
            metadata: self.metadata.clone(),
            ..Rules::default()
        }
    }
}

/// Prunes `store` (`sqlite:PATH`, a file path, or a `postgres://` URL in today's
/// Python layout) by `options`' rules; `keys` read encrypted SQLite checkpoints (to
/// know which channels they store; without them such a checkpoint keeps its whole
/// chain). Rules and guarantees: `docs/store-maintenance.md`.
///
/// # Errors
/// [`ErrorKind::InvalidDate`](crate::ErrorKind::InvalidDate) without any rule;
/// [`ErrorKind::WouldDeleteAll`](crate::ErrorKind::WouldDeleteAll) when the rules would
/// delete every thread of the store and [`PruneOptions::allow_all`] is not set (nothing
/// is deleted); [`ErrorKind::NotAStore`](crate::ErrorKind::NotAStore) for an
/// old layout; the database's errors.
pub async fn prune(store: &str, keys: &StoreKeys, options: &PruneOptions) -> Result<PruneReport> {
    let started = Instant::now();
    if options.keep_latest.is_none() && options.before.is_none() && options.idle_since.is_none() {
        return Err(StoreFault::InvalidDate {
            given: String::new(),
            reason: "prune needs a rule: keep_latest, before or idle_since".to_owned(),
        }
        .into());
    }
    let location = Location::parse(store)?;
    let (mut target, shown) = open_maintained(store, options.run.dry_run).await?;
    let would_be_refused = match options.run.dry_run {
        true => target.refuses(Writes::Delete).await?,
        false => None,
    };
    // A thread left out under a mistyped id would spare nothing: refused first. A
    // thread selected that is not there is only said: a prune that deleted it whole,
    // run again (resumed, or the next night's), finds it gone, as it should.
    let left_out: BTreeSet<&str> = options
        .run
        .except_threads
        .iter()
        .map(String::as_str)
        .collect();
    let selected: BTreeSet<&str> = options.run.threads.iter().map(String::as_str).collect();
    let mut threads_not_found = Vec::new();
    // Looked up on the prune's own connection: a role allowed one connection prunes.
    let mut absent = Vec::new();
    for thread in &left_out {
        if !target.holds_thread(thread).await? {
            absent.push((*thread).to_owned());
        }
    }
    if !absent.is_empty() {
        return Err(StoreFault::ThreadsNotFound {
            operation: "prune",
            store: shown,
            threads: absent,
        }
        .into());
    }
    for thread in &selected {
        if !target.holds_thread(thread).await? {
            threads_not_found.push((*thread).to_owned());
        }
    }
    let serde = serializer(keys);
    let file_before = match &location {
        Location::Sqlite(p) => std::fs::metadata(p).ok().map(|m| m.len()),
        Location::Postgres(_) => None,
    };
    let rules = options.rules();
    let pass = Pass::new("prune", &rules, &options.run);
    let refused_reconnects = if options.allow_all {
        0
    } else {
        refuse_emptying(store, &mut target, &serde, &pass, &shown).await?
    };
    let done = run_pass(store, &mut target, &serde, &pass).await?;
    let t = done.tally;
    let mut report = PruneReport {
        operation: "prune",
        store: shown,
        dry_run: options.run.dry_run,
        would_be_refused,
        threads: t.threads,
        excluded_threads: options.run.except_threads.iter().cloned().collect(),
        threads_not_found,
        threads_deleted: t.threads_deleted,
        checkpoints_deleted: t.checkpoints_deleted,
        kept_for_delta: t.kept.delta_ancestors,
        unreadable: t.unreadable,
        checkpoints_kept: t.checkpoints_kept,
        writes_deleted: t.writes_deleted,
        blobs_deleted: t.blobs_deleted,
        bytes_freed: t.bytes_freed,
        file_bytes: None,
        batches: done.batches,
        reconnects: done.reconnects.saturating_add(refused_reconnects),
        connections_refused: t.connections_refused,
        stopped: done.stopped,
        elapsed_s: 0.0,
    };
    if options.run.vacuum && !options.run.dry_run && !done.stopped && target.compact().await? {
        if let Location::Sqlite(p) = &location {
            let after = std::fs::metadata(p).map(|m| m.len()).unwrap_or(0);
            report.file_bytes = file_before.map(|b| (b, after));
        }
    }
    report.elapsed_s = started.elapsed().as_secs_f64();
    Ok(report)
}
