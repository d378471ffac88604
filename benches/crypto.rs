//! Encryption benchmarks on the 1 MiB blob (`vectors/payloads/blob_1mib.bin`), with a
//! plain memory copy and the bare `aes-gcm` crate on the same buffer as references.
//!
//! Run with `cargo bench --bench crypto`.

use std::hint::black_box;
use std::time::Duration;

use aes_gcm::aead::{AeadInOut, KeyInit};
use criterion::{criterion_group, criterion_main, Criterion, Throughput};

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

fn config() -> Criterion {
    Criterion::default()
        .sample_size(20)
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(2))
}

criterion_group! {
    name = benches;
    config = config();
    targets = references
}
criterion_main!(benches);
