//! A serde `Serializer` that writes msgpack bytes exactly as ormsgpack does, straight
//! from Rust values (no [`Value`](crate::Value) tree in between).
//!
//! Mapping: structs → maps with field names in declaration order; `None` and `()` →
//! nil; `serialize_bytes` → bin; sequences and tuples → arrays; maps keep their key
//! types (integer keys stay integers); `f32` is widened to float64 (Python has one float
//! type); unit enum variants → their name as a string; other variants → a one-entry map
//! `{variant: content}`.

use std::cell::Cell;

use serde::ser::{self, Serialize};

use super::direct;
use super::error::TypedError;
use super::{BYTEARRAY_MARKER, DIRECT_MARKER, EXT_MARKER, RAW_MARKER};
use crate::msgpack::marker as M;
use crate::msgpack::{
    finish_ext, put, replace_prefix, write_array_len, write_bin, write_f64, write_i64,
    write_map_len, write_str, write_u64, DEFAULT_MAX_DEPTH, DEFAULT_MAX_TOTAL_DEPTH,
};
type Result<T, E = TypedError> = std::result::Result<T, E>;

/// Writes msgpack into a buffer. Use [`to_vec`](super::to_vec) for the common case.
pub(crate) struct Ser<'a> {
    out: &'a mut Vec<u8>,
    /// Open levels in the current document (the top level or one ext payload, which
    /// Python packs and reads separately).
    depth: usize,
    /// Open levels in all documents.
    total: usize,
    /// A `ByteArray` was written at the top level.
    top_bytearray: bool,
    /// `true` while the output buffer is lent to a `Value` (see [`Ser::direct`]), until
    /// it reports back through `serialize_unit_struct(DIRECT_MARKER)`.
    lent: bool,
    /// The ext header length the last ext written at each nesting level needed (the
    /// last slot for all deeper levels): the guess for the next ext there, see
    /// [`write_marked_ext`].
    ext_guess: [u8; EXT_GUESS_LEVELS],
}

/// Levels between two checks of the remaining call stack, and the level (modulo that)
/// where they happen: past the few levels of a typical checkpoint, so shallow values
/// never pay for a check, while deep ones are checked every few levels.
const STACK_CHECK_EVERY: usize = 8;
const STACK_CHECK_AT: usize = 6;

/// Nesting levels with their own ext header guess.
const EXT_GUESS_LEVELS: usize = 4;

impl<'a> Ser<'a> {
    pub(crate) fn new(out: &'a mut Vec<u8>) -> Self {
        Ser {
            out,
            depth: 0,
            total: 0,
            top_bytearray: false,
            lent: false,
            ext_guess: [3; EXT_GUESS_LEVELS],
        }
    }

    /// `DIRECT_MARKER(value)`: lends the output buffer to `value` (a [`Direct`]) through
    /// the thread-local `LENT` for the call and takes it back. The `Value` inside then
    /// encodes itself straight into the output with the crate's msgpack encoder (no
    /// temporary buffer, no serde recursion), and only then reports back through
    /// `serialize_unit_struct(DIRECT_MARKER)`. Anything else under the marker is an
    /// error, never silently wrong output.
    fn direct<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<()> {
        let buf = std::mem::take(self.out);
        if let Some(other) = direct::lent(|l| l.replace(Some((buf, self.depth)))) {
            // Another lend is open on this thread (cannot happen: a lend ends before
            // any other serde call). Undo ours and refuse.
            *self.out = direct::lent(|l| l.replace(Some(other)))
                .map(|(buf, _)| buf)
                .unwrap_or_default();
            return Err(TypedError::msg("internal: nested direct value marker"));
        }
        self.lent = true;
        let r = value.serialize(&mut *self);
        let back = direct::lent(Cell::take);
        let reported = !self.lent;
        self.lent = false;
        let stray = match back {
            Some((buf, _)) => !std::mem::replace(self.out, buf).is_empty(),
            None => true,
        };
        r?;
        if stray || !reported {
            return Err(TypedError::msg(
                "internal: a direct value marker must wrap a Value",
            ));
        }
        Ok(())
    }

    #[inline]
    fn enter(&mut self) -> Result<()> {
        if self.depth >= DEFAULT_MAX_DEPTH {
            return Err(TypedError::from(crate::msgpack::EncodeError::DepthLimit {
                limit: DEFAULT_MAX_DEPTH,
            }));
        }
        if self.total >= DEFAULT_MAX_TOTAL_DEPTH {
            return Err(TypedError::from(crate::msgpack::EncodeError::DepthLimit {
                limit: DEFAULT_MAX_TOTAL_DEPTH,
            }));
        }
        self.depth += 1;
        self.total += 1;
        Ok(())
    }

    /// Whether the value written was a top-level `ByteArray`.
    pub(crate) fn top_bytearray(&self) -> bool {
        self.top_bytearray
    }

    #[inline]
    fn leave(&mut self) {
        self.depth -= 1;
        self.total -= 1;
    }

    /// Serializes one nested item, on a fresh stack segment every few levels if the
    /// current one is nearly used up (serde recurses once per level).
    #[inline]
    fn item<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<()> {
        if self.total % STACK_CHECK_EVERY == STACK_CHECK_AT {
            crate::stack::guard(|| value.serialize(&mut *self))
        } else {
            value.serialize(&mut *self)
        }
    }

    /// Opens an array or map whose header is patched at the end if the number of items
    /// written differs from the declared one (unknown lengths, skipped struct fields).
    #[inline]
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
    #[inline]
    fn element<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<()> {
        self.count += 1;
        self.ser.item(value)
    }

    #[inline]
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
            // Not `splice`: a longer header must not make the buffer reallocate by
            // itself (the old block would be freed unwiped).
            replace_prefix(self.ser.out, self.header_pos, self.header_len, &header);
            if self.count > 0 && !self.entered {
                // Declared empty but items came: count the level after all.
                self.ser.enter()?;
                self.ser.leave();
            }
        }
        if self.entered {
            self.ser.leave();
        }
        if self.variant_entered {
            self.ser.leave();
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

    #[inline]
    fn serialize_bool(self, v: bool) -> Result<()> {
        put(self.out, &[if v { M::TRUE } else { M::FALSE }]);
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
    #[inline]
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
    #[inline]
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
    #[inline]
    fn serialize_f64(self, v: f64) -> Result<()> {
        write_f64(self.out, v);
        Ok(())
    }
    fn serialize_char(self, v: char) -> Result<()> {
        let mut buf = [0u8; 4];
        write_str(self.out, v.encode_utf8(&mut buf))?;
        Ok(())
    }
    #[inline]
    fn serialize_str(self, v: &str) -> Result<()> {
        write_str(self.out, v)?;
        Ok(())
    }
    fn serialize_bytes(self, v: &[u8]) -> Result<()> {
        write_bin(self.out, v)?;
        Ok(())
    }
    #[inline]
    fn serialize_none(self) -> Result<()> {
        put(self.out, &[M::NIL]);
        Ok(())
    }
    #[inline]
    fn serialize_some<T: Serialize + ?Sized>(self, value: &T) -> Result<()> {
        value.serialize(self)
    }
    fn serialize_unit(self) -> Result<()> {
        self.serialize_none()
    }
    fn serialize_unit_struct(self, name: &'static str) -> Result<()> {
        if name == DIRECT_MARKER && self.lent {
            // A lent-out `Value` reporting that it wrote itself (see `Ser::direct`).
            self.lent = false;
            return Ok(());
        }
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
            DIRECT_MARKER => self.direct(value),
            BYTEARRAY_MARKER => {
                self.top_bytearray = self.total == 0 && self.out.is_empty();
                value.serialize(self)
            }
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
        self.item(value)?;
        self.leave();
        Ok(())
    }

    #[inline]
    fn serialize_seq(self, len: Option<usize>) -> Result<Compound<'s, 'a>> {
        self.open(Kind::Array, len)
    }
    #[inline]
    fn serialize_tuple(self, len: usize) -> Result<Compound<'s, 'a>> {
        self.open(Kind::Array, Some(len))
    }
    #[inline]
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
    #[inline]
    fn serialize_map(self, len: Option<usize>) -> Result<Compound<'s, 'a>> {
        self.open(Kind::Map, len)
    }
    #[inline]
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
    #[inline]
    fn serialize_element<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<()> {
        self.element(value)
    }
    #[inline]
    fn end(self) -> Result<()> {
        self.finish()
    }
}

impl ser::SerializeTuple for Compound<'_, '_> {
    type Ok = ();
    type Error = TypedError;
    #[inline]
    fn serialize_element<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<()> {
        self.element(value)
    }
    #[inline]
    fn end(self) -> Result<()> {
        self.finish()
    }
}

impl ser::SerializeTupleStruct for Compound<'_, '_> {
    type Ok = ();
    type Error = TypedError;
    #[inline]
    fn serialize_field<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<()> {
        self.element(value)
    }
    #[inline]
    fn end(self) -> Result<()> {
        self.finish()
    }
}

impl ser::SerializeTupleVariant for Compound<'_, '_> {
    type Ok = ();
    type Error = TypedError;
    #[inline]
    fn serialize_field<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<()> {
        self.element(value)
    }
    #[inline]
    fn end(self) -> Result<()> {
        self.finish()
    }
}

impl ser::SerializeMap for Compound<'_, '_> {
    type Ok = ();
    type Error = TypedError;
    #[inline]
    fn serialize_key<T: Serialize + ?Sized>(&mut self, key: &T) -> Result<()> {
        self.element(key)
    }
    #[inline]
    fn serialize_value<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<()> {
        self.ser.item(value)
    }
    #[inline]
    fn end(self) -> Result<()> {
        self.finish()
    }
}

impl ser::SerializeStruct for Compound<'_, '_> {
    type Ok = ();
    type Error = TypedError;
    #[inline]
    fn serialize_field<T: Serialize + ?Sized>(
        &mut self,
        key: &'static str,
        value: &T,
    ) -> Result<()> {
        self.count += 1;
        write_str(self.ser.out, key)?;
        self.ser.item(value)
    }
    #[inline]
    fn end(self) -> Result<()> {
        self.finish()
    }
}

impl ser::SerializeStructVariant for Compound<'_, '_> {
    type Ok = ();
    type Error = TypedError;
    #[inline]
    fn serialize_field<T: Serialize + ?Sized>(
        &mut self,
        key: &'static str,
        value: &T,
    ) -> Result<()> {
        ser::SerializeStruct::serialize_field(self, key, value)
    }
    #[inline]
    fn end(self) -> Result<()> {
        self.finish()
    }
}

/// `EXT_MARKER(value)`: `value` serializes as the pair `(code, payload)`. It is written
/// in place as the array `[code, payload]` after a few bytes of room, then the room and
/// the array prefix are overwritten by the ext header, so the payload is written once
/// and never buffered elsewhere. The header length depends on the payload length, known
/// only afterwards; the room is the length the previous ext at the same nesting level
/// needed (sibling exts, such as the messages of a list, are mostly alike), and only a
/// wrong guess costs a move of the payload.
fn write_marked_ext<T: Serialize + ?Sized>(ser: &mut Ser<'_>, value: &T) -> Result<()> {
    let start = ser.out.len();
    let level = ser.depth.min(EXT_GUESS_LEVELS - 1);
    let guess = ser.ext_guess.get(level).copied().unwrap_or(3);
    // The pair writes two bytes of prefix (`0x92`, code) for the usual codes.
    let room = usize::from(guess).saturating_sub(2);
    put(ser.out, [0u8; 6].get(..room).unwrap_or_default());
    // The payload is a document of its own, as Python packs it: its levels count from
    // zero against the per-document limit (one more for the `[code, payload]` pair this
    // writes first), and in the total.
    // (No stack guard here: the payload's levels go through `Ser::item`.)
    let outer = std::mem::replace(&mut ser.depth, 0);
    let r = value.serialize(&mut *ser);
    ser.depth = outer;
    r?;
    let written = ser.out.get(start + room..).unwrap_or_default();
    const PAIR: u8 = M::FIXARRAY | 2;
    let (code, prefix_len) = match written {
        [PAIR, c, ..] if *c <= M::POS_FIXINT_MAX => (*c as i8, 2),
        [PAIR, c, ..] if *c >= M::NEG_FIXINT => (*c as i8, 2),
        [PAIR, M::I8, c, ..] => (*c as i8, 3),
        _ => {
            return Err(TypedError::msg(
                "internal: an ext marker must wrap a (code: i8, payload) pair",
            ))
        }
    };
    let n =
        finish_ext(ser.out, start, room + prefix_len, code).map_err(|e| TypedError::from(*e))?;
    if let Some(g) = ser.ext_guess.get_mut(level) {
        *g = n;
    }
    Ok(())
}

/// `RAW_MARKER(bytes)`: `bytes` are one complete msgpack item, written verbatim.
fn write_marked_raw<T: Serialize + ?Sized>(ser: &mut Ser<'_>, value: &T) -> Result<()> {
    let start = ser.out.len();
    value.serialize(&mut *ser)?;
    let written = ser.out.get(start..).unwrap_or_default();
    let Some((header_len, len)) = M::bin_header(written) else {
        return Err(TypedError::msg("internal: a raw marker must wrap bytes"));
    };
    let item = written.get(header_len..).unwrap_or_default();
    if item.len() != len || super::de::item_len(item).ok() != Some(len) {
        return Err(TypedError::msg(
            "a raw msgpack marker must wrap exactly one msgpack item",
        ));
    }
    // The item was encoded on its own; under the levels open here it must still fit
    // the limit, or it would be written where no reader can read it back. Checked by
    // reading it as a reader would (this path is rare: only a foreign serializer
    // between a `Value` and ours takes it).
    let room =
        crate::msgpack::DecodeOptions::new().max_depth(DEFAULT_MAX_DEPTH.saturating_sub(ser.depth));
    if let Err(e) = room.decode(item) {
        if matches!(e.kind(), crate::msgpack::DecodeErrorKind::DepthLimit { .. }) {
            return Err(TypedError::from(crate::msgpack::EncodeError::DepthLimit {
                limit: DEFAULT_MAX_DEPTH,
            }));
        }
    }
    ser.out.drain(start..start + header_len);
    Ok(())
}

#[cfg(test)]
mod tests {
    use serde::ser::{Serialize, Serializer};

    use super::super::{to_vec, DIRECT_MARKER};
    use crate::value::Value;

    fn map() -> Value {
        Value::Map(vec![
            (
                Value::from("a"),
                Value::Array(vec![Value::from(1u64), Value::Nil]),
            ),
            (Value::from("b"), Value::Map(Vec::new())),
        ])
    }

    #[test]
    fn values_inside_typed_values_encode_as_the_encoder_does() {
        let v = map();
        let typed = to_vec(&(1u8, &v, vec![&v, &v])).ok();
        let mut expected = vec![0x93, 0x01];
        expected.extend(crate::msgpack::encode(&v).unwrap_or_default());
        expected.push(0x92);
        for _ in 0..2 {
            expected.extend(crate::msgpack::encode(&v).unwrap_or_default());
        }
        assert_eq!(typed, Some(expected));
    }

    /// Something other than a `Value` under the private marker.
    struct NotAValue;
    impl Serialize for NotAValue {
        fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
            s.serialize_newtype_struct(DIRECT_MARKER, &5u8)
        }
    }

    /// A second lend while the first is open.
    struct Nested;
    impl Serialize for Nested {
        fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
            s.serialize_newtype_struct(DIRECT_MARKER, &Inner)
        }
    }
    struct Inner;
    impl Serialize for Inner {
        fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
            super::super::direct::serialize_direct(&map(), s)
        }
    }

    /// `n` nested one-item arrays around 1, as raw msgpack under the raw marker (the
    /// path a `Value` takes when a foreign serializer stands between it and ours).
    struct RawNested(usize);
    impl Serialize for RawNested {
        fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
            struct Bin(Vec<u8>);
            impl Serialize for Bin {
                fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                    s.serialize_bytes(&self.0)
                }
            }
            let mut bytes = vec![0x91u8; self.0];
            bytes.push(0x01);
            s.serialize_newtype_struct(super::super::RAW_MARKER, &Bin(bytes))
        }
    }

    #[test]
    fn raw_items_count_the_levels_open_around_them() {
        // Inside a 2-tuple and a 1-element list: two levels are open.
        for (n, fits) in [(1022, true), (1023, false)] {
            let r = to_vec(&(1u8, vec![RawNested(n)]));
            match r {
                Ok(bytes) => {
                    assert!(fits, "{n} levels were written");
                    assert!(crate::msgpack::decode(&bytes).is_ok());
                }
                Err(e) => {
                    assert!(!fits, "{n}: {e}");
                    assert_eq!(
                        crate::ErrorKind::from(&e),
                        crate::ErrorKind::DepthLimit,
                        "{e}"
                    );
                }
            }
        }
    }

    #[test]
    fn misuse_of_the_direct_marker_is_an_error_not_wrong_bytes() {
        assert!(to_vec(&(1u8, NotAValue)).is_err());
        assert!(to_vec(&(1u8, Nested)).is_err());
        // The thread's lend is released after the errors.
        assert!(to_vec(&map()).is_ok_and(|b| Some(b) == crate::msgpack::encode(&map()).ok()));
    }

    /// An ext of code 42 whose payload is a bin of `self.0` bytes.
    struct Ext(usize);
    impl Serialize for Ext {
        fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
            crate::typed::object::write_ext(s, 42, &Bin(vec![7; self.0]))
        }
    }
    struct Bin(Vec<u8>);
    impl Serialize for Bin {
        fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
            s.serialize_bytes(&self.0)
        }
    }

    #[test]
    fn ext_headers_are_right_whatever_the_previous_ext_needed() {
        // Payload sizes (bin of n bytes = n + 2 or n + 3) crossing every header form, in
        // an order that makes the header guess wrong and right.
        let sizes = [0, 14, 300, 300, 2, 70_000, 6, 250, 254, 253, 70_000, 0];
        let exts: Vec<Ext> = sizes.iter().map(|&n| Ext(n)).collect();
        let mut expected = Vec::new();
        crate::msgpack::write_array_len(&mut expected, sizes.len()).unwrap_or_default();
        for &n in &sizes {
            let mut payload = Vec::new();
            crate::msgpack::write_bin(&mut payload, &vec![7; n]).unwrap_or_default();
            crate::msgpack::write_ext(&mut expected, 42, &payload).unwrap_or_default();
        }
        assert_eq!(to_vec(&exts).ok(), Some(expected));
        // Nested: an ext inside an ext's payload.
        let nested = to_vec(&(Ext(300), vec![Ext(1)])).ok();
        let mut expected = vec![0x92];
        let mut payload = Vec::new();
        crate::msgpack::write_bin(&mut payload, &[7; 300]).unwrap_or_default();
        crate::msgpack::write_ext(&mut expected, 42, &payload).unwrap_or_default();
        expected.push(0x91);
        crate::msgpack::write_ext(&mut expected, 42, b"\xc4\x01\x07").unwrap_or_default();
        assert_eq!(nested, Some(expected));
    }

    #[test]
    fn deep_value_parts_fail_cleanly_on_a_small_stack() {
        let mut deep = Value::Nil;
        for _ in 0..2000 {
            deep = Value::Array(vec![deep]);
        }
        let deep = std::sync::Arc::new(deep);
        let shared = std::sync::Arc::clone(&deep);
        let refused = std::thread::Builder::new()
            .stack_size(64 * 1024)
            .spawn(move || {
                let r = to_vec(&(1u8, vec![&*shared]));
                matches!(r, Err(e) if e.kind() == &crate::typed::TypedErrorKind::DepthLimit)
            })
            .ok()
            .and_then(|t| t.join().ok());
        assert_eq!(refused, Some(true));
        // Dropped here, on the test's own stack.
        drop(deep);
    }

    #[test]
    fn a_value_through_a_foreign_serializer_still_serializes() {
        // serde_json inside our serializer's run: the value arrives as bytes (as before).
        let _active = super::super::direct::ActiveGuard::new();
        assert!(serde_json::to_vec(&map()).is_ok());
    }
}
