//! `lgcodec store retain`: retention as a service over [`langgraph_codec::store::retain`]:
//! one sweep (`--once`) or one every DURATION (`--every`), a JSON line per sweep on
//! stdout and a summary line on stderr. SIGTERM (or SIGINT) lets the batch in flight
//! finish and ends the command (exit 0 for SIGTERM, 130 for SIGINT); a second signal
//! stops at once (the batch in flight is rolled back).

use std::io::Write as _;
use std::process::ExitCode;
use std::sync::atomic::Ordering;
use std::time::Duration;

use clap::Args;
use langgraph_codec::store::{self, RetainOptions, RetainReport, RetentionPolicy, StoreKeys};
use langgraph_codec::{Error, ErrorKind};

use super::batching::{BatchSize, Pace};
use super::{bar, fatal, human, on_progress, stop_anyway, AbortOnDrop, Signals};
use crate::metrics;
use crate::rows::read_capped;

pub const RETAIN_EXAMPLES: &str = "\
Examples (paste them in a directory holding copy.db, a store Python's SqliteSaver wrote;
the last runs until SIGTERM or Ctrl-C):
  $ printf '[rules]\\nkeep_latest = 2\\nmax_age = \"30d\"\\n' > retention.toml
  $ lgcodec store retain copy.db --policy retention.toml --once --dry-run
  $ lgcodec store retain copy.db --policy retention.toml --once
  $ printf '{\"checkpointer\": {\"ttl\": {\"strategy\": \"keep_latest\", \"default_ttl\": 43200}}}' > langgraph.json
  $ lgcodec store retain copy.db --config langgraph.json --every 15m --pause 100ms
A policy (TOML):
  [rules]
  keep_latest = 20        # per thread and namespace
  max_age = \"30d\"         # older checkpoints go; the latest of each namespace stays
  idle_ttl = \"90d\"        # idle threads go whole (idle_action = \"keep_latest\": keep the latest)
  hard_ttl = \"365d\"       # threads whose oldest checkpoint is older go whole
  [keep]
  labels = [\"label\"]            # checkpoints whose metadata holds one stay
  pinned_metadata = [\"pinned\"]  # threads whose latest metadata holds one are untouched
  pinned_threads = [\"vip-*\"]    # thread ids matching a pattern are untouched
  interrupted = \"keep\"          # expired threads waiting at an interrupt stay
  [overrides]
  metadata_key = \"retention\"    # a thread's own rules, in its metadata
With --metrics-addr 0.0.0.0:9464 the same counters are served for Prometheus at
/metrics (lgcodec_retain_*; docs/retention.md).
Output: one JSON line per sweep on stdout (with --dry-run, first one line per thread that
would lose something); a summary line per sweep on stderr. Several sweepers on one store
take turns: the others skip the round (skipped_locked). Exit status: 0 done (or skipped,
or stopped by SIGTERM after the batch in flight), 1 a sweep left something it could not
read or decide, 2 usage or fatal error (a bad policy, a policy that would delete every
thread without --allow-all), 130 SIGINT.";

#[derive(Args)]
#[command(mut_arg("max_rows_per_sec", |a| a.help("At most this many checkpoints read per second")))]
#[command(group(clap::ArgGroup::new("source").required(true).args(["policy", "config"])))]
#[command(group(clap::ArgGroup::new("when").required(true).args(["once", "every"])))]
#[command(mut_arg("batch_size", |a| a.help("Threads per transaction (default: the policy's, else 200)")))]
pub struct RetainArgs {
    /// sqlite:PATH, a file path, or a postgres:// URL (today's Python layout).
    pub store: String,
    /// The retention policy, a TOML file (docs/retention.md).
    #[arg(long, value_name = "FILE", value_parser = super::a_path)]
    pub policy: Option<String>,
    /// A LangGraph Agent Server langgraph.json: its checkpointer.ttl section.
    #[arg(long, value_name = "FILE", value_parser = super::a_path)]
    pub config: Option<String>,
    /// One sweep, then exit.
    #[arg(long)]
    pub once: bool,
    /// A sweep every DURATION (15m, 1h, …; 100ms at least) until SIGTERM; without a value, the
    /// policy's (sweep.every, or sweep_interval_minutes).
    #[arg(long, value_name = "DURATION", num_args = 0..=1, default_missing_value = "")]
    pub every: Option<String>,
    #[command(flatten)]
    pub batch: BatchSize,
    /// A pause between transactions (e.g. 100ms), to spare a busy database (none after
    /// the last; a stop signal ends one at once).
    #[arg(long, value_name = "DURATION")]
    pub pause: Option<String>,
    /// Threads changed per sweep at most (default: the policy's); the next sweep goes on.
    #[arg(long, value_name = "N", value_parser = super::batching::one_or_more)]
    pub max_threads: Option<u64>,
    #[command(flatten)]
    pub pace: Pace,
    /// Print what would go (a JSON line per thread), delete nothing (exit 1 if the
    /// role may not delete: a Postgres role without the privilege).
    #[arg(long)]
    pub dry_run: bool,
    /// Let the policy delete every thread of the store.
    #[arg(long)]
    pub allow_all: bool,
    /// SQLite: after each sweep give the free pages back in small steps
    /// (incremental vacuum; the file must be in auto_vacuum = INCREMENTAL mode, the
    /// report says how to convert it once otherwise).
    #[arg(long)]
    pub vacuum: bool,
    /// Serve each sweep's counters for Prometheus at http://ADDR/metrics (e.g.
    /// 0.0.0.0:9464) while the command runs.
    #[arg(long, value_name = "ADDR")]
    pub metrics_addr: Option<String>,
}

fn policy_error(origin: &str, reason: impl std::fmt::Display) -> Error {
    Error::new(
        ErrorKind::InvalidPolicy,
        format!("retention policy {origin}: {reason}"),
    )
}

/// The largest policy file read (a policy is a few hundred bytes): the file named may
/// be any file.
const MAX_POLICY_BYTES: usize = 1 << 20;

fn load_policy(args: &RetainArgs) -> Result<RetentionPolicy, Error> {
    let (file, langgraph) = match (&args.policy, &args.config) {
        (Some(p), _) => (p, false),
        (None, Some(c)) => (c, true),
        (None, None) => return Err(policy_error("", "give --policy FILE or --config FILE")),
    };
    let bytes = std::fs::File::open(file)
        .and_then(|f| read_capped(f, MAX_POLICY_BYTES))
        .map_err(|e| policy_error(file, format!("cannot read it: {e}")))?
        .ok_or_else(|| {
            policy_error(
                file,
                format!(
                    "larger than {} MiB: a policy is a few lines; is this the right file?",
                    MAX_POLICY_BYTES >> 20
                ),
            )
        })?;
    let text = String::from_utf8(bytes)
        .map_err(|_| policy_error(file, "cannot read it: not UTF-8 text".to_owned()))?;
    if langgraph {
        return RetentionPolicy::from_langgraph_json(&text, file);
    }
    let value: serde_json::Value =
        toml::from_str(&text).map_err(|e| policy_error(file, format!("not TOML: {e}")))?;
    RetentionPolicy::from_value(&value, file)
}

/// The shortest `--every`: under it sweeps would follow each other back to back, and
/// the value is most likely a slip (`1ms` for `1m`).
const SHORTEST_EVERY: Duration = Duration::from_millis(100);

fn duration(flag: &str, text: &str) -> Result<Duration, Error> {
    let bad = |e: String| Error::new(ErrorKind::InvalidPolicy, format!("{flag} {text:?}: {e}"));
    let d = store::parse_duration(text).map_err(|e| match e {
        store::DurationError::Zero { .. } if flag == "--pause" => {
            bad(format!("{e}: leave --pause out for none"))
        }
        e => bad(e.to_string()),
    })?;
    if flag == "--every" && d < SHORTEST_EVERY {
        let meant = text.trim().strip_suffix("ms").map_or(String::new(), |n| {
            format!(" (did you mean \"{}m\"?)", n.trim_end())
        });
        return Err(bad(format!(
            "under {} ms, sweeps would run back to back: give 100ms or more, e.g. \"15m\"{meant}",
            SHORTEST_EVERY.as_millis()
        )));
    }
    Ok(d)
}

/// A JSON line on stdout; false when stdout is gone.
fn line(value: &serde_json::Value) -> std::io::Result<()> {
    let mut out = std::io::stdout().lock();
    writeln!(out, "{value}").and_then(|()| out.flush())
}

fn summary(sweep: u64, r: &RetainReport) -> String {
    let head = format!("lgcodec store retain: sweep {sweep}");
    if r.skipped_locked {
        return format!(
            "{head}: skipped, another sweeper holds the store's lock ({})",
            r.store
        );
    }
    let k = &r.kept_by_rule;
    format!(
        "{head}: {}; kept by rule: {} labeled, {} latest past max_age, {} DeltaChannel ancestors, {} pinned thread(s), {} thread(s) waiting at an interrupt, {} with their own rules{}{}{}{}{} ({:.1} s)",
        human::deleted_of!(r),
        human::count(k.labeled),
        human::count(k.newest),
        human::count(k.delta_ancestors),
        human::count(k.pinned_threads),
        human::count(k.interrupted_threads),
        human::count(k.overridden_threads),
        if r.capped { "; capped, the next sweep goes on" } else { "" },
        if r.stopped { "; stopped after the batch in flight" } else { "" },
        r.vacuum.as_ref().map_or(String::new(), |v| format!(
            "; {} given back to the file system",
            human::bytes(v.bytes_released)
        )),
        if r.errors.is_empty() && r.unreadable == 0 {
            String::new()
        } else {
            format!(
                "; {} thread(s) left with a problem, {} checkpoint(s) unreadable (see the JSON line)",
                r.errors.len(),
                r.unreadable
            )
        },
        human::fewer_connections(r.connections_refused),
        r.duration_s
    )
}

/// The exit status after a signal let the sweep finish its batch: SIGTERM is how a
/// service is stopped (0); SIGINT keeps its 130.
fn after_signal(code: u8) -> ExitCode {
    if code == super::TERMINATED {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(code)
    }
}

/// Whether a failed sweep of a running service is worth another try (the database
/// was away), rather than a reason to stop.
fn transient(e: &Error) -> bool {
    matches!(
        e.kind(),
        ErrorKind::Storage
            | ErrorKind::ConnectionLost
            | ErrorKind::ConnectionUnavailable
            | ErrorKind::TaskFailed
    )
}

pub async fn retain(args: RetainArgs, keys: &StoreKeys) -> ExitCode {
    let policy = match load_policy(&args) {
        Ok(p) => p,
        Err(e) => return fatal(e),
    };
    let every = match args.every.as_deref() {
        None => None,
        Some("") => match policy.every() {
            Some(d) => Some(d),
            None => {
                return fatal(policy_error(
                    args.policy.as_deref().unwrap_or_default(),
                    "--every without a value needs [sweep] every in the policy",
                ))
            }
        },
        Some(text) => match duration("--every", text) {
            Ok(d) => Some(d),
            Err(e) => return fatal(e),
        },
    };
    let pause = match args
        .pause
        .as_deref()
        .map(|p| duration("--pause", p))
        .transpose()
    {
        Ok(p) => p.or(policy.pause()),
        Err(e) => return fatal(e),
    };
    if let Err(e) = policy.validate() {
        return fatal(e);
    }
    if let Some(addr) = &args.metrics_addr {
        if let Err(e) = metrics::serve(addr, args.dry_run) {
            return fatal(e);
        }
    }
    let stop = crate::output::stop_flag();
    let bar = bar();
    let mut options = RetainOptions::new(policy.clone())
        .dry_run(args.dry_run)
        .allow_all(args.allow_all)
        .vacuum(args.vacuum)
        .pause(pause)
        .max_threads(args.max_threads.or(policy.max_threads()))
        .max_rows_per_sec(args.pace.max_rows_per_sec)
        .stop_flag(stop.clone())
        .on_progress(on_progress(bar.as_ref()));
    options = args.batch.apply(options, RetainOptions::batch_size);
    if args.dry_run {
        options = options.on_plan(|planned| {
            let _ = line(&serde_json::json!({ "would_delete": planned }));
        });
    }
    let mut signals = Signals::new();
    // A sweep blocked in a read or a write does not see the second signal: the process
    // exits anyway a moment later.
    let _watchdog = AbortOnDrop(tokio::spawn(stop_anyway("retain", true)));
    let mut sweep = 0u64;
    let mut after: Option<String> = None;
    let mut status = ExitCode::SUCCESS;
    loop {
        sweep += 1;
        let run = options.clone().start_after(after.clone());
        let mut fut = std::pin::pin!(store::retain(&args.store, keys, &run));
        let mut signalled = None;
        let result = tokio::select! {
            r = &mut fut => r,
            code = signals.next() => {
                stop.store(true, Ordering::SeqCst);
                signalled = Some(code);
                note!("lgcodec store retain: finishing the batch in flight, then stopping (a second signal stops at once)");
                tokio::select! {
                    r = &mut fut => r,
                    code = signals.next() => {
                        note!("lgcodec store retain: stopped at once; the batch in flight was rolled back, every one before it stays");
                        return ExitCode::from(code);
                    }
                }
            }
        };
        if let Some(b) = &bar {
            b.finish_and_clear();
        }
        match result {
            Ok(report) => {
                after.clone_from(&report.next_after);
                let mut json = serde_json::to_value(&report).unwrap_or_default();
                if let Some(map) = json.as_object_mut() {
                    map.insert("sweep".to_owned(), sweep.into());
                }
                if let Err(e) = line(&json) {
                    return fatal(crate::cli::Fatal::unwritable(&e));
                }
                note!("{}", summary(sweep, &report));
                if let Some(note) = report.vacuum.as_ref().and_then(|v| v.note.as_ref()) {
                    note!("lgcodec store retain: --vacuum: {note}");
                }
                metrics::sweep_done(&report);
                let refused = human::would_be_refused("retain", report.would_be_refused.as_ref());
                if let Some(note) = &refused {
                    note!("{note}");
                }
                if !report.errors.is_empty() || report.unreadable > 0 || refused.is_some() {
                    status = ExitCode::from(1);
                }
            }
            Err(e) if every.is_some() && sweep > 1 && transient(&e) => {
                metrics::sweep_failed();
                let json = serde_json::json!({
                    "operation": "retain", "sweep": sweep, "error": e.to_string(),
                    "kind": e.kind().as_str(),
                });
                let _ = line(&json);
                note!(
                    "lgcodec store retain: sweep {sweep} failed: {e}; the next sweep tries again"
                );
            }
            Err(e) => return fatal(e),
        }
        if let Some(code) = signalled {
            return after_signal(code);
        }
        let Some(every) = every else {
            return status;
        };
        tokio::select! {
            () = tokio::time::sleep(every) => {}
            code = signals.next() => return after_signal(code),
        }
    }
}
