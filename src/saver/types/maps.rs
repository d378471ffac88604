//! `dict[str, Any]` ⇄ [`Value`] maps, shared by the config, checkpoint and metadata.

use indexmap::IndexMap;

use crate::error::Error;
use crate::value::Value;

pub(super) fn str_map_from_value(
    value: &Value,
    field: &str,
) -> Result<IndexMap<String, Value>, Error> {
    let entries = value.as_map().ok_or_else(|| {
        crate::saver::error::invalid_checkpoint(
            field,
            format!("expected a map, found {}", value.kind_name()),
        )
    })?;
    let mut out = IndexMap::with_capacity(entries.len());
    for (k, v) in entries {
        let key = k.as_str().ok_or_else(|| {
            crate::saver::error::invalid_checkpoint(field, format!("a {} key", k.kind_name()))
        })?;
        out.insert(key.to_owned(), v.clone());
    }
    Ok(out)
}

/// [`str_map_from_value`] for an owned map: the values move, nothing is copied.
pub(super) fn str_map_from_owned(
    value: Value,
    field: &str,
) -> Result<IndexMap<String, Value>, Error> {
    let entries = value.into_map().map_err(|other| {
        crate::saver::error::invalid_checkpoint(
            field,
            format!("expected a map, found {}", other.kind_name()),
        )
    })?;
    let mut out = IndexMap::with_capacity(entries.len());
    for (k, v) in entries {
        let key = k.as_str().ok_or_else(|| {
            crate::saver::error::invalid_checkpoint(field, format!("a {} key", k.kind_name()))
        })?;
        out.insert(key.to_owned(), v);
    }
    Ok(out)
}

pub(super) fn str_map_to_value(map: &IndexMap<String, Value>) -> Value {
    Value::Map(
        map.iter()
            .map(|(k, v)| (Value::from(k.as_str()), v.clone()))
            .collect(),
    )
}
