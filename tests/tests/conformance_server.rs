//! The conformance suite against the remote engine on `tables-server` (the run's, or
//! one started in process): with Azure's capabilities (the server declares no
//! difference from the service), and on its Cosmos DB for Table profile.

mod server {
    tables_tests::conformance_suite!(
        tables_tests::server::engine(),
        tables_tests::Capabilities::azure()
    );
}

/// The same suite on the run's `tables-server --profile cosmos` (or one in process),
/// through a remote engine told it talks to Cosmos DB for Table: the scenarios ask the
/// engine what the service guarantees (order, Timestamp filters, name case) and check
/// that instead.
mod server_cosmos {
    tables_tests::conformance_suite!(
        tables_tests::server::cosmos_engine(),
        tables_tests::Capabilities::cosmos()
    );
}
