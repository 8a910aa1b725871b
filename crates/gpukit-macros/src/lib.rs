//! # The gpukit kernel language
//!
//! `#[kernel]`, `#[device]` and `#[vectorize]` turn a subset of Rust into two programs: CUDA C++
//! (compiled by NVRTC at first launch on a GPU) and a native *CPU twin* (compiled by `rustc`
//! with your crate, run by gpukit's CPU backend). Both come from one intermediate
//! representation, so they compute the same thing. Everything outside the subset is a compile
//! error at the offending code that says what is supported: you never get C++ that fails later.
//!
//! ```ignore
//! use gpukit::prelude::*;
//!
//! #[kernel]
//! fn scale(x: &[f32], y: &mut [f32], a: f32) {
//!     let i = grid(1);
//!     if i < x.len() {
//!         y[i] = a * x[i] + 1.0;      // f32 throughout: `1.0` is an f32 here, as in Rust
//!     }
//! }
//!
//! launch!(scale[blocks, threads](&x, &mut y, 2.0))?;   // or scale.launch((blocks, threads), ..)
//! println!("{}", scale.source());                      // the generated CUDA C++
//! ```
//!
//! ## Parameters
//!
//! | written | passed as | in the body |
//! |---|---|---|
//! | `x: &[T]` | read-only array | `x[i]`, `x.len()` |
//! | `x: &mut [T]` | writable array | `x[i] = v`, `x[i] += v`, atomics |
//! | `m: &View2<T>`, `&mut View2<T>` | 2-D array, C order | `m[[i, j]]`, `m.shape(0)`, `m.shape(1)`, `m.len()` |
//! | `im: &View3<T>`, `&mut View3<T>` | 3-D array, C order | `im[[y, x, c]]`, `im.shape(d)` for d < 3 |
//! | `s: T` | scalar by value | a plain value |
//!
//! Array elements `T` are `f32`, `f64`, `i32`, `i64`, `u32`, `u64`, `u8`, `bool` (gpukit's dtypes).
//! Scalars may also be `usize` and `isize` (64-bit on both sides). `launch` is generated with
//! typed arguments, so passing an `Array<f64>` where the kernel takes `&[f32]` does not compile.
//!
//! ## Statements and expressions
//!
//! * `let x = e;`, `let mut x: T = e;`, `let x;` (assigned later), `let (a, b) = (e1, e2);`,
//!   `let (x, y) = grid2();`, `const N: usize = 64;` inside the body, shadowing.
//! * Arithmetic `+ - * / %`, comparison, `&& || !`, bit operations `& | ^ << >>`, compound
//!   assignment (`+=` ...), unary `-`, `as` casts between numeric types and from `bool`.
//! * `if` / `else if` / `else`, also as an expression (`let v = if c { a } else { b };`, branches
//!   may hold statements when the `if` is the whole value of a `let`, an assignment or a `return`).
//! * `match` on integers and bools: literal patterns, `a | b`, ranges (`1..=9`, `..`-open),
//!   local `const`s, guards (`x if x > 9 =>`), and a last arm `_` or a name that catches the
//!   rest. It becomes an `if` chain (a `?:` chain when every arm is an expression).
//! * `for i in a..b`, `a..=b`, `(a..b).step_by(s)`, `(a..b).rev()`; `while`, `loop`, `break`,
//!   `continue` (no labels), early `return`.
//! * Per-thread local arrays: `let mut w = [0.0f32; 9];`, `let k = [0.25, 0.5, 0.25];` (the
//!   element type is inferred from use; the length is a literal or a body `const`; 2048
//!   elements per kernel at most), indexed and bounds checked like parameters.
//! * Blocks `{ .. }`, parentheses, constants such as `f32::MAX`, `i32::MIN`, `f64::INFINITY`,
//!   `f32::NAN`, `f32::EPSILON` and `std::f32::consts::PI` (all of `consts`).
//!
//! ## Methods
//!
//! * Floats: `sqrt cbrt sin cos tan asin acos atan sinh cosh tanh asinh acosh atanh exp exp2
//!   exp_m1 ln ln_1p log2 log10 log(base) floor ceil round trunc fract recip to_degrees
//!   to_radians powi(i32) powf atan2 hypot copysign mul_add abs signum min max clamp is_nan
//!   is_finite is_infinite is_sign_negative is_sign_positive`; also as `f32::sqrt(x)`.
//!   f32 calls the single-precision CUDA functions (`sqrtf`, `sinf`, ...): no silent promotion.
//! * Integers: `min max clamp abs pow(u32) signum wrapping_add wrapping_sub wrapping_mul
//!   count_ones leading_zeros trailing_zeros`.
//! * Arrays: `len()`; views: `shape(d)` with a literal axis.
//!
//! ## Intrinsics
//!
//! | intrinsic | value |
//! |---|---|
//! | `grid(1)` | `usize`: this thread's absolute index, `block_idx().x * block_dim().x + thread_idx().x` |
//! | `grid2()`, `grid3()` | `(usize, usize)` / `(usize, usize, usize)`, bound with `let (x, y) = grid2();` |
//! | `gridsize(1)`, `gridsize2()`, `gridsize3()` | threads in the whole grid per axis (grid-stride loops) |
//! | `thread_idx()`, `block_idx()`, `block_dim()`, `grid_dim()` | a `Dim3`; read `.x`, `.y`, `.z` (`u32`) |
//! | `sync_threads()` | barrier for the threads of a block |
//! | `let tile = shared_array::<T, N>();` | per-block shared memory of `N` elements (`N` a literal or a body `const`; 48 KiB per block at most) |
//! | `atomic_add(&mut a[i], v)`, `atomic_sub`, `atomic_max`, `atomic_min`, `atomic_exch`, `atomic_cas(&mut a[i], expected, new)` | atomic read-modify-write on an element of a writable array or shared array of `i32 u32 i64 u64 f32 f64`; returns the old value |
//!
//! A grid-stride loop: `for i in (grid(1)..x.len()).step_by(gridsize(1)) { .. }`.
//!
//! ## `#[device]` helpers
//!
//! `#[device] fn helper(x: f32, k: i32) -> f32 { .. }` takes scalars and returns a scalar (or
//! nothing). It stays an ordinary Rust function (the CPU twin calls it) and gains CUDA code that
//! every kernel calling it includes, with the helpers it calls in turn. Helpers use the same
//! language minus arrays and thread intrinsics. Calling a function that is not `#[device]`
//! fails with ``cannot find value `__GPUKIT_DEVICE_name` `` at the call.
//!
//! ## `#[vectorize]`
//!
//! `#[vectorize] fn f(x: f32, y: f32) -> f32 { .. }` (1 to 4 inputs) becomes
//! `fn f(x: impl VecArg<f32>, y: impl VecArg<f32>) -> gpukit::Result<Array<f32>>` applying the body
//! to every element: arrays of one shape, scalars or length-1 arrays broadcast. It runs on the
//! device of the first array (GPU: a grid-stride CUDA kernel `f_vectorized`; CPU: all cores).
//!
//! ## How types are inferred
//!
//! As in Rust. Unsuffixed integer literals are `{integer}` and float literals `{float}` until
//! the context fixes their type; otherwise they default to `i32` and `f64`. So in
//!
//! ```ignore
//! let mut s = 0.0;
//! for i in 0..a.len() { s += a[i]; }   // a: &[f32]
//! ```
//!
//! `s` is an `f32` and the CUDA code says `float s = 0.0f;`. Both sides of arithmetic,
//! comparisons and assignments have one type (convert with `as`), indices are `usize`, shift
//! amounts may be any integer. The macro cannot see `#[device]` functions defined elsewhere, so
//! their results take the type the context gives them; with no context the CUDA code spells the
//! type through the helper's own signature (`auto`, `decltype`) and `rustc` checks the CPU twin.
//! The CPU twin carries every inferred type as a literal suffix, so `rustc` re-checks the
//! inference.
//!
//! ## Semantics on both backends
//!
//! * Integer types keep their widths; `+ - *`, negation and shifts wrap (Rust's release
//!   behaviour; shift amounts are masked to the width) instead of panicking or being undefined
//!   in C++. Narrow types (`u8`, `i16`, ...) are cast back after C++'s promotion to `int`.
//! * Integer `/` and `%` truncate as in Rust; division or remainder by zero gives `0` (Rust
//!   would panic; a GPU cannot), `MIN / -1` wraps.
//! * `as` from float to integer saturates and maps NaN to 0, as in Rust.
//! * `f32` arithmetic stays `f32`; float `%` is `fmod`; `min`/`max` ignore a NaN operand.
//! * `a * b + c` is never fused into one FMA instruction (Rust does not fuse either); write
//!   `a.mul_add(b, c)` to ask for an FMA. See "What is exact" below.
//! * `step_by(0)` runs no iterations (Rust would panic). `(a..=b).step_by(s)` visits `b` when
//!   the steps land on it, and no loop steps past its bound (no overflow at the type's limits).
//! * Operands whose evaluation can be observed (checked element accesses, which may report an
//!   out-of-range index, and atomics) are evaluated left to right, as in Rust: in
//!   `a[i] + b[j]` with both indices out of range, `a` is reported.
//!
//! ## What is exact
//!
//! These give the same bits on the GPU, in the CPU twin and in plain Rust, for every input
//! including subnormals, signed zeros, infinities and NaN (a NaN's payload aside; `min`, `max`
//! and `clamp` may differ in the sign of a zero result, which Rust leaves unspecified too):
//! `+ - * / %`, negation, `sqrt`, `abs`, `min`, `max`, `clamp`, `floor`, `ceil`, `round`,
//! `trunc`, `fract`, `recip`, `signum`, `copysign`, `mul_add` (one rounding), `a * b + c` (two
//! roundings), `powi`, `to_degrees`, `to_radians`, float/integer casts, comparisons, and all
//! integer operations. In the CUDA code every float multiplication is a round-to-nearest
//! intrinsic (`__fmul_rn`, `__dmul_rn`), which the compiler never contracts into an FMA (the
//! same instruction otherwise, so no speed is lost), division and square root are IEEE
//! round-to-nearest (NVRTC's defaults, which gpukit never changes), and the degree/radian
//! factors are Rust's own constants. Tested bit for bit on 65,536 random inputs per operation
//! and type (`crates/gpukit/tests/exact_math.rs`), on an H100 as well.
//!
//! Library-dependent (CUDA's math library on the GPU, Rust's `std`/libm in the CPU twin, so
//! results may differ in the last bits): `sin`, `cos`, `tan`, `asin`, `acos`, `atan`, `sinh`,
//! `cosh`, `tanh`, `exp`, `exp2`, `exp_m1`, `ln`, `ln_1p`, `log2`, `log10`, `log`, `cbrt`,
//! `powf`, `atan2`, `hypot` (and `asinh`, `acosh`, `atanh`). Measured on an H100 (CUDA 13.0)
//! against Rust 1.95 on 65,536 random inputs each, largest difference in ulps, f32 / f64:
//! sin 1/1, cos 1/1, tan 2/2, asin 1/2, acos 1/1, atan 1/1, sinh 2/2, cosh 2/1, tanh 3/2,
//! exp 2/1, exp2 2/1, exp_m1 2/1, ln 1/1, ln_1p 1/1, log2 1/1, log10 2/2, cbrt 1/0, powf 1/1,
//! atan2 1/1, hypot 1/2; one f32 `powf` input of the 65,536 gave NaN on one side and a
//! number on the other.
//!
//! ## Bounds checks and `unchecked`
//!
//! Every `a[i]` and `v[[i, j]]` is checked on both backends. An index out of range stops that
//! thread (as a Rust thread returning) and the launch reports `gpukit::Error::IndexOutOfBounds`
//! naming the kernel, the array, the index, the length, the axis, and the thread and block. On
//! a GPU the error arrives at the next synchronisation; the CUDA context survives.
//! `#[kernel(unchecked)]` removes the checks on both sides for speed: an out-of-range index is
//! then undefined behaviour, as in CUDA C++.
//!
//! On the GPU a check is one compare and one unlikely branch to an error path that never
//! returns, so checked loads are still issued together. Measured on an H100: `y = a * x + b`
//! costs 0.8% more checked; the lesson 3.0 blur (36 loads per pixel) 2.04 ms checked against
//! 1.63 ms unchecked, +25%, mostly because the indices an error would report stay in registers
//! (64 per thread instead of 48), so fewer threads fit on a multiprocessor.
//!
//! ### Checks that cannot fail are left out
//!
//! On the GPU, an access whose indices are proven in range is emitted without a check, as
//! `a.at(i) /* in bounds: i guard */` (the comment in `%source` says why). Proofs come from:
//! a dominating guard (`if i < a.len()`, `if y < h && x < w` with `let h = img.shape(0)`, the
//! `else` of `if i >= n`), an early exit (`if i >= a.len() { return; }`, also `break`/`continue`),
//! a loop range (`for k in 0..a.len()`), an access already checked on the same array in an earlier
//! statement, and the index's form: `e.max(1).min(n) - 1`, `e.min(n - 1)` and `e % n` below an `n`
//! known to be positive. Only immutable bindings count; `let j = i` is seen through. Anything else
//! keeps its check and reports exactly as before (`if i <= a.len()` still fails at `i == len`).
//! In the lesson 3.0 blur the nine loads are proven (guard, clamp, loop) and the store, guarded
//! by the input's shape rather than its own, keeps its one check. The CPU backend keeps every
//! check (they cost little there).
//!
//! ### Checks the launch decides
//!
//! A check that stays may still be decided before the kernel runs, from its arguments. Each
//! thread reaching the blur's `out[[y, x, c]]` has `y < img.shape(0)`, `x < img.shape(1)` and
//! `c < img.shape(2)`, so `img.shape(d) <= out.shape(d)` on all three axes puts every store in
//! range. When every check left in a kernel has such tests (a guard's, loop's, clamp's or
//! remainder's bound that is an array parameter's length or axis, a `usize` parameter or a
//! constant, compared with the accessed array's length or axis), the kernel also gets an
//! unchecked twin (`NAME__proven`, its `#[kernel(unchecked)]` translation). A CUDA launch whose
//! arguments pass every test runs the twin; any other launch runs the checked kernel, which
//! reports the first bad index exactly as before. `%source` names the tests above the kernel.
//! Merely moving the checks out of the loop would not do: on an H100 the blur with its checks
//! tested once per thread ran 1.88 ms against 1.61 ms unchecked, as the extra code changed how
//! `ptxas` scheduled the loads; the twin is the unchecked machine code itself.
//!
//! ## What is rejected, and why
//!
//! * Closures, iterators (`.iter()`, `.map()`, `.sum()`), `if let`, `?`, async, labels, and
//!   `match` on anything but integers and bools: they have no direct CUDA C++ form; use index
//!   loops and `if`/`else`.
//! * References and dereferences (except `&mut a[i]` as an atomic's target), struct literals,
//!   tuples (except `let` destructuring), array literals other than a local array's `let`,
//!   slicing `a[i..j]`: kernel data lives in the parameters, shared arrays and local arrays.
//! * `String`, `Vec`, `Box`, string literals, anything from the heap: a GPU thread has no
//!   allocator.
//! * Macros (`println!`, `assert!`, ...): they expand to code the translator cannot see.
//! * Items declared outside the function (other than `#[device]` helpers): the macro sees only
//!   the function it is attached to. Declare `const`s inside the body.
//! * Generic kernels, kernel names that are C++ keywords or CUDA built-ins (`double`, `float`,
//!   `max`, ...), because the kernel keeps its name in CUDA.
//! * CUDA C++ and Numba names that are not intrinsics here (`__syncthreads`, `syncwarp`,
//!   `threadfence`, `shfl_sync`, `atomic_and`, ...): the error lists the intrinsics there are.
//! * Attributes on a kernel other than doc comments, `cfg` and lint levels.
//! * Mutually recursive `#[device]` helpers (a helper calling itself is fine).
//!
//! ## What `#[kernel]` generates
//!
//! A unit struct named like the function with `INFO` (the CUDA source, parameters and CPU twin
//! for the runtime), `launch((blocks, threads), args..)`, `source()` (CUDA C++ with helpers) and
//! `ptx()`. See "The kernel ABI" in `docs/ARCHITECTURE.md`.

mod cpu;
mod cuda;
mod expand;
mod infer;
mod ir;
mod methods;
mod names;
mod parse;
mod types;

#[cfg(test)]
mod testing;

use proc_macro::TokenStream;

/// A GPU kernel written in Rust (see the crate documentation for the language).
/// `#[kernel(unchecked)]` turns bounds checks off.
#[proc_macro_attribute]
pub fn kernel(attr: TokenStream, item: TokenStream) -> TokenStream {
    expand::kernel(attr.into(), item.into())
        .unwrap_or_else(syn::Error::into_compile_error)
        .into()
}

/// A helper function callable from kernels (scalars in, a scalar out).
#[proc_macro_attribute]
pub fn device(attr: TokenStream, item: TokenStream) -> TokenStream {
    expand::device(attr.into(), item.into())
        .unwrap_or_else(syn::Error::into_compile_error)
        .into()
}

/// An elementwise scalar function applied to whole arrays on the GPU or the CPU.
#[proc_macro_attribute]
pub fn vectorize(attr: TokenStream, item: TokenStream) -> TokenStream {
    expand::vectorize(attr.into(), item.into())
        .unwrap_or_else(syn::Error::into_compile_error)
        .into()
}
