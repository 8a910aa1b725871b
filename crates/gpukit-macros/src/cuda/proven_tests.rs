//! Bounds-check elision: each rule, its look-alikes that must keep their check, the lesson blur.

use super::super::tests::BLUR;
use crate::testing::{body, kernel_cuda, kernel_ir, nvrtc_compiles, nvrtc_ptx};

/// Bounds-check elision (`proven.rs`): an access proven in range is emitted as `.at(..)` with a
/// comment, and its checked PTX has no call to the error path; a look-alike that can fail keeps
/// its check. Each case: (kernel, accesses that must be elided, accesses that must stay checked).
const ELISION_CASES: &[(&str, &[&str], &[&str])] = &[
    // A dominating guard on the same array.
    (
        "fn k(a: &[f32], out: &mut [f32]) { let i = grid(1); if i < out.len() && i < a.len() { out[i] = a[i] * 2.0; } }",
        &["out.at(i) /* in bounds: i guard */", "a.at(i) /* in bounds: i guard */"],
        &[],
    ),
    // `b > i` is the same guard; an early return proves it for the rest of the block.
    (
        "fn k(a: &mut [i32]) { let i = grid(1); if i >= a.len() { return; } a[i] = 1; }",
        &["a.at(i) /* in bounds: i guard */"],
        &[],
    ),
    (
        "fn k(a: &mut [i32]) { let i = grid(1); if a.len() > i { a[i] = 1; } }",
        &["a.at(i)"],
        &[],
    ),
    // Two axes through aliases of the shape (`let h = img.shape(0)`).
    (
        "fn k(img: &View2<f32>, out: &mut View2<f32>) { let (x, y) = grid2(); let h = img.shape(0); let w = img.shape(1); if y < h && x < w { out[[y, x]] = img[[y, x]]; } }",
        &["img.at(y, x) /* in bounds: y guard, x guard */"],
        &["out(y, x)"],
    ),
    // A loop range bounded by the length; an alias of a proven index.
    (
        "fn k(a: &[f32], out: &mut [f32]) { let mut s = 0.0f32; for j in 0..a.len() { let t = j; s += a[t]; } out[0] = s; }",
        &["a.at(t) /* in bounds: t loop range */"],
        &["out[0ull]"],
    ),
    // The same index already checked on the same array.
    (
        "fn k(a: &mut [f32], i: usize) { a[i] = 1.0; a[i] += 2.0; }",
        &["a.at(i) /* in bounds: i checked before */ += 2.0f;"],
        &["a[i] = 1.0f;"],
    ),
    // clamp, `min(b - 1)` and `%` below a bound known to be positive.
    (
        "fn k(a: &[f32], out: &mut [f32], d: usize) { let i = grid(1); let n = a.len(); if i < n { let j = (i + d).max(1).min(n) - 1; let m = (i + d).min(n - 1); out[0] = a[j] + a[m] + a[(i + d) % n]; } }",
        &["a.at(j) /* in bounds: j clamped */", "a.at(m) /* in bounds: m clamped */", "a.at(__gk_rem(i + d, n)) /* in bounds: index remainder */"],
        &["out[0ull]"],
    ),
    // Shared arrays have a constant length.
    (
        "fn k(out: &mut [f32]) { let tile = shared_array::<f32, 256>(); let t = thread_idx().x as usize; if t < 128 { tile[t] = 1.0; } }",
        &["tile.at(t) /* in bounds: t guard */"],
        &[],
    ),
];

#[test]
fn accesses_proven_in_range_are_not_checked() {
    for (src, elided, kept) in ELISION_CASES {
        let full = kernel_cuda(src);
        let b = body(&full);
        for e in *elided {
            assert!(b.contains(e), "`{e}` should be elided in:\n{b}");
        }
        for k in *kept {
            assert!(b.contains(k), "`{k}` should stay checked in:\n{b}");
        }
        let Some(ptx) = nvrtc_ptx(&full) else {
            continue;
        };
        let calls = ptx.matches("call.uni").count() + ptx.matches("__gk_oob").count();
        assert_eq!(
            calls > 0,
            !kept.is_empty(),
            "error path in PTX only where a check is kept:\n{b}\n{ptx}"
        );
        if kept.is_empty() {
            // Everything proven: the checked kernel's instructions are the unchecked kernel's
            // (only the unused error-record parameter differs).
            let unchecked = crate::cuda::kernel_source(&kernel_ir(src, false).expect("translates"))
                .expect("generates");
            let unchecked_ptx = nvrtc_ptx(&unchecked).expect("NVRTC was available above");
            assert_eq!(
                instructions(&ptx),
                instructions(&unchecked_ptx),
                "checked and unchecked PTX differ for:\n{src}"
            );
        }
    }
}

/// The instruction lines of a PTX kernel, without its parameter list and comments.
fn instructions(ptx: &str) -> Vec<String> {
    let entry = &ptx[ptx.find(".entry").expect("a kernel entry")..];
    let body = &entry[entry.find('{').expect("kernel body")..];
    body.lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with("//"))
        .map(|l| l.to_string())
        .collect()
}

/// Look-alikes of the rules that do not prove the index in range: those accesses keep their
/// check (each case names them as the checked form must read).
#[test]
fn accesses_that_can_fail_keep_their_check() {
    for (src, kept) in [
        // Off by one under a misleading guard.
        (
            "fn k(a: &mut [f32]) { let i = grid(1); if i <= a.len() { a[i] = 1.0; } }",
            &["a[i] = 1.0f;"][..],
        ),
        // A guard on another array.
        (
            "fn k(a: &[f32], b: &mut [f32]) { let i = grid(1); if i < a.len() { b[i] = a[i]; } }",
            &["b[i] = a.at(i)"],
        ),
        // A mutable index may change after the guard.
        (
            "fn k(a: &mut [f32]) { let mut i = grid(1); if i < a.len() { i += 1; a[i] = 1.0; } }",
            &["a[i] = 1.0f;"],
        ),
        // A guard in a branch that ends does not hold after it; `||` proves nothing.
        (
            "fn k(a: &mut [f32], n: usize) { let i = grid(1); if i < a.len() { a[0] = 0.0; } if i < n || i < a.len() { a[i] = 1.0; } }",
            &["a[i] = 1.0f;"],
        ),
        // Early return on the wrong test; an inclusive loop to the length.
        (
            "fn k(a: &mut [f32]) { let i = grid(1); if i > a.len() { return; } a[i] = 1.0; for j in 0..=a.len() { a[j] = 0.0; } }",
            &["a[i] = 1.0f;", "a[j] = 0.0f;"],
        ),
        // Clamp to the bound without `- 1`, with a lower end of 0, to another array's length.
        (
            "fn k(a: &mut [f32], b: &[f32], d: usize) { let i = grid(1); let n = a.len(); if i < n { let j = (i + d).min(n); let l = (i + d).max(0).min(n) - 1; let m = (i + d).max(1).min(b.len()) - 1; a[j] = 1.0; a[l] = 2.0; a[m] = 3.0; } }",
            &["a[j] = 1.0f;", "a[l] = 2.0f;", "a[m] = 3.0f;"],
        ),
        // `% n` where nothing proves n > 0.
        (
            "fn k(a: &mut [f32], d: usize) { a[d % a.len()] = 1.0; }",
            &["a[__gk_rem(d, a.len())] = 1.0f;"],
        ),
        // A guard on the other axis of a view.
        (
            "fn k(img: &mut View2<f32>) { let (x, y) = grid2(); if y < img.shape(1) && x < img.shape(0) { img[[y, x]] = 0.0; } }",
            &["img(y, x) = 0.0f;"],
        ),
    ] {
        let full = kernel_cuda(src);
        let b = body(&full);
        for k in kept {
            assert!(b.contains(k), "`{k}` must stay checked in:\n{b}");
        }
        nvrtc_compiles(&full);
    }
}

/// The lesson 3.0 blur: the nine loads are proven (guard, clamp, loop range), the store to `out`
/// (guarded by `img`'s shape, not its own) keeps its one check.
#[test]
fn blur_loads_are_proven_and_the_store_stays_checked() {
    let src = kernel_cuda(BLUR);
    let b = body(&src);
    assert!(
        b.contains(
            "acc += img.at(yy, xx, c) /* in bounds: yy clamped, xx clamped, c loop range */;"
        ),
        "{b}"
    );
    assert!(b.contains("out(y, x, c) = acc / 9.0f;"), "{b}");
}

/// The blur's store to `out` keeps its check in the kernel, but the launch's shapes decide it:
/// the kernel gets an unchecked twin, selected by one test per axis of `out`.
#[test]
fn the_blur_gets_an_unchecked_twin_selected_by_the_shapes() {
    let s = crate::testing::kernel_sources(BLUR);
    let twin = s.twin.expect("the blur's checks can be decided per launch");
    let texts: Vec<&str> = twin.tests.iter().map(|t| t.text.as_str()).collect();
    assert_eq!(
        texts,
        [
            "img.shape(0) <= out.shape(0)",
            "img.shape(1) <= out.shape(1)",
            "img.shape(2) <= out.shape(2)"
        ]
    );
    use crate::cuda::LaunchValue::Shape;
    assert_eq!(
        (&twin.tests[0].lhs, &twin.tests[0].rhs),
        (&Shape(0, 0), &Shape(1, 0))
    );
    assert_eq!(twin.symbol, "blur3__proven");
    // The kernel as written says so in %source, and keeps its check.
    assert!(s.kernel.contains("// A launch whose arguments have img.shape(0) <= out.shape(0) && img.shape(1) <= out.shape(1) && img.shape(2) <= out.shape(2) runs `blur3__proven`"), "{}", s.kernel);
    assert!(body(&s.kernel).contains("out(y, x, c) = acc / 9.0f;"));
    // The twin is the `#[kernel(unchecked)]` translation under another name.
    assert!(twin
        .source
        .contains("extern \"C\" __global__ void blur3__proven("));
    assert!(!twin.source.contains("__gk_err"), "{}", twin.source);
    let unchecked = crate::cuda::kernel_source(&kernel_ir(BLUR, false).expect("translates"))
        .expect("generates");
    assert_eq!(
        twin.source,
        unchecked.replace("void blur3(", "void blur3__proven(")
    );
    nvrtc_compiles(&twin.source);
}

/// Which launch values prove an index: a guard's or a loop's bound, a clamp's, a constant, a
/// `usize` scalar parameter; and where no twin is made.
#[test]
fn launch_tests_come_from_bounds_fixed_for_the_launch() {
    let tests = |src: &str| -> Option<Vec<String>> {
        crate::testing::kernel_sources(src)
            .twin
            .map(|t| t.tests.into_iter().map(|t| t.text).collect())
    };
    // A scalar loop bound, a constant index, a scalar index.
    assert_eq!(
        tests("fn k(a: &mut [f32], n: usize) { for j in 0..n { a[j] = 1.0; } }").unwrap(),
        ["n <= a.len()"]
    );
    assert_eq!(
        tests("fn k(a: &mut [f32], i: usize) { a[3] = 1.0; a[i] = 2.0; }").unwrap(),
        ["3 < a.len()", "i < a.len()"]
    );
    // A clamp to another array's length (known positive from the guard).
    assert_eq!(
        tests("fn k(a: &mut [f32], b: &[f32], d: usize) { let i = grid(1); if i < b.len() { let m = (i + d).max(1).min(b.len()) - 1; a[m] = b[i]; } }").unwrap(),
        ["b.len() <= a.len()"]
    );
    // Everything proven in the body: nothing to decide, no twin. Likewise an unchecked kernel.
    assert_eq!(
        tests("fn k(a: &[f32], out: &mut [f32]) { let i = grid(1); if i < out.len() && i < a.len() { out[i] = a[i] * 2.0; } }"),
        None
    );
    // An index read from memory, a mutable index, a grid index without a guard: no launch value
    // bounds them, so the kernel stays checked for every launch.
    for src in [
        "fn k(a: &mut [f32], idx: &[u32]) { let i = grid(1); if i < idx.len() { a[idx[i] as usize] = 1.0; } }",
        "fn k(a: &mut [f32], n: usize) { let mut m = 0usize; for j in 0..n { a[m] = 1.0; m += j; } }",
        "fn k(a: &mut [f32]) { let i = grid(1); a[i] = 1.0; }",
        "fn k(a: &mut [f32], n: usize) { for j in 0..=n { a[j] = 1.0; } }",
    ] {
        assert_eq!(tests(src), None, "{src}");
    }
}
