//! Existing tables: typed access to rows another program wrote.
//!
//! ```text
//! cargo run --example existing_table
//! ```
//!
//! Most tables exist before the code that reads them. Here a table written by
//! another SDK (the rows are shaped as the official JS SDK writes them: no
//! `EntityType`, a `Type` column, RowKeys `EMPLOYEE_000100` and `DEPARTMENT`, an
//! enum stored as Int32 the way .NET stores it, columns this program has never heard
//! of) is read through derived types, updated under ETags, and written back with
//! every unknown column kept.
//!
//! Then orders the official JS and Python SDKs wrote (`existing_table/orders.rs`):
//! one column holds Int32, Int64 and Double values, and every typed filter returns
//! exactly the rows whose value, as the field reads it, satisfies it.
#![allow(clippy::print_stdout)]

use std::collections::BTreeMap;

use tables_client::{
    DateTime, DynamicEntity, Engine as _, Entity, EntityKey, EntityUnion, IfMatch, Property, Table,
    Value, WriteOp,
};
use tables_examples::{ensure, raw_rows, BoxResult, Example};

#[path = "existing_table/orders.rs"]
mod orders;

const TABLE: &str = "Staff";

/// An enum as .NET stores it: the variant's number, an Int32.
#[derive(Property, Debug, Clone, Copy, PartialEq, Eq)]
#[entity(int)]
enum Role {
    Staff,
    Manager,
    Director,
}

/// An employee, marked the first way of the heterogeneous entity types pattern
/// (<https://learn.microsoft.com/azure/storage/tables/table-storage-design-modeling>):
/// by the RowKey prefix.
#[derive(Entity, Debug, Clone, PartialEq)]
#[entity(kind = "Employee", tag(row_key_prefix), rename_all = "PascalCase")]
#[entity(partition_key = "{department}", row_key = "EMPLOYEE_{employee_id:06}")]
struct Employee {
    department: String,
    employee_id: u32,
    first_name: String,
    last_name: String,
    role: Role,
    hire_date: DateTime,
    salary: i64,
    /// The columns this struct doesn't name (`Type`, `Notes`, `Id`, ...), kept as
    /// stored so that writing the struct back never drops them.
    #[entity(other_properties)]
    other: BTreeMap<String, Value>,
}

/// A department, marked by the table's existing `Type` column.
#[derive(Entity, Debug, Clone, PartialEq)]
#[entity(kind = "Department", tag(property = "Type", value = "Department"))]
#[entity(rename_all = "PascalCase")]
#[entity(partition_key = "{name}", row_key = "DEPARTMENT")]
struct Department {
    name: String,
    budget: f64,
    employee_count: i32,
    #[entity(other_properties)]
    other: BTreeMap<String, Value>,
}

/// Everything in a department's partition.
#[derive(EntityUnion, Debug, Clone, PartialEq)]
enum Partition {
    Employee(Employee),
    Department(Department),
}

/// The rows another program wrote (as the JS SDK sends plain JS values).
fn rows_written_elsewhere() -> BoxResult<Vec<DynamicEntity>> {
    Ok(vec![
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
            .with("Role", 1)
            .with("HireDate", "2019-04-01T09:00:00Z".parse::<DateTime>()?)
            .with("Salary", Value::Int64(95_000))
            .with("Notes", "written by the JS SDK"),
        DynamicEntity::new("Sales", "EMPLOYEE_000150")
            .with("Type", "Employee")
            .with("FirstName", "Bob")
            .with("LastName", "Smith")
            .with("Role", 0)
            .with("HireDate", "2021-10-15T00:00:00Z".parse::<DateTime>()?)
            .with("Salary", Value::Int64(72_000))
            .with("Nickname", "Bobby"),
    ])
}

#[tokio::main]
async fn main() -> BoxResult<()> {
    tables_examples::run(existing_table).await
}

async fn existing_table(example: Example) -> BoxResult<()> {
    let service = example.service();
    service.create_table(TABLE).await?;
    for row in rows_written_elsewhere()? {
        service.engine().write(TABLE, &WriteOp::Insert(row)).await?;
    }
    println!("\n1. Table {TABLE} holds three rows written by another SDK: no EntityType anywhere.");

    // 2. One query reads the whole partition, each row as the type its marks name.
    let partition: Vec<Partition> = service
        .table::<Partition>(TABLE)
        .query()
        .partition("Sales")
        .collect()
        .await?;
    for row in &partition {
        match row {
            Partition::Department(d) => println!("2. Department {} (budget {})", d.name, d.budget),
            Partition::Employee(e) => {
                println!("2. Employee {} {}: {:?}", e.first_name, e.last_name, e.role);
            }
        }
    }
    ensure(
        partition.len() == 3,
        "the partition reads as 1 department and 2 employees",
    )?;

    // 3. A read-modify-write under the ETag read: the struct's fields change, the
    //    columns it doesn't name stay as they were, with their types.
    let employees: Table<Employee> = service.table(TABLE);
    let read = employees
        .get(Employee::key("Sales", 100)?)
        .await?
        .ok_or("Ann is missing")?;
    let mut ann = read.value;
    ann.role = Role::Director;
    ann.salary += 5_000;
    employees.replace(&ann, IfMatch::Etag(read.etag)).await?;
    let stored = raw_rows(&service, TABLE)
        .await?
        .into_iter()
        .find(|row| row.row_key == "EMPLOYEE_000100")
        .ok_or("Ann's row is missing")?;
    println!(
        "3. Promoted Ann: Role = {:?}, Notes = {:?} (kept), EntityType = {:?} (none added)",
        stored.get("Role"),
        stored.get("Notes"),
        stored.get("EntityType")
    );
    ensure(
        stored.get("Role") == Some(&Value::Int32(2)),
        "Role is stored as Int32 2",
    )?;
    ensure(
        stored.get("Notes") == Some(&Value::from("written by the JS SDK")),
        "the unknown column is kept",
    )?;
    ensure(
        stored.get("EntityType").is_none(),
        "no discriminator is added",
    )?;

    // 4. A new department is written with the mark the table already uses.
    let support = Department {
        name: "Support".into(),
        budget: 400_000.0,
        employee_count: 0,
        other: BTreeMap::new(),
    };
    service.table::<Department>(TABLE).insert(&support).await?;
    let key = EntityKey::new("Support", "DEPARTMENT");
    let row = service
        .engine()
        .get_entity(TABLE, &key, None)
        .await?
        .ok_or("the department is missing")?;
    println!(
        "4. Inserted department Support: Type = {:?}",
        row.get("Type")
    );
    ensure(
        row.get("Type") == Some(&Value::from("Department")),
        "the Type column is written",
    )?;

    // 5. Orders the JS and Python SDKs wrote: Items as Int32 and Int64, Total as
    //    Int32, Int64 and Double. Typed filters match every row the fields read.
    service.create_table(orders::ORDERS_TABLE).await?;
    for row in orders::parse_rows(orders::FIXTURE)? {
        service
            .engine()
            .write(orders::ORDERS_TABLE, &WriteOp::Insert(row))
            .await?;
    }
    let checked = orders::typed_filters_match_the_reader(&service, orders::ORDERS_TABLE).await?;
    for line in &checked {
        println!("5. {line}");
    }
    ensure(
        checked.len() == 10,
        "every typed filter returns exactly the rows its field reads and satisfies",
    )?;
    Ok(())
}
