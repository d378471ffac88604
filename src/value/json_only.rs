//! The two things Python reads from a `json` row that msgpack cannot hold: integers
//! beyond 64 bits and strings with lone surrogates.

use std::fmt;

/// An integer outside `i64::MIN ..= u64::MAX` (Python reads `2**70` from a `json` row
/// or a Postgres JSONB column). Kept exactly, as its decimal digits.
///
/// Only built for values beyond the [`Int`](super::Int) range, so every integer has one
/// representation. msgpack cannot hold it: [`JsonPlusSerializer`](crate::JsonPlusSerializer)
/// writes a value holding one as a `json` row, which Python reads back as the same int.
///
/// ```
/// use langgraph_codec::BigInt;
///
/// let n: BigInt = "-1180591620717411303424".parse().expect("an integer beyond 64 bits");
/// assert!(n.is_negative());
/// assert_eq!(n.to_string(), "-1180591620717411303424");
/// assert!("12".parse::<BigInt>().is_err()); // fits Int
/// ```
#[derive(Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct BigInt {
    negative: bool,
    /// Decimal digits, no leading zero.
    digits: String,
}

/// The error of parsing a [`BigInt`]: not an integer, or one that fits an
/// [`Int`](super::Int).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BigIntError;

impl fmt::Display for BigIntError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("not a decimal integer outside i64::MIN..=u64::MAX")
    }
}

impl std::error::Error for BigIntError {}

impl BigInt {
    /// `true` below zero.
    pub fn is_negative(&self) -> bool {
        self.negative
    }

    /// The decimal digits of the magnitude (no sign, no leading zero).
    pub fn digits(&self) -> &str {
        &self.digits
    }

    /// The nearest `f64` (as Python's `float(n)`).
    pub fn to_f64(&self) -> f64 {
        self.to_string().parse().unwrap_or(f64::NAN)
    }
}

impl std::str::FromStr for BigInt {
    type Err = BigIntError;
    /// An optional `-` and decimal digits, without leading zeros, of a number outside
    /// the [`Int`](super::Int) range.
    fn from_str(s: &str) -> Result<Self, BigIntError> {
        let (negative, digits) = match s.strip_prefix('-') {
            Some(d) => (true, d),
            None => (false, s),
        };
        let well_formed = !digits.is_empty()
            && digits.bytes().all(|b| b.is_ascii_digit())
            && !(digits.len() > 1 && digits.starts_with('0'));
        let fits = s
            .parse::<i128>()
            .ok()
            .and_then(super::Int::from_i128)
            .is_some();
        if !well_formed || fits {
            return Err(BigIntError);
        }
        Ok(BigInt {
            negative,
            digits: digits.to_owned(),
        })
    }
}

impl fmt::Display for BigInt {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.negative {
            f.write_str("-")?;
        }
        f.write_str(&self.digits)
    }
}

impl fmt::Debug for BigInt {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

/// A Python `str` holding lone surrogates (U+D800–U+DFFF not in a pair), which
/// LangGraphJS and old Python releases write into `json` rows as `\ud800` escapes and
/// Python reads. Rust strings cannot hold them; this keeps every code point, stored as
/// WTF-8.
///
/// Only built when a string really has a lone surrogate. msgpack cannot carry one
/// (Python 4.3.2's writer replaces each with `?`):
/// [`JsonPlusSerializer`](crate::JsonPlusSerializer) writes a value holding one as a
/// `json` row, with the surrogates as `\uXXXX` escapes.
///
/// ```
/// use langgraph_codec::PyWStr;
///
/// let s = PyWStr::from_code_points([0x61, 0xD800, 0x62]).expect("has a lone surrogate");
/// assert_eq!(s.code_points().collect::<Vec<_>>(), [0x61, 0xD800, 0x62]);
/// assert_eq!(s.to_string_lossy(), "a\u{FFFD}b");
/// assert!(PyWStr::from_code_points("ab".chars().map(u32::from)).is_none());
/// ```
#[derive(Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct PyWStr {
    wtf8: Vec<u8>,
}

impl PyWStr {
    /// The string from Python code points, if it holds at least one lone surrogate
    /// (a plain string is a [`Value::Str`](super::Value::Str)) and every code point is
    /// at most U+10FFFF. A surrogate pair given as two code points is kept as two.
    pub fn from_code_points(points: impl IntoIterator<Item = u32>) -> Option<PyWStr> {
        let mut wtf8 = Vec::new();
        let mut lone = false;
        for cp in points {
            match char::from_u32(cp) {
                Some(c) => {
                    let mut buf = [0u8; 4];
                    wtf8.extend_from_slice(c.encode_utf8(&mut buf).as_bytes());
                }
                None if (0xD800..0xE000).contains(&cp) => {
                    lone = true;
                    wtf8.extend_from_slice(&[
                        0xE0 | (cp >> 12) as u8,
                        0x80 | ((cp >> 6) & 0x3F) as u8,
                        0x80 | (cp & 0x3F) as u8,
                    ]);
                }
                None => return None,
            }
        }
        lone.then_some(PyWStr { wtf8 })
    }

    /// The code points, lone surrogates included.
    pub fn code_points(&self) -> impl Iterator<Item = u32> + '_ {
        // Generalised UTF-8, built only by `from_code_points`.
        let mut rest = &self.wtf8[..];
        std::iter::from_fn(move || {
            let (&lead, tail) = rest.split_first()?;
            let (width, bits) = match lead {
                0x00..=0x7F => (1, u32::from(lead)),
                0xC0..=0xDF => (2, u32::from(lead & 0x1F)),
                0xE0..=0xEF => (3, u32::from(lead & 0x0F)),
                _ => (4, u32::from(lead & 0x07)),
            };
            let cont = tail.get(..width - 1).unwrap_or(tail);
            rest = tail.get(width - 1..).unwrap_or_default();
            Some(
                cont.iter()
                    .fold(bits, |cp, b| (cp << 6) | u32::from(b & 0x3F)),
            )
        })
    }

    /// The text with each lone surrogate replaced by U+FFFD.
    pub fn to_string_lossy(&self) -> String {
        self.map_surrogates('\u{FFFD}')
    }

    /// The text with each lone surrogate replaced by `replacement` (Python 4.3.2's
    /// msgpack writer uses `?`).
    pub fn map_surrogates(&self, replacement: char) -> String {
        self.code_points()
            .map(|cp| char::from_u32(cp).unwrap_or(replacement))
            .collect()
    }

    /// The WTF-8 bytes (UTF-8, with each lone surrogate encoded like a code point).
    pub fn as_wtf8(&self) -> &[u8] {
        &self.wtf8
    }
}

impl fmt::Debug for PyWStr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("\"")?;
        for cp in self.code_points() {
            match char::from_u32(cp) {
                Some(c) => write!(f, "{}", c.escape_debug())?,
                None => write!(f, "\\u{{{cp:x}}}")?,
            }
        }
        f.write_str("\"")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn big_ints_are_only_outside_the_int_range() {
        assert!("18446744073709551615".parse::<BigInt>().is_err());
        assert!("-9223372036854775808".parse::<BigInt>().is_err());
        assert!("18446744073709551616".parse::<BigInt>().is_ok());
        assert!("-9223372036854775809".parse::<BigInt>().is_ok());
        assert!("0018446744073709551616".parse::<BigInt>().is_err());
        assert!("1e30".parse::<BigInt>().is_err());
        assert!("-".parse::<BigInt>().is_err());
        let big: BigInt = "123456789012345678901234567890".parse().expect("big");
        assert_eq!(big.to_f64(), 1.2345678901234568e29);
    }

    #[test]
    fn surrogates_round_trip_through_wtf8() {
        let points = [0xDC00, 0x1F600, 0x41, 0xDBFF, 0xE9];
        let s = PyWStr::from_code_points(points).expect("lone surrogates");
        assert_eq!(s.code_points().collect::<Vec<_>>(), points);
        assert_eq!(s.map_surrogates('?'), "?😀A?é");
        assert!(PyWStr::from_code_points([0x110000, 0xD800]).is_none());
    }
}
