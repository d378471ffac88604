//! Typed reads that borrow: `&str`, `Cow<str>`, `#[serde(borrow)]` and bytes point into
//! the input; `MessageRef` reads every LangChain message Python wrote as the owned
//! `AnyMessage` reads it; typed reads take the msgpack `DecodeOptions`.

use std::borrow::Cow;
use std::path::PathBuf;

use langgraph_codec::msgpack::{DecodeOptions, LazyValue, ValueRef};
use langgraph_codec::typed::pytypes::{
    AnyMessage, BorrowedMessage, ContentRef, MessageContent, MessageRef,
};
use langgraph_codec::typed::{self, TypedErrorKind};
use langgraph_codec::{msgpack::DecodeErrorKind, ObjectKind, PyObject, Value};
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
    let e = &strict;
    assert!(matches!(
        e.kind(),
        TypedErrorKind::Decode(d) if matches!(d.kind(), DecodeErrorKind::NonCanonical { .. }) && d.offset() == 1
    ));
    let liberal = DecodeOptions::new().allow_non_canonical(true);
    let read: Vec<u32> = liberal.from_slice(long_five).expect("allowed");
    assert_eq!(read, [5]);
    // Depth limits: three levels pass a limit of three, four do not.
    let three = b"\x91\x91\x91\x01";
    let shallow = DecodeOptions::new().max_depth(3);
    assert!(shallow.from_slice::<Vec<Vec<Vec<u8>>>>(three).is_ok());
    let four = b"\x91\x91\x91\x91\x01";
    let e = shallow
        .from_slice::<Vec<Vec<Vec<Vec<u8>>>>>(four)
        .expect_err("too deep");
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

#[derive(Deserialize, serde::Serialize)]
struct BorrowedState<'a> {
    #[serde(borrow)]
    messages: Vec<BorrowedMessage<'a>>,
}

#[test]
fn borrowed_messages_read_what_the_owned_messages_read_and_write_pythons_bytes() {
    let path =
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("vectors/payloads/messages300.msgpack");
    let Ok(bytes) = std::fs::read(path) else {
        return; // payloads are not in the published package
    };
    let owned: MessagesState = typed::from_slice(&bytes).expect("typed read");
    let state: BorrowedState<'_> = typed::from_slice(&bytes).expect("borrowed typed read");
    assert_eq!(state.messages.len(), owned.messages.len());
    let mut texts = 0;
    for (message, expected) in state.messages.iter().zip(&owned.messages) {
        let view = message.view();
        assert_eq!(view.id(), expected.id());
        assert_eq!(message.method(), Some("model_validate_json"));
        for part in [view.class(), view.module()]
            .into_iter()
            .chain(view.id())
            .chain(view.content().and_then(|c| c.as_text()))
        {
            assert!(inside(&bytes, part.as_bytes()), "{part:?} was copied");
        }
        texts += usize::from(view.content().and_then(|c| c.as_text()).is_some());
        assert_eq!(&message.to_owned_message().expect("owned"), expected);
    }
    assert!(texts > 0);
    // Written back: the bytes Python wrote.
    assert_eq!(typed::to_vec(&state).expect("writes"), bytes);
}

#[test]
fn a_borrowed_message_refuses_what_is_not_a_message() {
    // ["hi"]: a string where a message should be.
    let Err(e) = typed::from_slice::<BorrowedState<'_>>(b"\x81\xa8messages\x91\xa2hi") else {
        panic!("a string read as a message")
    };
    assert_eq!(e.kind(), &TypedErrorKind::ClassMismatch, "{e}");
    assert!(e.to_string().contains("found str"), "{e}");
    // A pydantic v2 envelope of another class.
    let other = typed::to_vec(&vec![Value::Object(Box::new(PyObject::new(
        ObjectKind::PydanticV2,
        "my.module",
        "Thing",
        Value::Map(vec![]),
    )))])
    .expect("writes");
    let e = typed::from_slice::<Vec<BorrowedMessage<'_>>>(&other).expect_err("another class");
    assert!(e.to_string().contains("my.module.Thing"), "{e}");
}

#[derive(Deserialize)]
struct WithExtra<'a> {
    id: &'a str,
    #[serde(borrow)]
    extra: ValueRef<'a>,
}

#[test]
fn value_ref_fields_borrow_every_string_and_keep_the_document_rules() {
    let extra = Value::Map(vec![
        (Value::from("name"), Value::from("tool")),
        (
            Value::from("when"),
            Value::Object(Box::new(PyObject::new(
                ObjectKind::ConstructorPosArgs,
                "uuid",
                "UUID",
                Value::Array(vec![Value::from("0123")]),
            ))),
        ),
        (Value::from("n"), Value::from(7)),
    ]);
    let bytes = typed::to_vec(&Value::Map(vec![
        (Value::from("id"), Value::from("x1")),
        (Value::from("extra"), extra.clone()),
    ]))
    .expect("writes");
    let row: WithExtra<'_> = typed::from_slice(&bytes).expect("reads");
    assert_eq!(row.id, "x1");
    assert_eq!(row.extra.to_owned_value(), extra);
    let object = row
        .extra
        .get("when")
        .and_then(ValueRef::as_object)
        .expect("ext");
    for part in [
        row.extra
            .get("name")
            .and_then(ValueRef::as_str)
            .expect("str"),
        object.module,
        object.name,
    ] {
        assert!(inside(&bytes, part.as_bytes()), "{part:?} was copied");
    }
    // A non-canonical integer inside the borrowed part: refused at its offset in the
    // document, as every other reader refuses it, unless the options allow it.
    let long = b"\x82\xa2id\xa1x\xa5extra\x91\xcd\x00\x05";
    let Err(e) = typed::from_slice::<WithExtra<'_>>(long) else {
        panic!("a non-canonical integer was read")
    };
    assert!(
        matches!(e.kind(), TypedErrorKind::Decode(d)
            if matches!(d.kind(), DecodeErrorKind::NonCanonical { .. }) && d.offset() == 13),
        "{e:?}"
    );
    let liberal = DecodeOptions::new().allow_non_canonical(true);
    let row: WithExtra<'_> = liberal.from_slice(long).expect("allowed");
    assert_eq!(
        row.extra.to_owned_value(),
        Value::Array(vec![Value::from(5)])
    );
}

#[test]
fn value_ref_reads_borrowed_json_and_refuses_transient_strings() {
    let json = r#"{"a": ["x", 1, 2.5, null, true]}"#;
    let v: ValueRef<'_> = serde_json::from_str(json).expect("borrowed JSON");
    assert_eq!(
        v.to_owned_value(),
        Value::Map(vec![(
            Value::from("a"),
            Value::Array(vec![
                Value::from("x"),
                Value::from(1),
                Value::F64(2.5),
                Value::Nil,
                Value::Bool(true)
            ])
        )])
    );
    // An escaped string is rebuilt by serde_json, so it cannot be lent.
    assert!(serde_json::from_str::<ValueRef<'_>>(r#""a\nb""#).is_err());
}
