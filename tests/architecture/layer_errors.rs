//! The leaf errors and the one `Error` above them: every layer above the codec reports
//! the same `Error` with its kind, the leaf error stays reachable (accessors and
//! `source()`), and the tag-dispatching typed reads take `DecodeOptions`.

use std::error::Error as _;

use langgraph_codec::crypto::{AesMode, EncryptedSerializer};
use langgraph_codec::msgpack::DecodeOptions;
use langgraph_codec::typed::{self, JsonFallback, TypedError, TypedErrorKind};
use langgraph_codec::TagError;
use langgraph_codec::{Error, ErrorKind, JsonPlusSerializer, Serializer, Value};
use langgraph_codec::{TypedOptions, TypedSerializerExt};

/// `[[1]]` as ormsgpack writes it: two levels of arrays.
const TWO_LEVELS: &[u8] = b"\x91\x91\x01";
/// `5` as a uint16, a form ormsgpack never writes.
const LONG_FIVE: &[u8] = b"\xcd\x00\x05";

/// A typed read of `[[1]]` under some options.
type Read<'a> = dyn Fn(&DecodeOptions) -> Result<Vec<Vec<u8>>, Error> + 'a;

fn depth_limit(e: &TypedError) -> bool {
    matches!(e.kind(), TypedErrorKind::Decode(d) if ErrorKind::from(d) == ErrorKind::DepthLimit)
}

#[test]
fn decode_options_loads_honours_a_tighter_limit() {
    // The default reads two levels.
    let read: Vec<Vec<u8>> = typed::loads("msgpack", TWO_LEVELS, &JsonFallback).expect("reads");
    assert_eq!(read, [[1]]);
    // One level per document: refused, at the second array's byte.
    let one = DecodeOptions::new().max_depth(1);
    let e = one
        .loads::<Vec<Vec<u8>>, _>("msgpack", TWO_LEVELS, &JsonFallback)
        .expect_err("two levels under a limit of one");
    assert!(depth_limit(&e), "{e:?}");
    assert_eq!(e.offset(), Some(1));
    // A json row is read under the same options.
    let e = one
        .loads::<Vec<Vec<u8>>, _>("json", b"[[1]]", &JsonFallback)
        .expect_err("two levels under a limit of one");
    assert_eq!(ErrorKind::from(&e), ErrorKind::DepthLimit, "{e:?}");
    // And a looser option is honoured too: non-canonical forms accepted.
    assert!(typed::loads::<u8, _>("msgpack", LONG_FIVE, &JsonFallback).is_err());
    let liberal = DecodeOptions::new().allow_non_canonical(true);
    let five: u8 = liberal
        .loads("msgpack", LONG_FIVE, &JsonFallback)
        .expect("allowed");
    assert_eq!(five, 5);
}

#[test]
fn typed_options_loads_typed_value_honours_a_tighter_limit() {
    let one = DecodeOptions::new().max_depth(1);
    let plain = JsonPlusSerializer::new();
    let key = b"0123456789abcdef";
    let encrypted = EncryptedSerializer::from_aes_key(key, AesMode::Gcm).expect("key");
    let row = encrypted
        .dumps_typed_value(&vec![vec![1u8]])
        .expect("dumps");
    let cases: [(&Read, &str); 2] = [
        (
            &|o| {
                TypedOptions::new()
                    .decode_options(*o)
                    .loads_typed_value(&plain, "msgpack", TWO_LEVELS)
            },
            "plain",
        ),
        (
            &|o| {
                TypedOptions::new().decode_options(*o).loads_typed_value(
                    &encrypted,
                    &row.type_tag,
                    &row.data,
                )
            },
            "encrypted",
        ),
    ];
    for (read, name) in cases {
        assert_eq!(read(&DecodeOptions::new()).expect(name), [[1]]);
        match read(&one) {
            Err(e) => {
                assert_eq!(e.kind(), ErrorKind::DepthLimit, "{name}: {e:?}");
                assert!(e.as_typed().is_some_and(depth_limit), "{name}: {e:?}");
                assert!(
                    e.source().is_some_and(|s| s.is::<TypedError>()),
                    "{name}: {e:?}"
                );
            }
            other => panic!("{name}: expected a depth error, got {other:?}"),
        }
    }
    let liberal = DecodeOptions::new().allow_non_canonical(true);
    let five: u8 = TypedOptions::new()
        .decode_options(liberal)
        .loads_typed_value(&plain, "msgpack", LONG_FIVE)
        .expect("allowed");
    assert_eq!(five, 5);
}

#[test]
fn an_encrypting_serializers_error_keeps_its_kind_and_source() {
    let a = EncryptedSerializer::from_aes_key(b"0123456789abcdef", AesMode::Eax).expect("key");
    let b = EncryptedSerializer::from_aes_key(b"fedcba9876543210", AesMode::Eax).expect("key");
    let row = a.dumps_typed(&Value::from("secret")).expect("dumps");
    let e = b
        .loads_typed(&row.type_tag, &row.data)
        .expect_err("wrong key");
    assert_eq!(e.kind(), ErrorKind::AuthenticationFailed);
    assert_eq!(e.count(), Some(1), "keys tried: {e:?}");
    assert!(e.to_string().starts_with("decryption failed"), "{e}");
    // The crypto layer's own failure: nothing under it, no codec error to reach.
    assert!(e.source().is_none(), "{e:?}");
    assert!(e.as_decode().is_none() && e.as_tag().is_none(), "{e:?}");
    // Through a saver, the same error is the cause of the unreadable row
    // (tests/saver_memory.rs, rows_under_another_key_are_unreadable_rows_not_panics).
}

/// The inner serializer's error under an encrypting wrapper comes out as it is: no
/// wrapping to undo.
#[test]
fn an_inner_serializers_error_comes_through_the_wrapper_unchanged() {
    let serde = EncryptedSerializer::from_aes_key(b"0123456789abcdef", AesMode::Eax).expect("key");
    // A sealed pickle row: the wrapper decrypts it, the inner serializer refuses it.
    let row = serde.seal("pickle", b"\x80\x04", b"").expect("seal");
    assert_eq!(row.type_tag, "pickle+aes");
    let e = serde
        .loads_typed(&row.type_tag, &row.data)
        .expect_err("pickle");
    assert_eq!(e.kind(), ErrorKind::Pickle);
    assert_eq!(e.as_tag(), Some(&TagError::Pickle));
    assert_eq!(e.to_string(), TagError::Pickle.to_string());
}

#[test]
fn typed_tag_errors_have_their_kinds_in_every_layer() {
    let cases: [(&str, &[u8], ErrorKind); 3] = [
        ("pickle", b"\x80\x04", ErrorKind::Pickle),
        ("yaml", b"", ErrorKind::UnknownType),
        ("json", b"{", ErrorKind::InvalidJson),
    ];
    for (tag, data, kind) in cases {
        let e = typed::loads::<Value, _>(tag, data, &JsonFallback).expect_err(tag);
        assert_eq!(ErrorKind::from(&e), kind, "{tag}: typed");
        let top = Error::from(e.clone());
        assert_eq!(top.kind(), kind, "{tag}: crate");
        assert_eq!(top.as_typed(), Some(&e), "{tag}");
        // As JsonPlusSerializer reports the same row read as a Value.
        let value = JsonPlusSerializer::new()
            .loads_typed(tag, data)
            .expect_err(tag);
        assert_eq!(value.kind(), kind, "{tag}: {top:?} vs {value:?}");
        assert_eq!(value.as_tag(), top.as_tag(), "{tag}: {top:?} vs {value:?}");
        assert_eq!(
            value.as_json().is_some(),
            top.as_json().is_some(),
            "{tag}: {top:?} vs {value:?}"
        );
    }
}

#[test]
fn the_json_fallback_keeps_serde_jsons_error_as_its_source() {
    #[derive(Debug, serde::Deserialize)]
    #[allow(dead_code)]
    struct Point {
        x: u8,
    }
    // Valid JSON that is no Point: the fallback codec reports serde_json's error as the
    // source.
    let e = langgraph_codec::typed::FallbackCodec::decode::<Point>(&JsonFallback, b"\"text\"")
        .expect_err("not a Point");
    assert_eq!(ErrorKind::from(&e), ErrorKind::Typed);
    assert!(
        e.source().is_some_and(|s| s.is::<serde_json::Error>()),
        "{e:?}"
    );
    // Kept under the crate-wide error: its source is the typed error, whose source is
    // serde_json's.
    let top = Error::from(e);
    assert!(
        top.source().is_some_and(|t| t.is::<TypedError>()),
        "{top:?}"
    );
    assert!(
        top.source()
            .and_then(|t| t.source())
            .is_some_and(|t| t.is::<serde_json::Error>()),
        "{top:?}"
    );
}

/// The tag failures have one definition (`TagError`): the typed layer, the
/// serializer (the crate-wide error) report the same value, with the same message and
/// kind.
#[test]
fn tag_errors_are_one_type_in_every_layer() {
    // (tag, the TagError expected, its kind, words its message must say)
    let cases = [
        (
            "pickle",
            TagError::Pickle,
            ErrorKind::Pickle,
            "cannot be read outside Python",
        ),
        (
            "yaml",
            TagError::UnknownType {
                tag: "yaml".to_owned(),
            },
            ErrorKind::UnknownType,
            "unknown serialization type \"yaml\"",
        ),
    ];
    for (tag, expected, kind, words) in cases {
        let typed_err = typed::loads::<Value, _>(tag, b"", &JsonFallback).expect_err(tag);
        assert_eq!(
            typed_err.kind(),
            &TypedErrorKind::Tag(expected.clone()),
            "{tag}"
        );
        assert_eq!(ErrorKind::from(&typed_err), kind, "{tag}");
        let top = JsonPlusSerializer::new()
            .loads_typed(tag, b"")
            .expect_err(tag);
        assert_eq!(top.as_tag(), Some(&expected), "{tag}: {top:?}");
        assert!(
            top.source().is_some_and(|s| s.is::<TagError>()),
            "{tag}: {top:?}"
        );
        assert_eq!(top.kind(), kind, "{tag}");
        assert_eq!(Error::from(typed_err.clone()).as_tag(), Some(&expected));
        // One message, word for word, in every layer.
        assert!(expected.to_string().contains(words), "{tag}: {expected}");
        assert_eq!(typed_err.to_string(), expected.to_string(), "{tag}");
        assert_eq!(typed_err.message(), expected.to_string(), "{tag}");
        assert_eq!(top.to_string(), expected.to_string(), "{tag}");
    }

    // A value that cannot be written under its tag: TagMismatch, through `dumps_as`
    // and through the records layer's `empty` tag.
    let e = JsonPlusSerializer::new()
        .dumps_as("null", &Value::from(1i64))
        .expect_err("1 is not nil");
    assert!(
        matches!(e.as_tag(), Some(TagError::TagMismatch { tag, .. }) if tag == "null"),
        "{e:?}"
    );
    assert_eq!(e.kind(), ErrorKind::TagMismatch);
    assert_eq!(
        e.to_string(),
        "a int value cannot be written with type tag \"null\""
    );
    // The records layer is the CLI's (feature `cli`).
    #[cfg(feature = "cli")]
    {
        let e = langgraph_codec::records::encode_value("empty", &Value::from(1i64))
            .expect_err("1 is not nil");
        assert!(
            matches!(e.as_tag(), Some(TagError::TagMismatch { tag, .. }) if tag == "empty"),
            "{e:?}"
        );
        assert_eq!(e.kind(), ErrorKind::TagMismatch);
    }
}

/// The error of a serializer implemented outside this crate: built with
/// `Error::with_source`, it keeps its kind, message and source.
#[test]
fn a_foreign_serializers_error_keeps_its_kind_and_source_at_the_top() {
    let io = std::io::Error::other("disk on fire");
    let top = Error::with_source(ErrorKind::Storage, "disk on fire", io);
    assert_eq!(top.kind(), ErrorKind::Storage);
    assert_eq!(top.to_string(), "disk on fire");
    assert!(
        top.source().is_some_and(|s| s.is::<std::io::Error>()),
        "{top:?}"
    );
}

/// The protocol's vocabulary has one definition and one public path, the crate root
/// (`public_paths` checks that no other path reaches it).
#[test]
fn protocol_items_are_at_the_root() {
    use langgraph_codec::{tags, TagError, TypedBytes};
    let row = TypedBytes::new(tags::NULL, Vec::new());
    assert_eq!(row.type_tag, "null");
    let e = TagError::unknown_type("x+zlib");
    assert_eq!(e.kind(), ErrorKind::UnknownType);
    assert!(e.to_string().contains("CompressedSerializer"), "{e}");
}
