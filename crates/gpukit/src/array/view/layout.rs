//! Strided layouts: a shape, a stride per axis (in elements, negative for reversed axes, 0 for
//! broadcast axes) and the offset of the first element. Pure index arithmetic, no buffers: what
//! transposes, slices, reshapes and broadcasts do to a view, and how a strided loop is reduced to
//! as few axes as possible before a kernel runs it.

use crate::error::{Error, Result};
use ndarray::SliceInfoElem;

/// Where the elements of a view sit in its base buffer: element `[i0, i1, ...]` is at
/// `offset + i0 * strides[0] + i1 * strides[1] + ...`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Layout {
    /// The dimensions.
    pub(crate) shape: Vec<usize>,
    /// Elements between neighbours along each axis.
    pub(crate) strides: Vec<isize>,
    /// Index of element `[0, 0, ...]` in the buffer.
    pub(crate) offset: usize,
}

/// C-order strides of `shape` (the last axis has stride 1).
pub(crate) fn c_strides(shape: &[usize]) -> Vec<isize> {
    let mut strides = vec![0isize; shape.len()];
    let mut s = 1isize;
    for (k, &d) in shape.iter().enumerate().rev() {
        strides[k] = s;
        s = s.wrapping_mul(d.max(1) as isize);
    }
    strides
}

/// `axis` (negative counts from the end, as in NumPy) as an index into `ndim` axes.
pub(crate) fn normalize_axis(axis: isize, ndim: usize, what: &str) -> Result<usize> {
    let n = ndim as isize;
    let a = if axis < 0 { axis + n } else { axis };
    if a < 0 || a >= n {
        return Err(Error::Shape(format!(
            "{what}: axis {axis} is out of range for an array of {ndim} dimension(s)"
        )));
    }
    Ok(a as usize)
}

/// The shape two shapes broadcast to (NumPy's rules: aligned at the last axis, each pair of
/// lengths equal or one of them 1), or an error naming both shapes.
pub(crate) fn broadcast_shapes(a: &[usize], b: &[usize], what: &str) -> Result<Vec<usize>> {
    let n = a.len().max(b.len());
    let mut out = vec![0usize; n];
    for k in 0..n {
        let x = if k + a.len() >= n {
            a[k + a.len() - n]
        } else {
            1
        };
        let y = if k + b.len() >= n {
            b[k + b.len() - n]
        } else {
            1
        };
        out[k] = match (x, y) {
            (x, y) if x == y => x,
            (1, y) => y,
            (x, 1) => x,
            _ => {
                return Err(Error::Shape(format!(
                    "operands of `{what}` with shapes {a:?} and {b:?} cannot be broadcast together \
                     (axis {k} of the result: {x} vs {y})"
                )))
            }
        };
    }
    Ok(out)
}

impl Layout {
    /// The C-contiguous layout of `shape` at offset 0.
    pub(crate) fn contiguous(shape: &[usize]) -> Layout {
        Layout {
            shape: shape.to_vec(),
            strides: c_strides(shape),
            offset: 0,
        }
    }

    /// Number of elements.
    pub(crate) fn size(&self) -> usize {
        self.shape.iter().product()
    }

    /// Whether the elements are in C order with no gaps (axes of length 1 may have any stride).
    pub(crate) fn is_c_contiguous(&self) -> bool {
        if self.size() == 0 {
            return true;
        }
        let mut expected = 1isize;
        for (&d, &s) in self.shape.iter().zip(&self.strides).rev() {
            if d != 1 && s != expected {
                return false;
            }
            expected *= d as isize;
        }
        true
    }

    /// The axes reordered: axis `k` of the result is axis `axes[k]` of `self`.
    pub(crate) fn permute(&self, axes: &[usize]) -> Result<Layout> {
        let n = self.shape.len();
        let mut seen = vec![false; n];
        let valid = axes.len() == n
            && axes
                .iter()
                .all(|&a| a < n && !std::mem::replace(&mut seen[a], true));
        if !valid {
            return Err(Error::Shape(format!(
                "permute: axes {axes:?} are not a permutation of the {n} axes of shape {:?}",
                self.shape
            )));
        }
        Ok(Layout {
            shape: axes.iter().map(|&a| self.shape[a]).collect(),
            strides: axes.iter().map(|&a| self.strides[a]).collect(),
            offset: self.offset,
        })
    }

    /// The axes in reverse order (NumPy's `.T`).
    pub(crate) fn reversed(&self) -> Layout {
        Layout {
            shape: self.shape.iter().rev().copied().collect(),
            strides: self.strides.iter().rev().copied().collect(),
            offset: self.offset,
        }
    }

    /// The layout selected by ndarray-style slice elements (`s![..]`): ranges with steps
    /// (negative ranges count from the end; out-of-range ends are clamped as NumPy does; a
    /// negative step walks the range from its end, as ndarray's `s!` does), single indices
    /// (which drop their axis; out of range is an error) and `NewAxis`. Axes not named keep
    /// their full length.
    pub(crate) fn slice(&self, elems: &[SliceInfoElem]) -> Result<Layout> {
        let ndim = self.shape.len();
        let consumed = elems
            .iter()
            .filter(|e| !matches!(e, SliceInfoElem::NewAxis))
            .count();
        if consumed > ndim {
            return Err(Error::Shape(format!(
                "slice: {consumed} indices for an array of shape {:?} ({ndim} dimension(s))",
                self.shape
            )));
        }
        let mut shape = Vec::with_capacity(ndim + elems.len());
        let mut strides = Vec::with_capacity(ndim + elems.len());
        let mut offset = self.offset as isize;
        let mut axis = 0;
        for e in elems {
            match *e {
                SliceInfoElem::NewAxis => {
                    shape.push(1);
                    strides.push(0);
                }
                SliceInfoElem::Index(i) => {
                    let len = self.shape[axis] as isize;
                    let j = if i < 0 { i + len } else { i };
                    if j < 0 || j >= len {
                        return Err(Error::Shape(format!(
                            "slice: index {i} is out of range for axis {axis} of length {len} \
                             (shape {:?})",
                            self.shape
                        )));
                    }
                    offset += j * self.strides[axis];
                    axis += 1;
                }
                SliceInfoElem::Slice { start, end, step } => {
                    if step == 0 {
                        return Err(Error::Shape(format!(
                            "slice: step 0 on axis {axis} (shape {:?})",
                            self.shape
                        )));
                    }
                    let len = self.shape[axis] as isize;
                    let clamp = |i: isize| (if i < 0 { i + len } else { i }).clamp(0, len);
                    let s = clamp(start);
                    let e = clamp(end.unwrap_or(len)).max(s);
                    let step_len = step.unsigned_abs() as isize;
                    let count = (e - s + step_len - 1) / step_len;
                    let stride = self.strides[axis];
                    if count > 0 {
                        let first = if step > 0 { s } else { e - 1 };
                        offset += first * stride;
                    }
                    shape.push(count as usize);
                    strides.push(stride * step);
                    axis += 1;
                }
            }
        }
        shape.extend_from_slice(&self.shape[axis..]);
        strides.extend_from_slice(&self.strides[axis..]);
        Ok(Layout {
            shape,
            strides,
            offset: offset.max(0) as usize,
        })
    }

    /// The same elements in C order with a new shape (same size), without moving any: `None`
    /// when the strides do not allow it (then the elements must be copied first). This is
    /// NumPy's no-copy reshape: axes that are merged must be contiguous with each other.
    pub(crate) fn reshaped(&self, shape: &[usize]) -> Option<Layout> {
        let size = self.size();
        if shape.iter().product::<usize>() != size {
            return None;
        }
        if size == 0 || self.is_c_contiguous() {
            return Some(Layout {
                shape: shape.to_vec(),
                strides: c_strides(shape),
                offset: self.offset,
            });
        }
        // Only axes longer than 1 matter for the old layout.
        let (od, os): (Vec<usize>, Vec<isize>) = self
            .shape
            .iter()
            .zip(&self.strides)
            .filter(|(&d, _)| d != 1)
            .map(|(&d, &s)| (d, s))
            .unzip();
        let nd = shape;
        let mut ns = vec![1isize; nd.len()];
        let (mut oi, mut oj, mut ni, mut nj) = (0usize, 1usize, 0usize, 1usize);
        while ni < nd.len() && oi < od.len() {
            let mut np = nd[ni];
            let mut op = od[oi];
            while np != op {
                if np < op {
                    np *= *nd.get(nj)?;
                    nj += 1;
                } else {
                    op *= *od.get(oj)?;
                    oj += 1;
                }
            }
            // The old axes oi..oj become the new axes ni..nj: they must be contiguous together.
            for k in oi..oj - 1 {
                if os[k] != od[k + 1] as isize * os[k + 1] {
                    return None;
                }
            }
            ns[nj - 1] = os[oj - 1];
            for k in (ni + 1..nj).rev() {
                ns[k - 1] = ns[k] * nd[k] as isize;
            }
            ni = nj;
            nj += 1;
            oi = oj;
            oj += 1;
        }
        // Trailing new axes are of length 1: any stride will do.
        Some(Layout {
            shape: nd.to_vec(),
            strides: ns,
            offset: self.offset,
        })
    }

    /// The layout broadcast to `shape` (NumPy's `broadcast_to`): new leading axes and axes of
    /// length 1 stretched to `shape` get stride 0.
    pub(crate) fn broadcast_to(&self, shape: &[usize]) -> Result<Layout> {
        let n = shape.len();
        let m = self.shape.len();
        let fail = || {
            Error::Shape(format!(
                "cannot broadcast an array of shape {:?} to shape {shape:?}",
                self.shape
            ))
        };
        if m > n {
            return Err(fail());
        }
        let mut strides = vec![0isize; n];
        for k in 0..m {
            let (d, t) = (self.shape[k], shape[n - m + k]);
            strides[n - m + k] = if d == t {
                self.strides[k]
            } else if d == 1 {
                0
            } else {
                return Err(fail());
            };
        }
        Ok(Layout {
            shape: shape.to_vec(),
            strides,
            offset: self.offset,
        })
    }

    /// Without the axes of length 1 (`axis: None`), or without the one axis `axis`, which must
    /// have length 1.
    pub(crate) fn squeezed(&self, axis: Option<usize>) -> Result<Layout> {
        if let Some(a) = axis {
            if self.shape[a] != 1 {
                return Err(Error::Shape(format!(
                    "squeeze: axis {a} of shape {:?} has length {}, not 1",
                    self.shape, self.shape[a]
                )));
            }
        }
        let keep = |k: usize| match axis {
            Some(a) => k != a,
            None => self.shape[k] != 1,
        };
        let ks: Vec<usize> = (0..self.shape.len()).filter(|&k| keep(k)).collect();
        Ok(Layout {
            shape: ks.iter().map(|&k| self.shape[k]).collect(),
            strides: ks.iter().map(|&k| self.strides[k]).collect(),
            offset: self.offset,
        })
    }

    /// With a new axis of length 1 at position `axis` (`0..=ndim`).
    pub(crate) fn with_axis(&self, axis: usize) -> Layout {
        let mut l = self.clone();
        l.shape.insert(axis, 1);
        l.strides.insert(axis, 0);
        l
    }
}

/// A loop over `shape` reading several operands with their own strides, reduced to as few axes
/// as possible: axes of length 1 are dropped and neighbouring axes merged where every operand
/// steps through them as through one axis. Returns the merged shape (at least one axis) and each
/// operand's strides for it. `shape` must not be empty of elements (callers return early).
pub(crate) fn coalesce<const K: usize>(
    shape: &[usize],
    strides: [&[isize]; K],
) -> (Vec<usize>, [Vec<isize>; K]) {
    let mut out_shape: Vec<usize> = Vec::with_capacity(shape.len());
    let mut out: [Vec<isize>; K] = std::array::from_fn(|_| Vec::with_capacity(shape.len()));
    for (k, &d) in shape.iter().enumerate() {
        if d == 1 {
            continue;
        }
        let merge = match out_shape.last() {
            Some(_) => (0..K).all(|o| {
                let prev = *out[o].last().expect("same length as out_shape");
                prev == strides[o][k] * d as isize
            }),
            None => false,
        };
        if merge {
            let last = out_shape.len() - 1;
            out_shape[last] *= d;
            for o in 0..K {
                let l = out[o].len() - 1;
                out[o][l] = strides[o][k];
            }
        } else {
            out_shape.push(d);
            for o in 0..K {
                out[o].push(strides[o][k]);
            }
        }
    }
    if out_shape.is_empty() {
        out_shape.push(1);
        for o in out.iter_mut() {
            o.push(0);
        }
    }
    (out_shape, out)
}

/// Resolves a requested shape that may hold one `-1` (NumPy: "whatever length makes the sizes
/// match") against `size` elements, or an error naming both.
pub(crate) fn infer_shape(requested: &[isize], size: usize, from: &[usize]) -> Result<Vec<usize>> {
    let fail = |why: &str| {
        Error::Shape(format!(
            "cannot reshape an array of shape {from:?} ({size} elements) to {requested:?}: {why}"
        ))
    };
    let mut unknown = None;
    let mut known = 1usize;
    for (k, &d) in requested.iter().enumerate() {
        if d == -1 {
            if unknown.replace(k).is_some() {
                return Err(fail("only one length can be -1"));
            }
        } else if d < 0 {
            return Err(fail(
                "lengths must be at least 0 (or -1 for one inferred length)",
            ));
        } else {
            known = known
                .checked_mul(d as usize)
                .ok_or_else(|| fail("too many elements"))?;
        }
    }
    let mut shape: Vec<usize> = requested.iter().map(|&d| d.max(0) as usize).collect();
    match unknown {
        Some(k) => {
            if known == 0 || !size.is_multiple_of(known) {
                return Err(fail("the other lengths do not divide the size"));
            }
            shape[k] = size / known;
        }
        None if known != size => return Err(fail("the sizes differ")),
        None => {}
    }
    Ok(shape)
}

#[cfg(test)]
mod tests {
    use super::*;
    use ndarray::s;

    /// Every element index of `l` in C order (the reference for the kernels).
    pub(crate) fn indices(l: &Layout) -> Vec<usize> {
        let n = l.size();
        (0..n)
            .map(|mut i| {
                let mut off = l.offset as isize;
                for (&d, &s) in l.shape.iter().zip(&l.strides).rev() {
                    off += (i % d) as isize * s;
                    i /= d;
                }
                off as usize
            })
            .collect()
    }

    #[test]
    fn contiguous_and_permuted() {
        let l = Layout::contiguous(&[2, 3, 4]);
        assert_eq!(l.strides, vec![12, 4, 1]);
        assert!(l.is_c_contiguous());
        let t = l.reversed();
        assert_eq!(
            (t.shape.clone(), t.strides.clone()),
            (vec![4, 3, 2], vec![1, 4, 12])
        );
        assert!(!t.is_c_contiguous());
        let p = l.permute(&[1, 0, 2]).unwrap();
        assert_eq!(p.shape, vec![3, 2, 4]);
        assert!(l.permute(&[0, 0, 1]).is_err());
        assert!(l.permute(&[0, 1]).is_err());
        assert!(l.permute(&[0, 1, 3]).is_err());
        assert!(Layout::contiguous(&[0, 5]).is_c_contiguous());
    }

    #[test]
    fn slices_match_ndarray() {
        let a = ndarray::Array::from_iter(0..60usize)
            .into_shape_with_order((3, 4, 5))
            .unwrap();
        let l = Layout::contiguous(&[3, 4, 5]);
        let cases: Vec<ndarray::SliceInfo<Vec<SliceInfoElem>, ndarray::IxDyn, ndarray::IxDyn>> = vec![
            s![.., 1..3, ..;2].to_vec().try_into().unwrap(),
            s![..;-1, .., 4].to_vec().try_into().unwrap(),
            s![1, ..;-2, 1..4;-1].to_vec().try_into().unwrap(),
            s![-2.., ndarray::NewAxis, -3..-1, ..]
                .to_vec()
                .try_into()
                .unwrap(),
            s![2..2, .., ..].to_vec().try_into().unwrap(),
        ];
        for info in cases {
            let v = l.slice(info.as_ref()).unwrap();
            let expected: Vec<usize> = a
                .view()
                .into_dyn()
                .slice(info.clone())
                .iter()
                .copied()
                .collect();
            let got = indices(&v);
            assert_eq!(got, expected, "{info:?}");
            let view = a.view().into_dyn();
            assert_eq!(v.shape, view.slice(info).shape());
        }
        // NumPy-style clamping of range ends, errors for indices and zero steps.
        let v = l.slice(s![0..100, .., ..].as_ref()).unwrap();
        assert_eq!(v.shape, vec![3, 4, 5]);
        assert!(l.slice(s![3, .., ..].as_ref()).is_err());
        assert!(l.slice(s![-4, .., ..].as_ref()).is_err());
        assert!(l.slice(s![.., .., .., 0].as_ref()).is_err());
        let zero_step = [SliceInfoElem::Slice {
            start: 0,
            end: None,
            step: 0,
        }];
        assert!(l.slice(&zero_step).is_err());
    }

    #[test]
    fn reshape_without_copy_where_strides_allow() {
        let l = Layout::contiguous(&[4, 6]);
        let r = l.reshaped(&[2, 2, 3, 2]).unwrap();
        assert_eq!(indices(&r), (0..24).collect::<Vec<_>>());
        // A column slice: rows stay separate, so splitting rows works, merging them does not.
        let cols = l.slice(s![.., 0..3].as_ref()).unwrap();
        let split = cols.reshaped(&[2, 2, 3]).unwrap();
        assert_eq!(indices(&split), indices(&cols));
        assert!(cols.reshaped(&[12]).is_none());
        let t = l.reversed();
        assert!(t.reshaped(&[24]).is_none());
        let t2 = t.reshaped(&[3, 2, 4]).unwrap();
        assert_eq!(indices(&t2), indices(&t));
        let with_ones = t.reshaped(&[1, 6, 1, 4, 1]).unwrap();
        assert_eq!(indices(&with_ones), indices(&t));
        assert!(l.reshaped(&[5, 5]).is_none());
        let empty = Layout::contiguous(&[0, 3]).reshaped(&[3, 0, 7]).unwrap();
        assert_eq!(empty.size(), 0);
    }

    #[test]
    fn broadcasting_rules() {
        assert_eq!(broadcast_shapes(&[3, 1], &[4], "+").unwrap(), vec![3, 4]);
        assert_eq!(broadcast_shapes(&[], &[2, 3], "+").unwrap(), vec![2, 3]);
        assert_eq!(broadcast_shapes(&[0, 1], &[1, 5], "+").unwrap(), vec![0, 5]);
        let e = broadcast_shapes(&[3, 2], &[3], "+")
            .unwrap_err()
            .to_string();
        assert!(e.contains("[3, 2]") && e.contains("[3]"), "{e}");
        let l = Layout::contiguous(&[3, 1])
            .broadcast_to(&[2, 3, 4])
            .unwrap();
        assert_eq!(l.strides, vec![0, 1, 0]);
        assert!(Layout::contiguous(&[3]).broadcast_to(&[4]).is_err());
        assert!(Layout::contiguous(&[1, 3]).broadcast_to(&[3]).is_err());
    }

    #[test]
    fn squeeze_and_new_axes() {
        let l = Layout::contiguous(&[1, 3, 1, 2]);
        assert_eq!(l.squeezed(None).unwrap().shape, vec![3, 2]);
        assert_eq!(l.squeezed(Some(2)).unwrap().shape, vec![1, 3, 2]);
        assert!(l.squeezed(Some(1)).is_err());
        assert_eq!(l.with_axis(4).shape, vec![1, 3, 1, 2, 1]);
        assert_eq!(normalize_axis(-1, 3, "x").unwrap(), 2);
        assert!(normalize_axis(3, 3, "x").is_err());
        assert!(normalize_axis(-4, 3, "x").is_err());
    }

    #[test]
    fn coalescing_merges_what_it_can() {
        let (shape, [s]) = coalesce(&[2, 3, 4], [&[12, 4, 1]]);
        assert_eq!((shape, s), (vec![24], vec![1]));
        let (shape, [a, b]) = coalesce(&[2, 3, 4], [&[12, 4, 1], &[0, 4, 1]]);
        assert_eq!((shape, a, b), (vec![2, 12], vec![12, 1], vec![0, 1]));
        let (shape, [s]) = coalesce(&[4, 1, 6], [&[1, 0, 4]]);
        assert_eq!((shape, s), (vec![4, 6], vec![1, 4]));
        let (shape, [s]) = coalesce(&[1, 1], [&[0, 0]]);
        assert_eq!((shape, s), (vec![1], vec![0]));
    }

    #[test]
    fn inferred_lengths() {
        assert_eq!(
            infer_shape(&[10, -1, 5], 100, &[100]).unwrap(),
            vec![10, 2, 5]
        );
        assert_eq!(infer_shape(&[-1], 7, &[7]).unwrap(), vec![7]);
        assert!(infer_shape(&[0, -1], 0, &[0])
            .unwrap_err()
            .to_string()
            .contains("divide"));
        assert!(infer_shape(&[-1, -1], 4, &[4]).is_err());
        assert!(infer_shape(&[3, -1], 4, &[4]).is_err());
        assert!(infer_shape(&[-2, 2], 4, &[4]).is_err());
        assert!(infer_shape(&[3, 3], 4, &[4]).is_err());
        assert_eq!(infer_shape(&[2, 2], 4, &[4]).unwrap(), vec![2, 2]);
        let l = Layout::contiguous(&[2, 3]);
        let r = l.slice(s![..;-1, ..;-1].as_ref()).unwrap();
        assert_eq!(indices(&r), vec![5, 4, 3, 2, 1, 0]);
    }
}
