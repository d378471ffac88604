//! Opening a [`SqliteSaver`]: [`SqliteSaverBuilder`] and its options, the constructors
//! that use it, and the checks an open makes before it writes anything (or, without
//! `create`, instead of writing anything).

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use super::conn::{ConnOptions, Connections};
use super::schema::{self, Layout};
use super::{Inner, SqliteSaver, Synchronous};
use crate::compression::DEFAULT_MAX_DECOMPRESSED_PER_CALL;
use crate::saver::error::SaverFault;
use crate::saver::Result;
use crate::serializer::{JsonPlusSerializer, Serializer};

/// Options for opening a [`SqliteSaver`]; from [`SqliteSaver::builder`].
#[derive(Clone, Debug)]
#[must_use = "call .open() to open the saver"]
pub struct SqliteSaverBuilder {
    path: Option<PathBuf>,
    serde: Option<Arc<dyn Serializer>>,
    busy_timeout: Duration,
    synchronous: Synchronous,
    max_idle_readers: usize,
    create: bool,
    max_decompressed_per_call: usize,
    inline_fast_path: bool,
}

impl SqliteSaverBuilder {
    /// The serializer rows are written and read with (default: [`JsonPlusSerializer`];
    /// use an [`EncryptedSerializer`](crate::crypto::EncryptedSerializer) to encrypt).
    pub fn serializer(mut self, serde: Arc<dyn Serializer>) -> Self {
        self.serde = Some(serde);
        self
    }

    /// How long a write waits for another process's write lock before failing
    /// (default 5 s, Python's `sqlite3` default).
    pub fn busy_timeout(mut self, timeout: Duration) -> Self {
        self.busy_timeout = timeout;
        self
    }

    /// `PRAGMA synchronous` for this saver's connections (default
    /// [`Synchronous::Normal`]).
    pub fn synchronous(mut self, synchronous: Synchronous) -> Self {
        self.synchronous = synchronous;
        self
    }

    /// How many idle reader connections are kept open (default 8; at least 1).
    pub fn max_idle_readers(mut self, n: usize) -> Self {
        self.max_idle_readers = n.max(1);
        self
    }

    /// The most bytes the `+zlib` rows of one `get_tuple`, `list` or
    /// `get_delta_channel_history` call may decompress to in total (default
    /// [`DEFAULT_MAX_DECOMPRESSED_PER_CALL`], 1 GiB; see [`DecompressionBudget`](crate::compression::DecompressionBudget)). Past
    /// it the call fails with
    /// [`ErrorKind::DecompressionBudget`](crate::ErrorKind::DecompressionBudget)
    /// inside [`ErrorKind::UnreadableRow`](crate::ErrorKind::UnreadableRow).
    pub fn max_decompressed_per_call(mut self, limit: usize) -> Self {
        self.max_decompressed_per_call = limit;
        self
    }

    /// Whether [`open`](Self::open) may create a store (default `false`). With `true`
    /// it does what Python's `setup()` does: creates the file if it is missing, switches
    /// it to WAL, creates the two tables or completes them (the `task_path`
    /// migration); [`SqliteSaver::create`] is the shorthand. With `false` it writes
    /// nothing: the file must exist and hold Python's tables, and its journal mode is
    /// left as it is. Either way another application's database is refused before
    /// anything is written.
    pub fn create(mut self, create: bool) -> Self {
        self.create = create;
        self
    }

    /// Whether `put`, `put_writes` and `get_tuple` run their SQL on the calling task
    /// when it cannot wait (default `true`); with `false` every call inside a Tokio
    /// runtime runs on Tokio's blocking pool.
    ///
    /// The fast path runs a call inline only when the writer (or an idle reader) is free
    /// in this process, the commit does not sync (WAL with `synchronous=NORMAL`, or
    /// `OFF`), no checkpoint or WAL restart is due, the write is small (under ~64 KB)
    /// and no other connection or process holds the lock it needs: the statement is
    /// tried with a zero busy timeout, so such a lock fails at once (the transaction
    /// rolled back, nothing written) and the call is run again on the blocking pool,
    /// where it waits up to the [busy timeout](Self::busy_timeout). Inline, a call costs
    /// the executor thread a few tens of µs of CPU (a 20-message `put` ~30 µs, within
    /// Tokio's guidance of 10–100 µs between awaits) instead of the hop to the pool and
    /// back (~18 µs and two thread wake-ups). Turn it off when even that is too long
    /// between awaits for your executor, or when the file sits on a slow or network file
    /// system, where any read may wait for the disk. See `docs/sqlite-saver.md`.
    pub fn inline_fast_path(mut self, inline: bool) -> Self {
        self.inline_fast_path = inline;
        self
    }

    /// The same as [`create`](Self::create) (the name of earlier versions).
    pub fn setup(self, setup: bool) -> Self {
        self.create(setup)
    }

    /// Opens the store: with [`create(true)`](Self::create) sets it up as Python's
    /// `setup()` does, otherwise opens an existing one without writing anything.
    ///
    /// # Errors
    /// - [`ErrorKind::StoreNotFound`](crate::ErrorKind::StoreNotFound) without `create(true)`, when the file does not
    ///   exist (nothing is created) or holds none of LangGraph's tables;
    /// - [`ErrorKind::Schema`](crate::ErrorKind::Schema) when the database is another application's (other
    ///   tables, or tables of these names with another layout), refused before
    ///   anything is written; without `create(true)`, also for Python's tables in an
    ///   incomplete state that only `setup()` completes (e.g. `writes` from before
    ///   Python's `task_path` migration);
    /// - [`ErrorKind::Storage`](crate::ErrorKind::Storage) if SQLite cannot open the file.
    pub fn open(self) -> Result<SqliteSaver> {
        let location = self
            .path
            .as_ref()
            .map(|p| p.display().to_string())
            .unwrap_or_else(|| ":memory:".to_owned());
        if let Some(path) = &self.path {
            if !self.create && is_missing(path) {
                return Err(SaverFault::StoreNotFound {
                    location,
                    reason: format!(
                        "the file does not exist (nothing was created; check the path). \
                         {HOW_TO_CREATE}"
                    ),
                }
                .into());
            }
        }
        let create = self.create || self.path.is_none();
        let conns = Connections::open(ConnOptions {
            path: self.path,
            busy_timeout: self.busy_timeout,
            synchronous: self.synchronous,
            max_idle_readers: self.max_idle_readers,
            create,
        })?;
        if create {
            conns.with_writer(schema::setup)?;
        } else {
            conns.with_writer(|c| open_existing(c, location))?;
        }
        conns.note_journal_mode();
        Ok(SqliteSaver {
            inner: Arc::new(Inner {
                serde: self
                    .serde
                    .unwrap_or_else(|| Arc::new(JsonPlusSerializer::new())),
                conns,
                max_decompressed_per_call: self.max_decompressed_per_call,
                inline: self.inline_fast_path,
            }),
        })
    }
}

/// How to make a store, for [`ErrorKind::StoreNotFound`](crate::ErrorKind::StoreNotFound).
const HOW_TO_CREATE: &str = "To make a new store there, as Python's setup() does, use \
     SqliteSaver::create(path) or SqliteSaver::builder(path).create(true).";

/// Whether `path` surely names no file (not a `file:` URI, and the file system says
/// not found; any other answer is left to SQLite).
fn is_missing(path: &Path) -> bool {
    if path.to_str().is_some_and(|p| p.starts_with("file:")) {
        return false;
    }
    matches!(std::fs::metadata(path), Err(e) if e.kind() == std::io::ErrorKind::NotFound)
}

/// The checks of an open without `create`: Python's tables must be there, complete;
/// nothing is written.
fn open_existing(conn: &mut rusqlite::Connection, location: String) -> Result<()> {
    match schema::inspect_layout(conn)? {
        Layout::Python => Ok(()),
        Layout::Empty => Err(SaverFault::StoreNotFound {
            location,
            reason: format!(
                "the file holds none of LangGraph's checkpoint tables (nothing was \
                 written). {HOW_TO_CREATE}"
            ),
        }
        .into()),
        Layout::Incomplete { reason } => Err(SaverFault::Schema {
            reason: format!(
                "{reason}; SqliteSaver::create(path) (or builder(path).create(true)) \
                 completes it as Python's setup() does"
            ),
        }
        .into()),
        Layout::Foreign { reason } => Err(SaverFault::Schema { reason }.into()),
    }
}

impl SqliteSaver {
    /// A builder for a saver on the file at `path`.
    pub fn builder(path: impl AsRef<Path>) -> SqliteSaverBuilder {
        SqliteSaverBuilder {
            path: Some(path.as_ref().to_path_buf()),
            serde: None,
            busy_timeout: Duration::from_secs(5),
            synchronous: Synchronous::default(),
            max_idle_readers: 8,
            create: false,
            max_decompressed_per_call: DEFAULT_MAX_DECOMPRESSED_PER_CALL,
            inline_fast_path: true,
        }
    }

    /// Opens the existing store at `path` with the default options and Python's
    /// [`JsonPlusSerializer`], writing nothing: the file must exist and hold Python's
    /// tables (its journal mode is left as it is). A mistyped path is
    /// [`ErrorKind::StoreNotFound`](crate::ErrorKind::StoreNotFound), not a new empty store; to make a store, use
    /// [`create`](Self::create).
    ///
    /// # Errors
    /// As [`SqliteSaverBuilder::open`].
    pub fn open(path: impl AsRef<Path>) -> Result<Self> {
        Self::builder(path).open()
    }

    /// Opens the store at `path`, creating it as Python's `setup()` does (the file if
    /// missing, WAL mode, both tables, the `task_path` migration), with the default
    /// options and Python's [`JsonPlusSerializer`]. Another application's SQLite file
    /// is refused ([`ErrorKind::Schema`](crate::ErrorKind::Schema)) before anything is written.
    ///
    /// # Errors
    /// As [`SqliteSaverBuilder::open`].
    pub fn create(path: impl AsRef<Path>) -> Result<Self> {
        Self::builder(path).create(true).open()
    }

    /// A saver on a private in-memory database (one connection; for tests).
    ///
    /// # Errors
    /// As [`SqliteSaverBuilder::open`].
    pub fn open_in_memory() -> Result<Self> {
        SqliteSaverBuilder {
            path: None,
            ..Self::builder("")
        }
        .open()
    }
}
