//! Whole-store operations on a checkpoint store Python LangGraph wrote (features
//! `sqlite` and/or `postgres`): [`audit`] what is encrypted under which key,
//! [`encrypt`] what is in clear, [`rekey`] what is under a previous key — while Python
//! processes keep writing. With both features, the maintenance operations too:
//! `AnyStore` (threads, histories, states, diffs and stats of any layout a saver
//! wrote), `export` and `import` (backup files), `copy` (between SQLite and Postgres),
//! `prune` and `retain` (retention) and `upgrade` (an older layout brought to today's in place).
//! The `lgcodec store` commands of the same names are thin shells over them
//! (`docs/store-encryption.md`, `docs/store-maintenance.md`).
//!
//! A Postgres URL is resolved as `psql` resolves it, as `PostgresSaver::builder_from_url`
//! does: TLS with `sslmode` and `sslrootcert`, and libpq's `PG*` variables and password
//! file for what the URL leaves out (`docs/postgres-saver.md`, "Connecting").
//!
//! [`Store::open`] takes `sqlite:PATH`, a bare file path, or a `postgres://` /
//! `postgresql://` URL, and opens it read-only: SQLite with `SQLITE_OPEN_READ_ONLY` (a
//! read-only file works; nothing is created, the journal mode is left alone), Postgres
//! in a read-only session. [`Store::open_for_writing`] opens it for the sweeps (still
//! creating nothing). Both check Python's layout first and refuse anything else with
//! [`ErrorKind::NotAStore`](crate::ErrorKind::NotAStore) saying what they found. Every
//! operation opens its store through this one handle, for what it does: the audit
//! and the sweeps as above, prune and retain in today's layout, import and copy a
//! target they may give Python's tables, and inspect, stats, export and copy's source
//! read-only in any layout a saver wrote (`AnyStore`: the handle, and the reader of its
//! rows in that layout on the handle's own connection).
//!
//! **What is stored encrypted** (with Python's `EncryptedSerializer`):
//!
//! | backend | values that go through the serializer | never encrypted by Python |
//! |---|---|---|
//! | SQLite | `checkpoints.checkpoint` (the whole checkpoint, every channel value), `writes.value` | `checkpoints.metadata`, key columns, `writes.channel` / `task_path` |
//! | Postgres | `checkpoint_blobs.blob`, `checkpoint_writes.blob` | the `checkpoints.checkpoint` JSONB **including the inline `None`/`str`/`int`/`float`/`bool` channel values**, `checkpoints.metadata`, key columns |
//!
//! The audit counts Postgres's inline values in their own section
//! ([`InlineCounts`]): Python writes them inline, in clear, on every `put`, so no sweep
//! can keep them encrypted while Python writes; [`encrypt`] leaves them in place (moving
//! them into blobs would be undone by Python's next `put`). A store written by this
//! crate's `PostgresSaver` (feature `postgres`) with
//! `all_values_in_blobs` has none; [`AuditOptions::deny_inline`] makes them findings.
//!
//! **The sweeps** ([`encrypt`]: in clear → primary key; [`rekey`]: previous key →
//! primary key) page through each table by primary key (memory does not grow with the
//! store), and write each batch in one transaction with a compare-and-swap per row: a
//! row is rewritten only if it still holds the bytes that were read, so a row a live
//! writer changed meanwhile is left to the writer and counted. A row is rewritten only
//! after it decodes and its new bytes open, under the primary key alone, to the same
//! plaintext. Tags keep their inner part (`msgpack+zlib` → `msgpack+zlib+aes`); new
//! rows are Python's format (EAX unless [`StoreKeys::with_mode`]). Killed at any point,
//! a sweep leaves every row either old or new; run again, it skips what is done (rows
//! under the primary key are recognised by reading them).
//!
//! ```no_run
//! use langgraph_codec::store::{audit, rekey, AuditOptions, Store, StoreKeys, SweepOptions};
//!
//! # async fn demo() -> Result<(), langgraph_codec::Error> {
//! // LANGGRAPH_AES_KEY=new key, LANGGRAPH_AES_KEY_PREVIOUS (or _FALLBACK_KEYS)=old key
//! let keys = StoreKeys::from_env()?;
//! let store = Store::open_for_writing("sqlite:checkpoints.db").await?;
//! let done = rekey(&store, &keys, &SweepOptions::new().batch_size(500)).await?;
//! assert!(done.complete);
//! let report = audit(&store, &keys, &AuditOptions::new()).await?;
//! println!("{}", serde_json::to_string(&report).unwrap_or_default());
//! # Ok(())
//! # }
//! ```

mod backend;
#[cfg(all(feature = "sqlite", feature = "postgres"))]
mod backup;
mod classify;
#[cfg(all(feature = "sqlite", feature = "postgres"))]
mod copy;
mod engine;
mod error;
#[cfg(all(feature = "sqlite", feature = "postgres"))]
mod export;
#[cfg(all(feature = "sqlite", feature = "postgres"))]
mod import;
#[cfg(all(feature = "sqlite", feature = "postgres"))]
mod inspect;
mod keys;
#[cfg(all(feature = "sqlite", feature = "postgres"))]
mod long;
mod ops;
mod options;
#[cfg(all(feature = "sqlite", feature = "postgres"))]
mod pages;
#[cfg(all(feature = "sqlite", feature = "postgres"))]
mod pipeline;
#[cfg(all(feature = "sqlite", feature = "postgres"))]
mod plan;
#[cfg(all(feature = "sqlite", feature = "postgres"))]
mod policy;
#[cfg(feature = "postgres")]
mod postgres;
#[cfg(all(feature = "sqlite", feature = "postgres"))]
mod prune;
#[cfg(all(feature = "sqlite", feature = "postgres"))]
mod raw;
mod report;
#[cfg(all(feature = "sqlite", feature = "postgres"))]
mod retain;
mod retry;
mod spill;
#[cfg(feature = "sqlite")]
mod sqlite;
#[cfg(all(feature = "sqlite", feature = "postgres"))]
mod stats;
mod sweep;
#[cfg(all(feature = "sqlite", feature = "postgres"))]
mod target;
#[cfg(all(feature = "sqlite", feature = "postgres"))]
mod upgrade;
#[cfg(feature = "sqlite")]
pub use backend::begins_a_backup;
#[cfg(all(feature = "sqlite", feature = "postgres"))]
pub use backup::{
    is_disk_full, verify_backup, BackupCheck, BACKUP_FORMAT, BACKUP_VERSION,
    DEFAULT_MAX_BACKUP_LINE_BYTES,
};
#[cfg(all(feature = "sqlite", feature = "postgres"))]
pub use copy::{
    copy, CopyOptions, CopyReport, PartlyCopied, DEFAULT_COPY_BATCH, DEFAULT_COPY_BATCH_BYTES,
};
#[cfg(all(feature = "sqlite", feature = "postgres"))]
pub use export::{export, ExportOptions, ExportReport};
#[cfg(all(feature = "sqlite", feature = "postgres"))]
pub use import::{import, ImportConflict, ImportOptions, ImportReport};
#[cfg(all(feature = "sqlite", feature = "postgres"))]
pub use inspect::{
    diff_checkpoints, tuple_json, AnyStore, CheckpointDiff, HistoryCounts, HistoryFormat,
    HistoryNode, ThreadHistory, ThreadSummary,
};
#[cfg(all(feature = "sqlite", feature = "postgres"))]
pub use plan::{id_time, KeptByRule, PlannedThread};
#[cfg(all(feature = "sqlite", feature = "postgres"))]
pub use policy::{parse_duration, DurationError, RetentionPolicy};
#[cfg(all(feature = "sqlite", feature = "postgres"))]
pub use prune::{parse_date, prune, PruneOptions, PruneReport};
#[cfg(all(feature = "sqlite", feature = "postgres"))]
pub use retain::{retain, RetainOptions, RetainReport};
#[cfg(all(feature = "sqlite", feature = "postgres"))]
pub use stats::{FileSizes, Size, StatsOptions, StoreStats, ThreadOrder, ThreadSize};
#[cfg(all(feature = "sqlite", feature = "postgres"))]
pub use upgrade::{
    upgrade, UpgradeOptions, UpgradeReport, UpgradeStep, SQLITE_TASK_PATH_MIGRATION,
};

pub use classify::Class;
pub(crate) use error::StoreFault;
pub use keys::{StoreKeys, ENV_FALLBACK_KEYS};
pub use ops::{audit, AuditOptions, DEFAULT_PAGE_BYTES, KEY_PROBE_VALUES};
pub use options::{Progress, ProgressFn, Stage};
#[cfg(all(feature = "sqlite", feature = "postgres"))]
pub use report::VacuumReport;
pub use report::{
    AuditReport, ClassCounts, FreeSpace, InlineCounts, SweepReport, SweepTable, TableCounts, Tally,
    UnreadableRow, Verdict,
};
pub use sweep::{encrypt, rekey, SweepOptions};

use backend::Backend;

use crate::error::Error;

/// Where a store is. Its `Debug` shows a URL without its password, as
/// [`display`](Self::display) does (a derived one showed it, and with it the `Debug` of
/// every store handle).
#[derive(Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Location {
    /// An SQLite file.
    Sqlite(std::path::PathBuf),
    /// A Postgres connection URL.
    Postgres(String),
}

impl std::fmt::Debug for Location {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Location::Sqlite(path) => f.debug_tuple("Sqlite").field(path).finish(),
            Location::Postgres(url) => f.debug_tuple("Postgres").field(&redact(url)).finish(),
        }
    }
}

impl Location {
    /// Parses `sqlite:PATH` (`sqlite://PATH` too), a bare file path, a
    /// `postgres://` / `postgresql://` URL, or libpq's `key=value` connection string
    /// (`host=db dbname=app`; a file that exists by that name stays a file).
    ///
    /// # Errors
    /// [`ErrorKind::InvalidStoreLocation`](crate::ErrorKind::InvalidStoreLocation) for an empty argument or another URL scheme.
    pub fn parse(given: &str) -> Result<Self, Error> {
        let invalid = |reason: &str| StoreFault::InvalidLocation {
            given: given.to_owned(),
            reason: reason.to_owned(),
        };
        if given.is_empty() {
            return Err(invalid("empty").into());
        }
        if given.starts_with("postgres://") || given.starts_with("postgresql://") {
            return Ok(Location::Postgres(given.to_owned()));
        }
        if let Some(rest) = given.strip_prefix("sqlite:") {
            let path = rest.strip_prefix("//").unwrap_or(rest);
            if path.is_empty() {
                return Err(invalid("sqlite: needs a path").into());
            }
            return Ok(Location::Sqlite(path.into()));
        }
        // libpq's `key=value` form, which Python's saver (psycopg) takes as well as a
        // URL. Taken for a file path, it was said missing with its password in the
        // message. A file that exists by that name stays a file (`sqlite:` forces one).
        if keyword_form(given) && !std::path::Path::new(given).exists() {
            return Ok(Location::Postgres(given.to_owned()));
        }
        // `postgres:/host/db`, `postgresql:host/db`, `PostgreSQL://…`: a URL mistyped,
        // which would otherwise be taken for a file path and reported missing.
        if let Some((scheme, rest)) = given.split_once(':') {
            let lower = scheme.to_ascii_lowercase();
            if lower == "postgres" || lower == "postgresql" {
                let trimmed = rest.trim_start_matches('/');
                let slashes = &rest[..rest.len() - trimmed.len()];
                let meant = redact(&format!("postgresql://{trimmed}"));
                return Err(StoreFault::InvalidLocation {
                    // As given, less its password.
                    given: format!(
                        "{scheme}:{slashes}{}",
                        meant.strip_prefix("postgresql://").unwrap_or(&meant)
                    ),
                    reason: format!(
                        "not a Postgres URL (they start postgresql:// or postgres://, lower case): did you mean {meant}?"
                    ),
                }
                .into());
            }
        }
        if let Some((scheme, _)) = given.split_once("://") {
            return Err(StoreFault::InvalidLocation {
                // As given, less any password (`postgresq://app:s3cret@db/app`).
                given: redact(given),
                reason: format!(
                    "unknown scheme {scheme:?}: use sqlite:PATH, a file path, or a postgres:// URL"
                ),
            }
            .into());
        }
        Ok(Location::Sqlite(given.into()))
    }

    /// For reports: the path, or the URL without its password.
    pub fn display(&self) -> String {
        match self {
            Location::Sqlite(p) => p.display().to_string(),
            Location::Postgres(url) => redact(url),
        }
    }
}

/// A Postgres URL with every password replaced by `***`: the one between `user:` and
/// `@` and the `password=` / `sslpassword=` query parameters libpq also reads (a
/// password in the query string is as secret as one in the authority).
fn redact(url: &str) -> String {
    passwords(url, Some("***"))
}

/// A Postgres URL with every password (as [`redact`] finds them) left out: `user@host`,
/// no `password=` / `sslpassword=` parameter. A command given it takes the password
/// from `PGPASSWORD` or the password file.
pub(crate) fn without_passwords(url: &str) -> String {
    passwords(url, None)
}

/// `url` with each password replaced by `mask`, or left out without one.
fn passwords(url: &str, mask: Option<&str>) -> String {
    let Some((scheme, rest)) = url.split_once("://") else {
        if keyword_form(url) {
            return keyword_passwords(url, mask);
        }
        return url.to_owned();
    };
    let (base, query) = match rest.split_once('?') {
        Some((b, q)) => (b, Some(q)),
        None => (rest, None),
    };
    // The authority ends at the first `/`; a password holding an unencoded `@` still
    // ends at the authority's last `@`.
    let (authority, path) = match base.find('/') {
        Some(i) => base.split_at(i),
        None => (base, ""),
    };
    let authority = match authority.rsplit_once('@') {
        Some((userinfo, host)) => match (userinfo.split_once(':'), mask) {
            (Some((user, _)), Some(mask)) => format!("{user}:{mask}@{host}"),
            (Some((user, _)), None) => format!("{user}@{host}"),
            (None, _) => authority.to_owned(),
        },
        None => authority.to_owned(),
    };
    let mut out = format!("{scheme}://{authority}{path}");
    if let Some(query) = query {
        let params: Vec<String> = query
            .split('&')
            .filter_map(|param| match param.split_once('=') {
                Some((k, _))
                    if k.eq_ignore_ascii_case("password")
                        || k.eq_ignore_ascii_case("sslpassword") =>
                {
                    mask.map(|mask| format!("{k}={mask}"))
                }
                _ => Some(param.to_owned()),
            })
            .collect();
        if mask.is_some() || !params.is_empty() {
            out.push('?');
            out.push_str(&params.join("&"));
        }
    }
    out
}

/// Whether `text` reads as libpq's `key=value` connection string (`host=db
/// dbname=app`): a word, then `=`.
fn keyword_form(text: &str) -> bool {
    let t = text.trim_start();
    let word = t
        .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .unwrap_or(t.len());
    word > 0 && t[word..].trim_start().starts_with('=')
}

/// A `key=value` connection string with the value of every key ending in `password`
/// (`password`, `sslpassword`) as `mask`, or left out without one; the others as given.
/// What follows a value that does not end (an unclosed quote) is not shown.
fn keyword_passwords(text: &str, mask: Option<&str>) -> String {
    let mut out: Vec<String> = Vec::new();
    let mut rest = text.trim_start();
    while !rest.is_empty() {
        let Some(eq) = rest.find('=') else {
            out.push(rest.trim_end().to_owned());
            break;
        };
        // Words before the key (a slip: `app host=db`) are shown as they are.
        let (before, key) = match rest[..eq].trim_end().rsplit_once(char::is_whitespace) {
            Some((before, key)) => (Some(before.trim()), key),
            None => (None, rest[..eq].trim_end()),
        };
        out.extend(before.map(str::to_owned));
        let after = rest[eq + 1..].trim_start();
        let Some(end) = value_end(after) else {
            out.push(format!("{key}=…"));
            break;
        };
        if key.to_ascii_lowercase().ends_with("password") {
            out.extend(mask.map(|m| format!("{key}={m}")));
        } else {
            out.push(format!("{key}={}", &after[..end]));
        }
        rest = after[end..].trim_start();
    }
    out.join(" ")
}

/// Where the value at the start of `text` ends: after its closing quote (`'…'`), else
/// at the first whitespace, `\` escaping the next character as libpq reads it; `None`
/// for a quote that does not close.
fn value_end(text: &str) -> Option<usize> {
    let quoted = text.starts_with('\'');
    let mut chars = text.char_indices().skip(usize::from(quoted));
    while let Some((i, c)) = chars.next() {
        match c {
            '\\' => {
                chars.next();
            }
            '\'' if quoted => return Some(i + 1),
            c if !quoted && c.is_whitespace() => return Some(i),
            _ => {}
        }
    }
    (!quoted).then_some(text.len())
}

/// A Python-format checkpoint store, opened read-only ([`open`](Self::open)) or for
/// writing ([`open_for_writing`](Self::open_for_writing)). Operations take it by
/// reference: [`audit`], [`encrypt`], [`rekey`].
#[derive(Debug)]
pub struct Store {
    backend: Box<dyn Backend>,
    location: Location,
    writable: bool,
    /// The open made Python's tables in an empty store ([`Access::Fill`]).
    #[cfg_attr(not(all(feature = "sqlite", feature = "postgres")), allow(dead_code))]
    created: bool,
    /// [`Access::Inspect`]: the reader of the store's rows in the layout found, on the
    /// backend's own connection, until the inspecting handle takes it
    /// ([`Store::take_reader`]).
    #[cfg(all(feature = "sqlite", feature = "postgres"))]
    reader: Option<raw::Raw>,
}

/// What an operation opens a store for: one opener ([`Store::open_as`]) for every
/// operation, each backend deciding the layout with the savers' own layout model.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Access {
    /// Read-only, in any layout a saver wrote: the audit.
    Read,
    /// Its values rewritten in place, in any layout a saver wrote: the sweeps.
    Sweep,
    /// Written, in today's Python layout; an empty store is refused: prune, retain.
    #[cfg(all(feature = "sqlite", feature = "postgres"))]
    Maintain,
    /// Written, in today's Python layout; an empty one gets Python's tables: the
    /// target of import and copy.
    #[cfg(all(feature = "sqlite", feature = "postgres"))]
    Fill,
    /// Read-only, in any layout a saver wrote, every column read in that layout: inspect,
    /// stats, export, and the source of copy.
    #[cfg(all(feature = "sqlite", feature = "postgres"))]
    Inspect,
}

impl Store {
    /// Opens a store read-only and checks Python's layout.
    ///
    /// # Errors
    /// [`ErrorKind::InvalidStoreLocation`](crate::ErrorKind::InvalidStoreLocation), [`ErrorKind::StoreNotFound`](crate::ErrorKind::StoreNotFound) (a missing file is
    /// not created), [`ErrorKind::NotAStore`](crate::ErrorKind::NotAStore) (another database: what it holds),
    /// [`ErrorKind::BackendDisabled`](crate::ErrorKind::BackendDisabled), or the database's error.
    pub async fn open(location: &str) -> Result<Self, Error> {
        Self::open_as(location, Access::Read).await
    }

    /// Opens a store for the sweeps (still creating nothing) and checks Python's layout.
    ///
    /// # Errors
    /// As [`open`](Self::open), and [`ErrorKind::ReadOnly`](crate::ErrorKind::ReadOnly) for a file or server that
    /// cannot be written.
    pub async fn open_for_writing(location: &str) -> Result<Self, Error> {
        Self::open_as(location, Access::Sweep).await
    }

    /// Opens the store at `given` for `access`.
    pub(crate) async fn open_as(given: &str, access: Access) -> Result<Self, Error> {
        let location = Location::parse(given)?;
        let shown = location.display();
        #[cfg(all(feature = "sqlite", feature = "postgres"))]
        if access == Access::Inspect {
            return Self::open_inspect(location, shown).await;
        }
        let writable = access != Access::Read;
        let (backend, created): (Box<dyn Backend>, bool) = match (&location, access) {
            #[cfg(all(feature = "sqlite", feature = "postgres"))]
            (Location::Sqlite(path), Access::Maintain | Access::Fill) => {
                let (store, made) =
                    sqlite::SqliteStore::open_current(path, access == Access::Fill, &shown)?;
                (Box::new(store), made)
            }
            #[cfg(all(feature = "sqlite", feature = "postgres"))]
            (Location::Postgres(url), Access::Maintain | Access::Fill) => {
                let (store, made) =
                    postgres::PgStore::open_current(url, access == Access::Fill, &shown).await?;
                (Box::new(store), made)
            }
            #[cfg(feature = "sqlite")]
            (Location::Sqlite(path), _) => (
                Box::new(sqlite::SqliteStore::open(path, writable, &shown)?),
                false,
            ),
            #[cfg(not(feature = "sqlite"))]
            (Location::Sqlite(_), _) => {
                return Err(StoreFault::BackendDisabled {
                    backend: "sqlite",
                    feature: "sqlite",
                }
                .into())
            }
            #[cfg(feature = "postgres")]
            (Location::Postgres(url), _) => (
                Box::new(postgres::PgStore::open(url, writable, &shown).await?),
                false,
            ),
            #[cfg(not(feature = "postgres"))]
            (Location::Postgres(_), _) => {
                return Err(StoreFault::BackendDisabled {
                    backend: "postgres",
                    feature: "postgres",
                }
                .into())
            }
        };
        let _ = &shown;
        Ok(Store {
            backend,
            location,
            writable,
            created,
            #[cfg(all(feature = "sqlite", feature = "postgres"))]
            reader: None,
        })
    }

    /// [`Access::Inspect`]: the backend opened read-only in the layout it has, and the
    /// reader of its rows in that layout on the same connection.
    #[cfg(all(feature = "sqlite", feature = "postgres"))]
    async fn open_inspect(location: Location, shown: String) -> Result<Self, Error> {
        let (backend, reader): (Box<dyn Backend>, raw::Raw) = match &location {
            Location::Sqlite(path) => {
                let (store, layout) = sqlite::SqliteStore::open_any(path, &shown)?;
                let reader = raw::Raw::Sqlite {
                    conn: store.shared_conn(),
                    layout,
                    shown,
                    path: path.clone(),
                };
                (Box::new(store), reader)
            }
            Location::Postgres(url) => {
                let (store, layout) = postgres::PgStore::open_any(url, &shown).await?;
                let reader = raw::Raw::Postgres {
                    client: store.shared_client(),
                    layout,
                    shown,
                    url: url.clone(),
                    snapshot: std::sync::Mutex::new(None),
                    statements: std::sync::Mutex::default(),
                };
                (Box::new(store), reader)
            }
        };
        Ok(Store {
            backend,
            location,
            writable: false,
            created: false,
            reader: Some(reader),
        })
    }

    /// The reader of an [`Access::Inspect`] store's rows, taken once by the handle
    /// that inspects it.
    ///
    /// # Errors
    /// [`StoreFault::Task`] when the store was opened for another access, or the
    /// reader was taken already (a caller's mistake, not the store's).
    #[cfg(all(feature = "sqlite", feature = "postgres"))]
    pub(crate) fn take_reader(&mut self) -> Result<raw::Raw, Error> {
        self.reader.take().ok_or_else(|| {
            StoreFault::Task(format!(
                "{}: no row reader (open it with Access::Inspect, once)",
                self.location.display()
            ))
            .into()
        })
    }

    /// A dry run's view of the target at `given` (of import, copy): read-only, in
    /// today's Python layout, nothing created; `None` when there is no store there yet.
    #[cfg(all(feature = "sqlite", feature = "postgres"))]
    pub(crate) async fn open_view(given: &str) -> Result<Option<Self>, Error> {
        let location = Location::parse(given)?;
        let shown = location.display();
        let backend: Box<dyn Backend> = match &location {
            Location::Sqlite(path) => match sqlite::SqliteStore::view(path, &shown)? {
                Some(store) => Box::new(store),
                None => return Ok(None),
            },
            Location::Postgres(url) => match postgres::PgStore::view(url, &shown).await? {
                Some(store) => Box::new(store),
                None => return Ok(None),
            },
        };
        Ok(Some(Store {
            backend,
            location,
            writable: false,
            created: false,
            reader: None,
        }))
    }

    /// Where the store is.
    pub fn location(&self) -> &Location {
        &self.location
    }

    /// `sqlite` or `postgres`.
    pub fn backend_name(&self) -> &'static str {
        self.backend.name()
    }

    /// Whether the store was opened for writing.
    pub fn is_writable(&self) -> bool {
        self.writable
    }

    /// The database, as the audit and the sweeps reach it.
    fn backend(&self) -> &dyn Backend {
        &*self.backend
    }
}

#[cfg(test)]
mod tests {
    use super::{redact, Location};

    /// A Postgres URL with its `//` missing is not taken for a file path: the error
    /// says which URL was meant, without the password.
    #[test]
    fn a_mistyped_postgres_url_says_what_was_meant() {
        for (given, meant) in [
            ("postgres:/localhost/app", "postgresql://localhost/app"),
            ("postgresql:db:5432/app", "postgresql://db:5432/app"),
            (
                "PostgreSQL:/app:s3cret@db/app",
                "postgresql://app:***@db/app",
            ),
            (
                "PostgreSQL://app:s3cret@db/app",
                "postgresql://app:***@db/app",
            ),
        ] {
            let err = Location::parse(given).expect_err(given);
            assert_eq!(err.kind(), crate::ErrorKind::InvalidStoreLocation, "{err}");
            let text = err.to_string();
            assert!(text.contains(&format!("did you mean {meant}?")), "{text}");
            assert!(!text.contains("s3cret"), "{text}");
        }
        // A location's `Debug` (and so a store handle's) hides it too.
        let debug = format!(
            "{:?}",
            Location::parse("postgresql://app:s3cret@db/app?password=p4ss").expect("a URL")
        );
        assert_eq!(
            debug,
            "Postgres(\"postgresql://app:***@db/app?password=***\")"
        );
        // Another scheme is refused, shown without its password.
        let err = Location::parse("postgresq://app:s3cret@db/app").expect_err("a scheme");
        let text = err.to_string();
        assert!(
            text.contains("postgresq://app:***@db/app")
                && text.contains("unknown scheme \"postgresq\"")
                && !text.contains("s3cret"),
            "{text}"
        );
        assert!(matches!(
            Location::parse("postgres.db").expect("a file"),
            Location::Sqlite(_)
        ));
    }

    /// Each password a libpq URL can carry is hidden; everything else is shown as given.
    #[test]
    fn every_password_in_a_url_is_hidden() {
        for (url, shown) in [
            (
                "postgresql://app:s3cret@db:5432/lg",
                "postgresql://app:***@db:5432/lg",
            ),
            (
                "postgresql://app@db/lg?password=s3cret&sslmode=require",
                "postgresql://app@db/lg?password=***&sslmode=require",
            ),
            (
                "postgres://db/lg?sslmode=require&PASSWORD=s3cret&sslpassword=k3y",
                "postgres://db/lg?sslmode=require&PASSWORD=***&sslpassword=***",
            ),
            // An unencoded `@` in the password: the authority ends at its last `@`.
            ("postgresql://app:p@ss@db/lg", "postgresql://app:***@db/lg"),
            // An `@` after the authority is not a password's end.
            (
                "postgresql://db/lg?options=a@b",
                "postgresql://db/lg?options=a@b",
            ),
            ("postgresql://app@db/lg", "postgresql://app@db/lg"),
        ] {
            assert_eq!(redact(url), shown, "{url}");
            assert!(!redact(url).contains("s3cret") && !redact(url).contains("k3y"));
        }
    }

    /// libpq's `key=value` form (`host=db dbname=app`) is a Postgres location, as
    /// psycopg takes it, shown with its passwords hidden however they are written; a
    /// file of that name that exists stays a file. Taken for a path, it was said
    /// missing with the password in the message.
    #[test]
    fn a_keyword_connection_string_is_postgres_and_its_passwords_are_hidden() {
        for (given, shown) in [
            (
                "host=db user=app password=s3cret dbname=lg",
                "host=db user=app password=*** dbname=lg",
            ),
            (
                "host = db  password = 's3 cret\\' x' sslpassword=k3y",
                "host=db password=*** sslpassword=***",
            ),
            (
                "dbname=lg options='-csearch_path=tenant_a' PassWord=s3cret",
                "dbname=lg options='-csearch_path=tenant_a' PassWord=***",
            ),
            // Words before a key, and a value escaped without quotes.
            (
                "host=db app password=s3\\ cret port=5",
                "host=db app password=*** port=5",
            ),
            // A quote that does not close: nothing after it is shown.
            ("host=db password='s3cret", "host=db password=…"),
            ("host=db options='a password=s3cret", "host=db options=…"),
        ] {
            let location = Location::parse(given).expect(given);
            assert!(matches!(location, Location::Postgres(_)), "{given}");
            assert_eq!(location.display(), shown, "{given}");
            assert!(!format!("{location:?}").contains("s3"), "{given}");
            assert!(!shown.contains("s3") && !shown.contains("k3y"));
        }
        assert_eq!(
            super::without_passwords("host=db password=s3cret dbname=lg"),
            "host=db dbname=lg"
        );
        let dir = tempfile::tempdir().expect("tempdir");
        let file = dir.path().join("a=b.db");
        std::fs::write(&file, b"").expect("file");
        let given = file.to_str().expect("utf-8");
        assert!(matches!(Location::parse(given), Ok(Location::Sqlite(_))));
        assert!(matches!(
            Location::parse("relative=name.db"),
            Ok(Location::Postgres(_))
        ));
    }
}
