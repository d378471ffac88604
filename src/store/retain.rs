//! [`retain`]: one retention sweep of a store by a [`RetentionPolicy`], safe to run
//! from several replicas at once.
//!
//! A sweep runs the pages of threads and planner `prune` uses (`pages.rs`, `plan.rs`) with
//! the policy's rules, durations counted back from the sweep's start. Before anything is
//! read for deletion:
//! - **one sweeper at a time**: on Postgres the sweep holds
//!   `pg_try_advisory_lock` on a key made from the database and schema (one key per
//!   store); on SQLite it holds `BEGIN IMMEDIATE` on a lock database beside the store
//!   (`STORE.retain-lock`, never on the store itself, so Python's writers never wait for
//!   it). A sweep that finds the lock taken deletes nothing and reports
//!   `skipped_locked`; the lock goes with the process (a killed sweeper holds nothing).
//! - **never everything**: when the policy's time rules would expire every thread of
//!   the store, the whole plan is worked out (pins, interrupts, labels and overrides
//!   counted) and, if no thread would stay, the sweep is refused with
//!   [`ErrorKind::WouldDeleteAll`](crate::ErrorKind::WouldDeleteAll) unless
//!   [`RetainOptions::allow_all`].
//!
//! Each page is one transaction; a stop flag ([`RetainOptions::stop_flag`]) set meanwhile
//! lets the page in flight finish and starts no other. [`RetainOptions::max_threads`]
//! caps the threads changed per sweep; the report's `next_after` is where the next sweep
//! goes on ([`RetainOptions::start_after`]).

use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use serde::Serialize;

use super::backend::Writes;
use super::keys::StoreKeys;
use super::options::{run_setters, RunOptions};
use super::pages::{refuse_emptying, run_pass, Pass, PAGE_THREADS};
use super::plan::PlanFn;
use super::plan::{KeptByRule, PlannedThread, Rules};
use super::policy::RetentionPolicy;
use super::raw::{serializer, Result};
use super::report::VacuumReport;
use super::target::open_maintained;

/// Options of [`retain`].
#[derive(Clone)]
pub struct RetainOptions {
    run: RunOptions,
    policy: RetentionPolicy,
    allow_all: bool,
    pause: Option<Duration>,
    max_threads: Option<u64>,
    after: Option<String>,
    on_plan: Option<Arc<PlanFn>>,
}

impl std::fmt::Debug for RetainOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RetainOptions")
            .field("run", &self.run)
            .field("policy", &self.policy)
            .field("allow_all", &self.allow_all)
            .field("pause", &self.pause)
            .field("max_threads", &self.max_threads)
            .field("after", &self.after)
            .finish_non_exhaustive()
    }
}

impl RetainOptions {
    /// A sweep by `policy`, with its `[sweep]` settings (batch size, pause, cap).
    pub fn new(policy: RetentionPolicy) -> Self {
        RetainOptions {
            run: RunOptions {
                batch_size: Some(policy.batch_size().unwrap_or(PAGE_THREADS)),
                ..RunOptions::default()
            },
            pause: policy.pause(),
            max_threads: policy.max_threads(),
            policy,
            allow_all: false,
            after: None,
            on_plan: None,
        }
    }

    /// Let the policy delete every thread of the store.
    pub fn allow_all(mut self, on: bool) -> Self {
        self.allow_all = on;
        self
    }

    /// A pause between transactions.
    pub fn pause(mut self, pause: Option<Duration>) -> Self {
        self.pause = pause;
        self
    }

    /// Stop the sweep once this many threads lost something (checked after each batch).
    pub fn max_threads(mut self, cap: Option<u64>) -> Self {
        self.max_threads = cap.filter(|n| *n > 0);
        self
    }

    /// Begin after this thread id (a capped sweep's `next_after`).
    pub fn start_after(mut self, thread: Option<String>) -> Self {
        self.after = thread;
        self
    }

    /// Called with each thread that loses something (what goes), dry run or not.
    pub fn on_plan(mut self, f: impl Fn(&PlannedThread) + Send + Sync + 'static) -> Self {
        self.on_plan = Some(Arc::new(f));
        self
    }
}

run_setters!(RetainOptions {
    /// Work out what would go; delete nothing (no lock is taken).
    dry_run;
    /// SQLite: after the sweep, give the free pages back to the file system in small
    /// steps (`PRAGMA incremental_vacuum`, one short write transaction each, the
    /// batch pause between them), never a full `VACUUM`. Needs the file in
    /// `auto_vacuum = INCREMENTAL` mode; in any other mode the report says so and
    /// what converts it. Postgres gives space back to its own free space map
    /// (autovacuum): nothing to do.
    vacuum;
    /// Threads per transaction (at least 1).
    batch_size(threads);
    /// At most this many checkpoints read per second, on average.
    max_rows_per_sec;
    /// Postgres: how many times in a row a lost connection is re-opened (the batch in
    /// flight is done again, the sweep lock taken again) before the sweep stops with
    /// [`ErrorKind::ConnectionLost`](crate::ErrorKind::ConnectionLost).
    max_reconnects;
    /// Set it (from a signal handler, say) to end the sweep after the batch in flight.
    stop_flag;
    /// Called after each batch.
    on_progress;
});

/// What one sweep did (or would do).
#[derive(Clone, Debug, Default, Serialize, PartialEq)]
#[non_exhaustive]
pub struct RetainReport {
    /// `retain`.
    pub operation: &'static str,
    /// The store.
    pub store: String,
    /// When the sweep began (UTC, RFC 3339); durations count back from it.
    pub started_at: String,
    /// A dry run.
    pub dry_run: bool,
    /// A dry run whose store would refuse the run itself: a Postgres role without the
    /// privilege it needs on the saver's tables (`DELETE`), said with the `GRANT` that
    /// gives it. `None` otherwise.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub would_be_refused: Option<String>,
    /// Another sweeper held the store's lock: this one did nothing.
    pub skipped_locked: bool,
    /// Threads looked at.
    pub threads: u64,
    /// Threads deleted whole.
    pub threads_deleted: u64,
    /// Checkpoints deleted (would be), whole threads' included.
    pub checkpoints_deleted: u64,
    /// Checkpoints kept in the threads looked at.
    pub checkpoints_kept: u64,
    /// Pending-write rows deleted.
    pub writes_deleted: u64,
    /// Postgres blob rows deleted.
    pub blobs_deleted: u64,
    /// Bytes of the deleted rows' values (Postgres: with their JSONB's stored size).
    pub bytes_freed: u64,
    /// What a rule spared that another would have deleted.
    pub kept_by_rule: KeptByRule,
    /// Checkpoints that could not be read (no key): their chains were kept.
    pub unreadable: u64,
    /// Threads left as they were because of a problem with them (a metadata override
    /// that is not a set of rules), one sentence each.
    pub errors: Vec<String>,
    /// The sweep stopped at its cap of threads changed; the rest waits for the next.
    pub capped: bool,
    /// The sweep was asked to stop and ended after the batch in flight.
    pub stopped: bool,
    /// Where the next sweep goes on when this one was capped or stopped.
    pub next_after: Option<String>,
    /// With [`RetainOptions::vacuum`] on SQLite: what the incremental vacuum did.
    pub vacuum: Option<VacuumReport>,
    /// Pages of threads read or deleted, each in one transaction (a page passed over
    /// whole, its threads untouched by the rules, is not one).
    pub batches: u64,
    /// Postgres: connections re-opened after the server closed them (each page in
    /// flight then was done again, the sweep lock taken again; at most
    /// [`RetainOptions::max_reconnects`] losses in a row, 16 by default, then
    /// [`ErrorKind::ConnectionLost`](crate::ErrorKind::ConnectionLost)).
    pub reconnects: u64,
    /// Postgres: connections the server refused for want of a slot (SQLSTATE 53300:
    /// the role's `CONNECTION LIMIT`, the server's `max_connections`) where the sweep
    /// asked for one more to work beside the first (a second page at a time, a long
    /// thread's next window read ahead): that work was done on the connections it had,
    /// and took longer. 0 when every connection was given.
    pub connections_refused: u64,
    /// Seconds the sweep took: the same number as [`elapsed_s`](Self::elapsed_s), under
    /// the name the sweep's JSON log lines have carried from the first.
    pub duration_s: f64,
    /// Seconds the sweep took, under the name every other store report gives it.
    pub elapsed_s: f64,
    /// When this sweep took the store's sweep lock and when it let it go, in
    /// milliseconds since the Unix epoch: every delete of the sweep falls between the
    /// two, so two sweepers' spans never overlap. `None` for a dry run or a skipped
    /// sweep (no lock).
    pub lock_held_ms: Option<[u64; 2]>,
}

impl RetainReport {
    fn set_elapsed(&mut self, started: Instant) {
        self.elapsed_s = started.elapsed().as_secs_f64();
        self.duration_s = self.elapsed_s;
    }
}

/// `unix` seconds as `YYYY-MM-DDTHH:MM:SSZ`.
fn rfc3339(unix: i64) -> String {
    let (days, secs) = (unix.div_euclid(86_400), unix.rem_euclid(86_400));
    let (y, m, d) = crate::saver::civil_from_days(days);
    format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}Z",
        secs / 3_600,
        secs % 3_600 / 60,
        secs % 60
    )
}

/// Now, in milliseconds since the Unix epoch (0 for a clock set before it).
fn unix_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
        .unwrap_or(0)
}

/// The policy's rules, durations counted back from `now`.
fn rules_of(policy: &RetentionPolicy, now: i64) -> Rules {
    let base = Rules {
        labels: policy.labels.clone(),
        pinned_metadata: policy.pinned_metadata.clone(),
        pinned_threads: policy.pinned_threads.clone(),
        keep_interrupted: policy.keep_interrupted,
        override_key: policy.override_key.clone(),
        now,
        ..Rules::default()
    };
    base.with(&policy.rules)
}

/// One retention sweep of `store` (`sqlite:PATH`, a file path, or a `postgres://` URL
/// in today's Python layout) by `options`' policy; `keys` read encrypted SQLite
/// checkpoints (to know which channels they store). Rules and guarantees:
/// `docs/retention.md`.
///
/// # Errors
/// [`ErrorKind::InvalidPolicy`](crate::ErrorKind::InvalidPolicy) for a policy without a
/// rule or with a zero duration; [`ErrorKind::WouldDeleteAll`](crate::ErrorKind::WouldDeleteAll)
/// (nothing deleted); [`ErrorKind::NotAStore`](crate::ErrorKind::NotAStore); the
/// database's errors.
pub async fn retain(
    store: &str,
    keys: &StoreKeys,
    options: &RetainOptions,
) -> Result<RetainReport> {
    let started = Instant::now();
    options.policy.validate()?;
    let now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| i64::try_from(d.as_secs()).unwrap_or(i64::MAX))
        .unwrap_or(0);
    let (mut target, shown) = open_maintained(store, options.run.dry_run).await?;
    let serde = serializer(keys);
    let rules = rules_of(&options.policy, now);
    let mut report = RetainReport {
        operation: "retain",
        store: shown.clone(),
        started_at: rfc3339(now),
        dry_run: options.run.dry_run,
        would_be_refused: match options.run.dry_run {
            true => target.refuses(Writes::Delete).await?,
            false => None,
        },
        ..RetainReport::default()
    };
    // A dry run takes no lock.
    let held = !options.run.dry_run;
    if held {
        if !target.try_lock().await? {
            report.skipped_locked = true;
            report.set_elapsed(started);
            return Ok(report);
        }
        report.lock_held_ms = Some([unix_ms(), 0]);
    }
    let mut pass = Pass::new("retain", &rules, &options.run);
    let mut reconnects = 0u64;
    let outcome = async {
        if !options.allow_all {
            reconnects += refuse_emptying(store, &mut target, &serde, &pass, &shown).await?;
        }
        pass.pause = options.pause;
        pass.max_threads = options.max_threads;
        pass.after.clone_from(&options.after);
        pass.on_plan = options.on_plan.as_deref();
        pass.relock = held;
        run_pass(store, &mut target, &serde, &pass).await
    }
    .await;
    let outcome = match outcome {
        Ok(done) if options.run.vacuum && !options.run.dry_run => target
            .compact_in_steps(options.pause, options.run.stop.as_deref())
            .await
            .map(|v| (done, v)),
        outcome => outcome.map(|done| (done, None)),
    };
    // The lock goes whatever happened (and with the connection, if that failed).
    if let Some(span) = report.lock_held_ms.as_mut() {
        span[1] = unix_ms();
    }
    let released = if held { target.unlock().await } else { Ok(()) };
    let (done, vacuum) = outcome?;
    report.vacuum = vacuum;
    released?;
    report.reconnects = reconnects.saturating_add(done.reconnects);
    report.batches = done.batches;
    let t = done.tally;
    report.threads = t.threads;
    report.threads_deleted = t.threads_deleted;
    report.checkpoints_deleted = t.checkpoints_deleted;
    report.checkpoints_kept = t.checkpoints_kept;
    report.writes_deleted = t.writes_deleted;
    report.blobs_deleted = t.blobs_deleted;
    report.bytes_freed = t.bytes_freed;
    report.connections_refused = t.connections_refused;
    report.kept_by_rule = t.kept;
    report.unreadable = t.unreadable;
    report.errors = t.errors;
    if done.lock_lost {
        report.errors.push(
            "another sweeper took the store's lock while the lost connection was re-opened: stopped after the page in flight"
                .to_owned(),
        );
    }
    report.capped = done.capped;
    report.stopped = done.stopped;
    report.next_after = if done.capped || done.stopped {
        done.last
    } else {
        None
    };
    report.set_elapsed(started);
    Ok(report)
}

#[cfg(test)]
mod tests {
    use super::rfc3339;

    #[test]
    fn times_print_as_utc() {
        assert_eq!(rfc3339(0), "1970-01-01T00:00:00Z");
        // date -u -d @1795618958
        assert_eq!(rfc3339(1_795_618_958), "2026-11-25T15:02:38Z");
        assert_eq!(rfc3339(951_782_400), "2000-02-29T00:00:00Z");
    }
}
