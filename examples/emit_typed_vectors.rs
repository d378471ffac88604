//! Writes typed Rust values as `(type, bytes)` vectors for the Python check
//! (`vectors/check_rust_typed.py`): one JSON line `{"name", "type", "data": base64}` per
//! value.
//!
//! ```text
//! cargo run --example emit_typed_vectors -- vectors/rust_typed.jsonl
//! ```
//!
//! The Python script builds the Python value each one must equal from first principles,
//! decodes the Rust bytes with the real `langgraph-checkpoint`, and compares both the
//! values and the bytes Python itself writes for the expected value.

use base64::Engine;
use langgraph_codec::typed::pytypes::*;
use langgraph_codec::typed::{self, JsonFallback};
use langgraph_codec::{NdArray, Value};
use serde::{Deserialize, Serialize};

#[path = "../tests/typed/common/pytypes.rs"]
mod pytypes_classes;
use pytypes_classes::*;

#[derive(Serialize, Deserialize, Debug, PartialEq)]
pub struct Extra {
    pub when: Date,
}

#[derive(Serialize, Deserialize, Debug, PartialEq)]
pub struct Nested {
    pub name: String,
    pub inner: Dataclass<Simple>,
    pub tags: Vec<String>,
    pub color: PyEnumValue<Color>,
    pub extra: Extra,
}
impl PyClass for Nested {
    const MODULE: &'static str = "pytypes";
    const NAME: &'static str = "Nested";
}

/// The messages channel of the checkpoint below.
#[derive(Serialize, Deserialize, Debug, PartialEq)]
pub struct Channels {
    pub messages: Vec<AnyMessage>,
    #[serde(rename = "__start__")]
    pub start: Value,
}

/// A full checkpoint, as `Checkpoint` is written by a saver.
#[derive(Serialize, Deserialize, Debug, PartialEq)]
pub struct Checkpoint {
    pub v: i64,
    pub id: String,
    pub ts: String,
    pub channel_values: Channels,
    pub channel_versions: Value,
    pub versions_seen: Value,
    pub updated_channels: Vec<String>,
}

/// An agent state: typed messages, a datetime, and untyped parts.
#[derive(Serialize, Deserialize, Debug, PartialEq)]
pub struct AgentState {
    pub messages: Vec<AnyMessage>,
    pub started: DateTime,
    pub seen: PySet<i64>,
    pub budget: Decimal,
    pub run: Uuid,
    pub scratch: Value,
}

fn map(entries: Vec<(&str, Value)>) -> Value {
    Value::map(entries)
}

fn v<T: Serialize>(value: &T) -> Value {
    typed::to_value(value).unwrap_or_default()
}

fn search_call() -> ToolCall {
    ToolCall::new(
        "search",
        map(vec![("q", "weather in Paris".into()), ("k", 3i64.into())]),
        "call_1",
    )
}

fn ai_with_tool_calls() -> AiMessage {
    AiMessage {
        tool_calls: vec![
            search_call(),
            ToolCall::new("calc", map(vec![("expr", "1+1".into())]), "call_2"),
        ],
        ..AiMessage::new("").with_id("a2")
    }
}

fn conversation() -> Vec<AnyMessage> {
    vec![
        SystemMessage::new("Be brief.").with_id("s1").into(),
        HumanMessage::new("weather?").with_id("h1").into(),
        ai_with_tool_calls().into(),
        ToolMessage::for_call("sunny", "call_1")
            .with_id("t1")
            .into(),
        AiMessage::new("It is sunny.").with_id("a3").into(),
    ]
}

type Entry = (
    String,
    Result<langgraph_codec::TypedBytes, langgraph_codec::Error>,
);

fn entry<T: Serialize + ?Sized>(name: &str, value: &T) -> Entry {
    (
        name.to_owned(),
        typed::dumps(value, &JsonFallback).map_err(Into::into),
    )
}

/// Every vector, in order.
pub fn entries() -> Vec<Entry> {
    let td = |d, s, us| TimeDelta::new(d, s, us).unwrap_or_default();
    let dt = |y, mo, d, h, mi, s, us| {
        DateTime::new(y, mo, d, h, mi, s, us)
            .unwrap_or_else(|| DateTime::new(1, 1, 1, 0, 0, 0, 0).unwrap_or_else(|| unreachable!()))
    };
    let t = |h, m, s, us| Time::new(h, m, s, us).unwrap_or_default();
    let mut out: Vec<Entry> = Vec::new();
    let mut push = |e: Entry| out.push(e);

    // Scalars and top-level tags.
    push(entry("none", &None::<i64>));
    push(entry("bytes_top", &ByteBuf(b"\x00\x01binary".to_vec())));
    push(entry("int_small", &7i64));
    push(entry("int_neg", &-200i32));
    push(entry("int_u64_max", &u64::MAX));
    push(entry("int_i64_min", &i64::MIN));
    push(entry("float_quarter", &0.25f64));
    push(entry("float_f32_widened", &1.5f32));
    push(entry("bool_true", &true));
    push(entry("str_unicode", "héllo 🦜"));
    push(entry("str_300", &"x".repeat(300)));
    push(entry("list_ints", &vec![1i64, 2, 3]));
    push(entry(
        "tuple_mixed",
        &(1i64, "a", None::<i64>, 2.5f64, true),
    ));
    push(entry("char_as_str", &'é'));
    #[derive(Serialize)]
    struct WithBlob {
        blob: ByteBuf,
        tag: &'static str,
    }
    push(entry(
        "struct_with_bin",
        &WithBlob {
            blob: ByteBuf(vec![0, 255]),
            tag: "t",
        },
    ));
    let mut int_keys = std::collections::BTreeMap::new();
    int_keys.insert(-2i64, "b");
    int_keys.insert(1i64, "a");
    push(entry("map_int_keys", &int_keys));
    #[derive(Serialize)]
    struct Opt {
        x: i64,
        y: Option<i64>,
        z: Option<&'static str>,
    }
    push(entry(
        "struct_options",
        &Opt {
            x: 1,
            y: None,
            z: Some("zz"),
        },
    ));
    #[derive(Serialize)]
    enum Shape {
        Unit,
        Circle(f64),
        Rect { w: i64, h: i64 },
    }
    push(entry("enum_unit_variant", &Shape::Unit));
    push(entry("enum_newtype_variant", &Shape::Circle(1.5)));
    push(entry("enum_struct_variant", &Shape::Rect { w: 2, h: 3 }));
    push(entry("big_int_json_fallback", &(1i128 << 80)));

    // ext 0: single-argument constructors.
    push(entry(
        "uuid",
        &"12345678-1234-4678-9234-567812345678"
            .parse::<Uuid>()
            .unwrap_or_default(),
    ));
    push(entry("uuid_nil", &Uuid([0; 16])));
    for (name, s) in [
        ("decimal_1_10", "1.10"),
        ("decimal_neg0", "-0"),
        ("decimal_nan", "NaN"),
        ("decimal_exp", "-1.5E-7"),
    ] {
        if let Ok(d) = s.parse::<Decimal>() {
            push(entry(name, &d));
        }
    }
    push(entry("set_ints", &PySet(vec![1i64, 2, 3])));
    push(entry("set_strs", &PySet(vec!["b", "a"])));
    push(entry("frozenset", &FrozenSet(vec![1i64, 2])));
    push(entry(
        "deque",
        &Deque(vec![v(&1i64), "a".into(), Value::Array(vec![2i64.into()])]),
    ));
    let ip = |s: &str| s.to_owned();
    if let (Ok(a), Ok(n), Ok(i)) = (
        ip("192.168.1.1").parse::<Ipv4Address>(),
        ip("10.0.0.0/8").parse::<Ipv4Network>(),
        ip("10.0.0.5/24").parse::<Ipv4Interface>(),
    ) {
        push(entry("ipv4_address", &a));
        push(entry("ipv4_network", &n));
        push(entry("ipv4_interface", &i));
    }
    if let (Ok(a), Ok(n), Ok(i), Ok(m)) = (
        ip("2001:db8::1").parse::<Ipv6Address>(),
        ip("2001:db8::/32").parse::<Ipv6Network>(),
        ip("2001:db8::1/64").parse::<Ipv6Interface>(),
        ip("::ffff:1.2.3.4").parse::<Ipv6Address>(),
    ) {
        push(entry("ipv6_address", &a));
        push(entry("ipv6_network", &n));
        push(entry("ipv6_interface", &i));
        push(entry("ipv6_mapped", &m));
    }
    push(entry("zoneinfo", &ZoneInfo::new("Europe/Paris")));
    push(entry("enum_str", &PyEnumValue(Color::Red)));
    push(entry("enum_int", &PyEnumValue(Color::Blue)));
    push(entry("enum_tuple", &PyEnumValue(Color::Tuple)));
    push(entry("intenum_big", &PyEnumValue(Priority::Huge)));
    push(entry("intenum", &PyEnumValue(Priority::High)));
    push(entry("strenum_unicode", &PyEnumValue(Mode::Unicode)));

    // ext 1: positional constructors.
    push(entry("timedelta", &td(1, 2, 3)));
    push(entry("timedelta_negative", &td(0, -1, 0)));
    push(entry("timedelta_big", &td(999_999_999, 86399, 999_999)));
    push(entry("date", &Date::new(2024, 2, 29)));
    push(entry("date_min", &Date::new(1, 1, 1)));
    push(entry("timezone_utc", &TimeZone::utc()));
    push(entry(
        "timezone_named",
        &TimeZone::with_name(td(0, 19800, 0), "IST"),
    ));
    push(entry(
        "timezone_negative_seconds",
        &TimeZone::new(td(0, -3615, 0)),
    ));
    push(entry("path_abs", &PurePath::posix("/usr/local/lib")));
    push(entry("path_rel", &PurePath::posix("data/ünï/🦜.json")));
    push(entry("path_dot", &PurePath::posix(".")));
    push(entry("regex", &Pattern::new("^a+b*$")));
    push(entry(
        "regex_flags",
        &Pattern::with_flags(r"hello\s+world", Pattern::IGNORECASE | Pattern::MULTILINE),
    ));
    push(entry(
        "regex_ascii",
        &Pattern::with_flags(r"\w+", Pattern::ASCII),
    ));
    push(entry(
        "send",
        &Send::new("worker", map(vec![("item", 1i64.into())])),
    ));
    let mut timed = Send::new("worker", Value::Array(vec![1i64.into(), 2i64.into()]));
    timed.timeout = Some(TimeoutPolicy {
        run_timeout: Some(10.0),
        idle_timeout: Some(2.5),
        refresh_on: "heartbeat".into(),
    });
    push(entry("send_timeout", &timed));
    push(entry(
        "send_message_arg",
        &Send::new("n", HumanMessage::new("m").with_id("sm1")),
    ));

    // ext 2: keyword constructors (time, dataclasses, namedtuples).
    push(entry("time", &t(12, 30, 45, 0)));
    push(entry("time_micro_fold", &t(1, 30, 0, 7).with_fold(true)));
    push(entry(
        "time_utc",
        &t(8, 0, 0, 0).with_tzinfo(TzInfo::TimeZone(TimeZone::utc())),
    ));
    push(entry(
        "time_zoneinfo",
        &t(9, 15, 0, 0).with_tzinfo(TzInfo::ZoneInfo(ZoneInfo::new("America/New_York"))),
    ));
    push(entry(
        "timeout_policy",
        &TimeoutPolicy {
            run_timeout: Some(1.5),
            ..TimeoutPolicy::default()
        },
    ));
    push(entry(
        "interrupt",
        &Interrupt::new(map(vec![("question", "approve?".into())]), "i1"),
    ));
    push(entry(
        "interrupt_default_id",
        &Interrupt::new("need input", "placeholder-id"),
    ));
    push(entry("command_resume", &Command::resume("yes")));
    push(entry("command_goto", &Command::goto("node_x")));
    push(entry(
        "command_update_goto_send",
        &Command {
            update: map(vec![(
                "messages",
                v(&vec![AnyMessage::from(AiMessage::new("cmd").with_id("c1"))]),
            )]),
            goto: Value::Array(vec![
                v(&Send::new("worker", map(vec![("i", 1i64.into())]))),
                "other".into(),
            ]),
            ..Command::default()
        },
    ));
    push(entry(
        "command_parent",
        &Command {
            graph: Some("__parent__".into()),
            update: map(vec![("x", 1i64.into())]),
            goto: "parent_node".into(),
            ..Command::default()
        },
    ));
    push(entry("namedtuple", &NamedTuple(Point { x: 1i64, y: 2 })));
    push(entry(
        "namedtuple_nested",
        &NamedTuple(Point {
            x: Value::Array(vec![1i64.into()]),
            y: v(&NamedTuple(Point::<Value> {
                x: "a".into(),
                y: Value::Nil,
            })),
        }),
    ));
    push(entry(
        "typed_namedtuple",
        &NamedTuple(Span {
            start: 3,
            end: 7,
            label: "span".into(),
        }),
    ));
    push(entry(
        "dataclass",
        &Dataclass(Simple {
            a: 1,
            b: "b".into(),
            c: None,
        }),
    ));
    push(entry(
        "dataclass_full",
        &Dataclass(Simple {
            a: 2,
            b: "bee".into(),
            c: Some(2.5),
        }),
    ));
    push(entry(
        "dataclass_frozen",
        &Dataclass(Frozen {
            key: "k".into(),
            values: (1, 2),
        }),
    ));
    push(entry("dataclass_empty", &Dataclass(Empty {})));
    push(entry(
        "dataclass_nested",
        &Dataclass(Nested {
            name: "n".into(),
            inner: Dataclass(Simple {
                a: 3,
                b: "b".into(),
                c: None,
            }),
            tags: vec!["t1".into(), "t2".into()],
            color: PyEnumValue(Color::Green),
            extra: Extra {
                when: Date::new(2024, 1, 1).unwrap_or_else(|| unreachable!()),
            },
        }),
    ));

    // ext 3: datetimes.
    push(entry("datetime_naive", &dt(2024, 1, 2, 3, 4, 5, 0)));
    push(entry("datetime_micro", &dt(2024, 1, 2, 3, 4, 5, 123_456)));
    push(entry(
        "datetime_utc",
        &dt(2024, 12, 31, 23, 59, 59, 999_999).with_offset(td(0, 0, 0)),
    ));
    push(entry(
        "datetime_negative_offset",
        &dt(2024, 6, 1, 12, 0, 0, 0).with_offset(td(0, -7 * 3600, 0)),
    ));
    push(entry(
        "datetime_offset_seconds",
        &dt(2024, 6, 1, 12, 0, 0, 0).with_offset(td(0, 3615, 0)),
    ));
    push(entry(
        "datetime_offset_micro",
        &dt(2024, 6, 1, 12, 0, 0, 5).with_offset(td(0, 30, 250)),
    ));
    push(entry("datetime_min", &dt(1, 1, 1, 0, 0, 0, 0)));
    push(entry(
        "datetime_max",
        &dt(9999, 12, 31, 23, 59, 59, 999_999),
    ));

    // ext 4 and 5: pydantic models and LangChain messages.
    let model = |name: &str, maybe| ModelV2 {
        name: name.into(),
        count: 0,
        ratio: 0.5,
        tags: vec![],
        meta: OrderedMap(vec![]),
        maybe,
    };
    push(entry(
        "pydantic_v2",
        &PydanticV2(ModelV2 {
            count: 3,
            tags: vec!["a".into()],
            meta: OrderedMap(vec![("k".to_owned(), vec![1, 2])]),
            ..model("m", None)
        }),
    ));
    push(entry(
        "pydantic_v2_nested",
        &PydanticV2(OuterV2 {
            id: "o1".into(),
            child: model("c", None),
            children: vec![model("c2", Some(7))],
        }),
    ));
    push(entry(
        "pydantic_v1",
        &PydanticV1(ModelV1 {
            name: "v1".into(),
            count: 2,
            tags: vec!["x".into()],
            maybe: None,
        }),
    ));
    push(entry(
        "msg_human",
        &HumanMessage::new("hello").with_id("h1"),
    ));
    push(entry("msg_human_no_id", &HumanMessage::new("no id")));
    push(entry(
        "msg_human_named_kwargs",
        &HumanMessage {
            additional_kwargs: map(vec![("x", 1i64.into())]),
            ..HumanMessage::new("named").with_name("alice").with_id("h2")
        },
    ));
    push(entry(
        "msg_human_blocks",
        &HumanMessage::new(vec![map(vec![
            ("type", "text".into()),
            ("text", "describe".into()),
        ])])
        .with_id("h3"),
    ));
    push(entry("msg_ai", &AiMessage::new("hi there").with_id("a1")));
    push(entry("msg_ai_tool_calls", &ai_with_tool_calls()));
    push(entry(
        "msg_ai_invalid_tool_call",
        &AiMessage {
            invalid_tool_calls: vec![InvalidToolCall {
                id: Some("call_3".into()),
                name: Some("search".into()),
                args: Some("{not json".into()),
                error: Some("bad json".into()),
                ..InvalidToolCall::default()
            }],
            ..AiMessage::new("oops").with_id("a3")
        },
    ));
    push(entry(
        "msg_ai_usage",
        &AiMessage {
            response_metadata: map(vec![("model_name", "gpt-x".into())]),
            usage_metadata: Some(UsageMetadata {
                input_tokens: 10,
                output_tokens: 20,
                total_tokens: 30,
                input_token_details: Some(map(vec![("cache_read", 2i64.into())])),
                output_token_details: None,
            }),
            ..AiMessage::new("with usage").with_id("a4")
        },
    ));
    push(entry(
        "msg_system",
        &SystemMessage::new("You are helpful.").with_id("s1"),
    ));
    push(entry(
        "msg_tool",
        &ToolMessage::for_call("42", "call_1").with_id("t1"),
    ));
    push(entry(
        "msg_tool_error_artifact",
        &ToolMessage {
            artifact: map(vec![("raw", Value::Array(vec![1i64.into()]))]),
            status: "error".into(),
            ..ToolMessage::for_call("boom", "call_2")
                .with_name("calc")
                .with_id("t2")
        },
    ));
    push(entry("msg_remove", &RemoveMessage::of("h1")));
    push(entry(
        "msg_chat",
        &ChatMessage {
            role: "critic".into(),
            ..ChatMessage::new("hm").with_id("c1")
        },
    ));
    push(entry(
        "msg_function",
        &FunctionMessage::new("12:00")
            .with_name("get_time")
            .with_id("f1"),
    ));
    push(entry("messages_list", &conversation()));

    // ext 6: a numpy array inside a typed struct (through Value).
    #[derive(Serialize)]
    struct WithArray {
        arr: Value,
    }
    let buffer: Vec<u8> = [1i64, 2, 3].iter().flat_map(|n| n.to_le_bytes()).collect();
    push(entry(
        "ndarray_in_struct",
        &WithArray {
            arr: Value::from(NdArray {
                dtype: "<i8".into(),
                shape: vec![3],
                order: "C".into(),
                buffer: buffer.into(),
            }),
        },
    ));

    // ext 7: delta snapshots.
    push(entry("delta_int", &DeltaSnapshot(1i64)));
    push(entry(
        "delta_list",
        &DeltaSnapshot(vec![v(&1i64), "two".into()]),
    ));
    push(entry("delta_messages", &DeltaSnapshot(conversation())));
    push(entry(
        "delta_nested_set",
        &DeltaSnapshot(DeltaSnapshot(PySet(vec![1i64, 2]))),
    ));

    // Nested mixes.
    push(entry(
        "state",
        &AgentState {
            messages: conversation(),
            started: dt(2024, 5, 6, 7, 8, 9, 101_112)
                .with_offset(td(0, 0, 0))
                .unwrap_or_else(|| unreachable!()),
            seen: PySet(vec![1, 2, 3]),
            budget: "0.0042".parse().unwrap_or_else(|_| unreachable!()),
            run: "00000000-0000-4000-8000-00000000002a"
                .parse()
                .unwrap_or_default(),
            scratch: map(vec![
                ("when", v(&Date::new(2024, 1, 1))),
                ("elapsed", v(&td(0, 1, 500_000))),
                ("tags", v(&FrozenSet(vec!["x"]))),
            ]),
        },
    ));
    push(entry(
        "checkpoint",
        &Checkpoint {
            v: 4,
            id: "1ef4f797-8335-6428-8001-8a1503f9b875".into(),
            ts: "2024-07-31T12:00:00.000000+00:00".into(),
            channel_values: Channels {
                messages: conversation(),
                start: map(vec![("messages", "hi".into())]),
            },
            channel_versions: map(vec![
                ("__start__", "00000000000000000000000000000001.0.5".into()),
                ("messages", "00000000000000000000000000000002.0.7".into()),
            ]),
            versions_seen: map(vec![
                ("__input__", Value::Map(vec![])),
                (
                    "agent",
                    map(vec![(
                        "messages",
                        "00000000000000000000000000000002.0.7".into(),
                    )]),
                ),
            ]),
            updated_channels: vec!["messages".into()],
        },
    ));
    push(entry(
        "pending_writes",
        &vec![
            (
                "task-1".to_owned(),
                "messages".to_owned(),
                v(&vec![AnyMessage::from(
                    HumanMessage::new("w").with_id("w1"),
                )]),
            ),
            (
                "task-1".to_owned(),
                "__interrupt__".to_owned(),
                v(&vec![Interrupt::new("ok?", "int-1")]),
            ),
            (
                "task-2".to_owned(),
                "branch:to:worker".to_owned(),
                v(&Send::new("worker", map(vec![("x", 1i64.into())]))),
            ),
        ],
    ));
    out
}

/// The JSON lines, in order.
///
/// # Errors
/// A message naming the vector that could not be written.
pub fn lines() -> Result<Vec<String>, String> {
    entries()
        .into_iter()
        .map(|(name, typed)| {
            let typed = typed.map_err(|e| format!("{name}: {e}"))?;
            let line = serde_json::json!({
                "name": name,
                "type": typed.type_tag,
                "data": base64::engine::general_purpose::STANDARD.encode(&typed.data),
            });
            Ok(line.to_string())
        })
        .collect()
}

#[allow(dead_code)]
fn main() -> Result<(), Box<dyn std::error::Error>> {
    let text = lines()?.join("\n") + "\n";
    match std::env::args().nth(1) {
        Some(path) => std::fs::write(path, text)?,
        None => print!("{text}"),
    }
    Ok(())
}
