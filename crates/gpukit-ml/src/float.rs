//! The element types models compute in: [`MlFloat`] (`f32`, `f64`) and the types whose rows
//! can be gathered by index ([`Gather`]: the floats and the integer label types). Both traits
//! are sealed; their hidden methods launch the per-type kernels of `kernels/`.

use gpukit::linalg::MatmulElement;
use gpukit::prelude::*;

use crate::kernels::{grid_for, lloyd, rows, stride_grid, topk, vote};

mod sealed {
    pub trait Sealed {}
    impl Sealed for f32 {}
    impl Sealed for f64 {}
    impl Sealed for i32 {}
    impl Sealed for i64 {}
    impl Sealed for u32 {}
    impl Sealed for u64 {}
}

/// Element types whose rows the crate can gather by index (a split's rows, a class's centre):
/// `f32`, `f64`, `i32`, `i64`, `u32`, `u64`.
pub trait Gather: Element + sealed::Sealed {
    /// `out[i, ..] = src[idx[i], ..]` along the first axis, on `src`'s device (`idx` must lie
    /// there too and hold indices below `src.shape()[0]`).
    #[doc(hidden)]
    fn take_rows(src: &Array<Self>, idx: &Array<i64>) -> gpukit::Result<Array<Self>>;
}

macro_rules! impl_gather {
    ($t:ty, $kernel:ident) => {
        impl Gather for $t {
            fn take_rows(src: &Array<$t>, idx: &Array<i64>) -> gpukit::Result<Array<$t>> {
                let d: usize = src.shape().iter().skip(1).product();
                let mut shape = src.shape().to_vec();
                if shape.is_empty() {
                    shape.push(1);
                }
                shape[0] = idx.size();
                let mut out = Array::<$t>::empty_on(shape, &src.device())?;
                if out.size() > 0 {
                    let (b, t) = stride_grid(out.size());
                    launch!(rows::$kernel[b, t](src, d, idx, &mut out))?;
                }
                Ok(out)
            }
        }
    };
}

impl_gather!(f32, take_rows_f32);
impl_gather!(f64, take_rows_f64);
impl_gather!(i32, take_rows_i32);
impl_gather!(i64, take_rows_i64);
impl_gather!(u32, take_rows_u32);
impl_gather!(u64, take_rows_u64);

/// The float types models compute in, `f32` and `f64`: matrix products (cuBLAS or the CPU
/// GEMM) and the crate's kernels exist for both.
pub trait MlFloat: MatmulElement + Gather {
    /// Level 1 of the top-k selection (`kernels::topk`).
    #[doc(hidden)]
    #[allow(clippy::too_many_arguments)]
    fn topk_first(
        g: &Array<Self>,
        a: &Array<Self>,
        b: &Array<Self>,
        k: usize,
        parts: usize,
        out_d: &mut Array<Self>,
        out_i: &mut Array<i64>,
    ) -> gpukit::Result<()>;

    /// Levels 2+ of the top-k selection (`kernels::topk`).
    #[doc(hidden)]
    #[allow(clippy::too_many_arguments)]
    fn topk_merge(
        in_d: &Array<Self>,
        in_i: &Array<i64>,
        m: usize,
        k: usize,
        parts: usize,
        out_d: &mut Array<Self>,
        out_i: &mut Array<i64>,
    ) -> gpukit::Result<()>;

    /// Neighbour votes (`kernels::vote`).
    #[doc(hidden)]
    #[allow(clippy::too_many_arguments)]
    fn vote(
        idx: &Array<i64>,
        dist: &Array<Self>,
        codes: &Array<i64>,
        k: usize,
        n_classes: usize,
        weighted: bool,
        proba: &mut Array<Self>,
        pred: &mut Array<i64>,
    ) -> gpukit::Result<()>;

    /// Neighbour means (`kernels::vote`).
    #[doc(hidden)]
    fn neighbor_mean(
        idx: &Array<i64>,
        dist: &Array<Self>,
        targets: &Array<Self>,
        k: usize,
        weighted: bool,
        out: &mut Array<Self>,
    ) -> gpukit::Result<()>;

    /// Nearest centre per point (`kernels::lloyd`).
    #[doc(hidden)]
    fn assign(
        g: &Array<Self>,
        cn: &Array<Self>,
        xn: &Array<Self>,
        labels: &mut Array<i64>,
        dmin: &mut Array<Self>,
    ) -> gpukit::Result<()>;

    /// One-hot membership (`kernels::lloyd`).
    #[doc(hidden)]
    fn onehot(labels: &Array<i64>, m: &mut Array<Self>) -> gpukit::Result<()>;

    /// k-means++ distance update (`kernels::lloyd`).
    #[doc(hidden)]
    fn closer(x: &Array<Self>, c: &Array<Self>, dmin: &mut Array<Self>) -> gpukit::Result<()>;
}

macro_rules! impl_ml_float {
    ($t:ty, [$first8:ident, $first32:ident, $first128:ident],
     [$merge8:ident, $merge32:ident, $merge128:ident], $vote:ident, $mean:ident, $assign:ident, $onehot:ident,
     $closer:ident) => {
        impl MlFloat for $t {
            fn topk_first(
                g: &Array<$t>,
                a: &Array<$t>,
                b: &Array<$t>,
                k: usize,
                parts: usize,
                out_d: &mut Array<$t>,
                out_i: &mut Array<i64>,
            ) -> gpukit::Result<()> {
                let (bl, th) = grid_for(a.size() * parts);
                if k <= 8 {
                    launch!(topk::$first8[bl, th](g, a, b, k, parts, out_d, out_i))
                } else if k <= 32 {
                    launch!(topk::$first32[bl, th](g, a, b, k, parts, out_d, out_i))
                } else {
                    launch!(topk::$first128[bl, th](g, a, b, k, parts, out_d, out_i))
                }
            }

            fn topk_merge(
                in_d: &Array<$t>,
                in_i: &Array<i64>,
                m: usize,
                k: usize,
                parts: usize,
                out_d: &mut Array<$t>,
                out_i: &mut Array<i64>,
            ) -> gpukit::Result<()> {
                let rows = if m > 0 { in_d.size() / m } else { 0 };
                let (bl, th) = grid_for(rows * parts);
                if k <= 8 {
                    launch!(topk::$merge8[bl, th](in_d, in_i, m, k, parts, out_d, out_i))
                } else if k <= 32 {
                    launch!(topk::$merge32[bl, th](in_d, in_i, m, k, parts, out_d, out_i))
                } else {
                    launch!(topk::$merge128[bl, th](in_d, in_i, m, k, parts, out_d, out_i))
                }
            }

            fn vote(
                idx: &Array<i64>,
                dist: &Array<$t>,
                codes: &Array<i64>,
                k: usize,
                n_classes: usize,
                weighted: bool,
                proba: &mut Array<$t>,
                pred: &mut Array<i64>,
            ) -> gpukit::Result<()> {
                let (bl, th) = grid_for(pred.size());
                launch!(vote::$vote[bl, th](idx, dist, codes, k, n_classes, weighted, proba, pred))
            }

            fn neighbor_mean(
                idx: &Array<i64>,
                dist: &Array<$t>,
                targets: &Array<$t>,
                k: usize,
                weighted: bool,
                out: &mut Array<$t>,
            ) -> gpukit::Result<()> {
                let (bl, th) = grid_for(out.size());
                launch!(vote::$mean[bl, th](idx, dist, targets, k, weighted, out))
            }

            fn assign(
                g: &Array<$t>,
                cn: &Array<$t>,
                xn: &Array<$t>,
                labels: &mut Array<i64>,
                dmin: &mut Array<$t>,
            ) -> gpukit::Result<()> {
                let (bl, th) = grid_for(xn.size());
                launch!(lloyd::$assign[bl, th](g, cn, xn, labels, dmin))
            }

            fn onehot(labels: &Array<i64>, m: &mut Array<$t>) -> gpukit::Result<()> {
                let (bl, th) = stride_grid(m.size());
                launch!(lloyd::$onehot[bl, th](labels, m))
            }

            fn closer(x: &Array<$t>, c: &Array<$t>, dmin: &mut Array<$t>) -> gpukit::Result<()> {
                let (bl, th) = grid_for(dmin.size());
                launch!(lloyd::$closer[bl, th](x, c, dmin))
            }
        }
    };
}

impl_ml_float!(
    f32,
    [topk_first8_f32, topk_first32_f32, topk_first128_f32],
    [topk_merge8_f32, topk_merge32_f32, topk_merge128_f32],
    vote_f32,
    mean_f32,
    assign_f32,
    onehot_f32,
    closer_f32
);
impl_ml_float!(
    f64,
    [topk_first8_f64, topk_first32_f64, topk_first128_f64],
    [topk_merge8_f64, topk_merge32_f64, topk_merge128_f64],
    vote_f64,
    mean_f64,
    assign_f64,
    onehot_f64,
    closer_f64
);
