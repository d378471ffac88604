//! [`Checkpoint`]: Python's checkpoint dict, keys in the order they were written.

use indexmap::IndexMap;

use super::maps::{str_map_from_owned, str_map_from_value, str_map_to_value};
use super::versions::{versions_from_value, versions_to_value};
use super::{now_isoformat, uuid6, ChannelVersion, ChannelVersions};
use crate::error::Error;
use crate::value::Value;

/// The top-level keys of a checkpoint in the order langgraph's `create_checkpoint`
/// writes them.
pub(super) const CREATE_CHECKPOINT_ORDER: [&str; 7] = [
    "v",
    "ts",
    "id",
    "channel_values",
    "channel_versions",
    "versions_seen",
    "updated_channels",
];

/// Python's `Checkpoint` dict: a state snapshot.
///
/// Unknown top-level keys (e.g. `pending_sends` of older versions) are kept in
/// [`extra`](Self::extra), and the key order read by [`from_value`](Self::from_value)
/// is remembered, so converting back gives the same dict in the same order.
///
/// Equality is Python's dict equality: every field and value, not the order the keys
/// were read in (which is kept only so the checkpoint writes back to the same bytes).
/// So a checkpoint that went through any saver's `put` and `get_tuple` compares equal
/// to the original, even where the saver hands `channel_values` back as the last key,
/// as Python's `InMemorySaver` does.
#[derive(Clone, Debug)]
pub struct Checkpoint {
    /// `v`: the format version (langgraph 1.x writes 4).
    pub v: i64,
    /// `id`: a time-ordered UUIDv6 string; the largest id of a thread is its latest.
    pub id: String,
    /// `ts`: ISO-8601 timestamp.
    pub ts: String,
    /// `channel_values`: channel → value.
    pub channel_values: IndexMap<String, Value>,
    /// `channel_versions`: channel → version.
    pub channel_versions: ChannelVersions,
    /// `versions_seen`: node → channel → version.
    pub versions_seen: IndexMap<String, ChannelVersions>,
    /// `updated_channels`: `None` is Python's `None` (or an absent key).
    pub updated_channels: Option<Vec<String>>,
    /// Every other top-level key, in order.
    pub extra: IndexMap<String, Value>,
    /// The top-level key order as read (or langgraph's default for new checkpoints).
    order: Vec<String>,
}

impl PartialEq for Checkpoint {
    fn eq(&self, other: &Self) -> bool {
        self.v == other.v
            && self.id == other.id
            && self.ts == other.ts
            && self.channel_values == other.channel_values
            && self.channel_versions == other.channel_versions
            && self.versions_seen == other.versions_seen
            && self.updated_channels == other.updated_channels
            && self.extra == other.extra
    }
}

impl Checkpoint {
    /// An empty checkpoint with this id and timestamp, `v = 4` (langgraph 1.x), keys in
    /// `create_checkpoint`'s order.
    pub fn new(id: impl Into<String>, ts: impl Into<String>) -> Self {
        Checkpoint {
            v: 4,
            id: id.into(),
            ts: ts.into(),
            channel_values: IndexMap::new(),
            channel_versions: ChannelVersions::new(),
            versions_seen: IndexMap::new(),
            updated_channels: None,
            extra: IndexMap::new(),
            order: CREATE_CHECKPOINT_ORDER
                .iter()
                .map(|s| (*s).to_owned())
                .collect(),
        }
    }

    /// An empty checkpoint with a fresh id ([`uuid6`] with `clock_seq = step`) and the
    /// current UTC time, as langgraph creates one for a step.
    pub fn now(step: i64) -> Self {
        Checkpoint::new(uuid6(step), now_isoformat())
    }

    /// The next checkpoint of a thread for a **state edit** made outside a graph run
    /// (what Python's `graph.update_state` stores, without running a node): a fresh id
    /// and timestamp, the same values, versions and `versions_seen`, and the parent's
    /// `updated_channels` *kept*, so the tasks pending at `self` (an interrupted node,
    /// say) are still pending when the graph resumes from the edit. Channels you then
    /// change with [`set_channel`](Self::set_channel) are added to that list. Store it
    /// with the parent's config and
    /// [`CheckpointMetadata::for_update`](super::CheckpointMetadata::for_update).
    ///
    /// For a **continuation** (a superstep of your own after a finished thread, where
    /// `updated_channels` must list only the channels this step changed) use
    /// [`next_for_step`](Self::next_for_step).
    ///
    /// `step` is the new checkpoint's step (the `step` of its metadata: the parent's
    /// plus one). It only seeds the id: Python's `create_checkpoint` makes the id with
    /// `uuid6(clock_seq=step)`; ids stay time-ordered whatever the step.
    ///
    /// ```
    /// use langgraph_codec::saver::{Checkpoint, ChannelVersion};
    /// use langgraph_codec::Value;
    ///
    /// let mut parent = Checkpoint::now(3);
    /// parent.updated_channels = Some(vec!["branch:to:review".into()]);
    /// let mut next = parent.next_for_update(4);
    /// next.set_channel("notes", Value::from("checked"), ChannelVersion::Int(2));
    /// assert_ne!(next.id, parent.id);
    /// assert_eq!(
    ///     next.updated_channels.as_deref(),
    ///     Some(&["branch:to:review".to_owned(), "notes".to_owned()][..])
    /// );
    /// ```
    pub fn next_for_update(&self, step: i64) -> Checkpoint {
        Checkpoint {
            id: uuid6(step),
            ts: now_isoformat(),
            ..self.clone()
        }
    }

    /// The next checkpoint of a thread for a **continuation**: a superstep run by your
    /// own code after the parent (e.g. a Rust step appended to a finished Python
    /// thread). A fresh id and timestamp, the same values, versions and
    /// `versions_seen`, and an *empty* `updated_channels`: only the channels this step
    /// changes ([`set_channel`](Self::set_channel), [`bump_channel`](Self::bump_channel))
    /// are listed, as Python's
    /// `create_checkpoint` lists the channels a superstep updated.
    ///
    /// `step` is as in [`next_for_update`](Self::next_for_update): the new checkpoint's
    /// metadata step, used only as the id's `uuid6` clock sequence.
    ///
    /// ```
    /// use langgraph_codec::saver::{Checkpoint, ChannelVersion};
    /// use langgraph_codec::Value;
    ///
    /// let mut parent = Checkpoint::now(3);
    /// parent.updated_channels = Some(vec!["messages".into()]);
    /// let mut next = parent.next_for_step(4);
    /// next.set_channel("notes", Value::from("done"), ChannelVersion::Int(2));
    /// assert_eq!(next.updated_channels.as_deref(), Some(&["notes".to_owned()][..]));
    /// ```
    pub fn next_for_step(&self, step: i64) -> Checkpoint {
        Checkpoint {
            updated_channels: Some(Vec::new()),
            ..self.next_for_update(step)
        }
    }

    /// Lists a channel in `updated_channels` (kept sorted, as langgraph writes it).
    fn mark_updated(&mut self, channel: &str) {
        let updated = self.updated_channels.get_or_insert_with(Vec::new);
        if !updated.iter().any(|c| c == channel) {
            updated.push(channel.to_owned());
            updated.sort();
        }
    }

    /// Sets a channel's value and version and lists it in `updated_channels` (kept
    /// sorted, as langgraph writes it). A new channel goes last in `channel_values` and
    /// `channel_versions`; an existing one keeps its place.
    pub fn set_channel(
        &mut self,
        channel: impl Into<String>,
        value: impl Into<Value>,
        version: ChannelVersion,
    ) {
        let channel = channel.into();
        self.mark_updated(&channel);
        self.channel_versions.insert(channel.clone(), version);
        self.channel_values.insert(channel, value.into());
    }

    /// Gives a channel a new version *without* a value at this checkpoint, and lists it
    /// in `updated_channels`: a delta channel's superstep. Python's `create_checkpoint`
    /// omits a delta channel from `channel_values` except on a snapshot step; the
    /// value is rebuilt from the writes since the nearest ancestor that stores one
    /// ([`get_delta_channel_history`](crate::saver::CheckpointSaver::get_delta_channel_history)).
    /// A value carried over from the parent is removed (in order), since a stored value
    /// would become that channel's seed. Returns the removed value.
    pub fn bump_channel(
        &mut self,
        channel: impl Into<String>,
        version: ChannelVersion,
    ) -> Option<Value> {
        let channel = channel.into();
        self.mark_updated(&channel);
        let old = self.channel_values.shift_remove(&channel);
        self.channel_versions.insert(channel, version);
        old
    }

    /// Removes a channel from the checkpoint: its value and version (keeping the order
    /// of the others, as Python's dicts do: `IndexMap::swap_remove` would move the
    /// last channel into its place) and its `updated_channels` entry. `versions_seen`
    /// is left as it is (it records what nodes saw). Returns the removed value.
    pub fn remove_channel(&mut self, channel: &str) -> Option<Value> {
        self.channel_versions.shift_remove(channel);
        if let Some(updated) = &mut self.updated_channels {
            updated.retain(|c| c != channel);
        }
        self.channel_values.shift_remove(channel)
    }

    /// The top-level keys in the order they are written.
    pub fn key_order(&self) -> Vec<String> {
        let mut keys: Vec<String> = Vec::new();
        for k in &self.order {
            let present = match k.as_str() {
                "v" | "id" | "ts" | "channel_values" | "channel_versions" | "versions_seen"
                | "updated_channels" => true,
                other => self.extra.contains_key(other),
            };
            if present && !keys.contains(k) {
                keys.push(k.clone());
            }
        }
        for k in [
            "v",
            "id",
            "ts",
            "channel_values",
            "channel_versions",
            "versions_seen",
        ] {
            if !keys.iter().any(|x| x == k) {
                keys.push(k.to_owned());
            }
        }
        if self.updated_channels.is_some() && !keys.iter().any(|x| x == "updated_channels") {
            keys.push("updated_channels".to_owned());
        }
        for k in self.extra.keys() {
            if !keys.contains(k) {
                keys.push(k.clone());
            }
        }
        keys
    }

    fn to_value_impl(&self, with_channel_values: bool) -> Value {
        let mut out = Vec::with_capacity(8);
        for key in self.key_order() {
            let value = match key.as_str() {
                "v" => Value::from(self.v),
                "id" => Value::from(self.id.as_str()),
                "ts" => Value::from(self.ts.as_str()),
                "channel_values" if with_channel_values => str_map_to_value(&self.channel_values),
                "channel_values" => continue,
                "channel_versions" => versions_to_value(&self.channel_versions),
                "versions_seen" => Value::Map(
                    self.versions_seen
                        .iter()
                        .map(|(k, v)| (Value::from(k.as_str()), versions_to_value(v)))
                        .collect(),
                ),
                "updated_channels" => match &self.updated_channels {
                    None => Value::Nil,
                    Some(chs) => {
                        Value::Array(chs.iter().map(|c| Value::from(c.as_str())).collect())
                    }
                },
                other => match self.extra.get(other) {
                    Some(v) => v.clone(),
                    None => continue,
                },
            };
            out.push((Value::from(key), value));
        }
        Value::Map(out)
    }

    /// The checkpoint dict as `Serialize`, borrowing every value: the same map
    /// [`to_value`](Self::to_value) (or [`to_row_value`](Self::to_row_value)) builds,
    /// written without copying the channel values first.
    pub(crate) fn dict(&self, with_channel_values: bool) -> CheckpointDict<'_> {
        CheckpointDict {
            cp: self,
            with_channel_values,
        }
    }

    /// The checkpoint as Python's dict, with `channel_values`.
    pub fn to_value(&self) -> Value {
        self.to_value_impl(true)
    }

    /// The dict a saver stores as the checkpoint row: everything but
    /// `channel_values` (Python's `c = checkpoint.copy(); c.pop("channel_values")`).
    pub fn to_row_value(&self) -> Value {
        self.to_value_impl(false)
    }

    /// [`from_value`](Self::from_value) for a value the caller owns: the channel values
    /// move into the checkpoint instead of being copied (what a saver does with the
    /// value it just decoded).
    ///
    /// # Errors
    /// As [`from_value`](Self::from_value).
    pub fn from_owned_value(mut value: Value) -> Result<Self, Error> {
        let channel_values = match &mut value {
            Value::Map(entries) => entries
                .iter_mut()
                .find(|(k, _)| k.as_str() == Some("channel_values"))
                .map(|(_, v)| std::mem::replace(v, Value::Map(Vec::new()))),
            _ => None,
        };
        let mut cp = Self::from_value(&value)?;
        if let Some(values) = channel_values {
            cp.channel_values = str_map_from_owned(values, "channel_values")?;
        }
        Ok(cp)
    }

    /// Reads Python's checkpoint dict (with or without `channel_values`).
    ///
    /// # Errors
    /// [`ErrorKind::InvalidCheckpoint`](crate::ErrorKind::InvalidCheckpoint) naming the field that does not have Python's
    /// shape (`v`, `id` and `ts` are required).
    pub fn from_value(value: &Value) -> Result<Self, Error> {
        let entries = value.as_map().ok_or_else(|| {
            crate::saver::error::invalid_checkpoint(
                "$",
                format!("expected a map, found {}", value.kind_name()),
            )
        })?;
        let mut cp = Checkpoint::new("", "");
        cp.order.clear();
        let (mut has_v, mut has_id, mut has_ts) = (false, false, false);
        for (k, v) in entries {
            let key = k.as_str().ok_or_else(|| {
                crate::saver::error::invalid_checkpoint("$", format!("a {} key", k.kind_name()))
            })?;
            let expect_str = |v: &Value| -> Result<String, Error> {
                v.as_str().map(str::to_owned).ok_or_else(|| {
                    crate::saver::error::invalid_checkpoint(
                        key,
                        format!("expected a str, found {}", v.kind_name()),
                    )
                })
            };
            match key {
                "v" => {
                    cp.v = v.as_i64().ok_or_else(|| {
                        crate::saver::error::invalid_checkpoint(
                            "v",
                            format!("expected an int, found {}", v.kind_name()),
                        )
                    })?;
                    has_v = true;
                }
                "id" => {
                    cp.id = expect_str(v)?;
                    has_id = true;
                }
                "ts" => {
                    cp.ts = expect_str(v)?;
                    has_ts = true;
                }
                "channel_values" => cp.channel_values = str_map_from_value(v, "channel_values")?,
                "channel_versions" => {
                    cp.channel_versions = versions_from_value(v, "channel_versions")?
                }
                "versions_seen" => {
                    let nodes = str_map_from_value(v, "versions_seen")?;
                    let mut seen = IndexMap::with_capacity(nodes.len());
                    for (node, versions) in &nodes {
                        seen.insert(
                            node.clone(),
                            versions_from_value(versions, &format!("versions_seen.{node}"))?,
                        );
                    }
                    cp.versions_seen = seen;
                }
                "updated_channels" => {
                    cp.updated_channels = match v {
                        Value::Nil => None,
                        Value::Array(items) => Some(
                            items
                                .iter()
                                .map(|c| {
                                    c.as_str().map(str::to_owned).ok_or_else(|| {
                                        crate::saver::error::invalid_checkpoint(
                                            "updated_channels",
                                            format!("a {} item", c.kind_name()),
                                        )
                                    })
                                })
                                .collect::<Result<_, _>>()?,
                        ),
                        other => {
                            return Err(crate::saver::error::invalid_checkpoint(
                                "updated_channels",
                                format!("expected a list or None, found {}", other.kind_name()),
                            ))
                        }
                    }
                }
                other => {
                    cp.extra.insert(other.to_owned(), v.clone());
                }
            }
            if !cp.order.iter().any(|x| x == key) {
                cp.order.push(key.to_owned());
            }
        }
        for (present, name) in [(has_v, "v"), (has_id, "id"), (has_ts, "ts")] {
            if !present {
                return Err(crate::saver::error::invalid_checkpoint(name, "missing"));
            }
        }
        Ok(cp)
    }
}

/// See [`Checkpoint::dict`].
pub(crate) struct CheckpointDict<'a> {
    cp: &'a Checkpoint,
    with_channel_values: bool,
}

/// A version map as `Serialize`: channel → version, in order.
struct Versions<'a>(&'a ChannelVersions);

impl serde::Serialize for Versions<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let mut map = s.serialize_map(Some(self.0.len()))?;
        for (channel, version) in self.0 {
            match version {
                ChannelVersion::Int(i) => map.serialize_entry(channel, i)?,
                ChannelVersion::Float(f) => map.serialize_entry(channel, f)?,
                ChannelVersion::Str(v) => map.serialize_entry(channel, v)?,
            }
        }
        map.end()
    }
}

/// `channel_values` as `Serialize`, in order.
struct Values<'a>(&'a IndexMap<String, Value>);

impl serde::Serialize for Values<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_map(self.0.iter())
    }
}

/// `versions_seen` as `Serialize`: node → version map, in order.
struct Seen<'a>(&'a IndexMap<String, ChannelVersions>);

impl serde::Serialize for Seen<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_map(self.0.iter().map(|(node, v)| (node, Versions(v))))
    }
}

impl serde::Serialize for CheckpointDict<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let cp = self.cp;
        let keys: Vec<String> = cp
            .key_order()
            .into_iter()
            .filter(|k| self.with_channel_values || k != "channel_values")
            .collect();
        let mut map = s.serialize_map(Some(keys.len()))?;
        for key in &keys {
            match key.as_str() {
                "v" => map.serialize_entry(key, &cp.v)?,
                "id" => map.serialize_entry(key, &cp.id)?,
                "ts" => map.serialize_entry(key, &cp.ts)?,
                "channel_values" => map.serialize_entry(key, &Values(&cp.channel_values))?,
                "channel_versions" => map.serialize_entry(key, &Versions(&cp.channel_versions))?,
                "versions_seen" => map.serialize_entry(key, &Seen(&cp.versions_seen))?,
                "updated_channels" => map.serialize_entry(key, &cp.updated_channels)?,
                other => match cp.extra.get(other) {
                    Some(v) => map.serialize_entry(key, v)?,
                    // key_order lists only the extra keys that are present.
                    None => map.serialize_entry(key, &Value::Nil)?,
                },
            }
        }
        map.end()
    }
}
