//! Opening the writable target of `import`, `copy`, `prune` and `retain`: a SQLite file
//! or a Postgres database in today's Python layout (an empty one gets Python's tables
//! when the operation may create them), as the backend both implement ([`Backend`]),
//! and the new file a failed operation removes.

use std::sync::Arc;

use super::backend::Backend;
use super::error::StoreFault;
use super::postgres::PgStore;
use super::raw::{pg, pg_connect, pg_refuse_read_only, sq, sqlite_refuse_read_only, Raw, Result};
use super::sqlite::SqliteStore;
use super::Location;
use crate::saver::layout::StoreLayout;
use crate::saver::postgres::PostgresSaver;
use crate::saver::sqlite::SqliteSaver;

/// A writable target of either backend in the current layout.
pub(crate) type Target = Box<dyn Backend>;

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
        Raw::Sqlite { conn, path, .. } => Box::new(SqliteStore::over(
            conn.into_inner()
                .unwrap_or_else(std::sync::PoisonError::into_inner),
            path,
            &shown,
        )),
        Raw::Postgres { client, url, .. } => {
            // The store's own read-only session, unless something still shares it.
            let client = match Arc::try_unwrap(client) {
                Ok(client) => client,
                Err(_) => pg_connect(&url, true).await?,
            };
            Box::new(PgStore::over(client, url, false))
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
            Ok((
                Box::new(SqliteStore::over(conn, path, &shown)),
                created,
                shown,
            ))
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
            Ok((Box::new(PgStore::over(client, url, true)), created, shown))
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
