//! Python `enum.Enum` members from Rust enums.

use std::marker::PhantomData;

use serde::de::{self, Deserialize, DeserializeOwned, Deserializer};
use serde::ser::{Serialize, Serializer};

use crate::typed::object::{read_object, write_object, Dynamic};
use crate::value::ObjectKind;

/// A Rust type standing for a Python `Enum` class: where the class lives and how its
/// members map to Python values. Python writes a member as
/// `ext 0 (module, class, member.value)`.
///
/// ```
/// use langgraph_codec::typed::pytypes::{PyEnum, PyEnumValue};
/// use langgraph_codec::typed;
/// use langgraph_codec::Value;
///
/// // class Color(Enum): RED = "red"; BLUE = 3   (in module "pytypes")
/// #[derive(Debug, PartialEq)]
/// enum Color { Red, Blue }
///
/// impl PyEnum for Color {
///     const MODULE: &'static str = "pytypes";
///     const CLASS: &'static str = "Color";
///     type Value = Value;
///     fn to_value(&self) -> Value {
///         match self { Color::Red => "red".into(), Color::Blue => 3i64.into() }
///     }
///     fn from_value(v: Value) -> Option<Self> {
///         match (v.as_str(), v.as_i64()) {
///             (Some("red"), _) => Some(Color::Red),
///             (_, Some(3)) => Some(Color::Blue),
///             _ => None,
///         }
///     }
/// }
///
/// // The bytes Python writes for Color.RED:
/// let python = b"\xc7\x13\x00\x93\xa7pytypes\xa5Color\xa3red";
/// assert_eq!(typed::to_vec(&PyEnumValue(Color::Red))?, python);
/// let back: PyEnumValue<Color> = typed::from_slice(python)?;
/// assert_eq!(back.0, Color::Red);
/// # Ok::<(), langgraph_codec::Error>(())
/// ```
pub trait PyEnum: Sized {
    /// The Python module, e.g. `"myapp.models"`.
    const MODULE: &'static str;
    /// The Python class name, e.g. `"Color"`.
    const CLASS: &'static str;
    /// The type of the members' `.value` (`String`, `i64`, [`Value`](crate::Value), …).
    type Value: Serialize + DeserializeOwned;
    /// The member's `.value`.
    fn to_value(&self) -> Self::Value;
    /// The member with this `.value`, if any.
    fn from_value(value: Self::Value) -> Option<Self>;
}

/// A [`PyEnum`] written and read as the Python enum member.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct PyEnumValue<E>(pub E);

impl<E: PyEnum> Serialize for PyEnumValue<E> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        py_enum::serialize(&self.0, s)
    }
}

impl<'de, E: PyEnum> Deserialize<'de> for PyEnumValue<E> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        py_enum::deserialize(d).map(PyEnumValue)
    }
}

/// `#[serde(with = "langgraph_codec::typed::pytypes::py_enum")]` for a field whose type
/// implements [`PyEnum`].
pub mod py_enum {
    use super::*;

    /// Writes the member as Python does.
    ///
    /// # Errors
    /// The serializer's error.
    pub fn serialize<E: PyEnum, S: Serializer>(e: &E, s: S) -> Result<S::Ok, S::Error> {
        write_object(
            s,
            ObjectKind::ConstructorSingleArg,
            E::MODULE,
            E::CLASS,
            &e.to_value(),
            None,
        )
    }

    /// Reads the member, checking module and class.
    ///
    /// # Errors
    /// The deserializer's error: not an object of `E`'s module and class, or a value
    /// that is not one of its members.
    pub fn deserialize<'de, E: PyEnum, D: Deserializer<'de>>(d: D) -> Result<E, D::Error> {
        let value: E::Value = read_object(
            d,
            Dynamic {
                code: ObjectKind::ConstructorSingleArg.code(),
                module: E::MODULE,
                name: E::CLASS,
                _arg: PhantomData,
            },
        )?;
        E::from_value(value).ok_or_else(|| {
            de::Error::custom(format!(
                "no member of {}.{} has this value",
                E::MODULE,
                E::CLASS
            ))
        })
    }
}
