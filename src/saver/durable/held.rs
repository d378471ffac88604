//! The `exit` mode's held state: every call since the last flush, kept in memory.
//!
//! Two views of the same calls: a staging [`InMemorySaver`] that answers reads of the
//! held checkpoints with the reference saver's semantics (write idempotency, pending
//! write order, list filters, parent configs), and the log of the calls themselves,
//! which `flush` turns into the writes LangGraph's `exit` mode makes when a run ends.

use std::collections::HashSet;

use indexmap::IndexMap;

use super::queue::Op;
use crate::saver::memory::InMemorySaver;
use crate::saver::traits::{CheckpointSaver, PruneStrategy};
use crate::saver::types::{
    ChannelVersions, Checkpoint, CheckpointConfig, CheckpointMetadata, PendingWrite,
};
use crate::saver::Result;
use crate::value::Value;

/// `(thread, ns, checkpoint id)`.
type Key = (String, String, String);

struct PutEntry {
    config: CheckpointConfig,
    checkpoint: Checkpoint,
    metadata: CheckpointMetadata,
    new_versions: ChannelVersions,
}

struct WriteEntry {
    key: Key,
    config: CheckpointConfig,
    writes: Vec<(String, Value)>,
    task_id: String,
    task_path: String,
}

/// What one thread's flush writes and leaves out.
pub(crate) struct Plan {
    pub(crate) ops: Vec<Op>,
    pub(crate) dropped_checkpoints: usize,
    pub(crate) dropped_writes: usize,
}

pub(crate) struct Held {
    staging: InMemorySaver,
    puts: IndexMap<Key, PutEntry>,
    writes: Vec<WriteEntry>,
}

impl Held {
    pub(crate) fn new() -> Self {
        Held {
            staging: InMemorySaver::new(),
            puts: IndexMap::new(),
            writes: Vec::new(),
        }
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.puts.is_empty() && self.writes.is_empty()
    }

    /// Held calls (checkpoints and `put_writes` calls).
    pub(crate) fn len(&self) -> usize {
        self.puts.len() + self.writes.len()
    }

    pub(crate) fn has_thread(&self, thread: &str) -> bool {
        self.puts.keys().any(|k| k.0 == thread) || self.writes.iter().any(|w| w.key.0 == thread)
    }

    /// Whether `(thread, ns, id)` is a held checkpoint.
    pub(crate) fn holds_checkpoint(&self, thread: &str, ns: &str, id: &str) -> bool {
        self.puts
            .contains_key(&(thread.to_owned(), ns.to_owned(), id.to_owned()))
    }

    pub(crate) fn staging(&self) -> &InMemorySaver {
        &self.staging
    }

    /// Holds a checkpoint. The staging saver stores a value for every channel the
    /// checkpoint carries, so reads return the checkpoint as given even when the
    /// versions it reuses were stored by an earlier flush.
    pub(crate) async fn put(
        &mut self,
        config: &CheckpointConfig,
        checkpoint: &Checkpoint,
        metadata: &CheckpointMetadata,
        new_versions: &ChannelVersions,
    ) -> Result<CheckpointConfig> {
        let out = self
            .staging
            .put(config, checkpoint, metadata, &checkpoint.channel_versions)
            .await?;
        let thread = config.require_thread_id("put")?.to_owned();
        self.puts.insert(
            (thread, config.ns().to_owned(), checkpoint.id.clone()),
            PutEntry {
                config: config.clone(),
                checkpoint: checkpoint.clone(),
                metadata: metadata.clone(),
                new_versions: new_versions.clone(),
            },
        );
        Ok(out)
    }

    pub(crate) async fn put_writes(
        &mut self,
        config: &CheckpointConfig,
        writes: &[(String, Value)],
        task_id: &str,
        task_path: &str,
    ) -> Result<()> {
        self.staging
            .put_writes(config, writes, task_id, task_path)
            .await?;
        let thread = config.require_thread_id("put_writes")?.to_owned();
        let id = config.require_checkpoint_id("put_writes")?.to_owned();
        self.writes.push(WriteEntry {
            key: (thread, config.ns().to_owned(), id),
            config: config.clone(),
            writes: writes.to_vec(),
            task_id: task_id.to_owned(),
            task_path: task_path.to_owned(),
        });
        Ok(())
    }

    /// Held writes against a checkpoint that is not held (one already in the store),
    /// in call order, as the store will return them after a flush (a regular write a
    /// task already made there is kept once, as savers keep the first).
    pub(crate) fn writes_on_stored(
        &self,
        thread: &str,
        ns: &str,
        id: &str,
        stored: &[PendingWrite],
    ) -> Vec<PendingWrite> {
        let mut out = Vec::new();
        for w in self
            .writes
            .iter()
            .filter(|w| w.key.0 == thread && w.key.1 == ns && w.key.2 == id)
        {
            let task_has_stored = stored.iter().any(|s| s.task_id == w.task_id);
            for (channel, value) in &w.writes {
                let special = crate::saver::WRITES_IDX_MAP
                    .iter()
                    .any(|(c, _)| c == channel);
                if task_has_stored && !special {
                    continue;
                }
                out.push(PendingWrite::new(
                    w.task_id.as_str(),
                    channel.as_str(),
                    value.clone(),
                ));
            }
        }
        out
    }

    /// Forgets a thread (after `delete_thread`, or once its flush is written).
    pub(crate) async fn forget_thread(&mut self, thread: &str) -> Result<()> {
        self.staging.delete_thread(thread).await?;
        self.puts.retain(|k, _| k.0 != thread);
        self.writes.retain(|w| w.key.0 != thread);
        Ok(())
    }

    /// Copies a thread's held calls to another thread, as `copy_thread` copies stored
    /// ones.
    pub(crate) async fn copy_thread(&mut self, source: &str, target: &str) -> Result<()> {
        self.staging.copy_thread(source, target).await?;
        let retarget = |config: &CheckpointConfig| {
            let mut c = config.clone();
            c.thread_id = Some(target.to_owned());
            c
        };
        let puts: Vec<(Key, PutEntry)> = self
            .puts
            .iter()
            .filter(|(k, _)| k.0 == source)
            .map(|(k, e)| {
                (
                    (target.to_owned(), k.1.clone(), k.2.clone()),
                    PutEntry {
                        config: retarget(&e.config),
                        checkpoint: e.checkpoint.clone(),
                        metadata: e.metadata.clone(),
                        new_versions: e.new_versions.clone(),
                    },
                )
            })
            .collect();
        self.puts.extend(puts);
        let writes: Vec<WriteEntry> = self
            .writes
            .iter()
            .filter(|w| w.key.0 == source)
            .map(|w| WriteEntry {
                key: (target.to_owned(), w.key.1.clone(), w.key.2.clone()),
                config: retarget(&w.config),
                writes: w.writes.clone(),
                task_id: w.task_id.clone(),
                task_path: w.task_path.clone(),
            })
            .collect();
        self.writes.extend(writes);
        Ok(())
    }

    /// `delete_for_runs` on the held state.
    pub(crate) async fn delete_for_runs(&mut self, run_ids: &[String]) -> Result<()> {
        self.staging.delete_for_runs(run_ids).await?;
        self.forget_gone().await
    }

    /// `prune` on the held state.
    pub(crate) async fn prune(
        &mut self,
        threads: &[String],
        strategy: PruneStrategy,
    ) -> Result<()> {
        self.staging.prune(threads, strategy).await?;
        if strategy == PruneStrategy::Delete {
            let threads: HashSet<&str> = threads.iter().map(String::as_str).collect();
            self.puts.retain(|k, _| !threads.contains(k.0.as_str()));
            self.writes.retain(|w| !threads.contains(w.key.0.as_str()));
            return Ok(());
        }
        self.forget_gone().await
    }

    /// Drops the logged calls of held checkpoints the staging saver no longer has.
    async fn forget_gone(&mut self) -> Result<()> {
        let mut gone = HashSet::new();
        for key in self.puts.keys() {
            let config = CheckpointConfig::for_checkpoint(&key.0, &key.1, &key.2);
            if self.staging.get_tuple(&config).await?.is_none() {
                gone.insert(key.clone());
            }
        }
        self.puts.retain(|k, _| !gone.contains(k));
        self.writes.retain(|w| !gone.contains(&w.key));
        Ok(())
    }

    /// The threads with held calls, in the order they were first held.
    pub(crate) fn threads(&self) -> Vec<String> {
        let mut seen = HashSet::new();
        let mut out = Vec::new();
        for t in self
            .puts
            .keys()
            .map(|k| &k.0)
            .chain(self.writes.iter().map(|w| &w.key.0))
        {
            if seen.insert(t.clone()) {
                out.push(t.clone());
            }
        }
        out
    }

    /// What `exit` writes for one thread, as LangGraph does when a run ends: per
    /// namespace, only the latest held checkpoint (the greatest id, as "latest" is
    /// read), stored under its own id with its parent moved to the nearest ancestor
    /// that is not held (the checkpoint the run started from, already stored; none on
    /// a thread's first run) and with a blob for every channel the dropped
    /// intermediate checkpoints gave a new version (at the final checkpoint's
    /// version); then every held `put_writes` call, in call order, except those
    /// against a dropped intermediate checkpoint (their values are already in the
    /// checkpoints after them).
    pub(crate) fn plan(&self, thread: &str) -> Plan {
        let mut finals: IndexMap<&str, &Key> = IndexMap::new();
        for key in self.puts.keys().filter(|k| k.0 == thread) {
            match finals.get(key.1.as_str()) {
                Some(best) if best.2 >= key.2 => {}
                _ => {
                    finals.insert(key.1.as_str(), key);
                }
            }
        }
        let mut ops = Vec::new();
        for (ns, key) in &finals {
            let Some(last) = self.puts.get(*key) else {
                continue;
            };
            // The chain of held ancestors, newest first, and the first stored one.
            let mut chain = vec![last];
            let mut parent = last.config.checkpoint_id.clone();
            while let Some(p) = parent.clone() {
                match self
                    .puts
                    .get(&(thread.to_owned(), (*ns).to_owned(), p.clone()))
                {
                    Some(entry) if !chain.iter().any(|c| c.checkpoint.id == p) => {
                        parent = entry.config.checkpoint_id.clone();
                        chain.push(entry);
                    }
                    _ => break,
                }
            }
            let mut new_versions = ChannelVersions::new();
            for entry in chain.iter().rev() {
                for ch in entry.new_versions.keys() {
                    if let Some(v) = last.checkpoint.channel_versions.get(ch) {
                        new_versions.insert(ch.clone(), v.clone());
                    }
                }
            }
            let mut config = last.config.clone();
            config.checkpoint_id = parent;
            ops.push(Op::Put {
                config,
                checkpoint: last.checkpoint.clone(),
                metadata: last.metadata.clone(),
                new_versions,
            });
        }
        let dropped: HashSet<&Key> = self
            .puts
            .keys()
            .filter(|k| k.0 == thread && !finals.values().any(|f| *f == *k))
            .collect();
        let mut dropped_writes = 0;
        for w in self.writes.iter().filter(|w| w.key.0 == thread) {
            if dropped.contains(&w.key) {
                dropped_writes += 1;
                continue;
            }
            ops.push(Op::Writes {
                config: w.config.clone(),
                writes: w.writes.clone(),
                task_id: w.task_id.clone(),
                task_path: w.task_path.clone(),
            });
        }
        Plan {
            ops,
            dropped_checkpoints: dropped.len(),
            dropped_writes,
        }
    }
}
