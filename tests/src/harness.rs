//! What a scenario is given: a [`Ctx`] with unique table names and the backend's
//! [`Capabilities`].

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, OnceLock};
use std::time::{SystemTime, UNIX_EPOCH};

use tables_core::{Engine, Result};

/// Where a backend knowingly differs from the Azure Table service.
///
/// Every scenario checks Azure's behaviour. A backend that differs on purpose (for
/// example Azurite, which has no property-count limit) declares it here, and the
/// scenarios that depend on the rule check the backend's documented behaviour
/// instead or skip that part. Scenarios branch on these flags only, never on which
/// backend runs them. [`Capabilities::azure`] (the [`Default`]) has every flag set;
/// the mem engine runs with it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Capabilities {
    /// The backend rejects entities with more than 252 properties, property values
    /// above 64 KiB, entities above 1 MiB and invalid property names.
    pub enforces_property_limits: bool,
    /// The backend rejects a batch whose operations span two PartitionKeys.
    pub enforces_same_partition_in_batch: bool,
    /// Filters compare values of the same Edm type only (an Int32 property never
    /// matches an Int64 or Double literal). Azurite coerces.
    pub strict_filter_typing: bool,
    /// DateTime filters compare at 100 ns precision. Azurite truncates to
    /// milliseconds.
    pub datetime_filter_precision_100ns: bool,
    /// Entity operations find a table whatever the case of its name. Azurite compares
    /// names case-insensitively only when creating a table.
    pub table_names_case_insensitive_for_entities: bool,
    /// A merge that would leave an entity with more than 252 properties is rejected.
    /// (Only the service can check it: the result depends on the stored entity.)
    pub enforces_property_count_on_merge: bool,
    /// An `Edm.Double` of `-0.0` keeps its sign.
    pub keeps_negative_zero: bool,
    /// The longest table name the backend accepts: the service's 63 characters, less
    /// on a wrapper that adds a prefix of its own (`PrefixedEngine`).
    pub max_table_name_len: usize,
    /// A `TableNotFound` error names the table as the caller did
    /// ([`tables_core::Error::table`]). `PrefixedEngine` passes the wrapped engine's
    /// error through, so it names the table under its prefix (`stagingOrders` for
    /// `Orders`): a defect of the wrapper, declared here until it is fixed.
    pub table_errors_name_the_callers_table: bool,
}

impl Capabilities {
    /// The Azure Table service: every rule enforced.
    pub const fn azure() -> Capabilities {
        Capabilities {
            enforces_property_limits: true,
            enforces_same_partition_in_batch: true,
            strict_filter_typing: true,
            datetime_filter_precision_100ns: true,
            table_names_case_insensitive_for_entities: true,
            enforces_property_count_on_merge: true,
            keeps_negative_zero: true,
            max_table_name_len: 63,
            table_errors_name_the_callers_table: true,
        }
    }

    /// Azure Cosmos DB for Table (the mem engine's and the server's Cosmos profile):
    /// Azure's rules, except that table names are case-sensitive (its FAQ). What
    /// else differs (the order of results, the RowKey and batch limits) the engine
    /// itself reports ([`tables_core::Engine::capabilities`]), and scenarios ask it.
    pub const fn cosmos() -> Capabilities {
        Capabilities {
            table_names_case_insensitive_for_entities: false,
            ..Capabilities::azure()
        }
    }

    /// A wrapper that keeps every table under a name prefix of `prefix_len`
    /// characters (`PrefixedEngine`) over a backend with these capabilities: names
    /// are shorter by the prefix, and `TableNotFound` errors name the prefixed
    /// table (see [`Capabilities::table_errors_name_the_callers_table`]).
    pub const fn prefixed(self, prefix_len: usize) -> Capabilities {
        Capabilities {
            max_table_name_len: self.max_table_name_len - prefix_len,
            table_errors_name_the_callers_table: false,
            ..self
        }
    }
}

impl Capabilities {
    /// Azurite (the pinned emulator) behind the remote engine.
    ///
    /// The remote engine validates everything `tables-core` knows before sending, so
    /// Azurite's missing checks (property count and size, batch partitions, ...) never
    /// show. What remains are differences in how Azurite evaluates queries, each
    /// with its source (docs/protocol.md §9):
    /// - filters compare values across Edm types (`n gt '30'` matches an Int32):
    ///   Azurite's type-unaware query interpreter
    ///   (<https://github.com/Azure/Azurite/tree/main/src/table/persistence/QueryInterpreter>),
    ///   and
    ///   <https://github.com/Azure/Azurite/issues/1192>,
    ///   <https://github.com/Azure/Azurite/issues/2342>;
    /// - DateTime filters compare at millisecond precision (JavaScript `Date`):
    ///   <https://github.com/Azure/Azurite/issues/2069>;
    /// - table names are case-insensitive only on creation:
    ///   <https://github.com/Azure/Azurite/pull/1405> made `createTable` compare
    ///   lowercased names, while entity operations look the table up by its exact
    ///   name (observed on 3.35.0: `TableNotFound` for `T` after creating `t`);
    /// - no property-count limit, so a merge past 252 properties succeeds:
    ///   docs/protocol.md §8, <https://github.com/Azure/Azurite/issues/1446>;
    /// - `-0.0` comes back as `0.0`: Azurite serialises with JavaScript's
    ///   `JSON.stringify`, which writes negative zero as `0`
    ///   (<https://tc39.es/ecma262/#sec-numeric-types-number-tostring>).
    pub const fn azurite() -> Capabilities {
        Capabilities {
            strict_filter_typing: false,
            datetime_filter_precision_100ns: false,
            table_names_case_insensitive_for_entities: false,
            enforces_property_count_on_merge: false,
            keeps_negative_zero: false,
            ..Capabilities::azure()
        }
    }
}

impl Default for Capabilities {
    fn default() -> Capabilities {
        Capabilities::azure()
    }
}

/// A run-wide nonce, so that two runs against one shared endpoint never reuse a
/// table name.
fn run_nonce() -> &'static str {
    static NONCE: OnceLock<String> = OnceLock::new();
    NONCE.get_or_init(|| {
        let nanos = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos());
        let mixed = (nanos as u64) ^ (u64::from(std::process::id()) << 32);
        format!("{:08x}", mixed & 0xffff_ffff)
    })
}

/// The context of one scenario run: its name, the backend's capabilities and the
/// tables it created (so they can be dropped afterwards on a shared endpoint).
#[derive(Debug)]
pub struct Ctx {
    scenario: String,
    capabilities: Capabilities,
    prefix: String,
    tables: Mutex<Vec<String>>,
}

impl Ctx {
    /// A context for the scenario `scenario` on a backend with `capabilities`.
    pub fn new(scenario: &str, capabilities: Capabilities) -> Ctx {
        static COUNTER: AtomicU64 = AtomicU64::new(0);
        let n = COUNTER.fetch_add(1, Ordering::Relaxed);
        let tail: String = scenario
            .chars()
            .filter(char::is_ascii_alphanumeric)
            .take(24)
            .collect();
        Ctx {
            scenario: scenario.to_owned(),
            capabilities,
            prefix: format!("c{}n{n}{tail}", run_nonce()),
            tables: Mutex::new(Vec::new()),
        }
    }

    /// The scenario's name.
    pub fn scenario(&self) -> &str {
        &self.scenario
    }

    /// The backend's capabilities.
    pub fn capabilities(&self) -> &Capabilities {
        &self.capabilities
    }

    /// A prefix unique to this scenario run, itself a valid table name (at most 44
    /// characters, so suffixes fit within the 63-character limit).
    pub fn prefix(&self) -> &str {
        &self.prefix
    }

    /// A table name unique to this scenario run: the prefix plus `suffix`
    /// (alphanumeric). The name is remembered for [`Ctx::cleanup`].
    pub fn table_name(&self, suffix: &str) -> String {
        let name = format!("{}{suffix}", self.prefix);
        self.remember(&name);
        name
    }

    /// Remembers a table name created outside [`Ctx::table_name`] for cleanup.
    pub fn remember(&self, name: &str) {
        if let Ok(mut tables) = self.tables.lock() {
            tables.push(name.to_owned());
        }
    }

    /// Creates the scenario's main table and returns its name.
    ///
    /// # Errors
    ///
    /// The engine's error if the table cannot be created.
    pub async fn create_table(&self, engine: &dyn Engine) -> Result<String> {
        self.create_named(engine, "t").await
    }

    /// Creates the table [`Ctx::table_name`]`(suffix)` and returns its name.
    ///
    /// # Errors
    ///
    /// The engine's error if the table cannot be created.
    pub async fn create_named(&self, engine: &dyn Engine, suffix: &str) -> Result<String> {
        let name = self.table_name(suffix);
        engine.create_table(&name).await?;
        Ok(name)
    }

    /// Deletes, best effort, every table this context named. Errors (for example
    /// tables a scenario already deleted) are ignored.
    pub async fn cleanup(&self, engine: &dyn Engine) {
        let names = self
            .tables
            .lock()
            .map(|mut t| std::mem::take(&mut *t))
            .unwrap_or_default();
        for name in names {
            let _ = engine.delete_table(&name).await;
        }
    }
}
