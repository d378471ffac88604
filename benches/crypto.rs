//! Encryption benchmarks on the 1 MiB blob (`vectors/payloads/blob_1mib.bin`):
//! `EncryptedSerializer` `dumps_typed` / `loads_typed` of it as Python's `bytes`, in EAX
//! and GCM (`encrypt/*`, `decrypt/*`), with a plain memory copy and the bare `aes-gcm` crate on the same buffer as references.
//!
//! `decrypt/forged_1mib_max_keys`: refusing a forged 1 MiB row with the fullest key
//! ring (primary + `MAX_PREVIOUS_KEYS`): every key in both modes, one authentication
//! pass each, nothing decrypted. Compare with `decrypt/eax_1mib` + `decrypt/gcm_1mib`.
//!
//! `roundtrip/eax_small_row`, `roundtrip/gcm_small_row`: `dumps_typed` then `loads_typed`
//! of a small checkpoint-like value (a 104-byte msgpack row), where the per-row cost
//! (key schedules, allocation, wiping) dominates rather than the cipher's throughput.
//!
//! Run with `cargo bench --bench crypto`.

use std::hint::black_box;
use std::time::Duration;

use aes_gcm::aead::{AeadInOut, KeyInit};
use bytes::Bytes;
use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use langgraph_codec::crypto::{AesKey, AesMode, EncryptedSerializer, KeyRing, MAX_PREVIOUS_KEYS};
use langgraph_codec::{Serializer, Value};

/// 32 bytes: AES-256, the key `benches/python_baseline.py` uses.
const KEY: &[u8; 32] = b"0123456789abcdef0123456789abcdef";

fn blob() -> Vec<u8> {
    let path = format!(
        "{}/vectors/payloads/blob_1mib.bin",
        env!("CARGO_MANIFEST_DIR")
    );
    std::fs::read(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

fn references(c: &mut Criterion) {
    let data = blob();
    let mut group = c.benchmark_group("reference");
    group.throughput(Throughput::Bytes(data.len() as u64));
    group.bench_function("memcpy_1mib", |b| {
        let mut dst = vec![0u8; data.len()];
        b.iter(|| dst.copy_from_slice(black_box(&data)))
    });
    // The same layout Python's GCM writes: a 16-byte nonce (GHASHed into J0).
    type Aes256Gcm16 = aes_gcm::AesGcm<aes_gcm::aes::Aes256, aes_gcm::aead::consts::U16>;
    let gcm = Aes256Gcm16::new(KEY.into());
    let nonce = aes_gcm::Nonce::<aes_gcm::aead::consts::U16>::from([7u8; 16]);
    group.bench_function("aes_gcm_crate_1mib", |b| {
        let mut buf = data.clone();
        b.iter(|| {
            buf.copy_from_slice(&data);
            gcm.encrypt_inout_detached(&nonce, b"", buf.as_mut_slice().into())
        })
    });
    group.finish();
}

fn serializers(c: &mut Criterion) {
    let data = blob();
    let value = Value::Bin(Bytes::from(data.clone()));
    for (mode, name) in [(AesMode::Eax, "eax_1mib"), (AesMode::Gcm, "gcm_1mib")] {
        let serde = EncryptedSerializer::from_aes_key(KEY, mode).expect("32-byte key");
        let row = serde.dumps_typed(&value).expect("encrypts");
        assert_eq!(row.type_tag, "bytes+aes");
        assert_eq!(
            serde
                .loads_typed(&row.type_tag, &row.data)
                .expect("decrypts"),
            value
        );
        let mut encrypt = c.benchmark_group("encrypt");
        encrypt.throughput(Throughput::Bytes(data.len() as u64));
        encrypt.bench_function(name, |b| b.iter(|| serde.dumps_typed(black_box(&value))));
        encrypt.finish();
        let mut decrypt = c.benchmark_group("decrypt");
        decrypt.throughput(Throughput::Bytes(data.len() as u64));
        decrypt.bench_function(name, |b| {
            b.iter(|| serde.loads_typed(black_box(&row.type_tag), black_box(&row.data)))
        });
        decrypt.finish();
    }
}

/// The small row of `roundtrip/*` (the same value as `benches/python_baseline.py`).
fn small_row() -> Value {
    Value::map([
        ("role", Value::from("user")),
        (
            "content",
            Value::from("What is the weather like in Paris today?"),
        ),
        ("id", Value::from("msg-0001")),
        ("step", Value::from(3i64)),
        (
            "tags",
            Value::from(vec![Value::from("a"), Value::from("b")]),
        ),
        ("score", Value::from(0.5f64)),
    ])
}

fn small_rows(c: &mut Criterion) {
    let value = small_row();
    let plain = langgraph_codec::JsonPlusSerializer::new()
        .dumps_typed(&value)
        .expect("encodes");
    assert_eq!(plain.data.len(), 104, "the row Python's side measures");
    let mut group = c.benchmark_group("roundtrip");
    for (mode, name) in [
        (AesMode::Eax, "eax_small_row"),
        (AesMode::Gcm, "gcm_small_row"),
    ] {
        let serde = EncryptedSerializer::from_aes_key(KEY, mode).expect("32-byte key");
        let row = serde.dumps_typed(&value).expect("encrypts");
        assert_eq!(row.type_tag, "msgpack+aes");
        assert_eq!(
            serde
                .loads_typed(&row.type_tag, &row.data)
                .expect("decrypts"),
            value
        );
        group.bench_function(name, |b| {
            b.iter(|| {
                let row = serde.dumps_typed(black_box(&value))?;
                serde.loads_typed(&row.type_tag, &row.data)
            })
        });
    }
    group.finish();
}

fn forged(c: &mut Criterion) {
    let data = blob();
    let mut ring = KeyRing::new(AesKey::new(KEY).expect("32-byte key"));
    for i in 0..MAX_PREVIOUS_KEYS {
        let key = format!("previous-key-{i:03}-0123456789abcde");
        ring = ring
            .with_previous(AesKey::new(key.as_bytes()).expect("32 bytes"))
            .expect("within the cap");
    }
    let serde = EncryptedSerializer::new(ring, langgraph_codec::JsonPlusSerializer::new());
    let mut forged = vec![0x5au8; 32];
    forged.extend_from_slice(&data);
    assert!(serde.loads_typed("bytes+aes", &forged).is_err());
    let mut group = c.benchmark_group("decrypt");
    group.throughput(Throughput::Bytes(data.len() as u64));
    group.bench_function("forged_1mib_max_keys", |b| {
        b.iter(|| serde.loads_typed("bytes+aes", black_box(&forged)))
    });
    group.finish();
}

fn config() -> Criterion {
    Criterion::default()
        .sample_size(20)
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(2))
}

criterion_group! {
    name = benches;
    config = config();
    targets = small_rows, serializers, forged, references
}
criterion_main!(benches);
