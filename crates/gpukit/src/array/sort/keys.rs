//! Values as unsigned 64-bit keys whose order is NumPy's sort order (the host twin of the
//! CUDA key functions in `array/kernels/sort.rs`): integers shifted into unsigned range, floats
//! by their bits (non-negative values with the sign bit set, negative ones inverted), every NaN
//! first made the canonical quiet NaN, so it sorts after +inf.

use crate::element::{DType, Numeric, Scalar};

const SIGN: u64 = 1 << 63;

/// Whether `d` is a signed integer type.
fn signed(d: DType) -> bool {
    matches!(d, DType::I32 | DType::I64)
}

/// The key of `x`. With `merge_zero`, -0.0 gets +0.0's key (they tie, as in NumPy's
/// comparisons: `argsort`); without, -0.0 sorts just before +0.0 and comes back with its sign
/// (`sort`).
#[inline]
pub(super) fn key<T: Numeric>(x: T, merge_zero: bool) -> u64 {
    match x.to_scalar() {
        Scalar::Float(f) => {
            let f = if f.is_nan() {
                f64::NAN
            } else if merge_zero && f == 0.0 {
                0.0
            } else {
                f
            };
            let b = f.to_bits();
            if b & SIGN != 0 {
                !b
            } else {
                b | SIGN
            }
        }
        Scalar::Int(i) if signed(T::DTYPE) => (i as i64 as u64) ^ SIGN,
        Scalar::Int(i) => i as u64,
        Scalar::Bool(b) => b as u64,
        // `Numeric` elements are never complex.
        Scalar::Complex(..) => unreachable!("complex arrays are not sorted"),
    }
}

/// The value whose key (made without `merge_zero`) is `k`.
#[inline]
pub(super) fn unkey<T: Numeric>(k: u64) -> T {
    match T::DTYPE {
        DType::F32 | DType::F64 => {
            let b = if k & SIGN != 0 { k & !SIGN } else { !k };
            T::from_f64(f64::from_bits(b))
        }
        d if signed(d) => T::from_i128((k ^ SIGN) as i64 as i128),
        _ => T::from_i128(k as i128),
    }
}

/// Whether the keys of `a` and `b` (of one element type) order them as NumPy does.
#[cfg(test)]
pub(super) fn numpy_le<T: crate::element::Element + PartialOrd>(a: T, b: T) -> bool {
    let nan = |x: T| x.partial_cmp(&x).is_none();
    match (nan(a), nan(b)) {
        (_, true) => true,
        (true, false) => false,
        _ => a <= b,
    }
}
