//! `--max-rps`: at most so many requests a second, every worker together, so a job
//! stays under an account's scalability target (Azure Storage: 20,000 entities or
//! messages a second per account, 2,000 per partition) beside the traffic of the
//! applications using it.

use std::sync::Arc;
use std::time::Duration;

use tables_client::{
    async_trait, ContinuationToken, DynamicEntity, Engine, EngineCapabilities, EntityKey,
    LayerReconcileReport, ListTablesOptions, Page, QuerySpec, Result, TablePage,
    TableServiceClient, WriteOp, WriteOutcome,
};
use tokio::sync::Mutex;
use tokio::time::Instant;

/// A pace shared by every request of a command: one request per interval.
#[derive(Debug)]
pub(crate) struct RateLimit {
    interval: Duration,
    next: Mutex<Option<Instant>>,
}

impl RateLimit {
    pub(crate) fn per_second(requests: u32) -> Arc<RateLimit> {
        Arc::new(RateLimit {
            interval: Duration::from_secs(1) / requests.max(1),
            next: Mutex::new(None),
        })
    }

    /// Waits for this request's turn.
    pub(crate) async fn wait(&self) {
        let turn = {
            let mut next = self.next.lock().await;
            let now = Instant::now();
            let turn = next.map_or(now, |at| at.max(now));
            *next = Some(turn + self.interval);
            turn
        };
        tokio::time::sleep_until(turn).await;
    }
}

/// `service` with every request to its engine paced by `limit`.
pub(crate) fn limited(service: &TableServiceClient, limit: Arc<RateLimit>) -> TableServiceClient {
    let engine = Arc::new(Paced {
        inner: Arc::clone(service.engine()),
        limit,
    });
    TableServiceClient::with_options(engine, service.options().clone())
}

/// An engine that waits its turn before each request.
#[derive(Debug)]
struct Paced {
    inner: Arc<dyn Engine>,
    limit: Arc<RateLimit>,
}

#[async_trait]
impl Engine for Paced {
    fn capabilities(&self) -> EngineCapabilities {
        self.inner.capabilities()
    }

    async fn create_table(&self, table: &str) -> Result<()> {
        self.limit.wait().await;
        self.inner.create_table(table).await
    }

    async fn delete_table(&self, table: &str) -> Result<()> {
        self.limit.wait().await;
        self.inner.delete_table(table).await
    }

    async fn list_tables(&self, options: &ListTablesOptions) -> Result<TablePage> {
        self.limit.wait().await;
        self.inner.list_tables(options).await
    }

    async fn get_entity(
        &self,
        table: &str,
        key: &EntityKey,
        select: Option<&[String]>,
    ) -> Result<Option<DynamicEntity>> {
        self.limit.wait().await;
        self.inner.get_entity(table, key, select).await
    }

    async fn query(
        &self,
        table: &str,
        spec: &QuerySpec,
        continuation: Option<&ContinuationToken>,
    ) -> Result<Page<DynamicEntity>> {
        self.limit.wait().await;
        self.inner.query(table, spec, continuation).await
    }

    async fn query_json(
        &self,
        table: &str,
        spec: &QuerySpec,
        continuation: Option<&ContinuationToken>,
    ) -> Result<Option<tables_core::JsonPage>> {
        self.limit.wait().await;
        self.inner.query_json(table, spec, continuation).await
    }

    async fn write(&self, table: &str, op: &WriteOp) -> Result<WriteOutcome> {
        self.limit.wait().await;
        self.inner.write(table, op).await
    }

    async fn submit_batch(&self, table: &str, ops: &[WriteOp]) -> Result<Vec<WriteOutcome>> {
        self.limit.wait().await;
        self.inner.submit_batch(table, ops).await
    }

    async fn reconcile_layers(
        &self,
        table: &str,
        partition_key: Option<&str>,
    ) -> Result<LayerReconcileReport> {
        self.inner.reconcile_layers(table, partition_key).await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test(start_paused = true)]
    async fn requests_keep_to_the_pace() {
        let limit = RateLimit::per_second(10);
        let start = Instant::now();
        for _ in 0..21 {
            limit.wait().await;
        }
        // The first goes at once, the next 20 one every 100 ms.
        assert_eq!(start.elapsed(), Duration::from_secs(2));
    }
}
