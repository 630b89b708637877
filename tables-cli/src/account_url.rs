//! `--account-url`: an account named by its URL rather than a connection string. A
//! SAS in the URL's query signs every request; a URL without one signs in with
//! Entra ID through the official `azure_identity` crate's Azure CLI credential (the
//! account `az login` chose), asking for Cosmos DB's scope on its hosts and Azure
//! Storage's elsewhere.

use std::sync::Arc;

use tables_client::remote::{AzureCredential, Credential, RemoteEngine, SasToken};
use tables_client::{Engine, ServiceKind, TableServiceClient};

use crate::Failure;

pub(crate) fn connect(url: &str, ca_file: Option<&str>) -> Result<TableServiceClient, Failure> {
    let (endpoint, query) = url.split_once('?').unwrap_or((url, ""));
    let http = match ca_file {
        Some(path) => {
            let pem = std::fs::read(path)
                .map_err(|e| Failure::usage(format!("--ca-file {path}: {e}")))?;
            let roots = reqwest::Certificate::from_pem_bundle(&pem).map_err(|e| {
                Failure::usage(format!("--ca-file {path}: not PEM certificates: {e}"))
            })?;
            let mut client = reqwest::Client::builder();
            for root in roots {
                client = client.add_root_certificate(root);
            }
            Some(client.build().map_err(|e| {
                Failure::service(format!("setting up HTTPS with --ca-file {path}: {e}"))
            })?)
        }
        None => None,
    };
    let builder = || {
        let builder = RemoteEngine::builder(endpoint);
        match &http {
            Some(client) => builder.http_client(client.clone()),
            None => builder,
        }
    };
    let credential = if query.is_empty() {
        let cli = azure_identity::AzureCliCredential::new(None)
            .map_err(|e| Failure::usage(format!("signing in with the Azure CLI: {e}")))?;
        let cosmos = builder().build()?.capabilities().service == ServiceKind::CosmosTable;
        let scoped = if cosmos {
            AzureCredential::cosmos(cli)
        } else {
            AzureCredential::storage(cli)
        };
        Credential::Bearer(Arc::new(scoped))
    } else {
        Credential::Sas(SasToken::parse(query).map_err(|e| {
            Failure::usage(format!(
                "--account-url: the query is not a SAS: {}",
                e.message()
            ))
        })?)
    };
    let engine = builder().credential(credential).build()?;
    Ok(TableServiceClient::new(engine))
}
