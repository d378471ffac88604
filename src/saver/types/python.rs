//! Python's own formatting and comparison rules: `repr(float)` and `==` over values.

use crate::value::Value;

/// Python's `repr(float)` (one float path, in the JSON writer).
pub(crate) use crate::json::py_float_repr;

/// Python's `==` on decoded values, as `list(filter=…)` compares metadata: numbers
/// compare by value across int, float and bool (`1 == 1.0 == True`), maps compare
/// regardless of key order, everything else structurally.
pub fn python_eq(a: &Value, b: &Value) -> bool {
    fn num(v: &Value) -> Option<Num> {
        match v {
            Value::Bool(b) => Some(Num::I(i128::from(*b))),
            Value::Int(i) => Some(Num::I(i.as_i128())),
            Value::F64(f) => Some(Num::F(*f)),
            Value::F32(f) => Some(Num::F(f64::from(*f))),
            _ => None,
        }
    }
    enum Num {
        I(i128),
        F(f64),
    }
    fn int_eq_float(i: i128, f: f64) -> bool {
        f.is_finite() && f.fract() == 0.0 && f.abs() < 1.7e38 && (f as i128) == i
    }
    if let (Some(x), Some(y)) = (num(a), num(b)) {
        return match (x, y) {
            (Num::I(x), Num::I(y)) => x == y,
            (Num::F(x), Num::F(y)) => x == y,
            (Num::I(i), Num::F(f)) | (Num::F(f), Num::I(i)) => int_eq_float(i, f),
        };
    }
    match (a, b) {
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(p, q)| python_eq(p, q))
        }
        (Value::Map(x), Value::Map(y)) => {
            x.len() == y.len()
                && x.iter().all(|(k, v)| {
                    y.iter()
                        .any(|(k2, v2)| python_eq(k, k2) && python_eq(v, v2))
                })
        }
        (Value::DeltaSnapshot(x), Value::DeltaSnapshot(y)) => python_eq(x, y),
        (Value::F64(_) | Value::F32(_), _) | (_, Value::F64(_) | Value::F32(_)) => false,
        _ => a == b,
    }
}
