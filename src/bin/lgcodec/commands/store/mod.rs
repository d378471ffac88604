//! `lgcodec store COMMAND`: a thin shell over [`langgraph_codec::store`], one module a
//! command: `audit`, `encrypt` and `rekey` (`sweep`) in every build with a saver;
//! `stats`, `inspect`, `export`, `import`, `verify`, `copy`, `prune`, `retain` and
//! `upgrade` with both the `sqlite` and `postgres` features. Exit status, the contract
//! of every command (see `crate::cli`): 0 success (audit: clean), 1 findings (or a
//! sweep that left rows it could not do, import conflicts, copy mismatches, a layout
//! that cannot be upgraded in place), 2 usage or fatal errors.

use std::process::ExitCode;
use std::sync::atomic::Ordering;

use clap::Subcommand;
use langgraph_codec::store::StoreKeys;

// `fatal`, `human`, `bar` and `on_progress` are also what `retain` takes from here
// (`super::{bar, fatal, human, on_progress}`).
use crate::cli::{fatal, FATAL};
#[cfg(all(feature = "sqlite", feature = "postgres"))]
use crate::human;
use crate::output::{self, ROWS_DONE};
#[cfg(all(feature = "sqlite", feature = "postgres"))]
use crate::output::{bar, on_progress};

mod audit;
mod batching;
#[cfg(all(feature = "sqlite", feature = "postgres"))]
mod copy;
#[cfg(all(feature = "sqlite", feature = "postgres"))]
mod export;
#[cfg(all(feature = "sqlite", feature = "postgres"))]
mod import;
#[cfg(all(feature = "sqlite", feature = "postgres"))]
mod inspect;
#[cfg(all(feature = "sqlite", feature = "postgres"))]
mod prune;
#[cfg(all(feature = "sqlite", feature = "postgres"))]
mod retain;
#[cfg(all(feature = "sqlite", feature = "postgres"))]
mod stats;
mod sweep;
#[cfg(all(feature = "sqlite", feature = "postgres"))]
mod upgrade;
#[cfg(all(feature = "sqlite", feature = "postgres"))]
mod verify;

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
  $ lgcodec store verify backup.jsonl
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
import conflicts, a backup file cut short or a thread named that it holds no row of, copy
mismatches or a thread left out that the target holds in part, a prune that could not read some checkpoints, checkpoints
inspect --check finds do not decode, a layout upgrade cannot bring up to date in place;
2 usage or fatal error (a thread named with --thread or --exclude-thread that the store
does not hold is refused by copy and export, with --exclude-thread by prune:
thread_not_found).
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
    Audit(audit::AuditArgs),
    /// Encrypt every value in clear under LANGGRAPH_AES_KEY (msgpack → msgpack+aes).
    Encrypt(sweep::SweepArgs),
    /// Re-encrypt every value under a previous key under LANGGRAPH_AES_KEY.
    Rekey(sweep::SweepArgs),
    /// Threads (latest checkpoint, step, time, size); with --thread its history as a
    /// tree; with --checkpoint the state (JSON view, decrypted); with --diff what
    /// changed. Any layout a saver wrote, read-only.
    #[cfg(all(feature = "sqlite", feature = "postgres"))]
    #[command(after_help = MAINT_EXAMPLES)]
    Inspect(inspect::InspectArgs),
    /// Rows and bytes per thread and per channel. Read-only.
    #[cfg(all(feature = "sqlite", feature = "postgres"))]
    #[command(after_help = MAINT_EXAMPLES)]
    Stats(stats::StatsArgs),
    /// Write a store's rows, exactly as stored, to a backup file (JSON Lines,
    /// lgcodec-store-backup v1); encrypted rows stay encrypted.
    #[cfg(all(feature = "sqlite", feature = "postgres"))]
    #[command(after_help = MAINT_EXAMPLES)]
    Export(export::ExportArgs),
    /// Restore a backup file into a store of the same backend; existing rows are
    /// never overwritten (identical ones skipped, different ones reported: exit 1).
    #[cfg(all(feature = "sqlite", feature = "postgres"))]
    #[command(after_help = MAINT_EXAMPLES)]
    Import(import::ImportArgs),
    /// Check a backup file without a store: every line parses, every cell has its
    /// column's type, the threads are the header's, the end line's counts match
    /// (exit 0 whole, 1 cut short, 2 malformed).
    #[cfg(all(feature = "sqlite", feature = "postgres"))]
    #[command(after_help = MAINT_EXAMPLES)]
    Verify(verify::VerifyArgs),
    /// Copy every thread (or --thread ones) to another store, SQLite or Postgres,
    /// written by the target saver as Python writes it; resumable, verified.
    #[cfg(all(feature = "sqlite", feature = "postgres"))]
    #[command(after_help = MAINT_EXAMPLES)]
    Copy(copy::CopyArgs),
    /// Retention: keep the latest N per thread and namespace, drop checkpoints before a
    /// date, delete idle threads; DeltaChannel threads stay reconstructible.
    #[cfg(all(feature = "sqlite", feature = "postgres"))]
    #[command(after_help = MAINT_EXAMPLES)]
    Prune(prune::PruneArgs),
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
    #[command(after_help = upgrade::UPGRADE_EXAMPLES)]
    Upgrade(upgrade::UpgradeArgs),
}

impl StoreCommand {
    /// Whether the command takes the stop flag ([`output::stop_flag`]): a signal lets
    /// it finish the batch in flight.
    fn stops_at_a_batch(&self) -> bool {
        match self {
            StoreCommand::Encrypt(_) | StoreCommand::Rekey(_) => true,
            #[cfg(all(feature = "sqlite", feature = "postgres"))]
            StoreCommand::Import(_) | StoreCommand::Copy(_) | StoreCommand::Prune(_) => true,
            _ => false,
        }
    }

    /// Whether standard output is JSON: `--json` given, or `retain` (JSON lines always).
    fn json(&self) -> bool {
        match self {
            StoreCommand::Audit(a) => a.json,
            StoreCommand::Encrypt(a) | StoreCommand::Rekey(a) => a.json,
            #[cfg(all(feature = "sqlite", feature = "postgres"))]
            StoreCommand::Inspect(a) => a.json,
            #[cfg(all(feature = "sqlite", feature = "postgres"))]
            StoreCommand::Stats(a) => a.json,
            #[cfg(all(feature = "sqlite", feature = "postgres"))]
            StoreCommand::Export(a) => a.json,
            #[cfg(all(feature = "sqlite", feature = "postgres"))]
            StoreCommand::Import(a) => a.json,
            #[cfg(all(feature = "sqlite", feature = "postgres"))]
            StoreCommand::Verify(a) => a.json,
            #[cfg(all(feature = "sqlite", feature = "postgres"))]
            StoreCommand::Copy(a) => a.json,
            #[cfg(all(feature = "sqlite", feature = "postgres"))]
            StoreCommand::Prune(a) => a.json,
            #[cfg(all(feature = "sqlite", feature = "postgres"))]
            StoreCommand::Retain(_) => true,
            #[cfg(all(feature = "sqlite", feature = "postgres"))]
            StoreCommand::Upgrade(a) => a.json,
        }
    }

    /// The command's name, as typed.
    fn name(&self) -> &'static str {
        match self {
            StoreCommand::Audit(_) => "audit",
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

/// The examples of the maintenance commands' `--help`.
#[cfg(all(feature = "sqlite", feature = "postgres"))]
pub const MAINT_EXAMPLES: &str = "\
Maintenance examples (paste them in a directory holding checkpoints.db, a store Python's
SqliteSaver wrote with a thread t-main, e.g. a copy of the crate's
vectors/stores/sqlite-py-3.1.2/store.sqlite; a postgresql://user@host:5432/db URL works
wherever a store is named):
  $ lgcodec store stats checkpoints.db
  $ lgcodec store stats checkpoints.db --top 10 --sort size
  $ lgcodec store inspect checkpoints.db
  $ lgcodec store inspect checkpoints.db --thread t-main --json
  $ lgcodec store inspect checkpoints.db --thread t-main --check
  $ lgcodec store export checkpoints.db backup.jsonl
  $ lgcodec store export checkpoints.db thread-1.jsonl --thread t-main
  $ lgcodec store export checkpoints.db others.jsonl --exclude-thread t-main
  $ lgcodec store verify backup.jsonl
  $ lgcodec store import backup.jsonl restored.db --dry-run
  $ lgcodec store import backup.jsonl restored.db
  $ lgcodec store import backup.jsonl restored.db --json
  $ lgcodec store import backup.jsonl t-main.db --thread t-main
  $ lgcodec store copy checkpoints.db copy.db --dry-run
  $ lgcodec store copy checkpoints.db copy.db
  $ lgcodec store copy checkpoints.db sqlite:thread-1.db --thread t-main --json
  $ lgcodec store prune copy.db --keep-latest 2 --dry-run
  $ lgcodec store prune copy.db --keep-latest 2 --vacuum
  $ lgcodec store prune copy.db --before 2024-01-01 --json
  $ lgcodec store prune copy.db --idle-since 2024-01-01T00:00:00Z --dry-run
  $ lgcodec store prune copy.db --keep-latest 1 --exclude-thread t-main --dry-run
Copy to Postgres: lgcodec store copy checkpoints.db postgresql://user@host:5432/db (an
empty database gets Python's tables). Keys as for audit: LANGGRAPH_AES_KEY (and
_PREVIOUS / _FALLBACK_KEYS) decrypt; values are written under LANGGRAPH_AES_KEY, so a new
primary key re-encrypts on the way.";

/// The exit status of a command stopped by SIGINT (128 + 2, as shells report it); SIGTERM
/// exits 143.
const INTERRUPTED: u8 = 130;
pub(super) const TERMINATED: u8 = 143;

/// SIGINT and SIGTERM as they arrive, each as its exit status (130, 143). Listened to
/// from [`new`](Self::new) on: a SIGTERM between two waits is not missed.
pub(super) struct Signals {
    #[cfg(unix)]
    term: Option<tokio::signal::unix::Signal>,
}

impl Signals {
    pub(super) fn new() -> Self {
        Signals {
            #[cfg(unix)]
            term: tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()).ok(),
        }
    }

    /// The next signal's exit status.
    pub(super) async fn next(&mut self) -> u8 {
        #[cfg(unix)]
        if let Some(term) = self.term.as_mut() {
            return tokio::select! {
                _ = tokio::signal::ctrl_c() => INTERRUPTED,
                _ = term.recv() => TERMINATED,
            };
        }
        let _ = tokio::signal::ctrl_c().await;
        INTERRUPTED
    }
}

/// Runs `command` until it ends or SIGINT/SIGTERM arrives, and says where it stopped
/// and how to finish: every batch an operation committed stays (each is one
/// transaction), and the same command run again resumes. A command that takes the stop
/// flag (`at_a_batch`: encrypt, rekey, import, copy, prune) is let finish the batch in
/// flight and print its report (`"stopped": true`); a second signal, or any other
/// command, stops at once, the batch in flight rolled back by the database. Either way
/// the exit status is the signal's (130 for SIGINT, 143 for SIGTERM).
async fn interruptible(
    name: &'static str,
    at_a_batch: bool,
    command: impl std::future::Future<Output = ExitCode>,
) -> ExitCode {
    let mut command = std::pin::pin!(command);
    let mut signals = Signals::new();
    let watchdog = tokio::spawn(stop_anyway(name, at_a_batch));
    let _abort = AbortOnDrop(watchdog);
    let code = tokio::select! {
        code = &mut command => return code,
        code = signals.next() => code,
    };
    let how = if code == INTERRUPTED {
        "interrupted (SIGINT)"
    } else {
        "terminated (SIGTERM)"
    };
    if at_a_batch {
        output::stop_flag().store(true, Ordering::SeqCst);
        note!("\nlgcodec store {name}: {how}: finishing the batch in flight, then stopping (a second signal stops at once)");
        tokio::select! {
            ended = &mut command => {
                let (done, unit) = progress_so_far();
                // A fatal error (already printed) ended it instead: the batch in flight
                // went with it (a stop while waiting to re-open a lost connection).
                let flight = if ended == ExitCode::from(FATAL) {
                    "the batch in flight was not committed"
                } else {
                    "the batch in flight finished"
                };
                note!(
                    "lgcodec store {name}: stopped after {done} {unit}, {flight}; every batch committed so far stays: run the same command again to resume"
                );
                return ExitCode::from(code);
            }
            _ = signals.next() => {}
        }
    }
    let (done, unit) = progress_so_far();
    note!(
        "\nlgcodec store {name}: {how} after {done} {unit}; every batch committed so far stays, the one in flight was rolled back: run the same command again to resume"
    );
    ExitCode::from(code)
}

/// How long a command has to answer a signal before the process exits anyway. A
/// command blocked in a read, a write or a wait on a lock (an export to a pipe no one
/// reads, a SQLite store another process holds locked) is not polled, so does not see
/// the signal: it used to go on until SIGKILL, or until the lock's 30 s wait ran out.
const STOP_GRACE: std::time::Duration = std::time::Duration::from_secs(2);

/// Watches for the signals [`interruptible`] (and `retain`) waits for, on a worker
/// thread of its own (the command's task may be blocked), and exits with the signal's
/// status [`STOP_GRACE`] after the one that should have stopped the command, if the
/// process is still there: for a command that finishes its batch, the first signal
/// when the command did not answer it (it sets the stop flag when it does), else the
/// second. What the command committed stays (each batch is one transaction); the
/// batch in flight is rolled back by the database, as after a kill.
pub(super) async fn stop_anyway(name: &'static str, at_a_batch: bool) {
    let mut signals = Signals::new();
    let mut code = signals.next().await;
    tokio::time::sleep(STOP_GRACE).await;
    if at_a_batch && output::stop_flag().load(Ordering::SeqCst) {
        // Answered: the batch in flight finishes, for as long as it takes; a second
        // signal stops at once.
        code = signals.next().await;
        tokio::time::sleep(STOP_GRACE).await;
    }
    note!(
        "\nlgcodec store {name}: still running {} s after the signal (blocked reading, writing or waiting on a lock): stopping now; every batch committed so far stays, the one in flight is rolled back by the database: run the same command again to resume",
        STOP_GRACE.as_secs()
    );
    std::process::exit(i32::from(code));
}

/// A file named on the command line: an empty one names no file (it was "cannot
/// open : No such file or directory").
#[cfg(all(feature = "sqlite", feature = "postgres"))]
pub(super) fn a_path(given: &str) -> Result<String, String> {
    if given.is_empty() {
        Err("an empty path names no file: give the file's path".to_owned())
    } else {
        Ok(given.to_owned())
    }
}

/// A store's location given where a backup file goes (`import URL STORE`, `verify
/// URL`, `export STORE URL`): said to be a store, with the command that moves rows
/// between stores, its password left out. It was opened as a path, and the error
/// ("cannot open postgresql://app:secret@db/app: No such file or directory") showed
/// the password. So was a mistyped one (`PostgreSQL://…`), which is refused as the
/// store parser refuses it, shown as it shows it. A file that is there by that name is
/// a file.
#[cfg(all(feature = "sqlite", feature = "postgres"))]
pub(super) fn not_a_store(file: &str, export: bool) -> Result<(), langgraph_codec::Error> {
    use langgraph_codec::store::Location;
    if std::path::Path::new(file).exists() {
        return Ok(());
    }
    // What the store parser takes for a store (a bare path is a file here).
    let what = if export {
        "an export writes a backup file; `lgcodec store copy STORE TARGET` copies one store into another"
    } else {
        "give a file `lgcodec store export` wrote; `lgcodec store copy SOURCE TARGET` copies one store into another"
    };
    let named = match Location::parse(file) {
        Ok(url @ Location::Postgres(_)) => url.display(),
        Ok(Location::Sqlite(_)) if file.starts_with("sqlite:") => file.to_owned(),
        Ok(_) => return Ok(()),
        // A store URL mistyped (`PostgreSQL://app:pw@db/app`, `postgresq://…`): no file
        // has that name, and opening it as one would echo it, password and all. The
        // parser's error shows it without the password and says what was meant.
        Err(e) => {
            let shown = e.subject().unwrap_or("the name given");
            let reason = e.reason().unwrap_or("not a store URL");
            return Err(langgraph_codec::Error::new(
                langgraph_codec::ErrorKind::Backup,
                format!("no file {shown:?}, and as a store: {reason}; {what}"),
            ));
        }
    };
    Err(langgraph_codec::Error::new(
        langgraph_codec::ErrorKind::Backup,
        format!("{named} names a store, not a backup file: {what}"),
    ))
}

/// Aborts the task when dropped: the watchdog ends with the command.
pub(super) struct AbortOnDrop(pub(super) tokio::task::JoinHandle<()>);

impl Drop for AbortOnDrop {
    fn drop(&mut self) {
        self.0.abort();
    }
}

/// How far the operation got, as its progress said: a count and its unit.
fn progress_so_far() -> (String, &'static str) {
    let (done, unit) = (ROWS_DONE.load(Ordering::Relaxed), output::unit());
    let unit = if done == 1 {
        unit.strip_suffix('s').unwrap_or(unit)
    } else {
        unit
    };
    (crate::human::count(done), unit)
}

pub fn run(command: StoreCommand) -> ExitCode {
    if command.json() {
        crate::cli::json_errors(command.name());
    }
    // More than one thread: a copy reads back and compares the batch it wrote while the
    // next is read and encoded, each on a core (2026-11-28, 100,000 checkpoints SQLite →
    // Postgres, benches/store_maint_vs_python.sh). Four at most: the work is a chain of
    // batches, and more threads would only hold more stacks.
    let threads = std::thread::available_parallelism().map_or(2, |n| n.get().clamp(2, 4));
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .worker_threads(threads)
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
    // What pg_stat_activity shows for this command's sessions unless the connection
    // string or PGAPPNAME names them (psql's are `psql`).
    #[cfg(feature = "postgres")]
    langgraph_codec::saver::postgres::set_fallback_application_name(&format!(
        "lgcodec store {name}"
    ));
    // retain handles its own signals: the batch in flight finishes.
    #[cfg(all(feature = "sqlite", feature = "postgres"))]
    let command = match command {
        StoreCommand::Retain(args) => {
            let code = runtime.block_on(retain::retain(args, &keys));
            runtime.shutdown_timeout(LEFT_BEHIND);
            return code;
        }
        other => other,
    };
    let code = runtime.block_on(interruptible(
        name,
        command.stops_at_a_batch(),
        async move {
            match command {
                StoreCommand::Audit(args) => audit::run(args, &keys).await,
                StoreCommand::Encrypt(args) => sweep::run("encrypt", args, &keys).await,
                StoreCommand::Rekey(args) => sweep::run("rekey", args, &keys).await,
                #[cfg(all(feature = "sqlite", feature = "postgres"))]
                StoreCommand::Inspect(args) => inspect::run(args, &keys).await,
                #[cfg(all(feature = "sqlite", feature = "postgres"))]
                StoreCommand::Stats(args) => stats::run(args, &keys).await,
                #[cfg(all(feature = "sqlite", feature = "postgres"))]
                StoreCommand::Export(args) => export::run(args).await,
                #[cfg(all(feature = "sqlite", feature = "postgres"))]
                StoreCommand::Import(args) => import::run(args).await,
                #[cfg(all(feature = "sqlite", feature = "postgres"))]
                StoreCommand::Verify(args) => verify::run(args).await,
                #[cfg(all(feature = "sqlite", feature = "postgres"))]
                StoreCommand::Copy(args) => copy::run(args, &keys).await,
                #[cfg(all(feature = "sqlite", feature = "postgres"))]
                StoreCommand::Prune(args) => prune::run(args, &keys).await,
                #[cfg(all(feature = "sqlite", feature = "postgres"))]
                StoreCommand::Retain(_) => fatal("retain runs outside the interruptible wrapper"),
                #[cfg(all(feature = "sqlite", feature = "postgres"))]
                StoreCommand::Upgrade(args) => upgrade::run(args).await,
            }
        },
    ));
    runtime.shutdown_timeout(LEFT_BEHIND);
    code
}

/// How long the process waits, once the command has returned, for a blocking call
/// still in flight. Only a command stopped by a signal leaves one: a statement waiting
/// on another process's lock goes on until SQLite's 30 s busy wait runs out (28 s after
/// the second SIGINT, measured on an encrypt of a locked store), its result read by no
/// one. The database rolls back what it had not committed, as after a kill.
const LEFT_BEHIND: std::time::Duration = std::time::Duration::from_millis(250);
