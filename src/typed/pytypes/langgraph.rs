//! LangGraph's own types: `Send`, `Interrupt`, `Command`, `TimeoutPolicy` and the
//! delta-channel snapshot.

use std::fmt;
use std::marker::PhantomData;

use serde::de::{self, Deserialize, DeserializeOwned, Deserializer, SeqAccess, Visitor};
use serde::ser::{Serialize, SerializeTuple, Serializer};

use crate::typed::object::{read_ext, read_simple, write_ext, write_object, Payload};
use crate::value::{ObjectKind, Value};

const MODULE: &str = "langgraph.types";

/// `langgraph.types.TimeoutPolicy` (a dataclass):
/// `ext 2 ("langgraph.types", "TimeoutPolicy", {run_timeout, idle_timeout, refresh_on})`.
#[derive(Clone, Debug, PartialEq)]
pub struct TimeoutPolicy {
    /// Seconds a run may take.
    pub run_timeout: Option<f64>,
    /// Seconds without progress.
    pub idle_timeout: Option<f64>,
    /// `"auto"` (the default) or `"heartbeat"`.
    pub refresh_on: String,
}

fn auto() -> String {
    "auto".to_owned()
}

impl Default for TimeoutPolicy {
    fn default() -> Self {
        TimeoutPolicy {
            run_timeout: None,
            idle_timeout: None,
            refresh_on: auto(),
        }
    }
}

#[derive(serde::Serialize)]
struct PolicyRef<'a> {
    run_timeout: &'a Option<f64>,
    idle_timeout: &'a Option<f64>,
    refresh_on: &'a str,
}

#[derive(serde::Deserialize)]
struct PolicyOwned {
    #[serde(default)]
    run_timeout: Option<f64>,
    #[serde(default)]
    idle_timeout: Option<f64>,
    #[serde(default = "auto")]
    refresh_on: String,
}

impl Serialize for TimeoutPolicy {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let fields = PolicyRef {
            run_timeout: &self.run_timeout,
            idle_timeout: &self.idle_timeout,
            refresh_on: &self.refresh_on,
        };
        write_object(
            s,
            ObjectKind::ConstructorKwArgs,
            MODULE,
            "TimeoutPolicy",
            &fields,
            None,
        )
    }
}

impl<'de> Deserialize<'de> for TimeoutPolicy {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let (_, f): (_, PolicyOwned) =
            read_simple(d, ObjectKind::ConstructorKwArgs, MODULE, &["TimeoutPolicy"])?;
        Ok(TimeoutPolicy {
            run_timeout: f.run_timeout,
            idle_timeout: f.idle_timeout,
            refresh_on: f.refresh_on,
        })
    }
}

/// `langgraph.types.Send(node, arg, timeout=None)`:
/// `ext 1 ("langgraph.types", "Send", (node, arg))`, or `(node, arg, timeout)` with a
/// timeout policy.
#[derive(Clone, Debug, PartialEq)]
pub struct Send<T = Value> {
    /// The node to send to.
    pub node: String,
    /// The node's input.
    pub arg: T,
    /// The timeout policy, if any.
    pub timeout: Option<TimeoutPolicy>,
}

impl<T> Send<T> {
    /// `Send(node, arg)`.
    pub fn new(node: impl Into<String>, arg: T) -> Self {
        Send {
            node: node.into(),
            arg,
            timeout: None,
        }
    }
}

struct SendArgs<'a, T>(&'a Send<T>);

impl<T: Serialize> Serialize for SendArgs<'_, T> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let send = self.0;
        let mut t = s.serialize_tuple(if send.timeout.is_some() { 3 } else { 2 })?;
        t.serialize_element(&send.node)?;
        t.serialize_element(&send.arg)?;
        if let Some(p) = &send.timeout {
            t.serialize_element(p)?;
        }
        t.end()
    }
}

impl<T: Serialize> Serialize for Send<T> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        write_object(
            s,
            ObjectKind::ConstructorPosArgs,
            MODULE,
            "Send",
            &SendArgs(self),
            None,
        )
    }
}

struct SendTuple<T>(Send<T>);

impl<'de, T: DeserializeOwned> Deserialize<'de> for SendTuple<T> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V<T>(PhantomData<T>);
        impl<'de, T: DeserializeOwned> Visitor<'de> for V<T> {
            type Value = SendTuple<T>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("(node, arg) or (node, arg, timeout)")
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
                let node: String = seq
                    .next_element()?
                    .ok_or_else(|| de::Error::invalid_length(0, &self))?;
                let arg: T = seq
                    .next_element()?
                    .ok_or_else(|| de::Error::invalid_length(1, &self))?;
                let timeout: Option<Option<TimeoutPolicy>> = seq.next_element()?;
                Ok(SendTuple(Send {
                    node,
                    arg,
                    timeout: timeout.flatten(),
                }))
            }
        }
        d.deserialize_seq(V(PhantomData))
    }
}

impl<'de, T: DeserializeOwned> Deserialize<'de> for Send<T> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let (_, SendTuple(send)) =
            read_simple(d, ObjectKind::ConstructorPosArgs, MODULE, &["Send"])?;
        Ok(send)
    }
}

/// `langgraph.types.Interrupt` (a dataclass):
/// `ext 2 ("langgraph.types", "Interrupt", {value, id, response_schema})`.
#[derive(Clone, Debug, PartialEq)]
pub struct Interrupt<T = Value> {
    /// The value shown to the client.
    pub value: T,
    /// The interrupt id (Python's default is `"placeholder-id"`).
    pub id: String,
    /// The response schema, usually nil.
    pub response_schema: Value,
}

impl<T> Interrupt<T> {
    /// `Interrupt(value, id)`.
    pub fn new(value: T, id: impl Into<String>) -> Self {
        Interrupt {
            value,
            id: id.into(),
            response_schema: Value::Nil,
        }
    }
}

#[derive(serde::Serialize)]
struct InterruptRef<'a, T> {
    value: &'a T,
    id: &'a str,
    response_schema: &'a Value,
}

#[derive(serde::Deserialize)]
struct InterruptOwned<T> {
    value: T,
    #[serde(default = "placeholder_id")]
    id: String,
    #[serde(default)]
    response_schema: Value,
}

fn placeholder_id() -> String {
    "placeholder-id".to_owned()
}

impl<T: Serialize> Serialize for Interrupt<T> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let fields = InterruptRef {
            value: &self.value,
            id: &self.id,
            response_schema: &self.response_schema,
        };
        write_object(
            s,
            ObjectKind::ConstructorKwArgs,
            MODULE,
            "Interrupt",
            &fields,
            None,
        )
    }
}

impl<'de, T: DeserializeOwned> Deserialize<'de> for Interrupt<T> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let (_, f): (_, InterruptOwned<T>) =
            read_simple(d, ObjectKind::ConstructorKwArgs, MODULE, &["Interrupt"])?;
        Ok(Interrupt {
            value: f.value,
            id: f.id,
            response_schema: f.response_schema,
        })
    }
}

/// `langgraph.types.Command` (a dataclass):
/// `ext 2 ("langgraph.types", "Command", {graph, update, resume, goto})`.
/// `Command::default()` is Python's `Command()`: `goto` is the empty tuple.
#[derive(Clone, Debug, PartialEq)]
pub struct Command {
    /// `None` for the current graph, `"__parent__"` for the parent.
    pub graph: Option<String>,
    /// The state update (a map, a list of pairs, …), nil when absent.
    pub update: Value,
    /// The resume value, nil when absent.
    pub resume: Value,
    /// A node name, a `Send`, or a list of them; `()` (an empty array) when absent.
    pub goto: Value,
}

fn empty_goto() -> Value {
    Value::Array(Vec::new())
}

impl Default for Command {
    fn default() -> Self {
        Command {
            graph: None,
            update: Value::Nil,
            resume: Value::Nil,
            goto: empty_goto(),
        }
    }
}

impl Command {
    /// `Command(resume=value)`.
    pub fn resume(value: impl Into<Value>) -> Self {
        Command {
            resume: value.into(),
            ..Command::default()
        }
    }

    /// `Command(goto=node)`.
    pub fn goto(node: impl Into<String>) -> Self {
        Command {
            goto: Value::from(node.into()),
            ..Command::default()
        }
    }
}

#[derive(serde::Serialize)]
struct CommandRef<'a> {
    graph: &'a Option<String>,
    update: &'a Value,
    resume: &'a Value,
    goto: &'a Value,
}

#[derive(serde::Deserialize)]
struct CommandOwned {
    #[serde(default)]
    graph: Option<String>,
    #[serde(default)]
    update: Value,
    #[serde(default)]
    resume: Value,
    #[serde(default = "empty_goto")]
    goto: Value,
}

impl Serialize for Command {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let fields = CommandRef {
            graph: &self.graph,
            update: &self.update,
            resume: &self.resume,
            goto: &self.goto,
        };
        write_object(
            s,
            ObjectKind::ConstructorKwArgs,
            MODULE,
            "Command",
            &fields,
            None,
        )
    }
}

impl<'de> Deserialize<'de> for Command {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let (_, f): (_, CommandOwned) =
            read_simple(d, ObjectKind::ConstructorKwArgs, MODULE, &["Command"])?;
        Ok(Command {
            graph: f.graph,
            update: f.update,
            resume: f.resume,
            goto: f.goto,
        })
    }
}

/// LangGraph's `_DeltaSnapshot(value)`, the DeltaChannel snapshot blob: ext 7 whose
/// payload is the msgpack encoding of the value itself.
///
/// The untyped form is [`Value::DeltaSnapshot`]; the two convert into each other:
/// `Value::from(DeltaSnapshot(v))` and `DeltaSnapshot::try_from(value)` for a
/// `DeltaSnapshot<Value>`, [`DeltaSnapshot::to_value`] and [`DeltaSnapshot::from_value`]
/// for any serde type.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct DeltaSnapshot<T>(pub T);

impl From<DeltaSnapshot<Value>> for Value {
    fn from(s: DeltaSnapshot<Value>) -> Self {
        Value::DeltaSnapshot(Box::new(s.0))
    }
}

/// A `Value` that is not [`Value::DeltaSnapshot`]: the value handed back, unchanged.
impl TryFrom<Value> for DeltaSnapshot<Value> {
    type Error = Value;

    fn try_from(mut value: Value) -> Result<Self, Value> {
        match &mut value {
            Value::DeltaSnapshot(inner) => Ok(DeltaSnapshot(std::mem::take(&mut **inner))),
            _ => Err(value),
        }
    }
}

impl<T: Serialize> DeltaSnapshot<T> {
    /// The snapshot as [`Value::DeltaSnapshot`] of the wrapped value's `Value`.
    ///
    /// # Errors
    ///
    /// When the wrapped value cannot be serialized (as [`crate::typed::to_value`]).
    pub fn to_value(&self) -> crate::typed::Result<Value> {
        crate::typed::to_value(self)
    }
}

impl<T: DeserializeOwned> DeltaSnapshot<T> {
    /// Reads a [`Value::DeltaSnapshot`] as the typed form.
    ///
    /// # Errors
    ///
    /// When `value` is not a delta snapshot, or its inner value is not a `T`.
    pub fn from_value(value: &Value) -> crate::typed::Result<Self> {
        crate::typed::from_value(value)
    }
}

impl<T: Serialize> Serialize for DeltaSnapshot<T> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        write_ext(s, 7, &self.0)
    }
}

impl<'de, T: DeserializeOwned> Deserialize<'de> for DeltaSnapshot<T> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        read_ext(
            d,
            Payload {
                code: 7,
                what: "a delta snapshot",
                _t: PhantomData,
            },
        )
        .map(DeltaSnapshot)
    }
}
