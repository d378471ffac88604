//! `spec/test_get_tuple.py`: `get_tuple` retrieval.

use super::case_list;
use super::util::{
    child_config, config, ensure, generate_checkpoint, generate_config, generate_metadata,
    metadata, uuid4, v, values_eq, versions, writes, CaseResult, Failure,
};
use crate::saver::traits::{Capability, CheckpointSaver};
use crate::saver::types::CheckpointConfig;
use crate::value::Value;

pub(super) fn cases() -> Vec<super::Case> {
    case_list![Capability::GetTuple;
        test_get_tuple_nonexistent_returns_none,
        test_get_tuple_latest_when_no_checkpoint_id,
        test_get_tuple_specific_checkpoint_id,
        test_get_tuple_config_structure,
        test_get_tuple_checkpoint_fields,
        test_get_tuple_metadata,
        test_get_tuple_parent_config,
        test_get_tuple_pending_writes,
        test_get_tuple_respects_namespace,
        test_get_tuple_nonexistent_checkpoint_id,
    ]
}

fn missing() -> Failure {
    Failure("get_tuple returned None for a stored checkpoint".to_owned())
}

/// A missing thread gives None.
async fn test_get_tuple_nonexistent_returns_none(s: &dyn CheckpointSaver) -> CaseResult {
    ensure!(
        s.get_tuple(&config(&uuid4())).await?.is_none(),
        "expected None"
    );
    Ok(())
}

/// Without a checkpoint_id, the newest checkpoint.
async fn test_get_tuple_latest_when_no_checkpoint_id(s: &dyn CheckpointSaver) -> CaseResult {
    let tid = uuid4();
    let mut ids = Vec::new();
    let mut parent: Option<CheckpointConfig> = None;
    for i in 0..3 {
        let cp = generate_checkpoint(&[], &[], &[]);
        parent = Some(
            s.put(
                &child_config(&tid, parent.as_ref()),
                &cp,
                &generate_metadata("loop", i, &[]),
                &versions(&[]),
            )
            .await?,
        );
        ids.push(cp.id);
    }
    let tup = s.get_tuple(&config(&tid)).await?.ok_or_else(missing)?;
    ensure!(
        Some(&tup.checkpoint.id) == ids.last(),
        "got {}, expected {:?}",
        tup.checkpoint.id,
        ids.last()
    );
    ensure!(
        tup.metadata.step() == Some(2),
        "expected latest step=2, got {:?}",
        tup.metadata.step()
    );
    Ok(())
}

/// With a checkpoint_id, exactly that checkpoint.
async fn test_get_tuple_specific_checkpoint_id(s: &dyn CheckpointSaver) -> CaseResult {
    let tid = uuid4();
    let cp1 = generate_checkpoint(&[], &[], &[]);
    let stored1 = s
        .put(
            &config(&tid),
            &cp1,
            &generate_metadata("loop", 0, &[]),
            &versions(&[]),
        )
        .await?;
    s.put(
        &child_config(&tid, Some(&stored1)),
        &generate_checkpoint(&[], &[], &[]),
        &generate_metadata("loop", 1, &[]),
        &versions(&[]),
    )
    .await?;
    let tup = s.get_tuple(&stored1).await?.ok_or_else(missing)?;
    ensure!(
        tup.checkpoint.id == cp1.id,
        "got {}, expected {}",
        tup.checkpoint.id,
        cp1.id
    );
    Ok(())
}

/// tuple.config has thread_id, checkpoint_ns, checkpoint_id.
async fn test_get_tuple_config_structure(s: &dyn CheckpointSaver) -> CaseResult {
    let tid = uuid4();
    let cp = generate_checkpoint(&[], &[], &[]);
    let stored = s
        .put(&config(&tid), &cp, &metadata(), &versions(&[]))
        .await?;
    let tup = s.get_tuple(&stored).await?.ok_or_else(missing)?;
    ensure!(
        tup.config.thread_id.as_deref() == Some(tid.as_str()),
        "thread_id {:?}",
        tup.config.thread_id
    );
    ensure!(
        tup.config.ns().is_empty(),
        "expected checkpoint_ns='', got {:?}",
        tup.config.checkpoint_ns
    );
    ensure!(
        tup.config.checkpoint_id.as_deref() == Some(cp.id.as_str()),
        "checkpoint_id {:?}",
        tup.config.checkpoint_id
    );
    Ok(())
}

/// Every Checkpoint field is present.
async fn test_get_tuple_checkpoint_fields(s: &dyn CheckpointSaver) -> CaseResult {
    let cp = generate_checkpoint(&[("k", "v".into())], &[("k", v(1))], &[]);
    let stored = s
        .put(
            &config(&uuid4()),
            &cp,
            &metadata(),
            &versions(&[("k", v(1))]),
        )
        .await?;
    let c = s.get_tuple(&stored).await?.ok_or_else(missing)?.checkpoint;
    ensure!(c.id == cp.id, "id mismatch: {:?} != {:?}", c.id, cp.id);
    ensure!(c.v == 1, "expected v=1, got {}", c.v);
    ensure!(!c.ts.is_empty(), "ts should be non-empty");
    ensure!(
        values_eq(&c.channel_values, &[("k", Value::from("v"))]),
        "channel_values: {:?}",
        c.channel_values
    );
    let keys = c.key_order();
    ensure!(
        keys.iter().any(|k| k == "channel_versions") && keys.iter().any(|k| k == "versions_seen"),
        "missing fields: {keys:?}"
    );
    Ok(())
}

/// Metadata is populated.
async fn test_get_tuple_metadata(s: &dyn CheckpointSaver) -> CaseResult {
    let stored = s
        .put(
            &config(&uuid4()),
            &generate_checkpoint(&[], &[], &[]),
            &generate_metadata("input", -1, &[]),
            &versions(&[]),
        )
        .await?;
    let tup = s.get_tuple(&stored).await?.ok_or_else(missing)?;
    ensure!(
        tup.metadata.source() == Some("input"),
        "source {:?}",
        tup.metadata.source()
    );
    ensure!(
        tup.metadata.step() == Some(-1),
        "step {:?}",
        tup.metadata.step()
    );
    Ok(())
}

/// parent_config when a parent exists, None otherwise.
async fn test_get_tuple_parent_config(s: &dyn CheckpointSaver) -> CaseResult {
    let tid = uuid4();
    let stored1 = s
        .put(
            &config(&tid),
            &generate_checkpoint(&[], &[], &[]),
            &generate_metadata("loop", 0, &[]),
            &versions(&[]),
        )
        .await?;
    let t1 = s.get_tuple(&stored1).await?.ok_or_else(missing)?;
    ensure!(
        t1.parent_config.is_none(),
        "first checkpoint has parent {:?}",
        t1.parent_config
    );
    let stored2 = s
        .put(
            &child_config(&tid, Some(&stored1)),
            &generate_checkpoint(&[], &[], &[]),
            &generate_metadata("loop", 1, &[]),
            &versions(&[]),
        )
        .await?;
    let t2 = s.get_tuple(&stored2).await?.ok_or_else(missing)?;
    let parent = t2
        .parent_config
        .ok_or_else(|| Failure("parent_config is None".to_owned()))?;
    ensure!(
        parent.checkpoint_id == stored1.checkpoint_id,
        "parent {:?}",
        parent.checkpoint_id
    );
    Ok(())
}

/// Writes from put_writes are visible.
async fn test_get_tuple_pending_writes(s: &dyn CheckpointSaver) -> CaseResult {
    let stored = s
        .put(
            &config(&uuid4()),
            &generate_checkpoint(&[], &[], &[]),
            &metadata(),
            &versions(&[]),
        )
        .await?;
    let task = uuid4();
    s.put_writes(&stored, &writes(&[("ch", "val".into())]), &task, "")
        .await?;
    let ws = s
        .get_tuple(&stored)
        .await?
        .ok_or_else(missing)?
        .pending_writes;
    ensure!(ws.len() == 1, "expected 1 write, got {}", ws.len());
    let w = ws.first().ok_or_else(|| Failure("no write".to_owned()))?;
    ensure!(w.task_id == task, "task_id mismatch: {:?}", w.task_id);
    ensure!(w.channel == "ch", "channel mismatch: {:?}", w.channel);
    ensure!(
        w.value == Value::from("val"),
        "value mismatch: {:?}",
        w.value
    );
    Ok(())
}

/// checkpoint_ns selects the namespace.
async fn test_get_tuple_respects_namespace(s: &dyn CheckpointSaver) -> CaseResult {
    let tid = uuid4();
    let cp_root = generate_checkpoint(&[], &[], &[]);
    let root = s
        .put(
            &generate_config(&tid, "", None),
            &cp_root,
            &metadata(),
            &versions(&[]),
        )
        .await?;
    let cp_child = generate_checkpoint(&[], &[], &[]);
    let child = s
        .put(
            &generate_config(&tid, "child:1", None),
            &cp_child,
            &metadata(),
            &versions(&[]),
        )
        .await?;
    let t = s.get_tuple(&root).await?.ok_or_else(missing)?;
    ensure!(
        t.checkpoint.id == cp_root.id,
        "root got {}",
        t.checkpoint.id
    );
    let t = s.get_tuple(&child).await?.ok_or_else(missing)?;
    ensure!(
        t.checkpoint.id == cp_child.id,
        "child got {}",
        t.checkpoint.id
    );
    // Beyond the Python spec: without a checkpoint id (ids are unique across
    // namespaces, so the lookups above cannot tell), the latest of each namespace.
    for (ns, want) in [("", &cp_root.id), ("child:1", &cp_child.id)] {
        let t = s
            .get_tuple(&generate_config(&tid, ns, None))
            .await?
            .ok_or_else(missing)?;
        ensure!(
            t.checkpoint.id == *want,
            "the latest of namespace {ns:?} is {}, got {}",
            want,
            t.checkpoint.id
        );
    }
    Ok(())
}

/// A specific but missing checkpoint_id gives None.
async fn test_get_tuple_nonexistent_checkpoint_id(s: &dyn CheckpointSaver) -> CaseResult {
    let tid = uuid4();
    s.put(
        &config(&tid),
        &generate_checkpoint(&[], &[], &[]),
        &metadata(),
        &versions(&[]),
    )
    .await?;
    let bad = generate_config(&tid, "", Some(&uuid4()));
    ensure!(
        s.get_tuple(&bad).await?.is_none(),
        "expected None for a missing checkpoint_id"
    );
    Ok(())
}
