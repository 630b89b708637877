//! What an engine guarantees: [`EngineCapabilities`], reported by
//! [`Engine::capabilities`](crate::Engine::capabilities).
//!
//! Azure Storage's Table service and Azure Cosmos DB for Table speak the same REST
//! protocol but keep different promises. The public FAQ of Cosmos DB for Table
//! (<https://learn.microsoft.com/azure/cosmos-db/table/faq>) lists them: query results
//! are not sorted by PartitionKey and RowKey, a RowKey holds at most 255 bytes, a
//! batch at most 2 MB, table names are case-sensitive, and service properties, service
//! statistics, CORS and table ACLs are not offered; its query tutorial
//! (<https://learn.microsoft.com/azure/cosmos-db/table/tutorial-query>) says filters
//! on `Timestamp` return no rows. Code above the [`Engine`](crate::Engine) trait asks
//! the engine rather than assuming Azure Storage's answers.

use crate::entity::EntityKey;
use crate::error::{Error, ErrorKind, Result};
use crate::key::{validate_entity_key, MAX_KEY_BYTES};
use crate::query::MAX_PAGE_SIZE;
use crate::write::{MAX_BATCH_BYTES, MAX_BATCH_OPERATIONS};

/// Which service an engine is, or plays.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ServiceKind {
    /// Azure Storage's Table service (or an engine that keeps its rules).
    AzureStorage,
    /// Azure Cosmos DB for Table (or an engine that plays it).
    CosmosTable,
}

/// What an engine guarantees about its answers and accepts as input.
///
/// ```
/// use tables_core::{EngineCapabilities, ServiceKind};
///
/// let storage = EngineCapabilities::azure_storage();
/// assert!(storage.ordered_results);
/// let cosmos = EngineCapabilities::cosmos_table();
/// assert_eq!(cosmos.service, ServiceKind::CosmosTable);
/// assert!(!cosmos.ordered_results);
/// assert_eq!(cosmos.max_row_key_bytes, 255);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub struct EngineCapabilities {
    /// The service the engine is, or plays.
    pub service: ServiceKind,
    /// Query results come in PartitionKey, then RowKey order, and a continuation
    /// resumes after the last key returned. `false` on Cosmos DB for Table: any
    /// order, so "the first rows" of a query are any rows of it.
    pub ordered_results: bool,
    /// Most bytes of a PartitionKey (UTF-16, as the service counts them).
    pub max_partition_key_bytes: usize,
    /// Most bytes of a RowKey: UTF-16 on Azure Storage (1 KiB), UTF-8 on Cosmos DB
    /// for Table (255).
    pub max_row_key_bytes: usize,
    /// Most bytes of an entity group transaction's request body.
    pub max_batch_bytes: usize,
    /// Most operations in one entity group transaction.
    pub max_batch_operations: usize,
    /// Most entities in one page (`$top`): 1,000 on Azure Storage; Cosmos DB for
    /// Table accepts more.
    pub max_page_size: u32,
    /// Table names compare case-sensitively (`Orders` and `orders` are two tables).
    pub case_sensitive_table_names: bool,
    /// A filter on `Timestamp` selects rows by their last change. `false` on Cosmos
    /// DB for Table, where such a filter silently matches nothing.
    pub timestamp_filters: bool,
    /// Get and Set Table Service Properties are served.
    pub service_properties: bool,
    /// Get Table Service Stats is served.
    pub service_stats: bool,
    /// CORS rules and preflight (`OPTIONS`) requests are served.
    pub cors: bool,
    /// Table ACLs (stored access policies) are served.
    pub table_acls: bool,
    /// The service may answer `429 Too Many Requests` when a request-rate budget is
    /// spent (Cosmos DB's request units).
    pub throttles_requests: bool,
}

impl EngineCapabilities {
    /// Azure Storage's Table service.
    pub const fn azure_storage() -> EngineCapabilities {
        EngineCapabilities {
            service: ServiceKind::AzureStorage,
            ordered_results: true,
            max_partition_key_bytes: MAX_KEY_BYTES,
            max_row_key_bytes: MAX_KEY_BYTES,
            max_batch_bytes: MAX_BATCH_BYTES,
            max_batch_operations: MAX_BATCH_OPERATIONS,
            max_page_size: MAX_PAGE_SIZE,
            case_sensitive_table_names: false,
            timestamp_filters: true,
            service_properties: true,
            service_stats: true,
            cors: true,
            table_acls: true,
            throttles_requests: false,
        }
    }

    /// Azure Cosmos DB for Table, as its FAQ describes it.
    pub const fn cosmos_table() -> EngineCapabilities {
        EngineCapabilities {
            service: ServiceKind::CosmosTable,
            ordered_results: false,
            max_partition_key_bytes: MAX_KEY_BYTES,
            max_row_key_bytes: COSMOS_MAX_ROW_KEY_BYTES,
            max_batch_bytes: COSMOS_MAX_BATCH_BYTES,
            max_batch_operations: MAX_BATCH_OPERATIONS,
            max_page_size: COSMOS_MAX_PAGE_SIZE,
            case_sensitive_table_names: true,
            timestamp_filters: false,
            service_properties: false,
            service_stats: false,
            cors: false,
            table_acls: false,
            throttles_requests: true,
        }
    }

    /// The capabilities of `service`.
    pub const fn of(service: ServiceKind) -> EngineCapabilities {
        match service {
            ServiceKind::AzureStorage => EngineCapabilities::azure_storage(),
            ServiceKind::CosmosTable => EngineCapabilities::cosmos_table(),
        }
    }

    /// Checks an entity key against the service's rules: the rules of every
    /// engine ([`validate_entity_key`]), then this service's RowKey limit (255
    /// UTF-8 bytes on Cosmos DB for Table).
    ///
    /// ```
    /// use tables_core::{EngineCapabilities, EntityKey, ErrorKind};
    ///
    /// let long = EntityKey::new("p", "r".repeat(256));
    /// assert!(EngineCapabilities::azure_storage().check_key(&long).is_ok());
    /// let err = EngineCapabilities::cosmos_table().check_key(&long).unwrap_err();
    /// assert_eq!(err.kind(), ErrorKind::InvalidKey);
    /// ```
    ///
    /// # Errors
    ///
    /// [`ErrorKind::InvalidKey`] naming the key, its length and the limit.
    pub fn check_key(&self, key: &EntityKey) -> Result<()> {
        validate_entity_key(key)?;
        let bytes = key.row_key.len();
        if bytes > self.max_row_key_bytes {
            return Err(Error::local(
                ErrorKind::InvalidKey,
                format!(
                    "the RowKey of {key} is {bytes} bytes (UTF-8), above the {} bytes {} allows; \
                     shorten the RowKey (a shorter template or a hash of the long part)",
                    self.max_row_key_bytes, self.service
                ),
            )
            .with_entity_key(key.clone()));
        }
        Ok(())
    }

    /// Checks an encoded batch body's size against the service's limit.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::RequestTooLarge`] naming the size and the limit.
    pub fn check_batch_bytes(&self, bytes: usize) -> Result<()> {
        if bytes > self.max_batch_bytes {
            return Err(Error::local(
                ErrorKind::RequestTooLarge,
                format!(
                    "the batch encodes to {bytes} bytes, above the {} bytes {} accepts; split it \
                     into smaller batches",
                    self.max_batch_bytes, self.service
                ),
            ));
        }
        Ok(())
    }
}

impl std::fmt::Display for ServiceKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            ServiceKind::AzureStorage => "Azure Storage's Table service",
            ServiceKind::CosmosTable => "Azure Cosmos DB for Table",
        })
    }
}

impl Default for EngineCapabilities {
    fn default() -> EngineCapabilities {
        EngineCapabilities::azure_storage()
    }
}

/// Most UTF-8 bytes of a RowKey on Cosmos DB for Table (its FAQ: "Row keys can only
/// be up to 255 bytes").
pub const COSMOS_MAX_ROW_KEY_BYTES: usize = 255;

/// Most bytes of a batch on Cosmos DB for Table (its FAQ: "Batches can only have up
/// to 2 MBs").
pub const COSMOS_MAX_BATCH_BYTES: usize = 2 * 1024 * 1024;

/// The page size the Cosmos profile allows (its FAQ: `TakeCount` "isn't limited to
/// 1000"; the limit a page meets there is its 4 MB response size).
pub const COSMOS_MAX_PAGE_SIZE: u32 = 10_000;
