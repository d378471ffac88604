//! The ciphertext format every AES row shares: the cipher name in the type tag, the
//! `nonce (16) | tag (16) | ciphertext` layout and the two modes that write it. Its
//! own module so that the AEAD primitives ([`super::aead`]), the keys and the ciphers
//! all read it from below instead of from each other.

/// The cipher name Python's AES cipher writes into type tags.
pub const AES_CIPHER_NAME: &str = "aes";
/// Nonce length in bytes.
pub const NONCE_LEN: usize = 16;
/// Authentication tag length in bytes.
pub const TAG_LEN: usize = 16;
/// `nonce | tag`: the shortest valid ciphertext (empty plaintext, e.g. `None`).
pub const HEADER_LEN: usize = NONCE_LEN + TAG_LEN;

/// The AES mode used to encrypt. Decryption accepts both.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum AesMode {
    /// EAX, Python's default (`AES.MODE_EAX`).
    #[default]
    Eax,
    /// GCM with a 16-byte nonce (`mode=AES.MODE_GCM`). Python's default reader,
    /// `from_pycryptodome_aes()`, cannot read GCM rows (`MAC check failed`): choose it
    /// only when every Python reader uses `mode=AES.MODE_GCM` or a reader that tries
    /// both modes (as this crate's do). Never chosen by an environment variable.
    Gcm,
}

impl AesMode {
    pub(super) fn other(self) -> Self {
        match self {
            AesMode::Eax => AesMode::Gcm,
            AesMode::Gcm => AesMode::Eax,
        }
    }

    /// The lowercase name, `"eax"` or `"gcm"`.
    pub fn as_str(self) -> &'static str {
        match self {
            AesMode::Eax => "eax",
            AesMode::Gcm => "gcm",
        }
    }

    /// Parses `"eax"` or `"gcm"` (any case).
    pub fn from_name(name: &str) -> Option<Self> {
        if name.eq_ignore_ascii_case("eax") {
            Some(AesMode::Eax)
        } else if name.eq_ignore_ascii_case("gcm") {
            Some(AesMode::Gcm)
        } else {
            None
        }
    }
}
