//! The official Azure Tables JS and Python SDKs, each with a token credential of its
//! own, drive `tables-server --oauth` over HTTPS (a certificate authority made at
//! test time, which each is told to trust): CRUD, a query, the storage scope asked,
//! a reader's write refused with 403 AuthorizationPermissionMismatch. The checks are
//! in `tools/js-sdk/entra.mjs` and `tools/py-sdk/entra.py`. Skipped loudly without
//! node or the Python install (a failure under `CI=true`).

#![allow(clippy::unwrap_used, missing_docs)] // tests

use std::process::Command;

use tables_server::{OAuth, Role, RunningServer};
use tables_tests::entra::{claims, https_server, token, TestCertificates, SECRET};

struct Run {
    server: RunningServer,
    ca: std::path::PathBuf,
    writer: String,
    reader: String,
}

fn run(name: &str) -> Run {
    let certs = TestCertificates::new();
    let oauth = OAuth::new()
        .hs256_secret(SECRET)
        .role("writer-oid", Role::Contributor)
        .role("reader-oid", Role::Reader)
        .require_role();
    let server = https_server(&certs, oauth);
    let ca = std::env::temp_dir().join(format!("tables-{name}-{}-ca.pem", std::process::id()));
    std::fs::write(&ca, &certs.ca_pem).unwrap();
    Run {
        server,
        ca,
        writer: token(&claims("writer-oid"), SECRET),
        reader: token(&claims("reader-oid"), SECRET),
    }
}

#[test]
fn the_js_sdk_signs_in_with_a_token_over_https() {
    let Some(script) = tables_tests::js_sdk::script_or_skip("sdk_entra", "entra.mjs") else {
        return;
    };
    let run = run("js");
    let checks = tables_tests::py_sdk::passed_checks(
        Command::new("node")
            .env("NODE_EXTRA_CA_CERTS", &run.ca)
            .arg(script)
            .args([&run.server.url(), "jsEntra", &run.writer, &run.reader]),
        "JS SDK",
    );
    let _ = std::fs::remove_file(&run.ca);
    assert!(checks >= 6, "only {checks} checks ran");
}

#[test]
fn the_python_sdk_signs_in_with_a_token_over_https() {
    let Some((python, script)) = tables_tests::py_sdk::script_or_skip("sdk_entra", "entra.py")
    else {
        return;
    };
    let run = run("py");
    let checks = tables_tests::py_sdk::passed_checks(
        Command::new(python).arg(script).args([
            run.server.url().as_str(),
            "pyEntra",
            &run.writer,
            &run.reader,
            run.ca.to_str().unwrap(),
        ]),
        "Python SDK",
    );
    let _ = std::fs::remove_file(&run.ca);
    assert!(checks >= 6, "only {checks} checks ran");
}
