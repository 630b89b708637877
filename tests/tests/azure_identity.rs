//! The official `azure_identity` crate's credentials sign this SDK's requests
//! (tables-client feature `azure_identity`): `AzureCliCredential`, driven through an
//! executor of the test's own that plays `az` (the crate's hook for running the CLI),
//! signs in to `tables-server --oauth` over HTTPS end to end, asked for the storage
//! scope; every other public credential type is accepted where a credential goes
//! (checked at compile time: they need Azure or a managed identity endpoint to hand
//! out tokens); a failing sign-in is an error that says so.

#![allow(clippy::unwrap_used, missing_docs)] // tests

use std::ffi::OsStr;
use std::io;
use std::os::unix::process::ExitStatusExt;
use std::process::{ExitStatus, Output};
use std::sync::{Arc, Mutex};

use azure_identity::{AzureCliCredential, AzureCliCredentialOptions, Executor};
use tables_client::remote::{AzureCredential, Credential};
use tables_client::{DynamicEntity, Engine, ErrorKind, QuerySpec, TableServiceClient, WriteOp};
use tables_tests::entra::{
    bearer_engine, claims, epoch_seconds, https_server, token, TestCertificates, SECRET,
};

/// Plays `az account get-access-token`: answers with `token` (or fails), and keeps
/// the commands it was asked to run.
#[derive(Debug)]
struct FakeAz {
    token: Option<String>,
    commands: Mutex<Vec<String>>,
}

#[async_trait::async_trait]
impl Executor for FakeAz {
    async fn run(&self, program: &OsStr, args: &[&OsStr]) -> io::Result<Output> {
        let command: Vec<String> = std::iter::once(program)
            .chain(args.iter().copied())
            .map(|a| a.to_string_lossy().into_owned())
            .collect();
        self.commands.lock().unwrap().push(command.join(" "));
        Ok(match &self.token {
            Some(token) => Output {
                status: ExitStatus::from_raw(0),
                stdout: format!(
                    r#"{{"accessToken":"{token}","expires_on":{},"tokenType":"Bearer"}}"#,
                    epoch_seconds(3600)
                )
                .into_bytes(),
                stderr: Vec::new(),
            },
            None => Output {
                status: ExitStatus::from_raw(1 << 8),
                stdout: Vec::new(),
                stderr: b"ERROR: Please run 'az login' to setup account.".to_vec(),
            },
        })
    }
}

fn cli(az: &Arc<FakeAz>) -> Arc<AzureCliCredential> {
    AzureCliCredential::new(Some(AzureCliCredentialOptions {
        executor: Some(az.clone()),
        ..Default::default()
    }))
    .unwrap()
}

#[tokio::test]
async fn azure_cli_credential_signs_in_over_https() {
    let certs = TestCertificates::new();
    let server = https_server(&certs, tables_server::OAuth::new().hs256_secret(SECRET));
    let az = Arc::new(FakeAz {
        token: Some(token(&claims("alice"), SECRET)),
        commands: Mutex::default(),
    });
    let engine = bearer_engine(
        &server,
        &certs,
        Arc::new(AzureCredential::storage(cli(&az))),
    );
    engine.create_table("Orders").await.unwrap();
    engine
        .write("Orders", &WriteOp::Insert(DynamicEntity::new("p", "r")))
        .await
        .unwrap();
    let page = engine
        .query("Orders", &QuerySpec::new(), None)
        .await
        .unwrap();
    assert_eq!(page.items.len(), 1);
    let commands = az.commands.lock().unwrap().clone();
    assert_eq!(commands.len(), 1, "one sign-in, cached: {commands:?}");
    assert!(
        commands[0].contains(
            "az account get-access-token -o json --scope https://storage.azure.com/.default"
        ),
        "{commands:?}"
    );
}

#[tokio::test]
async fn a_failed_sign_in_says_so() {
    let certs = TestCertificates::new();
    let server = https_server(&certs, tables_server::OAuth::new().hs256_secret(SECRET));
    let az = Arc::new(FakeAz {
        token: None,
        commands: Mutex::default(),
    });
    let engine = bearer_engine(
        &server,
        &certs,
        Arc::new(AzureCredential::storage(cli(&az))),
    );
    let err = engine.create_table("Orders").await.unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Auth, "{err}");
    let message = err.to_string();
    assert!(
        message.contains("AzureCliCredential"),
        "names the credential: {message}"
    );
    assert!(message.contains("az login"), "says why: {message}");
}

#[test]
fn the_scope_follows_the_service() {
    let az = Arc::new(FakeAz {
        token: None,
        commands: Mutex::default(),
    });
    assert_eq!(
        AzureCredential::storage(cli(&az)).scope(),
        "https://storage.azure.com/.default"
    );
    assert_eq!(
        AzureCredential::cosmos(cli(&az)).scope(),
        "https://cosmos.azure.com/.default"
    );
    // One line from a URL: the scope from the host.
    let storage =
        TableServiceClient::with_azure_credential("https://acct.table.core.windows.net", cli(&az))
            .unwrap();
    assert!(format!("{storage:?}").contains("https://storage.azure.com/.default"));
    let cosmos =
        TableServiceClient::with_azure_credential("https://acct.table.cosmos.azure.com", cli(&az))
            .unwrap();
    assert!(format!("{cosmos:?}").contains("https://cosmos.azure.com/.default"));
    let err = TableServiceClient::with_azure_credential(
        "http://127.0.0.1:10002/devstoreaccount1",
        cli(&az),
    )
    .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::InvalidInput, "{err}");
}

/// Every public credential type of `azure_identity` is one this SDK takes.
#[allow(dead_code)]
fn every_azure_identity_credential_is_accepted() {
    fn takes<C: azure_core::credentials::TokenCredential + 'static>(
        credential: Arc<C>,
    ) -> Credential {
        Credential::Bearer(Arc::new(AzureCredential::storage(credential)))
    }
    let _ = takes::<azure_identity::AzureCliCredential>;
    let _ = takes::<azure_identity::AzureDeveloperCliCredential>;
    let _ = takes::<azure_identity::AzurePipelinesCredential>;
    let _ = takes::<azure_identity::ClientSecretCredential>;
    let _ = takes::<azure_identity::DeveloperToolsCredential>;
    let _ = takes::<azure_identity::ManagedIdentityCredential>;
    let _ = takes::<azure_identity::WorkloadIdentityCredential>;
    let _ = takes::<azure_identity::ClientAssertionCredential<FakeAssertion>>;
}

/// A client assertion, for `ClientAssertionCredential`'s type parameter.
#[derive(Debug)]
struct FakeAssertion;

#[async_trait::async_trait]
impl azure_identity::ClientAssertion for FakeAssertion {
    async fn secret(
        &self,
        _: Option<azure_core::http::ClientMethodOptions<'_>>,
    ) -> azure_core::Result<String> {
        Ok("assertion".to_owned())
    }
}
