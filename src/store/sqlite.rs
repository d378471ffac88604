//! The SQLite backend: Python's `checkpoints` and `writes` tables, opened read-only
//! unless the operation writes; nothing is created, the journal mode is left alone.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use rusqlite::types::{Value as SqlValue, ValueRef};
use rusqlite::{Connection, OpenFlags, TransactionBehavior};

use super::backend::{page_sql, row_sql, KeyPart, Row, Table, Update, Values};
use super::error::StoreFault;
use crate::error::Error;
use crate::saver::sqlite::Catalog;

type Result<T, E = Error> = std::result::Result<T, E>;

#[cfg(all(feature = "sqlite", feature = "postgres"))]
mod checkpoints;

pub(crate) const TABLES: [Table; 2] = [
    Table {
        name: "checkpoints",
        key: &["thread_id", "checkpoint_ns", "checkpoint_id"],
        type_col: "type",
        value_col: "checkpoint",
        label: "checkpoints.checkpoint",
    },
    Table {
        name: "writes",
        key: &[
            "thread_id",
            "checkpoint_ns",
            "checkpoint_id",
            "task_id",
            "idx",
        ],
        type_col: "type",
        value_col: "value",
        label: "writes.value",
    },
];

/// The bytes of a thread id SQLite holds as text that is not UTF-8, carried out of a
/// row closure by [`thread_cell`] inside rusqlite's conversion error, named by [`sq`].
#[derive(Debug)]
struct ThreadIdNotText(Vec<u8>);

impl std::fmt::Display for ThreadIdNotText {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "a thread id of {} byte(s) that are not UTF-8",
            self.0.len()
        )
    }
}

impl std::error::Error for ThreadIdNotText {}

/// Column `i` of `row`, a thread id: text as rusqlite reads it; text that is not UTF-8
/// fails with its bytes, which [`sq`] names as a thread id
/// ([`thread_id_not_text`](super::error::thread_id_not_text)).
#[cfg_attr(not(feature = "postgres"), allow(dead_code))]
pub(crate) fn thread_cell(row: &rusqlite::Row<'_>, i: usize) -> rusqlite::Result<String> {
    match row.get_ref(i)? {
        ValueRef::Text(b) => match std::str::from_utf8(b) {
            Ok(s) => Ok(s.to_owned()),
            Err(_) => Err(rusqlite::Error::FromSqlConversionFailure(
                i,
                rusqlite::types::Type::Text,
                Box::new(ThreadIdNotText(b.to_vec())),
            )),
        },
        _ => row.get(i),
    }
}

pub(crate) fn sq(operation: &'static str) -> impl Fn(rusqlite::Error) -> Error {
    move |source| match source {
        // Text SQLite holds that is not UTF-8 (not Python's: its sqlite3 cannot read it
        // either) is the row's fault, not the database's.
        rusqlite::Error::FromSqlConversionFailure(i, rusqlite::types::Type::Text, e) => {
            match e.downcast_ref::<ThreadIdNotText>() {
                Some(ThreadIdNotText(bytes)) => super::error::thread_id_not_text(bytes),
                None => StoreFault::Unreadable {
                    what: format!("column {i} of a row ({operation})"),
                    reason: format!("text expected, found bytes that are not UTF-8 text ({e})"),
                }
                .into(),
            }
        }
        source => StoreFault::Sqlite { operation, source }.into(),
    }
}

/// A [`ReadOnly`](crate::ErrorKind::ReadOnly) error when SQLite opened `location`
/// read-only (no write permission on the file or its directory, a read-only mount),
/// before anything is written.
pub(crate) fn refuse_read_only(conn: &Connection, location: &str) -> Result<(), Error> {
    if conn.is_readonly(rusqlite::MAIN_DB).map_err(sq("open"))? {
        return Err(read_only(location));
    }
    Ok(())
}

/// The [`ReadOnly`](crate::ErrorKind::ReadOnly) error for the file at `location`.
fn read_only(location: &str) -> Error {
    StoreFault::ReadOnly {
        location: location.to_owned(),
        reason: "SQLite opened the file read-only (no write permission on it or its \
                 directory, or a read-only mount): run as a user who may write both, or \
                 give --dry-run to see what would be done"
            .to_owned(),
    }
    .into()
}

#[cfg(feature = "postgres")]
/// A BLOB or TEXT cell as bytes; NULL as `None`.
pub(crate) fn cell_bytes(row: &rusqlite::Row<'_>, i: usize) -> rusqlite::Result<Option<Vec<u8>>> {
    Ok(match row.get_ref(i)? {
        ValueRef::Null => None,
        ValueRef::Blob(b) | ValueRef::Text(b) => Some(b.to_vec()),
        ValueRef::Integer(n) => Some(n.to_string().into_bytes()),
        ValueRef::Real(f) => Some(f.to_string().into_bytes()),
    })
}

/// A SQLite store: one connection to its file, shared by the sweeps' blocking jobs
/// ([`Values`]) and the checkpoint operations ([`Checkpoints`](super::backend::Checkpoints),
/// in `sqlite/checkpoints.rs`), and the sweep lock beside it (`FILE.retain-lock`).
pub(crate) struct SqliteStore {
    conn: Arc<Mutex<Connection>>,
    /// The file (the sweep lock's file is beside it).
    #[cfg_attr(not(feature = "postgres"), allow(dead_code))]
    path: PathBuf,
    location: String,
    /// LangGraphJS wrote it: audited, never rewritten.
    pub(crate) js: bool,
    /// The lock file's connection, inside `BEGIN IMMEDIATE`, while the sweep lock is held.
    #[cfg_attr(not(feature = "postgres"), allow(dead_code))]
    lock: Mutex<Option<Connection>>,
}

impl std::fmt::Debug for SqliteStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SqliteStore")
            .field("location", &self.location)
            .finish_non_exhaustive()
    }
}

/// A SQLite file that holds no table (`path`), as [`StoreFault::NotAStore`] with what
/// to do: an empty file is most often a mistyped path that Python's
/// `sqlite3.connect()` created (it makes the file, and writes nothing, when the path
/// does not exist).
pub(crate) fn no_tables(path: &Path, location: &str) -> Error {
    let found = if std::fs::metadata(path).is_ok_and(|m| m.len() == 0) {
        "an empty file (0 bytes; Python's sqlite3.connect() leaves one at a path that did \
         not exist): check the path, and give the store's own database file"
    } else {
        "an SQLite database without tables (a store's tables are made by Python's setup(), \
         or by lgcodec store copy or import into it)"
    };
    not_a_store(location, found.to_owned())
}

fn not_a_store(location: &str, found: String) -> Error {
    StoreFault::NotAStore {
        location: location.to_owned(),
        found,
    }
    .into()
}

/// Checks, without writing, that both tables hold the columns the sweeps read and
/// rewrite: the primary key, `type` and the value (the saver's catalog reader; other
/// columns, such as `writes.task_path` that older releases and LangGraphJS do not
/// have, and declared types are not the sweep's concern). Returns whether LangGraphJS
/// wrote it (its readers cannot open encrypted rows: the sweeps do not rewrite it).
fn check_layout(conn: &Connection, path: &Path, location: &str) -> Result<bool> {
    let catalog = Catalog::read(conn).map_err(|e| match e {
        rusqlite::Error::SqliteFailure(f, _) if f.code == rusqlite::ErrorCode::NotADatabase => {
            not_a_store(location, "the file is not an SQLite database".to_owned())
        }
        other => sq("open")(other),
    })?;
    for table in ["checkpoints", "writes"] {
        if !catalog.has_table(table) {
            let tables: Vec<&str> = catalog.table_names().collect();
            if tables.is_empty() {
                return Err(no_tables(path, location));
            }
            let found = format!(
                "an SQLite database with tables {} and no {table} table",
                tables.join(", ")
            );
            return Err(not_a_store(location, found));
        }
        let columns = catalog.column_names(table);
        let swept = TABLES
            .iter()
            .filter(|t| t.name == table)
            .flat_map(|t| t.key.iter().copied().chain([t.type_col, t.value_col]));
        if let Some(column) = swept.clone().find(|c| !columns.iter().any(|f| f == c)) {
            let layout = crate::saver::layout::detect_sqlite(conn).ok();
            let hint = match layout {
                Some(l @ crate::saver::layout::StoreLayout::SqliteThreadTs { .. }) => format!(
                    "; it is {l}: copy it into a fresh store first (lgcodec store copy OLD NEW), then audit or encrypt that"
                ),
                _ => String::new(),
            };
            return Err(not_a_store(
                location,
                format!(
                    "table {table} has no column {column} (columns: {}){hint}",
                    columns.join(", ")
                ),
            ));
        }
    }
    Ok(crate::saver::layout::detect_sqlite(conn).ok()
        == Some(crate::saver::layout::StoreLayout::SqliteJs))
}

/// A key part as a statement parameter, bound as it was stored (a TEXT cell whose bytes
/// are not UTF-8 goes back as those bytes, as TEXT); borrowed, nothing copied.
struct KeyParam<'a>(&'a KeyPart);

impl rusqlite::ToSql for KeyParam<'_> {
    fn to_sql(&self) -> rusqlite::Result<rusqlite::types::ToSqlOutput<'_>> {
        Ok(rusqlite::types::ToSqlOutput::Borrowed(match self.0 {
            KeyPart::Text(s) => ValueRef::Text(s.as_bytes()),
            KeyPart::Int(i) => {
                return Ok(rusqlite::types::ToSqlOutput::Owned(SqlValue::Integer(*i)))
            }
            KeyPart::Bytes { blob: true, bytes } => ValueRef::Blob(bytes),
            KeyPart::Bytes { blob: false, bytes } => ValueRef::Text(bytes),
        }))
    }
}

fn key_params(key: &[KeyPart]) -> Vec<KeyParam<'_>> {
    key.iter().map(KeyParam).collect()
}

fn read_row(t: &Table, r: &rusqlite::Row<'_>) -> rusqlite::Result<Row> {
    let mut key = Vec::with_capacity(t.key.len());
    for (i, column) in t.key.iter().enumerate() {
        key.push(if Table::is_int(column) {
            KeyPart::Int(r.get(i)?)
        } else {
            match r.get_ref(i)? {
                ValueRef::Text(b) => match std::str::from_utf8(b) {
                    Ok(s) => KeyPart::Text(s.to_owned()),
                    Err(_) => KeyPart::Bytes {
                        blob: false,
                        bytes: b.to_vec(),
                    },
                },
                ValueRef::Blob(b) => KeyPart::Bytes {
                    blob: true,
                    bytes: b.to_vec(),
                },
                // Python's tables declare their key columns TEXT NOT NULL: anything else
                // is not a row Python wrote; SQLite's error names the column.
                _ => KeyPart::Text(r.get(i)?),
            }
        });
    }
    let n = t.key.len();
    let tag: Option<String> = r.get(n)?;
    let data = match r.get_ref(n + 1)? {
        ValueRef::Null => None,
        ValueRef::Blob(b) => Some(b.to_vec()),
        // Python writes bytes (BLOB); a TEXT value is read as its bytes, and a
        // compare-and-swap against a BLOB parameter never matches it.
        ValueRef::Text(b) => Some(b.to_vec()),
        ValueRef::Integer(i) => Some(i.to_string().into_bytes()),
        ValueRef::Real(f) => Some(f.to_string().into_bytes()),
    };
    Ok(Row { key, tag, data })
}

/// An SQLite store must already exist as a regular file: opening a missing path would
/// make an empty database there (and these operations create nothing), and a
/// directory, a device or a pipe is no database, nor is a backup file.
///
/// # Errors
/// [`ErrorKind::StoreNotFound`](crate::ErrorKind::StoreNotFound) naming the path and
/// why (no such file, no permission to look); [`ErrorKind::NotAStore`](crate::ErrorKind::NotAStore)
/// naming what is there instead.
pub(crate) fn require_sqlite_file(path: &std::path::Path) -> Result<()> {
    let meta = std::fs::metadata(path).map_err(|e| StoreFault::NotFound {
        path: path.to_path_buf(),
        reason: match e.kind() {
            std::io::ErrorKind::NotFound => "no such file".to_owned(),
            _ => e.to_string(),
        },
    })?;
    if meta.is_file() {
        // A header is well under this.
        let mut head = Vec::new();
        let _ = std::fs::File::open(path)
            .and_then(|f| std::io::Read::read_to_end(&mut std::io::Read::take(f, 4096), &mut head));
        // An empty file is an empty database (and a WAL database's file can be empty
        // until its first checkpoint); anything else begins with SQLite's header.
        if head.is_empty() || head.starts_with(crate::saver::layout::SQLITE_HEADER) {
            return Ok(());
        }
        if !super::backend::begins_a_backup(&head) {
            // It was "detect layout: the database failed: file is not a database".
            return Err(StoreFault::NotAStore {
                location: path.display().to_string(),
                found: "the file is not an SQLite database (it does not begin with SQLite's \
                        header; nor does an encrypted SQLCipher one): give the path of the \
                        store's database file"
                    .to_owned(),
            }
            .into());
        }
        let file = super::error::shell_word(&path.display().to_string());
        return Err(StoreFault::NotAStore {
            location: path.display().to_string(),
            found: format!(
                "it is a backup file (`lgcodec store export` wrote it): `lgcodec store verify {file}` checks it, and `lgcodec store import {file} STORE` restores it into a store"
            ),
        }
        .into());
    }
    Err(StoreFault::NotAStore {
        location: path.display().to_string(),
        found: format!(
            "{}, not a file: give the path of the SQLite database file",
            what_is_there(&meta.file_type())
        ),
    }
    .into())
}

/// Creates the empty file a new store at `path` starts as (SQLite takes an empty file
/// for an empty database), so that what stops it is said as the system says it,
/// with what to do: a directory that is not there, one the user may not write in.
/// (SQLite's own answer is "unable to open database file" for all of these.) A file
/// someone else made meanwhile is left to the caller's layout check. Whether the file
/// was made here.
#[cfg(all(feature = "sqlite", feature = "postgres"))]
fn make_file(path: &Path, location: &str) -> Result<bool> {
    use std::io::ErrorKind as Io;
    let e = match std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(path)
    {
        Ok(_) => return Ok(true),
        Err(e) if e.kind() == Io::AlreadyExists => return Ok(false),
        Err(e) => e,
    };
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.display().to_string(),
        _ => ".".to_owned(),
    };
    Err(match e.kind() {
        Io::NotFound => StoreFault::NotFound {
            path: path.to_path_buf(),
            reason: format!(
                "cannot create it: {e}: the directory {dir} is not there; create it first \
                 (mkdir -p), or give a path in a directory that exists"
            ),
        },
        Io::NotADirectory => StoreFault::NotFound {
            path: path.to_path_buf(),
            reason: format!(
                "cannot create it: {e}: a part of {dir} is a file, not a directory; give \
                 a path in a directory"
            ),
        },
        Io::PermissionDenied | Io::ReadOnlyFilesystem => StoreFault::ReadOnly {
            location: location.to_owned(),
            reason: format!(
                "cannot create it: {e}: this user may not create files in {dir}; give a \
                 path in a directory it may write, or run as a user who may write there"
            ),
        },
        _ => StoreFault::NotFound {
            path: path.to_path_buf(),
            reason: format!("cannot create it: {e}"),
        },
    }
    .into())
}

/// What a path that is not a regular file is.
fn what_is_there(t: &std::fs::FileType) -> &'static str {
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt as _;
        if t.is_char_device() {
            return "a character device";
        }
        if t.is_block_device() {
            return "a block device";
        }
        if t.is_fifo() {
            return "a named pipe";
        }
        if t.is_socket() {
            return "a socket";
        }
    }
    if t.is_dir() {
        "a directory"
    } else {
        "not a regular file"
    }
}

impl SqliteStore {
    /// Opens the file at `path`: read-only (`SQLITE_OPEN_READ_ONLY`), or read-write
    /// without creating it. Checks Python's layout.
    pub(crate) fn open(path: &Path, writable: bool, location: &str) -> Result<Self> {
        require_sqlite_file(path)?;
        let conn = if writable {
            Connection::open_with_flags(
                path,
                OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_NO_MUTEX,
            )
            .map_err(sq("open"))?
        } else {
            // The readers' opener: locks like any reader, leaves no -wal/-shm behind.
            crate::saver::layout::open_sqlite_read_only(path)?
        };
        conn.busy_timeout(crate::saver::layout::SQLITE_BUSY_WAIT)
            .map_err(sq("open"))?;
        let js = match check_layout(&conn, path, location) {
            // As in `open_current`: a WAL file opened read-only where its -shm cannot
            // be made does not read; said as read-only.
            Err(_) if writable && conn.is_readonly(rusqlite::MAIN_DB).unwrap_or(false) => {
                return Err(read_only(location))
            }
            checked => checked?,
        };
        if writable {
            // This connection's commits only: under WAL (Python's setup), NORMAL syncs at
            // checkpoints, not at every batch; a power cut may undo the last batches
            // (never corrupting the file), which the next run redoes.
            conn.pragma_update(None, "synchronous", "NORMAL")
                .map_err(sq("open"))?;
            // The bundled SQLite leaves a rewritten row's old cell and freed pages as
            // they were: after an encrypt the plaintext would stay in the file. With
            // secure_delete this connection's rewrites overwrite what they free with
            // zeros (space freed earlier by other writers is `vacuum`'s).
            conn.pragma_update(None, "secure_delete", "ON")
                .map_err(sq("open"))?;
        }
        if writable {
            refuse_read_only(&conn, location)?;
        }
        Ok(SqliteStore {
            js,
            ..Self::over(conn, path, location)
        })
    }

    /// A store in today's Python layout over `conn`, opened (and its layout checked)
    /// by the caller: the target of prune, retain, import and copy;
    /// [`open`](Self::open) says whether LangGraphJS wrote it.
    fn over(conn: Connection, path: &Path, location: &str) -> Self {
        SqliteStore {
            conn: Arc::new(Mutex::new(conn)),
            path: path.to_owned(),
            location: location.to_owned(),
            js: false,
            lock: Mutex::new(None),
        }
    }

    #[cfg(all(feature = "sqlite", feature = "postgres"))]
    /// The connection, for a statement run here (not on a blocking job).
    fn conn(&self) -> std::sync::MutexGuard<'_, Connection> {
        self.conn
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    async fn run<T: Send + 'static>(
        &self,
        f: impl FnOnce(&mut Connection) -> Result<T> + Send + 'static,
    ) -> Result<T> {
        let conn = Arc::clone(&self.conn);
        let job = move || {
            let mut c = conn.lock().unwrap_or_else(|e| e.into_inner());
            f(&mut c)
        };
        match tokio::runtime::Handle::try_current() {
            Ok(handle) => handle
                .spawn_blocking(job)
                .await
                .map_err(|e| StoreFault::Task(e.to_string()))?,
            Err(_) => job(),
        }
    }
}

#[cfg(all(feature = "sqlite", feature = "postgres"))]
impl SqliteStore {
    /// Opens the file at `path` for writing, in today's Python layout: a missing file
    /// (or one without tables) gets Python's tables, as Python's `setup()` makes them
    /// (WAL included), when `create_if_empty`, and is refused otherwise. Returns the
    /// store and whether its tables were created.
    ///
    /// # Errors
    /// [`ErrorKind::NotAStore`](crate::ErrorKind::NotAStore) for another layout than
    /// today's, [`ErrorKind::ReadOnly`](crate::ErrorKind::ReadOnly), or SQLite's error.
    pub(crate) fn open_current(
        path: &Path,
        create_if_empty: bool,
        location: &str,
    ) -> Result<(Self, bool)> {
        use crate::saver::layout::StoreLayout;
        if !create_if_empty || path.exists() {
            // What is to be maintained must be there: a missing path (or a directory)
            // is said as such, not as an empty store; so is a backup file.
            require_sqlite_file(path)?;
        }
        let saver_err = super::error::saver_err(location);
        let create = || -> Result<()> {
            crate::saver::sqlite::SqliteSaver::create(path).map_err(&saver_err)?;
            Ok(())
        };
        // One read-write connection decides the layout and then writes (SQLite opens
        // a file it may not write read-only, which is refused once the layout is
        // known, so a file of another layout is named as such first).
        let open = || -> Result<Connection> {
            let conn = Connection::open_with_flags(path, OpenFlags::SQLITE_OPEN_READ_WRITE)
                .map_err(sq("open"))?;
            conn.busy_timeout(crate::saver::layout::SQLITE_BUSY_WAIT)
                .map_err(sq("open"))?;
            Ok(conn)
        };
        let (conn, created) = if path.is_file() {
            let conn = open()?;
            let layout = match crate::saver::layout::detect_sqlite(&conn) {
                Ok(layout) => layout,
                // A WAL file SQLite opened read-only cannot be read where its -shm
                // cannot be made ("attempt to write a readonly database"): said as
                // read-only, not as "not a store".
                Err(_) if conn.is_readonly(rusqlite::MAIN_DB).unwrap_or(false) => {
                    return Err(read_only(location))
                }
                Err(e) => return Err(saver_err(e)),
            };
            let created = match layout {
                StoreLayout::SqlitePython => false,
                StoreLayout::Empty if create_if_empty => {
                    create()?;
                    true
                }
                StoreLayout::Empty => return Err(no_tables(path, location)),
                other => return Err(super::error::not_current(location, &other)),
            };
            (conn, created)
        } else if create_if_empty {
            let made = make_file(path, location)?;
            if let Err(e) = create() {
                if made {
                    let _ = std::fs::remove_file(path);
                }
                return Err(e);
            }
            (open()?, true)
        } else {
            return Err(super::error::not_current(location, &StoreLayout::Empty));
        };
        refuse_read_only(&conn, location)?;
        // In WAL mode (Python's setup() sets it), commits need not wait for an
        // fsync each, as the savers' own writer does: a crash or kill leaves every
        // committed transaction; a power cut may lose the last ones, never the
        // file's consistency. (Prune commits once per thread, copy and import once
        // per batch: with FULL, 10,000 threads pruned waited on 10,000 fsyncs.)
        let wal: String = conn
            .query_row("PRAGMA journal_mode", [], |r| r.get(0))
            .map_err(sq("open"))?;
        if wal.eq_ignore_ascii_case("wal") {
            conn.execute_batch("PRAGMA synchronous = NORMAL")
                .map_err(sq("open"))?;
        }
        Ok((Self::over(conn, path, location), created))
    }

    /// Opens the file at `path` read-only, in any layout a saver wrote, for inspection
    /// (`AnyStore`): the store and its layout. Nothing is written and no `-wal`/`-shm`
    /// is left behind (the readers' opener).
    ///
    /// # Errors
    /// [`ErrorKind::StoreNotFound`](crate::ErrorKind::StoreNotFound),
    /// [`ErrorKind::NotAStore`](crate::ErrorKind::NotAStore), or SQLite's error.
    pub(crate) fn open_any(
        path: &Path,
        location: &str,
    ) -> Result<(Self, crate::saver::layout::StoreLayout)> {
        use crate::saver::layout::StoreLayout;
        require_sqlite_file(path)?;
        let saver_err = super::error::saver_err(location);
        let conn = crate::saver::layout::open_sqlite_read_only(path).map_err(&saver_err)?;
        let layout = crate::saver::layout::detect_sqlite(&conn).map_err(&saver_err)?;
        if layout == StoreLayout::Empty {
            return Err(no_tables(path, location));
        }
        super::error::refuse_unsaved(location, &layout)?;
        let store = SqliteStore {
            js: layout == StoreLayout::SqliteJs,
            ..Self::over(conn, path, location)
        };
        Ok((store, layout))
    }

    /// The store's connection, shared with the reader of its rows in any layout.
    pub(crate) fn shared_conn(&self) -> Arc<Mutex<Connection>> {
        Arc::clone(&self.conn)
    }

    /// A dry run's view of the file at `path`: read-only, nothing created; `None` when
    /// there is no store there yet (no file, or a file without the saver's tables).
    ///
    /// # Errors
    /// [`ErrorKind::NotAStore`](crate::ErrorKind::NotAStore) for another layout than
    /// today's, or SQLite's error.
    pub(crate) fn view(path: &Path, location: &str) -> Result<Option<Self>> {
        use crate::saver::layout::StoreLayout;
        if !path.exists() {
            return Ok(None);
        }
        require_sqlite_file(path)?;
        let conn = crate::saver::layout::open_sqlite_read_only(path)?;
        match crate::saver::layout::detect_sqlite(&conn)
            .map_err(super::error::saver_err(location))?
        {
            StoreLayout::Empty => Ok(None),
            StoreLayout::SqlitePython => {
                conn.busy_timeout(crate::saver::layout::SQLITE_BUSY_WAIT)
                    .map_err(sq("open"))?;
                Ok(Some(Self::over(conn, path, location)))
            }
            other => Err(super::error::not_current(location, &other)),
        }
    }
}

#[async_trait::async_trait]
impl Values for SqliteStore {
    fn name(&self) -> &'static str {
        "sqlite"
    }

    fn tables(&self) -> &'static [Table] {
        &TABLES
    }

    fn rewrite_refused(&self) -> Option<&'static str> {
        self.js.then_some(
            "a LangGraphJS SQLite store: its readers cannot open encrypted rows, so it is \
             not rewritten; audit it, or copy it into a Python store (lgcodec store copy OLD NEW)",
        )
    }

    fn never_encrypted(&self) -> Vec<String> {
        vec![
            "checkpoints.metadata (JSON text)".to_owned(),
            "key columns: thread_id, checkpoint_ns, checkpoint_id, parent_checkpoint_id, task_id, task_path, idx, channel".to_owned(),
        ]
    }

    fn left_behind(&self) -> &'static str {
        "the rewrites zeroed what they freed (secure_delete), but a page split leaves \
         old cell bytes in unused space inside pages until VACUUM (run again with \
         --vacuum); copies and backups of the file keep theirs"
    }

    async fn free_space(&self) -> Result<crate::store::FreeSpace> {
        self.run(move |c| {
            let pages: i64 = c
                .query_row("PRAGMA freelist_count", [], |r| r.get(0))
                .map_err(sq("read"))?;
            let size: i64 = c
                .query_row("PRAGMA page_size", [], |r| r.get(0))
                .map_err(sq("read"))?;
            let pages = u64::try_from(pages).unwrap_or(0);
            Ok(crate::store::FreeSpace {
                free_pages: Some(pages),
                free_bytes: Some(pages.saturating_mul(u64::try_from(size).unwrap_or(0))),
                note: "pages on SQLite's free list, which keep whatever they held; free space \
                       inside pages and the -wal file are not counted: VACUUM (`store encrypt|rekey \
                       --vacuum`) rewrites every page and truncates the WAL. Copies of the file, \
                       backups and the filesystem's old blocks are beyond it."
                    .to_owned(),
                ..crate::store::FreeSpace::default()
            })
        })
        .await
    }

    /// `VACUUM` (every page rewritten, the free list emptied), then a truncating WAL
    /// checkpoint (old page images in the `-wal` file gone) when the file is in WAL
    /// mode. What is left, if anything.
    async fn vacuum(&self) -> Result<(bool, Option<String>)> {
        let left = self
            .run(move |c| {
                c.execute_batch("VACUUM").map_err(sq("vacuum"))?;
                let mode: String = c
                    .query_row("PRAGMA journal_mode", [], |r| r.get(0))
                    .map_err(sq("vacuum"))?;
                if mode.eq_ignore_ascii_case("wal") {
                    // (busy, log frames, checkpointed frames): busy when a reader held the
                    // WAL; the frames are then overwritten by later writes, not removed.
                    let busy: i64 = c
                        .query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |r| r.get(0))
                        .map_err(sq("vacuum"))?;
                    if busy != 0 {
                        return Ok(Some(
                        "a reader kept the -wal file from being truncated: its old page images \
                         stay until later writes overwrite them; run the sweep with --vacuum again \
                         (or `PRAGMA wal_checkpoint(TRUNCATE)`) when readers are idle"
                            .to_owned(),
                    ));
                    }
                }
                Ok(None)
            })
            .await?;
        Ok((true, left))
    }

    async fn count(&self, t: &'static Table) -> Result<u64> {
        self.run(move |c| {
            let n: i64 = c
                .query_row(&format!("SELECT count(*) FROM {}", t.name), [], |r| {
                    r.get(0)
                })
                .map_err(sq("count"))?;
            Ok(u64::try_from(n).unwrap_or(0))
        })
        .await
    }

    async fn page(
        &self,
        t: &'static Table,
        after: Option<Vec<KeyPart>>,
        limit: usize,
        max_bytes: usize,
    ) -> Result<Vec<Row>> {
        self.run(move |c| {
            let sql = page_sql(t, after.is_some(), |i| format!("?{i}"));
            let limit = KeyPart::Int(i64::try_from(limit).unwrap_or(i64::MAX));
            let mut params = after.as_deref().map(key_params).unwrap_or_default();
            params.push(KeyParam(&limit));
            let mut stmt = c.prepare_cached(&sql).map_err(sq("read"))?;
            let mut cursor = stmt
                .query_map(rusqlite::params_from_iter(params), |r| read_row(t, r))
                .map_err(sq("read"))?;
            // SQLite steps one row at a time: the page ends once its values hold
            // `max_bytes` (the first row always goes).
            let mut rows = Vec::new();
            let mut bytes = 0usize;
            while bytes < max_bytes {
                let Some(row) = cursor.next() else { break };
                let row = row.map_err(sq("read"))?;
                bytes = bytes.saturating_add(row.data.as_ref().map_or(0, Vec::len));
                rows.push(row);
            }
            Ok(rows)
        })
        .await
    }

    async fn reread(&self, t: &'static Table, key: Vec<KeyPart>) -> Result<Option<Row>> {
        self.run(move |c| {
            let sql = row_sql(t, |i| format!("?{i}"));
            let mut stmt = c.prepare_cached(&sql).map_err(sq("read"))?;
            let mut rows = stmt
                .query_map(rusqlite::params_from_iter(key_params(&key)), |r| {
                    read_row(t, r)
                })
                .map_err(sq("read"))?;
            rows.next().transpose().map_err(sq("read"))
        })
        .await
    }

    /// Applies `updates` in one `BEGIN IMMEDIATE` transaction; per update, whether the
    /// row still held the old bytes (and so was rewritten).
    async fn apply(&self, t: &'static Table, updates: Arc<Vec<Update>>) -> Result<Vec<bool>> {
        self.run(move |c| {
            let cond: Vec<String> = t
                .key
                .iter()
                .enumerate()
                .map(|(i, k)| format!("{k} = ?{}", i + 5))
                .collect();
            let sql = format!(
                "UPDATE {} SET {ty} = ?1, {val} = ?2 WHERE {ty} = ?3 AND {val} = ?4 AND {}",
                t.name,
                cond.join(" AND "),
                ty = t.type_col,
                val = t.value_col,
            );
            let tx = c
                .transaction_with_behavior(TransactionBehavior::Immediate)
                .map_err(sq("write"))?;
            let mut done = Vec::with_capacity(updates.len());
            {
                let mut stmt = tx.prepare_cached(&sql).map_err(sq("write"))?;
                for u in updates.iter() {
                    let key = key_params(&u.key);
                    let mut params: Vec<&dyn rusqlite::ToSql> =
                        vec![&u.new_tag, &u.new_data, &u.old_tag, &u.old_data];
                    params.extend(key.iter().map(|k| k as &dyn rusqlite::ToSql));
                    let n = stmt.execute(params.as_slice()).map_err(sq("write"))?;
                    done.push(n == 1);
                }
            }
            tx.commit().map_err(sq("write"))?;
            Ok(done)
        })
        .await
    }
}
