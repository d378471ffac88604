//! Every golden vector made by the real Python package (`vectors/generate.py`) decodes,
//! and re-encodes to exactly the bytes Python wrote. No Python needed.

use std::path::PathBuf;

use base64::engine::general_purpose::STANDARD as B64;
use base64::Engine as _;
use langgraph_codec::{
    msgpack, tags, JsonPlusSerializer, ObjectKind, Serializer, TypedBytes, Value,
};

struct Vector {
    file: &'static str,
    name: String,
    typed: TypedBytes,
}

fn load(file: &'static str) -> Vec<Vector> {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("vectors")
        .join(file);
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    text.lines()
        .filter(|l| !l.trim().is_empty())
        .map(|line| {
            let v: serde_json::Value = serde_json::from_str(line).expect("vector line is JSON");
            let name = v["name"].as_str().expect("name").to_owned();
            let type_tag = v["type"].as_str().expect("type").to_owned();
            let data = B64
                .decode(v["data"].as_str().expect("data"))
                .expect("base64");
            Vector {
                file,
                name,
                typed: TypedBytes::new(type_tag, data),
            }
        })
        .collect()
}

fn all_vectors() -> Vec<Vector> {
    let mut v = load("unit.jsonl");
    v.extend(load("graph_rows.jsonl"));
    v
}

#[test]
fn there_are_enough_vectors() {
    let unit = load("unit.jsonl");
    assert!(unit.len() >= 150, "only {} unit vectors", unit.len());
    for tag in ["null", "bytes", "bytearray", "msgpack", "json"] {
        assert!(
            unit.iter().any(|v| v.typed.type_tag == tag),
            "no unit vector with tag {tag}"
        );
    }
    assert!(!load("graph_rows.jsonl").is_empty());
}

#[test]
fn every_vector_decodes_and_reencodes_byte_identically() {
    let serde = JsonPlusSerializer::new();
    let mut checked = 0;
    for v in all_vectors() {
        let ctx = format!("{}:{} ({})", v.file, v.name, v.typed.type_tag);
        match v.typed.type_tag.as_str() {
            tags::EMPTY => assert!(v.typed.data.is_empty(), "{ctx}: empty marker with data"),
            // Python ignores bytes after the value; we refuse them as corruption.
            tags::MSGPACK if v.name == "trailing_bytes_after_value" => {
                let err = serde
                    .loads_typed(tags::MSGPACK, &v.typed.data)
                    .expect_err(&ctx);
                assert_eq!(err.kind().as_str(), "trailing_bytes", "{ctx}");
            }
            tags::JSON if v.name.contains("invalid") => {
                let err = serde
                    .loads_typed(tags::JSON, &v.typed.data)
                    .expect_err(&ctx);
                assert_eq!(err.kind().as_str(), "invalid_json", "{ctx}");
            }
            tags::JSON => {
                serde
                    .loads_typed(tags::JSON, &v.typed.data)
                    .unwrap_or_else(|e| panic!("{ctx}: {e}"));
            }
            tag => {
                let value = serde
                    .loads_typed(tag, &v.typed.data)
                    .unwrap_or_else(|e| panic!("{ctx}: {e}"));
                let again = serde
                    .dumps_as(tag, &value)
                    .unwrap_or_else(|e| panic!("{ctx}: {e}"));
                assert_eq!(again.data, v.typed.data, "{ctx}: re-encoded bytes differ");
                // The zero-copy path reads the same value.
                let shared = serde
                    .loads_typed_bytes(tag, &v.typed.data)
                    .unwrap_or_else(|e| panic!("{ctx}: {e}"));
                assert_eq!(shared, value, "{ctx}");
                // And the default dumps picks Python's tag for it (bytearray excepted:
                // Python's own dumps_typed keeps the class, which a Value cannot tell).
                if tag != tags::BYTEARRAY {
                    let dumped = serde.dumps_typed(&value).expect("dumps");
                    assert_eq!(dumped.type_tag, tag, "{ctx}");
                    assert_eq!(dumped.data, v.typed.data, "{ctx}");
                }
            }
        }
        checked += 1;
    }
    assert!(checked > 300, "only {checked} vectors checked");
}

/// The CLI's record formats (feature `cli`).
#[cfg(feature = "cli")]
#[test]
fn cli_records_round_trip_every_vector() {
    use langgraph_codec::records;
    let serde = JsonPlusSerializer::new();
    for v in all_vectors() {
        let tag = v.typed.type_tag.as_str();
        if tag == tags::JSON || tag == tags::EMPTY || v.name == "trailing_bytes_after_value" {
            continue;
        }
        let line = records::data_record(&v.typed).to_string();
        let decoded =
            records::decode_record(&serde, &line).unwrap_or_else(|e| panic!("{}: {e}", v.name));
        let encoded =
            records::encode_record(&decoded, &Ok).unwrap_or_else(|e| panic!("{}: {e}", v.name));
        assert_eq!(
            records::parse_data_record(&encoded).expect("data record"),
            v.typed,
            "{}",
            v.name
        );
    }
}

fn find(name: &str) -> Value {
    let v = load("unit.jsonl")
        .into_iter()
        .find(|v| v.name == name)
        .unwrap_or_else(|| panic!("no vector {name}"));
    JsonPlusSerializer::new()
        .loads_typed(&v.typed.type_tag, &v.typed.data)
        .expect("decodes")
}

/// Values whose structure is known from Python's source (jsonplus.py `_msgpack_default`).
#[test]
fn python_types_decode_to_the_envelopes_python_writes() {
    let uuid = find("uuid_v1");
    let obj = uuid.as_object().expect("UUID is an object envelope");
    assert_eq!(
        (obj.kind, obj.module.as_str(), obj.name.as_str()),
        (ObjectKind::ConstructorSingleArg, "uuid", "UUID")
    );
    assert_eq!(
        obj.arg.as_str().map(str::len),
        Some(32),
        "UUID arg is its 32-char hex"
    );

    let dt = find("datetime_utc_micro");
    let obj = dt.as_object().expect("datetime envelope");
    assert_eq!(obj.kind, ObjectKind::MethodSingleArg);
    assert_eq!(obj.method.as_deref(), Some("fromisoformat"));

    let msg = find("msg_remove");
    let obj = msg.as_object().expect("message envelope");
    assert_eq!(obj.kind, ObjectKind::PydanticV2);
    assert!(
        obj.module.starts_with("langchain_core.messages."),
        "{}",
        obj.module
    );
    assert_eq!(obj.method.as_deref(), Some("model_validate_json"));

    assert!(matches!(&find("np_3d"), Value::NdArray(a) if a.shape.len() == 3));
    assert!(matches!(find("delta_dict"), Value::DeltaSnapshot(_)));
}

#[test]
fn unknown_and_malformed_extensions_stay_raw() {
    for (name, code) in [
        ("raw_ext99_unknown", 99),
        ("raw_ext127", 127),
        ("raw_ext8_unknown_code", 8),
        ("malformed_ext0_two_tuple", 0),
        ("malformed_ext0_garbage", 0),
        ("malformed_ext4_not_msgpack", 4),
        ("malformed_ext5_scalar_payload", 5),
        ("malformed_ext5_garbage", 5),
        ("malformed_ext6_three_tuple", 6),
        ("malformed_ext7_garbage", 7),
    ] {
        match &find(name) {
            Value::Ext(raw) => assert_eq!(raw.code, code, "{name}"),
            other => panic!("{name}: expected a raw ext, got {other:?}"),
        }
    }
    // A raw ext nested in a map keeps its place and bytes.
    let v = find("raw_ext99_in_map");
    assert!(matches!(v.get("a"), Some(Value::Ext(e)) if e.code == 99 && &e.data[..] == b"zz"));
}

#[test]
fn json_view_round_trips_every_msgpack_vector() {
    for v in all_vectors() {
        if v.typed.type_tag != tags::MSGPACK || v.name == "trailing_bytes_after_value" {
            continue;
        }
        let value = msgpack::decode(&v.typed.data).expect("decodes");
        let text = langgraph_codec::view::to_string_pretty(&value);
        let back =
            langgraph_codec::view::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", v.name));
        assert_eq!(
            msgpack::encode(&back).expect("encodes"),
            v.typed.data,
            "{}",
            v.name
        );
    }
}
