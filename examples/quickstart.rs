//! Placeholder quickstart until the saver lands: decodes a golden vector and writes it back.
use langgraph_codec::{view, JsonPlusSerializer, Serializer};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let serde = JsonPlusSerializer::new();
    let bytes = std::fs::read(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/vectors/payloads/messages300.msgpack"
    ))?;
    let value = serde.loads_typed("msgpack", &bytes)?;
    let again = serde.dumps_typed(&value)?;
    println!(
        "decoded {} bytes, re-encoded identically: {}",
        bytes.len(),
        again.data == bytes
    );
    let first = value
        .get("messages")
        .and_then(|m| m.as_array())
        .and_then(|m| m.first());
    if let Some(first) = first {
        println!("first message:\n{}", view::to_string_pretty(first));
    }
    Ok(())
}
