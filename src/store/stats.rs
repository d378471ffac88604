//! [`AnyStore::stats`]: rows and bytes per thread and per channel of a store in any
//! layout, and the files' or tables' sizes, read without a write (as the rest of
//! `inspect.rs`).

use std::collections::BTreeMap;
use std::sync::Arc;

use serde::Serialize;

use super::inspect::AnyStore;
use super::keys::StoreKeys;
use super::raw::{cell_bytes, pg, serializer, sq, Raw, Result};
use crate::saver::Checkpoint;
use crate::serializer::Serializer;

/// Rows and bytes: [`StoreStats`].
#[derive(Clone, Copy, Debug, Default, Serialize, PartialEq, Eq)]
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
#[derive(Clone, Debug, Default, Serialize, PartialEq, Eq)]
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
    /// Per thread.
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
    /// The first `n` threads in `order` (`n` = 0: every thread).
    pub fn top_threads(&self, n: usize, order: ThreadOrder) -> Vec<(&str, &ThreadSize)> {
        let mut all: Vec<(&str, &ThreadSize)> = self
            .per_thread
            .iter()
            .map(|(k, v)| (k.as_str(), v))
            .collect();
        let key = |s: &ThreadSize| match order {
            ThreadOrder::Id => 0,
            ThreadOrder::Size => s.total_bytes,
            ThreadOrder::Checkpoints => s.checkpoints.rows,
            ThreadOrder::Writes => s.writes.rows,
        };
        // Stable: equal keys stay in id order.
        all.sort_by_key(|a| std::cmp::Reverse(key(a.1)));
        if n > 0 {
            all.truncate(n);
        }
        all
    }
}

impl AnyStore {
    /// Rows and bytes per thread and per channel; SQLite checkpoint rows are decoded
    /// (decrypted with `keys`) to size each channel's value. With
    /// [`StoreKeys::none()`](StoreKeys::none) an encrypted SQLite checkpoint counts as
    /// unreadable for the per-channel sizes. Memory grows with the number of threads
    /// and channels, not with checkpoints.
    ///
    /// # Errors
    /// The database's errors (a row that does not decode is counted in
    /// [`StoreStats::unreadable_checkpoints`], not an error).
    pub async fn stats(&self, keys: &StoreKeys) -> Result<StoreStats> {
        let c = self.raw.cols();
        let mut per_thread: BTreeMap<String, ThreadSize> = BTreeMap::new();
        let mut per_channel: BTreeMap<String, Size> = BTreeMap::new();
        let (cp_len, w_len, blob_len) = match self.raw {
            Raw::Sqlite { .. } => (
                "coalesce(length(CAST(checkpoint AS BLOB)), 0) + coalesce(length(CAST(metadata AS BLOB)), 0)",
                "coalesce(length(CAST(value AS BLOB)), 0)",
                "",
            ),
            Raw::Postgres { .. } => (
                "octet_length(checkpoint::text) + octet_length(metadata::text)",
                "coalesce(octet_length(blob), 0)",
                "coalesce(octet_length(blob), 0)",
            ),
        };
        let _ = &c;
        let mut queries: Vec<(u8, String)> = vec![
            (
                0,
                format!(
                    "SELECT thread_id, count(*), sum({cp_len}) FROM checkpoints GROUP BY thread_id"
                ),
            ),
            (
                1,
                format!(
                    "SELECT thread_id, count(*), sum({w_len}) FROM {} GROUP BY thread_id",
                    self.raw.writes_table()
                ),
            ),
            (
                3,
                format!(
                    "SELECT channel, count(*), sum({w_len}) FROM {} GROUP BY channel",
                    self.raw.writes_table()
                ),
            ),
        ];
        if !blob_len.is_empty() {
            queries.push((
                2,
                format!("SELECT thread_id, count(*), sum({blob_len}) FROM checkpoint_blobs GROUP BY thread_id"),
            ));
            queries.push((
                3,
                format!("SELECT channel, count(*), sum({blob_len}) FROM checkpoint_blobs GROUP BY channel"),
            ));
        }
        for (kind, sql) in queries {
            let rows: Vec<(String, u64, u64)> = match &self.raw {
                Raw::Sqlite { conn, .. } => {
                    let mut stmt = conn.prepare(&sql).map_err(sq("stats"))?;
                    let rows = stmt
                        .query_map([], |r| {
                            Ok((
                                r.get::<_, String>(0)?,
                                u64::try_from(r.get::<_, i64>(1)?).unwrap_or(0),
                                u64::try_from(r.get::<_, Option<i64>>(2)?.unwrap_or(0))
                                    .unwrap_or(0),
                            ))
                        })
                        .map_err(sq("stats"))?
                        .collect::<std::result::Result<Vec<_>, _>>()
                        .map_err(sq("stats"))?;
                    rows
                }
                Raw::Postgres { client, .. } => {
                    let sql = sql
                        .replace("count(*), sum(", "count(*), (sum(")
                        .replace(") FROM", ")::int8) FROM");
                    let rows = client.query(&sql, &[]).await.map_err(pg("stats"))?;
                    let mut out = Vec::with_capacity(rows.len());
                    for r in &rows {
                        out.push((
                            r.try_get::<_, String>(0).map_err(pg("stats"))?,
                            u64::try_from(r.try_get::<_, i64>(1).map_err(pg("stats"))?)
                                .unwrap_or(0),
                            u64::try_from(
                                r.try_get::<_, Option<i64>>(2)
                                    .map_err(pg("stats"))?
                                    .unwrap_or(0),
                            )
                            .unwrap_or(0),
                        ));
                    }
                    out
                }
            };
            for (key, n, bytes) in rows {
                if kind == 3 {
                    per_channel.entry(key).or_default().add(n, bytes);
                    continue;
                }
                let t = per_thread.entry(key).or_default();
                match kind {
                    0 => t.checkpoints.add(n, bytes),
                    1 => t.writes.add(n, bytes),
                    _ => t.blobs.add(n, bytes),
                }
                t.total_bytes = t.total_bytes.saturating_add(bytes);
            }
        }
        let mut per_channel_values: BTreeMap<String, Size> = BTreeMap::new();
        let mut unreadable_checkpoints = 0;
        match &self.raw {
            Raw::Sqlite { conn, .. } => {
                unreadable_checkpoints =
                    sqlite_value_sizes(conn, &c, &serializer(keys), &mut per_channel_values)?;
                for (channel, size) in &per_channel_values {
                    per_channel
                        .entry(channel.clone())
                        .or_default()
                        .add(size.rows, size.bytes);
                }
            }
            Raw::Postgres { client, .. } => {
                let rows = client
                    .query(
                        "SELECT channel, count(*), sum(coalesce(octet_length(blob), 0))::int8 \
                         FROM checkpoint_blobs GROUP BY channel",
                        &[],
                    )
                    .await
                    .map_err(pg("stats"))?;
                for r in &rows {
                    let n: i64 = r.try_get(1).map_err(pg("stats"))?;
                    let bytes: Option<i64> = r.try_get(2).map_err(pg("stats"))?;
                    per_channel_values
                        .entry(r.try_get(0).map_err(pg("stats"))?)
                        .or_default()
                        .add(
                            u64::try_from(n).unwrap_or(0),
                            u64::try_from(bytes.unwrap_or(0)).unwrap_or(0),
                        );
                }
            }
        }
        let mut total = ThreadSize::default();
        for t in per_thread.values() {
            total
                .checkpoints
                .add(t.checkpoints.rows, t.checkpoints.bytes);
            total.blobs.add(t.blobs.rows, t.blobs.bytes);
            total.writes.add(t.writes.rows, t.writes.bytes);
            total.total_bytes = total.total_bytes.saturating_add(t.total_bytes);
        }
        Ok(StoreStats {
            store: self.raw.shown().to_owned(),
            backend: self.raw.backend(),
            layout: self.raw.layout().to_string(),
            threads: per_thread.len() as u64,
            total,
            per_thread,
            per_channel,
            per_channel_values,
            unreadable_checkpoints,
            files: self.file_sizes().await?,
        })
    }

    async fn file_sizes(&self) -> Result<FileSizes> {
        match &self.raw {
            Raw::Sqlite { conn, path, .. } => {
                let len = |p: &std::path::Path| std::fs::metadata(p).map(|m| m.len()).ok();
                let mut wal = path.clone().into_os_string();
                wal.push("-wal");
                let free: i64 = conn
                    .query_row(
                        "SELECT (SELECT freelist_count FROM pragma_freelist_count()) * \
                         (SELECT page_size FROM pragma_page_size())",
                        [],
                        |r| r.get(0),
                    )
                    .map_err(sq("stats"))?;
                Ok(FileSizes {
                    database_bytes: len(path).unwrap_or(0),
                    wal_bytes: Some(len(std::path::Path::new(&wal)).unwrap_or(0)),
                    free_bytes: Some(u64::try_from(free).unwrap_or(0)),
                    tables_bytes: None,
                })
            }
            Raw::Postgres { client, .. } => {
                let row = client
                    .query_one(
                        "SELECT pg_database_size(current_database())::int8, \
                         coalesce(sum(pg_total_relation_size(c.oid)), 0)::int8 \
                         FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace \
                         WHERE n.nspname = current_schema() AND c.relkind = 'r' AND c.relname IN \
                         ('checkpoints', 'checkpoint_blobs', 'checkpoint_writes', 'checkpoint_migrations')",
                        &[],
                    )
                    .await
                    .map_err(pg("stats"))?;
                let db: i64 = row.try_get(0).map_err(pg("stats"))?;
                let tables: i64 = row.try_get(1).map_err(pg("stats"))?;
                Ok(FileSizes {
                    database_bytes: u64::try_from(db).unwrap_or(0),
                    tables_bytes: Some(u64::try_from(tables).unwrap_or(0)),
                    ..FileSizes::default()
                })
            }
        }
    }
}

/// Adds the size of each channel value held in the SQLite checkpoint rows to `out`
/// (rows holding the channel; bytes of `dumps_typed(value)` by Python's serializer in
/// clear), one row at a time; how many rows could not be decoded.
fn sqlite_value_sizes(
    conn: &rusqlite::Connection,
    c: &super::raw::Cols,
    serde: &Arc<dyn Serializer>,
    out: &mut BTreeMap<String, Size>,
) -> Result<u64> {
    let plain = crate::JsonPlusSerializer::new();
    let sql = format!("SELECT {ty}, checkpoint FROM checkpoints", ty = c.ty);
    let mut stmt = conn.prepare(&sql).map_err(sq("stats"))?;
    let mut rows = stmt.query([]).map_err(sq("stats"))?;
    let mut unreadable = 0u64;
    while let Some(row) = rows.next().map_err(sq("stats"))? {
        let tag: Option<String> = row.get(0).map_err(sq("stats"))?;
        let data = cell_bytes(row, 1).map_err(sq("stats"))?;
        let checkpoint = serde
            .loads_typed(
                tag.as_deref().unwrap_or_default(),
                data.as_deref().unwrap_or_default(),
            )
            .ok()
            .and_then(|v| Checkpoint::from_owned_value(v).ok());
        let Some(checkpoint) = checkpoint else {
            unreadable += 1;
            continue;
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
            continue;
        }
        for (channel, bytes) in sizes {
            out.entry(channel.clone()).or_default().add(1, bytes);
        }
    }
    Ok(unreadable)
}
