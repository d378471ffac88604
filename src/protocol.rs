//! The `(type, bytes)` protocol's vocabulary: [`TypedBytes`], the type [`tags`] and
//! [`TagError`]. Public at the crate root only, with the rest of the serializer
//! protocol (one public path per item).
//!
//! # Why a module of its own, below `typed`
//!
//! These items are the serializer protocol's, but the typed layer (rank 3) already
//! speaks it: `typed::dumps` returns a [`TypedBytes`] under Python's tag rules (`None`
//! → `("null", b"")`, top-level bytes → `("bytes", …)`, everything else `"msgpack"`),
//! `typed::loads` dispatches on the tag, and a [`TagError`] is one of its errors.
//! Defining them in `serializer` (rank 4) would make `typed` name a layer above it.
//! So the vocabulary sits here, at the bottom, with no dependency but [`bytes`] and
//! the error kinds, and the crate root is its public home; the tag *rules* stay with the
//! typed codec that applies them (they need its serde machinery), and the
//! [`Serializer`](crate::Serializer) trait and its implementations stay in `serializer`.

use bytes::Bytes;

use crate::kind::ErrorKind;

/// The type tags Python's `JsonPlusSerializer` and the savers use.
pub mod tags {
    /// `None`, with empty bytes.
    pub const NULL: &str = "null";
    /// Top-level `bytes`, stored as they are.
    pub const BYTES: &str = "bytes";
    /// Top-level `bytearray`, stored as they are.
    pub const BYTEARRAY: &str = "bytearray";
    /// Everything else: an ormsgpack document.
    pub const MSGPACK: &str = "msgpack";
    /// Legacy Python rows and everything LangGraphJS writes: JSON text.
    pub const JSON: &str = "json";
    /// Python's pickle fallback; unreadable outside Python.
    pub const PICKLE: &str = "pickle";
    /// Savers' marker for a channel that has no value (empty bytes).
    pub const EMPTY: &str = "empty";
}

/// One serialized value: a type tag and the bytes, as a saver stores them.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Default)]
pub struct TypedBytes {
    /// The type tag, e.g. `"msgpack"` or `"msgpack+aes"`.
    pub type_tag: String,
    /// The serialized bytes.
    pub data: Bytes,
}

impl TypedBytes {
    /// A new pair.
    pub fn new(type_tag: impl Into<String>, data: impl Into<Bytes>) -> Self {
        TypedBytes {
            type_tag: type_tag.into(),
            data: data.into(),
        }
    }
}

/// A `(type, bytes)` pair whose type tag cannot be read or written: the one definition
/// of these failures, shared by every layer that reports them (the typed layer's
/// [`TypedErrorKind::Tag`](crate::typed::TypedErrorKind::Tag), and the crate's
/// [`Error`](crate::Error), whose [`as_tag`](crate::Error::as_tag) gives it back).
///
/// ```
/// use langgraph_codec::TagError;
/// use langgraph_codec::{ErrorKind, JsonPlusSerializer, Serializer};
///
/// let err = JsonPlusSerializer::new().loads_typed("pickle", b"\x80\x04").unwrap_err();
/// assert_eq!(err.as_tag(), Some(&TagError::Pickle));
/// assert_eq!(err.kind(), ErrorKind::Pickle);
/// ```
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum TagError {
    /// A `(type, bytes)` pair carried a type tag this serializer does not know. For a
    /// tag of an encrypted (`+aes`) or compressed (`+zlib`) row the message says which
    /// wrapper reads it.
    #[error("unknown serialization type {tag:?}{}", wrapper_hint(tag))]
    UnknownType {
        /// The tag as found.
        tag: String,
    },
    /// The row was written by Python's pickle fallback (type tag `pickle`).
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
}

/// Advice for a tag that a wrapper serializer reads: the serializer that met it is a
/// plain one (the wrappers peel their suffix before their inner serializer sees it).
fn wrapper_hint(tag: &str) -> &'static str {
    match tag.rsplit_once('+').map(|(_, suffix)| suffix) {
        Some("aes") => {
            ": the row is encrypted; read it with an EncryptedSerializer \
             (EncryptedSerializer::from_env() with LANGGRAPH_AES_KEY set to the key it was \
             written with), not a plain serializer"
        }
        Some("zlib") => {
            ": the row is compressed; read it with a CompressedSerializer (inside an \
             EncryptedSerializer for +zlib+aes rows)"
        }
        _ => "",
    }
}

impl TagError {
    /// An [`UnknownType`](Self::UnknownType) error for `tag`.
    pub fn unknown_type(tag: impl Into<String>) -> Self {
        TagError::UnknownType { tag: tag.into() }
    }

    /// What kind of error this is: [`ErrorKind::UnknownType`], [`ErrorKind::Pickle`]
    /// or [`ErrorKind::TagMismatch`].
    pub fn kind(&self) -> ErrorKind {
        match self {
            TagError::UnknownType { .. } => ErrorKind::UnknownType,
            TagError::Pickle => ErrorKind::Pickle,
            TagError::TagMismatch { .. } => ErrorKind::TagMismatch,
        }
    }
}

impl From<&TagError> for ErrorKind {
    fn from(e: &TagError) -> Self {
        e.kind()
    }
}
