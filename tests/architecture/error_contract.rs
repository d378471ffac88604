//! The contract of the one `Error`: stable kind names, `source()` chains that reach the
//! leaf error, and messages that name the row.

use std::collections::HashSet;

use langgraph_codec::saver::{
    ChannelVersion, Checkpoint, CheckpointConfig, CheckpointSaver, InMemorySaver,
};
use langgraph_codec::{msgpack::DecodeError, Error, ErrorKind, RowKind, TypedBytes, Value};

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
        (ErrorKind::ConnectionUnavailable, "connection_unavailable"),
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

/// The errors of `e` and of every `source()` under it, outermost first.
#[cfg(any(feature = "sqlite", feature = "postgres"))]
fn chain(e: &Error) -> Vec<&(dyn std::error::Error + 'static)> {
    let mut out: Vec<&(dyn std::error::Error + 'static)> = vec![e];
    let mut cur = std::error::Error::source(e);
    while let Some(c) = cur {
        out.push(c);
        cur = c.source();
    }
    out
}

/// SQLite's own error is under a storage failure, through `source()` and `as_sqlite()`.
#[cfg(feature = "sqlite")]
#[test]
fn a_sqlite_failure_reaches_rusqlites_error() {
    use langgraph_codec::saver::sqlite::SqliteSaver;
    let tmp = tempfile::Builder::new()
        .prefix("lgcodec-err-")
        .tempdir()
        .expect("temp dir");
    let dir = tmp.path().to_path_buf();
    // Not a database: SQLite refuses to read it.
    let path = dir.join("not-a-db.sqlite");
    std::fs::write(&path, vec![0x5a; 4096]).expect("write");
    let e = SqliteSaver::open(&path).expect_err("not a database");
    assert_eq!(e.kind(), ErrorKind::Storage, "{e:?}");
    assert!(e.operation().is_some(), "{e:?}");
    let sqlite = e.as_sqlite().expect("rusqlite's error");
    assert_eq!(
        sqlite.sqlite_error_code(),
        Some(rusqlite::ErrorCode::NotADatabase),
        "{sqlite:?}"
    );
    assert!(chain(&e).iter().any(|c| c.is::<rusqlite::Error>()), "{e:?}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// The server's error is under a Postgres failure, through `source()`,
/// `as_postgres()` and `sqlstate()`; the message says it once.
#[cfg(feature = "postgres")]
#[tokio::test]
async fn a_postgres_failure_reaches_tokio_postgres_error() {
    use langgraph_codec::saver::postgres::PostgresSaver;
    let url = match std::env::var("LGCODEC_TEST_PG_URL") {
        Ok(u) if !u.is_empty() => u,
        _ => {
            println!("skipped: LGCODEC_TEST_PG_URL is not set");
            return;
        }
    };
    // A database that does not exist: the server answers 3D000 when connecting.
    let (base, _) = url.rsplit_once('/').expect("a database in the URL");
    let missing = format!("{base}/lgcodec_no_such_database");
    let saver = PostgresSaver::builder_from_url(&missing)
        .expect("url")
        .build()
        .expect("build");
    let e = saver.setup().await.expect_err("no such database");
    assert_eq!(e.kind(), ErrorKind::ConnectionUnavailable, "{e:?}");
    assert_eq!(e.operation(), Some("setup"), "{e:?}");
    assert_eq!(e.sqlstate(), Some("3D000"), "{e:?}");
    let pg = e.as_postgres().expect("the driver's error");
    assert!(pg.as_db_error().is_some(), "{pg:?}");
    assert!(
        chain(&e).iter().any(|c| c.is::<tokio_postgres::Error>()),
        "{e:?}"
    );
    assert!(e.to_string().contains("3D000"), "{e}");
}
