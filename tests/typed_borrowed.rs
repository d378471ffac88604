//! Typed reads that borrow: `&str`, `Cow<str>`, `#[serde(borrow)]` and bytes point into
//! the input; `MessageRef` reads every LangChain message Python wrote as the owned
//! `AnyMessage` reads it; typed reads take the msgpack `DecodeOptions`.

use std::borrow::Cow;
use std::path::PathBuf;

use langgraph_codec::msgpack::{DecodeOptions, LazyValue, ValueRef};
use langgraph_codec::typed::pytypes::{AnyMessage, ContentRef, MessageContent, MessageRef};
use langgraph_codec::typed::{self, TypedErrorKind};
use langgraph_codec::{DecodeErrorKind, Error};
use serde::Deserialize;

fn inside(input: &[u8], part: &[u8]) -> bool {
    let range = input.as_ptr_range();
    range.start <= part.as_ptr() && part.as_ptr_range().end <= range.end
}

#[derive(Deserialize)]
struct Inner<'a> {
    tag: &'a str,
}

#[derive(Deserialize)]
struct Row<'a> {
    id: &'a str,
    #[serde(borrow)]
    note: Cow<'a, str>,
    #[serde(borrow)]
    inner: Inner<'a>,
    #[serde(with = "serde_bytes_borrowed")]
    blob: &'a [u8],
}

/// `&[u8]` from a msgpack bin, borrowed (what `serde_bytes` does).
mod serde_bytes_borrowed {
    use serde::Deserializer;
    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<&'de [u8], D::Error> {
        <&'de [u8] as serde::Deserialize>::deserialize(d)
    }
}

#[test]
fn typed_reads_borrow_strings_and_bytes_from_the_input() {
    // {"id": "abc", "note": "hi", "inner": {"tag": "t"}, "blob": b"\x00\x01"}
    let bytes = b"\x84\xa2id\xa3abc\xa4note\xa2hi\xa5inner\x81\xa3tag\xa1t\xa4blob\xc4\x02\x00\x01";
    let row: Row<'_> = typed::from_slice(bytes).expect("reads");
    assert_eq!((row.id, &*row.note, row.inner.tag), ("abc", "hi", "t"));
    assert_eq!(row.blob, b"\x00\x01");
    assert!(matches!(row.note, Cow::Borrowed(_)));
    for part in [
        row.id.as_bytes(),
        row.note.as_bytes(),
        row.inner.tag.as_bytes(),
        row.blob,
    ] {
        assert!(inside(bytes, part), "{part:?} was copied");
    }
}

#[test]
fn typed_reads_take_the_decode_options() {
    let long_five = b"\x91\xcd\x00\x05";
    let strict = typed::from_slice::<Vec<u32>>(long_five).expect_err("non-canonical");
    let Error::Typed(e) = &strict else {
        panic!("{strict}")
    };
    assert!(matches!(
        e.kind(),
        TypedErrorKind::Decode(d) if matches!(d.kind(), DecodeErrorKind::NonCanonical { .. }) && d.offset() == 1
    ));
    let liberal = DecodeOptions::new().allow_non_canonical(true);
    let read: Vec<u32> = typed::from_slice_with_options(long_five, &liberal).expect("allowed");
    assert_eq!(read, [5]);
    // Depth limits: three levels pass a limit of three, four do not.
    let three = b"\x91\x91\x91\x01";
    let shallow = DecodeOptions::new().max_depth(3);
    assert!(typed::from_slice_with_options::<Vec<Vec<Vec<u8>>>>(three, &shallow).is_ok());
    let four = b"\x91\x91\x91\x91\x01";
    let e = typed::from_slice_with_options::<Vec<Vec<Vec<Vec<u8>>>>>(four, &shallow)
        .expect_err("too deep");
    let Error::Typed(e) = e else { panic!("{e}") };
    assert!(matches!(
        e.kind(),
        TypedErrorKind::Decode(d) if matches!(d.kind(), DecodeErrorKind::DepthLimit { limit: 3 }) && d.offset() == 3
    ));
}

#[derive(Deserialize)]
struct MessagesState {
    messages: Vec<AnyMessage>,
}

#[test]
fn message_refs_read_what_the_owned_messages_read() {
    let path =
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("vectors/payloads/messages300.msgpack");
    let Ok(bytes) = std::fs::read(path) else {
        return; // payloads are not in the published package
    };
    let owned: MessagesState = typed::from_slice(&bytes).expect("typed read");
    let borrowed = ValueRef::decode(&bytes).expect("borrowed read");
    let list = borrowed
        .get("messages")
        .and_then(ValueRef::as_array)
        .expect("a list");
    assert_eq!(list.len(), owned.messages.len());
    let mut with_tool_calls = 0;
    for (item, message) in list.iter().zip(&owned.messages) {
        let view = MessageRef::new(item).expect("a LangChain message");
        assert_eq!(view.id(), message.id());
        let (class, content, name) = match message {
            AnyMessage::HumanMessage(m) => ("HumanMessage", &m.content, &m.name),
            AnyMessage::AiMessage(m) => {
                let calls = view.tool_calls().map_or(0, <[_]>::len);
                assert_eq!(calls, m.tool_calls.len());
                with_tool_calls += usize::from(calls > 0);
                ("AIMessage", &m.content, &m.name)
            }
            AnyMessage::ToolMessage(m) => {
                assert_eq!(view.tool_call_id(), Some(m.tool_call_id.as_str()));
                ("ToolMessage", &m.content, &m.name)
            }
            AnyMessage::SystemMessage(m) => ("SystemMessage", &m.content, &m.name),
            other => panic!("unexpected message {other:?}"),
        };
        assert_eq!(view.class(), class);
        assert_eq!(view.name(), name.as_deref());
        match (view.content().expect("content"), content) {
            (ContentRef::Text(a), MessageContent::Text(b)) => {
                assert_eq!(a, b);
                assert!(inside(&bytes, a.as_bytes()));
            }
            (ContentRef::Blocks(a), MessageContent::Blocks(b)) => {
                let a: Vec<_> = a.iter().map(ValueRef::to_owned_value).collect();
                assert_eq!(&a, b);
            }
            (a, b) => panic!("{a:?} vs {b:?}"),
        }
    }
    assert!(with_tool_calls > 0);
    // The last message alone, without decoding the others.
    let last = LazyValue::new(&bytes)
        .get("messages")
        .expect("reads")
        .and_then(|m| m.last().transpose())
        .transpose()
        .expect("reads")
        .expect("not empty");
    let last = last.decode().expect("decodes");
    assert_eq!(
        MessageRef::new(&last).and_then(|m| m.id()),
        owned.messages.last().and_then(AnyMessage::id)
    );
    // Not a message: another class, another kind, a plain value.
    assert!(MessageRef::new(&ValueRef::Str("hi")).is_none());
}
