//! `lgcodec store import`: a backup file restored into a store of the same backend,
//! never overwriting a row already there.

use std::process::ExitCode;

use clap::Args;
use langgraph_codec::store::{self, ImportOptions};

use super::batching::{Batching, Pace};
use super::verify::{backup_input, cut_note};
use crate::cli::{fatal, FINDINGS};
use crate::human;
use crate::output::{finish, with_progress};

#[derive(Args)]
#[command(mut_arg("max_rows_per_sec", |a| a.help("At most this many rows of the file put in per second, on average (spares a store that serves live writers)")))]
#[command(
    mut_arg("batch_size", |a| a.help("Rows per transaction (default 500; smaller batches hold the target's locks for less time beside live writers)")),
    mut_arg("batch_bytes", |a| a.help("Bytes of values per transaction at most (default 8 MiB): with the longest line, what bounds the import's memory")),
)]
pub struct ImportArgs {
    /// The backup file to read (- for standard input).
    #[arg(value_parser = super::a_path)]
    pub file: String,
    /// The target: an empty one gets Python's tables; rows already there are never
    /// overwritten.
    pub store: String,
    /// Only this thread's rows (repeat for more): to restore one thread from a backup
    /// of the whole store. The rest of the file is still read and checked.
    #[arg(long = "thread", value_name = "ID")]
    pub threads: Vec<String>,
    /// Leave this thread's rows out (repeat for more).
    #[arg(long = "exclude-thread", value_name = "ID")]
    pub exclude_threads: Vec<String>,
    /// Read the whole file and the target, count what would be inserted, identical or
    /// in conflict; write nothing (a missing target is not created; exit 1 if the role
    /// may not insert: a Postgres role without the privilege).
    #[arg(long)]
    pub dry_run: bool,
    #[command(flatten)]
    pub pace: Pace,
    #[command(flatten)]
    pub batching: Batching,
    /// Print the report as one JSON object.
    #[arg(long)]
    pub json: bool,
}

pub async fn run(args: ImportArgs) -> ExitCode {
    let mut input = match backup_input(&args.file) {
        Ok(i) => i,
        Err(code) => return code,
    };
    let options = ImportOptions::new()
        .threads(args.threads)
        .exclude_threads(args.exclude_threads)
        .dry_run(args.dry_run)
        .max_rows_per_sec(args.pace.max_rows_per_sec);
    let options = args.batching.apply(
        options,
        ImportOptions::batch_size,
        ImportOptions::batch_bytes,
    );
    let report = with_progress(|progress| async {
        let options = options
            .on_progress(progress)
            .stop_flag(crate::output::stop_flag());
        store::import(&mut input, &args.file, &args.store, &options).await
    })
    .await;
    match report {
        Ok(r) => {
            let summary = format!(
                "lgcodec store import{}: {} row(s) {}, {} already there, {} conflict(s) left as they were{}{}{} ({:.1} s)",
                if r.dry_run { " (dry run)" } else { "" },
                human::count(r.inserted),
                if r.dry_run { "would be inserted" } else { "inserted" },
                human::count(r.identical),
                human::count(r.conflicts),
                match r.skipped {
                    0 => String::new(),
                    n => format!("; {} row(s) of threads not selected skipped", human::count(n)),
                },
                if r.created_tables { "; Python's tables created" } else { "" },
                if r.stopped {
                    "; stopped before the end of the file".to_owned()
                } else {
                    cut_note(
                        r.cut_short.as_deref(),
                        r.complete,
                        if r.dry_run { "would be imported" } else { "were imported" },
                    )
                },
                r.elapsed_s
            );
            let conflicts = r
                .conflict_samples
                .iter()
                .map(|c| format!("conflict: {} {:?}", c.kind, c.key));
            let not_found = r.threads_not_found.iter().map(|t| {
                format!(
                    "lgcodec store import: no row of thread {t:?} in {}: check the id (lgcodec store inspect STORE lists the threads of the store it was exported from)",
                    args.file
                )
            });
            let refused = human::would_be_refused("import", r.would_be_refused.as_ref());
            let status = if r.conflicts > 0
                || !r.complete
                || !r.threads_not_found.is_empty()
                || refused.is_some()
            {
                ExitCode::from(FINDINGS)
            } else {
                ExitCode::SUCCESS
            };
            finish(
                args.json,
                &r,
                |_| {},
                std::iter::once(summary)
                    .chain(conflicts)
                    .chain(not_found)
                    .chain(refused),
                status,
            )
        }
        Err(e) => fatal(e),
    }
}
