//! The deepest rows Python 4.3.2 writes, 480
//! nested dataclasses or `Send`s (`vectors/wild/deep.jsonl`, from
//! `vectors/wild/gen_deep.py`) read with both readers, write back byte for byte, and
//! every walk over them works on a 64 KiB thread.

use crate::small_stack::on_small_stack;
use base64::Engine as _;
use langgraph_codec::typed::pytypes::{Dataclass, PyClass, Send};
use langgraph_codec::{msgpack, JsonPlusSerializer, Serializer, Value};
use serde::{Deserialize, Serialize};

fn row(label: &str) -> Vec<u8> {
    let text = include_str!("../../vectors/wild/deep.jsonl");
    let line = text
        .lines()
        .find(|l| l.contains(&format!("\"label\": \"{label}\"")))
        .expect("row");
    let raw: serde_json::Value = serde_json::from_str(line).expect("json");
    base64::engine::general_purpose::STANDARD
        .decode(raw["data"].as_str().expect("data"))
        .expect("base64")
}

/// Python's `N(child)` dataclass in `__main__`, ending in the int 1.
#[derive(Serialize, Deserialize, Debug, PartialEq)]
struct N {
    child: Child,
}
#[derive(Serialize, Deserialize, Debug, PartialEq)]
#[serde(untagged)]
enum Child {
    Leaf(i64),
    Node(Box<Dataclass<N>>),
}
impl PyClass for N {
    const MODULE: &'static str = "__main__";
    const NAME: &'static str = "N";
}

/// `Send("n", …)` 480 times around 1.
#[derive(Serialize, Deserialize, Debug, PartialEq)]
#[serde(untagged)]
enum Chain {
    Leaf(i64),
    Node(Box<Send<Chain>>),
}

#[test]
fn python_deep_rows_read_and_write_back_with_the_value_reader() {
    for label in ["dataclass", "send", "list", "send_of_lists"] {
        let bytes = row(label);
        let v = JsonPlusSerializer::new()
            .loads_typed("msgpack", &bytes)
            .unwrap_or_else(|e| panic!("{label}: {e}"));
        assert_eq!(msgpack::encode(&v).expect("encodes"), bytes, "{label}");
    }
}

#[test]
fn python_deep_rows_read_and_write_back_with_the_typed_reader() {
    let bytes = row("dataclass");
    let typed: Dataclass<N> = langgraph_codec::typed::from_slice(&bytes).expect("typed read");
    let mut depth = 1;
    let mut cur = &typed.0;
    while let Child::Node(next) = &cur.child {
        depth += 1;
        cur = &next.0;
    }
    assert_eq!((depth, &cur.child), (480, &Child::Leaf(1)));
    assert_eq!(
        langgraph_codec::typed::to_vec(&typed).expect("typed write"),
        bytes
    );

    let bytes = row("send");
    let typed: Send<Chain> = langgraph_codec::typed::from_slice(&bytes).expect("typed read");
    assert_eq!(
        langgraph_codec::typed::to_vec(&typed).expect("typed write"),
        bytes
    );
    // A typed Value part reads it too.
    let v: Value = langgraph_codec::typed::from_slice(&bytes).expect("typed Value");
    assert_eq!(msgpack::encode(&v).expect("encodes"), bytes);
}

#[test]
fn python_deep_rows_decode_clone_compare_format_view_and_drop_on_a_small_stack() {
    on_small_stack(|| {
        for label in ["dataclass", "send", "list", "send_of_lists"] {
            let bytes = row(label);
            let v = msgpack::decode(&bytes).expect("decodes");
            let copy = v.clone();
            assert!(copy == v, "{label}");
            assert!(format!("{v:?}").len() > 255, "{label}");
            let text = langgraph_codec::view::to_string(&v).expect("a view");
            let back = langgraph_codec::view::from_str(&text).expect("view reads back");
            assert!(back == v, "{label}");
            assert!(serde_json::to_string(&v).is_ok(), "{label}");
            drop((copy, back, v));
        }
    });
}

/// The same nesting through the typed reader's direct (unbuffered) path.
#[derive(Serialize, Deserialize, Debug, PartialEq)]
struct M {
    child: Option<Box<Dataclass<M>>>,
}
impl PyClass for M {
    const MODULE: &'static str = "__main__";
    const NAME: &'static str = "M";
}

#[test]
fn typed_values_nest_per_envelope_as_python_does() {
    // 480 dataclasses: 3 levels each in all (1,440), 2 per payload.
    let mut m = M { child: None };
    for _ in 0..480 {
        m = M {
            child: Some(Box::new(Dataclass(m))),
        };
    }
    let bytes = langgraph_codec::typed::to_vec(&Dataclass(m)).expect("writes");
    let back: Dataclass<M> = langgraph_codec::typed::from_slice(&bytes).expect("reads");
    assert_eq!(
        langgraph_codec::typed::to_vec(&back).expect("writes"),
        bytes
    );
    // The Value reader agrees.
    let v = msgpack::decode(&bytes).expect("decodes");
    assert_eq!(msgpack::encode(&v).expect("encodes"), bytes);
    std::mem::forget(back);
}
