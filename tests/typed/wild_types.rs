//! Python types the typed layer once lacked, against rows Python 4.3.2 wrote
//! (`vectors/wild/typed_gaps.jsonl`, from `vectors/wild/gen_typed_gaps.py`): each reads
//! into its typed value and writes back byte for byte.

use base64::Engine as _;
use langgraph_codec::typed;
use langgraph_codec::typed::pytypes::{
    AiMessageChunk, AnyMessage, ChatMessageChunk, FunctionMessageChunk, HumanMessageChunk, Item,
    SecretBytes, SecretStr, SystemMessageChunk, ToolMessageChunk,
};
use langgraph_codec::TypedSerializerExt;
use langgraph_codec::{JsonPlusSerializer, Value};
use serde::de::DeserializeOwned;
use serde::Serialize;

fn row(label: &str) -> (String, Vec<u8>) {
    let text = include_str!("../../vectors/wild/typed_gaps.jsonl");
    let line = text
        .lines()
        .find(|l| l.contains(&format!("\"label\": \"{label}\"")))
        .unwrap_or_else(|| panic!("no row {label}"));
    let raw: serde_json::Value = serde_json::from_str(line).expect("json");
    let data = base64::engine::general_purpose::STANDARD
        .decode(raw["data"].as_str().expect("data"))
        .expect("base64");
    (raw["type"].as_str().expect("type").to_owned(), data)
}

/// Reads Python's row as `T` and writes it back: the same bytes.
fn round_trip<T: Serialize + DeserializeOwned + std::fmt::Debug>(label: &str) -> T {
    let (tag, data) = row(label);
    assert_eq!(tag, "msgpack", "{label}");
    let v: T = typed::from_slice(&data).unwrap_or_else(|e| panic!("{label}: {e}"));
    assert_eq!(typed::to_vec(&v).expect("writes"), data, "{label}: {v:?}");
    v
}

#[test]
fn message_chunks_read_and_write_back_as_python_writes_them() {
    let ai: AiMessageChunk = round_trip("ai_chunk");
    assert_eq!(ai.chunk_position.as_deref(), Some("last"));
    assert_eq!(ai.tool_call_chunks.len(), 1);
    assert_eq!(
        ai.tool_call_chunks[0].get("index"),
        Some(&Value::from(0i64))
    );
    let _: HumanMessageChunk = round_trip("human_chunk");
    let _: SystemMessageChunk = round_trip("system_chunk");
    let tool: ToolMessageChunk = round_trip("tool_chunk");
    assert_eq!(tool.tool_call_id, "t1");
    let chat: ChatMessageChunk = round_trip("chat_chunk");
    assert_eq!(chat.role, "critic");
    let _: FunctionMessageChunk = round_trip("function_chunk");
    // AnyMessage dispatches to them.
    for (label, class) in [
        ("ai_chunk", "AIMessageChunk"),
        ("human_chunk", "HumanMessageChunk"),
        ("system_chunk", "SystemMessageChunk"),
        ("tool_chunk", "ToolMessageChunk"),
        ("chat_chunk", "ChatMessageChunk"),
        ("function_chunk", "FunctionMessageChunk"),
    ] {
        let any: AnyMessage = round_trip(label);
        let variant = format!("{any:?}");
        assert!(
            variant.starts_with(&format!("{}(", class.replace("AIMessage", "AiMessage"))),
            "{label}: {variant}"
        );
    }
}

#[test]
fn secrets_read_and_write_back_and_stay_out_of_debug() {
    let s: SecretStr = round_trip("secret_str");
    assert_eq!(s.expose_secret(), "hunter2");
    assert!(!format!("{s:?}").contains("hunter2"));
    let b: SecretBytes = round_trip("secret_bytes");
    assert_eq!(&b.expose_secret()[..], b"\x00\x01key");
    assert!(!format!("{b:?}").contains("key"));
}

#[test]
fn store_items_read_and_write_back() {
    let item: Item = round_trip("store_item");
    assert_eq!(item.namespace, ["users", "u1"]);
    assert_eq!(item.key, "k");
    assert_eq!(item.value.get("a"), Some(&Value::from(1i64)));
    assert_eq!(item.updated_at, "2024-01-02T03:04:05+00:00");
}

#[test]
fn scoped_ipv6_addresses_read_and_write_back() {
    use langgraph_codec::typed::pytypes::Ipv6Address;
    let a: Ipv6Address = round_trip("ipv6_scoped");
    assert_eq!(a.scope_id.as_deref(), Some("eth0"));
    assert_eq!(
        a.addr,
        "fe80::1".parse::<std::net::Ipv6Addr>().expect("addr")
    );
}

#[test]
fn scoped_ipv6_interfaces_and_bytearray_rows_read_as_values() {
    // A scoped interface is not typed yet: read through Value, kept byte for byte.
    let serde = JsonPlusSerializer::new();
    for label in ["ipv6_scoped_interface", "bytearray"] {
        let (tag, data) = row(label);
        let v: Value = serde.loads_typed_value(&tag, &data).expect("reads");
        let back = serde.dumps_as(&tag, &v).expect("writes");
        assert_eq!(back.data[..], data[..], "{label}");
    }
}

#[test]
fn a_typed_bytearray_writes_the_bytearray_tag_at_the_top_level() {
    use langgraph_codec::typed::pytypes::ByteArray;
    let (tag, data) = row("bytearray");
    let serde = JsonPlusSerializer::new();
    let b: ByteArray = serde.loads_typed_value(&tag, &data).expect("reads");
    let back = serde.dumps_typed_value(&b).expect("writes");
    assert_eq!(
        (back.type_tag.as_str(), &back.data[..]),
        (tag.as_str(), &data[..])
    );
    // Nested, it is a bin, as Python writes a nested bytearray.
    let nested = typed::to_vec(&vec![b]).expect("writes");
    assert_eq!(nested, b"\x91\xc4\x03\x00\x01\x02");
}
