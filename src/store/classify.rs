//! What one stored value is: in clear, under the primary key, under a previous key,
//! unreadable, or the savers' `empty` marker.

use crate::compression::CompressedSerializer;
use crate::crypto::{Plaintext, AES_CIPHER_NAME};
use crate::serializer::{JsonPlusSerializer, Serializer, TagError};

use super::keys::StoreKeys;

/// The class of one stored value.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Class {
    /// Serialized but not encrypted (`msgpack`, `msgpack+zlib`, `null`, `bytes`, …).
    Clear,
    /// Not encrypted, in LangGraph's legacy `json` format (Python still reads it).
    LegacyJson,
    /// Encrypted under the primary key.
    Primary,
    /// Encrypted under decrypt-only key `n` (1 = the first previous key).
    Previous(usize),
    /// Cannot be read: why.
    Unreadable(String),
    /// The `empty` marker of a channel without a value (never serialized, nothing to
    /// protect).
    Empty,
}

impl Class {
    /// Whether the value is kept outside encryption (in clear or legacy `json`).
    pub fn is_clear(&self) -> bool {
        matches!(self, Class::Clear | Class::LegacyJson)
    }
}

/// A classified value, with what a sweep needs to rewrite it.
pub(crate) struct Classified {
    pub class: Class,
    /// For an encrypted row: its inner tag (`msgpack`, `msgpack+zlib`, …) and plaintext.
    pub opened: Option<(String, Plaintext)>,
}

impl Classified {
    fn plain(class: Class) -> Self {
        Classified {
            class,
            opened: None,
        }
    }
}

/// Whether the serializer Python's savers use (with upstream's `+zlib` wrapper) reads
/// `data` under `tag`. `pickle` rows count as readable (Python reads them).
pub(crate) fn readable(tag: &str, data: &[u8]) -> Result<(), String> {
    // Python writes `None` as `("null", b"")` and reads any `null` row as `None`,
    // ignoring its bytes; the decryptor refuses a `null+aes` row with bytes (its inner
    // tag is not authenticated, so such a row had its tag rewritten). A `null` row with
    // bytes was not written by a serializer: encrypting it would make a row that then
    // fails to decrypt, and reading it as `None` would drop what it holds.
    if tag == crate::serializer::tags::NULL && !data.is_empty() {
        return Err(format!(
            "a \"null\" value holding {} byte(s): Python reads it as None and drops them; \
             not written by a LangGraph serializer (see them with `lgcodec store export \
             --thread ID`, then store the value again or set it to empty bytes)",
            data.len()
        ));
    }
    let serde = CompressedSerializer::new(JsonPlusSerializer::new());
    match serde.loads_typed(tag, data) {
        Ok(_) => Ok(()),
        Err(e) if matches!(e.as_tag(), Some(TagError::Pickle)) => Ok(()),
        Err(e) => Err(e.to_string()),
    }
}

/// Classifies one stored value: its type tag and bytes as the table holds them.
pub(crate) fn classify(keys: &StoreKeys, tag: Option<&str>, data: Option<&[u8]>) -> Classified {
    let Some(tag) = tag else {
        return Classified::plain(Class::Unreadable("the type column is NULL".to_owned()));
    };
    if tag == crate::serializer::tags::EMPTY {
        return match data {
            None | Some([]) => Classified::plain(Class::Empty),
            Some(d) => Classified::plain(Class::Unreadable(format!(
                "an \"empty\" marker holding {} byte(s)",
                d.len()
            ))),
        };
    }
    let Some(data) = data else {
        return Classified::plain(Class::Unreadable(format!("type {tag:?} with a NULL value")));
    };
    match tag.rsplit_once('+') {
        Some((inner, name)) if name == AES_CIPHER_NAME => match keys.open(data) {
            Ok((plaintext, index)) => {
                if let Err(e) = readable(inner, &plaintext) {
                    return Classified::plain(Class::Unreadable(format!(
                        "opens under {} but does not decode as {inner:?}: {e}",
                        keys.label(index)
                    )));
                }
                let class = if index == 0 {
                    Class::Primary
                } else {
                    Class::Previous(index)
                };
                Classified {
                    class,
                    opened: Some((inner.to_owned(), plaintext)),
                }
            }
            Err(why) => Classified::plain(Class::Unreadable(why)),
        },
        _ => match readable(tag, data) {
            Ok(()) if tag.split('+').next() == Some("json") => Classified::plain(Class::LegacyJson),
            Ok(()) => Classified::plain(Class::Clear),
            Err(e) => Classified::plain(Class::Unreadable(format!(
                "not encrypted, and does not decode as {tag:?}: {e}"
            ))),
        },
    }
}
