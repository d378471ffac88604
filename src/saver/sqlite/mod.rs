//! [`SqliteSaver`]: Python's `langgraph-checkpoint-sqlite` saver, on the very same file.
//!
//! The tables, their columns and every row are Python's (`SqliteSaver` /
//! `AsyncSqliteSaver` of `langgraph-checkpoint-sqlite==3.1.2`): a Python graph and a
//! Rust service can share one checkpoint file, each reading and continuing what the
//! other wrote, plain or encrypted.
//!
//! | table | column | what it holds | under encryption |
//! |---|---|---|---|
//! | `checkpoints` | `type`, `checkpoint` | `dumps_typed` of the whole checkpoint, channel values included | ciphertext (`msgpack+aes`) |
//! | `checkpoints` | `metadata` | `json.dumps(metadata, ensure_ascii=False)` as UTF-8 | **in clear** (Python filters on it in SQL) |
//! | `writes` | `type`, `value` | `dumps_typed` of each pending write | ciphertext |
//! | both | thread, namespace, checkpoint and task ids, `task_path`, `idx`, `channel`, parent id | keys | **in clear** |
//!
//! Beyond Python's saver:
//! - **No "database is locked".** The file is in WAL mode; every write is one
//!   transaction that takes the write lock up front (`BEGIN IMMEDIATE`, or a single
//!   statement's own autocommit transaction, which does the same) on the saver's
//!   single writer connection (other processes are waited for up to the busy timeout),
//!   and reads run in parallel on a pool of reader connections, each in one snapshot.
//!   Python uses one connection with deferred transactions.
//! - **No blocked executor, and no hop when none is needed.** Inside a Tokio runtime
//!   `put`, `put_writes` and `get_tuple` run on the calling task when they cannot wait
//!   (the connection free, the commit not syncing, the lock tried with a zero busy
//!   timeout) and on Tokio's blocking pool when they might; every other call runs on
//!   the pool. Outside a runtime the SQL runs inline. See
//!   [`SqliteSaverBuilder::inline_fast_path`].
//! - **WAL checkpoints in the background.** A thread of the saver, started by its first
//!   write, checkpoints the WAL (`PASSIVE`) once ~1,000 pages were written, so no
//!   `put` pays for copying the WAL into the file; the writer checkpoints itself only to
//!   let SQLite restart a WAL of ~8,000 frames. Durability is SQLite's, unchanged.
//! - **`list` without N+1.** The pending writes of a whole `list` come in one query
//!   (Python runs one per checkpoint).
//! - **Opening writes nothing.** [`SqliteSaver::open`] opens an existing store as it
//!   is (its journal mode included); a missing file is [`ErrorKind::StoreNotFound`](crate::ErrorKind::StoreNotFound),
//!   not a new empty store. [`SqliteSaver::create`] (or the builder's
//!   [`create(true)`](SqliteSaverBuilder::create)) makes one as Python's `setup()` does.
//!   Another application's SQLite file is refused ([`ErrorKind::Schema`](crate::ErrorKind::Schema)) before
//!   anything is written.
//! - **`setup()` without races**, in one transaction, and a layout check that refuses
//!   a file whose tables have another shape ([`ErrorKind::Schema`](crate::ErrorKind::Schema)).
//! - The extended capabilities: `delete_for_runs`, `copy_thread` and `prune`, which never
//!   cut a delta-channel chain that a kept checkpoint still needs.
//!
//! ```
//! use langgraph_codec::saver::sqlite::SqliteSaver;
//! use langgraph_codec::saver::{Checkpoint, CheckpointConfig, CheckpointMetadata, CheckpointSaver};
//! use langgraph_codec::Value;
//!
//! # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
//! let dir = std::env::temp_dir().join(format!("lgcodec-doc-{}", std::process::id()));
//! std::fs::create_dir_all(&dir)?;
//! // `create` makes a new store as Python's setup() does; `open` opens an existing one
//! // and writes nothing (a missing file is an error, not a new store).
//! let saver = SqliteSaver::create(dir.join("checkpoints.sqlite"))?;
//! let mut cp = Checkpoint::now(-1);
//! cp.channel_values.insert("topic".into(), Value::from("rust"));
//! let stored = saver
//!     .put(&CheckpointConfig::new("t1"), &cp, &CheckpointMetadata::new("input", -1), &Default::default())
//!     .await?;
//! let tuple = saver.get_tuple(&stored).await?.expect("just stored");
//! assert_eq!(tuple.checkpoint.channel_values.get("topic"), Some(&Value::from("rust")));
//! # std::fs::remove_dir_all(&dir)?;
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! # }).unwrap();
//! ```

use std::collections::{BTreeSet, HashMap};
use std::fmt;
use std::path::Path;
use std::sync::Arc;

use async_trait::async_trait;
use indexmap::IndexMap;
use rusqlite::types::{Value as SqlValue, ValueRef};
use rusqlite::{params, params_from_iter, Connection, Row};

use super::codec::{unreadable, RowKind};
use super::error::SaverFault;
use super::pyjson;
use super::rows::{RawCheckpointRow, RawRows, RawWriteRow};
use super::traits::{Capabilities, CheckpointSaver, ListOptions, PruneStrategy};
use super::types::{
    all_special, checkpoint_metadata, next_string_version, refuse_deep_metadata, write_idx,
    ChannelVersion, ChannelVersions, Checkpoint, CheckpointConfig, CheckpointMetadata,
    CheckpointTuple, DeltaChannelHistory, PendingWrite,
};
use crate::compression::DecompressionBudget;
use crate::error::Error;
use crate::saver::Result;
use crate::serializer::TypedSerializerExt;
use crate::serializer::{Serializer, TypedBytes};
use crate::value::Value;

mod builder;
mod catalog;
mod conn;
mod extended;
mod filter;
pub(crate) mod retention;
mod rows;
mod run;
mod schema;
mod sql;

use rows::{
    collect_writes, collect_writes_of_one, quick_to_decode, CheckpointRow, WriteRow,
    WritesByCheckpoint, CHECKPOINT_COLUMNS, WRITE_ORDER, WRITE_SELECT,
};
use sql::{delete_thread_rows, insert_writes, writes_statements, PutRow};

pub use builder::SqliteSaverBuilder;
pub use conn::Synchronous;

/// The SQLite driver this saver is built on (rusqlite 0.37, bundled SQLite 3.50),
/// re-exported: use it to open the same file yourself. Adding another `rusqlite`
/// to your `Cargo.toml` works only at this same minor version, since two versions
/// cannot both link `sqlite3`.
pub use rusqlite;
// `inspect_layout` is for the read-only store opener (`crate::store`), too.
use conn::{wal_pages, Connections, Statements, CHECKPOINT_PAGES};
#[allow(unused_imports)]
pub(crate) use schema::{inspect_layout, python_columns, Layout};
// The catalog reader behind `inspect_layout`, `detect_sqlite` and the store opener.
pub(crate) use catalog::Catalog;

/// The largest write (in WAL pages, see [`wal_pages`]) the fast path runs on the
/// calling task: about 64 KB of row data.
const INLINE_MAX_PAGES: u64 = 20;

/// The most stored bytes (checkpoint, metadata and writes) that `get_tuple`'s fast path
/// decodes on the calling task (a 20-message checkpoint is ~10 KB and decodes in
/// ~15 µs); compressed rows are always decoded on the blocking pool.
const INLINE_DECODE_BYTES: usize = 32 * 1024;

use crate::saver::METADATA_MAX_DEPTH;

/// Maps a rusqlite error into [`ErrorKind::Storage`](crate::ErrorKind::Storage) for `operation`.
pub(super) fn storage(operation: &'static str) -> impl Fn(rusqlite::Error) -> Error {
    move |e| {
        SaverFault::Storage {
            operation,
            source: Box::new(e),
        }
        .into()
    }
}

/// Python's `SqliteSaver` on a file Python can open too. See the [module docs](self).
///
/// Cheap to clone (the connections are shared) and `Send + Sync`: share one saver
/// between tasks. Open it with [`open`](Self::open), [`open_in_memory`](Self::open_in_memory)
/// or [`builder`](Self::builder).
#[derive(Clone)]
pub struct SqliteSaver {
    inner: Arc<Inner>,
}

struct Inner {
    serde: Arc<dyn Serializer>,
    conns: Connections,
    max_decompressed_per_call: usize,
    /// [`SqliteSaverBuilder::inline_fast_path`].
    inline: bool,
}

impl fmt::Debug for SqliteSaver {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SqliteSaver")
            .field("path", &self.inner.conns.path())
            .field("serde", &self.inner.serde)
            .finish_non_exhaustive()
    }
}

impl SqliteSaver {
    /// The serializer rows are written with.
    pub fn serializer(&self) -> &Arc<dyn Serializer> {
        &self.inner.serde
    }

    /// The database file, `None` in memory.
    pub fn path(&self) -> Option<&Path> {
        self.inner.conns.path()
    }

    /// Python's `setup()`: WAL mode, both tables, the `task_path` migration, in one
    /// `BEGIN IMMEDIATE` transaction (so concurrent setups do not race), then the layout
    /// check. Idempotent; Python's `setup()` after it changes nothing, and it changes
    /// nothing after Python's.
    ///
    /// # Errors
    /// [`ErrorKind::Storage`](crate::ErrorKind::Storage) or [`ErrorKind::Schema`](crate::ErrorKind::Schema).
    pub async fn setup(&self) -> Result<()> {
        self.run(|inner| {
            inner.conns.with_writer(schema::setup)?;
            inner.conns.note_journal_mode();
            Ok(())
        })
        .await
    }

    /// Checks, writing nothing, that both tables have Python's layout.
    ///
    /// # Errors
    /// [`ErrorKind::Schema`](crate::ErrorKind::Schema) naming the table and what differs.
    pub async fn verify(&self) -> Result<()> {
        self.run(|inner| inner.conns.read("verify", schema::verify))
            .await
    }
}

impl SqliteSaver {
    /// The row Python's `put` writes: the whole serialized checkpoint (channel values
    /// included), its metadata as `json.dumps` text and the parent id from `config`.
    ///
    /// `values`: channel values given as their clear `dumps_typed` pairs (`msgpack`,
    /// `bytes`, `null`) instead of in `checkpoint`, put into its `channel_values` as
    /// their bytes ([`rows::splice_values`]), so the row is the one `put` writes of the
    /// checkpoint holding them decoded.
    fn put_row(
        &self,
        config: &CheckpointConfig,
        checkpoint: &Checkpoint,
        metadata: &CheckpointMetadata,
        values: &[(String, TypedBytes)],
    ) -> Result<PutRow> {
        let thread = config.require_thread_id("put")?.to_owned();
        // The typed serializer writes the dict straight from the checkpoint: the same
        // bytes as dumps_typed(&checkpoint.to_value()), without copying the state first.
        let mut row = self.inner.serde.dumps_typed_value(&checkpoint.dict(true))?;
        if !values.is_empty() {
            row = rows::splice_values(row, values)?;
        }
        let metadata_value = checkpoint_metadata(config, metadata).to_value();
        refuse_deep_metadata(&metadata_value, METADATA_MAX_DEPTH)?;
        let metadata_text = pyjson::dumps(&metadata_value, pyjson::METADATA)
            .map_err(|reason| SaverFault::InvalidMetadata { reason })?;
        Ok(PutRow {
            thread,
            ns: config.ns().to_owned(),
            id: checkpoint.id.clone(),
            parent: config.checkpoint_id.clone(),
            row,
            metadata_text,
        })
    }

    /// [`put`](CheckpointSaver::put) of many checkpoints in **one** transaction: the
    /// same rows, one commit (a store copy writes its batches this way). Either every
    /// row is stored or none is. Returns the columns written for each checkpoint, in
    /// order (what a copy compares the stored rows with).
    ///
    /// # Errors
    /// As `put`: a value the serializer refuses, metadata nested too deep, the
    /// database's errors (then nothing is stored).
    // Only the store copy (which needs both backends) writes batches.
    #[cfg(all(feature = "sqlite", feature = "postgres"))]
    /// Each item's channel values given as `dumps_typed` pairs are put as `put_row`
    /// puts them.
    pub(crate) async fn put_batch(&self, items: &[SqlitePutItem<'_>]) -> Result<Vec<StoredRow>> {
        let rows = items
            .iter()
            .map(|(config, checkpoint, metadata, values)| {
                self.put_row(config, checkpoint, metadata, values)
            })
            .collect::<Result<Vec<_>>>()?;
        let pages = wal_pages(rows.iter().map(PutRow::bytes).sum());
        // The rows come back from the write, taken apart without copying their bytes.
        let rows = self
            .run(move |inner| {
                inner.conns.write("put", pages, Statements::Many, |tx| {
                    rows.iter().try_for_each(|row| row.insert(tx))?;
                    Ok(rows)
                })
            })
            .await?;
        Ok(rows
            .into_iter()
            .map(|r| StoredRow {
                parent: r.parent,
                type_tag: Some(r.row.type_tag),
                checkpoint: Some(Vec::from(r.row.data)),
                metadata: Some(r.metadata_text.into_bytes()),
            })
            .collect())
    }

    /// A checkpoint row and its write rows as a SQLite store holds them (another
    /// store's, carried into this one by a store copy), decoded as
    /// [`get_tuple`](CheckpointSaver::get_tuple) decodes this store's own: how a copy
    /// compares a stored row whose bytes differ from its source's.
    ///
    /// # Errors
    /// As `get_tuple`: a row the serializer cannot read.
    #[cfg(all(feature = "sqlite", feature = "postgres"))]
    pub(crate) fn decode_stored(
        &self,
        (thread, ns, id): (&str, &str, &str),
        row: StoredRow,
        writes: Vec<StoredWrite>,
    ) -> Result<CheckpointTuple> {
        let row = CheckpointRow {
            thread_id: thread.to_owned(),
            checkpoint_ns: ns.to_owned(),
            checkpoint_id: id.to_owned(),
            parent: row.parent,
            type_tag: row.type_tag,
            checkpoint: row.checkpoint,
            metadata: row.metadata,
        };
        let writes: Vec<WriteRow> = writes
            .into_iter()
            .map(|w| WriteRow {
                task_id: w.task_id,
                channel: w.channel,
                type_tag: w.type_tag,
                value: w.value,
                idx: w.idx,
            })
            .collect();
        self.inner.decode_tuple(
            &row,
            &writes,
            CheckpointConfig::for_checkpoint(thread, ns, id),
        )
    }
}

/// A checkpoint for [`SqliteSaver::put_batch`]: its config (thread, namespace, parent
/// id), the checkpoint and metadata, and channel values given as their clear
/// `dumps_typed` pairs instead of in the checkpoint.
#[cfg(all(feature = "sqlite", feature = "postgres"))]
pub(crate) type SqlitePutItem<'a> = (
    CheckpointConfig,
    &'a Checkpoint,
    &'a CheckpointMetadata,
    &'a [(String, TypedBytes)],
);

/// The columns of a `checkpoints` row after its key, as stored
/// ([`SqliteSaver::decode_stored`]).
#[cfg(all(feature = "sqlite", feature = "postgres"))]
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct StoredRow {
    pub(crate) parent: Option<String>,
    pub(crate) type_tag: Option<String>,
    pub(crate) checkpoint: Option<Vec<u8>>,
    pub(crate) metadata: Option<Vec<u8>>,
}

/// The columns of a `writes` row after its checkpoint's key, as stored.
#[cfg(all(feature = "sqlite", feature = "postgres"))]
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct StoredWrite {
    pub(crate) task_id: String,
    pub(crate) task_path: String,
    pub(crate) idx: i64,
    pub(crate) channel: String,
    pub(crate) type_tag: Option<String>,
    pub(crate) value: Option<Vec<u8>>,
}

#[cfg(all(feature = "sqlite", feature = "postgres"))]
impl StoredWrite {
    /// The type tag, `""` for a NULL cell.
    pub(crate) fn tag(&self) -> &str {
        self.type_tag.as_deref().unwrap_or_default()
    }

    /// The value's bytes, empty for a NULL cell.
    pub(crate) fn data(&self) -> &[u8] {
        self.value.as_deref().unwrap_or_default()
    }
}

#[async_trait]
impl CheckpointSaver for SqliteSaver {
    /// [`SqliteSaver::verify`]: the tables have Python's layout.
    async fn verify(&self) -> Result<()> {
        SqliteSaver::verify(self).await
    }

    /// Python's `put`: `INSERT OR REPLACE` of the whole serialized checkpoint (channel
    /// values included), its metadata as `json.dumps` text and the parent id from
    /// `config`. `new_versions` is not needed: the values live in the checkpoint row.
    async fn put(
        &self,
        config: &CheckpointConfig,
        checkpoint: &Checkpoint,
        metadata: &CheckpointMetadata,
        _new_versions: &ChannelVersions,
    ) -> Result<CheckpointConfig> {
        let row = self.put_row(config, checkpoint, metadata, &[])?;
        let out = row.config();
        let pages = wal_pages(row.bytes());
        self.write("put", pages, Statements::One, move |conn| row.insert(conn))
            .await?;
        Ok(out)
    }

    /// Python's `put_writes`: `INSERT OR REPLACE` when every channel is a special one
    /// (`__error__`, `__scheduled__`, `__interrupt__`, `__resume__`), else
    /// `INSERT OR IGNORE` (a retried task's first writes win).
    async fn put_writes(
        &self,
        config: &CheckpointConfig,
        writes: &[(String, Value)],
        task_id: &str,
        task_path: &str,
    ) -> Result<()> {
        let keys = [
            config.require_thread_id("put_writes")?,
            config.ns(),
            config.require_checkpoint_id("put_writes")?,
            task_id,
            task_path,
        ];
        let replace = all_special(writes);
        let rows = writes
            .iter()
            .enumerate()
            .map(|(position, (channel, value))| {
                Ok((
                    write_idx(channel, position),
                    channel.as_str(),
                    self.inner.serde.dumps_typed(value)?,
                ))
            })
            .collect::<Result<Vec<(i64, &str, TypedBytes)>>>()?;
        let pages = wal_pages(rows.iter().map(|(_, _, v)| v.data.len()).sum());
        let statements = writes_statements(rows.len());
        // The fast path borrows the keys and channels; only the pool's copy owns them.
        if self.inner.inline {
            let insert = |tx: &Connection| insert_writes(tx, replace, keys, &rows);
            let fast = self.inner.conns.try_write(
                "put_writes",
                pages,
                INLINE_MAX_PAGES,
                statements,
                &insert,
            );
            if let Some(out) = fast {
                return out;
            }
        }
        let keys = keys.map(str::to_owned);
        let rows: Vec<(i64, String, TypedBytes)> = rows
            .into_iter()
            .map(|(idx, channel, value)| (idx, channel.to_owned(), value))
            .collect();
        self.run(move |inner| {
            inner.conns.write("put_writes", pages, statements, |tx| {
                insert_writes(tx, replace, keys.each_ref().map(String::as_str), &rows)
            })
        })
        .await
    }

    /// Python's `get_tuple`: by id, or the latest (`ORDER BY checkpoint_id DESC`) of the
    /// thread and namespace; the checkpoint and its writes from one snapshot.
    async fn get_tuple(&self, config: &CheckpointConfig) -> Result<Option<CheckpointTuple>> {
        let thread = config.require_thread_id("get_tuple")?.to_owned();
        let ns = config.ns().to_owned();
        let id = config.checkpoint_id.clone().filter(|id| !id.is_empty());
        let config = config.clone();
        let read = move |tx: &Connection| {
            // Cached statements: parsing the SELECT took ~55k of get_tuple's ~290k
            // instructions (callgrind).
            let row = match &id {
                Some(id) => {
                    tx.prepare_cached(&format!(
                        "SELECT {CHECKPOINT_COLUMNS} FROM checkpoints \
                         WHERE thread_id = ? AND checkpoint_ns = ? AND checkpoint_id = ?"
                    ))
                    .and_then(|mut s| s.query_row(params![thread, ns, id], CheckpointRow::from_row))
                }
                None => tx
                    .prepare_cached(&format!(
                        "SELECT {CHECKPOINT_COLUMNS} FROM checkpoints \
                         WHERE thread_id = ? AND checkpoint_ns = ? \
                         ORDER BY checkpoint_id DESC LIMIT 1"
                    ))
                    .and_then(|mut s| s.query_row(params![thread, ns], CheckpointRow::from_row)),
            };
            let row = match row {
                Ok(row) => row,
                Err(rusqlite::Error::QueryReturnedNoRows) => return Ok(None),
                Err(e) => return Err(storage("get_tuple")(e)),
            };
            let mut stmt = tx
                .prepare_cached(&format!(
                    "{WRITE_SELECT} WHERE w.thread_id = ? AND w.checkpoint_ns = ? \
                     AND w.checkpoint_id = ? {WRITE_ORDER}"
                ))
                .map_err(storage("get_tuple"))?;
            let writes = stmt
                .query(params![row.thread_id, row.checkpoint_ns, row.checkpoint_id])
                .map_err(storage("get_tuple"))
                .and_then(|rows| collect_writes_of_one(rows).map_err(storage("get_tuple")))?;
            Ok(Some((row, writes)))
        };
        let by_id = config
            .checkpoint_id
            .as_deref()
            .is_some_and(|id| !id.is_empty());
        let decode = move |inner: &Inner, found: Option<(CheckpointRow, Vec<WriteRow>)>| {
            let Some((row, writes)) = found else {
                return Ok(None);
            };
            let out_config = if by_id {
                config
            } else {
                CheckpointConfig::for_checkpoint(
                    row.thread_id.as_str(),
                    row.checkpoint_ns.as_str(),
                    row.checkpoint_id.as_str(),
                )
            };
            inner
                .call_budget()
                .scope(|| inner.decode_tuple(&row, &writes, out_config))
                .map(Some)
        };
        self.read_then("get_tuple", read, decode, |found| {
            found
                .as_ref()
                .is_none_or(|(row, writes)| quick_to_decode(row, writes))
        })
        .await
    }

    /// Python's `list`: `ORDER BY checkpoint_id DESC` over every matching thread and
    /// namespace, the metadata filter as `json_extract` equality (keys checked against
    /// `^[a-zA-Z0-9_.-]+$`), `before` and `limit` in SQL. The writes of every listed
    /// checkpoint come in one more query, from the same snapshot.
    async fn list(
        &self,
        config: Option<&CheckpointConfig>,
        options: &ListOptions,
    ) -> Result<Vec<CheckpointTuple>> {
        let (clause, mut params) = filter::search_where(config, options)?;
        let limit = match options.limit {
            Some(l) => {
                params.push(SqlValue::Integer(i64::try_from(l).unwrap_or(i64::MAX)));
                " LIMIT ?"
            }
            None => "",
        };
        self.run(move |inner| {
            let (rows, mut writes) = inner.conns.read("list", |tx| {
                let sql = format!(
                    "SELECT {CHECKPOINT_COLUMNS} FROM checkpoints {clause} \
                     ORDER BY checkpoint_id DESC{limit}"
                );
                let mut stmt = tx.prepare_cached(&sql).map_err(storage("list"))?;
                let rows = stmt
                    .query_map(params_from_iter(params.iter()), CheckpointRow::from_row)
                    .map_err(storage("list"))?
                    .collect::<rusqlite::Result<Vec<_>>>()
                    .map_err(storage("list"))?;
                if rows.is_empty() {
                    return Ok((rows, WritesByCheckpoint::new()));
                }
                let sql = format!(
                    "WITH sel AS (SELECT thread_id, checkpoint_ns, checkpoint_id FROM checkpoints \
                     {clause} ORDER BY checkpoint_id DESC{limit}) \
                     {WRITE_SELECT} JOIN sel ON w.thread_id = sel.thread_id \
                     AND w.checkpoint_ns = sel.checkpoint_ns AND w.checkpoint_id = sel.checkpoint_id \
                     {WRITE_ORDER}"
                );
                let mut stmt = tx.prepare_cached(&sql).map_err(storage("list"))?;
                let writes = stmt
                    .query(params_from_iter(params.iter()))
                    .map_err(storage("list"))
                    .and_then(|rows| collect_writes(rows).map_err(storage("list")))?;
                Ok((rows, writes))
            })?;
            inner.call_budget().scope(|| {
                rows.into_iter()
                    .map(|row| {
                        let w = writes.remove(&row.key()).unwrap_or_default();
                        let cfg = CheckpointConfig::for_checkpoint(
                            row.thread_id.as_str(),
                            row.checkpoint_ns.as_str(),
                            row.checkpoint_id.as_str(),
                        );
                        inner.decode_tuple(&row, &w, cfg)
                    })
                    .collect()
            })
        })
        .await
    }

    /// Python's `delete_thread`: every checkpoint and write of the thread, in one
    /// transaction.
    async fn delete_thread(&self, thread_id: &str) -> Result<()> {
        let thread = thread_id.to_owned();
        self.run(move |inner| {
            inner
                .conns
                .write("delete_thread", CHECKPOINT_PAGES, Statements::Many, |tx| {
                    delete_thread_rows(tx, &thread)
                })
        })
        .await
    }

    fn capabilities(&self) -> Capabilities {
        Capabilities::ALL
    }

    /// Deletes the checkpoints whose metadata `run_id` is in `run_ids`, with their
    /// writes, in one transaction; a checkpoint that a remaining one still needs to
    /// rebuild a delta channel is kept. Rows whose metadata cannot be read, and rows
    /// whose ids are not UTF-8 text, are never matched (and so stay).
    async fn delete_for_runs(&self, run_ids: &[String]) -> Result<()> {
        self.delete_for_runs_rows(run_ids).await
    }

    /// Copies every checkpoint and write of one thread to another (replacing rows with
    /// the same key), in one transaction. A missing source copies nothing.
    async fn copy_thread(&self, source_thread_id: &str, target_thread_id: &str) -> Result<()> {
        self.copy_thread_rows(source_thread_id, target_thread_id)
            .await
    }

    /// `KeepLatest` keeps the latest checkpoint of every namespace and the ancestors it
    /// needs to rebuild its delta channels, with their writes; `Delete` deletes the
    /// threads. One transaction for all threads.
    async fn prune(&self, thread_ids: &[String], strategy: PruneStrategy) -> Result<()> {
        self.prune_rows(thread_ids, strategy).await
    }

    /// Python's `SqliteSaver.get_delta_channel_history` in one read snapshot: the
    /// ancestors stream from a recursive query along `parent_checkpoint_id` (stopping as
    /// soon as every channel has its seed, or at a repeated id), then the writes of the
    /// walked checkpoints come in one more query. One decompression budget for the call.
    async fn get_delta_channel_history(
        &self,
        config: &CheckpointConfig,
        channels: &[String],
    ) -> Result<IndexMap<String, DeltaChannelHistory>> {
        if channels.is_empty() {
            return Ok(IndexMap::new());
        }
        let thread = config
            .require_thread_id("get_delta_channel_history")?
            .to_owned();
        let ns = config.ns().to_owned();
        let target = config.checkpoint_id.clone().filter(|id| !id.is_empty());
        let channels = channels.to_vec();
        self.run(move |inner| {
            inner
                .call_budget()
                .scope(|| inner.delta_history(&thread, &ns, target, &channels))
        })
        .await
    }

    /// Python's `SqliteSaver.get_next_version`: `f"{n + 1:032}.{random.random():016}"`.
    fn get_next_version(&self, current: Option<&ChannelVersion>) -> Result<ChannelVersion> {
        next_string_version(current, "SqliteSaver")
    }
}
