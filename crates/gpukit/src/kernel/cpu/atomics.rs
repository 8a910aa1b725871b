//! Atomics for CPU twins: real hardware atomics on the launch's buffers (compare-and-swap
//! loops for floats), returning the old value as CUDA's `atomicAdd` and friends do.
//!
//! The pointer always comes from `SliceMut::ptr` (bounds checked, aligned, alive for the
//! launch); the generated code never builds one any other way.

#![allow(clippy::not_unsafe_ptr_arg_deref)]

use std::sync::atomic::{
    AtomicI32, AtomicI64, AtomicU32, AtomicU64, Ordering::AcqRel, Ordering::Acquire,
};

/// Element types with atomic read-modify-write operations: i32, u32, i64, u64, f32, f64.
pub trait AtomicElement: Copy + private::Sealed {
    /// `*p += v` (wrapping for integers); returns the old value.
    fn atomic_add(p: *mut Self, v: Self) -> Self;
    /// `*p -= v` (wrapping for integers); returns the old value.
    fn atomic_sub(p: *mut Self, v: Self) -> Self;
    /// `*p = max(*p, v)`; returns the old value.
    fn atomic_max(p: *mut Self, v: Self) -> Self;
    /// `*p = min(*p, v)`; returns the old value.
    fn atomic_min(p: *mut Self, v: Self) -> Self;
    /// `*p = v`; returns the old value.
    fn atomic_exch(p: *mut Self, v: Self) -> Self;
    /// `if *p == compare { *p = v }` (bitwise for floats); returns the old value.
    fn atomic_cas(p: *mut Self, compare: Self, v: Self) -> Self;
}

mod private {
    pub trait Sealed {}
}

macro_rules! int_atomic {
    ($($t:ty => $a:ty),*) => {$(
        impl private::Sealed for $t {}
        impl AtomicElement for $t {
            #[inline]
            fn atomic_add(p: *mut Self, v: Self) -> Self {
                // SAFETY: see the module documentation.
                unsafe { <$a>::from_ptr(p) }.fetch_add(v, AcqRel)
            }
            #[inline]
            fn atomic_sub(p: *mut Self, v: Self) -> Self {
                unsafe { <$a>::from_ptr(p) }.fetch_sub(v, AcqRel)
            }
            #[inline]
            fn atomic_max(p: *mut Self, v: Self) -> Self {
                unsafe { <$a>::from_ptr(p) }.fetch_max(v, AcqRel)
            }
            #[inline]
            fn atomic_min(p: *mut Self, v: Self) -> Self {
                unsafe { <$a>::from_ptr(p) }.fetch_min(v, AcqRel)
            }
            #[inline]
            fn atomic_exch(p: *mut Self, v: Self) -> Self {
                unsafe { <$a>::from_ptr(p) }.swap(v, AcqRel)
            }
            #[inline]
            fn atomic_cas(p: *mut Self, compare: Self, v: Self) -> Self {
                match unsafe { <$a>::from_ptr(p) }.compare_exchange(compare, v, AcqRel, Acquire) {
                    Ok(old) | Err(old) => old,
                }
            }
        }
    )*};
}

int_atomic!(i32 => AtomicI32, u32 => AtomicU32, i64 => AtomicI64, u64 => AtomicU64);

/// Applies `f` to `*p` atomically by a compare-and-swap loop on the bits; the old value.
macro_rules! cas_loop {
    ($t:ty, $a:ty, $bits:ty, $p:expr, $f:expr) => {{
        let f = $f;
        // SAFETY: see the module documentation; same size and alignment as the bits.
        let a = unsafe { <$a>::from_ptr($p as *mut $bits) };
        let mut old = a.load(Acquire);
        loop {
            let new = <$t>::to_bits(f(<$t>::from_bits(old)));
            match a.compare_exchange_weak(old, new, AcqRel, Acquire) {
                Ok(_) => break <$t>::from_bits(old),
                Err(seen) => old = seen,
            }
        }
    }};
}

macro_rules! float_atomic {
    ($($t:ty => $a:ty, $bits:ty),*) => {$(
        impl private::Sealed for $t {}
        impl AtomicElement for $t {
            #[inline]
            fn atomic_add(p: *mut Self, v: Self) -> Self {
                cas_loop!($t, $a, $bits, p, |x: $t| x + v)
            }
            #[inline]
            fn atomic_sub(p: *mut Self, v: Self) -> Self {
                cas_loop!($t, $a, $bits, p, |x: $t| x - v)
            }
            #[inline]
            fn atomic_max(p: *mut Self, v: Self) -> Self {
                cas_loop!($t, $a, $bits, p, |x: $t| x.max(v))
            }
            #[inline]
            fn atomic_min(p: *mut Self, v: Self) -> Self {
                cas_loop!($t, $a, $bits, p, |x: $t| x.min(v))
            }
            #[inline]
            fn atomic_exch(p: *mut Self, v: Self) -> Self {
                let a = unsafe { <$a>::from_ptr(p as *mut $bits) };
                <$t>::from_bits(a.swap(v.to_bits(), AcqRel))
            }
            #[inline]
            fn atomic_cas(p: *mut Self, compare: Self, v: Self) -> Self {
                let a = unsafe { <$a>::from_ptr(p as *mut $bits) };
                match a.compare_exchange(compare.to_bits(), v.to_bits(), AcqRel, Acquire) {
                    Ok(old) | Err(old) => <$t>::from_bits(old),
                }
            }
        }
    )*};
}

float_atomic!(f32 => AtomicU32, u32, f64 => AtomicU64, u64);

/// `atomic_add(&mut a[i], v)` in a kernel: adds `v` to `*p` atomically, returns the old value.
#[inline]
pub fn atomic_add<T: AtomicElement>(p: *mut T, v: T) -> T {
    T::atomic_add(p, v)
}

/// Subtracts `v` from `*p` atomically, returns the old value.
#[inline]
pub fn atomic_sub<T: AtomicElement>(p: *mut T, v: T) -> T {
    T::atomic_sub(p, v)
}

/// Stores `max(*p, v)` atomically, returns the old value.
#[inline]
pub fn atomic_max<T: AtomicElement>(p: *mut T, v: T) -> T {
    T::atomic_max(p, v)
}

/// Stores `min(*p, v)` atomically, returns the old value.
#[inline]
pub fn atomic_min<T: AtomicElement>(p: *mut T, v: T) -> T {
    T::atomic_min(p, v)
}

/// Stores `v` atomically, returns the old value.
#[inline]
pub fn atomic_exch<T: AtomicElement>(p: *mut T, v: T) -> T {
    T::atomic_exch(p, v)
}

/// Stores `v` if `*p == compare`, atomically; returns the old value.
#[inline]
pub fn atomic_cas<T: AtomicElement>(p: *mut T, compare: T, v: T) -> T {
    T::atomic_cas(p, compare, v)
}

#[cfg(test)]
mod tests {
    use super::*;
    use rayon::prelude::*;

    #[test]
    fn concurrent_adds_are_exact() {
        let mut ints = [0i64; 1];
        let mut floats = [0.0f32; 1];
        let (pi, pf) = (ints.as_mut_ptr() as usize, floats.as_mut_ptr() as usize);
        (0..100_000).into_par_iter().for_each(|_| {
            atomic_add(pi as *mut i64, 1);
            atomic_add(pf as *mut f32, 1.0);
        });
        assert_eq!(ints[0], 100_000);
        assert_eq!(floats[0], 100_000.0);
    }

    #[test]
    fn old_values_and_semantics() {
        let mut u = [5u32];
        assert_eq!(atomic_sub(u.as_mut_ptr(), 7), 5);
        assert_eq!(u[0], u32::MAX - 1);
        assert_eq!(atomic_max(u.as_mut_ptr(), 3), u32::MAX - 1);
        assert_eq!(atomic_exch(u.as_mut_ptr(), 9), u32::MAX - 1);
        assert_eq!(atomic_cas(u.as_mut_ptr(), 8, 1), 9);
        assert_eq!(atomic_cas(u.as_mut_ptr(), 9, 1), 9);
        assert_eq!(u[0], 1);
        let mut f = [2.5f64];
        assert_eq!(atomic_min(f.as_mut_ptr(), -1.0), 2.5);
        assert_eq!(atomic_max(f.as_mut_ptr(), 0.5), -1.0);
        assert_eq!(atomic_sub(f.as_mut_ptr(), 0.25), 0.5);
        assert_eq!(atomic_cas(f.as_mut_ptr(), 0.25, 7.0), 0.25);
        assert_eq!(f[0], 7.0);
    }
}
