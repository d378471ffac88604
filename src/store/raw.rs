//! Raw, layout-aware access for the maintenance operations (inspect, stats, export,
//! import, copy): a store in any layout [`crate::saver::layout`] detects, opened
//! read-only (SQLite through `open_sqlite_read_only`: no write, no `-wal`/`-shm` left;
//! Postgres in a read-only session), or a target opened for writing with Python's
//! tables created by the savers' own `setup()` when it has none.
//!
//! The audit's [`Store`](super::Store) pages one `(type, value)` column per table and
//! accepts only today's layout; these operations need every column (parents, metadata,
//! channels, task paths) and old layouts, so they page by primary key here, with the
//! same keyset paging (`WHERE (key…) > (last key…) ORDER BY key… LIMIT n`).

use std::sync::Arc;

use rusqlite::types::ValueRef;
use rusqlite::Connection;
use tokio_postgres::Client;

use super::error::StoreFault;
use super::keys::StoreKeys;
pub(crate) use super::postgres::refuse_read_only as pg_refuse_read_only;
pub(crate) use super::sqlite::refuse_read_only as sqlite_refuse_read_only;
pub(crate) use super::sqlite::require_sqlite_file;
use super::Location;
use crate::crypto::EncryptedSerializer;
use crate::error::Error;
use crate::saver::layout::StoreLayout;
use crate::saver::layout::{detect_postgres, detect_sqlite, open_sqlite_read_only};
use crate::serializer::Serializer;
use crate::JsonPlusSerializer;

pub(crate) type Result<T, E = Error> = std::result::Result<T, E>;

pub(crate) fn sq(operation: &'static str) -> impl Fn(rusqlite::Error) -> Error {
    move |source| StoreFault::Sqlite { operation, source }.into()
}

pub(crate) fn pg(operation: &'static str) -> impl Fn(tokio_postgres::Error) -> Error {
    move |source| StoreFault::Postgres { operation, source }.into()
}

pub(crate) fn saver_err(location: &str) -> impl Fn(crate::Error) -> Error + '_ {
    move |e| {
        // Not about the layout: what to do differs (TLS settings, free space).
        if matches!(e.kind(), crate::ErrorKind::Tls | crate::ErrorKind::DiskFull) {
            return e;
        }
        StoreFault::NotAStore {
            location: location.to_owned(),
            found: e.to_string(),
        }
        .into()
    }
}

/// The serializer of the keys: the key ring (primary writes, every key reads) around
/// Python's `JsonPlusSerializer`, or `JsonPlusSerializer` alone without keys.
pub(crate) fn serializer(keys: &StoreKeys) -> Arc<dyn Serializer> {
    match keys.ring() {
        Some(ring) => Arc::new(EncryptedSerializer::new(
            ring.clone(),
            JsonPlusSerializer::new(),
        )),
        None => Arc::new(JsonPlusSerializer::new()),
    }
}

/// An open store of any known layout.
pub(crate) enum Raw {
    Sqlite {
        conn: Connection,
        layout: StoreLayout,
        shown: String,
        path: std::path::PathBuf,
    },
    Postgres {
        client: Arc<Client>,
        layout: StoreLayout,
        shown: String,
        url: String,
    },
}

impl std::fmt::Debug for Raw {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Raw")
            .field("store", &self.shown())
            .field("layout", self.layout())
            .finish_non_exhaustive()
    }
}

pub(crate) async fn pg_connect(url: &str, read_only: bool) -> Result<Client> {
    super::postgres::connect(url, !read_only).await
}

/// The schema unqualified table names resolve to on `client`: the first schema of its
/// `search_path` that exists (what the savers and Python's saver write to when the URL
/// sets `options=-csearch_path=…`), `public` if none does.
///
/// # Errors
/// The server's.
pub(crate) async fn pg_current_schema(client: &Client) -> Result<String> {
    let row = client
        .query_one("SELECT current_schema()", &[])
        .await
        .map_err(pg("connect"))?;
    let schema: Option<String> = row.try_get(0).map_err(pg("connect"))?;
    Ok(schema.unwrap_or_else(|| "public".to_owned()))
}

/// SQL column expressions of a layout: thread, namespace, id, parent, type of the
/// checkpoints table; checkpoint id, type and task path of the writes table.
pub(crate) struct Cols {
    pub ns: &'static str,
    pub id: &'static str,
    pub parent: &'static str,
    pub ty: &'static str,
    pub w_id: &'static str,
    pub w_ty: &'static str,
    pub w_path: &'static str,
    /// The relation blobs are read from with today's columns (Postgres).
    pub blobs: &'static str,
}

/// Python's `ShallowPostgresSaver` blobs (keyed by thread, namespace and channel) as
/// today's: each with the version its checkpoint's `channel_versions` gives the
/// channel, the ones of channels the checkpoint does not list left out (the shallow
/// reader joins blobs to those channels alone). Aliased `checkpoint_blobs`.
const SHALLOW_BLOBS: &str = "(SELECT sb.thread_id, sb.checkpoint_ns, sb.channel, \
     sc.checkpoint -> 'channel_versions' ->> sb.channel AS version, sb.type, sb.blob \
     FROM checkpoint_blobs sb JOIN checkpoints sc \
     ON sc.thread_id = sb.thread_id AND sc.checkpoint_ns = sb.checkpoint_ns \
     WHERE sc.checkpoint -> 'channel_versions' ? sb.channel) checkpoint_blobs";

impl Cols {
    /// Today's layout's columns (`task_path`, when the `writes` table has it).
    pub(crate) fn current(task_path: bool) -> Cols {
        Cols {
            ns: "checkpoint_ns",
            id: "checkpoint_id",
            parent: "parent_checkpoint_id",
            ty: "type",
            w_id: "checkpoint_id",
            w_ty: "type",
            // An expression, not a bare literal: Postgres refuses a constant in
            // ORDER BY (SQLite takes either).
            w_path: if task_path {
                "task_path"
            } else {
                "CAST('' AS TEXT)"
            },
            blobs: "checkpoint_blobs",
        }
    }
}

impl Raw {
    /// Opens `given` read-only in whatever layout it has (refusing only what no saver
    /// wrote: [`StoreLayout::Empty`], [`StoreLayout::Foreign`]).
    ///
    /// # Errors
    /// [`ErrorKind::StoreNotFound`](crate::ErrorKind::StoreNotFound), [`ErrorKind::NotAStore`](crate::ErrorKind::NotAStore), the database's errors.
    pub(crate) async fn open(given: &str) -> Result<Raw> {
        let location = Location::parse(given)?;
        let shown = location.display();
        let raw = match location {
            Location::Sqlite(path) => {
                require_sqlite_file(&path)?;
                let conn = open_sqlite_read_only(&path).map_err(saver_err(&shown))?;
                let layout = detect_sqlite(&conn).map_err(saver_err(&shown))?;
                Raw::Sqlite {
                    conn,
                    layout,
                    shown,
                    path,
                }
            }
            Location::Postgres(url) => {
                let client = pg_connect(&url, true).await?;
                let schema = pg_current_schema(&client).await?;
                let layout = detect_postgres(&client, &schema)
                    .await
                    .map_err(saver_err(&shown))?;
                Raw::Postgres {
                    client: Arc::new(client),
                    layout,
                    shown,
                    url,
                }
            }
        };
        match raw.layout() {
            StoreLayout::Empty | StoreLayout::Foreign { .. } => Err(StoreFault::NotAStore {
                location: raw.shown().to_owned(),
                found: raw.layout().to_string(),
            }
            .into()),
            _ => Ok(raw),
        }
    }

    /// Starts one read transaction that every read until [`end_snapshot`](Self::end_snapshot)
    /// is part of, so what they read is one point in time even with writers running:
    /// SQLite's deferred transaction fixed by a first read (WAL: writers go on, the
    /// reads see none of their commits; rollback journal: writers wait for the end),
    /// Postgres's `REPEATABLE READ READ ONLY` (one snapshot, nothing locked).
    ///
    /// # Errors
    /// The database's.
    pub(crate) async fn begin_snapshot(&self) -> Result<()> {
        match self {
            Raw::Sqlite { conn, .. } => {
                conn.execute_batch("BEGIN DEFERRED")
                    .map_err(sq("snapshot"))?;
                conn.query_row("SELECT count(*) FROM sqlite_master", [], |r| {
                    r.get::<_, i64>(0)
                })
                .map_err(sq("snapshot"))?;
            }
            Raw::Postgres { client, .. } => client
                .batch_execute("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY")
                .await
                .map_err(pg("snapshot"))?,
        }
        Ok(())
    }

    /// Ends the read transaction [`begin_snapshot`](Self::begin_snapshot) started (it
    /// wrote nothing: a failure to end it is a lost connection, which ends it too).
    pub(crate) async fn end_snapshot(&self) {
        match self {
            Raw::Sqlite { conn, .. } => {
                let _ = conn.execute_batch("COMMIT");
            }
            Raw::Postgres { client, .. } => {
                let _ = client.batch_execute("COMMIT").await;
            }
        }
    }

    pub(crate) fn layout(&self) -> &StoreLayout {
        match self {
            Raw::Sqlite { layout, .. } | Raw::Postgres { layout, .. } => layout,
        }
    }

    pub(crate) fn shown(&self) -> &str {
        match self {
            Raw::Sqlite { shown, .. } | Raw::Postgres { shown, .. } => shown,
        }
    }

    pub(crate) fn backend(&self) -> &'static str {
        match self {
            Raw::Sqlite { .. } => "sqlite",
            Raw::Postgres { .. } => "postgres",
        }
    }

    pub(crate) fn cols(&self) -> Cols {
        let task_path = self.layout().has_task_path();
        match self.layout() {
            StoreLayout::SqliteThreadTs { .. } => Cols {
                ns: "''",
                id: "thread_ts",
                parent: "parent_ts",
                ty: "'json'",
                w_id: "thread_ts",
                w_ty: "'json'",
                w_path: "''",
                blobs: "checkpoint_blobs",
            },
            // One checkpoint per thread and namespace, its id in the JSONB, no parent.
            StoreLayout::PostgresShallow { .. } => Cols {
                id: "(checkpoint ->> 'id')",
                parent: "CAST(NULL AS TEXT)",
                blobs: SHALLOW_BLOBS,
                ..Cols::current(task_path)
            },
            _ => Cols::current(task_path),
        }
    }

    pub(crate) fn writes_table(&self) -> &'static str {
        match self {
            Raw::Sqlite { .. } => "writes",
            Raw::Postgres { .. } => "checkpoint_writes",
        }
    }
}

/// A BLOB or TEXT cell as bytes; NULL as `None`.
pub(crate) fn cell_bytes(row: &rusqlite::Row<'_>, i: usize) -> rusqlite::Result<Option<Vec<u8>>> {
    Ok(match row.get_ref(i)? {
        ValueRef::Null => None,
        ValueRef::Blob(b) | ValueRef::Text(b) => Some(b.to_vec()),
        ValueRef::Integer(n) => Some(n.to_string().into_bytes()),
        ValueRef::Real(f) => Some(f.to_string().into_bytes()),
    })
}

/// `?1, ?2, …` (SQLite) or `$1, $2, …` (Postgres) placeholders.
pub(crate) fn ph(sqlite: bool, i: usize) -> String {
    if sqlite {
        format!("?{i}")
    } else {
        format!("${i}")
    }
}
