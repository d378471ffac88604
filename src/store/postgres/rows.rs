//! Rows into a Postgres target in bulk: a backup's rows (`import`), a batch sent with
//! one `COPY` when its keys are free, else in windows of rows, each one statement
//! inserting where the key is free, and a row read back by its key; a copy's write
//! rows, with one `COPY` or one insert-or-ignore statement.

use tokio_postgres::types::ToSql;
use tokio_postgres::Client;

use super::super::backend::{row_at_sql, Cell, Col, Spec, WriteSet};
use super::super::error::StoreFault;
use super::{pg, Result};
use crate::saver::postgres::{copy_in, unique_violation};
use crate::saver::sqlite::StoredWrite;

/// Inserts a batch in one transaction; per row: inserted (true) or already there
/// (false). With `copy` the rows are first sent with `COPY` ([`copy_batch`]); when a
/// key is taken (a rerun, rows already there, a key twice in the batch, a writer
/// beside the import), that transaction is rolled back and the batch goes in window
/// by window as it would without. The second value: whether the `COPY` took the batch.
pub(super) async fn insert_rows(
    client: &mut Client,
    spec: &Spec,
    rows: &[Vec<Cell>],
    copy: bool,
) -> Result<(Vec<bool>, bool)> {
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

/// The row of `spec`'s table at `key`, as cells.
pub(super) async fn row_at(
    client: &Client,
    spec: &Spec,
    key: &[Cell],
) -> Result<Option<Vec<Cell>>> {
    let sql = row_at_sql(spec, false);
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

/// A copy's write rows ([`WriteSet`]) where their key is free, in one transaction: with
/// one `COPY` when `fresh` ([`copy_writes`]; a key taken fails it, nothing inserted,
/// and they go in with insert-or-ignore), else with insert-or-ignore; how many write
/// rows were inserted (no checkpoint: a Postgres target's go through the saver).
pub(super) async fn insert_writes(
    client: &mut Client,
    batch: &[WriteSet<'_>],
    fresh: bool,
) -> Result<(u64, u64)> {
    let rows: Vec<(&WriteSet<'_>, &StoredWrite)> = batch
        .iter()
        .flat_map(|p| p.writes.iter().map(move |w| (p, w)))
        .collect();
    if rows.is_empty() {
        return Ok((0, 0));
    }
    let mut idxs = Vec::with_capacity(rows.len());
    for (p, w) in &rows {
        idxs.push(i32::try_from(w.idx).map_err(|_| StoreFault::Unreadable {
            what: format!(
                "write {}/{:?}/{}/{}",
                p.key[0], p.key[1], p.key[2], w.task_id
            ),
            reason: format!("idx {} does not fit Postgres's INTEGER", w.idx),
        })?);
    }
    let cols = WriteCols {
        threads: rows.iter().map(|(p, _)| p.key[0]).collect(),
        nss: rows.iter().map(|(p, _)| p.key[1]).collect(),
        ids: rows.iter().map(|(p, _)| p.key[2]).collect(),
        tasks: rows.iter().map(|(_, w)| w.task_id.as_str()).collect(),
        paths: rows.iter().map(|(_, w)| w.task_path.as_str()).collect(),
        idxs,
        channels: rows.iter().map(|(_, w)| w.channel.as_str()).collect(),
        tags: rows.iter().map(|(_, w)| w.tag()).collect(),
        blobs: rows.iter().map(|(_, w)| w.data()).collect(),
    };
    let copied = if fresh {
        match copy_writes(client, &cols).await {
            Ok(copied) => Some(copied),
            // A key there already: insert-or-ignore.
            Err(e) if unique_violation(&e) => None,
            Err(e) => return Err(pg("copy")(e)),
        }
    } else {
        None
    };
    let n = match copied {
        Some(copied) => copied,
        None => insert_writes_ignoring(client, &cols)
            .await
            .map_err(pg("copy"))?,
    };
    Ok((n, 0))
}

/// A batch's write rows for Postgres, column by column.
struct WriteCols<'a> {
    threads: Vec<&'a str>,
    nss: Vec<&'a str>,
    ids: Vec<&'a str>,
    tasks: Vec<&'a str>,
    paths: Vec<&'a str>,
    idxs: Vec<i32>,
    channels: Vec<&'a str>,
    tags: Vec<&'a str>,
    blobs: Vec<&'a [u8]>,
}

/// The write rows of a batch none of whose checkpoints is in the target yet (a first
/// run: every batch), in one transaction with one `COPY` (one statement per row cost
/// the server 3.1 s of a 100,000-checkpoint copy's 13.8 s, 2026-11-28); how many rows
/// were inserted. A key the target holds already (the writes of a checkpoint an
/// earlier run stopped before) fails the `COPY` with a unique violation, nothing
/// inserted: then they go in with insert-or-ignore. (Looking first, one statement a
/// batch, cost the server 0.85 s of a 100,000-checkpoint copy, 2026-11-29.)
async fn copy_writes(
    client: &mut tokio_postgres::Client,
    c: &WriteCols<'_>,
) -> std::result::Result<u64, tokio_postgres::Error> {
    use tokio_postgres::types::{ToSql, Type};
    let tx = client.transaction().await?;
    let rows = c
        .threads
        .iter()
        .zip(&c.nss)
        .zip(&c.ids)
        .zip(&c.tasks)
        .zip(&c.paths)
        .zip(&c.idxs)
        .zip(&c.channels)
        .zip(&c.tags)
        .zip(&c.blobs)
        .map(
            |((((((((t, ns), id), task), path), idx), channel), tag), blob)| -> [&(dyn ToSql + Sync); 9] {
                [t, ns, id, task, path, idx, channel, tag, blob]
            },
        );
    let n = copy_in(
        &tx,
        "COPY checkpoint_writes (thread_id, checkpoint_ns, checkpoint_id, task_id, task_path, idx, channel, type, blob) \
         FROM STDIN (FORMAT binary)",
        &[
            Type::TEXT,
            Type::TEXT,
            Type::TEXT,
            Type::TEXT,
            Type::TEXT,
            Type::INT4,
            Type::TEXT,
            Type::TEXT,
            Type::BYTEA,
        ],
        rows,
    )
    .await?;
    tx.commit().await?;
    Ok(n)
}

/// The write rows inserted where their key is free (`ON CONFLICT DO NOTHING`), in one
/// statement; how many were inserted.
async fn insert_writes_ignoring(
    client: &mut tokio_postgres::Client,
    c: &WriteCols<'_>,
) -> std::result::Result<u64, tokio_postgres::Error> {
    let tx = client.transaction().await?;
    let stmt = tx
        .prepare(
            "INSERT INTO checkpoint_writes (thread_id, checkpoint_ns, checkpoint_id, task_id, task_path, idx, channel, type, blob) \
             SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::int4[], $7::text[], $8::text[], $9::bytea[]) \
             ON CONFLICT DO NOTHING",
        )
        .await?;
    let n = tx
        .execute(
            &stmt,
            &[
                &c.threads,
                &c.nss,
                &c.ids,
                &c.tasks,
                &c.paths,
                &c.idxs,
                &c.channels,
                &c.tags,
                &c.blobs,
            ],
        )
        .await?;
    tx.commit().await?;
    Ok(n)
}
