//! Unicode case tables for the case-mapping kernels, covering U+0000–U+017F (ASCII, Latin-1
//! Supplement, Latin Extended-A) and U+0300–U+04FF (combining diacritical marks, Greek and
//! Coptic, Cyrillic). Generated from Rust's own `char::to_uppercase`/`char::to_lowercase`,
//! `char::is_lowercase`/`char::is_uppercase` (Unicode `Cased`) and the behaviour of
//! `str::to_lowercase` around a capital sigma (Unicode `Case_Ignorable`), and checked against
//! them for every code point of those ranges by the tests in `case.rs`. Code points outside the
//! ranges map to themselves and are neither cased nor case-ignorable.
//!
//! Runs of code points whose mapping adds one constant are one `match` arm; alternating
//! upper/lower pairs are one arm with a parity guard.

use gpukit::prelude::*;

/// The first code point of the uppercase mapping of `c` (`c` itself outside the covered ranges).
/// The first code point of the uppercase mapping of `c` (`c` itself outside the covered ranges).
#[device]
pub fn upper_first(c: u32) -> u32 {
    match c {
        0x0061..=0x007A => c - 32,
        0x00B5 => c + 743,
        0x00DF => c - 140,
        0x00E0..=0x00F6 => c - 32,
        0x00F8..=0x00FE => c - 32,
        0x00FF => c + 121,
        0x0101..=0x012F if c % 2 == 1 => c - 1,
        0x0131 => c - 232,
        0x0133..=0x0137 if c % 2 == 1 => c - 1,
        0x013A..=0x0148 if c % 2 == 0 => c - 1,
        0x0149 => c + 371,
        0x014B..=0x0177 if c % 2 == 1 => c - 1,
        0x017A..=0x017E if c % 2 == 0 => c - 1,
        0x017F => c - 300,
        0x0345 => c + 84,
        0x0371..=0x0373 if c % 2 == 1 => c - 1,
        0x0377 => c - 1,
        0x037B..=0x037D => c + 130,
        0x0390 => c + 9,
        0x03AC => c - 38,
        0x03AD..=0x03AF => c - 37,
        0x03B0 => c - 11,
        0x03B1..=0x03C1 => c - 32,
        0x03C2 => c - 31,
        0x03C3..=0x03CB => c - 32,
        0x03CC => c - 64,
        0x03CD..=0x03CE => c - 63,
        0x03D0 => c - 62,
        0x03D1 => c - 57,
        0x03D5 => c - 47,
        0x03D6 => c - 54,
        0x03D7 => c - 8,
        0x03D9..=0x03EF if c % 2 == 1 => c - 1,
        0x03F0 => c - 86,
        0x03F1 => c - 80,
        0x03F2 => c + 7,
        0x03F3 => c - 116,
        0x03F5 => c - 96,
        0x03F8 => c - 1,
        0x03FB => c - 1,
        0x0430..=0x044F => c - 32,
        0x0450..=0x045F => c - 80,
        0x0461..=0x0481 if c % 2 == 1 => c - 1,
        0x048B..=0x04BF if c % 2 == 1 => c - 1,
        0x04C2..=0x04CE if c % 2 == 0 => c - 1,
        0x04CF => c - 15,
        0x04D1..=0x04FF if c % 2 == 1 => c - 1,
        _ => c,
    }
}

/// Code point `k` (1 or 2) of the uppercase mapping of `c` when it has more than one, else 0.
#[device]
pub fn upper_extra(c: u32, k: u32) -> u32 {
    if c == 0x00DF {
        if k == 1 {
            return 0x0053;
        }
        if k == 2 {
            return 0x0000;
        }
    }
    if c == 0x0149 {
        if k == 1 {
            return 0x004E;
        }
        if k == 2 {
            return 0x0000;
        }
    }
    if c == 0x0390 {
        if k == 1 {
            return 0x0308;
        }
        if k == 2 {
            return 0x0301;
        }
    }
    if c == 0x03B0 {
        if k == 1 {
            return 0x0308;
        }
        if k == 2 {
            return 0x0301;
        }
    }
    0
}

/// The first code point of the lowercase mapping of `c` (`c` itself outside the covered ranges).
#[device]
pub fn lower_first(c: u32) -> u32 {
    match c {
        0x0041..=0x005A => c + 32,
        0x00C0..=0x00D6 => c + 32,
        0x00D8..=0x00DE => c + 32,
        0x0100..=0x012E if c % 2 == 0 => c + 1,
        0x0130 => c - 199,
        0x0132..=0x0136 if c % 2 == 0 => c + 1,
        0x0139..=0x0147 if c % 2 == 1 => c + 1,
        0x014A..=0x0176 if c % 2 == 0 => c + 1,
        0x0178 => c - 121,
        0x0179..=0x017D if c % 2 == 1 => c + 1,
        0x0370..=0x0372 if c % 2 == 0 => c + 1,
        0x0376 => c + 1,
        0x037F => c + 116,
        0x0386 => c + 38,
        0x0388..=0x038A => c + 37,
        0x038C => c + 64,
        0x038E..=0x038F => c + 63,
        0x0391..=0x03A1 => c + 32,
        0x03A3..=0x03AB => c + 32,
        0x03CF => c + 8,
        0x03D8..=0x03EE if c % 2 == 0 => c + 1,
        0x03F4 => c - 60,
        0x03F7 => c + 1,
        0x03F9 => c - 7,
        0x03FA => c + 1,
        0x03FD..=0x03FF => c - 130,
        0x0400..=0x040F => c + 80,
        0x0410..=0x042F => c + 32,
        0x0460..=0x0480 if c % 2 == 0 => c + 1,
        0x048A..=0x04BE if c % 2 == 0 => c + 1,
        0x04C0 => c + 15,
        0x04C1..=0x04CD if c % 2 == 1 => c + 1,
        0x04D0..=0x04FE if c % 2 == 0 => c + 1,
        _ => c,
    }
}

/// Code point `k` (1 or 2) of the lowercase mapping of `c` when it has more than one, else 0.
#[device]
pub fn lower_extra(c: u32, k: u32) -> u32 {
    if c == 0x0130 {
        if k == 1 {
            return 0x0307;
        }
        if k == 2 {
            return 0x0000;
        }
    }
    0
}

/// Whether `c` is cased (Unicode's `Cased`: lowercase or uppercase), in the covered ranges.
#[device]
pub fn is_cased(c: u32) -> bool {
    match c {
        0x0041..=0x005A => true,
        0x0061..=0x007A => true,
        0x00AA => true,
        0x00B5 => true,
        0x00BA => true,
        0x00C0..=0x00D6 => true,
        0x00D8..=0x00F6 => true,
        0x00F8..=0x017F => true,
        0x0345 => true,
        0x0370..=0x0373 => true,
        0x0376..=0x0377 => true,
        0x037A..=0x037D => true,
        0x037F => true,
        0x0386..=0x0388 if c % 2 == 0 => true,
        0x0389..=0x038A => true,
        0x038C..=0x038E if c % 2 == 0 => true,
        0x038F..=0x03A1 => true,
        0x03A3..=0x03F5 => true,
        0x03F7..=0x0481 => true,
        0x048A..=0x04FF => true,
        _ => false,
    }
}

/// Whether `c` is Unicode `Case_Ignorable`, in the covered ranges.
#[device]
pub fn is_case_ignorable(c: u32) -> bool {
    match c {
        0x0027 => true,
        0x002E => true,
        0x003A => true,
        0x005E..=0x0060 if c % 2 == 0 => true,
        0x00A8 => true,
        0x00AD..=0x00AF if c % 2 == 1 => true,
        0x00B4 => true,
        0x00B7..=0x00B8 => true,
        0x0300..=0x036F => true,
        0x0374..=0x0375 => true,
        0x037A => true,
        0x0384..=0x0385 => true,
        0x0387 => true,
        0x0483..=0x0489 => true,
        _ => false,
    }
}
