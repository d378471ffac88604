//! Retention deletes on Postgres, set-based: the checkpoints a retention rule drops,
//! across any number of threads and namespaces, go in a few statements per chunk of
//! rows, with their pending writes and the blobs no remaining checkpoint references.
//! The saver's own `prune` and `lgcodec store prune` both delete through here.
//!
//! What goes with a checkpoint, as Python's `PostgresSaver.prune` (3.2.0) does it:
//! - its pending writes, by checkpoint id (a run saves a superstep's writes in the
//!   background, where they can commit before their checkpoint does);
//! - the blobs at the channel versions it references that no other checkpoint of its
//!   namespace references (a live writer's new checkpoint references new versions,
//!   which are never among these);
//! - a kept checkpoint whose parent goes is left with no parent (compare-and-swap on
//!   the parent id it was read with).
//!
//! Each statement looks rows up by primary key from an `unnest` of at most
//! [`CHUNK`] keys, so the planner never joins two large sets of a thread's rows; a
//! thread that goes whole is reached by its thread id, up to the newest checkpoint id
//! that goes, in one statement per chunk of threads.
//! The plan ([`Removal`]) is the backend's neutral one, `saver::retention`.

use tokio_postgres::types::Type;

pub(crate) use super::db::{Exec, StatementMode};
pub(crate) use super::sql::Tables;

use super::db::db;
use crate::saver::retention::{part, Blobs, Removal, Removed, CHUNK};
use crate::saver::Result;

/// `jsonb` → itself when it is an object, else `{}`.
fn obj(expr: &str) -> String {
    format!("(CASE WHEN jsonb_typeof({expr}) = 'object' THEN {expr} ELSE '{{}}'::jsonb END)")
}

/// Removes (or with `dry_run` counts) `removal` inside the caller's transaction `tx`.
/// Blobs are decided before their checkpoints go, in the same transaction.
pub(crate) async fn remove<C: Exec + ?Sized>(
    tx: &C,
    mode: StatementMode,
    t: &Tables,
    removal: &Removal,
    dry_run: bool,
    operation: &'static str,
) -> Result<Removed> {
    let mut out = Removed::default();
    let doomed_cte =
        "d AS (SELECT * FROM unnest($1::text[], $2::text[], $3::text[]) AS d(t, n, i))";
    let versions = obj("c.checkpoint -> 'channel_versions'");
    // What the checkpoints that stay in the doomed ones' namespaces reference. The
    // doomed keys are left out with `NOT IN`, which Postgres runs as a hashed subplan
    // (neither side is ever NULL: key columns): the same test as a correlated `NOT
    // EXISTS` was planned as a nested-loop anti join over the CTE, every remaining
    // checkpoint against every doomed key. Measured 2026-12-03 (EXPLAIN ANALYZE, PG 15,
    // a page of 875 doomed checkpoints in 100 threads): 84 ms of the statement's 124 ms
    // in that join, 491,750 rows compared.
    let kept_refs = format!(
        "pairs AS (SELECT DISTINCT t, n FROM d),
referenced AS (SELECT DISTINCT c.thread_id AS t, c.checkpoint_ns AS n, e.key AS ch, e.value AS ver
    FROM pairs p JOIN {cp} c ON c.thread_id = p.t AND c.checkpoint_ns = p.n
    CROSS JOIN LATERAL jsonb_each_text({versions}) e
    WHERE (c.thread_id, c.checkpoint_ns, c.checkpoint_id) NOT IN (SELECT t, n, i FROM d))",
        cp = t.checkpoints,
    );
    let garbage = format!(
        "{doomed_cte},
freed AS (SELECT DISTINCT c.thread_id AS t, c.checkpoint_ns AS n, e.key AS ch, e.value AS ver
    FROM d JOIN {cp} c ON c.thread_id = d.t AND c.checkpoint_ns = d.n AND c.checkpoint_id = d.i
    CROSS JOIN LATERAL jsonb_each_text({versions}) e),
{kept_refs},
garbage AS (SELECT * FROM freed EXCEPT SELECT * FROM referenced)",
        cp = t.checkpoints,
    );
    let match_blob =
        "b.thread_id = g.t AND b.checkpoint_ns = g.n AND b.channel = g.ch AND b.version = g.ver";
    let match_write = "w.thread_id = d.t AND w.checkpoint_ns = d.n AND w.checkpoint_id = d.i";
    let match_cp = "c.thread_id = d.t AND c.checkpoint_ns = d.n AND c.checkpoint_id = d.i";
    // The checkpoints' stored size: their JSONB as text took 41 of a chunk's 148 ms
    // (EXPLAIN ANALYZE, 1,000 checkpoints, PG 15).
    let cp_bytes = "pg_column_size(c.checkpoint) + coalesce(pg_column_size(c.metadata), 0)";
    // A dry run counts with three reads; a removal is one statement per chunk: the
    // writes and the checkpoints deleted, the versions the deleted checkpoints
    // referenced taken from the deleted rows themselves, and the blobs no other
    // checkpoint of their namespace references deleted after them (measured on 100,000
    // checkpoints, PG 15: 1.6 s for the blobs alone as a separate statement, which read
    // the doomed checkpoints a second time).
    let mut statements: Vec<String> = if dry_run {
        vec![
            format!(
                "WITH {garbage} SELECT 0::int8, 0::int8, 0::int8, 0::int8,
    count(*)::int8, coalesce(sum(octet_length(b.blob)), 0)::int8
FROM garbage g JOIN {b} b ON {match_blob}",
                b = t.blobs
            ),
            format!(
                "WITH {doomed_cte} SELECT count(*)::int8, coalesce(sum(octet_length(w.blob)), 0)::int8,
    0::int8, 0::int8, 0::int8, 0::int8
FROM d JOIN {w} w ON {match_write}",
                w = t.writes
            ),
            format!(
                "WITH {doomed_cte} SELECT 0::int8, 0::int8, count(*)::int8,
    coalesce(sum({cp_bytes}), 0)::int8, 0::int8, 0::int8
FROM d JOIN {cp} c ON {match_cp}",
                cp = t.checkpoints
            ),
        ]
    } else {
        vec![format!(
            "WITH {doomed_cte},
w_gone AS (DELETE FROM {w} w USING d WHERE {match_write} RETURNING octet_length(w.blob) AS s),
c_gone AS (DELETE FROM {cp} c USING d WHERE {match_cp}
    RETURNING c.thread_id AS t, c.checkpoint_ns AS n, c.checkpoint -> 'channel_versions' AS v,
    {cp_bytes} AS s),
freed AS (SELECT DISTINCT g.t, g.n, e.key AS ch, e.value AS ver
    FROM c_gone g CROSS JOIN LATERAL jsonb_each_text({gone_versions}) e),
{kept_refs},
garbage AS (SELECT * FROM freed EXCEPT SELECT * FROM referenced),
b_gone AS (DELETE FROM {b} b USING garbage g WHERE {match_blob} RETURNING octet_length(b.blob) AS s)
SELECT (SELECT count(*) FROM w_gone)::int8, (SELECT coalesce(sum(s), 0) FROM w_gone)::int8,
    (SELECT count(*) FROM c_gone)::int8, (SELECT coalesce(sum(s), 0) FROM c_gone)::int8,
    (SELECT count(*) FROM b_gone)::int8, (SELECT coalesce(sum(s), 0) FROM b_gone)::int8",
            w = t.writes,
            cp = t.checkpoints,
            b = t.blobs,
            gone_versions = obj("g.v"),
        )]
    };
    if removal.blobs.is_some() {
        // The caller decided the blobs: the checkpoints and writes alone.
        if dry_run {
            statements.remove(0);
        } else {
            statements = vec![format!(
                "WITH {doomed_cte},
w_gone AS (DELETE FROM {w} w USING d WHERE {match_write} RETURNING octet_length(w.blob) AS s),
c_gone AS (DELETE FROM {cp} c USING d WHERE {match_cp} RETURNING {cp_bytes} AS s)
SELECT (SELECT count(*) FROM w_gone)::int8, (SELECT coalesce(sum(s), 0) FROM w_gone)::int8,
    (SELECT count(*) FROM c_gone)::int8, (SELECT coalesce(sum(s), 0) FROM c_gone)::int8,
    0::int8, 0::int8",
                w = t.writes,
                cp = t.checkpoints,
            )];
        }
    }
    // The checkpoints of threads that go whole are deleted by thread below.
    let keyed = removal.keyed();
    // A dry run deletes nothing: a blob that checkpoints of two chunks reference would
    // be counted by neither (each chunk's statement sees the other's checkpoints
    // still there), so its statements take the whole removal at once.
    let step = if dry_run { keyed.len().max(1) } else { CHUNK };
    let mut start = 0;
    while start < keyed.len() {
        let (threads, namespaces, ids) = keyed.span(start, step);
        let params = [
            (
                &threads as &(dyn tokio_postgres::types::ToSql + Sync),
                Type::TEXT_ARRAY,
            ),
            (&namespaces, Type::TEXT_ARRAY),
            (&ids, Type::TEXT_ARRAY),
        ];
        for sql in &statements {
            let rows = tx.rows(mode, sql, &params).await.map_err(db(operation))?;
            add_counts(&mut out, &rows, operation)?;
        }
        start += step;
    }
    if !dry_run {
        let sql = format!(
            "UPDATE {cp} c SET parent_checkpoint_id = NULL
FROM unnest($1::text[], $2::text[], $3::text[], $4::text[]) AS o(t, n, i, p)
WHERE c.thread_id = o.t AND c.checkpoint_ns = o.n AND c.checkpoint_id = o.i
    AND c.parent_checkpoint_id = o.p",
            cp = t.checkpoints
        );
        let mut start = 0;
        while start < removal.orphaned.len() {
            let (threads, namespaces, ids) = removal.orphaned.chunk(start);
            let parents = part(
                &removal.orphaned_parents,
                start,
                start.saturating_add(CHUNK),
            );
            tx.rows(
                mode,
                &sql,
                &[
                    (&threads, Type::TEXT_ARRAY),
                    (&namespaces, Type::TEXT_ARRAY),
                    (&ids, Type::TEXT_ARRAY),
                    (&parents, Type::TEXT_ARRAY),
                ],
            )
            .await
            .map_err(db(operation))?;
            start += CHUNK;
        }
    }
    if let Some(blobs) = &removal.blobs {
        remove_blobs(tx, mode, t, blobs, dry_run, operation, &mut out).await?;
    }
    // Threads that go whole: by thread id, up to the newest checkpoint id that goes.
    if !removal.whole_threads.is_empty() {
        let sql = whole_threads_sql(t, dry_run);
        for chunk in removal.whole_threads.chunks(CHUNK) {
            let threads: Vec<&str> = chunk.iter().map(|(t, _)| t.as_str()).collect();
            let newest: Vec<&str> = chunk.iter().map(|(_, m)| m.as_str()).collect();
            let rows = tx
                .rows(
                    mode,
                    &sql,
                    &[(&threads, Type::TEXT_ARRAY), (&newest, Type::TEXT_ARRAY)],
                )
                .await
                .map_err(db(operation))?;
            add_counts(&mut out, &rows, operation)?;
        }
    }
    Ok(out)
}

/// Removes (or counts) the blobs the caller decided ([`Blobs`]), [`CHUNK`] a
/// statement, each looked up by its primary key; one referenced by a checkpoint newer
/// than those the caller decided from (a live writer's) stays. Those newer ids are the
/// end of the namespace's primary-key index: the look-up reads only them.
async fn remove_blobs<C: Exec + ?Sized>(
    tx: &C,
    mode: StatementMode,
    t: &Tables,
    blobs: &Blobs,
    dry_run: bool,
    operation: &'static str,
    out: &mut Removed,
) -> Result<()> {
    let g = "g AS (SELECT * FROM unnest($3::text[], $4::text[]) AS g(ch, ver))";
    let on = "b.thread_id = $1 AND b.checkpoint_ns = $2 AND b.channel = g.ch AND b.version = g.ver";
    let sql = if dry_run {
        format!(
            "WITH {g} SELECT 0::int8, 0::int8, 0::int8, 0::int8, count(*)::int8,
    coalesce(sum(octet_length(b.blob)), 0)::int8 FROM g JOIN {b} b ON {on}",
            b = t.blobs
        )
    } else {
        format!(
            "WITH {g},
b_gone AS (DELETE FROM {b} b USING g WHERE {on} AND NOT EXISTS (
    SELECT 1 FROM {cp} c WHERE c.thread_id = $1 AND c.checkpoint_ns = $2
    AND c.checkpoint_id > $5 AND {versions} ->> g.ch = g.ver)
    RETURNING octet_length(b.blob) AS s)
SELECT 0::int8, 0::int8, 0::int8, 0::int8, count(*)::int8, coalesce(sum(s), 0)::int8 FROM b_gone",
            b = t.blobs,
            cp = t.checkpoints,
            versions = obj("c.checkpoint -> 'channel_versions'"),
        )
    };
    let mut start = 0;
    while start < blobs.channels.len() {
        let end = start.saturating_add(CHUNK);
        let channels = part(&blobs.channels, start, end);
        let versions = part(&blobs.versions, start, end);
        let mut params: Vec<(&(dyn tokio_postgres::types::ToSql + Sync), Type)> = vec![
            (&blobs.thread, Type::TEXT),
            (&blobs.ns, Type::TEXT),
            (&channels, Type::TEXT_ARRAY),
            (&versions, Type::TEXT_ARRAY),
        ];
        if !dry_run {
            params.push((&blobs.newest, Type::TEXT));
        }
        let rows = tx.rows(mode, &sql, &params).await.map_err(db(operation))?;
        add_counts(out, &rows, operation)?;
        start = end;
    }
    Ok(())
}

/// Adds a `SELECT` of six counts (writes, their bytes, checkpoints, their bytes, blobs,
/// their bytes) to `out`.
fn add_counts(
    out: &mut Removed,
    rows: &[tokio_postgres::Row],
    operation: &'static str,
) -> Result<()> {
    let Some(row) = rows.first() else {
        return Ok(());
    };
    let get = |i: usize| -> Result<u64> {
        let n: i64 = row.try_get(i).map_err(db(operation))?;
        Ok(u64::try_from(n).unwrap_or(0))
    };
    out.writes += get(0)?;
    out.checkpoints += get(2)?;
    out.blobs += get(4)?;
    out.bytes += get(1)? + get(3)? + get(5)?;
    Ok(())
}

/// One statement for a chunk of threads that go whole (`$1` the threads, `$2` the
/// newest checkpoint id of each that goes): their writes (stored against any
/// checkpoint, or none) and checkpoints up to that id, and the blobs those checkpoints
/// referenced that no newer checkpoint of the thread (a live writer's) references.
/// Each table is reached by thread id, the first column of its key, instead of by one
/// primary-key lookup per checkpoint and channel version: measured on a page of 100
/// idle threads (1,000 checkpoints, 2,000 writes, 1,000 blobs; PG 15,
/// 2026-11-28), 19–24 ms against 65–70 ms. Ids compare bytewise (`COLLATE "C"`), as
/// the newest one was chosen.
///
/// The blobs stay keyed by the versions the deleted checkpoints name: deleting every
/// blob of the thread that no newer checkpoint names took 7.7 ms instead of 13.2 ms for
/// 100 threads (2026-12-05), but it would also take the blobs a writer resuming the
/// thread has stored before committing their checkpoint.
fn whole_threads_sql(t: &Tables, dry_run: bool) -> String {
    let x = "x AS (SELECT * FROM unnest($1::text[], $2::text[]) AS x(t, m))";
    let cp_bytes = "pg_column_size(c.checkpoint) + coalesce(pg_column_size(c.metadata), 0)";
    let cp_cols = format!(
        "c.thread_id AS t, c.checkpoint_ns AS n, c.checkpoint -> 'channel_versions' AS v, {cp_bytes} AS s"
    );
    // A dry run selects the rows a removal deletes, with the same columns.
    let rows = |table: &str, a: &str, cols: &str| {
        let on = format!("{a}.thread_id = x.t AND {a}.checkpoint_id COLLATE \"C\" <= x.m");
        if dry_run {
            format!("SELECT {cols} FROM x JOIN {table} {a} ON {on}")
        } else {
            format!("DELETE FROM {table} {a} USING x WHERE {on} RETURNING {cols}")
        }
    };
    let w_gone = rows(&t.writes, "w", "octet_length(w.blob) AS s");
    let c_gone = rows(&t.checkpoints, "c", &cp_cols);
    let match_blob = "b.thread_id = x.t AND g.t = b.thread_id AND g.n = b.checkpoint_ns \
        AND g.ch = b.channel AND g.ver = b.version";
    let b_gone = if dry_run {
        format!(
            "SELECT octet_length(b.blob) AS s FROM x, garbage g, {b} b WHERE {match_blob}",
            b = t.blobs
        )
    } else {
        format!(
            "DELETE FROM {b} b USING x, garbage g WHERE {match_blob} RETURNING octet_length(b.blob) AS s",
            b = t.blobs
        )
    };
    format!(
        "WITH {x},
w_gone AS ({w_gone}),
c_gone AS ({c_gone}),
freed AS (SELECT DISTINCT g.t, g.n, e.key AS ch, e.value AS ver
    FROM c_gone g CROSS JOIN LATERAL jsonb_each_text({gone_versions}) e),
newer AS (SELECT DISTINCT c.thread_id AS t, c.checkpoint_ns AS n, e.key AS ch, e.value AS ver
    FROM x JOIN {cp} c ON c.thread_id = x.t AND c.checkpoint_id COLLATE \"C\" > x.m
    CROSS JOIN LATERAL jsonb_each_text({versions}) e),
garbage AS (SELECT * FROM freed EXCEPT SELECT * FROM newer),
b_gone AS ({b_gone})
SELECT (SELECT count(*) FROM w_gone)::int8, (SELECT coalesce(sum(s), 0) FROM w_gone)::int8,
    (SELECT count(*) FROM c_gone)::int8, (SELECT coalesce(sum(s), 0) FROM c_gone)::int8,
    (SELECT count(*) FROM b_gone)::int8, (SELECT coalesce(sum(s), 0) FROM b_gone)::int8",
        cp = t.checkpoints,
        gone_versions = obj("g.v"),
        versions = obj("c.checkpoint -> 'channel_versions'"),
    )
}
