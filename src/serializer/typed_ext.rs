//! [`TypedSerializerExt`]: typed values through any [`Serializer`], dispatching on
//! the type tag with the typed layer's [`dumps`](crate::typed::dumps) and
//! [`loads`](crate::typed::loads); [`TypedOptions`] for other settings.
//!
//! # Options instead of suffix families
//!
//! Each call has one default form, without knobs, and one configured form: an options
//! value that makes the call. [`TypedSerializerExt::loads_typed_value`] reads with the
//! defaults; [`TypedOptions::loads_typed_value`] reads with another fallback codec or
//! other decode options. The codec layers do the same ([`msgpack::decode`] /
//! [`DecodeOptions::decode`], [`typed::from_slice`] / [`DecodeOptions::from_slice`]),
//! and associated data goes with the serializer, as a view
//! ([`EncryptedSerializer::with_aad`]), so that every call, typed or not, takes it the
//! same way. No `_with_options` / `_with_aad` twins.
//!
//! [`msgpack::decode`]: crate::msgpack::decode
//! [`EncryptedSerializer::with_aad`]: crate::crypto::EncryptedSerializer::with_aad

use serde::de::DeserializeOwned;
use serde::Serialize;

use super::{Result, Serializer, TypedBytes};
use crate::error::Error;
use crate::msgpack::DecodeOptions;
use crate::typed::{self, FallbackCodec, JsonFallback, TypedError, TypedErrorKind};

/// Typed `dumps` / `loads` on every [`Serializer`], with the defaults: the
/// [`JsonFallback`] for values msgpack cannot hold, [`typed::default_options`] for
/// reading. Other settings go through [`TypedOptions`], which makes the call.
///
/// The serializer's [`wrap_serialized`](Serializer::wrap_serialized) and
/// [`unwrap_serialized`](Serializer::unwrap_serialized) hooks finish the pair: for
/// [`JsonPlusSerializer`](crate::JsonPlusSerializer) they do nothing, so typed values
/// go straight between Rust values and bytes; a wrapper such as an encrypting
/// serializer encrypts and decrypts there and wipes the decrypted bytes once the value
/// is read. Associated data goes with the serializer: the typed calls on an
/// [`EncryptedSerializer::with_aad`](crate::crypto::EncryptedSerializer::with_aad)
/// view bind the row to it.
///
/// ```
/// use langgraph_codec::crypto::{aad, AesMode, EncryptedSerializer};
/// use langgraph_codec::TypedSerializerExt;
/// use langgraph_codec::ErrorKind;
///
/// let serde = EncryptedSerializer::from_aes_key(b"0123456789abcdef", AesMode::Eax)?;
/// let here = aad::checkpoint("thread-1", "", "checkpoint-1")?;
/// let row = serde.with_aad(&here).dumps_typed_value(&vec![1u8, 2, 3])?;
/// let back: Vec<u8> = serde.with_aad(&here).loads_typed_value(&row.type_tag, &row.data)?;
/// assert_eq!(back, [1, 2, 3]);
/// // Another row's associated data does not open it.
/// let there = aad::checkpoint("thread-1", "", "checkpoint-2")?;
/// assert!(matches!(
///     serde.with_aad(&there).loads_typed_value::<Vec<u8>>(&row.type_tag, &row.data),
///     Err(e) if e.kind() == ErrorKind::AuthenticationFailed
/// ));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub trait TypedSerializerExt: Serializer {
    /// Serializes a typed value to a `(type, bytes)` pair, with the JSON fallback.
    /// Another fallback: [`TypedOptions::dumps_typed_value`].
    ///
    /// # Errors
    /// As [`typed::dumps`] (its [`TypedError`] as `source()`), or the serializer's error
    /// finishing the pair (encryption).
    fn dumps_typed_value<T: Serialize + ?Sized>(&self, value: &T) -> Result<TypedBytes> {
        TypedOptions::new().dumps_typed_value(self, value)
    }

    /// Reads a `(type, bytes)` pair into a typed value, with the JSON fallback and
    /// [`typed::default_options`]. Other settings: [`TypedOptions::loads_typed_value`].
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
        TypedOptions::new().loads_typed_value(self, type_tag, data)
    }
}

impl<S: Serializer + ?Sized> TypedSerializerExt for S {}

/// How typed values go through a serializer when the defaults of
/// [`TypedSerializerExt`] do not fit: the fallback codec for values msgpack cannot
/// hold (default [`JsonFallback`]) and the decode options rows are read with (default
/// [`typed::default_options`]). The options value makes the call, as
/// [`DecodeOptions`] does for the codec layers; building one copies a few words and
/// allocates nothing.
///
/// ```
/// use langgraph_codec::msgpack::DecodeOptions;
/// use langgraph_codec::TypedOptions;
/// use langgraph_codec::JsonPlusSerializer;
///
/// let serde = JsonPlusSerializer::new();
/// // A uint16 holding 5, which ormsgpack never writes.
/// let liberal = TypedOptions::new().decode_options(DecodeOptions::new().allow_non_canonical(true));
/// let five: u8 = liberal.loads_typed_value(&serde, "msgpack", b"\xcd\x00\x05")?;
/// assert_eq!(five, 5);
/// # Ok::<(), langgraph_codec::Error>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TypedOptions<F = JsonFallback> {
    fallback: F,
    decode: DecodeOptions,
}

impl Default for TypedOptions {
    fn default() -> Self {
        TypedOptions {
            fallback: JsonFallback,
            decode: typed::default_options(),
        }
    }
}

impl TypedOptions {
    /// The defaults: [`JsonFallback`] and [`typed::default_options`].
    pub fn new() -> Self {
        Self::default()
    }
}

impl<F: FallbackCodec> TypedOptions<F> {
    /// Values msgpack cannot hold go to `fallback`, and rows under its tag are read
    /// with it.
    pub fn fallback<G: FallbackCodec>(self, fallback: G) -> TypedOptions<G> {
        TypedOptions {
            fallback,
            decode: self.decode,
        }
    }

    /// Rows are read with `options` (as [`DecodeOptions::loads`]): tighter limits for
    /// untrusted rows, or non-canonical forms accepted.
    pub fn decode_options(mut self, options: DecodeOptions) -> Self {
        self.decode = options;
        self
    }

    /// [`TypedSerializerExt::dumps_typed_value`] with this fallback codec, through
    /// `serializer`.
    ///
    /// # Errors
    /// As [`TypedSerializerExt::dumps_typed_value`], or the fallback's error.
    pub fn dumps_typed_value<S, T>(&self, serializer: &S, value: &T) -> Result<TypedBytes>
    where
        S: Serializer + ?Sized,
        T: Serialize + ?Sized,
    {
        serializer.wrap_serialized(typed::dumps(value, &self.fallback)?, b"")
    }

    /// [`TypedSerializerExt::loads_typed_value`] with these options, through
    /// `serializer`.
    ///
    /// # Errors
    /// As [`TypedSerializerExt::loads_typed_value`], under these limits, or the
    /// fallback's error for its rows.
    pub fn loads_typed_value<S, T>(&self, serializer: &S, type_tag: &str, data: &[u8]) -> Result<T>
    where
        S: Serializer + ?Sized,
        T: DeserializeOwned,
    {
        load_through(serializer, type_tag, data, &self.fallback, &self.decode)
    }
}

/// Reads a typed value through the serializer's
/// [`unwrap_serialized`](Serializer::unwrap_serialized) hook: the value is read while
/// the hook holds the (possibly decrypted) bytes, which it wipes afterwards.
fn load_through<S, T, F>(
    serializer: &S,
    type_tag: &str,
    data: &[u8],
    fallback: &F,
    options: &DecodeOptions,
) -> Result<T>
where
    S: Serializer + ?Sized,
    T: DeserializeOwned,
    F: FallbackCodec + ?Sized,
{
    let mut out = None;
    serializer.unwrap_serialized(type_tag, data, b"", &mut |tag, bytes| {
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
