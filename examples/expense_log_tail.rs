//! Log tail: the newest entries first, from the key design alone.
//!
//! ```text
//! cargo run --example expense_log_tail
//! ```
//!
//! An employee's expenses live in one partition under
//! `(<employee id>, <reverse ticks of submitted>_<number>)`. The reverse ticks
//! (`{submitted:rticks}`) make the newest expense sort first, so "the 10 most
//! recent" is simply the first 10 rows of the partition: no sort, no scan of the
//! older ones.
#![allow(clippy::print_stdout)]

use tables_client::{DateTime, Entity, Row, Table};
use tables_examples::{ensure, BoxResult, Example};

const TABLE: &str = "Expenses";
const EMPLOYEE: &str = "000123";
/// Ticks (100 ns) in an hour.
const HOUR: i64 = 36_000_000_000;

/// One expense claim, newest first within the employee's partition.
#[derive(Entity, Debug, Clone, PartialEq)]
#[entity(rename_all = "PascalCase")]
#[entity(
    partition_key = "{employee_id}",
    row_key = "{submitted:rticks}_{number:06}"
)]
struct Expense {
    employee_id: String,
    submitted: DateTime,
    number: u32,
    amount: f64,
    description: String,
}

fn start() -> BoxResult<DateTime> {
    Ok(DateTime::from_ymd_hms(2024, 1, 1, 8, 0, 0).ok_or("start date out of range")?)
}

/// Expense `i`, submitted `7 * i` hours after the start.
fn expense(i: u32) -> BoxResult<Expense> {
    let submitted = start()?
        .checked_add_ticks(i64::from(i) * 7 * HOUR)
        .ok_or("date out of range")?;
    Ok(Expense {
        employee_id: EMPLOYEE.into(),
        submitted,
        number: i,
        amount: f64::from(i % 9) * 12.5 + 4.0,
        description: ["taxi", "hotel", "lunch", "train"][i as usize % 4].into(),
    })
}

fn when(t: DateTime) -> String {
    let (y, mo, d, h, mi, _) = t.to_ymd_hms();
    format!("{y}-{mo:02}-{d:02} {h:02}:{mi:02}")
}

#[tokio::main]
async fn main() -> BoxResult<()> {
    tables_examples::run(expense_log_tail).await
}

async fn expense_log_tail(example: Example) -> BoxResult<()> {
    let service = example.service();
    let expenses: Table<Expense> = service.table(TABLE);
    expenses.create_if_not_exists().await?;

    // 1. Write 30 expenses, in a shuffled order: the order comes from the keys.
    let mut written = Vec::new();
    for step in 0..30u32 {
        let i = (step * 11) % 30; // a permutation of 0..30
        let e = expense(i)?;
        expenses.insert(&e).await?;
        written.push(e);
    }
    println!(
        "\n1. Inserted {} expenses of employee {EMPLOYEE}, in no particular order.",
        written.len()
    );
    let sample = &written[0];
    println!(
        "   e.g. expense {} of {}: RowKey {}",
        sample.number,
        when(sample.submitted),
        sample.entity_key()?.row_key
    );

    // 2. The log tail: the first 10 rows of the partition are the newest 10. On
    //    Cosmos DB for Table, whose results come in any order, "the first 10" needs
    //    the partition read whole and ordered on the client: order_in_client says
    //    so, with a bound (on Azure Storage it changes nothing).
    let newest = expenses
        .query()
        .partition(EMPLOYEE)
        .order_in_client(1_000)
        .take(10)
        .collect()
        .await?;
    println!("\n2. query().partition(\"{EMPLOYEE}\").take(10):");
    for e in &newest {
        println!(
            "   #{:02}  {}  {:>7.2}  {}",
            e.number,
            when(e.submitted),
            e.amount,
            e.description
        );
    }
    let mut expected = written.clone();
    expected.sort_by_key(|e| std::cmp::Reverse(e.submitted));
    expected.truncate(10);
    ensure(
        newest == expected,
        "take(10) returns the 10 newest, newest first",
    )?;

    // 3. A time window, still newest first: the derive's range helper turns a range
    //    of instants into a RowKey range (reversed, so the bounds swap).
    let day = |d| DateTime::from_ymd_hms(2024, 1, d, 0, 0, 0).ok_or("bad day");
    let (from, until) = (day(3)?, day(5)?);
    let window = Expense::submitted_range(from..until)?;
    println!(
        "\n3. Expenses of January 3 and 4: {}",
        window.row_key_filter().to_odata()
    );
    let in_window = expenses
        .query()
        .partition(EMPLOYEE)
        .row_range(window)
        .collect()
        .await?;
    let numbers: Vec<u32> = in_window.iter().map(|e| e.number).collect();
    println!("   -> expenses {numbers:?}");
    let mut wanted: Vec<&Expense> = written
        .iter()
        .filter(|e| (from..until).contains(&e.submitted))
        .collect();
    wanted.sort_by_key(|e| std::cmp::Reverse(e.submitted));
    let wanted: Vec<u32> = wanted.iter().map(|e| e.number).collect();
    ensure(
        !numbers.is_empty() && numbers == wanted,
        "the window holds exactly the expenses of those two days, newest first",
    )?;

    // 4. A new expense goes straight to the top of the tail.
    let latest = Expense {
        submitted: DateTime::from_ymd_hms(2024, 2, 1, 9, 30, 0).ok_or("bad date")?,
        number: 99,
        ..expense(0)?
    };
    expenses.insert(&latest).await?;
    let top = expenses
        .query()
        .partition(EMPLOYEE)
        .order_in_client(1_000)
        .first()
        .await?
        .ok_or("the partition is empty")?;
    println!(
        "\n4. Inserted expense #{} of {}; the first row of the partition is now #{}.",
        latest.number,
        when(latest.submitted),
        top.number
    );
    ensure(top == latest, "the newest expense is the first row")?;

    println!("\nexpense_log_tail finished: every check passed.");
    Ok(())
}
