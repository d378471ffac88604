//! The codec at its boundaries: every msgpack size boundary both ways (the header
//! Python writes, strict and liberal reading of one form too long), ext8 at the fixext
//! sizes, and the depth limits (siblings, object payloads, delta snapshots, numpy
//! arrays, the shared-buffer reader). Expected values come from the msgpack
//! specification, Python or first principles, never from the code under test.

use bytes::Bytes;
use langgraph_codec::msgpack::{self, DecodeOptions};
use langgraph_codec::{msgpack::DecodeErrorKind, JsonPlusSerializer, RawExt, Serializer, Value};

// ---------------------------------------------------------------------------------------
// msgpack: every size boundary, both ways.
//
// The header bytes below are the msgpack specification's shortest forms; each row was
// checked against `ormsgpack.packb` (langgraph-checkpoint's writer) by hand:
// `ormsgpack.packb(128).hex() == "cc80"`, `packb("a" * 32)[:2] == b"\xd9\x20"`,
// `packb(ormsgpack.Ext(42, b"a" * 17))[:3] == b"\xc7\x11\x2a"`, and so on.
// ---------------------------------------------------------------------------------------

/// A value of each kind and size, with the header Python writes for it.
fn boundary_rows() -> Vec<(String, Value, Vec<u8>)> {
    let mut rows: Vec<(String, Value, Vec<u8>)> = Vec::new();
    let ints: [(i128, &[u8]); 19] = [
        (127, b"\x7f"),
        (128, b"\xcc\x80"),
        (255, b"\xcc\xff"),
        (256, b"\xcd\x01\x00"),
        (65535, b"\xcd\xff\xff"),
        (65536, b"\xce\x00\x01\x00\x00"),
        (4_294_967_295, b"\xce\xff\xff\xff\xff"),
        (4_294_967_296, b"\xcf\x00\x00\x00\x01\x00\x00\x00\x00"),
        (
            18_446_744_073_709_551_615,
            b"\xcf\xff\xff\xff\xff\xff\xff\xff\xff",
        ),
        (-1, b"\xff"),
        (-32, b"\xe0"),
        (-33, b"\xd0\xdf"),
        (-128, b"\xd0\x80"),
        (-129, b"\xd1\xff\x7f"),
        (-32768, b"\xd1\x80\x00"),
        (-32769, b"\xd2\xff\xff\x7f\xff"),
        (-2_147_483_648, b"\xd2\x80\x00\x00\x00"),
        (-2_147_483_649, b"\xd3\xff\xff\xff\xff\x7f\xff\xff\xff"),
        (
            -9_223_372_036_854_775_808,
            b"\xd3\x80\x00\x00\x00\x00\x00\x00\x00",
        ),
    ];
    for (n, bytes) in ints {
        let v = match u64::try_from(n) {
            Ok(u) => Value::from(u),
            Err(_) => Value::from(i64::try_from(n).expect("in i64 range")),
        };
        rows.push((format!("int {n}"), v, bytes.to_vec()));
    }
    let str_headers: [(usize, &[u8]); 6] = [
        (31, b"\xbf"),
        (32, b"\xd9\x20"),
        (255, b"\xd9\xff"),
        (256, b"\xda\x01\x00"),
        (65535, b"\xda\xff\xff"),
        (65536, b"\xdb\x00\x01\x00\x00"),
    ];
    for (n, header) in str_headers {
        let text = "a".repeat(n);
        rows.push((
            format!("str of {n}"),
            Value::from(text.as_str()),
            [header, text.as_bytes()].concat(),
        ));
    }
    let bin_headers: [(usize, &[u8]); 5] = [
        (0, b"\xc4\x00"),
        (255, b"\xc4\xff"),
        (256, b"\xc5\x01\x00"),
        (65535, b"\xc5\xff\xff"),
        (65536, b"\xc6\x00\x01\x00\x00"),
    ];
    for (n, header) in bin_headers {
        let data = vec![b'a'; n];
        rows.push((
            format!("bin of {n}"),
            Value::Bin(Bytes::from(data.clone())),
            [header, &data].concat(),
        ));
    }
    let array_headers: [(usize, &[u8]); 4] = [
        (15, b"\x9f"),
        (16, b"\xdc\x00\x10"),
        (65535, b"\xdc\xff\xff"),
        (65536, b"\xdd\x00\x01\x00\x00"),
    ];
    for (n, header) in array_headers {
        rows.push((
            format!("array of {n}"),
            Value::Array(vec![Value::Nil; n]),
            [header, &vec![0xc0; n]].concat(),
        ));
    }
    let map_headers: [(usize, &[u8]); 4] = [
        (15, b"\x8f"),
        (16, b"\xde\x00\x10"),
        (65535, b"\xde\xff\xff"),
        (65536, b"\xdf\x00\x01\x00\x00"),
    ];
    for (n, header) in map_headers {
        rows.push((
            format!("map of {n}"),
            Value::Map(vec![(Value::Nil, Value::Nil); n]),
            [header, &vec![0xc0; 2 * n]].concat(),
        ));
    }
    // Ext code 42 (not one LangGraph reads, so it stays a raw ext).
    let ext_headers: [(usize, &[u8]); 12] = [
        (0, b"\xc7\x00\x2a"),
        (1, b"\xd4\x2a"),
        (2, b"\xd5\x2a"),
        (3, b"\xc7\x03\x2a"),
        (4, b"\xd6\x2a"),
        (8, b"\xd7\x2a"),
        (16, b"\xd8\x2a"),
        (17, b"\xc7\x11\x2a"),
        (255, b"\xc7\xff\x2a"),
        (256, b"\xc8\x01\x00\x2a"),
        (65535, b"\xc8\xff\xff\x2a"),
        (65536, b"\xc9\x00\x01\x00\x00\x2a"),
    ];
    for (n, header) in ext_headers {
        let data = vec![b'a'; n];
        rows.push((
            format!("ext of {n}"),
            Value::from(RawExt {
                code: 42,
                data: Bytes::from(data.clone()),
            }),
            [header, &data].concat(),
        ));
    }
    rows
}

#[test]
fn every_size_boundary_encodes_to_the_header_python_writes() {
    for (what, value, bytes) in boundary_rows() {
        let encoded = msgpack::encode(&value).expect("encodes");
        assert!(
            encoded == bytes,
            "{what}: {:02x?}",
            &encoded[..8.min(encoded.len())]
        );
        // The per-form writers give the same bytes as the value encoder.
        let mut out = Vec::new();
        msgpack::encode_into(&value, &mut out).expect("encodes");
        assert!(out == bytes, "{what} (encode_into)");
    }
}

#[test]
fn every_size_boundary_decodes_strictly_to_its_value() {
    for (what, value, bytes) in boundary_rows() {
        let decoded = msgpack::decode(&bytes).unwrap_or_else(|e| panic!("{what}: {e}"));
        assert!(decoded == value, "{what}");
        let shared = msgpack::decode_bytes(&Bytes::from(bytes)).expect("decodes");
        assert!(shared == value, "{what} (shared buffer)");
    }
}

/// The largest value each longer form could hold that a shorter form holds too: valid
/// msgpack, but never what Python writes, so strict decoding refuses it at offset 0.
fn one_form_too_long() -> Vec<(&'static str, Vec<u8>, Value)> {
    let a = |n: usize| vec![b'a'; n];
    let str_of = |n: usize| Value::from("a".repeat(n).as_str());
    let bin_of = |n: usize| Value::Bin(Bytes::from(vec![b'a'; n]));
    let ext_of = |n: usize| {
        Value::from(RawExt {
            code: 42,
            data: Bytes::from(vec![b'a'; n]),
        })
    };
    vec![
        ("uint8 127", b"\xcc\x7f".to_vec(), Value::from(127u64)),
        ("uint16 255", b"\xcd\x00\xff".to_vec(), Value::from(255u64)),
        (
            "uint32 65535",
            b"\xce\x00\x00\xff\xff".to_vec(),
            Value::from(65535u64),
        ),
        (
            "uint64 2^32-1",
            b"\xcf\x00\x00\x00\x00\xff\xff\xff\xff".to_vec(),
            Value::from(4_294_967_295u64),
        ),
        ("int8 -32", b"\xd0\xe0".to_vec(), Value::from(-32i64)),
        ("int16 -128", b"\xd1\xff\x80".to_vec(), Value::from(-128i64)),
        (
            "int32 -32768",
            b"\xd2\xff\xff\x80\x00".to_vec(),
            Value::from(-32768i64),
        ),
        (
            "int64 -2^31",
            b"\xd3\xff\xff\xff\xff\x80\x00\x00\x00".to_vec(),
            Value::from(-2_147_483_648i64),
        ),
        (
            "str8 of 31",
            [&b"\xd9\x1f"[..], &a(31)].concat(),
            str_of(31),
        ),
        (
            "str16 of 255",
            [&b"\xda\x00\xff"[..], &a(255)].concat(),
            str_of(255),
        ),
        (
            "str32 of 65535",
            [&b"\xdb\x00\x00\xff\xff"[..], &a(65535)].concat(),
            str_of(65535),
        ),
        (
            "bin16 of 255",
            [&b"\xc5\x00\xff"[..], &a(255)].concat(),
            bin_of(255),
        ),
        (
            "bin32 of 65535",
            [&b"\xc6\x00\x00\xff\xff"[..], &a(65535)].concat(),
            bin_of(65535),
        ),
        (
            "array16 of 15",
            [&b"\xdc\x00\x0f"[..], &[0xc0; 15]].concat(),
            Value::Array(vec![Value::Nil; 15]),
        ),
        (
            "array32 of 65535",
            [&b"\xdd\x00\x00\xff\xff"[..], &vec![0xc0; 65535]].concat(),
            Value::Array(vec![Value::Nil; 65535]),
        ),
        (
            "map16 of 15",
            [&b"\xde\x00\x0f"[..], &[0xc0; 30]].concat(),
            Value::Map(vec![(Value::Nil, Value::Nil); 15]),
        ),
        (
            "map32 of 65535",
            [&b"\xdf\x00\x00\xff\xff"[..], &vec![0xc0; 2 * 65535]].concat(),
            Value::Map(vec![(Value::Nil, Value::Nil); 65535]),
        ),
        (
            "ext8 of 16",
            [&b"\xc7\x10\x2a"[..], &a(16)].concat(),
            ext_of(16),
        ),
        (
            "ext16 of 255",
            [&b"\xc8\x00\xff\x2a"[..], &a(255)].concat(),
            ext_of(255),
        ),
        (
            "ext32 of 65535",
            [&b"\xc9\x00\x00\xff\xff\x2a"[..], &a(65535)].concat(),
            ext_of(65535),
        ),
    ]
}

#[test]
fn one_form_too_long_is_refused_strictly_and_read_liberally() {
    let liberal = DecodeOptions::new().allow_non_canonical(true);
    for (what, bytes, value) in one_form_too_long() {
        let e = msgpack::decode(&bytes).expect_err(what);
        assert!(
            matches!(e.kind(), DecodeErrorKind::NonCanonical { .. }) && e.offset() == 0,
            "{what}: {e}"
        );
        let read = liberal
            .decode(&bytes)
            .unwrap_or_else(|e| panic!("{what}: {e}"));
        assert!(read == value, "{what}");
    }
}

// ---- ext8 holding exactly 16 bytes -------------------------------------------------
// First test: tests/codec/hostile.rs `non_canonical_forms_are_refused_unless_allowed`.

/// The msgpack spec's shortest ext header: fixext for 1, 2, 4, 8, 16 bytes, ext8 for
/// the other lengths up to 255. ormsgpack writes the shortest, so an ext8 of a fixext
/// size is non-canonical, and every other ext8 is read.
#[test]
fn ext8_is_refused_exactly_at_the_fixext_sizes() {
    for n in 0usize..=40 {
        let mut bytes = vec![0xc7, n as u8, 0x63];
        bytes.extend(std::iter::repeat_n(0xaa, n));
        let got = msgpack::decode(&bytes);
        if matches!(n, 1 | 2 | 4 | 8 | 16) {
            let e = got.expect_err("fixext size in an ext8");
            assert!(
                matches!(e.kind(), DecodeErrorKind::NonCanonical { .. }) && e.offset() == 0,
                "n={n}: {e:?}"
            );
        } else {
            let v = got.unwrap_or_else(|e| panic!("n={n}: {e:?}"));
            assert_eq!(msgpack::encode(&v).expect("encodes"), bytes, "n={n}");
        }
    }
}

/// Through the serializer and the typed layer: an ext8 of 16 bytes inside a value is
/// refused, the fixext16 of the same payload is read.
#[test]
fn an_ext8_of_16_bytes_is_refused_by_serializer_and_typed_reads() {
    let payload = [0x55u8; 16];
    // [ext] as a one-element array, so the ext is not at offset 0.
    let mut ext8 = vec![0x91, 0xc7, 16, 0x63];
    ext8.extend_from_slice(&payload);
    let mut fixext16 = vec![0x91, 0xd8, 0x63];
    fixext16.extend_from_slice(&payload);
    let serde = JsonPlusSerializer::new();
    assert!(serde.loads_typed("msgpack", &fixext16).is_ok());
    assert!(serde.loads_typed("msgpack", &ext8).is_err());
    assert!(langgraph_codec::typed::from_slice::<Value>(&fixext16).is_ok());
    assert!(langgraph_codec::typed::from_slice::<Value>(&ext8).is_err());
}

// ---------------------------------------------------------------------------------------
// depth limits
// ---------------------------------------------------------------------------------------

/// `levels` arrays nested one in another around `1`.
fn nested_arrays(levels: usize) -> Value {
    (0..levels).fold(Value::from(1u64), |inner, _| Value::Array(vec![inner]))
}

#[test]
fn sibling_containers_do_not_add_up_to_the_depth_limit() {
    // Depth is nesting, not a count of containers: three one-level siblings inside a
    // top-level array are two levels deep, under a limit of two.
    let bytes = b"\x93\x91\x01\x91\x02\x81\x03\x04";
    let opts = DecodeOptions::new().max_depth(2);
    let v = opts.decode(bytes).expect("two levels deep");
    assert_eq!(msgpack::encode(&v).expect("encodes"), bytes);
    let e = opts.decode(b"\x91\x91\x91\x01").expect_err("three levels");
    assert_eq!(e.kind(), &DecodeErrorKind::DepthLimit { limit: 2 });
    // The same through the shared-buffer reader with options.
    let shared = Bytes::from_static(bytes);
    assert!(opts.decode_bytes(&shared).expect("decodes") == v);
    let deep = Bytes::from_static(b"\x91\x91\x91\x01");
    let e = opts.decode_bytes(&deep).expect_err("three levels");
    assert_eq!(e.kind(), &DecodeErrorKind::DepthLimit { limit: 2 });
}

#[test]
fn decode_options_decode_bytes_honours_its_options() {
    // uint16 holding 5: refused by default, read (and written back canonically) when
    // non-canonical forms are allowed.
    let bytes = Bytes::from_static(b"\xcd\x00\x05");
    let liberal = DecodeOptions::new().allow_non_canonical(true);
    assert!(liberal.decode_bytes(&bytes).expect("liberal") == Value::from(5u64));
    let e = DecodeOptions::new()
        .decode_bytes(&bytes)
        .expect_err("strict");
    assert!(matches!(e.kind(), DecodeErrorKind::NonCanonical { .. }));
}

#[test]
fn a_view_is_read_back_only_within_the_codecs_depth_limits() {
    use langgraph_codec::{ObjectKind, PyObject, PyStr};
    // An object's payload is a document of its own: its tuple is level 1, so an arg of
    // 1023 nested arrays is level 1024 (the limit) and one more is too deep, for the
    // encoder and for a view read back.
    let object = |levels: usize| {
        Value::Object(Box::new(PyObject {
            kind: ObjectKind::ConstructorSingleArg,
            module: PyStr::new("m"),
            name: PyStr::new("n"),
            arg: nested_arrays(levels),
            method: None,
        }))
    };
    let fits = object(1023);
    assert!(msgpack::encode(&fits).is_ok());
    let back =
        langgraph_codec::view::from_str(&langgraph_codec::view::to_string(&fits).expect("view"))
            .expect("within the limit");
    assert!(back == fits);
    let too_deep = object(1024);
    assert!(msgpack::encode(&too_deep).is_err());
    assert!(langgraph_codec::view::from_str(
        &langgraph_codec::view::to_string(&too_deep).expect("view")
    )
    .is_err());
    // Delta snapshots are envelopes too (ext 7): their value is a document of its own.
    let snapshot = |levels| Value::DeltaSnapshot(Box::new(nested_arrays(levels)));
    assert!(msgpack::encode(&snapshot(1024)).is_ok());
    let text = langgraph_codec::view::to_string(&snapshot(1025)).expect("view");
    assert!(msgpack::encode(&snapshot(1025)).is_err());
    assert!(langgraph_codec::view::from_str(&text).is_err());
    let text = langgraph_codec::view::to_string(&snapshot(1024)).expect("view");
    assert!(langgraph_codec::view::from_str(&text).expect("fits") == snapshot(1024));
}

#[test]
fn a_view_of_a_numpy_array_is_held_to_the_total_depth_limit() {
    // 131,072 levels in all (`DEFAULT_MAX_TOTAL_DEPTH`). Each delta snapshot is one
    // level (an ext 7 envelope); a numpy array with a shape is three (its ext 6
    // envelope, the payload tuple, the shape array). So 131,069 snapshots around one
    // fit exactly and 131,070 are one level too many.
    let view = |snapshots: usize| {
        let array = r#"{"$ndarray": "<f8", "shape": [1], "order": "C", "buffer": "AAAAAAAA8D8="}"#;
        format!(
            "{}{array}{}",
            r#"{"$delta_snapshot": "#.repeat(snapshots),
            "}".repeat(snapshots)
        )
    };
    assert_eq!(msgpack::DEFAULT_MAX_TOTAL_DEPTH, 131_072);
    let fits = langgraph_codec::view::from_str(&view(131_069)).expect("within the limit");
    assert!(msgpack::encode(&fits).is_ok());
    assert!(langgraph_codec::view::from_str(&view(131_070)).is_err());
}
