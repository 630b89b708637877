//! The official Azure Tables JS and Python SDKs drive `tables-server --profile
//! cosmos` (the run's, or one started in process) on the differences Cosmos DB for
//! Table documents: a 256-byte RowKey refused, case-sensitive table names, no CORS
//! or service properties. The checks are in `tools/js-sdk/cosmos.mjs` and
//! `tools/py-sdk/cosmos.py`. Skipped loudly without node or the Python install (a
//! failure under `CI=true`).

#![allow(clippy::unwrap_used, missing_docs)] // tests

use std::process::Command;

use tables_tests::azurite::connection_string;

#[test]
fn the_js_sdk_meets_the_cosmos_differences() {
    let Some(script) = tables_tests::js_sdk::script_or_skip("sdk_cosmos_profile", "cosmos.mjs")
    else {
        return;
    };
    let connection = connection_string(&tables_tests::server::cosmos_url());
    let prefix = format!("jsc{}", std::process::id());
    let checks = tables_tests::py_sdk::passed_checks(
        Command::new("node")
            .arg(script)
            .args([&connection, &prefix]),
        "JS SDK",
    );
    assert!(checks >= 6, "only {checks} checks ran");
}

#[test]
fn the_python_sdk_meets_the_cosmos_differences() {
    let Some((python, script)) =
        tables_tests::py_sdk::script_or_skip("sdk_cosmos_profile", "cosmos.py")
    else {
        return;
    };
    let connection = connection_string(&tables_tests::server::cosmos_url());
    let prefix = format!("pyc{}", std::process::id());
    let checks = tables_tests::py_sdk::passed_checks(
        Command::new(python)
            .arg(script)
            .args([&connection, &prefix]),
        "Python SDK",
    );
    assert!(checks >= 6, "only {checks} checks ran");
}
