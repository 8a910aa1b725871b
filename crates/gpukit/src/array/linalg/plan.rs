//! The shape rules of NumPy's `matmul`, worked out once per call: the output shape, the matrix
//! sizes `m`, `k`, `n`, and the batches as runs of equally spaced matrices (what one strided
//! batched GEMM call computes).

use crate::error::{Error, Result};

/// Equally spaced batches: `count` products whose operands start at `a + i·stride_a` and
/// `b + i·stride_b` elements and whose results start at `c + i·m·n` (a stride of 0: the same
/// matrix for every batch, a broadcast).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Run {
    pub(crate) a: usize,
    pub(crate) b: usize,
    pub(crate) c: usize,
    pub(crate) count: usize,
    pub(crate) stride_a: usize,
    pub(crate) stride_b: usize,
}

/// How `a @ b` is computed: C-order `(m, k) · (k, n)` products over broadcast batches.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Plan {
    /// The result's shape (NumPy's: a 1-D operand's added dimension is dropped again).
    pub(crate) out_shape: Vec<usize>,
    pub(crate) m: usize,
    pub(crate) k: usize,
    pub(crate) n: usize,
    /// Number of products (the size of the broadcast batch shape; 1 without batch dimensions).
    pub(crate) batches: usize,
    /// The batches, grouped so that each run is one strided batched GEMM.
    pub(crate) runs: Vec<Run>,
}

/// Shape as NumPy prints it: `(3, 4)`, `(5,)`, `()`.
pub(crate) fn fmt_shape(shape: &[usize]) -> String {
    match shape {
        [d] => format!("({d},)"),
        _ => format!(
            "({})",
            shape
                .iter()
                .map(usize::to_string)
                .collect::<Vec<_>>()
                .join(", ")
        ),
    }
}

impl Plan {
    /// The plan of `what(a, b)` for operands of shapes `a` and `b`, or a shape error naming both.
    ///
    /// NumPy's rules: a 1-D `a` is a row `(1, k)` and a 1-D `b` a column `(k, 1)`, and that
    /// dimension is not in the result; dimensions before the last two are batch dimensions and
    /// broadcast against each other (a missing or size-1 dimension repeats the other operand's).
    pub(crate) fn new(what: &str, a: &[usize], b: &[usize]) -> Result<Plan> {
        let both = || format!("{what}: {} @ {}", fmt_shape(a), fmt_shape(b));
        if a.is_empty() || b.is_empty() {
            return Err(Error::Shape(format!(
                "{}: a 0-d operand has no matrix dimensions (multiply by a scalar with `*`)",
                both()
            )));
        }
        let (a_batch, m, k) = match a {
            [k] => (&a[..0], 1, *k),
            [rest @ .., m, k] => (rest, *m, *k),
            [] => unreachable!("0-d operands are refused above"),
        };
        let (b_batch, kb, n) = match b {
            [k] => (&b[..0], *k, 1),
            [rest @ .., k, n] => (rest, *k, *n),
            [] => unreachable!("0-d operands are refused above"),
        };
        if k != kb {
            return Err(Error::Shape(format!(
                "{}: inner dimensions {k} and {kb} differ",
                both()
            )));
        }
        let len = a_batch.len().max(b_batch.len());
        let pad = |s: &[usize]| {
            let mut p = vec![1; len - s.len()];
            p.extend_from_slice(s);
            p
        };
        let (pa, pb) = (pad(a_batch), pad(b_batch));
        let mut batch = Vec::with_capacity(len);
        for (i, (&x, &y)) in pa.iter().zip(&pb).enumerate() {
            batch.push(match (x, y) {
                _ if x == y => x,
                (1, _) => y,
                (_, 1) => x,
                _ => {
                    return Err(Error::Shape(format!(
                        "{}: batch dimensions {} and {} do not broadcast (dimension {i} of the \
                         batch shape: {x} and {y})",
                        both(),
                        fmt_shape(a_batch),
                        fmt_shape(b_batch)
                    )))
                }
            });
        }
        let mut out_shape = batch.clone();
        if a.len() > 1 {
            out_shape.push(m);
        }
        if b.len() > 1 {
            out_shape.push(n);
        }
        let overflow = || Error::Shape(format!("{}: the result has too many elements", both()));
        let batches = batch
            .iter()
            .try_fold(1usize, |acc, &d| acc.checked_mul(d))
            .ok_or_else(overflow)?;
        m.checked_mul(n)
            .and_then(|mn| mn.checked_mul(batches))
            .ok_or_else(overflow)?;
        let runs = runs(&batch, &pa, &pb, m * k, k * n, m * n);
        Ok(Plan {
            out_shape,
            m,
            k,
            n,
            batches,
            runs,
        })
    }

    /// Whether the result has no elements (nothing to compute).
    pub(crate) fn is_empty(&self) -> bool {
        self.batches == 0 || self.m == 0 || self.n == 0
    }

    /// Every product as `(a, b, c)` element offsets of its operands and result, in batch order.
    pub(crate) fn products(&self) -> impl Iterator<Item = (usize, usize, usize)> + '_ {
        let mn = self.m * self.n;
        self.runs.iter().flat_map(move |r| {
            (0..r.count).map(move |i| (r.a + i * r.stride_a, r.b + i * r.stride_b, r.c + i * mn))
        })
    }
}

/// Element strides, per batch dimension, of an operand of padded batch shape `p` (matrices of
/// `mat` elements) inside a result of batch shape `batch`: 0 where the operand is broadcast.
fn batch_strides(batch: &[usize], p: &[usize], mat: usize) -> Vec<usize> {
    let mut strides = vec![0; p.len()];
    let mut step = mat;
    for i in (0..p.len()).rev() {
        strides[i] = if p[i] == 1 && batch[i] != 1 { 0 } else { step };
        step *= p[i];
    }
    strides
}

/// The batches as runs: one run when each operand is either whole or one matrix repeated (the
/// common cases, one GEMM call), else one run per index of all batch dimensions but the last.
fn runs(
    batch: &[usize],
    pa: &[usize],
    pb: &[usize],
    amat: usize,
    bmat: usize,
    cmat: usize,
) -> Vec<Run> {
    let count: usize = batch.iter().product();
    if count == 0 {
        return Vec::new();
    }
    let sa = batch_strides(batch, pa, amat);
    let sb = batch_strides(batch, pb, bmat);
    // Whole (every stride set, so offsets are i·mat) or repeated (every stride 0): linear.
    let linear = |s: &[usize], p: &[usize], mat: usize| {
        if s.iter().all(|&x| x == 0) {
            Some(0)
        } else if p == batch {
            Some(mat)
        } else {
            None
        }
    };
    if let (Some(stride_a), Some(stride_b)) = (linear(&sa, pa, amat), linear(&sb, pb, bmat)) {
        return vec![Run {
            a: 0,
            b: 0,
            c: 0,
            count,
            stride_a,
            stride_b,
        }];
    }
    // Mixed broadcasts, e.g. (2, 1, m, k) @ (3, k, n): along the last batch dimension each
    // operand still moves by a fixed stride.
    let last = batch.len() - 1;
    let (inner, outer) = (batch[last], count / batch[last]);
    let mut out = Vec::with_capacity(outer);
    let mut idx = vec![0usize; last];
    for o in 0..outer {
        let a = idx.iter().zip(&sa).map(|(i, s)| i * s).sum();
        let b = idx.iter().zip(&sb).map(|(i, s)| i * s).sum();
        out.push(Run {
            a,
            b,
            c: o * inner * cmat,
            count: inner,
            stride_a: sa[last],
            stride_b: sb[last],
        });
        for d in (0..last).rev() {
            idx[d] += 1;
            if idx[d] < batch[d] {
                break;
            }
            idx[d] = 0;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plan(a: &[usize], b: &[usize]) -> Plan {
        Plan::new("matmul", a, b).unwrap()
    }

    #[test]
    fn shapes_follow_numpy() {
        assert_eq!(plan(&[4], &[4]).out_shape, Vec::<usize>::new());
        assert_eq!(plan(&[3, 4], &[4, 2]).out_shape, vec![3, 2]);
        assert_eq!(plan(&[3, 4], &[4]).out_shape, vec![3]);
        assert_eq!(plan(&[4], &[4, 2]).out_shape, vec![2]);
        assert_eq!(plan(&[5, 3, 4], &[4, 2]).out_shape, vec![5, 3, 2]);
        assert_eq!(plan(&[4], &[5, 4, 2]).out_shape, vec![5, 2]);
        assert_eq!(plan(&[2, 1, 3, 4], &[5, 4, 2]).out_shape, vec![2, 5, 3, 2]);
        assert_eq!(plan(&[0, 3, 4], &[4, 2]).out_shape, vec![0, 3, 2]);
        let p = plan(&[3, 0], &[0, 2]);
        assert_eq!((p.m, p.k, p.n, p.out_shape), (3, 0, 2, vec![3, 2]));
    }

    #[test]
    fn equal_and_repeated_batches_are_one_run() {
        let p = plan(&[5, 3, 4], &[5, 4, 2]);
        assert_eq!(p.runs.len(), 1);
        assert_eq!(
            (p.runs[0].count, p.runs[0].stride_a, p.runs[0].stride_b),
            (5, 12, 8)
        );
        let p = plan(&[5, 3, 4], &[1, 4, 2]);
        assert_eq!((p.runs[0].stride_a, p.runs[0].stride_b), (12, 0));
        let p = plan(&[3, 4], &[2, 5, 4, 2]);
        assert_eq!(p.runs.len(), 1);
        assert_eq!(
            (p.runs[0].count, p.runs[0].stride_a, p.runs[0].stride_b),
            (10, 0, 8)
        );
        assert!(plan(&[0, 3, 4], &[4, 2]).runs.is_empty());
    }

    #[test]
    fn mixed_broadcasts_visit_every_pair() {
        // a: (2, 1), b: (3,) batch shapes -> (2, 3); a index i, b index j.
        let p = plan(&[2, 1, 3, 4], &[3, 4, 5]);
        assert_eq!(p.runs.len(), 2);
        let got: Vec<_> = p.products().collect();
        let mut want = Vec::new();
        for i in 0..2 {
            for j in 0..3 {
                want.push((i * 12, j * 20, (i * 3 + j) * 15));
            }
        }
        assert_eq!(got, want);
    }

    #[test]
    fn errors_name_both_shapes() {
        let e = Plan::new("matmul", &[3, 4], &[5, 2])
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("matmul: (3, 4) @ (5, 2): inner dimensions 4 and 5 differ"),
            "{e}"
        );
        let e = Plan::new("matmul", &[2, 3, 4], &[3, 4, 2])
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("(2, 3, 4) @ (3, 4, 2)") && e.contains("do not broadcast"),
            "{e}"
        );
        let e = Plan::new("dot", &[], &[3]).unwrap_err().to_string();
        assert!(e.contains("dot: () @ (3,)") && e.contains("0-d"), "{e}");
        let e = Plan::new("matmul", &[usize::MAX, 2, 1], &[1, usize::MAX]).unwrap_err();
        assert!(e.to_string().contains("too many elements"), "{e}");
    }
}
