//! The derive's compile errors, each with its reviewed `.stderr`: one mistake per
//! file under `ui/fail`, and under `ui/build_fail` the mistakes only `cargo build`
//! reports (const assertions the compiler evaluates when it instantiates a generic
//! function, which `cargo check` never does). The ordinary program in `ui/build_pass`
//! makes trybuild build, not only check, every case; all of them run in this one
//! test so the dependencies are built once (a check-mode test beside it checked them
//! all a second time: the suite's largest cost). The programs that must compile
//! cleanly are the `pass/*.rs` test binaries of this package.
//!
//! Regenerate the expected output after a deliberate change to a message with
//! `TRYBUILD=overwrite cargo test -p tables-compile-tests --test ui_build`, then review
//! the diff.

#[test]
fn ui_build() {
    let cases = trybuild::TestCases::new();
    cases.compile_fail("ui/fail/*.rs");
    cases.compile_fail("ui/build_fail/*.rs");
    cases.pass("ui/build_pass/*.rs");
}
