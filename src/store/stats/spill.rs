//! Every thread's sizes put in an order without holding them: [`StatsOptions::sorted`]
//! (`lgcodec store stats --sort size` without `--top`). The threads go, as they are
//! counted, into a scratch SQLite database of SQLite's own (a private temporary file,
//! deleted when it closes: `SQLITE_TMPDIR` or `TMPDIR`, else `/var/tmp` or `/tmp`), and
//! come back out of SQLite's sorter, which merges runs on disk past a few MiB. Held in
//! a map and sorted, 200,000 threads took 56 MiB and grew with every thread.
//!
//! Without the `sqlite` feature (a Postgres-only build) they are sorted in memory.
//!
//! [`StatsOptions::sorted`]: super::StatsOptions::sorted

use super::{Size, ThreadOrder, ThreadSize};
#[cfg(feature = "sqlite")]
use crate::store::error::StoreFault;
use crate::store::raw::Result;

/// A thread's sizes as seven integers, in [`ThreadSize`]'s order.
type Cells = [u64; 7];

fn cells(s: &ThreadSize) -> Cells {
    [
        s.checkpoints.rows,
        s.checkpoints.bytes,
        s.blobs.rows,
        s.blobs.bytes,
        s.writes.rows,
        s.writes.bytes,
        s.total_bytes,
    ]
}

fn size(c: Cells) -> ThreadSize {
    let [cr, cb, br, bb, wr, wb, total] = c;
    ThreadSize {
        checkpoints: Size {
            rows: cr,
            bytes: cb,
        },
        blobs: Size {
            rows: br,
            bytes: bb,
        },
        writes: Size {
            rows: wr,
            bytes: wb,
        },
        total_bytes: total,
    }
}

/// The threads given so far, to be handed back in one order.
pub(super) struct Spill {
    order: ThreadOrder,
    #[cfg(feature = "sqlite")]
    db: rusqlite::Connection,
    #[cfg(not(feature = "sqlite"))]
    held: Vec<(u64, String, Cells)>,
}

#[cfg(feature = "sqlite")]
impl Spill {
    pub(super) fn new(order: ThreadOrder) -> Result<Self> {
        // "": a private temporary database on disk, its pages cached up to
        // `cache_size` (2 MiB here) and written out past that.
        let db = rusqlite::Connection::open("").map_err(scratch)?;
        db.execute_batch(
            "PRAGMA cache_size = -2048; PRAGMA journal_mode = OFF; PRAGMA synchronous = OFF; \
             CREATE TABLE t (k INTEGER, id TEXT, c0, c1, c2, c3, c4, c5, c6); BEGIN",
        )
        .map_err(scratch)?;
        Ok(Spill { order, db })
    }

    pub(super) fn push(&mut self, thread: &str, s: &ThreadSize) -> Result<()> {
        // The key saturates (a size past i64 ranks with i64::MAX); the cells go as
        // their bits, and come back whole.
        let key = i64::try_from(self.order.key(s)).unwrap_or(i64::MAX);
        let c = cells(s).map(|v| i64::from_ne_bytes(v.to_ne_bytes()));
        self.db
            .prepare_cached("INSERT INTO t VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)")
            .and_then(|mut st| {
                st.execute(rusqlite::params![
                    key, thread, c[0], c[1], c[2], c[3], c[4], c[5], c[6]
                ])
            })
            .map_err(scratch)?;
        Ok(())
    }

    /// Each thread to `f`: larger key first, then by id (bytewise, as Rust orders
    /// strings and [`StoreStats::top_threads`](super::StoreStats::top_threads) ties).
    pub(super) fn each(self, mut f: impl FnMut(&str, &ThreadSize)) -> Result<()> {
        let mut st = self
            .db
            .prepare("SELECT id, c0, c1, c2, c3, c4, c5, c6 FROM t ORDER BY k DESC, id")
            .map_err(scratch)?;
        let mut rows = st.query([]).map_err(scratch)?;
        while let Some(r) = rows.next().map_err(scratch)? {
            let id: String = r.get(0).map_err(scratch)?;
            let mut c: Cells = [0; 7];
            for (i, slot) in c.iter_mut().enumerate() {
                let v: i64 = r.get(i + 1).map_err(scratch)?;
                *slot = u64::from_ne_bytes(v.to_ne_bytes());
            }
            f(&id, &size(c));
        }
        Ok(())
    }
}

/// A scratch database's failure: where its file goes, and what needs no file.
#[cfg(feature = "sqlite")]
fn scratch(e: rusqlite::Error) -> crate::Error {
    let full = e.sqlite_error_code() == Some(rusqlite::ErrorCode::DiskFull);
    StoreFault::Scratch {
        reason: e.to_string(),
        full,
    }
    .into()
}

#[cfg(not(feature = "sqlite"))]
impl Spill {
    pub(super) fn new(order: ThreadOrder) -> Result<Self> {
        Ok(Spill {
            order,
            held: Vec::new(),
        })
    }

    pub(super) fn push(&mut self, thread: &str, s: &ThreadSize) -> Result<()> {
        self.held
            .push((self.order.key(s), thread.to_owned(), cells(s)));
        Ok(())
    }

    pub(super) fn each(mut self, mut f: impl FnMut(&str, &ThreadSize)) -> Result<()> {
        self.held
            .sort_by(|a, b| b.0.cmp(&a.0).then_with(|| a.1.cmp(&b.1)));
        for (_, id, c) in self.held {
            f(&id, &size(c));
        }
        Ok(())
    }
}
