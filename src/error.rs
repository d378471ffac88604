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

use crate::compression::CompressionError;
use crate::crypto::CryptoError;
use crate::saver::SaverError;
use crate::serializer::SerializerError;
use crate::typed::TypedError;

/// Every error this crate returns, for callers that use several layers (the CLI,
/// `records` with feature `cli`): each layer's error converts into it with `From`,
/// and it names the cause itself: a [`SaverError`] or [`CryptoError`] that wraps a
/// serializer's error becomes that error's variant ([`Error::Serializer`] for a tag it
/// cannot handle, [`Error::Decode`] for malformed msgpack, …), a
/// [`SerializerError::Other`] that holds a [`CryptoError`] becomes [`Error::Crypto`].
/// [`kind`](Self::kind) is the same [`ErrorKind`] the layer's error reports.
///
/// ```
/// use langgraph_codec::{Error, ErrorKind, JsonPlusSerializer, Serializer, SerializerError};
/// use langgraph_codec::serializer::TagError;
///
/// let err = Error::from(JsonPlusSerializer::new().loads_typed("yaml", b"a: 1").unwrap_err());
/// assert_eq!(err.kind(), ErrorKind::UnknownType);
/// match err {
///     Error::Serializer(SerializerError::Tag(TagError::UnknownType { tag })) => {
///         assert_eq!(tag, "yaml")
///     }
///     other => panic!("expected an unknown tag, got {other:?}"),
/// }
/// ```
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
    /// The serializer layer's own failure: a type tag it cannot read or write
    /// ([`SerializerError::Tag`]), or the error of a [`Serializer`](crate::Serializer)
    /// implemented outside this crate ([`SerializerError::Other`], with its kind;
    /// `source()` is that error). A [`SerializerError`] that wraps a lower layer's error
    /// becomes that error's variant instead ([`Error::Decode`], [`Error::Typed`], …), and
    /// one whose `Other` holds a [`CryptoError`] becomes [`Error::Crypto`].
    #[error(transparent)]
    Serializer(SerializerError),
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
            Error::Serializer(e) => e.kind(),
            Error::Crypto(e) => e.kind(),
            Error::Typed(e) => e.error_kind(),
            Error::Saver(e) => e.kind(),
            #[cfg(feature = "postgres")]
            Error::Postgres(e) => e.kind(),
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
/// [`Error::Serializer`] holding [`TagError::Pickle`](crate::serializer::TagError::Pickle),
/// …).
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

/// A tag error, as the serializer layer reports it ([`Error::Serializer`]).
impl From<crate::serializer::TagError> for Error {
    fn from(e: crate::serializer::TagError) -> Self {
        Error::Serializer(e.into())
    }
}

impl From<SerializerError> for Error {
    fn from(e: SerializerError) -> Self {
        match e {
            SerializerError::Decode(e) => Error::Decode(e),
            SerializerError::Encode(e) => Error::Encode(e),
            SerializerError::Json(e) => Error::Json(e),
            SerializerError::View(e) => Error::View(e),
            SerializerError::Typed(e) => Error::Typed(e),
            SerializerError::Other { kind, source } => match source.downcast::<CryptoError>() {
                Ok(crypto) => Error::from(*crypto),
                Err(source) => match source.downcast::<CompressionError>() {
                    Ok(compression) => Error::from(*compression),
                    Err(source) => Error::Serializer(SerializerError::Other { kind, source }),
                },
            },
            tag @ SerializerError::Tag(_) => Error::Serializer(tag),
        }
    }
}

/// A compression error is named as the crypto layer names it ([`Error::Crypto`] with
/// the variant of the same name), as before compression left `crypto`.
impl From<CompressionError> for Error {
    fn from(e: CompressionError) -> Self {
        Error::Crypto(e.into())
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
