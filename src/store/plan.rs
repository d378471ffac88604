//! The retention planner `prune` and `retain` share: one thread's checkpoints and a set
//! of [`Rules`] (times resolved to Unix seconds) in, what goes out — added to a
//! [`Removal`] the savers' retention code deletes — and why the rest stayed, counted in
//! a [`Tally`].
//!
//! Per thread, in this order:
//! 1. a thread pinned (its id matches a glob of [`Rules::pinned_threads`], or its latest
//!    metadata holds a key of [`Rules::pinned_metadata`] with a value other than `false`
//!    or `null`) keeps everything;
//! 2. [`Rules::override_key`] in the latest metadata (an object of rules, as the policy's
//!    `[rules]` section writes them) replaces those rules for this thread; an override
//!    that does not parse leaves the thread as it is and is reported;
//! 3. a thread idle since before [`Rules::idle_before`], or whose oldest checkpoint is
//!    from before [`Rules::first_before`], has expired: it goes whole — unless it is
//!    waiting at an interrupt (a `__interrupt__` pending write on the latest checkpoint
//!    of a namespace) and [`Rules::keep_interrupted`] is set, or, idle with
//!    [`Rules::idle_keep_latest`], it keeps the latest checkpoint of each namespace;
//! 4. otherwise the checkpoint rules: the latest N per namespace, checkpoints older than
//!    [`Rules::older_than`] (the latest of each namespace stays);
//! 5. checkpoints whose metadata holds a key of [`Rules::labels`] stay, and so does every
//!    ancestor a kept checkpoint needs to rebuild its DeltaChannels (the savers' walk,
//!    `saver::delta`); a checkpoint that could not be read keeps its whole chain. On
//!    Postgres a checkpoint before v4 keeps the parent its pending sends are read from.

use std::borrow::Cow;
use std::collections::{BTreeMap, BTreeSet, HashSet};

use serde::Serialize;
use serde_json::Value as Json;

use super::policy::RuleSet;
use crate::saver::delta::{needed_ancestors, ChainNode};
use crate::saver::retention::Removal;
use crate::saver::CheckpointMetadata;

/// One checkpoint of a thread, with what the planner and the delta walk need (the
/// walk's [`ChainNode`] is made from it when asked, [`Cp::node`]). Of its metadata,
/// only whether it holds a label and its DeltaChannels ([`Loaded::push`] keeps the
/// latest checkpoint's whole, for the rules that read it). Held once per checkpoint
/// of the thread being planned, so kept small: boxed text and lists (88 bytes, where
/// `String`s, a `Vec` and a `HashSet` took 152). A dry-run `prune --keep-latest 1` of
/// one thread of 100,000 checkpoints peaked at 101 MiB with every checkpoint's parsed
/// metadata and the planner's copies of its ids, 58 MiB without them, and 46 MiB
/// with this layout and the planner's look-ups by binary search (40 MiB once the
/// removal held each run's thread and namespace once; 2026-12-05, `/usr/bin/time`,
/// release build).
#[derive(Clone)]
pub(crate) struct Cp {
    pub(crate) ns: Box<str>,
    pub(crate) id: Box<str>,
    /// The stored parent id (`None`: none, or empty).
    pub(crate) parent: Option<Box<str>>,
    /// The channels this checkpoint stores a value for; `None` when its checkpoint row
    /// cannot be read.
    pub(crate) stored: Option<Box<[String]>>,
    /// The channels of its metadata's `counters_since_delta_snapshot`; `None` when its
    /// metadata cannot be read.
    delta_channels: Option<Box<[String]>>,
    /// Its metadata holds a key of [`Rules::labels`] (set by [`Loaded::push`]).
    pub(crate) labeled: bool,
    /// A checkpoint before v4 with a parent reads its pending sends from the parent's
    /// `__pregel_tasks` writes (Python's `_migrate_pending_sends`).
    pub(crate) reads_parent_sends: bool,
    /// Has `__pregel_tasks` writes.
    pub(crate) has_sends: bool,
    /// Has a `__interrupt__` pending write (looked for only when a rule needs it).
    pub(crate) interrupted: bool,
}

impl Cp {
    /// A checkpoint read from the store: its namespace, id, stored parent id, the
    /// channels it stores (`None`: its row cannot be read) and its metadata (`None`:
    /// none, or unreadable). The flags start unset.
    pub(crate) fn new(
        ns: String,
        id: String,
        parent: Option<String>,
        stored: Option<Vec<String>>,
        metadata: Option<&CheckpointMetadata>,
    ) -> Self {
        Cp {
            ns: ns.into_boxed_str(),
            id: id.into_boxed_str(),
            parent: parent.filter(|p| !p.is_empty()).map(String::into_boxed_str),
            stored: stored.map(Vec::into_boxed_slice),
            delta_channels: metadata.map(|m| {
                m.counters_since_delta_snapshot()
                    .into_keys()
                    .collect::<Vec<_>>()
                    .into_boxed_slice()
            }),
            labeled: false,
            reads_parent_sends: false,
            has_sends: false,
            interrupted: false,
        }
    }

    /// A checkpoint of `id` with `parent`, the channels it stores and its delta
    /// channels (`None`: unknown), its flags unset.
    #[cfg(test)]
    pub(crate) fn for_test(
        id: &str,
        parent: Option<String>,
        stored: Option<Vec<String>>,
        delta_channels: Option<Vec<String>>,
    ) -> Self {
        Cp {
            ns: "".into(),
            id: id.into(),
            parent: parent.map(String::into_boxed_str),
            stored: stored.map(Vec::into_boxed_slice),
            delta_channels: delta_channels.map(Vec::into_boxed_slice),
            labeled: false,
            reads_parent_sends: false,
            has_sends: false,
            interrupted: false,
        }
    }

    /// What a delta walk from this checkpoint looks for in its ancestors: the delta
    /// channels it stores no value for (`None`: unknown, the walk goes to the root).
    pub(crate) fn looked_for(&self) -> Option<HashSet<String>> {
        let (channels, stored) = (self.delta_channels.as_ref()?, self.stored.as_ref()?);
        Some(
            channels
                .iter()
                .filter(|ch| !stored.contains(ch))
                .cloned()
                .collect(),
        )
    }

    /// The checkpoint as the delta walk sees it.
    fn node(&self) -> ChainNode {
        ChainNode {
            parent: self.parent.as_deref().map(str::to_owned),
            stored: self
                .stored
                .as_ref()
                .map(|s| s.iter().cloned().collect::<HashSet<String>>()),
            delta_channels: self.delta_channels.as_ref().map(|d| d.to_vec()),
        }
    }
}

/// What the planner reads of the metadata of a page's checkpoints ([`Rules::reads`]).
#[derive(Clone, Debug, Default)]
pub(crate) struct MetaReads {
    /// Whether a checkpoint's metadata holds one of these keys.
    labels: Vec<String>,
    /// The latest checkpoint's whole metadata (a selection, pins, an override).
    latest: bool,
}

/// One thread's checkpoints as the planner reads them, pushed in (namespace, id) order.
#[derive(Default)]
pub(crate) struct Loaded {
    pub(crate) cps: Vec<Cp>,
    /// The latest checkpoint so far (the root namespace's, else any namespace's, as
    /// [`plan_thread`] takes it): whether it is the root's, its index in `cps`, and its
    /// metadata when [`MetaReads`] asks for it.
    latest: Option<(bool, usize, Option<CheckpointMetadata>)>,
}

impl Loaded {
    /// Adds `cp` (its `labeled` unset), whose metadata is `metadata`: what `reads`
    /// asks of it is kept, the rest dropped.
    pub(crate) fn push(
        &mut self,
        reads: &MetaReads,
        mut cp: Cp,
        metadata: Option<CheckpointMetadata>,
    ) {
        cp.labeled = labeled(metadata.as_ref(), &reads.labels);
        let root = cp.ns.is_empty();
        let later = match &self.latest {
            None => true,
            // The last of equal ids, as `Iterator::max_by` takes it.
            Some((held_root, at, _)) => {
                (root && !held_root)
                    || (root == *held_root && self.cps.get(*at).is_none_or(|held| cp.id >= held.id))
            }
        };
        if later {
            let metadata = if reads.latest { metadata } else { None };
            self.latest = Some((root, self.cps.len(), metadata));
        }
        self.cps.push(cp);
    }

    /// The metadata of the thread's latest checkpoint, when [`MetaReads`] asked for it.
    fn latest_metadata(&self) -> Option<&CheckpointMetadata> {
        self.latest.as_ref()?.2.as_ref()
    }
}

/// Whether `metadata` holds one of `labels` (a key with a value other than `false` or
/// `null`).
pub(crate) fn labeled(metadata: Option<&CheckpointMetadata>, labels: &[String]) -> bool {
    !labels.is_empty() && holds_any(json_of(metadata).as_ref(), labels)
}

/// A checkpoint's metadata from its stored JSON bytes (`None`: none, or unreadable).
pub(crate) fn metadata_of(bytes: Option<&[u8]>) -> Option<CheckpointMetadata> {
    let v = crate::json::parse(bytes?, 1_000).ok()?;
    CheckpointMetadata::from_value(&v).ok()
}

/// What the rules do to a thread, known before its rows are read ([`Rules::fate`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Fate {
    /// Its rows decide: read them.
    Read,
    /// Nothing of it goes.
    Untouched,
    /// It goes whole.
    Whole,
}

/// The rules of one run, times as Unix seconds.
#[derive(Clone, Debug, Default)]
pub(crate) struct Rules {
    pub(crate) keep_latest: Option<usize>,
    pub(crate) older_than: Option<i64>,
    pub(crate) idle_before: Option<i64>,
    pub(crate) idle_keep_latest: bool,
    pub(crate) first_before: Option<i64>,
    pub(crate) labels: Vec<String>,
    pub(crate) pinned_metadata: Vec<String>,
    pub(crate) pinned_threads: Vec<String>,
    pub(crate) keep_interrupted: bool,
    pub(crate) override_key: Option<String>,
    /// Only threads whose latest metadata holds each of these (prune's selection).
    pub(crate) metadata: Vec<(String, Json)>,
    /// The time durations are counted back from.
    pub(crate) now: i64,
}

impl Rules {
    /// `set`'s rules resolved against [`Rules::now`], over these.
    pub(crate) fn with(&self, set: &RuleSet) -> Rules {
        let back = |secs: u64| {
            self.now
                .saturating_sub(i64::try_from(secs).unwrap_or(i64::MAX))
        };
        let mut r = self.clone();
        if let Some(n) = set.keep_latest {
            r.keep_latest = Some(usize::try_from(n).unwrap_or(usize::MAX).max(1));
        }
        if let Some(s) = set.max_age {
            r.older_than = Some(back(s));
        }
        if let Some(s) = set.idle_ttl {
            r.idle_before = Some(back(s));
        }
        if let Some(keep) = set.idle_keep_latest {
            r.idle_keep_latest = keep;
        }
        if let Some(s) = set.hard_ttl {
            r.first_before = Some(back(s));
        }
        r
    }

    /// What the planner reads of the checkpoints' metadata under these rules (an
    /// override's rules have no labels of their own).
    pub(crate) fn reads(&self) -> MetaReads {
        MetaReads {
            labels: self.labels.clone(),
            latest: self.reads_latest(),
        }
    }

    /// Whether a rule reads a thread's latest metadata (a selection, pins, an override).
    pub(crate) fn reads_latest(&self) -> bool {
        !self.metadata.is_empty() || !self.pinned_metadata.is_empty() || self.override_key.is_some()
    }

    /// Whether a rule looks for interrupts (only then are they read).
    pub(crate) fn wants_interrupts(&self) -> bool {
        self.keep_interrupted
            && (self.idle_before.is_some()
                || self.first_before.is_some()
                || self.override_key.is_some())
    }

    /// What these rules do to a thread, when its checkpoint count and its bytewise
    /// oldest and newest ids tell, without reading its rows. Only when `uniform` (every
    /// id of the thread has a uuid6's shape, hyphens and version where a uuid6 has them,
    /// and no uppercase letter: bytewise order is then time order) and no rule needs a
    /// thread's metadata or id to decide or to count it (a metadata selection, pins, an
    /// override); else [`Fate::Read`].
    pub(crate) fn fate(&self, count: u64, oldest: &str, newest: &str, uniform: bool) -> Fate {
        if !uniform
            || !self.metadata.is_empty()
            || !self.pinned_metadata.is_empty()
            || !self.pinned_threads.is_empty()
            || self.override_key.is_some()
        {
            return Fate::Read;
        }
        let (Some(first), Some(last)) = (id_time(oldest), id_time(newest)) else {
            return Fate::Read;
        };
        let idle = self.idle_before.is_some_and(|d| last < d);
        let expired = self.first_before.is_some_and(|d| first < d);
        // An expired thread goes whole unless something keeps a checkpoint of it: an
        // interrupt, idle-keeps-latest, a label (all read from its rows).
        if (idle || expired)
            && !self.keep_interrupted
            && (expired || !self.idle_keep_latest)
            && self.labels.is_empty()
        {
            return Fate::Whole;
        }
        let over_latest = self
            .keep_latest
            .is_some_and(|k| count > u64::try_from(k).unwrap_or(u64::MAX));
        // The latest checkpoint of each namespace stays: a thread of one checkpoint keeps it.
        let aged = self.older_than.is_some_and(|d| first < d && count > 1);
        if over_latest || idle || expired || aged {
            Fate::Read
        } else {
            Fate::Untouched
        }
    }

    /// Whether a rule can delete a thread whole.
    pub(crate) fn deletes_threads(&self) -> bool {
        self.idle_before.is_some() || self.first_before.is_some() || self.override_key.is_some()
    }
}

/// What a run did or would do, and why what stayed stayed.
#[derive(Clone, Debug, Default, Serialize, PartialEq)]
#[non_exhaustive]
pub struct KeptByRule {
    /// Checkpoints a rule would drop, kept because their metadata holds a label key.
    pub labeled: u64,
    /// Checkpoints older than the age rule, kept as the latest of their namespace.
    pub newest: u64,
    /// Checkpoints a rule would drop, kept as ancestors of a kept checkpoint (its
    /// DeltaChannels, or a chain that could not be read).
    pub delta_ancestors: u64,
    /// Threads left whole because they are pinned (thread id pattern or metadata key).
    pub pinned_threads: u64,
    /// Expired threads kept (not deleted whole) because they wait at an interrupt.
    pub interrupted_threads: u64,
    /// Threads whose metadata overrides the rules.
    pub overridden_threads: u64,
}

/// The counts the planner and the deletes add up, page by page.
#[derive(Clone, Debug, Default)]
pub(crate) struct Tally {
    pub(crate) threads: u64,
    pub(crate) threads_deleted: u64,
    /// Threads that lost something (the per-sweep cap counts these).
    pub(crate) threads_changed: u64,
    pub(crate) checkpoints_deleted: u64,
    pub(crate) checkpoints_kept: u64,
    pub(crate) unreadable: u64,
    pub(crate) writes_deleted: u64,
    pub(crate) blobs_deleted: u64,
    pub(crate) bytes_freed: u64,
    /// Connections beyond the first the server refused for want of a slot
    /// ([`is_no_slot`](super::retry::is_no_slot)): their work was done on the others.
    pub(crate) connections_refused: u64,
    pub(crate) kept: KeptByRule,
    pub(crate) errors: Vec<String>,
}

impl Tally {
    pub(crate) fn add(&mut self, o: &Tally) {
        self.threads += o.threads;
        self.threads_deleted += o.threads_deleted;
        self.threads_changed += o.threads_changed;
        self.checkpoints_deleted += o.checkpoints_deleted;
        self.checkpoints_kept += o.checkpoints_kept;
        self.unreadable += o.unreadable;
        self.writes_deleted += o.writes_deleted;
        self.blobs_deleted += o.blobs_deleted;
        self.bytes_freed += o.bytes_freed;
        self.connections_refused += o.connections_refused;
        let (k, ok) = (&mut self.kept, &o.kept);
        k.labeled += ok.labeled;
        k.newest += ok.newest;
        k.delta_ancestors += ok.delta_ancestors;
        k.pinned_threads += ok.pinned_threads;
        k.interrupted_threads += ok.interrupted_threads;
        k.overridden_threads += ok.overridden_threads;
        self.errors.extend(o.errors.iter().cloned());
    }
}

/// A dry run's listing: called with each thread's plan.
pub(crate) type PlanFn = dyn Fn(&PlannedThread) + Send + Sync;

/// One thread's plan, for a dry run's listing: the checkpoints that go, as
/// `(namespace, id)`, and whether the thread goes whole.
#[derive(Clone, Debug, Serialize, PartialEq)]
#[non_exhaustive]
pub struct PlannedThread {
    /// The thread.
    pub thread_id: String,
    /// It goes whole (every checkpoint and write).
    pub whole: bool,
    /// `(checkpoint_ns, checkpoint_id)` of each checkpoint that goes.
    pub checkpoints: Vec<(String, String)>,
}

/// Metadata as JSON (the view Python's metadata reads as).
fn json_of(md: Option<&CheckpointMetadata>) -> Option<Json> {
    crate::view::to_json(&md?.to_value()).ok()
}

/// Whether `json` holds one of `keys` with a value other than `false` or `null`.
fn holds_any(json: Option<&Json>, keys: &[String]) -> bool {
    let Some(json) = json else { return false };
    keys.iter().any(|k| {
        json.get(k)
            .is_some_and(|v| !v.is_null() && *v != Json::Bool(false))
    })
}

/// Shell-style `pattern` (`*` any run, `?` one character) matches `text` whole.
pub(crate) fn glob(pattern: &str, text: &str) -> bool {
    let (p, t): (Vec<char>, Vec<char>) = (pattern.chars().collect(), text.chars().collect());
    let (mut pi, mut ti) = (0, 0);
    let mut star: Option<(usize, usize)> = None;
    while ti < t.len() {
        match p.get(pi) {
            Some('*') => {
                star = Some((pi, ti));
                pi += 1;
            }
            Some(c) if *c == '?' || Some(c) == t.get(ti) => {
                pi += 1;
                ti += 1;
            }
            _ => match star {
                Some((sp, st)) => {
                    pi = sp + 1;
                    ti = st + 1;
                    star = Some((sp, st + 1));
                }
                None => return false,
            },
        }
    }
    p.get(pi..)
        .is_some_and(|rest| rest.iter().all(|c| *c == '*'))
}

/// The Unix time (seconds) in a uuid6 checkpoint id, `None` if it is not one.
pub fn id_time(id: &str) -> Option<i64> {
    let hex: String = id.chars().filter(|c| *c != '-').collect();
    if hex.len() != 32 || hex.get(12..13) != Some("6") {
        return None;
    }
    let high = u64::from_str_radix(hex.get(0..8)?, 16).ok()?;
    let mid = u64::from_str_radix(hex.get(8..12)?, 16).ok()?;
    let low = u64::from_str_radix(hex.get(13..16)?, 16).ok()?;
    let ticks = (high << 28) | (mid << 12) | low;
    let unix = ticks.checked_sub(0x01B2_1DD2_1381_4000)?;
    i64::try_from(unix / 10_000_000).ok()
}

/// The rules `thread` (`count` checkpoints) is decided by, from `rules` and the
/// metadata of its latest checkpoint (of the root namespace, or of any; `None`: none,
/// or none read): `None` when the thread is left as it is, unread further: not
/// selected (not counted either), pinned, or overridden with what is not a set of rules
/// (counted, every checkpoint kept, the error in the tally's). Counts the thread.
pub(crate) fn by_latest<'r>(
    thread: &str,
    rules: &'r Rules,
    latest: Option<&CheckpointMetadata>,
    count: u64,
    tally: &mut Tally,
) -> Option<Cow<'r, Rules>> {
    let latest_json = json_of(latest);
    let selected = rules.metadata.is_empty()
        || latest_json
            .as_ref()
            .is_some_and(|j| rules.metadata.iter().all(|(k, v)| j.get(k) == Some(v)));
    if !selected {
        return None;
    }
    tally.threads += 1;
    let pinned = rules.pinned_threads.iter().any(|g| glob(g, thread))
        || holds_any(latest_json.as_ref(), &rules.pinned_metadata);
    if pinned {
        tally.kept.pinned_threads += 1;
        tally.checkpoints_kept += count;
        return None;
    }
    match rules
        .override_key
        .as_ref()
        .and_then(|k| Some((k, latest_json.as_ref()?.get(k)?)))
    {
        Some((key, value)) => match RuleSet::from_override(value) {
            Ok(set) => {
                tally.kept.overridden_threads += 1;
                Some(Cow::Owned(rules.with(&set)))
            }
            Err(reason) => {
                tally.errors.push(format!(
                    "thread {thread:?}: its metadata's {key:?} is not a set of rules ({reason}); \
                     the thread was left as it is"
                ));
                tally.checkpoints_kept += count;
                None
            }
        },
        None => Some(Cow::Borrowed(rules)),
    }
}

/// Decides one thread by `rules` and adds what goes to `removal`; returns the thread's
/// plan when something goes and `listing` asks for it (a dry run's listing).
pub(crate) fn plan_thread(
    thread: &str,
    loaded: &Loaded,
    rules: &Rules,
    (removal, tally): (&mut Removal, &mut Tally),
    listing: bool,
) -> Option<PlannedThread> {
    let cps = &loaded.cps;
    if cps.is_empty() {
        return None;
    }
    let count = cps.len() as u64;
    let rules = &*by_latest(thread, rules, loaded.latest_metadata(), count, tally)?;
    let times = || cps.iter().filter_map(|c| id_time(&c.id));
    let idle = rules
        .idle_before
        .is_some_and(|d| times().max().is_some_and(|t| t < d));
    let too_old = rules
        .first_before
        .is_some_and(|d| times().min().is_some_and(|t| t < d));
    let mut by_ns: BTreeMap<&str, Vec<&Cp>> = BTreeMap::new();
    for c in cps {
        by_ns.entry(&*c.ns).or_default().push(c);
    }
    let mut keep_latest = rules.keep_latest;
    let mut whole = false;
    if idle || too_old {
        let waiting = by_ns.values().any(|list| {
            list.iter()
                .max_by(|a, b| a.id.cmp(&b.id))
                .is_some_and(|c| c.interrupted)
        });
        if waiting && rules.keep_interrupted {
            tally.kept.interrupted_threads += 1;
        } else if too_old || !rules.idle_keep_latest {
            whole = true;
        } else {
            keep_latest = Some(1);
        }
    }
    let before = removal.doomed.ids.len();
    let mut kept_any = false;
    for (ns, mut list) in by_ns {
        // In bytewise id order (a Postgres store sorts by its collation), which also
        // finds a checkpoint by id: a thread of 100,000 checkpoints is neither copied
        // nor indexed again (a set of its ids and a map by id took 7 MiB of the 58).
        list.sort_unstable_by(|a, b| a.id.cmp(&b.id));
        let by_id = |id: &str| {
            list.binary_search_by(|c| (*c.id).cmp(id))
                .ok()
                .and_then(|at| list.get(at).copied())
        };
        let all = || list.iter().map(|c| &*c.id);
        let mut keep: BTreeSet<&str> = BTreeSet::new();
        if !whole {
            keep = match keep_latest {
                Some(k) => all().rev().take(k).collect(),
                None => all().collect(),
            };
            if let Some(d) = rules.older_than {
                keep.retain(|id| id_time(id).is_none_or(|t| t >= d));
                if let Some(last) = all().next_back() {
                    if keep.insert(last) {
                        tally.kept.newest += 1;
                    }
                }
            }
        }
        if !rules.labels.is_empty() {
            for c in &list {
                if c.labeled && keep.insert(&*c.id) {
                    tally.kept.labeled += 1;
                }
            }
        }
        let mut needed: BTreeSet<&str> = needed_ancestors(&keep, |id| by_id(id).map(Cp::node))
            .iter()
            .filter_map(|id| by_id(id).map(|c| &*c.id))
            .collect();
        // A checkpoint before v4 reads its pending sends from its parent's writes.
        for id in &keep {
            let Some(c) = by_id(id).filter(|c| c.reads_parent_sends) else {
                continue;
            };
            if let Some(p) = c.parent.as_deref().and_then(by_id).filter(|p| p.has_sends) {
                needed.insert(&*p.id);
            }
        }
        tally.kept.delta_ancestors += needed.iter().filter(|id| !keep.contains(*id)).count() as u64;
        keep.extend(needed);
        kept_any |= !keep.is_empty();
        tally.checkpoints_kept += keep.len() as u64;
        let ids = list.iter().map(|c| (&*c.id, c.parent.as_deref()));
        tally.checkpoints_deleted += removal.add_namespace(thread, ns, ids, &keep);
    }
    let whole = whole && !kept_any;
    if whole {
        tally.threads_deleted += 1;
        if let Some(newest_id) = cps.iter().map(|c| &*c.id).max() {
            removal
                .whole_threads
                .push((thread.to_owned(), newest_id.to_owned()));
        }
    } else {
        tally.unreadable += cps.iter().filter(|c| c.stored.is_none()).count() as u64;
    }
    let d = &removal.doomed;
    if d.ids.len() <= before {
        return None;
    }
    tally.threads_changed += 1;
    if !listing {
        return None;
    }
    let gone: Vec<(String, String)> = d
        .namespaces_and_ids_from(before)
        .map(|(n, i)| (n.to_owned(), i.to_owned()))
        .collect();
    Some(PlannedThread {
        thread_id: thread.to_owned(),
        whole,
        checkpoints: gone,
    })
}

#[cfg(test)]
mod tests {
    use super::{glob, metadata_of, plan_thread, Cp, Loaded, MetaReads, Rules, Tally};
    use crate::saver::retention::Removal;

    fn keep_latest(n: usize) -> Rules {
        Rules {
            keep_latest: Some(n),
            older_than: None,
            idle_before: None,
            idle_keep_latest: false,
            first_before: None,
            labels: Vec::new(),
            pinned_metadata: Vec::new(),
            pinned_threads: Vec::new(),
            keep_interrupted: false,
            override_key: None,
            metadata: Vec::new(),
            now: 0,
        }
    }

    /// A namespace read in an order that is not bytewise (a Postgres store sorts by its
    /// collation, where `-` may weigh nothing) is planned as in bytewise id order: the
    /// latest kept is the bytewise last, and the DeltaChannel chain behind it (each
    /// checkpoint's parent found by id) stays. From first principles: `c` keeps its
    /// delta channel `m` only through `b`, which stores nothing of it, and `a`, which
    /// stores it.
    #[test]
    fn a_thread_read_in_any_order_is_planned_in_id_order() {
        let delta = br#"{"counters_since_delta_snapshot": {"m": [1, 2]}}"#;
        let plain = br#"{"source": "loop"}"#;
        // (id, parent, stored channels, metadata), in the order the rows came.
        type Row<'a> = (&'a str, Option<&'a str>, &'a [&'a str], &'a [u8]);
        let rows: [Row; 4] = [
            ("1f0-c", Some("1f0-b"), &[], delta),
            ("1f0-a", None, &["m"], plain),
            ("1f0-0", None, &["m"], plain),
            ("1f0-b", Some("1f0-a"), &[], delta),
        ];
        let mut loaded = Loaded::default();
        for (id, parent, stored, meta) in rows {
            let metadata = metadata_of(Some(meta));
            let stored = stored.iter().map(|c| (*c).to_owned()).collect();
            let cp = Cp::new(
                String::new(),
                id.to_owned(),
                parent.map(str::to_owned),
                Some(stored),
                metadata.as_ref(),
            );
            loaded.push(&MetaReads::default(), cp, metadata);
        }
        let (mut removal, mut tally) = (Removal::default(), Tally::default());
        plan_thread(
            "t",
            &loaded,
            &keep_latest(1),
            (&mut removal, &mut tally),
            false,
        );
        assert_eq!(removal.doomed.ids, ["1f0-0"]);
        assert_eq!(tally.kept.delta_ancestors, 2);
        assert_eq!(tally.checkpoints_kept, 3);
    }

    /// The planner holds one of these for every checkpoint of the thread it plans.
    #[test]
    fn a_checkpoint_is_held_in_88_bytes() {
        assert!(
            std::mem::size_of::<Cp>() <= 88,
            "{}",
            std::mem::size_of::<Cp>()
        );
    }

    #[test]
    fn globs_match_whole_ids() {
        assert!(glob("vip-*", "vip-42"));
        assert!(glob("vip-*", "vip-"));
        assert!(!glob("vip-*", "a-vip-42"));
        assert!(glob("t-??", "t-42"));
        assert!(!glob("t-??", "t-420"));
        assert!(glob("*-keep-*", "a-keep-b"));
        assert!(glob("*", ""));
        assert!(!glob("a", "ab"));
        assert!(glob("a*b*c", "axxbyyc"));
        assert!(!glob("a*b*c", "axxbyy"));
    }
}
