//! Shared by `typed_writes.rs` and `typed_upkeep_faults.rs`: the entities, the
//! index checker (do the index rows equal exactly what the primaries imply?), and
//! an engine wrapper that records calls and can fail single writes.

#![allow(dead_code)] // each test file uses part of it

use std::collections::{BTreeMap, BTreeSet};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use tables_client::mem::{FaultInjector, MemEngine};
use tables_client::model::{row_role, RowRole};
use tables_client::remote::RemoteEngine;
use tables_client::PrefixedEngine;
use tables_client::{
    ContinuationToken, DynamicEntity, Engine, Entity, EntityKey, Error, ErrorKind,
    ListTablesOptions, Page, QuerySpec, Result, Row, TablePage, TableServiceClient, Value, WriteOp,
    WriteOutcome,
};
use tables_tests::read::all_rows;

/// The table of the primaries.
pub(crate) const STAFF: &str = "Staff";
/// The table of the partial `by_email` copies.
pub(crate) const BY_EMAIL: &str = "EmployeesByEmail";
/// The table of the `by_city` index entities.
pub(crate) const BY_CITY: &str = "EmployeesByCity";

/// An employee with every kind of index:
/// - `email`: a full copy in the primary's partition (same EGT);
/// - `by_email`: a partial copy in another table (eventual);
/// - `by_badge`: a full copy in another partition of the same table (eventual);
/// - `last_name`: an index entity in the primary's partition (same EGT);
/// - `by_city`: an index entity in another table (eventual).
#[derive(Entity, Debug, Clone, PartialEq)]
#[entity(kind = "Employee", rename_all = "PascalCase")]
#[entity(partition_key = "{department}", row_key = "empid_{employee_id:06}")]
#[entity(unique_index(name = "email", row_key = "email_{email}"))]
#[entity(unique_index(
    name = "by_email",
    table = "EmployeesByEmail",
    partition_key = "email_{department}",
    row_key = "{email}",
    include(first_name, last_name)
))]
#[entity(unique_index(name = "by_badge", partition_key = "badges", row_key = "badge_{badge}"))]
#[entity(index_entity(name = "last_name", row_key = "lastname_{last_name}"))]
#[entity(index_entity(
    name = "by_city",
    table = "EmployeesByCity",
    partition_key = "{city}",
    row_key = "members"
))]
pub(crate) struct Employee {
    pub(crate) department: String,
    pub(crate) employee_id: u32,
    pub(crate) first_name: String,
    pub(crate) last_name: String,
    pub(crate) email: String,
    pub(crate) badge: String,
    pub(crate) city: String,
    pub(crate) age: i32,
    pub(crate) nickname: Option<String>,
}

/// An employee indexed only in its own partition: every write is one EGT.
#[derive(Entity, Debug, Clone, PartialEq)]
#[entity(kind = "Clerk", rename_all = "PascalCase")]
#[entity(partition_key = "{department}", row_key = "clerk_{id:06}")]
#[entity(unique_index(name = "email", row_key = "email_{email}"))]
#[entity(unique_index(name = "desk", row_key = "desk_{desk}"))]
#[entity(index_entity(name = "team", row_key = "team_{team}"))]
pub(crate) struct Clerk {
    pub(crate) department: String,
    pub(crate) id: u32,
    pub(crate) email: String,
    pub(crate) desk: String,
    pub(crate) team: String,
}

/// No index at all.
#[derive(Entity, Debug, Clone, PartialEq)]
#[entity(kind = "Department", rename_all = "PascalCase")]
#[entity(partition_key = "{name}", row_key = "department")]
pub(crate) struct Department {
    pub(crate) name: String,
    pub(crate) employee_count: i32,
}

/// An employee numbered `id`, with indexed values derived from `version`
/// (unique per employee, so copy indexes never collide).
pub(crate) fn employee(department: &str, id: u32, version: u32) -> Employee {
    Employee {
        department: department.into(),
        employee_id: id,
        first_name: format!("First{id}"),
        last_name: ["Jones", "Smith", "Lee"][(version % 3) as usize].into(),
        email: format!("e{id}v{version}@contoso.com"),
        badge: format!("b{id}v{version}"),
        city: ["Oslo", "Rome"][(version % 2) as usize].into(),
        age: 30 + (version % 20) as i32,
        nickname: (version % 2 != 1).then(|| format!("nick{version}")),
    }
}

/// Creates the primary table and every index table.
pub(crate) async fn create_tables(service: &TableServiceClient) -> Result<()> {
    service
        .table::<Employee>(STAFF)
        .create_if_not_exists()
        .await?;
    Ok(())
}

/// The tables `T`'s index rows may live in, besides `table`.
fn tables_of<T: Row>(table: &str) -> Vec<String> {
    let mut tables = vec![table.to_owned()];
    for schema in T::schemas() {
        for index in schema.indexes {
            if let Some(t) = index.table {
                if !tables.iter().any(|x| x == t) {
                    tables.push(t.to_owned());
                }
            }
        }
    }
    tables
}

/// A row's properties, by name.
fn properties(row: &DynamicEntity) -> BTreeMap<String, Value> {
    row.properties()
        .map(|(n, v)| (n.to_owned(), v.clone()))
        .collect()
}

type Located = (String, EntityKey);

/// What the index tables hold, or should hold.
#[derive(Debug, Default, PartialEq)]
pub(crate) struct IndexState {
    /// Copies by (table, key): their properties.
    pub(crate) copies: BTreeMap<Located, BTreeMap<String, Value>>,
    /// Index entities by (table, key): their members, sorted.
    pub(crate) entries: BTreeMap<Located, Vec<String>>,
}

/// Checks that the index rows of `T` in `table` (and its index tables) are exactly
/// those its primaries imply: no orphan, no missing copy, no stale content, no
/// duplicate member, no intent left. Returns the primaries.
pub(crate) async fn check<T: Row>(engine: &dyn Engine, table: &str) -> Result<Vec<DynamicEntity>> {
    let mut primaries = Vec::new();
    let mut actual = IndexState::default();
    for name in tables_of::<T>(table) {
        for row in all_rows(engine, &name).await? {
            let located = (name.clone(), row.key());
            match row_role(&row) {
                RowRole::Primary { .. } if name == table => primaries.push(row),
                RowRole::IndexCopy { .. } => {
                    actual.copies.insert(located, properties(&row));
                }
                RowRole::IndexEntry { .. } => {
                    let list = row.get("Members").and_then(Value::as_str).unwrap_or("[]");
                    let members: Vec<String> = serde_json::from_str(list).expect("Members is JSON");
                    let unique: BTreeSet<_> = members.iter().collect();
                    assert_eq!(
                        unique.len(),
                        members.len(),
                        "duplicate member in {located:?}"
                    );
                    assert!(
                        !members.is_empty(),
                        "empty index entity left at {located:?}"
                    );
                    actual.entries.insert(located, members);
                }
                // A finished intent kept for a while (see ClientOptions::intent_retention).
                RowRole::System(_) if name == table && is_tombstone(&row) => {}
                role => panic!(
                    "unexpected row {located:?} ({role:?}) after reconcile: {:?}",
                    row.get("Intent")
                ),
            }
        }
    }
    let mut expected = IndexState::default();
    for primary in &primaries {
        let value = T::from_entity(primary.clone())?;
        for copy in value.index_copies(primary)? {
            let located = (copy.table().unwrap_or(table).to_owned(), copy.key());
            let previous = expected
                .copies
                .insert(located.clone(), properties(copy.entity()));
            assert!(
                previous.is_none(),
                "two primaries imply the copy {located:?}"
            );
        }
        for entry in value.index_entries()? {
            let located = (
                entry.table().unwrap_or(table).to_owned(),
                entry.key().clone(),
            );
            let member = entry.member();
            let encoded = if entry.same_partition() {
                member.row_key.clone()
            } else {
                format!("{}\u{1f}{}", member.partition_key, member.row_key)
            };
            expected.entries.entry(located).or_default().push(encoded);
        }
    }
    for members in expected.entries.values_mut() {
        members.sort();
    }
    let missing: Vec<_> = expected
        .copies
        .keys()
        .filter(|k| !actual.copies.contains_key(*k))
        .collect();
    let orphans: Vec<_> = actual
        .copies
        .keys()
        .filter(|k| !expected.copies.contains_key(*k))
        .collect();
    assert!(
        missing.is_empty() && orphans.is_empty(),
        "missing copies {missing:?}, orphan copies {orphans:?}"
    );
    assert_eq!(
        actual, expected,
        "index rows differ from what the primaries imply"
    );
    Ok(primaries)
}

/// Whether `row` is an intent's tombstone: finished (`done`) or fenced (`aborted`),
/// with nothing left to do.
pub(crate) fn is_tombstone(row: &DynamicEntity) -> bool {
    let Some(text) = row.get("Intent").and_then(Value::as_str) else {
        return false;
    };
    let doc: serde_json::Value = serde_json::from_str(text).expect("Intent is JSON");
    let state = doc.get("state").and_then(serde_json::Value::as_str);
    let empty = doc
        .get("primaries")
        .and_then(serde_json::Value::as_array)
        .is_none_or(Vec::is_empty);
    matches!(state, Some("done" | "aborted")) && empty
}

/// Intent rows in `table` with work left (tombstones don't count).
pub(crate) async fn intents(engine: &dyn Engine, table: &str) -> Result<usize> {
    Ok(all_rows(engine, table)
        .await?
        .iter()
        .filter(|r| matches!(row_role(r), RowRole::System(_)) && !is_tombstone(r))
        .count())
}

/// One engine call, as the recorder saw it.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Call {
    Get(String, EntityKey),
    Query(String),
    Write(String, WriteOp),
    Batch(String, Vec<WriteOp>),
    Other,
}

/// Wraps any engine: records every call, and, once armed with
/// [`Recorder::fail_writes_after_commit`], fails every single write that follows a
/// transaction, as a process dying right after its transaction commits.
#[derive(Debug, Clone)]
pub(crate) struct Recorder {
    inner: Arc<dyn Engine>,
    calls: Arc<Mutex<Vec<Call>>>,
    fail_writes: Arc<AtomicBool>,
    committed: Arc<AtomicBool>,
}

impl Recorder {
    pub(crate) fn new(inner: Arc<dyn Engine>) -> Recorder {
        Recorder {
            inner,
            calls: Arc::default(),
            fail_writes: Arc::default(),
            committed: Arc::default(),
        }
    }

    /// A client over a recorder wrapping `service`'s engine, with its options.
    pub(crate) fn wrap(service: &TableServiceClient) -> (TableServiceClient, Recorder) {
        let recorder = Recorder::new(Arc::clone(service.engine()));
        let client =
            TableServiceClient::with_options(Arc::new(recorder.clone()), service.options().clone());
        (client, recorder)
    }

    pub(crate) fn take(&self) -> Vec<Call> {
        std::mem::take(&mut *self.calls.lock().unwrap())
    }

    pub(crate) fn fail_writes_after_commit(&self, fail: bool) {
        self.committed.store(false, Ordering::SeqCst);
        self.fail_writes.store(fail, Ordering::SeqCst);
    }

    fn record(&self, call: Call) {
        self.calls.lock().unwrap().push(call);
    }
}

#[async_trait]
impl Engine for Recorder {
    async fn create_table(&self, table: &str) -> Result<()> {
        self.record(Call::Other);
        self.inner.create_table(table).await
    }

    async fn delete_table(&self, table: &str) -> Result<()> {
        self.record(Call::Other);
        self.inner.delete_table(table).await
    }

    async fn list_tables(&self, options: &ListTablesOptions) -> Result<TablePage> {
        self.record(Call::Other);
        self.inner.list_tables(options).await
    }

    async fn get_entity(
        &self,
        table: &str,
        key: &EntityKey,
        select: Option<&[String]>,
    ) -> Result<Option<DynamicEntity>> {
        self.record(Call::Get(table.to_owned(), key.clone()));
        self.inner.get_entity(table, key, select).await
    }

    async fn query(
        &self,
        table: &str,
        spec: &QuerySpec,
        continuation: Option<&ContinuationToken>,
    ) -> Result<Page<DynamicEntity>> {
        self.record(Call::Query(table.to_owned()));
        self.inner.query(table, spec, continuation).await
    }

    async fn write(&self, table: &str, op: &WriteOp) -> Result<WriteOutcome> {
        self.record(Call::Write(table.to_owned(), op.clone()));
        if self.fail_writes.load(Ordering::SeqCst) && self.committed.load(Ordering::SeqCst) {
            return Err(Error::new(ErrorKind::Transport, "simulated crash"));
        }
        self.inner.write(table, op).await
    }

    async fn submit_batch(&self, table: &str, ops: &[WriteOp]) -> Result<Vec<WriteOutcome>> {
        self.record(Call::Batch(table.to_owned(), ops.to_vec()));
        let outcome = self.inner.submit_batch(table, ops).await;
        self.committed.store(outcome.is_ok(), Ordering::SeqCst);
        outcome
    }
}

/// Where a test runs.
#[derive(Debug, Clone)]
pub(crate) enum Backend {
    /// A fresh in-memory engine per fixture.
    Mem,
    /// The run's Azurite (its account URL), a fresh table prefix per fixture.
    Azurite(String),
}

impl Backend {
    /// The run's Azurite, or `None` after a loud SKIPPED line (a failure under CI).
    pub(crate) fn azurite(test: &str) -> Option<Backend> {
        tables_tests::azurite::url_or_skip(test).map(Backend::Azurite)
    }

    /// Empty tables behind a fault injector, and a client over it.
    pub(crate) fn fresh(&self) -> Fixture {
        let (base, scratch): (Arc<dyn Engine>, _) = match self {
            Backend::Mem => (Arc::new(MemEngine::new()), None),
            Backend::Azurite(url) => {
                let scratch = Arc::new(PrefixedEngine::unique(tables_tests::azurite::engine(url)));
                (Arc::clone(&scratch) as Arc<dyn Engine>, Some(scratch))
            }
        };
        let engine = FaultInjector::new(base);
        let service = TableServiceClient::new(engine.clone());
        Fixture {
            engine,
            service,
            scratch,
        }
    }
}

/// One test's engine (faults in front), client, and the tables to drop afterwards.
pub(crate) struct Fixture {
    pub(crate) engine: FaultInjector<Arc<dyn Engine>>,
    pub(crate) service: TableServiceClient,
    scratch: Option<Arc<PrefixedEngine<RemoteEngine>>>,
}

impl Fixture {
    /// Drops the fixture's tables on a shared endpoint (nothing to do in memory).
    pub(crate) async fn drop_tables(self) {
        if let Some(scratch) = self.scratch {
            scratch.delete_all_tables().await.unwrap();
        }
    }
}

/// One test per scenario and backend: `mem::<name>` and `azurite::<name>`.
#[allow(unused_macros)] // each test file uses part of it
macro_rules! on_every_backend {
    ($(#[$runtime:meta] $name:ident),* $(,)?) => {
        mod mem {
            $(
                #[$runtime]
                async fn $name() {
                    super::$name($crate::support::Backend::Mem).await;
                }
            )*
        }
        mod azurite {
            $(
                #[$runtime]
                async fn $name() {
                    let test = concat!(module_path!(), "::", stringify!($name));
                    if let Some(backend) = $crate::support::Backend::azurite(test) {
                        super::$name(backend).await;
                    }
                }
            )*
        }
    };
}
#[allow(unused_imports)]
pub(crate) use on_every_backend;
