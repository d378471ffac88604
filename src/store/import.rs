//! [`import`]: a backup file (`lgcodec-store-backup`, see [`export`](super::export()))
//! restored into a store of the same backend (use [`copy`](super::copy()) between
//! backends): an empty target first gets Python's tables from the saver's own
//! `setup()`. Each row is inserted only if its key is free; a row already there with
//! the same columns is skipped, one with other columns is reported and left alone
//! (never overwritten). Batches of rows are committed one transaction each, so an
//! import stopped anywhere is resumed by running it again.

use std::io::BufRead;
use std::sync::Arc;
use std::time::Instant;

use serde::Serialize;
use tokio_postgres::types::ToSql;

use super::backup::{key_text, BackupRows, Cell, Col, Spec};
use super::error::StoreFault;
use super::inspect::AnyStore;
use super::ops::{Progress, ProgressFn, Stage, DEFAULT_PAGE_BYTES};
use super::raw::{cell_bytes, pg, pg_connect, ph, sq, Raw, Result};
use super::retry::{Retry, DEFAULT_MAX_RECONNECTS};
use super::Location;
use crate::saver::layout::StoreLayout;
use crate::saver::postgres::{copy_in, unique_violation};

use super::target::{open_target, Conn, NewTarget, PgTarget, SqliteTarget, Target};

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
    /// Batches of 500 rows and at most half [`DEFAULT_PAGE_BYTES`] of values (the
    /// next batch is read from the file while one goes in), 20 conflict samples.
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
    /// the import's memory besides the longest line (two batches: the one going in and
    /// the next, read meanwhile).
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
    /// Postgres: connections re-opened after the server closed them; the batch in
    /// flight then was inserted again (a batch whose commit went through before the
    /// connection went then counts its rows identical). At most 16 losses in a row (about a minute of waiting), then
    /// [`ErrorKind::ConnectionLost`](crate::ErrorKind::ConnectionLost).
    pub reconnects: u64,
    /// Seconds.
    pub elapsed_s: f64,
}

/// Inserts a batch in one transaction; per row: inserted (true) or already there
/// (false). Into Postgres with `copy` the rows are first sent with `COPY`
/// ([`copy_batch`]); when a key is taken (a rerun, rows already there, a key twice in
/// the batch, a writer beside the import), that transaction is rolled back and the
/// batch goes in row by row as it would without. The second value: whether the
/// `COPY` took the batch.
async fn insert_batch(
    target: &mut Target,
    spec: &Spec,
    rows: &[Vec<Cell>],
    copy: bool,
) -> Result<(Vec<bool>, bool)> {
    let names: Vec<&str> = spec.cols.iter().map(|c| c.1).collect();
    match target.conn() {
        Conn::Sqlite(conn) => {
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
                    // Bound by reference: SQLite copies each value once, into its page.
                    use rusqlite::types::{ToSqlOutput, ValueRef};
                    let values: Vec<ToSqlOutput<'_>> = row
                        .iter()
                        .map(|c| {
                            ToSqlOutput::Borrowed(match c {
                                Cell::Text(Some(s)) => ValueRef::Text(s.as_bytes()),
                                Cell::Int(i) => ValueRef::Integer(*i),
                                Cell::Bytes(Some(b)) => ValueRef::Blob(b),
                                Cell::Text(None) | Cell::Bytes(None) => ValueRef::Null,
                            })
                        })
                        .collect();
                    let n = stmt
                        .execute(rusqlite::params_from_iter(values))
                        .map_err(sq("import"))?;
                    out.push(n == 1);
                }
            }
            tx.commit().map_err(sq("import"))?;
            Ok((out, false))
        }
        Conn::Postgres(client) => {
            if copy {
                check_cells(spec, rows)?;
                let tx = client.transaction().await.map_err(pg("import"))?;
                match copy_batch(&tx, spec, rows).await {
                    Ok(()) => {
                        tx.commit().await.map_err(pg("import"))?;
                        return Ok((vec![true; rows.len()], true));
                    }
                    Err(e) if unique_violation(&e) => {
                        tx.rollback().await.map_err(pg("import"))?;
                    }
                    Err(e) => return Err(pg("import")(e)),
                }
            }
            let tx = client.transaction().await.map_err(pg("import"))?;
            let stmt = tx
                .prepare(&unnest_insert_sql(spec))
                .await
                .map_err(pg("import"))?;
            // An `INSERT` like any other: row locks only, Python's writers beside the
            // import keep writing. A key met again in the batch is not sent: the first
            // of them took it (or a row already there had it), so the later ones are not
            // inserted and are compared with what the table holds, as a second `INSERT`
            // would leave them.
            let mut out = vec![false; rows.len()];
            let mut seen = std::collections::HashSet::with_capacity(rows.len());
            let mut window: Vec<usize> = Vec::new();
            let mut held = 0usize;
            for (at, row) in rows.iter().enumerate() {
                if !seen.insert(row.get(..spec.keys).unwrap_or(row)) {
                    continue;
                }
                let size = row_bytes(row);
                if !window.is_empty() && held.saturating_add(size) > WINDOW_BYTES {
                    insert_window(&tx, &stmt, spec, rows, &window, &mut out).await?;
                    window.clear();
                    held = 0;
                }
                held = held.saturating_add(size);
                window.push(at);
            }
            if !window.is_empty() {
                insert_window(&tx, &stmt, spec, rows, &window, &mut out).await?;
            }
            tx.commit().await.map_err(pg("import"))?;
            Ok((out, false))
        }
    }
}

/// Sends a batch of `spec`'s rows with one `COPY … FROM STDIN (FORMAT binary)` into
/// its table, in `tx`: every row goes in, or the statement fails (a unique violation
/// where a key is taken). Cells are checked first ([`check_cells`]).
///
/// Why `COPY` first: a Postgres import of 100,000 checkpoints took 15.5 s with a
/// statement per window of rows (`INSERT … SELECT … FROM unnest(…) ON CONFLICT DO
/// NOTHING RETURNING`, see [`WINDOW_BYTES`]), of which the server's statements were
/// 9.9 s (`pg_stat_statements`, 2026-11-29); a restore goes into an empty store, where
/// no key is taken and nothing needs to be looked up or returned.
async fn copy_batch(
    tx: &tokio_postgres::Transaction<'_>,
    spec: &Spec,
    rows: &[Vec<Cell>],
) -> std::result::Result<(), tokio_postgres::Error> {
    use tokio_postgres::types::Type;
    let names: Vec<&str> = spec.cols.iter().map(|c| c.1).collect();
    let types: Vec<Type> = spec
        .cols
        .iter()
        .map(|(_, _, kind)| match kind {
            Col::Text | Col::OptText => Type::TEXT,
            Col::Int => Type::INT4,
            Col::Bytes => Type::BYTEA,
            Col::Jsonb => Type::JSONB,
        })
        .collect();
    let sql = format!(
        "COPY {} ({}) FROM STDIN (FORMAT binary)",
        spec.table,
        names.join(", ")
    );
    let cells: Vec<Vec<CopyCell<'_>>> = rows
        .iter()
        .map(|row| row.iter().map(CopyCell).collect())
        .collect();
    copy_in(
        tx,
        &sql,
        &types,
        cells.iter().map(|row| {
            row.iter()
                .map(|c| c as &(dyn ToSql + Sync))
                .collect::<Vec<_>>()
        }),
    )
    .await?;
    Ok(())
}

/// A cell as `COPY … (FORMAT binary)` sends it for its column's type: text, an `int4`
/// (checked to fit by [`check_cells`]), `bytea`, or a `jsonb` from the bytes of its text
/// (version 1, then the text, as `$n::jsonb` takes it). NULL for a NULL cell.
#[derive(Debug)]
struct CopyCell<'a>(&'a Cell);

impl ToSql for CopyCell<'_> {
    fn to_sql(
        &self,
        ty: &tokio_postgres::types::Type,
        out: &mut bytes::BytesMut,
    ) -> std::result::Result<tokio_postgres::types::IsNull, Box<dyn std::error::Error + Sync + Send>>
    {
        use bytes::BufMut;
        use tokio_postgres::types::{IsNull, Type};
        match self.0 {
            Cell::Text(None) | Cell::Bytes(None) => Ok(IsNull::Yes),
            Cell::Text(Some(s)) => s.as_str().to_sql(ty, out),
            Cell::Bytes(Some(b)) if *ty == Type::JSONB => {
                out.put_u8(1);
                out.extend_from_slice(b);
                Ok(IsNull::No)
            }
            Cell::Bytes(Some(b)) => b.as_slice().to_sql(ty, out),
            Cell::Int(n) => i32::try_from(*n)?.to_sql(ty, out),
        }
    }

    fn accepts(_: &tokio_postgres::types::Type) -> bool {
        true
    }

    tokio_postgres::types::to_sql_checked!();
}

/// Each cell of `rows` is of its column's kind, and an integer fits the column (a
/// 32-bit integer): what [`insert_window`] checks as it builds its arrays, checked
/// before a `COPY` sends them.
fn check_cells(spec: &Spec, rows: &[Vec<Cell>]) -> Result<()> {
    for row in rows {
        for ((name, _, kind), cell) in spec.cols.iter().zip(row) {
            match (kind, cell) {
                (Col::Text | Col::OptText, Cell::Text(_))
                | (Col::Bytes | Col::Jsonb, Cell::Bytes(_)) => {}
                (Col::Int, Cell::Int(n)) => {
                    i32::try_from(*n).map_err(|_| too_big(spec, name, *n))?;
                }
                _ => return Err(wrong_kind(spec, name)),
            }
        }
    }
    Ok(())
}

/// A cell of another kind than its column's.
fn wrong_kind(spec: &Spec, name: &str) -> crate::Error {
    StoreFault::Backup {
        file: spec.table.to_owned(),
        reason: format!("{name}: a value of another type than the column's"),
    }
    .into()
}

/// An integer cell too large for its column.
fn too_big(spec: &Spec, name: &str, n: i64) -> crate::Error {
    StoreFault::Backup {
        file: spec.table.to_owned(),
        reason: format!("{name} {n} does not fit the column (a 32-bit integer)"),
    }
    .into()
}

/// Bytes of values in a row as they travel (an integer as 8).
fn row_bytes(row: &[Cell]) -> usize {
    row.iter()
        .map(|c| match c {
            Cell::Text(s) => s.as_ref().map_or(0, String::len),
            Cell::Bytes(b) => b.as_ref().map_or(0, Vec::len),
            Cell::Int(_) => 8,
        })
        .sum()
}

/// The Postgres statement inserting a window of rows of `spec`'s table, sent as one
/// array per column: each row whose key is free goes in, and the statement returns
/// the 1-based positions (in the arrays) of the rows inserted. JSONB columns travel as
/// the bytes of their text, as `convert_from(…, 'UTF8')::jsonb` takes them.
fn unnest_insert_sql(spec: &Spec) -> String {
    let names: Vec<&str> = spec.cols.iter().map(|c| c.1).collect();
    let keys: Vec<&str> = names.iter().take(spec.keys).copied().collect();
    let arrays: Vec<String> = spec
        .cols
        .iter()
        .enumerate()
        .map(|(i, (_, _, kind))| match kind {
            Col::Int => format!("${}::int4[]", i + 1),
            Col::Bytes | Col::Jsonb => format!("${}::bytea[]", i + 1),
            Col::Text | Col::OptText => format!("${}::text[]", i + 1),
        })
        .collect();
    let values: Vec<String> = spec
        .cols
        .iter()
        .map(|(_, name, kind)| match kind {
            Col::Jsonb => format!("convert_from({name}, 'UTF8')::jsonb"),
            _ => (*name).to_owned(),
        })
        .collect();
    format!(
        "WITH input AS (SELECT * FROM unnest({arrays}) WITH ORDINALITY AS u({names}, lgcodec_ord)),
ins AS (INSERT INTO {table} ({names}) SELECT {values} FROM input ON CONFLICT ({keys}) DO NOTHING RETURNING {keys})
SELECT input.lgcodec_ord FROM input JOIN ins USING ({keys})",
        arrays = arrays.join(", "),
        names = names.join(", "),
        table = spec.table,
        values = values.join(", "),
        keys = keys.join(", "),
    )
}

/// One column of a window of rows, as the array its parameter takes.
enum ColumnArray<'a> {
    Text(Vec<Option<&'a str>>),
    Int(Vec<i32>),
    Bytes(Vec<Option<&'a [u8]>>),
}

impl ColumnArray<'_> {
    fn param(&self) -> &(dyn ToSql + Sync) {
        match self {
            ColumnArray::Text(v) => v,
            ColumnArray::Int(v) => v,
            ColumnArray::Bytes(v) => v,
        }
    }
}

/// Bytes of values one statement of a Postgres import sends (a larger row goes alone).
///
/// Why a window of rows per statement, its columns as arrays (`unnest`), instead of
/// one `INSERT` per row: a Postgres import of 100,000 checkpoints took 27.4 s with one
/// pipelined `INSERT … ON CONFLICT DO NOTHING` per row and takes 15.2 s this way (6.0 s
/// into SQLite; 2026-11-28, the two binaries one after the other,
/// `ONLY=export SIZES=100000 bash benches/store_maint_vs_python.sh`): the server's cost
/// per statement dominated. Why a window and not the whole batch: the bind message
/// holds every value of the statement besides the batch itself (a batch of 16 MiB sent
/// at once held 50 MiB, `tests/store_bounded_memory.rs`).
const WINDOW_BYTES: usize = 2 << 20;

/// Cell `i` of each row of `rows` at positions `window`, as `pick` takes it.
fn column_of<'a, T>(
    rows: &'a [Vec<Cell>],
    window: &[usize],
    i: usize,
    pick: impl Fn(Option<&'a Cell>) -> Result<T>,
) -> Result<Vec<T>> {
    window
        .iter()
        .filter_map(|&at| rows.get(at))
        .map(|row| pick(row.get(i)))
        .collect()
}

/// Inserts the rows of `rows` at positions `window` (keys distinct) with `stmt`
/// ([`unnest_insert_sql`]), marking in `out` those inserted.
async fn insert_window(
    tx: &tokio_postgres::Transaction<'_>,
    stmt: &tokio_postgres::Statement,
    spec: &Spec,
    rows: &[Vec<Cell>],
    window: &[usize],
    out: &mut [bool],
) -> Result<()> {
    let mut columns = Vec::with_capacity(spec.cols.len());
    for (i, (name, _, kind)) in spec.cols.iter().enumerate() {
        let wrong = || wrong_kind(spec, name);
        columns.push(match kind {
            Col::Text | Col::OptText => {
                ColumnArray::Text(column_of(rows, window, i, |c| match c {
                    Some(Cell::Text(s)) => Ok(s.as_deref()),
                    _ => Err(wrong()),
                })?)
            }
            Col::Bytes | Col::Jsonb => {
                ColumnArray::Bytes(column_of(rows, window, i, |c| match c {
                    Some(Cell::Bytes(b)) => Ok(b.as_deref()),
                    _ => Err(wrong()),
                })?)
            }
            Col::Int => ColumnArray::Int(column_of(rows, window, i, |c| match c {
                Some(Cell::Int(n)) => i32::try_from(*n).map_err(|_| too_big(spec, name, *n)),
                _ => Err(wrong()),
            })?),
        });
    }
    let params: Vec<&(dyn ToSql + Sync)> = columns.iter().map(ColumnArray::param).collect();
    for r in tx.query(stmt, &params).await.map_err(pg("import"))? {
        let ord: i64 = r.try_get(0).map_err(pg("import"))?;
        let at = ord
            .checked_sub(1)
            .and_then(|i| usize::try_from(i).ok())
            .and_then(|i| window.get(i))
            .and_then(|&at| out.get_mut(at));
        if let Some(slot) = at {
            *slot = true;
        }
    }
    Ok(())
}

/// The row of `spec` with this key in the target, as cells.
async fn existing(target: &mut Target, spec: &Spec, key: &[Cell]) -> Result<Option<Vec<Cell>>> {
    let sqlite = matches!(target.conn(), Conn::Sqlite(_));
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
    match target.conn() {
        Conn::Sqlite(conn) => {
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
        Conn::Postgres(client) => {
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
    retry: Retry,
    /// Whether the next batch into Postgres is sent with `COPY` first: after a batch
    /// whose `COPY` met a taken key, not until a batch goes in whole row by row (a
    /// rerun sends each batch once, not twice).
    copy_first: bool,
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
            loop {
                match insert_batch(tgt, spec, &self.batch, self.copy_first).await {
                    Ok((v, copied)) => {
                        self.copy_first = copied || v.iter().all(|inserted| *inserted);
                        break self.retry.ok(v);
                    }
                    Err(e) => tgt.recover(&mut self.retry, e).await?,
                }
            }
        };
        for (row, ok) in self.batch.iter().zip(inserted) {
            if ok {
                report.inserted += 1;
                continue;
            }
            let key: Vec<Cell> = row.iter().take(spec.keys).cloned().collect();
            let there = loop {
                match existing(tgt, spec, &key).await {
                    Ok(v) => break self.retry.ok(v),
                    Err(e) => tgt.recover(&mut self.retry, e).await?,
                }
            };
            match there {
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
    // Two batches are held: the one going in and the next, read from the file
    // meanwhile; by default each holds half the page budget.
    let batch_bytes = options.batch_bytes.unwrap_or(DEFAULT_PAGE_BYTES / 2);
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
        retry: Retry::new(DEFAULT_MAX_RECONNECTS),
        copy_first: true,
    };
    let specs: Vec<Spec> = rows.specs().to_vec();
    let limits = (batch_size, batch_bytes);
    let mut carry: Option<(usize, Vec<Cell>)> = None;
    let mut next = next_batch(&mut rows, &mut carry, limits);
    let mut done = 0u64;
    loop {
        let (kind, batch, failed) = next;
        if batch.is_empty() && failed.is_none() {
            break;
        }
        let spec = kind.and_then(|k| specs.get(k)).cloned();
        done += batch.len() as u64;
        sink.batch = batch;
        if let Some(e) = failed {
            // The rows before the malformed line go in first: a rerun of the right
            // file then finds them there.
            sink.flush(spec.as_ref()).await?;
            return Err(e);
        }
        // The batch goes in on a task of its own while the next is read from the
        // file here (on a runtime of more than one thread, on another core).
        let going = tokio::spawn(async move {
            let flushed = sink.flush(spec.as_ref()).await;
            (sink, flushed, spec)
        });
        next = next_batch(&mut rows, &mut carry, limits);
        let (back, flushed, spec) = going
            .await
            .map_err(|e| StoreFault::task("the insert of a batch", e))?;
        sink = back;
        flushed?;
        if let Some(f) = &options.progress {
            f(&Progress {
                operation: "import",
                column: spec.as_ref().map_or("", |s| s.table),
                rows_done: done,
                total_estimate: done,
                rewritten: sink.report.inserted,
                stage: Stage::Done,
                page: None,
            });
        }
    }
    let mut report = sink.report;
    report.reconnects = sink.retry.reconnects;
    report.complete = rows.complete;
    report.cut_short = rows.cut_short.take();
    report.elapsed_s = started.elapsed().as_secs_f64();
    Ok(report)
}

/// The next batch of rows of one table from the file: its table (an index into the
/// file's specs), up to `batch_size` rows holding up to `batch_bytes` of values, and
/// the error that ended it early (a malformed line; the rows before it are whole). A
/// row of the next table, read to find the batch's end, waits in `carry`. No rows and
/// no error: the file is done.
fn next_batch(
    rows: &mut BackupRows<'_>,
    carry: &mut Option<(usize, Vec<Cell>)>,
    (batch_size, batch_bytes): (usize, usize),
) -> (Option<usize>, Vec<Vec<Cell>>, Option<crate::Error>) {
    let mut kind = None;
    let mut batch = Vec::new();
    let mut held = 0usize;
    loop {
        if batch.len() >= batch_size || held >= batch_bytes {
            return (kind, batch, None);
        }
        let (i, row) = match carry.take().map(Ok).or_else(|| rows.next_row().transpose()) {
            Some(Ok(next)) => next,
            None => return (kind, batch, None),
            Some(Err(e)) => return (kind, batch, Some(e)),
        };
        if kind.is_some_and(|k| k != i) {
            *carry = Some((i, row));
            return (kind, batch, None);
        }
        kind = Some(i);
        held = held.saturating_add(
            row.iter()
                .map(|c| match c {
                    Cell::Bytes(Some(b)) => b.len(),
                    _ => 0,
                })
                .sum(),
        );
        batch.push(row);
    }
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
    let target: Target = match store.raw {
        Raw::Sqlite { conn, path, .. } => Box::new(SqliteTarget::new(conn, path)),
        Raw::Postgres { url, .. } => {
            let client = pg_connect(&url, true).await?;
            Box::new(PgTarget::new(client, url, false))
        }
    };
    Ok((Some(target), shown))
}
