//! Quickstart: the core operations of the `tables` SDK, on the in-memory engine.
//!
//! ```text
//! cargo run --example quickstart
//! ```
//!
//! Creates a table, inserts employees across two partitions, reads one back by key,
//! runs a filtered partition query, pages through a query with continuation tokens,
//! submits an entity group transaction, and handles an ETag conflict by its kind.
#![allow(clippy::print_stdout)]

use std::error::Error as StdError;

use tables_client::{
    col, DateTime, DynamicEntity, EntityKey, ErrorKind, IfMatch, QuerySpec, Value, WriteOp,
};
use tables_examples::EngineChoice;

type BoxResult<T> = Result<T, Box<dyn StdError>>;

const TABLE: &str = "Employees";

/// (department, employee id, first name, last name, age)
const EMPLOYEES: [(&str, u32, &str, &str, i32); 6] = [
    ("Marketing", 102, "Ines", "Okafor", 41),
    ("Marketing", 117, "Tom", "Berg", 28),
    ("Sales", 223, "Ana", "Jones", 34),
    ("Sales", 224, "Raj", "Patel", 29),
    ("Sales", 231, "Mia", "Smith", 52),
    ("Sales", 240, "Leo", "Novak", 37),
];

fn employee_key(department: &str, id: u32) -> EntityKey {
    // Zero-padded, so the RowKey's string order is the numeric order.
    EntityKey::new(department, format!("empid_{id:06}"))
}

fn employee(
    department: &str,
    id: u32,
    first: &str,
    last: &str,
    age: i32,
) -> BoxResult<DynamicEntity> {
    let key = employee_key(department, id);
    let hired =
        DateTime::from_ymd_hms(2015 + age % 10, 3, 1, 9, 0, 0).ok_or("hire date out of range")?;
    Ok(DynamicEntity::new(key.partition_key, key.row_key)
        .with("FirstName", first)
        .with("LastName", last)
        .with("Age", age)
        .with("Email", format!("{}@contoso.com", first.to_lowercase()))
        .with("Hired", hired))
}

/// Turns a broken promise of the SDK into an error (the example checks what it shows).
fn ensure(condition: bool, what: &str) -> BoxResult<()> {
    if condition {
        Ok(())
    } else {
        Err(format!("quickstart check failed: {what}").into())
    }
}

fn age_of(entity: &DynamicEntity) -> String {
    entity
        .get("Age")
        .and_then(|v| i32::try_from(v).ok())
        .map_or_else(|| String::from("?"), |age| age.to_string())
}

fn name_of(entity: &DynamicEntity) -> String {
    let text = |name: &str| match entity.get(name) {
        Some(Value::String(s)) => s.clone(),
        _ => String::from("?"),
    };
    format!("{} {}", text("FirstName"), text("LastName"))
}

#[tokio::main]
async fn main() -> BoxResult<()> {
    let choice = EngineChoice::from_env();
    println!("{}", choice.describe());
    let engine = choice.open();

    // 1. A table, and employees in two partitions (one per department).
    engine.create_table(TABLE).await?;
    for (department, id, first, last, age) in EMPLOYEES {
        let entity = employee(department, id, first, last, age)?;
        engine.write(TABLE, &WriteOp::Insert(entity)).await?;
    }
    println!(
        "\n1. Created table {TABLE} and inserted {} employees in partitions Marketing and Sales.",
        EMPLOYEES.len()
    );

    // 2. A point read: PartitionKey + RowKey, the fastest lookup there is.
    let key = employee_key("Sales", 223);
    let jones = engine
        .get_entity(TABLE, &key, None)
        .await?
        .ok_or("employee 223 was just inserted but is missing")?;
    println!(
        "\n2. Point get {key}: {} (ETag {})",
        name_of(&jones),
        jones.etag.as_ref().map_or("-", |e| e.as_str())
    );

    // 3. A partition query with a filter on a property.
    let filter = col("PartitionKey").eq("Sales").and(col("Age").gt(30));
    println!("\n3. Query with $filter={}", filter.to_odata());
    let over_30 = QuerySpec::new().filter(filter);
    let (mut token, mut found) = (None, 0);
    loop {
        let page = engine.query(TABLE, &over_30, token.as_ref()).await?;
        for e in &page.items {
            println!("   {} {:<10} age {}", e.row_key, name_of(e), age_of(e));
        }
        found += page.items.len();
        token = page.continuation;
        if token.is_none() {
            break;
        }
    }
    let expected = EMPLOYEES
        .iter()
        .filter(|e| e.0 == "Sales" && e.4 > 30)
        .count();
    ensure(
        found == expected,
        "the filter must return exactly the Sales employees over 30",
    )?;

    // 4. Paging: $top is a page size. Keep asking while a continuation token comes
    //    back; a token can be stored as text and resumed later.
    let small_pages = QuerySpec::new().select(["FirstName", "LastName"]).top(2);
    println!("\n4. Paging through the whole table, 2 entities per page:");
    let (mut token, mut page_number, mut seen) = (None, 0, 0);
    loop {
        let page = engine.query(TABLE, &small_pages, token.as_ref()).await?;
        page_number += 1;
        seen += page.items.len();
        let names: Vec<String> = page.items.iter().map(name_of).collect();
        let next = page.continuation.as_ref().map(ToString::to_string);
        println!(
            "   page {page_number}: {names:?}, next token {}",
            next.as_deref().unwrap_or("none (last page)")
        );
        // Round-trip the token through its text form, as a web app would.
        token = next.map(|text| text.parse()).transpose()?;
        if token.is_none() {
            break;
        }
    }
    ensure(
        seen == EMPLOYEES.len(),
        "paging must visit every entity once",
    )?;
    println!("   {seen} entities in {page_number} pages.");

    // 5. An entity group transaction: several writes to one partition, all or none.
    let hired_today = DynamicEntity::new("Marketing", "empid_000130")
        .with("FirstName", "Zoe")
        .with("LastName", "Adams")
        .with("Age", 25)
        .with("Hired", DateTime::now());
    let promotion = DynamicEntity::new("Marketing", "empid_000117").with("Title", "Lead");
    let batch = [
        WriteOp::Insert(hired_today),
        WriteOp::Merge {
            entity: promotion,
            if_match: IfMatch::Any,
        },
        WriteOp::Delete {
            key: employee_key("Marketing", 102),
            if_match: IfMatch::Any,
        },
    ];
    let outcomes = engine.submit_batch(TABLE, &batch).await?;
    println!(
        "\n5. Batch in partition Marketing: insert, merge, delete -> {} outcomes.",
        outcomes.len()
    );
    // A batch that touches two partitions is rejected before anything is written.
    let mixed = [
        WriteOp::UpsertMerge(DynamicEntity::new("Marketing", "empid_000117").with("Age", 29)),
        WriteOp::UpsertMerge(DynamicEntity::new("Sales", "empid_000224").with("Age", 30)),
    ];
    match engine.submit_batch(TABLE, &mixed).await {
        Err(e) if e.kind() == ErrorKind::InvalidBatch => {
            let berg = engine
                .get_entity(TABLE, &employee_key("Marketing", 117), None)
                .await?
                .ok_or("employee 117 vanished")?;
            ensure(age_of(&berg) == "28", "a rejected batch must write nothing")?;
            println!(
                "   A batch across two partitions fails with {:?} at operation {}; nothing was written.",
                e.kind(),
                e.batch_index().map_or_else(|| String::from("?"), |i| i.to_string())
            );
        }
        Err(e) => return Err(e.into()),
        Ok(_) => return Err("a batch across two partitions was accepted".into()),
    }

    // 6. Optimistic concurrency: a replace conditional on the ETag read in step 2.
    let stale = jones.etag.clone().ok_or("a stored entity has an ETag")?;
    let birthday = jones.clone().with("Age", 35);
    engine
        .write(
            TABLE,
            &WriteOp::Replace {
                entity: birthday,
                if_match: IfMatch::Etag(stale.clone()),
            },
        )
        .await?;
    println!("\n6. Replaced {key} with If-Match on its ETag: ok.");
    // Someone else's update with the same, now stale, ETag must fail...
    let lost_update = jones.clone().with("Email", "ana.jones@contoso.com");
    match engine
        .write(
            TABLE,
            &WriteOp::Replace {
                entity: lost_update,
                if_match: IfMatch::Etag(stale),
            },
        )
        .await
    {
        Err(e) if e.kind() == ErrorKind::PreconditionFailed => {
            println!(
                "   A second replace with the old ETag fails with {:?}: re-read and retry.",
                e.kind()
            );
            // ...so it re-reads and applies its change to the current version.
            let current = engine
                .get_entity(TABLE, &key, None)
                .await?
                .ok_or("employee 223 vanished")?;
            let etag = current.etag.clone().ok_or("a stored entity has an ETag")?;
            let retried = WriteOp::Merge {
                entity: DynamicEntity::new(key.partition_key.clone(), key.row_key.clone())
                    .with("Email", "ana.jones@contoso.com"),
                if_match: IfMatch::Etag(etag),
            };
            engine.write(TABLE, &retried).await?;
            let after = engine
                .get_entity(TABLE, &key, None)
                .await?
                .ok_or("employee 223 vanished")?;
            let email = after.get("Email").and_then(|v| String::try_from(v).ok());
            ensure(
                age_of(&after) == "35" && email.as_deref() == Some("ana.jones@contoso.com"),
                "the merge must keep the replaced age and add the email",
            )?;
            println!(
                "   Retried as a merge on the fresh ETag: age {}, email {}; both updates kept.",
                age_of(&after),
                email.unwrap_or_default()
            );
        }
        Err(e) => return Err(e.into()),
        Ok(_) => return Err("a replace with a stale ETag was accepted".into()),
    }

    println!("\nQuickstart finished.");
    Ok(())
}
