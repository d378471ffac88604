//! Python `set`, `frozenset` and `collections.deque`.

use serde::de::{Deserialize, DeserializeOwned, Deserializer};
use serde::ser::{Serialize, Serializer};

use crate::typed::object::{read_simple, write_object};
use crate::value::ObjectKind;

macro_rules! collection {
    ($(#[$doc:meta])* $ty:ident, $module:literal, $name:literal) => {
        $(#[$doc])*
        #[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
        pub struct $ty<T>(pub Vec<T>);

        impl<T> From<Vec<T>> for $ty<T> {
            fn from(items: Vec<T>) -> Self {
                $ty(items)
            }
        }

        impl<T: Serialize> Serialize for $ty<T> {
            fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                write_object(s, ObjectKind::ConstructorSingleArg, $module, $name, &self.0, None)
            }
        }

        impl<'de, T: DeserializeOwned> Deserialize<'de> for $ty<T> {
            fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                let (_, items) =
                    read_simple(d, ObjectKind::ConstructorSingleArg, $module, &[$name])?;
                Ok($ty(items))
            }
        }
    };
}

collection!(
    /// Python `set`: `ext 0 ("builtins", "set", [items])`. The items keep their order
    /// (Python's iteration order when read); no deduplication is done.
    PySet,
    "builtins",
    "set"
);
collection!(
    /// Python `frozenset`: `ext 0 ("builtins", "frozenset", [items])`.
    FrozenSet,
    "builtins",
    "frozenset"
);
collection!(
    /// Python `collections.deque`: `ext 0 ("collections", "deque", [items])` (`maxlen`
    /// is not stored, as in Python).
    Deque,
    "collections",
    "deque"
);
