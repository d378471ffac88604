//! `lgcodec store verify`: a backup file checked without a store; and reading backup
//! files, which `import` shares.

use std::process::ExitCode;

use clap::Args;
use langgraph_codec::store;

use crate::cli::{fatal, FINDINGS};
use crate::human;
use crate::output::finish;

#[derive(Args)]
pub struct VerifyArgs {
    /// The backup file to check (- for standard input).
    #[arg(value_parser = super::a_path)]
    pub file: String,
    /// Print the report as one JSON object.
    #[arg(long)]
    pub json: bool,
}

/// The backup file `name` (or standard input for `-`), buffered, read out of the page
/// cache ([`DropBehind`](crate::drop_behind::DropBehind)).
pub(super) fn backup_input(name: &str) -> Result<Box<dyn std::io::BufRead>, ExitCode> {
    if name == "-" {
        return Ok(Box::new(std::io::BufReader::new(std::io::stdin().lock())));
    }
    super::not_a_store(name, false).map_err(fatal)?;
    match std::fs::File::open(name) {
        Ok(f) => Ok(Box::new(std::io::BufReader::new(
            crate::drop_behind::DropBehind::new(f),
        ))),
        Err(e) => Err(fatal(format!("cannot open {name}: {e}"))),
    }
}

/// How a backup file ended, for a summary line: nothing when whole.
pub(super) fn cut_note(cut_short: Option<&str>, complete: bool, before: &str) -> String {
    match (cut_short, complete) {
        (_, true) => String::new(),
        (Some(at), false) => {
            format!("; THE FILE WAS CUT SHORT at {at}: the rows before it {before}")
        }
        (None, false) => "; THE FILE WAS CUT SHORT (no end line)".to_owned(),
    }
}

pub async fn run(args: VerifyArgs) -> ExitCode {
    let mut input = match backup_input(&args.file) {
        Ok(i) => i,
        Err(code) => return code,
    };
    match store::verify_backup(&mut input, &args.file, None) {
        Ok(r) => {
            let summary = format!(
                "lgcodec store verify: {}: a {} backup ({}), {} checkpoint(s), {} blob(s), {} write(s){}{}{} ({:.1} s)",
                r.file,
                r.backend,
                r.layout,
                human::count(r.checkpoints),
                human::count(r.blobs),
                human::count(r.writes),
                match &r.threads {
                    Some(t) => format!(", threads {}", t.join(", ")),
                    None => String::new(),
                },
                human::left_out(&r.excluded_threads),
                match cut_note(r.cut_short.as_deref(), r.complete, "are whole") {
                    n if n.is_empty() => "; whole: every line parses, the end line's counts match".to_owned(),
                    n => n,
                },
                r.elapsed_s
            );
            let status = if r.complete {
                ExitCode::SUCCESS
            } else {
                ExitCode::from(FINDINGS)
            };
            finish(args.json, &r, |_| {}, [summary], status)
        }
        Err(e) => fatal(e),
    }
}
