//! The CPU backend of the decompositions: one matrix at a time through faer (feature `linalg`),
//! on C-order slices (faer reads them as row-major views, nothing is copied in). Without the
//! feature every method answers [`CpuFail::Feature`].

/// Why a CPU decomposition of one matrix did not give a result.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CpuFail {
    /// gpukit was built without its `linalg` feature (faer).
    Feature,
    /// The matrix is singular: `U[i, i]` of its LU factorisation is exactly 0.
    Singular(usize),
    /// The iteration did not converge.
    NoConvergence,
}

/// Which parts of an SVD to compute.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SvdJob {
    /// Singular values only.
    Values,
    /// `U` of `m x k`, `Vᵀ` of `k x n`, `k = min(m, n)`.
    Reduced,
    /// `U` of `m x m`, `Vᵀ` of `n x n`.
    Full,
}

/// C-order results of one SVD: `U`, the singular values (descending), `Vᵀ`.
pub type SvdParts<T> = (Vec<T>, Vec<T>, Vec<T>);

/// The decompositions of one C-order matrix on the CPU, for `f32` and `f64`. Implemented by
/// gpukit only (a supertrait of the sealed [`super::SolverElement`]).
#[doc(hidden)]
pub trait CpuSolver: Sized {
    /// SVD of the `m x n` matrix `a` (`m, n >= 1`).
    fn svd_one(a: &[Self], m: usize, n: usize, job: SvdJob) -> Result<SvdParts<Self>, CpuFail>;
    /// Solves `a · x = b` for the `n x n` matrix `a` and the C-order `n x nrhs` right-hand
    /// sides `b`, overwriting `b` with `x`.
    fn solve_one(a: &[Self], n: usize, b: &mut [Self], nrhs: usize) -> Result<(), CpuFail>;
    /// The inverse of the `n x n` matrix `a`.
    fn inv_one(a: &[Self], n: usize) -> Result<Vec<Self>, CpuFail>;
    /// The determinant of the `n x n` matrix `a` (0 for a singular one).
    fn det_one(a: &[Self], n: usize) -> Result<Self, CpuFail>;
    /// The diagonal of the LU factorisation (partial pivoting) of the `n x n` matrix `a` and
    /// whether its row permutation is odd (what `slogdet` reads).
    fn lu_diagonal_one(a: &[Self], n: usize) -> Result<(Vec<Self>, bool), CpuFail>;
    /// Reduced QR of the `m x n` matrix `a`: `Q` (`m x k`) and `R` (`k x n`), `k = min(m, n)`.
    fn qr_one(a: &[Self], m: usize, n: usize) -> Result<(Vec<Self>, Vec<Self>), CpuFail>;
    /// Eigenvalues (ascending) and eigenvectors (columns of a C-order `n x n` matrix) of the
    /// symmetric `n x n` matrix whose lower triangle is in `a`.
    fn eigh_one(a: &[Self], n: usize) -> Result<(Vec<Self>, Vec<Self>), CpuFail>;
}

#[cfg(feature = "linalg")]
mod faer_impl {
    use super::{CpuFail, CpuSolver, SvdJob, SvdParts};
    use faer::linalg::solvers::{DenseSolveCore, Solve};
    use faer::{MatRef, Side};

    /// A faer matrix (any strides) as a C-order vector.
    fn c_order<T: Copy>(m: MatRef<'_, T>) -> Vec<T> {
        let mut v = Vec::with_capacity(m.nrows() * m.ncols());
        for i in 0..m.nrows() {
            for j in 0..m.ncols() {
                v.push(m[(i, j)]);
            }
        }
        v
    }

    /// The index of the first exact zero on the diagonal of `u`, as LAPACK's `getrf` reports it.
    fn zero_pivot<T: Copy + PartialEq + Default>(u: MatRef<'_, T>) -> Option<usize> {
        (0..u.nrows().min(u.ncols())).find(|&i| u[(i, i)] == T::default())
    }

    /// Parity of a permutation given as an index array: true when odd.
    fn odd(perm: &[usize]) -> bool {
        let mut seen = vec![false; perm.len()];
        let mut swaps = 0;
        for start in 0..perm.len() {
            let mut i = start;
            let mut len = 0;
            while !seen[i] {
                seen[i] = true;
                i = perm[i];
                len += 1;
            }
            swaps += len.max(1) - 1;
        }
        swaps % 2 == 1
    }

    macro_rules! cpu_solver {
        ($($t:ty),*) => {$(
            impl CpuSolver for $t {
                fn svd_one(a: &[$t], m: usize, n: usize, job: SvdJob) -> Result<SvdParts<$t>, CpuFail> {
                    let mat = MatRef::from_row_major_slice(a, m, n);
                    if job == SvdJob::Values {
                        let s = mat.singular_values().map_err(|_| CpuFail::NoConvergence)?;
                        return Ok((Vec::new(), s, Vec::new()));
                    }
                    let svd = if job == SvdJob::Full { mat.svd() } else { mat.thin_svd() }
                        .map_err(|_| CpuFail::NoConvergence)?;
                    let s: Vec<$t> = (0..m.min(n)).map(|i| svd.S()[i]).collect();
                    // Vᵀ in C order is V read column by column.
                    let vt = c_order(svd.V().transpose());
                    Ok((c_order(svd.U()), s, vt))
                }

                fn solve_one(a: &[$t], n: usize, b: &mut [$t], nrhs: usize) -> Result<(), CpuFail> {
                    let lu = MatRef::from_row_major_slice(a, n, n).partial_piv_lu();
                    if let Some(i) = zero_pivot(lu.U()) {
                        return Err(CpuFail::Singular(i));
                    }
                    let x = lu.solve(MatRef::from_row_major_slice(&*b, n, nrhs));
                    b.copy_from_slice(&c_order(x.as_ref()));
                    Ok(())
                }

                fn inv_one(a: &[$t], n: usize) -> Result<Vec<$t>, CpuFail> {
                    let lu = MatRef::from_row_major_slice(a, n, n).partial_piv_lu();
                    if let Some(i) = zero_pivot(lu.U()) {
                        return Err(CpuFail::Singular(i));
                    }
                    Ok(c_order(lu.inverse().as_ref()))
                }

                fn det_one(a: &[$t], n: usize) -> Result<$t, CpuFail> {
                    let lu = MatRef::from_row_major_slice(a, n, n).partial_piv_lu();
                    let u = lu.U();
                    let mut det: $t = (0..n).map(|i| u[(i, i)]).product();
                    let (fwd, _) = lu.P().arrays();
                    if odd(fwd) {
                        det = -det;
                    }
                    Ok(det)
                }

                fn lu_diagonal_one(a: &[$t], n: usize) -> Result<(Vec<$t>, bool), CpuFail> {
                    let lu = MatRef::from_row_major_slice(a, n, n).partial_piv_lu();
                    let u = lu.U();
                    let (fwd, _) = lu.P().arrays();
                    Ok(((0..n).map(|i| u[(i, i)]).collect(), odd(fwd)))
                }

                fn qr_one(a: &[$t], m: usize, n: usize) -> Result<(Vec<$t>, Vec<$t>), CpuFail> {
                    let qr = MatRef::from_row_major_slice(a, m, n).qr();
                    let q = c_order(qr.compute_thin_Q().as_ref());
                    let r = qr.thin_R();
                    let mut rv = c_order(r);
                    // R is upper trapezoidal: nothing of the reflectors below its diagonal.
                    for i in 0..r.nrows() {
                        for j in 0..i.min(n) {
                            rv[i * n + j] = 0.0;
                        }
                    }
                    Ok((q, rv))
                }

                fn eigh_one(a: &[$t], n: usize) -> Result<(Vec<$t>, Vec<$t>), CpuFail> {
                    let e = MatRef::from_row_major_slice(a, n, n)
                        .self_adjoint_eigen(Side::Lower)
                        .map_err(|_| CpuFail::NoConvergence)?;
                    let w: Vec<$t> = (0..n).map(|i| e.S()[i]).collect();
                    Ok((w, c_order(e.U())))
                }
            }
        )*};
    }
    cpu_solver!(f32, f64);

    #[cfg(test)]
    mod tests {
        #[test]
        fn permutation_parity() {
            assert!(!super::odd(&[0, 1, 2]));
            assert!(super::odd(&[1, 0, 2]));
            assert!(!super::odd(&[1, 2, 0])); // a 3-cycle is two swaps
            assert!(super::odd(&[3, 2, 1, 0, 5, 4]));
            assert!(!super::odd(&[]));
        }
    }
}

#[cfg(not(feature = "linalg"))]
mod without_feature {
    use super::{CpuFail, CpuSolver, SvdJob, SvdParts};

    macro_rules! no_cpu_solver {
        ($($t:ty),*) => {$(
            impl CpuSolver for $t {
                fn svd_one(_: &[$t], _: usize, _: usize, _: SvdJob) -> Result<SvdParts<$t>, CpuFail> {
                    Err(CpuFail::Feature)
                }
                fn solve_one(_: &[$t], _: usize, _: &mut [$t], _: usize) -> Result<(), CpuFail> {
                    Err(CpuFail::Feature)
                }
                fn inv_one(_: &[$t], _: usize) -> Result<Vec<$t>, CpuFail> {
                    Err(CpuFail::Feature)
                }
                fn det_one(_: &[$t], _: usize) -> Result<$t, CpuFail> {
                    Err(CpuFail::Feature)
                }
                fn lu_diagonal_one(_: &[$t], _: usize) -> Result<(Vec<$t>, bool), CpuFail> {
                    Err(CpuFail::Feature)
                }
                fn qr_one(_: &[$t], _: usize, _: usize) -> Result<(Vec<$t>, Vec<$t>), CpuFail> {
                    Err(CpuFail::Feature)
                }
                fn eigh_one(_: &[$t], _: usize) -> Result<(Vec<$t>, Vec<$t>), CpuFail> {
                    Err(CpuFail::Feature)
                }
            }
        )*};
    }
    no_cpu_solver!(f32, f64);
}
