//! [`copy`]: every thread, or selected ones, from one store to another — SQLite →
//! Postgres, Postgres → SQLite, or the same backend — with ids, parents, pending
//! writes (task ids, task paths, indices) and metadata as Python writes them for the
//! target backend.
//!
//! Each checkpoint is read from the source (any layout `saver::layout` detects
//! except the shallow saver's: Postgres stores before Python's migration 9 and
//! LangGraphJS's are read, with only `SELECT`s, as Python reads them after its
//! `setup()`: a missing task path is `''`) and decoded with the key ring, then
//! written by the **target saver's own `put`** (the SQLite saver serializes the whole checkpoint into one row;
//! the Postgres saver splits channel values into inline JSONB primitives and blobs
//! keyed by channel and version), with its parent as Python's `put` receives it. Its
//! pending writes are written before it, row by row with their stored task id, task
//! path and index (a `put_writes` call would renumber them from their positions),
//! their values serialized by the target's serializer. An empty target first gets
//! Python's tables from the savers' `setup()`.
//!
//! **Encryption:** values are decrypted with every key of the ring and written by a
//! serializer with the primary key (`LANGGRAPH_AES_KEY`), so a copy with a new
//! primary key re-encrypts on the way; without keys the target is written in clear
//! (and an encrypted source cannot be read).
//!
//! **Resumable:** a checkpoint already in the target is not written again (its
//! writes are inserted if missing: inserts only take free keys). Killed at any point,
//! a copy leaves whole checkpoints (each is one statement) whose writes are already
//! there; run it again to finish. **Verified:** every copied or present checkpoint is
//! read back through the target saver's `get_tuple` and compared with the source
//! (checkpoint, metadata, parent, pending writes in order); counts are reported.
//! Memory holds one checkpoint at a time and one page of keys.

use std::sync::Arc;
use std::time::Instant;

use serde::Serialize;
use tokio_postgres::types::ToSql;

use super::error::StoreError;
use super::export::{open_target, Target};
use super::inspect::{pg_copy_target, AnyStore};
use super::keys::StoreKeys;
use super::ops::{Progress, ProgressFn, Stage};
use super::raw::{cell_bytes, pg, ph, serializer, sq, Raw, Result};
use super::Location;
use crate::crypto::EncryptedSerializer;
use crate::saver::sqlite::SqliteSaver;
use crate::saver::{ChannelVersions, CheckpointConfig, CheckpointSaver, CheckpointTuple};
use crate::serializer::Serializer;
use crate::JsonPlusSerializer;

/// Options of [`copy`].
#[derive(Clone, Default)]
pub struct CopyOptions {
    threads: Vec<String>,
    dry_run: bool,
    page_size: Option<usize>,
    progress: Option<ProgressFn>,
}

impl std::fmt::Debug for CopyOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CopyOptions")
            .field("threads", &self.threads)
            .field("dry_run", &self.dry_run)
            .finish_non_exhaustive()
    }
}

impl CopyOptions {
    /// Every thread; writing.
    pub fn new() -> Self {
        Self::default()
    }

    /// Only these threads (none: every thread).
    pub fn threads(mut self, threads: impl IntoIterator<Item = impl Into<String>>) -> Self {
        self.threads = threads.into_iter().map(Into::into).collect();
        self
    }

    /// Count what would be copied; write nothing (the target is not created).
    pub fn dry_run(mut self, on: bool) -> Self {
        self.dry_run = on;
        self
    }

    /// Checkpoint keys read per query (at least 1).
    pub fn page_size(mut self, rows: usize) -> Self {
        self.page_size = Some(rows.max(1));
        self
    }

    /// Called after each checkpoint.
    pub fn on_progress(mut self, f: impl Fn(&Progress) + Send + Sync + 'static) -> Self {
        self.progress = Some(Arc::new(f));
        self
    }
}

/// What [`copy`] did.
#[derive(Clone, Debug, Default, Serialize, PartialEq)]
#[non_exhaustive]
pub struct CopyReport {
    /// `copy`.
    pub operation: &'static str,
    /// The source.
    pub source: String,
    /// Its layout.
    pub source_layout: String,
    /// The target.
    pub target: String,
    /// Whether the target got Python's tables.
    pub created_tables: bool,
    /// A dry run (nothing written).
    pub dry_run: bool,
    /// Checkpoints in the source (selected threads).
    pub checkpoints: u64,
    /// Checkpoints written (in a dry run: that would be).
    pub copied: u64,
    /// Checkpoints already in the target.
    pub already_there: u64,
    /// Pending-write rows inserted.
    pub writes_inserted: u64,
    /// Checkpoints read back equal to their source.
    pub verified: u64,
    /// Checkpoints that read back differently (or not at all): which, and how.
    pub mismatches: Vec<String>,
    /// Seconds.
    pub elapsed_s: f64,
}

/// One stored pending write.
struct WriteRow {
    task_id: String,
    task_path: String,
    idx: i64,
    channel: String,
    tag: String,
    data: Vec<u8>,
}

async fn count(raw: &Raw, thread: Option<&str>) -> Result<u64> {
    let sqlite = matches!(raw, Raw::Sqlite { .. });
    let sql = match thread {
        Some(_) => format!(
            "SELECT count(*) FROM checkpoints WHERE thread_id = {}",
            ph(sqlite, 1)
        ),
        None => "SELECT count(*) FROM checkpoints".to_owned(),
    };
    let n: i64 = match raw {
        Raw::Sqlite { conn, .. } => match thread {
            Some(t) => conn.query_row(&sql, [t], |r| r.get(0)),
            None => conn.query_row(&sql, [], |r| r.get(0)),
        }
        .map_err(sq("count"))?,
        Raw::Postgres { client, .. } => {
            let rows = match thread {
                Some(t) => client.query_one(&sql, &[&t]).await,
                None => client.query_one(&sql, &[]).await,
            }
            .map_err(pg("count"))?;
            rows.try_get(0).map_err(pg("count"))?
        }
    };
    Ok(u64::try_from(n).unwrap_or(0))
}

/// A page of `(thread, ns, id)` keys after `after`, in key order.
async fn key_page(
    raw: &Raw,
    thread: Option<&str>,
    after: Option<&(String, String, String)>,
    limit: usize,
) -> Result<Vec<(String, String, String)>> {
    let c = raw.cols();
    let sqlite = matches!(raw, Raw::Sqlite { .. });
    let mut conds = Vec::new();
    let mut params: Vec<String> = Vec::new();
    if let Some(t) = thread {
        params.push(t.to_owned());
        conds.push(format!("thread_id = {}", ph(sqlite, params.len())));
    }
    if let Some((t, n, i)) = after {
        let base = params.len();
        params.extend([t.clone(), n.clone(), i.clone()]);
        conds.push(format!(
            "(thread_id, {}, {}) > ({}, {}, {})",
            c.ns,
            c.id,
            ph(sqlite, base + 1),
            ph(sqlite, base + 2),
            ph(sqlite, base + 3)
        ));
    }
    let sql = format!(
        "SELECT thread_id, {ns}, {id} FROM checkpoints{w} ORDER BY thread_id, {ns}, {id} LIMIT {limit}",
        ns = c.ns,
        id = c.id,
        w = if conds.is_empty() {
            String::new()
        } else {
            format!(" WHERE {}", conds.join(" AND "))
        }
    );
    match raw {
        Raw::Sqlite { conn, .. } => {
            let mut stmt = conn.prepare_cached(&sql).map_err(sq("copy"))?;
            let rows = stmt
                .query_map(rusqlite::params_from_iter(params), |r| {
                    Ok((r.get(0)?, r.get(1)?, r.get(2)?))
                })
                .map_err(sq("copy"))?
                .collect::<std::result::Result<Vec<_>, _>>()
                .map_err(sq("copy"))?;
            Ok(rows)
        }
        Raw::Postgres { client, .. } => {
            let refs: Vec<&(dyn ToSql + Sync)> =
                params.iter().map(|p| p as &(dyn ToSql + Sync)).collect();
            let rows = client.query(&sql, &refs).await.map_err(pg("copy"))?;
            rows.iter()
                .map(|r| {
                    Ok((
                        r.try_get(0).map_err(pg("copy"))?,
                        r.try_get(1).map_err(pg("copy"))?,
                        r.try_get(2).map_err(pg("copy"))?,
                    ))
                })
                .collect()
        }
    }
}

async fn write_rows(raw: &Raw, thread: &str, ns: &str, id: &str) -> Result<Vec<WriteRow>> {
    let c = raw.cols();
    let sqlite = matches!(raw, Raw::Sqlite { .. });
    let sql = format!(
        "SELECT task_id, {path}, idx, channel, {ty}, {val} FROM {table} \
         WHERE thread_id = {p1} AND {ns} = {p2} AND {wid} = {p3} ORDER BY {path}, task_id, idx",
        path = c.w_path,
        ty = c.w_ty,
        val = if sqlite { "value" } else { "blob" },
        table = raw.writes_table(),
        ns = c.ns,
        wid = c.w_id,
        p1 = ph(sqlite, 1),
        p2 = ph(sqlite, 2),
        p3 = ph(sqlite, 3),
    );
    match raw {
        Raw::Sqlite { conn, .. } => {
            let mut stmt = conn.prepare_cached(&sql).map_err(sq("copy"))?;
            let rows = stmt
                .query_map([thread, ns, id], |r| {
                    Ok(WriteRow {
                        task_id: r.get(0)?,
                        task_path: r.get(1)?,
                        idx: r.get(2)?,
                        channel: r.get(3)?,
                        tag: r.get::<_, Option<String>>(4)?.unwrap_or_default(),
                        data: cell_bytes(r, 5)?.unwrap_or_default(),
                    })
                })
                .map_err(sq("copy"))?
                .collect::<std::result::Result<Vec<_>, _>>()
                .map_err(sq("copy"))?;
            Ok(rows)
        }
        Raw::Postgres { client, .. } => {
            let rows = client
                .query(&sql, &[&thread, &ns, &id])
                .await
                .map_err(pg("copy"))?;
            rows.iter()
                .map(|r| {
                    Ok(WriteRow {
                        task_id: r.try_get(0).map_err(pg("copy"))?,
                        task_path: r.try_get(1).map_err(pg("copy"))?,
                        idx: i64::from(r.try_get::<_, i32>(2).map_err(pg("copy"))?),
                        channel: r.try_get(3).map_err(pg("copy"))?,
                        tag: r
                            .try_get::<_, Option<String>>(4)
                            .map_err(pg("copy"))?
                            .unwrap_or_default(),
                        data: r
                            .try_get::<_, Option<Vec<u8>>>(5)
                            .map_err(pg("copy"))?
                            .unwrap_or_default(),
                    })
                })
                .collect()
        }
    }
}

async fn exists(target: &Target, thread: &str, ns: &str, id: &str) -> Result<bool> {
    match target {
        Target::Sqlite(conn) => conn
            .query_row(
                "SELECT EXISTS (SELECT 1 FROM checkpoints WHERE thread_id = ?1 AND checkpoint_ns = ?2 AND checkpoint_id = ?3)",
                [thread, ns, id],
                |r| r.get(0),
            )
            .map_err(sq("copy")),
        Target::Postgres(client) => client
            .query_one(
                "SELECT EXISTS (SELECT 1 FROM checkpoints WHERE thread_id = $1 AND checkpoint_ns = $2 AND checkpoint_id = $3)",
                &[&thread, &ns, &id],
            )
            .await
            .map_err(pg("copy"))?
            .try_get(0)
            .map_err(pg("copy")),
    }
}

/// Inserts write rows whose key is free; how many were inserted.
async fn insert_writes(
    target: &mut Target,
    thread: &str,
    ns: &str,
    id: &str,
    rows: &[(WriteRow, Vec<u8>, String)],
) -> Result<u64> {
    let mut n = 0u64;
    match target {
        Target::Sqlite(conn) => {
            let tx = conn
                .transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)
                .map_err(sq("copy"))?;
            {
                let mut stmt = tx
                    .prepare_cached(
                        "INSERT OR IGNORE INTO writes (thread_id, checkpoint_ns, checkpoint_id, task_id, task_path, idx, channel, type, value) \
                         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)",
                    )
                    .map_err(sq("copy"))?;
                for (w, data, tag) in rows {
                    n += stmt
                        .execute(rusqlite::params![
                            thread,
                            ns,
                            id,
                            w.task_id,
                            w.task_path,
                            w.idx,
                            w.channel,
                            tag,
                            data
                        ])
                        .map_err(sq("copy"))? as u64;
                }
            }
            tx.commit().map_err(sq("copy"))?;
        }
        Target::Postgres(client) => {
            let tx = client.transaction().await.map_err(pg("copy"))?;
            let stmt = tx
                .prepare(
                    "INSERT INTO checkpoint_writes (thread_id, checkpoint_ns, checkpoint_id, task_id, task_path, idx, channel, type, blob) \
                     VALUES ($1, $2, $3, $4, $5, $6::int4, $7, $8, $9) ON CONFLICT DO NOTHING",
                )
                .await
                .map_err(pg("copy"))?;
            for (w, data, tag) in rows {
                let idx = i32::try_from(w.idx).map_err(|_| StoreError::Unreadable {
                    what: format!("write {thread}/{id}/{}", w.task_id),
                    reason: format!("idx {} does not fit Postgres's INTEGER", w.idx),
                })?;
                n += tx
                    .execute(
                        &stmt,
                        &[
                            &thread,
                            &ns,
                            &id,
                            &w.task_id,
                            &w.task_path,
                            &idx,
                            &w.channel,
                            tag,
                            data,
                        ],
                    )
                    .await
                    .map_err(pg("copy"))?;
            }
            tx.commit().await.map_err(pg("copy"))?;
        }
    }
    Ok(n)
}

/// Why two tuples differ, or `None`.
///
/// One difference is the backends' own: Postgres keeps channel values as blobs keyed by
/// (channel, version), so a checkpoint whose DeltaChannel version did not change
/// reads back the `_DeltaSnapshot` blob an earlier checkpoint stored at that version
/// (Python's Postgres saver does the same), where the SQLite row of that checkpoint
/// has no value for the channel. Such a snapshot, at the same version on both sides,
/// is not a difference.
fn difference(a: &CheckpointTuple, b: &CheckpointTuple) -> Option<String> {
    let same_version_snapshot =
        |from: &crate::saver::Checkpoint, other: &crate::saver::Checkpoint, ch: &String| {
            matches!(
                from.channel_values.get(ch),
                Some(crate::Value::DeltaSnapshot(_))
            ) && !other.channel_values.contains_key(ch)
                && from.channel_versions.get(ch).is_some()
                && from.channel_versions.get(ch) == other.channel_versions.get(ch)
        };
    let strip = |from: &crate::saver::Checkpoint, other: &crate::saver::Checkpoint| {
        let mut c = from.clone();
        c.channel_values
            .retain(|ch, _| !same_version_snapshot(from, other, ch));
        c
    };
    if strip(&a.checkpoint, &b.checkpoint) != strip(&b.checkpoint, &a.checkpoint) {
        return Some("checkpoint differs".to_owned());
    }
    if a.metadata != b.metadata {
        return Some("metadata differs".to_owned());
    }
    let parent = |t: &CheckpointTuple| {
        t.parent_config
            .as_ref()
            .and_then(|p| p.checkpoint_id.clone())
    };
    if parent(a) != parent(b) {
        return Some(format!("parent {:?} != {:?}", parent(a), parent(b)));
    }
    if a.pending_writes != b.pending_writes {
        return Some(format!(
            "pending writes differ ({} in the source, {} in the target)",
            a.pending_writes.len(),
            b.pending_writes.len()
        ));
    }
    None
}

/// Copies the checkpoints of `source` (every thread, or [`CopyOptions::threads`]) into
/// `target`: written by the target saver, resumable, verified (see
/// `docs/store-maintenance.md`).
///
/// # Errors
/// [`StoreError::NotAStore`] for a target in an old layout; [`StoreError::Unreadable`]
/// for a source row that does not decode (no key for it); the databases' errors. A
/// checkpoint that reads back differently is not an error: it is listed in
/// [`CopyReport::mismatches`].
pub async fn copy(
    source: &str,
    target: &str,
    keys: &StoreKeys,
    options: &CopyOptions,
) -> Result<CopyReport> {
    let started = Instant::now();
    let src = AnyStore::open(source).await?;
    let read_serde = serializer(keys);
    let write_serde: Arc<dyn Serializer> = match keys.primary_ring() {
        Some(primary) => Arc::new(EncryptedSerializer::new(
            primary.clone(),
            JsonPlusSerializer::new(),
        )),
        None => Arc::new(JsonPlusSerializer::new()),
    };
    let mut report = CopyReport {
        operation: "copy",
        source: src.raw.shown().to_owned(),
        source_layout: src.raw.layout().to_string(),
        target: Location::parse(target)?.display(),
        dry_run: options.dry_run,
        ..CopyReport::default()
    };
    let threads: Vec<Option<&str>> = if options.threads.is_empty() {
        vec![None]
    } else {
        options.threads.iter().map(|t| Some(t.as_str())).collect()
    };
    for t in &threads {
        report.checkpoints += count(&src.raw, *t).await?;
    }
    // A dry run looks at the target only if it is already a store.
    let dry_target = if options.dry_run {
        AnyStore::open(target).await.ok()
    } else {
        None
    };
    let mut tgt = None;
    let mut saver: Option<Arc<dyn CheckpointSaver>> = None;
    if !options.dry_run {
        let (t, created, _) = open_target(target).await?;
        report.created_tables = created;
        saver = Some(match Location::parse(target)? {
            Location::Sqlite(path) => Arc::new(
                SqliteSaver::builder(&path)
                    .serializer(Arc::clone(&write_serde))
                    .open()
                    .map_err(super::raw::saver_err(&report.target))?,
            ),
            Location::Postgres(url) => Arc::new(pg_copy_target(&url, &write_serde)?),
        });
        tgt = Some(t);
    }
    let page_size = options.page_size.unwrap_or(500);
    let mut done = 0u64;
    for thread in &threads {
        let mut after: Option<(String, String, String)> = None;
        loop {
            let keys_page = key_page(&src.raw, *thread, after.as_ref(), page_size).await?;
            let Some(last) = keys_page.last().cloned() else {
                break;
            };
            for (t, ns, id) in &keys_page {
                done += 1;
                let (Some(target_conn), Some(saver)) = (tgt.as_mut(), saver.as_ref()) else {
                    // Dry run.
                    let there = match &dry_target {
                        Some(d) => d.raw.checkpoint_exists(t, ns, id).await.unwrap_or(false),
                        None => false,
                    };
                    if there {
                        report.already_there += 1;
                    } else {
                        report.copied += 1;
                    }
                    continue;
                };
                let tuple = src
                    .tuple(&read_serde, t, Some(ns), id)
                    .await?
                    .ok_or_else(|| StoreError::Unreadable {
                        what: format!("checkpoint {t}/{ns:?}/{id}"),
                        reason: "vanished from the source during the copy".to_owned(),
                    })?;
                // Writes first: a checkpoint present in the target has its writes.
                let mut rows = Vec::new();
                for w in write_rows(&src.raw, t, ns, id).await? {
                    let at = || format!("write {t}/{ns:?}/{id}/{}/{}", w.task_id, w.idx);
                    let value = read_serde.loads_typed(&w.tag, &w.data).map_err(|e| {
                        StoreError::Unreadable {
                            what: at(),
                            reason: e.to_string(),
                        }
                    })?;
                    let typed =
                        write_serde
                            .dumps_typed(&value)
                            .map_err(|e| StoreError::Unreadable {
                                what: at(),
                                reason: e.to_string(),
                            })?;
                    rows.push((w, typed.data.to_vec(), typed.type_tag.to_string()));
                }
                report.writes_inserted += insert_writes(target_conn, t, ns, id, &rows).await?;
                if exists(target_conn, t, ns, id).await? {
                    report.already_there += 1;
                } else {
                    let mut config = CheckpointConfig::new(t.clone()).with_ns(ns.clone());
                    if let Some(parent) = tuple
                        .parent_config
                        .as_ref()
                        .and_then(|p| p.checkpoint_id.clone())
                    {
                        config = config.with_checkpoint_id(parent);
                    }
                    let versions: ChannelVersions = tuple
                        .checkpoint
                        .channel_versions
                        .iter()
                        .filter(|(k, _)| tuple.checkpoint.channel_values.contains_key(*k))
                        .map(|(k, v)| (k.clone(), v.clone()))
                        .collect();
                    saver
                        .put(&config, &tuple.checkpoint, &tuple.metadata, &versions)
                        .await
                        .map_err(|e| StoreError::Unreadable {
                            what: format!("put of checkpoint {t}/{ns:?}/{id} into the target"),
                            reason: e.to_string(),
                        })?;
                    report.copied += 1;
                }
                let back = saver
                    .get_tuple(&CheckpointConfig::for_checkpoint(t, ns, id))
                    .await;
                match back {
                    Ok(Some(b)) => match difference(&tuple, &b) {
                        None => report.verified += 1,
                        Some(why) => report.mismatches.push(format!("{t}/{ns:?}/{id}: {why}")),
                    },
                    Ok(None) => report
                        .mismatches
                        .push(format!("{t}/{ns:?}/{id}: not in the target")),
                    Err(e) => report
                        .mismatches
                        .push(format!("{t}/{ns:?}/{id}: does not read back: {e}")),
                }
                if let Some(f) = &options.progress {
                    f(&Progress {
                        operation: "copy",
                        column: "checkpoints",
                        rows_done: done,
                        total_estimate: report.checkpoints.max(done),
                        rewritten: report.copied,
                        stage: Stage::Done,
                        page: None,
                    });
                }
            }
            if keys_page.len() < page_size {
                break;
            }
            after = Some(last);
        }
    }
    report.elapsed_s = started.elapsed().as_secs_f64();
    Ok(report)
}

impl Raw {
    /// Whether the checkpoint is in this store.
    pub(crate) async fn checkpoint_exists(&self, thread: &str, ns: &str, id: &str) -> Result<bool> {
        let c = self.cols();
        let sqlite = matches!(self, Raw::Sqlite { .. });
        let sql = format!(
            "SELECT count(*) FROM checkpoints WHERE thread_id = {} AND {} = {} AND {} = {}",
            ph(sqlite, 1),
            c.ns,
            ph(sqlite, 2),
            c.id,
            ph(sqlite, 3)
        );
        let n: i64 = match self {
            Raw::Sqlite { conn, .. } => conn
                .query_row(&sql, [thread, ns, id], |r| r.get(0))
                .map_err(sq("copy"))?,
            Raw::Postgres { client, .. } => client
                .query_one(&sql, &[&thread, &ns, &id])
                .await
                .map_err(pg("copy"))?
                .try_get(0)
                .map_err(pg("copy"))?,
        };
        Ok(n > 0)
    }
}
