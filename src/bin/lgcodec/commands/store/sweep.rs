//! `lgcodec store encrypt` and `lgcodec store rekey`: the two sweeps that rewrite
//! stored values under the primary key.

use std::process::ExitCode;

use langgraph_codec::store::{self, Store, StoreKeys, SweepOptions, SweepReport};

use super::audit::counts_line;
use super::batching::{Batching, Pace};
use crate::cli::{fatal, FINDINGS};
use crate::human;
use crate::output::{finish, say, with_progress};

#[derive(clap::Args)]
#[command(mut_arg("max_rows_per_sec", |a| a.help("At most this many rows read per second")))]
#[command(
    mut_arg("batch_size", |a| a.help("Rows per transaction (default 500)")),
    mut_arg("batch_bytes", |a| a.help("Bytes of stored values per transaction at most (default 16 MiB; a larger value goes alone); memory stays within about twice this (SQLite) or six times (Postgres)")),
)]
pub struct SweepArgs {
    /// sqlite:PATH, a file path, or a postgres:// URL.
    store: String,
    /// Count what would change; write nothing (exit 1 if the role may not update: a
    /// Postgres role without the privilege).
    #[arg(long)]
    dry_run: bool,
    /// Afterwards, compact the store so old bytes leave its files: SQLite VACUUM and a
    /// truncated WAL (the file is locked for writing meanwhile), Postgres VACUUM FULL of
    /// the rewritten tables (writers wait meanwhile; only their owner may: exit 1 when
    /// the server skipped it).
    #[arg(long)]
    vacuum: bool,
    #[command(flatten)]
    batching: Batching,
    #[command(flatten)]
    pace: Pace,
    /// Print the report as one JSON object.
    #[arg(long)]
    pub json: bool,
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
        .dry_run(args.dry_run)
        .vacuum(args.vacuum)
        .max_rows_per_sec(args.pace.max_rows_per_sec)
        .key_probe(!args.no_key_probe);
    let options = args
        .batching
        .apply(options, SweepOptions::batch_size, SweepOptions::batch_bytes);
    let result = with_progress(|progress| async {
        let options = options
            .on_progress(progress)
            .stop_flag(crate::output::stop_flag());
        match operation {
            "encrypt" => store::encrypt(&store, keys, &options).await,
            _ => store::rekey(&store, keys, &options).await,
        }
    })
    .await;
    match result {
        Ok(report) => print_sweep(&report, args.json, args.vacuum),
        Err(e) => fatal(e),
    }
}

fn print_sweep(report: &SweepReport, json: bool, vacuum: bool) -> ExitCode {
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
    let refused = human::would_be_refused(report.operation, report.would_be_refused.as_ref());
    // Asked for and not done (not after a stop, which skips it and says so).
    let unvacuumed =
        (vacuum && !report.dry_run && !report.stopped && !report.vacuumed).then(|| {
            format!(
                "lgcodec store {}: --vacuum was not done: {}",
                report.operation,
                report
                    .left_behind
                    .as_deref()
                    .unwrap_or("the server did not")
            )
        });
    let status = if report.complete && refused.is_none() && unvacuumed.is_none() {
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
        // `say!`: a reader gone (`| head`) drops the rest (`print!` panicked).
        say!("{}", out.strip_suffix('\n').unwrap_or(&out));
    };
    finish(
        json,
        report,
        text,
        std::iter::once(summary).chain(refused).chain(unvacuumed),
        status,
    )
}
