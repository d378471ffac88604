//! Python's `search_where`: the `WHERE` clause of `list`, with the same metadata
//! filter semantics (`json_extract` equality, not containment) and the same key check.

use rusqlite::types::Value as SqlValue;

use crate::saver::error::SaverFault;
use crate::saver::pyjson;
use crate::saver::traits::ListOptions;
use crate::saver::types::CheckpointConfig;
use crate::saver::Result;
use crate::value::Value;

/// Python's `_FILTER_PATTERN`, `^[a-zA-Z0-9_.-]+$`: the key is spliced into a JSON
/// path, so nothing else may reach the SQL text.
fn valid_key(key: &str) -> bool {
    !key.is_empty()
        && key
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'.' | b'-'))
}

/// Python's `_where_value`: the operator and the bound value for one filter value.
fn where_value(key: &str, value: &Value) -> Result<(&'static str, SqlValue)> {
    let invalid = |reason: String| -> crate::Error {
        SaverFault::InvalidFilter {
            key: key.to_owned(),
            reason,
        }
        .into()
    };
    Ok(match value {
        Value::Nil => ("IS ?", SqlValue::Null),
        Value::Str(s) => ("= ?", SqlValue::Text(s.to_string())),
        // `isinstance(True, int)`: Python binds the bool itself, which sqlite3 stores as 1/0.
        Value::Bool(b) => ("= ?", SqlValue::Integer(i64::from(*b))),
        Value::Int(i) => (
            "= ?",
            SqlValue::Integer(i.as_i64().ok_or_else(|| {
                invalid(format!(
                    "{i} does not fit SQLite's 64-bit integers (Python's sqlite3 raises OverflowError)"
                ))
            })?),
        ),
        Value::F64(f) => ("= ?", SqlValue::Real(*f)),
        Value::F32(f) => ("= ?", SqlValue::Real(f64::from(*f))),
        Value::Map(_) | Value::Array(_) => (
            "= ?",
            SqlValue::Text(pyjson::dumps(value, pyjson::FILTER).map_err(invalid)?),
        ),
        other => {
            return Err(invalid(format!(
                "a {} has no equality in SQL (only None, bool, int, float, str, list and dict)",
                other.kind_name()
            )))
        }
    })
}

/// `WHERE …` (or nothing) and its parameters, in Python's order: thread, namespace
/// (only when given), checkpoint id, metadata filters, `before`.
///
/// # Errors
/// [`ErrorKind::MissingThreadId`](crate::ErrorKind::MissingThreadId) for a config without a thread,
/// [`ErrorKind::InvalidFilter`](crate::ErrorKind::InvalidFilter) for a key outside `[a-zA-Z0-9_.-]` or a value with no
/// SQL equality.
pub(super) fn search_where(
    config: Option<&CheckpointConfig>,
    options: &ListOptions,
) -> Result<(String, Vec<SqlValue>)> {
    let mut wheres: Vec<String> = Vec::new();
    let mut params: Vec<SqlValue> = Vec::new();
    if let Some(config) = config {
        wheres.push("thread_id = ?".to_owned());
        params.push(SqlValue::Text(config.require_thread_id("list")?.to_owned()));
        if let Some(ns) = &config.checkpoint_ns {
            wheres.push("checkpoint_ns = ?".to_owned());
            params.push(SqlValue::Text(ns.clone()));
        }
        if let Some(id) = config.checkpoint_id.as_deref().filter(|id| !id.is_empty()) {
            wheres.push("checkpoint_id = ?".to_owned());
            params.push(SqlValue::Text(id.to_owned()));
        }
    }
    for (key, value) in &options.filter {
        if !valid_key(key) {
            return Err(SaverFault::InvalidFilter {
                key: key.clone(),
                reason: "filter keys may only hold ASCII letters, digits, '_', '.' and '-'"
                    .to_owned(),
            }
            .into());
        }
        let (op, param) = where_value(key, value)?;
        wheres.push(format!(
            "json_extract(CAST(metadata AS TEXT), '$.{key}') {op}"
        ));
        params.push(param);
    }
    if let Some(before) = options
        .before
        .as_ref()
        .and_then(|b| b.checkpoint_id.as_deref())
        .filter(|id| !id.is_empty())
    {
        wheres.push("checkpoint_id < ?".to_owned());
        params.push(SqlValue::Text(before.to_owned()));
    }
    let clause = if wheres.is_empty() {
        String::new()
    } else {
        format!("WHERE {}", wheres.join(" AND "))
    };
    Ok((clause, params))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_outside_pythons_pattern_are_refused() {
        for bad in ["", "a b", "a'b", "a)--", "ключ", "a$"] {
            let opts = ListOptions::new().filter(bad, 1i64);
            let err = search_where(None, &opts).unwrap_err().to_string();
            assert!(err.contains("invalid list filter"), "{bad:?}: {err}");
        }
        let ok = ListOptions::new().filter("a.b-c_D9", 1i64);
        assert!(search_where(None, &ok).is_ok());
    }

    #[test]
    fn clause_and_parameters_follow_python_order() {
        let cfg = CheckpointConfig::new("t").with_ns("");
        let opts = ListOptions::new()
            .filter("source", "loop")
            .filter("n", Value::Nil)
            .before(CheckpointConfig::new("t").with_checkpoint_id("9"));
        let (clause, params) = search_where(Some(&cfg), &opts).unwrap();
        assert_eq!(
            clause,
            "WHERE thread_id = ? AND checkpoint_ns = ? AND json_extract(CAST(metadata AS TEXT), '$.source') = ? AND json_extract(CAST(metadata AS TEXT), '$.n') IS ? AND checkpoint_id < ?"
        );
        assert_eq!(params.len(), 5);
        assert_eq!(params[4], SqlValue::Text("9".into()));
    }
}
