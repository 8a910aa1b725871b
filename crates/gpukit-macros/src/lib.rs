//! Scaffolding: replaced by the translator.
use proc_macro::TokenStream;

/// A GPU kernel written in Rust.
#[proc_macro_attribute]
pub fn kernel(_attr: TokenStream, item: TokenStream) -> TokenStream {
    item
}

/// A helper callable from kernels.
#[proc_macro_attribute]
pub fn device(_attr: TokenStream, item: TokenStream) -> TokenStream {
    item
}

/// An elementwise function applied to arrays.
#[proc_macro_attribute]
pub fn vectorize(_attr: TokenStream, item: TokenStream) -> TokenStream {
    item
}
