//! Errors about a decrypted row never quote it: no value, no class name, no part of the
//! plaintext, through `loads_typed` and the typed layer alike.
//!
//! Each row holds a secret marker; every error reading it is checked not to contain the
//! marker (nor any long run of it).

use langgraph_codec::compression::CompressedSerializer;
use langgraph_codec::crypto::{AesMode, EncryptedSerializer};
use langgraph_codec::typed::pytypes::{DateTime, Decimal, PyEnum, PyEnumValue, Uuid};
use langgraph_codec::TypedSerializerExt;
use langgraph_codec::{Error, PyObject, Serializer, TypedBytes, Value};
use serde::de::DeserializeOwned;
use serde::Deserialize;

const KEY: &[u8] = b"0123456789abcdef";
const SECRET: &str = "hunter2-Zq9";

fn serde() -> EncryptedSerializer {
    EncryptedSerializer::from_aes_key(KEY, AesMode::Eax).expect("key")
}

fn assert_clean(err: &dyn std::error::Error, secrets: &[&str]) {
    let text = format!("{err} | {err:?}");
    for secret in secrets {
        assert!(!text.contains(secret), "error quotes {secret:?}: {text}");
    }
}

fn typed_err<T: DeserializeOwned + std::fmt::Debug>(s: &dyn Serializer, row: &TypedBytes) -> Error {
    s.loads_typed_value::<T>(&row.type_tag, &row.data)
        .expect_err("must not read")
}

#[derive(Debug, Deserialize)]
#[allow(dead_code)]
struct Small {
    n: u8,
}

#[derive(Debug, Deserialize)]
#[allow(dead_code)]
enum Mode {
    Fast,
    Slow,
}

#[derive(Debug, PartialEq)]
enum Color {
    Red,
}

impl PyEnum for Color {
    const MODULE: &'static str = "app";
    const CLASS: &'static str = "Color";
    type Value = String;
    fn to_value(&self) -> String {
        "red".into()
    }
    fn from_value(value: String) -> Option<Self> {
        (value == "red").then_some(Color::Red)
    }
}

fn object(module: &str, name: &str, arg: Value) -> Value {
    Value::Object(Box::new(PyObject {
        kind: langgraph_codec::ObjectKind::ConstructorSingleArg,
        module: module.into(),
        name: name.into(),
        arg,
        method: None,
    }))
}

#[test]
fn typed_reads_of_decrypted_rows_quote_nothing() {
    let s = serde();
    let row = |v: Value| s.dumps_typed(&v).expect("dumps");
    // Out of range: 300 into a u8.
    let e = typed_err::<Small>(&s, &row(Value::map([("n", Value::from(31337i64))])));
    assert_clean(&e, &["31337"]);
    // A string where a number is expected; an unknown enum variant; an unknown field.
    let e = typed_err::<Small>(&s, &row(Value::map([("n", Value::from(SECRET))])));
    assert_clean(&e, &[SECRET]);
    let e = typed_err::<Mode>(&s, &row(Value::from(SECRET)));
    assert_clean(&e, &[SECRET]);
    // A datetime, a decimal, a UUID that do not parse.
    let mut bad_dt = object("datetime", "datetime", Value::from(SECRET));
    if let Value::Object(o) = &mut bad_dt {
        o.kind = langgraph_codec::ObjectKind::MethodSingleArg;
        o.method = Some("fromisoformat".into());
    }
    let e = typed_err::<DateTime>(&s, &row(bad_dt));
    assert_clean(&e, &[SECRET]);
    let e = typed_err::<Decimal>(&s, &row(object("decimal", "Decimal", Value::from(SECRET))));
    assert_clean(&e, &[SECRET]);
    let e = typed_err::<Uuid>(&s, &row(object("uuid", "UUID", Value::from(SECRET))));
    assert_clean(&e, &[SECRET]);
    // An enum member that does not exist, and an object of another (secret) class.
    let e = typed_err::<PyEnumValue<Color>>(&s, &row(object("app", "Color", Value::from(SECRET))));
    assert_clean(&e, &[SECRET]);
    let e = typed_err::<DateTime>(&s, &row(object("secret_module", SECRET, Value::Nil)));
    assert_clean(&e, &[SECRET, "secret_module"]);
    // Compression inside encryption: still encrypted data.
    let zs = EncryptedSerializer::new(
        langgraph_codec::crypto::KeyRing::new(
            langgraph_codec::crypto::AesKey::new(KEY).expect("key"),
        ),
        CompressedSerializer::new(langgraph_codec::JsonPlusSerializer::new()),
    );
    let zrow = zs
        .dumps_typed(&Value::map([("n", Value::from(SECRET))]))
        .expect("dumps");
    assert_eq!(zrow.type_tag, "msgpack+zlib+aes");
    assert_clean(&typed_err::<Small>(&zs, &zrow), &[SECRET]);
}

#[test]
fn typed_errors_on_plaintext_rows_keep_their_details() {
    // Redaction is for decrypted rows; a plaintext row's error still names the class.
    let s = langgraph_codec::JsonPlusSerializer::new();
    let row = s
        .dumps_typed(&object("somewhere", "Elsewhere", Value::Nil))
        .expect("dumps");
    let e = typed_err::<DateTime>(&s, &row);
    assert!(e.to_string().contains("somewhere.Elsewhere"), "{e}");
}

#[test]
fn value_reads_of_decrypted_rows_quote_nothing() {
    let s = serde();
    // A json row that breaks right after the secret digits (integers of any size read
    // as Value::BigInt, so the break is a stray letter).
    let digits = "98765432109876543210987654321";
    let row = s
        .encrypt_typed(&TypedBytes::new("json", format!("[{digits}x]")), b"")
        .expect("encrypt");
    let e = s
        .loads_typed(&row.type_tag, &row.data)
        .expect_err("not JSON");
    assert_clean(&e, &[&digits[..8]]);
}
