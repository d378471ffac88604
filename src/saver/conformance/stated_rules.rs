//! Cases for rules the crate's docs state that Python's conformance suite does not
//! check: the metadata `put` stores takes in the config's `metadata` and scalar
//! `configurable` values (Python's `get_checkpoint_metadata`, which every Python
//! saver calls in `put`), and a `None` filter value in `list`.

use super::util::{config, ensure, generate_checkpoint, generate_metadata, uuid4, versions};
use super::util::{CaseResult, Failure};
use crate::saver::traits::{CheckpointSaver, ListOptions};
use crate::saver::types::CheckpointTuple;
use crate::value::Value;

/// `put` stores Python's `get_checkpoint_metadata(config, metadata)`: keys of
/// `config["metadata"]`, then of `config["configurable"]`, that the metadata lacks,
/// when their value is a str, int, float or bool and the key neither starts with `__`
/// nor is one of `EXCLUDED_METADATA_KEYS` (thread_id, checkpoint_ns, langgraph_node…).
/// The metadata's own keys win, then `config["metadata"]`'s.
pub(super) async fn test_put_merges_config_into_metadata(s: &dyn CheckpointSaver) -> CaseResult {
    let mut cfg = config(&uuid4());
    for (k, v) in [
        ("user", Value::from("from-config-metadata")),
        ("tenant", Value::from("acme")),
    ] {
        cfg.metadata.insert(k.to_owned(), v);
    }
    for (k, v) in [
        ("model", Value::from("gpt-x")),
        ("temperature", Value::from(0.5f64)),
        ("retries", Value::from(3i64)),
        ("stream", Value::from(true)),
        ("user", Value::from("from-configurable")),
        ("source", Value::from("from-configurable")),
        ("__pregel_secret", Value::from("hidden")),
        ("langgraph_node", Value::from("agent")),
        ("options", Value::map([("a", Value::from(1i64))])),
        ("tags", Value::Array(vec![Value::from("t")])),
        ("nothing", Value::Nil),
    ] {
        cfg.configurable.insert(k.to_owned(), v);
    }
    let stored = s
        .put(
            &cfg,
            &generate_checkpoint(&[], &[], &[]),
            &generate_metadata("loop", 1, &[]),
            &versions(&[]),
        )
        .await?;
    let md = s
        .get_tuple(&stored)
        .await?
        .ok_or_else(|| Failure("get_tuple returned None for a stored checkpoint".to_owned()))?
        .metadata;
    for (key, want) in [
        ("model", Value::from("gpt-x")),
        ("temperature", Value::from(0.5f64)),
        ("retries", Value::from(3i64)),
        ("stream", Value::from(true)),
        ("tenant", Value::from("acme")),
        ("user", Value::from("from-config-metadata")),
        ("source", Value::from("loop")),
    ] {
        ensure!(
            md.get(key) == Some(&want),
            "metadata[{key:?}] is {:?}, expected {want:?}: put must merge config[\"metadata\"] \
             and scalar config[\"configurable\"] values into the stored metadata (the \
             metadata's own keys first, then config[\"metadata\"]'s)",
            md.get(key)
        );
    }
    for key in [
        "__pregel_secret",
        "langgraph_node",
        "thread_id",
        "checkpoint_ns",
        "options",
        "tags",
        "nothing",
    ] {
        ensure!(
            md.get(key).is_none(),
            "metadata[{key:?}] = {:?} was merged: keys starting with '__', excluded keys \
             and non-scalar values stay out",
            md.get(key)
        );
    }
    Ok(())
}

/// A `None` filter value matches a checkpoint whose metadata stores `None` under that
/// key, and not one that stores another value. (A checkpoint *without* the key is
/// matched by the in-memory and SQLite savers, as in Python, and not by Postgres,
/// whose `@>` containment needs the key: the case accepts either.)
pub(super) async fn test_list_metadata_filter_none(s: &dyn CheckpointSaver) -> CaseResult {
    let tid = uuid4();
    let mut ids = Vec::new();
    for tag in [Some(Value::Nil), Some(Value::from("x")), None] {
        let extra: Vec<(&str, Value)> = tag.into_iter().map(|v| ("tag", v)).collect();
        let cp = generate_checkpoint(&[], &[], &[]);
        s.put(
            &config(&tid),
            &cp,
            &generate_metadata("loop", 0, &extra),
            &versions(&[]),
        )
        .await?;
        ids.push(cp.id);
    }
    let [null_tag, x_tag, no_tag] = ids.as_slice() else {
        return Err(Failure("setup stored 3 checkpoints".to_owned()));
    };
    let got = s
        .list(
            Some(&config(&tid)),
            &ListOptions::new().filter("tag", Value::Nil),
        )
        .await?;
    let has = |id: &str, r: &[CheckpointTuple]| r.iter().any(|t| t.checkpoint.id == id);
    ensure!(
        has(null_tag, &got),
        "filter {{tag: None}} did not list the checkpoint whose metadata has tag=None"
    );
    ensure!(
        !has(x_tag, &got),
        "filter {{tag: None}} listed the checkpoint with tag='x': None is a value to \
         match, not \"any value\""
    );
    ensure!(
        got.len() <= 2 && (got.len() == 1 || has(no_tag, &got)),
        "filter {{tag: None}} listed {} checkpoints, expected the tag=None one (and \
         perhaps the one without a tag)",
        got.len()
    );
    // With another key: None must still constrain.
    let got = s
        .list(
            Some(&config(&tid)),
            &ListOptions::new()
                .filter("source", "loop")
                .filter("tag", Value::Nil),
        )
        .await?;
    ensure!(
        has(null_tag, &got) && !has(x_tag, &got),
        "filter {{source: 'loop', tag: None}}: expected the tag=None checkpoint and not \
         the tag='x' one"
    );
    Ok(())
}
