//! High-volume delete: sign-in records in a table per day, old days dropped as whole
//! tables.
//!
//! ```text
//! cargo run --example signin_per_day
//! ```
//!
//! Deleting millions of old rows one by one is slow and costs a request per row (or
//! per 100). Deleting a table is one request. So sign-ins go to a table per day
//! (`SignIns20240101`, `SignIns20240102`, ...); tables are created a few days ahead,
//! and keeping "the last N days" means dropping the tables of older days whole.
#![allow(clippy::print_stdout)]

use tables_client::{DateTime, Entity, ErrorKind, Period, PeriodicTables};
use tables_examples::{ensure, BoxResult, Example};

const PREFIX: &str = "SignIns";
/// Ticks (100 ns) in an hour.
const HOUR: i64 = 36_000_000_000;

/// One sign-in: by user, newest first within the user's partition of a day's table.
#[derive(Entity, Debug, Clone, PartialEq)]
#[entity(rename_all = "PascalCase")]
#[entity(partition_key = "{user}", row_key = "{at:rticks}")]
struct SignIn {
    user: String,
    at: DateTime,
    device: String,
    succeeded: bool,
}

fn day(d: u32) -> BoxResult<DateTime> {
    Ok(DateTime::from_ymd_hms(2024, 3, d, 0, 0, 0).ok_or("bad day")?)
}

fn after(t: DateTime, hours: i64) -> BoxResult<DateTime> {
    Ok(t.checked_add_ticks(hours * HOUR)
        .ok_or("date out of range")?)
}

/// The sign-ins of day `d`: each user signs in a few times.
fn sign_ins_of(d: u32) -> BoxResult<Vec<SignIn>> {
    let mut all = Vec::new();
    for (n, user) in ["ann", "raj", "mia"].into_iter().enumerate() {
        for visit in 0..3i64 {
            let hours = 8 + visit * 3 + i64::try_from(n)?;
            all.push(SignIn {
                user: user.into(),
                at: after(day(d)?, hours)?,
                device: ["laptop", "phone"][(visit % 2) as usize].into(),
                succeeded: (visit + i64::from(d)) % 4 != 0,
            });
        }
    }
    Ok(all)
}

#[tokio::main]
async fn main() -> BoxResult<()> {
    tables_examples::run(signin_per_day).await
}

async fn signin_per_day(example: Example) -> BoxResult<()> {
    let service = example.service();
    let days = PeriodicTables::new(&service, PREFIX, Period::Day)?;

    // 1. Create the tables of March 1 to 7 ahead of time.
    let created = days.create_ahead(day(1)?, 7).await?;
    println!("\n1. create_ahead(2024-03-01, 7) -> {created:?}");
    let mut expected = Vec::new();
    for d in 1..=7 {
        expected.push(days.table_name(day(d)?));
    }
    ensure(
        created == expected,
        "seven tables, one per day, named by the day",
    )?;
    ensure(
        days.table_name(after(day(3)?, 23)?) == "SignIns20240303",
        "any instant of a day maps to that day's table",
    )?;

    // 2. Record sign-ins: each goes to the table of its day.
    let mut written = 0;
    for d in 1..=7 {
        for s in sign_ins_of(d)? {
            days.table::<SignIn>(s.at).insert(&s).await?;
            written += 1;
        }
    }
    println!("\n2. Recorded {written} sign-ins over 7 days, each in its day's table.");

    // 3. Read one user's sign-ins of one day: a partition of a small table, newest
    //    first thanks to the reverse ticks.
    let march_5 = days.table::<SignIn>(day(5)?);
    let raj = march_5.query().partition("raj").collect().await?;
    let hours: Vec<u32> = raj.iter().map(|s| s.at.to_ymd_hms().3).collect();
    println!(
        "\n3. {}: raj signed in at hours {hours:?} (newest first)",
        march_5.name()
    );
    ensure(
        hours == [15, 12, 9],
        "raj's three sign-ins of the day, newest first",
    )?;

    // 4. Keep the last four days: drop every day that ended by March 4, 00:00, as
    //    whole tables (one request each, however many rows they hold).
    let dropped = days.drop_older_than(day(4)?).await?;
    println!("\n4. drop_older_than(2024-03-04) -> {dropped:?}");
    ensure(
        dropped == expected[..3],
        "March 1 to 3 ended by March 4 and are dropped",
    )?;
    let existing = days.existing().await?;
    let names: Vec<&str> = existing.iter().map(|(name, _)| name.as_str()).collect();
    println!("   still there: {names:?}");
    ensure(names == expected[3..], "March 4 to 7 remain")?;
    ensure(
        existing.first().map(|(_, start)| *start) == Some(day(4)?),
        "each table knows its day",
    )?;
    let gone = days
        .table::<SignIn>(day(2)?)
        .query()
        .partition("raj")
        .collect()
        .await;
    let gone = gone.err().map(|e| e.kind());
    println!("   reading March 2 now fails with {gone:?}");
    ensure(
        gone == Some(ErrorKind::TableNotFound),
        "a dropped day is gone",
    )?;

    // 5. The next day: roll the window forward (creating ahead is idempotent).
    let created = days.create_ahead(day(7)?, 3).await?;
    let dropped = days.drop_older_than(day(5)?).await?;
    println!("\n5. Next day: create_ahead(2024-03-07, 3) -> {created:?}; drop_older_than(2024-03-05) -> {dropped:?}");
    ensure(
        created == [days.table_name(day(8)?), days.table_name(day(9)?)],
        "only the missing days are created",
    )?;
    ensure(
        dropped == [days.table_name(day(4)?)],
        "only March 4 is dropped this time",
    )?;
    let names: Vec<String> = days.existing().await?.into_iter().map(|(n, _)| n).collect();
    println!("   tables now: {names:?}");
    ensure(names.len() == 5, "March 5 to 9")?;

    println!("\nsignin_per_day finished: every check passed.");
    Ok(())
}
