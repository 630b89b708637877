//! Orders written by the official JS and Python SDKs (pinned in `tools/js-sdk` and
//! `tools/py-sdk`) on the run's `tables-server` and Azurite: one column holds Int32,
//! Int64 and Double values, and every typed filter of the `existing_table` example
//! returns exactly the rows whose value, as the field reads it, satisfies it.
//!
//! On the server, the rows the SDKs wrote must equal `examples/fixtures/orders.txt`
//! (what the example carries for the engines no SDK can write to); with
//! `TABLES_UPDATE_FIXTURES=1` the test writes that file instead. Skipped loudly
//! without node, the JS SDK install or the Python SDK install (a failure under
//! `CI=true`).

#![allow(clippy::unwrap_used, missing_docs)] // tests

use std::path::{Path, PathBuf};
use std::process::Command;

use tables_client::{DynamicEntity, TableServiceClient};
use tables_tests::azurite::{connection_string, url_or_skip};
use tables_tests::read::all_rows;

#[path = "../../examples/existing_table/orders.rs"]
mod orders;

/// Runs `program args..`, failing the test with its output.
fn run(program: &Path, args: &[&str], what: &str) {
    let out = Command::new(program).args(args).output().unwrap();
    assert!(
        out.status.success(),
        "{what} failed:\n{}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Writes the orders with both SDKs into a new table at `url`; returns the table's
/// name and a client on it, or `None` when an SDK is not installed (skipped loudly).
async fn written_by_both_sdks(
    test: &str,
    url: &str,
) -> Option<(String, TableServiceClient, Vec<DynamicEntity>)> {
    let js = tables_tests::js_sdk::script_or_skip(test, "orders.mjs")?;
    let (python, py) = tables_tests::py_sdk::script_or_skip(test, "orders.py")?;
    let connection = connection_string(url);
    let table = format!("Orders{}", &uuid::Uuid::new_v4().simple().to_string()[..12]);
    let node = PathBuf::from("node");
    run(
        &node,
        &[js.to_str().unwrap(), &connection, &table],
        "node orders.mjs",
    );
    run(
        &python,
        &[py.to_str().unwrap(), &connection, &table],
        "python orders.py",
    );
    let service = TableServiceClient::from_connection_string(&connection).unwrap();
    let rows = all_rows(service.engine().as_ref(), &table).await.unwrap();
    Some((table, service, rows))
}

fn fixture_path() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../examples/fixtures/orders.txt")
}

#[tokio::test]
async fn orders_from_the_js_and_python_sdks_on_the_server() {
    let url = tables_tests::server::url();
    let Some((table, service, rows)) = written_by_both_sdks(
        "foreign_orders::orders_from_the_js_and_python_sdks_on_the_server",
        &url,
    )
    .await
    else {
        return;
    };
    assert_eq!(rows.len(), 12, "six orders from each SDK");
    let written = orders::format_rows(&rows);
    if std::env::var("TABLES_UPDATE_FIXTURES").is_ok() {
        std::fs::write(fixture_path(), &written).unwrap();
    }
    assert_eq!(
        written,
        orders::FIXTURE,
        "the SDKs no longer write what examples/fixtures/orders.txt holds; rerun with \
         TABLES_UPDATE_FIXTURES=1 to write it"
    );
    // The fixture reads back as the same rows.
    assert_eq!(
        orders::format_rows(&orders::parse_rows(orders::FIXTURE).unwrap()),
        written
    );
    let checked = orders::typed_filters_match_the_reader(&service, &table)
        .await
        .unwrap();
    assert_eq!(checked.len(), 10);
    service.delete_table(&table).await.unwrap();
}

#[tokio::test]
async fn orders_from_the_js_and_python_sdks_on_azurite() {
    let test = "foreign_orders::orders_from_the_js_and_python_sdks_on_azurite";
    let Some(url) = url_or_skip(test) else {
        return;
    };
    let Some((table, service, rows)) = written_by_both_sdks(test, &url).await else {
        return;
    };
    assert_eq!(rows.len(), 12, "six orders from each SDK");
    // Azurite stores the same types as the server.
    assert_eq!(orders::format_rows(&rows), orders::FIXTURE);
    orders::typed_filters_match_the_reader(&service, &table)
        .await
        .unwrap();
    service.delete_table(&table).await.unwrap();
}
