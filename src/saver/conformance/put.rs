//! `spec/test_put.py`: `put` then `get_tuple` round trips.

use super::case_list;
use super::stated_rules::test_put_merges_config_into_metadata;
use super::util::{
    config, ensure, generate_checkpoint, generate_config, generate_metadata, metadata, uuid4, v,
    values_eq, version_major, versions, CaseResult, Failure,
};
use crate::saver::traits::{Capability, CheckpointSaver};
use crate::saver::types::CheckpointConfig;
use crate::value::Value;

pub(super) fn cases() -> Vec<super::Case> {
    case_list![Capability::Put;
        test_put_returns_config,
        test_put_roundtrip,
        test_put_preserves_channel_values,
        test_put_preserves_channel_versions,
        test_put_preserves_versions_seen,
        test_put_preserves_metadata,
        test_put_root_namespace,
        test_put_child_namespace,
        test_put_default_namespace,
        test_put_multiple_checkpoints_same_thread,
        test_put_multiple_threads_isolated,
        test_put_parent_config,
        test_put_incremental_channel_update,
        test_put_new_channel_added,
        test_put_channel_removed,
        test_put_preserves_run_id,
        test_put_preserves_versions_seen_values,
        // Not in Python's spec: a rule the docs state (stated_rules.rs).
        test_put_merges_config_into_metadata,
    ]
}

fn missing() -> Failure {
    Failure("get_tuple returned None for a stored checkpoint".to_owned())
}

/// put returns a config with thread_id, checkpoint_ns, checkpoint_id.
async fn test_put_returns_config(s: &dyn CheckpointSaver) -> CaseResult {
    let cfg = config(&uuid4());
    let cp = generate_checkpoint(&[("k", "v".into())], &[("k", v(1))], &[]);
    let result = s
        .put(&cfg, &cp, &metadata(), &versions(&[("k", v(1))]))
        .await?;
    ensure!(
        result.thread_id.is_some(),
        "returned config has no thread_id"
    );
    ensure!(
        result.checkpoint_ns.is_some(),
        "returned config has no checkpoint_ns"
    );
    ensure!(
        result.checkpoint_id.as_deref() == Some(cp.id.as_str()),
        "checkpoint_id {:?} != {:?}",
        result.checkpoint_id,
        cp.id
    );
    Ok(())
}

/// put then get_tuple returns the identical checkpoint.
async fn test_put_roundtrip(s: &dyn CheckpointSaver) -> CaseResult {
    let cp = generate_checkpoint(&[("msg", "hello".into())], &[("msg", v(1))], &[]);
    let stored = s
        .put(
            &config(&uuid4()),
            &cp,
            &generate_metadata("input", -1, &[]),
            &versions(&[("msg", v(1))]),
        )
        .await?;
    let tup = s.get_tuple(&stored).await?.ok_or_else(missing)?;
    ensure!(
        tup.checkpoint.id == cp.id,
        "id {} != {}",
        tup.checkpoint.id,
        cp.id
    );
    ensure!(
        values_eq(&tup.checkpoint.channel_values, &[("msg", "hello".into())]),
        "channel_values {:?}",
        tup.checkpoint.channel_values
    );
    Ok(())
}

/// Various types (str, int, list, dict) round-trip.
async fn test_put_preserves_channel_values(s: &dyn CheckpointSaver) -> CaseResult {
    let values: Vec<(&str, Value)> = vec![
        ("str_val", "hello".into()),
        ("int_val", 42i64.into()),
        (
            "list_val",
            Value::Array(vec![1i64.into(), 2i64.into(), 3i64.into()]),
        ),
        ("dict_val", Value::map([("nested", true)])),
    ];
    let vers: Vec<(&str, _)> = values.iter().map(|(k, _)| (*k, v(1))).collect();
    let cp = generate_checkpoint(&values, &vers, &[]);
    let stored = s
        .put(&config(&uuid4()), &cp, &metadata(), &versions(&vers))
        .await?;
    let tup = s.get_tuple(&stored).await?.ok_or_else(missing)?;
    for (k, want) in &values {
        let got = tup.checkpoint.channel_values.get(*k);
        ensure!(
            got.is_some_and(|g| super::util::py_eq(g, want)),
            "channel_values[{k}]: expected {want:?}, got {got:?}"
        );
    }
    Ok(())
}

/// ChannelVersions round-trip (compared by the part before the first `.`).
async fn test_put_preserves_channel_versions(s: &dyn CheckpointSaver) -> CaseResult {
    let vers = [("a", v(1)), ("b", v(2))];
    let cp = generate_checkpoint(&[("a", "x".into()), ("b", "y".into())], &vers, &[]);
    let stored = s
        .put(&config(&uuid4()), &cp, &metadata(), &versions(&vers))
        .await?;
    let tup = s.get_tuple(&stored).await?.ok_or_else(missing)?;
    for (k, want) in &vers {
        let got = tup.checkpoint.channel_versions.get(*k);
        ensure!(got.is_some(), "channel_versions[{k}] missing");
        ensure!(
            got.map(version_major) == Some(version_major(want)),
            "channel_versions[{k}]: expected {want}, got {got:?}"
        );
    }
    Ok(())
}

/// versions_seen round-trips (keys).
async fn test_put_preserves_versions_seen(s: &dyn CheckpointSaver) -> CaseResult {
    let cp = generate_checkpoint(
        &[],
        &[],
        &[("node1", &[("ch", v(1))]), ("node2", &[("ch", v(2))])],
    );
    let stored = s
        .put(&config(&uuid4()), &cp, &metadata(), &versions(&[]))
        .await?;
    let tup = s.get_tuple(&stored).await?.ok_or_else(missing)?;
    for node in ["node1", "node2"] {
        ensure!(
            tup.checkpoint.versions_seen.contains_key(node),
            "versions_seen[{node}] missing"
        );
    }
    Ok(())
}

/// Metadata source, step and custom keys round-trip.
async fn test_put_preserves_metadata(s: &dyn CheckpointSaver) -> CaseResult {
    let md = generate_metadata("loop", 3, &[("custom_key", "custom_value".into())]);
    let stored = s
        .put(
            &config(&uuid4()),
            &generate_checkpoint(&[], &[], &[]),
            &md,
            &versions(&[]),
        )
        .await?;
    let tup = s.get_tuple(&stored).await?.ok_or_else(missing)?;
    ensure!(
        tup.metadata.source() == Some("loop"),
        "source {:?}",
        tup.metadata.source()
    );
    ensure!(
        tup.metadata.step() == Some(3),
        "step {:?}",
        tup.metadata.step()
    );
    ensure!(
        tup.metadata.get("custom_key") == Some(&Value::from("custom_value")),
        "custom_key {:?}",
        tup.metadata.get("custom_key")
    );
    Ok(())
}

/// checkpoint_ns = "" works.
async fn test_put_root_namespace(s: &dyn CheckpointSaver) -> CaseResult {
    let stored = s
        .put(
            &generate_config(&uuid4(), "", None),
            &generate_checkpoint(&[], &[], &[]),
            &metadata(),
            &versions(&[]),
        )
        .await?;
    let tup = s.get_tuple(&stored).await?.ok_or_else(missing)?;
    ensure!(
        tup.config.ns().is_empty(),
        "checkpoint_ns {:?}",
        tup.config.checkpoint_ns
    );
    Ok(())
}

/// checkpoint_ns = "child:abc" works.
async fn test_put_child_namespace(s: &dyn CheckpointSaver) -> CaseResult {
    let stored = s
        .put(
            &generate_config(&uuid4(), "child:abc", None),
            &generate_checkpoint(&[], &[], &[]),
            &metadata(),
            &versions(&[]),
        )
        .await?;
    let tup = s.get_tuple(&stored).await?.ok_or_else(missing)?;
    ensure!(
        tup.config.checkpoint_ns.as_deref() == Some("child:abc"),
        "checkpoint_ns {:?}",
        tup.config.checkpoint_ns
    );
    Ok(())
}

/// A config whose checkpoint_ns is "" stores in the default namespace.
async fn test_put_default_namespace(s: &dyn CheckpointSaver) -> CaseResult {
    let cfg = CheckpointConfig::new(uuid4()).with_ns("");
    let cp = generate_checkpoint(&[], &[], &[]);
    let stored = s.put(&cfg, &cp, &metadata(), &versions(&[])).await?;
    ensure!(
        s.get_tuple(&stored).await?.is_some(),
        "checkpoint not found"
    );
    // Beyond the Python spec: "" is the default namespace itself, so the latest of
    // the thread's default namespace is this checkpoint. (A config without
    // checkpoint_ns is a KeyError in Python's InMemorySaver, so the spec and this port
    // pass "".)
    ensure!(
        stored.ns().is_empty(),
        "put returned namespace {:?}, not the default \"\"",
        stored.checkpoint_ns
    );
    let latest = s
        .get_tuple(&generate_config(
            cfg.thread_id.as_deref().unwrap_or(""),
            "",
            None,
        ))
        .await?;
    ensure!(
        latest.is_some_and(|t| t.checkpoint.id == cp.id),
        "the checkpoint is not the latest of the default namespace \"\""
    );
    Ok(())
}

/// Sequential puts on one thread are all retrievable.
async fn test_put_multiple_checkpoints_same_thread(s: &dyn CheckpointSaver) -> CaseResult {
    let tid = uuid4();
    let mut ids = Vec::new();
    let mut parent: Option<CheckpointConfig> = None;
    for i in 0..3 {
        let cfg = super::util::child_config(&tid, parent.as_ref());
        let cp = generate_checkpoint(&[], &[], &[]);
        parent = Some(
            s.put(
                &cfg,
                &cp,
                &generate_metadata("loop", i, &[]),
                &versions(&[]),
            )
            .await?,
        );
        ids.push(cp.id);
    }
    for id in &ids {
        let tup = s.get_tuple(&generate_config(&tid, "", Some(id))).await?;
        ensure!(tup.is_some(), "checkpoint {id} not found");
        ensure!(
            tup.is_some_and(|t| &t.checkpoint.id == id),
            "wrong checkpoint for {id}"
        );
    }
    Ok(())
}

/// Different thread ids do not interfere.
async fn test_put_multiple_threads_isolated(s: &dyn CheckpointSaver) -> CaseResult {
    let (t1, t2) = (uuid4(), uuid4());
    for (t, val) in [(&t1, "thread1"), (&t2, "thread2")] {
        let cp = generate_checkpoint(&[("x", val.into())], &[("x", v(1))], &[]);
        s.put(&config(t), &cp, &metadata(), &versions(&[("x", v(1))]))
            .await?;
    }
    let a = s.get_tuple(&config(&t1)).await?.ok_or_else(missing)?;
    let b = s.get_tuple(&config(&t2)).await?.ok_or_else(missing)?;
    ensure!(
        a.checkpoint.channel_values.get("x") == Some(&Value::from("thread1")),
        "thread1 sees {:?}",
        a.checkpoint.channel_values.get("x")
    );
    ensure!(
        b.checkpoint.channel_values.get("x") == Some(&Value::from("thread2")),
        "thread2 sees {:?}",
        b.checkpoint.channel_values.get("x")
    );
    Ok(())
}

/// The parent checkpoint id is tracked.
async fn test_put_parent_config(s: &dyn CheckpointSaver) -> CaseResult {
    let tid = uuid4();
    let stored1 = s
        .put(
            &config(&tid),
            &generate_checkpoint(&[], &[], &[]),
            &generate_metadata("loop", 0, &[]),
            &versions(&[]),
        )
        .await?;
    let stored2 = s
        .put(
            &super::util::child_config(&tid, Some(&stored1)),
            &generate_checkpoint(&[], &[], &[]),
            &generate_metadata("loop", 1, &[]),
            &versions(&[]),
        )
        .await?;
    let tup = s.get_tuple(&stored2).await?.ok_or_else(missing)?;
    let parent = tup
        .parent_config
        .ok_or_else(|| Failure("parent_config is None".to_owned()))?;
    ensure!(
        parent.checkpoint_id == stored1.checkpoint_id,
        "parent {:?} != {:?}",
        parent.checkpoint_id,
        stored1.checkpoint_id
    );
    Ok(())
}

/// Only updated channels get new blobs; unchanged ones load from earlier versions.
async fn test_put_incremental_channel_update(s: &dyn CheckpointSaver) -> CaseResult {
    let tid = uuid4();
    let cp1 = generate_checkpoint(
        &[("a", "v1".into()), ("b", "v2".into())],
        &[("a", v(1)), ("b", v(1))],
        &[],
    );
    let stored1 = s
        .put(
            &config(&tid),
            &cp1,
            &generate_metadata("loop", 0, &[]),
            &versions(&[("a", v(1)), ("b", v(1))]),
        )
        .await?;
    let cp2 = generate_checkpoint(
        &[("a", "v1_updated".into()), ("b", "v2".into())],
        &[("a", v(2)), ("b", v(1))],
        &[],
    );
    let stored2 = s
        .put(
            &super::util::child_config(&tid, Some(&stored1)),
            &cp2,
            &generate_metadata("loop", 1, &[]),
            &versions(&[("a", v(2))]),
        )
        .await?;
    let t2 = s.get_tuple(&stored2).await?.ok_or_else(missing)?;
    ensure!(
        t2.checkpoint.channel_values.get("a") == Some(&Value::from("v1_updated")),
        "a: expected 'v1_updated', got {:?}",
        t2.checkpoint.channel_values.get("a")
    );
    ensure!(
        t2.checkpoint.channel_values.get("b") == Some(&Value::from("v2")),
        "b: expected 'v2', got {:?}",
        t2.checkpoint.channel_values.get("b")
    );
    let t1 = s.get_tuple(&stored1).await?.ok_or_else(missing)?;
    ensure!(
        t1.checkpoint.channel_values.get("a") == Some(&Value::from("v1"))
            && t1.checkpoint.channel_values.get("b") == Some(&Value::from("v2")),
        "first checkpoint changed: {:?}",
        t1.checkpoint.channel_values
    );
    Ok(())
}

/// A channel that first appears in a later checkpoint.
async fn test_put_new_channel_added(s: &dyn CheckpointSaver) -> CaseResult {
    let tid = uuid4();
    let cp1 = generate_checkpoint(&[("a", "v1".into())], &[("a", v(1))], &[]);
    let stored1 = s
        .put(
            &config(&tid),
            &cp1,
            &generate_metadata("loop", 0, &[]),
            &versions(&[("a", v(1))]),
        )
        .await?;
    let cp2 = generate_checkpoint(
        &[("a", "v1".into()), ("b", "new_channel".into())],
        &[("a", v(1)), ("b", v(1))],
        &[],
    );
    let stored2 = s
        .put(
            &super::util::child_config(&tid, Some(&stored1)),
            &cp2,
            &generate_metadata("loop", 1, &[]),
            &versions(&[("b", v(1))]),
        )
        .await?;
    let t2 = s.get_tuple(&stored2).await?.ok_or_else(missing)?;
    ensure!(
        t2.checkpoint.channel_values.get("a") == Some(&Value::from("v1")),
        "a: expected 'v1', got {:?}",
        t2.checkpoint.channel_values.get("a")
    );
    ensure!(
        t2.checkpoint.channel_values.get("b") == Some(&Value::from("new_channel")),
        "b: expected 'new_channel', got {:?}",
        t2.checkpoint.channel_values.get("b")
    );
    Ok(())
}

/// A channel no longer in channel_versions is not loaded.
async fn test_put_channel_removed(s: &dyn CheckpointSaver) -> CaseResult {
    let tid = uuid4();
    let cp1 = generate_checkpoint(
        &[("a", "v1".into()), ("b", "v2".into())],
        &[("a", v(1)), ("b", v(1))],
        &[],
    );
    let stored1 = s
        .put(
            &config(&tid),
            &cp1,
            &generate_metadata("loop", 0, &[]),
            &versions(&[("a", v(1)), ("b", v(1))]),
        )
        .await?;
    let cp2 = generate_checkpoint(&[("a", "v1_updated".into())], &[("a", v(2))], &[]);
    let stored2 = s
        .put(
            &super::util::child_config(&tid, Some(&stored1)),
            &cp2,
            &generate_metadata("loop", 1, &[]),
            &versions(&[("a", v(2))]),
        )
        .await?;
    let t2 = s.get_tuple(&stored2).await?.ok_or_else(missing)?;
    ensure!(
        t2.checkpoint.channel_values.get("a") == Some(&Value::from("v1_updated")),
        "a: {:?}",
        t2.checkpoint.channel_values.get("a")
    );
    ensure!(
        !t2.checkpoint.channel_values.contains_key("b"),
        "'b' should not be present, got {:?}",
        t2.checkpoint.channel_values
    );
    Ok(())
}

/// run_id in metadata round-trips.
async fn test_put_preserves_run_id(s: &dyn CheckpointSaver) -> CaseResult {
    let run_id = uuid4();
    let md = generate_metadata("loop", 0, &[("run_id", run_id.as_str().into())]);
    let stored = s
        .put(
            &config(&uuid4()),
            &generate_checkpoint(&[], &[], &[]),
            &md,
            &versions(&[]),
        )
        .await?;
    let tup = s.get_tuple(&stored).await?.ok_or_else(missing)?;
    ensure!(
        tup.metadata.run_id() == Some(run_id.as_str()),
        "run_id: expected {run_id:?}, got {:?}",
        tup.metadata.run_id()
    );
    Ok(())
}

/// versions_seen values (not just keys) round-trip.
async fn test_put_preserves_versions_seen_values(s: &dyn CheckpointSaver) -> CaseResult {
    let node1: &[(&str, _)] = &[("ch_a", v(1)), ("ch_b", v(2))];
    let node2: &[(&str, _)] = &[("ch_a", v(3))];
    let cp = generate_checkpoint(&[], &[], &[("node1", node1), ("node2", node2)]);
    let stored = s
        .put(&config(&uuid4()), &cp, &metadata(), &versions(&[]))
        .await?;
    let tup = s.get_tuple(&stored).await?.ok_or_else(missing)?;
    for (node, expected) in [("node1", node1), ("node2", node2)] {
        let actual = tup
            .checkpoint
            .versions_seen
            .get(node)
            .ok_or_else(|| Failure(format!("versions_seen[{node}] missing")))?;
        for (ch, want) in expected {
            let got = actual.get(*ch);
            ensure!(got.is_some(), "versions_seen[{node}][{ch}] missing");
            ensure!(
                got.map(version_major) == Some(version_major(want)),
                "versions_seen[{node}][{ch}]: expected {want}, got {got:?}"
            );
        }
    }
    Ok(())
}
