//! Newton's method with a backtracking line search for the L2-penalised logistic loss
//! (binary: sigmoid; multinomial: softmax), the fitting engine of
//! [`super::LogisticRegression`].
//!
//! The objective, per sample (scikit-learn's, divided by `C · n`, so the same optimum):
//!
//! `f(W) = (1/n) Σᵢ ℓᵢ(W) + 1/(2Cn) Σ_{j<d, k} W_jk² [+ ½ (Σ_k b_k)²]`
//!
//! with `W` the `(p, m)` parameters (`p = d` features plus one intercept row, `m = 1` for the
//! sigmoid, `K` classes for the softmax). The intercepts are not penalised. The softmax is
//! unchanged when one vector is added to every class's parameters; the penalty picks
//! `Σ_k w_jk = 0` for the coefficients, and the last term (zero at the optimum, where the
//! loss's gradient along `Σ_k b_k` vanishes) does the same for the intercepts, which is the
//! solution scikit-learn's L-BFGS reaches from zero. It keeps the Hessian positive definite.
//!
//! Every pass over the data runs on its device: `Z = Xa·W` (GEMM), the link function
//! (elementwise, row max and sum), the gradient `Xaᵀ(P - T)` and the Hessian by
//! [`crate::gram`]: `Xaᵀ diag(p(1-p)) Xa` for the sigmoid (the Gram matrix of
//! `sqrt(p(1-p)) · Xa`), and for the softmax `Σᵢ (xᵢxᵢᵀ) ⊗ (diag(pᵢ) - pᵢpᵢᵀ)`: with
//! `A = [xᵢⱼ pᵢₖ]` (`(n, pK)`), the second part is `AᵀA` and the first is read from `Xaᵀ·A`
//! (`(p, pK)`). The small `(pm, pm)` Hessian and the `(p, m)` gradient come to the host, get
//! the penalty, and the step solves `H Δ = -g` on the device (`gpukit::linalg::solve`). Each
//! iteration holds one `(n, p·m)` temporary.
//!
//! Stopping: when the largest absolute entry of the gradient of `f` is at most `tol`
//! (scikit-learn's L-BFGS `gtol` on the same scaled objective), after `max_iter` Newton steps,
//! or when the line search cannot decrease `f` any more (the optimum within rounding).

use gpukit::linalg::solve;
use gpukit::{keepdims, Array, Device, Element};

use crate::error::Result;
use crate::gram::{gram, t_matmul, LinalgFloat};

/// A penalised logistic problem on one device.
pub(crate) struct Problem<'a, T: LinalgFloat> {
    /// `(n, p)`: the features, with a column of ones last when there is an intercept.
    pub xa: &'a Array<T>,
    /// `(n, m)`: 0/1 targets (the positive class for `m == 1`, one-hot rows otherwise).
    pub targets: &'a Array<T>,
    /// The same targets in `f64`, for the loss (made once per fit, not per evaluation).
    pub targets_f64: &'a Array<f64>,
    /// Penalised rows of `W` (the features; the intercept row, if any, is row `d`).
    pub d: usize,
    /// Whether row `d` holds intercepts.
    pub intercept: bool,
    /// `1 / (C n)`.
    pub inv_cn: f64,
}

/// What [`minimise`] found.
pub(crate) struct Outcome {
    /// `(p, m)` parameters, row-major, on the host.
    pub w: Vec<f64>,
    /// Newton steps taken.
    pub n_iter: usize,
}

impl<T: LinalgFloat> Problem<'_, T> {
    fn n(&self) -> usize {
        self.xa.shape()[0]
    }
    fn p(&self) -> usize {
        self.xa.shape()[1]
    }
    fn m(&self) -> usize {
        self.targets.shape()[1]
    }
    fn device(&self) -> Device {
        self.xa.device()
    }

    /// Whether the intercept-sum term applies (softmax with intercepts).
    fn sum_term(&self) -> bool {
        self.intercept && self.m() > 1
    }

    fn upload(&self, w: &[f64]) -> Result<Array<T>> {
        let v: Vec<T> = w.iter().map(|&x| <T as Element>::from_f64(x)).collect();
        Ok(Array::from_vec_on(v, [self.p(), self.m()], &self.device())?)
    }

    /// `Z = Xa·W`, `(n, m)`.
    fn scores(&self, w: &[f64]) -> Result<Array<T>> {
        Ok(self.xa.matmul(&self.upload(w)?)?)
    }

    /// `Σᵢ ℓᵢ` and, when asked, the probabilities `P` `(n, m)`.
    ///
    /// Both are computed in `f64` whatever `T` (a cast of `Z`, small beside the GEMM that made
    /// it): in `f32` a sum over many rows is rounded at about 1e-7 of its size, coarser
    /// than the objective's decrease near the optimum, so the line search would stop at a point
    /// set by the summation order, and two backends (or two runs of different shape) would stop
    /// apart along the objective's flat directions.
    fn loss(&self, z: &Array<T>, want_p: bool) -> Result<(f64, Option<Array<T>>)> {
        let z = z.astype::<f64>()?;
        let tz = (self.targets_f64 * &z)?.sum()?;
        if self.m() == 1 {
            // softplus(z) = max(z, 0) + ln(1 + e^-|z|), computed without overflow.
            let e = z.abs()?.neg()?.exp()?;
            let sp = (z.clip(0.0, f64::INFINITY)? + &(e + 1.0)?.ln()?)?;
            let total = sp.sum()? - tz;
            let p = if want_p {
                // sigmoid(z) = (1 + tanh(z / 2)) / 2
                Some((((&z * 0.5)?.tanh()? + 1.0)? * 0.5)?.astype::<T>()?)
            } else {
                None
            };
            Ok((total, p))
        } else {
            let mx = z.max_axis(keepdims(1))?;
            let e = (&z - &mx)?.exp()?;
            let s = e.sum_axis(keepdims(1))?;
            let lse = (&mx + &s.ln()?)?.sum()?;
            let p = if want_p {
                Some((&e / &s)?.astype::<T>()?)
            } else {
                None
            };
            Ok((lse - tz, p))
        }
    }

    /// `f(W)`.
    fn value(&self, w: &[f64]) -> Result<f64> {
        let (loss, _) = self.loss(&self.scores(w)?, false)?;
        Ok(loss / self.n() as f64 + self.penalty_value(w))
    }

    fn penalty_value(&self, w: &[f64]) -> f64 {
        let m = self.m();
        let sq: f64 = w[..self.d * m].iter().map(|v| v * v).sum();
        let mut f = 0.5 * self.inv_cn * sq;
        if self.sum_term() {
            let s: f64 = w[self.d * m..].iter().sum();
            f += 0.5 * s * s;
        }
        f
    }

    /// `f(W)`, its gradient `(p·m,)` and Hessian `(p·m, p·m)` (row-major), on the host.
    fn eval(&self, w: &[f64]) -> Result<(f64, Vec<f64>, Vec<f64>)> {
        let (n, p, m) = (self.n(), self.p(), self.m());
        let nf = n as f64;
        let z = self.scores(w)?;
        let (loss, prob) = self.loss(&z, true)?;
        drop(z);
        let prob = prob.expect("asked for the probabilities");
        let resid = (&prob - self.targets)?;
        let mut g: Vec<f64> = t_matmul(self.xa, &resid)?
            .to_vec()?
            .into_iter()
            .map(|v| v.to_f64() / nf)
            .collect();
        drop(resid);
        let pm = p * m;
        let mut h = vec![0.0f64; pm * pm];
        if m == 1 {
            let s = (&prob * &(prob.neg()? + <T as Element>::one())?)?.sqrt()?;
            let a = (self.xa * &s)?;
            for (hv, v) in h.iter_mut().zip(gram(&a)?.to_vec()?) {
                *hv = v.to_f64() / nf;
            }
        } else {
            let a = (self.xa.view().reshape([n, p, 1])? * prob.view().reshape([n, 1, m])?)?
                .into_shape([n, pm])?;
            let aa = gram(&a)?.to_vec()?;
            let b = t_matmul(self.xa, &a)?.to_vec()?;
            // H[(j,k),(l,q)] = (δ_kq B[j, l·m + k] - AᵀA[(j,k),(l,q)]) / n
            for j in 0..p {
                for k in 0..m {
                    let row = (j * m + k) * pm;
                    for l in 0..p {
                        for q in 0..m {
                            let col = l * m + q;
                            let mut v = -aa[row + col].to_f64();
                            if k == q {
                                v += b[j * pm + l * m + k].to_f64();
                            }
                            h[row + col] = v / nf;
                        }
                    }
                }
            }
        }
        // The penalty's parts.
        for i in 0..self.d * m {
            g[i] += self.inv_cn * w[i];
            h[i * pm + i] += self.inv_cn;
        }
        if self.sum_term() {
            let s: f64 = w[self.d * m..].iter().sum();
            for k in 0..m {
                let i = self.d * m + k;
                g[i] += s;
                for q in 0..m {
                    h[i * pm + self.d * m + q] += 1.0;
                }
            }
        }
        Ok((loss / nf + self.penalty_value(w), g, h))
    }

    /// The Newton step `Δ` solving `H Δ = -g`, on the device.
    fn step(&self, g: &[f64], h: &[f64]) -> Result<Vec<f64>> {
        let pm = g.len();
        let dev = self.device();
        let ha = Array::from_vec_on(
            h.iter().map(|&v| <T as Element>::from_f64(v)).collect(),
            [pm, pm],
            &dev,
        )?;
        let rhs = Array::from_vec_on(
            g.iter().map(|&v| <T as Element>::from_f64(-v)).collect(),
            [pm, 1],
            &dev,
        )?;
        Ok(solve(&ha, &rhs)?
            .to_vec()?
            .into_iter()
            .map(|v| v.to_f64())
            .collect())
    }
}

/// Minimises the problem's objective from `W = 0` (see the module comment).
pub(crate) fn minimise<T: LinalgFloat>(
    problem: &Problem<'_, T>,
    max_iter: usize,
    tol: f64,
) -> Result<Outcome> {
    let pm = problem.p() * problem.m();
    let mut w = vec![0.0f64; pm];
    let mut n_iter = 0;
    while n_iter < max_iter {
        let (f, g, h) = problem.eval(&w)?;
        let gmax = g.iter().fold(0.0f64, |a, v| a.max(v.abs()));
        if gmax <= tol || !gmax.is_finite() {
            break;
        }
        let delta = problem.step(&g, &h)?;
        let slope: f64 = g.iter().zip(&delta).map(|(a, b)| a * b).sum();
        if slope.is_nan() || slope >= 0.0 {
            break; // no descent direction left within rounding
        }
        let mut t = 1.0f64;
        let mut accepted = None;
        for _ in 0..40 {
            let trial: Vec<f64> = w.iter().zip(&delta).map(|(a, b)| a + t * b).collect();
            let ft = problem.value(&trial)?;
            if ft <= f + 1e-4 * t * slope {
                accepted = Some(trial);
                break;
            }
            t *= 0.5;
        }
        n_iter += 1;
        match accepted {
            Some(next) => w = next,
            None => break, // f cannot decrease along the step: the optimum within rounding
        }
    }
    Ok(Outcome { w, n_iter })
}
