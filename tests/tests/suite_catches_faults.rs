//! The suite's own test: each scenario must fail on an engine that breaks the rule
//! it checks. `Faulty` wraps the mem engine and breaks exactly one rule; for each
//! fault, the scenarios about that rule must fail, and pass again without it.

use std::panic::AssertUnwindSafe;

use async_trait::async_trait;
use futures::FutureExt;
use tables_core::{
    validate_batch, CmpOp, ContinuationToken, DynamicEntity, ETag, Engine, EntityKey, Filter,
    IfMatch, ListTablesOptions, Page, QuerySpec, Result, TablePage, WriteOp, WriteOutcome,
};
use tables_mem::MemEngine;
use tables_tests::{
    batch, crud, etag, filters, ordering, paging, select_top, write_modes, Capabilities, Ctx,
};

/// One broken rule.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Fault {
    /// No fault: the control.
    None,
    /// Query pages come back in reverse key order.
    ReverseOrder,
    /// Merge and upsert-merge behave as replace and upsert-replace.
    MergeReplaces,
    /// `If-Match` ETags are ignored (treated as `*`).
    IgnoreEtag,
    /// A batch is written operation by operation, without rollback.
    NonAtomicBatch,
    /// A batch is written operation by operation without the batch rules.
    NoBatchRules,
    /// `$select` is ignored.
    IgnoreSelect,
    /// `$top` is ignored.
    IgnoreTop,
    /// Queries never return a continuation token.
    DropContinuation,
    /// Writes report a constant ETag.
    ConstantEtag,
    /// Deletes are silently ignored.
    IgnoreDelete,
    /// `$filter` is ignored.
    IgnoreFilter,
    /// `a ne b` is run as `not (a eq b)`, so entities lacking the property match.
    NeAsNotEq,
    /// Continuation tokens restart the query from the beginning.
    RestartOnContinuation,
}

#[derive(Debug)]
struct Faulty {
    inner: MemEngine,
    fault: Fault,
}

impl Faulty {
    fn new(fault: Fault) -> Faulty {
        Faulty {
            inner: MemEngine::new(),
            fault,
        }
    }

    fn rewrite(&self, op: &WriteOp) -> WriteOp {
        match (self.fault, op) {
            (Fault::MergeReplaces, WriteOp::Merge { entity, if_match }) => WriteOp::Replace {
                entity: entity.clone(),
                if_match: if_match.clone(),
            },
            (Fault::MergeReplaces, WriteOp::UpsertMerge(e)) => WriteOp::UpsertReplace(e.clone()),
            (Fault::IgnoreEtag, WriteOp::Merge { entity, .. }) => WriteOp::Merge {
                entity: entity.clone(),
                if_match: IfMatch::Any,
            },
            (Fault::IgnoreEtag, WriteOp::Replace { entity, .. }) => WriteOp::Replace {
                entity: entity.clone(),
                if_match: IfMatch::Any,
            },
            (Fault::IgnoreEtag, WriteOp::Delete { key, .. }) => WriteOp::Delete {
                key: key.clone(),
                if_match: IfMatch::Any,
            },
            _ => op.clone(),
        }
    }
}

#[async_trait]
impl Engine for Faulty {
    fn capabilities(&self) -> tables_core::EngineCapabilities {
        self.inner.capabilities()
    }

    async fn create_table(&self, table: &str) -> Result<()> {
        self.inner.create_table(table).await
    }

    async fn delete_table(&self, table: &str) -> Result<()> {
        self.inner.delete_table(table).await
    }

    async fn list_tables(&self, options: &ListTablesOptions) -> Result<TablePage> {
        self.inner.list_tables(options).await
    }

    async fn get_entity(
        &self,
        table: &str,
        key: &EntityKey,
        select: Option<&[String]>,
    ) -> Result<Option<DynamicEntity>> {
        let select = if self.fault == Fault::IgnoreSelect {
            None
        } else {
            select
        };
        self.inner.get_entity(table, key, select).await
    }

    async fn query(
        &self,
        table: &str,
        spec: &QuerySpec,
        continuation: Option<&ContinuationToken>,
    ) -> Result<Page<DynamicEntity>> {
        let mut spec = spec.clone();
        let mut continuation = continuation;
        match self.fault {
            Fault::IgnoreSelect => spec.select = None,
            Fault::IgnoreTop if spec.validate().is_ok() => spec.top = None,
            Fault::RestartOnContinuation => continuation = None,
            Fault::IgnoreFilter => spec.filter = None,
            Fault::NeAsNotEq => spec.filter = spec.filter.map(ne_as_not_eq),
            _ => {}
        }
        let mut page = self.inner.query(table, &spec, continuation).await?;
        match self.fault {
            Fault::ReverseOrder => page.items.reverse(),
            Fault::DropContinuation => page.continuation = None,
            Fault::RestartOnContinuation if page.items.is_empty() => page.continuation = None,
            _ => {}
        }
        Ok(page)
    }

    async fn write(&self, table: &str, op: &WriteOp) -> Result<WriteOutcome> {
        if self.fault == Fault::IgnoreDelete && matches!(op, WriteOp::Delete { .. }) {
            return Ok(WriteOutcome::default());
        }
        let mut outcome = self.inner.write(table, &self.rewrite(op)).await?;
        if self.fault == Fault::ConstantEtag && outcome.etag.is_some() {
            outcome.etag = Some(ETag::new("W/\"constant\""));
        }
        Ok(outcome)
    }

    async fn submit_batch(&self, table: &str, ops: &[WriteOp]) -> Result<Vec<WriteOutcome>> {
        match self.fault {
            Fault::NonAtomicBatch | Fault::NoBatchRules => {
                if self.fault == Fault::NonAtomicBatch {
                    validate_batch(ops)?;
                }
                let mut outcomes = Vec::new();
                for (i, op) in ops.iter().enumerate() {
                    outcomes.push(
                        self.inner
                            .write(table, op)
                            .await
                            .map_err(|e| e.with_batch_index(i))?,
                    );
                }
                Ok(outcomes)
            }
            _ => {
                let ops: Vec<WriteOp> = ops.iter().map(|op| self.rewrite(op)).collect();
                self.inner.submit_batch(table, &ops).await
            }
        }
    }
}

fn ne_as_not_eq(filter: Filter) -> Filter {
    match filter {
        Filter::Compare {
            property,
            op: CmpOp::Ne,
            value,
        } => Filter::Not(Box::new(Filter::Compare {
            property,
            op: CmpOp::Eq,
            value,
        })),
        Filter::And(a, b) => Filter::And(Box::new(ne_as_not_eq(*a)), Box::new(ne_as_not_eq(*b))),
        Filter::Or(a, b) => Filter::Or(Box::new(ne_as_not_eq(*a)), Box::new(ne_as_not_eq(*b))),
        Filter::Not(a) => Filter::Not(Box::new(ne_as_not_eq(*a))),
        other => other,
    }
}

/// Runs each scenario on a fresh engine with `fault` and asserts that it fails
/// (returns an error or panics); then on a fault-free engine, where it must pass.
macro_rules! caught {
    ($fault:expr => $($scenario:path),+ $(,)?) => {{
        $(
            let name = stringify!($scenario);
            let engine = Faulty::new($fault);
            let ctx = Ctx::new(name, Capabilities::azure());
            let outcome = AssertUnwindSafe($scenario(&engine, &ctx)).catch_unwind().await;
            assert!(
                !matches!(outcome, Ok(Ok(()))),
                "{name} passed on an engine with fault {:?}; it must catch it",
                $fault
            );
            let control = Faulty::new(Fault::None);
            let ctx = Ctx::new(name, Capabilities::azure());
            if let Err(err) = $scenario(&control, &ctx).await {
                panic!("{name} failed without a fault: {err:?}");
            }
        )+
    }};
}

#[tokio::test]
async fn order_faults_are_caught() {
    caught!(Fault::ReverseOrder =>
        ordering::rows_come_in_partition_then_row_order,
        ordering::key_order_is_ordinal,
        ordering::key_order_is_utf16,
        ordering::filtered_queries_keep_key_order,
        paging::paging_2500_rows_at_page_size_1000,
        crud::empty_keys_are_allowed,
    );
}

#[tokio::test]
async fn write_mode_faults_are_caught() {
    caught!(Fault::MergeReplaces =>
        write_modes::merge_keeps_unmentioned_properties,
        write_modes::upsert_merge_inserts_or_merges,
        write_modes::upserts_ignore_concurrent_changes,
        batch::batch_with_every_mode_commits,
    );
    caught!(Fault::IgnoreDelete =>
        crud::delete_removes_entity,
        crud::unusual_but_valid_keys_round_trip,
        crud::deleted_key_can_be_inserted_again,
    );
}

#[tokio::test]
async fn etag_faults_are_caught() {
    caught!(Fault::IgnoreEtag =>
        write_modes::conditional_writes_with_stale_etag_fail,
        write_modes::etag_of_previous_incarnation_is_stale,
        write_modes::etag_of_another_entity_does_not_match,
        etag::identical_rewrite_changes_etag,
        etag::failed_write_keeps_etag,
        batch::batch_failing_etag_rolls_back,
    );
    caught!(Fault::ConstantEtag =>
        etag::every_write_changes_etag_and_timestamp,
        write_modes::etag_of_another_entity_does_not_match,
    );
}

#[tokio::test]
async fn batch_faults_are_caught() {
    caught!(Fault::NonAtomicBatch =>
        batch::batch_failing_insert_rolls_back,
        batch::batch_failing_replace_rolls_back,
        batch::batch_failing_delete_rolls_back,
        batch::batch_failing_etag_rolls_back,
    );
    caught!(Fault::NoBatchRules =>
        batch::batch_of_more_than_100_is_rejected,
        batch::empty_batch_is_rejected,
        batch::batch_across_partitions_is_rejected,
        batch::batch_with_duplicate_row_is_rejected,
        batch::batch_with_invalid_operation_is_rejected,
        batch::batch_over_4_mib_is_rejected,
    );
}

#[tokio::test]
async fn query_option_faults_are_caught() {
    caught!(Fault::IgnoreSelect =>
        select_top::select_returns_named_properties_and_system_ones,
        select_top::select_of_missing_property_keeps_the_row,
        select_top::select_on_get_entity,
        select_top::select_with_filter_on_unselected_property,
        paging::paging_keeps_select_on_every_page,
    );
    caught!(Fault::IgnoreTop =>
        select_top::top_bounds_each_page_not_the_total,
        paging::paging_top_1_visits_every_row_once,
        paging::paging_sparse_filter_across_pages,
        paging::paging_keeps_select_on_every_page,
    );
}

#[tokio::test]
async fn paging_faults_are_caught() {
    caught!(Fault::DropContinuation =>
        paging::paging_default_page_is_at_most_1000,
        paging::paging_2500_rows_at_page_size_1000,
        paging::paging_top_1_visits_every_row_once,
        select_top::top_bounds_each_page_not_the_total,
    );
    caught!(Fault::RestartOnContinuation =>
        paging::paging_top_1_visits_every_row_once,
        paging::paging_resume_after_writes_does_not_repeat,
        paging::paging_resume_after_deletes,
        paging::paging_token_resumes_from_its_string_form,
    );
}

#[tokio::test]
async fn filter_faults_are_caught() {
    caught!(Fault::IgnoreFilter =>
        filters::filter_string,
        filters::filter_int32,
        filters::filter_int64,
        filters::filter_double,
        filters::filter_boolean,
        filters::filter_datetime,
        filters::filter_guid,
        filters::filter_binary,
        filters::filter_types_are_strict,
        filters::filter_missing_property_never_matches,
        filters::filter_and_or_not,
        filters::filter_on_keys,
        filters::filter_on_timestamp,
        filters::filter_string_constants_are_escaped,
        filters::filter_parsed_from_odata_text,
        ordering::key_range_filters_use_utf16_order,
        select_top::select_with_filter_on_unselected_property,
        paging::paging_sparse_filter_across_pages,
    );
    caught!(Fault::NeAsNotEq =>
        filters::filter_string,
        filters::filter_missing_property_never_matches,
        filters::filter_boolean,
    );
}
