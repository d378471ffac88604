//! The AES primitives of [`KeyRing`](super::KeyRing), Python's `from_pycryptodome_aes()`
//! cipher, byte for byte.
//!
//! Layout of every ciphertext: `nonce (16) | tag (16) | ciphertext`, cipher name
//! `"aes"`. EAX (the default) and GCM (with a 16-byte nonce, whose counter block
//! pycryptodome and RustCrypto both derive with GHASH) write the same layout, so the
//! bytes do not say which mode was used: decryption tries the configured mode first,
//! then the other. Both are authenticated with 128-bit tags, so a wrong guess fails
//! authentication instead of returning garbage.

use super::format::{AesMode, AES_CIPHER_NAME, HEADER_LEN, NONCE_LEN, TAG_LEN};
use super::key::AesKey;
use super::plaintext::Plaintext;
use super::CryptoFault;
use crate::error::Error;

pub(crate) fn check_name(name: &str) -> Result<(), Error> {
    if name == AES_CIPHER_NAME {
        Ok(())
    } else {
        Err(CryptoFault::UnknownCipher {
            name: name.to_owned(),
        }
        .into())
    }
}

/// 16 fresh bytes from the operating system's random source.
pub(crate) fn fresh_nonce() -> Result<[u8; NONCE_LEN], Error> {
    let mut nonce = [0u8; NONCE_LEN];
    getrandom::fill(&mut nonce).map_err(|e| CryptoFault::RandomSource {
        message: e.to_string(),
    })?;
    Ok(nonce)
}

/// Encrypts to `nonce | tag | ciphertext` with the key's prebuilt state.
pub(crate) fn seal(
    key: &AesKey,
    mode: AesMode,
    nonce: &[u8; NONCE_LEN],
    plaintext: &[u8],
    aad: &[u8],
) -> Result<Vec<u8>, Error> {
    let too_long = || CryptoFault::TooLong {
        what: "plaintext or associated data",
        len: plaintext.len().max(aad.len()),
    };
    // Zeroed, not copied: a large buffer comes zeroed from the allocator (calloc),
    // and the ciphertext is written straight from `plaintext`.
    let mut out = vec![
        0u8;
        HEADER_LEN
            .checked_add(plaintext.len())
            .ok_or_else(too_long)?
    ];
    let (head, body) = out.split_at_mut_checked(HEADER_LEN).ok_or_else(too_long)?;
    let tag = key.state().seal_into(mode, nonce, aad, plaintext, body)?;
    head.get_mut(..NONCE_LEN)
        .ok_or_else(too_long)?
        .copy_from_slice(nonce);
    let tag_slot = head.get_mut(NONCE_LEN..).ok_or_else(too_long)?;
    tag_slot.copy_from_slice(&tag);
    Ok(out)
}

/// Tries every key, each in `preferred` mode then the other.
pub(crate) fn open_any<'k>(
    keys: impl Iterator<Item = &'k AesKey>,
    preferred: AesMode,
    blob: &[u8],
    aad: &[u8],
) -> Result<Plaintext, Error> {
    open_any_indexed(keys, preferred, blob, aad).map(|(plaintext, _)| plaintext)
}

/// [`open_any`], also saying which key (by position) worked.
///
/// A row no key opens costs one authentication pass (CMAC or GHASH) over the body per
/// key and mode, and nothing else: the body is decrypted (into one buffer, allocated
/// once, wiped on drop) only after its tag checks out.
pub(crate) fn open_any_indexed<'k>(
    keys: impl Iterator<Item = &'k AesKey>,
    preferred: AesMode,
    blob: &[u8],
    aad: &[u8],
) -> Result<(Plaintext, usize), Error> {
    let truncated = || CryptoFault::Truncated { len: blob.len() };
    let (nonce, rest) = blob
        .split_first_chunk::<NONCE_LEN>()
        .ok_or_else(truncated)?;
    let (tag, body) = rest.split_first_chunk::<TAG_LEN>().ok_or_else(truncated)?;
    let mut out = Plaintext::zeroed(body.len());
    let mut keys_tried = 0usize;
    for (index, key) in keys.enumerate() {
        keys_tried = keys_tried.saturating_add(1);
        for mode in [preferred, preferred.other()] {
            if key
                .state()
                .open_into(mode, nonce, aad, body, tag, out.as_mut_slice())?
            {
                return Ok((out, index));
            }
        }
    }
    Err(CryptoFault::AuthenticationFailed { keys_tried }.into())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hex(bytes: &[u8]) -> String {
        bytes.iter().map(|b| format!("{b:02x}")).collect()
    }

    // Expected bytes produced by the pycryptodome 4.4.0 installed next to
    // langgraph-checkpoint 4.3.2 (the reference venv) with:
    //   from Crypto.Cipher import AES
    //   key = b"0123456789abcdef"; nonce = bytes(range(16)); pt = b"hello world"
    //   c = AES.new(key, mode, nonce=nonce); [c.update(b"aad")]
    //   ct, tag = c.encrypt_and_digest(pt); (nonce + tag + ct).hex()
    const KEY16: &[u8] = b"0123456789abcdef";
    const PT: &[u8] = b"hello world";
    const EAX16: &str =
        "000102030405060708090a0b0c0d0e0fedc37f666641887c1779a6a7b4d341eb6721bd8ab3b6e0fb1ad720";
    const EAX16_AAD: &str =
        "000102030405060708090a0b0c0d0e0fb240123d935c7502919aebe215a3e3d76721bd8ab3b6e0fb1ad720";
    const GCM16: &str =
        "000102030405060708090a0b0c0d0e0f7cfd91c428b8117d29ccd4705f7cb215fd8de367f8044491d1bf6b";
    const GCM16_AAD: &str =
        "000102030405060708090a0b0c0d0e0fa9452aba0fc2e35022de26db11f520fefd8de367f8044491d1bf6b";

    fn nonce() -> [u8; 16] {
        core::array::from_fn(|i| i as u8)
    }

    #[test]
    fn eax_and_gcm_match_pycryptodome_with_fixed_nonce() {
        let key = AesKey::new(KEY16).expect("valid key");
        let cases = [
            (AesMode::Eax, &b""[..], EAX16),
            (AesMode::Eax, &b"aad"[..], EAX16_AAD),
            (AesMode::Gcm, &b""[..], GCM16),
            (AesMode::Gcm, &b"aad"[..], GCM16_AAD),
        ];
        for (mode, aad, expected) in cases {
            let blob = seal(&key, mode, &nonce(), PT, aad).expect("seal");
            assert_eq!(hex(&blob), expected, "{mode:?} aad={aad:?}");
            let back = open_any(std::iter::once(&key), AesMode::Eax, &blob, aad).expect("open");
            assert_eq!(back, PT);
        }
    }

    #[test]
    fn other_key_sizes_match_pycryptodome() {
        // pycryptodome, nonce = bytes(range(16)), pt = b"hello world", no AAD:
        //   key24 = b"langgraph-codec-key-24by", key32 = b"langgraph-codec-golden-key-32byt"
        let cases: [(&[u8], AesMode, &str); 4] = [
            (b"langgraph-codec-key-24by", AesMode::Eax, "000102030405060708090a0b0c0d0e0fa2abab5ade540229b9258ce517298d681fcbeec30a488242f20aab"),
            (b"langgraph-codec-key-24by", AesMode::Gcm, "000102030405060708090a0b0c0d0e0fcb5854b26a7e4cfdacb3714cb0293dc564d1545a9849a5a589cd77"),
            (b"langgraph-codec-golden-key-32byt", AesMode::Eax, "000102030405060708090a0b0c0d0e0f2e7380546b4761e28dd9236bfa0c56f4a449a57f493b932b5f598d"),
            (b"langgraph-codec-golden-key-32byt", AesMode::Gcm, "000102030405060708090a0b0c0d0e0f42ee13d8a7bdcd042386533dc17481658b8ce79c72dfd99b9771fc"),
        ];
        for (k, mode, expected) in cases {
            let key = AesKey::new(k).expect("valid key");
            let blob = seal(&key, mode, &nonce(), PT, b"").expect("seal");
            assert_eq!(hex(&blob), expected, "{} bytes {mode:?}", k.len());
        }
    }

    #[test]
    fn truncated_is_distinct_from_authentication() {
        let key = AesKey::new(KEY16).expect("valid key");
        for len in 0..HEADER_LEN {
            assert_eq!(
                open_any(std::iter::once(&key), AesMode::Eax, &vec![0u8; len], b"")
                    .map(|_| ())
                    .map_err(|e| (e.kind(), e.count())),
                Err((crate::ErrorKind::CiphertextTruncated, Some(len)))
            );
        }
        assert_eq!(
            open_any(std::iter::once(&key), AesMode::Eax, &[0u8; HEADER_LEN], b"")
                .map(|_| ())
                .map_err(|e| (e.kind(), e.count())),
            Err((crate::ErrorKind::AuthenticationFailed, Some(1)))
        );
    }
}
