//! Rows keyed by thread put in an order without holding them: `stats --sort` without
//! `--top` ([`StatsOptions::sorted`](super::StatsOptions::sorted)) and `audit
//! --per-thread` ([`AuditOptions::on_thread`](super::AuditOptions::on_thread)). Each
//! row (a sort key, a thread id, a value held as its JSON) goes into a scratch SQLite
//! database of SQLite's own (a private temporary file, deleted when it closes:
//! `SQLITE_TMPDIR` or `TMPDIR`, else `/var/tmp` or `/tmp`) and comes back out of
//! SQLite's sorter, which merges runs on disk past a few MiB. Held in a map and sorted,
//! 200,000 threads' sizes took 56 MiB and grew with every thread.
//!
//! Without the `sqlite` feature (a Postgres-only build) the rows are sorted in memory.

use serde::de::DeserializeOwned;
use serde::Serialize;

use super::error::StoreFault;

type Result<T> = std::result::Result<T, crate::Error>;

/// A value as the spill holds it.
fn encoded(value: &impl Serialize) -> Result<Vec<u8>> {
    serde_json::to_vec(value)
        .map_err(|e| StoreFault::Task(format!("a row for the scratch file: {e}")).into())
}

/// A value held, read back.
fn decoded<T: DeserializeOwned>(payload: &[u8]) -> Result<T> {
    serde_json::from_slice(payload)
        .map_err(|e| StoreFault::Task(format!("a row of the scratch file read back: {e}")).into())
}

/// The rows given so far, to be handed back larger key first, then by thread id
/// (bytewise, as Rust orders strings), then in the order given.
pub(crate) struct Spill {
    #[cfg(feature = "sqlite")]
    db: rusqlite::Connection,
    #[cfg(not(feature = "sqlite"))]
    held: Vec<(u64, String, Vec<u8>)>,
}

#[cfg(feature = "sqlite")]
impl Spill {
    pub(crate) fn new() -> Result<Self> {
        // "": a private temporary database on disk, its pages cached up to
        // `cache_size` (2 MiB here) and written out past that.
        let db = rusqlite::Connection::open("").map_err(scratch)?;
        db.execute_batch(
            "PRAGMA cache_size = -2048; PRAGMA journal_mode = OFF; PRAGMA synchronous = OFF; \
             CREATE TABLE t (k INTEGER, id TEXT, payload BLOB); BEGIN",
        )
        .map_err(scratch)?;
        Ok(Spill { db })
    }

    /// Adds a row. The key saturates: one past `i64::MAX` ranks with it.
    pub(crate) fn push(&mut self, key: u64, thread: &str, value: &impl Serialize) -> Result<()> {
        let key = i64::try_from(key).unwrap_or(i64::MAX);
        let payload = encoded(value)?;
        self.db
            .prepare_cached("INSERT INTO t VALUES (?1, ?2, ?3)")
            .and_then(|mut st| st.execute(rusqlite::params![key, thread, payload]))
            .map_err(scratch)?;
        Ok(())
    }

    /// Each row to `f`, in the spill's order; the first error `f` returns ends it.
    pub(crate) fn each<T: DeserializeOwned>(
        self,
        mut f: impl FnMut(&str, T) -> Result<()>,
    ) -> Result<()> {
        let mut st = self
            .db
            .prepare("SELECT id, payload FROM t ORDER BY k DESC, id, rowid")
            .map_err(scratch)?;
        let mut rows = st.query([]).map_err(scratch)?;
        while let Some(r) = rows.next().map_err(scratch)? {
            let id = r.get_ref(0).map_err(scratch)?.as_str().map_err(scratch)?;
            let payload = r.get_ref(1).map_err(scratch)?.as_blob().map_err(scratch)?;
            f(id, decoded(payload)?)?;
        }
        Ok(())
    }
}

/// A scratch database's failure: where its file goes, and what needs no file.
#[cfg(feature = "sqlite")]
fn scratch(e: impl Into<rusqlite::Error>) -> crate::Error {
    let e: rusqlite::Error = e.into();
    let full = e.sqlite_error_code() == Some(rusqlite::ErrorCode::DiskFull);
    StoreFault::Scratch {
        reason: e.to_string(),
        full,
    }
    .into()
}

#[cfg(not(feature = "sqlite"))]
impl Spill {
    pub(crate) fn new() -> Result<Self> {
        Ok(Spill { held: Vec::new() })
    }

    pub(crate) fn push(&mut self, key: u64, thread: &str, value: &impl Serialize) -> Result<()> {
        self.held.push((key, thread.to_owned(), encoded(value)?));
        Ok(())
    }

    pub(crate) fn each<T: DeserializeOwned>(
        mut self,
        mut f: impl FnMut(&str, T) -> Result<()>,
    ) -> Result<()> {
        // Stable: rows of one key and id stay in the order given.
        self.held
            .sort_by(|a, b| b.0.cmp(&a.0).then_with(|| a.1.cmp(&b.1)));
        for (_, id, payload) in &self.held {
            f(id, decoded(payload)?)?;
        }
        Ok(())
    }
}
