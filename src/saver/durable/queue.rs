//! The `async` mode's write-behind queue: bounded shards, one background writer each.
//!
//! A thread's items all go to one shard (by a hash of the thread id), and a shard's
//! writer runs them one at a time in the order they were queued, so a thread's
//! checkpoints and writes reach the store in call order; different shards run
//! concurrently. An item stays at the head of its shard while it is written and is
//! removed only when the wrapped saver acknowledged it, so the count of a thread's
//! items (what reads wait on) includes the one in flight. A failed item stays at the
//! head and stops its shard until `flush` retries it or `discard_failed` removes it.

use std::collections::hash_map::DefaultHasher;
use std::collections::{HashMap, VecDeque};
use std::hash::{Hash, Hasher};
use std::sync::{Arc, Mutex, MutexGuard};

use tokio::sync::Notify;

use crate::error::Error;
use crate::saver::error::write_behind;
use crate::saver::error::SaverFault;
use crate::saver::traits::CheckpointSaver;
use crate::saver::types::{ChannelVersions, Checkpoint, CheckpointConfig, CheckpointMetadata};
use crate::saver::Result;
use crate::value::Value;

/// One queued call. Items live behind an `Arc` in the queue, so the size difference
/// between the variants costs one allocation each, not a copy.
#[derive(Debug)]
#[allow(clippy::large_enum_variant)]
pub(crate) enum Op {
    Put {
        config: CheckpointConfig,
        checkpoint: Checkpoint,
        metadata: CheckpointMetadata,
        new_versions: ChannelVersions,
    },
    Writes {
        config: CheckpointConfig,
        writes: Vec<(String, Value)>,
        task_id: String,
        task_path: String,
    },
}

/// A queued call and the thread it belongs to.
#[derive(Debug)]
pub(crate) struct Item {
    pub(crate) thread: String,
    pub(crate) op: Op,
}

impl Item {
    pub(crate) fn operation(&self) -> &'static str {
        match self.op {
            Op::Put { .. } => "put",
            Op::Writes { .. } => "put_writes",
        }
    }

    /// The checkpoint stored (`put`) or written against (`put_writes`).
    pub(crate) fn checkpoint_id(&self) -> String {
        match &self.op {
            Op::Put { checkpoint, .. } => checkpoint.id.clone(),
            Op::Writes { config, .. } => config.checkpoint_id.clone().unwrap_or_default(),
        }
    }

    pub(crate) async fn run<S: CheckpointSaver + ?Sized>(&self, saver: &S) -> Result<()> {
        match &self.op {
            Op::Put {
                config,
                checkpoint,
                metadata,
                new_versions,
            } => saver
                .put(config, checkpoint, metadata, new_versions)
                .await
                .map(|_| ()),
            Op::Writes {
                config,
                writes,
                task_id,
                task_path,
            } => saver.put_writes(config, writes, task_id, task_path).await,
        }
    }
}

/// A write that failed in the background and is still queued.
#[derive(Clone, Debug)]
struct Failure {
    error: Arc<Error>,
}

/// A write `discard_failed` removed from the queue: what it was and why it failed.
#[derive(Debug)]
pub struct FailedWrite {
    /// `"put"` or `"put_writes"`.
    pub operation: &'static str,
    /// Its thread.
    pub thread_id: String,
    /// The checkpoint it stored or wrote against.
    pub checkpoint_id: String,
    /// The wrapped saver's error.
    pub error: Arc<Error>,
}

#[derive(Default)]
struct ShardState {
    /// Queued items with their sequence numbers; the head may be in flight.
    queue: VecDeque<(u64, Arc<Item>)>,
    /// Queued items per thread (in flight included).
    per_thread: HashMap<String, usize>,
    /// The sequence number the next item gets.
    next_seq: u64,
    /// Set when the head failed; the writer waits until it is cleared.
    failure: Option<Failure>,
    /// No more items are accepted; the writer exits once the queue is empty.
    closed: bool,
}

impl ShardState {
    /// Every item with a smaller sequence number has been written.
    fn done_seq(&self) -> u64 {
        self.queue.front().map_or(self.next_seq, |(seq, _)| *seq)
    }

    fn failure_error(&self, head: Option<&Arc<Item>>) -> Option<Error> {
        let failure = self.failure.as_ref()?;
        Some(match head {
            Some(item) => write_behind(
                item.operation(),
                &item.thread,
                &item.checkpoint_id(),
                failure.error.clone(),
            ),
            None => write_behind("put", "", "", failure.error.clone()),
        })
    }

    fn error(&self) -> Option<Error> {
        self.failure_error(self.queue.front().map(|(_, item)| item))
    }

    fn pop_front(&mut self) -> Option<Arc<Item>> {
        let (_, item) = self.queue.pop_front()?;
        if let Some(n) = self.per_thread.get_mut(&item.thread) {
            *n = n.saturating_sub(1);
            if *n == 0 {
                self.per_thread.remove(&item.thread);
            }
        }
        Some(item)
    }
}

pub(crate) struct Shard {
    state: Mutex<ShardState>,
    /// Wakes the writer: an item was queued, a failure cleared, the shard closed.
    work: Notify,
    /// Wakes callers: an item was written or failed, space freed.
    progress: Notify,
    capacity: usize,
}

impl Shard {
    fn new(capacity: usize) -> Self {
        Shard {
            state: Mutex::new(ShardState::default()),
            work: Notify::new(),
            progress: Notify::new(),
            capacity: capacity.max(1),
        }
    }

    /// The state; a writer that panicked while holding the lock left nothing
    /// half-changed (every change is one step), so a poisoned lock is used as is.
    fn lock(&self) -> MutexGuard<'_, ShardState> {
        self.state
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

/// The shards and their writers.
pub(crate) struct Queue {
    shards: Vec<Arc<Shard>>,
    /// The first shard (the one every thread maps to when there is one).
    home: Arc<Shard>,
}

impl Queue {
    /// `workers` shards sharing `capacity` items, each with a writer task spawned on
    /// `handle` that writes through `saver`.
    pub(crate) fn start<S: CheckpointSaver + 'static + ?Sized>(
        saver: Arc<S>,
        capacity: usize,
        workers: usize,
        handle: &tokio::runtime::Handle,
    ) -> Self {
        let workers = workers.max(1);
        let per_shard = capacity.max(1).div_ceil(workers);
        let shards: Vec<Arc<Shard>> = (0..workers)
            .map(|_| Arc::new(Shard::new(per_shard)))
            .collect();
        for shard in &shards {
            handle.spawn(writer(saver.clone(), shard.clone()));
        }
        let home = match shards.first() {
            Some(first) => first.clone(),
            None => Arc::new(Shard::new(per_shard)),
        };
        Queue { shards, home }
    }

    fn shard_of(&self, thread: &str) -> &Arc<Shard> {
        let mut h = DefaultHasher::new();
        thread.hash(&mut h);
        let n = self.shards.len().max(1);
        let i = usize::try_from(h.finish() % n as u64).unwrap_or(0);
        self.shards.get(i).unwrap_or(&self.home)
    }

    /// The first background failure still outstanding, as the error calls return.
    pub(crate) fn failure(&self) -> Option<Error> {
        self.shards.iter().find_map(|s| s.lock().error())
    }

    /// Items queued or in flight.
    pub(crate) fn pending(&self) -> usize {
        self.shards.iter().map(|s| s.lock().queue.len()).sum()
    }

    /// Queues `item`, waiting while its shard is full (backpressure: never dropped).
    ///
    /// # Errors
    ///
    /// [`ErrorKind::SaverClosed`](crate::ErrorKind::SaverClosed) after shutdown; [`ErrorKind::WriteBehind`](crate::ErrorKind::WriteBehind) while the
    /// shard holds a failed write.
    pub(crate) async fn push(&self, item: Item) -> Result<()> {
        let shard = self.shard_of(&item.thread);
        let item = Arc::new(item);
        loop {
            let notified = shard.progress.notified();
            tokio::pin!(notified);
            notified.as_mut().enable();
            {
                let mut st = shard.lock();
                if st.closed {
                    return Err(SaverFault::Closed {
                        operation: item.operation(),
                    }
                    .into());
                }
                if let Some(e) = st.error() {
                    return Err(e);
                }
                if st.queue.len() < shard.capacity {
                    let seq = st.next_seq;
                    st.next_seq += 1;
                    *st.per_thread.entry(item.thread.clone()).or_insert(0) += 1;
                    st.queue.push_back((seq, item));
                    drop(st);
                    shard.work.notify_one();
                    return Ok(());
                }
            }
            notified.await;
        }
    }

    /// Waits until `thread` has nothing queued (every earlier write of it is in the
    /// store), or every thread when `None`.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::WriteBehind`](crate::ErrorKind::WriteBehind) if a write it waits for failed.
    pub(crate) async fn drained(&self, thread: Option<&str>) -> Result<()> {
        let shards: Vec<&Arc<Shard>> = match thread {
            Some(t) => vec![self.shard_of(t)],
            None => self.shards.iter().collect(),
        };
        for shard in shards {
            loop {
                let notified = shard.progress.notified();
                tokio::pin!(notified);
                notified.as_mut().enable();
                {
                    let st = shard.lock();
                    let waiting = match thread {
                        Some(t) => st.per_thread.contains_key(t),
                        None => !st.queue.is_empty(),
                    };
                    if !waiting {
                        break;
                    }
                    if let Some(e) = st.error() {
                        return Err(e);
                    }
                }
                notified.await;
            }
        }
        Ok(())
    }

    /// Retries failed writes, then waits until everything queued before this call is
    /// written.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::WriteBehind`](crate::ErrorKind::WriteBehind) if a write fails (again).
    pub(crate) async fn flush(&self) -> Result<usize> {
        let mut targets = Vec::with_capacity(self.shards.len());
        let mut written: u64 = 0;
        for shard in &self.shards {
            let mut st = shard.lock();
            st.failure = None;
            written += st.next_seq - st.done_seq();
            targets.push(st.next_seq);
            drop(st);
            shard.work.notify_one();
        }
        for (shard, target) in self.shards.iter().zip(targets) {
            loop {
                let notified = shard.progress.notified();
                tokio::pin!(notified);
                notified.as_mut().enable();
                {
                    let st = shard.lock();
                    if st.done_seq() >= target {
                        break;
                    }
                    if let Some(e) = st.error() {
                        return Err(e);
                    }
                }
                notified.await;
            }
        }
        Ok(usize::try_from(written).unwrap_or(usize::MAX))
    }

    /// Removes every failed write from the queue and returns it; the shards go on.
    pub(crate) fn discard_failed(&self) -> Vec<FailedWrite> {
        let mut out = Vec::new();
        for shard in &self.shards {
            let mut st = shard.lock();
            if let Some(failure) = st.failure.take() {
                if let Some(item) = st.pop_front() {
                    out.push(FailedWrite {
                        operation: item.operation(),
                        thread_id: item.thread.clone(),
                        checkpoint_id: item.checkpoint_id(),
                        error: failure.error,
                    });
                }
            }
            drop(st);
            shard.work.notify_one();
            shard.progress.notify_waiters();
        }
        out
    }

    /// Refuses new items; the writers exit once their queues are empty.
    pub(crate) fn close(&self) {
        for shard in &self.shards {
            shard.lock().closed = true;
            shard.work.notify_one();
            shard.progress.notify_waiters();
        }
    }
}

impl Drop for Queue {
    /// Dropping the wrapper closes the queue; the writers still write what is queued
    /// (while the runtime runs) and then exit.
    fn drop(&mut self) {
        self.close();
    }
}

/// A shard's writer: the head item, one at a time, until the shard is closed and empty.
async fn writer<S: CheckpointSaver + ?Sized>(saver: Arc<S>, shard: Arc<Shard>) {
    loop {
        let item = loop {
            let notified = shard.work.notified();
            tokio::pin!(notified);
            notified.as_mut().enable();
            {
                let st = shard.lock();
                if st.failure.is_none() {
                    if let Some((_, head)) = st.queue.front() {
                        break head.clone();
                    }
                    if st.closed {
                        return;
                    }
                }
            }
            notified.await;
        };
        let result = item.run(&*saver).await;
        {
            let mut st = shard.lock();
            match result {
                Ok(()) => {
                    st.pop_front();
                }
                Err(e) => {
                    st.failure = Some(Failure { error: Arc::new(e) });
                }
            }
        }
        shard.progress.notify_waiters();
    }
}
