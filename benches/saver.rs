//! The saver round trip: put a checkpoint holding messages300 into an
//! [`InMemorySaver`] that encrypts with AES-EAX, then `get_tuple` it back.
//!
//! Run with `cargo bench --bench saver`.

use std::hint::black_box;
use std::sync::Arc;
use std::time::Duration;

use criterion::{criterion_group, criterion_main, Criterion};
use langgraph_codec::crypto::{AesMode, EncryptedSerializer};
use langgraph_codec::msgpack;
use langgraph_codec::saver::{
    ChannelVersion, Checkpoint, CheckpointConfig, CheckpointMetadata, CheckpointSaver,
    InMemorySaver,
};

/// 32 bytes: AES-256, the key `benches/python_baseline.py` uses.
const KEY: &[u8; 32] = b"0123456789abcdef0123456789abcdef";

fn saver(c: &mut Criterion) {
    let path = format!(
        "{}/vectors/payloads/messages300.msgpack",
        env!("CARGO_MANIFEST_DIR")
    );
    let bytes = std::fs::read(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    let messages = msgpack::decode(&bytes)
        .expect("payload decodes")
        .get("messages")
        .cloned()
        .expect("a messages list");

    let serde = EncryptedSerializer::from_aes_key(KEY, AesMode::Eax).expect("32-byte key");
    let saver = InMemorySaver::with_serializer(Arc::new(serde));
    let config = CheckpointConfig::new("bench");
    let mut checkpoint = Checkpoint::new(
        "1f000000-0000-6000-8000-000000000001",
        "2025-01-01T00:00:00.000000+00:00",
    );
    checkpoint
        .channel_values
        .insert("messages".to_owned(), messages.clone());
    let version = ChannelVersion::Str(format!("{:032}.{:016}", 1, 0.5));
    checkpoint
        .channel_versions
        .insert("messages".to_owned(), version);
    let new_versions = checkpoint.channel_versions.clone();
    let metadata = CheckpointMetadata::new("loop", 1);

    let runtime = tokio::runtime::Builder::new_current_thread()
        .build()
        .expect("a runtime");
    let round_trip = || {
        runtime.block_on(async {
            let stored = saver
                .put(&config, &checkpoint, &metadata, &new_versions)
                .await
                .expect("put");
            saver.get_tuple(&stored).await.expect("get_tuple")
        })
    };
    let tuple = round_trip().expect("the checkpoint is there");
    assert_eq!(
        tuple.checkpoint.channel_values.get("messages"),
        Some(&messages)
    );
    let mut group = c.benchmark_group("saver");
    group.bench_function("put_get_messages300_encrypted", |b| {
        b.iter(|| black_box(round_trip()))
    });
    group.finish();
}

fn config() -> Criterion {
    Criterion::default()
        .sample_size(20)
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(3))
}

criterion_group! {
    name = benches;
    config = config();
    targets = saver
}
criterion_main!(benches);
