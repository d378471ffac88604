//! The quickstart example, as a first-time user runs it: it leaves the store it
//! tells you to look at, ends with next steps, and explains the `log` channel instead
//! of naming "delta channels" to a reader who does not know them.
#![cfg(feature = "sqlite")]

#[allow(dead_code)]
#[path = "../../examples/quickstart.rs"]
mod quickstart;

#[tokio::test]
async fn the_quickstart_keeps_its_store_and_ends_with_next_steps() {
    let tmp = tempfile::Builder::new()
        .prefix("lgcodec-quickstart-test-")
        .tempdir()
        .expect("temp dir");
    let dir = tmp.path().to_path_buf();
    let mut out = String::new();
    quickstart::run(&dir, &mut out)
        .await
        .unwrap_or_else(|e| panic!("quickstart failed: {e}\n{out}"));
    let path = dir.join("checkpoints.sqlite");
    // The file it points at is still there, and it says where.
    assert!(path.exists(), "the quickstart deleted {}", path.display());
    assert!(out.contains(&path.display().to_string()), "{out}");
    // It ends with what to do next.
    let tail: Vec<&str> = out.lines().rev().take(4).collect();
    assert!(
        tail.iter().any(|l| l.starts_with("next steps")),
        "no next step at the end:\n{out}"
    );
    // No unexplained jargon.
    assert!(!out.contains("delta channel `log`, rebuilt from"), "{out}");
    assert!(
        out.contains("stored as additions, not full copies"),
        "{out}"
    );
    // A second run starts from a fresh copy and works again.
    let mut again = String::new();
    quickstart::run(&dir, &mut again)
        .await
        .unwrap_or_else(|e| panic!("second run failed: {e}\n{again}"));
    let _ = std::fs::remove_dir_all(&dir);
}
