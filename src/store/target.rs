//! Opening the writable target of `import`, `copy`, `prune` and `retain`: a SQLite file
//! or a Postgres database in today's Python layout (an empty one gets Python's tables
//! when the operation may create them), as the backend both implement ([`Backend`]),
//! and the new file a failed operation removes.

use super::backend::Backend;
use super::raw::Result;
use super::{Access, Location, Store};

/// A writable target of either backend in the current layout.
pub(crate) type Target = Box<dyn Backend>;

/// A dry run's view of a target: read-only, nothing created. `None` when
/// there is no store there yet (no file, or a database without the saver's tables).
///
/// # Errors
/// [`ErrorKind::NotAStore`](crate::ErrorKind::NotAStore) for a store in another layout than today's.
pub(crate) async fn open_target_read_only(given: &str) -> Result<(Option<Target>, String)> {
    let shown = Location::parse(given)?.display();
    Ok((Store::open_view(given).await?.map(|s| s.backend), shown))
}

/// For a dry run of an import or a copy into `given`, which holds no store yet: why
/// the run could not make the saver's tables there (a Postgres role without `CREATE`
/// on the schema), or `None`.
///
/// # Errors
/// The server's (a second, read-only session of the dry run).
pub(crate) async fn create_refused(given: &str) -> Result<Option<String>> {
    match Location::parse(given)? {
        Location::Postgres(url) => super::postgres::PgStore::create_refused(&url).await,
        Location::Sqlite(_) => Ok(None),
    }
}

/// Opens `given` for prune or retain: for writing, or for a dry run read-only (a file
/// this user may only read, a read-only mount, a standby), in today's Python layout
/// either way; a file or database without the saver's tables is refused, not given
/// them. Returns the store and the location as shown.
///
/// # Errors
/// As [`open_target`]'s.
pub(crate) async fn open_maintained(given: &str, dry_run: bool) -> Result<(Target, String)> {
    if dry_run {
        if let (Some(target), shown) = open_target_read_only(given).await? {
            return Ok((target, shown));
        }
    }
    // No store there: refused as for writing (a missing file, no tables).
    let (target, _, shown) = open_target(given, false).await?;
    Ok((target, shown))
}

/// A SQLite target file that did not exist when an import or copy began. If the
/// operation fails, a file that holds checkpoints by then stays, for the same command
/// run again to go on from (the error says how many it holds and that it is partial);
/// one that holds none is removed with its `-wal`, `-shm` and `-journal`, so a failure
/// before the first batch committed leaves no new file. A Postgres target is a
/// database that existed before: the tables created in it stay. Interrupting the
/// command (SIGINT/SIGTERM) is not a failure: the file stays, for the rerun to resume.
pub(crate) struct NewTarget(Option<std::path::PathBuf>);

impl NewTarget {
    /// Notes whether `given` names a SQLite file that does not exist yet.
    pub(crate) fn note(given: &str) -> Self {
        match Location::parse(given) {
            Ok(Location::Sqlite(path)) if !path.exists() => Self(Some(path)),
            _ => Self(None),
        }
    }

    /// `result`, once the file this `operation` created is settled: kept when the
    /// operation failed with checkpoints in it (the error then says so), removed when
    /// it failed with none, kept too when what it holds cannot be counted (nothing
    /// committed is deleted on a guess). Called after every connection to it was
    /// closed.
    pub(crate) fn settle<T>(self, operation: &str, result: Result<T>) -> Result<T> {
        let (e, path) = match (result, self.0) {
            (Err(e), Some(path)) => (e, path),
            (result, _) => return result,
        };
        let shown = path.display();
        let again = "run the same command again to go on from there (what is there is \
                     skipped), or delete the file to start over";
        match held_checkpoints(&path) {
            Held::Gone => Err(e),
            Held::Checkpoints(0) => {
                for suffix in ["", "-wal", "-shm", "-journal"] {
                    let mut name = path.clone().into_os_string();
                    name.push(suffix);
                    let _ = std::fs::remove_file(name);
                }
                Err(e)
            }
            Held::Checkpoints(held) => Err(e.with_note(format_args!(
                "{shown} was created by this {operation} and keeps the {held} checkpoint(s) \
                 it committed before the error: {again}"
            ))),
            Held::Unknown(why) => Err(e.with_note(format_args!(
                "{shown} was created by this {operation} and kept: what it holds could not \
                 be counted ({why}): {again}"
            ))),
        }
    }
}

/// What a new target file holds once its operation failed.
enum Held {
    /// No file (it was never made, or was removed already).
    Gone,
    /// This many checkpoints (none when it has no `checkpoints` table yet).
    Checkpoints(u64),
    /// It could not be read, for this reason.
    Unknown(String),
}

/// What the SQLite file at `path` holds.
fn held_checkpoints(path: &std::path::Path) -> Held {
    use rusqlite::{Connection, OpenFlags};
    if !path.exists() {
        return Held::Gone;
    }
    let count = || -> rusqlite::Result<i64> {
        let conn = Connection::open_with_flags(
            path,
            OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX,
        )?;
        let tables: i64 = conn.query_row(
            "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'checkpoints'",
            [],
            |r| r.get(0),
        )?;
        if tables == 0 {
            return Ok(0);
        }
        conn.query_row("SELECT count(*) FROM checkpoints", [], |r| r.get(0))
    };
    match count() {
        Ok(n) => Held::Checkpoints(u64::try_from(n).unwrap_or(0)),
        Err(e) => Held::Unknown(e.to_string()),
    }
}

/// Opens `given` for writing ([`Access::Maintain`], or [`Access::Fill`] when
/// `create_if_empty`: an empty target gets Python's tables from the saver's `setup()`).
/// Returns the connection, whether tables were created, and the location as shown.
///
/// # Errors
/// [`ErrorKind::NotAStore`](crate::ErrorKind::NotAStore) for a target in another layout than today's Python's.
pub(crate) async fn open_target(
    given: &str,
    create_if_empty: bool,
) -> Result<(Target, bool, String)> {
    let access = if create_if_empty {
        Access::Fill
    } else {
        Access::Maintain
    };
    let store = Store::open_as(given, access).await?;
    let shown = store.location.display();
    Ok((store.backend, store.created, shown))
}

#[cfg(test)]
mod tests {
    use super::NewTarget;
    use crate::{Error, ErrorKind};

    /// A failed operation's new file: removed with its side files when it holds no
    /// checkpoint (tables or not), kept and named when it holds some or cannot be
    /// read (bytes that are not a database), and nothing said of a file that is gone.
    #[test]
    fn a_new_file_is_removed_only_when_it_surely_holds_nothing() {
        let dir = tempfile::tempdir().expect("temp dir");
        let failed = || Err::<(), _>(Error::new(ErrorKind::ConnectionLost, "lost"));
        let settle = |name: &str| {
            let path = dir.path().join(name);
            let said = NewTarget(Some(path.clone()))
                .settle("copy", failed())
                .expect_err("still the error")
                .to_string();
            (path.exists(), said)
        };
        let sql = |name: &str, sql: &str| {
            let conn = rusqlite::Connection::open(dir.path().join(name)).expect("open");
            conn.execute_batch(sql).expect("sql");
        };
        let table = "CREATE TABLE checkpoints (thread_id TEXT, checkpoint_id TEXT);";
        sql("empty.db", table);
        std::fs::write(dir.path().join("empty.db-wal"), b"").expect("wal");
        sql("bare.db", "CREATE TABLE other (x);");
        sql(
            "two.db",
            &format!("{table} INSERT INTO checkpoints VALUES ('t', 'a'), ('t', 'b');"),
        );
        std::fs::write(dir.path().join("junk.db"), vec![0x5a; 4096]).expect("junk");
        for name in ["empty.db", "bare.db"] {
            assert_eq!(settle(name), (false, "lost".to_owned()), "{name}");
        }
        assert!(!dir.path().join("empty.db-wal").exists());
        let (kept, said) = settle("two.db");
        assert!(kept && said.contains("keeps the 2 checkpoint(s)"), "{said}");
        let (kept, said) = settle("junk.db");
        assert!(kept && said.contains("could not be counted"), "{said}");
        assert_eq!(settle("never.db"), (false, "lost".to_owned()));
    }
}
