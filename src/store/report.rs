//! The reports of [`audit`](super::audit), [`encrypt`](super::encrypt) and
//! [`rekey`](super::rekey), serializable to JSON.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::classify::Class;

/// Rows and bytes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Tally {
    /// How many values.
    pub rows: u64,
    /// Their stored size in bytes.
    pub bytes: u64,
}

impl Tally {
    fn add(&mut self, bytes: u64) {
        self.rows = self.rows.saturating_add(1);
        self.bytes = self.bytes.saturating_add(bytes);
    }

    fn merge(&mut self, other: &Tally) {
        self.rows = self.rows.saturating_add(other.rows);
        self.bytes = self.bytes.saturating_add(other.bytes);
    }
}

/// Values by class.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ClassCounts {
    /// Every value counted.
    pub total: Tally,
    /// Not encrypted.
    pub clear: Tally,
    /// Not encrypted, legacy `json` format.
    pub legacy_json: Tally,
    /// Under the primary key.
    pub primary: Tally,
    /// Under decrypt-only keys, by key label.
    pub previous: BTreeMap<String, Tally>,
    /// Unreadable (see the report's samples for why).
    pub unreadable: Tally,
    /// `empty` markers (no value).
    pub empty: Tally,
}

impl ClassCounts {
    pub(crate) fn add(&mut self, class: &Class, label: impl FnOnce(usize) -> String, bytes: u64) {
        self.total.add(bytes);
        match class {
            Class::Clear => self.clear.add(bytes),
            Class::LegacyJson => self.legacy_json.add(bytes),
            Class::Primary => self.primary.add(bytes),
            Class::Previous(n) => self.previous.entry(label(*n)).or_default().add(bytes),
            Class::Unreadable(_) => self.unreadable.add(bytes),
            Class::Empty => self.empty.add(bytes),
        }
    }

    pub(crate) fn merge(&mut self, other: &ClassCounts) {
        self.total.merge(&other.total);
        self.clear.merge(&other.clear);
        self.legacy_json.merge(&other.legacy_json);
        self.primary.merge(&other.primary);
        for (k, v) in &other.previous {
            self.previous.entry(k.clone()).or_default().merge(v);
        }
        self.unreadable.merge(&other.unreadable);
        self.empty.merge(&other.empty);
    }

    /// Values under any decrypt-only key.
    pub fn previous_total(&self) -> Tally {
        let mut t = Tally::default();
        for v in self.previous.values() {
            t.merge(v);
        }
        t
    }

    /// Values in clear, legacy `json` included.
    pub fn clear_total(&self) -> Tally {
        let mut t = self.clear;
        t.merge(&self.legacy_json);
        t
    }
}

/// One table's (or column's) values by class.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct TableCounts {
    /// `table.column`, e.g. `writes.value`.
    pub column: String,
    /// The counts.
    pub counts: ClassCounts,
}

/// Values Postgres keeps inline in `checkpoints.checkpoint -> 'channel_values'`: Python
/// writes every `None`/`str`/`int`/`float`/`bool` channel value there, in clear, on
/// every `put`, whatever the serializer.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct InlineCounts {
    /// Checkpoint rows read.
    pub checkpoints: u64,
    /// Inline values that are not `null` and that no blob supersedes: in clear.
    pub values: Tally,
    /// Inline `null` values (no content).
    pub nulls: u64,
    /// Inline entries superseded by a blob of the same channel version (e.g. the `true`
    /// marker of a `_DeltaSnapshot`): the blob is the value.
    pub markers: u64,
    /// Whether these values count as findings (`deny_inline`).
    pub counted_as_findings: bool,
    /// What they are and why no key protects them.
    pub note: String,
}

/// What may still hold the bytes of values deleted or rewritten (by a sweep, a prune,
/// or the savers' own replacing writes): the database's free space, as far as the
/// database shows it.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct FreeSpace {
    /// SQLite: pages on the free list (`PRAGMA freelist_count`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub free_pages: Option<u64>,
    /// SQLite: their bytes (pages × page size).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub free_bytes: Option<u64>,
    /// Postgres: dead row versions of `checkpoint_blobs` and `checkpoint_writes`
    /// (`pg_stat_user_tables.n_dead_tup`, the server's running estimate).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub dead_rows: Option<u64>,
    /// Whether this is a finding (some free space, not acknowledged with
    /// `allow_free_space` or `allow_clear`).
    pub counted_as_findings: bool,
    /// What the counts cover and what they cannot see.
    pub note: String,
}

impl FreeSpace {
    /// Whether the database shows free space that may hold old bytes.
    pub fn any(&self) -> bool {
        self.free_pages.unwrap_or(0) > 0 || self.dead_rows.unwrap_or(0) > 0
    }
}

/// A value that could not be read.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct UnreadableRow {
    /// `table.column`.
    pub column: String,
    /// The row's primary key, column by column.
    pub key: Vec<String>,
    /// Why.
    pub reason: String,
}

/// The outcome of an audit.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    /// Every value is under the primary key (or allowed by the options).
    Clean,
    /// Some value is in clear, under a decrypt-only key, or unreadable.
    Findings,
}

/// What [`audit`](super::audit) found.
#[derive(Clone, Debug, Serialize)]
pub struct AuditReport {
    /// `"audit"`.
    pub operation: &'static str,
    /// The store (a Postgres URL without its password).
    pub store: String,
    /// `sqlite` or `postgres`.
    pub backend: &'static str,
    /// The keys used, by label (index 0 is the primary key); empty without keys.
    pub keys: Vec<String>,
    /// Every serialized value, by table and column.
    pub tables: Vec<TableCounts>,
    /// Postgres only: the values kept inline in the checkpoint JSONB.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub inline: Option<InlineCounts>,
    /// Inline JSONB channel values in clear (`inline.values.rows`; 0 on SQLite), whatever
    /// the verdict: a `clean` verdict without `deny_inline` speaks of the serialized
    /// values only, and these are in clear beside them.
    pub inline_values_in_clear: u64,
    /// Every table together.
    pub totals: ClassCounts,
    /// By thread (every table together), with
    /// [`AuditOptions::per_thread`](super::AuditOptions::per_thread); empty without.
    pub threads: BTreeMap<String, ClassCounts>,
    /// Up to [`AuditOptions::max_samples`](super::AuditOptions) unreadable values.
    pub unreadable_samples: Vec<UnreadableRow>,
    /// Columns Python never encrypts (not findings).
    pub never_encrypted: Vec<String>,
    /// Free space that may still hold old bytes (a finding unless acknowledged).
    pub free_space: FreeSpace,
    /// `clean` or `findings`.
    pub verdict: Verdict,
    /// Each finding in one sentence.
    pub findings: Vec<String>,
    /// Postgres: connections re-opened after the server closed them (the page in
    /// flight read again; see [`AuditOptions::max_reconnects`](super::AuditOptions::max_reconnects)).
    pub reconnects: u64,
    /// Wall-clock seconds.
    pub elapsed_s: f64,
}

/// One table's part of a sweep.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct SweepTable {
    /// `table.column`.
    pub column: String,
    /// Values read, by class as read.
    pub seen: ClassCounts,
    /// Values rewritten under the primary key (in a dry run: that would be).
    pub rewritten: Tally,
    /// Values a live writer changed between read and write: left to the writer.
    pub changed_by_writer: u64,
    /// Of those, how many still need this sweep when read again afterwards (rerun).
    pub changed_still_pending: u64,
    /// Values that could not be rewritten (unreadable, or failed the read-back).
    pub failed: u64,
}

/// What [`encrypt`](super::encrypt) or [`rekey`](super::rekey) did.
#[derive(Clone, Debug, Serialize)]
pub struct SweepReport {
    /// `"encrypt"` or `"rekey"`.
    pub operation: &'static str,
    /// The store (a Postgres URL without its password).
    pub store: String,
    /// `sqlite` or `postgres`.
    pub backend: &'static str,
    /// Nothing was written: `rewritten` counts what would be.
    pub dry_run: bool,
    /// A dry run whose store would refuse the run itself: a Postgres role without the
    /// privilege it needs on the saver's tables (`UPDATE`), said with the `GRANT` that
    /// gives it. `None` otherwise.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub would_be_refused: Option<String>,
    /// The keys used, by label (index 0 is the primary key).
    pub keys: Vec<String>,
    /// By table.
    pub tables: Vec<SweepTable>,
    /// Every table together: values read.
    pub seen: ClassCounts,
    /// Every table together: rewritten (or, dry, would be).
    pub rewritten: Tally,
    /// Every table together: left to a live writer.
    pub changed_by_writer: u64,
    /// Every table together: left to a live writer and still needing the sweep.
    pub changed_still_pending: u64,
    /// Every table together: could not be rewritten.
    pub failed: u64,
    /// Postgres only: inline JSONB values, which the sweep leaves in place (see the
    /// store module's documentation).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub inline_values_left: Option<u64>,
    /// Batches committed.
    pub batches: u64,
    /// Connections re-opened after the server closed one (Postgres).
    pub reconnects: u64,
    /// Up to 20 values that could not be rewritten, with why.
    pub failed_samples: Vec<UnreadableRow>,
    /// Wall-clock seconds.
    pub elapsed_s: f64,
    /// Values read per second.
    pub rows_per_s: f64,
    /// Stored megabytes (10^6) read per second.
    pub mb_per_s: f64,
    /// Whether every value this sweep is for was done: nothing failed and nothing a
    /// writer changed still needs it.
    pub complete: bool,
    /// Asked to stop ([`SweepOptions::stop_flag`](super::SweepOptions::stop_flag)), the
    /// sweep ended after the batch in flight (`complete` is false, no vacuum was done);
    /// the same sweep run again goes on.
    pub stopped: bool,
    /// Whether the store was compacted after the sweep (`vacuum`): SQLite `VACUUM` and
    /// a truncating WAL checkpoint, Postgres `VACUUM (FULL)` of the rewritten tables.
    /// False when asked and not done: a Postgres role that may not vacuum the tables
    /// (`left_behind` says which, and who may).
    pub vacuumed: bool,
    /// What may still hold the old bytes of the values this sweep rewrote, and what
    /// removes them (nothing for a dry run or a sweep that rewrote nothing).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub left_behind: Option<String>,
}

/// The SQLite space a retention sweep with `vacuum` gave back.
#[cfg(all(feature = "sqlite", feature = "postgres"))]
#[derive(Clone, Debug, Default, Serialize, PartialEq, Eq)]
#[non_exhaustive]
pub struct VacuumReport {
    /// The file's `auto_vacuum` mode: `incremental` (pages given back), `full` (SQLite
    /// gives them back at each commit) or `none` (nothing can be given back without a
    /// full `VACUUM`; `note` says how to convert once).
    pub mode: &'static str,
    /// Pages given back to the file system.
    pub pages_released: u64,
    /// The same in bytes.
    pub bytes_released: u64,
    /// Pages still on the free list (a stop, or mode `none`).
    pub free_pages_left: u64,
    /// What to do, when something is left.
    pub note: Option<String>,
}
