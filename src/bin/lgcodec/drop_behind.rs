//! A backup file kept out of the page cache: written once from start to end and read by
//! no one while it is written, and read once from start to end to verify or restore it,
//! its pages are of no use to the cache, and a backup as large as the store would
//! otherwise push out the pages of everything else on the machine (the database being
//! backed up among them).
//!
//! `lgcodec store export` of a million checkpoints (a 3.26 GB file, the store of
//! `benches/store_scale.sh`, release build, 2026-12-04 19:40 UTC) left 3.26 GB of the
//! file in the page cache without this and 42 MB with it (`fincore`), in 7.2–7.9 s
//! against 7.6–9.1 s (three runs alternating the builds, each timed from a `sync` to a
//! `sync`). Reading that backup from the disk (dropped from the cache before each run,
//! 2026-12-04 20:40 UTC, three runs alternating the builds): `verify` took 7.9–8.0 s
//! against 11.6–12.7 s (system time 0.5–0.7 s against 4.2–5.0 s), `import` into a new
//! SQLite file 17.7–20.1 s against 21.5–23.5 s (system time 7.3–8.8 s against
//! 11.2–13.5 s). On this VM, page-cache pages are memory the host hands back each time.

use std::fs::File;
use std::io::{self, Read, Write};

/// Every `STEP` bytes written, the kernel is told to start writing that range back to the
/// disk and to drop the range before it, written back by then, from the page cache;
/// every `STEP` bytes read, to drop them.
const STEP: u64 = 32 << 20;

/// A [`File`] written or read sequentially that asks the kernel to drop the ranges it has
/// passed from the page cache as it goes (`posix_fadvise(POSIX_FADV_DONTNEED)`, which
/// also starts the write-back of a range still dirty). Advice only: the bytes written or
/// read are the same with it or without it, and a system without it gets none.
pub struct DropBehind {
    file: File,
    step: u64,
    /// The bytes written or read so far.
    passed: u64,
    /// The range advised last: each range is advised twice, when written (its
    /// write-back starts) and once more with the next range, when its pages are clean
    /// and can go.
    last: (u64, u64),
}

impl DropBehind {
    pub fn new(file: File) -> Self {
        Self {
            file,
            step: STEP,
            passed: 0,
            last: (0, 0),
        }
    }

    /// Counts `n` more bytes passed, and advises the kernel once a step has passed.
    fn advance(&mut self, n: usize, pages: Pages) {
        self.passed += n as u64;
        if self.passed - self.last.1 >= self.step {
            let from = match pages {
                Pages::Dirty => self.last.0,
                Pages::Clean => self.last.1,
            };
            drop_range(&self.file, from, self.passed);
            self.last = (self.last.1, self.passed);
        }
    }
}

/// The pages of the range a [`DropBehind`] has just passed.
enum Pages {
    /// Written: the first advice starts their write-back, the next drops them.
    Dirty,
    /// Read: the first advice drops them.
    Clean,
}

impl Write for DropBehind {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let n = self.file.write(buf)?;
        // Dirty pages stay until written back: each range is advised a second time.
        self.advance(n, Pages::Dirty);
        Ok(n)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.file.flush()
    }
}

impl Read for DropBehind {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.file.read(buf)?;
        // The pages read are clean: one advice drops them (the kernel's read-ahead,
        // past them, is left alone).
        self.advance(n, Pages::Clean);
        Ok(n)
    }
}

/// Drops a file's pages from the page cache, once it is on disk (`sync_all`): every page
/// is clean then, so none stays.
pub fn drop_cached(file: &File) {
    if let Ok(m) = file.metadata() {
        drop_range(file, 0, m.len());
    }
}

/// Advises the kernel that `from..to` of `file` will not be read again.
fn drop_range(file: &File, from: u64, to: u64) {
    #[cfg(any(target_os = "linux", target_os = "android", target_os = "freebsd"))]
    if let Some(len) = std::num::NonZeroU64::new(to.saturating_sub(from)) {
        // Advice: an error (a pipe, a file system without it) changes no byte.
        let _ = rustix::fs::fadvise(file, from, Some(len), rustix::fs::Advice::DontNeed);
    }
    #[cfg(not(any(target_os = "linux", target_os = "android", target_os = "freebsd")))]
    let _ = (file, from, to);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::page_cache::{cached_bytes, memory_file_system};

    /// Written a step at a time at a writer's pace, the file is mostly out of the page
    /// cache before it is flushed; the same bytes written through a plain `File` are all
    /// in it, and leave it as `DropBehind` reads them. (Steps of 1 MiB here, 20 ms
    /// apart: each range's write-back has ended when the next step drops it.)
    #[test]
    fn ranges_written_or_read_leave_the_page_cache() {
        let dir = tempfile::Builder::new()
            .prefix("lgcodec-drop-behind-")
            .tempdir()
            .expect("scratch");
        if let Some(kind) = memory_file_system(dir.path()) {
            eprintln!("skipped: {kind} keeps every page in memory");
            return;
        }
        let chunk = vec![b'x'; 1 << 20];
        let steps = 24u64;
        let plain = dir.path().join("plain");
        let mut f = File::create(&plain).expect("plain");
        for _ in 0..steps {
            f.write_all(&chunk).expect("write");
        }
        let dropped = dir.path().join("dropped");
        let mut w = DropBehind::new(File::create(&dropped).expect("dropped"));
        w.step = 1 << 20;
        for _ in 0..steps {
            w.write_all(&chunk).expect("write");
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        let (Some(in_plain), Some(in_dropped)) = (cached_bytes(&plain), cached_bytes(&dropped))
        else {
            eprintln!("skipped: no fincore (util-linux) to read the page cache with");
            return;
        };
        let size = steps << 20;
        assert_eq!(
            in_plain, size,
            "a file written plainly is all in the page cache"
        );
        assert!(
            in_dropped <= 4 << 20,
            "{in_dropped} of {size} bytes written through DropBehind are in the page cache"
        );

        // Read back: the plain file (all cached, all on disk after the sync) read
        // through DropBehind leaves the cache as it is read.
        File::open(&plain).expect("plain").sync_all().expect("sync");
        let mut r = DropBehind::new(File::open(&plain).expect("plain"));
        r.step = 1 << 20;
        let mut buf = vec![0u8; 64 << 10];
        let mut read = 0u64;
        loop {
            let n = r.read(&mut buf).expect("read");
            if n == 0 {
                break;
            }
            read += n as u64;
        }
        assert_eq!(read, size);
        let left = cached_bytes(&plain).expect("fincore");
        assert!(
            left <= 2 << 20,
            "{left} of {size} bytes read through DropBehind are in the page cache"
        );
    }
}
