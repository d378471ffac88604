//! `lgcodec store COMMAND`: a thin shell over [`langgraph_codec::store`]. The
//! commands: `audit`, `encrypt` and `rekey` here; `stats`, `inspect`, `export`,
//! `import`, `verify`, `copy`, `prune` and `upgrade` in `store_maint.rs`, `retain` in
//! `store_retain.rs` (built with both the
//! `sqlite` and `postgres` features). Exit status: 0 success (audit: clean), 1 findings
//! (or a sweep that left rows it could not do, import conflicts, copy mismatches, a
//! layout that cannot be upgraded in place), 2 usage or fatal errors.

use std::io::{IsTerminal, Write};
use std::process::ExitCode;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use clap::Subcommand;

#[path = "human.rs"]
mod human;
#[cfg(all(feature = "sqlite", feature = "postgres"))]
#[path = "store_maint.rs"]
mod maint;
#[cfg(all(feature = "sqlite", feature = "postgres"))]
#[path = "metrics.rs"]
mod metrics;
#[cfg(all(feature = "sqlite", feature = "postgres"))]
#[path = "store_retain.rs"]
mod retain;
use langgraph_codec::store::{
    self, AuditOptions, AuditReport, ClassCounts, Progress, Store, StoreKeys, SweepOptions,
    SweepReport, Verdict,
};

/// How the `lgcodec store --help` examples begin.
macro_rules! examples_intro {
    () => {
        "\
Examples (paste them, in this order, in a directory holding checkpoints.db, a store
Python's SqliteSaver wrote without encryption, e.g. a copy of the crate's
vectors/stores/sqlite-py-3.1.2/store.sqlite; a postgresql://user@host:5432/db URL works
wherever a store is named):
"
    };
}

/// The audit, encrypt and rekey examples, and the keys they read.
macro_rules! sweep_examples {
    () => {
        "  $ lgcodec store audit checkpoints.db --allow-clear
  $ LANGGRAPH_AES_KEY=0123456789abcdef lgcodec store encrypt checkpoints.db --dry-run
  $ LANGGRAPH_AES_KEY=0123456789abcdef lgcodec store encrypt sqlite:checkpoints.db
  $ LANGGRAPH_AES_KEY=0123456789abcdef lgcodec store audit checkpoints.db --json
  $ LANGGRAPH_AES_KEY=fedcba9876543210 LANGGRAPH_AES_FALLBACK_KEYS=0123456789abcdef lgcodec store rekey checkpoints.db --batch-size 200 --max-rows-per-sec 20000
  $ LANGGRAPH_AES_KEY=fedcba9876543210 lgcodec store audit checkpoints.db

Keys: LANGGRAPH_AES_KEY is the primary key (new rows are written under it, EAX mode, as
Python's EncryptedSerializer.from_pycryptodome_aes()); LANGGRAPH_AES_KEY_PREVIOUS and
LANGGRAPH_AES_FALLBACK_KEYS list decrypt-only keys, comma-separated (base64:<...> for a key
with a comma). Rows in EAX and GCM mode are read.
Postgres: a URL as psql takes it (sslmode=verify-full&sslrootcert=CA.pem for TLS); what it
leaves out comes from PGHOST, PGPORT, PGUSER, PGPASSWORD, PGDATABASE, PGSSLMODE,
PGSSLROOTCERT and ~/.pgpass (or PGPASSFILE).
"
    };
}

/// The `lgcodec store --help` examples and notes: every store command this build has,
/// in an order that works when the examples are pasted one after another
/// (`tests/store/sweep.rs` runs them).
#[cfg(all(feature = "sqlite", feature = "postgres"))]
pub const EXAMPLES: &str = concat!(
    examples_intro!(),
    "  $ lgcodec store stats checkpoints.db
  $ lgcodec store inspect checkpoints.db
  $ lgcodec store export checkpoints.db backup.jsonl
  $ lgcodec store import backup.jsonl restored.db
  $ lgcodec store copy checkpoints.db copy.db
  $ lgcodec store prune copy.db --keep-latest 2 --dry-run
  $ printf '[rules]\\nkeep_latest = 2\\n' > retention.toml
  $ lgcodec store retain copy.db --policy retention.toml --once --dry-run
  $ lgcodec store upgrade checkpoints.db --dry-run
",
    sweep_examples!(),
    "Exit status: 0 success (audit: clean); 1 something to look at: audit findings (values in
clear, under a previous key, unreadable), a sweep that left values it could not do,
import conflicts or a backup file cut short, copy mismatches, a layout upgrade cannot
bring up to date in place; 2 usage or fatal error.
Output: --json prints one JSON object (the report) on standard output. audit, encrypt and
rekey print their report on standard output, its last line a summary (with --json that
summary goes to standard error); stats prints everything on standard output; inspect
prints what it shows on standard output and, for a thread list or a history, a summary
line on standard error; export, import, copy, prune and upgrade print their summary on
standard error; retain prints one JSON line per sweep on standard output and its summary
on standard error.
Each command's --help has more examples (e.g. lgcodec store copy --help).",
);

/// The same, in a build without the maintenance commands (they need both the `sqlite`
/// and `postgres` features).
#[cfg(not(all(feature = "sqlite", feature = "postgres")))]
pub const EXAMPLES: &str = concat!(
    examples_intro!(),
    sweep_examples!(),
    "Exit status: 0 success (audit: clean); 1 audit findings (values in clear, under a previous
key, unreadable) or a sweep that left values it could not do; 2 usage or fatal error.
Output: the report on standard output, its last line a summary; --json prints one JSON
object (the report) on standard output and the summary on standard error.
Built with both the sqlite and postgres features, lgcodec store also has stats, inspect,
export, import, copy, prune, retain and upgrade.",
);

#[derive(Subcommand)]
pub enum StoreCommand {
    /// Classify every stored value: in clear, under the primary key, under a previous
    /// key, unreadable, legacy json; counts and bytes per table and thread. Read-only.
    Audit {
        /// sqlite:PATH, a file path, or a postgres:// URL.
        store: String,
        /// Print the report as one JSON object.
        #[arg(long)]
        json: bool,
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
    },
    /// Encrypt every value in clear under LANGGRAPH_AES_KEY (msgpack → msgpack+aes).
    Encrypt(SweepArgs),
    /// Re-encrypt every value under a previous key under LANGGRAPH_AES_KEY.
    Rekey(SweepArgs),
    /// Threads (latest checkpoint, step, time, size); with --thread its history as a
    /// tree; with --checkpoint the state (JSON view, decrypted); with --diff what
    /// changed. Any layout a saver wrote, read-only.
    #[cfg(all(feature = "sqlite", feature = "postgres"))]
    #[command(after_help = maint::MAINT_EXAMPLES)]
    Inspect(maint::InspectArgs),
    /// Rows and bytes per thread and per channel. Read-only.
    #[cfg(all(feature = "sqlite", feature = "postgres"))]
    #[command(after_help = maint::MAINT_EXAMPLES)]
    Stats(maint::StatsArgs),
    /// Write a store's rows, exactly as stored, to a backup file (JSON Lines,
    /// lgcodec-store-backup v1); encrypted rows stay encrypted.
    #[cfg(all(feature = "sqlite", feature = "postgres"))]
    #[command(after_help = maint::MAINT_EXAMPLES)]
    Export(maint::ExportArgs),
    /// Restore a backup file into a store of the same backend; existing rows are
    /// never overwritten (identical ones skipped, different ones reported: exit 1).
    #[cfg(all(feature = "sqlite", feature = "postgres"))]
    #[command(after_help = maint::MAINT_EXAMPLES)]
    Import(maint::ImportArgs),
    /// Check a backup file without a store: every line parses, every cell has its
    /// column's type, the threads are the header's, the end line's counts match
    /// (exit 0 whole, 1 cut short, 2 malformed).
    #[cfg(all(feature = "sqlite", feature = "postgres"))]
    #[command(after_help = maint::MAINT_EXAMPLES)]
    Verify(maint::VerifyArgs),
    /// Copy every thread (or --thread ones) to another store, SQLite or Postgres,
    /// written by the target saver as Python writes it; resumable, verified.
    #[cfg(all(feature = "sqlite", feature = "postgres"))]
    #[command(after_help = maint::MAINT_EXAMPLES)]
    Copy(maint::CopyArgs),
    /// Retention: keep the latest N per thread and namespace, drop checkpoints before a
    /// date, delete idle threads; DeltaChannel threads stay reconstructible.
    #[cfg(all(feature = "sqlite", feature = "postgres"))]
    #[command(after_help = maint::MAINT_EXAMPLES)]
    Prune(maint::PruneArgs),
    /// Retention as a service: sweep by a policy file (or langgraph.json's
    /// checkpointer.ttl) once or every DURATION; several sweepers take turns.
    #[cfg(all(feature = "sqlite", feature = "postgres"))]
    #[command(after_help = retain::RETAIN_EXAMPLES)]
    Retain(retain::RetainArgs),
    /// Bring a store of an older layout to today's in place, with the statements
    /// today's Python setup() runs (SQLite before writes.task_path; Python's Postgres
    /// before migration 9). Other old layouts: exit 1, use `store copy` into a fresh
    /// store.
    #[cfg(all(feature = "sqlite", feature = "postgres"))]
    #[command(after_help = maint::UPGRADE_EXAMPLES)]
    Upgrade(maint::UpgradeArgs),
}

impl StoreCommand {
    /// The command's name, as typed.
    fn name(&self) -> &'static str {
        match self {
            StoreCommand::Audit { .. } => "audit",
            StoreCommand::Encrypt(_) => "encrypt",
            StoreCommand::Rekey(_) => "rekey",
            #[cfg(all(feature = "sqlite", feature = "postgres"))]
            StoreCommand::Inspect(_) => "inspect",
            #[cfg(all(feature = "sqlite", feature = "postgres"))]
            StoreCommand::Stats(_) => "stats",
            #[cfg(all(feature = "sqlite", feature = "postgres"))]
            StoreCommand::Export(_) => "export",
            #[cfg(all(feature = "sqlite", feature = "postgres"))]
            StoreCommand::Import(_) => "import",
            #[cfg(all(feature = "sqlite", feature = "postgres"))]
            StoreCommand::Verify(_) => "verify",
            #[cfg(all(feature = "sqlite", feature = "postgres"))]
            StoreCommand::Copy(_) => "copy",
            #[cfg(all(feature = "sqlite", feature = "postgres"))]
            StoreCommand::Prune(_) => "prune",
            #[cfg(all(feature = "sqlite", feature = "postgres"))]
            StoreCommand::Retain(_) => "retain",
            #[cfg(all(feature = "sqlite", feature = "postgres"))]
            StoreCommand::Upgrade(_) => "upgrade",
        }
    }
}

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

const FATAL: u8 = 2;

pub(crate) fn fatal(message: impl std::fmt::Display) -> ExitCode {
    eprintln!("lgcodec: {message}");
    ExitCode::from(FATAL)
}

pub(crate) fn bar() -> Option<indicatif::ProgressBar> {
    if !std::io::stderr().is_terminal() {
        return None;
    }
    let bar = indicatif::ProgressBar::new(0);
    let style = indicatif::ProgressStyle::with_template(
        "{msg:>24} [{bar:30}] {human_pos}/{human_len} rows, {rate}, {eta} left",
    )
    .map(|s| {
        // Whole rows a second with commas (indicatif's `per_sec` prints three decimals).
        s.progress_chars("=> ").with_key(
            "rate",
            |state: &indicatif::ProgressState, w: &mut dyn std::fmt::Write| {
                let _ = write!(w, "{}", human::rate(state.per_sec(), "rows"));
            },
        )
    })
    .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar());
    bar.set_style(style);
    bar.enable_steady_tick(Duration::from_millis(200));
    Some(bar)
}

/// Rows done so far by the running operation, as its progress reports them: what an
/// interruption says.
static ROWS_DONE: AtomicU64 = AtomicU64::new(0);

/// The progress callback: moves the bar when there is one (a terminal), and always
/// keeps [`ROWS_DONE`].
pub(crate) fn on_progress(
    bar: Option<&indicatif::ProgressBar>,
) -> impl Fn(&Progress) + Send + Sync + 'static {
    let bar = bar.cloned();
    move |p: &Progress| {
        ROWS_DONE.store(p.rows_done, Ordering::Relaxed);
        if let Some(bar) = &bar {
            bar.set_length(p.total_estimate);
            bar.set_position(p.rows_done);
            bar.set_message(p.column);
        }
    }
}

/// The exit status of a command stopped by SIGINT (128 + 2, as shells report it); SIGTERM
/// exits 143.
const INTERRUPTED: u8 = 130;
const TERMINATED: u8 = 143;

/// Runs `command` until it ends or SIGINT/SIGTERM arrives. Interrupted, it says where it
/// stopped and how to finish: every batch an operation committed stays (each is one
/// transaction), the one in flight is rolled back by the database, and the same command
/// run again resumes.
async fn interruptible(
    name: &str,
    command: impl std::future::Future<Output = ExitCode>,
) -> ExitCode {
    let stop = async {
        #[cfg(unix)]
        {
            use tokio::signal::unix::{signal, SignalKind};
            let mut term = match signal(SignalKind::terminate()) {
                Ok(s) => s,
                Err(_) => {
                    return tokio::signal::ctrl_c()
                        .await
                        .map(|()| INTERRUPTED)
                        .unwrap_or(INTERRUPTED)
                }
            };
            tokio::select! {
                _ = tokio::signal::ctrl_c() => INTERRUPTED,
                _ = term.recv() => TERMINATED,
            }
        }
        #[cfg(not(unix))]
        {
            let _ = tokio::signal::ctrl_c().await;
            INTERRUPTED
        }
    };
    tokio::select! {
        code = command => code,
        code = stop => {
            eprintln!(
                "\nlgcodec store {name}: {} after {} row(s); every batch committed so far stays, the one in flight was rolled back: run the same command again to resume",
                if code == INTERRUPTED { "interrupted (SIGINT)" } else { "terminated (SIGTERM)" },
                ROWS_DONE.load(Ordering::Relaxed)
            );
            ExitCode::from(code)
        }
    }
}

pub fn run(command: StoreCommand) -> ExitCode {
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => return fatal(format!("cannot start the runtime: {e}")),
    };
    let keys = match StoreKeys::from_env() {
        Ok(keys) => keys,
        Err(e) => return fatal(e),
    };
    let name = command.name();
    // retain handles its own signals: the batch in flight finishes.
    #[cfg(all(feature = "sqlite", feature = "postgres"))]
    let command = match command {
        StoreCommand::Retain(args) => return runtime.block_on(retain::retain(args, &keys)),
        other => other,
    };
    runtime.block_on(interruptible(name, async move {
        match command {
            StoreCommand::Audit {
                store: location,
                json,
                allow_clear,
                allow_previous,
                deny_inline,
                allow_free_space,
                no_key_probe,
            } => {
                let store = match Store::open(&location).await {
                    Ok(s) => s,
                    Err(e) => return fatal(e),
                };
                let bar = bar();
                let mut options = AuditOptions::new()
                    .allow_clear(allow_clear)
                    .allow_previous(allow_previous)
                    .deny_inline(deny_inline)
                    .allow_free_space(allow_free_space)
                    .key_probe(!no_key_probe);
                options = options.on_progress(on_progress(bar.as_ref()));
                let report = store::audit(&store, &keys, &options).await;
                if let Some(b) = bar {
                    b.finish_and_clear();
                }
                match report {
                    Ok(report) => print_audit(&report, json),
                    Err(e) => fatal(e),
                }
            }
            StoreCommand::Encrypt(args) => sweep("encrypt", args, &keys).await,
            StoreCommand::Rekey(args) => sweep("rekey", args, &keys).await,
            #[cfg(all(feature = "sqlite", feature = "postgres"))]
            StoreCommand::Inspect(args) => maint::inspect(args, &keys).await,
            #[cfg(all(feature = "sqlite", feature = "postgres"))]
            StoreCommand::Stats(args) => maint::stats(args, &keys).await,
            #[cfg(all(feature = "sqlite", feature = "postgres"))]
            StoreCommand::Export(args) => maint::export(args).await,
            #[cfg(all(feature = "sqlite", feature = "postgres"))]
            StoreCommand::Import(args) => maint::import(args).await,
            #[cfg(all(feature = "sqlite", feature = "postgres"))]
            StoreCommand::Verify(args) => maint::verify(args).await,
            #[cfg(all(feature = "sqlite", feature = "postgres"))]
            StoreCommand::Copy(args) => maint::copy(args, &keys).await,
            #[cfg(all(feature = "sqlite", feature = "postgres"))]
            StoreCommand::Prune(args) => maint::prune(args, &keys).await,
            #[cfg(all(feature = "sqlite", feature = "postgres"))]
            StoreCommand::Retain(_) => fatal("retain runs outside the interruptible wrapper"),
            #[cfg(all(feature = "sqlite", feature = "postgres"))]
            StoreCommand::Upgrade(args) => maint::upgrade(args).await,
        }
    }))
}

async fn sweep(operation: &'static str, args: SweepArgs, keys: &StoreKeys) -> ExitCode {
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
    let bar = bar();
    let mut options = SweepOptions::new()
        .batch_size(usize::try_from(args.batch_size).unwrap_or(usize::MAX))
        .batch_bytes(usize::try_from(args.batch_bytes).unwrap_or(usize::MAX))
        .dry_run(args.dry_run)
        .vacuum(args.vacuum)
        .max_rows_per_sec(args.max_rows_per_sec)
        .key_probe(!args.no_key_probe);
    options = options.on_progress(on_progress(bar.as_ref()));
    let result: Result<SweepReport, langgraph_codec::Error> = match operation {
        "encrypt" => store::encrypt(&store, keys, &options).await,
        _ => store::rekey(&store, keys, &options).await,
    };
    if let Some(b) = bar {
        b.finish_and_clear();
    }
    match result {
        Ok(report) => print_sweep(&report, args.json),
        Err(e) => fatal(e),
    }
}

fn counts_line(c: &ClassCounts) -> String {
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

pub(crate) fn emit_json(value: &impl serde::Serialize) -> Result<(), String> {
    let text = serde_json::to_string(value).map_err(|e| e.to_string())?;
    let mut out = std::io::stdout().lock();
    writeln!(out, "{text}").map_err(|e| format!("cannot write: {e}"))
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
    if json {
        if let Err(e) = emit_json(report) {
            return fatal(e);
        }
        eprintln!("{summary}");
    } else {
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
        // The report is data (stdout); the one-line summary goes to stderr, as for
        // every store command.
        print!("{out}");
        eprintln!("{summary}");
    }
    match report.verdict {
        Verdict::Clean => ExitCode::SUCCESS,
        Verdict::Findings => ExitCode::FAILURE,
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
    if json {
        if let Err(e) = emit_json(report) {
            return fatal(e);
        }
        eprintln!("{summary}");
    } else {
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
        // The report is data (stdout); the one-line summary goes to stderr, as for
        // every store command.
        print!("{out}");
        eprintln!("{summary}");
    }
    if report.complete {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}
