//! Python types with the exact envelopes Python's `JsonPlusSerializer` writes.
//!
//! Each type writes the bytes Python writes for the equivalent Python value (same ext
//! code, same tuple, same strings) and reads what Python writes. A typed read checks
//! the module and class and fails with an error naming the expected and the found
//! class — the Rust side of Python's msgpack allowlist.
//!
//! | Rust | Python | ext |
//! |---|---|---|
//! | [`DateTime`] | `datetime.datetime` | 3 |
//! | [`Date`], [`TimeDelta`], [`TimeZone`] | `datetime.date`, `timedelta`, `timezone` | 1 |
//! | [`Time`] | `datetime.time` | 2 |
//! | [`ZoneInfo`], [`Uuid`], [`Decimal`] | `zoneinfo.ZoneInfo`, `uuid.UUID`, `decimal.Decimal` | 0 |
//! | [`PySet`], [`FrozenSet`], [`Deque`] | `set`, `frozenset`, `collections.deque` | 0 |
//! | [`Ipv4Address`] … [`Ipv6Interface`] | `ipaddress.*` | 0 |
//! | [`PurePath`], [`Pattern`] | `pathlib.PosixPath` …, `re.Pattern` | 1 |
//! | [`PyEnumValue`] / [`py_enum`] | your `enum.Enum` | 0 |
//! | [`Send`], [`Interrupt`], [`Command`], [`TimeoutPolicy`] | `langgraph.types.*` | 1, 2 |
//! | [`DeltaSnapshot`] | `_DeltaSnapshot` | 7 |
//! | [`HumanMessage`] …, [`AnyMessage`] | LangChain messages | 5 |
//! | [`PydanticV2`], [`PydanticV1`], [`Dataclass`], [`NamedTuple`] | your classes | 5, 4, 2, 2 |
//!
//! numpy arrays (ext 6) are read and written through [`Value::NdArray`](crate::Value).

mod collections;
mod datetime;
mod decimal;
mod enums;
mod envelopes;
mod ip;
mod langgraph;
mod message_ref;
mod messages;
mod path;
mod regex;
mod secret;
mod store;
mod uuid;

pub use self::collections::{ByteArray, Deque, FrozenSet, PySet};
pub use self::datetime::{Date, DateTime, Time, TimeDelta, TimeZone, TzInfo, ZoneInfo};
pub use self::decimal::Decimal;
pub use self::enums::{py_enum, PyEnum, PyEnumValue};
pub use self::envelopes::{Dataclass, NamedTuple, PyClass, PydanticV1, PydanticV2};
pub use self::ip::{
    Ipv4Address, Ipv4Interface, Ipv4Network, Ipv6Address, Ipv6Interface, Ipv6Network,
};
pub use self::langgraph::{Command, DeltaSnapshot, Interrupt, Send, TimeoutPolicy};
pub use self::message_ref::{BorrowedMessage, ContentRef, MessageRef};
pub use self::messages::{
    AiMessage, AiMessageChunk, AnyMessage, ChatMessage, ChatMessageChunk, FunctionMessage,
    FunctionMessageChunk, HumanMessage, HumanMessageChunk, InvalidToolCall, MessageContent,
    RemoveMessage, SystemMessage, SystemMessageChunk, ToolCall, ToolMessage, ToolMessageChunk,
    UsageMetadata,
};
pub use self::path::PurePath;
pub use self::regex::Pattern;
pub use self::secret::{SecretBytes, SecretStr};
pub use self::store::Item;
pub use self::uuid::Uuid;

use crate::typed::TypedError;

/// "expected X, found {s:?}".
pub(crate) fn invalid(what: &str, s: &str) -> TypedError {
    TypedError::msg(format!("expected {what}, found {s:?}"))
}
