//! [`Plaintext`]: decrypted bytes, wiped (a machine word at a time, see
//! `crate::wipe`) when dropped.

use std::fmt;
use std::ops::{Deref, DerefMut};

use crate::wipe::wipe_allocation;

/// Decrypted bytes in a buffer that is overwritten with zeros (its whole allocation,
/// spare capacity included) when dropped: what `Zeroizing<Vec<u8>>` does, a machine
/// word at a time.
///
/// Returned by [`Cipher::decrypt`](super::Cipher::decrypt) and
/// [`EncryptedSerializer::open`](super::EncryptedSerializer::open). It reads as a
/// `[u8]`; it cannot grow (a reallocation would leave an unwiped copy behind). `Debug`
/// prints only the length.
///
/// ```
/// use langgraph_codec::crypto::Plaintext;
///
/// let secret = Plaintext::new(b"card 4242".to_vec());
/// assert_eq!(&secret[..5], b"card ");
/// assert_eq!(format!("{secret:?}"), "Plaintext { len: 9, .. }");
/// ```
pub struct Plaintext(Vec<u8>);

impl Plaintext {
    /// Takes ownership of `bytes`; they are wiped when the `Plaintext` is dropped.
    pub fn new(bytes: Vec<u8>) -> Self {
        Plaintext(bytes)
    }

    /// `len` zero bytes, to decrypt into.
    pub(crate) fn zeroed(len: usize) -> Self {
        Plaintext(vec![0u8; len])
    }

    /// The bytes, as a mutable slice.
    pub fn as_mut_slice(&mut self) -> &mut [u8] {
        &mut self.0
    }

    /// Takes the bytes out without wiping them: the caller is now responsible for them.
    pub fn into_vec(mut self) -> Vec<u8> {
        std::mem::take(&mut self.0)
    }
}

impl From<Vec<u8>> for Plaintext {
    fn from(bytes: Vec<u8>) -> Self {
        Plaintext(bytes)
    }
}

impl Deref for Plaintext {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        &self.0
    }
}

impl DerefMut for Plaintext {
    fn deref_mut(&mut self) -> &mut [u8] {
        &mut self.0
    }
}

impl AsRef<[u8]> for Plaintext {
    fn as_ref(&self) -> &[u8] {
        &self.0
    }
}

impl fmt::Debug for Plaintext {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Plaintext")
            .field("len", &self.0.len())
            .finish_non_exhaustive()
    }
}

impl PartialEq for Plaintext {
    fn eq(&self, other: &Self) -> bool {
        self.0 == other.0
    }
}

impl Eq for Plaintext {}

impl PartialEq<[u8]> for Plaintext {
    fn eq(&self, other: &[u8]) -> bool {
        self.0 == other
    }
}

impl PartialEq<&[u8]> for Plaintext {
    fn eq(&self, other: &&[u8]) -> bool {
        self.0 == *other
    }
}

impl<const N: usize> PartialEq<[u8; N]> for Plaintext {
    fn eq(&self, other: &[u8; N]) -> bool {
        self.0 == other
    }
}

impl<const N: usize> PartialEq<&[u8; N]> for Plaintext {
    fn eq(&self, other: &&[u8; N]) -> bool {
        self.0 == *other
    }
}

impl PartialEq<Vec<u8>> for Plaintext {
    fn eq(&self, other: &Vec<u8>) -> bool {
        self.0 == *other
    }
}

impl Drop for Plaintext {
    fn drop(&mut self) {
        wipe_allocation(&mut self.0);
    }
}
