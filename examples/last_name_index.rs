//! Index entities: "every employee named Jones" without a scan.
//!
//! ```text
//! cargo run --example last_name_index
//! ```
//!
//! A last name is not unique, so a copy per employee under `lastname_Jones` cannot
//! work. Instead, one *index entity* per last name, `(Sales, lastname_Jones)`, lists
//! the employees who have it. The client keeps it up to date on every insert,
//! update and delete of an employee: in the employee's own transaction (same
//! partition), guarded by the index entity's ETag and retried when a concurrent
//! writer changed it first, so no update is lost. A lookup reads the list, then
//! each member.
#![allow(clippy::print_stdout)]

use tables_client::{Entity, IfMatch, Table, Value};
use tables_examples::{ensure, BoxResult, Example};

const TABLE: &str = "Staff";

/// An employee, with an index entity per last name in its department's partition.
#[derive(Entity, Debug, Clone, PartialEq)]
#[entity(kind = "Employee", rename_all = "PascalCase")]
#[entity(partition_key = "{department}", row_key = "empid_{employee_id:06}")]
#[entity(index_entity(name = "last_name", row_key = "lastname_{last_name}"))]
struct Employee {
    department: String,
    employee_id: u32,
    first_name: String,
    last_name: String,
}

fn sales(employee_id: u32, first: &str, last: &str) -> Employee {
    Employee {
        department: "Sales".into(),
        employee_id,
        first_name: first.into(),
        last_name: last.into(),
    }
}

/// The ids of the employees of Sales named `last`, through the index entity.
async fn named(employees: &Table<Employee>, last: &str) -> BoxResult<Vec<u32>> {
    let found = employees
        .get_all_by_index(Employee::last_name_key("Sales", last)?)
        .await?;
    let mut ids: Vec<u32> = found.into_iter().map(|v| v.value.employee_id).collect();
    ids.sort_unstable();
    Ok(ids)
}

#[tokio::main]
async fn main() -> BoxResult<()> {
    tables_examples::run(last_name_index).await
}

async fn last_name_index(example: Example) -> BoxResult<()> {
    let service = example.service();
    let employees: Table<Employee> = service.table(TABLE);
    employees.create_if_not_exists().await?;

    // 1. Insert employees: each insert also adds its id to its last name's list.
    for e in [
        sales(152, "Kim", "Jones"),
        sales(223, "Ann", "Jones"),
        sales(224, "Raj", "Patel"),
        sales(231, "Mia", "Smith"),
    ] {
        employees.insert(&e).await?;
    }
    let jones = named(&employees, "Jones").await?;
    println!(
        "\n1. get_all_by_index(\"last_name\", (Sales, lastname_Jones)) -> employees {jones:?}"
    );
    ensure(jones == [152, 223], "both Joneses are listed")?;

    // 2. What the index entity looks like as stored (read with the raw engine).
    let key = Employee::last_name_key("Sales", "Jones")?;
    let row = service
        .engine()
        .get_entity(TABLE, &key, None)
        .await?
        .ok_or("the index entity of Jones is missing")?;
    println!("\n2. The index entity {key} as stored:");
    for (name, value) in row.properties() {
        let shown = match value {
            Value::String(s) => s.clone(),
            other => format!("{other:?}"),
        };
        println!("   {name} = {shown}");
    }

    // 3. Sixteen writers add sixteen more Joneses at the same time. Each one's
    //    update of the shared index entity is conditional on its ETag; the losers
    //    of each race re-read and retry, so every id ends up in the list.
    let mut writers = Vec::new();
    for i in 0..16u32 {
        let employees = employees.clone();
        writers.push(tokio::spawn(async move {
            employees.insert(&sales(500 + i, "New", "Jones")).await
        }));
    }
    for writer in writers {
        writer.await??;
    }
    let jones = named(&employees, "Jones").await?;
    println!(
        "\n3. 16 concurrent inserts of Joneses: the list now has {} members.",
        jones.len()
    );
    let mut expected: Vec<u32> = vec![152, 223];
    expected.extend(500..516);
    ensure(jones == expected, "no concurrent insert was lost")?;

    // 4. A change of last name moves the id from one list to the other (the
    //    employee and both index entities change in one transaction).
    let ann = employees
        .get(Employee::key("Sales", 223)?)
        .await?
        .ok_or("employee 223 is missing")?;
    let married = Employee {
        last_name: "Smith".into(),
        ..ann.value.clone()
    };
    employees.replace(&married, IfMatch::Etag(ann.etag)).await?;
    let jones = named(&employees, "Jones").await?;
    let smith = named(&employees, "Smith").await?;
    println!(
        "\n4. Employee 223 is now a Smith: Smith -> {smith:?}; Jones has {} members.",
        jones.len()
    );
    ensure(smith == [223, 231], "223 joined the Smiths")?;
    ensure(!jones.contains(&223), "223 left the Joneses")?;

    // 5. A delete removes the id from its list; an unknown name lists nobody.
    employees
        .delete(Employee::key("Sales", 231)?, IfMatch::Any)
        .await?;
    let smith = named(&employees, "Smith").await?;
    let nobody = named(&employees, "Nobody").await?;
    println!("\n5. Deleted employee 231: Smith -> {smith:?}; Nobody -> {nobody:?}.");
    ensure(smith == [223], "the deleted employee is gone from the list")?;
    ensure(nobody.is_empty(), "an unknown last name lists nobody")?;

    // 6. A query for employees never returns the index entities.
    let all = employees.query().partition("Sales").collect().await?;
    println!(
        "\n6. A partition query returns the {} employees, not the index entities.",
        all.len()
    );
    ensure(
        all.len() == 3 + 16,
        "employees only: 152, 223, 224 and the 16 new ones",
    )?;

    println!("\nlast_name_index finished: every check passed.");
    Ok(())
}
