//! Strided loops on the host: the CPU backend's copies between layouts and elementwise
//! operations on views, in parallel chunks of the output, each walked as runs along the
//! innermost (merged) axis so that contiguous runs become plain slice copies and loops.

use super::layout::c_strides;
use crate::array::kernels::strided::{tile_plan, TilePlan};
use crate::backend::cpu::{alloc_uninit, CHUNK};
use crate::error::Result;
use rayon::prelude::*;

/// A loop over `shape` (merged, at least one axis) reading `K` operands: calls
/// `run(pos, offsets, len)` for each run of `len` consecutive C-order positions from `pos` that
/// lie along the innermost axis, `offsets` being each operand's element index at `pos`.
fn walk<const K: usize>(
    shape: &[usize],
    strides: &[Vec<isize>; K],
    bases: [isize; K],
    start: usize,
    len: usize,
    mut run: impl FnMut(usize, [isize; K], usize),
) {
    let nd = shape.len();
    let inner = shape[nd - 1];
    // The multi-index of `start`.
    let mut idx = vec![0usize; nd];
    let mut rem = start;
    for k in (0..nd).rev() {
        idx[k] = rem % shape[k];
        rem /= shape[k];
    }
    let mut offs = bases;
    for (o, s) in offs.iter_mut().zip(strides) {
        *o += idx
            .iter()
            .zip(s)
            .map(|(&i, &s)| i as isize * s)
            .sum::<isize>();
    }
    let mut pos = start;
    let end = start + len;
    while pos < end {
        let take = (inner - idx[nd - 1]).min(end - pos);
        run(pos, offs, take);
        pos += take;
        if pos >= end {
            break;
        }
        // Step past the run: carry into the outer axes.
        for (o, s) in offs.iter_mut().zip(strides) {
            *o += take as isize * s[nd - 1];
        }
        idx[nd - 1] += take;
        let mut k = nd - 1;
        while idx[k] == shape[k] && k > 0 {
            for (o, s) in offs.iter_mut().zip(strides) {
                *o -= shape[k] as isize * s[k];
                *o += s[k - 1];
            }
            idx[k] = 0;
            idx[k - 1] += 1;
            k -= 1;
        }
    }
}

/// A new vector of the elements of `src` at `offset + idx . strides` for every index of `shape`
/// (merged), in C order.
pub(super) fn gather<T: Copy + Send + Sync>(
    src: &[T],
    offset: usize,
    shape: &[usize],
    strides: &[isize],
) -> Result<Vec<T>> {
    if let Some(plan) = tile_plan(shape, strides, &c_strides(shape)) {
        return gather_tiled(src, offset, strides, plan);
    }
    let n: usize = shape.iter().product();
    let mut v = alloc_uninit::<T>(n)?;
    let st = [strides.to_vec()];
    let inner = strides[strides.len() - 1];
    v.spare_capacity_mut()[..n]
        .par_chunks_mut(CHUNK)
        .enumerate()
        .for_each(|(c, out)| {
            let start = c * CHUNK;
            walk(
                shape,
                &st,
                [offset as isize],
                start,
                out.len(),
                |pos, [o], len| {
                    let dst = &mut out[pos - start..pos - start + len];
                    if inner == 1 {
                        let o = o as usize;
                        for (d, s) in dst.iter_mut().zip(&src[o..o + len]) {
                            d.write(*s);
                        }
                    } else {
                        for (j, d) in dst.iter_mut().enumerate() {
                            d.write(src[(o + j as isize * inner) as usize]);
                        }
                    }
                },
            );
        });
    // SAFETY: the chunks above cover the first `n` slots, each written once.
    unsafe { v.set_len(n) };
    Ok(v)
}

/// Rows and columns of a tile of [`gather_tiled`] (of `f64`: 16 KiB, well inside L1).
const TILE: (usize, usize) = (32, 64);

/// [`gather`] of a (batched) transpose (see `tile_plan`): the output in tasks of [`TILE`]`.0`
/// rows, each walked in tiles of [`TILE`]`.1` columns, reading the source along its contiguous
/// axis inside a tile instead of striding through all of it.
fn gather_tiled<T: Copy + Send + Sync>(
    src: &[T],
    offset: usize,
    strides: &[isize],
    plan: TilePlan,
) -> Result<Vec<T>> {
    let [nb, nr, nc] = plan.len;
    let [ab, ar, ac] = plan.axis;
    let n = nb * nr * nc;
    let sb = if ab == usize::MAX { 0 } else { strides[ab] };
    let sc = strides[ac];
    // Output rows `q` (of `nc` elements) enumerate (batch, row) in the output's axis order.
    let batch_outer = ab != usize::MAX && ab < ar;
    let mut v = alloc_uninit::<T>(n)?;
    let (tr, tc) = TILE;
    v.spare_capacity_mut()[..n]
        .par_chunks_mut(tr * nc)
        .enumerate()
        .for_each(|(k, out)| {
            let rows = out.len() / nc;
            let base: Vec<isize> = (0..rows)
                .map(|j| {
                    let q = k * tr + j;
                    let (b, r) = if batch_outer {
                        (q / nr, q % nr)
                    } else {
                        (q % nb, q / nb)
                    };
                    offset as isize + b as isize * sb + r as isize
                })
                .collect();
            for c0 in (0..nc).step_by(tc) {
                for c in c0..(c0 + tc).min(nc) {
                    let col = c as isize * sc;
                    for (j, &b) in base.iter().enumerate() {
                        out[j * nc + c].write(src[(b + col) as usize]);
                    }
                }
            }
        });
    // SAFETY: the tasks above cover the first `n` slots, each written once.
    unsafe { v.set_len(n) };
    Ok(v)
}

/// Writes the elements of `src` (at `src_offset + idx . src_strides`) into `dst` at
/// `dst_offset + idx . dst_strides` for every index of `shape` (merged; the destination's
/// positions must be distinct).
pub(super) fn scatter<T: Copy + Send + Sync>(
    src: &[T],
    src_offset: usize,
    src_strides: &[isize],
    dst: &mut [T],
    dst_offset: usize,
    dst_strides: &[isize],
    shape: &[usize],
) {
    let n: usize = shape.iter().product();
    let st = [src_strides.to_vec(), dst_strides.to_vec()];
    let (si, di) = (src_strides[shape.len() - 1], dst_strides[shape.len() - 1]);
    // Sequential: the destination is written through computed offsets (the callers' blocks
    // are large and contiguous along their innermost axis, where this is a slice copy).
    walk(
        shape,
        &st,
        [src_offset as isize, dst_offset as isize],
        0,
        n,
        |_, [s, d], len| {
            if si == 1 && di == 1 {
                let (s, d) = (s as usize, d as usize);
                dst[d..d + len].copy_from_slice(&src[s..s + len]);
            } else {
                for j in 0..len as isize {
                    dst[(d + j * di) as usize] = src[(s + j * si) as usize];
                }
            }
        },
    );
}

/// A new vector of `f(a[..], b[..])` over `shape` (merged), each operand read with its own
/// offset and strides (0 where broadcast), in C order.
#[allow(clippy::too_many_arguments)]
pub(super) fn zip<A: Copy + Sync, B: Copy + Sync, R: Send>(
    a: &[A],
    a_offset: usize,
    a_strides: &[isize],
    b: &[B],
    b_offset: usize,
    b_strides: &[isize],
    shape: &[usize],
    f: impl Fn(A, B) -> R + Sync,
) -> Result<Vec<R>> {
    let n: usize = shape.iter().product();
    let mut v = alloc_uninit::<R>(n)?;
    let st = [a_strides.to_vec(), b_strides.to_vec()];
    let last = shape.len() - 1;
    let (sa, sb) = (a_strides[last], b_strides[last]);
    v.spare_capacity_mut()[..n]
        .par_chunks_mut(CHUNK)
        .enumerate()
        .for_each(|(c, out)| {
            let start = c * CHUNK;
            walk(
                shape,
                &st,
                [a_offset as isize, b_offset as isize],
                start,
                out.len(),
                |pos, [oa, ob], len| {
                    let dst = &mut out[pos - start..pos - start + len];
                    match (sa, sb) {
                        (1, 1) => {
                            let (oa, ob) = (oa as usize, ob as usize);
                            for ((d, &x), &y) in
                                dst.iter_mut().zip(&a[oa..oa + len]).zip(&b[ob..ob + len])
                            {
                                d.write(f(x, y));
                            }
                        }
                        (1, 0) => {
                            let (oa, y) = (oa as usize, b[ob as usize]);
                            for (d, &x) in dst.iter_mut().zip(&a[oa..oa + len]) {
                                d.write(f(x, y));
                            }
                        }
                        (0, 1) => {
                            let (x, ob) = (a[oa as usize], ob as usize);
                            for (d, &y) in dst.iter_mut().zip(&b[ob..ob + len]) {
                                d.write(f(x, y));
                            }
                        }
                        _ => {
                            for (j, d) in dst.iter_mut().enumerate() {
                                let j = j as isize;
                                d.write(f(a[(oa + j * sa) as usize], b[(ob + j * sb) as usize]));
                            }
                        }
                    }
                },
            );
        });
    // SAFETY: the chunks above cover the first `n` slots, each written once.
    unsafe { v.set_len(n) };
    Ok(v)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn walks_cross_axes_and_chunks() {
        // A 3 x 5 transpose read of a 5 x 3 buffer, started mid-row.
        let src: Vec<u32> = (0..15).collect();
        let got = gather(&src, 0, &[3, 5], &[1, 3]).unwrap();
        let expected: Vec<u32> = (0..3)
            .flat_map(|r| (0..5).map(move |c| c * 3 + r))
            .collect();
        assert_eq!(got, expected);
        let mut seen = Vec::new();
        walk(&[3, 5], &[vec![1, 3]], [0], 7, 6, |p, [o], l| {
            seen.push((p, o, l))
        });
        assert_eq!(seen, vec![(7, 7, 3), (10, 2, 3)]);
        // Larger than one chunk, reversed.
        let n = CHUNK * 2 + 17;
        let src: Vec<u64> = (0..n as u64).collect();
        let got = gather(&src, n - 1, &[n], &[-1]).unwrap();
        assert!(got.iter().zip(src.iter().rev()).all(|(a, b)| a == b));
        // Tiled transposes, batched with the batch axis outside and inside, across tile edges.
        let (r, c) = (70, 45);
        let src: Vec<u32> = (0..(r * c * 3) as u32).collect();
        let got = gather(&src, 0, &[c, r], &[1, c as isize]).unwrap();
        let expected: Vec<u32> = (0..c)
            .flat_map(|j| (0..r).map(move |i| (i * c + j) as u32))
            .collect();
        assert_eq!(got, expected);
        let got = gather(&src, 0, &[3, c, r], &[(r * c) as isize, 1, c as isize]).unwrap();
        let expected: Vec<u32> = (0..3)
            .flat_map(|b| {
                (0..c).flat_map(move |j| (0..r).map(move |i| (b * r * c + i * c + j) as u32))
            })
            .collect();
        assert_eq!(got, expected);
        let got = gather(&src, 0, &[c, 3, r], &[1, (r * c) as isize, c as isize]).unwrap();
        let expected: Vec<u32> = (0..c)
            .flat_map(|j| {
                (0..3).flat_map(move |b| (0..r).map(move |i| (b * r * c + i * c + j) as u32))
            })
            .collect();
        assert_eq!(got, expected);
        let mut dst = vec![0u64; 6];
        scatter(&[1, 2, 3], 0, &[1], &mut dst, 1, &[2], &[3]);
        assert_eq!(dst, vec![0, 1, 0, 2, 0, 3]);
        let z = zip(
            &[1, 2, 3],
            0,
            &[1, 0],
            &[10, 20],
            0,
            &[0, 1],
            &[3, 2],
            |x: i32, y: i32| x + y,
        )
        .unwrap();
        assert_eq!(z, vec![11, 21, 12, 22, 13, 23]);
    }
}
