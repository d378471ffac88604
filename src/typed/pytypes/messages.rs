//! LangChain messages (langchain-core 1.x), as the pydantic v2 envelopes Python writes:
//! `ext 5 (module, class, model_dump(), "model_validate_json")`, with the fields in
//! exactly `model_dump()`'s order and defaults.

use std::fmt;

use serde::de::{
    self, Deserialize, DeserializeSeed, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor,
};
use serde::ser::{Serialize, SerializeMap, Serializer};

use crate::typed::object::{read_object, read_simple, write_object, CowStr, ObjectRead};
use crate::value::{ObjectKind, PyObject, PyStr, Value};

const METHOD: &str = "model_validate_json";

/// A message's `content`: a string or a list of content blocks (strings or dicts).
#[derive(Clone, Debug, PartialEq)]
pub enum MessageContent {
    /// Plain text.
    Text(String),
    /// Content blocks, e.g. `{"type": "text", "text": …}`.
    Blocks(Vec<Value>),
}

impl Default for MessageContent {
    fn default() -> Self {
        MessageContent::Text(String::new())
    }
}

impl From<&str> for MessageContent {
    fn from(s: &str) -> Self {
        MessageContent::Text(s.to_owned())
    }
}

impl From<String> for MessageContent {
    fn from(s: String) -> Self {
        MessageContent::Text(s)
    }
}

impl From<Vec<Value>> for MessageContent {
    fn from(blocks: Vec<Value>) -> Self {
        MessageContent::Blocks(blocks)
    }
}

impl MessageContent {
    /// The text, for plain-text content.
    pub fn as_text(&self) -> Option<&str> {
        match self {
            MessageContent::Text(s) => Some(s),
            MessageContent::Blocks(_) => None,
        }
    }
}

impl Serialize for MessageContent {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            MessageContent::Text(t) => s.serialize_str(t),
            MessageContent::Blocks(b) => b.serialize(s),
        }
    }
}

impl<'de> Deserialize<'de> for MessageContent {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = MessageContent;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a string or a list of content blocks")
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<MessageContent, E> {
                Ok(MessageContent::Text(v.to_owned()))
            }
            fn visit_string<E: de::Error>(self, v: String) -> Result<MessageContent, E> {
                Ok(MessageContent::Text(v))
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<MessageContent, A::Error> {
                let mut blocks = Vec::with_capacity(seq.size_hint().unwrap_or(0).min(1024));
                while let Some(b) = seq.next_element::<Value>()? {
                    blocks.push(b);
                }
                Ok(MessageContent::Blocks(blocks))
            }
        }
        d.deserialize_any(V)
    }
}

/// The constant `"tool_call"` in a [`ToolCall`]'s `type`.
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize,
)]
pub enum ToolCallType {
    /// `"tool_call"`.
    #[default]
    #[serde(rename = "tool_call")]
    ToolCall,
}

/// A tool call: `{name, args, id, type: "tool_call"}`.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct ToolCall {
    /// The tool's name.
    pub name: String,
    /// The arguments (a map).
    pub args: Value,
    /// The call id.
    pub id: Option<String>,
    /// Always `"tool_call"`.
    #[serde(rename = "type", default)]
    pub kind: ToolCallType,
}

impl ToolCall {
    /// A tool call with an id.
    pub fn new(name: impl Into<String>, args: Value, id: impl Into<String>) -> Self {
        ToolCall {
            name: name.into(),
            args,
            id: Some(id.into()),
            kind: ToolCallType::ToolCall,
        }
    }
}

/// The constant `"invalid_tool_call"` in an [`InvalidToolCall`]'s `type`.
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize,
)]
pub enum InvalidToolCallType {
    /// `"invalid_tool_call"`.
    #[default]
    #[serde(rename = "invalid_tool_call")]
    InvalidToolCall,
}

/// A tool call that failed to parse: `{type: "invalid_tool_call", id, name, args, error}`.
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct InvalidToolCall {
    /// Always `"invalid_tool_call"`.
    #[serde(rename = "type", default)]
    pub kind: InvalidToolCallType,
    /// The call id.
    #[serde(default)]
    pub id: Option<String>,
    /// The tool name, if parsed.
    #[serde(default)]
    pub name: Option<String>,
    /// The raw argument text.
    #[serde(default)]
    pub args: Option<String>,
    /// The parse error.
    #[serde(default)]
    pub error: Option<String>,
}

/// Token usage: `{input_tokens, output_tokens, total_tokens}` and, when present,
/// `input_token_details` and `output_token_details`.
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct UsageMetadata {
    /// Input tokens.
    pub input_tokens: i64,
    /// Output tokens.
    pub output_tokens: i64,
    /// Total tokens.
    pub total_tokens: i64,
    /// E.g. `{"cache_read": 2}`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub input_token_details: Option<Value>,
    /// E.g. `{"reasoning": 5}`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output_token_details: Option<Value>,
}

fn empty_map() -> Value {
    Value::Map(Vec::new())
}

macro_rules! message {
    (
        $(#[$doc:meta])*
        $ty:ident, $module:literal, $class:literal, $type_:literal,
        { $( $(#[$fdoc:meta])* $field:ident : $fty:ty = $default:expr ),* $(,)? }
    ) => {
        $(#[$doc])*
        #[derive(Clone, Debug, PartialEq)]
        pub struct $ty {
            /// `content`.
            pub content: MessageContent,
            /// `additional_kwargs` (a map).
            pub additional_kwargs: Value,
            /// `response_metadata` (a map).
            pub response_metadata: Value,
            /// `name`.
            pub name: Option<String>,
            /// `id`.
            pub id: Option<String>,
            $( $(#[$fdoc])* pub $field: $fty, )*
            /// Fields beyond the declared ones (pydantic `extra="allow"`), written after
            /// them in this order.
            pub extra: Vec<(String, Value)>,
        }

        impl Default for $ty {
            fn default() -> Self {
                $ty {
                    content: MessageContent::default(),
                    additional_kwargs: empty_map(),
                    response_metadata: empty_map(),
                    name: None,
                    id: None,
                    $( $field: $default, )*
                    extra: Vec::new(),
                }
            }
        }

        impl $ty {
            /// The Python module.
            pub const MODULE: &'static str = $module;
            /// The Python class.
            pub const CLASS: &'static str = $class;
            /// The `type` field's constant value.
            pub const TYPE: &'static str = $type_;

            /// A message with this content and every other field at its default.
            pub fn new(content: impl Into<MessageContent>) -> Self {
                $ty {
                    content: content.into(),
                    ..Self::default()
                }
            }

            /// The same message with an id.
            pub fn with_id(mut self, id: impl Into<String>) -> Self {
                self.id = Some(id.into());
                self
            }

            /// The same message with a fresh id, `str(uuid.uuid4())` as Python's
            /// `add_messages` reducer gives a message without one (the id it has on
            /// a thread Python updated through `update_state` or a node).
            pub fn with_new_id(mut self) -> Self {
                self.id = Some(crate::typed::pytypes::Uuid::new_v4().to_string());
                self
            }

            /// Gives the message a fresh `str(uuid.uuid4())` id if it has none (what
            /// Python's `add_messages` does to every message), and returns its id.
            pub fn ensure_id(&mut self) -> &str {
                self.id
                    .get_or_insert_with(|| crate::typed::pytypes::Uuid::new_v4().to_string())
            }

            /// The same message with a name.
            pub fn with_name(mut self, name: impl Into<String>) -> Self {
                self.name = Some(name.into());
                self
            }
        }

        impl Serialize for $ty {
            fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                write_object(s, ObjectKind::PydanticV2, $module, $class, &Dump(self), Some(METHOD))
            }
        }

        impl Serialize for Dump<'_, $ty> {
            fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                let m = self.0;
                let n = 6 $( + { let _ = stringify!($field); 1 } )* + m.extra.len();
                let mut map = s.serialize_map(Some(n))?;
                map.serialize_entry("content", &m.content)?;
                map.serialize_entry("additional_kwargs", &m.additional_kwargs)?;
                map.serialize_entry("response_metadata", &m.response_metadata)?;
                map.serialize_entry("type", $type_)?;
                map.serialize_entry("name", &m.name)?;
                map.serialize_entry("id", &m.id)?;
                $( map.serialize_entry(stringify!($field), &m.$field)?; )*
                for (k, v) in &m.extra {
                    map.serialize_entry(k, v)?;
                }
                map.end()
            }
        }

        impl Fill for $ty {
            const WHAT: &'static str = concat!("the model_dump() of ", $class);
            fn fill<'de, A: MapAccess<'de>>(&mut self, mut map: A) -> Result<(), A::Error> {
                let m = self;
                // Keys borrowed from the input: only unknown ones are allocated.
                while let Some(CowStr(key)) = map.next_key::<CowStr<'de>>()? {
                    match &*key {
                        "content" => m.content = map.next_value()?,
                        "additional_kwargs" => m.additional_kwargs = map.next_value()?,
                        "response_metadata" => m.response_metadata = map.next_value()?,
                        "type" => {
                            map.next_value::<IgnoredAny>()?;
                        }
                        "name" => m.name = map.next_value()?,
                        "id" => m.id = map.next_value()?,
                        $( stringify!($field) => m.$field = map.next_value()?, )*
                        _ => {
                            let v: Value = map.next_value()?;
                            m.extra.push((key.into_owned(), v));
                        }
                    }
                }
                Ok(())
            }
        }

        impl<'de> Deserialize<'de> for $ty {
            fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                let (_, Body(m)) = read_simple::<D, Body<$ty>>(d, ObjectKind::PydanticV2, $module, &[$class])?;
                Ok(m)
            }
        }

        impl From<$ty> for AnyMessage {
            fn from(m: $ty) -> Self {
                AnyMessage::$ty(m)
            }
        }
    };
}

/// Borrowed model dump.
struct Dump<'a, T>(&'a T);

/// Owned model dump (read side).
struct Body<T>(T);

/// Reads a model dump into an existing message, field by field. Messages are large
/// (hundreds of bytes), and serde hands results back by value through every layer of
/// the envelope; filling in place keeps them from being copied at each one.
trait Fill: Default {
    /// What is expected, for messages.
    const WHAT: &'static str;
    fn fill<'de, A: MapAccess<'de>>(&mut self, map: A) -> Result<(), A::Error>;
}

/// Fills the message it borrows from a model dump.
struct FillSeed<'a, T>(&'a mut T);

impl<'de, T: Fill> DeserializeSeed<'de> for FillSeed<'_, T> {
    type Value = ();
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_map(self)
    }
}

impl<'de, T: Fill> Visitor<'de> for FillSeed<'_, T> {
    type Value = ();
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(T::WHAT)
    }
    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<(), A::Error> {
        self.0.fill(map)
    }
}

impl<'de, T: Fill> Deserialize<'de> for Body<T> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let mut m = T::default();
        FillSeed(&mut m).deserialize(d)?;
        Ok(Body(m))
    }
}

message!(
    /// `langchain_core.messages.human.HumanMessage`.
    HumanMessage, "langchain_core.messages.human", "HumanMessage", "human", {}
);
message!(
    /// `langchain_core.messages.system.SystemMessage`.
    SystemMessage, "langchain_core.messages.system", "SystemMessage", "system", {}
);
message!(
    /// `langchain_core.messages.ai.AIMessage`.
    AiMessage, "langchain_core.messages.ai", "AIMessage", "ai", {
        /// `tool_calls`.
        tool_calls: Vec<ToolCall> = Vec::new(),
        /// `invalid_tool_calls`.
        invalid_tool_calls: Vec<InvalidToolCall> = Vec::new(),
        /// `usage_metadata`.
        usage_metadata: Option<UsageMetadata> = None,
    }
);
message!(
    /// `langchain_core.messages.tool.ToolMessage`.
    ToolMessage, "langchain_core.messages.tool", "ToolMessage", "tool", {
        /// `tool_call_id`.
        tool_call_id: String = String::new(),
        /// `artifact`.
        artifact: Value = Value::Nil,
        /// `status`: `"success"` (the default) or `"error"`.
        status: String = "success".to_owned(),
    }
);
message!(
    /// `langchain_core.messages.modifier.RemoveMessage`: `content` is `""`; `id` says
    /// which message to remove (`"__remove_all__"` for all).
    RemoveMessage, "langchain_core.messages.modifier", "RemoveMessage", "remove", {}
);
message!(
    /// `langchain_core.messages.chat.ChatMessage`.
    ChatMessage, "langchain_core.messages.chat", "ChatMessage", "chat", {
        /// `role`.
        role: String = String::new(),
    }
);
message!(
    /// `langchain_core.messages.function.FunctionMessage`.
    FunctionMessage, "langchain_core.messages.function", "FunctionMessage", "function", {}
);

message!(
    /// `langchain_core.messages.ai.AIMessageChunk`: a streamed part of an `AIMessage`.
    AiMessageChunk, "langchain_core.messages.ai", "AIMessageChunk", "AIMessageChunk", {
        /// `tool_calls`.
        tool_calls: Vec<ToolCall> = Vec::new(),
        /// `invalid_tool_calls`.
        invalid_tool_calls: Vec<InvalidToolCall> = Vec::new(),
        /// `usage_metadata`.
        usage_metadata: Option<UsageMetadata> = None,
        /// `tool_call_chunks`: `{name, args, id, index, type: "tool_call_chunk"}` maps,
        /// kept as they are.
        tool_call_chunks: Vec<Value> = Vec::new(),
        /// `chunk_position`: `None` or `"last"`.
        chunk_position: Option<String> = None,
    }
);
message!(
    /// `langchain_core.messages.human.HumanMessageChunk`.
    HumanMessageChunk, "langchain_core.messages.human", "HumanMessageChunk", "HumanMessageChunk", {}
);
message!(
    /// `langchain_core.messages.system.SystemMessageChunk`.
    SystemMessageChunk, "langchain_core.messages.system", "SystemMessageChunk", "SystemMessageChunk", {}
);
message!(
    /// `langchain_core.messages.tool.ToolMessageChunk`.
    ToolMessageChunk, "langchain_core.messages.tool", "ToolMessageChunk", "ToolMessageChunk", {
        /// `tool_call_id`.
        tool_call_id: String = String::new(),
        /// `artifact`.
        artifact: Value = Value::Nil,
        /// `status`: `"success"` (the default) or `"error"`.
        status: String = "success".to_owned(),
    }
);
message!(
    /// `langchain_core.messages.chat.ChatMessageChunk`.
    ChatMessageChunk, "langchain_core.messages.chat", "ChatMessageChunk", "ChatMessageChunk", {
        /// `role`.
        role: String = String::new(),
    }
);
message!(
    /// `langchain_core.messages.function.FunctionMessageChunk`.
    FunctionMessageChunk, "langchain_core.messages.function", "FunctionMessageChunk", "FunctionMessageChunk", {}
);

impl ToolMessage {
    /// `ToolMessage(content, tool_call_id=…)`.
    pub fn for_call(content: impl Into<MessageContent>, tool_call_id: impl Into<String>) -> Self {
        ToolMessage {
            content: content.into(),
            tool_call_id: tool_call_id.into(),
            ..ToolMessage::default()
        }
    }
}

impl RemoveMessage {
    /// `RemoveMessage(id=…)`.
    pub fn of(id: impl Into<String>) -> Self {
        RemoveMessage::default().with_id(id)
    }
}

/// Any LangChain message, dispatched on the Python class when read.
///
/// Other pydantic v2 classes (your own message types) are kept as
/// [`AnyMessage::Other`] and written back byte for byte; anything that is not a pydantic
/// v2 envelope is an error.
#[derive(Clone, Debug, PartialEq)]
#[allow(clippy::large_enum_variant)]
pub enum AnyMessage {
    /// `HumanMessage`.
    HumanMessage(HumanMessage),
    /// `AIMessage`.
    AiMessage(AiMessage),
    /// `SystemMessage`.
    SystemMessage(SystemMessage),
    /// `ToolMessage`.
    ToolMessage(ToolMessage),
    /// `RemoveMessage`.
    RemoveMessage(RemoveMessage),
    /// `ChatMessage`.
    ChatMessage(ChatMessage),
    /// `FunctionMessage`.
    FunctionMessage(FunctionMessage),
    /// `AIMessageChunk`.
    AiMessageChunk(AiMessageChunk),
    /// `HumanMessageChunk`.
    HumanMessageChunk(HumanMessageChunk),
    /// `SystemMessageChunk`.
    SystemMessageChunk(SystemMessageChunk),
    /// `ToolMessageChunk`.
    ToolMessageChunk(ToolMessageChunk),
    /// `ChatMessageChunk`.
    ChatMessageChunk(ChatMessageChunk),
    /// `FunctionMessageChunk`.
    FunctionMessageChunk(FunctionMessageChunk),
    /// Another pydantic v2 model, as its envelope.
    Other(Box<PyObject>),
}

impl AnyMessage {
    /// The message id, if any (`None` for [`AnyMessage::Other`] without an `id` field).
    pub fn id(&self) -> Option<&str> {
        match self {
            AnyMessage::HumanMessage(m) => m.id.as_deref(),
            AnyMessage::AiMessage(m) => m.id.as_deref(),
            AnyMessage::SystemMessage(m) => m.id.as_deref(),
            AnyMessage::ToolMessage(m) => m.id.as_deref(),
            AnyMessage::RemoveMessage(m) => m.id.as_deref(),
            AnyMessage::ChatMessage(m) => m.id.as_deref(),
            AnyMessage::FunctionMessage(m) => m.id.as_deref(),
            AnyMessage::AiMessageChunk(m) => m.id.as_deref(),
            AnyMessage::HumanMessageChunk(m) => m.id.as_deref(),
            AnyMessage::SystemMessageChunk(m) => m.id.as_deref(),
            AnyMessage::ToolMessageChunk(m) => m.id.as_deref(),
            AnyMessage::ChatMessageChunk(m) => m.id.as_deref(),
            AnyMessage::FunctionMessageChunk(m) => m.id.as_deref(),
            AnyMessage::Other(o) => o.arg.get("id").and_then(Value::as_str),
        }
    }
}

impl Serialize for AnyMessage {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            AnyMessage::HumanMessage(m) => m.serialize(s),
            AnyMessage::AiMessage(m) => m.serialize(s),
            AnyMessage::SystemMessage(m) => m.serialize(s),
            AnyMessage::ToolMessage(m) => m.serialize(s),
            AnyMessage::RemoveMessage(m) => m.serialize(s),
            AnyMessage::ChatMessage(m) => m.serialize(s),
            AnyMessage::FunctionMessage(m) => m.serialize(s),
            AnyMessage::AiMessageChunk(m) => m.serialize(s),
            AnyMessage::HumanMessageChunk(m) => m.serialize(s),
            AnyMessage::SystemMessageChunk(m) => m.serialize(s),
            AnyMessage::ToolMessageChunk(m) => m.serialize(s),
            AnyMessage::ChatMessageChunk(m) => m.serialize(s),
            AnyMessage::FunctionMessageChunk(m) => m.serialize(s),
            AnyMessage::Other(o) => {
                write_object(s, o.kind, &o.module, &o.name, &o.arg, o.method.as_deref())
            }
        }
    }
}

/// Reads any message into the slot it borrows (see [`Fill`]).
struct AnyRead<'a>(&'a mut AnyMessage);

/// Sets `slot` to a default message of the variant, then fills it from the model dump.
macro_rules! fill_variant {
    ($slot:expr, $seq:expr, $variant:ident) => {{
        *$slot = AnyMessage::$variant($variant::default());
        if let AnyMessage::$variant(m) = &mut *$slot {
            $seq.next_element_seed(FillSeed(m))?
                .ok_or_else(|| de::Error::invalid_length(2, &"(module, name, model_dump)"))?;
        }
    }};
}

impl<'a> ObjectRead for AnyRead<'a> {
    type Out = &'a mut AnyMessage;
    fn expected(&self) -> String {
        "a LangChain message (a pydantic v2 model, ext 5)".to_owned()
    }
    fn accepts(&self, code: i8, _module: &str, _name: &str) -> bool {
        code == ObjectKind::PydanticV2.code()
    }
    fn read_arg<'de, A: SeqAccess<'de>>(
        self,
        _code: i8,
        module: &str,
        name: &str,
        seq: &mut A,
    ) -> Result<&'a mut AnyMessage, A::Error> {
        let slot = self.0;
        match (module, name) {
            (HumanMessage::MODULE, HumanMessage::CLASS) => fill_variant!(slot, seq, HumanMessage),
            (AiMessage::MODULE, AiMessage::CLASS) => fill_variant!(slot, seq, AiMessage),
            (SystemMessage::MODULE, SystemMessage::CLASS) => {
                fill_variant!(slot, seq, SystemMessage)
            }
            (ToolMessage::MODULE, ToolMessage::CLASS) => fill_variant!(slot, seq, ToolMessage),
            (RemoveMessage::MODULE, RemoveMessage::CLASS) => {
                fill_variant!(slot, seq, RemoveMessage)
            }
            (ChatMessage::MODULE, ChatMessage::CLASS) => fill_variant!(slot, seq, ChatMessage),
            (FunctionMessage::MODULE, FunctionMessage::CLASS) => {
                fill_variant!(slot, seq, FunctionMessage)
            }
            (AiMessageChunk::MODULE, AiMessageChunk::CLASS) => {
                fill_variant!(slot, seq, AiMessageChunk)
            }
            (HumanMessageChunk::MODULE, HumanMessageChunk::CLASS) => {
                fill_variant!(slot, seq, HumanMessageChunk)
            }
            (SystemMessageChunk::MODULE, SystemMessageChunk::CLASS) => {
                fill_variant!(slot, seq, SystemMessageChunk)
            }
            (ToolMessageChunk::MODULE, ToolMessageChunk::CLASS) => {
                fill_variant!(slot, seq, ToolMessageChunk)
            }
            (ChatMessageChunk::MODULE, ChatMessageChunk::CLASS) => {
                fill_variant!(slot, seq, ChatMessageChunk)
            }
            (FunctionMessageChunk::MODULE, FunctionMessageChunk::CLASS) => {
                fill_variant!(slot, seq, FunctionMessageChunk)
            }
            _ => {
                let arg: Value = seq
                    .next_element()?
                    .ok_or_else(|| de::Error::invalid_length(2, &"(module, name, model_dump)"))?;
                *slot = AnyMessage::Other(Box::new(PyObject::new(
                    ObjectKind::PydanticV2,
                    module,
                    name,
                    arg,
                )));
            }
        }
        Ok(slot)
    }
    fn finish(out: &'a mut AnyMessage, method: Option<&str>) -> &'a mut AnyMessage {
        if let AnyMessage::Other(o) = &mut *out {
            o.method = method.map(PyStr::from);
        }
        out
    }
}

impl<'de> Deserialize<'de> for AnyMessage {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let mut slot = AnyMessage::RemoveMessage(RemoveMessage::default());
        read_object(d, AnyRead(&mut slot))?;
        Ok(slot)
    }
}
