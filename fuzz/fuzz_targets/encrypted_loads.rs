//! `EncryptedSerializer::loads_typed` on arbitrary ciphertext: never panics, and
//! forged or corrupted rows are refused. The same input is also encrypted for real
//! (EAX and GCM) so the fuzzer reaches the decoders behind authentication: a genuine
//! row must read back exactly as the plaintext pair does.
#![no_main]

use langgraph_codec::crypto::{AesMode, EncryptedSerializer};
use langgraph_codec::{JsonPlusSerializer, Serializer};
use libfuzzer_sys::fuzz_target;

const KEY: &[u8; 16] = b"0123456789abcdef";
const TAGS: [&str; 8] = [
    "msgpack+aes",
    "json+aes",
    "null+aes",
    "bytes+aes",
    "msgpack",
    "msgpack+zlib+aes",
    "msgpack+des",
    "+aes",
];

fuzz_target!(|input: &[u8]| {
    let Some((&selector, data)) = input.split_first() else {
        return;
    };
    let tag = TAGS[usize::from(selector) % TAGS.len()];
    let plain = JsonPlusSerializer::new();
    for mode in [AesMode::Eax, AesMode::Gcm] {
        let serde = EncryptedSerializer::from_aes_key(KEY, mode).expect("16-byte key");
        // Arbitrary bytes as ciphertext: an error (or, for the unencrypted tag, the
        // plain reading), never a panic.
        let read = serde.loads_typed(tag, data);
        if tag == "msgpack" {
            assert_eq!(read.ok(), plain.loads_typed("msgpack", data).ok());
        } else if let Some(inner) = tag.strip_suffix("+aes") {
            // Random bytes authenticate with probability 2^-128: anything that reads
            // must at least be a well-formed ciphertext.
            if read.is_ok() {
                assert!(data.len() >= 32 && !inner.is_empty());
            }
        }
        // A genuine row of `data` as msgpack reads back as the plaintext row does.
        let genuine = serde.dumps_typed(&langgraph_codec::Value::Bin(data.to_vec().into()));
        let row = genuine.expect("bin encrypts");
        assert_eq!(row.type_tag, "bytes+aes");
        let back = serde.loads_typed(&row.type_tag, &row.data).expect("own row reads");
        assert_eq!(back, langgraph_codec::Value::Bin(data.to_vec().into()));
        if let Ok(value) = plain.loads_typed("msgpack", data) {
            let row = serde.dumps_typed(&value).expect("encrypts");
            let back = serde.loads_typed(&row.type_tag, &row.data).expect("own row reads");
            assert_eq!(back, value);
        }
    }
});
