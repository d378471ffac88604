//! The store's operations are written once, over the one backend trait
//! (`Backend`, `src/store/backend.rs`: the audit and the sweeps over its `Values`,
//! prune, retain and import over its `Checkpoints`), and export over the raw row reader
//! (`Raw::each_row`, `src/store/raw.rs`): the files that hold them name neither
//! database crate, no backend module and no backend feature. What differs between
//! SQLite and Postgres is said by the backends' implementations, and by SQL text
//! chosen by dialect.
//!
//! The check reads the files as text, comments and string literals left out.

use std::fs;
use std::path::Path;

/// The operations written over the traits alone.
const OVER_THE_TRAIT: &[&str] = &[
    "src/store/ops.rs",
    "src/store/sweep.rs",
    "src/store/pages.rs",
    "src/store/plan.rs",
    "src/store/prune.rs",
    "src/store/retain.rs",
    "src/store/import.rs",
    "src/store/export.rs",
];

/// What a file reaching past the trait to a backend would name.
const BACKEND_NAMES: &[&str] = &[
    "rusqlite",
    "tokio_postgres",
    "sqlite::",
    "postgres::",
    "feature = \"sqlite\"",
    "feature = \"postgres\"",
    "PgStore",
    "SqliteStore",
    "Conn::",
];

/// `text` with comments and literals blanked, but the contents of `feature = "…"` kept
/// (a `cfg` names its feature in a string literal).
fn code(text: &str) -> String {
    let kept = text
        .replace("feature = \"sqlite\"", "feature = SQLITE_FEATURE")
        .replace("feature = \"postgres\"", "feature = POSTGRES_FEATURE");
    super::layers::strip(&kept)
        .replace("feature = SQLITE_FEATURE", "feature = \"sqlite\"")
        .replace("feature = POSTGRES_FEATURE", "feature = \"postgres\"")
}

#[test]
fn the_audit_sweeps_prune_retain_import_and_export_reach_a_database_only_through_the_backend_seams()
{
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut found = Vec::new();
    for file in OVER_THE_TRAIT {
        let text = fs::read_to_string(root.join(file)).expect(file);
        for (n, line) in code(&text).lines().enumerate() {
            for name in BACKEND_NAMES {
                if line.contains(name) {
                    found.push(format!("{file}:{}: {name}: {}", n + 1, line.trim()));
                }
            }
        }
    }
    assert!(
        found.is_empty(),
        "these lines reach past the backend traits (give the trait a method instead):\n{}",
        found.join("\n")
    );
}
