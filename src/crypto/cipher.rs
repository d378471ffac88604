//! The [`Cipher`] trait: Python's `CipherProtocol`, with optional associated data.

use std::fmt;
use std::sync::Arc;

use super::Plaintext;
use crate::error::Error;

/// Python's `CipherProtocol`: bytes in, `(cipher name, ciphertext)` out, and back.
///
/// Implement it to plug in your own key management (a KMS, an HSM, envelope
/// encryption): [`EncryptedSerializer`](super::EncryptedSerializer) only calls these
/// methods. Object safe and `Send + Sync`, so it can be shared as `Arc<dyn Cipher>`.
///
/// `aad` is the associated data: authenticated but not stored, so decryption must be
/// given the same bytes. Empty means "none", exactly what Python (which passes none)
/// computes, for both EAX and GCM.
///
/// Rules for implementations: the name must be non-empty and must not contain `+` (it
/// becomes the suffix of the type tag); `decrypt` must authenticate and return either
/// the whole plaintext or an error, never part of it; errors and `Debug` output must not
/// contain key material.
///
/// ```
/// use langgraph_codec::crypto::{AesMode, Cipher, KeyRing};
///
/// let cipher = KeyRing::from_key_bytes(b"0123456789abcdef", AesMode::Eax)?;
/// let (name, blob) = cipher.encrypt(b"hello", b"")?;
/// assert_eq!(name, "aes");
/// assert_eq!(blob.len(), 16 + 16 + 5); // nonce | tag | ciphertext
/// assert_eq!(cipher.decrypt(&name, &blob, b"")?, b"hello");
/// # Ok::<(), langgraph_codec::Error>(())
/// ```
pub trait Cipher: Send + Sync + fmt::Debug {
    /// Encrypts `plaintext`, binding it to `aad`; returns the cipher name for the type
    /// tag and the ciphertext.
    ///
    /// # Errors
    /// The implementation's: for [`KeyRing`](super::KeyRing),
    /// [`ErrorKind::RandomSource`](crate::ErrorKind::RandomSource) or [`ErrorKind::TooLong`](crate::ErrorKind::TooLong).
    fn encrypt(&self, plaintext: &[u8], aad: &[u8]) -> Result<(String, Vec<u8>), Error>;

    /// Decrypts a ciphertext written under `cipher_name` with the same `aad`, into a
    /// buffer wiped when dropped (`Plaintext::new(vec)` takes a `Vec<u8>`).
    ///
    /// # Errors
    /// The implementation's: for [`KeyRing`](super::KeyRing),
    /// [`ErrorKind::UnknownCipher`](crate::ErrorKind::UnknownCipher), [`ErrorKind::CiphertextTruncated`](crate::ErrorKind::CiphertextTruncated) or
    /// [`ErrorKind::AuthenticationFailed`](crate::ErrorKind::AuthenticationFailed); never part of the plaintext.
    fn decrypt(&self, cipher_name: &str, ciphertext: &[u8], aad: &[u8])
        -> Result<Plaintext, Error>;

    /// Whether a type-tag suffix is a name this cipher writes or reads. A row whose last
    /// suffix is not accepted is not encrypted by this cipher (e.g. `msgpack+zlib`) and
    /// goes to the inner serializer. The default accepts every name, as Python does.
    fn accepts(&self, cipher_name: &str) -> bool {
        let _ = cipher_name;
        true
    }
}

impl<C: Cipher + ?Sized> Cipher for Arc<C> {
    fn encrypt(&self, plaintext: &[u8], aad: &[u8]) -> Result<(String, Vec<u8>), Error> {
        (**self).encrypt(plaintext, aad)
    }
    fn decrypt(&self, name: &str, ciphertext: &[u8], aad: &[u8]) -> Result<Plaintext, Error> {
        (**self).decrypt(name, ciphertext, aad)
    }
    fn accepts(&self, cipher_name: &str) -> bool {
        (**self).accepts(cipher_name)
    }
}

impl<C: Cipher + ?Sized> Cipher for Box<C> {
    fn encrypt(&self, plaintext: &[u8], aad: &[u8]) -> Result<(String, Vec<u8>), Error> {
        (**self).encrypt(plaintext, aad)
    }
    fn decrypt(&self, name: &str, ciphertext: &[u8], aad: &[u8]) -> Result<Plaintext, Error> {
        (**self).decrypt(name, ciphertext, aad)
    }
    fn accepts(&self, cipher_name: &str) -> bool {
        (**self).accepts(cipher_name)
    }
}
