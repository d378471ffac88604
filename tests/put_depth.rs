//! Issue 22, item 5: `put` refuses what no reader accepts. Metadata nested deeper than
//! the SQLite saver's reader accepts (1,000 levels, Python's `json.loads` limit) is
//! refused at `put` with a typed error, as the in-memory saver refuses what its
//! msgpack rows cannot hold, and the thread's latest checkpoint still reads.
//! (The Postgres part is in `tests/postgres/round3.rs`.)
#![cfg(feature = "sqlite")]

use langgraph_codec::saver::sqlite::SqliteSaver;
use langgraph_codec::saver::{
    Checkpoint, CheckpointConfig, CheckpointMetadata, CheckpointSaver, InMemorySaver, ListOptions,
};
use langgraph_codec::Value;

/// A value nested `levels` deep: `[[[ ... "x" ... ]]]`.
fn nested(levels: usize) -> Value {
    let mut v = Value::from("x");
    for _ in 0..levels {
        v = Value::Array(vec![v]);
    }
    v
}

/// Stores a first checkpoint, then one with metadata `deepest_ok` levels deep under a
/// key (the metadata map is one more level), then tries each of `refused`.
async fn check(s: &dyn CheckpointSaver, deepest_ok: usize, refused: &[usize]) {
    let first = s
        .put(
            &CheckpointConfig::new("t"),
            &Checkpoint::now(-1),
            &CheckpointMetadata::new("input", -1),
            &Default::default(),
        )
        .await
        .expect("put");
    let ok = CheckpointMetadata::new("loop", 0).with("deep", nested(deepest_ok));
    let deepest = s
        .put(&first, &Checkpoint::now(0), &ok, &Default::default())
        .await
        .expect("the deepest accepted");
    let read = s.get_tuple(&deepest).await.expect("reads").expect("stored");
    assert_eq!(read.metadata.0.get("deep"), Some(&nested(deepest_ok)));
    for &levels in refused {
        let md = CheckpointMetadata::new("loop", 1).with("deep", nested(levels));
        let e = s
            .put(&deepest, &Checkpoint::now(1), &md, &Default::default())
            .await
            .expect_err("too deep");
        let kind = e.kind().as_str();
        assert!(
            kind == "invalid_metadata" || kind == "depth_limit",
            "{levels} levels: {kind} {e}"
        );
    }
    let latest = s
        .get_tuple(&CheckpointConfig::new("t"))
        .await
        .expect("the thread still reads")
        .expect("latest");
    assert_eq!(latest.config.checkpoint_id, deepest.checkpoint_id);
    let all = s
        .list(Some(&CheckpointConfig::new("t")), &ListOptions::new())
        .await
        .expect("list");
    assert_eq!(all.len(), 2);
}

#[tokio::test]
async fn sqlite_put_refuses_metadata_nested_deeper_than_its_reader_accepts() {
    let s = SqliteSaver::open_in_memory().expect("open");
    check(&s, 999, &[1_000, 1_500]).await;
    // The refusal names the limit.
    let md = CheckpointMetadata::new("loop", 1).with("deep", nested(1_500));
    let e = s
        .put(
            &CheckpointConfig::new("u"),
            &Checkpoint::now(1),
            &md,
            &Default::default(),
        )
        .await
        .expect_err("too deep");
    assert_eq!(e.kind().as_str(), "invalid_metadata");
    assert!(e.to_string().contains("1000 levels"), "{e}");
}

/// The reference: the in-memory saver refuses at `put` already (its msgpack encoder).
#[tokio::test]
async fn in_memory_put_refuses_what_its_reader_refuses() {
    let s = InMemorySaver::new();
    check(&s, 1_000, &[1_500, 5_000]).await;
}
