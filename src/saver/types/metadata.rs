//! [`CheckpointMetadata`] and Python's `get_checkpoint_metadata`.

use indexmap::IndexMap;

use super::maps::str_map_to_value;
use super::CheckpointConfig;
use crate::error::Error;
use crate::saver::error::SaverFault;
use crate::value::Value;

/// Python's `EXCLUDED_METADATA_KEYS`: config keys never copied into metadata.
pub const EXCLUDED_METADATA_KEYS: [&str; 9] = [
    "thread_id",
    "checkpoint_id",
    "checkpoint_ns",
    "checkpoint_map",
    "langgraph_step",
    "langgraph_node",
    "langgraph_triggers",
    "langgraph_path",
    "langgraph_checkpoint_ns",
];

/// Python's `CheckpointMetadata`: every key, in order, nothing stripped.
///
/// The well-known keys have typed accessors; the map itself is public.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct CheckpointMetadata(pub IndexMap<String, Value>);

impl CheckpointMetadata {
    /// `{"source": source, "step": step, "parents": {}}`, as langgraph writes it.
    pub fn new(source: &str, step: i64) -> Self {
        let mut m = IndexMap::new();
        m.insert("source".to_owned(), Value::from(source));
        m.insert("step".to_owned(), Value::from(step));
        m.insert("parents".to_owned(), Value::Map(Vec::new()));
        CheckpointMetadata(m)
    }

    /// The same metadata with one more key (or a replaced value, kept in place).
    pub fn with(mut self, key: impl Into<String>, value: impl Into<Value>) -> Self {
        self.0.insert(key.into(), value.into());
        self
    }

    /// The value of a key.
    pub fn get(&self, key: &str) -> Option<&Value> {
        self.0.get(key)
    }

    /// `source`: `input`, `loop`, `update` or `fork`.
    pub fn source(&self) -> Option<&str> {
        self.get("source").and_then(Value::as_str)
    }

    /// `step`: −1 for the input checkpoint, then 0, 1, …
    pub fn step(&self) -> Option<i64> {
        self.get("step").and_then(Value::as_i64)
    }

    /// `run_id`.
    pub fn run_id(&self) -> Option<&str> {
        self.get("run_id").and_then(Value::as_str)
    }

    /// `parents`: namespace → checkpoint id.
    pub fn parents(&self) -> Option<&Value> {
        self.get("parents")
    }

    /// `counters_since_delta_snapshot`: channel → `(updates, supersteps)` since the
    /// channel's last `_DeltaSnapshot`. Entries that are not a pair of ints are skipped.
    pub fn counters_since_delta_snapshot(&self) -> IndexMap<String, (i64, i64)> {
        let mut out = IndexMap::new();
        if let Some(entries) = self
            .get("counters_since_delta_snapshot")
            .and_then(Value::as_map)
        {
            for (k, v) in entries {
                let pair = v.as_array().and_then(|a| match a {
                    [u, s] => Some((u.as_i64()?, s.as_i64()?)),
                    _ => None,
                });
                if let (Some(name), Some(pair)) = (k.as_str(), pair) {
                    out.insert(name.to_owned(), pair);
                }
            }
        }
        out
    }

    /// Sets `counters_since_delta_snapshot` as Python's loop writes it: only the
    /// channels whose counters are not `(0, 0)`, each as `[updates, supersteps]`; the
    /// key is removed when none is left.
    pub fn set_counters_since_delta_snapshot(&mut self, counters: &IndexMap<String, (i64, i64)>) {
        let non_zero: Vec<(Value, Value)> = counters
            .iter()
            .filter(|(_, c)| **c != (0, 0))
            .map(|(name, (u, s))| {
                (
                    Value::from(name.as_str()),
                    Value::Array(vec![Value::from(*u), Value::from(*s)]),
                )
            })
            .collect();
        if non_zero.is_empty() {
            self.0.shift_remove("counters_since_delta_snapshot");
        } else {
            self.0.insert(
                "counters_since_delta_snapshot".to_owned(),
                Value::Map(non_zero),
            );
        }
    }

    /// Counts one more superstep in `counters_since_delta_snapshot`, as Python's
    /// `update_state` and loop do: for every delta channel of the graph
    /// (`delta_channels`), supersteps + 1, and updates + 1 when it is in `updated`;
    /// then the channels in `snapshotted` (those whose value this checkpoint stores as
    /// a `_DeltaSnapshot`) go back to `(0, 0)`. The counters start from the ones this
    /// metadata holds (those of the parent, after [`for_update`](Self::for_update)).
    pub fn advance_delta_counters(
        &mut self,
        delta_channels: &[&str],
        updated: &[&str],
        snapshotted: &[&str],
    ) {
        let previous = self.counters_since_delta_snapshot();
        let mut next: IndexMap<String, (i64, i64)> = IndexMap::new();
        for name in delta_channels {
            let (u, s) = previous.get(*name).copied().unwrap_or((0, 0));
            let u = if updated.contains(name) {
                u.saturating_add(1)
            } else {
                u
            };
            let counters = if snapshotted.contains(name) {
                (0, 0)
            } else {
                (u, s.saturating_add(1))
            };
            next.insert((*name).to_owned(), counters);
        }
        self.set_counters_since_delta_snapshot(&next);
    }

    /// The metadata of a state edit stored after `previous` (see
    /// [`Checkpoint::next_for_update`](super::Checkpoint::next_for_update)): `{"source": "update", "step": previous step + 1,
    /// "parents": {}}`, carrying the parent's `counters_since_delta_snapshot`
    /// unchanged. On a thread with delta channels, count this edit as Python's
    /// `update_state` does with [`advance_delta_counters`](Self::advance_delta_counters)
    /// (only you know the graph's delta channels and which ones you snapshot); without
    /// it, the snapshot cadence lags one superstep per edit.
    pub fn for_update(previous: &CheckpointMetadata) -> Self {
        let step = previous.step().map_or(0, |s| s.saturating_add(1));
        let mut md = CheckpointMetadata::new("update", step);
        if let Some(counters) = previous.get("counters_since_delta_snapshot") {
            md.0.insert("counters_since_delta_snapshot".to_owned(), counters.clone());
        }
        md
    }

    /// The metadata as Python's dict.
    pub fn to_value(&self) -> Value {
        str_map_to_value(&self.0)
    }

    /// Reads Python's metadata dict (a map with string keys).
    ///
    /// # Errors
    ///
    /// [`ErrorKind::InvalidMetadata`](crate::ErrorKind::InvalidMetadata) when it is not a map or a key is not a string.
    pub fn from_value(value: &Value) -> Result<Self, Error> {
        let entries = value.as_map().ok_or_else(|| SaverFault::InvalidMetadata {
            reason: format!("expected a map, found {}", value.kind_name()),
        })?;
        let mut out = IndexMap::with_capacity(entries.len());
        for (k, v) in entries {
            let key = k.as_str().ok_or_else(|| SaverFault::InvalidMetadata {
                reason: format!("a {} key", k.kind_name()),
            })?;
            out.insert(key.to_owned(), v.clone());
        }
        Ok(CheckpointMetadata(out))
    }
}

/// Python's `get_checkpoint_metadata(config, metadata)`: the metadata a saver stores.
///
/// `\u0000` is removed from string values; then scalar (str, int, float, bool) keys of
/// `config.metadata` and of `config.configurable` that are not present yet, do not start
/// with `__` and are not in [`EXCLUDED_METADATA_KEYS`] are copied in (strings also
/// without `\u0000`).
pub fn checkpoint_metadata(
    config: &CheckpointConfig,
    metadata: &CheckpointMetadata,
) -> CheckpointMetadata {
    let strip = |v: &Value| match v {
        Value::Str(s) if s.contains('\u{0}') => Value::Str(s.replace('\u{0}', "").into()),
        other => other.clone(),
    };
    let mut out: IndexMap<String, Value> = metadata
        .0
        .iter()
        .map(|(k, v)| (k.clone(), strip(v)))
        .collect();
    // Python iterates `config["configurable"]` including thread_id, checkpoint_ns and
    // checkpoint_id, but those are excluded keys, so only the extra keys matter.
    for source in [&config.metadata, &config.configurable] {
        for (key, v) in source {
            if out.contains_key(key)
                || EXCLUDED_METADATA_KEYS.contains(&key.as_str())
                || key.starts_with("__")
            {
                continue;
            }
            match v {
                Value::Str(_) => {
                    out.insert(key.clone(), strip(v));
                }
                Value::Int(_) | Value::Bool(_) | Value::F64(_) | Value::F32(_) => {
                    out.insert(key.clone(), v.clone());
                }
                _ => {}
            }
        }
    }
    CheckpointMetadata(out)
}

/// Where `value` nests containers (maps, arrays) more than `limit` levels deep, counting
/// `value` itself as level 1 when it is a container: `None` when it does not. Walks
/// without recursion, so any depth is safe to check.
///
/// `put` refuses what its own readers would refuse: the in-memory saver's msgpack rows
/// stop at [`DEFAULT_MAX_DEPTH`](crate::msgpack::DEFAULT_MAX_DEPTH) when encoding; the
/// JSON documents of the SQLite and Postgres savers (metadata, the `checkpoint` JSONB)
/// are checked with this before they are written, against the depth their readers
/// accept, so a stored checkpoint always reads back.
#[cfg(any(feature = "sqlite", feature = "postgres"))]
pub(crate) fn too_deep(value: &Value, limit: usize) -> Option<String> {
    let mut stack: Vec<(&Value, usize)> = vec![(value, 1)];
    while let Some((v, level)) = stack.pop() {
        let children: Box<dyn Iterator<Item = &Value>> = match v {
            Value::Array(items) => Box::new(items.iter()),
            Value::Map(entries) => Box::new(entries.iter().flat_map(|(k, v)| [k, v])),
            Value::DeltaSnapshot(inner) => Box::new(std::iter::once(&**inner)),
            _ => continue,
        };
        if level > limit {
            return Some(format!(
                "nested more than {limit} levels deep (readers stop at {limit}); refused so \
                 the thread stays readable"
            ));
        }
        stack.extend(children.map(|c| (c, level + 1)));
    }
    None
}

/// [`too_deep`] as the error `put` returns for metadata.
#[cfg(any(feature = "sqlite", feature = "postgres"))]
pub(crate) fn refuse_deep_metadata(value: &Value, limit: usize) -> Result<(), Error> {
    match too_deep(value, limit) {
        Some(reason) => Err(SaverFault::InvalidMetadata { reason }.into()),
        None => Ok(()),
    }
}

/// [`too_deep`] as the error `put` returns for the checkpoint document.
#[cfg(feature = "postgres")]
pub(crate) fn refuse_deep_checkpoint(value: &Value, limit: usize) -> Result<(), Error> {
    match too_deep(value, limit) {
        Some(reason) => Err(SaverFault::InvalidCheckpoint {
            field: "checkpoint".to_owned(),
            reason,
        }
        .into()),
        None => Ok(()),
    }
}
