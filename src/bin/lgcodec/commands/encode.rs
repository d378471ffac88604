//! `lgcodec encode`: `{"type": TAG, "value": VIEW}` → the stored bytes, optionally
//! encrypted, one row or JSONL records.

use std::io::{self, Write};

use base64::engine::general_purpose::STANDARD as B64;
use base64::Engine as _;
use langgraph_codec::crypto::EncryptedSerializer;
use langgraph_codec::records::{self, Answer};
use langgraph_codec::{Error, TypedBytes};

use crate::cli::{Fatal, InputOptions, JsonlOptions};
use crate::rows::{batch, read_input};

#[derive(clap::Args)]
pub struct EncodeArgs {
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
}

/// Runs the command: whether every row was done, or the command's own error (see
/// [`status`](crate::rows::status)).
pub fn run(args: EncodeArgs) -> Result<bool, Fatal> {
    let EncodeArgs {
        encrypt,
        base64,
        jsonl,
        lines,
        input,
        file,
    } = args;
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
        .map_err(|e| e.to_string())?;
    let mut out = io::stdout().lock();
    let written = if base64 {
        writeln!(out, "{}", B64.encode(&typed.data))
    } else {
        out.write_all(&typed.data)
    };
    written
        .and_then(|()| out.flush())
        .map_err(|e| Fatal::unwritable(&e))?;
    Ok(true)
}
