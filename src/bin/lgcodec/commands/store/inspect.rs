//! `lgcodec store inspect`: a store's threads, a thread's history as a tree, a
//! checkpoint's state, what changed between two checkpoints. Read-only.

use std::io::Write as _;
use std::process::ExitCode;

use clap::Args;
use langgraph_codec::store::{AnyStore, CheckpointDiff, StoreKeys, ThreadHistory, ThreadSummary};

use crate::cli::fatal;
use crate::output::{finish, say};

#[derive(Args)]
pub struct InspectArgs {
    /// sqlite:PATH, a file path, or a postgres:// URL (any layout a saver wrote).
    pub store: String,
    /// Show this thread's history as a tree (forks marked).
    #[arg(long)]
    pub thread: Option<String>,
    /// With --thread: print this checkpoint's state (JSON view, decrypted with the keys
    /// in LANGGRAPH_AES_KEY / _PREVIOUS / _FALLBACK_KEYS).
    #[arg(long, requires = "thread")]
    pub checkpoint: Option<String>,
    /// With --checkpoint: what changed from --checkpoint to this checkpoint.
    #[arg(long, requires = "checkpoint", value_name = "ID2")]
    pub diff: Option<String>,
    /// Print one JSON document.
    #[arg(long)]
    pub json: bool,
}

pub async fn run(args: InspectArgs, keys: &StoreKeys) -> ExitCode {
    let store = match AnyStore::open(&args.store).await {
        Ok(s) => s,
        Err(e) => return fatal(e),
    };
    let Some(thread) = args.thread else {
        let threads = match store.threads(keys).await {
            Ok(t) => t,
            Err(e) => return fatal(e),
        };
        let summary = format!(
            "lgcodec store inspect: {} thread(s) in {} ({})",
            threads.len(),
            args.store,
            store.layout()
        );
        let text = |threads: &Vec<ThreadSummary>| {
            say!(
                "{:<36} {:>11} {:>7} {:<36} {:>5} {:<32} {:>10}",
                "thread",
                "checkpoints",
                "writes",
                "latest checkpoint",
                "step",
                "time",
                "bytes"
            );
            for t in threads {
                say!(
                    "{:<36} {:>11} {:>7} {:<36} {:>5} {:<32} {:>10}",
                    t.thread_id,
                    t.checkpoints,
                    t.writes,
                    t.latest_checkpoint_id,
                    t.latest_step.map_or("?".to_owned(), |s| s.to_string()),
                    t.latest_ts.as_deref().unwrap_or("?"),
                    t.bytes
                );
            }
        };
        return finish(args.json, &threads, text, [summary], ExitCode::SUCCESS);
    };
    match (args.checkpoint, args.diff) {
        (None, _) => match store.history(&thread).await {
            Ok(h) if h.nodes.is_empty() => fatal(format!("no thread {thread:?} in the store")),
            Ok(h) => {
                let summary = format!(
                    "lgcodec store inspect: thread {thread:?}: {} checkpoint(s), {} fork(s)",
                    h.nodes.len(),
                    h.forks.len()
                );
                let text = |h: &ThreadHistory| say!("{}", h.render().trim_end());
                finish(args.json, &h, text, [summary], ExitCode::SUCCESS)
            }
            Err(e) => fatal(e),
        },
        (Some(id), None) => match store.state(keys, &thread, &id).await {
            Ok(Some(state)) => {
                let text = if args.json {
                    serde_json::to_string(&state)
                } else {
                    serde_json::to_string_pretty(&state)
                };
                match text {
                    Ok(t) => {
                        say!("{t}");
                        eprintln!("lgcodec store inspect: checkpoint {id:?} of thread {thread:?}");
                        ExitCode::SUCCESS
                    }
                    Err(e) => fatal(e),
                }
            }
            Ok(None) => fatal(format!("no checkpoint {id:?} in thread {thread:?}")),
            Err(e) => fatal(e),
        },
        (Some(from), Some(to)) => match store.diff(keys, &thread, &from, &to).await {
            Ok(d) => {
                let summary = format!(
                    "lgcodec store inspect: {} -> {}: {} channel(s) changed, {} added, {} removed",
                    d.from,
                    d.to,
                    d.changed.len(),
                    d.added.len(),
                    d.removed.len()
                );
                let text = |d: &CheckpointDiff| {
                    say!("{} -> {}", d.from, d.to);
                    say!("changed: {}", d.changed.join(", "));
                    say!("added:   {}", d.added.join(", "));
                    say!("removed: {}", d.removed.join(", "));
                    for (channel, items) in &d.appended {
                        say!("{channel}: {} item(s) appended", items.len());
                        for item in items {
                            say!("  + {item}");
                        }
                    }
                };
                finish(args.json, &d, text, [summary], ExitCode::SUCCESS)
            }
            Err(e) => fatal(e),
        },
    }
}
