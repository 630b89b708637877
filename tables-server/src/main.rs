//! `tables-server`: serve the Azure Table REST protocol on a loopback port.
//!
//! ```text
//! tables-server [--host 127.0.0.1] [--port 10002] [--account name:key[:key2]]...
//!               [--threads N] [--log-level info] [--fault RULE]... [--fault-control]
//!               [--data-dir DIR] [--journal-limit BYTES] [--salvage]
//!               [--max-connections N] [--header-timeout SECS] [--body-timeout SECS]
//!               [--max-buffered-bytes BYTES]
//! ```
//!
//! Accounts also come from `TABLES_SERVER_ACCOUNTS` or Azurite's `AZURITE_ACCOUNTS`
//! (`name:key[:key2];name:key...`); without any, the development account.

use std::io::Write as _;
use std::net::IpAddr;
use std::process::ExitCode;
use std::time::Duration;

use std::path::PathBuf;

use tables_mem::MemOptions;
use tables_server::{
    Account, FaultRule, Limits, OAuth, Recovery, Role, Server, Tls, DEFAULT_JOURNAL_LIMIT,
    DEFAULT_PORT,
};

// The binary allocates with mimalloc: a request's and a page's small, short-lived
// allocations cost fewer instructions than with the system allocator, and a loaded
// table's rows take less memory. The library leaves the allocator to its user.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

const USAGE: &str = "\
tables-server: the tables SDK's in-memory engine over the Azure Table REST protocol

USAGE:
    tables-server [OPTIONS]

OPTIONS:
    --host <IP>              address to listen on [default: 127.0.0.1]
    --port <PORT>            port to listen on; 0 picks a free one [default: 10002]
    --account <NAME:KEY>     serve this account (NAME:KEY1[:KEY2]); repeat for more.
                             Also TABLES_SERVER_ACCOUNTS or AZURITE_ACCOUNTS
                             (NAME:KEY[:KEY2];NAME:KEY...). Default: the development
                             account devstoreaccount1 with its well-known key
    --data-dir <DIR>         keep the accounts in DIR (a folder per account): every
                             acknowledged change survives a crash and restart.
                             Default: in memory only. Also TABLES_SERVER_DATA_DIR
    --journal-limit <BYTES>  with --data-dir: snapshot the account when its journal
                             segment grows past BYTES [default: 67108864]
    --salvage                with --data-dir: start even if a file in it is damaged
                             (not a write cut short by a crash): keep every intact
                             record, set the damaged file aside (renamed
                             <name>.damaged-<time>, never deleted) and log what was
                             lost. Without it, damage stops the start with an error
                             naming the file, the offset and the records at stake
    --max-connections <N>    connections served at once; more are answered 503
                             ServerBusy with Retry-After [default: the descriptor
                             limit less 128, 16 to 4096]
    --header-timeout <SECS>  time a client has to send a request's line and headers
                             (also how long an idle connection stays open); then the
                             connection is closed [default: 20]
    --body-timeout <SECS>    time a client has to send a request's body after its
                             headers; then 408 RequestTimeout [default: 30]
    --max-buffered-bytes <BYTES>
                             request body bytes held by all requests together;
                             past it 503 ServerBusy [default: 268435456]
    --threads <N>            threads serving connections (each keeps those it is
                             handed) [default: the number of CPUs]
    --log-level <LEVEL>      error, warn, info, debug or trace [default: info];
                             also RUST_LOG
    --fault <RULE>           inject a fault (repeatable), e.g.
                             status=503,retry-after-ms=500,method=POST,table=t,times=2
                             effects: status=500|503|429 [retry-after-ms=N],
                             latency=<ms>, drop=before|after; selectors: method=,
                             table=, path=, after=N, times=N
    --fault-control          answer GET|POST|DELETE /_faults (list, add, clear
                             rules) to callers on this machine that sign with a
                             served account's key (SharedKey over /<account>/_faults);
                             refused beside a --host that is not loopback, unless
                             --fault-control-any-host is given too
    --fault-control-any-host allow --fault-control beside any --host (it still
                             answers callers on this machine only)
    --profile <SERVICE>      the service to play: azure (Azure Storage's Table
                             service) or cosmos (Azure Cosmos DB for Table: results
                             in an arbitrary order, RowKeys of at most 255 bytes,
                             batches of at most 2 MB, case-sensitive table names,
                             Timestamp filters that match nothing, no service
                             properties, statistics, CORS or ACLs) [default: azure]
    --order-seed <N>         with --profile cosmos: the seed of the result order
                             [default: 0]
    --requests-per-second <N>
                             answer 429 with x-ms-retry-after-ms past N requests a
                             second (Cosmos DB's request units) [default: no limit]
    --cert <PEM>             serve HTTPS with this certificate chain (leaf first);
                             needs --key. Default: plain HTTP
    --key <PEM>              the certificate's private key (PKCS #8, PKCS #1, SEC1)
    --oauth                  accept bearer tokens (Microsoft Entra ID) over HTTPS:
                             their form, exp, nbf, issuer and audience are checked
                             (https://storage.azure.com, or https://cosmos.azure.com
                             with --profile cosmos); the signature only with
                             --oauth-hs256-secret-file. A principal with no role has
                             full access, as on Azurite
    --oauth-role <OID=ROLE>  give the principal with object id OID a data role:
                             reader (Storage Table Data Reader) or contributor
                             (Storage Table Data Contributor); repeatable
    --oauth-require-role     refuse principals with no role (403), as Azure does
    --oauth-hs256-secret-file <FILE>
                             check each token's HS256 signature with the secret
                             in FILE (Entra ID's own RSA signatures can't be checked
                             here)
    -h, --help               print this help
";

struct Options {
    host: IpAddr,
    port: u16,
    accounts: Vec<Account>,
    threads: usize,
    log_level: String,
    faults: Vec<FaultRule>,
    fault_control: bool,
    fault_control_any_host: bool,
    data_dir: Option<PathBuf>,
    journal_limit: u64,
    recovery: Recovery,
    limits: Limits,
    engine: MemOptions,
    cert: Option<PathBuf>,
    key: Option<PathBuf>,
    oauth: Option<OAuth>,
}

fn parse(args: impl Iterator<Item = String>) -> Result<Option<Options>, String> {
    let mut options = Options {
        host: IpAddr::from([127, 0, 0, 1]),
        port: DEFAULT_PORT,
        accounts: Vec::new(),
        threads: std::thread::available_parallelism().map_or(2, usize::from),
        log_level: std::env::var("RUST_LOG").unwrap_or_else(|_| "info".to_owned()),
        faults: Vec::new(),
        fault_control: false,
        fault_control_any_host: false,
        data_dir: std::env::var_os("TABLES_SERVER_DATA_DIR").map(PathBuf::from),
        journal_limit: DEFAULT_JOURNAL_LIMIT,
        recovery: Recovery::Strict,
        limits: Limits::default(),
        engine: MemOptions::default(),
        cert: None,
        key: None,
        oauth: None,
    };
    let mut args = args.peekable();
    while let Some(arg) = args.next() {
        let (flag, inline) = match arg.split_once('=') {
            Some((flag, value)) if flag.starts_with("--") => {
                (flag.to_owned(), Some(value.to_owned()))
            }
            _ => (arg.clone(), None),
        };
        let mut value = || {
            inline
                .clone()
                .or_else(|| args.next())
                .ok_or_else(|| format!("{flag} needs a value"))
        };
        match flag.as_str() {
            "-h" | "--help" => return Ok(None),
            "--host" => {
                let text = value()?;
                options.host = text
                    .parse()
                    .map_err(|_| format!("--host {text:?} is not an IP address"))?;
            }
            "--port" => {
                let text = value()?;
                options.port = text
                    .parse()
                    .map_err(|_| format!("--port {text:?} is not a port number (0 to 65535)"))?;
            }
            "--account" => {
                let text = value()?;
                options
                    .accounts
                    .extend(Account::parse_list(&text).map_err(|e| format!("--account: {e}"))?);
            }
            "--threads" => {
                let text = value()?;
                options.threads = text
                    .parse()
                    .ok()
                    .filter(|n| *n > 0)
                    .ok_or_else(|| format!("--threads {text:?} is not a positive number"))?;
            }
            "--log-level" => options.log_level = value()?,
            "--fault" => options
                .faults
                .push(value()?.parse().map_err(|e| format!("--fault: {e}"))?),
            "--fault-control" => options.fault_control = true,
            "--cert" => options.cert = Some(PathBuf::from(value()?)),
            "--key" => options.key = Some(PathBuf::from(value()?)),
            "--oauth" => options.oauth = Some(options.oauth.take().unwrap_or_default()),
            "--oauth-role" => {
                let text = value()?;
                let (oid, role) = text.split_once('=').ok_or_else(|| {
                    format!("--oauth-role {text:?} is not OID=ROLE (reader or contributor)")
                })?;
                let role: Role = role.parse().map_err(|e| format!("--oauth-role: {e}"))?;
                let oauth = options.oauth.take().unwrap_or_default();
                options.oauth = Some(oauth.role(oid, role));
            }
            "--oauth-require-role" => {
                options.oauth = Some(options.oauth.take().unwrap_or_default().require_role());
            }
            "--oauth-hs256-secret-file" => {
                let path = PathBuf::from(value()?);
                let secret = std::fs::read(&path).map_err(|e| {
                    format!(
                        "--oauth-hs256-secret-file: can't read {}: {e}",
                        path.display()
                    )
                })?;
                let oauth = options.oauth.take().unwrap_or_default();
                options.oauth = Some(oauth.hs256_secret(secret));
            }
            "--fault-control-any-host" => options.fault_control_any_host = true,
            "--data-dir" => options.data_dir = Some(PathBuf::from(value()?)),
            "--salvage" => options.recovery = Recovery::Salvage,
            "--profile" => {
                let text = value()?;
                let seed = options.engine.order_seed;
                let rate = options.engine.requests_per_second;
                options.engine = match text.to_ascii_lowercase().as_str() {
                    "azure" | "storage" => MemOptions::default(),
                    "cosmos" => MemOptions::cosmos(seed),
                    _ => {
                        return Err(format!(
                            "--profile {text:?} is not a service this server plays: azure or cosmos"
                        ))
                    }
                }
                .with_requests_per_second(rate);
                options.engine.order_seed = seed;
            }
            "--order-seed" => {
                let text = value()?;
                options.engine.order_seed = text
                    .parse()
                    .map_err(|_| format!("--order-seed {text:?} is not a number"))?;
            }
            "--requests-per-second" => {
                let text = value()?;
                let rate = text.parse::<u32>().ok().filter(|n| *n > 0).ok_or_else(|| {
                    format!("--requests-per-second {text:?} is not a positive number")
                })?;
                options.engine.requests_per_second = Some(rate);
            }
            "--max-connections" => {
                let text = value()?;
                options.limits.max_connections =
                    text.parse().ok().filter(|n| *n > 0).ok_or_else(|| {
                        format!("--max-connections {text:?} is not a positive number")
                    })?;
            }
            "--header-timeout" => options.limits.header_timeout = seconds(&flag, &value()?)?,
            "--body-timeout" => options.limits.body_timeout = seconds(&flag, &value()?)?,
            "--max-buffered-bytes" => {
                let text = value()?;
                options.limits.max_buffered_bytes =
                    text.parse().ok().filter(|n| *n > 0).ok_or_else(|| {
                        format!("--max-buffered-bytes {text:?} is not a positive number of bytes")
                    })?;
            }
            "--journal-limit" => {
                let text = value()?;
                options.journal_limit = text.parse().ok().filter(|n| *n > 0).ok_or_else(|| {
                    format!("--journal-limit {text:?} is not a positive number of bytes")
                })?;
            }
            other => return Err(format!("unknown option {other:?}")),
        }
    }
    match (&options.cert, &options.key) {
        (Some(_), None) => return Err("--cert needs --key (the certificate's private key)".into()),
        (None, Some(_)) => return Err("--key needs --cert".into()),
        _ => {}
    }
    if options.oauth.is_some() && options.cert.is_none() {
        return Err(
            "--oauth needs HTTPS (--cert and --key): Azure and every official SDK send bearer \
             tokens over HTTPS only"
                .into(),
        );
    }
    if options.accounts.is_empty() {
        for var in ["TABLES_SERVER_ACCOUNTS", "AZURITE_ACCOUNTS"] {
            if let Ok(text) = std::env::var(var) {
                options
                    .accounts
                    .extend(Account::parse_list(&text).map_err(|e| format!("{var}: {e}"))?);
                break;
            }
        }
    }
    Ok(Some(options))
}

/// A positive number of seconds (`1.5` allowed).
fn seconds(flag: &str, text: &str) -> Result<Duration, String> {
    text.parse::<f64>()
        .ok()
        .filter(|s| s.is_finite() && *s > 0.0 && *s < 1e9)
        .map(Duration::from_secs_f64)
        .ok_or_else(|| format!("{flag} {text:?} is not a positive number of seconds"))
}

fn main() -> ExitCode {
    let mut options = match parse(std::env::args().skip(1)) {
        Ok(Some(options)) => options,
        Ok(None) => {
            let _ = std::io::stdout().write_all(USAGE.as_bytes());
            return ExitCode::SUCCESS;
        }
        Err(message) => {
            eprintln!("tables-server: {message}\n\n{USAGE}");
            return ExitCode::from(2);
        }
    };
    let filter = tracing_subscriber::filter::LevelFilter::from_level(
        match options.log_level.to_ascii_lowercase().as_str() {
            "error" => tracing::Level::ERROR,
            "warn" => tracing::Level::WARN,
            "debug" => tracing::Level::DEBUG,
            "trace" => tracing::Level::TRACE,
            _ => tracing::Level::INFO,
        },
    );
    tracing_subscriber::fmt()
        .with_max_level(filter)
        .with_writer(std::io::stderr)
        .init();
    let mut server = Server::builder()
        .host(options.host)
        .port(options.port)
        .fault_control(options.fault_control)
        .journal_limit(options.journal_limit)
        .recovery(options.recovery)
        .limits(options.limits)
        .engine_options(options.engine);
    if let Some(dir) = &options.data_dir {
        server = server.data_dir(dir);
    }
    if let (Some(cert), Some(key)) = (&options.cert, &options.key) {
        match Tls::from_pem_files(cert, key) {
            Ok(tls) => server = server.tls(tls),
            Err(err) => {
                eprintln!("tables-server: --cert/--key: {err}");
                return ExitCode::from(2);
            }
        }
    }
    if let Some(oauth) = options.oauth.take() {
        server = server.oauth(oauth);
    }
    if options.fault_control_any_host {
        server = server.allow_fault_control_on_any_host();
    }
    for rule in options.faults {
        server = server.fault(rule);
    }
    for account in options.accounts {
        server = server.account(account);
    }
    let signals = match Signals::new() {
        Ok(signals) => signals,
        Err(err) => {
            eprintln!("tables-server: can't listen for Ctrl-C and SIGTERM: {err}");
            return ExitCode::FAILURE;
        }
    };
    let running = match server.start_on_own_thread(options.threads) {
        Ok(running) => running,
        Err(err) => {
            eprintln!(
                "tables-server: can't start on {}:{}: {err}",
                options.host, options.port
            );
            return ExitCode::FAILURE;
        }
    };
    let mut out = std::io::stdout().lock();
    let scheme = if running.url().starts_with("https://") {
        "https"
    } else {
        "http"
    };
    let _ = writeln!(
        out,
        "tables-server listening on {scheme}://{}",
        running.addr()
    );
    let _ = writeln!(out, "connection string: {}", running.connection_string());
    let _ = out.flush();
    drop(out);
    signals.wait();
    running.stop();
    ExitCode::SUCCESS
}

/// Ctrl-C and SIGTERM, listened for from before the server listens: made later, the
/// runtime that waits for them could find no free descriptor (clients may take them
/// all as soon as the server listens), and the server would stop at once.
struct Signals {
    runtime: tokio::runtime::Runtime,
    #[cfg(unix)]
    listeners: [tokio::signal::unix::Signal; 2],
}

impl Signals {
    fn new() -> std::io::Result<Signals> {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()?;
        #[cfg(unix)]
        let listeners = runtime.block_on(async {
            use tokio::signal::unix::{signal, SignalKind};
            Ok::<_, std::io::Error>([
                signal(SignalKind::interrupt())?,
                signal(SignalKind::terminate())?,
            ])
        })?;
        Ok(Signals {
            runtime,
            #[cfg(unix)]
            listeners,
        })
    }

    /// Blocks until Ctrl-C or SIGTERM.
    fn wait(self) {
        #[cfg(unix)]
        {
            let [mut interrupt, mut terminate] = self.listeners;
            self.runtime.block_on(async {
                tokio::select! {
                    _ = interrupt.recv() => {}
                    _ = terminate.recv() => {}
                }
            });
        }
        #[cfg(not(unix))]
        self.runtime.block_on(async {
            let _ = tokio::signal::ctrl_c().await;
        });
    }
}
