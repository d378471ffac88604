//! The crate-wide [`Error`]: the top of the error layers. Each layer owns its error
//! ([`DecodeError`] and [`EncodeError`] in [`msgpack`](crate::msgpack), [`JsonError`]
//! in [`json`](crate::json), [`ViewError`] in [`view`](crate::view), [`TypedError`] in
//! [`typed`](crate::typed), [`SerializerError`] in [`serializer`](crate::serializer),
//! [`CryptoError`] in [`crypto`](crate::crypto), [`SaverError`] in
//! [`saver`](crate::saver)); each converts upward with `From`, and all of them into
//! [`Error`]. Every one reports an [`ErrorKind`]. None ever contains key material or
//! decrypted bytes.

pub use crate::json::{JsonError, JsonWriteError};
pub use crate::kind::ErrorKind;
pub use crate::msgpack::{DecodeError, DecodeErrorKind, EncodeError};
pub use crate::view::ViewError;

use crate::crypto::CryptoError;
use crate::saver::SaverError;
use crate::serializer::SerializerError;
use crate::typed::TypedError;

/// Every error this crate returns, for callers that use several layers (the CLI,
/// [`records`](crate::records)): each layer's error converts into it with `From`,
/// and it names the cause itself: a [`SaverError`] or [`CryptoError`] that wraps a
/// serializer's error becomes that error's variant ([`Error::Pickle`],
/// [`Error::Decode`], …), a [`SerializerError::Other`] that holds a [`CryptoError`]
/// becomes [`Error::Crypto`]. [`kind`](Self::kind) is the same
/// [`ErrorKind`] the layer's error reports.
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
    JsonWrite(#[from] JsonWriteError),
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
    Crypto(CryptoError),
    /// A typed (serde) value could not be written or read.
    #[error(transparent)]
    Typed(TypedError),
    /// A checkpoint saver refused a call or could not read a stored row.
    #[error(transparent)]
    Saver(SaverError),
    /// The Postgres saver's server, pool or schema reported an error (feature
    /// `postgres`).
    #[cfg(feature = "postgres")]
    #[error(transparent)]
    Postgres(Box<crate::saver::postgres::PostgresError>),
    /// The error of a [`Serializer`](crate::Serializer) implemented outside this crate
    /// ([`SerializerError::Other`]), with its kind; `source()` is that error.
    #[error("{source}")]
    Other {
        /// The kind the implementation reports.
        kind: ErrorKind,
        /// The implementation's error.
        source: Box<dyn std::error::Error + Send + Sync + 'static>,
    },
}

impl Error {
    /// What kind of error this is.
    pub fn kind(&self) -> ErrorKind {
        match self {
            Error::Decode(e) => e.error_kind(),
            Error::Encode(e) => e.kind(),
            Error::Json(e) => e.kind(),
            Error::JsonWrite(e) => e.kind(),
            Error::View(e) => e.kind(),
            Error::UnknownType { .. } => ErrorKind::UnknownType,
            Error::Pickle => ErrorKind::Pickle,
            Error::TagMismatch { .. } => ErrorKind::TagMismatch,
            Error::Crypto(e) => e.kind(),
            Error::Typed(e) => e.error_kind(),
            Error::Saver(e) => e.kind(),
            #[cfg(feature = "postgres")]
            Error::Postgres(e) => e.kind(),
            Error::Other { kind, .. } => *kind,
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

/// A typed read's error, as [`SerializerError`]'s `From` sorts it (a `pickle` row is
/// [`Error::Pickle`], …).
impl From<TypedError> for Error {
    fn from(e: TypedError) -> Self {
        SerializerError::from(e).into()
    }
}

impl From<crate::view::ReadError> for Error {
    fn from(e: crate::view::ReadError) -> Self {
        match e {
            crate::view::ReadError::Json(e) => Error::Json(e),
            crate::view::ReadError::View(e) => Error::View(e),
            crate::view::ReadError::Encode(e) => Error::Encode(e),
        }
    }
}

impl From<SerializerError> for Error {
    fn from(e: SerializerError) -> Self {
        match e {
            SerializerError::UnknownType { tag } => Error::UnknownType { tag },
            SerializerError::Pickle => Error::Pickle,
            SerializerError::TagMismatch { tag, found } => Error::TagMismatch { tag, found },
            SerializerError::Decode(e) => Error::Decode(e),
            SerializerError::Encode(e) => Error::Encode(e),
            SerializerError::Json(e) => Error::Json(e),
            SerializerError::View(e) => Error::View(e),
            SerializerError::Typed(e) => Error::Typed(e),
            SerializerError::Other { kind, source } => match source.downcast::<CryptoError>() {
                Ok(crypto) => Error::from(*crypto),
                Err(source) => Error::Other { kind, source },
            },
        }
    }
}

impl From<CryptoError> for Error {
    fn from(e: CryptoError) -> Self {
        match e {
            CryptoError::Serializer(e) => e.into(),
            other => Error::Crypto(other),
        }
    }
}

impl From<SaverError> for Error {
    fn from(e: SaverError) -> Self {
        match e {
            SaverError::Serializer(e) => e.into(),
            SaverError::Crypto(e) => e.into(),
            #[cfg(feature = "postgres")]
            SaverError::Postgres(e) => Error::Postgres(e),
            other => Error::Saver(other),
        }
    }
}

#[cfg(feature = "postgres")]
impl From<crate::saver::postgres::PostgresError> for Error {
    fn from(e: crate::saver::postgres::PostgresError) -> Self {
        Error::Postgres(Box::new(e))
    }
}

/// `Result` with this crate's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;
