//! What `postgres_crosscheck` and `postgres_js_rows` share: the view of a tuple that
//! `vectors/postgres/cross_language.py` packs, and the byte-for-byte comparison with
//! what Python packed.

use base64::Engine;
use langgraph_codec::saver::{CheckpointConfig, CheckpointTuple, PendingWrite};
use langgraph_codec::{JsonPlusSerializer, Serializer, Value};

pub type Res<T> = Result<T, Box<dyn std::error::Error>>;

fn configurable(c: &CheckpointConfig) -> Value {
    c.to_value()
        .get("configurable")
        .cloned()
        .unwrap_or(Value::Nil)
}

/// The view `cross_language.py` packs: `tuple_view` with `channel_values` sorted.
pub fn view(t: &CheckpointTuple) -> Value {
    let mut cp = t.checkpoint.clone();
    cp.channel_values.sort_keys();
    Value::map([
        ("config", configurable(&t.config)),
        ("checkpoint", cp.to_value()),
        ("metadata", t.metadata.to_value()),
        (
            "parent_config",
            t.parent_config
                .as_ref()
                .map(configurable)
                .unwrap_or(Value::Nil),
        ),
        (
            "pending_writes",
            Value::Array(
                t.pending_writes
                    .iter()
                    .map(PendingWrite::to_value)
                    .collect(),
            ),
        ),
    ])
}

fn packed(v: &Value) -> Res<String> {
    let typed = JsonPlusSerializer::new().dumps_typed(v)?;
    Ok(base64::engine::general_purpose::STANDARD.encode(&typed.data))
}

fn unpack(b64: &str) -> Res<Value> {
    let bytes = base64::engine::general_purpose::STANDARD.decode(b64)?;
    Ok(JsonPlusSerializer::new().loads_typed("msgpack", &bytes)?)
}

/// `Ok` when `rust` packs to exactly the bytes Python packed (`python`, base64).
pub fn check(what: &str, python: &str, rust: &Value) -> Res<()> {
    if packed(rust)? != python {
        return Err(format!(
            "{what} differs\n python: {:?}\n   rust: {rust:?}",
            unpack(python)?
        )
        .into());
    }
    Ok(())
}
