//! The second codec, tried only when msgpack cannot hold a value.

use serde::de::DeserializeOwned;
use serde::Serialize;

use super::{Result, TypedError};

/// A codec with its own type tag, used by [`dumps`](super::dumps) only when msgpack
/// cannot represent a value (integers beyond 64 bits, nesting beyond the limit, …) and
/// by [`loads`](super::loads) for rows carrying its tag.
pub trait FallbackCodec {
    /// The type tag written with this codec's bytes.
    fn type_tag(&self) -> &str;
    /// Encodes a value.
    ///
    /// # Errors
    /// A [`TypedError`] when the codec cannot encode the value.
    fn encode<T: Serialize + ?Sized>(&self, value: &T) -> Result<Vec<u8>>;
    /// Decodes a value.
    ///
    /// # Errors
    /// A [`TypedError`] when the bytes do not hold a `T` in this codec's form.
    fn decode<T: DeserializeOwned>(&self, data: &[u8]) -> Result<T>;
}

/// The built-in fallback: JSON text under the tag `"json"`, which Python's
/// `JsonPlusSerializer.loads_typed` reads too (`json.loads`, with arbitrary-size
/// integers).
///
/// ```
/// use langgraph_codec::typed::{self, JsonFallback};
///
/// // 2^64 does not fit msgpack; Python reads the JSON row back as the same int.
/// let typed = typed::dumps(&(1u128 << 64), &JsonFallback)?;
/// assert_eq!(typed.type_tag, "json");
/// assert_eq!(&typed.data[..], b"18446744073709551616");
/// let back: u128 = typed::loads(&typed.type_tag, &typed.data, &JsonFallback)?;
/// assert_eq!(back, 1u128 << 64);
/// # Ok::<(), langgraph_codec::typed::TypedError>(())
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct JsonFallback;

impl FallbackCodec for JsonFallback {
    fn type_tag(&self) -> &str {
        super::tags::JSON
    }

    fn encode<T: Serialize + ?Sized>(&self, value: &T) -> Result<Vec<u8>> {
        serde_json::to_vec(value).map_err(|e| {
            TypedError::msg(format!(
                "the JSON fallback cannot encode the value either: {e}"
            ))
            .with_source(e)
        })
    }

    fn decode<T: DeserializeOwned>(&self, data: &[u8]) -> Result<T> {
        serde_json::from_slice(data).map_err(|e| {
            TypedError::msg(format!("JSON row does not match the Rust type: {e}")).with_source(e)
        })
    }
}
