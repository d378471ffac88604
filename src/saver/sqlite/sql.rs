//! The SQLite saver's writing SQL: `put`'s checkpoint row, `put_writes`' multi-row
//! inserts, and the lookups and deletes of whole threads, as `postgres::sql` holds the
//! Postgres saver's statements.

#[allow(clippy::wildcard_imports)]
use super::*;

/// The most `writes` rows one `put_writes` statement inserts (one cached statement per
/// row count up to this): a multi-row `INSERT` binds the five key columns once.
const WRITES_PER_INSERT: usize = 8;

/// The first parameter of row `row` in a `put_writes` statement: `?1`..`?5` are the
/// shared keys, then four per row (`idx, channel, type, value`). The statement text and
/// the binding both place parameters by it.
fn row_param(row: usize) -> usize {
    6 + 4 * row
}

/// `put_writes`' statement for `rows` rows (1..=[`WRITES_PER_INSERT`]): Python's `INSERT
/// OR REPLACE` (every channel a special one) or `INSERT OR IGNORE`, the key parameters
/// `?1`..`?5` shared by the rows, then `idx, channel, type, value` per row.
fn writes_insert_sql(replace: bool, rows: usize) -> &'static str {
    static SQL: std::sync::OnceLock<Vec<String>> = std::sync::OnceLock::new();
    let all = SQL.get_or_init(|| {
        [false, true]
            .into_iter()
            .flat_map(|replace| {
                (1..=WRITES_PER_INSERT).map(move |n| {
                    let values = (0..n)
                        .map(|row| {
                            let at = row_param(row);
                            format!(
                                "(?1, ?2, ?3, ?4, ?5, ?{at}, ?{}, ?{}, ?{})",
                                at + 1,
                                at + 2,
                                at + 3
                            )
                        })
                        .collect::<Vec<_>>()
                        .join(", ");
                    format!(
                        "INSERT OR {} INTO writes (thread_id, checkpoint_ns, checkpoint_id, \
                         task_id, task_path, idx, channel, type, value) VALUES {values}",
                        if replace { "REPLACE" } else { "IGNORE" }
                    )
                })
            })
            .collect()
    });
    let at = usize::from(replace) * WRITES_PER_INSERT + rows.clamp(1, WRITES_PER_INSERT) - 1;
    all.get(at).map_or("", String::as_str)
}

/// How many statements [`insert_writes`] runs for `rows` rows: one up to
/// [`WRITES_PER_INSERT`] rows (then it needs no explicit transaction, see
/// [`Statements::One`]).
pub(super) fn writes_statements(rows: usize) -> Statements {
    if rows <= WRITES_PER_INSERT {
        Statements::One
    } else {
        Statements::Many
    }
}

/// `put_writes`' rows in one transaction: the keys (thread, namespace, checkpoint id,
/// task id, task path) and each write's `(idx, channel, dumps_typed)`. Up to
/// [`WRITES_PER_INSERT`] rows per statement, the five key parameters bound once: each
/// row is still ignored or replaced on its own, in order, as by Python's `executemany`.
pub(super) fn insert_writes(
    tx: &Connection,
    replace: bool,
    keys: [&str; 5],
    rows: &[(i64, impl AsRef<str>, TypedBytes)],
) -> Result<()> {
    for chunk in rows.chunks(WRITES_PER_INSERT) {
        let mut stmt = tx
            .prepare_cached(writes_insert_sql(replace, chunk.len()))
            .map_err(storage("put_writes"))?;
        for (i, key) in keys.into_iter().enumerate() {
            stmt.raw_bind_parameter(i + 1, key)
                .map_err(storage("put_writes"))?;
        }
        for (row, (idx, channel, value)) in chunk.iter().enumerate() {
            let at = row_param(row);
            stmt.raw_bind_parameter(at, idx)
                .and_then(|()| stmt.raw_bind_parameter(at + 1, channel.as_ref()))
                .and_then(|()| stmt.raw_bind_parameter(at + 2, &value.type_tag))
                .and_then(|()| stmt.raw_bind_parameter(at + 3, &value.data[..]))
                .map_err(storage("put_writes"))?;
        }
        stmt.raw_execute().map_err(storage("put_writes"))?;
    }
    Ok(())
}

pub(super) fn namespaces_of(tx: &Connection, thread: &str) -> Result<Vec<String>> {
    let mut stmt = tx
        .prepare_cached("SELECT DISTINCT checkpoint_ns FROM checkpoints WHERE thread_id = ?")
        .map_err(storage("prune"))?;
    let out = stmt
        .query_map([thread], |r| r.get::<_, String>(0))
        .map_err(storage("prune"))?
        .collect::<rusqlite::Result<Vec<_>>>()
        .map_err(storage("prune"))?;
    Ok(out)
}

pub(super) fn ids_of(tx: &Connection, thread: &str, ns: &str) -> Result<BTreeSet<String>> {
    let mut stmt = tx
        .prepare_cached(
            "SELECT checkpoint_id FROM checkpoints WHERE thread_id = ? AND checkpoint_ns = ?",
        )
        .map_err(storage("prune"))?;
    let out = stmt
        .query_map([thread, ns], |r| r.get::<_, String>(0))
        .map_err(storage("prune"))?
        .collect::<rusqlite::Result<BTreeSet<_>>>()
        .map_err(storage("prune"))?;
    Ok(out)
}

pub(super) fn delete_thread_rows(tx: &Connection, thread: &str) -> Result<()> {
    tx.execute("DELETE FROM checkpoints WHERE thread_id = ?", [thread])
        .map_err(storage("delete_thread"))?;
    tx.execute("DELETE FROM writes WHERE thread_id = ?", [thread])
        .map_err(storage("delete_thread"))?;
    Ok(())
}

/// One `checkpoints` row as `put` writes it.
pub(super) struct PutRow {
    pub(super) thread: String,
    pub(super) ns: String,
    pub(super) id: String,
    pub(super) parent: Option<String>,
    pub(super) row: TypedBytes,
    pub(super) metadata_text: String,
}

impl PutRow {
    pub(super) fn config(&self) -> CheckpointConfig {
        CheckpointConfig::for_checkpoint(self.thread.as_str(), self.ns.as_str(), self.id.as_str())
    }

    pub(super) fn bytes(&self) -> usize {
        self.row.data.len() + self.metadata_text.len()
    }

    pub(super) fn insert(&self, conn: &Connection) -> Result<()> {
        conn.prepare_cached(
            "INSERT OR REPLACE INTO checkpoints (thread_id, checkpoint_ns, checkpoint_id, \
             parent_checkpoint_id, type, checkpoint, metadata) VALUES (?, ?, ?, ?, ?, ?, ?)",
        )
        .and_then(|mut s| {
            s.execute(params![
                self.thread,
                self.ns,
                self.id,
                self.parent,
                self.row.type_tag,
                &self.row.data[..],
                self.metadata_text.as_bytes()
            ])
        })
        .map_err(storage("put"))?;
        Ok(())
    }
}
