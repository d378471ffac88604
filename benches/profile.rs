//! The profiling harness (not a timing bench: criterion's benches are): runs one
//! encode or decode of one payload a given number of times, for instruction counts and
//! profiles (`valgrind --tool=callgrind`, `perf record`) where criterion's timing loop
//! would only add noise, or times the parts of the encrypted round trip.
//!
//! ```sh
//! cargo bench --bench profile -- decode borrowed checkpoint_plain 20
//! cargo bench --bench profile -- encode parts messages300 300   # wall clock of each part
//! cargo bench --bench profile --no-run
//! B=$(ls -t target/release/deps/profile-* | grep -v '\.d$' | head -1)
//! valgrind --tool=callgrind $B encode value checkpoint_plain 20
//! ```
//!
//! Arguments: the side (`decode` or `encode`), what to run on it, the payload
//! (`messages300`, `checkpoint_plain` or `all`, from `vectors/payloads/`) and how many
//! times (the instructions of one run are the difference of two counts).
//! - `decode`: `borrowed` (`ValueRef::decode`), `value`
//!   (`JsonPlusSerializer::loads_typed`), `typed` (`loads_typed_value` into
//!   `AnyMessage`s; messages300 only), `rmpv`.
//! - `encode`: `value` (`dumps_typed` of the decoded `Value`), `typed`
//!   (`dumps_typed_value` of `AnyMessage`s; messages300 only), `grow` (prints the wall
//!   clock of an encode into an empty and into a presized buffer), `parts` (prints the
//!   wall clock of each part of the encrypted round trip: encode, EAX seal, open,
//!   decode, drop, and a whole row; messages300's message list).
//!
//! Without such arguments (a plain `cargo bench`, whose options are criterion's) it runs
//! every operation once on each payload, as a check.

use std::hint::black_box;
use std::time::Instant;

use langgraph_codec::crypto::{AesMode, Cipher, EncryptedSerializer};
use langgraph_codec::msgpack::{self, ValueRef};
use langgraph_codec::typed::pytypes::AnyMessage;
use langgraph_codec::TypedSerializerExt;
use langgraph_codec::{JsonPlusSerializer, Serializer};

const PAYLOADS: [&str; 2] = ["messages300", "checkpoint_plain"];
const DECODERS: [&str; 4] = ["borrowed", "value", "typed", "rmpv"];
const ENCODERS: [&str; 4] = ["value", "typed", "grow", "parts"];

/// The typed layer's view of messages300, as in `benches/codec.rs`.
#[derive(serde::Serialize, serde::Deserialize)]
struct MessagesState {
    messages: Vec<AnyMessage>,
}

fn payload(name: &str) -> Vec<u8> {
    let path = format!(
        "{}/vectors/payloads/{name}.msgpack",
        env!("CARGO_MANIFEST_DIR")
    );
    std::fs::read(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

/// Min and median, in µs, of `v`.
fn stat(name: &str, mut v: Vec<f64>) {
    v.sort_by(|a, b| a.total_cmp(b));
    println!(
        "{name:>16}: min {:7.1} µs  median {:7.1} µs",
        v[0],
        v[v.len() / 2]
    );
}

fn micros(t: Instant) -> f64 {
    t.elapsed().as_secs_f64() * 1e6
}

fn decode(how: &str, name: &str, bytes: &[u8], n: usize) {
    let serde = JsonPlusSerializer::new();
    for _ in 0..n {
        let bytes = black_box(bytes);
        match how {
            "borrowed" => drop(black_box(ValueRef::decode(bytes).expect("decodes"))),
            "value" => drop(black_box(
                serde.loads_typed("msgpack", bytes).expect("decodes"),
            )),
            "typed" => drop(black_box(
                serde
                    .loads_typed_value::<MessagesState>("msgpack", bytes)
                    .unwrap_or_else(|e| panic!("{name} as messages: {e}")),
            )),
            "rmpv" => drop(black_box(
                rmpv::decode::read_value(&mut &bytes[..]).expect("decodes"),
            )),
            other => panic!("unknown decoder {other:?}: one of {DECODERS:?}"),
        }
    }
}

fn encode(how: &str, name: &str, bytes: &[u8], n: usize) {
    let serde = JsonPlusSerializer::new();
    let value = serde.loads_typed("msgpack", bytes).expect("decodes");
    let mut sink = 0usize;
    match how {
        "value" => {
            let row = || serde.dumps_typed(black_box(&value));
            sink += (0..n)
                .map(|_| row().expect("encodes").data.len())
                .sum::<usize>();
        }
        "typed" => {
            let state: MessagesState = serde
                .loads_typed_value("msgpack", bytes)
                .unwrap_or_else(|e| panic!("{name} as messages: {e}"));
            let row = || serde.dumps_typed_value(black_box(&state));
            sink += (0..n)
                .map(|_| row().expect("encodes").data.len())
                .sum::<usize>();
        }
        "grow" => {
            let (mut grown, mut presized) = (vec![], vec![]);
            for _ in 0..n {
                let t = Instant::now();
                let v = msgpack::encode(&value).expect("encodes");
                grown.push(micros(t));
                sink += v.len();
                drop(v);
                let t = Instant::now();
                let mut out = Vec::with_capacity(bytes.len());
                msgpack::encode_into(&value, &mut out).expect("encodes");
                presized.push(micros(t));
                sink += out.len();
            }
            println!("{name}:");
            stat("grow", grown);
            stat("presized", presized);
        }
        "parts" => {
            // The message list, as the encrypted saver bench writes it.
            let messages = value.get("messages").cloned().unwrap_or(value);
            let enc = EncryptedSerializer::from_aes_key(
                b"0123456789abcdef0123456789abcdef",
                AesMode::Eax,
            )
            .expect("a 32-byte key");
            let (mut e, mut s, mut o, mut d, mut dr, mut full) =
                (vec![], vec![], vec![], vec![], vec![], vec![]);
            for _ in 0..n {
                let t = Instant::now();
                let plain = serde.dumps_typed(&messages).expect("encodes");
                e.push(micros(t));
                let t = Instant::now();
                let (_, blob) = enc.cipher().encrypt(&plain.data, b"").expect("seals");
                s.push(micros(t));
                let t = Instant::now();
                let back = enc.cipher().decrypt("aes", &blob, b"").expect("opens");
                o.push(micros(t));
                let t = Instant::now();
                let v = serde.loads_typed("msgpack", &back).expect("decodes");
                d.push(micros(t));
                let t = Instant::now();
                drop(v);
                drop(back);
                dr.push(micros(t));
                let t = Instant::now();
                let row = enc.dumps_typed(&messages).expect("encrypts");
                drop(enc.loads_typed(&row.type_tag, &row.data).expect("decrypts"));
                full.push(micros(t));
                sink += blob.len();
            }
            println!("{name}:");
            stat("encode", e);
            stat("seal", s);
            stat("open", o);
            stat("decode", d);
            stat("drop", dr);
            stat("enc+dec row", full);
        }
        other => panic!("unknown encoder {other:?}: one of {ENCODERS:?}"),
    }
    black_box(sink);
}

/// Runs `how` on `side` for each named payload (`all`: both), `n` times.
fn run(side: &str, how: &str, payloads: &str, n: usize) {
    let mut ran = false;
    for name in PAYLOADS {
        if payloads != "all" && payloads != name {
            continue;
        }
        // `typed` reads messages; checkpoint_plain holds none.
        if how == "typed" && name != "messages300" {
            if payloads == "all" {
                continue;
            }
            panic!("`typed` runs on messages300 only");
        }
        ran = true;
        let bytes = payload(name);
        match side {
            "decode" => decode(how, name, &bytes, n),
            _ => encode(how, name, &bytes, n),
        }
    }
    assert!(
        ran,
        "unknown payload {payloads:?}: one of {PAYLOADS:?} or \"all\""
    );
    println!("{side} {how} {payloads} x{n}: done");
}

fn main() {
    // `cargo bench` appends `--bench` (and hands on criterion's options): skip those.
    let args: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| !a.starts_with("--"))
        .collect();
    match args.as_slice() {
        [side, how, payloads, n] if side == "decode" || side == "encode" => {
            let n = n
                .parse()
                .unwrap_or_else(|_| panic!("{n:?}: the number of runs, a whole number"));
            run(side, how, payloads, n);
        }
        [side, ..] if side == "decode" || side == "encode" => {
            panic!("usage: profile {side} <what> <messages300|checkpoint_plain|all> <n>")
        }
        _ => {
            for how in DECODERS {
                run("decode", how, "all", 1);
            }
            for how in ENCODERS {
                run("encode", how, "all", 1);
            }
        }
    }
}
