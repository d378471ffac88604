//! [`PostgresSaver`]: a checkpoint saver on the very tables Python's
//! `langgraph-checkpoint-postgres` (`PostgresSaver`, `AsyncPostgresSaver`) uses, so a
//! Rust service and Python LangGraph share one database (feature `postgres`).
//!
//! - Exactly Python's tables, columns and migrations (`checkpoint_migrations`
//!   v = 0..9, [`LAST_MIGRATION`]): [`setup`](PostgresSaver::setup) runs them under an
//!   advisory lock so replicas can start together; Python's `setup()` after ours
//!   changes nothing and ours after Python's changes nothing.
//!   [`verify`](PostgresSaver::verify) only reads, and refuses a missing, shallow-saver or
//!   newer-than-known schema with a typed [`Error`](crate::Error).
//! - Python's row semantics: primitive channel values (`None`, `str`, `int`, `float`,
//!   `bool`) inline in the `checkpoint` JSONB, everything else a blob keyed by channel
//!   version, a `_DeltaSnapshot` a blob plus an inline `true`; metadata JSONB as Python
//!   builds it; JSONB numbers read the way Python's `json.loads` reads them; the
//!   `v < 4` pending-sends migration; `list` filters by `metadata @> filter` (JSONB
//!   containment, as Python's saver does); writes ordered by
//!   `(task_path, task_id, idx)`; regular writes insert-or-ignore, all-special writes
//!   upsert.
//! - Beyond Python: values JSONB cannot hold (NaN, infinities, `\u0000`) go to blobs
//!   instead of failing `put` (Python reads them), and
//!   [`all_values_in_blobs`](PostgresSaverBuilder::all_values_in_blobs) stores every
//!   channel value as a blob, so with an encrypting serializer no state is left in clear.
//!   `put` and `put_writes` ask for lz4 TOAST compression of large values (several
//!   times cheaper for the server than the default pglz) where the server has lz4 and
//!   neither its configuration nor the connection chose a `default_toast_compression`;
//!   the setting ends with the statement, and readers, Python's too, get the same bytes.
//!
//! **What is encrypted** with [`EncryptedSerializer`](crate::crypto::EncryptedSerializer):
//! every `checkpoint_blobs` row and every `checkpoint_writes` value. **What stays in
//! clear**: the key columns (thread, namespace, checkpoint id, channel names, versions,
//! task ids and paths), the `checkpoint` JSONB without its blob values (ids, timestamps,
//! versions, `versions_seen`, and the inline primitive channel values unless
//! `all_values_in_blobs` is set), and the `metadata` JSONB (which `list` filters on).
//!
//! Every operation is one statement or one transaction: `put` writes its blobs and its
//! checkpoint in a single statement, so a connection lost mid-`put` leaves nothing
//! half-written. `get_tuple` and each `list` page take two queries: the checkpoints
//! with their writes, then every blob they reference, once, by primary key (plus one
//! for `v < 4` pending sends when needed); no query per checkpoint.
//!
//! ```no_run
//! use std::sync::Arc;
//! use langgraph_codec::crypto::EncryptedSerializer;
//! use langgraph_codec::saver::postgres::{PostgresSaver, StatementMode};
//! use langgraph_codec::saver::{Checkpoint, CheckpointConfig, CheckpointMetadata, CheckpointSaver};
//!
//! # async fn demo() -> langgraph_codec::Result<()> {
//! // A URL as psql takes it: sslmode and sslrootcert choose TLS, and what it leaves
//! // out comes from PGHOST, PGUSER, PGPASSWORD, ~/.pgpass, … (or bring a
//! // deadpool-postgres pool of your own to `PostgresSaver::builder`).
//! let saver = PostgresSaver::builder_from_url(
//!     "postgresql://app@db.example.com/app?sslmode=verify-full&sslrootcert=/etc/ssl/db-ca.pem",
//! )?
//!     .serializer(Arc::new(EncryptedSerializer::from_env()?)) // LANGGRAPH_AES_KEY
//!     .all_values_in_blobs(true)
//!     .statement_mode(StatementMode::Unnamed) // works behind PgBouncer
//!     .build()?;
//! saver.setup().await?;
//! let stored = saver
//!     .put(&CheckpointConfig::new("thread-1"), &Checkpoint::now(-1),
//!          &CheckpointMetadata::new("input", -1), &Default::default())
//!     .await?;
//! assert!(saver.get_tuple(&stored).await?.is_some());
//! # Ok(())
//! # }
//! ```

// Only the store copy (which needs both backends) writes and reads batches.
#[cfg(all(feature = "sqlite", feature = "postgres"))]
mod bulk;
#[cfg(all(feature = "sqlite", feature = "postgres"))]
pub(crate) use bulk::{
    copy_in, found_positions, unique_violation, BlobLookUp, PutItem, ReadOn, SentRow, SentWrite,
    Taken, TupleParts,
};
#[cfg(feature = "sqlite")]
pub(crate) use rows::{split_msgpack, Blobs};
mod conninfo;
mod db;
mod error;
pub(crate) use error::explain;
mod extended;
mod jsonb;
mod probe;
pub(crate) mod retention;
mod rows;
mod schema;
mod sql;
mod tls;

use std::borrow::Cow;
use std::collections::{BTreeMap, HashMap, HashSet};
use std::fmt;
use std::sync::atomic::{AtomicU8, Ordering as AtomicOrdering};
use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use indexmap::IndexMap;
use tokio_postgres::types::{ToSql, Type};
use tokio_postgres::Row;

pub use db::StatementMode;
use deadpool_postgres::Pool;

pub use conninfo::set_fallback_application_name;
pub(crate) use conninfo::ConnInfo;
/// The Postgres driver (tokio-postgres 0.7) and pool (deadpool-postgres 0.14) this saver
/// is built on, re-exported, so that a pool or a configuration built in your code has
/// the types the saver takes whatever versions your `Cargo.toml` names.
pub use deadpool_postgres;
pub(crate) use error::PgFault;
pub(crate) use schema::no_schema;
pub use schema::LAST_MIGRATION;
/// See [`deadpool_postgres`].
pub use tokio_postgres;

use self::db::{connection_lost, db, Exec, Param};
use self::rows::{load_sends, SelectedRow};
use self::sql::{
    check_schema_name, PageBlobs, Statements, WriteSql, LZ4_USABLE, VERSIONS_BYTEWISE,
};
use super::traits::{Capabilities, CheckpointSaver, ListOptions, PruneStrategy};
use super::types::{
    all_special, checkpoint_metadata, next_string_version, refuse_deep_metadata, write_idx,
    ChannelVersion, ChannelVersions, Checkpoint, CheckpointConfig, CheckpointMetadata,
    CheckpointTuple, DeltaChannelHistory,
};
use super::SaverFault;
use crate::compression::{DecompressionBudget, DEFAULT_MAX_DECOMPRESSED_PER_CALL};
use crate::saver::codec::row_location as location;
use crate::saver::Result;
use crate::serializer::{JsonPlusSerializer, Serializer};
use crate::value::Value;

/// A statement for [`PostgresSaver::write_once`].
#[derive(Clone, Copy)]
enum Write<'a> {
    Plain(&'a str),
    /// Writes values that may be large enough for TOAST to compress.
    Toasting(&'a WriteSql),
}

/// How many times [`PostgresSaver::write_once`] runs a write again on a new connection
/// after losing one: the pool is emptied at the first loss, so the first retry normally
/// succeeds; a few more cover connections other tasks return meanwhile.
const WRITE_RETRIES: u32 = 3;

/// Yes/no questions a saver (and its clones) asks the server once, on first need:
/// whether writes can ask for lz4 ([`PostgresSaver::lz4_usable`]), whether blob
/// versions order bytewise ([`PostgresSaver::versions_bytewise`]).
#[derive(Debug, Default)]
struct Answers {
    lz4: Answer,
    bytewise: Answer,
}

/// A blob's key: thread, namespace, channel, version.
type BlobKey<'a> = (&'a str, &'a str, &'a str, &'a str);

/// One of [`Answers`]: not asked yet (0), yes (1), no (2).
#[derive(Debug, Default)]
struct Answer(AtomicU8);

impl Answer {
    fn get(&self) -> Option<bool> {
        match self.0.load(AtomicOrdering::Relaxed) {
            1 => Some(true),
            2 => Some(false),
            _ => None,
        }
    }

    fn set(&self, yes: bool) {
        self.0
            .store(if yes { 1 } else { 2 }, AtomicOrdering::Relaxed);
    }
}

/// The settings a builder collects and a saver keeps.
#[derive(Clone)]
struct Settings {
    serde: Arc<dyn Serializer>,
    schema: Option<String>,
    mode: StatementMode,
    all_blobs: bool,
    lock_timeout: Duration,
    max_decompressed_per_call: usize,
    /// Reads select `checkpoint_writes.task_path` (false: tables before migration 9).
    task_path: bool,
    /// `put` keeps a metadata `writes` entry (Python's drops it).
    keep_metadata_writes: bool,
    /// Reads select from Python's `ShallowPostgresSaver` tables.
    shallow: bool,
    /// What the pool connects to, for connection errors (from a connection string).
    target: Option<Arc<conninfo::Target>>,
}

impl fmt::Debug for Settings {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Settings")
            .field("serde", &self.serde)
            .field("schema", &self.schema)
            .field("mode", &self.mode)
            .field("all_blobs", &self.all_blobs)
            .field("lock_timeout", &self.lock_timeout)
            .field("max_decompressed_per_call", &self.max_decompressed_per_call)
            .field("task_path", &self.task_path)
            .field("keep_metadata_writes", &self.keep_metadata_writes)
            .field("shallow", &self.shallow)
            .field("target", &self.target)
            .finish()
    }
}

/// Builds a [`PostgresSaver`]: serializer, schema, statement mode, blob policy.
#[derive(Clone, Debug)]
pub struct PostgresSaverBuilder {
    pool: Pool,
    settings: Settings,
}

impl PostgresSaverBuilder {
    /// The serializer rows are written with (default: [`JsonPlusSerializer`]); e.g. an
    /// [`EncryptedSerializer`](crate::crypto::EncryptedSerializer).
    pub fn serializer(mut self, serde: Arc<dyn Serializer>) -> Self {
        self.settings.serde = serde;
        self
    }

    /// Use the tables in this schema instead of the connection's `search_path`
    /// (Python reaches the same tables with `options=-c search_path=<schema>`).
    /// [`setup`](PostgresSaver::setup) creates the schema if it does not exist.
    pub fn schema(mut self, schema: impl Into<String>) -> Self {
        self.settings.schema = Some(schema.into());
        self
    }

    /// How statements are sent (default [`StatementMode::Prepared`]; use
    /// [`StatementMode::Unnamed`] behind PgBouncer's transaction pooling).
    pub fn statement_mode(mut self, mode: StatementMode) -> Self {
        self.settings.mode = mode;
        self
    }

    /// Store every channel value as a blob, primitives included (default `false`, as
    /// Python). With an encrypting serializer no channel value is then left in clear;
    /// Python reads such rows unchanged.
    pub fn all_values_in_blobs(mut self, on: bool) -> Self {
        self.settings.all_blobs = on;
        self
    }

    /// How long [`setup`](PostgresSaver::setup) waits for another process's migration
    /// lock (default 60 s).
    pub fn lock_timeout(mut self, timeout: Duration) -> Self {
        self.settings.lock_timeout = timeout;
        self
    }

    /// Total bytes the `+zlib` rows of one read call (`get_tuple`, `list`,
    /// `get_delta_channel_history`) may decompress to (default
    /// [`DEFAULT_MAX_DECOMPRESSED_PER_CALL`], 1 GiB; see [`DecompressionBudget`]), as
    /// the SQLite and in-memory savers allow. Past it the call fails with
    /// [`ErrorKind::DecompressionBudget`](crate::ErrorKind::DecompressionBudget)
    /// (kind `decompression_budget`, under the unreadable row's error).
    pub fn max_decompressed_per_call(mut self, limit: usize) -> Self {
        self.settings.max_decompressed_per_call = limit;
        self
    }

    /// Read tables from before Python's migration 9 (`checkpoint_writes` without
    /// `task_path`: `langgraph-checkpoint-postgres` before 2.0.9, LangGraphJS's
    /// Postgres saver) without migrating them: `get_tuple` and `list` read every
    /// pending write with the task path `''`, which is what that migration's
    /// `DEFAULT ''` gives the existing rows, so the tuples are the ones Python reads
    /// after its `setup()`. For reading only: writes still name the column and fail
    /// on such tables, and [`verify`](PostgresSaver::verify) still refuses them.
    /// (Default `false`.)
    pub fn before_task_path(mut self, on: bool) -> Self {
        self.settings.task_path = !on;
        self
    }

    /// Read the tables of Python's `ShallowPostgresSaver` (deprecated since
    /// `langgraph-checkpoint-postgres` 2.0.20: one checkpoint per thread and namespace,
    /// whose id is only in the checkpoint JSONB; blobs keyed by channel, without a
    /// version) without changing them: `get_tuple` and `list` return each thread's and
    /// namespace's one checkpoint as the shallow saver's `get_tuple` does — no parent,
    /// the blobs of the channels its `channel_versions` lists, the pending writes of
    /// its id — except for `pending_sends`, which that saver fills from every
    /// `__pregel_tasks` write of the namespace: a checkpoint before `v` 4 gets those
    /// sends in the `__pregel_tasks` channel instead, as LangGraph's
    /// `Pregel._migrate_checkpoint` moves them on loading (and as this saver reads the
    /// full saver's old checkpoints), and a later one gets none (LangGraph reads
    /// `pending_sends` only before `v` 4). Combine with
    /// [`before_task_path`](Self::before_task_path) for shallow tables before the
    /// shallow saver's migration 7. For reading only: writes name today's columns and
    /// fail on such tables, and [`verify`](PostgresSaver::verify) refuses them.
    /// (Default `false`.)
    pub fn shallow_tables(mut self, on: bool) -> Self {
        self.settings.shallow = on;
        self
    }

    /// Let `put` keep a `writes` entry of the metadata it is given (default `false`:
    /// dropped, as Python's `put` drops it with `get_serializable_checkpoint_metadata`).
    /// Releases before LangGraph 0.4 recorded each step's writes there, and Python
    /// reads such rows back with them; a copy of those rows keeps them so that it reads
    /// back as its source does.
    pub fn keep_metadata_writes(mut self, on: bool) -> Self {
        self.settings.keep_metadata_writes = on;
        self
    }

    /// The saver.
    ///
    /// # Errors
    /// [`ErrorKind::InvalidSchemaName`](crate::ErrorKind::InvalidSchemaName) if the schema is not a plain identifier.
    pub fn build(self) -> Result<PostgresSaver> {
        if let Some(s) = &self.settings.schema {
            check_schema_name(s)?;
        }
        Ok(PostgresSaver {
            sql: Arc::new(Statements::reading(
                self.settings.schema.as_deref(),
                self.settings.task_path,
                self.settings.shallow,
            )),
            pool: self.pool,
            settings: self.settings,
            answers: Arc::default(),
        })
    }
}

/// Python's `PostgresSaver`, row for row, over a deadpool-postgres [`Pool`].
/// See the [module docs](self) for the layout and what is encrypted.
///
/// Cheap to clone (the pool and statements are shared); safe to use from many tasks.
#[derive(Clone, Debug)]
pub struct PostgresSaver {
    pool: Pool,
    settings: Settings,
    sql: Arc<Statements>,
    /// What the server answered ([`Answers`]).
    answers: Arc<Answers>,
}

impl PostgresSaver {
    /// This saver with `serde` for its values: the same pool, statements and what
    /// the server answered (a reader of one store under another key ring).
    #[cfg(feature = "sqlite")]
    pub(crate) fn with_serializer(&self, serde: Arc<dyn Serializer>) -> PostgresSaver {
        let mut saver = self.clone();
        saver.settings.serde = serde;
        saver
    }

    /// A builder over a pool the caller made (and so chose TLS for).
    pub fn builder(pool: Pool) -> PostgresSaverBuilder {
        PostgresSaverBuilder {
            pool,
            settings: Settings {
                serde: Arc::new(JsonPlusSerializer::new()),
                schema: None,
                mode: StatementMode::default(),
                all_blobs: false,
                lock_timeout: Duration::from_secs(60),
                max_decompressed_per_call: DEFAULT_MAX_DECOMPRESSED_PER_CALL,
                task_path: true,
                keep_metadata_writes: false,
                shallow: false,
                target: None,
            },
        }
    }

    /// A saver with the defaults over a pool the caller made.
    pub fn new(pool: Pool) -> Self {
        let builder = Self::builder(pool);
        PostgresSaver {
            sql: Arc::new(Statements::new(None)),
            pool: builder.pool,
            settings: builder.settings,
            answers: Arc::default(),
        }
    }

    /// A builder over a new pool (16 connections) for a `postgresql://` URL or a libpq
    /// `key=value` connection string, resolved as `psql` resolves it: what the string
    /// leaves out comes from libpq's service file (`service=NAME`, `PGSERVICE`:
    /// `~/.pg_service.conf` or `PGSERVICEFILE`, then `PGSYSCONFDIR`'s), then from
    /// libpq's environment variables (`PGHOST`, `PGPORT`,
    /// `PGUSER`, `PGPASSWORD`, `PGDATABASE`, `PGSSLMODE`, `PGSSLROOTCERT`, …) and
    /// the password file (`~/.pgpass` or `PGPASSFILE`, read only when its mode is 0600
    /// or stricter), so `postgresql:///app` or even `postgresql://` works. TLS follows
    /// `sslmode` (`disable`, `prefer` (the default: TLS when the server offers it),
    /// `require`, `verify-ca`, `verify-full`) and `sslrootcert` (a CA file, or
    /// `system`), with a client certificate from `sslcert`/`sslkey` (or
    /// `~/.postgresql/postgresql.crt` and `.key`) for a server that asks for one; `verify-*` without `sslrootcert` trust `~/.postgresql/root.crt` if
    /// it exists, else the operating system's root certificates. See
    /// `docs/postgres-saver.md` ("Connecting").
    ///
    /// For a pool of your own (another TLS stack, other pool settings), use
    /// [`builder`](Self::builder).
    ///
    /// Connection errors then name the host, port, database, role and TLS mode tried
    /// (never the password), with the server's reason and what to do.
    ///
    /// # Errors
    /// [`ErrorKind::InvalidStoreLocation`](crate::ErrorKind::InvalidStoreLocation) if the
    /// connection string or a setting does not parse (saying why, without echoing the
    /// string, which may hold a password) or the pool cannot be built;
    /// [`ErrorKind::Tls`](crate::ErrorKind::Tls) if the root certificates cannot be read.
    pub fn builder_from_url(url: &str) -> Result<PostgresSaverBuilder> {
        Self::builder_from_url_with_session(url, None)
    }

    /// [`builder_from_url`](Self::builder_from_url), each new connection of whose pool
    /// first runs `session` (e.g. `SET lock_timeout = 3000`): a statement rather than a
    /// startup option, which PgBouncer refuses by default.
    pub(crate) fn builder_from_url_with_session(
        url: &str,
        session: Option<String>,
    ) -> Result<PostgresSaverBuilder> {
        let info = ConnInfo::resolve(url)?;
        let manager = deadpool_postgres::Manager::from_config(
            info.config,
            info.tls,
            deadpool_postgres::ManagerConfig {
                recycling_method: deadpool_postgres::RecyclingMethod::Fast,
            },
        );
        let mut pool = Pool::builder(manager).max_size(16);
        if let Some(sql) = session {
            let sql: Arc<str> = sql.into();
            pool = pool.post_create(deadpool_postgres::Hook::async_fn(move |client, _| {
                let sql = Arc::clone(&sql);
                Box::pin(async move {
                    client
                        .batch_execute(&sql)
                        .await
                        .map_err(deadpool_postgres::HookError::Backend)
                })
            }));
        }
        let pool = pool.build().map_err(|e| PgFault::Config {
            reason: e.to_string(),
        })?;
        let mut builder = Self::builder(pool);
        builder.settings.target = Some(info.target);
        Ok(builder)
    }

    /// The pool.
    pub fn pool(&self) -> &Pool {
        &self.pool
    }

    /// The serializer rows are written with.
    pub fn serializer(&self) -> &Arc<dyn Serializer> {
        &self.settings.serde
    }

    /// A fresh budget for one read call ([`PostgresSaverBuilder::max_decompressed_per_call`]).
    pub(crate) fn call_budget(&self) -> DecompressionBudget {
        DecompressionBudget::new(self.settings.max_decompressed_per_call)
    }

    /// Whether an inline channel value is refused: the serializer refuses plaintext
    /// (strict mode) and `put` leaves no value inline (`all_values_in_blobs`).
    pub(crate) fn refuses_inline(&self) -> bool {
        self.settings.all_blobs && self.settings.serde.refuses_plaintext()
    }

    pub(crate) async fn client(
        &self,
        operation: &'static str,
    ) -> Result<deadpool_postgres::Object> {
        let getting = self.pool.get();
        // Only while the pool has no connection at all: a wait for a busy pool's
        // connection is no sign of a server of another kind, and a probe is one more
        // connection to the server.
        let got = match &self.settings.target {
            Some(target) if self.pool.status().size == 0 => probe::establish(getting, target)
                .await
                .map_err(|why| PgFault::Unmade {
                    operation,
                    target: Arc::clone(target),
                    why,
                })?,
            _ => getting.await,
        };
        match got {
            Ok(client) => Ok(client),
            Err(source) => {
                let target = self.settings.target.clone();
                let answered = match (&source, &target) {
                    (deadpool_postgres::PoolError::Backend(e), Some(t))
                        if probe::worth_asking(e) =>
                    {
                        probe::not_postgres(t).await
                    }
                    _ => None,
                };
                Err(PgFault::Pool {
                    operation,
                    source,
                    target,
                    answered,
                }
                .into())
            }
        }
    }

    /// Runs one statement of an idempotent write (`put`, `put_writes`,
    /// `delete_thread`). A connection the server closed (a restart, a failover,
    /// `pg_terminate_backend`) may still sit in the pool when the driver has not noticed
    /// yet; when the statement fails that way ([`connection_lost`]) it is dropped, and
    /// so is every idle connection in the pool (whatever closed one closed the others
    /// too, and the pool cannot tell them apart yet), and the statement runs again on
    /// a new connection, up to [`WRITE_RETRIES`] times. Each of these statements is
    /// atomic and idempotent, so running it again is safe. A [`WriteSql`] runs in its
    /// lz4 form when the server can and may compress with lz4.
    async fn write_once(
        &self,
        operation: &'static str,
        sql: Write<'_>,
        params: &[Param<'_>],
    ) -> Result<()> {
        let mut retries = 0;
        loop {
            let client = self.client(operation).await?;
            let result = match sql {
                Write::Toasting(forms) => match self.lz4_usable(&*client).await {
                    Ok(lz4) => {
                        client
                            .rows(self.settings.mode, forms.pick(lz4), params)
                            .await
                    }
                    Err(e) => Err(e),
                },
                Write::Plain(sql) => client.rows(self.settings.mode, sql, params).await,
            };
            match result {
                Ok(_) => return Ok(()),
                Err(e) if connection_lost(&e) && retries < WRITE_RETRIES => {
                    drop(deadpool_postgres::Object::take(client));
                    self.pool.retain(|_, _| false);
                    retries += 1;
                }
                Err(e) => return Err(db(operation)(e)),
            }
        }
    }

    /// Whether writes ask for lz4 TOAST compression ([`LZ4_USABLE`]): asked once per
    /// saver (and its clones), on the first write.
    async fn lz4_usable<C: Exec + ?Sized>(
        &self,
        client: &C,
    ) -> Result<bool, tokio_postgres::Error> {
        self.ask(client, &self.answers.lz4, LZ4_USABLE, &[]).await
    }

    /// Whether the blobs table orders versions bytewise ([`VERSIONS_BYTEWISE`]): asked
    /// once per saver (and its clones), on the first page read by ranges.
    async fn versions_bytewise<C: Exec + ?Sized>(
        &self,
        client: &C,
    ) -> Result<bool, tokio_postgres::Error> {
        let table = self.sql.tables.blobs.as_str();
        self.ask(
            client,
            &self.answers.bytewise,
            VERSIONS_BYTEWISE,
            &[(&table, Type::TEXT)],
        )
        .await
    }

    /// The answer to `question` (one row, one `bool`), asked once: a lost connection
    /// is the caller's to retry; any other failure, or no row, counts as no (the
    /// cautious answer for every question asked).
    async fn ask<C: Exec + ?Sized>(
        &self,
        client: &C,
        answer: &Answer,
        question: &str,
        params: &[Param<'_>],
    ) -> Result<bool, tokio_postgres::Error> {
        if let Some(yes) = answer.get() {
            return Ok(yes);
        }
        let yes = match client.rows(self.settings.mode, question, params).await {
            Ok(rows) => rows
                .first()
                .and_then(|row| row.try_get::<_, bool>(0).ok())
                .unwrap_or(false),
            Err(e) if connection_lost(&e) => return Err(e),
            Err(_) => false,
        };
        answer.set(yes);
        Ok(yes)
    }

    /// Creates the schema (if configured) and runs Python's migrations that have not run
    /// yet, under an advisory lock. Idempotent; safe to run from many replicas at once.
    /// Run it on a direct connection, not through PgBouncer's transaction pooling (the
    /// lock is per session and `CREATE INDEX CONCURRENTLY` needs to run outside a
    /// transaction).
    ///
    /// # Errors
    /// [`ErrorKind::ShallowSchema`](crate::ErrorKind::ShallowSchema) if the tables are the shallow saver's,
    /// [`ErrorKind::SchemaTooNew`](crate::ErrorKind::SchemaTooNew) if a newer saver migrated the database,
    /// [`ErrorKind::LockTimeout`](crate::ErrorKind::LockTimeout), or a server error.
    ///
    /// Cancelling it (dropping the future, e.g. under a timeout) is safe: the
    /// connection it ran on, which may hold the migration lock or be inside a
    /// migration's transaction, is closed instead of going back to the pool, so the
    /// server releases the lock and the next `setup` (this replica's or another's)
    /// proceeds. A `setup` that fails closes its connection too.
    pub async fn setup(&self) -> Result<()> {
        self.setup_migrations().await.map(|_| ())
    }

    /// [`setup`](Self::setup), saying which of Python's migrations (their `v`) this
    /// call ran: none when the tables were already at [`LAST_MIGRATION`] (or another
    /// process migrated them while this one waited for the lock).
    ///
    /// # Errors
    /// As [`setup`](Self::setup).
    pub async fn setup_migrations(&self) -> Result<Vec<i32>> {
        self.setup_as(schema::Whole::Stepwise).await
    }

    /// [`setup_migrations`](Self::setup_migrations), but a schema without any of the
    /// tables gets all of them in **one transaction**, every migration recorded in it:
    /// killed at any point, it holds no table or Python's complete layout, never a
    /// part that a later `setup()` or `lgcodec store copy` would have to finish. The
    /// three thread-id indexes are built with plain `CREATE INDEX` (on empty tables the
    /// same index, at once; `CREATE INDEX CONCURRENTLY` cannot run in a transaction).
    /// Tables already there are migrated as [`setup`](Self::setup) migrates them.
    ///
    /// # Errors
    /// As [`setup`](Self::setup).
    pub async fn setup_in_one_transaction(&self) -> Result<Vec<i32>> {
        self.setup_as(schema::Whole::OneTransaction).await
    }

    async fn setup_as(&self, whole: schema::Whole) -> Result<Vec<i32>> {
        let client = CloseUnlessReturned(Some(self.client("setup").await?));
        let result = match &client.0 {
            Some(c) => {
                schema::setup(
                    c,
                    self.settings.mode,
                    self.settings.schema.as_deref(),
                    &self.sql.tables,
                    self.settings.lock_timeout,
                    whole,
                )
                .await
            }
            None => Ok(Vec::new()),
        };
        if result.is_ok() {
            client.give_back();
        }
        result
    }

    /// Python's migrations as [`setup`](Self::setup) runs them (index `v` is migration
    /// `v`, table names qualified by the configured schema), for a dry run to show.
    pub fn migration_statements(&self) -> Vec<String> {
        schema::migrations(&self.sql.tables).to_vec()
    }

    /// Checks, without writing anything, that the tables are Python's fully migrated
    /// layout (migrations 0..=[`LAST_MIGRATION`], every column present).
    ///
    /// # Errors
    /// [`ErrorKind::SchemaMissing`](crate::ErrorKind::SchemaMissing), [`ErrorKind::ShallowSchema`](crate::ErrorKind::ShallowSchema),
    /// [`ErrorKind::SchemaTooNew`](crate::ErrorKind::SchemaTooNew) or [`ErrorKind::SchemaIncomplete`](crate::ErrorKind::SchemaIncomplete).
    pub async fn verify(&self) -> Result<()> {
        let client = self.client("verify").await?;
        schema::verify(
            &*client,
            self.settings.mode,
            self.settings.schema.as_deref(),
            &self.sql.tables,
        )
        .await
    }

    /// The blobs a page of checkpoints references (shared ones once): by ranges of
    /// versions where they order bytewise ([`Statements::blob_ranges`]), else by key.
    async fn page_blobs<C: Exec + ?Sized>(
        &self,
        client: &C,
        page: &[SelectedRow],
        operation: &'static str,
    ) -> Result<Vec<Row>> {
        let mut keys: HashSet<(&str, &str, &str, Cow<'_, str>)> = HashSet::new();
        for row in page {
            keys.extend(row.blob_keys());
        }
        if keys.is_empty() {
            return Ok(Vec::new());
        }
        if let Some(ranges) = &self.sql.blob_ranges {
            if self
                .versions_bytewise(client)
                .await
                .map_err(db(operation))?
            {
                return self.blobs_by_range(client, ranges, &keys, operation).await;
            }
        }
        let keys: Vec<BlobKey<'_>> = keys.iter().map(|(t, n, c, v)| (*t, *n, *c, &**v)).collect();
        self.blobs_by_key(client, &keys, operation).await
    }

    /// The blob rows of `keys` by primary key, one statement.
    async fn blobs_by_key<C: Exec + ?Sized>(
        &self,
        client: &C,
        keys: &[BlobKey<'_>],
        operation: &'static str,
    ) -> Result<Vec<Row>> {
        let mut cols: [Vec<&str>; 4] = Default::default();
        for &(t, n, c, v) in keys {
            cols[0].push(t);
            cols[1].push(n);
            cols[2].push(c);
            cols[3].push(v);
        }
        if cols[0].is_empty() {
            return Ok(Vec::new());
        }
        let [threads, nss, channels, versions] = &cols;
        client
            .rows(
                self.settings.mode,
                &self.sql.blobs,
                &[
                    (threads, Type::TEXT_ARRAY),
                    (nss, Type::TEXT_ARRAY),
                    (channels, Type::TEXT_ARRAY),
                    (versions, Type::TEXT_ARRAY),
                ],
            )
            .await
            .map_err(db(operation))
    }

    /// The blob rows of `keys` as ranges: per (thread, ns, channel) its lowest to
    /// highest wanted version, at most as many rows as it wants, in version order. A
    /// range that came back short holds every stored version inside it; one cut off
    /// at its count (versions nobody asked for in between: a branch, or integer
    /// versions, where `"10"` sorts between `"1"` and `"2"`) holds every stored
    /// version up to its last row, and the wanted ones past it are read by key. So
    /// no more rows come back than keys were asked for, twice at worst, and no range
    /// reads further than that. The rows not asked for stay among the rows, unused.
    async fn blobs_by_range<C: Exec + ?Sized>(
        &self,
        client: &C,
        statement: &str,
        keys: &HashSet<(&str, &str, &str, Cow<'_, str>)>,
        operation: &'static str,
    ) -> Result<Vec<Row>> {
        let mut groups: BTreeMap<(&str, &str, &str), Vec<&str>> = BTreeMap::new();
        for (t, n, c, v) in keys {
            groups.entry((*t, *n, *c)).or_default().push(v);
        }
        let mut cols: [Vec<&str>; 5] = Default::default();
        let mut counts: Vec<i64> = Vec::with_capacity(groups.len());
        for ((t, n, c), versions) in &mut groups {
            // `str`'s order is byte order, the collation's here.
            versions.sort_unstable();
            let (Some(lo), Some(hi)) = (versions.first(), versions.last()) else {
                continue;
            };
            for (col, v) in cols.iter_mut().zip([*t, *n, *c, *lo, *hi]) {
                col.push(v);
            }
            counts.push(i64::try_from(versions.len()).unwrap_or(i64::MAX));
        }
        let [threads, nss, channels, los, his] = &cols;
        let mut rows = client
            .rows(
                self.settings.mode,
                statement,
                &[
                    (threads, Type::TEXT_ARRAY),
                    (nss, Type::TEXT_ARRAY),
                    (channels, Type::TEXT_ARRAY),
                    (los, Type::TEXT_ARRAY),
                    (his, Type::TEXT_ARRAY),
                    (&counts, Type::INT8_ARRAY),
                ],
            )
            .await
            .map_err(db(operation))?;
        // Per range: the rows it gave and the highest version among them.
        let mut read: HashMap<(&str, &str, &str), (usize, &str)> = HashMap::new();
        for row in &rows {
            let key: (&str, &str, &str) =
                (rows::col(row, 0)?, rows::col(row, 1)?, rows::col(row, 2)?);
            let version: &str = rows::col(row, 3)?;
            let Some((key, _)) = groups.get_key_value(&key) else {
                continue;
            };
            let seen = read.entry(*key).or_insert((0, version));
            seen.0 += 1;
            seen.1 = seen.1.max(version);
        }
        let mut past_the_cut: Vec<BlobKey<'_>> = Vec::new();
        for (&(t, n, c), versions) in &groups {
            if let Some(&(count, last)) = read.get(&(t, n, c)) {
                if count >= versions.len() {
                    let past = versions.iter().filter(|v| **v > last);
                    past_the_cut.extend(past.map(|v| (t, n, c, *v)));
                }
            }
        }
        drop(read);
        let more = self.blobs_by_key(client, &past_the_cut, operation).await?;
        rows.extend(more);
        Ok(rows)
    }

    /// [`get_tuple`](CheckpointSaver::get_tuple) on `client`, a connection the caller
    /// holds (a store command's own, where the server has no slot for the pool's).
    pub(crate) async fn get_tuple_on<C: Exec + ?Sized>(
        &self,
        client: &C,
        config: &CheckpointConfig,
    ) -> Result<Option<CheckpointTuple>> {
        let thread = config.require_thread_id("get_tuple")?;
        let ns = config.ns();
        let mut found = match config.checkpoint_id.as_deref().filter(|id| !id.is_empty()) {
            Some(id) => {
                self.select_tuples(
                    client,
                    &self.sql.get_tuple_by_id,
                    &[(&thread, Type::TEXT), (&ns, Type::TEXT), (&id, Type::TEXT)],
                    PageBlobs::Inline,
                    "get_tuple",
                )
                .await?
            }
            None => {
                self.select_tuples(
                    client,
                    &self.sql.get_tuple_latest,
                    &[(&thread, Type::TEXT), (&ns, Type::TEXT)],
                    PageBlobs::Inline,
                    "get_tuple",
                )
                .await?
            }
        };
        Ok(found.pop())
    }

    /// Runs a `select` (made with `page_blobs`) and builds the tuples, migrating
    /// `v < 4` pending sends.
    async fn select_tuples<C: Exec + ?Sized>(
        &self,
        client: &C,
        sql: &str,
        params: &[Param<'_>],
        page_blobs: PageBlobs,
        operation: &'static str,
    ) -> Result<Vec<CheckpointTuple>> {
        let read = self
            .select_parts(client, sql, params, (page_blobs, false), operation)
            .await?;
        Ok(read.into_iter().map(|(tuple, _)| tuple).collect())
    }

    /// [`select_tuples`](Self::select_tuples), with `raw`: each tuple without the
    /// channel values its blobs hold as clear msgpack, `bytes` or `null` pairs, given
    /// apart as stored ([`SelectedRow::blob_values`]). Not for a checkpoint that takes
    /// its parent's sends, nor with a serializer that refuses plaintext (all decoded).
    pub(crate) async fn select_parts<C: Exec + ?Sized>(
        &self,
        client: &C,
        sql: &str,
        params: &[Param<'_>],
        (page_blobs, raw): (PageBlobs, bool),
        operation: &'static str,
    ) -> Result<Vec<(CheckpointTuple, rows::Blobs)>> {
        let raw = raw && !self.settings.serde.refuses_plaintext();
        let rows = client
            .rows(self.settings.mode, sql, params)
            .await
            .map_err(db(operation))?;
        let selected = rows
            .into_iter()
            .map(SelectedRow::read)
            .collect::<Result<Vec<_>>>()?;
        let blob_rows = match page_blobs {
            PageBlobs::Separate => self.page_blobs(client, &selected, operation).await?,
            PageBlobs::Inline => Vec::new(),
        };
        // One decompression budget for every row this call decodes.
        let budget = self.call_budget();
        // Every row's blobs decoded while the map borrows them from the rows, before
        // the rows are taken apart into tuples.
        let blob_values = budget.scope(|| -> Result<Vec<_>> {
            let mut map = rows::BlobMap::new();
            rows::add_blob_rows(&blob_rows, &mut map)?;
            if page_blobs == PageBlobs::Inline {
                for row in &selected {
                    row.inline_blobs(&mut map)?;
                }
            }
            let shallow = self.settings.shallow;
            let values = selected
                .iter()
                .map(|r| r.blob_values(&*self.settings.serde, &map, raw && !r.needs_sends(shallow)))
                .collect::<Result<Vec<_>>>()?;
            if self.refuses_inline() {
                for (row, (values, _)) in selected.iter().zip(&values) {
                    row.refuse_inline(values)?;
                }
            }
            Ok(values)
        })?;
        drop(blob_rows);
        let mut sends: IndexMap<(String, String, String), Vec<Value>> = IndexMap::new();
        let wanted: Vec<&SelectedRow> = selected
            .iter()
            .filter(|r| r.needs_sends(self.settings.shallow))
            .collect();
        if !wanted.is_empty() {
            let threads: Vec<&str> = wanted.iter().map(|r| r.thread_id.as_str()).collect();
            let nss: Vec<&str> = wanted.iter().map(|r| r.checkpoint_ns.as_str()).collect();
            let parents: Vec<&str> = wanted
                .iter()
                .map(|r| r.parent.as_deref().unwrap_or_default())
                .collect();
            let rows = client
                .rows(
                    self.settings.mode,
                    &self.sql.pending_sends,
                    &[
                        (&threads, Type::TEXT_ARRAY),
                        (&nss, Type::TEXT_ARRAY),
                        (&parents, Type::TEXT_ARRAY),
                    ],
                )
                .await
                .map_err(db(operation))?;
            for row in rows {
                let get = |i| row.try_get::<_, String>(i).map_err(db(operation));
                let key = (get(0)?, get(1)?, get(2)?);
                let types: Vec<Option<String>> = row.try_get(3).map_err(db(operation))?;
                let blobs: Vec<Vec<u8>> = row.try_get(4).map_err(db(operation))?;
                let loc = location(&key.0, &key.1, &key.2);
                let values =
                    budget.scope(|| load_sends(&*self.settings.serde, &loc, types, blobs))?;
                sends.insert(key, values);
            }
        }
        budget.scope(|| {
            selected
                .into_iter()
                .zip(blob_values)
                .map(|(r, (values, kept))| {
                    let s = if r.needs_sends(self.settings.shallow) {
                        let key = (
                            r.thread_id.clone(),
                            r.checkpoint_ns.clone(),
                            r.parent.clone().unwrap_or_default(),
                        );
                        sends.get(&key).cloned()
                    } else {
                        None
                    };
                    // The shallow saver returns the sends as `pending_sends`, which
                    // LangGraph moves into `__pregel_tasks` and drops (`Pregel.
                    // _migrate_checkpoint`); its stored `pending_sends: []` goes too.
                    let moved = self.settings.shallow && s.is_some();
                    let mut tuple = r.into_tuple(&*self.settings.serde, values, s, || {
                        self.get_next_version(None)
                    })?;
                    if moved {
                        tuple.checkpoint.extra.shift_remove("pending_sends");
                    }
                    Ok((tuple, kept))
                })
                .collect()
        })
    }
}

/// A pooled connection that is closed, not returned to the pool, unless
/// [`give_back`](Self::give_back) is called: when the future using it is dropped
/// mid-way (a cancelled `setup` holding the advisory lock) or the use failed, closing
/// it makes the server release its session state (advisory locks, an open
/// transaction).
struct CloseUnlessReturned(Option<deadpool_postgres::Object>);

impl CloseUnlessReturned {
    /// Returns the connection to the pool.
    fn give_back(mut self) {
        drop(self.0.take());
    }
}

impl Drop for CloseUnlessReturned {
    fn drop(&mut self) {
        if let Some(object) = self.0.take() {
            // Detached from the pool: dropping the client closes the connection.
            drop(deadpool_postgres::Object::take(object));
        }
    }
}

/// `(value, type)` pairs built for one call, borrowed as [`Param`]s.
struct Params(Vec<(Box<dyn ToSql + Sync + Send>, Type)>);

impl Params {
    fn push(&mut self, value: impl ToSql + Sync + Send + 'static, ty: Type) -> String {
        self.0.push((Box::new(value), ty));
        format!("${}", self.0.len())
    }

    fn as_params(&self) -> Vec<Param<'_>> {
        self.0
            .iter()
            .map(|(v, t)| (&**v as &(dyn ToSql + Sync), t.clone()))
            .collect()
    }
}

/// The parameters of one `put` statement (`self.sql.put`).
struct PutRow<'a> {
    thread: &'a str,
    ns: &'a str,
    id: &'a str,
    parent: Option<&'a str>,
    split: rows::SplitValues,
    metadata_json: String,
}

impl PutRow<'_> {
    /// The statement's parameters; `blobs` is [`rows::SplitValues::blob_slices`] of
    /// this row (the serializer's buffers, borrowed rather than copied).
    // A `&Vec`, not a slice: the parameter borrows a `ToSql` value for `'b`, and
    // `Vec<&[u8]>` is one where `[&[u8]]` (unsized) is not.
    #[allow(clippy::ptr_arg)]
    fn params<'b>(&'b self, blobs: &'b Vec<&'b [u8]>) -> [Param<'b>; 10] {
        [
            (&self.thread, Type::TEXT),
            (&self.ns, Type::TEXT),
            (&self.id, Type::TEXT),
            (&self.parent, Type::TEXT),
            (&self.split.checkpoint_json, Type::TEXT),
            (&self.metadata_json, Type::TEXT),
            (&self.split.channels, Type::TEXT_ARRAY),
            (&self.split.versions, Type::TEXT_ARRAY),
            (&self.split.types, Type::TEXT_ARRAY),
            (blobs, Type::BYTEA_ARRAY),
        ]
    }

    fn config(&self) -> CheckpointConfig {
        CheckpointConfig::for_checkpoint(self.thread, self.ns, self.id)
    }
}

impl PostgresSaver {
    /// What Python's `put` writes: channel values split into inline JSONB and blobs
    /// (for the channels in `new_versions`), metadata without `writes`, the parent id
    /// from `config`.
    fn put_row<'a>(
        &self,
        config: &'a CheckpointConfig,
        checkpoint: &'a Checkpoint,
        metadata: &CheckpointMetadata,
        new_versions: &ChannelVersions,
    ) -> Result<PutRow<'a>> {
        let thread = config.require_thread_id("put")?;
        let split = rows::split_values(
            &*self.settings.serde,
            checkpoint,
            new_versions,
            self.settings.all_blobs,
        )?;
        let mut md = checkpoint_metadata(config, metadata);
        if !self.settings.keep_metadata_writes {
            md.0.shift_remove("writes");
        }
        let md = md.to_value();
        refuse_deep_metadata(&md, jsonb::MAX_DEPTH)?;
        let metadata_json = jsonb::write(&md, "metadata")?;
        Ok(PutRow {
            thread,
            ns: config.ns(),
            id: &checkpoint.id,
            parent: config.checkpoint_id.as_deref(),
            split,
            metadata_json,
        })
    }
}

#[async_trait]
impl CheckpointSaver for PostgresSaver {
    /// [`PostgresSaver::verify`]: the tables have Python's layout.
    async fn verify(&self) -> Result<()> {
        PostgresSaver::verify(self).await
    }

    async fn put(
        &self,
        config: &CheckpointConfig,
        checkpoint: &Checkpoint,
        metadata: &CheckpointMetadata,
        new_versions: &ChannelVersions,
    ) -> Result<CheckpointConfig> {
        let row = self.put_row(config, checkpoint, metadata, new_versions)?;
        let blobs = row.split.blob_slices();
        self.write_once("put", Write::Toasting(&self.sql.put), &row.params(&blobs))
            .await?;
        Ok(row.config())
    }

    async fn put_writes(
        &self,
        config: &CheckpointConfig,
        writes: &[(String, Value)],
        task_id: &str,
        task_path: &str,
    ) -> Result<()> {
        let thread = config.require_thread_id("put_writes")?;
        let checkpoint_id = config.require_checkpoint_id("put_writes")?;
        let ns = config.ns();
        let upsert = all_special(writes);
        // One statement cannot touch a key twice: keep what Python's one-by-one inserts
        // leave (the last write of an index when upserting, the first otherwise).
        let mut by_idx: IndexMap<i32, (&str, &Value)> = IndexMap::new();
        for (position, (channel, value)) in writes.iter().enumerate() {
            let idx = i32::try_from(write_idx(channel, position)).map_err(|_| {
                SaverFault::InvalidConfig {
                    reason: format!(
                        "put_writes: write index {position} does not fit the INTEGER idx column"
                    ),
                }
            })?;
            if upsert || !by_idx.contains_key(&idx) {
                by_idx.insert(idx, (channel.as_str(), value));
            }
        }
        let mut idxs = Vec::with_capacity(by_idx.len());
        let mut channels = Vec::with_capacity(by_idx.len());
        let mut types = Vec::with_capacity(by_idx.len());
        let mut blobs = Vec::with_capacity(by_idx.len());
        for (idx, (channel, value)) in by_idx {
            let typed = self.settings.serde.dumps_typed(value)?;
            idxs.push(idx);
            channels.push(channel);
            types.push(typed.type_tag);
            blobs.push(typed.data);
        }
        let blobs: Vec<&[u8]> = blobs.iter().map(|b| &b[..]).collect();
        let sql = if upsert {
            &self.sql.put_writes_upsert
        } else {
            &self.sql.put_writes_ignore
        };
        self.write_once(
            "put_writes",
            Write::Toasting(sql),
            &[
                (&thread, Type::TEXT),
                (&ns, Type::TEXT),
                (&checkpoint_id, Type::TEXT),
                (&task_id, Type::TEXT),
                (&task_path, Type::TEXT),
                (&idxs, Type::INT4_ARRAY),
                (&channels, Type::TEXT_ARRAY),
                (&types, Type::TEXT_ARRAY),
                (&blobs, Type::BYTEA_ARRAY),
            ],
        )
        .await?;
        Ok(())
    }

    async fn get_tuple(&self, config: &CheckpointConfig) -> Result<Option<CheckpointTuple>> {
        config.require_thread_id("get_tuple")?;
        let client = self.client("get_tuple").await?;
        self.get_tuple_on(&*client, config).await
    }

    async fn list(
        &self,
        config: Option<&CheckpointConfig>,
        options: &ListOptions,
    ) -> Result<Vec<CheckpointTuple>> {
        let mut params = Params(Vec::new());
        let mut wheres: Vec<String> = Vec::new();
        if let Some(c) = config {
            let thread = c.require_thread_id("list")?;
            wheres.push(format!(
                "thread_id = {}",
                params.push(thread.to_owned(), Type::TEXT)
            ));
            if let Some(ns) = &c.checkpoint_ns {
                wheres.push(format!(
                    "checkpoint_ns = {}",
                    params.push(ns.clone(), Type::TEXT)
                ));
            }
            if let Some(id) = c.checkpoint_id.as_ref().filter(|id| !id.is_empty()) {
                wheres.push(format!(
                    "checkpoint_id = {}",
                    params.push(id.clone(), Type::TEXT)
                ));
            }
        }
        if !options.filter.is_empty() {
            let filter = Value::Map(
                options
                    .filter
                    .iter()
                    .map(|(k, v)| (Value::from(k.as_str()), v.clone()))
                    .collect(),
            );
            let text = jsonb::write(&filter, "filter")?;
            wheres.push(format!(
                "metadata @> {}::jsonb",
                params.push(text, Type::TEXT)
            ));
        }
        if let Some(before) = options
            .before
            .as_ref()
            .and_then(|b| b.checkpoint_id.clone())
        {
            wheres.push(format!(
                "checkpoint_id < {}",
                params.push(before, Type::TEXT)
            ));
        }
        let page_blobs = PageBlobs::for_page(options.limit);
        // A small page's limit is written into the statement (at most
        // `INLINE_MAX_ROWS` variants) so that its plan, generic ones included, is
        // costed for that many rows; larger limits are a parameter.
        let limit = options.limit.map(|l| match page_blobs {
            PageBlobs::Inline => l.to_string(),
            PageBlobs::Separate => params.push(i64::try_from(l).unwrap_or(i64::MAX), Type::INT8),
        });
        let where_clause = if wheres.is_empty() {
            String::new()
        } else {
            format!("WHERE {}", wheres.join(" AND "))
        };
        let sql = self.sql.select(&where_clause, limit.as_deref(), page_blobs);
        let client = self.client("list").await?;
        self.select_tuples(&*client, &sql, &params.as_params(), page_blobs, "list")
            .await
    }

    async fn delete_thread(&self, thread_id: &str) -> Result<()> {
        self.write_once(
            "delete_thread",
            Write::Plain(&self.sql.delete_thread),
            &[(&thread_id, Type::TEXT)],
        )
        .await?;
        Ok(())
    }

    fn capabilities(&self) -> Capabilities {
        Capabilities::ALL
    }

    async fn delete_for_runs(&self, run_ids: &[String]) -> Result<()> {
        extended::delete_for_runs(self, run_ids).await
    }

    async fn copy_thread(&self, source_thread_id: &str, target_thread_id: &str) -> Result<()> {
        extended::copy_thread(self, source_thread_id, target_thread_id).await
    }

    async fn prune(&self, thread_ids: &[String], strategy: PruneStrategy) -> Result<()> {
        extended::prune(self, thread_ids, strategy).await
    }

    async fn get_delta_channel_history(
        &self,
        config: &CheckpointConfig,
        channels: &[String],
    ) -> Result<IndexMap<String, DeltaChannelHistory>> {
        extended::delta_channel_history(self, config, channels).await
    }

    /// Python's `BasePostgresSaver.get_next_version`:
    /// `f"{n + 1:032}.{random.random():016}"` where `n` is the integer before the first
    /// `.` of the current version (0 when there is none).
    fn get_next_version(&self, current: Option<&ChannelVersion>) -> Result<ChannelVersion> {
        next_string_version(current, "PostgresSaver")
    }
}
