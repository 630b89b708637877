//! The official Azure Tables Python SDK (`azure-data-tables`, pinned by hash in
//! `tools/py-sdk`) drives `tables-server` (the run's, or one started in process):
//! tables, every write mode with ETags, every Edm type at its extremes read back
//! exactly, batches (a failing operation: its index, nothing applied), paging,
//! `$filter` with parameters and `$select`, table SAS with key ranges and
//! permissions, stored access policies and their revocation, service properties.
//! The checks are in `tools/py-sdk/drive.py`. Skipped loudly without the install (a
//! failure under `CI=true`).

#![allow(clippy::unwrap_used, missing_docs)] // tests

use std::process::Command;

use tables_tests::azurite::connection_string;

#[test]
fn the_python_sdk_drives_the_server() {
    let Some((python, drive)) = tables_tests::py_sdk::script_or_skip("py_sdk_server", "drive.py")
    else {
        return;
    };
    let connection = connection_string(&tables_tests::server::url());
    let prefix = format!("py{}", std::process::id());
    let checks = tables_tests::py_sdk::passed_checks(
        Command::new(python).arg(drive).args([&connection, &prefix]),
        "Python SDK",
    );
    assert!(checks >= 30, "only {checks} checks ran");
}
