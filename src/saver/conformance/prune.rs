//! `spec/test_prune.py`: `prune`.

use super::case_list;
use super::util::{
    child_config, config, ensure, generate_checkpoint, generate_config, generate_metadata, ids,
    list_all, uuid4, versions, writes, CaseResult, Failure,
};
use crate::saver::traits::{Capability, CheckpointSaver, PruneStrategy};
use crate::saver::types::CheckpointConfig;
use crate::value::Value;

pub(super) fn cases() -> Vec<super::Case> {
    case_list![Capability::Prune;
        test_prune_keep_latest_single_thread,
        test_prune_keep_latest_multiple_threads,
        test_prune_keep_latest_across_namespaces,
        test_prune_keep_latest_preserves_writes,
        test_prune_delete_all,
        test_prune_preserves_other_threads,
        test_prune_empty_list_noop,
        test_prune_nonexistent_noop,
    ]
}

async fn setup_ns(
    s: &dyn CheckpointSaver,
    tid: &str,
    ns: &str,
    n: i64,
) -> Result<Vec<CheckpointConfig>, Failure> {
    let mut stored = Vec::new();
    let mut parent: Option<CheckpointConfig> = None;
    for i in 0..n {
        let cfg = child_config(tid, parent.as_ref()).with_ns(ns);
        let c = s
            .put(
                &cfg,
                &generate_checkpoint(&[], &[], &[]),
                &generate_metadata("loop", i, &[]),
                &versions(&[]),
            )
            .await?;
        stored.push(c.clone());
        parent = Some(c);
    }
    Ok(stored)
}

async fn setup(
    s: &dyn CheckpointSaver,
    tid: &str,
    n: i64,
) -> Result<Vec<CheckpointConfig>, Failure> {
    setup_ns(s, tid, "", n).await
}

fn last(c: &[CheckpointConfig]) -> Result<&CheckpointConfig, Failure> {
    c.last()
        .ok_or_else(|| Failure("setup stored nothing".to_owned()))
}

async fn only_latest(
    s: &dyn CheckpointSaver,
    cfg: &CheckpointConfig,
    expected: &CheckpointConfig,
) -> CaseResult {
    let r = list_all(s, cfg).await?;
    ensure!(
        r.len() == 1,
        "expected 1 checkpoint in ns {:?}, got {}",
        cfg.ns(),
        r.len()
    );
    ensure!(
        r.first().and_then(|t| t.config.checkpoint_id.clone()) == expected.checkpoint_id,
        "kept {:?}, expected {:?}",
        ids(&r),
        expected.checkpoint_id
    );
    Ok(())
}

/// Only the latest checkpoint survives.
async fn test_prune_keep_latest_single_thread(s: &dyn CheckpointSaver) -> CaseResult {
    let tid = uuid4();
    let c = setup(s, &tid, 4).await?;
    s.prune(std::slice::from_ref(&tid), PruneStrategy::KeepLatest)
        .await?;
    only_latest(s, &config(&tid), last(&c)?).await
}

/// Each thread keeps its latest.
async fn test_prune_keep_latest_multiple_threads(s: &dyn CheckpointSaver) -> CaseResult {
    let (t1, t2) = (uuid4(), uuid4());
    let c1 = setup(s, &t1, 3).await?;
    let c2 = setup(s, &t2, 2).await?;
    s.prune(&[t1.clone(), t2.clone()], PruneStrategy::KeepLatest)
        .await?;
    only_latest(s, &config(&t1), last(&c1)?).await?;
    only_latest(s, &config(&t2), last(&c2)?).await
}

/// The latest of every namespace is kept.
async fn test_prune_keep_latest_across_namespaces(s: &dyn CheckpointSaver) -> CaseResult {
    let tid = uuid4();
    let root = setup_ns(s, &tid, "", 3).await?;
    let child = setup_ns(s, &tid, "child:1", 2).await?;
    s.prune(std::slice::from_ref(&tid), PruneStrategy::KeepLatest)
        .await?;
    only_latest(s, &generate_config(&tid, "", None), last(&root)?).await?;
    only_latest(s, &generate_config(&tid, "child:1", None), last(&child)?).await
}

/// The latest checkpoint's writes are kept.
async fn test_prune_keep_latest_preserves_writes(s: &dyn CheckpointSaver) -> CaseResult {
    let tid = uuid4();
    let c = setup(s, &tid, 3).await?;
    s.put_writes(last(&c)?, &writes(&[("ch", "val".into())]), &uuid4(), "")
        .await?;
    s.prune(std::slice::from_ref(&tid), PruneStrategy::KeepLatest)
        .await?;
    let tup = s
        .get_tuple(&config(&tid))
        .await?
        .ok_or_else(|| Failure("no checkpoint after prune".to_owned()))?;
    ensure!(
        tup.pending_writes.len() == 1,
        "expected 1 write, got {}",
        tup.pending_writes.len()
    );
    let w = tup
        .pending_writes
        .first()
        .ok_or_else(|| Failure("no write".to_owned()))?;
    ensure!(w.channel == "ch", "channel mismatch: {:?}", w.channel);
    ensure!(
        w.value == Value::from("val"),
        "value mismatch: {:?}",
        w.value
    );
    Ok(())
}

/// The delete strategy removes everything.
async fn test_prune_delete_all(s: &dyn CheckpointSaver) -> CaseResult {
    let tid = uuid4();
    setup(s, &tid, 3).await?;
    s.prune(std::slice::from_ref(&tid), PruneStrategy::Delete)
        .await?;
    let r = list_all(s, &config(&tid)).await?;
    ensure!(r.is_empty(), "{} checkpoints survived", r.len());
    Ok(())
}

/// Threads not listed are untouched.
async fn test_prune_preserves_other_threads(s: &dyn CheckpointSaver) -> CaseResult {
    let (t1, t2) = (uuid4(), uuid4());
    setup(s, &t1, 3).await?;
    setup(s, &t2, 2).await?;
    let pre = ids(&list_all(s, &config(&t2)).await?);
    s.prune(&[t1], PruneStrategy::KeepLatest).await?;
    let post = ids(&list_all(s, &config(&t2)).await?);
    ensure!(pre == post, "other thread changed: {pre:?} -> {post:?}");
    Ok(())
}

/// An empty list is not an error.
async fn test_prune_empty_list_noop(s: &dyn CheckpointSaver) -> CaseResult {
    let tid = uuid4();
    setup(s, &tid, 3).await?;
    let pre = ids(&list_all(s, &config(&tid)).await?);
    s.prune(&[], PruneStrategy::KeepLatest).await?;
    let post = ids(&list_all(s, &config(&tid)).await?);
    ensure!(
        pre == post,
        "prune([]) changed a thread: {pre:?} -> {post:?}"
    );
    Ok(())
}

/// Missing threads are not an error.
async fn test_prune_nonexistent_noop(s: &dyn CheckpointSaver) -> CaseResult {
    s.prune(&[uuid4()], PruneStrategy::KeepLatest).await?;
    Ok(())
}
