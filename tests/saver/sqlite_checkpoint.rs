//! WAL checkpoints run off the caller's path: no `put` copies the WAL into the database
//! file itself (SQLite's autocheckpoint did, in the one commit in ~160 that crossed
//! 1,000 WAL pages, with two `fsync`s), yet the WAL is checkpointed and stays bounded,
//! and a second connection reads everything.
#![cfg(all(feature = "sqlite", target_os = "linux"))]

use langgraph_codec::saver::sqlite::{rusqlite, SqliteSaver};
use langgraph_codec::saver::{Checkpoint, CheckpointConfig, CheckpointMetadata, CheckpointSaver};
use langgraph_codec::Value;

/// Write syscalls made so far by the calling thread (`syscw` of
/// `/proc/thread-self/io`).
fn write_syscalls() -> u64 {
    let io = std::fs::read_to_string("/proc/thread-self/io").expect("/proc/thread-self/io");
    io.lines()
        .find_map(|l| l.strip_prefix("syscw: "))
        .and_then(|n| n.trim().parse().ok())
        .expect("a syscw line")
}

/// Runs a future that never waits (the SQLite saver outside a runtime runs inline, on
/// this thread).
fn now<T>(f: impl std::future::Future<Output = T>) -> T {
    let mut f = std::pin::pin!(f);
    match f
        .as_mut()
        .poll(&mut std::task::Context::from_waker(std::task::Waker::noop()))
    {
        std::task::Poll::Ready(v) => v,
        std::task::Poll::Pending => panic!("the saver waited outside a runtime"),
    }
}

#[test]
fn no_put_checkpoints_the_wal_on_the_callers_thread() {
    let tmp = tempfile::Builder::new()
        .prefix("lgcodec-ckpt-")
        .tempdir()
        .expect("temp dir");
    let dir = tmp.path().to_path_buf();
    let path = dir.join("c.sqlite");
    let saver = SqliteSaver::create(&path).expect("create");
    // About 12 kB of row a put: ~6 WAL pages, so 400 puts cross 1,000 pages twice.
    let big = Value::from("x".repeat(12_000));
    let mut config = CheckpointConfig::new("t");
    let mut most = 0;
    for step in 0..400 {
        let mut cp = Checkpoint::now(step);
        cp.channel_values.insert("state".into(), big.clone());
        let before = write_syscalls();
        config = now(saver.put(
            &config,
            &cp,
            &CheckpointMetadata::new("loop", step),
            &Default::default(),
        ))
        .expect("put");
        most = most.max(write_syscalls() - before);
    }
    // A put writes its ~6 frames (a header and a page each); copying the WAL into the
    // file is hundreds of writes.
    assert!(
        most < 60,
        "a put made {most} write syscalls on the caller's thread: it checkpointed the WAL"
    );
    // Back-to-back writes never let a background checkpoint catch up with the WAL's
    // end; the WAL still stays bounded (SQLite restarts it only when fully
    // checkpointed), at ~8,000 frames of 4,120 bytes, for ~15,000 pages written.
    for step in 400..2_500 {
        let mut cp = Checkpoint::now(step);
        cp.channel_values.insert("state".into(), big.clone());
        config = now(saver.put(
            &config,
            &cp,
            &CheckpointMetadata::new("loop", step),
            &Default::default(),
        ))
        .expect("put");
    }
    let size = |name: &str| std::fs::metadata(dir.join(name)).map_or(0, |m| m.len());
    let wal = size("c.sqlite-wal");
    assert!(
        wal < 9_000 * 4_120,
        "the WAL grew to {wal} bytes: it was never restarted"
    );
    // Checkpoints copied the pages into the database file (~3 new pages a put).
    assert!(
        size("c.sqlite") > 2_000 * 4_096,
        "the database file holds {} bytes: nothing was checkpointed",
        size("c.sqlite")
    );
    // Another connection reads every checkpoint.
    let other = rusqlite::Connection::open(&path).expect("open");
    let n: i64 = other
        .query_row("SELECT count(*) FROM checkpoints", [], |r| r.get(0))
        .expect("count");
    assert_eq!(n, 2_500);
    drop(other);
    drop(saver);
    let _ = std::fs::remove_dir_all(&dir);
}
