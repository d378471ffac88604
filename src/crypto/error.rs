//! [`CryptoError`]: everything that can go wrong with keys, ciphers and wrappers.
//!
//! No variant ever holds key material or plaintext: only names, lengths and limits.

use crate::compression::CompressionError;
use crate::kind::ErrorKind;
use crate::serializer::SerializerError;

/// An error of the at-rest encryption layer. Converts into the crate's
/// [`Error`](crate::Error) (its [`Error::Crypto`](crate::Error::Crypto), or for
/// [`Serializer`](Self::Serializer) the serializer's own variant) with `From`.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum CryptoError {
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
        /// The likely cause, when the bytes show one (empty otherwise): base64 or hex
        /// text of a key, a trailing newline, a space after a comma. Never key
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
    /// [`CompressionError::DecompressionLimit`] as this layer names it (the crate-wide
    /// error and the savers report compression failures here, as before compression
    /// left this module). Same message.
    #[error("{}", CompressionError::DecompressionLimit { limit: *limit })]
    DecompressionLimit {
        /// The per-row limit in force.
        limit: usize,
    },
    /// [`CompressionError::DecompressionBudget`] as this layer names it: the rows of
    /// one call would decompress to more than its total. Same message.
    #[error("{}", CompressionError::DecompressionBudget { limit: *limit })]
    DecompressionBudget {
        /// The budget's total.
        limit: usize,
    },
    /// [`CompressionError::InvalidCompressedData`] as this layer names it. Same message.
    #[error("{}", CompressionError::InvalidCompressedData { reason: reason.clone() })]
    InvalidCompressedData {
        /// What was wrong.
        reason: String,
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
    /// A user-supplied cipher (KMS, HSM, …) failed.
    #[error("cipher backend failed: {0}")]
    Backend(#[source] Box<dyn std::error::Error + Send + Sync>),
    /// The wrapped serializer failed (writing the plaintext row, or reading the
    /// decrypted one).
    #[error(transparent)]
    Serializer(#[from] SerializerError),
}

impl CryptoError {
    /// The crate-wide kind, e.g. [`ErrorKind::AuthenticationFailed`]; for
    /// [`Serializer`](Self::Serializer), the serializer error's kind.
    pub fn kind(&self) -> ErrorKind {
        match self {
            CryptoError::MissingKey { .. } | CryptoError::EncryptedRowWithoutKey { .. } => {
                ErrorKind::MissingKey
            }
            CryptoError::KeyNotUtf8 { .. } => ErrorKind::KeyNotUtf8,
            CryptoError::TooManyKeys { .. } => ErrorKind::TooManyKeys,
            CryptoError::InvalidKeyLength { .. } => ErrorKind::InvalidKeyLength,
            CryptoError::InvalidKeyEncoding { .. } => ErrorKind::InvalidKeyEncoding,
            CryptoError::InvalidSetting { .. } => ErrorKind::InvalidSetting,
            CryptoError::InnerTagMismatch { .. } => ErrorKind::InnerTagMismatch,
            CryptoError::UnknownCipher { .. } => ErrorKind::UnknownCipher,
            CryptoError::InvalidCipherName { .. } => ErrorKind::InvalidCipherName,
            CryptoError::AuthenticationFailed { .. } => ErrorKind::AuthenticationFailed,
            CryptoError::Truncated { .. } => ErrorKind::CiphertextTruncated,
            CryptoError::PlaintextRefused { .. } => ErrorKind::PlaintextRefused,
            CryptoError::DecompressionLimit { .. } => ErrorKind::DecompressionLimit,
            CryptoError::DecompressionBudget { .. } => ErrorKind::DecompressionBudget,
            CryptoError::InvalidCompressedData { .. } => ErrorKind::InvalidCompressedData,
            CryptoError::TooLong { .. } => ErrorKind::TooLong,
            CryptoError::RandomSource { .. } => ErrorKind::RandomSource,
            CryptoError::Backend(_) => ErrorKind::CipherBackend,
            CryptoError::Serializer(e) => e.kind(),
        }
    }
}

impl From<&CryptoError> for ErrorKind {
    fn from(e: &CryptoError) -> Self {
        e.kind()
    }
}

/// A crypto error reported through the [`Serializer`](crate::Serializer) protocol
/// (an encrypting or compressing serializer's `loads_typed`): the serializer's own
/// error comes back out of [`CryptoError::Serializer`]; any other becomes
/// [`SerializerError::Other`] with its kind, the `CryptoError` as its source.
impl From<CryptoError> for SerializerError {
    fn from(e: CryptoError) -> Self {
        match e {
            CryptoError::Serializer(e) => e,
            other => SerializerError::Other {
                kind: other.kind(),
                source: Box::new(other),
            },
        }
    }
}

/// A compression error as the crypto layer names it: the variant of the same name (the
/// crypto layer composes [`CompressedSerializer`](crate::compression::CompressedSerializer)).
impl From<CompressionError> for CryptoError {
    fn from(e: CompressionError) -> Self {
        match e {
            CompressionError::DecompressionLimit { limit } => {
                CryptoError::DecompressionLimit { limit }
            }
            CompressionError::DecompressionBudget { limit } => {
                CryptoError::DecompressionBudget { limit }
            }
            CompressionError::InvalidCompressedData { reason } => {
                CryptoError::InvalidCompressedData { reason }
            }
        }
    }
}

/// `Result` with the crypto layer's [`CryptoError`].
pub type Result<T, E = CryptoError> = std::result::Result<T, E>;
