//! A thread's history written as it is walked, without holding it
//! ([`AnyStore::write_history`]): what `lgcodec store inspect --thread` prints.
//!
//! [`AnyStore::history`] builds the whole tree, every node with its keys, parent and
//! children: 55 MiB for a thread of 100,000 checkpoints, growing with the thread.
//! Here each checkpoint read goes into a scratch SQLite database of SQLite's own (a
//! private temporary file deleted when it closes: `SQLITE_TMPDIR` or `TMPDIR`, else
//! `/var/tmp` or `/tmp`; its pages cached up to 2 MiB), indexed by parent, and the
//! tree is walked from there one node at a time: down to a node's first child, on
//! to its next sibling, back up to the parent when a branch ends. What this process
//! holds is a node and the scratch database's cache, whatever the thread's length.

use std::io::Write;

use serde::Serialize;

use super::{AnyStore, Result, StoreKeys};
use crate::error::Error;
use crate::kind::ErrorKind;

/// How [`AnyStore::write_history`] writes a thread's history.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum HistoryFormat {
    /// The indented tree [`ThreadHistory::tree`](super::ThreadHistory::tree) draws, one
    /// checkpoint a line.
    Tree,
    /// The JSON document a [`ThreadHistory`](super::ThreadHistory) serializes to, on one
    /// line (no newline after it).
    Json,
}

/// What [`AnyStore::write_history`] wrote.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct HistoryCounts {
    /// Checkpoints of the thread (0: the store holds no such thread, and nothing was
    /// written).
    pub checkpoints: u64,
    /// Checkpoints with more than one child.
    pub forks: u64,
    /// With keys to check with: the checkpoints that do not decode under them.
    pub unreadable: Option<u64>,
}

/// Checkpoints decoded at a time by a check: their keys, read from the scratch
/// database, held meanwhile.
const CHECK_PAGE: usize = 256;

/// Writing to the caller's output failed.
fn output(e: &std::io::Error) -> Error {
    let kind = if crate::store::backup::is_disk_full(e.kind()) {
        ErrorKind::DiskFull
    } else {
        ErrorKind::Storage
    };
    Error::new(kind, format!("inspect: cannot write the history: {e}")).with_operation("inspect")
}

impl AnyStore {
    /// `thread`'s history written to `out` as `format` says: the same text as
    /// [`history`](Self::history)'s [`ThreadHistory`](super::ThreadHistory) gives
    /// (its [`tree`](super::ThreadHistory::tree), or its JSON), without holding the
    /// tree (the module's docs say how). With `check`, each checkpoint is first decoded
    /// with those keys and those that do not decode are marked, as
    /// [`check_history`](Self::check_history) marks them. Nothing is written for a
    /// thread the store does not hold ([`HistoryCounts::checkpoints`] 0). Checkpoints
    /// and children come in the bytewise order of namespace and id; `history` keeps
    /// the order the store reads them in, which on a Postgres database of another
    /// collation than `C` may put namespaces that differ in punctuation or case the
    /// other way round (ids, lowercase hex, sort the same either way).
    ///
    /// ```no_run
    /// # async fn show(store: &langgraph_codec::store::AnyStore) -> langgraph_codec::Result<()> {
    /// use langgraph_codec::store::HistoryFormat;
    /// let mut out = std::io::BufWriter::new(std::io::stdout());
    /// let counts = store.write_history("thread-1", None, HistoryFormat::Tree, &mut out).await?;
    /// eprintln!("{} checkpoint(s), {} fork(s)", counts.checkpoints, counts.forks);
    /// # Ok(()) }
    /// ```
    ///
    /// # Errors
    /// The database's errors; [`ErrorKind::Storage`] when the scratch database or
    /// `out` cannot be written ([`ErrorKind::DiskFull`] when the disk is full).
    pub async fn write_history<W: Write + ?Sized>(
        &self,
        thread: &str,
        check: Option<&StoreKeys>,
        format: HistoryFormat,
        out: &mut W,
    ) -> Result<HistoryCounts> {
        let mut nodes = scratch::Nodes::new()?;
        self.each_node(thread, |node| nodes.push(&node)).await?;
        let (checkpoints, forks) = nodes.link()?;
        let mut counts = HistoryCounts {
            checkpoints,
            forks,
            unreadable: None,
        };
        if checkpoints == 0 {
            return Ok(counts);
        }
        if let Some(keys) = check {
            let serde = super::serializer(keys);
            let mut unreadable = 0u64;
            let mut after = None;
            loop {
                let page = nodes.keys_after(after.as_ref(), CHECK_PAGE)?;
                let keys = page.iter().map(|(ns, id)| (ns.as_str(), id.as_str()));
                let found = self.why_unreadable(&serde, thread, keys).await?;
                for (key, why) in page.iter().zip(found) {
                    if let Some(why) = why {
                        unreadable += 1;
                        nodes.mark(key, &why)?;
                    }
                }
                match page.into_iter().last() {
                    Some(last) => after = Some(last),
                    None => break,
                }
            }
            counts.unreadable = Some(unreadable);
        }
        match format {
            HistoryFormat::Tree => nodes.write_tree(out)?,
            HistoryFormat::Json => nodes.write_json(thread, out)?,
        }
        Ok(counts)
    }
}

mod scratch {
    use std::io::Write;

    use rusqlite::{params, OptionalExtension as _};

    use super::{output, Result};
    use crate::store::inspect::HistoryNode;
    use crate::store::spill::{scratch, scratch_db};

    const OP: &str = "inspect";

    /// Why a walk stopped: the scratch database, or the output.
    enum Fail {
        Db(rusqlite::Error),
        Io(std::io::Error),
    }

    impl From<rusqlite::Error> for Fail {
        fn from(e: rusqlite::Error) -> Self {
            Fail::Db(e)
        }
    }

    impl From<std::io::Error> for Fail {
        fn from(e: std::io::Error) -> Self {
            Fail::Io(e)
        }
    }

    impl From<serde_json::Error> for Fail {
        fn from(e: serde_json::Error) -> Self {
            Fail::Io(e.into())
        }
    }

    fn fail(f: Fail) -> crate::Error {
        match f {
            Fail::Db(e) => scratch(OP)(e),
            Fail::Io(e) => output(&e),
        }
    }

    /// A node as the walk reads it back.
    struct Row {
        id: String,
        parent: Option<String>,
        step: Option<i64>,
        source: Option<String>,
        why: Option<String>,
        kids: u64,
    }

    /// A [`Row`]'s columns, in the order [`row_at`] reads them.
    const ROW: &str = "id, parent, step, source, why, kids";

    // The look-ups made for each node, each a search of one index (`plans` below
    // reads their plans): without `INDEXED BY`, SQLite answered "children of X in id
    // order" by walking the primary key in id order (it avoids a sort) and testing
    // each row's parent, a scan of the namespace for every node (a thread of 100,000
    // checkpoints ran for minutes).
    const CHILD_COUNTS: &str = "CREATE INDEX c ON n (ns, parent, id); \
         UPDATE n SET kids = (SELECT count(*) FROM n AS k INDEXED BY c \
         WHERE k.ns = n.ns AND k.parent = n.id)";
    const CHILDREN: &str =
        "SELECT id FROM n INDEXED BY c WHERE ns = ?1 AND parent = ?2 ORDER BY id";
    const FIRST_CHILD: &str = "SELECT id, parent, step, source, why, kids FROM n INDEXED BY c \
         WHERE ns = ?1 AND parent = ?2 ORDER BY id LIMIT 1";
    const NEXT_SIBLING: &str = "SELECT id, parent, step, source, why, kids FROM n INDEXED BY c \
         WHERE ns = ?1 AND parent = ?2 AND id > ?3 ORDER BY id LIMIT 1";
    const BY_KEY: &str =
        "SELECT id, parent, step, source, why, kids FROM n WHERE ns = ?1 AND id = ?2";
    const FIRST_KEYS: &str = "SELECT ns, id FROM n ORDER BY ns, id LIMIT ?1";
    const KEYS_AFTER: &str =
        "SELECT ns, id FROM n WHERE (ns, id) > (?1, ?2) ORDER BY ns, id LIMIT ?3";

    /// The [`Row`] of `r`'s columns from `at` on.
    fn row_at(r: &rusqlite::Row<'_>, at: usize) -> rusqlite::Result<Row> {
        Ok(Row {
            id: r.get(at)?,
            parent: r.get(at + 1)?,
            step: r.get(at + 2)?,
            source: r.get(at + 3)?,
            why: r.get(at + 4)?,
            kids: r.get(at + 5)?,
        })
    }

    fn row(r: &rusqlite::Row<'_>) -> rusqlite::Result<Row> {
        row_at(r, 0)
    }

    /// `v` as JSON on `out`.
    fn put<W: Write + ?Sized>(out: &mut W, v: &impl serde::Serialize) -> Result<(), Fail> {
        Ok(serde_json::to_writer(&mut *out, v)?)
    }

    /// The ids `rows` hold (their first column) on `out` as JSON strings, a comma
    /// between two.
    fn ids<W: Write + ?Sized>(out: &mut W, mut rows: rusqlite::Rows<'_>) -> Result<(), Fail> {
        let mut sep: &[u8] = b"";
        while let Some(r) = rows.next()? {
            let id: String = r.get(0)?;
            out.write_all(sep)?;
            sep = b",";
            put(out, &id)?;
        }
        Ok(())
    }

    /// A thread's checkpoints in a scratch database: by (namespace, id), and by
    /// (namespace, parent, id) once [`link`](Self::link)ed, with each one's number of
    /// children.
    pub(super) struct Nodes {
        db: rusqlite::Connection,
    }

    impl Nodes {
        pub(super) fn new() -> Result<Self> {
            let db = scratch_db(
                OP,
                "CREATE TABLE n (ns TEXT NOT NULL, id TEXT NOT NULL, parent TEXT, \
                 step INTEGER, source TEXT, why TEXT, kids INTEGER NOT NULL DEFAULT 0, \
                 PRIMARY KEY (ns, id)) WITHOUT ROWID",
            )?;
            Ok(Nodes { db })
        }

        /// Adds a checkpoint (read in key order: each goes at the table's end).
        pub(super) fn push(&mut self, n: &HistoryNode) -> Result<()> {
            self.db
                .prepare_cached(
                    "INSERT INTO n (ns, id, parent, step, source) VALUES (?1, ?2, ?3, ?4, ?5)",
                )
                .and_then(|mut st| {
                    st.execute(params![
                        n.checkpoint_ns,
                        n.checkpoint_id,
                        n.parent_checkpoint_id,
                        n.step,
                        n.source
                    ])
                })
                .map_err(scratch(OP))?;
            Ok(())
        }

        /// After the last push: each node's children counted (those of its namespace
        /// naming it their parent); returns how many nodes there are, and forks.
        pub(super) fn link(&mut self) -> Result<(u64, u64)> {
            self.db.execute_batch(CHILD_COUNTS).map_err(scratch(OP))?;
            self.db
                .query_row(
                    "SELECT count(*), coalesce(sum(kids > 1), 0) FROM n",
                    [],
                    |r| Ok((r.get(0)?, r.get(1)?)),
                )
                .map_err(scratch(OP))
        }

        /// Up to `limit` keys after `after` (from the first without), in key order.
        pub(super) fn keys_after(
            &mut self,
            after: Option<&(String, String)>,
            limit: usize,
        ) -> Result<Vec<(String, String)>> {
            let limit = i64::try_from(limit).unwrap_or(i64::MAX);
            let pair = |r: &rusqlite::Row<'_>| Ok((r.get(0)?, r.get(1)?));
            let keys = match after {
                None => self.db.prepare_cached(FIRST_KEYS).and_then(|mut st| {
                    st.query_map(params![limit], pair)?
                        .collect::<rusqlite::Result<Vec<_>>>()
                }),
                Some((ns, id)) => self.db.prepare_cached(KEYS_AFTER).and_then(|mut st| {
                    st.query_map(params![ns, id, limit], pair)?
                        .collect::<rusqlite::Result<Vec<_>>>()
                }),
            }
            .map_err(scratch(OP))?;
            Ok(keys)
        }

        /// Marks `(ns, id)` as not decoding, with why.
        pub(super) fn mark(&mut self, (ns, id): &(String, String), why: &str) -> Result<()> {
            self.db
                .prepare_cached("UPDATE n SET why = ?3 WHERE ns = ?1 AND id = ?2")
                .and_then(|mut st| st.execute(params![ns, id, why]))
                .map_err(scratch(OP))?;
            Ok(())
        }

        /// The JSON document of [`ThreadHistory`](crate::store::ThreadHistory), field
        /// for field: each node as read in key order, its children from the index.
        pub(super) fn write_json<W: Write + ?Sized>(
            &self,
            thread: &str,
            out: &mut W,
        ) -> Result<()> {
            self.json(thread, out).map_err(fail)
        }

        fn json<W: Write + ?Sized>(&self, thread: &str, out: &mut W) -> Result<(), Fail> {
            out.write_all(b"{\"thread_id\":")?;
            put(out, &thread)?;
            out.write_all(b",\"nodes\":[")?;
            let mut nodes = self
                .db
                .prepare(&format!("SELECT ns, {ROW} FROM n ORDER BY ns, id"))?;
            let mut children = self.db.prepare(CHILDREN)?;
            let mut rows = nodes.query([])?;
            let mut first = true;
            while let Some(r) = rows.next()? {
                let ns: String = r.get(0)?;
                let n = row_at(r, 1)?;
                out.write_all(if first { b"{" } else { b",{" })?;
                first = false;
                out.write_all(b"\"checkpoint_ns\":")?;
                put(out, &ns)?;
                out.write_all(b",\"checkpoint_id\":")?;
                put(out, &n.id)?;
                out.write_all(b",\"parent_checkpoint_id\":")?;
                put(out, &n.parent)?;
                out.write_all(b",\"step\":")?;
                put(out, &n.step)?;
                out.write_all(b",\"source\":")?;
                put(out, &n.source)?;
                out.write_all(b",\"children\":[")?;
                if n.kids > 0 {
                    ids(out, children.query(params![ns, n.id])?)?;
                }
                out.write_all(b"],\"unreadable\":")?;
                put(out, &n.why)?;
                out.write_all(b"}")?;
            }
            out.write_all(b"],\"forks\":[")?;
            let mut forks = self
                .db
                .prepare("SELECT id FROM n WHERE kids > 1 ORDER BY ns, id")?;
            ids(out, forks.query([])?)?;
            out.write_all(b"]}")?;
            Ok(())
        }

        /// The tree [`ThreadHistory::tree`](crate::store::ThreadHistory::tree) draws,
        /// line for line: from each root (a node whose parent is not in its namespace),
        /// in key order, depth first, children in key order, indented one step more
        /// below a fork. The walk keeps no stack: down to a node's first child, else on
        /// to its next sibling, else back up to its parent and on from there (each
        /// node is gone down to once and come back up from once).
        pub(super) fn write_tree<W: Write + ?Sized>(&self, out: &mut W) -> Result<()> {
            self.tree(out).map_err(fail)
        }

        fn tree<W: Write + ?Sized>(&self, out: &mut W) -> Result<(), Fail> {
            let mut roots = self.db.prepare(&format!(
                "SELECT ns, {ROW} FROM n AS r WHERE parent IS NULL OR NOT EXISTS \
                 (SELECT 1 FROM n AS p WHERE p.ns = r.ns AND p.id = r.parent) ORDER BY ns, id"
            ))?;
            let mut first_child = self.db.prepare(FIRST_CHILD)?;
            let mut next_sibling = self.db.prepare(NEXT_SIBLING)?;
            let mut by_key = self.db.prepare(BY_KEY)?;
            let mut rows = roots.query([])?;
            while let Some(r) = rows.next()? {
                let ns: String = r.get(0)?;
                let root = row_at(r, 1)?;
                let root_id = root.id.clone();
                let (mut at, mut depth) = (root, 0usize);
                line(out, &ns, &at, depth)?;
                'walk: loop {
                    if at.kids > 0 {
                        if let Some(child) =
                            first_child.query_row(params![ns, at.id], row).optional()?
                        {
                            depth += usize::from(at.kids > 1);
                            at = child;
                            line(out, &ns, &at, depth)?;
                            continue;
                        }
                    }
                    // A branch ended: on to the next sibling of the nearest node on
                    // the way back up that has one, below the root.
                    while at.id != root_id {
                        let Some(parent) = at.parent.take() else {
                            break;
                        };
                        if let Some(sibling) = next_sibling
                            .query_row(params![ns, parent, at.id], row)
                            .optional()?
                        {
                            at = sibling;
                            line(out, &ns, &at, depth)?;
                            continue 'walk;
                        }
                        let Some(up) = by_key.query_row(params![ns, parent], row).optional()?
                        else {
                            break;
                        };
                        depth = depth.saturating_sub(usize::from(up.kids > 1));
                        at = up;
                    }
                    break;
                }
            }
            Ok(())
        }
    }

    /// One line of the tree, as [`ThreadHistory::tree`](crate::store::ThreadHistory::tree)
    /// writes it.
    fn line<W: Write + ?Sized>(out: &mut W, ns: &str, n: &Row, depth: usize) -> Result<(), Fail> {
        for _ in 0..depth.min(64) {
            out.write_all(b"  ")?;
        }
        write!(out, "{} step=", n.id)?;
        match n.step {
            Some(step) => write!(out, "{step}")?,
            None => out.write_all(b"?")?,
        }
        write!(out, " source={}", n.source.as_deref().unwrap_or("?"))?;
        if !ns.is_empty() {
            write!(out, " ns={ns:?}")?;
        }
        if n.kids > 1 {
            write!(out, " (fork: {} branches)", n.kids)?;
        }
        if let Some(why) = n.why.as_deref() {
            write!(out, " UNREADABLE: {why}")?;
        }
        out.write_all(b"\n")?;
        Ok(())
    }

    #[cfg(test)]
    mod tests {
        use super::{
            Nodes, BY_KEY, CHILDREN, CHILD_COUNTS, FIRST_CHILD, FIRST_KEYS, KEYS_AFTER,
            NEXT_SIBLING,
        };

        /// Each look-up made per node searches an index for its rows; none scans the
        /// table. (Read from SQLite's plans: the children's look-ups scanned the
        /// namespace by primary key before `INDEXED BY c`.)
        #[test]
        fn plans() {
            let nodes = Nodes::new().expect("scratch");
            nodes
                .db
                .execute_batch(CHILD_COUNTS)
                .expect("index and counts");
            let plan = |sql: &str| -> Vec<String> {
                let mut st = nodes
                    .db
                    .prepare(&format!("EXPLAIN QUERY PLAN {sql}"))
                    .expect("plan");
                // Unbound parameters are NULL: a plan needs no values.
                let mut rows = st.raw_query();
                let mut steps = Vec::new();
                while let Some(r) = rows.next().expect("plan row") {
                    steps.push(r.get::<_, String>(3).expect("detail"));
                }
                steps
            };
            for sql in [CHILDREN, FIRST_CHILD, NEXT_SIBLING] {
                let steps = plan(sql);
                assert!(
                    steps
                        .iter()
                        .all(|s| s.starts_with("SEARCH") && s.contains("INDEX c")),
                    "{sql}: {steps:?}"
                );
            }
            for sql in [BY_KEY, KEYS_AFTER] {
                let steps = plan(sql);
                assert!(
                    steps.iter().all(|s| s.starts_with("SEARCH")),
                    "{sql}: {steps:?}"
                );
            }
            // The first page and the counts: one pass, each count a search.
            assert!(plan(FIRST_KEYS).iter().all(|s| !s.contains("TEMP B-TREE")));
            let counts = plan(CHILD_COUNTS.split("; ").nth(1).expect("the update"));
            assert!(
                counts.iter().filter(|s| s.starts_with("SCAN")).count() <= 1
                    && counts
                        .iter()
                        .any(|s| s.starts_with("SEARCH") && s.contains("INDEX c")),
                "{counts:?}"
            );
        }
    }
}
