//! Helpers shared by the conformance cases: Python's `test_utils.py`, ported.

use std::fmt;

use indexmap::IndexMap;

use crate::saver::traits::{CheckpointSaver, ListOptions};
use crate::saver::types::{
    now_isoformat, python_eq, random_u64, uuid6, ChannelVersion, ChannelVersions, Checkpoint,
    CheckpointConfig, CheckpointMetadata, CheckpointTuple,
};
use crate::value::Value;

/// Why a case failed: a broken expectation or an error from the saver.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Failure(pub String);

impl fmt::Display for Failure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl From<crate::Error> for Failure {
    fn from(e: crate::Error) -> Self {
        Failure(format!("saver error ({}): {e}", e.kind()))
    }
}

/// The result of one case.
pub type CaseResult = Result<(), Failure>;

/// `assert cond, message` for cases: returns a [`Failure`] instead of panicking.
macro_rules! ensure {
    ($cond:expr, $($fmt:tt)+) => {
        if !$cond {
            return Err($crate::saver::conformance::util::Failure(format!($($fmt)+)));
        }
    };
}
pub(crate) use ensure;

/// A random UUIDv4 string (`str(uuid4())`).
pub fn uuid4() -> String {
    let n = (u128::from(random_u64()) << 64) | u128::from(random_u64());
    let n = (n & !(0xF000u128 << 64)) | (4u128 << 76);
    let n = (n & !(0xC000u128 << 48)) | (0x8000u128 << 48);
    let hex = format!("{n:032x}");
    let p = |a: usize, b: usize| hex.get(a..b).unwrap_or("");
    format!(
        "{}-{}-{}-{}-{}",
        p(0, 8),
        p(8, 12),
        p(12, 16),
        p(16, 20),
        p(20, 32)
    )
}

/// `generate_checkpoint(...)`: `v=1`, a fresh `uuid6(clock_seq=-1)` id, the current
/// time, `pending_sends=[]` and `updated_channels=None`, in Python's key order.
pub fn generate_checkpoint(
    channel_values: &[(&str, Value)],
    channel_versions: &[(&str, ChannelVersion)],
    versions_seen: &[(&str, &[(&str, ChannelVersion)])],
) -> Checkpoint {
    let mut cp = Checkpoint::from_value(&Value::map([
        ("v", Value::from(1i64)),
        ("id", Value::from(uuid6(-1))),
        ("ts", Value::from(now_isoformat())),
        ("channel_values", Value::Map(Vec::new())),
        ("channel_versions", Value::Map(Vec::new())),
        ("versions_seen", Value::Map(Vec::new())),
        ("pending_sends", Value::Array(Vec::new())),
        ("updated_channels", Value::Nil),
    ]))
    .unwrap_or_else(|_| Checkpoint::now(-1));
    cp.channel_values = channel_values
        .iter()
        .map(|(k, v)| ((*k).to_owned(), v.clone()))
        .collect();
    cp.channel_versions = versions(channel_versions);
    cp.versions_seen = versions_seen
        .iter()
        .map(|(node, vs)| ((*node).to_owned(), versions(vs)))
        .collect();
    cp
}

/// A `ChannelVersions` map from pairs.
pub fn versions(pairs: &[(&str, ChannelVersion)]) -> ChannelVersions {
    pairs
        .iter()
        .map(|(k, v)| ((*k).to_owned(), v.clone()))
        .collect()
}

/// `generate_config(thread_id, checkpoint_ns=…, checkpoint_id=…)`.
pub fn generate_config(
    thread_id: &str,
    checkpoint_ns: &str,
    checkpoint_id: Option<&str>,
) -> CheckpointConfig {
    let mut c = CheckpointConfig::new(thread_id).with_ns(checkpoint_ns);
    c.checkpoint_id = checkpoint_id.map(str::to_owned);
    c
}

/// `generate_config(tid)` in the root namespace.
pub fn config(thread_id: &str) -> CheckpointConfig {
    generate_config(thread_id, "", None)
}

/// `generate_config(tid)` whose `checkpoint_id` is the parent `parent` names.
pub fn child_config(thread_id: &str, parent: Option<&CheckpointConfig>) -> CheckpointConfig {
    let mut c = config(thread_id);
    c.checkpoint_id = parent.and_then(|p| p.checkpoint_id.clone());
    c
}

/// `generate_metadata(source, step, **extra)`.
pub fn generate_metadata(source: &str, step: i64, extra: &[(&str, Value)]) -> CheckpointMetadata {
    let mut md = CheckpointMetadata::new(source, step);
    for (k, v) in extra {
        md.0.insert((*k).to_owned(), v.clone());
    }
    md
}

/// `generate_metadata()`: `{"source": "loop", "step": 0, "parents": {}}`.
pub fn metadata() -> CheckpointMetadata {
    generate_metadata("loop", 0, &[])
}

/// `[t async for t in saver.alist(config)]`.
///
/// # Errors
///
/// The saver's error, as a [`Failure`].
pub async fn list_all(
    saver: &dyn CheckpointSaver,
    config: &CheckpointConfig,
) -> Result<Vec<CheckpointTuple>, Failure> {
    Ok(saver.list(Some(config), &ListOptions::new()).await?)
}

/// The ids of listed tuples, in order.
pub fn ids(tuples: &[CheckpointTuple]) -> Vec<String> {
    tuples.iter().map(|t| t.checkpoint.id.clone()).collect()
}

/// `str(version).split(".")[0]`.
pub fn version_major(v: &ChannelVersion) -> String {
    v.to_string().split('.').next().unwrap_or("").to_owned()
}

/// Python `==` between `channel_values` and an expected dict.
pub fn values_eq(actual: &IndexMap<String, Value>, expected: &[(&str, Value)]) -> bool {
    let a = Value::Map(
        actual
            .iter()
            .map(|(k, v)| (Value::from(k.as_str()), v.clone()))
            .collect(),
    );
    let e = Value::map(expected.iter().map(|(k, v)| (*k, v.clone())));
    python_eq(&a, &e)
}

/// Python `==` between two values.
pub fn py_eq(a: &Value, b: &Value) -> bool {
    python_eq(a, b)
}

/// The `run_id` of a tuple's metadata.
pub fn run_id_of(t: &CheckpointTuple) -> Option<String> {
    t.metadata.run_id().map(str::to_owned)
}

/// `writes` as `(channel, value)` pairs.
pub fn writes(pairs: &[(&str, Value)]) -> Vec<(String, Value)> {
    pairs
        .iter()
        .map(|(c, v)| ((*c).to_owned(), v.clone()))
        .collect()
}

/// An int version.
pub fn v(i: i64) -> ChannelVersion {
    ChannelVersion::Int(i)
}

/// After a delete: stores `checkpoint` again at `stored`'s place and counts the
/// pending writes it comes back with. Writes the delete forgot (rows left in a writes
/// table) reappear; a correct saver gives 0.
///
/// # Errors
///
/// The saver's error, as a [`Failure`].
pub async fn writes_after_restoring(
    saver: &dyn CheckpointSaver,
    stored: &CheckpointConfig,
    checkpoint: &Checkpoint,
) -> Result<usize, Failure> {
    let mut at = stored.clone();
    at.checkpoint_id = None;
    saver
        .put(&at, checkpoint, &metadata(), &versions(&[]))
        .await?;
    Ok(saver
        .get_tuple(stored)
        .await?
        .map(|t| t.pending_writes.len())
        .unwrap_or(0))
}
