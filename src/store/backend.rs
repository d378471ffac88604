//! What both backends offer the operations: tables of serialized values, paged by
//! primary key, and compare-and-swap rewrites ([`Backend`], which the SQLite and the
//! Postgres backend implement; the audit and the sweeps are written once over it).

use std::sync::Arc;

use crate::error::Error;

use super::report::FreeSpace;
use super::retry::Retry;

#[cfg(all(feature = "sqlite", feature = "postgres"))]
mod checkpoints;
#[cfg(all(feature = "sqlite", feature = "postgres"))]
pub(crate) use checkpoints::{
    odd_ids, ph, row_at_sql, BlobRef, BlobRefs, Cell, Checkpoints, Col, Counted, Spec, Versions,
    WriteSet,
};

type Result<T, E = Error> = std::result::Result<T, E>;

/// The backup format's name (the header's `format`).
#[cfg(feature = "sqlite")]
pub const BACKUP_FORMAT: &str = "lgcodec-store-backup";

/// Whether `head`, the first bytes of a file (its first 4 KiB hold the header), begin
/// a backup `export` wrote: a JSON object whose header names the format,
/// `lgcodec-store-backup`. What tells a backup named where a store, an export's
/// earlier backup or rows go from what belongs there.
///
/// ```
/// use langgraph_codec::store::begins_a_backup;
/// assert!(begins_a_backup(br#"{"format":"lgcodec-store-backup","version":1}"#));
/// assert!(!begins_a_backup(b"SQLite format 3\0"));
/// ```
#[cfg(feature = "sqlite")]
pub fn begins_a_backup(head: &[u8]) -> bool {
    let format = format!("\"format\":\"{BACKUP_FORMAT}\"");
    head.starts_with(b"{") && head.windows(format.len()).any(|w| w == format.as_bytes())
}

/// What a writing operation does to a store's rows, for [`Values::refuses`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Writes {
    /// Rewrites values in place: the sweeps (encrypt, rekey).
    Rewrite,
    /// Deletes checkpoints with their blobs and writes: prune, retain.
    Delete,
    /// Inserts checkpoints with their blobs and writes into a store that has the
    /// saver's tables: import, copy.
    Insert,
}

/// One store's database, as the audit and the sweeps reach it: its tables of
/// serialized values paged by primary key, a row read again, a batch of
/// compare-and-swap rewrites in one transaction, and what the backend alone knows
/// (its free space, its compaction, the values it keeps inline).
#[async_trait::async_trait]
pub(crate) trait Values: std::fmt::Debug + Send + Sync {
    /// `sqlite` or `postgres`.
    fn name(&self) -> &'static str;

    /// The tables holding serialized values, in the order the operations go through them.
    fn tables(&self) -> &'static [Table];

    /// Why the sweeps do not rewrite this store, if they do not: a LangGraphJS store
    /// (its readers cannot open encrypted rows).
    fn rewrite_refused(&self) -> Option<&'static str>;

    /// For the audit's report: what this backend's savers never encrypt.
    fn never_encrypted(&self) -> Vec<String>;

    /// What a sweep's rewrites leave of the old bytes, short of [`vacuum`](Self::vacuum).
    fn left_behind(&self) -> &'static str;

    /// For a dry run of an operation that `writes`: why the run itself would be
    /// refused (a Postgres role without the privilege it needs), with what to do, or
    /// `None`. A SQLite file says `None`: the dry run cannot tell more than its
    /// writable open would (a file or mount it may not write is refused there).
    async fn refuses(&self, writes: Writes) -> Result<Option<String>> {
        let _ = writes;
        Ok(None)
    }

    /// The rows of `t`.
    async fn count(&self, t: &'static Table) -> Result<u64>;

    /// Up to `limit` rows of `t` after the key `after` (from the first without), in key
    /// order, stopping once their values hold `max_bytes` (the first row always comes).
    async fn page(
        &self,
        t: &'static Table,
        after: Option<Vec<KeyPart>>,
        limit: usize,
        max_bytes: usize,
    ) -> Result<Vec<Row>>;

    /// The row of `t` at `key`, as it is now.
    async fn reread(&self, t: &'static Table, key: Vec<KeyPart>) -> Result<Option<Row>>;

    /// `updates` in one transaction, each applied only if its row still holds the old
    /// type and bytes; per update, whether it was.
    async fn apply(&self, t: &'static Table, updates: Arc<Vec<Update>>) -> Result<Vec<bool>>;

    /// The free space that may hold old bytes, as far as the database shows it.
    async fn free_space(&self) -> Result<FreeSpace>;

    /// Compacts the store after a sweep (the old bytes leave the database files):
    /// whether it was done (a Postgres server skips the tables the role may not
    /// vacuum, with a warning only), and what is left, if anything.
    async fn vacuum(&self) -> Result<(bool, Option<String>)>;

    /// After a sweep's writes: statistics the next audit reads published now.
    async fn flush_stats(&self) {}

    /// After a statement on this store failed with `e`: a lost connection (within
    /// `retry`'s limit) is waited on and re-opened as it was opened, for the caller to
    /// redo its unit; any other error is returned. A file has no connection to lose:
    /// its errors are returned as they are. Every operation recovers through this one
    /// method, called by its engine (`engine.rs`): the sweeps, prune and retain, copy
    /// and import.
    async fn recover(&self, retry: &mut Retry, e: Error) -> Result<()> {
        let _ = retry;
        Err(e)
    }

    /// Whether checkpoints keep channel values inline, outside the tables of serialized
    /// values (Postgres's JSONB), which [`inline_page`](Self::inline_page) counts.
    fn holds_inline_values(&self) -> bool {
        false
    }

    /// The checkpoints whose inline values [`inline_page`](Self::inline_page) goes through.
    async fn count_checkpoints(&self) -> Result<u64> {
        Ok(0)
    }

    /// Up to `limit` checkpoints' inline values after the key `after`, in key order.
    async fn inline_page(
        &self,
        _after: Option<[String; 3]>,
        _limit: usize,
    ) -> Result<Vec<InlineRow>> {
        Ok(Vec::new())
    }
}

/// One checkpoint row's inline values.
#[derive(Debug)]
pub(crate) struct InlineRow {
    pub key: [String; 3],
    /// Non-null inline values no blob supersedes.
    pub values: u64,
    /// Their JSON text length.
    pub bytes: u64,
    pub nulls: u64,
    pub markers: u64,
}

/// One part of a row's primary key.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum KeyPart {
    Text(String),
    Int(i64),
    /// A SQLite key cell that is not UTF-8 text: a BLOB (`blob`), or TEXT whose bytes
    /// are not UTF-8 (written by something other than Python). Bound back as it was
    /// stored, so keyset paging and compare-and-swap find the row.
    #[cfg_attr(not(feature = "sqlite"), allow(dead_code))]
    Bytes {
        blob: bool,
        bytes: Vec<u8>,
    },
}

impl KeyPart {
    /// For reports: the text, the number, or the bytes with what is not UTF-8 replaced
    /// (`U+FFFD`), marked `x'…'` for a BLOB.
    pub(crate) fn text(&self) -> String {
        match self {
            KeyPart::Text(s) => s.clone(),
            KeyPart::Int(i) => i.to_string(),
            KeyPart::Bytes { blob: true, bytes } => {
                format!("x'{}'", String::from_utf8_lossy(bytes))
            }
            KeyPart::Bytes { blob: false, bytes } => String::from_utf8_lossy(bytes).into_owned(),
        }
    }
}

/// A table holding serialized values: its primary key columns (`idx` is the only
/// integer), the type column and the value column.
#[derive(Debug)]
pub(crate) struct Table {
    pub name: &'static str,
    pub key: &'static [&'static str],
    pub type_col: &'static str,
    pub value_col: &'static str,
    /// `table.column`, for reports.
    pub label: &'static str,
}

impl Table {
    pub(crate) fn is_int(column: &str) -> bool {
        column == "idx"
    }
}

/// One stored value.
#[derive(Debug)]
pub(crate) struct Row {
    pub key: Vec<KeyPart>,
    pub tag: Option<String>,
    pub data: Option<Vec<u8>>,
}

impl Row {
    pub(crate) fn thread_id(&self) -> String {
        self.key.first().map(KeyPart::text).unwrap_or_default()
    }
}

/// A compare-and-swap rewrite: applied only if the row still holds `old_*`.
#[derive(Debug)]
pub(crate) struct Update {
    pub key: Vec<KeyPart>,
    pub old_tag: String,
    pub old_data: Vec<u8>,
    pub new_tag: String,
    pub new_data: Vec<u8>,
}

/// `SELECT key…, type, value FROM table [WHERE (key…) > (params…)] ORDER BY key… LIMIT n`
/// with placeholders from `ph` (1-based).
#[cfg_attr(not(feature = "sqlite"), allow(dead_code))]
pub(crate) fn page_sql(t: &Table, after: bool, ph: impl Fn(usize) -> String) -> String {
    let columns = format!("{}, {}, {}", t.key.join(", "), t.type_col, t.value_col);
    page_of(t, &columns, after, &ph)
}

/// `SELECT {columns} FROM table [WHERE (key…) > (params…)] ORDER BY key… LIMIT n`.
fn page_of(t: &Table, columns: &str, after: bool, ph: &impl Fn(usize) -> String) -> String {
    let keys = t.key.join(", ");
    let mut sql = format!("SELECT {columns} FROM {}", t.name);
    let mut n = 0;
    if after {
        let params: Vec<String> = (1..=t.key.len()).map(ph).collect();
        n = t.key.len();
        sql.push_str(&format!(" WHERE ({keys}) > ({})", params.join(", ")));
    }
    sql.push_str(&format!(" ORDER BY {keys} LIMIT {}", ph(n + 1)));
    sql
}

/// [`page_sql`] that also stops at a byte budget (the parameter after the limit): of
/// the first `n` rows, those whose preceding rows' values hold fewer bytes than the
/// budget, so the first row always and at most the budget plus one row. Postgres
/// answers `octet_length` from a TOASTed value's header without reading the value, and
/// sends no row past the budget.
#[cfg_attr(not(feature = "postgres"), allow(dead_code))]
pub(crate) fn page_sql_capped(t: &Table, after: bool, ph: impl Fn(usize) -> String) -> String {
    let keys = t.key.join(", ");
    let plain = format!("{keys}, {}, {}", t.type_col, t.value_col);
    let len = format!("coalesce(octet_length({}), 0)", t.value_col);
    let inner = page_of(
        t,
        &format!("{plain}, {len} AS lg_len, sum({len}) OVER (ORDER BY {keys}) AS lg_upto"),
        after,
        &ph,
    );
    let budget = ph(if after { t.key.len() + 2 } else { 2 });
    format!(
        "SELECT {plain} FROM ({inner}) lg_page WHERE lg_upto - lg_len < {budget} ORDER BY {keys}"
    )
}

/// `SELECT key…, type, value FROM table WHERE key = params…`.
pub(crate) fn row_sql(t: &Table, ph: impl Fn(usize) -> String) -> String {
    let keys = t.key.join(", ");
    let cond: Vec<String> = t
        .key
        .iter()
        .enumerate()
        .map(|(i, k)| format!("{k} = {}", ph(i + 1)))
        .collect();
    format!(
        "SELECT {keys}, {}, {} FROM {} WHERE {}",
        t.type_col,
        t.value_col,
        t.name,
        cond.join(" AND ")
    )
}

/// The one trait every operation reaches a store's database through: a store's values
/// ([`Values`]: the audit and the sweeps) and, with both backends built, its
/// checkpoints ([`Checkpoints`]: prune, retain, import and copy). One type per backend
/// implements both halves over one connection (`SqliteStore`, `PgStore`); the halves
/// are two traits only so that each backend's two impl blocks live in files of their
/// own.
#[cfg(all(feature = "sqlite", feature = "postgres"))]
pub(crate) trait Backend: Values + Checkpoints {}

#[cfg(all(feature = "sqlite", feature = "postgres"))]
impl<T: Values + Checkpoints> Backend for T {}

/// The one trait every operation reaches a store's database through (with one backend
/// built, the sweeps' half alone: the checkpoint operations need both).
#[cfg(not(all(feature = "sqlite", feature = "postgres")))]
pub(crate) trait Backend: Values {}

#[cfg(not(all(feature = "sqlite", feature = "postgres")))]
impl<T: Values> Backend for T {}
