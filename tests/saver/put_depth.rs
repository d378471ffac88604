//! `put` refuses what no reader accepts. Metadata nested deeper than
//! the SQLite saver's reader accepts (1,000 levels, Python's `json.loads` limit) is
//! refused at `put` with a typed error, as the in-memory saver refuses what its
//! msgpack rows cannot hold, and the thread's latest checkpoint still reads.
//! (The Postgres part is in `postgres/edge_cases.rs`.)
#![cfg(feature = "sqlite")]

use crate::put_depth_common::{check, nested};
use langgraph_codec::saver::sqlite::SqliteSaver;
use langgraph_codec::saver::{
    Checkpoint, CheckpointConfig, CheckpointMetadata, CheckpointSaver, InMemorySaver,
};

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
