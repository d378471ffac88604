//! InMemorySaver beyond the conformance spec: bad input, unreadable rows, Python's
//! write-index rules, versions, and concurrent use.

use std::sync::Arc;

use langgraph_codec::saver::{
    ChannelVersion, Checkpoint, CheckpointConfig, CheckpointMetadata, CheckpointSaver,
    InMemorySaver, ListOptions, ERROR, INTERRUPT,
};
use langgraph_codec::TagError;
use langgraph_codec::{
    Error, ErrorKind, JsonPlusSerializer, RowKind, Serializer, TypedBytes, Value,
};

fn md(step: i64) -> CheckpointMetadata {
    CheckpointMetadata::new("loop", step)
}

async fn put_one(saver: &InMemorySaver, thread: &str, value: &str) -> CheckpointConfig {
    let mut cp = Checkpoint::now(0);
    cp.channel_values.insert("x".into(), Value::from(value));
    cp.channel_versions
        .insert("x".into(), ChannelVersion::Int(1));
    let nv = [("x".to_owned(), ChannelVersion::Int(1))]
        .into_iter()
        .collect();
    saver
        .put(&CheckpointConfig::new(thread), &cp, &md(0), &nv)
        .await
        .expect("put")
}

fn saver_error(e: Error) -> Error {
    // The saver's own error: its refusals, and the lower layers' errors it met.
    e
}

#[tokio::test]
async fn missing_thread_id_is_a_typed_error() {
    let saver = InMemorySaver::new();
    let no_thread = CheckpointConfig::default();
    let e = saver
        .put(&no_thread, &Checkpoint::now(0), &md(0), &Default::default())
        .await
        .expect_err("no thread id");
    assert_eq!(e.kind().as_str(), "missing_thread_id");
    let e = saver_error(e);
    assert_eq!(
        (e.kind(), e.operation()),
        (ErrorKind::MissingThreadId, Some("put"))
    );
    for e in [
        saver.get_tuple(&no_thread).await.expect_err("get_tuple"),
        saver
            .list(Some(&no_thread), &ListOptions::new())
            .await
            .expect_err("list"),
        saver
            .put_writes(&no_thread, &[], "t", "")
            .await
            .expect_err("put_writes"),
    ] {
        assert_eq!(e.kind().as_str(), "missing_thread_id", "{e}");
    }
}

#[tokio::test]
async fn put_writes_without_checkpoint_id_is_a_typed_error() {
    let saver = InMemorySaver::new();
    let e = saver
        .put_writes(
            &CheckpointConfig::new("t"),
            &[("ch".into(), Value::from(1i64))],
            "task",
            "",
        )
        .await
        .expect_err("no checkpoint id");
    let e = saver_error(e);
    assert_eq!(
        (e.kind(), e.operation()),
        (ErrorKind::MissingCheckpointId, Some("put_writes"))
    );
}

#[tokio::test]
async fn a_corrupt_row_fails_only_its_thread() {
    let saver = InMemorySaver::new();
    put_one(&saver, "good", "fine").await;
    put_one(&saver, "bad", "doomed").await;
    let mut rows = saver.export_rows();
    for blob in rows.blobs.iter_mut().filter(|b| b.thread_id == "bad") {
        // A msgpack str header claiming 5 bytes, with 1 byte after it.
        blob.value = TypedBytes::new("msgpack", vec![0xa5, b'x']);
    }
    let fresh = InMemorySaver::new();
    fresh.import_rows(rows);
    let e = fresh
        .get_tuple(&CheckpointConfig::new("bad"))
        .await
        .expect_err("corrupt blob");
    assert_eq!(e.kind().as_str(), "unreadable_row");
    let e = saver_error(e);
    let row = e.row().expect("the unreadable row");
    assert_eq!(row.kind(), RowKind::Blob);
    assert_eq!(row.thread_id(), "bad");
    let location = row.to_string();
    assert!(
        location.contains("\"bad\"") && location.contains("\"x\""),
        "{location}"
    );
    assert!(e.to_string().contains(&location), "{e}");
    assert_eq!(
        e.cause().map(|c| c.kind().as_str()),
        Some("length_exceeds_input")
    );
    // Other threads keep working, for reads and writes.
    let good = fresh
        .get_tuple(&CheckpointConfig::new("good"))
        .await
        .expect("good thread")
        .expect("stored");
    assert_eq!(
        good.checkpoint.channel_values.get("x"),
        Some(&Value::from("fine"))
    );
    put_one(&fresh, "other", "new").await;
    assert!(fresh
        .get_tuple(&CheckpointConfig::new("other"))
        .await
        .expect("other")
        .is_some());
}

/// A keyed at-rest transform standing in for encryption: with the wrong key the tag
/// check fails like a failed authentication.
#[derive(Debug)]
struct Keyed(u8);

impl Serializer for Keyed {
    fn dumps_typed(&self, value: &Value) -> langgraph_codec::Result<TypedBytes> {
        let inner = JsonPlusSerializer::new().dumps_typed(value)?;
        let mut data = vec![self.0];
        data.extend(inner.data.iter().map(|b| b ^ self.0));
        Ok(TypedBytes::new(format!("{}+keyed", inner.type_tag), data))
    }
    fn loads_typed(&self, type_tag: &str, data: &[u8]) -> langgraph_codec::Result<Value> {
        let tag = type_tag.strip_suffix("+keyed").unwrap_or(type_tag);
        match data.split_first() {
            Some((k, rest)) if *k == self.0 => {
                let plain: Vec<u8> = rest.iter().map(|b| b ^ self.0).collect();
                JsonPlusSerializer::new().loads_typed(tag, &plain)
            }
            _ => Err(TagError::unknown_type(format!("{type_tag} (wrong key)")).into()),
        }
    }
}

#[tokio::test]
async fn rows_under_another_key_are_unreadable_rows_not_panics() {
    let writer = InMemorySaver::with_serializer(Arc::new(Keyed(7)));
    put_one(&writer, "t", "secret").await;
    let rows = writer.export_rows();
    assert!(rows
        .typed_bytes()
        .all(|t| t.type_tag.ends_with("+keyed") || t.type_tag == "empty"));
    let reader = InMemorySaver::with_serializer(Arc::new(Keyed(9)));
    reader.import_rows(rows);
    let e = reader
        .get_tuple(&CheckpointConfig::new("t"))
        .await
        .expect_err("wrong key");
    let e = saver_error(e);
    assert_eq!(e.kind(), ErrorKind::UnreadableRow, "{e:?}");
    assert_eq!(e.row().map(|r| r.kind()), Some(RowKind::Checkpoint));
    put_one(&reader, "mine", "readable").await;
    assert!(reader
        .get_tuple(&CheckpointConfig::new("mine"))
        .await
        .expect("mine")
        .is_some());
}

#[tokio::test]
async fn regular_writes_keep_the_first_special_writes_the_last() {
    // Python: put_writes skips an existing (task_id, idx >= 0) and replaces idx < 0.
    let saver = InMemorySaver::new();
    let cfg = put_one(&saver, "t", "v").await;
    for round in ["first", "second"] {
        saver
            .put_writes(
                &cfg,
                &[
                    ("ch".into(), Value::from(round)),
                    (ERROR.into(), Value::from(round)),
                    (INTERRUPT.into(), Value::from(round)),
                ],
                "task",
                "",
            )
            .await
            .expect("put_writes");
    }
    let rows = saver.export_rows();
    let idx: Vec<(i64, &str)> = rows
        .writes
        .iter()
        .map(|w| (w.idx, w.channel.as_str()))
        .collect();
    // Sorted by (task_path, task_id, idx): -3 (__interrupt__), -1 (__error__), 0 (ch).
    assert_eq!(idx, [(-3, INTERRUPT), (-1, ERROR), (0, "ch")]);
    let tup = saver.get_tuple(&cfg).await.expect("get").expect("stored");
    let values: Vec<(&str, &Value)> = tup
        .pending_writes
        .iter()
        .map(|w| (w.channel.as_str(), &w.value))
        .collect();
    assert_eq!(
        values,
        [
            (INTERRUPT, &Value::from("second")),
            (ERROR, &Value::from("second")),
            ("ch", &Value::from("first"))
        ]
    );
}

#[test]
fn next_version_has_pythons_shape() {
    let saver = InMemorySaver::new();
    let first = saver.get_next_version(None).expect("v1");
    let ChannelVersion::Str(s1) = &first else {
        panic!("{first:?}")
    };
    // f"{1:032}.{random.random():016}"
    let (int_part, frac) = s1.split_once('.').expect("a dot");
    assert_eq!(int_part, format!("{:032}", 1));
    assert!(frac.len() >= 16 && frac.starts_with('0'), "{frac}");
    let second = saver.get_next_version(Some(&first)).expect("v2");
    let ChannelVersion::Str(s2) = &second else {
        panic!("{second:?}")
    };
    assert!(s2.starts_with(&format!("{:032}.", 2)));
    assert!(s2 > s1, "versions must increase as strings");
    let from_int = saver
        .get_next_version(Some(&ChannelVersion::Int(41)))
        .expect("int");
    assert!(from_int.to_string().starts_with(&format!("{:032}.", 42)));
    let e = saver
        .get_next_version(Some(&ChannelVersion::from("garbage")))
        .expect_err("bad");
    assert_eq!(e.kind().as_str(), "invalid_version");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn concurrent_puts_and_writes_lose_nothing() {
    const TASKS: usize = 8;
    const OPS: usize = 1000;
    let saver = Arc::new(InMemorySaver::new());
    let mut handles = Vec::new();
    for task in 0..TASKS {
        let saver = Arc::clone(&saver);
        handles.push(tokio::spawn(async move {
            // Odd tasks share one thread; even tasks have their own.
            let thread = if task % 2 == 1 {
                "shared".to_owned()
            } else {
                format!("own-{task}")
            };
            let mut parent: Option<CheckpointConfig> = None;
            for i in 0..OPS {
                if i % 2 == 0 {
                    let mut cp = Checkpoint::now(i as i64);
                    cp.channel_values
                        .insert(format!("ch-{task}"), Value::from(i as i64));
                    let version = ChannelVersion::Int(i as i64 + 1);
                    cp.channel_versions
                        .insert(format!("ch-{task}"), version.clone());
                    let mut cfg = CheckpointConfig::new(thread.as_str());
                    cfg.checkpoint_id = parent.as_ref().and_then(|p| p.checkpoint_id.clone());
                    let nv = [(format!("ch-{task}"), version)].into_iter().collect();
                    let md = CheckpointMetadata::new("loop", i as i64).with("task", task as i64);
                    parent = Some(saver.put(&cfg, &cp, &md, &nv).await.expect("put"));
                } else {
                    let at = parent.as_ref().expect("a checkpoint first");
                    saver
                        .put_writes(
                            at,
                            &[("w".into(), Value::from(i as i64))],
                            &format!("task-{task}-{i}"),
                            "",
                        )
                        .await
                        .expect("put_writes");
                }
            }
        }));
    }
    for h in handles {
        h.await.expect("task");
    }
    let all = saver.list(None, &ListOptions::new()).await.expect("list");
    assert_eq!(all.len(), TASKS * OPS / 2, "every checkpoint is there");
    let writes: usize = all.iter().map(|t| t.pending_writes.len()).sum();
    assert_eq!(writes, TASKS * OPS / 2, "every write is there");
    for task in 0..TASKS {
        let mine: Vec<_> = all
            .iter()
            .filter(|t| t.metadata.get("task") == Some(&Value::from(task as i64)))
            .collect();
        assert_eq!(mine.len(), OPS / 2, "task {task}");
        // Each checkpoint reads back its own value and exactly its own write.
        for t in &mine {
            let step = t.metadata.step().expect("step");
            assert_eq!(
                t.checkpoint.channel_values.get(&format!("ch-{task}")),
                Some(&Value::from(step))
            );
            assert_eq!(t.pending_writes.len(), 1);
            assert_eq!(
                t.pending_writes.first().map(|w| w.value.clone()),
                Some(Value::from(step + 1))
            );
        }
    }
}

/// `prune(keep_latest)` keeps the latest checkpoint and exactly the ancestors its delta
/// channel needs (up to the snapshot), drops the rest with their writes and the blobs
/// no kept checkpoint references.
#[tokio::test]
async fn prune_keeps_exactly_the_needed_chain() {
    use langgraph_codec::saver::PruneStrategy;
    let saver = InMemorySaver::new();
    let thread = CheckpointConfig::new("t");
    let mut parent: Option<CheckpointConfig> = None;
    let mut ids = Vec::new();
    // steps: 0 plain, 1 snapshot, 2 delta, 3 delta (latest)
    for step in 0..4i64 {
        let mut cp = Checkpoint::now(step);
        let version = ChannelVersion::Int(step + 1);
        cp.channel_versions.insert("log".into(), version.clone());
        cp.channel_versions.insert("plain".into(), version.clone());
        cp.channel_values.insert("plain".into(), Value::from(step));
        let mut md = CheckpointMetadata::new("loop", step);
        if step == 1 {
            cp.channel_values.insert(
                "log".into(),
                Value::DeltaSnapshot(Box::new(Value::Array(vec![]))),
            );
        } else {
            md = md.with(
                "counters_since_delta_snapshot",
                Value::map([("log", Value::Array(vec![1i64.into(), 1i64.into()]))]),
            );
        }
        let nv = [
            ("log".to_owned(), version.clone()),
            ("plain".to_owned(), version),
        ]
        .into_iter()
        .collect();
        let mut cfg = thread.clone();
        cfg.checkpoint_id = parent.as_ref().and_then(|p| p.checkpoint_id.clone());
        let stored = saver.put(&cfg, &cp, &md, &nv).await.expect("put");
        saver
            .put_writes(
                &stored,
                &[("log".into(), Value::from(step))],
                &format!("task-{step}"),
                "",
            )
            .await
            .expect("writes");
        ids.push(cp.id.clone());
        parent = Some(stored);
    }
    let before = saver
        .get_delta_channel_history(&thread, &["log".to_owned()])
        .await
        .expect("history");
    saver
        .prune(&["t".to_owned()], PruneStrategy::KeepLatest)
        .await
        .expect("prune");
    let kept: Vec<String> = saver
        .list(Some(&thread), &ListOptions::new())
        .await
        .expect("list")
        .iter()
        .map(|t| t.checkpoint.id.clone())
        .collect();
    let want: Vec<String> = ids.iter().skip(1).rev().cloned().collect();
    assert_eq!(
        kept, want,
        "latest + the delta ancestors back to the snapshot, not step 0"
    );
    let after = saver
        .get_delta_channel_history(&thread, &["log".to_owned()])
        .await
        .expect("history");
    assert_eq!(before, after);
    let rows = saver.export_rows();
    // step 0's blobs (version 1) and its write are gone; 3 checkpoints x 2 channels stay.
    assert_eq!(rows.blobs.len(), 6);
    assert!(rows
        .blobs
        .iter()
        .all(|b| b.version != ChannelVersion::Int(1)));
    assert_eq!(rows.writes.len(), 3);
}

#[tokio::test]
async fn aes_rows_at_rest_are_ciphertext_and_a_wrong_key_is_an_unreadable_row() {
    use langgraph_codec::crypto::{AesMode, EncryptedSerializer};
    let right = EncryptedSerializer::from_aes_key(b"0123456789abcdef", AesMode::Eax).expect("key");
    let writer = InMemorySaver::with_serializer(Arc::new(right));
    put_one(&writer, "t", "top secret").await;
    let rows = writer.export_rows();
    for t in rows.typed_bytes() {
        assert!(
            t.type_tag == "msgpack+aes" || t.type_tag == "empty",
            "{}",
            t.type_tag
        );
        assert!(
            !t.data.windows(10).any(|w| w == b"top secret"),
            "plaintext at rest"
        );
    }
    let wrong = EncryptedSerializer::from_aes_key(b"fedcba9876543210", AesMode::Eax).expect("key");
    let reader = InMemorySaver::with_serializer(Arc::new(wrong));
    reader.import_rows(rows);
    let e = reader
        .get_tuple(&CheckpointConfig::new("t"))
        .await
        .expect_err("wrong key");
    let e = saver_error(e);
    assert_eq!(e.kind(), ErrorKind::UnreadableRow, "{e:?}");
    assert_eq!(e.row().map(|r| r.kind()), Some(RowKind::Checkpoint));
    assert_eq!(
        e.cause().map(|c| c.kind()),
        Some(ErrorKind::AuthenticationFailed),
        "{e:?}"
    );
    put_one(&reader, "mine", "readable").await;
    assert!(reader
        .get_tuple(&CheckpointConfig::new("mine"))
        .await
        .expect("mine")
        .is_some());
}
