//! [`AesKey`]: AES key bytes in a buffer that is wiped when dropped, and how keys are
//! read from configuration text.

use std::fmt;

use base64::Engine as _;
use zeroize::Zeroizing;

use super::CryptoError;

/// The environment variable Python reads the key from (its UTF-8 bytes are the key).
pub const ENV_KEY: &str = "LANGGRAPH_AES_KEY";

/// The environment variable with previous (decrypt-only) keys for a [`KeyRing`]:
/// comma-separated entries, each the key text itself or `base64:` followed by the key
/// bytes in standard base64 (for keys that contain commas or are not UTF-8).
///
/// [`KeyRing`]: super::KeyRing
pub const ENV_KEY_PREVIOUS: &str = "LANGGRAPH_AES_KEY_PREVIOUS";

/// The prefix of a key entry given in base64.
pub const BASE64_PREFIX: &str = "base64:";

/// An AES-128, AES-192 or AES-256 key.
///
/// The bytes live in a [`Zeroizing`] buffer and are overwritten with zeros when the key
/// is dropped. `Debug` prints only the key size. There is deliberately no accessor for
/// the bytes.
///
/// ```
/// use langgraph_codec::crypto::AesKey;
///
/// let key = AesKey::new(b"0123456789abcdef")?;
/// assert_eq!(key.len(), 16);
/// assert_eq!(format!("{key:?}"), "AesKey { bits: 128, .. }");
/// assert!(AesKey::new(b"too short").is_err());
/// # Ok::<(), langgraph_codec::crypto::CryptoError>(())
/// ```
#[derive(Clone)]
pub struct AesKey {
    bytes: Zeroizing<Vec<u8>>,
}

impl AesKey {
    /// A key from raw bytes, which must be 16, 24 or 32 bytes long.
    pub fn new(bytes: &[u8]) -> Result<Self, CryptoError> {
        Self::named(bytes, "AES key")
    }

    /// A key from text the way Python takes `LANGGRAPH_AES_KEY`: its UTF-8 bytes.
    pub fn from_text(text: &str) -> Result<Self, CryptoError> {
        Self::named(text.as_bytes(), "AES key text")
    }

    /// A key from one configuration entry: `base64:` followed by the key bytes in
    /// standard base64, or else the text's UTF-8 bytes. `source_name` says where the
    /// entry came from, for errors.
    pub fn from_entry(entry: &str, source_name: &str) -> Result<Self, CryptoError> {
        match entry.strip_prefix(BASE64_PREFIX) {
            Some(b64) => {
                let bytes = Zeroizing::new(
                    base64::engine::general_purpose::STANDARD
                        .decode(b64)
                        .map_err(|_| CryptoError::InvalidKeyEncoding {
                            source_name: source_name.to_owned(),
                        })?,
                );
                Self::named(&bytes, source_name)
            }
            None => Self::named(entry.as_bytes(), source_name),
        }
    }

    pub(crate) fn named(bytes: &[u8], source_name: &str) -> Result<Self, CryptoError> {
        match bytes.len() {
            16 | 24 | 32 => Ok(AesKey {
                bytes: Zeroizing::new(bytes.to_vec()),
            }),
            len => Err(CryptoError::InvalidKeyLength {
                source_name: source_name.to_owned(),
                len,
            }),
        }
    }

    /// The key length in bytes: 16, 24 or 32.
    pub fn len(&self) -> usize {
        self.bytes.len()
    }

    /// Always `false`: a key is never empty. (Present for API symmetry with `len`.)
    pub fn is_empty(&self) -> bool {
        self.bytes.is_empty()
    }

    /// The key size in bits: 128, 192 or 256.
    pub fn bits(&self) -> usize {
        self.bytes.len().saturating_mul(8)
    }

    pub(crate) fn as_bytes(&self) -> &[u8] {
        &self.bytes
    }
}

impl fmt::Debug for AesKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("AesKey")
            .field("bits", &self.bits())
            .finish_non_exhaustive()
    }
}

/// Reads `LANGGRAPH_AES_KEY` through `lookup` exactly as Python does: unset is
/// [`CryptoError::MissingKey`], otherwise the UTF-8 bytes of the value, which must be
/// 16, 24 or 32 bytes long.
pub(crate) fn primary_from_vars(
    lookup: &dyn Fn(&str) -> Option<String>,
) -> Result<AesKey, CryptoError> {
    let text = Zeroizing::new(lookup(ENV_KEY).ok_or_else(|| CryptoError::MissingKey {
        var: ENV_KEY.to_owned(),
    })?);
    AesKey::named(text.as_bytes(), ENV_KEY)
}

/// Reads the comma-separated previous keys from `LANGGRAPH_AES_KEY_PREVIOUS` (unset or
/// empty: none). Entries are taken literally (no trimming); empty entries are skipped.
pub(crate) fn previous_from_vars(
    lookup: &dyn Fn(&str) -> Option<String>,
) -> Result<Vec<AesKey>, CryptoError> {
    let Some(text) = lookup(ENV_KEY_PREVIOUS).map(Zeroizing::new) else {
        return Ok(Vec::new());
    };
    text.split(',')
        .enumerate()
        .filter(|(_, entry)| !entry.is_empty())
        .map(|(i, entry)| {
            let position = i.saturating_add(1);
            AesKey::from_entry(entry, &format!("{ENV_KEY_PREVIOUS} entry {position}"))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lengths_follow_aes() {
        for len in 0..=40 {
            let ok = AesKey::new(&vec![7u8; len]).is_ok();
            assert_eq!(ok, matches!(len, 16 | 24 | 32), "len {len}");
        }
    }

    #[test]
    fn text_is_utf8_bytes_like_python() {
        // "é" is two UTF-8 bytes: 14 ASCII + é = 16 bytes, as Python's key_str.encode().
        assert_eq!(
            AesKey::from_text("0123456789abcdé").map(|k| k.len()).ok(),
            Some(16)
        );
        match AesKey::from_text("0123456789abcdeé") {
            Err(CryptoError::InvalidKeyLength { len, .. }) => assert_eq!(len, 17),
            other => panic!("expected InvalidKeyLength, got {other:?}"),
        }
    }

    #[test]
    fn base64_entries() {
        // base64 of the 16 bytes "a,b,c,d,e,f,g,h," (commas: cannot be a raw entry).
        let key = AesKey::from_entry("base64:YSxiLGMsZCxlLGYsZyxoLA==", "t").ok();
        assert_eq!(
            key.as_ref().map(AesKey::as_bytes),
            Some(&b"a,b,c,d,e,f,g,h,"[..])
        );
        assert!(matches!(
            AesKey::from_entry("base64:!!!", "t"),
            Err(CryptoError::InvalidKeyEncoding { .. })
        ));
    }

    #[test]
    fn env_errors_say_what() {
        let none = |_: &str| None;
        let e = primary_from_vars(&none).err().map(|e| e.to_string());
        assert_eq!(
            e.as_deref(),
            Some("LANGGRAPH_AES_KEY environment variable is not set")
        );
        let short = |_: &str| Some("short".to_owned());
        let e = primary_from_vars(&short).err().map(|e| e.to_string());
        assert_eq!(
            e.as_deref(),
            Some("LANGGRAPH_AES_KEY must be 16, 24, or 32 bytes long (it is 5 bytes)")
        );
        let prev = |v: &str| (v == ENV_KEY_PREVIOUS).then(|| "0123456789abcdef,,bad".to_owned());
        let e = previous_from_vars(&prev).err().map(|e| e.to_string());
        assert_eq!(
            e.as_deref(),
            Some("LANGGRAPH_AES_KEY_PREVIOUS entry 3 must be 16, 24, or 32 bytes long (it is 3 bytes)")
        );
    }
}
