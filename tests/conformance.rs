//! The conformance kit against `InMemorySaver`: one test per case of the Python spec
//! (`langgraph-checkpoint-conformance==0.0.2`, spec/*.py) and of the delta-history
//! cases, plus whole-suite runs over plain JsonPlus and over an at-rest-transforming
//! serializer.

use std::sync::Arc;

use langgraph_codec::saver::conformance::{self, find_case, run_case, Outcome};
use langgraph_codec::saver::{Capability, InMemorySaver};
use langgraph_codec::{JsonPlusSerializer, Serializer, TypedBytes, Value};

async fn run(capability: Capability, name: &str) {
    let case =
        find_case(capability, name).unwrap_or_else(|| panic!("no case {capability}::{name}"));
    let saver = InMemorySaver::new();
    match run_case(&saver, &case).await {
        Outcome::Passed => {}
        other => panic!("{capability}::{name}: {other:?}"),
    }
}

macro_rules! case_tests {
    ($module:ident, $cap:ident: $($name:ident),* $(,)?) => {
        mod $module {
            use super::*;
            $(
                #[tokio::test]
                async fn $name() {
                    run(Capability::$cap, stringify!($name)).await;
                }
            )*
            /// The port has exactly the Python spec's cases, in its order.
            #[test]
            fn case_list_matches_the_spec() {
                let names: Vec<&str> = conformance::cases_for(Capability::$cap).iter().map(|c| c.name).collect();
                assert_eq!(names, [$(stringify!($name)),*]);
            }
        }
    };
}

// Names and order copied from the ALL_*_TESTS lists of spec/test_*.py.
case_tests!(put, Put:
    test_put_returns_config, test_put_roundtrip, test_put_preserves_channel_values,
    test_put_preserves_channel_versions, test_put_preserves_versions_seen,
    test_put_preserves_metadata, test_put_root_namespace, test_put_child_namespace,
    test_put_default_namespace, test_put_multiple_checkpoints_same_thread,
    test_put_multiple_threads_isolated, test_put_parent_config,
    test_put_incremental_channel_update, test_put_new_channel_added, test_put_channel_removed,
    test_put_preserves_run_id, test_put_preserves_versions_seen_values,
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
);
case_tests!(delete_thread, DeleteThread:
    test_delete_thread_removes_checkpoints, test_delete_thread_removes_writes,
    test_delete_thread_removes_all_namespaces, test_delete_thread_preserves_other_threads,
    test_delete_thread_nonexistent_noop,
    // Beyond the spec (issue 22).
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
    // 81 Python spec cases + 14 delta cases, none skipped.
    assert_eq!(report.passed(), 96);
}

/// A stand-in for an encrypting serializer: every byte at rest is transformed and the
/// tag gets a `+xor` suffix, as `EncryptedSerializer` adds `+aes`.
#[derive(Debug)]
struct XorSerializer(u8);

impl Serializer for XorSerializer {
    fn dumps_typed(&self, value: &Value) -> langgraph_codec::serializer::Result<TypedBytes> {
        let inner = JsonPlusSerializer::new().dumps_typed(value)?;
        let data: Vec<u8> = inner.data.iter().map(|b| b ^ self.0).collect();
        Ok(TypedBytes::new(format!("{}+xor", inner.type_tag), data))
    }
    fn loads_typed(
        &self,
        type_tag: &str,
        data: &[u8],
    ) -> langgraph_codec::serializer::Result<Value> {
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
    assert_eq!(report.passed(), 96);
}

/// A saver with only the base capabilities (and one optional bug): forwards to
/// `InMemorySaver`, claims no extended capability.
struct BaseOnly {
    inner: InMemorySaver,
    reverse_list: bool,
}

#[async_trait::async_trait]
impl langgraph_codec::saver::CheckpointSaver for BaseOnly {
    async fn put(
        &self,
        config: &langgraph_codec::saver::CheckpointConfig,
        checkpoint: &langgraph_codec::saver::Checkpoint,
        metadata: &langgraph_codec::saver::CheckpointMetadata,
        new_versions: &langgraph_codec::saver::ChannelVersions,
    ) -> langgraph_codec::saver::Result<langgraph_codec::saver::CheckpointConfig> {
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
    ) -> langgraph_codec::saver::Result<()> {
        self.inner
            .put_writes(config, writes, task_id, task_path)
            .await
    }
    async fn get_tuple(
        &self,
        config: &langgraph_codec::saver::CheckpointConfig,
    ) -> langgraph_codec::saver::Result<Option<langgraph_codec::saver::CheckpointTuple>> {
        self.inner.get_tuple(config).await
    }
    async fn list(
        &self,
        config: Option<&langgraph_codec::saver::CheckpointConfig>,
        options: &langgraph_codec::saver::ListOptions,
    ) -> langgraph_codec::saver::Result<Vec<langgraph_codec::saver::CheckpointTuple>> {
        let mut out = self.inner.list(config, options).await?;
        if self.reverse_list {
            out.reverse();
        }
        Ok(out)
    }
    async fn delete_thread(&self, thread_id: &str) -> langgraph_codec::saver::Result<()> {
        self.inner.delete_thread(thread_id).await
    }
}

#[tokio::test]
async fn missing_capabilities_are_skipped_not_failed() {
    let report = conformance::run_conformance_named("base only", || async {
        BaseOnly {
            inner: InMemorySaver::new(),
            reverse_list: false,
        }
    })
    .await;
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
    let report = conformance::run_conformance_named("reversed list", || async {
        BaseOnly {
            inner: InMemorySaver::new(),
            reverse_list: true,
        }
    })
    .await;
    assert!(!report.is_success());
    assert_eq!(report.conformance_level(), "BASE");
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
        assert_eq!(report.passed(), 96);
    }
}
