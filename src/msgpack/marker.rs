//! The msgpack marker bytes: the first byte of every item, one table for every writer
//! and reader in the crate (the encoder, the reader, and the typed serde layer, which
//! writes and inspects msgpack without building a [`Value`](crate::Value)).
//!
//! Names follow the msgpack specification. A `…_MAX` constant closes the range of a
//! marker that carries a small number in its low bits (fixints, fixmap, fixarray,
//! fixstr).
//!
//! The bytes come from `rmp::Marker`, the msgpack primitives crate, so the crate has one
//! table: these names are `const`s (usable in `match` patterns, which `Marker`'s
//! variants with payloads are not), and `markers_are_the_specifications` checks them
//! against the specification's own list.

use rmp::Marker;

/// Positive fixint `0x00..=0x7f`: the number is the marker.
pub(crate) const POS_FIXINT_MAX: u8 = Marker::FixPos(0x7f).to_u8();
/// fixmap `0x80..=0x8f`: up to 15 entries, the count in the low four bits.
pub(crate) const FIXMAP: u8 = Marker::FixMap(0).to_u8();
/// The last fixmap marker.
pub(crate) const FIXMAP_MAX: u8 = Marker::FixMap(15).to_u8();
/// fixarray `0x90..=0x9f`: up to 15 items, the count in the low four bits.
pub(crate) const FIXARRAY: u8 = Marker::FixArray(0).to_u8();
/// The last fixarray marker.
pub(crate) const FIXARRAY_MAX: u8 = Marker::FixArray(15).to_u8();
/// The fixarray of 3 items (a Python object's envelope without a method).
pub(crate) const FIXARRAY_3: u8 = FIXARRAY | 3;
/// The fixarray of 4 items (a Python object's envelope with a method).
pub(crate) const FIXARRAY_4: u8 = FIXARRAY | 4;
/// fixstr `0xa0..=0xbf`: up to 31 bytes, the length in the low five bits.
pub(crate) const FIXSTR: u8 = Marker::FixStr(0).to_u8();
/// The last fixstr marker.
pub(crate) const FIXSTR_MAX: u8 = Marker::FixStr(31).to_u8();
/// `None`.
pub(crate) const NIL: u8 = Marker::Null.to_u8();
/// The byte msgpack never uses.
pub(crate) const RESERVED: u8 = Marker::Reserved.to_u8();
/// `False`.
pub(crate) const FALSE: u8 = Marker::False.to_u8();
/// `True`.
pub(crate) const TRUE: u8 = Marker::True.to_u8();
/// bin8: a one-byte length, then the bytes.
pub(crate) const BIN8: u8 = Marker::Bin8.to_u8();
/// bin16: a two-byte length.
pub(crate) const BIN16: u8 = Marker::Bin16.to_u8();
/// bin32: a four-byte length.
pub(crate) const BIN32: u8 = Marker::Bin32.to_u8();
/// ext8: a one-byte length, the type code, then the payload.
pub(crate) const EXT8: u8 = Marker::Ext8.to_u8();
/// ext16: a two-byte length.
pub(crate) const EXT16: u8 = Marker::Ext16.to_u8();
/// ext32: a four-byte length.
pub(crate) const EXT32: u8 = Marker::Ext32.to_u8();
/// float32.
pub(crate) const F32: u8 = Marker::F32.to_u8();
/// float64 (every Python float).
pub(crate) const F64: u8 = Marker::F64.to_u8();
/// uint8.
pub(crate) const U8: u8 = Marker::U8.to_u8();
/// uint16.
pub(crate) const U16: u8 = Marker::U16.to_u8();
/// uint32.
pub(crate) const U32: u8 = Marker::U32.to_u8();
/// uint64.
pub(crate) const U64: u8 = Marker::U64.to_u8();
/// int8.
pub(crate) const I8: u8 = Marker::I8.to_u8();
/// int16.
pub(crate) const I16: u8 = Marker::I16.to_u8();
/// int32.
pub(crate) const I32: u8 = Marker::I32.to_u8();
/// int64.
pub(crate) const I64: u8 = Marker::I64.to_u8();
/// fixext1: the type code, then one byte of payload.
pub(crate) const FIXEXT1: u8 = Marker::FixExt1.to_u8();
/// fixext2.
pub(crate) const FIXEXT2: u8 = Marker::FixExt2.to_u8();
/// fixext4.
pub(crate) const FIXEXT4: u8 = Marker::FixExt4.to_u8();
/// fixext8.
pub(crate) const FIXEXT8: u8 = Marker::FixExt8.to_u8();
/// fixext16.
pub(crate) const FIXEXT16: u8 = Marker::FixExt16.to_u8();
/// str8: a one-byte length, then UTF-8.
pub(crate) const STR8: u8 = Marker::Str8.to_u8();
/// str16.
pub(crate) const STR16: u8 = Marker::Str16.to_u8();
/// str32.
pub(crate) const STR32: u8 = Marker::Str32.to_u8();
/// array16: a two-byte count.
pub(crate) const ARRAY16: u8 = Marker::Array16.to_u8();
/// array32: a four-byte count.
pub(crate) const ARRAY32: u8 = Marker::Array32.to_u8();
/// map16: a two-byte count.
pub(crate) const MAP16: u8 = Marker::Map16.to_u8();
/// map32: a four-byte count.
pub(crate) const MAP32: u8 = Marker::Map32.to_u8();
/// Negative fixint `0xe0..=0xff`: the marker is the number as an `i8` (-32..=-1).
pub(crate) const NEG_FIXINT: u8 = Marker::FixNeg(-32).to_u8();

/// The header of a bin item at the start of `bytes`: `(header length, payload
/// length)`, or `None` when `bytes` does not start with a bin marker and its length.
/// The payload length is as written, not checked against `bytes`.
pub(crate) fn bin_header(bytes: &[u8]) -> Option<(usize, usize)> {
    match *bytes {
        [BIN8, n, ..] => Some((2, usize::from(n))),
        [BIN16, a, b, ..] => Some((3, usize::from(u16::from_be_bytes([a, b])))),
        [BIN32, a, b, c, d, ..] => Some((5, u32::from_be_bytes([a, b, c, d]) as usize)),
        _ => None,
    }
}

/// What the item a marker starts is, for error messages: `"int"`, `"str"`, `"ext"`, …
pub(crate) fn describe(marker: u8) -> &'static str {
    match marker {
        NIL => "nil",
        FALSE | TRUE => "bool",
        0x00..=POS_FIXINT_MAX | NEG_FIXINT..=0xff | U8..=U64 | I8..=I64 => "int",
        F32 | F64 => "float",
        FIXSTR..=FIXSTR_MAX | STR8..=STR32 => "str",
        BIN8..=BIN32 => "bin",
        FIXARRAY..=FIXARRAY_MAX | ARRAY16 | ARRAY32 => "array",
        FIXMAP..=FIXMAP_MAX | MAP16 | MAP32 => "map",
        RESERVED => "reserved byte",
        EXT8..=EXT32 | FIXEXT1..=FIXEXT16 => "ext",
    }
}

/// The code of the ext item at the start of `bytes`; `None` when `bytes` does not
/// start with an ext header.
#[cfg_attr(not(feature = "postgres"), allow(dead_code))]
pub(crate) fn ext_code(bytes: &[u8]) -> Option<i8> {
    let at = match *bytes.first()? {
        FIXEXT1..=FIXEXT16 => 1,
        EXT8 => 2,
        EXT16 => 3,
        EXT32 => 5,
        _ => return None,
    };
    bytes.get(at).map(|c| i8::from_ne_bytes([*c]))
}

/// Whether a marker starts an ext item (fixext or ext8/16/32).
pub(crate) fn is_ext(marker: u8) -> bool {
    matches!(marker, EXT8..=EXT32 | FIXEXT1..=FIXEXT16)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The table against the msgpack specification's own list, written out here
    /// independently (spec.md, "Overview" table).
    #[test]
    fn markers_are_the_specifications() {
        let spec: [(u8, u8); 36] = [
            (POS_FIXINT_MAX, 0x7f),
            (FIXMAP, 0x80),
            (FIXMAP_MAX, 0x8f),
            (FIXARRAY, 0x90),
            (FIXARRAY_MAX, 0x9f),
            (FIXSTR, 0xa0),
            (FIXSTR_MAX, 0xbf),
            (NIL, 0xc0),
            (RESERVED, 0xc1),
            (FALSE, 0xc2),
            (TRUE, 0xc3),
            (BIN8, 0xc4),
            (BIN16, 0xc5),
            (BIN32, 0xc6),
            (EXT8, 0xc7),
            (EXT16, 0xc8),
            (EXT32, 0xc9),
            (F32, 0xca),
            (F64, 0xcb),
            (U8, 0xcc),
            (U16, 0xcd),
            (U32, 0xce),
            (U64, 0xcf),
            (I8, 0xd0),
            (I16, 0xd1),
            (I32, 0xd2),
            (I64, 0xd3),
            (FIXEXT1, 0xd4),
            (FIXEXT2, 0xd5),
            (FIXEXT4, 0xd6),
            (FIXEXT8, 0xd7),
            (FIXEXT16, 0xd8),
            (STR8, 0xd9),
            (STR16, 0xda),
            (STR32, 0xdb),
            (NEG_FIXINT, 0xe0),
        ];
        for (ours, theirs) in spec {
            assert_eq!(ours, theirs);
        }
        assert_eq!([ARRAY16, ARRAY32, MAP16, MAP32], [0xdc, 0xdd, 0xde, 0xdf]);
    }

    /// Every byte described as the msgpack specification's format families.
    #[test]
    fn describe_names_each_family() {
        let expect = |b: u8| match b {
            0x00..=0x7f | 0xcc..=0xd3 | 0xe0..=0xff => "int",
            0x80..=0x8f | 0xde | 0xdf => "map",
            0x90..=0x9f | 0xdc | 0xdd => "array",
            0xa0..=0xbf | 0xd9..=0xdb => "str",
            0xc0 => "nil",
            0xc1 => "reserved byte",
            0xc2 | 0xc3 => "bool",
            0xc4..=0xc6 => "bin",
            0xc7..=0xc9 | 0xd4..=0xd8 => "ext",
            0xca | 0xcb => "float",
        };
        for b in 0..=u8::MAX {
            assert_eq!(describe(b), expect(b), "{b:#04x}");
            assert_eq!(is_ext(b), expect(b) == "ext", "{b:#04x}");
        }
    }

    #[test]
    fn bin_header_reads_each_width() {
        assert_eq!(bin_header(b"\xc4\x03abc"), Some((2, 3)));
        assert_eq!(bin_header(b"\xc5\x01\x00"), Some((3, 256)));
        assert_eq!(bin_header(b"\xc6\x00\x01\x00\x00"), Some((5, 65536)));
        assert_eq!(bin_header(b"\xc5\x01"), None);
        assert_eq!(bin_header(b"\xa1a"), None);
    }
}
