//! The thread list ([`AnyStore::threads`], [`AnyStore::each_thread`]): a page of
//! threads at a time, each with its counts, sizes and latest checkpoint.

use std::collections::BTreeMap;
use std::ops::ControlFlow;

use super::{metadata_of, AnyStore, ThreadSummary};
use crate::store::backend::ph;
use crate::store::keys::StoreKeys;
use crate::store::raw::{serializer, Cols, Param, Result};

/// Threads [`AnyStore::each_thread`] reads at once: their ids, counts, sizes and latest
/// checkpoints, one statement each.
const THREAD_PAGE: usize = 256;

/// A thread's latest checkpoint as [`AnyStore::latest_of`] reads it: id, namespace,
/// metadata and, where the row holds it in clear, its time.
type Latest = (String, String, Option<Vec<u8>>, Option<String>);

impl AnyStore {
    /// Every thread: checkpoints, namespaces, writes, latest checkpoint (id, ts, step)
    /// and bytes. The latest checkpoint's `ts` is read from its row on Postgres (the
    /// JSONB keeps it in clear) and decoded with `keys` on SQLite. Holds every
    /// thread: [`each_thread`](Self::each_thread) hands them over one at a time.
    ///
    /// # Errors
    /// The database's errors.
    pub async fn threads(&self, keys: &StoreKeys) -> Result<Vec<ThreadSummary>> {
        let mut out = Vec::new();
        self.each_thread(keys, |t| {
            out.push(t);
            ControlFlow::Continue(())
        })
        .await?;
        Ok(out)
    }

    /// Every thread in thread order, as [`threads`](Self::threads) gives them, to `f`
    /// one at a time until it breaks: read a page of 256 threads at once (their counts,
    /// sizes and latest checkpoints with their times in three statements; on SQLite
    /// each time decoded from its checkpoint), so memory holds one page whatever the
    /// store holds. Returns how many threads `f` was given.
    ///
    /// # Errors
    /// The database's errors.
    pub async fn each_thread(
        &self,
        keys: &StoreKeys,
        mut f: impl FnMut(ThreadSummary) -> ControlFlow<()> + Send,
    ) -> Result<u64> {
        let c = self.raw.cols();
        let serde = serializer(keys);
        let mut after: Option<String> = None;
        let mut given = 0u64;
        loop {
            let page = self.thread_page(after.as_deref(), &c).await?;
            let (Some(first), Some(last)) = (page.first(), page.last()) else {
                return Ok(given);
            };
            let sizes = self.thread_sizes(&first.0, &last.0).await?;
            // A short page is the last: no statement to learn that nothing follows.
            let more = page.len() == THREAD_PAGE;
            after = Some(last.0.clone());
            let mut latests = self.latest_of(&first.0, &last.0, &c).await?;
            for (thread, checkpoints, namespaces) in page {
                let size = sizes.get(&thread).cloned().unwrap_or_default();
                // A thread deleted since the page was read has none.
                let (latest_id, ns, meta, ts) = latests.remove(&thread).unwrap_or_default();
                // Where the row does not give the time (SQLite's msgpack, a Postgres row
                // whose JSONB has no `ts` string), the checkpoint decoded gives it: `None`
                // without its key, or unreadable.
                let ts = match ts {
                    Some(ts) => Some(ts),
                    None => self
                        .tuple(&serde, &thread, Some(&ns), &latest_id)
                        .await
                        .ok()
                        .flatten()
                        .map(|t| t.checkpoint.ts),
                };
                given += 1;
                let summary = ThreadSummary {
                    latest_ts: ts,
                    latest_step: metadata_of(meta.as_deref()).and_then(|m| m.step()),
                    thread_id: thread,
                    checkpoints,
                    namespaces,
                    writes: size.writes.rows,
                    latest_checkpoint_id: latest_id,
                    bytes: size.total_bytes,
                };
                if f(summary).is_break() {
                    return Ok(given);
                }
            }
            if !more {
                return Ok(given);
            }
        }
    }

    /// Up to `THREAD_PAGE` threads after `after` (from the first without), in thread
    /// order: each with its checkpoints and namespaces.
    async fn thread_page(&self, after: Option<&str>, c: &Cols) -> Result<Vec<(String, u64, u64)>> {
        let cond = match after {
            Some(_) => format!(" WHERE thread_id > {}", ph(self.raw.is_sqlite(), 1)),
            None => String::new(),
        };
        let sql = format!(
            "SELECT thread_id, count(*), count(DISTINCT {ns}) FROM checkpoints{cond} \
             GROUP BY thread_id ORDER BY thread_id LIMIT {THREAD_PAGE}",
            ns = c.ns
        );
        let params: Vec<Param<'_>> = after.map(Param::from).into_iter().collect();
        self.raw
            .rows("read", &sql, &params)
            .await?
            .iter()
            .map(|r| Ok((r.thread(0)?, r.count(1)?, r.count(2)?)))
            .collect()
    }

    /// The latest checkpoint (root namespace first, then the greatest id) of each thread
    /// from `first` to `last`: id, ns, metadata, and on Postgres its `ts` as the row's
    /// JSONB holds it in clear in every layout (the time a decode of the checkpoint
    /// gives, and known without a key). One statement for a page of threads: a query
    /// per thread cost a round trip each on Postgres (`inspect --json` of 100,000
    /// checkpoints 3.76–3.95 s against 0.97–1.14 s, 2026-12-04).
    async fn latest_of(
        &self,
        first: &str,
        last: &str,
        c: &Cols,
    ) -> Result<BTreeMap<String, Latest>> {
        let sqlite = self.raw.is_sqlite();
        let (meta, ts) = if sqlite {
            // The checkpoint is msgpack, encrypted or not: its time takes a decode.
            ("metadata", "NULL")
        } else {
            (
                "metadata::text",
                "CASE WHEN jsonb_typeof(checkpoint -> 'ts') = 'string' \
                 THEN checkpoint ->> 'ts' END",
            )
        };
        let sql = format!(
            "SELECT thread_id, id, ns, meta, ts FROM (SELECT thread_id, {id} AS id, {ns} AS ns, \
             {meta} AS meta, {ts} AS ts, row_number() OVER (PARTITION BY thread_id \
             ORDER BY CASE WHEN {ns} = '' THEN 0 ELSE 1 END, {id} DESC) AS nth \
             FROM checkpoints WHERE thread_id BETWEEN {p1} AND {p2}) AS ranked WHERE nth = 1",
            id = c.id,
            ns = c.ns,
            p1 = ph(sqlite, 1),
            p2 = ph(sqlite, 2)
        );
        let mut out = BTreeMap::new();
        for mut r in self
            .raw
            .rows("read", &sql, &[first.into(), last.into()])
            .await?
        {
            let ts = r.take_opt_text(4)?;
            let row = (r.text(1)?, r.text(2)?, r.take_bytes(3), ts);
            out.insert(r.thread(0)?, row);
        }
        Ok(out)
    }
}
