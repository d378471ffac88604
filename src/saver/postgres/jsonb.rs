//! Values to and from the text of Postgres `jsonb` columns, as Python's savers see them.
//!
//! Writing is `json.dumps` of what Python would hand psycopg's `Jsonb`, refused (with
//! the path) where JSONB cannot hold it: NaN and infinities, `\u0000` in a string or key,
//! bytes, extension values, non-string keys. Reading is Python's `json.loads` of the
//! `jsonb` text Postgres prints: `1.0` stays a float, `1e100` (printed as 101 digits)
//! becomes an int, and integers beyond the msgpack range become
//! [`Value::BigInt`], kept exactly.

use super::error::PgFault;
use crate::error::Error;
use crate::json::{self, Problem, Step};
use crate::value::Value;

/// Deepest nesting read back from a `jsonb` column (what ormsgpack reads, too).
pub(crate) const MAX_DEPTH: usize = 1024;

/// Why a value cannot be held inline in a `jsonb` column, if it cannot.
pub(crate) use crate::json::jsonb_problem as scalar_problem;

/// Whether Python's `put` keeps this channel value inline in the checkpoint JSONB
/// (`None`, `str`, `int`, `float`, `bool`), and JSONB can hold it.
pub(crate) fn is_inline_primitive(value: &Value) -> bool {
    let primitive = matches!(
        value,
        Value::Nil
            | Value::Bool(_)
            | Value::Int(_)
            | Value::BigInt(_)
            | Value::F64(_)
            | Value::F32(_)
            | Value::Str(_)
            | Value::WStr(_)
    );
    primitive && scalar_problem(value).is_none()
}

/// Writes `value` as JSONB text, or says where and why it has no JSONB form.
pub(crate) fn write(value: &Value, what: &'static str) -> Result<String, Error> {
    let mut out = String::new();
    // The path is kept as steps and only printed on an error (printing it at every key
    // and index took most of the time of writing a checkpoint's JSONB).
    let mut trail: Vec<Step<'_>> = Vec::new();
    json::write_styled(value, &json::JSONB, &mut out, &mut trail).map_err(|problem| {
        let reason = match problem {
            Problem::Jsonb { reason, .. } => reason.to_owned(),
            Problem::Key { kind } => format!("a {kind} key has no JSONB form"),
            Problem::Value { kind } => format!("a {kind} value has no JSONB form"),
        };
        PgFault::NotJsonb {
            what,
            path: json::path_text(&trail),
            reason,
        }
    })?;
    Ok(out)
}

/// Reads `jsonb` text as Python's `json.loads` does.
pub(crate) fn read(text: &str, location: impl FnOnce() -> String) -> Result<Value, Error> {
    json::parse(text.as_bytes(), MAX_DEPTH).map_err(|e| {
        PgFault::UnreadableColumn {
            location: location(),
            reason: e.to_string(),
        }
        .into()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_read_as_python_json_loads() {
        // What Postgres prints for jsonb numbers Python wrote: 1.0, 1e100, 2**70, 0.1.
        let v = read(
            &format!(
                "[1.0, {}, 1180591620717411303424, 0.1, -5]",
                "1".to_owned() + &"0".repeat(100)
            ),
            String::new,
        )
        .expect("valid");
        let a = v.as_array().expect("array");
        assert_eq!(a[0], Value::F64(1.0));
        assert!(matches!(&a[1], Value::BigInt(n) if n.digits().len() == 101));
        assert!(matches!(&a[2], Value::BigInt(n) if n.digits() == "1180591620717411303424"));
        assert_eq!(a[3], Value::F64(0.1));
        assert_eq!(a[4], Value::from(-5i64));
        // A big int writes back as the bare number.
        assert_eq!(
            write(&a[2], "checkpoint").expect("ok"),
            "1180591620717411303424"
        );
    }

    #[test]
    fn writes_compact_json_that_reads_back() {
        let v = Value::map([
            (
                "a",
                Value::from(vec![Value::from(1i64), Value::from("x"), Value::Nil]),
            ),
            (
                "b",
                Value::map([("c", Value::Bool(true)), ("d", Value::from(-2i64))]),
            ),
        ]);
        let text = write(&v, "checkpoint").expect("JSONB can hold it");
        assert_eq!(text, r#"{"a":[1,"x",null],"b":{"c":true,"d":-2}}"#);
        assert_eq!(read(&text, String::new).expect("reads back"), v);
    }

    /// Postgres keeps an object's keys shorter first, then bytewise (its documentation,
    /// "jsonb ... does not preserve the order of object keys"; `lengthCompareJsonbString`
    /// in `jsonb_util.c`), and prints them so: the text is written in that order, at
    /// every depth, lengths in bytes. (Checked against the server in `bulk.rs`.)
    #[test]
    fn writes_keys_in_the_order_jsonb_keeps() {
        let v = Value::map([
            ("source", Value::from("loop")),
            ("step", Value::from(0i64)),
            (
                "parents",
                Value::map([
                    ("zz", Value::Nil),
                    ("\u{e9}", Value::Nil),
                    ("b", Value::Nil),
                ]),
            ),
            ("bb", Value::from(1i64)),
            ("ab", Value::from(2i64)),
            ("", Value::from(3i64)),
        ]);
        assert_eq!(
            write(&v, "metadata").expect("JSONB can hold it"),
            r#"{"":3,"ab":2,"bb":1,"step":0,"source":"loop","parents":{"b":null,"zz":null,"é":null}}"#
        );
        // Already in order: as given.
        let ordered = Value::map([("a", Value::Nil), ("b", Value::Nil), ("aa", Value::Nil)]);
        assert_eq!(
            write(&ordered, "metadata").expect("ok"),
            r#"{"a":null,"b":null,"aa":null}"#
        );
    }

    #[test]
    fn refuses_what_jsonb_cannot_hold_with_the_path() {
        let v = Value::Map(vec![(
            Value::from("a"),
            Value::Array(vec![Value::from(1i64), Value::F64(f64::NAN)]),
        )]);
        match write(&v, "metadata") {
            Err(e) if e.kind() == crate::ErrorKind::NotJsonb => {
                assert_eq!(e.subject(), Some("$.a[1]"));
                assert!(e.to_string().starts_with("metadata at $.a[1]: "), "{e}");
            }
            other => panic!("{other:?}"),
        }
        assert!(write(&Value::from("a\u{0}b"), "metadata").is_err());
        assert!(write(&Value::Bin(vec![1u8].into()), "metadata").is_err());
        assert!(!is_inline_primitive(&Value::F64(f64::INFINITY)));
        assert!(!is_inline_primitive(&Value::from("nul\u{0}")));
        let lone = crate::value::PyWStr::from_code_points([0x61, 0xd800]).expect("wtf-8");
        assert!(!is_inline_primitive(&Value::WStr(Box::new(lone))));
        assert!(is_inline_primitive(&Value::from("plain")));
        assert!(!is_inline_primitive(&Value::Array(vec![])));
    }
}
