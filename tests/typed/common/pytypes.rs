//! The Python classes of `vectors/pytypes.py` as Rust types, defined once for the typed
//! tests (`tests/typed_common`) and the vector writer (`examples/emit_typed_vectors.rs`,
//! which includes this file with `#[path]`).
#![allow(dead_code)]

use langgraph_codec::typed::pytypes::{PyClass, PyEnum};
use langgraph_codec::Value;
use serde::{Deserialize, Serialize};

/// A map that keeps insertion order and any key type.
#[derive(Clone, Debug, PartialEq)]
pub struct OrderedMap<K, V>(pub Vec<(K, V)>);

impl<K: Serialize, V: Serialize> Serialize for OrderedMap<K, V> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let mut m = s.serialize_map(Some(self.0.len()))?;
        for (k, v) in &self.0 {
            m.serialize_entry(k, v)?;
        }
        m.end()
    }
}

impl<'de, K: Deserialize<'de>, V: Deserialize<'de>> Deserialize<'de> for OrderedMap<K, V> {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct Vis<K, V>(std::marker::PhantomData<(K, V)>);
        impl<'de, K: Deserialize<'de>, V: Deserialize<'de>> serde::de::Visitor<'de> for Vis<K, V> {
            type Value = OrderedMap<K, V>;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a map")
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(
                self,
                mut a: A,
            ) -> Result<Self::Value, A::Error> {
                let mut out = Vec::new();
                while let Some(e) = a.next_entry()? {
                    out.push(e);
                }
                Ok(OrderedMap(out))
            }
        }
        d.deserialize_map(Vis(std::marker::PhantomData))
    }
}

/// Bytes written with `serialize_bytes` (msgpack bin), like `serde_bytes::ByteBuf`.
#[derive(Clone, Debug, PartialEq)]
pub struct ByteBuf(pub Vec<u8>);

impl Serialize for ByteBuf {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_bytes(&self.0)
    }
}

impl<'de> Deserialize<'de> for ByteBuf {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct Vis;
        impl serde::de::Visitor<'_> for Vis {
            type Value = ByteBuf;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("bytes")
            }
            fn visit_bytes<E: serde::de::Error>(self, v: &[u8]) -> Result<ByteBuf, E> {
                Ok(ByteBuf(v.to_vec()))
            }
        }
        d.deserialize_bytes(Vis)
    }
}

/// `class Color(Enum): RED = "red"; GREEN = "green"; BLUE = 3; TUPLE = (1, "a")`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Color {
    Red,
    Green,
    Blue,
    Tuple,
}

impl PyEnum for Color {
    const MODULE: &'static str = "pytypes";
    const CLASS: &'static str = "Color";
    type Value = Value;
    fn to_value(&self) -> Value {
        match self {
            Color::Red => "red".into(),
            Color::Green => "green".into(),
            Color::Blue => 3i64.into(),
            Color::Tuple => Value::Array(vec![1i64.into(), "a".into()]),
        }
    }
    fn from_value(v: Value) -> Option<Self> {
        [Color::Red, Color::Green, Color::Blue, Color::Tuple]
            .into_iter()
            .find(|c| c.to_value() == v)
    }
}

/// `class Priority(IntEnum): LOW = 1; HIGH = 2; HUGE = 2**40`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Priority {
    Low,
    High,
    Huge,
}

impl PyEnum for Priority {
    const MODULE: &'static str = "pytypes";
    const CLASS: &'static str = "Priority";
    type Value = i64;
    fn to_value(&self) -> i64 {
        match self {
            Priority::Low => 1,
            Priority::High => 2,
            Priority::Huge => 1 << 40,
        }
    }
    fn from_value(v: i64) -> Option<Self> {
        [Priority::Low, Priority::High, Priority::Huge]
            .into_iter()
            .find(|p| p.to_value() == v)
    }
}

/// `class Mode(StrEnum): FAST = "fast"; SLOW = "slow"; UNICODE = "ünïcødé"`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Mode {
    Fast,
    Slow,
    Unicode,
}

impl PyEnum for Mode {
    const MODULE: &'static str = "pytypes";
    const CLASS: &'static str = "Mode";
    type Value = String;
    fn to_value(&self) -> String {
        match self {
            Mode::Fast => "fast",
            Mode::Slow => "slow",
            Mode::Unicode => "ünïcødé",
        }
        .to_owned()
    }
    fn from_value(v: String) -> Option<Self> {
        [Mode::Fast, Mode::Slow, Mode::Unicode]
            .into_iter()
            .find(|m| m.to_value() == v)
    }
}

macro_rules! pyclass {
    ($ty:ident, $name:literal) => {
        impl PyClass for $ty {
            const MODULE: &'static str = "pytypes";
            const NAME: &'static str = $name;
        }
    };
}

/// `Point = namedtuple("Point", ["x", "y"])`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Point<T = i64> {
    pub x: T,
    pub y: T,
}
impl<T> PyClass for Point<T> {
    const MODULE: &'static str = "pytypes";
    const NAME: &'static str = "Point";
}

/// `class Span(NamedTuple): start: int; end: int; label: str = "span"`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Span {
    pub start: i64,
    pub end: i64,
    pub label: String,
}
pyclass!(Span, "Span");

/// `@dataclass class Simple: a: int; b: str = "b"; c: Optional[float] = None`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Simple {
    pub a: i64,
    pub b: String,
    pub c: Option<f64>,
}
pyclass!(Simple, "Simple");

/// `@dataclass(frozen=True) class Frozen: key: str; values: tuple`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Frozen {
    pub key: String,
    pub values: (i64, i64),
}
pyclass!(Frozen, "Frozen");

/// `@dataclass class Empty: pass`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Empty {}
pyclass!(Empty, "Empty");

/// `class ModelV2(pydantic.BaseModel)`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ModelV2 {
    pub name: String,
    pub count: i64,
    pub ratio: f64,
    pub tags: Vec<String>,
    pub meta: OrderedMap<String, Vec<i64>>,
    pub maybe: Option<i64>,
}
pyclass!(ModelV2, "ModelV2");

impl ModelV2 {
    pub fn defaults(name: &str) -> Self {
        ModelV2 {
            name: name.into(),
            count: 0,
            ratio: 0.5,
            tags: vec![],
            meta: OrderedMap(vec![]),
            maybe: None,
        }
    }
}

/// `class OuterV2(pydantic.BaseModel): id: str; child: ModelV2; children: list[ModelV2]`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct OuterV2 {
    pub id: String,
    pub child: ModelV2,
    pub children: Vec<ModelV2>,
}
pyclass!(OuterV2, "OuterV2");

/// `class ModelV1(pydantic.v1.BaseModel)`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ModelV1 {
    pub name: String,
    pub count: i64,
    pub tags: Vec<String>,
    pub maybe: Option<i64>,
}
pyclass!(ModelV1, "ModelV1");
