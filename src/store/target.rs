//! The writable target of `import`, `copy`, `prune` and `retain`: a SQLite file or a
//! Postgres database in today's Python layout (an empty one gets Python's tables when
//! the operation may create them), and the new file a failed operation removes.

use std::collections::{BTreeMap, HashSet};
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::Duration;

use super::backup::{Cell, Col, Spec};
use super::error::StoreFault;
use super::plan::Cp;
use super::raw::{
    pg, pg_connect, pg_refuse_read_only, ph, sq, sqlite_refuse_read_only, Raw, Result,
};
use super::report::VacuumReport;
use super::retry::Retry;
use super::Location;
use crate::error::Error;
use crate::saver::layout::StoreLayout;
use crate::saver::postgres::PostgresSaver;
use crate::saver::retention::{Removal, Removed};
use crate::saver::sqlite::{SqliteSaver, StoredRow, StoredWrite};
use crate::serializer::Serializer;

mod postgres;
mod postgres_rows;
mod sqlite;

pub(crate) use postgres::PgTarget;
pub(crate) use sqlite::SqliteTarget;

/// A writable target of either backend in the current layout.
pub(crate) type Target = Box<dyn TargetBackend>;

/// One row of a page of threads: a thread, its checkpoint count, its bytewise oldest
/// and newest ids, and how many of its ids are not lowercase and of a uuid6's shape.
pub(crate) type Counted = (String, i64, String, String, i64);

/// A store opened for writing, as `prune` and `retain` reach it (one connection,
/// owned: its transactions need it whole): threads paged by id, their checkpoints
/// loaded for the planner, a page's removal deleted in one transaction by the savers'
/// own retention code, the sweep lock, compaction, and a lost connection re-opened.
/// The SQLite and the Postgres target implement it; the page engine (`pages.rs`) and
/// the operations are written once over it.
#[async_trait::async_trait]
pub(crate) trait TargetBackend: Send {
    /// Whether two pages are worked at once on two connections (a server's work, not
    /// the client's, is what a prune waits for; SQLite has one writer).
    fn pages_in_parallel(&self) -> bool;

    /// After a statement on this connection failed with `e`: a lost connection (within
    /// `retry`'s limit) is waited on and re-opened as it was opened, for the caller to
    /// redo its unit; any other error is returned. A file has no connection to lose:
    /// its errors are returned as they are.
    async fn recover(&mut self, retry: &mut Retry, e: Error) -> Result<()>;

    /// How many threads the store holds (the progress bar's length).
    async fn thread_count(&mut self) -> Result<u64>;

    /// Up to `limit` threads after `after` (`""`: from the first), by id, with their
    /// counts ([`Counted`]; [`odd_ids`] counts the ids not of a uuid6's shape).
    async fn counted_threads(&mut self, after: &str, limit: i64) -> Result<Vec<Counted>>;

    /// The checkpoints of `threads`, by thread, each thread's in (namespace, id) order,
    /// with what the planner needs to know of each (`interrupted` left unset).
    async fn load_threads(
        &mut self,
        serde: &Arc<dyn Serializer>,
        threads: &[String],
    ) -> Result<BTreeMap<String, Vec<Cp>>>;

    /// The (thread, namespace, id) of the checkpoints of `threads` that hold a
    /// `__interrupt__` pending write (what LangGraph saves when a run stops at
    /// `interrupt()`).
    async fn interrupted(
        &mut self,
        threads: &[String],
    ) -> Result<HashSet<(String, String, String)>>;

    /// Removes (or counts, in a dry run) `removal` in one transaction.
    async fn remove(&mut self, removal: &Removal, dry_run: bool) -> Result<Removed>;

    /// The next threads after `after` (`""`: from the first; up to 1,000), each with
    /// its oldest and newest checkpoint id: what the time rules of a whole thread read.
    async fn expiry_page(&mut self, after: &str) -> Result<Vec<(String, String, String)>>;

    /// Takes the store's sweep lock; `false` when another sweeper holds it.
    async fn try_lock(&mut self) -> Result<bool>;

    /// Takes the sweep lock again on a connection re-opened after a loss (a session
    /// lock goes with its connection); `false` when another sweeper took it meanwhile.
    async fn relock(&mut self) -> Result<bool> {
        Ok(true)
    }

    /// Lets the sweep lock go.
    async fn unlock(&mut self) -> Result<()>;

    /// After a prune: the file rewritten without its free pages (a full `VACUUM`,
    /// every writer waits for it); `false` where there is none to do (Postgres, whose
    /// autovacuum reclaims dead rows).
    async fn compact(&mut self) -> Result<bool> {
        Ok(false)
    }

    /// After a retention sweep: free pages given back in short steps (a pause between
    /// them, stopped by `stop`); `None` where there is none to do.
    async fn compact_in_steps(
        &mut self,
        _pause: Option<Duration>,
        _stop: Option<&AtomicBool>,
    ) -> Result<Option<VacuumReport>> {
        Ok(None)
    }

    /// Inserts `rows` of `spec`'s table in one transaction, each only where its key is
    /// free (insert-if-absent); per row: inserted (true) or already there (false).
    /// `copy_first`: into Postgres the batch is first sent whole with `COPY`, and goes
    /// in window by window only when a key is taken. The second value: whether the
    /// `COPY` took the batch.
    async fn insert_rows(
        &mut self,
        spec: &Spec,
        rows: &[Vec<Cell>],
        copy_first: bool,
    ) -> Result<(Vec<bool>, bool)>;

    /// The row of `spec`'s table at `key` (its first `spec.keys` cells), as cells.
    async fn row_at(&mut self, spec: &Spec, key: &[Cell]) -> Result<Option<Vec<Cell>>>;

    /// Which of the checkpoints at `keys` (thread, namespace, id) the target holds, by
    /// position.
    async fn holds_checkpoints(&mut self, keys: &[[&str; 3]]) -> Result<Vec<bool>>;

    /// A copy's batch: the write rows whose key is free, in one transaction, and (into
    /// SQLite, in the same transaction after them) the carried checkpoint rows whose
    /// key is free; how many write rows and how many checkpoints were inserted.
    /// `fresh`: none of the batch's checkpoints is in the target (into Postgres the
    /// writes then go with one `COPY`).
    async fn insert_writes(&mut self, batch: &[WriteSet<'_>], fresh: bool) -> Result<(u64, u64)>;

    /// Before a copy: the write-ahead log is checkpointed by the copy's read-back
    /// connection rather than on the writer's commits (SQLite).
    async fn defer_wal_checkpoints(&mut self) -> Result<()> {
        Ok(())
    }
}

/// One checkpoint of a copy's batch as [`TargetBackend::insert_writes`] takes it: its
/// key (thread, namespace, id), its pending writes, and its row when it is carried as
/// stored (into SQLite).
pub(crate) struct WriteSet<'a> {
    pub key: [&'a str; 3],
    pub writes: &'a [StoredWrite],
    pub row: Option<&'a StoredRow>,
}

/// `SELECT` of the row of `spec`'s table at a key (its first `spec.keys` columns as
/// parameters; `sqlite`: `?n` placeholders, else `$n`), JSONB columns as their text.
pub(crate) fn row_at_sql(spec: &Spec, sqlite: bool) -> String {
    let exprs: Vec<String> = spec
        .cols
        .iter()
        .map(|(_, e, k)| {
            if *k == Col::Jsonb {
                format!("{e}::text")
            } else {
                (*e).to_owned()
            }
        })
        .collect();
    let cond: Vec<String> = spec
        .cols
        .iter()
        .take(spec.keys)
        .enumerate()
        .map(|(i, (_, e, _))| format!("{e} = {}", ph(sqlite, i + 1)))
        .collect();
    format!(
        "SELECT {} FROM {} WHERE {}",
        exprs.join(", "),
        spec.table,
        cond.join(" AND ")
    )
}

/// `LIKE` pattern of a uuid6's shape (`xxxxxxxx-xxxx-6xxx-xxxx-xxxxxxxxxxxx`). A thread
/// whose ids all have it and hold no uppercase letter has its ids in time order
/// bytewise: its oldest and newest ids are its oldest and newest in time. (A regular
/// expression checking each character took 50 ms for 8,000 ids against 4 ms for this
/// pattern, PG 15 in `C.UTF-8`.)
const UUID6_SHAPE: &str = "________-____-6___-____-____________";

/// Counts a thread's ids that are not of a uuid6's shape in lowercase (`{id}`: the id
/// column as compared bytewise).
pub(crate) fn odd_ids(id: &str) -> String {
    format!("{id} NOT LIKE '{UUID6_SHAPE}' OR {id} <> lower({id})")
}

/// A dry run's view of a target: read-only, nothing created. `None` when
/// there is no store there yet (no file, or a database without the saver's tables).
///
/// # Errors
/// [`ErrorKind::NotAStore`](crate::ErrorKind::NotAStore) for a store in another layout than today's.
pub(crate) async fn open_target_read_only(given: &str) -> Result<(Option<Target>, String)> {
    let location = Location::parse(given)?;
    let shown = location.display();
    // Empty as `open_target` judges it: no file, or no saver table.
    let empty = match &location {
        Location::Sqlite(path) if !path.exists() => true,
        Location::Sqlite(path) => {
            let conn = crate::saver::layout::open_sqlite_read_only(path)?;
            crate::saver::layout::detect_sqlite(&conn).map_err(super::raw::saver_err(&shown))?
                == StoreLayout::Empty
        }
        Location::Postgres(url) => {
            let client = pg_connect(url, true).await?;
            let schema = super::raw::pg_current_schema(&client).await?;
            crate::saver::layout::detect_postgres(&client, &schema)
                .await
                .map_err(super::raw::saver_err(&shown))?
                == StoreLayout::Empty
        }
    };
    if empty {
        return Ok((None, shown));
    }
    let raw = Raw::open(given).await?;
    if !raw.layout().is_current() {
        return Err(StoreFault::NotAStore {
            location: shown.clone(),
            found: format!(
                "{}: a target must be empty or in today's Python layout",
                raw.layout()
            ),
        }
        .into());
    }
    let target: Target = match raw {
        Raw::Sqlite { conn, path, .. } => Box::new(SqliteTarget::new(
            conn.into_inner()
                .unwrap_or_else(std::sync::PoisonError::into_inner),
            path,
        )),
        Raw::Postgres { client, url, .. } => {
            // The store's own read-only session, unless something still shares it.
            let client = match Arc::try_unwrap(client) {
                Ok(client) => client,
                Err(_) => pg_connect(&url, true).await?,
            };
            Box::new(PgTarget::new(client, url, false))
        }
    };
    Ok((Some(target), shown))
}

/// A SQLite target file that did not exist when an import or copy began: if the
/// operation fails, the file it created is removed with its `-wal`, `-shm` and
/// `-journal`, so a failed operation leaves no new file behind (an existing file keeps
/// the batches committed before the failure, which a rerun finds there). A Postgres
/// target is a database that existed before: the tables created in it stay.
/// Interrupting the command (SIGINT/SIGTERM) is not a failure: the file stays, for the
/// rerun to resume.
pub(crate) struct NewTarget(Option<std::path::PathBuf>);

impl NewTarget {
    /// Notes whether `given` names a SQLite file that does not exist yet.
    pub(crate) fn note(given: &str) -> Self {
        match Location::parse(given) {
            Ok(Location::Sqlite(path)) if !path.exists() => Self(Some(path)),
            _ => Self(None),
        }
    }

    /// Removes the file this operation created when `result` is an error. Called after
    /// every connection to it was closed.
    pub(crate) fn discard_on_error<T>(self, result: &Result<T>) {
        let (Err(_), Some(path)) = (result, self.0) else {
            return;
        };
        for suffix in ["", "-wal", "-shm", "-journal"] {
            let mut name = path.clone().into_os_string();
            name.push(suffix);
            let _ = std::fs::remove_file(name);
        }
    }
}

/// Opens `given` for writing; an empty target (a missing file, a database without
/// the saver's tables) gets Python's tables from the saver's `setup()` when
/// `create_if_empty`, and is refused as not a store otherwise. Returns the connection
/// and whether tables were created.
///
/// # Errors
/// [`ErrorKind::NotAStore`](crate::ErrorKind::NotAStore) for a target in another layout than today's Python's.
pub(crate) async fn open_target(
    given: &str,
    create_if_empty: bool,
) -> Result<(Target, bool, String)> {
    let location = Location::parse(given)?;
    let shown = location.display();
    // An operation on a store that must already be one (prune) writes nothing to a
    // file or database without the saver's tables.
    let not_a_store = |layout: &StoreLayout| StoreFault::NotAStore {
        location: shown.clone(),
        found: layout.to_string(),
    };
    let not_current = |layout: &StoreLayout| {
        StoreFault::NotAStore {
        location: shown.clone(),
        found: format!(
            "{layout}: a target must be empty or in today's Python layout (copy an old store into a fresh one)"
        ),
    }
    };
    match location {
        Location::Sqlite(path) => {
            let mut created = false;
            let layout = if path.is_file() {
                let conn = rusqlite::Connection::open_with_flags(
                    &path,
                    rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY,
                )
                .map_err(sq("open"))?;
                crate::saver::layout::detect_sqlite(&conn).map_err(super::raw::saver_err(&shown))?
            } else {
                StoreLayout::Empty
            };
            match layout {
                StoreLayout::SqlitePython => {}
                StoreLayout::Empty if !create_if_empty => return Err(not_a_store(&layout).into()),
                StoreLayout::Empty => {
                    // Python's tables, as Python's setup() makes them (WAL included).
                    SqliteSaver::create(&path).map_err(super::raw::saver_err(&shown))?;
                    created = true;
                }
                other => return Err(not_current(&other).into()),
            }
            let conn = rusqlite::Connection::open_with_flags(
                &path,
                rusqlite::OpenFlags::SQLITE_OPEN_READ_WRITE,
            )
            .map_err(sq("open"))?;
            sqlite_refuse_read_only(&conn, &shown)?;
            conn.busy_timeout(std::time::Duration::from_secs(30))
                .map_err(sq("open"))?;
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
            Ok((Box::new(SqliteTarget::new(conn, path)), created, shown))
        }
        Location::Postgres(url) => {
            let client = pg_connect(&url, false).await?;
            pg_refuse_read_only(&client, &shown).await?;
            let schema = super::raw::pg_current_schema(&client).await?;
            let layout = crate::saver::layout::detect_postgres(&client, &schema)
                .await
                .map_err(super::raw::saver_err(&shown))?;
            let created = match layout {
                StoreLayout::Empty if !create_if_empty => return Err(not_a_store(&layout).into()),
                StoreLayout::Empty => {
                    let saver = PostgresSaver::builder_from_url(&url)
                        .and_then(|b| b.build())
                        .map_err(super::raw::saver_err(&shown))?;
                    // One transaction: a kill leaves no table or all of them, so a
                    // rerun finds the target empty or complete.
                    saver
                        .setup_in_one_transaction()
                        .await
                        .map_err(super::raw::saver_err(&shown))?;
                    true
                }
                ref l if l.is_current() => false,
                // Python's migrations begun and not finished (a setup() killed midway,
                // by Python or by an earlier release of this tool), no row written yet:
                // finish them as setup() does.
                ref l if create_if_empty && partly_set_up(&client, &schema, l).await? => {
                    let saver = PostgresSaver::builder_from_url(&url)
                        .and_then(|b| b.build())
                        .map_err(super::raw::saver_err(&shown))?;
                    saver.setup().await.map_err(super::raw::saver_err(&shown))?;
                    true
                }
                other => return Err(not_current(&other).into()),
            };
            Ok((Box::new(PgTarget::new(client, url, true)), created, shown))
        }
    }
}

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
