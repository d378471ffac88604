//! Property tests for the typed layer: arbitrary Rust values made of the
//! Python-compatible types survive every path, and both writers agree.
//!
//! For every generated state `x`:
//! - `from_slice(to_vec(x)) == x` (typed bytes read back as the same value);
//! - `msgpack::encode(to_value(x)) == to_vec(x)`: the typed serializer and the `Value`
//!   encoder are two independent writers and must give the same bytes;
//! - those bytes decode as a `Value` that re-encodes to the same bytes, and
//!   `from_value(decoded) == x`;
//! - through `JsonPlusSerializer` and `EncryptedSerializer` (EAX and GCM) the typed
//!   round trip is the identity as well.
//!
//! Which bytes each type must produce is pinned separately by Python's own vectors
//! (`tests/typed/python.rs`); these tests make sure every value of the types, not just
//! the vector ones, stays consistent.

use langgraph_codec::crypto::{AesMode, EncryptedSerializer};
use langgraph_codec::msgpack;
use langgraph_codec::typed;
use langgraph_codec::typed::pytypes::{
    AiMessage, AnyMessage, Date, DateTime, Decimal, Deque, HumanMessage, Ipv4Address, Ipv6Address,
    PySet, Send, Time, TimeDelta, ToolCall, ToolMessage, Uuid,
};
use langgraph_codec::TypedSerializerExt;
use langgraph_codec::{JsonPlusSerializer, Value};
use proptest::prelude::*;
use serde::{Deserialize, Serialize};

/// A graph state using every kind of typed value a checkpoint commonly holds.
#[derive(Serialize, Deserialize, Debug, Clone, PartialEq)]
struct State {
    when: DateTime,
    day: Date,
    at: Time,
    span: TimeDelta,
    id: Uuid,
    amount: Decimal,
    seen: PySet<i64>,
    queue: Deque<String>,
    host: Ipv4Address,
    host6: Ipv6Address,
    messages: Vec<AnyMessage>,
    next: Vec<Send>,
    note: Option<String>,
}

fn any_text() -> impl Strategy<Value = String> {
    prop_oneof![
        "[a-z ]{0,30}",
        any::<String>(),
        (0usize..300).prop_map(|n| "é".repeat(n))
    ]
}

fn any_date() -> impl Strategy<Value = Date> {
    (1i32..=9999, 1u8..=12, 1u8..=31).prop_filter_map("a real day", |(y, m, d)| Date::new(y, m, d))
}

fn any_time() -> impl Strategy<Value = Time> {
    (0u8..24, 0u8..60, 0u8..60, 0u32..1_000_000)
        .prop_filter_map("a real time", |(h, m, s, us)| Time::new(h, m, s, us))
}

fn any_timedelta() -> impl Strategy<Value = TimeDelta> {
    (-999_999_999i64..=999_999_999, 0i64..86_400, 0i64..1_000_000)
        .prop_filter_map("in Python's range", |(d, s, us)| TimeDelta::new(d, s, us))
}

fn any_datetime() -> impl Strategy<Value = DateTime> {
    let naive = (any_date(), any_time()).prop_filter_map("valid", |(d, t)| {
        DateTime::new(
            d.year(),
            d.month(),
            d.day(),
            t.hour(),
            t.minute(),
            t.second(),
            t.microsecond(),
        )
    });
    // Offsets strictly inside ±24 h, with seconds and microseconds as Python allows.
    let offset = (-86_399i64..86_400, 0i64..1_000_000)
        .prop_filter_map("an offset", |(s, us)| TimeDelta::new(0, s, us));
    (naive, proptest::option::of(offset)).prop_map(|(dt, off)| match off {
        Some(o) => dt.with_offset(o).unwrap_or(dt),
        None => dt,
    })
}

fn any_decimal() -> impl Strategy<Value = Decimal> {
    prop_oneof![
        "-?[0-9]{1,25}(\\.[0-9]{1,12})?",
        "-?[0-9]\\.[0-9]{1,6}E[+-][0-9]{1,3}",
        Just("NaN".to_owned()),
        Just("-Infinity".to_owned()),
    ]
    .prop_filter_map("Decimal parses", |s| s.parse().ok())
}

fn any_message() -> impl Strategy<Value = AnyMessage> {
    let id = proptest::option::of("[a-z0-9-]{1,36}");
    prop_oneof![
        (any_text(), id.clone()).prop_map(|(c, id)| {
            let mut m = HumanMessage::new(c);
            m.id = id;
            AnyMessage::HumanMessage(m)
        }),
        (
            any_text(),
            id.clone(),
            proptest::collection::vec(("[a-z_]{1,12}", any::<i64>(), "[a-z0-9]{1,8}"), 0..3)
        )
            .prop_map(|(c, id, calls)| {
                let mut m = AiMessage::new(c);
                m.id = id;
                m.tool_calls = calls
                    .into_iter()
                    .map(|(name, k, call_id)| {
                        ToolCall::new(
                            name,
                            Value::map([(Value::from("k"), Value::from(k))]),
                            call_id,
                        )
                    })
                    .collect();
                AnyMessage::AiMessage(m)
            }),
        (any_text(), "[a-z0-9]{1,8}", id).prop_map(|(c, call, id)| {
            let mut m = ToolMessage::for_call(c, call);
            m.id = id;
            AnyMessage::ToolMessage(m)
        }),
    ]
}

fn any_state() -> impl Strategy<Value = State> {
    (
        (
            any_datetime(),
            any_date(),
            any_time(),
            any_timedelta(),
            any::<[u8; 16]>(),
        ),
        (
            any_decimal(),
            proptest::collection::vec(any::<i64>(), 0..6),
            proptest::collection::vec(any_text(), 0..4),
        ),
        (any::<u32>(), any::<u128>()),
        proptest::collection::vec(any_message(), 0..6),
        proptest::collection::vec(("[a-z_]{1,10}", any::<i64>()), 0..3),
        proptest::option::of(any_text()),
    )
        .prop_map(
            |((when, day, at, span, id), (amount, seen, queue), (v4, v6), messages, next, note)| {
                State {
                    when,
                    day,
                    at,
                    span,
                    id: Uuid(id),
                    amount,
                    // A Python set has no duplicates.
                    seen: PySet({
                        let mut s = seen;
                        s.sort_unstable();
                        s.dedup();
                        s
                    }),
                    queue: Deque(queue),
                    host: Ipv4Address(v4.into()),
                    host6: Ipv6Address::from(std::net::Ipv6Addr::from(v6)),
                    messages,
                    next: next
                        .into_iter()
                        .map(|(node, n)| Send::new(node, Value::from(n)))
                        .collect(),
                    note,
                }
            },
        )
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn typed_bytes_and_value_bytes_agree_and_read_back(state in any_state()) {
        let bytes = typed::to_vec(&state).expect("typed write");
        prop_assert_eq!(&typed::from_slice::<State>(&bytes).expect("typed read"), &state);

        let as_value = typed::to_value(&state).expect("to Value");
        prop_assert_eq!(&msgpack::encode(&as_value).expect("Value write"), &bytes);

        let decoded = msgpack::decode(&bytes).expect("Value read");
        prop_assert_eq!(&msgpack::encode(&decoded).expect("re-encode"), &bytes);
        prop_assert_eq!(&typed::from_value::<State>(&decoded).expect("from Value"), &state);
    }

    #[test]
    fn typed_round_trips_through_plain_and_encrypted_serializers(
        state in any_state(),
        key in proptest::collection::vec(any::<u8>(), 32),
        gcm in any::<bool>(),
    ) {
        let plain = JsonPlusSerializer::new();
        let typed = plain.dumps_typed_value(&state).expect("dumps");
        prop_assert_eq!(&plain.loads_typed_value::<State>(&typed.type_tag, &typed.data).expect("loads"), &state);

        let mode = if gcm { AesMode::Gcm } else { AesMode::Eax };
        let sealed = EncryptedSerializer::from_aes_key(&key, mode).expect("a 32-byte key");
        let row = sealed.dumps_typed_value(&state).expect("encrypted dumps");
        prop_assert!(row.type_tag.starts_with("msgpack+aes"), "{}", row.type_tag);
        prop_assert_ne!(&row.data[..], &typed.data[..]);
        prop_assert_eq!(&sealed.loads_typed_value::<State>(&row.type_tag, &row.data).expect("encrypted loads"), &state);
    }
}
