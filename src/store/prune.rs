//! [`prune`]: retention for a store in today's Python layout (SQLite or Postgres).
//!
//! Rules (any together; a checkpoint goes if a rule drops it and nothing keeps it):
//! - **keep latest N** per thread and namespace;
//! - **before DATE**: checkpoints older than DATE go, except the latest of each
//!   namespace (so every kept thread stays resumable);
//! - **idle since DATE**: threads whose latest checkpoint is older than DATE go whole.
//!
//! A checkpoint's time is the one in its id (Python's ids are uuid6, made from the same
//! clock reading as `ts`, to the 100 ns); an id that is not a uuid6 has no known time
//! and is never dropped by a date rule. Threads are every thread, or
//! [`PruneOptions::threads`], narrowed by [`PruneOptions::metadata`] (the latest
//! checkpoint's metadata must hold each key with that JSON value).
//!
//! **DeltaChannel threads stay reconstructible:** for every kept checkpoint, the
//! ancestors it needs to rebuild its delta channels (up to the nearest one storing
//! each channel) are kept, with the savers' own walk (`saver::delta`'s
//! `needed_ancestors`). A checkpoint whose row cannot be read (no key) keeps its whole
//! chain. On Postgres a checkpoint before v4 keeps the parent whose writes Python's
//! reader takes its pending sends from (SQLite keeps them in the checkpoint).
//! Pending writes of dropped checkpoints go with them; on Postgres, the blobs they
//! reference that no remaining checkpoint of the namespace references go too; a kept
//! checkpoint whose parent goes is left with no parent (as Python's prune does).
//!
//! Threads are read a page at a time (at most 200 threads, about 1,000 checkpoints)
//! and each page's plan ([`Removal`]) is deleted in one transaction by the savers' own
//! retention code (`saver::sqlite::retention`, `saver::postgres::retention`): killed at
//! any point, a prune leaves each page either as it was or pruned; run it again to
//! finish. A dry run reports what would
//! go and how many bytes. SQLite can `VACUUM` afterwards
//! ([`PruneOptions::vacuum`]) to give the space back to the file system.

use std::collections::{BTreeMap, BTreeSet, HashSet};
use std::sync::Arc;
use std::time::Instant;

use serde::Serialize;
use serde_json::Value as Json;

use super::error::StoreFault;
use super::export::{open_target, Target};
use super::keys::StoreKeys;
use super::ops::{Progress, ProgressFn, Stage, Throttle};
use super::raw::{cell_bytes, pg, require_sqlite_file, serializer, sq, Result};
use super::Location;
use crate::saver::delta::{needed_ancestors, ChainNode};
use crate::saver::retention::{Removal, Removed};
use crate::saver::{Checkpoint, CheckpointMetadata};
use crate::serializer::Serializer;

/// Options of [`prune`]. At least one rule must be set.
#[derive(Clone, Default)]
pub struct PruneOptions {
    keep_latest: Option<usize>,
    before: Option<i64>,
    idle_since: Option<i64>,
    threads: Vec<String>,
    metadata: Vec<(String, Json)>,
    dry_run: bool,
    vacuum: bool,
    max_rows_per_sec: Option<u64>,
    progress: Option<ProgressFn>,
}

impl std::fmt::Debug for PruneOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PruneOptions")
            .field("keep_latest", &self.keep_latest)
            .field("before", &self.before)
            .field("idle_since", &self.idle_since)
            .field("threads", &self.threads)
            .field("dry_run", &self.dry_run)
            .finish_non_exhaustive()
    }
}

/// Seconds since the Unix epoch of `YYYY-MM-DD` or `YYYY-MM-DDTHH:MM[:SS[.f]]` with
/// an optional `Z` / `+00:00` (UTC; other offsets are refused).
///
/// # Errors
/// [`ErrorKind::InvalidDate`](crate::ErrorKind::InvalidDate) naming what was wrong.
pub fn parse_date(text: &str) -> Result<i64> {
    let bad = |reason: &str| StoreFault::InvalidDate {
        given: text.to_owned(),
        reason: reason.to_owned(),
    };
    let t = text.trim();
    let t = t
        .strip_suffix('Z')
        .or_else(|| t.strip_suffix("+00:00"))
        .unwrap_or(t);
    let (date, time) = match t.split_once(['T', ' ']) {
        Some((d, tm)) => (d, Some(tm)),
        None => (t, None),
    };
    let num = |s: &str, what: &str| s.parse::<i64>().map_err(|_| bad(what));
    let mut d = date.split('-');
    let (Some(y), Some(m), Some(day), None) = (d.next(), d.next(), d.next(), d.next()) else {
        return Err(bad("expected YYYY-MM-DD[THH:MM[:SS]] in UTC").into());
    };
    let (y, m, day) = (
        num(y, "bad year")?,
        num(m, "bad month")?,
        num(day, "bad day")?,
    );
    if !(1..=12).contains(&m) || !(1..=31).contains(&day) {
        return Err(bad("month or day out of range").into());
    }
    let mut secs = 0i64;
    if let Some(time) = time {
        if time.contains(['+', '-']) {
            return Err(bad("only UTC (Z or +00:00) is accepted").into());
        }
        let mut parts = time.split(':');
        let h = num(parts.next().unwrap_or(""), "bad hour")?;
        let mi = num(parts.next().unwrap_or("0"), "bad minute")?;
        let s = parts
            .next()
            .map(|s| s.split('.').next().unwrap_or("0"))
            .unwrap_or("0");
        let s = num(s, "bad second")?;
        if !(0..24).contains(&h) || !(0..60).contains(&mi) || !(0..61).contains(&s) {
            return Err(bad("time out of range").into());
        }
        secs = h * 3600 + mi * 60 + s;
    }
    // Days from civil (Howard Hinnant's algorithm).
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + day - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    let days = era * 146_097 + doe - 719_468;
    Ok(days * 86_400 + secs)
}

/// The Unix time (seconds) in a uuid6 checkpoint id, `None` if it is not one.
pub fn id_time(id: &str) -> Option<i64> {
    let hex: String = id.chars().filter(|c| *c != '-').collect();
    if hex.len() != 32 || hex.get(12..13) != Some("6") {
        return None;
    }
    let high = u64::from_str_radix(hex.get(0..8)?, 16).ok()?;
    let mid = u64::from_str_radix(hex.get(8..12)?, 16).ok()?;
    let low = u64::from_str_radix(hex.get(13..16)?, 16).ok()?;
    let ticks = (high << 28) | (mid << 12) | low;
    let unix = ticks.checked_sub(0x01B2_1DD2_1381_4000)?;
    i64::try_from(unix / 10_000_000).ok()
}

impl PruneOptions {
    /// No rule yet, writing, no vacuum.
    pub fn new() -> Self {
        Self::default()
    }

    /// Keep the latest `n` checkpoints per thread and namespace (at least 1).
    pub fn keep_latest(mut self, n: usize) -> Self {
        self.keep_latest = Some(n.max(1));
        self
    }

    /// Drop checkpoints older than `unix_seconds` (see [`parse_date`]), keeping the
    /// latest of each namespace.
    pub fn before(mut self, unix_seconds: i64) -> Self {
        self.before = Some(unix_seconds);
        self
    }

    /// Delete threads whose latest checkpoint is older than `unix_seconds`.
    pub fn idle_since(mut self, unix_seconds: i64) -> Self {
        self.idle_since = Some(unix_seconds);
        self
    }

    /// Only these threads.
    pub fn threads(mut self, threads: impl IntoIterator<Item = impl Into<String>>) -> Self {
        self.threads = threads.into_iter().map(Into::into).collect();
        self
    }

    /// Only threads whose latest checkpoint's metadata has `key` equal to `value`.
    pub fn metadata(mut self, key: impl Into<String>, value: Json) -> Self {
        self.metadata.push((key.into(), value));
        self
    }

    /// Report what would go; delete nothing.
    pub fn dry_run(mut self, on: bool) -> Self {
        self.dry_run = on;
        self
    }

    /// SQLite: `VACUUM` afterwards (the file shrinks; needs free space for a copy).
    pub fn vacuum(mut self, on: bool) -> Self {
        self.vacuum = on;
        self
    }

    /// At most this many checkpoints read per second, on average (0 or `None`: no
    /// limit). Needs a Tokio runtime with time enabled.
    pub fn max_rows_per_sec(mut self, rate: Option<u64>) -> Self {
        self.max_rows_per_sec = rate.filter(|r| *r > 0);
        self
    }

    /// Called after each thread.
    pub fn on_progress(mut self, f: impl Fn(&Progress) + Send + Sync + 'static) -> Self {
        self.progress = Some(Arc::new(f));
        self
    }
}

/// What [`prune`] did (or would do).
#[derive(Clone, Debug, Default, Serialize, PartialEq)]
#[non_exhaustive]
pub struct PruneReport {
    /// `prune`.
    pub operation: &'static str,
    /// The store.
    pub store: String,
    /// A dry run.
    pub dry_run: bool,
    /// Threads looked at (after the selection).
    pub threads: u64,
    /// Threads deleted whole (idle).
    pub threads_deleted: u64,
    /// Checkpoints dropped (would be).
    pub checkpoints_deleted: u64,
    /// Checkpoints the rules would drop, kept as ancestors of a kept checkpoint: to
    /// rebuild its delta channels, or because some checkpoint on the chain could not be
    /// read (its row or metadata did not decode, e.g. an encrypted SQLite checkpoint
    /// without its key), so what it needs is unknown and its whole chain stays.
    pub kept_for_delta: u64,
    /// Checkpoints of the threads looked at (not deleted whole) whose row could not be
    /// read: an encrypted row without its key, a value that does not decode. What they
    /// need is unknown, so their chains were kept whole: the prune did not do all it was
    /// asked (the CLI exits 1 and says so).
    pub unreadable: u64,
    /// Checkpoints kept.
    pub checkpoints_kept: u64,
    /// Pending-write rows dropped.
    pub writes_deleted: u64,
    /// Postgres blob rows dropped.
    pub blobs_deleted: u64,
    /// Bytes of the dropped rows' values (and Postgres JSONB text).
    pub bytes_freed: u64,
    /// SQLite with vacuum: file size before and after.
    pub file_bytes: Option<(u64, u64)>,
    /// Seconds.
    pub elapsed_s: f64,
}

impl PruneReport {
    /// Adds a page's counts.
    fn add(&mut self, page: &PruneReport) {
        self.threads += page.threads;
        self.threads_deleted += page.threads_deleted;
        self.checkpoints_deleted += page.checkpoints_deleted;
        self.kept_for_delta += page.kept_for_delta;
        self.unreadable += page.unreadable;
        self.checkpoints_kept += page.checkpoints_kept;
        self.writes_deleted += page.writes_deleted;
        self.blobs_deleted += page.blobs_deleted;
        self.bytes_freed += page.bytes_freed;
    }
}

/// One checkpoint of a namespace, with what the delta walk needs.
struct Cp {
    ns: String,
    id: String,
    node: ChainNode,
    metadata: Option<CheckpointMetadata>,
    /// A checkpoint before v4 with a parent reads its pending sends from the parent's
    /// `__pregel_tasks` writes (Python's `_migrate_pending_sends`).
    reads_parent_sends: bool,
    /// Has `__pregel_tasks` writes.
    has_sends: bool,
}

/// Checkpoints loaded per page of threads (a thread with more is loaded alone): what
/// a prune holds in memory at once, and what one transaction deletes at most, so a
/// live writer waits for one page's deletes, never for the whole prune.
const PAGE_CHECKPOINTS: i64 = 1_000;
/// Threads per page at most.
const PAGE_THREADS: i64 = 200;

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

/// The next page of threads after `after`, by id: up to [`PAGE_THREADS`] threads
/// holding about [`PAGE_CHECKPOINTS`] checkpoints (at least one thread). `only`: those
/// threads (sorted), else every thread of the store.
async fn thread_page(target: &Target, only: &[String], after: Option<&str>) -> Result<Vec<String>> {
    let counted: Vec<(String, i64)> = if only.is_empty() {
        let sql = "SELECT thread_id, count(*) FROM checkpoints WHERE thread_id > $1 \
                   GROUP BY thread_id ORDER BY thread_id LIMIT $2";
        let after = after.unwrap_or("");
        match target {
            Target::Sqlite(conn) => {
                let mut stmt = conn
                    .prepare_cached(&sql.replace('$', "?"))
                    .map_err(sq("prune"))?;
                let rows = stmt
                    .query_map(rusqlite::params![after, PAGE_THREADS], |r| {
                        Ok((r.get(0)?, r.get(1)?))
                    })
                    .map_err(sq("prune"))?
                    .collect::<std::result::Result<Vec<_>, _>>()
                    .map_err(sq("prune"))?;
                rows
            }
            Target::Postgres(client) => client
                .query(sql, &[&after, &PAGE_THREADS])
                .await
                .map_err(pg("prune"))?
                .iter()
                .map(|r| {
                    Ok((
                        r.try_get(0).map_err(pg("prune"))?,
                        r.try_get(1).map_err(pg("prune"))?,
                    ))
                })
                .collect::<Result<_>>()?,
        }
    } else {
        // The threads asked for: counted as one checkpoint each (a page of them).
        only.iter()
            .filter(|t| after.is_none_or(|a| t.as_str() > a))
            .take(PAGE_THREADS as usize)
            .map(|t| (t.clone(), 1))
            .collect()
    };
    let mut page = Vec::new();
    let mut held = 0i64;
    for (thread, n) in counted {
        if !page.is_empty() && held + n > PAGE_CHECKPOINTS {
            break;
        }
        held += n;
        page.push(thread);
    }
    Ok(page)
}

/// The checkpoints of `threads`, by thread, each thread's in (namespace, id) order.
async fn load_threads(
    target: &Target,
    serde: &Arc<dyn Serializer>,
    threads: &[String],
) -> Result<BTreeMap<String, Vec<Cp>>> {
    let mut out: BTreeMap<String, Vec<Cp>> = BTreeMap::new();
    match target {
        Target::Sqlite(conn) => {
            let mut stmt = conn
                .prepare_cached(
                    "SELECT thread_id, checkpoint_ns, checkpoint_id, parent_checkpoint_id, type, \
                     checkpoint, metadata FROM checkpoints WHERE thread_id = ?1 \
                     ORDER BY checkpoint_ns, checkpoint_id",
                )
                .map_err(sq("prune"))?;
            for thread in threads {
                let rows = stmt
                    .query_map([thread], |r| {
                        Ok((
                            r.get::<_, String>(1)?,
                            r.get::<_, String>(2)?,
                            r.get::<_, Option<String>>(3)?,
                            r.get::<_, Option<String>>(4)?,
                            cell_bytes(r, 5)?,
                            cell_bytes(r, 6)?,
                        ))
                    })
                    .map_err(sq("prune"))?;
                let list = out.entry(thread.clone()).or_default();
                for row in rows {
                    let (ns, id, parent, ty, data, meta) = row.map_err(sq("prune"))?;
                    let checkpoint = serde
                        .loads_typed(
                            ty.as_deref().unwrap_or_default(),
                            data.as_deref().unwrap_or_default(),
                        )
                        .ok()
                        .and_then(|v| Checkpoint::from_owned_value(v).ok());
                    let stored = checkpoint.map(|c| c.channel_values.into_keys().collect());
                    let metadata = metadata_of(meta.as_deref());
                    list.push(Cp {
                        // Python's SQLite saver keeps a `v < 4` checkpoint's pending
                        // sends in the checkpoint itself: no parent is read for them.
                        reads_parent_sends: false,
                        has_sends: false,
                        node: node(parent, stored, &metadata),
                        ns,
                        id,
                        metadata,
                    });
                }
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
                    node: node(parent, Some(stored.into_iter().collect()), &metadata),
                    metadata,
                });
            }
        }
    }
    Ok(out)
}

fn matches_metadata(md: Option<&CheckpointMetadata>, wanted: &[(String, Json)]) -> bool {
    if wanted.is_empty() {
        return true;
    }
    let Some(md) = md else { return false };
    let Ok(json) = crate::view::to_json(&md.to_value()) else {
        return false;
    };
    wanted.iter().all(|(k, v)| json.get(k) == Some(v))
}

/// How many threads the store holds (the progress bar's length).
async fn thread_count(target: &Target) -> Result<u64> {
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

/// Decides one thread by `options`' rules and adds what goes to `removal`.
fn plan_thread(
    thread: &str,
    cps: &[Cp],
    options: &PruneOptions,
    removal: &mut Removal,
    report: &mut PruneReport,
) {
    // The latest checkpoint of the root namespace (or of any).
    let Some(latest) = cps
        .iter()
        .filter(|c| c.ns.is_empty())
        .max_by(|a, b| a.id.cmp(&b.id))
        .or_else(|| cps.iter().max_by(|a, b| a.id.cmp(&b.id)))
    else {
        return;
    };
    if !matches_metadata(latest.metadata.as_ref(), &options.metadata) {
        return;
    }
    report.threads += 1;
    let newest = cps.iter().filter_map(|c| id_time(&c.id)).max();
    let idle = options
        .idle_since
        .is_some_and(|d| newest.is_some_and(|t| t < d));
    let mut by_ns: BTreeMap<&str, Vec<&Cp>> = BTreeMap::new();
    for c in cps {
        by_ns.entry(c.ns.as_str()).or_default().push(c);
    }
    if idle {
        report.threads_deleted += 1;
        if let Some(newest_id) = cps.iter().map(|c| c.id.as_str()).max() {
            removal
                .whole_threads
                .push((thread.to_owned(), newest_id.to_owned()));
        }
    } else {
        report.unreadable += cps.iter().filter(|c| c.node.stored.is_none()).count() as u64;
    }
    for (ns, list) in by_ns {
        let all: BTreeSet<String> = list.iter().map(|c| c.id.clone()).collect();
        let keep = if idle {
            BTreeSet::new()
        } else {
            let mut keep: BTreeSet<String> = all.clone();
            if let Some(k) = options.keep_latest {
                keep = all.iter().rev().take(k).cloned().collect();
            }
            if let Some(d) = options.before {
                keep.retain(|id| id_time(id).is_none_or(|t| t >= d));
                if let Some(last) = all.iter().next_back() {
                    keep.insert(last.clone());
                }
            }
            let by_id: std::collections::HashMap<&str, &Cp> =
                list.iter().map(|c| (c.id.as_str(), *c)).collect();
            let mut needed = needed_ancestors(&keep, |id| by_id.get(id).map(|c| c.node.clone()));
            // A checkpoint before v4 reads its pending sends from its parent's writes.
            for id in &keep {
                let Some(c) = by_id.get(id.as_str()).filter(|c| c.reads_parent_sends) else {
                    continue;
                };
                if let Some(p) = c.node.parent.as_deref() {
                    if by_id.get(p).is_some_and(|p| p.has_sends) {
                        needed.insert(p.to_owned());
                    }
                }
            }
            let extra = needed.iter().filter(|id| !keep.contains(*id)).count() as u64;
            report.kept_for_delta += extra;
            keep.extend(needed);
            report.checkpoints_kept += keep.len() as u64;
            keep
        };
        let ids = list
            .iter()
            .map(|c| (c.id.as_str(), c.node.parent.as_deref()));
        report.checkpoints_deleted += removal.add_namespace(thread, ns, ids, &keep);
    }
}

/// What one page did: its counts, and how many checkpoints it read.
struct PageDone {
    report: PruneReport,
    checkpoints_read: u64,
}

/// Loads, decides and prunes one page of threads on `target`, in one transaction.
async fn prune_page(
    target: &mut Target,
    serde: &Arc<dyn Serializer>,
    page: &[String],
    options: &PruneOptions,
) -> Result<PageDone> {
    let loaded = load_threads(target, serde, page).await?;
    let mut report = PruneReport::default();
    let mut removal = Removal::default();
    for (thread, cps) in &loaded {
        plan_thread(thread, cps, options, &mut removal, &mut report);
    }
    if !removal.is_empty() {
        let removed = remove(target, &removal, options.dry_run).await?;
        report.writes_deleted += removed.writes;
        report.blobs_deleted += removed.blobs;
        report.bytes_freed += removed.bytes;
    }
    Ok(PageDone {
        report,
        checkpoints_read: loaded.values().map(|c| c.len() as u64).sum(),
    })
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

/// Prunes `store` (`sqlite:PATH`, a file path, or a `postgres://` URL in today's
/// Python layout) by `options`' rules; `keys` read encrypted SQLite checkpoints (to
/// know which channels they store; without them such a checkpoint keeps its whole
/// chain). Rules and guarantees: `docs/store-maintenance.md`.
///
/// # Errors
/// [`ErrorKind::InvalidDate`](crate::ErrorKind::InvalidDate) without any rule; [`ErrorKind::NotAStore`](crate::ErrorKind::NotAStore) for an
/// old layout; the database's errors.
pub async fn prune(store: &str, keys: &StoreKeys, options: &PruneOptions) -> Result<PruneReport> {
    let started = Instant::now();
    if options.keep_latest.is_none() && options.before.is_none() && options.idle_since.is_none() {
        return Err(StoreFault::InvalidDate {
            given: String::new(),
            reason: "prune needs a rule: keep_latest, before or idle_since".to_owned(),
        }
        .into());
    }
    let location = Location::parse(store)?;
    if let Location::Sqlite(path) = &location {
        require_sqlite_file(path)?;
    }
    // A file or database without the saver's tables is refused, not given them.
    let (mut target, _, shown) = open_target(store, false).await?;
    let serde = serializer(keys);
    let mut report = PruneReport {
        operation: "prune",
        store: shown,
        dry_run: options.dry_run,
        ..PruneReport::default()
    };
    let file_before = match &location {
        Location::Sqlite(p) => std::fs::metadata(p).ok().map(|m| m.len()),
        Location::Postgres(_) => None,
    };
    let mut only = options.threads.clone();
    only.sort();
    only.dedup();
    let total = if only.is_empty() {
        thread_count(&target).await?
    } else {
        only.len() as u64
    };
    let mut throttle = Throttle::new(options.max_rows_per_sec);
    // On Postgres two pages are pruned at a time on two connections (the server's
    // work, not the client's, is what a prune waits for: measured on 100,000
    // checkpoints, PG 15, two cores, 3.0 s on one connection). SQLite has one writer.
    let mut second = match &location {
        Location::Postgres(_) => Some(open_target(store, false).await?.0),
        Location::Sqlite(_) => None,
    };
    let mut done = 0u64;
    let mut after: Option<String> = None;
    loop {
        let first = thread_page(&target, &only, after.as_deref()).await?;
        let Some(last) = first.last().cloned() else {
            break;
        };
        let next = match &second {
            Some(_) => thread_page(&target, &only, Some(&last)).await?,
            None => Vec::new(),
        };
        after = Some(next.last().cloned().unwrap_or(last));
        let (a, b) = match second.as_mut() {
            Some(other) if !next.is_empty() => {
                let (a, b) = futures_util::future::join(
                    prune_page(&mut target, &serde, &first, options),
                    prune_page(other, &serde, &next, options),
                )
                .await;
                (a?, Some(b?))
            }
            _ => (
                prune_page(&mut target, &serde, &first, options).await?,
                None,
            ),
        };
        for part in std::iter::once(a).chain(b) {
            throttle.account(part.checkpoints_read).await;
            report.add(&part.report);
        }
        done += (first.len() + next.len()) as u64;
        if let Some(f) = &options.progress {
            f(&Progress {
                operation: "prune",
                column: "threads",
                rows_done: done,
                total_estimate: total.max(done),
                rewritten: report.checkpoints_deleted,
                stage: Stage::Done,
                page: None,
            });
        }
    }
    if let (Target::Sqlite(conn), true, false) = (&target, options.vacuum, options.dry_run) {
        conn.execute_batch("VACUUM; PRAGMA wal_checkpoint(TRUNCATE);")
            .map_err(sq("vacuum"))?;
        if let Location::Sqlite(p) = &location {
            let after = std::fs::metadata(p).map(|m| m.len()).unwrap_or(0);
            report.file_bytes = file_before.map(|b| (b, after));
        }
    }
    report.elapsed_s = started.elapsed().as_secs_f64();
    Ok(report)
}
