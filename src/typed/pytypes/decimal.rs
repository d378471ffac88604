//! Python `decimal.Decimal`.

use std::fmt;
use std::str::FromStr;

use serde::de::{self, Deserialize, Deserializer};
use serde::ser::{Serialize, Serializer};

use super::invalid;
use crate::typed::object::{read_simple, write_object};
use crate::typed::TypedError;
use crate::value::ObjectKind;

/// Python `decimal.Decimal`, kept exactly as its string form (`str(d)`): `"1.10"`,
/// `"-0"`, `"1E+3"`, `"NaN"`, `"sNaN"`, `"-Infinity"`. Written as
/// `ext 0 ("decimal", "Decimal", str)`.
///
/// ```
/// use langgraph_codec::typed::pytypes::Decimal;
/// let d: Decimal = "1.10".parse()?;
/// assert_eq!(d.as_str(), "1.10");
/// assert!("1.2.3".parse::<Decimal>().is_err());
/// # Ok::<(), langgraph_codec::typed::TypedError>(())
/// ```
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Decimal(String);

impl Decimal {
    /// The string form.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

/// Python's decimal string syntax: sign, then digits with an optional point and
/// exponent, or Infinity / Inf / NaN / sNaN (case-insensitive, NaN with payload).
fn is_decimal(s: &str) -> bool {
    let body = s.strip_prefix(['+', '-']).unwrap_or(s);
    let lower = body.to_ascii_lowercase();
    if lower == "inf" || lower == "infinity" {
        return true;
    }
    for nan in ["snan", "nan"] {
        if let Some(payload) = lower.strip_prefix(nan) {
            return payload.bytes().all(|b| b.is_ascii_digit());
        }
    }
    let (mantissa, exp) = match lower.split_once('e') {
        Some((m, e)) => (m, Some(e)),
        None => (lower.as_str(), None),
    };
    let (int, frac) = mantissa.split_once('.').unwrap_or((mantissa, ""));
    let digits = |p: &str| p.bytes().all(|b| b.is_ascii_digit() || b == b'_');
    let ok_mantissa = digits(int) && digits(frac) && !(int.is_empty() && frac.is_empty());
    let ok_exp = exp.is_none_or(|e| {
        let e = e.strip_prefix(['+', '-']).unwrap_or(e);
        !e.is_empty() && e.bytes().all(|b| b.is_ascii_digit())
    });
    ok_mantissa && ok_exp
}

impl FromStr for Decimal {
    type Err = TypedError;
    fn from_str(s: &str) -> Result<Self, TypedError> {
        if is_decimal(s) {
            Ok(Decimal(s.to_owned()))
        } else {
            Err(invalid("a decimal number", s))
        }
    }
}

impl fmt::Display for Decimal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl Serialize for Decimal {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        write_object(
            s,
            ObjectKind::ConstructorSingleArg,
            "decimal",
            "Decimal",
            &self.0,
            None,
        )
    }
}

impl<'de> Deserialize<'de> for Decimal {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let (_, s): (_, String) =
            read_simple(d, ObjectKind::ConstructorSingleArg, "decimal", &["Decimal"])?;
        s.parse().map_err(de::Error::custom)
    }
}
