//! One key's AEAD state, built once and reused for every row: the AES key schedule,
//! the GCM instance (its GHASH key derived once) and EAX on top of the same schedule.
//!
//! EAX (Bellare, Rogaway, Wagner) is composed here from RustCrypto's `aes`, `cmac` and
//! `ctr` so that the expanded key is reused: the `eax` crate keeps only the raw key and
//! expands it four times per call (three OMACs and CTR). The composition is the
//! standard one, `N = OMAC⁰(nonce)`, `H = OMAC¹(aad)`, `C = CTR_N(M)`,
//! `tag = N ⊕ H ⊕ OMAC²(C)`, and is checked byte for byte against pycryptodome's
//! vectors and against the `eax` crate (tests below).
//!
//! Every piece of key material here lives in a type that wipes itself on drop (`aes`
//! and `aes-gcm` with their `zeroize` features; `cmac` wipes its state).

use aes::{Aes128, Aes192, Aes256};
use aes_gcm::aead::array::Array;
use aes_gcm::aead::consts::U16;
use aes_gcm::aead::inout::InOutBuf;
use aes_gcm::aead::{AeadInOut, KeyInit};
use aes_gcm::AesGcm;
use cipher::{InnerIvInit, StreamCipherCore};
use cmac::digest::common::InnerInit;
use cmac::{Cmac, Mac};
use ctutils::CtEq;

use super::format::{AesMode, NONCE_LEN, TAG_LEN};
use super::CryptoFault;
use crate::error::Error;

/// The AEAD state of one key, both modes.
#[derive(Clone)]
pub(crate) enum KeyState {
    A128(Modes<Aes128>),
    A192(Modes<Aes192>),
    A256(Modes<Aes256>),
}

/// One key size's block cipher (EAX's OMAC and CTR run on clones of it) and GCM.
#[derive(Clone)]
pub(crate) struct Modes<C> {
    aes: C,
    gcm: AesGcm<C, U16>,
}

type Tag = [u8; TAG_LEN];

impl KeyState {
    /// Expands `key` (16, 24 or 32 bytes) once.
    pub(crate) fn new(key: &[u8]) -> Option<Self> {
        Some(match key.len() {
            16 => KeyState::A128(Modes::<Aes128>::new(key)?),
            24 => KeyState::A192(Modes::<Aes192>::new(key)?),
            32 => KeyState::A256(Modes::<Aes256>::new(key)?),
            _ => return None,
        })
    }

    /// Encrypts `plaintext` into `out` (as long as `plaintext`); returns the tag.
    pub(crate) fn seal_into(
        &self,
        mode: AesMode,
        nonce: &[u8; NONCE_LEN],
        aad: &[u8],
        plaintext: &[u8],
        out: &mut [u8],
    ) -> Result<Tag, Error> {
        match self {
            KeyState::A128(m) => m.seal(mode, nonce, aad, plaintext, out),
            KeyState::A192(m) => m.seal(mode, nonce, aad, plaintext, out),
            KeyState::A256(m) => m.seal(mode, nonce, aad, plaintext, out),
        }
    }

    /// Checks `tag` over `body` and, when it authenticates, decrypts `body` into `out`
    /// (as long as `body`): `true`. `false` with `out` untouched when it does not.
    pub(crate) fn open_into(
        &self,
        mode: AesMode,
        nonce: &[u8; NONCE_LEN],
        aad: &[u8],
        body: &[u8],
        tag: &Tag,
        out: &mut [u8],
    ) -> Result<bool, Error> {
        match self {
            KeyState::A128(m) => m.open(mode, nonce, aad, body, tag, out),
            KeyState::A192(m) => m.open(mode, nonce, aad, body, tag, out),
            KeyState::A256(m) => m.open(mode, nonce, aad, body, tag, out),
        }
    }
}

fn too_long(what: &'static str, len: usize) -> Error {
    CryptoFault::TooLong { what, len }.into()
}

macro_rules! modes {
    ($($aes:ty),*) => {$(
impl Modes<$aes> {
    fn new(key: &[u8]) -> Option<Self> {
        let aes = <$aes>::new_from_slice(key).ok()?;
        Some(Modes {
            gcm: AesGcm::from(aes.clone()),
            aes,
        })
    }

    fn seal(
        &self,
        mode: AesMode,
        nonce: &[u8; NONCE_LEN],
        aad: &[u8],
        plaintext: &[u8],
        out: &mut [u8],
    ) -> Result<Tag, Error> {
        let len = plaintext.len();
        let buf = InOutBuf::new(plaintext, out).map_err(|_| too_long("plaintext", len))?;
        match mode {
            AesMode::Gcm => self
                .gcm
                .encrypt_inout_detached(&Array::from(*nonce), aad, buf)
                .map(Into::into)
                .map_err(|_| too_long("plaintext or associated data", len.max(aad.len()))),
            AesMode::Eax => {
                let n = self.omac(0, nonce);
                let h = self.omac(1, aad);
                self.ctr(&n, buf);
                let c = self.omac(2, out);
                Ok(xor3(&n, &h, &c))
            }
        }
    }

    fn open(
        &self,
        mode: AesMode,
        nonce: &[u8; NONCE_LEN],
        aad: &[u8],
        body: &[u8],
        tag: &Tag,
        out: &mut [u8],
    ) -> Result<bool, Error> {
        let buffer = InOutBuf::new(body, out).map_err(|_| too_long("ciphertext", body.len()))?;
        match mode {
            // GCM checks the tag over the input before writing any output.
            AesMode::Gcm => Ok(self
                .gcm
                .decrypt_inout_detached(&Array::from(*nonce), aad, buffer, &Array::from(*tag))
                .is_ok()),
            AesMode::Eax => {
                let n = self.omac(0, nonce);
                let h = self.omac(1, aad);
                let c = self.omac(2, body);
                if !bool::from(xor3(&n, &h, &c).ct_eq(tag)) {
                    return Ok(false);
                }
                self.ctr(&n, buffer);
                Ok(true)
            }
        }
    }

    /// `OMAC^t(data)`: CMAC of `[0; 15] | t | data` on the expanded key.
    fn omac(&self, t: u8, data: &[u8]) -> Tag {
        let mut mac = Cmac::<$aes>::inner_init(self.aes.clone());
        let mut first = [0u8; 16];
        if let Some(last) = first.last_mut() {
            *last = t;
        }
        mac.update(&first);
        mac.update(data);
        mac.finalize().into_bytes().into()
    }

    /// CTR mode with a 128-bit big-endian counter starting at `iv`, `in → out`.
    fn ctr(&self, iv: &Tag, buf: InOutBuf<'_, '_, u8>) {
        ctr::CtrCore::<$aes, ctr::flavors::Ctr128BE>::inner_iv_init(self.aes.clone(), &(*iv).into())
            .apply_keystream_partial(buf);
    }
}
    )*};
}

modes!(Aes128, Aes192, Aes256);

fn xor3(a: &Tag, b: &Tag, c: &Tag) -> Tag {
    let mut out = *a;
    for ((o, x), y) in out.iter_mut().zip(b).zip(c) {
        *o ^= x ^ y;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use eax::Eax;

    /// Our EAX composition against the `eax` crate, every key size, with and without
    /// associated data, lengths around the block size; then a flipped bit is refused.
    #[test]
    fn eax_matches_the_eax_crate_and_refuses_tampering() {
        macro_rules! reference {
            ($aes:ty, $key:expr, $nonce:expr, $aad:expr, $pt:expr) => {{
                let eax = Eax::<$aes>::new_from_slice($key).expect("key length");
                let mut buf = $pt.to_vec();
                let tag = eax
                    .encrypt_inout_detached(&Array::from(*$nonce), $aad, buf.as_mut_slice().into())
                    .expect("encrypts");
                let tag: Tag = tag.into();
                (buf, tag)
            }};
        }
        let keys: [&[u8]; 3] = [&[7u8; 16], &[8u8; 24], &[9u8; 32]];
        for key in keys {
            let state = KeyState::new(key).expect("valid length");
            for len in [0usize, 1, 15, 16, 17, 31, 32, 33, 100, 257] {
                for aad in [&b""[..], b"a", b"associated data longer than a block"] {
                    let pt: Vec<u8> = (0..len).map(|i| (i * 31 % 251) as u8).collect();
                    let nonce: [u8; 16] = core::array::from_fn(|i| (i * 7 + len) as u8);
                    let expected = match key.len() {
                        16 => reference!(Aes128, key, &nonce, aad, &pt),
                        24 => reference!(Aes192, key, &nonce, aad, &pt),
                        _ => reference!(Aes256, key, &nonce, aad, &pt),
                    };
                    let mut buf = vec![0u8; len];
                    let tag = state
                        .seal_into(AesMode::Eax, &nonce, aad, &pt, &mut buf)
                        .expect("seals");
                    assert_eq!((&buf, &tag), (&expected.0, &expected.1), "len {len}");
                    let mut out = vec![0u8; len];
                    assert!(state
                        .open_into(AesMode::Eax, &nonce, aad, &buf, &tag, &mut out)
                        .expect("opens"));
                    assert_eq!(out, pt);
                    let mut bad_tag = tag;
                    bad_tag[len % 16] ^= 1;
                    let mut out = vec![0xa5u8; len];
                    assert!(!state
                        .open_into(AesMode::Eax, &nonce, aad, &buf, &bad_tag, &mut out)
                        .expect("runs"));
                    assert!(out.iter().all(|&b| b == 0xa5), "nothing written on failure");
                }
            }
        }
    }
}
