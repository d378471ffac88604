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
//! | float32 | `{"$f32": 1.5}` (or a `$float` string for non-finite values) |
//! | map with non-string, duplicate or `$`-keys | `{"$map": [[key, value], ...]}` |
//! | Python object (ext 0–5) | `{"$object": "pydantic_v2", "module": "...", "name": "...", "arg": ..., "method": "..."}` |
//! | numpy array (ext 6) | `{"$ndarray": "<f8", "shape": [2, 3], "order": "C", "buffer": "<base64>"}` |
//! | delta snapshot (ext 7) | `{"$delta_snapshot": ...}` |
//! | any other ext | `{"$ext": 99, "data": "<base64>"}` |
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
use serde_json::{json, Map as JsonMap, Value as Json};

use crate::error::{Error, ViewError};
use crate::value::{NdArray, ObjectKind, PyObject, RawExt, Value};

/// The bit pattern Python writes for `float("nan")`.
const CANONICAL_NAN: u64 = 0x7ff8_0000_0000_0000;

/// How much deeper than the value its view may nest (a `$map` entry costs 3 levels).
const VIEW_DEPTH_FACTOR: usize = 3;

/// The JSON view of a value.
pub fn to_json(value: &Value) -> Json {
    match value {
        Value::Nil => Json::Null,
        Value::Bool(b) => Json::Bool(*b),
        Value::Int(i) => match (i.as_u64(), i.as_i64()) {
            (Some(u), _) => Json::from(u),
            (None, Some(n)) => Json::from(n),
            (None, None) => Json::Null,
        },
        Value::F64(f) => float_view(*f, "$float"),
        Value::F32(f) => {
            if f.is_finite() {
                json!({ "$f32": f64::from(*f) })
            } else {
                let mut v = float_view(f64::from(*f), "$float");
                if let Json::Object(m) = &mut v {
                    m.insert("$f32".into(), Json::Bool(true));
                }
                v
            }
        }
        Value::Str(s) => Json::String(s.clone()),
        Value::Bin(b) => json!({ "$bytes": B64.encode(b) }),
        Value::Array(items) => Json::Array(items.iter().map(to_json).collect()),
        Value::Map(entries) => map_view(entries),
        Value::Object(o) => {
            let mut m = JsonMap::new();
            m.insert("$object".into(), Json::from(o.kind.as_str()));
            m.insert("module".into(), Json::from(o.module.as_str()));
            m.insert("name".into(), Json::from(o.name.as_str()));
            m.insert("arg".into(), to_json(&o.arg));
            if let Some(method) = &o.method {
                m.insert("method".into(), Json::from(method.as_str()));
            }
            Json::Object(m)
        }
        Value::NdArray(a) => json!({
            "$ndarray": a.dtype,
            "shape": a.shape,
            "order": a.order,
            "buffer": B64.encode(&a.buffer),
        }),
        Value::DeltaSnapshot(inner) => json!({ "$delta_snapshot": to_json(inner) }),
        Value::Ext(e) => json!({ "$ext": e.code, "data": B64.encode(&e.data) }),
    }
}

fn float_view(f: f64, tag: &str) -> Json {
    if f.is_finite() {
        return Json::from(f);
    }
    let name = if f.is_nan() {
        "NaN"
    } else if f > 0.0 {
        "Infinity"
    } else {
        "-Infinity"
    };
    let mut m = JsonMap::new();
    m.insert(tag.into(), Json::from(name));
    if f.is_nan() && f.to_bits() != CANONICAL_NAN {
        m.insert("bits".into(), Json::from(format!("{:016x}", f.to_bits())));
    }
    Json::Object(m)
}

fn map_view(entries: &[(Value, Value)]) -> Json {
    let mut seen = std::collections::HashSet::with_capacity(entries.len());
    let plain = entries
        .iter()
        .all(|(k, _)| matches!(k, Value::Str(s) if !s.starts_with('$') && seen.insert(s.as_str())));
    if plain {
        let mut m = JsonMap::with_capacity(entries.len());
        for (k, v) in entries {
            if let Value::Str(k) = k {
                m.insert(k.clone(), to_json(v));
            }
        }
        Json::Object(m)
    } else {
        json!({
            "$map": entries
                .iter()
                .map(|(k, v)| Json::Array(vec![to_json(k), to_json(v)]))
                .collect::<Vec<_>>()
        })
    }
}

/// The view as indented JSON text.
pub fn to_string_pretty(value: &Value) -> String {
    serde_json::to_string_pretty(&to_json(value)).unwrap_or_default()
}

/// The view as one line of JSON text.
pub fn to_string(value: &Value) -> String {
    to_json(value).to_string()
}

/// Reads a value back from its view as JSON text.
pub fn from_str(text: &str) -> Result<Value, Error> {
    let json = crate::json::parse(
        text.as_bytes(),
        crate::msgpack::DEFAULT_MAX_DEPTH * VIEW_DEPTH_FACTOR,
    )?;
    Ok(from_parsed(json, &mut Path::root())?)
}

/// Reads a value back from a view that was already parsed by [`crate::json::parse`]
/// (plain JSON values: maps with string keys, arrays, scalars).
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
        Value::Array(items) => items
            .into_iter()
            .enumerate()
            .map(|(i, v)| path.with(PathPart::Index(i), |p| from_parsed(v, p)))
            .collect::<Result<Vec<_>, _>>()
            .map(Value::Array),
        Value::Map(entries) => {
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
        scalar => Ok(scalar),
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
            Some((k, _)) => Err(path.error(format!(
                "unexpected field {} in a {tag} object",
                crate::json::write(k).unwrap_or_default()
            ))),
        }
    }
}

fn string(v: Value, what: &str, path: &Path) -> Result<String, ViewError> {
    match v {
        Value::Str(s) => Ok(s),
        other => Err(path.error(format!(
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

fn from_tagged(tag: &str, mut f: Fields, path: &mut Path) -> Result<Value, ViewError> {
    let tag_value = f.take(tag).unwrap_or_default();
    let value = match tag {
        "$bytes" => Value::Bin(base64(tag_value, "$bytes", path)?),
        "$float" => {
            let name = string(tag_value, "$float", path)?;
            let bits = f.take("bits");
            let is_f32 = matches!(f.take("$f32"), Some(Value::Bool(true)));
            let x = float_from_name(&name, bits, path)?;
            if is_f32 {
                Value::F32(x as f32)
            } else {
                Value::F64(x)
            }
        }
        "$f32" => match tag_value {
            Value::F64(x) => Value::F32(x as f32),
            Value::Int(i) => Value::F32(i.as_i128() as f32),
            Value::Bool(true) => {
                // `{"$float": "NaN", "$f32": true}` read with `$f32` found first.
                let name = string(f.required("$float", tag, path)?, "$float", path)?;
                Value::F32(float_from_name(&name, f.take("bits"), path)? as f32)
            }
            other => return Err(path.error(format!("$f32 must be a number, found {}", other.kind_name()))),
        },
        "$map" => {
            let Value::Array(pairs) = tag_value else {
                return Err(path.error("$map must be an array of [key, value] pairs"));
            };
            let mut entries = Vec::with_capacity(pairs.len());
            for (i, pair) in pairs.into_iter().enumerate() {
                let entry = path.with(PathPart::Index(i), |p| match pair {
                    Value::Array(kv) => match <[Value; 2]>::try_from(kv) {
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
                module,
                name,
                arg,
                method,
            }))
        }
        "$ndarray" => {
            let dtype = string(tag_value, "$ndarray", path)?;
            let shape = match f.required("shape", tag, path)? {
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
        "$ext" => {
            let code = tag_value
                .as_i64()
                .and_then(|c| i8::try_from(c).ok())
                .ok_or_else(|| path.error("$ext must be an integer code in -128..=127"))?;
            let data = base64(f.required("data", tag, path)?, "data", path)?;
            Value::Ext(RawExt { code, data })
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
