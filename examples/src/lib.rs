//! Shared set-up of the example programs.
//!
//! Every example runs on the bundled in-memory engine by default, so
//! `cargo run --example <name>` needs no account, emulator or network. Setting
//! [`CONNECTION_STRING_VAR`] asks for a remote endpoint instead; until the remote
//! engine lands, the examples say so and run on the in-memory engine anyway.
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

use std::sync::Arc;

use tables_client::mem::MemEngine;
use tables_client::Engine;

/// The environment variable that points the examples at a remote endpoint (an
/// Azure Storage or Azurite connection string).
pub const CONNECTION_STRING_VAR: &str = "TABLES_CONNECTION_STRING";

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
        match self {
            EngineChoice::Mem | EngineChoice::MemInsteadOfRemote => Arc::new(MemEngine::new()),
        }
    }
}

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
}
