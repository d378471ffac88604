//! The typed serde layer on arbitrary bytes: `typed::from_slice` into a graph state of
//! Python-compatible types (messages, datetimes, UUIDs, sets, `Send`, `Value` parts)
//! never panics, and whatever it accepts writes back to bytes that read back to the
//! same state. The byte-identical round trip is not asserted: typed reads accept
//! inputs whose fields come in another order or carry unknown keys.
#![no_main]

use langgraph_codec::typed::pytypes::{
    AnyMessage, DateTime, Decimal, PySet, Send, TimeDelta, Uuid,
};
use langgraph_codec::typed;
use langgraph_codec::TypedSerializerExt;
use langgraph_codec::{JsonPlusSerializer, Value};
use libfuzzer_sys::fuzz_target;
use serde::{Deserialize, Serialize};

#[derive(Serialize, Deserialize, Debug, PartialEq)]
struct State {
    messages: Vec<AnyMessage>,
    #[serde(default)]
    when: Option<DateTime>,
    #[serde(default)]
    span: Option<TimeDelta>,
    #[serde(default)]
    id: Option<Uuid>,
    #[serde(default)]
    amount: Option<Decimal>,
    #[serde(default)]
    seen: Option<PySet<i64>>,
    #[serde(default)]
    next: Vec<Send>,
    #[serde(default)]
    extra: Option<Value>,
}

fuzz_target!(|data: &[u8]| {
    let serde = JsonPlusSerializer::new();
    for read in [
        typed::from_slice::<State>(data).ok(),
        serde.loads_typed_value::<State>("msgpack", data).ok(),
        typed::from_slice::<Vec<AnyMessage>>(data)
            .ok()
            .map(|messages| State {
                messages,
                when: None,
                span: None,
                id: None,
                amount: None,
                seen: None,
                next: Vec::new(),
                extra: None,
            }),
    ]
    .into_iter()
    .flatten()
    {
        let bytes = typed::to_vec(&read).expect("an accepted state writes");
        let back: State = typed::from_slice(&bytes).expect("what was written reads back");
        // NaN payloads in `extra` compare by bits, so equality is exact.
        assert_eq!(back, read);
    }
    // Untyped reads of the same bytes never panic either.
    let _ = typed::from_slice::<Value>(data);
});
