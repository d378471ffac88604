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

/// Checkpoints by key: the ids in the order they were pushed, and the (thread,
/// namespace) each run of them belongs to. A run is held once, not per id: the
/// planner pushes a namespace's checkpoints together, and a thread id and namespace
/// per row took 48 bytes of every row (and a copy of the thread id's text) of a
/// thread of 100,000 checkpoints.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct Keys {
    /// `(thread, namespace, how many of the ids that follow the previous runs are
    /// theirs)`.
    runs: Vec<(String, String, usize)>,
    pub(crate) ids: Vec<String>,
}

impl Keys {
    /// Room for `more` ids (the planner knows how many go before it pushes them: a
    /// namespace of 100,000 grew the list to 131,072 slots, copied at every step).
    #[cfg(feature = "postgres")]
    pub(crate) fn reserve(&mut self, more: usize) {
        self.ids.reserve(more);
    }

    pub(crate) fn push(&mut self, thread: &str, ns: &str, id: &str) {
        match self.runs.last_mut() {
            Some((t, n, count)) if t == thread && n == ns => *count += 1,
            _ => self.runs.push((thread.to_owned(), ns.to_owned(), 1)),
        }
        self.ids.push(id.to_owned());
    }

    /// Every key, `(thread, namespace, id)`, in the order pushed.
    pub(crate) fn iter(&self) -> impl Iterator<Item = (&str, &str, &str)> {
        self.iter_from(0)
    }

    /// The keys from the `start`th on, found by stepping over whole runs (a chunk of a
    /// long removal does not walk the keys before it).
    fn iter_from(&self, start: usize) -> impl Iterator<Item = (&str, &str, &str)> {
        let mut before = 0;
        let mut first = 0;
        for (at, (_, _, count)) in self.runs.iter().enumerate() {
            if before + count > start {
                break;
            }
            before += count;
            first = at + 1;
        }
        // Of the first run, what is left past `start`.
        let skip = start.saturating_sub(before);
        self.runs
            .get(first..)
            .unwrap_or_default()
            .iter()
            .enumerate()
            .flat_map(move |(i, (t, n, count))| {
                let left = if i == 0 {
                    count.saturating_sub(skip)
                } else {
                    *count
                };
                std::iter::repeat_n((t.as_str(), n.as_str()), left)
            })
            .zip(self.ids.get(start..).unwrap_or_default())
            .map(|((t, n), id)| (t, n, id.as_str()))
    }

    /// The namespaces of the keys from the `start`th on, with their ids.
    #[cfg_attr(not(all(feature = "sqlite", feature = "postgres")), allow(dead_code))]
    pub(crate) fn namespaces_and_ids_from(
        &self,
        start: usize,
    ) -> impl Iterator<Item = (&str, &str)> {
        self.iter_from(start).map(|(_, n, id)| (n, id))
    }

    #[cfg(feature = "postgres")]
    pub(crate) fn len(&self) -> usize {
        self.ids.len()
    }

    #[cfg(feature = "postgres")]
    pub(crate) fn is_empty(&self) -> bool {
        self.ids.is_empty()
    }

    /// The keys from `start`, [`CHUNK`] at most, column-wise (one `unnest` row each).
    #[cfg(feature = "postgres")]
    pub(crate) fn chunk(&self, start: usize) -> (Vec<&str>, Vec<&str>, &[String]) {
        self.span(start, CHUNK)
    }

    /// The keys from `start`, `n` at most, column-wise.
    #[cfg(feature = "postgres")]
    pub(crate) fn span(&self, start: usize, n: usize) -> (Vec<&str>, Vec<&str>, &[String]) {
        let end = start.saturating_add(n);
        let (threads, namespaces) = self
            .iter_from(start)
            .take(n)
            .map(|(t, n, _)| (t, n))
            .unzip();
        (threads, namespaces, part(&self.ids, start, end))
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
    /// On Postgres, the blobs that go, decided by the caller (a long namespace pruned
    /// a window at a time, `store::long`); `None`: those at the versions the doomed
    /// checkpoints reference that no remaining checkpoint of their namespace does.
    pub(crate) blobs: Option<Blobs>,
}

/// Blobs of one namespace that go with a window of its checkpoints, each referenced by
/// no checkpoint that stays: `(channel, version)` in `channels` and `versions`. Those
/// referenced by a checkpoint with an id above `newest` (a live writer's: the newest
/// id when the references were read) stay.
#[derive(Clone, Debug, Default)]
pub(crate) struct Blobs {
    pub(crate) thread: String,
    pub(crate) ns: String,
    pub(crate) newest: String,
    pub(crate) channels: Vec<String>,
    pub(crate) versions: Vec<String>,
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
        for (thread, ns, id) in self.doomed.iter() {
            if !whole.contains(thread) {
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

#[cfg(test)]
mod tests {
    use super::Keys;

    /// Keys pushed in runs come back as pushed, from any start, across the runs'
    /// edges: what the row-per-key columns gave.
    #[test]
    fn keys_come_back_as_pushed_from_any_start() {
        let pushed = [
            ("t1", "", "a"),
            ("t1", "", "b"),
            ("t1", "sub", "c"),
            ("t2", "", "d"),
            ("t2", "", "e"),
            ("t2", "", "f"),
            ("t1", "", "g"),
        ];
        let mut keys = Keys::default();
        for (t, n, id) in pushed {
            keys.push(t, n, id);
        }
        assert_eq!(keys.runs.len(), 4);
        for start in 0..=pushed.len() + 1 {
            let got: Vec<(&str, &str, &str)> = keys.iter_from(start).collect();
            assert_eq!(got, pushed.get(start..).unwrap_or_default(), "from {start}");
            let tail: Vec<(&str, &str)> = keys.namespaces_and_ids_from(start).collect();
            let want: Vec<(&str, &str)> = pushed
                .get(start..)
                .unwrap_or_default()
                .iter()
                .map(|(_, n, id)| (*n, *id))
                .collect();
            assert_eq!(tail, want, "from {start}");
        }
    }

    #[cfg(feature = "postgres")]
    #[test]
    fn a_chunk_is_the_keys_column_wise() {
        let mut keys = Keys::default();
        let n = super::CHUNK + 5;
        for i in 0..n {
            let thread = if i < 3 { "t1" } else { "t2" };
            keys.push(thread, "", &format!("id{i}"));
        }
        let (threads, namespaces, ids) = keys.chunk(super::CHUNK - 1);
        assert_eq!(threads, ["t2"; 6]);
        assert_eq!(namespaces, [""; 6]);
        let want: Vec<String> = (super::CHUNK - 1..n).map(|i| format!("id{i}")).collect();
        assert_eq!(ids, want.as_slice());
        let (threads, _, ids) = keys.chunk(0);
        assert_eq!(threads.len(), super::CHUNK);
        assert_eq!(&threads[..4], ["t1", "t1", "t1", "t2"]);
        assert_eq!(ids.len(), super::CHUNK);
    }
}
