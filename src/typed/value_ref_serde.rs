//! `Deserialize` and `Serialize` for the borrowed [`ValueRef`], so typed structs can
//! hold untyped parts without copying them (`#[serde(borrow)] extra: ValueRef<'a>`).
//!
//! Through this crate's deserializer a `ValueRef` field is one item of the input,
//! checked by the reader under the document's [`DecodeOptions`] and then read by the
//! borrowed decoder: every string and byte string points into the input, extension
//! values included. Through other deserializers the plain values a `ValueRef` can hold
//! map naturally, as long as the deserializer lends its strings and bytes (e.g.
//! `serde_json` for strings without escapes); a transient string is an error, as
//! serde's own `&str` gives.
//!
//! The item is read twice — once by the document's reader, to find where it ends under
//! the document's rules and offsets, once by the borrowed decoder, to build it (serde
//! cannot hand a borrowed tree through a visitor) — so a borrowed typed read copies
//! nothing but is not faster than the owned one (`loads/messages300_typed_borrowed`
//! measured 326 µs against 256 µs owned): it saves memory, not time.
//!
//! `Serialize` writes the value exactly as the owned [`Value`] would: byte for byte the
//! msgpack Python wrote, through an owned copy (see [`ValueRef::to_owned_value`]).

use std::fmt;

use serde::de::{self, Deserialize, Deserializer, EnumAccess, MapAccess, SeqAccess, Visitor};
use serde::ser::{Serialize, Serializer};

use super::de::IsRawMarker;
use super::error::relay_decode;
use super::VALUE_REF_MARKER;
use crate::msgpack::{DecodeOptions, ValueRef};
use crate::value::{Int, Value};

impl Serialize for ValueRef<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            ValueRef::Nil => s.serialize_unit(),
            ValueRef::Bool(b) => s.serialize_bool(*b),
            ValueRef::Str(v) => s.serialize_str(v),
            ValueRef::Bin(b) => s.serialize_bytes(b),
            ValueRef::F64(f) => s.serialize_f64(*f),
            _ => Value::from(self).serialize(s),
        }
    }
}

impl<'de: 'a, 'a> Deserialize<'de> for ValueRef<'a> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_newtype_struct(VALUE_REF_MARKER, ValueRefVisitor)
    }
}

/// Reads one item this crate's deserializer checked and lent whole: the reader has
/// already applied the document's limits and canonical-form rules to exactly these
/// bytes, so they are read here without limits of their own (they cannot fail, but a
/// failure would still be an error, never a panic).
fn decode_lent<E: de::Error>(item: &[u8]) -> Result<ValueRef<'_>, E> {
    let lenient = DecodeOptions::new()
        .allow_non_canonical(true)
        .max_depth(usize::MAX)
        .max_total_depth(usize::MAX);
    lenient.decode_ref(item).map_err(relay_decode)
}

struct ValueRefVisitor;

impl<'de> Visitor<'de> for ValueRefVisitor {
    type Value = ValueRef<'de>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any msgpack value, its strings and bytes lent by the input")
    }

    fn visit_bool<E: de::Error>(self, v: bool) -> Result<Self::Value, E> {
        Ok(ValueRef::Bool(v))
    }
    fn visit_i64<E: de::Error>(self, v: i64) -> Result<Self::Value, E> {
        Ok(ValueRef::Int(Int::from(v)))
    }
    fn visit_u64<E: de::Error>(self, v: u64) -> Result<Self::Value, E> {
        Ok(ValueRef::Int(Int::from(v)))
    }
    fn visit_i128<E: de::Error>(self, v: i128) -> Result<Self::Value, E> {
        Int::from_i128(v)
            .map(ValueRef::Int)
            .ok_or_else(|| E::custom(format!("integer {v} is outside msgpack's range")))
    }
    fn visit_u128<E: de::Error>(self, v: u128) -> Result<Self::Value, E> {
        u64::try_from(v)
            .map(|v| ValueRef::Int(Int::from(v)))
            .map_err(|_| E::custom(format!("integer {v} is outside msgpack's range")))
    }
    fn visit_f32<E: de::Error>(self, v: f32) -> Result<Self::Value, E> {
        Ok(ValueRef::F32(v))
    }
    fn visit_f64<E: de::Error>(self, v: f64) -> Result<Self::Value, E> {
        Ok(ValueRef::F64(v))
    }
    fn visit_borrowed_str<E: de::Error>(self, v: &'de str) -> Result<Self::Value, E> {
        Ok(ValueRef::Str(v))
    }
    fn visit_borrowed_bytes<E: de::Error>(self, v: &'de [u8]) -> Result<Self::Value, E> {
        Ok(ValueRef::Bin(v))
    }
    fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
        Ok(ValueRef::Nil)
    }
    fn visit_none<E: de::Error>(self) -> Result<Self::Value, E> {
        Ok(ValueRef::Nil)
    }
    fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        ValueRef::deserialize(d)
    }
    fn visit_newtype_struct<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        d.deserialize_any(self)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
        let mut items = Vec::with_capacity(seq.size_hint().unwrap_or(0).min(4096));
        while let Some(item) = seq.next_element::<ValueRef<'de>>()? {
            items.push(item);
        }
        Ok(ValueRef::Array(items))
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let mut entries = Vec::with_capacity(map.size_hint().unwrap_or(0).min(4096));
        while let Some((k, v)) = map.next_entry::<ValueRef<'de>, ValueRef<'de>>()? {
            entries.push((k, v));
        }
        Ok(ValueRef::Map(entries))
    }
    fn visit_enum<A: EnumAccess<'de>>(self, data: A) -> Result<Self::Value, A::Error> {
        // This crate's deserializer lends a checked item as `RAW_MARKER(bytes)`.
        let (IsRawMarker(raw), variant) = data.variant()?;
        if !raw {
            return Err(de::Error::invalid_type(de::Unexpected::Enum, &self));
        }
        let item: &'de [u8] = de::VariantAccess::newtype_variant(variant)?;
        decode_lent(item)
    }
}
