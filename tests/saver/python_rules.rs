//! Rules the saver layer takes from Python's source: the write index of each special
//! channel (`__scheduled__` among them), first write wins for regular writes, the
//! write order (`writes_sort_key`), the conformance level, and `uuid6` checkpoint ids
//! and `now_isoformat` timestamps. Several tests reach a behaviour by a second road
//! beside the first test named in their comment; expected values come from Python's
//! source or first principles, never from the code under test.

use langgraph_codec::saver::{
    CheckpointConfig, CheckpointMetadata, CheckpointSaver, InMemorySaver, PendingWrite, ERROR,
    INTERRUPT, RESUME, SCHEDULED,
};
use langgraph_codec::Value;

// ---- the __scheduled__ write index -----------------------------------------------
// First test: the kit's test_put_writes_special_channels (index order and collisions).

/// Python: `WRITES_IDX_MAP = {ERROR: -1, SCHEDULED: -2, INTERRUPT: -3, RESUME: -4}`
/// (langgraph/checkpoint/base/__init__.py); other channels use their position.
#[test]
fn write_idx_is_pythons_writes_idx_map() {
    use langgraph_codec::saver::write_idx;
    for position in [0usize, 1, 5] {
        assert_eq!(write_idx("__error__", position), -1);
        assert_eq!(write_idx("__scheduled__", position), -2);
        assert_eq!(write_idx("__interrupt__", position), -3);
        assert_eq!(write_idx("__resume__", position), -4);
        assert_eq!(write_idx("messages", position), position as i64);
    }
    assert_eq!(SCHEDULED, "__scheduled__");
}

/// The rows `InMemorySaver` stores carry those indices (what Python's saver stores in
/// its `writes` dict keys).
#[tokio::test]
async fn stored_write_rows_use_the_special_indices() {
    let s = InMemorySaver::new();
    let cp = langgraph_codec::saver::Checkpoint::now(0);
    let at = s
        .put(
            &CheckpointConfig::new("t"),
            &cp,
            &CheckpointMetadata::new("loop", 0),
            &Default::default(),
        )
        .await
        .expect("put");
    let writes: Vec<(String, Value)> = ["a", SCHEDULED, ERROR, INTERRUPT, RESUME, "b"]
        .iter()
        .map(|c| ((*c).to_owned(), Value::from(*c)))
        .collect();
    s.put_writes(&at, &writes, "task", "")
        .await
        .expect("writes");
    let mut got: Vec<(String, i64)> = s
        .export_rows()
        .writes
        .iter()
        .map(|w| (w.channel.clone(), w.idx))
        .collect();
    got.sort();
    let mut want = vec![
        ("a".to_owned(), 0),
        (SCHEDULED.to_owned(), -2),
        (ERROR.to_owned(), -1),
        (INTERRUPT.to_owned(), -3),
        (RESUME.to_owned(), -4),
        ("b".to_owned(), 5),
    ];
    want.sort();
    assert_eq!(got, want);
}

// ---- first write wins for regular writes ---------------------------------------------
// First test: the kit's test_put_writes_idempotent (retry with another value).

/// A task's retried call with different values keeps every first regular write and
/// replaces the special ones, in the same call: Python's InMemorySaver `put_writes`
/// (skip when `inner_key[1] >= 0` and present) and SQLite's `INSERT OR IGNORE` /
/// `INSERT OR REPLACE` when every write is special.
#[tokio::test]
async fn retried_writes_keep_regular_firsts_and_replace_specials() {
    let s = InMemorySaver::new();
    let at = s
        .put(
            &CheckpointConfig::new("t"),
            &langgraph_codec::saver::Checkpoint::now(0),
            &CheckpointMetadata::new("loop", 0),
            &Default::default(),
        )
        .await
        .expect("put");
    let w = |pairs: &[(&str, &str)]| -> Vec<(String, Value)> {
        pairs
            .iter()
            .map(|(c, v)| ((*c).to_owned(), Value::from(*v)))
            .collect()
    };
    s.put_writes(&at, &w(&[("a", "a1"), ("b", "b1")]), "task", "")
        .await
        .expect("first");
    s.put_writes(
        &at,
        &w(&[("a", "a2"), ("b", "b2"), ("c", "c2")]),
        "task",
        "",
    )
    .await
    .expect("retry");
    s.put_writes(&at, &w(&[(ERROR, "e1")]), "task", "")
        .await
        .expect("error");
    s.put_writes(&at, &w(&[(ERROR, "e2")]), "task", "")
        .await
        .expect("error retry");
    let got = s
        .get_tuple(&at)
        .await
        .expect("get")
        .expect("stored")
        .pending_writes;
    let want: Vec<PendingWrite> = [(ERROR, "e2"), ("a", "a1"), ("b", "b1"), ("c", "c2")]
        .iter()
        .map(|(c, v)| PendingWrite::new("task", *c, *v))
        .collect();
    assert_eq!(got, want);
}

// ---- the conformance level ------------------------------------------------------------
// First tests: tests/saver/conformance.rs (FULL on a passing saver, BASE on a reversed list).

#[cfg(feature = "conformance")]
mod conformance_level {
    use langgraph_codec::saver::conformance::{CapabilityReport, CaseReport, Outcome, Report};
    use langgraph_codec::saver::Capability;

    fn report(failing: &[Capability], undetected: &[Capability]) -> Report {
        Report {
            saver_name: "made up".into(),
            capabilities: Capability::ALL
                .iter()
                .map(|c| CapabilityReport {
                    capability: *c,
                    detected: !undetected.contains(c),
                    cases: if undetected.contains(c) {
                        Vec::new()
                    } else {
                        vec![CaseReport {
                            name: "test_x",
                            outcome: if failing.contains(c) {
                                Outcome::Failed("no".into())
                            } else {
                                Outcome::Passed
                            },
                        }]
                    },
                })
                .collect(),
        }
    }

    /// Python's `CapabilityReport.conformance_level` (conformance/report.py): FULL when
    /// every detected capability passed, BASE+PARTIAL when every base one did, BASE when
    /// some base one did, else NONE. Base: put, put_writes, get_tuple, list, delete_thread.
    #[test]
    fn conformance_levels_follow_python_report() {
        use Capability::*;
        let base = [Put, PutWrites, GetTuple, List, DeleteThread];
        assert_eq!(report(&[], &[]).conformance_level(), "FULL");
        // Undetected extended capabilities do not count against FULL.
        assert_eq!(
            report(&[], &[DeleteForRuns, CopyThread, Prune]).conformance_level(),
            "FULL"
        );
        // The delta cases are not in Python's suite: they count as extended.
        for ext in [DeleteForRuns, CopyThread, Prune, DeltaChannelHistory] {
            assert_eq!(report(&[ext], &[]).conformance_level(), "BASE+PARTIAL");
        }
        for b in base {
            assert_eq!(report(&[b], &[]).conformance_level(), "BASE", "{b} failing");
        }
        assert_eq!(
            report(&[Put, PutWrites, GetTuple, List], &[]).conformance_level(),
            "BASE"
        );
        assert_eq!(report(&base, &[]).conformance_level(), "NONE");
        assert!(report(&[], &[]).is_success());
        assert!(!report(&[Prune], &[]).is_success());
    }
}

// ---- writes_sort_key ------------------------------------------------------------------
// Killed the cargo-mutants survivors of `writes_sort_key` (MUTANTS.md).

/// Python's `writes_sort_key(write) = (task_path, task_id, idx)`: sorting by it puts
/// writes in path order, then task id, then index (specials before regular writes).
#[test]
fn writes_sort_key_orders_by_path_then_task_then_index() {
    use langgraph_codec::saver::writes_sort_key;
    assert_eq!(writes_sort_key("a:b", "t1", -2), ("a:b", "t1", -2));
    let mut writes = vec![
        ("~z", "t0", 0),
        ("", "t9", 1),
        ("~a", "t2", 0),
        ("~a", "t1", 3),
        ("~a", "t1", -1),
        ("", "t9", 0),
    ];
    writes.sort_by_key(|(p, t, i)| writes_sort_key(p, t, *i));
    assert_eq!(
        writes,
        [
            ("", "t9", 0),
            ("", "t9", 1),
            ("~a", "t1", -1),
            ("~a", "t1", 3),
            ("~a", "t2", 0),
            ("~z", "t0", 0),
        ]
    );
}

// ---------------------------------------------------------------------------------------
// saver types
// ---------------------------------------------------------------------------------------

use std::time::{SystemTime, UNIX_EPOCH};

use langgraph_codec::saver::{now_isoformat, uuid6};

/// The 141,427 days from 1582-10-15 (the uuid v1/v6 epoch) to 1970-01-01 in 100-ns
/// ticks: Python's `0x01B21DD213814000`.
const UUID_EPOCH_OFFSET: u128 = 141_427 * 86_400 * 10_000_000;

/// Now in 100-ns ticks since 1582-10-15 (Python's `time.time_ns() // 100 +
/// 0x01B21DD213814000`).
fn uuid_ticks_now() -> u128 {
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .expect("after 1970")
        .as_nanos();
    nanos / 100 + UUID_EPOCH_OFFSET
}

#[test]
fn uuid6_carries_the_time_clock_seq_version_and_variant_python_puts_there() {
    let before = uuid_ticks_now();
    let id = uuid6(0x1_2345); // 14 bits kept: 0x2345
    let after = uuid_ticks_now();
    let parts: Vec<&str> = id.split('-').collect();
    assert_eq!(
        parts.iter().map(|p| p.len()).collect::<Vec<_>>(),
        [8, 4, 4, 4, 12],
        "{id}"
    );
    let field = |i: usize| u128::from_str_radix(parts[i], 16).expect("hex");
    // Python's `UUID.time` for version 6:
    // (time_low << 28) | (time_mid << 12) | (time_hi_version & 0x0FFF).
    let ticks = (field(0) << 28) | (field(1) << 12) | (field(2) & 0x0fff);
    assert!(
        before <= ticks && ticks <= after + 1_000,
        "{id}: {ticks} not in {before}..{after}"
    );
    assert_eq!(field(2) >> 12, 6, "version nibble of {id}");
    let clock_seq = field(3);
    assert_eq!(clock_seq >> 14, 0b10, "variant bits of {id}");
    assert_eq!(clock_seq & 0x3fff, 0x2345, "clock_seq of {id}");
}

/// Days since 1970-01-01 as (year, month, day), by counting whole years and months:
/// slow and obviously right, unlike the closed form the crate uses.
fn civil_by_counting(mut days: u64) -> (u64, u64, u64) {
    let leap = |y: u64| (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
    let mut year = 1970;
    loop {
        let len = if leap(year) { 366 } else { 365 };
        if days < len {
            break;
        }
        days -= len;
        year += 1;
    }
    let months = [
        31,
        if leap(year) { 29 } else { 28 },
        31,
        30,
        31,
        30,
        31,
        31,
        30,
        31,
        30,
        31,
    ];
    let mut month = 1;
    for len in months {
        if days < len {
            break;
        }
        days -= len;
        month += 1;
    }
    (year, month, days + 1)
}

#[test]
fn now_isoformat_is_todays_utc_date_and_time_in_pythons_format() {
    let today = || {
        let secs = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .expect("after 1970")
            .as_secs();
        let (y, m, d) = civil_by_counting(secs / 86_400);
        format!("{y:04}-{m:02}-{d:02}T")
    };
    let before = today();
    let stamp = now_isoformat();
    let after = today();
    assert!(
        stamp.starts_with(&before) || stamp.starts_with(&after),
        "{stamp} vs {before}"
    );
    // `datetime.now(timezone.utc).isoformat()`: HH:MM:SS, microseconds when non-zero.
    assert!(stamp.ends_with("+00:00"), "{stamp}");
    let len = stamp.len();
    assert!(
        len == "2026-01-01T00:00:00+00:00".len() || len == "2026-01-01T00:00:00.000001+00:00".len()
    );
    // The counting reference itself, on dates Python gives:
    // `date(1970, 1, 1) + timedelta(days=n)`.
    assert_eq!(civil_by_counting(0), (1970, 1, 1));
    assert_eq!(civil_by_counting(59), (1970, 3, 1));
    assert_eq!(civil_by_counting(11_016), (2000, 2, 29));
    assert_eq!(civil_by_counting(20_454), (2026, 1, 1));
}
