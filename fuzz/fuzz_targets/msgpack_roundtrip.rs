//! msgpack decode: never panics, and decoded ⇒ re-encodes to the same bytes (with the
//! default options, which refuse non-canonical forms and trailing bytes). With
//! non-canonical forms allowed, the canonical re-encoding decodes to the same value.
#![no_main]

use langgraph_codec::msgpack::{self, DecodeOptions};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(value) = msgpack::decode(data) {
        let bytes = msgpack::encode(&value).expect("a decoded value encodes");
        assert_eq!(bytes, data);
    }
    let liberal = DecodeOptions::new().allow_non_canonical(true);
    if let Ok(value) = liberal.decode(data) {
        let bytes = msgpack::encode(&value).expect("a decoded value encodes");
        let again = msgpack::decode(&bytes).expect("canonical bytes decode strictly");
        assert_eq!(again, value);
    }
});
