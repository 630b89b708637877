//! Quickstart: the core operations of the `tables` SDK, on the in-memory engine (or,
//! with `TABLES_CONNECTION_STRING` set, on that endpoint).
//!
//! ```text
//! cargo run --example quickstart
//! ```
//!
//! Derives an entity, creates a table, inserts employees across two partitions,
//! reads one back by key and by an index, runs a filtered partition query, pages
//! through a query with resumable tokens, submits an entity group transaction, and
//! handles an ETag conflict by its kind.
#![allow(clippy::print_stdout)]

use tables_client::{DateTime, Entity, ErrorKind, IfMatch, PageToken, Table};
use tables_examples::{ensure, BoxResult, Example};

const TABLE: &str = "Employees";

/// An employee: the key design is stated once, on the type. `department` becomes
/// the PartitionKey, `employee_id` the RowKey (zero-padded, so string order is
/// numeric order), and the `email` index keeps a copy of each employee under
/// `email_<email>` in the same partition.
#[derive(Entity, Debug, Clone, PartialEq)]
#[entity(kind = "Employee", rename_all = "PascalCase")]
#[entity(partition_key = "{department}", row_key = "empid_{employee_id:06}")]
#[entity(unique_index(name = "email", row_key = "email_{email}"))]
struct Employee {
    department: String,
    employee_id: u32,
    first_name: String,
    last_name: String,
    age: i32,
    email: String,
    #[entity(rename = "Hired")]
    hired: DateTime,
    title: Option<String>,
}

/// (department, employee id, first name, last name, age)
const EMPLOYEES: [(&str, u32, &str, &str, i32); 6] = [
    ("Marketing", 102, "Ines", "Okafor", 41),
    ("Marketing", 117, "Tom", "Berg", 28),
    ("Sales", 223, "Ana", "Jones", 34),
    ("Sales", 224, "Raj", "Patel", 29),
    ("Sales", 231, "Mia", "Smith", 52),
    ("Sales", 240, "Leo", "Novak", 37),
];

fn employee(
    (department, employee_id, first, last, age): (&str, u32, &str, &str, i32),
) -> BoxResult<Employee> {
    let hired =
        DateTime::from_ymd_hms(2015 + age % 10, 3, 1, 9, 0, 0).ok_or("hire date out of range")?;
    Ok(Employee {
        department: department.into(),
        employee_id,
        first_name: first.into(),
        last_name: last.into(),
        age,
        email: format!("{}@contoso.com", first.to_lowercase()),
        hired,
        title: None,
    })
}

fn name_of(e: &Employee) -> String {
    format!("{} {}", e.first_name, e.last_name)
}

#[tokio::main]
async fn main() -> BoxResult<()> {
    tables_examples::run(quickstart).await
}

async fn quickstart(example: Example) -> BoxResult<()> {
    let service = example.service();
    let employees: Table<Employee> = service.table(TABLE);

    // 1. A table, and employees in two partitions (one per department).
    employees.create_if_not_exists().await?;
    for row in EMPLOYEES {
        employees.insert(&employee(row)?).await?;
    }
    println!(
        "\n1. Created table {TABLE} and inserted {} employees in partitions Marketing and Sales.",
        EMPLOYEES.len()
    );

    // 2. A point read: PartitionKey + RowKey, the fastest lookup there is. The typed
    //    key builder takes exactly the key's fields.
    let key = Employee::key("Sales", 223)?;
    let jones = employees
        .get(key.clone())
        .await?
        .ok_or("employee 223 was just inserted but is missing")?;
    println!(
        "\n2. get {key}: {} (ETag {})",
        name_of(&jones.value),
        jones.etag
    );
    ensure(
        jones.value == employee(EMPLOYEES[2])?,
        "get returns what was inserted",
    )?;

    // 3. A lookup by a secondary index: the copy under email_ana@contoso.com.
    let by_email = employees
        .get_by_index(Employee::email_key("Sales", "ana@contoso.com")?)
        .await?
        .ok_or("the email index finds nobody")?;
    println!(
        "\n3. get_by_index(\"email\", ana@contoso.com): employee {}",
        by_email.value.employee_id
    );
    ensure(
        by_email.value == jones.value,
        "the index finds the same employee",
    )?;

    // 4. A partition query with a typed filter; it sees employees, never the copies.
    let query = employees
        .query()
        .partition("Sales")
        .filter(Employee::AGE.gt(30));
    println!("\n4. Query {:?}:", query.plan());
    let over_30 = query.collect().await?;
    for e in &over_30 {
        println!("   {:06} {:<10} age {}", e.employee_id, name_of(e), e.age);
    }
    let expected = EMPLOYEES
        .iter()
        .filter(|e| e.0 == "Sales" && e.4 > 30)
        .count();
    ensure(
        over_30.len() == expected,
        "the filter returns exactly the Sales employees over 30",
    )?;

    // 5. Paging: one page at a time, with a token that can be stored as text and
    //    resumed later (by another process, even). The last page's token is an end
    //    token: resumed, it gives nothing more, never the first page again.
    println!("\n5. Paging through the whole table, 2 employees per page:");
    let (mut token, mut page_number, mut seen): (Option<PageToken>, u32, usize) = (None, 0, 0);
    loop {
        // `order_in_client`: on Cosmos DB for Table, whose results come in any
        // order, the pages are cut from the rows ordered on the client (at most
        // 1,000 here); on Azure Storage it changes nothing.
        let page = employees
            .query()
            .order_in_client(1_000)
            .page_size(2)
            .page(token.as_ref())
            .await?;
        page_number += 1;
        seen += page.items.len();
        let names: Vec<String> = page.items.iter().map(|v| name_of(&v.value)).collect();
        // Round-trip the token through its text form, as a web app would.
        let next = page.next.to_string();
        println!("   page {page_number}: {names:?}, next token {next}");
        if page.is_last() {
            break;
        }
        token = Some(next.parse()?);
    }
    ensure(
        seen == EMPLOYEES.len(),
        "paging must visit every employee once",
    )?;
    println!("   {seen} employees in {page_number} pages.");

    // 6. An entity group transaction: several writes to one partition, all or none
    //    (the index copies ride along in the same transaction).
    let hired_today = Employee {
        employee_id: 130,
        first_name: "Zoe".into(),
        last_name: "Adams".into(),
        age: 25,
        email: "zoe@contoso.com".into(),
        hired: DateTime::now(),
        ..employee(EMPLOYEES[0])?
    };
    let promoted = Employee {
        title: Some("Lead".into()),
        ..employee(EMPLOYEES[1])?
    };
    let outcomes = employees
        .transaction(&hired_today)
        .insert(&hired_today)
        .replace(&promoted, IfMatch::Any)
        .delete::<Employee>(Employee::key("Marketing", 102)?, IfMatch::Any)
        .submit()
        .await?;
    println!(
        "\n6. Transaction in partition Marketing: insert, replace, delete -> {} outcomes.",
        outcomes.len()
    );
    ensure(outcomes.len() == 3, "one outcome per item")?;
    // A transaction that touches two partitions is rejected before anything is sent.
    let older_berg = Employee {
        age: 29,
        ..promoted.clone()
    };
    let older_patel = Employee {
        age: 30,
        ..employee(EMPLOYEES[3])?
    };
    let mixed = employees
        .transaction(&older_berg)
        .upsert(&older_berg)
        .upsert(&older_patel)
        .submit()
        .await;
    match mixed {
        Err(e) => {
            let berg = employees
                .get(Employee::key("Marketing", 117)?)
                .await?
                .ok_or("employee 117 vanished")?;
            ensure(
                berg.value.age == 28,
                "a rejected transaction writes nothing",
            )?;
            println!(
                "   A transaction across two partitions fails with {:?} at item {}; nothing was written.",
                e.kind(),
                e.batch_index().map_or_else(|| String::from("?"), |i| i.to_string())
            );
            ensure(
                e.batch_index() == Some(1),
                "the error names the offending item",
            )?;
        }
        Ok(_) => return Err("a transaction across two partitions was accepted".into()),
    }

    // 7. Optimistic concurrency: a replace conditional on the ETag read in step 2.
    let birthday = Employee {
        age: 35,
        ..jones.value.clone()
    };
    employees
        .replace(&birthday, IfMatch::Etag(jones.etag.clone()))
        .await?;
    println!("\n7. Replaced {key} with If-Match on its ETag: ok.");
    // Someone else's update with the same, now stale, ETag must fail...
    let new_email = Employee {
        email: "ana.jones@contoso.com".into(),
        ..jones.value.clone()
    };
    match employees
        .replace(&new_email, IfMatch::Etag(jones.etag.clone()))
        .await
    {
        Err(e) if e.kind() == ErrorKind::PreconditionFailed => {
            println!(
                "   A second replace with the old ETag fails with {:?}: `update` re-reads and retries.",
                e.kind()
            );
            // `update` reads, applies the change to the current version and writes
            // under that ETag, retrying if another writer gets there first.
            let after = employees
                .update(&key, |e| e.email = new_email.email.clone())
                .await?
                .value;
            ensure(
                after.age == 35 && after.email == "ana.jones@contoso.com",
                "the update keeps the new age and adds the email",
            )?;
            // The email index moved with the field.
            let old = employees
                .get_by_index(Employee::email_key("Sales", "ana@contoso.com")?)
                .await?;
            ensure(old.is_none(), "the old email's index copy is gone")?;
            println!(
                "   Updated on the fresh ETag: age {}, email {}; both changes kept.",
                after.age, after.email
            );
        }
        Err(e) => return Err(e.into()),
        Ok(_) => return Err("a replace with a stale ETag was accepted".into()),
    }

    println!("\nQuickstart finished.");
    Ok(())
}
