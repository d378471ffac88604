//! Batches of checkpoints in and out of the tables, for a store copy: a batch put in
//! one transaction with `COPY … FROM STDIN (FORMAT binary)`, and a batch read back in
//! one statement.
//!
//! Why `COPY`: the rows are exactly [`put`](crate::saver::CheckpointSaver::put)'s (the same
//! [`put_row`](PostgresSaver::put_row) makes them), but one `INSERT` per checkpoint
//! costs the server a statement each: a copy SQLite → Postgres of 100,000 checkpoints
//! spent about half its 38 s on those statements (2026-11-28), where `COPY` of the same
//! rows into the same indexed tables takes about 4.5 s (`pg_restore` of the data alone,
//! binary format).
//!
//! `COPY` has no `ON CONFLICT`: blobs a batch shares with rows already in the table (a
//! channel whose version did not change since an earlier batch) are looked up first
//! in one statement and left out; a checkpoint or blob that is there anyway (a writer
//! beside the copy put the same key meanwhile) fails the `COPY` with a unique
//! violation, the transaction is rolled back, and the batch goes in through `put`'s
//! own statements instead.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::future::Future;

use bytes::{BufMut, BytesMut};
use futures_util::pin_mut;
use tokio_postgres::binary_copy::BinaryCopyInWriter;
use tokio_postgres::error::SqlState;
use tokio_postgres::types::{to_sql_checked, IsNull, ToSql, Type};

use super::db::{db, join_all, Exec, Param};
use super::rows::{Blobs, SplitValues};
use super::sql::PageBlobs;
use super::{PostgresSaver, PutRow};
use crate::saver::types::{ChannelVersions, Checkpoint, CheckpointMetadata};
use crate::saver::{CheckpointConfig, CheckpointTuple, Result};
use crate::TypedBytes;

/// JSON text sent as a `jsonb` value in binary format (version 1, then the text), as
/// `$n::jsonb` would take it from text.
#[derive(Debug)]
struct JsonbText<'a>(&'a str);

impl ToSql for JsonbText<'_> {
    fn to_sql(
        &self,
        _ty: &Type,
        out: &mut BytesMut,
    ) -> std::result::Result<IsNull, Box<dyn std::error::Error + Sync + Send>> {
        out.put_u8(1);
        out.extend_from_slice(self.0.as_bytes());
        Ok(IsNull::No)
    }

    fn accepts(ty: &Type) -> bool {
        *ty == Type::JSONB
    }

    to_sql_checked!();
}

/// What [`put_batch`](PostgresSaver::put_batch) sent for one checkpoint: its parent,
/// its checkpoint (inline values and blob rows) and its metadata, as `put` stores them.
pub(crate) struct SentRow {
    parent: Option<String>,
    split: SplitValues,
    metadata_json: String,
    /// For each of `split`'s blobs, whether the batch's `COPY` stored that very row
    /// (these bytes, at a key that was free): a `COPY` stores every row it is sent or
    /// none, so there is nothing of it to read back. Blobs that were there before, and
    /// every blob `put`'s statements sent (which leave a taken key as it is), are read
    /// back by [`holds_sent`](PostgresSaver::holds_sent).
    copied: Vec<bool>,
}

/// A blob's key: thread, namespace, channel, version.
type BlobKey<'a> = (&'a str, &'a str, &'a str, &'a str);

/// One checkpoint for [`put_batch`](PostgresSaver::put_batch): `put`'s config (its
/// parent's id), checkpoint, metadata and new versions, and blobs made already for
/// channels the checkpoint holds no value for (each at its `channel_versions`
/// version): [`split_msgpack`](super::rows::split_msgpack)'s.
pub(crate) type PutItem<'a> = (
    CheckpointConfig,
    &'a Checkpoint,
    &'a CheckpointMetadata,
    &'a ChannelVersions,
    &'a [(String, TypedBytes)],
);

/// Adds `blobs` (channel, pair) to a checkpoint's split, each at the checkpoint's
/// version of its channel (a channel without one has nothing to key its blob by: an
/// error, nothing is stored).
fn add_blobs(
    split: &mut SplitValues,
    checkpoint: &Checkpoint,
    blobs: &[(String, TypedBytes)],
) -> Result<()> {
    for (ch, typed) in blobs {
        let Some(version) = checkpoint.channel_versions.get(ch) else {
            return Err(super::error::PgFault::NotJsonb {
                what: "checkpoint",
                path: format!("$.channel_values.{ch}"),
                reason: "the channel has no version to key a blob by".to_owned(),
            }
            .into());
        };
        split.channels.push(ch.clone());
        split.versions.push(version.to_string());
        split.types.push(typed.type_tag.clone());
        split.blobs.push(typed.data.clone());
    }
    Ok(())
}

/// A pending write as a store copy sent it: task id, task path, index, channel, type
/// tag, bytes.
pub(crate) type SentWrite<'a> = (&'a str, &'a str, i64, &'a str, &'a str, &'a [u8]);

/// Whether two JSON texts hold the same value: JSONB keeps no key order, spacing or
/// number spelling, so the text read back is compared with the text sent as values.
/// Text either side cannot parse (a number beyond `f64`) is not the same here.
fn same_json(stored: &str, sent: &str) -> bool {
    if same_but_spaces(stored.as_bytes(), sent.as_bytes()) {
        return true;
    }
    match (
        serde_json::from_str::<serde_json::Value>(stored),
        serde_json::from_str::<serde_json::Value>(sent),
    ) {
        (Ok(a), Ok(b)) => a == b,
        _ => false,
    }
}

/// Whether `stored` is `sent` with spaces added outside its strings: JSONB's text of a
/// document written with JSONB's key order (the saver's JSON writer) is that, unless a
/// number is spelled otherwise. Linear, nothing allocated: parsing both texts as JSON
/// values was 8% of a copy's CPU (2026-11-29).
fn same_but_spaces(stored: &[u8], sent: &[u8]) -> bool {
    let (mut i, mut j) = (0, 0);
    let (mut in_str, mut escaped) = (false, false);
    while let Some(&b) = sent.get(j) {
        let Some(&a) = stored.get(i) else {
            return false;
        };
        if !in_str && a == b' ' && b != b' ' {
            i += 1;
            continue;
        }
        if a != b {
            return false;
        }
        if in_str {
            if escaped {
                escaped = false;
            } else if a == b'\\' {
                escaped = true;
            } else if a == b'"' {
                in_str = false;
            }
        } else if a == b'"' {
            in_str = true;
        }
        i += 1;
        j += 1;
    }
    stored
        .get(i..)
        .is_some_and(|rest| rest.iter().all(|c| *c == b' '))
}

/// A blob row as `COPY` sends it: thread, ns, channel, version, type, bytes.
type BlobRow<'a> = (&'a str, &'a str, &'a str, &'a str, &'a str, &'a [u8]);

/// Of `len` keys sent as arrays, which ones a statement found: its rows' first column
/// is the 1-based position (`WITH ORDINALITY`) of each key found.
pub(crate) fn found_positions(
    rows: &[tokio_postgres::Row],
    len: usize,
) -> std::result::Result<Vec<bool>, tokio_postgres::Error> {
    let mut found = vec![false; len];
    for row in rows {
        let n: i64 = row.try_get(0)?;
        if let Some(slot) = usize::try_from(n - 1).ok().and_then(|i| found.get_mut(i)) {
            *slot = true;
        }
    }
    Ok(found)
}

/// Sends `rows` (values of `types`, in order) with one `COPY … FROM STDIN (FORMAT
/// binary)` statement `sql` in `tx`; how many rows went.
pub(crate) async fn copy_in<'a, R: AsRef<[&'a (dyn ToSql + Sync)]>>(
    tx: &tokio_postgres::Transaction<'_>,
    sql: &str,
    types: &[Type],
    rows: impl Iterator<Item = R>,
) -> std::result::Result<u64, tokio_postgres::Error> {
    let writer = BinaryCopyInWriter::new(tx.copy_in(sql).await?, types);
    pin_mut!(writer);
    let mut n = 0u64;
    for row in rows {
        writer.as_mut().write(row.as_ref()).await?;
        n += 1;
    }
    writer.finish().await?;
    Ok(n)
}

/// What [`put_batch`](PostgresSaver::put_batch) does when a key its `COPY` writes is
/// taken already.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Taken {
    /// Puts the batch with `put`'s own statements instead.
    Put,
    /// Stores nothing and says so: the caller looks up which checkpoints are there.
    Report,
}

/// Which blob keys [`put_batch`](PostgresSaver::put_batch) looks up in the table
/// before its `COPY` sends the blobs not there.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum BlobLookUp {
    /// Every one.
    All,
    /// Only those of the batch's first thread and namespace: for a batch taken to be
    /// new to the table, in key order, where only that namespace can hold blobs
    /// already (written by the batch before, which ended in it). A key there all the
    /// same fails the `COPY` as a taken checkpoint does ([`Taken`]). The look-up of
    /// every key was 0.13 s of the server's 2.7 s and a round trip per batch
    /// (100,000 checkpoints SQLite → Postgres, 2026-12-02).
    FirstNamespace,
}

/// Whether `e` is a unique violation: a key the `COPY` wrote was there already.
pub(crate) fn unique_violation(e: &tokio_postgres::Error) -> bool {
    e.code() == Some(&SqlState::UNIQUE_VIOLATION)
}

impl PostgresSaver {
    /// [`put`](crate::saver::CheckpointSaver::put) of many checkpoints in **one** transaction on one
    /// connection: the same rows, one commit (a store copy writes its batches this
    /// way), sent with `COPY` (see the module's notes), or `put`'s statements
    /// (pipelined) where a key is already taken. Either every row is stored or none
    /// is; a lost connection fails the batch (run it again: `put` is idempotent).
    /// Returns the rows sent for each checkpoint, in order, for
    /// [`holds_sent`](Self::holds_sent); `None` when a key was taken and `taken` is
    /// [`Taken::Report`], or when `ready` said no (nothing is stored). The transaction
    /// commits only once `ready` gives `true`: the rows are sent meanwhile (a store
    /// copy's pending writes go in on another connection, and must be committed first).
    /// `blobs`: which of the batch's blob keys are looked up before the `COPY`
    /// ([`BlobLookUp`]).
    ///
    /// # Errors
    /// As `put`: a value the serializer refuses or JSONB cannot hold, metadata nested
    /// too deep, the server's errors (then nothing is stored).
    pub(crate) async fn put_batch(
        &self,
        items: &[PutItem<'_>],
        (taken, blobs): (Taken, BlobLookUp),
        ready: impl Future<Output = bool>,
    ) -> Result<Option<Vec<SentRow>>> {
        let rows = items
            .iter()
            .map(|(config, checkpoint, metadata, versions, blobs)| {
                let mut row = self.put_row(config, checkpoint, metadata, versions)?;
                add_blobs(&mut row.split, checkpoint, blobs)?;
                Ok(row)
            })
            .collect::<Result<Vec<_>>>()?;
        let mut client = self.client("put").await?;
        let lz4 = self.lz4_usable(&*client).await.map_err(db("put"))?;
        let sent = |rows: Vec<PutRow<'_>>, copied: Vec<Vec<bool>>| {
            rows.into_iter()
                .zip(copied.into_iter().chain(std::iter::repeat_with(Vec::new)))
                .map(|(r, copied)| SentRow {
                    parent: r.parent.map(str::to_owned),
                    split: r.split,
                    metadata_json: r.metadata_json,
                    copied,
                })
                .collect()
        };
        match self.copy_rows(&mut client, &rows, lz4, blobs).await {
            Ok((tx, copied)) => {
                if !ready.await {
                    // Dropped: rolled back.
                    return Ok(None);
                }
                tx.commit().await.map_err(db("put"))?;
                return Ok(Some(sent(rows, copied)));
            }
            Err(e) if unique_violation(&e) && taken == Taken::Report => return Ok(None),
            Err(e) if unique_violation(&e) => {}
            Err(e) => return Err(db("put")(e)),
        }
        if !ready.await {
            return Ok(None);
        }
        let sql = self.sql.put.pick(lz4);
        let tx = client.transaction().await.map_err(db("put"))?;
        // The statements are pipelined: one round trip's wait for the batch, not one
        // per checkpoint.
        let blobs: Vec<_> = rows.iter().map(|r| r.split.blob_slices()).collect();
        let params: Vec<_> = rows.iter().zip(&blobs).map(|(r, b)| r.params(b)).collect();
        let puts = params
            .iter()
            .map(|p| tx.rows(self.settings.mode, sql, p))
            .collect();
        for done in join_all(puts).await {
            done.map_err(db("put"))?;
        }
        tx.commit().await.map_err(db("put"))?;
        drop(params);
        drop(blobs);
        Ok(Some(sent(rows, Vec::new())))
    }

    /// Whether the tables hold exactly what [`put_batch`](Self::put_batch) sent for the
    /// checkpoints `keys` (`sent`) and what a store copy sent as their pending writes
    /// (`writes`): per checkpoint, its row with the same parent and the same checkpoint
    /// and metadata JSON (compared as values), each of its blobs with the same type and
    /// bytes (but those the batch's `COPY` stored itself: [`SentRow::copied`]), and the
    /// same write rows. Three statements for the batch, pipelined, each
    /// reading ranges of keys (per thread and namespace the batch's lowest to highest
    /// id; per channel its lowest to highest version), whose rows are compared as they
    /// are, nothing decoded. A `false` is for the caller to look at closer (a row
    /// someone else stored there, a number JSONB spells otherwise, a key outside its
    /// range under the database's collation), not yet a difference.
    ///
    /// # Errors
    /// The server's (a lost connection among them).
    pub(crate) async fn holds_sent(
        &self,
        keys: &[(&str, &str, &str)],
        sent: &[&SentRow],
        writes: &[Vec<SentWrite<'_>>],
        whole: bool,
    ) -> Result<Vec<bool>> {
        if keys.is_empty() {
            return Ok(Vec::new());
        }
        let position: HashMap<(&str, &str, &str), usize> =
            keys.iter().enumerate().map(|(i, k)| (*k, i)).collect();
        // The ranges: (thread, ns) -> ids; (thread, ns, channel) -> versions.
        let mut ids: BTreeMap<(&str, &str), (&str, &str)> = BTreeMap::new();
        // Only the blobs a `COPY` of the batch did not store itself are read back.
        let mut versions: BTreeMap<(&str, &str, &str), (&str, &str)> = BTreeMap::new();
        fn widen<'a>(range: &mut (&'a str, &'a str), v: &'a str) {
            range.0 = range.0.min(v);
            range.1 = range.1.max(v);
        }
        for ((t, ns, id), row) in keys.iter().zip(sent) {
            widen(ids.entry((*t, *ns)).or_insert((*id, *id)), id);
            let s = &row.split;
            for (i, (ch, v)) in s.channels.iter().zip(&s.versions).enumerate() {
                if row.copied.get(i).copied().unwrap_or(false) {
                    continue;
                }
                let range = versions.entry((*t, *ns, ch.as_str())).or_insert((v, v));
                widen(range, v.as_str());
            }
        }
        let id_cols: [Vec<&str>; 4] = [
            ids.keys().map(|k| k.0).collect(),
            ids.keys().map(|k| k.1).collect(),
            ids.values().map(|r| r.0).collect(),
            ids.values().map(|r| r.1).collect(),
        ];
        let version_cols: [Vec<&str>; 5] = [
            versions.keys().map(|k| k.0).collect(),
            versions.keys().map(|k| k.1).collect(),
            versions.keys().map(|k| k.2).collect(),
            versions.values().map(|r| r.0).collect(),
            versions.values().map(|r| r.1).collect(),
        ];
        let [a, b, c, d] = &id_cols;
        let id_params: [Param<'_>; 4] = [
            (a, Type::TEXT_ARRAY),
            (b, Type::TEXT_ARRAY),
            (c, Type::TEXT_ARRAY),
            (d, Type::TEXT_ARRAY),
        ];
        let [a, b, c, d, e] = &version_cols;
        let version_params: [Param<'_>; 5] = [
            (a, Type::TEXT_ARRAY),
            (b, Type::TEXT_ARRAY),
            (c, Type::TEXT_ARRAY),
            (d, Type::TEXT_ARRAY),
            (e, Type::TEXT_ARRAY),
        ];
        let client = self.client("copy").await?;
        let mode = self.settings.mode;
        // Pipelined: one round trip's wait for the three. The write rows of a batch
        // whose every write row went in at a free key (`whole`) are counted instead of
        // read: with no trigger on the table (which may change or drop a row as it
        // goes in), a count of what was sent says they are as sent, and a count above
        // it a write row someone else stored under one of the batch's checkpoints
        // (then they are read and compared).
        let writes_sql = if whole {
            &self.sql.writes_counted
        } else {
            &self.sql.stored_writes
        };
        let (checkpoints, mut stored_writes, blobs) = futures_util::future::try_join3(
            client.rows(mode, &self.sql.stored_checkpoints, &id_params),
            client.rows(mode, writes_sql, &id_params),
            client.rows(mode, &self.sql.stored_blobs, &version_params),
        )
        .await
        .map_err(db("copy"))?;
        let mut writes_as_sent = false;
        if whole {
            let sent_writes: usize = writes.iter().map(Vec::len).sum();
            if let Some(row) = stored_writes.first() {
                let count: i64 = row.try_get(0).map_err(db("copy"))?;
                let triggers: bool = row.try_get(1).map_err(db("copy"))?;
                writes_as_sent = !triggers && usize::try_from(count) == Ok(sent_writes);
            }
            stored_writes = if writes_as_sent {
                Vec::new()
            } else {
                client
                    .rows(mode, &self.sql.stored_writes, &id_params)
                    .await
                    .map_err(db("copy"))?
            };
        }
        let col = |e| db("copy")(e);
        let at = |row: &tokio_postgres::Row| -> Result<Option<usize>> {
            let key: (&str, &str, &str) = (
                row.try_get(0).map_err(col)?,
                row.try_get(1).map_err(col)?,
                row.try_get(2).map_err(col)?,
            );
            Ok(position.get(&key).copied())
        };
        // A checkpoint is held when its row was found and matched.
        let mut held = vec![false; keys.len()];
        for row in &checkpoints {
            let Some(i) = at(row)? else {
                continue;
            };
            let (Some(slot), Some(s)) = (held.get_mut(i), sent.get(i)) else {
                continue;
            };
            let parent: Option<&str> = row.try_get(3).map_err(col)?;
            let checkpoint: &str = row.try_get(4).map_err(col)?;
            let metadata: &str = row.try_get(5).map_err(col)?;
            *slot = parent == s.parent.as_deref()
                && same_json(checkpoint, &s.split.checkpoint_json)
                && same_json(metadata, &s.metadata_json);
        }
        let mut by_key: HashMap<[&str; 4], (&str, &[u8])> = HashMap::new();
        for row in &blobs {
            let key = [
                row.try_get(0).map_err(col)?,
                row.try_get(1).map_err(col)?,
                row.try_get(2).map_err(col)?,
                row.try_get(3).map_err(col)?,
            ];
            let value = (row.try_get(4).map_err(col)?, row.try_get(5).map_err(col)?);
            by_key.insert(key, value);
        }
        for (((t, ns, _), row), h) in keys.iter().zip(sent).zip(held.iter_mut()) {
            *h &= row
                .split
                .blob_rows()
                .enumerate()
                .all(|(i, (ch, v, ty, blob))| {
                    row.copied.get(i).copied().unwrap_or(false)
                        || by_key.get(&[*t, *ns, ch, v]) == Some(&(ty, blob))
                });
        }
        let mut stored: Vec<Vec<SentWrite<'_>>> = keys.iter().map(|_| Vec::new()).collect();
        for row in &stored_writes {
            let Some(list) = at(row)?.and_then(|i| stored.get_mut(i)) else {
                continue;
            };
            let idx: i32 = row.try_get(5).map_err(col)?;
            list.push((
                row.try_get(3).map_err(col)?,
                row.try_get(4).map_err(col)?,
                i64::from(idx),
                row.try_get(6).map_err(col)?,
                row.try_get(7).map_err(col)?,
                row.try_get(8).map_err(col)?,
            ));
        }
        if writes_as_sent {
            return Ok(held);
        }
        let order = |a: &SentWrite<'_>, b: &SentWrite<'_>| (a.0, a.2).cmp(&(b.0, b.2));
        for ((mut there, expected), h) in stored.into_iter().zip(writes).zip(held.iter_mut()) {
            let mut expected = expected.clone();
            there.sort_by(order);
            expected.sort_by(order);
            *h &= there == expected;
        }
        Ok(held)
    }

    /// The rows of `put` for a batch in one transaction: the blobs not in the table
    /// yet, then the checkpoints, each table with one `COPY`; the transaction, for the
    /// caller to commit. A unique violation means a key was taken (nothing is stored:
    /// the transaction is rolled back).
    async fn copy_rows<'c>(
        &self,
        client: &'c mut deadpool_postgres::Object,
        rows: &[PutRow<'_>],
        lz4: bool,
        look_up: BlobLookUp,
    ) -> std::result::Result<
        (deadpool_postgres::Transaction<'c>, Vec<Vec<bool>>),
        tokio_postgres::Error,
    > {
        let tx = client.transaction().await?;
        if lz4 {
            // As the `put` statement's own `set_config` (see `LZ4_CTE`).
            tx.batch_execute("SET LOCAL default_toast_compression = 'lz4'")
                .await?;
        }
        // Each blob key once (checkpoints of one thread share unchanged channels).
        let mut seen = HashSet::new();
        let mut blobs: Vec<BlobRow<'_>> = Vec::new();
        for r in rows {
            for (ch, version, ty, blob) in r.split.blob_rows() {
                if seen.insert((r.thread, r.ns, ch, version)) {
                    blobs.push((r.thread, r.ns, ch, version, ty, blob));
                }
            }
        }
        // The blob rows the `COPY` stores: their keys, types and bytes.
        let mut stored: HashMap<BlobKey<'_>, (&str, &[u8])> = HashMap::new();
        // The keys looked up, and those taken to be free.
        let first = rows.first().map(|r| (r.thread, r.ns));
        let (looked_up, free): (Vec<BlobRow<'_>>, Vec<BlobRow<'_>>) = blobs
            .into_iter()
            .partition(|b| look_up == BlobLookUp::All || Some((b.0, b.1)) == first);
        if !looked_up.is_empty() || !free.is_empty() {
            let present = if looked_up.is_empty() {
                Vec::new()
            } else {
                let column = |i: usize| -> Vec<&str> {
                    looked_up
                        .iter()
                        .map(|b| match i {
                            0 => b.0,
                            1 => b.1,
                            2 => b.2,
                            _ => b.3,
                        })
                        .collect()
                };
                let (threads, nss, channels, versions) =
                    (column(0), column(1), column(2), column(3));
                let there = tx
                    .rows(
                        self.settings.mode,
                        &self.sql.blobs_present,
                        &[
                            (&threads, Type::TEXT_ARRAY),
                            (&nss, Type::TEXT_ARRAY),
                            (&channels, Type::TEXT_ARRAY),
                            (&versions, Type::TEXT_ARRAY),
                        ],
                    )
                    .await?;
                found_positions(&there, looked_up.len())?
            };
            let kept = looked_up
                .iter()
                .zip(&present)
                .filter(|(_, there)| !**there)
                .map(|(b, _)| b)
                .chain(&free);
            stored.extend(kept.clone().map(|b| ((b.0, b.1, b.2, b.3), (b.4, b.5))));
            copy_in(
                &tx,
                &self.sql.copy_blobs,
                &[
                    Type::TEXT,
                    Type::TEXT,
                    Type::TEXT,
                    Type::TEXT,
                    Type::TEXT,
                    Type::BYTEA,
                ],
                kept.map(|b| -> [&(dyn ToSql + Sync); 6] { [&b.0, &b.1, &b.2, &b.3, &b.4, &b.5] }),
            )
            .await?;
            // A trigger of the table's own may have changed a row as it went in: then
            // every blob is read back. (Asked after the `COPY`, in its transaction: a
            // trigger made or dropped meanwhile waits for this transaction's lock.)
            if !stored.is_empty() {
                let triggers: bool = tx
                    .query_one(&self.sql.blob_triggers, &[])
                    .await?
                    .try_get(0)?;
                if triggers {
                    stored.clear();
                }
            }
        }
        let docs: Vec<(JsonbText<'_>, JsonbText<'_>)> = rows
            .iter()
            .map(|r| {
                (
                    JsonbText(&r.split.checkpoint_json),
                    JsonbText(&r.metadata_json),
                )
            })
            .collect();
        copy_in(
            &tx,
            &self.sql.copy_checkpoints,
            &[
                Type::TEXT,
                Type::TEXT,
                Type::TEXT,
                Type::TEXT,
                Type::JSONB,
                Type::JSONB,
            ],
            rows.iter()
                .zip(&docs)
                .map(|(r, (cp, md))| -> [&(dyn ToSql + Sync); 6] {
                    [&r.thread, &r.ns, &r.id, &r.parent, cp, md]
                }),
        )
        .await?;
        // Per checkpoint, per blob: stored by this `COPY` with these very bytes (a
        // checkpoint sharing a key with one before it in the batch, but other bytes,
        // is read back and found to differ).
        let copied = rows
            .iter()
            .map(|r| {
                r.split
                    .blob_rows()
                    .map(|(ch, v, ty, blob)| {
                        stored.get(&(r.thread, r.ns, ch, v)) == Some(&(ty, blob))
                    })
                    .collect()
            })
            .collect();
        Ok((tx, copied))
    }

    /// [`get_tuples`](Self::get_tuples) in the order of `keys`, `None` for a key not
    /// there; on the connection `on` says.
    ///
    /// # Errors
    /// As `get_tuple`.
    pub(crate) async fn get_tuples_in_order(
        &self,
        keys: &[(&str, &str, &str)],
        parts: TupleParts,
        on: ReadOn<'_>,
    ) -> Result<Vec<Option<(CheckpointTuple, Blobs)>>> {
        let mut by_key: HashMap<(String, String, String), (CheckpointTuple, Blobs)> = self
            .get_tuples(keys, parts, on)
            .await?
            .into_iter()
            .map(|(t, blobs)| {
                let c = &t.config;
                let key = (
                    c.thread_id.clone().unwrap_or_default(),
                    c.ns().to_owned(),
                    c.checkpoint_id.clone().unwrap_or_default(),
                );
                (key, (t, blobs))
            })
            .collect();
        Ok(keys
            .iter()
            .map(|(t, ns, id)| {
                by_key.remove(&((*t).to_owned(), (*ns).to_owned(), (*id).to_owned()))
            })
            .collect())
    }

    /// [`get_tuple`](crate::saver::CheckpointSaver::get_tuple) of many checkpoints by key in one
    /// statement: the tuples found, each read exactly as `get_tuple` reads it (its
    /// writes, blobs and, before v4, its parent's sends), in no particular order. A store
    /// copy verifies each batch this way: one round trip for the batch instead of one
    /// per checkpoint (measured: 10,000 checkpoints verified one by one, four in flight,
    /// were most of a 2.1 s copy SQLite → Postgres). `parts` may leave out the writes
    /// and keep blobs as stored ([`TupleParts`]).
    ///
    /// On a connection of the pool, or one the caller holds ([`ReadOn`]).
    ///
    /// # Errors
    /// As `get_tuple`; a snapshot that is not of the form the server exports, or no
    /// longer held open, is an error (nothing is read).
    pub(crate) async fn get_tuples(
        &self,
        keys: &[(&str, &str, &str)],
        parts: TupleParts,
        on: ReadOn<'_>,
    ) -> Result<Vec<(CheckpointTuple, Blobs)>> {
        let (Some(first), Some(last)) = (keys.first(), keys.last()) else {
            return Ok(Vec::new());
        };
        // The blobs from a second statement for more than a few keys: 64 keys read with
        // their blobs in the statement took the server 7.7 ms, without them 3.1 ms
        // (2026-11-29, the 100,000-checkpoint bench store; `PageBlobs::for_page`).
        let page_blobs = PageBlobs::for_page(Some(keys.len()));
        // Key by key, the keys' three columns; a run, its threads, each once (the run
        // holds each thread's keys together).
        let mut threads: Vec<&str> = keys.iter().map(|k| k.0).collect();
        let (namespaces, ids): (Vec<&str>, Vec<&str>) = if parts.run {
            threads.dedup();
            (Vec::new(), Vec::new())
        } else {
            (
                keys.iter().map(|k| k.1).collect(),
                keys.iter().map(|k| k.2).collect(),
            )
        };
        let (where_clause, params): (&str, Vec<Param<'_>>) = if parts.run {
            (
                "WHERE (thread_id, checkpoint_ns, checkpoint_id) >= ($1, $2, $3)
        AND (thread_id, checkpoint_ns, checkpoint_id) <= ($4, $5, $6)
        AND thread_id = ANY($7::text[])",
                vec![
                    (&first.0, Type::TEXT),
                    (&first.1, Type::TEXT),
                    (&first.2, Type::TEXT),
                    (&last.0, Type::TEXT),
                    (&last.1, Type::TEXT),
                    (&last.2, Type::TEXT),
                    (&threads, Type::TEXT_ARRAY),
                ],
            )
        } else {
            (
                "WHERE (thread_id, checkpoint_ns, checkpoint_id) IN (
        SELECT * FROM unnest($1::text[], $2::text[], $3::text[]))",
                vec![
                    (&threads, Type::TEXT_ARRAY),
                    (&namespaces, Type::TEXT_ARRAY),
                    (&ids, Type::TEXT_ARRAY),
                ],
            )
        };
        let sql = self
            .sql
            .select_rows(where_clause, None, page_blobs, parts.writes);
        let snapshot = match on {
            ReadOn::Client(client) => {
                return self
                    .select_parts(
                        client,
                        &sql,
                        &params,
                        (page_blobs, parts.raw_blobs),
                        "get_tuple",
                    )
                    .await;
            }
            ReadOn::Pool => None,
            ReadOn::Snapshot(snapshot) => Some(snapshot),
        };
        let client = self.client("get_tuple").await?;
        if let Some(snapshot) = snapshot {
            // The identifier goes into the statement's text (SET takes no parameter):
            // only what the server exports (hex digits and dashes) is let through.
            if snapshot.is_empty() || !snapshot.bytes().all(|b| b.is_ascii_hexdigit() || b == b'-')
            {
                return Err(super::error::PgFault::Config {
                    reason: format!(
                        "{snapshot:?} is not a snapshot identifier pg_export_snapshot() returns"
                    ),
                }
                .into());
            }
            if let Err(e) = client
                .batch_execute(&format!(
                    "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY; SET TRANSACTION SNAPSHOT '{snapshot}'"
                ))
                .await
            {
                // A snapshot no longer held (its transaction ended, its connection
                // lost) fails the SET inside the transaction just begun: ended here,
                // the connection goes back to the pool outside one.
                let _ = client.batch_execute("ROLLBACK").await;
                return Err(db("get_tuple")(e));
            }
        }
        let read = self
            .select_parts(
                &*client,
                &sql,
                &params,
                (page_blobs, parts.raw_blobs),
                "get_tuple",
            )
            .await;
        if snapshot.is_some() {
            // Ends the transaction whatever the read gave (after a failed statement
            // COMMIT rolls back), so the connection goes back to the pool outside one.
            let ended = client
                .batch_execute("COMMIT")
                .await
                .map_err(db("get_tuple"));
            if read.is_ok() {
                ended?;
            }
        }
        read
    }
}

/// The connection [`PostgresSaver::get_tuples`] reads on.
#[derive(Clone, Copy, Debug)]
pub(crate) enum ReadOn<'a> {
    /// One of the saver's pool.
    Pool,
    /// One of the pool, as of a snapshot another session's open `REPEATABLE READ`
    /// transaction exported (`pg_export_snapshot()`), so that the read sees what that
    /// transaction sees and nothing committed since (a store copy reads its source's
    /// keys there and the checkpoints here: one point in time for both).
    Snapshot(&'a str),
    /// The caller's (a store command's own, where the server has no slot for the
    /// pool's); inside the transaction it may hold, as of its snapshot.
    Client(&'a tokio_postgres::Client),
}

/// What [`PostgresSaver::get_tuples`] reads of each checkpoint besides what `get_tuple`
/// reads.
#[derive(Clone, Copy, Debug)]
pub(crate) struct TupleParts {
    /// Its pending writes; without them the tuples have none (for a reader that reads
    /// them as rows, apart: aggregating and decoding them here too took about a fifth
    /// of the server's and the reader's time, 2026-11-29, 100,000 checkpoints Postgres
    /// → SQLite).
    pub(crate) writes: bool,
    /// Channel values whose blobs are clear msgpack, `bytes` or `null` pairs kept as
    /// stored, apart from the tuple ([`PostgresSaver::select_parts`]): for a writer
    /// that takes values as their bytes, without decoding and encoding them again.
    pub(crate) raw_blobs: bool,
    /// The keys are a run of the table's keys in its own order (the primary key's, as
    /// `ORDER BY thread_id, checkpoint_ns, checkpoint_id` gives them, in one snapshot):
    /// read as the range from the first to the last, of the run's threads, instead of
    /// key by key (a run of 128 of the 100,000-checkpoint bench store: 0.39–0.47 ms of
    /// the server's against 0.83 ms, EXPLAIN ANALYZE, 2026-12-06). A checkpoint inside
    /// the range that is not one of the keys is read too.
    pub(crate) run: bool,
}

impl TupleParts {
    /// Everything `get_tuple` reads, decoded.
    pub(crate) const WHOLE: TupleParts = TupleParts {
        writes: true,
        raw_blobs: false,
        run: false,
    };
}

#[cfg(test)]
mod tests {
    use super::same_but_spaces;
    use crate::saver::postgres::jsonb;
    use crate::value::Value;

    /// The server prints a document written by [`jsonb::write`] back as the same text
    /// but for its spaces, so the read-back takes the fast path: keys of every length,
    /// multibyte ones, nested maps, the saver's metadata and checkpoint shapes.
    #[tokio::test]
    async fn the_server_prints_back_what_was_written_but_for_spaces() {
        let url = match std::env::var("LGCODEC_TEST_PG_URL") {
            Ok(u) if !u.is_empty() => u,
            _ => return,
        };
        let (client, conn) = tokio_postgres::connect(&url, tokio_postgres::NoTls)
            .await
            .expect("connect to LGCODEC_TEST_PG_URL");
        tokio::spawn(conn);
        let docs = [
            Value::map([
                ("source", Value::from("loop")),
                ("step", Value::from(0i64)),
                ("parents", Value::map([("", Value::from("x, y: z"))])),
            ]),
            Value::map([
                ("v", Value::from(4i64)),
                ("ts", Value::from("2026-12-02T00:44:00.621553+00:00")),
                ("id", Value::from("1f1ede97-714d-6f31-8000-b7c2bbb63e68")),
                (
                    "channel_versions",
                    Value::map([("messages", 1i64), ("step", 1), ("notes", 1)]),
                ),
                ("versions_seen", Value::map::<&str, Value>([])),
                ("updated_channels", Value::Nil),
                (
                    "channel_values",
                    Value::map([("zz", Value::F64(0.5)), ("\u{e9}", Value::Bool(true))]),
                ),
            ]),
            Value::map([("b", 1i64), ("a", 2), ("B", 3), ("ab", 4), ("\u{e9}", 5)]),
        ];
        for doc in &docs {
            let ours = jsonb::write(doc, "checkpoint").expect("JSONB can hold it");
            let printed: String = client
                .query_one("SELECT $1::text::jsonb::text", &[&ours])
                .await
                .expect("the server reads it")
                .get(0);
            assert!(
                same_but_spaces(printed.as_bytes(), ours.as_bytes()),
                "printed {printed}\nwritten {ours}"
            );
        }
    }

    /// JSONB's text puts a space after `,` and `:` between items; inside a string every
    /// byte counts, an escaped quote included.
    #[test]
    fn spaces_only_between_items_make_the_same_text() {
        let same = |stored: &str, sent: &str| same_but_spaces(stored.as_bytes(), sent.as_bytes());
        assert!(same(
            r#"{"a": 1, "b": [1, 2], "c": "x, y: z"}"#,
            r#"{"a":1,"b":[1,2],"c":"x, y: z"}"#
        ));
        assert!(!same(r#"{"c": "x y"}"#, r#"{"c":"xy"}"#));
        assert!(!same(r#"{"c": "a\" b"}"#, r#"{"c":"a\"b"}"#));
        assert!(same(r#"{"c": "a\\", "d": 1}"#, r#"{"c":"a\\","d":1}"#));
        assert!(!same(r#"{"a": 1}"#, r#"{"a":1"#));
        assert!(!same(r#"{"a": 1"#, r#"{"a":1}"#));
        assert!(!same(r#"{"a": 10}"#, r#"{"a":1}"#));
    }
}
