//! [`export`]: a streaming backup file of a store's rows exactly as stored.
//!
//! **Format** `lgcodec-store-backup`, version 1: JSON Lines (UTF-8, one object a line).
//!
//! 1. A header: `{"format": "lgcodec-store-backup", "version": 1, "backend": "sqlite" |
//!    "postgres", "layout": "<the layout found>", "threads": null | ["id", …]}`, and
//!    `"excluded_threads": ["id", …]` when threads were left out (a reader that does
//!    not know the field skips it).
//! 2. One line per row, tables in this order, each in primary-key order:
//!    - `{"t": "checkpoint", "thread_id", "checkpoint_ns", "checkpoint_id",
//!      "parent_checkpoint_id", "type", "checkpoint", "metadata"}` — SQLite: the
//!      `checkpoint` and `metadata` cells' bytes; Postgres: the JSONB text's UTF-8
//!      bytes. Bytes are standard base64; a NULL cell is `null`.
//!    - `{"t": "blob", "thread_id", "checkpoint_ns", "channel", "version", "type",
//!      "blob"}` (Postgres only).
//!    - `{"t": "write", "thread_id", "checkpoint_ns", "checkpoint_id", "task_id",
//!      "task_path", "idx", "channel", "type", "value"}`.
//! 3. A footer: `{"t": "end", "checkpoints": n, "blobs": n, "writes": n}`; a file
//!    without it was cut short, and [`import`](fn@super::import) says so after
//!    restoring what it holds.
//!
//! Type tags and bytes are the stored ones: encrypted rows stay encrypted, and an
//! export of an import of an export is the same file. Old layouts export under
//! today's column names (LangGraph 0.1's `thread_ts` as `checkpoint_id`, a missing
//! `task_path` as `""`); the header names the layout they came from.
//!
//! [`import`](fn@super::import) restores such a file (`store/import.rs`).

use std::io::Write;
use std::ops::ControlFlow;
use std::time::Instant;

use base64::engine::general_purpose::STANDARD as B64;
use base64::Engine as _;
use serde::Serialize;
use serde_json::{json, Value as Json};

use super::backend::{ph, Col, Spec};
use super::backup::{io_err, specs, BACKUP_FORMAT, BACKUP_VERSION};
use super::engine::Engine;
use super::error::StoreFault;
use super::inspect::AnyStore;
use super::ops::DEFAULT_PAGE_BYTES;
use super::options::{run_setters, RunOptions};
use super::raw::{Param, Raw, Result};

/// What the export's output is called in its errors.
const OUTPUT: &str = "(output)";

/// `serde_json` failing to print a line of the output.
fn print_failed(e: serde_json::Error) -> crate::Error {
    StoreFault::Backup {
        file: OUTPUT.to_owned(),
        reason: e.to_string(),
    }
    .into()
}

/// `text` as a JSON string, escaped as `serde_json` escapes it.
fn push_str(line: &mut Vec<u8>, text: &str) -> Result<()> {
    serde_json::to_writer(&mut *line, text).map_err(print_failed)
}

/// A cell's bytes as a JSON string of their standard base64 (whose characters JSON
/// never escapes), or `null`.
fn push_b64(line: &mut Vec<u8>, bytes: Option<&[u8]>) {
    let Some(bytes) = bytes else {
        line.extend_from_slice(b"null");
        return;
    };
    line.push(b'"');
    let start = line.len();
    // Encoded in place; should the length not fit a usize, through a string.
    let encoded = base64::encoded_len(bytes.len(), true).and_then(|n| {
        line.resize(start.checked_add(n)?, 0);
        B64.encode_slice(bytes, line.get_mut(start..)?).ok()
    });
    match encoded {
        Some(written) => line.truncate(start + written),
        None => {
            line.truncate(start);
            line.extend_from_slice(B64.encode(bytes).as_bytes());
        }
    }
    line.push(b'"');
}

/// `SELECT cols FROM table WHERE [thread_id = ? AND] [(keys) > (?…)] ORDER BY keys LIMIT n`,
/// the first `after` key columns compared (none: from the start; the thread alone: past
/// that thread's rows); on Postgres also only the rows whose preceding rows' values hold
/// fewer bytes than the parameter after the limit (SQLite's reader stops at the budget
/// itself).
fn page_sql(spec: &Spec, sqlite: bool, thread: bool, after: usize) -> String {
    let exprs: Vec<&str> = spec.cols.iter().map(|c| c.1).collect();
    let keys: Vec<&str> = exprs.iter().take(spec.keys).copied().collect();
    let plain = page_sql_uncapped(spec, sqlite, thread, after, &exprs, &keys);
    if sqlite {
        return plain;
    }
    // Each row's value bytes: `octet_length` of a bytea and `pg_column_size` of a
    // JSONB column are read from the stored value's header (no detoasting); the JSONB
    // size is the stored, possibly compressed, one.
    let lens: Vec<String> = spec
        .cols
        .iter()
        .filter_map(|(name, expr, kind)| match kind {
            Col::Bytes => Some(format!("coalesce(octet_length({expr}), 0)")),
            Col::Jsonb => Some(format!("coalesce(pg_column_size({name}), 0)")),
            _ => None,
        })
        .collect();
    let len = if lens.is_empty() {
        "0".to_owned()
    } else {
        lens.join(" + ")
    };
    let aliased: Vec<String> = exprs
        .iter()
        .enumerate()
        .map(|(i, e)| format!("{e} AS lg_c{i}"))
        .collect();
    let columns = format!(
        "{}, ({len})::int8 AS lg_len, (sum(({len})::int8) OVER (ORDER BY {}))::int8 AS lg_upto",
        aliased.join(", "),
        keys.join(", ")
    );
    let inner = page_sql_uncapped(spec, sqlite, thread, after, &[columns.as_str()], &keys);
    let outer: Vec<String> = (0..exprs.len()).map(|i| format!("lg_c{i}")).collect();
    let budget = ph(sqlite, usize::from(thread) + after + 2);
    format!(
        "SELECT {} FROM ({inner}) lg_page WHERE lg_upto - lg_len < {budget} ORDER BY {}",
        outer.join(", "),
        outer
            .iter()
            .take(spec.keys)
            .cloned()
            .collect::<Vec<_>>()
            .join(", ")
    )
}

fn page_sql_uncapped(
    spec: &Spec,
    sqlite: bool,
    thread: bool,
    after: usize,
    exprs: &[&str],
    keys: &[&str],
) -> String {
    let mut conds = Vec::new();
    let mut n = 0;
    if thread {
        n += 1;
        conds.push(format!("thread_id = {}", ph(sqlite, n)));
    }
    if after > 0 {
        let after = after.min(keys.len());
        let params: Vec<String> = (0..after).map(|i| ph(sqlite, n + i + 1)).collect();
        n += after;
        conds.push(format!(
            "({}) > ({})",
            keys.get(..after).unwrap_or(keys).join(", "),
            params.join(", ")
        ));
    }
    format!(
        "SELECT {} FROM {}{} ORDER BY {} LIMIT {}",
        exprs.join(", "),
        spec.table,
        if conds.is_empty() {
            String::new()
        } else {
            format!(" WHERE {}", conds.join(" AND "))
        },
        keys.join(", "),
        ph(sqlite, n + 1)
    )
}

/// A key part for the next page's parameters.
#[derive(Clone, Debug)]
enum Part {
    Text(String),
    Int(i64),
}

/// Up to `limit` rows of `spec`'s table (of `thread`, after the key `after` or, given
/// the thread alone, after that thread's rows), each as
/// its backup line without the newline, with its key: `{"t": kind, column: value, …}`
/// in the spec's column order, byte for byte what `serde_json` prints for that object
/// (text escaped by it, bytes as base64, integers in decimal). Written here rather
/// than built as a `serde_json` map and printed: measured 2026-12-02, 100,000
/// checkpoints from SQLite, building the maps (hashing every key) and escaping the
/// base64 text were a third of the export's samples.
async fn page(
    raw: &Raw,
    spec: &Spec,
    thread: Option<&str>,
    after: Option<&[Part]>,
    limit: usize,
    max_bytes: usize,
) -> Result<Vec<(Vec<u8>, Vec<Part>)>> {
    let sqlite = raw.is_sqlite();
    let sql = page_sql(
        spec,
        sqlite,
        thread.is_some(),
        after.map_or(0, <[Part]>::len),
    );
    // Value bytes of one page at most (the first row always goes).
    let max_bytes = i64::try_from(max_bytes).unwrap_or(i64::MAX);
    let mut params: Vec<Param<'_>> = Vec::new();
    if let Some(t) = thread {
        params.push(Param::from(t));
    }
    params.extend(after.unwrap_or_default().iter().map(|p| match p {
        Part::Text(s) => Param::from(s.as_str()),
        Part::Int(i) => Param::Int(*i),
    }));
    params.push(Param::Int(i64::try_from(limit).unwrap_or(i64::MAX)));
    if !sqlite {
        // Postgres sends no row past the budget (`page_sql`).
        params.push(Param::Int(max_bytes));
    }
    let mut rows = Vec::new();
    let mut bytes = 0i64;
    // Each line is written here, then kept as an exact copy: a line grown in place
    // ends with up to twice the room it needs (a vector's capacity doubles), and a
    // page holds hundreds of them.
    let mut line = Vec::with_capacity(256);
    raw.each_row("export", &sql, &params, |mut r| {
        // SQLite steps one row at a time: the page ends at the byte budget.
        if sqlite && bytes >= max_bytes {
            return Ok(ControlFlow::Break(()));
        }
        line.clear();
        line.extend_from_slice(b"{\"t\":");
        push_str(&mut line, spec.kind)?;
        let mut key = Vec::new();
        let mut len = 0usize;
        for (i, (name, _, kind)) in spec.cols.iter().enumerate() {
            line.push(b',');
            push_str(&mut line, name)?;
            line.push(b':');
            match kind {
                Col::Text | Col::OptText => {
                    let s = if *name == "thread_id" {
                        r.take_thread(i)?
                    } else {
                        r.take_opt_text(i)?
                    };
                    match &s {
                        Some(s) => push_str(&mut line, s)?,
                        None => line.extend_from_slice(b"null"),
                    }
                    if i < spec.keys {
                        key.push(Part::Text(s.unwrap_or_default()));
                    }
                }
                Col::Int => {
                    let n = r.int(i)?;
                    key.push(Part::Int(n));
                    line.extend_from_slice(n.to_string().as_bytes());
                }
                Col::Bytes | Col::Jsonb => {
                    let cell = r.take_bytes(i);
                    len = len.saturating_add(cell.as_ref().map_or(0, Vec::len));
                    push_b64(&mut line, cell.as_deref());
                }
            }
        }
        line.push(b'}');
        bytes = bytes.saturating_add(i64::try_from(len).unwrap_or(i64::MAX));
        rows.push((line.as_slice().to_vec(), key));
        Ok(ControlFlow::Continue(()))
    })
    .await?;
    Ok(rows)
}

/// Options of [`export`].
#[derive(Clone, Debug, Default)]
pub struct ExportOptions {
    run: RunOptions,
}

impl ExportOptions {
    /// Every thread, pages of 500 rows and at most [`DEFAULT_PAGE_BYTES`] of values, no
    /// rate limit.
    pub fn new() -> Self {
        Self::default()
    }
}

run_setters!(ExportOptions {
    /// Only these threads (none given: every thread).
    threads;
    /// Not these threads, whatever else selects them: their rows are not written, and
    /// the header lists them (`excluded_threads`), so that [`verify_backup`] and
    /// [`import`](fn@super::import) refuse a row of theirs. Of each table, one row of
    /// such a thread is read, and the reading goes on past the thread's rows.
    ///
    /// [`verify_backup`]: super::verify_backup
    exclude_threads;
    /// Rows read per query (at least 1).
    page_size(rows);
    /// Bytes of stored values read per query at most (a larger row is read alone):
    /// what bounds the export's memory.
    page_bytes(bytes);
    /// At most this many rows read per second, on average (0 or `None`: no limit):
    /// spares a busy store. The export's snapshot stays open the longer (on Postgres,
    /// one read transaction: `VACUUM` cannot clean rows deleted meanwhile).
    max_rows_per_sec;
    /// Called after each page.
    on_progress;
});

/// What [`export`] wrote.
#[derive(Clone, Debug, Serialize, PartialEq)]
#[non_exhaustive]
pub struct ExportReport {
    /// `export`.
    pub operation: &'static str,
    /// The store.
    pub store: String,
    /// `sqlite` or `postgres`.
    pub backend: &'static str,
    /// The layout found.
    pub layout: String,
    /// Checkpoint rows written.
    pub checkpoints: u64,
    /// Blob rows written.
    pub blobs: u64,
    /// Write rows written.
    pub writes: u64,
    /// Bytes of the file.
    pub bytes: u64,
    /// The threads left out ([`ExportOptions::exclude_threads`]), in order.
    pub excluded_threads: Vec<String>,
    /// Seconds.
    pub elapsed_s: f64,
}

/// Writes the rows of `store` (every thread, or those of
/// [`ExportOptions::threads`]) to `out` in the backup format, page by page: memory
/// does not grow with the store.
///
/// # Errors
/// [`ErrorKind::Backup`](crate::ErrorKind::Backup) if `out` fails; the database's errors.
pub async fn export(
    store: &AnyStore,
    out: &mut dyn Write,
    options: &ExportOptions,
) -> Result<ExportReport> {
    // One read transaction for the whole file: a backup is one point in time, whatever
    // Python or a prune commits meanwhile.
    // Everything is read on the store's own connection: the snapshot is not shared.
    store.raw.begin_snapshot(false).await?;
    let report = export_snapshot(&store.raw, out, options).await;
    store.raw.end_snapshot().await;
    report
}

async fn export_snapshot(
    raw: &Raw,
    out: &mut dyn Write,
    options: &ExportOptions,
) -> Result<ExportReport> {
    let started = Instant::now();
    // Before a line is written: a mistyped thread id exports nothing.
    raw.refuse_absent_threads("export", &options.run.named_threads())
        .await?;
    let file = OUTPUT;
    let mut written = 0u64;
    let mut line = |out: &mut dyn Write, text: &[u8]| -> Result<()> {
        out.write_all(text).map_err(io_err(file))?;
        out.write_all(b"\n").map_err(io_err(file))?;
        written = written.saturating_add(text.len() as u64 + 1);
        Ok(())
    };
    let json_line = |v: &Json| serde_json::to_vec(v).map_err(print_failed);
    // The threads named and not left out, or every thread (`None`); of a thread left
    // out, the first row a page meets is read, and the page after starts past it.
    let except = &options.run.except_threads;
    let threads: Vec<Option<&str>> = options
        .run
        .thread_filter()
        .into_iter()
        .filter(|t| t.is_none_or(|t| !except.contains(t)))
        .collect();
    let mut header = json!({
        "format": BACKUP_FORMAT,
        "version": BACKUP_VERSION,
        "backend": raw.backend(),
        "layout": raw.layout().to_string(),
        "threads": if options.run.threads.is_empty() { Json::Null } else { json!(threads) },
    });
    // Said only when some are left out: an export without them is the file it was.
    if let (false, Some(fields)) = (except.is_empty(), header.as_object_mut()) {
        fields.insert("excluded_threads".to_owned(), json!(except));
    }
    line(out, &json_line(&header)?)?;
    let mut counts = [0u64; 3];
    let page_size = options.run.page_size.unwrap_or(500);
    let page_bytes = options.run.page_bytes.unwrap_or(DEFAULT_PAGE_BYTES);
    // The pace and progress; no reconnect: a backup is one read transaction, one
    // point in time, which a new connection would not continue.
    let mut engine = Engine::new("export", "rows", &options.run);
    for spec in specs(&raw.cols(), !raw.is_sqlite(), true) {
        let slot = spec.count_slot();
        for thread in &threads {
            let mut after: Option<Vec<Part>> = None;
            loop {
                let rows =
                    page(raw, &spec, *thread, after.as_deref(), page_size, page_bytes).await?;
                let Some((_, last)) = rows.last() else { break };
                let mut next = last.clone();
                let mut n = 0u64;
                for (row, key) in rows {
                    // Every table's key begins with its thread: a thread left out is
                    // passed over whole, its rows after this one not read.
                    if let Some(Part::Text(t)) = key.first().filter(|_| !except.is_empty()) {
                        if except.contains(t) {
                            next = vec![Part::Text(t.clone())];
                            break;
                        }
                    }
                    line(out, &row)?;
                    n += 1;
                }
                if let Some(c) = counts.get_mut(slot) {
                    *c += n;
                }
                engine.batch_done(spec.table, n, 0, None).await;
                // A page cut at the byte budget is shorter than `page_size` with rows
                // still after it: the next page, empty, ends the table.
                after = Some(next);
            }
        }
    }
    line(
        out,
        &json_line(
            &json!({"t": "end", "checkpoints": counts[0], "blobs": counts[1], "writes": counts[2]}),
        )?,
    )?;
    out.flush().map_err(io_err(file))?;
    Ok(ExportReport {
        operation: "export",
        store: raw.shown().to_owned(),
        backend: raw.backend(),
        layout: raw.layout().to_string(),
        checkpoints: counts[0],
        blobs: counts[1],
        writes: counts[2],
        bytes: written,
        excluded_threads: except.iter().cloned().collect(),
        elapsed_s: started.elapsed().as_secs_f64(),
    })
}
