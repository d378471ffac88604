//! Shared helpers for the typed tests: the golden vectors Python wrote, and a few test
//! types (Python classes of `vectors/pytypes.py`).
#![allow(dead_code)]

use std::collections::HashMap;
use std::fmt::Debug;
use std::sync::OnceLock;

use base64::Engine;
use langgraph_codec::typed::{self, JsonFallback};
use serde::de::DeserializeOwned;
use serde::Serialize;

pub struct Vector {
    pub tag: String,
    pub data: Vec<u8>,
    pub python: String,
}

pub fn vectors() -> &'static HashMap<String, Vector> {
    static V: OnceLock<HashMap<String, Vector>> = OnceLock::new();
    V.get_or_init(|| {
        let text =
            std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/vectors/unit.jsonl"))
                .expect("vectors/unit.jsonl");
        text.lines()
            .map(|l| {
                let j: serde_json::Value = serde_json::from_str(l).expect("json line");
                let name = j["name"].as_str().expect("name").to_owned();
                let data = base64::engine::general_purpose::STANDARD
                    .decode(j["data"].as_str().expect("data"))
                    .expect("base64");
                (
                    name,
                    Vector {
                        tag: j["type"].as_str().expect("type").to_owned(),
                        data,
                        python: j["python"].as_str().unwrap_or_default().to_owned(),
                    },
                )
            })
            .collect()
    })
}

pub fn vector(name: &str) -> &'static Vector {
    vectors()
        .get(name)
        .unwrap_or_else(|| panic!("no vector named {name}"))
}

/// The typed value writes exactly Python's `(type, bytes)` for vector `name`, and
/// reading Python's bytes gives the value back.
#[track_caller]
pub fn check<T: Serialize + DeserializeOwned + PartialEq + Debug>(name: &str, value: T) {
    let v = vector(name);
    let typed =
        typed::dumps(&value, &JsonFallback).unwrap_or_else(|e| panic!("{name}: dumps: {e}"));
    assert_eq!(typed.type_tag, v.tag, "{name}: type tag");
    assert_eq!(
        typed.data.as_ref(),
        v.data.as_slice(),
        "{name}: bytes differ from Python's ({})",
        v.python
    );
    let back: T = typed::loads(&v.tag, &v.data, &JsonFallback)
        .unwrap_or_else(|e| panic!("{name}: loads: {e}"));
    assert_eq!(back, value, "{name}: read back");
}

/// Reading Python's bytes as `T` and writing them again gives the same bytes.
#[track_caller]
pub fn roundtrip<T: Serialize + DeserializeOwned + Debug>(name: &str) -> T {
    let v = vector(name);
    let value: T = typed::loads(&v.tag, &v.data, &JsonFallback)
        .unwrap_or_else(|e| panic!("{name}: loads: {e}"));
    let typed =
        typed::dumps(&value, &JsonFallback).unwrap_or_else(|e| panic!("{name}: dumps: {e}"));
    assert_eq!(typed.type_tag, v.tag, "{name}: type tag");
    assert_eq!(typed.data.as_ref(), v.data.as_slice(), "{name}: bytes");
    value
}

mod pytypes;
pub use pytypes::*;
