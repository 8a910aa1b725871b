//! The multi-dimensional array parameter types of `#[kernel]` signatures.
//!
//! They only name a parameter's form in a kernel signature; `#[kernel]` translates their use
//! and a launch accepts any array of the right dimension for them:
//!
//! ```no_run
//! use gpukit::prelude::*;
//!
//! #[kernel]
//! fn to_gray(img: &View3<u8>, gray: &mut View2<f32>) {
//!     let (x, y) = grid2();
//!     if x < img.shape(0) && y < img.shape(1) {
//!         let r = img[[x, y, 0]] as f32;
//!         let g = img[[x, y, 1]] as f32;
//!         let b = img[[x, y, 2]] as f32;
//!         gray[[x, y]] = 0.299 * r + 0.587 * g + 0.114 * b;
//!     }
//! }
//! ```

use crate::element::Element;
use std::marker::PhantomData;

/// A 2-D array parameter of a `#[kernel]`, C order: `a[[i, j]]`, `a.shape(0)`, `a.shape(1)`.
/// Written `&View2<T>` (read-only) or `&mut View2<T>` (writable); launched with a 2-D
/// [`Array`](crate::Array) or ndarray array.
pub struct View2<T: Element> {
    _elements: PhantomData<T>,
    _not_constructible: (),
}

/// A 3-D array parameter of a `#[kernel]`, C order: `a[[i, j, k]]`, `a.shape(d)` for d < 3.
/// Written `&View3<T>` or `&mut View3<T>`; launched with a 3-D [`Array`](crate::Array) or
/// ndarray array (an RGB image is `[height, width, 3]`).
pub struct View3<T: Element> {
    _elements: PhantomData<T>,
    _not_constructible: (),
}
