//! Shared set-up of the example programs.
//!
//! Every example runs on the bundled in-memory engine by default, so
//! `cargo run --example <name>` needs no account, emulator or network. Setting
//! [`CONNECTION_STRING_VAR`] to a connection string runs it on that endpoint instead
//! (Azure Storage, the Cosmos DB Table API or Azurite): its tables then get a prefix
//! unique to the run ([`PrefixedEngine::unique`]) and are deleted when it ends, so
//! runs never collide with each other or with the account's own tables.
//!
//! An example's `main` hands its body to [`run`], which picks the engine, prints
//! which one it is, and cleans up. The body gets an [`Example`]: the client, and
//! fault-injection controls that work on every engine ([`FaultInjector`]), for
//! examples that simulate crashes. It checks what it shows with [`ensure`], and the
//! program exits non-zero when a check fails, so running every example is a test.
//!
//! ```
//! use tables_examples::EngineChoice;
//!
//! assert!(matches!(EngineChoice::from_connection_string(None)?, EngineChoice::Mem));
//! let azurite = EngineChoice::from_connection_string(Some("UseDevelopmentStorage=true"))?;
//! assert!(matches!(azurite, EngineChoice::Remote(_)));
//! // What it prints never includes the account key.
//! assert!(azurite.describe().contains("http://127.0.0.1:10002/devstoreaccount1"));
//! # Ok::<(), tables_client::Error>(())
//! ```

use std::error::Error as StdError;
use std::fmt;
use std::future::Future;
use std::sync::Arc;

use tables_client::blob::BlobStore;
use tables_client::mem::{FaultInjector, Faults, MemEngine, MemOptions};
use tables_client::remote::{ConnectionString, RemoteEngine};
use tables_client::{DynamicEntity, Engine, ErrorKind, PrefixedEngine, TableServiceClient, Value};

/// The environment variable that points the examples at a remote endpoint (an
/// Azure Storage or Azurite connection string).
pub const CONNECTION_STRING_VAR: &str = "TABLES_CONNECTION_STRING";

/// The environment variable that says which service the endpoint plays, when its
/// host doesn't: `cosmos` for Azure Cosmos DB for Table (`tables-server --profile
/// cosmos`; on the in-memory engine, its Cosmos profile). Unset: the host decides.
pub const SERVICE_VAR: &str = "TABLES_SERVICE";

/// The service [`SERVICE_VAR`] names, if it names Cosmos DB for Table.
fn cosmos_asked() -> bool {
    std::env::var(SERVICE_VAR).is_ok_and(|v| v.trim().eq_ignore_ascii_case("cosmos"))
}

/// What an example's `main` returns: any error ends the program with a non-zero
/// exit status and its message.
pub type BoxResult<T> = Result<T, Box<dyn StdError>>;

/// The engine an example runs on.
#[derive(Debug, Clone)]
pub enum EngineChoice {
    /// The in-memory engine: no connection string was given.
    Mem,
    /// The remote endpoint a connection string names. Its `Debug` output never shows
    /// the key or signature.
    Remote(Box<ConnectionString>),
}

impl EngineChoice {
    /// The choice for a connection string (`None` or blank: none given).
    ///
    /// # Errors
    ///
    /// [`ErrorKind::InvalidInput`] for a malformed connection string.
    pub fn from_connection_string(
        connection_string: Option<&str>,
    ) -> tables_client::Result<EngineChoice> {
        match connection_string {
            Some(s) if !s.trim().is_empty() => {
                Ok(EngineChoice::Remote(Box::new(s.trim().parse()?)))
            }
            _ => Ok(EngineChoice::Mem),
        }
    }

    /// The choice for this process, from [`CONNECTION_STRING_VAR`].
    ///
    /// # Errors
    ///
    /// [`ErrorKind::InvalidInput`] for a malformed connection string, or one that is
    /// not UTF-8.
    pub fn from_env() -> tables_client::Result<EngineChoice> {
        match std::env::var_os(CONNECTION_STRING_VAR) {
            None => Ok(EngineChoice::Mem),
            Some(value) => match value.to_str() {
                Some(text) => EngineChoice::from_connection_string(Some(text)),
                None => Err(tables_client::Error::new(
                    ErrorKind::InvalidInput,
                    format!("{CONNECTION_STRING_VAR} is not valid UTF-8"),
                )),
            },
        }
    }

    /// One line for the user saying which engine runs (never a secret).
    pub fn describe(&self) -> String {
        match self {
            EngineChoice::Mem if cosmos_asked() => String::from(
                "Engine: in-memory, playing Cosmos DB for Table (TABLES_SERVICE=cosmos).",
            ),
            EngineChoice::Mem => String::from(
                "Engine: in-memory (set TABLES_CONNECTION_STRING to run on a remote endpoint).",
            ),
            EngineChoice::Remote(connection) => format!(
                "Engine: remote, {} (from TABLES_CONNECTION_STRING){}.",
                connection.endpoint(),
                if cosmos_asked() {
                    ", Cosmos DB for Table (TABLES_SERVICE=cosmos)"
                } else {
                    ""
                }
            ),
        }
    }

    /// A new engine for this choice: a fresh in-memory engine, or the remote endpoint
    /// with every table under a prefix unique to this call.
    ///
    /// # Errors
    ///
    /// The remote engine's set-up errors (an endpoint it refuses, say).
    pub fn open(&self) -> tables_client::Result<Opened> {
        match self {
            EngineChoice::Mem => Ok(Opened {
                engine: Arc::new(if cosmos_asked() {
                    MemEngine::with_options(MemOptions::cosmos(std::process::id().into()))
                } else {
                    MemEngine::new()
                }),
                scratch: None,
            }),
            EngineChoice::Remote(connection) => {
                let mut builder = RemoteEngine::builder_from(connection);
                if cosmos_asked() {
                    builder = builder.service(tables_client::ServiceKind::CosmosTable);
                }
                let remote = builder.build()?;
                let scratch = Arc::new(PrefixedEngine::unique(remote));
                Ok(Opened {
                    engine: Arc::clone(&scratch) as Arc<dyn Engine>,
                    scratch: Some(scratch),
                })
            }
        }
    }
}

/// An engine opened by [`EngineChoice::open`].
#[derive(Debug)]
pub struct Opened {
    /// The engine to run on.
    pub engine: Arc<dyn Engine>,
    /// On a remote endpoint, the prefix that holds this run's tables.
    pub scratch: Option<Arc<PrefixedEngine<RemoteEngine>>>,
}

impl Opened {
    /// Deletes this run's tables on a remote endpoint (nothing to do in memory), and
    /// says how many there were.
    ///
    /// # Errors
    ///
    /// The engine's error if a table cannot be listed or deleted.
    pub async fn clean_up(&self) -> tables_client::Result<usize> {
        match &self.scratch {
            Some(scratch) => Ok(scratch.delete_all_tables().await?.len()),
            None => Ok(0),
        }
    }
}

/// What an example body is given: the client to run on, and fault-injection
/// controls in front of the engine (on every engine, the remote one included).
#[derive(Debug, Clone)]
pub struct Example {
    service: TableServiceClient,
    injector: FaultInjector<Arc<dyn Engine>>,
}

impl Example {
    /// An example over `engine`, with no faults armed.
    pub fn new(engine: Arc<dyn Engine>) -> Example {
        let injector = FaultInjector::new(engine);
        Example {
            service: TableServiceClient::new(injector.clone()),
            injector,
        }
    }

    /// The client the example runs on.
    pub fn service(&self) -> TableServiceClient {
        self.service.clone()
    }

    /// The fault-injection controls and call counters of the client's engine: an
    /// injected fault makes a call fail before it is sent, or after it was applied
    /// (a lost answer, a crash).
    pub fn faults(&self) -> &Faults {
        self.injector.faults()
    }
}

/// Runs an example's body on the engine [`CONNECTION_STRING_VAR`] chooses, after
/// printing which one it is, then deletes the run's tables on a remote endpoint
/// (whether the body succeeded or not).
///
/// ```no_run
/// use tables_examples::{run, BoxResult, Example};
///
/// async fn body(example: Example) -> BoxResult<()> {
///     let service = example.service();
///     service.create_table("Notes").await?;
///     Ok(())
/// }
///
/// #[tokio::main]
/// async fn main() -> BoxResult<()> {
///     run(body).await
/// }
/// ```
///
/// # Errors
///
/// The body's error; else a malformed connection string or a failed clean-up.
#[allow(clippy::print_stdout)] // an example's first and last lines of output
pub async fn run<F, Fut>(body: F) -> BoxResult<()>
where
    F: FnOnce(Example) -> Fut,
    Fut: Future<Output = BoxResult<()>>,
{
    let choice = EngineChoice::from_env()?;
    println!("{}", choice.describe());
    let opened = choice.open()?;
    if let Some(scratch) = &opened.scratch {
        println!(
            "This run's tables carry the prefix {} and are deleted when it ends.",
            scratch.prefix()
        );
    }
    let outcome = body(Example::new(Arc::clone(&opened.engine))).await;
    let cleaned = opened.clean_up().await;
    match (&outcome, cleaned) {
        (_, Ok(0)) => {}
        (_, Ok(n)) => println!(
            "
Deleted the run's {n} table(s)."
        ),
        (Ok(()), Err(e)) => return Err(e.into()),
        (Err(_), Err(e)) => println!(
            "
Could not delete the run's tables: {e}"
        ),
    }
    outcome
}

/// A claim an example makes that turned out false.
#[derive(Clone, PartialEq, Eq)]
pub struct CheckFailed {
    what: String,
}

/// Shown as its message: `main` returning it prints `Error: example check failed: ..`.
impl fmt::Debug for CheckFailed {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

impl fmt::Display for CheckFailed {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "example check failed: {}", self.what)
    }
}

impl StdError for CheckFailed {}

/// A blob store beside the example's tables, with a new container for the run
/// (named `{stem}-{process id}`): the in-memory store, or the blob service the
/// connection string in [`CONNECTION_STRING_VAR`] names (its `BlobEndpoint`, or the
/// account's). The example deletes the container when it ends.
///
/// # Errors
///
/// A connection string without a blob endpoint; the store's errors.
pub async fn blob_container(stem: &str) -> BoxResult<(Arc<dyn BlobStore>, String)> {
    let store: Arc<dyn BlobStore> = match std::env::var(CONNECTION_STRING_VAR) {
        Ok(text) if !text.trim().is_empty() => {
            Arc::new(tables_client::remote::RemoteBlobStore::from_connection_string(&text)?)
        }
        _ => Arc::new(tables_client::mem::MemBlobStore::new()),
    };
    let container = format!("{stem}-{}", std::process::id());
    store.create_container(&container).await?;
    Ok((store, container))
}

/// `Ok` if `condition` holds, else a [`CheckFailed`] saying `what` should have held:
/// an example checks everything it prints, so running it is a test.
///
/// # Errors
///
/// [`CheckFailed`] when `condition` is false.
///
/// ```
/// use tables_examples::ensure;
///
/// assert!(ensure(1 + 1 == 2, "arithmetic works").is_ok());
/// let err = ensure(false, "the moon is cheese").unwrap_err();
/// assert!(err.to_string().contains("the moon is cheese"));
/// ```
pub fn ensure(condition: bool, what: impl fmt::Display) -> Result<(), CheckFailed> {
    if condition {
        Ok(())
    } else {
        Err(CheckFailed {
            what: what.to_string(),
        })
    }
}

/// Every row of `table` as stored, primaries, index copies, index entities and
/// intents alike, through the raw [`Engine`] (a typed query shows primaries only).
/// The examples use it to show what the SDK wrote.
///
/// # Errors
///
/// The engine's errors (`TableNotFound` for a missing table).
pub async fn raw_rows(service: &TableServiceClient, table: &str) -> BoxResult<Vec<DynamicEntity>> {
    Ok(service.raw_rows(table).await?)
}

/// The [`ErrorKind`] of an SDK error inside a boxed error (`None` for other errors).
///
/// ```
/// use tables_client::{Error, ErrorKind};
/// use tables_examples::error_kind;
///
/// let boxed: Box<dyn std::error::Error> = Error::new(ErrorKind::Timeout, "slow").into();
/// assert_eq!(error_kind(boxed.as_ref()), Some(ErrorKind::Timeout));
/// ```
pub fn error_kind(error: &(dyn StdError + 'static)) -> Option<ErrorKind> {
    error
        .downcast_ref::<tables_client::Error>()
        .map(tables_client::Error::kind)
}

/// The `EntityType` a row was written with (`"Employee"`, `"Employee@email"` for an
/// index copy, `"$intent"`...), or `"-"` for an untyped row.
pub fn entity_type(row: &DynamicEntity) -> &str {
    match row.get("EntityType") {
        Some(Value::String(kind)) => kind,
        _ => "-",
    }
}

/// How many rows of `rows` have the `EntityType` `kind`.
pub fn count_of(rows: &[DynamicEntity], kind: &str) -> usize {
    rows.iter().filter(|row| entity_type(row) == kind).count()
}

/// How many rows of `rows` are intents with work left: `$intent` rows other than the
/// small tombstones finished intents leave for a while (their `Intent` document
/// says `"state":"done"` or `"aborted"` and lists nothing; see
/// `ClientOptions::intent_retention`).
pub fn pending_intents(rows: &[DynamicEntity]) -> usize {
    rows.iter()
        .filter(|row| entity_type(row) == "$intent")
        .filter(|row| {
            let doc = match row.get("Intent") {
                Some(Value::String(text)) => text.as_str(),
                _ => "",
            };
            let finished =
                doc.contains(r#""state":"done""#) || doc.contains(r#""state":"aborted""#);
            !(finished && doc.contains(r#""primaries":[]"#))
        })
        .count()
}

/// The README's code runs as a doc test, so the front page can't drift from the SDK.
#[cfg(doctest)]
#[doc = include_str!("../../README.md")]
mod readme {}

#[cfg(test)]
mod tests {
    use super::*;

    const DEV: &str = "UseDevelopmentStorage=true";

    #[test]
    fn a_connection_string_chooses_the_remote_engine() {
        assert!(matches!(
            EngineChoice::from_connection_string(None).unwrap(),
            EngineChoice::Mem
        ));
        assert!(matches!(
            EngineChoice::from_connection_string(Some("  ")).unwrap(),
            EngineChoice::Mem
        ));
        let remote = EngineChoice::from_connection_string(Some(
            "DefaultEndpointsProtocol=https;AccountName=acct;AccountKey=a2V5",
        ))
        .unwrap();
        assert!(remote
            .describe()
            .contains("https://acct.table.core.windows.net"));
        assert!(!remote.describe().contains("a2V5"));
        assert!(!format!("{remote:?}").contains("a2V5"));
        let err = EngineChoice::from_connection_string(Some("nonsense")).unwrap_err();
        assert_eq!(err.kind(), ErrorKind::InvalidInput);
    }

    #[tokio::test]
    async fn every_mem_open_is_a_fresh_engine() {
        let choice = EngineChoice::Mem;
        let engine = choice.open().unwrap().engine;
        engine.create_table("Fresh").await.unwrap();
        // A second engine does not share the first one's tables.
        choice
            .open()
            .unwrap()
            .engine
            .create_table("Fresh")
            .await
            .unwrap();
    }

    #[tokio::test]
    async fn remote_opens_are_prefixed_and_nothing_is_sent_until_used() {
        let choice = EngineChoice::from_connection_string(Some(DEV)).unwrap();
        let a = choice.open().unwrap();
        let b = choice.open().unwrap();
        let (a, b) = (a.scratch.unwrap(), b.scratch.unwrap());
        assert_ne!(a.prefix(), b.prefix());
        assert_eq!(
            a.inner().endpoint(),
            "http://127.0.0.1:10002/devstoreaccount1"
        );
    }

    #[tokio::test]
    async fn faults_sit_in_front_of_the_engine() {
        let example = Example::new(Arc::new(MemEngine::new()));
        let service = example.service();
        service.create_table("Shared").await.unwrap();
        example.faults().inject(
            tables_client::mem::Fault::fail(ErrorKind::Timeout)
                .on(tables_client::mem::CallKind::Write)
                .nth(1),
        );
        let row = DynamicEntity::new("p", "r").with("EntityType", "Note");
        let insert = tables_client::WriteOp::Insert(row);
        let err = service.engine().write("Shared", &insert).await.unwrap_err();
        assert_eq!(err.kind(), ErrorKind::Timeout);
        service.engine().write("Shared", &insert).await.unwrap();
        let rows = raw_rows(&service, "Shared").await.unwrap();
        assert_eq!(count_of(&rows, "Note"), 1);
        assert_eq!(entity_type(&DynamicEntity::new("p", "r")), "-");
        assert_eq!(example.faults().fired(), 1);
    }

    #[test]
    fn ensure_passes_true_and_names_a_false_claim() {
        assert!(ensure(true, "x").is_ok());
        assert!(ensure(false, "the claim")
            .unwrap_err()
            .to_string()
            .contains("the claim"));
    }
}
