//! The store operations' options have one shape: the settings they share (whether to
//! write, which threads, page and batch sizes, pace, reconnects, progress, the stop
//! flag) live in one struct (`RunOptions`, `src/store/options.rs`) that each
//! `*Options` holds, and their builders are written once, by its `run_setters!`. No operation keeps a field of its
//! own for a shared setting, nor writes a builder for one by hand.
//!
//! Their reports share one shape too: each names its `operation` and the seconds it
//! took as `elapsed_s`, as the CLI's `--json` prints them.
//!
//! The checks read `src/store/` as text, comments and string literals left out.

use std::fs;
use std::path::{Path, PathBuf};

/// The shared settings: `RunOptions`'s fields (`progress` is set by `on_progress`,
/// `stop` by `stop_flag`).
const SHARED: &[&str] = &[
    "dry_run",
    "vacuum",
    "threads",
    "page_size",
    "page_bytes",
    "batch_size",
    "batch_bytes",
    "max_rows_per_sec",
    "max_reconnects",
    "progress",
    "stop",
];

/// Options types with nothing shared to hold (`stats` reads one summary query's rows).
const WITHOUT_RUN: &[&str] = &["StatsOptions"];

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in fs::read_dir(dir).expect("read src/store").flatten() {
        let path = entry.path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// Each `pub struct Name… { … }` of `code` whose name ends with `suffix`: its name and
/// its field names.
pub(crate) fn structs_named(code: &str, suffix: &str) -> Vec<(String, Vec<String>)> {
    let mut found = Vec::new();
    let mut rest = code;
    while let Some(at) = rest.find("pub struct ") {
        let after = &rest[at + "pub struct ".len()..];
        let name: String = after
            .chars()
            .take_while(|c| c.is_alphanumeric() || *c == '_')
            .collect();
        rest = after;
        if !name.ends_with(suffix) {
            continue;
        }
        let Some(open) = after.find('{') else { break };
        let Some(close) = after[open..].find('}') else {
            break;
        };
        let body = &after[open + 1..open + close];
        let fields = body
            .split(',')
            .filter_map(|f| {
                let f = f.trim();
                let f = f.strip_prefix("pub(super) ").unwrap_or(f);
                let f = f.strip_prefix("pub(crate) ").unwrap_or(f);
                let f = f.strip_prefix("pub ").unwrap_or(f);
                f.split_once(':').map(|(n, _)| n.trim().to_owned())
            })
            .filter(|n| !n.is_empty())
            .collect();
        found.push((name, fields));
    }
    found
}

/// Each Rust file under `dir` (a path from the crate root), as that path, with its
/// code, comments and string literals left out.
pub(crate) fn sources(dir: &str) -> Vec<(String, String)> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = Vec::new();
    rust_files(&root.join(dir), &mut files);
    files.sort();
    files
        .iter()
        .map(|file| {
            let shown = file
                .strip_prefix(root)
                .unwrap_or(file)
                .display()
                .to_string();
            let code = super::layers::strip(&fs::read_to_string(file).expect("read"));
            (shown, code)
        })
        .collect()
}

#[test]
fn every_store_options_type_holds_the_shared_settings_in_one_struct_set_by_one_macro() {
    let mut structs = 0;
    let mut problems = Vec::new();
    for (shown, code) in sources("src/store") {
        if shown.ends_with("store/options.rs") {
            continue;
        }
        for (name, fields) in structs_named(&code, "Options") {
            structs += 1;
            if WITHOUT_RUN.contains(&name.as_str()) {
                continue;
            }
            if !fields.iter().any(|f| f == "run") {
                problems.push(format!("{shown}: {name} holds no `run: RunOptions`"));
            }
            for f in &fields {
                if SHARED.contains(&f.as_str()) {
                    problems.push(format!(
                        "{shown}: {name} keeps `{f}` itself: it belongs in RunOptions"
                    ));
                }
            }
        }
        for setting in SHARED {
            let setter = match *setting {
                "progress" => "on_progress".to_owned(),
                "stop" => "stop_flag".to_owned(),
                other => other.to_owned(),
            };
            if code.contains(&format!("pub fn {setter}(mut self")) {
                problems.push(format!(
                    "{shown}: writes `{setter}` by hand: list it in the type's run_setters!"
                ));
            }
        }
    }
    // The reading finds the types it checks: copy, export, import, audit, prune,
    // retain, sweep, upgrade and stats.
    assert!(structs >= 9, "found only {structs} options types");
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

/// Reports that are a part of another report, not an operation's own.
const PART_OF_A_REPORT: &[&str] = &["VacuumReport"];

#[test]
fn every_store_report_names_its_operation_and_its_seconds_alike() {
    let mut reports = 0;
    let mut problems = Vec::new();
    for (shown, code) in sources("src/store") {
        for (name, fields) in structs_named(&code, "Report") {
            if PART_OF_A_REPORT.contains(&name.as_str()) {
                continue;
            }
            reports += 1;
            for field in ["operation", "elapsed_s"] {
                if !fields.iter().any(|f| f == field) {
                    problems.push(format!("{shown}: {name} has no `{field}`"));
                }
            }
        }
    }
    // The reading finds the reports it checks: audit, sweep, copy, export, import,
    // prune, retain and upgrade.
    assert!(reports >= 8, "found only {reports} reports");
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}
