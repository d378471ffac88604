//! [`StoreError`]: why a store could not be opened or an operation stopped.

use std::path::PathBuf;

use crate::crypto::CryptoError;

/// Errors of the store operations ([`crate::store`]).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum StoreError {
    /// The store argument is neither `sqlite:PATH`, a file path, nor a
    /// `postgres://`/`postgresql://` URL.
    #[error("invalid store {given:?}: {reason}")]
    InvalidLocation {
        /// The argument as given.
        given: String,
        /// What was wrong.
        reason: String,
    },
    /// The store's backend is not compiled in.
    #[error("{backend} stores need the crate feature `{feature}`, which this build does not have")]
    BackendDisabled {
        /// `sqlite` or `postgres`.
        backend: &'static str,
        /// The feature to turn on.
        feature: &'static str,
    },
    /// No file at the path (nothing is created).
    #[error("no SQLite store at {}: {reason}", path.display())]
    NotFound {
        /// The path.
        path: PathBuf,
        /// The operating system's answer.
        reason: String,
    },
    /// The database exists but is not a Python LangGraph checkpoint store (or not one of
    /// the layout this version knows): what was found.
    #[error("{location} is not a Python LangGraph checkpoint store: {found}")]
    NotAStore {
        /// The store.
        location: String,
        /// What it holds instead.
        found: String,
    },
    /// The store cannot be written (a read-only file, directory or server), and the
    /// operation writes.
    #[error("{location} cannot be written: {reason}")]
    ReadOnly {
        /// The store.
        location: String,
        /// Why.
        reason: String,
    },
    /// A writing operation on a store opened read-only.
    #[error("{operation} writes: open the store with Store::open_for_writing (or use a dry run)")]
    NotWritable {
        /// The operation.
        operation: &'static str,
    },
    /// A key is missing or malformed.
    #[error("keys: {0}")]
    Keys(#[from] CryptoError),
    /// SQLite reported an error.
    #[cfg(feature = "sqlite")]
    #[error("sqlite {operation}: {source}")]
    Sqlite {
        /// What was being done.
        operation: &'static str,
        /// SQLite's error.
        #[source]
        source: rusqlite::Error,
    },
    /// The Postgres server (or the connection to it) reported an error.
    #[cfg(feature = "postgres")]
    #[error("postgres {operation}: {source}")]
    Postgres {
        /// What was being done.
        operation: &'static str,
        /// The driver's error (SQLSTATE in `source.code()`).
        #[source]
        source: tokio_postgres::Error,
    },
    /// The Postgres connection kept failing: the sweep stopped. Every committed batch
    /// stays; the batch in flight was rolled back by the server. Run it again to resume.
    #[error("postgres: the connection was lost {attempts} time(s) in a row ({last}); stopped, nothing half-written: run again to resume")]
    ConnectionLost {
        /// Consecutive failures.
        attempts: u32,
        /// The last error.
        last: String,
    },
    /// A blocking task of the SQLite backend failed (panicked or was cancelled).
    #[error("sqlite: a blocking task failed: {0}")]
    Task(String),
    /// A stored value or row could not be read (store maintenance: inspect, copy):
    /// which, and why.
    #[error("{what}: {reason}")]
    Unreadable {
        /// The row.
        what: String,
        /// Why.
        reason: String,
    },
    /// The store's layout cannot be upgraded in place (store upgrade): copy it into a
    /// fresh store instead (`lgcodec store copy STORE NEW_STORE`), which reads every
    /// old layout.
    #[error("{location} ({layout}) cannot be upgraded in place: {reason}; copy it into a fresh store instead (lgcodec store copy {location} NEW_STORE)")]
    CannotUpgrade {
        /// The store.
        location: String,
        /// The layout found.
        layout: String,
        /// Why.
        reason: String,
    },
    /// A date for store prune is malformed, or no prune rule was given.
    #[error("prune: {reason} ({given:?})")]
    InvalidDate {
        /// The text as given.
        given: String,
        /// What was wrong.
        reason: String,
    },
    /// A backup file (store export/import) is malformed, or cannot be read or written.
    #[error("backup {file}: {reason}")]
    Backup {
        /// The file, with the line number when known.
        file: String,
        /// What was wrong.
        reason: String,
    },
}

impl StoreError {
    /// Whether the error is a lost Postgres connection (closed, terminated by the
    /// server): the operation may reconnect and retry the batch.
    pub fn is_connection_lost(&self) -> bool {
        match self {
            #[cfg(feature = "postgres")]
            StoreError::Postgres { source, .. } => {
                source.is_closed()
                    || std::error::Error::source(source).is_some_and(|s| s.is::<std::io::Error>())
                    || source.code().is_some_and(|c| {
                        let c = c.code();
                        c.starts_with("08") || c.starts_with("57P")
                    })
            }
            _ => false,
        }
    }
}
