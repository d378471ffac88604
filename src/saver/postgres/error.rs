//! [`PostgresError`]: what the Postgres saver refuses or what the server reported.

use crate::kind::ErrorKind;

/// Errors of [`PostgresSaver`](super::PostgresSaver), wrapped in
/// [`SaverError::Postgres`](crate::saver::SaverError::Postgres) (and the crate's
/// [`Error::Postgres`](crate::Error::Postgres)).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum PostgresError {
    /// The server (or the connection to it) reported an error.
    #[error("postgres {operation}: {source}")]
    Db {
        /// The saver operation, e.g. `"put"`.
        operation: &'static str,
        /// The driver's error (SQLSTATE in `source.code()`).
        #[source]
        source: tokio_postgres::Error,
    },
    /// No connection could be taken from the pool.
    #[error("postgres {operation}: no connection from the pool: {source}")]
    Pool {
        /// The saver operation.
        operation: &'static str,
        /// The pool's error.
        #[source]
        source: deadpool_postgres::PoolError,
    },
    /// The pool could not be built from the given configuration.
    #[error("postgres pool configuration: {reason}")]
    Config {
        /// What was wrong.
        reason: String,
    },
    /// The schema name is not a plain identifier (`[A-Za-z_][A-Za-z0-9_$]*`, at most
    /// 63 bytes).
    #[error("invalid schema name {name:?}: {reason}")]
    InvalidSchemaName {
        /// The name as given.
        name: String,
        /// What was wrong.
        reason: &'static str,
    },
    /// `verify`: there is no `checkpoint_migrations` table (run `setup` first).
    #[error("no checkpoint schema in {schema}: run setup() first")]
    SchemaMissing {
        /// The schema searched (`search_path` when none was configured).
        schema: String,
    },
    /// `verify`/`setup`: the tables have the layout of Python's deprecated
    /// `ShallowPostgresSaver` (no `checkpoint_id` in `checkpoints`).
    #[error("the checkpoint tables in {schema} belong to ShallowPostgresSaver (no checkpoints.checkpoint_id); this saver cannot share them")]
    ShallowSchema {
        /// The schema searched.
        schema: String,
    },
    /// `verify`/`setup`: the database was migrated past the last version this saver
    /// knows, by a newer saver whose layout it cannot vouch for.
    #[error("checkpoint schema in {schema} is at migration {found}, newer than the last known ({known})")]
    SchemaTooNew {
        /// The schema searched.
        schema: String,
        /// `max(v)` in `checkpoint_migrations`.
        found: i32,
        /// The last migration this saver knows.
        known: i32,
    },
    /// `verify`: migrations are missing, or a table or column they create is absent.
    #[error("checkpoint schema in {schema} is incomplete: {reason}")]
    SchemaIncomplete {
        /// The schema searched.
        schema: String,
        /// What is missing.
        reason: String,
    },
    /// `setup`: another process held the migration lock for longer than the timeout.
    #[error("setup: the migration advisory lock was not free within {waited_ms} ms")]
    LockTimeout {
        /// How long `setup` waited.
        waited_ms: u128,
    },
    /// A value that must go into a JSONB column (checkpoint, metadata, `list` filter)
    /// has no JSONB form.
    #[error("{what} at {path}: {reason}")]
    NotJsonb {
        /// `checkpoint`, `metadata` or `filter`.
        what: &'static str,
        /// Where in the value, e.g. `$.parents.x`.
        path: String,
        /// Why, e.g. "NaN has no JSONB form".
        reason: String,
    },
    /// A stored JSONB or key column could not be read.
    #[error("stored row {location}: {reason}")]
    UnreadableColumn {
        /// Thread, namespace, checkpoint id and column.
        location: String,
        /// What was wrong.
        reason: String,
    },
}

impl PostgresError {
    /// The SQLSTATE the server reported, if this is a server error.
    pub fn sqlstate(&self) -> Option<&str> {
        match self {
            PostgresError::Db { source, .. } => source.code().map(|c| c.code()),
            _ => None,
        }
    }
}

impl PostgresError {
    /// The crate-wide kind, e.g. [`ErrorKind::PostgresDb`].
    pub fn kind(&self) -> ErrorKind {
        use PostgresError as P;
        match self {
            P::Db { .. } => ErrorKind::PostgresDb,
            P::Pool { .. } => ErrorKind::PostgresPool,
            P::Config { .. } => ErrorKind::PostgresConfig,
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

impl From<&PostgresError> for ErrorKind {
    fn from(e: &PostgresError) -> Self {
        e.kind()
    }
}
