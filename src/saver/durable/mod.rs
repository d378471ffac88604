//! [`DurableSaver`]: LangGraph's durability modes around any [`CheckpointSaver`].
//!
//! LangGraph Python (since 0.6) runs a graph with `durability="sync" | "async" |
//! "exit"`. This wrapper gives a Rust runtime the same three choices at the saver,
//! so a step does not wait on the store:
//!
//! - [`Durability::Sync`]: every call goes straight to the wrapped saver.
//! - [`Durability::Async`]: `put` and `put_writes` return once queued; background
//!   writers store them in call order per thread. Reads of a thread first wait until
//!   that thread's queued writes are stored (read-your-writes). The queue is bounded:
//!   a full queue makes the caller wait, nothing is dropped. A write that fails in the
//!   background stays queued and every later call returns
//!   [`ErrorKind::WriteBehind`](crate::ErrorKind::WriteBehind) until [`flush`](DurableSaver::flush) retries it
//!   successfully or [`discard_failed`](DurableSaver::discard_failed) removes it.
//! - [`Durability::Exit`]: calls are held in memory and reads see them; the store gets
//!   only what [`flush`](DurableSaver::flush) writes, which is what LangGraph writes
//!   when a run ends: per thread and namespace the latest checkpoint (intermediate
//!   ones are never written) and the pending writes against it.
//!
//! [`flush`](DurableSaver::flush) returns `Ok` only once the wrapped saver
//! acknowledged every write queued before the call; [`shutdown`](DurableSaver::shutdown)
//! refuses new calls, flushes and stops the writers. See `docs/durability.md` for when
//! to use which mode and the loss window of each.
//!
//! Needs a Tokio runtime with its timer enabled (`enable_all`): the `async` writers are
//! Tokio tasks and `flush` has a timeout.

mod held;
mod queue;

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use indexmap::IndexMap;

pub use queue::FailedWrite;

use held::Held;
use queue::{Item, Op, Queue};

use crate::saver::error::SaverFault;
use crate::saver::traits::default_delta_channel_history;
use crate::saver::traits::{Capabilities, CheckpointSaver, ListOptions, PruneStrategy};
use crate::saver::types::{
    ChannelVersion, ChannelVersions, Checkpoint, CheckpointConfig, CheckpointMetadata,
    CheckpointTuple, DeltaChannelHistory,
};
use crate::saver::Result;
use crate::value::Value;

/// LangGraph's durability mode (`langgraph.types.Durability`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
#[non_exhaustive]
pub enum Durability {
    /// `"sync"`: each write is stored before the call returns.
    Sync,
    /// `"async"` (LangGraph's default): writes are stored in the background while the
    /// caller goes on.
    #[default]
    Async,
    /// `"exit"`: only the final state of each thread is stored, at `flush`.
    Exit,
}

impl Durability {
    /// LangGraph's name: `"sync"`, `"async"`, `"exit"`.
    pub fn as_str(self) -> &'static str {
        match self {
            Durability::Sync => "sync",
            Durability::Async => "async",
            Durability::Exit => "exit",
        }
    }
}

/// How a [`DurableSaver`] queues.
#[derive(Clone, Debug)]
pub struct DurableOptions {
    /// The mode.
    pub mode: Durability,
    /// `async`: the most writes queued at once (split evenly over the writers); a
    /// caller that finds its writer's share full waits. Default 1024.
    pub capacity: usize,
    /// `async`: background writers. A thread's writes always go to the same writer,
    /// so they stay in order; more writers store different threads concurrently (a
    /// Postgres pool can use them; SQLite has one writer at a time anyway). Default 1.
    pub writers: usize,
}

impl DurableOptions {
    /// `mode` with the default capacity (1024) and one writer.
    pub fn new(mode: Durability) -> Self {
        DurableOptions {
            mode,
            capacity: 1024,
            writers: 1,
        }
    }

    /// The same options with this queue capacity.
    pub fn capacity(mut self, capacity: usize) -> Self {
        self.capacity = capacity;
        self
    }

    /// The same options with this many background writers.
    pub fn writers(mut self, writers: usize) -> Self {
        self.writers = writers;
        self
    }
}

/// What a [`flush`](DurableSaver::flush) did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct FlushReport {
    /// Calls (`put` / `put_writes`) the wrapped saver acknowledged during the flush.
    pub written: usize,
    /// `exit`: intermediate checkpoints left out (never written).
    pub dropped_checkpoints: usize,
    /// `exit`: `put_writes` calls left out because they were against an intermediate
    /// checkpoint.
    pub dropped_writes: usize,
}

/// A [`CheckpointSaver`] that stores through `S` with a [`Durability`] mode. See the
/// [module docs](self).
pub struct DurableSaver<S: CheckpointSaver + ?Sized + 'static> {
    inner: Arc<S>,
    mode: Durability,
    queue: Option<Queue>,
    held: Option<tokio::sync::Mutex<Held>>,
    closed: AtomicBool,
}

impl<S: CheckpointSaver + ?Sized + 'static> std::fmt::Debug for DurableSaver<S> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DurableSaver")
            .field("mode", &self.mode)
            .field("pending", &self.queue.as_ref().map(Queue::pending))
            .finish_non_exhaustive()
    }
}

impl<S: CheckpointSaver + ?Sized + 'static> DurableSaver<S> {
    /// `inner` in `mode`, with the default options. In `async` mode this must be
    /// called inside a Tokio runtime: the background writers are spawned on it.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::InvalidConfig`](crate::ErrorKind::InvalidConfig) in `async` mode outside a Tokio runtime.
    pub fn new(inner: Arc<S>, mode: Durability) -> Result<Self> {
        Self::with_options(inner, DurableOptions::new(mode))
    }

    /// `inner` with `options`. In `async` mode this must be called inside a Tokio
    /// runtime: the background writers are spawned on it.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::InvalidConfig`](crate::ErrorKind::InvalidConfig) in `async` mode outside a Tokio runtime.
    pub fn with_options(inner: Arc<S>, options: DurableOptions) -> Result<Self> {
        let queue = match options.mode {
            Durability::Async => {
                let handle = tokio::runtime::Handle::try_current().map_err(|e| {
                    SaverFault::InvalidConfig {
                        reason: format!(
                            "DurableSaver in async mode needs a Tokio runtime for its writers: {e}"
                        ),
                    }
                })?;
                Some(Queue::start(
                    inner.clone(),
                    options.capacity,
                    options.writers,
                    &handle,
                ))
            }
            _ => None,
        };
        let held = match options.mode {
            Durability::Exit => Some(tokio::sync::Mutex::new(Held::new())),
            _ => None,
        };
        Ok(DurableSaver {
            inner,
            mode: options.mode,
            queue,
            held,
            closed: AtomicBool::new(false),
        })
    }

    /// The mode.
    pub fn mode(&self) -> Durability {
        self.mode
    }

    /// The wrapped saver (reading it directly skips the queue).
    pub fn inner(&self) -> &Arc<S> {
        &self.inner
    }

    /// Writes not yet acknowledged by the wrapped saver: queued or in flight
    /// (`async`), or held checkpoints and `put_writes` calls (`exit`).
    pub async fn pending(&self) -> usize {
        if let Some(q) = &self.queue {
            return q.pending();
        }
        match &self.held {
            Some(h) => h.lock().await.len(),
            None => 0,
        }
    }

    /// Stores everything written before this call, and returns once the wrapped
    /// saver acknowledged it: `async` waits for the queue up to this call (retrying a
    /// write that failed in the background first); `exit` writes each thread's final
    /// state (see the [module docs](self)) and forgets it. `sync` has nothing to do.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::FlushTimeout`](crate::ErrorKind::FlushTimeout) after `timeout` (nothing is lost: what was not
    /// written stays queued or held, and a later flush writes it);
    /// [`ErrorKind::WriteBehind`](crate::ErrorKind::WriteBehind) when a write fails (it stays queued or held).
    pub async fn flush(&self, timeout: Duration) -> Result<FlushReport> {
        match tokio::time::timeout(timeout, self.flush_now()).await {
            Ok(result) => result,
            Err(_) => Err(SaverFault::FlushTimeout {
                timeout,
                pending: self.pending().await,
            }
            .into()),
        }
    }

    async fn flush_now(&self) -> Result<FlushReport> {
        if let Some(q) = &self.queue {
            let written = q.flush().await?;
            return Ok(FlushReport {
                written,
                ..FlushReport::default()
            });
        }
        let mut report = FlushReport::default();
        let Some(held) = &self.held else {
            return Ok(report);
        };
        let mut held = held.lock().await;
        for thread in held.threads() {
            let plan = held.plan(&thread);
            report.dropped_checkpoints += plan.dropped_checkpoints;
            report.dropped_writes += plan.dropped_writes;
            for op in plan.ops {
                let item = Item {
                    thread: thread.clone(),
                    op,
                };
                if let Err(e) = item.run(&*self.inner).await {
                    return Err(crate::saver::error::write_behind(
                        item.operation(),
                        &thread,
                        &item.checkpoint_id(),
                        Arc::new(e),
                    ));
                }
                report.written += 1;
            }
            held.forget_thread(&thread).await?;
        }
        Ok(report)
    }

    /// Refuses every later call ([`ErrorKind::SaverClosed`](crate::ErrorKind::SaverClosed); `flush` and
    /// `discard_failed` still work), flushes, and lets the background writers exit.
    ///
    /// # Errors
    ///
    /// As [`flush`](Self::flush); the saver stays closed and what was not written
    /// stays queued for another `flush`.
    pub async fn shutdown(&self, timeout: Duration) -> Result<FlushReport> {
        self.closed.store(true, Ordering::SeqCst);
        let report = self.flush(timeout).await?;
        if let Some(q) = &self.queue {
            q.close();
        }
        Ok(report)
    }

    /// Removes the writes that failed in the background (`async`) from the queue and
    /// returns them, so the queue goes on. Later writes of the same thread may then
    /// refer to a checkpoint the store does not have.
    pub fn discard_failed(&self) -> Vec<FailedWrite> {
        self.queue
            .as_ref()
            .map(Queue::discard_failed)
            .unwrap_or_default()
    }

    /// Refuses calls after shutdown and while a background write is failed.
    fn check(&self, operation: &'static str) -> Result<()> {
        if self.closed.load(Ordering::SeqCst) {
            return Err(SaverFault::Closed { operation }.into());
        }
        match self.queue.as_ref().and_then(Queue::failure) {
            Some(e) => Err(e),
            None => Ok(()),
        }
    }

    /// `async`: waits until `thread`'s queued writes (every thread's for `None`) are
    /// stored.
    async fn drained(&self, thread: Option<&str>) -> Result<()> {
        match &self.queue {
            Some(q) => q.drained(thread).await,
            None => Ok(()),
        }
    }

    /// `exit`: a stored tuple with the held writes against it added.
    fn with_held_writes(held: &Held, mut tuple: CheckpointTuple) -> CheckpointTuple {
        let (Some(thread), Some(id)) = (
            tuple.config.thread_id.as_deref(),
            tuple.config.checkpoint_id.as_deref(),
        ) else {
            return tuple;
        };
        let extra = held.writes_on_stored(thread, tuple.config.ns(), id, &tuple.pending_writes);
        tuple.pending_writes.extend(extra);
        tuple
    }
}

/// The newer of two tuples by checkpoint id (`a` on a tie).
fn newer(a: Option<CheckpointTuple>, b: Option<CheckpointTuple>) -> Option<CheckpointTuple> {
    match (a, b) {
        (Some(a), Some(b)) => Some(if b.checkpoint.id > a.checkpoint.id {
            b
        } else {
            a
        }),
        (a, b) => a.or(b),
    }
}

#[async_trait]
impl<S: CheckpointSaver + ?Sized + 'static> CheckpointSaver for DurableSaver<S> {
    async fn put(
        &self,
        config: &CheckpointConfig,
        checkpoint: &Checkpoint,
        metadata: &CheckpointMetadata,
        new_versions: &ChannelVersions,
    ) -> Result<CheckpointConfig> {
        self.check("put")?;
        if let Some(q) = &self.queue {
            let thread = config.require_thread_id("put")?.to_owned();
            // What every saver returns, computed without the store.
            let out = CheckpointConfig::for_checkpoint(
                thread.as_str(),
                config.ns(),
                checkpoint.id.as_str(),
            );
            q.push(Item {
                thread,
                op: Op::Put {
                    config: config.clone(),
                    checkpoint: checkpoint.clone(),
                    metadata: metadata.clone(),
                    new_versions: new_versions.clone(),
                },
            })
            .await?;
            return Ok(out);
        }
        if let Some(held) = &self.held {
            return held
                .lock()
                .await
                .put(config, checkpoint, metadata, new_versions)
                .await;
        }
        self.inner
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
        self.check("put_writes")?;
        if let Some(q) = &self.queue {
            let thread = config.require_thread_id("put_writes")?.to_owned();
            config.require_checkpoint_id("put_writes")?;
            return q
                .push(Item {
                    thread,
                    op: Op::Writes {
                        config: config.clone(),
                        writes: writes.to_vec(),
                        task_id: task_id.to_owned(),
                        task_path: task_path.to_owned(),
                    },
                })
                .await;
        }
        if let Some(held) = &self.held {
            return held
                .lock()
                .await
                .put_writes(config, writes, task_id, task_path)
                .await;
        }
        self.inner
            .put_writes(config, writes, task_id, task_path)
            .await
    }

    async fn get_tuple(&self, config: &CheckpointConfig) -> Result<Option<CheckpointTuple>> {
        self.check("get_tuple")?;
        self.drained(config.thread_id.as_deref()).await?;
        let Some(held) = &self.held else {
            return self.inner.get_tuple(config).await;
        };
        let held = held.lock().await;
        let thread = config.require_thread_id("get_tuple")?;
        if !held.has_thread(thread) {
            return self.inner.get_tuple(config).await;
        }
        let staged = held.staging().get_tuple(config).await?;
        let by_id = config
            .checkpoint_id
            .as_deref()
            .is_some_and(|id| !id.is_empty());
        if by_id && staged.is_some() {
            return Ok(staged);
        }
        let stored = self
            .inner
            .get_tuple(config)
            .await?
            .map(|t| Self::with_held_writes(&held, t));
        Ok(newer(staged, stored))
    }

    async fn list(
        &self,
        config: Option<&CheckpointConfig>,
        options: &ListOptions,
    ) -> Result<Vec<CheckpointTuple>> {
        self.check("list")?;
        let thread = config.and_then(|c| c.thread_id.as_deref());
        self.drained(thread).await?;
        let Some(held) = &self.held else {
            return self.inner.list(config, options).await;
        };
        let held = held.lock().await;
        let touched = match thread {
            Some(t) => held.has_thread(t),
            None => !held.is_empty(),
        };
        if !touched {
            return self.inner.list(config, options).await;
        }
        let staged = held.staging().list(config, options).await?;
        let stored = self.inner.list(config, options).await?;
        let mut out: Vec<CheckpointTuple> = staged;
        for t in stored {
            let (Some(th), Some(id)) = (
                t.config.thread_id.as_deref(),
                t.config.checkpoint_id.as_deref(),
            ) else {
                continue;
            };
            if held.holds_checkpoint(th, t.config.ns(), id) {
                continue;
            }
            out.push(Self::with_held_writes(&held, t));
        }
        // Newest first, as every saver lists; stable, so equal ids keep their order.
        out.sort_by(|a, b| b.checkpoint.id.cmp(&a.checkpoint.id));
        if let Some(limit) = options.limit {
            out.truncate(limit);
        }
        Ok(out)
    }

    async fn delete_thread(&self, thread_id: &str) -> Result<()> {
        self.check("delete_thread")?;
        self.drained(Some(thread_id)).await?;
        if let Some(held) = &self.held {
            let mut held = held.lock().await;
            held.forget_thread(thread_id).await?;
        }
        self.inner.delete_thread(thread_id).await
    }

    fn capabilities(&self) -> Capabilities {
        self.inner.capabilities()
    }

    async fn delete_for_runs(&self, run_ids: &[String]) -> Result<()> {
        self.check("delete_for_runs")?;
        self.drained(None).await?;
        if !self.inner.capabilities().delete_for_runs {
            return self.inner.delete_for_runs(run_ids).await;
        }
        if let Some(held) = &self.held {
            held.lock().await.delete_for_runs(run_ids).await?;
        }
        self.inner.delete_for_runs(run_ids).await
    }

    async fn copy_thread(&self, source: &str, target: &str) -> Result<()> {
        self.check("copy_thread")?;
        self.drained(Some(source)).await?;
        self.drained(Some(target)).await?;
        if !self.inner.capabilities().copy_thread {
            return self.inner.copy_thread(source, target).await;
        }
        self.inner.copy_thread(source, target).await?;
        if let Some(held) = &self.held {
            held.lock().await.copy_thread(source, target).await?;
        }
        Ok(())
    }

    async fn prune(&self, thread_ids: &[String], strategy: PruneStrategy) -> Result<()> {
        self.check("prune")?;
        for t in thread_ids {
            self.drained(Some(t)).await?;
        }
        if !self.inner.capabilities().prune {
            return self.inner.prune(thread_ids, strategy).await;
        }
        if let Some(held) = &self.held {
            held.lock().await.prune(thread_ids, strategy).await?;
        }
        self.inner.prune(thread_ids, strategy).await
    }

    async fn get_delta_channel_history(
        &self,
        config: &CheckpointConfig,
        channels: &[String],
    ) -> Result<IndexMap<String, DeltaChannelHistory>> {
        self.check("get_delta_channel_history")?;
        self.drained(config.thread_id.as_deref()).await?;
        if let (Some(held), Some(thread)) = (&self.held, config.thread_id.as_deref()) {
            if held.lock().await.has_thread(thread) {
                // Held checkpoints: the parent-chain walk over this wrapper's reads,
                // which see them.
                return default_delta_channel_history(self, config, channels).await;
            }
        }
        self.inner.get_delta_channel_history(config, channels).await
    }

    fn get_next_version(&self, current: Option<&ChannelVersion>) -> Result<ChannelVersion> {
        self.inner.get_next_version(current)
    }
}
