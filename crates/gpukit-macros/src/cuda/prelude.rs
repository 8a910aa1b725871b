//! The CUDA C++ prelude (`prelude.cu`): its sections, and the ones a piece of generated code
//! needs.

/// The helpers generated code may use, in sections marked `// @section name`.
pub const PRELUDE: &str = include_str!("prelude.cu");

/// For each prelude section, the identifiers whose use in generated code needs it.
const SECTION_USES: &[(&str, &[&str])] = &[
    ("bounds", &["__gk_slice<", "__gk_view<"]),
    ("unchecked", &["__gk_uslice<", "__gk_uview<"]),
    ("opaque", &["__gk_ret<", "__gk_arg<", "__gk_not("]),
    (
        "int",
        &[
            "__gk_wadd(",
            "__gk_wsub(",
            "__gk_wmul(",
            "__gk_wneg(",
            "__gk_div(",
            "__gk_rem(",
            "__gk_shl(",
            "__gk_shr(",
            "__gk_min(",
            "__gk_max(",
            "__gk_abs(",
            "__gk_pow(",
            "__gk_count_ones(",
            "__gk_leading_zeros(",
            "__gk_trailing_zeros(",
            "__gk_clamp(",
            "__gk_signum(",
        ],
    ),
    ("float_to", &["__gk_float_to_"]),
    (
        "float",
        &[
            "__gk_fract(",
            "__gk_recip(",
            "__gk_to_degrees(",
            "__gk_to_radians(",
            "__gk_log(",
            "__gk_is_sign_positive(",
            "__gk_powi(",
            "__gk_clamp(",
            "__gk_signum(",
        ],
    ),
    ("atomics", &["__gk_atomic_"]),
];

/// The prelude sections `code` uses, each behind an include guard so that a kernel and its
/// `#[device]` helpers can each bring the sections they need. Empty when none is used.
pub fn prelude_for(code: &str) -> String {
    let mut parts = PRELUDE.split("// @section ");
    let header = parts.next().unwrap_or_default();
    let mut out = String::new();
    for part in parts {
        let (name, body) = part.split_once('\n').unwrap_or((part, ""));
        let name = name.trim();
        let used = SECTION_USES
            .iter()
            .find(|(n, _)| *n == name)
            .is_some_and(|(_, uses)| uses.iter().any(|u| code.contains(u)));
        if used {
            let guard = format!("GPUKIT_PRELUDE_{}", name.to_uppercase());
            out.push_str(&format!(
                "#ifndef {guard}\n#define {guard}\n{}\n#endif\n\n",
                body.trim()
            ));
        }
    }
    if out.is_empty() {
        out
    } else {
        format!("{header}{out}")
    }
}
