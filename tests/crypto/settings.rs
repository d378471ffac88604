//! AES settings: modes by name, key lengths (AES-128/192/256, checked against
//! RustCrypto's `aes-gcm`) and how a key reports its size, ciphers behind `Box` and
//! `Arc`, the AAD bytes a row is bound to, and strict mode on the typed read path.
//! Several tests reach a behaviour by a second road beside the first test named in
//! their comment; expected values come from Python's source or the specs.

use std::sync::Arc;

use langgraph_codec::crypto::{aad, AesMode, Cipher, EncryptedSerializer, KeyRing};
use langgraph_codec::{JsonPlusSerializer, Serializer, TypedBytes, Value};
use langgraph_codec::{TypedOptions, TypedSerializerExt};

// ---- strict mode on the typed read path ------------------------------------------
// First test: tests/crypto/encryption.rs `strict_mode_refuses_plaintext` (Value path).

const KEY: &[u8] = b"0123456789abcdef0123456789abcdef";

fn strict() -> EncryptedSerializer {
    EncryptedSerializer::from_aes_key(KEY, AesMode::Eax)
        .expect("32-byte key")
        .with_strict(true)
}

/// Plaintext rows of every tag JsonPlus writes are refused by a strict serializer's
/// typed reads, as its `Value` reads refuse them.
#[test]
fn strict_typed_reads_refuse_plaintext_of_every_tag() {
    let plain = JsonPlusSerializer::new();
    let s = strict();
    let rows: Vec<TypedBytes> = vec![
        plain.dumps_typed(&Value::from("secret")).expect("msgpack"),
        plain.dumps_typed(&Value::Nil).expect("null"),
        plain
            .dumps_typed(&Value::Bin(vec![1u8, 2, 3].into()))
            .expect("bytes"),
        TypedBytes::new("json", b"\"secret\"".to_vec()),
    ];
    for row in rows {
        assert!(
            s.loads_typed(&row.type_tag, &row.data).is_err(),
            "{}: Value read accepted plaintext",
            row.type_tag
        );
        let typed = s.loads_typed_value::<Option<String>>(&row.type_tag, &row.data);
        assert!(
            matches!(&typed, Err(e) if e.kind() == langgraph_codec::ErrorKind::PlaintextRefused),
            "{}: typed read accepted plaintext: {typed:?}",
            row.type_tag
        );
        let with = TypedOptions::new()
            .fallback(langgraph_codec::typed::JsonFallback)
            .loads_typed_value::<_, Option<String>>(&s, &row.type_tag, &row.data);
        assert!(
            with.is_err(),
            "{}: typed read (with fallback) accepted plaintext",
            row.type_tag
        );
    }
}

/// A strict serializer's own typed rows read back; the same rows with the encryption
/// peeled off (what a downgrade attack stores) are refused.
#[test]
fn strict_typed_reads_take_ciphertext_and_refuse_it_decrypted() {
    #[derive(serde::Serialize, serde::Deserialize, Debug, PartialEq)]
    struct State {
        messages: Vec<String>,
        step: i64,
    }
    let s = strict();
    let state = State {
        messages: vec!["hi".into()],
        step: 3,
    };
    let row = s.dumps_typed_value(&state).expect("dumps");
    assert!(row.type_tag.ends_with("+aes"), "{}", row.type_tag);
    assert_eq!(
        s.loads_typed_value::<State>(&row.type_tag, &row.data)
            .expect("loads"),
        state
    );
    let peeled = s
        .decrypt_typed(&row.type_tag, &row.data, b"")
        .expect("decrypts");
    assert_eq!(peeled.type_tag, "msgpack");
    assert!(s
        .loads_typed_value::<State>(&peeled.type_tag, &peeled.data)
        .is_err());
    // Non-strict reads it (so the refusal above is strict mode's doing).
    assert_eq!(
        s.clone()
            .with_strict(false)
            .loads_typed_value::<State>(&peeled.type_tag, &peeled.data)
            .expect("lax loads"),
        state
    );
}

// ---- AES modes by name --------------------------------------------------------------

#[test]
fn aes_modes_parse_by_name_in_any_case_and_nothing_else() {
    for (name, mode) in [
        ("eax", Some(AesMode::Eax)),
        ("EAX", Some(AesMode::Eax)),
        ("gcm", Some(AesMode::Gcm)),
        ("Gcm", Some(AesMode::Gcm)),
        ("cbc", None),
        ("", None),
        ("eax ", None),
    ] {
        assert_eq!(AesMode::from_name(name), mode, "{name:?}");
    }
    for mode in [AesMode::Eax, AesMode::Gcm] {
        assert_eq!(AesMode::from_name(mode.as_str()), Some(mode));
    }
}

// ---- AES key lengths ---------------------------------------------------------------
// First tests: crypto/key.rs `lengths_follow_aes` and tests/interop/crypto_vectors.rs (Python
// rows under 16-, 24- and 32-byte keys).

/// A 16/24/32-byte key is AES-128/192/256: GCM rows decrypt with RustCrypto's
/// `aes-gcm` directly (`nonce(16) | tag(16) | ciphertext`, pycryptodome's layout).
#[test]
fn key_lengths_select_aes_128_192_256() {
    use aes_gcm::aead::consts::U16;
    use aes_gcm::aead::{Aead, KeyInit, Payload};
    use aes_gcm::aes::{Aes128, Aes192, Aes256};
    use aes_gcm::AesGcm;

    fn open<C: KeyInit + Aead>(key: &[u8], blob: &[u8]) -> Option<Vec<u8>> {
        let cipher = C::new_from_slice(key).ok()?;
        let (nonce, rest) = blob.split_at(16);
        let (tag, body) = rest.split_at(16);
        let mut ct = body.to_vec();
        ct.extend_from_slice(tag);
        cipher
            .decrypt(nonce.try_into().ok()?, Payload { msg: &ct, aad: b"" })
            .ok()
    }
    let key: Vec<u8> = (0u8..32).collect();
    for len in [16usize, 24, 32] {
        let k = &key[..len];
        let s = EncryptedSerializer::from_aes_key(k, AesMode::Gcm).expect("valid length");
        let row = s.dumps_typed(&Value::from("secret")).expect("dumps");
        let plain = JsonPlusSerializer::new()
            .dumps_typed(&Value::from("secret"))
            .expect("plain");
        let opened = [
            open::<AesGcm<Aes128, U16>>(k, &row.data),
            open::<AesGcm<Aes192, U16>>(k, &row.data),
            open::<AesGcm<Aes256, U16>>(k, &row.data),
        ];
        let which: Vec<usize> = opened
            .iter()
            .enumerate()
            .filter(|(_, o)| o.as_deref() == Some(&plain.data[..]))
            .map(|(i, _)| [16, 24, 32][i])
            .collect();
        assert_eq!(which, [len], "a {len}-byte key");
    }
}

/// Every other length is refused with a typed error, through the serializer's
/// constructor (the first test checks `AesKey::new`).
#[test]
fn other_key_lengths_are_refused_by_the_serializer() {
    for len in (0..=64).filter(|n| !matches!(n, 16 | 24 | 32)) {
        let key = vec![b'k'; len];
        for mode in [AesMode::Eax, AesMode::Gcm] {
            assert!(
                EncryptedSerializer::from_aes_key(&key, mode).is_err(),
                "{len}-byte key accepted"
            );
        }
    }
}

#[test]
fn key_sizes_are_reported_in_bytes_and_bits() {
    use langgraph_codec::crypto::AesKey;
    for (len, bits) in [(16, 128), (24, 192), (32, 256)] {
        let key = AesKey::new(&vec![7u8; len]).expect("valid length");
        assert_eq!((key.len(), key.bits(), key.is_empty()), (len, bits, false));
        assert_eq!(format!("{key:?}"), format!("AesKey {{ bits: {bits}, .. }}"));
    }
}

// ---- ciphers behind Box and Arc -----------------------------------------------------

#[test]
fn boxed_and_shared_ciphers_behave_as_the_cipher_they_hold() {
    let key = b"0123456789abcdef";
    let plain = KeyRing::from_key_bytes(key, AesMode::Eax).expect("key");
    let boxed: Box<dyn Cipher> = Box::new(plain.clone());
    let shared: Arc<dyn Cipher> = Arc::new(plain.clone());
    let boxed_concrete = Box::new(plain.clone());
    let shared_concrete = Arc::new(plain.clone());
    let wrappers: [(&str, &dyn Cipher); 4] = [
        ("Box<dyn Cipher>", &boxed),
        ("Arc<dyn Cipher>", &shared),
        ("Box<KeyRing>", &boxed_concrete),
        ("Arc<KeyRing>", &shared_concrete),
    ];
    for (what, cipher) in wrappers {
        // Python's AES cipher is named "aes"; other suffixes are not its rows.
        assert!(cipher.accepts("aes"), "{what}");
        assert!(!cipher.accepts("zlib"), "{what}");
        let (name, blob) = cipher.encrypt(b"hello", b"row").expect("encrypts");
        assert_eq!(name, "aes", "{what}");
        // nonce (16) | tag (16) | ciphertext (5), readable by the bare cipher.
        assert_eq!(blob.len(), 16 + 16 + 5, "{what}");
        assert_eq!(
            plain.decrypt("aes", &blob, b"row").expect("opens"),
            b"hello",
            "{what}"
        );
        let (_, theirs) = plain.encrypt(b"world", b"").expect("encrypts");
        assert_eq!(
            cipher.decrypt("aes", &theirs, b"").expect("opens"),
            b"world",
            "{what}"
        );
        assert!(
            cipher.decrypt("aes", &theirs, b"other row").is_err(),
            "{what}"
        );
    }
}

// ---- AAD field encoding --------------------------------------------------------------
// First test: crypto/aad.rs `matches_python_struct_encoding`.

/// `b"langgraph-aad-v1" | u32be(len(kind)) | kind | u32be(n) | (u32be(len(f)) | f)*`,
/// written out byte by byte here (PROTOCOL.md section 4), for fields with multi-byte
/// UTF-8, empty strings and a negative index; and a row sealed under it opens only
/// under the same bytes.
#[test]
fn aad_bytes_follow_the_spec_and_bind_the_row() {
    fn field(out: &mut Vec<u8>, f: &str) {
        out.extend_from_slice(&(f.len() as u32).to_be_bytes());
        out.extend_from_slice(f.as_bytes());
    }
    let mut want = b"langgraph-aad-v1".to_vec();
    field(&mut want, "write");
    want.extend_from_slice(&6u32.to_be_bytes());
    for f in ["thé", "", "cp", "task-1", "-4", "__resume__"] {
        field(&mut want, f);
    }
    let got = aad::write("thé", "", "cp", "task-1", -4, "__resume__").expect("aad");
    assert_eq!(got, want);
    // Lengths are bytes, not characters: "thé" is 4.
    assert_eq!(
        &want[16 + 4 + 5 + 4..16 + 4 + 5 + 4 + 4],
        &4u32.to_be_bytes()
    );

    let s = EncryptedSerializer::from_aes_key(KEY, AesMode::Eax).expect("key");
    let row = s
        .with_aad(&want)
        .dumps_typed(&Value::from("v"))
        .expect("seal");
    assert_eq!(
        s.with_aad(&got)
            .loads_typed(&row.type_tag, &row.data)
            .expect("same AAD opens"),
        Value::from("v")
    );
    let other = aad::write("thé", "", "cp", "task-1", -3, "__resume__").expect("aad");
    assert!(s
        .with_aad(&other)
        .loads_typed(&row.type_tag, &row.data)
        .is_err());
}
