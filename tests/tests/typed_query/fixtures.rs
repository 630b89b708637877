//! Fixtures of the typed query tests: the entity types, a seeded table (with index
//! copies, an index entry, an intent row and a row of an unknown kind, written by hand
//! through the engine) and an engine wrapper that records queries.

use std::sync::{Arc, Mutex};

use tables_client::model::index_entry_type;
use tables_client::{
    ClientOptions, ContinuationToken, DynamicEntity, Engine, Entity, EntityUnion, ErrorKind, Page,
    QuerySpec, Result, Row, TableServiceClient, WriteOp,
};
use tables_tests::{Forward, Forwarding};
use uuid::Uuid;

#[derive(Entity, Debug, Clone, PartialEq)]
#[entity(kind = "Employee", version = 1, rename_all = "PascalCase")]
#[entity(partition_key = "{department}", row_key = "empid_{employee_id:06}")]
#[entity(unique_index(name = "email", row_key = "email_{email}"))]
#[entity(unique_index(
    name = "by_email",
    table = "QueryEmployeesByEmail",
    partition_key = "email_{department}",
    row_key = "{email}",
    include(first_name, last_name)
))]
#[entity(index_entity(name = "last_name", row_key = "lastname_{last_name}"))]
pub(crate) struct Employee {
    pub(crate) department: String,
    pub(crate) employee_id: u32,
    pub(crate) first_name: String,
    pub(crate) last_name: String,
    pub(crate) age: i32,
    pub(crate) email: String,
}

/// A projection of `Employee`: same kind and keys, two of its properties.
#[derive(Entity, Debug, Clone, PartialEq)]
#[entity(kind = "Employee", version = 1, rename_all = "PascalCase")]
#[entity(partition_key = "{department}", row_key = "empid_{employee_id:06}")]
pub(crate) struct EmployeeName {
    pub(crate) department: String,
    pub(crate) employee_id: u32,
    pub(crate) first_name: String,
    pub(crate) last_name: String,
}

#[derive(Entity, Debug, Clone, PartialEq)]
#[entity(kind = "Department", partition_key = "{name}", row_key = "department")]
#[entity(rename_all = "PascalCase")]
pub(crate) struct Department {
    pub(crate) name: String,
    pub(crate) employee_count: i32,
}

/// Every row of a partition: the known kinds, and a catch-all for the rest.
#[derive(EntityUnion, Debug, Clone, PartialEq)]
pub(crate) enum SalesPartition {
    Employee(Employee),
    Department(Department),
    #[entity(other)]
    Other(DynamicEntity),
}

/// The known kinds only.
#[derive(EntityUnion, Debug, Clone, PartialEq)]
pub(crate) enum Staff {
    Employee(Employee),
    Department(Department),
}

pub(crate) const SALES: [(u32, i32); 8] = [
    (90, 25),
    (100, 31),
    (120, 45),
    (150, 29),
    (199, 52),
    (200, 38),
    (250, 33),
    (300, 60),
];

pub(crate) fn employee(department: &str, employee_id: u32, age: i32) -> Employee {
    let last_name = ["Jones", "Smith", "Brown"][employee_id as usize % 3];
    Employee {
        department: department.into(),
        employee_id,
        first_name: format!("First{employee_id}"),
        last_name: last_name.into(),
        age,
        email: format!("e{employee_id}@{}.example", department.to_lowercase()),
    }
}

pub(crate) fn unique(prefix: &str) -> String {
    format!("{prefix}{}", Uuid::new_v4().simple())
}

/// Writes `value` as the typed writes do: the primary with its same-partition copies
/// in one batch, then its copies in other partitions and tables.
pub(crate) async fn put<T: Row>(engine: &dyn Engine, table: &str, value: &T) -> Result<()> {
    let primary = value.to_entity()?;
    let copies = value.index_copies(&primary)?;
    let mut batch = vec![WriteOp::Insert(primary)];
    let mut elsewhere = Vec::new();
    for copy in copies {
        if copy.same_partition() {
            batch.push(WriteOp::Insert(copy.into_entity()));
        } else {
            elsewhere.push(copy);
        }
    }
    engine.submit_batch(table, &batch).await?;
    for copy in elsewhere {
        let copy_table = copy.table().unwrap_or(table);
        engine
            .write(copy_table, &WriteOp::UpsertReplace(copy.into_entity()))
            .await?;
    }
    Ok(())
}

/// A table of employees in Sales (with a department row, an index entry, an intent
/// row and a row of an unknown kind), Dev and Ops. Returns its name and the
/// employees in key order.
pub(crate) async fn seed(service: &TableServiceClient) -> Result<(String, Vec<Employee>)> {
    let table = unique("Emp");
    service.create_table(&table).await?;
    service
        .create_table_if_not_exists("QueryEmployeesByEmail")
        .await?;
    let engine = service.engine().as_ref();
    let mut all = Vec::new();
    for (id, age) in SALES {
        all.push(employee("Sales", id, age));
    }
    for id in [100, 101, 102] {
        all.push(employee("Dev", id, 40));
    }
    all.push(employee("Ops", 7, 50));
    for e in &all {
        put(engine, &table, e).await?;
    }
    let department = Department {
        name: "Sales".into(),
        employee_count: 8,
    };
    put(engine, &table, &department).await?;
    let others = [
        DynamicEntity::new("Sales", "lastname_Jones")
            .with("EntityType", index_entry_type("Employee", "last_name"))
            .with("Members", r#"["empid_000090","empid_000150"]"#),
        DynamicEntity::new("Sales", "$intent_0001")
            .with("EntityType", "$intent")
            .with("PrimaryRowKey", "empid_000100"),
        DynamicEntity::new("Sales", "zz_note")
            .with("EntityType", "Note")
            .with("EntityVersion", 1),
    ];
    for row in others {
        engine.write(&table, &WriteOp::Insert(row)).await?;
    }
    all.sort_by_key(|e| e.entity_key().unwrap());
    Ok((table, all))
}

pub(crate) fn in_department<'a>(all: &'a [Employee], department: &str) -> Vec<&'a Employee> {
    all.iter().filter(|e| e.department == department).collect()
}

/// What an engine was asked and what it answered.
#[derive(Debug, Clone)]
pub(crate) struct Recorded {
    pub(crate) spec: QuerySpec,
    /// The property names of each row returned.
    pub(crate) rows: Vec<Vec<String>>,
}

/// An engine that records queries (and can fail the n-th one), over any engine.
#[derive(Debug)]
pub(crate) struct Recording {
    inner: Arc<dyn Engine>,
    queries: Mutex<Vec<Recorded>>,
    fail_query: Option<usize>,
}

impl Recording {
    pub(crate) fn over(
        service: &TableServiceClient,
        fail_query: Option<usize>,
    ) -> Arc<Forwarding<Recording>> {
        Arc::new(Forwarding(Recording {
            inner: Arc::clone(service.engine()),
            queries: Mutex::new(Vec::new()),
            fail_query,
        }))
    }

    pub(crate) fn queries(&self) -> Vec<Recorded> {
        self.queries.lock().unwrap().clone()
    }

    pub(crate) fn count(&self) -> usize {
        self.queries.lock().unwrap().len()
    }
}

/// A client over a recording engine.
pub(crate) trait RecordingClient {
    /// A client with `options` whose engine is the recording.
    fn client(&self, options: ClientOptions) -> TableServiceClient;
}

impl RecordingClient for Arc<Forwarding<Recording>> {
    fn client(&self, options: ClientOptions) -> TableServiceClient {
        TableServiceClient::with_options(Arc::clone(self) as Arc<dyn Engine>, options)
    }
}

#[async_trait::async_trait]
impl Forward for Recording {
    fn inner(&self) -> &dyn Engine {
        &*self.inner
    }

    async fn query(
        &self,
        table: &str,
        spec: &QuerySpec,
        continuation: Option<&ContinuationToken>,
    ) -> Result<Page<DynamicEntity>> {
        let n = {
            let mut queries = self.queries.lock().unwrap();
            queries.push(Recorded {
                spec: spec.clone(),
                rows: Vec::new(),
            });
            queries.len()
        };
        if self.fail_query == Some(n) {
            return Err(tables_client::Error::new(ErrorKind::Server, "injected"));
        }
        let page = self.inner.query(table, spec, continuation).await?;
        let rows = page
            .items
            .iter()
            .map(|row| row.properties().map(|(name, _)| name.to_owned()).collect())
            .collect();
        self.queries.lock().unwrap()[n - 1].rows = rows;
        Ok(page)
    }
}
