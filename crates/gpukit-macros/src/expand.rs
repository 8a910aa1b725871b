//! The items each attribute generates (see "The kernel ABI" in docs/ARCHITECTURE.md).

use crate::cpu::{self, prim_ty};
use crate::ir::{Func, ParamTy};
use crate::types::Prim;
use crate::{cuda, infer, parse};
use proc_macro2::TokenStream;
use quote::{format_ident, quote, quote_spanned};
use syn::{Error, Result};

/// Lints that generated code may trip without the user being at fault.
fn allow_generated() -> TokenStream {
    quote!(#[allow(unused_parens, unused_mut, unused_variables, unused_unsafe, unused_braces,
        non_snake_case, unreachable_code, unused_assignments, clippy::all, clippy::pedantic)])
}

/// `#[kernel]` / `#[kernel(unchecked)]`.
pub fn kernel(attr: TokenStream, item: TokenStream) -> Result<TokenStream> {
    let checked = match attr.to_string().trim() {
        "" => true,
        "unchecked" => false,
        _ => {
            return Err(Error::new_spanned(&attr,
                "`#[kernel]` takes no options or `unchecked` (`#[kernel(unchecked)]` turns off bounds checks)",
            ))
        }
    };
    let item: syn::ItemFn = syn::parse2(item)?;
    let mut f = parse::kernel(&item, checked)?;
    infer::infer(&mut f)?;
    let cuda::KernelSources {
        kernel: cuda_source,
        twin,
    } = cuda::kernel_sources(&mut f)?;
    let cpu_body = cpu::kernel_body(&f)?;
    let rt = quote!(::gpukit::__private);
    let proven = twin_tokens(twin.as_ref(), &rt);
    let name = &item.sig.ident;
    let name_str = name.to_string();
    let vis = &item.vis;
    let docs = item.attrs.iter().filter(|a| a.path().is_ident("doc"));
    let rust_source = source_text(
        &item,
        if checked {
            "#[kernel]"
        } else {
            "#[kernel(unchecked)]"
        },
    );
    let device_fns = device_refs(&f);

    let mut params = Vec::new();
    let mut array_names = Vec::new();
    for p in &f.params {
        let pname = f.vars[p.var].name.to_string();
        let (kind, elem, ndim) = match p.ty {
            ParamTy::Slice { elem, mutable } => {
                array_names.push(pname.clone());
                (if mutable { "SliceMut" } else { "Slice" }, elem, 1usize)
            }
            ParamTy::View {
                elem,
                ndim,
                mutable,
            } => {
                array_names.push(pname.clone());
                (if mutable { "ViewMut" } else { "View" }, elem, ndim)
            }
            ParamTy::Scalar(s) => ("Scalar", s, 0),
        };
        let kind = format_ident!("{}", kind);
        let dtype = format_ident!("{}", elem.dtype().expect("parameter types have a dtype"));
        params.push(quote!(#rt::ParamInfo { name: #pname, kind: #rt::ParamKind::#kind, dtype: #rt::DType::#dtype, ndim: #ndim }));
    }
    let mut extra: Vec<(usize, String)> = f
        .shared
        .iter()
        .map(|s| (s.array_id, f.vars[s.var].name.to_string()))
        .chain(
            f.locals
                .iter()
                .map(|l| (l.array_id, f.vars[l.var].name.to_string())),
        )
        .collect();
    extra.sort();
    array_names.extend(extra.into_iter().map(|(_, n)| n));
    let shared_bytes = f
        .shared
        .iter()
        .map(|s| s.offset + s.len as usize * (s.elem.bits() as usize / 8))
        .max()
        .unwrap_or(0);
    let shared_bytes = shared_bytes.div_ceil(8) * 8;
    let uses_barrier = f.uses_barrier;

    // launch(): typed arguments.
    let config = if f.params.iter().any(|p| f.vars[p.var].name == "config") {
        format_ident!("__config")
    } else {
        format_ident!("config")
    };
    let mut generics = Vec::new();
    let mut bounds = Vec::new();
    let mut inputs = Vec::new();
    let mut args = Vec::new();
    for (i, p) in f.params.iter().enumerate() {
        let pname = f.vars[p.var].name.clone();
        match p.ty {
            ParamTy::Slice { elem, mutable } | ParamTy::View { elem, mutable, .. } => {
                let g = format_ident!("A{}", i);
                let e = prim_ty(elem);
                let tr = if mutable {
                    quote!(SliceMutArg)
                } else {
                    quote!(SliceArg)
                };
                bounds.push(quote!(#g: #rt::#tr<'a, #e>));
                generics.push(g.clone());
                inputs.push(quote!(#pname: #g));
                args.push(quote!(#pname.into_kernel_arg()));
            }
            ParamTy::Scalar(s) => {
                let t = prim_ty(s);
                inputs.push(quote!(#pname: #t));
                if s.carrier() == s {
                    args.push(quote!(#rt::KernelArg::scalar(#pname)));
                } else {
                    let c = prim_ty(s.carrier());
                    args.push(quote!(#rt::KernelArg::scalar(#pname as #c)));
                }
            }
        }
    }
    let allow = allow_generated();
    let launch_doc = format!(
        "Launches `{name_str}`: `{name_str}.launch((blocks, threads), ..)`, or `launch!({name_str}[blocks, threads](..))`."
    );
    Ok(quote! {
        #(#docs)*
        #[allow(non_camel_case_types, dead_code)]
        #[derive(Clone, Copy, Debug)]
        #vis struct #name;

        #[allow(dead_code)]
        impl #name {
            /// Metadata: generated CUDA C++, parameters, CPU twin.
            pub const INFO: #rt::KernelInfo = #rt::KernelInfo {
                name: #name_str,
                rust_source: #rust_source,
                cuda_source: #cuda_source,
                device_fns: &[#(#device_fns),*],
                params: &[#(#params),*],
                array_names: &[#(#array_names),*],
                checked: #checked,
                proven: #proven,
                uses_barrier: #uses_barrier,
                shared_bytes: #shared_bytes,
                cpu: Self::__gpukit_cpu_block,
            };

            #[doc(hidden)]
            #allow
            fn __gpukit_cpu_block(__b: &#rt::BlockCtx, __a: &#rt::CpuArgs) {
                #cpu_body
            }

            #[doc = #launch_doc]
            #[allow(clippy::too_many_arguments)]
            #[allow(clippy::needless_lifetimes)]
            pub fn launch<'a, #(#generics),*>(&self, #config: impl #rt::IntoLaunchConfig, #(#inputs),*) -> ::gpukit::Result<()>
            where #(#bounds),*
            {
                #rt::launch(&Self::INFO, #config, [#(#args),*])
            }

            /// The generated CUDA C++ (with the `#[device]` helpers it calls), for `%source`.
            pub fn source(&self) -> ::std::string::String {
                #rt::full_source(&Self::INFO)
            }

            /// PTX for the default device, compiling if needed, for `%ptx`.
            pub fn ptx(&self) -> ::gpukit::Result<::std::string::String> {
                #rt::ptx(&Self::INFO)
            }

            /// Registers, memory and occupancy of the kernel on the default GPU, for
            /// `%kernelinfo`.
            pub fn resources(&self) -> ::gpukit::Result<::gpukit::KernelResources> {
                #rt::resources(&Self::INFO)
            }

            /// The machine code (SASS) of the kernel on the default GPU, for `%sass`.
            pub fn sass(&self) -> ::gpukit::Result<::std::string::String> {
                #rt::sass(&Self::INFO)
            }

            /// How the kernel is loaded on the default GPU (machine code for it, or PTX, and
            /// whether the code was compiled now or came from a cache), loading it if needed.
            pub fn code(&self) -> ::gpukit::Result<::gpukit::LoadedCode> {
                #rt::code(&Self::INFO)
            }
        }
    })
}

/// `#[device]`.
pub fn device(attr: TokenStream, item: TokenStream) -> Result<TokenStream> {
    no_options(&attr, "#[device]")?;
    let item: syn::ItemFn = syn::parse2(item)?;
    let mut f = parse::device(&item)?;
    infer::infer(&mut f)?;
    let (decl, def) = cuda::device_fn(&f)?;
    let body = cpu::scalar_body(&f)?;
    let rt = quote!(::gpukit::__private);
    let name = &item.sig.ident;
    let name_str = name.to_string();
    let konst = format_ident!("__GPUKIT_DEVICE_{}", name);
    let vis = &item.vis;
    let attrs = &item.attrs;
    let sig = &item.sig;
    // A recursive helper is already in the list that holds it.
    f.callees.retain(|c| !c.path.is_ident(name));
    let callees = device_refs(&f);
    let allow = allow_generated();
    Ok(quote! {
        #(#attrs)*
        #allow
        #vis #sig #body

        #[doc(hidden)]
        #[allow(non_upper_case_globals, dead_code)]
        #vis const #konst: #rt::DeviceFn = #rt::DeviceFn {
            name: #name_str,
            decl: #decl,
            def: #def,
            callees: &[#(#callees),*],
        };
    })
}

/// `#[vectorize]`.
pub fn vectorize(attr: TokenStream, item: TokenStream) -> Result<TokenStream> {
    no_options(&attr, "#[vectorize]")?;
    let item: syn::ItemFn = syn::parse2(item)?;
    let mut f = parse::vectorize(&item)?;
    infer::infer(&mut f)?;
    let cuda_source = cuda::vectorize_source(&f)?;
    let body = cpu::scalar_body(&f)?;
    let rt = quote!(::gpukit::__private);
    let name = &item.sig.ident;
    let name_str = name.to_string();
    let konst = format_ident!("__GPUKIT_VECTORIZE_{}", name);
    let vis = &item.vis;
    let docs = forwarded_attrs(&item)?;
    let ret = match f.kind {
        crate::ir::FuncKind::Vectorize { ret } => ret,
        _ => Prim::F64,
    };
    let ret_ty = prim_ty(ret);
    let arity = f.params.len();
    let runner = format_ident!("vectorize{}", arity);
    let mut generics = Vec::new();
    let mut inputs = Vec::new();
    let mut closure_params = Vec::new();
    let mut names = Vec::new();
    for (i, p) in f.params.iter().enumerate() {
        let ParamTy::Scalar(s) = p.ty else { continue };
        let t = prim_ty(s);
        let g = format_ident!("A{}", i);
        let var = &f.vars[p.var];
        let pname = &var.name;
        let m = var.mutable.then(|| quote!(mut));
        generics.push(quote!(#g: #rt::VecArg<#t>));
        inputs.push(quote!(#pname: #g));
        closure_params.push(quote!(#m #pname: #t));
        names.push(pname.clone());
    }
    let rust_source = source_text(&item, "#[vectorize]");
    let allow = allow_generated();
    let doc = format!(
        "Applies `{name_str}` to every element (arrays of equal shape, or scalars and length-1 arrays broadcast), on the device of the first array argument."
    );
    Ok(quote! {
        #(#docs)*
        #[doc = #doc]
        #allow
        #vis fn #name<#(#generics),*>(#(#inputs),*) -> ::gpukit::Result<::gpukit::Array<#ret_ty>> {
            #rt::#runner(&#konst, #(#names,)* |#(#closure_params),*| -> #ret_ty #body)
        }

        #[doc(hidden)]
        #[allow(non_upper_case_globals, dead_code)]
        #vis const #konst: #rt::VectorizeInfo = #rt::VectorizeInfo {
            name: #name_str,
            arity: #arity,
            rust_source: #rust_source,
            cuda_source: #cuda_source,
        };
    })
}

/// The attributes of the function that carry over to the generated items: docs, `cfg` and
/// lint levels. Others have no meaning for a kernel and are errors.
fn forwarded_attrs(item: &syn::ItemFn) -> Result<Vec<&syn::Attribute>> {
    let keep = ["doc", "cfg", "cfg_attr", "allow", "warn", "deny", "expect"];
    item.attrs
        .iter()
        .map(|a| {
            if keep.iter().any(|k| a.path().is_ident(k)) {
                Ok(a)
            } else {
                Err(Error::new_spanned(
                    a,
                    "this attribute cannot be applied to a kernel (doc comments, `cfg` and lint levels can)",
                ))
            }
        })
        .collect()
}

fn no_options(attr: &TokenStream, what: &str) -> Result<()> {
    if attr.is_empty() {
        Ok(())
    } else {
        Err(Error::new_spanned(
            attr,
            format!("`{what}` takes no options"),
        ))
    }
}

/// `&path::__GPUKIT_DEVICE_name` for each `#[device]` function called, spanned at the call so
/// that calling a function without `#[device]` points there.
fn device_refs(f: &Func) -> Vec<TokenStream> {
    f.callees
        .iter()
        .map(|c| {
            let mut path = c.path.clone();
            let last = path.segments.last_mut().expect("a path has a segment");
            let span = last.ident.span();
            last.ident = syn::Ident::new(&format!("__GPUKIT_DEVICE_{}", last.ident), span);
            quote_spanned!(span=> &#path)
        })
        .collect()
}

/// The item as written (from the source file when the compiler provides it).
fn source_text(item: &syn::ItemFn, attr: &str) -> String {
    let params = item.sig.paren_token.span.join().source_text();
    let body = item.block.brace_token.span.join().source_text();
    let ret = match &item.sig.output {
        syn::ReturnType::Default => String::new(),
        syn::ReturnType::Type(_, t) => format!(" -> {}", quote!(#t)),
    };
    let vis = match &item.vis {
        syn::Visibility::Inherited => String::new(),
        v => format!("{} ", quote!(#v)),
    };
    match (params, body) {
        (Some(p), Some(b)) => format!("{attr}\n{vis}fn {}{p}{ret} {b}", item.sig.ident),
        _ => format!("{attr}\n{}", quote!(#item)),
    }
}

/// The `proven` field of a kernel's `KernelInfo`: its unchecked twin and the launch tests that
/// select it, or `None`.
fn twin_tokens(twin: Option<&cuda::Twin>, rt: &TokenStream) -> TokenStream {
    let Some(t) = twin else {
        return quote!(None);
    };
    let value = |v: &cuda::LaunchValue| match v {
        cuda::LaunchValue::Len(n) => quote!(#rt::LaunchValue::Len(#n)),
        cuda::LaunchValue::Shape(n, d) => quote!(#rt::LaunchValue::Shape(#n, #d)),
        cuda::LaunchValue::Scalar(n) => quote!(#rt::LaunchValue::Scalar(#n)),
        cuda::LaunchValue::Lit(n) => {
            let n = u64::try_from(*n).unwrap_or(u64::MAX);
            quote!(#rt::LaunchValue::Lit(#n))
        }
    };
    let tests = t.tests.iter().map(|test| {
        let (lhs, rhs, strict, text) =
            (value(&test.lhs), value(&test.rhs), test.strict, &test.text);
        quote!(#rt::LaunchTest { lhs: #lhs, strict: #strict, rhs: #rhs, text: #text })
    });
    let (symbol, source) = (&t.symbol, &t.source);
    quote!(Some(&#rt::ProvenTwin {
        symbol: #symbol,
        cuda_source: #source,
        tests: &[#(#tests),*],
    }))
}

#[cfg(test)]
mod tests {
    use quote::quote;

    #[test]
    fn kernel_items() {
        let out = super::kernel(
            quote!(),
            quote!(
                fn k(a: &[f32], b: &mut View3<u8>, s: usize) {
                    let i = grid(1);
                }
            ),
        )
        .unwrap()
        .to_string();
        for e in [
            "struct k ;",
            "name : \"k\"",
            "ParamKind :: Slice , dtype : :: gpukit :: __private :: DType :: F32 , ndim : 1usize",
            "ParamKind :: ViewMut , dtype : :: gpukit :: __private :: DType :: U8 , ndim : 3usize",
            "ParamKind :: Scalar , dtype : :: gpukit :: __private :: DType :: U64",
            "array_names : & [\"a\" , \"b\"]",
            "checked : true",
            "A0 : :: gpukit :: __private :: SliceArg < 'a , f32 >",
            "A1 : :: gpukit :: __private :: SliceMutArg < 'a , u8 >",
            "KernelArg :: scalar (s as u64)",
            "pub fn source",
            "pub fn ptx",
            "pub fn resources",
        ] {
            assert!(out.contains(e), "missing `{e}` in {out}");
        }
        let unchecked = super::kernel(
            quote!(unchecked),
            quote!(
                fn k(a: &mut [f32]) {}
            ),
        )
        .unwrap()
        .to_string();
        assert!(unchecked.contains("checked : false"));
        assert!(super::kernel(
            quote!(fast),
            quote!(
                fn k() {}
            )
        )
        .is_err());
    }

    #[test]
    fn device_and_vectorize_items() {
        let out = super::device(
            quote!(),
            quote!(
                fn fact(n: u64) -> u64 {
                    if n == 0 {
                        1
                    } else {
                        n * fact(n - 1)
                    }
                }
            ),
        )
        .unwrap()
        .to_string();
        assert!(out.contains("const __GPUKIT_DEVICE_fact"), "{out}");
        assert!(
            out.contains("callees : & []"),
            "a recursive helper does not list itself: {out}"
        );
        let out = super::vectorize(
            quote!(),
            quote!(
                fn f(x: f32, y: i32) -> f64 {
                    x as f64 + y as f64
                }
            ),
        )
        .unwrap()
        .to_string();
        for e in [
            "vectorize2 (& __GPUKIT_VECTORIZE_f , x , y , | x : f32 , y : i32 | -> f64",
            "arity : 2usize",
            "A0 : :: gpukit :: __private :: VecArg < f32 >",
        ] {
            assert!(out.contains(e), "missing `{e}` in {out}");
        }
    }
}
