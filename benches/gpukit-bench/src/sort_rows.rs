//! The sort rows (issue 16): `sort` and `argsort` of lab 5.1's (10_000, 5_000) float64 array
//! along the last axis, mirrored by `run_sort` in benches/cupy_twin.py (same names, same input,
//! same span, every element of every timed result checked against a host reference).

use crate::gpu::{host_vec, poison_pool, summary, summary_of, Opts, Row, POOL_POISON};
use crate::timing::{measure, Timer};
use crate::verify::Checker;
use gpukit::prelude::*;
use rayon::prelude::*;

/// The rows' names (the same on the CuPy side).
pub const NAMES: [&str; 2] = [
    "sort (float64, 10000x5000, last axis)",
    "argsort (float64, 10000x5000, last axis)",
];

const HOW: &str = "every element against a host reference (each row sorted on the host; the stable order for argsort), device checker kernel, result's pool block poisoned before each call";

/// Element `i` (C order) of the input: the low 32 bits of `i * 2654435761` (Knuth's
/// multiplicative hash) over 2^32. Exact in float64, scattered like random numbers, and distinct
/// below 2^32 elements, so the sorted rows and their order are unique.
pub fn sort_input_at(i: usize) -> f64 {
    ((i as u64).wrapping_mul(2_654_435_761) & 0xffff_ffff) as f64 / 4_294_967_296.0
}

/// The host references of `rows x len` input `host`: each row's stable order (indices in the
/// row) and the sorted rows.
pub fn sort_refs(host: &[f64], len: usize) -> (Vec<i64>, Vec<f64>) {
    let mut order: Vec<i64> = host_vec(host.len(), |i| (i % len) as i64);
    order
        .par_chunks_mut(len)
        .zip(host.par_chunks(len))
        .for_each(|(o, row)| o.sort_by(|&a, &b| row[a as usize].total_cmp(&row[b as usize])));
    let sorted = host_vec(host.len(), |i| host[(i / len) * len + order[i] as usize]);
    (order, sorted)
}

/// Runs the sort rows that `opts` selects on `dev`.
pub fn rows(
    opts: &Opts,
    dev: Device,
    t: &mut Timer,
    checker: &Checker,
    emit: &mut dyn FnMut(Row),
) -> Result<()> {
    if !NAMES.iter().any(|n| opts.wants(n)) {
        return Ok(());
    }
    let (w, r) = (opts.warmup, opts.reps);
    let (rows, len) = opts.sizes.sort;
    let n = rows * len;
    let span = t.how();
    let host = host_vec(n, sort_input_at);
    let (order, sorted) = sort_refs(&host, len);
    let a = Array::from_slice_on(&host, &dev)?.into_shape((rows, len))?;
    drop(host);
    let note =
        "one thread block per row: a bitonic sort in shared memory (opt-in dynamic shared memory)";
    if opts.wants(NAMES[0]) {
        let reference = Array::from_slice_on(&sorted, &dev)?;
        let check = summary(&a.sort()?)?;
        let m = measure(
            t,
            w,
            r,
            HOW,
            &mut (),
            |_| poison_pool(n, f64::NAN, POOL_POISON),
            |_| a.sort(),
            |_, s| checker.compare(&s, &reference, 0.0),
        )?;
        emit(Row {
            name: NAMES[0],
            unit: "op",
            span_ms: m.span_ms,
            host_ms: vec![],
            device_ms: vec![],
            wall_ms: m.wall_ms,
            verify: Some(m.verify),
            check,
            bytes: (2 * n * 8) as f64,
            access: "rw",
            span,
            note,
        });
    }
    if opts.wants(NAMES[1]) {
        let reference = Array::from_slice_on(&order, &dev)?;
        let as_f64 = |v: Vec<i64>| v.into_iter().map(|x| x as f64).collect::<Vec<f64>>();
        let check = summary_of(&as_f64(a.argsort()?.to_vec()?));
        let m = measure(
            t,
            w,
            r,
            HOW,
            &mut (),
            |_| poison_pool(n, -1i64, POOL_POISON),
            |_| a.argsort(),
            |_, i| checker.compare_i64(&i, &reference),
        )?;
        emit(Row {
            name: NAMES[1],
            unit: "op",
            span_ms: m.span_ms,
            host_ms: vec![],
            device_ms: vec![],
            wall_ms: m.wall_ms,
            verify: Some(m.verify),
            check,
            bytes: (2 * n * 8) as f64,
            access: "rw",
            span,
            note: "int64 indices (NumPy's intp), stable; the input's values are distinct, so the order is unique",
        });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_input_is_distinct_and_the_references_agree() {
        let (rows, len) = (3, 1000);
        let host: Vec<f64> = (0..rows * len).map(sort_input_at).collect();
        let mut all = host.clone();
        all.sort_by(f64::total_cmp);
        all.dedup();
        assert_eq!(all.len(), rows * len, "distinct values");
        assert!(host.iter().all(|&x| (0.0..1.0).contains(&x)));
        let (order, sorted) = sort_refs(&host, len);
        for r in 0..rows {
            let row = &sorted[r * len..(r + 1) * len];
            assert!(row.windows(2).all(|w| w[0] < w[1]));
            for (k, &i) in order[r * len..(r + 1) * len].iter().enumerate() {
                assert_eq!(host[r * len + i as usize], row[k]);
            }
        }
        // the same values as numpy's ((i * 2654435761) & 0xffffffff) / 2**32
        assert_eq!(sort_input_at(1), 2_654_435_761.0 / 4_294_967_296.0);
        assert_eq!(
            sort_input_at(2),
            ((2 * 2_654_435_761u64) & 0xffff_ffff) as f64 / 4_294_967_296.0
        );
    }
}
