//! Comparisons that make boolean masks: a column against a literal or another column
//! (`==`, `!=`, `<`, `<=`, `>`, `>=`), membership in a list (`is_in`), and null tests. They are
//! what [`Expr`](crate::expr::Expr) evaluates to.
//!
//! What runs where: on the column's device. Numbers, booleans, dates and timestamps use
//! gpukit's elementwise comparisons (one kernel); strings compare their UTF-8 bytes in a kernel
//! (`str_cmp_scalar`, `str_cmp_cols`: byte order is code point order, as Polars orders
//! strings); `is_in` looks numbers up by binary search in the sorted candidates (sorted on the
//! host: they are the user's short list) and strings by comparing with each candidate in a
//! kernel. The host only converts the literal to the column's type.
//!
//! Types follow Polars: an integer literal against an integer column compares in the column's
//! type (in `f64` when the literal does not fit it); a float literal against an integer column
//! compares in `f64`; two numeric columns of different types compare in `f64`; dates and
//! timestamps compare with integers (days, or counts of the column's unit). Floats compare in
//! Polars' order: every NaN equals every NaN and is larger than every number (`x == NaN` is
//! true for NaN rows, `NaN > 1.0` is true), -0.0 equals 0.0. A comparison with a null row is
//! null (a filter drops it).

use gpukit::prelude::*;

use crate::column::{Column, ColumnData};
use crate::dtype::FrameDType;
use crate::error::{FrameError, Result};
use crate::strings::Utf8Data;

use super::kernels::{self as k, grid_for};
use super::take::{and_masks, valid_bools};

/// A comparison operator.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CmpOp {
    /// `==`
    Eq,
    /// `!=`
    Ne,
    /// `<`
    Lt,
    /// `<=`
    Le,
    /// `>`
    Gt,
    /// `>=`
    Ge,
}

impl CmpOp {
    /// The operator with its operands swapped (`a < b` is `b > a`).
    pub fn swapped(self) -> CmpOp {
        match self {
            CmpOp::Lt => CmpOp::Gt,
            CmpOp::Le => CmpOp::Ge,
            CmpOp::Gt => CmpOp::Lt,
            CmpOp::Ge => CmpOp::Le,
            other => other,
        }
    }

    /// The operator as written in Rust (`==`, `<`, ...).
    pub fn symbol(self) -> &'static str {
        match self {
            CmpOp::Eq => "==",
            CmpOp::Ne => "!=",
            CmpOp::Lt => "<",
            CmpOp::Le => "<=",
            CmpOp::Gt => ">",
            CmpOp::Ge => ">=",
        }
    }

    fn code(self) -> i32 {
        match self {
            CmpOp::Eq => 0,
            CmpOp::Ne => 1,
            CmpOp::Lt => 2,
            CmpOp::Le => 3,
            CmpOp::Gt => 4,
            CmpOp::Ge => 5,
        }
    }
}

/// A literal value of an expression.
#[derive(Debug, Clone, PartialEq)]
pub enum Lit {
    /// An integer (any Rust integer type).
    Int(i128),
    /// A float.
    Float(f64),
    /// A string.
    Str(String),
    /// A boolean.
    Bool(bool),
}

impl Lit {
    /// The literal's type as Polars names it (`i64`, `f64`, `str`, `bool`).
    pub fn type_name(&self) -> &'static str {
        match self {
            Lit::Int(_) => "i64",
            Lit::Float(_) => "f64",
            Lit::Str(_) => "str",
            Lit::Bool(_) => "bool",
        }
    }
}

impl std::fmt::Display for Lit {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Lit::Int(v) => write!(f, "{v}"),
            Lit::Float(v) => write!(f, "{v:?}"),
            Lit::Str(s) => write!(f, "{s:?}"),
            Lit::Bool(b) => write!(f, "{b}"),
        }
    }
}

macro_rules! lit_from {
    ($($t:ty => $v:ident $(as $c:ty)?),* $(,)?) => {$(
        impl From<$t> for Lit {
            fn from(v: $t) -> Lit {
                Lit::$v(v $(as $c)?)
            }
        }
    )*};
}

lit_from!(
    i8 => Int as i128, i16 => Int as i128, i32 => Int as i128, i64 => Int as i128,
    u8 => Int as i128, u16 => Int as i128, u32 => Int as i128, u64 => Int as i128,
    usize => Int as i128, isize => Int as i128,
    f32 => Float as f64, f64 => Float, bool => Bool, String => Str,
);

impl From<&str> for Lit {
    fn from(v: &str) -> Lit {
        Lit::Str(v.to_string())
    }
}

impl From<&String> for Lit {
    fn from(v: &String) -> Lit {
        Lit::Str(v.clone())
    }
}

/// A boolean result with its validity (`None`: no nulls), one entry per row, on the device.
#[derive(Debug, Clone)]
pub struct Mask {
    /// The values (unspecified where null).
    pub values: Array<bool>,
    /// Where the values are valid; `None` when all are.
    pub valid: Option<Array<bool>>,
}

impl Mask {
    /// The rows a filter keeps: true and valid.
    pub fn keep(&self) -> Result<Array<bool>> {
        match &self.valid {
            None => Ok(self.values.clone()),
            Some(v) => and_masks(&self.values, v),
        }
    }
}

fn cmp_scalar<T: Element>(a: &Array<T>, op: CmpOp, v: T) -> Result<Array<bool>> {
    Ok(match op {
        CmpOp::Eq => a.eq(v)?,
        CmpOp::Ne => a.ne(v)?,
        CmpOp::Lt => a.lt(v)?,
        CmpOp::Le => a.le(v)?,
        CmpOp::Gt => a.gt(v)?,
        CmpOp::Ge => a.ge(v)?,
    })
}

fn cmp_arrays<T: Element>(a: &Array<T>, op: CmpOp, b: &Array<T>) -> Result<Array<bool>> {
    Ok(match op {
        CmpOp::Eq => a.eq(b)?,
        CmpOp::Ne => a.ne(b)?,
        CmpOp::Lt => a.lt(b)?,
        CmpOp::Le => a.le(b)?,
        CmpOp::Gt => a.gt(b)?,
        CmpOp::Ge => a.ge(b)?,
    })
}

/// An integer column against an integer literal: in the column's type when the literal fits
/// it, else in `f64`.
fn cmp_int<T: Element + TryFrom<i128>>(a: &Array<T>, op: CmpOp, v: i128) -> Result<Array<bool>> {
    match T::try_from(v) {
        Ok(t) => cmp_scalar(a, op, t),
        Err(_) => cmp_scalar(&a.astype::<f64>()?, op, v as f64),
    }
}

/// Floats against a float literal in Polars' order (NaN equal to NaN and largest).
fn float_lit(x: &Array<f64>, op: CmpOp, v: f64) -> Result<Array<bool>> {
    let n = x.size();
    let mut codes = Array::<i32>::empty_on(n, &x.device())?;
    if n > 0 {
        let (b, t) = grid_for(n);
        launch!(k::float_cmp_scalar[b, t](x, v, &mut codes))?;
    }
    cmp_codes(&codes, op)
}

/// The mask of `-1/0/1` comparisons for `op`.
fn cmp_codes(codes: &Array<i32>, op: CmpOp) -> Result<Array<bool>> {
    let n = codes.size();
    let mut out = Array::<bool>::empty_on(n, &codes.device())?;
    if n > 0 {
        let (b, t) = grid_for(n);
        launch!(k::cmp_to_bool[b, t](codes, op.code(), &mut out))?;
    }
    Ok(out)
}

fn type_error(col: &Column, op: &str, what: &str, what_type: &str) -> FrameError {
    FrameError::Type(format!(
        "cannot compare column `{}` of type {} with {what} of type {what_type} ({op})",
        col.name(),
        col.dtype()
    ))
}

/// `column op literal` as a mask (null where the column is null).
pub fn compare_lit(col: &Column, op: CmpOp, lit: &Lit) -> Result<Mask> {
    let err = || type_error(col, op.symbol(), &lit.to_string(), lit.type_name());
    let values = match (col.data(), lit) {
        (ColumnData::Int32(a) | ColumnData::Date(a), Lit::Int(v)) => cmp_int(a, op, *v)?,
        (ColumnData::Int64(a) | ColumnData::Timestamp(a, _), Lit::Int(v)) => cmp_int(a, op, *v)?,
        (ColumnData::UInt32(a), Lit::Int(v)) => cmp_int(a, op, *v)?,
        (ColumnData::UInt64(a), Lit::Int(v)) => cmp_int(a, op, *v)?,
        (ColumnData::Float32(_), Lit::Int(v)) => float_lit(&as_f64(col)?, op, *v as f32 as f64)?,
        (ColumnData::Float32(_), Lit::Float(v)) => float_lit(&as_f64(col)?, op, *v as f32 as f64)?,
        (ColumnData::Float64(a), Lit::Int(v)) => float_lit(a, op, *v as f64)?,
        (_, Lit::Float(v)) if col.dtype().is_numeric() => float_lit(&as_f64(col)?, op, *v)?,
        (ColumnData::Bool(a), Lit::Bool(v)) => cmp_scalar(a, op, *v)?,
        (ColumnData::Utf8(s), Lit::Str(v)) => {
            let n = s.len();
            let device = s.device();
            let needle_bytes: &[u8] = if v.is_empty() { &[0] } else { v.as_bytes() };
            let needle = Array::from_slice_on(needle_bytes, &device)?;
            let mut codes = Array::<i32>::empty_on(n, &device)?;
            if n > 0 {
                let (b, t) = grid_for(n);
                launch!(k::str_cmp_scalar[b, t](
                    s.offsets(),
                    s.bytes(),
                    &needle,
                    v.len(),
                    &mut codes
                ))?;
            }
            cmp_codes(&codes, op)?
        }
        _ => return Err(err()),
    };
    Ok(Mask {
        values,
        valid: valid_bools(col)?,
    })
}

/// The validity of a row-wise result of two columns: valid where both are.
fn both_valid(a: &Column, b: &Column) -> Result<Option<Array<bool>>> {
    Ok(match (valid_bools(a)?, valid_bools(b)?) {
        (None, v) | (v, None) => v,
        (Some(x), Some(y)) => Some(and_masks(&x, &y)?),
    })
}

/// `a op b` row by row for two columns of one length on one device (null where either is).
pub fn compare_columns(a: &Column, op: CmpOp, b: &Column) -> Result<Mask> {
    if a.len() != b.len() {
        return Err(FrameError::Length(format!(
            "cannot compare column `{}` ({} rows) with column `{}` ({} rows)",
            a.name(),
            a.len(),
            b.name(),
            b.len()
        )));
    }
    if a.device() != b.device() {
        return Err(FrameError::Input(format!(
            "column `{}` is on {} but column `{}` on {}",
            a.name(),
            a.device(),
            b.name(),
            b.device()
        )));
    }
    use ColumnData as D;
    let values = match (a.data(), b.data()) {
        (D::Bool(x), D::Bool(y)) => cmp_arrays(x, op, y)?,
        (D::Int32(x), D::Int32(y)) | (D::Date(x), D::Date(y)) => cmp_arrays(x, op, y)?,
        (D::Int64(x), D::Int64(y)) => cmp_arrays(x, op, y)?,
        (D::Timestamp(x, u), D::Timestamp(y, v)) if u == v => cmp_arrays(x, op, y)?,
        (D::UInt32(x), D::UInt32(y)) => cmp_arrays(x, op, y)?,
        (D::UInt64(x), D::UInt64(y)) => cmp_arrays(x, op, y)?,
        (D::Utf8(x), D::Utf8(y)) => {
            let n = x.len();
            let mut codes = Array::<i32>::empty_on(n, &x.device())?;
            if n > 0 {
                let (bl, t) = grid_for(n);
                launch!(k::str_cmp_cols[bl, t](
                    x.offsets(),
                    x.bytes(),
                    y.offsets(),
                    y.bytes(),
                    &mut codes
                ))?;
            }
            cmp_codes(&codes, op)?
        }
        _ if a.dtype().is_numeric() && b.dtype().is_numeric() => {
            let (x, y) = (as_f64(a)?, as_f64(b)?);
            let n = x.size();
            let mut codes = Array::<i32>::empty_on(n, &x.device())?;
            if n > 0 {
                let (bl, t) = grid_for(n);
                launch!(k::float_cmp_cols[bl, t](&x, &y, &mut codes))?;
            }
            cmp_codes(&codes, op)?
        }
        _ => {
            return Err(FrameError::Type(format!(
                "cannot compare column `{}` of type {} with column `{}` of type {} ({})",
                a.name(),
                a.dtype(),
                b.name(),
                b.dtype(),
                op.symbol()
            )))
        }
    };
    Ok(Mask {
        values,
        valid: both_valid(a, b)?,
    })
}

/// A numeric column's values as `f64` (a cast kernel).
fn as_f64(c: &Column) -> Result<Array<f64>> {
    Ok(match c.data() {
        ColumnData::Int32(a) => a.astype()?,
        ColumnData::Int64(a) => a.astype()?,
        ColumnData::UInt32(a) => a.astype()?,
        ColumnData::UInt64(a) => a.astype()?,
        ColumnData::Float32(a) => a.astype()?,
        ColumnData::Float64(a) => a.clone(),
        _ => {
            return Err(FrameError::Type(format!(
                "column `{}` of type {} is not numeric",
                c.name(),
                c.dtype()
            )))
        }
    })
}

/// The `u64` keys of integers as the `key_i64` kernel makes them (order-preserving).
fn int_key(v: i64) -> u64 {
    (v as u64) ^ (1u64 << 63)
}

/// Sort keys of an integer column's values widened to `i64` (unsigned 64-bit values wrap,
/// which keeps equality), on the device.
fn int_keys<T: Element>(a: &Array<T>) -> Result<Array<u64>> {
    let wide = a.astype::<i64>()?;
    let n = wide.size();
    let mut out = Array::<u64>::empty_on(n, &wide.device())?;
    if n > 0 {
        let (b, t) = grid_for(n);
        launch!(k::key_i64[b, t](&wide, false, &mut out))?;
    }
    Ok(out)
}

/// Integers of `lits` that a column of type `dtype` can hold, as the column's `u64` keys.
fn int_candidates(col: &Column, lits: &[Lit]) -> Result<Vec<u64>> {
    let (lo, hi): (i128, i128) = match col.dtype() {
        FrameDType::Int32 | FrameDType::Date => (i32::MIN as i128, i32::MAX as i128),
        FrameDType::UInt32 => (0, u32::MAX as i128),
        FrameDType::UInt64 => (0, u64::MAX as i128),
        _ => (i64::MIN as i128, i64::MAX as i128),
    };
    let mut keys = Vec::new();
    for l in lits {
        match l {
            Lit::Int(v) if (lo..=hi).contains(v) => keys.push(int_key(*v as u64 as i64)),
            Lit::Int(_) => {}
            Lit::Float(f) if f.fract() == 0.0 && (lo as f64..=hi as f64).contains(f) => {
                keys.push(int_key(*f as i128 as u64 as i64))
            }
            Lit::Float(_) => {}
            other => {
                return Err(type_error(
                    col,
                    "is_in",
                    &other.to_string(),
                    other.type_name(),
                ))
            }
        }
    }
    keys.sort_unstable();
    keys.dedup();
    Ok(keys)
}

/// Whether each row's value is one of `lits` (Polars' `is_in`, pandas' `isin`); null rows
/// give null. Integers and floats mix as in comparisons; strings need string literals.
pub fn is_in(col: &Column, lits: &[Lit]) -> Result<Mask> {
    let n = col.len();
    let device = col.device();
    let mut out = Array::<bool>::empty_on(n, &device)?;
    let (b, t) = grid_for(n.max(1));
    let int_lookup = |keys: Array<u64>, out: &mut Array<bool>| -> Result<()> {
        let cands = int_candidates(col, lits)?;
        let sorted = Array::from_slice_on(if cands.is_empty() { &[0] } else { &cands }, &device)?;
        if cands.is_empty() {
            out.fill(false)?;
        } else if n > 0 {
            launch!(k::isin_u64[b, t](&keys, &sorted, &mut *out))?;
        }
        Ok(())
    };
    match col.data() {
        ColumnData::Int32(a) | ColumnData::Date(a) => int_lookup(int_keys(a)?, &mut out)?,
        ColumnData::Int64(a) | ColumnData::Timestamp(a, _) => int_lookup(int_keys(a)?, &mut out)?,
        ColumnData::UInt32(a) => int_lookup(int_keys(a)?, &mut out)?,
        ColumnData::UInt64(a) => int_lookup(int_keys(a)?, &mut out)?,
        ColumnData::Float32(_) | ColumnData::Float64(_) => {
            let x = as_f64(col)?;
            let mut nan_in = false;
            let mut c = Vec::new();
            for l in lits {
                match l {
                    Lit::Int(v) => c.push(*v as f64),
                    Lit::Float(f) if f.is_nan() => nan_in = true,
                    Lit::Float(f) => c.push(if col.dtype() == FrameDType::Float32 {
                        *f as f32 as f64
                    } else {
                        *f
                    }),
                    other => {
                        return Err(type_error(
                            col,
                            "is_in",
                            &other.to_string(),
                            other.type_name(),
                        ))
                    }
                }
            }
            c.sort_by(f64::total_cmp);
            let sorted = Array::from_slice_on(if c.is_empty() { &[0.0] } else { &c }, &device)?;
            if c.is_empty() && !nan_in {
                out.fill(false)?;
            } else if n > 0 {
                let sorted = if c.is_empty() {
                    Array::<f64>::empty_on(0, &device)?
                } else {
                    sorted
                };
                launch!(k::isin_f64[b, t](&x, &sorted, nan_in, &mut out))?;
            }
        }
        ColumnData::Utf8(s) => {
            let mut cands = Vec::new();
            for l in lits {
                match l {
                    Lit::Str(v) => cands.push(v.as_str()),
                    other => {
                        return Err(type_error(
                            col,
                            "is_in",
                            &other.to_string(),
                            other.type_name(),
                        ))
                    }
                }
            }
            if cands.is_empty() {
                out.fill(false)?;
            } else if n > 0 {
                let c = Utf8Data::from_strs_on(&cands, &device)?;
                let cb = if c.bytes().is_empty() {
                    Array::<u8>::zeros_on(1, &device)?
                } else {
                    c.bytes().clone()
                };
                launch!(k::str_isin[b, t](s.offsets(), s.bytes(), c.offsets(), &cb, &mut out))?;
            }
        }
        ColumnData::Bool(a) => {
            let mut has = [false, false];
            for l in lits {
                match l {
                    Lit::Bool(v) => has[*v as usize] = true,
                    other => {
                        return Err(type_error(
                            col,
                            "is_in",
                            &other.to_string(),
                            other.type_name(),
                        ))
                    }
                }
            }
            out = match has {
                [true, true] => Array::full_on(n, true, &device)?,
                [false, false] => Array::full_on(n, false, &device)?,
                [false, true] => a.clone(),
                [true, false] => a.eq(false)?,
            };
        }
    }
    Ok(Mask {
        values: out,
        valid: valid_bools(col)?,
    })
}

/// Whether each row is null (`null: true`) or not (`null: false`), never null itself.
pub fn null_mask(col: &Column, null: bool) -> Result<Mask> {
    let values = match valid_bools(col)? {
        None => Array::full_on(col.len(), !null, &col.device())?,
        Some(v) if null => v.eq(false)?,
        Some(v) => v,
    };
    Ok(Mask {
        values,
        valid: None,
    })
}

#[cfg(test)]
mod tests;
