//! The engine every store operation runs its batches on: one [`Engine`] for each task
//! that drives batches, made from the operation's [`RunOptions`], decides what happens
//! between two batches, the same way for every operation:
//!
//! - a stop asked for (SIGINT or SIGTERM through [`RunOptions::stop`]) ends the
//!   operation at the boundary: the batch in flight is finished, none after it begun
//!   ([`Engine::stop_here`]);
//! - a batch that failed on a lost connection is redone once the backend has re-opened
//!   it, waiting a little longer after each loss in a row, up to the reconnect budget
//!   ([`Engine::settle`], [`Engine::again`]; the waits are [`Retry`]'s);
//! - the pace ([`Throttle`]) and the progress report, in the operation's own unit
//!   ([`Engine::batch_done`]).
//!
//! What a batch is belongs to the operation: a page of rows by key (audit, encrypt,
//! rekey: `ops.rs`, `sweep.rs`), a page of threads (prune, retain: `pages.rs`), a batch
//! of checkpoints or backup rows written while the next is read (copy, import:
//! `pipeline.rs`). How a page is read, applied or deleted belongs to the backend
//! ([`Values`], [`Checkpoints`](super::backend::Checkpoints)).

use std::future::Future;

use super::backend::Values;
use super::options::{Progress, RunOptions, Stage, Throttle};
use super::retry::Retry;
use crate::error::Error;

/// The state of one task's batches: the settings, the losses in a row and in all, the
/// pace, and what progress has been reported.
pub(crate) struct Engine {
    run: RunOptions,
    operation: &'static str,
    unit: &'static str,
    retry: Retry,
    throttle: Throttle,
    total: u64,
    done: u64,
    changed: u64,
}

impl Engine {
    /// The engine of `operation`, counting progress in `unit` (`values`, `rows`,
    /// `checkpoints`, `threads`), with `run`'s pace, reconnect budget, progress
    /// callback and stop flag.
    pub(crate) fn new(operation: &'static str, unit: &'static str, run: &RunOptions) -> Self {
        Engine {
            run: run.clone(),
            operation,
            unit,
            retry: run.retry(),
            throttle: run.throttle(),
            total: 0,
            done: 0,
            changed: 0,
        }
    }

    /// How many the operation expects to go through (progress shows the larger of this
    /// and what is done).
    pub(crate) fn set_total(&mut self, total: u64) {
        self.total = total;
    }

    /// At a batch boundary: whether the operation was asked to stop here.
    pub(crate) fn stop_here(&self) -> bool {
        self.run.stopped()
    }

    /// A unit went through: the next loss is the first in a row again.
    pub(crate) fn ok<T>(&mut self, value: T) -> T {
        self.retry.ok(value)
    }

    /// After `e` on `backend`: re-opens its connection when `e` is a lost one (within
    /// the budget, after the wait), for the caller to redo its unit; any other error,
    /// or one loss too many, is returned.
    pub(crate) async fn recover<B: Values + ?Sized>(
        &mut self,
        backend: &B,
        e: Error,
    ) -> Result<(), Error> {
        backend.recover(&mut self.retry, e).await
    }

    /// The outcome of one unit on `backend`: its value, or `None` once a lost
    /// connection was re-opened, for the caller to redo the unit (see
    /// [`recover`](Self::recover)).
    pub(crate) async fn settle<T, B: Values + ?Sized>(
        &mut self,
        backend: &B,
        outcome: Result<T, Error>,
    ) -> Result<Option<T>, Error> {
        match outcome {
            Ok(v) => Ok(Some(self.ok(v))),
            Err(e) => {
                self.recover(backend, e).await?;
                Ok(None)
            }
        }
    }

    /// Runs `unit` on `backend` until it goes through (see [`settle`](Self::settle)).
    pub(crate) async fn again<T, B, F, Fut>(&mut self, backend: &B, mut unit: F) -> Result<T, Error>
    where
        B: Values + ?Sized,
        F: FnMut() -> Fut,
        Fut: Future<Output = Result<T, Error>>,
    {
        loop {
            if let Some(v) = self.settle(backend, unit().await).await? {
                return Ok(v);
            }
        }
    }

    /// Connections re-opened so far (what the reports call `reconnects`).
    pub(crate) fn reconnects(&self) -> u64 {
        self.retry.reconnects
    }

    /// The losses' counts, for a reader that also steps aside for locks (a copy's
    /// source: [`Retry::lost_or_locked`]).
    #[cfg(all(feature = "sqlite", feature = "postgres"))]
    pub(crate) fn retry(&mut self) -> &mut Retry {
        &mut self.retry
    }

    /// Counts `n` more changed, for the next report (an operation that reports its
    /// progress after checking what it changed: a copy's read-back).
    #[cfg(all(feature = "sqlite", feature = "postgres"))]
    pub(crate) fn add_changed(&mut self, n: u64) {
        self.changed = self.changed.saturating_add(n);
    }

    /// Waits until `rows` more are due at the pace asked for.
    pub(crate) async fn pace(&mut self, rows: u64) {
        self.throttle.account(rows, self.run.stop.as_deref()).await;
    }

    /// Tells the progress callback of `rows` read in `column` and not yet written (a
    /// sweep's page between its read and its write), with the page's first and last
    /// keys.
    pub(crate) fn reading(
        &self,
        column: &'static str,
        rows: u64,
        page: Option<(Vec<String>, Vec<String>)>,
    ) {
        self.tell(column, self.done.saturating_add(rows), Stage::Read, page);
    }

    /// Counts `rows` more done in `column` and `changed` more changed, and tells the
    /// progress callback, without pacing (for an operation paced by another count).
    pub(crate) fn advance(
        &mut self,
        column: &'static str,
        rows: u64,
        changed: u64,
        page: Option<(Vec<String>, Vec<String>)>,
    ) {
        self.done = self.done.saturating_add(rows);
        self.changed = self.changed.saturating_add(changed);
        self.tell(column, self.done, Stage::Done, page);
    }

    /// A batch done: [`advance`](Self::advance), then [`pace`](Self::pace) by its
    /// `rows`.
    pub(crate) async fn batch_done(
        &mut self,
        column: &'static str,
        rows: u64,
        changed: u64,
        page: Option<(Vec<String>, Vec<String>)>,
    ) {
        self.advance(column, rows, changed, page);
        self.pace(rows).await;
    }

    fn tell(
        &self,
        column: &'static str,
        done: u64,
        stage: Stage,
        page: Option<(Vec<String>, Vec<String>)>,
    ) {
        self.run.report(&Progress {
            operation: self.operation,
            unit: self.unit,
            column,
            rows_done: done,
            total_estimate: self.total.max(done),
            rewritten: self.changed,
            stage,
            page,
        });
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::sync::{Arc, Mutex};

    use super::*;

    /// A progress report as kept: (column, done, total, changed, stage).
    type Seen = (String, u64, u64, u64, Stage);

    /// An engine whose progress reports are kept.
    fn watched() -> (Engine, Arc<Mutex<Vec<Seen>>>) {
        let seen = Arc::new(Mutex::new(Vec::new()));
        let mut run = RunOptions::default();
        let keep = Arc::clone(&seen);
        run.set_progress(move |p: &Progress| {
            assert_eq!((p.operation, p.unit), ("rekey", "values"));
            keep.lock().unwrap().push((
                p.column.to_owned(),
                p.rows_done,
                p.total_estimate,
                p.rewritten,
                p.stage,
            ));
        });
        (Engine::new("rekey", "values", &run), seen)
    }

    #[tokio::test]
    async fn progress_counts_what_each_batch_did_in_the_operations_unit() {
        let (mut engine, seen) = watched();
        engine.set_total(10);
        engine.reading("blobs", 4, None);
        engine.batch_done("blobs", 4, 3, None).await;
        engine.batch_done("writes", 5, 0, None).await;
        // Past the estimate (a writer added rows): the total follows what is done.
        engine.reading("writes", 4, None);
        engine.advance("writes", 4, 2, None);
        let seen = seen.lock().unwrap().clone();
        let expected = vec![
            ("blobs".to_owned(), 4, 10, 0, Stage::Read),
            ("blobs".to_owned(), 4, 10, 3, Stage::Done),
            ("writes".to_owned(), 9, 10, 3, Stage::Done),
            ("writes".to_owned(), 13, 13, 3, Stage::Read),
            ("writes".to_owned(), 13, 13, 5, Stage::Done),
        ];
        assert_eq!(seen, expected);
    }

    #[test]
    fn a_stop_asked_for_is_seen_at_the_next_boundary() {
        let stop = Arc::new(AtomicBool::new(false));
        let run = RunOptions {
            stop: Some(Arc::clone(&stop)),
            ..RunOptions::default()
        };
        let engine = Engine::new("copy", "checkpoints", &run);
        assert!(!engine.stop_here());
        stop.store(true, Ordering::SeqCst);
        assert!(engine.stop_here());
    }

    #[tokio::test]
    async fn the_pace_holds_batches_to_the_rate_asked_for() {
        let run = RunOptions {
            max_rows_per_sec: Some(1_000),
            ..RunOptions::default()
        };
        let mut engine = Engine::new("prune", "threads", &run);
        let started = std::time::Instant::now();
        // 250 rows at 1,000 a second are due at 0.25 s.
        for _ in 0..5 {
            engine.batch_done("threads", 50, 0, None).await;
        }
        let took = started.elapsed();
        assert!(took >= std::time::Duration::from_millis(249), "{took:?}");
        // Without a rate nothing waits.
        let mut free = Engine::new("prune", "threads", &RunOptions::default());
        let started = std::time::Instant::now();
        free.batch_done("threads", 1_000_000, 0, None).await;
        assert!(started.elapsed() < std::time::Duration::from_millis(200));
    }
}
