//! A Rust service on the checkpoint tables Python's `PostgresSaver` uses.
//!
//! ```text
//! LANGGRAPH_AES_KEY=<16/24/32 bytes> cargo run --features postgres --example postgres_quickstart -- postgresql://postgres@127.0.0.1:5432/postgres
//! ```
//!
//! Without `LANGGRAPH_AES_KEY` rows are plain JsonPlus (what Python writes by default).

use std::sync::Arc;

use langgraph_codec::crypto::EncryptedSerializer;
use langgraph_codec::saver::postgres::PostgresSaver;
use langgraph_codec::saver::{
    Checkpoint, CheckpointConfig, CheckpointMetadata, CheckpointSaver, ListOptions,
};
use langgraph_codec::Value;

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let url = std::env::args()
        .nth(1)
        .ok_or("usage: postgres_quickstart POSTGRES_URL")?;
    let mut builder = PostgresSaver::builder_from_url(&url)?.schema("lgcodec_quickstart");
    if std::env::var_os("LANGGRAPH_AES_KEY").is_some() {
        // Encrypt every blob and write, and keep no channel value inline in clear.
        builder = builder
            .serializer(Arc::new(EncryptedSerializer::from_env()?))
            .all_values_in_blobs(true);
    }
    let saver = builder.build()?;
    saver.setup().await?; // Python's migrations v0..9, once, under an advisory lock
    saver.verify().await?; // refuses a missing, shallow-saver or newer schema

    let thread = CheckpointConfig::new("quickstart-thread");
    let mut checkpoint = Checkpoint::now(-1);
    let version = saver.get_next_version(None)?;
    checkpoint
        .channel_values
        .insert("topic".into(), Value::from("postgres"));
    checkpoint
        .channel_versions
        .insert("topic".into(), version.clone());
    let stored = saver
        .put(
            &thread,
            &checkpoint,
            &CheckpointMetadata::new("input", -1),
            &[("topic".to_owned(), version)].into_iter().collect(),
        )
        .await?;
    saver
        .put_writes(
            &stored,
            &[("topic".into(), Value::from("rust"))],
            "task-1",
            "",
        )
        .await?;
    for t in saver
        .list(Some(&thread), &ListOptions::new().limit(5))
        .await?
    {
        println!(
            "{} step {:?}: {:?}, {} pending write(s)",
            t.config.checkpoint_id.unwrap_or_default(),
            t.metadata.step(),
            t.checkpoint.channel_values.get("topic"),
            t.pending_writes.len()
        );
    }
    saver.delete_thread("quickstart-thread").await?;
    Ok(())
}
