//! Wiping plaintext buffers after use, a machine word at a time.
//!
//! `zeroize` writes a `[u8]` one volatile byte at a time, so that the compiler cannot
//! drop the writes; for a 150 KB serialized checkpoint that was about 22 µs, twice per
//! encrypted round trip. Here the aligned middle of the buffer is wiped as `u128` words
//! (the same volatile writes, through `zeroize`), and only the unaligned ends byte by
//! byte.

use std::fmt;
use std::ops::{Deref, DerefMut};

use zeroize::Zeroize;

/// Overwrites every byte of `buf` with zero, in a way the compiler may not elide.
pub(crate) fn wipe(buf: &mut [u8]) {
    let (head, words, tail) = bytemuck::pod_align_to_mut::<u8, u128>(buf);
    head.zeroize();
    words.zeroize();
    tail.zeroize();
}

/// Overwrites the whole allocation of `v`, spare capacity included, with zeros; `v` is
/// left full of zeros at its full capacity.
fn wipe_allocation(v: &mut Vec<u8>) {
    v.resize(v.capacity(), 0);
    wipe(v);
}

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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_byte_of_every_alignment_is_wiped() {
        let mut buf = vec![0xa5u8; 300];
        for start in 0..20 {
            for len in [0, 1, 15, 16, 17, 31, 32, 33, 100, 280 - start] {
                let part = &mut buf[start..start + len];
                part.fill(0xa5);
                wipe(part);
                assert!(part.iter().all(|&b| b == 0), "start {start} len {len}");
            }
        }
    }

    #[test]
    fn bytes_outside_the_slice_are_left_alone() {
        let mut buf = [0xa5u8; 64];
        wipe(&mut buf[3..41]);
        assert!(buf[..3].iter().all(|&b| b == 0xa5));
        assert!(buf[3..41].iter().all(|&b| b == 0));
        assert!(buf[41..].iter().all(|&b| b == 0xa5));
    }

    #[test]
    fn the_whole_allocation_is_wiped_including_spare_capacity() {
        let mut v = Vec::with_capacity(1000);
        v.extend_from_slice(&[0x5au8; 1000]);
        v.truncate(10); // 990 bytes of old plaintext now sit in the spare capacity
        let cap = v.capacity();
        wipe_allocation(&mut v);
        assert_eq!(v.len(), cap);
        assert!(v.iter().all(|&b| b == 0));
    }
}
