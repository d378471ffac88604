//! [`SaverError`]: what a checkpoint saver refuses or cannot read.

use std::fmt;

use crate::error::Error;

/// Which kind of stored row a [`SaverError::UnreadableRow`] is about.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum RowKind {
    /// The checkpoint row (the checkpoint without `channel_values`).
    Checkpoint,
    /// The metadata row.
    Metadata,
    /// One channel value blob.
    Blob,
    /// One pending write.
    Write,
}

impl RowKind {
    /// A short name: `checkpoint`, `metadata`, `blob`, `write`.
    pub fn as_str(self) -> &'static str {
        match self {
            RowKind::Checkpoint => "checkpoint",
            RowKind::Metadata => "metadata",
            RowKind::Blob => "blob",
            RowKind::Write => "write",
        }
    }
}

impl fmt::Display for RowKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Errors of the checkpoint savers ([`crate::saver`]), wrapped in
/// [`Error::Saver`](crate::Error::Saver).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SaverError {
    /// The config has no `thread_id` (Python raises `KeyError: 'thread_id'`).
    #[error("{operation}: the config has no thread_id")]
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
    /// A stored row could not be deserialized: corrupt bytes, or ciphertext the
    /// serializer cannot decrypt (wrong key). Other rows and threads stay readable.
    #[error("stored {kind} row {location} is unreadable: {source}")]
    UnreadableRow {
        /// Which kind of row.
        kind: RowKind,
        /// Where: thread, namespace, checkpoint id and (for blobs and writes) the key.
        location: String,
        /// Why, as the serializer reported it.
        source: Box<Error>,
    },
    /// The database under a saver failed (I/O, a constraint, a lock that outlived the
    /// busy timeout, …).
    #[error("{operation}: the database failed: {source}")]
    Storage {
        /// The saver operation, e.g. `"put"`, or `"open"` / `"setup"`.
        operation: &'static str,
        /// The driver's error.
        source: Box<dyn std::error::Error + Send + Sync + 'static>,
    },
    /// The database holds tables of the saver's names with another layout (another
    /// saver's, an older or newer schema): refused rather than misread.
    #[error("unknown database layout: {reason}")]
    Schema {
        /// What differs, e.g. which table lacks which column.
        reason: String,
    },
    /// A `list` filter the saver cannot express (a key outside Python's allowed
    /// characters, a value with no SQL equality).
    #[error("invalid list filter on key {key:?}: {reason}")]
    InvalidFilter {
        /// The metadata key.
        key: String,
        /// What was wrong.
        reason: String,
    },
    /// The saver does not implement an extended capability.
    #[error("this saver does not support {capability}")]
    Unsupported {
        /// The capability's name, e.g. `"copy_thread"`.
        capability: &'static str,
    },
}

/// Where a checkpoint row is: `(thread "t", ns "", checkpoint "1")`.
pub(crate) fn row_location(thread: &str, ns: &str, id: &str) -> String {
    format!("(thread {thread:?}, ns {ns:?}, checkpoint {id:?})")
}

/// [`SaverError::UnreadableRow`] as the crate error.
pub(crate) fn unreadable(kind: RowKind, location: String, source: Error) -> Error {
    SaverError::UnreadableRow {
        kind,
        location,
        source: Box::new(source),
    }
    .into()
}

impl SaverError {
    pub(crate) fn invalid_checkpoint(field: impl Into<String>, reason: impl Into<String>) -> Self {
        SaverError::InvalidCheckpoint {
            field: field.into(),
            reason: reason.into(),
        }
    }
}
