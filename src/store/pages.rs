//! The pages of threads `prune` and `retain` share, run on the store's engine
//! (`engine.rs`: the stop, the pace, progress, reconnecting): threads are read a page
//! at a time (at most [`PAGE_THREADS`] threads, about 1,000 checkpoints; a larger
//! thread alone, and a long one a window at a time, `long.rs`), each thread decided by
//! the planner (`plan.rs`) into a [`Removal`], and each page's removal deleted in one
//! transaction by the savers' own retention code (through the target's
//! [`Checkpoints::remove`](super::backend::Checkpoints::remove)): killed at any point,
//! a run leaves each page either as it was or done; run it again to finish. On
//! Postgres two pages are done at a time on two connections.
//!
//! A page is chosen from each thread's checkpoint count and oldest and newest ids, and
//! the rules decide some threads from those alone (`Rules::fate`): a thread they cannot
//! touch is passed over unread, one that is expired goes whole unread (by thread id up
//! to its newest id). Measured on 100,000 checkpoints in 10,000 threads, half of them
//! idle (2026-11-28, release build, two cores): `prune --idle-since` 3.4–3.7 s → 1.45 s
//! on Postgres, 3.5–3.9 s → 2.1 s on SQLite.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;
use std::time::Duration;

use super::backend::Counted;
use super::engine::Engine;
use super::error::StoreFault;
use super::long::{prune_long, windowed, Run, LONG_THREAD};
use super::options::RunOptions;
use super::plan::{id_time, plan_thread, Fate, Loaded, PlanFn, Rules, Tally};
use super::raw::Result;
use super::retry::{pause, unless_no_slot};
use super::target::{open_maintained, Target};
use crate::error::Error;
use crate::saver::retention::Removal;
use crate::serializer::Serializer;

/// Checkpoints loaded per page of threads (a thread with more is loaded alone): what
/// a prune holds in memory at once, and what one transaction deletes at most, so a
/// live writer waits for one page's deletes, never for the whole prune.
const PAGE_CHECKPOINTS: i64 = 1_000;
/// Threads per page at most, by default (`retain`'s policy may set its own).
pub(crate) const PAGE_THREADS: usize = 200;

/// A page of threads: those to read and decide, those that go whole and those passed
/// over, both decided unread from each thread's count and oldest and newest ids
/// ([`Rules::fate`]; a passed-over thread is counted as looked at, every checkpoint
/// kept).
#[derive(Default)]
struct Page {
    load: Vec<String>,
    /// `(thread, its newest checkpoint id, its checkpoints)`.
    whole: Vec<(String, String, u64)>,
    passed_threads: u64,
    passed_checkpoints: u64,
    /// Threads left out by the run's `except_threads`: neither read nor counted.
    excluded: u64,
    /// The page's one thread is long and planned a window at a time (`long.rs`): its
    /// checkpoints counted here, its bytewise oldest and newest ids.
    long: Option<(u64, String, String)>,
    /// The page's one thread is long and goes whole a window at a time (`long.rs`):
    /// its newest id and its checkpoints.
    long_whole: Option<(String, String, u64)>,
    /// The last thread the page took; `None`: no thread left.
    last: Option<String>,
    /// Whether threads may follow the page (the pause between pages is only taken
    /// before another page).
    more: bool,
}

impl Page {
    /// Threads the page went past, left out ones included (progress counts them).
    fn threads(&self) -> u64 {
        (self.load.len() + self.whole.len() + usize::from(self.long_whole.is_some())) as u64
            + self.passed_threads
            + self.excluded
    }

    /// Whether it has threads to read or delete.
    fn has_work(&self) -> bool {
        !self.load.is_empty() || !self.whole.is_empty() || self.long_whole.is_some()
    }
}

/// The next page of threads after `after`, by id: up to `limit` threads to read or
/// delete whole, holding about [`PAGE_CHECKPOINTS`] checkpoints (at least one thread),
/// and the threads among them `rules` cannot touch, passed over. What goes whole or is
/// passed over is known from each thread's count and oldest and newest ids
/// ([`Rules::fate`]; `decide`: `false` reads every thread, as a listing of each plan
/// needs): `--idle-since` reads no rows at all, and a date rule on a store of mostly
/// recent threads reads only the old ones. `only`: those threads (sorted), else every
/// thread of the store; `except`, whatever `only` says, are gone past untouched and
/// uncounted.
async fn thread_page(
    target: &mut Target,
    rules: &Rules,
    decide: bool,
    (only, except): (&[String], &BTreeSet<String>),
    after: Option<&str>,
    limit: usize,
) -> Result<Page> {
    // `beyond`: whether there are threads past the ones counted here.
    let (counted, beyond): (Vec<Counted>, bool) = if only.is_empty() {
        // Passed-over threads do not fill a page: up to twice `limit` are counted.
        let fetch = limit.saturating_mul(2);
        let after = after.unwrap_or("");
        let counted = target
            .counted_threads(after, i64::try_from(fetch).unwrap_or(i64::MAX))
            .await?;
        let full = counted.len() >= fetch;
        (counted, full)
    } else {
        // The threads asked for, all read (a thread not stored reads as none).
        let mut left = only
            .iter()
            .filter(|t| after.is_none_or(|a| t.as_str() > a))
            .cloned();
        let names: Vec<String> = left.by_ref().take(limit).collect();
        let mut found: BTreeMap<String, Counted> = target
            .counted_of(&names)
            .await?
            .into_iter()
            .map(|c| (c.0.clone(), c))
            .collect();
        let counted = names
            .into_iter()
            .map(|t| {
                found
                    .remove(&t)
                    .unwrap_or_else(|| (t, 0, String::new(), String::new(), 1))
            })
            .collect();
        (counted, left.next().is_some())
    };
    let mut page = Page {
        more: beyond,
        ..Page::default()
    };
    let mut held = 0i64;
    for (thread, n, oldest, newest, odd) in counted {
        if except.contains(&thread) {
            page.excluded += 1;
            page.last = Some(thread);
            continue;
        }
        let count = u64::try_from(n).unwrap_or(0);
        let fate = if decide && only.is_empty() {
            rules.fate(count, &oldest, &newest, odd == 0)
        } else {
            Fate::Read
        };
        if fate == Fate::Untouched {
            page.passed_threads += 1;
            page.passed_checkpoints += count;
            page.last = Some(thread);
            continue;
        }
        let taken = page.load.len() + page.whole.len() + usize::from(page.long_whole.is_some());
        if taken >= limit || (taken > 0 && held + n > PAGE_CHECKPOINTS) {
            page.more = true;
            break;
        }
        held += n;
        page.last = Some(thread.clone());
        if fate == Fate::Read && windowed(count, odd == 0) {
            // Alone on its page: it holds more than a page's checkpoints.
            page.long = Some((count, oldest.clone(), newest.clone()));
        }
        if fate == Fate::Whole
            && count >= LONG_THREAD.unsigned_abs()
            && target.whole_threads_in_windows()
        {
            // Alone on its page, as a long thread that is read.
            page.long_whole = Some((thread, newest, count));
        } else if fate == Fate::Whole {
            page.whole.push((thread, newest, count));
        } else {
            page.load.push(thread);
        }
    }
    Ok(page)
}

/// The checkpoints of `threads`, by thread, each thread's in (namespace, id) order,
/// with what `rules` read of their metadata; when a rule looks for interrupts, which
/// of them hold a `__interrupt__` pending write.
async fn load_threads(
    target: &mut Target,
    serde: &Arc<dyn Serializer>,
    threads: &[String],
    rules: &Rules,
) -> Result<BTreeMap<String, Loaded>> {
    let mut out = target.load_threads(serde, threads, &rules.reads()).await?;
    if rules.wants_interrupts() {
        let found = target.interrupted(threads).await?;
        if !found.is_empty() {
            for (thread, loaded) in out.iter_mut() {
                for c in &mut loaded.cps {
                    c.interrupted =
                        found.contains(&(thread.clone(), c.ns.to_string(), c.id.to_string()));
                }
            }
        }
    }
    Ok(out)
}

/// One run over a store's threads, a page at a time.
pub(crate) struct Pass<'a> {
    pub(crate) operation: &'static str,
    pub(crate) rules: &'a Rules,
    /// The operation's shared settings: whether to write, which threads (none: every
    /// thread), threads per page (one transaction; `batch_size`, default
    /// [`PAGE_THREADS`]), the pace, the reconnect budget and whom to tell.
    pub(crate) run: &'a RunOptions,
    /// Between pages.
    pub(crate) pause: Option<Duration>,
    /// Stop after this many threads changed (checked after each page).
    pub(crate) max_threads: Option<u64>,
    /// Start after this thread id.
    pub(crate) after: Option<String>,
    pub(crate) on_plan: Option<&'a PlanFn>,
    /// The pass holds the store's sweep lock: it is taken again on a re-opened first
    /// connection (a session lock goes with its connection); another sweeper having
    /// taken it meanwhile stops the pass after the page in flight.
    pub(crate) relock: bool,
}

impl<'a> Pass<'a> {
    /// A pass of `operation` under `rules`, with `run`'s settings and nothing else.
    pub(crate) fn new(operation: &'static str, rules: &'a Rules, run: &'a RunOptions) -> Self {
        Pass {
            operation,
            rules,
            run,
            pause: None,
            max_threads: None,
            after: None,
            on_plan: None,
            relock: false,
        }
    }
}

/// What a pass did: its counts, the last thread it looked at, and why it ended.
#[derive(Default)]
pub(crate) struct PassDone {
    pub(crate) tally: Tally,
    pub(crate) last: Option<String>,
    pub(crate) capped: bool,
    pub(crate) stopped: bool,
    /// Pages with something to read or delete, each done in one transaction.
    pub(crate) batches: u64,
    /// Connections re-opened after the server closed them.
    pub(crate) reconnects: u64,
    /// The session lock could not be taken again after a reconnect.
    pub(crate) lock_lost: bool,
}

/// A pass's engine, and the sweep lock taken again on a re-opened first connection.
struct Reopen {
    engine: Engine,
    relock: bool,
    lock_lost: bool,
}

impl Reopen {
    /// After `e` on `target` (`first`: the connection that holds the session lock):
    /// re-opens it when the connection was lost (taking the lock again), for the
    /// caller to redo its unit; any other error, or one loss too many, is returned.
    async fn recover(&mut self, target: &mut Target, first: bool, e: Error) -> Result<()> {
        let before = self.engine.reconnects();
        self.engine.recover(&**target, e).await?;
        if !(first && self.relock && self.engine.reconnects() > before) {
            return Ok(());
        }
        match target.relock().await {
            Ok(got) => {
                self.lock_lost |= !got;
                Ok(())
            }
            // Lost again: the next statement counts it, and this runs again.
            Err(e) if e.is_connection_lost() => Ok(()),
            Err(e) => Err(e),
        }
    }
}

/// `$step` (an expression on `$target`, the connection `$first` or the second) until
/// it goes through, `$reopen` re-opening the connection after each loss. A page is
/// one transaction: redone after a loss, it is planned again from what the store
/// holds, so a page whose commit went through before the connection went finds its
/// threads pruned and removes nothing more.
macro_rules! redo {
    ($reopen:expr, $target:expr, $first:expr, $step:expr) => {
        loop {
            match $step {
                Ok(v) => break $reopen.engine.ok(v),
                Err(e) => $reopen.recover($target, $first, e).await?,
            }
        }
    };
}

/// Loads, decides and removes one page of threads on `target`, in one transaction;
/// returns its counts and how many checkpoints it read or deleted whole.
async fn do_page(
    target: &mut Target,
    serde: &Arc<dyn Serializer>,
    page: &Page,
    pass: &Pass<'_>,
) -> Result<(Tally, u64)> {
    let run = |whole, ids| Run {
        whole,
        ids,
        dry_run: pass.run.dry_run,
        on_plan: pass.on_plan,
        stop: pass.run.stop.as_deref(),
    };
    // A long thread going whole, read and deleted a window at a time; a dry run
    // counts it in one read, as it counts a thread going whole that is not long.
    let mut whole_here = None;
    if let Some(entry @ (thread, newest, count)) = &page.long_whole {
        if !pass.run.dry_run {
            let run = run(Some(newest.as_str()), ("", newest.as_str()));
            if let Some(done) =
                prune_long(target, serde, (thread, *count), pass.rules, &run).await?
            {
                return Ok(done);
            }
        }
        whole_here = Some(entry);
    }
    if let (Some((count, oldest, newest)), [thread], []) =
        (&page.long, page.load.as_slice(), page.whole.as_slice())
    {
        let run = run(None, (oldest.as_str(), newest.as_str()));
        if let Some(done) = prune_long(target, serde, (thread, *count), pass.rules, &run).await? {
            return Ok(done);
        }
    }
    let loaded = if page.load.is_empty() {
        BTreeMap::new()
    } else {
        load_threads(target, serde, &page.load, pass.rules).await?
    };
    let mut tally = Tally::default();
    let mut removal = Removal::default();
    for (thread, cps) in &loaded {
        let planned = plan_thread(
            thread,
            cps,
            pass.rules,
            (&mut removal, &mut tally),
            pass.on_plan.is_some(),
        );
        if let (Some(planned), Some(f)) = (planned, pass.on_plan) {
            f(&planned);
        }
    }
    let mut handled: u64 = loaded.values().map(|l| l.cps.len() as u64).sum();
    for (thread, newest, count) in page.whole.iter().chain(whole_here) {
        removal.whole_threads.push((thread.clone(), newest.clone()));
        tally.threads += 1;
        tally.threads_deleted += 1;
        tally.threads_changed += 1;
        tally.checkpoints_deleted += count;
        handled += count;
    }
    if !removal.is_empty() {
        let removed = target.remove(&removal, pass.run.dry_run).await?;
        tally.writes_deleted += removed.writes;
        tally.blobs_deleted += removed.blobs;
        tally.bytes_freed += removed.bytes;
    }
    Ok((tally, handled))
}

/// Refuses `pass` before anything is deleted when its rules would delete every thread
/// of the store ([`ErrorKind::WouldDeleteAll`](crate::ErrorKind::WouldDeleteAll)):
/// when the time rules alone expire every thread (a page of each thread's oldest and
/// newest ids at a time), a dry pass told to no one works out the whole plan (pins,
/// interrupts, labels, overrides, metadata, the threads selected) and the pass is
/// refused if no thread of the store would stay. Returns the connections that dry
/// pass re-opened.
pub(crate) async fn refuse_emptying(
    store: &str,
    target: &mut Target,
    serde: &Arc<dyn Serializer>,
    pass: &Pass<'_>,
    shown: &str,
) -> Result<u64> {
    if !pass.rules.deletes_threads() {
        return Ok(0);
    }
    let (all, threads) = all_expire(target, pass.rules).await?;
    if !all {
        return Ok(0);
    }
    let probe_run = RunOptions {
        dry_run: true,
        progress: None,
        ..pass.run.clone()
    };
    let whole = run_pass(
        store,
        target,
        serde,
        &Pass::new(pass.operation, pass.rules, &probe_run),
    )
    .await?;
    if !whole.stopped && whole.tally.threads_deleted >= threads {
        return Err(StoreFault::WouldDeleteAll {
            operation: pass.operation,
            store: shown.to_owned(),
            threads,
        }
        .into());
    }
    Ok(whole.reconnects)
}

/// Whether the time rules alone expire every thread (and how many there are).
async fn all_expire(target: &mut Target, rules: &Rules) -> Result<(bool, u64)> {
    let mut after: Option<String> = None;
    let mut threads = 0u64;
    loop {
        let page = target.expiry_page(after.as_deref().unwrap_or("")).await?;
        let Some((last, _, _)) = page.last() else {
            return Ok((threads > 0, threads));
        };
        after = Some(last.clone());
        for (_, first, newest) in &page {
            threads += 1;
            let idle = rules
                .idle_before
                .is_some_and(|d| id_time(newest).is_some_and(|t| t < d));
            let old = rules
                .first_before
                .is_some_and(|d| id_time(first).is_some_and(|t| t < d));
            if !idle && !old {
                return Ok((false, threads));
            }
        }
    }
}

/// Runs `pass` over `store`, opened as `target` (a second connection is opened on
/// Postgres).
pub(crate) async fn run_pass(
    store: &str,
    target: &mut Target,
    serde: &Arc<dyn Serializer>,
    pass: &Pass<'_>,
) -> Result<PassDone> {
    let mut reopen = Reopen {
        engine: Engine::new(pass.operation, "threads", pass.run),
        relock: pass.relock,
        lock_lost: false,
    };
    let mut only = pass.run.threads.clone();
    only.sort();
    only.dedup();
    let except = &pass.run.except_threads;
    let total = if only.is_empty() {
        redo!(reopen, target, true, target.thread_count().await)
    } else {
        only.len() as u64
    };
    reopen.engine.set_total(total);
    // On Postgres two pages are done at a time on two connections (the server's work,
    // not the client's, is what a prune waits for: measured on 100,000 checkpoints,
    // PG 15, two cores, 3.0 s on one connection). SQLite has one writer.
    // A server or role with no slot for the second connection gets the pages one at a
    // time on the first.
    let mut out = PassDone::default();
    let mut second = if target.pages_in_parallel() {
        let opened = open_maintained(store, pass.run.dry_run)
            .await
            .map(|(other, _)| other);
        unless_no_slot(opened, &mut out.tally.connections_refused)?
    } else {
        None
    };
    let mut after = pass.after.clone();
    let page_threads = pass.run.batch_size.unwrap_or(PAGE_THREADS).max(1);
    // A listing of each thread's plan needs every thread read.
    let decide = pass.on_plan.is_none();
    loop {
        if reopen.engine.stop_here() {
            out.stopped = true;
            break;
        }
        if pass
            .max_threads
            .is_some_and(|cap| out.tally.threads_changed >= cap)
        {
            out.capped = true;
            break;
        }
        if reopen.lock_lost {
            out.stopped = true;
            out.lock_lost = true;
            break;
        }
        let first = redo!(
            reopen,
            target,
            true,
            thread_page(
                target,
                pass.rules,
                decide,
                (&only, except),
                after.as_deref(),
                page_threads
            )
            .await
        );
        let Some(last) = first.last.clone() else {
            break;
        };
        let before = after.clone();
        let next = match &second {
            Some(_) => redo!(
                reopen,
                target,
                true,
                thread_page(
                    target,
                    pass.rules,
                    decide,
                    (&only, except),
                    Some(&last),
                    page_threads
                )
                .await
            ),
            None => Page::default(),
        };
        after = Some(next.last.clone().unwrap_or(last));
        let (a, b) = match second.as_mut() {
            Some(other) if first.has_work() && next.has_work() => {
                let (a, b) = futures_util::future::join(
                    do_page(target, serde, &first, pass),
                    do_page(other, serde, &next, pass),
                )
                .await;
                // Each connection's page is redone alone when its connection was
                // lost (the other page's transaction stands as it went).
                let mut a = Some(a);
                let a = redo!(
                    reopen,
                    target,
                    true,
                    match a.take() {
                        Some(first_try) => first_try,
                        None => do_page(target, serde, &first, pass).await,
                    }
                );
                let mut b = Some(b);
                let b = redo!(
                    reopen,
                    other,
                    false,
                    match b.take() {
                        Some(first_try) => first_try,
                        None => do_page(other, serde, &next, pass).await,
                    }
                );
                (a, Some(b))
            }
            _ => {
                // At most one of the two pages has work (a page without does nothing).
                let page = if first.has_work() { &first } else { &next };
                let a = redo!(
                    reopen,
                    target,
                    true,
                    do_page(target, serde, page, pass).await
                );
                (a, None)
            }
        };
        let mut deleted = 0;
        for (tally, read) in std::iter::once(a).chain(b) {
            // Paced by the checkpoints read or deleted; progress counts threads.
            reopen.engine.pace(read).await;
            deleted += tally.checkpoints_deleted;
            out.tally.add(&tally);
        }
        out.batches += u64::from(first.has_work()) + u64::from(next.has_work());
        for p in [&first, &next] {
            out.tally.threads += p.passed_threads;
            out.tally.checkpoints_kept += p.passed_checkpoints;
        }
        out.last.clone_from(&after);
        if reopen.engine.stop_here() {
            // A long thread stops between its windows: the next sweep begins with it
            // (with the page's thread before it), not after it.
            let cut = |p: &Page| p.long.is_some() || p.long_whole.is_some();
            if cut(&first) {
                out.last = before;
            } else if cut(&next) {
                out.last = first.last.clone();
            }
        }
        reopen
            .engine
            .advance("threads", first.threads() + next.threads(), deleted, None);
        // The pause is between pages: none after the last, and a stop asked for
        // during one ends it.
        let more = if second.is_some() {
            next.more
        } else {
            first.more
        };
        if let (Some(p), true) = (pass.pause, more) {
            pause(p, pass.run.stop.as_deref()).await;
        }
    }
    out.reconnects = reopen.engine.reconnects();
    Ok(out)
}
