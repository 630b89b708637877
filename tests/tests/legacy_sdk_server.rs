//! The legacy clients drive `tables-server` (the run's, or one started in process):
//! Node's `azure-storage` 2.10.7 (the retired storage SDK, pinned in
//! `tools/js-legacy/package-lock.json`) and Python's `azure-cosmosdb-table` 1.0.6
//! (pinned with hashes in `tools/py-legacy/requirements.txt`). Each checks tables,
//! every write mode with ETags, a batch that succeeds and one with a failing
//! operation (nothing applied), a paged query, a table SAS with key ranges, and Edm
//! values at their extremes read back exactly (`drive.js`, `drive.py`). Skipped
//! loudly without the installs (a failure under `CI=true`).

#![allow(clippy::unwrap_used, missing_docs)] // tests

use std::process::Command;

use tables_tests::azurite::connection_string;
use tables_tests::py_sdk::passed_checks;

#[test]
fn the_legacy_node_sdk_drives_the_server() {
    let Some(drive) = tables_tests::js_sdk::tool_script_or_skip(
        "legacy_sdk_server",
        "js-legacy",
        "azure-storage",
        "drive.js",
    ) else {
        return;
    };
    let connection = connection_string(&tables_tests::server::url());
    let prefix = format!("ln{}", std::process::id());
    let checks = passed_checks(
        Command::new("node").arg(drive).args([&connection, &prefix]),
        "legacy Node SDK",
    );
    assert!(checks >= 53, "only {checks} checks ran");
}

#[test]
fn the_legacy_python_sdk_drives_the_server() {
    let Some((python, drive)) =
        tables_tests::py_sdk::tool_script_or_skip("legacy_sdk_server", "py-legacy", "drive.py")
    else {
        return;
    };
    let connection = connection_string(&tables_tests::server::url());
    let prefix = format!("lp{}", std::process::id());
    let checks = passed_checks(
        Command::new(python).arg(drive).args([&connection, &prefix]),
        "legacy Python SDK",
    );
    assert!(checks >= 54, "only {checks} checks ran");
}
