//! The reader of a store's rows in any layout [`crate::saver::layout`] detects, for
//! the maintenance operations (inspect, stats, export, the source of copy): every
//! column (parents, metadata, channels, task paths), in old layouts too, paged by
//! primary key (`WHERE (key…) > (last key…) ORDER BY key… LIMIT n`), on the connection
//! of the [`Store`](super::Store) opened for it (`Access::Inspect`: SQLite through
//! `open_sqlite_read_only`, no write and no `-wal`/`-shm` left; Postgres in a
//! read-only session).
//!
//! The audit and the sweeps page one `(type, value)` column per table through the
//! backend trait instead, and prune, retain, import and the target of copy reach
//! today's layout through its checkpoint half.

use std::ops::ControlFlow;
use std::sync::Arc;

use rusqlite::types::ValueRef;
use rusqlite::Connection;
use tokio_postgres::Client;

use super::error::StoreFault;
use super::keys::StoreKeys;
pub(crate) use super::sqlite::require_sqlite_file;
use super::Location;
use crate::crypto::EncryptedSerializer;
use crate::error::Error;
use crate::saver::layout::StoreLayout;
use crate::serializer::Serializer;
use crate::JsonPlusSerializer;

pub(crate) type Result<T, E = Error> = std::result::Result<T, E>;

pub(crate) use super::error::saver_err;
pub(crate) use super::postgres::{bounded_lock_wait, not_here, pg, pg_current_schema};
pub(crate) use super::sqlite::{cell_bytes, no_tables, sq};

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

/// The rows of a store of any known layout, on its store's connection.
pub(crate) enum Raw {
    Sqlite {
        /// In a mutex so that a store can be shared between tasks (`Sync`): the
        /// operations that hold one across an await, `copy` among them, stay `Send`.
        /// Each use is a blocking call that takes it and lets it go, never held
        /// across an await.
        conn: Arc<std::sync::Mutex<Connection>>,
        layout: StoreLayout,
        shown: String,
        path: std::path::PathBuf,
    },
    Postgres {
        client: Arc<Client>,
        layout: StoreLayout,
        shown: String,
        url: String,
        /// The snapshot of the read transaction [`Raw::begin_snapshot`] began and
        /// exported, for reads on other connections ([`Raw::snapshot`]); it lives as
        /// long as that transaction on `client`.
        snapshot: std::sync::Mutex<Option<String>>,
        /// Statements prepared on `client` ([`prepared`]), by their text.
        statements: std::sync::Mutex<Vec<(String, tokio_postgres::Statement)>>,
    },
}

/// What a store keeps behind a mutex: a SQLite connection, for one blocking call or a
/// few, or a Postgres store's exported snapshot. A panic while another held it left
/// nothing half-done (SQLite rolls back what it did not commit; the snapshot is one
/// whole value): it is taken anyway.
pub(crate) fn lock<T>(held: &std::sync::Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    held.lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
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
    /// Starts one read transaction that every read until [`end_snapshot`](Self::end_snapshot)
    /// is part of, so what they read is one point in time even with writers running:
    /// SQLite's deferred transaction fixed by a first read (WAL: writers go on, the
    /// reads see none of their commits; rollback journal: writers wait for the end),
    /// Postgres's `REPEATABLE READ READ ONLY` (one snapshot, nothing locked). With
    /// `shared`, Postgres's snapshot is exported too (`pg_export_snapshot()`, one more
    /// round trip), for reads on other connections to see the same point in time
    /// while this transaction stays open ([`snapshot`](Self::snapshot)).
    ///
    /// # Errors
    /// The database's.
    pub(crate) async fn begin_snapshot(&self, shared: bool) -> Result<()> {
        match self {
            Raw::Sqlite { conn, .. } => {
                let conn = lock(conn);
                conn.execute_batch("BEGIN DEFERRED")
                    .map_err(sq("snapshot"))?;
                conn.query_row("SELECT count(*) FROM sqlite_master", [], |r| {
                    r.get::<_, i64>(0)
                })
                .map_err(sq("snapshot"))?;
            }
            Raw::Postgres {
                client, snapshot, ..
            } => {
                client
                    .batch_execute("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY")
                    .await
                    .map_err(pg("snapshot"))?;
                if shared {
                    let row = client
                        .query_one("SELECT pg_export_snapshot()", &[])
                        .await
                        .map_err(pg("snapshot"))?;
                    *lock(snapshot) = Some(row.try_get(0).map_err(pg("snapshot"))?);
                }
            }
        }
        Ok(())
    }

    /// The snapshot [`begin_snapshot`](Self::begin_snapshot) exported, while its
    /// transaction is open: reads on other connections import it
    /// (`SET TRANSACTION SNAPSHOT`) to read as of the same point in time.
    pub(crate) fn snapshot(&self) -> Option<String> {
        match self {
            Raw::Sqlite { .. } => None,
            Raw::Postgres { snapshot, .. } => lock(snapshot).clone(),
        }
    }

    /// After a read as of this store's exported snapshot failed on another connection:
    /// the loss of this connection, which took the snapshot with it, if that is what
    /// happened (one `SELECT 1` tells); `None` when this connection is alive.
    pub(crate) async fn lost_snapshot(&self) -> Option<Error> {
        match self {
            Raw::Sqlite { .. } => None,
            Raw::Postgres { client, .. } => client
                .simple_query("SELECT 1")
                .await
                .err()
                .map(pg("snapshot")),
        }
    }

    /// Ends the read transaction [`begin_snapshot`](Self::begin_snapshot) started (it
    /// wrote nothing: a failure to end it is a lost connection, which ends it too).
    pub(crate) async fn end_snapshot(&self) {
        match self {
            Raw::Sqlite { conn, .. } => {
                let _ = lock(conn).execute_batch("COMMIT");
            }
            Raw::Postgres {
                client, snapshot, ..
            } => {
                lock(snapshot).take();
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

/// Statements a Postgres store keeps prepared at most ([`prepared`]).
const PREPARED_HELD: usize = 16;

/// `sql` prepared on a Postgres store's connection (`client`, whose prepared
/// statements are `held`: `Raw::Postgres`'s `statements`) once, then taken from
/// there: a statement run a page at a time is parsed and planned by the server once,
/// and each run is one round trip instead of two (a parse, then the run).
///
/// # Errors
/// The server's, preparing it.
pub(crate) async fn prepared(
    client: &Client,
    held: &std::sync::Mutex<Vec<(String, tokio_postgres::Statement)>>,
    sql: &str,
) -> Result<tokio_postgres::Statement> {
    if let Some((_, s)) = lock(held).iter().find(|(text, _)| text == sql) {
        return Ok(s.clone());
    }
    let statement = client.prepare(sql).await.map_err(pg("prepare"))?;
    let mut held = lock(held);
    // Reads in flight at once may each have prepared it: the first one kept.
    if let Some((_, s)) = held.iter().find(|(text, _)| text == sql) {
        return Ok(s.clone());
    }
    // A handful of texts per store; a bound all the same.
    if held.len() >= PREPARED_HELD {
        held.remove(0);
    }
    held.push((sql.to_owned(), statement.clone()));
    Ok(statement)
}

/// One cell of a row read from either backend ([`Raw::each_row`]).
#[derive(Debug, Clone, PartialEq, Default)]
pub(crate) enum Field {
    #[default]
    Null,
    Int(i64),
    Text(String),
    /// A BLOB or `bytea`, or SQLite TEXT whose bytes are not UTF-8.
    Bytes(Vec<u8>),
}

impl Field {
    /// Text whose bytes are UTF-8, else the bytes themselves (nothing replaced).
    fn text_or_bytes(b: &[u8]) -> Field {
        match std::str::from_utf8(b) {
            Ok(s) => Field::Text(s.to_owned()),
            Err(_) => Field::Bytes(b.to_vec()),
        }
    }

    /// The cell's bytes: text as its UTF-8, a number as its digits; NULL as `None`.
    fn into_bytes(self) -> Option<Vec<u8>> {
        match self {
            Field::Null => None,
            Field::Int(n) => Some(n.to_string().into_bytes()),
            Field::Text(s) => Some(s.into_bytes()),
            Field::Bytes(b) => Some(b),
        }
    }
}

/// A row read from either backend: its cells, read by position as the caller's SQL
/// chose its columns.
#[derive(Debug)]
pub(crate) struct Fields(Vec<Field>);

impl Fields {
    fn at(&self, i: usize) -> &Field {
        self.0.get(i).unwrap_or(&Field::Null)
    }

    fn wrong(&self, i: usize, want: &str) -> Error {
        let found = match self.at(i) {
            // Bytes where text goes are text SQLite holds that is not UTF-8 (written by
            // something else than Python's saver): said as such, with their first bytes.
            Field::Bytes(b) => {
                let head: Vec<String> = b.iter().take(16).map(|x| format!("{x:02x}")).collect();
                format!(
                    "{} byte(s) that are not UTF-8 text ({}{})",
                    b.len(),
                    head.join(" "),
                    if b.len() > 16 { " …" } else { "" }
                )
            }
            other => format!("{other:?}"),
        };
        StoreFault::Unreadable {
            what: format!("column {i} of a row"),
            reason: format!("{want} expected, found {found}"),
        }
        .into()
    }

    /// Text (NULL, a number or bytes that are not UTF-8: an error).
    pub(crate) fn text(&self, i: usize) -> Result<String> {
        self.opt_text(i)?.ok_or_else(|| self.wrong(i, "text"))
    }

    /// A thread id: text, as [`text`](Self::text); bytes that are not UTF-8 are
    /// named as a thread id ([`thread_id_not_text`](super::error::thread_id_not_text)).
    pub(crate) fn thread(&self, i: usize) -> Result<String> {
        match self.at(i) {
            Field::Bytes(b) => Err(super::error::thread_id_not_text(b)),
            _ => self.text(i),
        }
    }

    /// Text or NULL.
    pub(crate) fn opt_text(&self, i: usize) -> Result<Option<String>> {
        match self.at(i) {
            Field::Null => Ok(None),
            Field::Text(s) => Ok(Some(s.clone())),
            _ => Err(self.wrong(i, "text")),
        }
    }

    /// An integer (NULL: an error).
    pub(crate) fn int(&self, i: usize) -> Result<i64> {
        match self.at(i) {
            Field::Int(n) => Ok(*n),
            _ => Err(self.wrong(i, "an integer")),
        }
    }

    /// A count or a sum: an integer, negative as 0, NULL (the sum of no rows) as 0.
    pub(crate) fn count(&self, i: usize) -> Result<u64> {
        match self.at(i) {
            Field::Null => Ok(0),
            _ => Ok(u64::try_from(self.int(i)?).unwrap_or(0)),
        }
    }

    /// The cell's bytes: text as its UTF-8, a number as its digits (as
    /// [`cell_bytes`]); NULL as `None`.
    pub(crate) fn bytes(&self, i: usize) -> Option<Vec<u8>> {
        self.at(i).clone().into_bytes()
    }

    /// [`bytes`](Self::bytes), moved out of the row (the cell is NULL after).
    pub(crate) fn take_bytes(&mut self, i: usize) -> Option<Vec<u8>> {
        self.0.get_mut(i).map(std::mem::take)?.into_bytes()
    }

    /// [`take_opt_text`](Self::take_opt_text) of a thread id: bytes that are not
    /// UTF-8 are named as a thread id, as [`thread`](Self::thread) names them.
    pub(crate) fn take_thread(&mut self, i: usize) -> Result<Option<String>> {
        match self.at(i) {
            Field::Bytes(b) => Err(super::error::thread_id_not_text(b)),
            _ => self.take_opt_text(i),
        }
    }

    /// [`opt_text`](Self::opt_text), moved out of the row (the cell is NULL after).
    pub(crate) fn take_opt_text(&mut self, i: usize) -> Result<Option<String>> {
        if matches!(self.at(i), Field::Text(_) | Field::Null) {
            if let Some(Field::Text(s)) = self.0.get_mut(i).map(std::mem::take) {
                return Ok(Some(s));
            }
            return Ok(None);
        }
        Err(self.wrong(i, "text"))
    }
}

/// A statement parameter for either backend ([`Raw::each_row`]): text (`None`: NULL) or
/// an integer, bound on Postgres as the integer type the server asks for (`int2`,
/// `int4` or `int8`; out of its range: an error, nothing truncated).
#[derive(Debug, Clone, Copy)]
pub(crate) enum Param<'a> {
    Text(Option<&'a str>),
    Int(i64),
}

impl<'a> From<&'a str> for Param<'a> {
    fn from(s: &'a str) -> Self {
        Param::Text(Some(s))
    }
}

impl rusqlite::ToSql for Param<'_> {
    fn to_sql(&self) -> rusqlite::Result<rusqlite::types::ToSqlOutput<'_>> {
        use rusqlite::types::ToSqlOutput;
        Ok(ToSqlOutput::Borrowed(match self {
            Param::Text(Some(s)) => ValueRef::Text(s.as_bytes()),
            Param::Text(None) => ValueRef::Null,
            Param::Int(n) => ValueRef::Integer(*n),
        }))
    }
}

impl tokio_postgres::types::ToSql for Param<'_> {
    fn to_sql(
        &self,
        ty: &tokio_postgres::types::Type,
        out: &mut bytes::BytesMut,
    ) -> std::result::Result<tokio_postgres::types::IsNull, Box<dyn std::error::Error + Sync + Send>>
    {
        use tokio_postgres::types::{IsNull, Type};
        match *self {
            Param::Text(None) => Ok(IsNull::Yes),
            Param::Text(Some(s)) => s.to_sql(ty, out),
            Param::Int(n) => match *ty {
                Type::INT2 => i16::try_from(n)?.to_sql(ty, out),
                Type::INT4 => i32::try_from(n)?.to_sql(ty, out),
                _ => n.to_sql(ty, out),
            },
        }
    }

    fn accepts(ty: &tokio_postgres::types::Type) -> bool {
        use tokio_postgres::types::Type;
        <&str as tokio_postgres::types::ToSql>::accepts(ty)
            || matches!(*ty, Type::INT2 | Type::INT4 | Type::INT8)
    }

    tokio_postgres::types::to_sql_checked!();
}

/// A Postgres cell in its binary form, whatever its type (read by [`pg_field`]).
struct PgRaw<'a>(Option<&'a [u8]>);

impl<'a> tokio_postgres::types::FromSql<'a> for PgRaw<'a> {
    fn from_sql(
        _: &tokio_postgres::types::Type,
        raw: &'a [u8],
    ) -> std::result::Result<Self, Box<dyn std::error::Error + Sync + Send>> {
        Ok(PgRaw(Some(raw)))
    }

    fn from_sql_null(
        _: &tokio_postgres::types::Type,
    ) -> std::result::Result<Self, Box<dyn std::error::Error + Sync + Send>> {
        Ok(PgRaw(None))
    }

    fn accepts(_: &tokio_postgres::types::Type) -> bool {
        true
    }
}

/// Cell `i` of a Postgres row: text types as text, integers and booleans as integers,
/// `bytea` as bytes, `json`/`jsonb` as their text; another type is an error (the
/// caller's SQL casts it).
fn pg_field(row: &tokio_postgres::Row, i: usize) -> Result<Field> {
    use tokio_postgres::types::Type;
    let ty = row
        .columns()
        .get(i)
        .map(|c| c.type_().clone())
        .unwrap_or(Type::UNKNOWN);
    let PgRaw(raw) = row.try_get(i).map_err(pg("read"))?;
    let Some(raw) = raw else {
        return Ok(Field::Null);
    };
    let int = |n: usize| -> Option<i64> {
        let b = raw.get(..n)?;
        Some(match n {
            2 => i64::from(i16::from_be_bytes(b.try_into().ok()?)),
            4 => i64::from(i32::from_be_bytes(b.try_into().ok()?)),
            _ => i64::from_be_bytes(b.try_into().ok()?),
        })
    };
    let field = match ty {
        // Text that is not UTF-8 (a `SQL_ASCII` database) stays its bytes.
        Type::TEXT | Type::VARCHAR | Type::BPCHAR | Type::NAME | Type::UNKNOWN | Type::JSON => {
            Some(Field::text_or_bytes(raw))
        }
        // Version 1, then the text.
        Type::JSONB => raw.get(1..).map(Field::text_or_bytes),
        Type::INT2 => int(2).map(Field::Int),
        Type::INT4 => int(4).map(Field::Int),
        Type::INT8 => int(8).map(Field::Int),
        Type::BOOL => raw.first().map(|b| Field::Int(i64::from(*b != 0))),
        Type::BYTEA => Some(Field::Bytes(raw.to_vec())),
        _ => None,
    };
    field.ok_or_else(|| {
        StoreFault::Unreadable {
            what: format!("column {i} of a row"),
            reason: format!("a value of type {ty} the store's reader does not read"),
        }
        .into()
    })
}

/// Cell `i` of a SQLite row.
fn sqlite_field(row: &rusqlite::Row<'_>, i: usize) -> rusqlite::Result<Field> {
    Ok(match row.get_ref(i)? {
        ValueRef::Null => Field::Null,
        ValueRef::Integer(n) => Field::Int(n),
        ValueRef::Real(f) => Field::Text(f.to_string()),
        ValueRef::Text(b) => Field::text_or_bytes(b),
        ValueRef::Blob(b) => Field::Bytes(b.to_vec()),
    })
}

impl Raw {
    /// Runs `sql` (placeholders `?n` on SQLite, `$n` on Postgres: [`ph`]) with
    /// `params`, calling `f` with each row in order until it breaks. Rows are read as
    /// they are taken (Postgres streams them), so a statement over a whole store holds
    /// one row at a time. `operation` names a failure.
    ///
    /// # Errors
    /// The database's, or `f`'s.
    pub(crate) async fn each_row(
        &self,
        operation: &'static str,
        sql: &str,
        params: &[Param<'_>],
        mut f: impl FnMut(Fields) -> Result<ControlFlow<()>> + Send,
    ) -> Result<()> {
        match self {
            Raw::Sqlite { conn, .. } => {
                let conn = lock(conn);
                let mut stmt = conn.prepare_cached(sql).map_err(sq(operation))?;
                let n = stmt.column_count();
                let mut rows = stmt
                    .query(rusqlite::params_from_iter(params))
                    .map_err(sq(operation))?;
                while let Some(r) = rows.next().map_err(sq(operation))? {
                    let fields = (0..n)
                        .map(|i| sqlite_field(r, i))
                        .collect::<rusqlite::Result<_>>()
                        .map_err(sq(operation))?;
                    if f(Fields(fields))?.is_break() {
                        break;
                    }
                }
            }
            Raw::Postgres { client, .. } => {
                use futures_util::TryStreamExt as _;
                let rows = client
                    .query_raw(sql, params.iter())
                    .await
                    .map_err(pg(operation))?;
                futures_util::pin_mut!(rows);
                while let Some(r) = rows.try_next().await.map_err(pg(operation))? {
                    let fields = (0..r.len())
                        .map(|i| pg_field(&r, i))
                        .collect::<Result<_>>()?;
                    if f(Fields(fields))?.is_break() {
                        break;
                    }
                }
            }
        }
        Ok(())
    }

    /// [`each_row`](Self::each_row)'s rows, collected (for statements of a bounded
    /// number of rows: one thread's, a page's).
    ///
    /// # Errors
    /// The database's.
    pub(crate) async fn rows(
        &self,
        operation: &'static str,
        sql: &str,
        params: &[Param<'_>],
    ) -> Result<Vec<Fields>> {
        let mut out = Vec::new();
        self.each_row(operation, sql, params, |r| {
            out.push(r);
            Ok(ControlFlow::Continue(()))
        })
        .await?;
        Ok(out)
    }

    /// The first row `sql` returns, if any (the statement is not read further).
    ///
    /// # Errors
    /// The database's.
    pub(crate) async fn first_row(
        &self,
        operation: &'static str,
        sql: &str,
        params: &[Param<'_>],
    ) -> Result<Option<Fields>> {
        let mut first = None;
        self.each_row(operation, sql, params, |r| {
            first = Some(r);
            Ok(ControlFlow::Break(()))
        })
        .await?;
        Ok(first)
    }

    /// Refuses ([`StoreFault::ThreadsNotFound`]) when a thread of `named` has no
    /// checkpoint in this store: an `operation` told to select or to leave out a thread
    /// the store does not hold was most likely given a mistyped id, and a copy of
    /// nothing, or a prune that spares nothing, would say so only in its counts.
    ///
    /// # Errors
    /// [`ErrorKind::ThreadNotFound`](crate::ErrorKind::ThreadNotFound); the database's.
    #[cfg_attr(not(all(feature = "sqlite", feature = "postgres")), allow(dead_code))]
    pub(crate) async fn refuse_absent_threads(
        &self,
        operation: &'static str,
        named: &std::collections::BTreeSet<&str>,
    ) -> Result<()> {
        let absent = self.absent_threads(operation, named).await?;
        if absent.is_empty() {
            return Ok(());
        }
        Err(StoreFault::ThreadsNotFound {
            operation,
            store: self.shown().to_owned(),
            threads: absent,
        }
        .into())
    }

    /// The threads of `named` of which this store holds no checkpoint, in order: one
    /// indexed look-up a thread.
    ///
    /// # Errors
    /// The database's.
    #[cfg_attr(not(all(feature = "sqlite", feature = "postgres")), allow(dead_code))]
    pub(crate) async fn absent_threads(
        &self,
        operation: &'static str,
        named: &std::collections::BTreeSet<&str>,
    ) -> Result<Vec<String>> {
        let sql = format!(
            "SELECT 1 FROM checkpoints WHERE thread_id = {} LIMIT 1",
            if self.is_sqlite() { "?1" } else { "$1" }
        );
        let mut absent = Vec::new();
        for thread in named {
            let params = [Param::from(*thread)];
            if self.first_row(operation, &sql, &params).await?.is_none() {
                absent.push((*thread).to_owned());
            }
        }
        Ok(absent)
    }

    /// Where the store is.
    pub(crate) fn location(&self) -> Location {
        match self {
            Raw::Sqlite { path, .. } => Location::Sqlite(path.clone()),
            Raw::Postgres { url, .. } => Location::Postgres(url.clone()),
        }
    }

    /// Whether SQL for this store takes SQLite's dialect (`?n` placeholders, no casts).
    pub(crate) fn is_sqlite(&self) -> bool {
        matches!(self, Raw::Sqlite { .. })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What [`Raw::rows`] reads of each SQLite storage class: integers, text, text
    /// whose bytes are not UTF-8 (kept as those bytes), BLOBs, reals and NULL.
    #[tokio::test]
    async fn sqlite_cells_are_read_as_stored() {
        let conn = Connection::open_in_memory().expect("open");
        let raw = Raw::Sqlite {
            conn: Arc::new(std::sync::Mutex::new(conn)),
            layout: StoreLayout::Empty,
            shown: "memory".to_owned(),
            path: std::path::PathBuf::new(),
        };
        let rows = raw
            .rows(
                "read",
                "SELECT 7, 'é', CAST(x'ff00' AS TEXT), x'0001', 1.5, NULL, ?1",
                &["p".into()],
            )
            .await
            .expect("rows");
        let r = rows.first().expect("a row");
        assert_eq!(r.int(0).expect("int"), 7);
        assert_eq!(r.text(1).expect("text"), "é");
        assert_eq!(r.bytes(2), Some(vec![0xff, 0x00]));
        assert!(r.text(2).is_err(), "bytes that are not UTF-8 are not text");
        assert_eq!(r.bytes(3), Some(vec![0x00, 0x01]));
        assert_eq!(r.bytes(4), Some(b"1.5".to_vec()));
        assert_eq!(r.opt_text(5).expect("null"), None);
        assert!(r.int(5).is_err(), "NULL is not an integer");
        assert_eq!(r.count(5).expect("a sum of nothing"), 0);
        assert_eq!(r.text(6).expect("the parameter"), "p");
        let rows = raw
            .rows(
                "read",
                "SELECT ?1 + 1, ?2 IS NULL",
                &[Param::Int(5_000_000_000), Param::Text(None)],
            )
            .await
            .expect("rows");
        let r = rows.first().expect("a row");
        assert_eq!(r.int(0).expect("int"), 5_000_000_001);
        assert_eq!(r.int(1).expect("bool"), 1);
    }

    /// What [`Raw::rows`] reads of each Postgres type the operations select: the
    /// binary forms of `int2`, `int4`, `int8` (negative too), `bool`, `jsonb` (its
    /// version byte dropped), `bytea`, text and NULL; another type is an error that
    /// names it.
    /// A statement text is prepared on the connection once: asked again, the server
    /// holds one statement for it; a new text past [`PREPARED_HELD`] lets the oldest
    /// go (the server's count stays at the bound), and each one given runs.
    #[cfg(feature = "postgres")]
    #[tokio::test]
    async fn a_statement_is_prepared_once_and_the_cache_is_bounded() {
        let url = match std::env::var("LGCODEC_TEST_PG_URL") {
            Ok(u) if !u.is_empty() => u,
            _ => return,
        };
        let client = pg_connect(&url, true).await.expect("connect");
        // Counted by a simple query, which prepares nothing itself.
        let on_server = || async {
            let counted = client
                .simple_query("SELECT count(*) FROM pg_prepared_statements")
                .await
                .expect("count");
            counted
                .iter()
                .find_map(|m| match m {
                    tokio_postgres::SimpleQueryMessage::Row(r) => r.get(0)?.parse::<usize>().ok(),
                    _ => None,
                })
                .expect("a count")
        };
        let held = std::sync::Mutex::default();
        let text = |n: usize| format!("SELECT {n}::int8 + $1::int8");
        for _ in 0..3 {
            let s = prepared(&client, &held, &text(0)).await.expect("prepare");
            assert_eq!(
                client
                    .query_one(&s, &[&1i64])
                    .await
                    .expect("run")
                    .get::<_, i64>(0),
                1
            );
        }
        assert_eq!(on_server().await, 1);
        for n in 1..=PREPARED_HELD {
            let s = prepared(&client, &held, &text(n)).await.expect("prepare");
            let row = client.query_one(&s, &[&1i64]).await.expect("run");
            assert_eq!(row.get::<_, i64>(0), i64::try_from(n).expect("small") + 1);
        }
        assert_eq!(lock(&held).len(), PREPARED_HELD);
        assert_eq!(on_server().await, PREPARED_HELD);
    }

    #[cfg(feature = "postgres")]
    #[tokio::test]
    async fn postgres_cells_are_read_from_their_binary_forms() {
        let url = match std::env::var("LGCODEC_TEST_PG_URL") {
            Ok(u) if !u.is_empty() => u,
            _ => return,
        };
        let client = pg_connect(&url, true).await.expect("connect");
        let raw = Raw::Postgres {
            client: Arc::new(client),
            layout: StoreLayout::Empty,
            shown: "pg".to_owned(),
            url,
            snapshot: std::sync::Mutex::new(None),
            statements: std::sync::Mutex::default(),
        };
        let rows = raw
            .rows(
                "read",
                "SELECT (-2)::int2, 70000::int4, (-5000000000)::int8, true, \
                 '{\"a\": [1, \"é\"]}'::jsonb, '\\x00ff'::bytea, 'é'::text, NULL::text, $1::text",
                &["p".into()],
            )
            .await
            .expect("rows");
        let r = rows.first().expect("a row");
        assert_eq!(r.int(0).expect("int2"), -2);
        assert_eq!(r.int(1).expect("int4"), 70_000);
        assert_eq!(r.int(2).expect("int8"), -5_000_000_000);
        assert_eq!(r.int(3).expect("bool"), 1);
        assert_eq!(r.text(4).expect("jsonb"), r#"{"a": [1, "é"]}"#);
        assert_eq!(r.bytes(5), Some(vec![0x00, 0xff]));
        assert_eq!(r.text(6).expect("text"), "é");
        assert_eq!(r.opt_text(7).expect("null"), None);
        assert_eq!(r.text(8).expect("the parameter"), "p");
        // Integers bound as the type the server asks for, text and NULL.
        let rows = raw
            .rows(
                "read",
                "SELECT $1::int2 + 1, $2::int4 + 1, $3::int8 + 1, $4::text IS NULL",
                &[
                    Param::Int(-7),
                    Param::Int(70_000),
                    Param::Int(5_000_000_000),
                    Param::Text(None),
                ],
            )
            .await
            .expect("rows");
        let r = rows.first().expect("a row");
        assert_eq!(r.int(0).expect("int2"), -6);
        assert_eq!(r.int(1).expect("int4"), 70_001);
        assert_eq!(r.int(2).expect("int8"), 5_000_000_001);
        assert_eq!(r.int(3).expect("bool"), 1);
        raw.rows("read", "SELECT $1::int2", &[Param::Int(70_000)])
            .await
            .expect_err("70,000 does not fit an int2: an error, not a truncated value");
        let e = raw
            .rows("read", "SELECT 1.5::numeric", &[])
            .await
            .expect_err("numeric is not read");
        assert!(e.to_string().contains("numeric"), "{e}");
    }
}
