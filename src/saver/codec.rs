//! The row codec every saver reads its rows with: the stored parts of a checkpoint
//! row (its checkpoint and metadata), of its channel blobs and of its pending writes,
//! as `(type, bytes)` pairs or already-parsed JSON, turned into [`Checkpoint`],
//! [`CheckpointMetadata`], channel values and [`PendingWrite`]s through the serializer.
//! Every failure is one [`ErrorKind::UnreadableRow`](crate::ErrorKind::UnreadableRow)
//! naming the row ([`RowLocation`], of the right [`RowKind`]) with the serializer's or
//! the shape check's error as its cause (built by `saver::error`'s `unreadable` and
//! `row_location`, which the backends take from here with the rest).
//!
//! `InMemorySaver`, `SqliteSaver` and `PostgresSaver` differ in how they store and
//! fetch rows, not in how a fetched row becomes a saver type: that is here.

pub(crate) use crate::saver::error::{row_location, unreadable, RowKind, RowLocation};
use crate::saver::types::{Checkpoint, CheckpointConfig, CheckpointMetadata, PendingWrite};
use crate::saver::Result;
use crate::serializer::Serializer;
use crate::value::Value;

/// A checkpoint row's key, borrowed from wherever the backend keeps it.
#[derive(Clone, Copy, Debug)]
pub(crate) struct RowKey<'a> {
    pub(crate) thread: &'a str,
    pub(crate) ns: &'a str,
    pub(crate) id: &'a str,
}

impl<'a> RowKey<'a> {
    pub(crate) fn new(thread: &'a str, ns: &'a str, id: &'a str) -> Self {
        RowKey { thread, ns, id }
    }

    /// Where the row is (built only when an error needs it).
    pub(crate) fn location(self) -> RowLocation {
        row_location(self.thread, self.ns, self.id)
    }

    /// Where one of its pending writes is: the row, then `task "a" idx 0`.
    pub(crate) fn write_location(self, task_id: &str, idx: i64) -> RowLocation {
        self.location()
            .with_detail(format!("task {task_id:?} idx {idx}"))
    }

    /// Python's `parent_config`: the parent checkpoint's config in the same thread and
    /// namespace, `None` when the row has no parent id (or an empty one).
    pub(crate) fn parent_config(self, parent: Option<&str>) -> Option<CheckpointConfig> {
        parent
            .filter(|p| !p.is_empty())
            .map(|p| CheckpointConfig::for_checkpoint(self.thread, self.ns, p))
    }
}

/// Rows to saver types through one serializer (a borrowed `&dyn Serializer`: copying
/// the codec copies a pointer).
#[derive(Clone, Copy)]
pub(crate) struct RowCodec<'s> {
    serde: &'s dyn Serializer,
}

impl<'s> RowCodec<'s> {
    pub(crate) fn new(serde: &'s dyn Serializer) -> Self {
        RowCodec { serde }
    }

    /// `loads_typed`; a `NULL` type column (`tag` `None`) is refused: the row cannot
    /// say how its bytes are encoded.
    #[inline]
    fn load(self, tag: Option<&str>, data: &[u8]) -> Result<Value> {
        match tag {
            Some(tag) => self.serde.loads_typed(tag, data),
            None => Err(crate::saver::error::invalid_checkpoint(
                "type",
                "the type column is NULL",
            )),
        }
    }

    /// One stored `(type, bytes)` value of a `kind` row, a failure (or a `NULL` type,
    /// `tag` `None`) reported at `location()`.
    #[inline]
    pub(crate) fn value(
        self,
        kind: RowKind,
        location: impl FnOnce() -> RowLocation,
        tag: Option<&str>,
        data: &[u8],
    ) -> Result<Value> {
        self.load(tag, data)
            .map_err(|e| unreadable(kind, location(), e))
    }

    /// The checkpoint of the row at `key`, stored as `(type, bytes)`.
    pub(crate) fn checkpoint(
        self,
        key: RowKey<'_>,
        tag: Option<&str>,
        data: &[u8],
    ) -> Result<Checkpoint> {
        let value = self.value(RowKind::Checkpoint, || key.location(), tag, data)?;
        checkpoint_from_value(key, value)
    }

    /// The metadata of the row at `key`, stored as `(type, bytes)`.
    pub(crate) fn metadata(
        self,
        key: RowKey<'_>,
        tag: Option<&str>,
        data: &[u8],
    ) -> Result<CheckpointMetadata> {
        let value = self.value(RowKind::Metadata, || key.location(), tag, data)?;
        metadata_from_value(key, &value)
    }

    /// One pending write of `task_id` to `channel`, its value stored as `(type,
    /// bytes)`; a failure is reported at `location(task_id, channel)`.
    #[inline]
    pub(crate) fn write(
        self,
        location: impl FnOnce(&str, &str) -> RowLocation,
        task_id: String,
        channel: String,
        tag: Option<&str>,
        data: &[u8],
    ) -> Result<PendingWrite> {
        match self.load(tag, data) {
            Ok(value) => Ok(PendingWrite {
                task_id,
                channel,
                value,
            }),
            Err(e) => Err(unreadable(RowKind::Write, location(&task_id, &channel), e)),
        }
    }
}

/// The checkpoint of the row at `key` from its decoded (or JSON) dict; the channel
/// values move, nothing is copied.
pub(crate) fn checkpoint_from_value(key: RowKey<'_>, value: Value) -> Result<Checkpoint> {
    Checkpoint::from_owned_value(value)
        .map_err(|e| unreadable(RowKind::Checkpoint, key.location(), e))
}

/// The metadata of the row at `key` from its decoded (or JSON) dict.
pub(crate) fn metadata_from_value(key: RowKey<'_>, value: &Value) -> Result<CheckpointMetadata> {
    CheckpointMetadata::from_value(value)
        .map_err(|e| unreadable(RowKind::Metadata, key.location(), e))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::Error;
    use crate::serializer::{tags, JsonPlusSerializer};

    const KEY: RowKey<'static> = RowKey {
        thread: "t-1",
        ns: "inner",
        id: "cp-7",
    };

    /// The row an error names, or a panic saying the error named none.
    fn row_of(e: &Error) -> &RowLocation {
        e.row().unwrap_or_else(|| panic!("no row location in {e}"))
    }

    fn assert_at(e: &Error, kind: RowKind, detail: Option<&str>) {
        assert_eq!(e.kind(), crate::ErrorKind::UnreadableRow, "{e}");
        let row = row_of(e);
        assert_eq!(row.kind(), kind, "{e}");
        assert_eq!(
            (row.thread_id(), row.checkpoint_ns(), row.checkpoint_id()),
            ("t-1", "inner", "cp-7"),
            "{e}"
        );
        assert_eq!(row.detail(), detail, "{e}");
    }

    // A msgpack str header claiming 5 bytes with 1 after it: no serializer reads it.
    const TRUNCATED: &[u8] = &[0xa5, b'x'];

    #[test]
    fn each_row_kind_is_reported_at_its_row() {
        let serde = JsonPlusSerializer::new();
        let codec = RowCodec::new(&serde);
        let some = Some(tags::MSGPACK);

        let e = codec.checkpoint(KEY, some, TRUNCATED).unwrap_err();
        assert_at(&e, RowKind::Checkpoint, None);
        let e = codec.metadata(KEY, some, TRUNCATED).unwrap_err();
        assert_at(&e, RowKind::Metadata, None);
        let e = codec
            .write(
                |task, _| KEY.write_location(task, -3),
                "task-a".into(),
                "ch".into(),
                some,
                TRUNCATED,
            )
            .unwrap_err();
        assert_at(&e, RowKind::Write, Some("task \"task-a\" idx -3"));
        let e = codec
            .value(
                RowKind::Blob,
                || KEY.location().with_detail("channel \"x\""),
                some,
                TRUNCATED,
            )
            .unwrap_err();
        assert_at(&e, RowKind::Blob, Some("channel \"x\""));
        // The serializer's own error is the cause.
        assert_eq!(
            e.cause().map(|c| c.kind().as_str()),
            Some("length_exceeds_input")
        );
    }

    #[test]
    fn a_null_type_column_is_refused_at_its_row() {
        let serde = JsonPlusSerializer::new();
        let codec = RowCodec::new(&serde);
        let e = codec.checkpoint(KEY, None, b"").unwrap_err();
        assert_at(&e, RowKind::Checkpoint, None);
        assert_eq!(
            e.cause().map(|c| c.kind()),
            Some(crate::ErrorKind::InvalidCheckpoint)
        );
        let e = codec
            .write(
                |t, _| KEY.write_location(t, 0),
                "a".into(),
                "c".into(),
                None,
                b"",
            )
            .unwrap_err();
        assert_at(&e, RowKind::Write, Some("task \"a\" idx 0"));
    }

    #[test]
    fn a_readable_value_of_the_wrong_shape_is_reported_at_its_row() {
        // Both read fine as msgpack (an int 1) but are no dict.
        let serde = JsonPlusSerializer::new();
        let codec = RowCodec::new(&serde);
        let one = Some(tags::MSGPACK);
        let e = codec.checkpoint(KEY, one, &[0x01]).unwrap_err();
        assert_at(&e, RowKind::Checkpoint, None);
        let e = codec.metadata(KEY, one, &[0x01]).unwrap_err();
        assert_at(&e, RowKind::Metadata, None);
        assert_at(
            &metadata_from_value(KEY, &Value::from(1i64)).unwrap_err(),
            RowKind::Metadata,
            None,
        );
        assert_at(
            &checkpoint_from_value(KEY, Value::from("x")).unwrap_err(),
            RowKind::Checkpoint,
            None,
        );
    }

    #[test]
    fn readable_rows_decode() {
        let serde = JsonPlusSerializer::new();
        let codec = RowCodec::new(&serde);
        // msgpack `{"step": 3}`.
        let md = codec
            .metadata(
                KEY,
                Some(tags::MSGPACK),
                &[0x81, 0xa4, b's', b't', b'e', b'p', 0x03],
            )
            .expect("metadata");
        assert_eq!(md.get("step"), Some(&Value::from(3i64)));
        let w = codec
            .write(
                |_, _| KEY.location(),
                "t".into(),
                "c".into(),
                Some(tags::NULL),
                b"",
            )
            .expect("a null write");
        assert_eq!((w.task_id.as_str(), w.channel.as_str()), ("t", "c"));
        assert_eq!(w.value, Value::Nil);
        assert_eq!(KEY.parent_config(Some("")), None);
        assert_eq!(KEY.parent_config(None), None);
        assert_eq!(
            KEY.parent_config(Some("p")),
            Some(CheckpointConfig::for_checkpoint("t-1", "inner", "p"))
        );
    }
}
