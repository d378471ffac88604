//! The Postgres backend: Python's `checkpoint_blobs` and `checkpoint_writes` (and the
//! inline values of `checkpoints`), one connection, read-only sessions unless the
//! operation writes; the layout is verified without writing.

use std::sync::{Arc, Mutex};

use tokio_postgres::types::ToSql;
use tokio_postgres::Client;

use super::backend::{
    page_sql_capped, row_sql, InlineRow, KeyPart, Row, Table, Update, Values, Writes,
};
use super::error::StoreFault;
use super::retry::Retry;
use crate::error::Error;
use crate::kind::ErrorKind;
use crate::saver::layout::StoreLayout;
use crate::saver::postgres::{ConnInfo, PostgresSaver};

type Result<T, E = Error> = std::result::Result<T, E>;

pub(crate) use missing::not_here;

#[cfg(all(feature = "sqlite", feature = "postgres"))]
mod checkpoints;
mod missing;
mod pooler;
#[cfg(all(feature = "sqlite", feature = "postgres"))]
mod rows;

/// Pending writes: the same table in the full and the shallow saver.
const WRITES: Table = Table {
    name: "checkpoint_writes",
    key: &[
        "thread_id",
        "checkpoint_ns",
        "checkpoint_id",
        "task_id",
        "idx",
    ],
    type_col: "type",
    value_col: "blob",
    label: "checkpoint_writes.blob",
};

pub(crate) const TABLES: [Table; 2] = [
    Table {
        name: "checkpoint_blobs",
        key: &["thread_id", "checkpoint_ns", "channel", "version"],
        type_col: "type",
        value_col: "blob",
        label: "checkpoint_blobs.blob",
    },
    WRITES,
];

/// The tables of Python's `ShallowPostgresSaver` (one checkpoint per thread and
/// namespace): blobs keyed by channel, without versions; writes as the full saver's.
pub(crate) const SHALLOW_TABLES: [Table; 2] = [
    Table {
        name: "checkpoint_blobs",
        key: &["thread_id", "checkpoint_ns", "channel"],
        type_col: "type",
        value_col: "blob",
        label: "checkpoint_blobs.blob",
    },
    WRITES,
];

pub(crate) fn pg(operation: &'static str) -> impl Fn(tokio_postgres::Error) -> Error {
    move |source| StoreFault::Postgres { operation, source }.into()
}

/// A [`ReadOnly`](crate::ErrorKind::ReadOnly) error when the server runs this session's
/// transactions read-only (a hot standby, or `default_transaction_read_only`), before
/// anything is written.
pub(crate) async fn refuse_read_only(client: &Client, location: &str) -> Result<()> {
    let ro: String = client
        .query_one("SELECT current_setting('transaction_read_only')", &[])
        .await
        .map_err(pg("open"))?
        .try_get(0)
        .map_err(pg("open"))?;
    if ro == "on" {
        return Err(StoreFault::ReadOnly {
            location: location.to_owned(),
            reason: "the server runs read-only transactions (a standby, or \
                     default_transaction_read_only): write to the primary"
                .to_owned(),
        }
        .into());
    }
    Ok(())
}

/// The schema unqualified table names resolve to on `client`: the first schema of its
/// `search_path` that exists (what the savers and Python's saver write to when the URL
/// sets `options=-csearch_path=…`).
///
/// # Errors
/// The server's; [`ErrorKind::InvalidStoreLocation`](crate::ErrorKind::InvalidStoreLocation)
/// when no schema of the `search_path` exists (it was taken for `public`, where
/// unqualified names do not resolve).
pub(crate) async fn pg_current_schema(client: &Client) -> Result<String> {
    let row = client
        .query_one("SELECT current_schema()", &[])
        .await
        .map_err(pg("open"))?;
    let schema: Option<String> = row.try_get(0).map_err(pg("open"))?;
    schema.ok_or_else(crate::saver::postgres::no_schema)
}

/// One connection to `url` ([`connect`]) and what the savers' layout model makes of
/// the schema it writes to: the connection, that schema, and the layout (or why it
/// could not be read, for the caller to weigh).
///
/// # Errors
/// Connecting's, or the server's on asking for the schema.
pub(crate) async fn connect_and_detect(
    url: &str,
    writable: bool,
) -> Result<(Client, String, Result<StoreLayout>)> {
    let client = connect(url, writable).await?;
    let schema = pg_current_schema(&client).await?;
    let layout = crate::saver::layout::detect_postgres(&client, &schema).await;
    Ok((client, schema, layout))
}

#[cfg(all(feature = "sqlite", feature = "postgres"))]
/// Whether a Postgres schema of `layout` holds Python's migrations begun and not
/// finished, and no rows: `checkpoint_migrations` recorded, below the last, and every
/// saver table there empty.
async fn partly_set_up(
    client: &tokio_postgres::Client,
    schema: &str,
    layout: &StoreLayout,
) -> Result<bool> {
    match layout {
        StoreLayout::PostgresPython {
            migrations: Some(_),
        } => {}
        StoreLayout::Foreign { .. } => {}
        _ => return Ok(false),
    }
    let rows = client
        .query(
            "SELECT table_name::text FROM information_schema.tables WHERE table_schema = $1 \
             AND table_name IN ('checkpoints', 'checkpoint_blobs', 'checkpoint_writes', 'checkpoint_migrations')",
            &[&schema],
        )
        .await
        .map_err(pg("open"))?;
    let tables: Vec<String> = rows
        .iter()
        .map(|r| r.try_get(0))
        .collect::<std::result::Result<_, _>>()
        .map_err(pg("open"))?;
    if !tables.iter().any(|t| t == "checkpoint_migrations") {
        return Ok(false);
    }
    let quote = |t: &str| format!("\"{}\".\"{}\"", schema.replace('"', "\"\""), t);
    let recorded: Option<i32> = client
        .query_one(
            &format!("SELECT max(v) FROM {}", quote("checkpoint_migrations")),
            &[],
        )
        .await
        .and_then(|r| r.try_get(0))
        .map_err(pg("open"))?;
    if recorded.is_none_or(|v| v >= crate::saver::postgres::LAST_MIGRATION) {
        return Ok(false);
    }
    for t in tables.iter().filter(|t| *t != "checkpoint_migrations") {
        let any: bool = client
            .query_one(&format!("SELECT EXISTS (SELECT 1 FROM {})", quote(t)), &[])
            .await
            .and_then(|r| r.try_get(0))
            .map_err(pg("open"))?;
        if any {
            return Ok(false);
        }
    }
    Ok(true)
}

/// A Postgres store: one connection, shared by the sweeps' statements in flight
/// ([`Values`]) and taken whole by the checkpoint operations' transactions
/// ([`Checkpoints`](super::backend::Checkpoints), in `postgres/checkpoints.rs`), re-opened
/// as it was opened after the server closes it.
pub(crate) struct PgStore {
    url: String,
    /// LangGraphJS wrote it: audited, never rewritten.
    pub(crate) js: bool,
    /// Python's `ShallowPostgresSaver` wrote it ([`SHALLOW_TABLES`]).
    pub(crate) shallow: bool,
    writable: bool,
    client: Mutex<Arc<Client>>,
}

impl std::fmt::Debug for PgStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PgStore")
            .field("writable", &self.writable)
            .finish_non_exhaustive()
    }
}

/// The statement that sets a session's `lock_timeout` to
/// [`POSTGRES_LOCK_WAIT`](crate::saver::layout::POSTGRES_LOCK_WAIT) where the server,
/// database or role sets no limit (`0`), run on every connection a store command opens
/// (its own, and its savers' for reading checkpoints or writing a target).
pub(crate) fn bounded_lock_wait() -> String {
    format!(
        "SELECT set_config('lock_timeout', '{}', false) \
         WHERE current_setting('lock_timeout') = '0'",
        crate::saver::layout::POSTGRES_LOCK_WAIT.as_millis()
    )
}

/// One connection to the server of `url` (resolved as libpq resolves it: TLS, the
/// environment, the password file; [`ConnInfo`]), in a read-only session unless
/// `writable`.
///
/// # Errors
/// What was tried and why it failed ([`ConnInfo::connect`]), or the server's error.
pub(crate) async fn connect(url: &str, writable: bool) -> Result<Client> {
    let info = ConnInfo::resolve(url)?;
    let client = info.connect("connect").await?;
    // Before anything is set on the session (pooler.rs).
    pooler::refuse_transaction_pooler(&client, &info, &super::redact(url)).await?;
    // A store command's statements each touch one page: JIT compilation (on by default
    // since PostgreSQL 12 for plans over `jit_above_cost`) costs more than it saves.
    // Measured on PG 15: prune's page query 2.6 ms without JIT, 290 ms with it. A
    // server without the setting (before 11) refuses it; the session goes on as it is.
    let _ = client.batch_execute("SET jit = off").await;
    // No statement waits on a lock for ever: a session that keeps a table or a row
    // locked (a transaction left open in psql, a long `ALTER TABLE`) ends the command
    // with `lock_timeout` and what to do, as a SQLite store's busy wait does, instead
    // of a command that hangs with nothing said. A limit the server or role already
    // sets is left as it is.
    client
        .batch_execute(&bounded_lock_wait())
        .await
        .map_err(pg("connect"))?;
    if !writable {
        client
            .batch_execute("SET SESSION CHARACTERISTICS AS TRANSACTION READ ONLY")
            .await
            .map_err(pg("connect"))?;
    }
    Ok(client)
}

fn key_params(key: &[KeyPart]) -> Vec<Box<dyn ToSql + Sync + Send>> {
    key.iter()
        .map(|k| -> Box<dyn ToSql + Sync + Send> {
            match k {
                KeyPart::Text(s) => Box::new(s.clone()),
                KeyPart::Int(i) => Box::new(i32::try_from(*i).unwrap_or(i32::MAX)),
                // Postgres key columns are text: their values are always UTF-8, so
                // the Postgres reader never makes this part.
                KeyPart::Bytes { bytes, .. } => {
                    Box::new(String::from_utf8_lossy(bytes).into_owned())
                }
            }
        })
        .collect()
}

fn read_row(t: &Table, r: &tokio_postgres::Row) -> Result<Row, tokio_postgres::Error> {
    let mut key = Vec::with_capacity(t.key.len());
    for (i, column) in t.key.iter().enumerate() {
        key.push(if Table::is_int(column) {
            KeyPart::Int(i64::from(r.try_get::<_, i32>(i)?))
        } else {
            KeyPart::Text(r.try_get(i)?)
        });
    }
    let n = t.key.len();
    Ok(Row {
        key,
        tag: r.try_get(n)?,
        data: r.try_get(n + 1)?,
    })
}

/// A Postgres saver's error (`verify`, `setup`) about the store at `location`: the
/// server's error, a lost connection, or a store that is not (yet) Python's layout.
pub(crate) fn from_saver(location: &str, e: Error) -> Error {
    match e.kind() {
        ErrorKind::Storage | ErrorKind::Tls => e,
        ErrorKind::ConnectionUnavailable => StoreFault::ConnectionLost {
            attempts: 1,
            last: e.to_string(),
        }
        .into(),
        _ => StoreFault::NotAStore {
            location: location.to_owned(),
            found: e.to_string(),
        }
        .into(),
    }
}

impl PgStore {
    /// Connects and verifies Python's layout (tables, columns, `checkpoint_migrations`
    /// 0..=9) without writing.
    pub(crate) async fn open(url: &str, writable: bool, location: &str) -> Result<Self> {
        let (client, schema, layout) = connect_and_detect(url, writable).await?;
        if matches!(layout, Ok(StoreLayout::Empty)) {
            return Err(not_here(&client, &schema, location).await);
        }
        let saver = PostgresSaver::builder_from_url(url)
            .and_then(|b| b.build())
            .map_err(|e| StoreFault::InvalidLocation {
                given: location.to_owned(),
                reason: e.to_string(),
            })?;
        // Every Python and LangGraphJS layout holds the columns the sweeps read and
        // rewrite (the blobs and writes by primary key, their type and bytes): older
        // ones are audited as they are. Anything else gets the saver's own verdict.
        let mut shallow = false;
        let js = match layout {
            Ok(StoreLayout::PostgresPython { .. } | StoreLayout::PostgresPythonTaskPathAt8) => {
                false
            }
            Ok(StoreLayout::PostgresJs { .. }) => true,
            Ok(StoreLayout::PostgresShallow { .. }) => {
                shallow = true;
                false
            }
            // Tables of the savers' names that no release left: say what disagrees
            // (the saver's check would only name the migrations).
            Ok(found @ StoreLayout::Foreign { .. }) => {
                return Err(StoreFault::NotAStore {
                    location: location.to_owned(),
                    found: found.to_string(),
                }
                .into())
            }
            _ => {
                if let Err(e) = saver.verify().await {
                    return Err(from_saver(location, e));
                }
                false
            }
        };
        drop(saver);
        if writable {
            refuse_read_only(&client, location).await?;
        }
        Ok(PgStore {
            js,
            shallow,
            ..Self::over(client, url, writable)
        })
    }

    /// A store in today's Python layout over `client`, opened (and its layout checked)
    /// by the caller: the target of prune, retain, import and copy (read-only for a
    /// dry run's view); [`open`](Self::open) says which older layout it is.
    fn over(client: Client, url: &str, writable: bool) -> Self {
        PgStore {
            url: url.to_owned(),
            js: false,
            shallow: false,
            writable,
            client: Mutex::new(Arc::new(client)),
        }
    }

    fn client(&self) -> Arc<Client> {
        Arc::clone(&self.client.lock().unwrap_or_else(|e| e.into_inner()))
    }

    #[cfg(all(feature = "sqlite", feature = "postgres"))]
    /// The connection taken whole, for a transaction: no sweep statement holds it
    /// under `&mut self` (one left running by a dropped future gets a new connection
    /// here, rather than a transaction it would interleave with).
    async fn client_mut(&mut self) -> Result<&mut Client> {
        let shared = self.client.get_mut().unwrap_or_else(|e| e.into_inner());
        if Arc::get_mut(shared).is_none() {
            *shared = Arc::new(connect(&self.url, self.writable).await?);
        }
        Arc::get_mut(shared).ok_or_else(|| {
            StoreFault::Task("a new Postgres connection was shared before its first use".to_owned())
                .into()
        })
    }
}

#[cfg(all(feature = "sqlite", feature = "postgres"))]
impl PgStore {
    /// Connects for writing to a database in today's Python layout: one without the
    /// saver's tables gets them (in one transaction: a kill leaves none or all) when
    /// `create_if_empty`, and is refused otherwise; Python's migrations begun and not
    /// finished on a database without rows (a `setup()` killed midway) are finished as
    /// `setup()` does. Returns the store and whether tables were created.
    ///
    /// # Errors
    /// [`ErrorKind::NotAStore`](crate::ErrorKind::NotAStore) for another layout than
    /// today's, [`ErrorKind::ReadOnly`](crate::ErrorKind::ReadOnly), or the server's error.
    pub(crate) async fn open_current(
        url: &str,
        create_if_empty: bool,
        location: &str,
    ) -> Result<(Self, bool)> {
        let saver_err = super::error::saver_err(location);
        let saver = || {
            PostgresSaver::builder_from_url(url)
                .and_then(|b| b.build())
                .map_err(&saver_err)
        };
        let (client, schema, layout) = connect_and_detect(url, true).await?;
        refuse_read_only(&client, location).await?;
        let created = match layout.map_err(&saver_err)? {
            StoreLayout::Empty if create_if_empty => {
                if let Some(why) = missing::may_not_create(&client).await? {
                    return Err(Error::new(ErrorKind::Storage, format!("{location}: {why}"))
                        .with_subject(location));
                }
                saver()?
                    .setup_in_one_transaction()
                    .await
                    .map_err(&saver_err)?;
                true
            }
            ref l if l.is_current() => false,
            ref l if create_if_empty && partly_set_up(&client, &schema, l).await? => {
                saver()?.setup().await.map_err(&saver_err)?;
                true
            }
            StoreLayout::Empty => return Err(not_here(&client, &schema, location).await),
            other => return Err(super::error::not_current(location, &other)),
        };
        Ok((Self::over(client, url, true), created))
    }

    /// Connects in a read-only session to a database in any layout a saver wrote, for
    /// inspection (`AnyStore`): the store and its layout.
    ///
    /// # Errors
    /// [`ErrorKind::NotAStore`](crate::ErrorKind::NotAStore), or the server's error.
    pub(crate) async fn open_any(url: &str, location: &str) -> Result<(Self, StoreLayout)> {
        let (client, schema, layout) = connect_and_detect(url, false).await?;
        let layout = layout.map_err(super::error::saver_err(location))?;
        if layout == StoreLayout::Empty {
            return Err(not_here(&client, &schema, location).await);
        }
        super::error::refuse_unsaved(location, &layout)?;
        let store = PgStore {
            js: matches!(layout, StoreLayout::PostgresJs { .. }),
            shallow: matches!(layout, StoreLayout::PostgresShallow { .. }),
            ..Self::over(client, url, false)
        };
        Ok((store, layout))
    }

    /// The store's connection, shared with the reader of its rows in any layout.
    pub(crate) fn shared_client(&self) -> Arc<Client> {
        self.client()
    }

    /// For a dry run of a copy or an import into the database at `url` that holds
    /// none of the saver's tables: why the run could not make them (the role's
    /// privileges), or `None`.
    pub(crate) async fn create_refused(url: &str) -> Result<Option<String>> {
        match connect_and_detect(url, false).await? {
            (client, _, Ok(StoreLayout::Empty)) => missing::may_not_create(&client).await,
            _ => Ok(None),
        }
    }

    /// A dry run's view of the database at `url`: a read-only session, nothing
    /// created; `None` when it holds none of the saver's tables.
    ///
    /// # Errors
    /// [`ErrorKind::NotAStore`](crate::ErrorKind::NotAStore) for another layout than
    /// today's, or the server's error.
    pub(crate) async fn view(url: &str, location: &str) -> Result<Option<Self>> {
        let (client, _, layout) = connect_and_detect(url, false).await?;
        match layout.map_err(super::error::saver_err(location))? {
            StoreLayout::Empty => Ok(None),
            ref l if l.is_current() => Ok(Some(Self::over(client, url, false))),
            other => Err(super::error::not_current(location, &other)),
        }
    }
}

#[async_trait::async_trait]
impl Values for PgStore {
    fn name(&self) -> &'static str {
        "postgres"
    }

    fn tables(&self) -> &'static [Table] {
        if self.shallow {
            &SHALLOW_TABLES
        } else {
            &TABLES
        }
    }

    async fn refuses(&self, writes: Writes) -> Result<Option<String>> {
        const SAVER_TABLES: &[&str] = &["checkpoints", "checkpoint_blobs", "checkpoint_writes"];
        let values: Vec<&str> = self.tables().iter().map(|t| t.name).collect();
        let needs: &[(&str, &[&str])] = match writes {
            Writes::Rewrite => &[("UPDATE", &values)],
            // The retention deletes (saver/postgres/retention.rs) also clear the parent
            // of a kept checkpoint whose parent goes.
            Writes::Delete => &[("DELETE", SAVER_TABLES), ("UPDATE", &["checkpoints"])],
            Writes::Insert => &[("INSERT", SAVER_TABLES)],
        };
        missing::lacking(&self.client(), needs).await
    }

    fn rewrite_refused(&self) -> Option<&'static str> {
        self.js.then_some(
            "a LangGraphJS Postgres store: its readers cannot open encrypted rows, so it \
             is not rewritten; audit it, or copy it into a Python store (lgcodec store copy OLD NEW)",
        )
    }

    fn never_encrypted(&self) -> Vec<String> {
        vec![
            "checkpoints.metadata (JSONB)".to_owned(),
            "checkpoints.checkpoint (JSONB: ids, timestamps, channel versions, versions_seen; its inline channel values are counted under `inline`)".to_owned(),
            "key columns: thread_id, checkpoint_ns, checkpoint_id, parent_checkpoint_id, channel, version, task_id, task_path, idx".to_owned(),
        ]
    }

    fn left_behind(&self) -> &'static str {
        "the old versions of the rewritten rows stay in the table files until \
         VACUUM FULL (run again with --vacuum), and in WAL segments, on replicas \
         and in backups"
    }

    fn holds_inline_values(&self) -> bool {
        true
    }

    /// A lost connection replaced by a new one, opened as this one was (read-only or
    /// not); a sweep lock held on the old one went with it (`relock`).
    async fn recover(&self, retry: &mut Retry, e: Error) -> Result<()> {
        retry.lost(e).await?;
        if let Some(new) = retry.reopened(connect(&self.url, self.writable).await)? {
            *self.client.lock().unwrap_or_else(|e| e.into_inner()) = Arc::new(new);
        }
        Ok(())
    }

    async fn count(&self, t: &'static Table) -> Result<u64> {
        let row = self
            .client()
            .query_one(&format!("SELECT count(*) FROM {}", t.name), &[])
            .await
            .map_err(pg("count"))?;
        let n: i64 = row.try_get(0).map_err(pg("count"))?;
        Ok(u64::try_from(n).unwrap_or(0))
    }

    async fn free_space(&self) -> Result<crate::store::FreeSpace> {
        let row = self
            .client()
            .query_one(
                "SELECT coalesce(sum(n_dead_tup), 0)::int8 FROM pg_stat_user_tables \
                 WHERE schemaname = current_schema() AND relname IN ('checkpoint_blobs', 'checkpoint_writes')",
                &[],
            )
            .await
            .map_err(pg("read"))?;
        let dead: i64 = row.try_get(0).map_err(pg("read"))?;
        Ok(crate::store::FreeSpace {
            dead_rows: Some(u64::try_from(dead).unwrap_or(0)),
            note: "dead row versions still hold their old bytes until VACUUM; after a plain \
                   VACUUM (or autovacuum) they are no longer counted, yet their bytes stay in the \
                   table files until VACUUM FULL rewrites the table (`store encrypt|rekey \
                   --vacuum`), and in WAL segments, on replicas and in backups, which no query \
                   shows."
                .to_owned(),
            ..crate::store::FreeSpace::default()
        })
    }

    /// Asks the server to publish this session's table statistics (its dead row
    /// versions) at once rather than within the next ten seconds, so an audit right
    /// after a sweep sees them. Postgres 15 and later; older servers publish within
    /// about half a second, and the call's error is ignored.
    async fn flush_stats(&self) {
        let _ = self
            .client()
            .batch_execute("SELECT pg_stat_force_next_flush()")
            .await;
    }

    /// `VACUUM (FULL)` of the tables sweeps rewrite (every live row copied into new
    /// files, the old files removed; an `ACCESS EXCLUSIVE` lock while each runs, so
    /// writers wait), then a plain `VACUUM`, which refreshes the dead-row statistics
    /// that `VACUUM FULL` leaves as they were. A table the role may not vacuum (it is
    /// not the owner, the database's owner or a superuser) the server skips with a
    /// warning and no error: a rewrite always gives the table a new file
    /// (`pg_relation_filenode`), so one whose file is the same was skipped, and is
    /// said so, with who may run it.
    async fn vacuum(&self) -> Result<(bool, Option<String>)> {
        let filenode = |table: &'static str| async move {
            let row = self
                .client()
                .query_one(
                    "SELECT pg_relation_filenode($1::text::regclass)::int8",
                    &[&table],
                )
                .await
                .map_err(pg("vacuum"))?;
            row.try_get::<_, Option<i64>>(0).map_err(pg("vacuum"))
        };
        let mut skipped = Vec::new();
        for t in TABLES.iter() {
            let before = filenode(t.name).await?;
            self.client()
                .batch_execute(&format!("VACUUM (FULL) {}", t.name))
                .await
                .map_err(pg("vacuum"))?;
            if filenode(t.name).await? == before {
                skipped.push(t.name);
                continue;
            }
            self.client()
                .batch_execute(&format!("VACUUM {}", t.name))
                .await
                .map_err(pg("vacuum"))?;
        }
        if !skipped.is_empty() {
            let role: String = self
                .client()
                .query_one("SELECT current_user::text", &[])
                .await
                .and_then(|r| r.try_get(0))
                .map_err(pg("vacuum"))?;
            let list = skipped.join(", ");
            return Ok((
                false,
                Some(format!(
                    "the server skipped VACUUM (FULL) of {list}: role {role:?} may not vacuum \
                     them (only the table's owner, the database's owner or a superuser may; \
                     PostgreSQL 17 also lets a role granted MAINTAIN on it): their old row \
                     versions stay in the table files until the owner runs VACUUM (FULL) \
                     {list}; WAL segments, replicas and backups keep them too"
                )),
            ));
        }
        Ok((
            true,
            Some(
                "the old row versions are gone from the table files; WAL segments, replicas \
                 and backups keep them until they are recycled, rebuilt or expire"
                    .to_owned(),
            ),
        ))
    }

    async fn count_checkpoints(&self) -> Result<u64> {
        let row = self
            .client()
            .query_one("SELECT count(*) FROM checkpoints", &[])
            .await
            .map_err(pg("count"))?;
        let n: i64 = row.try_get(0).map_err(pg("count"))?;
        Ok(u64::try_from(n).unwrap_or(0))
    }

    async fn page(
        &self,
        t: &'static Table,
        after: Option<Vec<KeyPart>>,
        limit: usize,
        max_bytes: usize,
    ) -> Result<Vec<Row>> {
        let sql = page_sql_capped(t, after.is_some(), |i| format!("${i}"));
        let mut params = after.as_deref().map(key_params).unwrap_or_default();
        params.push(Box::new(i64::try_from(limit).unwrap_or(i64::MAX)));
        params.push(Box::new(i64::try_from(max_bytes).unwrap_or(i64::MAX)));
        let refs: Vec<&(dyn ToSql + Sync)> =
            params.iter().map(|p| &**p as &(dyn ToSql + Sync)).collect();
        let rows = self.client().query(&sql, &refs).await.map_err(pg("read"))?;
        // Each server row is dropped once copied out: the page is held once.
        rows.into_iter()
            .map(|r| read_row(t, &r).map_err(pg("read")))
            .collect()
    }

    async fn reread(&self, t: &'static Table, key: Vec<KeyPart>) -> Result<Option<Row>> {
        let sql = row_sql(t, |i| format!("${i}"));
        let params = key_params(&key);
        let refs: Vec<&(dyn ToSql + Sync)> =
            params.iter().map(|p| &**p as &(dyn ToSql + Sync)).collect();
        let rows = self.client().query(&sql, &refs).await.map_err(pg("read"))?;
        rows.first()
            .map(|r| read_row(t, r).map_err(pg("read")))
            .transpose()
    }

    /// Applies `updates` in one statement (so one transaction): an `UPDATE … FROM
    /// unnest(…)` matching each row by key, old type and old bytes; the keys it rewrote
    /// come back.
    async fn apply(&self, t: &'static Table, updates: Arc<Vec<Update>>) -> Result<Vec<bool>> {
        let mut columns: Vec<Box<dyn ToSql + Sync + Send>> = Vec::new();
        let mut decl = Vec::new();
        for (i, k) in t.key.iter().enumerate() {
            if Table::is_int(k) {
                let v: Vec<i32> = updates
                    .iter()
                    .map(|u| match u.key.get(i) {
                        Some(KeyPart::Int(n)) => i32::try_from(*n).unwrap_or(i32::MAX),
                        _ => 0,
                    })
                    .collect();
                columns.push(Box::new(v));
                decl.push(format!("${}::int4[]", i + 1));
            } else {
                let v: Vec<String> = updates
                    .iter()
                    .map(|u| u.key.get(i).map(KeyPart::text).unwrap_or_default())
                    .collect();
                columns.push(Box::new(v));
                decl.push(format!("${}::text[]", i + 1));
            }
        }
        let n = t.key.len();
        // The values are borrowed, not copied: the bind message is their only copy.
        let old_tags: Vec<&str> = updates.iter().map(|u| u.old_tag.as_str()).collect();
        let old_data: Vec<&[u8]> = updates.iter().map(|u| u.old_data.as_slice()).collect();
        let new_tags: Vec<&str> = updates.iter().map(|u| u.new_tag.as_str()).collect();
        let new_data: Vec<&[u8]> = updates.iter().map(|u| u.new_data.as_slice()).collect();
        decl.push(format!("${}::text[]", n + 1));
        decl.push(format!("${}::bytea[]", n + 2));
        decl.push(format!("${}::text[]", n + 3));
        decl.push(format!("${}::bytea[]", n + 4));
        let names: Vec<String> = t.key.iter().map(|k| format!("k_{k}")).collect();
        let cond: Vec<String> = t.key.iter().map(|k| format!("t.{k} = u.k_{k}")).collect();
        let sql = format!(
            "UPDATE {table} AS t SET {ty} = u.new_type, {val} = u.new_value \
             FROM unnest({decl}) AS u({names}, old_type, old_value, new_type, new_value) \
             WHERE {cond} AND t.{ty} = u.old_type AND t.{val} = u.old_value \
             RETURNING {ret}",
            table = t.name,
            ty = t.type_col,
            val = t.value_col,
            decl = decl.join(", "),
            names = names.join(", "),
            cond = cond.join(" AND "),
            ret = t
                .key
                .iter()
                .map(|k| format!("t.{k}"))
                .collect::<Vec<_>>()
                .join(", "),
        );
        let mut refs: Vec<&(dyn ToSql + Sync)> = columns
            .iter()
            .map(|p| &**p as &(dyn ToSql + Sync))
            .collect();
        refs.extend([
            &old_tags as &(dyn ToSql + Sync),
            &old_data,
            &new_tags,
            &new_data,
        ]);
        let rows = self
            .client()
            .query(&sql, &refs)
            .await
            .map_err(pg("write"))?;
        let mut written = std::collections::HashSet::with_capacity(rows.len());
        for r in &rows {
            let mut key = Vec::with_capacity(n);
            for (i, column) in t.key.iter().enumerate() {
                key.push(if Table::is_int(column) {
                    KeyPart::Int(i64::from(r.try_get::<_, i32>(i).map_err(pg("write"))?))
                } else {
                    KeyPart::Text(r.try_get(i).map_err(pg("write"))?)
                });
            }
            written.insert(key.iter().map(KeyPart::text).collect::<Vec<_>>());
        }
        Ok(updates
            .iter()
            .map(|u| written.contains(&u.key.iter().map(KeyPart::text).collect::<Vec<_>>()))
            .collect())
    }

    /// A page of checkpoint rows' inline values, after `after` by primary key.
    async fn inline_page(
        &self,
        after: Option<[String; 3]>,
        limit: usize,
    ) -> Result<Vec<InlineRow>> {
        // One page of checkpoint rows (by primary key), each joined with its inline
        // values and, per value, the blob of the same channel version if there is one.
        // The blob is looked up by key in a LATERAL subquery: as a plain join, the
        // planner (which guesses 100 values per `jsonb_each`) hashed the whole blob
        // table for every page, 1.1 s a page at 1,000,000 checkpoints against 25 ms
        // (EXPLAIN ANALYZE, PG 15), so an audit took time in the square of the store.
        // The shallow saver keeps one checkpoint per thread and namespace (its id in the
        // JSONB) and one blob per channel, without versions.
        let (id, blob_version) = if self.shallow {
            ("checkpoint ->> 'id' AS checkpoint_id", "")
        } else {
            (
                "checkpoint_id",
                "AND b.version = c.checkpoint -> 'channel_versions' ->> v.key",
            )
        };
        let order = if self.shallow {
            "thread_id, checkpoint_ns"
        } else {
            "thread_id, checkpoint_ns, checkpoint_id"
        };
        let page = |cond: &str, limit: &str| {
            format!(
                "SELECT c.thread_id, c.checkpoint_ns, c.checkpoint_id, \
                 count(v.key) FILTER (WHERE jsonb_typeof(v.value) <> 'null' AND b.channel IS NULL)::int8, \
                 coalesce(sum(length(v.value::text)) FILTER (WHERE jsonb_typeof(v.value) <> 'null' AND b.channel IS NULL), 0)::int8, \
                 count(v.key) FILTER (WHERE jsonb_typeof(v.value) = 'null' AND b.channel IS NULL)::int8, \
                 count(b.channel)::int8 \
                 FROM (SELECT thread_id, checkpoint_ns, {id}, checkpoint FROM checkpoints {cond} \
                       ORDER BY {order} LIMIT {limit}) c \
                 LEFT JOIN LATERAL jsonb_each(CASE WHEN jsonb_typeof(c.checkpoint -> 'channel_values') = 'object' \
                      THEN c.checkpoint -> 'channel_values' ELSE '{{}}'::jsonb END) v ON true \
                 LEFT JOIN LATERAL (SELECT b.channel FROM checkpoint_blobs b \
                      WHERE b.thread_id = c.thread_id AND b.checkpoint_ns = c.checkpoint_ns \
                      AND b.channel = v.key {blob_version} \
                      AND b.type <> 'empty' LIMIT 1) b ON true \
                 GROUP BY 1, 2, 3 ORDER BY 1, 2, 3"
            )
        };
        let limit = i64::try_from(limit).unwrap_or(i64::MAX);
        let client = self.client();
        let rows = match &after {
            Some([a, b, _]) if self.shallow => {
                client
                    .query(
                        &page("WHERE (thread_id, checkpoint_ns) > ($1, $2)", "$3"),
                        &[a, b, &limit],
                    )
                    .await
            }
            Some([a, b, c]) => {
                client
                    .query(
                        &page(
                            "WHERE (thread_id, checkpoint_ns, checkpoint_id) > ($1, $2, $3)",
                            "$4",
                        ),
                        &[a, b, c, &limit],
                    )
                    .await
            }
            None => client.query(&page("", "$1"), &[&limit]).await,
        }
        .map_err(pg("read"))?;
        let get = |r: &tokio_postgres::Row, i: usize| -> Result<u64> {
            let n: i64 = r.try_get(i).map_err(pg("read"))?;
            Ok(u64::try_from(n).unwrap_or(0))
        };
        rows.iter()
            .map(|r| {
                Ok(InlineRow {
                    key: [
                        r.try_get(0).map_err(pg("read"))?,
                        r.try_get(1).map_err(pg("read"))?,
                        r.try_get(2).map_err(pg("read"))?,
                    ],
                    values: get(r, 3)?,
                    bytes: get(r, 4)?,
                    nulls: get(r, 5)?,
                    markers: get(r, 6)?,
                })
            })
            .collect()
    }
}
