//! `lgcodec store copy`: every thread (or some) to another store, SQLite or Postgres,
//! written by the target saver as Python writes it; resumable, verified.

use std::process::ExitCode;

use clap::Args;
use langgraph_codec::store::{self, CopyOptions, StoreKeys};

use super::batching::{Batching, Pace};
use crate::cli::{fatal, FINDINGS};
use crate::human;
use crate::output::{finish, with_progress};

#[derive(Args)]
#[command(mut_arg("max_rows_per_sec", |a| a.help("At most this many checkpoints read per second (spares a busy source)")))]
#[command(
    mut_arg("batch_size", |a| a.help("Checkpoints per target transaction (default 256; smaller batches hold the target's locks for less time beside live writers)")),
    mut_arg("batch_bytes", |a| a.help("Bytes a batch holds at most (default 16 MiB): what bounds the copy's memory")),
)]
pub struct CopyArgs {
    /// The source: sqlite:PATH, a file path, or a postgres:// URL.
    pub source: String,
    /// The target (an empty one gets Python's tables; a rerun skips what is there).
    pub target: String,
    /// Only this thread (repeat for more).
    #[arg(long = "thread", value_name = "ID")]
    pub threads: Vec<String>,
    /// Leave this thread out (repeat for more): to copy the rest past a thread with a
    /// row the copy cannot read.
    #[arg(long = "exclude-thread", value_name = "ID")]
    pub exclude_threads: Vec<String>,
    /// Count what would be copied; write nothing (exit 1 if the role may not insert
    /// into the target: a Postgres role without the privilege).
    #[arg(long)]
    pub dry_run: bool,
    /// Copy into threads the target already holds with checkpoints the source does not
    /// have, adding the source's checkpoints to them (refused without it: Python would
    /// read whichever checkpoint is newest).
    #[arg(long)]
    pub merge: bool,
    #[command(flatten)]
    pub pace: Pace,
    #[command(flatten)]
    pub batching: Batching,
    /// Print the report as one JSON object.
    #[arg(long)]
    pub json: bool,
}

pub async fn run(args: CopyArgs, keys: &StoreKeys) -> ExitCode {
    let options = CopyOptions::new()
        .threads(args.threads)
        .exclude_threads(args.exclude_threads)
        .dry_run(args.dry_run)
        .merge(args.merge)
        .max_rows_per_sec(args.pace.max_rows_per_sec);
    let options = args
        .batching
        .apply(options, CopyOptions::batch_size, CopyOptions::batch_bytes);
    let report = with_progress(|progress| async {
        let options = options
            .on_progress(progress)
            .stop_flag(crate::output::stop_flag());
        store::copy(&args.source, &args.target, keys, &options).await
    })
    .await;
    match report {
        Ok(r) => {
            let summary = format!(
                "lgcodec store copy: {} checkpoint(s) in {} ({}): {} {}, {} already in {}, {} write(s) inserted, {} verified, {} mismatch(es){}{} ({:.1} s)",
                human::count(r.checkpoints),
                r.source,
                r.source_layout,
                if r.dry_run { "would copy" } else { "copied" },
                human::count(r.copied),
                human::count(r.already_there),
                r.target,
                human::count(r.writes_inserted),
                human::count(r.verified),
                r.mismatches.len(),
                human::left_out(&r.excluded_threads),
                if r.created_tables { "; Python's tables created" } else { "" },
                r.elapsed_s
            );
            let mismatches = r.mismatches.iter().map(|m| format!("mismatch: {m}"));
            let partly = r
                .excluded_partly_copied
                .iter()
                .map(|p| format!("lgcodec store copy: {}", p.advice(&r.source, &r.target)));
            let refused = human::would_be_refused("copy", r.would_be_refused.as_ref());
            let status = if r.mismatches.is_empty()
                && r.excluded_partly_copied.is_empty()
                && refused.is_none()
            {
                ExitCode::SUCCESS
            } else {
                ExitCode::from(FINDINGS)
            };
            finish(
                args.json,
                &r,
                |_| {},
                mismatches
                    .chain(partly)
                    .chain(std::iter::once(summary))
                    .chain(refused),
                status,
            )
        }
        Err(e) => fatal(e),
    }
}
