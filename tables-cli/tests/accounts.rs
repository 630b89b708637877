//! Accounts named by URL: a SAS in the URL's query signs every request (an account
//! SAS, on `tables-server`), and a URL without one signs in with Entra ID through
//! the official `azure_identity` crate's Azure CLI credential, over HTTPS with the
//! server's certificate trusted through `--ca-file` (an `az` of the test's own on
//! PATH hands out a token the server checks).

#![allow(clippy::unwrap_used, missing_docs)] // tests

use std::os::unix::fs::PermissionsExt;
use std::process::{Command, Output, Stdio};

use tables_core::auth::{
    AccountKey, AccountSasFields, DEVELOPMENT_ACCOUNT, DEVELOPMENT_ACCOUNT_KEY,
};
use tables_server::{OAuth, Server};
use tables_tests::entra::{claims, epoch_seconds, https_server, token, TestCertificates, SECRET};

fn tables(args: &[&str], path: Option<&str>) -> Output {
    let mut command = Command::new(env!("CARGO_BIN_EXE_tables"));
    command
        .args(args)
        .env_remove("AZURE_STORAGE_CONNECTION_STRING")
        .env_remove("TABLES_CONNECTION_STRING")
        .stdin(Stdio::null());
    if let Some(path) = path {
        command.env("PATH", path);
    }
    command.output().unwrap()
}

fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

fn ok(output: &Output) {
    assert!(
        output.status.success(),
        "{:?}: {}",
        output.status,
        stderr(output)
    );
}

/// An account SAS of the development account for `permissions`.
fn account_sas(permissions: &str) -> String {
    let fields = AccountSasFields {
        permissions,
        services: "t",
        resource_types: "sco",
        expiry: "2099-01-01T00:00:00Z",
        version: "2020-12-06",
        ..Default::default()
    };
    let key = AccountKey::new(DEVELOPMENT_ACCOUNT, DEVELOPMENT_ACCOUNT_KEY).unwrap();
    let signature = key.sign(&fields.string_to_sign(DEVELOPMENT_ACCOUNT));
    let encoded: String = url::form_urlencoded::byte_serialize(signature.as_bytes()).collect();
    format!("sv=2020-12-06&ss=t&srt=sco&sp={permissions}&se=2099-01-01T00:00:00Z&sig={encoded}")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_account_url_with_a_sas() {
    let server = Server::builder().port(0).start().await.unwrap();
    let url = format!("{}?{}", server.url(), account_sas("rwdlacu"));
    let work = tempfile::tempdir().unwrap();
    let file = work.path().join("rows.jsonl");
    std::fs::write(&file, "{\"PartitionKey\":\"p\",\"RowKey\":\"1\",\"N\":1}\n{\"PartitionKey\":\"p\",\"RowKey\":\"2\",\"N\":2}\n").unwrap();
    ok(&tables(
        &[
            "--account-url",
            &url,
            "import",
            file.to_str().unwrap(),
            "--table",
            "BySas",
            "--create",
        ],
        None,
    ));
    let listed = tables(&["--account-url", &url, "ls"], None);
    ok(&listed);
    assert_eq!(String::from_utf8(listed.stdout).unwrap().trim(), "BySas");
    let queried = tables(
        &["--account-url", &url, "query", "BySas", "-o", "jsonl"],
        None,
    );
    ok(&queried);
    assert_eq!(
        String::from_utf8(queried.stdout).unwrap().lines().count(),
        2
    );
    // A read-only SAS reads and can't write: the service's refusal, exit 1.
    let read_only = format!("{}?{}", server.url(), account_sas("rl"));
    ok(&tables(
        &["--account-url", &read_only, "query", "BySas"],
        None,
    ));
    let refused = tables(&["--account-url", &read_only, "create", "Nope"], None);
    assert_eq!(refused.status.code(), Some(1), "{}", stderr(&refused));
    // Not a SAS at all: exit 2, saying so.
    let wrong = tables(
        &["--account-url", &format!("{}?hello=1", server.url()), "ls"],
        None,
    );
    assert_eq!(wrong.status.code(), Some(2), "{}", stderr(&wrong));
    assert!(stderr(&wrong).contains("not a SAS"), "{}", stderr(&wrong));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_account_url_signs_in_with_entra_id() {
    let certs = TestCertificates::new();
    let server = https_server(&certs, OAuth::new().hs256_secret(SECRET));
    let work = tempfile::tempdir().unwrap();
    let ca = work.path().join("ca.pem");
    std::fs::write(&ca, &certs.ca_pem).unwrap();
    // `az account get-access-token` as the Azure CLI answers it.
    let bin = work.path().join("bin");
    std::fs::create_dir(&bin).unwrap();
    let az = bin.join("az");
    let answer = format!(
        r#"{{"accessToken":"{}","expires_on":{},"tokenType":"Bearer"}}"#,
        token(&claims("alice"), SECRET),
        epoch_seconds(3600)
    );
    std::fs::write(
        &az,
        format!(
            "#!/bin/sh\necho \"$@\" >> '{}'\ncat <<'JSON'\n{answer}\nJSON\n",
            work.path().join("az.log").display()
        ),
    )
    .unwrap();
    std::fs::set_permissions(&az, std::fs::Permissions::from_mode(0o755)).unwrap();
    let path = format!(
        "{}:{}",
        bin.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let url = server.url().to_owned();
    let ca = ca.to_str().unwrap();
    ok(&tables(
        &["--account-url", &url, "--ca-file", ca, "create", "ByEntra"],
        Some(&path),
    ));
    let queried = tables(&["--account-url", &url, "--ca-file", ca, "ls"], Some(&path));
    ok(&queried);
    assert_eq!(String::from_utf8(queried.stdout).unwrap().trim(), "ByEntra");
    let asked = std::fs::read_to_string(work.path().join("az.log")).unwrap();
    assert!(asked.contains("get-access-token"), "{asked}");
    assert!(
        asked.contains("https://storage.azure.com"),
        "the storage scope: {asked}"
    );
    // Without the certificate trusted, HTTPS fails: exit 1.
    let untrusted = tables(&["--account-url", &url, "ls"], Some(&path));
    assert_eq!(untrusted.status.code(), Some(1), "{}", stderr(&untrusted));
    // No az sign-in: a clear error.
    std::fs::write(
        &az,
        "#!/bin/sh\necho \"ERROR: Please run 'az login' to setup account.\" >&2\nexit 1\n",
    )
    .unwrap();
    let signed_out = tables(&["--account-url", &url, "--ca-file", ca, "ls"], Some(&path));
    assert_eq!(signed_out.status.code(), Some(1), "{}", stderr(&signed_out));
    assert!(
        stderr(&signed_out).contains("az login"),
        "{}",
        stderr(&signed_out)
    );
}
