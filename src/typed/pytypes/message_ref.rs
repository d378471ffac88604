//! [`MessageRef`]: a LangChain message read without copying, a view of its envelope in
//! a borrowed [`ValueRef`].

use crate::msgpack::ValueRef;
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
