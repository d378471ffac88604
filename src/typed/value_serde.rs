//! `Serialize` and `Deserialize` for [`Value`], so typed structs can hold untyped parts.
//!
//! Through this crate's own serializer and deserializer a `Value` round-trips byte for
//! byte, extension values included: the serializer lets the crate's msgpack encoder
//! write a non-empty container or extension value straight into its output (see
//! `direct::serialize_direct`), and the deserializer hands such items over as their raw
//! msgpack bytes under a private marker that only this crate recognises, for the
//! crate's msgpack decoder. Through other serde formats (e.g. `serde_json`) plain
//! values map naturally; extension values become their msgpack bytes. (While this
//! crate's serializer runs on a thread, a foreign serializer called from inside a
//! `Serialize` impl would see a `Value` array or map as its encoded bytes too.)

use std::fmt;

use serde::de::{
    self, Deserialize, Deserializer, EnumAccess, MapAccess, SeqAccess, VariantAccess, Visitor,
};
use serde::ser::{Serialize, SerializeMap, SerializeSeq, Serializer};

use super::de::{ByteVec, IsRawMarker};
use super::direct::{self, encode_error};
use super::error::relay_decode;
use super::{RAW_MARKER, VALUE_MARKER};
use crate::msgpack;
use crate::value::{Int, Value};

impl Serialize for Value {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        if !is_scalar(self) && direct::active() {
            // Inside this crate's serializer: the crate's own encoder writes the value
            // straight into the output, so deep untyped parts cost no serde recursion.
            return direct::serialize_direct(self, s);
        }
        match self {
            Value::Nil => s.serialize_unit(),
            Value::Bool(b) => s.serialize_bool(*b),
            Value::Int(i) => match i.as_u64() {
                Some(u) => s.serialize_u64(u),
                None => s.serialize_i64(i.as_i64().unwrap_or(i64::MIN)),
            },
            Value::F64(f) => s.serialize_f64(*f),
            Value::Str(v) => s.serialize_str(v),
            Value::Bin(b) => s.serialize_bytes(b),
            // Each level runs under the stack guard: any depth, any thread.
            Value::Array(items) => crate::stack::guard(|| {
                let mut seq = s.serialize_seq(Some(items.len()))?;
                for item in items {
                    seq.serialize_element(item)?;
                }
                seq.end()
            }),
            Value::Map(entries) => crate::stack::guard(|| {
                let mut map = s.serialize_map(Some(entries.len()))?;
                for (k, v) in entries {
                    map.serialize_entry(k, v)?;
                }
                map.end()
            }),
            Value::BigInt(n) => match n.to_string().parse::<i128>() {
                Ok(v) => s.serialize_i128(v),
                Err(_) => match n.to_string().parse::<u128>() {
                    Ok(v) => s.serialize_u128(v),
                    Err(_) => Err(serde::ser::Error::custom(
                        "an integer beyond 128 bits has no serde form",
                    )),
                },
            },
            Value::WStr(_) => Err(serde::ser::Error::custom(
                "a string with lone surrogates has no serde form",
            )),
            Value::F32(_)
            | Value::Object(_)
            | Value::NdArray(_)
            | Value::DeltaSnapshot(_)
            | Value::Ext(_) => {
                let bytes = msgpack::encode(self).map_err(encode_error)?;
                s.serialize_newtype_struct(RAW_MARKER, &direct::RawBytes(&bytes))
            }
        }
    }
}

/// Plain scalars and empty containers: cheaper through serde than handed over.
fn is_scalar(v: &Value) -> bool {
    match v {
        Value::Nil | Value::Bool(_) | Value::Int(_) | Value::F64(_) | Value::Str(_) => true,
        Value::Bin(_) => true,
        Value::Array(items) => items.is_empty(),
        Value::Map(entries) => entries.is_empty(),
        _ => false,
    }
}

struct ValueVisitor;

impl<'de> Visitor<'de> for ValueVisitor {
    type Value = Value;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any msgpack value")
    }

    fn visit_bool<E: de::Error>(self, v: bool) -> Result<Value, E> {
        Ok(Value::Bool(v))
    }
    fn visit_i64<E: de::Error>(self, v: i64) -> Result<Value, E> {
        Ok(Value::from(v))
    }
    fn visit_u64<E: de::Error>(self, v: u64) -> Result<Value, E> {
        Ok(Value::from(v))
    }
    fn visit_i128<E: de::Error>(self, v: i128) -> Result<Value, E> {
        Int::from_i128(v)
            .map(Value::Int)
            .ok_or_else(|| E::custom(format!("integer {v} is outside msgpack's range")))
    }
    fn visit_u128<E: de::Error>(self, v: u128) -> Result<Value, E> {
        u64::try_from(v)
            .map(Value::from)
            .map_err(|_| E::custom(format!("integer {v} is outside msgpack's range")))
    }
    fn visit_f32<E: de::Error>(self, v: f32) -> Result<Value, E> {
        Ok(Value::F32(v))
    }
    fn visit_f64<E: de::Error>(self, v: f64) -> Result<Value, E> {
        Ok(Value::F64(v))
    }
    fn visit_str<E: de::Error>(self, v: &str) -> Result<Value, E> {
        Ok(Value::from(v))
    }
    fn visit_string<E: de::Error>(self, v: String) -> Result<Value, E> {
        Ok(Value::from(v))
    }
    fn visit_bytes<E: de::Error>(self, v: &[u8]) -> Result<Value, E> {
        Ok(Value::Bin(bytes::Bytes::copy_from_slice(v)))
    }
    fn visit_byte_buf<E: de::Error>(self, v: Vec<u8>) -> Result<Value, E> {
        Ok(Value::Bin(bytes::Bytes::from(v)))
    }
    fn visit_unit<E: de::Error>(self) -> Result<Value, E> {
        Ok(Value::Nil)
    }
    fn visit_none<E: de::Error>(self) -> Result<Value, E> {
        Ok(Value::Nil)
    }
    fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<Value, D::Error> {
        Value::deserialize(d)
    }
    fn visit_newtype_struct<D: Deserializer<'de>>(self, d: D) -> Result<Value, D::Error> {
        d.deserialize_any(self)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        let mut items = Vec::with_capacity(seq.size_hint().unwrap_or(0).min(4096));
        while let Some(item) = seq.next_element::<Value>()? {
            items.push(item);
        }
        Ok(Value::Array(items))
    }
    fn visit_enum<A: EnumAccess<'de>>(self, data: A) -> Result<Value, A::Error> {
        // This crate's deserializer hands over a raw item as `RAW_MARKER(bytes)`.
        let (IsRawMarker(raw), variant) = data.variant()?;
        if !raw {
            return Err(de::Error::invalid_type(de::Unexpected::Enum, &self));
        }
        let raw: ByteVec<'_> = variant.newtype_variant()?;
        // Decoded already by this crate's deserializer, on its own reader.
        if let Some(value) = super::de::take_decoded(&raw.0) {
            return Ok(value);
        }
        msgpack::decode(&raw.0).map_err(relay_decode)
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        let mut entries = Vec::with_capacity(map.size_hint().unwrap_or(0).min(4096));
        let Some(first) = map.next_key::<Value>()? else {
            return Ok(Value::Map(entries));
        };
        if first.as_str() == Some(RAW_MARKER) {
            let raw: ByteVec<'_> = map.next_value()?;
            if map.next_key::<de::IgnoredAny>()?.is_some() {
                return Err(de::Error::custom("a raw msgpack marker map has one entry"));
            }
            return msgpack::decode(&raw.0).map_err(relay_decode);
        }
        entries.push((first, map.next_value::<Value>()?));
        while let Some((k, v)) = map.next_entry::<Value, Value>()? {
            entries.push((k, v));
        }
        Ok(Value::Map(entries))
    }
}

impl<'de> Deserialize<'de> for Value {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Value, D::Error> {
        d.deserialize_newtype_struct(VALUE_MARKER, ValueVisitor)
    }
}
