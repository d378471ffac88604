//! A store's checkpoints as prune, retain, import and copy reach them ([`Checkpoints`],
//! the second half of [`Backend`](super::Backend)), and the row shapes they move.

use std::collections::{BTreeMap, HashSet};
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::Duration;

use crate::error::Error;
use crate::saver::retention::{Removal, Removed};
use crate::saver::sqlite::{StoredRow, StoredWrite};
use crate::saver::CheckpointMetadata;
use crate::serializer::Serializer;

use super::super::plan::{Cp, Loaded, MetaReads};
use super::super::report::VacuumReport;
use super::super::spill::Queue;

type Result<T, E = Error> = std::result::Result<T, E>;

/// One row of a page of threads: a thread, its checkpoint count, its bytewise oldest
/// and newest ids, and how many of its ids are not lowercase and of a uuid6's shape.
pub(crate) type Counted = (String, i64, String, String, i64);

/// A namespace's blob references, read once before it is pruned a window at a time
/// (`long.rs`): each `(channel, version)` its checkpoints reference, with the oldest
/// checkpoint id referencing it and whether a blob is stored at it, the newest oldest
/// reference first ([`BlobRef`]); and the namespace's newest checkpoint id, read
/// before them (a checkpoint above it is a live writer's).
pub(crate) struct BlobRefs {
    pub(crate) newest: String,
    pub(crate) refs: Queue<BlobRef>,
}

/// A checkpoint's `(channel, version)` pairs.
pub(crate) type Versions = Box<[(Box<str>, Box<str>)]>;

/// `(channel, version, the oldest checkpoint id referencing it, a blob is stored)`.
pub(crate) type BlobRef = (String, String, String, bool);

/// A store opened for writing, as `prune` and `retain` reach it (one connection,
/// owned: its transactions need it whole): threads paged by id, their checkpoints
/// loaded for the planner, a page's removal deleted in one transaction by the savers'
/// own retention code, the sweep lock, compaction, and a lost connection re-opened.
/// The SQLite and the Postgres target implement it; the page engine (`pages.rs`) and
/// the operations are written once over it.
#[async_trait::async_trait]
pub(crate) trait Checkpoints: Send + Sync {
    /// Whether two pages are worked at once on two connections (a server's work, not
    /// the client's, is what a prune waits for; SQLite has one writer).
    fn pages_in_parallel(&self) -> bool;

    /// Whether a long thread that goes whole is deleted a window at a time (`long.rs`):
    /// SQLite, whose one writer would wait for the whole thread's deletes; Postgres
    /// locks only the rows, and its one statement a thread reads each blob's
    /// references once.
    fn whole_threads_in_windows(&self) -> bool;

    /// How many threads the store holds (the progress bar's length).
    async fn thread_count(&mut self) -> Result<u64>;

    /// Up to `limit` threads after `after` (`""`: from the first), by id, with their
    /// counts ([`Counted`]; [`odd_ids`] counts the ids not of a uuid6's shape).
    async fn counted_threads(&mut self, after: &str, limit: i64) -> Result<Vec<Counted>>;

    /// The checkpoints of `threads`, by thread, each thread's in (namespace, id) order,
    /// with what the planner needs to know of each (`interrupted` left unset), of their
    /// metadata what `reads` asks.
    async fn load_threads(
        &mut self,
        serde: &Arc<dyn Serializer>,
        threads: &[String],
        reads: &MetaReads,
    ) -> Result<BTreeMap<String, Loaded>>;

    /// Whether the store holds a checkpoint of `thread` (one look-up by key).
    async fn holds_thread(&mut self, thread: &str) -> Result<bool>;

    /// The counts of `threads` ([`Counted`]); a thread without checkpoints is not
    /// listed.
    async fn counted_of(&mut self, threads: &[String]) -> Result<Vec<Counted>>;

    /// The metadata of `thread`'s latest checkpoint, as `load_threads` finds it (of the
    /// root namespace, else of any; the newest id bytewise): what a selection, pins and
    /// an override read. `None`: no checkpoint, or metadata that cannot be read.
    async fn latest_metadata(&mut self, thread: &str) -> Result<Option<CheckpointMetadata>>;

    /// Whether the latest checkpoint (the newest id bytewise) of some namespace of
    /// `thread` holds a `__interrupt__` pending write: the thread waits at an
    /// interrupt, as the planner decides it from its rows.
    async fn waiting(&mut self, thread: &str) -> Result<bool>;

    /// The namespaces of `thread`, each with whether its checkpoint rows are read for
    /// the delta walk (it has DeltaChannels, or metadata that cannot be read), when the
    /// thread can be planned newest first a window at a time (`long.rs`): every parent
    /// id below its child's; else `None`.
    async fn long_thread(&mut self, thread: &str) -> Result<Option<Vec<(String, bool)>>>;

    /// Up to `limit` checkpoints of `thread` in namespace `ns` with ids below `below`
    /// (`None`: from the newest), newest first, each with the channels it stores when
    /// `walked` (else none), whether its metadata holds one of `labels`, whether it
    /// reads its pending sends from its parent (before v4) and holds sends itself; and where
    /// the store keeps blobs apart (Postgres), each one's channel versions, in the
    /// same order (else none).
    #[allow(clippy::too_many_arguments)]
    async fn window(
        &mut self,
        serde: &Arc<dyn Serializer>,
        (thread, ns): (&str, &str),
        walked: bool,
        below: Option<&str>,
        limit: i64,
        labels: &[String],
    ) -> Result<(Vec<Cp>, Vec<Versions>)>;

    /// A second connection to the same store that reads a long thread's next window
    /// while this one deletes the window before (`long.rs`): Postgres, where the
    /// server works both at once; `None` where one connection does both (SQLite: one
    /// file, read and written by this process).
    async fn reader(&self) -> Result<Option<Box<dyn super::Backend>>> {
        Ok(None)
    }

    /// The blob references of namespace `ns` of `thread` ([`BlobRefs`]), where the
    /// store keeps blobs apart (Postgres) and a long namespace's are decided a window
    /// at a time from them; `None` elsewhere, or when the namespace is empty.
    async fn blob_refs(&mut self, _at: (&str, &str)) -> Result<Option<BlobRefs>> {
        Ok(None)
    }

    /// The (thread, namespace, id) of the checkpoints of `threads` that hold a
    /// `__interrupt__` pending write (what LangGraph saves when a run stops at
    /// `interrupt()`).
    async fn interrupted(
        &mut self,
        threads: &[String],
    ) -> Result<HashSet<(String, String, String)>>;

    /// Removes (or counts, in a dry run) `removal` in one transaction.
    async fn remove(&mut self, removal: &Removal, dry_run: bool) -> Result<Removed>;

    /// The next threads after `after` (`""`: from the first; up to 1,000), each with
    /// its oldest and newest checkpoint id: what the time rules of a whole thread read.
    async fn expiry_page(&mut self, after: &str) -> Result<Vec<(String, String, String)>>;

    /// Takes the store's sweep lock; `false` when another sweeper holds it.
    async fn try_lock(&mut self) -> Result<bool>;

    /// Takes the sweep lock again on a connection re-opened after a loss (a session
    /// lock goes with its connection); `false` when another sweeper took it meanwhile.
    async fn relock(&mut self) -> Result<bool> {
        Ok(true)
    }

    /// Lets the sweep lock go.
    async fn unlock(&mut self) -> Result<()>;

    /// After a prune: the file rewritten without its free pages (a full `VACUUM`,
    /// every writer waits for it); `false` where there is none to do (Postgres, whose
    /// autovacuum reclaims dead rows).
    async fn compact(&mut self) -> Result<bool> {
        Ok(false)
    }

    /// After a retention sweep: free pages given back in short steps (a pause between
    /// them, stopped by `stop`); `None` where there is none to do.
    async fn compact_in_steps(
        &mut self,
        _pause: Option<Duration>,
        _stop: Option<&AtomicBool>,
    ) -> Result<Option<VacuumReport>> {
        Ok(None)
    }

    /// Inserts `rows` of `spec`'s table in one transaction, each only where its key is
    /// free (insert-if-absent); per row: inserted (true) or already there (false).
    /// `copy_first`: into Postgres the batch is first sent whole with `COPY`, and goes
    /// in window by window only when a key is taken. The second value: whether the
    /// `COPY` took the batch.
    async fn insert_rows(
        &mut self,
        spec: &Spec,
        rows: &[Vec<Cell>],
        copy_first: bool,
    ) -> Result<(Vec<bool>, bool)>;

    /// The row of `spec`'s table at `key` (its first `spec.keys` cells), as cells.
    async fn row_at(&mut self, spec: &Spec, key: &[Cell]) -> Result<Option<Vec<Cell>>>;

    /// Which of the checkpoints at `keys` (thread, namespace, id) the target holds, by
    /// position.
    async fn holds_checkpoints(&mut self, keys: &[[&str; 3]]) -> Result<Vec<bool>>;

    /// A copy's batch: the write rows whose key is free, in one transaction, and (into
    /// SQLite, in the same transaction after them) the carried checkpoint rows whose
    /// key is free; how many write rows and how many checkpoints were inserted.
    /// `fresh`: none of the batch's checkpoints is in the target (into Postgres the
    /// writes then go with one `COPY`).
    async fn insert_writes(&mut self, batch: &[WriteSet<'_>], fresh: bool) -> Result<(u64, u64)>;

    /// Before a copy: the write-ahead log is checkpointed by the copy's read-back
    /// connection rather than on the writer's commits (SQLite).
    async fn defer_wal_checkpoints(&mut self) -> Result<()> {
        Ok(())
    }
}

/// One checkpoint of a copy's batch as [`Checkpoints::insert_writes`] takes it: its
/// key (thread, namespace, id), its pending writes, and its row when it is carried as
/// stored (into SQLite).
pub(crate) struct WriteSet<'a> {
    pub key: [&'a str; 3],
    pub writes: &'a [StoredWrite],
    pub row: Option<&'a StoredRow>,
}

/// `SELECT` of the row of `spec`'s table at a key (its first `spec.keys` columns as
/// parameters; `sqlite`: `?n` placeholders, else `$n`), JSONB columns as their text.
pub(crate) fn row_at_sql(spec: &Spec, sqlite: bool) -> String {
    let exprs: Vec<String> = spec
        .cols
        .iter()
        .map(|(_, e, k)| {
            if *k == Col::Jsonb {
                format!("{e}::text")
            } else {
                (*e).to_owned()
            }
        })
        .collect();
    let cond: Vec<String> = spec
        .cols
        .iter()
        .take(spec.keys)
        .enumerate()
        .map(|(i, (_, e, _))| format!("{e} = {}", ph(sqlite, i + 1)))
        .collect();
    format!(
        "SELECT {} FROM {} WHERE {}",
        exprs.join(", "),
        spec.table,
        cond.join(" AND ")
    )
}

/// `LIKE` pattern of a uuid6's shape (`xxxxxxxx-xxxx-6xxx-xxxx-xxxxxxxxxxxx`). A thread
/// whose ids all have it and hold no uppercase letter has its ids in time order
/// bytewise: its oldest and newest ids are its oldest and newest in time. (A regular
/// expression checking each character took 50 ms for 8,000 ids against 4 ms for this
/// pattern, PG 15 in `C.UTF-8`.)
const UUID6_SHAPE: &str = "________-____-6___-____-____________";

/// Counts a thread's ids that are not of a uuid6's shape in lowercase (`{id}`: the id
/// column as compared bytewise).
pub(crate) fn odd_ids(id: &str) -> String {
    format!("{id} NOT LIKE '{UUID6_SHAPE}' OR {id} <> lower({id})")
}

/// A backup's and a target's table: its columns and their kinds.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Col {
    Text,
    OptText,
    Int,
    Bytes,
    /// Postgres JSONB, read as text, stored as its bytes.
    Jsonb,
}

#[derive(Clone)]
pub(crate) struct Spec {
    pub(crate) kind: &'static str,
    pub(crate) table: &'static str,
    /// Output name, SQL expression, kind; the first `keys` are the primary key.
    pub(crate) cols: Vec<(&'static str, &'static str, Col)>,
    pub(crate) keys: usize,
}

impl Spec {
    /// Where this kind's rows are counted in the `end` line's
    /// `[checkpoints, blobs, writes]`.
    pub(crate) fn count_slot(&self) -> usize {
        match self.kind {
            "checkpoint" => 0,
            "blob" => 1,
            _ => 2,
        }
    }
}

/// One decoded cell of a backup line.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub(crate) enum Cell {
    Text(Option<String>),
    Int(i64),
    Bytes(Option<Vec<u8>>),
}

/// `?1, ?2, …` (SQLite) or `$1, $2, …` (Postgres) placeholders.
pub(crate) fn ph(sqlite: bool, i: usize) -> String {
    if sqlite {
        format!("?{i}")
    } else {
        format!("${i}")
    }
}
