//! A fixed number of decodes of one payload, for instruction counts and profiles
//! (`valgrind --tool=callgrind`, `perf record`), where criterion's timing loop would
//! only add noise. Not a timing bench: `cargo bench` runs it once, quickly.
//!
//! ```sh
//! cargo bench --bench decode_count --no-run
//! valgrind --tool=callgrind target/release/deps/decode_count-* borrowed checkpoint_plain 20
//! ```
//!
//! Arguments: the decoder (`borrowed`, `value`, `typed`, `rmpv`), the payload
//! (`messages300` or `checkpoint_plain`, from `vectors/payloads/`) and the number of
//! decodes (the instructions of one decode are the difference of two counts).

use std::hint::black_box;

use langgraph_codec::msgpack::ValueRef;
use langgraph_codec::serializer::TypedSerializerExt;
use langgraph_codec::typed::pytypes::AnyMessage;
use langgraph_codec::{JsonPlusSerializer, Serializer};

/// The typed layer's view of messages300, as in `benches/codec.rs`.
#[derive(serde::Deserialize)]
struct MessagesState {
    #[allow(dead_code)]
    messages: Vec<AnyMessage>,
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    // `cargo bench` passes `--bench`: run each decoder once on each payload, as a check.
    let (what, name, n) = match args.as_slice() {
        [what, name, n] => (what.as_str(), name.as_str(), n.parse().unwrap_or(1)),
        _ => ("all", "all", 1),
    };
    let serde = JsonPlusSerializer::new();
    for payload in ["messages300", "checkpoint_plain"] {
        if name != "all" && name != payload {
            continue;
        }
        let path = format!(
            "{}/vectors/payloads/{payload}.msgpack",
            env!("CARGO_MANIFEST_DIR")
        );
        let bytes = std::fs::read(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
        for _ in 0..n {
            let bytes = black_box(&bytes[..]);
            match what {
                "borrowed" => drop(black_box(ValueRef::decode(bytes).expect("decodes"))),
                "value" => drop(black_box(
                    serde.loads_typed("msgpack", bytes).expect("decodes"),
                )),
                "typed" if payload == "messages300" => drop(black_box(
                    serde
                        .loads_typed_value::<MessagesState>("msgpack", bytes)
                        .expect("decodes"),
                )),
                "rmpv" => drop(black_box(
                    rmpv::decode::read_value(&mut &bytes[..]).expect("decodes"),
                )),
                _ => {
                    drop(black_box(ValueRef::decode(bytes).expect("decodes")));
                    drop(black_box(
                        serde.loads_typed("msgpack", bytes).expect("decodes"),
                    ));
                }
            }
        }
    }
}
