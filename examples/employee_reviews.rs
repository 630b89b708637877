//! Compound keys: an employee's reviews under `empid_<id>_<year>`, all of them (or
//! some years) by one RowKey range.
//!
//! ```text
//! cargo run --example employee_reviews
//! ```
//!
//! The RowKey `empid_{employee_id:06}_{year:04}` keeps an employee's reviews next to
//! each other, oldest year first, so "every review of employee 123" is the range
//! `RowKey ge 'empid_000123' and RowKey lt 'empid_000124'`: one partition, one
//! range, no filter on properties. A projection (`$select`) reads only the ratings.
#![allow(clippy::print_stdout)]

use tables_client::{BulkMode, Entity, Table};
use tables_examples::{ensure, BoxResult, Example};

const TABLE: &str = "Reviews";

/// A yearly review of an employee.
#[derive(Entity, Debug, Clone, PartialEq)]
#[entity(rename_all = "PascalCase")]
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

/// The same rows, reading only the rating: a projection of `EmployeeReview` (same
/// kind, same keys, fewer fields).
#[derive(Entity, Debug, Clone, PartialEq)]
#[entity(kind = "EmployeeReview", rename_all = "PascalCase")]
#[entity(
    partition_key = "{department}",
    row_key = "empid_{employee_id:06}_{year:04}"
)]
struct ReviewRating {
    department: String,
    employee_id: u32,
    year: u16,
    rating: u8,
}

fn review(department: &str, employee_id: u32, year: u16) -> EmployeeReview {
    let rating = u8::try_from((employee_id + u32::from(year)) % 5 + 1).unwrap_or(3);
    EmployeeReview {
        department: department.into(),
        employee_id,
        year,
        rating,
        comments: format!("{year}: rated {rating} by the manager of {department}"),
    }
}

fn years(reviews: &[EmployeeReview]) -> Vec<u16> {
    reviews.iter().map(|r| r.year).collect()
}

#[tokio::main]
async fn main() -> BoxResult<()> {
    tables_examples::run(employee_reviews).await
}

async fn employee_reviews(example: Example) -> BoxResult<()> {
    let service = example.service();
    let reviews: Table<EmployeeReview> = service.table(TABLE);
    reviews.create_if_not_exists().await?;

    // 1. Load every review with the bulk writer: it groups rows by partition and
    //    sends each partition's rows as entity group transactions of up to 100.
    let mut all = Vec::new();
    for (department, ids) in [
        ("Sales", &[122u32, 123, 124][..]),
        ("Marketing", &[117][..]),
    ] {
        for &id in ids {
            for year in 2011..=2014 {
                all.push(review(department, id, year));
            }
        }
    }
    let report = service
        .bulk_writer::<EmployeeReview>(TABLE)
        .mode(BulkMode::Insert)
        .write_all(all.clone())
        .await?;
    println!(
        "\n1. Bulk-inserted {} reviews in {} transactions (one per partition here).",
        all.len(),
        report.chunks.len()
    );
    for chunk in &report.chunks {
        println!(
            "   partition {:<9} {} reviews: {}",
            chunk.partition_key,
            chunk.items.len(),
            if chunk.is_written() { "ok" } else { "failed" }
        );
    }
    ensure(
        report.chunks.len() == 2 && report.is_complete(),
        "two partitions, two successful transactions",
    )?;

    // 2. One review: a point read by the compound key.
    let key = EmployeeReview::key("Sales", 123, 2012)?;
    let one = reviews
        .get(key.clone())
        .await?
        .ok_or("the review is missing")?;
    println!("\n2. get {key}: {:?}", one.value.comments);
    ensure(
        one.value == review("Sales", 123, 2012),
        "the point read finds the review",
    )?;

    // 3. Every review of employee 123: one RowKey range in one partition.
    let range = EmployeeReview::employee_id_range(123..=123)?;
    println!(
        "\n3. All reviews of 123: {}",
        range.row_key_filter().to_odata()
    );
    let of_123 = reviews
        .query()
        .partition("Sales")
        .row_range(range.clone())
        .collect()
        .await?;
    println!("   -> years {:?}", years(&of_123));
    ensure(
        years(&of_123) == [2011, 2012, 2013, 2014],
        "all four years of 123, in order",
    )?;
    ensure(
        of_123.iter().all(|r| r.employee_id == 123),
        "no review of 122 or 124 in the range",
    )?;

    // 4. The same range, reading only the ratings ($select).
    let ratings = reviews
        .query()
        .partition("Sales")
        .row_range(range)
        .select::<ReviewRating>()
        .collect()
        .await?;
    let shown: Vec<String> = ratings
        .iter()
        .map(|r| format!("{}: {}", r.year, r.rating))
        .collect();
    println!(
        "\n4. Ratings of 123 only, with $select: {}",
        shown.join(", ")
    );
    let expected: Vec<u8> = of_123.iter().map(|r| r.rating).collect();
    let got: Vec<u8> = ratings.iter().map(|r| r.rating).collect();
    ensure(got == expected, "the projection reads the same ratings")?;

    // 5. Some years of one employee: a range over the second placeholder.
    let recent = EmployeeReview::year_range(123, 2013..)?;
    println!(
        "\n5. Reviews of 123 since 2013: {}",
        recent.row_key_filter().to_odata()
    );
    let since_2013 = reviews
        .query()
        .partition("Sales")
        .row_range(recent)
        .collect()
        .await?;
    println!("   -> years {:?}", years(&since_2013));
    ensure(years(&since_2013) == [2013, 2014], "2013 and 2014 only")?;

    println!("\nemployee_reviews finished: every check passed.");
    Ok(())
}
