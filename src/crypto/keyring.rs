//! [`KeyRing`]: Python's `from_pycryptodome_aes()` cipher, byte for byte, with key
//! rotation. One primary key encrypts; previous keys only decrypt.

use super::aes;
use super::format::{AesMode, AES_CIPHER_NAME};
use super::key::{self, AesKey};
use super::{Cipher, Plaintext};
use crate::error::Error;

/// The AES cipher (name `"aes"`, Python-compatible bytes, a fresh OS-random nonce per
/// call) with one primary key that encrypts and any number of previous keys that only
/// decrypt. With no previous keys it is Python's `from_pycryptodome_aes()` cipher:
///
/// ```
/// use langgraph_codec::crypto::{AesMode, Cipher, KeyRing};
///
/// let eax = KeyRing::from_key_bytes(b"0123456789abcdef", AesMode::Eax)?;
/// let gcm = KeyRing::from_key_bytes(b"0123456789abcdef", AesMode::Gcm)?;
/// let (_, blob) = gcm.encrypt(b"secret", b"")?;
/// // The EAX cipher reads GCM blobs too: the mode is found by trying.
/// assert_eq!(eax.decrypt("aes", &blob, b"")?, b"secret");
/// # Ok::<(), langgraph_codec::Error>(())
/// ```
///
/// From the environment ([`from_env`](Self::from_env)):
/// - `LANGGRAPH_AES_KEY`: the primary key, exactly as Python reads it (the UTF-8 bytes
///   of the value, 16, 24 or 32 bytes).
/// - `LANGGRAPH_AES_KEY_PREVIOUS` (optional): comma-separated previous keys, newest
///   first. Each entry is the key text itself, or `base64:` followed by the key bytes in
///   standard base64 (use that for keys containing a comma or not valid UTF-8).
///   Entries are not trimmed; empty entries are skipped. A malformed entry (wrong
///   length, bad base64, a variable that is not UTF-8) is an error naming it, never a
///   dropped key; at most [`MAX_PREVIOUS_KEYS`](super::MAX_PREVIOUS_KEYS) entries, so
///   that refusing a forged row (every key tried in both modes) has a bounded cost.
/// - `LANGGRAPH_AES_FALLBACK_KEYS` (optional): more decrypt-only keys, same syntax and
///   meaning; when both are set the ring holds both lists, `LANGGRAPH_AES_KEY_PREVIOUS`
///   first (the cap counts both).
/// - A key of the wrong length is an error that names the usual cause when its bytes
///   show one: base64 or hex text of a key, a trailing newline, a space after a comma.
///
/// Strict mode (`LANGGRAPH_AES_STRICT`) is the serializer's:
/// [`EncryptedSerializer::from_env`](super::EncryptedSerializer::from_env) reads it.
///
/// In code, chain [`new`](Self::new), [`with_previous`](Self::with_previous) and
/// [`with_mode`](Self::with_mode):
///
/// ```
/// use langgraph_codec::crypto::{AesKey, AesMode, Cipher, KeyRing};
///
/// let old = KeyRing::from_key_bytes(b"old-key-16-bytes", AesMode::Eax)?;
/// let (_, old_blob) = old.encrypt(b"written last year", b"")?;
///
/// let ring = KeyRing::new(AesKey::new(b"new-key-16-bytes")?)
///     .with_previous(AesKey::new(b"old-key-16-bytes")?)?;
/// assert_eq!(ring.decrypt("aes", &old_blob, b"")?, b"written last year");
/// // New rows are written with the primary key only.
/// let (_, new_blob) = ring.encrypt(b"today", b"")?;
/// assert!(old.decrypt("aes", &new_blob, b"").is_err());
/// # Ok::<(), langgraph_codec::Error>(())
/// ```
#[derive(Clone, Debug)]
pub struct KeyRing {
    primary: AesKey,
    previous: Vec<AesKey>,
    mode: AesMode,
}

impl KeyRing {
    /// A ring with only a primary key, encrypting in EAX mode.
    pub fn new(primary: AesKey) -> Self {
        KeyRing {
            primary,
            previous: Vec::new(),
            mode: AesMode::Eax,
        }
    }

    /// A ring with only a primary key from raw key bytes (16, 24 or 32), like Python's
    /// `key=` argument, encrypting in `mode`.
    ///
    /// # Errors
    /// [`ErrorKind::InvalidKeyLength`](crate::ErrorKind::InvalidKeyLength) for any other length.
    pub fn from_key_bytes(key: &[u8], mode: AesMode) -> Result<Self, Error> {
        Ok(Self::new(AesKey::new(key)?).with_mode(mode))
    }

    /// Adds a previous (decrypt-only) key. Keys are tried in the order added, after the
    /// primary key.
    ///
    /// # Errors
    /// [`ErrorKind::TooManyKeys`](crate::ErrorKind::TooManyKeys) past [`MAX_PREVIOUS_KEYS`](super::MAX_PREVIOUS_KEYS)
    /// previous keys: refusing a forged row tries every key.
    pub fn with_previous(mut self, key: AesKey) -> Result<Self, Error> {
        key::check_previous_count(self.previous.len().saturating_add(1), "KeyRing")?;
        self.previous.push(key);
        Ok(self)
    }

    /// Sets the mode new rows are encrypted with (reading accepts both).
    pub fn with_mode(mut self, mode: AesMode) -> Self {
        self.mode = mode;
        self
    }

    /// Reads `LANGGRAPH_AES_KEY`, `LANGGRAPH_AES_KEY_PREVIOUS` and
    /// `LANGGRAPH_AES_FALLBACK_KEYS` from the process
    /// environment (see the type's documentation); EAX mode.
    ///
    /// # Errors
    /// [`ErrorKind::MissingKey`](crate::ErrorKind::MissingKey) when `LANGGRAPH_AES_KEY` is unset,
    /// [`ErrorKind::KeyNotUtf8`](crate::ErrorKind::KeyNotUtf8) when either variable is not UTF-8,
    /// [`ErrorKind::InvalidKeyLength`](crate::ErrorKind::InvalidKeyLength) / [`ErrorKind::InvalidKeyEncoding`](crate::ErrorKind::InvalidKeyEncoding) naming
    /// the bad entry, [`ErrorKind::TooManyKeys`](crate::ErrorKind::TooManyKeys) past
    /// [`MAX_PREVIOUS_KEYS`](super::MAX_PREVIOUS_KEYS) previous keys.
    pub fn from_env() -> Result<Self, Error> {
        Self::from_env_vars_os(|name| std::env::var_os(name))
    }

    /// [`from_env`](Self::from_env) with variables looked up through `lookup`.
    ///
    /// ```
    /// use langgraph_codec::crypto::KeyRing;
    ///
    /// let vars = |name: &str| match name {
    ///     "LANGGRAPH_AES_KEY" => Some("new-key-16-bytes".to_owned()),
    ///     // a raw entry, then one with a comma given as base64 ("a,cdefghijklmnop")
    ///     "LANGGRAPH_AES_KEY_PREVIOUS" => {
    ///         Some("old-key-16-bytes,base64:YSxjZGVmZ2hpamtsbW5vcA==".to_owned())
    ///     }
    ///     _ => None,
    /// };
    /// let ring = KeyRing::from_env_vars(vars)?;
    /// assert_eq!(ring.key_count(), 3);
    /// # Ok::<(), langgraph_codec::Error>(())
    /// ```
    ///
    /// # Errors
    /// As [`from_env`](Self::from_env).
    pub fn from_env_vars(lookup: impl Fn(&str) -> Option<String>) -> Result<Self, Error> {
        Self::from_env_vars_os(|name| lookup(name).map(std::ffi::OsString::from))
    }

    /// [`from_env`](Self::from_env) with variables looked up through `lookup`, as the
    /// process environment holds them (a value need not be UTF-8; one that is not is an
    /// error naming its variable).
    ///
    /// # Errors
    /// As [`from_env`](Self::from_env).
    pub fn from_env_vars_os(
        lookup: impl Fn(&str) -> Option<std::ffi::OsString>,
    ) -> Result<Self, Error> {
        Self::from_vars(&lookup)
    }

    /// The decrypt-only keys of the environment (`LANGGRAPH_AES_KEY_PREVIOUS`, then
    /// `LANGGRAPH_AES_FALLBACK_KEYS`) as a ring whose first key stands in the primary
    /// key's place, for a serializer that writes in clear; `None` when there are none.
    pub(crate) fn decrypt_only_from_vars_os(
        lookup: &dyn Fn(&str) -> Option<std::ffi::OsString>,
    ) -> Result<Option<Self>, Error> {
        let mut keys = key::previous_from_vars(lookup)?.into_iter();
        Ok(keys.next().map(|primary| KeyRing {
            primary,
            previous: keys.collect(),
            mode: AesMode::Eax,
        }))
    }

    fn from_vars(lookup: &dyn Fn(&str) -> Option<std::ffi::OsString>) -> Result<Self, Error> {
        let primary = key::primary_from_vars(&lookup)?;
        let previous = key::previous_from_vars(&lookup)?;
        Ok(KeyRing {
            primary,
            previous,
            mode: AesMode::Eax,
        })
    }

    /// How many keys the ring holds (primary included).
    pub fn key_count(&self) -> usize {
        self.previous.len().saturating_add(1)
    }

    /// The mode new rows are encrypted with.
    pub fn mode(&self) -> AesMode {
        self.mode
    }

    /// Decrypts and says which key worked: `0` is the primary key, `n` the n-th
    /// previous key. Lets a migration skip rows already under the primary key.
    ///
    /// # Errors
    /// [`ErrorKind::CiphertextTruncated`](crate::ErrorKind::CiphertextTruncated), or [`ErrorKind::AuthenticationFailed`](crate::ErrorKind::AuthenticationFailed) when no key
    /// opens the ciphertext in either mode.
    pub fn decrypt_with_index(
        &self,
        ciphertext: &[u8],
        aad: &[u8],
    ) -> Result<(Plaintext, usize), Error> {
        aes::open_any_indexed(self.keys(), self.mode, ciphertext, aad)
    }

    fn keys(&self) -> impl Iterator<Item = &AesKey> {
        std::iter::once(&self.primary).chain(self.previous.iter())
    }
}

impl Cipher for KeyRing {
    fn encrypt(&self, plaintext: &[u8], aad: &[u8]) -> Result<(String, Vec<u8>), Error> {
        let nonce = aes::fresh_nonce()?;
        let blob = aes::seal(&self.primary, self.mode, &nonce, plaintext, aad)?;
        Ok((AES_CIPHER_NAME.to_owned(), blob))
    }

    fn decrypt(&self, name: &str, ciphertext: &[u8], aad: &[u8]) -> Result<Plaintext, Error> {
        aes::check_name(name)?;
        aes::open_any(self.keys(), self.mode, ciphertext, aad)
    }

    fn accepts(&self, cipher_name: &str) -> bool {
        cipher_name == AES_CIPHER_NAME
    }
}
