//! Rows in and out for `decode`, `encode` and `rekey`: the whole input as one row, or
//! one JSONL record per line answered in input order, and how a run of them ends.

use std::io::{self, Read};
use std::process::ExitCode;

use langgraph_codec::records::{self, Answer, BatchSummary, Failure, Record, RowReader};
use langgraph_codec::Error;

use crate::cli::{fatal, Fatal, JsonlOptions, FINDINGS};

/// An error of the command itself, with the file it concerns.
fn io_context(file: &str, e: io::Error) -> String {
    if file == "-" {
        format!("cannot read standard input: {e}")
    } else {
        format!("cannot read {file}: {e}")
    }
}

/// The whole input, at most `cap` bytes: more is an error, not read on.
pub fn read_input(file: &str, cap: usize) -> Result<Vec<u8>, String> {
    let source: Box<dyn Read> = if file == "-" {
        Box::new(io::stdin().lock())
    } else {
        Box::new(std::fs::File::open(file).map_err(|e| io_context(file, e))?)
    };
    read_capped(source, cap)
        .map_err(|e| io_context(file, e))?
        .ok_or_else(|| {
            let name = if file == "-" { "standard input" } else { file };
            format!(
                "{name} is more than {cap} bytes (the --max-input-bytes limit): raise \
                 --max-input-bytes to read it, or give one row per line with --jsonl"
            )
        })
}

/// All of `source` when it holds at most `cap` bytes; `None` when it holds more, read
/// no further than one byte past `cap`.
pub fn read_capped(source: impl Read, cap: usize) -> io::Result<Option<Vec<u8>>> {
    let mut buf = Vec::new();
    let limit = u64::try_from(cap).unwrap_or(u64::MAX).saturating_add(1);
    source.take(limit).read_to_end(&mut buf)?;
    Ok((buf.len() <= cap).then_some(buf))
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
pub fn batch(
    file: &str,
    lines: &JsonlOptions,
    answer: &dyn Fn(&Record) -> Result<Answer, Failure>,
) -> Result<bool, Fatal> {
    let mut input = open_input(file)?;
    refuse_a_backup(file, input.as_mut())?;
    let stdout = io::stdout();
    let mut out = io::BufWriter::new(stdout.lock());
    let summary = records::run_jsonl(input, &mut out, lines.max_line_bytes, answer).map_err(
        // Reading standard input or a file never breaks a pipe: writing the answers did.
        |e| match e.kind() {
            io::ErrorKind::BrokenPipe => Fatal::unwritable(&e),
            _ => format!("{file}: {e}").into(),
        },
    )?;
    report(&summary);
    Ok(summary.failed == 0)
}

/// A SQLite database (a checkpoint store) given where a row or rows go (`decode --type
/// msgpack checkpoints.db`): said to be one, with the commands that read a store. It
/// failed as a value ("53247 trailing byte(s) after the msgpack value") or line by line.
pub fn a_database(file: &str, head: &[u8]) -> Option<String> {
    if !head.starts_with(langgraph_codec::saver::layout::SQLITE_HEADER) {
        return None;
    }
    let name = if file == "-" { "standard input" } else { file };
    let file = if file == "-" { "STORE" } else { file };
    Some(format!(
        "{name} is a SQLite database (a checkpoint store?), not stored rows: `lgcodec store inspect {file}` lists its threads (`--thread T --checkpoint ID` shows a checkpoint's state) and `lgcodec store rekey {file}` re-encrypts it in place"
    ))
}

/// A store backup given where rows go (`decode --jsonl backup.jsonl`) is said to be
/// one, with the commands that read it, rather than failing each line for a missing
/// `type`; so is a SQLite database.
fn refuse_a_backup(file: &str, input: &mut dyn io::BufRead) -> Result<(), String> {
    let head = input.fill_buf().map_err(|e| io_context(file, e))?;
    if let Some(said) = a_database(file, head) {
        return Err(said);
    }
    #[cfg(all(feature = "sqlite", feature = "postgres"))]
    if langgraph_codec::store::begins_a_backup(head) {
        let name = if file == "-" { "standard input" } else { file };
        let file = if file == "-" { "FILE" } else { file };
        return Err(format!(
            "{name} is a store backup (`lgcodec store export` wrote it), not rows of (type, bytes): `lgcodec store verify {file}` checks it, and `lgcodec store import {file} STORE` restores it into a store"
        ));
    }
    Ok(())
}

fn report(s: &BatchSummary) {
    if s.failed > 0 || s.blank > 0 {
        note!(
            "lgcodec: {} record(s), {} failed, {} blank line(s) skipped",
            s.records,
            s.failed,
            s.blank
        );
    }
}

/// Warns when the keys in the environment cannot be used (only unencrypted rows read).
pub fn warn_key(reader: &RowReader) {
    if let Some(problem) = reader.key_problem() {
        note!("lgcodec: warning: {problem}; only unencrypted rows can be read");
    }
}

/// A failed record, with advice when there is some.
pub fn failure(error: Error, type_tag: &str, data: &[u8]) -> Failure {
    let hint = records::hint(&error, type_tag, data);
    Failure { error, hint }
}

/// The exit status of a row command: 0 every row done, 1 some JSONL record failed (each
/// answered with its error, the others done), 2 the command's own error (nothing
/// done: an input that cannot be read, a single row that does not decode or encode, a
/// key that cannot be used).
pub fn status(result: Result<bool, Fatal>) -> ExitCode {
    match result {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::from(FINDINGS),
        Err(message) => fatal(message),
    }
}
