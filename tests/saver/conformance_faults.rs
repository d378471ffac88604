//! The conformance kit proves itself: every one of its cases fails on a saver broken
//! the way that case checks, with a reason that names the violation, and each of
//! those broken savers is narrow (it still passes most of the other cases).
//!
//! The broken savers are `saver::Faulty`: `InMemorySaver` with one [`Fault`]. They
//! live here, not in the library: they exist to test the kit, not to be used.

#[path = "conformance_faults/saver.rs"]
mod saver;

use langgraph_codec::saver::conformance::{self, run_case, Outcome};
use langgraph_codec::saver::Capability;
use saver::{Fault, Faulty};

/// `(capability, case, the fault that breaks what it checks, words its failure must
/// contain)`. One row per case of the kit, in the kit's order.
const TABLE: &[(Capability, &str, Fault, &str)] = {
    use Capability as C;
    use Fault as F;
    &[
        // put
        (
            C::Put,
            "test_put_returns_config",
            F::PutReturnsInputConfig,
            "checkpoint_id",
        ),
        (
            C::Put,
            "test_put_roundtrip",
            F::DropsChannelValues,
            "channel_values",
        ),
        (
            C::Put,
            "test_put_preserves_channel_values",
            F::StringifiesNonStringValues,
            "channel_values[",
        ),
        (
            C::Put,
            "test_put_preserves_channel_versions",
            F::BumpsChannelVersions,
            "channel_versions[",
        ),
        (
            C::Put,
            "test_put_preserves_versions_seen",
            F::DropsVersionsSeen,
            "versions_seen[",
        ),
        (
            C::Put,
            "test_put_preserves_metadata",
            F::DropsCustomMetadata,
            "custom_key",
        ),
        (
            C::Put,
            "test_put_root_namespace",
            F::RootNsReportedAsSlash,
            "checkpoint_ns",
        ),
        (
            C::Put,
            "test_put_child_namespace",
            F::ChildNsTruncatedAtColon,
            "checkpoint_ns",
        ),
        (
            C::Put,
            "test_put_default_namespace",
            F::EmptyNsStoredAsDefault,
            "not the default",
        ),
        (
            C::Put,
            "test_put_multiple_checkpoints_same_thread",
            F::IgnoresCheckpointId,
            "wrong checkpoint",
        ),
        (
            C::Put,
            "test_put_multiple_threads_isolated",
            F::AllThreadsShareOneStore,
            "thread1 sees",
        ),
        (
            C::Put,
            "test_put_parent_config",
            F::DropsParentConfig,
            "parent",
        ),
        (
            C::Put,
            "test_put_incremental_channel_update",
            F::LoadsOnlyNewBlobs,
            "b: expected 'v2'",
        ),
        (
            C::Put,
            "test_put_new_channel_added",
            F::LoadsOnlyNewBlobs,
            "a: expected 'v1'",
        ),
        (
            C::Put,
            "test_put_channel_removed",
            F::KeepsRemovedChannels,
            "'b' should not be present",
        ),
        (C::Put, "test_put_preserves_run_id", F::DropsRunId, "run_id"),
        (
            C::Put,
            "test_put_preserves_versions_seen_values",
            F::BumpsVersionsSeenValues,
            "versions_seen[",
        ),
        (
            C::Put,
            "test_put_merges_config_into_metadata",
            F::IgnoresConfigMetadata,
            "must merge config",
        ),
        // put_writes
        (
            C::PutWrites,
            "test_put_writes_basic",
            F::DropsWrites,
            "write",
        ),
        (
            C::PutWrites,
            "test_put_writes_multiple_writes_same_task",
            F::KeepsFirstWriteOfCall,
            "expected 3 writes",
        ),
        (
            C::PutWrites,
            "test_put_writes_multiple_tasks",
            F::WriteKeyWithoutTask,
            "expected 2 writes",
        ),
        (
            C::PutWrites,
            "test_put_writes_preserves_task_id",
            F::TruncatesTaskId,
            "task id",
        ),
        (
            C::PutWrites,
            "test_put_writes_preserves_channel_and_value",
            F::NullsNonStringWriteValues,
            "value mismatch",
        ),
        (
            C::PutWrites,
            "test_put_writes_task_path",
            F::DropsWritesWithTaskPath,
            "expected 1 write",
        ),
        (
            C::PutWrites,
            "test_put_writes_idempotent",
            F::RegularWritesLastWins,
            "first write must win",
        ),
        (
            C::PutWrites,
            "test_put_writes_special_channels",
            F::SpecialWritesAtPosition,
            "__error__",
        ),
        (
            C::PutWrites,
            "test_put_writes_across_namespaces",
            F::WritesIgnoreNamespace,
            "in ns",
        ),
        (
            C::PutWrites,
            "test_put_writes_cleared_on_next_checkpoint",
            F::WritesVisibleOnChildCheckpoint,
            "new checkpoint has 1 pending writes",
        ),
        // get_tuple
        (
            C::GetTuple,
            "test_get_tuple_nonexistent_returns_none",
            F::MissingGivesEmptyCheckpoint,
            "expected None",
        ),
        (
            C::GetTuple,
            "test_get_tuple_latest_when_no_checkpoint_id",
            F::LatestIsOldest,
            "expected",
        ),
        (
            C::GetTuple,
            "test_get_tuple_specific_checkpoint_id",
            F::IgnoresCheckpointId,
            "expected",
        ),
        (
            C::GetTuple,
            "test_get_tuple_config_structure",
            F::TupleConfigDropsCheckpointId,
            "checkpoint_id",
        ),
        (
            C::GetTuple,
            "test_get_tuple_checkpoint_fields",
            F::EmptyTs,
            "ts should be non-empty",
        ),
        (
            C::GetTuple,
            "test_get_tuple_metadata",
            F::StepAsString,
            "step",
        ),
        (
            C::GetTuple,
            "test_get_tuple_parent_config",
            F::ParentIsSelf,
            "first checkpoint has parent",
        ),
        (
            C::GetTuple,
            "test_get_tuple_pending_writes",
            F::GetTupleOmitsWrites,
            "expected 1 write, got 0",
        ),
        (
            C::GetTuple,
            "test_get_tuple_respects_namespace",
            F::GetTupleIgnoresNamespace,
            "the latest of namespace",
        ),
        (
            C::GetTuple,
            "test_get_tuple_nonexistent_checkpoint_id",
            F::MissingIdGivesLatest,
            "missing checkpoint_id",
        ),
        // list
        (
            C::List,
            "test_list_all",
            F::ListDropsLast,
            "expected 4, got 3",
        ),
        (
            C::List,
            "test_list_by_thread",
            F::ListIgnoresThread,
            "a new thread lists",
        ),
        (
            C::List,
            "test_list_by_namespace",
            F::ListIgnoresNamespace,
            "expected 1, got 2",
        ),
        (C::List, "test_list_ordering", F::ListReversed, "order"),
        (
            C::List,
            "test_list_metadata_filter_single_key",
            F::IgnoresFilter,
            "expected 2 'input' checkpoints",
        ),
        (
            C::List,
            "test_list_metadata_filter_step",
            F::FilterIgnoresNonStrings,
            "expected 1, got 4",
        ),
        (
            C::List,
            "test_list_metadata_filter_multiple_keys",
            F::FilterFirstKeyOnly,
            "expected 1 match",
        ),
        (
            C::List,
            "test_list_metadata_filter_no_match",
            F::FilterAnyKey,
            "must all match",
        ),
        (
            C::List,
            "test_list_metadata_custom_keys",
            F::FilterOnlySourceAndStep,
            "expected 1, got",
        ),
        (
            C::List,
            "test_list_before",
            F::BeforeInclusive,
            "cursor itself listed",
        ),
        (C::List, "test_list_limit", F::IgnoresLimit, "limit 1"),
        (
            C::List,
            "test_list_limit_plus_before",
            F::LimitAppliedBeforeBefore,
            "expected 1, got 0",
        ),
        (
            C::List,
            "test_list_combined_thread_and_filter",
            F::FilterSearchesAllThreads,
            "got 4",
        ),
        (
            C::List,
            "test_list_empty_result",
            F::ListIgnoresThread,
            "unknown thread lists",
        ),
        (
            C::List,
            "test_list_includes_pending_writes",
            F::ListOmitsWrites,
            "expected 1 write, got 0",
        ),
        (
            C::List,
            "test_list_multiple_namespaces",
            F::ListRootNsMeansEvery,
            "expected 1 root checkpoint",
        ),
        (
            C::List,
            "test_list_metadata_filter_none",
            F::FilterDropsNoneValues,
            "None is a value to match",
        ),
        // delete_thread
        (
            C::DeleteThread,
            "test_delete_thread_removes_checkpoints",
            F::DeleteThreadNoop,
            "survived delete",
        ),
        (
            C::DeleteThread,
            "test_delete_thread_removes_writes",
            F::DeleteThreadLeavesWrites,
            "writes of the deleted thread survived",
        ),
        (
            C::DeleteThread,
            "test_delete_thread_removes_all_namespaces",
            F::DeleteThreadRootNsOnly,
            "namespace \"child:1\" survived",
        ),
        (
            C::DeleteThread,
            "test_delete_thread_preserves_other_threads",
            F::DeleteThreadDeletesEveryThread,
            "other thread was deleted",
        ),
        (
            C::DeleteThread,
            "test_delete_thread_nonexistent_noop",
            F::DeleteThreadErrorsWhenMissing,
            "missing thread",
        ),
        (
            C::DeleteThread,
            "test_delete_thread_then_restore_reads_new_values",
            F::DeleteThreadLeavesBlobs,
            "survived delete_thread",
        ),
        // delete_for_runs
        (
            C::DeleteForRuns,
            "test_delete_for_runs_single",
            F::DeleteForRunsNoop,
            "run1 survived",
        ),
        (
            C::DeleteForRuns,
            "test_delete_for_runs_multiple",
            F::DeleteForRunsFirstIdOnly,
            "deleted runs survived",
        ),
        (
            C::DeleteForRuns,
            "test_delete_for_runs_preserves_other_runs",
            F::DeleteForRunsWholeThread,
            "kept run was deleted",
        ),
        (
            C::DeleteForRuns,
            "test_delete_for_runs_removes_writes",
            F::DeleteForRunsLeavesWrites,
            "survived delete_for_runs",
        ),
        (
            C::DeleteForRuns,
            "test_delete_for_runs_empty_list_noop",
            F::DeleteForRunsEmptyDeletesAll,
            "delete_for_runs([]) deleted",
        ),
        (
            C::DeleteForRuns,
            "test_delete_for_runs_nonexistent_noop",
            F::DeleteForRunsErrorsWhenMissing,
            "unknown run ids",
        ),
        (
            C::DeleteForRuns,
            "test_delete_for_runs_across_namespaces",
            F::DeleteForRunsRootNsOnly,
            "run1 survived in ns \"child:1\"",
        ),
        // copy_thread
        (
            C::CopyThread,
            "test_copy_thread_basic",
            F::CopyNoop,
            "expected 3 copied checkpoints, got 0",
        ),
        (
            C::CopyThread,
            "test_copy_thread_all_checkpoints",
            F::CopyLatestOnly,
            "source has",
        ),
        (
            C::CopyThread,
            "test_copy_thread_preserves_metadata",
            F::CopyDropsMetadata,
            "metadata[",
        ),
        (
            C::CopyThread,
            "test_copy_thread_preserves_namespaces",
            F::CopyRootNsOnly,
            "namespace \"child:1\"",
        ),
        (
            C::CopyThread,
            "test_copy_thread_preserves_writes",
            F::CopyDropsWrites,
            "expected 1 write, got 0",
        ),
        (
            C::CopyThread,
            "test_copy_thread_preserves_ordering",
            F::CopyNewIds,
            "source order",
        ),
        (
            C::CopyThread,
            "test_copy_thread_source_unchanged",
            F::CopyMovesSource,
            "source changed",
        ),
        (
            C::CopyThread,
            "test_copy_thread_nonexistent_source",
            F::CopyMissingSourceCreatesCheckpoint,
            "target has 1 checkpoints",
        ),
        // prune
        (
            C::Prune,
            "test_prune_keep_latest_single_thread",
            F::PruneNoop,
            "expected 1 checkpoint",
        ),
        (
            C::Prune,
            "test_prune_keep_latest_multiple_threads",
            F::PruneFirstThreadOnly,
            "expected 1 checkpoint",
        ),
        (
            C::Prune,
            "test_prune_keep_latest_across_namespaces",
            F::PruneRootNsOnly,
            "in ns \"child:1\"",
        ),
        (
            C::Prune,
            "test_prune_keep_latest_preserves_writes",
            F::PruneDropsLatestWrites,
            "expected 1 write, got 0",
        ),
        (
            C::Prune,
            "test_prune_delete_all",
            F::PruneDeleteKeepsLatest,
            "1 checkpoints survived",
        ),
        (
            C::Prune,
            "test_prune_preserves_other_threads",
            F::PruneEveryThread,
            "other thread changed",
        ),
        (
            C::Prune,
            "test_prune_empty_list_noop",
            F::PruneEmptyMeansEveryThread,
            "prune([]) changed a thread",
        ),
        (
            C::Prune,
            "test_prune_nonexistent_noop",
            F::PruneErrorsWhenMissing,
            "missing thread",
        ),
        // delta channel history
        (
            C::DeltaChannelHistory,
            "test_delta_seed_at_snapshot_writes_oldest_first",
            F::DeltaNewestFirst,
            "(oldest first)",
        ),
        (
            C::DeltaChannelHistory,
            "test_delta_excludes_target_writes",
            F::DeltaIncludesTargetWrites,
            "\"pending\"",
        ),
        (
            C::DeltaChannelHistory,
            "test_delta_writes_in_task_path_order",
            F::DeltaSortsByTaskId,
            "(oldest first)",
        ),
        (
            C::DeltaChannelHistory,
            "test_delta_no_seed_walks_to_root",
            F::DeltaNoSeedNoWrites,
            "expected [\"first\", \"second\"]",
        ),
        (
            C::DeltaChannelHistory,
            "test_delta_fork_follows_own_path",
            F::DeltaFollowsIdOrder,
            "\"main\"",
        ),
        (
            C::DeltaChannelHistory,
            "test_delta_channels_terminate_independently",
            F::DeltaStopsAtFirstSeedOfAnyChannel,
            "expected [\"a0\", \"a1\"]",
        ),
        (
            C::DeltaChannelHistory,
            "test_delta_stored_none_is_a_seed",
            F::DeltaNoneIsNotASeed,
            "expected Some(Nil)",
        ),
        (
            C::DeltaChannelHistory,
            "test_delta_empty_and_unknown_channels",
            F::DeltaNoChannelsMeansAll,
            "no channels asked",
        ),
        (
            C::DeltaChannelHistory,
            "test_delta_missing_checkpoint",
            F::DeltaMissingCheckpointOmitsEntries,
            "expected 2 entries, got 0",
        ),
        (
            C::DeltaChannelHistory,
            "test_delta_latest_when_no_checkpoint_id",
            F::DeltaNoCheckpointIdIsMissing,
            "expected [\"x\", \"y\"]",
        ),
        (
            C::DeltaChannelHistory,
            "test_delta_override_matches_default_walk",
            F::DeltaSortsByTaskId,
            "default walk says",
        ),
        (
            C::DeltaChannelHistory,
            "test_delta_pruned_thread_still_reconstructs",
            F::PruneCutsDeltaChain,
            "expected [\"b\", \"c\"]",
        ),
        (
            C::DeltaChannelHistory,
            "test_delta_copied_thread_still_reconstructs",
            F::CopyDropsWrites,
            "expected [\"b\", \"c\"]",
        ),
        (
            C::DeltaChannelHistory,
            "test_delta_delete_for_runs_keeps_needed_chain",
            F::DeleteForRunsCutsDeltaChain,
            "expected [\"b\", \"c\"]",
        ),
    ]
};

/// More faults, each caught by a case already in [`TABLE`]: a second realistic way to
/// break what the case checks.
const MORE: &[(Capability, &str, Fault, &str)] = &[
    (
        Capability::List,
        "test_list_before",
        Fault::IgnoresBefore,
        "listed",
    ),
    (
        Capability::PutWrites,
        "test_put_writes_idempotent",
        Fault::DuplicatesRetriedWrites,
        "expected exactly 1 write total",
    ),
    (
        Capability::GetTuple,
        "test_get_tuple_metadata",
        Fault::DropsSource,
        "source",
    ),
    (
        Capability::List,
        "test_list_metadata_filter_none",
        Fault::FilterNoneMatchesOnlyMissing,
        "did not list the checkpoint whose metadata has tag=None",
    ),
];

async fn outcomes(fault: Fault) -> Vec<(Capability, &'static str, Outcome)> {
    let mut out = Vec::new();
    for case in conformance::cases() {
        // A fresh saver per case, so one case's data cannot fail another.
        let saver = Faulty::new(fault);
        out.push((case.capability, case.name, run_case(&saver, &case).await));
    }
    out
}

/// The table covers every case of the kit, once, in order.
#[test]
fn every_case_has_a_fault() {
    let cases: Vec<(Capability, &str)> = conformance::cases()
        .iter()
        .map(|c| (c.capability, c.name))
        .collect();
    let table: Vec<(Capability, &str)> = TABLE.iter().map(|(c, n, _, _)| (*c, *n)).collect();
    assert_eq!(table, cases);
    assert_eq!(cases.len(), 98, "README states the count");
}

/// The harness itself is sound: with no fault, `Faulty` passes every case.
#[tokio::test]
async fn the_unbroken_wrapper_passes_every_case() {
    for (cap, name, outcome) in outcomes(Fault::Nothing).await {
        assert_eq!(outcome, Outcome::Passed, "{cap}::{name}");
    }
}

/// Every case fails on the saver broken its way, saying why; each fault is narrow.
#[tokio::test]
async fn every_case_fails_on_its_fault() {
    check(TABLE).await;
}

/// The second faults fail their cases too.
#[tokio::test]
async fn more_faults_fail_their_cases() {
    check(MORE).await;
}

async fn check(table: &[(Capability, &str, Fault, &str)]) {
    let mut problems = Vec::new();
    let mut by_fault: Vec<Fault> = Vec::new();
    for (_, _, f, _) in table {
        if !by_fault.contains(f) {
            by_fault.push(*f);
        }
    }
    for fault in by_fault {
        let results = outcomes(fault).await;
        let passed = results
            .iter()
            .filter(|(_, _, o)| *o == Outcome::Passed)
            .count();
        // Narrow: the fault breaks what it breaks, not everything.
        if passed < MIN_PASSED_BY_A_FAULT {
            problems.push(format!("{fault:?} passes only {passed} of 98 cases"));
        }
        for (cap, name, _, words) in table.iter().filter(|r| r.2 == fault) {
            let got = results
                .iter()
                .find(|(c, n, _)| c == cap && n == name)
                .map(|(_, _, o)| o.clone());
            match got {
                Some(Outcome::Failed(why)) if why.contains(words) => {}
                other => problems.push(format!(
                    "{cap}::{name} on {fault:?}: {other:?}, expected a failure saying {words:?}"
                )),
            }
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

/// A fault may break the cases that depend on what it breaks, but must leave most of
/// the kit passing (a strict majority of its 98 cases).
const MIN_PASSED_BY_A_FAULT: usize = 50;
