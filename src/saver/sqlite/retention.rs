//! Retention deletes on SQLite: a [`Removal`] planned by `saver::retention`, deleted
//! (or with `dry_run` counted) in the caller's transaction, each statement prepared
//! once per connection. The saver's own `prune` and `lgcodec store prune` both delete
//! through here.

use rusqlite::{params, Connection, ToSql};

use crate::saver::retention::{Removal, Removed};

const PK: &str = "thread_id = ?1 AND checkpoint_ns = ?2 AND checkpoint_id = ?3";

/// How many rows `sql` (a `SELECT` or a `DELETE … RETURNING` of one size column)
/// gives, and the sum of their sizes.
fn sizes(conn: &Connection, sql: &str, p: impl rusqlite::Params) -> rusqlite::Result<(u64, u64)> {
    let mut stmt = conn.prepare_cached(sql)?;
    let mut rows = stmt.query(p)?;
    let (mut n, mut bytes) = (0u64, 0u64);
    while let Some(row) = rows.next()? {
        let b: Option<i64> = row.get(0)?;
        n += 1;
        bytes += b.and_then(|b| u64::try_from(b).ok()).unwrap_or(0);
    }
    Ok((n, bytes))
}

/// Removes (or counts) `removal` in `tx`, a connection inside the caller's
/// transaction.
pub(crate) fn remove(
    tx: &Connection,
    removal: &Removal,
    dry_run: bool,
) -> rusqlite::Result<Removed> {
    let mut out = Removed::default();
    // Sizes in bytes (a TEXT value's UTF-8 bytes) as the record header gives them:
    // `octet_length` does not load the value, where `length(CAST(… AS BLOB))` read
    // every deleted value whole, overflow pages and all. Measured 2026-12-03, `prune
    // --before` deleting 60,851 of 100,000 checkpoints (benches/store_scale.sh's
    // fixture): 2.20 s with the cast, 1.58–1.66 s without.
    let cp_bytes = "octet_length(checkpoint) + coalesce(octet_length(metadata), 0)";
    let write_bytes = "octet_length(value)";
    // A removal deletes and measures a table's rows in one statement (`RETURNING`); a
    // dry run counts the same rows. Each (checkpoints, writes) pair of statements
    // adds to `out` for one key or one thread.
    let pair = |cond: &str| {
        let rows = |table: &str, size: &str| {
            if dry_run {
                format!("SELECT {size} FROM {table} WHERE {cond}")
            } else {
                format!("DELETE FROM {table} WHERE {cond} RETURNING {size}")
            }
        };
        (rows("checkpoints", cp_bytes), rows("writes", write_bytes))
    };
    let take = |out: &mut Removed,
                (cp_sql, writes_sql): &(String, String),
                p: &[&dyn ToSql]|
     -> rusqlite::Result<()> {
        let (n, b) = sizes(tx, cp_sql, p)?;
        out.checkpoints += n;
        out.bytes += b;
        let (n, b) = sizes(tx, writes_sql, p)?;
        out.writes += n;
        out.bytes += b;
        Ok(())
    };
    // The checkpoints of threads that go whole are deleted by thread below.
    let by_key = pair(PK);
    let d = removal.keyed();
    for (thread, ns, id) in d.iter() {
        take(&mut out, &by_key, params![thread, ns, id])?;
    }
    if !dry_run {
        let orphan = format!(
            "UPDATE checkpoints SET parent_checkpoint_id = NULL WHERE {PK} \
             AND parent_checkpoint_id = ?4"
        );
        let o = &removal.orphaned;
        for ((thread, ns, id), parent) in o.iter().zip(&removal.orphaned_parents) {
            tx.prepare_cached(&orphan)?
                .execute(params![thread, ns, id, parent])?;
        }
    }
    // Threads that go whole: their checkpoints, and their writes stored against any
    // checkpoint or none, up to the newest checkpoint id that goes (a live writer's
    // newer rows stay), two statements a thread instead of two a checkpoint.
    let up_to_newest = pair("thread_id = ?1 AND checkpoint_id <= ?2");
    for (thread, newest) in &removal.whole_threads {
        take(&mut out, &up_to_newest, params![thread, newest])?;
    }
    Ok(out)
}
