//! The bytes a replay writes: every 4 KiB block names itself and its version, so a read that
//! returns another block's bytes, an older version or zeros is caught and described.
//! `shingled cache replay` and `shingled replay` write and check them.

use shingled_stl::BLOCK;

/// The bytes of version `v` of block `b`: 8-byte words from a hash of (b, v), never all zeros
/// for v > 0. Word 0 is `b`, word 1 is `v`, so a wrong block can be named.
pub fn fill(b: u64, v: u64, out: &mut [u8]) {
    let mut x = b.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ v.wrapping_mul(0xD1B5_4A32_D192_ED03);
    for (i, w) in out.chunks_exact_mut(8).enumerate() {
        let word = match i {
            0 => b,
            1 => v,
            _ => {
                x ^= x >> 30;
                x = x.wrapping_mul(0xBF58_476D_1CE4_E5B9);
                x ^= x >> 27;
                x
            }
        };
        w.copy_from_slice(&word.to_le_bytes());
    }
}

/// What a block's bytes say, for an error message.
pub fn describe(buf: &[u8]) -> String {
    if buf.iter().all(|&x| x == 0) {
        return "zeros".into();
    }
    let word = |i: usize| u64::from_le_bytes(buf[i * 8..i * 8 + 8].try_into().expect("8 bytes"));
    let (b, v) = (word(0), word(1));
    let mut want = vec![0u8; BLOCK];
    fill(b, v, &mut want);
    if want == buf {
        format!("version {v} of block {b}")
    } else {
        "unrecognised bytes".into()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn patterns_name_their_block_and_version() {
        let mut b = vec![0u8; BLOCK];
        fill(42, 7, &mut b);
        assert_eq!(describe(&b), "version 7 of block 42");
        let mut c = vec![0u8; BLOCK];
        fill(42, 8, &mut c);
        assert_ne!(b, c);
        b[100] ^= 1;
        assert_eq!(describe(&b), "unrecognised bytes");
        assert_eq!(describe(&[0u8; BLOCK]), "zeros");
    }
}
