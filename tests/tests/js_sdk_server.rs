//! The official Azure Tables JS SDK (pinned in `tools/js-sdk`) drives `tables-server`
//! (the run's, or one started in process): tables, every write mode with ETags,
//! every Edm type at its extremes read back exactly, batches (with a failing
//! operation: its index, nothing applied), paging, `$filter` and `$select`. The
//! checks are in `tools/js-sdk/drive.mjs`. Skipped loudly without node or the
//! install (a failure under `CI=true`).

#![allow(clippy::unwrap_used, missing_docs)] // tests

use std::process::Command;

use tables_tests::azurite::connection_string;

#[test]
fn the_js_sdk_drives_the_server() {
    let Some(drive) = tables_tests::js_sdk::script_or_skip("js_sdk_server", "drive.mjs") else {
        return;
    };
    let connection = connection_string(&tables_tests::server::url());
    let prefix = format!("js{}", std::process::id());
    let checks = tables_tests::py_sdk::passed_checks(
        Command::new("node").arg(drive).args([&connection, &prefix]),
        "JS SDK",
    );
    assert!(checks >= 50, "only {checks} checks ran");
}
