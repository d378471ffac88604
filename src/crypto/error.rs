//! What can go wrong with keys, ciphers and wrappers, as the crate's [`Error`].
//!
//! [`CryptoFault`] only builds those errors (each variant's message, kind and
//! context); it never leaves this layer. No variant ever holds key material or
//! plaintext: only names, lengths and limits.

use crate::error::Error;
use crate::kind::ErrorKind;

/// The crypto layer's failures, turned into [`Error`] at once with `From`.
#[derive(Debug, thiserror::Error)]
pub(crate) enum CryptoFault {
    /// No key was configured: the environment variable is unset.
    #[error("{var} environment variable is not set: set it to the key (16, 24 or 32 bytes of UTF-8 text)")]
    MissingKey {
        /// The variable that was looked up, e.g. `LANGGRAPH_AES_KEY`.
        var: String,
    },
    /// An encrypted row (tag ending in `+aes`) was read, and no key is configured.
    #[error(
        "the row with type tag {type_tag:?} is encrypted and {var} is not set: \
         set {var} to the key it was written with"
    )]
    #[cfg_attr(not(feature = "cli"), allow(dead_code))]
    EncryptedRowWithoutKey {
        /// The row's type tag.
        type_tag: String,
        /// The variable the key is read from, `LANGGRAPH_AES_KEY`.
        var: String,
    },
    /// A key variable is set but its value is not UTF-8 text.
    #[error("{var} is set but is not valid UTF-8 text{advice}")]
    KeyNotUtf8 {
        /// The variable, e.g. `LANGGRAPH_AES_KEY`.
        var: String,
        /// What to do instead (empty when there is no alternative).
        advice: &'static str,
    },
    /// More previous keys than a ring takes: refusing a forged row tries every key in
    /// both modes, so the count is capped.
    #[error(
        "{source_name} holds {count} previous keys; at most {max} are allowed (each one \
         costs every refused row two authentication passes): re-encrypt old rows and drop \
         the oldest keys"
    )]
    TooManyKeys {
        /// Where the keys came from.
        source_name: String,
        /// How many were given.
        count: usize,
        /// The limit.
        max: usize,
    },
    /// A key does not have an AES key length.
    #[error("{source_name} must be 16, 24, or 32 bytes long (it is {len} bytes){hint}")]
    InvalidKeyLength {
        /// Where the key came from, e.g. `LANGGRAPH_AES_KEY` or
        /// `LANGGRAPH_AES_KEY_PREVIOUS entry 2`.
        source_name: String,
        /// Its length in bytes.
        len: usize,
        /// The likely cause, when the bytes show one (base64 or hex text of a key, a
        /// trailing newline, a space after a comma); else, for a key from the
        /// environment, what a key is and where the right one is found. Never key
        /// material.
        hint: &'static str,
    },
    /// A setting read from the environment (e.g. `LANGGRAPH_AES_STRICT`) has a value
    /// that is not one of those it takes.
    #[error("{var} is {value:?}; it takes {expected}")]
    InvalidSetting {
        /// The variable.
        var: String,
        /// The value found (never a key: only settings use this variant).
        value: String,
        /// The values it takes.
        expected: &'static str,
    },
    /// A decrypted row's inner type tag does not fit its plaintext: a `null+aes` row
    /// whose plaintext is not empty. The inner tag is not authenticated (Python's
    /// format), so this row's tag was rewritten (e.g. `msgpack+aes` → `null+aes`).
    #[error(
        "the row with type tag {type_tag:?} decrypts to {len} bytes, but a `null` row \
         carries none: its type tag was rewritten (the inner tag is not authenticated)"
    )]
    InnerTagMismatch {
        /// The row's type tag.
        type_tag: String,
        /// The plaintext's length.
        len: usize,
    },
    /// A `base64:` key entry is not valid base64.
    #[error("{source_name}: the text after \"base64:\" is not valid standard base64")]
    InvalidKeyEncoding {
        /// Where the key came from.
        source_name: String,
    },
    /// The type tag ends in a suffix that no configured cipher or wrapper handles.
    #[error(
        "unknown cipher {name:?}: no configured cipher or wrapper handles this type-tag suffix"
    )]
    UnknownCipher {
        /// The cipher name found in the type tag.
        name: String,
    },
    /// A cipher returned a name that cannot be put in a type tag (empty or containing
    /// `+`, which separates the wrapper suffixes).
    #[error("cipher name {name:?} is not allowed in a type tag (empty, or contains '+')")]
    InvalidCipherName {
        /// The name the cipher returned.
        name: String,
    },
    /// Authentication failed: the ciphertext was encrypted under another key, was
    /// modified, or belongs to another row (different associated data). With several
    /// keys these cases cannot be told apart.
    #[error(
        "decryption failed: wrong key, tampered ciphertext or wrong associated data \
         (tried {keys_tried} key(s), EAX and GCM)"
    )]
    AuthenticationFailed {
        /// How many keys were tried.
        keys_tried: usize,
    },
    /// The ciphertext is shorter than the 32-byte `nonce | tag` header.
    #[error("ciphertext is {len} bytes, shorter than the 32-byte nonce and tag header")]
    Truncated {
        /// The length found.
        len: usize,
    },
    /// Strict mode: the row is not encrypted.
    #[error(
        "refusing unencrypted row with type tag {type_tag:?}: strict mode requires \
         every row to be encrypted"
    )]
    PlaintextRefused {
        /// The row's type tag.
        type_tag: String,
    },
    /// The plaintext or associated data is longer than the AEAD mode allows, or a field
    /// of associated data is longer than its 32-bit length prefix.
    #[error("{what} is too long ({len} bytes)")]
    TooLong {
        /// What was too long.
        what: &'static str,
        /// Its length.
        len: usize,
    },
    /// The operating system's random source failed.
    #[error("the OS random source failed: {message}")]
    RandomSource {
        /// The error reported.
        message: String,
    },
}

impl CryptoFault {
    fn kind(&self) -> ErrorKind {
        match self {
            CryptoFault::MissingKey { .. } | CryptoFault::EncryptedRowWithoutKey { .. } => {
                ErrorKind::MissingKey
            }
            CryptoFault::KeyNotUtf8 { .. } => ErrorKind::KeyNotUtf8,
            CryptoFault::TooManyKeys { .. } => ErrorKind::TooManyKeys,
            CryptoFault::InvalidKeyLength { .. } => ErrorKind::InvalidKeyLength,
            CryptoFault::InvalidKeyEncoding { .. } => ErrorKind::InvalidKeyEncoding,
            CryptoFault::InvalidSetting { .. } => ErrorKind::InvalidSetting,
            CryptoFault::InnerTagMismatch { .. } => ErrorKind::InnerTagMismatch,
            CryptoFault::UnknownCipher { .. } => ErrorKind::UnknownCipher,
            CryptoFault::InvalidCipherName { .. } => ErrorKind::InvalidCipherName,
            CryptoFault::AuthenticationFailed { .. } => ErrorKind::AuthenticationFailed,
            CryptoFault::Truncated { .. } => ErrorKind::CiphertextTruncated,
            CryptoFault::PlaintextRefused { .. } => ErrorKind::PlaintextRefused,
            CryptoFault::TooLong { .. } => ErrorKind::TooLong,
            CryptoFault::RandomSource { .. } => ErrorKind::RandomSource,
        }
    }
}

/// The fault's kind and message, and its context: the variable, key source or cipher
/// ([`Error::subject`]), the row's type tag ([`Error::type_tag`]), the count or length
/// ([`Error::count`]). Never a key or plaintext.
impl From<CryptoFault> for Error {
    #[cold]
    fn from(fault: CryptoFault) -> Self {
        let e = Error::new(fault.kind(), fault.to_string());
        match fault {
            CryptoFault::MissingKey { var } => e.with_subject(var),
            CryptoFault::EncryptedRowWithoutKey { type_tag, var } => {
                e.with_subject(var).with_type_tag(type_tag)
            }
            CryptoFault::KeyNotUtf8 { var, .. } => e.with_subject(var),
            CryptoFault::TooManyKeys {
                source_name, count, ..
            } => e.with_subject(source_name).with_count(count),
            CryptoFault::InvalidKeyLength {
                source_name, len, ..
            } => e.with_subject(source_name).with_count(len),
            CryptoFault::InvalidSetting { var, .. } => e.with_subject(var),
            CryptoFault::InnerTagMismatch { type_tag, len } => {
                e.with_type_tag(type_tag).with_count(len)
            }
            CryptoFault::InvalidKeyEncoding { source_name } => e.with_subject(source_name),
            CryptoFault::UnknownCipher { name } | CryptoFault::InvalidCipherName { name } => {
                e.with_subject(name)
            }
            CryptoFault::AuthenticationFailed { keys_tried } => e.with_count(keys_tried),
            CryptoFault::Truncated { len } => e.with_count(len),
            CryptoFault::PlaintextRefused { type_tag } => e.with_type_tag(type_tag),
            CryptoFault::TooLong { what, len } => e.with_subject(what).with_count(len),
            CryptoFault::RandomSource { .. } => e,
        }
    }
}
