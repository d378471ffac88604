//! Python `set`, `frozenset` and `collections.deque`.

use serde::de::{Deserialize, DeserializeOwned, Deserializer};
use serde::ser::{Serialize, Serializer};

use crate::typed::object::{read_simple, write_object};
use crate::value::{ObjectKind, Value};

macro_rules! collection {
    ($(#[$doc:meta])* $ty:ident, $module:literal, $name:literal) => {
        $(#[$doc])*
        #[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
        pub struct $ty<T>(pub Vec<T>);

        impl<T> From<Vec<T>> for $ty<T> {
            fn from(items: Vec<T>) -> Self {
                $ty(items)
            }
        }

        impl<T: Serialize> Serialize for $ty<T> {
            fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                write_object(s, ObjectKind::ConstructorSingleArg, $module, $name, &self.0, None)
            }
        }

        impl<'de, T: DeserializeOwned> Deserialize<'de> for $ty<T> {
            fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                let (_, items) =
                    read_simple(d, ObjectKind::ConstructorSingleArg, $module, &[$name])?;
                Ok($ty(items))
            }
        }
    };
}

collection!(
    /// Python `set`: `ext 0 ("builtins", "set", [items])`. The items keep their order
    /// (Python's iteration order when read); no deduplication is done.
    PySet,
    "builtins",
    "set"
);
collection!(
    /// Python `frozenset`: `ext 0 ("builtins", "frozenset", [items])`.
    FrozenSet,
    "builtins",
    "frozenset"
);
collection!(
    /// Python `collections.deque`: `ext 0 ("collections", "deque", [items])` (`maxlen`
    /// is not stored, as in Python).
    Deque,
    "collections",
    "deque"
);

/// Python `bytearray`. Nested in a value it is a msgpack bin, like `bytes`; at the top
/// level [`typed::dumps`](crate::typed::dumps) writes it under the `bytearray` tag, as
/// Python does.
///
/// ```
/// use langgraph_codec::typed::pytypes::ByteArray;
/// use langgraph_codec::typed::{self, JsonFallback};
///
/// let row = typed::dumps(&ByteArray::from(&b"\x00\x01"[..]), &JsonFallback)?;
/// assert_eq!((row.type_tag.as_str(), &row.data[..]), ("bytearray", &b"\x00\x01"[..]));
/// let back: ByteArray = typed::loads(&row.type_tag, &row.data, &JsonFallback)?;
/// assert_eq!(&back.0[..], b"\x00\x01");
/// # Ok::<(), langgraph_codec::Error>(())
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct ByteArray(pub bytes::Bytes);

impl From<&[u8]> for ByteArray {
    fn from(b: &[u8]) -> Self {
        ByteArray(bytes::Bytes::copy_from_slice(b))
    }
}

impl From<Vec<u8>> for ByteArray {
    fn from(b: Vec<u8>) -> Self {
        ByteArray(b.into())
    }
}

impl serde::Serialize for ByteArray {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_newtype_struct(crate::typed::BYTEARRAY_MARKER, &Value::Bin(self.0.clone()))
    }
}

impl<'de> serde::Deserialize<'de> for ByteArray {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        Value::deserialize(d)?
            .into_bin()
            .map(ByteArray)
            .map_err(|v| {
                serde::de::Error::custom(format!("expected bytes, found {}", v.kind_name()))
            })
    }
}
