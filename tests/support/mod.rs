//! Helpers shared by the test binaries, included with `#[path = "../support/mod.rs"]`:
//! the committed stores of `vectors/stores/`, scratch directories, today's Python for
//! the reads it must agree with, the store fixture (`store_fixture`, also used by the
//! store bench and `examples/store_fixture.rs`) and, with the `postgres` feature, the
//! test server (`pg`), and the page-cache reading (`page_cache`, which the binary's
//! unit tests include too). Each binary uses a part; the rest is dead code there.

#![allow(dead_code)]

pub mod page_cache;
#[cfg(feature = "postgres")]
pub mod pg;
pub mod store_fixture;

use std::path::{Path, PathBuf};

/// `vectors/stores/`: the stores of every release.
pub fn stores() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("vectors/stores")
}

/// A fresh scratch directory under the system's temporary directory.
pub fn scratch(tag: &str) -> PathBuf {
    // mkdtemp: a name no other test, run or leftover has. Callers remove it.
    tempfile::Builder::new()
        .prefix(&format!("lgcodec-store-{tag}-"))
        .tempdir()
        .expect("scratch dir")
        .keep()
}

/// A SQLite store at `path` with the saver's tables and no row in them, and a
/// connection to it, for the rows a test writes by hand.
#[cfg(feature = "sqlite")]
pub fn empty_sqlite_store(path: &Path) -> rusqlite::Connection {
    drop(
        langgraph_codec::saver::sqlite::SqliteSaver::builder(path)
            .create(true)
            .open()
            .expect("saver"),
    );
    rusqlite::Connection::open(path).expect("open")
}

/// Today's Python (the pinned langgraph-checkpoint-sqlite 3.1.2 / -postgres 3.2.0):
/// `LGCODEC_PYTHON` (CI sets it; the Python checks are then required), else the
/// repository's own venv with the pinned packages (`.venv` as vectors/requirements.txt
/// makes it, or `.ci-venv` as `.ci/run` does) if there is one, else `None` (the caller
/// skips with a printed reason).
pub fn python() -> Option<String> {
    if let Ok(p) = std::env::var("LGCODEC_PYTHON") {
        return Some(p);
    }
    let repo = Path::new(env!("CARGO_MANIFEST_DIR"));
    let found = [".venv/bin/python", ".ci-venv/bin/python"]
        .into_iter()
        .map(|p| repo.join(p))
        .find(|p| p.exists())
        .map(|p| p.display().to_string());
    if found.is_none() {
        println!("skipped the Python reads: no venv found (set LGCODEC_PYTHON)");
    }
    found
}

/// `vectors/store_maint/python_reads_equal.py`: today's Python savers read every
/// target equal to `reference` (after Python's own `setup()` on it when `setup`).
/// Panics with Python's report otherwise; returns its JSON line.
pub fn python_reads_equal(python: &str, setup: bool, reference: &str, targets: &[&str]) -> String {
    let mut args: Vec<&str> = Vec::new();
    if setup {
        args.push("--setup");
    }
    args.push(reference);
    args.extend_from_slice(targets);
    python_script(python, "python_reads_equal.py", &args)
}

/// Runs `vectors/store_maint/SCRIPT ARGS...` with `python`; panics with its output
/// unless it exits 0; returns its standard output.
pub fn python_script(python: &str, script: &str, args: &[&str]) -> String {
    python_file(python, &format!("vectors/store_maint/{script}"), args)
}

/// Runs the repository's `FILE ARGS...` (a path from its root) with `python`; panics
/// with its output unless it exits 0; returns its standard output.
pub fn python_file(python: &str, script: &str, args: &[&str]) -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(script);
    let out = std::process::Command::new(python)
        .arg(path)
        .args(args)
        .output()
        .expect("run python");
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "{script} failed:\n{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    stdout
}

/// A Tokio runtime of two workers, for a test that drives the library's async calls
/// from a plain `#[test]` (and may run blocking helpers beside them).
pub fn rt() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime")
}

/// Sends `signal` (`"-TERM"`, `"-INT"`) to `child` with `kill`, as an operator would.
#[cfg(unix)]
pub fn signal(child: &std::process::Child, signal: &str) {
    assert!(std::process::Command::new("kill")
        .args([signal, &child.id().to_string()])
        .status()
        .expect("kill")
        .success());
}

/// `child`'s exit status and standard error (if piped), waited for at most `limit`:
/// past it, the child is killed and the test fails saying `what` did not end.
pub fn ended_within(
    child: &mut std::process::Child,
    limit: std::time::Duration,
    what: &str,
) -> (std::process::ExitStatus, String) {
    let since = std::time::Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().expect("wait") {
            break status;
        }
        if since.elapsed() > limit {
            let _ = child.kill();
            panic!("{what} did not end within {limit:?}");
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    };
    let mut err = String::new();
    if let Some(mut e) = child.stderr.take() {
        let _ = std::io::Read::read_to_string(&mut e, &mut err);
    }
    (status, err)
}
