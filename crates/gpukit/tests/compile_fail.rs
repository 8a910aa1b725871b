//! Code outside the kernel language is a compile error at the offending span, with a message
//! that says what is supported (tests/ui/*.rs with their expected tests/ui/*.stderr).

#[test]
fn unsupported_syntax_is_a_compile_error() {
    let t = trybuild::TestCases::new();
    t.compile_fail("tests/ui/*.rs");
}
