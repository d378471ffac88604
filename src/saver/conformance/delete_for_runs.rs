//! `spec/test_delete_for_runs.py`: `delete_for_runs`.

use std::collections::HashSet;

use super::case_list;
use super::util::{
    child_config, config, ensure, generate_checkpoint, generate_config, generate_metadata,
    list_all, run_id_of, uuid4, versions, writes, CaseResult, Failure,
};
use crate::saver::traits::{Capability, CheckpointSaver};
use crate::saver::types::CheckpointConfig;

pub(super) fn cases() -> Vec<super::Case> {
    case_list![Capability::DeleteForRuns;
        test_delete_for_runs_single,
        test_delete_for_runs_multiple,
        test_delete_for_runs_preserves_other_runs,
        test_delete_for_runs_removes_writes,
        test_delete_for_runs_empty_list_noop,
        test_delete_for_runs_nonexistent_noop,
        test_delete_for_runs_across_namespaces,
    ]
}

async fn put_with_run_id(
    s: &dyn CheckpointSaver,
    tid: &str,
    run_id: &str,
    ns: &str,
    parent: Option<&CheckpointConfig>,
) -> Result<CheckpointConfig, Failure> {
    let mut cfg = generate_config(tid, ns, None);
    if parent.is_some() {
        cfg = child_config(tid, parent).with_ns(ns);
    }
    let md = generate_metadata("loop", 0, &[("run_id", run_id.into())]);
    Ok(s.put(
        &cfg,
        &generate_checkpoint(&[], &[], &[]),
        &md,
        &versions(&[]),
    )
    .await?)
}

async fn run_ids(
    s: &dyn CheckpointSaver,
    cfg: &CheckpointConfig,
) -> Result<HashSet<String>, Failure> {
    Ok(list_all(s, cfg)
        .await?
        .iter()
        .filter_map(run_id_of)
        .collect())
}

/// One run id removed.
async fn test_delete_for_runs_single(s: &dyn CheckpointSaver) -> CaseResult {
    let tid = uuid4();
    let (r1, r2) = (uuid4(), uuid4());
    let s1 = put_with_run_id(s, &tid, &r1, "", None).await?;
    put_with_run_id(s, &tid, &r2, "", Some(&s1)).await?;
    let pre = run_ids(s, &config(&tid)).await?;
    ensure!(
        pre.contains(&r1) && pre.contains(&r2),
        "pre-delete: both runs should exist"
    );
    s.delete_for_runs(std::slice::from_ref(&r1)).await?;
    let post = run_ids(s, &config(&tid)).await?;
    ensure!(!post.contains(&r1), "run1 survived");
    ensure!(post.contains(&r2), "run2 was deleted");
    Ok(())
}

/// Several run ids removed.
async fn test_delete_for_runs_multiple(s: &dyn CheckpointSaver) -> CaseResult {
    let tid = uuid4();
    let (r1, r2, r3) = (uuid4(), uuid4(), uuid4());
    let s1 = put_with_run_id(s, &tid, &r1, "", None).await?;
    let s2 = put_with_run_id(s, &tid, &r2, "", Some(&s1)).await?;
    put_with_run_id(s, &tid, &r3, "", Some(&s2)).await?;
    let pre = run_ids(s, &config(&tid)).await?;
    ensure!(
        pre.contains(&r1) && pre.contains(&r2) && pre.contains(&r3),
        "pre-delete: all runs should exist"
    );
    s.delete_for_runs(&[r1.clone(), r2.clone()]).await?;
    let post = run_ids(s, &config(&tid)).await?;
    ensure!(
        !post.contains(&r1) && !post.contains(&r2),
        "deleted runs survived: {post:?}"
    );
    ensure!(post.contains(&r3), "run3 was deleted");
    Ok(())
}

/// Unrelated runs are untouched.
async fn test_delete_for_runs_preserves_other_runs(s: &dyn CheckpointSaver) -> CaseResult {
    let tid = uuid4();
    let (keep, delete) = (uuid4(), uuid4());
    put_with_run_id(s, &tid, &keep, "", None).await?;
    put_with_run_id(s, &tid, &delete, "", None).await?;
    let pre = run_ids(s, &config(&tid)).await?;
    ensure!(
        pre.contains(&keep) && pre.contains(&delete),
        "pre-delete: both runs should exist"
    );
    s.delete_for_runs(&[delete]).await?;
    ensure!(
        run_ids(s, &config(&tid)).await?.contains(&keep),
        "kept run was deleted"
    );
    Ok(())
}

/// The deleted checkpoint's writes go with it.
async fn test_delete_for_runs_removes_writes(s: &dyn CheckpointSaver) -> CaseResult {
    let tid = uuid4();
    let r1 = uuid4();
    let cp = generate_checkpoint(&[], &[], &[]);
    let md = generate_metadata("loop", 0, &[("run_id", r1.as_str().into())]);
    let stored = s.put(&config(&tid), &cp, &md, &versions(&[])).await?;
    s.put_writes(&stored, &writes(&[("ch", "val".into())]), &uuid4(), "")
        .await?;
    let pre = s.get_tuple(&stored).await?;
    ensure!(pre.is_some(), "pre-delete: checkpoint should exist");
    let n = pre.map(|t| t.pending_writes.len()).unwrap_or(0);
    ensure!(n == 1, "pre-delete: expected 1 write, got {n}");
    s.delete_for_runs(&[r1]).await?;
    ensure!(s.get_tuple(&stored).await?.is_none(), "checkpoint survived");
    // Beyond the Python spec: the writes are gone too, not only unreachable. Storing
    // the same checkpoint again must not bring them back.
    let n = super::util::writes_after_restoring(s, &stored, &cp).await?;
    ensure!(
        n == 0,
        "{n} writes of the deleted checkpoint survived delete_for_runs (they reappear when its id is stored again)"
    );
    Ok(())
}

/// An empty list is not an error (and deletes nothing).
async fn test_delete_for_runs_empty_list_noop(s: &dyn CheckpointSaver) -> CaseResult {
    let tid = uuid4();
    let stored = put_with_run_id(s, &tid, &uuid4(), "", None).await?;
    s.delete_for_runs(&[]).await?;
    ensure!(
        s.get_tuple(&stored).await?.is_some(),
        "delete_for_runs([]) deleted a checkpoint"
    );
    Ok(())
}

/// Missing run ids are not an error.
async fn test_delete_for_runs_nonexistent_noop(s: &dyn CheckpointSaver) -> CaseResult {
    s.delete_for_runs(&[uuid4()]).await?;
    Ok(())
}

/// Every namespace is cleaned.
async fn test_delete_for_runs_across_namespaces(s: &dyn CheckpointSaver) -> CaseResult {
    let tid = uuid4();
    let r1 = uuid4();
    for ns in ["", "child:1"] {
        put_with_run_id(s, &tid, &r1, ns, None).await?;
    }
    for ns in ["", "child:1"] {
        ensure!(
            run_ids(s, &generate_config(&tid, ns, None))
                .await?
                .contains(&r1),
            "pre-delete: run1 should exist in ns {ns:?}"
        );
    }
    s.delete_for_runs(std::slice::from_ref(&r1)).await?;
    for ns in ["", "child:1"] {
        ensure!(
            !run_ids(s, &generate_config(&tid, ns, None))
                .await?
                .contains(&r1),
            "run1 survived in ns {ns:?}"
        );
    }
    Ok(())
}
