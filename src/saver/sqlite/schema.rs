//! Python's `SqliteSaver.setup()`, statement for statement, and the layout check that
//! refuses a database of another shape.

use rusqlite::{Connection, TransactionBehavior};

use super::storage;
use crate::saver::error::SaverError;
use crate::saver::Result;

/// The two `CREATE TABLE` statements exactly as `langgraph-checkpoint-sqlite==3.1.2`
/// writes them (whitespace included): SQLite keeps a table's statement text in
/// `sqlite_master`, so a file set up by either side is the same file.
const CREATE_CHECKPOINTS: &str = "CREATE TABLE IF NOT EXISTS checkpoints (
                thread_id TEXT NOT NULL,
                checkpoint_ns TEXT NOT NULL DEFAULT '',
                checkpoint_id TEXT NOT NULL,
                parent_checkpoint_id TEXT,
                type TEXT,
                checkpoint BLOB,
                metadata BLOB,
                PRIMARY KEY (thread_id, checkpoint_ns, checkpoint_id)
            )";

const CREATE_WRITES: &str = "CREATE TABLE IF NOT EXISTS writes (
                thread_id TEXT NOT NULL,
                checkpoint_ns TEXT NOT NULL DEFAULT '',
                checkpoint_id TEXT NOT NULL,
                task_id TEXT NOT NULL,
                task_path TEXT NOT NULL DEFAULT '',
                idx INTEGER NOT NULL,
                channel TEXT NOT NULL,
                type TEXT,
                value BLOB,
                PRIMARY KEY (thread_id, checkpoint_ns, checkpoint_id, task_id, idx)
            )";

/// Python's migration for files made before `task_path` existed (a no-op error,
/// "duplicate column name", on every other file).
const ADD_TASK_PATH: &str = "ALTER TABLE writes ADD COLUMN task_path TEXT NOT NULL DEFAULT ''";

/// `(column, declared type, not null, default, primary key position)` as
/// `PRAGMA table_info` reports them.
type Column = (&'static str, &'static str, bool, Option<&'static str>, i64);

const CHECKPOINTS: [Column; 7] = [
    ("thread_id", "TEXT", true, None, 1),
    ("checkpoint_ns", "TEXT", true, Some("''"), 2),
    ("checkpoint_id", "TEXT", true, None, 3),
    ("parent_checkpoint_id", "TEXT", false, None, 0),
    ("type", "TEXT", false, None, 0),
    ("checkpoint", "BLOB", false, None, 0),
    ("metadata", "BLOB", false, None, 0),
];

const WRITES: [Column; 9] = [
    ("thread_id", "TEXT", true, None, 1),
    ("checkpoint_ns", "TEXT", true, Some("''"), 2),
    ("checkpoint_id", "TEXT", true, None, 3),
    ("task_id", "TEXT", true, None, 4),
    ("task_path", "TEXT", true, Some("''"), 0),
    ("idx", "INTEGER", true, None, 5),
    ("channel", "TEXT", true, None, 0),
    ("type", "TEXT", false, None, 0),
    ("value", "BLOB", false, None, 0),
];

/// Python's `setup()`: WAL, both tables, the `task_path` migration. Unlike Python it
/// runs in one `BEGIN IMMEDIATE` transaction, so savers of two processes that set up
/// the same new file at once do not race, and it then checks the layout.
///
/// # Errors
/// [`SaverError::Storage`] if SQLite fails, [`SaverError::Schema`] if the tables exist
/// with another layout.
pub(super) fn setup(conn: &mut Connection) -> Result<()> {
    // journal_mode cannot change inside a transaction; it is a property of the file.
    let _mode: String = conn
        .query_row("PRAGMA journal_mode=WAL", [], |r| r.get(0))
        .map_err(storage("setup"))?;
    let tx = conn
        .transaction_with_behavior(TransactionBehavior::Immediate)
        .map_err(storage("setup"))?;
    tx.execute_batch(&format!("{CREATE_CHECKPOINTS};\n{CREATE_WRITES};"))
        .map_err(storage("setup"))?;
    if let Err(e) = tx.execute(ADD_TASK_PATH, []) {
        if !e.to_string().contains("duplicate column name") {
            return Err(storage("setup")(e));
        }
    }
    verify(&tx)?;
    tx.commit().map_err(storage("setup"))?;
    Ok(())
}

/// Checks, without writing anything, that both tables exist with Python's layout
/// (columns, declared types, `NOT NULL`, defaults, primary key; `task_path` may stand
/// last, where Python's migration puts it on old files).
///
/// # Errors
/// [`SaverError::Schema`] naming the table and what differs.
pub(super) fn verify(conn: &Connection) -> Result<()> {
    check_table(conn, "checkpoints", &CHECKPOINTS)?;
    check_table(conn, "writes", &WRITES)
}

fn check_table(conn: &Connection, table: &str, want: &[Column]) -> Result<()> {
    let mut stmt = conn
        .prepare(&format!("PRAGMA table_info({table})"))
        .map_err(storage("verify"))?;
    let found: Vec<(String, String, bool, Option<String>, i64)> = stmt
        .query_map([], |r| {
            Ok((
                r.get::<_, String>(1)?,
                r.get::<_, String>(2)?,
                r.get::<_, i64>(3)? != 0,
                r.get::<_, Option<String>>(4)?,
                r.get::<_, i64>(5)?,
            ))
        })
        .map_err(storage("verify"))?
        .collect::<std::result::Result<_, _>>()
        .map_err(storage("verify"))?;
    let schema_err = |reason: String| -> crate::saver::SaverError { SaverError::Schema { reason } };
    if found.is_empty() {
        return Err(schema_err(format!("table {table} does not exist")));
    }
    for (name, ty, not_null, default, pk) in want {
        let Some(col) = found.iter().find(|c| c.0 == *name) else {
            return Err(schema_err(format!(
                "table {table} has no column {name} (columns: {})",
                found
                    .iter()
                    .map(|c| c.0.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            )));
        };
        let same = col.1.eq_ignore_ascii_case(ty)
            && col.2 == *not_null
            && col.3.as_deref() == *default
            && col.4 == *pk;
        if !same {
            return Err(schema_err(format!(
                "column {table}.{name} is `{} {}{}` (primary key position {}), Python's saver makes `{ty}{}{}` (position {pk})",
                col.0,
                col.1,
                if col.2 { " NOT NULL" } else { "" },
                col.4,
                if *not_null { " NOT NULL" } else { "" },
                default.map(|d| format!(" DEFAULT {d}")).unwrap_or_default(),
            )));
        }
    }
    if let Some(extra) = found.iter().find(|c| !want.iter().any(|w| w.0 == c.0)) {
        return Err(schema_err(format!(
            "table {table} has a column {} that Python's saver does not make",
            extra.0
        )));
    }
    Ok(())
}
