//! `JsonPlusSerializer::loads_typed` on every tag: never panics; a decoded msgpack row
//! re-encodes to the same bytes and its JSON view reads back to the same value.
#![no_main]

use langgraph_codec::{msgpack, view, JsonPlusSerializer, Serializer, Value};
use libfuzzer_sys::fuzz_target;

const TAGS: [&str; 8] = [
    "msgpack",
    "json",
    "null",
    "bytes",
    "bytearray",
    "pickle",
    "empty",
    "yaml",
];

fuzz_target!(|input: &[u8]| {
    let Some((&selector, data)) = input.split_first() else {
        return;
    };
    let tag = TAGS[usize::from(selector) % TAGS.len()];
    let serde = JsonPlusSerializer::new();
    let Ok(value) = serde.loads_typed(tag, data) else {
        return;
    };
    match tag {
        "msgpack" => {
            let bytes = msgpack::encode(&value).expect("a decoded value encodes");
            assert_eq!(bytes, data, "msgpack row must re-encode byte for byte");
            let shared = serde
                .loads_typed_bytes(tag, &bytes::Bytes::copy_from_slice(data))
                .expect("the sharing decoder agrees");
            assert_eq!(shared, value);
        }
        "bytes" | "bytearray" => assert_eq!(value, Value::Bin(data.to_vec().into())),
        "null" => assert_eq!(value, Value::Nil),
        _ => {}
    }
    let text = view::to_string(&value).expect("a view");
    let back = view::from_str(&text).expect("a view reads back");
    assert_eq!(back, value, "view round trip of {text}");
});
