//! `lgcodec store audit`: what is encrypted under which key, read-only.

use std::process::ExitCode;
use std::sync::{Arc, Mutex};

use langgraph_codec::store::{
    self, AuditOptions, AuditReport, ClassCounts, Store, StoreKeys, Verdict,
};

use super::batching::Pace;
use crate::cli::{fatal, FINDINGS};
use crate::human;
use crate::output::{finish, json_fields_but, lock, say, with_progress, Streamed};

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
    /// Count every thread's values too, every table together: listed by thread id
    /// after the scan (JSON `threads`). Each thread's counts wait in a scratch file
    /// (in SQLITE_TMPDIR or TMPDIR, else /var/tmp), not in memory.
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
        .max_rows_per_sec(args.pace.max_rows_per_sec);
    if !args.per_thread {
        let report = with_progress(|progress| async {
            store::audit(&store, keys, &options.on_progress(progress)).await
        })
        .await;
        return match report {
            Ok(report) => print_audit(&report, args.json),
            Err(e) => fatal(e),
        };
    }
    // Each thread written as the audit hands it over, held by neither: 200,000
    // threads of one checkpoint held in the report took 81–83 MiB, now 24–26 MiB
    // (2026-12-06, SQLite, release build, /usr/bin/time).
    let listing = Arc::new(Mutex::new(Threads {
        out: Streamed::new(),
        json: args.json,
        first: true,
    }));
    let sink = Arc::clone(&listing);
    let options = options.on_thread(move |thread, counts| lock(&sink).thread(thread, counts));
    let report = with_progress(|progress| async {
        store::audit(&store, keys, &options.on_progress(progress)).await
    })
    .await;
    let mut listing = lock(&listing);
    let report = match report {
        Ok(report) => report,
        Err(e) => {
            let begun = args.json && !listing.first;
            listing.out.cut(begun);
            return fatal(e);
        }
    };
    if !args.json {
        if let Err(e) = listing.out.end() {
            return fatal(e);
        }
        drop(listing);
        return print_audit(&report, false);
    }
    let first = listing.first;
    listing.out.write(|out| {
        if first {
            out.write_all(b"{\"threads\":{")?;
        }
        out.write_all(b"}")?;
        // The report's other fields, after the threads.
        json_fields_but(out, &report, &["threads"])?;
        out.write_all(b"}\n")
    });
    if let Err(e) = listing.out.end() {
        return fatal(e);
    }
    let (summary, status) = summary_and_status(&report);
    note!("{summary}");
    status
}

/// Where `--per-thread` writes each thread as the audit hands it over. JSON: the
/// report's object opened with its `threads`; text: a line each, before the report.
struct Threads {
    out: Streamed,
    json: bool,
    /// No thread written yet.
    first: bool,
}

impl Threads {
    fn thread(&mut self, thread: &str, counts: &ClassCounts) {
        let (json, first) = (self.json, std::mem::replace(&mut self.first, false));
        self.out.write(|out| {
            if json {
                out.write_all(if first { b"{\"threads\":{" } else { b"," })?;
                serde_json::to_writer(&mut *out, thread)?;
                out.write_all(b":")?;
                Ok(serde_json::to_writer(out, counts)?)
            } else {
                if first {
                    writeln!(out, "per thread (every table together, by id):")?;
                }
                writeln!(out, "  {thread}: {}", counts_line(counts))
            }
        });
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

/// The one-line summary and the exit status of `report`.
fn summary_and_status(report: &AuditReport) -> (String, ExitCode) {
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
    (summary, status)
}

fn print_audit(report: &AuditReport, json: bool) -> ExitCode {
    let (summary, status) = summary_and_status(report);
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
