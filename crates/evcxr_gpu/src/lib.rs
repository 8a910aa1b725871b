//! # evcxr_gpu
//!
//! A Jupyter kernel for Rust built on the `evcxr` library, with GPU magics backed by gpukit.
//!
//! * [`protocol`]: Jupyter messaging over ZeroMQ (sockets, HMAC, request handlers).
//! * [`session`]: the evcxr `CommandContext`, start-up, build progress, errors.
//! * [`cell`] and [`magics`]: how a cell becomes Rust (one module per magic).
//! * [`escapes`]: which cell lines are `%` magics and `!` commands (a lexer over the cell).
//! * [`rewrite`]: appending code after a cell without losing its displayed value.
//! * [`annotate`]: typing `let`s from the compiler where evcxr's analysis cannot (macro-made items).
//! * [`install`]: the kernelspec.
//! * [`cell_rustc`]: flags for the rustc command of each cell (this binary is evcxr's rustc wrapper).
//! * [`dep_lock`]: one kernel at a time builds a dependency through evcxr's shared compile cache.
//! * [`rustc_args`]: reading the rustc command line the wrapper receives (for the two above).
//! * [`cli`]: the command line of the binary.

pub mod annotate;
pub mod cell;
pub mod cell_rustc;
pub mod cli;
pub mod dep_lock;
pub mod escapes;
pub mod install;
pub mod magics;
pub mod protocol;
pub mod publisher;
pub mod rewrite;
pub mod rustc_args;
pub mod session;
