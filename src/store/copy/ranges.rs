//! Rows of a store read by ranges of keys instead of key by key: from a SQLite store a
//! thread at a time, what a [`copy`](super::copy) reads from a SQLite source (the rows
//! it carries) and from a SQLite target (the rows it reads back), one statement per
//! thread's run of a batch instead of one per checkpoint; from a Postgres source a run
//! of the cursor's keys at a time ([`runs`]), their pending writes in one statement
//! ([`write_rows_of`]).

use rusqlite::types::ValueRef as Cell;

use super::super::backend::ph;
use super::super::raw::{cell_bytes, pg, prepared, Raw, Result};
use crate::saver::sqlite::{StoredRow, StoredWrite};

/// [`by_ranges`]'s statement for the `checkpoints` rows: the key's namespace and id,
/// then the parent id, type, checkpoint and metadata.
pub(super) const CHECKPOINTS_BY_RANGE: &str =
    "SELECT checkpoint_ns, checkpoint_id, parent_checkpoint_id, type, checkpoint, metadata \
     FROM checkpoints WHERE thread_id = ?1 AND (checkpoint_ns, checkpoint_id) >= (?2, ?3) \
     AND (checkpoint_ns, checkpoint_id) <= (?4, ?5) ORDER BY checkpoint_ns, checkpoint_id";

/// [`by_ranges`]'s statement for the `writes` rows, in `get_tuple`'s order: the key's
/// namespace and id, then task id, task path (`task_path`: the column, or what stands
/// for it in a layout without one), idx, channel, type and value.
pub(super) fn writes_by_range(task_path: &str) -> String {
    format!(
        "SELECT checkpoint_ns, checkpoint_id, task_id, {task_path}, idx, channel, type, value \
         FROM writes WHERE thread_id = ?1 AND (checkpoint_ns, checkpoint_id) >= (?2, ?3) \
         AND (checkpoint_ns, checkpoint_id) <= (?4, ?5) \
         ORDER BY checkpoint_ns, checkpoint_id, {task_path}, task_id, idx"
    )
}

/// A `writes` row as stored, its columns from `first` on: task id, task path, idx,
/// channel, type and value ([`writes_by_range`] has them from column 2).
pub(super) fn stored_write(r: &rusqlite::Row<'_>, first: usize) -> rusqlite::Result<StoredWrite> {
    Ok(StoredWrite {
        task_id: r.get(first)?,
        task_path: r.get(first + 1)?,
        idx: r.get(first + 2)?,
        channel: r.get(first + 3)?,
        type_tag: r.get(first + 4)?,
        value: cell_bytes(r, first + 5)?,
    })
}

/// Whether the `checkpoints` row `r` ([`CHECKPOINTS_BY_RANGE`]'s columns) holds
/// `row`, compared in place: `true` only where reading it into a [`StoredRow`] would
/// give `row` (a cell of another storage class than those reads take is `false`).
pub(super) fn row_is(r: &rusqlite::Row<'_>, row: &StoredRow) -> rusqlite::Result<bool> {
    Ok(text_is(r.get_ref(2)?, row.parent.as_deref())
        && text_is(r.get_ref(3)?, row.type_tag.as_deref())
        && bytes_are(r.get_ref(4)?, row.checkpoint.as_deref())
        && bytes_are(r.get_ref(5)?, row.metadata.as_deref()))
}

/// Whether the `writes` row `r` ([`stored_write`]'s columns from `first`) holds `w`,
/// compared in place as [`row_is`] compares.
pub(super) fn write_is(
    r: &rusqlite::Row<'_>,
    first: usize,
    w: &StoredWrite,
) -> rusqlite::Result<bool> {
    Ok(text_is(r.get_ref(first)?, Some(&w.task_id))
        && text_is(r.get_ref(first + 1)?, Some(&w.task_path))
        && matches!(r.get_ref(first + 2)?, Cell::Integer(n) if n == w.idx)
        && text_is(r.get_ref(first + 3)?, Some(&w.channel))
        && text_is(r.get_ref(first + 4)?, w.type_tag.as_deref())
        && bytes_are(r.get_ref(first + 5)?, w.value.as_deref()))
}

/// A text cell (or NULL) that reads as `want`.
fn text_is(cell: Cell<'_>, want: Option<&str>) -> bool {
    match (cell, want) {
        (Cell::Null, None) => true,
        (Cell::Text(t), Some(w)) => t == w.as_bytes(),
        _ => false,
    }
}

/// A text or BLOB cell (or NULL) whose bytes are `want`.
fn bytes_are(cell: Cell<'_>, want: Option<&[u8]>) -> bool {
    match (cell, want) {
        (Cell::Null, None) => true,
        (Cell::Text(b) | Cell::Blob(b), Some(w)) => b == w,
        _ => false,
    }
}

/// Reads rows of a SQLite table a thread at a time, by a range of keys: `sql` takes
/// the thread (`?1`) and the lowest and highest `(checkpoint_ns, checkpoint_id)` of
/// its run of `keys` (`?2, ?3` and `?4, ?5`), and returns rows whose first two columns
/// are that namespace and id, in key order. `each` gets the position in `keys` of a
/// row's key, its id and the row; a row whose key `keys` does not hold is passed over.
/// `keys` are in the file's (bytewise) order, so each thread's run is every key of
/// that range that the run holds.
pub(super) fn by_ranges<K: AsRef<str>>(
    conn: &rusqlite::Connection,
    sql: &str,
    keys: &[(K, K, K)],
    mut each: impl FnMut(usize, &str, &rusqlite::Row<'_>) -> rusqlite::Result<()>,
) -> rusqlite::Result<()> {
    let mut at = 0;
    for run in keys.chunk_by(|a, b| a.0.as_ref() == b.0.as_ref()) {
        let (Some(first), Some(last)) = (run.first(), run.last()) else {
            continue;
        };
        let range = [&first.0, &first.1, &first.2, &last.1, &last.2].map(|k| k.as_ref());
        let mut next = 0;
        let mut stmt = conn.prepare_cached(sql)?;
        let mut found = stmt.query(range)?;
        while let Some(r) = found.next()? {
            let (Cell::Text(ns), Cell::Text(id)) = (r.get_ref(0)?, r.get_ref(1)?) else {
                continue;
            };
            let (Ok(ns), Ok(id)) = (std::str::from_utf8(ns), std::str::from_utf8(id)) else {
                continue;
            };
            if let Some(i) = position(run, &mut next, (ns, id)) {
                each(at + i, id, r)?;
            }
        }
        at += run.len();
    }
    Ok(())
}

/// The position in `run` (keys of one thread, ascending) of the key `(ns, id)`, looked
/// for from `next` on and moving it there: rows read in key order are placed in one
/// pass. `None` for a key the run does not hold.
fn position<K: AsRef<str>>(
    run: &[(K, K, K)],
    next: &mut usize,
    (ns, id): (&str, &str),
) -> Option<usize> {
    while let Some((_, n, i)) = run.get(*next) {
        match (n.as_ref(), i.as_ref()).cmp(&(ns, id)) {
            std::cmp::Ordering::Less => *next += 1,
            std::cmp::Ordering::Equal => return Some(*next),
            std::cmp::Ordering::Greater => return None,
        }
    }
    None
}

pub(super) async fn write_rows(
    raw: &Raw,
    thread: &str,
    ns: &str,
    id: &str,
) -> Result<Vec<StoredWrite>> {
    let c = raw.cols();
    let sqlite = raw.is_sqlite();
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
    raw.rows("copy", &sql, &[thread.into(), ns.into(), id.into()])
        .await?
        .iter()
        .map(|r| {
            Ok(StoredWrite {
                task_id: r.text(0)?,
                task_path: r.text(1)?,
                idx: r.int(2)?,
                channel: r.text(3)?,
                type_tag: r.opt_text(4)?,
                value: r.bytes(5),
            })
        })
        .collect()
}

/// The pending write rows of each of `keys`, in order, each in [`write_rows`]'s order:
/// from Postgres in one statement, from SQLite checkpoint by checkpoint. (The layout's
/// column expressions are unqualified: only the writes table has those names.)
///
/// `keys` are a run of the source's keys in its order ([`runs`]): from
/// Postgres they are read as the range from the first to the last, of the run's
/// threads (an index range scan), the rows of checkpoints that are not among `keys`
/// left out. Measured 2026-12-06 (100,000 checkpoints, 200,000 writes, Postgres →
/// SQLite, the server's statement log): looked up key by key, 128 keys a statement,
/// the server took 477 ms to run them, 140 ms to bind their three arrays of keys and
/// 130 ms to parse the statement each time.
pub(super) async fn write_rows_of(
    raw: &Raw,
    keys: &[(String, String, String)],
) -> Result<Vec<Vec<StoredWrite>>> {
    let Raw::Postgres {
        client, statements, ..
    } = raw
    else {
        let mut out = Vec::with_capacity(keys.len());
        for (t, ns, id) in keys {
            out.push(write_rows(raw, t, ns, id).await?);
        }
        return Ok(out);
    };
    let (Some(first), Some(last)) = (keys.first(), keys.last()) else {
        return Ok(Vec::new());
    };
    let c = raw.cols();
    let sql = format!(
        "SELECT thread_id, {ns}, {wid}, task_id, {path}, idx, channel, {ty}, blob FROM {table} \
         WHERE (thread_id, {ns}, {wid}) >= ($1, $2, $3) AND (thread_id, {ns}, {wid}) <= ($4, $5, $6) \
         AND thread_id = ANY($7::text[]) ORDER BY thread_id, {ns}, {wid}, {path}, task_id, idx",
        path = c.w_path,
        ty = c.w_ty,
        table = raw.writes_table(),
        ns = c.ns,
        wid = c.w_id,
    );
    let at: std::collections::HashMap<(&str, &str, &str), usize> = keys
        .iter()
        .enumerate()
        .map(|(i, (t, ns, id))| ((t.as_str(), ns.as_str(), id.as_str()), i))
        .collect();
    let mut threads: Vec<&str> = keys.iter().map(|k| k.0.as_str()).collect();
    threads.dedup();
    let statement = prepared(client, statements, &sql).await?;
    let rows = client
        .query(
            &statement,
            &[
                &first.0, &first.1, &first.2, &last.0, &last.1, &last.2, &threads,
            ],
        )
        .await
        .map_err(pg("copy"))?;
    let mut out: Vec<Vec<StoredWrite>> = keys.iter().map(|_| Vec::new()).collect();
    for r in &rows {
        let key: (&str, &str, &str) = (
            r.try_get(0).map_err(pg("copy"))?,
            r.try_get(1).map_err(pg("copy"))?,
            r.try_get(2).map_err(pg("copy"))?,
        );
        // A checkpoint inside the range that is not one of `keys`: not asked for.
        let Some(slot) = at.get(&key).and_then(|&i| out.get_mut(i)) else {
            continue;
        };
        slot.push(StoredWrite {
            task_id: r.try_get(3).map_err(pg("copy"))?,
            task_path: r.try_get(4).map_err(pg("copy"))?,
            idx: i64::from(r.try_get::<_, i32>(5).map_err(pg("copy"))?),
            channel: r.try_get(6).map_err(pg("copy"))?,
            type_tag: r.try_get(7).map_err(pg("copy"))?,
            value: r.try_get(8).map_err(pg("copy"))?,
        });
    }
    Ok(out)
}

/// `keys`, as the cursor gave them, in reads of `size` at most, each a run of the
/// source's keys in its own order ([`read_pending`](super::source::read_pending)): the cursor's pages are in the
/// table's order when it reads every thread (`every`); of threads named, each thread's
/// keys are, but the threads come in the order given, so a read then holds one
/// thread's keys.
pub(super) fn runs(
    keys: &[(String, String, String)],
    size: usize,
    every: bool,
) -> Vec<&[(String, String, String)]> {
    let size = size.max(1);
    if every {
        return keys.chunks(size).collect();
    }
    keys.chunk_by(|a, b| a.0 == b.0)
        .flat_map(|thread| thread.chunks(size))
        .collect()
}
