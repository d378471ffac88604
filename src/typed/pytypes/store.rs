//! LangGraph's store `Item`.

use serde::de::{Deserialize, Deserializer};
use serde::ser::{Serialize, Serializer};

use super::envelopes::{PyClass, PydanticV1};
use crate::value::Value;

/// `langgraph.store.base.Item`, as Python writes it: a pydantic-v1-style envelope
/// `ext 4 ("langgraph.store.base", "Item", item.dict())`, whose timestamps are the
/// ISO 8601 strings `dict()` gives.
///
/// ```
/// use langgraph_codec::typed::pytypes::Item;
/// use langgraph_codec::Value;
///
/// let item = Item {
///     namespace: vec!["users".into(), "u1".into()],
///     key: "k".into(),
///     value: Value::map([("a", 1i64)]),
///     created_at: "2024-01-01T00:00:00+00:00".into(),
///     updated_at: "2024-01-01T00:00:00+00:00".into(),
/// };
/// let bytes = langgraph_codec::typed::to_vec(&item)?;
/// assert_eq!(langgraph_codec::typed::from_slice::<Item>(&bytes)?, item);
/// # Ok::<(), langgraph_codec::Error>(())
/// ```
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Item {
    /// `namespace`: the path of the item, e.g. `("users", "u1")`.
    pub namespace: Vec<String>,
    /// `key`.
    pub key: String,
    /// `value`: the stored dict.
    pub value: Value,
    /// `created_at`, as `datetime.isoformat()`.
    pub created_at: String,
    /// `updated_at`, as `datetime.isoformat()`.
    pub updated_at: String,
}

/// The envelope's fields, read in any order.
#[derive(serde::Deserialize)]
struct Fields {
    namespace: Vec<String>,
    key: String,
    value: Value,
    created_at: String,
    updated_at: String,
}

impl PyClass for Fields {
    const MODULE: &'static str = "langgraph.store.base";
    const NAME: &'static str = "Item";
}

impl Serialize for Item {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        // Borrowing serializer: the fields in order, inside the pydantic v1 envelope.
        #[derive(serde::Serialize)]
        struct Ref<'a> {
            namespace: &'a [String],
            key: &'a str,
            value: &'a Value,
            created_at: &'a str,
            updated_at: &'a str,
        }
        impl PyClass for Ref<'_> {
            const MODULE: &'static str = "langgraph.store.base";
            const NAME: &'static str = "Item";
        }
        PydanticV1(Ref {
            namespace: &self.namespace,
            key: &self.key,
            value: &self.value,
            created_at: &self.created_at,
            updated_at: &self.updated_at,
        })
        .serialize(s)
    }
}

impl<'de> Deserialize<'de> for Item {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let f = PydanticV1::<Fields>::deserialize(d)?.0;
        Ok(Item {
            namespace: f.namespace,
            key: f.key,
            value: f.value,
            created_at: f.created_at,
            updated_at: f.updated_at,
        })
    }
}
