//! [`generate_key`]: a new key for `LANGGRAPH_AES_KEY`, as printable text from the
//! operating system's random source.

use std::fmt;

use zeroize::Zeroizing;

use super::CryptoFault;
use crate::error::Error;

/// The 64 characters a generated key is made of: `A`–`Z`, `a`–`z`, `0`–`9`, `-` and
/// `_` (base64url's alphabet). Each is one byte of UTF-8, none needs quoting in a shell
/// or an env file, and none is a comma (the separator of the decrypt-only key lists)
/// or `:` (so a key never starts with `base64:`).
pub const KEY_ALPHABET: &str = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

/// Bits of entropy per character of a generated key: 6 (one of 64, uniformly).
pub const KEY_BITS_PER_CHAR: usize = 6;

/// A generated key's text, wiped when dropped; `Debug` shows only its length.
#[derive(Clone)]
pub struct KeyText(Zeroizing<String>);

impl KeyText {
    /// The key, as `LANGGRAPH_AES_KEY` takes it.
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// Its length in characters, which is its length in bytes (16, 24 or 32).
    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// Always `false`: a key is never empty. (Present for API symmetry with `len`.)
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// Bits of entropy: [`KEY_BITS_PER_CHAR`] per character (96, 144 or 192).
    pub fn entropy_bits(&self) -> usize {
        self.0.len().saturating_mul(KEY_BITS_PER_CHAR)
    }
}

impl fmt::Debug for KeyText {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("KeyText")
            .field("len", &self.0.len())
            .finish_non_exhaustive()
    }
}

/// The character for the low six bits of `b`.
fn symbol(b: u8) -> char {
    let i = b & 63;
    char::from(match i {
        0..=25 => b'A' + i,
        26..=51 => b'a' + (i - 26),
        52..=61 => b'0' + (i - 52),
        62 => b'-',
        _ => b'_',
    })
}

/// A new random key of `len` characters (16, 24 or 32; 32 for AES-256) for
/// `LANGGRAPH_AES_KEY`: each character drawn uniformly from [`KEY_ALPHABET`] by the
/// low six bits of one byte from the operating system's random source, so each
/// carries [`KEY_BITS_PER_CHAR`] bits (192 bits for 32 characters). Python reads the
/// key as the UTF-8 bytes of the text, and every character is one byte, so the text is
/// a key of `len` bytes for Python and for [`AesKey::from_text`](super::AesKey::from_text).
///
/// ```
/// use langgraph_codec::crypto::{generate_key, AesKey, KEY_ALPHABET};
///
/// let key = generate_key(32)?;
/// assert_eq!((key.len(), key.entropy_bits()), (32, 192));
/// assert!(key.as_str().chars().all(|c| KEY_ALPHABET.contains(c)));
/// assert_eq!(AesKey::from_text(key.as_str())?.bits(), 256);
/// # Ok::<(), langgraph_codec::Error>(())
/// ```
///
/// # Errors
/// [`ErrorKind::InvalidKeyLength`](crate::ErrorKind::InvalidKeyLength) for a `len`
/// other than 16, 24 or 32; [`ErrorKind::RandomSource`](crate::ErrorKind::RandomSource)
/// when the operating system's random source fails.
pub fn generate_key(len: usize) -> Result<KeyText, Error> {
    if !matches!(len, 16 | 24 | 32) {
        return Err(CryptoFault::InvalidKeyLength {
            source_name: "a generated key".to_owned(),
            len,
            hint: "",
        }
        .into());
    }
    let mut random = Zeroizing::new(vec![0u8; len]);
    getrandom::fill(&mut random).map_err(|e| CryptoFault::RandomSource {
        message: e.to_string(),
    })?;
    // Reserved up front: the text is never moved to a larger buffer, which would leave
    // a copy behind unwiped.
    let mut text = Zeroizing::new(String::with_capacity(len));
    text.extend(random.iter().map(|b| symbol(*b)));
    Ok(KeyText(text))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_symbols_are_the_alphabet_in_order() {
        let all: String = (0u8..64).map(symbol).collect();
        assert_eq!(all, KEY_ALPHABET);
        // Only the low six bits count: b and b + 64k give the same character.
        assert!((0u8..=255).all(|b| symbol(b) == symbol(b & 63)));
    }

    #[test]
    fn lengths_other_than_aes_are_refused() {
        for len in [0, 15, 17, 31, 33, 64] {
            assert!(generate_key(len).is_err(), "{len}");
        }
        assert_eq!(
            format!("{:?}", generate_key(16).map(|k| k.len()).ok()),
            "Some(16)"
        );
    }
}
