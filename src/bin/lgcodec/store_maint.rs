//! `lgcodec store inspect|stats|export|import|copy|prune|upgrade`: store maintenance
//! over [`langgraph_codec::store`] (needs the `sqlite` and `postgres` features).

use std::io::Write as _;
use std::process::ExitCode;

/// `println!` that ignores a closed pipe (`| head`) instead of panicking.
macro_rules! say {
    ($($t:tt)*) => {{
        let _ = writeln!(std::io::stdout().lock(), $($t)*);
    }};
}

use clap::Args;
use langgraph_codec::store::{
    self, AnyStore, CopyOptions, ExportOptions, ImportOptions, PruneOptions, StoreKeys, ThreadOrder,
};
use langgraph_codec::ErrorKind;

use super::{bar, emit_json, fatal, human, on_progress};

pub const MAINT_EXAMPLES: &str = "\
Maintenance examples (paste them in a directory holding checkpoints.db, a store Python's
SqliteSaver wrote with a thread t-main, e.g. a copy of the crate's
vectors/stores/sqlite-py-3.1.2/store.sqlite; a postgresql://user@host:5432/db URL works
wherever a store is named):
  $ lgcodec store stats checkpoints.db
  $ lgcodec store stats checkpoints.db --top 10 --sort size
  $ lgcodec store inspect checkpoints.db
  $ lgcodec store inspect checkpoints.db --thread t-main --json
  $ lgcodec store export checkpoints.db backup.jsonl
  $ lgcodec store export checkpoints.db thread-1.jsonl --thread t-main
  $ lgcodec store verify backup.jsonl
  $ lgcodec store import backup.jsonl restored.db --dry-run
  $ lgcodec store import backup.jsonl restored.db
  $ lgcodec store import backup.jsonl restored.db --json
  $ lgcodec store copy checkpoints.db copy.db --dry-run
  $ lgcodec store copy checkpoints.db copy.db
  $ lgcodec store copy checkpoints.db sqlite:thread-1.db --thread t-main --json
  $ lgcodec store prune copy.db --keep-latest 2 --dry-run
  $ lgcodec store prune copy.db --keep-latest 2 --vacuum
  $ lgcodec store prune copy.db --before 2024-01-01 --json
  $ lgcodec store prune copy.db --idle-since 2024-01-01T00:00:00Z --dry-run
Copy to Postgres: lgcodec store copy checkpoints.db postgresql://user@host:5432/db (an
empty database gets Python's tables). Keys as for audit: LANGGRAPH_AES_KEY (and
_PREVIOUS / _FALLBACK_KEYS) decrypt; values are written under LANGGRAPH_AES_KEY, so a new
primary key re-encrypts on the way.";

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

#[derive(Args)]
pub struct StatsArgs {
    /// sqlite:PATH, a file path, or a postgres:// URL (any layout a saver wrote).
    /// SQLite checkpoints are decoded (with the keys in LANGGRAPH_AES_KEY / _PREVIOUS /
    /// _FALLBACK_KEYS) to size each channel's value.
    pub store: String,
    /// Only the first N threads (in --sort order; 0: all).
    #[arg(long, value_name = "N", default_value_t = 0)]
    pub top: usize,
    /// The order of the threads: id, size (largest first), checkpoints or writes
    /// (most first).
    #[arg(long, value_enum, default_value_t = SortBy::Id)]
    pub sort: SortBy,
    /// Print one JSON document.
    #[arg(long)]
    pub json: bool,
}

/// `stats --sort`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum SortBy {
    Id,
    Size,
    Checkpoints,
    Writes,
}

impl SortBy {
    fn order(self) -> ThreadOrder {
        match self {
            SortBy::Id => ThreadOrder::Id,
            SortBy::Size => ThreadOrder::Size,
            SortBy::Checkpoints => ThreadOrder::Checkpoints,
            SortBy::Writes => ThreadOrder::Writes,
        }
    }
}

pub async fn inspect(args: InspectArgs, keys: &StoreKeys) -> ExitCode {
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
        if args.json {
            let code = done(emit_json(&threads));
            eprintln!("{summary}");
            return code;
        }
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
        for t in &threads {
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
        eprintln!("{summary}");
        return ExitCode::SUCCESS;
    };
    match (args.checkpoint, args.diff) {
        (None, _) => match store.history(&thread).await {
            Ok(h) if h.nodes.is_empty() => fatal(format!("no thread {thread:?} in the store")),
            Ok(h) => {
                let code = if args.json {
                    done(emit_json(&h))
                } else {
                    say!("{}", h.render().trim_end());
                    ExitCode::SUCCESS
                };
                eprintln!(
                    "lgcodec store inspect: thread {thread:?}: {} checkpoint(s), {} fork(s)",
                    h.nodes.len(),
                    h.forks.len()
                );
                code
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
                if args.json {
                    let code = done(emit_json(&d));
                    eprintln!("{summary}");
                    return code;
                }
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
                eprintln!("{summary}");
                ExitCode::SUCCESS
            }
            Err(e) => fatal(e),
        },
    }
}

pub async fn stats(args: StatsArgs, keys: &StoreKeys) -> ExitCode {
    let store = match AnyStore::open(&args.store).await {
        Ok(s) => s,
        Err(e) => return fatal(e),
    };
    let stats = match store.stats(keys).await {
        Ok(s) => s,
        Err(e) => return fatal(e),
    };
    let top = stats.top_threads(args.top, args.sort.order());
    let f = &stats.files;
    let summary = format!(
        "lgcodec store stats: {} thread(s), {} checkpoint(s), {} in rows; {} on disk{}",
        human::count(stats.threads),
        human::count(stats.total.checkpoints.rows),
        human::bytes(stats.total.total_bytes),
        human::bytes(f.database_bytes),
        match (f.wal_bytes, f.free_bytes, f.tables_bytes) {
            (Some(w), Some(free), _) => format!(
                " (+ {} WAL, {} free pages)",
                human::bytes(w),
                human::bytes(free)
            ),
            (_, _, Some(t)) => format!(" (the database; the saver's tables {})", human::bytes(t)),
            _ => String::new(),
        }
    );
    if args.json {
        // With --top or --sort: the threads chosen, in order, as `top_threads`.
        let mut value = match serde_json::to_value(&stats) {
            Ok(v) => v,
            Err(e) => return fatal(e),
        };
        if args.top > 0 || args.sort != SortBy::Id {
            let list: Vec<serde_json::Value> = top
                .iter()
                .map(|(t, s)| serde_json::json!({"thread": t, "size": s}))
                .collect();
            if let Some(map) = value.as_object_mut() {
                map.insert("top_threads".to_owned(), serde_json::Value::Array(list));
            }
        }
        let code = done(emit_json(&value));
        eprintln!("{summary}");
        return code;
    }
    say!(
        "store: {} ({}; {})",
        stats.store,
        stats.backend,
        stats.layout
    );
    say!(
        "{} thread(s), {}: checkpoints {} rows / {}, blobs {} / {}, writes {} / {}",
        human::count(stats.threads),
        human::bytes(stats.total.total_bytes),
        human::count(stats.total.checkpoints.rows),
        human::bytes(stats.total.checkpoints.bytes),
        human::count(stats.total.blobs.rows),
        human::bytes(stats.total.blobs.bytes),
        human::count(stats.total.writes.rows),
        human::bytes(stats.total.writes.bytes)
    );
    say!(
        "per thread (bytes: checkpoints + blobs + writes){}:",
        match (args.top, args.sort) {
            (0, SortBy::Id) => String::new(),
            (0, by) => format!(", by {by:?}").to_lowercase(),
            (n, by) => format!(", the first {n} by {by:?}").to_lowercase(),
        }
    );
    for (thread, s) in top {
        say!(
            "  {thread:<36} {:>10} = {} + {} + {} ({} checkpoint(s))",
            s.total_bytes,
            s.checkpoints.bytes,
            s.blobs.bytes,
            s.writes.bytes,
            s.checkpoints.rows
        );
    }
    say!("per channel (writes and values):");
    for (channel, s) in &stats.per_channel {
        say!("  {channel:<36} {:>10} bytes in {} row(s)", s.bytes, s.rows);
    }
    say!(
        "per channel, values only ({}):",
        if stats.backend == "sqlite" {
            "encoded size of each value in the checkpoint rows"
        } else {
            "blob rows"
        }
    );
    for (channel, s) in &stats.per_channel_values {
        say!("  {channel:<36} {:>10} bytes in {} row(s)", s.bytes, s.rows);
    }
    if stats.unreadable_checkpoints > 0 {
        say!(
            "{} checkpoint row(s) could not be decoded (no key for them?): their channels are not counted",
            stats.unreadable_checkpoints
        );
    }
    eprintln!("{summary}");
    ExitCode::SUCCESS
}

fn done(result: Result<(), String>) -> ExitCode {
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => fatal(e),
    }
}

#[derive(Args)]
pub struct ExportArgs {
    /// sqlite:PATH, a file path, or a postgres:// URL (any layout a saver wrote).
    pub store: String,
    /// The backup file to write (- for standard output).
    pub file: String,
    /// Only this thread (repeat for more).
    #[arg(long = "thread", value_name = "ID")]
    pub threads: Vec<String>,
    /// Print the report as one JSON object.
    #[arg(long)]
    pub json: bool,
}

#[derive(Args)]
pub struct ImportArgs {
    /// The backup file to read (- for standard input).
    pub file: String,
    /// The target: an empty one gets Python's tables; rows already there are never
    /// overwritten.
    pub store: String,
    /// Read the whole file and the target, count what would be inserted, identical or
    /// in conflict; write nothing (a missing target is not created).
    #[arg(long)]
    pub dry_run: bool,
    /// Print the report as one JSON object.
    #[arg(long)]
    pub json: bool,
}

#[derive(Args)]
pub struct VerifyArgs {
    /// The backup file to check (- for standard input).
    pub file: String,
    /// Print the report as one JSON object.
    #[arg(long)]
    pub json: bool,
}

/// The backup file `name` (or standard input for `-`), buffered.
fn backup_input(name: &str) -> Result<Box<dyn std::io::BufRead>, ExitCode> {
    if name == "-" {
        return Ok(Box::new(std::io::BufReader::new(std::io::stdin().lock())));
    }
    match std::fs::File::open(name) {
        Ok(f) => Ok(Box::new(std::io::BufReader::new(f))),
        Err(e) => Err(fatal(format!("cannot open {name}: {e}"))),
    }
}

/// How a backup file ended, for a summary line: nothing when whole.
fn cut_note(cut_short: Option<&str>, complete: bool, before: &str) -> String {
    match (cut_short, complete) {
        (_, true) => String::new(),
        (Some(at), false) => {
            format!("; THE FILE WAS CUT SHORT at {at}: the rows before it {before}")
        }
        (None, false) => "; THE FILE WAS CUT SHORT (no end line)".to_owned(),
    }
}

pub async fn verify(args: VerifyArgs) -> ExitCode {
    let mut input = match backup_input(&args.file) {
        Ok(i) => i,
        Err(code) => return code,
    };
    match store::verify_backup(&mut input, &args.file, None) {
        Ok(r) => {
            if let Err(code) = json_line(args.json, &r) {
                return code;
            }
            eprintln!(
                "lgcodec store verify: {}: a {} backup ({}), {} checkpoint(s), {} blob(s), {} write(s){}{} ({:.1} s)",
                r.file,
                r.backend,
                r.layout,
                human::count(r.checkpoints),
                human::count(r.blobs),
                human::count(r.writes),
                match &r.threads {
                    Some(t) => format!(", threads {}", t.join(", ")),
                    None => String::new(),
                },
                match cut_note(r.cut_short.as_deref(), r.complete, "are whole") {
                    n if n.is_empty() => "; whole: every line parses, the end line's counts match".to_owned(),
                    n => n,
                },
                r.elapsed_s
            );
            if r.complete {
                ExitCode::SUCCESS
            } else {
                ExitCode::FAILURE
            }
        }
        Err(e) => fatal(e),
    }
}

pub async fn export(args: ExportArgs) -> ExitCode {
    let store = match AnyStore::open(&args.store).await {
        Ok(s) => s,
        Err(e) => return fatal(e),
    };
    // A file is written as a temporary file in its directory and renamed over FILE
    // only once complete and on disk: a killed or failed export leaves the previous
    // FILE as it was (and at most a `.FILE.*.partial` beside it, never a torn FILE).
    let mut partial = None;
    let mut out: Box<dyn std::io::Write> = if args.file == "-" {
        Box::new(std::io::BufWriter::new(std::io::stdout().lock()))
    } else {
        match partial_file(&args.file) {
            Ok(f) => {
                let w = f.reopen();
                partial = Some(f);
                match w {
                    Ok(w) => Box::new(std::io::BufWriter::new(w)),
                    Err(e) => return fatal(format!("cannot create {}: {e}", args.file)),
                }
            }
            Err(e) => return fatal(format!("cannot create {}: {e}", args.file)),
        }
    };
    let bar = bar();
    let mut options = ExportOptions::new().threads(args.threads);
    options = options.on_progress(on_progress(bar.as_ref()));
    let report = store::export(&store, &mut out, &options).await;
    // A write error the buffer still holds (a full disk) fails the export.
    let flushed = out.flush();
    drop(out);
    if let Some(b) = bar {
        b.finish_and_clear();
    }
    let report = match (report, flushed) {
        (Ok(r), Ok(())) => match partial.map(|f| finish_partial(f, &args.file)) {
            Some(Err(e)) => return fatal(format!("cannot write {}: {e}", args.file)),
            _ => Ok(r),
        },
        (Ok(_), Err(e)) => return fatal(format!("cannot write {}: {e}", args.file)),
        (Err(e), _) => Err(e),
    };
    match report {
        Ok(r) => {
            let summary = format!(
                "lgcodec store export: {} checkpoint(s), {} blob(s), {} write(s) from {} ({}) to {} ({}, {:.1} s)",
                human::count(r.checkpoints),
                human::count(r.blobs),
                human::count(r.writes),
                r.store,
                r.layout,
                args.file,
                human::bytes(r.bytes),
                r.elapsed_s
            );
            if let Err(code) = json_line(args.json && args.file != "-", &r) {
                return code;
            }
            eprintln!("{summary}");
            ExitCode::SUCCESS
        }
        Err(e) => fatal(e),
    }
}

/// A temporary file beside `file` (same directory, so the rename is atomic), named
/// after it: `.NAME.XXXXXX.partial`.
fn partial_file(file: &str) -> std::io::Result<tempfile::NamedTempFile> {
    let path = std::path::Path::new(file);
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => std::path::Path::new("."),
    };
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    tempfile::Builder::new()
        .prefix(&format!(".{name}."))
        .suffix(".partial")
        .tempfile_in(dir)
}

/// Puts a complete temporary file in place of `file`: its bytes on disk first, then the
/// rename, then the directory entry on disk.
fn finish_partial(partial: tempfile::NamedTempFile, file: &str) -> std::io::Result<()> {
    partial.as_file().sync_all()?;
    partial.persist(file).map_err(|e| e.error)?;
    if let Some(dir) = std::path::Path::new(file).parent() {
        let dir = if dir.as_os_str().is_empty() {
            std::path::Path::new(".")
        } else {
            dir
        };
        if let Ok(d) = std::fs::File::open(dir) {
            let _ = d.sync_all();
        }
    }
    Ok(())
}

pub async fn import(args: ImportArgs) -> ExitCode {
    let mut input = match backup_input(&args.file) {
        Ok(i) => i,
        Err(code) => return code,
    };
    let bar = bar();
    let mut options = ImportOptions::new().dry_run(args.dry_run);
    options = options.on_progress(on_progress(bar.as_ref()));
    let report = store::import(&mut input, &args.file, &args.store, &options).await;
    if let Some(b) = bar {
        b.finish_and_clear();
    }
    match report {
        Ok(r) => {
            if let Err(code) = json_line(args.json, &r) {
                return code;
            }
            eprintln!(
                "lgcodec store import{}: {} row(s) {}, {} already there, {} conflict(s) left as they were{}{} ({:.1} s)",
                if r.dry_run { " (dry run)" } else { "" },
                human::count(r.inserted),
                if r.dry_run { "would be inserted" } else { "inserted" },
                human::count(r.identical),
                human::count(r.conflicts),
                if r.created_tables { "; Python's tables created" } else { "" },
                cut_note(
                    r.cut_short.as_deref(),
                    r.complete,
                    if r.dry_run { "would be imported" } else { "were imported" }
                ),
                r.elapsed_s
            );
            for c in &r.conflict_samples {
                eprintln!("conflict: {} {:?}", c.kind, c.key);
            }
            if r.conflicts > 0 || !r.complete {
                ExitCode::FAILURE
            } else {
                ExitCode::SUCCESS
            }
        }
        Err(e) => fatal(e),
    }
}

pub const UPGRADE_EXAMPLES: &str = "\
Examples (old.db: a store an older Python SqliteSaver wrote, e.g. a copy of the crate's
vectors/stores/sqlite-py-2.0.2/store.sqlite):
  $ lgcodec store upgrade old.db --dry-run
  $ lgcodec store upgrade old.db --json
  $ lgcodec store upgrade postgresql://user@host:5432/db --dry-run
Exit status: 0 upgraded (or already current, or a dry run); 1 the layout cannot be
upgraded in place (LangGraph 0.1, LangGraphJS, shallow): copy it into a fresh store
with `lgcodec store copy OLD NEW`; 2 usage or fatal error.";

#[derive(Args)]
pub struct UpgradeArgs {
    /// sqlite:PATH, a file path, or a postgres:// URL.
    pub store: String,
    /// Say what would run; write nothing.
    #[arg(long)]
    pub dry_run: bool,
    /// Print the report as one JSON object.
    #[arg(long)]
    pub json: bool,
}

pub async fn upgrade(args: UpgradeArgs) -> ExitCode {
    let options = store::UpgradeOptions::new().dry_run(args.dry_run);
    match store::upgrade(&args.store, &options).await {
        Ok(r) => {
            if let Err(code) = json_line(args.json, &r) {
                return code;
            }
            for step in &r.steps {
                eprintln!(
                    "{} {}: {}",
                    if r.dry_run {
                        "would run"
                    } else if step.ran {
                        "ran"
                    } else {
                        "already applied"
                    },
                    step.name,
                    step.sql.split_whitespace().collect::<Vec<_>>().join(" ")
                );
            }
            eprintln!(
                "lgcodec store upgrade: {} ({}): {} ({:.1} s)",
                r.store,
                r.layout_before,
                if r.steps.is_empty() {
                    "already in today's layout, nothing to do".to_owned()
                } else if r.dry_run {
                    format!("{} step(s) would run", r.steps.len())
                } else {
                    format!(
                        "{} step(s) run, now: {}",
                        r.steps.iter().filter(|s| s.ran).count(),
                        r.layout_after
                    )
                },
                r.elapsed_s
            );
            ExitCode::SUCCESS
        }
        Err(e) if e.kind() == ErrorKind::CannotUpgrade => {
            let location = e.subject().unwrap_or_default();
            let layout = e.found().unwrap_or_default();
            let reason = e.reason().unwrap_or_default();
            if args.json {
                let refusal = serde_json::json!({
                    "operation": "upgrade",
                    "store": location,
                    "upgradable": false,
                    "layout_before": layout,
                    "reason": reason,
                    "instead": "lgcodec store copy STORE NEW_STORE",
                });
                if let Err(e) = emit_json(&refusal) {
                    return fatal(e);
                }
            }
            eprintln!(
                "lgcodec store upgrade: {location} ({layout}) cannot be upgraded in place: {reason}; copy it into a fresh store instead: lgcodec store copy {location} NEW_STORE"
            );
            ExitCode::FAILURE
        }
        Err(e) => fatal(e),
    }
}

#[derive(Args)]
pub struct CopyArgs {
    /// The source: sqlite:PATH, a file path, or a postgres:// URL.
    pub source: String,
    /// The target (an empty one gets Python's tables; a rerun skips what is there).
    pub target: String,
    /// Only this thread (repeat for more).
    #[arg(long = "thread", value_name = "ID")]
    pub threads: Vec<String>,
    /// Count what would be copied; write nothing.
    #[arg(long)]
    pub dry_run: bool,
    /// Copy into threads the target already holds with checkpoints the source does not
    /// have, adding the source's checkpoints to them (refused without it: Python would
    /// read whichever checkpoint is newest).
    #[arg(long)]
    pub merge: bool,
    /// At most this many checkpoints read per second (spares a busy source).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    pub max_rows_per_sec: Option<u64>,
    /// Print the report as one JSON object.
    #[arg(long)]
    pub json: bool,
}

pub async fn copy(args: CopyArgs, keys: &StoreKeys) -> ExitCode {
    let bar = bar();
    let mut options = CopyOptions::new()
        .threads(args.threads)
        .dry_run(args.dry_run)
        .merge(args.merge)
        .max_rows_per_sec(args.max_rows_per_sec);
    options = options.on_progress(on_progress(bar.as_ref()));
    let report = store::copy(&args.source, &args.target, keys, &options).await;
    if let Some(b) = bar {
        b.finish_and_clear();
    }
    match report {
        Ok(r) => {
            if let Err(code) = json_line(args.json, &r) {
                return code;
            }
            for m in &r.mismatches {
                eprintln!("mismatch: {m}");
            }
            eprintln!(
                "lgcodec store copy: {} checkpoint(s) in {} ({}): {} {}, {} already in {}, {} write(s) inserted, {} verified, {} mismatch(es){} ({:.1} s)",
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
                if r.created_tables { "; Python's tables created" } else { "" },
                r.elapsed_s
            );
            if r.mismatches.is_empty() {
                ExitCode::SUCCESS
            } else {
                ExitCode::FAILURE
            }
        }
        Err(e) => fatal(e),
    }
}

#[derive(Args)]
#[command(group(clap::ArgGroup::new("rule").required(true).multiple(true).args(["keep_latest", "before", "idle_since"])))]
pub struct PruneArgs {
    /// sqlite:PATH, a file path, or a postgres:// URL (today's Python layout).
    pub store: String,
    /// Keep the latest N checkpoints per thread and namespace (and the ancestors their
    /// DeltaChannels need; a checkpoint that cannot be read, e.g. without the key,
    /// keeps its whole chain).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
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
    /// Only threads whose latest metadata has KEY equal to the JSON VALUE (repeat).
    #[arg(long = "metadata", value_name = "KEY=JSON")]
    pub metadata: Vec<String>,
    /// Report what would go and how many bytes; delete nothing.
    #[arg(long)]
    pub dry_run: bool,
    /// SQLite: VACUUM afterwards so the file shrinks.
    #[arg(long)]
    pub vacuum: bool,
    /// At most this many checkpoints read per second (spares a busy database).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    pub max_rows_per_sec: Option<u64>,
    /// Print the report as one JSON object.
    #[arg(long)]
    pub json: bool,
}

pub async fn prune(args: PruneArgs, keys: &StoreKeys) -> ExitCode {
    let mut options = PruneOptions::new()
        .threads(args.threads)
        .dry_run(args.dry_run)
        .vacuum(args.vacuum)
        .max_rows_per_sec(args.max_rows_per_sec);
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
    let bar = bar();
    options = options.on_progress(on_progress(bar.as_ref()));
    let report = store::prune(&args.store, keys, &options).await;
    if let Some(b) = bar {
        b.finish_and_clear();
    }
    match report {
        Ok(r) => {
            if let Err(code) = json_line(args.json, &r) {
                return code;
            }
            eprintln!(
                "lgcodec store prune: {} thread(s): {} {} checkpoint(s) ({} thread(s) whole), {} write(s), {} blob(s), {}; kept {} ({} of them ancestors kept for DeltaChannels or for checkpoints that could not be read, e.g. without the key){} ({:.1} s)",
                human::count(r.threads),
                if r.dry_run { "would delete" } else { "deleted" },
                human::count(r.checkpoints_deleted),
                human::count(r.threads_deleted),
                human::count(r.writes_deleted),
                human::count(r.blobs_deleted),
                human::bytes(r.bytes_freed),
                human::count(r.checkpoints_kept),
                human::count(r.kept_for_delta),
                r.file_bytes
                    .map(|(a, b)| format!(
                        "; file {} -> {} after VACUUM",
                        human::bytes(a),
                        human::bytes(b)
                    ))
                    .unwrap_or_default(),
                r.elapsed_s
            );
            if r.unreadable > 0 {
                eprintln!(
                    "lgcodec store prune: {} checkpoint(s) could not be read (encrypted without \
                     their key, or not decodable): their chains were kept, not pruned. Give the \
                     key (LANGGRAPH_AES_KEY, LANGGRAPH_AES_FALLBACK_KEYS) and run it again; \
                     `lgcodec store audit` names the rows.",
                    r.unreadable
                );
                return ExitCode::from(1);
            }
            ExitCode::SUCCESS
        }
        Err(e) => fatal(e),
    }
}

/// `report` as one JSON line on stdout when `json` is set (`--json`); the fatal exit
/// status if it cannot be written.
fn json_line(json: bool, report: &impl serde::Serialize) -> Result<(), ExitCode> {
    if json {
        emit_json(report).map_err(fatal)
    } else {
        Ok(())
    }
}
