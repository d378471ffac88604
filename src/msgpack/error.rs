//! The msgpack layer's errors: [`DecodeError`] (what was wrong with a document, and at
//! which byte) and [`EncodeError`]. Re-exported at the crate root and in
//! [`crate::error`]; [`crate::Error`] wraps them with `From`.

use std::fmt;

use crate::kind::ErrorKind;

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

impl EncodeError {
    /// The crate-wide [`ErrorKind`], e.g. [`ErrorKind::TooLong`].
    pub fn kind(&self) -> ErrorKind {
        ErrorKind::from(self)
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

/// The crate-wide kind of [`DecodeError::kind`], e.g. [`ErrorKind::Truncated`].
impl From<&DecodeError> for ErrorKind {
    fn from(e: &DecodeError) -> Self {
        ErrorKind::from(&e.kind)
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
