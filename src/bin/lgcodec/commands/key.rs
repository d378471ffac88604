//! `lgcodec key COMMAND`: keys for `LANGGRAPH_AES_KEY`. One command, `generate`.
//! Exit status: 0 success, 2 usage or fatal error.

use std::io::Write;
use std::process::ExitCode;

use clap::Subcommand;
use langgraph_codec::crypto::{generate_key, KEY_ALPHABET, KEY_BITS_PER_CHAR};

use crate::cli::{fatal, Fatal};

/// The `lgcodec key --help` examples.
pub const EXAMPLES: &str = "\
Examples (paste them):
  $ lgcodec key generate
  $ export LANGGRAPH_AES_KEY=\"$(lgcodec key generate)\"
  $ lgcodec key generate --bytes 16
  $ lgcodec key generate --json

A key is 32 characters (--bytes 16, 24 or 32) drawn uniformly by the OS random source
from A-Z a-z 0-9 - _ (64 symbols: 6 bits each, 192 bits for 32 characters). Python reads
LANGGRAPH_AES_KEY as the UTF-8 bytes of its text, so 32 characters are an AES-256 key.
Only the key and a newline go to standard output (--json: one JSON object); nothing
goes to standard error unless it fails. Exit status: 0 success, 2 usage or fatal error.
The same keys from Python: langgraph_codec_keys.generate_key(32).";

#[derive(Subcommand)]
pub enum KeyCommand {
    /// Print a new random key for LANGGRAPH_AES_KEY (32 characters of A-Z a-z 0-9 - _,
    /// 192 bits, from the OS random source) and a newline, nothing else.
    #[command(after_help = EXAMPLES)]
    Generate {
        /// The key's length in bytes, which is its length in characters: 16 (AES-128),
        /// 24 (AES-192) or 32 (AES-256).
        #[arg(long, default_value = "32", value_parser = ["16", "24", "32"])]
        bytes: String,
        /// Print {"key", "bytes", "entropy_bits", "bits_per_character", "alphabet"} as
        /// one JSON object.
        #[arg(long)]
        json: bool,
    },
}

pub fn run(command: KeyCommand) -> ExitCode {
    match command {
        KeyCommand::Generate { bytes, json } => {
            let len = match bytes.parse::<usize>() {
                Ok(n) => n,
                Err(e) => return fatal(format!("--bytes {bytes}: {e}")),
            };
            let key = match generate_key(len) {
                Ok(k) => k,
                Err(e) => return fatal(e),
            };
            let mut out = std::io::stdout().lock();
            // The key's characters need no escaping in JSON: written straight out, with
            // no copy of the key left behind in a JSON value.
            let written = if json {
                writeln!(
                    out,
                    "{{\"key\": \"{}\", \"bytes\": {}, \"entropy_bits\": {}, \"bits_per_character\": {KEY_BITS_PER_CHAR}, \"alphabet\": \"{KEY_ALPHABET}\"}}",
                    key.as_str(),
                    key.len(),
                    key.entropy_bits(),
                )
            } else {
                writeln!(out, "{}", key.as_str())
            };
            match written.and_then(|()| out.flush()) {
                Ok(()) => ExitCode::SUCCESS,
                Err(e) => fatal(Fatal::unwritable(&e)),
            }
        }
    }
}
