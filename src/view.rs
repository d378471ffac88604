//! The lossless JSON view of a [`Value`]: how a person reads, or fixes by hand, a
//! checkpoint row.
//!
//! Plain JSON stands for itself: `null`, booleans, strings, arrays, objects whose keys are
//! all distinct strings not starting with `$`, integers (the whole `i64`/`u64` range, as
//! exact JSON integers) and finite float64s (always written with a `.` or an exponent, so
//! `1.0` stays a float and `1` an int). Everything else is a one-tag object:
//!
//! | value | view |
//! |---|---|
//! | bytes (msgpack bin) | `{"$bytes": "<base64>"}` |
//! | NaN / ±infinity | `{"$float": "NaN"}`, `{"$float": "Infinity"}`, `{"$float": "-Infinity"}`; a NaN with other payload bits adds `"bits": "<16 hex digits>"` |
//! | float32 | `{"$f32": 1.5}`; non-finite: `{"$float": "NaN", "$f32": true}`, a NaN with other payload bits adds `"bits": "<8 hex digits>"` |
//! | map with non-string, duplicate or `$`-keys | `{"$map": [[key, value], ...]}` |
//! | Python object (ext 0–5) | `{"$object": "pydantic_v2", "module": "...", "name": "...", "arg": ..., "method": "..."}` |
//! | numpy array (ext 6) | `{"$ndarray": "<f8", "shape": [2, 3], "order": "C", "buffer": "<base64>"}` |
//! | delta snapshot (ext 7) | `{"$delta_snapshot": ...}` |
//! | any other ext | `{"$ext": 99, "data": "<base64>"}` |
//! | integer beyond 64 bits (`json` rows) | `{"$bigint": "1180591620717411303424"}` |
//! | string with lone surrogates (`json` rows) | `{"$wstr": ["a", 55296, "b"]}` |
//!
//! The view is a serde mapping ([`View`] implements `Serialize`), so any serde format
//! writes it; its text forms here go through `serde_json`, the ecosystem's JSON writer.
//! That is on purpose and is not [`crate::json`]'s writer: `crate::json` exists to
//! reproduce the exact bytes of Python's `json.dumps` (metadata, filters, `json` rows,
//! JSONB), and the view has no Python counterpart whose bytes it must match.
//!
//! ```
//! use langgraph_codec::{msgpack, view};
//!
//! // A Python datetime as JsonPlusSerializer writes it: ext 3 around
//! // ("datetime", "datetime", "2024-05-01T12:00:00", "fromisoformat").
//! let text = r#"{"$object": "method_single_arg", "module": "datetime",
//!                "name": "datetime", "arg": "2024-05-01T12:00:00",
//!                "method": "fromisoformat"}"#;
//! let value = view::from_str(text)?;
//! let bytes = msgpack::encode(&value)?;
//! assert_eq!(bytes[0], 0xc7); // ext8
//! assert_eq!(view::from_str(&view::to_string_pretty(&msgpack::decode(&bytes)?))?, value);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use base64::engine::general_purpose::STANDARD as B64;
use base64::Engine as _;
use serde::ser::{SerializeMap, SerializeSeq};
use serde::{Serialize, Serializer};
use serde_json::Value as Json;

use std::fmt;

use crate::json::JsonError;
use crate::kind::ErrorKind;
use crate::msgpack::EncodeError;
use crate::value::{NdArray, ObjectKind, PyObject, RawExt, Value};

/// A JSON view did not describe a valid [`Value`]: what and where (a
/// JSON path such as `$.messages[2]`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ViewError {
    path: String,
    message: String,
}

impl ViewError {
    pub(crate) fn new(path: impl Into<String>, message: impl Into<String>) -> Self {
        ViewError {
            path: path.into(),
            message: message.into(),
        }
    }

    /// Where in the view, as a JSON path.
    pub fn path(&self) -> &str {
        &self.path
    }
}

impl fmt::Display for ViewError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "invalid JSON view at {}: {}", self.path, self.message)
    }
}

impl std::error::Error for ViewError {}

impl ViewError {
    /// The crate-wide kind: [`ErrorKind::InvalidView`].
    pub fn kind(&self) -> ErrorKind {
        ErrorKind::InvalidView
    }
}

impl From<&ViewError> for ErrorKind {
    fn from(e: &ViewError) -> Self {
        e.kind()
    }
}

/// Why [`from_str`] could not read a view back.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ReadError {
    /// The text is not JSON.
    #[error(transparent)]
    Json(#[from] JsonError),
    /// The JSON does not describe a value.
    #[error(transparent)]
    View(#[from] ViewError),
    /// The value nests deeper than the codec writes
    /// ([`EncodeError::DepthLimit`]).
    #[error(transparent)]
    Encode(#[from] EncodeError),
}

impl ReadError {
    /// The crate-wide kind: [`ErrorKind::InvalidJson`], [`ErrorKind::InvalidView`] or
    /// [`ErrorKind::DepthLimit`].
    pub fn kind(&self) -> ErrorKind {
        match self {
            ReadError::Json(e) => e.kind(),
            ReadError::View(e) => e.kind(),
            ReadError::Encode(e) => e.kind(),
        }
    }
}

impl From<&ReadError> for ErrorKind {
    fn from(e: &ReadError) -> Self {
        e.kind()
    }
}

/// The bit pattern Python writes for `float("nan")`.
const CANONICAL_NAN: u64 = 0x7ff8_0000_0000_0000;

/// How much deeper than the value its view may nest (a `$map` entry costs 3 levels).
const VIEW_DEPTH_FACTOR: usize = 3;

/// Borrows a value so that serializing it (with `serde_json` or any other serde format)
/// writes its JSON view directly, without building an intermediate tree.
///
/// ```
/// use langgraph_codec::{view::View, Value};
///
/// let v = Value::map([("blob", Value::Bin(bytes::Bytes::from_static(b"hi")))]);
/// assert_eq!(serde_json::to_string(&View(&v))?, r#"{"blob":{"$bytes":"aGk="}}"#);
/// # Ok::<(), serde_json::Error>(())
/// ```
#[derive(Clone, Copy, Debug)]
pub struct View<'a>(pub &'a Value);

impl Serialize for View<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self.0 {
            Value::Nil => s.serialize_unit(),
            Value::Bool(b) => s.serialize_bool(*b),
            Value::Int(i) => match (i.as_u64(), i.as_i64()) {
                (Some(u), _) => s.serialize_u64(u),
                (_, Some(n)) => s.serialize_i64(n),
                (None, None) => s.serialize_unit(),
            },
            Value::F64(f) => serialize_float(*f, None, s),
            Value::F32(f) => serialize_float(f64::from(*f), Some(f.to_bits()), s),
            Value::Str(text) => s.serialize_str(text),
            Value::Bin(b) => {
                let mut m = s.serialize_map(Some(1))?;
                m.serialize_entry("$bytes", &B64.encode(b))?;
                m.end()
            }
            Value::BigInt(n) => {
                let mut m = s.serialize_map(Some(1))?;
                m.serialize_entry("$bigint", &n.to_string())?;
                m.end()
            }
            Value::WStr(w) => {
                let mut m = s.serialize_map(Some(1))?;
                m.serialize_entry("$wstr", &wstr_parts(w))?;
                m.end()
            }
            Value::Ext(e) => {
                let mut m = s.serialize_map(Some(2))?;
                m.serialize_entry("$ext", &e.code)?;
                m.serialize_entry("data", &B64.encode(&e.data))?;
                m.end()
            }
            container => crate::stack::guard(|| serialize_container(container, s)),
        }
    }
}

/// A string with lone surrogates as runs of text and the surrogates' code points.
fn wstr_parts(w: &crate::value::PyWStr) -> Vec<Json> {
    let mut parts = Vec::new();
    let mut run = String::new();
    for cp in w.code_points() {
        match char::from_u32(cp) {
            Some(c) => run.push(c),
            None => {
                if !run.is_empty() {
                    parts.push(Json::from(std::mem::take(&mut run)));
                }
                parts.push(Json::from(cp));
            }
        }
    }
    if !run.is_empty() {
        parts.push(Json::from(run));
    }
    parts
}

fn serialize_container<S: Serializer>(value: &Value, s: S) -> Result<S::Ok, S::Error> {
    match value {
        Value::Array(items) => {
            let mut seq = s.serialize_seq(Some(items.len()))?;
            for item in items {
                seq.serialize_element(&View(item))?;
            }
            seq.end()
        }
        Value::Map(entries) if is_plain_map(entries) => {
            let mut m = s.serialize_map(Some(entries.len()))?;
            for (k, v) in entries {
                m.serialize_entry(k.as_str().unwrap_or_default(), &View(v))?;
            }
            m.end()
        }
        Value::Map(entries) => {
            struct Pairs<'a>(&'a [(Value, Value)]);
            impl Serialize for Pairs<'_> {
                fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                    s.collect_seq(self.0.iter().map(|(k, v)| (View(k), View(v))))
                }
            }
            let mut m = s.serialize_map(Some(1))?;
            m.serialize_entry("$map", &Pairs(entries))?;
            m.end()
        }
        Value::Object(o) => {
            let mut m = s.serialize_map(None)?;
            m.serialize_entry("$object", o.kind.as_str())?;
            m.serialize_entry("module", &o.module)?;
            m.serialize_entry("name", &o.name)?;
            m.serialize_entry("arg", &View(&o.arg))?;
            if let Some(method) = &o.method {
                m.serialize_entry("method", method)?;
            }
            m.end()
        }
        Value::NdArray(a) => {
            let mut m = s.serialize_map(Some(4))?;
            m.serialize_entry("$ndarray", &a.dtype)?;
            m.serialize_entry("shape", &a.shape)?;
            m.serialize_entry("order", &a.order)?;
            m.serialize_entry("buffer", &B64.encode(&a.buffer))?;
            m.end()
        }
        Value::DeltaSnapshot(inner) => {
            let mut m = s.serialize_map(Some(1))?;
            m.serialize_entry("$delta_snapshot", &View(inner))?;
            m.end()
        }
        scalar => View(scalar).serialize(s),
    }
}

/// The bit pattern of `f32::NAN` (and of Python's NaN narrowed to float32).
const CANONICAL_NAN_F32: u32 = 0x7fc0_0000;

/// Writes a float64, or a float32 widened to `f` when `f32_bits` holds its original bits.
fn serialize_float<S: Serializer>(f: f64, f32_bits: Option<u32>, s: S) -> Result<S::Ok, S::Error> {
    let is_f32 = f32_bits.is_some();
    if f.is_finite() {
        if !is_f32 {
            return s.serialize_f64(f);
        }
        let mut m = s.serialize_map(Some(1))?;
        m.serialize_entry("$f32", &f)?;
        return m.end();
    }
    let name = if f.is_nan() {
        "NaN"
    } else if f > 0.0 {
        "Infinity"
    } else {
        "-Infinity"
    };
    // A NaN with any other payload keeps its exact bits: 16 hex digits for a float64,
    // 8 for a float32 (widening a float32 NaN does not keep them all).
    let odd_bits = match f32_bits {
        _ if !f.is_nan() => None,
        None if f.to_bits() != CANONICAL_NAN => Some(format!("{:016x}", f.to_bits())),
        Some(b) if b != CANONICAL_NAN_F32 => Some(format!("{b:08x}")),
        _ => None,
    };
    let mut m = s.serialize_map(None)?;
    m.serialize_entry("$float", name)?;
    if is_f32 {
        m.serialize_entry("$f32", &true)?;
    }
    if let Some(bits) = odd_bits {
        m.serialize_entry("bits", &bits)?;
    }
    m.end()
}

/// A map is written as a JSON object when its keys are distinct strings that cannot be
/// mistaken for view tags.
fn is_plain_map(entries: &[(Value, Value)]) -> bool {
    let mut seen = std::collections::HashSet::with_capacity(entries.len());
    entries
        .iter()
        .all(|(k, _)| matches!(k, Value::Str(s) if !s.starts_with('$') && seen.insert(s.as_str())))
}

/// The JSON view of a value as a `serde_json::Value`.
///
/// # Errors
/// [`ViewError`] (path `$`) with serde_json's message if serde_json refuses the view.
/// The view writes only string keys and finite numbers, so no [`Value`] is expected
/// to; the error is reported rather than replaced by `null`.
pub fn to_json(value: &Value) -> Result<Json, ViewError> {
    serde_json::to_value(View(value)).map_err(serde_json_refused)
}

fn serde_json_refused(e: serde_json::Error) -> ViewError {
    ViewError::new("$", format!("serde_json refused the view: {e}"))
}

/// The view as indented JSON text. Indentation stops at [`PRETTY_INDENT_LEVELS`]
/// levels (deeper levels are written on one line), so the text is at most a fixed
/// multiple of the one-line view, however deep the value nests.
pub fn to_string_pretty(value: &Value) -> String {
    let mut out = Vec::new();
    // Writing into a Vec cannot fail.
    let _ = to_writer_pretty(&mut out, &View(value));
    String::from_utf8(out).unwrap_or_default()
}

/// [`to_string_pretty`], refusing text longer than `max_bytes` (checked while
/// writing: no more than `max_bytes` is ever held).
///
/// ```
/// use langgraph_codec::{view, Value};
///
/// let v = Value::from(vec![Value::from(1i64); 1000]);
/// assert!(view::to_string_pretty_limited(&v, 1 << 20).is_ok());
/// let e = view::to_string_pretty_limited(&v, 100).unwrap_err();
/// assert!(e.to_string().contains("100 bytes"));
/// ```
///
/// # Errors
/// [`ViewError`] (path `$`) when the text would be longer than `max_bytes`.
pub fn to_string_pretty_limited(value: &Value, max_bytes: usize) -> Result<String, ViewError> {
    struct Limited {
        out: Vec<u8>,
        max: usize,
    }
    impl std::io::Write for Limited {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            if self.out.len().saturating_add(buf.len()) > self.max {
                return Err(std::io::Error::other("view limit"));
            }
            self.out.extend_from_slice(buf);
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let mut w = Limited {
        out: Vec::new(),
        max: max_bytes,
    };
    to_writer_pretty(&mut w, &View(value)).map_err(|_| {
        ViewError::new(
            "$",
            format!("the view is longer than the limit of {max_bytes} bytes"),
        )
    })?;
    String::from_utf8(w.out).map_err(|_| ViewError::new("$", "the view is not UTF-8"))
}

/// How many levels [`to_string_pretty`] and [`to_writer_pretty`] indent; deeper levels
/// are written compactly. Without a cap, a 1 MB row nesting 1,023 levels around a large
/// array would indent every element by 2 KB: gigabytes of spaces.
pub const PRETTY_INDENT_LEVELS: usize = 12;

/// Writes `value` (e.g. [`View`]) to `out` as indented JSON, streaming, with
/// indentation capped at [`PRETTY_INDENT_LEVELS`] levels.
///
/// # Errors
/// The writer's errors.
pub fn to_writer_pretty<W: std::io::Write, T: Serialize + ?Sized>(
    out: W,
    value: &T,
) -> std::io::Result<()> {
    let mut ser = serde_json::Serializer::with_formatter(out, CappedPretty::default());
    value.serialize(&mut ser).map_err(std::io::Error::other)
}

/// serde_json's pretty layout (two spaces), flat below [`PRETTY_INDENT_LEVELS`].
#[derive(Default)]
struct CappedPretty {
    depth: usize,
    has_value: bool,
}

impl CappedPretty {
    fn indents(&self) -> bool {
        self.depth <= PRETTY_INDENT_LEVELS
    }

    fn open<W: ?Sized + std::io::Write>(
        &mut self,
        w: &mut W,
        bracket: &[u8],
    ) -> std::io::Result<()> {
        self.depth = self.depth.saturating_add(1);
        self.has_value = false;
        w.write_all(bracket)
    }

    fn close<W: ?Sized + std::io::Write>(
        &mut self,
        w: &mut W,
        bracket: &[u8],
    ) -> std::io::Result<()> {
        let indented = self.indents();
        self.depth = self.depth.saturating_sub(1);
        if self.has_value && indented {
            self.newline(w)?;
        }
        w.write_all(bracket)
    }

    fn item<W: ?Sized + std::io::Write>(&mut self, w: &mut W, first: bool) -> std::io::Result<()> {
        if !first {
            w.write_all(b",")?;
        }
        if self.indents() {
            self.newline(w)?;
        }
        Ok(())
    }

    fn newline<W: ?Sized + std::io::Write>(&self, w: &mut W) -> std::io::Result<()> {
        w.write_all(b"\n")?;
        for _ in 0..self.depth {
            w.write_all(b"  ")?;
        }
        Ok(())
    }
}

impl serde_json::ser::Formatter for CappedPretty {
    fn begin_array<W: ?Sized + std::io::Write>(&mut self, w: &mut W) -> std::io::Result<()> {
        self.open(w, b"[")
    }
    fn end_array<W: ?Sized + std::io::Write>(&mut self, w: &mut W) -> std::io::Result<()> {
        self.close(w, b"]")
    }
    fn begin_array_value<W: ?Sized + std::io::Write>(
        &mut self,
        w: &mut W,
        first: bool,
    ) -> std::io::Result<()> {
        self.item(w, first)
    }
    fn end_array_value<W: ?Sized + std::io::Write>(&mut self, _: &mut W) -> std::io::Result<()> {
        self.has_value = true;
        Ok(())
    }
    fn begin_object<W: ?Sized + std::io::Write>(&mut self, w: &mut W) -> std::io::Result<()> {
        self.open(w, b"{")
    }
    fn end_object<W: ?Sized + std::io::Write>(&mut self, w: &mut W) -> std::io::Result<()> {
        self.close(w, b"}")
    }
    fn begin_object_key<W: ?Sized + std::io::Write>(
        &mut self,
        w: &mut W,
        first: bool,
    ) -> std::io::Result<()> {
        self.item(w, first)
    }
    fn begin_object_value<W: ?Sized + std::io::Write>(&mut self, w: &mut W) -> std::io::Result<()> {
        w.write_all(if self.indents() { b": " } else { b":" })
    }
    fn end_object_value<W: ?Sized + std::io::Write>(&mut self, _: &mut W) -> std::io::Result<()> {
        self.has_value = true;
        Ok(())
    }
}

/// The view as one line of JSON text.
///
/// # Errors
/// As [`to_json`]: not expected for any [`Value`], reported rather than replaced by
/// an empty string.
pub fn to_string(value: &Value) -> Result<String, ViewError> {
    serde_json::to_string(&View(value)).map_err(serde_json_refused)
}

/// Reads a value back from its view as JSON text.
///
/// # Errors
/// [`ReadError::Json`] when the text is not JSON, [`ReadError::View`] when the JSON
/// does not describe a value (with its JSON path), [`ReadError::Encode`] when the
/// value nests deeper than the codec writes.
pub fn from_str(text: &str) -> Result<Value, ReadError> {
    let json = crate::json::parse(
        text.as_bytes(),
        crate::msgpack::DEFAULT_MAX_TOTAL_DEPTH * VIEW_DEPTH_FACTOR,
    )?;
    let value = from_parsed(json, &mut Path::root())?;
    // Only what the codec can write (and read back): the same nesting limits.
    crate::msgpack::check_depth(&value)?;
    Ok(value)
}

/// Reads a value back from a view that was already parsed by [`crate::json::parse`]
/// (plain JSON values: maps with string keys, arrays, scalars).
///
/// # Errors
/// [`ViewError`] with the JSON path when the value does not describe a [`Value`].
pub fn from_json_value(json: Value) -> Result<Value, ViewError> {
    from_parsed(json, &mut Path::root())
}

/// A JSON path for error messages, built only when an error is reported.
struct Path(Vec<PathPart>);

enum PathPart {
    Key(String),
    Index(usize),
}

impl Path {
    fn root() -> Self {
        Path(Vec::new())
    }

    fn render(&self) -> String {
        let mut s = String::from("$");
        for p in &self.0 {
            match p {
                PathPart::Key(k) => {
                    s.push('.');
                    s.push_str(k);
                }
                PathPart::Index(i) => s.push_str(&format!("[{i}]")),
            }
        }
        s
    }

    fn error(&self, message: impl Into<String>) -> ViewError {
        ViewError::new(self.render(), message)
    }

    fn with<T>(&mut self, part: PathPart, f: impl FnOnce(&mut Self) -> T) -> T {
        self.0.push(part);
        let out = f(self);
        self.0.pop();
        out
    }
}

fn from_parsed(json: Value, path: &mut Path) -> Result<Value, ViewError> {
    match json {
        Value::Array(_) | Value::Map(_) => crate::stack::guard(|| from_container(json, path)),
        scalar => Ok(scalar),
    }
}

fn from_container(json: Value, path: &mut Path) -> Result<Value, ViewError> {
    let json = match json.into_array() {
        Ok(items) => {
            return items
                .into_iter()
                .enumerate()
                .map(|(i, v)| path.with(PathPart::Index(i), |p| from_parsed(v, p)))
                .collect::<Result<Vec<_>, _>>()
                .map(Value::Array)
        }
        Err(json) => json,
    };
    match json.into_map() {
        Ok(entries) => {
            let tag = entries.iter().find_map(|(k, _)| match k {
                Value::Str(s) if s.starts_with('$') => Some(s.clone()),
                _ => None,
            });
            match tag {
                None => entries
                    .into_iter()
                    .map(|(k, v)| {
                        let name = k.as_str().unwrap_or_default().to_owned();
                        path.with(PathPart::Key(name), |p| from_parsed(v, p))
                            .map(|v| (k, v))
                    })
                    .collect::<Result<Vec<_>, _>>()
                    .map(Value::Map),
                Some(tag) => from_tagged(&tag, Fields::new(entries), path),
            }
        }
        Err(scalar) => Ok(scalar),
    }
}

/// The fields of a tagged view object, taken one by one; leftovers are an error.
struct Fields(Vec<(Value, Value)>);

impl Fields {
    fn new(entries: Vec<(Value, Value)>) -> Self {
        Fields(entries)
    }

    fn take(&mut self, name: &str) -> Option<Value> {
        let i = self.0.iter().position(|(k, _)| k.as_str() == Some(name))?;
        Some(self.0.remove(i).1)
    }

    fn required(&mut self, name: &str, tag: &str, path: &Path) -> Result<Value, ViewError> {
        self.take(name)
            .ok_or_else(|| path.error(format!("{tag} needs a \"{name}\" field")))
    }

    fn finish(self, tag: &str, path: &Path) -> Result<(), ViewError> {
        match self.0.first() {
            None => Ok(()),
            // Keys here come from parsed JSON, so they are strings; any other key is
            // named by its view.
            Some((k, _)) => Err(path.error(format!(
                "unexpected field {} in a {tag} object",
                crate::json::write(k)
                    .or_else(|_| to_string(k))
                    .unwrap_or_else(|e| e.to_string())
            ))),
        }
    }
}

fn string(v: Value, what: &str, path: &Path) -> Result<String, ViewError> {
    match v.into_str() {
        Ok(s) => Ok(s.into_string()),
        Err(other) => Err(path.error(format!(
            "{what} must be a string, found {}",
            other.kind_name()
        ))),
    }
}

fn base64(v: Value, what: &str, path: &Path) -> Result<bytes::Bytes, ViewError> {
    let s = string(v, what, path)?;
    B64.decode(s.as_bytes())
        .map(bytes::Bytes::from)
        .map_err(|e| path.error(format!("{what} is not valid base64: {e}")))
}

fn float_from_name(name: &str, bits: Option<Value>, path: &Path) -> Result<f64, ViewError> {
    let f = match name {
        "NaN" => f64::NAN,
        "Infinity" => f64::INFINITY,
        "-Infinity" => f64::NEG_INFINITY,
        other => {
            return Err(path.error(format!(
                "$float must be \"NaN\", \"Infinity\" or \"-Infinity\", found {other:?}"
            )))
        }
    };
    match bits {
        None => Ok(if f.is_nan() {
            f64::from_bits(CANONICAL_NAN)
        } else {
            f
        }),
        Some(b) => {
            let hex = string(b, "bits", path)?;
            let bits = u64::from_str_radix(&hex, 16)
                .map_err(|_| path.error("bits must be 16 hex digits"))?;
            let nan = f64::from_bits(bits);
            if f.is_nan() && nan.is_nan() {
                Ok(nan)
            } else {
                Err(path.error("bits must encode a NaN"))
            }
        }
    }
}

/// A non-finite float32: `bits`, when given, are the 8 hex digits of a float32 NaN.
fn f32_from_name(name: &str, bits: Option<Value>, path: &Path) -> Result<f32, ViewError> {
    let f = float_from_name(name, None, path)? as f32;
    let Some(b) = bits else {
        return Ok(f);
    };
    let hex = string(b, "bits", path)?;
    let nan = u32::from_str_radix(&hex, 16)
        .ok()
        .filter(|_| hex.len() == 8)
        .map(f32::from_bits)
        .ok_or_else(|| path.error("bits of a float32 must be 8 hex digits"))?;
    if f.is_nan() && nan.is_nan() {
        Ok(nan)
    } else {
        Err(path.error("bits must encode a NaN"))
    }
}

fn from_tagged(tag: &str, mut f: Fields, path: &mut Path) -> Result<Value, ViewError> {
    let tag_value = f.take(tag).unwrap_or_default();
    let value = match tag {
        "$bytes" => Value::Bin(base64(tag_value, "$bytes", path)?),
        "$float" => {
            let name = string(tag_value, "$float", path)?;
            let bits = f.take("bits");
            if matches!(f.take("$f32"), Some(Value::Bool(true))) {
                Value::F32(f32_from_name(&name, bits, path)?)
            } else {
                Value::F64(float_from_name(&name, bits, path)?)
            }
        }
        "$f32" => match tag_value {
            Value::F64(x) => Value::F32(x as f32),
            Value::Int(i) => Value::F32(i.as_i128() as f32),
            Value::Bool(true) => {
                // `{"$float": "NaN", "$f32": true}` read with `$f32` found first.
                let name = string(f.required("$float", tag, path)?, "$float", path)?;
                Value::F32(f32_from_name(&name, f.take("bits"), path)?)
            }
            other => return Err(path.error(format!("$f32 must be a number, found {}", other.kind_name()))),
        },
        "$map" => {
            let Ok(pairs) = tag_value.into_array() else {
                return Err(path.error("$map must be an array of [key, value] pairs"));
            };
            let mut entries = Vec::with_capacity(pairs.len());
            for (i, pair) in pairs.into_iter().enumerate() {
                let entry = path.with(PathPart::Index(i), |p| match pair.into_array() {
                    Ok(kv) => match <[Value; 2]>::try_from(kv) {
                        Ok([k, v]) => Ok((from_parsed(k, p)?, from_parsed(v, p)?)),
                        Err(_) => Err(p.error("each $map entry must be a [key, value] pair")),
                    },
                    _ => Err(p.error("each $map entry must be a [key, value] pair")),
                })?;
                entries.push(entry);
            }
            Value::Map(entries)
        }
        "$object" => {
            let kind_name = string(tag_value, "$object", path)?;
            let kind = ObjectKind::from_name(&kind_name).ok_or_else(|| {
                path.error(format!("unknown $object kind {kind_name:?}"))
            })?;
            let module = string(f.required("module", tag, path)?, "module", path)?;
            let name = string(f.required("name", tag, path)?, "name", path)?;
            let arg = f.required("arg", tag, path)?;
            let arg = path.with(PathPart::Key("arg".into()), |p| from_parsed(arg, p))?;
            let method = f.take("method").map(|m| string(m, "method", path)).transpose()?;
            Value::Object(Box::new(PyObject {
                kind,
                module: module.into(),
                name: name.into(),
                arg,
                method: method.map(Into::into),
            }))
        }
        "$ndarray" => {
            let dtype = string(tag_value, "$ndarray", path)?;
            let shape = match &f.required("shape", tag, path)? {
                Value::Array(dims) => dims
                    .iter()
                    .map(Value::as_u64)
                    .collect::<Option<Vec<u64>>>()
                    .ok_or_else(|| path.error("shape must be non-negative integers"))?,
                _ => return Err(path.error("shape must be an array")),
            };
            let order = string(f.required("order", tag, path)?, "order", path)?;
            let buffer = base64(f.required("buffer", tag, path)?, "buffer", path)?;
            Value::NdArray(Box::new(NdArray {
                dtype,
                shape,
                order,
                buffer,
            }))
        }
        "$delta_snapshot" => Value::DeltaSnapshot(Box::new(
            path.with(PathPart::Key("$delta_snapshot".into()), |p| from_parsed(tag_value, p))?,
        )),
        "$bigint" => {
            let digits = string(tag_value, "$bigint", path)?;
            let n: crate::value::BigInt = digits.parse().map_err(|_| {
                path.error("$bigint must be the decimal digits of an integer outside i64::MIN..=u64::MAX")
            })?;
            Value::BigInt(Box::new(n))
        }
        "$wstr" => {
            let Ok(parts) = tag_value.into_array() else {
                return Err(path.error("$wstr must be an array of strings and surrogate code points"));
            };
            let mut points = Vec::new();
            for part in &parts {
                match part {
                    Value::Str(s) => points.extend(s.chars().map(u32::from)),
                    Value::Int(i) => points.push(
                        i.as_u64()
                            .and_then(|c| u32::try_from(c).ok())
                            .filter(|c| (0xD800..0xE000).contains(c))
                            .ok_or_else(|| path.error("$wstr code points must be surrogates (0xD800..=0xDFFF)"))?,
                    ),
                    _ => return Err(path.error("$wstr must be an array of strings and surrogate code points")),
                }
            }
            Value::WStr(Box::new(crate::value::PyWStr::from_code_points(points).ok_or_else(
                || path.error("$wstr must hold at least one lone surrogate"),
            )?))
        }
        "$ext" => {
            let code = tag_value
                .as_i64()
                .and_then(|c| i8::try_from(c).ok())
                .ok_or_else(|| path.error("$ext must be an integer code in -128..=127"))?;
            let data = base64(f.required("data", tag, path)?, "data", path)?;
            Value::from(RawExt { code, data })
        }
        other => {
            return Err(path.error(format!(
                "unknown tag {other:?} (keys starting with '$' are view tags; write such a map as {{\"$map\": [[key, value], ...]}})"
            )))
        }
    };
    f.finish(tag, path)?;
    Ok(value)
}
