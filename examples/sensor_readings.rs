//! Wide entities: a sensor's readings of one day, one per minute (1,440
//! properties), as one entity spread over several rows of its partition.
//!
//! ```text
//! cargo run --example sensor_readings
//! ```
//!
//! A row holds at most 252 properties and 1 MiB. The design guide's answer for a
//! bigger entity is to split it over several rows of one partition and to write them
//! together in one entity group transaction. `#[entity(wide)]` does that: the base
//! row keeps the keys and tag, parts `day ~01`, `day ~02`, .. hold the rest, and the
//! client reads the rows back as one entity, with one range query, under one ETag.
#![allow(clippy::print_stdout)]

use tables_client::{Entity, ErrorKind, IfMatch, QuerySpec};
use tables_examples::{ensure, BoxResult, Example};

const TABLE: &str = "SensorReadings";

/// One sensor's readings on one day, by minute.
#[derive(Entity, Debug, Clone, PartialEq)]
#[entity(partition_key = "{sensor}", row_key = "{day}", wide)]
struct SensorDay {
    sensor: String,
    /// `yyyy-MM-dd`.
    day: String,
    unit: String,
    #[entity(series)]
    minutes: [f64; 1440],
}

fn day(sensor: &str, day: &str, base: f64) -> SensorDay {
    let mut minutes = [0.0; 1440];
    for (minute, reading) in minutes.iter_mut().enumerate() {
        *reading = base + f64::from(u32::try_from(minute % 60).unwrap_or(0)) / 10.0;
    }
    SensorDay {
        sensor: sensor.into(),
        day: day.into(),
        unit: "°C".into(),
        minutes,
    }
}

/// The rows the table holds for the sensor, as the storage engine has them.
async fn stored_rows(
    service: &tables_client::TableServiceClient,
) -> BoxResult<Vec<tables_client::DynamicEntity>> {
    let spec = QuerySpec::new().filter(tables_client::Filter::partition_key("boiler-7"));
    Ok(service.engine().query(TABLE, &spec, None).await?.items)
}

#[tokio::main]
async fn main() -> BoxResult<()> {
    tables_examples::run(sensor_readings).await
}

async fn sensor_readings(example: Example) -> BoxResult<()> {
    let service = example.service();
    service.create_table(TABLE).await?;
    let readings = service.table::<SensorDay>(TABLE);

    // 1. One insert writes every row of the day in one transaction.
    let monday = day("boiler-7", "2026-11-23", 20.0);
    let first = readings
        .insert(&monday)
        .await?
        .etag
        .ok_or("an insert returns its ETag")?;
    readings
        .insert(&day("boiler-7", "2026-11-24", 30.0))
        .await?;
    let rows = stored_rows(&service).await?;
    let keys: Vec<&str> = rows.iter().map(|r| r.row_key.as_str()).collect();
    println!(
        "\n1. two days of 1,440 readings stored as {} rows: {keys:?}",
        rows.len()
    );
    ensure(rows.len() == 12, "each day takes a base row and five parts")?;

    // 2. A point read returns the whole day.
    let key = SensorDay::key("boiler-7", "2026-11-23")?;
    let read = readings.get(&key).await?.ok_or("the day exists")?;
    ensure(read.value == monday, "the day reads back whole")?;
    ensure(read.etag == first, "the base row's ETag is the day's")?;
    println!(
        "2. read 2026-11-23 back whole: {} readings",
        read.value.minutes.len()
    );

    // 3. A query returns whole days, and judges a filter over a minute stored on a
    //    part row against the whole day.
    let hot = readings
        .query()
        .partition("boiler-7")
        .filter(
            SensorDay::MINUTES
                .point(1439)
                .ok_or("minute 1439")?
                .gt(30.0),
        )
        .collect()
        .await?;
    println!("3. days above 30 °C at 23:59: {}", hot.len());
    ensure(
        hot.len() == 1 && hot[0].day == "2026-11-24",
        "the second day is found by its last minute",
    )?;

    // 4. One reading changes under the day's ETag; a writer with the older ETag is
    //    refused and changes nothing.
    readings
        .set_point(
            &key,
            SensorDay::MINUTES,
            1200,
            99.5,
            IfMatch::Etag(first.clone()),
        )
        .await?;
    let stale = readings
        .set_point(&key, SensorDay::MINUTES, 0, -1.0, IfMatch::Etag(first))
        .await;
    let refused = matches!(&stale, Err(e) if e.kind() == ErrorKind::PreconditionFailed);
    println!("4. minute 1200 set to 99.5; a write under the older ETag refused = {refused}");
    ensure(refused, "a stale ETag is refused")?;
    let after = readings.get(&key).await?.ok_or("the day exists")?.value;
    ensure(
        after.minutes[1200] == 99.5 && after.minutes[0] == monday.minutes[0],
        "one reading changed",
    )?;

    // 5. A delete removes every row of the day.
    readings.delete(&key, IfMatch::Any).await?;
    let left = stored_rows(&service).await?;
    println!(
        "5. deleted 2026-11-23: {} rows left (the other day)",
        left.len()
    );
    ensure(left.len() == 6, "only the other day's rows are left")?;
    Ok(())
}
