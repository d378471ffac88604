//! The JSON parser: Python's `json.loads` dialect, iterative.

use crate::kind::ErrorKind;
use crate::value::{BigInt, Int, PyWStr, Value};
use std::fmt;

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
