//! Reading the page cache for the tests that keep a file out of it: shared by the
//! integration tests (through `support/mod.rs`) and the binary's own unit tests
//! (`src/bin/lgcodec/main.rs` includes this file with `#[path]`).

use std::path::Path;
use std::process::Command;

/// The bytes of `file` in the page cache, as util-linux's `fincore` reads them (mincore
/// on a mapping of the file); `None` where the command is missing.
pub fn cached_bytes(file: &Path) -> Option<u64> {
    let out = Command::new("fincore")
        .args(["--bytes", "--noheadings", "--output", "RES"])
        .arg(file)
        .output()
        .ok()?;
    assert!(
        out.status.success(),
        "fincore {}: {}",
        file.display(),
        String::from_utf8_lossy(&out.stderr)
    );
    Some(
        String::from_utf8_lossy(&out.stdout)
            .trim()
            .parse()
            .expect("fincore prints a number"),
    )
}

/// The kind of file system `dir` is on (`stat -f`) where it keeps every page in memory
/// (tmpfs, ramfs), whose pages are never dropped; `None` on any other (or where `stat`
/// cannot tell).
pub fn memory_file_system(dir: &Path) -> Option<String> {
    let kind = Command::new("stat")
        .args(["-f", "-c", "%T"])
        .arg(dir)
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_owned())
        .ok()?;
    (kind == "tmpfs" || kind == "ramfs").then_some(kind)
}
