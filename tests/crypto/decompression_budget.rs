//! The `+zlib` decompression budget is per saver call, not per row:
//! one `get_tuple` / `list` / `get_delta_channel_history` over many compressed rows
//! stays within a configurable total.

use std::sync::Arc;

use langgraph_codec::compression::CompressedSerializer;
use langgraph_codec::compression::DecompressionBudget;
use langgraph_codec::crypto::{AesKey, EncryptedSerializer, KeyRing};
use langgraph_codec::saver::{
    ChannelVersion, Checkpoint, CheckpointConfig, CheckpointMetadata, CheckpointSaver,
    InMemorySaver, ListOptions,
};
use langgraph_codec::{Error, ErrorKind, JsonPlusSerializer, Serializer, Value};

/// Each checkpoint stores one 100,000-character blob (~100 KB inflated, a few hundred
/// bytes compressed).
const BLOB: usize = 100_000;

async fn filled(serde: Arc<dyn Serializer>, budget: usize) -> InMemorySaver {
    let saver = InMemorySaver::with_serializer(serde).with_max_decompressed_per_call(budget);
    let mut config = CheckpointConfig::new("t");
    for step in 0..5i64 {
        let mut cp = Checkpoint::now(step);
        let version = ChannelVersion::Int(step + 1);
        let text = format!("{step}").repeat(BLOB);
        cp.channel_values.insert("x".into(), Value::from(text));
        cp.channel_versions.insert("x".into(), version.clone());
        let nv = [("x".to_owned(), version)].into_iter().collect();
        config = saver
            .put(&config, &cp, &CheckpointMetadata::new("loop", step), &nv)
            .await
            .expect("put");
    }
    saver
}

/// The budget's limit when `e` is an unreadable row refused for the call's budget.
fn budget_error(e: &Error) -> Option<usize> {
    if e.kind() != ErrorKind::UnreadableRow {
        return None;
    }
    let cause = e.cause()?;
    (cause.kind() == ErrorKind::DecompressionBudget)
        .then(|| cause.limit())
        .flatten()
}

fn serializers() -> Vec<(&'static str, Arc<dyn Serializer>)> {
    let zlib = CompressedSerializer::new(JsonPlusSerializer::new());
    let key = AesKey::new(b"0123456789abcdef").expect("key");
    vec![
        ("msgpack+zlib", Arc::new(zlib.clone())),
        (
            "msgpack+zlib+aes",
            Arc::new(EncryptedSerializer::new(KeyRing::new(key), zlib)),
        ),
    ]
}

#[tokio::test]
async fn one_call_stays_within_its_total() {
    for (tag, serde) in serializers() {
        // 250 KB per call: one checkpoint (one blob) fits, five do not.
        let saver = filled(serde.clone(), 250_000).await;
        assert!(saver
            .export_rows()
            .typed_bytes()
            .any(|row| row.type_tag == tag));
        let latest = saver
            .get_tuple(&CheckpointConfig::new("t"))
            .await
            .expect("one checkpoint fits")
            .expect("stored");
        assert_eq!(
            latest.checkpoint.channel_values.get("x"),
            Some(&Value::from("4".repeat(BLOB)))
        );
        // Each call gets a fresh budget: the same call again still works.
        assert!(saver.get_tuple(&CheckpointConfig::new("t")).await.is_ok());
        let e = saver
            .list(Some(&CheckpointConfig::new("t")), &ListOptions::new())
            .await
            .expect_err("five blobs exceed the call's total");
        assert_eq!(budget_error(&e), Some(250_000), "{tag}: {e}");
        let two = saver
            .list(
                Some(&CheckpointConfig::new("t")),
                &ListOptions::new().limit(2),
            )
            .await
            .expect("two blobs fit");
        assert_eq!(two.len(), 2);
        // A generous total reads everything.
        let saver = filled(serde, 10 << 20).await;
        let all = saver
            .list(Some(&CheckpointConfig::new("t")), &ListOptions::new())
            .await
            .expect("fits");
        assert_eq!(all.len(), 5);
    }
}

#[test]
fn budgets_are_shared_by_clones_and_scopes_nest() {
    let serde = CompressedSerializer::new(JsonPlusSerializer::new());
    let row = serde
        .dumps_typed(&Value::from("y".repeat(1_000)))
        .expect("dumps");
    let inflated = 1_003; // str16 header (3 bytes) + 1,000 bytes
    let outer = DecompressionBudget::new(10 * inflated);
    let inner = DecompressionBudget::new(inflated);
    outer.scope(|| {
        assert!(serde.loads_typed(&row.type_tag, &row.data).is_ok());
        inner.scope(|| {
            assert!(serde.loads_typed(&row.type_tag, &row.data).is_ok());
            // The inner budget is spent; the row is refused before inflating it all.
            assert_eq!(
                serde
                    .loads_typed(&row.type_tag, &row.data)
                    .map_err(|e| e.kind()),
                Err(ErrorKind::DecompressionBudget)
            );
        });
        let clone = outer.clone();
        std::thread::scope(|s| {
            s.spawn(|| clone.scope(|| serde.loads_typed(&row.type_tag, &row.data).is_ok()))
                .join()
                .expect("thread");
        });
    });
    assert_eq!(inner.used(), inflated);
    assert_eq!(outer.used(), 2 * inflated);
    assert_eq!(DecompressionBudget::current().map(|b| b.limit()), None);
}

/// Compression is a serializer wrapper of its own (`compression`, below `crypto`): its
/// errors are the one `Error`, with the same kind, limit and message through the
/// `Serializer` protocol and under an encrypting wrapper. The old paths under `crypto`
/// are the same items.
#[test]
fn compression_errors_keep_their_names_in_every_layer() {
    use langgraph_codec::compression;

    let serde = compression::CompressedSerializer::new(JsonPlusSerializer::new());
    let row = serde
        .dumps_typed(&Value::from("x".repeat(600)))
        .expect("dumps");
    // The same type under both paths.
    let old: CompressedSerializer = serde.clone().with_max_decompressed_size(100);
    let e = old
        .loads_typed(&row.type_tag, &row.data)
        .expect_err("over the row limit");
    assert_eq!(
        (e.kind(), e.limit()),
        (ErrorKind::DecompressionLimit, Some(100))
    );
    assert_eq!(
        e.to_string(),
        "decompressed data exceeds the limit of 100 bytes"
    );
    // The budget under a scope, through an encrypting wrapper: the crypto variant.
    let key = AesKey::new(b"0123456789abcdef").expect("key");
    let sealed = EncryptedSerializer::new(KeyRing::new(key), serde);
    let row = sealed
        .dumps_typed(&Value::from("y".repeat(600)))
        .expect("dumps");
    let budget = DecompressionBudget::new(10);
    let e = budget
        .scope(|| sealed.loads_typed(&row.type_tag, &row.data))
        .expect_err("over budget");
    assert_eq!(
        (e.kind(), e.limit()),
        (ErrorKind::DecompressionBudget, Some(10))
    );
    // The free functions, under both paths.
    let packed = compression::compress(b"hello", 6).expect("compress");
    assert_eq!(
        langgraph_codec::compression::decompress(&packed, 5).expect("inflate"),
        b"hello"
    );
    assert_eq!(
        compression::decompress(&packed, 4).map_err(|e| (e.kind(), e.limit())),
        Err((ErrorKind::DecompressionLimit, Some(4)))
    );
}

/// The per-row limit (`with_max_decompressed_size`) inside a call's budget: a larger
/// budget does not lift it, a smaller one stops the row first.
#[test]
fn the_per_row_inflation_limit_holds_inside_a_larger_budget() {
    let serde =
        CompressedSerializer::new(JsonPlusSerializer::new()).with_max_decompressed_size(1_000);
    // A str of 10,000 bytes: its msgpack (str16 header + text) inflates to 10,003 bytes.
    let typed = serde
        .dumps_typed(&Value::from("x".repeat(10_000)))
        .expect("compresses");
    let kind = |r: Result<Value, Error>| r.expect_err("refused").kind().as_str();
    // A budget far above the row limit does not lift the row limit.
    let big = DecompressionBudget::new(10_000_000);
    let r = big.scope(|| serde.loads_typed(&typed.type_tag, &typed.data));
    assert_eq!(kind(r), "decompression_limit");
    assert_eq!(big.used(), 0);
    // A budget below the row limit is what stops the row, and says so.
    let small = DecompressionBudget::new(500);
    let r = small.scope(|| serde.loads_typed(&typed.type_tag, &typed.data));
    assert_eq!(kind(r), "decompression_budget");
    // Within both, the row is read and charged its inflated size.
    let roomy =
        CompressedSerializer::new(JsonPlusSerializer::new()).with_max_decompressed_size(20_000);
    let budget = DecompressionBudget::new(15_000);
    let v = budget
        .scope(|| roomy.loads_typed(&typed.type_tag, &typed.data))
        .expect("fits");
    assert!(v == Value::from("x".repeat(10_000)));
    assert_eq!(budget.used(), 10_003);
}
