//! The lossless data model: everything Python LangGraph can write, nothing dropped.
//!
//! A [`Value`] holds one msgpack document as Python's `JsonPlusSerializer` writes it.
//! Extension values are kept structured when their payload is exactly the tuple Python
//! writes ([`PyObject`], [`NdArray`], delta snapshots) and raw ([`RawExt`]) otherwise, so
//! decoding never turns data into nothing and re-encoding gives back the same bytes.

use std::fmt;
use std::hash::{Hash, Hasher};

use bytes::Bytes;

mod json_only;
mod pystr;
mod twins;
pub use json_only::{BigInt, BigIntError, PyWStr};
pub use pystr::PyStr;
pub(crate) use twins::{accessors, debug_by_variant, eq_by_variant};

/// One decoded value: the lossless data model, everything Python LangGraph can write,
/// nothing dropped.
///
/// A `Value` holds one msgpack document as Python's `JsonPlusSerializer` writes it.
/// Extension values are kept structured when their payload is exactly the tuple Python
/// writes ([`PyObject`], [`NdArray`], delta snapshots) and raw ([`RawExt`]) otherwise, so
/// decoding never turns data into nothing and re-encoding gives back the same bytes.
///
/// Equality compares floats by their bit patterns, so a value is always equal to itself
/// (also when it holds NaN) and `-0.0 != 0.0`: values that decoding produced are equal
/// exactly when they encode to the same bytes. One exception can only be built by hand:
/// a [`RawExt`] with code 0–7 whose payload is a well-formed tuple encodes like the
/// structured variant it would decode to, yet compares unequal to it.
#[derive(Default)]
pub enum Value {
    /// msgpack nil, Python `None`.
    #[default]
    Nil,
    /// Python `bool`.
    Bool(bool),
    /// An integer in `i64::MIN ..= u64::MAX`.
    Int(Int),
    /// A msgpack float32. ormsgpack never writes one, but other writers may.
    F32(f32),
    /// A msgpack float64, Python `float`.
    F64(f64),
    /// A UTF-8 string (short ones are stored inline, see [`PyStr`]).
    Str(PyStr),
    /// msgpack bin: Python `bytes` / `bytearray` nested in a value.
    Bin(Bytes),
    /// msgpack array: Python `list` or `tuple`.
    Array(Vec<Value>),
    /// msgpack map in wire order; keys may be any value (Python writes int, float, bool,
    /// `None` and tuple keys too). Duplicate keys are kept as they are.
    Map(Vec<(Value, Value)>),
    /// Ext codes 0–5: a Python object envelope.
    Object(Box<PyObject>),
    /// Ext code 6: a numpy array.
    NdArray(Box<NdArray>),
    /// Ext code 7: LangGraph's `_DeltaSnapshot(value)`.
    DeltaSnapshot(Box<Value>),
    /// Any other extension, or an ext 0–7 whose payload is not what Python writes.
    /// Boxed because it is rare and would otherwise make every `Value` 48 bytes.
    Ext(Box<RawExt>),
    /// An integer beyond msgpack's range, read from a `json` row (see [`BigInt`]).
    BigInt(Box<BigInt>),
    /// A string with lone surrogates, read from a `json` row (see [`PyWStr`]).
    WStr(Box<PyWStr>),
}

/// An integer anywhere in `i64::MIN ..= u64::MAX`, the range msgpack can hold.
///
/// Normalised: a non-negative number is always stored as unsigned, so `Int::from(5i64)
/// == Int::from(5u64)`.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Int(IntRepr);

#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
enum IntRepr {
    /// Always `< 0`.
    Neg(i64),
    Pos(u64),
}

impl Int {
    /// The value as `i64`, if it fits.
    pub fn as_i64(self) -> Option<i64> {
        match self.0 {
            IntRepr::Neg(n) => Some(n),
            IntRepr::Pos(p) => i64::try_from(p).ok(),
        }
    }

    /// The value as `u64`, if it is non-negative.
    pub fn as_u64(self) -> Option<u64> {
        match self.0 {
            IntRepr::Neg(_) => None,
            IntRepr::Pos(p) => Some(p),
        }
    }

    /// The value as `i128` (always fits).
    pub fn as_i128(self) -> i128 {
        match self.0 {
            IntRepr::Neg(n) => i128::from(n),
            IntRepr::Pos(p) => i128::from(p),
        }
    }

    /// `true` for negative numbers.
    pub fn is_negative(self) -> bool {
        matches!(self.0, IntRepr::Neg(_))
    }

    /// The integer from an `i128`, if it lies in `i64::MIN ..= u64::MAX`.
    pub fn from_i128(n: i128) -> Option<Int> {
        if n < 0 {
            i64::try_from(n).ok().map(Int::from)
        } else {
            u64::try_from(n).ok().map(Int::from)
        }
    }
}

impl From<i64> for Int {
    fn from(n: i64) -> Self {
        match u64::try_from(n) {
            Ok(p) => Int(IntRepr::Pos(p)),
            Err(_) => Int(IntRepr::Neg(n)),
        }
    }
}

impl From<u64> for Int {
    fn from(n: u64) -> Self {
        Int(IntRepr::Pos(n))
    }
}

macro_rules! int_from_small {
    ($($t:ty => $via:ty),*) => {$(
        impl From<$t> for Int {
            fn from(n: $t) -> Self { Int::from(<$via>::from(n)) }
        }
        impl From<$t> for Value {
            fn from(n: $t) -> Self { Value::Int(Int::from(n)) }
        }
    )*};
}
int_from_small!(i8 => i64, i16 => i64, i32 => i64, u8 => u64, u16 => u64, u32 => u64);

impl fmt::Debug for Int {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

impl fmt::Display for Int {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.0 {
            IntRepr::Neg(n) => fmt::Display::fmt(&n, f),
            IntRepr::Pos(p) => fmt::Display::fmt(&p, f),
        }
    }
}

/// How Python asked for an object to be rebuilt: the ext codes 0–5.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[non_exhaustive]
pub enum ObjectKind {
    /// Code 0, `cls(arg)`: UUID, Decimal, set, frozenset, deque, ip addresses, ZoneInfo,
    /// Enum, SecretStr.
    ConstructorSingleArg,
    /// Code 1, `cls(*args)`: timedelta, date, timezone, Path, regex, `Send`.
    ConstructorPosArgs,
    /// Code 2, `cls(**kwargs)`: time, dataclasses, namedtuples, store `Item`.
    ConstructorKwArgs,
    /// Code 3, `cls.method(arg)`: datetime via `fromisoformat`.
    MethodSingleArg,
    /// Code 4: pydantic v1 model, payload `obj.dict()`.
    PydanticV1,
    /// Code 5: pydantic v2 model (every LangChain message), payload `obj.model_dump()`.
    PydanticV2,
}

impl ObjectKind {
    /// The msgpack ext type code.
    pub fn code(self) -> i8 {
        match self {
            ObjectKind::ConstructorSingleArg => 0,
            ObjectKind::ConstructorPosArgs => 1,
            ObjectKind::ConstructorKwArgs => 2,
            ObjectKind::MethodSingleArg => 3,
            ObjectKind::PydanticV1 => 4,
            ObjectKind::PydanticV2 => 5,
        }
    }

    /// The kind for an ext code, if it is one of 0–5.
    pub fn from_code(code: i8) -> Option<Self> {
        Some(match code {
            0 => ObjectKind::ConstructorSingleArg,
            1 => ObjectKind::ConstructorPosArgs,
            2 => ObjectKind::ConstructorKwArgs,
            3 => ObjectKind::MethodSingleArg,
            4 => ObjectKind::PydanticV1,
            5 => ObjectKind::PydanticV2,
            _ => return None,
        })
    }

    /// A short stable name, used by the JSON view.
    pub fn as_str(self) -> &'static str {
        match self {
            ObjectKind::ConstructorSingleArg => "constructor_single_arg",
            ObjectKind::ConstructorPosArgs => "constructor_pos_args",
            ObjectKind::ConstructorKwArgs => "constructor_kw_args",
            ObjectKind::MethodSingleArg => "method_single_arg",
            ObjectKind::PydanticV1 => "pydantic_v1",
            ObjectKind::PydanticV2 => "pydantic_v2",
        }
    }

    /// The kind named by [`ObjectKind::as_str`].
    pub fn from_name(name: &str) -> Option<Self> {
        (0..=5)
            .filter_map(ObjectKind::from_code)
            .find(|k| k.as_str() == name)
    }
}

/// A Python object envelope (ext codes 0–5): the payload tuple
/// `(module, name, arg)` or `(module, name, arg, method)`.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct PyObject {
    /// Which ext code, i.e. how Python rebuilds it.
    pub kind: ObjectKind,
    /// `obj.__class__.__module__`, e.g. `"langchain_core.messages.ai"`.
    pub module: PyStr,
    /// `obj.__class__.__name__`, e.g. `"AIMessage"`.
    pub name: PyStr,
    /// The third tuple element: the single argument, the positional-argument array, the
    /// keyword map or the model dump.
    pub arg: Value,
    /// The fourth tuple element when present (`"fromisoformat"`, `"model_validate_json"`).
    pub method: Option<PyStr>,
}

impl PyObject {
    /// A new envelope without a method.
    pub fn new(
        kind: ObjectKind,
        module: impl Into<PyStr>,
        name: impl Into<PyStr>,
        arg: Value,
    ) -> Self {
        PyObject {
            kind,
            module: module.into(),
            name: name.into(),
            arg,
            method: None,
        }
    }

    /// The same envelope with a fourth tuple element.
    pub fn with_method(mut self, method: impl Into<PyStr>) -> Self {
        self.method = Some(method.into());
        self
    }

    /// `true` if this is an instance of `module.name`.
    pub fn is(&self, module: &str, name: &str) -> bool {
        self.module == module && self.name == name
    }
}

/// A numpy array (ext code 6): the payload tuple `(dtype.str, shape, order, buffer)`.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct NdArray {
    /// `dtype.str`, e.g. `"<f8"`.
    pub dtype: String,
    /// The shape; empty for a 0-d array.
    pub shape: Vec<u64>,
    /// `"C"` or `"F"`: the memory order of `buffer`.
    pub order: String,
    /// The raw element bytes.
    pub buffer: Bytes,
}

/// An extension value kept as it was on the wire.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct RawExt {
    /// The ext type code (−128..=127; −1 is msgpack's timestamp).
    pub code: i8,
    /// The payload bytes.
    pub data: Bytes,
}

impl Value {
    /// A map from `(key, value)` pairs, in the given order.
    pub fn map<K: Into<Value>, V: Into<Value>>(entries: impl IntoIterator<Item = (K, V)>) -> Self {
        Value::Map(
            entries
                .into_iter()
                .map(|(k, v)| (k.into(), v.into()))
                .collect(),
        )
    }

    /// A Python object envelope value.
    pub fn object(obj: PyObject) -> Self {
        Value::Object(Box::new(obj))
    }

    accessors! {
        Value,
        str: &str, str_note: "",
        bytes: &Bytes, bytes_note: "",
        array: &[Value],
        map: &[(Value, Value)],
        object: &PyObject,
        item: &Value,
        kind_name_doc: "A short name of the variant, for error messages.",
        more_kinds: {
            Value::BigInt(_) => "big int",
            Value::WStr(_) => "str with lone surrogates",
        },
    }

    /// The items, if this is a [`Value::Array`]; the value itself otherwise. (`Value`
    /// implements `Drop`, so its variants cannot be moved out of by a pattern.)
    ///
    /// # Errors
    /// The value itself when it is not an array.
    pub fn into_array(self) -> Result<Vec<Value>, Value> {
        let mut v = self;
        if let Value::Array(items) = &mut v {
            return Ok(std::mem::take(items));
        }
        Err(v)
    }

    /// The entries, if this is a [`Value::Map`]; the value itself otherwise.
    ///
    /// # Errors
    /// The value itself when it is not a map.
    pub fn into_map(self) -> Result<Vec<(Value, Value)>, Value> {
        let mut v = self;
        if let Value::Map(entries) = &mut v {
            return Ok(std::mem::take(entries));
        }
        Err(v)
    }

    /// The string, if this is a [`Value::Str`]; the value itself otherwise.
    ///
    /// # Errors
    /// The value itself when it is not a string.
    pub fn into_str(self) -> Result<PyStr, Value> {
        let mut v = self;
        if let Value::Str(s) = &mut v {
            return Ok(std::mem::take(s));
        }
        Err(v)
    }

    /// The bytes, if this is a [`Value::Bin`]; the value itself otherwise.
    ///
    /// # Errors
    /// The value itself when it is not bytes.
    pub fn into_bin(self) -> Result<Bytes, Value> {
        let mut v = self;
        if let Value::Bin(b) = &mut v {
            return Ok(std::mem::take(b));
        }
        Err(v)
    }
}

// Drop, Clone, Debug, PartialEq and Hash walk the tree recursively; each container
// level runs under the stack guard, so the deepest value the decoders accept (and
// deeper) is safe on any thread, a 64 KiB one included.

impl Drop for Value {
    #[inline]
    fn drop(&mut self) {
        match self {
            Value::Array(items) if !items.is_empty() => {
                let items = std::mem::take(items);
                crate::stack::guard(move || drop(items));
            }
            Value::Map(entries) if !entries.is_empty() => {
                let entries = std::mem::take(entries);
                crate::stack::guard(move || drop(entries));
            }
            Value::Object(o) if is_container(&o.arg) => {
                let arg = std::mem::take(&mut o.arg);
                crate::stack::guard(move || drop(arg));
            }
            Value::DeltaSnapshot(inner) if is_container(inner) => {
                let inner = std::mem::take(&mut **inner);
                crate::stack::guard(move || drop(inner));
            }
            _ => {}
        }
    }
}

fn is_container(v: &Value) -> bool {
    matches!(
        v,
        Value::Array(_) | Value::Map(_) | Value::Object(_) | Value::DeltaSnapshot(_)
    )
}

impl Clone for Value {
    fn clone(&self) -> Self {
        match self {
            Value::Nil => Value::Nil,
            Value::Bool(b) => Value::Bool(*b),
            Value::Int(i) => Value::Int(*i),
            Value::F32(f) => Value::F32(*f),
            Value::F64(f) => Value::F64(*f),
            Value::Str(s) => Value::Str(s.clone()),
            Value::Bin(b) => Value::Bin(b.clone()),
            Value::NdArray(a) => Value::NdArray(a.clone()),
            Value::Ext(e) => Value::Ext(e.clone()),
            Value::BigInt(n) => Value::BigInt(n.clone()),
            Value::WStr(w) => Value::WStr(w.clone()),
            Value::Array(items) => Value::Array(crate::stack::guard(|| items.clone())),
            Value::Map(entries) => Value::Map(crate::stack::guard(|| entries.clone())),
            Value::Object(o) => Value::Object(crate::stack::guard(|| o.clone())),
            Value::DeltaSnapshot(v) => Value::DeltaSnapshot(crate::stack::guard(|| v.clone())),
        }
    }
}

debug_by_variant!(Value, BigInt, WStr);
eq_by_variant!(Value, BigInt, WStr);

impl Hash for Value {
    fn hash<H: Hasher>(&self, state: &mut H) {
        std::mem::discriminant(self).hash(state);
        match self {
            Value::Nil => {}
            Value::Bool(b) => b.hash(state),
            Value::Int(i) => i.hash(state),
            Value::F32(f) => f.to_bits().hash(state),
            Value::F64(f) => f.to_bits().hash(state),
            Value::Str(s) => s.hash(state),
            Value::Bin(b) => b.hash(state),
            Value::Array(a) => crate::stack::guard(|| a.hash(state)),
            Value::Map(m) => crate::stack::guard(|| m.hash(state)),
            Value::Object(o) => crate::stack::guard(|| o.hash(state)),
            Value::NdArray(n) => n.hash(state),
            Value::DeltaSnapshot(v) => crate::stack::guard(|| v.hash(state)),
            Value::Ext(e) => e.hash(state),
            Value::BigInt(n) => n.hash(state),
            Value::WStr(w) => w.hash(state),
        }
    }
}

impl From<bool> for Value {
    fn from(b: bool) -> Self {
        Value::Bool(b)
    }
}
impl From<i64> for Value {
    fn from(n: i64) -> Self {
        Value::Int(Int::from(n))
    }
}
impl From<u64> for Value {
    fn from(n: u64) -> Self {
        Value::Int(Int::from(n))
    }
}
impl From<Int> for Value {
    fn from(n: Int) -> Self {
        Value::Int(n)
    }
}
impl From<f64> for Value {
    fn from(f: f64) -> Self {
        Value::F64(f)
    }
}
impl From<&str> for Value {
    fn from(s: &str) -> Self {
        Value::Str(PyStr::new(s))
    }
}
impl From<String> for Value {
    fn from(s: String) -> Self {
        Value::Str(PyStr::from(s))
    }
}
impl From<PyStr> for Value {
    fn from(s: PyStr) -> Self {
        Value::Str(s)
    }
}
impl From<Bytes> for Value {
    fn from(b: Bytes) -> Self {
        Value::Bin(b)
    }
}
impl From<Vec<Value>> for Value {
    fn from(a: Vec<Value>) -> Self {
        Value::Array(a)
    }
}
impl From<PyObject> for Value {
    fn from(o: PyObject) -> Self {
        Value::Object(Box::new(o))
    }
}
impl From<NdArray> for Value {
    fn from(a: NdArray) -> Self {
        Value::NdArray(Box::new(a))
    }
}
impl From<RawExt> for Value {
    fn from(e: RawExt) -> Self {
        Value::Ext(Box::new(e))
    }
}
/// A JSON value as the `Value` Python's `json.loads` gives: `null` → `Nil`, numbers
/// → `Int` (integers; `serde_json` holds up to `u64::MAX`) or `F64`, strings → `Str`,
/// arrays → `Array`, objects → `Map` with `Str` keys in the object's order (this
/// crate builds `serde_json` with `preserve_order`).
impl From<serde_json::Value> for Value {
    fn from(json: serde_json::Value) -> Self {
        match json {
            serde_json::Value::Null => Value::Nil,
            serde_json::Value::Bool(b) => Value::Bool(b),
            serde_json::Value::Number(n) => {
                if let Some(u) = n.as_u64() {
                    Value::from(u)
                } else if let Some(i) = n.as_i64() {
                    Value::from(i)
                } else {
                    Value::F64(n.as_f64().unwrap_or(f64::NAN))
                }
            }
            serde_json::Value::String(s) => Value::from(s),
            serde_json::Value::Array(items) => {
                crate::stack::guard(|| Value::Array(items.into_iter().map(Value::from).collect()))
            }
            serde_json::Value::Object(entries) => crate::stack::guard(|| {
                Value::Map(
                    entries
                        .into_iter()
                        .map(|(k, v)| (Value::from(k), Value::from(v)))
                        .collect(),
                )
            }),
        }
    }
}

impl<T: Into<Value>> From<Option<T>> for Value {
    fn from(o: Option<T>) -> Self {
        o.map_or(Value::Nil, Into::into)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every array item and map key/value is a `Value`, so its size is the decoded
    /// memory of a checkpoint: 40 bytes (the largest payload is `Bytes`, 32). A new
    /// variant that would make it larger should be boxed instead.
    #[test]
    fn a_value_is_forty_bytes() {
        assert_eq!(std::mem::size_of::<Value>(), 40);
    }

    #[test]
    fn int_is_normalised_across_signedness() {
        assert_eq!(Int::from(5i64), Int::from(5u64));
        assert_eq!(Int::from(-1i64).as_u64(), None);
        assert_eq!(Int::from(u64::MAX).as_i64(), None);
        assert_eq!(Int::from_i128(-(1i128 << 63) - 1), None);
        assert_eq!(Int::from_i128(1i128 << 64), None);
        assert_eq!(Int::from_i128(u64::MAX as i128), Some(Int::from(u64::MAX)));
    }

    #[test]
    fn floats_compare_by_bits() {
        assert_eq!(Value::F64(f64::NAN), Value::F64(f64::NAN));
        assert_ne!(Value::F64(0.0), Value::F64(-0.0));
        assert_ne!(Value::F64(1.0), Value::F32(1.0));
    }

    #[test]
    fn object_kind_codes_and_names_are_inverse() {
        for code in 0..=5 {
            let kind = ObjectKind::from_code(code).expect("0..=5 are object kinds");
            assert_eq!(kind.code(), code);
            assert_eq!(ObjectKind::from_name(kind.as_str()), Some(kind));
        }
        assert_eq!(ObjectKind::from_code(6), None);
    }
}
