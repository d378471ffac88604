//! `lgcodec rekey`: JSONL records re-encrypted from previous keys (or plaintext) to the
//! primary key.

use langgraph_codec::compression::CompressedSerializer;
use langgraph_codec::crypto::{plaintext_refused, strict_from_env, EncryptedSerializer, KeyRing};
use langgraph_codec::records::Answer;
use langgraph_codec::JsonPlusSerializer;

use crate::cli::{Fatal, JsonlOptions};
use crate::rows::{batch, failure};

#[derive(clap::Args)]
pub struct RekeyArgs {
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
}

/// Runs the command: whether every row was done, or the command's own error (see
/// [`status`](crate::rows::status)).
pub fn run(args: RekeyArgs) -> Result<bool, Fatal> {
    // Over the `+zlib` wrapper, so compressed rows are read and stay compressed
    // (`msgpack+zlib` → `msgpack+zlib+aes`).
    let serde = EncryptedSerializer::new(
        KeyRing::from_env().map_err(|e| e.to_string())?,
        CompressedSerializer::new(JsonPlusSerializer::new()),
    );
    let strict = args.strict || strict_from_env().map_err(|e| e.to_string())?;
    batch(&args.file, &args.lines, &|record| {
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
