//! The SQLite store's checkpoints, as prune, retain, import and copy reach them
//! ([`Checkpoints`]), over the store's one connection.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use rusqlite::Connection;

use super::super::backend::{
    odd_ids, row_at_sql, Cell, Checkpoints, Col, Counted, Spec, Versions, WriteSet,
};
use super::super::plan::{labeled, metadata_of, Cp, Loaded, MetaReads};
use super::super::report::VacuumReport;
use super::{cell_bytes, sq, thread_cell, Result, SqliteStore};
use crate::saver::retention::{Removal, Removed};
use crate::saver::{Checkpoint, CheckpointMetadata};
use crate::serializer::Serializer;

/// Pages per `PRAGMA incremental_vacuum` step: one short write transaction (a few
/// milliseconds), so a live writer never waits long.
const VACUUM_STEP_PAGES: i64 = 512;

#[async_trait::async_trait]
impl Checkpoints for SqliteStore {
    fn pages_in_parallel(&self) -> bool {
        false
    }

    fn whole_threads_in_windows(&self) -> bool {
        true
    }

    async fn thread_count(&mut self) -> Result<u64> {
        let n: i64 = self
            .conn()
            .query_row(
                "SELECT count(DISTINCT thread_id) FROM checkpoints",
                [],
                |r| r.get(0),
            )
            .map_err(sq("prune"))?;
        Ok(u64::try_from(n).unwrap_or(0))
    }

    async fn counted_threads(&mut self, after: &str, limit: i64) -> Result<Vec<Counted>> {
        let sql = format!(
            "{} WHERE thread_id > ?1 GROUP BY thread_id ORDER BY thread_id LIMIT ?2",
            counts_sql()
        );
        let conn = self.conn();
        let mut stmt = conn.prepare_cached(&sql).map_err(sq("prune"))?;
        let rows = stmt
            .query_map(rusqlite::params![after, limit], counted)
            .map_err(sq("prune"))?
            .collect::<std::result::Result<Vec<_>, _>>()
            .map_err(sq("prune"))?;
        Ok(rows)
    }

    async fn counted_of(&mut self, threads: &[String]) -> Result<Vec<Counted>> {
        let sql = format!("{} WHERE thread_id = ?1 GROUP BY thread_id", counts_sql());
        let conn = self.conn();
        let mut stmt = conn.prepare_cached(&sql).map_err(sq("prune"))?;
        let mut out = Vec::with_capacity(threads.len());
        for thread in threads {
            let mut rows = stmt.query([thread]).map_err(sq("prune"))?;
            if let Some(row) = rows.next().map_err(sq("prune"))? {
                out.push(counted(row).map_err(sq("prune"))?);
            }
        }
        Ok(out)
    }

    async fn holds_thread(&mut self, thread: &str) -> Result<bool> {
        self.conn()
            .prepare_cached("SELECT EXISTS (SELECT 1 FROM checkpoints WHERE thread_id = ?1)")
            .and_then(|mut st| st.query_row([thread], |r| r.get(0)))
            .map_err(sq("prune"))
    }

    async fn latest_metadata(&mut self, thread: &str) -> Result<Option<CheckpointMetadata>> {
        let conn = self.conn();
        let mut stmt = conn
            .prepare_cached(
                "SELECT metadata FROM checkpoints WHERE thread_id = ?1 \
                 ORDER BY checkpoint_ns = '' DESC, checkpoint_id DESC LIMIT 1",
            )
            .map_err(sq("prune"))?;
        let mut rows = stmt.query([thread]).map_err(sq("prune"))?;
        let Some(r) = rows.next().map_err(sq("prune"))? else {
            return Ok(None);
        };
        Ok(metadata_of(
            cell_bytes(r, 0).map_err(sq("prune"))?.as_deref(),
        ))
    }

    async fn waiting(&mut self, thread: &str) -> Result<bool> {
        self.conn()
            .query_row(
                "SELECT EXISTS (SELECT 1 FROM (SELECT checkpoint_ns AS ns, max(checkpoint_id) AS id \
                 FROM checkpoints WHERE thread_id = ?1 GROUP BY checkpoint_ns) AS l \
                 WHERE EXISTS (SELECT 1 FROM writes w WHERE w.thread_id = ?1 \
                 AND w.checkpoint_ns = l.ns AND w.checkpoint_id = l.id \
                 AND w.channel = '__interrupt__'))",
                [thread],
                |r| r.get(0),
            )
            .map_err(sq("retain"))
    }

    async fn long_thread(&mut self, thread: &str) -> Result<Option<Vec<(String, bool)>>> {
        let conn = self.conn();
        let backwards: bool = conn
            .query_row(
                "SELECT EXISTS (SELECT 1 FROM checkpoints WHERE thread_id = ?1 \
                 AND parent_checkpoint_id <> '' AND parent_checkpoint_id >= checkpoint_id)",
                [thread],
                |r| r.get(0),
            )
            .map_err(sq("prune"))?;
        if backwards {
            return Ok(None);
        }
        let namespaces: Vec<String> = conn
            .prepare_cached("SELECT DISTINCT checkpoint_ns FROM checkpoints WHERE thread_id = ?1")
            .map_err(sq("prune"))?
            .query_map([thread], |r| r.get(0))
            .map_err(sq("prune"))?
            .collect::<std::result::Result<_, _>>()
            .map_err(sq("prune"))?;
        // As `load_threads` decides it: a namespace's rows are read when some
        // checkpoint has DeltaChannels or metadata that cannot be read (the metadata
        // read row by row, to the first such).
        let mut stmt = conn
            .prepare_cached(
                "SELECT metadata FROM checkpoints WHERE thread_id = ?1 AND checkpoint_ns = ?2",
            )
            .map_err(sq("prune"))?;
        let mut out = Vec::with_capacity(namespaces.len());
        for ns in namespaces {
            let mut rows = stmt.query([thread, &ns]).map_err(sq("prune"))?;
            let mut walked = false;
            while let Some(row) = rows.next().map_err(sq("prune"))? {
                let meta = cell_bytes(row, 0).map_err(sq("prune"))?;
                if walks(metadata_of(meta.as_deref()).as_ref()) {
                    walked = true;
                    break;
                }
            }
            out.push((ns, walked));
        }
        Ok(Some(out))
    }

    async fn window(
        &mut self,
        serde: &Arc<dyn Serializer>,
        (thread, ns): (&str, &str),
        walked: bool,
        below: Option<&str>,
        limit: i64,
        labels: &[String],
    ) -> Result<(Vec<Cp>, Vec<Versions>)> {
        let rows = if walked {
            "type, checkpoint"
        } else {
            "NULL, NULL"
        };
        let bound = if below.is_some() {
            "AND checkpoint_id < ?3"
        } else {
            "AND ?3 IS NULL"
        };
        let sql = format!(
            "SELECT checkpoint_id, parent_checkpoint_id, metadata, {rows} FROM checkpoints \
             WHERE thread_id = ?1 AND checkpoint_ns = ?2 {bound} \
             ORDER BY checkpoint_id DESC LIMIT ?4"
        );
        let conn = self.conn();
        let mut stmt = conn.prepare_cached(&sql).map_err(sq("prune"))?;
        let mut rows = stmt
            .query(rusqlite::params![thread, ns, below, limit])
            .map_err(sq("prune"))?;
        let mut out = Vec::new();
        while let Some(r) = rows.next().map_err(sq("prune"))? {
            let id: String = r.get(0).map_err(sq("prune"))?;
            let parent: Option<String> = r.get(1).map_err(sq("prune"))?;
            let metadata = metadata_of(cell_bytes(r, 2).map_err(sq("prune"))?.as_deref());
            let stored = if walked {
                let ty: Option<String> = r.get(3).map_err(sq("prune"))?;
                let data = cell_bytes(r, 4).map_err(sq("prune"))?;
                stored_of(serde, ty.as_deref(), data.as_deref()).map(|s| s.into_iter().collect())
            } else {
                Some(Vec::new())
            };
            let mut cp = Cp::new(ns.to_owned(), id, parent, stored, metadata.as_ref());
            cp.labeled = labeled(metadata.as_ref(), labels);
            out.push(cp);
        }
        // No blobs apart: no versions.
        Ok((out, Vec::new()))
    }

    async fn load_threads(
        &mut self,
        serde: &Arc<dyn Serializer>,
        threads: &[String],
        reads: &MetaReads,
    ) -> Result<BTreeMap<String, Loaded>> {
        let conn = &*self.conn();
        let mut out: BTreeMap<String, Loaded> = BTreeMap::new();
        // The checkpoint rows themselves (the bulk of a store's bytes) are read and
        // decoded only in namespaces with a DeltaChannel (or metadata that cannot be
        // read): elsewhere no walk asks which channels a checkpoint stores, as on
        // Postgres. Measured on 100,000 checkpoints without one (10 per thread, a
        // sweep deleting 61% of them whole, 2026-11-28): 4.14 s before, 3.90 s after,
        // most of it SQLite's own deletes (the same threads deleted by raw
        // `DELETE … WHERE thread_id IN (…)` from Python: 3.15 s).
        let mut stmt = conn
            .prepare_cached(
                "SELECT checkpoint_ns, checkpoint_id, parent_checkpoint_id, metadata \
                 FROM checkpoints WHERE thread_id = ?1 ORDER BY checkpoint_ns, checkpoint_id",
            )
            .map_err(sq("prune"))?;
        for thread in threads {
            let rows = stmt
                .query_map([thread], |r| {
                    Ok((
                        r.get::<_, String>(0)?,
                        r.get::<_, String>(1)?,
                        r.get::<_, Option<String>>(2)?,
                        cell_bytes(r, 3)?,
                    ))
                })
                .map_err(sq("prune"))?;
            let mut list = Loaded::default();
            let mut walked: HashSet<String> = HashSet::new();
            for row in rows {
                let (ns, id, parent, meta) = row.map_err(sq("prune"))?;
                let metadata = metadata_of(meta.as_deref());
                if walks(metadata.as_ref()) {
                    walked.insert(ns.clone());
                }
                // Python's SQLite saver keeps a `v < 4` checkpoint's pending sends in
                // the checkpoint itself: no parent is read for them.
                let cp = Cp::new(ns, id, parent, Some(Vec::new()), metadata.as_ref());
                list.push(reads, cp, metadata);
            }
            for ns in &walked {
                let stored = stored_channels(conn, serde, thread, ns)?;
                for c in list.cps.iter_mut().filter(|c| *c.ns == **ns) {
                    c.stored = stored
                        .get(&*c.id)
                        .cloned()
                        .flatten()
                        .map(|s| s.into_iter().collect::<Vec<_>>().into_boxed_slice());
                }
            }
            out.insert(thread.clone(), list);
        }
        Ok(out)
    }

    async fn interrupted(
        &mut self,
        threads: &[String],
    ) -> Result<HashSet<(String, String, String)>> {
        let mut found = HashSet::new();
        let conn = self.conn();
        let mut stmt = conn
            .prepare_cached(
                "SELECT DISTINCT checkpoint_ns, checkpoint_id FROM writes \
                 WHERE thread_id = ?1 AND channel = '__interrupt__'",
            )
            .map_err(sq("retain"))?;
        for thread in threads {
            let rows = stmt
                .query_map([thread], |r| {
                    Ok((r.get::<_, String>(0)?, r.get::<_, String>(1)?))
                })
                .map_err(sq("retain"))?;
            for row in rows {
                let (ns, id) = row.map_err(sq("retain"))?;
                found.insert((thread.clone(), ns, id));
            }
        }
        Ok(found)
    }

    async fn remove(&mut self, removal: &Removal, dry_run: bool) -> Result<Removed> {
        // A dry run reads in a deferred transaction: it takes no write lock.
        let behavior = if dry_run {
            rusqlite::TransactionBehavior::Deferred
        } else {
            rusqlite::TransactionBehavior::Immediate
        };
        let mut conn = self.conn();
        let tx = conn
            .transaction_with_behavior(behavior)
            .map_err(sq("prune"))?;
        let removed =
            crate::saver::sqlite::retention::remove(&tx, removal, dry_run).map_err(sq("prune"))?;
        tx.commit().map_err(sq("prune"))?;
        Ok(removed)
    }

    async fn expiry_page(&mut self, after: &str) -> Result<Vec<(String, String, String)>> {
        let conn = self.conn();
        let mut stmt = conn
            .prepare_cached(
                "SELECT thread_id, min(checkpoint_id), max(checkpoint_id) FROM checkpoints \
                 WHERE thread_id > ?1 GROUP BY thread_id ORDER BY thread_id LIMIT 1000",
            )
            .map_err(sq("expiry check"))?;
        let rows = stmt
            .query_map([after], |r| Ok((thread_cell(r, 0)?, r.get(1)?, r.get(2)?)))
            .map_err(sq("expiry check"))?
            .collect::<std::result::Result<Vec<_>, _>>()
            .map_err(sq("expiry check"))?;
        Ok(rows)
    }

    async fn try_lock(&mut self) -> Result<bool> {
        let mut name = self.path.clone().into_os_string();
        name.push(".retain-lock");
        let conn = Connection::open(&name).map_err(sq("retain lock"))?;
        conn.busy_timeout(Duration::ZERO)
            .map_err(sq("retain lock"))?;
        match conn.execute_batch("BEGIN IMMEDIATE") {
            Ok(()) => {
                *self.lock.lock().unwrap_or_else(PoisonError::into_inner) = Some(conn);
                Ok(true)
            }
            Err(rusqlite::Error::SqliteFailure(e, _))
                if e.code == rusqlite::ErrorCode::DatabaseBusy
                    || e.code == rusqlite::ErrorCode::DatabaseLocked =>
            {
                Ok(false)
            }
            Err(e) => Err(sq("retain lock")(e)),
        }
    }

    async fn unlock(&mut self) -> Result<()> {
        let held = self
            .lock
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take();
        if let Some(conn) = held {
            conn.execute_batch("ROLLBACK")
                .map_err(sq("retain unlock"))?;
        }
        Ok(())
    }

    async fn compact(&mut self) -> Result<bool> {
        self.conn()
            .execute_batch("VACUUM; PRAGMA wal_checkpoint(TRUNCATE);")
            .map_err(sq("vacuum"))?;
        Ok(true)
    }

    async fn compact_in_steps(
        &mut self,
        pause: Option<Duration>,
        stop: Option<&AtomicBool>,
    ) -> Result<Option<VacuumReport>> {
        incremental_vacuum(&self.conn, pause, stop).await.map(Some)
    }

    async fn insert_rows(
        &mut self,
        spec: &Spec,
        rows: &[Vec<Cell>],
        _copy_first: bool,
    ) -> Result<(Vec<bool>, bool)> {
        let mut conn = self.conn();
        let names: Vec<&str> = spec.cols.iter().map(|c| c.1).collect();
        let params: Vec<String> = (1..=names.len()).map(|i| format!("?{i}")).collect();
        let sql = format!(
            "INSERT OR IGNORE INTO {} ({}) VALUES ({})",
            spec.table,
            names.join(", "),
            params.join(", ")
        );
        let tx = conn
            .transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)
            .map_err(sq("import"))?;
        let mut out = Vec::with_capacity(rows.len());
        {
            let mut stmt = tx.prepare_cached(&sql).map_err(sq("import"))?;
            for row in rows {
                // Bound by reference: SQLite copies each value once, into its page.
                use rusqlite::types::{ToSqlOutput, ValueRef};
                let values: Vec<ToSqlOutput<'_>> = row
                    .iter()
                    .map(|c| {
                        ToSqlOutput::Borrowed(match c {
                            Cell::Text(Some(s)) => ValueRef::Text(s.as_bytes()),
                            Cell::Int(i) => ValueRef::Integer(*i),
                            Cell::Bytes(Some(b)) => ValueRef::Blob(b),
                            Cell::Text(None) | Cell::Bytes(None) => ValueRef::Null,
                        })
                    })
                    .collect();
                let n = stmt
                    .execute(rusqlite::params_from_iter(values))
                    .map_err(sq("import"))?;
                out.push(n == 1);
            }
        }
        tx.commit().map_err(sq("import"))?;
        Ok((out, false))
    }

    async fn row_at(&mut self, spec: &Spec, key: &[Cell]) -> Result<Option<Vec<Cell>>> {
        let sql = row_at_sql(spec, true);
        let conn = self.conn();
        let values: Vec<rusqlite::types::Value> = key
            .iter()
            .map(|c| match c {
                Cell::Text(s) => rusqlite::types::Value::Text(s.clone().unwrap_or_default()),
                Cell::Int(i) => rusqlite::types::Value::Integer(*i),
                Cell::Bytes(_) => rusqlite::types::Value::Null,
            })
            .collect();
        let mut stmt = conn.prepare_cached(&sql).map_err(sq("import"))?;
        let mut rows = stmt
            .query_map(rusqlite::params_from_iter(values), |r| {
                spec.cols
                    .iter()
                    .enumerate()
                    .map(|(i, (_, _, kind))| {
                        Ok(match kind {
                            Col::Int => Cell::Int(r.get(i)?),
                            Col::Text | Col::OptText => Cell::Text(r.get(i)?),
                            Col::Bytes | Col::Jsonb => Cell::Bytes(cell_bytes(r, i)?),
                        })
                    })
                    .collect::<rusqlite::Result<Vec<_>>>()
            })
            .map_err(sq("import"))?;
        rows.next().transpose().map_err(sq("import"))
    }

    async fn holds_checkpoints(&mut self, keys: &[[&str; 3]]) -> Result<Vec<bool>> {
        // One read transaction for the batch: a statement outside one takes and drops
        // the file's read lock (`fcntl`) each time, 6% of a copy's samples out of
        // Postgres (2026-12-03).
        let mut conn = self.conn();
        let snapshot = conn.transaction().map_err(sq("copy"))?;
        let held = {
            let mut stmt = snapshot
                .prepare_cached(
                    "SELECT EXISTS (SELECT 1 FROM checkpoints WHERE thread_id = ?1 AND checkpoint_ns = ?2 AND checkpoint_id = ?3)",
                )
                .map_err(sq("copy"))?;
            keys.iter()
                .map(|k| stmt.query_row(k, |r| r.get(0)).map_err(sq("copy")))
                .collect::<Result<Vec<bool>>>()?
        };
        snapshot.commit().map_err(sq("copy"))?;
        Ok(held)
    }

    async fn insert_writes(&mut self, batch: &[WriteSet<'_>], _fresh: bool) -> Result<(u64, u64)> {
        let mut n = 0u64;
        let mut carried = 0u64;
        let mut conn = self.conn();
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
            for p in batch {
                let [thread, ns, id] = p.key;
                for w in p.writes {
                    n += stmt
                        .execute(rusqlite::params![
                            thread,
                            ns,
                            id,
                            w.task_id,
                            w.task_path,
                            w.idx,
                            w.channel,
                            w.type_tag,
                            w.value
                        ])
                        .map_err(sq("copy"))? as u64;
                }
            }
            let mut put = tx
                .prepare_cached(
                    "INSERT OR IGNORE INTO checkpoints (thread_id, checkpoint_ns, checkpoint_id, \
                     parent_checkpoint_id, type, checkpoint, metadata) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
                )
                .map_err(sq("copy"))?;
            for p in batch {
                let Some(row) = p.row else {
                    continue;
                };
                let [thread, ns, id] = p.key;
                carried += put
                    .execute(rusqlite::params![
                        thread,
                        ns,
                        id,
                        row.parent,
                        row.type_tag,
                        row.checkpoint,
                        row.metadata
                    ])
                    .map_err(sq("copy"))? as u64;
            }
        }
        tx.commit().map_err(sq("copy"))?;
        Ok((n, carried))
    }

    async fn defer_wal_checkpoints(&mut self) -> Result<()> {
        self.conn()
            .execute_batch("PRAGMA wal_autocheckpoint = 0")
            .map_err(sq("copy"))
    }
}

/// The channels each checkpoint of one SQLite namespace stores a value for, by id
/// (`None`: the row cannot be read, with the keys at hand).
fn stored_channels(
    conn: &Connection,
    serde: &Arc<dyn Serializer>,
    thread: &str,
    ns: &str,
) -> Result<HashMap<String, Option<HashSet<String>>>> {
    let mut stmt = conn
        .prepare_cached(
            "SELECT checkpoint_id, type, checkpoint FROM checkpoints \
             WHERE thread_id = ?1 AND checkpoint_ns = ?2",
        )
        .map_err(sq("prune"))?;
    let rows = stmt
        .query_map([thread, ns], |r| {
            Ok((
                r.get::<_, String>(0)?,
                r.get::<_, Option<String>>(1)?,
                cell_bytes(r, 2)?,
            ))
        })
        .map_err(sq("prune"))?;
    let mut out = HashMap::new();
    for row in rows {
        let (id, ty, data) = row.map_err(sq("prune"))?;
        out.insert(id, stored_of(serde, ty.as_deref(), data.as_deref()));
    }
    Ok(out)
}

/// The channels a serialized checkpoint (`ty`, `data`) stores a value for (`None`: it
/// cannot be read, with the keys at hand).
fn stored_of(
    serde: &Arc<dyn Serializer>,
    ty: Option<&str>,
    data: Option<&[u8]>,
) -> Option<HashSet<String>> {
    serde
        .loads_typed(ty.unwrap_or_default(), data.unwrap_or_default())
        .ok()
        .and_then(|v| Checkpoint::from_owned_value(v).ok())
        .map(|c| c.channel_values.into_keys().collect())
}

/// Whether a checkpoint with `metadata` has its namespace's rows read for the delta
/// walk: it has DeltaChannels, or its metadata cannot be read.
fn walks(metadata: Option<&crate::saver::CheckpointMetadata>) -> bool {
    metadata.is_none_or(|m| !m.counters_since_delta_snapshot().is_empty())
}

/// A page of threads' counts ([`Counted`]), before its `WHERE`.
fn counts_sql() -> String {
    format!(
        "SELECT thread_id, count(*), min(checkpoint_id), max(checkpoint_id), sum({}) \
         FROM checkpoints",
        odd_ids("checkpoint_id")
    )
}

/// A row of [`counts_sql`].
fn counted(r: &rusqlite::Row<'_>) -> rusqlite::Result<Counted> {
    Ok((
        thread_cell(r, 0)?,
        r.get(1)?,
        r.get(2)?,
        r.get(3)?,
        r.get(4)?,
    ))
}

/// Gives a SQLite store's free pages back in steps (a retention sweep with `vacuum`).
async fn incremental_vacuum(
    shared: &Mutex<Connection>,
    pause: Option<Duration>,
    stop: Option<&AtomicBool>,
) -> Result<VacuumReport> {
    // The connection is taken for each step and let go before each pause (a lock held
    // across the pause would make the future not `Send`).
    fn q(conn: &Connection, sql: &str) -> Result<i64> {
        conn.query_row(sql, [], |r| r.get(0)).map_err(sq("vacuum"))
    }
    let lock = || shared.lock().unwrap_or_else(PoisonError::into_inner);
    let page = u64::try_from(q(&lock(), "PRAGMA page_size")?).unwrap_or(0);
    let mode = q(&lock(), "PRAGMA auto_vacuum")?;
    let free = |n: i64| u64::try_from(n).unwrap_or(0);
    let mut report = VacuumReport {
        mode: match mode {
            1 => "full",
            2 => "incremental",
            _ => "none",
        },
        ..VacuumReport::default()
    };
    if mode != 2 {
        report.free_pages_left = free(q(&lock(), "PRAGMA freelist_count")?);
        if mode == 0 && report.free_pages_left > 0 {
            report.note = Some(format!(
                "the file's auto_vacuum is NONE: its {} free page(s) are reused by later \
                 writes but not given back; convert it once (a full VACUUM, every writer waits \
                 for it): sqlite3 FILE 'PRAGMA auto_vacuum = INCREMENTAL; VACUUM;' — later \
                 sweeps with --vacuum then give space back in small steps",
                report.free_pages_left
            ));
        }
        return Ok(report);
    }
    loop {
        let (before, after) = {
            let conn = lock();
            let before = q(&conn, "PRAGMA freelist_count")?;
            if before == 0 || stop.is_some_and(|s| s.load(Ordering::SeqCst)) {
                (before, None)
            } else {
                conn.execute_batch(&format!("PRAGMA incremental_vacuum({VACUUM_STEP_PAGES})"))
                    .map_err(sq("vacuum"))?;
                (before, Some(q(&conn, "PRAGMA freelist_count")?))
            }
        };
        let Some(after) = after else {
            report.free_pages_left = free(before);
            break;
        };
        report.pages_released += free(before - after);
        if after >= before {
            report.free_pages_left = free(after);
            break;
        }
        if let Some(p) = pause {
            super::super::retry::pause(p, stop).await;
        }
    }
    // In WAL mode the file shrinks when the checkpoint copies the last frames; a
    // passive one waits for nobody.
    let _ = lock().query_row("PRAGMA wal_checkpoint(PASSIVE)", [], |_| Ok(()));
    report.bytes_released = report.pages_released.saturating_mul(page);
    Ok(report)
}
