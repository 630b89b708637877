//! Denormalization in one partition: a department and its employees, with the
//! department's `EmployeeCount` kept consistent by entity group transactions, read
//! back through an `EntityUnion`.
//!
//! ```text
//! cargo run --example department_employees
//! ```
//!
//! The department row `(Sales, department)` and the employees `(Sales,
//! empid_<id>)` share a partition, so one transaction can add an employee *and*
//! bump the count, conditional on the department's ETag: either both happen or
//! neither does, and a concurrent change makes it fail instead of losing an update.
#![allow(clippy::print_stdout)]

use tables_client::mem::CallKind;
use tables_client::{Entity, EntityUnion, ErrorKind, IfMatch, Table, TableServiceClient};
use tables_examples::{ensure, BoxResult, Example};

const TABLE: &str = "Company";

/// The department: one row per partition, holding a denormalized count.
#[derive(Entity, Debug, Clone, PartialEq)]
#[entity(rename_all = "PascalCase")]
#[entity(partition_key = "{name}", row_key = "department")]
struct Department {
    name: String,
    manager: String,
    employee_count: i32,
}

/// An employee of the department, in the department's partition.
#[derive(Entity, Debug, Clone, PartialEq)]
#[entity(rename_all = "PascalCase")]
#[entity(partition_key = "{department}", row_key = "empid_{employee_id:06}")]
#[entity(unique_index(name = "email", row_key = "email_{email}"))]
struct Employee {
    department: String,
    employee_id: u32,
    name: String,
    email: String,
}

/// Every kind a department's partition holds: a query decodes each row to its
/// variant.
#[derive(EntityUnion, Debug, Clone, PartialEq)]
enum DepartmentRow {
    Department(Department),
    Employee(Employee),
}

fn employee(employee_id: u32, name: &str) -> Employee {
    Employee {
        department: "Sales".into(),
        employee_id,
        name: name.into(),
        email: format!("{}@contoso.com", name.to_lowercase()),
    }
}

/// Hires `e`: inserts it and bumps the count in one transaction, conditional on the
/// department's ETag; on a lost race, re-reads and tries again.
async fn hire(service: &TableServiceClient, e: &Employee) -> BoxResult<u32> {
    let departments: Table<Department> = service.table(TABLE);
    for attempt in 1..=10 {
        let current = departments
            .get(Department::key(&e.department)?)
            .await?
            .ok_or("the department is missing")?;
        let mut department = current.value;
        department.employee_count += 1;
        let result = departments
            .transaction(&department)
            .insert(e)
            .replace(&department, IfMatch::Etag(current.etag))
            .submit()
            .await;
        match result {
            Ok(_) => return Ok(attempt),
            Err(err) if err.kind() == ErrorKind::PreconditionFailed => continue,
            Err(err) => return Err(err.into()),
        }
    }
    Err("could not hire after 10 attempts".into())
}

/// The count stored on the department, and the employees actually in its partition,
/// both read in one partition query through the union.
async fn read_back(service: &TableServiceClient) -> BoxResult<(i32, Vec<Employee>)> {
    let rows = service
        .table::<DepartmentRow>(TABLE)
        .query()
        .partition("Sales")
        .collect()
        .await?;
    let mut count = None;
    let mut staff = Vec::new();
    for row in rows {
        match row {
            DepartmentRow::Department(d) => count = Some(d.employee_count),
            DepartmentRow::Employee(e) => staff.push(e),
        }
    }
    Ok((count.ok_or("no department row")?, staff))
}

#[tokio::main]
async fn main() -> BoxResult<()> {
    tables_examples::run(department_employees).await
}

async fn department_employees(example: Example) -> BoxResult<()> {
    let service = example.service();
    let departments: Table<Department> = service.table(TABLE);
    departments.create_if_not_exists().await?;

    // 1. The department, with no employees yet.
    departments
        .insert(&Department {
            name: "Sales".into(),
            manager: "Ann Jones".into(),
            employee_count: 0,
        })
        .await?;
    println!("\n1. Inserted department Sales with EmployeeCount 0.");

    // 2. Hire three employees: each is one transaction of two writes (plus the
    //    employee's same-partition email copy).
    println!(
        "\n2. Hiring: insert the employee + replace the department (If-Match) in one transaction."
    );
    for (id, name) in [(223, "Ann"), (224, "Raj"), (231, "Mia")] {
        let attempts = hire(&service, &employee(id, name)).await?;
        println!("   Hired {name} (employee {id}) in {attempts} attempt(s).");
    }
    let (count, staff) = read_back(&service).await?;
    ensure(count == 3 && staff.len() == 3, "three hires, count 3")?;

    // 3. A lost race: two writers read the department, both try to hire. The
    //    second one's transaction fails as a whole: its employee is not written.
    let seen = departments
        .get(Department::key("Sales")?)
        .await?
        .ok_or("the department is missing")?;
    let mut bumped = seen.value.clone();
    bumped.employee_count += 1;
    service
        .transaction(TABLE, "Sales")
        .insert(&employee(240, "Leo"))
        .replace(&bumped, IfMatch::Etag(seen.etag.clone()))
        .submit()
        .await?;
    let late = employee(241, "Zoe");
    let lost = service
        .transaction(TABLE, "Sales")
        .insert(&late)
        .replace(&bumped, IfMatch::Etag(seen.etag.clone()))
        .submit()
        .await;
    let err = match lost {
        Ok(_) => return Err("a transaction with a stale ETag was accepted".into()),
        Err(err) => err,
    };
    let zoe = service
        .table::<Employee>(TABLE)
        .get(Employee::key("Sales", late.employee_id)?)
        .await?;
    println!(
        "\n3. Two hires from the same read: the first commits, the second fails with {:?} at item {} (its replace); Zoe was not written: {}.",
        err.kind(),
        err.batch_index().map_or_else(|| String::from("?"), |i| i.to_string()),
        zoe.is_none()
    );
    ensure(
        err.kind() == ErrorKind::PreconditionFailed,
        "the stale ETag is refused",
    )?;
    ensure(
        err.batch_index() == Some(1),
        "the error names the caller's item: the replace",
    )?;
    ensure(zoe.is_none(), "a failed transaction writes nothing")?;
    // The loser re-reads and retries, as `hire` does.
    hire(&service, &late).await?;

    // 4. Leaving: delete the employee and decrement the count, atomically.
    let current = departments
        .get(Department::key("Sales")?)
        .await?
        .ok_or("the department is missing")?;
    let mut department = current.value;
    department.employee_count -= 1;
    departments
        .transaction(&department)
        .delete(Employee::key("Sales", 224)?, IfMatch::Any)
        .replace(&department, IfMatch::Etag(current.etag))
        .submit()
        .await?;
    println!("\n4. Employee 224 left: delete + replace(If-Match) in one transaction.");

    // 5. A transaction is checked before anything is sent: one partition only.
    let elsewhere = Employee {
        department: "Marketing".into(),
        ..employee(300, "Ines")
    };
    let batches_before = example.faults().calls_of(CallKind::Batch);
    let invalid = service
        .transaction(TABLE, "Sales")
        .insert(&employee(301, "Tom"))
        .insert(&elsewhere)
        .submit()
        .await;
    let err = match invalid {
        Ok(_) => return Err("a transaction across partitions was accepted".into()),
        Err(err) => err,
    };
    let tom = service
        .table::<Employee>(TABLE)
        .get(Employee::key("Sales", 301)?)
        .await?;
    println!(
        "\n5. A transaction with an entity of another partition fails before anything is sent: {:?} at item {}.",
        err.kind(),
        err.batch_index().map_or_else(|| String::from("?"), |i| i.to_string())
    );
    ensure(
        err.batch_index() == Some(1),
        "the error names the offending item",
    )?;
    ensure(
        tom.is_none(),
        "nothing of a rejected transaction is written",
    )?;
    let batches_after = example.faults().calls_of(CallKind::Batch);
    ensure(
        batches_before == batches_after,
        "the invalid transaction never reached the engine",
    )?;

    // 6. Read the partition back through the union: one query, each row decoded to
    //    its variant (index copies are not rows of the union).
    let (count, staff) = read_back(&service).await?;
    println!("\n6. Partition Sales through the union DepartmentRow:");
    println!("   Department: EmployeeCount = {count}");
    for e in &staff {
        println!("   Employee:   {} {}", e.employee_id, e.name);
    }
    let ids: Vec<u32> = staff.iter().map(|e| e.employee_id).collect();
    ensure(
        ids == [223, 231, 240, 241],
        "the employees hired and not gone",
    )?;
    ensure(
        usize::try_from(count).ok() == Some(staff.len()),
        "EmployeeCount equals the number of employees",
    )?;

    println!("\ndepartment_employees finished: every check passed.");
    Ok(())
}
