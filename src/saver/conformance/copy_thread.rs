//! `spec/test_copy_thread.py`: `copy_thread`.

use super::case_list;
use super::util::{
    child_config, config, ensure, generate_checkpoint, generate_config, generate_metadata, ids,
    list_all, py_eq, uuid4, v, versions, writes, CaseResult, Failure,
};
use crate::saver::traits::{Capability, CheckpointSaver};
use crate::saver::types::CheckpointConfig;
use crate::value::Value;

pub(super) fn cases() -> Vec<super::Case> {
    case_list![Capability::CopyThread;
        test_copy_thread_basic,
        test_copy_thread_all_checkpoints,
        test_copy_thread_preserves_metadata,
        test_copy_thread_preserves_namespaces,
        test_copy_thread_preserves_writes,
        test_copy_thread_preserves_ordering,
        test_copy_thread_source_unchanged,
        test_copy_thread_nonexistent_source,
    ]
}

/// `n` checkpoints per namespace, each storing `{"step": i}` at version 1.
async fn setup(
    s: &dyn CheckpointSaver,
    tid: &str,
    n: i64,
    namespaces: &[&str],
) -> Result<Vec<CheckpointConfig>, Failure> {
    let mut stored = Vec::new();
    for ns in namespaces {
        let mut parent: Option<CheckpointConfig> = None;
        for i in 0..n {
            let cfg = child_config(tid, parent.as_ref()).with_ns(*ns);
            let cp = generate_checkpoint(&[("step", Value::from(i))], &[("step", v(1))], &[]);
            let c = s
                .put(
                    &cfg,
                    &cp,
                    &generate_metadata("loop", i, &[]),
                    &versions(&[("step", v(1))]),
                )
                .await?;
            stored.push(c.clone());
            parent = Some(c);
        }
    }
    Ok(stored)
}

/// Checkpoints appear on the target thread.
async fn test_copy_thread_basic(s: &dyn CheckpointSaver) -> CaseResult {
    let (src, dst) = (uuid4(), uuid4());
    setup(s, &src, 3, &[""]).await?;
    s.copy_thread(&src, &dst).await?;
    let r = list_all(s, &config(&dst)).await?;
    ensure!(
        r.len() == 3,
        "expected 3 copied checkpoints, got {}",
        r.len()
    );
    Ok(())
}

/// Every checkpoint is copied, with its values.
async fn test_copy_thread_all_checkpoints(s: &dyn CheckpointSaver) -> CaseResult {
    let (src, dst) = (uuid4(), uuid4());
    setup(s, &src, 3, &[""]).await?;
    s.copy_thread(&src, &dst).await?;
    let mut a = list_all(s, &config(&src)).await?;
    let mut b = list_all(s, &config(&dst)).await?;
    ensure!(
        a.len() == b.len(),
        "source has {}, target {}",
        a.len(),
        b.len()
    );
    a.sort_by(|x, y| x.checkpoint.id.cmp(&y.checkpoint.id));
    b.sort_by(|x, y| x.checkpoint.id.cmp(&y.checkpoint.id));
    for (x, y) in a.iter().zip(&b) {
        ensure!(
            x.checkpoint.channel_values == y.checkpoint.channel_values,
            "channel_values mismatch for checkpoint {}",
            x.checkpoint.id
        );
    }
    Ok(())
}

/// Metadata is intact on the copies.
async fn test_copy_thread_preserves_metadata(s: &dyn CheckpointSaver) -> CaseResult {
    let (src, dst) = (uuid4(), uuid4());
    setup(s, &src, 2, &[""]).await?;
    s.copy_thread(&src, &dst).await?;
    let mut a = list_all(s, &config(&src)).await?;
    let mut b = list_all(s, &config(&dst)).await?;
    ensure!(
        a.len() == b.len(),
        "source has {}, target {}",
        a.len(),
        b.len()
    );
    a.sort_by_key(|t| t.metadata.step().unwrap_or(0));
    b.sort_by_key(|t| t.metadata.step().unwrap_or(0));
    for (x, y) in a.iter().zip(&b) {
        for (k, val) in &x.metadata.0 {
            let nil = Value::Nil;
            let other = y.metadata.get(k).unwrap_or(&nil);
            ensure!(
                py_eq(val, other),
                "metadata[{k:?}] mismatch: {val:?} != {other:?}"
            );
        }
    }
    Ok(())
}

/// Root and child namespaces are copied.
async fn test_copy_thread_preserves_namespaces(s: &dyn CheckpointSaver) -> CaseResult {
    let (src, dst) = (uuid4(), uuid4());
    setup(s, &src, 1, &["", "child:1"]).await?;
    s.copy_thread(&src, &dst).await?;
    for ns in ["", "child:1"] {
        let r = list_all(s, &generate_config(&dst, ns, None)).await?;
        ensure!(
            r.len() == 1,
            "expected 1 checkpoint in namespace {ns:?}, got {}",
            r.len()
        );
    }
    Ok(())
}

/// Pending writes are copied.
async fn test_copy_thread_preserves_writes(s: &dyn CheckpointSaver) -> CaseResult {
    let (src, dst) = (uuid4(), uuid4());
    let stored = setup(s, &src, 1, &[""]).await?;
    let last = stored
        .last()
        .ok_or_else(|| Failure("setup stored nothing".to_owned()))?;
    s.put_writes(last, &writes(&[("ch", "write_val".into())]), &uuid4(), "")
        .await?;
    s.copy_thread(&src, &dst).await?;
    let tup = s
        .get_tuple(&config(&dst))
        .await?
        .ok_or_else(|| Failure("target thread has no checkpoint".to_owned()))?;
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
        w.value == Value::from("write_val"),
        "value mismatch: {:?}",
        w.value
    );
    Ok(())
}

/// The order of checkpoints is kept.
async fn test_copy_thread_preserves_ordering(s: &dyn CheckpointSaver) -> CaseResult {
    let (src, dst) = (uuid4(), uuid4());
    setup(s, &src, 4, &[""]).await?;
    s.copy_thread(&src, &dst).await?;
    let a = ids(&list_all(s, &config(&src)).await?);
    let b = ids(&list_all(s, &config(&dst)).await?);
    ensure!(a == b, "source order {a:?}, target order {b:?}");
    Ok(())
}

/// The source thread is intact after the copy.
async fn test_copy_thread_source_unchanged(s: &dyn CheckpointSaver) -> CaseResult {
    let (src, dst) = (uuid4(), uuid4());
    setup(s, &src, 2, &[""]).await?;
    let before = ids(&list_all(s, &config(&src)).await?);
    s.copy_thread(&src, &dst).await?;
    let after = ids(&list_all(s, &config(&src)).await?);
    ensure!(before == after, "source changed: {before:?} -> {after:?}");
    Ok(())
}

/// A missing source leaves the target empty (an error is acceptable).
async fn test_copy_thread_nonexistent_source(s: &dyn CheckpointSaver) -> CaseResult {
    let (src, dst) = (uuid4(), uuid4());
    let _ = s.copy_thread(&src, &dst).await;
    let r = list_all(s, &config(&dst)).await?;
    ensure!(r.is_empty(), "target has {} checkpoints", r.len());
    Ok(())
}
