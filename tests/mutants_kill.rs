//! Tests that kill the mutants the mutation run of MUTANTS.md found surviving. Each
//! checks behaviour through the public API, with expected values from the msgpack
//! specification, Python or first principles, never from the code under test.

use bytes::Bytes;
use langgraph_codec::msgpack::{self, DecodeOptions};
use langgraph_codec::{DecodeErrorKind, RawExt, Value};

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
        let read = msgpack::decode_with(&bytes, &liberal).unwrap_or_else(|e| panic!("{what}: {e}"));
        assert!(read == value, "{what}");
    }
}

// ---------------------------------------------------------------------------------------
// crypto
// ---------------------------------------------------------------------------------------

use std::sync::Arc;

use langgraph_codec::crypto::{
    AesCipher, AesMode, Cipher, CompressedSerializer, DecompressionBudget,
};
use langgraph_codec::{Error, JsonPlusSerializer, Serializer};

#[test]
fn aes_modes_parse_by_name_in_any_case_and_nothing_else() {
    for (name, mode) in [
        ("eax", Some(AesMode::Eax)),
        ("EAX", Some(AesMode::Eax)),
        ("gcm", Some(AesMode::Gcm)),
        ("Gcm", Some(AesMode::Gcm)),
        ("cbc", None),
        ("", None),
        ("eax ", None),
    ] {
        assert_eq!(AesMode::from_name(name), mode, "{name:?}");
    }
    for mode in [AesMode::Eax, AesMode::Gcm] {
        assert_eq!(AesMode::from_name(mode.as_str()), Some(mode));
    }
}

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
    let v = msgpack::decode_with(bytes, &opts).expect("two levels deep");
    assert_eq!(msgpack::encode(&v).expect("encodes"), bytes);
    let e = msgpack::decode_with(b"\x91\x91\x91\x01", &opts).expect_err("three levels");
    assert_eq!(e.kind(), &DecodeErrorKind::DepthLimit { limit: 2 });
    // The same through the shared-buffer reader with options.
    let shared = Bytes::from_static(bytes);
    assert!(msgpack::decode_bytes_with(&shared, &opts).expect("decodes") == v);
    let deep = Bytes::from_static(b"\x91\x91\x91\x01");
    let e = msgpack::decode_bytes_with(&deep, &opts).expect_err("three levels");
    assert_eq!(e.kind(), &DecodeErrorKind::DepthLimit { limit: 2 });
}

#[test]
fn decode_bytes_with_honours_its_options() {
    // uint16 holding 5: refused by default, read (and written back canonically) when
    // non-canonical forms are allowed.
    let bytes = Bytes::from_static(b"\xcd\x00\x05");
    let liberal = DecodeOptions::new().allow_non_canonical(true);
    assert!(msgpack::decode_bytes_with(&bytes, &liberal).expect("liberal") == Value::from(5u64));
    let e = msgpack::decode_bytes_with(&bytes, &DecodeOptions::new()).expect_err("strict");
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
fn key_sizes_are_reported_in_bytes_and_bits() {
    use langgraph_codec::crypto::AesKey;
    for (len, bits) in [(16, 128), (24, 192), (32, 256)] {
        let key = AesKey::new(&vec![7u8; len]).expect("valid length");
        assert_eq!((key.len(), key.bits(), key.is_empty()), (len, bits, false));
        assert_eq!(format!("{key:?}"), format!("AesKey {{ bits: {bits}, .. }}"));
    }
}

#[test]
fn boxed_and_shared_ciphers_behave_as_the_cipher_they_hold() {
    let key = b"0123456789abcdef";
    let plain = AesCipher::from_key_bytes(key, AesMode::Eax).expect("key");
    let boxed: Box<dyn Cipher> = Box::new(plain.clone());
    let shared: Arc<dyn Cipher> = Arc::new(plain.clone());
    let boxed_concrete = Box::new(plain.clone());
    let shared_concrete = Arc::new(plain.clone());
    let wrappers: [(&str, &dyn Cipher); 4] = [
        ("Box<dyn Cipher>", &boxed),
        ("Arc<dyn Cipher>", &shared),
        ("Box<AesCipher>", &boxed_concrete),
        ("Arc<AesCipher>", &shared_concrete),
    ];
    for (what, cipher) in wrappers {
        // Python's AES cipher is named "aes"; other suffixes are not its rows.
        assert!(cipher.accepts("aes"), "{what}");
        assert!(!cipher.accepts("zlib"), "{what}");
        let (name, blob) = cipher.encrypt(b"hello", b"row").expect("encrypts");
        assert_eq!(name, "aes", "{what}");
        // nonce (16) | tag (16) | ciphertext (5), readable by the bare cipher.
        assert_eq!(blob.len(), 16 + 16 + 5, "{what}");
        assert_eq!(
            plain.decrypt("aes", &blob, b"row").expect("opens"),
            b"hello",
            "{what}"
        );
        let (_, theirs) = plain.encrypt(b"world", b"").expect("encrypts");
        assert_eq!(
            cipher.decrypt("aes", &theirs, b"").expect("opens"),
            b"world",
            "{what}"
        );
        assert!(
            cipher.decrypt("aes", &theirs, b"other row").is_err(),
            "{what}"
        );
    }
}

#[test]
fn the_per_row_inflation_limit_holds_inside_a_larger_budget() {
    let serde =
        CompressedSerializer::new(JsonPlusSerializer::new()).with_max_decompressed_size(1_000);
    // A str of 10,000 bytes: its msgpack (str16 header + text) inflates to 10,003 bytes.
    let typed = serde
        .dumps_typed(&Value::from("x".repeat(10_000)))
        .expect("compresses");
    let kind = |r: Result<Value, Error>| r.expect_err("refused").kind().as_str();
    // A budget far above the row limit does not lift the row limit.
    let big = DecompressionBudget::new(10_000_000);
    let r = big.scope(|| serde.loads_typed(&typed.type_tag, &typed.data));
    assert_eq!(kind(r), "decompression_limit");
    assert_eq!(big.used(), 0);
    // A budget below the row limit is what stops the row, and says so.
    let small = DecompressionBudget::new(500);
    let r = small.scope(|| serde.loads_typed(&typed.type_tag, &typed.data));
    assert_eq!(kind(r), "decompression_budget");
    // Within both, the row is read and charged its inflated size.
    let roomy =
        CompressedSerializer::new(JsonPlusSerializer::new()).with_max_decompressed_size(20_000);
    let budget = DecompressionBudget::new(15_000);
    let v = budget
        .scope(|| roomy.loads_typed(&typed.type_tag, &typed.data))
        .expect("fits");
    assert!(v == Value::from("x".repeat(10_000)));
    assert_eq!(budget.used(), 10_003);
}

// ---------------------------------------------------------------------------------------
// saver types
// ---------------------------------------------------------------------------------------

use std::time::{SystemTime, UNIX_EPOCH};

use langgraph_codec::saver::types::{now_isoformat, uuid6};

/// The 141,427 days from 1582-10-15 (the uuid v1/v6 epoch) to 1970-01-01 in 100-ns
/// ticks: Python's `0x01B21DD213814000`.
const UUID_EPOCH_OFFSET: u128 = 141_427 * 86_400 * 10_000_000;

/// Now in 100-ns ticks since 1582-10-15 (Python's `time.time_ns() // 100 +
/// 0x01B21DD213814000`).
fn uuid_ticks_now() -> u128 {
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .expect("after 1970")
        .as_nanos();
    nanos / 100 + UUID_EPOCH_OFFSET
}

#[test]
fn uuid6_carries_the_time_clock_seq_version_and_variant_python_puts_there() {
    let before = uuid_ticks_now();
    let id = uuid6(0x1_2345); // 14 bits kept: 0x2345
    let after = uuid_ticks_now();
    let parts: Vec<&str> = id.split('-').collect();
    assert_eq!(
        parts.iter().map(|p| p.len()).collect::<Vec<_>>(),
        [8, 4, 4, 4, 12],
        "{id}"
    );
    let field = |i: usize| u128::from_str_radix(parts[i], 16).expect("hex");
    // Python's `UUID.time` for version 6:
    // (time_low << 28) | (time_mid << 12) | (time_hi_version & 0x0FFF).
    let ticks = (field(0) << 28) | (field(1) << 12) | (field(2) & 0x0fff);
    assert!(
        before <= ticks && ticks <= after + 1_000,
        "{id}: {ticks} not in {before}..{after}"
    );
    assert_eq!(field(2) >> 12, 6, "version nibble of {id}");
    let clock_seq = field(3);
    assert_eq!(clock_seq >> 14, 0b10, "variant bits of {id}");
    assert_eq!(clock_seq & 0x3fff, 0x2345, "clock_seq of {id}");
}

/// Days since 1970-01-01 as (year, month, day), by counting whole years and months:
/// slow and obviously right, unlike the closed form the crate uses.
fn civil_by_counting(mut days: u64) -> (u64, u64, u64) {
    let leap = |y: u64| (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
    let mut year = 1970;
    loop {
        let len = if leap(year) { 366 } else { 365 };
        if days < len {
            break;
        }
        days -= len;
        year += 1;
    }
    let months = [
        31,
        if leap(year) { 29 } else { 28 },
        31,
        30,
        31,
        30,
        31,
        31,
        30,
        31,
        30,
        31,
    ];
    let mut month = 1;
    for len in months {
        if days < len {
            break;
        }
        days -= len;
        month += 1;
    }
    (year, month, days + 1)
}

#[test]
fn now_isoformat_is_todays_utc_date_and_time_in_pythons_format() {
    let today = || {
        let secs = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .expect("after 1970")
            .as_secs();
        let (y, m, d) = civil_by_counting(secs / 86_400);
        format!("{y:04}-{m:02}-{d:02}T")
    };
    let before = today();
    let stamp = now_isoformat();
    let after = today();
    assert!(
        stamp.starts_with(&before) || stamp.starts_with(&after),
        "{stamp} vs {before}"
    );
    // `datetime.now(timezone.utc).isoformat()`: HH:MM:SS, microseconds when non-zero.
    assert!(stamp.ends_with("+00:00"), "{stamp}");
    let len = stamp.len();
    assert!(
        len == "2026-01-01T00:00:00+00:00".len() || len == "2026-01-01T00:00:00.000001+00:00".len()
    );
    // The counting reference itself, on dates Python gives:
    // `date(1970, 1, 1) + timedelta(days=n)`.
    assert_eq!(civil_by_counting(0), (1970, 1, 1));
    assert_eq!(civil_by_counting(59), (1970, 3, 1));
    assert_eq!(civil_by_counting(11_016), (2000, 2, 29));
    assert_eq!(civil_by_counting(20_454), (2026, 1, 1));
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
