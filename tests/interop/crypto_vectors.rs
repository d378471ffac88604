//! Python → Rust: every row of `vectors/encrypted.jsonl` (written by the real
//! `langgraph-checkpoint==4.3.2` `EncryptedSerializer.from_pycryptodome_aes(key=...,
//! mode=...)` with 16-, 24- and 32-byte keys in EAX and GCM modes, unit values and every
//! row of an encrypted graph run) decrypts in Rust without being told the mode, gives
//! back exactly the inner bytes Python encrypted, and decodes with JsonPlus.
//!
//! The file path can be overridden with `LGCODEC_ENCRYPTED_VECTORS`.

use std::collections::BTreeSet;

use base64::Engine as _;
use langgraph_codec::crypto::{AesMode, EncryptedSerializer};
use langgraph_codec::{JsonPlusSerializer, Serializer};

struct Row {
    name: String,
    key: String,
    mode: String,
    type_tag: String,
    data: Vec<u8>,
    plain_type: String,
    plain_data: Vec<u8>,
}

fn b64(s: &str) -> Vec<u8> {
    base64::engine::general_purpose::STANDARD
        .decode(s)
        .expect("base64 in vectors")
}

fn rows() -> Vec<Row> {
    let path = std::env::var("LGCODEC_ENCRYPTED_VECTORS").unwrap_or_else(|_| {
        concat!(env!("CARGO_MANIFEST_DIR"), "/vectors/encrypted.jsonl").to_owned()
    });
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| {
        panic!("cannot read {path}: {e} (generate it with vectors/generate.py)")
    });
    text.lines()
        .filter(|l| !l.trim().is_empty())
        .map(|line| {
            let v: serde_json::Value = serde_json::from_str(line).expect("json line");
            let s = |k: &str| {
                v[k].as_str()
                    .unwrap_or_else(|| panic!("field {k}"))
                    .to_owned()
            };
            Row {
                name: s("name"),
                key: s("key"),
                mode: s("mode"),
                type_tag: s("type"),
                data: b64(&s("data")),
                plain_type: s("plain_type"),
                plain_data: b64(&s("plain_data")),
            }
        })
        .collect()
}

#[test]
fn python_encrypted_rows_decrypt_and_decode() {
    let rows = rows();
    let json_plus = JsonPlusSerializer::new();
    let mut seen = BTreeSet::new();
    let mut decrypted = 0;
    for row in &rows {
        // Both preferred modes must work: the mode is never given to the reader.
        for preferred in [AesMode::Eax, AesMode::Gcm] {
            let serde = EncryptedSerializer::from_aes_key(row.key.as_bytes(), preferred)
                .unwrap_or_else(|e| panic!("{}: key: {e}", row.name));
            let inner = serde
                .decrypt_typed(&row.type_tag, &row.data, b"")
                .unwrap_or_else(|e| panic!("{}: decrypt: {e}", row.name));
            assert_eq!(inner.type_tag, row.plain_type, "{}", row.name);
            assert_eq!(&inner.data[..], &row.plain_data[..], "{}", row.name);

            if !row.type_tag.contains('+') {
                // The saver's own "empty" marker: stored unencrypted by Python too.
                assert_eq!(row.type_tag, "empty", "{}", row.name);
                assert_eq!(row.data, row.plain_data, "{}", row.name);
                continue;
            }
            assert_eq!(
                row.type_tag,
                format!("{}+aes", row.plain_type),
                "{}",
                row.name
            );
            let value = serde
                .loads_typed(&row.type_tag, &row.data)
                .unwrap_or_else(|e| panic!("{}: loads_typed: {e}", row.name));
            let expected = json_plus
                .loads_typed(&row.plain_type, &row.plain_data)
                .unwrap_or_else(|e| panic!("{}: inner loads_typed: {e}", row.name));
            assert_eq!(value, expected, "{}", row.name);
            // And the decoded value re-serializes to exactly the bytes Python encrypted.
            let again = json_plus
                .dumps_as(&row.plain_type, &value)
                .unwrap_or_else(|e| panic!("{}: dumps_as: {e}", row.name));
            assert_eq!(&again.data[..], &row.plain_data[..], "{}", row.name);
        }
        if row.type_tag.contains('+') {
            decrypted += 1;
            seen.insert((row.mode.clone(), row.key.len()));
            // A wrong key never decrypts it.
            let wrong = EncryptedSerializer::from_aes_key(b"wrong-key-16-byt", AesMode::Eax)
                .expect("valid key");
            assert!(
                matches!(
                    wrong
                        .loads_typed(&row.type_tag, &row.data)
                        .map_err(|e| e.kind()),
                    Err(langgraph_codec::ErrorKind::AuthenticationFailed)
                ),
                "{}: wrong key accepted",
                row.name
            );
        }
    }
    // The file covers both modes and all three key sizes.
    for mode in ["eax", "gcm"] {
        for len in [16, 24, 32] {
            assert!(
                seen.contains(&(mode.to_owned(), len)),
                "no {mode} rows with a {len}-byte key"
            );
        }
    }
    assert!(decrypted >= 100, "only {decrypted} encrypted rows");
}
