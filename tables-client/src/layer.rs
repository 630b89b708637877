//! Engines that transform rows on their way down and up, over another engine: the
//! encryption layer and the blob layer. Each says what it does to a row read and to
//! a write (and, for the blob layer, what to do once the write's fate is known);
//! [`row_layer_engine!`] writes the `Engine` around that once.

/// Whether a write took effect, as its outcome tells.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Applied {
    /// It succeeded.
    Yes,
    /// It failed and did not apply.
    No,
    /// It failed and may have applied (a lost answer).
    Maybe,
}

impl Applied {
    /// What `outcome` says.
    pub(crate) fn of<T>(outcome: &tables_core::Result<T>) -> Applied {
        match outcome {
            Ok(_) => Applied::Yes,
            Err(e) if e.may_have_applied() => Applied::Maybe,
            Err(_) => Applied::No,
        }
    }
}

/// `impl Engine for $layer`, for a layer with these inherent methods:
///
/// - `fn inner(&self) -> &Arc<dyn Engine>`: the engine below;
/// - `async fn read_row(&self, table: &str, row: DynamicEntity) -> Result<DynamicEntity>`:
///   a row read, on its way up;
/// - `async fn prepare_write(&self, table: &str, op: &WriteOp) -> Result<(WriteOp, $pending)>`:
///   a write, on its way down, and what to remember about it;
/// - `async fn settle(&self, applied: Applied, pending: Vec<$pending>)`: after the
///   write (or batch) with what its outcome says.
///
/// Or, for a layer that runs its writes itself (`writes = ..`):
///
/// - `async fn $write_rows(&self, table: &str, ops: &[WriteOp], batch: bool) -> Result<Vec<WriteOutcome>>`:
///   a write (one op, `batch` false) or a batch, whole;
/// - `async fn $reconcile(&self, table: &str, partition_key: Option<&str>) -> Result<LayerReconcileReport>`:
///   its own part of [`tables_core::Engine::reconcile_layers`] (after the inner engine's).
///
/// Table operations pass through; reads go through `read_row`, except the rows
/// `fn hides(&self, row: &DynamicEntity) -> bool` says are the layer's own; a read's
/// `$select` goes down as `fn widen_select(&self, select: &[String]) -> Option<Vec<String>>`
/// widens it (`None`: as it is), for the properties `read_row` needs.
macro_rules! row_layer_engine {
    ($layer:ty, $pending:ty) => {
        $crate::layer::row_layer_engine!(@impl $layer, {
            async fn write(
                &self,
                table: &str,
                op: &::tables_core::WriteOp,
            ) -> ::tables_core::Result<::tables_core::WriteOutcome> {
                let (op, pending) = self.prepare_write(table, op).await?;
                let outcome = self.inner().write(table, &op).await;
                self.settle($crate::layer::Applied::of(&outcome), vec![pending])
                    .await;
                outcome
            }

            async fn submit_batch(
                &self,
                table: &str,
                ops: &[::tables_core::WriteOp],
            ) -> ::tables_core::Result<Vec<::tables_core::WriteOutcome>> {
                let mut prepared = Vec::with_capacity(ops.len());
                let mut pending: Vec<$pending> = Vec::with_capacity(ops.len());
                for op in ops {
                    match self.prepare_write(table, op).await {
                        Ok((op, remembered)) => {
                            prepared.push(op);
                            pending.push(remembered);
                        }
                        Err(e) => {
                            self.settle($crate::layer::Applied::No, pending).await;
                            return Err(e);
                        }
                    }
                }
                let outcome = self.inner().submit_batch(table, &prepared).await;
                self.settle($crate::layer::Applied::of(&outcome), pending)
                    .await;
                outcome
            }

            async fn reconcile_layers(
                &self,
                table: &str,
                partition_key: Option<&str>,
            ) -> ::tables_core::Result<::tables_core::LayerReconcileReport> {
                self.inner().reconcile_layers(table, partition_key).await
            }
        });
    };
    ($layer:ty, writes = $write_rows:ident, reconcile = $reconcile:ident) => {
        $crate::layer::row_layer_engine!(@impl $layer, {
            async fn write(
                &self,
                table: &str,
                op: &::tables_core::WriteOp,
            ) -> ::tables_core::Result<::tables_core::WriteOutcome> {
                let mut outcomes = self
                    .$write_rows(table, std::slice::from_ref(op), false)
                    .await?;
                outcomes.pop().ok_or_else(|| {
                    ::tables_core::Error::new(
                        ::tables_core::ErrorKind::Decode,
                        "a write returned no outcome",
                    )
                })
            }

            async fn submit_batch(
                &self,
                table: &str,
                ops: &[::tables_core::WriteOp],
            ) -> ::tables_core::Result<Vec<::tables_core::WriteOutcome>> {
                self.$write_rows(table, ops, true).await
            }

            async fn reconcile_layers(
                &self,
                table: &str,
                partition_key: Option<&str>,
            ) -> ::tables_core::Result<::tables_core::LayerReconcileReport> {
                let mut report = self.inner().reconcile_layers(table, partition_key).await?;
                report.absorb(&self.$reconcile(table, partition_key).await?);
                Ok(report)
            }
        });
    };
    // The table operations and reads, and the writes given.
    (@impl $layer:ty, { $($writes:tt)* }) => {
        #[::async_trait::async_trait]
        impl ::tables_core::Engine for $layer {
            $($writes)*

        fn capabilities(&self) -> ::tables_core::EngineCapabilities {
            self.inner().capabilities()
        }

        async fn create_table(&self, table: &str) -> ::tables_core::Result<()> {
            self.inner().create_table(table).await
        }

        async fn delete_table(&self, table: &str) -> ::tables_core::Result<()> {
            self.inner().delete_table(table).await
        }

        async fn list_tables(
            &self,
            options: &::tables_core::ListTablesOptions,
        ) -> ::tables_core::Result<::tables_core::TablePage> {
            self.inner().list_tables(options).await
        }

        async fn get_entity(
            &self,
            table: &str,
            key: &::tables_core::EntityKey,
            select: Option<&[String]>,
        ) -> ::tables_core::Result<Option<::tables_core::DynamicEntity>> {
            let widened = select.and_then(|names| self.widen_select(names));
            let select = widened.as_deref().or(select);
            match self.inner().get_entity(table, key, select).await? {
                Some(row) if !self.hides(&row) => Ok(Some(self.read_row(table, row).await?)),
                _ => Ok(None),
            }
        }

        async fn query(
            &self,
            table: &str,
            spec: &::tables_core::QuerySpec,
            continuation: Option<&::tables_core::ContinuationToken>,
        ) -> ::tables_core::Result<::tables_core::Page<::tables_core::DynamicEntity>> {
            let widened = spec
                .select
                .as_deref()
                .and_then(|names| self.widen_select(names))
                .map(|select| ::tables_core::QuerySpec {
                    select: Some(select),
                    ..spec.clone()
                });
            let spec = widened.as_ref().unwrap_or(spec);
            let mut page = self.inner().query(table, spec, continuation).await?;
            let mut items = Vec::with_capacity(page.items.len());
            for row in std::mem::take(&mut page.items) {
                if self.hides(&row) {
                    continue;
                }
                items.push(self.read_row(table, row).await?);
            }
            page.items = items;
            Ok(page)
        }
        }
    };
}
pub(crate) use row_layer_engine;
