//! Splitting rows into a training and a test set (scikit-learn's `train_test_split`): a seeded
//! permutation drawn on the host (the same split on every backend), applied on the device by a
//! row-gather kernel.
//!
//! ```
//! use gpukit::prelude::*;
//! use gpukit_ml::model_selection::{train_test_split, SplitOptions, TestSize};
//!
//! # fn main() -> gpukit_ml::Result<()> {
//! let x = Array::<f64>::arange(0.0, 20.0)?.into_shape([10, 2])?;
//! let y = Array::from_vec(vec![0i64, 0, 0, 0, 0, 1, 1, 1, 1, 1], 10)?;
//! let opts = SplitOptions { test_size: TestSize::Fraction(0.2), random_state: 1, stratify: true, shuffle: true };
//! let (x_train, x_test, y_train, y_test) = train_test_split(&x, &y, opts)?;
//! assert_eq!((x_train.shape(), x_test.shape()), (&[8, 2][..], &[2, 2][..]));
//! assert_eq!(y_test.sum()?, 1); // one row of each class in the test set
//! # Ok(())
//! # }
//! ```

use gpukit::prelude::*;

use crate::error::{MlError, Result};
use crate::float::Gather;
use crate::rng::HostRng;

const WHAT: &str = "train_test_split";

/// How many rows go to the test set.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum TestSize {
    /// A share in (0, 1): `ceil(share · n)` rows, as scikit-learn rounds.
    Fraction(f64),
    /// An exact number of rows, in `1..n`.
    Count(usize),
}

/// Options of [`train_test_split`]; `SplitOptions::default()` is a shuffled, unstratified
/// 25% test split with seed 0 (scikit-learn's defaults, with a fixed seed).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SplitOptions {
    /// The test set's size.
    pub test_size: TestSize,
    /// The seed of the permutation.
    pub random_state: u64,
    /// Keep each label's share the same in both sets (the labels are the `y` given).
    pub stratify: bool,
    /// Shuffle before splitting; without, the test set is the last rows, in order.
    pub shuffle: bool,
}

impl Default for SplitOptions {
    fn default() -> Self {
        SplitOptions {
            test_size: TestSize::Fraction(0.25),
            random_state: 0,
            stratify: false,
            shuffle: true,
        }
    }
}

fn parameter(name: &'static str, detail: String) -> MlError {
    MlError::Parameter {
        what: WHAT,
        name,
        detail,
    }
}

/// The number of test rows of `n`.
fn test_count(n: usize, size: TestSize) -> Result<usize> {
    let t = match size {
        TestSize::Fraction(f) => {
            if !(f > 0.0 && f < 1.0) {
                return Err(parameter(
                    "test_size",
                    format!("a fraction must lie strictly between 0 and 1, got {f}"),
                ));
            }
            (f * n as f64).ceil() as usize
        }
        TestSize::Count(c) => c,
    };
    if t == 0 || t >= n {
        return Err(parameter(
            "test_size",
            format!("{size:?} of {n} rows gives {t} test rows; both sets need at least one row"),
        ));
    }
    Ok(t)
}

/// Test rows per class: each class's exact share `n_c · t / n` rounded down, then the rows
/// left over go one each to the classes with the largest remainders (ties: the class seen
/// first in sorted label order). So every class gets its share to within one row and the
/// counts add up to `t`.
pub(crate) fn stratified_counts(class_sizes: &[usize], n: usize, t: usize) -> Vec<usize> {
    let mut out: Vec<usize> = class_sizes.iter().map(|&c| c * t / n).collect();
    let left = t - out.iter().sum::<usize>();
    let mut order: Vec<usize> = (0..class_sizes.len()).collect();
    // remainder of c·t/n is (c·t mod n)/n: compare the integers
    order.sort_by_key(|&i| std::cmp::Reverse((class_sizes[i] * t) % n));
    for &i in order.iter().take(left) {
        out[i] += 1;
    }
    out
}

/// The row indices `(train, test)` of a split of `n` rows with labels `labels` (when
/// stratified, as f64 keys).
pub(crate) fn split_indices(
    n: usize,
    labels: Option<&[f64]>,
    opts: SplitOptions,
) -> Result<(Vec<i64>, Vec<i64>)> {
    let t = test_count(n, opts.test_size)?;
    if !opts.shuffle {
        if opts.stratify {
            return Err(parameter(
                "stratify",
                "a stratified split needs shuffle = true".into(),
            ));
        }
        let all: Vec<i64> = (0..n as i64).collect();
        return Ok((all[..n - t].to_vec(), all[n - t..].to_vec()));
    }
    let mut rng = HostRng::new(opts.random_state);
    let Some(labels) = labels.filter(|_| opts.stratify) else {
        let mut perm: Vec<i64> = (0..n as i64).collect();
        rng.shuffle(&mut perm);
        let test = perm[..t].to_vec();
        return Ok((perm[t..].to_vec(), test));
    };
    // Rows per class, classes in sorted label order, rows in index order.
    let mut keyed: Vec<(f64, usize)> = labels.iter().copied().zip(0..n).collect();
    keyed.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
    let mut classes: Vec<Vec<i64>> = Vec::new();
    for (i, (v, row)) in keyed.iter().enumerate() {
        if i == 0 || keyed[i - 1].0.total_cmp(v).is_ne() {
            classes.push(Vec::new());
        }
        classes.last_mut().expect("pushed").push(*row as i64);
    }
    let sizes: Vec<usize> = classes.iter().map(Vec::len).collect();
    let smallest = *sizes.iter().min().expect("n >= 2");
    if smallest < 2 {
        return Err(parameter(
            "stratify",
            "the least populated class has only 1 row; each class needs at least 2 to be in \
             both sets"
                .into(),
        ));
    }
    if t < classes.len() || n - t < classes.len() {
        return Err(parameter(
            "test_size",
            format!(
                "{t} test and {} training rows cannot each hold all {} classes",
                n - t,
                classes.len()
            ),
        ));
    }
    let counts = stratified_counts(&sizes, n, t);
    let (mut train, mut test) = (Vec::with_capacity(n - t), Vec::with_capacity(t));
    for (rows, &c) in classes.iter_mut().zip(&counts) {
        rng.shuffle(rows);
        test.extend_from_slice(&rows[..c]);
        train.extend_from_slice(&rows[c..]);
    }
    rng.shuffle(&mut train);
    rng.shuffle(&mut test);
    Ok((train, test))
}

/// `(x_train, x_test, y_train, y_test)`, as [`train_test_split`] returns them.
pub type Split<T, L> = (Array<T>, Array<T>, Array<L>, Array<L>);

/// Splits the rows of `x` (`(n, d)`, or any array split along its first axis) and `y`
/// (`(n,)`) into `(x_train, x_test, y_train, y_test)`, on `x`'s and `y`'s devices.
///
/// The permutation comes from a small seeded generator on the host (SplitMix64), so a seed
/// gives the same split on every backend. Stratified: every label's test rows are its exact
/// share of the test size to within one row (largest remainders; the counts add up to the test
/// size), so the class ratios of both sets match the whole's within one row. Errors: a row
/// count mismatch, a test size leaving a set empty, stratification with a class of one row or
/// without shuffling.
pub fn train_test_split<T: Gather, L: Gather>(
    x: &Array<T>,
    y: &Array<L>,
    opts: SplitOptions,
) -> Result<Split<T, L>> {
    let n = x.shape().first().copied().unwrap_or(0);
    if y.ndim() != 1 || y.size() != n {
        return Err(MlError::Shape {
            what: WHAT,
            detail: format!(
                "x has {n} rows but y has shape {:?}; y must be 1-D with one value per row",
                y.shape()
            ),
        });
    }
    if n < 2 {
        return Err(MlError::Shape {
            what: WHAT,
            detail: format!("{n} rows cannot be split into two non-empty sets"),
        });
    }
    let keys: Option<Vec<f64>> = if opts.stratify && opts.shuffle {
        Some(y.to_vec()?.into_iter().map(Element::to_f64).collect())
    } else {
        None
    };
    let (train, test) = split_indices(n, keys.as_deref(), opts)?;
    let take =
        |idx: &[i64], dev: &Device| -> Result<Array<i64>> { Ok(Array::from_slice_on(idx, dev)?) };
    let (xd, yd) = (x.device(), y.device());
    let (tr_x, te_x) = (take(&train, &xd)?, take(&test, &xd)?);
    let x_train = T::take_rows(x, &tr_x)?;
    let x_test = T::take_rows(x, &te_x)?;
    let (tr_y, te_y) = if yd == xd {
        (tr_x, te_x)
    } else {
        (take(&train, &yd)?, take(&test, &yd)?)
    };
    Ok((
        x_train,
        x_test,
        L::take_rows(y, &tr_y)?,
        L::take_rows(y, &te_y)?,
    ))
}

#[cfg(test)]
mod tests;
