//! Connections: one writer (every write is one `BEGIN IMMEDIATE` transaction), a pool
//! of readers that run in parallel under WAL, and the hop onto Tokio's blocking pool.

use std::path::{Path, PathBuf};
use std::sync::{Mutex, MutexGuard};
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

/// The connections of one saver.
pub(super) struct Connections {
    options: ConnOptions,
    writer: Mutex<Connection>,
    /// Idle readers; `None` for an in-memory database, whose only connection is the
    /// writer.
    readers: Option<Mutex<Vec<Connection>>>,
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
    pub fn write<T>(
        &self,
        operation: &'static str,
        f: impl FnOnce(&Transaction<'_>) -> Result<T>,
    ) -> Result<T> {
        let mut conn = lock(&self.writer);
        let tx = conn
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .map_err(storage(operation))?;
        let out = f(&tx)?;
        tx.commit().map_err(storage(operation))?;
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
