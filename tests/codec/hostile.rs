//! Hostile input: every malformed document gets its typed error at the right byte
//! offset, nothing declared-but-absent is allocated, and no depth overflows a stack.

use crate::small_stack::on_small_stack;
use langgraph_codec::msgpack::{self, DecodeOptions};
use langgraph_codec::{msgpack::DecodeErrorKind, view, JsonPlusSerializer, Serializer, Value};

fn kind_at(bytes: &[u8]) -> (DecodeErrorKind, usize) {
    let e = msgpack::decode(bytes).expect_err("must be refused");
    (e.kind().clone(), e.offset())
}

#[test]
fn truncated_input_names_the_offset() {
    // str8 of 40 bytes with only 2 present: the header is fine, the body is short.
    assert!(matches!(
        kind_at(b"\xd9\x28ab"),
        (
            DecodeErrorKind::LengthExceedsInput {
                declared: 40,
                remaining: 2
            },
            0
        )
    ));
    // uint32 missing its last byte: truncated right after the marker.
    assert_eq!(
        kind_at(b"\xce\x00\x01\x00"),
        (DecodeErrorKind::Truncated, 1)
    );
    // An array of 2 whose second item is missing (the 3 bytes left could have held two
    // items, so the length check passes and the read runs out at byte 4).
    assert_eq!(
        kind_at(b"\x92\xcd\x01\x00"),
        (DecodeErrorKind::Truncated, 4)
    );
    // An array of 2 with 1 byte left is refused up front.
    assert_eq!(
        kind_at(b"\x92\x01"),
        (
            DecodeErrorKind::LengthExceedsInput {
                declared: 2,
                remaining: 1
            },
            0
        )
    );
    // Empty input.
    assert_eq!(kind_at(b""), (DecodeErrorKind::Truncated, 0));
}

#[test]
fn invalid_utf8_points_at_the_bad_byte() {
    // fixstr of 3: 'a', then 0xff (never valid in UTF-8) at byte 2.
    assert_eq!(kind_at(b"\xa3a\xffb"), (DecodeErrorKind::InvalidUtf8, 2));
}

#[test]
fn reserved_marker_is_refused() {
    assert_eq!(
        kind_at(b"\x91\xc1"),
        (DecodeErrorKind::ReservedByte(0xc1), 1)
    );
}

#[test]
fn trailing_bytes_are_corruption() {
    assert_eq!(
        kind_at(b"\x01\x02\x03"),
        (DecodeErrorKind::TrailingBytes { count: 2 }, 1)
    );
}

#[test]
fn huge_declared_lengths_are_refused_before_allocating() {
    // Each is ≤ 20 bytes and declares ~4 GiB.
    let cases: [&[u8]; 5] = [
        b"\xdd\xff\xff\xff\xff\x01",     // array32
        b"\xdf\xff\xff\xff\xff\x01\x01", // map32
        b"\xdb\xff\xff\xff\xffabc",      // str32
        b"\xc6\xff\xff\xff\xffabc",      // bin32
        b"\xc9\xff\xff\xff\xff\x07\x01", // ext32 code 7
    ];
    for bytes in cases {
        match kind_at(bytes) {
            (DecodeErrorKind::LengthExceedsInput { declared, .. }, 0) => {
                assert_eq!(declared, u64::from(u32::MAX))
            }
            other => panic!("{bytes:02x?}: {other:?}"),
        }
    }
    // A map needs two bytes per entry: 3 entries in 5 bytes cannot fit.
    assert!(matches!(
        kind_at(b"\x83\x01\x01\x01\x01\x01"),
        (
            DecodeErrorKind::LengthExceedsInput {
                declared: 3,
                remaining: 5
            },
            0
        )
    ));
}

fn nested(prefix: &[u8], depth: usize, leaf: &[u8]) -> Vec<u8> {
    let mut v = Vec::with_capacity(prefix.len() * depth + leaf.len());
    for _ in 0..depth {
        v.extend_from_slice(prefix);
    }
    v.extend_from_slice(leaf);
    v
}

/// A chain of `depth` ext-7 delta snapshots around `1`, each header in the shortest
/// form the msgpack spec gives for its payload length (fixext 1/2/4/8/16, else ext8,
/// ext16, ext32).
fn nested_ext7(depth: usize) -> Vec<u8> {
    let mut v = vec![0x01u8];
    for _ in 0..depth {
        let n = v.len();
        let mut outer = match n {
            1 => vec![0xd4],
            2 => vec![0xd5],
            4 => vec![0xd6],
            8 => vec![0xd7],
            16 => vec![0xd8],
            0..=0xff => vec![0xc7, n as u8],
            0x100..=0xffff => [&[0xc8u8][..], &(n as u16).to_be_bytes()].concat(),
            _ => [&[0xc9u8][..], &(n as u32).to_be_bytes()].concat(),
        };
        outer.push(7);
        outer.extend_from_slice(&v);
        v = outer;
    }
    v
}

#[test]
fn depth_limit_is_1024_by_default_and_configurable() {
    let ok = nested(b"\x91", 1024, b"\x01");
    assert!(msgpack::decode(&ok).is_ok());
    let deep = nested(b"\x91", 1025, b"\x01");
    assert_eq!(
        kind_at(&deep),
        (DecodeErrorKind::DepthLimit { limit: 1024 }, 1024)
    );
    let opts = DecodeOptions::new().max_depth(10);
    assert!(opts.decode(&nested(b"\x91", 10, b"\x01")).is_ok());
    let e = opts
        .decode(&nested(b"\x91", 11, b"\x01"))
        .expect_err("too deep");
    assert_eq!(e.kind(), &DecodeErrorKind::DepthLimit { limit: 10 });
}

#[test]
fn maps_and_ext7_are_depth_limited_too() {
    // {1: {1: ... }}: each level is 81 01.
    let deep_map = nested(b"\x81\x01", 1025, b"\x01");
    assert!(matches!(
        kind_at(&deep_map).0,
        DecodeErrorKind::DepthLimit { limit: 1024 }
    ));
    // Each ext payload is a document of its own (as Python reads it), so a chain of
    // envelopes is bounded by the total limit, not by the per-document one.
    assert!(msgpack::decode(&nested_ext7(1025)).is_ok());
    let total = DecodeOptions::new().max_total_depth(1024);
    assert!(total.decode(&nested_ext7(1024)).is_ok());
    assert_eq!(
        total
            .decode(&nested_ext7(1025))
            .expect_err("past the total limit")
            .kind(),
        &DecodeErrorKind::DepthLimit { limit: 1024 }
    );
    let json = nested(b"[", 100_000, b"");
    let e = JsonPlusSerializer::new()
        .loads_typed("json", &json)
        .expect_err("too deep");
    assert_eq!(e.kind().as_str(), "invalid_json");
    assert!(e.to_string().contains("1024"), "{e}");
}

#[test]
fn one_hundred_thousand_deep_array_is_an_error_not_an_overflow() {
    let err = on_small_stack(|| {
        let bytes = nested(b"\x91", 100_000, b"\x01");
        msgpack::decode(&bytes)
            .expect_err("too deep")
            .kind()
            .clone()
    });
    assert_eq!(err, DecodeErrorKind::DepthLimit { limit: 1024 });
    let unlimited = on_small_stack(|| {
        let bytes = nested(b"\x91", 100_000, b"\x01");
        let v = DecodeOptions::new()
            .max_depth(usize::MAX)
            .decode(&bytes)
            .expect("decodes with no limit");
        let depth =
            std::iter::successors(Some(&v), |v| v.as_array().and_then(|a| a.first())).count();
        // Drop is stack-safe too (each level runs under the stack guard).
        drop(v);
        depth
    });
    assert_eq!(unlimited, 100_001);
}

#[test]
fn the_deepest_accepted_value_encodes_and_views_on_a_small_stack() {
    on_small_stack(|| {
        for bytes in [
            nested(b"\x91", 1024, b"\x01"),
            nested(b"\x81\x01", 1024, b"\x01"),
            nested_ext7(1024),
            // Objects open two levels each: chains starting at even and at odd depth.
            nested_objects(512),
            [&b"\x91"[..], &nested_objects(511)].concat(),
        ] {
            let v = msgpack::decode(&bytes).expect("decodes");
            assert_eq!(msgpack::encode(&v).expect("encodes"), bytes);
            let text = view::to_string_pretty(&v);
            let back = view::from_str(&text).expect("view parses");
            assert_eq!(msgpack::encode(&back).expect("encodes"), bytes);
            let json = langgraph_codec::json::write(&v);
            assert_eq!(json.is_ok(), bytes[..2] == [0x91, 0x91]);
            drop(back);
            drop(v);
        }
    });
}

/// Clone, ==, Debug, Hash, serde and drop of the deepest values the
/// decoders accept, on a 64 KiB thread (these walks recurse; each level runs under the
/// stack guard). Also far deeper than the default limit.
#[test]
fn deepest_values_clone_compare_format_hash_serialize_and_drop_on_a_small_stack() {
    on_small_stack(|| {
        let unlimited = DecodeOptions::new().max_depth(usize::MAX);
        for (bytes, default_accepts) in [
            (nested(b"\x91", 1024, b"\x01"), true),
            (nested(b"\x81\x01", 1024, b"\x01"), true),
            (nested_ext7(1024), true),
            (nested_objects(512), true),
            (nested(b"\x91", 20_000, b"\x01"), false),
            (nested_objects(10_000), false),
        ] {
            let v = unlimited.decode(&bytes).expect("decodes");
            let copy = v.clone();
            assert!(copy == v);
            let text = format!("{v:?}");
            assert!(text.len() > 1024);
            use std::hash::{Hash, Hasher};
            let mut h = std::collections::hash_map::DefaultHasher::new();
            v.hash(&mut h);
            let _ = h.finish();
            // serde (through serde_json; ext values become their msgpack bytes).
            // Past the default limit an ext value's msgpack form is a depth error.
            match serde_json::to_string(&v) {
                Ok(json) => assert!(json.len() > 1024),
                Err(e) => assert!(!default_accepts, "{e}"),
            }
            drop(copy);
            drop(v);
        }
        // A json row at the depth limit, revived, cloned and dropped.
        let text = format!("{}1{}", "[".repeat(1024), "]".repeat(1024));
        let v = JsonPlusSerializer::new()
            .loads_typed("json", text.as_bytes())
            .expect("reads");
        assert!(v.clone() == v);
        drop(v);
    });
}

#[test]
fn non_canonical_forms_are_refused_unless_allowed() {
    // 5 as uint16, "a" as str8, [] as array16: all valid msgpack Python never writes.
    for (bytes, canonical) in [
        (&b"\xcd\x00\x05"[..], &b"\x05"[..]),
        (b"\xd9\x01a", b"\xa1a"),
        (b"\xdc\x00\x00", b"\x90"),
        (b"\xd0\x05", b"\x05"),
        (b"\xc7\x01\x63\x00", b"\xd4\x63\x00"),
    ] {
        assert!(
            matches!(kind_at(bytes), (DecodeErrorKind::NonCanonical { .. }, 0)),
            "{bytes:02x?}"
        );
        let v = DecodeOptions::new()
            .allow_non_canonical(true)
            .decode(bytes)
            .expect("liberal mode reads it");
        assert_eq!(msgpack::encode(&v).expect("encodes"), canonical);
    }
}

#[test]
fn a_non_canonical_ext_payload_stays_raw_and_byte_identical() {
    // ext 0 whose tuple header is array16 instead of fixarray: kept raw.
    let payload = b"\xdc\x00\x03\xa1m\xa1n\x01";
    // 8 payload bytes: fixext8 (d7) is the canonical header.
    let mut bytes = vec![0xd7, 0x00];
    bytes.extend_from_slice(payload);
    let v = msgpack::decode(&bytes).expect("decodes");
    assert!(matches!(&v, Value::Ext(e) if e.code == 0 && &e.data[..] == payload));
    assert_eq!(msgpack::encode(&v).expect("encodes"), bytes);
}

#[test]
fn errors_inside_an_ext_payload_keep_the_ext_raw_but_depth_is_still_enforced() {
    // ext 5 around a truncated array: raw, nothing lost.
    let bytes = b"\xd5\x05\x93\x01";
    assert!(matches!(&msgpack::decode(bytes), Ok(Value::Ext(e)) if e.code == 5));
    // The depth limits inside payloads are an error, not a raw fallback: per document
    // (an array nested 4 deep inside one payload)…
    let opts = DecodeOptions::new().max_depth(3);
    let inner = nested(b"\x91", 4, b"\x01");
    let bytes = [&[0xc7, inner.len() as u8, 7][..], &inner].concat();
    let e = opts.decode(&bytes).expect_err("too deep");
    assert_eq!(e.kind(), &DecodeErrorKind::DepthLimit { limit: 3 });
    // …and in total.
    let opts = DecodeOptions::new().max_total_depth(3);
    let e = opts.decode(&nested_ext7(5)).expect_err("too deep");
    assert_eq!(e.kind(), &DecodeErrorKind::DepthLimit { limit: 3 });
}

/// `depth` objects nested through their `arg`: ext 5 around the tuple
/// `("m", "n", inner)`, each header in its shortest form. Two levels per object (the
/// ext payload and its tuple array).
fn nested_objects(depth: usize) -> Vec<u8> {
    nested_objects_with(depth, b"\x93", b"")
}

/// Like [`nested_objects`], with the tuple's array header and what follows `inner`
/// chosen by the caller (e.g. a 4-tuple whose method is not a string).
fn nested_objects_with(depth: usize, tuple_header: &[u8], after_arg: &[u8]) -> Vec<u8> {
    let mut v = vec![0x01u8];
    for _ in 0..depth {
        let mut payload = tuple_header.to_vec();
        payload.extend_from_slice(b"\xa1m\xa1n");
        payload.extend_from_slice(&v);
        payload.extend_from_slice(after_arg);
        let n = payload.len();
        let mut outer = match n {
            1 => vec![0xd4],
            2 => vec![0xd5],
            4 => vec![0xd6],
            8 => vec![0xd7],
            16 => vec![0xd8],
            0..=0xff => vec![0xc7, n as u8],
            0x100..=0xffff => [&[0xc8u8][..], &(n as u16).to_be_bytes()].concat(),
            _ => [&[0xc9u8][..], &(n as u32).to_be_bytes()].concat(),
        };
        outer.push(5);
        outer.extend_from_slice(&payload);
        v = outer;
    }
    v
}

#[test]
fn a_four_tuple_envelope_needs_a_string_method() {
    // ("m", "n", 1, "fromisoformat") is an object with a method; with nil or an int as
    // the fourth item it is not what Python writes, so it stays raw, byte for byte.
    let ok = nested_objects_with(1, b"\x94", b"\xa1f");
    let v = msgpack::decode(&ok).expect("decodes");
    let Value::Object(obj) = &v else {
        panic!("a string method makes an object");
    };
    assert_eq!(obj.method.as_deref(), Some("f"));
    assert_eq!(msgpack::encode(&v).expect("encodes"), ok);
    for bad_method in [&b"\xc0"[..], b"\x07"] {
        let bytes = nested_objects_with(1, b"\x94", bad_method);
        let payload = [&b"\x94\xa1m\xa1n\x01"[..], bad_method].concat();
        let v = msgpack::decode(&bytes).expect("decodes");
        assert!(
            matches!(&v, Value::Ext(raw) if raw.code == 5 && raw.data[..] == payload[..]),
            "{v:?}"
        );
        assert_eq!(msgpack::encode(&v).expect("encodes"), bytes);
    }
}

#[test]
fn nested_malformed_envelopes_are_read_once() {
    // 500 envelopes whose method is an int: each is read once and kept raw. A decoder
    // that re-read a payload after finding it malformed would take 2^500 steps here.
    let bytes = nested_objects_with(500, b"\x94", b"\x07");
    let v = msgpack::decode(&bytes).expect("decodes");
    assert!(matches!(&v, Value::Ext(raw) if raw.code == 5));
    assert_eq!(msgpack::encode(&v).expect("encodes"), bytes);
}

#[test]
fn nested_objects_are_limited_per_document_and_in_total_on_both_sides() {
    // Python packs each envelope's payload separately: 2,000 nested objects (4,000
    // levels in all, 1 per payload) are read and written back byte for byte.
    let ok = nested_objects(2000);
    let v = msgpack::decode(&ok).expect("2,000 nested objects decode");
    assert_eq!(msgpack::encode(&v).expect("and encode"), ok);
    // The total limit: 65,536 objects are 131,072 levels, one more is refused on
    // both sides.
    let at_limit = nested_objects(65_536);
    let v = msgpack::decode(&at_limit).expect("at the total limit");
    assert_eq!(msgpack::encode(&v).expect("encodes"), at_limit);
    assert!(matches!(
        kind_at(&nested_objects(65_537)).0,
        DecodeErrorKind::DepthLimit { limit: 131_072 }
    ));
    let too_deep = langgraph_codec::Value::object(langgraph_codec::PyObject::new(
        langgraph_codec::ObjectKind::PydanticV2,
        "m",
        "n",
        v,
    ));
    assert!(matches!(
        msgpack::encode(&too_deep),
        Err(langgraph_codec::msgpack::EncodeError::DepthLimit { limit: 131_072 })
    ));
    // Within one payload the per-document limit holds: 1,023 arrays inside the tuple
    // (1,024 levels) are read, 1,024 are refused, and the encoder agrees.
    let payload = |n: usize| {
        let inner = nested(b"\x91", n, b"\x01");
        let tuple = [&b"\x93\xa1m\xa1n"[..], &inner].concat();
        let len = (tuple.len() as u16).to_be_bytes();
        [&[0xc8, len[0], len[1], 5][..], &tuple].concat()
    };
    let v = msgpack::decode(&payload(1023)).expect("1,024 levels in one payload");
    assert_eq!(msgpack::encode(&v).expect("encodes"), payload(1023));
    assert!(matches!(
        kind_at(&payload(1024)).0,
        DecodeErrorKind::DepthLimit { limit: 1024 }
    ));
    let mut deeper = v.clone();
    let Value::Object(obj) = &mut deeper else {
        panic!("an object");
    };
    obj.arg = Value::Array(vec![obj.arg.clone()]);
    assert!(matches!(
        msgpack::encode(&deeper),
        Err(langgraph_codec::msgpack::EncodeError::DepthLimit { limit: 1024 })
    ));
}

#[test]
fn mixed_nesting_fails_at_the_opener_past_the_limit() {
    // Levels alternate {1: x} and [x]; the 1,025th opener is refused at its own offset.
    let mut bytes = Vec::new();
    let mut offset_of_1025th = 0;
    for level in 1..=1025 {
        if level == 1025 {
            offset_of_1025th = bytes.len();
        }
        if level % 2 == 0 {
            bytes.extend_from_slice(b"\x91");
        } else {
            bytes.extend_from_slice(b"\x81\x01");
        }
    }
    bytes.push(0x01);
    assert_eq!(
        kind_at(&bytes),
        (
            DecodeErrorKind::DepthLimit { limit: 1024 },
            offset_of_1025th
        )
    );
    // One level less decodes.
    let mut ok = Vec::new();
    for level in 1..=1024 {
        ok.extend_from_slice(if level % 2 == 0 { b"\x91" } else { b"\x81\x01" });
    }
    ok.push(0x01);
    assert!(msgpack::decode(&ok).is_ok());
}

#[test]
fn json_rows_are_refused_exactly_past_the_depth_limit() {
    let serde = JsonPlusSerializer::new();
    let arrays = |n: usize| format!("{}{}", "[".repeat(n), "]".repeat(n));
    let objects = |n: usize| format!("{}1{}", r#"{"a":"#.repeat(n), "}".repeat(n));
    for (what, text) in [
        ("arrays", arrays as fn(usize) -> String),
        ("objects", objects),
    ] {
        assert!(
            serde.loads_typed("json", text(1024).as_bytes()).is_ok(),
            "{what}: 1,024 levels are read"
        );
        let e = serde
            .loads_typed("json", text(1025).as_bytes())
            .expect_err("1,025 levels are refused");
        assert_eq!(e.kind().as_str(), "invalid_json", "{what}");
        assert!(e.to_string().contains("1024"), "{what}: {e}");
    }
    // A configured limit applies to json rows too.
    let strict = JsonPlusSerializer::with_decode_options(DecodeOptions::new().max_depth(4));
    assert!(strict.loads_typed("json", arrays(4).as_bytes()).is_ok());
    assert!(strict.loads_typed("json", arrays(5).as_bytes()).is_err());
}

#[test]
fn deep_views_are_refused_not_overflowed() {
    let err = on_small_stack(|| view::from_str(&"[".repeat(100_000)).is_err());
    assert!(err);
    // A view deeper than any value the codec accepts is refused even when well formed.
    let text = format!("{}1{}", "[".repeat(5000), "]".repeat(5000));
    assert!(on_small_stack(move || view::from_str(&text).is_err()));
}

/// The pretty view of a deep value is bounded by a fixed multiple of
/// its one-line view (indentation is capped), not by depth × size. A 1,000-level
/// nesting around a 20,000-element array used to indent every element by 2,000 spaces
/// (40 MB; a 1 MB row nesting 1,023 levels became gigabytes).
#[test]
fn pretty_views_of_deep_values_stay_small() {
    let mut v = Value::from(vec![Value::from(1i64); 20_000]);
    for _ in 0..1_000 {
        v = Value::from(vec![v]);
    }
    let compact = view::to_string(&v).expect("a view").len();
    let pretty = view::to_string_pretty(&v);
    assert!(
        pretty.len() <= 2 * (view::PRETTY_INDENT_LEVELS + 1) * compact,
        "{} bytes pretty for {compact} compact",
        pretty.len()
    );
    // Still the same view, and the top levels are indented as serde_json does.
    assert_eq!(view::from_str(&pretty).ok(), Some(v.clone()));
    assert!(pretty.starts_with("[\n  [\n    [\n"));
    // With a limit: a typed error instead of a big string.
    let e = view::to_string_pretty_limited(&v, compact).expect_err("over the limit");
    assert_eq!(e.path(), "$");
    assert!(view::to_string_pretty_limited(&v, pretty.len()).is_ok());
}

#[test]
fn shallow_pretty_views_are_laid_out_as_serde_json_does() {
    let v = view::from_str(
        r#"{"a": [1, [], {}, {"b": [true, null, "x"]}], "c": {"$bytes": "AAE="}, "d": {}}"#,
    )
    .expect("view");
    let ours = view::to_string_pretty(&v);
    let theirs = serde_json::to_string_pretty(&view::View(&v)).expect("serde_json");
    assert_eq!(ours, theirs);
}
