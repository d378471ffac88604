//! A serde `Deserializer` reading msgpack bytes directly into Rust values.
//!
//! Safe on hostile input: every length is checked against the bytes left before it is
//! used, nesting is counted per document (the top level or one ext payload, as Python
//! reads) and in total and limited, deep nesting continues on heap-allocated stack
//! segments, and skipping unknown fields is iterative.

use std::borrow::Cow;

use rmp::Marker;
use serde::de::value::{BorrowedBytesDeserializer, BorrowedStrDeserializer, I8Deserializer};
use serde::de::{self, DeserializeSeed, Visitor};

use super::error::TypedError;
use super::{EXT_MARKER, RAW_MARKER, VALUE_MARKER};
use crate::error::{DecodeError, DecodeErrorKind};
use crate::msgpack::{DEFAULT_MAX_DEPTH, DEFAULT_MAX_TOTAL_DEPTH};

type Result<T, E = TypedError> = std::result::Result<T, E>;

/// One item header.
enum Head<'de> {
    Nil,
    Bool(bool),
    U(u64),
    I(i64),
    F32(f32),
    F64(f64),
    Str(&'de str),
    Bin(&'de [u8]),
    Array(usize),
    Map(usize),
    /// The whole ext item.
    Ext(&'de [u8]),
}

/// Reads msgpack from a byte slice. Use [`from_slice`](super::from_slice).
pub(crate) struct De<'de> {
    input: &'de [u8],
    pos: usize,
    /// Open levels in the current document (the top level or one ext payload, which
    /// Python packs and reads separately).
    depth: usize,
    max_depth: usize,
    /// Open levels in all documents, ext payloads included.
    total: usize,
}

/// Levels between two checks of the remaining call stack while serde recurses, and the
/// level (modulo that) where they happen: past the few levels of a typical checkpoint,
/// so shallow values never pay for a check, while deep ones are checked every few levels.
const STACK_CHECK_EVERY: usize = 8;
const STACK_CHECK_AT: usize = 6;

fn truncated(at: usize) -> TypedError {
    TypedError::from(DecodeError::new(DecodeErrorKind::Truncated, at))
}

/// The length in bytes of the msgpack item at the start of `input`.
pub(crate) fn item_len(input: &[u8]) -> Result<usize> {
    let mut de = De::new(input, DEFAULT_MAX_DEPTH);
    de.skip_item()?;
    Ok(de.pos)
}

impl<'de> De<'de> {
    pub(crate) fn new(input: &'de [u8], max_depth: usize) -> Self {
        De {
            input,
            pos: 0,
            depth: 0,
            max_depth,
            total: 0,
        }
    }

    /// Fails unless the whole input was read.
    pub(crate) fn end(&self) -> Result<()> {
        if self.pos == self.input.len() {
            Ok(())
        } else {
            Err(TypedError::from(DecodeError::new(
                DecodeErrorKind::TrailingBytes {
                    count: self.input.len() - self.pos,
                },
                self.pos,
            )))
        }
    }

    fn take(&mut self, n: usize) -> Result<&'de [u8]> {
        let input: &'de [u8] = self.input;
        let end = self.pos.checked_add(n).ok_or_else(|| truncated(self.pos))?;
        let s = input.get(self.pos..end).ok_or_else(|| {
            TypedError::from(DecodeError::new(
                DecodeErrorKind::LengthExceedsInput {
                    declared: n as u64,
                    remaining: input.len().saturating_sub(self.pos),
                },
                self.pos,
            ))
        })?;
        self.pos = end;
        Ok(s)
    }

    fn take_n<const N: usize>(&mut self) -> Result<[u8; N]> {
        let at = self.pos;
        self.take(N)?.try_into().map_err(|_| truncated(at))
    }

    fn u8(&mut self) -> Result<u8> {
        Ok(u8::from_be_bytes(self.take_n()?))
    }
    fn u16(&mut self) -> Result<u16> {
        Ok(u16::from_be_bytes(self.take_n()?))
    }
    fn u32(&mut self) -> Result<u32> {
        Ok(u32::from_be_bytes(self.take_n()?))
    }

    fn peek(&self) -> Result<u8> {
        self.input
            .get(self.pos)
            .copied()
            .ok_or_else(|| truncated(self.pos))
    }

    fn check_len(&self, declared: usize, min_size: usize, at: usize) -> Result<()> {
        let remaining = self.input.len().saturating_sub(self.pos);
        if declared.saturating_mul(min_size) > remaining {
            Err(TypedError::from(DecodeError::new(
                DecodeErrorKind::LengthExceedsInput {
                    declared: declared as u64,
                    remaining,
                },
                at,
            )))
        } else {
            Ok(())
        }
    }

    fn enter(&mut self, at: usize) -> Result<()> {
        if self.depth >= self.max_depth {
            return Err(TypedError::from(DecodeError::new(
                DecodeErrorKind::DepthLimit {
                    limit: self.max_depth,
                },
                at,
            )));
        }
        self.enter_total(at)?;
        self.depth += 1;
        Ok(())
    }

    fn enter_total(&mut self, at: usize) -> Result<()> {
        if self.total >= DEFAULT_MAX_TOTAL_DEPTH {
            return Err(TypedError::from(DecodeError::new(
                DecodeErrorKind::DepthLimit {
                    limit: DEFAULT_MAX_TOTAL_DEPTH,
                },
                at,
            )));
        }
        self.total += 1;
        Ok(())
    }

    fn leave(&mut self) {
        self.depth -= 1;
        self.total -= 1;
    }

    /// Runs `f` (a visitor reading one nested level) on a fresh stack segment if the
    /// current one is nearly used up; checked every few levels.
    #[inline]
    fn guarded<T>(&mut self, f: impl FnOnce(&mut Self) -> T) -> T {
        if self.total % STACK_CHECK_EVERY == STACK_CHECK_AT {
            crate::stack::guard(|| f(self))
        } else {
            f(self)
        }
    }

    /// Reads an ext header: `(code, payload length)`, or `None` if the next item is not
    /// an ext (nothing is consumed then).
    fn ext_header(&mut self) -> Result<Option<(i8, usize)>> {
        let save = self.pos;
        let len = match Marker::from_u8(self.u8()?) {
            Marker::FixExt1 => 1,
            Marker::FixExt2 => 2,
            Marker::FixExt4 => 4,
            Marker::FixExt8 => 8,
            Marker::FixExt16 => 16,
            Marker::Ext8 => usize::from(self.u8()?),
            Marker::Ext16 => usize::from(self.u16()?),
            Marker::Ext32 => self.u32()? as usize,
            _ => {
                self.pos = save;
                return Ok(None);
            }
        };
        let code = i8::from_be_bytes(self.take_n()?);
        self.check_len(len, 1, save)?;
        Ok(Some((code, len)))
    }

    /// Skips one item, iteratively.
    pub(crate) fn skip_item(&mut self) -> Result<()> {
        let mut pending: usize = 1;
        while pending > 0 {
            pending -= 1;
            let at = self.pos;
            let marker = Marker::from_u8(self.u8()?);
            let skip = match marker {
                Marker::Null
                | Marker::True
                | Marker::False
                | Marker::FixPos(_)
                | Marker::FixNeg(_) => 0,
                Marker::U8 | Marker::I8 => 1,
                Marker::U16 | Marker::I16 => 2,
                Marker::U32 | Marker::I32 | Marker::F32 => 4,
                Marker::U64 | Marker::I64 | Marker::F64 => 8,
                Marker::FixStr(n) => usize::from(n),
                Marker::Str8 | Marker::Bin8 => usize::from(self.u8()?),
                Marker::Str16 | Marker::Bin16 => usize::from(self.u16()?),
                Marker::Str32 | Marker::Bin32 => self.u32()? as usize,
                Marker::FixArray(n) => self.pending(&mut pending, usize::from(n), 1, at)?,
                Marker::Array16 => {
                    let n = usize::from(self.u16()?);
                    self.pending(&mut pending, n, 1, at)?
                }
                Marker::Array32 => {
                    let n = self.u32()? as usize;
                    self.pending(&mut pending, n, 1, at)?
                }
                Marker::FixMap(n) => self.pending(&mut pending, usize::from(n), 2, at)?,
                Marker::Map16 => {
                    let n = usize::from(self.u16()?);
                    self.pending(&mut pending, n, 2, at)?
                }
                Marker::Map32 => {
                    let n = self.u32()? as usize;
                    self.pending(&mut pending, n, 2, at)?
                }
                Marker::FixExt1
                | Marker::FixExt2
                | Marker::FixExt4
                | Marker::FixExt8
                | Marker::FixExt16
                | Marker::Ext8
                | Marker::Ext16
                | Marker::Ext32 => {
                    self.pos = at;
                    match self.ext_header()? {
                        Some((_, len)) => len,
                        None => return Err(truncated(at)),
                    }
                }
                Marker::Reserved => {
                    return Err(TypedError::from(DecodeError::new(
                        DecodeErrorKind::ReservedByte(0xc1),
                        at,
                    )))
                }
            };
            self.take(skip)?;
        }
        Ok(())
    }

    fn pending(&self, pending: &mut usize, n: usize, per: usize, at: usize) -> Result<usize> {
        let items = n.saturating_mul(per);
        self.check_len(items, 1, at)?;
        *pending = pending.saturating_add(items);
        Ok(0)
    }

    /// The bytes of the next item, consumed.
    fn item_slice(&mut self) -> Result<&'de [u8]> {
        let start = self.pos;
        self.skip_item()?;
        let input: &'de [u8] = self.input;
        input.get(start..self.pos).ok_or_else(|| truncated(start))
    }

    fn read_str(&mut self, n: usize, at: usize) -> Result<&'de str> {
        self.check_len(n, 1, at)?;
        let start = self.pos;
        let bytes = self.take(n)?;
        std::str::from_utf8(bytes).map_err(|e| {
            TypedError::from(DecodeError::new(
                DecodeErrorKind::InvalidUtf8,
                start + e.valid_up_to(),
            ))
        })
    }

    fn visit_array<V: Visitor<'de>>(
        &mut self,
        n: usize,
        at: usize,
        visitor: V,
    ) -> Result<V::Value> {
        self.check_len(n, 1, at)?;
        if n == 0 {
            return visitor.visit_seq(SeqAcc {
                de: self,
                remaining: 0,
            });
        }
        self.enter(at)?;
        let (value, left) = self.guarded(|de| {
            let mut acc = SeqAcc { de, remaining: n };
            let value = visitor.visit_seq(&mut acc).map_err(|e| e.at(at));
            (value, acc.remaining)
        });
        let value = value?;
        self.leave();
        if left != 0 {
            return Err(TypedError::msg(format!(
                "array of {n} items has {left} more than the Rust type reads"
            ))
            .at(at));
        }
        Ok(value)
    }

    fn visit_map_n<V: Visitor<'de>>(
        &mut self,
        n: usize,
        at: usize,
        visitor: V,
    ) -> Result<V::Value> {
        self.check_len(n, 2, at)?;
        if n == 0 {
            return visitor.visit_map(MapAcc {
                de: self,
                remaining: 0,
            });
        }
        self.enter(at)?;
        let (value, left) = self.guarded(|de| {
            let mut acc = MapAcc { de, remaining: n };
            let value = visitor.visit_map(&mut acc).map_err(|e| e.at(at));
            (value, acc.remaining)
        });
        let value = value?;
        self.leave();
        if left != 0 {
            return Err(TypedError::msg(format!(
                "map of {n} entries has {left} more than the Rust type reads"
            ))
            .at(at));
        }
        Ok(value)
    }

    fn describe_next(&self) -> &'static str {
        match self.input.get(self.pos).map(|b| Marker::from_u8(*b)) {
            None => "end of input",
            Some(Marker::Null) => "nil",
            Some(Marker::True | Marker::False) => "bool",
            Some(
                Marker::FixPos(_)
                | Marker::FixNeg(_)
                | Marker::U8
                | Marker::U16
                | Marker::U32
                | Marker::U64
                | Marker::I8
                | Marker::I16
                | Marker::I32
                | Marker::I64,
            ) => "int",
            Some(Marker::F32 | Marker::F64) => "float",
            Some(Marker::FixStr(_) | Marker::Str8 | Marker::Str16 | Marker::Str32) => "str",
            Some(Marker::Bin8 | Marker::Bin16 | Marker::Bin32) => "bin",
            Some(Marker::FixArray(_) | Marker::Array16 | Marker::Array32) => "array",
            Some(Marker::FixMap(_) | Marker::Map16 | Marker::Map32) => "map",
            Some(Marker::Reserved) => "reserved byte",
            Some(_) => "ext",
        }
    }

    /// Reads the next item's header (and its bytes, for scalars) without calling a
    /// visitor. Kept apart from `deserialize_any` so the generic, recursive frames stay
    /// small.
    fn read_head(&mut self) -> Result<Head<'de>> {
        let at = self.pos;
        let marker = Marker::from_u8(self.u8()?);
        Ok(match marker {
            Marker::Null => Head::Nil,
            Marker::True => Head::Bool(true),
            Marker::False => Head::Bool(false),
            Marker::FixPos(n) => Head::U(u64::from(n)),
            Marker::FixNeg(n) => Head::I(i64::from(n)),
            Marker::U8 => Head::U(u64::from(self.u8()?)),
            Marker::U16 => Head::U(u64::from(self.u16()?)),
            Marker::U32 => Head::U(u64::from(self.u32()?)),
            Marker::U64 => Head::U(u64::from_be_bytes(self.take_n()?)),
            Marker::I8 => Head::I(i64::from(i8::from_be_bytes(self.take_n()?))),
            Marker::I16 => Head::I(i64::from(i16::from_be_bytes(self.take_n()?))),
            Marker::I32 => Head::I(i64::from(i32::from_be_bytes(self.take_n()?))),
            Marker::I64 => Head::I(i64::from_be_bytes(self.take_n()?)),
            Marker::F32 => Head::F32(f32::from_bits(self.u32()?)),
            Marker::F64 => Head::F64(f64::from_bits(u64::from_be_bytes(self.take_n()?))),
            Marker::FixStr(n) => Head::Str(self.read_str(usize::from(n), at)?),
            Marker::Str8 => {
                let n = usize::from(self.u8()?);
                Head::Str(self.read_str(n, at)?)
            }
            Marker::Str16 => {
                let n = usize::from(self.u16()?);
                Head::Str(self.read_str(n, at)?)
            }
            Marker::Str32 => {
                let n = self.u32()? as usize;
                Head::Str(self.read_str(n, at)?)
            }
            Marker::Bin8 => {
                let n = usize::from(self.u8()?);
                Head::Bin(self.take(n)?)
            }
            Marker::Bin16 => {
                let n = usize::from(self.u16()?);
                Head::Bin(self.take(n)?)
            }
            Marker::Bin32 => {
                let n = self.u32()? as usize;
                Head::Bin(self.take(n)?)
            }
            Marker::FixArray(n) => Head::Array(usize::from(n)),
            Marker::Array16 => Head::Array(usize::from(self.u16()?)),
            Marker::Array32 => Head::Array(self.u32()? as usize),
            Marker::FixMap(n) => Head::Map(usize::from(n)),
            Marker::Map16 => Head::Map(usize::from(self.u16()?)),
            Marker::Map32 => Head::Map(self.u32()? as usize),
            Marker::FixExt1
            | Marker::FixExt2
            | Marker::FixExt4
            | Marker::FixExt8
            | Marker::FixExt16
            | Marker::Ext8
            | Marker::Ext16
            | Marker::Ext32 => {
                self.pos = at;
                Head::Ext(self.item_slice()?)
            }
            Marker::Reserved => {
                return Err(TypedError::from(DecodeError::new(
                    DecodeErrorKind::ReservedByte(0xc1),
                    at,
                )))
            }
        })
    }

    /// `EXT_MARKER`: presents the next ext as the pair `(code, payload)`, the payload
    /// read by a nested deserializer that must consume it exactly.
    fn visit_ext<V: Visitor<'de>>(&mut self, visitor: V) -> Result<V::Value> {
        let at = self.pos;
        let Some((code, len)) = self.ext_header()? else {
            return Err(TypedError::msg(format!(
                "expected a Python object (msgpack ext), found {}",
                self.describe_next()
            ))
            .at(at));
        };
        let payload = self.take(len)?;
        // The payload is a document of its own, as Python packs and reads it: its
        // levels count from zero against the per-document limit, and in the total.
        self.enter_total(at)?;
        let mut sub = De {
            input: payload,
            pos: 0,
            depth: 0,
            max_depth: self.max_depth,
            total: self.total,
        };
        let value = crate::stack::guard(|| {
            visitor.visit_seq(ExtSeq {
                code,
                sub: Some(&mut sub),
                sent_code: false,
            })
        })
        .map_err(|e| e.at(at))?;
        self.total -= 1;
        Ok(value)
    }
}

impl<'de> de::Deserializer<'de> for &mut De<'de> {
    type Error = TypedError;

    fn is_human_readable(&self) -> bool {
        true
    }

    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value> {
        let at = self.pos;
        let r = match self.read_head()? {
            Head::Nil => visitor.visit_unit(),
            Head::Bool(b) => visitor.visit_bool(b),
            Head::U(n) => visitor.visit_u64(n),
            Head::I(n) => visitor.visit_i64(n),
            Head::F32(f) => visitor.visit_f32(f),
            Head::F64(f) => visitor.visit_f64(f),
            Head::Str(s) => visitor.visit_borrowed_str(s),
            Head::Bin(b) => visitor.visit_borrowed_bytes(b),
            Head::Array(n) => self.visit_array(n, at, visitor),
            Head::Map(n) => self.visit_map_n(n, at, visitor),
            // Without a type that reads it, an ext is handed on as its raw bytes under
            // the private raw marker, which `Value` and the Python types recognise (also
            // after serde buffered it, as for `flatten`).
            Head::Ext(item) => visitor.visit_map(RawItemMap { item: Some(item) }),
        };
        r.map_err(|e| e.at(at))
    }

    fn deserialize_option<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value> {
        if self.peek()? == 0xc0 {
            self.pos += 1;
            visitor.visit_none()
        } else {
            visitor.visit_some(self)
        }
    }

    fn deserialize_newtype_struct<V: Visitor<'de>>(
        self,
        name: &'static str,
        visitor: V,
    ) -> Result<V::Value> {
        match name {
            VALUE_MARKER => {
                if is_plain_byte(self.peek()?) {
                    // One-byte items and fixstrs: always canonical, nothing nested, so
                    // read as any item they give the `Value` the msgpack decoder would.
                    return self.deserialize_any(visitor);
                }
                // The raw item as the newtype variant `RAW_MARKER(bytes)`: `Value` tells
                // that from real data without building the marker as a key `Value`.
                let item = self.item_slice()?;
                visitor.visit_enum(RawItemEnum { item })
            }
            EXT_MARKER => self.visit_ext(visitor),
            _ => visitor.visit_newtype_struct(self),
        }
    }

    fn deserialize_enum<V: Visitor<'de>>(
        self,
        _name: &'static str,
        _variants: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value> {
        let at = self.pos;
        match Marker::from_u8(self.peek()?) {
            Marker::FixStr(_) | Marker::Str8 | Marker::Str16 | Marker::Str32 => {
                let s: &'de str = de::Deserialize::deserialize(&mut *self)?;
                visitor
                    .visit_enum(BorrowedStrDeserializer::<TypedError>::new(s))
                    .map_err(|e| e.at(at))
            }
            Marker::FixMap(1) => {
                self.pos += 1;
                self.enter(at)?;
                let r = self.guarded(|de| visitor.visit_enum(VariantAcc { de }));
                self.leave();
                r.map_err(|e| e.at(at))
            }
            _ => Err(TypedError::msg(format!(
                "expected an enum variant (a string or a one-entry map), found {}",
                self.describe_next()
            ))
            .at(at)),
        }
    }

    fn deserialize_ignored_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value> {
        self.skip_item()?;
        visitor.visit_unit()
    }

    serde::forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string
        bytes byte_buf unit unit_struct seq tuple tuple_struct map struct identifier
    }
}

struct SeqAcc<'a, 'de> {
    de: &'a mut De<'de>,
    remaining: usize,
}

impl<'de> de::SeqAccess<'de> for SeqAcc<'_, 'de> {
    type Error = TypedError;
    fn next_element_seed<T: DeserializeSeed<'de>>(&mut self, seed: T) -> Result<Option<T::Value>> {
        if self.remaining == 0 {
            return Ok(None);
        }
        self.remaining -= 1;
        seed.deserialize(&mut *self.de).map(Some)
    }
    fn size_hint(&self) -> Option<usize> {
        Some(self.remaining)
    }
}

struct MapAcc<'a, 'de> {
    de: &'a mut De<'de>,
    remaining: usize,
}

impl<'de> de::MapAccess<'de> for MapAcc<'_, 'de> {
    type Error = TypedError;
    fn next_key_seed<K: DeserializeSeed<'de>>(&mut self, seed: K) -> Result<Option<K::Value>> {
        if self.remaining == 0 {
            return Ok(None);
        }
        self.remaining -= 1;
        seed.deserialize(&mut *self.de).map(Some)
    }
    fn next_value_seed<V: DeserializeSeed<'de>>(&mut self, seed: V) -> Result<V::Value> {
        seed.deserialize(&mut *self.de)
    }
    fn size_hint(&self) -> Option<usize> {
        Some(self.remaining)
    }
}

/// A one-entry map `{RAW_MARKER: <bytes of one msgpack item>}`.
struct RawItemMap<'de> {
    item: Option<&'de [u8]>,
}

impl<'de> de::MapAccess<'de> for RawItemMap<'de> {
    type Error = TypedError;
    fn next_key_seed<K: DeserializeSeed<'de>>(&mut self, seed: K) -> Result<Option<K::Value>> {
        if self.item.is_none() {
            return Ok(None);
        }
        seed.deserialize(BorrowedStrDeserializer::new(RAW_MARKER))
            .map(Some)
    }
    fn next_value_seed<V: DeserializeSeed<'de>>(&mut self, seed: V) -> Result<V::Value> {
        let item = self.item.take().unwrap_or_default();
        seed.deserialize(BorrowedBytesDeserializer::new(item))
    }
    fn size_hint(&self) -> Option<usize> {
        Some(usize::from(self.item.is_some()))
    }
}

/// Markers of items that are canonical whatever follows and hold nothing nested: nil,
/// bools, fixints, fixstrs, the empty array and the empty map.
fn is_plain_byte(marker: u8) -> bool {
    matches!(marker, 0x00..=0x7f | 0x80 | 0x90 | 0xa0..=0xbf | 0xc0 | 0xc2 | 0xc3 | 0xe0..=0xff)
}

/// The newtype variant `RAW_MARKER(<bytes of one msgpack item>)`.
struct RawItemEnum<'de> {
    item: &'de [u8],
}

impl<'de> de::EnumAccess<'de> for RawItemEnum<'de> {
    type Error = TypedError;
    type Variant = Self;
    fn variant_seed<V: DeserializeSeed<'de>>(self, seed: V) -> Result<(V::Value, Self)> {
        let v = seed.deserialize(BorrowedStrDeserializer::<TypedError>::new(RAW_MARKER))?;
        Ok((v, self))
    }
}

impl<'de> de::VariantAccess<'de> for RawItemEnum<'de> {
    type Error = TypedError;
    fn unit_variant(self) -> Result<()> {
        Err(TypedError::msg("a raw msgpack item is a newtype variant"))
    }
    fn newtype_variant_seed<T: DeserializeSeed<'de>>(self, seed: T) -> Result<T::Value> {
        seed.deserialize(BorrowedBytesDeserializer::new(self.item))
    }
    fn tuple_variant<V: Visitor<'de>>(self, _len: usize, _visitor: V) -> Result<V::Value> {
        Err(TypedError::msg("a raw msgpack item is a newtype variant"))
    }
    fn struct_variant<V: Visitor<'de>>(
        self,
        _fields: &'static [&'static str],
        _visitor: V,
    ) -> Result<V::Value> {
        Err(TypedError::msg("a raw msgpack item is a newtype variant"))
    }
}

/// Whether an enum variant name is `RAW_MARKER`, read without allocating.
pub(crate) struct IsRawMarker(pub(crate) bool);

impl<'de> de::Deserialize<'de> for IsRawMarker {
    fn deserialize<D: de::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl Visitor<'_> for V {
            type Value = IsRawMarker;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a variant name")
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<IsRawMarker, E> {
                Ok(IsRawMarker(v == RAW_MARKER))
            }
            fn visit_u64<E: de::Error>(self, _: u64) -> Result<IsRawMarker, E> {
                Ok(IsRawMarker(false))
            }
            fn visit_bytes<E: de::Error>(self, _: &[u8]) -> Result<IsRawMarker, E> {
                Ok(IsRawMarker(false))
            }
        }
        d.deserialize_identifier(V)
    }
}

/// The pair `(code, payload)` of an ext.
struct ExtSeq<'a, 'de> {
    code: i8,
    sub: Option<&'a mut De<'de>>,
    sent_code: bool,
}

impl<'de> de::SeqAccess<'de> for ExtSeq<'_, 'de> {
    type Error = TypedError;
    fn next_element_seed<T: DeserializeSeed<'de>>(&mut self, seed: T) -> Result<Option<T::Value>> {
        if !self.sent_code {
            self.sent_code = true;
            return seed
                .deserialize(I8Deserializer::<TypedError>::new(self.code))
                .map(Some);
        }
        match self.sub.take() {
            None => Ok(None),
            Some(sub) => {
                let v = seed.deserialize(&mut *sub)?;
                if sub.pos != sub.input.len() {
                    return Err(TypedError::msg(format!(
                        "{} byte(s) left over in the payload of ext {}",
                        sub.input.len() - sub.pos,
                        self.code
                    )));
                }
                Ok(Some(v))
            }
        }
    }
    fn size_hint(&self) -> Option<usize> {
        Some(usize::from(!self.sent_code) + usize::from(self.sub.is_some()))
    }
}

/// An externally tagged variant `{name: content}`.
struct VariantAcc<'a, 'de> {
    de: &'a mut De<'de>,
}

impl<'de> de::EnumAccess<'de> for VariantAcc<'_, 'de> {
    type Error = TypedError;
    type Variant = Self;
    fn variant_seed<V: DeserializeSeed<'de>>(self, seed: V) -> Result<(V::Value, Self)> {
        let v = seed.deserialize(&mut *self.de)?;
        Ok((v, self))
    }
}

impl<'de> de::VariantAccess<'de> for VariantAcc<'_, 'de> {
    type Error = TypedError;
    fn unit_variant(self) -> Result<()> {
        de::Deserialize::deserialize(&mut *self.de)
    }
    fn newtype_variant_seed<T: DeserializeSeed<'de>>(self, seed: T) -> Result<T::Value> {
        seed.deserialize(&mut *self.de)
    }
    fn tuple_variant<V: Visitor<'de>>(self, _len: usize, visitor: V) -> Result<V::Value> {
        de::Deserializer::deserialize_seq(&mut *self.de, visitor)
    }
    fn struct_variant<V: Visitor<'de>>(
        self,
        _fields: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value> {
        de::Deserializer::deserialize_map(&mut *self.de, visitor)
    }
}

/// Bytes read from any deserializer: bin, or (from foreign formats) a sequence of
/// integers.
pub(crate) struct ByteVec<'de>(pub(crate) Cow<'de, [u8]>);

impl<'de> de::Deserialize<'de> for ByteVec<'de> {
    fn deserialize<D: de::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = ByteVec<'de>;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("bytes")
            }
            fn visit_borrowed_bytes<E: de::Error>(self, v: &'de [u8]) -> Result<Self::Value, E> {
                Ok(ByteVec(Cow::Borrowed(v)))
            }
            fn visit_bytes<E: de::Error>(self, v: &[u8]) -> Result<Self::Value, E> {
                Ok(ByteVec(Cow::Owned(v.to_vec())))
            }
            fn visit_byte_buf<E: de::Error>(self, v: Vec<u8>) -> Result<Self::Value, E> {
                Ok(ByteVec(Cow::Owned(v)))
            }
            fn visit_seq<A: de::SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
                let mut out = Vec::with_capacity(seq.size_hint().unwrap_or(0).min(4096));
                while let Some(b) = seq.next_element::<u8>()? {
                    out.push(b);
                }
                Ok(ByteVec(Cow::Owned(out)))
            }
        }
        d.deserialize_bytes(V)
    }
}

#[cfg(test)]
mod tests {
    use crate::value::Value;

    /// `Value` parts read through the typed deserializer, in a one-field struct.
    fn read(item: &[u8]) -> Option<Value> {
        #[derive(serde::Deserialize)]
        struct S {
            v: Value,
        }
        let mut doc = b"\x81\xa1v".to_vec();
        doc.extend_from_slice(item);
        super::super::from_slice::<S>(&doc).ok().map(|s| s.v)
    }

    #[test]
    fn value_parts_read_as_the_msgpack_decoder_reads_them() {
        let items: &[&[u8]] = &[
            b"\xc0",
            b"\xc3",
            b"\x05",
            b"\xff",
            b"\xa2hi",
            b"\x80",
            b"\x90",
            b"\x81\xa1k\x92\x01\xc0",
            b"\xcd\x01\x00",
            b"\xcb\x3f\xf8\x00\x00\x00\x00\x00\x00",
        ];
        for item in items {
            let expected = crate::msgpack::decode(item).ok();
            assert!(expected.is_some());
            assert_eq!(read(item), expected, "{item:x?}");
        }
    }

    #[test]
    fn deep_value_parts_fail_cleanly_on_a_small_stack() {
        let refused = std::thread::Builder::new()
            .stack_size(64 * 1024)
            .spawn(|| {
                let mut deep = vec![0x91u8; 100_000];
                deep.push(0xc0);
                let top = super::super::from_slice::<Value>(&deep).is_err();
                (top, read(&deep).is_none())
            })
            .ok()
            .and_then(|t| t.join().ok());
        assert_eq!(refused, Some((true, true)));
    }

    #[test]
    fn value_parts_refuse_what_the_msgpack_decoder_refuses() {
        // Non-canonical forms and invalid UTF-8, on both the short and the long path.
        for item in [&b"\xd0\x05"[..], b"\xd9\x01a", b"\xa1\xff", b"\x91\xa1\xff"] {
            assert!(crate::msgpack::decode(item).is_err());
            assert_eq!(read(item), None, "{item:x?}");
        }
    }
}
