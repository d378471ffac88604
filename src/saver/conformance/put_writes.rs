//! `spec/test_put_writes.py`: `put_writes` and `pending_writes`.

use super::case_list;
use super::util::{
    child_config, config, ensure, generate_checkpoint, generate_config, generate_metadata,
    metadata, uuid4, versions, writes, CaseResult, Failure,
};
use crate::saver::traits::{Capability, CheckpointSaver};
use crate::saver::types::{CheckpointConfig, PendingWrite, ERROR, INTERRUPT, RESUME, SCHEDULED};
use crate::value::Value;

pub(super) fn cases() -> Vec<super::Case> {
    case_list![Capability::PutWrites;
        test_put_writes_basic,
        test_put_writes_multiple_writes_same_task,
        test_put_writes_multiple_tasks,
        test_put_writes_preserves_task_id,
        test_put_writes_preserves_channel_and_value,
        test_put_writes_task_path,
        test_put_writes_idempotent,
        test_put_writes_special_channels,
        test_put_writes_across_namespaces,
        test_put_writes_cleared_on_next_checkpoint,
    ]
}

async fn fresh(s: &dyn CheckpointSaver) -> Result<CheckpointConfig, Failure> {
    Ok(s.put(
        &config(&uuid4()),
        &generate_checkpoint(&[], &[], &[]),
        &metadata(),
        &versions(&[]),
    )
    .await?)
}

async fn pending(
    s: &dyn CheckpointSaver,
    cfg: &CheckpointConfig,
) -> Result<Vec<PendingWrite>, Failure> {
    let tup = s
        .get_tuple(cfg)
        .await?
        .ok_or_else(|| Failure("get_tuple returned None for a stored checkpoint".to_owned()))?;
    Ok(tup.pending_writes)
}

fn matching<'a>(ws: &'a [PendingWrite], task: &str, channel: &str) -> Vec<&'a PendingWrite> {
    ws.iter()
        .filter(|w| w.task_id == task && w.channel == channel)
        .collect()
}

fn one_value<'a>(ws: &'a [PendingWrite], task: &str, channel: &str) -> Result<&'a Value, Failure> {
    match matching(ws, task, channel).as_slice() {
        [w] => Ok(&w.value),
        other => Err(Failure(format!(
            "expected 1 write of task {task} to {channel}, got {}",
            other.len()
        ))),
    }
}

/// A write is stored and visible in pending_writes.
async fn test_put_writes_basic(s: &dyn CheckpointSaver) -> CaseResult {
    let stored = fresh(s).await?;
    let task = uuid4();
    s.put_writes(
        &stored,
        &writes(&[("channel1", "value1".into())]),
        &task,
        "",
    )
    .await?;
    let ws = pending(s, &stored).await?;
    let got = one_value(&ws, &task, "channel1")?;
    ensure!(*got == Value::from("value1"), "value mismatch: {got:?}");
    Ok(())
}

/// Several (channel, value) pairs in one call.
async fn test_put_writes_multiple_writes_same_task(s: &dyn CheckpointSaver) -> CaseResult {
    let stored = fresh(s).await?;
    let task = uuid4();
    let w = [
        ("ch1", Value::from("v1")),
        ("ch2", "v2".into()),
        ("ch3", "v3".into()),
    ];
    s.put_writes(&stored, &writes(&w), &task, "").await?;
    let ws = pending(s, &stored).await?;
    ensure!(ws.len() == 3, "expected 3 writes, got {}", ws.len());
    let mut channels: Vec<&str> = ws.iter().map(|w| w.channel.as_str()).collect();
    channels.sort_unstable();
    ensure!(channels == ["ch1", "ch2", "ch3"], "channels {channels:?}");
    for (ch, want) in &w {
        let got = one_value(&ws, &task, ch)?;
        ensure!(got == want, "value mismatch for {ch}: {got:?}");
    }
    Ok(())
}

/// Different task ids give separate writes.
async fn test_put_writes_multiple_tasks(s: &dyn CheckpointSaver) -> CaseResult {
    let stored = fresh(s).await?;
    let (t1, t2) = (uuid4(), uuid4());
    s.put_writes(&stored, &writes(&[("ch", "from_t1".into())]), &t1, "")
        .await?;
    s.put_writes(&stored, &writes(&[("ch", "from_t2".into())]), &t2, "")
        .await?;
    let ws = pending(s, &stored).await?;
    ensure!(ws.len() == 2, "expected 2 writes, got {}", ws.len());
    ensure!(
        *one_value(&ws, &t1, "ch")? == Value::from("from_t1"),
        "t1 value"
    );
    ensure!(
        *one_value(&ws, &t2, "ch")? == Value::from("from_t2"),
        "t2 value"
    );
    Ok(())
}

/// The task id in pending_writes is the one given.
async fn test_put_writes_preserves_task_id(s: &dyn CheckpointSaver) -> CaseResult {
    let stored = fresh(s).await?;
    let task = uuid4();
    s.put_writes(&stored, &writes(&[("ch", "val".into())]), &task, "")
        .await?;
    let ws = pending(s, &stored).await?;
    ensure!(
        ws.iter().any(|w| w.task_id == task),
        "task id {task} not found in {ws:?}"
    );
    Ok(())
}

/// Channel name and value round-trip.
async fn test_put_writes_preserves_channel_and_value(s: &dyn CheckpointSaver) -> CaseResult {
    let stored = fresh(s).await?;
    let task = uuid4();
    let value = Value::map([("data", 123i64)]);
    s.put_writes(
        &stored,
        &writes(&[("my_channel", value.clone())]),
        &task,
        "",
    )
    .await?;
    let ws = pending(s, &stored).await?;
    let got = one_value(&ws, &task, "my_channel")?;
    ensure!(super::util::py_eq(got, &value), "value mismatch: {got:?}");
    Ok(())
}

/// A task_path is accepted.
async fn test_put_writes_task_path(s: &dyn CheckpointSaver) -> CaseResult {
    let stored = fresh(s).await?;
    s.put_writes(&stored, &writes(&[("ch", "v".into())]), &uuid4(), "a:b:c")
        .await?;
    let ws = pending(s, &stored).await?;
    ensure!(ws.len() == 1, "expected 1 write, got {}", ws.len());
    Ok(())
}

/// A repeated (task_id, idx) does not duplicate writes.
async fn test_put_writes_idempotent(s: &dyn CheckpointSaver) -> CaseResult {
    let stored = fresh(s).await?;
    let task = uuid4();
    s.put_writes(&stored, &writes(&[("ch", "val".into())]), &task, "")
        .await?;
    s.put_writes(&stored, &writes(&[("ch", "val".into())]), &task, "")
        .await?;
    let ws = pending(s, &stored).await?;
    ensure!(
        ws.len() == 1,
        "expected exactly 1 write total, got {}",
        ws.len()
    );
    ensure!(matching(&ws, &task, "ch").len() == 1, "duplicated write");
    // Beyond the Python spec: a retry with another value keeps the first (regular
    // writes are first-write-wins in Python's savers: `INSERT OR IGNORE`, `ON
    // CONFLICT DO NOTHING`, InMemorySaver's skip).
    s.put_writes(&stored, &writes(&[("ch", "retry".into())]), &task, "")
        .await?;
    let ws = pending(s, &stored).await?;
    let got = one_value(&ws, &task, "ch")?;
    ensure!(
        *got == Value::from("val"),
        "a retried regular write replaced the first one: {got:?} (first write must win)"
    );
    Ok(())
}

/// ERROR and INTERRUPT writes are stored.
async fn test_put_writes_special_channels(s: &dyn CheckpointSaver) -> CaseResult {
    let stored = fresh(s).await?;
    let task = uuid4();
    let interrupt = Value::map([("reason", "human_input")]);
    // Beyond the Python spec: a regular write at position 0 first, so that a special
    // write stored at its position instead of its WRITES_IDX_MAP index collides with it.
    s.put_writes(&stored, &writes(&[("ch", "regular".into())]), &task, "")
        .await?;
    s.put_writes(
        &stored,
        &writes(&[
            (ERROR, "something went wrong".into()),
            (SCHEDULED, "scheduled".into()),
            (INTERRUPT, interrupt.clone()),
            (RESUME, "resumed".into()),
        ]),
        &task,
        "",
    )
    .await?;
    let ws = pending(s, &stored).await?;
    ensure!(ws.iter().any(|w| w.channel == ERROR), "no {ERROR} write");
    ensure!(
        ws.iter().any(|w| w.channel == INTERRUPT),
        "no {INTERRUPT} write"
    );
    let err = one_value(&ws, &task, ERROR)?;
    ensure!(
        *err == Value::from("something went wrong"),
        "ERROR value: {err:?}"
    );
    let int = one_value(&ws, &task, INTERRUPT)?;
    ensure!(
        super::util::py_eq(int, &interrupt),
        "INTERRUPT value: {int:?}"
    );
    // Each special channel has its own index (-1, -2, -3, -4), apart from the regular
    // write's index 0.
    for (ch, want) in [
        ("ch", "regular"),
        (SCHEDULED, "scheduled"),
        (RESUME, "resumed"),
    ] {
        let got = one_value(&ws, &task, ch)?;
        ensure!(
            *got == Value::from(want),
            "{ch} value: {got:?} (special writes must not share an index)"
        );
    }
    ensure!(
        ws.len() == 5,
        "expected 5 writes (1 regular, 4 special), got {}",
        ws.len()
    );
    // One task's writes come in index order, as Python's savers return them: RESUME
    // (-4), INTERRUPT (-3), SCHEDULED (-2), ERROR (-1), then the regular write (0).
    let order: Vec<&str> = ws.iter().map(|w| w.channel.as_str()).collect();
    ensure!(
        order == [RESUME, INTERRUPT, SCHEDULED, ERROR, "ch"],
        "writes in order {order:?}, expected index order (-4, -3, -2, -1, 0)"
    );
    // A retried special write replaces the stored one (Python: `INSERT OR REPLACE`
    // when every write is special).
    s.put_writes(&stored, &writes(&[(ERROR, "retried".into())]), &task, "")
        .await?;
    let ws = pending(s, &stored).await?;
    let err = one_value(&ws, &task, ERROR)?;
    ensure!(
        *err == Value::from("retried"),
        "a retried {ERROR} write did not replace the stored one: {err:?}"
    );
    let reg = one_value(&ws, &task, "ch")?;
    ensure!(
        *reg == Value::from("regular"),
        "a retried {ERROR} write replaced the regular write: {reg:?}"
    );
    Ok(())
}

/// Writes are isolated by checkpoint_ns.
async fn test_put_writes_across_namespaces(s: &dyn CheckpointSaver) -> CaseResult {
    let tid = uuid4();
    let root = s
        .put(
            &generate_config(&tid, "", None),
            &generate_checkpoint(&[], &[], &[]),
            &metadata(),
            &versions(&[]),
        )
        .await?;
    s.put_writes(&root, &writes(&[("ch", "root_val".into())]), &uuid4(), "")
        .await?;
    let child = s
        .put(
            &generate_config(&tid, "child:1", None),
            &generate_checkpoint(&[], &[], &[]),
            &metadata(),
            &versions(&[]),
        )
        .await?;
    s.put_writes(&child, &writes(&[("ch", "child_val".into())]), &uuid4(), "")
        .await?;
    for (cfg, want) in [(&root, "root_val"), (&child, "child_val")] {
        let ws = pending(s, cfg).await?;
        let chs: Vec<&PendingWrite> = ws.iter().filter(|w| w.channel == "ch").collect();
        ensure!(
            chs.len() == 1,
            "expected 1 write in ns {:?}, got {}",
            cfg.ns(),
            chs.len()
        );
        ensure!(
            chs.first().is_some_and(|w| w.value == Value::from(want)),
            "ns {:?} value: {chs:?}",
            cfg.ns()
        );
    }
    Ok(())
}

/// A new checkpoint starts without pending writes.
async fn test_put_writes_cleared_on_next_checkpoint(s: &dyn CheckpointSaver) -> CaseResult {
    let tid = uuid4();
    let stored1 = s
        .put(
            &config(&tid),
            &generate_checkpoint(&[], &[], &[]),
            &generate_metadata("loop", 0, &[]),
            &versions(&[]),
        )
        .await?;
    s.put_writes(
        &stored1,
        &writes(&[("ch", "old_write".into())]),
        &uuid4(),
        "",
    )
    .await?;
    let stored2 = s
        .put(
            &child_config(&tid, Some(&stored1)),
            &generate_checkpoint(&[], &[], &[]),
            &generate_metadata("loop", 1, &[]),
            &versions(&[]),
        )
        .await?;
    let ws = pending(s, &stored2).await?;
    ensure!(
        ws.is_empty(),
        "new checkpoint has {} pending writes",
        ws.len()
    );
    Ok(())
}
