//! Typed errors. Each says what was wrong and where (a byte offset or a path), and none
//! ever contains key material or decrypted bytes.

use std::fmt;

/// What was wrong with a msgpack document.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum DecodeErrorKind {
    /// The input ended inside a value.
    Truncated,
    /// A string was not valid UTF-8.
    InvalidUtf8,
    /// The reserved marker byte `0xc1`.
    ReservedByte(u8),
    /// Bytes were left after the top-level value (Python ignores them; we treat them as
    /// corruption).
    TrailingBytes {
        /// How many bytes were left.
        count: usize,
    },
    /// A length prefix declared more than the input holds; nothing was allocated for it.
    LengthExceedsInput {
        /// The declared length (elements or bytes).
        declared: u64,
        /// Bytes left in the input at that point.
        remaining: usize,
    },
    /// Arrays, maps and extension payloads nested deeper than the configured limit.
    DepthLimit {
        /// The limit in force.
        limit: usize,
    },
    /// A form ormsgpack never writes (e.g. an int16 holding 5); refused so that decoding
    /// then encoding always gives back the same bytes. See
    /// [`DecodeOptions::allow_non_canonical`](crate::msgpack::DecodeOptions::allow_non_canonical).
    NonCanonical {
        /// What was written in a longer form than needed.
        what: &'static str,
    },
}

/// A msgpack document could not be decoded: what and at which byte offset.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DecodeError {
    kind: DecodeErrorKind,
    offset: usize,
}

impl DecodeError {
    pub(crate) fn new(kind: DecodeErrorKind, offset: usize) -> Self {
        DecodeError { kind, offset }
    }

    /// What was wrong.
    pub fn kind(&self) -> &DecodeErrorKind {
        &self.kind
    }

    /// The byte offset in the input where the problem was found.
    pub fn offset(&self) -> usize {
        self.offset
    }
}

impl fmt::Display for DecodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let at = self.offset;
        match &self.kind {
            DecodeErrorKind::Truncated => {
                write!(f, "msgpack input ends inside a value at byte {at}")
            }
            DecodeErrorKind::InvalidUtf8 => {
                write!(f, "msgpack string at byte {at} is not valid UTF-8")
            }
            DecodeErrorKind::ReservedByte(b) => {
                write!(f, "reserved msgpack marker 0x{b:02x} at byte {at}")
            }
            DecodeErrorKind::TrailingBytes { count } => write!(
                f,
                "{count} trailing byte(s) after the msgpack value, starting at byte {at}"
            ),
            DecodeErrorKind::LengthExceedsInput {
                declared,
                remaining,
            } => write!(
                f,
                "msgpack length {declared} at byte {at} exceeds the {remaining} byte(s) left"
            ),
            DecodeErrorKind::DepthLimit { limit } => {
                write!(f, "msgpack nesting deeper than {limit} levels at byte {at}")
            }
            DecodeErrorKind::NonCanonical { what } => write!(
                f,
                "non-canonical msgpack at byte {at}: {what} (ormsgpack never writes this form)"
            ),
        }
    }
}

impl std::error::Error for DecodeError {}

/// A [`Value`](crate::Value) could not be encoded.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum EncodeError {
    /// Nesting deeper than the limit Python can read back.
    DepthLimit {
        /// The limit in force.
        limit: usize,
    },
    /// A string, bin, array, map or ext longer than msgpack's 32-bit lengths.
    TooLong {
        /// Which kind of item.
        what: &'static str,
        /// Its length.
        len: usize,
    },
    /// A value only a `json` row can hold: an integer beyond 64 bits or a string with
    /// lone surrogates ([`Value::BigInt`](crate::Value::BigInt),
    /// [`Value::WStr`](crate::Value::WStr)).
    NotMsgpack {
        /// The kind of value.
        kind: &'static str,
    },
}

impl fmt::Display for EncodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            EncodeError::DepthLimit { limit } => {
                write!(f, "value nests deeper than {limit} levels")
            }
            EncodeError::TooLong { what, len } => {
                write!(f, "{what} of length {len} exceeds msgpack's 2^32-1 limit")
            }
            EncodeError::NotMsgpack { kind } => {
                write!(f, "a {kind} has no msgpack form (only a json row holds it)")
            }
        }
    }
}

impl std::error::Error for EncodeError {}

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
