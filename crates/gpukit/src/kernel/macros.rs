//! `launch!`: the Numba-style launch syntax; `graph!`: a block captured into a graph.

/// Launches a kernel: `launch!(foo[blocks, threads](args...))`, as Numba's
/// `foo[blocks, threads](args...)`.
///
/// `blocks` and `threads` are integers or 2-/3-tuples of integers (`[(16, 16), (8, 8)]`).
/// Works for `#[kernel]` functions and for raw CUDA kernels ([`CudaKernel`](crate::CudaKernel));
/// it expands to `foo.launch((blocks, threads), args...)` and returns `gpukit::Result<()>`.
///
/// ```no_run
/// use gpukit::prelude::*;
///
/// #[kernel]
/// fn fill(out: &mut [f32], v: f32) {
///     let i = grid(1);
///     if i < out.len() {
///         out[i] = v;
///     }
/// }
///
/// # fn main() -> gpukit::Result<()> {
/// let mut out = Array::<f32>::zeros(1000)?;
/// launch!(fill[4, 256](&mut out, 1.5))?;
/// # Ok(())
/// # }
/// ```
#[macro_export]
macro_rules! launch {
    ($k:path [$blocks:expr, $threads:expr $(,)?] ($($arg:expr),* $(,)?)) => {
        $crate::__launch_arity!(
            $k,
            ($blocks, $threads),
            ($($arg),*),
            [Launch0 Launch1 Launch2 Launch3 Launch4 Launch5 Launch6 Launch7 Launch8 Launch9
             Launch10 Launch11 Launch12 Launch13 Launch14 Launch15 Launch16],
            [$(($arg))*]
        )
    };
}

/// Picks the `arity::LaunchN` trait matching the argument count (for raw CUDA kernels) and
/// calls `launch`; a `#[kernel]`'s own `launch` method takes precedence over the trait.
#[doc(hidden)]
#[macro_export]
macro_rules! __launch_arity {
    ($k:path, $cfg:expr, ($($arg:expr),*), [$tr:ident $($rest:ident)*], []) => {{
        #[allow(unused_imports)]
        use $crate::__private::arity::$tr as _;
        $k.launch($cfg, $($arg),*)
    }};
    ($k:path, $cfg:expr, ($($arg:expr),*), [$tr:ident $($rest:ident)*], [$first:tt $($more:tt)*]) => {
        $crate::__launch_arity!($k, $cfg, ($($arg),*), [$($rest)*], [$($more)*])
    };
}

/// Captures a block into a [`Graph`](crate::Graph) on the default device:
/// `graph! { stmts }` is `Graph::capture(|| { stmts; Ok(()) })`, with `?` usable inside; the
/// block's last expression, if it has one, must be `()` or a `gpukit::Result<()>` (a launch
/// without `;`). `graph!(on DEVICE; stmts)` captures on `DEVICE` (a `&Device`).
///
/// ```no_run
/// use gpukit::prelude::*;
///
/// #[kernel]
/// fn scale(a: &mut [f32], s: f32) {
///     let i = grid(1);
///     if i < a.len() {
///         a[i] *= s;
///     }
/// }
///
/// # fn main() -> gpukit::Result<()> {
/// let mut a = Array::<f32>::ones(1000)?;
/// let g = graph! {
///     launch!(scale[4, 256](&mut a, 2.0))?;
///     a.add_in_place(1.0)?;
/// }?;
/// g.launch_n(10)?;
/// # Ok(())
/// # }
/// ```
#[macro_export]
macro_rules! graph {
    (on $device:expr; $($body:tt)*) => {
        $crate::Graph::capture_on($device, || -> $crate::Result<()> {
            $crate::__private::GraphStep::into_step({ $($body)* })
        })
    };
    ($($body:tt)*) => {
        $crate::Graph::capture(|| -> $crate::Result<()> {
            $crate::__private::GraphStep::into_step({ $($body)* })
        })
    };
}
