//! The Azurite endpoint of a test run: `scripts/test.sh` starts the pinned emulator
//! on a free loopback port and exports [`URL_VAR`]. Tests that need it call
//! [`engine_or_skip`] (or [`service_or_skip`]): without the variable they print a loud
//! `SKIPPED` line and return, except under `CI=true`, where Azurite is required and
//! its absence fails the test.

use std::sync::Arc;

use tables_client::remote::{AccountKey, Credential, RemoteBlobStore, RemoteEngine};
use tables_client::{PrefixedEngine, TableServiceClient};

/// The variable naming the Azurite account URL, e.g.
/// `http://127.0.0.1:10002/devstoreaccount1`.
pub const URL_VAR: &str = "TABLES_TEST_AZURITE_URL";

/// The variable naming the Azurite blob account URL, e.g.
/// `http://127.0.0.1:10000/devstoreaccount1`.
pub const BLOB_URL_VAR: &str = "TABLES_TEST_AZURITE_BLOB_URL";

/// The development account every emulator knows.
pub const DEV_ACCOUNT: &str = tables_client::remote::DEVELOPMENT_ACCOUNT;

/// The development account's well-known key (public; not a secret).
pub const DEV_KEY: &str = tables_client::remote::DEVELOPMENT_ACCOUNT_KEY;

/// Whether this run is CI's (`CI=true`, `1` or `yes`): Azurite is then required.
pub fn under_ci() -> bool {
    std::env::var("CI")
        .is_ok_and(|v| matches!(v.as_str(), "true" | "TRUE" | "True" | "1" | "yes" | "YES"))
}

/// The Azurite account URL, or `None` after a loud `SKIPPED` line naming `test`.
///
/// # Panics
///
/// Under CI when the variable is not set: a missing Azurite is a failure there.
pub fn url_or_skip(test: &str) -> Option<String> {
    var_or_skip(URL_VAR, test)
}

/// The Azurite blob account URL, or `None` after a loud `SKIPPED` line naming
/// `test`.
///
/// # Panics
///
/// Under CI when the variable is not set.
pub fn blob_url_or_skip(test: &str) -> Option<String> {
    var_or_skip(BLOB_URL_VAR, test)
}

fn var_or_skip(var: &str, test: &str) -> Option<String> {
    match std::env::var(var) {
        Ok(url) if !url.trim().is_empty() => Some(url.trim().trim_end_matches('/').to_owned()),
        _ => {
            assert!(
                !under_ci(),
                "Azurite is required under CI: {var} is not set. Run the suite with \
                 scripts/test.sh, which installs and starts the pinned Azurite"
            );
            eprintln!(
                "SKIPPED: {test}: {var} is not set, so Azurite is not running. Run \
                 scripts/test.sh to install and start it; under CI=true this is a failure."
            );
            None
        }
    }
}

/// The connection string of the Azurite account at `url`.
pub fn connection_string(url: &str) -> String {
    format!(
        "DefaultEndpointsProtocol=http;AccountName={DEV_ACCOUNT};AccountKey={DEV_KEY};TableEndpoint={url}"
    )
}

/// The development account key.
///
/// # Panics
///
/// Never: the key is valid base64.
pub fn dev_key() -> AccountKey {
    AccountKey::new(DEV_ACCOUNT, DEV_KEY).expect("the development key is valid base64")
}

/// A remote engine on the Azurite account at `url`, signing with SharedKey.
///
/// # Panics
///
/// If the URL is not a loopback account URL.
pub fn engine(url: &str) -> RemoteEngine {
    RemoteEngine::builder(url)
        .credential(Credential::SharedKey(dev_key()))
        .build()
        .unwrap_or_else(|e| panic!("{URL_VAR}={url:?} is not usable: {e}"))
}

/// A remote engine on the run's Azurite, or `None` (skipped, see [`url_or_skip`]).
pub fn engine_or_skip(test: &str) -> Option<RemoteEngine> {
    url_or_skip(test).map(|url| engine(&url))
}

/// A remote engine on the run's Azurite whose tables live under a prefix of their
/// own ([`PrefixedEngine::unique`]), so tests that use fixed table names can share
/// one Azurite and run in parallel; `None` when skipped.
pub fn prefixed_engine_or_skip(test: &str) -> Option<PrefixedEngine<RemoteEngine>> {
    engine_or_skip(test).map(PrefixedEngine::unique)
}

/// A typed client over [`prefixed_engine_or_skip`]; `None` when skipped.
pub fn service_or_skip(test: &str) -> Option<TableServiceClient> {
    prefixed_engine_or_skip(test).map(|engine| TableServiceClient::from_engine(Arc::new(engine)))
}

/// A remote blob store on the run's Azurite blob service, signing with SharedKey,
/// writing blobs over `single_put_limit` bytes in blocks of `block_size`; `None`
/// when skipped (see [`blob_url_or_skip`]).
///
/// # Panics
///
/// If the URL is not a loopback account URL.
pub fn blob_store_or_skip(
    test: &str,
    single_put_limit: usize,
    block_size: usize,
) -> Option<RemoteBlobStore> {
    let url = blob_url_or_skip(test)?;
    let store = RemoteBlobStore::builder(&url)
        .credential(Credential::SharedKey(dev_key()))
        .single_put_limit(single_put_limit)
        .block_size(block_size)
        .build()
        .unwrap_or_else(|e| panic!("{BLOB_URL_VAR}={url:?} is not usable: {e}"));
    Some(store)
}
