//! What a checkpoint saver refuses or cannot read, as the crate's [`Error`].

use crate::error::Error;
pub(crate) use crate::error::{RowKind, RowLocation};
use crate::kind::ErrorKind;

/// What a checkpoint saver refuses: each variant's message, kind and context, turned
/// into the crate's [`Error`] at once with `From`. It never leaves the saver layer.
#[derive(Debug, thiserror::Error)]
pub(crate) enum SaverFault {
    /// The config has no `thread_id` (Python raises `KeyError: 'thread_id'`).
    #[error(
        "{operation}: the config has no thread_id (put it under configurable: \
         {{\"configurable\": {{\"thread_id\": \"...\"}}}}, or CheckpointConfig::new)"
    )]
    MissingThreadId {
        /// The saver operation, e.g. `"put"`.
        operation: &'static str,
    },
    /// The config has no `checkpoint_id` where one is required (`put_writes`).
    #[error("{operation}: the config has no checkpoint_id")]
    MissingCheckpointId {
        /// The saver operation, e.g. `"put_writes"`.
        operation: &'static str,
    },
    /// A config value did not have the shape of a `RunnableConfig`.
    #[error("invalid config: {reason}")]
    InvalidConfig {
        /// What was wrong.
        reason: String,
    },
    /// A value did not have the shape of a `Checkpoint`.
    #[error("invalid checkpoint at {field}: {reason}")]
    InvalidCheckpoint {
        /// The field, e.g. `channel_versions.messages`.
        field: String,
        /// What was wrong.
        reason: String,
    },
    /// A value did not have the shape of `CheckpointMetadata` (a map with string keys).
    #[error("invalid checkpoint metadata: {reason}")]
    InvalidMetadata {
        /// What was wrong.
        reason: String,
    },
    /// A channel version could not be read or advanced.
    #[error("invalid channel version {version}: {reason}")]
    InvalidVersion {
        /// The version as given.
        version: String,
        /// What was wrong.
        reason: String,
    },
    /// The database under a saver failed (I/O, a constraint, a lock that outlived the
    /// busy timeout, …).
    #[error("{operation}: the database failed: {source}")]
    #[cfg_attr(not(feature = "sqlite"), allow(dead_code))]
    Storage {
        /// The saver operation, e.g. `"put"`, or `"open"` / `"setup"`.
        operation: &'static str,
        /// The driver's error.
        #[source]
        source: Box<dyn std::error::Error + Send + Sync + 'static>,
    },
    /// The database holds tables of the saver's names with another layout (another
    /// saver's, an older or newer schema): refused rather than misread.
    #[error("unknown database layout: {reason}")]
    #[cfg_attr(not(any(feature = "sqlite", feature = "postgres")), allow(dead_code))]
    Schema {
        /// What differs, e.g. which table lacks which column.
        reason: String,
    },
    /// There is no checkpoint store where one was to be opened (the file does not exist,
    /// or holds none of LangGraph's tables) and creating one was not asked for: opening
    /// writes nothing, so a mistyped path is an error instead of a new empty store.
    #[error("no checkpoint store at {location}: {reason}")]
    #[cfg_attr(not(feature = "sqlite"), allow(dead_code))]
    StoreNotFound {
        /// The path or address that was opened.
        location: String,
        /// What was found there, and how to create a store if one is wanted.
        reason: String,
    },
    /// A `list` filter the saver cannot express (a key outside Python's allowed
    /// characters, a value with no SQL equality).
    #[error("invalid list filter on key {key:?}: {reason}")]
    #[cfg_attr(not(feature = "sqlite"), allow(dead_code))]
    InvalidFilter {
        /// The metadata key.
        key: String,
        /// What was wrong.
        reason: String,
    },
    /// `flush` did not finish within its timeout; the writes it waited for stay queued.
    #[error("flush did not finish within {timeout:?}: {pending} writes still queued")]
    #[cfg_attr(not(feature = "durable"), allow(dead_code))]
    FlushTimeout {
        /// The timeout given.
        timeout: std::time::Duration,
        /// Writes still queued or held when it expired.
        pending: usize,
    },
    /// A call to a durability wrapper after `shutdown`.
    #[error("{operation}: the durable saver was shut down")]
    #[cfg_attr(not(feature = "durable"), allow(dead_code))]
    Closed {
        /// The operation refused.
        operation: &'static str,
    },
}

impl SaverFault {
    fn kind(&self) -> ErrorKind {
        match self {
            SaverFault::MissingThreadId { .. } => ErrorKind::MissingThreadId,
            SaverFault::MissingCheckpointId { .. } => ErrorKind::MissingCheckpointId,
            SaverFault::InvalidConfig { .. } => ErrorKind::InvalidConfig,
            SaverFault::InvalidCheckpoint { .. } => ErrorKind::InvalidCheckpoint,
            SaverFault::InvalidMetadata { .. } => ErrorKind::InvalidMetadata,
            SaverFault::InvalidVersion { .. } => ErrorKind::InvalidVersion,
            SaverFault::Storage { .. } => ErrorKind::Storage,
            SaverFault::Schema { .. } => ErrorKind::Schema,
            SaverFault::StoreNotFound { .. } => ErrorKind::StoreNotFound,
            SaverFault::InvalidFilter { .. } => ErrorKind::InvalidFilter,
            SaverFault::FlushTimeout { .. } => ErrorKind::FlushTimeout,
            SaverFault::Closed { .. } => ErrorKind::SaverClosed,
        }
    }
}

/// The fault's kind and message, and its context: the operation
/// ([`Error::operation`]), the field, filter key, capability or store
/// ([`Error::subject`]), the writes still queued ([`Error::count`]); a database's error
/// as `source()` (`Error::as_sqlite`).
impl From<SaverFault> for Error {
    #[cold]
    fn from(fault: SaverFault) -> Self {
        let kind = fault.kind();
        let message = fault.to_string();
        let e = Error::new(kind, message.clone());
        match fault {
            SaverFault::MissingThreadId { operation }
            | SaverFault::MissingCheckpointId { operation }
            | SaverFault::Closed { operation } => e.with_operation(operation),
            SaverFault::InvalidCheckpoint { field, reason } => {
                e.with_subject(field).with_reason(reason)
            }
            SaverFault::InvalidVersion { version, reason } => {
                e.with_subject(version).with_reason(reason)
            }
            SaverFault::StoreNotFound { location, reason } => {
                e.with_subject(location).with_reason(reason)
            }
            SaverFault::InvalidFilter { key, reason } => e.with_subject(key).with_reason(reason),
            SaverFault::FlushTimeout { pending, .. } => e.with_count(pending),
            SaverFault::Storage { operation, source } => {
                Error::with_source(kind, message, source).with_operation(operation)
            }
            SaverFault::InvalidConfig { reason }
            | SaverFault::InvalidMetadata { reason }
            | SaverFault::Schema { reason } => e.with_reason(reason),
        }
    }
}

/// Where a checkpoint row is: `(thread "t", ns "", checkpoint "1")` (its kind is set
/// by [`unreadable`]).
pub(crate) fn row_location(thread: &str, ns: &str, id: &str) -> RowLocation {
    RowLocation::new(RowKind::Checkpoint, thread, ns, id)
}

/// [`ErrorKind::UnreadableRow`] of the `kind` row at `location`, `source` its cause.
pub(crate) fn unreadable(kind: RowKind, location: RowLocation, source: impl Into<Error>) -> Error {
    Error::unreadable_row(location.of_kind(kind), source.into())
}

/// [`ErrorKind::InvalidVersion`]: the next version after `version` does not fit in an
/// `i64`.
pub(crate) fn overflow(version: &str) -> Error {
    SaverFault::InvalidVersion {
        version: version.to_owned(),
        reason: "the next version does not fit in an i64".to_owned(),
    }
    .into()
}

/// [`ErrorKind::InvalidCheckpoint`] at `field`.
pub(crate) fn invalid_checkpoint(field: impl Into<String>, reason: impl Into<String>) -> Error {
    SaverFault::InvalidCheckpoint {
        field: field.into(),
        reason: reason.into(),
    }
    .into()
}

#[cfg(feature = "durable")]
/// [`ErrorKind::WriteBehind`]: a write the durability wrapper queued failed in the
/// background; `source` (shared: every call reports the same failure) is its cause.
pub(crate) fn write_behind(
    operation: &'static str,
    thread_id: &str,
    checkpoint_id: &str,
    source: std::sync::Arc<Error>,
) -> Error {
    let message = format!(
        "queued {operation} of thread {thread_id:?} (checkpoint {checkpoint_id:?}) failed in \
         the background: {source}"
    );
    Error::shared(ErrorKind::WriteBehind, message, source).with_operation(operation)
}
