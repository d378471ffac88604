//! [`export`] and [`import`]: a streaming backup file of a store's rows exactly as
//! stored, and its restore.
//!
//! **Format** `lgcodec-store-backup`, version 1: JSON Lines (UTF-8, one object a line).
//!
//! 1. A header: `{"format": "lgcodec-store-backup", "version": 1, "backend": "sqlite" |
//!    "postgres", "layout": "<the layout found>", "threads": null | ["id", …]}`.
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
//!    without it was cut short, and [`import`] says so after restoring what it holds.
//!
//! Type tags and bytes are the stored ones: encrypted rows stay encrypted, and an
//! export of an import of an export is the same file. Old layouts export under
//! today's column names (LangGraph 0.1's `thread_ts` as `checkpoint_id`, a missing
//! `task_path` as `""`); the header names the layout they came from.
//!
//! [`import`] restores into a store of the same backend (use [`copy`](super::copy)
//! between backends): an empty target first gets Python's tables from the saver's own
//! `setup()`. Each row is inserted only if its key is free; a row already there with
//! the same columns is skipped, one with other columns is reported and left alone
//! (never overwritten). Batches of rows are committed one transaction each, so an
//! import stopped anywhere is resumed by running it again.

use std::io::{BufRead, Write};
use std::sync::Arc;
use std::time::Instant;

use base64::engine::general_purpose::STANDARD as B64;
use base64::Engine as _;
use serde::Serialize;
use serde_json::{json, Map, Value as Json};
use tokio_postgres::types::ToSql;

use super::backup::{
    io_err, key_text, specs, BackupRows, Cell, Col, Spec, BACKUP_FORMAT, BACKUP_VERSION,
};
use super::error::StoreFault;
use super::inspect::AnyStore;
use super::ops::{Progress, ProgressFn, Stage, DEFAULT_PAGE_BYTES};
use super::raw::{cell_bytes, pg, pg_connect, ph, sq, Raw, Result};
use super::Location;
use crate::saver::layout::StoreLayout;
use crate::saver::postgres::PostgresSaver;
use crate::saver::sqlite::SqliteSaver;

fn b64(bytes: Option<Vec<u8>>) -> Json {
    bytes.map_or(Json::Null, |b| Json::String(B64.encode(b)))
}

/// `SELECT cols FROM table WHERE [thread_id = ? AND] [(keys) > (?…)] ORDER BY keys LIMIT n`;
/// on Postgres also only the rows whose preceding rows' values hold fewer bytes than the
/// parameter after the limit (SQLite's reader stops at the budget itself).
fn page_sql(spec: &Spec, sqlite: bool, thread: bool, after: bool) -> String {
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
    let budget = ph(
        sqlite,
        usize::from(thread) + if after { spec.keys } else { 0 } + 2,
    );
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
    after: bool,
    exprs: &[&str],
    keys: &[&str],
) -> String {
    let mut conds = Vec::new();
    let mut n = 0;
    if thread {
        n += 1;
        conds.push(format!("thread_id = {}", ph(sqlite, n)));
    }
    if after {
        let params: Vec<String> = (0..spec.keys).map(|i| ph(sqlite, n + i + 1)).collect();
        n += spec.keys;
        conds.push(format!("({}) > ({})", keys.join(", "), params.join(", ")));
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

async fn page(
    raw: &Raw,
    spec: &Spec,
    thread: Option<&str>,
    after: Option<&[Part]>,
    limit: usize,
    max_bytes: usize,
) -> Result<Vec<(Map<String, Json>, Vec<Part>)>> {
    let sqlite = matches!(raw, Raw::Sqlite { .. });
    let sql = page_sql(spec, sqlite, thread.is_some(), after.is_some());
    // Value bytes of one page at most (the first row always goes).
    let max_bytes = i64::try_from(max_bytes).unwrap_or(i64::MAX);
    let mut params: Vec<Part> = Vec::new();
    if let Some(t) = thread {
        params.push(Part::Text(t.to_owned()));
    }
    params.extend(after.unwrap_or_default().iter().cloned());
    let limit = i64::try_from(limit).unwrap_or(i64::MAX);
    match raw {
        Raw::Sqlite { conn, .. } => {
            let mut values: Vec<rusqlite::types::Value> = params
                .iter()
                .map(|p| match p {
                    Part::Text(s) => rusqlite::types::Value::Text(s.clone()),
                    Part::Int(i) => rusqlite::types::Value::Integer(*i),
                })
                .collect();
            values.push(rusqlite::types::Value::Integer(limit));
            let mut stmt = conn.prepare_cached(&sql).map_err(sq("export"))?;
            let mut bytes = 0i64;
            let mut cursor = stmt
                .query_map(rusqlite::params_from_iter(values), |r| {
                    let mut m = Map::new();
                    let mut key = Vec::new();
                    let mut len = 0usize;
                    for (i, (name, _, kind)) in spec.cols.iter().enumerate() {
                        let v = match kind {
                            Col::Text | Col::OptText => {
                                let s: Option<String> = r.get(i)?;
                                if i < spec.keys {
                                    key.push(Part::Text(s.clone().unwrap_or_default()));
                                }
                                s.map_or(Json::Null, Json::String)
                            }
                            Col::Int => {
                                let n: i64 = r.get(i)?;
                                key.push(Part::Int(n));
                                Json::from(n)
                            }
                            Col::Bytes | Col::Jsonb => {
                                let cell = cell_bytes(r, i)?;
                                len = len.saturating_add(cell.as_ref().map_or(0, Vec::len));
                                b64(cell)
                            }
                        };
                        m.insert((*name).to_owned(), v);
                    }
                    Ok((m, key, len))
                })
                .map_err(sq("export"))?;
            // SQLite steps one row at a time: the page ends at the byte budget.
            let mut rows = Vec::new();
            while bytes < max_bytes {
                let Some(row) = cursor.next() else { break };
                let (m, key, len) = row.map_err(sq("export"))?;
                bytes = bytes.saturating_add(i64::try_from(len).unwrap_or(i64::MAX));
                rows.push((m, key));
            }
            Ok(rows)
        }
        Raw::Postgres { client, .. } => {
            let mut boxed: Vec<Box<dyn ToSql + Sync + Send>> = params
                .iter()
                .map(|p| -> Box<dyn ToSql + Sync + Send> {
                    match p {
                        Part::Text(s) => Box::new(s.clone()),
                        Part::Int(i) => Box::new(i32::try_from(*i).unwrap_or(i32::MAX)),
                    }
                })
                .collect();
            boxed.push(Box::new(limit));
            boxed.push(Box::new(max_bytes));
            let refs: Vec<&(dyn ToSql + Sync)> =
                boxed.iter().map(|p| &**p as &(dyn ToSql + Sync)).collect();
            let rows = client.query(&sql, &refs).await.map_err(pg("export"))?;
            let mut out = Vec::with_capacity(rows.len());
            // Each server row is dropped once converted.
            for r in rows {
                let r = &r;
                let mut m = Map::new();
                let mut key = Vec::new();
                for (i, (name, _, kind)) in spec.cols.iter().enumerate() {
                    let v = match kind {
                        Col::Text | Col::OptText => {
                            let s: Option<String> = r.try_get(i).map_err(pg("export"))?;
                            if i < spec.keys {
                                key.push(Part::Text(s.clone().unwrap_or_default()));
                            }
                            s.map_or(Json::Null, Json::String)
                        }
                        Col::Int => {
                            let n: i32 = r.try_get(i).map_err(pg("export"))?;
                            key.push(Part::Int(i64::from(n)));
                            Json::from(n)
                        }
                        Col::Bytes => b64(r.try_get(i).map_err(pg("export"))?),
                        Col::Jsonb => b64(r
                            .try_get::<_, Option<String>>(i)
                            .map_err(pg("export"))?
                            .map(String::into_bytes)),
                    };
                    m.insert((*name).to_owned(), v);
                }
                out.push((m, key));
            }
            Ok(out)
        }
    }
}

/// Options of [`export`].
#[derive(Clone, Default)]
pub struct ExportOptions {
    threads: Vec<String>,
    page_size: Option<usize>,
    page_bytes: Option<usize>,
    progress: Option<ProgressFn>,
}

impl std::fmt::Debug for ExportOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ExportOptions")
            .field("threads", &self.threads)
            .field("page_size", &self.page_size)
            .field("page_bytes", &self.page_bytes)
            .finish_non_exhaustive()
    }
}

impl ExportOptions {
    /// Every thread, pages of 500 rows and at most [`DEFAULT_PAGE_BYTES`] of values.
    pub fn new() -> Self {
        Self::default()
    }

    /// Only these threads (none given: every thread).
    pub fn threads(mut self, threads: impl IntoIterator<Item = impl Into<String>>) -> Self {
        self.threads = threads.into_iter().map(Into::into).collect();
        self
    }

    /// Rows read per query (at least 1).
    pub fn page_size(mut self, rows: usize) -> Self {
        self.page_size = Some(rows.max(1));
        self
    }

    /// Bytes of stored values read per query at most (a larger row is read alone):
    /// what bounds the export's memory.
    pub fn page_bytes(mut self, bytes: usize) -> Self {
        self.page_bytes = Some(bytes.max(1));
        self
    }

    /// Called after each page.
    pub fn on_progress(mut self, f: impl Fn(&Progress) + Send + Sync + 'static) -> Self {
        self.progress = Some(Arc::new(f));
        self
    }
}

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
    store.raw.begin_snapshot().await?;
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
    let file = "(output)";
    let mut written = 0u64;
    let mut line = |out: &mut dyn Write, v: &Json| -> Result<()> {
        let text = serde_json::to_string(v).map_err(|e| StoreFault::Backup {
            file: file.to_owned(),
            reason: e.to_string(),
        })?;
        out.write_all(text.as_bytes()).map_err(io_err(file))?;
        out.write_all(b"\n").map_err(io_err(file))?;
        written = written.saturating_add(text.len() as u64 + 1);
        Ok(())
    };
    line(
        out,
        &json!({
            "format": BACKUP_FORMAT,
            "version": BACKUP_VERSION,
            "backend": raw.backend(),
            "layout": raw.layout().to_string(),
            "threads": if options.threads.is_empty() { Json::Null } else { json!(options.threads) },
        }),
    )?;
    let mut counts = [0u64; 3];
    let page_size = options.page_size.unwrap_or(500);
    let page_bytes = options.page_bytes.unwrap_or(DEFAULT_PAGE_BYTES);
    let threads: Vec<Option<&str>> = if options.threads.is_empty() {
        vec![None]
    } else {
        options.threads.iter().map(|t| Some(t.as_str())).collect()
    };
    let mut done = 0u64;
    for spec in specs(&raw.cols(), matches!(raw, Raw::Postgres { .. }), true) {
        let slot = spec.count_slot();
        for thread in &threads {
            let mut after: Option<Vec<Part>> = None;
            loop {
                let rows =
                    page(raw, &spec, *thread, after.as_deref(), page_size, page_bytes).await?;
                let Some((_, last)) = rows.last() else { break };
                let next = last.clone();
                let n = rows.len() as u64;
                for (m, _) in rows {
                    let mut obj = Map::new();
                    obj.insert("t".to_owned(), Json::from(spec.kind));
                    obj.extend(m);
                    line(out, &Json::Object(obj))?;
                }
                if let Some(c) = counts.get_mut(slot) {
                    *c += n;
                }
                done += n;
                if let Some(f) = &options.progress {
                    f(&Progress {
                        operation: "export",
                        column: spec.table,
                        rows_done: done,
                        total_estimate: done,
                        rewritten: 0,
                        stage: Stage::Done,
                        page: None,
                    });
                }
                // A page cut at the byte budget is shorter than `page_size` with rows
                // still after it: the next page, empty, ends the table.
                after = Some(next);
            }
        }
    }
    line(
        out,
        &json!({"t": "end", "checkpoints": counts[0], "blobs": counts[1], "writes": counts[2]}),
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
        elapsed_s: started.elapsed().as_secs_f64(),
    })
}

/// Options of [`import`].
#[derive(Clone, Default)]
pub struct ImportOptions {
    batch_size: Option<usize>,
    batch_bytes: Option<usize>,
    dry_run: bool,
    max_line_bytes: Option<usize>,
    max_conflict_samples: Option<usize>,
    progress: Option<ProgressFn>,
}

impl std::fmt::Debug for ImportOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ImportOptions")
            .field("batch_size", &self.batch_size)
            .field("batch_bytes", &self.batch_bytes)
            .finish_non_exhaustive()
    }
}

impl ImportOptions {
    /// Batches of 500 rows and at most [`DEFAULT_PAGE_BYTES`] of values, 20 conflict
    /// samples.
    pub fn new() -> Self {
        Self::default()
    }

    /// Rows per transaction (at least 1).
    pub fn batch_size(mut self, rows: usize) -> Self {
        self.batch_size = Some(rows.max(1));
        self
    }

    /// Read the whole file and the target and count what would be inserted, identical
    /// or in conflict; write nothing (a missing target is not created).
    pub fn dry_run(mut self, on: bool) -> Self {
        self.dry_run = on;
        self
    }

    /// Bytes of values per transaction at most (a larger row goes alone): what bounds
    /// the import's memory besides the longest line.
    pub fn batch_bytes(mut self, bytes: usize) -> Self {
        self.batch_bytes = Some(bytes.max(1));
        self
    }

    /// The longest line of the file read, in bytes (default
    /// [`DEFAULT_MAX_BACKUP_LINE_BYTES`](super::DEFAULT_MAX_BACKUP_LINE_BYTES)); a longer line is refused, never held whole.
    pub fn max_line_bytes(mut self, bytes: usize) -> Self {
        self.max_line_bytes = Some(bytes);
        self
    }

    /// Called after each batch.
    pub fn on_progress(mut self, f: impl Fn(&Progress) + Send + Sync + 'static) -> Self {
        self.progress = Some(Arc::new(f));
        self
    }
}

/// A row of the file whose key the target holds with other columns.
#[derive(Clone, Debug, Serialize, PartialEq, Eq)]
#[non_exhaustive]
pub struct ImportConflict {
    /// `checkpoint`, `blob` or `write`.
    pub kind: String,
    /// Its primary key.
    pub key: Vec<String>,
}

/// What [`import`] did.
#[derive(Clone, Debug, Default, Serialize, PartialEq)]
#[non_exhaustive]
pub struct ImportReport {
    /// `import`.
    pub operation: &'static str,
    /// The target.
    pub store: String,
    /// Rows inserted.
    pub inserted: u64,
    /// Rows already there with the same columns.
    pub identical: u64,
    /// Rows already there with other columns (left as they were).
    pub conflicts: u64,
    /// The first conflicts.
    pub conflict_samples: Vec<ImportConflict>,
    /// Whether the file ended with its footer (not cut short).
    pub complete: bool,
    /// Where and how the file was cut short, when its last line is a partial row (the
    /// rows before it were imported).
    pub cut_short: Option<String>,
    /// A dry run: `inserted` counts the rows that would be.
    pub dry_run: bool,
    /// Whether the target was empty and got Python's tables.
    pub created_tables: bool,
    /// Seconds.
    pub elapsed_s: f64,
}

/// A writable target of the same backend in the current layout.
pub(crate) enum Target {
    Sqlite(rusqlite::Connection),
    Postgres(tokio_postgres::Client),
}

/// A SQLite target file that did not exist when an import or copy began: if the
/// operation fails, the file it created is removed with its `-wal`, `-shm` and
/// `-journal`, so a failed operation leaves no new file behind (an existing file keeps
/// the batches committed before the failure, which a rerun finds there). A Postgres
/// target is a database that existed before: the tables created in it stay.
/// Interrupting the command (SIGINT/SIGTERM) is not a failure: the file stays, for the
/// rerun to resume.
pub(crate) struct NewTarget(Option<std::path::PathBuf>);

impl NewTarget {
    /// Notes whether `given` names a SQLite file that does not exist yet.
    pub(crate) fn note(given: &str) -> Self {
        match Location::parse(given) {
            Ok(Location::Sqlite(path)) if !path.exists() => Self(Some(path)),
            _ => Self(None),
        }
    }

    /// Removes the file this operation created when `result` is an error. Called after
    /// every connection to it was closed.
    pub(crate) fn discard_on_error<T>(self, result: &Result<T>) {
        let (Err(_), Some(path)) = (result, self.0) else {
            return;
        };
        for suffix in ["", "-wal", "-shm", "-journal"] {
            let mut name = path.clone().into_os_string();
            name.push(suffix);
            let _ = std::fs::remove_file(name);
        }
    }
}

/// Opens `given` for writing; an empty target (a missing file, a database without
/// the saver's tables) gets Python's tables from the saver's `setup()` when
/// `create_if_empty`, and is refused as not a store otherwise. Returns the connection
/// and whether tables were created.
///
/// # Errors
/// [`ErrorKind::NotAStore`](crate::ErrorKind::NotAStore) for a target in another layout than today's Python's.
pub(crate) async fn open_target(
    given: &str,
    create_if_empty: bool,
) -> Result<(Target, bool, String)> {
    let location = Location::parse(given)?;
    let shown = location.display();
    // An operation on a store that must already be one (prune) writes nothing to a
    // file or database without the saver's tables.
    let not_a_store = |layout: &StoreLayout| StoreFault::NotAStore {
        location: shown.clone(),
        found: layout.to_string(),
    };
    let not_current = |layout: &StoreLayout| {
        StoreFault::NotAStore {
        location: shown.clone(),
        found: format!(
            "{layout}: a target must be empty or in today's Python layout (copy an old store into a fresh one)"
        ),
    }
    };
    match location {
        Location::Sqlite(path) => {
            let mut created = false;
            let layout = if path.is_file() {
                let conn = rusqlite::Connection::open_with_flags(
                    &path,
                    rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY,
                )
                .map_err(sq("open"))?;
                crate::saver::layout::detect_sqlite(&conn).map_err(super::raw::saver_err(&shown))?
            } else {
                StoreLayout::Empty
            };
            match layout {
                StoreLayout::SqlitePython => {}
                StoreLayout::Empty if !create_if_empty => return Err(not_a_store(&layout).into()),
                StoreLayout::Empty => {
                    // Python's tables, as Python's setup() makes them (WAL included).
                    SqliteSaver::create(&path).map_err(super::raw::saver_err(&shown))?;
                    created = true;
                }
                other => return Err(not_current(&other).into()),
            }
            let conn = rusqlite::Connection::open_with_flags(
                &path,
                rusqlite::OpenFlags::SQLITE_OPEN_READ_WRITE,
            )
            .map_err(sq("open"))?;
            conn.busy_timeout(std::time::Duration::from_secs(30))
                .map_err(sq("open"))?;
            // In WAL mode (Python's setup() sets it), commits need not wait for an
            // fsync each, as the savers' own writer does: a crash or kill leaves every
            // committed transaction; a power cut may lose the last ones, never the
            // file's consistency. (Prune commits once per thread, copy and import once
            // per batch: with FULL, 10,000 threads pruned waited on 10,000 fsyncs.)
            let wal: String = conn
                .query_row("PRAGMA journal_mode", [], |r| r.get(0))
                .map_err(sq("open"))?;
            if wal.eq_ignore_ascii_case("wal") {
                conn.execute_batch("PRAGMA synchronous = NORMAL")
                    .map_err(sq("open"))?;
            }
            Ok((Target::Sqlite(conn), created, shown))
        }
        Location::Postgres(url) => {
            let client = pg_connect(&url, false).await?;
            let schema = super::raw::pg_current_schema(&client).await?;
            let layout = crate::saver::layout::detect_postgres(&client, &schema)
                .await
                .map_err(super::raw::saver_err(&shown))?;
            let created = match layout {
                StoreLayout::Empty if !create_if_empty => return Err(not_a_store(&layout).into()),
                StoreLayout::Empty => {
                    let saver = PostgresSaver::builder_from_url(&url)
                        .and_then(|b| b.build())
                        .map_err(super::raw::saver_err(&shown))?;
                    // One transaction: a kill leaves no table or all of them, so a
                    // rerun finds the target empty or complete.
                    saver
                        .setup_in_one_transaction()
                        .await
                        .map_err(super::raw::saver_err(&shown))?;
                    true
                }
                ref l if l.is_current() => false,
                // Python's migrations begun and not finished (a setup() killed midway,
                // by Python or by an earlier release of this tool), no row written yet:
                // finish them as setup() does.
                ref l if create_if_empty && partly_set_up(&client, &schema, l).await? => {
                    let saver = PostgresSaver::builder_from_url(&url)
                        .and_then(|b| b.build())
                        .map_err(super::raw::saver_err(&shown))?;
                    saver.setup().await.map_err(super::raw::saver_err(&shown))?;
                    true
                }
                other => return Err(not_current(&other).into()),
            };
            Ok((Target::Postgres(client), created, shown))
        }
    }
}

/// Whether a Postgres schema of `layout` holds Python's migrations begun and not
/// finished, and no rows: `checkpoint_migrations` recorded, below the last, and every
/// saver table there empty.
async fn partly_set_up(
    client: &tokio_postgres::Client,
    schema: &str,
    layout: &StoreLayout,
) -> Result<bool> {
    match layout {
        StoreLayout::PostgresPython {
            migrations: Some(_),
        } => {}
        StoreLayout::Foreign { .. } => {}
        _ => return Ok(false),
    }
    let rows = client
        .query(
            "SELECT table_name::text FROM information_schema.tables WHERE table_schema = $1 \
             AND table_name IN ('checkpoints', 'checkpoint_blobs', 'checkpoint_writes', 'checkpoint_migrations')",
            &[&schema],
        )
        .await
        .map_err(pg("open"))?;
    let tables: Vec<String> = rows
        .iter()
        .map(|r| r.try_get(0))
        .collect::<std::result::Result<_, _>>()
        .map_err(pg("open"))?;
    if !tables.iter().any(|t| t == "checkpoint_migrations") {
        return Ok(false);
    }
    let quote = |t: &str| format!("\"{}\".\"{}\"", schema.replace('"', "\"\""), t);
    let recorded: Option<i32> = client
        .query_one(
            &format!("SELECT max(v) FROM {}", quote("checkpoint_migrations")),
            &[],
        )
        .await
        .and_then(|r| r.try_get(0))
        .map_err(pg("open"))?;
    if recorded.is_none_or(|v| v >= crate::saver::postgres::LAST_MIGRATION) {
        return Ok(false);
    }
    for t in tables.iter().filter(|t| *t != "checkpoint_migrations") {
        let any: bool = client
            .query_one(&format!("SELECT EXISTS (SELECT 1 FROM {})", quote(t)), &[])
            .await
            .and_then(|r| r.try_get(0))
            .map_err(pg("open"))?;
        if any {
            return Ok(false);
        }
    }
    Ok(true)
}

/// Inserts a batch in one transaction; per row: inserted (true) or already there
/// (false).
async fn insert_batch(target: &mut Target, spec: &Spec, rows: &[Vec<Cell>]) -> Result<Vec<bool>> {
    let names: Vec<&str> = spec.cols.iter().map(|c| c.1).collect();
    let keys: Vec<&str> = names.iter().take(spec.keys).copied().collect();
    match target {
        Target::Sqlite(conn) => {
            let params: Vec<String> = (1..=names.len()).map(|i| format!("?{i}")).collect();
            let sql = format!(
                "INSERT OR IGNORE INTO {} ({}) VALUES ({})",
                spec.table,
                names.join(", "),
                params.join(", ")
            );
            let tx = conn
                .transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)
                .map_err(sq("import"))?;
            let mut out = Vec::with_capacity(rows.len());
            {
                let mut stmt = tx.prepare_cached(&sql).map_err(sq("import"))?;
                for row in rows {
                    let values: Vec<rusqlite::types::Value> = row
                        .iter()
                        .map(|c| match c {
                            Cell::Text(Some(s)) => rusqlite::types::Value::Text(s.clone()),
                            Cell::Int(i) => rusqlite::types::Value::Integer(*i),
                            Cell::Bytes(Some(b)) => rusqlite::types::Value::Blob(b.clone()),
                            Cell::Text(None) | Cell::Bytes(None) => rusqlite::types::Value::Null,
                        })
                        .collect();
                    let n = stmt
                        .execute(rusqlite::params_from_iter(values))
                        .map_err(sq("import"))?;
                    out.push(n == 1);
                }
            }
            tx.commit().map_err(sq("import"))?;
            Ok(out)
        }
        Target::Postgres(client) => {
            let params: Vec<String> = spec
                .cols
                .iter()
                .enumerate()
                .map(|(i, (_, _, kind))| match kind {
                    Col::Int => format!("${}::int4", i + 1),
                    Col::Jsonb => format!("convert_from(${}::bytea, 'UTF8')::jsonb", i + 1),
                    Col::Bytes => format!("${}::bytea", i + 1),
                    _ => format!("${}::text", i + 1),
                })
                .collect();
            let sql = format!(
                "INSERT INTO {} ({}) VALUES ({}) ON CONFLICT ({}) DO NOTHING",
                spec.table,
                names.join(", "),
                params.join(", "),
                keys.join(", ")
            );
            let tx = client.transaction().await.map_err(pg("import"))?;
            let stmt = tx.prepare(&sql).await.map_err(pg("import"))?;
            let mut out = Vec::with_capacity(rows.len());
            for row in rows {
                let boxed: Vec<Box<dyn ToSql + Sync + Send>> = row
                    .iter()
                    .map(|c| -> Box<dyn ToSql + Sync + Send> {
                        match c {
                            Cell::Text(s) => Box::new(s.clone()),
                            Cell::Int(i) => Box::new(i32::try_from(*i).unwrap_or(i32::MAX)),
                            Cell::Bytes(b) => Box::new(b.clone()),
                        }
                    })
                    .collect();
                let refs: Vec<&(dyn ToSql + Sync)> =
                    boxed.iter().map(|p| &**p as &(dyn ToSql + Sync)).collect();
                let n = tx.execute(&stmt, &refs).await.map_err(pg("import"))?;
                out.push(n == 1);
            }
            tx.commit().await.map_err(pg("import"))?;
            Ok(out)
        }
    }
}

/// The row of `spec` with this key in the target, as cells.
async fn existing(target: &Target, spec: &Spec, key: &[Cell]) -> Result<Option<Vec<Cell>>> {
    let sqlite = matches!(target, Target::Sqlite(_));
    let exprs: Vec<String> = spec
        .cols
        .iter()
        .map(|(_, e, k)| {
            if *k == Col::Jsonb {
                format!("{e}::text")
            } else {
                (*e).to_owned()
            }
        })
        .collect();
    let cond: Vec<String> = spec
        .cols
        .iter()
        .take(spec.keys)
        .enumerate()
        .map(|(i, (_, e, _))| format!("{e} = {}", ph(sqlite, i + 1)))
        .collect();
    let sql = format!(
        "SELECT {} FROM {} WHERE {}",
        exprs.join(", "),
        spec.table,
        cond.join(" AND ")
    );
    match target {
        Target::Sqlite(conn) => {
            let values: Vec<rusqlite::types::Value> = key
                .iter()
                .map(|c| match c {
                    Cell::Text(s) => rusqlite::types::Value::Text(s.clone().unwrap_or_default()),
                    Cell::Int(i) => rusqlite::types::Value::Integer(*i),
                    Cell::Bytes(_) => rusqlite::types::Value::Null,
                })
                .collect();
            let mut stmt = conn.prepare_cached(&sql).map_err(sq("import"))?;
            let mut rows = stmt
                .query_map(rusqlite::params_from_iter(values), |r| {
                    spec.cols
                        .iter()
                        .enumerate()
                        .map(|(i, (_, _, kind))| {
                            Ok(match kind {
                                Col::Int => Cell::Int(r.get(i)?),
                                Col::Text | Col::OptText => Cell::Text(r.get(i)?),
                                Col::Bytes | Col::Jsonb => Cell::Bytes(cell_bytes(r, i)?),
                            })
                        })
                        .collect::<rusqlite::Result<Vec<_>>>()
                })
                .map_err(sq("import"))?;
            rows.next().transpose().map_err(sq("import"))
        }
        Target::Postgres(client) => {
            let boxed: Vec<Box<dyn ToSql + Sync + Send>> = key
                .iter()
                .map(|c| -> Box<dyn ToSql + Sync + Send> {
                    match c {
                        Cell::Text(s) => Box::new(s.clone().unwrap_or_default()),
                        Cell::Int(i) => Box::new(i32::try_from(*i).unwrap_or(i32::MAX)),
                        Cell::Bytes(b) => Box::new(b.clone()),
                    }
                })
                .collect();
            let refs: Vec<&(dyn ToSql + Sync)> =
                boxed.iter().map(|p| &**p as &(dyn ToSql + Sync)).collect();
            let rows = client.query(&sql, &refs).await.map_err(pg("import"))?;
            let Some(r) = rows.first() else {
                return Ok(None);
            };
            let mut out = Vec::new();
            for (i, (_, _, kind)) in spec.cols.iter().enumerate() {
                out.push(match kind {
                    Col::Int => Cell::Int(i64::from(r.try_get::<_, i32>(i).map_err(pg("import"))?)),
                    Col::Text | Col::OptText => Cell::Text(r.try_get(i).map_err(pg("import"))?),
                    Col::Bytes => Cell::Bytes(r.try_get(i).map_err(pg("import"))?),
                    Col::Jsonb => Cell::Bytes(
                        r.try_get::<_, Option<String>>(i)
                            .map_err(pg("import"))?
                            .map(String::into_bytes),
                    ),
                });
            }
            Ok(Some(out))
        }
    }
}

/// Where an import's rows go, a batch at a time.
struct Sink {
    /// `None`: a dry run into a target that is not a store yet.
    tgt: Option<Target>,
    batch: Vec<Vec<Cell>>,
    report: ImportReport,
    max_samples: usize,
    dry_run: bool,
}

impl Sink {
    /// Inserts the batch (rows of `spec`'s table) in one transaction, counting each row
    /// inserted, already there, or in conflict; a dry run only counts.
    async fn flush(&mut self, spec: Option<&Spec>) -> Result<()> {
        let Some(spec) = spec.filter(|_| !self.batch.is_empty()) else {
            return Ok(());
        };
        let report = &mut self.report;
        let Some(tgt) = self.tgt.as_mut() else {
            // Every row would go in.
            report.inserted += self.batch.len() as u64;
            self.batch.clear();
            return Ok(());
        };
        let inserted = if self.dry_run {
            vec![false; self.batch.len()]
        } else {
            insert_batch(tgt, spec, &self.batch).await?
        };
        for (row, ok) in self.batch.iter().zip(inserted) {
            if ok {
                report.inserted += 1;
                continue;
            }
            let key: Vec<Cell> = row.iter().take(spec.keys).cloned().collect();
            match existing(tgt, spec, &key).await? {
                None if self.dry_run => report.inserted += 1,
                Some(there) if &there == row => report.identical += 1,
                _ => {
                    report.conflicts += 1;
                    if report.conflict_samples.len() < self.max_samples {
                        report.conflict_samples.push(ImportConflict {
                            kind: spec.kind.to_owned(),
                            key: key_text(row, spec.keys),
                        });
                    }
                }
            }
        }
        self.batch.clear();
        Ok(())
    }
}

/// Restores a backup file (read line by line from `input`) into the store `target`
/// (`sqlite:PATH`, a file path, or a `postgres://` URL) of the backend the file came
/// from: only free keys are inserted, identical rows skipped, different rows
/// reported and never overwritten (see `docs/store-maintenance.md`). On an error, a
/// SQLite target file the import created is removed; a store that existed keeps the
/// batches committed before it.
///
/// # Errors
/// [`ErrorKind::Backup`](crate::ErrorKind::Backup) for a malformed file (the line is named) or one of
/// another backend; [`ErrorKind::NotAStore`](crate::ErrorKind::NotAStore) for a target in an old layout; the
/// database's errors.
pub async fn import(
    input: &mut dyn BufRead,
    file: &str,
    target: &str,
    options: &ImportOptions,
) -> Result<ImportReport> {
    let new = NewTarget::note(target);
    let report = import_into(input, file, target, options).await;
    new.discard_on_error(&report);
    report
}

async fn import_into(
    input: &mut dyn BufRead,
    file: &str,
    target: &str,
    options: &ImportOptions,
) -> Result<ImportReport> {
    let started = Instant::now();
    let mut rows = BackupRows::open(input, file, options.max_line_bytes)?;
    // The backends are compared before the target is opened: a refused import leaves
    // no new, empty store behind.
    let backend = match Location::parse(target)? {
        Location::Sqlite(_) => "sqlite",
        Location::Postgres(_) => "postgres",
    };
    if rows.backend != backend {
        return Err(StoreFault::Backup {
            file: format!("{file}:1"),
            reason: format!(
                "a {} backup cannot be imported into a {backend} store (the layouts differ): use `store copy` between backends",
                rows.backend
            ),
        }
        .into());
    }
    // A dry run writes nothing: a target that is not a store yet would get every row.
    let (tgt, created, shown) = if options.dry_run {
        match open_target_read_only(target).await? {
            (Some(t), shown) => (Some(t), false, shown),
            (None, shown) => (None, false, shown),
        }
    } else {
        let (t, created, shown) = open_target(target, true).await?;
        (Some(t), created, shown)
    };
    let batch_size = options.batch_size.unwrap_or(500);
    let batch_bytes = options.batch_bytes.unwrap_or(DEFAULT_PAGE_BYTES);
    let mut held_bytes = 0usize;
    let max_samples = options.max_conflict_samples.unwrap_or(20);
    let report = ImportReport {
        operation: "import",
        store: shown,
        created_tables: created,
        dry_run: options.dry_run,
        ..ImportReport::default()
    };
    let mut sink = Sink {
        tgt,
        batch: Vec::new(),
        report,
        max_samples,
        dry_run: options.dry_run,
    };
    let mut batch_kind: Option<usize> = None;
    let mut done = 0u64;
    loop {
        let (i, row) = match rows.next_row() {
            Ok(Some(next)) => next,
            Ok(None) => break,
            // The rows before the malformed line go in first: a rerun of the right
            // file then finds them there.
            Err(e) => {
                sink.flush(batch_kind.and_then(|k| rows.specs().get(k)))
                    .await?;
                return Err(e);
            }
        };
        let full = sink.batch.len() >= batch_size || held_bytes >= batch_bytes;
        if batch_kind != Some(i) || full {
            held_bytes = 0;
            sink.flush(batch_kind.and_then(|k| rows.specs().get(k)))
                .await?;
            batch_kind = Some(i);
            if let Some(f) = &options.progress {
                f(&Progress {
                    operation: "import",
                    column: rows.specs().get(i).map_or("", |s| s.table),
                    rows_done: done,
                    total_estimate: done,
                    rewritten: sink.report.inserted,
                    stage: Stage::Done,
                    page: None,
                });
            }
        }
        held_bytes = held_bytes.saturating_add(
            row.iter()
                .map(|c| match c {
                    Cell::Bytes(Some(b)) => b.len(),
                    _ => 0,
                })
                .sum(),
        );
        sink.batch.push(row);
        done += 1;
    }
    sink.flush(batch_kind.and_then(|k| rows.specs().get(k)))
        .await?;
    let mut report = sink.report;
    report.complete = rows.complete;
    report.cut_short = rows.cut_short.take();
    report.elapsed_s = started.elapsed().as_secs_f64();
    Ok(report)
}

/// A dry run's view of an import target: read-only, nothing created. `None` when
/// there is no store there yet (no file, or a database without the saver's tables).
///
/// # Errors
/// [`ErrorKind::NotAStore`](crate::ErrorKind::NotAStore) for a store in another layout than today's.
async fn open_target_read_only(given: &str) -> Result<(Option<Target>, String)> {
    let location = Location::parse(given)?;
    let shown = location.display();
    // Empty as `open_target` judges it: no file, or no saver table.
    let empty = match &location {
        Location::Sqlite(path) if !path.exists() => true,
        Location::Sqlite(path) => {
            let conn = crate::saver::layout::open_sqlite_read_only(path)?;
            crate::saver::layout::detect_sqlite(&conn).map_err(super::raw::saver_err(&shown))?
                == StoreLayout::Empty
        }
        Location::Postgres(url) => {
            let client = pg_connect(url, true).await?;
            let schema = super::raw::pg_current_schema(&client).await?;
            crate::saver::layout::detect_postgres(&client, &schema)
                .await
                .map_err(super::raw::saver_err(&shown))?
                == StoreLayout::Empty
        }
    };
    if empty {
        return Ok((None, shown));
    }
    let store = AnyStore::open(given).await?;
    if !store.raw.layout().is_current() {
        return Err(StoreFault::NotAStore {
            location: shown.clone(),
            found: format!(
                "{}: a target must be empty or in today's Python layout",
                store.raw.layout()
            ),
        }
        .into());
    }
    let target = match store.raw {
        Raw::Sqlite { conn, .. } => Target::Sqlite(conn),
        Raw::Postgres { url, .. } => Target::Postgres(pg_connect(&url, true).await?),
    };
    Ok((Some(target), shown))
}
