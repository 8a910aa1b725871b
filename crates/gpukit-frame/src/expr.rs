//! A small expression language for row filters, in Polars' spelling:
//! `col("requests").gt(100) & col("project").is_in(&["en", "de"])`, then
//! `df.filter(expr)`.
//!
//! An [`Expr`] names columns ([`col`]), literals ([`lit`], or any number, `&str` or `bool`
//! where an expression is expected), comparisons (`eq ne lt le gt ge`, against a literal or
//! another column), `is_in`, `is_null` / `is_not_null`, and `&`, `|`, `!` (Rust's operator
//! traits). Evaluating one ([`Expr::evaluate`]) runs every comparison and logical step on the
//! frame's device (see [`crate::ops::compare`]); nothing is copied to the host but scalars.
//!
//! Nulls follow Polars: a comparison with a null row is null; `&` and `|` use Kleene's
//! three-valued logic (`false & null` is false, `true | null` is true, otherwise null wins);
//! `!null` is null; a filter keeps only rows that are true (not null). A column that is not
//! there, or a comparison of mismatched types, is a [`FrameError`] naming the column and both
//! types.
//!
//! ```
//! use gpukit::Device;
//! use gpukit_frame::prelude::*;
//!
//! let cpu = Device::Cpu;
//! let df = DataFrame::new(vec![
//!     Column::from_strs_on("project", &["en", "de", "en", "fr"], &cpu)?,
//!     Column::from_slice_on("requests", &[120i64, 7, 3, 450], &cpu)?,
//! ])?;
//! let busy = df.filter(col("requests").gt(100) & col("project").is_in(&["en", "de"]))?;
//! assert_eq!(busy.height(), 1);
//! let by_requests = df.sort_by(&["requests"], &[true])?;
//! assert_eq!(by_requests.column("requests")?.values::<i64>()?.to_vec()?, [450, 120, 7, 3]);
//! # Ok::<(), gpukit_frame::FrameError>(())
//! ```

use std::ops::{BitAnd, BitOr, Not};

use gpukit::prelude::*;

use crate::column::{Column, ColumnData};
use crate::error::{FrameError, Result};
use crate::frame::DataFrame;
use crate::ops::compare::{self, CmpOp, Lit, Mask};
use crate::ops::kernels::{self as k, grid_for};
use crate::ops::take::{bitmap_from_bools, valid_bools, FrameMask};

/// An expression over a frame's columns that evaluates to a column (a boolean mask for the
/// comparisons and logic).
#[derive(Debug, Clone, PartialEq)]
pub enum Expr {
    /// The column of this name.
    Col(String),
    /// A literal value.
    Lit(Lit),
    /// A comparison of two expressions.
    Cmp(Box<Expr>, CmpOp, Box<Expr>),
    /// Whether the value is one of the literals.
    IsIn(Box<Expr>, Vec<Lit>),
    /// Whether the value is null (`true`) or not null (`false`).
    IsNull(Box<Expr>, bool),
    /// Kleene AND.
    And(Box<Expr>, Box<Expr>),
    /// Kleene OR.
    Or(Box<Expr>, Box<Expr>),
    /// Negation (null stays null).
    Not(Box<Expr>),
}

/// The column named `name` (Polars' `pl.col`).
pub fn col(name: impl Into<String>) -> Expr {
    Expr::Col(name.into())
}

/// A literal (Polars' `pl.lit`): a number, `&str`, `String` or `bool`.
pub fn lit(value: impl Into<Lit>) -> Expr {
    Expr::Lit(value.into())
}

impl<T: Into<Lit>> From<T> for Expr {
    fn from(v: T) -> Expr {
        Expr::Lit(v.into())
    }
}

/// The value of a sub-expression while evaluating.
enum Value {
    Column(Column),
    Lit(Lit),
    Mask(Mask, String),
}

impl Expr {
    fn cmp(self, op: CmpOp, rhs: impl Into<Expr>) -> Expr {
        Expr::Cmp(Box::new(self), op, Box::new(rhs.into()))
    }

    /// `self == rhs` (a literal or another expression).
    pub fn eq(self, rhs: impl Into<Expr>) -> Expr {
        self.cmp(CmpOp::Eq, rhs)
    }

    /// `self != rhs`.
    pub fn ne(self, rhs: impl Into<Expr>) -> Expr {
        self.cmp(CmpOp::Ne, rhs)
    }

    /// `self < rhs`.
    pub fn lt(self, rhs: impl Into<Expr>) -> Expr {
        self.cmp(CmpOp::Lt, rhs)
    }

    /// `self <= rhs`.
    pub fn le(self, rhs: impl Into<Expr>) -> Expr {
        self.cmp(CmpOp::Le, rhs)
    }

    /// `self > rhs`.
    pub fn gt(self, rhs: impl Into<Expr>) -> Expr {
        self.cmp(CmpOp::Gt, rhs)
    }

    /// `self >= rhs`.
    pub fn ge(self, rhs: impl Into<Expr>) -> Expr {
        self.cmp(CmpOp::Ge, rhs)
    }

    /// Whether the value is one of `values` (Polars' `is_in`, pandas' `isin`); null rows stay
    /// null.
    pub fn is_in<T: Clone + Into<Lit>>(self, values: &[T]) -> Expr {
        Expr::IsIn(
            Box::new(self),
            values.iter().cloned().map(Into::into).collect(),
        )
    }

    /// Whether the value is null.
    pub fn is_null(self) -> Expr {
        Expr::IsNull(Box::new(self), true)
    }

    /// Whether the value is not null.
    pub fn is_not_null(self) -> Expr {
        Expr::IsNull(Box::new(self), false)
    }

    /// The name of the result: the first column the expression names (Polars' rule), else
    /// `literal`.
    pub fn output_name(&self) -> String {
        match self {
            Expr::Col(n) => n.clone(),
            Expr::Lit(_) => "literal".to_string(),
            Expr::Cmp(a, _, b) | Expr::And(a, b) | Expr::Or(a, b) => match **a {
                Expr::Lit(_) => b.output_name(),
                _ => a.output_name(),
            },
            Expr::IsIn(a, _) | Expr::IsNull(a, _) | Expr::Not(a) => a.output_name(),
        }
    }

    /// The expression's value on `frame` as a column (a `bool` column with nulls for
    /// comparisons and logic), computed on the frame's device.
    pub fn evaluate(&self, frame: &DataFrame) -> Result<Column> {
        match self.eval(frame)? {
            Value::Column(c) => Ok(c),
            Value::Lit(l) => Err(FrameError::Input(format!(
                "the expression is the literal {l}, not a column"
            ))),
            Value::Mask(m, name) => {
                let validity = match &m.valid {
                    None => None,
                    Some(v) => bitmap_from_bools(v)?,
                };
                Column::new(name, ColumnData::Bool(m.values), validity)
            }
        }
    }

    /// The rows a filter by this expression keeps (true, not null), one bool per row.
    pub fn mask(&self, frame: &DataFrame) -> Result<Array<bool>> {
        let name = self.output_name();
        let m = to_mask(self.eval(frame)?, frame, &name)?;
        m.keep()
    }

    fn eval(&self, frame: &DataFrame) -> Result<Value> {
        Ok(match self {
            Expr::Col(n) => Value::Column(frame.column(n)?.clone()),
            Expr::Lit(l) => Value::Lit(l.clone()),
            Expr::Cmp(a, op, b) => {
                let name = self.output_name();
                let m = match (a.eval(frame)?, b.eval(frame)?) {
                    (Value::Lit(x), Value::Lit(y)) => {
                        return Err(FrameError::Input(format!(
                            "comparing two literals ({x} {} {y}) needs a column",
                            op.symbol()
                        )))
                    }
                    (x, Value::Lit(l)) => compare::compare_lit(&as_column(x)?, *op, &l)?,
                    (Value::Lit(l), y) => compare::compare_lit(&as_column(y)?, op.swapped(), &l)?,
                    (x, y) => compare::compare_columns(&as_column(x)?, *op, &as_column(y)?)?,
                };
                Value::Mask(m, name)
            }
            Expr::IsIn(a, values) => {
                let c = as_column(a.eval(frame)?)?;
                Value::Mask(compare::is_in(&c, values)?, c.name().to_string())
            }
            Expr::IsNull(a, null) => {
                let c = as_column(a.eval(frame)?)?;
                Value::Mask(compare::null_mask(&c, *null)?, c.name().to_string())
            }
            Expr::And(a, b) | Expr::Or(a, b) => {
                let name = self.output_name();
                let x = to_mask(a.eval(frame)?, frame, &name)?;
                let y = to_mask(b.eval(frame)?, frame, &name)?;
                let and = matches!(self, Expr::And(..));
                Value::Mask(kleene(&x, &y, and)?, name)
            }
            Expr::Not(a) => {
                let name = self.output_name();
                let x = to_mask(a.eval(frame)?, frame, &name)?;
                let n = x.values.size();
                let mut values = Array::<bool>::empty_on(n, &x.values.device())?;
                if n > 0 {
                    let (b, t) = grid_for(n);
                    launch!(k::not_bools[b, t](&x.values, &mut values))?;
                }
                Value::Mask(
                    Mask {
                        values,
                        valid: x.valid,
                    },
                    name,
                )
            }
        })
    }
}

/// A value as a column (a mask becomes a `bool` column).
fn as_column(v: Value) -> Result<Column> {
    match v {
        Value::Column(c) => Ok(c),
        Value::Mask(m, name) => {
            let validity = match &m.valid {
                None => None,
                Some(v) => bitmap_from_bools(v)?,
            };
            Column::new(name, ColumnData::Bool(m.values), validity)
        }
        Value::Lit(l) => Err(FrameError::Input(format!(
            "the literal {l} needs a column to compare with"
        ))),
    }
}

/// A value as a boolean mask over the frame's rows (a literal `bool` is repeated).
fn to_mask(v: Value, frame: &DataFrame, what: &str) -> Result<Mask> {
    let device = frame.device().unwrap_or(Device::Cpu);
    match v {
        Value::Mask(m, _) => Ok(m),
        Value::Lit(Lit::Bool(b)) => Ok(Mask {
            values: Array::full_on(frame.height(), b, &device)?,
            valid: None,
        }),
        Value::Lit(l) => Err(FrameError::Type(format!(
            "`&`, `|` and `!` need booleans, got the literal {l} of type {} in `{what}`",
            l.type_name()
        ))),
        Value::Column(c) => match c.data() {
            ColumnData::Bool(values) => Ok(Mask {
                values: values.clone(),
                valid: valid_bools(&c)?,
            }),
            _ => Err(FrameError::Type(format!(
                "`&`, `|` and `!` need booleans, but column `{}` is {}",
                c.name(),
                c.dtype()
            ))),
        },
    }
}

/// Kleene AND (`and`) or OR of two masks, on the device.
fn kleene(x: &Mask, y: &Mask, and: bool) -> Result<Mask> {
    let n = x.values.size();
    let device = x.values.device();
    if and && x.valid.is_none() && y.valid.is_none() {
        return Ok(Mask {
            values: crate::ops::take::and_masks(&x.values, &y.values)?,
            valid: None,
        });
    }
    let ones = Array::<bool>::full_on(n, true, &device)?;
    let vx = x.valid.as_ref().unwrap_or(&ones);
    let vy = y.valid.as_ref().unwrap_or(&ones);
    let mut values = Array::<bool>::empty_on(n, &device)?;
    let mut valid = Array::<bool>::empty_on(n, &device)?;
    if n > 0 {
        let (b, t) = grid_for(n);
        if and {
            launch!(k::kleene_and[b, t](&x.values, vx, &y.values, vy, &mut values, &mut valid))?;
        } else {
            launch!(k::kleene_or[b, t](&x.values, vx, &y.values, vy, &mut values, &mut valid))?;
        }
    }
    let any_null = x.valid.is_some() || y.valid.is_some();
    Ok(Mask {
        values,
        valid: any_null.then_some(valid),
    })
}

impl<R: Into<Expr>> BitAnd<R> for Expr {
    type Output = Expr;
    /// Kleene AND of two boolean expressions (or a `bool` literal).
    fn bitand(self, rhs: R) -> Expr {
        Expr::And(Box::new(self), Box::new(rhs.into()))
    }
}

impl<R: Into<Expr>> BitOr<R> for Expr {
    type Output = Expr;
    /// Kleene OR of two boolean expressions (or a `bool` literal).
    fn bitor(self, rhs: R) -> Expr {
        Expr::Or(Box::new(self), Box::new(rhs.into()))
    }
}

impl Not for Expr {
    type Output = Expr;
    /// Negation of a boolean expression (null stays null).
    fn not(self) -> Expr {
        Expr::Not(Box::new(self))
    }
}

impl FrameMask for Expr {
    fn frame_mask(&self, frame: &DataFrame) -> Result<Array<bool>> {
        self.mask(frame)
    }
}

impl DataFrame {
    /// The rows where `expr` is true (Polars' `filter` with an expression); the same as
    /// [`DataFrame::filter`] with an [`Expr`].
    pub fn filter_expr(&self, expr: &Expr) -> Result<DataFrame> {
        self.filter(expr)
    }
}

#[cfg(test)]
mod tests;
