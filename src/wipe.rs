//! Wiping buffers that held serialized or decrypted plaintext, a machine word at a time.
//!
//! `zeroize` writes a `[u8]` one volatile byte at a time, so that the compiler cannot
//! drop the writes; for a 150 KB serialized checkpoint that was about 22 µs, twice per
//! encrypted round trip. Here the aligned middle of the buffer is wiped as `u128` words
//! (the same volatile writes, through `zeroize`), and only the unaligned ends byte by
//! byte.
//!
//! Used by the msgpack encoder (a buffer it outgrows is wiped before it is freed, so a
//! serialized secret leaves no copy behind) and by `crypto::Plaintext`.

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
pub(crate) fn wipe_allocation(v: &mut Vec<u8>) {
    v.resize(v.capacity(), 0);
    wipe(v);
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
