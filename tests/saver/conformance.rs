//! The conformance kit against `InMemorySaver`: one test per case of the Python spec
//! (`langgraph-checkpoint-conformance==0.0.2`, spec/*.py) and of the delta-history
//! cases, plus whole-suite runs over plain JsonPlus and over an at-rest-transforming
//! serializer.

use std::sync::Arc;

use langgraph_codec::saver::conformance;
use langgraph_codec::saver::{Capability, InMemorySaver};
use langgraph_codec::{JsonPlusSerializer, Serializer, TypedBytes, Value};

// One test per case, as a saver author would write them (`conformance_kit::put::…`).
langgraph_codec::conformance_tests!(|| async { InMemorySaver::new() });

/// Checks that the kit has exactly the Python spec's cases, in its order (then the
/// kit's own cases, which Python's suite does not have).
macro_rules! case_tests {
    ($module:ident, $cap:ident: $($name:ident),* $(,)?) => {
        mod $module {
            use super::*;
            /// The port has exactly the Python spec's cases, in its order.
            #[test]
            fn case_list_matches_the_spec() {
                let names: Vec<&str> = conformance::cases_for(Capability::$cap).iter().map(|c| c.name).collect();
                assert_eq!(names, [$(stringify!($name)),*]);
            }
        }
    };
}

// Names and order copied from the ALL_*_TESTS lists of spec/test_*.py, then the kit's
// own cases (rules the docs state that Python's suite does not check).
case_tests!(put, Put:
    test_put_returns_config, test_put_roundtrip, test_put_preserves_channel_values,
    test_put_preserves_channel_versions, test_put_preserves_versions_seen,
    test_put_preserves_metadata, test_put_root_namespace, test_put_child_namespace,
    test_put_default_namespace, test_put_multiple_checkpoints_same_thread,
    test_put_multiple_threads_isolated, test_put_parent_config,
    test_put_incremental_channel_update, test_put_new_channel_added, test_put_channel_removed,
    test_put_preserves_run_id, test_put_preserves_versions_seen_values,
    // the kit's own, after the spec's
    test_put_merges_config_into_metadata,
);
case_tests!(put_writes, PutWrites:
    test_put_writes_basic, test_put_writes_multiple_writes_same_task,
    test_put_writes_multiple_tasks, test_put_writes_preserves_task_id,
    test_put_writes_preserves_channel_and_value, test_put_writes_task_path,
    test_put_writes_idempotent, test_put_writes_special_channels,
    test_put_writes_across_namespaces, test_put_writes_cleared_on_next_checkpoint,
);
case_tests!(get_tuple, GetTuple:
    test_get_tuple_nonexistent_returns_none, test_get_tuple_latest_when_no_checkpoint_id,
    test_get_tuple_specific_checkpoint_id, test_get_tuple_config_structure,
    test_get_tuple_checkpoint_fields, test_get_tuple_metadata, test_get_tuple_parent_config,
    test_get_tuple_pending_writes, test_get_tuple_respects_namespace,
    test_get_tuple_nonexistent_checkpoint_id,
);
case_tests!(list, List:
    test_list_all, test_list_by_thread, test_list_by_namespace, test_list_ordering,
    test_list_metadata_filter_single_key, test_list_metadata_filter_step,
    test_list_metadata_filter_multiple_keys, test_list_metadata_filter_no_match,
    test_list_metadata_custom_keys, test_list_before, test_list_limit,
    test_list_limit_plus_before, test_list_combined_thread_and_filter, test_list_empty_result,
    test_list_includes_pending_writes, test_list_multiple_namespaces,
    // the kit's own, after the spec's
    test_list_metadata_filter_none,
);
case_tests!(delete_thread, DeleteThread:
    test_delete_thread_removes_checkpoints, test_delete_thread_removes_writes,
    test_delete_thread_removes_all_namespaces, test_delete_thread_preserves_other_threads,
    test_delete_thread_nonexistent_noop,
    // Beyond the spec.
    test_delete_thread_then_restore_reads_new_values,
);
case_tests!(delete_for_runs, DeleteForRuns:
    test_delete_for_runs_single, test_delete_for_runs_multiple,
    test_delete_for_runs_preserves_other_runs, test_delete_for_runs_removes_writes,
    test_delete_for_runs_empty_list_noop, test_delete_for_runs_nonexistent_noop,
    test_delete_for_runs_across_namespaces,
);
case_tests!(copy_thread, CopyThread:
    test_copy_thread_basic, test_copy_thread_all_checkpoints,
    test_copy_thread_preserves_metadata, test_copy_thread_preserves_namespaces,
    test_copy_thread_preserves_writes, test_copy_thread_preserves_ordering,
    test_copy_thread_source_unchanged, test_copy_thread_nonexistent_source,
);
case_tests!(prune, Prune:
    test_prune_keep_latest_single_thread, test_prune_keep_latest_multiple_threads,
    test_prune_keep_latest_across_namespaces, test_prune_keep_latest_preserves_writes,
    test_prune_delete_all, test_prune_preserves_other_threads, test_prune_empty_list_noop,
    test_prune_nonexistent_noop,
);
case_tests!(delta, DeltaChannelHistory:
    test_delta_seed_at_snapshot_writes_oldest_first, test_delta_excludes_target_writes,
    test_delta_writes_in_task_path_order, test_delta_no_seed_walks_to_root,
    test_delta_fork_follows_own_path, test_delta_channels_terminate_independently,
    test_delta_stored_none_is_a_seed, test_delta_empty_and_unknown_channels,
    test_delta_missing_checkpoint, test_delta_latest_when_no_checkpoint_id,
    test_delta_override_matches_default_walk, test_delta_pruned_thread_still_reconstructs,
    test_delta_copied_thread_still_reconstructs, test_delta_delete_for_runs_keeps_needed_chain,
);

#[tokio::test]
async fn whole_suite_passes_on_plain_jsonplus() {
    let report =
        conformance::run_conformance_named("InMemorySaver", || async { InMemorySaver::new() })
            .await;
    println!("{report}");
    assert!(report.is_success(), "{report}");
    assert_eq!(report.conformance_level(), "FULL");
    // 81 Python spec cases + 3 of the kit's own + 14 delta cases, none skipped.
    assert_eq!(report.passed(), 98);
}

/// A stand-in for an encrypting serializer: every byte at rest is transformed and the
/// tag gets a `+xor` suffix, as `EncryptedSerializer` adds `+aes`.
#[derive(Debug)]
struct XorSerializer(u8);

impl Serializer for XorSerializer {
    fn dumps_typed(&self, value: &Value) -> langgraph_codec::Result<TypedBytes> {
        let inner = JsonPlusSerializer::new().dumps_typed(value)?;
        let data: Vec<u8> = inner.data.iter().map(|b| b ^ self.0).collect();
        Ok(TypedBytes::new(format!("{}+xor", inner.type_tag), data))
    }
    fn loads_typed(&self, type_tag: &str, data: &[u8]) -> langgraph_codec::Result<Value> {
        let tag = type_tag.strip_suffix("+xor").unwrap_or(type_tag);
        let plain: Vec<u8> = data.iter().map(|b| b ^ self.0).collect();
        JsonPlusSerializer::new().loads_typed(tag, &plain)
    }
}

#[tokio::test]
async fn whole_suite_passes_over_a_transforming_serializer() {
    let report = conformance::run_conformance_named("InMemorySaver+xor", || async {
        InMemorySaver::with_serializer(Arc::new(XorSerializer(0x5a)))
    })
    .await;
    assert!(report.is_success(), "{report}");
    assert_eq!(report.passed(), 98);
}

/// A saver with only the base capabilities (and one optional bug): forwards to
/// `InMemorySaver`, claims no extended capability.
struct BaseOnly {
    inner: InMemorySaver,
    reverse_list: bool,
    /// `list` is `todo!()`, as in a saver being written.
    todo_list: bool,
}

#[async_trait::async_trait]
impl langgraph_codec::saver::CheckpointSaver for BaseOnly {
    async fn put(
        &self,
        config: &langgraph_codec::saver::CheckpointConfig,
        checkpoint: &langgraph_codec::saver::Checkpoint,
        metadata: &langgraph_codec::saver::CheckpointMetadata,
        new_versions: &langgraph_codec::saver::ChannelVersions,
    ) -> langgraph_codec::Result<langgraph_codec::saver::CheckpointConfig> {
        self.inner
            .put(config, checkpoint, metadata, new_versions)
            .await
    }
    async fn put_writes(
        &self,
        config: &langgraph_codec::saver::CheckpointConfig,
        writes: &[(String, Value)],
        task_id: &str,
        task_path: &str,
    ) -> langgraph_codec::Result<()> {
        self.inner
            .put_writes(config, writes, task_id, task_path)
            .await
    }
    async fn get_tuple(
        &self,
        config: &langgraph_codec::saver::CheckpointConfig,
    ) -> langgraph_codec::Result<Option<langgraph_codec::saver::CheckpointTuple>> {
        self.inner.get_tuple(config).await
    }
    async fn list(
        &self,
        config: Option<&langgraph_codec::saver::CheckpointConfig>,
        options: &langgraph_codec::saver::ListOptions,
    ) -> langgraph_codec::Result<Vec<langgraph_codec::saver::CheckpointTuple>> {
        if self.todo_list {
            todo!()
        }
        let mut out = self.inner.list(config, options).await?;
        if self.reverse_list {
            out.reverse();
        }
        Ok(out)
    }
    async fn delete_thread(&self, thread_id: &str) -> langgraph_codec::Result<()> {
        self.inner.delete_thread(thread_id).await
    }
}

/// The whole kit on a `BaseOnly` saver, optionally broken.
async fn run_base_only(name: &str, reverse_list: bool, todo_list: bool) -> conformance::Report {
    conformance::run_conformance_named(name, || async move {
        BaseOnly {
            inner: InMemorySaver::new(),
            reverse_list,
            todo_list,
        }
    })
    .await
}

#[tokio::test]
async fn missing_capabilities_are_skipped_not_failed() {
    let report = run_base_only("base only", false, false).await;
    assert!(report.is_success(), "{report}");
    for cap in [
        Capability::DeleteForRuns,
        Capability::CopyThread,
        Capability::Prune,
    ] {
        let c = report.capability(cap).expect("reported");
        assert!(
            !c.detected && c.cases.is_empty(),
            "{cap} should be not implemented"
        );
    }
    // The delta cases that prune, copy or delete runs are skipped; the rest run (on the
    // default parent-chain walk, since BaseOnly does not override it).
    let delta = report
        .capability(Capability::DeltaChannelHistory)
        .expect("delta");
    assert_eq!(
        (delta.passed(), delta.skipped(), delta.failed()),
        (11, 3, 0)
    );
    assert_eq!(report.conformance_level(), "FULL");
    assert!(report.to_string().contains("SKIP  prune"), "{report}");
}

#[tokio::test]
async fn a_broken_saver_fails_the_right_cases() {
    let report = run_base_only("reversed list", true, false).await;
    assert!(!report.is_success());
    assert_eq!(report.conformance_level(), "BASE");
    assert!(!report.passed_all_base());
    let failed: Vec<&str> = report.failures().iter().map(|(_, name, _)| *name).collect();
    assert_eq!(failed, ["test_list_ordering"]);
    let text = report.to_string();
    assert!(
        text.contains("FAIL  list") && text.contains("list::test_list_ordering"),
        "{text}"
    );
}

#[tokio::test]
async fn whole_suite_passes_over_encrypted_serializer() {
    use langgraph_codec::crypto::{AesMode, EncryptedSerializer};
    for mode in [AesMode::Eax, AesMode::Gcm] {
        let report = conformance::run_conformance_named("InMemorySaver+aes", || async move {
            let serde =
                EncryptedSerializer::from_aes_key(b"0123456789abcdef0123456789abcdef", mode)
                    .expect("32-byte key");
            InMemorySaver::with_serializer(Arc::new(serde))
        })
        .await;
        assert!(report.is_success(), "{report}");
        assert_eq!(report.passed(), 98);
    }
}

/// A `todo!()` in one saver method fails the cases that call it, each named, and the
/// rest of the run goes on (it used to end the whole run with the panic).
#[tokio::test]
async fn a_panic_in_one_method_fails_its_cases_and_the_run_goes_on() {
    let report = run_base_only("todo list", false, true).await;
    let list = report.capability(Capability::List).expect("list reported");
    assert_eq!(list.passed(), 0, "{report}");
    assert_eq!(list.failed(), list.cases.len(), "{report}");
    let failures = report.failures();
    assert!(
        failures
            .iter()
            .any(|(cap, name, why)| *cap == Capability::List
                && *name == "test_list_all"
                && why.contains("panicked")
                && why.contains("not yet implemented")),
        "{report}"
    );
    // The capabilities that never call `list` ran and passed.
    for cap in [Capability::Put, Capability::PutWrites, Capability::GetTuple] {
        let c = report.capability(cap).expect("reported");
        assert!(c.passed_all() && c.passed() > 0, "{cap}: {report}");
    }
    assert!(report
        .to_string()
        .contains("list::test_list_all: panicked: not yet implemented"));
}

/// The report reads right for a first-time user: a saver with only the
/// base capabilities is Python's `FULL`, and the result line says what it lacks; the
/// delta history is printed and counted as extended; `passed_all_base` is Python's.
#[tokio::test]
async fn levels_read_right_and_passed_all_base_is_pythons() {
    let report = run_base_only("base only", false, false).await;
    assert_eq!(report.conformance_level(), "FULL");
    assert!(report.passed_all() && report.passed_all_base());
    assert_eq!(
        report.not_implemented(),
        [
            Capability::DeleteForRuns,
            Capability::CopyThread,
            Capability::Prune
        ]
    );
    let text = report.to_string();
    assert!(!text.contains("(6/6 capabilities)"), "{text}");
    assert!(
        text.contains("Result: FULL: 6 of 6 implemented capabilities passed (base: 5 of 5); not implemented: delete_for_runs, copy_thread, prune"),
        "{text}"
    );
    // delta_channel_history is under EXTENDED, not BASE.
    let ext = text
        .find("EXTENDED CAPABILITIES")
        .expect("extended section");
    let delta = text.find("delta_channel_history").expect("delta line");
    assert!(delta > ext, "{text}");
    assert!(!Capability::DeltaChannelHistory.is_base());
}

/// The trait's docs state the rules the kit enforces, on the methods an implementer
/// reads: the special-channel indices, retried
/// writes, write order, and the metadata `put` stores.
#[test]
fn trait_docs_state_the_rules_the_kit_enforces() {
    let src = include_str!("../../src/saver/traits.rs");
    let doc_of = |method: &str| -> String {
        let at = src
            .find(&format!("async fn {method}("))
            .unwrap_or_else(|| panic!("no {method}"));
        let before = &src[..at];
        before
            .lines()
            .rev()
            .skip(1)
            .take_while(|l| l.trim_start().starts_with("///"))
            .collect::<Vec<_>>()
            .join("\n")
    };
    let put_writes = doc_of("put_writes");
    for words in [
        "`__error__` −1",
        "`__scheduled__` −2",
        "`__interrupt__` −3",
        "`__resume__` −4",
        "position in `writes`",
        "first write wins",
        "*every*",
        "replaces",
        "`(task_path, task_id, idx)`",
    ] {
        assert!(put_writes.contains(words), "put_writes docs lack {words:?}");
    }
    let put = doc_of("put");
    for words in ["get_checkpoint_metadata", "configurable", "`__`"] {
        assert!(put.contains(words), "put docs lack {words:?}");
    }
}
