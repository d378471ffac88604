//! The record formats of `lgcodec` (and of the vector files): one JSON object per row.
//!
//! - A *data record* `{"type": TAG, "data": BASE64}` is a stored `(type, bytes)` pair.
//! - A *value record* `{"type": TAG, "value": VIEW}` is the same row as a JSON
//!   [view](crate::view) of its value.
//! - An *error record* `{"error": {"kind": KIND, "message": TEXT, "hint": TEXT}}` answers
//!   a record that failed (`hint` only when there is advice).
//!
//! [`decode_record`] turns the first into the second, [`encode_record`] the second into
//! the first; for every pair Python writes, one after the other gives back the same bytes
//! (`json`-tagged rows excepted: their whitespace and escaping are not kept).
//!
//! [`run_jsonl`] answers a JSONL batch: every answer carries the input's `line` number
//! and the input's other fields (an id, say), a line that fails (too long, not UTF-8,
//! not a record) is answered with an error record and the batch goes on, and an error
//! record in the input passes through unchanged.

use std::io::{self, BufRead, Write};

use base64::engine::general_purpose::STANDARD as B64;
use base64::Engine as _;
use serde::Serialize;
use serde_json::json;

use crate::compression::CompressedSerializer;
use crate::crypto::{CryptoFault, EncryptedSerializer, AES_CIPHER_NAME};
use crate::error::Error;
use crate::kind::ErrorKind;
use crate::msgpack::DecodeErrorKind;
use crate::serializer::{tags, JsonPlusSerializer, Serializer, TagError, TypedBytes};
use crate::value::Value;
use crate::view::View;
use crate::view::ViewError;

/// Nesting allowed in a record line (the view of a value nests deeper than the value;
/// values nest up to `DEFAULT_MAX_TOTAL_DEPTH` levels across extension payloads).
const RECORD_DEPTH: usize = 4 * crate::msgpack::DEFAULT_MAX_TOTAL_DEPTH;

/// The default limit on one JSONL input line: 64 MiB.
pub const DEFAULT_MAX_LINE_BYTES: usize = 64 << 20;

/// Field names a JSONL answer sets itself; every other input field passes through.
const RESERVED: [&str; 5] = ["line", "type", "data", "value", "error"];

/// The type tags `lgcodec` reads, before wrapper suffixes.
pub const KNOWN_TAGS: &str = "null, bytes, bytearray, msgpack, json, empty \
     (each optionally followed by +zlib and/or +aes, e.g. msgpack+zlib+aes)";

/// A parsed JSONL record: a JSON object, its fields in input order.
#[derive(Clone, Debug, PartialEq)]
pub struct Record {
    fields: Vec<(String, Value)>,
}

impl Record {
    /// Parses one record line (a JSON object).
    ///
    /// # Errors
    /// [`ErrorKind::InvalidJson`] for text that is not JSON, [`ErrorKind::InvalidView`] for JSON that is not
    /// an object.
    pub fn parse(line: &str) -> Result<Record, Error> {
        let Ok(entries) = crate::json::parse(line.as_bytes(), RECORD_DEPTH)?.into_map() else {
            return Err(ViewError::new("$", "a record must be a JSON object").into());
        };
        let fields = entries
            .into_iter()
            .map(|(k, v)| (k.as_str().unwrap_or_default().to_owned(), v))
            .collect();
        Ok(Record { fields })
    }

    /// The field `name`, if present.
    pub fn field(&self, name: &str) -> Option<&Value> {
        self.fields
            .iter()
            .find_map(|(k, v)| (k == name).then_some(v))
    }

    /// The string field `name`.
    ///
    /// # Errors
    /// [`ViewError`] naming the field when it is missing or not a string.
    pub fn str_field(&self, name: &str) -> Result<&str, ViewError> {
        match self.field(name) {
            Some(Value::Str(s)) => Ok(s),
            Some(other) => Err(ViewError::new(
                format!("$.{name}"),
                format!("must be a string, found {}", other.kind_name()),
            )),
            None => Err(ViewError::new("$", format!("missing field \"{name}\""))),
        }
    }

    /// The fields an answer passes through: all but `line`, `type`, `data`, `value`
    /// and `error`, in input order.
    pub fn passthrough(&self) -> impl Iterator<Item = (&str, &Value)> {
        self.fields
            .iter()
            .filter(|(k, _)| !RESERVED.contains(&k.as_str()))
            .map(|(k, v)| (k.as_str(), v))
    }

    /// Reads the record as a data record `{"type": TAG, "data": BASE64}`.
    ///
    /// # Errors
    /// [`ErrorKind::InvalidView`] naming the missing or malformed field.
    pub fn data(&self) -> Result<TypedBytes, Error> {
        let type_tag = self.str_field("type")?.to_owned();
        let data = B64
            .decode(self.str_field("data")?.as_bytes())
            .map_err(|e| ViewError::new("$.data", format!("not valid base64: {e}")))?;
        Ok(TypedBytes::new(type_tag, data))
    }

    /// Reads the record as a value record `{"type": TAG, "value": VIEW}`.
    ///
    /// # Errors
    /// [`ErrorKind::InvalidView`] naming the missing or malformed field.
    pub fn value(&self) -> Result<(String, Value), Error> {
        let type_tag = self.str_field("type")?.to_owned();
        let view = self
            .field("value")
            .ok_or_else(|| ViewError::new("$", "missing field \"value\""))?;
        Ok((type_tag, crate::view::from_json_value(view.clone())?))
    }
}

/// Reads a data record `{"type": TAG, "data": BASE64}`.
///
/// # Errors
/// [`ErrorKind::InvalidJson`] or [`ErrorKind::InvalidView`] saying what is wrong with the line.
pub fn parse_data_record(line: &str) -> Result<TypedBytes, Error> {
    Record::parse(line)?.data()
}

/// Reads a value record `{"type": TAG, "value": VIEW}`.
///
/// # Errors
/// [`ErrorKind::InvalidJson`] or [`ErrorKind::InvalidView`] saying what is wrong with the text.
pub fn parse_value_record(text: &str) -> Result<(String, Value), Error> {
    Record::parse(text)?.value()
}

/// The type tag a reader of `type_tag` answers with: the inner tag, before any wrapper
/// suffixes such as `+aes` or `+zlib`.
pub fn inner_tag(type_tag: &str) -> &str {
    type_tag.split('+').next().unwrap_or(type_tag)
}

/// How `lgcodec` reads rows: JsonPlus under `+zlib` and, when `LANGGRAPH_AES_KEY` is
/// usable, `+aes`. A key that is missing or invalid does not stop plaintext rows: only
/// encrypted rows fail, with the key's error.
#[derive(Debug)]
pub struct RowReader {
    plain: CompressedSerializer<JsonPlusSerializer>,
    keyed: Option<EncryptedSerializer<CompressedSerializer<JsonPlusSerializer>>>,
    key_problem: Option<Error>,
    strict: bool,
}

impl RowReader {
    /// Keys from the process environment (see [`KeyRing`](crate::crypto::KeyRing)).
    pub fn from_env() -> Self {
        let plain = CompressedSerializer::new(JsonPlusSerializer::new());
        let key_set = std::env::var_os(crate::crypto::ENV_KEY).is_some();
        match crate::crypto::KeyRing::from_env() {
            Ok(ring) => RowReader {
                keyed: Some(EncryptedSerializer::new(ring, plain.clone())),
                plain,
                key_problem: None,
                strict: false,
            },
            Err(e) => RowReader {
                plain,
                keyed: None,
                key_problem: key_set.then_some(e),
                strict: false,
            },
        }
    }

    /// Strict mode: refuse rows that are not encrypted
    /// (kind [`PlaintextRefused`](ErrorKind::PlaintextRefused)), with a key or without one. `from_env` leaves
    /// it off; the CLI turns it on for `--strict` or `LANGGRAPH_AES_STRICT`
    /// ([`strict_from_env`](crate::crypto::strict_from_env)).
    pub fn with_strict(mut self, strict: bool) -> Self {
        self.strict = strict;
        self.keyed = self.keyed.map(|k| k.with_strict(strict));
        self
    }

    /// Why encrypted rows cannot be read, when a key is configured but unusable.
    pub fn key_problem(&self) -> Option<&Error> {
        self.key_problem.as_ref()
    }

    /// Reads a stored pair. `empty` (the savers' marker for a channel without a value,
    /// with no bytes) reads as nil.
    ///
    /// # Errors
    /// The serializer's errors; for an `+aes` row without a usable key, the key's error
    /// (kind [`MissingKey`](ErrorKind::MissingKey) naming the row's type tag when none is
    /// set).
    pub fn loads(&self, type_tag: &str, data: &[u8]) -> Result<Value, Error> {
        if type_tag == tags::EMPTY {
            return if data.is_empty() {
                Ok(Value::Nil)
            } else {
                Err(ViewError::new(
                    "$.data",
                    format!("an \"empty\" marker holds no bytes, found {}", data.len()),
                )
                .into())
            };
        }
        if let Some(keyed) = &self.keyed {
            return keyed.loads_typed(type_tag, data);
        }
        let encrypted = type_tag
            .rsplit_once('+')
            .is_some_and(|(_, name)| name == AES_CIPHER_NAME);
        if !encrypted && self.strict {
            return Err(CryptoFault::PlaintextRefused {
                type_tag: type_tag.to_owned(),
            }
            .into());
        }
        if !encrypted {
            return self.plain.loads_typed(type_tag, data);
        }
        match crate::crypto::KeyRing::from_env() {
            // The environment changed since start-up; report the key as it was.
            Ok(_) => Err(without_key(type_tag)),
            Err(e) if e.kind() == ErrorKind::MissingKey => Err(without_key(type_tag)),
            Err(e) => Err(e),
        }
    }
}

fn without_key(type_tag: &str) -> Error {
    CryptoFault::EncryptedRowWithoutKey {
        type_tag: type_tag.to_owned(),
        var: crate::crypto::ENV_KEY.to_owned(),
    }
    .into()
}

/// Advice for an error reading `data` under `type_tag`: base64 text where bytes were
/// expected, ciphertext under a plaintext tag, an unknown tag.
pub fn hint(error: &Error, type_tag: &str, data: &[u8]) -> Option<String> {
    if let Some(TagError::UnknownType { .. }) = error.as_tag() {
        return Some(format!("valid types: {KNOWN_TAGS}"));
    }
    if error.kind() == ErrorKind::UnknownCipher {
        return Some(format!(
            "valid types: {KNOWN_TAGS}; set LANGGRAPH_AES_KEY to read +aes rows"
        ));
    }
    match error.as_decode() {
        Some(e) if looks_like_base64(data) => Some(format!(
            "the bytes look like base64 text, not stored bytes{}: decode the base64 first \
             (lgcodec decode --base64 reads base64 input)",
            trailing_note(e.kind())
        )),
        Some(e) if !type_tag.contains('+') && looks_like_ciphertext(data) => Some(format!(
            "the bytes look like ciphertext{}: an encrypted row's type tag ends in +aes \
                 (e.g. {}+aes), and LANGGRAPH_AES_KEY must hold its key",
            trailing_note(e.kind()),
            type_tag
        )),
        _ => None,
    }
}

fn trailing_note(kind: &DecodeErrorKind) -> &'static str {
    match kind {
        DecodeErrorKind::TrailingBytes { .. } => " (hence the trailing bytes)",
        _ => "",
    }
}

/// Standard base64 text (whitespace around it allowed) of at least two bytes.
fn looks_like_base64(data: &[u8]) -> bool {
    let text = data.trim_ascii();
    text.len() >= 4
        && text.len() % 4 == 0
        && text
            .iter()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'+' | b'/' | b'='))
        && B64.decode(text).is_ok()
}

/// At least a nonce and a tag, and bytes as varied as random ones: in the first 256
/// bytes, at least half distinct byte values (random: ~63%; msgpack of real state,
/// mostly text: far fewer).
fn looks_like_ciphertext(data: &[u8]) -> bool {
    if data.len() < crate::crypto::HEADER_LEN {
        return false;
    }
    let head = data.get(..256).unwrap_or(data);
    let mut seen = [false; 256];
    let mut distinct = 0usize;
    for &b in head {
        if let Some(slot) = seen.get_mut(usize::from(b)) {
            if !*slot {
                *slot = true;
                distinct = distinct.saturating_add(1);
            }
        }
    }
    distinct.saturating_mul(2) >= head.len()
}

/// Decodes a data record line with `serializer` into a one-line value record. The
/// answered type is the inner tag (`msgpack` for a `msgpack+aes` row).
///
/// # Errors
/// What is wrong with the line, or the serializer's error.
pub fn decode_record(serializer: &dyn Serializer, line: &str) -> Result<String, Error> {
    let typed = parse_data_record(line)?;
    let value = serializer.loads_typed(&typed.type_tag, &typed.data)?;
    Ok(value_record_string(
        inner_tag(&typed.type_tag),
        &value,
        false,
    ))
}

/// A value record `{"type": TAG, "value": VIEW}`; serializing it writes the view
/// straight from the value.
#[derive(Debug, Serialize)]
pub struct ValueRecord<'a> {
    /// The type tag.
    #[serde(rename = "type")]
    pub type_tag: &'a str,
    /// The value, written as its view.
    pub value: View<'a>,
}

/// The value record of a value as JSON text, on one line or indented (indentation
/// stops at [`view::PRETTY_INDENT_LEVELS`](crate::view::PRETTY_INDENT_LEVELS) levels).
pub fn value_record_string(type_tag: &str, value: &Value, pretty: bool) -> String {
    let mut out = Vec::new();
    // Writing into a Vec cannot fail.
    let _ = write_value_record(&mut out, type_tag, value, pretty);
    String::from_utf8(out).unwrap_or_default()
}

/// Writes the value record of a value to `out`, streaming the view.
///
/// # Errors
/// The writer's errors.
pub fn write_value_record(
    out: &mut dyn Write,
    type_tag: &str,
    value: &Value,
    pretty: bool,
) -> io::Result<()> {
    let record = ValueRecord {
        type_tag,
        value: View(value),
    };
    if pretty {
        crate::view::to_writer_pretty(out, &record)
    } else {
        serde_json::to_writer(out, &record).map_err(io::Error::other)
    }
}

/// The data record of a pair, as JSON.
pub fn data_record(typed: &TypedBytes) -> serde_json::Value {
    json!({ "type": typed.type_tag, "data": B64.encode(&typed.data) })
}

/// Encodes a value record's value under its own tag with
/// [`JsonPlusSerializer::dumps_as`]; `empty` (nil only) gives `("empty", b"")`.
///
/// # Errors
/// What is wrong with the value for its tag.
pub fn encode_value(type_tag: &str, value: &Value) -> Result<TypedBytes, Error> {
    if type_tag == tags::EMPTY {
        return match value {
            Value::Nil => Ok(TypedBytes::new(tags::EMPTY, Vec::new())),
            other => Err(TagError::TagMismatch {
                tag: type_tag.to_owned(),
                found: other.kind_name(),
            }
            .into()),
        };
    }
    JsonPlusSerializer::new().dumps_as(type_tag, value)
}

/// Encodes a value record text with [`encode_value`].
///
/// # Errors
/// What is wrong with the record.
pub fn encode_value_record(text: &str) -> Result<TypedBytes, Error> {
    let (type_tag, value) = parse_value_record(text)?;
    encode_value(&type_tag, &value)
}

/// Encodes a value record line into a one-line data record, passing the pair through
/// `wrap` (identity, or encryption) first.
///
/// # Errors
/// What is wrong with the record, or `wrap`'s error.
pub fn encode_record(
    line: &str,
    wrap: &dyn Fn(TypedBytes) -> Result<TypedBytes, Error>,
) -> Result<String, Error> {
    let typed = wrap(encode_value_record(line)?)?;
    Ok(data_record(&typed).to_string())
}

/// The error line for a failed record: `{"error": {"kind": …, "message": …}}`.
pub fn error_record(error: &Error) -> String {
    json!({ "error": error_json(error, None) }).to_string()
}

fn error_json(error: &Error, hint: Option<&str>) -> serde_json::Value {
    let mut e = json!({ "kind": error.kind().as_str(), "message": error.to_string() });
    if let (Some(hint), Some(map)) = (hint, e.as_object_mut()) {
        map.insert("hint".to_owned(), hint.into());
    }
    e
}

/// A record that failed: the error and, when there is advice, a hint.
#[derive(Debug)]
pub struct Failure {
    /// What went wrong.
    pub error: Error,
    /// What to do about it.
    pub hint: Option<String>,
}

impl From<Error> for Failure {
    fn from(error: Error) -> Self {
        Failure { error, hint: None }
    }
}

/// What a JSONL batch answers for one record.
#[derive(Debug)]
pub enum Answer {
    /// A value record: the inner type tag and the value.
    Value(String, Value),
    /// A data record.
    Data(TypedBytes),
}

/// What [`run_jsonl`] saw.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct BatchSummary {
    /// Records answered (blank lines excluded).
    pub records: u64,
    /// Records answered with an error (passed-through error records included).
    pub failed: u64,
    /// Blank lines (empty or whitespace only), skipped but counted in line numbers.
    pub blank: u64,
}

pub use crate::jsonl::{JsonlLine, JsonlReader};

/// Answers every record of a JSONL input with `answer`, one output line per record:
/// `{"line": N, <the input's other fields>, <the answer's fields>}`. A line that is
/// too long, not UTF-8 or not a JSON object is answered with an error record; an error
/// record in the input (a previous step's failure) passes through. Blank lines are
/// skipped and counted.
///
/// # Errors
/// Only I/O errors of `input` or `out`; record failures are answered in the output.
pub fn run_jsonl(
    input: impl BufRead,
    out: &mut dyn Write,
    max_line_bytes: usize,
    answer: &dyn Fn(&Record) -> Result<Answer, Failure>,
) -> io::Result<BatchSummary> {
    let mut reader = JsonlReader::new(input, max_line_bytes);
    let mut summary = BatchSummary::default();
    let mut line_out = Vec::new();
    while let Some((number, line)) = reader.next_line()? {
        let text = match line {
            JsonlLine::Blank => {
                summary.blank = summary.blank.saturating_add(1);
                continue;
            }
            JsonlLine::Text(text) => Ok(text),
            JsonlLine::TooLong { limit } => Err(line_error(
                "line_too_long",
                format!("line is longer than the limit of {limit} bytes (--max-line-bytes)"),
            )),
            JsonlLine::NotUtf8 { offset } => Err(line_error(
                "invalid_utf8",
                format!("line is not valid UTF-8 (byte {offset})"),
            )),
        };
        summary.records = summary.records.saturating_add(1);
        line_out.clear();
        let ok = answer_line(&mut line_out, number, text, answer)?;
        if !ok {
            summary.failed = summary.failed.saturating_add(1);
        }
        line_out.push(b'\n');
        out.write_all(&line_out)?;
    }
    out.flush()?;
    Ok(summary)
}

fn line_error(kind: &str, message: String) -> serde_json::Value {
    json!({ "kind": kind, "message": message })
}

/// Writes one answer line; `false` when it is an error record.
fn answer_line(
    out: &mut Vec<u8>,
    number: u64,
    text: Result<String, serde_json::Value>,
    answer: &dyn Fn(&Record) -> Result<Answer, Failure>,
) -> io::Result<bool> {
    write!(out, "{{\"line\":{number}")?;
    let text = match text {
        Ok(text) => text,
        Err(error) => return write_error(out, &error),
    };
    let record = match Record::parse(&text) {
        Ok(record) => record,
        Err(e) => return write_error(out, &error_json(&e, None)),
    };
    drop(text);
    for (key, value) in record.passthrough() {
        write_field(out, key)?;
        write_plain_json(out, value)?;
    }
    if let Some(error) = record.field("error") {
        write_field(out, "error")?;
        write_plain_json(out, error)?;
        out.push(b'}');
        return Ok(false);
    }
    match answer(&record) {
        Ok(Answer::Value(type_tag, value)) => {
            write_field(out, "type")?;
            serde_json::to_writer(&mut *out, &type_tag)?;
            write_field(out, "value")?;
            serde_json::to_writer(&mut *out, &View(&value))?;
        }
        Ok(Answer::Data(typed)) => {
            write_field(out, "type")?;
            serde_json::to_writer(&mut *out, &typed.type_tag)?;
            write_field(out, "data")?;
            serde_json::to_writer(&mut *out, &B64.encode(&typed.data))?;
        }
        Err(failure) => {
            return write_error(out, &error_json(&failure.error, failure.hint.as_deref()));
        }
    }
    out.push(b'}');
    Ok(true)
}

fn write_error(out: &mut Vec<u8>, error: &serde_json::Value) -> io::Result<bool> {
    write_field(out, "error")?;
    serde_json::to_writer(&mut *out, error)?;
    out.push(b'}');
    Ok(false)
}

fn write_field(out: &mut Vec<u8>, key: &str) -> io::Result<()> {
    out.push(b',');
    serde_json::to_writer(&mut *out, key)?;
    out.push(b':');
    Ok(())
}

/// A field as it was read: plain JSON (from the JSON parser) written back as JSON.
fn write_plain_json(out: &mut Vec<u8>, value: &Value) -> io::Result<()> {
    match crate::json::write(value) {
        Ok(text) => out.extend_from_slice(text.as_bytes()),
        Err(_) => serde_json::to_writer(&mut *out, &View(value))?,
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decode_then_encode_gives_the_same_pair() {
        // ormsgpack.packb({"a": b"\x00", 1: None}) (non-string key, bin).
        let line = r#"{"type": "msgpack", "data": "gqFhxAEAAcA="}"#;
        let decoded = decode_record(&JsonPlusSerializer::new(), line).expect("decodes");
        let encoded = encode_record(&decoded, &Ok).expect("encodes");
        assert_eq!(
            parse_data_record(&encoded).ok(),
            parse_data_record(line).ok()
        );
    }

    #[test]
    fn bad_records_name_the_field() {
        let err = decode_record(&JsonPlusSerializer::new(), r#"{"type": "msgpack"}"#)
            .expect_err("no data");
        assert!(err.to_string().contains("data"), "{err}");
        let err = encode_record(r#"{"type": "null", "value": 1}"#, &Ok).expect_err("mismatch");
        assert_eq!(err.kind(), crate::ErrorKind::TagMismatch);
    }
}
