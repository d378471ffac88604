//! The JSON view parser: never panics, and parsed ⇒ `to_string` ⇒ `from_str` gives the
//! same value (also through the pretty form), and its msgpack bytes are stable.
#![no_main]

use langgraph_codec::{msgpack, view};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let Ok(value) = view::from_str(text) else {
        return;
    };
    let again = view::from_str(&view::to_string(&value).expect("a view")).expect("the view reads back");
    assert_eq!(again, value);
    let pretty = view::from_str(&view::to_string_pretty(&value)).expect("pretty reads back");
    assert_eq!(pretty, value);
    // Through msgpack the bytes are stable. (The value itself may change: a view may
    // spell a structured extension raw, e.g. `{"$ext": 7, "data": "4Q=="}`, which
    // decodes as the delta snapshot it encodes.)
    if let Ok(bytes) = msgpack::encode(&value) {
        let decoded = msgpack::decode(&bytes).expect("encoded bytes decode");
        assert_eq!(msgpack::encode(&decoded).expect("re-encodes"), bytes);
    }
});
