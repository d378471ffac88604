//! JSON text ⇄ [`Value`], for `json`-tagged rows (Python's legacy rows and everything
//! LangGraphJS writes) and for reading JSON views.
//!
//! The parser accepts what Python's `json.loads` accepts — including the `NaN`,
//! `Infinity` and `-Infinity` literals that `json.dumps` writes — and is iterative, so
//! nesting costs heap bounded by the depth limit, never call stack. Objects become
//! [`Value::Map`]s with string keys in document order (duplicates kept).

use std::fmt;

use crate::kind::ErrorKind;
use crate::value::{BigInt, Int, PyWStr, Value};

/// JSON text (a `json`-tagged row or a JSON view) could not be parsed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct JsonError {
    message: String,
    offset: usize,
}

impl JsonError {
    pub(crate) fn new(message: impl Into<String>, offset: usize) -> Self {
        JsonError {
            message: message.into(),
            offset,
        }
    }

    /// The byte offset in the JSON text.
    pub fn offset(&self) -> usize {
        self.offset
    }

    /// What was wrong.
    pub fn message(&self) -> &str {
        &self.message
    }
}

impl fmt::Display for JsonError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "invalid JSON at byte {}: {}", self.offset, self.message)
    }
}

impl std::error::Error for JsonError {}

impl JsonError {
    /// The crate-wide kind: [`ErrorKind::InvalidJson`].
    pub fn kind(&self) -> ErrorKind {
        ErrorKind::InvalidJson
    }
}

impl From<&JsonError> for ErrorKind {
    fn from(e: &JsonError) -> Self {
        e.kind()
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

enum Frame {
    Array(Vec<Value>),
    /// The last entry's value is a placeholder until it is read (the key waits there,
    /// which keeps a frame, and so the heap a deep document costs, small).
    Object(Vec<(Value, Value)>),
}

/// Parses one JSON document. Nesting deeper than `max_depth` is an error.
///
/// # Errors
/// [`JsonError`] with the byte offset: text that is not JSON (Python's dialect), bytes
/// after the document, invalid UTF-8, or nesting deeper than `max_depth`.
pub fn parse(text: &[u8], max_depth: usize) -> Result<Value, JsonError> {
    Parser::new(text, max_depth, None).run()
}

/// What an object becomes once read, given its entries in document order: Python's
/// `json.loads(object_hook=…)`.
pub(crate) type ObjectHook = fn(Vec<(Value, Value)>) -> Value;

/// [`parse`] with Python's `object_hook`: every object, innermost first (its values
/// are already what the hook made of them), becomes `hook(entries)`. `json` rows are
/// read with this (`typed::revive`).
///
/// # Errors
/// As [`parse`].
pub(crate) fn parse_with_object_hook(
    text: &[u8],
    max_depth: usize,
    hook: ObjectHook,
) -> Result<Value, JsonError> {
    Parser::new(text, max_depth, Some(hook)).run()
}

struct Parser<'a> {
    text: &'a [u8],
    pos: usize,
    max_depth: usize,
    object_hook: Option<ObjectHook>,
}

impl<'a> Parser<'a> {
    fn new(text: &'a [u8], max_depth: usize, object_hook: Option<ObjectHook>) -> Self {
        Parser {
            text,
            pos: 0,
            max_depth,
            object_hook,
        }
    }

    fn err(&self, message: impl Into<String>) -> JsonError {
        JsonError::new(message, self.pos)
    }

    /// A closed object: its entries, or what the object hook makes of them.
    fn object(&self, entries: Vec<(Value, Value)>) -> Value {
        match self.object_hook {
            Some(hook) => hook(entries),
            None => Value::Map(entries),
        }
    }

    fn peek(&self) -> Option<u8> {
        self.text.get(self.pos).copied()
    }

    fn skip_ws(&mut self) {
        while let Some(b' ' | b'\t' | b'\n' | b'\r') = self.peek() {
            self.pos += 1;
        }
    }

    fn expect_byte(&mut self, b: u8, what: &str) -> Result<(), JsonError> {
        self.skip_ws();
        if self.peek() == Some(b) {
            self.pos += 1;
            Ok(())
        } else {
            Err(self.err(format!("expected {what}")))
        }
    }

    fn run(mut self) -> Result<Value, JsonError> {
        let mut stack: Vec<Frame> = Vec::new();
        loop {
            // Read the next value, or open a container.
            self.skip_ws();
            let mut value = match self.peek() {
                Some(b'[') | Some(b'{') => {
                    if stack.len() >= self.max_depth {
                        return Err(
                            self.err(format!("nesting deeper than {} levels", self.max_depth))
                        );
                    }
                    let open = self.peek();
                    self.pos += 1;
                    self.skip_ws();
                    if open == Some(b'[') {
                        if self.peek() == Some(b']') {
                            self.pos += 1;
                            Value::Array(Vec::new())
                        } else {
                            stack.push(Frame::Array(Vec::new()));
                            continue;
                        }
                    } else if self.peek() == Some(b'}') {
                        self.pos += 1;
                        self.object(Vec::new())
                    } else {
                        let key = self.read_key()?;
                        stack.push(Frame::Object(vec![(key, Value::Nil)]));
                        continue;
                    }
                }
                _ => self.read_scalar()?,
            };
            // Hand it to the open containers.
            loop {
                let Some(frame) = stack.pop() else {
                    self.skip_ws();
                    if self.pos != self.text.len() {
                        return Err(self.err("trailing characters after the JSON value"));
                    }
                    return Ok(value);
                };
                self.skip_ws();
                match frame {
                    Frame::Array(mut items) => {
                        items.push(value);
                        match self.peek() {
                            Some(b',') => {
                                self.pos += 1;
                                stack.push(Frame::Array(items));
                                break;
                            }
                            Some(b']') => {
                                self.pos += 1;
                                value = Value::Array(items);
                            }
                            _ => return Err(self.err("expected ',' or ']' in array")),
                        }
                    }
                    Frame::Object(mut entries) => {
                        if let Some(last) = entries.last_mut() {
                            last.1 = value;
                        }
                        match self.peek() {
                            Some(b',') => {
                                self.pos += 1;
                                let key = self.read_key()?;
                                entries.push((key, Value::Nil));
                                stack.push(Frame::Object(entries));
                                break;
                            }
                            Some(b'}') => {
                                self.pos += 1;
                                value = self.object(entries);
                            }
                            _ => return Err(self.err("expected ',' or '}' in object")),
                        }
                    }
                }
            }
        }
    }

    /// Reads `"key" :`: a [`Value::Str`], or a [`Value::WStr`] for a key with lone
    /// surrogates (Python reads those too).
    fn read_key(&mut self) -> Result<Value, JsonError> {
        self.skip_ws();
        if self.peek() != Some(b'"') {
            return Err(self.err("expected a string key"));
        }
        let key = self.read_string_value()?;
        self.expect_byte(b':', "':' after an object key")?;
        Ok(key)
    }

    fn literal(&mut self, word: &[u8]) -> bool {
        if self.text.get(self.pos..self.pos + word.len()) == Some(word) {
            self.pos += word.len();
            true
        } else {
            false
        }
    }

    fn read_scalar(&mut self) -> Result<Value, JsonError> {
        match self.peek() {
            Some(b'"') => self.read_string_value(),
            Some(b'n') if self.literal(b"null") => Ok(Value::Nil),
            Some(b't') if self.literal(b"true") => Ok(Value::Bool(true)),
            Some(b'f') if self.literal(b"false") => Ok(Value::Bool(false)),
            Some(b'N') if self.literal(b"NaN") => Ok(Value::F64(f64::NAN)),
            Some(b'I') if self.literal(b"Infinity") => Ok(Value::F64(f64::INFINITY)),
            Some(b'-') if self.literal(b"-Infinity") => Ok(Value::F64(f64::NEG_INFINITY)),
            Some(b'-' | b'0'..=b'9') => self.read_number(),
            None => Err(self.err("unexpected end of JSON input")),
            Some(_) => Err(self.err("expected a JSON value")),
        }
    }

    fn read_number(&mut self) -> Result<Value, JsonError> {
        let start = self.pos;
        if self.peek() == Some(b'-') {
            self.pos += 1;
        }
        let digits = |p: &mut Self| {
            let s = p.pos;
            while let Some(b'0'..=b'9') = p.peek() {
                p.pos += 1;
            }
            p.pos - s
        };
        let int_start = self.pos;
        let n = digits(self);
        if n == 0 {
            return Err(self.err("expected digits"));
        }
        if n > 1 && self.text.get(int_start) == Some(&b'0') {
            return Err(JsonError::new("leading zeros are not allowed", int_start));
        }
        let mut is_float = false;
        if self.peek() == Some(b'.') {
            self.pos += 1;
            is_float = true;
            if digits(self) == 0 {
                return Err(self.err("expected digits after '.'"));
            }
        }
        if let Some(b'e' | b'E') = self.peek() {
            self.pos += 1;
            is_float = true;
            if let Some(b'+' | b'-') = self.peek() {
                self.pos += 1;
            }
            if digits(self) == 0 {
                return Err(self.err("expected digits in the exponent"));
            }
        }
        let s = std::str::from_utf8(self.text.get(start..self.pos).unwrap_or_default())
            .map_err(|_| JsonError::new("invalid number", start))?;
        if is_float {
            s.parse::<f64>()
                .map(Value::F64)
                .map_err(|_| JsonError::new("invalid number", start))
        } else {
            // Python's int() reads any number of digits; beyond the msgpack range the
            // value is kept exactly as a BigInt.
            if let Some(i) = s.parse::<i128>().ok().and_then(Int::from_i128) {
                Ok(Value::Int(i))
            } else {
                s.parse::<BigInt>()
                    .map(|n| Value::BigInt(Box::new(n)))
                    .map_err(|_| JsonError::new("invalid number", start))
            }
        }
    }

    fn hex4(&mut self) -> Result<u32, JsonError> {
        let digits = self
            .text
            .get(self.pos..self.pos + 4)
            .and_then(|d| std::str::from_utf8(d).ok())
            .and_then(|d| u32::from_str_radix(d, 16).ok())
            .ok_or_else(|| self.err("expected four hex digits after \\u"))?;
        self.pos += 4;
        Ok(digits)
    }

    /// A string value: a [`Value::Str`], or a [`Value::WStr`] if it holds lone
    /// surrogates (Python reads `"\ud800"` as a one-character str).
    fn read_string_value(&mut self) -> Result<Value, JsonError> {
        // Most strings (every key and value of a checkpoint row) hold no escape: their
        // text is the run up to the closing quote, checked once and stored as it is,
        // without the intermediate `String` (one allocation and free per string, and
        // for short ones a second copy into the inline `PyStr`). Anything else (an
        // escape, a control character, the end of the input) takes the general reader
        // from the start, which gives the errors and their offsets.
        let start = self.pos + 1;
        let rest = self.text.get(start..).unwrap_or_default();
        if let Some(n) = rest
            .iter()
            .position(|&b| b == b'"' || b == b'\\' || b < 0x20)
        {
            if let (Some(b'"'), Some(run)) = (rest.get(n), rest.get(..n)) {
                let s = std::str::from_utf8(run).map_err(|e| {
                    JsonError::new("string is not valid UTF-8", start + e.valid_up_to())
                })?;
                self.pos = start + n + 1;
                return Ok(Value::Str(s.into()));
            }
        }
        let mut lone = Vec::new();
        let s = self.read_string(&mut lone)?;
        if lone.is_empty() {
            return Ok(Value::Str(s.into()));
        }
        // `s` holds U+FFFD where each lone surrogate was (at the recorded byte offset).
        let mut lone = lone.into_iter().peekable();
        let points = s.char_indices().map(|(at, c)| match lone.peek() {
            Some(&(offset, cp)) if offset == at => {
                lone.next();
                cp
            }
            _ => u32::from(c),
        });
        PyWStr::from_code_points(points)
            .map(|w| Value::WStr(Box::new(w)))
            .ok_or_else(|| self.err("invalid string"))
    }

    /// Reads a string; each lone surrogate escape becomes U+FFFD in the result and
    /// `(byte offset in the result, code point)` in `lone`.
    fn read_string(&mut self, lone: &mut Vec<(usize, u32)>) -> Result<String, JsonError> {
        // Opening quote.
        self.pos += 1;
        let mut out = String::new();
        loop {
            let run_start = self.pos;
            while let Some(b) = self.peek() {
                if b == b'"' || b == b'\\' || b < 0x20 {
                    break;
                }
                self.pos += 1;
            }
            let run = self.text.get(run_start..self.pos).unwrap_or_default();
            match std::str::from_utf8(run) {
                Ok(s) => out.push_str(s),
                Err(e) => {
                    return Err(JsonError::new(
                        "string is not valid UTF-8",
                        run_start + e.valid_up_to(),
                    ))
                }
            }
            match self.peek() {
                Some(b'"') => {
                    self.pos += 1;
                    return Ok(out);
                }
                Some(b'\\') => {
                    self.pos += 1;
                    let esc = self.peek().ok_or_else(|| self.err("unterminated string"))?;
                    self.pos += 1;
                    match esc {
                        b'"' => out.push('"'),
                        b'\\' => out.push('\\'),
                        b'/' => out.push('/'),
                        b'b' => out.push('\u{8}'),
                        b'f' => out.push('\u{c}'),
                        b'n' => out.push('\n'),
                        b'r' => out.push('\r'),
                        b't' => out.push('\t'),
                        b'u' => {
                            let hi = self.hex4()?;
                            // A high surrogate followed by a low one is one character;
                            // any other surrogate is kept alone, as Python does.
                            let pair = if (0xd800..0xdc00).contains(&hi) {
                                let save = self.pos;
                                let lo = if self.literal(b"\\u") {
                                    self.hex4().ok()
                                } else {
                                    None
                                };
                                match lo {
                                    Some(lo) if (0xdc00..0xe000).contains(&lo) => {
                                        Some(0x10000 + ((hi - 0xd800) << 10) + (lo - 0xdc00))
                                    }
                                    _ => {
                                        self.pos = save;
                                        None
                                    }
                                }
                            } else {
                                None
                            };
                            match char::from_u32(pair.unwrap_or(hi)) {
                                Some(c) => out.push(c),
                                None => {
                                    lone.push((out.len(), hi));
                                    out.push('\u{FFFD}');
                                }
                            }
                        }
                        _ => return Err(JsonError::new("invalid escape", self.pos - 1)),
                    }
                }
                Some(_) => return Err(self.err("control character in string")),
                None => return Err(self.err("unterminated string")),
            }
        }
    }
}

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
            for (i, (k, v)) in entries.iter().enumerate() {
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

#[cfg(test)]
mod tests {
    use super::*;

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
        assert_eq!(styled(&JSONB), reference);
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
