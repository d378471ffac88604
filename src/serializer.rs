//! The `(type, bytes)` protocol every checkpoint row goes through, and
//! [`JsonPlusSerializer`], Python's default implementation of it.

use std::fmt;
use std::sync::Arc;

use bytes::Bytes;

use crate::error::Result;
use crate::msgpack::{self, DecodeOptions};
use crate::value::Value;

mod typed_ext;

pub use crate::protocol::{tags, TagError, TypedBytes};
pub use typed_ext::{TypedOptions, TypedSerializerExt};

/// Python's `SerializerProtocol`: values to `(type, bytes)` pairs and back.
///
/// Object-safe and `Send + Sync`, so savers hold an `Arc<dyn Serializer>` and wrappers
/// such as encryption compose around any implementation.
pub trait Serializer: Send + Sync + fmt::Debug {
    /// Serializes a value to a type tag and bytes.
    ///
    /// # Errors
    /// The implementation's error; [`JsonPlusSerializer`]'s are
    /// errors of kind [`ErrorKind::DepthLimit`](crate::ErrorKind::DepthLimit) and
    /// [`ErrorKind::TooLong`](crate::ErrorKind::TooLong) (nesting beyond the limit, a length
    /// beyond 2^32-1), with the [`EncodeError`](crate::msgpack::EncodeError) as `source()`.
    fn dumps_typed(&self, value: &Value) -> Result<TypedBytes>;

    /// Reads a `(type, bytes)` pair back.
    ///
    /// # Errors
    /// The implementation's error; [`JsonPlusSerializer`]'s are
    /// the [`DecodeError`](crate::msgpack::DecodeError) or [`JsonError`](crate::json::JsonError) of
    /// malformed bytes or text ([`Error::as_decode`](crate::Error::as_decode), [`Error::as_json`](crate::Error::as_json)), and
    /// [`TagError::Pickle`] and [`TagError::UnknownType`] for tags it cannot read
    /// ([`Error::as_tag`](crate::Error::as_tag)).
    fn loads_typed(&self, type_tag: &str, data: &[u8]) -> Result<Value>;

    /// Hook for the typed layer ([`TypedSerializerExt`]):
    /// finishes a pair that was serialized exactly as [`JsonPlusSerializer`] would
    /// (tags `null`, `bytes`, `msgpack`, or a fallback codec's tag such as `json`),
    /// binding it to the associated data `aad` (empty: none) as an encrypting
    /// serializer's [`with_aad`](crate::crypto::EncryptedSerializer::with_aad) view
    /// does.
    ///
    /// [`JsonPlusSerializer`] returns it unchanged and ignores `aad`. A wrapper
    /// (encryption, compression) should pass it to its inner serializer's
    /// `wrap_serialized` and then transform the result as its `dumps_typed` does. The
    /// default goes through [`Value`] (`msgpack` bytes are decoded and given to
    /// [`dumps_typed`](Self::dumps_typed), `aad` is ignored), which is correct for any
    /// serializer without associated data but slower; other tags are refused.
    ///
    /// # Errors
    /// The wrapper's error; the default refuses tags other than `null`, `bytes`,
    /// `bytearray` and `msgpack` with [`TagError::TagMismatch`].
    fn wrap_serialized(&self, raw: TypedBytes, aad: &[u8]) -> Result<TypedBytes> {
        let _ = aad;
        let value = match raw.type_tag.as_str() {
            tags::NULL => Value::Nil,
            tags::BYTES | tags::BYTEARRAY => Value::Bin(raw.data),
            tags::MSGPACK => msgpack::decode_bytes(&raw.data)?,
            other => {
                return Err(TagError::TagMismatch {
                    tag: other.to_owned(),
                    found: "typed fallback row (this serializer has no wrap_serialized hook)",
                }
                .into())
            }
        };
        self.dumps_typed(&value)
    }

    /// Whether the rows this serializer reads may be confidential (decrypted): errors
    /// about their contents must then not quote them. The typed layer
    /// ([`TypedSerializerExt`]) withholds the details
    /// of a failed read (the found value or class) when this is `true`, keeping the
    /// kind and byte offset. Default `false`; encryption wrappers answer `true`, other
    /// wrappers ask their inner serializer.
    fn confidential(&self) -> bool {
        false
    }

    /// Whether this serializer refuses rows that are not encrypted (an
    /// [`EncryptedSerializer`](crate::crypto::EncryptedSerializer) in strict mode). A
    /// saver that keeps values outside the serializer (the Postgres saver's inline
    /// JSONB channel values) asks this to refuse those too when every value is meant to
    /// go through the serializer. Default `false`; encryption wrappers answer their
    /// strict setting, other wrappers ask their inner serializer.
    fn refuses_plaintext(&self) -> bool {
        false
    }

    /// Hook for the typed layer: the inverse of [`wrap_serialized`](Self::wrap_serialized).
    /// Calls `read` once with the pair as [`JsonPlusSerializer`] would have written it
    /// and returns what `read` returns. A decrypting wrapper hands `read` its plaintext
    /// and wipes it when `read` returns, so no copy outlives the call.
    /// [`JsonPlusSerializer`] passes the pair through (borrowed, `aad` ignored). The
    /// default reads a [`Value`] with [`loads_typed`](Self::loads_typed) and encodes it
    /// again (`aad` ignored).
    ///
    /// # Errors
    /// The wrapper's error reading the row (decryption, decompression), or `read`'s.
    fn unwrap_serialized(
        &self,
        type_tag: &str,
        data: &[u8],
        aad: &[u8],
        read: &mut dyn FnMut(&str, &[u8]) -> Result<()>,
    ) -> Result<()> {
        let _ = aad;
        let value = self.loads_typed(type_tag, data)?;
        let typed = JsonPlusSerializer::new().dumps_typed(&value)?;
        read(&typed.type_tag, &typed.data)
    }
}

macro_rules! forward_typed_hooks {
    () => {
        fn confidential(&self) -> bool {
            (**self).confidential()
        }
        fn refuses_plaintext(&self) -> bool {
            (**self).refuses_plaintext()
        }
        fn wrap_serialized(&self, raw: TypedBytes, aad: &[u8]) -> Result<TypedBytes> {
            (**self).wrap_serialized(raw, aad)
        }
        fn unwrap_serialized(
            &self,
            type_tag: &str,
            data: &[u8],
            aad: &[u8],
            read: &mut dyn FnMut(&str, &[u8]) -> Result<()>,
        ) -> Result<()> {
            (**self).unwrap_serialized(type_tag, data, aad, read)
        }
    };
}

impl<S: Serializer + ?Sized> Serializer for Arc<S> {
    fn dumps_typed(&self, value: &Value) -> Result<TypedBytes> {
        (**self).dumps_typed(value)
    }
    fn loads_typed(&self, type_tag: &str, data: &[u8]) -> Result<Value> {
        (**self).loads_typed(type_tag, data)
    }
    forward_typed_hooks!();
}

impl<S: Serializer + ?Sized> Serializer for Box<S> {
    fn dumps_typed(&self, value: &Value) -> Result<TypedBytes> {
        (**self).dumps_typed(value)
    }
    fn loads_typed(&self, type_tag: &str, data: &[u8]) -> Result<Value> {
        (**self).loads_typed(type_tag, data)
    }
    forward_typed_hooks!();
}

impl<S: Serializer + ?Sized> Serializer for &S {
    fn dumps_typed(&self, value: &Value) -> Result<TypedBytes> {
        (**self).dumps_typed(value)
    }
    fn loads_typed(&self, type_tag: &str, data: &[u8]) -> Result<Value> {
        (**self).loads_typed(type_tag, data)
    }
    forward_typed_hooks!();
}

/// Python's `JsonPlusSerializer`, byte for byte.
///
/// `dumps_typed`: [`Value::Nil`] → `("null", b"")`, a top-level [`Value::Bin`] →
/// `("bytes", data)`, anything else → `("msgpack", ormsgpack bytes)`.
/// `loads_typed` also reads `bytearray` and `json`; `pickle` and unknown tags are typed
/// errors. Unlike Python, nothing it cannot rebuild becomes `None`: unknown classes stay
/// [`Value::Object`] envelopes and unknown extensions stay raw.
///
/// ```
/// use langgraph_codec::{JsonPlusSerializer, Serializer, Value};
///
/// let serde = JsonPlusSerializer::new();
/// let value = Value::map([("step", Value::from(3i64)), ("source", Value::from("loop"))]);
/// let typed = serde.dumps_typed(&value)?;
/// assert_eq!(typed.type_tag, "msgpack");
/// assert_eq!(serde.loads_typed(&typed.type_tag, &typed.data)?, value);
/// # Ok::<(), langgraph_codec::Error>(())
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct JsonPlusSerializer {
    options: DecodeOptions,
}

impl JsonPlusSerializer {
    /// A serializer with the default decode options.
    pub fn new() -> Self {
        Self::default()
    }

    /// A serializer that decodes msgpack and JSON with these options (depth limit,
    /// non-canonical forms).
    pub fn with_decode_options(options: DecodeOptions) -> Self {
        JsonPlusSerializer { options }
    }

    /// The decode options in force.
    pub fn decode_options(&self) -> &DecodeOptions {
        &self.options
    }

    /// Serializes `value` under a given tag: `null` (nil only), `bytes` / `bytearray`
    /// (bin only), `msgpack`, or `json` (plain JSON values only). This is how a pair read
    /// with [`loads_typed`](Serializer::loads_typed) is written back under its own tag.
    ///
    /// # Errors
    /// [`TagError::TagMismatch`] when the value cannot be written under the tag
    /// (e.g. `null` for a non-nil value, `json` for bytes), [`TagError::Pickle`]
    /// and [`TagError::UnknownType`] for tags it cannot write,
    /// the [`EncodeError`](crate::msgpack::EncodeError) of [`msgpack::encode`].
    pub fn dumps_as(&self, type_tag: &str, value: &Value) -> Result<TypedBytes> {
        let mismatch = || TagError::TagMismatch {
            tag: type_tag.to_owned(),
            found: value.kind_name(),
        };
        let data = match type_tag {
            tags::NULL => match value {
                Value::Nil => Bytes::new(),
                _ => return Err(mismatch().into()),
            },
            tags::BYTES | tags::BYTEARRAY => match value {
                Value::Bin(b) => b.clone(),
                _ => return Err(mismatch().into()),
            },
            tags::MSGPACK => Bytes::from(msgpack::encode(value)?),
            tags::JSON => {
                Bytes::from(
                    crate::json::write(value).map_err(|e| TagError::TagMismatch {
                        tag: type_tag.to_owned(),
                        found: match e {
                            crate::json::JsonWriteError::NonStringKey { .. } => {
                                "map with a non-string key"
                            }
                            other => other.value_kind(),
                        },
                    })?,
                )
            }
            tags::PICKLE => return Err(TagError::Pickle.into()),
            other => return Err(TagError::unknown_type(other).into()),
        };
        Ok(TypedBytes::new(type_tag, data))
    }

    /// Like [`loads_typed`](Serializer::loads_typed), but bin payloads share `data`'s
    /// buffer instead of being copied.
    ///
    /// # Errors
    /// As [`loads_typed`](Serializer::loads_typed).
    pub fn loads_typed_bytes(&self, type_tag: &str, data: &Bytes) -> Result<Value> {
        match type_tag {
            tags::MSGPACK => Ok(self.options.decode_bytes(data)?),
            tags::BYTES | tags::BYTEARRAY => Ok(Value::Bin(data.clone())),
            _ => self.loads_typed(type_tag, data),
        }
    }
}

impl Serializer for JsonPlusSerializer {
    fn dumps_typed(&self, value: &Value) -> Result<TypedBytes> {
        match value {
            Value::Nil => Ok(TypedBytes::new(tags::NULL, Bytes::new())),
            Value::Bin(b) => Ok(TypedBytes::new(tags::BYTES, b.clone())),
            other => match msgpack::encode(other) {
                Ok(bytes) => Ok(TypedBytes::new(tags::MSGPACK, bytes)),
                // Integers beyond 64 bits and strings with lone surrogates (read from
                // json rows) go back into a json row, which Python reads as the same
                // value; Python 4.3.2 itself raises on the first and writes `?` for
                // the second.
                Err(e @ msgpack::EncodeError::NotMsgpack { .. }) => {
                    let text = crate::json::write(other).map_err(|_| e)?;
                    Ok(TypedBytes::new(tags::JSON, Bytes::from(text)))
                }
                Err(e) => Err(e.into()),
            },
        }
    }

    fn loads_typed(&self, type_tag: &str, data: &[u8]) -> Result<Value> {
        match type_tag {
            tags::NULL => Ok(Value::Nil),
            tags::BYTES | tags::BYTEARRAY => Ok(Value::Bin(Bytes::copy_from_slice(data))),
            tags::MSGPACK => Ok(self.options.decode(data)?),
            tags::JSON => Ok(crate::typed::revive::read_json_row(
                data,
                self.options.depth_limit(),
            )?),
            tags::PICKLE => Err(TagError::Pickle.into()),
            other => Err(TagError::unknown_type(other).into()),
        }
    }

    fn wrap_serialized(&self, raw: TypedBytes, _aad: &[u8]) -> Result<TypedBytes> {
        Ok(raw)
    }

    fn unwrap_serialized(
        &self,
        type_tag: &str,
        data: &[u8],
        _aad: &[u8],
        read: &mut dyn FnMut(&str, &[u8]) -> Result<()>,
    ) -> Result<()> {
        read(type_tag, data)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tags_follow_python() {
        let s = JsonPlusSerializer::new();
        assert_eq!(
            s.dumps_typed(&Value::Nil).ok(),
            Some(TypedBytes::new("null", Bytes::new()))
        );
        let bin = Value::Bin(Bytes::from_static(b"\x00\x01"));
        assert_eq!(
            s.dumps_typed(&bin).ok(),
            Some(TypedBytes::new("bytes", Bytes::from_static(b"\x00\x01")))
        );
        assert_eq!(
            s.dumps_typed(&Value::from(1i64)).ok(),
            Some(TypedBytes::new("msgpack", vec![1u8]))
        );
    }

    #[test]
    fn pickle_and_unknown_tags_are_named_errors() {
        let s = JsonPlusSerializer::new();
        assert!(matches!(
            s.loads_typed("pickle", b"\x80\x04")
                .map_err(|e| e.as_tag().cloned()),
            Err(Some(TagError::Pickle))
        ));
        match s.loads_typed("yaml", b"").map_err(|e| e.as_tag().cloned()) {
            Err(Some(TagError::UnknownType { tag })) => assert_eq!(tag, "yaml"),
            other => panic!("expected UnknownType, got {other:?}"),
        }
    }

    #[test]
    fn json_undefined_and_unknown_lc_envelopes_stay_as_written() {
        // Python 4.3.2 returns both dicts unchanged (its LC_REVIVER only acts on
        // lc: 1 constructors it allows and on lc: 2 constructors of safe types).
        let s = JsonPlusSerializer::new();
        let v = s
            .loads_typed(
                "json",
                br#"{"a": {"lc": 2, "type": "undefined"}, "b": {"lc": 1, "type": "constructor", "id": ["x"], "kwargs": {}}}"#,
            )
            .expect("valid json row");
        assert_eq!(
            v.get("a"),
            Some(&Value::map([
                ("lc", Value::from(2i64)),
                ("type", Value::from("undefined"))
            ]))
        );
        assert_eq!(
            v.get("b").and_then(|b| b.get("lc")),
            Some(&Value::from(1i64))
        );
    }
}
