//! Every store operation runs its batches on the one engine (`Engine`,
//! `src/store/engine.rs`): the stop at a batch boundary, the pace, the progress
//! reports, and redoing a batch after a lost connection are reached through it, never
//! by an operation on its own. The
//! engine is built from the settings' parts (`options.rs`: `RunOptions`, `Throttle`,
//! `Progress`; `retry.rs`: `Retry`), and nothing else touches those parts directly.
//!
//! The check reads `src/store/` as text, comments and string literals left out.

use std::fs;
use std::path::{Path, PathBuf};

use super::layers::{rust_files, strip};

/// Where the engine and its parts are written.
const THE_ENGINE: &[&str] = &["engine.rs", "options.rs", "retry.rs"];

/// What an operation pacing, reporting or reconnecting by itself would write.
const BY_HAND: &[&str] = &[
    ".throttle()",
    "Throttle::new",
    "Progress {",
    ".report(&",
    "run.retry()",
    "Retry::new",
    ".recover(&mut",
    ".recover(retry",
    ".stopped()",
];

/// The operations' drivers, each holding an engine.
const DRIVERS: &[&str] = &[
    "ops.rs",
    "sweep.rs",
    "pages.rs",
    "import.rs",
    "copy.rs",
    "export.rs",
];

fn store_files() -> Vec<(String, String)> {
    let store = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/store");
    let mut files: Vec<PathBuf> = Vec::new();
    rust_files(&store, &mut files);
    files.sort();
    files
        .into_iter()
        .map(|f| {
            let rel = f
                .strip_prefix(&store)
                .expect("below src/store")
                .display()
                .to_string();
            (rel, strip(&fs::read_to_string(&f).expect("a store module")))
        })
        .collect()
}

/// Each use of a part of the engine outside it, as `file: pattern`.
fn by_hand(files: &[(String, String)]) -> Vec<String> {
    let mut found = Vec::new();
    for (rel, code) in files {
        if THE_ENGINE.contains(&rel.as_str()) {
            continue;
        }
        for pattern in BY_HAND {
            if code.contains(pattern) {
                found.push(format!("{rel}: {pattern}"));
            }
        }
    }
    found
}

#[test]
fn store_operations_stop_pace_report_and_reconnect_only_through_the_engine() {
    let files = store_files();
    assert!(
        files.iter().any(|(rel, _)| rel == "engine.rs"),
        "src/store/engine.rs is missing"
    );
    let found = by_hand(&files);
    assert!(
        found.is_empty(),
        "store code stops, paces, reports progress or reconnects by itself (go through `Engine`):\n{}",
        found.join("\n")
    );
    for driver in DRIVERS {
        let (_, code) = files
            .iter()
            .find(|(rel, _)| rel == driver)
            .unwrap_or_else(|| panic!("src/store/{driver} is missing"));
        assert!(
            code.contains("Engine::new("),
            "src/store/{driver} drives batches without an engine"
        );
    }
}

#[test]
fn the_check_sees_an_operation_pacing_by_itself() {
    let planted = vec![(
        "export.rs".to_owned(),
        strip(
            "let mut throttle = options.run.throttle(); // .report(&\nlet s = \".recover(&mut\";",
        ),
    )];
    // The call is found; the comment and the string literal are not.
    assert_eq!(by_hand(&planted), vec!["export.rs: .throttle()".to_owned()]);
    let inside = vec![(
        "options.rs".to_owned(),
        strip("Throttle::new(self.max_rows_per_sec)"),
    )];
    assert!(by_hand(&inside).is_empty());
}
