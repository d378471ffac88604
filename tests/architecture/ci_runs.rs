//! Every test that needs a Postgres server or the pinned Python packages runs where CI
//! has them. `cargo test` alone has neither (`.ci/run` runs it before the venv exists,
//! and the checks start their own Postgres), and such a test then returns early and
//! passes having asserted nothing. So each test file that reads `LGCODEC_TEST_PG_URL`
//! or the shared venv (`support::python`) must be named by a check in `.ci/checks.d/`:
//! a module `tests/T/M.rs` by a `M::` filter, a test target `tests/T.rs` by `--test T`.

use std::fs;
use std::path::Path;

use super::layers::rust_files;

/// What a test file reads that `cargo test` alone does not have.
const NEEDS: [&str; 5] = [
    "pg::url()",
    "pg_url()",
    "LGCODEC_TEST_PG_URL\")",
    "support::python()",
    "python_reads_equal(",
];

/// Whether `code` reads a server or the venv: one of [`NEEDS`], or `python()` imported
/// from the shared support module.
fn needs_ci(code: &str) -> bool {
    NEEDS.iter().any(|n| code.contains(n))
        || (code.contains("python()")
            && code
                .lines()
                .any(|l| l.trim_start().starts_with("use crate::support") && l.contains("python")))
}

/// Whether `checks` run the tests of `file`: a module `tests/T/M.rs` by a `M::` filter
/// or by `--test T` with no filter, a target `tests/T.rs` by `--test T`; `None` for a
/// target's root or the support code (its modules are looked at instead).
fn run_by(checks: &str, tests: &Path, file: &Path) -> Option<Result<(), String>> {
    let named = named_as(tests, file)?;
    let whole = |target: &str| {
        checks.lines().any(|l| {
            l.split_once(&format!("--test {target}"))
                .is_some_and(|(_, rest)| rest.trim().is_empty())
        })
    };
    Some(match &named {
        Named::Target(t) if checks.contains(&format!("--test {t}")) => Ok(()),
        Named::Module(t, m) if checks.contains(&format!("{m}::")) || whole(t) => Ok(()),
        Named::Target(t) => Err(format!("--test {t}")),
        Named::Module(_, m) => Err(format!("{m}::")),
    })
}

enum Named {
    Target(String),
    Module(String, String),
}

fn named_as(tests: &Path, file: &Path) -> Option<Named> {
    let rel = file.strip_prefix(tests).ok()?;
    let parts: Vec<String> = rel
        .iter()
        .map(|p| p.to_string_lossy().trim_end_matches(".rs").to_owned())
        .collect();
    match parts.as_slice() {
        [target] => Some(Named::Target(target.clone())),
        [dir, ..] if dir == "support" => None,
        [_, module] if module == "main" || module == "mod" => None,
        [target, module] => Some(Named::Module(target.clone(), module.clone())),
        _ => None,
    }
}

#[test]
fn every_test_that_needs_postgres_or_python_is_run_by_a_ci_check() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let tests = root.join("tests");
    let mut checks = String::new();
    let Ok(dir) = fs::read_dir(root.join(".ci/checks.d")) else {
        return; // .ci/ is not in the published package
    };
    for entry in dir.flatten() {
        if entry.path().extension().is_some_and(|e| e == "sh") {
            checks.push_str(&fs::read_to_string(entry.path()).expect("check"));
        }
    }
    assert!(checks.contains("cargo test"), "no check runs cargo test");
    let mut files = Vec::new();
    rust_files(&tests, &mut files);
    files.sort();
    let mut needing = 0;
    let mut missing = Vec::new();
    for file in &files {
        let code = fs::read_to_string(file).expect("test file");
        // This file names what it looks for.
        if file.ends_with("architecture/ci_runs.rs") || !needs_ci(&code) {
            continue;
        }
        let Some(run) = run_by(&checks, &tests, file) else {
            continue;
        };
        needing += 1;
        if let Err(name) = run {
            missing.push(format!("{} (no check runs `{name}`)", file.display()));
        }
    }
    // The store's, the savers' and the connection tests at least.
    assert!(needing >= 10, "found only {needing} test files needing CI");
    assert!(
        missing.is_empty(),
        "test files that read Postgres or the venv but no .ci/checks.d script runs, so \
         they pass having asserted nothing in CI; add them to a check's cargo test \
         filter:\n{}",
        missing.join("\n")
    );
}
