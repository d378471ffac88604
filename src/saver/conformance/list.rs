//! `spec/test_list.py`: `list` with filters, cursor and limit.

use super::case_list;
use super::stated_rules::test_list_metadata_filter_none;
use super::util::{
    child_config, config, ensure, generate_checkpoint, generate_config, generate_metadata, ids,
    list_all, metadata, uuid4, versions, writes, CaseResult, Failure,
};
use crate::saver::traits::{Capability, CheckpointSaver, ListOptions};
use crate::saver::types::{CheckpointConfig, CheckpointTuple};
use crate::value::Value;

pub(super) fn cases() -> Vec<super::Case> {
    case_list![Capability::List;
        test_list_all,
        test_list_by_thread,
        test_list_by_namespace,
        test_list_ordering,
        test_list_metadata_filter_single_key,
        test_list_metadata_filter_step,
        test_list_metadata_filter_multiple_keys,
        test_list_metadata_filter_no_match,
        test_list_metadata_custom_keys,
        test_list_before,
        test_list_limit,
        test_list_limit_plus_before,
        test_list_combined_thread_and_filter,
        test_list_empty_result,
        test_list_includes_pending_writes,
        test_list_multiple_namespaces,
        // Not in Python's spec: a rule the docs state (stated_rules.rs).
        test_list_metadata_filter_none,
    ]
}

struct Data {
    thread_id: String,
    ids: Vec<String>,
}

/// Four checkpoints on one thread; sources input, loop, input, loop; steps 0..4.
async fn setup(s: &dyn CheckpointSaver) -> Result<Data, Failure> {
    let tid = uuid4();
    let mut ids = Vec::new();
    let mut parent: Option<CheckpointConfig> = None;
    for i in 0..4 {
        let cp = generate_checkpoint(&[], &[], &[]);
        let source = if i % 2 == 0 { "input" } else { "loop" };
        parent = Some(
            s.put(
                &child_config(&tid, parent.as_ref()),
                &cp,
                &generate_metadata(source, i, &[]),
                &versions(&[]),
            )
            .await?,
        );
        ids.push(cp.id);
    }
    Ok(Data {
        thread_id: tid,
        ids,
    })
}

async fn list(
    s: &dyn CheckpointSaver,
    cfg: &CheckpointConfig,
    opts: ListOptions,
) -> Result<Vec<CheckpointTuple>, Failure> {
    Ok(s.list(Some(cfg), &opts).await?)
}

fn id_at(ids: &[String], i: usize) -> Result<&str, Failure> {
    ids.get(i)
        .map(String::as_str)
        .ok_or_else(|| Failure(format!("setup made no checkpoint {i}")))
}

/// No filter returns every checkpoint of the thread.
async fn test_list_all(s: &dyn CheckpointSaver) -> CaseResult {
    let d = setup(s).await?;
    let r = list_all(s, &config(&d.thread_id)).await?;
    ensure!(r.len() == 4, "expected 4, got {}", r.len());
    Ok(())
}

/// Other threads are not returned.
async fn test_list_by_thread(s: &dyn CheckpointSaver) -> CaseResult {
    let d = setup(s).await?;
    let r = list_all(s, &config(&uuid4())).await?;
    ensure!(r.is_empty(), "a new thread lists {} checkpoints", r.len());
    let r = list_all(s, &config(&d.thread_id)).await?;
    ensure!(r.len() == 4, "expected 4, got {}", r.len());
    Ok(())
}

/// checkpoint_ns filters.
async fn test_list_by_namespace(s: &dyn CheckpointSaver) -> CaseResult {
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
        let r = list_all(s, &generate_config(&tid, ns, None)).await?;
        ensure!(r.len() == 1, "ns {ns:?}: expected 1, got {}", r.len());
    }
    Ok(())
}

/// Newest first.
async fn test_list_ordering(s: &dyn CheckpointSaver) -> CaseResult {
    let d = setup(s).await?;
    let got = ids(&list_all(s, &config(&d.thread_id)).await?);
    let mut want = d.ids.clone();
    want.reverse();
    ensure!(got == want, "order {got:?}, expected {want:?}");
    Ok(())
}

/// filter={"source": "input"}.
async fn test_list_metadata_filter_single_key(s: &dyn CheckpointSaver) -> CaseResult {
    let d = setup(s).await?;
    let r = list(
        s,
        &config(&d.thread_id),
        ListOptions::new().filter("source", "input"),
    )
    .await?;
    ensure!(
        r.len() == 2,
        "expected 2 'input' checkpoints (steps 0, 2), got {}",
        r.len()
    );
    ensure!(
        r.iter().all(|t| t.metadata.source() == Some("input")),
        "wrong source"
    );
    Ok(())
}

/// filter={"step": 1}.
async fn test_list_metadata_filter_step(s: &dyn CheckpointSaver) -> CaseResult {
    let d = setup(s).await?;
    let r = list(
        s,
        &config(&d.thread_id),
        ListOptions::new().filter("step", 1i64),
    )
    .await?;
    ensure!(r.len() == 1, "expected 1, got {}", r.len());
    ensure!(
        r.first().and_then(|t| t.metadata.step()) == Some(1),
        "wrong step"
    );
    Ok(())
}

/// Several filter keys must all match.
async fn test_list_metadata_filter_multiple_keys(s: &dyn CheckpointSaver) -> CaseResult {
    let tid = uuid4();
    for (source, step) in [("input", 1), ("loop", 1), ("input", 2)] {
        s.put(
            &config(&tid),
            &generate_checkpoint(&[], &[], &[]),
            &generate_metadata(source, step, &[]),
            &versions(&[]),
        )
        .await?;
    }
    let r = list(
        s,
        &config(&tid),
        ListOptions::new()
            .filter("source", "input")
            .filter("step", 2i64),
    )
    .await?;
    ensure!(
        r.len() == 1,
        "expected 1 match for source=input+step=2, got {}",
        r.len()
    );
    let t = r.first().ok_or_else(|| Failure("no result".to_owned()))?;
    ensure!(
        t.metadata.source() == Some("input") && t.metadata.step() == Some(2),
        "wrong match {:?}",
        t.metadata
    );
    Ok(())
}

/// A filter matching nothing returns nothing.
async fn test_list_metadata_filter_no_match(s: &dyn CheckpointSaver) -> CaseResult {
    let d = setup(s).await?;
    let r = list(
        s,
        &config(&d.thread_id),
        ListOptions::new()
            .filter("source", "update")
            .filter("step", 99i64),
    )
    .await?;
    ensure!(r.is_empty(), "expected none, got {}", r.len());
    // Beyond the Python spec: one key matching and one not still matches nothing
    // (every key must match, not any).
    let r = list(
        s,
        &config(&d.thread_id),
        ListOptions::new()
            .filter("source", "input")
            .filter("step", 99i64),
    )
    .await?;
    ensure!(
        r.is_empty(),
        "source=input+step=99: expected none, got {} (filter keys must all match)",
        r.len()
    );
    Ok(())
}

/// Custom metadata keys are filterable.
async fn test_list_metadata_custom_keys(s: &dyn CheckpointSaver) -> CaseResult {
    let tid = uuid4();
    for (score, run) in [(42i64, "run-abc"), (99, "run-xyz")] {
        let md = generate_metadata(
            "loop",
            0,
            &[("score", score.into()), ("run_id", run.into())],
        );
        s.put(
            &config(&tid),
            &generate_checkpoint(&[], &[], &[]),
            &md,
            &versions(&[]),
        )
        .await?;
    }
    let r = list(s, &config(&tid), ListOptions::new().filter("score", 42i64)).await?;
    ensure!(r.len() == 1, "expected 1, got {}", r.len());
    let t = r.first().ok_or_else(|| Failure("no result".to_owned()))?;
    ensure!(
        t.metadata.get("score") == Some(&Value::from(42i64)),
        "score {:?}",
        t.metadata.get("score")
    );
    ensure!(
        t.metadata.run_id() == Some("run-abc"),
        "run_id {:?}",
        t.metadata.run_id()
    );
    Ok(())
}

/// before: only checkpoints older than the cursor.
async fn test_list_before(s: &dyn CheckpointSaver) -> CaseResult {
    let d = setup(s).await?;
    let cursor = generate_config(&d.thread_id, "", Some(id_at(&d.ids, 2)?));
    let got = ids(&list(s, &config(&d.thread_id), ListOptions::new().before(cursor)).await?);
    ensure!(
        !got.iter().any(|i| i == id_at(&d.ids, 2).unwrap_or("")),
        "cursor itself listed"
    );
    ensure!(
        !got.iter().any(|i| i == id_at(&d.ids, 3).unwrap_or("")),
        "newer checkpoint listed"
    );
    let mut sorted = got.clone();
    sorted.sort();
    let mut want = vec![id_at(&d.ids, 0)?.to_owned(), id_at(&d.ids, 1)?.to_owned()];
    want.sort();
    ensure!(sorted == want, "expected {want:?}, got {got:?}");
    Ok(())
}

/// limit=1 and limit=2.
async fn test_list_limit(s: &dyn CheckpointSaver) -> CaseResult {
    let d = setup(s).await?;
    for n in [1usize, 2] {
        let r = list(s, &config(&d.thread_id), ListOptions::new().limit(n)).await?;
        ensure!(r.len() == n, "limit {n}: got {}", r.len());
    }
    Ok(())
}

/// Pagination: before + limit.
async fn test_list_limit_plus_before(s: &dyn CheckpointSaver) -> CaseResult {
    let d = setup(s).await?;
    let cursor = generate_config(&d.thread_id, "", Some(id_at(&d.ids, 3)?));
    let r = list(
        s,
        &config(&d.thread_id),
        ListOptions::new().before(cursor).limit(1),
    )
    .await?;
    ensure!(r.len() == 1, "expected 1, got {}", r.len());
    ensure!(
        r.first().map(|t| t.checkpoint.id.as_str()) == Some(id_at(&d.ids, 2)?),
        "expected {}, got {:?}",
        id_at(&d.ids, 2)?,
        ids(&r)
    );
    Ok(())
}

/// Thread and metadata filter combined.
async fn test_list_combined_thread_and_filter(s: &dyn CheckpointSaver) -> CaseResult {
    let d = setup(s).await?;
    // Beyond the Python spec: another thread with matching metadata must not show.
    setup(s).await?;
    let r = list(
        s,
        &config(&d.thread_id),
        ListOptions::new().filter("source", "loop"),
    )
    .await?;
    ensure!(
        r.len() == 2,
        "expected 2 'loop' checkpoints (steps 1, 3), got {}",
        r.len()
    );
    ensure!(
        r.iter().all(|t| t.metadata.source() == Some("loop")),
        "wrong source"
    );
    ensure!(
        r.iter()
            .all(|t| t.config.thread_id.as_deref() == Some(d.thread_id.as_str())),
        "a checkpoint of another thread matched the filter"
    );
    Ok(())
}

/// No match, empty result.
async fn test_list_empty_result(s: &dyn CheckpointSaver) -> CaseResult {
    let r = list(
        s,
        &config(&uuid4()),
        ListOptions::new().filter("source", "nonexistent"),
    )
    .await?;
    ensure!(r.is_empty(), "expected none, got {}", r.len());
    // Beyond the Python spec: an unknown thread lists nothing even when another
    // thread has checkpoints matching the filter.
    setup(s).await?;
    let r = list(
        s,
        &config(&uuid4()),
        ListOptions::new().filter("source", "input"),
    )
    .await?;
    ensure!(
        r.is_empty(),
        "an unknown thread lists {} checkpoints of other threads",
        r.len()
    );
    Ok(())
}

/// Listed tuples carry pending writes.
async fn test_list_includes_pending_writes(s: &dyn CheckpointSaver) -> CaseResult {
    let tid = uuid4();
    let stored = s
        .put(
            &config(&tid),
            &generate_checkpoint(&[], &[], &[]),
            &metadata(),
            &versions(&[]),
        )
        .await?;
    s.put_writes(&stored, &writes(&[("ch", "val".into())]), &uuid4(), "")
        .await?;
    let r = list_all(s, &config(&tid)).await?;
    ensure!(r.len() == 1, "expected 1, got {}", r.len());
    let ws = r
        .first()
        .map(|t| t.pending_writes.clone())
        .unwrap_or_default();
    ensure!(ws.len() == 1, "expected 1 write, got {}", ws.len());
    let w = ws.first().ok_or_else(|| Failure("no write".to_owned()))?;
    ensure!(w.channel == "ch", "channel mismatch: {:?}", w.channel);
    ensure!(
        w.value == Value::from("val"),
        "value mismatch: {:?}",
        w.value
    );
    Ok(())
}

/// The root-namespace filter lists only the root checkpoint.
async fn test_list_multiple_namespaces(s: &dyn CheckpointSaver) -> CaseResult {
    let tid = uuid4();
    for ns in ["", "child:1", "child:2"] {
        s.put(
            &generate_config(&tid, ns, None),
            &generate_checkpoint(&[], &[], &[]),
            &metadata(),
            &versions(&[]),
        )
        .await?;
    }
    let r = list_all(s, &generate_config(&tid, "", None)).await?;
    ensure!(r.len() == 1, "expected 1 root checkpoint, got {}", r.len());
    Ok(())
}
