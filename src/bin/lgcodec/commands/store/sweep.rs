//! `lgcodec store encrypt` and `lgcodec store rekey`: the two sweeps that rewrite
//! stored values under the primary key.

use std::process::ExitCode;

use langgraph_codec::store::{self, Store, StoreKeys, SweepOptions, SweepReport};

use super::audit::counts_line;
use crate::cli::{fatal, FINDINGS};
use crate::human;
use crate::output::{finish, with_progress};

#[derive(clap::Args)]
pub struct SweepArgs {
    /// sqlite:PATH, a file path, or a postgres:// URL.
    store: String,
    /// Count what would change; write nothing.
    #[arg(long)]
    dry_run: bool,
    /// Afterwards, compact the store so old bytes leave its files: SQLite VACUUM and a
    /// truncated WAL (the file is locked for writing meanwhile), Postgres VACUUM FULL of
    /// the rewritten tables (writers wait meanwhile).
    #[arg(long)]
    vacuum: bool,
    /// Rows per transaction.
    #[arg(long, default_value_t = 500, value_parser = clap::value_parser!(u64).range(1..))]
    batch_size: u64,
    /// Bytes of stored values per transaction at most (a larger value goes alone);
    /// memory stays within about twice this (SQLite) or six times (Postgres).
    #[arg(long, value_name = "BYTES", default_value_t = store::DEFAULT_PAGE_BYTES as u64, value_parser = clap::value_parser!(u64).range(1..))]
    batch_bytes: u64,
    /// At most this many rows read per second.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    max_rows_per_sec: Option<u64>,
    /// Print the report as one JSON object.
    #[arg(long)]
    json: bool,
    /// Go on even when the first encrypted values (up to 50) open under no key given
    /// (by default: stop before writing, exit 2, no_key_opens).
    #[arg(long)]
    no_key_probe: bool,
}

pub async fn run(operation: &'static str, args: SweepArgs, keys: &StoreKeys) -> ExitCode {
    if !keys.has_primary() {
        return fatal(format!(
            "store {operation} needs LANGGRAPH_AES_KEY (the key to write rows under)"
        ));
    }
    let opened = if args.dry_run {
        Store::open(&args.store).await
    } else {
        Store::open_for_writing(&args.store).await
    };
    let store = match opened {
        Ok(s) => s,
        Err(e) => return fatal(e),
    };
    let options = SweepOptions::new()
        .batch_size(usize::try_from(args.batch_size).unwrap_or(usize::MAX))
        .batch_bytes(usize::try_from(args.batch_bytes).unwrap_or(usize::MAX))
        .dry_run(args.dry_run)
        .vacuum(args.vacuum)
        .max_rows_per_sec(args.max_rows_per_sec)
        .key_probe(!args.no_key_probe);
    let result = with_progress(|progress| async {
        let options = options.on_progress(progress);
        match operation {
            "encrypt" => store::encrypt(&store, keys, &options).await,
            _ => store::rekey(&store, keys, &options).await,
        }
    })
    .await;
    match result {
        Ok(report) => print_sweep(&report, args.json),
        Err(e) => fatal(e),
    }
}

fn print_sweep(report: &SweepReport, json: bool) -> ExitCode {
    let verb = if report.dry_run {
        "would rewrite"
    } else {
        "rewrote"
    };
    let summary = format!(
        "lgcodec store {}: {} value(s) read ({} as stored), {verb} {} under the primary key ({} as written), {} failed, {} changed by live writers ({} still pending), {} batch(es), {:.1} s ({}, {}){}",
        report.operation,
        human::count(report.seen.total.rows),
        human::bytes(report.seen.total.bytes),
        human::count(report.rewritten.rows),
        human::bytes(report.rewritten.bytes),
        human::count(report.failed),
        human::count(report.changed_by_writer),
        human::count(report.changed_still_pending),
        human::count(report.batches),
        report.elapsed_s,
        human::rate(report.rows_per_s, "rows"),
        human::byte_rate(report.mb_per_s * 1e6),
        if report.complete { "" } else { "; run again after fixing what failed" },
    );
    let status = if report.complete {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(FINDINGS)
    };
    // The report is data (stdout); the one-line summary goes to stderr, as for every
    // store command.
    let text = |report: &SweepReport| {
        let mut out = String::new();
        out.push_str(&format!("store: {} ({})\n", report.store, report.backend));
        for t in &report.tables {
            out.push_str(&format!(
                "{}: {}; {verb} {}\n",
                t.column,
                counts_line(&t.seen),
                t.rewritten.rows
            ));
        }
        if let Some(n) = report.inline_values_left {
            out.push_str(&format!(
                "checkpoints.checkpoint inline JSONB values left in clear: {n} (Python's Postgres layout keeps them inline)\n"
            ));
        }
        for s in &report.failed_samples {
            out.push_str(&format!("failed: {} {:?}: {}\n", s.column, s.key, s.reason));
        }
        if report.vacuumed {
            out.push_str("vacuumed\n");
        }
        if let Some(left) = &report.left_behind {
            out.push_str(&format!("left behind: {left}\n"));
        }
        print!("{out}");
    };
    finish(json, report, text, [summary], status)
}
