//! The FFT row: `gpukit::fft::fftn` of a 256³ complex128 array (cuFFT), the twin of
//! `cp.fft.fftn` in benches/cupy_twin.py (same name, input, span and check).
//!
//! Check of every timed output, computed apart from the call timed: its inverse (`ifftn`, run
//! after the timing) must give the input back element by element (real and imaginary parts,
//! 1e-10 relative; inputs are in [1, 2) so relative errors mean something), and the summary
//! values both sides report (Parseval's energy, the zero frequency, which is the sum of the
//! input, and the last element) must agree across sides. A poisoned (unwritten) result fails
//! the round trip, and so does an identity "transform" (its inverse scales by 1/n).

use crate::gpu::{host_vec, poison_pool, Opts, Row, POOL_POISON};
use crate::timing::{measure, Timer};
use crate::verify::{Checker, Outcome};
use gpukit::prelude::*;

/// The row's name (the same in cupy_twin.py).
pub const FFT_ROW: &str = "FFT 3-D complex (complex128, 256^3)";

/// Element `i` (C order) of the input: real and imaginary parts in [1, 2), from two integer
/// hashes that numpy reproduces exactly (`cupy_twin.fft_input_host`).
pub fn fft_input_at(i: usize) -> Complex<f64> {
    let i = i as u64;
    let re = ((i * 2_654_435_761) % (1 << 32)) as f64 / (1u64 << 32) as f64;
    let im = ((i * 40_503) % 65_521) as f64 / 65_521.0;
    Complex::new(1.0 + re, 1.0 + im)
}

/// Two outcomes as one (both arrays checked in full).
fn both(a: Outcome, b: Outcome) -> Outcome {
    Outcome {
        expected: a.expected + b.expected,
        elements: a.elements + b.elements,
        mismatches: a.mismatches + b.mismatches,
        first_bad: match (a.first_bad, b.first_bad) {
            (Some(x), Some(y)) => Some(x.min(y)),
            (x, y) => x.or(y),
        },
        max_rel_err: a.max_rel_err.max(b.max_rel_err),
    }
}

/// `[energy / n (Parseval: the input's energy), F[0].re, F[0].im, F[last].re, F[last].im]`.
pub fn fft_summary(f: &Array<Complex<f64>>) -> Result<Vec<f64>> {
    let m = f.abs()?;
    let energy = (&m * &m)?.sum()? / f.size() as f64;
    let v = f.to_vec()?;
    let (first, last) = (v[0], v[v.len() - 1]);
    Ok(vec![energy, first.re, first.im, last.re, last.im])
}

/// The FFT row, or `None` when `--only` leaves it out.
pub fn fft_row(opts: &Opts, t: &mut Timer, checker: &Checker, side: usize) -> Result<Option<Row>> {
    if !opts.wants(FFT_ROW) {
        return Ok(None);
    }
    let n = side * side * side;
    let x = Array::from_vec(host_vec(n, fft_input_at), [side, side, side])?;
    let (x_re, x_im) = (x.re()?, x.im()?);
    let check = fft_summary(&fft::fftn(&x)?)?;
    let span = t.how();
    let poison = Complex::new(f64::NAN, f64::NAN);
    let m = measure(
        t,
        opts.warmup,
        opts.reps,
        "inverse of every timed output (ifftn, untimed) against the input, element by element \
         (1e-10 relative), output's pool block poisoned before each call",
        &mut (),
        |_| poison_pool(n, poison, POOL_POISON),
        |_| fft::fftn(&x),
        |_, f| {
            let back = fft::ifftn(&f)?;
            Ok(both(
                checker.compare(&back.re()?, &x_re, 1e-10)?,
                checker.compare(&back.im()?, &x_im, 1e-10)?,
            ))
        },
    )?;
    Ok(Some(Row::op(
        FFT_ROW,
        m,
        span,
        check,
        (2 * n * 16) as f64,
        "rw",
        "cuFFT Z2Z plan (cached), out of place; bytes = one read and one write of the array \
         (an FFT makes several passes, so the rate is a lower bound)",
    )))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_input_is_in_one_to_two() {
        for i in [0usize, 1, 255, 65_521, (1 << 24) - 1] {
            let z = fft_input_at(i);
            assert!(
                (1.0..2.0).contains(&z.re) && (1.0..2.0).contains(&z.im),
                "{i}: {z}"
            );
        }
        assert_eq!(fft_input_at(0), Complex::new(1.0, 1.0));
        assert_eq!(fft_input_at(1).im, 1.0 + 40_503.0 / 65_521.0);
    }
}
