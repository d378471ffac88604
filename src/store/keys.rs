//! [`StoreKeys`]: the keys a store operation reads and writes with.

use std::ffi::OsString;

use crate::crypto::{check_previous_count, CryptoFault};
use crate::crypto::{AesKey, AesMode, Cipher, KeyRing, Plaintext, ENV_KEY, ENV_KEY_PREVIOUS};
use crate::error::Error;

/// The LangChain Agent Server's name for decrypt-only keys, accepted with the meaning
/// of `LANGGRAPH_AES_KEY_PREVIOUS` (same syntax: comma-separated, `base64:` entries).
pub const ENV_FALLBACK_KEYS: &str = "LANGGRAPH_AES_FALLBACK_KEYS";

/// The keys of a store operation: one primary key (new rows are written under it) and
/// decrypt-only keys, each with a label the reports use (`LANGGRAPH_AES_KEY`,
/// `LANGGRAPH_AES_KEY_PREVIOUS #1`, `LANGGRAPH_AES_FALLBACK_KEYS #1`, …). Key index 0 is
/// the primary key, `n` the n-th decrypt-only key (previous keys first, then fallback
/// keys). Rows are read in EAX and GCM mode alike; new rows are written in
/// [`mode`](Self::with_mode) (EAX, Python's default, unless changed).
///
/// No key at all ([`none`](Self::none)) is allowed for an audit: encrypted rows are then
/// reported unreadable, rows in clear are still found.
#[derive(Clone, Debug)]
pub struct StoreKeys {
    /// Every key (primary first), or none.
    ring: Option<KeyRing>,
    /// The primary key alone: new rows are sealed and checked with it.
    primary: Option<KeyRing>,
    labels: Vec<String>,
    mode: AesMode,
}

impl StoreKeys {
    /// No keys: encrypted rows cannot be read.
    pub fn none() -> Self {
        StoreKeys {
            ring: None,
            primary: None,
            labels: Vec::new(),
            mode: AesMode::Eax,
        }
    }

    /// A primary key alone.
    pub fn new(primary: AesKey) -> Self {
        StoreKeys {
            ring: Some(KeyRing::new(primary.clone())),
            primary: Some(KeyRing::new(primary)),
            labels: vec!["primary".to_owned()],
            mode: AesMode::Eax,
        }
    }

    /// Adds a decrypt-only key, labelled `label` in reports.
    ///
    /// # Errors
    /// [`ErrorKind::MissingKey`](crate::ErrorKind::MissingKey) without a primary key,
    /// [`ErrorKind::TooManyKeys`](crate::ErrorKind::TooManyKeys) past [`MAX_PREVIOUS_KEYS`](crate::crypto::MAX_PREVIOUS_KEYS).
    pub fn with_previous(mut self, key: AesKey, label: impl Into<String>) -> Result<Self, Error> {
        let ring = self.ring.take().ok_or_else(|| CryptoFault::MissingKey {
            var: ENV_KEY.to_owned(),
        })?;
        self.ring = Some(ring.with_previous(key)?);
        self.labels.push(label.into());
        Ok(self)
    }

    /// The mode new rows are written in (EAX by default, as Python's
    /// `from_pycryptodome_aes()`); reading accepts both.
    pub fn with_mode(mut self, mode: AesMode) -> Self {
        self.mode = mode;
        self.ring = self.ring.map(|r| r.with_mode(mode));
        self.primary = self.primary.map(|r| r.with_mode(mode));
        self
    }

    /// Keys from the process environment: `LANGGRAPH_AES_KEY` (primary, as Python
    /// reads it), `LANGGRAPH_AES_KEY_PREVIOUS` and `LANGGRAPH_AES_FALLBACK_KEYS`
    /// (decrypt-only; see [`KeyRing`] for the syntax). None set: no keys.
    ///
    /// # Errors
    /// A malformed key, named ([`ErrorKind::InvalidKeyLength`](crate::ErrorKind::InvalidKeyLength),
    /// [`ErrorKind::InvalidKeyEncoding`](crate::ErrorKind::InvalidKeyEncoding), [`ErrorKind::KeyNotUtf8`](crate::ErrorKind::KeyNotUtf8),
    /// [`ErrorKind::TooManyKeys`](crate::ErrorKind::TooManyKeys)); [`ErrorKind::MissingKey`](crate::ErrorKind::MissingKey) when decrypt-only keys
    /// are set without `LANGGRAPH_AES_KEY`.
    pub fn from_env() -> Result<Self, Error> {
        Self::from_env_vars_os(|name| std::env::var_os(name))
    }

    /// [`from_env`](Self::from_env) with variables looked up through `lookup`.
    ///
    /// # Errors
    /// As [`from_env`](Self::from_env).
    pub fn from_env_vars_os(lookup: impl Fn(&str) -> Option<OsString>) -> Result<Self, Error> {
        let set = |name: &str| lookup(name).is_some_and(|v| !v.is_empty());
        if lookup(ENV_KEY).is_none() {
            if set(ENV_KEY_PREVIOUS) || set(ENV_FALLBACK_KEYS) {
                return Err(CryptoFault::MissingKey {
                    var: ENV_KEY.to_owned(),
                }
                .into());
            }
            return Ok(Self::none());
        }
        // The ring reads the primary and previous keys; the fallback keys are added here
        // (hidden from the ring's own loader, so that a loader which reads them too does
        // not add them twice).
        let ring = KeyRing::from_env_vars_os(|name| {
            (name == ENV_KEY || name == ENV_KEY_PREVIOUS)
                .then(|| lookup(name))
                .flatten()
        })?;
        let primary =
            KeyRing::from_env_vars_os(|name| (name == ENV_KEY).then(|| lookup(name)).flatten())?;
        let mut labels = vec![ENV_KEY.to_owned()];
        for i in 1..ring.key_count() {
            labels.push(format!("{ENV_KEY_PREVIOUS} #{i}"));
        }
        let mut keys = StoreKeys {
            ring: Some(ring),
            primary: Some(primary),
            labels,
            mode: AesMode::Eax,
        };
        if let Some(value) = lookup(ENV_FALLBACK_KEYS) {
            let text = value.into_string().map_err(|_| CryptoFault::KeyNotUtf8 {
                var: ENV_FALLBACK_KEYS.to_owned(),
                advice: "; give a key that is not UTF-8 text as a base64:<standard base64> entry",
            })?;
            let mut fallback = Vec::new();
            for (i, entry) in text.split(',').enumerate() {
                if entry.is_empty() {
                    continue;
                }
                let position = i.saturating_add(1);
                fallback.push(AesKey::from_entry(
                    entry,
                    &format!("{ENV_FALLBACK_KEYS} entry {position}"),
                )?);
            }
            // Counted over both lists and named as the ring names them.
            let previous = keys.labels.len().saturating_sub(1);
            let source = if previous == 0 {
                ENV_FALLBACK_KEYS.to_owned()
            } else {
                format!("{ENV_KEY_PREVIOUS} and {ENV_FALLBACK_KEYS}")
            };
            check_previous_count(previous.saturating_add(fallback.len()), &source)?;
            for (n, key) in fallback.into_iter().enumerate() {
                let label = format!("{ENV_FALLBACK_KEYS} #{}", n.saturating_add(1));
                keys = keys.with_previous(key, label)?;
            }
        }
        Ok(keys)
    }

    /// Every key (primary first), for the maintenance operations' serializer.
    #[cfg(all(feature = "sqlite", feature = "postgres"))]
    pub(crate) fn ring(&self) -> Option<&KeyRing> {
        self.ring.as_ref()
    }

    /// The primary key alone, for the maintenance operations' writing serializer.
    #[cfg(all(feature = "sqlite", feature = "postgres"))]
    pub(crate) fn primary_ring(&self) -> Option<&KeyRing> {
        self.primary.as_ref()
    }

    /// Whether a primary key is set (encrypt and rekey need one).
    pub fn has_primary(&self) -> bool {
        self.primary.is_some()
    }

    /// The label of every key, by index (0 is the primary key).
    pub fn labels(&self) -> &[String] {
        &self.labels
    }

    /// The label of key `index`.
    pub fn label(&self, index: usize) -> String {
        self.labels
            .get(index)
            .cloned()
            .unwrap_or_else(|| format!("key {index}"))
    }

    /// The mode new rows are written in.
    pub fn mode(&self) -> AesMode {
        self.mode
    }

    /// Opens an `+aes` ciphertext: the plaintext and the index of the key that opened it.
    pub(crate) fn open(&self, data: &[u8]) -> Result<(Plaintext, usize), String> {
        let Some(ring) = &self.ring else {
            return Err(format!(
                "encrypted, and no key was given ({ENV_KEY} is not set)"
            ));
        };
        ring.decrypt_with_index(data, b"")
            .map_err(|e| match e.kind() {
                crate::ErrorKind::AuthenticationFailed => format!(
                "no key opens it ({} key(s) tried in EAX and GCM mode: wrong key or altered bytes)",
                e.count().unwrap_or_default()
            ),
                _ => e.to_string(),
            })
    }

    /// Whether an `+aes` ciphertext opens under some key (`Some(true)`), is refused by
    /// every key (`Some(false)`: another key, or altered bytes), or neither can be said
    /// (`None`: no key given, a ciphertext too short to hold a nonce and tag).
    pub(crate) fn opens(&self, data: &[u8]) -> Option<bool> {
        match self.ring.as_ref()?.decrypt_with_index(data, b"") {
            Ok(_) => Some(true),
            Err(e) if e.kind() == crate::ErrorKind::AuthenticationFailed => Some(false),
            Err(_) => None,
        }
    }

    /// Seals `plaintext` under the primary key and checks that the new bytes open under
    /// the primary key alone to the same plaintext.
    pub(crate) fn seal_checked(&self, plaintext: &[u8]) -> Result<Vec<u8>, String> {
        let Some(primary) = &self.primary else {
            return Err(format!("no primary key ({ENV_KEY} is not set)"));
        };
        let (_, sealed) = primary.encrypt(plaintext, b"").map_err(|e| e.to_string())?;
        let (back, index) = primary
            .decrypt_with_index(&sealed, b"")
            .map_err(|e| format!("the re-encrypted row does not open: {e}"))?;
        if index != 0 || back.as_ref() != plaintext {
            return Err("the re-encrypted row does not read back to the same plaintext".to_owned());
        }
        Ok(sealed)
    }
}
