//! The one JSON writer and its styles.

use crate::kind::ErrorKind;
use crate::value::{PyWStr, Value};

/// A value has no JSON form: what was found. Converts into
/// the crate's [`Error`](crate::Error) (kind [`NoJsonForm`](crate::ErrorKind::NoJsonForm), the
/// error as [`as_json_write`](crate::Error::as_json_write)).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum JsonWriteError {
    /// A value of a kind JSON cannot hold (bytes, an extension, a Python object…).
    Unsupported {
        /// The kind of value, e.g. `"bin"` ([`Value::kind_name`]).
        kind: &'static str,
    },
    /// A map key that is not a string.
    NonStringKey {
        /// The kind of the key, e.g. `"int"`.
        kind: &'static str,
    },
}

impl JsonWriteError {
    /// The kind of the value (or map key) that has no JSON form, e.g. `"bin"`.
    pub fn value_kind(&self) -> &'static str {
        match self {
            JsonWriteError::Unsupported { kind } | JsonWriteError::NonStringKey { kind } => kind,
        }
    }
}

impl std::fmt::Display for JsonWriteError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            JsonWriteError::Unsupported { kind } => write!(f, "a {kind} value has no JSON form"),
            JsonWriteError::NonStringKey { kind } => {
                write!(f, "a map with a {kind} key has no JSON form")
            }
        }
    }
}

impl std::error::Error for JsonWriteError {}

/// Writes a plain value as compact JSON (as LangGraphJS's `JSON.stringify` does; NaN and
/// infinities as Python's `json.dumps` writes them).
///
/// ```
/// use langgraph_codec::json::{self, JsonWriteError};
/// use langgraph_codec::Value;
///
/// assert_eq!(json::write(&Value::from(vec![Value::from(1i64)]))?, "[1]");
/// assert_eq!(
///     json::write(&Value::Bin(vec![1u8].into())),
///     Err(JsonWriteError::Unsupported { kind: "bin" })
/// );
/// # Ok::<(), JsonWriteError>(())
/// ```
///
/// # Errors
/// Only nil, bool, numbers, strings, arrays and maps with string keys have a JSON
/// form: anything else is [`JsonWriteError`], saying what was found.
pub fn write(value: &Value) -> Result<String, JsonWriteError> {
    let mut out = String::new();
    write_into(value, &mut out)?;
    Ok(out)
}

/// [`write`] appending to `out` (on an error, `out` holds what was written before it).
pub(crate) fn write_into(value: &Value, out: &mut String) -> Result<(), JsonWriteError> {
    write_styled(value, &COMPACT, out, &mut ()).map_err(|p| match p {
        Problem::Key { kind } => JsonWriteError::NonStringKey { kind },
        Problem::Value { kind } | Problem::Jsonb { kind, .. } => {
            JsonWriteError::Unsupported { kind }
        }
    })
}

// The one JSON writer. Every JSON text the crate writes goes through `write_styled`
// with one of the styles below, so there is one walk, one string escaper and one float
// path; the styles differ only where the texts they must equal differ.

/// How floats are written.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Floats {
    /// The shortest text that reads back to the same `f64`, always marked as a float
    /// (`1.0`, `1e300`): serde_json's, and what the JSON views and JSONB columns hold.
    Shortest,
    /// Python's `float.__repr__` (`1e+16`, `1e-05`): `json.dumps`'s.
    PythonRepr,
}

/// Which map keys a style writes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(not(feature = "sqlite"), allow(dead_code))] // the SQLite saver's
pub(crate) enum Keys {
    /// Strings (lone surrogates included).
    Strings,
    /// Python's `json.dumps`: `str` keys, and `int`, `float`, `bool` and `None` keys as
    /// their JSON text.
    Python,
    /// JSONB: strings without U+0000.
    Jsonb,
}

/// One way of writing JSON text.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Style {
    /// Between items: `","` or Python's default `", "`.
    pub(crate) item_sep: &'static str,
    /// Between a key and its value: `":"` or Python's default `": "`.
    pub(crate) key_sep: &'static str,
    /// `ensure_ascii`: non-ASCII characters as `\uXXXX` escapes (surrogate pairs above
    /// U+FFFF).
    pub(crate) ensure_ascii: bool,
    /// The float format.
    pub(crate) floats: Floats,
    /// The keys written.
    pub(crate) keys: Keys,
    /// Integers beyond 64 bits and strings with lone surrogates are written (else
    /// refused, as the metadata writers always have).
    pub(crate) wide: bool,
    /// JSONB's rules: no NaN or infinities, no U+0000, no lone surrogates.
    pub(crate) jsonb: bool,
}

/// Compact JSON ([`write`]): `json`-tagged rows, as LangGraphJS's `JSON.stringify`
/// writes them.
pub(crate) const COMPACT: Style = Style {
    item_sep: ",",
    key_sep: ":",
    ensure_ascii: false,
    floats: Floats::Shortest,
    keys: Keys::Strings,
    wide: true,
    jsonb: false,
};

/// `json.dumps(metadata, ensure_ascii=False)`: Python's SQLite saver's metadata column.
#[cfg_attr(not(feature = "sqlite"), allow(dead_code))] // the SQLite saver's
pub(crate) const PY_METADATA: Style = Style {
    item_sep: ", ",
    key_sep: ": ",
    ensure_ascii: false,
    floats: Floats::PythonRepr,
    keys: Keys::Python,
    wide: false,
    jsonb: false,
};

/// `json.dumps(v, separators=(",", ":"))`: Python's SQLite `list` filter values.
#[cfg_attr(not(feature = "sqlite"), allow(dead_code))] // the SQLite saver's
pub(crate) const PY_FILTER: Style = Style {
    item_sep: ",",
    key_sep: ":",
    ensure_ascii: true,
    floats: Floats::PythonRepr,
    keys: Keys::Python,
    wide: false,
    jsonb: false,
};

/// Compact JSON a Postgres `jsonb` column holds.
#[cfg_attr(not(feature = "postgres"), allow(dead_code))] // the Postgres saver's
pub(crate) const JSONB: Style = Style {
    item_sep: ",",
    key_sep: ":",
    ensure_ascii: false,
    floats: Floats::Shortest,
    keys: Keys::Jsonb,
    wide: true,
    jsonb: true,
};

/// Why a value has no form in a style; where is the [`Trail`]'s business.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Problem {
    /// A value of a kind the style cannot hold.
    Value {
        /// [`Value::kind_name`].
        kind: &'static str,
    },
    /// A map key of a kind the style cannot hold (the trail points at the map).
    Key {
        /// [`Value::kind_name`] of the key.
        kind: &'static str,
    },
    /// A value or key JSONB cannot hold.
    Jsonb {
        /// [`Value::kind_name`].
        kind: &'static str,
        /// Why.
        reason: &'static str,
    },
}

/// Why a value cannot be held in a `jsonb` column, if it cannot.
pub(crate) fn jsonb_problem(value: &Value) -> Option<&'static str> {
    match value {
        Value::F64(f) if !f.is_finite() => Some("NaN and infinities have no JSONB form"),
        Value::F32(f) if !f.is_finite() => Some("NaN and infinities have no JSONB form"),
        Value::Str(s) if s.contains('\u{0}') => Some("JSONB strings cannot hold \\u0000"),
        Value::WStr(_) => Some("JSONB strings cannot hold lone surrogates"),
        _ => None,
    }
}

/// One step of the path to a value: a map key or an array index.
#[derive(Debug)]
#[cfg_attr(not(any(feature = "sqlite", feature = "postgres")), allow(dead_code))]
pub(crate) enum Step<'a> {
    /// A string key.
    Key(&'a str),
    /// A key as Python's `json.dumps` turns it into text.
    Text(String),
    /// An array index.
    Index(usize),
}

/// Where the writer is, kept only by writers that report it: `()` keeps nothing (and
/// costs nothing), a `Vec<Step>` keeps the steps (printed only on an error).
pub(crate) trait Trail<'a> {
    /// Whether steps are kept.
    const KEEPS: bool;
    /// Enters a step.
    fn enter(&mut self, step: Step<'a>);
    /// Leaves the last step.
    fn leave(&mut self);
}

impl<'a> Trail<'a> for () {
    const KEEPS: bool = false;
    #[inline(always)]
    fn enter(&mut self, _: Step<'a>) {}
    #[inline(always)]
    fn leave(&mut self) {}
}

impl<'a> Trail<'a> for Vec<Step<'a>> {
    const KEEPS: bool = true;
    #[inline]
    fn enter(&mut self, step: Step<'a>) {
        self.push(step);
    }
    #[inline]
    fn leave(&mut self) {
        self.pop();
    }
}

/// A trail as `$.a[0]`.
#[cfg_attr(not(any(feature = "sqlite", feature = "postgres")), allow(dead_code))]
pub(crate) fn path_text(path: &[Step<'_>]) -> String {
    use std::fmt::Write as _;
    let mut text = String::from("$");
    for step in path {
        match step {
            Step::Key(k) => {
                text.push('.');
                text.push_str(k);
            }
            Step::Text(k) => {
                text.push('.');
                text.push_str(k);
            }
            Step::Index(i) => {
                let _ = write!(text, "[{i}]");
            }
        }
    }
    text
}

/// Writes `value` in `style` into `out`; on an error the trail points at the culprit
/// (for a refused key, at its map).
pub(crate) fn write_styled<'a, T: Trail<'a>>(
    value: &'a Value,
    style: &Style,
    out: &mut String,
    trail: &mut T,
) -> Result<(), Problem> {
    use std::fmt::Write as _;
    if style.jsonb {
        if let Some(reason) = jsonb_problem(value) {
            let kind = value.kind_name();
            return Err(Problem::Jsonb { kind, reason });
        }
    }
    match value {
        Value::Nil => out.push_str("null"),
        Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        // (Writing into a `String` cannot fail.)
        Value::Int(i) => {
            let _ = write!(out, "{i}");
        }
        Value::F64(f) => write_float(*f, style.floats, out),
        Value::F32(f) => write_float(f64::from(*f), style.floats, out),
        Value::Str(s) => write_str(s, style.ensure_ascii, out),
        Value::BigInt(n) if style.wide => out.push_str(&n.to_string()),
        Value::WStr(w) if style.wide => write_wstr(w, style.ensure_ascii, out),
        Value::Array(_) | Value::Map(_) => {
            crate::stack::guard(|| write_container(value, style, out, trail))?
        }
        other => {
            return Err(Problem::Value {
                kind: other.kind_name(),
            })
        }
    }
    Ok(())
}

fn write_container<'a, T: Trail<'a>>(
    value: &'a Value,
    style: &Style,
    out: &mut String,
    trail: &mut T,
) -> Result<(), Problem> {
    match value {
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push_str(style.item_sep);
                }
                trail.enter(Step::Index(i));
                write_styled(item, style, out, trail)?;
                trail.leave();
            }
            out.push(']');
        }
        Value::Map(entries) => {
            out.push('{');
            let reordered = match style.keys {
                Keys::Jsonb => jsonb_key_order(entries),
                _ => None,
            };
            let at = |n: usize| match &reordered {
                Some(order) => order.get(n).and_then(|i| entries.get(*i)),
                None => entries.get(n),
            };
            for (i, (k, v)) in (0..entries.len()).filter_map(at).enumerate() {
                if i > 0 {
                    out.push_str(style.item_sep);
                }
                write_key(k, style, out, trail)?;
                out.push_str(style.key_sep);
                write_styled(v, style, out, trail)?;
                trail.leave();
            }
            out.push('}');
        }
        _ => {}
    }
    Ok(())
}

/// The order Postgres keeps a `jsonb` object's keys in (shorter first, then bytewise:
/// `lengthCompareJsonbString`), as positions into `entries`; `None` when they are in it
/// already (or a key is not a string, refused when it is written). The text written
/// this way is the text the server prints back but for its spaces, so a store copy's
/// read-back compares the two without parsing either (2026-12-02, 100,000 checkpoints
/// SQLite → Postgres: every checkpoint and metadata document sent in insertion order
/// fell back to parsing both texts, 8.6% of the copy's CPU samples).
fn jsonb_key_order(entries: &[(Value, Value)]) -> Option<Vec<usize>> {
    fn key(e: &(Value, Value)) -> Option<(usize, &[u8])> {
        match &e.0 {
            Value::Str(s) => Some((s.len(), s.as_bytes())),
            _ => None,
        }
    }
    let mut last = None;
    let mut sorted = true;
    for e in entries {
        let k = key(e)?;
        sorted &= last.is_none_or(|last| last <= k);
        last = Some(k);
    }
    if sorted {
        return None;
    }
    let mut order: Vec<usize> = (0..entries.len()).collect();
    // Stable: of a key written twice both stay, in their order (the server keeps the
    // last).
    order.sort_by_key(|i| entries.get(*i).and_then(key));
    Some(order)
}

/// Writes a map key and enters its step.
fn write_key<'a, T: Trail<'a>>(
    key: &'a Value,
    style: &Style,
    out: &mut String,
    trail: &mut T,
) -> Result<(), Problem> {
    let refused = || Problem::Key {
        kind: key.kind_name(),
    };
    match (style.keys, key) {
        (_, Value::Str(s)) => {
            trail.enter(Step::Key(s));
            if style.keys == Keys::Jsonb && s.contains('\u{0}') {
                return Err(Problem::Jsonb {
                    kind: "str",
                    reason: "JSONB keys cannot hold \\u0000",
                });
            }
            write_str(s, style.ensure_ascii, out);
        }
        (Keys::Strings, Value::WStr(w)) => {
            if T::KEEPS {
                let lossy = w
                    .code_points()
                    .map(|cp| char::from_u32(cp).unwrap_or('\u{fffd}'));
                trail.enter(Step::Text(lossy.collect()));
            }
            write_wstr(w, style.ensure_ascii, out);
        }
        (Keys::Python, _) => {
            let text = match key {
                Value::Bool(true) => "true".to_owned(),
                Value::Bool(false) => "false".to_owned(),
                Value::Nil => "null".to_owned(),
                Value::Int(i) => i.to_string(),
                Value::F64(f) => python_float_text(*f),
                Value::F32(f) => python_float_text(f64::from(*f)),
                _ => return Err(refused()),
            };
            write_str(&text, style.ensure_ascii, out);
            trail.enter(Step::Text(text));
        }
        _ => return Err(refused()),
    }
    Ok(())
}

/// A float in the given format; NaN and infinities as Python's `json.dumps` writes
/// them (`NaN`, `Infinity`, `-Infinity`).
fn write_float(f: f64, floats: Floats, out: &mut String) {
    if f.is_nan() {
        out.push_str("NaN");
    } else if f.is_infinite() {
        out.push_str(if f > 0.0 { "Infinity" } else { "-Infinity" });
    } else {
        match floats {
            // serde_json prints the shortest repr that reads back to the same f64, and
            // always marks it as a float (`1.0`, `1e300`).
            Floats::Shortest => out.push_str(&serde_json::Value::from(f).to_string()),
            Floats::PythonRepr => out.push_str(&py_float_repr(f)),
        }
    }
}

/// `json.dumps`'s text of a float (a dict key's).
fn python_float_text(f: f64) -> String {
    let mut out = String::new();
    write_float(f, Floats::PythonRepr, &mut out);
    out
}

/// Python's `repr(float)`: shortest round-trip digits, scientific notation when the
/// decimal exponent is below −4 or at least 16; `nan`, `inf`, `-inf`.
pub(crate) fn py_float_repr(x: f64) -> String {
    if x.is_nan() {
        return "nan".to_owned();
    }
    if x.is_infinite() {
        return if x > 0.0 { "inf" } else { "-inf" }.to_owned();
    }
    if x == 0.0 {
        return if x.is_sign_negative() { "-0.0" } else { "0.0" }.to_owned();
    }
    let sign = if x < 0.0 { "-" } else { "" };
    // Rust's `{:e}` gives the shortest round-trip digits: "8.444218515250481e-1".
    let sci = format!("{:e}", x.abs());
    let (mantissa, exp) = sci.split_once('e').unwrap_or((sci.as_str(), "0"));
    let exp: i64 = exp.parse().unwrap_or(0);
    let digits: String = mantissa.chars().filter(char::is_ascii_digit).collect();
    let ndigits = i64::try_from(digits.len()).unwrap_or(i64::MAX);
    let body = if (-4..16).contains(&exp) {
        if exp >= 0 {
            let int_len = usize::try_from(exp + 1).unwrap_or(0);
            if digits.len() <= int_len {
                let zeros = "0".repeat(int_len - digits.len());
                format!("{digits}{zeros}.0")
            } else {
                let (int_part, frac) = digits.split_at(int_len);
                format!("{int_part}.{frac}")
            }
        } else {
            let zeros = "0".repeat(usize::try_from(-exp - 1).unwrap_or(0));
            format!("0.{zeros}{digits}")
        }
    } else {
        let (first, rest) = digits.split_at(1.min(digits.len()));
        let frac = if ndigits > 1 {
            format!(".{rest}")
        } else {
            String::new()
        };
        let esign = if exp < 0 { '-' } else { '+' };
        format!("{first}{frac}e{esign}{:02}", exp.unsigned_abs())
    };
    format!("{sign}{body}")
}

/// A string with lone surrogates: the text as usual, each surrogate as a `\uXXXX`
/// escape (what `JSON.stringify` and Python's `json.dumps` write).
fn write_wstr(w: &PyWStr, ensure_ascii: bool, out: &mut String) {
    use std::fmt::Write as _;
    out.push('"');
    for cp in w.code_points() {
        match char::from_u32(cp) {
            Some(c) => escape_char(c, ensure_ascii, out),
            None => {
                let _ = write!(out, "\\u{cp:04x}");
            }
        }
    }
    out.push('"');
}

/// A JSON string: `"`, `\` and the controls below U+0020 escaped (as serde_json and
/// Python's `json.dumps` both escape them), and with `ensure_ascii` every non-ASCII
/// character as `\uXXXX` (Python's `py_encode_basestring_ascii`). A string that needs
/// no escape is copied whole.
fn write_str(s: &str, ensure_ascii: bool, out: &mut String) {
    // With `ensure_ascii`, Python escapes everything outside ' '..='~': DEL (0x7f) too.
    let plain = |b: u8| b >= 0x20 && b != b'"' && b != b'\\' && (b < 0x7f || !ensure_ascii);
    if s.bytes().all(plain) {
        out.reserve(s.len() + 2);
        out.push('"');
        out.push_str(s);
        out.push('"');
        return;
    }
    out.reserve(s.len() + 8);
    out.push('"');
    let mut run = 0;
    for (at, c) in s.char_indices() {
        if c.is_ascii() && plain(c as u8) {
            continue;
        }
        if !ensure_ascii && !c.is_ascii() {
            continue;
        }
        out.push_str(s.get(run..at).unwrap_or_default());
        escape_char(c, ensure_ascii, out);
        run = at + c.len_utf8();
    }
    out.push_str(s.get(run..).unwrap_or_default());
    out.push('"');
}

/// One character of a JSON string, escaped if it must be.
fn escape_char(c: char, ensure_ascii: bool, out: &mut String) {
    use std::fmt::Write as _;
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
        c if ensure_ascii && (c as u32) >= 0x7f => {
            let mut units = [0u16; 2];
            for unit in c.encode_utf16(&mut units) {
                let _ = write!(out, "\\u{unit:04x}");
            }
        }
        c => out.push(c),
    }
}

impl JsonWriteError {
    /// The crate-wide kind: [`ErrorKind::NoJsonForm`].
    pub fn kind(&self) -> ErrorKind {
        ErrorKind::NoJsonForm
    }
}

impl From<&JsonWriteError> for ErrorKind {
    fn from(e: &JsonWriteError) -> Self {
        e.kind()
    }
}
