//! `Table::reconcile`: finishes the intents crashes left behind.

use tables_core::model::ENTITY_TYPE_PROPERTY;
use tables_core::{col, QuerySpec, Result, Row};

use super::intents::{apply, parse_intent, LiveIntent, INTENT_TYPE};
use super::{derives_kind, Codec};
use crate::table::Table;

/// What [`Table::reconcile`] found and did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct ReconcileReport {
    /// Intent rows found in the table.
    pub intents_found: usize,
    /// Intents finished and removed (by this call, or by a concurrent applier while
    /// this call worked on them).
    pub intents_finished: usize,
    /// Intents that also cover primaries of kinds this table type doesn't read: this
    /// call settled its own kinds and left the rest (reconcile through a type that
    /// reads them, e.g. an `EntityUnion` of every kind in the table).
    pub intents_left: usize,
    /// Index copies written and index entity memberships added.
    pub index_rows_written: usize,
    /// Index copies deleted and index entity memberships removed.
    pub index_rows_removed: usize,
}

impl<T: Row> Table<T> {
    /// Finishes every intent left in the table by a write that stopped between its
    /// commit and the upkeep of its index rows in other partitions and tables (a
    /// crash, a lost connection, a transient error). For each intent it re-derives
    /// the index rows from the *current* primaries, writes the implied ones, removes
    /// those no longer implied, and deletes the intent; afterwards the index rows
    /// match the primaries exactly.
    ///
    /// Safe to run at any time, concurrently with writers and with other
    /// `reconcile()` calls, and any number of times. It scans the whole table for
    /// intent rows (`EntityType eq '$intent'`), whatever
    /// [`crate::ClientOptions::allow_table_scans`] says: run it from maintenance
    /// jobs, not on hot paths.
    ///
    /// ```
    /// use tables_client::{Entity, TableServiceClient};
    ///
    /// #[derive(Entity, Debug, Clone, PartialEq)]
    /// #[entity(partition_key = "{department}", row_key = "empid_{id:06}")]
    /// #[entity(unique_index(name = "by_email", table = "EmployeesByEmail", partition_key = "email", row_key = "{email}"))]
    /// pub struct Employee { pub department: String, pub id: u32, pub email: String }
    ///
    /// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
    /// let service = TableServiceClient::in_memory();
    /// let employees = service.table::<Employee>("Employees");
    /// employees.create_if_not_exists().await?;
    /// employees.insert(&Employee { department: "Sales".into(), id: 7, email: "a@x.com".into() }).await?;
    /// let report = employees.reconcile().await?;
    /// assert_eq!(report.intents_found, 0); // the insert finished its own intent
    /// # Ok::<(), tables_client::Error>(())
    /// # }).unwrap();
    /// ```
    ///
    /// # Errors
    ///
    /// The engine's errors while scanning. An intent that can't be finished (an
    /// engine error, an index table that doesn't exist, an index entity that would
    /// outgrow 64 KiB) doesn't stop the others: they are all tried, and the first
    /// such error is returned; the failed intents stay for the next call.
    pub async fn reconcile(&self) -> Result<ReconcileReport> {
        let engine = self.engine();
        let mut spec = QuerySpec::new().filter(col(ENTITY_TYPE_PROPERTY).eq(INTENT_TYPE));
        spec.top = self.service().options().page_size;
        let codec = Codec::of::<T>();
        let codec_for = |kind: &str| derives_kind::<T>(kind).then_some(codec);
        let mut report = ReconcileReport::default();
        let mut first_error = None;
        let mut token = None;
        loop {
            let page = engine.query(self.name(), &spec, token.as_ref()).await?;
            for row in page.items {
                report.intents_found += 1;
                let outcome = match parse_intent(&row) {
                    Ok(doc) => {
                        let live = LiveIntent::new(row.key(), row.etag.clone(), doc);
                        apply(self.service(), self.name(), live, &codec_for).await
                    }
                    Err(err) => Err(err),
                };
                match outcome {
                    Ok(applied) => {
                        if applied.finished {
                            report.intents_finished += 1;
                        } else {
                            report.intents_left += 1;
                        }
                        report.index_rows_written += applied.written;
                        report.index_rows_removed += applied.removed;
                    }
                    Err(err) => {
                        first_error.get_or_insert(err);
                    }
                }
            }
            match page.continuation {
                Some(next) => token = Some(next),
                None => break,
            }
        }
        match first_error {
            Some(err) => Err(err),
            None => Ok(report),
        }
    }
}
