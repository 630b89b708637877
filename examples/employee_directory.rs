//! Employee directory: a primary key, an intra-partition index, an inter-partition
//! index, lookups and ranges (the first patterns of
//! <https://learn.microsoft.com/azure/storage/tables/table-storage-design-patterns>).
//!
//! ```text
//! cargo run --example employee_directory
//! ```
//!
//! Employees live under `(department, empid_<id>)`. Two secondary indexes keep
//! copies of each employee under other keys:
//!
//! - `email`: a full copy in the same partition, `(department, email_<email>)`,
//!   written in the same entity group transaction as the employee (always
//!   consistent), for "find by email within a department";
//! - `by_email`: a partial copy in a partition of its own, `(email_<email>,
//!   employee)`, kept eventually consistent, for "find by email" without knowing the
//!   department (and spreading those lookups over many partitions).
#![allow(clippy::print_stdout)]

use tables_client::{Entity, IfMatch, Table};
use tables_examples::{count_of, ensure, raw_rows, BoxResult, Example};

const TABLE: &str = "Employees";

/// An employee, with its key design stated once, on the type.
#[derive(Entity, Debug, Clone, PartialEq)]
#[entity(kind = "Employee", rename_all = "PascalCase")]
#[entity(partition_key = "{department}", row_key = "empid_{employee_id:06}")]
#[entity(unique_index(name = "email", row_key = "email_{email}"))]
#[entity(unique_index(
    name = "by_email",
    partition_key = "email_{email}",
    row_key = "employee",
    include(first_name, last_name)
))]
struct Employee {
    department: String,
    employee_id: u32,
    first_name: String,
    last_name: String,
    age: i32,
    email: String,
}

/// (department, id, first name, last name, age)
const STAFF: [(&str, u32, &str, &str, i32); 7] = [
    ("Marketing", 102, "Ines", "Okafor", 41),
    ("Marketing", 117, "Tom", "Berg", 28),
    ("Sales", 152, "Kim", "Jones", 45),
    ("Sales", 223, "Ann", "Jones", 34),
    ("Sales", 224, "Raj", "Patel", 29),
    ("Sales", 231, "Mia", "Smith", 52),
    ("Sales", 240, "Leo", "Novak", 37),
];

fn employee((department, employee_id, first, last, age): (&str, u32, &str, &str, i32)) -> Employee {
    Employee {
        department: department.into(),
        employee_id,
        first_name: first.into(),
        last_name: last.into(),
        age,
        email: format!(
            "{}{}@contoso.com",
            last.to_lowercase(),
            &first[..1].to_lowercase()
        ),
    }
}

/// Whether a stored row is employee `id`'s primary or one of its copies by `email`.
fn is_about(row: &tables_client::DynamicEntity, id: u32, email: &str) -> bool {
    row.row_key == format!("empid_{id:06}")
        || row.row_key.contains(email)
        || row.partition_key.contains(email)
}

fn ids(employees: &[Employee]) -> Vec<u32> {
    employees.iter().map(|e| e.employee_id).collect()
}

#[tokio::main]
async fn main() -> BoxResult<()> {
    tables_examples::run(employee_directory).await
}

async fn employee_directory(example: Example) -> BoxResult<()> {
    let service = example.service();
    let employees: Table<Employee> = service.table(TABLE);

    // 1. Create the table and insert: each insert writes the employee and its
    //    copies.
    employees.create_if_not_exists().await?;
    for staff in STAFF {
        employees.insert(&employee(staff)).await?;
    }
    let rows = raw_rows(&service, TABLE).await?;
    println!(
        "\n1. Inserted {} employees. Table {TABLE} now holds {} rows:",
        STAFF.len(),
        rows.len()
    );
    for row in rows.iter().filter(|row| is_about(row, 223, "jonesa@")) {
        println!(
            "   ({}, {}) {}",
            row.partition_key,
            row.row_key,
            tables_examples::entity_type(row)
        );
    }
    println!("   ... (above: the rows of employee 223, Ann Jones)");
    let n = STAFF.len();
    ensure(count_of(&rows, "Employee") == n, "one primary per employee")?;
    ensure(
        count_of(&rows, "Employee@email") == n,
        "one email copy per employee",
    )?;
    ensure(
        count_of(&rows, "Employee@by_email") == n,
        "one by_email copy per employee",
    )?;
    ensure(
        count_of(&rows, "$intent") == 0,
        "no intent left once the inserts returned",
    )?;

    // 2. A point read by primary key: the fastest lookup there is.
    let key = Employee::key("Sales", 223)?;
    let ann = employees
        .get(key.clone())
        .await?
        .ok_or("employee 223 is missing")?;
    println!(
        "\n2. get {key}: {} {} <{}> (ETag {})",
        ann.value.first_name, ann.value.last_name, ann.value.email, ann.etag
    );
    ensure(
        ann.value == employee(STAFF[3]),
        "get returns what was inserted",
    )?;

    // 3. Lookups by email. Within a department: the same-partition full copy.
    let email = ann.value.email.clone();
    let in_sales = employees
        .get_by_index(Employee::email_key("Sales", &email)?)
        .await?
        .ok_or("the email copy is missing")?;
    println!(
        "\n3. get_by_index(Employee::email_key(..)) at {} -> employee {} (decoded from the full copy)",
        Employee::email_key("Sales", &email)?,
        in_sales.value.employee_id
    );
    ensure(
        in_sales.value == ann.value,
        "the email copy decodes to the employee",
    )?;
    // Anywhere: the partial copy in the email's own partition; the lookup follows it
    // to the primary, so every field is there although the copy holds only names.
    let anywhere = employees
        .get_by_index(Employee::by_email_key(&email)?)
        .await?
        .ok_or("the by_email copy is missing")?;
    println!(
        "   get_by_index(Employee::by_email_key(..)) at {} -> employee {} of {}, age {} (followed to the primary)",
        Employee::by_email_key(&email)?,
        anywhere.value.employee_id,
        anywhere.value.department,
        anywhere.value.age
    );
    ensure(
        anywhere.value == ann.value,
        "the partial copy leads to the employee",
    )?;
    let nobody = employees
        .get_by_index(Employee::by_email_key("nobody@contoso.com")?)
        .await?;
    ensure(nobody.is_none(), "an unknown email finds nobody")?;

    // 4. Ranges over the RowKey: ids 200..240 of Sales, from the derive's helper.
    let range = Employee::employee_id_range(200..240)?;
    println!("\n4. Range query: {}", range.row_key_filter().to_odata());
    let query = employees.query().partition("Sales").row_range(range);
    println!("   plan: {:?}", query.plan());
    let found = query.collect().await?;
    println!("   -> ids {:?}", ids(&found));
    ensure(
        ids(&found) == [223, 224, 231],
        "ids 200..240 of Sales in key order",
    )?;
    // Plus a filter on a property; the query sees primaries only, never copies.
    let over_35 = employees
        .query()
        .partition("Sales")
        .filter(Employee::AGE.gt(35))
        .collect()
        .await?;
    println!("   Sales over 35: ids {:?}", ids(&over_35));
    ensure(
        ids(&over_35) == [152, 231, 240],
        "the filter keeps Sales over 35",
    )?;
    let whole = employees.query().partition("Sales").collect().await?;
    ensure(
        whole.len() == 5,
        "a partition query yields each employee once, no copies",
    )?;

    // 5. Update an indexed field: the copies move with it.
    let mut renamed = ann.value.clone();
    renamed.email = "ann.jones@contoso.com".into();
    employees
        .replace(&renamed, IfMatch::Etag(ann.etag.clone()))
        .await?;
    let old_in_sales = employees
        .get_by_index(Employee::email_key("Sales", &email)?)
        .await?;
    let old_anywhere = employees
        .get_by_index(Employee::by_email_key(&email)?)
        .await?;
    let new_anywhere = employees
        .get_by_index(Employee::by_email_key(&renamed.email)?)
        .await?;
    println!(
        "\n5. Replaced employee 223's email (If-Match its ETag): old email found: {}, new email found: {}",
        old_in_sales.is_some() || old_anywhere.is_some(),
        new_anywhere.is_some()
    );
    ensure(
        old_in_sales.is_none() && old_anywhere.is_none(),
        "the old email's copies are gone",
    )?;
    ensure(
        new_anywhere.map(|v| v.value) == Some(renamed.clone()),
        "the new email finds the employee",
    )?;
    // The ETag read in step 2 is now stale: a replace with it is refused.
    let stale = employees
        .replace(&ann.value, IfMatch::Etag(ann.etag.clone()))
        .await;
    let stale_kind = stale.err().map(|e| e.kind());
    println!("   A replace with the old ETag is refused: {stale_kind:?}");
    ensure(
        stale_kind == Some(tables_client::ErrorKind::PreconditionFailed),
        "a stale ETag is refused",
    )?;

    // 6. Delete: the employee and all its copies go.
    employees.delete(key.clone(), IfMatch::Any).await?;
    let rows = raw_rows(&service, TABLE).await?;
    let left_of_223 = rows
        .iter()
        .filter(|row| is_about(row, 223, "ann.jones@"))
        .count();
    println!(
        "\n6. Deleted employee 223: {} rows left in {TABLE}, none of them about 223.",
        rows.len()
    );
    ensure(left_of_223 == 0, "a delete removes the employee's copies")?;
    ensure(
        rows.len() == 3 * (n - 1),
        "three rows per remaining employee",
    )?;
    ensure(
        !employees.delete_if_exists(key).await?,
        "deleting again reports that nothing was there",
    )?;

    println!("\nemployee_directory finished: every check passed.");
    Ok(())
}
