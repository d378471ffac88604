//! pydantic `SecretStr` and `SecretBytes`.

use std::fmt;

use bytes::Bytes;
use serde::de::{self, Deserialize, Deserializer};
use serde::ser::{Serialize, Serializer};

use crate::typed::object::{read_simple, write_object};
use crate::value::{ObjectKind, Value};

const MODULE: &str = "pydantic.types";

/// pydantic `SecretStr`: `ext 0 ("pydantic.types", "SecretStr", secret)` (Python writes
/// `get_secret_value()`). `Debug` does not show the secret, as pydantic's `repr` does
/// not.
///
/// ```
/// use langgraph_codec::typed::pytypes::SecretStr;
/// let s = SecretStr::new("hunter2");
/// assert_eq!(s.expose_secret(), "hunter2");
/// assert_eq!(format!("{s:?}"), "SecretStr('**********')");
/// ```
#[derive(Clone, Default, PartialEq, Eq, Hash)]
pub struct SecretStr(String);

impl SecretStr {
    /// A secret.
    pub fn new(secret: impl Into<String>) -> Self {
        SecretStr(secret.into())
    }

    /// The secret itself (pydantic's `get_secret_value()`).
    pub fn expose_secret(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for SecretStr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("SecretStr('**********')")
    }
}

impl Serialize for SecretStr {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        write_object(
            s,
            ObjectKind::ConstructorSingleArg,
            MODULE,
            "SecretStr",
            &self.0,
            None,
        )
    }
}

impl<'de> Deserialize<'de> for SecretStr {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let (_, secret): (_, String) =
            read_simple(d, ObjectKind::ConstructorSingleArg, MODULE, &["SecretStr"])?;
        Ok(SecretStr(secret))
    }
}

/// pydantic `SecretBytes`: `ext 0 ("pydantic.types", "SecretBytes", bin)`. `Debug` does
/// not show the secret.
///
/// ```
/// use langgraph_codec::typed::pytypes::SecretBytes;
/// let s = SecretBytes::new(&b"key"[..]);
/// assert_eq!(&s.expose_secret()[..], b"key");
/// assert_eq!(format!("{s:?}"), "SecretBytes(b'**********')");
/// ```
#[derive(Clone, Default, PartialEq, Eq, Hash)]
pub struct SecretBytes(Bytes);

impl SecretBytes {
    /// A secret.
    pub fn new(secret: impl Into<Bytes>) -> Self {
        SecretBytes(secret.into())
    }

    /// The secret itself (pydantic's `get_secret_value()`).
    pub fn expose_secret(&self) -> &Bytes {
        &self.0
    }
}

impl fmt::Debug for SecretBytes {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("SecretBytes(b'**********')")
    }
}

impl Serialize for SecretBytes {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let arg = Value::Bin(self.0.clone());
        write_object(
            s,
            ObjectKind::ConstructorSingleArg,
            MODULE,
            "SecretBytes",
            &arg,
            None,
        )
    }
}

impl<'de> Deserialize<'de> for SecretBytes {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let (_, secret): (_, Value) = read_simple(
            d,
            ObjectKind::ConstructorSingleArg,
            MODULE,
            &["SecretBytes"],
        )?;
        secret.into_bin().map(SecretBytes).map_err(|v| {
            de::Error::custom(format!(
                "SecretBytes must hold bytes, found {}",
                v.kind_name()
            ))
        })
    }
}
