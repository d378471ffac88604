//! `put` refuses nesting its reader refuses: the check every saver's test runs
//! (`put_depth.rs` for SQLite and in-memory, `postgres/edge_cases.rs` for Postgres).
#![allow(dead_code)]

use langgraph_codec::saver::{
    Checkpoint, CheckpointConfig, CheckpointMetadata, CheckpointSaver, ListOptions,
};
use langgraph_codec::Value;

/// A value nested `levels` deep: `[[[ ... "x" ... ]]]`.
pub fn nested(levels: usize) -> Value {
    let mut v = Value::from("x");
    for _ in 0..levels {
        v = Value::Array(vec![v]);
    }
    v
}

/// Stores a first checkpoint, then one with metadata `deepest_ok` levels deep under a
/// key (the metadata map is one more level), then tries each of `refused`.
pub async fn check(s: &dyn CheckpointSaver, deepest_ok: usize, refused: &[usize]) {
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
