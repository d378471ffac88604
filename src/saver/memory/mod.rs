//! [`InMemorySaver`]: Python's `InMemorySaver`, row for row, plus the extended
//! capabilities, safe under concurrent use.

use std::collections::{BTreeSet, HashSet};
use std::fmt;
use std::sync::{Arc, RwLock, RwLockReadGuard, RwLockWriteGuard};

use async_trait::async_trait;
use indexmap::IndexMap;

mod rows;
mod store;

use self::rows::{CheckpointRow, WriteRow};
use self::store::{space_mut, Namespace, Store, VersionKey};
use super::delta::{finish, needed_ancestors, ChainNode};
use super::rows::{RawBlobRow, RawCheckpointRow, RawRows, RawWriteRow};
use super::traits::{Capabilities, CheckpointSaver, ListOptions, PruneStrategy};
use super::types::{
    checkpoint_metadata, next_string_version, python_eq, write_idx, ChannelVersion,
    ChannelVersions, Checkpoint, CheckpointConfig, CheckpointMetadata, CheckpointTuple,
    DeltaChannelHistory, PendingWrite,
};
use crate::compression::{DecompressionBudget, DEFAULT_MAX_DECOMPRESSED_PER_CALL};
use crate::saver::Result;
use crate::serializer::{tags, JsonPlusSerializer, Serializer, TypedBytes};
use crate::value::Value;

/// Python's `InMemorySaver`, over any [`Serializer`].
///
/// It stores only `(type, bytes)` pairs laid out as Python lays them out: the
/// checkpoint without `channel_values`, one blob per `(channel, version)` in
/// `new_versions` (`("empty", b"")` for a channel without a value), the metadata merged
/// from the config, the parent id from the incoming config, writes keyed by
/// `(task_id, idx)`. With an encrypting serializer every row at rest is ciphertext
/// (see [`export_rows`](Self::export_rows)).
///
/// All operations take a lock for their whole duration, so the saver can be shared by
/// many tasks (`Arc<InMemorySaver>`). Beyond Python's saver it implements
/// `delete_for_runs`, `copy_thread` and `prune`; neither of the deleting ones removes
/// a checkpoint that a kept checkpoint still needs to rebuild a delta channel (see
/// [`prune`](CheckpointSaver::prune)).
///
/// ```
/// use langgraph_codec::saver::{
///     Checkpoint, CheckpointConfig, CheckpointMetadata, CheckpointSaver, InMemorySaver,
/// };
/// use langgraph_codec::Value;
///
/// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
/// let saver = InMemorySaver::new();
/// let mut cp = Checkpoint::now(-1);
/// cp.channel_values.insert("topic".into(), Value::from("rust"));
/// let version = saver.get_next_version(None)?;
/// cp.channel_versions.insert("topic".into(), version.clone());
/// let new_versions = [("topic".to_owned(), version)].into_iter().collect();
/// let stored = saver
///     .put(&CheckpointConfig::new("t1"), &cp, &CheckpointMetadata::new("input", -1), &new_versions)
///     .await?;
/// let tuple = saver.get_tuple(&stored).await?.expect("just stored");
/// assert_eq!(tuple.checkpoint.channel_values.get("topic"), Some(&Value::from("rust")));
/// # Ok::<(), langgraph_codec::Error>(())
/// # }).unwrap();
/// ```
pub struct InMemorySaver {
    serde: Arc<dyn Serializer>,
    store: RwLock<Store>,
    max_decompressed_per_call: usize,
}

impl fmt::Debug for InMemorySaver {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("InMemorySaver")
            .field("serde", &self.serde)
            .finish_non_exhaustive()
    }
}

impl Default for InMemorySaver {
    fn default() -> Self {
        Self::new()
    }
}

impl InMemorySaver {
    /// A saver over Python's default [`JsonPlusSerializer`].
    pub fn new() -> Self {
        Self::with_serializer(Arc::new(JsonPlusSerializer::new()))
    }

    /// A saver over any serializer (e.g. an encrypting one).
    pub fn with_serializer(serde: Arc<dyn Serializer>) -> Self {
        InMemorySaver {
            serde,
            store: RwLock::new(Store::default()),
            max_decompressed_per_call: DEFAULT_MAX_DECOMPRESSED_PER_CALL,
        }
    }

    /// The most bytes the `+zlib` rows of one `get_tuple`, `list` or
    /// `get_delta_channel_history` call may decompress to in total (default
    /// [`DEFAULT_MAX_DECOMPRESSED_PER_CALL`], 1 GiB; see [`DecompressionBudget`]).
    /// Past it the call fails with
    /// [`ErrorKind::DecompressionBudget`](crate::ErrorKind::DecompressionBudget)
    /// inside [`ErrorKind::UnreadableRow`](crate::ErrorKind::UnreadableRow).
    pub fn with_max_decompressed_per_call(mut self, limit: usize) -> Self {
        self.max_decompressed_per_call = limit;
        self
    }

    /// The per-call decompression total in force.
    pub fn max_decompressed_per_call(&self) -> usize {
        self.max_decompressed_per_call
    }

    /// A fresh budget for one reading call.
    fn call_budget(&self) -> DecompressionBudget {
        DecompressionBudget::new(self.max_decompressed_per_call)
    }

    /// `list`'s decoding of the candidates it copied out, newest first.
    fn load_listed(
        &self,
        candidates: Vec<(String, String, String, CheckpointRow)>,
        options: &ListOptions,
    ) -> Result<Vec<CheckpointTuple>> {
        let mut results = Vec::new();
        for (thread, ns, id, row) in candidates {
            if options.limit.is_some_and(|l| results.len() >= l) {
                break;
            }
            let metadata = self.load_metadata(&thread, &ns, &id, &row)?;
            let matches = options
                .filter
                .iter()
                .all(|(k, want)| python_eq(want, metadata.get(k).unwrap_or(&Value::Nil)));
            if !matches {
                continue;
            }
            let cfg = CheckpointConfig::for_checkpoint(thread.as_str(), ns.as_str(), id.as_str());
            results.push(self.load_tuple(&thread, &ns, &id, &row, Some(metadata), cfg)?);
        }
        Ok(results)
    }

    /// `get_delta_channel_history`'s walk, decoding synchronously.
    fn delta_history(
        &self,
        config: &CheckpointConfig,
        channels: &[String],
    ) -> Result<IndexMap<String, DeltaChannelHistory>> {
        if channels.is_empty() {
            return Ok(IndexMap::new());
        }
        let thread = config.require_thread_id("get_delta_channel_history")?;
        let ns = config.ns();
        let mut collected: IndexMap<String, Vec<PendingWrite>> =
            channels.iter().map(|c| (c.clone(), Vec::new())).collect();
        let mut seeds: IndexMap<String, Value> = IndexMap::new();
        let mut remaining: HashSet<String> = channels.iter().cloned().collect();

        let store = self.read();
        let Some(space) = store.threads.get(thread).and_then(|t| t.get(ns)) else {
            return Ok(finish(collected, seeds));
        };
        let target = match config.checkpoint_id.as_deref().filter(|id| !id.is_empty()) {
            Some(id) => Some(id),
            None => space.checkpoints.keys().next_back().map(String::as_str),
        };
        let mut chain: Vec<&str> = Vec::new();
        let mut visited: HashSet<&str> = HashSet::new();
        let mut cursor = target
            .and_then(|id| space.checkpoints.get(id))
            .and_then(|row| row.parent.as_deref());
        while let Some(id) = cursor {
            let Some(row) = space.checkpoints.get(id) else {
                break;
            };
            if !visited.insert(id) {
                break;
            }
            chain.push(id);
            cursor = row.parent.as_deref();
        }
        for id in chain {
            if remaining.is_empty() {
                break;
            }
            let Some(row) = space.checkpoints.get(id) else {
                break;
            };
            let cp = self.load_checkpoint(thread, ns, id, row)?;
            let mut terminated: Vec<(String, Value)> = Vec::new();
            for ch in &remaining {
                let Some(ver) = cp.channel_versions.get(ch) else {
                    continue;
                };
                let Some(blob) = space.blob(ch, ver) else {
                    continue;
                };
                if blob.type_tag == tags::EMPTY {
                    continue;
                }
                terminated.push((ch.clone(), self.load_blob(thread, ns, ch, ver, blob)?));
            }
            for (idx, w) in space.ordered_writes(id).iter().rev() {
                if !remaining.contains(&w.channel) {
                    continue;
                }
                let write = self.load_write(thread, ns, id, *idx, w)?;
                if let Some(list) = collected.get_mut(&w.channel) {
                    list.push(write);
                }
            }
            for (ch, value) in terminated {
                remaining.remove(&ch);
                seeds.insert(ch, value);
            }
        }
        Ok(finish(collected, seeds))
    }

    /// The serializer rows are written with.
    pub fn serializer(&self) -> &Arc<dyn Serializer> {
        &self.serde
    }

    fn read(&self) -> RwLockReadGuard<'_, Store> {
        self.store.read().unwrap_or_else(|e| e.into_inner())
    }

    fn write(&self) -> RwLockWriteGuard<'_, Store> {
        self.store.write().unwrap_or_else(|e| e.into_inner())
    }

    /// A copy of every stored row, as `(type, bytes)` pairs: what is at rest.
    pub fn export_rows(&self) -> RawRows {
        let store = self.read();
        let mut rows = RawRows::default();
        for (thread, spaces) in &store.threads {
            for (ns, space) in spaces {
                for (id, row) in &space.checkpoints {
                    rows.checkpoints.push(RawCheckpointRow {
                        thread_id: thread.clone(),
                        checkpoint_ns: ns.clone(),
                        checkpoint_id: id.clone(),
                        checkpoint: row.checkpoint.clone(),
                        metadata: row.metadata.clone(),
                        parent_checkpoint_id: row.parent.clone(),
                    });
                }
                let mut blobs: Vec<_> = space.blobs.iter().collect();
                blobs.sort_by(|a, b| a.0.cmp(b.0));
                for ((channel, _), (version, value)) in blobs {
                    rows.blobs.push(RawBlobRow {
                        thread_id: thread.clone(),
                        checkpoint_ns: ns.clone(),
                        channel: channel.clone(),
                        version: version.clone(),
                        value: value.clone(),
                    });
                }
                let mut ids: Vec<&String> = space.writes.keys().collect();
                ids.sort();
                for id in ids {
                    for (idx, w) in space.ordered_writes(id) {
                        rows.writes.push(RawWriteRow {
                            thread_id: thread.clone(),
                            checkpoint_ns: ns.clone(),
                            checkpoint_id: id.clone(),
                            task_id: w.task_id,
                            idx,
                            channel: w.channel,
                            value: w.value,
                            task_path: w.task_path,
                        });
                    }
                }
            }
        }
        rows
    }

    /// Stores rows as they are (replacing rows with the same key): e.g. rows exported
    /// from another saver, or Python's `InMemorySaver` storage. Nothing is decoded.
    pub fn import_rows(&self, rows: RawRows) {
        let mut store = self.write();
        for r in rows.checkpoints {
            space_mut(&mut store, &r.thread_id, &r.checkpoint_ns)
                .checkpoints
                .insert(
                    r.checkpoint_id,
                    CheckpointRow {
                        checkpoint: r.checkpoint,
                        metadata: r.metadata,
                        parent: r.parent_checkpoint_id,
                    },
                );
        }
        for b in rows.blobs {
            space_mut(&mut store, &b.thread_id, &b.checkpoint_ns)
                .blobs
                .insert(
                    (b.channel, VersionKey::new(&b.version)),
                    (b.version, b.value),
                );
        }
        for w in rows.writes {
            space_mut(&mut store, &w.thread_id, &w.checkpoint_ns)
                .writes
                .entry(w.checkpoint_id)
                .or_default()
                .insert(
                    (w.task_id.clone(), w.idx),
                    WriteRow {
                        task_id: w.task_id,
                        channel: w.channel,
                        value: w.value,
                        task_path: w.task_path,
                    },
                );
        }
    }

    /// The ancestors the `keep` checkpoints of one namespace need to rebuild their
    /// delta channels ([`needed_ancestors`]); a channel is stored when its blob at the
    /// checkpoint's version is not `empty`.
    fn needed_ancestors(
        &self,
        thread: &str,
        ns: &str,
        space: &Namespace,
        keep: &BTreeSet<String>,
    ) -> BTreeSet<String> {
        needed_ancestors(keep, |id| {
            let row = space.checkpoints.get(id)?;
            Some(ChainNode {
                parent: row.parent.clone(),
                stored: self.load_checkpoint(thread, ns, id, row).ok().map(|cp| {
                    cp.channel_versions
                        .iter()
                        .filter(|(ch, v)| space.has_value(ch, Some(v)))
                        .map(|(ch, _)| ch.clone())
                        .collect()
                }),
                delta_channels: self
                    .load_metadata(thread, ns, id, row)
                    .ok()
                    .map(|md| md.counters_since_delta_snapshot().into_keys().collect()),
            })
        })
    }

    /// Keeps only the `keep` checkpoints of a namespace, their writes, and the blobs
    /// they reference. Blobs are left alone if a kept checkpoint cannot be read.
    fn retain_only(&self, thread: &str, ns: &str, space: &mut Namespace, keep: &BTreeSet<String>) {
        space.checkpoints.retain(|id, _| keep.contains(id));
        space.writes.retain(|id, _| keep.contains(id));
        let mut referenced: HashSet<(String, VersionKey)> = HashSet::new();
        for (id, row) in &space.checkpoints {
            match self.load_checkpoint(thread, ns, id, row) {
                Ok(cp) => referenced.extend(
                    cp.channel_versions
                        .iter()
                        .map(|(ch, v)| (ch.clone(), VersionKey::new(v))),
                ),
                Err(_) => return,
            }
        }
        space.blobs.retain(|k, _| referenced.contains(k));
    }
}

#[async_trait]
impl CheckpointSaver for InMemorySaver {
    async fn put(
        &self,
        config: &CheckpointConfig,
        checkpoint: &Checkpoint,
        metadata: &CheckpointMetadata,
        new_versions: &ChannelVersions,
    ) -> Result<CheckpointConfig> {
        let thread = config.require_thread_id("put")?;
        let ns = config.ns();
        let mut blobs = Vec::with_capacity(new_versions.len());
        for (ch, ver) in new_versions {
            let value = match checkpoint.channel_values.get(ch) {
                Some(v) => self.serde.dumps_typed(v)?,
                None => TypedBytes::new(tags::EMPTY, Vec::new()),
            };
            blobs.push((ch.clone(), ver.clone(), value));
        }
        let row = CheckpointRow {
            checkpoint: self.serde.dumps_typed(&checkpoint.to_row_value())?,
            metadata: self
                .serde
                .dumps_typed(&checkpoint_metadata(config, metadata).to_value())?,
            parent: config.checkpoint_id.clone(),
        };
        {
            let mut store = self.write();
            let space = space_mut(&mut store, thread, ns);
            for (ch, ver, value) in blobs {
                space
                    .blobs
                    .insert((ch, VersionKey::new(&ver)), (ver, value));
            }
            space.checkpoints.insert(checkpoint.id.clone(), row);
        }
        Ok(CheckpointConfig::for_checkpoint(
            thread,
            ns,
            checkpoint.id.clone(),
        ))
    }

    async fn put_writes(
        &self,
        config: &CheckpointConfig,
        writes: &[(String, Value)],
        task_id: &str,
        task_path: &str,
    ) -> Result<()> {
        let thread = config.require_thread_id("put_writes")?;
        let checkpoint_id = config.require_checkpoint_id("put_writes")?;
        let ns = config.ns();
        let mut rows = Vec::with_capacity(writes.len());
        for (position, (channel, value)) in writes.iter().enumerate() {
            rows.push((
                write_idx(channel, position),
                WriteRow {
                    task_id: task_id.to_owned(),
                    channel: channel.clone(),
                    value: self.serde.dumps_typed(value)?,
                    task_path: task_path.to_owned(),
                },
            ));
        }
        let mut store = self.write();
        let stored = space_mut(&mut store, thread, ns)
            .writes
            .entry(checkpoint_id.to_owned())
            .or_default();
        for (idx, row) in rows {
            let key = (task_id.to_owned(), idx);
            // A retried task must not duplicate its regular writes; the special
            // (negative-index) ones are replaced.
            if idx >= 0 && stored.contains_key(&key) {
                continue;
            }
            stored.insert(key, row);
        }
        Ok(())
    }

    async fn get_tuple(&self, config: &CheckpointConfig) -> Result<Option<CheckpointTuple>> {
        let thread = config.require_thread_id("get_tuple")?;
        let ns = config.ns();
        let found = {
            let store = self.read();
            let space = store.threads.get(thread).and_then(|t| t.get(ns));
            match config.checkpoint_id.as_deref().filter(|id| !id.is_empty()) {
                Some(id) => space
                    .and_then(|s| s.checkpoints.get(id))
                    .map(|row| (id.to_owned(), row.clone(), config.clone())),
                None => space
                    .and_then(|s| s.checkpoints.last_key_value())
                    .map(|(id, row)| {
                        (
                            id.clone(),
                            row.clone(),
                            CheckpointConfig::for_checkpoint(thread, ns, id.clone()),
                        )
                    }),
            }
        };
        match found {
            None => Ok(None),
            Some((id, row, out_config)) => self
                .call_budget()
                .scope(|| self.load_tuple(thread, ns, &id, &row, None, out_config))
                .map(Some),
        }
    }

    /// Python's `InMemorySaver.list`: threads in the order the store first saw them,
    /// namespaces likewise, ids newest first within a namespace (not one global id
    /// order, which the SQL savers give).
    ///
    /// One difference in that order, on purpose: Python's storage is a `defaultdict`, so
    /// merely *reading* a thread (`get_tuple`) creates its entry and fixes its place,
    /// while `put_writes` alone does not. Here a thread takes its place at its first
    /// `put` or `put_writes`; reads never change the store. Listing one thread (the
    /// usual call) is the same either way.
    async fn list(
        &self,
        config: Option<&CheckpointConfig>,
        options: &ListOptions,
    ) -> Result<Vec<CheckpointTuple>> {
        let only_thread = match config {
            Some(c) => Some(c.require_thread_id("list")?.to_owned()),
            None => None,
        };
        let only_ns = config.and_then(|c| c.checkpoint_ns.clone());
        let only_id = config
            .and_then(|c| c.checkpoint_id.clone())
            .filter(|id| !id.is_empty());
        let before = options
            .before
            .as_ref()
            .and_then(|b| b.checkpoint_id.clone())
            .filter(|id| !id.is_empty());
        // Candidates, newest first per namespace, copied out under the lock.
        let candidates: Vec<(String, String, String, CheckpointRow)> = {
            let store = self.read();
            let threads: Vec<&String> = match &only_thread {
                Some(t) => store
                    .threads
                    .get_key_value(t)
                    .map(|(k, _)| k)
                    .into_iter()
                    .collect(),
                None => store.threads.keys().collect(),
            };
            let mut out = Vec::new();
            for thread in threads {
                let Some(spaces) = store.threads.get(thread) else {
                    continue;
                };
                for (ns, space) in spaces {
                    if only_ns.as_ref().is_some_and(|n| n != ns) {
                        continue;
                    }
                    for (id, row) in space.checkpoints.iter().rev() {
                        if only_id.as_ref().is_some_and(|x| x != id)
                            || before.as_ref().is_some_and(|b| id >= b)
                        {
                            continue;
                        }
                        out.push((thread.clone(), ns.clone(), id.clone(), row.clone()));
                    }
                }
            }
            out
        };
        self.call_budget()
            .scope(|| self.load_listed(candidates, options))
    }

    async fn delete_thread(&self, thread_id: &str) -> Result<()> {
        self.write().threads.shift_remove(thread_id);
        Ok(())
    }

    fn capabilities(&self) -> Capabilities {
        Capabilities::ALL
    }

    /// Deletes the checkpoints whose metadata `run_id` is in `run_ids`, with their
    /// writes and the blobs no remaining checkpoint references. A checkpoint that a
    /// remaining checkpoint still needs to rebuild a delta channel (an ancestor up to
    /// its nearest stored value) is kept. Rows whose metadata cannot be read are never
    /// matched.
    async fn delete_for_runs(&self, run_ids: &[String]) -> Result<()> {
        if run_ids.is_empty() {
            return Ok(());
        }
        let mut store = self.write();
        for (thread, spaces) in store.threads.iter_mut() {
            for (ns, space) in spaces.iter_mut() {
                let doomed: BTreeSet<String> = space
                    .checkpoints
                    .iter()
                    .filter(|(id, row)| {
                        self.load_metadata(thread, ns, id, row)
                            .ok()
                            .and_then(|m| m.run_id().map(|r| run_ids.iter().any(|x| x == r)))
                            .unwrap_or(false)
                    })
                    .map(|(id, _)| id.clone())
                    .collect();
                if doomed.is_empty() {
                    continue;
                }
                let survivors: BTreeSet<String> = space
                    .checkpoints
                    .keys()
                    .filter(|id| !doomed.contains(*id))
                    .cloned()
                    .collect();
                let needed = self.needed_ancestors(thread, ns, space, &survivors);
                let keep: BTreeSet<String> = survivors.union(&needed).cloned().collect();
                self.retain_only(thread, ns, space, &keep);
            }
        }
        Ok(())
    }

    /// Copies every namespace, checkpoint, write and blob of `source_thread_id` to
    /// `target_thread_id` (rows as they are, so the whole parent chain comes along).
    /// A missing source copies nothing.
    async fn copy_thread(&self, source_thread_id: &str, target_thread_id: &str) -> Result<()> {
        if source_thread_id == target_thread_id {
            return Ok(());
        }
        let mut store = self.write();
        let Some(source) = store.threads.get(source_thread_id).cloned() else {
            return Ok(());
        };
        let target = store
            .threads
            .entry(target_thread_id.to_owned())
            .or_default();
        for (ns, space) in source {
            let dst = target.entry(ns).or_default();
            dst.checkpoints.extend(space.checkpoints);
            dst.blobs.extend(space.blobs);
            for (id, writes) in space.writes {
                dst.writes.entry(id).or_default().extend(writes);
            }
        }
        Ok(())
    }

    /// `KeepLatest` keeps the latest checkpoint of every namespace and the ancestors it
    /// needs to rebuild its delta channels (every ancestor up to the nearest one storing
    /// a value for each channel of its `counters_since_delta_snapshot`), with their
    /// writes and referenced blobs; everything else goes. `Delete` deletes the threads.
    async fn prune(&self, thread_ids: &[String], strategy: PruneStrategy) -> Result<()> {
        let mut store = self.write();
        for thread in thread_ids {
            match strategy {
                PruneStrategy::Delete => {
                    store.threads.shift_remove(thread);
                }
                PruneStrategy::KeepLatest => {
                    let Some(spaces) = store.threads.get_mut(thread) else {
                        continue;
                    };
                    for (ns, space) in spaces.iter_mut() {
                        let Some(latest) = space.checkpoints.keys().next_back().cloned() else {
                            continue;
                        };
                        let mut keep = BTreeSet::from([latest]);
                        let needed = self.needed_ancestors(thread, ns, space, &keep);
                        keep.extend(needed);
                        self.retain_only(thread, ns, space, &keep);
                    }
                }
            }
        }
        Ok(())
    }

    /// Python's `InMemorySaver` override: walks the stored parent ids once for all
    /// channels, reading rows directly.
    async fn get_delta_channel_history(
        &self,
        config: &CheckpointConfig,
        channels: &[String],
    ) -> Result<IndexMap<String, DeltaChannelHistory>> {
        self.call_budget()
            .scope(|| self.delta_history(config, channels))
    }

    /// Python's `InMemorySaver.get_next_version`: `f"{n + 1:032}.{random.random():016}"`
    /// where `n` is the integer before the first `.` of the current version (0 when
    /// there is none).
    fn get_next_version(&self, current: Option<&ChannelVersion>) -> Result<ChannelVersion> {
        next_string_version(current, "InMemorySaver")
    }
}
