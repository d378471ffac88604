//! Which saver, and which release of it, wrote a store: [`StoreLayout`], found by
//! `detect_sqlite` (cargo feature `sqlite`) and `detect_postgres` (feature `postgres`)
//! without writing anything; `read_sqlite_rows` reads the rows of every known SQLite
//! layout.
//!
//! Stores outlive the savers that wrote them. The layouts in use:
//!
//! | layout | written by | differs from today's Python |
//! |---|---|---|
//! | [`SqlitePython`](StoreLayout::SqlitePython) | `langgraph-checkpoint-sqlite` ≥ 3.1.2 | — |
//! | [`SqlitePythonBeforeTaskPath`](StoreLayout::SqlitePythonBeforeTaskPath) | `langgraph-checkpoint-sqlite` 1.0.0–3.1.1 | `writes` has no `task_path` |
//! | [`SqliteThreadTs`](StoreLayout::SqliteThreadTs) | LangGraph 0.1's `langgraph.checkpoint.sqlite` | `thread_ts` / `parent_ts`, no namespaces, no `type` columns (JSON) |
//! | [`SqliteJs`](StoreLayout::SqliteJs) | LangGraphJS `@langchain/langgraph-checkpoint-sqlite` | no `task_path`; `json` rows, numeric versions |
//! | [`PostgresPython`](StoreLayout::PostgresPython) | `langgraph-checkpoint-postgres` | `checkpoint_migrations` below 9 (none at 1.0.0) |
//! | [`PostgresPythonTaskPathAt8`](StoreLayout::PostgresPythonTaskPathAt8) | `langgraph-checkpoint-postgres` 2.0.12 | `checkpoint_migrations` at 8, numbered without today's no-op migration 5: `task_path` is there already |
//! | [`PostgresJs`](StoreLayout::PostgresJs) | LangGraphJS `@langchain/langgraph-checkpoint-postgres` | migrations 0..=4, no `task_path`, numeric versions (`json` rows) |
//! | [`PostgresShallow`](StoreLayout::PostgresShallow) | Python's `ShallowPostgresSaver` | one checkpoint per thread and namespace, no `checkpoint_id` / `version` |
//!
//! Detection decides from the schema first: the columns (`sqlite_master`, `PRAGMA
//! table_info`, `information_schema`), the `CREATE TABLE` text SQLite keeps, and the
//! migrations table. Only where Python's and LangGraphJS's savers leave the same
//! schema (an SQLite file whose statement text neither saver wrote, a Postgres store
//! at migrations 0..=4) do the rows decide, by the one thing only JS writes: numeric
//! channel versions (every Python saver writes strings). A `json` type tag is no
//! evidence: Python's serializer wrote every value as `json` up to
//! `langgraph-checkpoint` 1.0.9. Detection runs on a read-only SQLite connection
//! (`SQLITE_OPEN_READ_ONLY`, a read-only file) and issues only `SELECT`s on Postgres.
//!
//! `vectors/stores/` holds one store of each layout, written by the real old
//! packages, with what those packages and today's Python read from them.

use std::fmt;

/// The highest `checkpoint_migrations.v` of today's Python Postgres saver
/// (`langgraph-checkpoint-postgres` 3.2.0; the saver's `LAST_MIGRATION`).
pub const CURRENT_POSTGRES_MIGRATION: i32 = 9;

/// The highest `checkpoint_migrations.v` of today's Python `ShallowPostgresSaver`
/// (its `task_path` migration).
pub const CURRENT_SHALLOW_MIGRATION: i32 = 7;

/// The 16 bytes every SQLite database file begins with: how a store's file is told
/// from a backup, a row or a text file given in its place.
pub const SQLITE_HEADER: &[u8] = b"SQLite format 3\0";

/// Which saver, and which release of it, wrote a store. See the [module docs](self).
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum StoreLayout {
    /// None of the savers' tables exist (a new file or schema, or one of another
    /// application).
    Empty,
    /// Python's SQLite saver as today (`langgraph-checkpoint-sqlite` ≥ 3.1.2, or an
    /// older file its `setup()` has migrated).
    SqlitePython,
    /// Python's SQLite saver before `writes.task_path` (1.0.0 to 3.1.1).
    SqlitePythonBeforeTaskPath,
    /// LangGraph 0.1's SQLite saver: `checkpoints(thread_id, thread_ts, parent_ts,
    /// checkpoint, metadata)`, `writes(thread_id, thread_ts, task_id, idx, channel,
    /// value)`; JSON bytes with no type column, no namespaces. `task_path` says
    /// whether today's Python `setup()` has since added `writes.task_path` (it does,
    /// then fails to read: `no such column: checkpoint_ns`).
    SqliteThreadTs {
        /// `writes` has a `task_path` column.
        task_path: bool,
    },
    /// LangGraphJS's SQLite saver: Python's columns without `task_path`, its own
    /// statement text (or, where the text is neither saver's, numeric channel
    /// versions in the checkpoints).
    SqliteJs,
    /// Python's Postgres saver. `migrations` is the highest applied
    /// `checkpoint_migrations.v` ([`CURRENT_POSTGRES_MIGRATION`] today), `None` when
    /// the table does not exist (`langgraph-checkpoint-postgres` 1.0.0).
    PostgresPython {
        /// The highest applied migration.
        migrations: Option<i32>,
    },
    /// Python's Postgres saver as `langgraph-checkpoint-postgres` 2.0.12 left it: the one
    /// release whose migration list has no no-op migration 5, so its last migration,
    /// `task_path`, is recorded as 8 (2.0.8's 8 is an index; from 2.0.13 on `task_path`
    /// is 9). The tables are today's; today's migration 9 (`ADD COLUMN IF NOT EXISTS
    /// task_path`) adds nothing and records 9, as Python's `setup()` does.
    PostgresPythonTaskPathAt8,
    /// LangGraphJS's Postgres saver (its migrations 0..=4: Python's tables without
    /// `task_path`), told apart from Python's by numeric channel versions (`json`
    /// typed rows are no evidence: `langgraph-checkpoint-postgres` 1.0.1 to 1.0.7
    /// under `langgraph-checkpoint` ≤ 1.0.9 wrote them too). An empty JS store is
    /// reported as [`PostgresPython`](Self::PostgresPython) with the same migrations:
    /// the two are the same tables.
    PostgresJs {
        /// The highest applied migration.
        migrations: i32,
    },
    /// Python's `ShallowPostgresSaver` (deprecated): `checkpoints` keyed by thread and
    /// namespace only, blobs without versions.
    PostgresShallow {
        /// The highest applied migration of the shallow saver's own list.
        migrations: Option<i32>,
    },
    /// Tables of the savers' names in a layout no known release writes.
    Foreign {
        /// What was found.
        reason: String,
    },
}

impl StoreLayout {
    /// Today's Python saver reads and writes this store as it is.
    #[must_use]
    pub fn is_current(&self) -> bool {
        match self {
            Self::SqlitePython => true,
            Self::PostgresPython { migrations } => *migrations == Some(CURRENT_POSTGRES_MIGRATION),
            _ => false,
        }
    }

    /// Pending writes carry a task path (`writes.task_path` /
    /// `checkpoint_writes.task_path`).
    #[must_use]
    pub fn has_task_path(&self) -> bool {
        match self {
            Self::SqlitePython => true,
            Self::SqliteThreadTs { task_path } => *task_path,
            Self::PostgresPython { migrations } => {
                migrations.is_some_and(|v| v >= CURRENT_POSTGRES_MIGRATION)
            }
            Self::PostgresPythonTaskPathAt8 => true,
            Self::PostgresShallow { migrations } => {
                migrations.is_some_and(|v| v >= CURRENT_SHALLOW_MIGRATION)
            }
            _ => false,
        }
    }

    /// Checkpoints are keyed by namespace as well as thread (false only for
    /// LangGraph 0.1's layout).
    #[must_use]
    pub fn has_namespaces(&self) -> bool {
        !matches!(
            self,
            Self::SqliteThreadTs { .. } | Self::Empty | Self::Foreign { .. }
        )
    }
}

impl fmt::Display for StoreLayout {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Empty => f.write_str("no checkpoint tables"),
            Self::SqlitePython => f.write_str("Python SQLite saver (current layout)"),
            Self::SqlitePythonBeforeTaskPath => f.write_str(
                "Python SQLite saver before writes.task_path (langgraph-checkpoint-sqlite 1.0.0-3.1.1)",
            ),
            Self::SqliteThreadTs { task_path } => write!(
                f,
                "LangGraph 0.1 SQLite saver (thread_ts columns{})",
                if *task_path {
                    "; writes.task_path added by a later setup()"
                } else {
                    ""
                }
            ),
            Self::SqliteJs => f.write_str("LangGraphJS SQLite saver"),
            Self::PostgresPython { migrations: None } => f.write_str(
                "Python Postgres saver without checkpoint_migrations (langgraph-checkpoint-postgres 1.0.0)",
            ),
            Self::PostgresPython {
                migrations: Some(v),
            } => write!(
                f,
                "Python Postgres saver, migrations 0..={v}{}",
                if *v == CURRENT_POSTGRES_MIGRATION {
                    " (current layout)"
                } else {
                    ""
                }
            ),
            Self::PostgresPythonTaskPathAt8 => f.write_str(
                "Python Postgres saver, migrations 0..=8 with task_path (langgraph-checkpoint-postgres 2.0.12's numbering)",
            ),
            Self::PostgresJs { migrations } => {
                write!(f, "LangGraphJS Postgres saver, migrations 0..={migrations}")
            }
            Self::PostgresShallow { migrations: None } => {
                f.write_str("Python ShallowPostgresSaver without checkpoint_migrations")
            }
            Self::PostgresShallow {
                migrations: Some(v),
            } => write!(f, "Python ShallowPostgresSaver, migrations 0..={v}"),
            Self::Foreign { reason } => write!(f, "unknown layout: {reason}"),
        }
    }
}

#[cfg(any(feature = "sqlite", feature = "postgres"))]
const PY_CHECKPOINTS: &[&str] = &[
    "thread_id",
    "checkpoint_ns",
    "checkpoint_id",
    "parent_checkpoint_id",
    "type",
    "checkpoint",
    "metadata",
];
#[cfg(feature = "sqlite")]
const TS_CHECKPOINTS: &[&str] = &[
    "thread_id",
    "thread_ts",
    "parent_ts",
    "checkpoint",
    "metadata",
];
#[cfg(feature = "sqlite")]
const TS_WRITES: &[&str] = &[
    "thread_id",
    "thread_ts",
    "task_id",
    "idx",
    "channel",
    "value",
];
#[cfg(any(feature = "sqlite", feature = "postgres"))]
const TASK_PATH: &str = "task_path";

/// What the schema says about a store whose columns both Python's and LangGraphJS's
/// savers make (no `task_path`).
#[cfg(any(feature = "sqlite", feature = "postgres"))]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum SchemaSays {
    /// Only Python's savers leave this schema.
    Python,
    /// Only LangGraphJS's savers leave this schema (its SQLite statement text).
    #[cfg_attr(not(feature = "sqlite"), allow(dead_code))]
    Js,
    /// Both do: the rows decide.
    Either,
}

#[cfg(any(feature = "sqlite", feature = "postgres"))]
impl SchemaSays {
    /// Whether LangGraphJS wrote the store, when the schema settles it; `None` when the
    /// rows have to (a sample of checkpoints with a numeric channel version, which
    /// only JS writes).
    fn settled(self) -> Option<bool> {
        match self {
            Self::Python => Some(false),
            Self::Js => Some(true),
            Self::Either => None,
        }
    }
}

#[cfg(feature = "sqlite")]
/// The two `CREATE TABLE` statements as Python's SQLite saver (1.0.0 to 3.1.1, before
/// `task_path`) leaves them in `sqlite_master` (SQLite keeps the text, minus `IF NOT
/// EXISTS`; measured on `vectors/stores/sqlite-py-*`).
const PY_SQLITE_STATEMENTS: [&str; 2] = [
    "CREATE TABLE checkpoints (\n                thread_id TEXT NOT NULL,\n                checkpoint_ns TEXT NOT NULL DEFAULT '',\n                checkpoint_id TEXT NOT NULL,\n                parent_checkpoint_id TEXT,\n                type TEXT,\n                checkpoint BLOB,\n                metadata BLOB,\n                PRIMARY KEY (thread_id, checkpoint_ns, checkpoint_id)\n            )",
    "CREATE TABLE writes (\n                thread_id TEXT NOT NULL,\n                checkpoint_ns TEXT NOT NULL DEFAULT '',\n                checkpoint_id TEXT NOT NULL,\n                task_id TEXT NOT NULL,\n                idx INTEGER NOT NULL,\n                channel TEXT NOT NULL,\n                type TEXT,\n                value BLOB,\n                PRIMARY KEY (thread_id, checkpoint_ns, checkpoint_id, task_id, idx)\n            )",
];

#[cfg(feature = "sqlite")]
/// The two `CREATE TABLE` statements as LangGraphJS's SQLite saver (1.0.x) leaves them
/// in `sqlite_master` (SQLite keeps the text, minus `IF NOT EXISTS`).
const JS_SQLITE_STATEMENTS: [&str; 2] = [
    "CREATE TABLE checkpoints (\n  thread_id TEXT NOT NULL,\n  checkpoint_ns TEXT NOT NULL DEFAULT '',\n  checkpoint_id TEXT NOT NULL,\n  parent_checkpoint_id TEXT,\n  type TEXT,\n  checkpoint BLOB,\n  metadata BLOB,\n  PRIMARY KEY (thread_id, checkpoint_ns, checkpoint_id)\n)",
    "CREATE TABLE writes (\n  thread_id TEXT NOT NULL,\n  checkpoint_ns TEXT NOT NULL DEFAULT '',\n  checkpoint_id TEXT NOT NULL,\n  task_id TEXT NOT NULL,\n  idx INTEGER NOT NULL,\n  channel TEXT NOT NULL,\n  type TEXT,\n  value BLOB,\n  PRIMARY KEY (thread_id, checkpoint_ns, checkpoint_id, task_id, idx)\n)",
];

#[cfg(any(feature = "sqlite", feature = "postgres"))]
/// Same names, any order.
fn same_columns(found: &[String], want: &[&str]) -> bool {
    found.len() == want.len() && want.iter().all(|w| found.iter().any(|f| f == w))
}

#[cfg(any(feature = "sqlite", feature = "postgres"))]
/// `want` plus `task_path`, any order.
fn with_task_path(found: &[String], want: &[&str]) -> bool {
    found.len() == want.len() + 1
        && found.iter().any(|f| f == TASK_PATH)
        && want.iter().all(|w| found.iter().any(|f| f == w))
}

#[cfg(any(feature = "sqlite", feature = "postgres"))]
fn foreign(table: &str, found: &[String]) -> StoreLayout {
    StoreLayout::Foreign {
        reason: format!(
            "table {table} has columns ({}), which no known saver writes",
            found.join(", ")
        ),
    }
}

#[cfg(feature = "sqlite")]
pub use sqlite_detect::{detect_sqlite, open_sqlite_read_only};

/// How long the store's SQLite connections wait for a lock another connection holds
/// (their busy timeout) before giving up: long enough for a rollback-journal writer's
/// commit or a Python agent's write transaction, short enough that a lock held for
/// good (a forgotten `BEGIN` in a `sqlite3` shell) ends the command within a minute.
#[cfg(feature = "sqlite")]
pub(crate) const SQLITE_BUSY_WAIT: std::time::Duration = std::time::Duration::from_secs(30);

/// How long a store command's Postgres statement waits for a lock another session holds
/// (`lock_timeout`), where the server, database or role sets no limit of its own: as
/// long as a SQLite store's busy wait, for the same reasons.
#[cfg(feature = "postgres")]
pub(crate) const POSTGRES_LOCK_WAIT: std::time::Duration = std::time::Duration::from_secs(30);

#[cfg(feature = "sqlite")]
mod sqlite_detect {
    use std::path::Path;

    use rusqlite::{Connection, OpenFlags};

    use super::{
        foreign, same_columns, with_task_path, SchemaSays, StoreLayout, JS_SQLITE_STATEMENTS,
        PY_CHECKPOINTS, PY_SQLITE_STATEMENTS, TASK_PATH, TS_CHECKPOINTS, TS_WRITES,
    };
    use crate::saver::error::SaverFault;
    use crate::saver::sqlite::{python_columns, Catalog};
    use crate::saver::Result;

    fn storage(e: rusqlite::Error) -> crate::Error {
        SaverFault::Storage {
            operation: "detect layout",
            source: Box::new(e),
        }
        .into()
    }

    /// A numeric channel version in a `json` checkpoint among the first hundred rows
    /// (what LangGraphJS writes; every Python saver writes string versions, also in
    /// the `json` checkpoints of `langgraph-checkpoint` ≤ 1.0.9). A sample, so a large
    /// store is not scanned whole; bytes that are not JSON text count as no evidence.
    fn numeric_versions(conn: &Connection) -> Result<bool> {
        conn.query_row(
            "SELECT EXISTS (SELECT 1 FROM \
                (SELECT CAST(checkpoint AS TEXT) AS t FROM \
                    (SELECT type, checkpoint FROM checkpoints LIMIT 100) WHERE type = 'json') s, \
                json_each(CASE WHEN json_valid(s.t) THEN s.t ELSE '{}' END, '$.channel_versions') e \
                WHERE e.type IN ('integer', 'real'))",
            [],
            |r| r.get::<_, bool>(0),
        )
        .map_err(storage)
    }

    /// `file:` URI of `path`, every byte outside `[A-Za-z0-9/._~-]` percent-encoded.
    fn file_uri(path: &Path) -> String {
        let mut uri = String::from("file:");
        for &b in path.as_os_str().as_encoded_bytes() {
            if b.is_ascii_alphanumeric() || matches!(b, b'/' | b'.' | b'_' | b'~' | b'-') {
                uri.push(char::from(b));
            } else {
                uri.push_str(&format!("%{b:02X}"));
            }
        }
        uri
    }

    /// Opens an SQLite store for reading without changing it: not the file's bytes,
    /// not its journal mode, and no `-wal` / `-shm` left beside it afterwards — while
    /// taking part in SQLite's locking, so that a writer in another process (Python's
    /// saver, a prune) cannot change the file under a read: a read transaction on this
    /// connection sees one point in time.
    ///
    /// - A `-wal` beside the file (a writer is running, or one stopped without
    ///   checkpointing): `SQLITE_OPEN_READ_ONLY`, so what is in the WAL is read; the
    ///   side files are the writer's.
    /// - A rollback-journal file: `SQLITE_OPEN_READ_ONLY`; readers make no side file.
    /// - A WAL-mode file at rest (no `-wal`): SQLite's WAL reader needs a `-wal` and
    ///   `-shm`, and a read-only connection that makes them cannot remove them. So the
    ///   file is opened read-write (never created) with `PRAGMA query_only`: no
    ///   statement on it can write, and when the last connection to the file closes
    ///   SQLite removes both side files (the checkpoint of an empty WAL writes nothing
    ///   to the file). While it is open they exist, as for any reader. Only if the file
    ///   cannot be opened for writing (no permission, read-only media) is it opened
    ///   `mode=ro&immutable=1`, which takes no lock: such a read must not overlap a
    ///   writer that has the permission this process lacks.
    ///
    /// A busy timeout of 30 s lets a read wait out a rollback-journal writer's commit.
    ///
    /// # Errors
    /// [`ErrorKind::Storage`](crate::ErrorKind::Storage) if SQLite cannot open the file.
    pub fn open_sqlite_read_only(path: impl AsRef<Path>) -> Result<Connection> {
        let path = path.as_ref();
        let mut wal = path.as_os_str().to_owned();
        wal.push("-wal");
        let read_only = OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX;
        let conn = if Path::new(&wal).exists() || !wal_mode_header(path) {
            Connection::open_with_flags(path, read_only).map_err(storage)?
        } else {
            // The first read opens the WAL: where its -wal/-shm cannot be made (a
            // directory this process may not write), fall back as for a read-only file.
            let writable = Connection::open_with_flags(
                path,
                OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_NO_MUTEX,
            )
            .ok()
            .filter(|c| !c.is_readonly(rusqlite::MAIN_DB).unwrap_or(true))
            .filter(|c| {
                c.pragma_update(None, "query_only", true).is_ok()
                    && c.query_row("SELECT count(*) FROM sqlite_master", [], |r| {
                        r.get::<_, i64>(0)
                    })
                    .is_ok()
            });
            match writable {
                Some(conn) => conn,
                None => Connection::open_with_flags(
                    format!("{}?mode=ro&immutable=1", file_uri(path)),
                    read_only | OpenFlags::SQLITE_OPEN_URI,
                )
                .map_err(storage)?,
            }
        };
        conn.busy_timeout(super::SQLITE_BUSY_WAIT)
            .map_err(storage)?;
        Ok(conn)
    }

    /// Whether the file's header says WAL mode (bytes 18 and 19 are 2). A file too short
    /// or unreadable is not: SQLite's own open then says what is wrong with it.
    fn wal_mode_header(path: &Path) -> bool {
        use std::io::Read;
        let mut header = [0u8; 20];
        std::fs::File::open(path)
            .and_then(|mut f| f.read_exact(&mut header))
            .is_ok_and(|()| header[18] == 2 && header[19] == 2)
    }

    /// Which saver wrote the SQLite database `conn` is open on. Reads the catalog
    /// and, for a file without `task_path` whose statement text neither Python's nor
    /// LangGraphJS's saver wrote, whether a sample of checkpoints has numeric channel
    /// versions; writes nothing (works on a connection opened `SQLITE_OPEN_READ_ONLY`).
    ///
    /// # Errors
    /// [`ErrorKind::Storage`](crate::ErrorKind::Storage) if SQLite fails to read the catalog (not a database,
    /// a locked or unreadable file).
    pub fn detect_sqlite(conn: &Connection) -> Result<StoreLayout> {
        let catalog = Catalog::read(conn).map_err(storage)?;
        let (Some(cp_sql), Some(w_sql)) = (catalog.sql("checkpoints"), catalog.sql("writes"))
        else {
            return Ok(
                match ["checkpoints", "writes"]
                    .into_iter()
                    .find(|t| catalog.has_table(t))
                {
                    None => StoreLayout::Empty,
                    Some(name) => StoreLayout::Foreign {
                        reason: format!(
                            "only table {name} exists; every saver makes checkpoints and writes"
                        ),
                    },
                },
            );
        };
        let cp = catalog.column_names("checkpoints");
        let w = catalog.column_names("writes");
        if same_columns(&cp, TS_CHECKPOINTS) {
            return Ok(if same_columns(&w, TS_WRITES) {
                StoreLayout::SqliteThreadTs { task_path: false }
            } else if with_task_path(&w, TS_WRITES) {
                StoreLayout::SqliteThreadTs { task_path: true }
            } else {
                foreign("writes", &w)
            });
        }
        if !same_columns(&cp, PY_CHECKPOINTS) {
            return Ok(foreign("checkpoints", &cp));
        }
        // Python's `writes` before its `task_path` migration.
        let py_writes: Vec<&str> = python_columns("writes")
            .filter(|c| *c != TASK_PATH)
            .collect();
        if with_task_path(&w, &py_writes) {
            return Ok(StoreLayout::SqlitePython);
        }
        if !same_columns(&w, &py_writes) {
            return Ok(foreign("writes", &w));
        }
        // The statement text first: each saver's is its own. Rows only for a text
        // neither wrote (a file rebuilt from a dump, a hand-made schema).
        let says = if [cp_sql, w_sql] == JS_SQLITE_STATEMENTS {
            SchemaSays::Js
        } else if [cp_sql, w_sql] == PY_SQLITE_STATEMENTS {
            SchemaSays::Python
        } else {
            SchemaSays::Either
        };
        let js = match says.settled() {
            Some(js) => js,
            None => numeric_versions(conn)?,
        };
        Ok(if js {
            StoreLayout::SqliteJs
        } else {
            StoreLayout::SqlitePythonBeforeTaskPath
        })
    }
}

#[cfg(feature = "sqlite")]
pub use sqlite_rows::read_sqlite_rows;

#[cfg(feature = "sqlite")]
mod sqlite_rows {
    use rusqlite::types::ValueRef;
    use rusqlite::{Connection, Row};

    use super::StoreLayout;
    use crate::saver::error::SaverFault;
    use crate::saver::rows::{RawCheckpointRow, RawRows, RawWriteRow};
    use crate::saver::Result;
    use crate::serializer::{tags, TypedBytes};

    fn storage(e: rusqlite::Error) -> crate::Error {
        SaverFault::Storage {
            operation: "read rows",
            source: Box::new(e),
        }
        .into()
    }

    /// A BLOB or TEXT cell as bytes; NULL as empty (what Python's savers read as
    /// "no value"); a number as its decimal text.
    fn bytes(row: &Row<'_>, i: usize) -> rusqlite::Result<Vec<u8>> {
        Ok(match row.get_ref(i)? {
            ValueRef::Null => Vec::new(),
            ValueRef::Blob(b) | ValueRef::Text(b) => b.to_vec(),
            ValueRef::Integer(n) => n.to_string().into_bytes(),
            ValueRef::Real(f) => f.to_string().into_bytes(),
        })
    }

    fn collect<T>(
        conn: &Connection,
        sql: &str,
        f: impl FnMut(&Row<'_>) -> rusqlite::Result<T>,
    ) -> Result<Vec<T>> {
        let mut stmt = conn.prepare(sql).map_err(storage)?;
        let rows = stmt
            .query_map([], f)
            .map_err(storage)?
            .collect::<std::result::Result<Vec<_>, _>>()
            .map_err(storage)?;
        Ok(rows)
    }

    /// Every checkpoint and pending-write row of an SQLite store in any known
    /// SQLite layout, as stored, with only `SELECT`s (run it on
    /// [`open_sqlite_read_only`](super::open_sqlite_read_only)'s connection):
    ///
    /// - [`SqlitePython`](StoreLayout::SqlitePython),
    ///   [`SqlitePythonBeforeTaskPath`](StoreLayout::SqlitePythonBeforeTaskPath) and
    ///   [`SqliteJs`](StoreLayout::SqliteJs): the rows as `SqliteSaver::export_rows`
    ///   returns them; a file without `task_path` gives `""`, the default Python's
    ///   migration gives those rows.
    /// - [`SqliteThreadTs`](StoreLayout::SqliteThreadTs) (LangGraph 0.1):
    ///   `checkpoint_id` is `thread_ts`, the parent is `parent_ts`, the namespace
    ///   `""`, the task path `""`; checkpoints and writes are tagged
    ///   [`tags::JSON`], as LangGraph 0.1's serializer wrote them. Unlike today's
    ///   rows the checkpoint JSON still holds `channel_values`, and datetimes in it
    ///   are `lc: 2` constructors (which today's Python reads back as `None`): a
    ///   copy into today's layout has to convert them, not move the bytes.
    ///
    /// Checkpoints are ordered by thread, namespace, id; writes by thread,
    /// namespace, checkpoint, task path, task id, index. Blobs are empty: SQLite
    /// stores channel values inside the checkpoint.
    ///
    /// # Errors
    /// [`ErrorKind::Schema`](crate::ErrorKind::Schema) for a layout that is not an SQLite one (or
    /// [`Empty`](StoreLayout::Empty) / [`Foreign`](StoreLayout::Foreign));
    /// [`ErrorKind::Storage`](crate::ErrorKind::Storage) if SQLite fails or a cell has the wrong type.
    pub fn read_sqlite_rows(conn: &Connection, layout: &StoreLayout) -> Result<RawRows> {
        let (checkpoints_sql, writes_sql) = match layout {
            StoreLayout::SqlitePython => (
                PY_CHECKPOINTS_SQL,
                "SELECT thread_id, checkpoint_ns, checkpoint_id, task_id, idx, channel, type, \
                 value, task_path FROM writes \
                 ORDER BY thread_id, checkpoint_ns, checkpoint_id, task_path, task_id, idx",
            ),
            StoreLayout::SqlitePythonBeforeTaskPath | StoreLayout::SqliteJs => (
                PY_CHECKPOINTS_SQL,
                "SELECT thread_id, checkpoint_ns, checkpoint_id, task_id, idx, channel, type, \
                 value, '' FROM writes \
                 ORDER BY thread_id, checkpoint_ns, checkpoint_id, task_id, idx",
            ),
            StoreLayout::SqliteThreadTs { .. } => (
                "SELECT thread_id, '', thread_ts, parent_ts, 'json', checkpoint, metadata \
                 FROM checkpoints ORDER BY thread_id, thread_ts",
                "SELECT thread_id, '', thread_ts, task_id, idx, channel, 'json', value, '' \
                 FROM writes ORDER BY thread_id, thread_ts, task_id, idx",
            ),
            other => {
                return Err(SaverFault::Schema {
                    reason: format!("cannot read SQLite rows of a store detected as: {other}"),
                }
                .into())
            }
        };
        let checkpoints = collect(conn, checkpoints_sql, |r| {
            Ok(RawCheckpointRow {
                thread_id: r.get(0)?,
                checkpoint_ns: r.get(1)?,
                checkpoint_id: r.get(2)?,
                parent_checkpoint_id: r.get(3)?,
                checkpoint: TypedBytes::new(
                    r.get::<_, Option<String>>(4)?.unwrap_or_default(),
                    bytes(r, 5)?,
                ),
                metadata: TypedBytes::new(tags::JSON, bytes(r, 6)?),
            })
        })?;
        let writes = collect(conn, writes_sql, |r| {
            Ok(RawWriteRow {
                thread_id: r.get(0)?,
                checkpoint_ns: r.get(1)?,
                checkpoint_id: r.get(2)?,
                task_id: r.get(3)?,
                idx: r.get(4)?,
                channel: r.get(5)?,
                value: TypedBytes::new(
                    r.get::<_, Option<String>>(6)?.unwrap_or_default(),
                    bytes(r, 7)?,
                ),
                task_path: r.get(8)?,
            })
        })?;
        Ok(RawRows {
            checkpoints,
            blobs: Vec::new(),
            writes,
        })
    }

    const PY_CHECKPOINTS_SQL: &str = "SELECT thread_id, checkpoint_ns, checkpoint_id, \
        parent_checkpoint_id, type, checkpoint, metadata FROM checkpoints \
        ORDER BY thread_id, checkpoint_ns, checkpoint_id";
}

#[cfg(feature = "postgres")]
pub use postgres_detect::detect_postgres;

#[cfg(feature = "postgres")]
mod postgres_detect {
    use tokio_postgres::Client;

    use super::{foreign, same_columns, with_task_path, SchemaSays, StoreLayout, PY_CHECKPOINTS};
    use crate::saver::postgres::PgFault;
    use crate::saver::Result;

    const PG_BLOBS: &[&str] = &[
        "thread_id",
        "checkpoint_ns",
        "channel",
        "version",
        "type",
        "blob",
    ];
    const PG_WRITES: &[&str] = &[
        "thread_id",
        "checkpoint_ns",
        "checkpoint_id",
        "task_id",
        "idx",
        "channel",
        "type",
        "blob",
    ];
    const SHALLOW_CHECKPOINTS: &[&str] = &[
        "thread_id",
        "checkpoint_ns",
        "type",
        "checkpoint",
        "metadata",
    ];
    const SHALLOW_BLOBS: &[&str] = &["thread_id", "checkpoint_ns", "channel", "type", "blob"];

    fn db(source: tokio_postgres::Error) -> crate::Error {
        PgFault::Db {
            operation: "detect layout",
            source,
        }
        .into()
    }

    fn quote(name: &str) -> String {
        format!("\"{}\"", name.replace('"', "\"\""))
    }

    /// Which saver wrote the tables in `schema` (`"public"` for Python's default).
    /// Runs only `SELECT`s: the catalog, `max(v)` of `checkpoint_migrations`, and —
    /// for a store at migrations both Python's and LangGraphJS's savers reach — whether
    /// a sample of checkpoints has numeric channel versions.
    ///
    /// # Errors
    /// [`ErrorKind::Storage`](crate::ErrorKind::Storage) if a query fails.
    pub async fn detect_postgres(client: &Client, schema: &str) -> Result<StoreLayout> {
        let rows = client
            .query(
                "SELECT table_name::text, column_name::text FROM information_schema.columns \
                 WHERE table_schema = $1 AND table_name IN \
                 ('checkpoints', 'checkpoint_blobs', 'checkpoint_writes', 'checkpoint_migrations') \
                 ORDER BY table_name, ordinal_position",
                &[&schema],
            )
            .await
            .map_err(db)?;
        let cols = |table: &str| -> Option<Vec<String>> {
            let c: Vec<String> = rows
                .iter()
                .filter(|r| r.get::<_, String>(0) == table)
                .map(|r| r.get::<_, String>(1))
                .collect();
            (!c.is_empty()).then_some(c)
        };
        let (cp, blobs, writes, has_migrations) = (
            cols("checkpoints"),
            cols("checkpoint_blobs"),
            cols("checkpoint_writes"),
            cols("checkpoint_migrations").is_some(),
        );
        let q = |t: &str| format!("{}.{}", quote(schema), quote(t));
        let migrations: Option<i32> = if has_migrations {
            client
                .query_one(
                    &format!("SELECT max(v) FROM {}", q("checkpoint_migrations")),
                    &[],
                )
                .await
                .map_err(db)?
                .get::<_, Option<i32>>(0)
        } else {
            None
        };
        let (Some(cp), Some(blobs), Some(writes)) = (cp, blobs, writes) else {
            if rows.is_empty() || (has_migrations && migrations.is_none() && rows.len() == 1) {
                return Ok(StoreLayout::Empty);
            }
            return Ok(StoreLayout::Foreign {
                reason: format!(
                    "schema {schema} has only some of the saver tables (migrations {})",
                    migrations.map_or("none".to_owned(), |v| format!("0..={v}"))
                ),
            });
        };
        if has_migrations && migrations.is_none() {
            return Ok(StoreLayout::Foreign {
                reason: "checkpoint_migrations exists but is empty while the tables exist"
                    .to_owned(),
            });
        }
        if same_columns(&cp, SHALLOW_CHECKPOINTS) {
            if !same_columns(&blobs, SHALLOW_BLOBS) {
                return Ok(foreign("checkpoint_blobs", &blobs));
            }
            if !(same_columns(&writes, PG_WRITES) || with_task_path(&writes, PG_WRITES)) {
                return Ok(foreign("checkpoint_writes", &writes));
            }
            return Ok(StoreLayout::PostgresShallow { migrations });
        }
        if !same_columns(&cp, PY_CHECKPOINTS) {
            return Ok(foreign("checkpoints", &cp));
        }
        if !same_columns(&blobs, PG_BLOBS) {
            return Ok(foreign("checkpoint_blobs", &blobs));
        }
        let task_path = with_task_path(&writes, PG_WRITES);
        if !task_path && !same_columns(&writes, PG_WRITES) {
            return Ok(foreign("checkpoint_writes", &writes));
        }
        let migrated_task_path = migrations.is_some_and(|v| v >= super::CURRENT_POSTGRES_MIGRATION);
        // 2.0.12 numbered its migrations without the no-op 5: its `task_path` is 8.
        if task_path && migrations == Some(super::CURRENT_POSTGRES_MIGRATION - 1) {
            return Ok(StoreLayout::PostgresPythonTaskPathAt8);
        }
        if task_path != migrated_task_path {
            return Ok(StoreLayout::Foreign {
                reason: format!(
                    "checkpoint_writes {} task_path but checkpoint_migrations is at {}",
                    if task_path { "has" } else { "lacks" },
                    migrations.map_or("none".to_owned(), |v| v.to_string())
                ),
            });
        }
        // Only Python's saver leaves a store without `checkpoint_migrations` (1.0.0) or
        // with `task_path`; LangGraphJS's tables at its migrations 0..=4 are Python's
        // column for column, so there the rows decide.
        let says = match migrations {
            Some(_) if !task_path => SchemaSays::Either,
            _ => SchemaSays::Python,
        };
        let js = match says.settled() {
            Some(js) => js,
            None => numeric_versions(client, &q).await?,
        };
        Ok(match migrations {
            Some(v) if js => StoreLayout::PostgresJs { migrations: v },
            _ => StoreLayout::PostgresPython { migrations },
        })
    }

    /// A sample of checkpoints has a numeric channel version: LangGraphJS's (every
    /// Python saver writes strings). `json` typed blobs are no evidence: Python's
    /// serializer wrote them up to `langgraph-checkpoint` 1.0.9.
    async fn numeric_versions(client: &Client, q: &impl Fn(&str) -> String) -> Result<bool> {
        let sql = format!(
            "SELECT EXISTS (SELECT 1 FROM (SELECT checkpoint FROM {c} LIMIT 100) s, \
                jsonb_each(CASE WHEN jsonb_typeof(s.checkpoint -> 'channel_versions') = 'object' \
                    THEN s.checkpoint -> 'channel_versions' ELSE '{{}}'::jsonb END) e \
                WHERE jsonb_typeof(e.value) = 'number')",
            c = q("checkpoints"),
        );
        Ok(client
            .query_one(&sql, &[])
            .await
            .map_err(db)?
            .get::<_, bool>(0))
    }
}
