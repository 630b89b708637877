//! Shared set-up of the example programs.
//!
//! Every example runs on the bundled in-memory engine by default, so
//! `cargo run --example <name>` needs no account, emulator or network. Setting
//! [`CONNECTION_STRING_VAR`] asks for a remote endpoint instead; until the remote
//! engine lands, the examples say so and run on the in-memory engine anyway.
//!
//! Each example gets its client from [`service`] (or [`service_and_mem`] when it
//! injects faults), checks what it shows with [`ensure`], and exits non-zero when a
//! check fails, so running every example is a test.
//!
//! ```
//! use tables_examples::EngineChoice;
//!
//! assert_eq!(EngineChoice::from_connection_string(None), EngineChoice::Mem);
//! assert_eq!(
//!     EngineChoice::from_connection_string(Some("UseDevelopmentStorage=true")),
//!     EngineChoice::MemInsteadOfRemote
//! );
//! ```

use std::error::Error as StdError;
use std::fmt;
use std::sync::Arc;

use tables_client::mem::MemEngine;
use tables_client::{DynamicEntity, Engine, ErrorKind, QuerySpec, TableServiceClient, Value};

/// The environment variable that points the examples at a remote endpoint (an
/// Azure Storage or Azurite connection string).
pub const CONNECTION_STRING_VAR: &str = "TABLES_CONNECTION_STRING";

/// What an example's `main` returns: any error ends the program with a non-zero
/// exit status and its message.
pub type BoxResult<T> = Result<T, Box<dyn StdError>>;

/// The engine an example runs on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EngineChoice {
    /// The in-memory engine: no connection string was given.
    Mem,
    /// A connection string was given, but the remote engine is not available yet:
    /// the example runs on the in-memory engine instead.
    MemInsteadOfRemote,
}

impl EngineChoice {
    /// The choice for a connection string (`None` or blank: none given).
    pub fn from_connection_string(connection_string: Option<&str>) -> EngineChoice {
        match connection_string {
            Some(s) if !s.trim().is_empty() => EngineChoice::MemInsteadOfRemote,
            _ => EngineChoice::Mem,
        }
    }

    /// The choice for this process, from [`CONNECTION_STRING_VAR`].
    pub fn from_env() -> EngineChoice {
        let value = std::env::var_os(CONNECTION_STRING_VAR);
        // A value that is not UTF-8 is still a request for a remote endpoint.
        let text = value.as_ref().map(|v| v.to_string_lossy());
        EngineChoice::from_connection_string(text.as_deref())
    }

    /// One line for the user saying which engine runs and why.
    pub fn describe(self) -> &'static str {
        match self {
            EngineChoice::Mem => {
                "Engine: in-memory (set TABLES_CONNECTION_STRING to ask for a remote endpoint)."
            }
            EngineChoice::MemInsteadOfRemote => {
                "Engine: in-memory. TABLES_CONNECTION_STRING is set, but the remote engine \
                 is not available yet in this version of the SDK, so this example runs on \
                 the in-memory engine instead."
            }
        }
    }

    /// A new, empty engine for this choice.
    pub fn open(self) -> Arc<dyn Engine> {
        let (service, _) = self.open_service();
        Arc::clone(service.engine())
    }

    /// A typed client over a new, empty engine for this choice, and the in-memory
    /// engine behind it when there is one (its fault injection simulates crashes).
    pub fn open_service(self) -> (TableServiceClient, Option<MemEngine>) {
        match self {
            EngineChoice::Mem | EngineChoice::MemInsteadOfRemote => {
                // Clones of a MemEngine share one store: the client and the caller
                // see the same tables and the same fault controls.
                let engine = MemEngine::new();
                (TableServiceClient::new(engine.clone()), Some(engine))
            }
        }
    }
}

/// The client an example runs on, after printing which engine that is: in memory by
/// default; with [`CONNECTION_STRING_VAR`] set, the remote endpoint (for now: the
/// in-memory engine, saying so).
pub fn service() -> TableServiceClient {
    service_and_mem().0
}

/// As [`service`], plus the in-memory engine behind the client when it runs in
/// memory, for examples that simulate crashes with its fault injection
/// ([`MemEngine::faults`]). `None` on a remote endpoint.
#[allow(clippy::print_stdout)] // an example's first line of output
pub fn service_and_mem() -> (TableServiceClient, Option<MemEngine>) {
    let choice = EngineChoice::from_env();
    println!("{}", choice.describe());
    choice.open_service()
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
    let spec = QuerySpec::new();
    let mut rows = Vec::new();
    let mut token = None;
    loop {
        let page = service.engine().query(table, &spec, token.as_ref()).await?;
        rows.extend(page.items);
        token = page.continuation;
        if token.is_none() {
            return Ok(rows);
        }
    }
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

/// The README's code runs as a doc test, so the front page can't drift from the SDK.
#[cfg(doctest)]
#[doc = include_str!("../../README.md")]
mod readme {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_connection_string_asks_for_remote_and_falls_back_to_mem() {
        assert_eq!(
            EngineChoice::from_connection_string(None),
            EngineChoice::Mem
        );
        assert_eq!(
            EngineChoice::from_connection_string(Some("  ")),
            EngineChoice::Mem
        );
        assert_eq!(
            EngineChoice::from_connection_string(Some(
                "DefaultEndpointsProtocol=https;AccountName=a;AccountKey=a2V5"
            )),
            EngineChoice::MemInsteadOfRemote
        );
        assert_ne!(
            EngineChoice::Mem.describe(),
            EngineChoice::MemInsteadOfRemote.describe()
        );
    }

    #[tokio::test]
    async fn every_choice_opens_a_fresh_working_engine() {
        for choice in [EngineChoice::Mem, EngineChoice::MemInsteadOfRemote] {
            let engine = choice.open();
            engine.create_table("Fresh").await.unwrap();
            // A second engine does not share the first one's tables.
            choice.open().create_table("Fresh").await.unwrap();
        }
    }

    #[tokio::test]
    async fn the_client_and_the_mem_handle_share_one_store() {
        let (service, mem) = EngineChoice::Mem.open_service();
        let mem = mem.unwrap();
        service.create_table("Shared").await.unwrap();
        mem.create_table("Other").await.unwrap();
        assert_eq!(service.list_tables().await.unwrap(), ["Other", "Shared"]);
        let row = DynamicEntity::new("p", "r").with("EntityType", "Note");
        mem.write("Shared", &tables_client::WriteOp::Insert(row))
            .await
            .unwrap();
        let rows = raw_rows(&service, "Shared").await.unwrap();
        assert_eq!(count_of(&rows, "Note"), 1);
        assert_eq!(entity_type(&DynamicEntity::new("p", "r")), "-");
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
