//! The Rust half of the cross-language proof on one Postgres database
//! (`vectors/postgres/cross_language.py` is the Python half; `.ci/checks.d/postgres.sh`
//! runs both).
//!
//! ```text
//! postgres_crosscheck setup   URL SCHEMA
//! postgres_crosscheck verify  URL SCHEMA
//! postgres_crosscheck compare URL SCHEMA PYTHON_READS.json [--encrypted]
//! postgres_crosscheck append  URL SCHEMA [--encrypted] [--all-blobs]
//! ```
//!
//! `compare` reads every checkpoint Python listed (get_tuple, list, delta history) and
//! checks that each reads exactly as Python read it: both sides pack the same view with
//! the plain JsonPlusSerializer and the bytes must be equal. `append` writes the next
//! checkpoint of the thread (as `update_state` would: a HumanMessage "from rust" added
//! to `messages`) and prints its id, for Python to resume from.
//! With `--encrypted` the saver uses `EncryptedSerializer::from_env()` (LANGGRAPH_AES_KEY).

use std::process::ExitCode;
use std::sync::Arc;

use langgraph_codec::crypto::EncryptedSerializer;
use langgraph_codec::saver::postgres::PostgresSaver;
use langgraph_codec::saver::{
    now_isoformat, uuid6, CheckpointConfig, CheckpointMetadata, CheckpointSaver, ListOptions,
};
use langgraph_codec::Value;

mod pg_common;
use pg_common::{check, view, Res};

fn saver(url: &str, schema: &str, encrypted: bool, all_blobs: bool) -> Res<PostgresSaver> {
    let mut b = PostgresSaver::builder_from_url(url)?
        .schema(schema)
        .all_values_in_blobs(all_blobs);
    if encrypted {
        b = b.serializer(Arc::new(EncryptedSerializer::from_env()?));
    }
    Ok(b.build()?)
}

async fn compare(s: &PostgresSaver, file: &str) -> Res<()> {
    let doc: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(file)?)?;
    let reads = doc["reads"].as_array().ok_or("no reads")?;
    let listed = s.list(None, &ListOptions::new()).await?;
    let listed_ids: Vec<String> = listed
        .iter()
        .map(|t| t.config.checkpoint_id.clone().unwrap_or_default())
        .collect();
    let python_ids: Vec<String> = reads
        .iter()
        .map(|r| {
            r["config"]["checkpoint_id"]
                .as_str()
                .unwrap_or_default()
                .to_owned()
        })
        .collect();
    if listed_ids != python_ids {
        return Err(format!("list order differs: {listed_ids:?} vs {python_ids:?}").into());
    }
    let channels = ["log".to_owned(), "messages".to_owned()];
    let mut writes = 0;
    for (read, t) in reads.iter().zip(&listed) {
        let c = &read["config"];
        let cfg = CheckpointConfig::for_checkpoint(
            c["thread_id"].as_str().ok_or("thread_id")?,
            c["checkpoint_ns"].as_str().ok_or("checkpoint_ns")?,
            c["checkpoint_id"].as_str().ok_or("checkpoint_id")?,
        );
        let id = cfg.checkpoint_id.clone().unwrap_or_default();
        check(
            &format!("list entry {id}"),
            read["listed"].as_str().ok_or("listed")?,
            &view(t),
        )?;
        let got = s.get_tuple(&cfg).await?.ok_or("missing checkpoint")?;
        writes += got.pending_writes.len();
        check(
            &format!("get_tuple {id}"),
            read["tuple"].as_str().ok_or("tuple")?,
            &view(&got),
        )?;
        let history = s.get_delta_channel_history(&cfg, &channels).await?;
        let hv = Value::Map(
            history
                .iter()
                .map(|(k, v)| (Value::from(k.as_str()), v.to_value()))
                .collect(),
        );
        check(
            &format!("delta history {id}"),
            read["history"].as_str().ok_or("history")?,
            &hv,
        )?;
    }
    let thread = doc["thread_id"].as_str().ok_or("thread_id")?;
    let root: Vec<String> = s
        .list(
            Some(&CheckpointConfig::new(thread).with_ns("")),
            &ListOptions::new(),
        )
        .await?
        .iter()
        .map(|t| t.config.checkpoint_id.clone().unwrap_or_default())
        .collect();
    let history: Vec<String> = doc["state_history"]
        .as_array()
        .ok_or("state_history")?
        .iter()
        .filter_map(|v| v.as_str().map(str::to_owned))
        .collect();
    if root != history {
        return Err(format!("root history differs: {root:?} vs {history:?}").into());
    }
    println!(
        "rust: {} checkpoints, {writes} pending writes and their delta histories read exactly as Python read them",
        listed.len()
    );
    Ok(())
}

async fn append(s: &PostgresSaver) -> Res<()> {
    let thread = CheckpointConfig::new("cross-1");
    let latest = s
        .get_tuple(&thread)
        .await?
        .ok_or("no checkpoint to continue")?;
    let mut cp = latest.checkpoint.clone();
    let step = latest.metadata.step().unwrap_or(0) + 1;
    cp.id = uuid6(step);
    cp.ts = now_isoformat();
    let mut messages = cp
        .channel_values
        .get("messages")
        .and_then(Value::as_array)
        .ok_or("no messages")?
        .to_vec();
    // A HumanMessage like the ones Python wrote, with new content and id.
    let mut human = messages
        .iter()
        .find(|m| matches!(m, Value::Object(o) if o.name.as_str() == "HumanMessage"))
        .cloned()
        .ok_or("no HumanMessage to model on")?;
    if let Value::Object(o) = &mut human {
        if let Value::Map(fields) = &mut o.arg {
            for (k, v) in fields.iter_mut() {
                match k.as_str() {
                    Some("content") => *v = Value::from("from rust"),
                    Some("id") => *v = Value::from("rust-1"),
                    _ => {}
                }
            }
        }
    }
    messages.push(human);
    cp.channel_values
        .insert("messages".into(), Value::Array(messages));
    let version = s.get_next_version(cp.channel_versions.get("messages"))?;
    cp.channel_versions
        .insert("messages".into(), version.clone());
    cp.updated_channels = Some(vec!["messages".to_owned()]);
    let mut md = CheckpointMetadata::new("update", step);
    if let Some(c) = latest.metadata.get("counters_since_delta_snapshot") {
        md = md.with("counters_since_delta_snapshot", c.clone());
    }
    let stored = s
        .put(
            &latest.config,
            &cp,
            &md,
            &[("messages".to_owned(), version)].into_iter().collect(),
        )
        .await?;
    println!("{}", stored.checkpoint_id.unwrap_or_default());
    Ok(())
}

async fn run(args: &[String]) -> Res<()> {
    let flag = |f: &str| args.iter().any(|a| a == f);
    let pos: Vec<&String> = args.iter().filter(|a| !a.starts_with("--")).collect();
    let (encrypted, all_blobs) = (flag("--encrypted"), flag("--all-blobs"));
    match pos.as_slice() {
        [cmd, url, schema] if cmd.as_str() == "setup" => {
            saver(url, schema, false, false)?.setup().await?;
            Ok(())
        }
        [cmd, url, schema] if cmd.as_str() == "verify" => {
            saver(url, schema, false, false)?.verify().await?;
            Ok(())
        }
        [cmd, url, schema, file] if cmd.as_str() == "compare" => {
            compare(&saver(url, schema, encrypted, all_blobs)?, file).await
        }
        [cmd, url, schema] if cmd.as_str() == "append" => {
            append(&saver(url, schema, encrypted, all_blobs)?).await
        }
        _ => Err("usage: postgres_crosscheck setup|verify|compare|append URL SCHEMA [FILE] [--encrypted] [--all-blobs]".into()),
    }
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match run(&args).await {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("postgres_crosscheck: {e}");
            ExitCode::FAILURE
        }
    }
}
