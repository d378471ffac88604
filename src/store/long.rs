//! A thread too long to hold ([`LONG_THREAD`] checkpoints or more) planned a window at
//! a time: each namespace's checkpoints read newest first, [`WINDOW`] at a time, each
//! window's removal deleted in its own transaction before the next is read. What the
//! planner (`plan.rs`) decides from the whole namespace, this decides in one pass from
//! the newest down, to the same checkpoints:
//! - the latest N are the first N read, the newest of the age rule the first one;
//! - an ancestor a kept checkpoint needs (the delta walk of `saver::delta`, the parent
//!   a checkpoint before v4 reads its sends from) is older than it: the walk is carried
//!   down as a frontier (the next id each walk reaches, with the channels it still
//!   looks for) and met when the reading gets there. Walks that meet are one walk with
//!   the channels of both, which keeps the same ancestors as walking each alone;
//! - a kept checkpoint whose parent goes is left with no parent when the parent's
//!   window is deleted (its own was deleted, or not, before).
//!
//! That needs every parent older than its child, which a thread written by LangGraph
//! has (a uuid6 id is taken when the checkpoint is made, after its parent); a thread
//! where some parent id is not below its child's, or whose ids are not of a uuid6's
//! shape (a Postgres collation then need not order them bytewise), is planned whole as
//! before. What the planner decides from the whole thread first is decided here from a
//! checkpoint or two: a rule that reads the thread's latest metadata (a selection,
//! pins, an override) from that checkpoint's (`Checkpoints::latest_metadata`): a
//! thread not selected or pinned is left unread, an override's rules are the ones the
//! windows follow. A time rule that expires the thread, from its oldest and newest ids
//! and whether the latest checkpoint of a namespace holds an interrupt
//! (`Checkpoints::waiting`): waiting (kept by `keep_interrupted`), the rules apply as
//! they are; else `idle_action = keep_latest` keeps the latest of each namespace, and
//! otherwise every checkpoint goes but the labelled and what they need, the thread
//! going whole (by thread id, after its windows) when nothing stays.
//!
//! A checkpoint read out of order all the same (its id not below the one before, or
//! its parent's not below its own: written while the thread was read) stops the run
//! with [`ErrorKind::UnreadableRow`](crate::ErrorKind::UnreadableRow) before its window
//! is deleted; run again, such a thread is read whole.
//!
//! Asked to stop, a run ends after the window in flight; the thread's report then
//! counts what its windows did, and a `retain` sweep's `next_after` is the thread
//! before it, so that the next sweep begins with this one's rest (as a `prune` run
//! again finishes it).
//!
//! A long thread that goes whole (idle, expired) is deleted the same way on SQLite, a
//! window at a time newest first (every checkpoint goes; a run killed half way leaves
//! the thread's older part, still idle and still expired), then by thread id up to its
//! newest id, as a thread going whole is (the writes stored against no checkpoint);
//! SQLite's one writer would otherwise wait for the whole thread's deletes. A dry run
//! counts it in one read. One idle thread of 100,000 checkpoints (2026-12-06, release,
//! three runs each): 1.64–1.71 s, 14 MiB; its two `DELETE … WHERE thread_id = ? AND
//! checkpoint_id <= ?` in `sqlite3`, one transaction, 1.54–1.69 s.
//!
//! Each window deleted leaves the store consistent on its own (what goes is needed by
//! nothing kept, read or not yet read), so a run killed between windows, run again,
//! plans what is left and ends where one run would have. A live writer waits for one
//! window's deletes. On Postgres the next window is read on a second connection
//! ([`Checkpoints::reader`](super::backend::Checkpoints::reader)) while the first
//! deletes the window before: the window below is not one the deletes touch.
//!
//! Measured on one thread of 100,000 checkpoints (release build, 2026-12-06,
//! `/usr/bin/time`), `prune --keep-latest 1` planned whole peaked at 40 MiB on SQLite
//! and deleted 99,999 checkpoints in one transaction of 1.6 s (37.6 MiB, 20.6 s on
//! Postgres); a window at a time, 14 MiB and 1.57–1.60 s on SQLite. On Postgres the
//! blobs a window's checkpoints alone referenced go with it, decided from the
//! namespace's references read once before its first window ([`BlobPlan`]): 2.15–2.25 s
//! and 17 MiB, where Python's `PostgresSaver.prune` on copies of the same database, one
//! transaction, takes 3.10–3.16 s and 242 MiB (`benches/store_long_thread.sh`, 13:27
//! UTC, three runs each; 38.8 s when each window's blob step read every remaining
//! checkpoint of the namespace).

use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use super::backend::{BlobRefs, Versions};
use super::error::StoreFault;
use super::plan::{by_latest, id_time, Cp, PlanFn, PlannedThread, Rules, Tally};
use super::raw::Result;
use super::retry::unless_no_slot;
use super::target::Target;
use crate::saver::retention::{Blobs, Removal};
use crate::serializer::Serializer;

/// A thread of at least this many checkpoints is planned a window at a time.
pub(crate) const LONG_THREAD: i64 = 10_000;
/// Checkpoints per window: read, planned and deleted in one transaction.
pub(crate) const WINDOW: i64 = 1_000;

/// Whether a thread of `count` checkpoints is planned a window at a time: it is long
/// and its ids are of a uuid6's shape (`uniform`: bytewise order is time order). What
/// its latest metadata and the time rules make of the rules is decided in
/// [`prune_long`], from that one checkpoint and its oldest and newest ids.
pub(crate) fn windowed(count: u64, uniform: bool) -> bool {
    uniform && count >= LONG_THREAD.unsigned_abs()
}

/// How a long thread is pruned: whether to write, whom to tell each window's plan, and
/// what says stop (between windows).
pub(crate) struct Run<'a> {
    /// The thread goes whole (`Fate::Whole`: every checkpoint, then by thread id up to
    /// this, its newest id, what is left of it: writes stored against no checkpoint).
    pub(crate) whole: Option<&'a str>,
    /// The thread's bytewise oldest and newest ids when its page was read: what the
    /// time rules read (idle, hard TTL), and the newest a thread that goes whole (or
    /// all but its labelled) goes up to.
    pub(crate) ids: (&'a str, &'a str),
    pub(crate) dry_run: bool,
    pub(crate) on_plan: Option<&'a PlanFn>,
    pub(crate) stop: Option<&'a AtomicBool>,
}

/// Plans and removes `thread` (`count` checkpoints) a window at a time on `target`;
/// returns its counts and how many checkpoints were read, or `None` when the thread
/// cannot be read newest first (its parents not all below their children): the
/// caller plans it whole.
pub(crate) async fn prune_long(
    target: &mut Target,
    serde: &Arc<dyn Serializer>,
    (thread, count): (&str, u64),
    rules: &Rules,
    run: &Run<'_>,
) -> Result<Option<(Tally, u64)>> {
    let mut tally = Tally::default();
    // The rules the thread is decided by, from its latest metadata where a rule reads
    // it, as the planner decides them: a pinned thread is kept whole, unread.
    let resolved;
    let rules = if run.whole.is_some() {
        tally.threads = 1;
        rules
    } else {
        let latest = if rules.reads_latest() {
            target.latest_metadata(thread).await?
        } else {
            None
        };
        let Some(by) = by_latest(thread, rules, latest.as_ref(), count, &mut tally) else {
            return Ok(Some((tally, 0)));
        };
        resolved = by;
        &*resolved
    };
    // A time rule that expires the thread, as the planner has it: waiting at an
    // interrupt it keeps to its rules; else idle with `idle_action = keep_latest` it
    // keeps its latest, and otherwise only the labelled (and what they need) stay, the
    // thread going whole when none does.
    let (oldest, newest) = run.ids;
    let idle = rules
        .idle_before
        .is_some_and(|d| id_time(newest).is_some_and(|t| t < d));
    let too_old = rules
        .first_before
        .is_some_and(|d| id_time(oldest).is_some_and(|t| t < d));
    let expired_rules;
    let mut labelled_only = false;
    let rules = if run.whole.is_none() && (idle || too_old) {
        let mut r = rules.clone();
        if rules.keep_interrupted && target.waiting(thread).await? {
            tally.kept.interrupted_threads += 1;
        } else if too_old || !rules.idle_keep_latest {
            labelled_only = true;
            (r.keep_latest, r.older_than) = (Some(0), None);
        } else {
            r.keep_latest = Some(1);
        }
        expired_rules = r;
        &expired_rules
    } else {
        rules
    };
    // Going whole (or all but the labelled), up to its newest id when paged: a live
    // writer's newer checkpoint stays.
    let bound = run.whole.or(labelled_only.then_some(newest));
    let Some(namespaces) = target.long_thread(thread).await? else {
        return Ok(None);
    };
    let mut read = 0u64;
    // Where the store has one (Postgres), the next window is read on a second
    // connection while this one deletes the window before.
    // A server or role with no slot for it: the windows are read on this connection.
    let mut reader =
        unless_no_slot(target.reader().await, &mut tally.connections_refused)?.flatten();
    let full = usize::try_from(WINDOW).unwrap_or(usize::MAX);
    for (ns, walked) in namespaces {
        let mut plan = Namespace::new(rules, thread, &ns);
        plan.all_go = run.whole.is_some();
        // A thread going whole walks nothing: its values are not read.
        let walk = walked && run.whole.is_none();
        let at = (thread, ns.as_str());
        let mut below: Option<String> = None;
        let mut blobs = match run.whole {
            None => target.blob_refs(at).await?.map(BlobPlan::new),
            Some(_) => None,
        };
        let mut ahead = None;
        loop {
            let (window, versions) = match ahead.take() {
                Some(read_ahead) => read_ahead,
                None => {
                    let from = reader.as_mut().unwrap_or(&mut *target);
                    from.window(serde, at, walk, below.as_deref(), WINDOW, &rules.labels)
                        .await?
                }
            };
            let Some(last) = window.last() else {
                break;
            };
            below = Some(last.id.to_string());
            read += window.len() as u64;
            // Counted once deleted: a window not deleted counts nothing.
            let (mut removal, mut counts) = (Removal::default(), Tally::default());
            for (i, c) in window.iter().enumerate() {
                let pairs = versions.get(i);
                if bound.is_some_and(|newest| *c.id > *newest) {
                    // It stays, and what it references with it.
                    if let (Some(b), Some(pairs)) = (blobs.as_mut(), pairs) {
                        b.see(pairs, true);
                    }
                    continue;
                }
                let pushed = plan.push(c, &mut removal, &mut counts);
                if let (Some(b), Ok(kept), Some(pairs)) = (blobs.as_mut(), &pushed, pairs) {
                    b.see(pairs, *kept);
                }
                if let Err(OutOfOrder(id)) = pushed {
                    // What the checkpoint out of order needs is not known: this window
                    // is not deleted (those before it were, each consistent alone).
                    return Err(StoreFault::Unreadable {
                        what: format!("thread {thread:?}, namespace {ns:?}, checkpoint {id}"),
                        reason: "read out of order while the thread was pruned a window at \
                                 a time (its parent's id not below its own, or written \
                                 during the read); what was read before it was pruned, \
                                 the rest left as it is: run the same command again, \
                                 which reads such a thread whole"
                            .to_owned(),
                    }
                    .into());
                }
            }
            // Every reference to these has been read (they are referenced from this
            // window up): each goes if no checkpoint that stays references it.
            if let Some(b) = blobs.as_mut() {
                let decided = b.decided(thread, &ns, &last.id)?;
                if !removal.doomed.ids.is_empty() || !decided.channels.is_empty() {
                    removal.blobs = Some(decided);
                }
            }
            if !removal.doomed.ids.is_empty() || removal.blobs.is_some() {
                // Deleted in id order, as SQLite's B-tree cursor goes (one namespace
                // of one thread: the ids alone turn). Newest first, one thread of
                // 100,000 checkpoints took 2.5 s against 1.6 s planned whole.
                removal.doomed.ids.reverse();
                let removing = target.remove(&removal, run.dry_run);
                // The next window is read below this one, which its deletes do not
                // touch (each window's removal holds its own checkpoints, the parent
                // ids of those above cleared, and blobs no checkpoint below references).
                let removed = match reader.as_mut() {
                    Some(r) if window.len() >= full => {
                        let next =
                            r.window(serde, at, walk, below.as_deref(), WINDOW, &rules.labels);
                        let (removed, next) = futures_util::future::join(removing, next).await;
                        let removed = removed?;
                        ahead = Some(next?);
                        removed
                    }
                    _ => removing.await?,
                };
                counts.writes_deleted += removed.writes;
                counts.blobs_deleted += removed.blobs;
                counts.bytes_freed += removed.bytes;
                tally.threads_changed = 1;
            }
            tally.add(&counts);
            if let (Some(f), Some(planned)) = (run.on_plan, plan.listed(&removal)) {
                f(&planned);
            }
            if run.stop.is_some_and(|s| s.load(Ordering::SeqCst)) {
                return Ok(Some((tally, read)));
            }
            if window.len() < full {
                break;
            }
        }
    }
    let whole = run
        .whole
        .or((labelled_only && tally.checkpoints_kept == 0).then_some(newest));
    if let Some(newest) = whole {
        // What is left of the thread up to its newest id (writes stored against no
        // checkpoint), as a thread going whole is deleted; a live writer's newer rows
        // stay.
        let removal = Removal {
            whole_threads: vec![(thread.to_owned(), newest.to_owned())],
            ..Removal::default()
        };
        let removed = target.remove(&removal, run.dry_run).await?;
        if run.dry_run {
            // The windows deleted nothing: the thread's count, as the planner counts a
            // thread that goes whole, is all of it (every checkpoint counted already).
            tally.writes_deleted = removed.writes;
            tally.blobs_deleted = removed.blobs;
            tally.bytes_freed = removed.bytes;
        } else {
            tally.checkpoints_deleted += removed.checkpoints;
            tally.writes_deleted += removed.writes;
            tally.blobs_deleted += removed.blobs;
            tally.bytes_freed += removed.bytes;
        }
        tally.threads_deleted = 1;
        tally.threads_changed = 1;
        tally.unreadable = 0;
    }
    Ok(Some((tally, read)))
}

/// A long namespace's blobs decided a window at a time (where the store keeps them
/// apart: Postgres), to what the planner decides from the whole namespace (a blob at
/// a version the checkpoints that go reference, and none that stays): its references,
/// read once ([`BlobRefs`]: each version with the oldest checkpoint referencing it),
/// and each version met in the windows read so far, with whether a checkpoint that
/// stays references it. Once the windows have come down to the oldest checkpoint
/// referencing a version, every checkpoint that did has been read and decided.
///
/// Without it each window's blob step read every remaining checkpoint of the
/// namespace for the versions they reference (no index reaches into the JSONB), and a
/// thread's prune took time in the square of its length: one thread of 100,000
/// checkpoints, `prune --keep-latest 1`, 38.8 s, 390 ms for the first window's blobs;
/// with it 3.6 s (release build, PG 15, 2026-12-06). Only the versions a checkpoint
/// does not hold in its row are references (a primitive value is kept in the
/// checkpoint's `channel_values`, never in a blob), on both sides: the windows' and the
/// references' read (a version met and never in the references would be held to the
/// namespace's end). For the fixture's thread (three channels, one of them in blobs)
/// the references of 1,000,000 checkpoints read in 6.0 s against 16.6 s when every
/// channel's versions were grouped (statement times, PG 15, 2026-12-06). A live
/// writer's checkpoint newer than the references read keeps what it
/// references (the delete looks at the ids above [`BlobRefs::newest`] only, the end of
/// the primary key's index): a checkpoint LangGraph writes takes a uuid6 id newer than
/// its parent's, as the windows already need.
///
/// Held: the versions met whose oldest reference is still below the windows read
/// (those of the checkpoints read, across the window's edge, and a version a fork
/// carries down from far back), and those of checkpoints a live writer added after the
/// references were read, until the namespace ends.
struct BlobPlan {
    refs: BlobRefs,
    met: HashMap<(Box<str>, Box<str>), bool>,
}

impl BlobPlan {
    fn new(refs: BlobRefs) -> Self {
        BlobPlan {
            refs,
            met: HashMap::new(),
        }
    }

    /// The versions of a checkpoint read and decided (`kept`: it stays).
    fn see(&mut self, versions: &Versions, kept: bool) {
        for (channel, version) in versions.iter() {
            *self
                .met
                .entry((channel.clone(), version.clone()))
                .or_insert(false) |= kept;
        }
    }

    /// The blobs whose oldest reference is at or above `oldest` (the window's oldest
    /// id: every reference to them has been read) that no checkpoint which stays
    /// references. A version no checkpoint read references (its checkpoints deleted
    /// meanwhile) is left as it is.
    fn decided(&mut self, thread: &str, ns: &str, oldest: &str) -> Result<Blobs> {
        let mut blobs = Blobs {
            thread: thread.to_owned(),
            ns: ns.to_owned(),
            newest: self.refs.newest.clone(),
            ..Blobs::default()
        };
        for (channel, version, _, stored) in self.refs.refs.take_while(|r| *r.2 >= *oldest)? {
            let key = (channel.into_boxed_str(), version.into_boxed_str());
            if self.met.remove(&key) == Some(false) && stored {
                blobs.channels.push(key.0.into());
                blobs.versions.push(key.1.into());
            }
        }
        Ok(blobs)
    }
}

/// What the walks that reach a checkpoint ask of it.
#[derive(Default)]
struct Need {
    /// A delta walk reaches it: the channels still looked for (`None`: unknown, the
    /// walk goes to the root); `Some(empty)` is never held (such a walk has ended).
    walk: Option<Option<HashSet<String>>>,
    /// A kept checkpoint before v4 reads its pending sends from it.
    sends: bool,
}

impl Need {
    /// Adds a walk looking for `channels` (`None`: unknown).
    fn add_walk(&mut self, channels: Option<HashSet<String>>) {
        self.walk = Some(match (self.walk.take(), channels) {
            (Some(Some(mut held)), Some(more)) => {
                held.extend(more);
                Some(held)
            }
            (None, given) => given,
            // Either unknown: the root.
            _ => None,
        });
    }
}

/// One namespace of a long thread, read newest first.
pub(crate) struct Namespace<'r> {
    rules: &'r Rules,
    thread: String,
    ns: String,
    /// Checkpoints read so far.
    rank: usize,
    /// The id of the last checkpoint read (the next must be below it).
    last: Option<Box<str>>,
    /// What the walks ask of the ids below, by id.
    frontier: BTreeMap<Box<str>, Need>,
    /// Kept checkpoints by their parent's id (not yet read): orphaned if it goes.
    children: BTreeMap<Box<str>, Vec<Box<str>>>,
    /// Every checkpoint goes (the thread goes whole).
    all_go: bool,
}

/// A checkpoint came out of order: its id not below the one before, or its parent's
/// not below its own. The windows before stand; the rest of the thread is left.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct OutOfOrder(pub(crate) String);

impl<'r> Namespace<'r> {
    pub(crate) fn new(rules: &'r Rules, thread: &str, ns: &str) -> Self {
        Namespace {
            rules,
            thread: thread.to_owned(),
            ns: ns.to_owned(),
            rank: 0,
            last: None,
            frontier: BTreeMap::new(),
            children: BTreeMap::new(),
            all_go: false,
        }
    }

    /// Decides `c`, the next checkpoint of the namespace newest first, adding it to
    /// `removal` when it goes (and its kept children whose parent it is to the
    /// orphaned); counts it in `tally`.
    pub(crate) fn push(
        &mut self,
        c: &Cp,
        removal: &mut Removal,
        tally: &mut Tally,
    ) -> Result<bool, OutOfOrder> {
        let id: &str = &c.id;
        if self.last.as_deref().is_some_and(|last| id >= last)
            || c.parent.as_deref().is_some_and(|p| p >= id)
        {
            return Err(OutOfOrder(id.to_owned()));
        }
        // Walks and children waiting for an id above this one: it is not stored.
        self.drop_above(id);
        let rules = self.rules;
        let mut base = !self.all_go && rules.keep_latest.is_none_or(|k| self.rank < k);
        if let Some(d) = rules.older_than.filter(|_| !self.all_go) {
            base &= id_time(id).is_none_or(|t| t >= d);
            if self.rank == 0 && !base {
                base = true;
                tally.kept.newest += 1;
            }
        }
        if !self.all_go && !rules.labels.is_empty() && c.labeled && !base {
            base = true;
            tally.kept.labeled += 1;
        }
        let need = self.frontier.remove(id).unwrap_or_default();
        let needed = need.walk.is_some() || (need.sends && c.has_sends);
        let kept = base || needed;
        if needed && !base {
            tally.kept.delta_ancestors += 1;
        }
        // The walks go on to the parent: one reaching here, with what this one stores
        // no longer looked for, and one from here when a rule keeps it.
        if let Some(parent) = c.parent.as_deref() {
            let mut walks: Vec<Option<HashSet<String>>> = Vec::new();
            if let Some(mut looked) = need.walk {
                if let (Some(rem), Some(stored)) = (looked.as_mut(), c.stored.as_deref()) {
                    rem.retain(|ch| !stored.contains(ch));
                }
                walks.push(looked);
            }
            if base {
                walks.push(c.looked_for());
            }
            for looked in walks {
                if looked.as_ref().is_none_or(|rem| !rem.is_empty()) {
                    self.frontier
                        .entry(parent.into())
                        .or_default()
                        .add_walk(looked);
                }
            }
            if base && c.reads_parent_sends {
                self.frontier.entry(parent.into()).or_default().sends = true;
            }
        }
        let orphans = self.children.remove(id).unwrap_or_default();
        if kept {
            tally.checkpoints_kept += 1;
            if let Some(parent) = c.parent.as_deref() {
                self.children
                    .entry(parent.into())
                    .or_default()
                    .push(id.into());
            }
        } else {
            for child in orphans {
                removal.orphaned.push(&self.thread, &self.ns, &child);
                removal.orphaned_parents.push(id.to_owned());
            }
            removal.doomed.push(&self.thread, &self.ns, id);
            tally.checkpoints_deleted += 1;
        }
        if c.stored.is_none() && !self.all_go {
            tally.unreadable += 1;
        }
        self.rank += 1;
        self.last = Some(id.into());
        Ok(kept)
    }

    /// Lets go of what waits for ids above `id` (never to be read: not stored).
    fn drop_above(&mut self, id: &str) {
        let above = |map_first: Option<&str>| map_first.is_some_and(|k| k > id);
        while above(self.frontier.last_key_value().map(|(k, _)| &**k)) {
            self.frontier.pop_last();
        }
        while above(self.children.last_key_value().map(|(k, _)| &**k)) {
            self.children.pop_last();
        }
    }

    /// What a window's removal lists, for a dry run's listing.
    pub(crate) fn listed(&self, removal: &Removal) -> Option<PlannedThread> {
        if removal.doomed.ids.is_empty() {
            return None;
        }
        Some(PlannedThread {
            thread_id: self.thread.clone(),
            whole: false,
            checkpoints: removal
                .doomed
                .namespaces_and_ids_from(0)
                .map(|(n, i)| (n.to_owned(), i.to_owned()))
                .collect(),
        })
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeSet;

    use super::{Namespace, OutOfOrder};
    use crate::saver::retention::Removal;
    use crate::store::plan::{plan_thread, Cp, Loaded, Rules, Tally};

    /// xorshift64: the same threads every run.
    struct Rng(u64);
    impl Rng {
        fn next(&mut self) -> u64 {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            self.0
        }
        fn below(&mut self, n: u64) -> u64 {
            self.next() % n
        }
        fn channels(&mut self) -> Option<Vec<String>> {
            if self.below(8) == 0 {
                return None;
            }
            Some(
                ["a", "b", "c"]
                    .into_iter()
                    .filter(|_| self.below(2) == 0)
                    .map(str::to_owned)
                    .collect(),
            )
        }
    }

    /// A uuid6 of Unix second `secs` (the time high bits first, as Python's uuid6).
    fn uuid6(secs: u64, seq: u64) -> String {
        let ticks = secs * 10_000_000 + 0x01B2_1DD2_1381_4000;
        format!(
            "{:08x}-{:04x}-6{:03x}-8000-{:012x}",
            ticks >> 28,
            (ticks >> 12) & 0xFFFF,
            ticks & 0xFFF,
            seq
        )
    }

    /// A namespace of `n` checkpoints, ids ascending in time, each with a parent
    /// (mostly the one before, sometimes an older one: a fork; sometimes none or one
    /// not stored), what it stores and its delta channels (either unknown at times),
    /// labels, and pending sends.
    fn namespace(rng: &mut Rng, n: usize) -> Vec<Cp> {
        let mut ids: Vec<String> = Vec::new();
        let mut cps = Vec::new();
        for i in 0..n {
            let id = uuid6(1_000 + 10 * i as u64, rng.below(1 << 40));
            let parent = match (rng.below(10), ids.len()) {
                (_, 0) => None,
                (0, _) => None,
                (1, _) => Some(uuid6(1_000 + 10 * i as u64 - 5, 7)), // not stored
                (2 | 3, len) => ids.get(rng.below(len as u64) as usize).cloned(),
                (_, len) => ids.get(len - 1).cloned(),
            };
            let mut c = Cp::for_test(&id, parent, rng.channels(), rng.channels());
            c.labeled = rng.below(9) == 0;
            c.reads_parent_sends = rng.below(7) == 0;
            c.has_sends = rng.below(3) == 0;
            ids.push(id);
            cps.push(c);
        }
        cps
    }

    fn rules(rng: &mut Rng) -> Rules {
        Rules {
            keep_latest: [None, Some(1), Some(2), Some(5)][rng.below(4) as usize],
            older_than: [None, Some(1_000 + 10 * rng.below(60) as i64)][rng.below(2) as usize],
            labels: if rng.below(2) == 0 {
                vec!["pin".to_owned()]
            } else {
                Vec::new()
            },
            ..Rules::default()
        }
    }

    type Planned = (BTreeSet<String>, BTreeSet<(String, String)>, Vec<u64>);

    fn summary(removal: &Removal, t: &Tally) -> Planned {
        let doomed = removal.doomed.ids.iter().cloned().collect();
        let orphaned = removal
            .orphaned
            .ids
            .iter()
            .cloned()
            .zip(removal.orphaned_parents.iter().cloned())
            .collect();
        let k = &t.kept;
        let counts = vec![
            t.checkpoints_deleted,
            t.checkpoints_kept,
            t.unreadable,
            k.labeled,
            k.newest,
            k.delta_ancestors,
        ];
        (doomed, orphaned, counts)
    }

    /// Read newest first a window at a time, a namespace plans to what the planner
    /// makes of it whole: the same checkpoints go, the same are orphaned, the same
    /// counts. Expected values are the whole planner's (`plan_thread`), on 400 random
    /// namespaces under random rules (latest N, an age, labels; forks, parents not
    /// stored, unreadable rows, DeltaChannels, sends read from a parent).
    #[test]
    fn a_namespace_read_newest_first_is_planned_as_whole() {
        let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
        let mut changed = 0;
        for round in 0..400 {
            let n = 1 + rng.below(60) as usize;
            let cps = namespace(&mut rng, n);
            let rules = rules(&mut rng);
            let mut loaded = Loaded::default();
            // As read, with the labels set here (`Loaded::push` reads them from metadata).
            loaded.cps.extend(cps.iter().cloned());
            let (mut whole, mut whole_tally) = (Removal::default(), Tally::default());
            plan_thread("t", &loaded, &rules, (&mut whole, &mut whole_tally), false);
            let (mut streamed, mut tally) = (Removal::default(), Tally::default());
            let mut ns = Namespace::new(&rules, "t", "");
            for c in cps.iter().rev() {
                ns.push(c, &mut streamed, &mut tally).expect("in order");
            }
            assert_eq!(
                summary(&streamed, &tally),
                summary(&whole, &whole_tally),
                "round {round}, rules {rules:?}"
            );
            changed += usize::from(!whole.doomed.ids.is_empty());
        }
        // The rounds drop something most of the time (or the comparison says little).
        assert!(changed > 200, "{changed}");
    }

    #[test]
    fn a_checkpoint_out_of_order_stops_the_namespace() {
        let rules = Rules {
            keep_latest: Some(1),
            ..Rules::default()
        };
        let (mut removal, mut tally) = (Removal::default(), Tally::default());
        let mut ns = Namespace::new(&rules, "t", "");
        let newer = Cp::for_test("b", Some("a".to_owned()), None, None);
        ns.push(&newer, &mut removal, &mut tally).expect("first");
        let again = Cp::for_test("c", None, None, None);
        assert_eq!(
            ns.push(&again, &mut removal, &mut tally),
            Err(OutOfOrder("c".to_owned()))
        );
        let mut ns = Namespace::new(&rules, "t", "");
        let forward = Cp::for_test("a", Some("b".to_owned()), None, None);
        assert_eq!(
            ns.push(&forward, &mut removal, &mut tally),
            Err(OutOfOrder("a".to_owned()))
        );
    }
}
