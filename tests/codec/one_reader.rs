//! One reader: the same bytes give the same result — the same value, or the same error
//! kind at the same byte offset — through every reader of the crate, under the same
//! `DecodeOptions`:
//! - the owned decoder (`DecodeOptions::decode`),
//! - the borrowed decoder (`DecodeOptions::decode_ref`, then `to_owned_value`),
//! - the typed deserializer reading a `Value` (`DecodeOptions::from_slice`),
//! - the typed deserializer walking the document through serde's `deserialize_any`
//!   (its own container and ext paths, no `Value` involved),
//! - the skipping lookup (`LazyValue::bytes`), for the error.
//!
//! The inputs: the hostile cases of `tests/codec/hostile.rs`, the forms the old readers
//! disagreed on, and every golden vector Python wrote cut short at every length and
//! with single bytes replaced by markers that break it.

use std::path::PathBuf;

use base64::engine::general_purpose::STANDARD as B64;
use base64::Engine as _;
use langgraph_codec::msgpack::{self, DecodeOptions, LazyValue, ValueRef};
use langgraph_codec::typed::{TypedError, TypedErrorKind};
use langgraph_codec::{msgpack::DecodeErrorKind, Value};
use serde::de::{Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};

type Outcome = Result<Option<Value>, (DecodeErrorKind, usize)>;

/// Walks any document through `deserialize_any`, accepting every shape.
struct AnyTree;

impl<'de> Deserialize<'de> for AnyTree {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = AnyTree;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("anything")
            }
            fn visit_bool<E>(self, _: bool) -> Result<AnyTree, E> {
                Ok(AnyTree)
            }
            fn visit_i64<E>(self, _: i64) -> Result<AnyTree, E> {
                Ok(AnyTree)
            }
            fn visit_u64<E>(self, _: u64) -> Result<AnyTree, E> {
                Ok(AnyTree)
            }
            fn visit_f32<E>(self, _: f32) -> Result<AnyTree, E> {
                Ok(AnyTree)
            }
            fn visit_f64<E>(self, _: f64) -> Result<AnyTree, E> {
                Ok(AnyTree)
            }
            fn visit_borrowed_str<E>(self, _: &'de str) -> Result<AnyTree, E> {
                Ok(AnyTree)
            }
            fn visit_borrowed_bytes<E>(self, _: &'de [u8]) -> Result<AnyTree, E> {
                Ok(AnyTree)
            }
            fn visit_unit<E>(self) -> Result<AnyTree, E> {
                Ok(AnyTree)
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<AnyTree, A::Error> {
                while seq.next_element::<AnyTree>()?.is_some() {}
                Ok(AnyTree)
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<AnyTree, A::Error> {
                while map.next_entry::<AnyTree, AnyTree>()?.is_some() {}
                Ok(AnyTree)
            }
        }
        d.deserialize_any(V)
    }
}

fn typed_error(t: TypedError) -> (DecodeErrorKind, usize) {
    match t.kind() {
        TypedErrorKind::Decode(d) => (d.kind().clone(), d.offset()),
        other => panic!("typed read failed without a decode error: {other:?} {t}"),
    }
}

/// The outcome of every reader on `bytes`: `[owned, borrowed, typed Value, typed
/// walk, lazy skip]`. The two walks that build nothing report `Ok(None)`.
fn outcomes(bytes: &[u8], options: &DecodeOptions) -> [Outcome; 5] {
    let owned = options
        .decode(bytes)
        .map(Some)
        .map_err(|e| (e.kind().clone(), e.offset()));
    let borrowed = options
        .decode_ref(bytes)
        .map(|v| Some(v.to_owned_value()))
        .map_err(|e| (e.kind().clone(), e.offset()));
    let typed_value = options
        .from_slice::<Value>(bytes)
        .map(Some)
        .map_err(typed_error);
    let typed_walk = options
        .from_slice::<AnyTree>(bytes)
        .map(|_| None)
        .map_err(typed_error);
    // The lookup skips the item without the trailing-bytes check of a whole document.
    let lazy = options
        .lazy(bytes)
        .bytes()
        .map_err(|e| (e.kind().clone(), e.offset()))
        .and_then(|item| match bytes.len() - item.len() {
            0 => Ok(None),
            count => Err((DecodeErrorKind::TrailingBytes { count }, item.len())),
        });
    [owned, borrowed, typed_value, typed_walk, lazy]
}

/// Asserts that every reader agrees on `bytes`, and returns the shared outcome.
fn agree(bytes: &[u8], options: &DecodeOptions) -> Outcome {
    let [owned, borrowed, typed_value, typed_walk, lazy] = outcomes(bytes, options);
    let show = || format!("{:02x?}", &bytes[..bytes.len().min(64)]);
    assert_eq!(borrowed, owned, "borrowed vs owned on {}", show());
    assert_eq!(typed_value, owned, "typed Value vs owned on {}", show());
    let shape = |o: &Outcome| o.as_ref().map(|_| ()).map_err(Clone::clone);
    assert_eq!(
        shape(&typed_walk),
        shape(&owned),
        "typed walk on {}",
        show()
    );
    assert_eq!(shape(&lazy), shape(&owned), "lazy skip on {}", show());
    owned
}

fn defaults() -> DecodeOptions {
    DecodeOptions::new()
}

fn nested(prefix: &[u8], depth: usize, leaf: &[u8]) -> Vec<u8> {
    let mut v = prefix.repeat(depth);
    v.extend_from_slice(leaf);
    v
}

/// `depth` ext-`code` items around `inner`, each with a `(m, n, inner)` tuple for codes
/// 0–5 and `inner` itself for 6 and 7, headers in their shortest form.
fn nested_ext(code: u8, depth: usize, inner: &[u8]) -> Vec<u8> {
    let mut v = inner.to_vec();
    for _ in 0..depth {
        let payload = if code <= 5 {
            [&b"\x93\xa1m\xa1n"[..], &v].concat()
        } else {
            v.clone()
        };
        let n = payload.len();
        let mut outer = match n {
            1 => vec![0xd4],
            2 => vec![0xd5],
            4 => vec![0xd6],
            8 => vec![0xd7],
            16 => vec![0xd8],
            0..=0xff => vec![0xc7, n as u8],
            0x100..=0xffff => [&[0xc8u8][..], &(n as u16).to_be_bytes()].concat(),
            _ => [&[0xc9u8][..], &(n as u32).to_be_bytes()].concat(),
        };
        outer.push(code);
        outer.extend_from_slice(&payload);
        v = outer;
    }
    v
}

/// The cases of `tests/codec/hostile.rs` and more, one per rule of the reader.
fn hostile_cases() -> Vec<Vec<u8>> {
    let mut cases: Vec<Vec<u8>> = [
        &b""[..],
        b"\xd9\x28ab",
        b"\xce\x00\x01\x00",
        b"\x92\xcd\x01\x00",
        b"\x92\x01",
        b"\xa3a\xffb",
        b"\x91\xc1",
        b"\x01\x02\x03",
        b"\xdd\xff\xff\xff\xff\x01",
        b"\xdf\xff\xff\xff\xff\x01\x01",
        b"\xdb\xff\xff\xff\xffabc",
        b"\xc6\xff\xff\xff\xffabc",
        b"\xc9\xff\xff\xff\xff\x07\x01",
        b"\x83\x01\x01\x01\x01\x01",
        b"\xcd\x00\x05",
        b"\xd9\x01a",
        b"\xdc\x00\x00",
        b"\xd0\x05",
        b"\xc7\x01\x63\x00",
        b"\xcc\x05",
        b"\xcf\x00\x00\x00\x00\x00\x00\x00\x01",
        b"\xd3\xff\xff\xff\xff\xff\xff\xff\xff",
        b"\xc5\x00\x01a",
        b"\xde\x00\x01\x01\x01",
        b"\xda\x00",
        b"\xcb\x3f\xf8",
        b"\x81\xa1k",
        b"\x81\xa1k\xc1",
        // Ext payloads: malformed ones stay raw, depth still counts.
        b"\xd5\x05\x93\x01",
        b"\xc7\x07\x05\xdc\x00\x03\xa1m\xa1n\x01",
        b"\xd4\x07\xc1",
        b"\xd6\x05\x93\xa1m\xa1n",
        b"\xc7\x06\x05\x94\xa1m\xa1n\x01\xc0",
        b"\xd4\x63",
        b"\xc7\x00\x05",
        b"\xc8\x00",
        b"\xd8\x06\x94\xa3<f8\x91\x01\xa1C\xc4\x08\x00\x00\x00\x00\x00\x00",
        b"\x91\xd4\x07\x01\x02",
    ]
    .iter()
    .map(|c| c.to_vec())
    .collect();
    for depth in [1024, 1025] {
        cases.push(nested(b"\x91", depth, b"\x01"));
        cases.push(nested(b"\x81\x01", depth, b"\x01"));
    }
    cases.push(nested(b"\x91", 5000, b""));
    // Ext payloads are documents of their own: each may hold 1,024 levels.
    for code in [5u8, 7] {
        cases.push(nested_ext(code, 3, &nested(b"\x91", 1023, b"\x01")));
        cases.push(nested_ext(code, 1, &nested(b"\x91", 1024, b"\x01")));
    }
    cases
}

#[test]
fn the_old_disagreements_now_agree() {
    // A uint16 holding 5: the typed reader accepted it, the Value decoder refused it.
    let non_canonical = DecodeErrorKind::NonCanonical {
        what: "uint16 holding a smaller integer",
    };
    assert_eq!(agree(b"\xcd\x00\x05", &defaults()), Err((non_canonical, 0)));
    // With non-canonical forms allowed, all read 5.
    let liberal = defaults().allow_non_canonical(true);
    assert_eq!(
        agree(b"\xcd\x00\x05", &liberal),
        Ok(Some(Value::from(5u64)))
    );
    // A truncated uint32 header: `Truncated` in one reader, `LengthExceedsInput` in the
    // other. A fixed-width read past the end is truncation at the first missing byte.
    assert_eq!(
        agree(b"\xce\x00\x01\x00", &defaults()),
        Err((DecodeErrorKind::Truncated, 1))
    );
    // A declared length beyond the input is refused at the item's marker.
    assert_eq!(
        agree(b"\x91\xd9\x28ab", &defaults()),
        Err((
            DecodeErrorKind::LengthExceedsInput {
                declared: 40,
                remaining: 2
            },
            1
        ))
    );
    // Inside an envelope the typed reader counted offsets from the payload's start.
    let bad_inside = b"\x91\xd4\x07\x01\x02";
    assert_eq!(
        agree(bad_inside, &defaults()),
        Err((DecodeErrorKind::TrailingBytes { count: 1 }, 4))
    );
}

#[test]
fn every_reader_gives_the_same_error_on_the_hostile_set() {
    let mut errors = 0;
    for case in hostile_cases() {
        for options in [
            defaults(),
            defaults().allow_non_canonical(true),
            defaults().max_depth(3),
            defaults().max_total_depth(5),
        ] {
            if agree(&case, &options).is_err() {
                errors += 1;
            }
        }
    }
    assert!(errors > 100, "only {errors} refused cases");
}

fn golden_msgpack() -> Vec<(String, Vec<u8>)> {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("vectors");
    let mut out = Vec::new();
    for file in [
        "unit.jsonl",
        "graph_rows.jsonl",
        "wild/rows.jsonl",
        "wild/deep.jsonl",
    ] {
        let Ok(text) = std::fs::read_to_string(root.join(file)) else {
            continue;
        };
        for (i, line) in text.lines().filter(|l| !l.trim().is_empty()).enumerate() {
            let v: serde_json::Value = serde_json::from_str(line).expect("vector line is JSON");
            if v["type"].as_str() != Some("msgpack") {
                continue;
            }
            let data = B64
                .decode(v["data"].as_str().expect("data"))
                .expect("base64");
            let name = v["name"]
                .as_str()
                .or(v["label"].as_str())
                .unwrap_or("?")
                .to_owned();
            out.push((format!("{file}:{i}:{name}"), data));
        }
    }
    for name in ["messages300.msgpack", "checkpoint_plain.msgpack"] {
        if let Ok(data) = std::fs::read(root.join("payloads").join(name)) {
            out.push((name.to_owned(), data));
        }
    }
    out
}

#[test]
fn every_reader_agrees_on_every_golden_vector_cut_short_or_corrupted() {
    let vectors = golden_msgpack();
    assert!(
        vectors.len() > 150,
        "only {} msgpack vectors",
        vectors.len()
    );
    let options = defaults();
    let mut whole_ok = 0;
    for (name, data) in &vectors {
        // A few vectors are malformed on purpose (trailing bytes Python ignores).
        if agree(data, &options).is_ok() {
            whole_ok += 1;
        } else {
            continue;
        }
        if data.len() > 1024 {
            // Large rows: a few cuts only (each run re-reads the whole row).
            for cut in [1, data.len() / 3, data.len() / 2, data.len() - 1] {
                assert!(
                    agree(&data[..cut], &options).is_err(),
                    "{name} cut at {cut}"
                );
            }
            continue;
        }
        for cut in (0..data.len()).step_by(1 + data.len() / 256) {
            assert!(
                agree(&data[..cut], &options).is_err(),
                "{name} cut at {cut}"
            );
        }
        for at in (0..data.len()).step_by(1 + data.len() / 64) {
            for byte in [0xc1u8, 0xdf, 0xd9, 0xc7] {
                let mut bad = data.clone();
                bad[at] = byte;
                let _ = agree(&bad, &options);
            }
        }
    }
    assert!(whole_ok > 150, "only {whole_ok} vectors decode");
}

/// Every string and byte string of a `ValueRef` lies inside `input`.
fn borrows_only_from(v: &ValueRef<'_>, input: &[u8]) -> bool {
    let inside = |p: &[u8]| {
        let range = input.as_ptr_range();
        p.is_empty() || (range.start <= p.as_ptr() && p.as_ptr_range().end <= range.end)
    };
    match v {
        ValueRef::Str(s) => inside(s.as_bytes()),
        ValueRef::Bin(b) => inside(b),
        ValueRef::Ext(e) => inside(e.data),
        ValueRef::Array(items) => items.iter().all(|i| borrows_only_from(i, input)),
        ValueRef::Map(entries) => entries
            .iter()
            .all(|(k, v)| borrows_only_from(k, input) && borrows_only_from(v, input)),
        ValueRef::Object(o) => {
            inside(o.module.as_bytes())
                && inside(o.name.as_bytes())
                && o.method.is_none_or(|m| inside(m.as_bytes()))
                && borrows_only_from(&o.arg, input)
        }
        ValueRef::NdArray(a) => {
            inside(a.dtype.as_bytes()) && inside(a.order.as_bytes()) && inside(a.buffer)
        }
        ValueRef::DeltaSnapshot(inner) => borrows_only_from(inner, input),
        _ => true,
    }
}

#[test]
fn borrowed_values_own_into_the_decoders_value_and_copy_nothing() {
    let mut objects = 0;
    for (name, data) in golden_msgpack() {
        let Ok(owned) = msgpack::decode(&data) else {
            continue; // malformed on purpose; the error agreement is tested above
        };
        let borrowed = ValueRef::decode(&data).expect("decodes borrowed too");
        assert_eq!(borrowed.to_owned_value(), owned, "{name}");
        assert_eq!(Value::from(&borrowed), owned, "{name}");
        assert!(borrows_only_from(&borrowed, &data), "{name} copied");
        assert_eq!(borrowed.clone(), borrowed);
        objects += usize::from(matches!(owned, Value::Object(_)));
    }
    assert!(objects > 20, "only {objects} top-level envelopes");
}

#[test]
fn lazy_lookups_reach_the_same_parts_as_a_full_decode() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("vectors/payloads");
    let Ok(messages) = std::fs::read(root.join("messages300.msgpack")) else {
        return; // payloads are not in the published package
    };
    let full = msgpack::decode(&messages).expect("decodes");
    let list = full
        .get("messages")
        .and_then(Value::as_array)
        .expect("a list");
    let doc = LazyValue::new(&messages);
    let lazy_list = doc.get("messages").expect("reads").expect("has messages");
    assert_eq!(lazy_list.len().expect("reads"), Some(list.len()));
    for i in [0, 1, 150, list.len() - 1] {
        let item = lazy_list.index(i).expect("reads").expect("in range");
        assert_eq!(item.decode().expect("decodes").to_owned_value(), list[i]);
    }
    let last = lazy_list.last().expect("reads").expect("not empty");
    assert_eq!(
        last.decode().expect("decodes").to_owned_value(),
        list[list.len() - 1]
    );
    assert!(lazy_list.index(list.len()).expect("reads").is_none());
    assert!(doc.get("nope").expect("reads").is_none());
    assert!(lazy_list.get("messages").expect("reads").is_none());

    let checkpoint = std::fs::read(root.join("checkpoint_plain.msgpack")).expect("payload");
    let full = msgpack::decode(&checkpoint).expect("decodes");
    let records = LazyValue::new(&checkpoint)
        .path(&["channel_values", "records"])
        .expect("reads")
        .expect("the channel exists");
    assert_eq!(
        Some(&records.decode().expect("decodes").to_owned_value()),
        full.get("channel_values").and_then(|c| c.get("records"))
    );
}

#[test]
fn lazy_lookups_report_errors_on_the_way_at_the_decoders_offsets() {
    // {"a": "\xff", "b": 1}: the lookup of "b" skips "a"'s value, which is not UTF-8.
    let bytes = b"\x82\xa1a\xa1\xff\xa1b\x01";
    let e = LazyValue::new(bytes).get("b").expect_err("skipping checks");
    let d = msgpack::decode(bytes).expect_err("decoding checks");
    assert_eq!((e.kind(), e.offset()), (d.kind(), d.offset()));
    assert_eq!(e.offset(), 4);
    // The lookup of "a" stops before the bad byte, and decoding that item finds it.
    let a = LazyValue::new(bytes)
        .get("a")
        .expect("reads")
        .expect("found");
    assert_eq!(a.decode().expect_err("bad UTF-8").offset(), 4);
    // Depth limits count from the document's top, as a full decode counts them.
    let deep = nested(b"\x81\xa1k", 1024, b"\x91\x01");
    let mut item = LazyValue::new(&deep);
    for _ in 0..1024 {
        item = item.get("k").expect("reads").expect("found");
    }
    let e = item.decode().expect_err("level 1025");
    assert!(matches!(
        e.kind(),
        DecodeErrorKind::DepthLimit { limit: 1024 }
    ));
    assert_eq!(
        e.offset(),
        msgpack::decode(&deep).expect_err("too deep").offset()
    );
}
