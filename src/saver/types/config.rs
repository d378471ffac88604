//! [`CheckpointConfig`]: Python's `RunnableConfig` as savers read it.

use indexmap::IndexMap;

use super::maps::{str_map_from_value, str_map_to_value};
use crate::error::Error;
use crate::saver::error::SaverFault;
use crate::value::Value;

/// Python's `RunnableConfig` as far as savers read it:
/// `{"configurable": {"thread_id", "checkpoint_ns", "checkpoint_id", …}, "metadata": {…}}`.
///
/// `thread_id` and `checkpoint_ns` are optional because Python distinguishes a missing
/// key: `put`, `put_writes` and `get_tuple` need a thread id; `list` reads every
/// namespace when `checkpoint_ns` is absent and only the given one when it is set
/// (the root namespace is `""`).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct CheckpointConfig {
    /// `configurable.thread_id`.
    pub thread_id: Option<String>,
    /// `configurable.checkpoint_ns`; `None` = not given (reads as `""`, except in `list`).
    pub checkpoint_ns: Option<String>,
    /// `configurable.checkpoint_id`: a specific checkpoint, or the parent for `put`.
    pub checkpoint_id: Option<String>,
    /// Every other `configurable` key, in order. Scalar ones are copied into the
    /// metadata `put` stores, as Python's `get_checkpoint_metadata` does.
    pub configurable: IndexMap<String, Value>,
    /// `config["metadata"]`, copied into stored metadata the same way.
    pub metadata: IndexMap<String, Value>,
}

impl CheckpointConfig {
    /// A config for `thread_id` in the root namespace (`checkpoint_ns = ""`), latest
    /// checkpoint.
    pub fn new(thread_id: impl Into<String>) -> Self {
        CheckpointConfig {
            thread_id: Some(thread_id.into()),
            checkpoint_ns: Some(String::new()),
            ..Default::default()
        }
    }

    /// A config for `thread_id` in no particular namespace: `list` with it reads every
    /// namespace of the thread (subgraph checkpoints included), as Python does for a
    /// config without `checkpoint_ns`. `get_tuple` and `put` use the root namespace.
    pub fn every_namespace(thread_id: impl Into<String>) -> Self {
        CheckpointConfig {
            thread_id: Some(thread_id.into()),
            ..Default::default()
        }
    }

    /// The config of one stored checkpoint, as savers return it.
    pub fn for_checkpoint(
        thread_id: impl Into<String>,
        checkpoint_ns: impl Into<String>,
        checkpoint_id: impl Into<String>,
    ) -> Self {
        CheckpointConfig {
            thread_id: Some(thread_id.into()),
            checkpoint_ns: Some(checkpoint_ns.into()),
            checkpoint_id: Some(checkpoint_id.into()),
            ..Default::default()
        }
    }

    /// The same config with this namespace.
    pub fn with_ns(mut self, checkpoint_ns: impl Into<String>) -> Self {
        self.checkpoint_ns = Some(checkpoint_ns.into());
        self
    }

    /// The same config pointing at this checkpoint.
    pub fn with_checkpoint_id(mut self, checkpoint_id: impl Into<String>) -> Self {
        self.checkpoint_id = Some(checkpoint_id.into());
        self
    }

    /// The same config with a `config["metadata"]` entry.
    pub fn with_metadata(mut self, key: impl Into<String>, value: impl Into<Value>) -> Self {
        self.metadata.insert(key.into(), value.into());
        self
    }

    /// The namespace, `""` when not given.
    pub fn ns(&self) -> &str {
        self.checkpoint_ns.as_deref().unwrap_or("")
    }

    /// The thread id.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::MissingThreadId`](crate::ErrorKind::MissingThreadId) naming `operation` when it is not set.
    pub fn require_thread_id(&self, operation: &'static str) -> Result<&str, Error> {
        self.thread_id
            .as_deref()
            .ok_or_else(|| SaverFault::MissingThreadId { operation }.into())
    }

    /// The checkpoint id.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::MissingCheckpointId`](crate::ErrorKind::MissingCheckpointId) naming `operation` when it is not set.
    pub fn require_checkpoint_id(&self, operation: &'static str) -> Result<&str, Error> {
        self.checkpoint_id
            .as_deref()
            .ok_or_else(|| SaverFault::MissingCheckpointId { operation }.into())
    }

    /// The config as Python's dict: `{"configurable": {…}}`, plus `"metadata"` when
    /// non-empty.
    pub fn to_value(&self) -> Value {
        let mut conf: Vec<(Value, Value)> = Vec::new();
        if let Some(t) = &self.thread_id {
            conf.push(("thread_id".into(), t.as_str().into()));
        }
        if let Some(ns) = &self.checkpoint_ns {
            conf.push(("checkpoint_ns".into(), ns.as_str().into()));
        }
        if let Some(id) = &self.checkpoint_id {
            conf.push(("checkpoint_id".into(), id.as_str().into()));
        }
        conf.extend(
            self.configurable
                .iter()
                .map(|(k, v)| (Value::from(k.as_str()), v.clone())),
        );
        let mut out = vec![(Value::from("configurable"), Value::Map(conf))];
        if !self.metadata.is_empty() {
            out.push(("metadata".into(), str_map_to_value(&self.metadata)));
        }
        Value::Map(out)
    }

    /// Reads Python's config dict. `thread_id` may be a str or an int (written as its
    /// decimal string); `checkpoint_ns` and `checkpoint_id` must be str (or `None`).
    ///
    /// Keys given at the top level instead of under `configurable`
    /// (`{"thread_id": "t1"}`) are read as LangGraph's `ensure_config` reads a config
    /// given to a graph: every top-level key that is not a `RunnableConfig` key (`tags`,
    /// `metadata`, `callbacks`, `run_name`, `max_concurrency`, `recursion_limit`,
    /// `configurable`, `run_id`) and whose value is not empty (`None`, `[]`, `{}`) is a
    /// `configurable` entry, over the one of the same name in `configurable`. (Python's
    /// checkpoint savers themselves raise `KeyError: 'configurable'` on such a dict.)
    ///
    /// # Errors
    ///
    /// [`ErrorKind::InvalidConfig`](crate::ErrorKind::InvalidConfig) saying which key is wrong: not a map, a
    /// `configurable` that is not a map, or a key of the wrong type.
    pub fn from_value(value: &Value) -> Result<Self, Error> {
        let invalid = |reason: String| -> Error { SaverFault::InvalidConfig { reason }.into() };
        let Some(top) = value.as_map() else {
            return Err(invalid(format!(
                "expected a map, found {}",
                value.kind_name()
            )));
        };
        let mut out = CheckpointConfig::default();
        if let Some(conf) = value.get("configurable") {
            let entries = conf.as_map().ok_or_else(|| {
                invalid(format!(
                    "configurable must be a map, found {}",
                    conf.kind_name()
                ))
            })?;
            for (k, v) in entries {
                let key = k
                    .as_str()
                    .ok_or_else(|| invalid(format!("a {} key in configurable", k.kind_name())))?;
                out.set_configurable(key, v)?;
            }
        }
        for (k, v) in top {
            let Some(key) = k.as_str() else { continue };
            let empty = match v {
                Value::Nil => true,
                Value::Array(items) => items.is_empty(),
                Value::Map(entries) => entries.is_empty(),
                _ => false,
            };
            if !empty && !RUNNABLE_CONFIG_KEYS.contains(&key) {
                out.set_configurable(key, v)?;
            }
        }
        if let Some(md) = value.get("metadata") {
            if !md.is_nil() {
                out.metadata =
                    str_map_from_value(md, "metadata").map_err(|e| invalid(e.to_string()))?;
            }
        }
        Ok(out)
    }

    /// Sets one `configurable` entry: the three known keys into their fields (checked),
    /// any other into [`configurable`](Self::configurable).
    fn set_configurable(&mut self, key: &str, v: &Value) -> Result<(), Error> {
        let as_opt_str = |v: &Value| -> Result<Option<String>, Error> {
            match v {
                Value::Nil => Ok(None),
                Value::Str(s) => Ok(Some(s.to_string())),
                other => Err(SaverFault::InvalidConfig {
                    reason: format!(
                        "configurable.{key} must be a str, found {}",
                        other.kind_name()
                    ),
                }
                .into()),
            }
        };
        match key {
            "thread_id" => {
                self.thread_id = match v {
                    Value::Int(i) => Some(i.to_string()),
                    other => as_opt_str(other)?,
                }
            }
            "checkpoint_ns" => self.checkpoint_ns = as_opt_str(v)?,
            "checkpoint_id" => self.checkpoint_id = as_opt_str(v)?,
            _ => {
                self.configurable.insert(key.to_owned(), v.clone());
            }
        }
        Ok(())
    }
}

/// `langchain_core.runnables.config.CONFIG_KEYS`: the keys of a `RunnableConfig` itself;
/// any other top-level key of a config dict is a `configurable` entry.
const RUNNABLE_CONFIG_KEYS: [&str; 8] = [
    "tags",
    "metadata",
    "callbacks",
    "run_name",
    "max_concurrency",
    "recursion_limit",
    "configurable",
    "run_id",
];
