//! One `#[test]` per conformance case: [`conformance_tests!`](crate::conformance_tests).

use std::future::Future;

use super::{find_case, run_case, Outcome};
use crate::saver::traits::{Capability, CheckpointSaver};

/// Runs one case, by capability and name, on a saver from `factory`, as a test does:
/// panics (failing the test) when the case fails or the saver panics in it, with the
/// case's name and why; prints a line and returns when it is skipped (the saver does
/// not implement a capability the case needs). Used by
/// [`conformance_tests!`](crate::conformance_tests).
///
/// # Panics
///
/// When the case fails, or no case of the kit has this capability and name: failing
/// the test is what this function is for.
#[allow(clippy::panic)]
pub async fn run_one_test<F, Fut, S>(factory: F, capability: Capability, name: &str)
where
    F: FnOnce() -> Fut,
    Fut: Future<Output = S>,
    S: CheckpointSaver,
{
    let Some(case) = find_case(capability, name) else {
        panic!("the conformance kit has no case {capability}::{name}");
    };
    let saver = factory().await;
    match run_case(&saver, &case).await {
        Outcome::Passed => {}
        Outcome::Skipped(why) => println!("{capability}::{name} skipped: {why}"),
        Outcome::Failed(why) => panic!("{capability}::{name} failed: {why}"),
    }
}

/// Generates one async test per conformance case, in a module `conformance_kit`
/// with one sub-module per capability (`conformance_kit::put::test_put_roundtrip`,
/// …), so `cargo test put_writes` or `cargo test test_list_before` runs just those.
///
/// The argument is a factory expression, called once per test: a closure returning a
/// future of a fresh saver. Each test is `#[tokio::test]` unless you give another
/// test attribute first; your crate then needs `tokio` (with the `macros` and `rt`
/// features) as a dev-dependency. A case your saver lacks a capability for passes
/// with a printed "skipped" line; a failing case fails its test with the reason; a
/// panic in a saver method fails that case's test only.
///
/// ```
/// use langgraph_codec::saver::InMemorySaver;
///
/// langgraph_codec::conformance_tests!(|| async { InMemorySaver::new() });
///
/// // Or with another test attribute (e.g. a multi-threaded runtime):
/// mod threaded {
///     use langgraph_codec::saver::InMemorySaver;
///     langgraph_codec::conformance_tests!(
///         #[tokio::test(flavor = "multi_thread")]
///         || async { InMemorySaver::new() }
///     );
/// }
/// # fn main() {}
/// ```
///
/// Also generated: `conformance_kit::covers_every_case`, which fails if the kit has a
/// case this macro does not list (it cannot, when both come from the same version).
#[macro_export]
macro_rules! conformance_tests {
    (#[$attr:meta] $factory:expr) => {
        $crate::__conformance_case_names! { $crate::__conformance_test_fns; [$attr] ($factory) }
    };
    ($factory:expr) => {
        $crate::__conformance_case_names! { $crate::__conformance_test_fns; [tokio::test] ($factory) }
    };
}

/// Every case of the kit by capability, in the kit's order: calls `$callback!` with
/// them. Internal to [`conformance_tests!`](crate::conformance_tests).
#[doc(hidden)]
#[macro_export]
macro_rules! __conformance_case_names {
    ($callback:path; $($args:tt)*) => {
        $callback! { $($args)*
            put: Put [
                test_put_returns_config, test_put_roundtrip, test_put_preserves_channel_values,
                test_put_preserves_channel_versions, test_put_preserves_versions_seen,
                test_put_preserves_metadata, test_put_root_namespace, test_put_child_namespace,
                test_put_default_namespace, test_put_multiple_checkpoints_same_thread,
                test_put_multiple_threads_isolated, test_put_parent_config,
                test_put_incremental_channel_update, test_put_new_channel_added,
                test_put_channel_removed, test_put_preserves_run_id,
                test_put_preserves_versions_seen_values, test_put_merges_config_into_metadata
            ];
            put_writes: PutWrites [
                test_put_writes_basic, test_put_writes_multiple_writes_same_task,
                test_put_writes_multiple_tasks, test_put_writes_preserves_task_id,
                test_put_writes_preserves_channel_and_value, test_put_writes_task_path,
                test_put_writes_idempotent, test_put_writes_special_channels,
                test_put_writes_across_namespaces, test_put_writes_cleared_on_next_checkpoint
            ];
            get_tuple: GetTuple [
                test_get_tuple_nonexistent_returns_none,
                test_get_tuple_latest_when_no_checkpoint_id,
                test_get_tuple_specific_checkpoint_id, test_get_tuple_config_structure,
                test_get_tuple_checkpoint_fields, test_get_tuple_metadata,
                test_get_tuple_parent_config, test_get_tuple_pending_writes,
                test_get_tuple_respects_namespace, test_get_tuple_nonexistent_checkpoint_id
            ];
            list: List [
                test_list_all, test_list_by_thread, test_list_by_namespace, test_list_ordering,
                test_list_metadata_filter_single_key, test_list_metadata_filter_step,
                test_list_metadata_filter_multiple_keys, test_list_metadata_filter_no_match,
                test_list_metadata_custom_keys, test_list_before, test_list_limit,
                test_list_limit_plus_before, test_list_combined_thread_and_filter,
                test_list_empty_result, test_list_includes_pending_writes,
                test_list_multiple_namespaces, test_list_metadata_filter_none
            ];
            delete_thread: DeleteThread [
                test_delete_thread_removes_checkpoints, test_delete_thread_removes_writes,
                test_delete_thread_removes_all_namespaces,
                test_delete_thread_preserves_other_threads, test_delete_thread_nonexistent_noop,
                test_delete_thread_then_restore_reads_new_values
            ];
            delete_for_runs: DeleteForRuns [
                test_delete_for_runs_single, test_delete_for_runs_multiple,
                test_delete_for_runs_preserves_other_runs, test_delete_for_runs_removes_writes,
                test_delete_for_runs_empty_list_noop, test_delete_for_runs_nonexistent_noop,
                test_delete_for_runs_across_namespaces
            ];
            copy_thread: CopyThread [
                test_copy_thread_basic, test_copy_thread_all_checkpoints,
                test_copy_thread_preserves_metadata, test_copy_thread_preserves_namespaces,
                test_copy_thread_preserves_writes, test_copy_thread_preserves_ordering,
                test_copy_thread_source_unchanged, test_copy_thread_nonexistent_source
            ];
            prune: Prune [
                test_prune_keep_latest_single_thread, test_prune_keep_latest_multiple_threads,
                test_prune_keep_latest_across_namespaces, test_prune_keep_latest_preserves_writes,
                test_prune_delete_all, test_prune_preserves_other_threads,
                test_prune_empty_list_noop, test_prune_nonexistent_noop
            ];
            delta: DeltaChannelHistory [
                test_delta_seed_at_snapshot_writes_oldest_first, test_delta_excludes_target_writes,
                test_delta_writes_in_task_path_order, test_delta_no_seed_walks_to_root,
                test_delta_fork_follows_own_path, test_delta_channels_terminate_independently,
                test_delta_stored_none_is_a_seed, test_delta_empty_and_unknown_channels,
                test_delta_missing_checkpoint, test_delta_latest_when_no_checkpoint_id,
                test_delta_override_matches_default_walk,
                test_delta_pruned_thread_still_reconstructs,
                test_delta_copied_thread_still_reconstructs,
                test_delta_delete_for_runs_keeps_needed_chain
            ]
        }
    };
}

/// The test functions of [`conformance_tests!`](crate::conformance_tests).
#[doc(hidden)]
#[macro_export]
macro_rules! __conformance_test_fns {
    ([$attr:meta] ($factory:expr) $($module:ident : $cap:ident [$($name:ident),* $(,)?]);* $(;)?) => {
        #[allow(non_snake_case, unused_imports)]
        mod conformance_kit {
            use super::*;
            $(
                mod $module {
                    use super::*;
                    $(
                        #[$attr]
                        async fn $name() {
                            $crate::saver::conformance::run_one_test(
                                $factory,
                                $crate::saver::Capability::$cap,
                                stringify!($name),
                            )
                            .await;
                        }
                    )*
                }
            )*

            /// The macro lists every case of the kit, in its order.
            #[test]
            fn covers_every_case() {
                let listed: ::std::vec::Vec<(&str, &str)> = ::std::vec![
                    $($(($crate::saver::Capability::$cap.as_str(), stringify!($name))),*),*
                ];
                let kit: ::std::vec::Vec<(&str, &str)> = $crate::saver::conformance::cases()
                    .iter()
                    .map(|c| (c.capability.as_str(), c.name))
                    .collect();
                assert_eq!(listed, kit);
            }
        }
    };
}

/// The names the macro lists, as a function returning `(capability, name)` pairs
/// (for the check below).
#[cfg(test)]
macro_rules! names_fn {
    ([$attr:meta] ($factory:expr) $($module:ident : $cap:ident [$($name:ident),* $(,)?]);* $(;)?) => {
        fn listed() -> Vec<(Capability, &'static str)> {
            vec![$($((Capability::$cap, stringify!($name))),*),*]
        }
    };
}

#[cfg(test)]
mod tests {
    use super::*;

    crate::__conformance_case_names! { names_fn; [test] (()) }

    #[test]
    fn the_macro_lists_every_case_in_order() {
        let kit: Vec<(Capability, &str)> = super::super::cases()
            .iter()
            .map(|c| (c.capability, c.name))
            .collect();
        assert_eq!(listed(), kit);
    }
}
