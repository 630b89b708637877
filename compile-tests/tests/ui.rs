//! The derive's compile errors: one mistake per file under `ui/fail`, each with its
//! reviewed `.stderr`. (The programs that must compile are the `pass/*.rs` test
//! binaries of this package.)
//!
//! Regenerate the expected output after a deliberate change to a message with
//! `TRYBUILD=overwrite cargo test -p tables-compile-tests --test ui`, then review the
//! diff.

#[test]
fn ui() {
    let cases = trybuild::TestCases::new();
    cases.compile_fail("ui/fail/*.rs");
}
