//! How many cases the randomized and fault tests run: sized for the test command
//! (CI has 2 cores and a time budget) unless `TABLES_THOROUGH=1` asks for the
//! thorough counts. A test's own variable (`TABLES_FAULT_OPS`,
//! `TABLES_FOREIGN_CASES`...) overrides both.
//!
//! ```
//! // CI-sized unless TABLES_THOROUGH is set.
//! let cases = tables_tests::sizes::cases("TABLES_EXAMPLE_ONLY_CASES", 40, 400);
//! assert!(cases == 40 || cases == 400);
//! ```

/// The variable that selects the thorough counts (`1`, `true` or `yes`).
pub const THOROUGH_VAR: &str = "TABLES_THOROUGH";

/// Whether `TABLES_THOROUGH` asks for the thorough counts.
pub fn thorough() -> bool {
    std::env::var(THOROUGH_VAR)
        .is_ok_and(|v| matches!(v.trim().to_ascii_lowercase().as_str(), "1" | "true" | "yes"))
}

/// `own` from the environment when set to a number; else `thorough` under
/// `TABLES_THOROUGH`, else `ci`.
pub fn cases(own: &str, ci: u32, thorough_count: u32) -> u32 {
    std::env::var(own)
        .ok()
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or(if thorough() { thorough_count } else { ci })
}
