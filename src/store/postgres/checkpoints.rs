//! The Postgres store's checkpoints, as prune, retain, import and copy reach them
//! ([`Checkpoints`]), and the sweep lock as a session advisory lock.

use std::collections::{BTreeMap, HashSet};
use std::sync::Arc;

use super::super::backend::{
    odd_ids, BlobRef, BlobRefs, Cell, Checkpoints, Counted, Spec, Versions, WriteSet,
};
use super::super::plan::{labeled, metadata_of, Cp, Loaded, MetaReads};
use super::super::spill::Queue;
use super::{pg, PgStore, Result};
use crate::saver::postgres::found_positions;
use crate::saver::retention::{Removal, Removed};
use crate::saver::CheckpointMetadata;
use crate::serializer::Serializer;

/// The key of the sweep lock: one per database and schema.
const LOCK_KEY: &str =
    "hashtextextended('lgcodec store retain ' || current_database() || '.' || current_schema(), 0)";

/// Each row's first three columns, as text.
fn triples<'r>(
    rows: &'r [tokio_postgres::Row],
    operation: &'static str,
) -> impl Iterator<Item = Result<(String, String, String)>> + 'r {
    rows.iter().map(move |r| {
        Ok((
            r.try_get(0).map_err(pg(operation))?,
            r.try_get(1).map_err(pg(operation))?,
            r.try_get(2).map_err(pg(operation))?,
        ))
    })
}

/// The channels checkpoint row `c` stores a value for: its inline values' keys and the
/// channels whose blob at its version is not `empty`, each looked up by the blobs' key
/// (`OFFSET 0`: the planner made the look-up a hash join over every blob of the thread
/// instead, for each checkpoint; 817 of a window's 842 ms on a thread of 10,000
/// checkpoints and 3,500 blobs, growing with the thread; 25 ms with the probes, EXPLAIN
/// ANALYZE, PG 15, 2026-12-06).
const STORED: &str = "ARRAY(SELECT jsonb_object_keys(CASE WHEN jsonb_typeof(c.checkpoint -> 'channel_values') = 'object' \
    THEN c.checkpoint -> 'channel_values' ELSE '{}'::jsonb END) UNION \
    SELECT v.key FROM jsonb_each_text(CASE WHEN jsonb_typeof(c.checkpoint -> 'channel_versions') = 'object' \
    THEN c.checkpoint -> 'channel_versions' ELSE '{}'::jsonb END) v WHERE EXISTS ( \
    SELECT 1 FROM checkpoint_blobs b WHERE b.thread_id = c.thread_id \
    AND b.checkpoint_ns = c.checkpoint_ns AND b.channel = v.key \
    AND b.version = v.value AND b.type <> 'empty' OFFSET 0))";

/// Whether checkpoint row `c` is of a format before v4 (which has no `pending_sends`).
const OLD: &str = "CASE WHEN jsonb_typeof(c.checkpoint -> 'v') = 'number' \
    THEN (c.checkpoint ->> 'v')::numeric < 4 ELSE false END";

/// Checkpoint row `c`'s `channel_versions` (`{}` when not an object).
const VERSIONS: &str = "CASE WHEN jsonb_typeof(c.checkpoint -> 'channel_versions') = 'object' \
    THEN c.checkpoint -> 'channel_versions' ELSE '{}'::jsonb END";

/// Whether channel `e.key` of checkpoint row `c`'s versions is held in the row
/// (a primitive value Python's saver keeps in `channel_values`, never in a blob).
const INLINE: &str = "coalesce(jsonb_typeof(c.checkpoint -> 'channel_values') = 'object' \
    AND c.checkpoint -> 'channel_values' ? e.key, false)";

/// A page of threads' counts ([`Counted`]), before its `WHERE`.
fn counts_sql() -> String {
    format!(
        "SELECT thread_id, count(*), min(checkpoint_id COLLATE \"C\"), \
         max(checkpoint_id COLLATE \"C\"), count(*) FILTER (WHERE {}) FROM checkpoints",
        odd_ids("checkpoint_id COLLATE \"C\"")
    )
}

/// A row of [`counts_sql`].
fn counted(r: &tokio_postgres::Row) -> Result<Counted> {
    Ok((
        r.try_get(0).map_err(pg("prune"))?,
        r.try_get(1).map_err(pg("prune"))?,
        r.try_get(2).map_err(pg("prune"))?,
        r.try_get(3).map_err(pg("prune"))?,
        r.try_get(4).map_err(pg("prune"))?,
    ))
}

impl PgStore {
    /// `pg_try_advisory_lock` on the sweep's key.
    async fn take_lock(&self) -> Result<bool> {
        let row = self
            .client()
            .query_one(&format!("SELECT pg_try_advisory_lock({LOCK_KEY})"), &[])
            .await
            .map_err(pg("retain lock"))?;
        row.try_get(0).map_err(pg("retain lock"))
    }

    /// A transaction on the connection taken whole (rolled back if dropped).
    async fn begin(&mut self) -> Result<tokio_postgres::Transaction<'_>> {
        self.client_mut()
            .await?
            .transaction()
            .await
            .map_err(pg("prune"))
    }
}

#[async_trait::async_trait]
impl Checkpoints for PgStore {
    fn pages_in_parallel(&self) -> bool {
        true
    }

    fn whole_threads_in_windows(&self) -> bool {
        false
    }

    async fn reader(&self) -> Result<Option<Box<dyn crate::store::backend::Backend>>> {
        // Read-only: it reads windows alone.
        let client = super::connect(&self.url, false).await?;
        Ok(Some(Box::new(PgStore {
            js: self.js,
            shallow: self.shallow,
            ..PgStore::over(client, &self.url, false)
        })))
    }

    async fn thread_count(&mut self) -> Result<u64> {
        let n: i64 = self
            .client()
            .query_one("SELECT count(DISTINCT thread_id) FROM checkpoints", &[])
            .await
            .map_err(pg("prune"))?
            .try_get(0)
            .map_err(pg("prune"))?;
        Ok(u64::try_from(n).unwrap_or(0))
    }

    async fn counted_threads(&mut self, after: &str, limit: i64) -> Result<Vec<Counted>> {
        let sql = format!(
            "{} WHERE thread_id > $1 GROUP BY thread_id ORDER BY thread_id LIMIT $2",
            counts_sql()
        );
        let rows = self
            .client()
            .query(&sql, &[&after, &limit])
            .await
            .map_err(pg("prune"))?;
        rows.iter().map(counted).collect()
    }

    async fn counted_of(&mut self, threads: &[String]) -> Result<Vec<Counted>> {
        let sql = format!(
            "{} WHERE thread_id = ANY($1) GROUP BY thread_id ORDER BY thread_id",
            counts_sql()
        );
        let rows = self
            .client()
            .query(&sql, &[&threads])
            .await
            .map_err(pg("prune"))?;
        rows.iter().map(counted).collect()
    }

    async fn latest_metadata(&mut self, thread: &str) -> Result<Option<CheckpointMetadata>> {
        let row = self
            .client()
            .query_opt(
                "SELECT metadata::text FROM checkpoints WHERE thread_id = $1 \
                 ORDER BY checkpoint_ns = '' DESC, checkpoint_id COLLATE \"C\" DESC LIMIT 1",
                &[&thread],
            )
            .await
            .map_err(pg("prune"))?;
        let Some(row) = row else {
            return Ok(None);
        };
        let meta: Option<String> = row.try_get(0).map_err(pg("prune"))?;
        Ok(metadata_of(meta.as_deref().map(str::as_bytes)))
    }

    async fn holds_thread(&mut self, thread: &str) -> Result<bool> {
        self.client()
            .query_one(
                "SELECT EXISTS (SELECT 1 FROM checkpoints WHERE thread_id = $1)",
                &[&thread],
            )
            .await
            .and_then(|r| r.try_get(0))
            .map_err(pg("prune"))
    }

    async fn waiting(&mut self, thread: &str) -> Result<bool> {
        self.client()
            .query_one(
                "SELECT EXISTS (SELECT 1 FROM (SELECT checkpoint_ns AS ns, \
                 max(checkpoint_id COLLATE \"C\") AS id FROM checkpoints WHERE thread_id = $1 \
                 GROUP BY checkpoint_ns) AS l WHERE EXISTS (SELECT 1 FROM checkpoint_writes w \
                 WHERE w.thread_id = $1 AND w.checkpoint_ns = l.ns AND w.checkpoint_id = l.id \
                 AND w.channel = '__interrupt__'))",
                &[&thread],
            )
            .await
            .and_then(|r| r.try_get(0))
            .map_err(pg("retain"))
    }

    async fn long_thread(&mut self, thread: &str) -> Result<Option<Vec<(String, bool)>>> {
        let client = self.client();
        let row = client
            .query_one(
                "SELECT EXISTS (SELECT 1 FROM checkpoints WHERE thread_id = $1 AND parent_checkpoint_id <> '' \
                 AND parent_checkpoint_id COLLATE \"C\" >= checkpoint_id COLLATE \"C\")",
                &[&thread],
            )
            .await
            .map_err(pg("prune"))?;
        if row.try_get::<_, bool>(0).map_err(pg("prune"))? {
            return Ok(None);
        }
        // As `load_threads` decides it: a namespace's rows are read when some
        // checkpoint's metadata has DeltaChannel counters.
        let rows = client
            .query(
                "SELECT checkpoint_ns, bool_or(metadata ? 'counters_since_delta_snapshot') \
                 FROM checkpoints WHERE thread_id = $1 GROUP BY checkpoint_ns",
                &[&thread],
            )
            .await
            .map_err(pg("prune"))?;
        rows.iter()
            .map(|r| {
                Ok((
                    r.try_get(0).map_err(pg("prune"))?,
                    r.try_get::<_, Option<bool>>(1)
                        .map_err(pg("prune"))?
                        .unwrap_or(false),
                ))
            })
            .collect::<Result<Vec<_>>>()
            .map(Some)
    }

    async fn window(
        &mut self,
        _serde: &Arc<dyn Serializer>,
        (thread, ns): (&str, &str),
        walked: bool,
        below: Option<&str>,
        limit: i64,
        labels: &[String],
    ) -> Result<(Vec<Cp>, Vec<Versions>)> {
        let bound = if below.is_some() {
            "AND c.checkpoint_id < $3"
        } else {
            "AND $3::text IS NULL"
        };
        // `OFFSET 0` keeps the `__pregel_tasks` look-up a probe of the writes' key per
        // checkpoint. Without it the planner hashed the thread's `__pregel_tasks` writes
        // for each window instead, reading every write of the thread (by its index, or
        // all of the table: 17 of a window's 21 ms for one thread of 100,000
        // checkpoints and 200,000 writes), so that a thread's prune grew with the
        // square of its length; 5.9 ms a window with the probes (EXPLAIN ANALYZE, PG
        // 15, 2026-12-06; the prune 5.2 → 4.3 s).
        let sql = format!(
            "SELECT c.checkpoint_id, c.parent_checkpoint_id, c.metadata::text, \
             CASE WHEN $4 THEN {STORED} ELSE '{{}}'::text[] END, \
             v.chs, v.vers, {OLD}, EXISTS (SELECT 1 FROM checkpoint_writes w \
             WHERE w.thread_id = $1 AND w.checkpoint_ns = $2 AND w.checkpoint_id = c.checkpoint_id \
             AND w.channel = '__pregel_tasks' OFFSET 0) \
             FROM checkpoints c CROSS JOIN LATERAL (SELECT \
             coalesce(array_agg(e.key), '{{}}'), coalesce(array_agg(e.value), '{{}}') \
             FROM jsonb_each_text({VERSIONS}) e WHERE NOT {INLINE}) AS v(chs, vers) WHERE c.thread_id = $1 AND c.checkpoint_ns = $2 {bound} \
             ORDER BY c.checkpoint_id DESC LIMIT $5"
        );
        // Row by row, as `load_threads` reads (a window's metadata is not held whole).
        let params: [&(dyn tokio_postgres::types::ToSql + Sync); 5] =
            [&thread, &ns, &below, &walked, &limit];
        let rows = self
            .client()
            .query_raw(&sql, params)
            .await
            .map_err(pg("prune"))?;
        let mut rows = std::pin::pin!(rows);
        let (mut out, mut pairs) = (Vec::new(), Vec::new());
        while let Some(r) = futures_util::TryStreamExt::try_next(&mut rows)
            .await
            .map_err(pg("prune"))?
        {
            let meta: Option<String> = r.try_get(2).map_err(pg("prune"))?;
            let metadata = metadata_of(meta.as_deref().map(str::as_bytes));
            let mut cp = Cp::new(
                ns.to_owned(),
                r.try_get(0).map_err(pg("prune"))?,
                r.try_get(1).map_err(pg("prune"))?,
                Some(r.try_get(3).map_err(pg("prune"))?),
                metadata.as_ref(),
            );
            cp.labeled = labeled(metadata.as_ref(), labels);
            // Before v4 a checkpoint reads its pending sends from its parent's
            // `__pregel_tasks` writes, as `load_threads` has it.
            let old: bool = r.try_get(6).map_err(pg("prune"))?;
            cp.reads_parent_sends = old && cp.parent.is_some();
            cp.has_sends = r.try_get(7).map_err(pg("prune"))?;
            // One aggregation's two arrays: the pairs in the same order.
            let channels: Vec<String> = r.try_get(4).map_err(pg("prune"))?;
            let versions: Vec<String> = r.try_get(5).map_err(pg("prune"))?;
            pairs.push(
                channels
                    .into_iter()
                    .zip(versions)
                    .map(|(c, v)| (c.into_boxed_str(), v.into_boxed_str()))
                    .collect(),
            );
            out.push(cp);
        }
        Ok((out, pairs))
    }

    async fn blob_refs(&mut self, (thread, ns): (&str, &str)) -> Result<Option<BlobRefs>> {
        // One transaction, for the plan settings below to hold for it alone.
        let tx = self.begin().await?;
        let newest: Option<String> = tx
            .query_one(
                "SELECT max(checkpoint_id) FROM checkpoints WHERE thread_id = $1 AND checkpoint_ns = $2",
                &[&thread, &ns],
            )
            .await
            .and_then(|r| r.try_get(0))
            .map_err(pg("prune"))?;
        let Some(newest) = newest else {
            return Ok(None);
        };
        // One pass over the namespace, grouped by the server; the rows streamed into
        // the scratch file in the order the windows use them (ids compare as the
        // windows read them: a long thread's are of a uuid6's shape). Whether a blob
        // is stored at a version, from the namespace's blobs hashed once: the planner,
        // which takes `jsonb_each_text` for 100 rows and the grouping for 100, probed
        // the blobs' key once a version instead, and sorted on disk. One thread of
        // 100,000 checkpoints (300,000 versions, 100,000 blobs): 1.47 s with the
        // probes, 1.05 s with the hash, a sort in memory and the grouping by bytes
        // (EXPLAIN ANALYZE, PG 15, 2026-12-06).
        tx.batch_execute("SET LOCAL enable_nestloop = off; SET LOCAL work_mem = '64MB'")
            .await
            .map_err(pg("prune"))?;
        let sql = format!(
            "SELECT r.ch, r.ver, r.oldest, b.channel IS NOT NULL \
             FROM (SELECT e.key COLLATE \"C\" AS ch, e.value COLLATE \"C\" AS ver, \
             min(c.checkpoint_id) AS oldest \
             FROM checkpoints c CROSS JOIN LATERAL jsonb_each_text({VERSIONS}) e \
             WHERE c.thread_id = $1 AND c.checkpoint_ns = $2 AND NOT {INLINE} GROUP BY 1, 2) AS r \
             LEFT JOIN (SELECT channel, version FROM checkpoint_blobs \
             WHERE thread_id = $1 AND checkpoint_ns = $2) b ON b.channel = r.ch AND b.version = r.ver \
             ORDER BY r.oldest DESC"
        );
        let rows = tx
            .query_raw(&sql, [&thread, &ns])
            .await
            .map_err(pg("prune"))?;
        let mut rows = std::pin::pin!(rows);
        let mut refs = Queue::new("prune")?;
        while let Some(r) = futures_util::TryStreamExt::try_next(&mut rows)
            .await
            .map_err(pg("prune"))?
        {
            let row: BlobRef = (
                r.try_get(0).map_err(pg("prune"))?,
                r.try_get(1).map_err(pg("prune"))?,
                r.try_get(2).map_err(pg("prune"))?,
                r.try_get(3).map_err(pg("prune"))?,
            );
            refs.push(&row)?;
        }
        tx.commit().await.map_err(pg("prune"))?;
        Ok(Some(BlobRefs { newest, refs }))
    }

    async fn load_threads(
        &mut self,
        _serde: &Arc<dyn Serializer>,
        threads: &[String],
        reads: &MetaReads,
    ) -> Result<BTreeMap<String, Loaded>> {
        let mut out: BTreeMap<String, Loaded> = BTreeMap::new();
        // Rows one at a time as the server sends them: the page's metadata (2 KiB a
        // checkpoint where old releases kept `writes` there) is parsed and dropped row by
        // row, not held as a page of rows (one thread of 20,000 such checkpoints: 63 MiB
        // held, `tests/store_bounded_memory.rs`).
        let client = self.client();
        let params: [&(dyn tokio_postgres::types::ToSql + Sync); 1] = [&threads];
        let rows = client
            .query_raw(
                // The channels a checkpoint stores are asked only in namespaces
                // with a DeltaChannel (their metadata has counters): elsewhere no
                // walk reads them. The `__pregel_tasks` writes are looked for only
                // at a parent a checkpoint before v4 reads its sends from.
                &format!(
                "WITH delta AS (SELECT DISTINCT thread_id, checkpoint_ns FROM checkpoints \
                    WHERE thread_id = ANY($1) AND metadata ? 'counters_since_delta_snapshot'), \
                 old AS (SELECT DISTINCT thread_id, checkpoint_ns, parent_checkpoint_id FROM checkpoints \
                    WHERE thread_id = ANY($1) AND jsonb_typeof(checkpoint -> 'v') = 'number' \
                    AND (checkpoint ->> 'v')::numeric < 4 AND parent_checkpoint_id IS NOT NULL) \
                 SELECT c.thread_id, c.checkpoint_ns, c.checkpoint_id, c.parent_checkpoint_id, c.metadata::text, \
                 CASE WHEN EXISTS (SELECT 1 FROM delta WHERE delta.thread_id = c.thread_id \
                    AND delta.checkpoint_ns = c.checkpoint_ns) THEN \
                 {STORED} ELSE '{{}}'::text[] END, \
                 {OLD}, \
                 EXISTS (SELECT 1 FROM old WHERE old.thread_id = c.thread_id \
                    AND old.checkpoint_ns = c.checkpoint_ns AND old.parent_checkpoint_id = c.checkpoint_id) \
                    AND EXISTS (SELECT 1 FROM checkpoint_writes w WHERE w.thread_id = c.thread_id \
                    AND w.checkpoint_ns = c.checkpoint_ns AND w.checkpoint_id = c.checkpoint_id \
                    AND w.channel = '__pregel_tasks') \
                 FROM checkpoints c WHERE c.thread_id = ANY($1) ORDER BY 1, 2, 3"
            ),
                params,
            )
            .await
            .map_err(pg("prune"))?;
        let mut rows = std::pin::pin!(rows);
        while let Some(r) = futures_util::TryStreamExt::try_next(&mut rows)
            .await
            .map_err(pg("prune"))?
        {
            let thread: String = r.try_get(0).map_err(pg("prune"))?;
            let meta: Option<String> = r.try_get(4).map_err(pg("prune"))?;
            let metadata = metadata_of(meta.as_deref().map(str::as_bytes));
            let stored: Vec<String> = r.try_get(5).map_err(pg("prune"))?;
            let parent: Option<String> = r.try_get(3).map_err(pg("prune"))?;
            let old: bool = r.try_get(6).map_err(pg("prune"))?;
            let reads_parent_sends = old && parent.as_deref().is_some_and(|p| !p.is_empty());
            let mut cp = Cp::new(
                r.try_get(1).map_err(pg("prune"))?,
                r.try_get(2).map_err(pg("prune"))?,
                parent,
                Some(stored),
                metadata.as_ref(),
            );
            cp.reads_parent_sends = reads_parent_sends;
            cp.has_sends = r.try_get(7).map_err(pg("prune"))?;
            out.entry(thread).or_default().push(reads, cp, metadata);
        }
        Ok(out)
    }

    async fn interrupted(
        &mut self,
        threads: &[String],
    ) -> Result<HashSet<(String, String, String)>> {
        let rows = self
            .client()
            .query(
                "SELECT DISTINCT thread_id, checkpoint_ns, checkpoint_id FROM checkpoint_writes \
                 WHERE thread_id = ANY($1) AND channel = '__interrupt__'",
                &[&threads],
            )
            .await
            .map_err(pg("retain"))?;
        triples(&rows, "retain").collect()
    }

    async fn remove(&mut self, removal: &Removal, dry_run: bool) -> Result<Removed> {
        use crate::saver::postgres::retention::{self as pg_retention, StatementMode, Tables};
        let tx = self.begin().await?;
        let removed = pg_retention::remove(
            &tx,
            StatementMode::Unnamed,
            &Tables::new(None),
            removal,
            dry_run,
            "prune",
        )
        .await?;
        tx.commit().await.map_err(pg("prune"))?;
        Ok(removed)
    }

    async fn expiry_page(&mut self, after: &str) -> Result<Vec<(String, String, String)>> {
        let rows = self
            .client()
            .query(
                "SELECT thread_id, min(checkpoint_id), max(checkpoint_id) FROM checkpoints \
                 WHERE thread_id > $1 GROUP BY thread_id ORDER BY thread_id LIMIT 1000",
                &[&after],
            )
            .await
            .map_err(pg("expiry check"))?;
        triples(&rows, "expiry check").collect()
    }

    async fn try_lock(&mut self) -> Result<bool> {
        self.take_lock().await
    }

    async fn relock(&mut self) -> Result<bool> {
        self.take_lock().await
    }

    async fn unlock(&mut self) -> Result<()> {
        self.client()
            .execute(&format!("SELECT pg_advisory_unlock({LOCK_KEY})"), &[])
            .await
            .map_err(pg("retain unlock"))?;
        Ok(())
    }

    async fn insert_rows(
        &mut self,
        spec: &Spec,
        rows: &[Vec<Cell>],
        copy_first: bool,
    ) -> Result<(Vec<bool>, bool)> {
        super::rows::insert_rows(self.client_mut().await?, spec, rows, copy_first).await
    }

    async fn row_at(&mut self, spec: &Spec, key: &[Cell]) -> Result<Option<Vec<Cell>>> {
        super::rows::row_at(&self.client(), spec, key).await
    }

    async fn holds_checkpoints(&mut self, keys: &[[&str; 3]]) -> Result<Vec<bool>> {
        let threads: Vec<&str> = keys.iter().map(|k| k[0]).collect();
        let nss: Vec<&str> = keys.iter().map(|k| k[1]).collect();
        let ids: Vec<&str> = keys.iter().map(|k| k[2]).collect();
        let rows = self
            .client()
            .query(
                "SELECT k.n::int8 FROM unnest($1::text[], $2::text[], $3::text[]) WITH ORDINALITY AS k(t, ns, id, n) \
                 WHERE EXISTS (SELECT 1 FROM checkpoints c WHERE c.thread_id = k.t AND c.checkpoint_ns = k.ns AND c.checkpoint_id = k.id)",
                &[&threads, &nss, &ids],
            )
            .await
            .map_err(pg("copy"))?;
        found_positions(&rows, keys.len()).map_err(pg("copy"))
    }

    async fn insert_writes(&mut self, batch: &[WriteSet<'_>], fresh: bool) -> Result<(u64, u64)> {
        super::rows::insert_writes(self.client_mut().await?, batch, fresh).await
    }
}
