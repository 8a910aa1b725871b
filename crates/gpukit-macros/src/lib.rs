//! Kernel language docs: see below.
//!
//! (Full reference written below.)

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

/// A GPU kernel written in Rust: see the crate documentation for the language.
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
