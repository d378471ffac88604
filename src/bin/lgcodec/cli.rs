//! The command line: [`Cli`] and its commands as clap parses them, the options several
//! commands share, the top-level `--help` text, and the one exit-status contract every
//! command keeps.

use std::io::Write as _;
use std::process::ExitCode;

use clap::{Parser, Subcommand};
use langgraph_codec::records;

use crate::commands;

/// The last lines of `lgcodec --help`: where the store commands are (none in a build
/// without a saver feature).
#[cfg(any(feature = "sqlite", feature = "postgres"))]
macro_rules! store_note {
    () => {
        "
Whole stores (a SQLite file or a Postgres database): lgcodec store --help lists the
store commands, each with an example."
    };
}
#[cfg(not(any(feature = "sqlite", feature = "postgres")))]
macro_rules! store_note {
    () => {
        ""
    };
}

const EXAMPLES: &str = concat!(
    "\
Examples (paste them: each works in an empty directory):
  $ echo '{\"type\": \"msgpack\", \"value\": {\"step\": 1}}' | lgcodec encode > row.bin
  $ lgcodec decode --type msgpack row.bin
  $ echo 'gaRzdGVwAQ==' | lgcodec decode --base64 --type msgpack
  $ echo '{\"id\": 1, \"type\": \"msgpack\", \"data\": \"gaRzdGVwAQ==\"}' | lgcodec decode --jsonl
  $ echo '{\"type\": \"msgpack\", \"value\": [1, 2]}' | lgcodec encode --jsonl | lgcodec decode --jsonl
  $ echo '{\"type\": \"msgpack\", \"value\": 1}' | LANGGRAPH_AES_KEY=0123456789abcdef lgcodec encode --encrypt --jsonl > rows.jsonl
  $ LANGGRAPH_AES_KEY=0123456789abcdef lgcodec decode --jsonl rows.jsonl
  $ LANGGRAPH_AES_KEY=fedcba9876543210 LANGGRAPH_AES_KEY_PREVIOUS=0123456789abcdef lgcodec rekey rows.jsonl
  $ lgcodec key generate

Keys: LANGGRAPH_AES_KEY is the key text itself (16, 24 or 32 bytes of UTF-8, as in
Python); LANGGRAPH_AES_KEY_PREVIOUS (or LANGGRAPH_AES_FALLBACK_KEYS) lists older keys,
comma-separated (base64:<...> for a key with a comma). LANGGRAPH_AES_STRICT=1 (or
--strict) refuses plaintext rows. JSONL answers carry the input's line number (\"line\") and its other
fields; a failed record answers {\"error\": {\"kind\", \"message\", \"hint\"}}.

Exit status (every command): 0 done; 1 findings or a partial result (a JSONL record
that failed while the others were answered, store audit findings, a store command that
left something to look at); 2 usage or fatal error (a bad command line, an input or
store that cannot be read, a single row that does not decode or encode, a key that
cannot be used). A store command stopped by SIGINT exits 130, by SIGTERM 143 (encrypt,
rekey, import, copy and prune finish the batch in flight first and print their report;
store retain, a service, exits 0 on SIGTERM once the batch in flight is done). A command
whose standard output is closed by its reader (`| head`) stops quietly with 141, as
SIGPIPE would end it; a backup written to standard output and cut short is an error (2).",
    store_note!()
);

#[derive(Parser)]
#[command(
    name = "lgcodec",
    version,
    about = "Read and write LangGraph checkpoint rows exactly as Python LangGraph does",
    after_help = EXAMPLES
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(clap::Args)]
pub struct JsonlOptions {
    /// Longest JSONL input line accepted, in bytes; a longer line is answered with a
    /// line_too_long error and skipped.
    #[arg(long, default_value_t = records::DEFAULT_MAX_LINE_BYTES, value_name = "BYTES")]
    pub max_line_bytes: usize,
}

#[derive(clap::Args)]
pub struct InputOptions {
    /// Most bytes read from the input (without --jsonl, the whole input is one row);
    /// past it the command stops with an error.
    #[arg(long, default_value_t = records::DEFAULT_MAX_LINE_BYTES, value_name = "BYTES")]
    pub max_input_bytes: usize,
}

#[derive(clap::Args)]
pub struct StrictOption {
    /// Strict mode: refuse rows that are not encrypted (plaintext_refused). Also on when
    /// LANGGRAPH_AES_STRICT is 1, true or yes.
    #[arg(long)]
    pub strict: bool,
}

#[derive(Subcommand)]
pub enum Command {
    /// Stored bytes → the JSON view: prints {"type": TAG, "value": VIEW}.
    Decode(commands::decode::DecodeArgs),
    /// {"type": TAG, "value": VIEW} → the stored bytes.
    Encode(commands::encode::EncodeArgs),
    /// Whole stores (sqlite:PATH, a file path, a postgres:// URL, or "host=… dbname=…"): audit, encrypt,
    /// rekey; with the sqlite and postgres features also stats, inspect, export, import,
    /// verify, copy, prune, retain, upgrade. Exit status 0 success, 1 findings, 2 fatal.
    ///
    /// audit tells what is encrypted under which key, encrypt encrypts what is in
    /// clear, rekey re-encrypts what is under a previous key; stats and inspect read a
    /// store, export and import back it up and restore it, verify checks a backup file,
    /// copy moves it between SQLite and Postgres, prune applies retention rules once and
    /// retain by a policy file as a service, upgrade brings an older layout to today's.
    /// Each command has an example below.
    #[cfg(any(feature = "sqlite", feature = "postgres"))]
    #[command(after_help = commands::store::EXAMPLES)]
    Store {
        #[command(subcommand)]
        command: commands::store::StoreCommand,
    },
    /// Keys for LANGGRAPH_AES_KEY: generate prints a new random key (32 characters,
    /// 192 bits, from the OS random source) and nothing else.
    #[command(after_help = commands::key::EXAMPLES)]
    Key {
        #[command(subcommand)]
        command: commands::key::KeyCommand,
    },
    /// Re-encrypts {"type": TAG, "data": BASE64} records (one per line) from the keys in
    /// LANGGRAPH_AES_KEY_PREVIOUS (or plaintext) to the primary LANGGRAPH_AES_KEY.
    /// A row that does not read back is refused, not encrypted blind.
    Rekey(commands::rekey::RekeyArgs),
}

// The exit statuses every command keeps, stated at the end of `lgcodec --help` and in
// docs/store-cli.md: 0 done, 1 findings or partial, 2 usage or fatal.

/// Exit status: something to look at (findings, or a partial result: a JSONL record
/// that failed, a sweep that left rows it could not do).
pub const FINDINGS: u8 = 1;

/// Exit status: a usage or fatal error (clap's own for a bad command line).
pub const FATAL: u8 = 2;

/// The store command run with `--json`, once it is known: its fatal errors then go to
/// standard output too, as the one JSON object the command would have printed.
static JSON_ERRORS: std::sync::OnceLock<&'static str> = std::sync::OnceLock::new();

/// From now on, a fatal error also prints `{"operation": OPERATION, "error": MESSAGE,
/// "kind": KIND}` on standard output (`kind`, the error's stable name, for the
/// library's errors), so a script reading `--json` gets an object either way.
#[cfg_attr(not(any(feature = "sqlite", feature = "postgres")), allow(dead_code))]
pub fn json_errors(operation: &'static str) {
    let _ = JSON_ERRORS.set(operation);
}

/// Exit status: standard output closed by its reader (`lgcodec … | head`), as a
/// process killed by SIGPIPE reports it (128 + 13).
pub const CLOSED_OUTPUT: u8 = 141;

/// Standard output's reader went away while a report was written line by line.
static CLOSED: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// A line of a report could not be written: dropped, and if its reader is gone the
/// command, once done, ends with [`CLOSED_OUTPUT`] ([`ended`]).
#[cfg_attr(not(any(feature = "sqlite", feature = "postgres")), allow(dead_code))]
pub fn unwritten(e: &std::io::Error) {
    if e.kind() == std::io::ErrorKind::BrokenPipe {
        CLOSED.store(true, std::sync::atomic::Ordering::Relaxed);
    }
}

/// The status a command ends with: its own, or [`CLOSED_OUTPUT`] when it finished
/// (not fatally) with lines of its report dropped for a reader gone.
pub fn ended(status: ExitCode) -> ExitCode {
    if CLOSED.load(std::sync::atomic::Ordering::Relaxed) && status != ExitCode::from(FATAL) {
        ExitCode::from(CLOSED_OUTPUT)
    } else {
        status
    }
}

/// A fatal error: what to say, and the library error's kind when it is one.
pub struct Fatal {
    message: String,
    kind: Option<&'static str>,
    /// Standard output's reader went away: nothing to say, [`CLOSED_OUTPUT`].
    closed_output: bool,
}

impl Fatal {
    /// Writing to standard output failed. Its reader gone (a broken pipe, as when
    /// `head` has read its lines), the command ends quietly with [`CLOSED_OUTPUT`], as
    /// a Unix tool killed by SIGPIPE does; any other failure (a full disk under a
    /// redirect) is said, and fatal.
    pub fn unwritable(e: &std::io::Error) -> Self {
        Fatal {
            message: format!("cannot write: {e}"),
            kind: None,
            closed_output: e.kind() == std::io::ErrorKind::BrokenPipe,
        }
    }
}

impl From<langgraph_codec::Error> for Fatal {
    fn from(e: langgraph_codec::Error) -> Self {
        Fatal {
            message: e.to_string(),
            kind: Some(e.kind().as_str()),
            closed_output: false,
        }
    }
}

impl From<String> for Fatal {
    fn from(message: String) -> Self {
        Fatal {
            message,
            kind: None,
            closed_output: false,
        }
    }
}

impl From<&str> for Fatal {
    fn from(message: &str) -> Self {
        message.to_owned().into()
    }
}

/// Says the error on standard error (and, after [`json_errors`], as JSON on standard
/// output) and gives the fatal exit status.
pub fn fatal(error: impl Into<Fatal>) -> ExitCode {
    let Fatal {
        message,
        kind,
        closed_output,
    } = error.into();
    if closed_output {
        return ExitCode::from(CLOSED_OUTPUT);
    }
    note!("lgcodec: {message}");
    if let Some(operation) = JSON_ERRORS.get() {
        let mut object = serde_json::json!({"operation": operation, "error": message});
        if let Some(kind) = kind {
            object["kind"] = kind.into();
        }
        // Not println!: a closed standard output must not turn the error into a panic.
        let _ = writeln!(std::io::stdout(), "{object}");
    }
    ExitCode::from(FATAL)
}
