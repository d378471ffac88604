//! A page's blobs read by ranges of versions: only where the blobs table orders
//! versions byte for byte, and complete when versions nobody asked for sit inside a
//! range. `list` without a limit reads its blobs this way; the expected values are
//! the ones each checkpoint was put with.

use langgraph_codec::saver::postgres::PostgresSaver;
use langgraph_codec::saver::{
    ChannelVersion, Checkpoint, CheckpointConfig, CheckpointMetadata, CheckpointSaver, ListOptions,
};
use langgraph_codec::Value;

use super::{builder, fresh_schema, psql, versions};
use crate::support::pg::url;

/// A saver on a fresh schema whose blobs' `version` column has `collation`.
async fn saver_with_version_collation(url: &str, tag: &str, collation: &str) -> PostgresSaver {
    let schema = fresh_schema(tag);
    let s = builder(url, &schema).build().expect("valid schema");
    s.setup().await.expect("setup");
    psql(url)
        .await
        .batch_execute(&format!(
            r#"ALTER TABLE {schema}.checkpoint_blobs ALTER COLUMN version TYPE text COLLATE "{collation}""#
        ))
        .await
        .expect("collation");
    s
}

/// Puts one checkpoint per version on `thread`, each with a `messages` list (a blob)
/// at that version and a `note` string (inline, no blob) at the same version. Returns
/// each checkpoint's config and messages, oldest first.
async fn put_each(
    s: &PostgresSaver,
    thread: &str,
    all: &[ChannelVersion],
) -> Vec<(CheckpointConfig, Value)> {
    let mut cfg = CheckpointConfig::new(thread);
    let mut out = Vec::new();
    for (step, v) in (0i64..).zip(all) {
        let mut cp = Checkpoint::now(step);
        let messages = Value::from(vec![Value::from(format!("{thread} at version {v}"))]);
        cp.channel_values
            .insert("messages".into(), messages.clone());
        cp.channel_values
            .insert("note".into(), Value::from(format!("note {step}")));
        cp.channel_versions.insert("messages".into(), v.clone());
        cp.channel_versions.insert("note".into(), v.clone());
        cfg = s
            .put(
                &cfg,
                &cp,
                &CheckpointMetadata::new("loop", step),
                &versions(&[("messages", v.clone()), ("note", v.clone())]),
            )
            .await
            .expect("put");
        out.push((cfg.clone(), messages));
    }
    out
}

/// The `messages` value of each checkpoint `list` gives, oldest first.
async fn listed(s: &PostgresSaver, thread: &str, options: &ListOptions) -> Vec<Option<Value>> {
    let mut page = s
        .list(Some(&CheckpointConfig::new(thread)), options)
        .await
        .expect("list");
    page.reverse();
    page.iter()
        .map(|t| t.checkpoint.channel_values.get("messages").cloned())
        .collect()
}

/// Integer versions, as LangGraphJS writes them, order `"1" < "10" < "11" < … < "2"`
/// byte for byte: the three oldest checkpoints of a 25-checkpoint thread want
/// versions 1–3, whose range holds `"10"`–`"19"` too. The range stops at as many rows
/// as it wants, so versions 2 and 3 must come from elsewhere.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_range_cut_short_by_versions_not_asked_for_still_gives_every_blob() {
    let Some(url) = url() else { return };
    let s = saver_with_version_collation(&url, "ranges", "C").await;
    let all: Vec<ChannelVersion> = (1..=25).map(ChannelVersion::Int).collect();
    let put = put_each(&s, "ints", &all).await;
    let expected: Vec<Option<Value>> = put.iter().map(|(_, m)| Some(m.clone())).collect();
    let whole = listed(&s, "ints", &ListOptions::new()).await;
    assert_eq!(whole, expected);
    let oldest = listed(&s, "ints", &ListOptions::new().before(put[3].0.clone())).await;
    assert_eq!(oldest, expected[..3]);
    // A range in the middle: versions 9–13 are "10".."9" byte for byte, which holds
    // "2".."8" and "14".."19" as well.
    let middle = listed(&s, "ints", &ListOptions::new().before(put[13].0.clone())).await;
    assert_eq!(middle, expected[..13]);
}

/// A collation that orders versions otherwise than bytes (ICU's puts `"a"` before
/// `"B"`, bytes the other way round) would make a range miss a version inside it, so
/// such a table is read by key.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_table_whose_versions_order_otherwise_than_bytes_is_read_by_key() {
    let Some(url) = url() else { return };
    let s = saver_with_version_collation(&url, "icu", "und-x-icu").await;
    let all: Vec<ChannelVersion> = ["B", "a", "c"]
        .into_iter()
        .map(|v| ChannelVersion::Str(v.into()))
        .collect();
    let put = put_each(&s, "letters", &all).await;
    let expected: Vec<Option<Value>> = put.iter().map(|(_, m)| Some(m.clone())).collect();
    assert_eq!(listed(&s, "letters", &ListOptions::new()).await, expected);
}
