//! Test wrappers around an engine (recording, counting, failing on purpose)
//! without the delegation boilerplate: implement [`Forward`], overriding only the
//! calls the wrapper changes, and wrap the value in [`Forwarding`] to get an
//! [`Engine`].

use std::fmt::Debug;
use std::ops::Deref;

use async_trait::async_trait;
use tables_core::{
    ContinuationToken, DynamicEntity, Engine, EntityKey, ListTablesOptions, Page, QuerySpec,
    Result, TablePage, WriteOp, WriteOutcome,
};

/// An engine wrapper: every call goes to [`Forward::inner`] unless overridden.
#[async_trait]
pub trait Forward: Send + Sync + Debug {
    /// The wrapped engine.
    fn inner(&self) -> &dyn Engine;

    /// [`Engine::create_table`].
    async fn create_table(&self, table: &str) -> Result<()> {
        self.inner().create_table(table).await
    }

    /// [`Engine::delete_table`].
    async fn delete_table(&self, table: &str) -> Result<()> {
        self.inner().delete_table(table).await
    }

    /// [`Engine::list_tables`].
    async fn list_tables(&self, options: &ListTablesOptions) -> Result<TablePage> {
        self.inner().list_tables(options).await
    }

    /// [`Engine::get_entity`].
    async fn get_entity(
        &self,
        table: &str,
        key: &EntityKey,
        select: Option<&[String]>,
    ) -> Result<Option<DynamicEntity>> {
        self.inner().get_entity(table, key, select).await
    }

    /// [`Engine::query`].
    async fn query(
        &self,
        table: &str,
        spec: &QuerySpec,
        continuation: Option<&ContinuationToken>,
    ) -> Result<Page<DynamicEntity>> {
        self.inner().query(table, spec, continuation).await
    }

    /// [`Engine::write`].
    async fn write(&self, table: &str, op: &WriteOp) -> Result<WriteOutcome> {
        self.inner().write(table, op).await
    }

    /// [`Engine::submit_batch`].
    async fn submit_batch(&self, table: &str, ops: &[WriteOp]) -> Result<Vec<WriteOutcome>> {
        self.inner().submit_batch(table, ops).await
    }
}

/// A [`Forward`] wrapper as an [`Engine`]; derefs to the wrapper for its own
/// methods (counters, recordings).
#[derive(Debug)]
pub struct Forwarding<F>(pub F);

impl<F> Deref for Forwarding<F> {
    type Target = F;

    fn deref(&self) -> &F {
        &self.0
    }
}

#[async_trait]
impl<F: Forward> Engine for Forwarding<F> {
    fn capabilities(&self) -> tables_core::EngineCapabilities {
        self.0.inner().capabilities()
    }

    async fn create_table(&self, table: &str) -> Result<()> {
        self.0.create_table(table).await
    }

    async fn delete_table(&self, table: &str) -> Result<()> {
        self.0.delete_table(table).await
    }

    async fn list_tables(&self, options: &ListTablesOptions) -> Result<TablePage> {
        self.0.list_tables(options).await
    }

    async fn get_entity(
        &self,
        table: &str,
        key: &EntityKey,
        select: Option<&[String]>,
    ) -> Result<Option<DynamicEntity>> {
        self.0.get_entity(table, key, select).await
    }

    async fn query(
        &self,
        table: &str,
        spec: &QuerySpec,
        continuation: Option<&ContinuationToken>,
    ) -> Result<Page<DynamicEntity>> {
        self.0.query(table, spec, continuation).await
    }

    async fn write(&self, table: &str, op: &WriteOp) -> Result<WriteOutcome> {
        self.0.write(table, op).await
    }

    async fn submit_batch(&self, table: &str, ops: &[WriteOp]) -> Result<Vec<WriteOutcome>> {
        self.0.submit_batch(table, ops).await
    }

    async fn reconcile_layers(
        &self,
        table: &str,
        partition_key: Option<&str>,
    ) -> Result<tables_core::LayerReconcileReport> {
        self.0.inner().reconcile_layers(table, partition_key).await
    }
}
