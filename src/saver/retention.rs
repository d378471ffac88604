//! Retention deletes, planned once for both backends: which checkpoints go, which kept
//! checkpoints lose a parent that goes, which threads go whole. The savers' own
//! `prune` and `lgcodec store prune` make a [`Removal`] and hand it to their backend's
//! `retention::remove` (SQLite: `saver::sqlite::retention`, Postgres:
//! `saver::postgres::retention`), which deletes it in the caller's transaction.
//!
//! What goes with a checkpoint, as Python's `PostgresSaver.prune` (3.2.0) does it:
//! its pending writes (by checkpoint id), on Postgres the blobs no remaining checkpoint
//! of its namespace references, and a kept checkpoint whose parent goes is left with no
//! parent.

/// Keys per statement. Postgres plans an `unnest` of parameters at 100 rows whatever
/// its length, so a join from it is planned as primary-key lookups; chunks of this size
/// keep each statement's work, and its locks, short beside live writers.
#[cfg(feature = "postgres")]
pub(crate) const CHUNK: usize = 1_000;

/// Checkpoints by key, column-wise (one `unnest` row each).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct Keys {
    pub(crate) threads: Vec<String>,
    pub(crate) namespaces: Vec<String>,
    pub(crate) ids: Vec<String>,
}

impl Keys {
    /// Room for `more` keys (the planner knows how many go before it pushes them: a
    /// namespace of 100,000 grew each column to 131,072 slots, copied at every step).
    #[cfg(feature = "postgres")]
    pub(crate) fn reserve(&mut self, more: usize) {
        self.threads.reserve(more);
        self.namespaces.reserve(more);
        self.ids.reserve(more);
    }

    pub(crate) fn push(&mut self, thread: &str, ns: &str, id: &str) {
        self.threads.push(thread.to_owned());
        self.namespaces.push(ns.to_owned());
        self.ids.push(id.to_owned());
    }

    #[cfg(feature = "postgres")]
    pub(crate) fn len(&self) -> usize {
        self.ids.len()
    }

    #[cfg(feature = "postgres")]
    pub(crate) fn is_empty(&self) -> bool {
        self.ids.is_empty()
    }

    #[cfg(feature = "postgres")]
    pub(crate) fn chunk(&self, start: usize) -> (&[String], &[String], &[String]) {
        let end = start.saturating_add(CHUNK);
        (
            part(&self.threads, start, end),
            part(&self.namespaces, start, end),
            part(&self.ids, start, end),
        )
    }
}

#[cfg(feature = "postgres")]
/// `v[start..end]`, cut to `v`'s length (empty past its end).
pub(crate) fn part(v: &[String], start: usize, end: usize) -> &[String] {
    v.get(start..end.min(v.len())).unwrap_or_default()
}

/// What goes: checkpoints, and the kept checkpoints whose parent goes (each with the
/// parent id it was read with), and the threads deleted whole. A thread that goes whole
/// is deleted by thread id up to the newest checkpoint id of it that goes (its
/// checkpoints, its writes stored against any checkpoint or none, on Postgres the blobs
/// they alone referenced): a live writer's newer checkpoint, and what it references,
/// stays.
#[derive(Clone, Debug, Default)]
pub(crate) struct Removal {
    pub(crate) doomed: Keys,
    pub(crate) orphaned: Keys,
    pub(crate) orphaned_parents: Vec<String>,
    /// `(thread, the newest checkpoint id of it that goes)`.
    pub(crate) whole_threads: Vec<(String, String)>,
}

impl Removal {
    /// The doomed checkpoints of threads that do not go whole (those go by thread id).
    pub(crate) fn keyed(&self) -> std::borrow::Cow<'_, Keys> {
        if self.whole_threads.is_empty() {
            return std::borrow::Cow::Borrowed(&self.doomed);
        }
        let whole: std::collections::HashSet<&str> =
            self.whole_threads.iter().map(|(t, _)| t.as_str()).collect();
        let mut keyed = Keys::default();
        let d = &self.doomed;
        for ((thread, ns), id) in d.threads.iter().zip(&d.namespaces).zip(&d.ids) {
            if !whole.contains(thread.as_str()) {
                keyed.push(thread, ns, id);
            }
        }
        std::borrow::Cow::Owned(keyed)
    }

    #[cfg(feature = "postgres")]
    pub(crate) fn is_empty(&self) -> bool {
        self.doomed.is_empty() && self.whole_threads.is_empty()
    }

    #[cfg(feature = "postgres")]
    /// Plans one namespace: each of `checkpoints` (id, stored parent id) not in `keep`
    /// goes; a kept one whose parent goes is orphaned. Returns how many go.
    pub(crate) fn add_namespace<'a>(
        &mut self,
        thread: &str,
        ns: &str,
        checkpoints: impl Iterator<Item = (&'a str, Option<&'a str>)> + Clone,
        keep: &std::collections::BTreeSet<impl std::borrow::Borrow<str> + Ord>,
    ) -> u64 {
        // Sorted rather than hashed: 8 bytes an id, where a namespace of 100,000
        // checkpoints held a 4 MiB set.
        let mut present: Vec<&str> = checkpoints.clone().map(|(id, _)| id).collect();
        present.sort_unstable();
        self.doomed
            .reserve(present.iter().filter(|id| !keep.contains(**id)).count());
        let mut gone = 0;
        for (id, parent) in checkpoints {
            if !keep.contains(id) {
                self.doomed.push(thread, ns, id);
                gone += 1;
            } else if let Some(p) =
                parent.filter(|p| present.binary_search(p).is_ok() && !keep.contains(*p))
            {
                self.orphaned.push(thread, ns, id);
                self.orphaned_parents.push(p.to_owned());
            }
        }
        gone
    }
}

/// Rows and bytes removed (or, in a dry run, that would be).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Removed {
    pub(crate) checkpoints: u64,
    pub(crate) writes: u64,
    pub(crate) blobs: u64,
    /// Blob and write bytes, and the checkpoints' stored size (Postgres: their JSONB's).
    pub(crate) bytes: u64,
}
