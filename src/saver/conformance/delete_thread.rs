//! `spec/test_delete_thread.py`: `delete_thread`.

use super::case_list;
use super::util::{
    child_config, config, ensure, generate_checkpoint, generate_config, generate_metadata,
    list_all, metadata, uuid4, versions, writes, CaseResult,
};
use crate::saver::traits::{Capability, CheckpointSaver};
use crate::saver::types::{ChannelVersion, CheckpointConfig};
use crate::value::Value;

pub(super) fn cases() -> Vec<super::Case> {
    case_list![Capability::DeleteThread;
        test_delete_thread_removes_checkpoints,
        test_delete_thread_removes_writes,
        test_delete_thread_removes_all_namespaces,
        test_delete_thread_preserves_other_threads,
        test_delete_thread_nonexistent_noop,
        test_delete_thread_then_restore_reads_new_values,
    ]
}

/// Every checkpoint is gone after delete.
async fn test_delete_thread_removes_checkpoints(s: &dyn CheckpointSaver) -> CaseResult {
    let tid = uuid4();
    let mut parent: Option<CheckpointConfig> = None;
    for i in 0..3 {
        parent = Some(
            s.put(
                &child_config(&tid, parent.as_ref()),
                &generate_checkpoint(&[], &[], &[]),
                &generate_metadata("loop", i, &[]),
                &versions(&[]),
            )
            .await?,
        );
    }
    ensure!(
        s.get_tuple(&config(&tid)).await?.is_some(),
        "pre-delete: checkpoint should exist"
    );
    s.delete_thread(&tid).await?;
    ensure!(
        s.get_tuple(&config(&tid)).await?.is_none(),
        "checkpoint survived delete"
    );
    let r = list_all(s, &config(&tid)).await?;
    ensure!(r.is_empty(), "{} checkpoints listed after delete", r.len());
    Ok(())
}

/// Pending writes are gone after delete.
async fn test_delete_thread_removes_writes(s: &dyn CheckpointSaver) -> CaseResult {
    let tid = uuid4();
    let cp = generate_checkpoint(&[], &[], &[]);
    let stored = s
        .put(&config(&tid), &cp, &metadata(), &versions(&[]))
        .await?;
    s.put_writes(&stored, &writes(&[("ch", "val".into())]), &uuid4(), "")
        .await?;
    let pre = s.get_tuple(&config(&tid)).await?;
    ensure!(pre.is_some(), "pre-delete: checkpoint should exist");
    let n = pre.map(|t| t.pending_writes.len()).unwrap_or(0);
    ensure!(n == 1, "pre-delete: expected 1 write, got {n}");
    s.delete_thread(&tid).await?;
    ensure!(
        s.get_tuple(&config(&tid)).await?.is_none(),
        "checkpoint survived delete"
    );
    // Beyond the Python spec: the writes are gone too, not only unreachable. Storing
    // the same checkpoint again must not bring them back.
    let n = super::util::writes_after_restoring(s, &stored, &cp).await?;
    ensure!(
        n == 0,
        "{n} writes of the deleted thread survived delete_thread (they reappear when its checkpoint is stored again)"
    );
    Ok(())
}

/// Root and child namespaces are both removed.
async fn test_delete_thread_removes_all_namespaces(s: &dyn CheckpointSaver) -> CaseResult {
    let tid = uuid4();
    for ns in ["", "child:1"] {
        s.put(
            &generate_config(&tid, ns, None),
            &generate_checkpoint(&[], &[], &[]),
            &metadata(),
            &versions(&[]),
        )
        .await?;
    }
    for ns in ["", "child:1"] {
        ensure!(
            s.get_tuple(&generate_config(&tid, ns, None))
                .await?
                .is_some(),
            "pre-delete: namespace {ns:?} should have data"
        );
    }
    s.delete_thread(&tid).await?;
    for ns in ["", "child:1"] {
        ensure!(
            s.get_tuple(&generate_config(&tid, ns, None))
                .await?
                .is_none(),
            "namespace {ns:?} survived delete"
        );
    }
    Ok(())
}

/// Other threads are untouched.
async fn test_delete_thread_preserves_other_threads(s: &dyn CheckpointSaver) -> CaseResult {
    let (t1, t2) = (uuid4(), uuid4());
    for t in [&t1, &t2] {
        s.put(
            &config(t),
            &generate_checkpoint(&[], &[], &[]),
            &metadata(),
            &versions(&[]),
        )
        .await?;
    }
    s.delete_thread(&t1).await?;
    ensure!(
        s.get_tuple(&config(&t1)).await?.is_none(),
        "deleted thread still there"
    );
    ensure!(
        s.get_tuple(&config(&t2)).await?.is_some(),
        "other thread was deleted"
    );
    Ok(())
}

/// Deleting a missing thread is not an error.
async fn test_delete_thread_nonexistent_noop(s: &dyn CheckpointSaver) -> CaseResult {
    let other = uuid4();
    s.put(
        &config(&other),
        &generate_checkpoint(&[], &[], &[]),
        &metadata(),
        &versions(&[]),
    )
    .await?;
    s.delete_thread(&uuid4()).await?;
    ensure!(
        s.get_tuple(&config(&other)).await?.is_some(),
        "deleting a missing thread deleted another thread"
    );
    Ok(())
}

/// Beyond the Python spec: the channel values (blobs) go too. A thread deleted and
/// then stored again, the same checkpoint id with the same channel version but a new
/// value, reads the new value, not one a blob left behind by the delete.
async fn test_delete_thread_then_restore_reads_new_values(s: &dyn CheckpointSaver) -> CaseResult {
    let tid = uuid4();
    let value = |v: &str| Value::map([("v", Value::from(v))]);
    let version = [("ch", ChannelVersion::Int(1))];
    let mut cp = generate_checkpoint(&[("ch", value("old"))], &version, &[]);
    s.put(&config(&tid), &cp, &metadata(), &versions(&version))
        .await?;
    let old = s.get_tuple(&config(&tid)).await?;
    let got = old.and_then(|t| t.checkpoint.channel_values.get("ch").cloned());
    ensure!(
        got == Some(value("old")),
        "pre-delete: channel_values[\"ch\"] is {got:?}, expected {:?}",
        value("old")
    );
    s.delete_thread(&tid).await?;
    cp.channel_values.insert("ch".to_owned(), value("new"));
    s.put(&config(&tid), &cp, &metadata(), &versions(&version))
        .await?;
    let got = s
        .get_tuple(&config(&tid))
        .await?
        .and_then(|t| t.checkpoint.channel_values.get("ch").cloned());
    ensure!(
        got == Some(value("new")),
        "after delete_thread and storing the checkpoint again at the same version, \
         channel_values[\"ch\"] is {got:?}, expected {:?} (a value of the deleted thread \
         survived delete_thread)",
        value("new")
    );
    Ok(())
}
