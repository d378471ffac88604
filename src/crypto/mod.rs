//! At-rest encryption of checkpoint rows, byte-compatible with Python's
//! `EncryptedSerializer.from_pycryptodome_aes()`.
//!
//! - [`Cipher`]: Python's `CipherProtocol` (plug in a KMS or HSM), with associated data.
//! - [`KeyRing`]: the `"aes"` cipher, EAX (default) or GCM, layout
//!   `nonce (16) | tag (16) | ciphertext`, with key rotation (previous keys decrypt).
//! - [`EncryptedSerializer`]: wraps any [`Serializer`](crate::Serializer); tag
//!   `"<inner>+aes"`; strict mode; [`rekey`](EncryptedSerializer::rekey).
//! - [`CompressedSerializer`](crate::compression::CompressedSerializer): upstream
//!   LangGraph's `+zlib` wrapper, bounded; it lives in [`compression`](crate::compression),
//!   a layer below this one, which this layer composes (`msgpack+zlib+aes`).
//! - [`aad`]: upstream LangGraph's canonical associated data binding a row's
//!   ciphertext to its thread, namespace, checkpoint, channel…
//! - [`generate_key`]: a new random key for `LANGGRAPH_AES_KEY`, as printable text
//!   (`lgcodec key generate`).
//!
//! Keys live in [`zeroize`] buffers and are wiped on drop; `Debug` output and errors
//! never contain key material or plaintext. Every failure is the crate's
//! [`Error`](crate::Error), with kinds such as
//! [`ErrorKind::AuthenticationFailed`](crate::ErrorKind::AuthenticationFailed).
//!
//! ```
//! use langgraph_codec::crypto::{aad, EncryptedSerializer};
//! use langgraph_codec::{ErrorKind, Serializer, Value};
//!
//! // Keys as Python reads them: LANGGRAPH_AES_KEY is the key text itself.
//! let env = |name: &str| match name {
//!     "LANGGRAPH_AES_KEY" => Some("0123456789abcdef".to_owned()),
//!     _ => None,
//! };
//! let serde = EncryptedSerializer::from_env_vars(env)?;
//! let value = Value::map([("messages", Value::from(vec![Value::from("hi")]))]);
//!
//! // Without associated data: exactly what Python writes and reads.
//! let row = serde.dumps_typed(&value)?;
//! assert_eq!(row.type_tag, "msgpack+aes");
//! assert_eq!(serde.loads_typed(&row.type_tag, &row.data)?, value);
//!
//! // Bound to its row: the same bytes under another checkpoint id do not decrypt.
//! let here = aad::checkpoint("thread-1", "", "checkpoint-1")?;
//! let there = aad::checkpoint("thread-1", "", "checkpoint-2")?;
//! let row = serde.with_aad(&here).dumps_typed(&value)?;
//! assert_eq!(serde.with_aad(&here).loads_typed(&row.type_tag, &row.data)?, value);
//! let refused = serde.with_aad(&there).loads_typed(&row.type_tag, &row.data).unwrap_err();
//! assert_eq!(refused.kind(), ErrorKind::AuthenticationFailed);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

pub mod aad;
mod aead;
mod aes;
mod cipher;
mod encrypted;
mod error;
mod format;
mod generate;
mod key;
mod keyring;
mod plaintext;

pub use self::format::{AesMode, AES_CIPHER_NAME, HEADER_LEN, NONCE_LEN, TAG_LEN};
pub use cipher::Cipher;
pub use encrypted::{plaintext_refused, EncryptedSerializer, WithAad};
pub(crate) use error::CryptoFault;
pub use generate::{generate_key, KeyText, KEY_ALPHABET, KEY_BITS_PER_CHAR};
#[cfg(any(feature = "sqlite", feature = "postgres"))]
pub(crate) use key::check_previous_count;
pub use key::{
    strict_from_env, AesKey, BASE64_PREFIX, ENV_FALLBACK_KEYS, ENV_KEY, ENV_KEY_PREVIOUS,
    ENV_STRICT, MAX_PREVIOUS_KEYS,
};
pub use keyring::KeyRing;
pub use plaintext::Plaintext;
