//! What every store operation is run with, in one shape: each operation's `*Options`
//! holds a [`RunOptions`] beside what is its own (a prune's rules, an audit's
//! allowances), and [`run_setters!`] writes the builders that set it, the same for every
//! operation that takes them: same names, same argument, same floor, each with the
//! operation's own words for what it means there.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use super::retry::{pause, Retry, DEFAULT_MAX_RECONNECTS};

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
    /// `audit`, `encrypt`, `rekey`, `export`, `import`, `copy`, `prune` or `retain`.
    pub operation: &'static str,
    /// `table.column` (or the table, or `threads`) being read.
    pub column: &'static str,
    /// What [`rows_done`](Self::rows_done) and
    /// [`total_estimate`](Self::total_estimate) count: `values` (audit, encrypt,
    /// rekey), `rows` (export, import), `checkpoints` (copy) or `threads` (prune,
    /// retain).
    pub unit: &'static str,
    /// How many done so far (every table).
    pub rows_done: u64,
    /// How many the store held when the operation started (an estimate: writers add
    /// rows; an export or import counts what it has done).
    pub total_estimate: u64,
    /// What the operation changed so far: values rewritten (a sweep; in a dry run,
    /// that would be), checkpoints copied, checkpoints deleted (prune, retain), rows
    /// inserted (import); 0 for the audit and the export.
    pub rewritten: u64,
    /// When this report is made.
    pub stage: Stage,
    /// The keys of the page's rows, first and last (for a caller that wants to act
    /// between a sweep's read and its write, e.g. a test of the compare-and-swap).
    pub page: Option<(Vec<String>, Vec<String>)>,
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

    /// Counts `rows` more and waits until they are due, or until `stop` is set.
    pub(crate) async fn account(&mut self, rows: u64, stop: Option<&AtomicBool>) {
        self.done = self.done.saturating_add(rows);
        let Some(rate) = self.rate else { return };
        let due =
            Duration::try_from_secs_f64(self.done as f64 / rate as f64).unwrap_or(Duration::MAX);
        let elapsed = self.started.elapsed();
        if due > elapsed {
            pause(due.saturating_sub(elapsed), stop).await;
        }
    }
}

/// The settings store operations share: whether to write, what to look at, how much
/// to read and write at a time, how fast, how many lost connections to ride out,
/// whom to tell, and when to stop. `None` is the operation's own default.
#[derive(Clone, Default)]
pub(crate) struct RunOptions {
    /// Count what would change; write nothing.
    pub(crate) dry_run: bool,
    /// Give the freed space back afterwards (what that means is the operation's).
    pub(crate) vacuum: bool,
    /// Only these threads (none: every thread).
    pub(crate) threads: Vec<String>,
    /// Not these threads, whatever [`threads`](Self::threads) selects.
    pub(crate) except_threads: std::collections::BTreeSet<String>,
    /// Rows read per query.
    pub(crate) page_size: Option<usize>,
    /// Bytes of stored values read per query at most.
    pub(crate) page_bytes: Option<usize>,
    /// Rows (checkpoints, threads) written per transaction.
    pub(crate) batch_size: Option<usize>,
    /// Bytes a batch holds at most.
    pub(crate) batch_bytes: Option<usize>,
    /// At most this many rows read per second, on average.
    pub(crate) max_rows_per_sec: Option<u64>,
    /// Lost connections in a row re-opened before the operation stops.
    pub(crate) max_reconnects: Option<u32>,
    /// Called as the operation goes.
    pub(crate) progress: Option<ProgressFn>,
    /// Set (from a signal handler, say) to end the operation at the next batch
    /// boundary: the batch in flight is committed, none after it is begun.
    pub(crate) stop: Option<Arc<AtomicBool>>,
}

impl RunOptions {
    /// Every thread named, to select ([`threads`](Self::threads)) or to leave out
    /// ([`except_threads`](Self::except_threads)), once each.
    #[cfg_attr(not(all(feature = "sqlite", feature = "postgres")), allow(dead_code))]
    pub(crate) fn named_threads(&self) -> std::collections::BTreeSet<&str> {
        self.threads
            .iter()
            .chain(&self.except_threads)
            .map(String::as_str)
            .collect()
    }

    /// The pace [`max_rows_per_sec`](Self::max_rows_per_sec) sets.
    pub(crate) fn throttle(&self) -> Throttle {
        Throttle::new(self.max_rows_per_sec)
    }

    /// The reconnect budget [`max_reconnects`](Self::max_reconnects) sets (default
    /// [`DEFAULT_MAX_RECONNECTS`]).
    pub(crate) fn retry(&self) -> Retry {
        Retry::new(self.max_reconnects(), self.stop.clone())
    }

    pub(crate) fn max_reconnects(&self) -> u32 {
        self.max_reconnects.unwrap_or(DEFAULT_MAX_RECONNECTS)
    }

    /// Tells the progress callback, if there is one.
    pub(crate) fn report(&self, progress: &Progress) {
        if let Some(f) = &self.progress {
            f(progress);
        }
    }

    /// The threads as the pagers take them: `[None]` for every thread.
    #[cfg(all(feature = "sqlite", feature = "postgres"))]
    pub(crate) fn thread_filter(&self) -> Vec<Option<&str>> {
        if self.threads.is_empty() {
            vec![None]
        } else {
            self.threads.iter().map(|t| Some(t.as_str())).collect()
        }
    }

    /// Whether the operation was asked to stop ([`stop`](Self::stop) is set).
    pub(crate) fn stopped(&self) -> bool {
        self.stop.as_ref().is_some_and(|s| s.load(Ordering::SeqCst))
    }

    pub(crate) fn set_progress(&mut self, f: impl Fn(&Progress) + Send + Sync + 'static) {
        self.progress = Some(Arc::new(f));
    }
}

impl std::fmt::Debug for RunOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RunOptions")
            .field("dry_run", &self.dry_run)
            .field("vacuum", &self.vacuum)
            .field("threads", &self.threads)
            .field("except_threads", &self.except_threads)
            .field("page_size", &self.page_size)
            .field("page_bytes", &self.page_bytes)
            .field("batch_size", &self.batch_size)
            .field("batch_bytes", &self.batch_bytes)
            .field("max_rows_per_sec", &self.max_rows_per_sec)
            .field("max_reconnects", &self.max_reconnects)
            .field("progress", &self.progress.is_some())
            .field(
                "stop",
                &self.stop.as_ref().map(|s| s.load(Ordering::SeqCst)),
            )
            .finish()
    }
}

/// The builders of an operation's shared settings, on a type with a `run:
/// RunOptions` field: `run_setters!(CopyOptions { /// doc  dry_run; ... })`. Each
/// setting is listed with the operation's own doc comment; sizes take a floor of 1,
/// rates of 0 mean no limit.
macro_rules! run_setters {
    ($ty:ident { $( $(#[$doc:meta])* $setter:ident $(($arg:ident))? ; )* }) => {
        impl $ty {
            $( $crate::store::options::run_setters!(@one $(#[$doc])* $setter $(($arg))?); )*
        }
    };
    (@one $(#[$doc:meta])* dry_run) => {
        $(#[$doc])*
        pub fn dry_run(mut self, on: bool) -> Self {
            self.run.dry_run = on;
            self
        }
    };
    (@one $(#[$doc:meta])* vacuum) => {
        $(#[$doc])*
        pub fn vacuum(mut self, on: bool) -> Self {
            self.run.vacuum = on;
            self
        }
    };
    (@one $(#[$doc:meta])* threads) => {
        $(#[$doc])*
        pub fn threads(mut self, threads: impl IntoIterator<Item = impl Into<String>>) -> Self {
            self.run.threads = threads.into_iter().map(Into::into).collect();
            self
        }
    };
    (@one $(#[$doc:meta])* exclude_threads) => {
        $(#[$doc])*
        pub fn exclude_threads(
            mut self,
            threads: impl IntoIterator<Item = impl Into<String>>,
        ) -> Self {
            self.run.except_threads = threads.into_iter().map(Into::into).collect();
            self
        }
    };
    (@one $(#[$doc:meta])* page_size($arg:ident)) => {
        $(#[$doc])*
        pub fn page_size(mut self, $arg: usize) -> Self {
            self.run.page_size = Some($arg.max(1));
            self
        }
    };
    (@one $(#[$doc:meta])* page_bytes($arg:ident)) => {
        $(#[$doc])*
        pub fn page_bytes(mut self, $arg: usize) -> Self {
            self.run.page_bytes = Some($arg.max(1));
            self
        }
    };
    (@one $(#[$doc:meta])* batch_size($arg:ident)) => {
        $(#[$doc])*
        pub fn batch_size(mut self, $arg: usize) -> Self {
            self.run.batch_size = Some($arg.max(1));
            self
        }
    };
    (@one $(#[$doc:meta])* batch_bytes($arg:ident)) => {
        $(#[$doc])*
        pub fn batch_bytes(mut self, $arg: usize) -> Self {
            self.run.batch_bytes = Some($arg.max(1));
            self
        }
    };
    (@one $(#[$doc:meta])* max_rows_per_sec) => {
        $(#[$doc])*
        pub fn max_rows_per_sec(mut self, rate: Option<u64>) -> Self {
            self.run.max_rows_per_sec = rate.filter(|r| *r > 0);
            self
        }
    };
    (@one $(#[$doc:meta])* max_reconnects) => {
        $(#[$doc])*
        pub fn max_reconnects(mut self, n: u32) -> Self {
            self.run.max_reconnects = Some(n);
            self
        }
    };
    (@one $(#[$doc:meta])* stop_flag) => {
        $(#[$doc])*
        pub fn stop_flag(mut self, stop: std::sync::Arc<std::sync::atomic::AtomicBool>) -> Self {
            self.run.stop = Some(stop);
            self
        }
    };
    (@one $(#[$doc:meta])* on_progress) => {
        $(#[$doc])*
        pub fn on_progress(
            mut self,
            f: impl Fn(&$crate::store::Progress) + Send + Sync + 'static,
        ) -> Self {
            self.run.set_progress(f);
            self
        }
    };
}

pub(crate) use run_setters;
