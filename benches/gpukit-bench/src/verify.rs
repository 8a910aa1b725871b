//! Checking results in full: every element of every timed call's output against a reference
//! computed on the host (not by the library being measured).
//!
//! The rule, the same in the CUDA checkers (benches/bench_kernels.cu) and in cupy_twin.py: an
//! element passes when it equals the reference, or when |out - ref| <= tol * |ref|. NaN never
//! passes, so an output poisoned with NaN (or -1 where the values are counts) before the call
//! fails wherever the kernel did not write it.

use crate::json::Json;
use crate::rawcuda::{check_blocks, BENCH_KERNELS, CHECK_THREADS};
use gpukit::prelude::*;
use rayon::prelude::*;

/// What one check of one output found.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Outcome {
    /// Elements that had to be checked.
    pub expected: u64,
    /// Elements the checker visited (a checker that did not run visits none).
    pub elements: u64,
    /// Elements that failed the rule.
    pub mismatches: u64,
    /// The lowest failing index.
    pub first_bad: Option<u64>,
    /// Largest relative error |out - ref| / |ref| (infinity for NaN, or for a non-zero value
    /// where the reference is 0).
    pub max_rel_err: f64,
}

impl Outcome {
    /// Whether every element was visited and passed.
    pub fn ok(&self) -> bool {
        self.elements == self.expected && self.mismatches == 0
    }

    /// From the checker kernels' four counters (visited, mismatches, first bad index, bits of
    /// the largest relative error) for an output of `n` elements.
    pub fn from_counters(v: &[u64], n: u64) -> Outcome {
        if v.len() != 4 {
            return Outcome {
                expected: n,
                elements: 0,
                mismatches: n.max(1),
                first_bad: None,
                max_rel_err: f64::INFINITY,
            };
        }
        Outcome {
            expected: n,
            elements: v[0],
            mismatches: v[1],
            first_bad: (v[2] != u64::MAX).then_some(v[2]),
            max_rel_err: f64::from_bits(v[3]),
        }
    }

    /// An output of the wrong length: a failure of every element.
    pub fn wrong_length(got: usize, want: usize) -> Outcome {
        Outcome {
            expected: want as u64,
            elements: got as u64,
            mismatches: got.max(want).max(1) as u64,
            first_bad: Some(0),
            max_rel_err: f64::INFINITY,
        }
    }

    /// One value (a reduction's result) against its reference.
    pub fn scalar(out: f64, reference: f64, tol: f64) -> Outcome {
        let ok = passes(out, reference, tol);
        Outcome {
            expected: 1,
            elements: 1,
            mismatches: u64::from(!ok),
            first_bad: (!ok).then_some(0),
            max_rel_err: rel_err(out, reference),
        }
    }

    /// The two outcomes of two parts of one output, as one.
    fn merge(self, o: Outcome) -> Outcome {
        Outcome {
            expected: self.expected + o.expected,
            elements: self.elements + o.elements,
            mismatches: self.mismatches + o.mismatches,
            first_bad: match (self.first_bad, o.first_bad) {
                (Some(a), Some(b)) => Some(a.min(b)),
                (a, b) => a.or(b),
            },
            max_rel_err: self.max_rel_err.max(o.max_rel_err),
        }
    }
}

/// |out - ref| / |ref|, 0 where they are equal, infinity for NaN.
pub fn rel_err(out: f64, reference: f64) -> f64 {
    if out == reference {
        return 0.0;
    }
    let e = (out - reference).abs() / reference.abs();
    if e.is_nan() {
        f64::INFINITY
    } else {
        e
    }
}

/// The rule: equal, or within `tol` relative to the reference; NaN never passes.
pub fn passes(out: f64, reference: f64, tol: f64) -> bool {
    out == reference || (out - reference).abs() / reference.abs() <= tol
}

/// Every element of `out` against `reference` on the host (in parallel).
pub fn compare_host<T: Copy + Into<f64> + Sync>(out: &[T], reference: &[T], tol: f64) -> Outcome {
    if out.len() != reference.len() {
        return Outcome::wrong_length(out.len(), reference.len());
    }
    const CHUNK: usize = 1 << 20;
    let empty = Outcome {
        expected: 0,
        elements: 0,
        mismatches: 0,
        first_bad: None,
        max_rel_err: 0.0,
    };
    out.par_chunks(CHUNK)
        .zip(reference.par_chunks(CHUNK))
        .enumerate()
        .map(|(c, (o, r))| {
            let mut acc = empty;
            for (j, (&x, &y)) in o.iter().zip(r).enumerate() {
                let (x, y): (f64, f64) = (x.into(), y.into());
                acc.expected += 1;
                acc.elements += 1;
                if !passes(x, y, tol) {
                    acc.mismatches += 1;
                    acc.first_bad.get_or_insert((c * CHUNK + j) as u64);
                }
                acc.max_rel_err = acc.max_rel_err.max(rel_err(x, y));
            }
            acc
        })
        .reduce(|| empty, Outcome::merge)
}

/// Every check of one row on one side: how many timed calls were checked, how many failed, and
/// the worst outcome.
#[derive(Debug, Clone)]
pub struct Verify {
    /// How the outputs were checked (printed in results.json).
    pub how: &'static str,
    /// Outputs checked (one per timed call).
    pub checked: usize,
    /// Outputs that failed.
    pub failed: usize,
    /// The failing outcome with the most mismatches, else the last outcome.
    pub worst: Option<Outcome>,
    /// Largest relative error over every check.
    pub max_rel_err: f64,
}

impl Verify {
    /// No check yet.
    pub fn new(how: &'static str) -> Verify {
        Verify {
            how,
            checked: 0,
            failed: 0,
            worst: None,
            max_rel_err: 0.0,
        }
    }

    /// Adds one output's outcome.
    pub fn push(&mut self, o: Outcome) {
        self.checked += 1;
        self.max_rel_err = self.max_rel_err.max(o.max_rel_err);
        let worse = match self.worst {
            None => true,
            Some(w) => !o.ok() && (w.ok() || o.mismatches > w.mismatches),
        };
        if !o.ok() {
            self.failed += 1;
        }
        if worse || self.worst.is_some_and(|w| w.ok()) {
            self.worst = Some(o);
        }
    }

    /// Whether at least one output was checked and none failed.
    pub fn ok(&self) -> bool {
        self.checked > 0 && self.failed == 0
    }

    /// The `verify` object of a result line.
    pub fn json(&self) -> Json {
        let w = self.worst;
        Json::Obj(vec![
            ("how", Json::Str(self.how.into())),
            ("checked", Json::Int(self.checked as i64)),
            ("failed", Json::Int(self.failed as i64)),
            ("elements", Json::Int(w.map_or(0, |w| w.expected) as i64)),
            ("visited", Json::Int(w.map_or(0, |w| w.elements) as i64)),
            (
                "mismatches",
                Json::Int(w.map_or(0, |w| w.mismatches) as i64),
            ),
            (
                "first_bad",
                w.and_then(|w| w.first_bad)
                    .map_or(Json::Null, |i| Json::Int(i as i64)),
            ),
            (
                "max_rel_err",
                if self.max_rel_err.is_finite() {
                    Json::Num(self.max_rel_err)
                } else {
                    Json::Str("inf".into())
                },
            ),
        ])
    }
}

/// Element types the checkers handle.
pub trait CheckElem: Element + Copy + Into<f64> + Send + Sync {
    /// The checker kernel of this type in bench_kernels.cu.
    const KERNEL: &'static str;
}

impl CheckElem for f64 {
    const KERNEL: &'static str = "bench_check_f64";
}
impl CheckElem for f32 {
    const KERNEL: &'static str = "bench_check_f32";
}
impl CheckElem for i32 {
    const KERNEL: &'static str = "bench_check_i32";
}

/// Compares gpukit arrays: on a GPU with the checker kernels of bench_kernels.cu (compiled by
/// gpukit as raw CUDA C, so none of gpukit's own array kernels takes part), on the CPU backend
/// on the host.
pub enum Checker {
    /// The checker kernels on a CUDA device.
    Device {
        /// The compiled bench_kernels.cu.
        module: Module,
        /// Grid size: multiprocessors of the device.
        sms: usize,
        /// The device.
        device: Device,
    },
    /// Host comparison (the CPU backend's dry run).
    Host,
}

impl Checker {
    /// The checker for arrays on `device`.
    pub fn for_device(device: &Device) -> Result<Checker> {
        match device.properties()? {
            gpukit::DeviceProperties::Cuda(p) => Ok(Checker::Device {
                module: Module::from_cuda_on(BENCH_KERNELS, device)?,
                sms: p.multiprocessors as usize,
                device: *device,
            }),
            gpukit::DeviceProperties::Cpu(_) => Ok(Checker::Host),
        }
    }

    /// The compiled harness kernels (None on the CPU backend).
    pub fn module(&self) -> Option<&Module> {
        match self {
            Checker::Device { module, .. } => Some(module),
            Checker::Host => None,
        }
    }

    /// Every element of `out` against `reference` (same element count; shapes may differ).
    pub fn compare<T: CheckElem>(
        &self,
        out: &Array<T>,
        reference: &Array<T>,
        tol: f64,
    ) -> Result<Outcome> {
        if out.size() != reference.size() {
            return Ok(Outcome::wrong_length(out.size(), reference.size()));
        }
        match self {
            Checker::Host => Ok(compare_host(&out.to_vec()?, &reference.to_vec()?, tol)),
            Checker::Device {
                module,
                sms,
                device,
            } => {
                let k = module.kernel(T::KERNEL)?;
                let n = out.size();
                let mut res = Array::<u64>::from_slice_on(&[0, 0, u64::MAX, 0], device)?;
                let blocks = check_blocks(n, *sms);
                launch!(k[blocks, CHECK_THREADS as usize](out, reference, n as u64, tol, &mut res))?;
                Ok(Outcome::from_counters(&res.to_vec()?, n as u64))
            }
        }
    }

    /// Every element of `out` against `reference` exactly (`i64`: indices, such as argsort's).
    pub fn compare_i64(&self, out: &Array<i64>, reference: &Array<i64>) -> Result<Outcome> {
        if out.size() != reference.size() {
            return Ok(Outcome::wrong_length(out.size(), reference.size()));
        }
        match self {
            Checker::Host => {
                let f = |v: Vec<i64>| v.into_iter().map(|x| x as f64).collect::<Vec<f64>>();
                Ok(compare_host(
                    &f(out.to_vec()?),
                    &f(reference.to_vec()?),
                    0.0,
                ))
            }
            Checker::Device {
                module,
                sms,
                device,
            } => {
                let k = module.kernel("bench_check_i64")?;
                let n = out.size();
                let mut res = Array::<u64>::from_slice_on(&[0, 0, u64::MAX, 0], device)?;
                let blocks = check_blocks(n, *sms);
                launch!(k[blocks, CHECK_THREADS as usize](out, reference, n as u64, 0.0f64, &mut res))?;
                Ok(Outcome::from_counters(&res.to_vec()?, n as u64))
            }
        }
    }

    /// Every element of `out` against one value, exactly.
    pub fn compare_const(&self, out: &Array<f64>, value: f64) -> Result<Outcome> {
        match self {
            Checker::Host => {
                let v = out.to_vec()?;
                Ok(compare_host(&v, &vec![value; v.len()], 0.0))
            }
            Checker::Device {
                module,
                sms,
                device,
            } => {
                let k = module.kernel("bench_check_const_f64")?;
                let n = out.size();
                let mut res = Array::<u64>::from_slice_on(&[0, 0, u64::MAX, 0], device)?;
                let blocks = check_blocks(n, *sms);
                launch!(k[blocks, CHECK_THREADS as usize](out, n as u64, value, &mut res))?;
                Ok(Outcome::from_counters(&res.to_vec()?, n as u64))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_rule() {
        assert!(passes(1.0, 1.0, 0.0));
        assert!(passes(0.0, -0.0, 0.0));
        assert!(!passes(1.0 + 1e-15, 1.0, 0.0));
        assert!(passes(1.0 + 1e-15, 1.0, 1e-12));
        assert!(!passes(f64::NAN, 1.0, 1.0));
        assert!(!passes(f64::NAN, f64::NAN, 1.0), "NaN never passes");
        assert!(
            !passes(1e-300, 0.0, 0.5),
            "a non-zero value where 0 is expected"
        );
        assert!(!passes(-1.0, 2.0, 0.1), "the -1 sentinel of int outputs");
        assert_eq!(rel_err(f64::NAN, 1.0), f64::INFINITY);
        assert_eq!(rel_err(3.0, 2.0), 0.5);
    }

    #[test]
    fn compare_host_counts_every_mismatch_across_chunks() {
        let n = (1 << 20) * 2 + 17;
        let reference: Vec<f32> = (0..n).map(|i| i as f32).collect();
        let mut out = reference.clone();
        let o = compare_host(&out, &reference, 0.0);
        assert!(o.ok(), "{o:?}");
        assert_eq!((o.elements, o.mismatches, o.first_bad), (n as u64, 0, None));
        out[(1 << 20) + 5] = f32::NAN; // second chunk
        out[n - 1] += 1.0;
        let o = compare_host(&out, &reference, 0.0);
        assert!(!o.ok());
        assert_eq!(o.mismatches, 2);
        assert_eq!(o.first_bad, Some((1 << 20) + 5));
        assert_eq!(o.max_rel_err, f64::INFINITY);
        let o = compare_host(&out[..10], &reference, 0.0);
        assert!(!o.ok(), "a short output fails");
    }

    #[test]
    fn ints_compare_exactly() {
        let reference = vec![0i32, 1, 2, 3];
        assert!(compare_host(&[0i32, 1, 2, 3], &reference, 0.0).ok());
        let o = compare_host(&[0i32, -1, 2, 3], &reference, 0.0);
        assert_eq!((o.mismatches, o.first_bad), (1, Some(1)));
    }

    #[test]
    fn counters_and_a_checker_that_did_not_run() {
        let o = Outcome::from_counters(&[10, 0, u64::MAX, 0], 10);
        assert!(o.ok());
        let o = Outcome::from_counters(&[0, 0, u64::MAX, 0], 10);
        assert!(!o.ok(), "nothing visited: the checker did not run");
        let o = Outcome::from_counters(&[10, 3, 4, 2.5f64.to_bits()], 10);
        assert_eq!(
            (o.mismatches, o.first_bad, o.max_rel_err),
            (3, Some(4), 2.5)
        );
        assert!(!Outcome::from_counters(&[], 10).ok());
    }

    #[test]
    fn verify_keeps_the_worst_and_counts_failures() {
        let mut v = Verify::new("test");
        assert!(!v.ok(), "nothing checked is not ok");
        v.push(Outcome::scalar(1.0, 1.0, 0.0));
        assert!(v.ok());
        v.push(Outcome::from_counters(&[10, 3, 4, 0], 10));
        v.push(Outcome::from_counters(&[10, 1, 7, 0], 10));
        v.push(Outcome::scalar(1.0, 1.0, 0.0));
        assert!(!v.ok());
        assert_eq!((v.checked, v.failed), (4, 2));
        assert_eq!(v.worst.unwrap().mismatches, 3);
        let j = v.json().render();
        assert!(
            j.contains("\"checked\":4") && j.contains("\"failed\":2"),
            "{j}"
        );
    }

    #[test]
    fn host_checker_on_cpu_arrays() {
        set_default_device(Device::cpu());
        let c = Checker::for_device(&Device::cpu()).unwrap();
        let a = Array::<f64>::arange(0.0, 100.0).unwrap();
        let b = Array::<f64>::arange(0.0, 100.0).unwrap();
        assert!(c.compare(&a, &b, 0.0).unwrap().ok());
        let z = Array::<f64>::full(100, f64::NAN).unwrap();
        assert_eq!(c.compare(&z, &b, 1.0).unwrap().mismatches, 100);
        let ones = Array::<f64>::ones(100).unwrap();
        assert!(c.compare_const(&ones, 1.0).unwrap().ok());
        assert_eq!(c.compare_const(&a, 1.0).unwrap().mismatches, 99);
    }
}
