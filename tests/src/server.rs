//! The run's `tables-server`: `scripts/test.sh` starts the binary on a free
//! loopback port and exports [`URL_VAR`]; without it (plain `cargo test`), each test
//! binary starts one in process, on a thread of its own, the first time a test asks.
//! Either way it is always there: a server backend is never skipped.

use std::sync::OnceLock;

use tables_client::remote::{Credential, RemoteEngine};
use tables_server::{RunningServer, Server};

/// The variable naming the run's server account URL, e.g.
/// `http://127.0.0.1:10002/devstoreaccount1`.
pub const URL_VAR: &str = "TABLES_TEST_SERVER_URL";

/// The account URL of the run's server (the development account).
///
/// # Panics
///
/// If no variable is set and an in-process server can't start.
pub fn url() -> String {
    if let Ok(url) = std::env::var(URL_VAR) {
        if !url.trim().is_empty() {
            return url.trim().trim_end_matches('/').to_owned();
        }
    }
    static IN_PROCESS: OnceLock<RunningServer> = OnceLock::new();
    IN_PROCESS
        .get_or_init(|| {
            Server::builder()
                .port(0)
                .start_on_own_thread(2)
                .expect("an in-process tables-server starts on a free loopback port")
        })
        .url()
}

/// A remote engine on the run's server, signing with SharedKey.
pub fn engine() -> RemoteEngine {
    let url = url();
    RemoteEngine::builder(&url)
        .credential(Credential::SharedKey(crate::azurite::dev_key()))
        .build()
        .unwrap_or_else(|e| panic!("the server URL {url:?} is not usable: {e}"))
}
