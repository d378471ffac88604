//! Python's own formatting and comparison rules: `repr(float)` and `==` over values.

use crate::value::Value;

/// Python's `repr(float)`: shortest round-trip digits, scientific notation when the
/// decimal exponent is below −4 or at least 16.
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
