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
    /// it failed with none. Called after every connection to it was closed.
    pub(crate) fn settle<T>(self, operation: &str, result: Result<T>) -> Result<T> {
        let (e, path) = match (result, self.0) {
            (Err(e), Some(path)) => (e, path),
            (result, _) => return result,
        };
        if let Some(held) = held_checkpoints(&path).filter(|n| *n > 0) {
            return Err(e.with_note(format_args!(
                "{} was created by this {operation} and keeps the {held} checkpoint(s) it \
                 committed before the error: run the same command again to go on from \
                 there (what is there is skipped), or delete the file to start over",
                path.display()
            )));
        }
        for suffix in ["", "-wal", "-shm", "-journal"] {
            let mut name = path.clone().into_os_string();
            name.push(suffix);
            let _ = std::fs::remove_file(name);
        }
        Err(e)
    }
}

/// How many checkpoints the SQLite file at `path` holds; `None` when it cannot be
/// read as a store (no such table, not a database).
fn held_checkpoints(path: &std::path::Path) -> Option<u64> {
    use rusqlite::{Connection, OpenFlags};
    let conn = Connection::open_with_flags(
        path,
        OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX,
    )
    .ok()?;
    conn.query_row("SELECT count(*) FROM checkpoints", [], |r| {
        r.get::<_, i64>(0)
    })
    .ok()
    .and_then(|n| u64::try_from(n).ok())
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
