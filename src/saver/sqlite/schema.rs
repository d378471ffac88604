//! Python's `SqliteSaver.setup()`, statement for statement, and the layout check that
//! refuses a database of another shape.

use rusqlite::{Connection, TransactionBehavior};

use super::catalog::{Catalog, CatalogColumn};
use super::storage;
use crate::saver::error::SaverFault;
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

/// The column names of Python's `checkpoints` or `writes` (today's layout, with
/// `task_path`), in its table order; none for any other table.
pub(crate) fn python_columns(table: &str) -> impl Iterator<Item = &'static str> {
    let cols: &'static [Column] = match table {
        "checkpoints" => &CHECKPOINTS,
        "writes" => &WRITES,
        _ => &[],
    };
    cols.iter().map(|c| c.0)
}

/// The tables of LangGraph's own `SqliteStore` (`langgraph-checkpoint-sqlite`), which
/// may share a file with the checkpoint tables: a file holding only these is not another
/// application's.
const LANGGRAPH_STORE_TABLES: [&str; 4] = [
    "store",
    "store_migrations",
    "store_vectors",
    "vector_migrations",
];

/// What a SQLite database holds, as far as LangGraph's checkpoint tables go; from
/// [`inspect_layout`], which writes nothing.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Layout {
    /// No tables (a new or empty file), or only LangGraph's `SqliteStore` tables: a
    /// store can be created here.
    Empty,
    /// Python's two tables, as its `setup()` leaves them.
    Python,
    /// Python's tables, not complete: `writes` from before the `task_path` migration,
    /// or one of the two tables missing. Python's `setup()` (and ours) completes them.
    Incomplete {
        /// What is missing.
        reason: String,
    },
    /// Another application's database (other tables and none of LangGraph's), or
    /// tables of LangGraph's names with another layout. Never written to.
    Foreign {
        /// What was found.
        reason: String,
    },
}

/// How one table compares with Python's.
enum TableState {
    Missing,
    Matches,
    /// `writes` without `task_path`: Python's layout before its migration.
    MatchesWithoutTaskPath,
    Differs(String),
}

/// Reads the database's layout without writing anything (`sqlite_master` and
/// `PRAGMA table_info` only), so that a store can be refused before it is touched.
///
/// # Errors
/// [`ErrorKind::Storage`](crate::ErrorKind::Storage) if SQLite fails.
pub(crate) fn inspect_layout(conn: &Connection) -> Result<Layout> {
    Ok(classify(&Catalog::read(conn).map_err(storage("inspect"))?))
}

/// [`inspect_layout`] of a catalog already read.
pub(crate) fn classify(catalog: &Catalog) -> Layout {
    let checkpoints = table_state(catalog, "checkpoints", &CHECKPOINTS);
    let writes = table_state(catalog, "writes", &WRITES);
    match (checkpoints, writes) {
        (TableState::Differs(reason), _) | (_, TableState::Differs(reason)) => {
            Layout::Foreign { reason }
        }
        (TableState::Missing, TableState::Missing) => {
            let others: Vec<&str> = catalog
                .user_tables()
                .filter(|t| !LANGGRAPH_STORE_TABLES.contains(t))
                .collect();
            if others.is_empty() {
                Layout::Empty
            } else {
                Layout::Foreign {
                    reason: format!(
                        "the database holds other tables ({}) and none of LangGraph's \
                         checkpoint tables: it looks like another application's",
                        others.join(", ")
                    ),
                }
            }
        }
        (TableState::Matches, TableState::Matches) => Layout::Python,
        (checkpoints, writes) => {
            let mut missing = Vec::new();
            if matches!(checkpoints, TableState::Missing) {
                missing.push("table checkpoints does not exist");
            }
            match writes {
                TableState::Missing => missing.push("table writes does not exist"),
                TableState::MatchesWithoutTaskPath => missing
                    .push("table writes has no task_path column (made before Python's migration)"),
                _ => {}
            }
            Layout::Incomplete {
                reason: missing.join("; "),
            }
        }
    }
}

/// Python's `setup()`: WAL, both tables, the `task_path` migration. Unlike Python it
/// first reads the layout and refuses a foreign one before writing anything, runs in
/// one `BEGIN IMMEDIATE` transaction (so savers of two processes that set up the same
/// new file at once do not race), and then checks the layout.
///
/// # Errors
/// [`ErrorKind::Storage`](crate::ErrorKind::Storage) if SQLite fails, [`ErrorKind::Schema`](crate::ErrorKind::Schema) if the database is
/// another application's or holds tables of these names with another layout.
pub(super) fn setup(conn: &mut Connection) -> Result<()> {
    if let Layout::Foreign { reason } = inspect_layout(conn)? {
        return Err(SaverFault::Schema { reason }.into());
    }
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
/// [`ErrorKind::Schema`](crate::ErrorKind::Schema) naming the table and what differs.
pub(super) fn verify(conn: &Connection) -> Result<()> {
    match inspect_layout(conn)? {
        Layout::Python => Ok(()),
        Layout::Empty => Err(SaverFault::Schema {
            reason: "table checkpoints does not exist".to_owned(),
        }
        .into()),
        Layout::Incomplete { reason } | Layout::Foreign { reason } => {
            Err(SaverFault::Schema { reason }.into())
        }
    }
}

fn table_state(catalog: &Catalog, table: &str, want: &[Column]) -> TableState {
    let found: &[CatalogColumn] = catalog.columns(table);
    if found.is_empty() {
        return TableState::Missing;
    }
    let mut without_task_path = false;
    for (name, ty, not_null, default, pk) in want {
        let Some(col) = found.iter().find(|c| c.name == *name) else {
            if *name == "task_path" {
                without_task_path = true;
                continue;
            }
            return TableState::Differs(format!(
                "table {table} has no column {name} (columns: {})",
                catalog.column_names(table).join(", ")
            ));
        };
        let same = col.decl_type.eq_ignore_ascii_case(ty)
            && col.not_null == *not_null
            && col.default.as_deref() == *default
            && col.pk == *pk;
        if !same {
            return TableState::Differs(format!(
                "column {table}.{name} is `{} {}{}` (primary key position {}), Python's saver makes `{ty}{}{}` (position {pk})",
                col.name,
                col.decl_type,
                if col.not_null { " NOT NULL" } else { "" },
                col.pk,
                if *not_null { " NOT NULL" } else { "" },
                default.map(|d| format!(" DEFAULT {d}")).unwrap_or_default(),
            ));
        }
    }
    if let Some(extra) = found.iter().find(|c| !want.iter().any(|w| w.0 == c.name)) {
        return TableState::Differs(format!(
            "table {table} has a column {} that Python's saver does not make",
            extra.name
        ));
    }
    if without_task_path {
        TableState::MatchesWithoutTaskPath
    } else {
        TableState::Matches
    }
}
