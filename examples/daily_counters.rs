//! Data series: a page's hits per hour of a day in one entity, one property per
//! hour, each hour counted with a Merge of that one property.
//!
//! ```text
//! cargo run --example daily_counters
//! ```
//!
//! The design guide stores a series in one entity rather than an entity per point:
//! one point query reads the day, and one Merge updates one hour under the entity's
//! ETag. `#[entity(series)]` on `hourly: [u32; 24]` stores `hourly_00` ..
//! `hourly_23`; `Table::set_point` sets one of them alone.
//!
//! The guide's own example, a count per day of the year, needs 365 properties: more
//! than one row holds. The type is then wide without saying so: each year is a base
//! row and one part row, written together and read back as one entity.
#![allow(clippy::print_stdout)]

use tables_client::{Entity, ErrorKind, IfMatch};
use tables_examples::{ensure, BoxResult, Example};

const TABLE: &str = "PageHits";

/// One page's hits on one day, by hour.
#[derive(Entity, Debug, Clone, PartialEq)]
#[entity(partition_key = "{page}", row_key = "{day}")]
struct PageHits {
    page: String,
    /// `yyyy-MM-dd`.
    day: String,
    #[entity(series)]
    hourly: [u32; 24],
}

/// A site's sign-ins per day of one year: 365 points, two rows.
#[derive(Entity, Debug, Clone, PartialEq)]
#[entity(partition_key = "{site}", row_key = "{year}")]
struct DailyCounts {
    site: String,
    year: String,
    #[entity(series)]
    daily: [u32; 365],
}

#[tokio::main]
async fn main() -> BoxResult<()> {
    tables_examples::run(daily_counters).await
}

async fn daily_counters(example: Example) -> BoxResult<()> {
    let service = example.service();
    service.create_table(TABLE).await?;
    let hits = service.table::<PageHits>(TABLE);

    // 1. The day starts at zero: one row, 24 properties.
    let day = PageHits {
        page: "home".into(),
        day: "2026-11-24".into(),
        hourly: [0; 24],
    };
    let first = hits
        .insert(&day)
        .await?
        .etag
        .ok_or("an insert returns its ETag")?;
    let key = PageHits::key("home", "2026-11-24")?;
    println!(
        "\n1. inserted home/2026-11-24 with {} hourly points",
        PageHits::HOURLY.len()
    );

    // 2. Count hits: each hour's counter is read, increased and written back alone,
    //    under the ETag of the read, so two counters never overwrite each other.
    for (hour, visits) in [(9usize, 3u32), (10, 5), (9, 2), (17, 4)] {
        let current = hits.get(&key).await?.ok_or("the day exists")?;
        let count = current.value.hourly[hour] + visits;
        hits.set_point(
            &key,
            PageHits::HOURLY,
            hour,
            count,
            IfMatch::Etag(current.etag),
        )
        .await?;
        println!("2. hour {hour:02}: +{visits} -> {count}");
    }
    let read = hits.get(&key).await?.ok_or("the day exists")?.value;
    ensure(read.hourly[9] == 5, "hour 09 counted twice: 3 + 2")?;
    ensure(
        read.hourly[10] == 5 && read.hourly[17] == 4,
        "hours 10 and 17 counted",
    )?;
    ensure(
        read.hourly.iter().sum::<u32>() == 14,
        "nothing else changed",
    )?;

    // 3. A writer still holding the first version is refused, and changes nothing.
    let stale = hits
        .set_point(&key, PageHits::HOURLY, 9, 0, IfMatch::Etag(first))
        .await;
    let refused = matches!(&stale, Err(e) if e.kind() == ErrorKind::PreconditionFailed);
    println!("3. a write under an older ETag: refused = {refused}");
    ensure(refused, "a stale ETag is refused")?;
    let after = hits.get(&key).await?.ok_or("the day exists")?.value;
    ensure(after == read, "the refused write changed nothing")?;

    // 4. Busy hours, by a filter on one point.
    let busy = hits
        .query()
        .filter(PageHits::HOURLY.point(9).ok_or("hour 9 exists")?.ge(5))
        .collect()
        .await?;
    println!("4. days with at least 5 hits at 09:00: {}", busy.len());
    ensure(busy.len() == 1, "the day is found by its 09:00 point")?;

    // 5. A year of daily counts: 365 points, more than a row holds, so each year is
    //    a base row and a part row, written in one transaction.
    let counts = service.table::<DailyCounts>(TABLE);
    let year = DailyCounts {
        site: "intranet".into(),
        year: "2026".into(),
        daily: [0; 365],
    };
    let etag = counts
        .insert(&year)
        .await?
        .etag
        .ok_or("an insert returns its ETag")?;
    let year_key = DailyCounts::key("intranet", "2026")?;
    counts
        .set_point(&year_key, DailyCounts::DAILY, 364, 42, IfMatch::Etag(etag))
        .await?;
    let rows = service
        .engine()
        .query(
            TABLE,
            &tables_client::QuerySpec::new()
                .filter(tables_client::Filter::partition_key("intranet")),
            None,
        )
        .await?
        .items;
    let read = counts.get(&year_key).await?.ok_or("the year exists")?.value;
    println!(
        "5. a year of 365 daily counts is {} rows; 31 December = {}",
        rows.len(),
        read.daily[364]
    );
    ensure(rows.len() == 2, "a base row and one part")?;
    ensure(
        read.daily[364] == 42 && read.daily[..364].iter().all(|d| *d == 0),
        "only 31 December changed",
    )?;
    Ok(())
}
