//! Retention deletes on SQLite: a [`Removal`] planned by `saver::retention`, deleted
//! (or with `dry_run` counted) in the caller's transaction, each statement prepared
//! once per connection. The saver's own `prune` and `lgcodec store prune` both delete
//! through here.

use rusqlite::{params, Connection};

use crate::saver::retention::{Removal, Removed};

const PK: &str = "thread_id = ?1 AND checkpoint_ns = ?2 AND checkpoint_id = ?3";

fn count(conn: &Connection, sql: &str, p: impl rusqlite::Params) -> rusqlite::Result<(u64, u64)> {
    conn.prepare_cached(sql)?.query_row(p, |r| {
        let n: i64 = r.get(0)?;
        let b: i64 = r.get(1)?;
        Ok((u64::try_from(n).unwrap_or(0), u64::try_from(b).unwrap_or(0)))
    })
}

/// Removes (or counts) `removal` in `tx`, a connection inside the caller's
/// transaction.
pub(crate) fn remove(
    tx: &Connection,
    removal: &Removal,
    dry_run: bool,
) -> rusqlite::Result<Removed> {
    let mut out = Removed::default();
    let cp_size = format!(
        "SELECT count(*), coalesce(sum(length(CAST(checkpoint AS BLOB)) \
         + coalesce(length(CAST(metadata AS BLOB)), 0)), 0) FROM checkpoints WHERE {PK}"
    );
    let writes_size = format!(
        "SELECT count(*), coalesce(sum(length(CAST(value AS BLOB))), 0) FROM writes WHERE {PK}"
    );
    let delete_cp = format!("DELETE FROM checkpoints WHERE {PK}");
    let delete_writes = format!("DELETE FROM writes WHERE {PK}");
    let d = &removal.doomed;
    for ((thread, ns), id) in d.threads.iter().zip(&d.namespaces).zip(&d.ids) {
        let key = params![thread, ns, id];
        let (n, b) = count(tx, &cp_size, key)?;
        out.checkpoints += n;
        out.bytes += b;
        let (n, b) = count(tx, &writes_size, key)?;
        out.writes += n;
        out.bytes += b;
        if !dry_run {
            tx.prepare_cached(&delete_cp)?.execute(key)?;
            tx.prepare_cached(&delete_writes)?.execute(key)?;
        }
    }
    if !dry_run {
        let orphan = format!(
            "UPDATE checkpoints SET parent_checkpoint_id = NULL WHERE {PK} \
             AND parent_checkpoint_id = ?4"
        );
        let o = &removal.orphaned;
        let keys = o.threads.iter().zip(&o.namespaces).zip(&o.ids);
        for (((thread, ns), id), parent) in keys.zip(&removal.orphaned_parents) {
            tx.prepare_cached(&orphan)?
                .execute(params![thread, ns, id, parent])?;
        }
    }
    // Writes of whole threads stored against checkpoints that are not stored, up to the
    // newest checkpoint that goes (a live writer's newer writes stay). In a dry run the
    // doomed checkpoints are still there, so their writes, counted above, are not here.
    let unstored = "thread_id = ?1 AND checkpoint_id <= ?2 AND NOT EXISTS (SELECT 1 FROM \
                    checkpoints c WHERE c.thread_id = writes.thread_id AND c.checkpoint_ns = \
                    writes.checkpoint_ns AND c.checkpoint_id = writes.checkpoint_id)";
    for (thread, newest) in &removal.whole_threads {
        let (n, b) = count(
            tx,
            &format!(
                "SELECT count(*), coalesce(sum(length(CAST(value AS BLOB))), 0) FROM writes WHERE {unstored}"
            ),
            params![thread, newest],
        )?;
        out.writes += n;
        out.bytes += b;
        if !dry_run {
            tx.prepare_cached(&format!("DELETE FROM writes WHERE {unstored}"))?
                .execute(params![thread, newest])?;
        }
    }
    Ok(out)
}
