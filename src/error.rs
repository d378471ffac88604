//! Typed errors. Each says what was wrong and where (a byte offset or a path), and none
//! ever contains key material or decrypted bytes.

use std::fmt;

pub use crate::msgpack::{DecodeError, DecodeErrorKind, EncodeError};

use crate::crypto::CryptoError;
use crate::saver::SaverError;
use crate::typed::{TypedError, TypedErrorKind};

/// JSON text (a `json`-tagged row or a JSON view) could not be parsed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct JsonError {
    message: String,
    offset: usize,
}

impl JsonError {
    pub(crate) fn new(message: impl Into<String>, offset: usize) -> Self {
        JsonError {
            message: message.into(),
            offset,
        }
    }

    /// The byte offset in the JSON text.
    pub fn offset(&self) -> usize {
        self.offset
    }

    /// What was wrong.
    pub fn message(&self) -> &str {
        &self.message
    }
}

impl fmt::Display for JsonError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "invalid JSON at byte {}: {}", self.offset, self.message)
    }
}

impl std::error::Error for JsonError {}

/// A JSON view did not describe a valid [`Value`](crate::Value): what and where (a
/// JSON path such as `$.messages[2]`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ViewError {
    path: String,
    message: String,
}

impl ViewError {
    pub(crate) fn new(path: impl Into<String>, message: impl Into<String>) -> Self {
        ViewError {
            path: path.into(),
            message: message.into(),
        }
    }

    /// Where in the view, as a JSON path.
    pub fn path(&self) -> &str {
        &self.path
    }
}

impl fmt::Display for ViewError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "invalid JSON view at {}: {}", self.path, self.message)
    }
}

impl std::error::Error for ViewError {}

/// Every error this crate returns.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// msgpack bytes were malformed.
    #[error(transparent)]
    Decode(#[from] DecodeError),
    /// A value could not be written as msgpack.
    #[error(transparent)]
    Encode(#[from] EncodeError),
    /// JSON text was malformed.
    #[error(transparent)]
    Json(#[from] JsonError),
    /// A value with no JSON form was written as JSON.
    #[error(transparent)]
    JsonWrite(#[from] crate::json::JsonWriteError),
    /// A JSON view was not a valid value.
    #[error(transparent)]
    View(#[from] ViewError),
    /// A `(type, bytes)` pair carried a type tag this serializer does not know.
    #[error("unknown serialization type {tag:?}")]
    UnknownType {
        /// The tag as found.
        tag: String,
    },
    /// The row was written by Python's pickle fallback.
    #[error(
        "type tag \"pickle\": written by Python's pickle fallback; cannot be read outside Python"
    )]
    Pickle,
    /// A value cannot be written under the requested type tag.
    #[error("a {found} value cannot be written with type tag {tag:?}")]
    TagMismatch {
        /// The requested tag.
        tag: String,
        /// The kind of value given.
        found: &'static str,
    },
    /// Encryption, decryption, key configuration or compression failed.
    #[error(transparent)]
    Crypto(#[from] CryptoError),
    /// A typed (serde) value could not be written or read.
    #[error(transparent)]
    Typed(#[from] TypedError),
    /// A checkpoint saver refused a call or could not read a stored row.
    #[error(transparent)]
    Saver(#[from] SaverError),
    /// The Postgres saver's server, pool or schema reported an error (feature
    /// `postgres`).
    #[cfg(feature = "postgres")]
    #[error(transparent)]
    Postgres(Box<crate::saver::postgres::PostgresError>),
}

/// What kind of error an [`Error`] is, for matching and for machine-readable reports
/// (the CLI's `{"error": {"kind": …}}`): one variant per distinct cause, across every
/// layer, each with a stable snake_case name ([`as_str`](Self::as_str)).
///
/// ```
/// use langgraph_codec::{msgpack, Error, ErrorKind};
///
/// let e = Error::from(msgpack::decode(b"\x92\x01").unwrap_err());
/// assert_eq!(e.kind(), ErrorKind::LengthExceedsInput);
/// assert_eq!(e.kind().as_str(), "length_exceeds_input");
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ErrorKind {
    /// msgpack input ended inside a value. `truncated`.
    Truncated,
    /// A msgpack string was not valid UTF-8. `invalid_utf8`.
    InvalidUtf8,
    /// The reserved msgpack marker byte `0xc1`. `reserved_byte`.
    ReservedByte,
    /// Bytes after the top-level msgpack value. `trailing_bytes`.
    TrailingBytes,
    /// A msgpack length prefix declared more than the input holds. `length_exceeds_input`.
    LengthExceedsInput,
    /// Nesting deeper than the limit (reading or writing). `depth_limit`.
    DepthLimit,
    /// A msgpack form ormsgpack never writes. `non_canonical`.
    NonCanonical,
    /// A length beyond what the format allows (msgpack's 32-bit lengths, AEAD limits, associated-data fields). `too_long`.
    TooLong,
    /// A value only a `json` row can hold. `not_msgpack`.
    NotMsgpack,
    /// A value with no JSON form was written as JSON. `no_json_form`.
    NoJsonForm,
    /// Malformed JSON text. `invalid_json`.
    InvalidJson,
    /// A JSON view that does not describe a value. `invalid_view`.
    InvalidView,
    /// A type tag the serializer does not know. `unknown_type`.
    UnknownType,
    /// A row written by Python's pickle fallback. `pickle`.
    Pickle,
    /// A value that cannot be written under the requested type tag. `tag_mismatch`.
    TagMismatch,
    /// A typed (serde) value did not have the shape the Rust type reads or writes. `typed`.
    Typed,
    /// A Python object of another class than the Rust type reads. `class_mismatch`.
    ClassMismatch,
    /// A typed value msgpack cannot hold. `unrepresentable`.
    Unrepresentable,
    /// No encryption key is configured. `missing_key`.
    MissingKey,
    /// A key variable is not UTF-8 text. `key_not_utf8`.
    KeyNotUtf8,
    /// More previous keys than a key ring takes. `too_many_keys`.
    TooManyKeys,
    /// A key that is not 16, 24 or 32 bytes long. `invalid_key_length`.
    InvalidKeyLength,
    /// A `base64:` key entry that is not base64. `invalid_key_encoding`.
    InvalidKeyEncoding,
    /// A type-tag suffix no configured cipher or wrapper handles. `unknown_cipher`.
    UnknownCipher,
    /// A cipher name that cannot go into a type tag. `invalid_cipher_name`.
    InvalidCipherName,
    /// Decryption failed: wrong key, tampered ciphertext or other associated data. `authentication_failed`.
    AuthenticationFailed,
    /// A ciphertext shorter than its nonce and tag. `ciphertext_truncated`.
    CiphertextTruncated,
    /// Strict mode refused an unencrypted row. `plaintext_refused`.
    PlaintextRefused,
    /// A row that inflates past the per-row limit. `decompression_limit`.
    DecompressionLimit,
    /// The rows of one call inflate past its budget. `decompression_budget`.
    DecompressionBudget,
    /// A `+zlib` payload that is not a complete zlib stream. `invalid_compressed_data`.
    InvalidCompressedData,
    /// The operating system's random source failed. `random_source`.
    RandomSource,
    /// A user-supplied cipher failed. `cipher_backend`.
    CipherBackend,
    /// A saver config without `thread_id`. `missing_thread_id`.
    MissingThreadId,
    /// A saver config without the `checkpoint_id` a call needs. `missing_checkpoint_id`.
    MissingCheckpointId,
    /// A config without the shape of a `RunnableConfig`. `invalid_config`.
    InvalidConfig,
    /// A value without the shape of a `Checkpoint`. `invalid_checkpoint`.
    InvalidCheckpoint,
    /// A value without the shape of `CheckpointMetadata`. `invalid_metadata`.
    InvalidMetadata,
    /// A channel version that cannot be read or advanced. `invalid_version`.
    InvalidVersion,
    /// A stored row that cannot be deserialized. `unreadable_row`.
    UnreadableRow,
    /// The database under a saver failed. `storage`.
    Storage,
    /// Tables of the saver's names with another layout. `schema`.
    Schema,
    /// A `list` filter the saver cannot express. `invalid_filter`.
    InvalidFilter,
    /// A capability the saver does not implement. `unsupported`.
    Unsupported,
    /// The Postgres server or connection reported an error. `postgres_db`.
    PostgresDb,
    /// No connection could be taken from the Postgres pool. `postgres_pool`.
    PostgresPool,
    /// The Postgres pool could not be built from its configuration. `postgres_config`.
    PostgresConfig,
    /// A Postgres schema name that is not a plain identifier. `invalid_schema_name`.
    InvalidSchemaName,
    /// No checkpoint schema (run `setup` first). `schema_missing`.
    SchemaMissing,
    /// Tables of Python's `ShallowPostgresSaver`. `shallow_schema`.
    ShallowSchema,
    /// A schema migrated past the last version this saver knows. `schema_too_new`.
    SchemaTooNew,
    /// A schema with missing migrations, tables or columns. `schema_incomplete`.
    SchemaIncomplete,
    /// The migration lock was not free in time. `lock_timeout`.
    LockTimeout,
    /// A value with no JSONB form. `not_jsonb`.
    NotJsonb,
    /// A stored JSONB or key column that cannot be read. `unreadable_column`.
    UnreadableColumn,
}

impl ErrorKind {
    /// The stable snake_case name, e.g. `"authentication_failed"`.
    pub fn as_str(self) -> &'static str {
        match self {
            ErrorKind::Truncated => "truncated",
            ErrorKind::InvalidUtf8 => "invalid_utf8",
            ErrorKind::ReservedByte => "reserved_byte",
            ErrorKind::TrailingBytes => "trailing_bytes",
            ErrorKind::LengthExceedsInput => "length_exceeds_input",
            ErrorKind::DepthLimit => "depth_limit",
            ErrorKind::NonCanonical => "non_canonical",
            ErrorKind::TooLong => "too_long",
            ErrorKind::NotMsgpack => "not_msgpack",
            ErrorKind::NoJsonForm => "no_json_form",
            ErrorKind::InvalidJson => "invalid_json",
            ErrorKind::InvalidView => "invalid_view",
            ErrorKind::UnknownType => "unknown_type",
            ErrorKind::Pickle => "pickle",
            ErrorKind::TagMismatch => "tag_mismatch",
            ErrorKind::Typed => "typed",
            ErrorKind::ClassMismatch => "class_mismatch",
            ErrorKind::Unrepresentable => "unrepresentable",
            ErrorKind::MissingKey => "missing_key",
            ErrorKind::KeyNotUtf8 => "key_not_utf8",
            ErrorKind::TooManyKeys => "too_many_keys",
            ErrorKind::InvalidKeyLength => "invalid_key_length",
            ErrorKind::InvalidKeyEncoding => "invalid_key_encoding",
            ErrorKind::UnknownCipher => "unknown_cipher",
            ErrorKind::InvalidCipherName => "invalid_cipher_name",
            ErrorKind::AuthenticationFailed => "authentication_failed",
            ErrorKind::CiphertextTruncated => "ciphertext_truncated",
            ErrorKind::PlaintextRefused => "plaintext_refused",
            ErrorKind::DecompressionLimit => "decompression_limit",
            ErrorKind::DecompressionBudget => "decompression_budget",
            ErrorKind::InvalidCompressedData => "invalid_compressed_data",
            ErrorKind::RandomSource => "random_source",
            ErrorKind::CipherBackend => "cipher_backend",
            ErrorKind::MissingThreadId => "missing_thread_id",
            ErrorKind::MissingCheckpointId => "missing_checkpoint_id",
            ErrorKind::InvalidConfig => "invalid_config",
            ErrorKind::InvalidCheckpoint => "invalid_checkpoint",
            ErrorKind::InvalidMetadata => "invalid_metadata",
            ErrorKind::InvalidVersion => "invalid_version",
            ErrorKind::UnreadableRow => "unreadable_row",
            ErrorKind::Storage => "storage",
            ErrorKind::Schema => "schema",
            ErrorKind::InvalidFilter => "invalid_filter",
            ErrorKind::Unsupported => "unsupported",
            ErrorKind::PostgresDb => "postgres_db",
            ErrorKind::PostgresPool => "postgres_pool",
            ErrorKind::PostgresConfig => "postgres_config",
            ErrorKind::InvalidSchemaName => "invalid_schema_name",
            ErrorKind::SchemaMissing => "schema_missing",
            ErrorKind::ShallowSchema => "shallow_schema",
            ErrorKind::SchemaTooNew => "schema_too_new",
            ErrorKind::SchemaIncomplete => "schema_incomplete",
            ErrorKind::LockTimeout => "lock_timeout",
            ErrorKind::NotJsonb => "not_jsonb",
            ErrorKind::UnreadableColumn => "unreadable_column",
        }
    }
}

impl fmt::Display for ErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl Error {
    /// What kind of error this is.
    pub fn kind(&self) -> ErrorKind {
        match self {
            Error::Decode(e) => e.kind().into(),
            Error::Encode(e) => e.into(),
            Error::Json(_) => ErrorKind::InvalidJson,
            Error::JsonWrite(_) => ErrorKind::NoJsonForm,
            Error::View(_) => ErrorKind::InvalidView,
            Error::UnknownType { .. } => ErrorKind::UnknownType,
            Error::Pickle => ErrorKind::Pickle,
            Error::TagMismatch { .. } => ErrorKind::TagMismatch,
            Error::Crypto(e) => e.into(),
            Error::Typed(e) => e.into(),
            Error::Saver(e) => e.into(),
            #[cfg(feature = "postgres")]
            Error::Postgres(e) => (&**e).into(),
        }
    }

    /// The stable snake_case name of [`kind`](Self::kind).
    #[deprecated(
        since = "0.1.0",
        note = "use `kind()` (an `ErrorKind`), or `kind().as_str()`"
    )]
    pub fn kind_name(&self) -> &'static str {
        self.kind().as_str()
    }
}

impl From<&Error> for ErrorKind {
    fn from(e: &Error) -> Self {
        e.kind()
    }
}

impl From<&DecodeErrorKind> for ErrorKind {
    fn from(kind: &DecodeErrorKind) -> Self {
        match kind {
            DecodeErrorKind::Truncated => ErrorKind::Truncated,
            DecodeErrorKind::InvalidUtf8 => ErrorKind::InvalidUtf8,
            DecodeErrorKind::ReservedByte(_) => ErrorKind::ReservedByte,
            DecodeErrorKind::TrailingBytes { .. } => ErrorKind::TrailingBytes,
            DecodeErrorKind::LengthExceedsInput { .. } => ErrorKind::LengthExceedsInput,
            DecodeErrorKind::DepthLimit { .. } => ErrorKind::DepthLimit,
            DecodeErrorKind::NonCanonical { .. } => ErrorKind::NonCanonical,
        }
    }
}

impl From<&EncodeError> for ErrorKind {
    fn from(e: &EncodeError) -> Self {
        match e {
            EncodeError::DepthLimit { .. } => ErrorKind::DepthLimit,
            EncodeError::TooLong { .. } => ErrorKind::TooLong,
            EncodeError::NotMsgpack { .. } => ErrorKind::NotMsgpack,
        }
    }
}

impl From<&CryptoError> for ErrorKind {
    fn from(e: &CryptoError) -> Self {
        match e {
            CryptoError::MissingKey { .. } | CryptoError::EncryptedRowWithoutKey { .. } => {
                ErrorKind::MissingKey
            }
            CryptoError::KeyNotUtf8 { .. } => ErrorKind::KeyNotUtf8,
            CryptoError::TooManyKeys { .. } => ErrorKind::TooManyKeys,
            CryptoError::InvalidKeyLength { .. } => ErrorKind::InvalidKeyLength,
            CryptoError::InvalidKeyEncoding { .. } => ErrorKind::InvalidKeyEncoding,
            CryptoError::UnknownCipher { .. } => ErrorKind::UnknownCipher,
            CryptoError::InvalidCipherName { .. } => ErrorKind::InvalidCipherName,
            CryptoError::AuthenticationFailed { .. } => ErrorKind::AuthenticationFailed,
            CryptoError::Truncated { .. } => ErrorKind::CiphertextTruncated,
            CryptoError::PlaintextRefused { .. } => ErrorKind::PlaintextRefused,
            CryptoError::DecompressionLimit { .. } => ErrorKind::DecompressionLimit,
            CryptoError::DecompressionBudget { .. } => ErrorKind::DecompressionBudget,
            CryptoError::InvalidCompressedData { .. } => ErrorKind::InvalidCompressedData,
            CryptoError::TooLong { .. } => ErrorKind::TooLong,
            CryptoError::RandomSource { .. } => ErrorKind::RandomSource,
            CryptoError::Backend(_) => ErrorKind::CipherBackend,
        }
    }
}

impl From<&TypedError> for ErrorKind {
    fn from(e: &TypedError) -> Self {
        match e.kind() {
            TypedErrorKind::Message => ErrorKind::Typed,
            TypedErrorKind::ClassMismatch => ErrorKind::ClassMismatch,
            TypedErrorKind::Unrepresentable => ErrorKind::Unrepresentable,
            TypedErrorKind::Decode(d) => d.kind().into(),
            TypedErrorKind::DepthLimit => ErrorKind::DepthLimit,
        }
    }
}

impl From<&SaverError> for ErrorKind {
    fn from(e: &SaverError) -> Self {
        match e {
            SaverError::MissingThreadId { .. } => ErrorKind::MissingThreadId,
            SaverError::MissingCheckpointId { .. } => ErrorKind::MissingCheckpointId,
            SaverError::InvalidConfig { .. } => ErrorKind::InvalidConfig,
            SaverError::InvalidCheckpoint { .. } => ErrorKind::InvalidCheckpoint,
            SaverError::InvalidMetadata { .. } => ErrorKind::InvalidMetadata,
            SaverError::InvalidVersion { .. } => ErrorKind::InvalidVersion,
            SaverError::UnreadableRow { .. } => ErrorKind::UnreadableRow,
            SaverError::Storage { .. } => ErrorKind::Storage,
            SaverError::Schema { .. } => ErrorKind::Schema,
            SaverError::InvalidFilter { .. } => ErrorKind::InvalidFilter,
            SaverError::Unsupported { .. } => ErrorKind::Unsupported,
        }
    }
}

#[cfg(feature = "postgres")]
impl From<&crate::saver::postgres::PostgresError> for ErrorKind {
    fn from(e: &crate::saver::postgres::PostgresError) -> Self {
        use crate::saver::postgres::PostgresError as P;
        match e {
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

/// `Result` with this crate's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;
