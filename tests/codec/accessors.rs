//! The `is_nil` / `as_*` / `get` / `kind_name` accessors of `Value` and
//! `msgpack::ValueRef` (one definition for both): each answers for its own variant
//! only. Every sample is msgpack written by hand from the spec, read both ways, and
//! checked against the same expectations.

use langgraph_codec::msgpack::{self, ValueRef};
use langgraph_codec::{JsonPlusSerializer, Serializer};

/// What every accessor should give for one sample; `None` / `false` unless said.
#[derive(Default)]
struct Expect {
    nil: bool,
    str: Option<&'static str>,
    bytes: Option<&'static [u8]>,
    i64: Option<i64>,
    u64: Option<u64>,
    f64: Option<f64>,
    bool: Option<bool>,
    /// `as_array`'s length.
    array: Option<usize>,
    /// `as_map`'s length.
    map: Option<usize>,
    /// `as_object`'s `(module, name)`.
    object: Option<(&'static str, &'static str)>,
    /// `get("a")` as an integer.
    get_a: Option<i64>,
    kind: &'static str,
}

fn samples() -> Vec<(&'static str, Vec<u8>, Expect)> {
    vec![
        (
            "nil",
            vec![0xc0],
            Expect {
                nil: true,
                kind: "nil",
                ..Expect::default()
            },
        ),
        (
            "true",
            vec![0xc3],
            Expect {
                bool: Some(true),
                kind: "bool",
                ..Expect::default()
            },
        ),
        (
            "false",
            vec![0xc2],
            Expect {
                bool: Some(false),
                kind: "bool",
                ..Expect::default()
            },
        ),
        (
            "5",
            vec![0x05],
            Expect {
                i64: Some(5),
                u64: Some(5),
                f64: Some(5.0),
                kind: "int",
                ..Expect::default()
            },
        ),
        (
            "-1",
            vec![0xff],
            Expect {
                i64: Some(-1),
                f64: Some(-1.0),
                kind: "int",
                ..Expect::default()
            },
        ),
        (
            "u64::MAX",
            [&[0xcf][..], &[0xff; 8]].concat(),
            Expect {
                u64: Some(u64::MAX),
                f64: Some(18_446_744_073_709_551_615.0),
                kind: "int",
                ..Expect::default()
            },
        ),
        (
            "1.5 as float64",
            vec![0xcb, 0x3f, 0xf8, 0, 0, 0, 0, 0, 0],
            Expect {
                f64: Some(1.5),
                kind: "float64",
                ..Expect::default()
            },
        ),
        (
            "1.5 as float32",
            vec![0xca, 0x3f, 0xc0, 0, 0],
            Expect {
                f64: Some(1.5),
                kind: "float32",
                ..Expect::default()
            },
        ),
        (
            "\"a\"",
            vec![0xa1, b'a'],
            Expect {
                str: Some("a"),
                kind: "str",
                ..Expect::default()
            },
        ),
        (
            "b\"\\x00\\x01\"",
            vec![0xc4, 0x02, 0x00, 0x01],
            Expect {
                bytes: Some(b"\x00\x01"),
                kind: "bin",
                ..Expect::default()
            },
        ),
        (
            "[1]",
            vec![0x91, 0x01],
            Expect {
                array: Some(1),
                kind: "array",
                ..Expect::default()
            },
        ),
        (
            "{\"a\": 1}",
            vec![0x81, 0xa1, b'a', 0x01],
            Expect {
                map: Some(1),
                get_a: Some(1),
                kind: "map",
                ..Expect::default()
            },
        ),
        (
            "{1: 2}",
            vec![0x81, 0x01, 0x02],
            Expect {
                map: Some(1),
                kind: "map",
                ..Expect::default()
            },
        ),
        (
            // ext 0 (a constructor with one argument) of ("m", "n", 1), as ormsgpack
            // writes a 6-byte payload: ext8.
            "object m.n(1)",
            vec![0xc7, 0x06, 0x00, 0x93, 0xa1, b'm', 0xa1, b'n', 0x01],
            Expect {
                object: Some(("m", "n")),
                kind: "object",
                ..Expect::default()
            },
        ),
        (
            // ext 7: LangGraph's _DeltaSnapshot(1).
            "delta snapshot",
            vec![0xd4, 0x07, 0x01],
            Expect {
                kind: "delta snapshot",
                ..Expect::default()
            },
        ),
        (
            // fixext1 with a code Python does not use.
            "ext 32",
            vec![0xd4, 0x20, 0x00],
            Expect {
                kind: "ext",
                ..Expect::default()
            },
        ),
    ]
}

/// Checks one value's accessors; generic over how to read the two enums, so `Value`
/// and `ValueRef` are checked by the same lines.
macro_rules! check {
    ($v:expr, $e:expr, $name:expr, $object_names:expr) => {{
        let (v, e, name) = ($v, $e, $name);
        assert_eq!(v.is_nil(), e.nil, "{name}: is_nil");
        assert_eq!(v.as_str(), e.str, "{name}: as_str");
        assert_eq!(v.as_bytes().map(|b| &b[..]), e.bytes, "{name}: as_bytes");
        assert_eq!(v.as_i64(), e.i64, "{name}: as_i64");
        assert_eq!(v.as_u64(), e.u64, "{name}: as_u64");
        assert_eq!(v.as_f64(), e.f64, "{name}: as_f64");
        assert_eq!(v.as_bool(), e.bool, "{name}: as_bool");
        assert_eq!(v.as_array().map(|a| a.len()), e.array, "{name}: as_array");
        assert_eq!(v.as_map().map(|m| m.len()), e.map, "{name}: as_map");
        assert_eq!(
            v.as_object().map($object_names),
            e.object,
            "{name}: as_object"
        );
        assert_eq!(v.get("a").and_then(|a| a.as_i64()), e.get_a, "{name}: get");
        assert_eq!(v.get("b"), None, "{name}: get of a missing key");
        assert_eq!(v.kind_name(), e.kind, "{name}: kind_name");
    }};
}

#[test]
fn value_accessors_answer_for_their_own_variant_only() {
    for (name, bytes, e) in samples() {
        let v = msgpack::decode(&bytes).unwrap_or_else(|err| panic!("{name}: {err}"));
        check!(&v, &e, name, |o: &langgraph_codec::PyObject| (
            o.module.as_str(),
            o.name.as_str()
        ));
    }
}

#[test]
fn value_ref_accessors_answer_for_their_own_variant_only() {
    for (name, bytes, e) in samples() {
        let v = ValueRef::decode(&bytes).unwrap_or_else(|err| panic!("{name}: {err}"));
        check!(&v, &e, name, |o: &msgpack::PyObjectRef<'_>| (
            o.module, o.name
        ));
        // The borrowed accessors hand out slices of the input itself.
        if let Some(s) = v.as_str() {
            assert!(bytes.as_ptr_range().contains(&s.as_ptr()), "{name}: copied");
        }
        if let Some(b) = v.as_bytes() {
            assert!(bytes.as_ptr_range().contains(&b.as_ptr()), "{name}: copied");
        }
    }
}

/// The two variants only `json` rows hold have their own names and no accessor.
#[test]
fn json_only_values_have_their_kind_names() {
    let serde = JsonPlusSerializer::new();
    let big = serde
        .loads_typed("json", b"18446744073709551616")
        .expect("2**64");
    assert_eq!(big.kind_name(), "big int");
    assert_eq!(
        (big.as_i64(), big.as_u64(), big.as_f64()),
        (None, None, None)
    );
    let wide = serde
        .loads_typed("json", br#""\ud800""#)
        .expect("a lone surrogate");
    assert_eq!(wide.kind_name(), "str with lone surrogates");
    assert_eq!(wide.as_str(), None);
}

/// Equality and `Debug` (one definition for both enums too): floats compare by their
/// bits, as the bytes on the wire do; variants never equal each other; `Debug` prints
/// as `derive` would.
#[test]
fn value_and_value_ref_compare_and_print_alike() {
    // (msgpack, msgpack of a different value that a loose comparison would call equal)
    let unequal: [(&[u8], &[u8]); 5] = [
        // float64 0.0 and -0.0
        (b"\xcb\0\0\0\0\0\0\0\0", b"\xcb\x80\0\0\0\0\0\0\0"),
        // float32 1.0 and float64 1.0
        (b"\xca\x3f\x80\0\0", b"\xcb\x3f\xf0\0\0\0\0\0\0"),
        // 1 and true
        (b"\x01", b"\xc3"),
        // "a" and b"a"
        (b"\xa1a", b"\xc4\x01a"),
        // [1] and [1, 1]
        (b"\x91\x01", b"\x92\x01\x01"),
    ];
    for (a, b) in unequal {
        let (va, vb) = (
            msgpack::decode(a).expect("a"),
            msgpack::decode(b).expect("b"),
        );
        assert_eq!(va, va.clone(), "{va:?}");
        assert_ne!(va, vb);
        let (ra, rb) = (
            ValueRef::decode(a).expect("a"),
            ValueRef::decode(b).expect("b"),
        );
        assert_eq!(ra, ra.clone(), "{ra:?}");
        assert_ne!(ra, rb);
    }
    // A NaN equals itself (same bits), unlike f64's NaN.
    let nan = b"\xcb\x7f\xf8\0\0\0\0\0\0";
    assert_eq!(
        msgpack::decode(nan).expect("nan"),
        msgpack::decode(nan).expect("nan")
    );
    assert_eq!(
        ValueRef::decode(nan).expect("nan"),
        ValueRef::decode(nan).expect("nan")
    );
    // {"a": [true, nil, 1.5]}, both ways.
    let bytes = b"\x81\xa1a\x93\xc3\xc0\xcb\x3f\xf8\0\0\0\0\0\0";
    let printed = format!("{:?}", ValueRef::decode(bytes).expect("decodes"));
    assert_eq!(
        printed,
        r#"Map([(Str("a"), Array([Bool(true), Nil, F64(1.5)]))])"#
    );
    assert_eq!(
        format!("{:?}", msgpack::decode(bytes).expect("decodes")),
        printed
    );
}
