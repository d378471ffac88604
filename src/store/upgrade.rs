//! [`upgrade`]: brings a store of an older layout to today's, in place, only when asked,
//! with the statements today's Python `setup()` runs — so that today's Python savers
//! read and write it without calling `setup()` first.
//!
//! | layout | what runs |
//! |---|---|
//! | SQLite before `writes.task_path` (`langgraph-checkpoint-sqlite` 1.0.0–3.1.1) | `ALTER TABLE writes ADD COLUMN task_path TEXT NOT NULL DEFAULT ''` (Python 3.1.2's `setup()`), in a `BEGIN IMMEDIATE` transaction that re-reads the columns first |
//! | Python's Postgres before migration 9 (1.0.0 without `checkpoint_migrations` too) | the missing entries of Python 3.2.0's `MIGRATIONS`, each recorded in `checkpoint_migrations`, under the saver's advisory lock (the version re-read under it), `CREATE INDEX CONCURRENTLY` outside a transaction |
//! | Python's Postgres of `langgraph-checkpoint-postgres` 2.0.12 (`task_path` recorded as migration 8) | today's migration 9 (`ADD COLUMN IF NOT EXISTS task_path`: nothing to add) and its record, as Python's `setup()` does |
//! | today's layouts | nothing |
//! | LangGraph 0.1's `thread_ts` SQLite, LangGraphJS's SQLite and Postgres, the shallow saver's | refused with [`ErrorKind::CannotUpgrade`](crate::ErrorKind::CannotUpgrade): copy into a fresh store instead |
//!
//! Every step is idempotent (`IF NOT EXISTS`, a column re-checked under the lock) and
//! safe against a concurrent upgrade or setup: two upgrades serialize on the lock; a
//! Python `setup()` running meanwhile (it takes no lock) may record a version first,
//! which is then not recorded twice. A dry run only reads (a read-only SQLite
//! connection, a read-only Postgres session) and lists what would run.

use std::time::Instant;

use rusqlite::{Connection, OpenFlags, TransactionBehavior};
use serde::Serialize;

use super::error::StoreFault;
use super::inspect::AnyStore;
use super::options::{run_setters, RunOptions};
use super::raw::{no_tables, not_here, pg, pg_connect, require_sqlite_file, saver_err, sq, Result};
use super::Location;
use crate::error::Error;
use crate::saver::layout::StoreLayout;
use crate::saver::layout::{
    detect_postgres, detect_sqlite, open_sqlite_read_only, CURRENT_POSTGRES_MIGRATION,
};
use crate::saver::postgres::PostgresSaver;

/// Python 3.1.2's `setup()` migration of an SQLite file from before `task_path`.
pub const SQLITE_TASK_PATH_MIGRATION: &str =
    "ALTER TABLE writes ADD COLUMN task_path TEXT NOT NULL DEFAULT ''";

/// Options of [`upgrade`].
#[derive(Clone, Debug, Default)]
pub struct UpgradeOptions {
    run: RunOptions,
}

impl UpgradeOptions {
    /// Upgrade (not a dry run).
    pub fn new() -> Self {
        Self::default()
    }
}

run_setters!(UpgradeOptions {
    /// Say what would run; write nothing.
    dry_run;
});

/// One statement of an upgrade.
#[derive(Clone, Debug, Serialize, PartialEq, Eq)]
#[non_exhaustive]
pub struct UpgradeStep {
    /// `task_path` (SQLite) or `migration N` (Postgres).
    pub name: String,
    /// The SQL.
    pub sql: String,
    /// Whether this call ran it (false in a dry run, and for a step another process —
    /// a concurrent upgrade or Python's `setup()` — applied first).
    pub ran: bool,
}

/// What [`upgrade`] did.
#[derive(Clone, Debug, Serialize, PartialEq)]
#[non_exhaustive]
pub struct UpgradeReport {
    /// `upgrade`.
    pub operation: &'static str,
    /// The store (URL without password).
    pub store: String,
    /// `sqlite` or `postgres`.
    pub backend: &'static str,
    /// The layout found.
    pub layout_before: String,
    /// The layout after (a dry run: as found).
    pub layout_after: String,
    /// A dry run (nothing written).
    pub dry_run: bool,
    /// What the layout found needs, in order.
    pub steps: Vec<UpgradeStep>,
    /// Whether the store is (or, in a dry run, would be) in today's layout.
    pub current: bool,
    /// Seconds.
    pub elapsed_s: f64,
}

fn cannot(location: &str, layout: &StoreLayout, reason: &str) -> Error {
    StoreFault::CannotUpgrade {
        location: location.to_owned(),
        layout: layout.to_string(),
        reason: reason.to_owned(),
    }
    .into()
}

/// What an upgrade of `layout` runs, or why there is none.
fn plan(
    location: &str,
    layout: &StoreLayout,
    pg_migrations: &[String],
) -> Result<Vec<UpgradeStep>> {
    let step = |name: String, sql: &str| UpgradeStep {
        name,
        sql: sql.trim().to_owned(),
        ran: false,
    };
    match layout {
        StoreLayout::SqlitePython => Ok(Vec::new()),
        StoreLayout::SqlitePythonBeforeTaskPath => Ok(vec![step(
            "task_path".to_owned(),
            SQLITE_TASK_PATH_MIGRATION,
        )]),
        StoreLayout::PostgresPython { .. } | StoreLayout::PostgresPythonTaskPathAt8 => {
            let from = match layout {
                StoreLayout::PostgresPython { migrations } => {
                    migrations.map_or(0, |v| v.saturating_add(1))
                }
                // Its 8 is today's 9's column: today's 9 adds nothing and records 9.
                _ => CURRENT_POSTGRES_MIGRATION,
            };
            if from > CURRENT_POSTGRES_MIGRATION + 1 {
                return Err(cannot(
                    location,
                    layout,
                    "a newer saver migrated it beyond what this version knows",
                ));
            }
            Ok(pg_migrations
                .iter()
                .enumerate()
                .skip(usize::try_from(from).unwrap_or(0))
                .map(|(v, sql)| step(format!("migration {v}"), sql))
                .collect())
        }
        StoreLayout::SqliteThreadTs { .. } => Err(cannot(
            location,
            layout,
            "LangGraph 0.1's rows have another shape (thread_ts keys, JSON without type columns, no namespaces), which no migration converts",
        )),
        StoreLayout::SqliteJs | StoreLayout::PostgresJs { .. } => Err(cannot(
            location,
            layout,
            "LangGraphJS's saver wrote it and keeps using it; Python's migrations would leave a store neither saver owns",
        )),
        StoreLayout::PostgresShallow { .. } => Err(cannot(
            location,
            layout,
            "the shallow saver's tables hold one checkpoint per thread, without checkpoint ids or blob versions",
        )),
        other => Err(StoreFault::NotAStore {
            location: location.to_owned(),
            found: other.to_string(),
        }.into()),
    }
}

/// Brings the store at `location` (`sqlite:PATH`, a file path, or a `postgres://` URL)
/// to today's layout in place, with the statements today's Python `setup()` runs, so
/// that today's Python savers read and write it without calling `setup()` first; with
/// [`UpgradeOptions::dry_run`], only says what would run (read-only).
///
/// - SQLite before `writes.task_path` (`langgraph-checkpoint-sqlite` 1.0.0–3.1.1):
///   [`SQLITE_TASK_PATH_MIGRATION`] (Python 3.1.2's `setup()`), in a `BEGIN IMMEDIATE`
///   transaction that re-reads the columns first.
/// - Python's Postgres before migration 9 (1.0.0 without `checkpoint_migrations`
///   too): the missing entries of Python 3.2.0's `MIGRATIONS`, each recorded, under
///   the saver's advisory lock with the version re-read under it
///   ([`PostgresSaver::setup_migrations`]).
/// - Today's layouts: nothing. LangGraph 0.1's `thread_ts` SQLite, LangGraphJS's
///   stores and the shallow saver's: refused (copy them into a fresh store).
///
/// Every step is idempotent and safe against a concurrent upgrade or Python `setup()`
/// (see `docs/store-layouts.md`).
///
/// # Errors
/// [`ErrorKind::CannotUpgrade`](crate::ErrorKind::CannotUpgrade) for a layout that cannot be upgraded in place (copy it
/// into a fresh store instead); [`ErrorKind::StoreNotFound`](crate::ErrorKind::StoreNotFound), [`ErrorKind::NotAStore`](crate::ErrorKind::NotAStore),
/// [`ErrorKind::ReadOnly`](crate::ErrorKind::ReadOnly); the database's errors.
pub async fn upgrade(location: &str, options: &UpgradeOptions) -> Result<UpgradeReport> {
    upgrade_at(Location::parse(location)?, options).await
}

async fn upgrade_at(parsed: Location, options: &UpgradeOptions) -> Result<UpgradeReport> {
    let started = Instant::now();
    let shown = parsed.display();
    let mut report = match parsed {
        Location::Sqlite(path) => {
            require_sqlite_file(&path)?;
            let before = {
                let conn = open_sqlite_read_only(&path).map_err(saver_err(&shown))?;
                detect_sqlite(&conn).map_err(saver_err(&shown))?
            };
            if before == StoreLayout::Empty {
                return Err(no_tables(&path, &shown));
            }
            let mut steps = plan(&shown, &before, &[])?;
            let mut after = before.clone();
            if !options.run.dry_run && !steps.is_empty() {
                let ran = {
                    let (path, shown) = (path.clone(), shown.clone());
                    tokio::task::spawn_blocking(move || sqlite_task_path(&path, &shown))
                        .await
                        .map_err(|e| StoreFault::Task(e.to_string()))??
                };
                for s in &mut steps {
                    s.ran = ran;
                }
                let conn = open_sqlite_read_only(&path).map_err(saver_err(&shown))?;
                after = detect_sqlite(&conn).map_err(saver_err(&shown))?;
            }
            report_of(
                &shown,
                "sqlite",
                &before,
                &after,
                steps,
                options.run.dry_run,
            )
        }
        Location::Postgres(url) => {
            let before = pg_layout(&url, &shown).await?;
            let saver = PostgresSaver::builder_from_url(&url)
                .and_then(|b| b.build())
                .map_err(|e| StoreFault::InvalidLocation {
                    given: shown.clone(),
                    reason: e.to_string(),
                })?;
            let mut steps = plan(&shown, &before, &saver.migration_statements())?;
            let mut after = before.clone();
            if !options.run.dry_run && !steps.is_empty() {
                let ran = saver
                    .setup_migrations()
                    .await
                    .map_err(|e| super::postgres::from_saver(&shown, e))?;
                for s in &mut steps {
                    s.ran = s
                        .name
                        .strip_prefix("migration ")
                        .and_then(|v| v.parse::<i32>().ok())
                        .is_some_and(|v| ran.contains(&v));
                }
                after = pg_layout(&url, &shown).await?;
            }
            report_of(
                &shown,
                "postgres",
                &before,
                &after,
                steps,
                options.run.dry_run,
            )
        }
    };
    report.elapsed_s = started.elapsed().as_secs_f64();
    Ok(report)
}

/// The layout of a Postgres store, read in one snapshot (`REPEATABLE READ`: the
/// columns and `checkpoint_migrations` agree). Python's `setup()` runs each migration
/// and then records it, in two transactions: a store caught in between (a column
/// there, its version not yet recorded) reads as an unknown layout, so that is read
/// again for up to a few seconds before it is believed.
async fn pg_layout(url: &str, shown: &str) -> Result<StoreLayout> {
    let client = pg_connect(url, true).await?;
    let mut tries = 0;
    loop {
        client
            .batch_execute("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY")
            .await
            .map_err(pg("upgrade"))?;
        let schema = super::raw::pg_current_schema(&client).await?;
        let layout = detect_postgres(&client, &schema).await;
        client
            .batch_execute("COMMIT")
            .await
            .map_err(pg("upgrade"))?;
        let layout = layout.map_err(saver_err(shown))?;
        if layout == StoreLayout::Empty {
            return Err(not_here(&client, &schema, shown).await);
        }
        tries += 1;
        if !matches!(layout, StoreLayout::Foreign { .. }) || tries >= 30 {
            return Ok(layout);
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
}

fn report_of(
    shown: &str,
    backend: &'static str,
    before: &StoreLayout,
    after: &StoreLayout,
    steps: Vec<UpgradeStep>,
    dry_run: bool,
) -> UpgradeReport {
    UpgradeReport {
        operation: "upgrade",
        store: shown.to_owned(),
        backend,
        layout_before: before.to_string(),
        layout_after: after.to_string(),
        dry_run,
        current: if dry_run { true } else { after.is_current() },
        steps,
        elapsed_s: 0.0,
    }
}

/// Adds `writes.task_path` as Python's `setup()` does, in a `BEGIN IMMEDIATE`
/// transaction that re-reads the layout first (another upgrade, or Python, may have
/// added it meanwhile). Whether this call added it.
fn sqlite_task_path(path: &std::path::Path, shown: &str) -> Result<bool> {
    // A file or directory that cannot be written is ReadOnly; anything else SQLite's.
    let refused = |e: rusqlite::Error| match e.sqlite_error_code() {
        Some(rusqlite::ErrorCode::ReadOnly | rusqlite::ErrorCode::CannotOpen) => {
            StoreFault::ReadOnly {
                location: shown.to_owned(),
                reason: e.to_string(),
            }
        }
        _ => StoreFault::Sqlite {
            operation: "upgrade",
            source: e,
        },
    };
    let mut conn = Connection::open_with_flags(
        path,
        OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_NO_MUTEX,
    )
    .map_err(refused)?;
    conn.busy_timeout(crate::saver::layout::SQLITE_BUSY_WAIT)
        .map_err(sq("upgrade"))?;
    let tx = conn
        .transaction_with_behavior(TransactionBehavior::Immediate)
        .map_err(refused)?;
    let layout = detect_sqlite(&tx).map_err(saver_err(shown))?;
    let ran = match layout {
        StoreLayout::SqlitePythonBeforeTaskPath => {
            tx.execute_batch(SQLITE_TASK_PATH_MIGRATION)
                .map_err(sq("upgrade"))?;
            true
        }
        StoreLayout::SqlitePython => false,
        other => {
            return Err(plan(shown, &other, &[]).err().unwrap_or_else(|| {
                StoreFault::NotAStore {
                    location: shown.to_owned(),
                    found: other.to_string(),
                }
                .into()
            }))
        }
    };
    tx.commit().map_err(sq("upgrade"))?;
    Ok(ran)
}

impl AnyStore {
    /// [`upgrade`] of this store (reopened for writing unless a dry run; this handle
    /// stays read-only).
    ///
    /// # Errors
    /// As [`upgrade`].
    pub async fn upgrade(&self, options: &UpgradeOptions) -> Result<UpgradeReport> {
        upgrade_at(self.raw.location(), options).await
    }
}
