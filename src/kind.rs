//! [`ErrorKind`]: the one list of error causes every layer's error reports. It sits
//! below every layer and names none of them, so each layer's error can say its kind
//! without naming a layer above it.
//!
//! The kinds name causes, not backends: a failure of SQLite and one of the Postgres
//! server are both [`ErrorKind::Storage`], and which driver failed (with its own codes)
//! is the error's `source()`, as tokio-postgres keeps the server's SQLSTATE in
//! `as_db_error()` rather than in its `Kind`. So this list, three layers below the
//! savers, holds no backend's name.

use std::fmt;

/// What kind of error an error of this crate is, for matching and for machine-readable
/// reports (the CLI's `{"error": {"kind": …}}`): one variant per distinct cause, across
/// every layer, each with a stable snake_case name ([`as_str`](Self::as_str)).
///
/// [`Error::kind`](crate::Error::kind) reports one, and so does `kind()` of the leaf
/// errors that have a single cause ([`EncodeError`](crate::msgpack::EncodeError),
/// [`JsonError`](crate::json::JsonError), [`ViewError`](crate::view::ViewError),
/// [`TagError`](crate::TagError)); [`DecodeError`](crate::msgpack::DecodeError) and
/// [`TypedError`](crate::typed::TypedError) have their own finer `kind()`, and
/// `ErrorKind::from(&e)` gives theirs.
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
    /// The database under a saver or store failed: SQLite, or the Postgres server or
    /// connection. The driver's error is the `source()`
    /// ([`Error::as_sqlite`](crate::Error::as_sqlite),
    /// [`Error::as_postgres`](crate::Error::as_postgres),
    /// [`Error::sqlstate`](crate::Error::sqlstate)). `storage`.
    Storage,
    /// Tables of the saver's names with another layout. `schema`.
    Schema,
    /// A `list` filter the saver cannot express. `invalid_filter`.
    InvalidFilter,
    /// A capability the saver does not implement. `unsupported`.
    Unsupported,
    /// No connection to the database could be had: the pool timed out, was closed, or
    /// the server refused or could not be reached. Worth retrying later; the pool's or
    /// driver's error is the `source()`. `connection_unavailable`.
    ConnectionUnavailable,
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
    /// A lock was not free in time: the migration lock (`setup`), the tables a store
    /// copy reads, locked (an `ALTER TABLE`, …) for longer than its retries wait, or
    /// any statement the database gave up on waiting for another connection's lock
    /// (SQLite's busy timeout, Postgres's `lock_timeout`; a store command waits 30 s).
    /// Nothing was half-written: call again once the holder is done. `lock_timeout`.
    LockTimeout,
    /// A value with no JSONB form. `not_jsonb`.
    NotJsonb,
    /// A stored JSONB or key column that cannot be read. `unreadable_column`.
    UnreadableColumn,
    /// No checkpoint store where one was to be opened (a missing file, or one without
    /// LangGraph's tables), and creating was not asked for. `store_not_found`.
    StoreNotFound,
    /// A setting from the environment with a value it does not take (e.g.
    /// `LANGGRAPH_AES_STRICT=on`). `invalid_setting`.
    InvalidSetting,
    /// A decrypted row whose inner type tag does not fit its plaintext (a `null+aes`
    /// row carrying data: a rewritten tag). `inner_tag_mismatch`.
    InnerTagMismatch,
    /// A write the durability wrapper queued failed in the background. `write_behind`.
    WriteBehind,
    /// `flush` did not finish within its timeout. `flush_timeout`.
    FlushTimeout,
    /// A call after the durability wrapper was shut down. `saver_closed`.
    SaverClosed,
    /// The Postgres connection kept failing and a store operation stopped (nothing half-written). `connection_lost`.
    ConnectionLost,
    /// A store argument that is neither `sqlite:PATH`, a file path nor a `postgres://` URL,
    /// or a connection string or pool configuration that does not parse. `invalid_store_location`.
    InvalidStoreLocation,
    /// A store whose backend this build does not have (a crate feature is off). `backend_disabled`.
    BackendDisabled,
    /// A database that is not a Python LangGraph checkpoint store of a layout this version knows. `not_a_store`.
    NotAStore,
    /// A store that cannot be written (a read-only file, directory or server). `read_only`.
    ReadOnly,
    /// A writing operation on a store opened read-only. `not_writable`.
    NotWritable,
    /// A blocking task of the SQLite backend failed (panicked or was cancelled). `task_failed`.
    TaskFailed,
    /// A store whose layout cannot be upgraded in place (copy it instead). `cannot_upgrade`.
    CannotUpgrade,
    /// A malformed date for `store prune`, or no prune rule. `invalid_date`.
    InvalidDate,
    /// A backup file (`store export`/`import`) that is malformed or cannot be read or written. `backup`.
    Backup,
    /// A copy whose target already holds threads of the copy with checkpoints the source
    /// does not have (merging them needs `--merge`). `history_conflict`.
    HistoryConflict,
    /// A store operation's first encrypted values were all refused by every key given,
    /// none opened: the keys are not the store's (it stopped before writing). `no_key_opens`.
    NoKeyOpens,
    /// TLS to the Postgres server could not be set up as the connection asked
    /// (`sslmode`, `sslrootcert`): the server has no TLS, its certificate was not signed
    /// by a trusted root or does not name the host, or the root certificates cannot be
    /// read. Retrying unchanged does not help. `tls`.
    Tls,
    /// A retention policy that cannot be used: an unknown rule, a zero or negative
    /// duration, no rule at all, or a `langgraph.json` without `checkpointer.ttl`
    /// (nothing was deleted). `invalid_policy`.
    InvalidPolicy,
    /// A retention sweep whose policy would delete every thread of the store, refused
    /// without `allow_all` (nothing was deleted). `would_delete_all`.
    WouldDeleteAll,
    /// A store operation named a thread (to select it, or to leave it out; a prune, to
    /// leave it out) that the store does not hold: a mistyped id, most likely. Refused
    /// before anything was done. `thread_not_found`.
    ThreadNotFound,
    /// The disk under a store is full (SQLite's `SQLITE_FULL`, or the Postgres server's
    /// SQLSTATE 53100): the transaction in flight was rolled back; free space and run
    /// the same command again. `disk_full`.
    DiskFull,
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
            ErrorKind::ConnectionUnavailable => "connection_unavailable",
            ErrorKind::InvalidSchemaName => "invalid_schema_name",
            ErrorKind::SchemaMissing => "schema_missing",
            ErrorKind::ShallowSchema => "shallow_schema",
            ErrorKind::SchemaTooNew => "schema_too_new",
            ErrorKind::SchemaIncomplete => "schema_incomplete",
            ErrorKind::LockTimeout => "lock_timeout",
            ErrorKind::NotJsonb => "not_jsonb",
            ErrorKind::UnreadableColumn => "unreadable_column",
            ErrorKind::StoreNotFound => "store_not_found",
            ErrorKind::InvalidSetting => "invalid_setting",
            ErrorKind::InnerTagMismatch => "inner_tag_mismatch",
            ErrorKind::WriteBehind => "write_behind",
            ErrorKind::FlushTimeout => "flush_timeout",
            ErrorKind::SaverClosed => "saver_closed",
            ErrorKind::ConnectionLost => "connection_lost",
            ErrorKind::InvalidStoreLocation => "invalid_store_location",
            ErrorKind::BackendDisabled => "backend_disabled",
            ErrorKind::NotAStore => "not_a_store",
            ErrorKind::ReadOnly => "read_only",
            ErrorKind::NotWritable => "not_writable",
            ErrorKind::TaskFailed => "task_failed",
            ErrorKind::CannotUpgrade => "cannot_upgrade",
            ErrorKind::InvalidDate => "invalid_date",
            ErrorKind::Backup => "backup",
            ErrorKind::HistoryConflict => "history_conflict",
            ErrorKind::NoKeyOpens => "no_key_opens",
            ErrorKind::Tls => "tls",
            ErrorKind::InvalidPolicy => "invalid_policy",
            ErrorKind::WouldDeleteAll => "would_delete_all",
            ErrorKind::ThreadNotFound => "thread_not_found",
            ErrorKind::DiskFull => "disk_full",
        }
    }
}

impl ErrorKind {
    /// Every kind, in declaration order (for tests and tools that list them).
    pub const ALL: &'static [ErrorKind] = &[
        ErrorKind::Truncated,
        ErrorKind::InvalidUtf8,
        ErrorKind::ReservedByte,
        ErrorKind::TrailingBytes,
        ErrorKind::LengthExceedsInput,
        ErrorKind::DepthLimit,
        ErrorKind::NonCanonical,
        ErrorKind::TooLong,
        ErrorKind::NotMsgpack,
        ErrorKind::NoJsonForm,
        ErrorKind::InvalidJson,
        ErrorKind::InvalidView,
        ErrorKind::UnknownType,
        ErrorKind::Pickle,
        ErrorKind::TagMismatch,
        ErrorKind::Typed,
        ErrorKind::ClassMismatch,
        ErrorKind::Unrepresentable,
        ErrorKind::MissingKey,
        ErrorKind::KeyNotUtf8,
        ErrorKind::TooManyKeys,
        ErrorKind::InvalidKeyLength,
        ErrorKind::InvalidKeyEncoding,
        ErrorKind::UnknownCipher,
        ErrorKind::InvalidCipherName,
        ErrorKind::AuthenticationFailed,
        ErrorKind::CiphertextTruncated,
        ErrorKind::PlaintextRefused,
        ErrorKind::DecompressionLimit,
        ErrorKind::DecompressionBudget,
        ErrorKind::InvalidCompressedData,
        ErrorKind::RandomSource,
        ErrorKind::CipherBackend,
        ErrorKind::MissingThreadId,
        ErrorKind::MissingCheckpointId,
        ErrorKind::InvalidConfig,
        ErrorKind::InvalidCheckpoint,
        ErrorKind::InvalidMetadata,
        ErrorKind::InvalidVersion,
        ErrorKind::UnreadableRow,
        ErrorKind::Storage,
        ErrorKind::Schema,
        ErrorKind::InvalidFilter,
        ErrorKind::Unsupported,
        ErrorKind::ConnectionUnavailable,
        ErrorKind::InvalidSchemaName,
        ErrorKind::SchemaMissing,
        ErrorKind::ShallowSchema,
        ErrorKind::SchemaTooNew,
        ErrorKind::SchemaIncomplete,
        ErrorKind::LockTimeout,
        ErrorKind::NotJsonb,
        ErrorKind::UnreadableColumn,
        ErrorKind::StoreNotFound,
        ErrorKind::InvalidSetting,
        ErrorKind::InnerTagMismatch,
        ErrorKind::WriteBehind,
        ErrorKind::FlushTimeout,
        ErrorKind::SaverClosed,
        ErrorKind::ConnectionLost,
        ErrorKind::InvalidStoreLocation,
        ErrorKind::BackendDisabled,
        ErrorKind::NotAStore,
        ErrorKind::ReadOnly,
        ErrorKind::NotWritable,
        ErrorKind::TaskFailed,
        ErrorKind::CannotUpgrade,
        ErrorKind::InvalidDate,
        ErrorKind::Backup,
        ErrorKind::HistoryConflict,
        ErrorKind::NoKeyOpens,
        ErrorKind::Tls,
        ErrorKind::InvalidPolicy,
        ErrorKind::WouldDeleteAll,
        ErrorKind::ThreadNotFound,
        ErrorKind::DiskFull,
    ];
}

impl fmt::Display for ErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}
