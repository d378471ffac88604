//! Properties of the encryption layer: tampering, wrong keys, moved rows, nonce
//! uniqueness, rotation, strict mode, composition, key hygiene.

use std::collections::HashSet;
use std::sync::Arc;

use langgraph_codec::compression::CompressedSerializer;
use langgraph_codec::crypto::{
    aad, AesKey, AesMode, Cipher, EncryptedSerializer, KeyRing, Plaintext,
};
use langgraph_codec::{Error, ErrorKind, JsonPlusSerializer, Serializer, TypedBytes, Value};

const KEY_A: &[u8] = b"0123456789abcdef";
const KEY_B: &[u8] = b"langgraph-codec-key-24by";
const KEY_C: &[u8] = b"langgraph-codec-golden-key-32byt";

fn crypto_err<E: Into<Error>>(r: Result<Value, E>) -> Error {
    match r.map_err(Into::into) {
        Err(e) => e,
        other => panic!("expected a crypto error, got {other:?}"),
    }
}

fn vars<'a>(pairs: &'a [(&'a str, &'a str)]) -> impl Fn(&str) -> Option<String> + 'a {
    move |name| {
        pairs
            .iter()
            .find(|(k, _)| *k == name)
            .map(|(_, v)| (*v).to_owned())
    }
}

#[test]
fn every_flipped_bit_is_rejected() {
    for key in [KEY_A, KEY_B, KEY_C] {
        for mode in [AesMode::Eax, AesMode::Gcm] {
            let cipher = KeyRing::from_key_bytes(key, mode).expect("key");
            let (name, blob) = cipher.encrypt(b"short", b"").expect("encrypt");
            assert_eq!(blob.len(), 32 + 5);
            assert_eq!(cipher.decrypt(&name, &blob, b"").expect("intact"), b"short");
            for bit in 0..blob.len() * 8 {
                let mut bad = blob.clone();
                bad[bit / 8] ^= 1 << (bit % 8);
                match cipher.decrypt(&name, &bad, b"") {
                    Err(e) if e.kind() == ErrorKind::AuthenticationFailed => {}
                    other => panic!("{mode:?}: flipped bit {bit} gave {other:?}"),
                }
            }
        }
    }
}

#[test]
fn truncation_is_its_own_error() {
    let serde = EncryptedSerializer::from_aes_key(KEY_A, AesMode::Eax).expect("key");
    let row = serde.dumps_typed(&Value::from("abc")).expect("dumps");
    for cut in 0..32 {
        let e = crypto_err(serde.loads_typed(&row.type_tag, &row.data[..cut]));
        assert_eq!(
            (e.kind(), e.count()),
            (ErrorKind::CiphertextTruncated, Some(cut)),
            "cut {cut}: {e:?}"
        );
    }
    // Cutting into the body is an authentication failure, never partial plaintext.
    for cut in 32..row.data.len() {
        assert_eq!(
            crypto_err(serde.loads_typed(&row.type_tag, &row.data[..cut])).kind(),
            ErrorKind::AuthenticationFailed
        );
    }
}

#[test]
fn null_is_encrypted_too() {
    let serde = EncryptedSerializer::from_aes_key(KEY_A, AesMode::Gcm).expect("key");
    let row = serde.dumps_typed(&Value::Nil).expect("dumps");
    assert_eq!(row.type_tag, "null+aes");
    assert_eq!(row.data.len(), 32);
    assert_eq!(
        serde.loads_typed("null+aes", &row.data).expect("loads"),
        Value::Nil
    );
}

#[test]
fn wrong_key_is_rejected() {
    let a = EncryptedSerializer::from_aes_key(KEY_A, AesMode::Eax).expect("key");
    let b = EncryptedSerializer::from_aes_key(KEY_B, AesMode::Eax).expect("key");
    let row = a.dumps_typed(&Value::from(7i64)).expect("dumps");
    let e = crypto_err(b.loads_typed(&row.type_tag, &row.data));
    assert_eq!(
        (e.kind(), e.count()),
        (ErrorKind::AuthenticationFailed, Some(1))
    );
}

#[test]
fn ciphertext_moved_to_another_row_is_rejected() {
    let serde = EncryptedSerializer::from_aes_key(KEY_C, AesMode::Eax).expect("key");
    let value = Value::map([("secret", Value::from("for thread 1 only"))]);
    let home = aad::blob("thread-1", "", "messages", "2").expect("aad");
    let row = serde.with_aad(&home).dumps_typed(&value).expect("dumps");
    assert_eq!(
        serde
            .with_aad(&home)
            .loads_typed(&row.type_tag, &row.data)
            .expect("home row"),
        value
    );
    let elsewhere = [
        aad::blob("thread-2", "", "messages", "2"),
        aad::blob("thread-1", "sub", "messages", "2"),
        aad::blob("thread-1", "", "other", "2"),
        aad::blob("thread-1", "", "messages", "3"),
        aad::checkpoint("thread-1", "", "messages"),
        aad::write("thread-1", "", "c", "t", 0, "messages"),
        Ok(Vec::new()),
    ];
    for other in elsewhere {
        let other = other.expect("aad");
        assert_eq!(
            crypto_err(serde.with_aad(&other).loads_typed(&row.type_tag, &row.data)).kind(),
            ErrorKind::AuthenticationFailed
        );
    }
    // With the inner serializer a trait object, as a saver holds it.
    let inner: Arc<dyn Serializer> = Arc::new(JsonPlusSerializer::new());
    let shared: Arc<EncryptedSerializer<Arc<dyn Serializer>>> = Arc::new(
        EncryptedSerializer::with_shared_cipher(Arc::clone(serde.cipher()), inner),
    );
    let other = aad::blob("thread-2", "", "messages", "2").expect("aad");
    assert_eq!(
        shared
            .with_aad(&home)
            .loads_typed(&row.type_tag, &row.data)
            .expect("home"),
        value
    );
    assert!(shared
        .with_aad(&other)
        .loads_typed(&row.type_tag, &row.data)
        .is_err());
    // Also in GCM mode, and through plain loads_typed (no AAD).
    let gcm = EncryptedSerializer::from_aes_key(KEY_C, AesMode::Gcm).expect("key");
    let row = gcm.with_aad(&home).dumps_typed(&value).expect("dumps");
    assert!(gcm.loads_typed(&row.type_tag, &row.data).is_err());
}

#[test]
fn nonces_never_repeat() {
    let cipher = KeyRing::from_key_bytes(KEY_A, AesMode::Eax).expect("key");
    let mut seen = HashSet::with_capacity(100_000);
    for _ in 0..100_000 {
        let (_, blob) = cipher.encrypt(b"", b"").expect("encrypt");
        let nonce: [u8; 16] = blob[..16].try_into().expect("16 bytes");
        assert!(seen.insert(nonce), "nonce repeated");
    }
    assert_eq!(seen.len(), 100_000);
}

#[test]
fn rotated_key_ring_reads_old_rows_and_writes_new_ones() {
    let old = EncryptedSerializer::from_aes_key(KEY_A, AesMode::Eax).expect("key");
    let old_gcm = EncryptedSerializer::from_aes_key(KEY_A, AesMode::Gcm).expect("key");
    let new_only = EncryptedSerializer::from_aes_key(KEY_C, AesMode::Eax).expect("key");
    let env = [
        ("LANGGRAPH_AES_KEY", "langgraph-codec-golden-key-32byt"),
        ("LANGGRAPH_AES_KEY_PREVIOUS", "0123456789abcdef"),
    ];
    let rotated = EncryptedSerializer::from_env_vars(vars(&env)).expect("ring");

    let value = Value::map([("step", Value::from(1i64))]);
    for writer in [&old, &old_gcm] {
        let old_row = writer.dumps_typed(&value).expect("dumps");
        assert_eq!(
            rotated
                .loads_typed(&old_row.type_tag, &old_row.data)
                .expect("old row"),
            value
        );
        // Not readable by the new key alone until re-encrypted...
        assert!(new_only
            .loads_typed(&old_row.type_tag, &old_row.data)
            .is_err());
        let rekeyed = rotated.rekey(&old_row).expect("rekey");
        assert_eq!(rekeyed.type_tag, "msgpack+aes");
        assert_eq!(
            new_only
                .loads_typed(&rekeyed.type_tag, &rekeyed.data)
                .expect("rekeyed"),
            value
        );
        assert!(old.loads_typed(&rekeyed.type_tag, &rekeyed.data).is_err());
    }
    // New rows are under the primary key only.
    let new_row = rotated.dumps_typed(&value).expect("dumps");
    assert_eq!(
        new_only
            .loads_typed(&new_row.type_tag, &new_row.data)
            .expect("new"),
        value
    );
    assert!(old.loads_typed(&new_row.type_tag, &new_row.data).is_err());

    // decrypt_with_index says which key worked.
    let ring = KeyRing::from_env_vars(vars(&env)).expect("ring");
    let old_row = old.dumps_typed(&value).expect("dumps");
    assert_eq!(
        ring.decrypt_with_index(&old_row.data, b"").expect("old").1,
        1
    );
    assert_eq!(
        ring.decrypt_with_index(&new_row.data, b"").expect("new").1,
        0
    );
}

#[test]
fn rekey_encrypts_plaintext_rows_and_keeps_aad_and_empty() {
    let serde = EncryptedSerializer::from_aes_key(KEY_B, AesMode::Gcm).expect("key");
    let plain = JsonPlusSerializer::new()
        .dumps_typed(&Value::from("legacy"))
        .expect("dumps");
    let row = serde.rekey(&plain).expect("rekey");
    assert_eq!(row.type_tag, "msgpack+aes");
    assert_eq!(
        serde
            .clone()
            .with_strict(true)
            .loads_typed(&row.type_tag, &row.data)
            .expect("loads"),
        Value::from("legacy")
    );
    let empty = TypedBytes::new("empty", Vec::new());
    assert_eq!(serde.rekey(&empty).expect("empty"), empty);

    let aad = aad::write("t", "", "c", "task", -3, "__interrupt__").expect("aad");
    let bound = serde
        .with_aad(&aad)
        .dumps_typed(&Value::from(1i64))
        .expect("dumps");
    let again = serde.with_aad(&aad).rekey(&bound).expect("rekey");
    assert_ne!(again.data, bound.data);
    assert_eq!(
        serde
            .with_aad(&aad)
            .loads_typed(&again.type_tag, &again.data)
            .expect("loads"),
        Value::from(1i64)
    );
    assert!(serde.rekey(&bound).is_err(), "rekey without the row's AAD");
    // A row under a cipher nobody here knows is refused, not wrapped.
    let foreign = TypedBytes::new("msgpack+rot13", vec![1u8]);
    let e = serde.rekey(&foreign).expect_err("unknown cipher");
    assert_eq!(
        (e.kind(), e.subject()),
        (ErrorKind::UnknownCipher, Some("rot13"))
    );
}

#[test]
fn strict_mode_refuses_plaintext() {
    let lax = EncryptedSerializer::new(
        KeyRing::from_key_bytes(KEY_A, AesMode::Eax).expect("key"),
        CompressedSerializer::new(JsonPlusSerializer::new()),
    );
    let strict = lax.clone().with_strict(true);
    assert!(strict.is_strict() && !lax.is_strict());
    let compressed = CompressedSerializer::new(JsonPlusSerializer::new())
        .dumps_typed(&Value::from("z"))
        .expect("dumps");
    for (tag, data) in [
        ("msgpack", &b"\x01"[..]),
        ("null", &b""[..]),
        ("bytes", &b"raw"[..]),
        ("msgpack+zlib", &compressed.data[..]),
    ] {
        assert!(lax.loads_typed(tag, data).is_ok(), "{tag}");
        let e = crypto_err(strict.loads_typed(tag, data));
        assert_eq!(
            (e.kind(), e.type_tag()),
            (ErrorKind::PlaintextRefused, Some(tag)),
            "{tag}: {e:?}"
        );
        assert!(strict.decrypt_typed(tag, data, b"").is_err());
    }
    let row = strict.dumps_typed(&Value::from("secret")).expect("dumps");
    assert_eq!(row.type_tag, "msgpack+zlib+aes");
    assert_eq!(
        strict.loads_typed(&row.type_tag, &row.data).expect("loads"),
        Value::from("secret")
    );
}

#[test]
fn wrappers_compose_by_suffix_from_the_right() {
    let inner: Arc<dyn Serializer> = Arc::new(CompressedSerializer::new(JsonPlusSerializer::new()));
    let serde = EncryptedSerializer::new(KeyRing::new(AesKey::new(KEY_C).expect("key")), inner);
    let value = Value::from("y".repeat(2_000));
    let row = serde.dumps_typed(&value).expect("dumps");
    assert_eq!(row.type_tag, "msgpack+zlib+aes");
    assert!(row.data.len() < 200, "compressed before encryption");
    assert_eq!(
        serde.loads_typed(&row.type_tag, &row.data).expect("loads"),
        value
    );
    // Peeling one layer gives the compressed pair.
    let inner_pair = serde
        .decrypt_typed(&row.type_tag, &row.data, b"")
        .expect("peel");
    assert_eq!(inner_pair.type_tag, "msgpack+zlib");
    assert!(inner_pair.data.starts_with(b"LGZ\x01"));
    // Unknown suffix: a typed error naming it.
    let e = crypto_err(serde.loads_typed("msgpack+rot13", b"\x01"));
    assert_eq!(
        (e.kind(), e.subject()),
        (ErrorKind::UnknownCipher, Some("rot13"))
    );
    // The AES cipher itself refuses other names.
    let cipher = KeyRing::from_key_bytes(KEY_A, AesMode::Eax).expect("key");
    assert_eq!(
        cipher
            .decrypt("des", &[0u8; 40], b"")
            .map(|_| ())
            .map_err(|e| e.kind()),
        Err(ErrorKind::UnknownCipher)
    );
}

/// A user-supplied cipher (stand-in for a KMS): XOR with a constant. Not secure; it
/// shows the trait is pluggable.
#[derive(Debug)]
struct XorCipher(&'static str);

impl Cipher for XorCipher {
    fn encrypt(&self, plaintext: &[u8], _aad: &[u8]) -> Result<(String, Vec<u8>), Error> {
        Ok((
            self.0.to_owned(),
            plaintext.iter().map(|b| b ^ 0x5a).collect(),
        ))
    }
    fn decrypt(&self, name: &str, ct: &[u8], _aad: &[u8]) -> Result<Plaintext, Error> {
        if name != self.0 {
            return Err(
                Error::new(ErrorKind::UnknownCipher, format!("unknown cipher {name:?}"))
                    .with_subject(name),
            );
        }
        Ok(Plaintext::new(ct.iter().map(|b| b ^ 0x5a).collect()))
    }
}

#[test]
fn custom_ciphers_plug_in() {
    let serde = EncryptedSerializer::new(XorCipher("xor"), JsonPlusSerializer::new());
    let row = serde.dumps_typed(&Value::from(1i64)).expect("dumps");
    assert_eq!(row, TypedBytes::new("msgpack+xor", vec![0x01 ^ 0x5a]));
    assert_eq!(
        serde.loads_typed("msgpack+xor", &row.data).expect("loads"),
        Value::from(1i64)
    );
    let bad = EncryptedSerializer::new(XorCipher("x+y"), JsonPlusSerializer::new());
    let e = bad
        .dumps_typed(&Value::Nil)
        .expect_err("x+y is no cipher name");
    assert_eq!(
        (e.kind(), e.subject()),
        (ErrorKind::InvalidCipherName, Some("x+y"))
    );
}

#[test]
fn env_configuration_and_its_errors() {
    let e = KeyRing::from_env_vars(vars(&[])).expect_err("no key");
    assert_eq!(
        (e.kind(), e.subject()),
        (ErrorKind::MissingKey, Some("LANGGRAPH_AES_KEY"))
    );
    let e = KeyRing::from_env_vars(vars(&[("LANGGRAPH_AES_KEY", "supersecret-15b")]))
        .expect_err("15 bytes");
    assert_eq!(
        (e.kind(), e.count()),
        (ErrorKind::InvalidKeyLength, Some(15))
    );
    assert!(!e.to_string().contains("supersecret"));
    // Previous keys: raw text, then base64 for a key with a comma; empty entries skipped.
    let ring = KeyRing::from_env_vars(vars(&[
        ("LANGGRAPH_AES_KEY", "0123456789abcdef"),
        // base64 of b"a,cdefghijklmnop"
        (
            "LANGGRAPH_AES_KEY_PREVIOUS",
            "langgraph-codec-key-24by,,base64:YSxjZGVmZ2hpamtsbW5vcA==",
        ),
    ]))
    .expect("ring");
    assert_eq!(ring.key_count(), 3);
    let comma_key = KeyRing::from_key_bytes(b"a,cdefghijklmnop", AesMode::Gcm).expect("key");
    let (name, blob) = comma_key.encrypt(b"x", b"").expect("encrypt");
    assert_eq!(
        ring.decrypt_with_index(&blob, b"").expect("decrypt"),
        (Plaintext::new(b"x".to_vec()), 2)
    );
    assert_eq!(ring.decrypt(&name, &blob, b"").expect("decrypt"), b"x");
    let e = KeyRing::from_env_vars(vars(&[
        ("LANGGRAPH_AES_KEY", "0123456789abcdef"),
        ("LANGGRAPH_AES_KEY_PREVIOUS", "base64:not base64!"),
    ]))
    .expect_err("bad base64");
    assert_eq!(e.kind(), ErrorKind::InvalidKeyEncoding);
    assert!(!e.to_string().contains("not base64"));
}

fn leaks(text: &str, key: &[u8]) -> bool {
    let key_text = String::from_utf8_lossy(key);
    let hex_lower: String = key.iter().map(|b| format!("{b:02x}")).collect();
    let hex_upper = hex_lower.to_uppercase();
    let decimal = format!("{:?}", &key[..4]); // "[48, 49, 50, 51]"
    let decimal_inner = decimal.trim_matches(|c| c == '[' || c == ']');
    text.contains(&*key_text)
        || text.contains(&hex_lower)
        || text.contains(&hex_upper)
        || text.contains(decimal_inner)
}

#[test]
fn debug_output_shows_no_key_material() {
    for key in [KEY_A, KEY_B, KEY_C] {
        let aes_key = AesKey::new(key).expect("key");
        let cipher = KeyRing::new(aes_key.clone()).with_mode(AesMode::Gcm);
        let ring = KeyRing::new(AesKey::new(KEY_A).expect("key"))
            .with_previous(aes_key.clone())
            .expect("one previous key");
        let serde = EncryptedSerializer::new(
            ring.clone(),
            CompressedSerializer::new(JsonPlusSerializer::new()),
        );
        let shared: Arc<dyn Serializer> = Arc::new(serde.clone());
        let outputs = [
            format!("{aes_key:?}"),
            format!("{cipher:?}"),
            format!("{cipher:#?}"),
            format!("{ring:?}"),
            format!("{ring:#?}"),
            format!("{serde:?}"),
            format!("{serde:#?}"),
            format!("{shared:?}"),
        ];
        for out in outputs {
            assert!(!leaks(&out, key), "key material in {out}");
            assert!(!leaks(&out, KEY_A), "key material in {out}");
        }
        assert!(
            format!("{cipher:?}").contains("AesKey"),
            "Debug still says what it is"
        );
    }
}

#[test]
fn errors_never_contain_plaintext_or_keys() {
    let serde = EncryptedSerializer::from_aes_key(KEY_A, AesMode::Eax).expect("key");
    let row = serde
        .dumps_typed(&Value::from("TOP-SECRET-PLAINTEXT"))
        .expect("dumps");
    let mut bad = row.data.to_vec();
    let last = bad.len() - 1;
    bad[last] ^= 1;
    let errors = [
        serde
            .loads_typed(&row.type_tag, &bad)
            .expect_err("tampered"),
        serde
            .loads_typed(&row.type_tag, &row.data[..10])
            .expect_err("truncated"),
        EncryptedSerializer::from_aes_key(KEY_B, AesMode::Eax)
            .expect("key")
            .loads_typed(&row.type_tag, &row.data)
            .expect_err("wrong key"),
    ];
    for e in errors {
        let text = format!("{e} {e:?}");
        assert!(!text.contains("TOP-SECRET"), "{text}");
        assert!(!leaks(&text, KEY_A) && !leaks(&text, KEY_B), "{text}");
    }
}

#[test]
fn error_kinds_are_stable_and_distinct() {
    let serde = EncryptedSerializer::from_aes_key(KEY_A, AesMode::Eax).expect("key");
    let row = serde.dumps_typed(&Value::from(1i64)).expect("dumps");
    let kind = |r: Result<Value, Error>| r.expect_err("error").kind().as_str();
    assert_eq!(
        kind(serde.loads_typed("msgpack+aes", &row.data[..31])),
        "ciphertext_truncated"
    );
    assert_eq!(
        kind(serde.loads_typed("msgpack+aes", &[0u8; 40])),
        "authentication_failed"
    );
    assert_eq!(
        kind(serde.loads_typed("msgpack+des", &row.data)),
        "unknown_cipher"
    );
    assert_eq!(
        kind(serde.with_strict(true).loads_typed("msgpack", b"\x01")),
        "plaintext_refused"
    );
}

/// Typed (serde) values go through the encryption wrapper too: the stored pair is
/// ciphertext, and reading it back gives the typed value.
#[test]
fn typed_values_are_encrypted_and_read_back() {
    use langgraph_codec::crypto::{AesMode, EncryptedSerializer};
    use langgraph_codec::TypedSerializerExt;
    #[derive(serde::Serialize, serde::Deserialize, PartialEq, Debug)]
    struct State {
        step: u32,
        note: String,
    }
    let serde =
        EncryptedSerializer::from_aes_key(b"0123456789abcdef", AesMode::Eax).expect("16-byte key");
    let state = State {
        step: 3,
        note: "secret-note".into(),
    };
    let row = serde.dumps_typed_value(&state).expect("dumps");
    assert_eq!(row.type_tag, "msgpack+aes");
    assert!(
        !row.data.windows(11).any(|w| w == b"secret-note"),
        "plaintext at rest"
    );
    let back: State = serde
        .loads_typed_value(&row.type_tag, &row.data)
        .expect("loads");
    assert_eq!(back, state);
    // And the untyped path reads the same row.
    let value =
        langgraph_codec::Serializer::loads_typed(&serde, &row.type_tag, &row.data).expect("value");
    assert_eq!(
        value.get("note").and_then(|v| v.as_str()),
        Some("secret-note")
    );
}

/// Python's default reader, `from_pycryptodome_aes()`, knows only EAX: the env-configured
/// serializer (and a ring without `with_mode`) writes EAX, which the reference `eax`
/// crate alone opens. GCM is written only when chosen in code.
#[test]
fn the_default_from_env_writes_eax_that_pythons_default_reads() {
    use aes_gcm::aead::array::Array;
    use aes_gcm::aead::{AeadInOut, KeyInit};
    let serde =
        EncryptedSerializer::from_env_vars(vars(&[("LANGGRAPH_AES_KEY", "0123456789abcdef")]))
            .expect("env");
    let row = serde.dumps_typed(&Value::from("x")).expect("dumps");
    let eax_only = |data: &[u8]| -> bool {
        let eax = eax::Eax::<aes::Aes128>::new_from_slice(KEY_A).expect("key");
        let (nonce, rest) = data.split_at(16);
        let (tag, ct) = rest.split_at(16);
        let mut buf = ct.to_vec();
        let nonce: [u8; 16] = nonce.try_into().expect("16");
        let tag: [u8; 16] = tag.try_into().expect("16");
        eax.decrypt_inout_detached(
            &Array::from(nonce),
            b"",
            buf.as_mut_slice().into(),
            &Array::from(tag),
        )
        .is_ok()
    };
    assert!(eax_only(&row.data), "from_env must write EAX");
    let ring =
        KeyRing::from_env_vars(vars(&[("LANGGRAPH_AES_KEY", "0123456789abcdef")])).expect("env");
    assert_eq!(ring.mode(), AesMode::Eax);
    let gcm = EncryptedSerializer::from_aes_key(KEY_A, AesMode::Gcm).expect("key");
    let row = gcm.dumps_typed(&Value::from("x")).expect("dumps");
    assert!(
        !eax_only(&row.data),
        "GCM rows are what EAX-only readers refuse"
    );
}

/// The inner type tag is not covered by the ciphertext's authentication (Python's
/// format): a `msgpack+aes` row retagged `null+aes` would read as None. A `null` row
/// never carries data, so one that does is refused.
#[test]
fn a_null_row_that_carries_data_is_refused() {
    for mode in [AesMode::Eax, AesMode::Gcm] {
        let serde = EncryptedSerializer::from_aes_key(KEY_A, mode).expect("key");
        let row = serde.dumps_typed(&Value::from("secret")).expect("dumps");
        assert_eq!(row.type_tag, "msgpack+aes");
        let err = crypto_err(serde.loads_typed("null+aes", &row.data));
        assert!(
            err.kind() == ErrorKind::InnerTagMismatch && err.type_tag() == Some("null+aes"),
            "{err:?}"
        );
        assert_eq!(err.kind().as_str(), "inner_tag_mismatch");
        assert!(err.to_string().contains("null"), "{err}");
        assert!(!err.to_string().contains("secret"), "{err}");
        // Every path that opens a row refuses it: decrypt_typed and rekey too.
        assert!(serde.decrypt_typed("null+aes", &row.data, b"").is_err());
        assert!(serde
            .rekey(&TypedBytes::new("null+aes", row.data.to_vec()))
            .is_err());
        // A real null row still reads.
        let null = serde.dumps_typed(&Value::Nil).expect("dumps");
        assert_eq!(
            serde
                .loads_typed(&null.type_tag, &null.data)
                .expect("loads"),
            Value::Nil
        );
    }
}

/// A plain serializer on an encrypted store says what to use instead.
#[test]
fn a_plain_serializer_on_an_encrypted_row_says_what_to_use() {
    let serde = EncryptedSerializer::from_aes_key(KEY_A, AesMode::Eax).expect("key");
    let row = serde.dumps_typed(&Value::from(1i64)).expect("dumps");
    let err = JsonPlusSerializer::new()
        .loads_typed(&row.type_tag, &row.data)
        .expect_err("plain cannot read it");
    assert_eq!(err.kind().as_str(), "unknown_type");
    let text = err.to_string();
    assert!(text.contains("\"msgpack+aes\""), "{text}");
    assert!(text.contains("EncryptedSerializer"), "{text}");
    assert!(text.contains("LANGGRAPH_AES_KEY"), "{text}");
    // A compressed row names the compression wrapper.
    let text = JsonPlusSerializer::new()
        .loads_typed("msgpack+zlib", b"LGZ\x01")
        .expect_err("plain cannot read it")
        .to_string();
    assert!(text.contains("CompressedSerializer"), "{text}");
    // Other unknown tags are as before.
    let text = JsonPlusSerializer::new()
        .loads_typed("yaml", b"")
        .expect_err("unknown")
        .to_string();
    assert_eq!(text, "unknown serialization type \"yaml\"");
}

/// Strict mode from the environment: `LANGGRAPH_AES_STRICT`.
#[test]
fn strict_mode_from_the_environment() {
    let key = ("LANGGRAPH_AES_KEY", "0123456789abcdef");
    for (value, strict) in [
        ("1", true),
        ("true", true),
        ("yes", true),
        ("TRUE", true),
        ("Yes", true),
        ("0", false),
        ("false", false),
        ("no", false),
        ("", false),
    ] {
        let serde =
            EncryptedSerializer::from_env_vars(vars(&[key, ("LANGGRAPH_AES_STRICT", value)]))
                .unwrap_or_else(|e| panic!("{value:?}: {e}"));
        assert_eq!(serde.is_strict(), strict, "{value:?}");
        assert_eq!(
            serde.loads_typed("msgpack", b"\x01").is_err(),
            strict,
            "{value:?}"
        );
    }
    assert!(!EncryptedSerializer::from_env_vars(vars(&[key]))
        .expect("unset")
        .is_strict());
    for bad in ["on", "2", "ture", " 1x"] {
        let err = EncryptedSerializer::from_env_vars(vars(&[key, ("LANGGRAPH_AES_STRICT", bad)]))
            .expect_err(bad);
        assert_eq!(err.kind().as_str(), "invalid_setting", "{bad}");
        let text = err.to_string();
        assert!(text.contains("LANGGRAPH_AES_STRICT"), "{text}");
        assert!(text.contains("1, true, yes"), "{text}");
    }
    assert_eq!(langgraph_codec::crypto::ENV_STRICT, "LANGGRAPH_AES_STRICT");
}

/// Key-length errors name the usual mistakes.
#[test]
fn key_length_errors_name_the_usual_causes() {
    let primary = |text: &str| {
        KeyRing::from_env_vars(vars(&[("LANGGRAPH_AES_KEY", text)]))
            .expect_err("bad length")
            .to_string()
    };
    let previous = |text: &str| {
        KeyRing::from_env_vars(vars(&[
            ("LANGGRAPH_AES_KEY", "0123456789abcdef"),
            ("LANGGRAPH_AES_KEY_PREVIOUS", text),
        ]))
        .expect_err("bad length")
        .to_string()
    };
    // base64 of 32 random bytes: 44 characters.
    let b64 = "q83vEjRWeJCrze8SNFZ4kKvN7xI0VniQq83vEjRWeJA=";
    assert_eq!(b64.len(), 44);
    let e = primary(b64);
    assert!(e.contains("(it is 44 bytes)"), "{e}");
    assert!(e.contains("looks like base64"), "{e}");
    assert!(e.contains("decode it"), "{e}");
    assert!(!e.contains(b64), "{e}");
    let e = previous(b64);
    assert!(e.contains("looks like base64"), "{e}");
    assert!(e.contains("base64:<"), "{e}");
    // hex of 32 bytes: 64 characters.
    let hex = "00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff";
    let e = primary(hex);
    assert!(
        e.contains("(it is 64 bytes)") && e.contains("looks like hex"),
        "{e}"
    );
    assert!(!e.contains(hex), "{e}");
    // A trailing newline (from `echo` or a file): 17, 25, 33 bytes.
    for key in [
        "0123456789abcdef\n",
        "langgraph-codec-key-24by\n",
        "langgraph-codec-golden-key-32byt\n",
    ] {
        let e = primary(key);
        assert!(e.contains("trailing newline"), "{e}");
    }
    // A space after the comma in the previous-keys list: 33 bytes.
    let e = previous("langgraph-codec-key-24by, langgraph-codec-golden-key-32byt");
    assert!(e.contains("entry 2"), "{e}");
    assert!(e.contains("(it is 33 bytes)"), "{e}");
    assert!(e.contains("space after a comma"), "{e}");
    // A plain wrong length gets no guess: what a key is, and where the right one is.
    let e = primary("short");
    assert_eq!(
        e,
        "LANGGRAPH_AES_KEY must be 16, 24, or 32 bytes long (it is 5 bytes): set it to the key the Python service uses (16, 24 or 32 bytes of text), or unset it for a store in clear"
    );
}

/// `LANGGRAPH_AES_FALLBACK_KEYS`: decrypt-only keys with the meaning of
/// `LANGGRAPH_AES_KEY_PREVIOUS`; both set: the union, PREVIOUS first.
#[test]
fn fallback_keys_are_previous_keys_too() {
    let old = KeyRing::from_key_bytes(KEY_B, AesMode::Eax).expect("key");
    let older = KeyRing::from_key_bytes(KEY_C, AesMode::Eax).expect("key");
    let (_, old_blob) = old.encrypt(b"old", b"").expect("encrypt");
    let (_, older_blob) = older.encrypt(b"older", b"").expect("encrypt");
    let key = ("LANGGRAPH_AES_KEY", "0123456789abcdef");
    let ring = KeyRing::from_env_vars(vars(&[
        key,
        ("LANGGRAPH_AES_FALLBACK_KEYS", "langgraph-codec-key-24by"),
    ]))
    .expect("ring");
    assert_eq!(ring.key_count(), 2);
    assert_eq!(ring.decrypt_with_index(&old_blob, b"").expect("old").1, 1);
    let ring = KeyRing::from_env_vars(vars(&[
        key,
        ("LANGGRAPH_AES_KEY_PREVIOUS", "langgraph-codec-key-24by"),
        (
            "LANGGRAPH_AES_FALLBACK_KEYS",
            "base64:bGFuZ2dyYXBoLWNvZGVjLWdvbGRlbi1rZXktMzJieXQ=",
        ),
    ]))
    .expect("ring");
    assert_eq!(ring.key_count(), 3);
    assert_eq!(ring.decrypt_with_index(&old_blob, b"").expect("old").1, 1);
    assert_eq!(
        ring.decrypt_with_index(&older_blob, b"").expect("older").1,
        2
    );
    // Through the serializer too; errors name the variable and entry.
    let serde = EncryptedSerializer::from_env_vars(vars(&[
        key,
        ("LANGGRAPH_AES_FALLBACK_KEYS", "langgraph-codec-key-24by"),
    ]))
    .expect("serde");
    let row = EncryptedSerializer::from_aes_key(KEY_B, AesMode::Eax)
        .expect("key")
        .dumps_typed(&Value::from(7i64))
        .expect("dumps");
    assert_eq!(
        serde.loads_typed(&row.type_tag, &row.data).expect("loads"),
        Value::from(7i64)
    );
    let e = KeyRing::from_env_vars(vars(&[key, ("LANGGRAPH_AES_FALLBACK_KEYS", "a,bad")]))
        .expect_err("bad")
        .to_string();
    assert!(e.starts_with("LANGGRAPH_AES_FALLBACK_KEYS entry 1"), "{e}");
    assert_eq!(
        langgraph_codec::crypto::ENV_FALLBACK_KEYS,
        "LANGGRAPH_AES_FALLBACK_KEYS"
    );
}

/// Turning encryption on without downtime starts with the key deployed decrypt-only:
/// with only `LANGGRAPH_AES_FALLBACK_KEYS` (or `_PREVIOUS`) set, `from_env` gives a
/// serializer that writes rows in clear, exactly as the plain serializer does, and reads
/// rows a process that already has `LANGGRAPH_AES_KEY` encrypted. Without it, a Rust
/// process not yet restarted fails on the first encrypted row.
#[test]
fn decrypt_only_keys_write_in_clear_and_read_encrypted_rows() {
    const KEY: &str = "decrypt-only-key-0123456789abcde";
    for var in ["LANGGRAPH_AES_FALLBACK_KEYS", "LANGGRAPH_AES_KEY_PREVIOUS"] {
        let serde =
            EncryptedSerializer::from_env_vars(|name| (name == var).then(|| KEY.to_owned()))
                .expect("decrypt-only keys are a valid configuration");
        assert!(serde.writes_in_clear());
        let value = Value::from("state");
        let row = serde.dumps_typed(&value).expect("dumps");
        let plain = JsonPlusSerializer::new()
            .dumps_typed(&value)
            .expect("plain");
        assert_eq!(
            (row.type_tag.as_str(), &row.data[..]),
            (plain.type_tag.as_str(), &plain.data[..])
        );
        let none = serde.dumps_typed(&Value::Nil).expect("dumps None");
        assert_eq!((none.type_tag.as_str(), none.data.len()), ("null", 0));
        // A row written by a process that has the key as its primary.
        let full = EncryptedSerializer::from_aes_key(KEY.as_bytes(), AesMode::Eax).expect("key");
        let encrypted = full.dumps_typed(&value).expect("encrypt");
        assert_eq!(
            serde
                .loads_typed(&encrypted.type_tag, &encrypted.data)
                .expect("reads"),
            value
        );
        assert_eq!(
            serde
                .loads_typed(&row.type_tag, &row.data)
                .expect("reads clear"),
            value
        );
    }
    // Strict mode refuses rows in clear, which a decrypt-only serializer writes: refused.
    let err = EncryptedSerializer::from_env_vars(|name| match name {
        "LANGGRAPH_AES_FALLBACK_KEYS" => Some(KEY.to_owned()),
        "LANGGRAPH_AES_STRICT" => Some("1".to_owned()),
        _ => None,
    })
    .expect_err("strict mode without a primary key");
    assert_eq!(
        err.kind(),
        langgraph_codec::ErrorKind::InvalidSetting,
        "{err}"
    );
    // No key at all is still an error, and a primary key still encrypts.
    let err = EncryptedSerializer::from_env_vars(|_| None).expect_err("no key");
    assert_eq!(err.kind(), langgraph_codec::ErrorKind::MissingKey);
    let serde = EncryptedSerializer::from_env_vars(|name| {
        (name == "LANGGRAPH_AES_KEY").then(|| KEY.to_owned())
    })
    .expect("primary");
    assert!(!serde.writes_in_clear());
    assert_eq!(
        serde
            .dumps_typed(&Value::from(1i64))
            .expect("dumps")
            .type_tag,
        "msgpack+aes"
    );
}
