//! Python `re.Pattern`.

use serde::de::{Deserialize, Deserializer};
use serde::ser::{Serialize, Serializer};

use crate::typed::object::{read_simple, write_object};
use crate::value::{ObjectKind, Value};

/// A compiled Python regex: `re.compile(pattern, flags)`, written as
/// `ext 1 ("re", "compile", (pattern, flags))`. The pattern is a `str` (or, for byte
/// patterns, bin). `Pattern::new` sets `re.UNICODE` as Python does for `str` patterns.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Pattern {
    /// The pattern: [`Value::Str`] or, for a bytes pattern, [`Value::Bin`].
    pub pattern: Value,
    /// `Pattern.flags`.
    pub flags: u32,
}

impl Pattern {
    /// `re.IGNORECASE`.
    pub const IGNORECASE: u32 = 2;
    /// `re.LOCALE`.
    pub const LOCALE: u32 = 4;
    /// `re.MULTILINE`.
    pub const MULTILINE: u32 = 8;
    /// `re.DOTALL`.
    pub const DOTALL: u32 = 16;
    /// `re.UNICODE`, implied for every `str` pattern.
    pub const UNICODE: u32 = 32;
    /// `re.VERBOSE`.
    pub const VERBOSE: u32 = 64;
    /// `re.ASCII` (replaces `UNICODE`).
    pub const ASCII: u32 = 256;

    /// `re.compile(pattern)`: flags `re.UNICODE`.
    pub fn new(pattern: impl Into<String>) -> Self {
        Self::with_flags(pattern, 0)
    }

    /// `re.compile(pattern, flags)`: adds `re.UNICODE` unless `re.ASCII` is given, as
    /// Python does for `str` patterns.
    pub fn with_flags(pattern: impl Into<String>, flags: u32) -> Self {
        let flags = if flags & Self::ASCII == 0 {
            flags | Self::UNICODE
        } else {
            flags
        };
        Pattern {
            pattern: Value::from(pattern.into()),
            flags,
        }
    }

    /// The pattern string, for a `str` pattern.
    pub fn as_str(&self) -> Option<&str> {
        self.pattern.as_str()
    }
}

impl Serialize for Pattern {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        write_object(
            s,
            ObjectKind::ConstructorPosArgs,
            "re",
            "compile",
            &(&self.pattern, self.flags),
            None,
        )
    }
}

impl<'de> Deserialize<'de> for Pattern {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let (_, (pattern, flags)) =
            read_simple(d, ObjectKind::ConstructorPosArgs, "re", &["compile"])?;
        Ok(Pattern { pattern, flags })
    }
}
