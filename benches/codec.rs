//! msgpack codec benchmarks on the payloads Python wrote (`vectors/payloads/`), with the
//! generic `rmpv` decoder on the same bytes as the reference.
//!
//! Run with `cargo bench --bench codec`; `benches/python_baseline.py` compares the
//! results with the Python package.

use std::hint::black_box;
use std::time::Duration;

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use langgraph_codec::msgpack::ValueRef;
use langgraph_codec::typed;
use langgraph_codec::typed::pytypes::{AnyMessage, BorrowedMessage};
use langgraph_codec::TypedSerializerExt;
use langgraph_codec::{JsonPlusSerializer, Serializer};

fn payload(name: &str) -> Vec<u8> {
    let path = format!("{}/vectors/payloads/{name}", env!("CARGO_MANIFEST_DIR"));
    std::fs::read(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

fn value_benches(c: &mut Criterion, id: &str, bytes: &[u8]) {
    let serde = JsonPlusSerializer::new();
    let value = serde
        .loads_typed("msgpack", bytes)
        .expect("payload decodes");
    assert_eq!(
        &serde.dumps_typed(&value).expect("encodes").data[..],
        bytes,
        "{id}: round trip must be byte-identical"
    );
    let mut loads = c.benchmark_group("loads");
    loads.throughput(Throughput::Bytes(bytes.len() as u64));
    loads.bench_function(id, |b| {
        b.iter(|| serde.loads_typed("msgpack", black_box(bytes)))
    });
    loads.finish();
    let mut dumps = c.benchmark_group("dumps");
    dumps.throughput(Throughput::Bytes(bytes.len() as u64));
    dumps.bench_function(id, |b| b.iter(|| serde.dumps_typed(black_box(&value))));
    dumps.finish();
}

/// rmpv, then rmpv again on every ext payload (codes 0–7), replacing the ext by its
/// decoded payload: the same structural work our decoder does.
fn rmpv_deep(bytes: &[u8]) -> rmpv::Value {
    let mut root = rmpv::decode::read_value(&mut &bytes[..]).expect("rmpv decodes");
    let mut todo = vec![&mut root];
    while let Some(v) = todo.pop() {
        if let rmpv::Value::Ext(code, data) = v {
            if (0..=7).contains(code) {
                if let Ok(inner) = rmpv::decode::read_value(&mut &data[..]) {
                    *v = inner;
                }
            }
        }
        match v {
            rmpv::Value::Array(items) => todo.extend(items.iter_mut()),
            rmpv::Value::Map(entries) => {
                for (k, val) in entries.iter_mut() {
                    todo.push(k);
                    todo.push(val);
                }
            }
            _ => {}
        }
    }
    root
}

/// The typed layer's view of messages300: `{"messages": [AnyMessage; 300]}`.
#[derive(serde::Serialize, serde::Deserialize, Debug, PartialEq)]
struct MessagesState {
    messages: Vec<AnyMessage>,
}

/// messages300 read through serde without copying.
#[derive(serde::Deserialize)]
struct BorrowedState<'a> {
    #[serde(borrow)]
    messages: Vec<BorrowedMessage<'a>>,
}

fn typed_benches(c: &mut Criterion, bytes: &[u8]) {
    let serde = JsonPlusSerializer::new();
    let state: MessagesState = serde
        .loads_typed_value("msgpack", bytes)
        .expect("messages300 reads as typed messages");
    assert_eq!(state.messages.len(), 300);
    let typed = serde.dumps_typed_value(&state).expect("encodes");
    assert_eq!(
        &typed.data[..],
        bytes,
        "typed round trip must be byte-identical"
    );
    let mut loads = c.benchmark_group("loads");
    loads.throughput(Throughput::Bytes(bytes.len() as u64));
    loads.bench_function("messages300_typed", |b| {
        b.iter(|| serde.loads_typed_value::<MessagesState>("msgpack", black_box(bytes)))
    });
    // The same messages through serde, borrowed: every string points into the row.
    let borrowed: BorrowedState<'_> = typed::from_slice(bytes).expect("reads borrowed");
    assert_eq!(borrowed.messages.len(), 300);
    loads.bench_function("messages300_typed_borrowed", |b| {
        b.iter(|| typed::from_slice::<BorrowedState<'_>>(black_box(bytes)))
    });
    loads.finish();
    let mut dumps = c.benchmark_group("dumps");
    dumps.throughput(Throughput::Bytes(bytes.len() as u64));
    dumps.bench_function("messages300_typed", |b| {
        b.iter(|| serde.dumps_typed_value(black_box(&state)))
    });
    dumps.finish();
}

/// The borrowed decode of a whole row: every string and byte string borrowed from the
/// input, ext payloads decoded as the owned decoder decodes them.
fn borrowed_bench(c: &mut Criterion, id: &str, bytes: &[u8]) {
    let serde = JsonPlusSerializer::new();
    let owned = serde
        .loads_typed("msgpack", bytes)
        .expect("payload decodes");
    assert_eq!(
        ValueRef::decode(bytes)
            .expect("decodes borrowed")
            .to_owned_value(),
        owned,
        "{id}: the borrowed decode owns into the same value"
    );
    let mut loads = c.benchmark_group("loads");
    loads.throughput(Throughput::Bytes(bytes.len() as u64));
    loads.bench_function(id, |b| b.iter(|| ValueRef::decode(black_box(bytes))));
    loads.finish();
}

fn codec(c: &mut Criterion) {
    let messages = payload("messages300.msgpack");
    let checkpoint = payload("checkpoint_plain.msgpack");
    value_benches(c, "messages300_value", &messages);
    typed_benches(c, &messages);
    value_benches(c, "checkpoint_plain_value", &checkpoint);
    borrowed_bench(c, "messages300_borrowed", &messages);
    borrowed_bench(c, "checkpoint_plain_borrowed", &checkpoint);

    let mut reference = c.benchmark_group("reference");
    reference.throughput(Throughput::Bytes(messages.len() as u64));
    reference.bench_function("rmpv_decode_messages300", |b| {
        b.iter(|| rmpv::decode::read_value(&mut black_box(&messages[..])))
    });
    // rmpv leaves ext payloads as bytes; this one also decodes every ext payload (as
    // ours does), the like-for-like work.
    reference.bench_function("rmpv_decode_messages300_deep", |b| {
        b.iter(|| rmpv_deep(black_box(&messages)))
    });
    reference.finish();
}

fn config() -> Criterion {
    Criterion::default()
        .sample_size(30)
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(2))
}

criterion_group! {
    name = benches;
    config = config();
    targets = codec
}
criterion_main!(benches);
