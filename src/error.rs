//! The crate's one [`Error`], above the leaf codec errors.
//!
//! The leaf errors say exactly what was wrong with the bytes or text they read:
//! [`DecodeError`] and [`EncodeError`] (msgpack), [`JsonError`] and [`JsonWriteError`]
//! (JSON), [`ViewError`] (the JSON view), [`TagError`] (type tags) and [`TypedError`]
//! (serde). Everything above them (the [`Serializer`](crate::Serializer) protocol,
//! compression, encryption, the savers and the store operations) returns [`Error`]:
//! an opaque error with a stable [`ErrorKind`], context (which row, which operation,
//! which type tag or limit), a message saying what was wrong and where, and
//! [`source()`](std::error::Error::source) reaching the leaf or backend error
//! (`rusqlite`, `tokio-postgres`) underneath, with typed accessors for each
//! ([`as_decode`](Error::as_decode), [`as_typed`](Error::as_typed), `as_sqlite` with
//! feature `sqlite`, `as_postgres` with feature `postgres`, …).
//!
//! This module sits just above `typed` and below `serializer`: it names no layer above
//! it, so every layer above can build its errors with it. No error ever contains key
//! material or decrypted bytes.

use std::fmt;
use std::sync::Arc;

use crate::json::{JsonError, JsonWriteError};
use crate::kind::ErrorKind;
use crate::msgpack::{DecodeError, EncodeError};
use crate::protocol::TagError;
use crate::typed::{TypedError, TypedErrorKind};
use crate::view::{ReadError, ViewError};

type BoxError = Box<dyn std::error::Error + Send + Sync + 'static>;

/// Which kind of stored row an error is about ([`RowLocation::kind`]).
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

/// Where a stored row is: its kind, thread, namespace and checkpoint id, and for blobs
/// and writes which one (`channel "messages"`, `task "t1" idx 0`).
///
/// Displays as `(thread "t", ns "", checkpoint "1") channel "messages"`.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct RowLocation {
    kind: RowKind,
    thread_id: String,
    checkpoint_ns: String,
    checkpoint_id: String,
    detail: Option<String>,
}

impl RowLocation {
    /// The row of `kind` under `(thread_id, checkpoint_ns, checkpoint_id)`.
    pub fn new(
        kind: RowKind,
        thread_id: impl Into<String>,
        checkpoint_ns: impl Into<String>,
        checkpoint_id: impl Into<String>,
    ) -> Self {
        RowLocation {
            kind,
            thread_id: thread_id.into(),
            checkpoint_ns: checkpoint_ns.into(),
            checkpoint_id: checkpoint_id.into(),
            detail: None,
        }
    }

    /// The same location, naming which blob or write (`channel "messages"`).
    #[must_use]
    pub fn with_detail(mut self, detail: impl Into<String>) -> Self {
        self.detail = Some(detail.into());
        self
    }

    /// The same location for a row of `kind`.
    pub(crate) fn of_kind(mut self, kind: RowKind) -> Self {
        self.kind = kind;
        self
    }

    /// Which kind of row.
    pub fn kind(&self) -> RowKind {
        self.kind
    }

    /// The row's thread.
    pub fn thread_id(&self) -> &str {
        &self.thread_id
    }

    /// The row's checkpoint namespace.
    pub fn checkpoint_ns(&self) -> &str {
        &self.checkpoint_ns
    }

    /// The row's checkpoint id.
    pub fn checkpoint_id(&self) -> &str {
        &self.checkpoint_id
    }

    /// Which blob or write, e.g. `channel "messages"` or `task "t1" idx 0`.
    pub fn detail(&self) -> Option<&str> {
        self.detail.as_deref()
    }
}

impl fmt::Display for RowLocation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // A channel blob of the in-memory saver belongs to no one checkpoint.
        if self.checkpoint_id.is_empty() && self.kind == RowKind::Blob {
            write!(
                f,
                "(thread {:?}, ns {:?})",
                self.thread_id, self.checkpoint_ns
            )?;
        } else {
            write!(
                f,
                "(thread {:?}, ns {:?}, checkpoint {:?})",
                self.thread_id, self.checkpoint_ns, self.checkpoint_id
            )?;
        }
        if let Some(detail) = &self.detail {
            write!(f, " {detail}")?;
        }
        Ok(())
    }
}

/// Every error this crate returns above the leaf codec errors.
///
/// - [`kind`](Self::kind): a stable [`ErrorKind`] to match on (its
///   [`as_str`](ErrorKind::as_str) is the snake_case name the CLI prints);
/// - context: [`row`](Self::row) (which stored row), [`operation`](Self::operation)
///   (which saver or store call), [`type_tag`](Self::type_tag), [`limit`](Self::limit),
///   [`count`](Self::count) and [`subject`](Self::subject) (the variable, key source,
///   cipher, capability, file or field the message names);
/// - `Display`: what was wrong and where;
/// - [`source()`](std::error::Error::source): the error underneath (a leaf codec
///   error, the driver's error, the [`Error`] an unreadable row or a failed background
///   write wraps), with typed accessors: [`as_decode`](Self::as_decode),
///   [`as_encode`](Self::as_encode), [`as_json`](Self::as_json),
///   [`as_typed`](Self::as_typed), [`as_tag`](Self::as_tag), [`cause`](Self::cause),
///   `as_sqlite` (feature `sqlite`) and `as_postgres` / `sqlstate` (feature
///   `postgres`).
///
/// [`new`](Self::new) and [`with_source`](Self::with_source) build one, for a
/// [`Serializer`](crate::Serializer) or saver implemented outside this crate.
///
/// ```
/// use langgraph_codec::{ErrorKind, JsonPlusSerializer, Serializer, TagError};
///
/// let err = JsonPlusSerializer::new().loads_typed("yaml", b"a: 1").unwrap_err();
/// assert_eq!(err.kind(), ErrorKind::UnknownType);
/// assert!(matches!(err.as_tag(), Some(TagError::UnknownType { tag }) if tag == "yaml"));
///
/// let err = JsonPlusSerializer::new().loads_typed("msgpack", b"\x92\x01").unwrap_err();
/// assert_eq!(err.kind(), ErrorKind::LengthExceedsInput);
/// assert_eq!(err.as_decode().map(|d| d.offset()), Some(0));
/// ```
pub struct Error(Box<Inner>);

struct Inner {
    kind: ErrorKind,
    message: String,
    operation: Option<&'static str>,
    row: Option<RowLocation>,
    type_tag: Option<String>,
    limit: Option<usize>,
    count: Option<usize>,
    subject: Option<String>,
    found: Option<String>,
    reason: Option<String>,
    source: Option<BoxError>,
}

/// The longest message an [`Error`] keeps, in bytes: a driver's error can quote a whole
/// statement (a SQLite syntax error quotes its SQL, which for a list of keys ran to
/// 650 KB), and a message goes whole onto a terminal line or a JSON log record. The
/// rest is cut; the cause, if any, stays whole in [`source()`](std::error::Error::source).
const MAX_MESSAGE_BYTES: usize = 8 * 1024;

/// `message` cut to [`MAX_MESSAGE_BYTES`] (at a character boundary), saying how much
/// was cut.
fn bounded(mut message: String) -> String {
    if message.len() > MAX_MESSAGE_BYTES {
        let mut cut = MAX_MESSAGE_BYTES;
        while !message.is_char_boundary(cut) {
            cut -= 1;
        }
        let more = message.len() - cut;
        message.truncate(cut);
        message.push_str(&format!("… ({more} bytes more)"));
    }
    message
}

/// `Result` with this crate's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

impl Error {
    /// An error of `kind` whose `Display` is `message`, cut past 8 KiB (a driver's
    /// error can quote a whole statement; the cut says how much went).
    ///
    /// The message should say what was wrong and where; it must not quote key material
    /// or decrypted data.
    #[cold]
    pub fn new(kind: ErrorKind, message: impl Into<String>) -> Self {
        Error(Box::new(Inner {
            kind,
            message: bounded(message.into()),
            operation: None,
            row: None,
            type_tag: None,
            limit: None,
            count: None,
            subject: None,
            found: None,
            reason: None,
            source: None,
        }))
    }

    /// An error of `kind` whose `Display` is `message` and whose
    /// [`source()`](std::error::Error::source) is `source` (a driver's error, your own
    /// serializer's error, …).
    #[cold]
    pub fn with_source(
        kind: ErrorKind,
        message: impl Into<String>,
        source: impl Into<Box<dyn std::error::Error + Send + Sync + 'static>>,
    ) -> Self {
        let source = source.into();
        let message = message.into();
        let storage = kind == ErrorKind::Storage;
        let (kind, message) = if let Some(which) = disk_full(&*source).filter(|_| storage) {
            // A database that failed because its disk is full is its own kind, whichever
            // layer reports it: the operator's fix (free space, run again) is not a bug's.
            (
                ErrorKind::DiskFull,
                format!(
                    "{message}; {which}, then run the same command again (nothing was \
                     half-written)"
                ),
            )
        } else if storage && lock_timed_out(&*source) {
            // A database that gave up waiting for a lock another connection held
            // (SQLite's busy timeout, Postgres's lock_timeout) is its own kind too: the
            // fix is to let the holder finish, then call again.
            (
                ErrorKind::LockTimeout,
                format!(
                    "{message}; a lock another connection held was not free in time (this \
                     connection's busy timeout or lock_timeout): a long transaction holds \
                     it; nothing was half-written: run the same call again once it is done"
                ),
            )
        } else if storage && insufficient_privilege(&*source) {
            // A role that may not write (or read) the saver's tables: whom to connect
            // as, rather than the server's bare "permission denied for table …". A
            // schema refused is another matter: no tables to grant on yet (setup()).
            (
                kind,
                if refused_for(&*source, "must be owner of") {
                    format!(
                        "{message}: only the tables' owner (or a superuser) may change them \
                         (ALTER TABLE, CREATE INDEX), which no GRANT gives: run this as the \
                         role that owns the saver's tables (the one whose setup() made \
                         them), or make this role their owner (ALTER TABLE … OWNER TO, as \
                         the owner); nothing was changed"
                    )
                } else if refused_for(&*source, "permission denied for schema") {
                    format!(
                        "{message}: the role this connection uses may not create tables \
                         in that schema (or use it): GRANT CREATE, USAGE ON SCHEMA … TO the \
                         role (since PostgreSQL 15 only the database's owner may create in \
                         public by default), or make the saver's tables as a role that may \
                         (the database's owner); nothing was made"
                    )
                } else {
                    format!(
                        "{message}: the role this connection uses lacks a privilege on the \
                     saver's tables: connect as the role that owns them (the one your agents \
                     use), or GRANT it SELECT, INSERT, UPDATE and DELETE on them (a dry run \
                     needs SELECT only); the transaction it failed in was rolled back: run \
                     the same command again once the role may"
                    )
                },
            )
        } else {
            (kind, message)
        };
        let mut e = Error::new(kind, message);
        e.0.source = Some(source);
        e
    }

    /// A copy of `self` as the cause of a message that says where it happened: the
    /// same kind, `Display` `context: self`, `self` as [`cause`](Self::cause).
    #[cold]
    #[cfg_attr(not(all(feature = "sqlite", feature = "postgres")), allow(dead_code))]
    pub(crate) fn in_context(self, context: impl std::fmt::Display) -> Self {
        let kind = self.kind();
        let message = format!("{context}: {self}");
        Error::with_source(kind, message, self)
    }

    /// A stored row that could not be read: kind [`ErrorKind::UnreadableRow`], the row
    /// as [`row`](Self::row), `cause` (why, as the serializer reported it) as
    /// [`cause`](Self::cause) and `source()`.
    #[cold]
    pub fn unreadable_row(row: RowLocation, cause: Error) -> Self {
        let message = format!("stored {} row {row} is unreadable: {cause}", row.kind());
        Error::with_source(ErrorKind::UnreadableRow, message, cause).with_row(row)
    }

    /// A saver that does not implement an extended capability (`"copy_thread"`,
    /// `"prune"`, …): kind [`ErrorKind::Unsupported`], the capability as
    /// [`subject`](Self::subject).
    #[cold]
    pub fn unsupported(capability: &str) -> Self {
        Error::new(
            ErrorKind::Unsupported,
            format!("this saver does not support {capability}"),
        )
        .with_subject(capability)
    }

    /// The same error, naming the saver or store operation (`"put"`, `"setup"`).
    #[must_use]
    pub fn with_operation(mut self, operation: &'static str) -> Self {
        self.0.operation = Some(operation);
        self
    }

    /// The same error, its message followed by `; note` (what became of the work done
    /// before it, say). Kind, fields and cause stay.
    #[must_use]
    #[cfg_attr(not(all(feature = "sqlite", feature = "postgres")), allow(dead_code))]
    pub(crate) fn with_note(mut self, note: impl std::fmt::Display) -> Self {
        self.0.message = format!("{}; {note}", self.0.message);
        self
    }

    /// The same error, naming the stored row it is about.
    #[must_use]
    pub fn with_row(mut self, row: RowLocation) -> Self {
        self.0.row = Some(row);
        self
    }

    /// The same error, naming the type tag of the row it is about.
    #[must_use]
    pub fn with_type_tag(mut self, type_tag: impl Into<String>) -> Self {
        self.0.type_tag = Some(type_tag.into());
        self
    }

    /// The same error, giving the limit that was passed (bytes).
    #[must_use]
    pub fn with_limit(mut self, limit: usize) -> Self {
        self.0.limit = Some(limit);
        self
    }

    /// The same error, giving the number its message states (keys tried, a length, …).
    #[must_use]
    pub fn with_count(mut self, count: usize) -> Self {
        self.0.count = Some(count);
        self
    }

    /// The same error, naming what it is about (a variable, key source, cipher,
    /// capability, file or field).
    #[must_use]
    pub fn with_subject(mut self, subject: impl Into<String>) -> Self {
        self.0.subject = Some(subject.into());
        self
    }

    /// The same error, saying what was found instead (a store's layout).
    #[must_use]
    pub fn with_found(mut self, found: impl Into<String>) -> Self {
        self.0.found = Some(found.into());
        self
    }

    /// The same error, saying why (the reason its message gives).
    #[must_use]
    pub fn with_reason(mut self, reason: impl Into<String>) -> Self {
        self.0.reason = Some(reason.into());
        self
    }

    /// What was found instead of what was expected: the layout of a store that cannot
    /// be upgraded ([`ErrorKind::CannotUpgrade`]), what a database holds instead of a
    /// checkpoint store ([`ErrorKind::NotAStore`]).
    pub fn found(&self) -> Option<&str> {
        self.0.found.as_deref()
    }

    /// Why, as the message says it: what is wrong with a config, a checkpoint, a
    /// schema, a backup line, a store.
    pub fn reason(&self) -> Option<&str> {
        self.0.reason.as_deref()
    }

    /// What kind of error this is.
    pub fn kind(&self) -> ErrorKind {
        self.0.kind
    }

    /// The saver or store operation that failed (`"put"`, `"put_writes"`, `"setup"`),
    /// when the error names one.
    pub fn operation(&self) -> Option<&'static str> {
        self.0.operation
    }

    /// The stored row the error is about: for [`ErrorKind::UnreadableRow`], the row
    /// that could not be read.
    pub fn row(&self) -> Option<&RowLocation> {
        self.0.row.as_ref()
    }

    /// The type tag of the row the error is about (a refused plaintext row, an
    /// encrypted row read without a key, a rewritten inner tag).
    pub fn type_tag(&self) -> Option<&str> {
        self.0.type_tag.as_deref()
    }

    /// The limit in force, in bytes ([`ErrorKind::DecompressionLimit`],
    /// [`ErrorKind::DecompressionBudget`]).
    pub fn limit(&self) -> Option<usize> {
        self.0.limit
    }

    /// The number the message states: keys tried ([`ErrorKind::AuthenticationFailed`]),
    /// keys given ([`ErrorKind::TooManyKeys`]), a length
    /// ([`ErrorKind::InvalidKeyLength`], [`ErrorKind::CiphertextTruncated`],
    /// [`ErrorKind::TooLong`], [`ErrorKind::InnerTagMismatch`]), writes still queued
    /// ([`ErrorKind::FlushTimeout`]).
    pub fn count(&self) -> Option<usize> {
        self.0.count
    }

    /// What the error names: the environment variable ([`ErrorKind::MissingKey`],
    /// [`ErrorKind::KeyNotUtf8`], [`ErrorKind::InvalidSetting`]), the key source
    /// ([`ErrorKind::InvalidKeyLength`], [`ErrorKind::TooManyKeys`]), the cipher name
    /// ([`ErrorKind::UnknownCipher`]), the capability ([`ErrorKind::Unsupported`]), the
    /// backup file, the store, the field or filter key.
    pub fn subject(&self) -> Option<&str> {
        self.0.subject.as_deref()
    }

    /// The crate error this one wraps: why a row was unreadable
    /// ([`ErrorKind::UnreadableRow`]), why a queued write failed
    /// ([`ErrorKind::WriteBehind`]).
    pub fn cause(&self) -> Option<&Error> {
        let source = self.0.source.as_deref()?;
        if let Some(e) = source.downcast_ref::<Error>() {
            return Some(e);
        }
        source.downcast_ref::<Shared>().map(|s| &*s.0)
    }

    /// The innermost crate error along [`cause`](Self::cause) (this one when it wraps
    /// none): for an unreadable row, the serializer's or cipher's own error.
    pub fn root(&self) -> &Error {
        let mut cur = self;
        while let Some(next) = cur.cause() {
            cur = next;
        }
        cur
    }

    fn leaf<T: std::error::Error + 'static>(&self) -> Option<&T> {
        self.0.source.as_deref()?.downcast_ref::<T>()
    }

    /// The malformed-msgpack error underneath (with its byte offset), directly or in a
    /// typed read.
    pub fn as_decode(&self) -> Option<&DecodeError> {
        self.leaf::<DecodeError>()
            .or_else(|| match self.as_typed()?.kind() {
                TypedErrorKind::Decode(d) => Some(d),
                _ => None,
            })
    }

    /// The msgpack write error underneath.
    pub fn as_encode(&self) -> Option<&EncodeError> {
        self.leaf::<EncodeError>()
    }

    /// The malformed-JSON error underneath, directly or in a typed read.
    pub fn as_json(&self) -> Option<&JsonError> {
        self.leaf::<JsonError>()
            .or_else(|| match self.as_typed()?.kind() {
                TypedErrorKind::Json(j) => Some(j),
                _ => None,
            })
    }

    /// The JSON-writing error underneath.
    pub fn as_json_write(&self) -> Option<&JsonWriteError> {
        self.leaf::<JsonWriteError>()
    }

    /// The JSON-view error underneath.
    pub fn as_view(&self) -> Option<&ViewError> {
        self.leaf::<ViewError>()
    }

    /// The typed (serde) error underneath.
    pub fn as_typed(&self) -> Option<&TypedError> {
        self.leaf::<TypedError>()
    }

    /// The type-tag error underneath, directly or in a typed read.
    pub fn as_tag(&self) -> Option<&TagError> {
        self.leaf::<TagError>()
            .or_else(|| match self.as_typed()?.kind() {
                TypedErrorKind::Tag(t) => Some(t),
                _ => None,
            })
    }

    /// SQLite's error underneath (feature `sqlite`), along [`cause`](Self::cause).
    #[cfg(feature = "sqlite")]
    pub fn as_sqlite(&self) -> Option<&rusqlite::Error> {
        self.leaf::<rusqlite::Error>()
            .or_else(|| self.cause()?.as_sqlite())
    }

    /// The Postgres driver's error underneath (feature `postgres`), along
    /// [`cause`](Self::cause) and through a pool's backend error; its
    /// [`as_db_error`](tokio_postgres::Error::as_db_error) has the server's SQLSTATE,
    /// message, detail and hint.
    #[cfg(feature = "postgres")]
    pub fn as_postgres(&self) -> Option<&tokio_postgres::Error> {
        if let Some(e) = self.leaf::<tokio_postgres::Error>() {
            return Some(e);
        }
        if let Some(deadpool_postgres::PoolError::Backend(e)) =
            self.leaf::<deadpool_postgres::PoolError>()
        {
            return Some(e);
        }
        self.cause()?.as_postgres()
    }

    /// The Postgres pool's error underneath (feature `postgres`).
    #[cfg(feature = "postgres")]
    pub fn as_postgres_pool(&self) -> Option<&deadpool_postgres::PoolError> {
        self.leaf::<deadpool_postgres::PoolError>()
    }

    /// The server's SQLSTATE code (e.g. `"42P01"`), when the Postgres server reported
    /// the error (feature `postgres`).
    #[cfg(feature = "postgres")]
    pub fn sqlstate(&self) -> Option<&str> {
        self.as_postgres()?.code().map(|c| c.code())
    }

    /// Whether the error is a lost Postgres connection (closed, terminated by the
    /// server, an I/O error): the operation may reconnect and retry.
    pub fn is_connection_lost(&self) -> bool {
        #[cfg(feature = "postgres")]
        if let Some(source) = self.leaf::<tokio_postgres::Error>() {
            return source.is_closed()
                || std::error::Error::source(source).is_some_and(|s| s.is::<std::io::Error>())
                || source.code().is_some_and(|c| {
                    let c = c.code();
                    c.starts_with("08") || c.starts_with("57P")
                });
        }
        false
    }

    /// The same error shared (for a failure that several callers report, such as a
    /// queued write that failed in the background): the returned value's `source()`
    /// and [`cause`](Self::cause) are `shared`.
    pub fn shared(kind: ErrorKind, message: impl Into<String>, shared: Arc<Error>) -> Self {
        Error::with_source(kind, message, Shared(shared))
    }
}

/// An [`Error`] behind an `Arc`, as a `source()`.
struct Shared(Arc<Error>);

impl fmt::Debug for Shared {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&*self.0, f)
    }
}

impl fmt::Display for Shared {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(&*self.0, f)
    }
}

impl std::error::Error for Shared {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        std::error::Error::source(&*self.0)
    }
}

impl fmt::Debug for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let i = &*self.0;
        let mut d = f.debug_struct("Error");
        d.field("kind", &i.kind).field("message", &i.message);
        if let Some(op) = i.operation {
            d.field("operation", &op);
        }
        if let Some(row) = &i.row {
            d.field("row", row);
        }
        if let Some(tag) = &i.type_tag {
            d.field("type_tag", tag);
        }
        if let Some(limit) = i.limit {
            d.field("limit", &limit);
        }
        if let Some(count) = i.count {
            d.field("count", &count);
        }
        if let Some(subject) = &i.subject {
            d.field("subject", subject);
        }
        if let Some(found) = &i.found {
            d.field("found", found);
        }
        if let Some(reason) = &i.reason {
            d.field("reason", reason);
        }
        if let Some(source) = &i.source {
            d.field("source", source);
        }
        d.finish()
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0.message)
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        self.0
            .source
            .as_deref()
            .map(|e| e as &(dyn std::error::Error + 'static))
    }
}

impl From<&Error> for ErrorKind {
    fn from(e: &Error) -> Self {
        e.kind()
    }
}

macro_rules! from_leaf {
    ($($ty:ty),*) => {$(
        /// The leaf error as `source()`, with its kind and message.
        impl From<$ty> for Error {
            #[cold]
            fn from(e: $ty) -> Self {
                Error::with_source(ErrorKind::from(&e), e.to_string(), e)
            }
        }
    )*};
}
from_leaf!(
    DecodeError,
    EncodeError,
    JsonError,
    JsonWriteError,
    ViewError,
    TagError,
    TypedError
);

impl From<ReadError> for Error {
    fn from(e: ReadError) -> Self {
        match e {
            ReadError::Json(e) => e.into(),
            ReadError::View(e) => e.into(),
            ReadError::Encode(e) => e.into(),
        }
    }
}

// `Error` crosses threads and tasks (savers are `Send + Sync`, futures are `Send`).
const _: fn() = || {
    fn send_sync<T: Send + Sync + 'static>() {}
    send_sync::<Error>();
};

/// Whether a driver's error says the disk is full (SQLite's `SQLITE_FULL`, the Postgres
/// server's SQLSTATE 53100 `disk_full`): which disk, and what to do.
fn disk_full(source: &(dyn std::error::Error + Send + Sync + 'static)) -> Option<&'static str> {
    #[cfg(feature = "sqlite")]
    if let Some(rusqlite::Error::SqliteFailure(e, _)) = source.downcast_ref::<rusqlite::Error>() {
        // SQLite says the same of its temporary files, which a sort or a GROUP BY too
        // large for memory writes beside no store: a read-only command fails so on a
        // small /tmp.
        return (e.code == rusqlite::ErrorCode::DiskFull).then_some(
            "the disk under the store is full, or the one under SQLite's temporary files \
             (SQLITE_TMPDIR or TMPDIR, else /var/tmp, then /tmp; a large sort spills \
             there): free space (or move the store to a larger disk, or point \
             SQLITE_TMPDIR at a directory with room)",
        );
    }
    #[cfg(feature = "postgres")]
    if let Some(e) = source.downcast_ref::<tokio_postgres::Error>() {
        return (e.code() == Some(&tokio_postgres::error::SqlState::DISK_FULL)).then_some(
            "the disk under the store is full: free space (or move the store to a larger \
             disk)",
        );
    }
    let _ = source;
    None
}

/// Whether the database gave up waiting for a lock: SQLite's `SQLITE_BUSY` /
/// `SQLITE_LOCKED` (its busy timeout ran out) or Postgres's SQLSTATE 55P03
/// (`lock_not_available`: past `lock_timeout`, or a `NOWAIT` lock).
pub(crate) fn lock_timed_out(source: &(dyn std::error::Error + Send + Sync + 'static)) -> bool {
    #[cfg(feature = "sqlite")]
    if let Some(rusqlite::Error::SqliteFailure(e, _)) = source.downcast_ref::<rusqlite::Error>() {
        return matches!(
            e.code,
            rusqlite::ErrorCode::DatabaseBusy | rusqlite::ErrorCode::DatabaseLocked
        );
    }
    #[cfg(feature = "postgres")]
    if let Some(e) = source.downcast_ref::<tokio_postgres::Error>() {
        return e.code() == Some(&tokio_postgres::error::SqlState::LOCK_NOT_AVAILABLE);
    }
    let _ = source;
    false
}

/// Whether the Postgres server refused a statement for the role's privileges (SQLSTATE
/// 42501 `insufficient_privilege`: no `DELETE` on a table, no `USAGE` on its schema).
fn insufficient_privilege(source: &(dyn std::error::Error + Send + Sync + 'static)) -> bool {
    #[cfg(feature = "postgres")]
    if let Some(e) = source.downcast_ref::<tokio_postgres::Error>() {
        return e.code() == Some(&tokio_postgres::error::SqlState::INSUFFICIENT_PRIVILEGE);
    }
    let _ = source;
    false
}

/// Whether the server's message of a privilege refusal begins with `words`: "permission
/// denied for schema" (no tables to grant on yet), "must be owner of" (what no GRANT
/// gives: `ALTER TABLE`, `CREATE INDEX`), else a table's privileges.
fn refused_for(source: &(dyn std::error::Error + Send + Sync + 'static), words: &str) -> bool {
    #[cfg(feature = "postgres")]
    if let Some(e) = source.downcast_ref::<tokio_postgres::Error>() {
        return e
            .as_db_error()
            .is_some_and(|d| d.message().starts_with(words));
    }
    let _ = (source, words);
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A message past 8 KiB is cut at a character boundary, saying how many bytes went;
    /// one of 8 KiB stays whole. SQLite's own error for a statement of too many
    /// parameters quotes the statement: the error's message is bounded, its source
    /// keeps it whole.
    #[test]
    fn a_long_message_is_cut_and_says_so() {
        let whole = "é".repeat(MAX_MESSAGE_BYTES / 2);
        assert_eq!(
            Error::new(ErrorKind::Storage, whole.clone()).to_string(),
            whole
        );
        let long = format!("x{}", "é".repeat(50_000));
        let said = Error::new(ErrorKind::Storage, long.clone()).to_string();
        let (kept, note) = said.split_once('…').expect("a cut");
        assert!(
            long.starts_with(kept) && kept.len() <= MAX_MESSAGE_BYTES,
            "{}",
            kept.len()
        );
        assert_eq!(note, format!(" ({} bytes more)", long.len() - kept.len()));
        #[cfg(feature = "sqlite")]
        {
            let conn = rusqlite::Connection::open_in_memory().expect("sqlite");
            let params: Vec<String> = (1..=40_000).map(|i| format!("?{i}")).collect();
            let sql = format!("SELECT {}", params.join(", "));
            let Err(e) = conn.prepare(&sql).map(|_| ()) else {
                panic!("40,000 parameters were taken")
            };
            let quoted = e.to_string().len();
            assert!(quoted > 100_000, "{quoted}");
            let e = Error::with_source(ErrorKind::Storage, format!("sqlite copy: {e}"), e);
            assert!(e.to_string().len() < MAX_MESSAGE_BYTES + 64);
            let source = std::error::Error::source(&e).map(ToString::to_string);
            assert_eq!(source.map(|s| s.len()), Some(quoted));
        }
    }

    /// A storage failure that is SQLite's "database is locked" (its busy timeout ran
    /// out) is a `LockTimeout` saying to run again, its source kept; any other SQLite
    /// failure stays `Storage`.
    #[cfg(feature = "sqlite")]
    #[test]
    fn a_database_that_gave_up_on_a_lock_is_a_lock_timeout() {
        let failure = |code: std::ffi::c_int| {
            rusqlite::Error::SqliteFailure(rusqlite::ffi::Error::new(code), None)
        };
        let busy = Error::with_source(ErrorKind::Storage, "put", failure(5));
        assert_eq!(busy.kind(), ErrorKind::LockTimeout, "{busy}");
        assert!(
            busy.to_string().contains("run the same call again"),
            "{busy}"
        );
        assert!(busy.as_sqlite().is_some(), "{busy:?}");
        let corrupt = Error::with_source(ErrorKind::Storage, "put", failure(11));
        assert_eq!(corrupt.kind(), ErrorKind::Storage, "{corrupt}");
    }

    /// One pointer wide: a `Result<T, Error>` costs a saver's hot path no more than
    /// the value it carries.
    #[test]
    fn the_error_is_one_pointer_wide() {
        assert_eq!(std::mem::size_of::<Error>(), std::mem::size_of::<usize>());
    }

    /// Context setters and accessors agree; `cause` and `root` walk wrapped errors.
    #[test]
    fn context_and_causes_read_back() {
        let row = RowLocation::new(RowKind::Write, "t", "", "1").with_detail("task \"a\" idx 0");
        let leaf = Error::new(ErrorKind::AuthenticationFailed, "decryption failed").with_count(2);
        let e = Error::unreadable_row(row.clone(), leaf).with_operation("get_tuple");
        assert_eq!(e.kind(), ErrorKind::UnreadableRow);
        assert_eq!(e.row(), Some(&row));
        assert_eq!(e.operation(), Some("get_tuple"));
        assert_eq!(
            e.to_string(),
            "stored write row (thread \"t\", ns \"\", checkpoint \"1\") task \"a\" idx 0 is \
             unreadable: decryption failed"
        );
        assert_eq!(
            e.cause().map(Error::kind),
            Some(ErrorKind::AuthenticationFailed)
        );
        assert_eq!(e.root().count(), Some(2));
        let shared = Error::shared(ErrorKind::WriteBehind, "queued put failed", Arc::new(e));
        assert_eq!(shared.root().kind(), ErrorKind::AuthenticationFailed);
        assert_eq!(
            shared.cause().map(Error::kind),
            Some(ErrorKind::UnreadableRow)
        );
    }
}
