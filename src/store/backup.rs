//! Reading a backup file (`lgcodec-store-backup` v1, written by `export`):
//! the header, each row line checked against its table's columns, the `end` line's
//! counts, the header's thread list and nothing after the end; [`verify_backup`] reads
//! a whole file that way without a store, and `import` restores
//! through the same reader.

use std::collections::{BTreeSet, HashSet};
use std::io::BufRead;
use std::time::Instant;

use base64::engine::general_purpose::STANDARD as B64;
use base64::Engine as _;
use serde::Serialize;
use serde_json::{Map, Value as Json};

use super::backend::{Cell, Col, Spec};
use super::error::StoreFault;
use super::raw::{Cols, Result};
use crate::error::Error;
use crate::jsonl::{JsonlLine, JsonlReader};

pub use super::backend::BACKUP_FORMAT;
/// The backup format's version this crate writes and reads.
pub const BACKUP_VERSION: u64 = 1;

/// The longest backup line `import` reads by default: 1.5 GiB, room for the largest
/// value a store holds (Postgres `bytea` stops at 1 GiB) in base64 with its key columns.
pub const DEFAULT_MAX_BACKUP_LINE_BYTES: usize = 3 << 29;

/// The tables of a backup and their columns: output name, SQL expression, kind.
/// `reading` from a store of layout `c` (Postgres JSONB read as text), or writing into
/// today's layout (`c` is then [`Cols::current`]).
pub(super) fn specs(c: &Cols, pgres: bool, reading: bool) -> Vec<Spec> {
    let jsonb = |column: &'static str, as_text: &'static str| {
        if !pgres {
            (column, Col::Bytes)
        } else if reading {
            (as_text, Col::Jsonb)
        } else {
            (column, Col::Jsonb)
        }
    };
    let (checkpoint, checkpoint_col) = jsonb("checkpoint", "checkpoint::text");
    let (metadata, metadata_col) = jsonb("metadata", "metadata::text");
    let mut out = vec![Spec {
        kind: "checkpoint",
        table: "checkpoints",
        cols: vec![
            ("thread_id", "thread_id", Col::Text),
            ("checkpoint_ns", c.ns, Col::Text),
            ("checkpoint_id", c.id, Col::Text),
            ("parent_checkpoint_id", c.parent, Col::OptText),
            ("type", c.ty, Col::OptText),
            ("checkpoint", checkpoint, checkpoint_col),
            ("metadata", metadata, metadata_col),
        ],
        keys: 3,
    }];
    if pgres {
        out.push(Spec {
            kind: "blob",
            table: c.blobs,
            cols: vec![
                ("thread_id", "thread_id", Col::Text),
                ("checkpoint_ns", "checkpoint_ns", Col::Text),
                ("channel", "channel", Col::Text),
                ("version", "version", Col::Text),
                ("type", "type", Col::Text),
                ("blob", "blob", Col::Bytes),
            ],
            keys: 4,
        });
    }
    out.push(Spec {
        kind: "write",
        table: if pgres { "checkpoint_writes" } else { "writes" },
        cols: vec![
            ("thread_id", "thread_id", Col::Text),
            ("checkpoint_ns", c.ns, Col::Text),
            ("checkpoint_id", c.w_id, Col::Text),
            ("task_id", "task_id", Col::Text),
            ("idx", "idx", Col::Int),
            ("task_path", c.w_path, Col::Text),
            ("channel", "channel", Col::Text),
            ("type", c.w_ty, Col::OptText),
            ("value", if pgres { "blob" } else { "value" }, Col::Bytes),
        ],
        keys: 5,
    });
    out
}

/// A read or write of backup `file` that failed: [`StoreFault::Backup`], or
/// [`StoreFault::BackupDiskFull`] when the disk (or the user's quota) is full.
pub(super) fn io_err(file: &str) -> impl Fn(std::io::Error) -> Error + '_ {
    move |e| {
        let (file, reason) = (file.to_owned(), e.to_string());
        if is_disk_full(e.kind()) {
            StoreFault::BackupDiskFull { file, reason }.into()
        } else {
            StoreFault::Backup { file, reason }.into()
        }
    }
}

/// Whether a write failed for want of room: the disk is full (`ENOSPC`) or the user's
/// quota is spent (`EDQUOT`). What an export's writer tells a full disk by, where the
/// remedy (free space, or write elsewhere) differs from that of other write errors.
///
/// ```
/// use langgraph_codec::store::is_disk_full;
/// assert!(is_disk_full(std::io::ErrorKind::StorageFull));
/// assert!(!is_disk_full(std::io::ErrorKind::PermissionDenied));
/// ```
pub fn is_disk_full(kind: std::io::ErrorKind) -> bool {
    matches!(
        kind,
        std::io::ErrorKind::StorageFull | std::io::ErrorKind::QuotaExceeded
    )
}

/// A line of a backup file as text; `None` for a blank line.
pub(super) fn line_text(at: &str, line: JsonlLine) -> Result<Option<String>> {
    let bad = |reason: String| StoreFault::Backup {
        file: at.to_owned(),
        reason,
    };
    match line {
        JsonlLine::Text(text) => Ok(Some(text)),
        JsonlLine::Blank => Ok(None),
        JsonlLine::TooLong { limit } => Err(bad(format!(
            "the line is longer than {limit} bytes (ImportOptions::max_line_bytes); it was not read"
        ))
        .into()),
        JsonlLine::NotUtf8 { offset } => {
            Err(bad(format!("not UTF-8 at byte {offset} of the line")).into())
        }
    }
}

/// One backup line as an object of the fields `wanted` names; any other field is skipped
/// unparsed (serde's `IgnoredAny` builds nothing), so a line costs about its own length
/// in memory whatever an unknown field holds (a crafted line of nested arrays stops at
/// serde_json's nesting limit, an error naming the line).
struct Fields<'w>(&'w [&'w str]);

impl<'de> serde::de::DeserializeSeed<'de> for Fields<'_> {
    type Value = Map<String, Json>;
    fn deserialize<D: serde::Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        d.deserialize_map(self)
    }
}

impl<'de> serde::de::Visitor<'de> for Fields<'_> {
    type Value = Map<String, Json>;
    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("a JSON object")
    }
    fn visit_map<A: serde::de::MapAccess<'de>>(self, mut m: A) -> Result<Self::Value, A::Error> {
        let mut out = Map::new();
        while let Some(k) = m.next_key::<String>()? {
            if self.0.contains(&k.as_str()) {
                let v: Json = m.next_value()?;
                out.insert(k, v);
            } else {
                m.next_value::<serde::de::IgnoredAny>()?;
            }
        }
        Ok(out)
    }
}

/// Parses one backup line keeping only the `wanted` fields (see [`Fields`]).
pub(super) fn parse_fields(line: &str, wanted: &[&str]) -> serde_json::Result<Map<String, Json>> {
    use serde::de::DeserializeSeed as _;
    let mut de = serde_json::Deserializer::from_str(line);
    let obj = Fields(wanted).deserialize(&mut de)?;
    de.end()?;
    Ok(obj)
}

/// The fields of a header line.
pub(super) const HEADER_FIELDS: [&str; 6] = [
    "format",
    "version",
    "backend",
    "layout",
    "threads",
    "excluded_threads",
];

pub(super) fn cells(spec: &Spec, obj: &Map<String, Json>, at: &str) -> Result<Vec<Cell>> {
    let bad = |reason: String| -> Error {
        StoreFault::Backup {
            file: at.to_owned(),
            reason,
        }
        .into()
    };
    spec.cols
        .iter()
        .map(|(name, _, kind)| {
            let v = obj.get(*name).unwrap_or(&Json::Null);
            Ok(match kind {
                Col::Text => Cell::Text(Some(
                    v.as_str()
                        .ok_or_else(|| bad(format!("{name} must be a string")))?
                        .to_owned(),
                )),
                Col::OptText => match v {
                    Json::Null => Cell::Text(None),
                    Json::String(s) => Cell::Text(Some(s.clone())),
                    _ => return Err(bad(format!("{name} must be a string or null"))),
                },
                Col::Int => Cell::Int(
                    v.as_i64()
                        .ok_or_else(|| bad(format!("{name} must be an integer")))?,
                ),
                Col::Bytes | Col::Jsonb => match v {
                    Json::Null => Cell::Bytes(None),
                    Json::String(s) => Cell::Bytes(Some(
                        B64.decode(s)
                            .map_err(|e| bad(format!("{name} is not base64: {e}")))?,
                    )),
                    _ => return Err(bad(format!("{name} must be base64 text or null"))),
                },
            })
        })
        .collect()
}

pub(super) fn key_text(c: &[Cell], keys: usize) -> Vec<String> {
    c.iter()
        .take(keys)
        .map(|c| match c {
            Cell::Text(s) => s.clone().unwrap_or_default(),
            Cell::Int(i) => i.to_string(),
            Cell::Bytes(_) => String::new(),
        })
        .collect()
}

/// A backup file read row by row: its header checked when opened, each row checked as
/// it is read, the `end` line's counts and what follows it checked at the end.
pub(super) struct BackupRows<'r> {
    lines: JsonlReader<&'r mut dyn BufRead>,
    file: String,
    /// The header's `backend`.
    pub backend: String,
    /// The header's `layout`.
    pub layout: String,
    /// The header's thread list (`None`: every thread).
    pub threads: Option<Vec<String>>,
    /// The threads the header says were left out (`excluded_threads`).
    pub excluded: BTreeSet<String>,
    /// The reader's own selection ([`select`](Self::select)): rows of other threads
    /// are read, checked and counted in [`skipped`](Self::skipped), not returned.
    take: Option<HashSet<String>>,
    leave: BTreeSet<String>,
    /// Rows the selection skipped.
    pub skipped: u64,
    /// The threads the selection names (to take or to leave) that a row was seen of.
    named_seen: BTreeSet<String>,
    specs: Vec<Spec>,
    wanted: Vec<&'static str>,
    only: Option<HashSet<String>>,
    /// Rows read, by kind: checkpoints, blobs, writes.
    pub held: [u64; 3],
    /// The file ended with its `end` line, whose counts match.
    pub complete: bool,
    /// Where the file was cut short, when its last line is a partial row.
    pub cut_short: Option<String>,
}

impl<'r> BackupRows<'r> {
    /// Reads and checks the header.
    ///
    /// # Errors
    /// [`ErrorKind::Backup`](crate::ErrorKind::Backup): an empty file, not this format or version, a
    /// LangGraph 0.1 export, a SQLite database (a store named where its backup goes).
    pub(super) fn open(
        input: &'r mut dyn BufRead,
        file: &str,
        max_line_bytes: Option<usize>,
    ) -> Result<Self> {
        // A store given where the backup goes (`import STORE FILE` for `import FILE
        // STORE`) is said to be one, not a line that is "not UTF-8 at byte 102".
        if input
            .fill_buf()
            .is_ok_and(|head| head.starts_with(crate::saver::layout::SQLITE_HEADER))
        {
            return Err(StoreFault::Backup {
                file: file.to_owned(),
                reason: "this is a SQLite database, not a backup file: `lgcodec store export STORE FILE` writes a backup; an import takes the backup first (lgcodec store import BACKUP STORE)".to_owned(),
            }
            .into());
        }
        let mut lines = JsonlReader::new(
            input,
            max_line_bytes.unwrap_or(DEFAULT_MAX_BACKUP_LINE_BYTES),
        );
        let at = |n: u64| format!("{file}:{n}");
        let bad = |n: u64, reason: String| -> Error {
            StoreFault::Backup {
                file: at(n),
                reason,
            }
            .into()
        };
        let header: Map<String, Json> = match lines.next_line().map_err(io_err(file))? {
            Some((n, line)) => {
                let l = line_text(&at(n), line)?.unwrap_or_default();
                parse_fields(&l, &HEADER_FIELDS)
                    .map_err(|e| bad(1, format!("not a backup header: {e}")))?
            }
            None => {
                return Err(StoreFault::Backup {
                    file: file.to_owned(),
                    reason: "empty file".to_owned(),
                }
                .into())
            }
        };
        let field = |name: &str| header.get(name).cloned().unwrap_or(Json::Null);
        if field("format") != BACKUP_FORMAT || field("version") != BACKUP_VERSION {
            return Err(bad(
                1,
                format!(
                    "not a {BACKUP_FORMAT} version {BACKUP_VERSION} file (format {}, version {})",
                    field("format"),
                    field("version")
                ),
            ));
        }
        let layout = field("layout").as_str().unwrap_or_default().to_owned();
        if layout.starts_with("LangGraph 0.1") {
            return Err(bad(1, "a LangGraph 0.1 (thread_ts) store's rows are JSON of another shape: use `store copy` from the old store to upgrade it".to_owned()));
        }
        let backend = match field("backend").as_str() {
            Some(b @ ("sqlite" | "postgres")) => b.to_owned(),
            _ => {
                return Err(bad(
                    1,
                    format!(
                        "the header's backend is {}, not sqlite or postgres",
                        field("backend")
                    ),
                ))
            }
        };
        let specs = specs(&Cols::current(true), backend == "postgres", false);
        // The fields a row line may have: the kind, every table's columns, the end counts.
        let mut wanted: Vec<&'static str> = vec!["t", "checkpoints", "blobs", "writes"];
        for spec in &specs {
            for (name, _, _) in &spec.cols {
                if !wanted.contains(name) {
                    wanted.push(name);
                }
            }
        }
        let names = |name: &str| -> Option<Vec<String>> {
            field(name).as_array().map(|a| {
                a.iter()
                    .filter_map(|t| t.as_str().map(str::to_owned))
                    .collect()
            })
        };
        let threads = names("threads");
        let excluded = names("excluded_threads")
            .unwrap_or_default()
            .into_iter()
            .collect();
        Ok(BackupRows {
            lines,
            file: file.to_owned(),
            backend,
            layout,
            only: threads.as_ref().map(|t| t.iter().cloned().collect()),
            threads,
            excluded,
            take: None,
            leave: BTreeSet::new(),
            skipped: 0,
            named_seen: BTreeSet::new(),
            specs,
            wanted,
            held: [0; 3],
            complete: false,
            cut_short: None,
        })
    }

    /// Only the rows of `threads` (none: every thread) less those of `except`; the
    /// others are still read and checked (the file is verified whole), then skipped.
    pub(super) fn select(&mut self, threads: &[String], except: &BTreeSet<String>) {
        self.take = (!threads.is_empty()).then(|| threads.iter().cloned().collect());
        self.leave.clone_from(except);
    }

    /// The threads the selection names that no row read so far belongs to (once the
    /// file was read whole: the threads the file does not hold).
    pub(super) fn named_unseen(&self) -> Vec<String> {
        let named = self.take.iter().flatten().chain(&self.leave);
        let unseen: BTreeSet<&String> = named.filter(|t| !self.named_seen.contains(*t)).collect();
        unseen.into_iter().cloned().collect()
    }

    /// The tables of the header's backend, in file order.
    pub(super) fn specs(&self) -> &[Spec] {
        &self.specs
    }

    /// The next row: its table (an index into [`specs`](Self::specs)) and cells;
    /// `None` at the end (then [`complete`](Self::complete) or
    /// [`cut_short`](Self::cut_short) says how it ended, or neither for a file without
    /// its `end` line).
    ///
    /// # Errors
    /// [`ErrorKind::Backup`](crate::ErrorKind::Backup) naming the line: malformed, of an unknown kind, a cell
    /// of the wrong type, a thread the header does not list, `end` counts that differ
    /// from the rows, data after the `end` line.
    pub(super) fn next_row(&mut self) -> Result<Option<(usize, Vec<Cell>)>> {
        loop {
            let Some((n, line)) = self.lines.next_line().map_err(io_err(&self.file))? else {
                return Ok(None);
            };
            let at = format!("{}:{n}", self.file);
            let bad = |reason: String| -> Error {
                StoreFault::Backup {
                    file: at.clone(),
                    reason,
                }
                .into()
            };
            let Some(l) = line_text(&at, line)? else {
                continue;
            };
            let obj = match parse_fields(&l, &self.wanted) {
                Ok(obj) => obj,
                // The last line, not whole: the file was cut short there (a copy or a
                // download that stopped). What came before is whole; the caller says so.
                Err(e)
                    if e.is_eof()
                        && self
                            .lines
                            .next_line()
                            .map_err(io_err(&self.file))?
                            .is_none() =>
                {
                    self.cut_short = Some(format!("{at}: a partial row ({e})"));
                    return Ok(None);
                }
                Err(e) => return Err(bad(e.to_string())),
            };
            let kind = obj.get("t").and_then(Json::as_str).unwrap_or_default();
            if kind == "end" {
                let said = ["checkpoints", "blobs", "writes"]
                    .map(|k| obj.get(k).and_then(Json::as_u64).unwrap_or(0));
                let held = self.held;
                if said != held {
                    return Err(bad(format!(
                        "the end line counts {} checkpoint(s), {} blob(s), {} write(s) but the file holds {}, {}, {}: rows were lost or added (the rows before it were read; an import has imported them)",
                        said[0], said[1], said[2], held[0], held[1], held[2]
                    )));
                }
                // Nothing may follow the end line: two backups concatenated would be
                // read as the first alone.
                while let Some((m, next)) = self.lines.next_line().map_err(io_err(&self.file))? {
                    let at = format!("{}:{m}", self.file);
                    if line_text(&at, next)?.is_some() {
                        return Err(StoreFault::Backup {
                            file: at,
                            reason: "data after the end line (two backups concatenated?): use each file on its own (the rows before it were read; an import has imported them)".to_owned(),
                        }
                        .into());
                    }
                }
                self.complete = true;
                return Ok(None);
            }
            let thread = obj
                .get("thread_id")
                .and_then(Json::as_str)
                .unwrap_or_default();
            let shown = || thread.chars().take(80).collect::<String>();
            if self
                .only
                .as_ref()
                .is_some_and(|only| !only.contains(thread))
            {
                return Err(bad(format!(
                    "a row of thread {:?}, which the header's thread list does not name: not from this backup",
                    shown()
                )));
            }
            if self.excluded.contains(thread) {
                return Err(bad(format!(
                    "a row of thread {:?}, which the header says was left out (excluded_threads): not from this backup",
                    shown()
                )));
            }
            let Some(i) = self.specs.iter().position(|s| s.kind == kind) else {
                return Err(bad(format!(
                    "unknown row kind {:?} for a {} store",
                    kind.chars().take(40).collect::<String>(),
                    self.backend
                )));
            };
            let Some(spec) = self.specs.get(i) else {
                continue;
            };
            let row = cells(spec, &obj, &at)?;
            if let Some(c) = self.held.get_mut(spec.count_slot()) {
                *c += 1;
            }
            let taken = self.take.as_ref().map(|t| t.contains(thread));
            let left = self.leave.contains(thread);
            if (taken == Some(true) || left) && !self.named_seen.contains(thread) {
                self.named_seen.insert(thread.to_owned());
            }
            if taken == Some(false) || left {
                self.skipped += 1;
                continue;
            }
            return Ok(Some((i, row)));
        }
    }
}

/// What [`verify_backup`] found in a backup file.
#[derive(Clone, Debug, Default, Serialize, PartialEq)]
#[non_exhaustive]
pub struct BackupCheck {
    /// `verify`.
    pub operation: &'static str,
    /// The file.
    pub file: String,
    /// The header's backend (`sqlite` or `postgres`).
    pub backend: String,
    /// The header's layout (of the store it was exported from).
    pub layout: String,
    /// The header's thread list (`None`: the whole store).
    pub threads: Option<Vec<String>>,
    /// The threads the header says were left out (`excluded_threads`), in order.
    pub excluded_threads: Vec<String>,
    /// Checkpoint rows.
    pub checkpoints: u64,
    /// Blob rows (Postgres).
    pub blobs: u64,
    /// Write rows.
    pub writes: u64,
    /// The file ends with its `end` line, whose counts match the rows.
    pub complete: bool,
    /// Where it was cut short, when its last line is a partial row.
    pub cut_short: Option<String>,
    /// Seconds.
    pub elapsed_s: f64,
}

/// Reads a whole backup file without a store: the header, every row (each line parses,
/// each cell has its column's type and base64 decodes, each thread is one the header
/// lists), the `end` line's counts and nothing after it. Memory holds one line.
///
/// # Errors
/// [`ErrorKind::Backup`](crate::ErrorKind::Backup) for a malformed file, naming the line. A file without its
/// `end` line, or cut mid-line, is not an error: [`BackupCheck::complete`] is false
/// (and [`BackupCheck::cut_short`] says where).
pub fn verify_backup(
    input: &mut dyn BufRead,
    file: &str,
    max_line_bytes: Option<usize>,
) -> Result<BackupCheck> {
    let started = Instant::now();
    let mut rows = BackupRows::open(input, file, max_line_bytes)?;
    while rows.next_row()?.is_some() {}
    Ok(BackupCheck {
        operation: "verify",
        file: file.to_owned(),
        backend: rows.backend.clone(),
        layout: rows.layout.clone(),
        threads: rows.threads.clone(),
        excluded_threads: rows.excluded.iter().cloned().collect(),
        checkpoints: rows.held[0],
        blobs: rows.held[1],
        writes: rows.held[2],
        complete: rows.complete,
        cut_short: rows.cut_short.clone(),
        elapsed_s: started.elapsed().as_secs_f64(),
    })
}

#[cfg(test)]
mod tests {
    use super::io_err;
    use crate::ErrorKind;
    use std::io;

    /// A backup write that met a full disk or a spent quota is `DiskFull`, saying so and
    /// what to do; any other failure stays `Backup`. Both name the file.
    #[test]
    fn a_full_disk_under_a_backup_is_said_as_such() {
        for (failure, kind) in [
            (io::ErrorKind::StorageFull, ErrorKind::DiskFull),
            (io::ErrorKind::QuotaExceeded, ErrorKind::DiskFull),
            (io::ErrorKind::PermissionDenied, ErrorKind::Backup),
            (io::ErrorKind::BrokenPipe, ErrorKind::Backup),
        ] {
            let e = io_err("b.jsonl")(io::Error::from(failure));
            assert_eq!(e.kind(), kind, "{failure:?}: {e}");
            assert_eq!(e.subject(), Some("b.jsonl"));
            assert_eq!(
                e.to_string().contains("the disk is full"),
                kind == ErrorKind::DiskFull,
                "{e}"
            );
        }
    }
}
