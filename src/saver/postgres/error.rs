//! What the Postgres saver refuses or what the server reported, as the crate's
//! [`Error`].

use crate::error::Error;
use crate::kind::ErrorKind;

/// What the Postgres saver refuses or what the server reported: each variant's
/// message, kind and context, turned into the crate's [`Error`] at once with `From`.
///
/// The message of a driver or pool error says what happened without walking
/// `source()`: the server's SQLSTATE, message, detail and hint; for a connection that
/// could not be made, the server's address (when the saver knows it) and the cause,
/// e.g. `connection refused`. It never repeats the text of the errors under it, so a
/// printed error chain shows each text once: the driver's error is the `source()`
/// ([`Error::as_postgres`]), and under a failed connection the operating system's
/// error.
#[derive(Debug)]
pub(crate) enum PgFault {
    /// The server (or the connection to it) reported an error.
    Db {
        /// The saver operation, e.g. `"put"`.
        operation: &'static str,
        /// The driver's error (SQLSTATE in `source.code()`).
        source: tokio_postgres::Error,
    },
    /// No connection could be taken from the pool.
    Pool {
        /// The saver operation.
        operation: &'static str,
        /// The pool's error.
        source: deadpool_postgres::PoolError,
        /// The server's `host:port` (several, comma-separated) when the saver built
        /// the pool from a connection string.
        target: Option<String>,
    },
    /// The pool could not be built from the given configuration, or the connection
    /// string does not parse.
    Config {
        /// What was wrong.
        reason: String,
    },
    /// The schema name is not a plain identifier (`[A-Za-z_][A-Za-z0-9_$]*`, at most
    /// 63 bytes).
    InvalidSchemaName {
        /// The name as given.
        name: String,
        /// What was wrong.
        reason: &'static str,
    },
    /// `verify`: there is no `checkpoint_migrations` table (run `setup` first).
    SchemaMissing {
        /// The schema searched (`search_path` when none was configured).
        schema: String,
    },
    /// `verify`/`setup`: the tables have the layout of Python's deprecated
    /// `ShallowPostgresSaver` (no `checkpoint_id` in `checkpoints`).
    ShallowSchema {
        /// The schema searched.
        schema: String,
    },
    /// `verify`/`setup`: the database was migrated past the last version this saver
    /// knows, by a newer saver whose layout it cannot vouch for.
    SchemaTooNew {
        /// The schema searched.
        schema: String,
        /// `max(v)` in `checkpoint_migrations`.
        found: i32,
        /// The last migration this saver knows.
        known: i32,
    },
    /// `verify`: migrations are missing, or a table or column they create is absent.
    SchemaIncomplete {
        /// The schema searched.
        schema: String,
        /// What is missing.
        reason: String,
    },
    /// `setup`: another process held the migration lock for longer than the timeout.
    LockTimeout {
        /// How long `setup` waited.
        waited_ms: u128,
    },
    /// A value that must go into a JSONB column (checkpoint, metadata, `list` filter)
    /// has no JSONB form.
    NotJsonb {
        /// `checkpoint`, `metadata` or `filter`.
        what: &'static str,
        /// Where in the value, e.g. `$.parents.x`.
        path: String,
        /// Why, e.g. "NaN has no JSONB form".
        reason: String,
    },
    /// A stored JSONB or key column could not be read.
    UnreadableColumn {
        /// Thread, namespace, checkpoint id and column.
        location: String,
        /// What was wrong.
        reason: String,
    },
}

impl PgFault {
    fn kind(&self) -> ErrorKind {
        use PgFault as P;
        match self {
            P::Db { .. } => ErrorKind::Storage,
            P::Pool { .. } => ErrorKind::ConnectionUnavailable,
            P::Config { .. } => ErrorKind::InvalidStoreLocation,
            P::InvalidSchemaName { .. } => ErrorKind::InvalidSchemaName,
            P::SchemaMissing { .. } => ErrorKind::SchemaMissing,
            P::ShallowSchema { .. } => ErrorKind::ShallowSchema,
            P::SchemaTooNew { .. } => ErrorKind::SchemaTooNew,
            P::SchemaIncomplete { .. } => ErrorKind::SchemaIncomplete,
            P::LockTimeout { .. } => ErrorKind::LockTimeout,
            P::NotJsonb { .. } => ErrorKind::NotJsonb,
            P::UnreadableColumn { .. } => ErrorKind::UnreadableColumn,
        }
    }
}

/// The fault's kind and message; the operation ([`Error::operation`]); the schema,
/// name or path ([`Error::subject`]); the driver's error as `source()` (for a pool that
/// could not connect, the driver's error under it).
impl From<PgFault> for Error {
    #[cold]
    fn from(fault: PgFault) -> Self {
        use PgFault as P;
        let kind = fault.kind();
        let message = fault.to_string();
        match fault {
            P::Db { operation, source } => {
                Error::with_source(kind, message, source).with_operation(operation)
            }
            P::Pool {
                operation, source, ..
            } => match source {
                deadpool_postgres::PoolError::Backend(e) => {
                    Error::with_source(kind, message, e).with_operation(operation)
                }
                other => Error::with_source(kind, message, other).with_operation(operation),
            },
            P::InvalidSchemaName { name, .. } => Error::new(kind, message).with_subject(name),
            P::SchemaMissing { schema }
            | P::ShallowSchema { schema }
            | P::SchemaTooNew { schema, .. }
            | P::SchemaIncomplete { schema, .. } => Error::new(kind, message).with_subject(schema),
            P::NotJsonb { path, .. } => Error::new(kind, message).with_subject(path),
            P::Config { .. } | P::LockTimeout { .. } | P::UnreadableColumn { .. } => {
                Error::new(kind, message)
            }
        }
    }
}

impl std::fmt::Display for PgFault {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        use PgFault as P;
        match self {
            P::Db { operation, source } => write!(f, "postgres {operation}: {}", explain(source).0),
            P::Pool {
                operation,
                source,
                target,
            } => {
                let to = target.as_deref().unwrap_or("the server");
                match source {
                    deadpool_postgres::PoolError::Backend(e) => {
                        write!(
                            f,
                            "postgres {operation}: cannot connect to {to}: {}",
                            explain(e).0
                        )
                    }
                    other => write!(
                        f,
                        "postgres {operation}: no connection to {to} from the pool: {other}"
                    ),
                }
            }
            P::Config { reason } => write!(f, "postgres configuration: {reason}"),
            P::InvalidSchemaName { name, reason } => {
                write!(f, "invalid schema name {name:?}: {reason}")
            }
            P::SchemaMissing { schema } => {
                write!(f, "no checkpoint schema in {schema}: run setup() first")
            }
            P::ShallowSchema { schema } => write!(
                f,
                "the checkpoint tables in {schema} belong to ShallowPostgresSaver (no \
                 checkpoints.checkpoint_id or checkpoint_blobs.version); this saver cannot \
                 share them"
            ),
            P::SchemaTooNew {
                schema,
                found,
                known,
            } => write!(
                f,
                "checkpoint schema in {schema} is at migration {found}, newer than the last \
                 known ({known})"
            ),
            P::SchemaIncomplete { schema, reason } => {
                write!(f, "checkpoint schema in {schema} is incomplete: {reason}")
            }
            P::LockTimeout { waited_ms } => write!(
                f,
                "setup: the migration advisory lock was not free within {waited_ms} ms"
            ),
            P::NotJsonb { what, path, reason } => write!(f, "{what} at {path}: {reason}"),
            P::UnreadableColumn { location, reason } => {
                write!(f, "stored row {location}: {reason}")
            }
        }
    }
}

/// What a driver error says, as one line, and the I/O error at its root. The line
/// names the I/O error only by its kind (`connection refused`), so the line and the
/// I/O error's own text (`Connection refused (os error 111)`) do not repeat each other.
pub(crate) fn explain(e: &tokio_postgres::Error) -> (String, Option<&std::io::Error>) {
    if let Some(db) = e.as_db_error() {
        let mut text = format!(
            "server error {} ({}): {}",
            db.code().code(),
            db.severity(),
            db.message()
        );
        if let Some(detail) = db.detail() {
            text.push_str("; detail: ");
            text.push_str(detail);
        }
        if let Some(hint) = db.hint() {
            text.push_str("; hint: ");
            text.push_str(hint);
        }
        return (text, None);
    }
    // The driver's own text is its `Display` (the `source()` of the crate's error), so
    // the line starts below it: the causes under it, the I/O error by its kind.
    let mut parts: Vec<String> = Vec::new();
    let mut io = None;
    let mut cur = std::error::Error::source(e);
    while let Some(c) = cur {
        if let Some(found) = c.downcast_ref::<std::io::Error>() {
            parts.push(found.kind().to_string());
            io = Some(found);
            break;
        }
        let text = c.to_string();
        if !parts.iter().any(|p| p.contains(&text)) {
            parts.push(text);
        }
        cur = c.source();
    }
    if parts.is_empty() {
        parts.push(e.to_string());
    }
    (parts.join(": "), io)
}
