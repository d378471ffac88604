//! `lgcodec`: decode and encode LangGraph checkpoint rows from the command line.
//!
//! A thin shell over [`langgraph_codec::records`]; see the README for the formats.

use std::io::{self, BufRead, Read, Write};
use std::process::ExitCode;

use clap::{Parser, Subcommand};
use langgraph_codec::crypto::EncryptedSerializer;
use langgraph_codec::records;
use langgraph_codec::{Error, JsonPlusSerializer, Serializer, TypedBytes};

#[derive(Parser)]
#[command(
    name = "lgcodec",
    version,
    about = "Read and write LangGraph checkpoint rows exactly as Python LangGraph does"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Stored bytes → the JSON view: prints {"type": TAG, "value": VIEW}.
    Decode {
        /// The row's type tag (msgpack, json, bytes, bytearray, null, ...). Not used with --jsonl.
        #[arg(long = "type", required_unless_present = "jsonl")]
        type_tag: Option<String>,
        /// One {"type": TAG, "data": BASE64} record per input line; answers in input order.
        #[arg(long)]
        jsonl: bool,
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
        /// Input file, or - for standard input.
        #[arg(default_value = "-")]
        file: String,
    },
    /// Re-encrypts {"type": TAG, "data": BASE64} records (one per line) from the keys in
    /// LANGGRAPH_AES_KEY_PREVIOUS (or plaintext) to the primary LANGGRAPH_AES_KEY.
    Rekey {
        /// One record per line (the only format rekey reads).
        #[arg(long)]
        jsonl: bool,
        /// Input file, or - for standard input.
        #[arg(default_value = "-")]
        file: String,
    },
}

/// The reading serializer: decrypting (key ring from the environment) when
/// LANGGRAPH_AES_KEY is set, plain JsonPlus otherwise.
fn reader() -> Result<Box<dyn Serializer>, Error> {
    if std::env::var_os("LANGGRAPH_AES_KEY").is_some() {
        Ok(Box::new(EncryptedSerializer::from_env()?))
    } else {
        Ok(Box::new(JsonPlusSerializer::new()))
    }
}

fn read_input(file: &str) -> io::Result<Vec<u8>> {
    let mut buf = Vec::new();
    if file == "-" {
        io::stdin().lock().read_to_end(&mut buf)?;
    } else {
        buf = std::fs::read(file)?;
    }
    Ok(buf)
}

fn open_lines(file: &str) -> io::Result<Box<dyn BufRead>> {
    Ok(if file == "-" {
        Box::new(io::BufReader::new(io::stdin()))
    } else {
        Box::new(io::BufReader::new(std::fs::File::open(file)?))
    })
}

/// Runs `each` on every non-empty line, writing its answer or an error record; returns
/// whether every record succeeded.
fn batch(file: &str, each: impl Fn(&str) -> Result<String, Error>) -> io::Result<bool> {
    let mut ok = true;
    let out = io::stdout();
    let mut out = io::BufWriter::new(out.lock());
    for line in open_lines(file)?.lines() {
        let line = line?;
        if line.trim().is_empty() {
            continue;
        }
        match each(&line) {
            Ok(answer) => writeln!(out, "{answer}")?,
            Err(e) => {
                ok = false;
                writeln!(out, "{}", records::error_record(&e))?;
            }
        }
    }
    out.flush()?;
    Ok(ok)
}

fn run(cli: Cli) -> Result<bool, Box<dyn std::error::Error>> {
    match cli.command {
        Command::Decode {
            jsonl: true, file, ..
        } => {
            let serde = reader()?;
            Ok(batch(&file, |line| records::decode_record(&*serde, line))?)
        }
        Command::Decode { type_tag, file, .. } => {
            let serde = reader()?;
            let tag = type_tag.unwrap_or_default();
            let data = read_input(&file)?;
            let value = serde.loads_typed(&tag, &data)?;
            println!(
                "{}",
                records::value_record_string(records::inner_tag(&tag), &value, true)
            );
            Ok(true)
        }
        Command::Encode {
            encrypt,
            jsonl,
            base64,
            file,
        } => {
            let cipher = if encrypt {
                Some(EncryptedSerializer::from_env()?)
            } else {
                None
            };
            let wrap = |t: TypedBytes| -> Result<TypedBytes, Error> {
                match &cipher {
                    Some(c) => c.encrypt_typed(&t, b""),
                    None => Ok(t),
                }
            };
            if jsonl {
                return Ok(batch(&file, |line| records::encode_record(line, &wrap))?);
            }
            let text = String::from_utf8(read_input(&file)?)?;
            let typed = wrap(records::encode_value_record(&text)?)?;
            let mut out = io::stdout().lock();
            if base64 {
                use base64::Engine as _;
                writeln!(
                    out,
                    "{}",
                    base64::engine::general_purpose::STANDARD.encode(&typed.data)
                )?;
            } else {
                out.write_all(&typed.data)?;
            }
            out.flush()?;
            Ok(true)
        }
        Command::Rekey { jsonl, file } => {
            if !jsonl {
                return Err("rekey reads --jsonl records only".into());
            }
            let serde = EncryptedSerializer::from_env()?;
            Ok(batch(&file, |line| {
                let typed = records::parse_data_record(line)?;
                Ok(records::data_record(&serde.rekey(&typed)?).to_string())
            })?)
        }
    }
}

fn main() -> ExitCode {
    match run(Cli::parse()) {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::FAILURE,
        Err(e) => {
            eprintln!("lgcodec: {e}");
            ExitCode::FAILURE
        }
    }
}
