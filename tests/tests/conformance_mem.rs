//! The conformance suite on the in-memory engine, with its default paging and with
//! the shortest pages (one entity, ending at every partition boundary), and behind
//! the engine wrappers: a table-name prefix ([`PrefixedEngine`]) and the fault
//! injector with no faults armed ([`FaultInjector`]). A wrapper must be invisible:
//! the same scenarios pass through it, with the same capabilities (a prefix only
//! shortens the names left to the caller).

use tables_client::PrefixedEngine;
use tables_mem::{FaultInjector, MemEngine, MemOptions};
use tables_tests::Capabilities;

/// The mem engine as configured by default: pages of up to 1,000 entities.
mod mem_default {
    use super::*;

    tables_tests::conformance_suite!(MemEngine::new(), Capabilities::azure());
}

/// The mem engine returning one entity per page and breaking pages at partition
/// boundaries, so every scenario also exercises continuation.
mod mem_page_size_1 {
    use super::*;

    tables_tests::conformance_suite!(
        MemEngine::with_options(
            MemOptions::default()
                .with_page_size(1)
                .with_break_at_partition_boundaries(true)
        ),
        Capabilities::azure()
    );
}

/// The mem engine's Cosmos DB for Table profile: results in a seeded hash order
/// within and across pages, case-sensitive table names, Timestamp filters that match
/// nothing, Cosmos's key and batch limits.
mod mem_cosmos {
    use super::*;

    tables_tests::conformance_suite!(
        MemEngine::with_options(MemOptions::cosmos(7)),
        Capabilities::cosmos()
    );
}

/// The Cosmos profile with one-row pages: every scenario also resumes the hash order
/// from a token.
mod mem_cosmos_page_size_1 {
    use super::*;

    tables_tests::conformance_suite!(
        MemEngine::with_options(MemOptions::cosmos(3).with_page_size(1)),
        Capabilities::cosmos()
    );
}

/// The prefix of the [`prefixed`] run's tables.
const PREFIX: &str = "prefixed";

/// The mem engine behind a table-name prefix: every table lives under `prefixed`.
mod prefixed {
    use super::*;

    tables_tests::conformance_suite!(
        PrefixedEngine::new(MemEngine::new(), PREFIX).expect("a valid prefix"),
        Capabilities::azure().prefixed(PREFIX.len())
    );
}

/// The mem engine behind the fault injector, with no fault armed.
mod fault_injector {
    use super::*;

    tables_tests::conformance_suite!(FaultInjector::new(MemEngine::new()), Capabilities::azure());
}

#[test]
fn the_suite_has_at_least_60_scenarios() {
    let mut names = tables_tests::SCENARIOS.to_vec();
    assert!(names.len() >= 60, "{} scenarios", names.len());
    names.sort_unstable();
    names.dedup();
    assert_eq!(
        names.len(),
        tables_tests::SCENARIOS.len(),
        "names are unique"
    );
}
