//! The collectives' results computed on the host from every rank's elements.
//!
//! Host exchanges (threads sharing memory, or sockets between processes) give every rank all
//! ranks' buffers; these functions turn them into the result NCCL defines for each collective.
//! Every rank sees the same inputs, so every rank reaches the same answer, errors included: a
//! size mismatch fails on all ranks instead of leaving some waiting.

use super::{CollectiveElement, ReduceOp};
use gpukit::{Error, Result};

/// The elements of `v` as bytes (native order).
pub(crate) fn to_bytes<T: CollectiveElement>(v: &[T]) -> Vec<u8> {
    // SAFETY: CollectiveElement types are plain numbers (no padding, no pointers).
    unsafe { std::slice::from_raw_parts(v.as_ptr() as *const u8, std::mem::size_of_val(v)) }
        .to_vec()
}

/// Elements from bytes made by [`to_bytes`]; an error when the length is not a whole number
/// of elements.
pub(crate) fn from_bytes<T: CollectiveElement>(b: &[u8]) -> Result<Vec<T>> {
    let size = std::mem::size_of::<T>();
    if !b.len().is_multiple_of(size) {
        return Err(Error::Other(format!(
            "a collective received {} bytes, not a whole number of {}-byte elements",
            b.len(),
            size
        )));
    }
    let n = b.len() / size;
    let mut v = Vec::<T>::with_capacity(n);
    // SAFETY: the capacity holds n elements; every bit pattern is a valid CollectiveElement.
    unsafe {
        std::ptr::copy_nonoverlapping(b.as_ptr(), v.as_mut_ptr() as *mut u8, n * size);
        v.set_len(n);
    }
    Ok(v)
}

fn same_lengths(what: &str, blobs: &[Vec<u8>]) -> Result<usize> {
    let n = blobs.first().map(Vec::len).unwrap_or(0);
    if let Some((r, b)) = blobs.iter().enumerate().find(|(_, b)| b.len() != n) {
        return Err(Error::Shape(format!(
            "{what}: every rank must give as many elements; rank 0 gave {n} bytes, rank {r} {} bytes",
            b.len()
        )));
    }
    Ok(n)
}

/// Every rank's elements combined by `op` in rank order (the same on every rank).
pub(crate) fn all_reduce<T: CollectiveElement>(blobs: &[Vec<u8>], op: ReduceOp) -> Result<Vec<T>> {
    same_lengths("all_reduce", blobs)?;
    let mut acc = from_bytes::<T>(&blobs[0])?;
    for b in &blobs[1..] {
        let v = from_bytes::<T>(b)?;
        for (a, x) in acc.iter_mut().zip(v) {
            *a = op.apply(*a, x);
        }
    }
    Ok(acc)
}

/// Root's elements, checked to be as many as `mine`.
pub(crate) fn broadcast<T: CollectiveElement>(blobs: &[Vec<u8>], root: usize) -> Result<Vec<T>> {
    same_lengths("broadcast", blobs)?;
    from_bytes(&blobs[root])
}

/// Every rank's elements one after the other, in rank order.
pub(crate) fn all_gather<T: CollectiveElement>(blobs: &[Vec<u8>]) -> Result<Vec<T>> {
    same_lengths("all_gather", blobs)?;
    let mut out = Vec::new();
    for b in blobs {
        out.extend(from_bytes::<T>(b)?);
    }
    Ok(out)
}

/// Block `rank` (of `world` equal blocks) of the all-reduced elements.
pub(crate) fn reduce_scatter<T: CollectiveElement>(
    blobs: &[Vec<u8>],
    op: ReduceOp,
    rank: usize,
) -> Result<Vec<T>> {
    let world = blobs.len();
    let all = all_reduce::<T>(blobs, op)?;
    if all.len() % world != 0 {
        return Err(Error::Shape(format!(
            "reduce_scatter: {} elements do not split into {world} equal blocks",
            all.len()
        )));
    }
    let k = all.len() / world;
    Ok(all[rank * k..(rank + 1) * k].to_vec())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn blobs(v: &[Vec<f64>]) -> Vec<Vec<u8>> {
        v.iter().map(|x| to_bytes(x)).collect()
    }

    #[test]
    fn bytes_round_trip() {
        let v = vec![1.5f32, -2.0, 3.25];
        assert_eq!(from_bytes::<f32>(&to_bytes(&v)).unwrap(), v);
        assert!(from_bytes::<f32>(&[0u8; 5]).is_err());
    }

    #[test]
    fn semantics_match_nccl() {
        let b = blobs(&[vec![1.0, 2.0, 3.0, 4.0], vec![10.0, 20.0, 30.0, 40.0]]);
        assert_eq!(
            all_reduce::<f64>(&b, ReduceOp::Sum).unwrap(),
            vec![11.0, 22.0, 33.0, 44.0]
        );
        assert_eq!(
            all_reduce::<f64>(&b, ReduceOp::Max).unwrap(),
            vec![10.0, 20.0, 30.0, 40.0]
        );
        assert_eq!(
            broadcast::<f64>(&b, 1).unwrap(),
            vec![10.0, 20.0, 30.0, 40.0]
        );
        assert_eq!(all_gather::<f64>(&b).unwrap().len(), 8);
        assert_eq!(
            reduce_scatter::<f64>(&b, ReduceOp::Sum, 1).unwrap(),
            vec![33.0, 44.0]
        );
    }

    #[test]
    fn mismatches_are_errors() {
        let b = blobs(&[vec![1.0, 2.0], vec![1.0]]);
        assert!(all_reduce::<f64>(&b, ReduceOp::Sum).is_err());
        let b = blobs(&[vec![1.0, 2.0, 3.0], vec![1.0, 2.0, 3.0]]);
        assert!(reduce_scatter::<f64>(&b, ReduceOp::Sum, 0).is_err());
    }
}
