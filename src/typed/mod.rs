//! The typed layer: Rust types ⇄ checkpoint bytes through serde, byte-identical to
//! Python.
//!
//! [`to_vec`] and [`from_slice`] go straight between Rust values and ormsgpack bytes —
//! no [`Value`](crate::Value) tree in between. [`dumps`] and [`loads`] add Python's
//! tag rules (`None` → `("null", b"")`, top-level bytes → `("bytes", …)`, else
//! `"msgpack"`) and a [`FallbackCodec`] for values msgpack cannot hold; the
//! serializer layer's
//! [`TypedSerializerExt`](crate::serializer::TypedSerializerExt) puts them on every
//! [`Serializer`](crate::Serializer) (`dumps_typed_value(&T)`,
//! `loads_typed_value::<T>(tag, data)`). Errors are [`TypedError`]s.
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
//! use langgraph_codec::TypedSerializerExt;
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
mod direct;
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

use crate::protocol::{tags, TagError, TypedBytes};
pub use error::{TypedError, TypedErrorKind};
pub use fallback::{FallbackCodec, JsonFallback};

use crate::json::JsonError;
use crate::msgpack::marker as M;
use crate::msgpack::DecodeOptions;

/// `Result` with the typed layer's [`TypedError`].
pub type Result<T, E = TypedError> = std::result::Result<T, E>;

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
///
/// # Errors
/// A [`TypedError`]: [`TypedErrorKind::Unrepresentable`] for a value msgpack cannot
/// hold (an integer outside `i64::MIN..=u64::MAX`, a length beyond 2^32-1),
/// [`TypedErrorKind::DepthLimit`] for nesting deeper than Python reads back,
/// [`TypedErrorKind::Message`] for a `Serialize` implementation's own error.
pub fn to_vec<T: Serialize + ?Sized>(value: &T) -> Result<Vec<u8>> {
    to_vec_marked(value).map(|(out, _)| out)
}

/// [`to_vec`], and whether the value was a top-level [`pytypes::ByteArray`].
fn to_vec_marked<T: Serialize + ?Sized>(value: &T) -> Result<(Vec<u8>, bool)> {
    let mut out = Vec::with_capacity(128);
    let _active = direct::ActiveGuard::new();
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

/// Decodes one msgpack document into a `T`, with [`default_options`] (other options:
/// [`DecodeOptions::from_slice`]); trailing bytes are an error. `T` may borrow from `data`: `&str`, `&[u8]` (with `serde_bytes`),
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
/// A [`TypedError`] when the bytes are malformed msgpack (its
/// [`TypedErrorKind::Decode`] holds the same [`DecodeError`](crate::msgpack::DecodeError) the
/// [`msgpack`](crate::msgpack) decoders give for those bytes), nest deeper than the
/// limits, or do not have the shape `T` reads.
pub fn from_slice<'de, T: Deserialize<'de>>(data: &'de [u8]) -> Result<T> {
    default_options().from_slice(data)
}

/// Converts a typed value to a [`Value`](crate::Value) (through its msgpack bytes).
///
/// # Errors
/// As [`to_vec`].
pub fn to_value<T: Serialize + ?Sized>(value: &T) -> Result<crate::Value> {
    Ok(crate::msgpack::decode(&to_vec(value)?)?)
}

/// Converts a [`Value`](crate::Value) to a typed value (through its msgpack bytes).
///
/// # Errors
/// As [`from_slice`], or the value's [`EncodeError`](crate::msgpack::EncodeError) as a
/// [`TypedError`] when it has no msgpack form.
pub fn from_value<T: DeserializeOwned>(value: &crate::Value) -> Result<T> {
    from_slice(&crate::msgpack::encode(value)?)
}

/// Serializes `value` as Python's `JsonPlusSerializer.dumps_typed` would serialize the
/// equivalent Python value: `("null", b"")` for nil, `("bytes", data)` for top-level
/// bytes, `("bytearray", data)` for a top-level [`pytypes::ByteArray`], else
/// `("msgpack", …)`; values msgpack cannot hold go to `fallback`.
///
/// # Errors
/// As [`to_vec`] for values msgpack holds except [`TypedErrorKind::Unrepresentable`],
/// which goes to `fallback`; then `fallback`'s error.
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
        Err(e) if e.is_unrepresentable() => Ok(TypedBytes::new(
            fallback.type_tag(),
            Bytes::from(fallback.encode(value)?),
        )),
        Err(e) => Err(e),
    }
}

/// `dumps_typed`'s pair for a value whose msgpack bytes are `bytes`: nil as `null`,
/// a bin as `bytes` with its content, anything else as `msgpack`.
pub(crate) fn tag_msgpack(bytes: Vec<u8>) -> TypedBytes {
    if bytes == [M::NIL] {
        return TypedBytes::new(tags::NULL, Bytes::new());
    }
    let bin = match M::bin_header(&bytes) {
        Some((skip, len)) if bytes.len().checked_sub(skip) == Some(len) => Some(skip),
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

/// The msgpack bytes of the value a clear `dumps_typed` pair holds, without decoding
/// it: [`tag_msgpack`]'s inverse. A `msgpack` pair's bytes when they are one whole
/// well-formed value (walked with the decoder's checks and limits), a `bytes` pair's
/// content as a bin, nil for `null`; `None` for any other pair (decode it instead).
/// Msgpack as Python writes it is canonical, so these are the bytes decoding the pair
/// and encoding its value give (the golden vectors).
#[cfg(any(feature = "sqlite", feature = "postgres"))]
pub(crate) fn msgpack_of<'a>(tag: &str, data: &'a [u8]) -> Option<std::borrow::Cow<'a, [u8]>> {
    use std::borrow::Cow;
    match tag {
        tags::MSGPACK => {
            let whole = crate::msgpack::LazyValue::new(data).bytes().ok()?;
            (whole.len() == data.len()).then_some(Cow::Borrowed(data))
        }
        tags::BYTES => {
            let mut out = Vec::with_capacity(data.len() + 5);
            crate::msgpack::write_bin(&mut out, data).ok()?;
            Some(Cow::Owned(out))
        }
        tags::NULL if data.is_empty() => Some(Cow::Owned(vec![M::NIL])),
        _ => None,
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
/// with `serde_json`); `fallback`'s own tag with `fallback`.
///
/// # Errors
/// A [`TypedError`] of kind [`TypedErrorKind::Tag`] ([`TagError::Pickle`]) for a
/// `pickle` row, [`TagError::UnknownType`] for any other tag, [`TypedErrorKind::Json`] for a
/// `json` row that is not JSON, `fallback`'s error for its rows, else as
/// [`from_slice`].
pub fn loads<T: DeserializeOwned, F: FallbackCodec + ?Sized>(
    type_tag: &str,
    data: &[u8],
    fallback: &F,
) -> Result<T> {
    default_options().loads(type_tag, data, fallback)
}

/// Typed reads with options other than the defaults: the options value makes the call,
/// as it does for the [`msgpack`](crate::msgpack) decoders.
impl DecodeOptions {
    /// [`from_slice`] read with these options, applied to the whole document,
    /// [`Value`](crate::Value) parts included.
    ///
    /// ```
    /// use langgraph_codec::msgpack::DecodeOptions;
    /// use langgraph_codec::typed;
    ///
    /// // A uint16 holding 5, which ormsgpack never writes.
    /// assert!(typed::from_slice::<u8>(b"\xcd\x00\x05").is_err());
    /// let liberal = DecodeOptions::new().allow_non_canonical(true);
    /// assert_eq!(liberal.from_slice::<u8>(b"\xcd\x00\x05")?, 5);
    /// # Ok::<(), langgraph_codec::Error>(())
    /// ```
    ///
    /// # Errors
    ///
    /// As [`from_slice`], under these limits.
    pub fn from_slice<'de, T: Deserialize<'de>>(&self, data: &'de [u8]) -> Result<T> {
        let mut de = de::De::new(data, *self);
        let value = T::deserialize(&mut de)?;
        de.end()?;
        Ok(value)
    }

    /// [`loads`] reading rows with these options (as [`from_slice`](Self::from_slice));
    /// a `json` row's text is parsed as deep as the larger of the per-document limit
    /// and [`DEFAULT_MAX_DEPTH`](crate::msgpack::DEFAULT_MAX_DEPTH), then read under
    /// these options.
    ///
    /// ```
    /// use langgraph_codec::msgpack::DecodeOptions;
    /// use langgraph_codec::typed::{self, JsonFallback};
    ///
    /// let row = typed::dumps(&vec![vec![1u8]], &JsonFallback)?; // [[1]]: two levels
    /// let shallow = DecodeOptions::new().max_depth(1);
    /// assert!(shallow
    ///     .loads::<Vec<Vec<u8>>, _>(&row.type_tag, &row.data, &JsonFallback)
    ///     .is_err());
    /// # Ok::<(), langgraph_codec::typed::TypedError>(())
    /// ```
    ///
    /// # Errors
    /// As [`loads`], under these limits.
    pub fn loads<T: DeserializeOwned, F: FallbackCodec + ?Sized>(
        &self,
        type_tag: &str,
        data: &[u8],
        fallback: &F,
    ) -> Result<T> {
        let options = self;
        match type_tag {
            tags::MSGPACK => options.from_slice(data),
            tags::NULL => options.from_slice(&[M::NIL]),
            tags::BYTES | tags::BYTEARRAY => {
                let mut buf = Vec::with_capacity(data.len() + 5);
                crate::msgpack::write_bin(&mut buf, data)?;
                options.from_slice(&buf)
            }
            tags::PICKLE => Err(TagError::Pickle.into()),
            tags::JSON => {
                let value = revive::read_json_row(
                    data,
                    options.depth_limit().max(crate::msgpack::DEFAULT_MAX_DEPTH),
                )
                .map_err(TypedError::from)?;
                match crate::msgpack::encode(&value) {
                    Ok(bytes) => options.from_slice(&bytes),
                    Err(crate::msgpack::EncodeError::NotMsgpack { .. }) => {
                        JsonFallback.decode(data)
                    }
                    Err(e) => Err(e.into()),
                }
            }
            tag if tag == fallback.type_tag() => fallback.decode(data),
            other => Err(TagError::unknown_type(other).into()),
        }
    }
}

impl From<JsonError> for TypedError {
    fn from(e: JsonError) -> Self {
        TypedError::new(TypedErrorKind::Json(e.clone()), e.to_string())
    }
}
