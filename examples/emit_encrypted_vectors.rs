//! Rust → Python: encrypts a fixed set of values and writes them as JSON lines in the
//! format of `vectors/encrypted.jsonl`, for `vectors/check_rust_encrypted.py` to read
//! with the real Python package.
//!
//! ```text
//! cargo run --example emit_encrypted_vectors -- OUT.jsonl
//! .venv/bin/python vectors/check_rust_encrypted.py OUT.jsonl
//! ```
//!
//! Line names say what each line is, and the checker knows the expected value for
//! every name (it does not trust this output):
//! - `{mode}{keylen}_{case}`: plain `EncryptedSerializer` rows, readable by
//!   `EncryptedSerializer.from_pycryptodome_aes(key=..., mode=...)` in Python 4.3.2.
//! - `aad_{mode}{keylen}_{kind}_{case}`: bound to upstream LangGraph's canonical AAD;
//!   the line also carries `"aad"` (base64).
//! - `zlib_{mode}{keylen}_{case}`: `msgpack+zlib+aes` (compressed, then encrypted);
//!   Python 4.3.2 has no zlib wrapper, so the checker decompresses itself.

use std::io::Write;

use base64::Engine as _;
use bytes::Bytes;
use langgraph_codec::compression::CompressedSerializer;
use langgraph_codec::crypto::{aad, AesKey, AesMode, EncryptedSerializer, KeyRing};
use langgraph_codec::{JsonPlusSerializer, ObjectKind, PyObject, Serializer, TypedBytes, Value};

/// Fixed test keys (ASCII text, as `LANGGRAPH_AES_KEY` would hold them).
const KEYS: [&str; 3] = [
    "rust-test-key-16",
    "rust-test-key-24-bytes!!",
    "rust-test-key-32-bytes-long!!!!!",
];

fn cases() -> Vec<(&'static str, Value)> {
    let datetime = PyObject::new(
        ObjectKind::MethodSingleArg,
        "datetime",
        "datetime",
        Value::from("2024-01-02T03:04:05.000006+00:00"),
    )
    .with_method("fromisoformat");
    let uuid = PyObject::new(
        ObjectKind::ConstructorSingleArg,
        "uuid",
        "UUID",
        Value::from("12345678123456781234567812345678"),
    );
    let human = PyObject::new(
        ObjectKind::PydanticV2,
        "langchain_core.messages.human",
        "HumanMessage",
        Value::map([
            ("content", Value::from("hi")),
            ("additional_kwargs", Value::Map(Vec::new())),
            ("response_metadata", Value::Map(Vec::new())),
            ("type", Value::from("human")),
            ("name", Value::Nil),
            ("id", Value::from("msg-1")),
        ]),
    )
    .with_method("model_validate_json");
    vec![
        ("null", Value::Nil),
        ("bytes_empty", Value::Bin(Bytes::new())),
        (
            "bytes",
            Value::Bin(Bytes::from_static(b"\x00\x01secret\xff")),
        ),
        ("int", Value::from(42i64)),
        ("float", Value::from(2.5f64)),
        ("str", Value::from("héllo 🦜")),
        ("big_str", Value::from("x".repeat(5000))),
        (
            "nested",
            Value::map([
                ("a", Value::from(1i64)),
                (
                    "b",
                    Value::from(vec![
                        Value::from(1i64),
                        Value::from(2i64),
                        Value::map([("c", Value::Nil)]),
                    ]),
                ),
                ("d", Value::from(2.5f64)),
                (
                    "e",
                    Value::map([(
                        "f",
                        Value::map([(
                            "g",
                            Value::from(vec![Value::from(true), Value::from(false)]),
                        )]),
                    )]),
                ),
            ]),
        ),
        (
            "int_keys",
            Value::Map(vec![
                (Value::from(1i64), Value::from("x")),
                (Value::from("neg"), Value::from(i64::MIN)),
                (Value::from("big"), Value::from(u64::MAX)),
            ]),
        ),
        ("datetime", Value::from(datetime)),
        ("uuid", Value::from(uuid)),
        (
            "state",
            Value::map([("messages", Value::from(vec![Value::from(human)]))]),
        ),
    ]
}

fn b64(data: &[u8]) -> String {
    base64::engine::general_purpose::STANDARD.encode(data)
}

fn line(
    name: &str,
    key: &str,
    mode: AesMode,
    row: &TypedBytes,
    plain: &TypedBytes,
    aad: Option<&[u8]>,
) -> String {
    let mut obj = serde_json::Map::new();
    obj.insert("name".into(), name.into());
    obj.insert("key".into(), key.into());
    obj.insert("mode".into(), mode.as_str().into());
    obj.insert("type".into(), row.type_tag.clone().into());
    obj.insert("data".into(), b64(&row.data).into());
    obj.insert("plain_type".into(), plain.type_tag.clone().into());
    obj.insert("plain_data".into(), b64(&plain.data).into());
    if let Some(aad) = aad {
        obj.insert("aad".into(), b64(aad).into());
    }
    serde_json::Value::Object(obj).to_string()
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let out_path = std::env::args()
        .nth(1)
        .ok_or("usage: emit_encrypted_vectors OUT.jsonl")?;
    let mut lines = Vec::new();
    let aads: [(&str, Vec<u8>); 3] = [
        (
            "checkpoint",
            aad::checkpoint("thread-1", "", "1ef4f797-8335-6428-8001-8a1503f9b875")?,
        ),
        (
            "blob",
            aad::blob(
                "thread-1",
                "",
                "messages",
                "00000000000000000000000000000002.0",
            )?,
        ),
        (
            "write",
            aad::write(
                "thread-1",
                "",
                "1ef4f797-8335-6428-8001-8a1503f9b875",
                "task-1",
                -1,
                "__error__",
            )?,
        ),
    ];
    for mode in [AesMode::Eax, AesMode::Gcm] {
        for key in KEYS {
            let ring = KeyRing::new(AesKey::from_text(key)?).with_mode(mode);
            let serde = EncryptedSerializer::new(ring.clone(), JsonPlusSerializer::new());
            let zserde = EncryptedSerializer::new(
                ring,
                CompressedSerializer::new(JsonPlusSerializer::new()),
            );
            let prefix = format!("{}{}", mode.as_str(), key.len());
            for (case, value) in cases() {
                let row = serde.dumps_typed(&value)?;
                let plain = serde.decrypt_typed(&row.type_tag, &row.data, b"")?;
                lines.push(line(
                    &format!("{prefix}_{case}"),
                    key,
                    mode,
                    &row,
                    &plain,
                    None,
                ));
            }
            for (case, value) in cases()
                .into_iter()
                .filter(|(c, _)| matches!(*c, "nested" | "state" | "null"))
            {
                for (kind, aad) in &aads {
                    let row = serde.with_aad(aad).dumps_typed(&value)?;
                    let plain = serde.decrypt_typed(&row.type_tag, &row.data, aad)?;
                    let name = format!("aad_{prefix}_{kind}_{case}");
                    lines.push(line(&name, key, mode, &row, &plain, Some(aad)));
                }
            }
            for (case, value) in cases()
                .into_iter()
                .filter(|(c, _)| matches!(*c, "big_str" | "nested" | "datetime"))
            {
                let row = zserde.dumps_typed(&value)?;
                let plain = zserde.decrypt_typed(&row.type_tag, &row.data, b"")?;
                lines.push(line(
                    &format!("zlib_{prefix}_{case}"),
                    key,
                    mode,
                    &row,
                    &plain,
                    None,
                ));
            }
        }
    }
    let mut file = std::fs::File::create(&out_path)?;
    for l in &lines {
        writeln!(file, "{l}")?;
    }
    eprintln!("{out_path}: {} lines", lines.len());
    Ok(())
}
