//! A serde `Serializer` that writes msgpack bytes exactly as ormsgpack does, straight
//! from Rust values (no [`Value`](crate::Value) tree in between).
//!
//! Mapping: structs → maps with field names in declaration order; `None` and `()` →
//! nil; `serialize_bytes` → bin; sequences and tuples → arrays; maps keep their key
//! types (integer keys stay integers); `f32` is widened to float64 (Python has one float
//! type); unit enum variants → their name as a string; other variants → a one-entry map
//! `{variant: content}`.

use serde::ser::{self, Serialize};

use super::error::TypedError;
use super::{EXT_MARKER, RAW_MARKER};
use crate::msgpack::{
    write_array_len, write_bin, write_f64, write_i64, write_map_len, write_str, write_u64,
    DEFAULT_MAX_DEPTH,
};

type Result<T, E = TypedError> = std::result::Result<T, E>;

/// Writes msgpack into a buffer. Use [`to_vec`](super::to_vec) for the common case.
pub(crate) struct Ser<'a> {
    out: &'a mut Vec<u8>,
    depth: usize,
}

thread_local! {
    /// How many of this crate's serializers are running on this thread. While one is,
    /// `Value` serializes as its msgpack bytes (encoded by the crate's own encoder), so
    /// deep untyped parts cost no serde recursion.
    static ACTIVE: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
}

/// `true` while this crate's serializer runs on this thread.
pub(crate) fn active() -> bool {
    ACTIVE.with(|a| a.get() > 0)
}

/// Marks this crate's serializer as running for the guard's lifetime.
pub(crate) struct ActiveGuard;

impl ActiveGuard {
    pub(crate) fn new() -> Self {
        ACTIVE.with(|a| a.set(a.get().saturating_add(1)));
        ActiveGuard
    }
}

impl Drop for ActiveGuard {
    fn drop(&mut self) {
        ACTIVE.with(|a| a.set(a.get().saturating_sub(1)));
    }
}

impl<'a> Ser<'a> {
    pub(crate) fn new(out: &'a mut Vec<u8>) -> Self {
        Ser { out, depth: 0 }
    }

    fn enter(&mut self) -> Result<()> {
        if self.depth >= DEFAULT_MAX_DEPTH {
            return Err(TypedError::from(crate::error::EncodeError::DepthLimit {
                limit: DEFAULT_MAX_DEPTH,
            }));
        }
        self.depth += 1;
        Ok(())
    }

    /// Opens an array or map whose header is patched at the end if the number of items
    /// written differs from the declared one (unknown lengths, skipped struct fields).
    fn open(&mut self, kind: Kind, declared: Option<usize>) -> Result<Compound<'_, 'a>> {
        let entered = declared != Some(0);
        if entered {
            self.enter()?;
        }
        let header_pos = self.out.len();
        let n = declared.unwrap_or(0);
        match kind {
            Kind::Array => write_array_len(self.out, n)?,
            Kind::Map => write_map_len(self.out, n)?,
        }
        let header_len = self.out.len() - header_pos;
        Ok(Compound {
            ser: self,
            kind,
            header_pos,
            header_len,
            declared: n,
            count: 0,
            entered,
            variant_entered: false,
        })
    }

    /// Writes the `{variant: …}` prefix of a non-unit enum variant.
    fn variant_prefix(&mut self, variant: &str) -> Result<()> {
        self.enter()?;
        write_map_len(self.out, 1)?;
        write_str(self.out, variant)?;
        Ok(())
    }
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    Array,
    Map,
}

/// An open array or map.
pub(crate) struct Compound<'s, 'a> {
    ser: &'s mut Ser<'a>,
    kind: Kind,
    header_pos: usize,
    header_len: usize,
    declared: usize,
    count: usize,
    entered: bool,
    variant_entered: bool,
}

impl Compound<'_, '_> {
    fn element<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<()> {
        self.count += 1;
        value.serialize(&mut *self.ser)
    }

    fn finish(self) -> Result<()> {
        if self.count != self.declared {
            let mut header = Vec::with_capacity(5);
            match self.kind {
                Kind::Array => write_array_len(&mut header, self.count)?,
                Kind::Map => write_map_len(&mut header, self.count)?,
            }
            let end = self.header_pos + self.header_len;
            if end > self.ser.out.len() {
                return Err(TypedError::msg("internal: container header out of range"));
            }
            self.ser.out.splice(self.header_pos..end, header);
            if self.count > 0 && !self.entered {
                // Declared empty but items came: count the level after all.
                self.ser.enter()?;
                self.ser.depth -= 1;
            }
        }
        if self.entered {
            self.ser.depth -= 1;
        }
        if self.variant_entered {
            self.ser.depth -= 1;
        }
        Ok(())
    }
}

impl<'s, 'a> ser::Serializer for &'s mut Ser<'a> {
    type Ok = ();
    type Error = TypedError;
    type SerializeSeq = Compound<'s, 'a>;
    type SerializeTuple = Compound<'s, 'a>;
    type SerializeTupleStruct = Compound<'s, 'a>;
    type SerializeTupleVariant = Compound<'s, 'a>;
    type SerializeMap = Compound<'s, 'a>;
    type SerializeStruct = Compound<'s, 'a>;
    type SerializeStructVariant = Compound<'s, 'a>;

    fn is_human_readable(&self) -> bool {
        // Python reads what a human-readable format writes (UUIDs, addresses and dates
        // from foreign `Serialize` impls as strings), not compact binary forms.
        true
    }

    fn serialize_bool(self, v: bool) -> Result<()> {
        self.out.push(if v { 0xc3 } else { 0xc2 });
        Ok(())
    }
    fn serialize_i8(self, v: i8) -> Result<()> {
        self.serialize_i64(i64::from(v))
    }
    fn serialize_i16(self, v: i16) -> Result<()> {
        self.serialize_i64(i64::from(v))
    }
    fn serialize_i32(self, v: i32) -> Result<()> {
        self.serialize_i64(i64::from(v))
    }
    fn serialize_i64(self, v: i64) -> Result<()> {
        write_i64(self.out, v);
        Ok(())
    }
    fn serialize_i128(self, v: i128) -> Result<()> {
        if let Ok(u) = u64::try_from(v) {
            write_u64(self.out, u);
        } else if let Ok(i) = i64::try_from(v) {
            write_i64(self.out, i);
        } else {
            return Err(TypedError::unrepresentable(format!(
                "integer {v} is outside msgpack's range (-2^63 ..= 2^64-1)"
            )));
        }
        Ok(())
    }
    fn serialize_u8(self, v: u8) -> Result<()> {
        self.serialize_u64(u64::from(v))
    }
    fn serialize_u16(self, v: u16) -> Result<()> {
        self.serialize_u64(u64::from(v))
    }
    fn serialize_u32(self, v: u32) -> Result<()> {
        self.serialize_u64(u64::from(v))
    }
    fn serialize_u64(self, v: u64) -> Result<()> {
        write_u64(self.out, v);
        Ok(())
    }
    fn serialize_u128(self, v: u128) -> Result<()> {
        match u64::try_from(v) {
            Ok(u) => {
                write_u64(self.out, u);
                Ok(())
            }
            Err(_) => Err(TypedError::unrepresentable(format!(
                "integer {v} is outside msgpack's range (-2^63 ..= 2^64-1)"
            ))),
        }
    }
    fn serialize_f32(self, v: f32) -> Result<()> {
        write_f64(self.out, f64::from(v));
        Ok(())
    }
    fn serialize_f64(self, v: f64) -> Result<()> {
        write_f64(self.out, v);
        Ok(())
    }
    fn serialize_char(self, v: char) -> Result<()> {
        let mut buf = [0u8; 4];
        write_str(self.out, v.encode_utf8(&mut buf))?;
        Ok(())
    }
    fn serialize_str(self, v: &str) -> Result<()> {
        write_str(self.out, v)?;
        Ok(())
    }
    fn serialize_bytes(self, v: &[u8]) -> Result<()> {
        write_bin(self.out, v)?;
        Ok(())
    }
    fn serialize_none(self) -> Result<()> {
        self.out.push(0xc0);
        Ok(())
    }
    fn serialize_some<T: Serialize + ?Sized>(self, value: &T) -> Result<()> {
        value.serialize(self)
    }
    fn serialize_unit(self) -> Result<()> {
        self.serialize_none()
    }
    fn serialize_unit_struct(self, _name: &'static str) -> Result<()> {
        self.serialize_none()
    }
    fn serialize_unit_variant(
        self,
        _name: &'static str,
        _index: u32,
        variant: &'static str,
    ) -> Result<()> {
        self.serialize_str(variant)
    }

    fn serialize_newtype_struct<T: Serialize + ?Sized>(
        self,
        name: &'static str,
        value: &T,
    ) -> Result<()> {
        match name {
            EXT_MARKER => write_marked_ext(self, value),
            RAW_MARKER => write_marked_raw(self, value),
            _ => value.serialize(self),
        }
    }

    fn serialize_newtype_variant<T: Serialize + ?Sized>(
        self,
        _name: &'static str,
        _index: u32,
        variant: &'static str,
        value: &T,
    ) -> Result<()> {
        self.variant_prefix(variant)?;
        value.serialize(&mut *self)?;
        self.depth -= 1;
        Ok(())
    }

    fn serialize_seq(self, len: Option<usize>) -> Result<Compound<'s, 'a>> {
        self.open(Kind::Array, len)
    }
    fn serialize_tuple(self, len: usize) -> Result<Compound<'s, 'a>> {
        self.open(Kind::Array, Some(len))
    }
    fn serialize_tuple_struct(self, _name: &'static str, len: usize) -> Result<Compound<'s, 'a>> {
        self.open(Kind::Array, Some(len))
    }
    fn serialize_tuple_variant(
        self,
        _name: &'static str,
        _index: u32,
        variant: &'static str,
        len: usize,
    ) -> Result<Compound<'s, 'a>> {
        self.variant_prefix(variant)?;
        let mut c = self.open(Kind::Array, Some(len))?;
        c.variant_entered = true;
        Ok(c)
    }
    fn serialize_map(self, len: Option<usize>) -> Result<Compound<'s, 'a>> {
        self.open(Kind::Map, len)
    }
    fn serialize_struct(self, _name: &'static str, len: usize) -> Result<Compound<'s, 'a>> {
        self.open(Kind::Map, Some(len))
    }
    fn serialize_struct_variant(
        self,
        _name: &'static str,
        _index: u32,
        variant: &'static str,
        len: usize,
    ) -> Result<Compound<'s, 'a>> {
        self.variant_prefix(variant)?;
        let mut c = self.open(Kind::Map, Some(len))?;
        c.variant_entered = true;
        Ok(c)
    }
}

impl ser::SerializeSeq for Compound<'_, '_> {
    type Ok = ();
    type Error = TypedError;
    fn serialize_element<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<()> {
        self.element(value)
    }
    fn end(self) -> Result<()> {
        self.finish()
    }
}

impl ser::SerializeTuple for Compound<'_, '_> {
    type Ok = ();
    type Error = TypedError;
    fn serialize_element<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<()> {
        self.element(value)
    }
    fn end(self) -> Result<()> {
        self.finish()
    }
}

impl ser::SerializeTupleStruct for Compound<'_, '_> {
    type Ok = ();
    type Error = TypedError;
    fn serialize_field<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<()> {
        self.element(value)
    }
    fn end(self) -> Result<()> {
        self.finish()
    }
}

impl ser::SerializeTupleVariant for Compound<'_, '_> {
    type Ok = ();
    type Error = TypedError;
    fn serialize_field<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<()> {
        self.element(value)
    }
    fn end(self) -> Result<()> {
        self.finish()
    }
}

impl ser::SerializeMap for Compound<'_, '_> {
    type Ok = ();
    type Error = TypedError;
    fn serialize_key<T: Serialize + ?Sized>(&mut self, key: &T) -> Result<()> {
        self.element(key)
    }
    fn serialize_value<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<()> {
        value.serialize(&mut *self.ser)
    }
    fn end(self) -> Result<()> {
        self.finish()
    }
}

impl ser::SerializeStruct for Compound<'_, '_> {
    type Ok = ();
    type Error = TypedError;
    fn serialize_field<T: Serialize + ?Sized>(
        &mut self,
        key: &'static str,
        value: &T,
    ) -> Result<()> {
        self.count += 1;
        write_str(self.ser.out, key)?;
        value.serialize(&mut *self.ser)
    }
    fn end(self) -> Result<()> {
        self.finish()
    }
}

impl ser::SerializeStructVariant for Compound<'_, '_> {
    type Ok = ();
    type Error = TypedError;
    fn serialize_field<T: Serialize + ?Sized>(
        &mut self,
        key: &'static str,
        value: &T,
    ) -> Result<()> {
        ser::SerializeStruct::serialize_field(self, key, value)
    }
    fn end(self) -> Result<()> {
        self.finish()
    }
}

/// `EXT_MARKER(value)`: `value` serializes as the pair `(code, payload)`. It is written
/// in place as the array `[code, payload]`, then the array prefix is replaced by the
/// ext header, so the payload is written once and never buffered elsewhere.
fn write_marked_ext<T: Serialize + ?Sized>(ser: &mut Ser<'_>, value: &T) -> Result<()> {
    let start = ser.out.len();
    value.serialize(&mut *ser)?;
    let written = ser.out.get(start..).unwrap_or_default();
    let (code, prefix_len) = match written {
        [0x92, c, ..] if *c < 0x80 => (*c as i8, 2),
        [0x92, c, ..] if *c >= 0xe0 => (*c as i8, 2),
        [0x92, 0xd0, c, ..] => (*c as i8, 3),
        _ => {
            return Err(TypedError::msg(
                "internal: an ext marker must wrap a (code: i8, payload) pair",
            ))
        }
    };
    let payload_len = written.len() - prefix_len;
    let mut header = Vec::with_capacity(6);
    ext_header(&mut header, code, payload_len)?;
    ser.out.splice(start..start + prefix_len, header);
    Ok(())
}

/// The ext header ormsgpack writes for a payload of `len` bytes.
pub(crate) fn ext_header(out: &mut Vec<u8>, code: i8, len: usize) -> Result<()> {
    let c = code as u8;
    match len {
        1 => out.extend_from_slice(&[0xd4, c]),
        2 => out.extend_from_slice(&[0xd5, c]),
        4 => out.extend_from_slice(&[0xd6, c]),
        8 => out.extend_from_slice(&[0xd7, c]),
        16 => out.extend_from_slice(&[0xd8, c]),
        0..=0xff => out.extend_from_slice(&[0xc7, len as u8, c]),
        0x100..=0xffff => {
            out.push(0xc8);
            out.extend_from_slice(&(len as u16).to_be_bytes());
            out.push(c);
        }
        _ => {
            let n = u32::try_from(len).map_err(|_| {
                TypedError::unrepresentable(format!(
                    "ext payload of {len} bytes exceeds msgpack's 2^32-1 limit"
                ))
            })?;
            out.push(0xc9);
            out.extend_from_slice(&n.to_be_bytes());
            out.push(c);
        }
    }
    Ok(())
}

/// `RAW_MARKER(bytes)`: `bytes` are one complete msgpack item, written verbatim.
fn write_marked_raw<T: Serialize + ?Sized>(ser: &mut Ser<'_>, value: &T) -> Result<()> {
    let start = ser.out.len();
    value.serialize(&mut *ser)?;
    let written = ser.out.get(start..).unwrap_or_default();
    let (header_len, len) = match written {
        [0xc4, n, ..] => (2, usize::from(*n)),
        [0xc5, a, b, ..] => (3, usize::from(u16::from_be_bytes([*a, *b]))),
        [0xc6, a, b, c, d, ..] => (5, u32::from_be_bytes([*a, *b, *c, *d]) as usize),
        _ => return Err(TypedError::msg("internal: a raw marker must wrap bytes")),
    };
    let item = written.get(header_len..).unwrap_or_default();
    if item.len() != len || super::de::item_len(item).ok() != Some(len) {
        return Err(TypedError::msg(
            "a raw msgpack marker must wrap exactly one msgpack item",
        ));
    }
    ser.out.drain(start..start + header_len);
    Ok(())
}
