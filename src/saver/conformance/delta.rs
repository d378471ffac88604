//! Delta-channel history (`get_delta_channel_history`): not in the Python spec; these
//! cases pin down the contract of `BaseCheckpointSaver.get_delta_channel_history` and
//! that pruning, copying and deleting runs keep what a kept checkpoint needs.
//!
//! The threads here are built the way langgraph's `DeltaChannel` writes them: a channel
//! has a version in every checkpoint, its blob holds a `_DeltaSnapshot` at snapshot
//! steps and is `empty` in between, the values in between live in the writes, and the
//! metadata's `counters_since_delta_snapshot` lists the channel until the next snapshot.

use indexmap::IndexMap;

use super::case_list;
use super::util::{config, ensure, generate_checkpoint, uuid4, v, CaseResult, Failure};
use crate::saver::traits::default_delta_channel_history;
use crate::saver::traits::{Capability, CheckpointSaver, PruneStrategy};
use crate::saver::types::{
    ChannelVersion, CheckpointConfig, CheckpointMetadata, DeltaChannelHistory, PendingWrite,
};
use crate::value::Value;

pub(super) fn cases() -> Vec<super::Case> {
    case_list![Capability::DeltaChannelHistory;
        test_delta_seed_at_snapshot_writes_oldest_first,
        test_delta_excludes_target_writes,
        test_delta_writes_in_task_path_order,
        test_delta_no_seed_walks_to_root,
        test_delta_fork_follows_own_path,
        test_delta_channels_terminate_independently,
        test_delta_stored_none_is_a_seed,
        test_delta_empty_and_unknown_channels,
        test_delta_missing_checkpoint,
        test_delta_latest_when_no_checkpoint_id,
        test_delta_override_matches_default_walk,
        test_delta_pruned_thread_still_reconstructs [Capability::Prune],
        test_delta_copied_thread_still_reconstructs [Capability::CopyThread],
        test_delta_delete_for_runs_keeps_needed_chain [Capability::DeleteForRuns],
    ]
}

/// Fixture builder for a delta thread, the set-up every case here shares: one thread
/// id, and every checkpoint versions all of `channels` (version `step + 2`), as
/// langgraph's `DeltaChannel` does.
struct DeltaThread<'s> {
    s: &'s dyn CheckpointSaver,
    tid: String,
    channels: &'s [&'s str],
}

impl<'s> DeltaThread<'s> {
    /// A thread with a fresh random id.
    fn new(s: &'s dyn CheckpointSaver, channels: &'s [&'s str]) -> Self {
        Self::with_id(s, &uuid4(), channels)
    }

    fn with_id(s: &'s dyn CheckpointSaver, tid: &str, channels: &'s [&'s str]) -> Self {
        DeltaThread {
            s,
            tid: tid.to_owned(),
            channels,
        }
    }

    /// Puts the checkpoint of `step` under `parent`. `stored` are the channels that take
    /// a snapshot (or a plain value) at this step; every other channel is still waiting
    /// for one, so the metadata's `counters_since_delta_snapshot` lists it.
    async fn put(
        &self,
        parent: Option<&CheckpointConfig>,
        step: i64,
        stored: &[(&str, Value)],
    ) -> Result<CheckpointConfig, Failure> {
        self.put_step(parent, step, stored, None).await
    }

    /// [`put`](Self::put) with the metadata's `run_id`.
    async fn put_in_run(
        &self,
        parent: Option<&CheckpointConfig>,
        step: i64,
        stored: &[(&str, Value)],
        run_id: &str,
    ) -> Result<CheckpointConfig, Failure> {
        self.put_step(parent, step, stored, Some(run_id)).await
    }

    async fn put_step(
        &self,
        parent: Option<&CheckpointConfig>,
        step: i64,
        stored: &[(&str, Value)],
        run_id: Option<&str>,
    ) -> Result<CheckpointConfig, Failure> {
        let version = v(step + 2);
        let versions: Vec<(&str, ChannelVersion)> = self
            .channels
            .iter()
            .map(|c| (*c, version.clone()))
            .collect();
        let cp = generate_checkpoint(stored, &versions, &[]);
        let pending = self
            .channels
            .iter()
            .filter(|c| !stored.iter().any(|(k, _)| k == *c));
        let counters: Vec<(&str, Value)> = pending
            .map(|c| {
                let counter = Value::Array(vec![Value::from(1i64), Value::from(step + 1)]);
                (*c, counter)
            })
            .collect();
        let mut md = CheckpointMetadata::new("loop", step);
        if !counters.is_empty() {
            md = md.with("counters_since_delta_snapshot", Value::map(counters));
        }
        if let Some(run) = run_id {
            md = md.with("run_id", run);
        }
        let mut cfg = config(&self.tid);
        cfg.checkpoint_id = parent.and_then(|p| p.checkpoint_id.clone());
        let new_versions = versions
            .iter()
            .map(|(k, v)| ((*k).to_owned(), v.clone()))
            .collect();
        Ok(self.s.put(&cfg, &cp, &md, &new_versions).await?)
    }

    /// Stores string writes of `task` (at `path`) on the checkpoint `at`.
    async fn write(
        &self,
        at: &CheckpointConfig,
        task: &str,
        path: &str,
        w: &[(&str, &str)],
    ) -> CaseResult {
        let writes: Vec<(String, Value)> = w
            .iter()
            .map(|(c, x)| ((*c).to_owned(), Value::from(*x)))
            .collect();
        self.s.put_writes(at, &writes, task, path).await?;
        Ok(())
    }
}

fn snap(items: &[&str]) -> Value {
    Value::DeltaSnapshot(Box::new(Value::Array(
        items.iter().map(|x| Value::from(*x)).collect(),
    )))
}

fn chans(names: &[&str]) -> Vec<String> {
    names.iter().map(|c| (*c).to_owned()).collect()
}

fn entry<'a>(
    h: &'a IndexMap<String, DeltaChannelHistory>,
    ch: &str,
) -> Result<&'a DeltaChannelHistory, Failure> {
    h.get(ch)
        .ok_or_else(|| Failure(format!("no entry for channel {ch:?}")))
}

fn values(h: &DeltaChannelHistory) -> Vec<String> {
    h.writes
        .iter()
        .map(|w| w.value.as_str().unwrap_or("<non-str>").to_owned())
        .collect()
}

fn expect(h: &DeltaChannelHistory, seed: Option<Value>, writes: &[&str]) -> CaseResult {
    let got = values(h);
    ensure!(
        got == writes,
        "writes {got:?}, expected {writes:?} (oldest first)"
    );
    ensure!(h.seed == seed, "seed {:?}, expected {seed:?}", h.seed);
    Ok(())
}

async fn history(
    s: &dyn CheckpointSaver,
    at: &CheckpointConfig,
    channels: &[&str],
) -> Result<IndexMap<String, DeltaChannelHistory>, Failure> {
    Ok(s.get_delta_channel_history(at, &chans(channels)).await?)
}

/// Snapshot at c0, writes at c0 and c1, target c2: seed is the snapshot, writes come
/// oldest first from every ancestor up to and including the seed's.
async fn test_delta_seed_at_snapshot_writes_oldest_first(s: &dyn CheckpointSaver) -> CaseResult {
    let t = DeltaThread::new(s, &["log"]);
    let c0 = t.put(None, 0, &[("log", snap(&["a"]))]).await?;
    t.write(&c0, "t1", "", &[("log", "b")]).await?;
    let c1 = t.put(Some(&c0), 1, &[]).await?;
    t.write(&c1, "t2", "", &[("log", "c"), ("log", "d")])
        .await?;
    let c2 = t.put(Some(&c1), 2, &[]).await?;
    let h = history(s, &c2, &["log"]).await?;
    expect(entry(&h, "log")?, Some(snap(&["a"])), &["b", "c", "d"])?;
    let w = entry(&h, "log")?.writes.first().cloned();
    ensure!(
        w == Some(PendingWrite::new("t1", "log", "b")),
        "first write should be (t1, log, b), got {w:?}"
    );
    let h1 = history(s, &c1, &["log"]).await?;
    expect(entry(&h1, "log")?, Some(snap(&["a"])), &["b"])?;
    let h0 = history(s, &c0, &["log"]).await?;
    expect(entry(&h0, "log")?, None, &[])
}

/// The target's own writes are pending for the next step: not part of its history.
async fn test_delta_excludes_target_writes(s: &dyn CheckpointSaver) -> CaseResult {
    let t = DeltaThread::new(s, &["log"]);
    let c0 = t.put(None, 0, &[("log", snap(&["a"]))]).await?;
    t.write(&c0, "t1", "", &[("log", "b")]).await?;
    let c1 = t.put(Some(&c0), 1, &[]).await?;
    t.write(&c1, "t2", "", &[("log", "pending")]).await?;
    let h = history(s, &c1, &["log"]).await?;
    expect(entry(&h, "log")?, Some(snap(&["a"])), &["b"])
}

/// Within a checkpoint, writes replay in `(task_path, task_id, idx)` order, whatever
/// order they were stored in; writes without a task path come first.
async fn test_delta_writes_in_task_path_order(s: &dyn CheckpointSaver) -> CaseResult {
    let t = DeltaThread::new(s, &["log"]);
    let c0 = t.put(None, 0, &[("log", snap(&[]))]).await?;
    t.write(
        &c0,
        "task-b",
        "~__pregel_pull, z",
        &[("log", "b1"), ("other", "x"), ("log", "b2")],
    )
    .await?;
    t.write(&c0, "task-a", "~__pregel_pull, z", &[("log", "a1")])
        .await?;
    t.write(&c0, "task-c", "~__pregel_pull, a", &[("log", "c1")])
        .await?;
    t.write(&c0, "task-z", "", &[("log", "input")]).await?;
    let c1 = t.put(Some(&c0), 1, &[]).await?;
    t.write(&c1, "task-0", "~__pregel_pull, b", &[("log", "later")])
        .await?;
    let c2 = t.put(Some(&c1), 2, &[]).await?;
    let h = history(s, &c2, &["log"]).await?;
    expect(
        entry(&h, "log")?,
        Some(snap(&[])),
        &["input", "c1", "a1", "b1", "b2", "later"],
    )
}

/// Without a stored value on the chain, there is no seed and every ancestor's writes
/// count.
async fn test_delta_no_seed_walks_to_root(s: &dyn CheckpointSaver) -> CaseResult {
    let t = DeltaThread::new(s, &["log"]);
    let c0 = t.put(None, 0, &[]).await?;
    t.write(&c0, "t0", "", &[("log", "first")]).await?;
    let c1 = t.put(Some(&c0), 1, &[]).await?;
    t.write(&c1, "t1", "", &[("log", "second")]).await?;
    let c2 = t.put(Some(&c1), 2, &[]).await?;
    let h = history(s, &c2, &["log"]).await?;
    expect(entry(&h, "log")?, None, &["first", "second"])
}

/// A fork's history follows its own parent chain only, not newer checkpoints of the
/// thread.
async fn test_delta_fork_follows_own_path(s: &dyn CheckpointSaver) -> CaseResult {
    let t = DeltaThread::new(s, &["log"]);
    let c0 = t.put(None, 0, &[("log", snap(&["a"]))]).await?;
    t.write(&c0, "t0", "", &[("log", "x")]).await?;
    let c1 = t.put(Some(&c0), 1, &[]).await?;
    t.write(&c1, "t1", "", &[("log", "main")]).await?;
    let c2 = t.put(Some(&c1), 2, &[]).await?;
    // The fork branches off c0, after the main line was written.
    let f1 = t.put(Some(&c0), 1, &[]).await?;
    t.write(&f1, "t1", "", &[("log", "fork")]).await?;
    let f2 = t.put(Some(&f1), 2, &[]).await?;
    let h = history(s, &f2, &["log"]).await?;
    expect(entry(&h, "log")?, Some(snap(&["a"])), &["x", "fork"])?;
    let h = history(s, &c2, &["log"]).await?;
    expect(entry(&h, "log")?, Some(snap(&["a"])), &["x", "main"])
}

/// Each channel stops at its own nearest stored value.
async fn test_delta_channels_terminate_independently(s: &dyn CheckpointSaver) -> CaseResult {
    let t = DeltaThread::new(s, &["a", "b"]);
    let c0 = t
        .put(None, 0, &[("a", snap(&["a"])), ("b", snap(&["b"]))])
        .await?;
    t.write(&c0, "t0", "", &[("a", "a0"), ("b", "b0")]).await?;
    let c1 = t.put(Some(&c0), 1, &[("b", snap(&["b", "b0"]))]).await?;
    t.write(&c1, "t1", "", &[("a", "a1"), ("b", "b1")]).await?;
    let c2 = t.put(Some(&c1), 2, &[]).await?;
    let h = history(s, &c2, &["a", "b"]).await?;
    let keys: Vec<&String> = h.keys().collect();
    ensure!(
        keys == ["a", "b"],
        "entries {keys:?}, expected [a, b] in request order"
    );
    expect(entry(&h, "a")?, Some(snap(&["a"])), &["a0", "a1"])?;
    expect(entry(&h, "b")?, Some(snap(&["b", "b0"])), &["b1"])
}

/// A stored `None` is a value: it seeds the channel (only `empty` blobs do not).
async fn test_delta_stored_none_is_a_seed(s: &dyn CheckpointSaver) -> CaseResult {
    let t = DeltaThread::new(s, &["log"]);
    let c0 = t.put(None, 0, &[("log", Value::Nil)]).await?;
    t.write(&c0, "t0", "", &[("log", "x")]).await?;
    let c1 = t.put(Some(&c0), 1, &[]).await?;
    let h = history(s, &c1, &["log"]).await?;
    expect(entry(&h, "log")?, Some(Value::Nil), &["x"])
}

/// No channels: an empty result. A channel never written: no writes, no seed.
async fn test_delta_empty_and_unknown_channels(s: &dyn CheckpointSaver) -> CaseResult {
    let t = DeltaThread::new(s, &["log"]);
    let c0 = t.put(None, 0, &[("log", snap(&["a"]))]).await?;
    t.write(&c0, "t0", "", &[("log", "x")]).await?;
    let c1 = t.put(Some(&c0), 1, &[]).await?;
    let h = history(s, &c1, &[]).await?;
    ensure!(h.is_empty(), "no channels asked, got {h:?}");
    let h = history(s, &c1, &["never"]).await?;
    expect(entry(&h, "never")?, None, &[])
}

/// A checkpoint that does not exist has an empty history for every channel.
async fn test_delta_missing_checkpoint(s: &dyn CheckpointSaver) -> CaseResult {
    let h = history(
        s,
        &config(&uuid4()).with_checkpoint_id(uuid4()),
        &["log", "other"],
    )
    .await?;
    ensure!(h.len() == 2, "expected 2 entries, got {}", h.len());
    expect(entry(&h, "log")?, None, &[])?;
    expect(entry(&h, "other")?, None, &[])
}

/// Without a checkpoint id, the history is the latest checkpoint's.
async fn test_delta_latest_when_no_checkpoint_id(s: &dyn CheckpointSaver) -> CaseResult {
    let t = DeltaThread::new(s, &["log"]);
    let c0 = t.put(None, 0, &[("log", snap(&["a"]))]).await?;
    t.write(&c0, "t0", "", &[("log", "x")]).await?;
    let c1 = t.put(Some(&c0), 1, &[]).await?;
    t.write(&c1, "t1", "", &[("log", "y")]).await?;
    t.put(Some(&c1), 2, &[]).await?;
    let h = history(s, &config(&t.tid), &["log"]).await?;
    expect(entry(&h, "log")?, Some(snap(&["a"])), &["x", "y"])
}

/// A saver's own history agrees with the default walk over `get_tuple`.
async fn test_delta_override_matches_default_walk(s: &dyn CheckpointSaver) -> CaseResult {
    let t = DeltaThread::new(s, &["log", "msgs"]);
    let c0 = t
        .put(
            None,
            0,
            &[("log", snap(&["a"])), ("msgs", Value::from("m0"))],
        )
        .await?;
    t.write(&c0, "t0", "p", &[("log", "x"), ("msgs", "m")])
        .await?;
    t.write(&c0, "t1", "", &[("log", "y")]).await?;
    let c1 = t.put(Some(&c0), 1, &[("msgs", Value::from("m1"))]).await?;
    t.write(&c1, "t2", "q", &[("log", "z")]).await?;
    let f1 = t.put(Some(&c0), 1, &[]).await?;
    t.write(&f1, "t3", "", &[("log", "f")]).await?;
    let c2 = t.put(Some(&c1), 2, &[]).await?;
    let f2 = t.put(Some(&f1), 2, &[]).await?;
    for at in [&c0, &c1, &c2, &f1, &f2] {
        let own = history(s, at, &["log", "msgs", "none"]).await?;
        let default =
            default_delta_channel_history(s, at, &chans(&["log", "msgs", "none"])).await?;
        ensure!(
            own == default,
            "at {:?}: saver says {own:?}, default walk says {default:?}",
            at.checkpoint_id
        );
    }
    Ok(())
}

/// A chain of: root (no snapshot) → c0 (snapshot) → c1 → c2 (latest), with writes.
async fn delta_chain(
    s: &dyn CheckpointSaver,
    tid: &str,
    runs: [&str; 4],
) -> Result<CheckpointConfig, Failure> {
    let t = DeltaThread::with_id(s, tid, &["log"]);
    let [r0, r1, r2, r3] = runs;
    let root = t.put_in_run(None, -1, &[], r0).await?;
    t.write(&root, "t-root", "", &[("log", "old")]).await?;
    let c0 = t
        .put_in_run(Some(&root), 0, &[("log", snap(&["old", "a"]))], r1)
        .await?;
    t.write(&c0, "t0", "", &[("log", "b")]).await?;
    let c1 = t.put_in_run(Some(&c0), 1, &[], r2).await?;
    t.write(&c1, "t1", "", &[("log", "c")]).await?;
    let c2 = t.put_in_run(Some(&c1), 2, &[], r3).await?;
    let h = history(s, &c2, &["log"]).await?;
    expect(entry(&h, "log")?, Some(snap(&["old", "a"])), &["b", "c"])?;
    Ok(c2)
}

/// `prune(keep_latest)` keeps what the latest checkpoint needs to rebuild its delta
/// channel.
async fn test_delta_pruned_thread_still_reconstructs(s: &dyn CheckpointSaver) -> CaseResult {
    let tid = uuid4();
    let latest = delta_chain(s, &tid, ["r", "r", "r", "r"]).await?;
    s.prune(std::slice::from_ref(&tid), PruneStrategy::KeepLatest)
        .await?;
    let tup = s.get_tuple(&config(&tid)).await?;
    ensure!(
        tup.as_ref().map(|t| &t.config.checkpoint_id) == Some(&latest.checkpoint_id),
        "latest checkpoint gone after prune"
    );
    let h = history(s, &config(&tid), &["log"]).await?;
    expect(entry(&h, "log")?, Some(snap(&["old", "a"])), &["b", "c"])
}

/// `copy_thread` copies the whole chain: the target rebuilds the same history.
async fn test_delta_copied_thread_still_reconstructs(s: &dyn CheckpointSaver) -> CaseResult {
    let (src, dst) = (uuid4(), uuid4());
    let latest = delta_chain(s, &src, ["r", "r", "r", "r"]).await?;
    s.copy_thread(&src, &dst).await?;
    let id = latest.checkpoint_id.clone().unwrap_or_default();
    let h = history(s, &config(&dst).with_checkpoint_id(id), &["log"]).await?;
    expect(entry(&h, "log")?, Some(snap(&["old", "a"])), &["b", "c"])
}

/// Deleting the runs that wrote a kept checkpoint's ancestors must not cut its chain.
async fn test_delta_delete_for_runs_keeps_needed_chain(s: &dyn CheckpointSaver) -> CaseResult {
    let tid = uuid4();
    let (old, keep) = (uuid4(), uuid4());
    let latest = delta_chain(s, &tid, [&old, &old, &old, &keep]).await?;
    s.delete_for_runs(&[old]).await?;
    ensure!(
        s.get_tuple(&latest).await?.is_some(),
        "the kept run's checkpoint is gone"
    );
    let h = history(s, &latest, &["log"]).await?;
    expect(entry(&h, "log")?, Some(snap(&["old", "a"])), &["b", "c"])
}
