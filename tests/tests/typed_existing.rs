//! Derived types over tables another program wrote: rows with no `EntityType`,
//! types told apart by a column of the user's choice or by a RowKey prefix,
//! unions dispatching on either, enums stored as Int32 (as .NET stores them), and a
//! catch-all field that keeps every column the struct doesn't name through a
//! read-modify-write. The rows are shaped as the official JS SDK writes them (no
//! discriminator; Int32, Int64, Double, DateTime, Guid and Binary columns). On every
//! engine of the typed matrix ([`tables_tests::typed_matrix!`]).

#![allow(clippy::unwrap_used, missing_docs)] // tests

use std::collections::BTreeMap;

use tables_client::{
    DateTime, DynamicEntity, Engine, Entity, EntityKey, EntityUnion, ErrorKind, IfMatch, Key,
    Property, Value, WriteOp,
};
use tables_tests::read::all_rows;
use tables_tests::typed::{Backend, Fixture};

const TABLE: &str = "Existing";

/// How .NET stores an enum: its number, an Int32.
#[derive(Property, Debug, Clone, Copy, PartialEq, Eq)]
#[entity(int)]
pub enum Role {
    Staff,
    Manager,
    Director = 2,
}

/// The guide's employees, marked by their RowKey prefix (`EMPLOYEE_000100`).
#[derive(Entity, Debug, Clone, PartialEq)]
#[entity(kind = "Employee", tag(row_key_prefix), rename_all = "PascalCase")]
#[entity(partition_key = "{department}", row_key = "EMPLOYEE_{employee_id:06}")]
pub struct Employee {
    pub department: String,
    pub employee_id: u32,
    pub first_name: String,
    pub last_name: String,
    pub age: i32,
    pub role: Role,
    pub hire_date: DateTime,
    pub salary: i64,
    pub active: bool,
    pub email: String,
    /// Every column this struct doesn't name: kept through read-modify-write.
    #[entity(other_properties)]
    pub other: BTreeMap<String, Value>,
}

/// The same rows marked by their existing `Type` column instead.
#[derive(Entity, Debug, Clone, PartialEq)]
#[entity(kind = "EmployeeByType", tag(property = "Type", value = "Employee"))]
#[entity(rename_all = "PascalCase")]
#[entity(partition_key = "{department}", row_key = "{row_key}")]
pub struct EmployeeByType {
    pub department: String,
    pub row_key: String,
    pub first_name: String,
    #[entity(other_properties)]
    pub other: BTreeMap<String, Value>,
}

/// Departments, marked by their `Type` column.
#[derive(Entity, Debug, Clone, PartialEq)]
#[entity(kind = "Department", tag(property = "Type", value = "Department"))]
#[entity(rename_all = "PascalCase")]
#[entity(partition_key = "{name}", row_key = "DEPARTMENT")]
pub struct Department {
    pub name: String,
    pub budget: f64,
    pub employee_count: i32,
    #[entity(other_properties)]
    pub other: BTreeMap<String, Value>,
}

/// Departments by the guide's other mark: the RowKey.
#[derive(Entity, Debug, Clone, PartialEq)]
#[entity(
    kind = "DepartmentByKey",
    tag(row_key_prefix),
    rename_all = "PascalCase"
)]
#[entity(partition_key = "{name}", row_key = "DEPARTMENT")]
pub struct DepartmentByKey {
    pub name: String,
    pub budget: f64,
}

/// One partition's rows, dispatched by RowKey prefix.
#[derive(EntityUnion, Debug, Clone, PartialEq)]
pub enum ByPrefix {
    Employee(Employee),
    Department(DepartmentByKey),
}

/// The same rows, dispatched by the `Type` column.
#[derive(EntityUnion, Debug, Clone, PartialEq)]
pub enum ByType {
    Employee(EmployeeByType),
    Department(Department),
}

/// Any row of a table with one type and no mark at all.
#[derive(Entity, Debug, Clone, PartialEq)]
#[entity(kind = "Person", untagged, rename_all = "PascalCase")]
#[entity(partition_key = "{department}", row_key = "{row_key}")]
pub struct Person {
    pub department: String,
    pub row_key: String,
    pub first_name: String,
    #[entity(default)]
    pub nickname: Option<String>,
}

fn datetime(text: &str) -> DateTime {
    text.parse().unwrap()
}

/// The rows as the JS SDK writes them: plain JS values (integers become Int32,
/// other numbers Double, `Date` DateTime, `Uint8Array` Binary), Int64 and Guid
/// spelled out, and no discriminator.
fn js_rows() -> Vec<DynamicEntity> {
    vec![
        DynamicEntity::new("Sales", "DEPARTMENT")
            .with("Type", "Department")
            .with("Name", "Sales")
            .with("Budget", 1_250_000.5)
            .with("EmployeeCount", 2)
            .with("FloorPlan", Value::Binary(vec![1, 2, 3, 4])),
        DynamicEntity::new("Sales", "EMPLOYEE_000100")
            .with("Type", "Employee")
            .with("FirstName", "Ann")
            .with("LastName", "Jones")
            .with("Age", 34)
            .with("Role", 1)
            .with("HireDate", datetime("2019-04-01T09:00:00Z"))
            .with("Salary", Value::Int64(95_000))
            .with("Active", true)
            .with("Email", "ann@contoso.com")
            .with("Notes", "written by the JS SDK")
            .with(
                "Id",
                Value::Guid("3f0e1a6c-8f4e-4a3b-9a53-1c2d3e4f5a6b".parse().unwrap()),
            ),
        DynamicEntity::new("Sales", "EMPLOYEE_000150")
            .with("Type", "Employee")
            .with("FirstName", "Bob")
            .with("LastName", "Smith")
            .with("Age", 41)
            .with("Role", 0)
            .with("HireDate", datetime("2021-10-15T00:00:00Z"))
            .with("Salary", Value::Int64(72_000))
            .with("Active", false)
            .with("Email", "bob@contoso.com")
            .with("Nickname", "Bobby"),
        DynamicEntity::new("Support", "EMPLOYEE_000200")
            .with("Type", "Employee")
            .with("FirstName", "Cy")
            .with("LastName", "Young")
            .with("Age", 29)
            .with("Role", 2)
            .with("HireDate", datetime("2022-01-03T08:30:00Z"))
            .with("Salary", Value::Int64(88_000))
            .with("Active", true)
            .with("Email", "cy@contoso.com"),
        DynamicEntity::new("Support", "DEPARTMENT")
            .with("Type", "Department")
            .with("Name", "Support")
            .with("Budget", 400_000.0)
            .with("EmployeeCount", 1),
    ]
}

async fn seeded(backend: &Backend) -> Fixture {
    let fixture = backend.fresh();
    fixture.service.create_table(TABLE).await.unwrap();
    for row in js_rows() {
        fixture
            .engine
            .write(TABLE, &WriteOp::Insert(row))
            .await
            .unwrap();
    }
    fixture
}

/// The stored row at `pk`/`rk`, without its version.
async fn raw(fixture: &Fixture, pk: &str, rk: &str) -> DynamicEntity {
    let key = tables_client::EntityKey::new(pk, rk);
    let mut row = fixture
        .engine
        .get_entity(TABLE, &key, None)
        .await
        .unwrap()
        .unwrap();
    row.etag = None;
    row.timestamp = None;
    row
}

/// Rows of another SDK read by RowKey prefix and by `Type` column, point reads and
/// queries; queries for one type never return the other.
async fn rows_of_another_sdk_read_by_prefix_and_by_column(backend: Backend) {
    let fixture = seeded(&backend).await;
    let service = &fixture.service;

    let employees = service.table::<Employee>(TABLE);
    let ann = employees
        .get(Employee::key("Sales", 100).unwrap())
        .await
        .unwrap()
        .unwrap()
        .value;
    assert_eq!(ann.first_name, "Ann");
    assert_eq!(
        ann.role,
        Role::Manager,
        "an Int32 enum reads as .NET wrote it"
    );
    assert_eq!(ann.salary, 95_000);
    assert_eq!(ann.hire_date, datetime("2019-04-01T09:00:00Z"));
    assert_eq!(
        ann.other.keys().collect::<Vec<_>>(),
        ["Id", "Notes", "Type"],
        "the columns the struct doesn't name are kept, and only those"
    );

    let sales: Vec<Employee> = employees
        .query()
        .partition("Sales")
        .collect()
        .await
        .unwrap();
    assert_eq!(
        sales.iter().map(|e| e.employee_id).collect::<Vec<_>>(),
        [100, 150],
        "the department row is not an employee"
    );

    let by_type: Vec<EmployeeByType> = service
        .table::<EmployeeByType>(TABLE)
        .query()
        .partition("Support")
        .collect()
        .await
        .unwrap();
    assert_eq!(by_type.len(), 1);
    assert_eq!(by_type[0].row_key, "EMPLOYEE_000200");

    let departments: Vec<Department> = service
        .table::<Department>(TABLE)
        .query()
        .partition("Support")
        .collect()
        .await
        .unwrap();
    assert_eq!(departments.len(), 1);
    assert_eq!(departments[0].budget, 400_000.0);

    // A row of the other type is refused by a point read, saying how it is marked.
    let err = service
        .table::<Department>(TABLE)
        .get(Key::from_entity_key(EntityKey::new(
            "Sales",
            "EMPLOYEE_000100",
        )))
        .await
        .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Decode);
    assert!(err.message().contains("Type = \"Department\""), "{err}");
    fixture.drop_tables().await;
}

/// Unions dispatch by RowKey prefix or by a column, in one query per partition.
async fn unions_dispatch_by_prefix_and_by_column(backend: Backend) {
    let fixture = seeded(&backend).await;
    let service = &fixture.service;

    let by_prefix: Vec<ByPrefix> = service
        .table::<ByPrefix>(TABLE)
        .query()
        .partition("Sales")
        .collect()
        .await
        .unwrap();
    let kinds: Vec<_> = by_prefix.iter().map(|row| row.kind()).collect();
    assert_eq!(
        kinds,
        [Some("Department"), Some("Employee"), Some("Employee")].map(|k| k.map(|k| {
            if k == "Department" {
                "DepartmentByKey"
            } else {
                k
            }
        }))
    );

    let by_type: Vec<ByType> = service
        .table::<ByType>(TABLE)
        .query()
        .partition("Sales")
        .collect()
        .await
        .unwrap();
    assert!(matches!(&by_type[0], ByType::Department(d) if d.employee_count == 2));
    assert!(matches!(&by_type[1], ByType::Employee(e) if e.first_name == "Ann"));
    assert!(matches!(&by_type[2], ByType::Employee(e) if e.first_name == "Bob"));
    fixture.drop_tables().await;
}

/// A read-modify-write through a derived type keeps every column it doesn't name,
/// with its type; the struct's own columns change; nothing is added (no
/// discriminator on a row that had none).
async fn read_modify_write_keeps_every_unknown_column(backend: Backend) {
    let fixture = seeded(&backend).await;
    let employees = fixture.service.table::<Employee>(TABLE);
    let before = raw(&fixture, "Sales", "EMPLOYEE_000100").await;

    let read = employees
        .get(Employee::key("Sales", 100).unwrap())
        .await
        .unwrap()
        .unwrap();
    let mut ann = read.value;
    ann.age = 35;
    ann.role = Role::Director;
    employees
        .replace(&ann, IfMatch::Etag(read.etag))
        .await
        .unwrap();

    let mut expected = before.clone();
    expected.insert("Age", 35);
    expected.insert("Role", 2);
    let after = raw(&fixture, "Sales", "EMPLOYEE_000100").await;
    assert_eq!(sorted(after), sorted(expected));

    // Upsert and merge keep them too.
    let mut bob = employees
        .get(Employee::key("Sales", 150).unwrap())
        .await
        .unwrap()
        .unwrap()
        .value;
    bob.active = true;
    employees.upsert(&bob).await.unwrap();
    let stored = raw(&fixture, "Sales", "EMPLOYEE_000150").await;
    assert_eq!(stored.get("Nickname"), Some(&Value::from("Bobby")));
    assert_eq!(stored.get("Active"), Some(&Value::Boolean(true)));
    assert_eq!(stored.get("EntityType"), None);

    // A catch-all can't overwrite what the struct or the tag writes.
    bob.other.insert("Age".into(), Value::Int32(1));
    let err = employees.upsert(&bob).await.unwrap_err();
    assert_eq!(err.kind(), ErrorKind::InvalidInput);
    assert!(err.message().contains("\"Age\""), "{err}");
    let mut dept = fixture
        .service
        .table::<Department>(TABLE)
        .get(Department::key("Sales").unwrap())
        .await
        .unwrap()
        .unwrap()
        .value;
    dept.other.insert("Type".into(), Value::from("Employee"));
    let err = fixture
        .service
        .table::<Department>(TABLE)
        .upsert(&dept)
        .await
        .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::InvalidInput);
    assert_eq!(
        sorted(raw(&fixture, "Sales", "EMPLOYEE_000150").await).len(),
        sorted(stored).len(),
        "nothing was written"
    );
    fixture.drop_tables().await;
}

/// New rows written through tagged types carry the tag the table already uses,
/// and nothing of the typed layer's own.
async fn new_rows_carry_the_tables_own_marks(backend: Backend) {
    let fixture = seeded(&backend).await;
    let service = &fixture.service;
    let dee = Employee {
        department: "Support".into(),
        employee_id: 300,
        first_name: "Dee".into(),
        last_name: "Lane".into(),
        age: 50,
        role: Role::Staff,
        hire_date: datetime("2024-02-01T00:00:00Z"),
        salary: 60_000,
        active: true,
        email: "dee@contoso.com".into(),
        other: BTreeMap::from([("Type".to_owned(), Value::from("Employee"))]),
    };
    service.table::<Employee>(TABLE).insert(&dee).await.unwrap();
    let stored = raw(&fixture, "Support", "EMPLOYEE_000300").await;
    assert_eq!(stored.get("Role"), Some(&Value::Int32(0)));
    assert_eq!(stored.get("EntityType"), None);
    assert_eq!(stored.get("EntityVersion"), None);

    let ops = Department {
        name: "Ops".into(),
        budget: 1.5,
        employee_count: 0,
        other: BTreeMap::new(),
    };
    service
        .table::<Department>(TABLE)
        .insert(&ops)
        .await
        .unwrap();
    let stored = raw(&fixture, "Ops", "DEPARTMENT").await;
    assert_eq!(stored.get("Type"), Some(&Value::from("Department")));
    assert_eq!(stored.get("EntityType"), None);

    // Both are found by the other marks too.
    let support: Vec<ByType> = service
        .table::<ByType>(TABLE)
        .query()
        .partition("Support")
        .collect()
        .await
        .unwrap();
    assert_eq!(support.len(), 3);
    fixture.drop_tables().await;
}

/// An untagged type reads every row of its table but never the client's own rows.
async fn untagged_types_read_every_row(backend: Backend) {
    let fixture = backend.fresh();
    fixture.service.create_table(TABLE).await.unwrap();
    for (rk, name) in [("a", "Ann"), ("b", "Bob")] {
        let row = DynamicEntity::new("Sales", rk).with("FirstName", name);
        fixture
            .engine
            .write(TABLE, &WriteOp::Insert(row))
            .await
            .unwrap();
    }
    // A row the client keeps for itself is never a Person.
    let copy = DynamicEntity::new("Sales", "c")
        .with("EntityType", "Person@by_name")
        .with("FirstName", "Copy");
    fixture
        .engine
        .write(TABLE, &WriteOp::Insert(copy))
        .await
        .unwrap();
    let people = fixture.service.table::<Person>(TABLE);
    let all: Vec<Person> = people.query().partition("Sales").collect().await.unwrap();
    assert_eq!(
        all.iter()
            .map(|p| p.first_name.as_str())
            .collect::<Vec<_>>(),
        ["Ann", "Bob"]
    );
    let cy = Person {
        department: "Sales".into(),
        row_key: "d".into(),
        first_name: "Cy".into(),
        nickname: Some("C".into()),
    };
    people.insert(&cy).await.unwrap();
    let stored = raw(&fixture, "Sales", "d").await;
    assert_eq!(
        sorted(stored)
            .into_iter()
            .map(|(name, _)| name)
            .collect::<Vec<_>>(),
        ["FirstName", "Nickname"]
    );
    assert_eq!(all_rows(&fixture.engine, TABLE).await.unwrap().len(), 4);
    fixture.drop_tables().await;
}

fn sorted(row: DynamicEntity) -> Vec<(String, Value)> {
    let mut properties: Vec<(String, Value)> = row
        .properties()
        .map(|(name, value)| (name.to_owned(), value.clone()))
        .collect();
    properties.sort_by(|a, b| a.0.cmp(&b.0));
    properties
}

tables_tests::typed_matrix!(
    #[tokio::test]
    rows_of_another_sdk_read_by_prefix_and_by_column,
    #[tokio::test]
    unions_dispatch_by_prefix_and_by_column,
    #[tokio::test]
    read_modify_write_keeps_every_unknown_column,
    #[tokio::test]
    new_rows_carry_the_tables_own_marks,
    #[tokio::test]
    untagged_types_read_every_row,
);
