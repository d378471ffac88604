//! The saver's data types, shaped and ordered exactly like Python's dicts.
//!
//! Every type converts to and from [`Value`](crate::Value) the way Python LangGraph
//! writes it, so a checkpoint row (`dumps_typed` of the checkpoint dict without
//! `channel_values`) and a metadata row written here are byte-identical to the rows
//! Python's `InMemorySaver` writes for the same input, and the other way round.
//!
//! - [`CheckpointConfig`] (`config`), [`Checkpoint`] (`checkpoint`),
//!   [`CheckpointMetadata`] (`metadata`), [`ChannelVersion`] (`versions`);
//! - [`PendingWrite`], [`CheckpointTuple`], [`DeltaChannelHistory`] and the special
//!   write channels (`writes`);
//! - [`uuid6`], [`uuid6_at`], [`now_isoformat`] and [`isoformat_at`] (`ids`); [`python_eq`] (`python`).

mod checkpoint;
mod config;
mod ids;
mod maps;
mod metadata;
mod python;
mod versions;
mod writes;

pub use checkpoint::Checkpoint;
pub use config::CheckpointConfig;
#[cfg(all(feature = "sqlite", feature = "postgres"))]
pub(crate) use ids::civil_from_days;
pub(crate) use ids::random_f64;
#[cfg(feature = "conformance")]
pub(crate) use ids::random_u64;
pub use ids::{isoformat_at, now_isoformat, uuid6, uuid6_at};
#[cfg(feature = "postgres")]
pub(crate) use metadata::refuse_deep_checkpoint;
#[cfg(any(feature = "sqlite", feature = "postgres"))]
pub(crate) use metadata::refuse_deep_metadata;
pub use metadata::{checkpoint_metadata, CheckpointMetadata, EXCLUDED_METADATA_KEYS};
pub(crate) use python::py_float_repr;
pub use python::python_eq;
pub(crate) use versions::next_string_version;
pub use versions::{ChannelVersion, ChannelVersions};
pub use writes::{
    all_special, write_idx, writes_sort_key, CheckpointTuple, DeltaChannelHistory, PendingWrite,
    ERROR, INTERRUPT, RESUME, SCHEDULED, WRITES_IDX_MAP,
};

/// `Serialize` / `Deserialize` through the type's Python dict shape (`to_value` /
/// `from_value`): with `serde_json` a config reads and writes
/// `{"configurable": {"thread_id": …}}`, exactly as Python's JSON does.
macro_rules! serde_via_value {
    ($($ty:ty),* $(,)?) => {$(
        impl serde::Serialize for $ty {
            fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                self.to_value().serialize(s)
            }
        }

        impl<'de> serde::Deserialize<'de> for $ty {
            fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                let value = crate::value::Value::deserialize(d)?;
                <$ty>::from_value(&value).map_err(serde::de::Error::custom)
            }
        }
    )*};
}

impl serde::Serialize for Checkpoint {
    /// The dict [`Checkpoint::to_value`] builds, written without copying the values.
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.dict(true).serialize(s)
    }
}

impl<'de> serde::Deserialize<'de> for Checkpoint {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let value = crate::value::Value::deserialize(d)?;
        Checkpoint::from_owned_value(value).map_err(serde::de::Error::custom)
    }
}

serde_via_value!(
    CheckpointConfig,
    CheckpointMetadata,
    CheckpointTuple,
    PendingWrite
);

#[cfg(test)]
mod tests {
    use super::ids::civil_from_days;
    use super::versions::format_memory_version;
    use super::*;
    use crate::value::Value;
    use indexmap::IndexMap;

    #[test]
    fn float_repr_matches_python() {
        // Expected strings from Python 3.11: repr(x) and f"{x:016}".
        for (x, repr, padded) in [
            (0.5, "0.5", "00000000000000.5"),
            (
                0.8444218515250481,
                "0.8444218515250481",
                "0.8444218515250481",
            ),
            (1.234e-05, "1.234e-05", "00000001.234e-05"),
            (5e-05, "5e-05", "000000000005e-05"),
            (0.0001, "0.0001", "00000000000.0001"),
            (
                0.00012345678901234,
                "0.00012345678901234",
                "0.00012345678901234",
            ),
            (0.1, "0.1", "00000000000000.1"),
            (0.0, "0.0", "00000000000000.0"),
            (0.25, "0.25", "0000000000000.25"),
        ] {
            assert_eq!(py_float_repr(x), repr);
            let v = format_memory_version(3, x);
            assert_eq!(v, format!("00000000000000000000000000000003.{padded}"));
        }
        assert_eq!(py_float_repr(1e16), "1e+16");
        assert_eq!(py_float_repr(123.0), "123.0");
        assert_eq!(py_float_repr(-2.5), "-2.5");
    }

    #[test]
    fn negative_versions_pad_after_the_sign() {
        // Python: f"{-5:032}" == "-" + "0" * 30 + "5"
        let v = format_memory_version(-5, 0.5);
        assert_eq!(v, format!("-{}5.00000000000000.5", "0".repeat(30)));
    }

    #[test]
    fn uuid6_is_increasing_and_well_formed() {
        let a = uuid6(-1);
        let b = uuid6(-1);
        assert!(b > a, "{b} should sort after {a}");
        assert_eq!(a.len(), 36);
        // version nibble 6, variant 10xx, clock_seq -1 -> 0x3fff -> "bfff"
        assert_eq!(a.get(14..15), Some("6"));
        assert_eq!(a.get(19..23), Some("bfff"));
    }

    #[test]
    fn uuid6_at_is_pythons_id_at_that_time() {
        // Python: with time.time_ns() returning 1_700_000_000_123_456_700 and no earlier
        // id, langgraph.checkpoint.base.id.uuid6(clock_seq=5) is
        // 1ee833b0-4c29-6687-8005-<random node>.
        let id = uuid6_at(1_700_000_000_123_456_700, 5);
        assert_eq!(id.get(..24), Some("1ee833b0-4c29-6687-8005-"));
        assert_eq!(id.len(), 36);
        // datetime.fromtimestamp(1_700_000_000.123456, timezone.utc).isoformat()
        assert_eq!(
            isoformat_at(1_700_000_000_123_456_000),
            "2023-11-14T22:13:20.123456+00:00"
        );
        assert_eq!(
            isoformat_at(1_700_000_000_000_000_000),
            "2023-11-14T22:13:20+00:00"
        );
    }

    #[test]
    fn python_equality() {
        assert!(python_eq(&Value::from(1i64), &Value::F64(1.0)));
        assert!(python_eq(&Value::from(1i64), &Value::Bool(true)));
        assert!(!python_eq(&Value::F64(f64::NAN), &Value::F64(f64::NAN)));
        assert!(!python_eq(&Value::from("1"), &Value::from(1i64)));
        let a = Value::map([("x", 1i64), ("y", 2i64)]);
        let b = Value::map([("y", 2i64), ("x", 1i64)]);
        assert!(python_eq(&a, &b));
        assert!(!python_eq(&a, &Value::map([("x", 1i64)])));
    }

    #[test]
    fn civil_dates() {
        assert_eq!(civil_from_days(0), (1970, 1, 1));
        assert_eq!(civil_from_days(19_844), (2024, 5, 1));
        assert_eq!(civil_from_days(-1), (1969, 12, 31));
    }

    #[test]
    fn metadata_merge_follows_get_checkpoint_metadata() {
        // Python: get_checkpoint_metadata(
        //   {"configurable": {"thread_id": "t", "model": "m\x00x", "__secret": "s",
        //                     "langgraph_step": 3, "obj": {}, "temp": 0.5},
        //    "metadata": {"user": "u", "step": 99}},
        //   {"source": "loop", "step": 1, "note": "a\x00b"})
        // == {'source': 'loop', 'step': 1, 'note': 'ab', 'user': 'u', 'model': 'mx', 'temp': 0.5}
        let mut config = CheckpointConfig::new("t");
        config.configurable.insert("model".into(), "m\u{0}x".into());
        config.configurable.insert("__secret".into(), "s".into());
        config
            .configurable
            .insert("langgraph_step".into(), 3i64.into());
        config.configurable.insert("obj".into(), Value::Map(vec![]));
        config.configurable.insert("temp".into(), 0.5f64.into());
        config.metadata.insert("user".into(), "u".into());
        config.metadata.insert("step".into(), 99i64.into());
        let md = CheckpointMetadata(IndexMap::from([
            ("source".to_owned(), Value::from("loop")),
            ("step".to_owned(), Value::from(1i64)),
            ("note".to_owned(), Value::from("a\u{0}b")),
        ]));
        let merged = checkpoint_metadata(&config, &md);
        let keys: Vec<&str> = merged.0.keys().map(String::as_str).collect();
        assert_eq!(keys, ["source", "step", "note", "user", "model", "temp"]);
        assert_eq!(merged.get("note"), Some(&Value::from("ab")));
        assert_eq!(merged.get("model"), Some(&Value::from("mx")));
        assert_eq!(merged.step(), Some(1));
    }

    #[test]
    fn checkpoint_keeps_key_order_and_unknown_keys() {
        let v = Value::map([
            ("v", Value::from(1i64)),
            ("id", Value::from("x")),
            ("ts", Value::from("t")),
            ("channel_values", Value::map([("a", Value::from(1i64))])),
            ("channel_versions", Value::map([("a", Value::from(1i64))])),
            ("versions_seen", Value::Map(vec![])),
            ("pending_sends", Value::Array(vec![])),
            ("updated_channels", Value::Nil),
        ]);
        let cp = Checkpoint::from_value(&v).expect("valid checkpoint");
        assert_eq!(cp.to_value(), v);
        let row = cp.to_row_value();
        let keys: Vec<&str> = row
            .as_map()
            .unwrap_or(&[])
            .iter()
            .filter_map(|(k, _)| k.as_str())
            .collect();
        assert_eq!(
            keys,
            [
                "v",
                "id",
                "ts",
                "channel_versions",
                "versions_seen",
                "pending_sends",
                "updated_channels"
            ]
        );
    }
}
