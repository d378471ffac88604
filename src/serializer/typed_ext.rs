//! [`TypedSerializerExt`]: typed values through any [`Serializer`], dispatching on
//! the type tag with the typed layer's [`dumps`](crate::typed::dumps) and
//! [`loads`](crate::typed::loads).

use serde::de::DeserializeOwned;
use serde::Serialize;

use super::{Result, Serializer, TypedBytes};
use crate::error::Error;
use crate::msgpack::DecodeOptions;
use crate::typed::{self, FallbackCodec, JsonFallback, TypedError, TypedErrorKind};

/// Typed `dumps` / `loads` on every [`Serializer`].
///
/// The serializer's [`wrap_serialized`](Serializer::wrap_serialized) and
/// [`unwrap_serialized`](Serializer::unwrap_serialized) hooks finish the pair: for
/// [`JsonPlusSerializer`](crate::JsonPlusSerializer) they do nothing, so typed values
/// go straight between Rust values and bytes; a wrapper such as an encrypting
/// serializer encrypts and decrypts there (binding the row to associated data with the
/// `_with_aad` methods, as its `dumps_typed_with_aad` does for [`Value`](crate::Value)s)
/// and wipes the decrypted bytes once the value is read.
///
/// ```
/// use langgraph_codec::crypto::{aad, AesMode, EncryptedSerializer};
/// use langgraph_codec::serializer::TypedSerializerExt;
/// use langgraph_codec::ErrorKind;
///
/// let serde = EncryptedSerializer::from_aes_key(b"0123456789abcdef", AesMode::Eax)?;
/// let here = aad::checkpoint("thread-1", "", "checkpoint-1")?;
/// let row = serde.dumps_typed_value_with_aad(&vec![1u8, 2, 3], &here)?;
/// let back: Vec<u8> = serde.loads_typed_value_with_aad(&row.type_tag, &row.data, &here)?;
/// assert_eq!(back, [1, 2, 3]);
/// // Another row's associated data does not open it.
/// let there = aad::checkpoint("thread-1", "", "checkpoint-2")?;
/// assert!(matches!(
///     serde.loads_typed_value_with_aad::<Vec<u8>>(&row.type_tag, &row.data, &there),
///     Err(e) if e.kind() == ErrorKind::AuthenticationFailed
/// ));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub trait TypedSerializerExt: Serializer {
    /// Serializes a typed value to a `(type, bytes)` pair, with the JSON fallback.
    ///
    /// # Errors
    /// As [`typed::dumps`] (its [`TypedError`] as `source()`), or the serializer's error
    /// finishing the pair (encryption).
    fn dumps_typed_value<T: Serialize + ?Sized>(&self, value: &T) -> Result<TypedBytes> {
        self.dumps_typed_value_with(value, &JsonFallback)
    }

    /// Serializes a typed value with the given fallback codec.
    ///
    /// # Errors
    /// As [`dumps_typed_value`](Self::dumps_typed_value).
    fn dumps_typed_value_with<T: Serialize + ?Sized, F: FallbackCodec + ?Sized>(
        &self,
        value: &T,
        fallback: &F,
    ) -> Result<TypedBytes> {
        self.wrap_serialized(typed::dumps(value, fallback)?, b"")
    }

    /// [`dumps_typed_value`](Self::dumps_typed_value) binding the row to the associated
    /// data `aad` (see [`crypto::aad`](crate::crypto::aad)); serializers that do not
    /// encrypt ignore it.
    ///
    /// # Errors
    /// As [`dumps_typed_value`](Self::dumps_typed_value).
    fn dumps_typed_value_with_aad<T: Serialize + ?Sized>(
        &self,
        value: &T,
        aad: &[u8],
    ) -> Result<TypedBytes> {
        self.wrap_serialized(typed::dumps(value, &JsonFallback)?, aad)
    }

    /// Reads a `(type, bytes)` pair into a typed value, with the JSON fallback.
    ///
    /// # Errors
    /// The serializer's error opening the pair (decryption), or as [`typed::loads`]
    /// (the [`TypedError`] as `source()`: kinds [`ErrorKind::Pickle`] and
    /// [`ErrorKind::UnknownType`] for a `pickle` or unknown tag,
    /// [`ErrorKind::InvalidJson`] for a `json` row that is not JSON, …).
    ///
    /// [`ErrorKind::Pickle`]: crate::ErrorKind::Pickle
    /// [`ErrorKind::UnknownType`]: crate::ErrorKind::UnknownType
    /// [`ErrorKind::InvalidJson`]: crate::ErrorKind::InvalidJson
    fn loads_typed_value<T: DeserializeOwned>(&self, type_tag: &str, data: &[u8]) -> Result<T> {
        self.loads_typed_value_with(type_tag, data, &JsonFallback)
    }

    /// Reads a `(type, bytes)` pair with the given fallback codec.
    ///
    /// # Errors
    /// As [`loads_typed_value`](Self::loads_typed_value).
    fn loads_typed_value_with<T: DeserializeOwned, F: FallbackCodec + ?Sized>(
        &self,
        type_tag: &str,
        data: &[u8],
        fallback: &F,
    ) -> Result<T> {
        load_through(
            self,
            type_tag,
            data,
            b"",
            fallback,
            &typed::default_options(),
        )
    }

    /// [`loads_typed_value`](Self::loads_typed_value) reading with `options` (as
    /// [`DecodeOptions::loads`]): tighter limits for untrusted rows, or
    /// non-canonical forms accepted.
    ///
    /// ```
    /// use langgraph_codec::msgpack::DecodeOptions;
    /// use langgraph_codec::serializer::TypedSerializerExt;
    /// use langgraph_codec::JsonPlusSerializer;
    ///
    /// let serde = JsonPlusSerializer::new();
    /// // A uint16 holding 5, which ormsgpack never writes.
    /// assert!(serde.loads_typed_value::<u8>("msgpack", b"\xcd\x00\x05").is_err());
    /// let liberal = DecodeOptions::new().allow_non_canonical(true);
    /// let five: u8 = serde.loads_typed_value_with_options("msgpack", b"\xcd\x00\x05", &liberal)?;
    /// assert_eq!(five, 5);
    /// # Ok::<(), langgraph_codec::Error>(())
    /// ```
    ///
    /// # Errors
    /// As [`loads_typed_value`](Self::loads_typed_value), under `options`' limits.
    fn loads_typed_value_with_options<T: DeserializeOwned>(
        &self,
        type_tag: &str,
        data: &[u8],
        options: &DecodeOptions,
    ) -> Result<T> {
        load_through(self, type_tag, data, b"", &JsonFallback, options)
    }

    /// [`loads_typed_value`](Self::loads_typed_value) of a row bound to the associated
    /// data `aad`; serializers that do not encrypt ignore it.
    ///
    /// # Errors
    /// As [`loads_typed_value`](Self::loads_typed_value); an encrypting serializer
    /// refuses a row bound to other associated data
    /// (kind [`AuthenticationFailed`](crate::ErrorKind::AuthenticationFailed)).
    fn loads_typed_value_with_aad<T: DeserializeOwned>(
        &self,
        type_tag: &str,
        data: &[u8],
        aad: &[u8],
    ) -> Result<T> {
        load_through(
            self,
            type_tag,
            data,
            aad,
            &JsonFallback,
            &typed::default_options(),
        )
    }
}

/// Reads a typed value through the serializer's
/// [`unwrap_serialized`](Serializer::unwrap_serialized) hook: the value is read while
/// the hook holds the (possibly decrypted) bytes, which it wipes afterwards.
fn load_through<S, T, F>(
    serializer: &S,
    type_tag: &str,
    data: &[u8],
    aad: &[u8],
    fallback: &F,
    options: &DecodeOptions,
) -> Result<T>
where
    S: Serializer + ?Sized,
    T: DeserializeOwned,
    F: FallbackCodec + ?Sized,
{
    let mut out = None;
    serializer.unwrap_serialized(type_tag, data, aad, &mut |tag, bytes| {
        let read = options.loads(tag, bytes, fallback);
        out = Some(if serializer.confidential() {
            // Decrypted data: the error keeps its kind and offset, not what it found.
            read.map_err(TypedError::redacted)?
        } else {
            read?
        });
        Ok(())
    })?;
    out.ok_or_else(|| {
        Error::from(TypedError::new(
            TypedErrorKind::Message,
            "the serializer's unwrap_serialized hook did not hand over the row",
        ))
    })
}

impl<S: Serializer + ?Sized> TypedSerializerExt for S {}
