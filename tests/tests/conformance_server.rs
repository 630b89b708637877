//! The conformance suite against the remote engine on `tables-server` (the run's, or
//! one started in process), with Azure's capabilities: the server declares no
//! difference from the service.

mod server {
    tables_tests::conformance_suite!(
        tables_tests::server::engine(),
        tables_tests::Capabilities::azure()
    );
}

/// The same on `tables-server --profile cosmos`, the remote engine told it plays
/// Cosmos DB for Table: results in any order, its limits, case-sensitive names.
mod server_cosmos {
    tables_tests::conformance_suite!(
        tables_tests::server::cosmos_engine(),
        tables_tests::Capabilities::cosmos()
    );
}
