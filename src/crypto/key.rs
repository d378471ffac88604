//! [`AesKey`]: AES key bytes in a buffer that is wiped when dropped, and how keys are
//! read from configuration text.

use std::fmt;
use std::sync::Arc;

use base64::Engine as _;
use zeroize::Zeroizing;

use super::aead::KeyState;
use super::CryptoFault;
use crate::error::Error;

/// The environment variable Python reads the key from (its UTF-8 bytes are the key).
pub const ENV_KEY: &str = "LANGGRAPH_AES_KEY";

/// The environment variable with previous (decrypt-only) keys for a [`KeyRing`]:
/// comma-separated entries, each the key text itself or `base64:` followed by the key
/// bytes in standard base64 (for keys that contain commas or are not UTF-8).
///
/// [`KeyRing`]: super::KeyRing
pub const ENV_KEY_PREVIOUS: &str = "LANGGRAPH_AES_KEY_PREVIOUS";

/// More decrypt-only keys, with the meaning and syntax of [`ENV_KEY_PREVIOUS`]; when
/// both are set the ring holds both lists, [`ENV_KEY_PREVIOUS`]'s first.
pub const ENV_FALLBACK_KEYS: &str = "LANGGRAPH_AES_FALLBACK_KEYS";

/// Strict mode from the environment: `1`, `true` or `yes` turn it on; `0`, `false`,
/// `no` or an empty value leave it off (ASCII case ignored, no trimming); anything else
/// is [`ErrorKind::InvalidSetting`](crate::ErrorKind::InvalidSetting). Read by
/// [`EncryptedSerializer::from_env`](super::EncryptedSerializer::from_env).
pub const ENV_STRICT: &str = "LANGGRAPH_AES_STRICT";

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
/// # Ok::<(), langgraph_codec::Error>(())
/// ```
#[derive(Clone)]
pub struct AesKey {
    bytes: Zeroizing<Vec<u8>>,
    /// The expanded key schedules (EAX and GCM), built once, shared by clones, wiped
    /// on drop.
    state: Arc<KeyState>,
}

impl AesKey {
    /// A key from raw bytes, which must be 16, 24 or 32 bytes long.
    ///
    /// # Errors
    /// [`ErrorKind::InvalidKeyLength`](crate::ErrorKind::InvalidKeyLength) for any other length.
    pub fn new(bytes: &[u8]) -> Result<Self, Error> {
        Self::named(bytes, "AES key")
    }

    /// A key from text the way Python takes `LANGGRAPH_AES_KEY`: its UTF-8 bytes.
    ///
    /// # Errors
    /// [`ErrorKind::InvalidKeyLength`](crate::ErrorKind::InvalidKeyLength) unless the text is 16, 24 or 32 bytes of
    /// UTF-8.
    pub fn from_text(text: &str) -> Result<Self, Error> {
        Self::named(text.as_bytes(), "AES key text")
    }

    /// A key from one configuration entry: `base64:` followed by the key bytes in
    /// standard base64, or else the text's UTF-8 bytes. `source_name` says where the
    /// entry came from, for errors.
    ///
    /// # Errors
    /// [`ErrorKind::InvalidKeyEncoding`](crate::ErrorKind::InvalidKeyEncoding) for a `base64:` entry that is not standard
    /// base64, [`ErrorKind::InvalidKeyLength`](crate::ErrorKind::InvalidKeyLength) for a key that is not 16, 24 or 32
    /// bytes; both name `source_name`.
    pub fn from_entry(entry: &str, source_name: &str) -> Result<Self, Error> {
        match entry.strip_prefix(BASE64_PREFIX) {
            Some(b64) => {
                let bytes = Zeroizing::new(
                    base64::engine::general_purpose::STANDARD
                        .decode(b64)
                        .map_err(|_| CryptoFault::InvalidKeyEncoding {
                            source_name: source_name.to_owned(),
                        })?,
                );
                Self::named(&bytes, source_name)
            }
            None => Self::named(entry.as_bytes(), source_name),
        }
    }

    pub(crate) fn named(bytes: &[u8], source_name: &str) -> Result<Self, Error> {
        let invalid = |len| -> Error {
            CryptoFault::InvalidKeyLength {
                source_name: source_name.to_owned(),
                len,
                hint: match length_hint(bytes, source_name.contains(" entry ")) {
                    // No likely cause: what a key set in the environment is, and where
                    // the right one is found.
                    "" if source_name.contains(" entry ") => {
                        ": give each earlier key as it was set (16, 24 or 32 bytes of \
                         text), or as base64:<standard base64>"
                    }
                    "" if source_name == ENV_KEY => {
                        ": set it to the key the Python service uses (16, 24 or 32 bytes \
                         of text), or unset it for a store in clear"
                    }
                    hint => hint,
                },
            }
            .into()
        };
        match bytes.len() {
            16 | 24 | 32 => match KeyState::new(bytes) {
                Some(state) => Ok(AesKey {
                    bytes: Zeroizing::new(bytes.to_vec()),
                    state: Arc::new(state),
                }),
                None => Err(invalid(bytes.len())),
            },
            len => Err(invalid(len)),
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

    #[cfg(test)]
    pub(crate) fn as_bytes(&self) -> &[u8] {
        &self.bytes
    }

    /// The key's AEAD state.
    pub(crate) fn state(&self) -> &KeyState {
        &self.state
    }
}

impl fmt::Debug for AesKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("AesKey")
            .field("bits", &self.bits())
            .finish_non_exhaustive()
    }
}

/// Whether `n` is an AES key length.
fn key_len(n: usize) -> bool {
    matches!(n, 16 | 24 | 32)
}

/// The likely cause of a key of the wrong length, from its bytes (the usual mistakes:
/// a trailing newline, a space after a comma in a list, base64 or hex text of the key,
/// a list entry's `base64:` form given as the key to write with);
/// empty when none fits. `entry`: the key is an entry of a previous-keys list, where
/// `base64:` entries are allowed.
fn length_hint(bytes: &[u8], entry: bool) -> &'static str {
    let len = bytes.len();
    if (bytes.ends_with(b"\r\n") && key_len(len.saturating_sub(2)))
        || (bytes.ends_with(b"\n") && key_len(len.saturating_sub(1)))
    {
        return ": it ends with a trailing newline (from echo or a file?): remove it";
    }
    if !entry && bytes.starts_with(b"base64:") {
        return ": it starts with base64:, which only the previous-keys lists take: \
                Python reads LANGGRAPH_AES_KEY as text, so set it to the key's text";
    }
    let trimmed = bytes.trim_ascii();
    if trimmed.len() != len && key_len(trimmed.len()) {
        return if entry && bytes.first() == Some(&b' ') {
            ": it starts with a space, as after a space after a comma: entries are not \
             trimmed, so separate them with a bare comma"
        } else {
            ": it starts or ends with whitespace: remove it"
        };
    }
    if len >= 32 && len % 2 == 0 && key_len(len / 2) && bytes.iter().all(u8::is_ascii_hexdigit) {
        return if entry {
            ": it looks like hex: the key is its text, not hex; decode it, or give the \
             decoded bytes as base64:<standard base64>"
        } else {
            ": it looks like hex: the key is its text (as Python reads it), not hex; \
             decode it, or use a key of 16, 24 or 32 characters"
        };
    }
    let b64 = base64::engine::general_purpose::STANDARD
        .decode(bytes)
        .or_else(|_| base64::engine::general_purpose::URL_SAFE.decode(bytes));
    if let Ok(decoded) = b64 {
        let fits = key_len(decoded.len());
        drop(Zeroizing::new(decoded));
        if fits {
            return if entry {
                ": it looks like base64: give it as base64:<the same text>, or decode it"
            } else {
                ": it looks like base64: the key is its text (as Python reads it), not \
                 base64; decode it, or use a key of 16, 24 or 32 characters"
            };
        }
    }
    ""
}

/// The most previous keys a [`KeyRing`](super::KeyRing) holds. Refusing a forged row
/// tries every key in both modes (two authentication passes over the row per key), so
/// with the cap a refusal costs at most `2 * (1 + MAX_PREVIOUS_KEYS)` passes.
pub const MAX_PREVIOUS_KEYS: usize = 4;

/// Looks up a variable as the process environment holds it (not necessarily UTF-8).
pub(crate) type OsLookup<'a> = &'a dyn Fn(&str) -> Option<std::ffi::OsString>;

/// The text of `var`, or `None` when unset; a value that is not UTF-8 is
/// [`ErrorKind::KeyNotUtf8`](crate::ErrorKind::KeyNotUtf8) (its bytes are wiped).
fn text_var(
    lookup: OsLookup<'_>,
    var: &str,
    advice: &'static str,
) -> Result<Option<Zeroizing<String>>, Error> {
    let Some(value) = lookup(var) else {
        return Ok(None);
    };
    match String::from_utf8(value.into_encoded_bytes()) {
        Ok(text) => Ok(Some(Zeroizing::new(text))),
        Err(e) => {
            drop(Zeroizing::new(e.into_bytes()));
            Err(CryptoFault::KeyNotUtf8 {
                var: var.to_owned(),
                advice,
            }
            .into())
        }
    }
}

/// Reads `LANGGRAPH_AES_KEY` through `lookup` exactly as Python does: unset is
/// [`ErrorKind::MissingKey`](crate::ErrorKind::MissingKey), not UTF-8 is [`ErrorKind::KeyNotUtf8`](crate::ErrorKind::KeyNotUtf8) (Python cannot
/// encode it either), otherwise the UTF-8 bytes of the value, which must be 16, 24 or
/// 32 bytes long.
pub(crate) fn primary_from_vars(lookup: OsLookup<'_>) -> Result<AesKey, Error> {
    let text = text_var(
        lookup,
        ENV_KEY,
        " (Python reads the key as UTF-8 text, as the key itself)",
    )?
    .ok_or_else(|| CryptoFault::MissingKey {
        var: ENV_KEY.to_owned(),
    })?;
    AesKey::named(text.as_bytes(), ENV_KEY)
}

/// Reads the comma-separated previous keys from `LANGGRAPH_AES_KEY_PREVIOUS`, then
/// those of `LANGGRAPH_AES_FALLBACK_KEYS` (same syntax and meaning; unset or empty:
/// none). Entries are taken literally (no trimming); empty entries are skipped. Every
/// entry must be a valid key: one that is not is an error, never dropped. At most
/// [`MAX_PREVIOUS_KEYS`] entries in all.
pub(crate) fn previous_from_vars(lookup: OsLookup<'_>) -> Result<Vec<AesKey>, Error> {
    let mut keys = entries_from_var(lookup, ENV_KEY_PREVIOUS)?;
    let fallback = entries_from_var(lookup, ENV_FALLBACK_KEYS)?;
    let source = if keys.is_empty() {
        ENV_FALLBACK_KEYS.to_owned()
    } else if fallback.is_empty() {
        ENV_KEY_PREVIOUS.to_owned()
    } else {
        format!("{ENV_KEY_PREVIOUS} and {ENV_FALLBACK_KEYS}")
    };
    keys.extend(fallback);
    check_previous_count(keys.len(), &source)?;
    Ok(keys)
}

/// The keys of one comma-separated list variable.
fn entries_from_var(lookup: OsLookup<'_>, var: &str) -> Result<Vec<AesKey>, Error> {
    let Some(text) = text_var(
        lookup,
        var,
        "; give a key that is not UTF-8 text as a base64:<standard base64> entry",
    )?
    else {
        return Ok(Vec::new());
    };
    text.split(',')
        .enumerate()
        .filter(|(_, entry)| !entry.is_empty())
        .map(|(i, entry)| {
            let position = i.saturating_add(1);
            AesKey::from_entry(entry, &format!("{var} entry {position}"))
        })
        .collect()
}

/// Strict mode as the process environment's [`ENV_STRICT`] (`LANGGRAPH_AES_STRICT`)
/// sets it: `1`, `true`, `yes` on; `0`, `false`, `no`, empty or unset off (ASCII case
/// ignored, no trimming). For a serializer built in code:
/// `EncryptedSerializer::new(ring, inner).with_strict(strict_from_env()?)`.
///
/// # Errors
/// [`ErrorKind::InvalidSetting`](crate::ErrorKind::InvalidSetting) naming the variable for any other value.
pub fn strict_from_env() -> Result<bool, Error> {
    strict_from_vars(&|name| std::env::var_os(name))
}

/// Strict mode as [`ENV_STRICT`] sets it (unset: off).
pub(crate) fn strict_from_vars(lookup: OsLookup<'_>) -> Result<bool, Error> {
    let Some(value) = lookup(ENV_STRICT) else {
        return Ok(false);
    };
    let text = value.to_string_lossy();
    match text.to_ascii_lowercase().as_str() {
        "1" | "true" | "yes" => Ok(true),
        "" | "0" | "false" | "no" => Ok(false),
        _ => Err(CryptoFault::InvalidSetting {
            var: ENV_STRICT.to_owned(),
            value: text.chars().take(40).collect(),
            expected: "1, true, yes (strict) or 0, false, no, empty (not strict)",
        }
        .into()),
    }
}

pub(crate) fn check_previous_count(count: usize, source_name: &str) -> Result<(), Error> {
    if count > MAX_PREVIOUS_KEYS {
        return Err(CryptoFault::TooManyKeys {
            source_name: source_name.to_owned(),
            count,
            max: MAX_PREVIOUS_KEYS,
        }
        .into());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kind::ErrorKind;

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
            Err(e) if e.kind() == ErrorKind::InvalidKeyLength => assert_eq!(e.count(), Some(17)),
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
        assert_eq!(
            AesKey::from_entry("base64:!!!", "t")
                .map_err(|e| e.kind())
                .err(),
            Some(ErrorKind::InvalidKeyEncoding)
        );
    }

    #[test]
    fn env_errors_say_what() {
        let none = |_: &str| None;
        let e = primary_from_vars(&none).err().map(|e| e.to_string());
        assert_eq!(
            e.as_deref(),
            Some("LANGGRAPH_AES_KEY environment variable is not set: set it to the key (16, 24 or 32 bytes of UTF-8 text)")
        );
        let short = |_: &str| Some("short".into());
        let e = primary_from_vars(&short).err().map(|e| e.to_string());
        assert_eq!(
            e.as_deref(),
            Some("LANGGRAPH_AES_KEY must be 16, 24, or 32 bytes long (it is 5 bytes): set it to the key the Python service uses (16, 24 or 32 bytes of text), or unset it for a store in clear")
        );
        let prev = |v: &str| (v == ENV_KEY_PREVIOUS).then(|| "0123456789abcdef,,bad".into());
        let e = previous_from_vars(&prev).err().map(|e| e.to_string());
        assert_eq!(
            e.as_deref(),
            Some("LANGGRAPH_AES_KEY_PREVIOUS entry 3 must be 16, 24, or 32 bytes long (it is 3 bytes): give each earlier key as it was set (16, 24 or 32 bytes of text), or as base64:<standard base64>")
        );
    }

    #[cfg(unix)]
    fn os(bytes: &[u8]) -> std::ffi::OsString {
        use std::os::unix::ffi::OsStrExt;
        std::ffi::OsStr::from_bytes(bytes).to_owned()
    }

    #[cfg(unix)]
    #[test]
    fn keys_that_are_not_utf8_are_errors_not_absent() {
        let bad = |_: &str| Some(os(b"0123456789abcde\xff"));
        match primary_from_vars(&bad) {
            Err(e) if e.kind() == ErrorKind::KeyNotUtf8 => assert_eq!(e.subject(), Some(ENV_KEY)),
            other => panic!("expected KeyNotUtf8, got {other:?}"),
        }
        match previous_from_vars(&bad) {
            Err(e) if e.kind() == ErrorKind::KeyNotUtf8 => {
                assert!(e.to_string().contains("base64:"), "{e}")
            }
            other => panic!("expected KeyNotUtf8, got {other:?}"),
        }
    }

    #[test]
    fn previous_keys_are_capped() {
        let entries = |n: usize| vec!["0123456789abcdef"; n].join(",");
        let at_cap = entries(MAX_PREVIOUS_KEYS);
        let ok = |v: &str| (v == ENV_KEY_PREVIOUS).then(|| at_cap.clone().into());
        assert_eq!(
            previous_from_vars(&ok).map(|k| k.len()).ok(),
            Some(MAX_PREVIOUS_KEYS)
        );
        let over = entries(MAX_PREVIOUS_KEYS + 1);
        let too_many = |v: &str| (v == ENV_KEY_PREVIOUS).then(|| over.clone().into());
        let e = previous_from_vars(&too_many).err();
        assert_eq!(
            e.as_ref().map(|e| (e.kind(), e.count())),
            Some((ErrorKind::TooManyKeys, Some(MAX_PREVIOUS_KEYS + 1)))
        );
        let max = format!("at most {MAX_PREVIOUS_KEYS} are allowed");
        assert!(e.is_some_and(|e| e.to_string().contains(&max)));
        // The cap counts both lists together.
        let both = |_: &str| Some(entries(MAX_PREVIOUS_KEYS / 2 + 1).into());
        let e = previous_from_vars(&both).err();
        assert_eq!(
            e.as_ref().map(|e| (e.kind(), e.subject())),
            Some((
                ErrorKind::TooManyKeys,
                Some("LANGGRAPH_AES_KEY_PREVIOUS and LANGGRAPH_AES_FALLBACK_KEYS")
            ))
        );
    }
}
