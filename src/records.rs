//! The record formats of `lgcodec` (and of the vector files): one JSON object per row.
//!
//! - A *data record* `{"type": TAG, "data": BASE64}` is a stored `(type, bytes)` pair.
//! - A *value record* `{"type": TAG, "value": VIEW}` is the same row as a JSON
//!   [view](crate::view) of its value.
//!
//! [`decode_record`] turns the first into the second, [`encode_record`] the second into
//! the first; for every pair Python writes, one after the other gives back the same bytes
//! (`json`-tagged rows excepted: their whitespace and escaping are not kept).

use base64::engine::general_purpose::STANDARD as B64;
use base64::Engine as _;
use serde::Serialize;
use serde_json::json;

use crate::error::{Error, ViewError};
use crate::serializer::{JsonPlusSerializer, Serializer, TypedBytes};
use crate::value::Value;
use crate::view::View;

/// Nesting allowed in a record line (the view of a value nests deeper than the value;
/// values nest up to `DEFAULT_MAX_TOTAL_DEPTH` levels across extension payloads).
const RECORD_DEPTH: usize = 4 * crate::msgpack::DEFAULT_MAX_TOTAL_DEPTH;

/// Reads a data record `{"type": TAG, "data": BASE64}`.
pub fn parse_data_record(line: &str) -> Result<TypedBytes, Error> {
    let record = crate::json::parse(line.as_bytes(), RECORD_DEPTH)?;
    let type_tag = field_str(&record, "type")?.to_owned();
    let data = B64
        .decode(field_str(&record, "data")?.as_bytes())
        .map_err(|e| ViewError::new("$.data", format!("not valid base64: {e}")))?;
    Ok(TypedBytes::new(type_tag, data))
}

/// Reads a value record `{"type": TAG, "value": VIEW}`.
pub fn parse_value_record(text: &str) -> Result<(String, Value), Error> {
    let record = crate::json::parse(text.as_bytes(), RECORD_DEPTH)?;
    let type_tag = field_str(&record, "type")?.to_owned();
    let Ok(entries) = record.into_map() else {
        return Err(ViewError::new("$", "a record must be a JSON object").into());
    };
    let view = entries
        .into_iter()
        .find_map(|(k, v)| (k.as_str() == Some("value")).then_some(v))
        .ok_or_else(|| ViewError::new("$", "missing field \"value\""))?;
    Ok((type_tag, crate::view::from_json_value(view)?))
}

fn field_str<'v>(record: &'v Value, name: &str) -> Result<&'v str, ViewError> {
    match record.get(name) {
        Some(Value::Str(s)) => Ok(s),
        Some(other) => Err(ViewError::new(
            format!("$.{name}"),
            format!("must be a string, found {}", other.kind_name()),
        )),
        None => Err(ViewError::new("$", format!("missing field \"{name}\""))),
    }
}

/// The type tag a reader of `type_tag` answers with: the inner tag, before any wrapper
/// suffixes such as `+aes` or `+zlib`.
pub fn inner_tag(type_tag: &str) -> &str {
    type_tag.split('+').next().unwrap_or(type_tag)
}

/// Decodes a data record line with `serializer` into a one-line value record. The
/// answered type is the inner tag (`msgpack` for a `msgpack+aes` row).
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

/// The value record of a value as JSON text, on one line or indented.
pub fn value_record_string(type_tag: &str, value: &Value, pretty: bool) -> String {
    let record = ValueRecord {
        type_tag,
        value: View(value),
    };
    if pretty {
        serde_json::to_string_pretty(&record).unwrap_or_default()
    } else {
        serde_json::to_string(&record).unwrap_or_default()
    }
}

/// The data record of a pair, as JSON.
pub fn data_record(typed: &TypedBytes) -> serde_json::Value {
    json!({ "type": typed.type_tag, "data": B64.encode(&typed.data) })
}

/// Encodes a value record under its own tag with [`JsonPlusSerializer::dumps_as`].
pub fn encode_value_record(text: &str) -> Result<TypedBytes, Error> {
    let (type_tag, value) = parse_value_record(text)?;
    JsonPlusSerializer::new().dumps_as(&type_tag, &value)
}

/// Encodes a value record line into a one-line data record, passing the pair through
/// `wrap` (identity, or encryption) first.
pub fn encode_record(
    line: &str,
    wrap: &dyn Fn(TypedBytes) -> Result<TypedBytes, Error>,
) -> Result<String, Error> {
    let typed = wrap(encode_value_record(line)?)?;
    Ok(data_record(&typed).to_string())
}

/// The error line for a failed record: `{"error": {"kind": …, "message": …}}`.
pub fn error_record(error: &Error) -> String {
    json!({ "error": { "kind": error.kind_name(), "message": error.to_string() } }).to_string()
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
        assert_eq!(err.kind_name(), "tag_mismatch");
    }
}
