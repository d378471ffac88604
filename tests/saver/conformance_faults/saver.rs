//! `Faulty`: an `InMemorySaver` with exactly one fault. Each fault is a small,
//! realistic bug a saver implementer could write (a dropped field, an ignored
//! argument, an off-by-one, a wrong index, a cleanup that forgets the writes table).
//! Where the fault cannot be made by editing what `InMemorySaver` returns, it is made
//! the way a naive saver would behave: by re-storing tuples through the public API
//! (`reput`) or by keeping rows a correct saver deletes (`ghosts`).

use std::collections::{HashMap, HashSet};
use std::sync::Mutex;

use langgraph_codec::indexmap::IndexMap;
use langgraph_codec::saver::{
    async_trait, uuid6, Capabilities, ChannelVersion, ChannelVersions, Checkpoint,
    CheckpointConfig, CheckpointMetadata, CheckpointSaver, CheckpointTuple, DeltaChannelHistory,
    InMemorySaver, ListOptions, PendingWrite, PruneStrategy, WRITES_IDX_MAP,
};
use langgraph_codec::Value;
use langgraph_codec::{Error, Result};

/// One fault each. Grouped by the operation they break.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Fault {
    /// No fault: the wrapper as a correct saver (checks the harness).
    Nothing,
    // put
    PutReturnsInputConfig,
    EmptyNsStoredAsDefault,
    LoadsOnlyNewBlobs,
    KeepsRemovedChannels,
    AllThreadsShareOneStore,
    /// Stores the metadata as given: no `config["metadata"]` or `configurable` merge.
    IgnoresConfigMetadata,
    // what get_tuple / list return
    DropsChannelValues,
    StringifiesNonStringValues,
    BumpsChannelVersions,
    DropsVersionsSeen,
    BumpsVersionsSeenValues,
    DropsCustomMetadata,
    DropsRunId,
    StepAsString,
    DropsSource,
    RootNsReportedAsSlash,
    ChildNsTruncatedAtColon,
    DropsParentConfig,
    ParentIsSelf,
    TupleConfigDropsCheckpointId,
    EmptyTs,
    // get_tuple lookups
    IgnoresCheckpointId,
    MissingGivesEmptyCheckpoint,
    MissingIdGivesLatest,
    LatestIsOldest,
    GetTupleIgnoresNamespace,
    GetTupleOmitsWrites,
    // list
    ListOmitsWrites,
    ListDropsLast,
    ListIgnoresThread,
    ListIgnoresNamespace,
    ListRootNsMeansEvery,
    ListReversed,
    IgnoresFilter,
    FilterIgnoresNonStrings,
    FilterFirstKeyOnly,
    FilterAnyKey,
    FilterOnlySourceAndStep,
    FilterSearchesAllThreads,
    /// A `None` filter value is dropped, as if it meant "any value".
    FilterDropsNoneValues,
    /// A `None` filter value matches only checkpoints without the key.
    FilterNoneMatchesOnlyMissing,
    IgnoresBefore,
    BeforeInclusive,
    IgnoresLimit,
    LimitAppliedBeforeBefore,
    // put_writes
    DropsWrites,
    KeepsFirstWriteOfCall,
    WriteKeyWithoutTask,
    TruncatesTaskId,
    NullsNonStringWriteValues,
    DropsWritesWithTaskPath,
    RegularWritesLastWins,
    DuplicatesRetriedWrites,
    SpecialWritesAtPosition,
    WritesVisibleOnChildCheckpoint,
    WritesIgnoreNamespace,
    // delete_thread
    DeleteThreadNoop,
    DeleteThreadLeavesWrites,
    /// Leaves the channel value blobs of the thread behind: storing the same
    /// checkpoint again at the same channel version keeps the old value (as a saver
    /// whose blob insert ignores an existing key, Postgres's `ON CONFLICT DO NOTHING`).
    DeleteThreadLeavesBlobs,
    DeleteThreadRootNsOnly,
    DeleteThreadDeletesEveryThread,
    DeleteThreadErrorsWhenMissing,
    // delete_for_runs
    DeleteForRunsNoop,
    DeleteForRunsFirstIdOnly,
    DeleteForRunsWholeThread,
    DeleteForRunsLeavesWrites,
    DeleteForRunsEmptyDeletesAll,
    DeleteForRunsErrorsWhenMissing,
    DeleteForRunsRootNsOnly,
    DeleteForRunsCutsDeltaChain,
    // copy_thread
    CopyNoop,
    CopyLatestOnly,
    CopyDropsMetadata,
    CopyRootNsOnly,
    CopyDropsWrites,
    CopyNewIds,
    CopyMovesSource,
    CopyMissingSourceCreatesCheckpoint,
    // prune
    PruneNoop,
    PruneFirstThreadOnly,
    PruneRootNsOnly,
    PruneDropsLatestWrites,
    PruneDeleteKeepsLatest,
    PruneEveryThread,
    PruneEmptyMeansEveryThread,
    PruneErrorsWhenMissing,
    PruneCutsDeltaChain,
    // get_delta_channel_history
    DeltaNewestFirst,
    DeltaIncludesTargetWrites,
    DeltaSortsByTaskId,
    DeltaNoSeedNoWrites,
    DeltaFollowsIdOrder,
    DeltaStopsAtFirstSeedOfAnyChannel,
    DeltaNoneIsNotASeed,
    DeltaNoChannelsMeansAll,
    DeltaMissingCheckpointOmitsEntries,
    DeltaNoCheckpointIdIsMissing,
}

type CpKey = (String, String, String);

#[derive(Default)]
struct State {
    /// Writes a faulty delete left behind, keyed by checkpoint: they come back when a
    /// checkpoint with that key is stored again, as rows left in a writes table do.
    ghosts: HashMap<CpKey, Vec<PendingWrite>>,
    /// Channels each checkpoint's `put` gave new versions for.
    new_channels: HashMap<String, Vec<String>>,
    /// Every channel value ever stored on a thread (last wins).
    thread_values: HashMap<String, IndexMap<String, Value>>,
    /// Last value per (checkpoint, task, channel), for last-write-wins.
    last_values: HashMap<(CpKey, String, String), Value>,
    /// Times a (checkpoint, task, channel) write was stored, for duplicating retries.
    write_counts: HashMap<(CpKey, String, String), usize>,
    /// Write indices taken, per (checkpoint, task) or per checkpoint only.
    taken: HashSet<(CpKey, String, i64)>,
    /// Channel values a faulty delete left behind, by (thread, ns, channel, version).
    leftover_blobs: HashMap<(String, String, String, String), Value>,
}

pub struct Faulty {
    inner: InMemorySaver,
    fault: Fault,
    state: Mutex<State>,
}

fn key(c: &CheckpointConfig) -> CpKey {
    (
        c.thread_id.clone().unwrap_or_default(),
        c.ns().to_owned(),
        c.checkpoint_id.clone().unwrap_or_default(),
    )
}

fn broken(what: &'static str) -> Error {
    Error::unsupported(what)
}

fn bump(v: &ChannelVersion) -> ChannelVersion {
    match v {
        ChannelVersion::Int(i) => ChannelVersion::Int(i + 1),
        ChannelVersion::Float(f) => ChannelVersion::Float(f + 1.0),
        ChannelVersion::Str(s) => ChannelVersion::Str(format!("9{s}")),
    }
}

impl Faulty {
    pub fn new(fault: Fault) -> Self {
        Faulty {
            inner: InMemorySaver::new(),
            fault,
            state: Mutex::new(State::default()),
        }
    }

    fn is(&self, f: Fault) -> bool {
        self.fault == f
    }

    fn state(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Every tuple of one thread (all namespaces), or of every thread.
    async fn tuples(&self, thread: Option<&str>) -> Result<Vec<CheckpointTuple>> {
        let cfg = thread.map(CheckpointConfig::every_namespace);
        self.inner.list(cfg.as_ref(), &ListOptions::new()).await
    }

    async fn thread_ids(&self) -> Result<Vec<String>> {
        let mut out: Vec<String> = Vec::new();
        for t in self.tuples(None).await? {
            let id = t.config.thread_id.unwrap_or_default();
            if !out.contains(&id) {
                out.push(id);
            }
        }
        Ok(out)
    }

    /// Stores tuples again, oldest first, on `target` (or their own thread): the way
    /// a saver without a native copy would. `fresh_ids` gives every copy a new id.
    async fn reput(
        &self,
        mut tuples: Vec<CheckpointTuple>,
        target: Option<&str>,
        with_writes: bool,
        fresh_ids: bool,
    ) -> Result<()> {
        tuples.sort_by(|a, b| a.checkpoint.id.cmp(&b.checkpoint.id));
        let mut renamed: HashMap<String, String> = HashMap::new();
        for t in tuples {
            let thread = target
                .map(str::to_owned)
                .or_else(|| t.config.thread_id.clone())
                .unwrap_or_default();
            let mut cfg = CheckpointConfig::new(thread).with_ns(t.config.ns());
            cfg.checkpoint_id = t
                .parent_config
                .as_ref()
                .and_then(|p| p.checkpoint_id.clone())
                .map(|p| renamed.get(&p).cloned().unwrap_or(p));
            let mut cp = t.checkpoint.clone();
            if fresh_ids {
                let id = uuid6(-1);
                renamed.insert(cp.id.clone(), id.clone());
                cp.id = id;
            }
            let versions = cp.channel_versions.clone();
            let stored = self.inner.put(&cfg, &cp, &t.metadata, &versions).await?;
            if with_writes {
                self.put_grouped(&stored, &t.pending_writes).await?;
            }
        }
        Ok(())
    }

    /// `put_writes` of pending writes, one call per task, in their order.
    async fn put_grouped(&self, at: &CheckpointConfig, writes: &[PendingWrite]) -> Result<()> {
        let mut tasks: IndexMap<String, Vec<(String, Value)>> = IndexMap::new();
        for w in writes {
            tasks
                .entry(w.task_id.clone())
                .or_default()
                .push((w.channel.clone(), w.value.clone()));
        }
        for (task, ws) in tasks {
            self.inner.put_writes(at, &ws, &task, "").await?;
        }
        Ok(())
    }

    fn ghost(&self, tuples: &[CheckpointTuple]) {
        let mut st = self.state();
        for t in tuples {
            if !t.pending_writes.is_empty() {
                st.ghosts.insert(key(&t.config), t.pending_writes.clone());
            }
        }
    }

    /// Edits a tuple as the output-side faults do.
    fn fix(&self, mut t: CheckpointTuple, from_list: bool) -> CheckpointTuple {
        use Fault::*;
        let cp = &mut t.checkpoint;
        match self.fault {
            DropsChannelValues => cp.channel_values.clear(),
            StringifiesNonStringValues => {
                for v in cp.channel_values.values_mut() {
                    if v.as_str().is_none() {
                        *v = Value::from(format!("{v:?}"));
                    }
                }
            }
            BumpsChannelVersions => {
                for v in cp.channel_versions.values_mut() {
                    *v = bump(v);
                }
            }
            DropsVersionsSeen => cp.versions_seen.clear(),
            BumpsVersionsSeenValues => {
                for vs in cp.versions_seen.values_mut() {
                    for v in vs.values_mut() {
                        *v = bump(v);
                    }
                }
            }
            EmptyTs => cp.ts.clear(),
            LoadsOnlyNewBlobs => {
                let st = self.state();
                let fresh = st.new_channels.get(&cp.id).cloned().unwrap_or_default();
                cp.channel_values.retain(|k, _| fresh.contains(k));
            }
            KeepsRemovedChannels => {
                let st = self.state();
                let thread = t.config.thread_id.clone().unwrap_or_default();
                if let Some(all) = st.thread_values.get(&thread) {
                    for (k, v) in all {
                        if !cp.channel_values.contains_key(k) {
                            cp.channel_values.insert(k.clone(), v.clone());
                        }
                    }
                }
            }
            DropsCustomMetadata => t
                .metadata
                .0
                .retain(|k, _| matches!(k.as_str(), "source" | "step" | "parents")),
            DropsRunId => {
                t.metadata.0.shift_remove("run_id");
            }
            DropsSource => {
                t.metadata.0.shift_remove("source");
            }
            StepAsString => {
                if let Some(step) = t.metadata.0.get_mut("step") {
                    *step = Value::from(format!("{step:?}"));
                }
            }
            RootNsReportedAsSlash if !from_list && t.config.ns().is_empty() => {
                t.config.checkpoint_ns = Some("/".to_owned());
            }
            ChildNsTruncatedAtColon if !from_list => {
                if let Some(ns) = &mut t.config.checkpoint_ns {
                    if let Some(i) = ns.find(':') {
                        ns.truncate(i);
                    }
                }
            }
            DropsParentConfig => t.parent_config = None,
            ParentIsSelf => t.parent_config = Some(t.config.clone()),
            TupleConfigDropsCheckpointId if !from_list => t.config.checkpoint_id = None,
            GetTupleOmitsWrites if !from_list => t.pending_writes.clear(),
            ListOmitsWrites if from_list => t.pending_writes.clear(),
            TruncatesTaskId => {
                for w in &mut t.pending_writes {
                    w.task_id.truncate(8);
                }
            }
            NullsNonStringWriteValues => {
                for w in &mut t.pending_writes {
                    if w.value.as_str().is_none() {
                        w.value = Value::Nil;
                    }
                }
            }
            RegularWritesLastWins => {
                let st = self.state();
                let k = key(&t.config);
                for w in &mut t.pending_writes {
                    if let Some(v) =
                        st.last_values
                            .get(&(k.clone(), w.task_id.clone(), w.channel.clone()))
                    {
                        w.value = v.clone();
                    }
                }
            }
            DuplicatesRetriedWrites => {
                let st = self.state();
                let k = key(&t.config);
                let mut out = Vec::new();
                for w in &t.pending_writes {
                    let n = st
                        .write_counts
                        .get(&(k.clone(), w.task_id.clone(), w.channel.clone()))
                        .copied()
                        .unwrap_or(1);
                    out.extend(std::iter::repeat_n(w.clone(), n.max(1)));
                }
                t.pending_writes = out;
            }
            _ => {}
        }
        t
    }

    /// The parent-chain walk of `default_delta_channel_history`, with a switch per
    /// delta fault.
    async fn delta_walk(
        &self,
        config: &CheckpointConfig,
        channels: &[String],
    ) -> Result<IndexMap<String, DeltaChannelHistory>> {
        use Fault::*;
        let empty = |chs: &[String]| -> IndexMap<String, DeltaChannelHistory> {
            chs.iter()
                .map(|c| (c.clone(), DeltaChannelHistory::default()))
                .collect()
        };
        if self.is(DeltaNoCheckpointIdIsMissing) && config.checkpoint_id.is_none() {
            return Ok(empty(channels));
        }
        let Some(target) = self.get_tuple(config).await? else {
            if self.is(DeltaMissingCheckpointOmitsEntries) {
                return Ok(IndexMap::new());
            }
            return Ok(empty(channels));
        };
        let mut channels = channels.to_vec();
        if channels.is_empty() {
            if !self.is(DeltaNoChannelsMeansAll) {
                return Ok(IndexMap::new());
            }
            channels = target.checkpoint.channel_versions.keys().cloned().collect();
        }
        // Newest first: the checkpoints whose writes may count.
        let mut chain: Vec<CheckpointTuple> = Vec::new();
        if self.is(DeltaIncludesTargetWrites) {
            chain.push(target.clone());
        }
        if self.is(DeltaFollowsIdOrder) {
            let mut older = self
                .list(
                    Some(
                        &CheckpointConfig::new(target.config.thread_id.clone().unwrap_or_default())
                            .with_ns(target.config.ns()),
                    ),
                    &ListOptions::new().before(target.config.clone()),
                )
                .await?;
            chain.append(&mut older);
        } else {
            let mut cursor = target.parent_config.clone();
            let mut seen = HashSet::new();
            while let Some(cfg) = cursor {
                if !seen.insert(cfg.checkpoint_id.clone()) {
                    break;
                }
                let Some(t) = self.get_tuple(&cfg).await? else {
                    break;
                };
                cursor = t.parent_config.clone();
                chain.push(t);
            }
        }
        let mut collected: IndexMap<String, Vec<PendingWrite>> =
            channels.iter().map(|c| (c.clone(), Vec::new())).collect();
        let mut seeds: IndexMap<String, Value> = IndexMap::new();
        let mut remaining: Vec<String> = channels.clone();
        for t in &chain {
            if remaining.is_empty() {
                break;
            }
            for w in t.pending_writes.iter().rev() {
                if remaining.contains(&w.channel) {
                    if let Some(l) = collected.get_mut(&w.channel) {
                        l.push(w.clone());
                    }
                }
            }
            let stored = |ch: &String| match t.checkpoint.channel_values.get(ch) {
                Some(Value::Nil) if self.is(DeltaNoneIsNotASeed) => None,
                other => other.cloned(),
            };
            let done: Vec<String> = remaining
                .iter()
                .filter(|ch| stored(ch).is_some())
                .cloned()
                .collect();
            for ch in &done {
                if let Some(v) = stored(ch) {
                    seeds.insert(ch.clone(), v);
                }
            }
            if self.is(DeltaStopsAtFirstSeedOfAnyChannel) && !done.is_empty() {
                remaining.clear();
            } else {
                remaining.retain(|c| !done.contains(c));
            }
        }
        Ok(collected
            .into_iter()
            .map(|(ch, mut writes)| {
                if !self.is(DeltaNewestFirst) {
                    writes.reverse();
                }
                if self.is(DeltaSortsByTaskId) {
                    writes.sort_by(|a, b| a.task_id.cmp(&b.task_id));
                }
                let seed = seeds.swap_remove(&ch);
                if self.is(DeltaNoSeedNoWrites) && seed.is_none() {
                    writes.clear();
                }
                (ch, DeltaChannelHistory { writes, seed })
            })
            .collect())
    }

    /// delete_for_runs the naive way: drop every checkpoint of those runs, keep the
    /// rest of each thread as it was (no care for delta chains).
    async fn naive_delete_for_runs(&self, run_ids: &[String]) -> Result<()> {
        let all = self.tuples(None).await?;
        let doomed = |t: &CheckpointTuple| {
            t.metadata
                .run_id()
                .is_some_and(|r| run_ids.iter().any(|x| x == r))
        };
        let threads: HashSet<String> = all
            .iter()
            .filter(|t| doomed(t))
            .filter_map(|t| t.config.thread_id.clone())
            .collect();
        for thread in threads {
            let keep: Vec<CheckpointTuple> = all
                .iter()
                .filter(|t| t.config.thread_id.as_deref() == Some(thread.as_str()) && !doomed(t))
                .cloned()
                .collect();
            self.inner.delete_thread(&thread).await?;
            self.reput(keep, None, true, false).await?;
        }
        Ok(())
    }

    /// prune(keep_latest) the naive way: the latest checkpoint of each namespace only.
    async fn naive_prune(&self, thread: &str, with_writes: bool) -> Result<()> {
        let all = self.tuples(Some(thread)).await?;
        let mut latest: IndexMap<String, CheckpointTuple> = IndexMap::new();
        for t in all {
            latest.entry(t.config.ns().to_owned()).or_insert(t);
        }
        self.inner.delete_thread(thread).await?;
        self.reput(latest.into_values().collect(), None, with_writes, false)
            .await
    }
}

#[async_trait]
impl CheckpointSaver for Faulty {
    async fn put(
        &self,
        config: &CheckpointConfig,
        checkpoint: &Checkpoint,
        metadata: &CheckpointMetadata,
        new_versions: &ChannelVersions,
    ) -> langgraph_codec::Result<CheckpointConfig> {
        use Fault::*;
        let mut cfg = config.clone();
        if self.is(EmptyNsStoredAsDefault) && cfg.ns().is_empty() {
            cfg.checkpoint_ns = Some("__default__".to_owned());
        }
        if self.is(AllThreadsShareOneStore) {
            cfg.thread_id = Some("shared".to_owned());
        }
        if self.is(IgnoresConfigMetadata) {
            cfg.metadata.clear();
            cfg.configurable.clear();
        }
        {
            let mut st = self.state();
            st.new_channels.insert(
                checkpoint.id.clone(),
                new_versions.keys().cloned().collect(),
            );
            let thread = cfg.thread_id.clone().unwrap_or_default();
            let vals = st.thread_values.entry(thread).or_default();
            for (k, v) in &checkpoint.channel_values {
                vals.insert(k.clone(), v.clone());
            }
        }
        // Blobs left behind by a faulty delete win over the new values at their key.
        let mut kept = None;
        if self.is(DeleteThreadLeavesBlobs) {
            let st = self.state();
            let (thread, ns) = (
                cfg.thread_id.clone().unwrap_or_default(),
                cfg.ns().to_owned(),
            );
            for (ch, ver) in new_versions {
                let k = (thread.clone(), ns.clone(), ch.clone(), ver.to_string());
                if let Some(old) = st.leftover_blobs.get(&k) {
                    kept.get_or_insert_with(|| checkpoint.clone())
                        .channel_values
                        .insert(ch.clone(), old.clone());
                }
            }
        }
        let stored = self
            .inner
            .put(
                &cfg,
                kept.as_ref().unwrap_or(checkpoint),
                metadata,
                new_versions,
            )
            .await?;
        let ghost = self.state().ghosts.remove(&key(&stored));
        if let Some(ws) = ghost {
            self.put_grouped(&stored, &ws).await?;
        }
        if self.is(PutReturnsInputConfig) {
            return Ok(config.clone());
        }
        Ok(stored)
    }

    async fn put_writes(
        &self,
        config: &CheckpointConfig,
        writes: &[(String, Value)],
        task_id: &str,
        task_path: &str,
    ) -> langgraph_codec::Result<()> {
        use Fault::*;
        let k = key(config);
        match self.fault {
            DropsWrites => return Ok(()),
            DropsWritesWithTaskPath if !task_path.is_empty() => return Ok(()),
            KeepsFirstWriteOfCall => {
                let first: Vec<(String, Value)> = writes.iter().take(1).cloned().collect();
                return self
                    .inner
                    .put_writes(config, &first, task_id, task_path)
                    .await;
            }
            WriteKeyWithoutTask | SpecialWritesAtPosition => {
                // The index is the position in the call (also for special channels),
                // or the key lacks the task id: a taken index is silently skipped.
                let mut kept = Vec::new();
                {
                    let mut st = self.state();
                    for (i, (ch, v)) in writes.iter().enumerate() {
                        let special = WRITES_IDX_MAP.iter().any(|(c, _)| c == ch);
                        let task = if self.is(WriteKeyWithoutTask) {
                            String::new()
                        } else {
                            task_id.to_owned()
                        };
                        let idx = i64::try_from(i).unwrap_or(i64::MAX);
                        if !st.taken.insert((k.clone(), task, idx))
                            && (special || self.is(WriteKeyWithoutTask))
                        {
                            continue;
                        }
                        kept.push((ch.clone(), v.clone()));
                    }
                }
                return self
                    .inner
                    .put_writes(config, &kept, task_id, task_path)
                    .await;
            }
            RegularWritesLastWins | DuplicatesRetriedWrites => {
                let mut st = self.state();
                for (ch, v) in writes {
                    let wk = (k.clone(), task_id.to_owned(), ch.clone());
                    st.last_values.insert(wk.clone(), v.clone());
                    *st.write_counts.entry(wk).or_insert(0) += 1;
                }
            }
            WritesIgnoreNamespace => {
                // Writes keyed by (thread, checkpoint id): every namespace's
                // checkpoints see them.
                let tuples = self.tuples(config.thread_id.as_deref()).await?;
                for t in tuples {
                    if t.config.ns() != config.ns() {
                        self.inner
                            .put_writes(&t.config, writes, task_id, task_path)
                            .await?;
                    }
                }
            }
            WritesVisibleOnChildCheckpoint => {
                self.inner
                    .put_writes(config, writes, task_id, task_path)
                    .await?;
                self.state().ghosts.insert(
                    (k.0.clone(), k.1.clone(), "next".to_owned()),
                    writes
                        .iter()
                        .map(|(c, v)| PendingWrite::new(task_id, c.as_str(), v.clone()))
                        .collect(),
                );
                return Ok(());
            }
            _ => {}
        }
        self.inner
            .put_writes(config, writes, task_id, task_path)
            .await
    }

    async fn get_tuple(
        &self,
        config: &CheckpointConfig,
    ) -> langgraph_codec::Result<Option<CheckpointTuple>> {
        use Fault::*;
        let mut cfg = config.clone();
        if self.is(AllThreadsShareOneStore) {
            cfg.thread_id = Some("shared".to_owned());
        }
        if self.is(IgnoresConfigMetadata) {
            cfg.metadata.clear();
            cfg.configurable.clear();
        }
        if self.is(IgnoresCheckpointId) {
            cfg.checkpoint_id = None;
        }
        if self.is(RootNsReportedAsSlash) && cfg.ns() == "/" {
            cfg.checkpoint_ns = Some(String::new());
        }
        let mut got = if self.is(LatestIsOldest) && cfg.checkpoint_id.is_none() {
            self.inner
                .list(Some(&cfg), &ListOptions::new())
                .await?
                .pop()
        } else if self.is(GetTupleIgnoresNamespace) && cfg.checkpoint_id.is_none() {
            let every =
                CheckpointConfig::every_namespace(cfg.thread_id.clone().unwrap_or_default());
            self.inner
                .list(Some(&every), &ListOptions::new().limit(1))
                .await?
                .pop()
        } else {
            self.inner.get_tuple(&cfg).await?
        };
        if got.is_none() && self.is(MissingIdGivesLatest) && cfg.checkpoint_id.is_some() {
            cfg.checkpoint_id = None;
            got = self.inner.get_tuple(&cfg).await?;
        }
        if got.is_none() && self.is(MissingGivesEmptyCheckpoint) {
            let cp = Checkpoint::now(-1);
            let c = CheckpointConfig::for_checkpoint(
                cfg.thread_id.clone().unwrap_or_default(),
                cfg.ns(),
                cp.id.clone(),
            );
            got = Some(CheckpointTuple {
                config: c,
                checkpoint: cp,
                metadata: CheckpointMetadata::new("loop", -1),
                parent_config: None,
                pending_writes: Vec::new(),
            });
        }
        if let (Some(t), WritesVisibleOnChildCheckpoint) = (&mut got, self.fault) {
            // The writes of the previous checkpoint of the namespace show up here.
            let k = key(&t.config);
            let st = self.state();
            if let Some(ws) = st.ghosts.get(&(k.0, k.1, "next".to_owned())) {
                if t.pending_writes.is_empty() {
                    t.pending_writes = ws.clone();
                }
            }
        }
        Ok(got.map(|t| self.fix(t, false)))
    }

    async fn list(
        &self,
        config: Option<&CheckpointConfig>,
        options: &ListOptions,
    ) -> langgraph_codec::Result<Vec<CheckpointTuple>> {
        use Fault::*;
        let mut cfg = config.cloned();
        let mut opts = options.clone();
        match self.fault {
            ListIgnoresThread => cfg = None,
            ListIgnoresNamespace => {
                if let Some(c) = &mut cfg {
                    c.checkpoint_ns = None;
                }
            }
            ListRootNsMeansEvery => {
                if let Some(c) = &mut cfg {
                    if c.checkpoint_ns.as_deref() == Some("") {
                        c.checkpoint_ns = None;
                    }
                }
            }
            IgnoresFilter => opts.filter.clear(),
            FilterIgnoresNonStrings => opts.filter.retain(|_, v| v.as_str().is_some()),
            FilterFirstKeyOnly => opts.filter.truncate(1),
            FilterOnlySourceAndStep => {
                opts.filter.retain(|k, _| k == "source" || k == "step");
            }
            FilterSearchesAllThreads if !opts.filter.is_empty() => cfg = None,
            FilterDropsNoneValues => opts.filter.retain(|_, v| !v.is_nil()),
            IgnoresBefore => opts.before = None,
            IgnoresLimit => opts.limit = None,
            _ => {}
        }
        let none_keys: Vec<String> = if self.is(FilterNoneMatchesOnlyMissing) {
            let keys = opts
                .filter
                .iter()
                .filter(|(_, v)| v.is_nil())
                .map(|(k, _)| k.clone())
                .collect();
            opts.filter.retain(|_, v| !v.is_nil());
            keys
        } else {
            Vec::new()
        };
        let mut out = if self.is(FilterAnyKey) && opts.filter.len() > 1 {
            let mut any: Vec<CheckpointTuple> = Vec::new();
            for (k, v) in &opts.filter {
                let mut one = opts.clone();
                one.filter = IndexMap::from([(k.clone(), v.clone())]);
                for t in self.inner.list(cfg.as_ref(), &one).await? {
                    if !any.iter().any(|a| a.checkpoint.id == t.checkpoint.id) {
                        any.push(t);
                    }
                }
            }
            any
        } else if self.is(LimitAppliedBeforeBefore) && opts.before.is_some() {
            let cursor = opts
                .before
                .take()
                .and_then(|b| b.checkpoint_id)
                .unwrap_or_default();
            let mut r = self.inner.list(cfg.as_ref(), &opts).await?;
            r.retain(|t| t.checkpoint.id < cursor);
            r
        } else if self.is(BeforeInclusive) && opts.before.is_some() {
            let before = opts.before.clone();
            let mut r = self.inner.list(cfg.as_ref(), &opts).await?;
            if let Some(b) = before {
                let mut at = b.clone();
                if let Some(c) = &cfg {
                    at.checkpoint_ns = c.checkpoint_ns.clone();
                }
                if let Some(t) = self.inner.get_tuple(&at).await? {
                    r.insert(0, t);
                }
            }
            r
        } else {
            self.inner.list(cfg.as_ref(), &opts).await?
        };
        out.retain(|t| none_keys.iter().all(|k| t.metadata.get(k).is_none()));
        match self.fault {
            ListReversed => out.reverse(),
            ListDropsLast => {
                out.pop();
            }
            _ => {}
        }
        Ok(out.into_iter().map(|t| self.fix(t, true)).collect())
    }

    async fn delete_thread(&self, thread_id: &str) -> langgraph_codec::Result<()> {
        use Fault::*;
        match self.fault {
            DeleteThreadNoop => Ok(()),
            DeleteThreadLeavesWrites => {
                let all = self.tuples(Some(thread_id)).await?;
                self.ghost(&all);
                self.inner.delete_thread(thread_id).await
            }
            DeleteThreadLeavesBlobs => {
                let all = self.tuples(Some(thread_id)).await?;
                {
                    let mut st = self.state();
                    for t in &all {
                        for (ch, v) in &t.checkpoint.channel_values {
                            if let Some(ver) = t.checkpoint.channel_versions.get(ch) {
                                st.leftover_blobs.insert(
                                    (
                                        thread_id.to_owned(),
                                        t.config.ns().to_owned(),
                                        ch.clone(),
                                        ver.to_string(),
                                    ),
                                    v.clone(),
                                );
                            }
                        }
                    }
                }
                self.inner.delete_thread(thread_id).await
            }
            DeleteThreadRootNsOnly => {
                let child: Vec<CheckpointTuple> = self
                    .tuples(Some(thread_id))
                    .await?
                    .into_iter()
                    .filter(|t| !t.config.ns().is_empty())
                    .collect();
                self.inner.delete_thread(thread_id).await?;
                self.reput(child, None, true, false).await
            }
            DeleteThreadDeletesEveryThread => {
                for t in self.thread_ids().await? {
                    self.inner.delete_thread(&t).await?;
                }
                Ok(())
            }
            DeleteThreadErrorsWhenMissing if self.tuples(Some(thread_id)).await?.is_empty() => {
                Err(broken("delete_thread of a missing thread (faulty)"))
            }
            _ => self.inner.delete_thread(thread_id).await,
        }
    }

    fn capabilities(&self) -> Capabilities {
        Capabilities::ALL
    }

    async fn delete_for_runs(&self, run_ids: &[String]) -> langgraph_codec::Result<()> {
        use Fault::*;
        match self.fault {
            DeleteForRunsNoop => Ok(()),
            DeleteForRunsFirstIdOnly => {
                self.inner
                    .delete_for_runs(&run_ids[..1.min(run_ids.len())])
                    .await
            }
            DeleteForRunsWholeThread => {
                for t in self.tuples(None).await? {
                    if t.metadata
                        .run_id()
                        .is_some_and(|r| run_ids.iter().any(|x| x == r))
                    {
                        if let Some(thread) = &t.config.thread_id {
                            self.inner.delete_thread(thread).await?;
                        }
                    }
                }
                Ok(())
            }
            DeleteForRunsLeavesWrites => {
                let doomed: Vec<CheckpointTuple> = self
                    .tuples(None)
                    .await?
                    .into_iter()
                    .filter(|t| {
                        t.metadata
                            .run_id()
                            .is_some_and(|r| run_ids.iter().any(|x| x == r))
                    })
                    .collect();
                self.ghost(&doomed);
                self.inner.delete_for_runs(run_ids).await
            }
            DeleteForRunsEmptyDeletesAll if run_ids.is_empty() => {
                for t in self.thread_ids().await? {
                    self.inner.delete_thread(&t).await?;
                }
                Ok(())
            }
            DeleteForRunsErrorsWhenMissing
                if !self.tuples(None).await?.iter().any(|t| {
                    t.metadata
                        .run_id()
                        .is_some_and(|r| run_ids.iter().any(|x| x == r))
                }) =>
            {
                Err(broken("delete_for_runs of unknown run ids (faulty)"))
            }
            DeleteForRunsRootNsOnly => {
                let child: Vec<CheckpointTuple> = self
                    .tuples(None)
                    .await?
                    .into_iter()
                    .filter(|t| {
                        !t.config.ns().is_empty()
                            && t.metadata
                                .run_id()
                                .is_some_and(|r| run_ids.iter().any(|x| x == r))
                    })
                    .collect();
                self.inner.delete_for_runs(run_ids).await?;
                self.reput(child, None, true, false).await
            }
            DeleteForRunsCutsDeltaChain => self.naive_delete_for_runs(run_ids).await,
            _ => self.inner.delete_for_runs(run_ids).await,
        }
    }

    async fn copy_thread(&self, source: &str, target: &str) -> langgraph_codec::Result<()> {
        use Fault::*;
        let all = self.tuples(Some(source)).await?;
        match self.fault {
            CopyNoop => Ok(()),
            CopyLatestOnly => {
                let mut latest: IndexMap<String, CheckpointTuple> = IndexMap::new();
                for t in all {
                    latest.entry(t.config.ns().to_owned()).or_insert(t);
                }
                self.reput(latest.into_values().collect(), Some(target), true, false)
                    .await
            }
            CopyDropsMetadata => {
                let stripped = all
                    .into_iter()
                    .map(|mut t| {
                        t.metadata = CheckpointMetadata::default();
                        t
                    })
                    .collect();
                self.reput(stripped, Some(target), true, false).await
            }
            CopyRootNsOnly => {
                let root = all
                    .into_iter()
                    .filter(|t| t.config.ns().is_empty())
                    .collect();
                self.reput(root, Some(target), true, false).await
            }
            CopyDropsWrites => self.reput(all, Some(target), false, false).await,
            CopyNewIds => self.reput(all, Some(target), true, true).await,
            CopyMovesSource => {
                self.inner.copy_thread(source, target).await?;
                self.inner.delete_thread(source).await
            }
            CopyMissingSourceCreatesCheckpoint if all.is_empty() => {
                let cp = Checkpoint::now(-1);
                self.inner
                    .put(
                        &CheckpointConfig::new(target),
                        &cp,
                        &CheckpointMetadata::new("copy", -1),
                        &ChannelVersions::default(),
                    )
                    .await
                    .map(|_| ())
            }
            _ => self.inner.copy_thread(source, target).await,
        }
    }

    async fn prune(
        &self,
        thread_ids: &[String],
        strategy: PruneStrategy,
    ) -> langgraph_codec::Result<()> {
        use Fault::*;
        match self.fault {
            PruneNoop => Ok(()),
            PruneFirstThreadOnly => {
                self.inner
                    .prune(&thread_ids[..1.min(thread_ids.len())], strategy)
                    .await
            }
            PruneRootNsOnly => {
                let mut child = Vec::new();
                for t in thread_ids {
                    child.extend(
                        self.tuples(Some(t))
                            .await?
                            .into_iter()
                            .filter(|t| !t.config.ns().is_empty()),
                    );
                }
                self.inner.prune(thread_ids, strategy).await?;
                self.reput(child, None, true, false).await
            }
            PruneDropsLatestWrites | PruneCutsDeltaChain
                if strategy == PruneStrategy::KeepLatest =>
            {
                for t in thread_ids {
                    self.naive_prune(t, self.is(PruneCutsDeltaChain)).await?;
                }
                Ok(())
            }
            PruneDeleteKeepsLatest => {
                self.inner
                    .prune(thread_ids, PruneStrategy::KeepLatest)
                    .await
            }
            PruneEveryThread => {
                let all = self.thread_ids().await?;
                self.inner.prune(&all, strategy).await
            }
            PruneEmptyMeansEveryThread if thread_ids.is_empty() => {
                let all = self.thread_ids().await?;
                self.inner.prune(&all, strategy).await
            }
            PruneErrorsWhenMissing => {
                for t in thread_ids {
                    if self.tuples(Some(t)).await?.is_empty() {
                        return Err(broken("prune of a missing thread (faulty)"));
                    }
                }
                self.inner.prune(thread_ids, strategy).await
            }
            _ => self.inner.prune(thread_ids, strategy).await,
        }
    }

    async fn get_delta_channel_history(
        &self,
        config: &CheckpointConfig,
        channels: &[String],
    ) -> langgraph_codec::Result<IndexMap<String, DeltaChannelHistory>> {
        self.delta_walk(config, channels).await
    }
}
