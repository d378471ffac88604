//! The page engine `prune` and `retain` share: threads are read a page at a time (at
//! most [`PAGE_THREADS`] threads, about 1,000 checkpoints; a larger thread alone), each
//! thread decided by the planner (`plan.rs`) into a [`Removal`], and each page's removal
//! deleted in one transaction by the savers' own retention code
//! (`saver::sqlite::retention`, `saver::postgres::retention`): killed at any point, a
//! run leaves each page either as it was or done; run it again to finish. On Postgres
//! two pages are done at a time on two connections.
//!
//! A page is chosen from each thread's checkpoint count and oldest and newest ids, and
//! the rules decide some threads from those alone (`Rules::fate`): a thread they cannot
//! touch is passed over unread, one that is expired goes whole unread (by thread id up
//! to its newest id). Measured on 100,000 checkpoints in 10,000 threads, half of them
//! idle (2026-11-28, release build, two cores): `prune --idle-since` 3.4–3.7 s → 1.45 s
//! on Postgres, 3.5–3.9 s → 2.1 s on SQLite.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use super::ops::{Progress, ProgressFn, Stage, Throttle};
use super::plan::{plan_thread, Cp, Fate, PlannedThread, Rules, Tally};
use super::raw::{cell_bytes, pg, sq, Result};
use super::retry::Retry;
use super::target::{open_target, Target};
use crate::error::Error;
use crate::saver::delta::ChainNode;
use crate::saver::retention::{Removal, Removed};
use crate::saver::{Checkpoint, CheckpointMetadata};
use crate::serializer::Serializer;

/// Checkpoints loaded per page of threads (a thread with more is loaded alone): what
/// a prune holds in memory at once, and what one transaction deletes at most, so a
/// live writer waits for one page's deletes, never for the whole prune.
const PAGE_CHECKPOINTS: i64 = 1_000;
/// Threads per page at most, by default (`retain`'s policy may set its own).
pub(crate) const PAGE_THREADS: usize = 200;

fn metadata_of(bytes: Option<&[u8]>) -> Option<CheckpointMetadata> {
    let v = crate::json::parse(bytes?, 1_000).ok()?;
    CheckpointMetadata::from_value(&v).ok()
}

fn node(
    parent: Option<String>,
    stored: Option<HashSet<String>>,
    md: &Option<CheckpointMetadata>,
) -> ChainNode {
    ChainNode {
        parent: parent.filter(|p| !p.is_empty()),
        stored,
        delta_channels: md
            .as_ref()
            .map(|m| m.counters_since_delta_snapshot().into_keys().collect()),
    }
}

/// A page of threads: those to read and decide, those that go whole and those passed
/// over, both decided unread from each thread's count and oldest and newest ids
/// ([`Rules::fate`]; a passed-over thread is counted as looked at, every checkpoint
/// kept).
#[derive(Default)]
struct Page {
    load: Vec<String>,
    /// `(thread, its newest checkpoint id, its checkpoints)`.
    whole: Vec<(String, String, u64)>,
    passed_threads: u64,
    passed_checkpoints: u64,
    /// The last thread the page took; `None`: no thread left.
    last: Option<String>,
}

impl Page {
    fn threads(&self) -> u64 {
        (self.load.len() + self.whole.len()) as u64 + self.passed_threads
    }

    /// Whether it has threads to read or delete.
    fn has_work(&self) -> bool {
        !self.load.is_empty() || !self.whole.is_empty()
    }
}

/// `LIKE` pattern of a uuid6's shape (`xxxxxxxx-xxxx-6xxx-xxxx-xxxxxxxxxxxx`). A thread
/// whose ids all have it and hold no uppercase letter has its ids in time order
/// bytewise: its oldest and newest ids are its oldest and newest in time. (A regular
/// expression checking each character took 50 ms for 8,000 ids against 4 ms for this
/// pattern, PG 15 in `C.UTF-8`.)
const UUID6_SHAPE: &str = "________-____-6___-____-____________";

/// Counts a thread's ids that are not of a uuid6's shape in lowercase (`{id}`: the id
/// column as compared bytewise).
fn odd_ids(id: &str) -> String {
    format!("{id} NOT LIKE '{UUID6_SHAPE}' OR {id} <> lower({id})")
}

/// One row of a page query: a thread, its checkpoint count, its bytewise oldest and
/// newest ids, and how many of its ids are not lowercase and of a uuid6's shape.
type Counted = (String, i64, String, String, i64);

/// The next page of threads after `after`, by id: up to `limit` threads to read or
/// delete whole, holding about [`PAGE_CHECKPOINTS`] checkpoints (at least one thread),
/// and the threads among them `rules` cannot touch, passed over. What goes whole or is
/// passed over is known from each thread's count and oldest and newest ids
/// ([`Rules::fate`]; `decide`: `false` reads every thread, as a listing of each plan
/// needs): `--idle-since` reads no rows at all, and a date rule on a store of mostly
/// recent threads reads only the old ones. `only`: those threads (sorted), else every
/// thread of the store.
async fn thread_page(
    target: &Target,
    rules: &Rules,
    decide: bool,
    only: &[String],
    after: Option<&str>,
    limit: usize,
) -> Result<Page> {
    let counted: Vec<Counted> = if only.is_empty() {
        // Passed-over threads do not fill a page: up to twice `limit` are counted.
        let fetch = i64::try_from(limit.saturating_mul(2)).unwrap_or(i64::MAX);
        let after = after.unwrap_or("");
        match target {
            Target::Sqlite(conn) => {
                let sql = format!(
                    "SELECT thread_id, count(*), min(checkpoint_id), max(checkpoint_id), \
                     sum({}) FROM checkpoints \
                     WHERE thread_id > ?1 GROUP BY thread_id ORDER BY thread_id LIMIT ?2",
                    odd_ids("checkpoint_id")
                );
                let mut stmt = conn.prepare_cached(&sql).map_err(sq("prune"))?;
                let rows = stmt
                    .query_map(rusqlite::params![after, fetch], |r| {
                        Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?))
                    })
                    .map_err(sq("prune"))?
                    .collect::<std::result::Result<Vec<_>, _>>()
                    .map_err(sq("prune"))?;
                rows
            }
            Target::Postgres(client) => {
                let sql = format!(
                    "SELECT thread_id, count(*), min(checkpoint_id COLLATE \"C\"), \
                     max(checkpoint_id COLLATE \"C\"), count(*) FILTER (WHERE {}) \
                     FROM checkpoints WHERE thread_id > $1 GROUP BY thread_id \
                     ORDER BY thread_id LIMIT $2",
                    odd_ids("checkpoint_id COLLATE \"C\"")
                );
                client
                    .query(&sql, &[&after, &fetch])
                    .await
                    .map_err(pg("prune"))?
                    .iter()
                    .map(|r| {
                        Ok((
                            r.try_get(0).map_err(pg("prune"))?,
                            r.try_get(1).map_err(pg("prune"))?,
                            r.try_get(2).map_err(pg("prune"))?,
                            r.try_get(3).map_err(pg("prune"))?,
                            r.try_get(4).map_err(pg("prune"))?,
                        ))
                    })
                    .collect::<Result<_>>()?
            }
        }
    } else {
        // The threads asked for: counted as one checkpoint each (a page of them), and
        // all read.
        only.iter()
            .filter(|t| after.is_none_or(|a| t.as_str() > a))
            .take(limit)
            .map(|t| (t.clone(), 1, String::new(), String::new(), 1))
            .collect()
    };
    let mut page = Page::default();
    let mut held = 0i64;
    for (thread, n, oldest, newest, odd) in counted {
        let count = u64::try_from(n).unwrap_or(0);
        let fate = if decide {
            rules.fate(count, &oldest, &newest, odd == 0)
        } else {
            Fate::Read
        };
        if fate == Fate::Untouched {
            page.passed_threads += 1;
            page.passed_checkpoints += count;
            page.last = Some(thread);
            continue;
        }
        let taken = page.load.len() + page.whole.len();
        if taken >= limit || (taken > 0 && held + n > PAGE_CHECKPOINTS) {
            break;
        }
        held += n;
        page.last = Some(thread.clone());
        if fate == Fate::Whole {
            page.whole.push((thread, newest, count));
        } else {
            page.load.push(thread);
        }
    }
    Ok(page)
}

/// The checkpoints of `threads`, by thread, each thread's in (namespace, id) order;
/// with `interrupts`, which of them hold a `__interrupt__` pending write.
async fn load_threads(
    target: &Target,
    serde: &Arc<dyn Serializer>,
    threads: &[String],
    interrupts: bool,
) -> Result<BTreeMap<String, Vec<Cp>>> {
    let mut out: BTreeMap<String, Vec<Cp>> = BTreeMap::new();
    match target {
        Target::Sqlite(conn) => {
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
                let mut list = Vec::new();
                let mut walked: HashSet<String> = HashSet::new();
                for row in rows {
                    let (ns, id, parent, meta) = row.map_err(sq("prune"))?;
                    let metadata = metadata_of(meta.as_deref());
                    if metadata
                        .as_ref()
                        .is_none_or(|m| !m.counters_since_delta_snapshot().is_empty())
                    {
                        walked.insert(ns.clone());
                    }
                    list.push(Cp {
                        // Python's SQLite saver keeps a `v < 4` checkpoint's pending
                        // sends in the checkpoint itself: no parent is read for them.
                        reads_parent_sends: false,
                        has_sends: false,
                        interrupted: false,
                        node: node(parent, Some(HashSet::new()), &metadata),
                        ns,
                        id,
                        metadata,
                    });
                }
                for ns in &walked {
                    let stored = stored_channels(conn, serde, thread, ns)?;
                    for c in list.iter_mut().filter(|c| &c.ns == ns) {
                        c.node.stored = stored.get(&c.id).cloned().flatten();
                    }
                }
                out.insert(thread.clone(), list);
            }
        }
        Target::Postgres(client) => {
            let rows = client
                .query(
                    // The channels a checkpoint stores are asked only in namespaces
                    // with a DeltaChannel (their metadata has counters): elsewhere no
                    // walk reads them. The `__pregel_tasks` writes are looked for only
                    // at a parent a checkpoint before v4 reads its sends from.
                    "WITH delta AS (SELECT DISTINCT thread_id, checkpoint_ns FROM checkpoints \
                        WHERE thread_id = ANY($1) AND metadata ? 'counters_since_delta_snapshot'), \
                     old AS (SELECT DISTINCT thread_id, checkpoint_ns, parent_checkpoint_id FROM checkpoints \
                        WHERE thread_id = ANY($1) AND jsonb_typeof(checkpoint -> 'v') = 'number' \
                        AND (checkpoint ->> 'v')::numeric < 4 AND parent_checkpoint_id IS NOT NULL) \
                     SELECT c.thread_id, c.checkpoint_ns, c.checkpoint_id, c.parent_checkpoint_id, c.metadata::text, \
                     CASE WHEN EXISTS (SELECT 1 FROM delta WHERE delta.thread_id = c.thread_id \
                        AND delta.checkpoint_ns = c.checkpoint_ns) THEN \
                     ARRAY(SELECT jsonb_object_keys(CASE WHEN jsonb_typeof(c.checkpoint -> 'channel_values') = 'object' \
                        THEN c.checkpoint -> 'channel_values' ELSE '{}'::jsonb END) UNION \
                        SELECT v.key FROM jsonb_each_text(CASE WHEN jsonb_typeof(c.checkpoint -> 'channel_versions') = 'object' \
                        THEN c.checkpoint -> 'channel_versions' ELSE '{}'::jsonb END) v WHERE EXISTS ( \
                        SELECT 1 FROM checkpoint_blobs b WHERE b.thread_id = c.thread_id \
                        AND b.checkpoint_ns = c.checkpoint_ns AND b.channel = v.key \
                        AND b.version = v.value AND b.type <> 'empty')) ELSE '{}'::text[] END, \
                     CASE WHEN jsonb_typeof(c.checkpoint -> 'v') = 'number' \
                        THEN (c.checkpoint ->> 'v')::numeric < 4 ELSE false END, \
                     EXISTS (SELECT 1 FROM old WHERE old.thread_id = c.thread_id \
                        AND old.checkpoint_ns = c.checkpoint_ns AND old.parent_checkpoint_id = c.checkpoint_id) \
                        AND EXISTS (SELECT 1 FROM checkpoint_writes w WHERE w.thread_id = c.thread_id \
                        AND w.checkpoint_ns = c.checkpoint_ns AND w.checkpoint_id = c.checkpoint_id \
                        AND w.channel = '__pregel_tasks') \
                     FROM checkpoints c WHERE c.thread_id = ANY($1) ORDER BY 1, 2, 3",
                    &[&threads],
                )
                .await
                .map_err(pg("prune"))?;
            for r in &rows {
                let thread: String = r.try_get(0).map_err(pg("prune"))?;
                let meta: Option<String> = r.try_get(4).map_err(pg("prune"))?;
                let metadata = metadata_of(meta.as_deref().map(str::as_bytes));
                let stored: Vec<String> = r.try_get(5).map_err(pg("prune"))?;
                let parent: Option<String> = r.try_get(3).map_err(pg("prune"))?;
                let old: bool = r.try_get(6).map_err(pg("prune"))?;
                out.entry(thread).or_default().push(Cp {
                    ns: r.try_get(1).map_err(pg("prune"))?,
                    id: r.try_get(2).map_err(pg("prune"))?,
                    reads_parent_sends: old && parent.as_deref().is_some_and(|p| !p.is_empty()),
                    has_sends: r.try_get(7).map_err(pg("prune"))?,
                    interrupted: false,
                    node: node(parent, Some(stored.into_iter().collect()), &metadata),
                    metadata,
                });
            }
        }
    }
    if interrupts {
        mark_interrupts(target, threads, &mut out).await?;
    }
    Ok(out)
}

/// The channels each checkpoint of one SQLite namespace stores a value for, by id
/// (`None`: the row cannot be read, with the keys at hand).
fn stored_channels(
    conn: &rusqlite::Connection,
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
        let stored = serde
            .loads_typed(
                ty.as_deref().unwrap_or_default(),
                data.as_deref().unwrap_or_default(),
            )
            .ok()
            .and_then(|v| Checkpoint::from_owned_value(v).ok())
            .map(|c| c.channel_values.into_keys().collect());
        out.insert(id, stored);
    }
    Ok(out)
}

/// Marks the checkpoints of `threads` that hold a `__interrupt__` pending write (what
/// LangGraph saves when a run stops at `interrupt()`).
async fn mark_interrupts(
    target: &Target,
    threads: &[String],
    out: &mut BTreeMap<String, Vec<Cp>>,
) -> Result<()> {
    let mut found: HashSet<(String, String, String)> = HashSet::new();
    match target {
        Target::Sqlite(conn) => {
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
        }
        Target::Postgres(client) => {
            let rows = client
                .query(
                    "SELECT DISTINCT thread_id, checkpoint_ns, checkpoint_id FROM checkpoint_writes \
                     WHERE thread_id = ANY($1) AND channel = '__interrupt__'",
                    &[&threads],
                )
                .await
                .map_err(pg("retain"))?;
            for r in &rows {
                found.insert((
                    r.try_get(0).map_err(pg("retain"))?,
                    r.try_get(1).map_err(pg("retain"))?,
                    r.try_get(2).map_err(pg("retain"))?,
                ));
            }
        }
    }
    if found.is_empty() {
        return Ok(());
    }
    for (thread, cps) in out.iter_mut() {
        for c in cps {
            c.interrupted = found.contains(&(thread.clone(), c.ns.clone(), c.id.clone()));
        }
    }
    Ok(())
}

/// How many threads the store holds (the progress bar's length).
pub(crate) async fn thread_count(target: &Target) -> Result<u64> {
    let sql = "SELECT count(DISTINCT thread_id) FROM checkpoints";
    let n: i64 = match target {
        Target::Sqlite(conn) => conn.query_row(sql, [], |r| r.get(0)).map_err(sq("prune"))?,
        Target::Postgres(client) => client
            .query_one(sql, &[])
            .await
            .map_err(pg("prune"))?
            .try_get(0)
            .map_err(pg("prune"))?,
    };
    Ok(u64::try_from(n).unwrap_or(0))
}

/// Removes (or counts, in a dry run) a page's plan in one transaction.
async fn remove(target: &mut Target, removal: &Removal, dry_run: bool) -> Result<Removed> {
    match target {
        Target::Sqlite(conn) => {
            // A dry run reads in a deferred transaction: it takes no write lock.
            let behavior = if dry_run {
                rusqlite::TransactionBehavior::Deferred
            } else {
                rusqlite::TransactionBehavior::Immediate
            };
            let tx = conn
                .transaction_with_behavior(behavior)
                .map_err(sq("prune"))?;
            let removed = crate::saver::sqlite::retention::remove(&tx, removal, dry_run)
                .map_err(sq("prune"))?;
            tx.commit().map_err(sq("prune"))?;
            Ok(removed)
        }
        Target::Postgres(client) => {
            use crate::saver::postgres::retention::{self as pg_retention, StatementMode, Tables};
            let tx = client.transaction().await.map_err(pg("prune"))?;
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
    }
}

/// A dry run's listing: called with each thread's plan.
pub(crate) type PlanFn = dyn Fn(&PlannedThread) + Send + Sync;

/// One run of the engine over a store's threads.
pub(crate) struct Pass<'a> {
    pub(crate) operation: &'static str,
    pub(crate) rules: &'a Rules,
    /// Only these threads (sorted, no repeats); empty: every thread.
    pub(crate) only: Vec<String>,
    pub(crate) dry_run: bool,
    /// Threads per page (one transaction).
    pub(crate) page_threads: usize,
    /// Between pages.
    pub(crate) pause: Option<Duration>,
    /// Stop after this many threads changed (checked after each page).
    pub(crate) max_threads: Option<u64>,
    pub(crate) max_rows_per_sec: Option<u64>,
    /// Start after this thread id.
    pub(crate) after: Option<String>,
    pub(crate) progress: Option<&'a ProgressFn>,
    /// Set from outside (a signal): the page in flight finishes, no other begins.
    pub(crate) stop: Option<&'a AtomicBool>,
    pub(crate) on_plan: Option<&'a PlanFn>,
    /// Lost Postgres connections in a row re-opened before the pass stops.
    pub(crate) max_reconnects: u32,
    /// Postgres: a query taking the pass's session lock again on a re-opened first
    /// connection (the lock went with the old one); `false` from it (another sweeper
    /// took the lock meanwhile) stops the pass after the page in flight.
    pub(crate) relock: Option<&'a str>,
}

/// What a pass did: its counts, the last thread it looked at, and why it ended.
#[derive(Default)]
pub(crate) struct PassDone {
    pub(crate) tally: Tally,
    pub(crate) last: Option<String>,
    pub(crate) capped: bool,
    pub(crate) stopped: bool,
    /// Connections re-opened after the server closed them.
    pub(crate) reconnects: u64,
    /// The session lock could not be taken again after a reconnect.
    pub(crate) lock_lost: bool,
}

/// Re-opens a pass's connections after a lost one.
struct Reopen<'a> {
    store: &'a str,
    retry: Retry,
    relock: Option<&'a str>,
    lock_lost: bool,
}

impl Reopen<'_> {
    /// After `e` on `target` (`first`: the connection that holds the session lock):
    /// re-opens it when the connection was lost (taking the lock again), for the
    /// caller to redo its unit; any other error, or one loss too many, is returned.
    async fn recover(&mut self, target: &mut Target, first: bool, e: Error) -> Result<()> {
        let before = self.retry.reconnects;
        target.recover(self.store, true, &mut self.retry, e).await?;
        let (true, Some(sql), Target::Postgres(client)) = (
            first && self.retry.reconnects > before,
            self.relock,
            &*target,
        ) else {
            return Ok(());
        };
        match client.query_one(sql, &[]).await.map_err(pg("retain lock")) {
            Ok(row) => {
                let got: bool = row.try_get(0).map_err(pg("retain lock"))?;
                self.lock_lost |= !got;
                Ok(())
            }
            // Lost again: the next statement counts it, and this runs again.
            Err(e) if e.is_connection_lost() => Ok(()),
            Err(e) => Err(e),
        }
    }
}

/// `$step` (an expression on `$target`, the connection `$first` or the second) until
/// it goes through, `$reopen` re-opening the connection after each loss. A page is
/// one transaction: redone after a loss, it is planned again from what the store
/// holds, so a page whose commit went through before the connection went finds its
/// threads pruned and removes nothing more.
macro_rules! redo {
    ($reopen:expr, $target:expr, $first:expr, $step:expr) => {
        loop {
            match $step {
                Ok(v) => break $reopen.retry.ok(v),
                Err(e) => $reopen.recover($target, $first, e).await?,
            }
        }
    };
}

/// Loads, decides and removes one page of threads on `target`, in one transaction;
/// returns its counts and how many checkpoints it read or deleted whole.
async fn do_page(
    target: &mut Target,
    serde: &Arc<dyn Serializer>,
    page: &Page,
    pass: &Pass<'_>,
) -> Result<(Tally, u64)> {
    let loaded = if page.load.is_empty() {
        BTreeMap::new()
    } else {
        load_threads(target, serde, &page.load, pass.rules.wants_interrupts()).await?
    };
    let mut tally = Tally::default();
    let mut removal = Removal::default();
    for (thread, cps) in &loaded {
        let planned = plan_thread(thread, cps, pass.rules, &mut removal, &mut tally);
        if let (Some(planned), Some(f)) = (planned, pass.on_plan) {
            f(&planned);
        }
    }
    let mut handled: u64 = loaded.values().map(|c| c.len() as u64).sum();
    for (thread, newest, count) in &page.whole {
        removal.whole_threads.push((thread.clone(), newest.clone()));
        tally.threads += 1;
        tally.threads_deleted += 1;
        tally.threads_changed += 1;
        tally.checkpoints_deleted += count;
        handled += count;
    }
    if !removal.is_empty() {
        let removed = remove(target, &removal, pass.dry_run).await?;
        tally.writes_deleted += removed.writes;
        tally.blobs_deleted += removed.blobs;
        tally.bytes_freed += removed.bytes;
    }
    Ok((tally, handled))
}

/// Runs `pass` over `store`, opened as `target` (a second connection is opened on
/// Postgres).
pub(crate) async fn run_pass(
    store: &str,
    target: &mut Target,
    serde: &Arc<dyn Serializer>,
    pass: &Pass<'_>,
) -> Result<PassDone> {
    let mut reopen = Reopen {
        store,
        retry: Retry::new(pass.max_reconnects),
        relock: pass.relock,
        lock_lost: false,
    };
    let total = if pass.only.is_empty() {
        redo!(reopen, target, true, thread_count(target).await)
    } else {
        pass.only.len() as u64
    };
    let mut throttle = Throttle::new(pass.max_rows_per_sec);
    // On Postgres two pages are done at a time on two connections (the server's work,
    // not the client's, is what a prune waits for: measured on 100,000 checkpoints,
    // PG 15, two cores, 3.0 s on one connection). SQLite has one writer.
    let mut second = match target {
        Target::Postgres(_) => Some(open_target(store, false).await?.0),
        Target::Sqlite(_) => None,
    };
    let mut out = PassDone::default();
    let mut done = 0u64;
    let mut after = pass.after.clone();
    let page_threads = pass.page_threads.max(1);
    // A listing of each thread's plan needs every thread read.
    let decide = pass.on_plan.is_none();
    loop {
        if pass.stop.is_some_and(|s| s.load(Ordering::SeqCst)) {
            out.stopped = true;
            break;
        }
        if pass
            .max_threads
            .is_some_and(|cap| out.tally.threads_changed >= cap)
        {
            out.capped = true;
            break;
        }
        if reopen.lock_lost {
            out.stopped = true;
            out.lock_lost = true;
            break;
        }
        let first = redo!(
            reopen,
            target,
            true,
            thread_page(
                target,
                pass.rules,
                decide,
                &pass.only,
                after.as_deref(),
                page_threads
            )
            .await
        );
        let Some(last) = first.last.clone() else {
            break;
        };
        let next = match &second {
            Some(_) => redo!(
                reopen,
                target,
                true,
                thread_page(
                    target,
                    pass.rules,
                    decide,
                    &pass.only,
                    Some(&last),
                    page_threads
                )
                .await
            ),
            None => Page::default(),
        };
        after = Some(next.last.clone().unwrap_or(last));
        let (a, b) = match second.as_mut() {
            Some(other) if first.has_work() && next.has_work() => {
                let (a, b) = futures_util::future::join(
                    do_page(target, serde, &first, pass),
                    do_page(other, serde, &next, pass),
                )
                .await;
                // Each connection's page is redone alone when its connection was
                // lost (the other page's transaction stands as it went).
                let mut a = Some(a);
                let a = redo!(
                    reopen,
                    target,
                    true,
                    match a.take() {
                        Some(first_try) => first_try,
                        None => do_page(target, serde, &first, pass).await,
                    }
                );
                let mut b = Some(b);
                let b = redo!(
                    reopen,
                    other,
                    false,
                    match b.take() {
                        Some(first_try) => first_try,
                        None => do_page(other, serde, &next, pass).await,
                    }
                );
                (a, Some(b))
            }
            _ => {
                // At most one of the two pages has work (a page without does nothing).
                let page = if first.has_work() { &first } else { &next };
                let a = redo!(
                    reopen,
                    target,
                    true,
                    do_page(target, serde, page, pass).await
                );
                (a, None)
            }
        };
        for (tally, read) in std::iter::once(a).chain(b) {
            throttle.account(read).await;
            out.tally.add(&tally);
        }
        for p in [&first, &next] {
            out.tally.threads += p.passed_threads;
            out.tally.checkpoints_kept += p.passed_checkpoints;
        }
        out.last.clone_from(&after);
        done += first.threads() + next.threads();
        if let Some(f) = pass.progress {
            f(&Progress {
                operation: pass.operation,
                column: "threads",
                rows_done: done,
                total_estimate: total.max(done),
                rewritten: out.tally.checkpoints_deleted,
                stage: Stage::Done,
                page: None,
            });
        }
        if let Some(p) = pass.pause {
            tokio::time::sleep(p).await;
        }
    }
    out.reconnects = reopen.retry.reconnects;
    Ok(out)
}

/// The next threads after `after` (up to 1,000), each with its oldest and newest
/// checkpoint id: what the time rules of a whole thread read.
pub(crate) async fn expiry_page(
    target: &Target,
    after: Option<&str>,
) -> Result<Vec<(String, String, String)>> {
    let sql = "SELECT thread_id, min(checkpoint_id), max(checkpoint_id) FROM checkpoints \
               WHERE thread_id > $1 GROUP BY thread_id ORDER BY thread_id LIMIT 1000";
    let after = after.unwrap_or("");
    match target {
        Target::Sqlite(conn) => {
            let mut stmt = conn
                .prepare_cached(&sql.replace('$', "?"))
                .map_err(sq("retain"))?;
            let rows = stmt
                .query_map([after], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
                .map_err(sq("retain"))?
                .collect::<std::result::Result<Vec<_>, _>>()
                .map_err(sq("retain"))?;
            Ok(rows)
        }
        Target::Postgres(client) => client
            .query(sql, &[&after])
            .await
            .map_err(pg("retain"))?
            .iter()
            .map(|r| {
                Ok((
                    r.try_get(0).map_err(pg("retain"))?,
                    r.try_get(1).map_err(pg("retain"))?,
                    r.try_get(2).map_err(pg("retain"))?,
                ))
            })
            .collect(),
    }
}
