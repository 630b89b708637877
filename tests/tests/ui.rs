//! The derive's compile errors (one mistake per file under `ui/fail`, each with its
//! reviewed `.stderr`) and a derive under strict lints (`ui/pass`).
//!
//! Regenerate the expected output after a deliberate change to a message with
//! `TRYBUILD=overwrite cargo test -p tables-tests --test ui`, then review the diff.

#[test]
fn ui() {
    let cases = trybuild::TestCases::new();
    cases.compile_fail("ui/fail/*.rs");
    cases.pass("ui/pass/*.rs");
}
