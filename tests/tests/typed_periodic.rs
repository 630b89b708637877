//! Table per period (the guide's high-volume delete): names per period, creating
//! ahead, dropping whole tables older than a bound, listing the family.
//!
//! Every scenario runs on every engine of the typed matrix
//! ([`tables_tests::typed_matrix!`]): the mem engine with default paging and with
//! one-name pages (so listing follows continuation), and Azurite.

#![allow(clippy::unwrap_used)] // tests unwrap known-good values

use tables_client::{DateTime, Entity, ErrorKind, Period, PeriodicTables, Result};
use tables_tests::typed::Backend;

#[derive(Entity, Debug, Clone, PartialEq)]
#[entity(kind = "SignIn", partition_key = "{user}", row_key = "{at:rticks}")]
struct SignIn {
    user: String,
    at: DateTime,
    ok: bool,
}

fn t(y: i32, mo: u32, d: u32, h: u32, mi: u32) -> DateTime {
    DateTime::from_ymd_hms(y, mo, d, h, mi, 0).unwrap()
}

fn names(tables: &[(String, DateTime)]) -> Vec<&str> {
    tables.iter().map(|(name, _)| name.as_str()).collect()
}

/// Names carry the period's digits; prefixes that can't make valid, unambiguous
/// names are refused.
async fn names_per_period(backend: Backend) -> Result<()> {
    let service = backend.service();
    let at = t(2024, 1, 5, 13, 45);
    let hour = PeriodicTables::new(&service, "SignIns", Period::Hour)?;
    let day = PeriodicTables::new(&service, "SignIns", Period::Day)?;
    let month = PeriodicTables::new(&service, "SignIns", Period::Month)?;
    assert_eq!(hour.table_name(at), "SignIns2024010513");
    assert_eq!(day.table_name(at), "SignIns20240105");
    assert_eq!(month.table_name(at), "SignIns202401");
    assert_eq!(day.table_name(t(2024, 1, 5, 0, 0)), day.table_name(at));
    assert_ne!(day.table_name(t(2024, 1, 6, 0, 0)), day.table_name(at));
    assert_eq!(day.table::<SignIn>(at).name(), "SignIns20240105");
    assert_eq!((day.prefix(), day.period()), ("SignIns", Period::Day));

    let longest = format!("L{}", "x".repeat(52)); // 53 + 10 digits = 63
    assert!(PeriodicTables::new(&service, &longest, Period::Hour).is_ok());
    let too_long = format!("{longest}x");
    for (prefix, period) in [
        ("", Period::Day),
        ("9Logs", Period::Day),
        ("Logs9", Period::Day),
        ("Lo-gs", Period::Day),
        ("Logs_", Period::Month),
        ("Lögs", Period::Month),
        (too_long.as_str(), Period::Hour),
    ] {
        let err = PeriodicTables::new(&service, prefix, period).unwrap_err();
        assert_eq!(err.kind(), ErrorKind::InvalidTableName, "{prefix:?}");
    }
    assert!(PeriodicTables::new(&service, "Lo9gs", Period::Day).is_ok());
    Ok(())
}

/// Creating ahead makes the period's table and the following ones, across month
/// and year ends, and leaves existing tables alone.
async fn create_ahead(backend: Backend) -> Result<()> {
    let service = backend.service();
    let day = PeriodicTables::new(&service, "Visits", Period::Day)?;
    let created = day.create_ahead(t(2024, 1, 30, 22, 10), 4).await?;
    assert_eq!(
        created,
        [
            "Visits20240130",
            "Visits20240131",
            "Visits20240201",
            "Visits20240202"
        ]
    );
    // Overlapping: only the new ones.
    let again = day.create_ahead(t(2024, 2, 1, 0, 0), 3).await?;
    assert_eq!(again, ["Visits20240203"]);
    assert!(day.create_ahead(t(2024, 2, 1, 0, 0), 0).await?.is_empty());

    let month = PeriodicTables::new(&service, "Bills", Period::Month)?;
    assert_eq!(
        month.create_ahead(t(2023, 11, 30, 23, 59), 3).await?,
        ["Bills202311", "Bills202312", "Bills202401"]
    );
    let hour = PeriodicTables::new(&service, "Clicks", Period::Hour)?;
    assert_eq!(
        hour.create_ahead(t(2024, 2, 29, 22, 30), 3).await?,
        ["Clicks2024022922", "Clicks2024022923", "Clicks2024030100"]
    );
    // Nothing past the year 9999.
    assert_eq!(month.create_ahead(DateTime::MAX, 5).await?, ["Bills999912"]);

    let all = service.list_tables().await?;
    assert_eq!(all.len(), 4 + 1 + 3 + 3 + 1);
    // The created tables take rows.
    let table = day.table::<SignIn>(t(2024, 2, 3, 8, 0));
    let report = service
        .bulk_writer::<SignIn>(table.name())
        .write_all([SignIn {
            user: "ann".into(),
            at: t(2024, 2, 3, 8, 0),
            ok: true,
        }])
        .await?;
    assert!(report.is_complete());
    Ok(())
}

/// `existing` lists exactly the family's tables in period order, ignoring tables
/// that share the prefix but not the period's form.
async fn existing_lists_the_family(backend: Backend) -> Result<()> {
    let service = backend.service();
    let day = PeriodicTables::new(&service, "SignIns", Period::Day)?;
    let month = PeriodicTables::new(&service, "SignIns", Period::Month)?;
    assert!(day.existing().await?.is_empty());
    day.create_ahead(t(2024, 3, 30, 5, 0), 3).await?;
    day.create_ahead(t(2023, 12, 31, 5, 0), 1).await?;
    month.create_ahead(t(2024, 1, 1, 0, 0), 2).await?;
    for other in [
        "SignInsArchive",
        "SignIns2024",
        "SignIns20241301",
        "SignIns202401011",
        "Other20240101",
        "Signins20240101",
    ] {
        service.create_table(other).await?;
    }
    let found = day.existing().await?;
    assert_eq!(
        found,
        [
            ("SignIns20231231".to_owned(), t(2023, 12, 31, 0, 0)),
            ("SignIns20240330".to_owned(), t(2024, 3, 30, 0, 0)),
            ("SignIns20240331".to_owned(), t(2024, 3, 31, 0, 0)),
            ("SignIns20240401".to_owned(), t(2024, 4, 1, 0, 0)),
        ]
    );
    assert_eq!(
        names(&month.existing().await?),
        ["SignIns202401", "SignIns202402"]
    );
    Ok(())
}

/// Dropping deletes whole tables whose period ends at or before the bound, and
/// nothing else (other families, unrelated tables, newer periods).
async fn drop_older_than(backend: Backend) -> Result<()> {
    let service = backend.service();
    let day = PeriodicTables::new(&service, "SignIns", Period::Day)?;
    let month = PeriodicTables::new(&service, "SignIns", Period::Month)?;
    day.create_ahead(t(2024, 1, 1, 0, 0), 5).await?;
    month.create_ahead(t(2023, 12, 1, 0, 0), 2).await?;
    service.create_table("SignInsArchive").await?;
    let old = day.table::<SignIn>(t(2024, 1, 2, 9, 0));
    let report = service
        .bulk_writer::<SignIn>(old.name())
        .write_all((0..300).map(|i| SignIn {
            user: format!("u{}", i % 4),
            at: t(2024, 1, 2, 9, 0).checked_add_ticks(i).unwrap(),
            ok: i % 2 == 0,
        }))
        .await?;
    assert!(report.is_complete());

    // One tick before Jan 3 00:00: Jan 2 has not ended yet.
    let almost = t(2024, 1, 3, 0, 0).checked_add_ticks(-1).unwrap();
    assert_eq!(day.drop_older_than(almost).await?, ["SignIns20240101"]);
    // At the bound: Jan 2 ends exactly then.
    assert_eq!(
        day.drop_older_than(t(2024, 1, 3, 0, 0)).await?,
        ["SignIns20240102"]
    );
    assert_eq!(
        service
            .engine()
            .get_entity(
                old.name(),
                SignIn::key("u0", t(2024, 1, 2, 9, 0))?.as_entity_key(),
                None
            )
            .await
            .unwrap_err()
            .kind(),
        ErrorKind::TableNotFound
    );
    assert!(day.drop_older_than(t(2024, 1, 3, 0, 0)).await?.is_empty());
    assert_eq!(
        names(&day.existing().await?),
        ["SignIns20240103", "SignIns20240104", "SignIns20240105"]
    );
    // The month family and the archive are untouched until their own drop.
    assert_eq!(
        names(&month.existing().await?),
        ["SignIns202312", "SignIns202401"]
    );
    assert_eq!(
        month.drop_older_than(t(2024, 1, 31, 0, 0)).await?,
        ["SignIns202312"]
    );
    assert!(service
        .list_tables()
        .await?
        .contains(&"SignInsArchive".to_owned()));
    Ok(())
}

tables_tests::typed_matrix!(
    names_per_period,
    create_ahead,
    existing_lists_the_family,
    drop_older_than,
);
