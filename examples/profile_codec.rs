//! Profiling harness (not a benchmark: the criterion benches in `benches/` are): runs
//! one codec operation `n` times so that `valgrind --tool=callgrind` can count its
//! instructions, or times the parts of the encrypted round trip.
//!
//! ```sh
//! cargo build --profile bench --example profile_codec
//! valgrind --tool=callgrind target/release/examples/profile_codec dumps_plain 20
//! target/release/examples/profile_codec parts 300   # wall clock of each part
//! ```
//!
//! Ops: `dumps_plain`, `dumps_messages` (Value encode of the payloads), `dumps_typed`
//! (serde from `AnyMessage`s), `grow` (encode into an empty vs a presized buffer),
//! `parts` (encode, EAX seal, open, decode, drop of messages300). Needs
//! `vectors/payloads/` (not in the published crate).
use langgraph_codec::crypto::{AesMode, EncryptedSerializer};
use langgraph_codec::serializer::TypedSerializerExt;
use langgraph_codec::typed::pytypes::AnyMessage;
use langgraph_codec::{msgpack, JsonPlusSerializer, Serializer};

#[derive(serde::Serialize, serde::Deserialize)]
struct MessagesState {
    messages: Vec<AnyMessage>,
}

fn payload(name: &str) -> Vec<u8> {
    let path = format!("{}/vectors/payloads/{name}", env!("CARGO_MANIFEST_DIR"));
    std::fs::read(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let op = args.get(1).map(String::as_str).unwrap_or("dumps_plain");
    let n: usize = args.get(2).and_then(|s| s.parse().ok()).unwrap_or(100);
    let serde = JsonPlusSerializer::new();
    let mut sink = 0usize;
    match op {
        "dumps_plain" | "dumps_messages" => {
            let name = if op == "dumps_plain" {
                "checkpoint_plain.msgpack"
            } else {
                "messages300.msgpack"
            };
            let bytes = payload(name);
            let value = serde.loads_typed("msgpack", &bytes).unwrap();
            for _ in 0..n {
                sink += serde
                    .dumps_typed(std::hint::black_box(&value))
                    .unwrap()
                    .data
                    .len();
            }
        }
        "dumps_typed" => {
            let bytes = payload("messages300.msgpack");
            let state: MessagesState = serde.loads_typed_value("msgpack", &bytes).unwrap();
            for _ in 0..n {
                sink += serde
                    .dumps_typed_value(std::hint::black_box(&state))
                    .unwrap()
                    .data
                    .len();
            }
        }
        "grow" => {
            use std::time::Instant;
            for name in ["checkpoint_plain.msgpack", "messages300.msgpack"] {
                let bytes = payload(name);
                let value = serde.loads_typed("msgpack", &bytes).unwrap();
                let (mut a, mut b) = (vec![], vec![]);
                for _ in 0..n {
                    let t = Instant::now();
                    let v = msgpack::encode(&value).unwrap();
                    a.push(t.elapsed().as_secs_f64() * 1e6);
                    sink += v.len();
                    drop(v);
                    let t = Instant::now();
                    let mut out = Vec::with_capacity(bytes.len());
                    msgpack::encode_into(&value, &mut out).unwrap();
                    b.push(t.elapsed().as_secs_f64() * 1e6);
                    sink += out.len();
                }
                a.sort_by(|x, y| x.total_cmp(y));
                b.sort_by(|x, y| x.total_cmp(y));
                println!(
                    "{name}: grow min {:.1} med {:.1}; presized min {:.1} med {:.1}",
                    a[0],
                    a[n / 2],
                    b[0],
                    b[n / 2]
                );
            }
        }
        "parts" => {
            // Wall-clock parts of the encrypted round trip, min and median of n runs.
            use langgraph_codec::crypto::Cipher;
            use std::time::Instant;
            fn stat(name: &str, mut v: Vec<f64>) {
                v.sort_by(|a, b| a.total_cmp(b));
                println!(
                    "{name:>12}: min {:7.1} µs  median {:7.1} µs",
                    v[0],
                    v[v.len() / 2]
                );
            }
            let bytes = payload("messages300.msgpack");
            let messages = msgpack::decode(&bytes)
                .unwrap()
                .get("messages")
                .cloned()
                .unwrap();
            let enc = EncryptedSerializer::from_aes_key(
                b"0123456789abcdef0123456789abcdef",
                AesMode::Eax,
            )
            .unwrap();
            let (mut e, mut s, mut o, mut d, mut dr, mut full) =
                (vec![], vec![], vec![], vec![], vec![], vec![]);
            for _ in 0..n {
                let t = Instant::now();
                let plain = serde.dumps_typed(&messages).unwrap();
                e.push(t.elapsed().as_secs_f64() * 1e6);
                let t = Instant::now();
                let (_, blob) = enc.cipher().encrypt(&plain.data, b"").unwrap();
                s.push(t.elapsed().as_secs_f64() * 1e6);
                let t = Instant::now();
                let back = enc.cipher().decrypt("aes", &blob, b"").unwrap();
                o.push(t.elapsed().as_secs_f64() * 1e6);
                let t = Instant::now();
                let v = serde.loads_typed("msgpack", &back).unwrap();
                d.push(t.elapsed().as_secs_f64() * 1e6);
                let t = Instant::now();
                drop(v);
                drop(back);
                dr.push(t.elapsed().as_secs_f64() * 1e6);
                let t = Instant::now();
                let row = enc.dumps_typed(&messages).unwrap();
                let v = enc.loads_typed(&row.type_tag, &row.data).unwrap();
                drop(v);
                full.push(t.elapsed().as_secs_f64() * 1e6);
                sink += blob.len();
            }
            stat("encode", e);
            stat("seal", s);
            stat("open", o);
            stat("decode", d);
            stat("drop", dr);
            stat("enc+dec row", full);
        }
        other => panic!("unknown op {other}"),
    }
    println!("{op} x{n}: {sink}");
}
