//! Test helpers: random string columns (unicode of several byte widths, empty strings, nulls)
//! and host views of results.

use gpukit::Device;
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

use crate::bitmap::Bitmap;
use crate::column::{Column, ColumnData, ColumnElement};
use crate::strings::Utf8Data;

/// Characters the random strings draw from: ASCII (with the separators the tests use), Latin-1,
/// Latin Extended-A, combining marks, Greek (with both sigmas), Cyrillic, CJK and emoji.
pub(crate) const POOL: &[char] = &[
    'a', 'b', 'A', 'B', 'z', 'Z', '0', '9', ' ', '_', ':', '.', '\'', '-', 'é', 'É', 'ß', 'ÿ', 'µ',
    'Ÿ', 'ı', 'İ', 'ŉ', 'ſ', 'ĸ', 'Σ', 'σ', 'ς', 'ΐ', 'ΰ', 'Ω', 'ά', '\u{301}', '\u{345}', 'Ж',
    'ж', 'Ӏ', 'ӏ', 'Ѡ', '日', '本', '😀', '𝄞',
];

/// A random string of up to `max_chars` characters from [`POOL`] (often empty).
pub(crate) fn random_string(rng: &mut StdRng, max_chars: usize) -> String {
    let n = rng.random_range(0..=max_chars);
    (0..n)
        .map(|_| POOL[rng.random_range(0..POOL.len())])
        .collect()
}

/// A string column `s` of `n` random rows, about one in five null (null rows hold random
/// strings too: their values must not matter).
pub(crate) fn random_column(seed: u64, n: usize, device: &Device) -> Column {
    let mut rng = StdRng::seed_from_u64(seed);
    let values: Vec<String> = (0..n).map(|_| random_string(&mut rng, 12)).collect();
    let valid: Vec<bool> = (0..n).map(|_| rng.random_range(0..5) != 0).collect();
    let data = Utf8Data::from_strs_on(&values, device).unwrap();
    let bitmap = Bitmap::from_bools_on(&valid, device).unwrap();
    Column::new("s", ColumnData::Utf8(data), Some(bitmap)).unwrap()
}

/// The rows of a string column, `None` where null.
pub(crate) fn rows_of(col: &Column) -> Vec<Option<String>> {
    col.str().to_strings().unwrap()
}

/// The values of a column of `T`, `None` where null.
pub(crate) fn values_of<T: ColumnElement>(col: &Column) -> Vec<Option<T>> {
    let v = col.values::<T>().unwrap().to_vec().unwrap();
    let valid = match col.validity() {
        Some(b) => b.to_bools().unwrap(),
        None => vec![true; v.len()],
    };
    v.into_iter()
        .zip(valid)
        .map(|(x, ok)| ok.then_some(x))
        .collect()
}

/// Runs `check(rows, column)` on random columns of 0, 1, 2, 7 and 300 rows (several seeds).
pub(crate) fn check_each(check: impl Fn(&[Option<String>], &Column)) {
    for (seed, n) in [
        (1u64, 0usize),
        (2, 1),
        (3, 2),
        (4, 7),
        (5, 300),
        (6, 300),
        (7, 1),
    ] {
        let col = random_column(seed, n, &Device::Cpu);
        let rows = rows_of(&col);
        check(&rows, &col);
    }
}
