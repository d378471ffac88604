//! [`MessageRef`]: a LangChain message read without copying, a view of its envelope in
//! a borrowed [`ValueRef`].

use serde::{Deserialize, Serialize};

use crate::msgpack::{PyObjectRef, ValueRef};
use crate::typed::object::write_object;
use crate::value::ObjectKind;

/// The modules LangChain's message classes live in.
const MESSAGE_MODULES: [&str; 6] = [
    "langchain_core.messages.human",
    "langchain_core.messages.ai",
    "langchain_core.messages.system",
    "langchain_core.messages.tool",
    "langchain_core.messages.chat",
    "langchain_core.messages.function",
];
/// `RemoveMessage`'s module.
const MODIFIER_MODULE: &str = "langchain_core.messages.modifier";

/// A message's `content`, borrowed.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum ContentRef<'v, 'a> {
    /// Plain text.
    Text(&'a str),
    /// Content blocks (strings or dicts).
    Blocks(&'v [ValueRef<'a>]),
}

impl<'a> ContentRef<'_, 'a> {
    /// The text, for plain-text content.
    pub fn as_text(&self) -> Option<&'a str> {
        match self {
            ContentRef::Text(s) => Some(s),
            ContentRef::Blocks(_) => None,
        }
    }
}

/// A LangChain message (any class of `langchain_core.messages`, chunks included: the
/// pydantic v2 envelope Python writes), read without copying: every string borrows from
/// the row's bytes through the [`ValueRef`] it views. The owned types are
/// [`AnyMessage`](super::AnyMessage) and its variants.
///
/// ```
/// use langgraph_codec::msgpack::LazyValue;
/// use langgraph_codec::typed::pytypes::{AiMessage, MessageRef};
/// use langgraph_codec::typed;
///
/// let row = typed::to_vec(&vec![AiMessage::new("hello").with_id("a1")])?;
/// // The last message of the list, decoded alone and borrowed.
/// let last = LazyValue::new(&row).last()?.map(|m| m.decode()).transpose()?;
/// let message = last.as_ref().and_then(MessageRef::new);
/// let message = message.ok_or("not a message")?;
/// assert_eq!(message.class(), "AIMessage");
/// assert_eq!(message.kind(), Some("ai"));
/// assert_eq!(message.content().and_then(|c| c.as_text()), Some("hello"));
/// assert_eq!(message.id(), Some("a1"));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct MessageRef<'v, 'a> {
    module: &'a str,
    class: &'a str,
    fields: &'v [(ValueRef<'a>, ValueRef<'a>)],
}

impl<'v, 'a> MessageRef<'v, 'a> {
    /// The message `value` holds, if it is the envelope of a LangChain message class
    /// (ext 5, a `langchain_core.messages` module, a `…Message` or `…MessageChunk`
    /// class, a `model_dump()` map).
    pub fn new(value: &'v ValueRef<'a>) -> Option<Self> {
        let object = value.as_object()?;
        let is_message_module =
            MESSAGE_MODULES.contains(&object.module) || object.module == MODIFIER_MODULE;
        let is_message_class =
            object.name.ends_with("Message") || object.name.ends_with("MessageChunk");
        if object.kind != ObjectKind::PydanticV2 || !is_message_module || !is_message_class {
            return None;
        }
        Some(MessageRef {
            module: object.module,
            class: object.name,
            fields: object.arg.as_map()?,
        })
    }

    /// The Python class, e.g. `"AIMessage"`.
    pub fn class(&self) -> &'a str {
        self.class
    }

    /// The Python module, e.g. `"langchain_core.messages.ai"`.
    pub fn module(&self) -> &'a str {
        self.module
    }

    /// A field of the `model_dump()`, by name.
    pub fn get(&self, field: &str) -> Option<&'v ValueRef<'a>> {
        self.fields
            .iter()
            .find(|(k, _)| k.as_str() == Some(field))
            .map(|(_, v)| v)
    }

    /// Every field of the `model_dump()`, in the order Python wrote them.
    pub fn fields(&self) -> &'v [(ValueRef<'a>, ValueRef<'a>)] {
        self.fields
    }

    /// The `type` field: `"human"`, `"ai"`, `"tool"`, `"AIMessageChunk"`, …
    pub fn kind(&self) -> Option<&'a str> {
        self.get("type")?.as_str()
    }

    /// `content`: text or content blocks.
    pub fn content(&self) -> Option<ContentRef<'v, 'a>> {
        match self.get("content")? {
            ValueRef::Str(s) => Some(ContentRef::Text(s)),
            ValueRef::Array(blocks) => Some(ContentRef::Blocks(blocks)),
            _ => None,
        }
    }

    /// `id`, unless it is `None`.
    pub fn id(&self) -> Option<&'a str> {
        self.get("id")?.as_str()
    }

    /// `name`, unless it is `None`.
    pub fn name(&self) -> Option<&'a str> {
        self.get("name")?.as_str()
    }

    /// `tool_calls` (AI messages), as Python wrote them.
    pub fn tool_calls(&self) -> Option<&'v [ValueRef<'a>]> {
        self.get("tool_calls")?.as_array()
    }

    /// `tool_call_id` (tool messages).
    pub fn tool_call_id(&self) -> Option<&'a str> {
        self.get("tool_call_id")?.as_str()
    }
}

/// A LangChain message read through serde without copying: a field of your own
/// borrowed state type, `#[serde(borrow)] messages: Vec<BorrowedMessage<'a>>`, read with
/// [`typed::from_slice`](crate::typed::from_slice). Every string (the class, `content`,
/// ids, tool calls, the keys of `additional_kwargs`, …) points into the row's bytes;
/// [`view`](Self::view) reads it as a [`MessageRef`], and writing it back gives the bytes
/// Python wrote. [`AnyMessage`](super::AnyMessage) is the owned form
/// ([`to_owned_message`](Self::to_owned_message)).
///
/// Reading anything that is not a LangChain message envelope (see [`MessageRef::new`])
/// is a [`ClassMismatch`](crate::typed::TypedErrorKind::ClassMismatch) error.
///
/// ```
/// use langgraph_codec::typed::{self, pytypes::{AiMessage, BorrowedMessage, HumanMessage}};
///
/// #[derive(serde::Deserialize)]
/// struct State<'a> {
///     #[serde(borrow)]
///     messages: Vec<BorrowedMessage<'a>>,
/// }
///
/// #[derive(serde::Serialize)]
/// struct Owned {
///     messages: (HumanMessage, AiMessage),
/// }
/// let row = typed::to_vec(&Owned {
///     messages: (HumanMessage::new("hi"), AiMessage::new("hello").with_id("a1")),
/// })?;
/// let state: State<'_> = typed::from_slice(&row)?;
/// let last = state.messages[1].view();
/// assert_eq!((last.class(), last.id()), ("AIMessage", Some("a1")));
/// assert_eq!(last.content().and_then(|c| c.as_text()), Some("hello"));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct BorrowedMessage<'a> {
    module: &'a str,
    class: &'a str,
    method: Option<&'a str>,
    fields: Vec<(ValueRef<'a>, ValueRef<'a>)>,
}

impl<'a> BorrowedMessage<'a> {
    /// The message taken out of `value`, if it is the envelope of a LangChain message
    /// class (as [`MessageRef::new`] decides); otherwise `value` back, untouched.
    ///
    /// # Errors
    ///
    /// `value` itself when it is not a LangChain message.
    pub fn from_value(mut value: ValueRef<'a>) -> Result<Self, ValueRef<'a>> {
        let Some(view) = MessageRef::new(&value) else {
            return Err(value);
        };
        let (module, class) = (view.module, view.class);
        let mut message = BorrowedMessage {
            module,
            class,
            method: None,
            fields: Vec::new(),
        };
        if let ValueRef::Object(object) = &mut value {
            message.method = object.method;
            if let ValueRef::Map(fields) = &mut object.arg {
                message.fields = std::mem::take(fields);
            }
        }
        Ok(message)
    }

    /// The message, read as a [`MessageRef`]: class, `content`, `id`, tool calls, …
    pub fn view(&self) -> MessageRef<'_, 'a> {
        MessageRef {
            module: self.module,
            class: self.class,
            fields: &self.fields,
        }
    }

    /// The fourth element of the envelope Python wrote (`"model_validate_json"`).
    pub fn method(&self) -> Option<&'a str> {
        self.method
    }

    /// The envelope as a borrowed value again (what [`ValueRef::decode`] gives for the
    /// message's bytes).
    pub fn to_value_ref(&self) -> ValueRef<'a> {
        ValueRef::Object(Box::new(PyObjectRef {
            kind: ObjectKind::PydanticV2,
            module: self.module,
            name: self.class,
            arg: ValueRef::Map(self.fields.clone()),
            method: self.method,
        }))
    }

    /// The owned, typed message (strings copied out of the input).
    ///
    /// # Errors
    ///
    /// A [`TypedError`](crate::typed::TypedError) if a field does not have the type
    /// LangChain gives it (e.g. `tool_calls` that are not a list of tool calls): the
    /// error [`AnyMessage`](super::AnyMessage) gives for the same bytes.
    pub fn to_owned_message(&self) -> crate::typed::Result<super::AnyMessage> {
        crate::typed::from_value(&self.to_value_ref().to_owned_value())
    }
}

impl Serialize for BorrowedMessage<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        write_object(
            s,
            ObjectKind::PydanticV2,
            self.module,
            self.class,
            &Fields(&self.fields),
            self.method,
        )
    }
}

/// A model dump's fields, written as the map they were read from.
struct Fields<'v, 'a>(&'v [(ValueRef<'a>, ValueRef<'a>)]);

impl Serialize for Fields<'_, '_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let mut map = s.serialize_map(Some(self.0.len()))?;
        for (k, v) in self.0 {
            map.serialize_entry(k, v)?;
        }
        map.end()
    }
}

impl<'de: 'a, 'a> Deserialize<'de> for BorrowedMessage<'a> {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let value = ValueRef::<'de>::deserialize(d)?;
        BorrowedMessage::from_value(value).map_err(|other| {
            crate::typed::error::de_error(
                crate::typed::TypedErrorKind::ClassMismatch,
                format!(
                    "expected a LangChain message (a pydantic v2 model of \
                     langchain_core.messages, ext 5), found {}",
                    describe(&other)
                ),
            )
        })
    }
}

/// What a value that is not a message is, for errors.
fn describe(value: &ValueRef<'_>) -> String {
    match value.as_object() {
        Some(o) => format!("class {}.{} (ext {})", o.module, o.name, o.kind.code()),
        None => value.kind_name().to_owned(),
    }
}
