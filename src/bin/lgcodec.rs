//! `lgcodec`: decode and encode LangGraph checkpoint rows from the command line.
//!
//! A thin shell over [`langgraph_codec::records`]; the formats are described in
//! `docs/interop.md` ("The `lgcodec` command").

use std::io::{self, Read, Write};
use std::process::ExitCode;

use base64::engine::general_purpose::STANDARD as B64;
use base64::Engine as _;
use clap::{Parser, Subcommand};
use langgraph_codec::compression::CompressedSerializer;
use langgraph_codec::crypto::{plaintext_refused, strict_from_env, EncryptedSerializer, KeyRing};
use langgraph_codec::records::{self, Answer, BatchSummary, Failure, Record, RowReader};
use langgraph_codec::{Error, JsonPlusSerializer, TypedBytes};

#[path = "lgcodec/key.rs"]
mod key;
#[cfg(any(feature = "sqlite", feature = "postgres"))]
#[path = "lgcodec/store.rs"]
mod store;

/// The last line of `lgcodec --help`: where the store commands are (none in a build
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
fields; a failed record answers {\"error\": {\"kind\", \"message\", \"hint\"}} and the exit
status is 1.",
    store_note!()
);

#[derive(Parser)]
#[command(
    name = "lgcodec",
    version,
    about = "Read and write LangGraph checkpoint rows exactly as Python LangGraph does",
    after_help = EXAMPLES
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(clap::Args)]
struct JsonlOptions {
    /// Longest JSONL input line accepted, in bytes; a longer line is answered with a
    /// line_too_long error and skipped.
    #[arg(long, default_value_t = records::DEFAULT_MAX_LINE_BYTES, value_name = "BYTES")]
    max_line_bytes: usize,
}

#[derive(clap::Args)]
struct InputOptions {
    /// Most bytes read from the input (without --jsonl, the whole input is one row);
    /// past it the command stops with an error.
    #[arg(long, default_value_t = records::DEFAULT_MAX_LINE_BYTES, value_name = "BYTES")]
    max_input_bytes: usize,
}

#[derive(clap::Args)]
struct StrictOption {
    /// Strict mode: refuse rows that are not encrypted (plaintext_refused). Also on when
    /// LANGGRAPH_AES_STRICT is 1, true or yes.
    #[arg(long)]
    strict: bool,
}

#[derive(Subcommand)]
enum Command {
    /// Stored bytes → the JSON view: prints {"type": TAG, "value": VIEW}.
    Decode {
        /// The row's type tag: null, bytes, bytearray, msgpack, json or empty, optionally
        /// followed by +zlib and/or +aes. Not used with --jsonl.
        #[arg(long = "type", required_unless_present = "jsonl")]
        type_tag: Option<String>,
        /// The input is base64 text of the stored bytes.
        #[arg(long, conflicts_with = "jsonl")]
        base64: bool,
        /// One {"type": TAG, "data": BASE64} record per input line; answers in input order.
        #[arg(long)]
        jsonl: bool,
        #[command(flatten)]
        lines: JsonlOptions,
        #[command(flatten)]
        input: InputOptions,
        #[command(flatten)]
        strict: StrictOption,
        /// Input file, or - for standard input.
        #[arg(default_value = "-")]
        file: String,
    },
    /// {"type": TAG, "value": VIEW} → the stored bytes.
    Encode {
        /// Encrypt with the key in LANGGRAPH_AES_KEY (tag becomes TAG+aes).
        #[arg(long)]
        encrypt: bool,
        /// Write base64 text instead of raw bytes.
        #[arg(long)]
        base64: bool,
        /// One value record per input line; answers {"type": TAG, "data": BASE64} lines.
        #[arg(long)]
        jsonl: bool,
        #[command(flatten)]
        lines: JsonlOptions,
        #[command(flatten)]
        input: InputOptions,
        /// Input file, or - for standard input.
        #[arg(default_value = "-")]
        file: String,
    },
    /// Whole stores (sqlite:PATH, a file path, or a postgres:// URL): audit, encrypt,
    /// rekey; with the sqlite and postgres features also stats, inspect, export, import,
    /// copy, prune, upgrade. Exit status 0 success, 1 findings, 2 fatal.
    ///
    /// audit tells what is encrypted under which key, encrypt encrypts what is in
    /// clear, rekey re-encrypts what is under a previous key; stats and inspect read a
    /// store, export and import back it up and restore it, copy moves it between SQLite
    /// and Postgres, prune applies retention rules, upgrade brings an older layout to
    /// today's. Each command has an example below.
    #[cfg(any(feature = "sqlite", feature = "postgres"))]
    #[command(after_help = store::EXAMPLES)]
    Store {
        #[command(subcommand)]
        command: store::StoreCommand,
    },
    /// Keys for LANGGRAPH_AES_KEY: generate prints a new random key (32 characters,
    /// 192 bits, from the OS random source) and nothing else.
    #[command(after_help = key::EXAMPLES)]
    Key {
        #[command(subcommand)]
        command: key::KeyCommand,
    },
    /// Re-encrypts {"type": TAG, "data": BASE64} records (one per line) from the keys in
    /// LANGGRAPH_AES_KEY_PREVIOUS (or plaintext) to the primary LANGGRAPH_AES_KEY.
    /// A row that does not read back is refused, not encrypted blind.
    Rekey {
        /// Accepted for symmetry: rekey always reads JSONL.
        #[arg(long)]
        jsonl: bool,
        #[command(flatten)]
        lines: JsonlOptions,
        /// Strict mode: refuse plaintext rows instead of encrypting them (only rows
        /// already encrypted are re-encrypted). Also on when LANGGRAPH_AES_STRICT is 1,
        /// true or yes.
        #[arg(long)]
        strict: bool,
        /// Input file, or - for standard input.
        #[arg(default_value = "-")]
        file: String,
    },
}

/// An error of the command itself, with the file it concerns.
fn io_context(file: &str, e: io::Error) -> String {
    if file == "-" {
        format!("cannot read standard input: {e}")
    } else {
        format!("cannot read {file}: {e}")
    }
}

/// The whole input, at most `cap` bytes: more is an error, not read on.
fn read_input(file: &str, cap: usize) -> Result<Vec<u8>, String> {
    let source: Box<dyn Read> = if file == "-" {
        Box::new(io::stdin().lock())
    } else {
        Box::new(std::fs::File::open(file).map_err(|e| io_context(file, e))?)
    };
    let mut buf = Vec::new();
    let limit = u64::try_from(cap).unwrap_or(u64::MAX).saturating_add(1);
    source
        .take(limit)
        .read_to_end(&mut buf)
        .map_err(|e| io_context(file, e))?;
    if buf.len() > cap {
        let name = if file == "-" { "standard input" } else { file };
        return Err(format!(
            "{name} is more than {cap} bytes (the --max-input-bytes limit): raise \
             --max-input-bytes to read it, or give one row per line with --jsonl"
        ));
    }
    Ok(buf)
}

fn open_input(file: &str) -> Result<Box<dyn io::BufRead>, String> {
    Ok(if file == "-" {
        Box::new(io::BufReader::new(io::stdin()))
    } else {
        Box::new(io::BufReader::new(
            std::fs::File::open(file).map_err(|e| io_context(file, e))?,
        ))
    })
}

/// Answers every record of `file`; whether all succeeded.
fn batch(
    file: &str,
    lines: &JsonlOptions,
    answer: &dyn Fn(&Record) -> Result<Answer, Failure>,
) -> Result<bool, String> {
    let input = open_input(file)?;
    let stdout = io::stdout();
    let mut out = io::BufWriter::new(stdout.lock());
    let summary = records::run_jsonl(input, &mut out, lines.max_line_bytes, answer)
        .map_err(|e| format!("{file}: {e}"))?;
    report(&summary);
    Ok(summary.failed == 0)
}

fn report(s: &BatchSummary) {
    if s.failed > 0 || s.blank > 0 {
        eprintln!(
            "lgcodec: {} record(s), {} failed, {} blank line(s) skipped",
            s.records, s.failed, s.blank
        );
    }
}

fn warn_key(reader: &RowReader) {
    if let Some(problem) = reader.key_problem() {
        eprintln!("lgcodec: warning: {problem}; only unencrypted rows can be read");
    }
}

/// A failed record, with advice when there is some.
fn failure(error: Error, type_tag: &str, data: &[u8]) -> Failure {
    let hint = records::hint(&error, type_tag, data);
    Failure { error, hint }
}

fn decode_one(reader: &RowReader, typed: &TypedBytes) -> Result<Answer, Failure> {
    let value = reader
        .loads(&typed.type_tag, &typed.data)
        .map_err(|e| failure(e, &typed.type_tag, &typed.data))?;
    Ok(Answer::Value(
        records::inner_tag(&typed.type_tag).to_owned(),
        value,
    ))
}

/// The reader for `decode`: keys from the environment, strict mode from `--strict` or
/// `LANGGRAPH_AES_STRICT`.
fn reader(strict: &StrictOption) -> Result<RowReader, String> {
    let strict = strict.strict || strict_from_env().map_err(|e| e.to_string())?;
    let reader = RowReader::from_env().with_strict(strict);
    warn_key(&reader);
    Ok(reader)
}

fn run(cli: Cli) -> Result<bool, String> {
    let text = |e: Error| e.to_string();
    match cli.command {
        Command::Decode {
            jsonl: true,
            file,
            lines,
            strict,
            ..
        } => {
            let reader = reader(&strict)?;
            batch(&file, &lines, &|record| {
                decode_one(&reader, &record.data()?)
            })
        }
        Command::Decode {
            type_tag,
            base64,
            file,
            input,
            strict,
            ..
        } => {
            let reader = reader(&strict)?;
            let tag = type_tag.unwrap_or_default();
            let mut data = read_input(&file, input.max_input_bytes)?;
            if base64 {
                data = B64
                    .decode(data.trim_ascii())
                    .map_err(|e| format!("{file}: not valid base64 text: {e}"))?;
            }
            match decode_one(&reader, &TypedBytes::new(tag, data)) {
                Ok(Answer::Value(tag, value)) => {
                    let mut out = io::stdout().lock();
                    records::write_value_record(&mut out, &tag, &value, true)
                        .and_then(|()| writeln!(out))
                        .map_err(|e| format!("cannot write: {e}"))?;
                    Ok(true)
                }
                Ok(Answer::Data(_)) => Ok(true),
                Err(Failure { error, hint }) => Err(match hint {
                    Some(hint) => format!("{error}\nhint: {hint}"),
                    None => error.to_string(),
                }),
            }
        }
        Command::Encode {
            encrypt,
            jsonl,
            base64,
            file,
            lines,
            input,
        } => {
            let cipher = if encrypt {
                Some(EncryptedSerializer::from_env().map_err(|e| e.to_string())?)
            } else {
                None
            };
            let wrap = |t: TypedBytes| -> Result<TypedBytes, Error> {
                match &cipher {
                    Some(c) => Ok(c.encrypt_typed(&t, b"")?),
                    None => Ok(t),
                }
            };
            if jsonl {
                return batch(&file, &lines, &|record| {
                    let (tag, value) = record.value()?;
                    Ok(Answer::Data(wrap(records::encode_value(&tag, &value)?)?))
                });
            }
            let input = String::from_utf8(read_input(&file, input.max_input_bytes)?)
                .map_err(|e| format!("{file}: not UTF-8 text: {}", e.utf8_error()))?;
            let typed = records::encode_value_record(&input)
                .and_then(wrap)
                .map_err(text)?;
            let mut out = io::stdout().lock();
            let written = if base64 {
                writeln!(out, "{}", B64.encode(&typed.data))
            } else {
                out.write_all(&typed.data)
            };
            written
                .and_then(|()| out.flush())
                .map_err(|e| format!("cannot write: {e}"))?;
            Ok(true)
        }
        #[cfg(any(feature = "sqlite", feature = "postgres"))]
        Command::Store { .. } => Err("store commands are run by main".to_owned()),
        Command::Key { .. } => Err("key commands are run by main".to_owned()),
        Command::Rekey {
            file,
            lines,
            strict,
            ..
        } => {
            // Over the `+zlib` wrapper, so compressed rows are read and stay compressed
            // (`msgpack+zlib` → `msgpack+zlib+aes`).
            let serde = EncryptedSerializer::new(
                KeyRing::from_env().map_err(|e| e.to_string())?,
                CompressedSerializer::new(JsonPlusSerializer::new()),
            );
            let strict = strict || strict_from_env().map_err(|e| e.to_string())?;
            batch(&file, &lines, &|record| {
                let typed = record.data()?;
                if strict && !typed.type_tag.ends_with("+aes") && typed.type_tag != "empty" {
                    let refused = plaintext_refused(&typed.type_tag);
                    return Err(failure(refused, &typed.type_tag, &typed.data));
                }
                serde
                    .rekey(&typed)
                    .map(Answer::Data)
                    .map_err(|e| failure(e, &typed.type_tag, &typed.data))
            })
        }
    }
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let cli = match cli.command {
        Command::Key { command } => return key::run(command),
        command => Cli { command },
    };
    #[cfg(any(feature = "sqlite", feature = "postgres"))]
    let cli = match cli.command {
        Command::Store { command } => return store::run(command),
        command => Cli { command },
    };
    match run(cli) {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::FAILURE,
        Err(message) => {
            eprintln!("lgcodec: {message}");
            ExitCode::FAILURE
        }
    }
}
