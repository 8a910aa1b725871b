//! Errors and translations of whole functions, across the grammar.

use crate::testing::kernel_error;

fn scalar_fn_error(src: &str, device: bool) -> String {
    let item: syn::ItemFn = syn::parse_str(src).expect("parses");
    let r = if device {
        super::device(&item)
    } else {
        super::vectorize(&item)
    };
    match r {
        Ok(_) => panic!("expected an error for {src}"),
        Err(e) => e.to_string(),
    }
}

/// Odd inputs give errors or translations, never a panic.
#[test]
fn odd_inputs_never_panic() {
    for body in [
        "a[0] = 340282366920938463463374607431768211455;",
        "a[0] = -170141183460469231731687303715884105728 as f32;",
        "let r#type = 1.0; a[0] = r#type;",
        "",
        "a[[0]] = 1.0;",
        "v[0] = 1;",
        "let s = v.shape(5);",
        "let d = 1; let s = v.shape(d);",
        "let g = grid();",
        "atomic_add(a[0], 1.0);",
        "let mut x = 1.0; atomic_add(&mut x, 1.0);",
        "let t = shared_array::<f32>();",
        "let t = shared_array::<f32, 0>();",
        "let (p, q) = (1, 2, 3);",
        "loop { break 5; }",
        "let t = thread_idx(); let z = t.w;",
        "unsafe { a[0] = 1.0; }",
        "let x = a; ",
        "a = b;",
        "let f = f32::frobnicate(1.0);",
        "let f = f32::sqrt();",
        "for i in 0.. { }",
        "for i in (0..4).step_by(1).rev() { }",
        "let x = if true { 1 };",
        "let x: f32 = if true { 1.0 } else { return; };",
        "break;",
        "let x = std::f32::consts::NOPE;",
        "let x = 1 + ; ",
        "let w: [f32; 3] = [1.0; 4];",
        "let w = [];",
        "let w = [a];",
        "let w = [0; 5000];",
        "let mut w = [0; N];",
        "let w: [f32; 2]; ",
        "let mut w = [0.0; 3]; let z = w; a[0] = w[5];",
    ] {
        let src = format!("fn k(a: &mut [f32], b: &[i32], v: &mut View2<i32>) {{ {body} }}");
        let outcome = std::panic::catch_unwind(|| {
            if let Ok(item) = syn::parse_str::<syn::ItemFn>(&src) {
                if let Ok(mut f) = super::kernel(&item, true) {
                    if crate::infer::infer(&mut f).is_ok() {
                        let _ = crate::cuda::kernel_source(&f);
                        let _ = crate::cpu::kernel_body(&f);
                    }
                }
            }
        });
        assert!(outcome.is_ok(), "panicked on `{body}`");
    }
    let e = kernel_error("fn r#match(a: &mut [f32]) {}");
    assert!(e.contains("raw identifiers"), "{e}");
}

#[test]
fn helpers_take_scalars_and_no_thread_intrinsics() {
    for (src, device, msg) in [
        ("fn h(a: &[f32]) -> f32 { a[0] }", true, "takes scalars"),
        (
            "fn h(x: f32) -> f32 { x + grid(1) as f32 }",
            true,
            "only available in #[kernel]",
        ),
        (
            "fn h(x: f32) -> f32 { let t = shared_array::<f32, 4>(); x }",
            true,
            "shared arrays exist only in #[kernel]",
        ),
        (
            "fn h(x: f32) -> f32 { let y = x; }",
            true,
            "must end with the value it returns",
        ),
        ("fn f(x: f32) {}", false, "add `-> T`"),
        ("fn f(x: i16) -> f32 { 1.0 }", false, "array element types"),
        (
            "fn f(x: f32) -> f32 { helper(x) }",
            false,
            "cannot call other functions",
        ),
        (
            "fn f(a: f32, b: f32, c: f32, d: f32, e: f32) -> f32 { a }",
            false,
            "1 to 4 inputs",
        ),
    ] {
        let e = scalar_fn_error(src, device);
        assert!(e.contains(msg), "for `{src}` expected `{msg}`, got `{e}`");
    }
}

#[test]
fn unsupported_constructs_are_errors_with_guidance() {
    for (src, msg) in [
    ("fn k(a: &mut [f32]) { let f = |x: f32| x; }", "closures are not supported"),
    ("fn k(a: &mut [f32]) { println!(\"hi\"); }", "macros (`println!`) are not supported"),
    ("fn k(a: &mut [f32]) { let v = Vec::new(); }", "there is no heap"),
    ("fn k(a: &mut [f32]) { let r = &a[0]; }", "references cannot be taken"),
    ("fn k(a: &mut [f32]) { a[0] = a.iter().sum(); }", "kernel code uses index loops"),
    ("fn k(a: &mut [f32]) { a[0] = a[0].frobnicate(); }", "unsupported method `frobnicate`"),
    ("fn k(a: &mut String) { }", "unsupported parameter type"),
    ("fn k(a: &[f32]) { a[0] = 1.0; }", "read-only parameter; declare it `&mut`"),
    ("fn k(a: &mut [f32]) { a[0] = 1; }", "mismatched types"),
    ("fn k(a: &mut [f32]) { let i: u32 = 0; a[i] = 1.0; }", "mismatched types"),
    (
        "fn k(a: &mut [f32]) { match 1 { 0 => a[0] = 1.0, 1 => {} } }",
        "the last arm of a `match` in kernel code catches everything else",
    ),
    (
        "fn k(a: &mut [f32]) { match 1 { _ => {} _ => {} } }",
        "only the last arm of a `match` can catch everything",
    ),
    (
        "fn k(a: &mut [f32]) { let p = 1; match p { Some(x) => {} _ => {} } }",
        "`match` in kernel code supports literal patterns",
    ),
    ("fn k(a: &mut [f32]) { let p = Point { x: 1 }; }", "struct literals are not supported"),
    ("fn k(a: &mut [f32]) { a[0] = undefined_var; }", "cannot find `undefined_var`"),
    ("fn k(a: &mut [f32]) { let (x, y) = grid(2); }", "use `grid2()`"),
    ("fn k(a: &mut [f32]) { let t = shared_array::<f32, M>(); }", "is not a `const` declared in this kernel"),
    ("fn k(a: &mut [f32]) { let t = shared_array::<f64, 10000>(); }", "at most 49152 bytes"),
    ("fn k(a: &mut [u32]) { a[0] = -a[0]; }", "cannot negate a value of type `u32`"),
    ("fn k(a: &mut [f32]) -> f32 { 1.0 }", "a kernel returns nothing"),
    ("fn k<T>(a: &mut [T]) { }", "cannot be generic"),
    ("fn double(a: &mut [f32]) { }", "reserved word"),
    ("fn k(a: &mut [f32]) { a[0] = a[1..2][0]; }", "only array parameters, shared arrays and local arrays"),
    ("fn k(a: &mut [f32]) { let s = \"x\"; }", "strings are not supported"),
    ("fn k(a: &mut [f32]) { for x in a { } }", "for loops iterate over integer ranges"),
    ("fn k(a: &mut [f32]) { 'outer: loop { break 'outer; } }", "loop labels are not supported"),
    ("fn k(a: &mut [f32]) { a[0] = f32::sqrt(2.0, 3.0); }", "takes 0 argument(s)"),
    ("fn k(a: &mut [f32]) { let x = 1.0; a[0] = (x + if x > 0.0 { let y = 1.0; y } else { 0.0 }) as f32; }", "compute it into a variable first"),
] {
    let e = kernel_error(src);
    assert!(e.contains(msg), "for `{src}` expected `{msg}`, got `{e}`");
}
}
