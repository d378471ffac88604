//! [`SaverError`]: what a checkpoint saver refuses or cannot read.

use std::fmt;

use crate::compression::CompressionError;
use crate::crypto::CryptoError;
use crate::json::JsonError;
use crate::kind::ErrorKind;
use crate::msgpack::{DecodeError, EncodeError};
use crate::serializer::SerializerError;
use crate::typed::TypedError;

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

/// Errors of the checkpoint savers ([`crate::saver`]): what a saver refuses, and the
/// errors of the layers below it (serializer, encryption, the Postgres driver) that a
/// saver call met. Converts into the crate's [`Error`](crate::Error) with `From`
/// (the lower layers' errors become their own variants there).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SaverError {
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
    /// A stored row could not be deserialized: corrupt bytes, or ciphertext the
    /// serializer cannot decrypt (wrong key). Other rows and threads stay readable.
    #[error("stored {kind} row {location} is unreadable: {source}")]
    UnreadableRow {
        /// Which kind of row.
        kind: RowKind,
        /// Where: thread, namespace, checkpoint id and (for blobs and writes) the key.
        location: String,
        /// Why, as the serializer reported it.
        source: Box<SaverError>,
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
    /// There is no checkpoint store where one was to be opened (the file does not exist,
    /// or holds none of LangGraph's tables) and creating one was not asked for: opening
    /// writes nothing, so a mistyped path is an error instead of a new empty store.
    #[error("no checkpoint store at {location}: {reason}")]
    StoreNotFound {
        /// The path or address that was opened.
        location: String,
        /// What was found there, and how to create a store if one is wanted.
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
    /// A write the durability wrapper (`saver::durable::DurableSaver`, feature
    /// `durable`) queued failed when its background writer ran it. The write
    /// is kept at the head of its queue (not dropped): `flush` retries it,
    /// `discard_failed` removes it.
    #[error("queued {operation} of thread {thread_id:?} (checkpoint {checkpoint_id:?}) failed in the background: {source}")]
    WriteBehind {
        /// The queued operation: `"put"` or `"put_writes"`.
        operation: &'static str,
        /// Its thread.
        thread_id: String,
        /// The checkpoint it stores (`put`) or writes against (`put_writes`).
        checkpoint_id: String,
        /// The wrapped saver's error (shared: every call reports the same failure).
        source: std::sync::Arc<SaverError>,
    },
    /// `flush` did not finish within its timeout; the writes it waited for stay queued.
    #[error("flush did not finish within {timeout:?}: {pending} writes still queued")]
    FlushTimeout {
        /// The timeout given.
        timeout: std::time::Duration,
        /// Writes still queued or held when it expired.
        pending: usize,
    },
    /// A call to a durability wrapper after `shutdown`.
    #[error("{operation}: the durable saver was shut down")]
    Closed {
        /// The operation refused.
        operation: &'static str,
    },
    /// The serializer could not write or read a value.
    #[error(transparent)]
    Serializer(SerializerError),
    /// Encryption, decryption, key configuration or compression failed.
    #[error(transparent)]
    Crypto(CryptoError),
    /// The Postgres saver's server, pool or schema reported an error (feature
    /// `postgres`).
    #[cfg(feature = "postgres")]
    #[error(transparent)]
    Postgres(Box<super::postgres::PostgresError>),
}

impl SaverError {
    /// The crate-wide kind, e.g. [`ErrorKind::MissingThreadId`]; a lower layer's
    /// error has its own kind.
    pub fn kind(&self) -> ErrorKind {
        match self {
            SaverError::MissingThreadId { .. } => ErrorKind::MissingThreadId,
            SaverError::MissingCheckpointId { .. } => ErrorKind::MissingCheckpointId,
            SaverError::InvalidConfig { .. } => ErrorKind::InvalidConfig,
            SaverError::InvalidCheckpoint { .. } => ErrorKind::InvalidCheckpoint,
            SaverError::InvalidMetadata { .. } => ErrorKind::InvalidMetadata,
            SaverError::InvalidVersion { .. } => ErrorKind::InvalidVersion,
            SaverError::UnreadableRow { .. } => ErrorKind::UnreadableRow,
            SaverError::Storage { .. } => ErrorKind::Storage,
            SaverError::Schema { .. } => ErrorKind::Schema,
            SaverError::StoreNotFound { .. } => ErrorKind::StoreNotFound,
            SaverError::InvalidFilter { .. } => ErrorKind::InvalidFilter,
            SaverError::Unsupported { .. } => ErrorKind::Unsupported,
            SaverError::WriteBehind { .. } => ErrorKind::WriteBehind,
            SaverError::FlushTimeout { .. } => ErrorKind::FlushTimeout,
            SaverError::Closed { .. } => ErrorKind::SaverClosed,
            SaverError::Serializer(e) => e.kind(),
            SaverError::Crypto(e) => e.kind(),
            #[cfg(feature = "postgres")]
            SaverError::Postgres(e) => e.kind(),
        }
    }
}

impl From<&SaverError> for ErrorKind {
    fn from(e: &SaverError) -> Self {
        e.kind()
    }
}

/// A serializer error; one that carries a [`CryptoError`] or a [`CompressionError`] (an
/// encrypting or compressing serializer's, through [`SerializerError::Other`]) becomes
/// [`SaverError::Crypto`].
impl From<SerializerError> for SaverError {
    fn from(e: SerializerError) -> Self {
        match e {
            SerializerError::Other { kind, source } => match source.downcast::<CryptoError>() {
                Ok(crypto) => SaverError::Crypto(*crypto),
                Err(source) => match source.downcast::<CompressionError>() {
                    Ok(compression) => SaverError::Crypto((*compression).into()),
                    Err(source) => SaverError::Serializer(SerializerError::Other { kind, source }),
                },
            },
            other => SaverError::Serializer(other),
        }
    }
}

/// A compression error, named as the crypto layer names it ([`SaverError::Crypto`]).
impl From<CompressionError> for SaverError {
    fn from(e: CompressionError) -> Self {
        SaverError::Crypto(e.into())
    }
}

/// A crypto error; [`CryptoError::Serializer`] becomes [`SaverError::Serializer`].
impl From<CryptoError> for SaverError {
    fn from(e: CryptoError) -> Self {
        match e {
            CryptoError::Serializer(e) => e.into(),
            other => SaverError::Crypto(other),
        }
    }
}

macro_rules! through_serializer {
    ($($ty:ty),*) => {$(
        impl From<$ty> for SaverError {
            fn from(e: $ty) -> Self {
                SerializerError::from(e).into()
            }
        }
    )*};
}
through_serializer!(DecodeError, EncodeError, TypedError, JsonError);

#[cfg(feature = "postgres")]
impl From<super::postgres::PostgresError> for SaverError {
    fn from(e: super::postgres::PostgresError) -> Self {
        SaverError::Postgres(Box::new(e))
    }
}

/// `Result` with the saver layer's [`SaverError`].
pub type Result<T, E = SaverError> = std::result::Result<T, E>;

/// Where a checkpoint row is: `(thread "t", ns "", checkpoint "1")`.
pub(crate) fn row_location(thread: &str, ns: &str, id: &str) -> String {
    format!("(thread {thread:?}, ns {ns:?}, checkpoint {id:?})")
}

/// [`SaverError::UnreadableRow`] of `source`.
pub(crate) fn unreadable(
    kind: RowKind,
    location: String,
    source: impl Into<SaverError>,
) -> SaverError {
    SaverError::UnreadableRow {
        kind,
        location,
        source: Box::new(source.into()),
    }
}

impl SaverError {
    pub(crate) fn invalid_checkpoint(field: impl Into<String>, reason: impl Into<String>) -> Self {
        SaverError::InvalidCheckpoint {
            field: field.into(),
            reason: reason.into(),
        }
    }
}
