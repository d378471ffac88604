//! Class checks, hostile input, fallback codec and the serializer hooks.

use crate::common::*;
use langgraph_codec::typed::pytypes::*;
use langgraph_codec::typed::{self, FallbackCodec, JsonFallback};
use langgraph_codec::{Error, ErrorKind, JsonPlusSerializer, Serializer, TypedBytes, Value};
use langgraph_codec::{TypedOptions, TypedSerializerExt};
use serde::{Deserialize, Serialize};

#[test]
fn wrong_class_names_expected_and_found() {
    let human = &vector("msg_human").data;
    let err = typed::from_slice::<AiMessage>(human).unwrap_err();
    let msg = err.to_string();
    assert!(
        msg.contains("langchain_core.messages.ai.AIMessage"),
        "{msg}"
    );
    assert!(
        msg.contains("langchain_core.messages.human.HumanMessage"),
        "{msg}"
    );
    assert_eq!(ErrorKind::from(&err).as_str(), "class_mismatch");

    let err = typed::from_slice::<Uuid>(&vector("decimal_1_10").data).unwrap_err();
    assert!(err.to_string().contains("uuid.UUID"), "{err}");
    assert!(err.to_string().contains("decimal.Decimal"), "{err}");

    // A user dataclass of another class.
    let err = typed::from_slice::<Dataclass<Frozen>>(&vector("dataclass_simple").data).unwrap_err();
    assert!(err.to_string().contains("pytypes.Frozen"), "{err}");
    assert!(err.to_string().contains("pytypes.Simple"), "{err}");

    // Same class, other ext code (pydantic v2 read as v1).
    let err = typed::from_slice::<PydanticV1<ModelV2>>(&vector("pydantic_v2").data).unwrap_err();
    assert_eq!(ErrorKind::from(&err).as_str(), "class_mismatch", "{err}");

    // Not an object at all.
    let err = typed::from_slice::<DateTime>(b"\xa3abc").unwrap_err();
    assert!(err.to_string().contains("found str"), "{err}");

    // An enum member that does not exist.
    let bogus = typed::to_vec(&Dataclass(Empty {})).unwrap();
    assert!(typed::from_slice::<PyEnumValue<Color>>(&bogus).is_err());

    // AnyMessage refuses non-pydantic objects.
    assert!(typed::from_slice::<AnyMessage>(&vector("uuid_v4").data).is_err());
}

#[test]
fn untyped_read_keeps_the_envelope() {
    let v = vector("malformed_ext5_unknown_class");
    let value = JsonPlusSerializer::new()
        .loads_typed(&v.tag, &v.data)
        .unwrap();
    assert_ne!(value, Value::Nil);
    let via_typed: Value = JsonPlusSerializer::new()
        .loads_typed_value(&v.tag, &v.data)
        .unwrap();
    assert_eq!(via_typed, value);
}

#[test]
fn hostile_input_errors_instead_of_overflowing() {
    // 100,000 nested arrays: far past the limit; must fail cleanly (also through Value,
    // untagged enums and flatten buffering).
    let mut deep = vec![0x91u8; 100_000];
    deep.push(0xc0);
    let err = typed::from_slice::<Value>(&deep).unwrap_err();
    assert_eq!(ErrorKind::from(&err).as_str(), "depth_limit", "{err}");
    #[derive(Deserialize, Debug)]
    #[allow(dead_code)]
    struct S {
        a: Vec<Value>,
    }
    let mut doc = b"\x81\xa1a".to_vec();
    doc.extend_from_slice(&deep);
    assert!(typed::from_slice::<S>(&doc).is_err());
    #[derive(Deserialize, Debug)]
    #[allow(dead_code)]
    struct F {
        #[serde(flatten)]
        rest: std::collections::BTreeMap<String, Value>,
    }
    assert!(typed::from_slice::<F>(&doc).is_err());
    #[derive(Deserialize, Debug)]
    #[serde(untagged)]
    #[allow(dead_code)]
    enum U {
        A(i64),
        B(Vec<U>),
    }
    assert!(typed::from_slice::<U>(&deep).is_err());
    // Nested ext envelopes count too.
    let mut ext = Vec::new();
    for _ in 0..2000 {
        ext = {
            let mut e = vec![0xc9];
            e.extend_from_slice(&(ext.len() as u32 + 1).to_be_bytes());
            e.push(7);
            e.extend_from_slice(&ext);
            e.push(0xc0);
            e
        };
    }
    assert!(typed::from_slice::<Value>(&ext).is_err());
    // Lengths beyond the input, truncation, reserved byte, trailing bytes.
    for bad in [
        &b"\xdd\xff\xff\xff\xff"[..],
        b"\xdb\x00\x00\x00\x10abc",
        b"\x92\x01",
        b"\xc1",
        b"\x01\x02",
        b"\xc7\xff\x00\x93",
    ] {
        assert!(typed::from_slice::<Value>(bad).is_err(), "{bad:?}");
        assert!(typed::from_slice::<Vec<i64>>(bad).is_err(), "{bad:?}");
        assert!(typed::from_slice::<Send<Value>>(bad).is_err(), "{bad:?}");
    }
    // A string where a struct is expected, extra array items.
    assert!(typed::from_slice::<(i64,)>(b"\x92\x01\x02").is_err());
}

#[test]
fn writing_too_deep_is_unrepresentable() {
    let mut v = Value::Nil;
    for _ in 0..1100 {
        v = Value::Array(vec![v]);
    }
    let err = typed::to_vec(&v).unwrap_err();
    assert_eq!(ErrorKind::from(&err).as_str(), "depth_limit", "{err}");
    // No fallback for that: Python could not read it back either.
    assert!(typed::dumps(&v, &JsonFallback).is_err());
    std::mem::forget(v);
    // A typed recursive structure as deep fails the same way.
    #[derive(Serialize)]
    struct Tree(Vec<Tree>);
    let mut t = Tree(vec![]);
    for _ in 0..1100 {
        t = Tree(vec![t]);
    }
    let err = typed::to_vec(&t).unwrap_err();
    assert_eq!(ErrorKind::from(&err).as_str(), "depth_limit", "{err}");
    std::mem::forget(t);
}

#[test]
fn a_value_inside_typed_levels_counts_them_too() {
    // The typed writer never writes what the reader refuses: a Value part that is
    // within the limit on its own, but not under the struct and list around it, is a
    // depth error, never bytes that neither Python nor `msgpack::decode` can read.
    #[derive(Serialize)]
    struct State {
        parts: Vec<Value>,
    }
    for own_depth in [1021, 1022, 1023, 1024] {
        let mut v = Value::from(1);
        for _ in 0..own_depth {
            v = Value::Array(vec![v]);
        }
        let state = State { parts: vec![v] };
        match typed::to_vec(&state) {
            // struct map + list + the Value's own levels.
            Ok(bytes) => {
                assert!(own_depth + 2 <= 1024, "{own_depth} levels were written");
                assert!(langgraph_codec::msgpack::decode(&bytes).is_ok());
            }
            Err(e) => {
                assert!(own_depth + 2 > 1024, "{own_depth}: {e}");
                assert_eq!(ErrorKind::from(&e).as_str(), "depth_limit", "{e}");
            }
        }
        std::mem::forget(state);
    }
}

#[test]
fn fallback_codec_for_values_msgpack_cannot_hold() {
    #[derive(Serialize, Deserialize, Debug, PartialEq)]
    struct Big {
        n: i128,
    }
    let big = Big { n: -(1i128 << 80) };
    let typed = typed::dumps(&big, &JsonFallback).unwrap();
    assert_eq!(typed.type_tag, "json");
    assert_eq!(&typed.data[..], b"{\"n\":-1208925819614629174706176}");
    let back: Big = typed::loads("json", &typed.data, &JsonFallback).unwrap();
    assert_eq!(back, big);
    // In range: plain msgpack.
    let small = Big { n: -5 };
    assert_eq!(
        typed::dumps(&small, &JsonFallback).unwrap().type_tag,
        "msgpack"
    );

    // A codec of one's own, with its own tag.
    struct Hex;
    impl FallbackCodec for Hex {
        fn type_tag(&self) -> &str {
            "hexjson"
        }
        fn encode<T: Serialize + ?Sized>(&self, v: &T) -> langgraph_codec::typed::Result<Vec<u8>> {
            let j = JsonFallback.encode(v)?;
            Ok(j.iter()
                .map(|b| format!("{b:02x}"))
                .collect::<String>()
                .into_bytes())
        }
        fn decode<T: serde::de::DeserializeOwned>(
            &self,
            d: &[u8],
        ) -> langgraph_codec::typed::Result<T> {
            let bytes: Vec<u8> = d
                .chunks(2)
                .map(|p| u8::from_str_radix(std::str::from_utf8(p).unwrap(), 16).unwrap())
                .collect();
            JsonFallback.decode(&bytes)
        }
    }
    let hex = TypedOptions::new().fallback(Hex);
    let t = hex
        .dumps_typed_value(&JsonPlusSerializer::new(), &big)
        .unwrap();
    assert_eq!(t.type_tag, "hexjson");
    let back: Big = hex
        .loads_typed_value(&JsonPlusSerializer::new(), &t.type_tag, &t.data)
        .unwrap();
    assert_eq!(back, big);

    // Python's pickle rows are a clear error.
    let err = typed::loads::<Value, _>("pickle", b"\x80\x04", &JsonFallback).unwrap_err();
    assert!(matches!(
        err.kind(),
        typed::TypedErrorKind::Tag(langgraph_codec::TagError::Pickle)
    ));
    assert_eq!(
        Error::from(err.clone()).as_tag(),
        Some(&langgraph_codec::TagError::Pickle)
    );
    assert!(err.to_string().contains("cannot be read outside Python"));
    let e = typed::loads::<Value, _>("yaml", b"", &JsonFallback).map_err(Error::from);
    assert!(matches!(
        e.as_ref().map_err(Error::as_tag),
        Err(Some(langgraph_codec::TagError::UnknownType { .. }))
    ));
}

/// A serializer that only implements the two required methods (so the typed layer
/// goes through the default, Value-based hooks), tagging its rows like a wrapper would.
#[derive(Debug)]
struct Suffixing;

impl Serializer for Suffixing {
    fn dumps_typed(&self, value: &Value) -> langgraph_codec::Result<TypedBytes> {
        let inner = JsonPlusSerializer::new().dumps_typed(value)?;
        Ok(TypedBytes::new(format!("{}+x", inner.type_tag), inner.data))
    }
    fn loads_typed(&self, tag: &str, data: &[u8]) -> langgraph_codec::Result<Value> {
        let inner = tag.strip_suffix("+x").unwrap_or(tag);
        JsonPlusSerializer::new().loads_typed(inner, data)
    }
}

#[test]
fn typed_ext_works_on_any_serializer() {
    let state = (
        HumanMessage::new("hi").with_id("h1"),
        DateTime::new(2024, 1, 2, 3, 4, 5, 6).unwrap(),
    );
    let direct = JsonPlusSerializer::new().dumps_typed_value(&state).unwrap();
    let wrapped = Suffixing.dumps_typed_value(&state).unwrap();
    assert_eq!(wrapped.type_tag, "msgpack+x");
    assert_eq!(wrapped.data, direct.data);
    let back: (HumanMessage, DateTime) = Suffixing
        .loads_typed_value(&wrapped.type_tag, &wrapped.data)
        .unwrap();
    assert_eq!(back, state);
    // Through Arc<dyn Serializer> too.
    let dynser: std::sync::Arc<dyn Serializer> = std::sync::Arc::new(JsonPlusSerializer::new());
    let t = dynser.dumps_typed_value(&state).unwrap();
    assert_eq!(t, direct);
    // None and bytes follow Python's tags.
    assert_eq!(
        Suffixing.dumps_typed_value(&None::<i64>).unwrap().type_tag,
        "null+x"
    );
    let b = JsonPlusSerializer::new()
        .dumps_typed_value(&ByteBuf(vec![1, 2]))
        .unwrap();
    assert_eq!((b.type_tag.as_str(), &b.data[..]), ("bytes", &[1u8, 2][..]));
    let back: ByteBuf = JsonPlusSerializer::new()
        .loads_typed_value("bytes", &[1, 2])
        .unwrap();
    assert_eq!(back.0, vec![1, 2]);
    let none: Option<String> = JsonPlusSerializer::new()
        .loads_typed_value("null", b"")
        .unwrap();
    assert_eq!(none, None);
    // The default hook refuses fallback rows rather than storing them unwrapped.
    assert!(Suffixing.dumps_typed_value(&(1u128 << 70)).is_err());
}

#[test]
fn value_serde_through_other_formats() {
    let v = Value::map([("a", Value::from(1i64)), ("b", Value::from("x"))]);
    let json = serde_json::to_string(&v).unwrap();
    assert_eq!(json, r#"{"a":1,"b":"x"}"#);
    let back: Value = serde_json::from_str(&json).unwrap();
    assert_eq!(back, v);
}

/// A `Deserialize` implementation's own message keeps kind `typed`, even when its text
/// looks like one of this crate's (kinds are set where errors are made, not guessed
/// from text); the crate's own class mismatch is `class_mismatch`.
#[test]
fn error_kinds_are_set_where_made_not_read_from_text() {
    struct LooksLikeMismatch;
    impl<'de> serde::Deserialize<'de> for LooksLikeMismatch {
        fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
            let _ = i64::deserialize(d)?;
            Err(serde::de::Error::custom(
                "expected Python class uuid.UUID (ext 0), found class x.Y (ext 0)",
            ))
        }
    }
    let err = typed::from_slice::<LooksLikeMismatch>(b"\x01")
        .map(|_| ())
        .expect_err("refused");
    assert_eq!(ErrorKind::from(&err), ErrorKind::Typed, "{err}");

    struct LooksLikeDepth;
    impl serde::Serialize for LooksLikeDepth {
        fn serialize<S: serde::Serializer>(&self, _: S) -> Result<S::Ok, S::Error> {
            Err(serde::ser::Error::custom(
                "value nests deeper than 1024 levels",
            ))
        }
    }
    let err = typed::to_vec(&LooksLikeDepth)
        .map(|_| ())
        .expect_err("refused");
    assert_eq!(ErrorKind::from(&err), ErrorKind::Typed, "{err}");

    let err = typed::from_slice::<Uuid>(&vector("decimal_1_10").data).unwrap_err();
    assert_eq!(ErrorKind::from(&err), ErrorKind::ClassMismatch, "{err}");
}

/// The JSON fallback's own error stays reachable through `source()`, through the
/// crate's `Error` too.
#[test]
fn the_fallback_codecs_error_is_the_source() {
    use std::error::Error as _;
    let err = JsonFallback
        .decode::<Vec<u8>>(b"{")
        .map(|_| ())
        .expect_err("refused");
    let source = err.source().expect("a source");
    assert!(
        source.downcast_ref::<serde_json::Error>().is_some(),
        "{source:?}"
    );
    let err = JsonPlusSerializer::new()
        // An integer beyond 64 bits: the row is read by the JSON fallback itself.
        .loads_typed_value::<Vec<u8>>("json", b"[18446744073709551616]")
        .map(|_| ())
        .expect_err("refused");
    // The crate's error: its source is the typed error, whose source is serde_json's.
    let typed = err.source().expect("a source");
    assert!(typed.is::<typed::TypedError>(), "{typed:?}");
    let source = typed.source().expect("the fallback's error");
    assert!(
        source.downcast_ref::<serde_json::Error>().is_some(),
        "{source:?}"
    );
}
