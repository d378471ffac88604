//! `lgcodec decode`: stored bytes → the JSON view, one row or JSONL records.

use std::io::{self, Write};

use base64::engine::general_purpose::STANDARD as B64;
use base64::Engine as _;
use langgraph_codec::crypto::strict_from_env;
use langgraph_codec::records::{self, Answer, Failure, RowReader};
use langgraph_codec::TypedBytes;

use crate::cli::{Fatal, InputOptions, JsonlOptions, StrictOption};
use crate::rows::{a_database, batch, failure, read_input, warn_key};

#[derive(clap::Args)]
pub struct DecodeArgs {
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

/// Runs the command: whether every row was done, or the command's own error (see
/// [`status`](crate::rows::status)).
pub fn run(args: DecodeArgs) -> Result<bool, Fatal> {
    let DecodeArgs {
        type_tag,
        base64,
        jsonl,
        lines,
        input,
        strict,
        file,
    } = args;
    let reader = reader(&strict)?;
    if jsonl {
        return batch(&file, &lines, &|record| {
            decode_one(&reader, &record.data()?)
        });
    }
    let tag = type_tag.unwrap_or_default();
    let mut data = read_input(&file, input.max_input_bytes)?;
    // What to say if the bytes, as read, are a store's file and do not decode (as
    // `bytes` they do): `None` for any other input.
    let database = a_database(&file, &data);
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
                .map_err(|e| Fatal::unwritable(&e))?;
            Ok(true)
        }
        Ok(Answer::Data(_)) => Ok(true),
        Err(Failure { error, hint }) => Err(match hint {
            Some(hint) => format!("{error}\nhint: {hint}"),
            None => database.unwrap_or_else(|| error.to_string()),
        }
        .into()),
    }
}
