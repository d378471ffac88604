//! Inputs the fuzzers (fuzz/) found, kept as regression tests.

use langgraph_codec::{msgpack, view, JsonPlusSerializer, Serializer, Value};

/// loads_typed fuzzer: a float32 NaN whose payload is not `f32::NAN`'s lost its bits in
/// the JSON view (`{"$float": "NaN", "$f32": true}` read back as the canonical NaN).
#[test]
fn float32_nan_payload_survives_the_view() {
    // The crash input: selector 0 (msgpack), then `ca ff ff ff ff`.
    let crash = b"\x00\xca\xff\xff\xff\xff";
    let value = JsonPlusSerializer::new()
        .loads_typed("msgpack", &crash[1..])
        .expect("a float32 decodes");
    let text = view::to_string(&value).expect("a view");
    assert_eq!(text, r#"{"$float":"NaN","$f32":true,"bits":"ffffffff"}"#);
    let back = view::from_str(&text).expect("reads back");
    assert_eq!(msgpack::encode(&back).expect("encodes"), &crash[1..]);

    for bits in [0x7f80_0001u32, 0xffc0_0000, 0x7fff_ffff, 0xff80_0001] {
        let v = Value::F32(f32::from_bits(bits));
        let back = view::from_str(&view::to_string(&v).expect("a view")).expect("reads back");
        match back {
            Value::F32(f) => assert_eq!(f.to_bits(), bits, "{bits:08x}"),
            other => panic!("{bits:08x}: {other:?}"),
        }
    }
    // `f32::NAN` itself needs no bits, and `$f32` may come first.
    let canonical = Value::F32(f32::NAN);
    assert_eq!(
        view::to_string(&canonical).expect("a view"),
        r#"{"$float":"NaN","$f32":true}"#
    );
    let v =
        view::from_str(r#"{"$f32": true, "$float": "NaN", "bits": "7fc00001"}"#).expect("reads");
    assert!(matches!(v, Value::F32(f) if f.to_bits() == 0x7fc0_0001));
    // float32 bits must be 8 hex digits of a NaN.
    for bad in [
        r#"{"$float": "NaN", "$f32": true, "bits": "7ff8000000000001"}"#,
        r#"{"$float": "NaN", "$f32": true, "bits": "3f800000"}"#,
        r#"{"$float": "Infinity", "$f32": true, "bits": "7fc00001"}"#,
    ] {
        assert!(view::from_str(bad).is_err(), "{bad}");
    }
}

/// view_roundtrip fuzzer: a view may spell an ext 0–7 raw although its payload is a
/// valid document. It reads back as itself, and its bytes decode to the structured
/// value, which encodes to the same bytes.
#[test]
fn raw_spelling_of_a_structured_ext_keeps_its_bytes() {
    let text = r#"{"$ext": 7, "data": "4Q=="}"#;
    let value = view::from_str(text).expect("a raw ext view");
    assert_eq!(
        view::from_str(&view::to_string(&value).expect("a view")).ok(),
        Some(value.clone())
    );
    let bytes = msgpack::encode(&value).expect("encodes");
    assert_eq!(bytes, b"\xd4\x07\xe1");
    let decoded = msgpack::decode(&bytes).expect("decodes");
    assert_eq!(decoded, Value::DeltaSnapshot(Box::new(Value::from(-31i64))));
    assert_eq!(msgpack::encode(&decoded).expect("encodes"), bytes);
}
