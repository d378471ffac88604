//! Python `uuid.UUID`.

use std::fmt;
use std::str::FromStr;

use serde::de::{self, Deserialize, Deserializer};
use serde::ser::{Serialize, Serializer};

use super::invalid;
use crate::typed::object::{read_simple, write_object};
use crate::typed::TypedError;
use crate::value::ObjectKind;

/// Python `uuid.UUID`. Written as `ext 0 ("uuid", "UUID", hex)` with the 32-character
/// lowercase hex form (`UUID.hex`). With the `uuid` feature it converts to and from
/// `uuid::Uuid`.
///
/// ```
/// use langgraph_codec::typed::pytypes::Uuid;
/// let u: Uuid = "12345678-1234-4678-9234-567812345678".parse()?;
/// assert_eq!(u.hex(), "12345678123446789234567812345678");
/// assert_eq!(u.to_string(), "12345678-1234-4678-9234-567812345678");
/// # Ok::<(), langgraph_codec::typed::TypedError>(())
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Uuid(pub [u8; 16]);

impl Uuid {
    /// A random (version 4) UUID, as Python's `uuid.uuid4()`: 122 bits from the OS
    /// random source (`getrandom`; should it fail, from a randomly keyed SipHash over
    /// the time and a counter, still unique in practice).
    ///
    /// ```
    /// use langgraph_codec::typed::pytypes::Uuid;
    /// let u = Uuid::new_v4();
    /// let s = u.to_string();
    /// assert_eq!((s.len(), &s[14..15]), (36, "4"));
    /// assert_ne!(u, Uuid::new_v4());
    /// ```
    pub fn new_v4() -> Uuid {
        let mut b = [0u8; 16];
        if getrandom::fill(&mut b).is_err() {
            b = fallback_random();
        }
        b[6] = (b[6] & 0x0F) | 0x40;
        b[8] = (b[8] & 0x3F) | 0x80;
        Uuid(b)
    }

    /// The 32-character lowercase hex form Python writes.
    pub fn hex(&self) -> String {
        let mut s = String::with_capacity(32);
        for b in self.0 {
            s.push_str(&format!("{b:02x}"));
        }
        s
    }

    /// The 16 bytes, big-endian.
    pub fn as_bytes(&self) -> &[u8; 16] {
        &self.0
    }
}

impl fmt::Display for Uuid {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let h = self.hex();
        let parts = [
            h.get(0..8),
            h.get(8..12),
            h.get(12..16),
            h.get(16..20),
            h.get(20..32),
        ];
        let parts: Vec<&str> = parts.iter().map(|p| p.unwrap_or_default()).collect();
        f.write_str(&parts.join("-"))
    }
}

impl FromStr for Uuid {
    type Err = TypedError;
    /// The hex form with or without hyphens, braces or a `urn:uuid:` prefix, as
    /// Python's `UUID(str)` accepts.
    fn from_str(s: &str) -> Result<Self, TypedError> {
        let t = s.trim();
        let t = t.strip_prefix("urn:uuid:").unwrap_or(t);
        let t = t.trim_matches(|c| c == '{' || c == '}');
        let hex: Vec<u8> = t.bytes().filter(|b| *b != b'-').collect();
        if hex.len() != 32 {
            return Err(invalid("32 hex digits", s));
        }
        let mut out = [0u8; 16];
        for (o, pair) in out.iter_mut().zip(hex.chunks(2)) {
            let txt = std::str::from_utf8(pair).map_err(|_| invalid("hex digits", s))?;
            *o = u8::from_str_radix(txt, 16).map_err(|_| invalid("hex digits", s))?;
        }
        Ok(Uuid(out))
    }
}

impl Serialize for Uuid {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        write_object(
            s,
            ObjectKind::ConstructorSingleArg,
            "uuid",
            "UUID",
            &self.hex(),
            None,
        )
    }
}

impl<'de> Deserialize<'de> for Uuid {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let (_, hex): (_, String) =
            read_simple(d, ObjectKind::ConstructorSingleArg, "uuid", &["UUID"])?;
        hex.parse().map_err(de::Error::custom)
    }
}

#[cfg(feature = "uuid")]
#[cfg_attr(docsrs, doc(cfg(feature = "uuid")))]
impl From<uuid::Uuid> for Uuid {
    fn from(u: uuid::Uuid) -> Self {
        Uuid(*u.as_bytes())
    }
}

#[cfg(feature = "uuid")]
#[cfg_attr(docsrs, doc(cfg(feature = "uuid")))]
impl From<Uuid> for uuid::Uuid {
    fn from(u: Uuid) -> Self {
        uuid::Uuid::from_bytes(u.0)
    }
}

/// 16 bytes from a randomly keyed SipHash over the time and a counter: only used when
/// the OS random source fails.
fn fallback_random() -> [u8; 16] {
    use std::hash::{BuildHasher, Hasher};
    use std::sync::atomic::{AtomicU64, Ordering};
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let state = std::collections::hash_map::RandomState::new();
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    let mut out = [0u8; 16];
    for (i, chunk) in out.chunks_mut(8).enumerate() {
        let mut h = state.build_hasher();
        h.write_u128(nanos);
        h.write_u64(COUNTER.fetch_add(1, Ordering::Relaxed));
        h.write_usize(i);
        for (o, b) in chunk.iter_mut().zip(h.finish().to_le_bytes()) {
            *o = b;
        }
    }
    out
}
