//! `Table::reconcile` and `Table::reconcile_partition`: finish the intents crashes
//! and failures left behind.

use std::fmt;

use tables_core::model::ENTITY_TYPE_PROPERTY;
use tables_core::{
    col, DynamicEntity, EntityKey, Error, ErrorKind, Filter, LayerReconcileReport, QuerySpec,
    Result, Row, Value,
};

use super::intents::{LiveIntent, INTENT_TYPE};
use super::moving::{Reconciled, MOVE_TYPE};
use super::settle::{apply, Finish};
use super::touched::{RowChange, TouchedRow};
use super::{derives_kind, Codec};
use crate::paging::EntityPages;
use crate::table::Table;

/// An intent `reconcile()` could not finish, and why. It stays for the next call.
#[derive(Debug)]
#[non_exhaustive]
pub struct IntentFailure {
    /// The intent row's key.
    pub intent: EntityKey,
    /// Why it could not be finished.
    pub error: Error,
}

/// What [`Table::reconcile`] found and did.
///
/// `reconcile()` returns it when every intent it found is finished; when some could
/// not be, it returns an error whose source is the report
/// ([`ReconcileReport::from_error`]), so a partial failure can't pass for success.
#[derive(Debug, Default)]
#[non_exhaustive]
pub struct ReconcileReport {
    /// Intent rows found (tombstones included).
    pub intents_found: usize,
    /// Intents whose work is done now: settled by this call or by a concurrent
    /// worker while this call worked on them.
    pub intents_finished: usize,
    /// Intents of writes that were still claiming `unique_index` values (a crash
    /// between the claims and the commit): fenced so those writes can never commit,
    /// and their claims released.
    pub intents_aborted: usize,
    /// Intents that also cover entities of kinds this table type doesn't read: this
    /// call settled its own kinds and left the rest (reconcile through a type that
    /// reads them, e.g. an `EntityUnion` of every kind in the table).
    pub intents_left: usize,
    /// Move rows found ([`Table::move_to`]; tombstones included). A move with work
    /// left is one a crash or a failure stopped between locking the old row and
    /// deleting it.
    pub moves_found: usize,
    /// Moves that had committed (the entity was at its new key), finished: the old
    /// row deleted, the new one unmarked.
    pub moves_finished: usize,
    /// Moves that had not committed and were older than
    /// [`crate::ClientOptions::intent_retention`]: fenced so they never can, and the
    /// old row unlocked.
    pub moves_undone: usize,
    /// Moves younger than the retention period that had not committed: their mover
    /// may still be at work, so they are left for a later call.
    pub moves_left: usize,
    /// Tombstones of finished intents and moves older than
    /// [`crate::ClientOptions::intent_retention`], removed.
    pub tombstones_removed: usize,
    /// Younger tombstones (of intents and moves), kept.
    pub tombstones_kept: usize,
    /// Every index row written or removed, in the order it happened.
    pub touched: Vec<TouchedRow>,
    /// Every intent that could not be finished.
    pub failures: Vec<IntentFailure>,
    /// What the engine's layers finished ([`tables_core::Engine::reconcile_layers`]):
    /// with a blob store, the blob intents of writes that stopped part way, and the
    /// orphan blobs they left, deleted.
    pub layers: LayerReconcileReport,
}

impl ReconcileReport {
    /// Index copies written and index entity memberships added.
    pub fn index_rows_written(&self) -> usize {
        self.count(|c| matches!(c, RowChange::CopyWritten | RowChange::MemberAdded))
    }

    /// Index copies deleted and index entity memberships removed.
    pub fn index_rows_removed(&self) -> usize {
        self.count(|c| matches!(c, RowChange::CopyRemoved | RowChange::MemberRemoved))
    }

    fn count(&self, which: impl Fn(RowChange) -> bool) -> usize {
        self.touched.iter().filter(|t| which(t.change)).count()
    }

    /// Whether every intent found was finished.
    pub fn is_complete(&self) -> bool {
        self.failures.is_empty()
    }

    /// The report a failed `reconcile()` carries, if `err` is one.
    pub fn from_error(err: &Error) -> Option<&ReconcileReport> {
        std::error::Error::source(err)?.downcast_ref()
    }

    /// `Ok(self)` when complete; otherwise the error of the first failure, with the
    /// report as its source.
    fn into_result(self) -> Result<ReconcileReport> {
        let Some(first) = self.failures.first() else {
            return Ok(self);
        };
        let message = format!(
            "reconcile left {} of {} intents and moves unfinished (they stay for the next \
             call); the first, {}, failed with: {}. ReconcileReport::from_error gives every \
             failure",
            self.failures.len(),
            self.intents_found + self.moves_found,
            first.intent,
            first.error
        );
        let mut err = Error::new(first.error.kind(), message)
            .with_entity_key(first.intent.clone())
            .with_origin(first.error.origin());
        if let Some(code) = first.error.service_code() {
            err = err.with_service_code(code.to_owned());
        }
        Err(err.with_source(self))
    }
}

impl fmt::Display for ReconcileReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} intents found, {} finished, {} aborted, {} left to other kinds, {} failed; {} moves found, {} finished, {} undone, {} left; {} index rows written, {} removed; {} blob intents finished, {} blobs deleted",
            self.intents_found,
            self.intents_finished,
            self.intents_aborted,
            self.intents_left,
            self.failures.len(),
            self.moves_found,
            self.moves_finished,
            self.moves_undone,
            self.moves_left,
            self.index_rows_written(),
            self.index_rows_removed(),
            self.layers.blob_intents_found,
            self.layers.blobs_deleted
        )
    }
}

impl std::error::Error for ReconcileReport {}

impl<T: Row> Table<T> {
    /// Finishes every intent left in the table: by a write that stopped between its
    /// commit and the upkeep of its index rows in other partitions and tables (a
    /// crash, a lost connection, a transient error), or between claiming
    /// `unique_index` values and its commit. For each intent it re-derives the index
    /// rows from the *current* primaries, writes the implied ones, removes those no
    /// longer implied (and releases the claims of writes that never committed);
    /// afterwards the index rows match the primaries exactly. It also finishes the
    /// moves ([`Table::move_to`]) a crash stopped: a move that committed is rolled
    /// forward, one that did not (and is older than the retention period) is undone.
    ///
    /// Safe to run at any time, concurrently with writers and with other
    /// `reconcile()` calls, and any number of times. It reads every partition (a
    /// table scan), so it needs [`crate::ClientOptions::allow_table_scans`];
    /// [`Table::reconcile_partition`] reads one.
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
    /// [`ErrorKind::InvalidQuery`] before anything is read when the client forbids
    /// table scans; the engine's errors while scanning. An intent that can't be
    /// finished (an engine error, an index table that doesn't exist, a
    /// `unique_index` value held by another entity) doesn't stop the others: all are
    /// tried, and the error (kind of the first failure) carries the whole
    /// [`ReconcileReport`] ([`ReconcileReport::from_error`]).
    pub async fn reconcile(&self) -> Result<ReconcileReport> {
        if !self.service().options().allow_table_scans {
            return Err(Error::new(
                ErrorKind::InvalidQuery,
                format!(
                    "reconcile() reads the intents of every partition of {}, a table scan, which \
                     this client forbids (ClientOptions::allow_table_scans); reconcile each \
                     partition with reconcile_partition(..), or allow table scans",
                    self.name()
                ),
            ));
        }
        self.reconcile_matching(None).await
    }

    /// [`Table::reconcile`] for the intents of one partition: a partition scan, so
    /// it runs whatever [`crate::ClientOptions::allow_table_scans`] says. Intents live
    /// in the partition of the entities they cover.
    ///
    /// # Errors
    ///
    /// As [`Table::reconcile`], except that it never refuses to scan.
    pub async fn reconcile_partition(&self, partition_key: &str) -> Result<ReconcileReport> {
        self.reconcile_matching(Some(partition_key)).await
    }

    async fn reconcile_matching(&self, partition_key: Option<&str>) -> Result<ReconcileReport> {
        let engine = self.engine();
        let rows =
            col(ENTITY_TYPE_PROPERTY).eq(INTENT_TYPE) | col(ENTITY_TYPE_PROPERTY).eq(MOVE_TYPE);
        let mut report = ReconcileReport::default();
        match engine.reconcile_layers(self.name(), partition_key).await {
            Ok(layers) => report.layers = layers,
            Err(error) => report.failures.push(IntentFailure {
                intent: error
                    .entity_key()
                    .cloned()
                    .unwrap_or_else(|| EntityKey::new(partition_key.unwrap_or_default(), "")),
                error,
            }),
        }
        let mut pages = self.upkeep_rows(partition_key, rows);
        while let Some(page) = pages.next(engine.as_ref()).await? {
            for row in page.items {
                if row.get(ENTITY_TYPE_PROPERTY).and_then(Value::as_str) == Some(MOVE_TYPE) {
                    self.reconcile_move_row(row, &mut report).await;
                } else {
                    self.reconcile_intent_row(row, &mut report).await;
                }
            }
        }
        report.into_result()
    }

    /// The intents of one partition only (not its moves): a move's finish settles
    /// the new row's intent with it.
    pub(crate) async fn reconcile_intents(&self, partition_key: &str) -> Result<ReconcileReport> {
        let engine = self.engine();
        let mut report = ReconcileReport::default();
        let intents = col(ENTITY_TYPE_PROPERTY).eq(INTENT_TYPE);
        let mut pages = self.upkeep_rows(Some(partition_key), intents);
        while let Some(page) = pages.next(engine.as_ref()).await? {
            for row in page.items {
                self.reconcile_intent_row(row, &mut report).await;
            }
        }
        report.into_result()
    }

    /// The pages of the upkeep rows `rows` selects, in one partition or all.
    fn upkeep_rows(&self, partition_key: Option<&str>, rows: Filter) -> EntityPages {
        let filter = match partition_key {
            Some(pk) => Filter::partition_key(pk) & rows,
            None => rows,
        };
        let mut spec = QuerySpec::new().filter(filter);
        spec.top = self.service().options().page_size;
        EntityPages::new(self.name(), spec, None)
    }

    /// Finishes or undoes one move, into `report`.
    async fn reconcile_move_row(&self, row: DynamicEntity, report: &mut ReconcileReport) {
        report.moves_found += 1;
        let key = row.key();
        let retention = self.service().options().intent_retention;
        match self.reconcile_move(row, retention).await {
            Ok(Reconciled::RolledForward) => report.moves_finished += 1,
            Ok(Reconciled::Undone) => report.moves_undone += 1,
            Ok(Reconciled::Left) => report.moves_left += 1,
            Ok(Reconciled::TombstoneKept) => report.tombstones_kept += 1,
            Ok(Reconciled::TombstoneRemoved) => report.tombstones_removed += 1,
            Err(error) => report.failures.push(IntentFailure { intent: key, error }),
        }
    }

    /// Finishes one intent, into `report`.
    async fn reconcile_intent_row(&self, row: DynamicEntity, report: &mut ReconcileReport) {
        let engine = self.engine();
        let codec = Codec::of::<T>();
        let codec_for = |kind: &str| derives_kind::<T>(kind).then_some(codec);
        let retention = self.service().options().intent_retention;
        report.intents_found += 1;
        let live = match LiveIntent::from_row(&row) {
            Ok(live) => live,
            Err(error) => {
                report.failures.push(IntentFailure {
                    intent: row.key(),
                    error,
                });
                return;
            }
        };
        let key = live.key.clone();
        if !live.doc.has_work() && live.doc.state() != super::intents::IntentState::Claiming {
            // A tombstone: remove it once it has served its time.
            if live.age() > retention {
                let mut live = live;
                match live.delete(engine.as_ref(), self.name()).await {
                    Ok(_) => report.tombstones_removed += 1,
                    Err(error) => report.failures.push(IntentFailure { intent: key, error }),
                }
            } else {
                report.tombstones_kept += 1;
            }
            return;
        }
        match apply(
            self.service(),
            self.name(),
            live,
            &codec_for,
            Finish::Worker { retention },
        )
        .await
        {
            Ok(applied) => {
                if applied.aborted {
                    report.intents_aborted += 1;
                }
                if applied.finished {
                    report.intents_finished += 1;
                } else {
                    report.intents_left += 1;
                }
                report.touched.extend(applied.touched);
            }
            Err(error) => report.failures.push(IntentFailure { intent: key, error }),
        }
    }
}
