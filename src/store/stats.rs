//! [`AnyStore::stats`]: rows and bytes per thread and per channel of a store in any
//! layout, and the files' or tables' sizes, read without a write (as the rest of
//! `inspect.rs`).

use std::cmp::Reverse;
use std::collections::{BTreeMap, BinaryHeap};
use std::ops::ControlFlow;
use std::sync::Arc;

use serde::{Deserialize, Serialize};

use super::backend::ph;
use super::inspect::AnyStore;
use super::keys::StoreKeys;
use super::raw::{serializer, Fields, Result};
use super::spill::Spill;
use super::Location;
use crate::saver::Checkpoint;
use crate::serializer::Serializer;

/// Rows and bytes: [`StoreStats`].
#[derive(Clone, Copy, Debug, Default, Serialize, Deserialize, PartialEq, Eq)]
pub struct Size {
    /// Rows.
    pub rows: u64,
    /// Stored bytes (values, and on Postgres the JSONB text of checkpoints and metadata).
    pub bytes: u64,
}

impl Size {
    fn add(&mut self, rows: u64, bytes: u64) {
        self.rows = self.rows.saturating_add(rows);
        self.bytes = self.bytes.saturating_add(bytes);
    }
}

/// Sizes of one thread: [`StoreStats`].
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq, Eq)]
#[non_exhaustive]
pub struct ThreadSize {
    /// Checkpoint rows (SQLite: with every channel value; Postgres: JSONB + metadata).
    pub checkpoints: Size,
    /// Postgres channel blobs.
    pub blobs: Size,
    /// Pending writes.
    pub writes: Size,
    /// All of it.
    pub total_bytes: u64,
}

/// What the store takes on disk: [`StoreStats::files`].
#[derive(Clone, Debug, Default, Serialize, PartialEq, Eq)]
#[non_exhaustive]
pub struct FileSizes {
    /// SQLite: the database file; Postgres: the whole database
    /// (`pg_database_size(current_database())`).
    pub database_bytes: u64,
    /// SQLite: the `-wal` file beside it (0 when there is none).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub wal_bytes: Option<u64>,
    /// SQLite: pages on the free list, in bytes (reused by later writes; `VACUUM`
    /// returns them).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub free_bytes: Option<u64>,
    /// Postgres: the saver's tables with their indexes and TOAST
    /// (`pg_total_relation_size`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tables_bytes: Option<u64>,
}

/// How [`StoreStats::top_threads`] orders threads.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum ThreadOrder {
    /// By thread id.
    Id,
    /// Largest first (checkpoints + blobs + writes bytes), then by id.
    Size,
    /// Most checkpoints first, then by id.
    Checkpoints,
    /// Most pending writes first, then by id.
    Writes,
}

/// [`AnyStore::stats`].
#[derive(Clone, Debug, Serialize, PartialEq, Eq)]
#[non_exhaustive]
pub struct StoreStats {
    /// The store (URL without password).
    pub store: String,
    /// `sqlite` or `postgres`.
    pub backend: &'static str,
    /// The layout found.
    pub layout: String,
    /// Threads.
    pub threads: u64,
    /// Totals.
    pub total: ThreadSize,
    /// Per thread: every thread, or the first N in an order when asked with
    /// [`StatsOptions::top`] (the totals and [`threads`](Self::threads) count all);
    /// none when they went to [`StatsOptions::on_thread`].
    pub per_thread: BTreeMap<String, ThreadSize>,
    /// Per channel: pending writes and channel values ([`per_channel_values`]).
    ///
    /// [`per_channel_values`]: Self::per_channel_values
    pub per_channel: BTreeMap<String, Size>,
    /// Per channel, its values alone. Postgres: the blob rows (stored bytes, as
    /// Python wrote them). SQLite (every layout): the checkpoint rows holding the
    /// channel, and the bytes of each value as Python's serializer encodes it on its
    /// own (`dumps_typed(value)` in clear: what a Postgres blob of it holds before
    /// encryption), read by decoding each checkpoint with the key ring.
    pub per_channel_values: BTreeMap<String, Size>,
    /// SQLite: checkpoint rows whose channel values could not be measured (no key for
    /// them, or a row that does not decode); counted, never fatal.
    pub unreadable_checkpoints: u64,
    /// What the store takes on disk.
    pub files: FileSizes,
}

impl StoreStats {
    /// The first `n` threads of [`per_thread`](Self::per_thread) in `order` (`n` = 0:
    /// all of them).
    pub fn top_threads(&self, n: usize, order: ThreadOrder) -> Vec<(&str, &ThreadSize)> {
        let mut all: Vec<(&str, &ThreadSize)> = self
            .per_thread
            .iter()
            .map(|(k, v)| (k.as_str(), v))
            .collect();
        // Stable: equal keys stay in id order.
        all.sort_by_key(|a| Reverse(order.key(a.1)));
        if n > 0 {
            all.truncate(n);
        }
        all
    }
}

/// A callback given each thread's sizes ([`StatsOptions::on_thread`]).
pub(crate) type ThreadSizeFn = Arc<dyn Fn(&str, &ThreadSize) + Send + Sync>;

/// Which threads [`AnyStore::stats`] keeps in [`StoreStats::per_thread`], or hands
/// over one at a time.
#[derive(Clone)]
pub struct StatsOptions {
    top: usize,
    order: ThreadOrder,
    on_thread: Option<ThreadSizeFn>,
    sorted: Option<(ThreadOrder, ThreadSizeFn)>,
}

impl std::fmt::Debug for StatsOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StatsOptions")
            .field("top", &self.top)
            .field("order", &self.order)
            .field("on_thread", &self.on_thread.is_some())
            .field("sorted", &self.sorted.as_ref().map(|(order, _)| order))
            .finish()
    }
}

impl Default for StatsOptions {
    fn default() -> Self {
        Self::new()
    }
}

impl StatsOptions {
    /// Every thread (memory grows with the number of threads, as the list does:
    /// [`on_thread`](Self::on_thread) hands them over instead).
    pub fn new() -> Self {
        StatsOptions {
            top: 0,
            order: ThreadOrder::Id,
            on_thread: None,
            sorted: None,
        }
    }

    /// Only the first `n` threads in `order` (`n` = 0: every thread, unless
    /// [`on_thread`](Self::on_thread) or [`sorted`](Self::sorted) takes them). The
    /// totals still count every thread; memory holds `n` threads, whatever the
    /// store's size.
    pub fn top(mut self, n: usize, order: ThreadOrder) -> Self {
        self.top = n;
        self.order = order;
        self
    }

    /// Each thread's sizes to `f` as they are counted, in thread order (the
    /// database's order of thread ids), instead of into the report:
    /// [`StoreStats::per_thread`] stays empty (unless [`top`](Self::top) keeps
    /// some) and memory holds no thread, whatever the store holds. For a listing of
    /// every thread written as it is read: held in a map, a million threads took
    /// hundreds of MiB.
    ///
    /// ```no_run
    /// # async fn run() -> Result<(), langgraph_codec::Error> {
    /// use langgraph_codec::store::{AnyStore, StatsOptions, StoreKeys};
    /// let store = AnyStore::open("checkpoints.db").await?;
    /// let options = StatsOptions::new().on_thread(|thread, size| {
    ///     println!("{thread} {} bytes", size.total_bytes);
    /// });
    /// let stats = store.stats(&StoreKeys::none(), &options).await?;
    /// println!("{} threads", stats.threads);
    /// # Ok(()) }
    /// ```
    pub fn on_thread(mut self, f: impl Fn(&str, &ThreadSize) + Send + Sync + 'static) -> Self {
        self.on_thread = Some(Arc::new(f));
        self
    }

    /// Each thread's sizes to `f` once every thread is counted, in `order` (larger
    /// first, then by id, as [`StoreStats::top_threads`] orders them), instead of into
    /// the report: [`StoreStats::per_thread`] stays empty (unless
    /// [`top`](Self::top) keeps some) and memory holds no thread, whatever the store
    /// holds. The threads are sorted in a scratch file SQLite deletes when done (in
    /// `SQLITE_TMPDIR` or `TMPDIR`, else `/var/tmp`, then `/tmp`; without the `sqlite`
    /// feature, in memory). With [`on_thread`](Self::on_thread) besides, each thread
    /// goes to that one as it is counted, then to `f` in order.
    ///
    /// ```no_run
    /// # async fn run() -> Result<(), langgraph_codec::Error> {
    /// use langgraph_codec::store::{AnyStore, StatsOptions, StoreKeys, ThreadOrder};
    /// let store = AnyStore::open("checkpoints.db").await?;
    /// let options = StatsOptions::new().sorted(ThreadOrder::Size, |thread, size| {
    ///     println!("{thread} {} bytes", size.total_bytes);
    /// });
    /// let stats = store.stats(&StoreKeys::none(), &options).await?;
    /// println!("{} threads", stats.threads);
    /// # Ok(()) }
    /// ```
    ///
    /// # Errors
    /// [`AnyStore::stats`] fails with [`ErrorKind::DiskFull`](crate::ErrorKind::DiskFull)
    /// (or [`Storage`](crate::ErrorKind::Storage)) when the scratch file cannot be
    /// written.
    pub fn sorted(
        mut self,
        order: ThreadOrder,
        f: impl Fn(&str, &ThreadSize) + Send + Sync + 'static,
    ) -> Self {
        self.sorted = Some((order, Arc::new(f)));
        self
    }
}

/// The threads kept while the per-thread sizes stream by in id order: every one, or
/// the first `n` in an order (a heap of `n`, its worst on top).
struct Chosen {
    n: usize,
    order: ThreadOrder,
    all: BTreeMap<String, ThreadSize>,
    heap: BinaryHeap<Kept>,
    /// Given each thread instead of keeping it ([`StatsOptions::on_thread`]).
    sink: Option<ThreadSizeFn>,
    /// Each thread, to be given in order at the end ([`StatsOptions::sorted`]).
    spill: Option<(Spill, ThreadOrder, ThreadSizeFn)>,
}

/// A thread in [`Chosen`]'s heap, ordered by its key, smaller first, then by id,
/// larger first: the heap's top is the one to give up first.
struct Kept(Reverse<u64>, String, ThreadSize);

impl Kept {
    fn rank(&self) -> (Reverse<u64>, &str) {
        (self.0, &self.1)
    }
}

impl PartialEq for Kept {
    fn eq(&self, other: &Self) -> bool {
        self.rank() == other.rank()
    }
}

impl Eq for Kept {}

impl PartialOrd for Kept {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Kept {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        self.rank().cmp(&other.rank())
    }
}

impl Chosen {
    fn new(options: &StatsOptions) -> Result<Self> {
        Ok(Chosen {
            n: options.top,
            order: options.order,
            all: BTreeMap::new(),
            heap: BinaryHeap::new(),
            sink: options.on_thread.clone(),
            spill: match &options.sorted {
                Some((order, f)) => Some((Spill::new("stats")?, *order, Arc::clone(f))),
                None => None,
            },
        })
    }

    /// Keeps `thread` if it ranks among the first `n`: the heap ranks by key and then
    /// by id itself, so the order the rows arrive in (the database's collation of
    /// thread ids) does not decide ties.
    fn offer(&mut self, thread: String, size: ThreadSize) -> Result<()> {
        if let Some((spill, order, _)) = &mut self.spill {
            spill.push(order.key(&size), &thread, &size)?;
        }
        if let Some(sink) = &self.sink {
            sink(&thread, &size);
        }
        if self.n == 0 {
            if self.spill.is_none() && self.sink.is_none() {
                self.all.insert(thread, size);
            }
            return Ok(());
        }
        self.heap
            .push(Kept(Reverse(self.order.key(&size)), thread, size));
        if self.heap.len() > self.n {
            self.heap.pop();
        }
        Ok(())
    }

    /// The threads kept, by id, once each went to [`StatsOptions::sorted`] in order.
    fn finish(self) -> Result<BTreeMap<String, ThreadSize>> {
        if let Some((spill, _, f)) = self.spill {
            spill.each(|thread, size: ThreadSize| {
                f(thread, &size);
                Ok(())
            })?;
        }
        let mut all = self.all;
        all.extend(self.heap.into_iter().map(|Kept(_, t, s)| (t, s)));
        Ok(all)
    }
}

impl ThreadOrder {
    /// The sort key, larger first (`Id`: all equal, so id order).
    fn key(self, s: &ThreadSize) -> u64 {
        match self {
            ThreadOrder::Id => 0,
            ThreadOrder::Size => s.total_bytes,
            ThreadOrder::Checkpoints => s.checkpoints.rows,
            ThreadOrder::Writes => s.writes.rows,
        }
    }
}

/// One row of the per-thread sizes: thread, table (0 checkpoints, 1 writes, 2 blobs),
/// rows, bytes.
type ThreadRow = (String, u8, u64, u64);

fn thread_row(r: &Fields) -> Result<ThreadRow> {
    Ok((
        r.thread(0)?,
        u8::try_from(r.int(1)?).unwrap_or(2),
        r.count(2)?,
        r.count(3)?,
    ))
}

/// Folds rows ordered by thread into one [`ThreadSize`] per thread, handed to
/// [`Chosen`] as each thread ends; the totals and the thread count on the way.
#[derive(Default)]
struct Fold {
    current: Option<(String, ThreadSize)>,
    threads: u64,
    total: ThreadSize,
}

impl Fold {
    fn add(&mut self, (thread, table, rows, bytes): ThreadRow, chosen: &mut Chosen) -> Result<()> {
        if self.current.as_ref().is_some_and(|(t, _)| *t != thread) {
            self.flush(chosen)?;
        }
        let (_, t) = self
            .current
            .get_or_insert_with(|| (thread, ThreadSize::default()));
        for s in [&mut *t, &mut self.total] {
            match table {
                0 => s.checkpoints.add(rows, bytes),
                1 => s.writes.add(rows, bytes),
                _ => s.blobs.add(rows, bytes),
            }
            s.total_bytes = s.total_bytes.saturating_add(bytes);
        }
        Ok(())
    }

    fn flush(&mut self, chosen: &mut Chosen) -> Result<()> {
        if let Some((thread, size)) = self.current.take() {
            self.threads += 1;
            chosen.offer(thread, size)?;
        }
        Ok(())
    }
}

impl AnyStore {
    /// Rows and bytes per thread and per channel; SQLite checkpoint rows are decoded
    /// (decrypted with `keys`) to size each channel's value. With
    /// [`StoreKeys::none()`](StoreKeys::none) an encrypted SQLite checkpoint counts as
    /// unreadable for the per-channel sizes. The per-thread sizes stream from one
    /// query ordered by thread; memory grows with the threads kept
    /// ([`StatsOptions::top`]) and the channels, not with the store.
    ///
    /// # Errors
    /// The database's errors (a row that does not decode is counted in
    /// [`StoreStats::unreadable_checkpoints`], not an error).
    pub async fn stats(&self, keys: &StoreKeys, options: &StatsOptions) -> Result<StoreStats> {
        let c = self.raw.cols();
        let mut chosen = Chosen::new(options)?;
        let mut fold = Fold::default();
        let mut per_channel: BTreeMap<String, Size> = BTreeMap::new();
        let mut per_channel_values: BTreeMap<String, Size> = BTreeMap::new();
        let writes = self.raw.writes_table();
        // Postgres keeps channel values in `checkpoint_blobs` besides: kind 2.
        let per_thread = self.per_thread_sql(false);
        let per_channel_sql = if self.raw.is_sqlite() {
            format!(
                "SELECT channel, 1, count(*), sum(coalesce(octet_length(value), 0)) \
                 FROM {writes} GROUP BY channel"
            )
        } else {
            format!(
                "SELECT channel, 1::int2, count(*), sum(coalesce(octet_length(blob), 0))::int8 \
                 FROM {writes} GROUP BY channel \
                 UNION ALL SELECT channel, 2::int2, count(*), sum(coalesce(octet_length(blob), 0))::int8 \
                 FROM checkpoint_blobs GROUP BY channel"
            )
        };
        // Row by row: a store of many threads is never held at once.
        self.raw
            .each_row("stats", &per_thread, &[], |r| {
                fold.add(thread_row(&r)?, &mut chosen)?;
                Ok(ControlFlow::Continue(()))
            })
            .await?;
        self.raw
            .each_row("stats", &per_channel_sql, &[], |r| {
                let row = thread_row(&r)?;
                if row.1 == 2 {
                    per_channel_values
                        .entry(row.0.clone())
                        .or_default()
                        .add(row.2, row.3);
                }
                per_channel.entry(row.0).or_default().add(row.2, row.3);
                Ok(ControlFlow::Continue(()))
            })
            .await?;
        fold.flush(&mut chosen)?;
        let per_thread = chosen.finish()?;
        // A SQLite checkpoint row holds its channel values; Postgres's are its blobs,
        // counted above.
        let unreadable_checkpoints = if self.raw.is_sqlite() {
            let unreadable = self
                .value_sizes(&c, &serializer(keys), &mut per_channel_values)
                .await?;
            for (channel, size) in &per_channel_values {
                per_channel
                    .entry(channel.clone())
                    .or_default()
                    .add(size.rows, size.bytes);
            }
            unreadable
        } else {
            0
        };
        Ok(StoreStats {
            store: self.raw.shown().to_owned(),
            backend: self.raw.backend(),
            layout: self.raw.layout().to_string(),
            threads: fold.threads,
            total: fold.total,
            per_thread,
            per_channel,
            per_channel_values,
            unreadable_checkpoints,
            files: self.file_sizes().await?,
        })
    }

    /// The per-thread sizes, ordered by thread ([`ThreadRow`]s): checkpoint rows (SQLite:
    /// `octet_length`, the bytes as stored, read from each row's header without loading
    /// the value, as the prune's count of what it frees; Postgres: the JSONB text),
    /// writes, and on Postgres blobs. With `range`, only the threads from the first
    /// parameter to the second.
    fn per_thread_sql(&self, range: bool) -> String {
        let writes = self.raw.writes_table();
        let sqlite = self.raw.is_sqlite();
        let only = if range {
            format!(
                " WHERE thread_id BETWEEN {} AND {}",
                ph(sqlite, 1),
                ph(sqlite, 2)
            )
        } else {
            String::new()
        };
        if sqlite {
            format!(
                "SELECT thread_id, 0, count(*), sum(coalesce(octet_length(checkpoint), 0) \
                 + coalesce(octet_length(metadata), 0)) FROM checkpoints{only} GROUP BY thread_id \
                 UNION ALL SELECT thread_id, 1, count(*), sum(coalesce(octet_length(value), 0)) \
                 FROM {writes}{only} GROUP BY thread_id ORDER BY 1, 2"
            )
        } else {
            format!(
                "SELECT thread_id, 0::int2, count(*), sum(octet_length(checkpoint::text) \
                 + octet_length(metadata::text))::int8 FROM checkpoints{only} GROUP BY thread_id \
                 UNION ALL SELECT thread_id, 1::int2, count(*), sum(coalesce(octet_length(blob), 0))::int8 \
                 FROM {writes}{only} GROUP BY thread_id \
                 UNION ALL SELECT thread_id, 2::int2, count(*), sum(coalesce(octet_length(blob), 0))::int8 \
                 FROM checkpoint_blobs{only} GROUP BY thread_id ORDER BY 1, 2"
            )
        }
    }

    /// The sizes of the threads from `first` to `last` (in thread order), each as
    /// [`stats`](Self::stats) sizes it: for a page of threads
    /// ([`each_thread`](Self::each_thread)).
    pub(super) async fn thread_sizes(
        &self,
        first: &str,
        last: &str,
    ) -> Result<BTreeMap<String, ThreadSize>> {
        let mut chosen = Chosen::new(&StatsOptions::new())?;
        let mut fold = Fold::default();
        self.raw
            .each_row(
                "stats",
                &self.per_thread_sql(true),
                &[first.into(), last.into()],
                |r| {
                    fold.add(thread_row(&r)?, &mut chosen)?;
                    Ok(ControlFlow::Continue(()))
                },
            )
            .await?;
        fold.flush(&mut chosen)?;
        chosen.finish()
    }

    async fn file_sizes(&self) -> Result<FileSizes> {
        // The first two counts of a statement's one row.
        let two = |sql: &'static str| async move {
            let row = self.raw.first_row("stats", sql, &[]).await?;
            let count = |i| row.as_ref().map_or(Ok(0), |r: &Fields| r.count(i));
            Ok::<_, crate::Error>([count(0)?, count(1)?])
        };
        match self.raw.location() {
            Location::Sqlite(path) => {
                let len = |p: &std::path::Path| std::fs::metadata(p).map(|m| m.len()).ok();
                let mut wal = path.clone().into_os_string();
                wal.push("-wal");
                let [free, _] = two(
                    "SELECT (SELECT freelist_count FROM pragma_freelist_count()) * \
                     (SELECT page_size FROM pragma_page_size()), 0",
                )
                .await?;
                Ok(FileSizes {
                    database_bytes: len(&path).unwrap_or(0),
                    wal_bytes: Some(len(std::path::Path::new(&wal)).unwrap_or(0)),
                    free_bytes: Some(free),
                    tables_bytes: None,
                })
            }
            Location::Postgres(_) => {
                let [db, tables] = two(
                    "SELECT pg_database_size(current_database())::int8, \
                     coalesce(sum(pg_total_relation_size(c.oid)), 0)::int8 \
                     FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace \
                     WHERE n.nspname = current_schema() AND c.relkind = 'r' AND c.relname IN \
                     ('checkpoints', 'checkpoint_blobs', 'checkpoint_writes', 'checkpoint_migrations')",
                )
                .await?;
                Ok(FileSizes {
                    database_bytes: db,
                    tables_bytes: Some(tables),
                    ..FileSizes::default()
                })
            }
        }
    }

    /// Adds the size of each channel value held in the SQLite checkpoint rows to `out`
    /// (rows holding the channel; bytes of `dumps_typed(value)` by Python's serializer
    /// in clear), one row at a time; how many rows could not be decoded.
    async fn value_sizes(
        &self,
        c: &super::raw::Cols,
        serde: &Arc<dyn Serializer>,
        out: &mut BTreeMap<String, Size>,
    ) -> Result<u64> {
        let plain = crate::JsonPlusSerializer::new();
        let sql = format!("SELECT {ty}, checkpoint FROM checkpoints", ty = c.ty);
        let mut unreadable = 0u64;
        self.raw
            .each_row("stats", &sql, &[], |mut row| {
                let tag = row.take_opt_text(0)?;
                let data = row.take_bytes(1);
                let checkpoint = serde
                    .loads_typed(
                        tag.as_deref().unwrap_or_default(),
                        data.as_deref().unwrap_or_default(),
                    )
                    .ok()
                    .and_then(|v| Checkpoint::from_owned_value(v).ok());
                let Some(checkpoint) = checkpoint else {
                    unreadable += 1;
                    return Ok(ControlFlow::Continue(()));
                };
                let mut sizes = Vec::with_capacity(checkpoint.channel_values.len());
                for (channel, value) in &checkpoint.channel_values {
                    match plain.dumps_typed(value) {
                        Ok(typed) => sizes.push((channel, typed.data.len() as u64)),
                        Err(_) => break,
                    }
                }
                if sizes.len() < checkpoint.channel_values.len() {
                    unreadable += 1;
                    return Ok(ControlFlow::Continue(()));
                }
                for (channel, bytes) in sizes {
                    out.entry(channel.clone()).or_default().add(1, bytes);
                }
                Ok(ControlFlow::Continue(()))
            })
            .await?;
        Ok(unreadable)
    }
}
