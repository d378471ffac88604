//! The SQLite saver's rows: reading `checkpoints` and `writes` rows as stored, and
//! decoding them into checkpoints, metadata and pending writes with the shared row
//! codec (`saver::codec`), as `postgres::rows` and `memory::rows` do.

#[allow(clippy::wildcard_imports)]
use super::*;
use crate::saver::codec::{metadata_from_value, RowCodec, RowKey};

/// One `checkpoints` row as stored.
pub(super) struct CheckpointRow {
    pub(super) thread_id: String,
    pub(super) checkpoint_ns: String,
    pub(super) checkpoint_id: String,
    pub(super) parent: Option<String>,
    pub(super) type_tag: Option<String>,
    pub(super) checkpoint: Option<Vec<u8>>,
    pub(super) metadata: Option<Vec<u8>>,
}

pub(super) const CHECKPOINT_COLUMNS: &str =
    "thread_id, checkpoint_ns, checkpoint_id, parent_checkpoint_id, type, checkpoint, metadata";

/// A BLOB or TEXT column's bytes (Python writes BLOBs; a hand-made row may hold TEXT).
pub(super) fn bytes_col(row: &Row<'_>, i: usize) -> rusqlite::Result<Option<Vec<u8>>> {
    Ok(match row.get_ref(i)? {
        ValueRef::Null => None,
        ValueRef::Blob(b) | ValueRef::Text(b) => Some(b.to_vec()),
        ValueRef::Integer(n) => Some(n.to_string().into_bytes()),
        ValueRef::Real(f) => Some(f.to_string().into_bytes()),
    })
}

impl CheckpointRow {
    pub(super) fn from_row(row: &Row<'_>) -> rusqlite::Result<Self> {
        Ok(CheckpointRow {
            thread_id: row.get(0)?,
            checkpoint_ns: row.get(1)?,
            checkpoint_id: row.get(2)?,
            parent: row.get(3)?,
            type_tag: row.get(4)?,
            checkpoint: bytes_col(row, 5)?,
            metadata: bytes_col(row, 6)?,
        })
    }

    /// The row's key, borrowed, for the shared row codec.
    pub(super) fn row_key(&self) -> RowKey<'_> {
        RowKey::new(&self.thread_id, &self.checkpoint_ns, &self.checkpoint_id)
    }

    pub(super) fn key(&self) -> (String, String, String) {
        (
            self.thread_id.clone(),
            self.checkpoint_ns.clone(),
            self.checkpoint_id.clone(),
        )
    }
}

/// One `writes` row as stored.
pub(super) struct WriteRow {
    pub(super) task_id: String,
    pub(super) channel: String,
    pub(super) type_tag: Option<String>,
    pub(super) value: Option<Vec<u8>>,
    pub(super) idx: i64,
}

/// `(thread, ns, checkpoint) → writes in (task_path, task_id, idx) order`.
pub(super) type WritesByCheckpoint = HashMap<(String, String, String), Vec<WriteRow>>;

/// The `writes` columns after the three key columns, in Python's sort order.
pub(super) const WRITE_SELECT: &str =
    "SELECT w.thread_id, w.checkpoint_ns, w.checkpoint_id, w.task_id, \
     w.channel, w.type, w.value, w.idx FROM writes w";
pub(super) const WRITE_ORDER: &str = "ORDER BY w.task_path, w.task_id, w.idx";

/// One `writes` row of [`WRITE_SELECT`], after its three key columns.
fn write_row(row: &Row<'_>) -> rusqlite::Result<WriteRow> {
    Ok(WriteRow {
        task_id: row.get(3)?,
        channel: row.get(4)?,
        type_tag: row.get(5)?,
        value: bytes_col(row, 6)?,
        idx: row.get(7)?,
    })
}

pub(super) fn collect_writes(rows: rusqlite::Rows<'_>) -> rusqlite::Result<WritesByCheckpoint> {
    let mut out: WritesByCheckpoint = HashMap::new();
    let mut rows = rows;
    while let Some(row) = rows.next()? {
        let key = (row.get(0)?, row.get(1)?, row.get(2)?);
        out.entry(key).or_default().push(write_row(row)?);
    }
    Ok(out)
}

/// Whether a checkpoint row and its writes are small enough to decode on the calling
/// task ([`INLINE_DECODE_BYTES`], nothing compressed).
pub(super) fn quick_to_decode(row: &CheckpointRow, writes: &[WriteRow]) -> bool {
    let compressed = |tag: &Option<String>| {
        tag.as_deref()
            .is_some_and(|t| t.contains(crate::compression::ZLIB_SUFFIX))
    };
    let len = |b: &Option<Vec<u8>>| b.as_ref().map_or(0, Vec::len);
    let bytes = writes.iter().map(|w| len(&w.value)).fold(
        len(&row.checkpoint) + len(&row.metadata),
        usize::saturating_add,
    );
    bytes <= INLINE_DECODE_BYTES
        && !compressed(&row.type_tag)
        && !writes.iter().any(|w| compressed(&w.type_tag))
}

/// The writes of a query for one checkpoint's key, in order: no map, no key copies.
pub(super) fn collect_writes_of_one(rows: rusqlite::Rows<'_>) -> rusqlite::Result<Vec<WriteRow>> {
    let mut out = Vec::new();
    let mut rows = rows;
    while let Some(row) = rows.next()? {
        out.push(write_row(row)?);
    }
    Ok(out)
}

impl Inner {
    /// A fresh decompression budget for one reading call.
    pub(super) fn call_budget(&self) -> DecompressionBudget {
        DecompressionBudget::new(self.max_decompressed_per_call)
    }

    /// The shared row codec over this saver's serializer.
    pub(super) fn codec(&self) -> RowCodec<'_> {
        RowCodec::new(&*self.serde)
    }

    pub(super) fn decode_checkpoint(&self, row: &CheckpointRow) -> Result<Checkpoint> {
        self.codec().checkpoint(
            row.row_key(),
            row.type_tag.as_deref(),
            row.checkpoint.as_deref().unwrap_or_default(),
        )
    }

    /// Python: `json.loads(metadata) if metadata is not None else {}`.
    pub(super) fn decode_metadata(&self, row: &CheckpointRow) -> Result<CheckpointMetadata> {
        let Some(text) = &row.metadata else {
            return Ok(CheckpointMetadata::default());
        };
        let value = crate::json::parse(text, METADATA_MAX_DEPTH)
            .map_err(|e| unreadable(RowKind::Metadata, row.row_key().location(), e))?;
        metadata_from_value(row.row_key(), &value)
    }

    pub(super) fn decode_writes(
        &self,
        row: &CheckpointRow,
        writes: &[WriteRow],
    ) -> Result<Vec<PendingWrite>> {
        let codec = self.codec();
        let key = row.row_key();
        writes
            .iter()
            .map(|w| {
                codec.write(
                    |task, _| key.write_location(task, w.idx),
                    w.task_id.clone(),
                    w.channel.clone(),
                    w.type_tag.as_deref(),
                    w.value.as_deref().unwrap_or_default(),
                )
            })
            .collect()
    }

    pub(super) fn decode_tuple(
        &self,
        row: &CheckpointRow,
        writes: &[WriteRow],
        config: CheckpointConfig,
    ) -> Result<CheckpointTuple> {
        let parent_config = row.row_key().parent_config(row.parent.as_deref());
        Ok(CheckpointTuple {
            config,
            checkpoint: self.decode_checkpoint(row)?,
            metadata: self.decode_metadata(row)?,
            parent_config,
            pending_writes: self.decode_writes(row, writes)?,
        })
    }
}

impl SqliteSaver {
    /// A copy of every stored row, as they are at rest: what a security review looks at.
    /// Checkpoint rows carry `dumps_typed` of the whole checkpoint (channel values
    /// included) and the metadata as `("json", its json.dumps text)`; SQLite has no
    /// blob table, so `blobs` is empty. Threads, namespaces and ids ascending; writes in
    /// `(task_path, task_id, idx)` order.
    ///
    /// # Errors
    /// [`ErrorKind::Storage`](crate::ErrorKind::Storage) if SQLite fails.
    pub async fn export_rows(&self) -> Result<RawRows> {
        self.run(|inner| {
            inner.conns.read("export_rows", |tx| {
                let mut rows = RawRows::default();
                let mut stmt = tx
                    .prepare(&format!(
                        "SELECT {CHECKPOINT_COLUMNS} FROM checkpoints \
                         ORDER BY thread_id, checkpoint_ns, checkpoint_id"
                    ))
                    .map_err(storage("export_rows"))?;
                let found = stmt
                    .query_map([], CheckpointRow::from_row)
                    .map_err(storage("export_rows"))?
                    .collect::<rusqlite::Result<Vec<_>>>()
                    .map_err(storage("export_rows"))?;
                for r in found {
                    rows.checkpoints.push(RawCheckpointRow {
                        checkpoint: TypedBytes::new(
                            r.type_tag.unwrap_or_default(),
                            r.checkpoint.unwrap_or_default(),
                        ),
                        metadata: TypedBytes::new(
                            crate::serializer::tags::JSON,
                            r.metadata.unwrap_or_default(),
                        ),
                        thread_id: r.thread_id,
                        checkpoint_ns: r.checkpoint_ns,
                        checkpoint_id: r.checkpoint_id,
                        parent_checkpoint_id: r.parent,
                    });
                }
                let mut stmt = tx
                    .prepare(
                        "SELECT thread_id, checkpoint_ns, checkpoint_id, task_id, idx, channel, \
                         type, value, task_path FROM writes \
                         ORDER BY thread_id, checkpoint_ns, checkpoint_id, task_path, task_id, idx",
                    )
                    .map_err(storage("export_rows"))?;
                let writes = stmt
                    .query_map([], |r| {
                        Ok(RawWriteRow {
                            thread_id: r.get(0)?,
                            checkpoint_ns: r.get(1)?,
                            checkpoint_id: r.get(2)?,
                            task_id: r.get(3)?,
                            idx: r.get(4)?,
                            channel: r.get(5)?,
                            value: TypedBytes::new(
                                r.get::<_, Option<String>>(6)?.unwrap_or_default(),
                                bytes_col(r, 7)?.unwrap_or_default(),
                            ),
                            task_path: r.get(8)?,
                        })
                    })
                    .map_err(storage("export_rows"))?
                    .collect::<rusqlite::Result<Vec<_>>>()
                    .map_err(storage("export_rows"))?;
                rows.writes = writes;
                Ok(rows)
            })
        })
        .await
    }
}

/// The checkpoint row `row` (a clear `msgpack` pair of the checkpoint dict) with
/// `values` put into its `channel_values` as their bytes ([`crate::typed::msgpack_of`]):
/// a channel the map holds has its value replaced where it stands, any other is added
/// at the end, in order — the map a decoded value inserted into the checkpoint's
/// `channel_values` (an `IndexMap`) gives, so the bytes are those `put` writes of the
/// checkpoint holding the values decoded (msgpack as Python writes it is canonical).
///
/// # Errors
/// [`SaverFault::InvalidCheckpoint`] for a row that is not clear msgpack (an encrypting
/// serializer: values given as bytes are for a clear store), a value that is not a
/// clear pair, or a channel given twice.
pub(super) fn splice_values(
    row: TypedBytes,
    values: &[(String, TypedBytes)],
) -> Result<TypedBytes> {
    use crate::msgpack::{write_map_len, write_str, LazyValue};
    let invalid = |reason: String| -> Error {
        SaverFault::InvalidCheckpoint {
            field: "channel_values".to_owned(),
            reason,
        }
        .into()
    };
    if row.type_tag != crate::protocol::tags::MSGPACK {
        return Err(invalid(format!(
            "channel values given as bytes go into a clear row, and this serializer wrote a {:?} row",
            row.type_tag
        )));
    }
    let mut given: Vec<(&str, std::borrow::Cow<'_, [u8]>, bool)> = Vec::with_capacity(values.len());
    for (ch, v) in values {
        let bytes = crate::typed::msgpack_of(&v.type_tag, &v.data).ok_or_else(|| {
            invalid(format!(
                "channel {ch:?}: a {:?} pair is not a clear value's bytes",
                v.type_tag
            ))
        })?;
        if given.iter().any(|(c, ..)| c == ch) {
            return Err(invalid(format!("channel {ch:?} given twice")));
        }
        given.push((ch.as_str(), bytes, false));
    }
    let malformed = |e: crate::msgpack::DecodeError| invalid(format!("the encoded row: {e}"));
    let top = LazyValue::new(&row.data)
        .entries()
        .map_err(malformed)?
        .ok_or_else(|| invalid("the encoded row is not a map".to_owned()))?;
    let mut out =
        Vec::with_capacity(row.data.len() + given.iter().map(|g| g.1.len()).sum::<usize>());
    write_map_len(&mut out, top.len()).map_err(|e| invalid(e.to_string()))?;
    let mut spliced = false;
    for (key, value) in top {
        out.extend_from_slice(key.bytes().map_err(malformed)?);
        let is_values = matches!(
            key.decode(),
            Ok(crate::msgpack::ValueRef::Str("channel_values"))
        );
        if !is_values || std::mem::replace(&mut spliced, true) {
            out.extend_from_slice(value.bytes().map_err(malformed)?);
            continue;
        }
        let channels = value
            .entries()
            .map_err(malformed)?
            .ok_or_else(|| invalid("channel_values is not a map".to_owned()))?;
        let added = given.len().saturating_sub(channels.iter().filter(|(ch, _)| {
            matches!(ch.decode(), Ok(crate::msgpack::ValueRef::Str(name)) if given.iter().any(|(g, ..)| *g == name))
        }).count());
        write_map_len(&mut out, channels.len() + added).map_err(|e| invalid(e.to_string()))?;
        for (ch, v) in &channels {
            out.extend_from_slice(ch.bytes().map_err(malformed)?);
            let replaced = match ch.decode() {
                Ok(crate::msgpack::ValueRef::Str(name)) => {
                    given.iter_mut().find(|(g, ..)| *g == name)
                }
                _ => None,
            };
            match replaced {
                Some((_, bytes, used)) => {
                    out.extend_from_slice(bytes);
                    *used = true;
                }
                None => out.extend_from_slice(v.bytes().map_err(malformed)?),
            }
        }
        for (ch, bytes, used) in &given {
            if !used {
                write_str(&mut out, ch).map_err(|e| invalid(e.to_string()))?;
                out.extend_from_slice(bytes);
            }
        }
    }
    // (The saver's encoding always has `channel_values`: no value is left out.)
    if !spliced {
        return Err(invalid("the encoded row has no channel_values".to_owned()));
    }
    Ok(TypedBytes::new(row.type_tag, out))
}

#[cfg(test)]
mod tests {
    use super::splice_values;
    use crate::TypedBytes;

    fn pair(tag: &str, data: &[u8]) -> TypedBytes {
        TypedBytes::new(tag, data.to_vec())
    }

    /// `{"id": "1", "channel_values": {"a": 1}}` with `a` = 2 (msgpack) and `b` =
    /// b"xy" (`bytes`) spliced in: `a` replaced where it stands, `b` added after it as
    /// a bin, every other byte as it was (written out by hand from the msgpack spec).
    #[test]
    fn values_replace_in_place_and_add_at_the_end() {
        let row = TypedBytes::new(
            "msgpack",
            b"\x82\xa2id\xa11\xaechannel_values\x81\xa1a\x01".to_vec(),
        );
        let values = [
            ("a".to_owned(), pair("msgpack", b"\x02")),
            ("b".to_owned(), pair("bytes", b"xy")),
        ];
        let out = splice_values(row, &values).expect("spliced");
        assert_eq!(out.type_tag, "msgpack");
        assert_eq!(
            &out.data[..],
            b"\x82\xa2id\xa11\xaechannel_values\x82\xa1a\x02\xa1b\xc4\x02xy"
        );
    }

    /// Anything but a clear row, a clear pair holding one whole value, or a row with
    /// `channel_values` is refused, never spliced in part or dropped.
    #[test]
    fn what_cannot_be_spliced_whole_is_an_error() {
        let clear = |data: &[u8]| TypedBytes::new("msgpack", data.to_vec());
        let row = b"\x82\xa2id\xa11\xaechannel_values\x80";
        let one = |tag: &str, data: &[u8]| [("a".to_owned(), pair(tag, data))];
        let refused = [
            splice_values(
                TypedBytes::new("msgpack+aes", row.to_vec()),
                &one("msgpack", b"\x02"),
            ),
            splice_values(clear(row), &one("json", b"2")),
            splice_values(clear(row), &one("msgpack", b"\x02\x03")),
            splice_values(clear(row), &one("msgpack", b"\x92\x01")),
            splice_values(clear(b"\x81\xa2id\xa11"), &one("msgpack", b"\x02")),
            splice_values(
                clear(row),
                &[
                    ("a".to_owned(), pair("msgpack", b"\x02")),
                    ("a".to_owned(), pair("msgpack", b"\x03")),
                ],
            ),
        ];
        for (i, r) in refused.iter().enumerate() {
            assert!(
                matches!(r, Err(e) if e.kind() == crate::ErrorKind::InvalidCheckpoint),
                "case {i}: {r:?}"
            );
        }
    }
}
