//! The typed layer: Rust types ⇄ checkpoint bytes through serde, byte-identical to
//! Python.
//!
//! [`to_vec`] and [`from_slice`] go straight between Rust values and ormsgpack bytes —
//! no [`Value`](crate::Value) tree in between. [`TypedSerializerExt`] puts the same on
//! every [`Serializer`]: `dumps_typed_value(&T)` and `loads_typed_value::<T>(tag, data)`
//! with Python's tag rules (`None` → `("null", b"")`, top-level bytes →
//! `("bytes", …)`, else `"msgpack"`), and a [`FallbackCodec`] for values msgpack cannot
//! hold.
//!
//! Mapping: structs are maps with their field names in declaration order, `None` is
//! nil, `serialize_bytes` (e.g. `serde_bytes`) is bin, tuples and sequences are arrays,
//! map keys keep their types. [`Value`](crate::Value) implements `Serialize` and
//! `Deserialize`, so a typed struct can hold untyped parts and keep unknown Python
//! objects byte for byte. [`pytypes`] has the Python types with their exact envelopes:
//! datetimes, UUIDs, decimals, sets, paths, enums, LangGraph's `Send`, `Interrupt`,
//! `Command`, the delta snapshot, LangChain messages, and wrappers for your own
//! pydantic models, dataclasses and namedtuples.
//!
//! ```
//! use langgraph_codec::typed::pytypes::{AnyMessage, DateTime, HumanMessage, AiMessage};
//! use langgraph_codec::typed::TypedSerializerExt;
//! use langgraph_codec::JsonPlusSerializer;
//! use serde::{Deserialize, Serialize};
//!
//! #[derive(Serialize, Deserialize, Debug, PartialEq)]
//! struct State {
//!     messages: Vec<AnyMessage>,
//!     started: DateTime,
//! }
//!
//! let state = State {
//!     messages: vec![
//!         HumanMessage::new("hi").with_id("h1").into(),
//!         AiMessage::new("hello!").with_id("a1").into(),
//!     ],
//!     started: "2024-06-01T12:00:00+02:00".parse()?,
//! };
//! let serde = JsonPlusSerializer::new();
//! let typed = serde.dumps_typed_value(&state)?;
//! assert_eq!(typed.type_tag, "msgpack");
//! let back: State = serde.loads_typed_value(&typed.type_tag, &typed.data)?;
//! assert_eq!(back, state);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

mod de;
mod error;
mod fallback;
mod object;
pub mod pytypes;
pub(crate) mod revive;
mod ser;
mod value_ref_serde;
mod value_serde;

use bytes::Bytes;
use serde::de::{Deserialize, DeserializeOwned};
use serde::Serialize;

pub use error::{TypedError, TypedErrorKind};
pub use fallback::{FallbackCodec, JsonFallback};

use crate::error::{Error, Result};
use crate::msgpack::DecodeOptions;
use crate::serializer::{tags, Serializer, TypedBytes};

/// Newtype-struct name: the content is the pair `(code, payload)` of an ext.
pub(crate) const EXT_MARKER: &str = "$langgraph_codec::Ext";
/// Newtype-struct name: the content is the bytes of one complete msgpack item.
pub(crate) const RAW_MARKER: &str = "$langgraph_codec::Raw";
/// Newtype-struct name: the content is a `Value` that encodes itself straight into the
/// serializer's output buffer, lent to it for the call (see `ser::serialize_direct`).
pub(crate) const DIRECT_MARKER: &str = "$langgraph_codec::Direct";
/// Newtype-struct name asked for by `Value`'s `Deserialize`.
pub(crate) const VALUE_MARKER: &str = "$langgraph_codec::Value";
/// Newtype-struct name asked for by `ValueRef`'s `Deserialize`: this crate's
/// deserializer lends the item's checked bytes as `RAW_MARKER(bytes)`.
pub(crate) const VALUE_REF_MARKER: &str = "$langgraph_codec::ValueRef";
/// Newtype-struct name of [`pytypes::ByteArray`]: written as a bin; at the top level
/// [`dumps`] then uses the `bytearray` tag.
pub(crate) const BYTEARRAY_MARKER: &str = "$langgraph_codec::ByteArray";

/// Encodes `value` as msgpack, exactly as ormsgpack would encode the equivalent Python
/// value.
///
/// ```
/// #[derive(serde::Serialize)]
/// struct Point { x: i32, y: Option<i32> }
/// let bytes = langgraph_codec::typed::to_vec(&Point { x: 1, y: None })?;
/// assert_eq!(bytes, b"\x82\xa1x\x01\xa1y\xc0");
/// # Ok::<(), langgraph_codec::Error>(())
/// ```
pub fn to_vec<T: Serialize + ?Sized>(value: &T) -> Result<Vec<u8>> {
    to_vec_marked(value).map(|(out, _)| out)
}

/// [`to_vec`], and whether the value was a top-level [`pytypes::ByteArray`].
fn to_vec_marked<T: Serialize + ?Sized>(value: &T) -> Result<(Vec<u8>, bool)> {
    let mut out = Vec::with_capacity(128);
    let _active = ser::ActiveGuard::new();
    let mut ser = ser::Ser::new(&mut out);
    value.serialize(&mut ser)?;
    let top_bytearray = ser.top_bytearray();
    Ok((out, top_bytearray))
}

/// How deep serde may recurse while reading typed values: 512 levels of arrays and maps
/// per document, each envelope payload a document of its own as Python packs it
/// (ormsgpack writes at most 255 per document, so nothing Python writes is refused), and
/// [`DEFAULT_MAX_TOTAL_DEPTH`](crate::msgpack::DEFAULT_MAX_TOTAL_DEPTH) levels in all.
/// [`Value`](crate::Value) parts are read by the msgpack decoder on the same reader,
/// under the same limits ([`default_options`]). The reader's own recursion continues on heap-allocated stack segments; the
/// per-document bound also bounds what serde's buffering for `flatten` and untagged
/// enums recurses over (buffered envelopes are re-read as documents of their own).
pub const DEFAULT_TYPED_DEPTH: usize = 512;

/// The options typed reads use by default: [`DecodeOptions`]' defaults with
/// [`DEFAULT_TYPED_DEPTH`] levels per document.
pub fn default_options() -> DecodeOptions {
    DecodeOptions::new().max_depth(DEFAULT_TYPED_DEPTH)
}

/// Decodes one msgpack document into a `T`, with [`default_options`]; trailing bytes
/// are an error. `T` may borrow from `data`: `&str`, `&[u8]` (with `serde_bytes`),
/// `Cow<str>` and `#[serde(borrow)]` fields copy nothing.
///
/// ```
/// use std::borrow::Cow;
///
/// #[derive(serde::Deserialize)]
/// struct Row<'a> {
///     id: &'a str,
///     #[serde(borrow)]
///     note: Cow<'a, str>,
/// }
/// let bytes = b"\x82\xa2id\xa3abc\xa4note\xa2hi";
/// let row: Row<'_> = langgraph_codec::typed::from_slice(bytes)?;
/// assert_eq!((row.id, &*row.note), ("abc", "hi"));
/// assert!(matches!(row.note, Cow::Borrowed(_))); // no copy
/// # Ok::<(), langgraph_codec::Error>(())
/// ```
///
/// # Errors
///
/// [`Error::Typed`] when the bytes are malformed msgpack (its
/// [`TypedErrorKind::Decode`] holds the same [`DecodeError`](crate::DecodeError) the
/// [`msgpack`](crate::msgpack) decoders give for those bytes), nest deeper than the
/// limits, or do not have the shape `T` reads.
pub fn from_slice<'de, T: Deserialize<'de>>(data: &'de [u8]) -> Result<T> {
    from_slice_with_options(data, &default_options())
}

/// Like [`from_slice`] with another per-document nesting limit.
///
/// # Errors
///
/// As [`from_slice`].
pub fn from_slice_with_depth<'de, T: Deserialize<'de>>(
    data: &'de [u8],
    max_depth: usize,
) -> Result<T> {
    from_slice_with_options(data, &default_options().max_depth(max_depth))
}

/// Like [`from_slice`], read with `options` — the same [`DecodeOptions`] the
/// [`msgpack`](crate::msgpack) decoders take, applied to the whole document,
/// [`Value`](crate::Value) parts included.
///
/// ```
/// use langgraph_codec::msgpack::DecodeOptions;
/// use langgraph_codec::typed;
///
/// // A uint16 holding 5, which ormsgpack never writes.
/// assert!(typed::from_slice::<u8>(b"\xcd\x00\x05").is_err());
/// let liberal = DecodeOptions::new().allow_non_canonical(true);
/// assert_eq!(typed::from_slice_with_options::<u8>(b"\xcd\x00\x05", &liberal)?, 5);
/// # Ok::<(), langgraph_codec::Error>(())
/// ```
///
/// # Errors
///
/// As [`from_slice`], under `options`' limits.
pub fn from_slice_with_options<'de, T: Deserialize<'de>>(
    data: &'de [u8],
    options: &DecodeOptions,
) -> Result<T> {
    let mut de = de::De::new(data, *options);
    let value = T::deserialize(&mut de)?;
    de.end()?;
    Ok(value)
}

/// Converts a typed value to a [`Value`](crate::Value) (through its msgpack bytes).
pub fn to_value<T: Serialize + ?Sized>(value: &T) -> Result<crate::Value> {
    Ok(crate::msgpack::decode(&to_vec(value)?)?)
}

/// Converts a [`Value`](crate::Value) to a typed value (through its msgpack bytes).
pub fn from_value<T: DeserializeOwned>(value: &crate::Value) -> Result<T> {
    from_slice(&crate::msgpack::encode(value)?)
}

/// Serializes `value` as Python's `JsonPlusSerializer.dumps_typed` would serialize the
/// equivalent Python value: `("null", b"")` for nil, `("bytes", data)` for top-level
/// bytes, `("bytearray", data)` for a top-level [`pytypes::ByteArray`], else
/// `("msgpack", …)`; values msgpack cannot hold go to `fallback`.
pub fn dumps<T: Serialize + ?Sized, F: FallbackCodec + ?Sized>(
    value: &T,
    fallback: &F,
) -> Result<TypedBytes> {
    match to_vec_marked(value) {
        Ok((bytes, top_bytearray)) => {
            let mut typed = tag_msgpack(bytes);
            if top_bytearray && typed.type_tag == tags::BYTES {
                typed.type_tag = tags::BYTEARRAY.to_owned();
            }
            Ok(typed)
        }
        Err(Error::Typed(e)) if e.is_unrepresentable() => Ok(TypedBytes::new(
            fallback.type_tag(),
            Bytes::from(fallback.encode(value)?),
        )),
        Err(e) => Err(e),
    }
}

fn tag_msgpack(bytes: Vec<u8>) -> TypedBytes {
    if bytes == [0xc0] {
        return TypedBytes::new(tags::NULL, Bytes::new());
    }
    let bin = match bytes.as_slice() {
        [0xc4, n, rest @ ..] if usize::from(*n) == rest.len() => Some(2),
        [0xc5, a, b, rest @ ..] if usize::from(u16::from_be_bytes([*a, *b])) == rest.len() => {
            Some(3)
        }
        [0xc6, a, b, c, d, rest @ ..]
            if u32::from_be_bytes([*a, *b, *c, *d]) as usize == rest.len() =>
        {
            Some(5)
        }
        _ => None,
    };
    match bin {
        Some(skip) => {
            let data = Bytes::from(bytes);
            TypedBytes::new(tags::BYTES, data.slice(skip..))
        }
        None => TypedBytes::new(tags::MSGPACK, bytes),
    }
}

/// Reads a `(type, bytes)` pair as `JsonPlusSerializer` wrote it into a `T`.
///
/// `null` reads as nil (`Option::None`, `()`), `bytes` / `bytearray` as a bin,
/// `msgpack` directly; `json` (Python's legacy rows, LangGraphJS rows and
/// [`JsonFallback`] rows) as [`JsonPlusSerializer`](crate::JsonPlusSerializer) reads it,
/// with the `lc` envelopes Python rebuilds rebuilt, so a LangChain message written by
/// LangGraphJS reads into [`AnyMessage`](pytypes::AnyMessage) like any other (a row that
/// holds integers beyond 64 bits or lone surrogates, which msgpack cannot, is read
/// with `serde_json`); `fallback`'s own tag with `fallback`; `pickle` is
/// [`Error::Pickle`], anything else [`Error::UnknownType`].
pub fn loads<T: DeserializeOwned, F: FallbackCodec + ?Sized>(
    type_tag: &str,
    data: &[u8],
    fallback: &F,
) -> Result<T> {
    match type_tag {
        tags::MSGPACK => from_slice(data),
        tags::NULL => from_slice(&[0xc0]),
        tags::BYTES | tags::BYTEARRAY => {
            let mut buf = Vec::with_capacity(data.len() + 5);
            crate::msgpack::write_bin(&mut buf, data)?;
            from_slice(&buf)
        }
        tags::PICKLE => Err(Error::Pickle),
        tags::JSON => {
            let value =
                revive::revive(crate::json::parse(data, crate::msgpack::DEFAULT_MAX_DEPTH)?);
            match crate::msgpack::encode(&value) {
                Ok(bytes) => from_slice(&bytes),
                Err(crate::error::EncodeError::NotMsgpack { .. }) => JsonFallback.decode(data),
                Err(e) => Err(e.into()),
            }
        }
        tag if tag == fallback.type_tag() => fallback.decode(data),
        other => Err(Error::UnknownType {
            tag: other.to_owned(),
        }),
    }
}

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
/// use langgraph_codec::crypto::{aad, AesMode, CryptoError, EncryptedSerializer};
/// use langgraph_codec::typed::TypedSerializerExt;
/// use langgraph_codec::Error;
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
///     Err(Error::Crypto(CryptoError::AuthenticationFailed { .. }))
/// ));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub trait TypedSerializerExt: Serializer {
    /// Serializes a typed value to a `(type, bytes)` pair, with the JSON fallback.
    ///
    /// # Errors
    /// As [`dumps`], or the serializer's error finishing the pair (encryption).
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
        self.wrap_serialized(dumps(value, fallback)?, b"")
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
        self.wrap_serialized(dumps(value, &JsonFallback)?, aad)
    }

    /// Reads a `(type, bytes)` pair into a typed value, with the JSON fallback.
    ///
    /// # Errors
    /// The serializer's error opening the pair (decryption), or as [`loads`].
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
        load_through(self, type_tag, data, b"", fallback)
    }

    /// [`loads_typed_value`](Self::loads_typed_value) of a row bound to the associated
    /// data `aad`; serializers that do not encrypt ignore it.
    ///
    /// # Errors
    /// As [`loads_typed_value`](Self::loads_typed_value); an encrypting serializer
    /// refuses a row bound to other associated data
    /// ([`CryptoError::AuthenticationFailed`](crate::crypto::CryptoError::AuthenticationFailed)).
    fn loads_typed_value_with_aad<T: DeserializeOwned>(
        &self,
        type_tag: &str,
        data: &[u8],
        aad: &[u8],
    ) -> Result<T> {
        load_through(self, type_tag, data, aad, &JsonFallback)
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
) -> Result<T>
where
    S: Serializer + ?Sized,
    T: DeserializeOwned,
    F: FallbackCodec + ?Sized,
{
    let mut out = None;
    serializer.unwrap_serialized(type_tag, data, aad, &mut |tag, bytes| {
        let read = loads(tag, bytes, fallback);
        out = Some(if serializer.confidential() {
            // Decrypted data: the error keeps its kind and offset, not what it found.
            read.map_err(|e| match e {
                Error::Typed(e) => Error::Typed(e.redacted()),
                other => other,
            })?
        } else {
            read?
        });
        Ok(())
    })?;
    out.ok_or_else(|| {
        Error::Typed(TypedError::new(
            TypedErrorKind::Message,
            "the serializer's unwrap_serialized hook did not hand over the row",
        ))
    })
}

impl<S: Serializer + ?Sized> TypedSerializerExt for S {}
