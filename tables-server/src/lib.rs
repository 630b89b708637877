//! `tables-server`: the tables SDK's in-memory engine served over the Azure Table
//! REST protocol, an emulator for every SDK and language.
//!
//! It speaks the protocol as the official SDKs do (tables, entities in every write
//! mode, `$batch`, the three JSON metadata levels, SharedKey and SharedKeyLite) and
//! enforces the service's rules with the mem engine's checks, the same ones the
//! SDK's own engines run: what Azure refuses, it refuses, with the service's status
//! and error code.
//!
//! Data lives in memory unless the server is given a folder
//! ([`Server::data_dir`], `--data-dir`): then every acknowledged change survives a
//! crash and a restart.
//!
//! Run it (`cargo run -p tables-server`) and point any SDK at
//! `http://127.0.0.1:10002/devstoreaccount1` with the development account, or start
//! it in process, on a free port, for a test:
//!
//! ```
//! # tokio::runtime::Runtime::new().unwrap().block_on(async {
//! use tables_server::Server;
//!
//! let server = Server::builder().port(0).start().await?;
//! assert!(server.url().starts_with("http://127.0.0.1:"));
//! assert!(server.connection_string().contains("AccountName=devstoreaccount1"));
//! drop(server); // stops it
//! # Ok::<(), std::io::Error>(()) }).unwrap();
//! ```

mod access;
mod account;
mod auth;
mod batch;
mod context;
mod cors;
mod entities;
mod faults;
#[cfg(test)]
mod fuzz;
mod handle;
mod http;
mod limits;
mod oauth;
mod persist;
mod reply;
mod request;
mod service;
mod tables;
mod tls;

use std::collections::HashMap;
use std::io;
use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::path::PathBuf;
use std::sync::Arc;
use std::thread::JoinHandle;

use tables_mem::{MemEngine, MemOptions};
use tokio::net::TcpListener;
use tokio::runtime::Handle;
use tokio::sync::watch;

pub use account::Account;
pub use faults::{FaultEffect, FaultRule, Faults};
pub use limits::Limits;
pub use oauth::{OAuth, Role};
pub use persist::{Recovery, DEFAULT_JOURNAL_LIMIT};
pub use tls::Tls;

use context::{AccountState, State};

/// The emulator's usual table port.
pub const DEFAULT_PORT: u16 = 10002;

/// How to start a server: [`Server::builder`].
#[derive(Debug, Clone)]
pub struct Server {
    host: IpAddr,
    port: u16,
    accounts: Vec<Account>,
    faults: Vec<FaultRule>,
    fault_control: bool,
    fault_control_any_host: bool,
    data_dir: Option<PathBuf>,
    journal_limit: u64,
    recovery: Recovery,
    limits: Limits,
    engine: MemOptions,
    tls: Option<Tls>,
    oauth: Option<OAuth>,
}

impl Default for Server {
    fn default() -> Server {
        Server {
            host: IpAddr::V4(Ipv4Addr::LOCALHOST),
            port: DEFAULT_PORT,
            accounts: Vec::new(),
            faults: Vec::new(),
            fault_control: false,
            fault_control_any_host: false,
            data_dir: None,
            journal_limit: DEFAULT_JOURNAL_LIMIT,
            recovery: Recovery::Strict,
            limits: Limits::default(),
            engine: MemOptions::default(),
            tls: None,
            oauth: None,
        }
    }
}

impl Server {
    /// A server on 127.0.0.1:10002 serving the development account, until
    /// configured otherwise.
    pub fn builder() -> Server {
        Server::default()
    }

    /// Serves HTTPS with this certificate and key, instead of HTTP.
    pub fn tls(mut self, tls: Tls) -> Server {
        self.tls = Some(tls);
        self
    }

    /// Accepts bearer tokens (Microsoft Entra ID) as [`OAuth`] says, beside
    /// SharedKey and SAS. Azure takes them over HTTPS only, and so does the server:
    /// give it a certificate ([`Server::tls`]).
    pub fn oauth(mut self, oauth: OAuth) -> Server {
        self.oauth = Some(oauth);
        self
    }

    /// The service each account plays, with its rules: Azure Storage's Table
    /// service (the default), or Azure Cosmos DB for Table
    /// ([`MemOptions::cosmos`]: results in an arbitrary order, 255-byte RowKeys,
    /// 2 MB batches, case-sensitive table names, no service properties, statistics,
    /// CORS or table ACLs, `429` past a request-rate budget). Page sizes and the
    /// order's seed come from `options` too.
    ///
    /// ```no_run
    /// use tables_mem::MemOptions;
    /// use tables_server::Server;
    ///
    /// # async fn start() -> std::io::Result<()> {
    /// let cosmos = Server::builder()
    ///     .port(0)
    ///     .engine_options(MemOptions::cosmos(7).with_requests_per_second(Some(500)))
    ///     .start()
    ///     .await?;
    /// println!("a Cosmos DB for Table profile at {}", cosmos.url());
    /// # Ok(())
    /// # }
    /// ```
    pub fn engine_options(mut self, options: MemOptions) -> Server {
        self.engine = options;
        self
    }

    /// The address to listen on (default 127.0.0.1).
    pub fn host(mut self, host: IpAddr) -> Server {
        self.host = host;
        self
    }

    /// The port to listen on (default 10002; 0 picks a free one, see
    /// [`RunningServer::addr`]).
    pub fn port(mut self, port: u16) -> Server {
        self.port = port;
        self
    }

    /// Serves this account too. Without any, the server serves the development
    /// account ([`Account::development`]).
    pub fn account(mut self, account: Account) -> Server {
        self.accounts.push(account);
        self
    }

    /// Injects this fault (see [`FaultRule`]); rules can also be added while the
    /// server runs, through [`RunningServer::faults`].
    pub fn fault(mut self, rule: FaultRule) -> Server {
        self.faults.push(rule);
        self
    }

    /// Answers the fault control endpoint, `/_faults`: `GET` lists the rules with
    /// their counts and the log of injected faults, `POST` adds the rules in its body
    /// (one per line), `DELETE` removes them all. It answers only callers on this
    /// machine (a loopback address) whose request is signed with a served account's
    /// key (SharedKey or SharedKeyLite over `/<account>/_faults`); the server
    /// refuses to start with it on a host other than a loopback address, unless
    /// [`Server::allow_fault_control_on_any_host`] says otherwise.
    pub fn fault_control(mut self, enabled: bool) -> Server {
        self.fault_control = enabled;
        self
    }

    /// Lets the fault control endpoint be enabled on a host that is not a loopback
    /// address (`--fault-control-any-host`); it still answers loopback callers only.
    pub fn allow_fault_control_on_any_host(mut self) -> Server {
        self.fault_control_any_host = true;
        self
    }

    /// Keeps the accounts in `dir` (one folder per account), so that every
    /// acknowledged change survives a crash and a restart; without it (the
    /// default) the server keeps everything in memory.
    ///
    /// A change is answered only once it is on disk (writes arriving together
    /// share one disk sync), and a read never shows a change that is not. At start
    /// the server loads the folder's snapshot and replays the journal after it; a
    /// write cut short by a crash was never answered and is dropped whole (a batch
    /// too). The folder is locked while the server runs.
    ///
    /// ```
    /// # tokio::runtime::Runtime::new().unwrap().block_on(async {
    /// use tables_server::Server;
    ///
    /// let dir = std::env::temp_dir().join(format!("tables-doc-{}", std::process::id()));
    /// let server = Server::builder().port(0).data_dir(&dir).start().await?;
    /// assert!(dir.join("devstoreaccount1").is_dir());
    /// server.stop();
    /// # std::fs::remove_dir_all(&dir)?;
    /// # Ok::<(), std::io::Error>(()) }).unwrap();
    /// ```
    pub fn data_dir(mut self, dir: impl Into<PathBuf>) -> Server {
        self.data_dir = Some(dir.into());
        self
    }

    /// With a data directory: the size a journal segment reaches before the server
    /// snapshots the account and starts a new one (default
    /// [`DEFAULT_JOURNAL_LIMIT`], 64 MiB). Smaller means faster restarts and more
    /// snapshot writing.
    pub fn journal_limit(mut self, bytes: u64) -> Server {
        self.journal_limit = bytes;
        self
    }

    /// With a data directory: what to do when a file in it is damaged (not a write
    /// a crash cut short, which is always dropped). [`Recovery::Strict`] (the
    /// default) refuses to start, naming the file, the offset and the records at
    /// stake; [`Recovery::Salvage`] keeps every intact record, sets the damaged file
    /// aside (`<name>.damaged-<unix seconds>`, never deleted), logs what was lost
    /// and starts.
    pub fn recovery(mut self, recovery: Recovery) -> Server {
        self.recovery = recovery;
        self
    }

    /// What clients may hold: connections at once, time to send a request's
    /// headers and body, buffered request bytes (see [`Limits`]; its `Default`
    /// unless set).
    pub fn limits(mut self, limits: Limits) -> Server {
        self.limits = limits;
        self
    }

    /// The accounts served: those given, or the development account.
    fn served_accounts(&self) -> Vec<Account> {
        if self.accounts.is_empty() {
            vec![Account::development()]
        } else {
            self.accounts.clone()
        }
    }

    /// Starts serving on the current tokio runtime; the server stops when the
    /// returned handle is dropped (or the runtime shuts down).
    ///
    /// # Errors
    ///
    /// If the address can't be bound (the port is taken, say).
    pub async fn start(self) -> io::Result<RunningServer> {
        self.start_with(Vec::new()).await
    }

    /// Starts serving on the current runtime, handing connections in turn to it
    /// and to the runtimes of `workers`.
    async fn start_with(self, workers: Vec<Handle>) -> io::Result<RunningServer> {
        if self.fault_control && !self.host.is_loopback() && !self.fault_control_any_host {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!(
                    "the fault control endpoint (--fault-control) lets a caller break \
                     requests at will; it is refused beside --host {}, which is not a \
                     loopback address. Serve on 127.0.0.1, or add --fault-control-any-host \
                     (it still answers callers on this machine only)",
                    self.host
                ),
            ));
        }
        let listener = TcpListener::bind(SocketAddr::new(self.host, self.port)).await?;
        let addr = listener.local_addr()?;
        let accounts = self.served_accounts();
        let faults = Arc::new(Faults::default());
        for rule in self.faults {
            faults.add(rule);
        }
        let mut opened = open_accounts(
            &accounts,
            &self.engine,
            self.data_dir.as_deref(),
            self.journal_limit,
            self.recovery,
        )?;
        if let Some(oauth) = self.oauth {
            let oauth = Arc::new(oauth);
            for state in opened.values_mut() {
                state.oauth = Some(Arc::clone(&oauth));
            }
        }
        let https = self.tls.is_some();
        let state = Arc::new(State {
            accounts: opened,
            tls: self.tls,
            faults: Arc::clone(&faults),
            fault_control: self.fault_control,
            budget: limits::Budget::new(self.limits.max_buffered_bytes),
            limits: self.limits,
        });
        let (stop, stopped) = watch::channel(false);
        tokio::spawn(http::serve(listener, Arc::clone(&state), stopped, workers));
        Ok(RunningServer {
            addr,
            https,
            accounts,
            faults,
            stop,
            thread: None,
            state: Some(state),
        })
    }

    /// Starts serving on threads of its own (`threads` of them, at least one),
    /// independent of the caller's runtime: for tests that each run on a runtime of
    /// their own, and for the binary. Stops when the handle is dropped.
    ///
    /// Each thread runs a single-threaded runtime and keeps the connections it is
    /// handed (in turn, as they are accepted) for their whole life: a request is
    /// read, answered and written on one thread, with no hand-over between threads
    /// (which, with a work-stealing runtime, cost a wake-up of another thread per
    /// request when requests come one at a time).
    ///
    /// # Errors
    ///
    /// If a runtime or thread can't be made or the address can't be bound.
    pub fn start_on_own_thread(self, threads: usize) -> io::Result<RunningServer> {
        let https = self.tls.is_some();
        let runtime = single_threaded_runtime()?;
        let mut workers = Vec::new();
        for n in 1..threads.max(1) {
            workers.push(Worker::start(n)?);
        }
        let handles = workers.iter().map(|w| w.handle.clone()).collect();
        let (ready_tx, ready_rx) = std::sync::mpsc::channel();
        let thread = std::thread::Builder::new()
            .name("tables-server".to_owned())
            .spawn(move || {
                runtime.block_on(async move {
                    match self.start_with(handles).await {
                        Ok(server) => {
                            let mut stopped = server.stop.subscribe();
                            let addr = server.addr;
                            let accounts = server.accounts.clone();
                            let faults = Arc::clone(&server.faults);
                            let stop = server.stop.clone();
                            let _ = ready_tx.send(Ok((addr, accounts, faults, stop)));
                            // Run until the handle on the other side says stop.
                            while !*stopped.borrow() {
                                if stopped.changed().await.is_err() {
                                    break;
                                }
                            }
                            drop(server);
                        }
                        Err(err) => {
                            let _ = ready_tx.send(Err(err));
                        }
                    }
                });
                // The connections are stopped: the other threads can go.
                for worker in workers {
                    worker.stop();
                }
            })?;
        let (addr, accounts, faults, stop) = ready_rx
            .recv()
            .map_err(|_| io::Error::other("the server thread stopped before it started"))??;
        Ok(RunningServer {
            addr,
            https,
            accounts,
            faults,
            stop,
            thread: Some(thread),
            state: None,
        })
    }
}

fn single_threaded_runtime() -> io::Result<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
}

/// A thread running a single-threaded runtime that serves the connections handed
/// to it, until stopped.
struct Worker {
    handle: Handle,
    stop: tokio::sync::oneshot::Sender<()>,
    thread: JoinHandle<()>,
}

impl Worker {
    fn start(n: usize) -> io::Result<Worker> {
        let runtime = single_threaded_runtime()?;
        let handle = runtime.handle().clone();
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        let thread = std::thread::Builder::new()
            .name(format!("tables-server-{n}"))
            .spawn(move || {
                // Err when the sender is dropped without a word: stop then too.
                let _ = runtime.block_on(stopped);
            })?;
        Ok(Worker {
            handle,
            stop,
            thread,
        })
    }

    fn stop(self) {
        let _ = self.stop.send(());
        let _ = self.thread.join();
    }
}

/// Each account's state: new, or restored from its folder in `data_dir`.
fn open_accounts(
    accounts: &[Account],
    engine_options: &MemOptions,
    data_dir: Option<&std::path::Path>,
    journal_limit: u64,
    recovery: Recovery,
) -> io::Result<HashMap<String, AccountState>> {
    let mut states = HashMap::new();
    for account in accounts {
        let engine = MemEngine::with_options(engine_options.clone());
        let state = match data_dir {
            None => AccountState::new(account.clone(), engine),
            Some(dir) => {
                let opened = persist::Journal::open(
                    &dir.join(account.name()),
                    journal_limit,
                    &engine,
                    recovery,
                )
                .and_then(|(journal, restored)| {
                    let state =
                        AccountState::restored(account.clone(), engine, restored, Some(journal));
                    state.start_journal().map(|()| state)
                });
                match opened {
                    Ok(state) => state,
                    Err(err) => {
                        close_journals(states.values());
                        return Err(err);
                    }
                }
            }
        };
        states.insert(account.name().to_owned(), state);
    }
    Ok(states)
}

/// Writes what the journals hold and releases their folders.
fn close_journals<'a>(accounts: impl IntoIterator<Item = &'a AccountState>) {
    for journal in accounts.into_iter().filter_map(|a| a.journal.as_ref()) {
        journal.close();
    }
}

/// A server that is running; dropping it stops it.
#[derive(Debug)]
pub struct RunningServer {
    addr: SocketAddr,
    /// Whether it serves HTTPS.
    https: bool,
    accounts: Vec<Account>,
    faults: Arc<Faults>,
    stop: watch::Sender<bool>,
    thread: Option<JoinHandle<()>>,
    /// What it serves, when it runs on the caller's runtime (closed on stop).
    state: Option<Arc<State>>,
}

impl RunningServer {
    /// The fault rules: add or clear them while the server runs, read the log of
    /// injected faults.
    pub fn faults(&self) -> &Faults {
        &self.faults
    }

    /// The address it listens on.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// The table endpoint of its first account, path-style:
    /// `http://127.0.0.1:<port>/<account>` (`https://` when it serves HTTPS).
    pub fn url(&self) -> String {
        self.account_url(self.accounts[0].name())
    }

    /// The table endpoint of `account`, path-style.
    pub fn account_url(&self, account: &str) -> String {
        let scheme = if self.https { "https" } else { "http" };
        format!("{scheme}://{}/{account}", self.addr)
    }

    /// The connection string of its first account, for any SDK:
    /// `DefaultEndpointsProtocol=http;AccountName=..;AccountKey=..;TableEndpoint=..`.
    pub fn connection_string(&self) -> String {
        let account = &self.accounts[0];
        format!(
            "DefaultEndpointsProtocol={};AccountName={};AccountKey={};TableEndpoint={}",
            if self.https { "https" } else { "http" },
            account.name(),
            account.key_text(),
            self.url()
        )
    }

    /// Stops serving and waits for the server's thread, if it has one.
    pub fn stop(mut self) {
        self.shut_down();
    }

    fn shut_down(&mut self) {
        let _ = self.stop.send(true);
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
        if let Some(state) = self.state.take() {
            close_journals(state.accounts.values());
        }
    }
}

impl Drop for RunningServer {
    fn drop(&mut self) {
        self.shut_down();
    }
}
