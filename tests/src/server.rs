//! The run's `tables-server`: `scripts/test.sh` starts the binary on a free
//! loopback port and exports [`URL_VAR`]; without it (plain `cargo test`), each test
//! binary starts one in process, on a thread of its own, the first time a test asks.
//! Either way it is always there: a server backend is never skipped.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
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
    static IN_PROCESS: OnceLock<RunningServer> = OnceLock::new();
    from_var_or_in_process(URL_VAR, &IN_PROCESS, Server::builder)
}

/// The URL in `var`, else that of a server `builder` makes, started in process (on
/// a free loopback port, its own thread) the first time and kept in `slot`.
fn from_var_or_in_process(
    var: &str,
    slot: &OnceLock<RunningServer>,
    builder: impl FnOnce() -> Server,
) -> String {
    if let Ok(url) = std::env::var(var) {
        if !url.trim().is_empty() {
            return url.trim().trim_end_matches('/').to_owned();
        }
    }
    slot.get_or_init(|| {
        builder()
            .port(0)
            .start_on_own_thread(2)
            .expect("an in-process tables-server starts on a free loopback port")
    })
    .url()
}

/// The variable naming the run's `tables-server --profile cosmos` account URL.
pub const COSMOS_URL_VAR: &str = "TABLES_TEST_SERVER_COSMOS_URL";

/// The account URL of the run's server playing Cosmos DB for Table
/// (`--profile cosmos`); without [`COSMOS_URL_VAR`], one in process.
///
/// # Panics
///
/// If no variable is set and an in-process server can't start.
pub fn cosmos_url() -> String {
    static IN_PROCESS: OnceLock<RunningServer> = OnceLock::new();
    from_var_or_in_process(COSMOS_URL_VAR, &IN_PROCESS, || {
        Server::builder().engine_options(tables_mem::MemOptions::cosmos(11))
    })
}

/// A remote engine on the run's Cosmos-profile server, signing with SharedKey,
/// told the service it plays ([`tables_client::ServiceKind::CosmosTable`]).
///
/// # Panics
///
/// If the URL is not usable.
pub fn cosmos_engine() -> RemoteEngine {
    let url = cosmos_url();
    RemoteEngine::builder(&url)
        .credential(Credential::SharedKey(crate::azurite::dev_key()))
        .service(tables_client::ServiceKind::CosmosTable)
        .build()
        .unwrap_or_else(|e| panic!("the server URL {url:?} is not usable: {e}"))
}

/// A remote engine on the run's server, signing with SharedKey.
pub fn engine() -> RemoteEngine {
    engine_at(&url(), tables_client::remote::RetryPolicy::default())
}

/// A remote engine on the development account at `url` (a `tables-server`),
/// signing with SharedKey, with `retry` as its policy.
///
/// # Panics
///
/// If `url` is not a usable endpoint.
pub fn engine_at(url: &str, retry: tables_client::remote::RetryPolicy) -> RemoteEngine {
    RemoteEngine::builder(url)
        .credential(Credential::SharedKey(crate::azurite::dev_key()))
        .retry_policy(retry)
        .build()
        .unwrap_or_else(|e| panic!("the server URL {url:?} is not usable: {e}"))
}

/// The `tables-server` binary of a cargo profile (`debug`, `release`), if it is
/// built (the test command builds the debug one first; `cargo test` builds it
/// for `tables-server`'s own integration tests).
pub fn binary(profile: &str) -> Option<PathBuf> {
    let target = std::env::var("CARGO_TARGET_DIR").map_or_else(
        |_| {
            Path::new(env!("CARGO_MANIFEST_DIR"))
                .parent()
                .unwrap_or_else(|| Path::new("."))
                .join("target")
        },
        PathBuf::from,
    );
    let binary = target.join(profile).join("tables-server");
    binary.exists().then_some(binary)
}

/// Starts `binary` on a free loopback port with `args` added (`--port 0` and
/// `--log-level warn` are given), waits until it says where it listens, and
/// returns it with its development account's URL.
///
/// # Panics
///
/// If it can't start or stops before it listens.
pub fn spawn_child(binary: &Path, args: &[&str]) -> (Child, String) {
    let mut child = Command::new(binary)
        .args(["--port", "0", "--log-level", "warn"])
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .unwrap_or_else(|e| panic!("can't start {}: {e}", binary.display()));
    let stdout = child.stdout.take().expect("stdout is piped");
    let mut lines = BufReader::new(stdout).lines();
    loop {
        let Some(Ok(line)) = lines.next() else {
            let status = child.wait();
            panic!("tables-server stopped before it listened: {status:?}");
        };
        if let Some(address) = line.strip_prefix("tables-server listening on ") {
            let url = format!("{address}/{}", tables_core::auth::DEVELOPMENT_ACCOUNT);
            return (child, url);
        }
    }
}

/// A `tables-server` process of its own, killed (`SIGKILL`) when dropped.
#[derive(Debug)]
pub struct Process {
    /// The process.
    pub child: Child,
    /// Its development account's URL.
    pub url: String,
}

impl Process {
    /// Starts `binary` as [`spawn_child`] does, killed when dropped.
    pub fn spawn(binary: &Path, args: &[&str]) -> Process {
        let (child, url) = spawn_child(binary, args);
        Process { child, url }
    }

    /// A remote engine on it, signing with SharedKey, with `retry` as its policy.
    pub fn engine(&self, retry: tables_client::remote::RetryPolicy) -> RemoteEngine {
        engine_at(&self.url, retry)
    }

    /// Kills it with `SIGKILL` (no chance to flush anything) and waits for it.
    pub fn kill(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Drop for Process {
    fn drop(&mut self) {
        self.kill();
    }
}

/// The row the server benches write: five properties of four types, RowKey `i`
/// zero-padded to eight digits.
pub fn bench_row(partition_key: &str, i: usize) -> tables_client::DynamicEntity {
    tables_client::DynamicEntity::new(partition_key, format!("{i:08}"))
        .with("Name", format!("name {i}"))
        .with("Age", i as i32)
        .with("Score", i as f64 / 3.0)
        .with("Active", i & 1 == 0)
}
