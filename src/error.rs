//! Typed errors. Each says what was wrong and where (a byte offset or a path), and none
//! ever contains key material or decrypted bytes.

use std::fmt;

pub use crate::msgpack::{DecodeError, DecodeErrorKind, EncodeError};

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
    Crypto(#[from] crate::crypto::CryptoError),
    /// A typed (serde) value could not be written or read.
    #[error(transparent)]
    Typed(#[from] crate::typed::TypedError),
    /// A checkpoint saver refused a call or could not read a stored row.
    #[error(transparent)]
    Saver(#[from] crate::saver::SaverError),
    /// The Postgres saver's server, pool or schema reported an error (feature
    /// `postgres`).
    #[cfg(feature = "postgres")]
    #[error(transparent)]
    Postgres(Box<crate::saver::postgres::PostgresError>),
}

impl Error {
    /// A stable snake_case name of the error's kind, for machine-readable reports
    /// (the CLI's `{"error": {"kind": …}}`).
    pub fn kind_name(&self) -> &'static str {
        match self {
            Error::Decode(e) => decode_kind_name(e.kind()),
            Error::Encode(EncodeError::DepthLimit { .. }) => "depth_limit",
            Error::Encode(EncodeError::TooLong { .. }) => "too_long",
            Error::Encode(EncodeError::NotMsgpack { .. }) => "not_msgpack",
            Error::Json(_) => "invalid_json",
            Error::View(_) => "invalid_view",
            Error::UnknownType { .. } => "unknown_type",
            Error::Pickle => "pickle",
            Error::TagMismatch { .. } => "tag_mismatch",
            Error::Crypto(e) => e.kind_name(),
            Error::Typed(e) => e.kind_name(),
            Error::Saver(e) => e.kind_name(),
            #[cfg(feature = "postgres")]
            Error::Postgres(e) => e.kind_name(),
        }
    }
}

/// The stable name of a decode error kind.
pub(crate) fn decode_kind_name(kind: &DecodeErrorKind) -> &'static str {
    match kind {
        DecodeErrorKind::Truncated => "truncated",
        DecodeErrorKind::InvalidUtf8 => "invalid_utf8",
        DecodeErrorKind::ReservedByte(_) => "reserved_byte",
        DecodeErrorKind::TrailingBytes { .. } => "trailing_bytes",
        DecodeErrorKind::LengthExceedsInput { .. } => "length_exceeds_input",
        DecodeErrorKind::DepthLimit { .. } => "depth_limit",
        DecodeErrorKind::NonCanonical { .. } => "non_canonical",
    }
}

/// `Result` with this crate's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;
