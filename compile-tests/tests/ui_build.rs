//! The derive's mistakes that only `cargo build` reports: const assertions the compiler
//! evaluates when it instantiates a generic function, which `cargo check` never does.
//! One ordinary program beside them makes trybuild build, not only check, the cases
//! (so they are a test binary of their own: tests/ui.rs stays in check mode, much
//! cheaper on a clean checkout).
//!
//! Regenerate the expected output after a deliberate change to a message with
//! `TRYBUILD=overwrite cargo test -p tables-compile-tests --test ui_build`, then review
//! the diff.

#[test]
fn ui_build() {
    let cases = trybuild::TestCases::new();
    cases.compile_fail("ui/build_fail/*.rs");
    cases.pass("ui/build_pass/*.rs");
}
