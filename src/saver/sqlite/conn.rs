//! Connections: one writer (every write is one transaction that takes the write lock up
//! front: `BEGIN IMMEDIATE`, or a single statement's own, see [`Statements`]), a pool
//! of readers that run in parallel under WAL, and a background checkpointer.
//!
//! WAL checkpoints run off the writer: SQLite's own autocheckpoint runs inside the
//! commit that crosses 1,000 WAL pages, so one `put` in about 160 of the benchmark's
//! paid for copying the WAL into the database file and two `fsync`s (measured: ~90%
//! of the writer's total time, in 30 ms stalls). The writer's autocheckpoint is off;
//! once about [`CHECKPOINT_PAGES`] pages have been written since the last checkpoint a
//! thread of the saver runs `PRAGMA wal_checkpoint(PASSIVE)` on its own connection,
//! which never blocks the writer or the readers. SQLite restarts the WAL from its
//! beginning only at a write that finds it fully checkpointed; under back-to-back
//! writes a background checkpoint never quite catches up, so once the WAL holds
//! [`INLINE_CHECKPOINT_FRAMES`] frames the writer checkpoints inline once, as SQLite
//! would have (the WAL file stays bounded, at eight times SQLite's usual size, ~33 MB,
//! at most).
//! Durability is unchanged: a checkpoint syncs the WAL, then the database file,
//! whichever connection runs it.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, OnceLock, TryLockError};
use std::thread::JoinHandle;
use std::time::Duration;

use rusqlite::{Connection, ErrorCode, OpenFlags};

use super::storage;
use crate::error::Error;
use crate::saver::Result;

/// SQLite's `PRAGMA synchronous` in WAL mode.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
#[non_exhaustive]
pub enum Synchronous {
    /// `NORMAL`: a commit is durable once the WAL is checkpointed; a power cut can lose
    /// the last commits but never corrupts the file. SQLite's recommendation for WAL.
    #[default]
    Normal,
    /// `FULL` (Python's `sqlite3` default): every commit syncs the WAL to disk.
    Full,
    /// `OFF`: no syncs at all; for tests and throwaway stores.
    Off,
}

impl Synchronous {
    fn pragma(self) -> &'static str {
        match self {
            Synchronous::Normal => "NORMAL",
            Synchronous::Full => "FULL",
            Synchronous::Off => "OFF",
        }
    }
}

/// How a [`SqliteSaver`](super::SqliteSaver) opens its connections.
#[derive(Clone, Debug)]
pub(super) struct ConnOptions {
    pub path: Option<PathBuf>,
    pub busy_timeout: Duration,
    pub synchronous: Synchronous,
    pub max_idle_readers: usize,
    /// Whether the writer may create the file (`SQLITE_OPEN_CREATE`).
    pub create: bool,
}

/// WAL pages written since the last checkpoint after which the background checkpointer
/// runs (SQLite's own `wal_autocheckpoint` default).
pub(super) const CHECKPOINT_PAGES: u64 = 1_000;

/// Once the WAL holds this many frames the writer checkpoints inline, so that the next
/// write restarts the WAL: just under the 8,158 frames of the WAL index's first two hash
/// tables (4,062 + 4,096). Each checkpoint cycle costs the caller a fixed few
/// milliseconds (the last copy with its two `fsync`s, then the restarted WAL's synced
/// header), so a longer cycle halves that per write; appending a frame walks the hash
/// chain of its page within its own table only, so the second table costs no more than
/// the first did (at 4,000 frames: ~1.4 µs more blocked time per `put_writes`, see
/// `benches/README.md`, "SQLite saver").
const INLINE_CHECKPOINT_FRAMES: i64 = 8 * CHECKPOINT_PAGES as i64;

/// About how many WAL pages a write transaction of `bytes` of row data adds: the data's
/// pages plus the table and index pages a row touches and page 1.
pub(super) fn wal_pages(bytes: usize) -> u64 {
    4 + (bytes / 4000) as u64
}

/// The connections of one saver.
pub(super) struct Connections {
    options: ConnOptions,
    writer: Mutex<Connection>,
    /// Idle readers; `None` for an in-memory database, whose only connection is the
    /// writer.
    readers: Option<Mutex<Vec<Connection>>>,
    /// The background checkpointer, started by the first write to a file.
    checkpointer: OnceLock<Checkpointer>,
    /// A commit never syncs: the file is in WAL mode (checked at open and after
    /// `setup`) with `synchronous=NORMAL`, or `synchronous=OFF`, or the database is in
    /// memory. Only then may a write run on the caller's thread
    /// ([`try_write`](Connections::try_write)).
    commits_without_sync: AtomicBool,
}

/// What the writer and the checkpointer thread share.
#[derive(Default)]
struct CheckpointState {
    /// Pages (estimated) written since the last checkpoint began.
    pending: u64,
    /// A checkpoint was asked for and has not started yet.
    wanted: bool,
    /// Frames in the WAL (estimated): the last checkpoint's count plus pages written
    /// since it began.
    wal: i64,
    /// The saver is being dropped.
    stop: bool,
    /// The last checkpoint copied the whole WAL, so the next write restarts it, and a
    /// restarted WAL's header is synced (an `fsync` on the writer's thread).
    restart_next: bool,
    /// A background checkpoint is running and nothing was written since it began: it
    /// may end with the whole WAL copied, so the next write may restart the WAL.
    clean_checkpoint: bool,
}

/// The state and its condition variable, and the lock a checkpoint runs under.
type Shared = Arc<((Mutex<CheckpointState>, Condvar), Mutex<()>)>;

/// The background checkpointer thread of one saver (see the module docs).
struct Checkpointer {
    shared: Shared,
    thread: Option<JoinHandle<()>>,
}

impl Checkpointer {
    fn start(path: &Path, options: &ConnOptions) -> Checkpointer {
        let shared: Shared = Arc::default();
        let (path, options, inner) = (path.to_path_buf(), options.clone(), shared.clone());
        let thread = std::thread::Builder::new()
            .name("lgcodec-sqlite-checkpoint".into())
            .spawn(move || checkpoint_loop(&path, &options, &inner))
            .ok();
        Checkpointer { shared, thread }
    }

    /// Adds `pages` written; returns whether the writer must checkpoint inline (the
    /// thread is missing, or the WAL has grown to [`INLINE_CHECKPOINT_FRAMES`]).
    /// With `may_checkpoint` false (a write on the caller's thread) an inline
    /// checkpoint that falls due is left due: [`might_wait`](Self::might_wait) then
    /// sends the next write to the blocking pool, which runs it.
    fn wrote(&self, pages: u64, may_checkpoint: bool) -> bool {
        let (state, wake) = &self.shared.0;
        let mut st = lock(state);
        st.clean_checkpoint = false;
        st.pending = st.pending.saturating_add(pages);
        st.wal = st
            .wal
            .saturating_add(i64::try_from(pages).unwrap_or(i64::MAX));
        if may_checkpoint
            && (st.wal >= INLINE_CHECKPOINT_FRAMES
                || (self.thread.is_none() && st.pending >= CHECKPOINT_PAGES))
        {
            // After this checkpoint the next write restarts the WAL.
            st.pending = 0;
            st.wal = 0;
            return true;
        }
        if st.pending >= CHECKPOINT_PAGES && !st.wanted {
            st.wanted = true;
            wake.notify_one();
        }
        false
    }

    /// Whether a write of `pages` might wait for the disk or for the checkpoint thread:
    /// it makes [`wrote`](Self::wrote) ask for an inline checkpoint, or it restarts a
    /// fully checkpointed WAL (whose new header SQLite syncs). Asked under the writer's
    /// lock, so only the checkpoint thread can change the answer meanwhile, and it only
    /// ever lowers the WAL's count.
    fn might_wait(&self, pages: u64) -> bool {
        let st = lock(&self.shared.0 .0);
        st.restart_next
            || st.clean_checkpoint
            || st
                .wal
                .saturating_add(i64::try_from(pages).unwrap_or(i64::MAX))
                >= INLINE_CHECKPOINT_FRAMES
            || (self.thread.is_none() && st.pending.saturating_add(pages) >= CHECKPOINT_PAGES)
    }

    /// Notes that the writer checkpointed (`copied_all`: the whole WAL) or wrote.
    fn set_restart_next(&self, restart_next: bool) {
        lock(&self.shared.0 .0).restart_next = restart_next;
    }
}

impl Drop for Checkpointer {
    fn drop(&mut self) {
        {
            let (state, wake) = &self.shared.0;
            lock(state).stop = true;
            wake.notify_one();
        }
        // Joined, so that once the saver is dropped its file is closed.
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

fn checkpoint_loop(path: &Path, options: &ConnOptions, shared: &Shared) {
    let ((state, wake), running) = &**shared;
    let mut conn: Option<Connection> = None;
    loop {
        let (pending_before, wal_before) = {
            let mut st = lock(state);
            while !st.wanted && !st.stop {
                st = wake.wait(st).unwrap_or_else(|e| e.into_inner());
            }
            if st.stop {
                return;
            }
            st.wanted = false;
            st.clean_checkpoint = true;
            (st.pending, st.wal)
        };
        if conn.is_none() {
            let checkpoint_options = ConnOptions {
                create: false,
                busy_timeout: Duration::ZERO,
                ..options.clone()
            };
            conn = open_one(Some(path), &checkpoint_options, false).ok();
        }
        // A failed checkpoint (the file gone, an I/O error) is retried at the next
        // threshold; past INLINE_CHECKPOINT_PAGES the writer checkpoints itself.
        let done = {
            let _running = lock(running);
            conn.as_ref().and_then(checkpoint)
        };
        lock(state).checkpointed(pending_before, wal_before, done);
    }
}

impl CheckpointState {
    /// Notes a background checkpoint that began when `pending_before` pages were
    /// pending and the WAL held `wal_before` frames, and ended with `done` (the frames
    /// in the WAL and how many are copied; `None`: it failed).
    fn checkpointed(&mut self, pending_before: u64, wal_before: i64, done: Option<(i64, i64)>) {
        if let Some((frames, copied)) = done {
            self.pending = self.pending.saturating_sub(pending_before);
            // Nothing written since it began and every frame copied: the next write
            // restarts the WAL, so it holds nothing that counts towards the writer's
            // checkpoint (counting the copied frames made the writer checkpoint and
            // restart again a few writes after the restart).
            if self.clean_checkpoint && frames == copied {
                self.restart_next = true;
                self.wal = 0;
            } else {
                self.wal = frames
                    .max(0)
                    .saturating_add(self.wal.saturating_sub(wal_before));
            }
        }
        self.clean_checkpoint = false;
    }
}

/// `PRAGMA wal_checkpoint(PASSIVE)`: copies what it can without waiting for anyone;
/// the frames in the WAL (-1 outside WAL mode) and how many of them are copied into the
/// file, `None` if it failed or was busy (another process checkpointing).
fn checkpoint(conn: &Connection) -> Option<(i64, i64)> {
    conn.query_row("PRAGMA wal_checkpoint(PASSIVE)", [], |r| {
        Ok((
            r.get::<_, i64>(0)?,
            r.get::<_, i64>(1)?,
            r.get::<_, i64>(2)?,
        ))
    })
    .ok()
    .and_then(|(busy, frames, copied)| (busy == 0).then_some((frames, copied)))
}

/// rusqlite's `busy_timeout` panics past `i32::MAX` ms (24 days): such a timeout is
/// that long.
fn set_busy_timeout(conn: &Connection, timeout: Duration) -> rusqlite::Result<()> {
    conn.busy_timeout(timeout.min(Duration::from_millis(i32::MAX as u64)))
}

/// Whether `e` is SQLite's "database is busy / locked": another connection holds a lock
/// that a call with a zero busy timeout did not wait for.
fn is_busy(e: &Error) -> bool {
    e.as_sqlite()
        .and_then(rusqlite::Error::sqlite_error_code)
        .is_some_and(|c| matches!(c, ErrorCode::DatabaseBusy | ErrorCode::DatabaseLocked))
}

/// A transaction begun and ended with cached statements (rusqlite's `Transaction`
/// parses its `BEGIN` and `COMMIT` or `ROLLBACK` at every call: ~3.5k instructions
/// each, callgrind). Rolled back when dropped uncommitted, on an error or a panic.
struct Tx<'c> {
    conn: &'c Connection,
}

impl<'c> Tx<'c> {
    /// `sql`: `BEGIN IMMEDIATE` (the write lock up front) or `BEGIN` (a read snapshot).
    fn begin(conn: &'c Connection, sql: &'static str) -> rusqlite::Result<Self> {
        conn.prepare_cached(sql)?.execute([])?;
        Ok(Tx { conn })
    }

    /// Commits; on failure (e.g. `SQLITE_BUSY` in rollback-journal mode) the
    /// transaction is rolled back as `self` is dropped.
    fn commit(self) -> rusqlite::Result<()> {
        self.conn.prepare_cached("COMMIT")?.execute([])?;
        Ok(())
    }
}

impl Drop for Tx<'_> {
    fn drop(&mut self) {
        if !self.conn.is_autocommit() {
            let rolled_back = self
                .conn
                .prepare_cached("ROLLBACK")
                .and_then(|mut s| s.execute([]));
            if rolled_back.is_err() {
                let _ = self.conn.execute_batch("ROLLBACK");
            }
        }
    }
}

/// How many statements a write runs, which decides how its transaction is made.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Statements {
    /// Exactly one SQL statement (e.g. `put`'s `INSERT`, `put_writes`' one multi-row
    /// `INSERT`): it runs as SQLite's own autocommit transaction, which takes the write
    /// lock at the statement's start as `BEGIN IMMEDIATE` does (waiting up to the busy
    /// timeout), commits when it ends and rolls back whole when it fails. The same
    /// transaction without the `BEGIN IMMEDIATE` and `COMMIT` statements around it,
    /// whose cached-statement lookups and steps cost `put_writes` 3.3k of its 70.7k
    /// instructions a call (callgrind, `benches/README.md`, "SQLite saver").
    One,
    /// Any number of statements, in one `BEGIN IMMEDIATE` ... `COMMIT` transaction.
    Many,
}

/// One write transaction running `f`, committed; on any error (`f`'s, or a failed
/// commit) the transaction is rolled back, so nothing of it is written. With
/// [`Statements::One`] `f` must run exactly one statement (SQLite's autocommit makes
/// it one transaction); a connection already inside a transaction, which should not
/// happen, gets the explicit one.
fn commit_one<T>(
    conn: &Connection,
    operation: &'static str,
    statements: Statements,
    f: impl FnOnce(&Connection) -> Result<T>,
) -> Result<T> {
    if statements == Statements::One && conn.is_autocommit() {
        return f(conn);
    }
    let tx = Tx::begin(conn, "BEGIN IMMEDIATE").map_err(storage(operation))?;
    let out = f(conn)?;
    tx.commit().map_err(storage(operation))?;
    Ok(out)
}

/// One read transaction (a consistent snapshot) running `f`; it ends (rolls back, as
/// nothing was written) when done.
fn read_one<T>(
    conn: &Connection,
    operation: &'static str,
    f: impl FnOnce(&Connection) -> Result<T>,
) -> Result<T> {
    let _tx = Tx::begin(conn, "BEGIN").map_err(storage(operation))?;
    f(conn)
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    // A panic while holding the lock cannot leave a connection half-used: SQLite rolls
    // back an unfinished transaction when the next one begins.
    m.lock().unwrap_or_else(|e| e.into_inner())
}

fn open_one(path: Option<&Path>, options: &ConnOptions, reader: bool) -> Result<Connection> {
    let mut flags = OpenFlags::SQLITE_OPEN_READ_WRITE
        | OpenFlags::SQLITE_OPEN_URI
        | OpenFlags::SQLITE_OPEN_NO_MUTEX;
    // Only the writer of a saver asked to create a store may create the file; a reader
    // opens what the writer already opened.
    if options.create && !reader {
        flags |= OpenFlags::SQLITE_OPEN_CREATE;
    }
    let conn = match path {
        Some(p) => Connection::open_with_flags(p, flags),
        None => Connection::open_in_memory(),
    }
    .map_err(storage("open"))?;
    set_busy_timeout(&conn, options.busy_timeout).map_err(storage("open"))?;
    conn.pragma_update(None, "synchronous", options.synchronous.pragma())
        .map_err(storage("open"))?;
    if path.is_some() && !reader {
        // Checkpoints run in the background (see the module docs). Only this
        // connection's setting: other processes keep theirs.
        conn.pragma_update(None, "wal_autocheckpoint", 0)
            .map_err(storage("open"))?;
    }
    if reader {
        conn.pragma_update(None, "query_only", true)
            .map_err(storage("open"))?;
    }
    conn.set_prepared_statement_cache_capacity(32);
    Ok(conn)
}

impl Connections {
    pub fn open(options: ConnOptions) -> Result<Self> {
        let writer = open_one(options.path.as_deref(), &options, false)?;
        let readers = options.path.as_ref().map(|_| Mutex::new(Vec::new()));
        Ok(Connections {
            options,
            writer: Mutex::new(writer),
            readers,
            checkpointer: OnceLock::new(),
            commits_without_sync: AtomicBool::new(false),
        })
    }

    /// Reads the file's journal mode (after open and `setup`): whether a commit syncs,
    /// and so whether writes may take the fast path.
    pub fn note_journal_mode(&self) {
        let no_sync = match self.options.synchronous {
            _ if self.options.path.is_none() => true,
            Synchronous::Off => true,
            Synchronous::Full => false,
            Synchronous::Normal => lock(&self.writer)
                .query_row("PRAGMA journal_mode", [], |r| r.get::<_, String>(0))
                .is_ok_and(|m| m.eq_ignore_ascii_case("wal")),
        };
        self.commits_without_sync.store(no_sync, Ordering::Relaxed);
    }

    /// The writer, with the configured busy timeout (a fast-path attempt that panicked
    /// may have left it at zero).
    fn writer(&self) -> MutexGuard<'_, Connection> {
        let conn = lock(&self.writer);
        let _ = set_busy_timeout(&conn, self.options.busy_timeout);
        conn
    }

    /// The writer if no other thread holds it.
    fn try_writer(&self) -> Option<MutexGuard<'_, Connection>> {
        match self.writer.try_lock() {
            Ok(conn) => Some(conn),
            Err(TryLockError::Poisoned(e)) => Some(e.into_inner()),
            Err(TryLockError::WouldBlock) => None,
        }
    }

    pub fn path(&self) -> Option<&Path> {
        self.options.path.as_deref()
    }

    /// Runs `f` with the writer connection (no transaction opened).
    pub fn with_writer<T>(&self, f: impl FnOnce(&mut Connection) -> Result<T>) -> Result<T> {
        f(&mut self.writer())
    }

    /// Runs `f` in one write transaction on the writer and commits it (`BEGIN
    /// IMMEDIATE`, or with [`Statements::One`] the statement's own): the write lock is
    /// taken up front (waiting up to the busy timeout for other
    /// processes), so the transaction never fails half-way with "database is locked".
    /// `pages` is about how many WAL pages it writes (see [`wal_pages`]), for the
    /// background checkpointer.
    pub fn write<T>(
        &self,
        operation: &'static str,
        pages: u64,
        statements: Statements,
        f: impl FnOnce(&Connection) -> Result<T>,
    ) -> Result<T> {
        let conn = self.writer();
        let out = commit_one(&conn, operation, statements, f)?;
        self.wrote(&conn, pages, true);
        Ok(out)
    }

    /// After a committed write of about `pages` WAL pages: tells the checkpointer, and
    /// checkpoints inline when it asks for it.
    /// `may_checkpoint`: see [`Checkpointer::wrote`].
    fn wrote(&self, conn: &Connection, pages: u64, may_checkpoint: bool) {
        let Some(path) = &self.options.path else {
            return;
        };
        let ckpt = self
            .checkpointer
            .get_or_init(|| Checkpointer::start(path, &self.options));
        if ckpt.wrote(pages, may_checkpoint) {
            // Only one checkpoint runs at a time: wait for the thread's to finish,
            // then copy the rest while this saver appends nothing. The committed
            // transaction stands whatever the checkpoint does.
            let _running = lock(&ckpt.shared.1);
            let copied_all = checkpoint(conn).is_some_and(|(frames, copied)| frames == copied);
            ckpt.set_restart_next(copied_all);
        } else {
            ckpt.set_restart_next(false);
        }
    }

    /// The fast path of [`write`](Self::write), for the caller's own thread: `None`
    /// when the write might have to wait, and then nothing of it was written (run
    /// [`write`](Self::write) instead, e.g. on a blocking pool). It might wait when
    /// another thread holds the writer, another connection or process holds the file's
    /// write lock (tried with a zero busy timeout: `SQLITE_BUSY` at once, never a
    /// sleep), the commit would `fsync` (not WAL mode, `synchronous=FULL`, the first
    /// write of a restarted WAL) or the writer would have to checkpoint, or the write is
    /// larger than `max_pages`. A `SQLITE_BUSY` anywhere in `f` or at the commit
    /// rolls the whole transaction back before `None` is returned.
    pub fn try_write<T>(
        &self,
        operation: &'static str,
        pages: u64,
        max_pages: u64,
        statements: Statements,
        f: &impl Fn(&Connection) -> Result<T>,
    ) -> Option<Result<T>> {
        if pages > max_pages || !self.commits_without_sync.load(Ordering::Relaxed) {
            return None;
        }
        let conn = self.try_writer()?;
        if self.checkpointer.get().is_some_and(|c| c.might_wait(pages)) {
            return None;
        }
        set_busy_timeout(&conn, Duration::ZERO).ok()?;
        let out = commit_one(&conn, operation, statements, f);
        let _ = set_busy_timeout(&conn, self.options.busy_timeout);
        match out {
            Err(e) if is_busy(&e) => None,
            Err(e) => Some(Err(e)),
            Ok(out) => {
                self.wrote(&conn, pages, false);
                Some(Ok(out))
            }
        }
    }

    /// The fast path of [`read`](Self::read): `None` (nothing done) when no reader is
    /// idle (opening one reads the schema from disk), another thread holds the
    /// in-memory database's only connection, or another connection or process holds a
    /// lock the read would have to wait for (a zero busy timeout, as in
    /// [`try_write`](Self::try_write)).
    pub fn try_read<T>(
        &self,
        operation: &'static str,
        f: &impl Fn(&Connection) -> Result<T>,
    ) -> Option<Result<T>> {
        let Some(pool) = &self.readers else {
            let conn = self.try_writer()?;
            return Some(read_one(&conn, operation, f));
        };
        let conn = lock(pool).pop()?;
        let out = set_busy_timeout(&conn, Duration::ZERO)
            .ok()
            .map(|()| read_one(&conn, operation, f));
        // A reader whose busy timeout cannot be set back is closed, not kept.
        if set_busy_timeout(&conn, self.options.busy_timeout).is_ok() {
            self.put_back(pool, conn);
        }
        match out {
            Some(Err(e)) if is_busy(&e) => None,
            out => out,
        }
    }

    /// Runs `f` in one read transaction (a consistent snapshot) on an idle reader, a
    /// new one if none is idle; readers run in parallel with each other and the writer.
    pub fn read<T>(
        &self,
        operation: &'static str,
        f: impl FnOnce(&Connection) -> Result<T>,
    ) -> Result<T> {
        let Some(pool) = &self.readers else {
            return read_one(&self.writer(), operation, f);
        };
        let idle = lock(pool).pop();
        let conn = match idle {
            Some(c) => c,
            None => open_one(self.options.path.as_deref(), &self.options, true)?,
        };
        let out = read_one(&conn, operation, f);
        self.put_back(pool, conn);
        out
    }

    /// Keeps a reader for the next read, unless `max_idle_readers` are idle already
    /// (then it is closed).
    fn put_back(&self, pool: &Mutex<Vec<Connection>>, conn: Connection) {
        let mut idle = lock(pool);
        if idle.len() < self.options.max_idle_readers {
            idle.push(conn);
        }
    }
}

#[cfg(test)]
mod tests {
    use std::cell::Cell;

    use super::*;

    fn busy() -> Error {
        storage("test")(rusqlite::Error::SqliteFailure(
            rusqlite::ffi::Error::new(rusqlite::ffi::SQLITE_BUSY),
            None,
        ))
    }

    #[test]
    fn a_checkpoint_due_after_a_fast_write_is_left_to_the_next_write_on_the_pool() {
        let ckpt = Checkpointer {
            shared: Arc::default(),
            thread: None,
        };
        assert!(!ckpt.might_wait(4), "a fresh WAL");
        // The WAL's estimate passes the writer's threshold on a fast-path write (the
        // checkpoint thread's count of real frames can raise it after might_wait).
        let frames = u64::try_from(INLINE_CHECKPOINT_FRAMES).expect("positive");
        assert!(
            !ckpt.wrote(frames, false),
            "no checkpoint on the caller's thread"
        );
        assert!(ckpt.might_wait(4), "so the next write goes to the pool ...");
        assert!(ckpt.wrote(4, true), "... and checkpoints there");
        assert!(!ckpt.might_wait(4));
        // A background checkpoint with nothing written since it began may leave the
        // whole WAL copied: the next write (which restarts it, syncing) waits too.
        lock(&ckpt.shared.0 .0).clean_checkpoint = true;
        assert!(ckpt.might_wait(4));
        assert!(!ckpt.wrote(4, true));
        assert!(
            !ckpt.might_wait(4),
            "a write since: no restart from that checkpoint"
        );
    }

    #[test]
    fn a_background_checkpoint_that_copied_the_whole_wal_leaves_one_restart_per_cycle() {
        // Measured with the benchmark's put_writes (~4 frames each): the write that takes
        // the WAL to the writer's threshold checkpoints inline, and waits for the
        // background checkpoint that is running, which copies the whole WAL while the
        // writer waits. That background checkpoint must leave the WAL's count at what
        // the restart leaves (the next write restarts it), not at the frames it copied:
        // otherwise a dozen writes later the writer checkpoints and restarts again
        // (two fsyncs and a synced WAL header more per cycle on the caller's path).
        let ckpt = Checkpointer {
            shared: Arc::default(),
            thread: Some(std::thread::spawn(|| ())),
        };
        let frames = INLINE_CHECKPOINT_FRAMES - 50;
        {
            let mut st = lock(&ckpt.shared.0 .0);
            st.wal = frames;
        }
        assert!(
            ckpt.wrote(60, true),
            "the threshold: the writer checkpoints"
        );
        // The background checkpoint begins after the writer's count was reset, with
        // nothing written since (the writer waits for it), and copies every frame.
        let (pending_before, wal_before) = {
            let mut st = lock(&ckpt.shared.0 .0);
            st.clean_checkpoint = true;
            (st.pending, st.wal)
        };
        let copied = frames + 60;
        lock(&ckpt.shared.0 .0).checkpointed(pending_before, wal_before, Some((copied, copied)));
        // The writer's own checkpoint then finds the whole WAL copied.
        ckpt.set_restart_next(true);
        assert!(ckpt.might_wait(4), "the next write restarts the WAL (pool)");
        assert!(!ckpt.wrote(4, true));
        ckpt.set_restart_next(false);
        // A cycle of writes (well under the threshold) without another inline
        // checkpoint.
        for n in 0..(INLINE_CHECKPOINT_FRAMES / 8) {
            assert!(
                !ckpt.might_wait(4) && !ckpt.wrote(4, false),
                "write {n} after the restart waits for another checkpoint"
            );
        }
    }

    #[test]
    fn a_busy_fast_write_is_rolled_back_whole_and_can_be_run_again() {
        let dir = std::env::temp_dir().join(format!("lgcodec-conn-busy-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("dir");
        let conns = Connections::open(ConnOptions {
            path: Some(dir.join("c.sqlite")),
            busy_timeout: Duration::from_secs(5),
            synchronous: Synchronous::Normal,
            max_idle_readers: 2,
            create: true,
        })
        .expect("open");
        conns
            .with_writer(|c| {
                c.execute_batch("PRAGMA journal_mode=WAL; CREATE TABLE t (n INTEGER)")
                    .map_err(storage("test"))
            })
            .expect("table");
        conns.note_journal_mode();
        let attempts = Cell::new(0);
        // Two rows written, then SQLITE_BUSY on the first attempt (as a statement or
        // COMMIT would report another connection's lock).
        let f = |tx: &Connection| -> Result<()> {
            tx.execute("INSERT INTO t VALUES (1)", [])
                .map_err(storage("test"))?;
            tx.execute("INSERT INTO t VALUES (2)", [])
                .map_err(storage("test"))?;
            attempts.set(attempts.get() + 1);
            if attempts.get() == 1 {
                return Err(busy());
            }
            Ok(())
        };
        let rows = |conns: &Connections| {
            conns
                .read("test", |tx| {
                    tx.query_row("SELECT count(*) FROM t", [], |r| r.get::<_, i64>(0))
                        .map_err(storage("test"))
                })
                .expect("count")
        };
        assert!(
            conns
                .try_write("test", 1, 20, Statements::Many, &f)
                .is_none(),
            "busy: not done"
        );
        assert_eq!(rows(&conns), 0, "nothing of the busy attempt is written");
        // Another error is the caller's, not a reason to run again.
        let fails = |_: &Connection| -> Result<()> {
            Err(crate::saver::error::SaverFault::Storage {
                operation: "test",
                source: "boom".into(),
            }
            .into())
        };
        assert!(matches!(
            conns.try_write("test", 1, 20, Statements::Many, &fails),
            Some(Err(_))
        ));
        // The writer is usable again, with its busy timeout back.
        conns
            .write("test", 1, Statements::Many, f)
            .expect("second attempt");
        assert_eq!(rows(&conns), 2);
        assert_eq!(attempts.get(), 2);
        let _ = std::fs::remove_dir_all(&dir);
    }
}
