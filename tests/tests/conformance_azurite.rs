//! The conformance suite against the remote engine on the run's Azurite (started by
//! `scripts/test.sh`; skipped loudly without it, a failure under `CI=true`).
//!
//! Same scenarios, same list as the mem engine's run; Azurite's known differences
//! from Azure are declared in [`tables_tests::Capabilities::azurite`], with sources.

mod azurite {
    tables_tests::conformance_suite!(
        optional: tables_tests::azurite::engine_or_skip("conformance_azurite"),
        tables_tests::Capabilities::azurite()
    );
}
