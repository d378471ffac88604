//! The flags that size and pace a store command's batches (`--batch-size`,
//! `--batch-bytes`, `--max-rows-per-sec`) are declared once, in
//! `src/bin/lgcodec/commands/store/batching.rs`, with one value check (a number of 1 or
//! more) and one conversion into the library's options; each command flattens them in
//! and words their help for its own unit. No command's `*Args` declares one of them
//! as a field of its own.
//!
//! The check reads `src/bin/lgcodec/` as text, comments and string literals left out.

use super::options_shape::{sources, structs_named};

/// The flags declared once, as the field names clap derives them from.
const SHARED_FLAGS: &[&str] = &["batch_size", "batch_bytes", "max_rows_per_sec"];

/// How many fields named `flag` with a numeric type (`u64`, `usize`, or an `Option`
/// of one) `code` declares.
fn declarations(code: &str, flag: &str) -> usize {
    let field = format!("{flag}: ");
    code.match_indices(&field)
        .filter(|(at, _)| {
            let before = code[..*at].chars().next_back();
            let ty = &code[at + field.len()..];
            let ty = ty.strip_prefix("Option<").unwrap_or(ty);
            before.is_none_or(|c| !(c.is_alphanumeric() || c == '_'))
                && (ty.starts_with("u64") || ty.starts_with("usize"))
        })
        .count()
}

#[test]
fn the_batching_and_pace_flags_are_declared_once_for_every_store_command() {
    let mut args_structs = 0;
    let mut declared = Vec::new();
    let mut problems = Vec::new();
    for (shown, code) in sources("src/bin/lgcodec") {
        args_structs += structs_named(&code, "Args").len();
        for flag in SHARED_FLAGS {
            for _ in 0..declarations(&code, flag) {
                if shown.ends_with("commands/store/batching.rs") {
                    declared.push((*flag).to_owned());
                } else {
                    problems.push(format!(
                        "{shown} declares `{flag}` itself: flatten batching.rs's instead"
                    ));
                }
            }
        }
    }
    // The reading finds the commands it checks (copy, import, prune, retain, the
    // sweeps, audit, export, …) and the one declaration of each flag.
    assert!(
        args_structs >= 10,
        "found only {args_structs} *Args structs"
    );
    declared.sort();
    let mut expected: Vec<String> = SHARED_FLAGS.iter().map(|f| (*f).to_owned()).collect();
    expected.sort();
    assert_eq!(declared, expected, "batching.rs declares each flag once");
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}
