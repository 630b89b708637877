//! [`PrefixedEngine`]: every table under a name prefix, so several environments,
//! tenants or test runs can share one storage account without seeing each other.

use async_trait::async_trait;
use tables_core::key::validate_table_name;
use tables_core::{
    ContinuationToken, DynamicEntity, Engine, EntityKey, Error, ErrorKind, ListTablesOptions, Page,
    QuerySpec, Result, TablePage, WriteOp, WriteOutcome,
};

/// The longest table name the service accepts.
const MAX_SERVICE_NAME_LEN: usize = 63;

/// The shortest table name the service accepts.
const MIN_SERVICE_NAME_LEN: usize = 3;

/// An [`Engine`] wrapper that keeps every table under a name prefix: the caller
/// says `Orders`, the wrapped engine sees `stagingOrders`.
///
/// - Names are checked with the service's rules first: an invalid name fails with
///   the same error as on the bare engine (a prefix never makes it valid).
/// - A valid name that is too long to carry the prefix within the service's 63
///   characters fails with [`ErrorKind::InvalidTableName`], naming the limit
///   ([`PrefixedEngine::max_table_name_len`]).
/// - [`Engine::list_tables`] lists only the prefix's tables, under the caller's
///   names; continuations are the caller's names too.
/// - Entities, keys, queries and batches pass through unchanged.
///
/// One prefix per environment (`PrefixedEngine::new(engine, "staging")`), or a fresh
/// random one ([`PrefixedEngine::unique`]) for a run whose tables must not collide
/// with anything and are dropped at the end ([`PrefixedEngine::delete_all_tables`]).
///
/// ```
/// use tables_client::mem::MemEngine;
/// use tables_client::{Engine, ListTablesOptions, PrefixedEngine, TableServiceClient};
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> tables_client::Result<()> {
/// let account = MemEngine::new(); // or a RemoteEngine
/// let staging = PrefixedEngine::new(account.clone(), "staging")?;
/// let testing = PrefixedEngine::new(account.clone(), "testing")?;
/// staging.create_table("Orders").await?;
/// testing.create_table("Orders").await?; // no conflict: another prefix
///
/// let service = TableServiceClient::new(staging.clone());
/// assert_eq!(service.list_tables().await?, ["Orders"]);
/// let all = account.list_tables(&ListTablesOptions::default()).await?;
/// assert_eq!(all.names, ["stagingOrders", "testingOrders"]);
///
/// assert_eq!(testing.delete_all_tables().await?, ["Orders"]);
/// # Ok(())
/// # }
/// ```
#[derive(Debug, Clone)]
pub struct PrefixedEngine<E> {
    inner: E,
    prefix: String,
}

impl<E: Engine> PrefixedEngine<E> {
    /// Wraps `inner`, keeping every table under `prefix`.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::InvalidInput`] unless the prefix is an ASCII letter followed by
    /// ASCII letters and digits, 1 to 60 characters long (the start of a valid table
    /// name, leaving room for the shortest name).
    pub fn new(inner: E, prefix: impl Into<String>) -> Result<PrefixedEngine<E>> {
        let prefix = prefix.into();
        let mut chars = prefix.chars();
        let well_formed = chars.next().is_some_and(|c| c.is_ascii_alphabetic())
            && chars.all(|c| c.is_ascii_alphanumeric())
            && prefix.len() <= MAX_SERVICE_NAME_LEN - MIN_SERVICE_NAME_LEN;
        if !well_formed {
            return Err(Error::new(
                ErrorKind::InvalidInput,
                format!(
                    "the table-name prefix {prefix:?} is not usable: it must be an ASCII letter \
                     followed by ASCII letters and digits, at most {} characters long, so that \
                     prefixed names stay valid table names",
                    MAX_SERVICE_NAME_LEN - MIN_SERVICE_NAME_LEN
                ),
            ));
        }
        Ok(PrefixedEngine { inner, prefix })
    }

    /// Wraps `inner` under a fresh random prefix (`t` and 8 hex digits), unlikely to
    /// be used by anything else: for a run's scratch tables.
    pub fn unique(inner: E) -> PrefixedEngine<E> {
        let hex = uuid::Uuid::new_v4().simple().to_string();
        PrefixedEngine {
            inner,
            prefix: format!("t{}", &hex[..8]),
        }
    }

    /// The prefix every table name gets on the wrapped engine.
    pub fn prefix(&self) -> &str {
        &self.prefix
    }

    /// The wrapped engine, which sees the prefixed names.
    pub fn inner(&self) -> &E {
        &self.inner
    }

    /// The longest table name usable through this wrapper: the service's 63
    /// characters minus the prefix.
    pub fn max_table_name_len(&self) -> usize {
        MAX_SERVICE_NAME_LEN - self.prefix.len()
    }

    /// Deletes every table under the prefix (and none other), and returns their
    /// names as the caller knows them. A table that disappears meanwhile is skipped.
    ///
    /// # Errors
    ///
    /// The wrapped engine's first error other than `TableNotFound`; tables listed
    /// before it may already be deleted.
    pub async fn delete_all_tables(&self) -> Result<Vec<String>> {
        let names = crate::service::all_table_names(self, "").await?;
        for name in &names {
            match self.delete_table(name).await {
                Ok(()) => {}
                Err(e) if e.kind() == ErrorKind::TableNotFound => {}
                Err(e) => return Err(e),
            }
        }
        Ok(names)
    }

    /// The wrapped engine's name for the table `name`.
    fn inner_name(&self, name: &str) -> Result<String> {
        validate_table_name(name)?;
        let limit = self.max_table_name_len();
        if name.len() > limit {
            return Err(Error::new(
                ErrorKind::InvalidTableName,
                format!(
                    "the table name {name:?} ({} characters) is too long to carry the prefix \
                     {:?}: with it, the name would exceed the service's {MAX_SERVICE_NAME_LEN} \
                     characters. Use at most {limit} characters, or a shorter prefix",
                    name.len(),
                    self.prefix,
                ),
            ));
        }
        let mut inner = String::with_capacity(self.prefix.len() + name.len());
        inner.push_str(&self.prefix);
        inner.push_str(name);
        Ok(inner)
    }

    /// The caller's name for the wrapped engine's table `inner`, if it is under the
    /// prefix. Table names compare case-insensitively.
    fn strip<'a>(&self, inner: &'a str) -> Option<&'a str> {
        let head = inner.get(..self.prefix.len())?;
        head.eq_ignore_ascii_case(&self.prefix)
            .then(|| &inner[self.prefix.len()..])
            .filter(|rest| !rest.is_empty())
    }
}

#[async_trait]
impl<E: Engine> Engine for PrefixedEngine<E> {
    fn capabilities(&self) -> tables_core::EngineCapabilities {
        self.inner.capabilities()
    }

    async fn create_table(&self, table: &str) -> Result<()> {
        self.inner.create_table(&self.inner_name(table)?).await
    }

    async fn delete_table(&self, table: &str) -> Result<()> {
        self.inner.delete_table(&self.inner_name(table)?).await
    }

    async fn list_tables(&self, options: &ListTablesOptions) -> Result<TablePage> {
        let prefixed = |text: &str| format!("{}{text}", self.prefix);
        // Every other option passes through as given.
        let mut inner_options = options.clone();
        inner_options.prefix = Some(prefixed(options.prefix.as_deref().unwrap_or("")));
        inner_options.continuation = options.continuation.as_deref().map(prefixed);
        let page = self.inner.list_tables(&inner_options).await?;
        Ok(TablePage {
            names: page
                .names
                .iter()
                .filter_map(|name| self.strip(name))
                // A table of the account that merely starts with the prefix, with a
                // rest that is no valid name (`envA` under `env`), is not one of ours.
                .filter(|name| validate_table_name(name).is_ok())
                .map(str::to_owned)
                .collect(),
            // A continuation past the prefix means none of its tables is left.
            continuation: page
                .continuation
                .as_deref()
                .and_then(|next| self.strip(next))
                .map(str::to_owned),
        })
    }

    async fn get_entity(
        &self,
        table: &str,
        key: &EntityKey,
        select: Option<&[String]>,
    ) -> Result<Option<DynamicEntity>> {
        let table = self.inner_name(table)?;
        self.inner.get_entity(&table, key, select).await
    }

    async fn query(
        &self,
        table: &str,
        spec: &QuerySpec,
        continuation: Option<&ContinuationToken>,
    ) -> Result<Page<DynamicEntity>> {
        let table = self.inner_name(table)?;
        self.inner.query(&table, spec, continuation).await
    }

    async fn write(&self, table: &str, op: &WriteOp) -> Result<WriteOutcome> {
        self.inner.write(&self.inner_name(table)?, op).await
    }

    async fn submit_batch(&self, table: &str, ops: &[WriteOp]) -> Result<Vec<WriteOutcome>> {
        self.inner.submit_batch(&self.inner_name(table)?, ops).await
    }

    async fn reconcile_layers(
        &self,
        table: &str,
        partition_key: Option<&str>,
    ) -> Result<tables_core::LayerReconcileReport> {
        self.inner
            .reconcile_layers(&self.inner_name(table)?, partition_key)
            .await
    }
}

#[cfg(test)]
#[cfg(feature = "mem")]
mod tests;
