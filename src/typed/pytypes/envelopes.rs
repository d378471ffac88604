//! Envelopes for your own Python classes: pydantic v2 / v1 models, dataclasses and
//! namedtuples, with module and class given by the Rust type.

use std::marker::PhantomData;
use std::ops::{Deref, DerefMut};

use serde::de::{Deserialize, DeserializeOwned, Deserializer};
use serde::ser::{Serialize, Serializer};

use crate::typed::object::{read_object, write_object, Dynamic};
use crate::value::ObjectKind;

/// Where a Python class lives: `obj.__class__.__module__` and `__name__`.
///
/// The Rust struct's fields, in declaration order, are the model's fields (as
/// `model_dump()`, `dict()`, `dataclasses.fields` or `_asdict()` give them).
pub trait PyClass {
    /// The module, e.g. `"myapp.models"`.
    const MODULE: &'static str;
    /// The class name, e.g. `"Order"`.
    const NAME: &'static str;
}

macro_rules! envelope {
    ($(#[$doc:meta])* $ty:ident, $kind:expr, $method:expr) => {
        $(#[$doc])*
        #[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub struct $ty<T>(pub T);

        impl<T> Deref for $ty<T> {
            type Target = T;
            fn deref(&self) -> &T {
                &self.0
            }
        }

        impl<T> DerefMut for $ty<T> {
            fn deref_mut(&mut self) -> &mut T {
                &mut self.0
            }
        }

        impl<T: PyClass + Serialize> Serialize for $ty<T> {
            fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                write_object(s, $kind, T::MODULE, T::NAME, &self.0, $method)
            }
        }

        impl<'de, T: PyClass + DeserializeOwned> Deserialize<'de> for $ty<T> {
            fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                read_object(
                    d,
                    Dynamic {
                        code: $kind.code(),
                        module: T::MODULE,
                        name: T::NAME,
                        _arg: PhantomData,
                    },
                )
                .map($ty)
            }
        }
    };
}

envelope!(
    /// A pydantic v2 model: `ext 5 (module, name, model_dump(), "model_validate_json")`.
    PydanticV2,
    ObjectKind::PydanticV2,
    Some("model_validate_json")
);
envelope!(
    /// A pydantic v1 model: `ext 4 (module, name, dict())`.
    PydanticV1,
    ObjectKind::PydanticV1,
    None
);
envelope!(
    /// A dataclass: `ext 2 (module, name, {field: value})`, fields in declaration order.
    ///
    /// ```
    /// use langgraph_codec::typed::pytypes::{Dataclass, PyClass};
    /// use langgraph_codec::typed;
    /// use serde::{Deserialize, Serialize};
    ///
    /// // @dataclass class Simple: a: int; b: str = "b"; c: Optional[float] = None
    /// #[derive(Serialize, Deserialize, Debug, PartialEq)]
    /// struct Simple { a: i64, b: String, c: Option<f64> }
    /// impl PyClass for Simple {
    ///     const MODULE: &'static str = "pytypes";
    ///     const NAME: &'static str = "Simple";
    /// }
    ///
    /// // What Python writes for Simple(a=1):
    /// let python = b"\xc7\x1b\x02\x93\xa7pytypes\xa6Simple\x83\xa1a\x01\xa1b\xa1b\xa1c\xc0";
    /// let value = Dataclass(Simple { a: 1, b: "b".into(), c: None });
    /// assert_eq!(typed::to_vec(&value)?, python);
    /// assert_eq!(typed::from_slice::<Dataclass<Simple>>(python)?, value);
    /// # Ok::<(), langgraph_codec::Error>(())
    /// ```
    Dataclass,
    ObjectKind::ConstructorKwArgs,
    None
);
envelope!(
    /// A namedtuple: `ext 2 (module, name, _asdict())`.
    NamedTuple,
    ObjectKind::ConstructorKwArgs,
    None
);
