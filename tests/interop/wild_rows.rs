//! Rows written by older Python `langgraph-checkpoint` releases and by LangGraphJS
//! (`vectors/wild/rows.jsonl`, made by the real packages; see `vectors/wild/README.md`),
//! each recorded with what Python `langgraph-checkpoint==4.3.2` reads from it.
//!
//! For every row: we read it; a msgpack row re-encodes byte for byte; and our value
//! agrees with Python 4.3.2's, compared through the msgpack Python 4.3.2 writes for the
//! value it read. Where Python loses (an envelope it turns into `None`, a row it
//! refuses), we must keep the envelope as written.

use base64::Engine as _;
use langgraph_codec::crypto::{AesMode, EncryptedSerializer};
use langgraph_codec::{msgpack, JsonPlusSerializer, Serializer, Value};

const KEY: &[u8] = b"0123456789abcdef0123456789abcdef";

struct Row {
    writer: String,
    label: String,
    tag: String,
    data: Vec<u8>,
    raw: serde_json::Value,
}

fn rows() -> Vec<Row> {
    let text = include_str!("../../vectors/wild/rows.jsonl");
    text.lines()
        .map(|line| {
            let raw: serde_json::Value = serde_json::from_str(line).expect("row is JSON");
            let s = |k: &str| raw[k].as_str().unwrap_or_default().to_owned();
            Row {
                writer: s("writer"),
                label: s("label"),
                tag: s("type"),
                data: b64(&s("data")),
                raw,
            }
        })
        .collect()
}

fn b64(s: &str) -> Vec<u8> {
    base64::engine::general_purpose::STANDARD
        .decode(s)
        .expect("base64")
}

/// `ours` agrees with Python's value `py`: equal, or a set whose items are the same
/// in another order (Python writes a set in its hash order), or Python has `None`
/// where we kept an `lc` envelope it could not rebuild, or where we rebuilt a json-era
/// datetime as the release that wrote it did.
fn agrees(ours: &Value, py: &Value, path: &str) -> Result<(), String> {
    match (ours, py) {
        (Value::Map(_), Value::Nil) if ours.get("lc").is_some() => Ok(()),
        // A json-era datetime: Python 4.3.2 reads `None`, the release that wrote it read
        // the datetime, and so do we (the value checked against Python's own
        // `datetime.fromisoformat` and msgpack writer in `tests/store/layouts.rs`).
        (Value::Object(o), Value::Nil)
            if o.is("datetime", "datetime") && o.method.as_deref() == Some("fromisoformat") =>
        {
            Ok(())
        }
        // Python 4.3.2 writes each lone surrogate as `?`; we keep it.
        (Value::WStr(w), Value::Str(s)) if w.map_surrogates('?') == s.as_str() => Ok(()),
        // Python could not import the class (a `__main__` enum or dataclass of the
        // writer's script) and returned the envelope's payload; we keep the envelope.
        (Value::Object(o), _) if o.name != "set" && agrees(&o.arg, py, path).is_ok() => Ok(()),
        (Value::Array(a), Value::Array(b)) if a.len() == b.len() => a
            .iter()
            .zip(b)
            .enumerate()
            .try_for_each(|(i, (x, y))| agrees(x, y, &format!("{path}[{i}]"))),
        (Value::Map(a), Value::Map(b)) if a.len() == b.len() => {
            a.iter().zip(b).try_for_each(|((ka, va), (kb, vb))| {
                if ka != kb {
                    return Err(format!("{path}: key {ka:?} != {kb:?}"));
                }
                agrees(va, vb, &format!("{path}.{}", ka.as_str().unwrap_or("?")))
            })
        }
        (Value::Object(a), Value::Object(b))
            if a.kind == b.kind && a.module == b.module && a.name == b.name =>
        {
            if a.module == "builtins" && (a.name == "set" || a.name == "frozenset") {
                let (Some(x), Some(y)) = (a.arg.as_array(), b.arg.as_array()) else {
                    return Err(format!("{path}: set without items"));
                };
                let same = x.len() == y.len() && x.iter().all(|i| y.contains(i));
                return same
                    .then_some(())
                    .ok_or_else(|| format!("{path}: set {x:?} != {y:?}"));
            }
            if let (Value::Map(x), Value::Map(y), 4 | 5) = (&a.arg, &b.arg, a.kind.code()) {
                // Python rebuilds a pydantic model and dumps it in its current field
                // order (an old message's `example` field moves to the end).
                // Fields a newer model adds are written with their `None` default.
                let added = y.iter().filter(|(k, _)| !x.iter().any(|(ok, _)| ok == k));
                if added.clone().all(|(_, v)| v.is_nil()) && x.len() + added.count() == y.len() {
                    for (k, v) in x {
                        let Some((_, pv)) = y.iter().find(|(pk, _)| pk == k) else {
                            return Err(format!("{path}: field {k:?} missing in Python's"));
                        };
                        agrees(v, pv, &format!("{path}.{}", k.as_str().unwrap_or("?")))?;
                    }
                    return Ok(());
                }
            }
            if a.method != b.method {
                return Err(format!("{path}: method {:?} != {:?}", a.method, b.method));
            }
            agrees(&a.arg, &b.arg, &format!("{path}<{}>", a.name))
        }
        _ if ours == py => Ok(()),
        _ => Err(format!("{path}: ours {ours:?} != Python's {py:?}")),
    }
}

#[test]
fn every_vintage_and_js_row_reads_as_python_432_reads_it() {
    let plain = JsonPlusSerializer::new();
    let enc = EncryptedSerializer::from_aes_key(KEY, AesMode::Eax).expect("key");
    let rows = rows();
    assert!(rows.len() >= 150, "{} rows", rows.len());
    let mut failures = Vec::new();
    let mut writers = std::collections::BTreeSet::new();
    for row in &rows {
        writers.insert(row.writer.clone());
        let name = format!("{} / {} ({})", row.writer, row.label, row.tag);
        let ours = if row.tag.ends_with("+aes") {
            enc.loads_typed(&row.tag, &row.data)
        } else {
            plain.loads_typed(&row.tag, &row.data)
        };
        let ours = match ours {
            Ok(v) => v,
            Err(e) => {
                failures.push(format!("{name}: we refuse it: {e}"));
                continue;
            }
        };
        if row.tag == "msgpack" {
            let again = plain.dumps_as("msgpack", &ours).expect("re-encodes");
            if again.data[..] != row.data[..] {
                failures.push(format!("{name}: msgpack does not re-encode byte for byte"));
            }
        }
        if row.raw["py_ok"] == false {
            // Python refuses the row; we keep every envelope as written.
            let kept = plain.loads_typed("json", &row.data).ok();
            if row.tag == "json" && !kept.as_ref().is_some_and(|k| k == &ours) {
                failures.push(format!("{name}: Python refuses it, we must keep it"));
            }
            continue;
        }
        if let Some(redump) = row.raw["py_redump_data"].as_str() {
            let py = match row.raw["py_redump_type"].as_str() {
                Some("msgpack") => msgpack::decode(&b64(redump)).expect("Python's msgpack"),
                Some("null") => Value::Nil,
                Some("bytes" | "bytearray") => Value::Bin(b64(redump).into()),
                other => panic!("{name}: unexpected redump tag {other:?}"),
            };
            if let Err(why) = agrees(&ours, &py, "$") {
                failures.push(format!("{name}: {why}"));
            }
        } else if let Some(py_json) = row.raw["py_json"].as_str() {
            // Python cannot write it as msgpack (integers beyond 64 bits): compare with
            // json.dumps of Python's value, read as a plain json row.
            let py = plain
                .loads_typed("json", py_json.as_bytes())
                .expect("Python's json.dumps output reads");
            if let Err(why) = agrees(&ours, &py, "$") {
                failures.push(format!("{name}: {why}"));
            }
        } else {
            failures.push(format!("{name}: row has no Python reading"));
        }
    }
    assert!(
        failures.is_empty(),
        "{} failures:\n{}",
        failures.len(),
        failures.join("\n")
    );
    // At least one json-era, one msgpack-python-era and one ormsgpack-era Python
    // release, and two LangGraphJS releases.
    assert!(writers.len() >= 5, "{writers:?}");
}

#[test]
fn big_ints_and_lone_surrogates_read_exactly_and_go_back_into_json_rows() {
    let serde = JsonPlusSerializer::new();
    // What Python's json.dumps writes for {"n": 2**70, "m": -2**65, "s": "a\ud800b\udc00"}.
    let row = br#"{"n": 1180591620717411303424, "m": -36893488147419103232, "s": "a\ud800b\udc00", "p": "\ud83d\ude00"}"#;
    let v = serde
        .loads_typed("json", row)
        .expect("Python reads it, so do we");
    match v.get("n") {
        Some(Value::BigInt(n)) => assert_eq!(n.to_string(), "1180591620717411303424"),
        other => panic!("expected a BigInt, got {other:?}"),
    }
    match v.get("m") {
        Some(Value::BigInt(n)) => assert!(n.is_negative() && n.digits() == "36893488147419103232"),
        other => panic!("expected a BigInt, got {other:?}"),
    }
    match v.get("s") {
        Some(Value::WStr(w)) => {
            assert_eq!(
                w.code_points().collect::<Vec<_>>(),
                [0x61, 0xD800, 0x62, 0xDC00]
            )
        }
        other => panic!("expected a WStr, got {other:?}"),
    }
    // A proper pair is one character, a plain string.
    assert_eq!(v.get("p").and_then(Value::as_str), Some("😀"));
    // Keys may hold lone surrogates too (Python: json.loads('{"\\udc00": 1}')).
    let keyed = serde
        .loads_typed("json", br#"{"\udc00": 1}"#)
        .expect("reads");
    let [(Value::WStr(k), one)] = keyed.as_map().expect("a map") else {
        panic!("a WStr key: {keyed:?}");
    };
    assert_eq!(
        (k.code_points().collect::<Vec<_>>(), one),
        (vec![0xDC00], &Value::from(1i64))
    );
    let back = serde.dumps_typed(&keyed).expect("writes");
    assert_eq!(
        (back.type_tag.as_str(), &back.data[..]),
        ("json", &br#"{"\udc00":1}"#[..])
    );
    // msgpack cannot hold them: the row goes back as json, which Python reads as the
    // same values.
    let back = serde.dumps_typed(&v).expect("writes");
    assert_eq!(back.type_tag, "json");
    assert_eq!(
        std::str::from_utf8(&back.data).expect("utf-8"),
        r#"{"n":1180591620717411303424,"m":-36893488147419103232,"s":"a\ud800b\udc00","p":"😀"}"#
    );
    assert_eq!(serde.loads_typed("json", &back.data).expect("reads"), v);
    // The view keeps them too.
    let text = langgraph_codec::view::to_string(&v).expect("a view");
    assert!(
        text.contains(r#"{"$bigint":"1180591620717411303424"}"#),
        "{text}"
    );
    assert!(
        text.contains(r#"{"$wstr":["a",55296,"b",56320]}"#),
        "{text}"
    );
    assert_eq!(
        langgraph_codec::view::from_str(&text).expect("view reads"),
        v
    );
    // msgpack refuses with a typed error.
    assert!(matches!(
        msgpack::encode(&v),
        Err(langgraph_codec::msgpack::EncodeError::NotMsgpack { .. })
    ));
}

#[test]
fn js_and_legacy_messages_read_into_any_message_through_the_typed_layer() {
    use langgraph_codec::typed::pytypes::AnyMessage;
    use langgraph_codec::TypedSerializerExt;
    let serde = JsonPlusSerializer::new();
    let mut read = 0;
    for row in rows() {
        let is_message_row = [
            "human",
            "ai_tool_calls",
            "ai_plain",
            "system",
            "tool",
            "chat",
            "ai_blocks",
        ]
        .contains(&row.label.trim_end_matches("/json"))
            || (row.label == "remove" && row.raw["py_ok"] == true);
        if row.tag != "json" || !is_message_row {
            continue;
        }
        let msg: AnyMessage = serde
            .loads_typed_value(&row.tag, &row.data)
            .unwrap_or_else(|e| panic!("{} / {}: {e}", row.writer, row.label));
        // Written back, it is exactly the msgpack Python 4.3.2 writes for what it read.
        let back = serde.dumps_typed_value(&msg).expect("writes");
        let py = b64(row.raw["py_redump_data"]
            .as_str()
            .expect("Python's msgpack"));
        assert_eq!(
            back.data[..],
            py[..],
            "{} / {}: {msg:?}",
            row.writer,
            row.label
        );
        read += 1;
    }
    // Four Python releases wrote json messages (1.0.0 and 1.0.2 natively, 2.x as their
    // json form), two LangGraphJS releases: 6 labels each, plus list-content AI
    // messages (1.0.2, both JS) and 1.0.2's RemoveMessage.
    assert!(read >= 35, "{read}");
}

/// An `AIMessage` `json` row mixing a valid tool call with one that cannot be parsed
/// is kept whole, every tool call in it: a revival that dropped the bad call and
/// rebuilt the message from the rest would lose data Python keeps.
///
/// Python 4.3.2 (langchain-core 1.7.2), checked with `JsonPlusSerializer().loads_typed`:
/// - bad entry in `tool_calls` (`"args": "{not json"`): `ValidationError`
///   (`tool_calls.1.args: Input should be a valid dictionary`): the row is refused, so
///   we keep the envelope as written;
/// - raw OpenAI calls in `additional_kwargs.tool_calls`, one with bad arguments:
///   Python rebuilds `tool_calls=[{name: "ok", args: {q: 1}, id: "c1"}]` and
///   `invalid_tool_calls=[{name: "bad", args: "{not json", id: "c2", error: None}]`;
///   we do not parse raw calls and keep the envelope as written (nothing dropped).
#[test]
fn an_ai_message_with_valid_and_unparseable_tool_calls_is_kept_whole() {
    let serde = JsonPlusSerializer::new();
    let rows = [
        r#"{"lc":1,"type":"constructor","id":["langchain_core","messages","AIMessage"],"kwargs":{"content":"","id":"a1","tool_calls":[{"name":"ok","args":{"q":1},"id":"c1","type":"tool_call"},{"name":"bad","args":"{not json","id":"c2","type":"tool_call"}]}}"#,
        r#"{"lc":1,"type":"constructor","id":["langchain","schema","messages","AIMessage"],"kwargs":{"content":[{"type":"text","text":"t"}],"type":"ai","id":"a1","tool_calls":[{"name":"ok","args":{"q":1},"id":"c1","type":"tool_call"},{"name":"bad","args":null,"id":"c2","type":"tool_call"}],"invalid_tool_calls":[]}}"#,
        r#"{"lc":1,"type":"constructor","id":["langchain_core","messages","AIMessage"],"kwargs":{"content":"","id":"a1","additional_kwargs":{"tool_calls":[{"id":"c1","type":"function","function":{"name":"ok","arguments":"{\"q\": 1}"}},{"id":"c2","type":"function","function":{"name":"bad","arguments":"{not json"}}]}}}"#,
    ];
    for row in rows {
        let ours = serde.loads_typed("json", row.as_bytes()).expect("reads");
        let as_written = Value::from(serde_json::from_str::<serde_json::Value>(row).expect("json"));
        assert_eq!(ours, as_written, "{row}");
        let text = format!("{ours:?}");
        assert!(
            text.contains("\"ok\"") && text.contains("\"bad\""),
            "a tool call was dropped: {text}"
        );
    }
}

/// The two shapes once read differently from Python, from real writers
/// (rows in `vectors/wild/rows.jsonl`): an `AIMessage` whose content is a list of
/// blocks (LangGraphJS 1.2.2 / 0.0.18, Python 1.0.2) and a 1.0.2 `RemoveMessage`
/// with `content: ""` are rebuilt as Python 4.3.2 rebuilds them.
#[test]
fn list_content_ai_messages_and_empty_remove_messages_are_rebuilt() {
    let serde = JsonPlusSerializer::new();
    let mut seen = 0;
    for row in rows() {
        if !(row.label == "ai_blocks" || (row.label == "remove" && row.raw["py_ok"] == true)) {
            continue;
        }
        let ours = serde.loads_typed(&row.tag, &row.data).expect("reads");
        let obj = ours
            .as_object()
            .unwrap_or_else(|| panic!("{} / {}: kept as {ours:?}", row.writer, row.label));
        let want = if row.label == "remove" {
            "RemoveMessage"
        } else {
            "AIMessage"
        };
        assert_eq!(obj.name, want);
        let py = msgpack::decode(&b64(row.raw["py_redump_data"].as_str().expect("py")))
            .expect("Python's msgpack");
        assert_eq!(ours, py, "{} / {}", row.writer, row.label);
        seen += 1;
    }
    assert_eq!(seen, 4, "3 ai_blocks rows and 1 remove row");
}
