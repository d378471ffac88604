//! Keys and rotation against hostile configuration and rows: keys
//! that cannot be read are errors, never dropped; the number of previous keys is
//! capped, so refusing a forged row has a bounded cost; `rekey` refuses rows it cannot
//! read instead of encrypting them blind.

use std::ffi::OsString;
use std::os::unix::ffi::OsStringExt;

use langgraph_codec::crypto::{
    AesKey, AesMode, Cipher, EncryptedSerializer, KeyRing, MAX_PREVIOUS_KEYS,
};
use langgraph_codec::TagError;
use langgraph_codec::{ErrorKind, Serializer, TypedBytes, Value};

const PRIMARY: &str = "0123456789abcdef";

fn os_vars(primary: &[u8], previous: Option<&[u8]>) -> impl Fn(&str) -> Option<OsString> {
    let primary = primary.to_vec();
    let previous = previous.map(<[u8]>::to_vec);
    move |name| match name {
        "LANGGRAPH_AES_KEY" => Some(OsString::from_vec(primary.clone())),
        "LANGGRAPH_AES_KEY_PREVIOUS" => previous.clone().map(OsString::from_vec),
        _ => None,
    }
}

#[test]
fn unreadable_key_variables_are_errors() {
    // A previous key that is not UTF-8: an error naming the variable, not a ring
    // without it.
    match KeyRing::from_env_vars_os(os_vars(PRIMARY.as_bytes(), Some(b"\xff123456789abcdef"))) {
        Err(e) if e.kind() == ErrorKind::KeyNotUtf8 => {
            assert!(e.to_string().contains("LANGGRAPH_AES_KEY_PREVIOUS"), "{e}");
            assert_eq!(e.subject(), Some("LANGGRAPH_AES_KEY_PREVIOUS"));
            assert_eq!(ErrorKind::from(&e), ErrorKind::KeyNotUtf8);
        }
        other => panic!("expected KeyNotUtf8, got {other:?}"),
    }
    // A primary key that is not UTF-8 says so, not "not set".
    match KeyRing::from_env_vars_os(os_vars(b"\xff123456789abcdef", None)) {
        Err(e) if e.kind() == ErrorKind::KeyNotUtf8 => {
            assert!(!e.to_string().contains("not set"), "{e}");
        }
        other => panic!("expected KeyNotUtf8, got {other:?}"),
    }
    // Malformed UTF-8 entries are errors too (length, base64), each naming its entry.
    match KeyRing::from_env_vars_os(os_vars(PRIMARY.as_bytes(), Some(b"fedcba9876543210,x"))) {
        Err(e) if e.kind() == ErrorKind::InvalidKeyLength => {
            assert!(e.to_string().contains("entry 2"), "{e}")
        }
        other => panic!("expected InvalidKeyLength, got {other:?}"),
    }
    // A key that is not UTF-8 text can still be given, as base64.
    let ring = KeyRing::from_env_vars_os(os_vars(
        PRIMARY.as_bytes(),
        Some(b"base64:/zEyMzQ1Njc4OWFiY2RlZg=="), // b"\xff123456789abcdef"
    ))
    .expect("base64 entry");
    assert_eq!(ring.key_count(), 2);
}

#[test]
fn previous_keys_are_capped() {
    let key = |i: usize| AesKey::new(format!("previous-key-{i:03}").as_bytes()).expect("16 bytes");
    let mut ring = KeyRing::new(AesKey::new(PRIMARY.as_bytes()).expect("key"));
    for i in 0..MAX_PREVIOUS_KEYS {
        ring = ring.with_previous(key(i)).expect("within the cap");
    }
    assert_eq!(
        ring.clone()
            .with_previous(key(99))
            .map(|_| ())
            .map_err(|e| e.kind()),
        Err(ErrorKind::TooManyKeys)
    );
    let list: Vec<String> = (0..=MAX_PREVIOUS_KEYS)
        .map(|i| format!("previous-key-{i:03}"))
        .collect();
    let list = list.join(",");
    let e = KeyRing::from_env_vars_os(os_vars(PRIMARY.as_bytes(), Some(list.as_bytes())))
        .expect_err("over the cap");
    assert_eq!(
        (e.kind(), e.count()),
        (ErrorKind::TooManyKeys, Some(MAX_PREVIOUS_KEYS + 1))
    );
    // A forged 1 MiB row against the fullest ring: refused after every key was tried
    // once per mode (the cost is measured in benches/crypto.rs, decrypt/forged_1mib_max_keys).
    let forged = vec![0x5au8; (1 << 20) + 32];
    match ring.decrypt("aes", &forged, b"") {
        Err(e) if e.kind() == ErrorKind::AuthenticationFailed => {
            assert_eq!(e.count(), Some(MAX_PREVIOUS_KEYS + 1))
        }
        other => panic!("expected AuthenticationFailed, got {other:?}"),
    }
    // The last previous key still opens its rows (nothing was dropped), and says which.
    let last = KeyRing::new(key(MAX_PREVIOUS_KEYS - 1)).with_mode(AesMode::Gcm);
    let (_, blob) = last.encrypt(b"old row", b"").expect("encrypt");
    let (plain, index) = ring.decrypt_with_index(&blob, b"").expect("opens");
    assert_eq!((&plain[..], index), (&b"old row"[..], MAX_PREVIOUS_KEYS));
}

#[test]
fn rekey_refuses_rows_it_cannot_read() {
    let old = EncryptedSerializer::from_aes_key(b"fedcba9876543210", AesMode::Eax).expect("key");
    let ring = KeyRing::new(AesKey::new(PRIMARY.as_bytes()).expect("key"))
        .with_previous(AesKey::new(b"fedcba9876543210").expect("key"))
        .expect("one previous key");
    let serde = EncryptedSerializer::new(ring, langgraph_codec::JsonPlusSerializer::new());
    let refused = |row: TypedBytes| match serde.rekey(&row) {
        Err(e) => e,
        Ok(out) => panic!("{row:?} was re-encrypted blind as {out:?}"),
    };
    // Plaintext rows: trailing bytes, truncated msgpack, an unknown tag, bad JSON.
    assert_eq!(
        refused(TypedBytes::new("msgpack", b"\x01\x02".to_vec()))
            .kind()
            .as_str(),
        "trailing_bytes"
    );
    assert_eq!(
        refused(TypedBytes::new("msgpack", b"\x92\x01".to_vec()))
            .kind()
            .as_str(),
        "length_exceeds_input"
    );
    assert!(matches!(
        refused(TypedBytes::new("yaml", b"a: 1".to_vec())).as_tag(),
        Some(TagError::UnknownType { .. })
    ));
    assert_eq!(
        refused(TypedBytes::new("json", b"{".to_vec()))
            .kind()
            .as_str(),
        "invalid_json"
    );
    // A row under the previous key whose plaintext is corrupt.
    let corrupt = old
        .encrypt_typed(&TypedBytes::new("msgpack", b"\xc1".to_vec()), b"")
        .expect("encrypt");
    assert_eq!(refused(corrupt).kind().as_str(), "reserved_byte");
    // What reads is rekeyed; pickle rows (only Python reads them) too.
    let good = old.dumps_typed(&Value::from(7i64)).expect("dumps");
    let new = serde.rekey(&good).expect("rekey");
    assert_eq!(
        serde.loads_typed(&new.type_tag, &new.data).ok(),
        Some(Value::from(7i64))
    );
    let pickle = serde
        .rekey(&TypedBytes::new("pickle", b"\x80\x04K\x01.".to_vec()))
        .expect("pickle rows are re-encrypted");
    assert_eq!(pickle.type_tag, "pickle+aes");
}
