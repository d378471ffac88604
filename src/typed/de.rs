//! A serde `Deserializer` reading msgpack bytes directly into Rust values.
//!
//! It reads on the crate's one msgpack [reader](crate::msgpack) — the same marker,
//! length, canonical-form and nesting rules as the `Value` decoder, so the same bytes
//! give the same error kind at the same offset — under the caller's
//! [`DecodeOptions`]. Strings and bytes are handed to serde borrowed from the input
//! (`visit_borrowed_str`/`visit_borrowed_bytes`), so `&'de str`, `Cow<'de, str>` and
//! `#[serde(borrow)]` fields copy nothing. Deep nesting continues on heap-allocated
//! stack segments, and skipping unknown fields checks without allocating.

use std::borrow::Cow;
use std::cell::RefCell;

use serde::de::value::{BorrowedBytesDeserializer, BorrowedStrDeserializer, I8Deserializer};
use serde::de::{self, DeserializeSeed, Visitor};

use super::error::TypedError;
use super::{EXT_MARKER, RAW_MARKER, VALUE_MARKER, VALUE_REF_MARKER};
use crate::msgpack::marker as M;
use crate::msgpack::read::{DecodeOptions, Head, Reader, Walk};
use crate::msgpack::DecodeError;
use crate::value::Value;

type Result<T, E = TypedError> = std::result::Result<T, E>;

/// Reads msgpack from a byte slice. Use [`from_slice`](super::from_slice).
pub(crate) struct De<'de> {
    r: Reader<'de>,
}

impl<'de> Walk<'de> for De<'de> {
    #[inline(always)]
    fn reader(&mut self) -> &mut Reader<'de> {
        &mut self.r
    }
}

fn truncated(at: usize) -> TypedError {
    TypedError::from(DecodeError::new(
        crate::msgpack::DecodeErrorKind::Truncated,
        at,
    ))
}

thread_local! {
    /// A `Value` part the deserializer decoded on its own reader, waiting for the
    /// `Value` visitor it is handed to, with the address and length of its bytes (see
    /// [`take_decoded`]).
    static DECODED: RefCell<Option<(usize, usize, Value)>> = const { RefCell::new(None) };
}

/// The `Value` decoded from exactly the bytes `item` (same address, same length), if
/// this deserializer just decoded it: serde cannot pass a `Value` through a visitor, so
/// the decoded value waits here while its raw bytes travel through serde, and the
/// `Value` visitor takes it instead of decoding the bytes again.
pub(crate) fn take_decoded(item: &[u8]) -> Option<Value> {
    DECODED.with(|slot| {
        let mut slot = slot.borrow_mut();
        match slot.as_ref() {
            Some((addr, len, _)) if *addr == item.as_ptr() as usize && *len == item.len() => {
                slot.take().map(|(_, _, v)| v)
            }
            _ => None,
        }
    })
}

fn leave_decoded(item: &[u8], value: Value) {
    DECODED.with(|slot| {
        *slot.borrow_mut() = Some((item.as_ptr() as usize, item.len(), value));
    });
}

/// The length in bytes of the msgpack item at the start of `input`, checked as
/// decoding checks it.
pub(crate) fn item_len(input: &[u8]) -> Result<usize, DecodeError> {
    let mut r = Reader::new(input, DecodeOptions::default());
    crate::msgpack::borrowed::skip(&mut r)?;
    Ok(r.pos)
}

impl<'de> De<'de> {
    pub(crate) fn new(input: &'de [u8], options: DecodeOptions) -> Self {
        De {
            r: Reader::new(input, options),
        }
    }

    /// Fails unless the whole input was read.
    pub(crate) fn end(&self) -> Result<()> {
        Ok(self.r.finish()?)
    }

    fn peek(&self) -> Result<u8> {
        self.r.peek().ok_or_else(|| truncated(self.r.pos))
    }

    /// Skips one item, checked as decoding checks it, allocating nothing.
    fn skip_item(&mut self) -> Result<()> {
        Ok(crate::msgpack::borrowed::skip(&mut self.r)?)
    }

    /// The bytes of the item whose header (at `at`) was just read, consumed.
    fn rest_of_item(&mut self, head: Head<'de>, at: usize) -> Result<&'de [u8]> {
        crate::msgpack::borrowed::skip_from(&mut self.r, head, at)?;
        Ok(self.r.slice(at, self.r.pos))
    }

    fn visit_array<V: Visitor<'de>>(
        &mut self,
        n: usize,
        at: usize,
        visitor: V,
    ) -> Result<V::Value> {
        if n == 0 {
            return visitor.visit_seq(SeqAcc {
                de: self,
                remaining: 0,
            });
        }
        self.nested(at, |de| {
            let mut acc = SeqAcc { de, remaining: n };
            let value = visitor.visit_seq(&mut acc).map_err(|e| e.at(at))?;
            match acc.remaining {
                0 => Ok(value),
                left => Err(TypedError::msg(format!(
                    "array of {n} items has {left} more than the Rust type reads"
                ))
                .at(at)),
            }
        })
    }

    fn visit_map_n<V: Visitor<'de>>(
        &mut self,
        n: usize,
        at: usize,
        visitor: V,
    ) -> Result<V::Value> {
        if n == 0 {
            return visitor.visit_map(MapAcc {
                de: self,
                remaining: 0,
            });
        }
        self.nested(at, |de| {
            let mut acc = MapAcc { de, remaining: n };
            let value = visitor.visit_map(&mut acc).map_err(|e| e.at(at))?;
            match acc.remaining {
                0 => Ok(value),
                left => Err(TypedError::msg(format!(
                    "map of {n} entries has {left} more than the Rust type reads"
                ))
                .at(at)),
            }
        })
    }

    fn describe_next(&self) -> &'static str {
        self.r.peek().map_or("end of input", M::describe)
    }

    /// `EXT_MARKER`: presents the next ext as the pair `(code, payload)`, the payload
    /// read on the same reader, confined to the payload and counted as a document of
    /// its own (as Python packs and reads it), which must be consumed exactly.
    fn visit_ext<V: Visitor<'de>>(&mut self, visitor: V) -> Result<V::Value> {
        let at = self.r.pos;
        if !self.r.peek().is_some_and(M::is_ext) {
            return Err(TypedError::msg(format!(
                "expected a Python object (msgpack ext), found {}",
                self.describe_next()
            ))
            .at(at));
        }
        let Head::Ext { code, len } = self.r.head()? else {
            return Err(truncated(at));
        };
        let end = self.r.pos + len;
        let value = self
            .ext_document(at, len, |de| {
                visitor.visit_seq(ExtSeq {
                    code,
                    end,
                    sub: Some(de),
                    sent_code: false,
                })
            })
            .map_err(|e| e.at(at))?;
        self.r.pos = end;
        Ok(value)
    }
}

impl<'de> de::Deserializer<'de> for &mut De<'de> {
    type Error = TypedError;

    fn is_human_readable(&self) -> bool {
        true
    }

    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value> {
        let at = self.r.pos;
        let r = match self.r.head()? {
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
            head @ Head::Ext { .. } => {
                let item = self.rest_of_item(head, at)?;
                visitor.visit_map(RawItemMap { item: Some(item) })
            }
        };
        r.map_err(|e| e.at(at))
    }

    fn deserialize_option<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value> {
        if self.peek()? == M::NIL {
            self.r.pos += 1;
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
                // Decoded here, by the `Value` decoder on this reader (same checks,
                // offsets and depth counts as the rest of the document), and handed
                // over as the newtype variant `RAW_MARKER(bytes)`: the `Value` visitor
                // takes the decoded value waiting for exactly those bytes.
                let start = self.r.pos;
                let value = crate::msgpack::decode::read_owned(&mut self.r)?;
                let item = self.r.slice(start, self.r.pos);
                leave_decoded(item, value);
                visitor.visit_enum(RawItemEnum { item })
            }
            VALUE_REF_MARKER => {
                // Checked here on this reader (limits, canonical forms, offsets as the
                // rest of the document), then lent whole: the `ValueRef` visitor reads
                // the borrowed value from exactly these bytes.
                let start = self.r.pos;
                crate::msgpack::borrowed::skip(&mut self.r)?;
                let item = self.r.slice(start, self.r.pos);
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
        let at = self.r.pos;
        const ONE_ENTRY_MAP: u8 = M::FIXMAP | 1;
        match self.peek()? {
            M::FIXSTR..=M::FIXSTR_MAX | M::STR8..=M::STR32 => {
                let s: &'de str = de::Deserialize::deserialize(&mut *self)?;
                visitor
                    .visit_enum(BorrowedStrDeserializer::<TypedError>::new(s))
                    .map_err(|e| e.at(at))
            }
            ONE_ENTRY_MAP => {
                self.r.pos += 1;
                self.nested(at, |de| visitor.visit_enum(VariantAcc { de }))
                    .map_err(|e| e.at(at))
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
    matches!(
        marker,
        0x00..=M::POS_FIXINT_MAX
            | M::FIXMAP
            | M::FIXARRAY
            | M::FIXSTR..=M::FIXSTR_MAX
            | M::NIL
            | M::FALSE
            | M::TRUE
            | M::NEG_FIXINT..=0xff
    )
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
    /// Where the payload ends.
    end: usize,
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
                if sub.r.pos != self.end {
                    return Err(TypedError::msg(format!(
                        "{} byte(s) left over in the payload of ext {}",
                        self.end.saturating_sub(sub.r.pos),
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
