//! [`EncryptedSerializer`]: Python's `EncryptedSerializer`, plus strict mode,
//! associated data and re-encryption.

use std::sync::Arc;

use super::plaintext::Plaintext;

use super::format::AesMode;
use super::{Cipher, KeyRing};
use crate::error::Result;

use super::CryptoFault;
use crate::error::Error;
use crate::kind::ErrorKind;
use crate::serializer::{tags, JsonPlusSerializer, Serializer, TagError, TypedBytes};
use crate::value::Value;

/// Wraps any [`Serializer`] and encrypts its bytes with a [`Cipher`].
///
/// - `dumps_typed`: inner `(typ, data)` → `(f"{typ}+{cipher name}", ciphertext)`,
///   e.g. `msgpack+aes`, and `null+aes` for `None`.
/// - `loads_typed`: the last `+` suffix of the tag, if the cipher
///   [accepts](Cipher::accepts) it, is decrypted and the rest of the tag goes to the
///   inner serializer. Wrappers compose by suffix, peeled from the right:
///   `EncryptedSerializer` over [`CompressedSerializer`](crate::compression::CompressedSerializer)
///   writes and reads `msgpack+zlib+aes`.
/// - A tag the cipher does not own (`msgpack`, or `msgpack+zlib` from a compression
///   wrapper) is an unencrypted row written before encryption was turned on: it goes to
///   the inner serializer, unless [strict mode](Self::with_strict) refuses it.
///
/// With Python's default settings the bytes are identical to
/// `EncryptedSerializer.from_pycryptodome_aes()` (EAX) or `mode=AES.MODE_GCM`, in
/// both directions.
///
/// ```
/// use langgraph_codec::crypto::{AesMode, EncryptedSerializer};
/// use langgraph_codec::{Serializer, Value};
///
/// let serde = EncryptedSerializer::from_aes_key(b"0123456789abcdef", AesMode::Eax)?;
/// let value = Value::map([("secret", Value::from(42i64))]);
/// let typed = serde.dumps_typed(&value)?;
/// assert_eq!(typed.type_tag, "msgpack+aes");
/// assert_eq!(serde.loads_typed(&typed.type_tag, &typed.data)?, value);
/// // Rows written before encryption was enabled are still readable...
/// assert_eq!(serde.loads_typed("msgpack", b"\x01")?, Value::from(1i64));
/// // ...unless strict mode is on.
/// let strict = serde.with_strict(true);
/// assert!(strict.loads_typed("msgpack", b"\x01").is_err());
/// # Ok::<(), langgraph_codec::Error>(())
/// ```
#[derive(Clone, Debug)]
pub struct EncryptedSerializer<S = JsonPlusSerializer> {
    cipher: Arc<dyn Cipher>,
    inner: S,
    strict: bool,
    writes_in_clear: bool,
}

impl EncryptedSerializer<JsonPlusSerializer> {
    /// `from_pycryptodome_aes(key=key, mode=...)` over a default [`JsonPlusSerializer`].
    ///
    /// # Errors
    /// [`ErrorKind::InvalidKeyLength`](crate::ErrorKind::InvalidKeyLength) when the key is not 16, 24 or 32 bytes long.
    pub fn from_aes_key(key: &[u8], mode: AesMode) -> Result<Self, Error> {
        let ring = KeyRing::new(super::AesKey::new(key)?).with_mode(mode);
        Ok(Self::new(ring, JsonPlusSerializer::new()))
    }

    /// `from_pycryptodome_aes()`: keys from `LANGGRAPH_AES_KEY` (and the optional
    /// decrypt-only `LANGGRAPH_AES_KEY_PREVIOUS` and `LANGGRAPH_AES_FALLBACK_KEYS`, see
    /// [`KeyRing`]), EAX mode (what Python's default reader reads), over a default
    /// [`JsonPlusSerializer`]. Strict mode is on when `LANGGRAPH_AES_STRICT` is `1`,
    /// `true` or `yes` (ASCII case ignored); `0`, `false`, `no`, empty or unset leave it
    /// off. With `LANGGRAPH_AES_KEY` unset but decrypt-only keys set, the serializer is
    /// decrypt-only ([`with_writes_in_clear`](EncryptedSerializer::with_writes_in_clear)).
    ///
    /// # Errors
    /// The key's error: [`ErrorKind::MissingKey`](crate::ErrorKind::MissingKey) (no key at all), [`ErrorKind::KeyNotUtf8`](crate::ErrorKind::KeyNotUtf8),
    /// [`ErrorKind::InvalidKeyLength`](crate::ErrorKind::InvalidKeyLength), or for the previous keys
    /// [`ErrorKind::InvalidKeyEncoding`](crate::ErrorKind::InvalidKeyEncoding) and [`ErrorKind::TooManyKeys`](crate::ErrorKind::TooManyKeys);
    /// [`ErrorKind::InvalidSetting`](crate::ErrorKind::InvalidSetting) for any other `LANGGRAPH_AES_STRICT` value, or for
    /// strict mode with decrypt-only keys (which write in clear).
    pub fn from_env() -> Result<Self, Error> {
        Self::from_env_vars_os(|name| std::env::var_os(name))
    }

    /// [`from_env`](Self::from_env) with variables looked up through `lookup`.
    ///
    /// # Errors
    /// As [`from_env`](Self::from_env).
    pub fn from_env_vars(lookup: impl Fn(&str) -> Option<String>) -> Result<Self, Error> {
        Self::from_env_vars_os(|name| lookup(name).map(std::ffi::OsString::from))
    }

    /// [`from_env`](Self::from_env) with variables looked up through `lookup`, as the
    /// process environment holds them (not necessarily UTF-8).
    ///
    /// # Errors
    /// As [`from_env`](Self::from_env).
    pub fn from_env_vars_os(
        lookup: impl Fn(&str) -> Option<std::ffi::OsString>,
    ) -> Result<Self, Error> {
        let strict = super::key::strict_from_vars(&lookup)?;
        let ring = match KeyRing::from_env_vars_os(&lookup) {
            Err(missing) if missing.kind() == ErrorKind::MissingKey => {
                // Decrypt-only: no primary key, but decrypt-only keys to read with.
                let Some(ring) = KeyRing::decrypt_only_from_vars_os(&lookup)? else {
                    return Err(missing);
                };
                if strict {
                    return Err(CryptoFault::InvalidSetting {
                        var: super::key::ENV_STRICT.to_owned(),
                        value: "on".to_owned(),
                        expected: "off while LANGGRAPH_AES_KEY is unset (decrypt-only keys \
                                   write rows in clear, which strict mode refuses)",
                    }
                    .into());
                }
                return Ok(Self::new(ring, JsonPlusSerializer::new()).with_writes_in_clear(true));
            }
            other => other?,
        };
        Ok(Self::new(ring, JsonPlusSerializer::new()).with_strict(strict))
    }
}

impl<S: Serializer> EncryptedSerializer<S> {
    /// Wraps `inner` with `cipher`.
    pub fn new(cipher: impl Cipher + 'static, inner: S) -> Self {
        Self::with_shared_cipher(Arc::new(cipher), inner)
    }

    /// Wraps `inner` with a shared cipher.
    pub fn with_shared_cipher(cipher: Arc<dyn Cipher>, inner: S) -> Self {
        EncryptedSerializer {
            cipher,
            inner,
            strict: false,
            writes_in_clear: false,
        }
    }

    /// Decrypt-only: rows are written in clear, exactly as the inner serializer writes
    /// them, and encrypted rows are still read with the cipher. The first step of turning
    /// encryption on without downtime (deploy the key decrypt-only everywhere, then as the
    /// primary key), so that a process not yet given the primary key reads the rows the
    /// others encrypt. [`from_env`](EncryptedSerializer::from_env) turns it on when
    /// `LANGGRAPH_AES_KEY` is unset and decrypt-only keys are set.
    pub fn with_writes_in_clear(mut self, on: bool) -> Self {
        self.writes_in_clear = on;
        self
    }

    /// Whether rows are written in clear ([`with_writes_in_clear`](Self::with_writes_in_clear)).
    pub fn writes_in_clear(&self) -> bool {
        self.writes_in_clear
    }

    /// Strict mode: refuse rows that are not encrypted with
    /// [`ErrorKind::PlaintextRefused`](crate::ErrorKind::PlaintextRefused) instead of reading them. Turn it on once every
    /// row has been re-encrypted, so that nobody can slip in a plaintext row.
    pub fn with_strict(mut self, strict: bool) -> Self {
        self.strict = strict;
        self
    }

    /// Whether strict mode is on.
    pub fn is_strict(&self) -> bool {
        self.strict
    }

    /// The wrapped serializer.
    pub fn inner(&self) -> &S {
        &self.inner
    }

    /// The cipher.
    pub fn cipher(&self) -> &Arc<dyn Cipher> {
        &self.cipher
    }

    /// This serializer bound to one row's associated data `aad` (e.g. from
    /// [`aad::checkpoint`](super::aad::checkpoint)): every write through the view binds
    /// the ciphertext to `aad`, every read opens it only with that `aad`. The view is
    /// two references (nothing is allocated or copied) and a [`Serializer`] itself, so
    /// the [`Value`] calls, the typed calls of
    /// [`TypedSerializerExt`](crate::serializer::TypedSerializerExt) and
    /// [`rekey`](WithAad::rekey) all take the associated data the same way.
    ///
    /// ```
    /// use langgraph_codec::crypto::{aad, AesMode, EncryptedSerializer};
    /// use langgraph_codec::{ErrorKind, Serializer, Value};
    ///
    /// let serde = EncryptedSerializer::from_aes_key(b"0123456789abcdef", AesMode::Eax)?;
    /// let here = aad::checkpoint("thread-1", "", "checkpoint-1")?;
    /// let value = Value::from("secret");
    /// let row = serde.with_aad(&here).dumps_typed(&value)?;
    /// assert_eq!(serde.with_aad(&here).loads_typed(&row.type_tag, &row.data)?, value);
    /// // Another row's associated data, or none, does not open it.
    /// let there = aad::checkpoint("thread-1", "", "checkpoint-2")?;
    /// let refused = serde.with_aad(&there).loads_typed(&row.type_tag, &row.data).unwrap_err();
    /// assert_eq!(refused.kind(), ErrorKind::AuthenticationFailed);
    /// assert!(serde.loads_typed(&row.type_tag, &row.data).is_err());
    /// # Ok::<(), langgraph_codec::Error>(())
    /// ```
    pub fn with_aad<'a>(&'a self, aad: &'a [u8]) -> WithAad<'a, S> {
        WithAad { serde: self, aad }
    }

    /// The encryption core: binds serialized bytes to `aad` and encrypts them,
    /// `(inner_tag, plaintext)` → `("{inner_tag}+{cipher name}", ciphertext)`. Every
    /// write of this serializer (the [`Value`] path, the typed path,
    /// [`rekey`](Self::rekey)) goes through here. The caller keeps `plaintext`.
    ///
    /// ```
    /// use langgraph_codec::crypto::{AesMode, EncryptedSerializer};
    ///
    /// let serde = EncryptedSerializer::from_aes_key(b"0123456789abcdef", AesMode::Gcm)?;
    /// let row = serde.seal("msgpack", b"\x01", b"row-1")?;
    /// assert_eq!(row.type_tag, "msgpack+aes");
    /// let (tag, plaintext) = serde.open(&row.type_tag, &row.data, b"row-1")?.expect("encrypted");
    /// assert_eq!((tag, &plaintext[..]), ("msgpack", &b"\x01"[..]));
    /// assert!(serde.open(&row.type_tag, &row.data, b"row-2").is_err());
    /// # Ok::<(), langgraph_codec::Error>(())
    /// ```
    ///
    /// # Errors
    /// The cipher's error, or [`ErrorKind::InvalidCipherName`](crate::ErrorKind::InvalidCipherName) when the cipher names
    /// itself with something that cannot go into a type tag.
    pub fn seal(&self, inner_tag: &str, plaintext: &[u8], aad: &[u8]) -> Result<TypedBytes> {
        if self.writes_in_clear {
            return Ok(TypedBytes::new(inner_tag.to_owned(), plaintext.to_vec()));
        }
        let (name, ciphertext) = self.cipher.encrypt(plaintext, aad)?;
        if name.is_empty() || name.contains('+') {
            return Err(CryptoFault::InvalidCipherName { name }.into());
        }
        Ok(TypedBytes::new(format!("{inner_tag}+{name}"), ciphertext))
    }

    /// The decryption core: for a row this serializer's cipher encrypted,
    /// `Some((inner tag, plaintext))`, the plaintext in a buffer wiped when dropped;
    /// `None` for an unencrypted row (read it with the inner serializer). Every read of
    /// this serializer goes through here.
    ///
    /// # Errors
    /// [`ErrorKind::AuthenticationFailed`](crate::ErrorKind::AuthenticationFailed) (wrong key, tampered row, other `aad`),
    /// [`ErrorKind::CiphertextTruncated`](crate::ErrorKind::CiphertextTruncated), [`ErrorKind::InnerTagMismatch`](crate::ErrorKind::InnerTagMismatch) for a `null` row
    /// that decrypts to data (a rewritten tag), or [`ErrorKind::PlaintextRefused`](crate::ErrorKind::PlaintextRefused)
    /// for an unencrypted row in strict mode.
    pub fn open<'t>(
        &self,
        type_tag: &'t str,
        data: &[u8],
        aad: &[u8],
    ) -> Result<Option<(&'t str, Plaintext)>> {
        match self.open_lenient(type_tag, data, aad)? {
            None if self.strict => Err(plaintext_refused(type_tag)),
            opened => Ok(opened),
        }
    }

    /// [`open`](Self::open) without strict mode's refusal.
    fn open_lenient<'t>(
        &self,
        type_tag: &'t str,
        data: &[u8],
        aad: &[u8],
    ) -> Result<Option<(&'t str, Plaintext)>> {
        match self.peel(type_tag) {
            Some((inner_tag, name)) => {
                let plaintext = self.cipher.decrypt(name, data, aad)?;
                // The inner tag is not authenticated (Python's format): a `null` row
                // never carries data, so one that does had its tag rewritten.
                if inner_tag == tags::NULL && !plaintext.is_empty() {
                    return Err(CryptoFault::InnerTagMismatch {
                        type_tag: type_tag.to_owned(),
                        len: plaintext.len(),
                    }
                    .into());
                }
                Ok(Some((inner_tag, plaintext)))
            }
            None => Ok(None),
        }
    }

    /// Removes this serializer's encryption layer without decoding: the inner
    /// `(type, bytes)` pair. An unencrypted row comes back as it is (strict mode:
    /// refused). The returned bytes are an ordinary buffer, not wiped on drop: prefer
    /// [`open`](Self::open).
    ///
    /// # Errors
    /// As [`open`](Self::open).
    pub fn decrypt_typed(&self, type_tag: &str, data: &[u8], aad: &[u8]) -> Result<TypedBytes> {
        match self.open(type_tag, data, aad)? {
            Some((inner_tag, plaintext)) => Ok(TypedBytes::new(inner_tag, plaintext.into_vec())),
            None => Ok(TypedBytes::new(type_tag, data.to_vec())),
        }
    }

    /// Encrypts an already serialized pair: `(typ, data)` → `(typ+name, ciphertext)`;
    /// [`seal`](Self::seal) of its parts.
    ///
    /// # Errors
    /// As [`seal`](Self::seal).
    pub fn encrypt_typed(&self, plain: &TypedBytes, aad: &[u8]) -> Result<TypedBytes> {
        self.seal(&plain.type_tag, &plain.data, aad)
    }

    /// Re-encrypts a stored pair under the cipher's current (primary) key: a row
    /// encrypted under a previous key of a [`KeyRing`], or an unencrypted row (the
    /// migration to encryption, strict mode or not). The saver's `"empty"` marker is
    /// returned unchanged (it is never passed through a serializer).
    ///
    /// A row is re-encrypted only if the inner serializer reads it (its plaintext is
    /// decoded and dropped, then wiped), so a corrupt row or an unknown tag is refused
    /// instead of being encrypted blind. `pickle` rows, which only Python reads, are
    /// re-encrypted.
    ///
    /// # Errors
    /// The decryption error, or the inner serializer's error reading the row.
    pub fn rekey(&self, typed: &TypedBytes) -> Result<TypedBytes> {
        self.with_aad(b"").rekey(typed)
    }

    /// [`rekey`](Self::rekey) of a row bound to `aad` ([`WithAad::rekey`]).
    fn rekey_bound(&self, typed: &TypedBytes, aad: &[u8]) -> Result<TypedBytes> {
        if typed.type_tag == tags::EMPTY {
            return Ok(typed.clone());
        }
        match self.open_lenient(&typed.type_tag, &typed.data, aad)? {
            Some((inner_tag, plaintext)) => {
                readable(self.inner.loads_typed(inner_tag, &plaintext))?;
                self.seal(inner_tag, &plaintext, aad)
            }
            None => {
                readable(self.load_inner(&typed.type_tag, &typed.data))?;
                self.seal(&typed.type_tag, &typed.data, aad)
            }
        }
    }

    /// [`seal`](Self::seal) of a pair the inner serializer just produced, wiping its
    /// bytes afterwards.
    fn seal_owned(&self, plain: TypedBytes, aad: &[u8]) -> Result<TypedBytes> {
        let data = Plaintext::new(Vec::from(plain.data));
        self.seal(&plain.type_tag, &data, aad)
    }

    /// `(inner tag, cipher name)` when the tag's last suffix belongs to the cipher.
    fn peel<'t>(&self, type_tag: &'t str) -> Option<(&'t str, &'t str)> {
        type_tag
            .rsplit_once('+')
            .filter(|(_, name)| self.cipher.accepts(name))
    }

    /// The inner serializer; a suffix nobody in the stack knows becomes
    /// [`ErrorKind::UnknownCipher`](crate::ErrorKind::UnknownCipher).
    fn load_inner(&self, type_tag: &str, data: &[u8]) -> Result<Value> {
        match self.inner.loads_typed(type_tag, data) {
            Err(e) if matches!(e.as_tag(), Some(TagError::UnknownType { tag }) if tag == type_tag) => {
                match type_tag.rsplit_once('+') {
                    Some((_, name)) => Err(CryptoFault::UnknownCipher {
                        name: name.to_owned(),
                    }
                    .into()),
                    None => Err(e),
                }
            }
            other => other,
        }
    }
}

/// Whether a row reads back, for [`EncryptedSerializer::rekey`]: pickle rows count as
/// readable (Python reads them).
fn readable<E: Into<Error>>(read: Result<Value, E>) -> Result<()> {
    match read.map_err(Into::into) {
        Ok(_) => Ok(()),
        Err(e) if matches!(e.as_tag(), Some(TagError::Pickle)) => Ok(()),
        Err(e) => Err(e),
    }
}

/// The error of strict mode refusing an unencrypted row: kind
/// [`ErrorKind::PlaintextRefused`], the row's tag as [`Error::type_tag`].
pub fn plaintext_refused(type_tag: &str) -> Error {
    CryptoFault::PlaintextRefused {
        type_tag: type_tag.to_owned(),
    }
    .into()
}

/// An [`EncryptedSerializer`] bound to one row's associated data, made by
/// [`EncryptedSerializer::with_aad`]: a [`Serializer`] whose writes bind the ciphertext
/// to that data and whose reads open only rows bound to it. Unencrypted rows ignore it.
///
/// It is how associated data goes with any call: `serde.with_aad(&aad).dumps_typed(&v)`,
/// `.loads_typed(tag, data)`, the typed calls of
/// [`TypedSerializerExt`](crate::serializer::TypedSerializerExt)
/// (`.dumps_typed_value(&v)`, `.loads_typed_value(tag, data)`) and
/// [`rekey`](Self::rekey). Copying it copies two references. A saver that holds its
/// serializer as a trait object keeps the inner serializer erased instead:
/// `EncryptedSerializer<Arc<dyn Serializer>>` binds rows to associated data for any
/// inner serializer.
///
/// The [`wrap_serialized`](Serializer::wrap_serialized) and
/// [`unwrap_serialized`](Serializer::unwrap_serialized) hooks bind this view's
/// associated data; the `aad` they are handed (the typed layer hands none) is not used.
#[derive(Debug)]
pub struct WithAad<'a, S = JsonPlusSerializer> {
    serde: &'a EncryptedSerializer<S>,
    aad: &'a [u8],
}

impl<S> Clone for WithAad<'_, S> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<S> Copy for WithAad<'_, S> {}

impl<'a, S: Serializer> WithAad<'a, S> {
    /// The associated data rows are bound to.
    pub fn aad(&self) -> &'a [u8] {
        self.aad
    }

    /// The serializer this view binds.
    pub fn serializer(&self) -> &'a EncryptedSerializer<S> {
        self.serde
    }

    /// [`EncryptedSerializer::rekey`] of a row bound to this associated data; the new
    /// ciphertext is bound to the same data.
    ///
    /// # Errors
    /// As [`EncryptedSerializer::rekey`]; a row bound to other associated data fails
    /// with [`ErrorKind::AuthenticationFailed`](crate::ErrorKind::AuthenticationFailed).
    pub fn rekey(&self, typed: &TypedBytes) -> Result<TypedBytes> {
        self.serde.rekey_bound(typed, self.aad)
    }
}

impl<S: Serializer> Serializer for WithAad<'_, S> {
    /// The inner serializer's pair, encrypted and bound to this associated data; the
    /// serialized plaintext is wiped once encrypted.
    fn dumps_typed(&self, value: &Value) -> Result<TypedBytes> {
        let plain = self.serde.inner.dumps_typed(value)?;
        self.serde.seal_owned(plain, self.aad)
    }

    /// Reads a row encrypted with this associated data; unencrypted rows ignore it.
    ///
    /// Errors: [`ErrorKind::AuthenticationFailed`](crate::ErrorKind::AuthenticationFailed)
    /// for a wrong key, a tampered row or other associated data;
    /// [`ErrorKind::PlaintextRefused`](crate::ErrorKind::PlaintextRefused) for an
    /// unencrypted row in strict mode; the inner serializer's error reading the
    /// decrypted bytes.
    fn loads_typed(&self, type_tag: &str, data: &[u8]) -> Result<Value> {
        match self.serde.open(type_tag, data, self.aad)? {
            Some((inner_tag, plaintext)) => {
                Ok(self.serde.inner.loads_typed(inner_tag, &plaintext)?)
            }
            None => self.serde.load_inner(type_tag, data),
        }
    }

    fn confidential(&self) -> bool {
        true
    }

    fn refuses_plaintext(&self) -> bool {
        self.serde.strict
    }

    fn wrap_serialized(&self, raw: TypedBytes, _aad: &[u8]) -> Result<TypedBytes> {
        self.serde.wrap_serialized(raw, self.aad)
    }

    fn unwrap_serialized(
        &self,
        type_tag: &str,
        data: &[u8],
        _aad: &[u8],
        read: &mut dyn FnMut(&str, &[u8]) -> Result<()>,
    ) -> Result<()> {
        self.serde.unwrap_serialized(type_tag, data, self.aad, read)
    }
}

impl<S: Serializer> Serializer for EncryptedSerializer<S> {
    fn dumps_typed(&self, value: &Value) -> Result<TypedBytes> {
        self.with_aad(b"").dumps_typed(value)
    }

    fn loads_typed(&self, type_tag: &str, data: &[u8]) -> Result<Value> {
        self.with_aad(b"").loads_typed(type_tag, data)
    }

    /// Always `true`: typed reads of decrypted rows withhold what they found.
    fn confidential(&self) -> bool {
        true
    }

    /// Strict mode ([`with_strict`](Self::with_strict)).
    fn refuses_plaintext(&self) -> bool {
        self.strict
    }

    /// Typed (serde) values: the inner serializer's pair, then [sealed](Self::seal)
    /// under `aad`; the serialized plaintext is wiped.
    fn wrap_serialized(&self, raw: TypedBytes, aad: &[u8]) -> Result<TypedBytes> {
        let inner = self.inner.wrap_serialized(raw, b"")?;
        self.seal_owned(inner, aad)
    }

    /// Typed (serde) values: [opened](Self::open) under `aad`, then handed to the inner
    /// serializer; the plaintext is wiped once `read` returns.
    fn unwrap_serialized(
        &self,
        type_tag: &str,
        data: &[u8],
        aad: &[u8],
        read: &mut dyn FnMut(&str, &[u8]) -> Result<()>,
    ) -> Result<()> {
        match self.open(type_tag, data, aad)? {
            Some((inner_tag, plaintext)) => self
                .inner
                .unwrap_serialized(inner_tag, &plaintext, b"", read),
            None => self.inner.unwrap_serialized(type_tag, data, b"", read),
        }
    }
}
