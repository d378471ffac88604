//! Python's `json.dumps`, byte for byte, for the values a saver stores as JSON text.
//!
//! Python's SQLite saver stores metadata as `json.dumps(metadata, ensure_ascii=False)`
//! (separators `", "` and `": "`, `float.__repr__`, bare `NaN`/`Infinity`), and its `list`
//! filter compares dict and list values as `json.dumps(v, separators=(",", ":"))` (ASCII
//! escapes). A Rust writer that wants the very same rows has to write the very same text.

use crate::json::{self, Problem, Step};
use crate::value::Value;

/// The `json.dumps` options Python's savers use: one of the crate's JSON writer styles.
pub(crate) type Style = json::Style;

/// `json.dumps(metadata, ensure_ascii=False)`: the SQLite saver's metadata column.
pub(crate) const METADATA: Style = json::PY_METADATA;

/// `json.dumps(v, separators=(",", ":"))`: the SQLite `list` filter's dict/list values.
pub(crate) const FILTER: Style = json::PY_FILTER;

/// Writes `value` as Python's `json.dumps` would. `Err` names the kind of the first
/// value Python's encoder refuses (`TypeError: Object of type … is not JSON
/// serializable`) and where it is, as a `$.a[0]`-style path.
pub(crate) fn dumps(value: &Value, style: Style) -> Result<String, String> {
    let mut out = String::new();
    let mut trail: Vec<Step<'_>> = Vec::new();
    match json::write_styled(value, &style, &mut out, &mut trail) {
        Ok(()) => Ok(out),
        Err(Problem::Key { kind }) => Err(format!(
            "{}: a {kind} dict key (Python's json.dumps takes str, int, float, bool or None keys)",
            json::path_text(&trail)
        )),
        Err(Problem::Value { kind } | Problem::Jsonb { kind, .. }) => Err(format!(
            "{}: a {kind} has no JSON form (Python's json.dumps raises TypeError)",
            json::path_text(&trail)
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    // Expected strings are what CPython 3.11 prints for `repr(x)` / `json.dumps(x)`.
    #[test]
    fn floats_are_written_as_cpython_json_dumps_writes_them() {
        for (f, want) in [
            (1.0, "1.0"),
            (0.1, "0.1"),
            (-0.0, "-0.0"),
            (1e16, "1e+16"),
            (1e15, "1000000000000000.0"),
            (123456789012345680.0, "1.2345678901234568e+17"),
            (0.0001, "0.0001"),
            (0.00001, "1e-05"),
            (1.5e-7, "1.5e-07"),
            (1e100, "1e+100"),
            (2.5, "2.5"),
            (1234.5678, "1234.5678"),
            (5e-324, "5e-324"),
            (1.7976931348623157e308, "1.7976931348623157e+308"),
            (f64::INFINITY, "Infinity"),
            (f64::NEG_INFINITY, "-Infinity"),
        ] {
            assert_eq!(
                dumps(&Value::F64(f), METADATA).as_deref(),
                Ok(want),
                "{f:?}"
            );
        }
    }

    #[test]
    fn dumps_matches_cpython_default_and_compact() {
        let v = Value::Map(vec![
            (
                Value::from("a"),
                Value::Array(vec![Value::from(1i64), Value::F64(f64::NAN), Value::Nil]),
            ),
            (Value::from(1i64), Value::from("é\n\u{1}\"😀")),
            (Value::Nil, Value::Map(vec![])),
        ]);
        assert_eq!(
            dumps(&v, METADATA).as_deref(),
            Ok("{\"a\": [1, NaN, null], \"1\": \"é\\n\\u0001\\\"😀\", \"null\": {}}")
        );
        assert_eq!(
            dumps(&v, FILTER).as_deref(),
            Ok("{\"a\":[1,NaN,null],\"1\":\"\\u00e9\\n\\u0001\\\"\\ud83d\\ude00\",\"null\":{}}")
        );
    }

    #[test]
    fn refuses_what_python_refuses_with_a_path() {
        let v = Value::Map(vec![(
            Value::from("k"),
            Value::Array(vec![Value::Bin(bytes::Bytes::from_static(b"x"))]),
        )]);
        let err = dumps(&v, METADATA).unwrap_err();
        assert!(err.starts_with("$.k[0]: a bin "), "{err}");
    }
}
