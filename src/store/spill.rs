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
    #[cfg(feature = "sqlite")]
    operation: &'static str,
    #[cfg(not(feature = "sqlite"))]
    held: Vec<(u64, String, Vec<u8>)>,
}

#[cfg(feature = "sqlite")]
impl Spill {
    /// A spill for `operation` (named in its errors).
    pub(crate) fn new(operation: &'static str) -> Result<Self> {
        let db = scratch_db(
            operation,
            "CREATE TABLE t (k INTEGER, id TEXT, payload BLOB)",
        )?;
        Ok(Spill { db, operation })
    }

    /// Adds a row. The key saturates: one past `i64::MAX` ranks with it.
    pub(crate) fn push(&mut self, key: u64, thread: &str, value: &impl Serialize) -> Result<()> {
        let key = i64::try_from(key).unwrap_or(i64::MAX);
        let payload = encoded(value)?;
        self.db
            .prepare_cached("INSERT INTO t VALUES (?1, ?2, ?3)")
            .and_then(|mut st| st.execute(rusqlite::params![key, thread, payload]))
            .map_err(scratch(self.operation))?;
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
            .map_err(scratch(self.operation))?;
        let mut rows = st.query([]).map_err(scratch(self.operation))?;
        while let Some(r) = rows.next().map_err(scratch(self.operation))? {
            let id = r
                .get_ref(0)
                .map_err(scratch(self.operation))?
                .as_str()
                .map_err(scratch(self.operation))?;
            let payload = r
                .get_ref(1)
                .map_err(scratch(self.operation))?
                .as_blob()
                .map_err(scratch(self.operation))?;
            f(id, decoded(payload)?)?;
        }
        Ok(())
    }
}

/// A scratch database's failure in `operation`: where its file goes, and what needs
/// no file.
#[cfg(feature = "sqlite")]
pub(crate) fn scratch<E: Into<rusqlite::Error>>(
    operation: &'static str,
) -> impl Fn(E) -> crate::Error {
    move |e| {
        let e: rusqlite::Error = e.into();
        let full = e.sqlite_error_code() == Some(rusqlite::ErrorCode::DiskFull);
        StoreFault::Scratch {
            operation,
            reason: e.to_string(),
            full,
        }
        .into()
    }
}

/// A private scratch database on disk (`SQLITE_TMPDIR` or `TMPDIR`, else `/var/tmp`
/// or `/tmp`; deleted when it closes), its pages cached up to 2 MiB and written out
/// past that, nothing synced, `schema` made in it and a transaction begun.
#[cfg(feature = "sqlite")]
pub(crate) fn scratch_db(operation: &'static str, schema: &str) -> Result<rusqlite::Connection> {
    // "": a private temporary database.
    let db = rusqlite::Connection::open("").map_err(scratch(operation))?;
    db.execute_batch(&format!(
        "PRAGMA cache_size = -2048; PRAGMA journal_mode = OFF; PRAGMA synchronous = OFF; \
         {schema}; BEGIN"
    ))
    .map_err(scratch(operation))?;
    Ok(db)
}

#[cfg(not(feature = "sqlite"))]
impl Spill {
    pub(crate) fn new(_operation: &'static str) -> Result<Self> {
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

/// Rows handed back in the order given, first in first out, without holding them: a
/// long namespace's blob references (`long.rs`), streamed from the server in the order
/// they are used. Each row goes into the same kind of scratch database as [`Spill`]'s
/// (in memory without the `sqlite` feature) and comes back out a page at a time.
pub(crate) struct Queue<T> {
    #[cfg(feature = "sqlite")]
    db: rusqlite::Connection,
    #[cfg(feature = "sqlite")]
    operation: &'static str,
    /// The last row read back (by rowid).
    #[cfg(feature = "sqlite")]
    read: i64,
    #[cfg(not(feature = "sqlite"))]
    held: std::collections::VecDeque<Vec<u8>>,
    /// Rows read back, not yet taken.
    ahead: std::collections::VecDeque<T>,
}

/// Rows read back from a queue's scratch database at once.
#[cfg(feature = "sqlite")]
const QUEUE_PAGE: i64 = 512;

impl<T: Serialize + DeserializeOwned> Queue<T> {
    /// A queue for `operation` (named in its errors).
    #[cfg(feature = "sqlite")]
    pub(crate) fn new(operation: &'static str) -> Result<Self> {
        let db = scratch_db(operation, "CREATE TABLE q (payload BLOB)")?;
        Ok(Queue {
            db,
            operation,
            read: 0,
            ahead: std::collections::VecDeque::new(),
        })
    }

    #[cfg(not(feature = "sqlite"))]
    pub(crate) fn new(_operation: &'static str) -> Result<Self> {
        Ok(Queue {
            held: std::collections::VecDeque::new(),
            ahead: std::collections::VecDeque::new(),
        })
    }

    /// Adds a row at the end.
    pub(crate) fn push(&mut self, value: &T) -> Result<()> {
        let payload = encoded(value)?;
        #[cfg(feature = "sqlite")]
        self.db
            .prepare_cached("INSERT INTO q VALUES (?1)")
            .and_then(|mut st| st.execute([payload]))
            .map_err(scratch(self.operation))?;
        #[cfg(not(feature = "sqlite"))]
        self.held.push_back(payload);
        Ok(())
    }

    /// The rows from the front while `pred` holds for them (the first row for which it
    /// does not stays first).
    pub(crate) fn take_while(&mut self, mut pred: impl FnMut(&T) -> bool) -> Result<Vec<T>> {
        let mut out = Vec::new();
        loop {
            if self.ahead.is_empty() && !self.refill()? {
                return Ok(out);
            }
            while let Some(row) = self.ahead.pop_front() {
                if !pred(&row) {
                    self.ahead.push_front(row);
                    return Ok(out);
                }
                out.push(row);
            }
        }
    }

    /// Reads the next page back into `ahead`; `false` when none is left.
    #[cfg(feature = "sqlite")]
    fn refill(&mut self) -> Result<bool> {
        let mut st = self
            .db
            .prepare_cached("SELECT rowid, payload FROM q WHERE rowid > ?1 ORDER BY rowid LIMIT ?2")
            .map_err(scratch(self.operation))?;
        let mut rows = st
            .query([self.read, QUEUE_PAGE])
            .map_err(scratch(self.operation))?;
        while let Some(r) = rows.next().map_err(scratch(self.operation))? {
            self.read = r.get(0).map_err(scratch(self.operation))?;
            let payload = r
                .get_ref(1)
                .map_err(scratch(self.operation))?
                .as_blob()
                .map_err(scratch(self.operation))?;
            self.ahead.push_back(decoded(payload)?);
        }
        Ok(!self.ahead.is_empty())
    }

    #[cfg(not(feature = "sqlite"))]
    fn refill(&mut self) -> Result<bool> {
        if let Some(payload) = self.held.pop_front() {
            self.ahead.push_back(decoded(&payload)?);
        }
        Ok(!self.ahead.is_empty())
    }
}

#[cfg(test)]
mod tests {
    use super::Queue;

    #[test]
    fn a_queue_hands_rows_back_in_the_order_given_across_its_pages() {
        let mut q: Queue<(u32, String)> = Queue::new("test").expect("queue");
        for i in (0..2_000u32).rev() {
            q.push(&(i, format!("row {i}"))).expect("push");
        }
        // Taken in runs that end inside and across the pages read back.
        let mut seen = Vec::new();
        for floor in [1_990, 1_400, 1_399, 700, 0] {
            let run = q.take_while(|(i, _)| *i >= floor).expect("take");
            assert!(run.iter().all(|(i, _)| *i >= floor), "{floor}");
            seen.extend(run);
        }
        let want: Vec<(u32, String)> = (0..2_000u32)
            .rev()
            .map(|i| (i, format!("row {i}")))
            .collect();
        assert_eq!(seen, want);
        assert!(q.take_while(|_| true).expect("take").is_empty());
    }
}
