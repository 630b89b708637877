//! [`FaultInjector`]: the mem engine's fault injection, for any engine.

use std::sync::Arc;

use async_trait::async_trait;
use tables_core::ListTablesOptions;
use tables_core::{
    BlobCondition, BlobData, BlobPage, BlobProperties, BlobStore, ContinuationToken, DynamicEntity,
    Engine, EntityKey, ListBlobsOptions, Page, QuerySpec, Result, TablePage, WriteOp, WriteOutcome,
};

use crate::faults::{CallKind, Faults};

/// Wraps any [`Engine`] (the remote engine on Azurite, say) with the same fault
/// injection and call counters as [`crate::MemEngine::faults`], so crash and retry
/// scenarios written for the in-memory engine run unchanged against a real service.
///
/// A [`crate::Fault::fail`] fails the call before the wrapped engine sees it; a
/// [`crate::Fault::fail_after_applying`] lets the wrapped engine perform it, then
/// reports the error (a lost answer); a [`crate::Fault::delay`] waits first. Clones
/// share the wrapped engine's clone and one set of controls.
///
/// ```
/// use tables_core::{DynamicEntity, Engine, EntityKey, ErrorKind, WriteOp};
/// use tables_mem::{CallKind, Fault, FaultInjector, MemEngine};
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> tables_core::Result<()> {
/// let engine = FaultInjector::new(MemEngine::new()); // or a RemoteEngine
/// engine.create_table("Orders").await?;
/// // The insert is applied, but the caller is told it timed out.
/// engine.faults().inject(
///     Fault::fail_after_applying(ErrorKind::Timeout).on(CallKind::Write).nth(1),
/// );
/// let insert = WriteOp::Insert(DynamicEntity::new("p", "1"));
/// let err = engine.write("Orders", &insert).await.unwrap_err();
/// assert_eq!(err.kind(), ErrorKind::Timeout);
/// assert!(engine.get_entity("Orders", &EntityKey::new("p", "1"), None).await?.is_some());
/// assert_eq!(engine.faults().calls_of(CallKind::Write), 1);
/// # Ok(())
/// # }
/// ```
#[derive(Debug, Clone)]
pub struct FaultInjector<E> {
    inner: E,
    faults: Arc<Faults>,
}

impl<E> FaultInjector<E> {
    /// Wraps `inner`, with no faults armed.
    pub fn new(inner: E) -> FaultInjector<E> {
        FaultInjector {
            inner,
            faults: Arc::new(Faults::default()),
        }
    }

    /// The fault-injection controls and call counters (shared by clones).
    pub fn faults(&self) -> &Faults {
        &self.faults
    }

    /// The wrapped engine; calls made on it directly bypass the faults.
    pub fn inner(&self) -> &E {
        &self.inner
    }
}

#[async_trait]
impl<E: Engine> Engine for FaultInjector<E> {
    fn capabilities(&self) -> tables_core::EngineCapabilities {
        self.inner.capabilities()
    }

    async fn create_table(&self, table: &str) -> Result<()> {
        let ticket = self.faults.enter(CallKind::CreateTable).await?;
        ticket.finish(self.inner.create_table(table).await)
    }

    async fn delete_table(&self, table: &str) -> Result<()> {
        let ticket = self.faults.enter(CallKind::DeleteTable).await?;
        ticket.finish(self.inner.delete_table(table).await)
    }

    async fn list_tables(&self, options: &ListTablesOptions) -> Result<TablePage> {
        let ticket = self.faults.enter(CallKind::ListTables).await?;
        ticket.finish(self.inner.list_tables(options).await)
    }

    async fn get_entity(
        &self,
        table: &str,
        key: &EntityKey,
        select: Option<&[String]>,
    ) -> Result<Option<DynamicEntity>> {
        let ticket = self.faults.enter(CallKind::GetEntity).await?;
        ticket.finish(self.inner.get_entity(table, key, select).await)
    }

    async fn query(
        &self,
        table: &str,
        spec: &QuerySpec,
        continuation: Option<&ContinuationToken>,
    ) -> Result<Page<DynamicEntity>> {
        let ticket = self.faults.enter(CallKind::Query).await?;
        ticket.finish(self.inner.query(table, spec, continuation).await)
    }

    async fn write(&self, table: &str, op: &WriteOp) -> Result<WriteOutcome> {
        let ticket = self.faults.enter(CallKind::Write).await?;
        ticket.finish(self.inner.write(table, op).await)
    }

    async fn submit_batch(&self, table: &str, ops: &[WriteOp]) -> Result<Vec<WriteOutcome>> {
        let ticket = self.faults.enter(CallKind::Batch).await?;
        ticket.finish(self.inner.submit_batch(table, ops).await)
    }

    async fn reconcile_layers(
        &self,
        table: &str,
        partition_key: Option<&str>,
    ) -> Result<tables_core::LayerReconcileReport> {
        self.inner.reconcile_layers(table, partition_key).await
    }
}

/// The same controls for any blob store (the remote one on Azurite, say), so the
/// crash matrices of writes with blobs run unchanged on every store.
#[async_trait]
impl<S: BlobStore> BlobStore for FaultInjector<S> {
    async fn create_container(&self, container: &str) -> Result<()> {
        let ticket = self.faults.enter(CallKind::CreateContainer).await?;
        ticket.finish(self.inner.create_container(container).await)
    }

    async fn delete_container(&self, container: &str) -> Result<()> {
        let ticket = self.faults.enter(CallKind::DeleteContainer).await?;
        ticket.finish(self.inner.delete_container(container).await)
    }

    async fn put_blob(
        &self,
        container: &str,
        name: &str,
        data: Vec<u8>,
        condition: &BlobCondition,
    ) -> Result<BlobProperties> {
        let ticket = self.faults.enter(CallKind::PutBlob).await?;
        ticket.finish(self.inner.put_blob(container, name, data, condition).await)
    }

    async fn get_blob(&self, container: &str, name: &str) -> Result<Option<BlobData>> {
        let ticket = self.faults.enter(CallKind::GetBlob).await?;
        ticket.finish(self.inner.get_blob(container, name).await)
    }

    async fn get_blob_range(
        &self,
        container: &str,
        name: &str,
        offset: u64,
        len: u64,
        etag: Option<&str>,
    ) -> Result<Option<BlobData>> {
        let ticket = self.faults.enter(CallKind::GetBlob).await?;
        ticket.finish(
            self.inner
                .get_blob_range(container, name, offset, len, etag)
                .await,
        )
    }

    async fn blob_properties(&self, container: &str, name: &str) -> Result<Option<BlobProperties>> {
        let ticket = self.faults.enter(CallKind::GetBlob).await?;
        ticket.finish(self.inner.blob_properties(container, name).await)
    }

    async fn delete_blob(
        &self,
        container: &str,
        name: &str,
        condition: &BlobCondition,
    ) -> Result<bool> {
        let ticket = self.faults.enter(CallKind::DeleteBlob).await?;
        ticket.finish(self.inner.delete_blob(container, name, condition).await)
    }

    async fn list_blobs(&self, container: &str, options: &ListBlobsOptions) -> Result<BlobPage> {
        let ticket = self.faults.enter(CallKind::ListBlobs).await?;
        ticket.finish(self.inner.list_blobs(container, options).await)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Fault, MemEngine};
    use tables_core::ErrorKind;

    fn insert(rk: &str) -> WriteOp {
        WriteOp::Insert(DynamicEntity::new("p", rk))
    }

    #[tokio::test]
    async fn fail_before_leaves_the_inner_engine_untouched() {
        let inner = MemEngine::new();
        let engine = FaultInjector::new(inner.clone());
        engine.create_table("Orders").await.unwrap();
        engine
            .faults()
            .inject(Fault::fail(ErrorKind::Server).on(CallKind::Batch).nth(1));
        let err = engine
            .submit_batch("Orders", &[insert("1"), insert("2")])
            .await
            .unwrap_err();
        assert_eq!(err.kind(), ErrorKind::Server);
        assert_eq!(inner.faults().calls_of(CallKind::Batch), 0, "never reached");
        let page = inner
            .query("Orders", &QuerySpec::new(), None)
            .await
            .unwrap();
        assert!(page.items.is_empty());
        // Exhausted: the retry reaches the inner engine.
        engine
            .submit_batch("Orders", &[insert("1"), insert("2")])
            .await
            .unwrap();
        assert_eq!(engine.faults().calls_of(CallKind::Batch), 2);
        assert_eq!(engine.faults().fired(), 1);
        assert_eq!(engine.faults().pending(), 0);
    }

    #[tokio::test]
    async fn fail_after_applying_applies_then_reports() {
        let inner = MemEngine::new();
        let engine = FaultInjector::new(inner.clone());
        engine.create_table("Orders").await.unwrap();
        engine.faults().inject(
            Fault::fail_after_applying(ErrorKind::Timeout)
                .on(CallKind::Write)
                .times(2),
        );
        assert_eq!(
            engine
                .write("Orders", &insert("1"))
                .await
                .unwrap_err()
                .kind(),
            ErrorKind::Timeout
        );
        // The inner engine's own error wins over the injected one.
        assert_eq!(
            engine
                .write("Orders", &insert("1"))
                .await
                .unwrap_err()
                .kind(),
            ErrorKind::EntityAlreadyExists
        );
        let key = EntityKey::new("p", "1");
        assert!(inner
            .get_entity("Orders", &key, None)
            .await
            .unwrap()
            .is_some());
    }

    #[tokio::test]
    async fn clones_share_controls_and_wrap_shared_engines() {
        let shared: Arc<dyn Engine> = Arc::new(MemEngine::new());
        let engine = FaultInjector::new(Arc::clone(&shared));
        let clone = engine.clone();
        clone
            .faults()
            .inject(Fault::fail(ErrorKind::Throttled).on(CallKind::CreateTable));
        assert_eq!(
            engine.create_table("Orders").await.unwrap_err().kind(),
            ErrorKind::Throttled
        );
        engine.faults().clear();
        clone.create_table("Orders").await.unwrap();
        assert_eq!(engine.faults().calls(), 2);
        let tables = shared
            .list_tables(&ListTablesOptions::default())
            .await
            .unwrap();
        assert_eq!(tables.names, ["Orders"]);
    }
}
