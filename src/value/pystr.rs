//! [`PyStr`]: the string type inside [`Value::Str`](super::Value::Str).

use std::borrow::{Borrow, Cow};
use std::fmt;
use std::ops::Deref;

use compact_str::CompactString;

/// A Python `str` held by a [`Value`](super::Value): UTF-8, immutable in place, and
/// stored inline (no heap allocation) when it is at most 24 bytes long.
///
/// Why not `String`: a checkpoint is mostly short strings — map keys, message types,
/// ids, channel names — and one allocation per string was about half of the decode time
/// (allocating, then freeing, every key of every record). `PyStr` is the same size as
/// `String` and derefs to `str`, so it reads like one; convert with `From`/`Into` in
/// either direction.
///
/// ```
/// use langgraph_codec::{PyStr, Value};
///
/// let v = Value::from("messages");
/// let Value::Str(s) = &v else { unreachable!() };
/// assert_eq!(s, "messages");
/// assert!(s.starts_with("mess")); // every `str` method, through `Deref`
/// let owned: String = s.clone().into();
/// assert_eq!(PyStr::from(owned), *s);
/// ```
#[derive(Clone, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct PyStr(CompactString);

impl PyStr {
    /// The empty string, as a constant.
    pub const EMPTY: PyStr = PyStr(CompactString::const_new(""));

    /// A copy of `s`.
    pub fn new(s: &str) -> Self {
        PyStr(CompactString::new(s))
    }

    /// The string slice.
    pub fn as_str(&self) -> &str {
        self.0.as_str()
    }

    /// Appends `s`. Crate-internal: `Value::Str` is immutable in the public API.
    #[inline]
    pub(crate) fn push_str(&mut self, s: &str) {
        self.0.push_str(s);
    }

    /// The contents as a `String` (no copy when the string is on the heap already).
    pub fn into_string(self) -> String {
        self.0.into_string()
    }
}

impl Deref for PyStr {
    type Target = str;
    fn deref(&self) -> &str {
        self.0.as_str()
    }
}

impl AsRef<str> for PyStr {
    fn as_ref(&self) -> &str {
        self.0.as_str()
    }
}

impl AsRef<[u8]> for PyStr {
    fn as_ref(&self) -> &[u8] {
        self.0.as_bytes()
    }
}

impl Borrow<str> for PyStr {
    fn borrow(&self) -> &str {
        self.0.as_str()
    }
}

impl fmt::Debug for PyStr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self.as_str(), f)
    }
}

impl fmt::Display for PyStr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self.as_str(), f)
    }
}

impl From<&str> for PyStr {
    fn from(s: &str) -> Self {
        PyStr::new(s)
    }
}

impl From<&String> for PyStr {
    fn from(s: &String) -> Self {
        PyStr::new(s)
    }
}

/// Takes the `String`'s buffer when it is too long to inline (no copy).
impl From<String> for PyStr {
    fn from(s: String) -> Self {
        PyStr(CompactString::from(s))
    }
}

impl From<Box<str>> for PyStr {
    fn from(s: Box<str>) -> Self {
        PyStr(CompactString::from(s))
    }
}

impl From<Cow<'_, str>> for PyStr {
    fn from(s: Cow<'_, str>) -> Self {
        PyStr(CompactString::from(s))
    }
}

impl From<char> for PyStr {
    fn from(c: char) -> Self {
        PyStr(CompactString::from(c.encode_utf8(&mut [0; 4]) as &str))
    }
}

impl From<PyStr> for String {
    fn from(s: PyStr) -> Self {
        s.into_string()
    }
}

impl std::str::FromStr for PyStr {
    type Err = std::convert::Infallible;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Ok(PyStr::new(s))
    }
}

impl FromIterator<char> for PyStr {
    fn from_iter<I: IntoIterator<Item = char>>(iter: I) -> Self {
        PyStr(iter.into_iter().collect())
    }
}

macro_rules! eq_str {
    ($($t:ty),*) => {$(
        impl PartialEq<$t> for PyStr {
            fn eq(&self, other: &$t) -> bool {
                self.as_str() == AsRef::<str>::as_ref(other)
            }
        }
        impl PartialEq<PyStr> for $t {
            fn eq(&self, other: &PyStr) -> bool {
                AsRef::<str>::as_ref(self) == other.as_str()
            }
        }
    )*};
}
eq_str!(str, &str, String, Cow<'_, str>);

impl serde::Serialize for PyStr {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

impl<'de> serde::Deserialize<'de> for PyStr {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl serde::de::Visitor<'_> for V {
            type Value = PyStr;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a string")
            }
            fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<PyStr, E> {
                Ok(PyStr::new(v))
            }
            fn visit_string<E: serde::de::Error>(self, v: String) -> Result<PyStr, E> {
                Ok(PyStr::from(v))
            }
        }
        d.deserialize_str(V)
    }
}

#[cfg(test)]
mod tests {
    use super::PyStr;

    #[test]
    fn long_and_short_strings_round_trip_through_string() {
        for s in [
            "",
            "k",
            "exactly twenty-four byte",
            "twenty-five bytes long!!!",
            "é€𝄞",
        ] {
            let p = PyStr::from(s.to_owned());
            assert_eq!(p.as_str(), s);
            assert_eq!(p.len(), s.len());
            assert_eq!(String::from(p.clone()), s);
            assert_eq!(p, PyStr::new(s));
            assert_eq!(format!("{p}"), s);
            assert_eq!(format!("{p:?}"), format!("{s:?}"));
        }
    }

    #[test]
    fn ordering_and_hashing_follow_str() {
        use std::collections::HashSet;
        let mut v = vec![PyStr::new("b"), PyStr::new("a"), PyStr::new("ab")];
        v.sort();
        assert_eq!(v, ["a", "ab", "b"]);
        let set: HashSet<PyStr> = v.into_iter().collect();
        assert!(set.contains("ab"));
    }
}
