//! `lgcodec store audit`: what is encrypted under which key, read-only.

use std::process::ExitCode;

use langgraph_codec::store::{
    self, AuditOptions, AuditReport, ClassCounts, Store, StoreKeys, Verdict,
};

use super::batching::Pace;
use crate::cli::{fatal, FINDINGS};
use crate::human;
use crate::output::{finish, say, with_progress};

#[derive(clap::Args)]
#[command(mut_arg("max_rows_per_sec", |a| a.help("At most this many values read per second, on average (spares a busy store)")))]
pub struct AuditArgs {
    /// sqlite:PATH, a file path, or a postgres:// URL.
    store: String,
    /// Print the report as one JSON object.
    #[arg(long)]
    pub json: bool,
    /// Values in clear are not findings.
    #[arg(long)]
    allow_clear: bool,
    /// Values under a previous (decrypt-only) key are not findings.
    #[arg(long)]
    allow_previous: bool,
    /// Postgres: the inline JSONB channel values Python keeps in clear are findings.
    #[arg(long)]
    deny_inline: bool,
    /// Free space that may hold old bytes (SQLite free pages, Postgres dead row
    /// versions) is not a finding.
    #[arg(long)]
    allow_free_space: bool,
    /// Read on even when the first encrypted values (up to 50) open under no key
    /// given (by default: exit 2, no_key_opens).
    #[arg(long)]
    no_key_probe: bool,
    /// Count every thread's values too (JSON `threads`; memory grows with the number
    /// of threads).
    #[arg(long)]
    per_thread: bool,
    #[command(flatten)]
    pace: Pace,
}

pub async fn run(args: AuditArgs, keys: &StoreKeys) -> ExitCode {
    let store = match Store::open(&args.store).await {
        Ok(s) => s,
        Err(e) => return fatal(e),
    };
    let options = AuditOptions::new()
        .allow_clear(args.allow_clear)
        .allow_previous(args.allow_previous)
        .deny_inline(args.deny_inline)
        .allow_free_space(args.allow_free_space)
        .key_probe(!args.no_key_probe)
        .per_thread(args.per_thread)
        .max_rows_per_sec(args.pace.max_rows_per_sec);
    let report = with_progress(|progress| async {
        store::audit(&store, keys, &options.on_progress(progress)).await
    })
    .await;
    match report {
        Ok(report) => print_audit(&report, args.json),
        Err(e) => fatal(e),
    }
}

/// One line of counts: the values of each class, with their bytes.
pub(super) fn counts_line(c: &ClassCounts) -> String {
    let previous = c.previous_total();
    format!(
        "{} value(s) ({}): {} under the primary key, {} in clear ({} legacy json), {} under previous keys, {} unreadable, {} empty markers",
        human::count(c.total.rows),
        human::bytes(c.total.bytes),
        human::count(c.primary.rows),
        human::count(c.clear_total().rows),
        human::count(c.legacy_json.rows),
        human::count(previous.rows),
        human::count(c.unreadable.rows),
        human::count(c.empty.rows)
    )
}

/// The verdict as the summary line says it: a clean verdict says, on the same line,
/// how many inline values are in clear beside the encrypted ones (Postgres).
fn verdict_text(report: &AuditReport) -> String {
    match report.verdict {
        Verdict::Clean if report.inline_values_in_clear > 0 => format!(
            "clean (encrypted values), {} inline value(s) in clear on Postgres: see --deny-inline",
            human::count(report.inline_values_in_clear)
        ),
        Verdict::Clean => "clean".to_owned(),
        Verdict::Findings => "FINDINGS".to_owned(),
    }
}

fn print_audit(report: &AuditReport, json: bool) -> ExitCode {
    let verdict = verdict_text(report);
    let summary = format!(
        "lgcodec store audit: {verdict}: {} in {:.1} s",
        counts_line(&report.totals),
        report.elapsed_s
    );
    let status = match report.verdict {
        Verdict::Clean => ExitCode::SUCCESS,
        Verdict::Findings => ExitCode::from(FINDINGS),
    };
    // The report is data (stdout); the one-line summary goes to stderr, as for every
    // store command.
    let text = |report: &AuditReport| {
        let mut out = String::new();
        out.push_str(&format!("store: {} ({})\n", report.store, report.backend));
        out.push_str(&format!(
            "keys: {}\n",
            if report.keys.is_empty() {
                "none (LANGGRAPH_AES_KEY not set)".to_owned()
            } else {
                report.keys.join(", ")
            }
        ));
        for t in &report.tables {
            out.push_str(&format!("{}: {}\n", t.column, counts_line(&t.counts)));
            for (label, tally) in &t.counts.previous {
                out.push_str(&format!(
                    "  under {label}: {} ({})\n",
                    human::count(tally.rows),
                    human::bytes(tally.bytes)
                ));
            }
        }
        if let Some(i) = &report.inline {
            out.push_str(&format!(
                "checkpoints.checkpoint inline JSONB values: {} in clear ({}), {} null, {} superseded by blobs, over {} checkpoints{}\n",
                i.values.rows,
                human::bytes(i.values.bytes),
                i.nulls,
                i.markers,
                i.checkpoints,
                if i.counted_as_findings { "" } else { " (Python's layout; not findings without --deny-inline)" }
            ));
        }
        for s in &report.unreadable_samples {
            out.push_str(&format!(
                "unreadable: {} {:?}: {}\n",
                s.column, s.key, s.reason
            ));
        }
        out.push_str(&format!(
            "never encrypted by Python (not findings): {}\n",
            report.never_encrypted.join("; ")
        ));
        let f = &report.free_space;
        let counted = match (f.free_pages, f.dead_rows) {
            (Some(p), _) => format!(
                "{p} free page(s), {}",
                human::bytes(f.free_bytes.unwrap_or(0))
            ),
            (_, Some(d)) => format!("{d} dead row version(s)"),
            _ => "not known".to_owned(),
        };
        out.push_str(&format!(
            "free space: {counted}{}: {}\n",
            if f.any() && !f.counted_as_findings {
                " (acknowledged: not a finding)"
            } else {
                ""
            },
            f.note
        ));
        for f in &report.findings {
            out.push_str(&format!("finding: {f}\n"));
        }
        // `say!`: a reader gone (`| head`) drops the rest (`print!` panicked).
        say!("{}", out.strip_suffix('\n').unwrap_or(&out));
    };
    finish(json, report, text, [summary], status)
}
