//! The extended operations: `prune`, `delete_for_runs`, `copy_thread`, and a set-based
//! `get_delta_channel_history`.
//!
//! The deleting operations never remove a checkpoint that a kept one needs to rebuild a
//! `DeltaChannel` (every ancestor up to the nearest one storing a value for each
//! channel of the kept checkpoint's `counters_since_delta_snapshot`), so unlike Python's
//! `prune`, which refuses DeltaChannel threads, they handle them.

use std::collections::{BTreeSet, HashMap, HashSet};

use indexmap::IndexMap;
use tokio_postgres::types::Type;
use tokio_postgres::IsolationLevel;

use super::db::{db, Exec};
use super::jsonb;
use super::retention;
use super::PostgresSaver;
use crate::saver::codec::{unreadable, RowCodec, RowKey, RowKind};
use crate::saver::delta::finish;
use crate::saver::retention::Removal;
use crate::saver::traits::PruneStrategy;
use crate::saver::types::{CheckpointConfig, DeltaChannelHistory, PendingWrite};
use crate::saver::Result;
use crate::value::Value;

/// `jsonb` → itself when it is an object, else `{}` (so set functions never fail on a
/// malformed row).
fn obj(expr: &str) -> String {
    format!("(CASE WHEN jsonb_typeof({expr}) = 'object' THEN {expr} ELSE '{{}}'::jsonb END)")
}

/// What the keep/delete decision needs about one checkpoint.
struct Node {
    parent: Option<String>,
    run_id: Option<String>,
    /// Channels of `counters_since_delta_snapshot`.
    counters: Vec<String>,
    /// Channels it stores a value for (inline, or a non-`empty` blob at its version).
    stored: HashSet<String>,
    /// `v < 4` with a parent: reads its pending sends from the parent's writes.
    reads_parent_sends: bool,
    /// Has `__pregel_tasks` writes (pending sends a `v < 4` child reads).
    has_sends: bool,
}

type Graph = IndexMap<(String, String), HashMap<String, Node>>;

/// The checkpoint graph of the threads (`None` = every thread), by (thread, ns).
async fn load_graph<C: Exec + ?Sized>(
    saver: &PostgresSaver,
    client: &C,
    threads: Option<&[String]>,
    operation: &'static str,
) -> Result<Graph> {
    let t = &saver.sql.tables;
    let versions = obj("c.checkpoint -> 'channel_versions'");
    let values = obj("c.checkpoint -> 'channel_values'");
    let counters = obj("c.metadata -> 'counters_since_delta_snapshot'");
    // Each version's blob looked up by the blobs' key (`OFFSET 0`): the planner made it
    // a hash join over every blob of the thread, for each checkpoint, so that a
    // thread's prune grew with the square of its length (2,002 scans of the blobs for
    // a thread of 2,000 checkpoints; as the store's reads, `store/postgres/checkpoints.rs`).
    let sql = format!(
        "SELECT c.thread_id, c.checkpoint_ns, c.checkpoint_id, c.parent_checkpoint_id,
    c.metadata ->> 'run_id',
    ARRAY(SELECT jsonb_object_keys({counters})),
    ARRAY(SELECT jsonb_object_keys({values}) UNION
        SELECT v.key FROM jsonb_each_text({versions}) v WHERE EXISTS (
            SELECT 1 FROM {blobs} b WHERE b.thread_id = c.thread_id
            AND b.checkpoint_ns = c.checkpoint_ns AND b.channel = v.key
            AND b.version = v.value AND b.type <> 'empty' OFFSET 0)),
    CASE WHEN jsonb_typeof(c.checkpoint -> 'v') = 'number'
        THEN (c.checkpoint ->> 'v')::numeric < 4 ELSE false END,
    EXISTS (SELECT 1 FROM {w} w WHERE w.thread_id = c.thread_id
        AND w.checkpoint_ns = c.checkpoint_ns AND w.checkpoint_id = c.checkpoint_id
        AND w.channel = '__pregel_tasks')
FROM {cp} c WHERE ($1::text[] IS NULL OR c.thread_id = ANY($1))",
        blobs = t.blobs,
        cp = t.checkpoints,
        w = t.writes,
    );
    let rows = client
        .rows(saver.settings.mode, &sql, &[(&threads, Type::TEXT_ARRAY)])
        .await
        .map_err(db(operation))?;
    let mut graph = Graph::new();
    for row in rows {
        let get = |i| row.try_get::<_, String>(i).map_err(db(operation));
        let (thread, ns, id) = (get(0)?, get(1)?, get(2)?);
        let parent: Option<String> = row.try_get(3).map_err(db(operation))?;
        let parent = parent.filter(|p| !p.is_empty());
        let old: bool = row.try_get(7).map_err(db(operation))?;
        let node = Node {
            reads_parent_sends: old && parent.is_some(),
            has_sends: row.try_get(8).map_err(db(operation))?,
            parent,
            run_id: row.try_get(4).map_err(db(operation))?,
            counters: row.try_get(5).map_err(db(operation))?,
            stored: row
                .try_get::<_, Vec<String>>(6)
                .map_err(db(operation))?
                .into_iter()
                .collect(),
        };
        graph.entry((thread, ns)).or_default().insert(id, node);
    }
    Ok(graph)
}

/// `keep` plus the ancestors the kept checkpoints need: up to the nearest ancestor
/// storing each delta channel, and the parent a `v < 4` checkpoint reads sends from.
fn with_needed_ancestors(
    nodes: &HashMap<String, Node>,
    keep: &BTreeSet<String>,
) -> BTreeSet<String> {
    let mut out = keep.clone();
    for id in keep {
        let Some(node) = nodes.get(id) else { continue };
        if let Some(p) = node.parent.as_ref().filter(|_| node.reads_parent_sends) {
            if nodes.get(p).is_some_and(|n| n.has_sends) {
                out.insert(p.clone());
            }
        }
        let mut remaining: HashSet<&str> = node
            .counters
            .iter()
            .map(String::as_str)
            .filter(|ch| !node.stored.contains(*ch))
            .collect();
        let mut visited: HashSet<&str> = HashSet::from([id.as_str()]);
        let mut cursor = node.parent.as_deref();
        while let Some(pid) = cursor {
            if remaining.is_empty() || !visited.insert(pid) {
                break;
            }
            let Some(parent) = nodes.get(pid) else { break };
            out.insert(pid.to_owned());
            remaining.retain(|ch| !parent.stored.contains(*ch));
            cursor = parent.parent.as_deref();
        }
    }
    out
}

/// Runs `decide` over the graph of `threads` in one REPEATABLE READ transaction and
/// removes, per namespace, every checkpoint not in the returned keep set.
async fn retain(
    saver: &PostgresSaver,
    threads: Option<&[String]>,
    operation: &'static str,
    decide: impl Fn(&HashMap<String, Node>) -> Option<BTreeSet<String>>,
) -> Result<()> {
    let mut client = saver.client(operation).await?;
    let tx = client
        .build_transaction()
        .isolation_level(IsolationLevel::RepeatableRead)
        .start()
        .await
        .map_err(db(operation))?;
    let graph = load_graph(saver, &tx, threads, operation).await?;
    let mut removal = Removal::default();
    for ((thread, ns), nodes) in &graph {
        let Some(keep) = decide(nodes) else { continue };
        let keep = with_needed_ancestors(nodes, &keep);
        let ids = nodes
            .iter()
            .map(|(id, node)| (id.as_str(), node.parent.as_deref()));
        removal.add_namespace(thread, ns, ids, &keep);
    }
    if !removal.is_empty() {
        retention::remove(
            &tx,
            saver.settings.mode,
            &saver.sql.tables,
            &removal,
            false,
            operation,
        )
        .await?;
    }
    tx.commit().await.map_err(db(operation))
}

pub(crate) async fn prune(
    saver: &PostgresSaver,
    thread_ids: &[String],
    strategy: PruneStrategy,
) -> Result<()> {
    if thread_ids.is_empty() {
        return Ok(());
    }
    match strategy {
        PruneStrategy::Delete => {
            let t = &saver.sql.tables;
            let client = saver.client("prune").await?;
            client
                .rows(
                    saver.settings.mode,
                    &format!(
                        "WITH c AS (DELETE FROM {} WHERE thread_id = ANY($1)),
b AS (DELETE FROM {} WHERE thread_id = ANY($1))
DELETE FROM {} WHERE thread_id = ANY($1)",
                        t.checkpoints, t.blobs, t.writes
                    ),
                    &[(&thread_ids, Type::TEXT_ARRAY)],
                )
                .await
                .map_err(db("prune"))?;
            Ok(())
        }
        // The latest checkpoint of every namespace (and what it needs).
        _ => {
            retain(saver, Some(thread_ids), "prune", |nodes| {
                nodes
                    .keys()
                    .max()
                    .map(|latest| BTreeSet::from([latest.clone()]))
            })
            .await
        }
    }
}

pub(crate) async fn delete_for_runs(saver: &PostgresSaver, run_ids: &[String]) -> Result<()> {
    if run_ids.is_empty() {
        return Ok(());
    }
    let runs: HashSet<&str> = run_ids.iter().map(String::as_str).collect();
    retain(saver, None, "delete_for_runs", |nodes| {
        let hit = nodes
            .values()
            .any(|n| n.run_id.as_deref().is_some_and(|r| runs.contains(r)));
        hit.then(|| {
            nodes
                .iter()
                .filter(|(_, n)| !n.run_id.as_deref().is_some_and(|r| runs.contains(r)))
                .map(|(id, _)| id.clone())
                .collect()
        })
    })
    .await
}

pub(crate) async fn copy_thread(saver: &PostgresSaver, source: &str, target: &str) -> Result<()> {
    if source == target {
        return Ok(());
    }
    let t = &saver.sql.tables;
    let client = saver.client("copy_thread").await?;
    client
        .rows(
            saver.settings.mode,
            &format!(
                "WITH c AS (
    INSERT INTO {cp} (thread_id, checkpoint_ns, checkpoint_id, parent_checkpoint_id, type, checkpoint, metadata)
    SELECT $2, checkpoint_ns, checkpoint_id, parent_checkpoint_id, type, checkpoint, metadata
    FROM {cp} WHERE thread_id = $1 ON CONFLICT DO NOTHING),
b AS (
    INSERT INTO {blobs} (thread_id, checkpoint_ns, channel, version, type, blob)
    SELECT $2, checkpoint_ns, channel, version, type, blob
    FROM {blobs} WHERE thread_id = $1 ON CONFLICT DO NOTHING)
INSERT INTO {w} (thread_id, checkpoint_ns, checkpoint_id, task_id, task_path, idx, channel, type, blob)
SELECT $2, checkpoint_ns, checkpoint_id, task_id, task_path, idx, channel, type, blob
FROM {w} WHERE thread_id = $1 ON CONFLICT DO NOTHING",
                cp = t.checkpoints,
                blobs = t.blobs,
                w = t.writes
            ),
            &[(&source, Type::TEXT), (&target, Type::TEXT)],
        )
        .await
        .map_err(db("copy_thread"))?;
    Ok(())
}

/// Chain rows fetched per query: the walk stops early once every channel is seeded.
const CHAIN_PAGE: i64 = 1024;

/// The delta-channel history in a few queries: the parent chain from the target,
/// paged by a recursive query (each page continues from the last id read, so chains
/// of any length work), with, per checkpoint, which requested channels it stores;
/// then the chain's writes to those channels and the seed values in one query each.
pub(crate) async fn delta_channel_history(
    saver: &PostgresSaver,
    config: &CheckpointConfig,
    channels: &[String],
) -> Result<IndexMap<String, DeltaChannelHistory>> {
    const OP: &str = "get_delta_channel_history";
    let mut collected: IndexMap<String, Vec<PendingWrite>> =
        channels.iter().map(|c| (c.clone(), Vec::new())).collect();
    if channels.is_empty() {
        return Ok(IndexMap::new());
    }
    let thread = config.require_thread_id(OP)?;
    let ns = config.ns();
    let t = &saver.sql.tables;
    let client = saver.client(OP).await?;
    // One decompression budget for every write and seed this call decodes.
    let budget = saver.call_budget();
    let codec = RowCodec::new(&*saver.settings.serde);
    // The target: the given id, or the latest.
    let target_rows = client
        .rows(
            saver.settings.mode,
            &format!(
                "SELECT parent_checkpoint_id FROM {} WHERE thread_id = $1 AND checkpoint_ns = $2
    AND ($3::text IS NULL OR checkpoint_id = $3) ORDER BY checkpoint_id DESC LIMIT 1",
                t.checkpoints
            ),
            &[
                (&thread, Type::TEXT),
                (&ns, Type::TEXT),
                (
                    &config.checkpoint_id.as_deref().filter(|i| !i.is_empty()),
                    Type::TEXT,
                ),
            ],
        )
        .await
        .map_err(db(OP))?;
    let mut cursor: Option<String> = match target_rows.first() {
        Some(r) => r.try_get::<_, Option<String>>(0).map_err(db(OP))?,
        None => None,
    }
    .filter(|p| !p.is_empty());
    let chain_sql = format!(
        "WITH RECURSIVE chain(checkpoint_id, parent_checkpoint_id, depth) AS (
    SELECT checkpoint_id, parent_checkpoint_id, 0 FROM {cp}
    WHERE thread_id = $1 AND checkpoint_ns = $2 AND checkpoint_id = $3
    UNION ALL
    SELECT c.checkpoint_id, c.parent_checkpoint_id, chain.depth + 1 FROM chain
    JOIN {cp} c ON c.thread_id = $1 AND c.checkpoint_ns = $2
        AND c.checkpoint_id = chain.parent_checkpoint_id
    WHERE chain.depth < $5
)
SELECT chain.checkpoint_id, chain.parent_checkpoint_id,
    ARRAY(SELECT ch FROM unnest($4::text[]) ch WHERE {values} ? ch OR EXISTS (
        SELECT 1 FROM {blobs} b WHERE b.thread_id = $1 AND b.checkpoint_ns = $2
        AND b.channel = ch AND b.version = x.checkpoint -> 'channel_versions' ->> ch
        AND b.type <> 'empty'))
FROM chain JOIN {cp} x ON x.thread_id = $1 AND x.checkpoint_ns = $2
    AND x.checkpoint_id = chain.checkpoint_id
ORDER BY chain.depth",
        cp = t.checkpoints,
        blobs = t.blobs,
        values = obj("x.checkpoint -> 'channel_values'"),
    );
    // Walk: chain ids newest first; each channel's chain ends at its seed checkpoint.
    let mut remaining: Vec<String> = channels.to_vec();
    let mut chain_of: IndexMap<String, Vec<String>> =
        channels.iter().map(|c| (c.clone(), Vec::new())).collect();
    let mut seed_at: IndexMap<String, String> = IndexMap::new();
    let mut visited: HashSet<String> = HashSet::new();
    'pages: while let Some(start) = cursor.take() {
        let rows = client
            .rows(
                saver.settings.mode,
                &chain_sql,
                &[
                    (&thread, Type::TEXT),
                    (&ns, Type::TEXT),
                    (&start, Type::TEXT),
                    (&remaining, Type::TEXT_ARRAY),
                    (&(CHAIN_PAGE - 1), Type::INT8),
                ],
            )
            .await
            .map_err(db(OP))?;
        let full = i64::try_from(rows.len()).unwrap_or(i64::MAX) >= CHAIN_PAGE;
        for row in &rows {
            let id: String = row.try_get(0).map_err(db(OP))?;
            let parent: Option<String> = row.try_get(1).map_err(db(OP))?;
            let stored: Vec<String> = row.try_get(2).map_err(db(OP))?;
            if !visited.insert(id.clone()) {
                break 'pages;
            }
            for ch in &remaining {
                if let Some(c) = chain_of.get_mut(ch) {
                    c.push(id.clone());
                }
            }
            for ch in stored {
                if remaining.contains(&ch) {
                    remaining.retain(|c| *c != ch);
                    seed_at.insert(ch, id.clone());
                }
            }
            if remaining.is_empty() {
                break 'pages;
            }
            cursor = parent.filter(|p| !p.is_empty());
        }
        if !full {
            break;
        }
    }
    // The chain's writes to the requested channels, in pending-write order.
    let all_ids: Vec<&String> = {
        let mut s: Vec<&String> = chain_of.values().flatten().collect();
        s.sort();
        s.dedup();
        s
    };
    let mut writes_by: HashMap<(String, String), Vec<PendingWrite>> = HashMap::new();
    if !all_ids.is_empty() {
        let rows = client
            .rows(
                saver.settings.mode,
                &format!(
                    r#"SELECT checkpoint_id, task_id, channel, type, blob, idx FROM {}
WHERE thread_id = $1 AND checkpoint_ns = $2 AND checkpoint_id = ANY($3) AND channel = ANY($4)
ORDER BY checkpoint_id, task_path COLLATE "C", task_id COLLATE "C", idx"#,
                    t.writes
                ),
                &[
                    (&thread, Type::TEXT),
                    (&ns, Type::TEXT),
                    (&all_ids, Type::TEXT_ARRAY),
                    (&channels, Type::TEXT_ARRAY),
                ],
            )
            .await
            .map_err(db(OP))?;
        for row in rows {
            let id: String = row.try_get(0).map_err(db(OP))?;
            let task_id: String = row.try_get(1).map_err(db(OP))?;
            let channel: String = row.try_get(2).map_err(db(OP))?;
            let tag: Option<String> = row.try_get(3).map_err(db(OP))?;
            let data: Vec<u8> = row.try_get(4).map_err(db(OP))?;
            let idx: i32 = row.try_get(5).map_err(db(OP))?;
            let write = budget.scope(|| {
                codec.write(
                    |task, _| RowKey::new(thread, ns, &id).write_location(task, idx.into()),
                    task_id,
                    channel.clone(),
                    Some(tag.as_deref().unwrap_or_default()),
                    &data,
                )
            })?;
            writes_by.entry((id, channel)).or_default().push(write);
        }
    }
    for (ch, ids) in &chain_of {
        if let Some(list) = collected.get_mut(ch) {
            for id in ids {
                if let Some(ws) = writes_by.get(&(id.clone(), ch.clone())) {
                    list.extend(ws.iter().rev().cloned());
                }
            }
        }
    }
    // Seeds: a non-empty blob at the seed checkpoint's version wins over the inline value.
    let mut seeds: IndexMap<String, Value> = IndexMap::new();
    if !seed_at.is_empty() {
        let seed_channels: Vec<&String> = seed_at.keys().collect();
        let seed_ids: Vec<&String> = seed_at.values().collect();
        let rows = client
            .rows(
                saver.settings.mode,
                &format!(
                    "SELECT s.ch, x.checkpoint_id, x.checkpoint -> 'channel_values' -> s.ch,
    b.type, b.blob
FROM unnest($3::text[], $4::text[]) AS s(ch, id)
JOIN {cp} x ON x.thread_id = $1 AND x.checkpoint_ns = $2 AND x.checkpoint_id = s.id
LEFT JOIN {blobs} b ON b.thread_id = $1 AND b.checkpoint_ns = $2 AND b.channel = s.ch
    AND b.version = x.checkpoint -> 'channel_versions' ->> s.ch AND b.type <> 'empty'",
                    cp = t.checkpoints,
                    blobs = t.blobs,
                ),
                &[
                    (&thread, Type::TEXT),
                    (&ns, Type::TEXT),
                    (&seed_channels, Type::TEXT_ARRAY),
                    (&seed_ids, Type::TEXT_ARRAY),
                ],
            )
            .await
            .map_err(db(OP))?;
        for row in rows {
            let ch: String = row.try_get(0).map_err(db(OP))?;
            let id: String = row.try_get(1).map_err(db(OP))?;
            let inline: Option<String> = row
                .try_get::<_, Option<RawJson>>(2)
                .map_err(db(OP))?
                .map(|r| r.0);
            let tag: Option<String> = row.try_get(3).map_err(db(OP))?;
            let data: Option<Vec<u8>> = row.try_get(4).map_err(db(OP))?;
            let loc = || {
                RowKey::new(thread, ns, &id)
                    .location()
                    .with_detail(format!("channel {ch:?}"))
            };
            let value = match (tag, inline) {
                (Some(tag), _) => budget.scope(|| {
                    codec.value(
                        RowKind::Blob,
                        loc,
                        Some(&tag),
                        data.as_deref().unwrap_or_default(),
                    )
                })?,
                (None, Some(_)) if saver.refuses_inline() => {
                    return Err(unreadable(
                        RowKind::Checkpoint,
                        loc(),
                        crate::crypto::CryptoFault::PlaintextRefused {
                            type_tag: super::rows::INLINE_TAG.to_owned(),
                        },
                    ))
                }
                (None, Some(text)) => jsonb::read(&text, || loc().to_string())?,
                (None, None) => continue,
            };
            seeds.insert(ch, value);
        }
    }
    Ok(finish(collected, seeds))
}

/// A `jsonb` column read as its text (binary format: a version byte, then the text).
struct RawJson(String);

impl<'a> tokio_postgres::types::FromSql<'a> for RawJson {
    fn from_sql(
        _: &Type,
        raw: &'a [u8],
    ) -> std::result::Result<Self, Box<dyn std::error::Error + Sync + Send>> {
        match raw.split_first() {
            Some((1, text)) => Ok(RawJson(std::str::from_utf8(text)?.to_owned())),
            _ => Err("unsupported jsonb binary format version".into()),
        }
    }

    fn accepts(ty: &Type) -> bool {
        *ty == Type::JSONB
    }
}
