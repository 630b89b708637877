//! The examples of the table design guide (<https://learn.microsoft.com/azure/storage/tables/table-storage-design-guide>), stated with `#[derive(Entity)]` and run through the
//! raw `Engine` trait (the typed client builds on exactly this), on every engine of
//! the typed matrix ([`tables_tests::typed_matrix!`]).

#![allow(clippy::unwrap_used)] // test helpers build known-good values

use serde::{Deserialize, Serialize};
use tables_client::model::{row_role, IndexKind, RowRole};
use tables_client::{
    DateTime, DynamicEntity, Entity, EntityKey, EntityUnion, ErrorKind, Filter, QuerySpec, Row,
    Value, WriteOp,
};
use tables_tests::read::query_all;
use tables_tests::typed::Backend;
use uuid::Uuid;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
struct Address {
    street: String,
    city: String,
}

/// The guide's employee: by department and id, with the email intra-partition
/// index, a partial copy in another table, and last-name index entities.
#[derive(Entity, Debug, Clone, PartialEq)]
#[entity(kind = "Employee", version = 1, rename_all = "PascalCase")]
#[entity(partition_key = "{department}", row_key = "empid_{employee_id:06}")]
#[entity(unique_index(name = "email", row_key = "email_{email}"))]
#[entity(unique_index(
    name = "by_email",
    table = "EmployeesByEmail",
    partition_key = "email_{department}",
    row_key = "{email}",
    include(first_name, last_name)
))]
#[entity(index_entity(name = "last_name", row_key = "lastname_{last_name}"))]
struct Employee {
    department: String,
    employee_id: u32,
    first_name: String,
    last_name: String,
    age: i32,
    email: String,
    #[entity(rename = "Hired")]
    hired_on: DateTime,
    #[entity(json)]
    address: Address,
    #[entity(skip)]
    scratch: Option<String>,
}

fn jones() -> Employee {
    Employee {
        department: "Sales".into(),
        employee_id: 223,
        first_name: "Ann".into(),
        last_name: "Jones".into(),
        age: 34,
        email: "jonesj@contoso.com".into(),
        hired_on: DateTime::from_ymd_hms(2019, 4, 1, 9, 0, 0).unwrap(),
        address: Address {
            street: "1 Main St".into(),
            city: "Redmond".into(),
        },
        scratch: None,
    }
}

#[test]
fn employee_keys_follow_the_guide() {
    let e = jones();
    assert_eq!(
        e.entity_key().unwrap(),
        EntityKey::new("Sales", "empid_000223")
    );
    assert_eq!(
        Employee::key("Sales", 223).unwrap(),
        e.entity_key().unwrap()
    );
    assert_eq!(Employee::partition_key("Sales").unwrap(), "Sales");
    assert_eq!(Employee::row_key(223).unwrap(), "empid_000223");
    assert_eq!(
        Employee::email_key("Sales", "jonesj@contoso.com").unwrap(),
        EntityKey::new("Sales", "email_jonesj@contoso.com")
    );
    // Ids 100..200: the guide's `RowKey ge 'empid_000100' and RowKey le 'empid_000199'`.
    assert_eq!(
        Employee::employee_id_range(100..200)
            .unwrap()
            .row_key_filter()
            .to_odata(),
        "RowKey ge 'empid_000100' and RowKey lt 'empid_000200'"
    );
    // Emails starting with "a": `RowKey ge 'email_a' and RowKey lt 'email_b'`.
    assert_eq!(
        Employee::email_email_prefix("a")
            .unwrap()
            .row_key_filter()
            .to_odata(),
        "RowKey ge 'email_a' and RowKey lt 'email_b'"
    );
    // An id wider than the padding is refused, naming the field.
    let err = Employee::key("Sales", 1_000_000).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::InvalidKey);
    assert!(err.message().contains("employee_id"), "{}", err.message());
}

#[test]
fn employee_round_trips_without_storing_key_fields_twice() {
    let e = jones();
    let row = e.to_entity().unwrap();
    assert_eq!(row.get("EntityType"), Some(&Value::from("Employee")));
    assert_eq!(row.get("EntityVersion"), Some(&Value::Int32(1)));
    assert_eq!(row.get("Hired"), Some(&Value::DateTime(e.hired_on)));
    assert_eq!(row.get("Age"), Some(&Value::Int32(34)));
    assert!(row
        .get("Address")
        .and_then(Value::as_str)
        .unwrap()
        .contains("Redmond"));
    assert!(!row.contains("Department") && !row.contains("EmployeeId"));
    assert!(!row.contains("Scratch"));
    let mut with_scratch = e.clone();
    with_scratch.scratch = Some("not stored".into());
    assert_eq!(
        Employee::from_entity(with_scratch.to_entity().unwrap()).unwrap(),
        e
    );
    assert_eq!(<Employee as Entity>::KIND, "Employee");
    assert_eq!(<Employee as Entity>::VERSION, 1);
}

#[test]
fn typed_columns_filter_under_stored_names() {
    let f = Employee::AGE.gt(30) & Employee::LAST_NAME.eq("Jones");
    assert_eq!(
        f.to_odata(),
        "(Age gt 30 or Age gt 30L) and LastName eq 'Jones'"
    );
    let row = jones().to_entity().unwrap();
    assert!(f.matches(&row));
    assert!(Employee::HIRED_ON.ge(jones().hired_on).matches(&row));
    assert_eq!(Employee::HIRED_ON.name(), "Hired");
}

#[test]
fn decode_errors_name_the_field_and_the_key() {
    let mut row = jones().to_entity().unwrap();
    row.remove("Age");
    let err = Employee::from_entity(row.clone()).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Decode);
    assert!(err.message().contains("age"), "{}", err.message());
    assert_eq!(
        err.entity_key(),
        Some(&EntityKey::new("Sales", "empid_000223"))
    );

    row.insert("Age", "thirty");
    let err = Employee::from_entity(row).unwrap_err();
    assert_eq!(err.property(), Some("Age"));

    let mut foreign = jones().to_entity().unwrap();
    foreign.insert("EntityType", "Department");
    assert_eq!(
        Employee::from_entity(foreign).unwrap_err().kind(),
        ErrorKind::Decode
    );

    let mut bad_key = jones().to_entity().unwrap();
    bad_key.row_key = "empid_12".into();
    let err = Employee::from_entity(bad_key).unwrap_err();
    assert!(err.message().contains("employee_id"), "{}", err.message());
}

#[test]
fn employee_indexes_are_described_and_produced() {
    let schema = Employee::schema();
    let names: Vec<_> = schema
        .indexes
        .iter()
        .map(|i| (i.name, i.kind, i.same_partition))
        .collect();
    assert_eq!(
        names,
        [
            ("email", IndexKind::Copy, true),
            ("by_email", IndexKind::Copy, false),
            ("last_name", IndexKind::List, true),
        ]
    );
    let e = jones();
    let primary = e.to_entity().unwrap();
    let copies = e.index_copies(&primary).unwrap();
    assert_eq!(copies.len(), 2);
    let email = &copies[0];
    assert_eq!(email.name(), "email");
    assert!(email.same_partition());
    assert_eq!(email.table(), None);
    assert_eq!(
        email.key(),
        EntityKey::new("Sales", "email_jonesj@contoso.com")
    );
    assert_eq!(
        row_role(email.entity()),
        RowRole::IndexCopy {
            kind: "Employee",
            index: "email"
        }
    );
    // A full copy decodes back into the primary; it is never read as one directly.
    assert!(Employee::from_entity(email.entity().clone()).is_err());
    let back = tables_client::model::primary_from_copy(email.entity().clone()).unwrap();
    assert_eq!(Employee::from_entity(back).unwrap(), e);

    let partial = &copies[1];
    assert_eq!(partial.table(), Some("EmployeesByEmail"));
    assert_eq!(
        partial.key(),
        EntityKey::new("email_Sales", "jonesj@contoso.com")
    );
    let props: Vec<_> = partial
        .entity()
        .properties()
        .map(|(n, _)| n.to_owned())
        .collect();
    assert!(props.contains(&"FirstName".to_owned()) && props.contains(&"LastName".to_owned()));
    assert!(!props.contains(&"Age".to_owned()));
    assert_eq!(
        tables_client::model::primary_key_of_copy(partial.entity()).unwrap(),
        e.entity_key().unwrap()
    );

    let entries = e.index_entries().unwrap();
    assert_eq!(entries.len(), 1);
    assert_eq!(entries[0].key(), &EntityKey::new("Sales", "lastname_Jones"));
    assert_eq!(entries[0].member(), &e.entity_key().unwrap());
    assert_eq!(
        Employee::last_name_key("Sales", "Jones").unwrap(),
        EntityKey::new("Sales", "lastname_Jones")
    );
}

async fn email_index_is_written_with_the_primary_and_found_by_point_query(backend: Backend) {
    let engine = backend.engine();
    let engine = engine.as_ref();
    engine.create_table("Employees").await.unwrap();
    let e = jones();
    let primary = e.to_entity().unwrap();
    let mut ops = vec![WriteOp::Insert(primary.clone())];
    for copy in e.index_copies(&primary).unwrap() {
        if copy.same_partition() {
            ops.push(WriteOp::Insert(copy.into_entity()));
        }
    }
    engine.submit_batch("Employees", &ops).await.unwrap();

    let by_email = Employee::email_key("Sales", "jonesj@contoso.com").unwrap();
    let copy = engine
        .get_entity("Employees", &by_email, None)
        .await
        .unwrap()
        .unwrap();
    let found = Employee::from_entity(tables_client::model::primary_from_copy(copy).unwrap());
    assert_eq!(found.unwrap(), e);

    // A query for employees by kind sees the primary once, not the copy.
    let spec = QuerySpec::new().filter(
        Filter::partition_key("Sales") & tables_client::col("EntityType").eq(Employee::KIND),
    );
    let rows = query_all(engine, "Employees", &spec).await.unwrap();
    assert_eq!(rows.len(), 1);
    assert_eq!(Employee::from_entity(rows[0].clone()).unwrap(), e);
}

/// The guide's inter-partition index in one table: `(empid_Sales, 000223)` and
/// `(email_Sales, jonesj@contoso.com)`.
#[derive(Entity, Debug, Clone, PartialEq)]
#[entity(kind = "SpreadEmployee")]
#[entity(partition_key = "empid_{department}", row_key = "{employee_id:06}")]
#[entity(unique_index(
    name = "email",
    partition_key = "email_{department}",
    row_key = "{email}"
))]
struct SpreadEmployee {
    department: String,
    employee_id: u32,
    email: String,
    last_name: String,
}

#[test]
fn inter_partition_index_keys_follow_the_guide() {
    let e = SpreadEmployee {
        department: "Sales".into(),
        employee_id: 223,
        email: "jonesj@contoso.com".into(),
        last_name: "Jones".into(),
    };
    assert_eq!(
        e.entity_key().unwrap(),
        EntityKey::new("empid_Sales", "000223")
    );
    let copies = e.index_copies(&e.to_entity().unwrap()).unwrap();
    assert_eq!(copies.len(), 1);
    assert!(
        !copies[0].same_partition(),
        "another partition: eventually consistent"
    );
    assert_eq!(copies[0].table(), None);
    assert_eq!(
        copies[0].key(),
        EntityKey::new("email_Sales", "jonesj@contoso.com")
    );
    assert_eq!(
        SpreadEmployee::email_key("Sales", "jonesj@contoso.com").unwrap(),
        copies[0].key()
    );
    assert!(SpreadEmployee::schema().indexes[0].is_eventually_consistent());
}

/// The guide's compound key: employee reviews `(Sales, empid_000123_2012)`.
#[derive(Entity, Debug, Clone, PartialEq)]
#[entity(
    partition_key = "{department}",
    row_key = "empid_{employee_id:06}_{year:04}"
)]
struct EmployeeReview {
    department: String,
    employee_id: u32,
    year: u16,
    rating: u8,
    comments: String,
}

async fn reviews_of_one_employee_by_compound_key(backend: Backend) {
    let engine = backend.engine();
    let engine = engine.as_ref();
    engine.create_table("Reviews").await.unwrap();
    for (id, year) in [(122, 2013), (123, 2012), (123, 2013), (124, 2012)] {
        let review = EmployeeReview {
            department: "Sales".into(),
            employee_id: id,
            year,
            rating: 4,
            comments: format!("{id} in {year}"),
        };
        let row = review.to_entity().unwrap();
        engine
            .write("Reviews", &WriteOp::Insert(row))
            .await
            .unwrap();
    }
    let key = EmployeeReview::key("Sales", 123, 2012).unwrap();
    assert_eq!(key.row_key, "empid_000123_2012");

    // `RowKey ge 'empid_000123' and RowKey lt 'empid_000124'`, as in the guide.
    let range = EmployeeReview::employee_id_range(123..=123).unwrap();
    assert_eq!(
        range.row_key_filter().to_odata(),
        "RowKey ge 'empid_000123' and RowKey lt 'empid_000124'"
    );
    let spec = QuerySpec::new()
        .filter(Filter::partition_key("Sales") & range.row_key_filter())
        .select([EmployeeReview::RATING.name()]);
    let rows = query_all(engine, "Reviews", &spec).await.unwrap();
    let years: Vec<u16> = rows
        .iter()
        .map(|r| r.row_key[13..].parse().unwrap())
        .collect();
    assert_eq!(years, [2012, 2013]);
    // Years of one employee, by the second placeholder.
    let range = EmployeeReview::year_range(123, 2013..).unwrap();
    assert!(range.contains("empid_000123_2013") && !range.contains("empid_000123_2012"));
}

/// The guide's log tail: reverse ticks so `$top=10` returns the newest.
#[derive(Entity, Debug, Clone, PartialEq)]
#[entity(
    partition_key = "{employee_id}",
    row_key = "{submitted:rticks}_{expense_id}"
)]
struct Expense {
    employee_id: String,
    submitted: DateTime,
    expense_id: Uuid,
    amount: f64,
}

async fn expense_log_tail_returns_the_newest_ten_first(backend: Backend) {
    let engine = backend.engine();
    let engine = engine.as_ref();
    engine.create_table("Expenses").await.unwrap();
    let start = DateTime::from_ymd_hms(2024, 1, 1, 0, 0, 0).unwrap();
    let mut written = Vec::new();
    for i in 0..25u32 {
        let expense = Expense {
            employee_id: "000123".into(),
            submitted: start
                .checked_add_ticks(i64::from(i) * 36_000_000_000)
                .unwrap(),
            expense_id: Uuid::from_u128(u128::from(i) * 7919),
            amount: f64::from(i) * 1.5,
        };
        engine
            .write("Expenses", &WriteOp::Insert(expense.to_entity().unwrap()))
            .await
            .unwrap();
        written.push(expense);
    }
    let spec = QuerySpec::new()
        .filter(Filter::partition_key("000123"))
        .top(10);
    // A page may hold fewer rows than `$top`: read pages until there are ten. On an
    // engine whose results come in any order (the Cosmos profile) the keys' order
    // shows only once the client sorts them: read the partition whole, then sort.
    let mut newest: Vec<Expense> = Vec::new();
    let mut token = None;
    if !engine.capabilities().ordered_results {
        let rows = query_all(engine, "Expenses", &spec).await.unwrap();
        newest.extend(
            rows.into_iter()
                .map(|row| Expense::from_entity(row).unwrap()),
        );
    }
    while newest.len() < 10 {
        let page = engine
            .query("Expenses", &spec, token.as_ref())
            .await
            .unwrap();
        newest.extend(
            page.items
                .into_iter()
                .map(|row| Expense::from_entity(row).unwrap()),
        );
        token = page.continuation;
    }
    newest.truncate(10);
    written.reverse();
    assert_eq!(newest, written[..10]);

    // A time window of the log, newest first.
    let day = |d| DateTime::from_ymd_hms(2024, 1, d, 0, 0, 0).unwrap();
    let range = Expense::submitted_range(day(1)..day(2)).unwrap();
    let spec = QuerySpec::new().filter(Filter::partition_key("000123") & range.row_key_filter());
    let rows = query_all(engine, "Expenses", &spec).await.unwrap();
    assert_eq!(rows.len(), 24, "one per hour of the first day");
}

/// A department row in the same partition as its employees (one EGT can keep
/// EmployeeCount consistent).
#[derive(Entity, Debug, Clone, PartialEq)]
#[entity(
    partition_key = "{name}",
    row_key = "department",
    rename_all = "PascalCase"
)]
struct Department {
    name: String,
    manager: String,
    employee_count: i32,
}

#[derive(EntityUnion, Debug, Clone, PartialEq)]
enum SalesPartition {
    Employee(Employee),
    Department(Department),
    #[entity(other)]
    Other(DynamicEntity),
}

async fn department_and_employees_in_one_partition_decode_through_a_union(backend: Backend) {
    let engine = backend.engine();
    let engine = engine.as_ref();
    engine.create_table("Employees").await.unwrap();
    let dept = Department {
        name: "Sales".into(),
        manager: "Jones".into(),
        employee_count: 1,
    };
    let e = jones();
    let primary = e.to_entity().unwrap();
    let mut ops = vec![
        WriteOp::Insert(dept.to_entity().unwrap()),
        WriteOp::Insert(primary.clone()),
    ];
    for copy in e.index_copies(&primary).unwrap() {
        if copy.same_partition() {
            ops.push(WriteOp::Insert(copy.into_entity()));
        }
    }
    let stranger = DynamicEntity::new("Sales", "zz_note")
        .with("EntityType", "Note")
        .with("EntityVersion", 1);
    ops.push(WriteOp::Insert(stranger.clone()));
    engine.submit_batch("Employees", &ops).await.unwrap();

    let rows = query_all(
        engine,
        "Employees",
        &QuerySpec::new().filter(Filter::partition_key("Sales")),
    )
    .await
    .unwrap();
    assert_eq!(rows.len(), 4, "department, employee, email copy, note");
    let decoded: Vec<SalesPartition> = rows
        .into_iter()
        .filter(|row| matches!(row_role(row), RowRole::Primary { .. }))
        .map(|row| SalesPartition::from_entity(row).unwrap())
        .collect();
    assert_eq!(decoded.len(), 3);
    assert_eq!(decoded[0], SalesPartition::Department(dept.clone()));
    assert_eq!(decoded[1], SalesPartition::Employee(e.clone()));
    match &decoded[2] {
        SalesPartition::Other(row) => assert_eq!(row.row_key, "zz_note"),
        other => panic!("expected the catch-all, got {other:?}"),
    }
    assert_eq!(
        <SalesPartition as EntityUnion>::VARIANT_KINDS,
        ["Employee", "Department"]
    );
    // What a typed table of each reads: the union with a catch-all reads every kind.
    assert_eq!(<Employee as Row>::KINDS, Some(&["Employee"][..]));
    assert_eq!(<SalesPartition as Row>::KINDS, None);
    const _: () = assert!(<Employee as Row>::HAS_INDEXES);
    const _: () = assert!(!<Department as Row>::HAS_INDEXES);
    const _: () = assert!(<SalesPartition as Row>::HAS_INDEXES);
    let kinds: Vec<_> = <SalesPartition as Row>::schemas()
        .iter()
        .map(|s| s.kind)
        .collect();
    assert_eq!(kinds, ["Employee", "Department"]);
    assert_eq!(SalesPartition::from(dept).kind(), Some("Department"));
}

tables_tests::typed_matrix!(
    email_index_is_written_with_the_primary_and_found_by_point_query,
    reviews_of_one_employee_by_compound_key,
    expense_log_tail_returns_the_newest_ten_first,
    department_and_employees_in_one_partition_decode_through_a_union,
);
