//! Property tests: arbitrary values survive every representation this crate has.
//!
//! - msgpack: `Value` → bytes → `Value` is the identity, and re-encoding the decoded
//!   value gives the same bytes (every ext variant, non-string keys, any float bits).
//! - the JSON view: `Value` → view text (compact and pretty) → `Value` is the identity.
//! - plain JSON (`json`-tagged rows): values JSON can express survive write → parse.
//! - encryption: `EncryptedSerializer` (EAX and GCM, 16/24/32-byte keys) gives every
//!   value back, never writes the same ciphertext twice, and refuses any flipped bit.

use bytes::Bytes;
use langgraph_codec::crypto::{AesMode, EncryptedSerializer};
use langgraph_codec::msgpack::{self, DecodeOptions};
use langgraph_codec::{
    json, view, Int, JsonPlusSerializer, NdArray, ObjectKind, PyObject, RawExt, Serializer, Value,
};
use proptest::prelude::*;

fn any_int() -> impl Strategy<Value = Int> {
    prop_oneof![
        any::<i64>().prop_map(Int::from),
        any::<u64>().prop_map(Int::from),
        (-40i64..300).prop_map(Int::from),
    ]
}

fn any_f64() -> impl Strategy<Value = f64> {
    prop_oneof![
        any::<f64>(),
        // Every bit pattern: NaNs with payloads, signalling NaNs, -0.0, subnormals.
        any::<u64>().prop_map(f64::from_bits),
        Just(f64::NAN),
        Just(-0.0),
        Just(f64::INFINITY),
        Just(f64::NEG_INFINITY),
    ]
}

fn any_bytes() -> impl Strategy<Value = Bytes> {
    proptest::collection::vec(any::<u8>(), 0..40).prop_map(Bytes::from)
}

fn any_text() -> impl Strategy<Value = String> {
    prop_oneof![
        "[a-z$_]{0,12}",
        any::<String>(),
        // Around the fixstr / str8 / str16 boundaries.
        (0usize..300).prop_map(|n| "x".repeat(n)),
    ]
}

/// A raw extension that decodes back to itself: codes outside 0–7 with any payload, and
/// codes 0–7 whose payload is not a msgpack document (it starts with the reserved byte
/// 0xc1) or is empty.
fn any_raw_ext() -> impl Strategy<Value = RawExt> {
    prop_oneof![
        (
            any::<i8>().prop_filter("not 0-7", |c| !(0..=7).contains(c)),
            any_bytes()
        )
            .prop_map(|(code, data)| RawExt { code, data }),
        (0i8..=7, any_bytes()).prop_map(|(code, rest)| {
            let mut data = vec![0xc1];
            data.extend_from_slice(&rest);
            RawExt {
                code,
                data: data.into(),
            }
        }),
        (0i8..=7).prop_map(|code| RawExt {
            code,
            data: Bytes::new()
        }),
        // Around the fixext / ext8 / ext16 boundaries.
        (8i8..=100, 0usize..300).prop_map(|(code, n)| RawExt {
            code,
            data: vec![7u8; n].into()
        }),
    ]
}

fn leaf() -> impl Strategy<Value = Value> {
    prop_oneof![
        Just(Value::Nil),
        any::<bool>().prop_map(Value::Bool),
        any_int().prop_map(Value::Int),
        any::<u32>().prop_map(|b| Value::F32(f32::from_bits(b))),
        // float32 NaNs with every payload (sign, quiet bit, mantissa).
        (any::<bool>(), 1u32..(1 << 23)).prop_map(|(neg, m)| Value::F32(f32::from_bits(
            u32::from(neg) << 31 | 0x7f80_0000 | m
        ))),
        any_f64().prop_map(Value::F64),
        any_text().prop_map(Value::from),
        any_bytes().prop_map(Value::Bin),
        any_raw_ext().prop_map(Value::from),
        (
            "[<>|][fiuc][1248]",
            proptest::collection::vec(any::<u64>(), 0..4),
            prop_oneof![Just("C"), Just("F")],
            any_bytes()
        )
            .prop_map(
                |(dtype, shape, order, buffer)| Value::NdArray(Box::new(NdArray {
                    dtype,
                    shape,
                    order: order.to_owned(),
                    buffer
                }))
            ),
    ]
}

fn any_kind() -> impl Strategy<Value = ObjectKind> {
    (0i8..=5).prop_map(|c| ObjectKind::from_code(c).unwrap_or(ObjectKind::PydanticV2))
}

/// Arbitrary values: every variant, maps with any keys (also duplicates), nesting up to
/// 8 levels of containers (each object adds two msgpack levels: the ext and its tuple).
fn any_value() -> impl Strategy<Value = Value> {
    leaf().prop_recursive(8, 96, 6, |inner| {
        prop_oneof![
            proptest::collection::vec(inner.clone(), 0..6).prop_map(Value::Array),
            proptest::collection::vec((inner.clone(), inner.clone()), 0..6).prop_map(Value::Map),
            // Maps with string keys, the common case (the view writes them as objects).
            proptest::collection::vec(("[a-z$]{0,6}", inner.clone()), 0..6).prop_map(Value::map),
            (
                any_kind(),
                any_text(),
                any_text(),
                inner.clone(),
                proptest::option::of(any_text())
            )
                .prop_map(|(kind, module, name, arg, method)| {
                    let obj = PyObject::new(kind, module, name, arg);
                    Value::object(match method {
                        Some(m) => obj.with_method(m),
                        None => obj,
                    })
                }),
            inner.prop_map(|v| Value::DeltaSnapshot(Box::new(v))),
        ]
    })
}

/// Wraps `leaf` in a chain of containers chosen by `kinds` (0 array, 1 map value, 2 map
/// key, 3 delta snapshot, 4 object arg).
fn chain(kinds: &[u8], leaf: Value) -> Value {
    kinds.iter().fold(leaf, |v, k| match k % 5 {
        0 => Value::Array(vec![v]),
        1 => Value::map([("k", v)]),
        2 => Value::Map(vec![(v, Value::Nil)]),
        3 => Value::DeltaSnapshot(Box::new(v)),
        _ => Value::object(PyObject::new(ObjectKind::ConstructorSingleArg, "m", "n", v)),
    })
}

fn assert_msgpack_identity(v: &Value) -> Result<(), TestCaseError> {
    let bytes = msgpack::encode(v).map_err(|e| TestCaseError::fail(format!("encode: {e}")))?;
    let back = msgpack::decode(&bytes).map_err(|e| TestCaseError::fail(format!("{e}")))?;
    prop_assert_eq!(&back, v);
    prop_assert_eq!(msgpack::encode(&back).ok(), Some(bytes.clone()));
    let shared = msgpack::decode_bytes(&Bytes::from(bytes.clone()))
        .map_err(|e| TestCaseError::fail(format!("{e}")))?;
    prop_assert_eq!(&shared, v);
    // Canonical bytes decode the same in liberal mode.
    let liberal = DecodeOptions::new()
        .allow_non_canonical(true)
        .decode(&bytes)
        .map_err(|e| TestCaseError::fail(format!("{e}")))?;
    prop_assert_eq!(&liberal, v);
    Ok(())
}

fn assert_view_identity(v: &Value) -> Result<(), TestCaseError> {
    let compact = view::to_string(v).map_err(|e| TestCaseError::fail(e.to_string()))?;
    for text in [compact, view::to_string_pretty(v)] {
        let back = view::from_str(&text).map_err(|e| TestCaseError::fail(format!("{e}")))?;
        prop_assert_eq!(&back, v, "view text: {}", text);
    }
    Ok(())
}

/// Values that plain JSON can express without loss: no bin, ext, float32, and only the
/// NaN bit pattern Python writes.
fn plain_json() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Nil),
        any::<bool>().prop_map(Value::Bool),
        any_int().prop_map(Value::Int),
        any::<f64>().prop_map(|f| Value::F64(if f.is_nan() { f64::NAN } else { f })),
        any_text().prop_map(Value::from),
    ];
    leaf.prop_recursive(6, 64, 5, |inner| {
        prop_oneof![
            proptest::collection::vec(inner.clone(), 0..5).prop_map(Value::Array),
            proptest::collection::vec((any_text(), inner), 0..5).prop_map(Value::map),
        ]
    })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 384, ..ProptestConfig::default() })]

    #[test]
    fn msgpack_round_trip_is_identity(v in any_value()) {
        assert_msgpack_identity(&v)?;
    }

    #[test]
    fn view_round_trip_is_identity(v in any_value()) {
        assert_view_identity(&v)?;
    }

    #[test]
    fn encrypted_round_trip_is_identity_and_tamper_evident(
        v in any_value(),
        key_len in prop_oneof![Just(16usize), Just(24), Just(32)],
        key_seed in any::<u64>(),
        gcm in any::<bool>(),
        flip in any::<proptest::sample::Index>(),
        bit in 0u8..8,
    ) {
        let key: Vec<u8> = (0..key_len as u64).map(|i| (key_seed.rotate_left(i as u32 % 64) ^ i) as u8).collect();
        let mode = if gcm { AesMode::Gcm } else { AesMode::Eax };
        let serde = EncryptedSerializer::from_aes_key(&key, mode).map_err(|e| TestCaseError::fail(format!("{e}")))?;
        let plain = JsonPlusSerializer::new().dumps_typed(&v).map_err(|e| TestCaseError::fail(format!("{e}")))?;

        let row = serde.dumps_typed(&v).map_err(|e| TestCaseError::fail(format!("{e}")))?;
        // Python tags both modes `+aes`; the reader tells EAX from GCM itself.
        prop_assert_eq!(&row.type_tag, &format!("{}+aes", plain.type_tag));
        prop_assert_eq!(serde.loads_typed(&row.type_tag, &row.data).map_err(|e| TestCaseError::fail(format!("{e}")))?, v.clone());
        // A fresh nonce each time: the same value never encrypts to the same bytes.
        let again = serde.dumps_typed(&v).map_err(|e| TestCaseError::fail(format!("{e}")))?;
        prop_assert_ne!(&again.data[..], &row.data[..]);

        // Any single flipped bit (nonce, tag or body) is an error, never a value.
        let mut tampered = row.data.to_vec();
        let at = flip.index(tampered.len());
        if let Some(byte) = tampered.get_mut(at) {
            *byte ^= 1 << bit;
        }
        prop_assert!(serde.loads_typed(&row.type_tag, &tampered).is_err(), "bit {} of byte {} flipped", bit, at);
    }

    #[test]
    fn plain_json_round_trips(v in plain_json()) {
        let text = json::write(&v).map_err(|e| TestCaseError::fail(e.to_string()))?;
        let back = json::parse(text.as_bytes(), 1024).map_err(|e| TestCaseError::fail(format!("{e}")))?;
        prop_assert_eq!(back, v, "json text: {}", text);
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    /// Deep-ish mixed nesting, up to 250 levels of arrays, maps (as value and as key),
    /// delta snapshots and objects, all well under the 1,024 limit.
    #[test]
    fn deep_mixed_nesting_round_trips(kinds in proptest::collection::vec(any::<u8>(), 0..250), leaf in leaf()) {
        let v = chain(&kinds, leaf);
        assert_msgpack_identity(&v)?;
        assert_view_identity(&v)?;
    }
}

/// A string item of a few bytes from an alphabet chosen so that many items share their
/// length and first, second and last bytes (the owned decoder's cache of checked
/// strings keys its slots on those) while differing inside, with multi-byte UTF-8
/// and bytes that are not UTF-8 at all (a lone continuation byte, a cut sequence).
fn colliding_str_item() -> impl Strategy<Value = Vec<u8>> {
    // Mostly valid (one invalid string ends the document with an error, so they are
    // rare enough that most documents hold many strings).
    let middle = prop_oneof![
        30 => Just(&b"x"[..]),
        30 => Just(&b"y"[..]),
        10 => Just("\u{e9}".as_bytes()),
        10 => Just("\u{20ac}".as_bytes()),
        // Past the cache's 32-byte limit, and around it.
        3 => Just(&b"xxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"[..]),
        1 => Just(&b"\x80"[..]),
        1 => Just(&b"\xc3"[..]),
        1 => Just(&b"\xff"[..]),
    ];
    (
        prop_oneof![Just(&b"ty"[..]), Just(&b"na"[..]), Just(&b""[..])],
        proptest::collection::vec(middle, 0..4),
        prop_oneof![Just(&b"e"[..]), Just(&b"s"[..]), Just(&b""[..])],
    )
        .prop_map(|(head, middle, tail)| {
            let mut text = head.to_vec();
            for m in middle {
                text.extend_from_slice(m);
            }
            text.extend_from_slice(tail);
            // fixstr, or str8 for 32 bytes and more (the canonical forms).
            let mut item = if text.len() < 32 {
                vec![0xa0 | text.len() as u8]
            } else {
                vec![0xd9, text.len() as u8]
            };
            item.extend_from_slice(&text);
            item
        })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

    /// The owned decoder checks each short string's UTF-8 once per distinct string (a
    /// string equal to one already checked is taken from a cache); the borrowed
    /// decoder checks every string. Arrays and maps of strings that collide in the
    /// cache, some of them not UTF-8, decode to the same value or fail with the same
    /// error at the same offset through both.
    #[test]
    fn repeated_and_colliding_strings_decode_as_the_uncached_reader_does(
        items in proptest::collection::vec(colliding_str_item(), 1..40),
        as_map in any::<bool>(),
    ) {
        let n = if as_map { items.len() / 2 * 2 } else { items.len() };
        let mut bytes = match (as_map, n) {
            (true, n) => vec![0xde, 0, (n / 2) as u8],
            (false, n) => vec![0xdc, 0, n as u8],
        };
        for item in items.iter().take(n) {
            bytes.extend_from_slice(item);
        }
        // (16-bit container headers for short ones are non-canonical: allowed here.)
        let options = DecodeOptions::new().allow_non_canonical(true);
        let owned = options.decode(&bytes)
            .map_err(|e| (e.kind().clone(), e.offset()));
        let borrowed = options.decode_ref(&bytes)
            .map(|v| v.to_owned_value())
            .map_err(|e| (e.kind().clone(), e.offset()));
        prop_assert_eq!(owned, borrowed, "input {:02x?}", bytes);
    }
}
