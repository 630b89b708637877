//! [`Table::verify_indexes`] and [`Table::repair_indexes`]: find (and repair) every
//! index row that differs from what the entities imply, including rows no intent
//! records: a copy written by a delivery that came after its intent was finished,
//! entities written before an index was declared, rows written by other code.
//!
//! Two passes, each a paged scan that can be resumed with a token:
//!
//! 1. **entities**: every entity of the type (of one partition, if asked): each
//!    index row it implies must be stored, hold its content, and belong to it;
//! 2. **index rows**, index by index: every copy must belong to an entity that
//!    implies it, every index entity's member must be an entity that belongs to it.
//!
//! A repair never writes an index row directly: for the entities of a page with a
//! problem it records intents listing the rows to fix (one for each partition, as a
//! write does, and for up to a batch's count of entities) and settles each like any
//! intent, deriving everything from the entities as stored then. The entities of an
//! intent settle together, so an index entity that lists many of them is written
//! once for them all, not once per member. So it is safe while the application writes, and a repair that stops
//! half-way leaves an intent `reconcile()` finishes. Values two entities claim
//! (a `unique_index` value held by another entity) are reported, not repaired.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::fmt;
use std::str::FromStr;
use std::sync::{Mutex, MutexGuard, PoisonError};

use futures::stream::{self, StreamExt, TryStreamExt};
use tables_core::model::{
    index_copy_type, index_entry_type, IndexKind, IndexSchema, ENTITY_TYPE_PROPERTY,
    PRIMARY_PARTITION_KEY_PROPERTY,
};
use tables_core::{
    col, ContinuationToken, DynamicEntity, Engine, EntityKey, Error, ErrorKind, Filter, IfMatch,
    QuerySpec, Result, Row, WriteOp, MAX_BATCH_OPERATIONS,
};

use super::index_entities::{encode_member, member_key, members_of};
use super::intents::{
    intent_row, new_intent_key, parse_intent, rows_of, IntentDoc, IntentState, LiveIntent,
    PrimaryIntent, RowRef,
};
use super::rows::{is_stale_claim, same_content, Holder, IndexOf, CLAIM_PROPERTY};
use super::settle::{apply, Finish};
use super::Codec;
use crate::paging::EntityPages;
use crate::query::Fingerprint;
use crate::table::Table;

/// Entities (or index rows) checked at once.
const CONCURRENCY: usize = 8;

/// What is wrong with an index row.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[non_exhaustive]
pub enum Problem {
    /// An entity implies a copy that isn't stored (e.g. the index was declared
    /// after the entity was written).
    MissingCopy,
    /// A stored copy doesn't hold its entity's current content.
    StaleCopy,
    /// A copy no entity implies (its entity is gone or has other values).
    OrphanCopy,
    /// An entity implies a copy whose key another entity (or another row) holds:
    /// two entities claim one `unique_index` value. Reported, never repaired.
    TakenCopy,
    /// An entity is missing from an index entity that should list it.
    MissingMember,
    /// An index entity lists an entity that doesn't belong there.
    OrphanMember,
    /// An index entity lists nobody.
    EmptyIndexEntity,
    /// A stored entity can't be read as the type, so its index rows can't be told.
    UnreadableEntity,
}

/// One problem found.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Finding {
    /// What is wrong.
    pub problem: Problem,
    /// The index (or index entity) name.
    pub index: String,
    /// The table of the index row.
    pub table: String,
    /// The key of the index row (of the entity, for [`Problem::UnreadableEntity`]).
    pub key: EntityKey,
    /// The entity concerned, when one is.
    pub entity: Option<EntityKey>,
    /// Whether [`Table::repair_indexes`] fixed it.
    pub repaired: bool,
}

/// Which pass a check is in.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum CheckPhase {
    /// Reading the entities.
    Entities,
    /// Reading the rows of this index.
    IndexRows {
        /// The index name.
        index: String,
    },
}

/// How far a check got.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct CheckProgress {
    /// The pass in progress.
    pub phase: CheckPhase,
    /// Entities checked so far (across resumptions).
    pub entities_checked: u64,
    /// Index rows checked so far in the second pass (across resumptions).
    pub index_rows_checked: u64,
}

/// One page of a check: the problems it found and where the next page starts.
#[derive(Debug)]
#[non_exhaustive]
pub struct CheckPage {
    /// The problems found on this page.
    pub findings: Vec<Finding>,
    /// How far the check got.
    pub progress: CheckProgress,
    /// Where the next page starts; `None` when the check is complete.
    pub next: Option<CheckToken>,
}

/// What a whole check found (and repaired).
#[derive(Debug, Default, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct CheckReport {
    /// Entities checked.
    pub entities_checked: u64,
    /// Index rows checked in the second pass.
    pub index_rows_checked: u64,
    /// Every problem found.
    pub findings: Vec<Finding>,
}

impl CheckReport {
    /// Whether nothing was wrong.
    pub fn is_clean(&self) -> bool {
        self.findings.is_empty()
    }

    /// How many problems were repaired.
    pub fn repaired(&self) -> usize {
        self.findings.iter().filter(|f| f.repaired).count()
    }

    /// The problems left: found by a verification, or not repairable.
    pub fn unresolved(&self) -> impl Iterator<Item = &Finding> + '_ {
        self.findings.iter().filter(|f| !f.repaired)
    }
}

/// Where a check resumes: which pass, how far it got, and the service's
/// continuation, bound to the check it belongs to (table, type, index, partition).
///
/// The string form (`Display` / `FromStr`) is URL-safe and stable:
/// `ix1.<fingerprint>.<pass>.<entities checked>.<index rows checked>.<continuation or ->`.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct CheckToken {
    check: u64,
    step: usize,
    entities: u64,
    rows: u64,
    continuation: Option<ContinuationToken>,
}

const TOKEN_PREFIX: &str = "ix1";

impl fmt::Display for CheckToken {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{TOKEN_PREFIX}.{:016x}.{}.{}.{}.",
            self.check, self.step, self.entities, self.rows
        )?;
        match &self.continuation {
            Some(token) => write!(f, "{token}"),
            None => f.write_str("-"),
        }
    }
}

impl FromStr for CheckToken {
    type Err = Error;

    fn from_str(s: &str) -> Result<CheckToken> {
        let bad = |why: &str| {
            Error::new(
                ErrorKind::InvalidContinuationToken,
                format!("malformed index check token {s:?}: {why}; pass a token exactly as a check page returned it"),
            )
        };
        let mut parts = s.splitn(6, '.');
        if parts.next() != Some(TOKEN_PREFIX) {
            return Err(bad("unknown prefix"));
        }
        let check = parts
            .next()
            .filter(|hex| hex.len() == 16)
            .and_then(|hex| u64::from_str_radix(hex, 16).ok())
            .ok_or_else(|| bad("the fingerprint is not 16 hex digits"))?;
        let mut number = |what: &str| {
            parts
                .next()
                .filter(|d| !d.is_empty() && d.bytes().all(|b| b.is_ascii_digit()))
                .and_then(|d| d.parse::<u64>().ok())
                .ok_or_else(|| bad(&format!("the {what} is not a number")))
        };
        let step = usize::try_from(number("pass")?).map_err(|_| bad("the pass is too large"))?;
        let entities = number("entity count")?;
        let rows = number("row count")?;
        let continuation = match parts.next() {
            Some("-") => None,
            Some(text) => Some(
                text.parse()
                    .map_err(|_| bad("the continuation is malformed"))?,
            ),
            None => return Err(bad("the continuation is missing")),
        };
        Ok(CheckToken {
            check,
            step,
            entities,
            rows,
            continuation,
        })
    }
}

/// A check of `T`'s indexes in one table: [`Table::verify_indexes`] (report only)
/// or [`Table::repair_indexes`] (report and repair).
#[derive(Debug)]
#[must_use = "a check does nothing until it runs"]
pub struct IndexCheck<T> {
    table: Table<T>,
    repair: bool,
    index: Option<String>,
    partition: Option<String>,
    at: CheckToken,
    done: bool,
}

impl<T: Row> Table<T> {
    /// Checks every index row of `T` in this table (and its index tables) against
    /// the entities, without changing anything: copies missing, stale, orphaned or
    /// held by another entity, index entities missing members or listing strangers.
    /// See [`Table::repair_indexes`].
    pub fn verify_indexes(&self) -> IndexCheck<T> {
        IndexCheck::new(self.clone(), false)
    }

    /// Checks every index row of `T` as [`Table::verify_indexes`] does, and repairs
    /// each problem but values two entities claim: writes missing and stale copies,
    /// removes orphans, fixes index entities. It builds an index declared after its
    /// entities were written, and clears up rows no intent records (a copy write
    /// delivered after its intent was finished, rows written by other code).
    ///
    /// Safe while the application writes: each repair is an intent settled from the
    /// entity as stored then, like a write's own upkeep. Resumable: run page by page
    /// ([`IndexCheck::next_page`], whose token resumes it later, also in another
    /// process), or to the end ([`IndexCheck::run`]).
    ///
    /// ```
    /// use tables_client::{Entity, Problem, Row, TableServiceClient, WriteOp};
    ///
    /// #[derive(Entity, Debug, Clone, PartialEq)]
    /// #[entity(partition_key = "{department}", row_key = "empid_{id:06}")]
    /// #[entity(unique_index(name = "email", row_key = "email_{email}"))]
    /// pub struct Employee { pub department: String, pub id: u32, pub email: String }
    ///
    /// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
    /// let service = TableServiceClient::in_memory();
    /// let employees = service.table::<Employee>("Employees");
    /// employees.create().await?;
    /// // Written past the client (by other code): no index copy.
    /// let ann = Employee { department: "Sales".into(), id: 7, email: "ann@x.com".into() };
    /// service.engine().write("Employees", &WriteOp::Insert(ann.to_entity()?)).await?;
    ///
    /// let report = employees.repair_indexes().partition("Sales").run().await?;
    /// assert_eq!(report.findings[0].problem, Problem::MissingCopy);
    /// assert_eq!(report.repaired(), 1);
    /// assert!(employees.get_by_index(Employee::email_key("Sales", "ann@x.com")?).await?.is_some());
    /// assert!(employees.verify_indexes().partition("Sales").run().await?.is_clean());
    /// # Ok::<(), tables_client::Error>(())
    /// # }).unwrap();
    /// ```
    pub fn repair_indexes(&self) -> IndexCheck<T> {
        IndexCheck::new(self.clone(), true)
    }
}

impl<T: Row> IndexCheck<T> {
    fn new(table: Table<T>, repair: bool) -> IndexCheck<T> {
        let mut check = IndexCheck {
            table,
            repair,
            index: None,
            partition: None,
            at: CheckToken {
                check: 0,
                step: 0,
                entities: 0,
                rows: 0,
                continuation: None,
            },
            done: false,
        };
        check.at.check = check.fingerprint();
        check
    }

    /// Checks only the index (or index entity) called `name`.
    pub fn index(mut self, name: &str) -> Self {
        self.index = Some(name.to_owned());
        self.at.check = self.fingerprint();
        self
    }

    /// Checks only the entities of partition `partition_key` and their index rows.
    /// Without it a check reads the whole table, which needs
    /// [`crate::ClientOptions::allow_table_scans`]; so does the second pass over an
    /// index kept in another partition or table.
    pub fn partition(mut self, partition_key: &str) -> Self {
        self.partition = Some(partition_key.to_owned());
        self.at.check = self.fingerprint();
        self
    }

    /// Resumes where a page's [`CheckPage::next`] token says.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::InvalidContinuationToken`] when the token belongs to another
    /// check (table, type, index or partition).
    pub fn resume(mut self, token: CheckToken) -> Result<Self> {
        if token.check != self.fingerprint() {
            return Err(Error::new(
                ErrorKind::InvalidContinuationToken,
                "the check token belongs to another check: resume with the same table, type, \
                 index and partition that produced it",
            ));
        }
        self.at = token;
        Ok(self)
    }

    fn fingerprint(&self) -> u64 {
        let mut fingerprint = Fingerprint::new()
            .part(&self.table.name().to_ascii_lowercase())
            .part(self.index.as_deref().unwrap_or(""))
            .part(self.partition.as_deref().unwrap_or("\u{0}"));
        for schema in T::schemas() {
            fingerprint = fingerprint.part(schema.kind);
        }
        fingerprint.finish()
    }

    /// The indexes checked, with their kinds, in a fixed order.
    fn indexes(&self) -> Result<Vec<(&'static str, &'static IndexSchema)>> {
        let all: Vec<(&'static str, &'static IndexSchema)> = T::schemas()
            .into_iter()
            .flat_map(|s| s.indexes.iter().map(move |i| (s.kind, i)))
            .filter(|(_, i)| self.index.as_deref().is_none_or(|n| n == i.name))
            .collect();
        if all.is_empty() {
            let what = match &self.index {
                Some(name) => format!("no index named `{name}`"),
                None => "no index".to_owned(),
            };
            return Err(Error::new(
                ErrorKind::InvalidInput,
                format!(
                    "{} declares {what}: there is nothing to check",
                    std::any::type_name::<T>()
                ),
            ));
        }
        Ok(all)
    }

    /// Checks (and repairs) one page; `Ok(None)` once the check is complete.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::InvalidInput`] when `T` declares no such index;
    /// [`ErrorKind::InvalidQuery`] before anything is read when a pass needs a table
    /// scan the client forbids (the message says which); the engine's errors (the
    /// check then resumes from the last page's token).
    pub async fn next_page(&mut self) -> Result<Option<CheckPage>> {
        if self.done {
            return Ok(None);
        }
        let indexes = self.indexes()?;
        let (spec, phase, index) = if self.at.step == 0 {
            (self.entity_spec()?, CheckPhase::Entities, None)
        } else {
            let (kind, index) = indexes.get(self.at.step - 1).copied().ok_or_else(|| {
                Error::new(
                    ErrorKind::InvalidContinuationToken,
                    "the check token points past the last index: it belongs to a check of \
                     more indexes; resume with the check that produced it",
                )
            })?;
            let phase = CheckPhase::IndexRows {
                index: index.name.to_owned(),
            };
            (self.index_spec(kind, index)?, phase, Some((kind, index)))
        };
        let table = match index {
            Some((_, index)) => index.table.unwrap_or(self.table.name()).to_owned(),
            None => self.table.name().to_owned(),
        };
        let engine = self.table.engine();
        let mut pages = EntityPages::new(table.clone(), spec, self.at.continuation.clone());
        // A fresh cursor always reads a page.
        let items = match pages.next(engine.as_ref()).await? {
            Some(page) => page.items,
            None => Vec::new(),
        };
        let findings = match index {
            None => {
                self.at.entities += items.len() as u64;
                self.check_entities(items, &indexes).await?
            }
            Some((kind, index)) => {
                self.at.rows += items.len() as u64;
                self.check_index_rows(items, kind, index, &table).await?
            }
        };
        match pages.position() {
            Some(next) => self.at.continuation = Some(next.clone()),
            None => {
                self.at.continuation = None;
                self.at.step += 1;
                if self.at.step > indexes.len() {
                    self.done = true;
                }
            }
        }
        Ok(Some(CheckPage {
            findings,
            progress: CheckProgress {
                phase,
                entities_checked: self.at.entities,
                index_rows_checked: self.at.rows,
            },
            next: (!self.done).then(|| self.at.clone()),
        }))
    }

    /// Runs the check to the end.
    ///
    /// # Errors
    ///
    /// As [`IndexCheck::next_page`].
    pub async fn run(mut self) -> Result<CheckReport> {
        let mut report = CheckReport::default();
        while let Some(page) = self.next_page().await? {
            report.findings.extend(page.findings);
            report.entities_checked = page.progress.entities_checked;
            report.index_rows_checked = page.progress.index_rows_checked;
        }
        Ok(report)
    }

    /// The query over the entities of `T`'s kinds.
    fn entity_spec(&self) -> Result<QuerySpec> {
        let kinds = tables_core::model::rows_filter::<T>();
        let filter = match (&self.partition, kinds) {
            (Some(pk), Some(kinds)) => Some(Filter::partition_key(pk.clone()) & kinds),
            (Some(pk), None) => Some(Filter::partition_key(pk.clone())),
            (None, kinds) => {
                self.allow_scan("the entities of every partition")?;
                kinds
            }
        };
        let mut spec = QuerySpec::new();
        spec.filter = filter;
        spec.top = self.table.service().options().page_size;
        Ok(spec)
    }

    /// The query over the rows of `index` (of entity kind `kind`).
    fn index_spec(&self, kind: &str, index: &IndexSchema) -> Result<QuerySpec> {
        let entity_type = match index.kind {
            IndexKind::Copy => index_copy_type(kind, index.name),
            IndexKind::List => index_entry_type(kind, index.name),
        };
        let rows = col(ENTITY_TYPE_PROPERTY).eq(entity_type);
        let filter = match (&self.partition, index.same_partition, index.kind) {
            (Some(pk), true, _) => Filter::partition_key(pk.clone()) & rows,
            (Some(pk), false, IndexKind::Copy) => {
                self.allow_scan(&format!(
                    "every partition of index `{}` for the copies of one partition",
                    index.name
                ))?;
                col(PRIMARY_PARTITION_KEY_PROPERTY).eq(pk.clone()) & rows
            }
            (Some(_), false, IndexKind::List) | (None, _, _) => {
                self.allow_scan(&format!("every row of index `{}`", index.name))?;
                rows
            }
        };
        Ok(self.spec(filter))
    }

    fn spec(&self, filter: Filter) -> QuerySpec {
        let mut spec = QuerySpec::new().filter(filter);
        spec.top = self.table.service().options().page_size;
        spec
    }

    fn allow_scan(&self, what: &str) -> Result<()> {
        if self.table.service().options().allow_table_scans {
            return Ok(());
        }
        Err(Error::new(
            ErrorKind::InvalidQuery,
            format!(
                "checking the indexes of {} reads {what}, a table scan, which this client \
                 forbids (ClientOptions::allow_table_scans); check one index kept in its \
                 entities' partition with .index(..).partition(..), or allow table scans",
                self.table.name()
            ),
        ))
    }

    /// First pass: the rows each entity implies.
    async fn check_entities(
        &self,
        rows: Vec<DynamicEntity>,
        indexes: &[(&'static str, &'static IndexSchema)],
    ) -> Result<Vec<Finding>> {
        // Untagged types can't be told apart on the service: skip the rows that are
        // none of `T`'s (index rows, intents, other kinds).
        let kind_of = Codec::of::<T>().kind_of;
        let lists = PageLists::default();
        let checks = rows
            .into_iter()
            .filter(|row| kind_of(row).is_some())
            .map(|row| self.check_entity(row, indexes, &lists));
        let checked = run_checks(checks).await?;
        let mut findings = Vec::new();
        let mut repairs = Vec::new();
        for (mut found, repair) in checked {
            if let Some(repair) = repair {
                // Repaired below (an error ends the page): every finding but a value
                // another entity holds.
                for finding in &mut found {
                    finding.repaired = finding.problem != Problem::TakenCopy;
                }
                repairs.push(repair);
            }
            findings.extend(found);
        }
        for group in repair_groups(repairs) {
            let partition_key = group[0].partition_key.clone();
            let primaries = group.into_iter().map(|repair| repair.primary).collect();
            self.repair_entities(&partition_key, primaries).await?;
        }
        Ok(findings)
    }

    /// The findings of one entity, and (repairing) what to repair.
    async fn check_entity(
        &self,
        primary: DynamicEntity,
        indexes: &[(&'static str, &'static IndexSchema)],
        lists: &PageLists,
    ) -> Result<(Vec<Finding>, Option<Repair>)> {
        let engine = self.table.engine().as_ref();
        let table = self.table.name();
        let codec = Codec::of::<T>();
        let entity = primary.key();
        let kind = (codec.kind_of)(&primary).unwrap_or_default().to_owned();
        let implied = match (codec.implied)(&primary) {
            Ok(implied) => implied,
            Err(_) => {
                let finding = Finding {
                    problem: Problem::UnreadableEntity,
                    index: String::new(),
                    table: table.to_owned(),
                    key: entity.clone(),
                    entity: Some(entity),
                    repaired: false,
                };
                return Ok((vec![finding], None));
            }
        };
        let wanted = |name: &str| indexes.iter().any(|(k, i)| *k == kind && i.name == name);
        let mut findings = Vec::new();
        let mut repairable = BTreeSet::new();
        let mut implied_rows = BTreeSet::new();
        for (reference, desired) in rows_of(&implied, table, true) {
            if !wanted(&reference.index) {
                continue;
            }
            implied_rows.insert(reference.clone());
            let problem = match &desired {
                Some(copy) => {
                    let stored = engine
                        .get_entity(&reference.table, &reference.key(), None)
                        .await?;
                    let of = IndexOf {
                        kind: &kind,
                        index: &reference.index,
                    };
                    match Holder::of(stored.as_ref(), of, &entity) {
                        Holder::Absent => Some(Problem::MissingCopy),
                        Holder::Mine(row) if row.get(CLAIM_PROPERTY).is_some() => {
                            // A write still in flight claimed it: leave it be.
                            (!self.claim_at_work(row).await?).then_some(Problem::StaleCopy)
                        }
                        Holder::Mine(row) => {
                            (!same_content(row, copy)).then_some(Problem::StaleCopy)
                        }
                        Holder::Other { row, .. }
                            if is_stale_claim(engine, row, of, codec).await? =>
                        {
                            Some(Problem::MissingCopy)
                        }
                        Holder::Other { .. } | Holder::Foreign(_) => Some(Problem::TakenCopy),
                    }
                }
                None => {
                    let member = encode_member(&entity, reference.near);
                    let listed = lists.lists(engine, &reference, &member).await?;
                    (!listed).then_some(Problem::MissingMember)
                }
            };
            if let Some(problem) = problem {
                if problem != Problem::TakenCopy {
                    repairable.insert(reference.clone());
                }
                findings.push(finding(problem, &reference, Some(entity.clone())));
            }
        }
        let repair = (self.repair && !repairable.is_empty()).then(|| {
            // Settling lists every implied row in the intent: its size with them all.
            let all = PrimaryIntent::new(kind.clone(), entity.row_key.clone(), implied_rows);
            Repair {
                intent_bytes: intent_bytes(&all),
                primary: PrimaryIntent::new(kind, entity.row_key.clone(), repairable),
                partition_key: entity.partition_key,
            }
        });
        Ok((findings, repair))
    }

    /// Second pass: whether each index row belongs to an entity that implies it.
    async fn check_index_rows(
        &self,
        rows: Vec<DynamicEntity>,
        kind: &'static str,
        index: &'static IndexSchema,
        table: &str,
    ) -> Result<Vec<Finding>> {
        let checks = rows.into_iter().map(|row| async move {
            match index.kind {
                IndexKind::Copy => self.check_copy(row, kind, index, table).await,
                IndexKind::List => self.check_entry(row, kind, index, table).await,
            }
        });
        let found = run_checks(checks).await?;
        Ok(found.into_iter().flatten().collect())
    }

    async fn check_copy(
        &self,
        row: DynamicEntity,
        kind: &'static str,
        index: &'static IndexSchema,
        table: &str,
    ) -> Result<Vec<Finding>> {
        if row.get(CLAIM_PROPERTY).is_some() && self.claim_at_work(&row).await? {
            return Ok(Vec::new());
        }
        let reference = RowRef {
            index: index.name.to_owned(),
            entry: false,
            table: table.to_owned(),
            pk: row.partition_key.clone(),
            rk: row.row_key.clone(),
            near: index.same_partition,
        };
        let Some(owner) = super::rows::owner_of(&row) else {
            // A row of this index's kind that names no entity: no one's to settle.
            return Ok(vec![
                self.remove_ownerless(Problem::OrphanCopy, &reference, &row)
                    .await,
            ]);
        };
        let engine = self.table.engine().as_ref();
        let primary = engine.get_entity(self.table.name(), &owner, None).await?;
        let implied = match &primary {
            Some(primary) => match (Codec::of::<T>().implied)(primary) {
                Ok(implied) => Some(implied),
                Err(_) => return Ok(Vec::new()), // reported by the first pass
            },
            None => None,
        };
        let desired = implied
            .as_ref()
            .map(|implied| rows_of(implied, self.table.name(), true))
            .and_then(|rows| rows.get(&reference).cloned().flatten());
        let problem = match desired {
            None => Problem::OrphanCopy,
            Some(copy) if !same_content(&row, &copy) => Problem::StaleCopy,
            Some(_) => return Ok(Vec::new()),
        };
        let mut finding = finding(problem, &reference, Some(owner.clone()));
        if self.repair {
            self.repair_entity(&owner, kind, [reference].into()).await?;
            finding.repaired = true;
        }
        Ok(vec![finding])
    }

    async fn check_entry(
        &self,
        row: DynamicEntity,
        kind: &'static str,
        index: &'static IndexSchema,
        table: &str,
    ) -> Result<Vec<Finding>> {
        let reference = RowRef {
            index: index.name.to_owned(),
            entry: true,
            table: table.to_owned(),
            pk: row.partition_key.clone(),
            rk: row.row_key.clone(),
            near: index.same_partition,
        };
        let members = members_of(&row)?;
        if members.is_empty() {
            return Ok(vec![
                self.remove_ownerless(Problem::EmptyIndexEntity, &reference, &row)
                    .await,
            ]);
        }
        let engine = self.table.engine().as_ref();
        let mut findings = Vec::new();
        let mut primaries: HashMap<EntityKey, bool> = HashMap::new();
        for member in &members {
            let entity = member_key(&row.key(), member);
            if let Some(pk) = &self.partition {
                if entity.partition_key != *pk {
                    continue; // another partition's member: not this check's
                }
            }
            let belongs = match primaries.get(&entity) {
                Some(belongs) => *belongs,
                None => {
                    let primary = engine.get_entity(self.table.name(), &entity, None).await?;
                    let belongs = match &primary {
                        Some(primary) => match (Codec::of::<T>().implied)(primary) {
                            Ok(implied) => implied
                                .entries
                                .iter()
                                .any(|e| e.name() == index.name && *e.key() == row.key()),
                            Err(_) => true, // reported by the first pass
                        },
                        None => false,
                    };
                    primaries.insert(entity.clone(), belongs);
                    belongs
                }
            };
            if !belongs {
                let mut finding = finding(Problem::OrphanMember, &reference, Some(entity.clone()));
                if self.repair {
                    self.repair_entity(&entity, kind, [reference.clone()].into())
                        .await?;
                    finding.repaired = true;
                }
                findings.push(finding);
            }
        }
        Ok(findings)
    }

    /// Whether the claim `row` carries belongs to a write still at work.
    /// A finding for an index row that names no entity to settle against; when
    /// repairing, the row is deleted under the version read (a writer that changed
    /// it since wins, and the finding stays unrepaired).
    async fn remove_ownerless(
        &self,
        problem: Problem,
        reference: &RowRef,
        row: &DynamicEntity,
    ) -> Finding {
        let mut finding = finding(problem, reference, None);
        if self.repair {
            let op = WriteOp::Delete {
                key: row.key(),
                if_match: row.etag.clone().map_or(IfMatch::Any, IfMatch::Etag),
            };
            let written = self.table.engine().write(&reference.table, &op).await;
            finding.repaired = written.is_ok();
        }
        finding
    }

    async fn claim_at_work(&self, row: &DynamicEntity) -> Result<bool> {
        let (Some(owner), Some(mark)) = (
            super::rows::owner_of(row),
            row.get(CLAIM_PROPERTY).and_then(tables_core::Value::as_str),
        ) else {
            return Ok(false);
        };
        let Some((table, row_key)) = mark.split_once('/') else {
            return Ok(false);
        };
        let key = EntityKey::new(owner.partition_key, row_key);
        Ok(
            match self.table.engine().get_entity(table, &key, None).await? {
                Some(intent) => matches!(
                    parse_intent(&intent)?.state(),
                    IntentState::Claiming | IntentState::Pending
                ),
                None => false,
            },
        )
    }

    /// Repairs the index rows `rows` of `entity` (of kind `kind`), as
    /// [`Self::repair_entities`] does for a group.
    async fn repair_entity(
        &self,
        entity: &EntityKey,
        kind: &str,
        rows: BTreeSet<RowRef>,
    ) -> Result<()> {
        let primary = PrimaryIntent::new(kind.to_owned(), entity.row_key.clone(), rows);
        self.repair_entities(&entity.partition_key, vec![primary])
            .await
    }

    /// Repairs the index rows of `primaries` (entities of partition
    /// `partition_key`): an intent listing the rows to fix (and, when settled,
    /// every row each entity implies), settled now. The entities settle together,
    /// so an index entity listing many of them is written once, not once per
    /// member.
    async fn repair_entities(
        &self,
        partition_key: &str,
        primaries: Vec<PrimaryIntent>,
    ) -> Result<()> {
        let engine = self.table.engine().as_ref();
        let table = self.table.name();
        let key = new_intent_key(partition_key);
        let doc = IntentDoc::new(IntentState::Pending, true, primaries)
            .only(self.index.as_ref().map(|name| [name.clone()].into()));
        let outcome = engine
            .write(table, &WriteOp::Insert(intent_row(&key, &doc)?))
            .await?;
        let live = LiveIntent::new(key, outcome.etag, doc);
        let codec = Codec::of::<T>();
        let codec_for = |k: &str| super::derives_kind::<T>(k).then_some(codec);
        apply(
            self.table.service(),
            table,
            live,
            &codec_for,
            Finish::Repair,
        )
        .await?;
        Ok(())
    }
}

/// One entity's repair: its primary's entry in the repair's intent.
struct Repair {
    partition_key: String,
    primary: PrimaryIntent,
    /// The entry's size in the intent once it lists every index row the entity
    /// implies (among those checked), as settling makes it.
    intent_bytes: usize,
}

/// The JSON size of `primary`'s entry in an intent.
fn intent_bytes(primary: &PrimaryIntent) -> usize {
    serde_json::to_vec(primary).map_or(usize::MAX, |json| json.len())
}

/// The most bytes of entries one repair intent holds: an intent is one string
/// property (64 KiB, 32,768 UTF-16 units, and a UTF-8 byte count is never below
/// the UTF-16 unit count), kept at half of that so workers can still extend it.
const REPAIR_INTENT_BYTES: usize = 16 * 1024;

/// The repairs of a page, grouped into intents: by partition (an intent lives in
/// its entities' partition), at most a batch's count of entities and
/// [`REPAIR_INTENT_BYTES`] of entries each (an entity over that has one alone).
fn repair_groups(repairs: Vec<Repair>) -> Vec<Vec<Repair>> {
    let mut by_partition: BTreeMap<String, Vec<Repair>> = BTreeMap::new();
    for repair in repairs {
        by_partition
            .entry(repair.partition_key.clone())
            .or_default()
            .push(repair);
    }
    let mut groups: Vec<Vec<Repair>> = Vec::new();
    for repairs in by_partition.into_values() {
        let mut group: Vec<Repair> = Vec::new();
        let mut bytes = 0;
        for repair in repairs {
            let full = group.len() == MAX_BATCH_OPERATIONS
                || (!group.is_empty() && bytes + repair.intent_bytes > REPAIR_INTENT_BYTES);
            if full {
                groups.push(std::mem::take(&mut group));
                bytes = 0;
            }
            bytes += repair.intent_bytes;
            group.push(repair);
        }
        if !group.is_empty() {
            groups.push(group);
        }
    }
    groups
}

fn finding(problem: Problem, reference: &RowRef, entity: Option<EntityKey>) -> Finding {
    Finding {
        problem,
        index: reference.index.clone(),
        table: reference.table.clone(),
        key: reference.key(),
        entity,
        repaired: false,
    }
}

/// The member lists of the index entities one page of the first pass reads, kept
/// for that page. A page's entities mostly share their index entities, and a list
/// may hold thousands of members (in a blob, past one entity's size): read once per
/// entity, the pass was quadratic in a list's length.
///
/// A member found in a kept list counts as listed; one not found is looked for in
/// the list as stored now before it counts as missing, since a write (or this
/// repair) may have added it since the list was kept. So a finding is never based
/// on an older read than without the cache.
#[derive(Default)]
struct PageLists(Mutex<BTreeMap<RowRef, BTreeSet<String>>>);

impl PageLists {
    /// Whether the index entity `reference` lists `member`.
    async fn lists(&self, engine: &dyn Engine, reference: &RowRef, member: &str) -> Result<bool> {
        let in_kept_list = self
            .kept()
            .get(reference)
            .is_some_and(|m| m.contains(member));
        if in_kept_list {
            return Ok(true);
        }
        let stored = engine
            .get_entity(&reference.table, &reference.key(), None)
            .await?;
        let members = match &stored {
            Some(row) => members_of(row)?,
            None => BTreeSet::new(),
        };
        let listed = members.contains(member);
        self.kept().insert(reference.clone(), members);
        Ok(listed)
    }

    fn kept(&self) -> MutexGuard<'_, BTreeMap<RowRef, BTreeSet<String>>> {
        // Only whole lists are ever put in: a poisoned map is still consistent.
        self.0.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// Runs the checks of one page, `CONCURRENCY` at a time, and returns their
/// results in order.
async fn run_checks<F, R>(checks: impl IntoIterator<Item = F>) -> Result<Vec<R>>
where
    F: std::future::Future<Output = Result<R>>,
{
    stream::iter(checks)
        .buffered(CONCURRENCY)
        .try_collect()
        .await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn repairs_group_by_partition_count_and_intent_size() {
        let repair = |partition: &str, row: usize, intent_bytes: usize| Repair {
            partition_key: partition.to_owned(),
            primary: PrimaryIntent::new("Employee".into(), format!("e{row:03}"), BTreeSet::new()),
            intent_bytes,
        };
        let sizes = |groups: &[Vec<Repair>]| -> Vec<(String, usize)> {
            groups
                .iter()
                .map(|g| (g[0].partition_key.clone(), g.len()))
                .collect()
        };
        // 250 small entities of one partition and 3 of another: batches of 100.
        let mut repairs: Vec<Repair> = (0..250).map(|i| repair("a", i, 100)).collect();
        repairs.extend((0..3).map(|i| repair("b", i, 100)));
        let groups = repair_groups(repairs);
        let expected = [("a", 100), ("a", 100), ("a", 50), ("b", 3)];
        let expected: Vec<(String, usize)> = expected
            .iter()
            .map(|(p, n)| ((*p).to_owned(), *n))
            .collect();
        assert_eq!(sizes(&groups), expected);
        // Large entries: as many as the intent's budget holds; one over it alone.
        let third = REPAIR_INTENT_BYTES / 3;
        let repairs = vec![
            repair("a", 0, third),
            repair("a", 1, third),
            repair("a", 2, third),
            repair("a", 3, third + 1),
            repair("a", 4, REPAIR_INTENT_BYTES * 2),
            repair("a", 5, 10),
        ];
        let groups = repair_groups(repairs);
        let expected: Vec<(String, usize)> =
            [3, 1, 1, 1].iter().map(|n| ("a".to_owned(), *n)).collect();
        assert_eq!(sizes(&groups), expected);
    }

    #[test]
    fn tokens_round_trip_and_refuse_garbage() {
        let token = CheckToken {
            check: 0xab,
            step: 2,
            entities: 40,
            rows: 7,
            continuation: Some("ct1.U2FsZXM.ZW1waWRfMDAwMjIz".parse().unwrap()),
        };
        let text = token.to_string();
        assert_eq!(
            text,
            "ix1.00000000000000ab.2.40.7.ct1.U2FsZXM.ZW1waWRfMDAwMjIz"
        );
        assert_eq!(text.parse::<CheckToken>().unwrap(), token);
        let end = CheckToken {
            continuation: None,
            ..token
        };
        assert_eq!(end.to_string().parse::<CheckToken>().unwrap(), end);
        for bad in [
            "",
            "ix1",
            "ix2.00000000000000ab.0.0.0.-",
            "ix1.xyz.0.0.0.-",
            "ix1.00000000000000ab.a.0.0.-",
            "ix1.00000000000000ab.0.0.0",
        ] {
            let err = bad.parse::<CheckToken>().unwrap_err();
            assert_eq!(err.kind(), ErrorKind::InvalidContinuationToken, "{bad}");
        }
    }
}
