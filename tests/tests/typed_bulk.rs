//! The bulk writer: grouping by partition, chunks of at most 100 operations counting
//! same-partition index copies, per-chunk outcomes (atomic per chunk only), caller
//! indexes, validation before anything is sent, bounded concurrency, and upserts
//! that move index copies.
//!
//! Every scenario runs on every engine of the typed matrix
//! ([`tables_tests::typed_matrix!`]): the mem engine with default paging and with
//! one-entity pages that break at partition boundaries, and Azurite. The scenarios
//! that inject faults or count calls do so in front of the engine
//! ([`Backend::fresh`]), so they run on Azurite too.

#![allow(clippy::unwrap_used)] // tests unwrap known-good values

use std::collections::BTreeSet;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use tables_client::mem::{CallKind, Fault};
use tables_client::{
    BulkMode, BulkReport, DynamicEntity, Engine, Entity, EntityKey, ErrorKind, Filter, QuerySpec,
    Result, Row, TableServiceClient, WriteOp, WriteOutcome,
};
use tables_tests::typed::Backend;
use tables_tests::{Forward, Forwarding};

/// An entity with an intra-partition index copy: two rows per item.
#[derive(Entity, Debug, Clone, PartialEq)]
#[entity(kind = "Staff", rename_all = "PascalCase")]
#[entity(partition_key = "{department}", row_key = "empid_{employee_id:06}")]
#[entity(unique_index(name = "email", row_key = "email_{email}"))]
struct Staff {
    department: String,
    employee_id: u32,
    email: String,
    name: String,
}

/// An entity with no index: one row per item.
#[derive(Entity, Debug, Clone, PartialEq)]
#[entity(kind = "Sample", partition_key = "{sensor}", row_key = "{seq:08}")]
struct Sample {
    sensor: String,
    seq: u32,
    value: f64,
}

/// An index in another table: kept eventually, so the bulk writer refuses it.
#[derive(Entity, Debug, Clone, PartialEq)]
#[entity(
    kind = "Spread",
    partition_key = "{department}",
    row_key = "empid_{employee_id:06}"
)]
#[entity(unique_index(
    name = "by_email",
    table = "SpreadByEmail",
    partition_key = "email_{department}",
    row_key = "{email}"
))]
struct Spread {
    department: String,
    employee_id: u32,
    email: String,
}

/// An index entity: refused too.
#[derive(Entity, Debug, Clone, PartialEq)]
#[entity(
    kind = "Listed",
    partition_key = "{department}",
    row_key = "empid_{employee_id:06}"
)]
#[entity(index_entity(name = "last_name", row_key = "lastname_{last_name}"))]
struct Listed {
    department: String,
    employee_id: u32,
    last_name: String,
}

const DEPARTMENTS: usize = 7;

fn staff(i: usize) -> Staff {
    Staff {
        department: format!("dept{}", i % DEPARTMENTS),
        employee_id: u32::try_from(i).unwrap(),
        email: format!("e{i}@contoso.com"),
        name: format!("Employee {i}"),
    }
}

fn sample(sensor: &str, seq: usize) -> Sample {
    Sample {
        sensor: sensor.to_owned(),
        seq: u32::try_from(seq).unwrap(),
        value: seq as f64 / 2.0,
    }
}

async fn exists(service: &TableServiceClient, table: &str, key: &EntityKey) -> bool {
    service
        .engine()
        .get_entity(table, key, None)
        .await
        .unwrap()
        .is_some()
}

/// Every row of a partition, following continuation.
async fn partition_rows(service: &TableServiceClient, table: &str, pk: &str) -> Vec<DynamicEntity> {
    // In key order on every engine (sorted on the client where results come in
    // any order).
    let spec = QuerySpec::new().filter(Filter::partition_key(pk));
    tables_tests::read::query_all(service.engine().as_ref(), table, &spec)
        .await
        .unwrap()
}

/// The report's chunks cover each caller index once, stay in one partition, and
/// give one outcome per item.
fn check_report_shape(report: &BulkReport, count: usize, partition_of: impl Fn(usize) -> String) {
    let mut seen = BTreeSet::new();
    for chunk in &report.chunks {
        assert!(!chunk.items.is_empty());
        assert!(chunk.items.windows(2).all(|w| w[0] < w[1]), "ascending");
        for &i in &chunk.items {
            assert_eq!(partition_of(i), chunk.partition_key);
            assert!(seen.insert(i), "item {i} in two chunks");
        }
        if let Ok(outcomes) = &chunk.result {
            assert_eq!(outcomes.len(), chunk.items.len());
            assert!(outcomes.iter().all(|o| o.etag.is_some()));
        }
    }
    assert_eq!(seen, (0..count).collect());
}

/// Thousands of items (`TABLES_BULK_ITEMS`: 1,000, or 10,000 under
/// `TABLES_THOROUGH=1`) over 7 partitions, each with an index copy: chunks of 50
/// items (100 operations), every row written.
async fn thousands_of_items_chunk_at_100_operations(backend: Backend) -> Result<()> {
    let service = backend.service();
    let count = tables_tests::sizes::cases("TABLES_BULK_ITEMS", 1_000, 10_000) as usize;
    service.create_table("BulkStaff").await?;
    let report = service
        .bulk_writer::<Staff>("BulkStaff")
        .mode(BulkMode::Insert)
        .concurrency(4)
        .write_all((0..count).map(staff))
        .await?;
    assert!(report.is_complete());
    check_report_shape(&report, count, |i| staff(i).department);
    // Each partition in full chunks, then the rest; the report in the order of
    // the chunks' first items.
    let mut expected_chunks = Vec::new();
    for d in 0..DEPARTMENTS {
        let n = (count - d).div_ceil(DEPARTMENTS);
        let (mut left, mut first) = (n, d);
        while left > 0 {
            expected_chunks.push((first, format!("dept{d}"), left.min(50)));
            left -= left.min(50);
            first += 50 * DEPARTMENTS;
        }
    }
    expected_chunks.sort();
    let expected_chunks: Vec<(String, usize)> = expected_chunks
        .into_iter()
        .map(|(_, d, n)| (d, n))
        .collect();
    let got: Vec<(String, usize)> = report
        .chunks
        .iter()
        .map(|c| (c.partition_key.clone(), c.items.len()))
        .collect();
    assert_eq!(got, expected_chunks);
    assert_eq!(report.written_items(), (0..count).collect::<Vec<_>>());
    assert!(report.failed_items().is_empty());
    for i in (0..count).step_by(97).chain([count - 1]) {
        let s = staff(i);
        assert!(exists(&service, "BulkStaff", s.entity_key()?.as_entity_key()).await);
        let copy = EntityKey::new(s.department.clone(), format!("email_{}", s.email));
        assert!(exists(&service, "BulkStaff", &copy).await);
    }
    let rows = partition_rows(&service, "BulkStaff", "dept3").await;
    assert_eq!(rows.len(), 2 * (count - 3).div_ceil(DEPARTMENTS));
    Ok(())
}

/// Without copies a chunk holds 100 items; with copies in upsert mode a chunk keeps
/// room to delete each item's old copy.
async fn chunk_sizes_follow_operation_counts(backend: Backend) -> Result<()> {
    let service = backend.service();
    service.create_table("BulkSizes").await?;
    let report = service
        .bulk_writer::<Sample>("BulkSizes")
        .write_all((0..250).map(|i| sample("s1", i)))
        .await?;
    let sizes: Vec<usize> = report.chunks.iter().map(|c| c.items.len()).collect();
    assert_eq!(sizes, [100, 100, 50]);

    let upsert = service
        .bulk_writer::<Staff>("BulkSizes")
        .mode(BulkMode::Upsert)
        .write_all((0..70).map(|i| staff(i * DEPARTMENTS)))
        .await?;
    let sizes: Vec<usize> = upsert.chunks.iter().map(|c| c.items.len()).collect();
    assert_eq!(sizes, [33, 33, 4]);
    assert!(upsert.is_complete());
    assert_eq!(
        partition_rows(&service, "BulkSizes", "dept0").await.len(),
        140
    );
    Ok(())
}

/// An insert conflict (on an index copy) fails its own chunk only: the chunk's other
/// items are not written, every other chunk is, and the error names the caller's
/// item.
async fn a_failing_chunk_leaves_the_others_written(backend: Backend) -> Result<()> {
    let service = backend.service();
    service.create_table("BulkConflict").await?;
    // Someone already uses the email item 1,003 (of dept2) will claim.
    let squatter = Staff {
        department: "dept2".into(),
        employee_id: 999_999,
        email: "e1003@contoso.com".into(),
        name: "Squatter".into(),
    };
    let first = service
        .bulk_writer::<Staff>("BulkConflict")
        .mode(BulkMode::Insert)
        .write_all([squatter])
        .await?;
    assert!(first.is_complete());

    const COUNT: usize = 2_000;
    // A partial failure is an error carrying the report.
    let load = service
        .bulk_writer::<Staff>("BulkConflict")
        .mode(BulkMode::Insert)
        .write_all((0..COUNT).map(staff))
        .await
        .unwrap_err();
    assert_eq!(load.kind(), ErrorKind::UniqueViolation);
    assert_eq!(load.batch_index(), Some(1003));
    assert!(!load.may_have_applied(), "{load:?}");
    let report = BulkReport::from_error(&load).expect("the error carries the report");
    check_report_shape(report, COUNT, |i| staff(i).department);
    let failed: Vec<_> = report.failed().collect();
    assert_eq!(failed.len(), 1);
    let chunk = failed[0];
    assert_eq!(chunk.partition_key, "dept2");
    assert!(chunk.items.contains(&1003));
    let err = chunk.result.as_ref().unwrap_err();
    // The email is taken by the squatter: a unique violation naming it.
    assert_eq!(err.kind(), ErrorKind::UniqueViolation);
    assert_eq!(err.batch_index(), Some(1003));
    let violation = err.unique_violation().expect("names the owner");
    assert_eq!(violation.owner(), &Staff::key("dept2", 999_999)?);
    assert_eq!(violation.index(), "email");
    assert_eq!(report.failed_items(), chunk.items);
    assert_eq!(report.written_items().len(), COUNT - chunk.items.len());

    for &i in &chunk.items {
        assert!(
            !exists(
                &service,
                "BulkConflict",
                staff(i).entity_key()?.as_entity_key()
            )
            .await
        );
    }
    for i in report.written_items() {
        assert!(
            exists(
                &service,
                "BulkConflict",
                staff(i).entity_key()?.as_entity_key()
            )
            .await
        );
    }
    // dept2: the squatter (2 rows) and every written item of dept2 (2 rows each).
    let dept2_written = report
        .written_items()
        .into_iter()
        .filter(|i| i % DEPARTMENTS == 2)
        .count();
    let rows = partition_rows(&service, "BulkConflict", "dept2").await;
    assert_eq!(rows.len(), 2 + 2 * dept2_written);
    Ok(())
}

/// A chunk the engine fails (throttled) is reported; the others are written.
async fn an_engine_failure_fails_one_chunk(backend: Backend) -> Result<()> {
    let fixture = backend.fresh();
    let (engine, service) = (&fixture.engine, &fixture.service);
    service.create_table("BulkThrottled").await?;
    engine
        .faults()
        .inject(Fault::fail(ErrorKind::Throttled).on(CallKind::Batch).nth(3));
    let items = (0..1_000).map(|i| sample(&format!("s{}", i % 3), i));
    let load = service
        .bulk_writer::<Sample>("BulkThrottled")
        .concurrency(2)
        .write_all(items)
        .await
        .unwrap_err();
    assert_eq!(load.kind(), ErrorKind::Throttled);
    let report = BulkReport::from_error(&load).expect("the error carries the report");
    check_report_shape(report, 1_000, |i| format!("s{}", i % 3));
    assert_eq!(engine.faults().fired(), 1);
    let failed: Vec<_> = report.failed().collect();
    assert_eq!(failed.len(), 1);
    assert_eq!(
        failed[0].result.as_ref().unwrap_err().kind(),
        ErrorKind::Throttled
    );
    for i in report.failed_items() {
        let key = sample(&format!("s{}", i % 3), i).entity_key()?;
        assert!(!exists(service, "BulkThrottled", &key).await);
    }
    for i in report.written_items() {
        let key = sample(&format!("s{}", i % 3), i).entity_key()?;
        assert!(exists(service, "BulkThrottled", &key).await);
    }
    Ok(())
}

/// An item that can't be written stops the load there: it is refused before its
/// chunk is sent, every item before it is written (partial chunks included),
/// nothing after it is read, and the error names it and where to resume. Unsupported
/// types are refused before anything is read.
async fn a_bad_item_stops_the_load_there(backend: Backend) -> Result<()> {
    let fixture = backend.fresh();
    let (engine, service) = (&fixture.engine, &fixture.service);
    service.create_table("BulkInvalid").await?;
    let batches = || engine.faults().calls_of(CallKind::Batch);

    // A key the service refuses, at caller index 57: items 0..57 written (in
    // partial chunks of their 7 partitions), the rest never read.
    let read = AtomicUsize::new(0);
    let items = (0..200).map(|i| {
        read.fetch_add(1, Ordering::SeqCst);
        let mut s = staff(i);
        if i == 57 {
            s.department = "bad/dept".into();
        }
        s
    });
    let err = service
        .bulk_writer::<Staff>("BulkInvalid")
        .write_all(items)
        .await
        .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::InvalidKey);
    assert_eq!(err.batch_index(), Some(57));
    assert_eq!(
        read.load(Ordering::SeqCst),
        58,
        "nothing after the bad item is read"
    );
    let report = BulkReport::from_error(&err).expect("the error carries the report");
    let refused = report.refused.as_ref().expect("names the item");
    assert_eq!(refused.index, 57);
    assert_eq!(refused.error.kind(), ErrorKind::InvalidKey);
    assert_eq!(report.resume_at(), 57);
    assert_eq!(report.written_items(), (0..57).collect::<Vec<_>>());
    assert!(report.failed_items().is_empty());
    check_report_shape(report, 57, |i| staff(i).department);
    for i in 0..57 {
        let key = staff(i).entity_key()?;
        assert!(
            exists(service, "BulkInvalid", key.as_entity_key()).await,
            "{i}"
        );
    }
    assert!(
        !exists(
            service,
            "BulkInvalid",
            staff(58).entity_key()?.as_entity_key()
        )
        .await
    );
    assert!(
        err.to_string().contains("resume_at() (57)"),
        "the message says where to go on: {err}"
    );

    // A property too large, at index 120 of one partition: the full chunks (50
    // items each, with their index copies) and the partial one (100..120) are
    // written.
    let mut big: Vec<Staff> = (0..200).map(|i| staff(i * DEPARTMENTS)).collect();
    big[120].name = "x".repeat(40_000); // 80,000 bytes as UTF-16: over 64 KiB
    service.create_table("BulkBig").await?;
    let err = service
        .bulk_writer::<Staff>("BulkBig")
        .mode(BulkMode::Insert)
        .write_all(big)
        .await
        .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::PropertyValueTooLarge);
    assert_eq!(err.batch_index(), Some(120));
    let report = BulkReport::from_error(&err).unwrap();
    let sizes: Vec<usize> = report.chunks.iter().map(|c| c.items.len()).collect();
    assert_eq!(sizes, [50, 50, 20]);
    assert_eq!(partition_rows(service, "BulkBig", "dept0").await.len(), 240);

    // The same row twice (item 150 repeats item 3): in upsert mode, written in
    // order (a partition's chunks go one after another), the later value last.
    let mut items: Vec<Sample> = (0..200).map(|i| sample("s", i)).collect();
    items[150] = sample("s", 3);
    items[150].value = 99.0;
    let report = service
        .bulk_writer::<Sample>("BulkInvalid")
        .write_all(items)
        .await?;
    assert!(report.is_complete());
    let rows = partition_rows(service, "BulkInvalid", "s").await;
    assert_eq!(rows.len(), 199);
    let key = sample("s", 3).entity_key()?;
    let three = rows
        .iter()
        .find(|r| &r.key() == key.as_entity_key())
        .unwrap();
    assert_eq!(three.get("value"), Some(&99.0.into()));

    // Two items claiming one unique index value: the later one's chunk fails with
    // the violation, naming it; the rest is written.
    let mut twins: Vec<Staff> = (0..10).map(|i| staff(i * DEPARTMENTS)).collect();
    twins[9].email = twins[2].email.clone();
    let err = service
        .bulk_writer::<Staff>("BulkInvalid")
        .write_all(twins)
        .await
        .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::UniqueViolation);
    assert_eq!(err.batch_index(), Some(9));
    let report = BulkReport::from_error(&err).unwrap();
    assert_eq!(report.failed_items(), [9]);
    assert_eq!(report.written_items(), (0..9).collect::<Vec<_>>());

    // Types whose indexes need per-item upkeep: refused before anything is read.
    let before = batches();
    let spread = Spread {
        department: "d".into(),
        employee_id: 1,
        email: "a@b".into(),
    };
    let err = service
        .bulk_writer::<Spread>("BulkInvalid")
        .write_all([spread])
        .await
        .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::InvalidInput);
    let listed = Listed {
        department: "d".into(),
        employee_id: 1,
        last_name: "Jones".into(),
    };
    let err = service
        .bulk_writer::<Listed>("BulkInvalid")
        .mode(BulkMode::Insert)
        .write_all([listed])
        .await
        .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::InvalidInput);
    assert_eq!(batches(), before, "nothing was sent");

    // An empty load sends nothing and reports nothing.
    let report = service
        .bulk_writer::<Staff>("BulkInvalid")
        .write_all(Vec::new())
        .await?;
    assert!(report.chunks.is_empty() && report.is_complete());
    assert_eq!(report.resume_at(), 0);
    Ok(())
}

/// Upserting over existing items moves their index copies: old copies deleted (even
/// when two items of one chunk swap emails), new ones written, new items inserted.
async fn upsert_moves_index_copies(backend: Backend) -> Result<()> {
    let service = backend.service();
    service.create_table("BulkMove").await?;
    let before: Vec<Staff> = (0..120).map(|i| staff(i * DEPARTMENTS)).collect();
    let report = service
        .bulk_writer::<Staff>("BulkMove")
        .write_all(before.clone())
        .await?;
    assert!(report.is_complete());

    let mut after = before.clone();
    for (i, s) in after.iter_mut().enumerate() {
        if i % 3 == 0 {
            s.email = format!("moved{i}@contoso.com");
        }
        s.name = format!("Renamed {i}");
    }
    // Items 1 and 2 (one chunk) swap emails.
    let (one, two) = (after[1].email.clone(), after[2].email.clone());
    after[1].email = two;
    after[2].email = one;
    // And 30 new items.
    after.extend((120..150).map(|i| staff(i * DEPARTMENTS)));

    let report = service
        .bulk_writer::<Staff>("BulkMove")
        .write_all(after.clone())
        .await?;
    assert!(report.is_complete(), "{report:?}");

    let rows = partition_rows(&service, "BulkMove", "dept0").await;
    assert_eq!(rows.len(), 2 * after.len(), "no orphan copies");
    let keys: BTreeSet<String> = rows.iter().map(|r| r.row_key.clone()).collect();
    for s in &after {
        assert!(keys.contains(&format!("email_{}", s.email)));
        let row = service
            .engine()
            .get_entity("BulkMove", s.entity_key()?.as_entity_key(), None)
            .await?
            .unwrap();
        assert_eq!(&Staff::from_entity(row)?, s);
    }
    Ok(())
}

/// A concurrent change between a chunk's read and its write makes the conditional
/// write fail; the chunk reads again and leaves exactly its own copies.
async fn upsert_retries_after_a_concurrent_change(backend: Backend) -> Result<()> {
    let fixture = backend.fresh();
    let (engine, service) = (&fixture.engine, &fixture.service);
    service.create_table("BulkRace").await?;
    let original = staff(0);
    service
        .bulk_writer::<Staff>("BulkRace")
        .write_all([original.clone()])
        .await?;

    engine.faults().inject(
        Fault::delay(Duration::from_secs(1))
            .on(CallKind::Batch)
            .nth(1),
    );
    let mut mine = original.clone();
    mine.email = "mine@contoso.com".into();
    let writer = service.bulk_writer::<Staff>("BulkRace");
    let load = tokio::spawn(async move { writer.write_all([mine]).await });

    // While the chunk's batch waits (it has been counted, so it is in its delay),
    // another writer moves the email. Waiting on the count, not on a clock, keeps
    // the order on a loaded machine, where the load may take longer to start.
    let started = tokio::time::Instant::now();
    while engine.faults().calls_of(CallKind::Batch) < 2 {
        assert!(
            started.elapsed() < Duration::from_secs(10),
            "the bulk writer's batch never started"
        );
        tokio::time::sleep(Duration::from_millis(1)).await;
    }
    let mut theirs = original.clone();
    theirs.email = "theirs@contoso.com".into();
    let primary = theirs.to_entity()?;
    let copies = theirs.index_copies(&primary)?;
    let ops = vec![
        WriteOp::UpsertReplace(primary),
        WriteOp::Insert(copies[0].entity().clone()),
        WriteOp::Delete {
            key: EntityKey::new("dept0", "email_e0@contoso.com"),
            if_match: tables_client::IfMatch::Any,
        },
    ];
    service.engine().submit_batch("BulkRace", &ops).await?;

    let report = load.await.unwrap()?;
    assert!(report.is_complete(), "{report:?}");
    assert_eq!(engine.faults().calls_of(CallKind::Batch), 1 + 1 + 2);
    let keys: Vec<String> = partition_rows(service, "BulkRace", "dept0")
        .await
        .into_iter()
        .map(|r| r.row_key)
        .collect();
    assert_eq!(keys, ["email_mine@contoso.com", "empid_000000"]);
    Ok(())
}

/// An engine that records how many batches are in flight at once.
#[derive(Debug)]
struct InFlight {
    inner: Arc<dyn Engine>,
    now: AtomicUsize,
    most: AtomicUsize,
}

#[async_trait]
impl Forward for InFlight {
    fn inner(&self) -> &dyn Engine {
        &self.inner
    }

    async fn submit_batch(&self, table: &str, ops: &[WriteOp]) -> Result<Vec<WriteOutcome>> {
        let now = self.now.fetch_add(1, Ordering::SeqCst) + 1;
        self.most.fetch_max(now, Ordering::SeqCst);
        tokio::time::sleep(Duration::from_millis(5)).await;
        let result = self.inner.submit_batch(table, ops).await;
        self.now.fetch_sub(1, Ordering::SeqCst);
        result
    }
}

/// At most `concurrency` chunks are in flight.
async fn concurrency_is_bounded(backend: Backend) -> Result<()> {
    let probe = Arc::new(Forwarding(InFlight {
        inner: backend.engine(),
        now: AtomicUsize::new(0),
        most: AtomicUsize::new(0),
    }));
    let service = TableServiceClient::from_engine(probe.clone());
    service.create_table("BulkBounded").await?;
    let report = service
        .bulk_writer::<Sample>("BulkBounded")
        .concurrency(3)
        .write_all((0..2_000).map(|i| sample(&format!("s{}", i % 10), i)))
        .await?;
    assert!(report.is_complete());
    assert_eq!(report.chunks.len(), 20);
    assert_eq!(probe.most.load(Ordering::SeqCst), 3);
    Ok(())
}

/// Raw rows (`DynamicEntity`, as an import reads them) load in every mode: insert
/// refuses a taken key, upsert replaces, merge keeps the columns it doesn't name;
/// Timestamps read from elsewhere are not sent. A type with index copies can't merge.
async fn raw_rows_load_in_every_mode(backend: Backend) -> Result<()> {
    let service = backend.service();
    service.create_table("BulkRaw").await?;
    let stamp: tables_client::DateTime = "2001-02-03T04:05:06.0000007Z".parse().unwrap();
    let row = |i: usize, extra: &str| {
        let mut row = DynamicEntity::new(format!("p{}", i % 3), format!("{i:04}"))
            .with("N", i as i64)
            .with(extra, true);
        row.timestamp = Some(stamp);
        row
    };
    let report = service
        .bulk_writer::<DynamicEntity>("BulkRaw")
        .mode(BulkMode::Insert)
        .write_all((0..250).map(|i| row(i, "First")))
        .await?;
    assert!(report.is_complete());
    assert_eq!(report.written_items().len(), 250);

    let err = service
        .bulk_writer::<DynamicEntity>("BulkRaw")
        .mode(BulkMode::Insert)
        .write_all([row(7, "First")])
        .await
        .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::EntityAlreadyExists);

    service
        .bulk_writer::<DynamicEntity>("BulkRaw")
        .mode(BulkMode::Merge)
        .write_all((0..10).map(|i| row(i, "Second")))
        .await?;
    service
        .bulk_writer::<DynamicEntity>("BulkRaw")
        .mode(BulkMode::Upsert)
        .write_all((10..20).map(|i| row(i, "Second")))
        .await?;
    let rows = service.raw_rows("BulkRaw").await?;
    assert_eq!(rows.len(), 250);
    for stored in &rows {
        let i: usize = stored.row_key.parse().unwrap();
        assert_eq!(
            stored.get("N"),
            Some(&tables_client::Value::Int64(i as i64))
        );
        assert_ne!(stored.timestamp, Some(stamp), "the service sets Timestamp");
        let (first, second) = (stored.contains("First"), stored.contains("Second"));
        match i {
            0..10 => assert!(first && second, "merge keeps First: {stored:?}"),
            10..20 => assert!(!first && second, "upsert replaces: {stored:?}"),
            _ => assert!(first && !second, "{stored:?}"),
        }
    }

    let err = service
        .bulk_writer::<Staff>("BulkRaw")
        .mode(BulkMode::Merge)
        .write_all([staff(1)])
        .await
        .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::InvalidInput);
    assert!(err.to_string().contains("can't merge"), "{err}");
    Ok(())
}

/// Chunks keep under the engine's batch limit in bytes as well as in operations:
/// 150 rows of 60 KB (as UTF-16) in one partition are 9 MB, so on Azure's 4 MiB and
/// on Cosmos DB's 2 MB a chunk holds far fewer than 100; every chunk is accepted.
async fn large_rows_chunk_under_the_batch_byte_limit(backend: Backend) -> Result<()> {
    let service = backend.service();
    service.create_table("BulkLarge").await?;
    let limit = service.engine().capabilities().max_batch_bytes;
    let report = service
        .bulk_writer::<DynamicEntity>("BulkLarge")
        .write_all((0..150).map(|i| {
            DynamicEntity::new("large", format!("{i:03}")).with("Blob", "y".repeat(30_000))
        }))
        .await?;
    assert!(
        report.is_complete(),
        "a chunk was refused (batch limit {limit} bytes): {:?}",
        report.failed().collect::<Vec<_>>()
    );
    assert!(report.chunks.len() > 1);
    for chunk in &report.chunks {
        assert!(
            chunk.items.len() * 60_000 < limit,
            "a chunk of {} rows of 60 KB is over the {limit} bytes the engine takes",
            chunk.items.len()
        );
    }
    assert_eq!(
        partition_rows(&service, "BulkLarge", "large").await.len(),
        150
    );
    Ok(())
}

tables_tests::typed_matrix!(
    runtime: #[tokio::test(flavor = "multi_thread", worker_threads = 4)];
    raw_rows_load_in_every_mode,
    large_rows_chunk_under_the_batch_byte_limit,
    thousands_of_items_chunk_at_100_operations,
    chunk_sizes_follow_operation_counts,
    a_failing_chunk_leaves_the_others_written,
    an_engine_failure_fails_one_chunk,
    a_bad_item_stops_the_load_there,
    upsert_moves_index_copies,
    upsert_retries_after_a_concurrent_change,
    concurrency_is_bounded,
);
