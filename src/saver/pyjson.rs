//! Python's `json.dumps`, byte for byte, for the values a saver stores as JSON text.
//!
//! Python's SQLite saver stores metadata as `json.dumps(metadata, ensure_ascii=False)`
//! (separators `", "` and `": "`, `float.__repr__`, bare `NaN`/`Infinity`), and its `list`
//! filter compares dict and list values as `json.dumps(v, separators=(",", ":"))` (ASCII
//! escapes). A Rust writer that wants the very same rows has to write the very same text.

use std::fmt::Write as _;

use super::types::py_float_repr;
use crate::value::Value;

/// The `json.dumps` options Python's savers use.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Style {
    /// `ensure_ascii`: non-ASCII characters as `\uXXXX` escapes (surrogate pairs above
    /// U+FFFF).
    pub ensure_ascii: bool,
    /// `separators=(",", ":")` instead of the default `(", ", ": ")`.
    pub compact: bool,
}

/// `json.dumps(metadata, ensure_ascii=False)`: the SQLite saver's metadata column.
pub(crate) const METADATA: Style = Style {
    ensure_ascii: false,
    compact: false,
};

/// `json.dumps(v, separators=(",", ":"))`: the SQLite `list` filter's dict/list values.
pub(crate) const FILTER: Style = Style {
    ensure_ascii: true,
    compact: true,
};

/// Writes `value` as Python's `json.dumps` would. `Err` names the kind of the first
/// value Python's encoder refuses (`TypeError: Object of type … is not JSON
/// serializable`) and where it is, as a `$.a[0]`-style path.
pub(crate) fn dumps(value: &Value, style: Style) -> Result<String, String> {
    let mut out = String::new();
    let mut path = String::from("$");
    write_value(value, style, &mut out, &mut path)?;
    Ok(out)
}

fn write_value(
    value: &Value,
    style: Style,
    out: &mut String,
    path: &mut String,
) -> Result<(), String> {
    match value {
        Value::Nil => out.push_str("null"),
        Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Value::Int(i) => {
            let _ = write!(out, "{i}");
        }
        Value::F64(f) => write_float(*f, out),
        Value::F32(f) => write_float(f64::from(*f), out),
        Value::Str(s) => write_str(s, style.ensure_ascii, out),
        Value::Array(_) | Value::Map(_) => {
            crate::stack::guard(|| write_container(value, style, out, path))?
        }
        other => {
            return Err(format!(
                "{path}: a {} has no JSON form (Python's json.dumps raises TypeError)",
                other.kind_name()
            ))
        }
    }
    Ok(())
}

fn write_container(
    value: &Value,
    style: Style,
    out: &mut String,
    path: &mut String,
) -> Result<(), String> {
    let (item_sep, key_sep) = if style.compact {
        (",", ":")
    } else {
        (", ", ": ")
    };
    let mark = path.len();
    match value {
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push_str(item_sep);
                }
                let _ = write!(path, "[{i}]");
                write_value(item, style, out, path)?;
                path.truncate(mark);
            }
            out.push(']');
        }
        Value::Map(entries) => {
            out.push('{');
            for (i, (k, v)) in entries.iter().enumerate() {
                if i > 0 {
                    out.push_str(item_sep);
                }
                let key = key_text(k).ok_or_else(|| {
                    format!(
                        "{path}: a {} dict key (Python's json.dumps takes str, int, float, bool or None keys)",
                        k.kind_name()
                    )
                })?;
                write_str(&key, style.ensure_ascii, out);
                out.push_str(key_sep);
                let _ = write!(path, ".{key}");
                write_value(v, style, out, path)?;
                path.truncate(mark);
            }
            out.push('}');
        }
        _ => {}
    }
    Ok(())
}

/// A dict key as `json.dumps` turns it into a string.
fn key_text(key: &Value) -> Option<String> {
    Some(match key {
        Value::Str(s) => s.to_string(),
        Value::Bool(true) => "true".to_owned(),
        Value::Bool(false) => "false".to_owned(),
        Value::Nil => "null".to_owned(),
        Value::Int(i) => i.to_string(),
        Value::F64(f) => float_text(*f),
        Value::F32(f) => float_text(f64::from(*f)),
        _ => return None,
    })
}

fn write_float(f: f64, out: &mut String) {
    out.push_str(&float_text(f));
}

/// `float.__repr__`, and `json.dumps`'s `NaN`, `Infinity`, `-Infinity`.
fn float_text(f: f64) -> String {
    if f.is_nan() {
        return "NaN".to_owned();
    }
    if f.is_infinite() {
        return if f > 0.0 { "Infinity" } else { "-Infinity" }.to_owned();
    }
    py_float_repr(f)
}

/// A JSON string as `json.dumps` writes it: `py_encode_basestring` (ensure_ascii off)
/// or `py_encode_basestring_ascii`.
fn write_str(s: &str, ensure_ascii: bool, out: &mut String) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            c if (c as u32) < 0x20 => {
                let _ = write!(out, "\\u{:04x}", c as u32);
            }
            c if ensure_ascii && !c.is_ascii() => {
                let mut units = [0u16; 2];
                for unit in c.encode_utf16(&mut units) {
                    let _ = write!(out, "\\u{unit:04x}");
                }
            }
            c => out.push(c),
        }
    }
    out.push('"');
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
