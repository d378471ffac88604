//! Connections: one writer (every write is one `BEGIN IMMEDIATE` transaction), a pool
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
//! would have (the WAL file stays bounded, at four times SQLite's usual size at most).
//! Durability is unchanged: a checkpoint syncs the WAL, then the database file,
//! whichever connection runs it.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, OnceLock};
use std::thread::JoinHandle;
use std::time::Duration;

use rusqlite::{Connection, OpenFlags, Transaction, TransactionBehavior};

use super::storage;
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
/// write restarts the WAL.
const INLINE_CHECKPOINT_FRAMES: i64 = 4 * CHECKPOINT_PAGES as i64;

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
    fn wrote(&self, pages: u64) -> bool {
        let (state, wake) = &self.shared.0;
        let mut st = lock(state);
        st.pending = st.pending.saturating_add(pages);
        st.wal = st
            .wal
            .saturating_add(i64::try_from(pages).unwrap_or(i64::MAX));
        if st.wal >= INLINE_CHECKPOINT_FRAMES
            || (self.thread.is_none() && st.pending >= CHECKPOINT_PAGES)
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
        if let Some(frames) = done {
            let mut st = lock(state);
            st.pending = st.pending.saturating_sub(pending_before);
            st.wal = frames
                .max(0)
                .saturating_add(st.wal.saturating_sub(wal_before));
        }
    }
}

/// `PRAGMA wal_checkpoint(PASSIVE)`: copies what it can without waiting for anyone;
/// the frames in the WAL (-1 outside WAL mode), `None` if it failed or was busy
/// (another process checkpointing).
fn checkpoint(conn: &Connection) -> Option<i64> {
    conn.query_row("PRAGMA wal_checkpoint(PASSIVE)", [], |r| {
        Ok((r.get::<_, i64>(0)?, r.get::<_, i64>(1)?))
    })
    .ok()
    .and_then(|(busy, frames)| (busy == 0).then_some(frames))
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
    conn.busy_timeout(options.busy_timeout)
        .map_err(storage("open"))?;
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
        })
    }

    pub fn path(&self) -> Option<&Path> {
        self.options.path.as_deref()
    }

    /// Runs `f` with the writer connection (no transaction opened).
    pub fn with_writer<T>(&self, f: impl FnOnce(&mut Connection) -> Result<T>) -> Result<T> {
        f(&mut lock(&self.writer))
    }

    /// Runs `f` in one `BEGIN IMMEDIATE` transaction on the writer and commits it: the
    /// write lock is taken up front (waiting up to the busy timeout for other
    /// processes), so the transaction never fails half-way with "database is locked".
    /// `pages` is about how many WAL pages it writes (see [`wal_pages`]), for the
    /// background checkpointer.
    pub fn write<T>(
        &self,
        operation: &'static str,
        pages: u64,
        f: impl FnOnce(&Transaction<'_>) -> Result<T>,
    ) -> Result<T> {
        let mut conn = lock(&self.writer);
        let tx = conn
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .map_err(storage(operation))?;
        let out = f(&tx)?;
        tx.commit().map_err(storage(operation))?;
        if let Some(path) = &self.options.path {
            let ckpt = self
                .checkpointer
                .get_or_init(|| Checkpointer::start(path, &self.options));
            if ckpt.wrote(pages) {
                // Only one checkpoint runs at a time: wait for the thread's to finish,
                // then copy the rest while this saver appends nothing. The committed
                // transaction stands whatever the checkpoint does.
                let _running = lock(&ckpt.shared.1);
                let _ = checkpoint(&conn);
            }
        }
        Ok(out)
    }

    /// Runs `f` in one read transaction (a consistent snapshot) on an idle reader, a
    /// new one if none is idle; readers run in parallel with each other and the writer.
    pub fn read<T>(
        &self,
        operation: &'static str,
        f: impl FnOnce(&Transaction<'_>) -> Result<T>,
    ) -> Result<T> {
        let Some(pool) = &self.readers else {
            let mut conn = lock(&self.writer);
            let tx = conn
                .transaction_with_behavior(TransactionBehavior::Deferred)
                .map_err(storage(operation))?;
            return f(&tx);
        };
        let idle = lock(pool).pop();
        let mut conn = match idle {
            Some(c) => c,
            None => open_one(self.options.path.as_deref(), &self.options, true)?,
        };
        let out = {
            let tx = conn
                .transaction_with_behavior(TransactionBehavior::Deferred)
                .map_err(storage(operation))?;
            f(&tx)
            // The transaction rolls back (ends) on drop: nothing was written.
        };
        let mut idle = lock(pool);
        if idle.len() < self.options.max_idle_readers {
            idle.push(conn);
        }
        out
    }
}
