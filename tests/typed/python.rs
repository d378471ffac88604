//! Typed Rust values write exactly the bytes Python wrote for the equivalent Python
//! values (vectors/unit.jsonl, made by the real langgraph-checkpoint 4.3.2), and read
//! Python's bytes back.

use crate::common::*;
use langgraph_codec::typed::pytypes::*;
use langgraph_codec::typed::{self, JsonFallback};
use langgraph_codec::Value;
use serde::{Deserialize, Serialize};

fn map(entries: Vec<(&str, Value)>) -> Value {
    Value::map(entries)
}

#[test]
fn scalars_and_top_level_tags() {
    check::<Option<i64>>("null", None);
    check("bytes_small", ByteBuf(b"\x00\x01\x02hello\xff".to_vec()));
    check(
        "bytes_msgpack_lookalike",
        ByteBuf(b"\x93\x01\x02\x03".to_vec()),
    );
    check("bool_true", true);
    check("bool_false", false);
    for (name, n) in [
        ("int_0", 0i64),
        ("int_127", 127),
        ("int_128", 128),
        ("int_65536", 65536),
        ("int_m1", -1),
        ("int_m33", -33),
        ("int_m32769", -32769),
        ("int_m2p63", i64::MIN),
    ] {
        check(name, n);
    }
    check("int_2p64m1", u64::MAX);
    check("int_2p63", 1u64 << 63);
    check("float_1_5", 1.5f64);
    check("float_neg0", -0.0f64);
    check("float_inf", f64::INFINITY);
    check("str_ascii", vector_str("str_ascii"));
    check("str_emoji", vector_str("str_emoji"));
    check("str_len_65536", vector_str("str_len_65536"));
    check(
        "tuple_mixed",
        (1i64, "a".to_owned(), None::<i64>, 2.5f64, true),
    );
    check("tuple_empty", Vec::<i64>::new());
    check("array_len_16", vec![0i64; 16]);
    check("map_empty", OrderedMap::<String, i64>(vec![]));
}

fn vector_str(name: &str) -> String {
    match typed::from_slice::<String>(&vector(name).data) {
        Ok(s) => s,
        Err(e) => panic!("{name}: {e}"),
    }
}

#[test]
fn maps_keep_key_types_and_order() {
    check(
        "map_key_int",
        OrderedMap(vec![
            (1i64, "one".to_owned()),
            (-1, "minus one".to_owned()),
            (1 << 40, "big".to_owned()),
            (0, "zero".to_owned()),
        ]),
    );
    check(
        "map_insertion_order",
        OrderedMap(vec![
            ("z".to_owned(), 1i64),
            ("a".into(), 2),
            ("m".into(), 3),
            ("b".into(), 4),
        ]),
    );
    check(
        "map_key_bool",
        OrderedMap(vec![(true, "t".to_owned()), (false, "f".to_owned())]),
    );
    check(
        "map_key_tuple",
        OrderedMap(vec![
            (
                Value::Array(vec![1i64.into(), 2i64.into()]),
                "pair".to_owned(),
            ),
            (
                Value::Array(vec![
                    "a".into(),
                    Value::Array(vec!["b".into(), 3i64.into()]),
                ]),
                "nested".to_owned(),
            ),
            (Value::Array(vec![]), "empty".to_owned()),
        ]),
    );
    #[derive(Serialize, Deserialize, Debug, PartialEq)]
    struct E {
        e: Option<i64>,
    }
    #[derive(Serialize, Deserialize, Debug, PartialEq)]
    #[serde(untagged)]
    enum Item {
        N(i64),
        E(E),
    }
    #[derive(Serialize, Deserialize, Debug, PartialEq)]
    struct C {
        d: Vec<Item>,
    }
    #[derive(Serialize, Deserialize, Debug, PartialEq)]
    struct B {
        c: C,
    }
    #[derive(Serialize, Deserialize, Debug, PartialEq)]
    struct A {
        b: B,
    }
    #[derive(Serialize, Deserialize, Debug, PartialEq)]
    struct Top {
        a: A,
    }
    check(
        "map_nested",
        Top {
            a: A {
                b: B {
                    c: C {
                        d: vec![Item::N(1), Item::E(E { e: None })],
                    },
                },
            },
        },
    );
}

#[test]
fn uuids_decimals_collections_addresses() {
    check(
        "uuid_v4",
        "12345678-1234-4678-9234-567812345678"
            .parse::<Uuid>()
            .unwrap(),
    );
    check("uuid_nil", Uuid([0; 16]));
    check("uuid_max", Uuid([0xff; 16]));
    check(
        "uuid_v1",
        "1ef4f797-8335-11ef-8001-8a1503f9b875"
            .parse::<Uuid>()
            .unwrap(),
    );
    for (name, s) in [
        ("decimal_1_10", "1.10"),
        ("decimal_0", "0"),
        ("decimal_neg0", "-0"),
        ("decimal_nan", "NaN"),
        ("decimal_negnan", "-NaN"),
        ("decimal_snan", "sNaN"),
        ("decimal_infinity", "Infinity"),
        ("decimal_neginfinity", "-Infinity"),
        ("decimal_1ep3", "1E+3"),
        ("decimal_neg1_5eneg7", "-1.5E-7"),
        (
            "decimal_3_14159265358979323846264338327950288",
            "3.14159265358979323846264338327950288",
        ),
    ] {
        check(name, s.parse::<Decimal>().unwrap());
    }
    check("set_empty", PySet::<i64>(vec![]));
    check("set_ints", PySet(vec![1i64, 2, 3, 100, -5]));
    check(
        "set_strs",
        PySet(vec!["c".to_owned(), "a".into(), "b".into()]),
    );
    check(
        "set_mixed",
        PySet(vec![
            Value::from(1i64),
            Value::from(2.5),
            Value::Array(vec![1i64.into(), 2i64.into()]),
            "x".into(),
            Value::Nil,
        ]),
    );
    check("frozenset_ints", FrozenSet(vec![1i64, 2, 3]));
    check("frozenset_empty", FrozenSet::<i64>(vec![]));
    check("deque_empty", Deque::<Value>(vec![]));
    check(
        "deque_mixed",
        Deque(vec![
            Value::from(1i64),
            "a".into(),
            Value::Array(vec![2i64.into(), 3i64.into()]),
            map(vec![("k", "v".into())]),
        ]),
    );
    check("deque_maxlen", Deque(vec![1i64, 2, 3]));
    check(
        "ipv4_address",
        "192.168.1.1".parse::<Ipv4Address>().unwrap(),
    );
    check(
        "ipv4_interface",
        "10.0.0.5/24".parse::<Ipv4Interface>().unwrap(),
    );
    check("ipv4_network", "10.0.0.0/8".parse::<Ipv4Network>().unwrap());
    check(
        "ipv6_address",
        "2001:db8::1".parse::<Ipv6Address>().unwrap(),
    );
    check(
        "ipv6_interface",
        "2001:db8::1/64".parse::<Ipv6Interface>().unwrap(),
    );
    check(
        "ipv6_network",
        "2001:db8::/32".parse::<Ipv6Network>().unwrap(),
    );
    check("zoneinfo_utc", ZoneInfo::new("UTC"));
    check("zoneinfo_paris", ZoneInfo::new("Europe/Paris"));
    check("zoneinfo_kolkata", ZoneInfo::new("Asia/Kolkata"));
}

#[test]
fn ipv6_text_follows_python_311() {
    // str(IPv6Address(...)) in Python 3.11: longest zero run compressed, no dotted tail.
    for (input, python) in [
        ("::ffff:1.2.3.4", "::ffff:102:304"),
        ("1:0:0:1:0:0:0:1", "1:0:0:1::1"),
        ("0:0:1:0:0:0:0:0", "0:0:1::"),
        ("2001:db8:0:1:1:1:1:1", "2001:db8:0:1:1:1:1:1"),
        ("::", "::"),
    ] {
        assert_eq!(input.parse::<Ipv6Address>().unwrap().to_string(), python);
    }
}

#[test]
fn enums() {
    check("enum_str", PyEnumValue(Color::Red));
    check("enum_int", PyEnumValue(Color::Blue));
    check("enum_tuple_value", PyEnumValue(Color::Tuple));
    check("intenum", PyEnumValue(Priority::High));
    check("intenum_big", PyEnumValue(Priority::Huge));
    check("strenum", PyEnumValue(Mode::Fast));
    check("strenum_unicode", PyEnumValue(Mode::Unicode));
    // A field mapped with `#[serde(with)]`.
    #[derive(Serialize, Deserialize, Debug, PartialEq)]
    struct Holder {
        #[serde(with = "langgraph_codec::typed::pytypes::py_enum")]
        color: Color,
    }
    let bytes = typed::to_vec(&Holder { color: Color::Red }).unwrap();
    let mut expected = b"\x81\xa5color".to_vec();
    expected.extend_from_slice(&vector("enum_str").data);
    assert_eq!(bytes, expected);
    assert_eq!(
        typed::from_slice::<Holder>(&expected).unwrap(),
        Holder { color: Color::Red }
    );
}

#[test]
fn dates_and_times() {
    let td = |d, s, us| TimeDelta::new(d, s, us).unwrap();
    check("timedelta_zero", td(0, 0, 0));
    check("timedelta_simple", td(1, 2, 3));
    check("timedelta_negative", td(0, -1, 0));
    check("timedelta_neg_days", td(-3, 18000, 0));
    check("timedelta_big", td(999_999_999, 86399, 999_999));
    check("timedelta_min", td(-999_999_999, 0, 0));
    check("date_simple", Date::new(2024, 2, 29).unwrap());
    check("date_min", Date::new(1, 1, 1).unwrap());
    check("date_max", Date::new(9999, 12, 31).unwrap());
    check("timezone_utc", TimeZone::utc());
    check(
        "timezone_offset_named",
        TimeZone::with_name(td(0, 19800, 0), "IST").unwrap(),
    );
    check(
        "timezone_offset_unnamed",
        TimeZone::new(td(0, 7200, 0)).unwrap(),
    );
    check(
        "timezone_negative",
        TimeZone::new(td(0, -8 * 3600, 0)).unwrap(),
    );
    check(
        "timezone_negative_named",
        TimeZone::with_name(td(0, -12600, 0), "NST").unwrap(),
    );
    check(
        "timezone_with_seconds",
        TimeZone::new(td(0, 3615, 0)).unwrap(),
    );
    check(
        "timezone_with_microseconds",
        TimeZone::new(td(0, 1, 7)).unwrap(),
    );
    let t = |h, m, s, us| Time::new(h, m, s, us).unwrap();
    check("time_naive", t(12, 30, 45, 0));
    check("time_midnight", t(0, 0, 0, 0));
    check("time_microsecond", t(23, 59, 59, 999_999));
    check(
        "time_aware_utc",
        t(8, 0, 0, 0).with_tzinfo(TzInfo::TimeZone(TimeZone::utc())),
    );
    check(
        "time_aware_offset",
        t(8, 0, 1, 5).with_tzinfo(TzInfo::TimeZone(
            TimeZone::with_name(td(0, -5 * 3600, 0), "EST").unwrap(),
        )),
    );
    check(
        "time_aware_zoneinfo",
        t(9, 15, 0, 0).with_tzinfo(TzInfo::ZoneInfo(ZoneInfo::new("America/New_York"))),
    );
    check("time_fold1", t(1, 30, 0, 0).with_fold(true));
    let dt = |y, mo, d, h, mi, s, us| DateTime::new(y, mo, d, h, mi, s, us).unwrap();
    let off = |secs, us| td(0, secs, us);
    check("datetime_naive", dt(2024, 1, 2, 3, 4, 5, 0));
    check("datetime_naive_micro", dt(2024, 1, 2, 3, 4, 5, 123456));
    check("datetime_naive_micro_small", dt(2024, 1, 2, 3, 4, 5, 1));
    check(
        "datetime_utc",
        dt(2024, 1, 2, 3, 4, 5, 0).with_offset(off(0, 0)).unwrap(),
    );
    check(
        "datetime_utc_micro",
        dt(2024, 12, 31, 23, 59, 59, 999_999)
            .with_offset(off(0, 0))
            .unwrap(),
    );
    check(
        "datetime_ist",
        dt(2024, 6, 1, 12, 0, 0, 0)
            .with_offset(off(19800, 0))
            .unwrap(),
    );
    check(
        "datetime_negative_offset",
        dt(2024, 6, 1, 12, 0, 0, 0)
            .with_offset(off(-7 * 3600, 0))
            .unwrap(),
    );
    check(
        "datetime_offset_seconds",
        dt(2024, 6, 1, 12, 0, 0, 0)
            .with_offset(off(3615, 0))
            .unwrap(),
    );
    check(
        "datetime_offset_microseconds",
        dt(2024, 6, 1, 12, 0, 0, 5)
            .with_offset(off(30, 250))
            .unwrap(),
    );
    check(
        "datetime_zoneinfo_paris_winter",
        dt(2024, 1, 15, 9, 0, 0, 0)
            .with_offset(off(3600, 0))
            .unwrap(),
    );
    check(
        "datetime_zoneinfo_ny_fold",
        dt(2024, 11, 3, 1, 30, 0, 0)
            .with_offset(off(-5 * 3600, 0))
            .unwrap(),
    );
    check("datetime_min", dt(1, 1, 1, 0, 0, 0, 0));
    check("datetime_max", dt(9999, 12, 31, 23, 59, 59, 999_999));
    check("datetime_fold1_naive", dt(2024, 11, 3, 1, 30, 0, 0));
}

#[test]
fn datetime_parses_fromisoformat_forms() {
    let p = |s: &str| s.parse::<DateTime>();
    assert_eq!(p("2024-01-02").unwrap().to_string(), "2024-01-02T00:00:00");
    assert_eq!(
        p("2024-01-02T03:04").unwrap().to_string(),
        "2024-01-02T03:04:00"
    );
    assert_eq!(p("2024-01-02 03:04:05.5").unwrap().microsecond(), 500_000);
    assert_eq!(
        p("2024-01-02T03:04:05.123Z").unwrap().to_string(),
        "2024-01-02T03:04:05.123000+00:00"
    );
    assert_eq!(
        p("20240102T030405+0530").unwrap().to_string(),
        "2024-01-02T03:04:05+05:30"
    );
    assert!(p("2024-02-30T00:00:00").is_err());
    assert!(p("2024-01-02T25:00:00").is_err());
    assert!(p("2024-01-02T00:00:00+24:00").is_err());
    assert!(p("not a date").is_err());
}

#[test]
fn paths_and_patterns() {
    check(
        "posix_path_abs",
        PurePath::posix("/usr/local/lib/python3.11"),
    );
    check("posix_path_rel", PurePath::posix("data/file.txt"));
    check("path_unicode", PurePath::posix("/tmp/ünï/🦜.json"));
    check("path_dot", PurePath::posix("."));
    check("regex_simple", Pattern::new("^a+b*$"));
    check(
        "regex_flags",
        Pattern::with_flags(
            r"hello\s+world",
            Pattern::IGNORECASE | Pattern::MULTILINE | Pattern::DOTALL | Pattern::VERBOSE,
        ),
    );
    check(
        "regex_ascii_flag",
        Pattern::with_flags(r"\w+", Pattern::ASCII),
    );
    check(
        "regex_bytes",
        Pattern {
            pattern: Value::Bin(bytes::Bytes::from_static(br"\x00[a-z]+")),
            flags: 0,
        },
    );
}

#[derive(Serialize, Deserialize, Debug, PartialEq, Clone)]
struct Item {
    item: i64,
}

#[test]
fn langgraph_types() {
    check("send_simple", Send::new("worker", Item { item: 1 }));
    check("send_str_arg", Send::new("node_b", "payload".to_owned()));
    check("send_none_arg", Send::new("n", None::<i64>));
    let mut s = Send::new("worker", map(vec![("x", 1i64.into())]));
    s.timeout = Some(TimeoutPolicy {
        run_timeout: Some(5.0),
        ..TimeoutPolicy::default()
    });
    check("send_timeout_float", s);
    let mut s = Send::new("worker", Value::Map(vec![]));
    s.timeout = Some(TimeoutPolicy {
        run_timeout: Some(10.0),
        idle_timeout: Some(2.5),
        refresh_on: "heartbeat".into(),
    });
    check("send_timeout_policy", s);
    check(
        "timeout_policy",
        TimeoutPolicy {
            run_timeout: Some(1.5),
            ..TimeoutPolicy::default()
        },
    );
    check(
        "send_list",
        vec![
            Send::new("a", Value::from(1i64)),
            Send::new(
                "b",
                map(vec![("k", Value::Array(vec![1i64.into(), 2i64.into()]))]),
            ),
            Send::new(
                "c",
                typed::to_value(&HumanMessage::new("m").with_id("sm1")).unwrap(),
            ),
        ],
    );
    check(
        "interrupt_default_id",
        Interrupt::new("need input".to_owned(), "placeholder-id"),
    );
    #[derive(Serialize, Deserialize, Debug, PartialEq)]
    struct Question {
        question: String,
        options: Vec<String>,
    }
    check(
        "interrupt",
        Interrupt::new(
            Question {
                question: "approve?".into(),
                options: vec!["y".into(), "n".into()],
            },
            "a1b2c3d4e5f60718293a4b5c6d7e8f90",
        ),
    );
    check(
        "interrupt_list",
        vec![
            Interrupt::new(Value::from("q1"), "i1"),
            Interrupt::new(Value::Array(vec!["q".into(), 2i64.into()]), "i2"),
        ],
    );
    #[derive(Serialize, Deserialize, Debug, PartialEq)]
    struct Update {
        messages: Vec<AnyMessage>,
        n: i64,
    }
    check(
        "command_update",
        Command {
            update: typed::to_value(&Update {
                messages: vec![AiMessage::new("cmd").with_id("ca1").into()],
                n: 1,
            })
            .unwrap(),
            ..Command::default()
        },
    );
    check("command_resume", Command::resume("yes"));
    check(
        "command_resume_map",
        Command::resume(map(vec![("a1b2c3d4", map(vec![("answer", 42i64.into())]))])),
    );
    check("command_goto_str", Command::goto("node_x"));
    check(
        "command_goto_send",
        Command {
            update: Value::Array(vec![Value::Array(vec!["k".into(), "v".into()])]),
            goto: Value::Array(vec![
                typed::to_value(&Send::new("worker", map(vec![("i", 1i64.into())]))).unwrap(),
                "other".into(),
            ]),
            ..Command::default()
        },
    );
    check(
        "command_parent",
        Command {
            graph: Some("__parent__".into()),
            update: map(vec![("x", 1i64.into())]),
            goto: "parent_node".into(),
            ..Command::default()
        },
    );
}

#[test]
fn delta_snapshots() {
    check("delta_fixext1_int", DeltaSnapshot(1i64));
    check("delta_fixext1_none", DeltaSnapshot(None::<i64>));
    check("delta_fixext2_int", DeltaSnapshot(200i64));
    check("delta_ext8_3", DeltaSnapshot("ab".to_owned()));
    check("delta_fixext4_str", DeltaSnapshot("abc".to_owned()));
    check("delta_ext8_5", DeltaSnapshot(2_147_483_648i64));
    check("delta_fixext8_str", DeltaSnapshot("abcdefg".to_owned()));
    check("delta_ext8_9", DeltaSnapshot(1u64 << 63));
    check("delta_ext8_17", DeltaSnapshot("a".repeat(16)));
    check(
        "delta_list",
        DeltaSnapshot(vec![
            Value::from(1i64),
            2i64.into(),
            3i64.into(),
            "four".into(),
        ]),
    );
    #[derive(Serialize, Deserialize, Debug, PartialEq)]
    struct D {
        a: i64,
        b: (bool, Option<i64>),
    }
    check(
        "delta_dict",
        DeltaSnapshot(D {
            a: 1,
            b: (true, None),
        }),
    );
    check(
        "delta_nested",
        DeltaSnapshot(DeltaSnapshot(PySet(vec![1i64, 2]))),
    );
    let msgs: DeltaSnapshot<Vec<AnyMessage>> = roundtrip("delta_messages");
    assert_eq!(msgs.0.len(), 3);
    for name in [
        "delta_ext8_255",
        "delta_ext16_256",
        "delta_ext16_65535",
        "delta_ext32_65536",
    ] {
        let _: DeltaSnapshot<ByteBuf> = roundtrip(name);
    }
}

#[test]
fn user_classes() {
    check("namedtuple", NamedTuple(Point { x: 1i64, y: 2 }));
    check(
        "namedtuple_nested",
        NamedTuple(Point {
            x: Value::Array(vec![1i64.into(), 2i64.into()]),
            y: typed::to_value(&NamedTuple(Point {
                x: Value::from("a"),
                y: Value::Nil,
            }))
            .unwrap(),
        }),
    );
    check(
        "typed_namedtuple",
        NamedTuple(Span {
            start: 3,
            end: 7,
            label: "span".into(),
        }),
    );
    check(
        "dataclass_simple",
        Dataclass(Simple {
            a: 1,
            b: "b".into(),
            c: None,
        }),
    );
    check(
        "dataclass_full",
        Dataclass(Simple {
            a: 2,
            b: "bee".into(),
            c: Some(2.5),
        }),
    );
    check(
        "dataclass_frozen",
        Dataclass(Frozen {
            key: "k".into(),
            values: (1, 2),
        }),
    );
    check("dataclass_empty", Dataclass(Empty {}));
    #[derive(Serialize, Deserialize, Debug, PartialEq)]
    struct Extra {
        when: Date,
    }
    #[derive(Serialize, Deserialize, Debug, PartialEq)]
    struct Nested {
        name: String,
        inner: Dataclass<Simple>,
        tags: Vec<String>,
        color: PyEnumValue<Color>,
        extra: Extra,
    }
    impl PyClass for Nested {
        const MODULE: &'static str = "pytypes";
        const NAME: &'static str = "Nested";
    }
    check(
        "dataclass_nested",
        Dataclass(Nested {
            name: "n".into(),
            inner: Dataclass(Simple {
                a: 3,
                b: "b".into(),
                c: None,
            }),
            tags: vec!["t1".into(), "t2".into()],
            color: PyEnumValue(Color::Green),
            extra: Extra {
                when: Date::new(2024, 1, 1).unwrap(),
            },
        }),
    );
    check(
        "pydantic_v2",
        PydanticV2(ModelV2 {
            name: "m".into(),
            count: 3,
            ratio: 0.5,
            tags: vec!["a".into(), "b".into()],
            meta: OrderedMap(vec![("k".into(), vec![1, 2])]),
            maybe: None,
        }),
    );
    check("pydantic_v2_defaults", PydanticV2(ModelV2::defaults("d")));
    check(
        "pydantic_v2_nested",
        PydanticV2(OuterV2 {
            id: "o1".into(),
            child: ModelV2::defaults("c"),
            children: vec![ModelV2 {
                maybe: Some(7),
                ..ModelV2::defaults("c2")
            }],
        }),
    );
    check(
        "pydantic_v1",
        PydanticV1(ModelV1 {
            name: "v1".into(),
            count: 2,
            tags: vec!["x".into()],
            maybe: None,
        }),
    );
    check(
        "pydantic_v1_defaults",
        PydanticV1(ModelV1 {
            name: "v1d".into(),
            count: 0,
            tags: vec![],
            maybe: None,
        }),
    );
}

fn search_calls() -> Vec<ToolCall> {
    vec![
        ToolCall::new(
            "search",
            map(vec![("q", "weather in Paris".into()), ("k", 3i64.into())]),
            "call_1",
        ),
        ToolCall::new("calc", map(vec![("expr", "1+1".into())]), "call_2"),
    ]
}

#[test]
fn langchain_messages() {
    check("msg_human", HumanMessage::new("hello").with_id("h1"));
    check("msg_human_no_id", HumanMessage::new("no id"));
    check(
        "msg_human_named",
        HumanMessage {
            additional_kwargs: map(vec![("x", 1i64.into())]),
            response_metadata: map(vec![("r", Value::Array(vec![1i64.into(), 2i64.into()]))]),
            ..HumanMessage::new("named").with_name("alice").with_id("h2")
        },
    );
    check(
        "msg_human_content_blocks",
        HumanMessage::new(vec![
            map(vec![
                ("type", "text".into()),
                ("text", "describe this".into()),
            ]),
            map(vec![
                ("type", "image_url".into()),
                (
                    "image_url",
                    map(vec![("url", "data:image/png;base64,iVBORw0KGgo=".into())]),
                ),
            ]),
        ])
        .with_id("h3"),
    );
    check(
        "msg_human_unicode",
        HumanMessage::new("héllo wörld 你好 🦜🔗").with_id("h4"),
    );
    check("msg_ai", AiMessage::new("hi there").with_id("a1"));
    check(
        "msg_ai_tool_calls",
        AiMessage {
            tool_calls: search_calls(),
            ..AiMessage::new("").with_id("a2")
        },
    );
    check(
        "msg_ai_invalid_tool_calls",
        AiMessage {
            invalid_tool_calls: vec![InvalidToolCall {
                id: Some("call_3".into()),
                name: Some("search".into()),
                args: Some("{not json".into()),
                error: Some("bad json".into()),
                ..InvalidToolCall::default()
            }],
            ..AiMessage::new("oops").with_id("a3")
        },
    );
    check(
        "msg_ai_usage",
        AiMessage {
            response_metadata: map(vec![
                ("model_name", "gpt-x".into()),
                ("finish_reason", "stop".into()),
            ]),
            usage_metadata: Some(UsageMetadata {
                input_tokens: 10,
                output_tokens: 20,
                total_tokens: 30,
                input_token_details: Some(map(vec![("cache_read", 2i64.into())])),
                output_token_details: Some(map(vec![("reasoning", 5i64.into())])),
            }),
            ..AiMessage::new("with usage").with_id("a4")
        },
    );
    check(
        "msg_ai_full",
        AiMessage {
            additional_kwargs: map(vec![("refusal", Value::Nil)]),
            response_metadata: map(vec![
                ("model_provider", "openai".into()),
                ("logprobs", Value::Nil),
            ]),
            tool_calls: vec![search_calls().remove(0)],
            invalid_tool_calls: vec![InvalidToolCall::default()],
            usage_metadata: Some(UsageMetadata {
                input_tokens: 1,
                output_tokens: 2,
                total_tokens: 3,
                ..UsageMetadata::default()
            }),
            ..AiMessage::new(vec![map(vec![
                ("type", "text".into()),
                ("text", "calling".into()),
            ])])
            .with_name("bot")
            .with_id("a5")
        },
    );
    check(
        "msg_system",
        SystemMessage::new("You are a helpful assistant.").with_id("s1"),
    );
    check(
        "msg_tool",
        ToolMessage::for_call("42", "call_1").with_id("t1"),
    );
    check(
        "msg_tool_artifact_error",
        ToolMessage {
            artifact: map(vec![
                (
                    "raw",
                    Value::Array(vec![1i64.into(), 2i64.into(), 3i64.into()]),
                ),
                ("when", "2024-01-01".into()),
            ]),
            status: "error".into(),
            ..ToolMessage::for_call("boom", "call_2")
                .with_name("calc")
                .with_id("t2")
        },
    );
    check("msg_remove", RemoveMessage::of("h1"));
    check("msg_remove_all", RemoveMessage::of("__remove_all__"));
    check(
        "msg_chat",
        ChatMessage {
            role: "critic".into(),
            ..ChatMessage::new("chatting").with_id("c1")
        },
    );
    check(
        "msg_function",
        FunctionMessage::new("fn result")
            .with_name("get_time")
            .with_id("f1"),
    );
    // Chunks: their own variants, written back byte for byte.
    for name in [
        "msg_human_chunk",
        "msg_ai_chunk",
        "msg_ai_chunk_tool_call_chunks",
        "msg_system_chunk",
        "msg_tool_chunk",
    ] {
        let m: AnyMessage = roundtrip(name);
        assert!(
            matches!(
                m,
                AnyMessage::HumanMessageChunk(_)
                    | AnyMessage::AiMessageChunk(_)
                    | AnyMessage::SystemMessageChunk(_)
                    | AnyMessage::ToolMessageChunk(_)
            ),
            "{name}: {m:?}"
        );
    }
    let list: Vec<AnyMessage> = roundtrip("messages_list");
    assert!(!list.is_empty());
    // AnyMessage dispatches on the class.
    let m: AnyMessage = roundtrip("msg_tool");
    assert!(matches!(m, AnyMessage::ToolMessage(ref t) if t.tool_call_id == "call_1"));
}

/// A state struct with typed and untyped parts, as in the "state_mixture" vector.
#[derive(Serialize, Deserialize, Debug, PartialEq)]
struct State {
    messages: Vec<AnyMessage>,
    updated: DateTime,
    seen: PySet<i64>,
    sends: Vec<Send<Value>>,
    id: Uuid,
    cost: Decimal,
    elapsed: TimeDelta,
    tags: FrozenSet<String>,
    point: NamedTuple<Point>,
    cfg: Value,
    none: Option<i64>,
    blob: ByteBuf,
}

#[test]
fn full_state_and_checkpoint() {
    let state = State {
        messages: vec![
            HumanMessage::new("hello").with_id("h1").into(),
            AiMessage {
                tool_calls: search_calls(),
                ..AiMessage::new("").with_id("a2")
            }
            .into(),
            ToolMessage::for_call("42", "call_1").with_id("t1").into(),
            AiMessage::new("hi there").with_id("a1").into(),
        ],
        updated: "2024-05-06T07:08:09.101112+00:00".parse().unwrap(),
        seen: PySet(vec![1, 2, 3]),
        sends: (0..3)
            .map(|i| Send::new("worker", map(vec![("i", Value::from(i as i64))])))
            .collect(),
        id: "00000000-0000-4000-8000-00000000002a".parse().unwrap(),
        cost: "0.0042".parse().unwrap(),
        elapsed: TimeDelta::new(0, 1, 500_000).unwrap(),
        tags: FrozenSet(vec!["x".into()]),
        point: NamedTuple(Point { x: 0, y: 0 }),
        cfg: typed::to_value(&Dataclass(Simple {
            a: 1,
            b: "b".into(),
            c: None,
        }))
        .unwrap(),
        none: None,
        blob: ByteBuf(vec![0, 1]),
    };
    check("state_mixture", state);

    #[derive(Serialize, Deserialize, Debug, PartialEq)]
    struct Checkpoint {
        v: i64,
        id: String,
        ts: String,
        channel_values: Value,
        channel_versions: OrderedMap<String, String>,
        versions_seen: OrderedMap<String, OrderedMap<String, String>>,
        updated_channels: Vec<String>,
    }
    let cp: Checkpoint = roundtrip("checkpoint_like");
    assert_eq!(cp.v, 4);
    assert_eq!(cp.channel_versions.0.len(), 2);
}

#[test]
fn untyped_parts_keep_unknown_objects_byte_for_byte() {
    // {'a': ext 99, 'b': 1}: the unknown ext survives inside a typed struct.
    #[derive(Serialize, Deserialize, Debug, PartialEq)]
    struct S {
        a: Value,
        b: i64,
    }
    let s: S = roundtrip("raw_ext99_in_map");
    assert!(matches!(s.a, Value::Ext(ref e) if e.code == 99));
    // Malformed envelopes and unknown classes, as Value fields of a typed struct.
    #[derive(Serialize, Deserialize, Debug, PartialEq)]
    struct Wrap {
        inner: Value,
    }
    for name in [
        "malformed_ext0_two_tuple",
        "malformed_ext0_garbage",
        "malformed_ext5_unknown_class",
        "malformed_ext7_garbage",
        "np_float64_2d_c",
        "exception_custom",
        "store_item",
    ] {
        let v = vector(name);
        let mut bytes = b"\x81\xa5inner".to_vec();
        bytes.extend_from_slice(&v.data);
        let w: Wrap = typed::from_slice(&bytes).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(typed::to_vec(&w).unwrap(), bytes, "{name}");
    }
}

#[test]
fn flatten_keeps_unknown_fields_and_objects() {
    // A typed read of a Python dict with `#[serde(flatten)]` keeps every other key,
    // including envelopes serde had to buffer.
    #[derive(Serialize, Deserialize, Debug, PartialEq)]
    struct Partial {
        messages: Vec<AnyMessage>,
        #[serde(flatten)]
        rest: std::collections::BTreeMap<String, Value>,
    }
    let v = vector("state_mixture");
    let p: Partial = typed::from_slice(&v.data).unwrap();
    assert_eq!(p.messages.len(), 4);
    let full = langgraph_codec::msgpack::decode(&v.data).unwrap();
    for key in [
        "updated", "seen", "sends", "id", "cost", "elapsed", "tags", "point", "cfg", "none", "blob",
    ] {
        assert_eq!(p.rest.get(key), full.get(key), "{key}");
    }
    let updated: DateTime = typed::from_value(p.rest.get("updated").unwrap()).unwrap();
    assert_eq!(updated.to_string(), "2024-05-06T07:08:09.101112+00:00");
}

#[test]
fn json_rows_read_typed() {
    #[derive(Deserialize, Debug)]
    struct Meta {
        source: String,
        step: i64,
    }
    let v = vector("json_metadata_js");
    let m: Meta = typed::loads(&v.tag, &v.data, &JsonFallback).unwrap();
    assert_eq!(m.source, "loop");
    assert!(m.step >= -1);
}
