//! Channel versions: [`ChannelVersion`] (Python's `str | int | float`) and the
//! `f"{n:032}.{random():016}"` strings Python's savers make.

use std::fmt;

use indexmap::IndexMap;

use super::py_float_repr;
use crate::error::Error;
use crate::saver::error::SaverFault;
use crate::saver::Result;
use crate::value::Value;

/// A channel version: Python's `str | int | float`.
#[derive(Clone, Debug, PartialEq)]
pub enum ChannelVersion {
    /// An integer version (the base saver's default).
    Int(i64),
    /// A float version.
    Float(f64),
    /// A string version (`InMemorySaver`'s `"000…0003.0.123…"`).
    Str(String),
}

impl ChannelVersion {
    /// The version as a [`Value`].
    pub fn to_value(&self) -> Value {
        match self {
            ChannelVersion::Int(i) => Value::from(*i),
            ChannelVersion::Float(f) => Value::F64(*f),
            ChannelVersion::Str(s) => Value::from(s.as_str()),
        }
    }

    /// Reads a version from a [`Value`] (int, float or str).
    pub fn from_value(value: &Value) -> Option<ChannelVersion> {
        match value {
            Value::Int(i) => i.as_i64().map(ChannelVersion::Int),
            Value::F64(f) => Some(ChannelVersion::Float(*f)),
            Value::F32(f) => Some(ChannelVersion::Float(f64::from(*f))),
            Value::Str(s) => Some(ChannelVersion::Str(s.to_string())),
            _ => None,
        }
    }
}

impl fmt::Display for ChannelVersion {
    /// Python's `str(version)`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ChannelVersion::Int(i) => write!(f, "{i}"),
            ChannelVersion::Float(x) => f.write_str(&py_float_repr(*x)),
            ChannelVersion::Str(s) => f.write_str(s),
        }
    }
}

impl From<i64> for ChannelVersion {
    fn from(i: i64) -> Self {
        ChannelVersion::Int(i)
    }
}
impl From<f64> for ChannelVersion {
    fn from(f: f64) -> Self {
        ChannelVersion::Float(f)
    }
}
impl From<&str> for ChannelVersion {
    fn from(s: &str) -> Self {
        ChannelVersion::Str(s.to_owned())
    }
}
impl From<String> for ChannelVersion {
    fn from(s: String) -> Self {
        ChannelVersion::Str(s)
    }
}

/// Python's `ChannelVersions`: channel name → version, in insertion order.
pub type ChannelVersions = IndexMap<String, ChannelVersion>;

pub(super) fn versions_to_value(versions: &ChannelVersions) -> Value {
    Value::Map(
        versions
            .iter()
            .map(|(k, v)| (Value::from(k.as_str()), v.to_value()))
            .collect(),
    )
}

pub(super) fn versions_from_value(value: &Value, field: &str) -> Result<ChannelVersions, Error> {
    let entries = value.as_map().ok_or_else(|| {
        crate::saver::error::invalid_checkpoint(
            field,
            format!("expected a map, found {}", value.kind_name()),
        )
    })?;
    let mut out = ChannelVersions::with_capacity(entries.len());
    for (k, v) in entries {
        let key = k.as_str().ok_or_else(|| {
            crate::saver::error::invalid_checkpoint(field, format!("a {} key", k.kind_name()))
        })?;
        let version = ChannelVersion::from_value(v).ok_or_else(|| {
            crate::saver::error::invalid_checkpoint(
                format!("{field}.{key}"),
                format!(
                    "a version must be str, int or float, found {}",
                    v.kind_name()
                ),
            )
        })?;
        out.insert(key.to_owned(), version);
    }
    Ok(out)
}

/// `InMemorySaver.get_next_version`'s string: `f"{n:032}.{h:016}"`.
pub(crate) fn format_memory_version(n: i64, h: f64) -> String {
    let frac = py_float_repr(h);
    let frac = if frac.len() < 16 {
        format!("{}{frac}", "0".repeat(16 - frac.len()))
    } else {
        frac
    };
    format!("{n:032}.{frac}")
}

/// `get_next_version` of Python's `InMemorySaver`, `SqliteSaver` and
/// `BasePostgresSaver`: `f"{n + 1:032}.{random.random():016}"` where `n` is the current
/// int version, or the integer before the first `.` of the current string version (0
/// when there is none). Float versions are refused (Python fails on them too).
pub(crate) fn next_string_version(
    current: Option<&ChannelVersion>,
    saver: &str,
) -> Result<ChannelVersion> {
    let n = match current {
        None => 0,
        Some(ChannelVersion::Int(i)) => *i,
        Some(ChannelVersion::Str(s)) => parse_version_prefix(s)?,
        Some(v @ ChannelVersion::Float(_)) => {
            return Err(SaverFault::InvalidVersion {
                version: v.to_string(),
                reason: format!("{saver} versions are str or int"),
            }
            .into())
        }
    };
    let next = n
        .checked_add(1)
        .ok_or_else(|| crate::saver::error::overflow(&n.to_string()))?;
    Ok(ChannelVersion::Str(format_memory_version(
        next,
        super::random_f64(),
    )))
}

/// Python's `int(current.split(".")[0])` for a version string.
pub(crate) fn parse_version_prefix(version: &str) -> Result<i64, Error> {
    let head = version.split('.').next().unwrap_or("").trim();
    let cleaned: String = head.chars().filter(|c| *c != '_').collect();
    cleaned
        .parse::<i64>()
        .map_err(|_| SaverFault::InvalidVersion {
            version: version.to_owned(),
            reason: "the part before the first '.' is not an integer".to_owned(),
        })
        .map_err(Error::from)
}
