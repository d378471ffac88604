//! JSON text ⇄ [`Value`](crate::Value), for `json`-tagged rows (Python's legacy rows and everything
//! LangGraphJS writes) and for reading JSON views.
//!
//! The parser accepts what Python's `json.loads` accepts — including the `NaN`,
//! `Infinity` and `-Infinity` literals that `json.dumps` writes — and is iterative, so
//! nesting costs heap bounded by the depth limit, never call stack. Objects become
//! [`Value::Map`](crate::Value::Map)s with string keys in document order (duplicates kept).
//!
//! Reading is in `reader` (the parser), writing in `writer` (one writer, several
//! styles).

mod reader;
mod writer;

pub(crate) use reader::parse_with_object_hook;
pub use reader::{parse, JsonError};
pub(crate) use writer::*;
pub use writer::{write, JsonWriteError};

#[cfg(test)]
mod tests {
    use super::reader::*;
    use super::writer::*;
    use crate::value::Value;

    /// The one writer in each style against its reference: Python's `json.dumps`
    /// (outputs below printed by CPython 3.11) and serde_json for compact JSON.
    #[test]
    fn each_style_writes_what_its_reference_writes() {
        let s = "a\"b\\c\n\r\t\u{8}\u{c}\u{1}\u{1f} é ✓ 😀 end";
        let items = vec![
            Value::from(s),
            Value::from(1.5f64),
            Value::from(1e16f64),
            Value::from(1e-5f64),
            Value::from(0.1f64),
            Value::from(-0.0f64),
            Value::from(3i64),
            Value::Bool(true),
            Value::Nil,
        ];
        let v = Value::map([
            (s, Value::from(items)),
            ("k", Value::map([("n", Value::from(2.0f64))])),
        ]);
        let styled = |style: &Style| {
            let mut out = String::new();
            write_styled(&v, style, &mut out, &mut ()).expect("writes");
            out
        };
        assert_eq!(
            styled(&PY_METADATA),
            r#"{"a\"b\\c\n\r\t\b\f\u0001\u001f é ✓ 😀 end": ["a\"b\\c\n\r\t\b\f\u0001\u001f é ✓ 😀 end", 1.5, 1e+16, 1e-05, 0.1, -0.0, 3, true, null], "k": {"n": 2.0}}"#
        );
        assert_eq!(
            styled(&PY_FILTER),
            r#"{"a\"b\\c\n\r\t\b\f\u0001\u001f \u00e9 \u2713 \ud83d\ude00 end":["a\"b\\c\n\r\t\b\f\u0001\u001f \u00e9 \u2713 \ud83d\ude00 end",1.5,1e+16,1e-05,0.1,-0.0,3,true,null],"k":{"n":2.0}}"#
        );
        let reference = serde_json::json!({
            s: [s, 1.5, 1e16, 1e-5, 0.1, -0.0, 3, true, null],
            "k": {"n": 2.0},
        })
        .to_string();
        assert_eq!(styled(&COMPACT), reference);
        // JSONB: the same text with the keys in the order the server keeps and prints
        // them (shorter first: "k" before the long key).
        let mut jsonb = String::new();
        write_styled(&v, &JSONB, &mut jsonb, &mut ()).expect("writes");
        let k = "\"k\":{\"n\":2.0}";
        let long = reference
            .strip_prefix('{')
            .and_then(|r| r.strip_suffix(&format!(",{k}}}")))
            .expect("the long key first, then k");
        assert_eq!(jsonb, format!("{{{k},{long}}}"));
        // Python's non-str keys.
        let keys = Value::Map(
            [
                (Value::from(1i64), Value::from("x")),
                (Value::from(2.5f64), Value::from("y")),
                (Value::Nil, Value::from("w")),
            ]
            .into_iter()
            .collect(),
        );
        let mut out = String::new();
        write_styled(&keys, &PY_METADATA, &mut out, &mut ()).expect("writes");
        assert_eq!(out, r#"{"1": "x", "2.5": "y", "null": "w"}"#);
    }

    /// DEL (0x7f) is ASCII but not printable: CPython's `json.dumps("a\x7fb")` gives
    /// `"a\u007fb"`, with `ensure_ascii=False` the byte stays as it is (as it does for
    /// serde_json and `JSON.stringify`).
    #[test]
    fn del_is_escaped_where_python_escapes_it() {
        let v = Value::from("a\u{7f}b");
        let styled = |style: &Style| {
            let mut out = String::new();
            write_styled(&v, style, &mut out, &mut ()).expect("writes");
            out
        };
        assert_eq!(styled(&PY_FILTER), r#""a\u007fb""#);
        assert_eq!(styled(&PY_METADATA), "\"a\u{7f}b\"");
        assert_eq!(styled(&COMPACT), serde_json::json!("a\u{7f}b").to_string());
    }

    /// Python's `object_hook`, from CPython 3.11:
    /// `json.loads('[{"a": {"b": 1}, "c": [{}]}, {}]', object_hook=lambda d: ["hooked", d])`
    /// is `[['hooked', {'a': ['hooked', {'b': 1}], 'c': [['hooked', {}]]}], ['hooked', {}]]`:
    /// every object, empty ones too, innermost first, its values already hooked.
    #[test]
    fn the_object_hook_sees_every_object_innermost_first() {
        fn hooked(entries: Vec<(Value, Value)>) -> Value {
            Value::Array(vec![Value::from("hooked"), Value::Map(entries)])
        }
        let text = br#"[{"a": {"b": 1}, "c": [{}]}, {}]"#;
        let got = parse_with_object_hook(text, 10, hooked).expect("parses");
        let h = |entries: Vec<(&str, Value)>| {
            hooked(
                entries
                    .into_iter()
                    .map(|(k, v)| (Value::from(k), v))
                    .collect(),
            )
        };
        let want = Value::Array(vec![
            h(vec![
                ("a", h(vec![("b", Value::from(1i64))])),
                ("c", Value::Array(vec![h(vec![])])),
            ]),
            h(vec![]),
        ]);
        assert_eq!(got, want);
        // Without a hook, the same text reads as plain maps.
        let plain = parse(text, 10).expect("parses");
        assert_eq!(
            plain.as_array().and_then(|a| a.get(1)),
            Some(&Value::Map(Vec::new()))
        );
        // The depth limit and errors are the parser's.
        assert!(parse_with_object_hook(br#"{"a": {"b": {}}}"#, 2, hooked).is_err());
        assert!(parse_with_object_hook(br#"{"a": 1,}"#, 10, hooked).is_err());
    }

    #[test]
    fn parses_python_json_dialect() {
        let v = parse(br#"{"a": [1, -2, 1.5, NaN, Infinity, -Infinity, null, true], "b": "\u00e9\ud83d\ude00"}"#, 16)
            .expect("valid JSON");
        let a = v.get("a").and_then(Value::as_array).expect("array under a");
        assert_eq!(a.len(), 8);
        assert_eq!(a[0], Value::from(1i64));
        assert_eq!(a[1], Value::from(-2i64));
        assert!(matches!(a[3], Value::F64(f) if f.is_nan()));
        assert_eq!(v.get("b").and_then(Value::as_str), Some("é😀"));
    }

    #[test]
    fn strings_are_written_as_serde_json_writes_them() {
        for s in [
            "plain",
            "",
            "é😀",
            "a\"b",
            "back\\slash",
            "\n\t\u{1}\u{1f}",
            "\u{7f}",
            " ~",
        ] {
            let expected = serde_json::to_string(s).expect("a str serializes");
            assert_eq!(
                write(&Value::from(s)).as_deref(),
                Ok(expected.as_str()),
                "{s:?}"
            );
        }
    }

    #[test]
    fn rejects_bad_json_with_offsets() {
        assert_eq!(parse(b"[1,]", 8).map_err(|e| e.offset()), Err(3));
        assert_eq!(parse(b"[1] x", 8).map_err(|e| e.offset()), Err(4));
        assert!(parse(b"01", 8).is_err());
        assert!(parse(&[b'['; 100_000], 1024).is_err());
    }

    /// Strings with and without escapes, as keys and values, read as serde_json reads
    /// them, and the errors inside a string at the offsets the byte-by-byte reader
    /// gives: the first bad byte of invalid UTF-8, the control character, the end.
    #[test]
    fn strings_read_as_serde_json_reads_them_and_fail_where_they_break() {
        let long = "lorem ipsum ".repeat(40);
        for text in [
            r#""""#.to_owned(),
            r#""a""#.to_owned(),
            r#""langchain_core.messages.ai""#.to_owned(),
            format!(r#""{long}""#),
            r#""é😀 ok""#.to_owned(),
            r#""a\"b""#.to_owned(),
            r#""tab\there\n""#.to_owned(),
            r#""\u00e9\ud83d\ude00x""#.to_owned(),
            r#"{"k": "v", "k2": ["x", "y\\z", ""], "": {"e": "é"}}"#.to_owned(),
            format!(r#"{{"channel_versions": {{"messages": "{long}"}}, "v": 4}}"#),
        ] {
            let expected: serde_json::Value = serde_json::from_str(&text).expect("valid JSON");
            let got = parse(text.as_bytes(), 16).expect("valid JSON");
            let back = write(&got).expect("writes");
            assert_eq!(
                serde_json::from_str::<serde_json::Value>(&back).ok(),
                Some(expected),
                "{text}"
            );
        }
        let fails = |text: &[u8]| parse(text, 16).map_err(|e| (e.offset(), e.to_string()));
        let bad_utf8 = fails(b"\"ab\xffc\"");
        assert_eq!(bad_utf8.as_ref().map_err(|e| e.0), Err(3));
        assert!(matches!(&bad_utf8, Err((_, m)) if m.contains("not valid UTF-8")));
        assert_eq!(fails(b"[\"ok\", \"\xe9t\xe9\"]").map_err(|e| e.0), Err(8));
        assert_eq!(fails(b"\"a\\n\xc3\"").map_err(|e| e.0), Err(4));
        assert_eq!(fails(b"\"ab\x01\"").map_err(|e| e.0), Err(3));
        assert_eq!(fails(b"\"abc").map_err(|e| e.0), Err(4));
        assert_eq!(fails(b"{\"k\": \"v\" \"x\"}").map_err(|e| e.0), Err(10));
    }

    #[test]
    fn big_integers_keep_their_exact_value() {
        assert_eq!(
            parse(b"18446744073709551615", 8).ok(),
            Some(Value::from(u64::MAX))
        );
        assert_eq!(
            parse(b"-9223372036854775808", 8).ok(),
            Some(Value::from(i64::MIN))
        );
    }
}
