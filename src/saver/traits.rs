//! The [`CheckpointSaver`] trait: Python's `BaseCheckpointSaver`, async and object safe.

use std::fmt;
use std::sync::Arc;

use std::collections::HashSet;

use async_trait::async_trait;
use indexmap::IndexMap;

use super::delta::finish;
use super::error::SaverFault;
use super::types::{
    ChannelVersion, ChannelVersions, Checkpoint, CheckpointConfig, CheckpointMetadata,
    CheckpointTuple, DeltaChannelHistory, PendingWrite,
};
use crate::saver::Result;
use crate::value::Value;

/// One capability of a saver, as the Python conformance suite names them.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[non_exhaustive]
pub enum Capability {
    /// `put` (base).
    Put,
    /// `put_writes` (base).
    PutWrites,
    /// `get_tuple` (base).
    GetTuple,
    /// `list` (base).
    List,
    /// `delete_thread` (base).
    DeleteThread,
    /// `delete_for_runs` (extended).
    DeleteForRuns,
    /// `copy_thread` (extended).
    CopyThread,
    /// `prune` (extended).
    Prune,
    /// `get_delta_channel_history` (extended, not in Python's suite; every saver has
    /// the default parent-chain walk, so it is always detected).
    DeltaChannelHistory,
}

impl Capability {
    /// Every capability, base ones first, in the order the conformance kit runs them.
    pub const ALL: [Capability; 9] = [
        Capability::Put,
        Capability::PutWrites,
        Capability::GetTuple,
        Capability::List,
        Capability::DeleteThread,
        Capability::DeleteForRuns,
        Capability::CopyThread,
        Capability::Prune,
        Capability::DeltaChannelHistory,
    ];

    /// The snake_case name Python uses (`"put_writes"`, `"delete_for_runs"`, …).
    pub fn as_str(self) -> &'static str {
        match self {
            Capability::Put => "put",
            Capability::PutWrites => "put_writes",
            Capability::GetTuple => "get_tuple",
            Capability::List => "list",
            Capability::DeleteThread => "delete_thread",
            Capability::DeleteForRuns => "delete_for_runs",
            Capability::CopyThread => "copy_thread",
            Capability::Prune => "prune",
            Capability::DeltaChannelHistory => "delta_channel_history",
        }
    }

    /// `true` for Python's five base capabilities (put, put_writes, get_tuple, list,
    /// delete_thread), the ones every saver must implement. The extended ones are
    /// `delete_for_runs`, `copy_thread`, `prune` and
    /// [`DeltaChannelHistory`](Capability::DeltaChannelHistory): the last is not in
    /// Python's suite, and every saver has it through the trait's default walk, so it
    /// is always detected but does not decide the base level.
    pub fn is_base(self) -> bool {
        matches!(
            self,
            Capability::Put
                | Capability::PutWrites
                | Capability::GetTuple
                | Capability::List
                | Capability::DeleteThread
        )
    }
}

impl fmt::Display for Capability {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Which extended capabilities a saver implements (the base ones are required by the
/// trait). Returned by [`CheckpointSaver::capabilities`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Capabilities {
    /// `delete_for_runs` is implemented.
    pub delete_for_runs: bool,
    /// `copy_thread` is implemented.
    pub copy_thread: bool,
    /// `prune` is implemented.
    pub prune: bool,
}

impl Capabilities {
    /// Only the base capabilities.
    pub const BASE: Capabilities = Capabilities {
        delete_for_runs: false,
        copy_thread: false,
        prune: false,
    };

    /// Every capability.
    pub const ALL: Capabilities = Capabilities {
        delete_for_runs: true,
        copy_thread: true,
        prune: true,
    };

    /// Whether `capability` is available.
    pub fn has(self, capability: Capability) -> bool {
        match capability {
            Capability::DeleteForRuns => self.delete_for_runs,
            Capability::CopyThread => self.copy_thread,
            Capability::Prune => self.prune,
            _ => true,
        }
    }
}

/// The `prune` strategy.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
#[non_exhaustive]
pub enum PruneStrategy {
    /// `"keep_latest"`: keep the latest checkpoint of every namespace (and, in
    /// delta-aware savers, the ancestors it needs to rebuild its delta channels).
    #[default]
    KeepLatest,
    /// `"delete"`: remove every checkpoint of the thread.
    Delete,
}

impl PruneStrategy {
    /// Python's strategy string.
    pub fn as_str(self) -> &'static str {
        match self {
            PruneStrategy::KeepLatest => "keep_latest",
            PruneStrategy::Delete => "delete",
        }
    }
}

/// The keyword arguments of `list`: `filter`, `before`, `limit`.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ListOptions {
    /// Metadata filter: a checkpoint is listed when its metadata matches *every* key.
    /// What "matches" means is the backend's, as in Python (the conformance kit checks
    /// what they share: equal scalars match, a `None` value matches a stored `None` and
    /// nothing else that is stored):
    /// - [`InMemorySaver`](crate::saver::InMemorySaver): Python's `==` on the value
    ///   (`1 == 1.0 == True`, dicts regardless of key order); a missing key equals
    ///   `None`.
    /// - `SqliteSaver`: `json_extract(metadata, '$.key') = ?`: equality of the JSON
    ///   values, `IS NULL` for `None` (so a missing key matches `None`); dicts and lists
    ///   compare as compact JSON text (key order matters); keys may hold only ASCII
    ///   letters, digits, `_`, `.` and `-`.
    /// - `PostgresSaver`: `metadata @> filter`, JSONB containment: a dict or list filter
    ///   value matches a stored one that *contains* it (`{"a": 1}` matches
    ///   `{"a": 1, "b": 2}`), numbers compare numerically (`1` matches `1.0`, not
    ///   `true`), and a `None` value matches only a key stored as `null`, not a missing
    ///   key.
    pub filter: IndexMap<String, Value>,
    /// Only checkpoints whose id is strictly smaller than this config's `checkpoint_id`.
    pub before: Option<CheckpointConfig>,
    /// At most this many results.
    pub limit: Option<usize>,
}

impl ListOptions {
    /// No filter, no cursor, no limit.
    pub fn new() -> Self {
        Self::default()
    }

    /// The same options with one more metadata filter key.
    pub fn filter(mut self, key: impl Into<String>, value: impl Into<Value>) -> Self {
        self.filter.insert(key.into(), value.into());
        self
    }

    /// The same options with a `before` cursor.
    pub fn before(mut self, config: CheckpointConfig) -> Self {
        self.before = Some(config);
        self
    }

    /// The same options with a limit.
    pub fn limit(mut self, limit: usize) -> Self {
        self.limit = Some(limit);
        self
    }
}

/// Python's `BaseCheckpointSaver`, async. Object safe: use it as
/// `Arc<dyn CheckpointSaver>`.
///
/// The base operations are required. The extended ones (`delete_for_runs`,
/// `copy_thread`, `prune`) default to [`ErrorKind::Unsupported`](crate::ErrorKind::Unsupported); a saver that
/// implements them says so in [`capabilities`](Self::capabilities).
/// [`get_delta_channel_history`](Self::get_delta_channel_history) defaults to the
/// parent-chain walk over [`get_tuple`](Self::get_tuple) that Python provides.
#[async_trait]
pub trait CheckpointSaver: Send + Sync {
    /// Stores a checkpoint. `config.checkpoint_id`, if set, is its parent; only the
    /// channels in `new_versions` get new blobs (a channel not in it keeps the blob of
    /// its unchanged version). Returns the new checkpoint's config (thread, namespace
    /// as given, `""` when none, and the checkpoint's id).
    ///
    /// The metadata stored is Python's `get_checkpoint_metadata(config, metadata)`
    /// ([`checkpoint_metadata`](super::types::checkpoint_metadata)): the keys of
    /// `config.metadata`, then the scalar (str, int, float, bool) keys of
    /// `config.configurable`, that `metadata` lacks, except keys starting with `__` and
    /// [`EXCLUDED_METADATA_KEYS`](super::types::EXCLUDED_METADATA_KEYS); `\u0000` is
    /// removed from string values.
    async fn put(
        &self,
        config: &CheckpointConfig,
        checkpoint: &Checkpoint,
        metadata: &CheckpointMetadata,
        new_versions: &ChannelVersions,
    ) -> Result<CheckpointConfig>;

    /// Stores a task's writes against the checkpoint `config` names (its
    /// `checkpoint_id` is required). The rules the conformance kit checks (Python's
    /// savers all follow them):
    ///
    /// - **Write index.** Each write is stored under `(task_id, idx)`. A regular
    ///   write's `idx` is its position in `writes` (0, 1, …). The four special channels
    ///   have fixed negative indices whatever their position
    ///   ([`WRITES_IDX_MAP`](super::types::WRITES_IDX_MAP), [`write_idx`](super::types::write_idx)):
    ///   `__error__` −1, `__scheduled__` −2, `__interrupt__` −3, `__resume__` −4, so
    ///   a special write never takes the place of a regular one.
    /// - **Retried writes.** A write whose `(task_id, idx)` is already stored is never
    ///   duplicated. When *every* write of the call is special
    ///   ([`all_special`](super::types::all_special)), the new value replaces the
    ///   stored one (Python's `INSERT OR REPLACE` / `ON CONFLICT DO UPDATE`);
    ///   otherwise the first write wins and the retry is ignored (`INSERT OR IGNORE` /
    ///   `DO NOTHING`). (A special write retried in a call that also has regular writes
    ///   replaces in Python's in-memory saver and is ignored by its SQL savers; the kit
    ///   does not check that mix.)
    /// - **Order.** [`get_tuple`](Self::get_tuple) and [`list`](Self::list) return a
    ///   checkpoint's pending writes sorted by `(task_path, task_id, idx)`
    ///   ([`writes_sort_key`](super::types::writes_sort_key)): `task_path` orders the
    ///   tasks of a superstep as live execution applies them, and within a task the
    ///   special writes (−4 … −1) come before the regular ones (0, 1, …).
    /// - **Scope.** Writes belong to one checkpoint (thread, namespace, id): a new
    ///   checkpoint starts with none, and deleting a checkpoint (`delete_thread`,
    ///   `delete_for_runs`, `prune`) deletes its writes.
    async fn put_writes(
        &self,
        config: &CheckpointConfig,
        writes: &[(String, Value)],
        task_id: &str,
        task_path: &str,
    ) -> Result<()>;

    /// The checkpoint `config` names, or the latest of its thread and namespace;
    /// `None` if there is none.
    async fn get_tuple(&self, config: &CheckpointConfig) -> Result<Option<CheckpointTuple>>;

    /// Checkpoints matching `config` (thread, and namespace / id when given; every
    /// thread when `None`) and `options`, newest first.
    async fn list(
        &self,
        config: Option<&CheckpointConfig>,
        options: &ListOptions,
    ) -> Result<Vec<CheckpointTuple>>;

    /// Deletes every checkpoint, write and blob of a thread (all namespaces).
    async fn delete_thread(&self, thread_id: &str) -> Result<()>;

    /// Checks, writing nothing, that the saver's store has the layout it needs. The
    /// default is `Ok(())`, for savers without a schema (in-memory ones);
    /// `SqliteSaver` and `PostgresSaver` check their tables.
    ///
    /// # Errors
    ///
    /// The saver's schema error (e.g. [`ErrorKind::Schema`](crate::ErrorKind::Schema)).
    async fn verify(&self) -> Result<()> {
        Ok(())
    }

    /// The extended capabilities this saver implements.
    fn capabilities(&self) -> Capabilities {
        Capabilities::BASE
    }

    /// Deletes the checkpoints (and their writes) whose metadata `run_id` is one of
    /// `run_ids`.
    async fn delete_for_runs(&self, run_ids: &[String]) -> Result<()> {
        let _ = run_ids;
        Err(crate::Error::unsupported("delete_for_runs"))
    }

    /// Copies every checkpoint, write and blob of one thread to another.
    async fn copy_thread(&self, source_thread_id: &str, target_thread_id: &str) -> Result<()> {
        let _ = (source_thread_id, target_thread_id);
        Err(crate::Error::unsupported("copy_thread"))
    }

    /// Prunes the checkpoints of the given threads.
    async fn prune(&self, thread_ids: &[String], strategy: PruneStrategy) -> Result<()> {
        let _ = (thread_ids, strategy);
        Err(crate::Error::unsupported("prune"))
    }

    /// Per channel: the on-path writes since the nearest ancestor that stores a value
    /// for it (oldest first), and that value as the seed. See
    /// [`default_delta_channel_history`] for the walk.
    async fn get_delta_channel_history(
        &self,
        config: &CheckpointConfig,
        channels: &[String],
    ) -> Result<IndexMap<String, DeltaChannelHistory>> {
        default_delta_channel_history(self, config, channels).await
    }

    /// The next version of a channel. The default is Python's base saver: integers
    /// counting up from 1 (string versions are refused).
    ///
    /// # Errors
    ///
    /// [`ErrorKind::InvalidVersion`](crate::ErrorKind::InvalidVersion) for a string version
    /// or an integer at `i64::MAX`, in the default.
    fn get_next_version(&self, current: Option<&ChannelVersion>) -> Result<ChannelVersion> {
        match current {
            None => Ok(ChannelVersion::Int(1)),
            Some(ChannelVersion::Int(i)) => i
                .checked_add(1)
                .map(ChannelVersion::Int)
                .ok_or_else(|| super::error::overflow(&i.to_string())),
            Some(ChannelVersion::Float(f)) => Ok(ChannelVersion::Float(f + 1.0)),
            Some(v @ ChannelVersion::Str(_)) => Err(SaverFault::InvalidVersion {
                version: v.to_string(),
                reason: "the base saver only counts int and float versions".to_owned(),
            }
            .into()),
        }
    }
}

/// Python's default `BaseCheckpointSaver.get_delta_channel_history`: walks
/// [`get_tuple`](CheckpointSaver::get_tuple) and `parent_config` once for all channels.
/// Stops on a parent cycle (which only corrupt storage can have) instead of looping.
///
/// # Errors
///
/// Whatever `saver.get_tuple` returns for a checkpoint of the chain (storage, decoding
/// or config errors); a missing checkpoint is not an error (its history is empty).
pub async fn default_delta_channel_history<S: CheckpointSaver + ?Sized>(
    saver: &S,
    config: &CheckpointConfig,
    channels: &[String],
) -> Result<IndexMap<String, DeltaChannelHistory>> {
    if channels.is_empty() {
        return Ok(IndexMap::new());
    }
    let mut collected: IndexMap<String, Vec<PendingWrite>> =
        channels.iter().map(|c| (c.clone(), Vec::new())).collect();
    let mut seeds: IndexMap<String, Value> = IndexMap::new();
    let mut remaining: HashSet<String> = channels.iter().cloned().collect();
    let mut visited: HashSet<String> = HashSet::new();

    let target = saver.get_tuple(config).await?;
    let mut cursor = target.and_then(|t| t.parent_config);
    while let Some(cfg) = cursor {
        if remaining.is_empty() {
            break;
        }
        if let Some(id) = &cfg.checkpoint_id {
            if !visited.insert(id.clone()) {
                break;
            }
        }
        let Some(tuple) = saver.get_tuple(&cfg).await? else {
            break;
        };
        for write in tuple.pending_writes.iter().rev() {
            if remaining.contains(&write.channel) {
                if let Some(list) = collected.get_mut(&write.channel) {
                    list.push(write.clone());
                }
            }
        }
        let done: Vec<String> = remaining
            .iter()
            .filter(|ch| tuple.checkpoint.channel_values.contains_key(*ch))
            .cloned()
            .collect();
        for ch in done {
            if let Some(v) = tuple.checkpoint.channel_values.get(&ch) {
                seeds.insert(ch.clone(), v.clone());
            }
            remaining.remove(&ch);
        }
        cursor = tuple.parent_config;
    }
    Ok(finish(collected, seeds))
}

macro_rules! forward_saver {
    ($ty:ty) => {
        #[async_trait]
        impl<S: CheckpointSaver + ?Sized> CheckpointSaver for $ty {
            async fn put(
                &self,
                config: &CheckpointConfig,
                checkpoint: &Checkpoint,
                metadata: &CheckpointMetadata,
                new_versions: &ChannelVersions,
            ) -> Result<CheckpointConfig> {
                (**self)
                    .put(config, checkpoint, metadata, new_versions)
                    .await
            }
            async fn put_writes(
                &self,
                config: &CheckpointConfig,
                writes: &[(String, Value)],
                task_id: &str,
                task_path: &str,
            ) -> Result<()> {
                (**self)
                    .put_writes(config, writes, task_id, task_path)
                    .await
            }
            async fn get_tuple(
                &self,
                config: &CheckpointConfig,
            ) -> Result<Option<CheckpointTuple>> {
                (**self).get_tuple(config).await
            }
            async fn list(
                &self,
                config: Option<&CheckpointConfig>,
                options: &ListOptions,
            ) -> Result<Vec<CheckpointTuple>> {
                (**self).list(config, options).await
            }
            async fn delete_thread(&self, thread_id: &str) -> Result<()> {
                (**self).delete_thread(thread_id).await
            }
            async fn verify(&self) -> Result<()> {
                (**self).verify().await
            }
            fn capabilities(&self) -> Capabilities {
                (**self).capabilities()
            }
            async fn delete_for_runs(&self, run_ids: &[String]) -> Result<()> {
                (**self).delete_for_runs(run_ids).await
            }
            async fn copy_thread(&self, source: &str, target: &str) -> Result<()> {
                (**self).copy_thread(source, target).await
            }
            async fn prune(&self, thread_ids: &[String], strategy: PruneStrategy) -> Result<()> {
                (**self).prune(thread_ids, strategy).await
            }
            async fn get_delta_channel_history(
                &self,
                config: &CheckpointConfig,
                channels: &[String],
            ) -> Result<IndexMap<String, DeltaChannelHistory>> {
                (**self).get_delta_channel_history(config, channels).await
            }
            fn get_next_version(&self, current: Option<&ChannelVersion>) -> Result<ChannelVersion> {
                (**self).get_next_version(current)
            }
        }
    };
}

forward_saver!(Arc<S>);
forward_saver!(Box<S>);
