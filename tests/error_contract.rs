//! The contract of the one `Error`: stable kind names, `source()` chains that reach the
//! leaf error, and messages that name the row.

use std::collections::HashSet;

use langgraph_codec::saver::{
    ChannelVersion, Checkpoint, CheckpointConfig, CheckpointSaver, InMemorySaver,
};
use langgraph_codec::{DecodeError, Error, ErrorKind, RowKind, TypedBytes, Value};

#[test]
fn every_kind_has_a_distinct_stable_snake_case_name() {
    let mut seen = HashSet::new();
    for kind in ErrorKind::ALL {
        let name = kind.as_str();
        assert!(
            !name.is_empty()
                && name
                    .bytes()
                    .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_'),
            "{kind:?}: {name:?}"
        );
        assert!(seen.insert(name), "{name} twice");
        assert_eq!(kind.to_string(), name);
        assert_eq!(Error::new(*kind, "x").kind(), *kind);
    }
    // Names the CLI prints and scripts match on: pinned.
    for (kind, name) in [
        (ErrorKind::AuthenticationFailed, "authentication_failed"),
        (ErrorKind::UnreadableRow, "unreadable_row"),
        (ErrorKind::PostgresPool, "postgres_pool"),
        (ErrorKind::LengthExceedsInput, "length_exceeds_input"),
        (ErrorKind::MissingThreadId, "missing_thread_id"),
    ] {
        assert_eq!(kind.as_str(), name);
    }
}

#[tokio::test]
async fn an_unreadable_row_names_it_and_its_chain_reaches_the_decode_error() {
    let saver = InMemorySaver::new();
    let mut cp = Checkpoint::now(0);
    cp.channel_values.insert("x".into(), Value::from("fine"));
    cp.channel_versions
        .insert("x".into(), ChannelVersion::Int(1));
    let versions = [("x".to_owned(), ChannelVersion::Int(1))]
        .into_iter()
        .collect();
    saver
        .put(
            &CheckpointConfig::new("t1"),
            &cp,
            &Default::default(),
            &versions,
        )
        .await
        .expect("put");
    let mut rows = saver.export_rows();
    for blob in &mut rows.blobs {
        // A msgpack str header claiming 5 bytes, with 1 byte after it.
        blob.value = TypedBytes::new("msgpack", vec![0xa5, b'x']);
    }
    let fresh = InMemorySaver::new();
    fresh.import_rows(rows);
    let e = fresh
        .get_tuple(&CheckpointConfig::new("t1"))
        .await
        .expect_err("corrupt blob");
    assert_eq!(e.kind(), ErrorKind::UnreadableRow);
    // Display: what and where.
    let text = e.to_string();
    assert!(text.contains("blob row"), "{text}");
    assert!(text.contains("thread \"t1\""), "{text}");
    assert!(text.contains("channel \"x\""), "{text}");
    assert!(text.contains("at byte 0"), "{text}");
    // source(): the cause, then the DecodeError with its offset.
    let mut cur: Option<&(dyn std::error::Error + 'static)> = Some(&e);
    let mut decode = None;
    while let Some(c) = cur {
        if let Some(d) = c.downcast_ref::<DecodeError>() {
            decode = Some(d);
        }
        cur = c.source();
    }
    assert_eq!(decode.map(DecodeError::offset), Some(0));
    assert_eq!(e.root().as_decode().map(DecodeError::offset), Some(0));
    assert_eq!(e.row().map(|r| r.kind()), Some(RowKind::Blob));
}
