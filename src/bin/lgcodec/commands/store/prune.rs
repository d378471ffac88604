//! `lgcodec store prune`: retention rules applied once; DeltaChannel threads stay
//! reconstructible.

use std::process::ExitCode;

use clap::Args;
use langgraph_codec::store::{self, PruneOptions, StoreKeys};

use super::batching::{BatchSize, Pace};
use crate::cli::{fatal, FINDINGS};
use crate::human;
use crate::output::{finish, with_progress};

#[derive(Args)]
#[command(mut_arg("max_rows_per_sec", |a| a.help("At most this many checkpoints read per second (spares a busy database)")))]
#[command(
    group(clap::ArgGroup::new("rule").required(true).multiple(true).args(["keep_latest", "before", "idle_since"])),
    mut_arg("batch_size", |a| a.help("Threads per transaction at most (default 200; a page also ends at about 1,000 checkpoints): smaller batches hold the store's locks for less time beside live writers")),
)]
pub struct PruneArgs {
    /// sqlite:PATH, a file path, or a postgres:// URL (today's Python layout).
    pub store: String,
    /// Keep the latest N checkpoints per thread and namespace (and the ancestors their
    /// DeltaChannels need; a checkpoint that cannot be read, e.g. without the key,
    /// keeps its whole chain).
    #[arg(long, value_name = "N", value_parser = keep_latest)]
    pub keep_latest: Option<u64>,
    /// Drop checkpoints older than DATE (UTC: 2024-01-31 or 2024-01-31T12:00:00Z); the
    /// latest of each namespace stays.
    #[arg(long, value_name = "DATE")]
    pub before: Option<String>,
    /// Delete threads whose latest checkpoint is older than DATE.
    #[arg(long, value_name = "DATE")]
    pub idle_since: Option<String>,
    /// Only this thread (repeat for more).
    #[arg(long = "thread", value_name = "ID")]
    pub threads: Vec<String>,
    /// Leave this thread as it is, whatever the rules say (repeat for more).
    #[arg(long = "exclude-thread", value_name = "ID")]
    pub exclude_threads: Vec<String>,
    /// Only threads whose latest metadata has KEY equal to the JSON VALUE (repeat).
    #[arg(long = "metadata", value_name = "KEY=JSON")]
    pub metadata: Vec<String>,
    /// Report what would go and how many bytes; delete nothing (exit 1 if the role may
    /// not delete: a Postgres role without the privilege).
    #[arg(long)]
    pub dry_run: bool,
    /// Let the rules delete every thread of the store (refused without it, exit 2,
    /// nothing deleted: a --idle-since date in the future would).
    #[arg(long)]
    pub allow_all: bool,
    /// SQLite: VACUUM afterwards so the file shrinks.
    #[arg(long)]
    pub vacuum: bool,
    #[command(flatten)]
    pub pace: Pace,
    #[command(flatten)]
    pub batch: BatchSize,
    /// Print the report as one JSON object.
    #[arg(long)]
    pub json: bool,
}

pub async fn run(args: PruneArgs, keys: &StoreKeys) -> ExitCode {
    let mut options = PruneOptions::new()
        .threads(args.threads)
        .exclude_threads(args.exclude_threads)
        .dry_run(args.dry_run)
        .allow_all(args.allow_all)
        .vacuum(args.vacuum)
        .max_rows_per_sec(args.pace.max_rows_per_sec);
    options = args.batch.apply(options, PruneOptions::batch_size);
    if let Some(n) = args.keep_latest {
        options = options.keep_latest(usize::try_from(n).unwrap_or(usize::MAX));
    }
    for (date, before) in [(args.before, true), (args.idle_since, false)] {
        let Some(date) = date else { continue };
        match store::parse_date(&date) {
            Ok(t) if before => options = options.before(t),
            Ok(t) => options = options.idle_since(t),
            Err(e) => return fatal(e),
        }
    }
    for m in &args.metadata {
        let Some((k, v)) = m
            .split_once('=')
            .filter(|(k, v)| !k.is_empty() && !v.is_empty())
        else {
            return fatal(format!(
                "--metadata {m:?}: expected KEY=VALUE with both parts, the value as JSON or \
                 plain text (e.g. source=loop, step=3, user=\"ada\")"
            ));
        };
        let value = serde_json::from_str(v).unwrap_or_else(|_| serde_json::Value::from(v));
        options = options.metadata(k, value);
    }
    let report = with_progress(|progress| async {
        let options = options
            .on_progress(progress)
            .stop_flag(crate::output::stop_flag());
        store::prune(&args.store, keys, &options).await
    })
    .await;
    match report {
        Ok(r) => {
            let summary = format!(
                "lgcodec store prune: {}; kept {} ({} of them ancestors kept for DeltaChannels or for checkpoints that could not be read, e.g. without the key){}{}{} ({:.1} s)",
                human::deleted_of!(r),
                human::count(r.checkpoints_kept),
                human::count(r.kept_for_delta),
                human::left_out(&r.excluded_threads),
                human::fewer_connections(r.connections_refused),
                r.file_bytes
                    .map(|(a, b)| format!(
                        "; file {} -> {} after VACUUM",
                        human::bytes(a),
                        human::bytes(b)
                    ))
                    .unwrap_or_default(),
                r.elapsed_s
            );
            let mut notes = vec![summary];
            notes.extend(r.threads_not_found.iter().map(|t| {
                format!(
                    "lgcodec store prune: no thread {t:?} in {}: nothing to prune there (deleted before, or a mistyped id: lgcodec store inspect lists the threads)",
                    r.store
                )
            }));
            let mut status = ExitCode::SUCCESS;
            if let Some(note) = human::would_be_refused("prune", r.would_be_refused.as_ref()) {
                notes.push(note);
                status = ExitCode::from(FINDINGS);
            }
            if r.unreadable > 0 {
                notes.push(format!(
                    "lgcodec store prune: {} checkpoint(s) could not be read (encrypted without \
                     their key, or not decodable): their chains were kept, not pruned. Give the \
                     key (LANGGRAPH_AES_KEY, LANGGRAPH_AES_FALLBACK_KEYS) and run it again; \
                     `lgcodec store audit` names the rows.",
                    r.unreadable
                ));
                status = ExitCode::from(FINDINGS);
            }
            finish(args.json, &r, |_| {}, notes, status)
        }
        Err(e) => fatal(e),
    }
}

/// `--keep-latest N`: 1 or more; 0 would keep no checkpoint of a thread, which is
/// `--idle-since`'s to do (whole threads, by date).
fn keep_latest(given: &str) -> Result<u64, String> {
    match super::batching::one_or_more(given) {
        Ok(n) => Ok(n),
        Err(_) if given == "0" => Err(
            "0 would keep no checkpoint: give 1 or more (whole threads are deleted by --idle-since DATE)"
                .to_owned(),
        ),
        Err(e) => Err(e),
    }
}
