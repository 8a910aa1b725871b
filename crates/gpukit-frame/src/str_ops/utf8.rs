//! UTF-8 helpers for the string kernels (`#[device]` functions: plain Rust on the CPU backend,
//! CUDA `__device__` functions on a GPU).

use gpukit::prelude::*;

/// The number of bytes of the UTF-8 sequence that starts with `lead` (1 for a stray
/// continuation byte, which valid rows never start with).
#[device]
pub fn seq_len(lead: u32) -> usize {
    if lead < 0x80 {
        1
    } else if lead >= 0xF0 {
        4
    } else if lead >= 0xE0 {
        3
    } else if lead >= 0xC0 {
        2
    } else {
        1
    }
}

/// The payload bits of a lead byte of a sequence of `len` bytes.
#[device]
pub fn lead_bits(lead: u32, len: usize) -> u32 {
    if len == 1 {
        lead
    } else if len == 2 {
        lead & 0x1F
    } else if len == 3 {
        lead & 0x0F
    } else {
        lead & 0x07
    }
}

/// Whether `b` is a continuation byte (`10xxxxxx`).
#[device]
pub fn is_cont(b: u32) -> bool {
    (b & 0xC0) == 0x80
}

/// The number of bytes that encode code point `c`.
#[device]
pub fn enc_len(c: u32) -> usize {
    if c < 0x80 {
        1
    } else if c < 0x800 {
        2
    } else if c < 0x10000 {
        3
    } else {
        4
    }
}

/// Byte `k` of the `len`-byte encoding of `c`.
#[device]
pub fn enc_byte(c: u32, len: usize, k: usize) -> u8 {
    if len == 1 {
        c as u8
    } else if k == 0 {
        let mark: u32 = if len == 2 {
            0xC0
        } else if len == 3 {
            0xE0
        } else {
            0xF0
        };
        (mark | (c >> (6 * (len - 1)))) as u8
    } else {
        (0x80 | ((c >> (6 * (len - 1 - k))) & 0x3F)) as u8
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn helpers_encode_and_decode_like_std() {
        for c in [
            'a',
            'é',
            'Ω',
            '日',
            '😀',
            '\u{7F}',
            '\u{80}',
            '\u{FFFF}',
            '\u{10FFFF}',
        ] {
            let mut buf = [0u8; 4];
            let s = c.encode_utf8(&mut buf).as_bytes();
            let n = enc_len(c as u32);
            assert_eq!(n, s.len());
            assert_eq!(seq_len(s[0] as u32), n);
            let mut cp = lead_bits(s[0] as u32, n);
            for (k, b) in s.iter().enumerate() {
                assert_eq!(enc_byte(c as u32, n, k), *b, "{c:?} byte {k}");
                if k > 0 {
                    assert!(is_cont(*b as u32));
                    cp = (cp << 6) | (*b as u32 & 0x3F);
                }
            }
            assert_eq!(cp, c as u32);
        }
    }
}
