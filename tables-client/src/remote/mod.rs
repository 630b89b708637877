//! The remote engine: the Azure Table REST protocol over HTTPS, for Azure Storage,
//! the Cosmos DB Table API and the Azurite emulator.
//!
//! [`RemoteEngine`] implements [`Engine`](crate::Engine), so everything the typed
//! client does runs on it unchanged. Connect with a connection string
//! ([`RemoteEngine::from_connection_string`], or
//! [`TableServiceClient::from_connection_string`](crate::TableServiceClient::from_connection_string))
//! or a [`RemoteEngineBuilder`].
//!
//! - **Auth:** [`Credential`]: SharedKey or SharedKeyLite with an [`AccountKey`], a
//!   [`SasToken`] (consume one, or make one with [`TableSasBuilder`]), or a bearer
//!   token from a [`TokenCredential`] (Entra ID). Keys, signatures and tokens never
//!   appear in `Debug` output, error messages or logs.
//! - **Protocol:** JSON with `odata=minimalmetadata`; the encodings are
//!   [`tables_core::odata`]'s, shared with every other part of the SDK.
//! - **Retries:** transient failures (timeouts, broken connections, 408, 429, 500, 502,
//!   503, 504) are retried with exponential backoff and jitter under a
//!   [`RetryPolicy`], honouring `Retry-After` and `x-ms-retry-after-ms`. A write whose
//!   earlier attempt may have been applied says so
//!   ([`Error::may_have_applied`](crate::Error::may_have_applied)).
//! - **Errors that say what to check:** a failed connection names the endpoint
//!   (`scheme://host:port`, never a SAS or key) and the request (`GET /path`), and
//!   says whether nothing was listening, the name did not resolve, the TLS
//!   handshake failed or no answer came in time
//!   ([`Origin::Transport`](crate::Origin::Transport)). A `403` carries
//!   [`Error::auth_hint`](crate::Error::auth_hint) and advice: a wrong account name
//!   or key, a SAS expired or not yet valid, this machine's clock off from the
//!   service's (its `Date` header), a SAS without the permission or for another
//!   table. The service's `TableNotFound` is given the table's name.
//! - **Tracing:** one `tables.request` span per operation, with OpenTelemetry's
//!   database-client attributes (`db.system.name`, `db.namespace`,
//!   `db.collection.name`, `db.operation.name`, `server.address`,
//!   `http.response.status_code`, `http.request.resend_count`,
//!   `az.service_request_id`, `error.type`) plus `tables.partition_key`.

#[cfg(feature = "azure_identity")]
mod azure;
mod blob;
mod blob_sas;
mod builder;
mod connection;
mod credential;
mod diagnose;
mod endpoint;
mod engine;
mod retry;
mod sas;
mod sign;
mod transport;

#[cfg(feature = "azure_identity")]
pub use azure::AzureCredential;
pub use blob::{
    RemoteBlobStore, RemoteBlobStoreBuilder, DEFAULT_BLOCK_SIZE, DEFAULT_SINGLE_PUT_LIMIT,
};
pub use blob_sas::{ContainerSasBuilder, ContainerSasPermissions};
pub use connection::{ConnectionString, DEVELOPMENT_ACCOUNT, DEVELOPMENT_ACCOUNT_KEY};
pub use credential::{AccessToken, AccountKey, Credential, SasToken, TokenCredential};
pub use engine::{RemoteEngine, RemoteEngineBuilder};
pub use retry::RetryPolicy;
pub use sas::{SasProtocol, TableSasBuilder, TableSasPermissions};
pub use sign::table_authorization;
