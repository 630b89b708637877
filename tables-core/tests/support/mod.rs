//! What the property tests of the wire parsers share.

use proptest::test_runner::{Config as ProptestConfig, RngAlgorithm};

/// The proptest configuration of the parser tests: `TABLES_FUZZ_CASES` cases (2,000
/// by default, so the suite stays fast; the million-case run sets it), with
/// the XorShift generator (ChaCha dominates the run time of unoptimised builds, and
/// these tests need no cryptographic randomness).
pub(crate) fn fuzz_config() -> ProptestConfig {
    let cases = std::env::var("TABLES_FUZZ_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(2_000);
    ProptestConfig {
        cases,
        rng_algorithm: RngAlgorithm::XorShift,
        ..ProptestConfig::default()
    }
}
