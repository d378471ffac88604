//! Rows to tuples and checkpoints to rows, with Python's `PostgresSaver` semantics.

use std::borrow::Cow;

use indexmap::IndexMap;
use tokio_postgres::Row;

use super::error::PgFault;
use super::jsonb;
use crate::saver::codec::{
    checkpoint_from_value, metadata_from_value, unreadable, RowCodec, RowKey, RowKind, RowLocation,
};
use crate::saver::types::{
    refuse_deep_checkpoint, ChannelVersion, Checkpoint, CheckpointConfig, CheckpointTuple,
};
use crate::saver::Result;
use crate::serializer::{tags, Serializer};
use crate::value::Value;
use crate::TypedBytes;

/// `__pregel_tasks`: the channel `v < 4` checkpoints kept their pending sends in.
pub(crate) const TASKS: &str = "__pregel_tasks";

/// Moves the pending sends of a checkpoint from before `v` 4 that JSONB cannot hold
/// (`Send` objects) to where Python's Postgres saver reads them, as langgraph's
/// `Pregel._migrate_checkpoint` and the saver's `_migrate_pending_sends` do: the
/// `__pregel_tasks` channel, at the highest channel version (a first version when
/// there is none), without `pending_sends`. Pending sends JSONB can hold (an empty
/// list, the `["msgpack", "kA=="]` pair `-postgres` 1.0.0 stored) stay as they are, as
/// Python reads them. Whether the checkpoint changed.
///
/// `parent_sends`: the parent's `__pregel_tasks` writes in the order Python's reader
/// takes them (task path, task id, index). Python's reader of a `v < 4` checkpoint
/// replaces the channel with those; where they are not the pending sends in order
/// (langgraph 0.2 to 0.4 ordered them by task path, and stored no path, so the reader
/// orders them by task id), `v` becomes 4, the version whose sends are read from the
/// channel as stored, so that the sends keep their order (which decides the order the
/// resumed tasks run and write in).
pub(crate) fn pending_sends_to_tasks(
    checkpoint: &mut Checkpoint,
    parent_sends: &[Value],
    first_version: impl FnOnce() -> Result<ChannelVersion>,
) -> Result<bool> {
    if checkpoint.v >= 4 {
        return Ok(false);
    }
    let reordered = match checkpoint.extra.get(PENDING_SENDS) {
        Some(sends @ Value::Array(items))
            if !items.is_empty() && jsonb::write(sends, PENDING_SENDS).is_err() =>
        {
            !parent_sends.is_empty() && parent_sends != items.as_slice()
        }
        _ => return Ok(false),
    };
    let version = match max_version(checkpoint.channel_versions.values()) {
        Some(v) => v,
        None => first_version()?,
    };
    if let Some(sends) = checkpoint.extra.shift_remove(PENDING_SENDS) {
        checkpoint.channel_values.insert(TASKS.to_owned(), sends);
        checkpoint
            .channel_versions
            .insert(TASKS.to_owned(), version);
    }
    if reordered {
        checkpoint.v = 4;
    }
    Ok(true)
}

impl super::PostgresSaver {
    /// Readies a checkpoint read from another store for this saver's `put`, so that
    /// Python's Postgres saver reads it back as a graph uses the original: a checkpoint
    /// from before `v` 4 (LangGraph 0.2 to 0.4) whose `pending_sends` hold `Send`
    /// objects, which JSONB cannot hold, gets them as the `__pregel_tasks` channel at
    /// its highest channel version, without `pending_sends` — what langgraph's
    /// `Pregel._migrate_checkpoint` makes of it on loading, and what Python's Postgres
    /// reader (`_migrate_pending_sends`) returns. `parent_sends` are the parent's
    /// `__pregel_tasks` write values ordered by task path, task id and index (what
    /// that reader takes instead): when they are not the pending sends in order, `v`
    /// becomes 4 so the channel is read as stored and the sends keep their order.
    /// Anything else is left as it is. Whether the checkpoint changed.
    ///
    /// # Errors
    /// Only from [`get_next_version`](crate::saver::CheckpointSaver::get_next_version),
    /// for a checkpoint without channel versions.
    pub fn pending_sends_to_tasks(
        &self,
        checkpoint: &mut Checkpoint,
        parent_sends: &[Value],
    ) -> Result<bool> {
        pending_sends_to_tasks(checkpoint, parent_sends, || {
            crate::saver::CheckpointSaver::get_next_version(self, None)
        })
    }
}

/// The top-level key of a `v < 4` checkpoint that held its pending `Send`s.
const PENDING_SENDS: &str = "pending_sends";

/// The "type tag" a refused inline channel value is reported with.
pub(crate) const INLINE_TAG: &str = "inline jsonb value";

/// The blob and inline parts of a checkpoint's `channel_values`, as `put` stores them.
pub(crate) struct SplitValues {
    /// The checkpoint dict for the JSONB column (inline primitives, `true` markers).
    pub(crate) checkpoint_json: String,
    /// Blob rows: channel, version text, type tag, bytes.
    pub(crate) channels: Vec<String>,
    pub(crate) versions: Vec<String>,
    pub(crate) types: Vec<String>,
    /// The serializer's buffers as they are (sent as borrowed slices, not copied).
    pub(crate) blobs: Vec<bytes::Bytes>,
}

impl SplitValues {
    /// The blobs as the `bytea[]` parameter borrows them.
    pub(crate) fn blob_slices(&self) -> Vec<&[u8]> {
        self.blobs.iter().map(|b| &b[..]).collect()
    }

    /// Each blob row: channel, version, type tag and bytes.
    #[cfg_attr(not(feature = "sqlite"), allow(dead_code))]
    pub(crate) fn blob_rows(&self) -> impl Iterator<Item = (&str, &str, &str, &[u8])> {
        self.channels
            .iter()
            .zip(&self.versions)
            .zip(&self.types)
            .zip(&self.blobs)
            .map(|(((ch, v), ty), blob)| (ch.as_str(), v.as_str(), ty.as_str(), &blob[..]))
    }
}

/// Python's `put` split: a `_DeltaSnapshot` goes to a blob and leaves an inline `true`;
/// `None`/`str`/`int`/`float`/`bool` stay inline; anything else goes to a blob. Blobs are
/// written for the channels in `new_versions` only. Beyond Python: a primitive JSONB
/// cannot hold (NaN, infinities, `\u0000`), or every primitive when `all_blobs`, goes to
/// a blob too, written at its `new_versions` version or, when unchanged, at its current
/// `channel_versions` version (insert-or-ignore), so a reader never depends on an
/// inline copy an earlier writer may not have left.
pub(crate) fn split_values(
    serde: &dyn Serializer,
    checkpoint: &Checkpoint,
    new_versions: &IndexMap<String, ChannelVersion>,
    all_blobs: bool,
) -> Result<SplitValues> {
    let mut inline: IndexMap<String, Value> = IndexMap::new();
    let mut out = SplitValues {
        checkpoint_json: String::new(),
        channels: Vec::new(),
        versions: Vec::new(),
        types: Vec::new(),
        blobs: Vec::new(),
    };
    let mut push_blob = |ch: &str, version: &ChannelVersion, value: &Value| -> Result<()> {
        let typed = serde.dumps_typed(value)?;
        out.channels.push(ch.to_owned());
        out.versions.push(version.to_string());
        out.types.push(typed.type_tag);
        out.blobs.push(typed.data);
        Ok(())
    };
    for (ch, value) in &checkpoint.channel_values {
        let primitive = jsonb::is_inline_primitive(value);
        if matches!(value, Value::DeltaSnapshot(_)) {
            inline.insert(ch.clone(), Value::Bool(true));
            if let Some(v) = new_versions.get(ch) {
                push_blob(ch, v, value)?;
            }
        } else if primitive && !all_blobs {
            inline.insert(ch.clone(), value.clone());
        } else if let Some(v) = new_versions.get(ch) {
            push_blob(ch, v, value)?;
        } else if primitive || jsonb::scalar_problem(value).is_some() {
            // A primitive moved to a blob but unchanged in this step: make sure its blob
            // exists at the current version (Python may have stored it inline before).
            match checkpoint.channel_versions.get(ch) {
                Some(v) => push_blob(ch, v, value)?,
                // No version to key a blob by: keep it inline if JSONB can hold it.
                None if primitive => {
                    inline.insert(ch.clone(), value.clone());
                }
                None => {
                    return Err(PgFault::NotJsonb {
                        what: "checkpoint",
                        path: format!("$.channel_values.{ch}"),
                        reason: format!(
                            "{} (and the channel has no version to key a blob by)",
                            jsonb::scalar_problem(value).unwrap_or("no JSONB form")
                        ),
                    }
                    .into())
                }
            }
        }
    }
    // The checkpoint dict with the inline values as `channel_values`, built without
    // copying the values that went to blobs (JSONB keeps no key order, so where the
    // key goes does not matter).
    let mut row = checkpoint.to_row_value();
    if let Value::Map(entries) = &mut row {
        let inline = inline
            .into_iter()
            .map(|(k, v)| (Value::from(k), v))
            .collect();
        entries.push((Value::from("channel_values"), Value::Map(inline)));
    } else {
        // (`to_row_value` always gives a map.)
        let mut whole = checkpoint.clone();
        whole.channel_values = inline;
        row = whole.to_value();
    }
    refuse_deep_checkpoint(&row, jsonb::MAX_DEPTH)?;
    out.checkpoint_json = jsonb::write(&row, "checkpoint")?;
    Ok(out)
}

/// Blob values made already, by channel: `dumps_typed`'s pairs.
pub(crate) type Blobs = Vec<(String, TypedBytes)>;

/// A checkpoint stored as one clear msgpack map (`dumps_typed` of its dict, walked
/// whole by the caller), split as [`split_values`] splits its channel values, without
/// decoding those that go to blobs: the document with only its inline channel values
/// left in `channel_values` (to be decoded and put as any checkpoint is), and each
/// other channel's blob, `dumps_typed` of its decoded value: the value's own bytes in
/// the map (msgpack as Python writes it is canonical: a decoded value encodes to the
/// same bytes), a bin's content as `bytes`. A value stays inline when its first byte
/// says nil, bool, int, float or str: the values the decoder reads as
/// [`jsonb::is_inline_primitive`]'s kinds. `None` for a document not split so (not a
/// map, bytes after it, no or two `channel_values` maps, a key that is not a string, a
/// channel twice, a `_DeltaSnapshot`): the caller decodes it whole.
#[cfg_attr(not(feature = "sqlite"), allow(dead_code))]
pub(crate) fn split_msgpack(doc: &[u8]) -> Option<(Vec<u8>, Blobs)> {
    use crate::msgpack::{marker, LazyValue, ValueRef};
    // Each entry's bytes found in the walk that finds the entries: walking the values
    // again for their bytes took a third of this function (2026-12-03, a copy of
    // 100,000 checkpoints SQLite → Postgres).
    let (top, end) = LazyValue::new(doc).entry_spans().ok()??;
    // Bytes after the map are not a document the split can keep whole.
    if end != doc.len() {
        return None;
    }
    let mut out = Vec::with_capacity(doc.len().min(4096));
    crate::msgpack::write_map_len(&mut out, top.len()).ok()?;
    let mut blobs = Vec::new();
    let mut seen_values = false;
    for entry in top {
        let ValueRef::Str(name) = entry.key.decode().ok()? else {
            return None;
        };
        out.extend_from_slice(entry.key_bytes);
        if name != "channel_values" {
            out.extend_from_slice(entry.value_bytes);
            continue;
        }
        if std::mem::replace(&mut seen_values, true) {
            return None;
        }
        let (channels, _) = entry.value.entry_spans().ok()??;
        let mut inline: Vec<&[u8]> = Vec::new();
        let mut names = std::collections::HashSet::new();
        for ch in &channels {
            let ValueRef::Str(ch_name) = ch.key.decode().ok()? else {
                return None;
            };
            if !names.insert(ch_name) {
                return None;
            }
            let bytes = ch.value_bytes;
            match marker::describe(*bytes.first()?) {
                "nil" | "bool" | "int" | "float" | "str" => {
                    inline.push(ch.key_bytes);
                    inline.push(bytes);
                }
                // Ext code 7: `_DeltaSnapshot`, inline `true` and a blob: decoded.
                "ext" if marker::ext_code(bytes) == Some(7) => return None,
                _ => blobs.push((
                    ch_name.to_owned(),
                    crate::typed::tag_msgpack(bytes.to_vec()),
                )),
            }
        }
        crate::msgpack::write_map_len(&mut out, inline.len() / 2).ok()?;
        for part in inline {
            out.extend_from_slice(part);
        }
    }
    seen_values.then_some((out, blobs))
}

pub(crate) fn col<'a, T: tokio_postgres::types::FromSql<'a>>(
    row: &'a Row,
    idx: usize,
) -> Result<T> {
    row.try_get(idx).map_err(super::db::db("read row"))
}

/// Blobs by (thread, ns, channel, version text): type tag and bytes, borrowed from the
/// rows that carry them (copying each 10 kB blob and four key strings out of its row
/// cost about 8% of a `get_tuple`).
pub(crate) type BlobMap<'r> =
    std::collections::HashMap<(&'r str, &'r str, &'r str, &'r str), (&'r str, Option<&'r [u8]>)>;

/// Adds the rows of [`Statements::blobs`](super::sql::Statements::blobs) to `map`.
pub(crate) fn add_blob_rows<'r>(rows: &'r [Row], map: &mut BlobMap<'r>) -> Result<()> {
    for row in rows {
        let key = (col(row, 0)?, col(row, 1)?, col(row, 2)?, col(row, 3)?);
        map.insert(key, (col(row, 4)?, col(row, 5)?));
    }
    Ok(())
}

/// A version as Postgres's `jsonb_each_text` prints it, which is how blobs are keyed.
fn version_text(v: &ChannelVersion) -> Cow<'_, str> {
    match v {
        ChannelVersion::Str(s) => Cow::Borrowed(s),
        other => Cow::Owned(other.to_string()),
    }
}

/// One row of [`Statements::select`](super::sql::Statements::select), its keys read.
pub(crate) struct SelectedRow {
    pub(crate) thread_id: String,
    pub(crate) checkpoint_ns: String,
    pub(crate) checkpoint_id: String,
    pub(crate) parent: Option<String>,
    pub(crate) checkpoint: Checkpoint,
    row: Row,
}

impl SelectedRow {
    pub(crate) fn read(row: Row) -> Result<Self> {
        let thread_id: String = col(&row, 0)?;
        let checkpoint_ns: String = col(&row, 1)?;
        let checkpoint_id: String = col(&row, 2)?;
        let parent: Option<String> = col(&row, 3)?;
        let key = RowKey::new(&thread_id, &checkpoint_ns, &checkpoint_id);
        let value = jsonb::read(col(&row, 4)?, || format!("{} checkpoint", key.location()))?;
        let checkpoint = checkpoint_from_value(key, value)?;
        Ok(SelectedRow {
            thread_id,
            checkpoint_ns,
            checkpoint_id,
            parent,
            checkpoint,
            row,
        })
    }

    /// The blobs the row carries (columns 12..15 of a
    /// [`PageBlobs::Inline`](super::sql::PageBlobs::Inline) select), added to `map`.
    pub(crate) fn inline_blobs<'r>(&'r self, map: &mut BlobMap<'r>) -> Result<()> {
        let Some(channels) = col::<Option<Vec<&str>>>(&self.row, 12)? else {
            return Ok(()); // no channel_versions entry has a blob row
        };
        let versions: Vec<&str> = col(&self.row, 13)?;
        let types: Vec<&str> = col(&self.row, 14)?;
        let blobs: Vec<Option<&[u8]>> = col(&self.row, 15)?;
        for (((channel, version), tag), blob) in
            channels.into_iter().zip(versions).zip(types).zip(blobs)
        {
            map.insert(
                (&self.thread_id, &self.checkpoint_ns, channel, version),
                (tag, blob),
            );
        }
        Ok(())
    }

    /// Whether Python migrates pending sends into this checkpoint (`v < 4` with a parent).
    /// A `v < 4` checkpoint whose pending sends are read from writes: its parent's
    /// `__pregel_tasks` writes, or — `shallow`, the shallow saver's tables, which keep
    /// no parent — every `__pregel_tasks` write of its namespace, as that saver reads
    /// them (its `put` keeps the parent's writes).
    pub(crate) fn needs_sends(&self, shallow: bool) -> bool {
        self.checkpoint.v < 4 && (shallow || self.parent.as_deref().is_some_and(|p| !p.is_empty()))
    }

    fn key(&self) -> RowKey<'_> {
        RowKey::new(&self.thread_id, &self.checkpoint_ns, &self.checkpoint_id)
    }

    fn loc(&self) -> RowLocation {
        self.key().location()
    }

    /// The blob keys its `channel_versions` reference.
    pub(crate) fn blob_keys(&self) -> impl Iterator<Item = (&str, &str, &str, Cow<'_, str>)> {
        self.checkpoint.channel_versions.iter().map(|(ch, v)| {
            (
                self.thread_id.as_str(),
                self.checkpoint_ns.as_str(),
                ch.as_str(),
                version_text(v),
            )
        })
    }

    /// The channel values its blobs hold (blobs win over inline values; `empty`
    /// skipped), decoded, for [`into_tuple`](Self::into_tuple); with `raw`, those whose
    /// pair is clear msgpack, `bytes` or `null` ([`crate::typed::msgpack_of`]) and whose
    /// channel has no inline value are left as they are stored, apart (the second
    /// list), for a writer that takes values as their bytes.
    pub(crate) fn blob_values(
        &self,
        serde: &dyn Serializer,
        blobs: &BlobMap<'_>,
        raw: bool,
    ) -> Result<(Vec<(String, Value)>, Blobs)> {
        let codec = RowCodec::new(serde);
        let mut merged = Vec::new();
        let mut kept = Blobs::new();
        for (ch, version) in &self.checkpoint.channel_versions {
            let key = (
                self.thread_id.as_str(),
                self.checkpoint_ns.as_str(),
                ch.as_str(),
                &*version_text(version),
            );
            let Some(&(tag, data)) = blobs.get(&key) else {
                continue;
            };
            if tag == tags::EMPTY {
                continue;
            }
            let data = data.unwrap_or_default();
            if raw
                && !self.checkpoint.channel_values.contains_key(ch)
                && crate::typed::msgpack_of(tag, data).is_some()
            {
                kept.push((ch.clone(), TypedBytes::new(tag, data.to_vec())));
                continue;
            }
            let value = codec.value(
                RowKind::Blob,
                || self.loc().with_detail(format!("channel {ch:?}")),
                Some(tag),
                data,
            )?;
            merged.push((ch.clone(), value));
        }
        Ok((merged, kept))
    }

    /// Strict mode with every value in blobs: the serializer refuses rows that are not
    /// encrypted and `put` left no channel value inline, so an inline value that no
    /// blob replaces (a channel planted in the `checkpoint` JSONB, or an encrypted
    /// channel swapped for an inline one) was not written by this saver and is refused
    /// with [`ErrorKind::PlaintextRefused`](crate::ErrorKind::PlaintextRefused).
    /// (A `_DeltaSnapshot`'s inline `true` marker is replaced by its blob.)
    pub(crate) fn refuse_inline(&self, blob_values: &[(String, Value)]) -> Result<()> {
        for ch in self.checkpoint.channel_values.keys() {
            if !blob_values.iter().any(|(b, _)| b == ch) {
                return Err(unreadable(
                    RowKind::Checkpoint,
                    self.loc().with_detail(format!("channel {ch:?}")),
                    crate::crypto::CryptoFault::PlaintextRefused {
                        type_tag: INLINE_TAG.to_owned(),
                    },
                ));
            }
        }
        Ok(())
    }

    /// Builds the tuple: `blob_values` merged into the inline values, `sends` (the
    /// parent's `__pregel_tasks` writes, `v < 4` only) as the `__pregel_tasks` channel,
    /// the metadata and the ordered writes.
    pub(crate) fn into_tuple(
        mut self,
        serde: &dyn Serializer,
        blob_values: Vec<(String, Value)>,
        sends: Option<Vec<Value>>,
        first_version: impl FnOnce() -> Result<ChannelVersion>,
    ) -> Result<CheckpointTuple> {
        let loc = self.loc();
        let metadata_value = jsonb::read(col(&self.row, 5)?, || format!("{loc} metadata"))?;
        let metadata = metadata_from_value(self.key(), &metadata_value)?;
        for (ch, value) in blob_values {
            self.checkpoint.channel_values.insert(ch, value);
        }
        if let Some(sends) = sends {
            let version = match max_version(self.checkpoint.channel_versions.values()) {
                Some(v) => v,
                None => first_version()?,
            };
            self.checkpoint
                .channel_values
                .insert(TASKS.to_owned(), Value::Array(sends));
            self.checkpoint
                .channel_versions
                .insert(TASKS.to_owned(), version);
        }
        let task_ids: Option<Vec<String>> = col(&self.row, 6)?;
        let w_channels: Option<Vec<String>> = col(&self.row, 7)?;
        let w_types: Option<Vec<Option<&str>>> = col(&self.row, 8)?;
        let w_blobs: Option<Vec<&[u8]>> = col(&self.row, 9)?;
        let w_paths: Option<Vec<&str>> = col(&self.row, 10)?;
        let w_idxs: Option<Vec<i32>> = col(&self.row, 11)?;
        let mut writes: Vec<_> = w_paths
            .unwrap_or_default()
            .into_iter()
            .zip(task_ids.unwrap_or_default())
            .zip(w_idxs.unwrap_or_default())
            .zip(w_channels.unwrap_or_default())
            .zip(w_types.unwrap_or_default())
            .zip(w_blobs.unwrap_or_default())
            .map(|(((((path, task_id), idx), channel), tag), data)| {
                (path, task_id, idx, channel, tag, data)
            })
            .collect();
        // Python's `writes_sort_key`, `(task_path, task_id, idx)`: `str`s compare by
        // code point, as Rust's by UTF-8 byte; the primary key makes every key unique.
        writes.sort_unstable_by(|a, b| (a.0, &a.1, a.2).cmp(&(b.0, &b.1, b.2)));
        let codec = RowCodec::new(serde);
        let mut pending_writes = Vec::with_capacity(writes.len());
        for (_, task_id, _, channel, tag, data) in writes {
            // (A NULL type column reads as the empty tag, which no serializer knows.)
            pending_writes.push(codec.write(
                |task_id, channel| {
                    loc.clone()
                        .with_detail(format!("task {task_id:?} channel {channel:?}"))
                },
                task_id,
                channel,
                Some(tag.unwrap_or_default()),
                data,
            )?);
        }
        let parent_config = self.key().parent_config(self.parent.as_deref());
        Ok(CheckpointTuple {
            config: CheckpointConfig::for_checkpoint(
                self.thread_id,
                self.checkpoint_ns,
                self.checkpoint_id,
            ),
            checkpoint: self.checkpoint,
            metadata,
            parent_config,
            pending_writes,
        })
    }
}

/// Python's `max(channel_versions.values())`: strings compare by code point, numbers by
/// value; in a mix (which Python refuses) strings sort last.
fn max_version<'a>(versions: impl Iterator<Item = &'a ChannelVersion>) -> Option<ChannelVersion> {
    let mut best: Option<&ChannelVersion> = None;
    for v in versions {
        let greater = match (best, v) {
            (None, _) => true,
            (Some(ChannelVersion::Str(a)), ChannelVersion::Str(b)) => b > a,
            (Some(ChannelVersion::Str(_)), _) => false,
            (Some(_), ChannelVersion::Str(_)) => true,
            (Some(a), b) => as_f64(b) > as_f64(a),
        };
        if greater {
            best = Some(v);
        }
    }
    best.cloned()
}

fn as_f64(v: &ChannelVersion) -> f64 {
    match v {
        ChannelVersion::Int(i) => *i as f64,
        ChannelVersion::Float(f) => *f,
        ChannelVersion::Str(_) => f64::NAN,
    }
}

/// Decodes the pending-sends rows of one parent: `(type, blob)` pairs in write order.
pub(crate) fn load_sends(
    serde: &dyn Serializer,
    loc: &RowLocation,
    types: Vec<Option<String>>,
    blobs: Vec<Vec<u8>>,
) -> Result<Vec<Value>> {
    let codec = RowCodec::new(serde);
    types
        .into_iter()
        .zip(blobs)
        .map(|(tag, data)| {
            codec.value(
                RowKind::Write,
                || loc.clone().with_detail(TASKS),
                Some(tag.as_deref().unwrap_or_default()),
                &data,
            )
        })
        .collect()
}
