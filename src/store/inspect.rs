//! Read-only views of a store in any layout: [`AnyStore::threads`] (latest checkpoint,
//! step, time, size per thread), [`AnyStore::history`] (a thread's checkpoints as a
//! tree with its forks), [`AnyStore::state`] (a checkpoint as the JSON view, decrypted
//! with the key ring), [`AnyStore::diff`] (channels changed and items added between
//! two checkpoints) and [`AnyStore::stats`] (rows and bytes per thread and per
//! channel). Nothing is written: SQLite files are opened without a write (bytes and
//! side files unchanged), Postgres in a read-only session.

use std::sync::Arc;

use serde_json::Value as Json;

use super::backend::ph;
use super::error::StoreFault;
use super::keys::StoreKeys;
use super::raw::{pg, serializer, Cols, Param, Raw, Result};
use super::{Access, Store};
use crate::error::Error;
use crate::kind::ErrorKind;
use crate::saver::layout::StoreLayout;
use crate::saver::postgres::PostgresSaver;
#[cfg(all(feature = "sqlite", feature = "postgres"))]
use crate::saver::postgres::{Blobs, ReadOn, TupleParts};
use crate::saver::METADATA_MAX_DEPTH;
use crate::saver::{
    Checkpoint, CheckpointConfig, CheckpointMetadata, CheckpointTuple, PendingWrite,
};
use crate::serializer::Serializer;
#[cfg(all(feature = "sqlite", feature = "postgres"))]
use std::sync::atomic::Ordering;

mod history;
mod reader;
mod threads;
mod views;
pub use history::{HistoryCounts, HistoryFormat};
pub(crate) use reader::pg_copy_target;
use reader::set_lock_timeout;
pub use views::{
    diff_checkpoints, tuple_json, CheckpointDiff, HistoryNode, ThreadHistory, ThreadSummary,
};

/// A store of any layout `saver::layout` detects, opened read-only for inspect,
/// stats, export and the source of copy: the [`Store`] handle opened for inspection,
/// and the reader of its rows in the layout found, on the store's own connection.
#[derive(Debug)]
pub struct AnyStore {
    /// The handle (its backend holds the connection the reader reads on).
    store: Store,
    pub(crate) raw: Raw,
    /// The Postgres saver [`AnyStore::tuple`] reads through, made at the first read and
    /// kept, its pool shared by every serializer a call gives (one saver per call was
    /// one new connection per checkpoint a copy read).
    pg_reader: std::sync::Mutex<Option<PostgresSaver>>,
    /// Set when the server had no slot for a connection of that saver's pool (SQLSTATE
    /// 53300: `max_connections`, the role's `CONNECTION LIMIT`): from then on
    /// [`AnyStore::tuple`] reads on the store's own connection, its reads pipelined
    /// there.
    own_connection_reads: std::sync::atomic::AtomicBool,
    /// Postgres: how long a read waits for a lock, on every connection
    /// ([`open_with_lock_timeout`](Self::open_with_lock_timeout)); `None`: the server's.
    lock_timeout: Option<std::time::Duration>,
}

/// Checkpoints [`AnyStore::check_history`] reads at once.
const CHECKS_IN_FLIGHT: usize = 4;

fn metadata_of(bytes: Option<&[u8]>) -> Option<CheckpointMetadata> {
    let text = bytes?;
    let value = crate::json::parse(text, METADATA_MAX_DEPTH).ok()?;
    CheckpointMetadata::from_value(&value).ok()
}

/// A saver's read failure as the store reports it: a lost connection stays one, and so
/// does a lock wait given up (the caller may reconnect or step aside), a connection not
/// to be had and a statement the database refused; what is left (a value that does not
/// decode, a column that does not parse) is the row's fault, [`unreadable`] at `what`.
fn unreadable_row(what: impl FnOnce() -> String, e: Error) -> Error {
    // The database's and the connection's failures (a statement refused, no
    // connection to be had) are not the row's: said as they are, they stop the read
    // instead of marking a checkpoint that may decode well.
    let not_the_rows = matches!(
        e.kind(),
        ErrorKind::ConnectionUnavailable
            | ErrorKind::Storage
            | ErrorKind::Tls
            | ErrorKind::InvalidStoreLocation
            | ErrorKind::LockTimeout
    );
    if not_the_rows || e.is_connection_lost() || super::retry::is_lock_conflict(&e) {
        return e;
    }
    unreadable(what(), e)
}

fn unreadable(what: String, e: Error) -> Error {
    StoreFault::Unreadable {
        what,
        reason: super::error::read_failure(&e),
    }
    .into()
}

/// A checkpoint row of a SQLite store (any layout: its parent, type, checkpoint and
/// metadata columns) with its write rows (task id, channel, type, value; in
/// `(task_path, task_id, idx)` order), decoded with `serde` as the SQLite savers read
/// them: metadata as JSON text (none: empty).
///
/// # Errors
/// [`StoreFault::Unreadable`], naming the row, for a value `serde` cannot read.
pub(crate) fn decode_sqlite_row<'w>(
    serde: &dyn Serializer,
    (thread, ns, id): (&str, &str, &str),
    parent: Option<&str>,
    (ty, data, meta): (&str, &[u8], Option<&[u8]>),
    writes: impl Iterator<Item = (&'w str, &'w str, &'w str, &'w [u8])>,
) -> Result<CheckpointTuple> {
    let at = format!("checkpoint {thread}/{ns:?}/{id}");
    let value = serde
        .loads_typed(ty, data)
        .map_err(|e| unreadable(at.clone(), e))?;
    let checkpoint = Checkpoint::from_owned_value(value).map_err(|e| unreadable(at.clone(), e))?;
    let metadata = match meta {
        None => CheckpointMetadata::default(),
        Some(text) => {
            let v = crate::json::parse(text, METADATA_MAX_DEPTH)
                .map_err(|e| unreadable(format!("metadata of {at}"), e.into()))?;
            CheckpointMetadata::from_value(&v)
                .map_err(|e| unreadable(format!("metadata of {at}"), e))?
        }
    };
    let mut pending_writes = Vec::new();
    for (task_id, channel, ty, data) in writes {
        let value = serde
            .loads_typed(ty, data)
            .map_err(|e| unreadable(format!("write {task_id}/{channel} of {at}"), e))?;
        pending_writes.push(PendingWrite {
            task_id: task_id.to_owned(),
            channel: channel.to_owned(),
            value,
        });
    }
    Ok(CheckpointTuple {
        config: CheckpointConfig::for_checkpoint(thread, ns, id),
        parent_config: parent
            .filter(|p| !p.is_empty())
            .map(|p| CheckpointConfig::for_checkpoint(thread, ns, p)),
        checkpoint,
        metadata,
        pending_writes,
    })
}

impl AnyStore {
    /// For a dry run that would write `writes` into this store: why the run would be
    /// refused ([`Values::refuses`](super::backend::Values::refuses)).
    pub(crate) async fn refuses(&self, writes: super::backend::Writes) -> Result<Option<String>> {
        self.store.backend().refuses(writes).await
    }

    /// Opens a store of any known layout read-only: `sqlite:PATH`, a file path or a
    /// `postgres://` URL.
    ///
    /// # Errors
    /// [`ErrorKind::StoreNotFound`](crate::ErrorKind::StoreNotFound), [`ErrorKind::NotAStore`](crate::ErrorKind::NotAStore) (no saver's tables), the database's errors.
    pub async fn open(location: &str) -> Result<Self> {
        let mut store = Store::open_as(location, Access::Inspect).await?;
        Ok(AnyStore {
            raw: store.take_reader()?,
            store,
            pg_reader: std::sync::Mutex::new(None),
            own_connection_reads: std::sync::atomic::AtomicBool::new(false),
            lock_timeout: None,
        })
    }

    /// As [`open`](Self::open); on Postgres every connection the store reads on (its
    /// own, and those [`tuple`](Self::tuple) reads through) gives up a wait for a lock
    /// after `timeout`, with SQLSTATE 55P03 (`lock_not_available`).
    ///
    /// # Errors
    /// As [`open`](Self::open).
    pub(crate) async fn open_with_lock_timeout(
        location: &str,
        timeout: std::time::Duration,
    ) -> Result<Self> {
        let mut store = Self::open(location).await?;
        if let Raw::Postgres { client, .. } = &store.raw {
            client
                .batch_execute(&set_lock_timeout(timeout))
                .await
                .map_err(pg("connect"))?;
            store.lock_timeout = Some(timeout);
        }
        Ok(store)
    }

    /// The layout found.
    pub fn layout(&self) -> &StoreLayout {
        self.raw.layout()
    }

    /// `sqlite` or `postgres`.
    pub fn backend_name(&self) -> &'static str {
        self.store.backend_name()
    }

    /// Where the store is.
    pub fn location(&self) -> &super::Location {
        self.store.location()
    }

    /// A thread's checkpoints as a tree (parents from `parent_checkpoint_id`), with
    /// step and source from the metadata (in clear in every layout).
    ///
    /// # Errors
    /// The database's errors.
    pub async fn history(&self, thread: &str) -> Result<ThreadHistory> {
        // Each row made a node as it is read, its metadata parsed and dropped: a thread
        // of 100,000 checkpoints held its rows, then a copy of them with the metadata,
        // then the nodes.
        let mut nodes: Vec<HistoryNode> = Vec::new();
        self.each_node(thread, |node| {
            nodes.push(node);
            Ok(())
        })
        .await?;
        // Each node's children, found by index rather than by copies of the keys: the
        // nodes' indices sorted by (namespace, id) and looked up by binary search (a
        // hashed map of them took 5 MiB for a thread of 100,000), each list allocated
        // at its length (a first push gives four slots, 96 bytes, where most nodes
        // have one child).
        let parents: Vec<Option<usize>> = {
            let by_key = views::ByKey::new(&nodes);
            // A parent is most often the node read just before it.
            let mut before: Option<&HistoryNode> = None;
            nodes
                .iter()
                .enumerate()
                .map(|(i, n)| {
                    let previous = before.replace(n);
                    let p = n.parent_checkpoint_id.as_deref()?;
                    match previous {
                        Some(b) if b.checkpoint_id == p && b.checkpoint_ns == n.checkpoint_ns => {
                            i.checked_sub(1)
                        }
                        _ => by_key.find(&n.checkpoint_ns, p),
                    }
                })
                .collect()
        };
        let mut counts = vec![0usize; nodes.len()];
        for p in parents.iter().flatten() {
            if let Some(c) = counts.get_mut(*p) {
                *c += 1;
            }
        }
        let mut kids: Vec<Vec<String>> = counts.into_iter().map(Vec::with_capacity).collect();
        for (n, p) in nodes.iter().zip(&parents) {
            if let Some(list) = p.and_then(|p| kids.get_mut(p)) {
                list.push(n.checkpoint_id.clone());
            }
        }
        drop(parents);
        let mut forks = Vec::new();
        for (n, children) in nodes.iter_mut().zip(kids) {
            n.children = children;
            if n.children.len() > 1 {
                forks.push(n.checkpoint_id.clone());
            }
        }
        Ok(ThreadHistory {
            thread_id: thread.to_owned(),
            nodes,
            forks,
        })
    }

    /// Each checkpoint of `thread` to `f`, by namespace then id, as a node without its
    /// children: step and source from the metadata (in clear in every layout).
    async fn each_node(
        &self,
        thread: &str,
        mut f: impl FnMut(HistoryNode) -> Result<()> + Send,
    ) -> Result<()> {
        let c = self.raw.cols();
        let sqlite = self.raw.is_sqlite();
        let meta = if sqlite { "metadata" } else { "metadata::text" };
        let sql = format!(
            "SELECT {ns}, {id}, {parent}, {meta} FROM checkpoints WHERE thread_id = {p} ORDER BY {ns}, {id}",
            ns = c.ns,
            id = c.id,
            parent = c.parent,
            p = ph(sqlite, 1)
        );
        self.raw
            .each_row("read", &sql, &[thread.into()], |mut r| {
                let m = metadata_of(r.take_bytes(3).as_deref());
                f(HistoryNode {
                    checkpoint_ns: r.text(0)?,
                    checkpoint_id: r.text(1)?,
                    parent_checkpoint_id: r.opt_text(2)?.filter(|p| !p.is_empty()),
                    step: m.as_ref().and_then(CheckpointMetadata::step),
                    source: m.as_ref().and_then(|m| m.source().map(str::to_owned)),
                    children: Vec::new(),
                    unreadable: None,
                })?;
                Ok(std::ops::ControlFlow::Continue(()))
            })
            .await
    }

    /// Decodes each checkpoint of `history` (as [`state`](Self::state) would, with
    /// `keys`) and marks those that do not decode with why
    /// ([`HistoryNode::unreadable`]); returns how many. A few checkpoints are read at
    /// a time, each decoded and dropped.
    ///
    /// # Errors
    /// The database's errors (a checkpoint that does not decode is marked, not one).
    pub async fn check_history(
        &self,
        keys: &StoreKeys,
        history: &mut ThreadHistory,
    ) -> Result<u64> {
        let serde = serializer(keys);
        let thread = history.thread_id.as_str();
        let keys = history
            .nodes
            .iter()
            .map(|n| (n.checkpoint_ns.as_str(), n.checkpoint_id.as_str()));
        let found = self.why_unreadable(&serde, thread, keys).await?;
        let mut unreadable = 0u64;
        for (node, why) in history.nodes.iter_mut().zip(found) {
            unreadable += u64::from(why.is_some());
            node.unreadable = why;
        }
        Ok(unreadable)
    }

    /// For each checkpoint `(namespace, id)` of `thread` in `keys`, in order, why it
    /// does not decode with `serde` (`None`: it does), [`CHECKS_IN_FLIGHT`] read at a
    /// time: on Postgres each is a round trip (the saver's pool gives each its
    /// connection), which one at a time made a thread of 30,000 checkpoints take
    /// 4.1 s; on SQLite a read does not wait, and they run one after another.
    ///
    /// # Errors
    /// The database's errors (a checkpoint that does not decode is an answer).
    async fn why_unreadable<'k>(
        &self,
        serde: &Arc<dyn Serializer>,
        thread: &str,
        keys: impl Iterator<Item = (&'k str, &'k str)>,
    ) -> Result<Vec<Option<String>>> {
        use futures_util::StreamExt as _;
        let mut reads = futures_util::stream::iter(keys)
            .map(|(ns, id)| self.tuple(serde, thread, Some(ns), id))
            .buffered(CHECKS_IN_FLIGHT);
        let mut found = Vec::new();
        while let Some(read) = reads.next().await {
            found.push(match read {
                Err(e) if e.kind() == ErrorKind::UnreadableRow => {
                    Some(e.cause().map_or_else(|| e.to_string(), ToString::to_string))
                }
                Err(e) => return Err(e),
                Ok(_) => None,
            });
        }
        Ok(found)
    }

    /// The checkpoint `checkpoint_id` of `thread` (in namespace `ns`, or the first
    /// namespace holding that id), with its metadata, parent and pending writes,
    /// decoded with `serde`. SQLite: every layout; Postgres: every layout, through the
    /// Postgres saver's `get_tuple` ([`pg_reader`]).
    pub(crate) async fn tuple(
        &self,
        serde: &Arc<dyn Serializer>,
        thread: &str,
        ns: Option<&str>,
        checkpoint_id: &str,
    ) -> Result<Option<CheckpointTuple>> {
        let c = self.raw.cols();
        match &self.raw {
            Raw::Sqlite { .. } => {
                let sql = checkpoint_sql(&c, ns.is_some());
                let row = self
                    .raw
                    .first_row(
                        "read",
                        &sql,
                        &[thread.into(), checkpoint_id.into(), Param::Text(ns)],
                    )
                    .await?;
                let Some(mut r) = row else {
                    return Ok(None);
                };
                let (ns, parent, ty) = (r.text(0)?, r.opt_text(1)?, r.opt_text(2)?);
                let (data, meta) = (r.take_bytes(3), r.take_bytes(4));
                let wsql = format!(
                    "SELECT task_id, channel, {ty}, value FROM writes WHERE thread_id = ?1 AND {ns} = ?2 AND {id} = ?3 \
                     ORDER BY {path}, task_id, idx",
                    ty = c.w_ty,
                    ns = c.ns,
                    id = c.w_id,
                    path = c.w_path
                );
                let writes = self
                    .raw
                    .rows(
                        "read",
                        &wsql,
                        &[thread.into(), ns.as_str().into(), checkpoint_id.into()],
                    )
                    .await?
                    .into_iter()
                    .map(|mut r| Ok((r.text(0)?, r.text(1)?, r.opt_text(2)?, r.take_bytes(3))))
                    .collect::<Result<Vec<_>>>()?;
                let writes = writes.iter().map(|(task, channel, ty, data)| {
                    (
                        task.as_str(),
                        channel.as_str(),
                        ty.as_deref().unwrap_or_default(),
                        data.as_deref().unwrap_or_default(),
                    )
                });
                decode_sqlite_row(
                    &**serde,
                    (thread, &ns, checkpoint_id),
                    parent.as_deref(),
                    (
                        ty.as_deref().unwrap_or_default(),
                        data.as_deref().unwrap_or_default(),
                        meta.as_deref(),
                    ),
                    writes,
                )
                .map(Some)
            }
            Raw::Postgres { url, client, .. } => {
                let ns = match ns {
                    Some(ns) => ns.to_owned(),
                    None => {
                        let sql = format!(
                            "SELECT checkpoint_ns FROM checkpoints WHERE thread_id = $1 AND {} = $2 ORDER BY 1 LIMIT 1",
                            c.id
                        );
                        let row = self
                            .raw
                            .first_row("read", &sql, &[thread.into(), checkpoint_id.into()])
                            .await?;
                        match row {
                            Some(r) => r.text(0)?,
                            None => return Ok(None),
                        }
                    }
                };
                // Any Postgres layout Raw opens (Python's at any migration,
                // LangGraphJS's): tables before migration 9 are read with the task
                // path `''` that migration gives existing rows, without migrating.
                let config = CheckpointConfig::for_checkpoint(thread, &ns, checkpoint_id);
                let read = self.pg_tuple(url, client, serde, &config).await;
                read.map_err(|e| {
                    unreadable_row(|| format!("checkpoint {thread}/{ns:?}/{checkpoint_id}"), e)
                })
            }
        }
    }

    /// The checkpoint as a JSON document (the crate's JSON view of checkpoint,
    /// metadata and pending writes), decrypted with `keys`; `None` if there is no
    /// such checkpoint.
    ///
    /// # Errors
    /// [`ErrorKind::UnreadableRow`](crate::ErrorKind::UnreadableRow) (no key for it, a value that does not decode), the
    /// database's errors.
    pub async fn state(
        &self,
        keys: &StoreKeys,
        thread: &str,
        checkpoint_id: &str,
    ) -> Result<Option<Json>> {
        let serde = serializer(keys);
        Ok(self
            .tuple(&serde, thread, None, checkpoint_id)
            .await?
            .map(|t| tuple_json(&t)))
    }

    /// What changed from checkpoint `from` to checkpoint `to` of a thread.
    ///
    /// # Errors
    /// [`ErrorKind::UnreadableRow`](crate::ErrorKind::UnreadableRow) if either is missing or does not decode.
    pub async fn diff(
        &self,
        keys: &StoreKeys,
        thread: &str,
        from: &str,
        to: &str,
    ) -> Result<CheckpointDiff> {
        let serde = serializer(keys);
        let missing = |id: &str| StoreFault::Unreadable {
            what: format!("checkpoint {thread}/{id}"),
            reason: "no such checkpoint".to_owned(),
        };
        let a = self
            .tuple(&serde, thread, None, from)
            .await?
            .ok_or_else(|| missing(from))?;
        let b = self
            .tuple(&serde, thread, None, to)
            .await?
            .ok_or_else(|| missing(to))?;
        Ok(diff_checkpoints(&a.checkpoint, &b.checkpoint))
    }
}

impl AnyStore {
    /// [`tuple`](Self::tuple) of each of `keys` (thread, namespace, id), in order
    /// (`None`: not there), without their pending writes (a copy reads those as rows):
    /// from Postgres in one statement for them all (one round trip per checkpoint was
    /// most of a copy out of Postgres), as a range when the keys are a run of the
    /// store's keys in its order (`TupleParts::run`, as a copy's cursor gives them;
    /// otherwise a key out of that order may read as not there), from SQLite one by
    /// one. With `raw_blobs`, a
    /// Postgres store's channel values held as clear msgpack, `bytes` or `null` blobs
    /// come apart, as stored (`TupleParts::raw_blobs`); otherwise that list is empty.
    ///
    /// # Errors
    /// As [`tuple`](Self::tuple); a row that does not decode fails them all, named by
    /// the range of keys.
    // Only the store copy (which needs both backends) reads many at once.
    #[cfg(all(feature = "sqlite", feature = "postgres"))]
    pub(crate) async fn tuples_without_writes(
        &self,
        serde: &Arc<dyn Serializer>,
        keys: &[(String, String, String)],
        raw_blobs: bool,
    ) -> Result<Vec<Option<(CheckpointTuple, Blobs)>>> {
        let Raw::Postgres { url, client, .. } = &self.raw else {
            let mut out = Vec::with_capacity(keys.len());
            for (t, ns, id) in keys {
                let tuple = self.tuple(serde, t, Some(ns), id).await?;
                out.push(tuple.map(|mut tuple| {
                    tuple.pending_writes.clear();
                    (tuple, Blobs::new())
                }));
            }
            return Ok(out);
        };
        let saver = self.cached_pg_reader(url, serde)?;
        let parts = TupleParts {
            writes: false,
            raw_blobs,
            run: true,
        };
        // Read and decoded on a task of its own: on a runtime of more than one thread
        // the rows are decoded on another core while the caller's task encodes and
        // writes the batch before. Measured 2026-11-29, 100,000 checkpoints Postgres →
        // SQLite (with reads of 128): 11.55–12.63 s against 13.39–13.55 s.
        // As of the snapshot the store's own reads (keys, writes) are in, if one is held;
        // on the store's own connection (inside that snapshot's transaction, if one is
        // held) once the server has refused the saver a connection.
        let snapshot = self.raw.snapshot();
        let shared = snapshot.is_some();
        let spawn_read = |on_own: bool| {
            let (saver, owned, snapshot) = (saver.clone(), keys.to_vec(), snapshot.clone());
            let own = Arc::clone(client);
            tokio::spawn(async move {
                let refs: Vec<(&str, &str, &str)> = owned
                    .iter()
                    .map(|(t, ns, id)| (t.as_str(), ns.as_str(), id.as_str()))
                    .collect();
                let on = match snapshot.as_deref() {
                    _ if on_own => ReadOn::Client(&own),
                    Some(snapshot) => ReadOn::Snapshot(snapshot),
                    None => ReadOn::Pool,
                };
                saver.get_tuples_in_order(&refs, parts, on).await
            })
        };
        let task = |e| StoreFault::task("a read of checkpoints", e);
        let on_own = self.own_connection_reads.load(Ordering::Relaxed);
        let mut read = spawn_read(on_own).await.map_err(task)?;
        if matches!(&read, Err(e) if !on_own && self.pool_refused(e)) {
            read = spawn_read(true).await.map_err(task)?;
        }
        if read.is_err() && shared {
            // The snapshot lives as long as the store's own connection: lost, it is
            // that loss a caller recovers from (the saver's connection said only that
            // the snapshot is gone).
            if let Some(lost) = self.raw.lost_snapshot().await {
                return Err(lost);
            }
        }
        read.map_err(|e| {
            let at = |k: Option<&(String, String, String)>| {
                k.map(|(t, ns, id)| format!("{t}/{ns:?}/{id}"))
                    .unwrap_or_default()
            };
            unreadable_row(
                || format!("checkpoints {} .. {}", at(keys.first()), at(keys.last())),
                e,
            )
        })
    }
}

/// A SQLite checkpoint of thread `?1` and id `?2`, in namespace `?3` (`in_ns`) or the
/// first that holds the id (`?3` then `NULL`). With the namespace the whole primary key
/// is given: one index seek. (`?3 IS NULL OR ns = ?3` let SQLite seek by the thread
/// alone and scan its rows for each look-up: `inspect --check` of a thread of 30,000
/// checkpoints took 16.1 s instead of 0.9 s, 2026-12-05.)
fn checkpoint_sql(c: &Cols, in_ns: bool) -> String {
    let ns_is = if in_ns {
        format!("{} = ?3", c.ns)
    } else {
        "?3 IS NULL".to_owned()
    };
    format!(
        "SELECT {ns}, {parent}, {ty}, checkpoint, metadata FROM checkpoints \
         WHERE thread_id = ?1 AND {ns_is} AND {id} = ?2 ORDER BY {ns} LIMIT 1",
        ns = c.ns,
        parent = c.parent,
        ty = c.ty,
        id = c.id
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::saver::CheckpointSaver;

    /// A read that failed for want of a connection or in the database (a statement
    /// refused) is said as that failure, which stops the command; only a value that
    /// does not decode marks its checkpoint as one that does not (a refused connection
    /// was marked so, a finding that was not).
    #[test]
    fn only_the_rows_own_failures_mark_it_unreadable() {
        for kind in [
            ErrorKind::ConnectionUnavailable,
            ErrorKind::Storage,
            ErrorKind::Tls,
            ErrorKind::InvalidStoreLocation,
            ErrorKind::LockTimeout,
        ] {
            let e = unreadable_row(|| "checkpoint t/x".to_owned(), Error::new(kind, "failed"));
            assert_eq!(e.kind(), kind, "{e}");
        }
        for kind in [
            ErrorKind::AuthenticationFailed,
            ErrorKind::Truncated,
            ErrorKind::MissingKey,
            ErrorKind::DecompressionBudget,
        ] {
            let e = unreadable_row(|| "checkpoint t/x".to_owned(), Error::new(kind, "failed"));
            assert_eq!(e.kind(), ErrorKind::UnreadableRow, "{kind:?}: {e}");
            assert!(e.to_string().contains("checkpoint t/x"), "{e}");
        }
    }

    /// A checkpoint looked up in its namespace is one seek of the primary key's index
    /// on Python's SQLite store, as SQLite's planner says: every key column bound.
    #[test]
    fn a_checkpoint_in_its_namespace_is_one_index_seek() {
        let store = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("vectors/stores/sqlite-py-3.1.2/store.sqlite");
        let conn = rusqlite::Connection::open_with_flags(
            store,
            rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY,
        )
        .expect("open");
        let sql = checkpoint_sql(&Cols::current(true), true);
        let plan: Vec<String> = conn
            .prepare(&format!("EXPLAIN QUERY PLAN {sql}"))
            .expect("prepare")
            .query_map(rusqlite::params!["t-main", "x", ""], |r| r.get(3))
            .expect("plan")
            .collect::<Result<_, _>>()
            .expect("rows");
        assert!(
            plan.iter()
                .any(|p| p.contains("thread_id=? AND checkpoint_ns=? AND checkpoint_id=?")),
            "{plan:?}"
        );
    }
    use crate::store::raw::pg_connect;
    use crate::value::Value;

    /// A new database `db` on the server of `LGCODEC_TEST_PG_URL` (`None` without
    /// one): a connection to the server, and the database's URL.
    async fn fresh_database(db: &str) -> Option<(tokio_postgres::Client, String)> {
        let url = std::env::var("LGCODEC_TEST_PG_URL")
            .ok()
            .filter(|u| !u.is_empty())?;
        let admin = pg_connect(&url, false).await.expect("connect");
        for sql in [
            format!("DROP DATABASE IF EXISTS {db} WITH (FORCE)"),
            format!("CREATE DATABASE {db}"),
        ] {
            admin.batch_execute(&sql).await.expect("a fresh database");
        }
        let cut = url.rfind('/').expect("a database in the URL");
        Some((admin, format!("{}{db}", &url[..=cut])))
    }

    /// Drops the database of [`fresh_database`].
    async fn drop_database(admin: &tokio_postgres::Client, store_url: &str) {
        let db = store_url.rsplit('/').next().unwrap_or_default();
        admin
            .batch_execute(&format!("DROP DATABASE {db} WITH (FORCE)"))
            .await
            .expect("drop");
    }

    /// One store read under two key rings, one after the other: each read decodes with
    /// the serializer it was given (the reader's pool is shared, its serializer is not),
    /// so a value under a key opens with that key and not without it, whichever came
    /// first.
    #[tokio::test]
    async fn each_read_decodes_with_its_own_serializer() {
        use crate::crypto::{AesKey, KeyRing};
        use crate::saver::{ChannelVersion, ChannelVersions};
        let Some((admin, store_url)) = fresh_database("lgcodec_unit_two_key_rings").await else {
            return;
        };
        let keyed: Arc<dyn Serializer> = Arc::new(crate::crypto::EncryptedSerializer::new(
            KeyRing::new(AesKey::new(b"0123456789abcdef").expect("a key")),
            crate::JsonPlusSerializer::new(),
        ));
        let plain: Arc<dyn Serializer> = Arc::new(crate::JsonPlusSerializer::new());
        let saver = PostgresSaver::builder_from_url(&store_url)
            .expect("url")
            .serializer(Arc::clone(&keyed))
            .build()
            .expect("saver");
        saver.setup().await.expect("Python's tables");
        let mut cp = Checkpoint::new(
            "1f0c0a8e-0000-6000-8000-000000000001",
            "2026-12-04T00:00:00+00:00",
        );
        // A list goes to a blob, through the serializer (under the key).
        cp.channel_values.insert(
            "messages".into(),
            Value::Array(vec![Value::from("hello"), Value::from("world")]),
        );
        let version = ChannelVersion::Int(1);
        cp.channel_versions
            .insert("messages".into(), version.clone());
        let mut new_versions = ChannelVersions::new();
        new_versions.insert("messages".into(), version);
        saver
            .put(
                &CheckpointConfig::new("t"),
                &cp,
                &CheckpointMetadata::new("input", 0),
                &new_versions,
            )
            .await
            .expect("put");
        let store = AnyStore::open(&store_url).await.expect("open");
        for (first, second) in [(&keyed, &plain), (&plain, &keyed)] {
            for serde in [first, second] {
                let read = store.tuple(serde, "t", Some(""), &cp.id).await;
                if Arc::ptr_eq(serde, &keyed) {
                    let tuple = read.expect("read with the key").expect("the checkpoint");
                    assert_eq!(
                        tuple.checkpoint.channel_values.get("messages"),
                        cp.channel_values.get("messages")
                    );
                } else {
                    assert!(read.is_err(), "read without the key: {read:?}");
                }
            }
        }
        drop(store);
        drop_database(&admin, &store_url).await;
    }

    /// A read of checkpoints as of the store's exported snapshot, after the store's own
    /// connection (the one holding the snapshot) was lost while the saver's pool was
    /// not: the error is that loss, which the copy reconnects after, not the server's
    /// "invalid snapshot identifier", which would stop it.
    #[tokio::test]
    async fn a_read_whose_snapshot_connection_is_gone_reports_the_lost_connection() {
        let Some((admin, store_url)) = fresh_database("lgcodec_unit_snapshot_lost").await else {
            return;
        };
        PostgresSaver::builder_from_url(&store_url)
            .expect("url")
            .build()
            .expect("saver")
            .setup()
            .await
            .expect("Python's tables");
        let store = AnyStore::open(&store_url).await.expect("open");
        let serde: Arc<dyn Serializer> = Arc::new(crate::JsonPlusSerializer::new());
        let key = [("t".to_owned(), String::new(), "1".to_owned())];
        store.raw.begin_snapshot(true).await.expect("snapshot");
        let read = store.tuples_without_writes(&serde, &key, false).await;
        assert!(matches!(read.as_deref(), Ok([None])), "{read:?}");
        let Raw::Postgres { client, .. } = &store.raw else {
            panic!("a Postgres store")
        };
        let pid: i32 = client
            .query_one("SELECT pg_backend_pid()", &[])
            .await
            .expect("pid")
            .get(0);
        admin
            .execute("SELECT pg_terminate_backend($1)", &[&pid])
            .await
            .expect("terminate");
        // The signal is sent, not yet acted on: the snapshot is gone once the backend is.
        for _ in 0..200 {
            let left: i64 = admin
                .query_one(
                    "SELECT count(*) FROM pg_stat_activity WHERE pid = $1",
                    &[&pid],
                )
                .await
                .expect("activity")
                .get(0);
            if left == 0 {
                break;
            }
            tokio::time::sleep(std::time::Duration::from_millis(50)).await;
        }
        let e = store
            .tuples_without_writes(&serde, &key, false)
            .await
            .expect_err("the snapshot went with its connection");
        assert!(e.is_connection_lost(), "{e}");
        store.raw.end_snapshot().await;
        drop(store);
        drop_database(&admin, &store_url).await;
    }
}
