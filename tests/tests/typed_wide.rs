//! Wide entities (`#[entity(wide)]`, and series too long for one row): one logical
//! entity over a base row and part rows of its partition, written in one entity
//! group transaction under one ETag, read with one range query, deleted whole,
//! returned whole by queries; on every engine of the typed matrix (the one-row pages
//! configuration splits every entity across pages). Then a crash matrix and
//! concurrent writers on the fault-injecting mem engine.

#![allow(clippy::unwrap_used)] // tests

use std::sync::Arc;

use tables_client::filter::col;
use tables_client::mem::{CallKind, Fault, FaultInjector, MemEngine};
use tables_client::wide::WideEngine;
use tables_client::{
    DynamicEntity, Engine, Entity, ErrorKind, IfMatch, Patch, Result, TableServiceClient, Value,
};
use tables_tests::read::all_rows;
use tables_tests::typed::Backend;

/// The design guide's example: a count per day of the year, 365 properties. No
/// attribute says `wide`: the series is too long for one row, so the type is.
#[derive(Entity, Debug, Clone, PartialEq)]
#[entity(kind = "Counters", partition_key = "{site}", row_key = "{year}")]
struct Counters {
    site: String,
    year: String,
    #[entity(series)]
    daily: [u32; 365],
}

/// A wide type with large values: 40 pages of up to 30,000 characters (60 KB each,
/// 2.4 MB in all) need three rows.
#[derive(Entity, Debug, Clone, PartialEq)]
#[entity(kind = "Doc", partition_key = "docs", row_key = "{id}", wide)]
struct Doc {
    id: String,
    title: String,
    #[entity(series)]
    pages: [String; 40],
}

const TABLE: &str = "Wide";

fn counters(site: &str, year: &str, seed: u32) -> Counters {
    let mut daily = [0; 365];
    for (day, count) in daily.iter_mut().enumerate() {
        *count = seed * 1000 + u32::try_from(day).unwrap();
    }
    Counters {
        site: site.to_owned(),
        year: year.to_owned(),
        daily,
    }
}

/// A document whose first `long` pages are 30,000 characters, the rest short.
fn doc(id: &str, long: usize, seed: char) -> Doc {
    let pages = std::array::from_fn(|i| {
        if i < long {
            seed.to_string().repeat(30_000)
        } else {
            format!("{seed}{i}")
        }
    });
    Doc {
        id: id.to_owned(),
        title: format!("{id} ({long} long pages)"),
        pages,
    }
}

/// The raw rows of a partition, as the storage engine holds them.
async fn raw_rows(engine: &dyn Engine, partition: &str) -> Result<Vec<DynamicEntity>> {
    Ok(all_rows(engine, TABLE)
        .await?
        .into_iter()
        .filter(|row| row.partition_key == partition)
        .collect())
}

fn row_keys(rows: &[DynamicEntity]) -> Vec<&str> {
    rows.iter().map(|row| row.row_key.as_str()).collect()
}

/// 365 counters take a base row and one part; the entity reads back whole by key
/// and by query, and a filter on a day stored on the part row is judged on the
/// whole entity.
async fn the_guides_365_counters_span_two_rows(backend: Backend) -> Result<()> {
    let service = backend.service();
    service.create_table(TABLE).await?;
    let table = service.table::<Counters>(TABLE);
    for (year, seed) in [("2025", 1), ("2026", 2)] {
        table.insert(&counters("home", year, seed)).await?;
    }

    let raw = raw_rows(service.engine().as_ref(), "home").await?;
    assert_eq!(row_keys(&raw), ["2025", "2025 ~01", "2026", "2026 ~01"]);
    assert_eq!(raw[0].get("EntityParts"), Some(&Value::Int32(1)));
    assert_eq!(raw[1].get("EntityPart"), Some(&Value::Int32(1)));
    assert_eq!(raw[0].get("EntityPartsTag"), raw[1].get("EntityPartsTag"));
    assert!(raw.iter().all(|row| row.len() <= 252));
    // The tag stays on the base row, so the service still selects the type.
    assert_eq!(raw[0].get("EntityType"), Some(&Value::from("Counters")));

    let got = table.get(Counters::key("home", "2026")?).await?.unwrap();
    assert_eq!(got.value, counters("home", "2026", 2));
    let all = table.query().partition("home").collect().await?;
    assert_eq!(
        all,
        vec![counters("home", "2025", 1), counters("home", "2026", 2)]
    );

    // Day 300 lies on the part row: the service can't judge it, the client does.
    let last_day = raw[1].properties().any(|(name, _)| name == "daily_300");
    assert!(last_day, "daily_300 is on the part row");
    let hit = table
        .query()
        .filter(Counters::DAILY.point(300).unwrap().eq(2300))
        .collect()
        .await?;
    assert_eq!(hit, vec![counters("home", "2026", 2)]);
    let none = table
        .query()
        .filter(col("daily_300").eq(Value::Int64(7)))
        .collect()
        .await?;
    assert!(none.is_empty());
    Ok(())
}

/// A replace to fewer rows deletes the parts no longer needed, in the same
/// transaction; growing again adds them; the base row's ETag is the entity's, and a
/// stale one changes nothing; a delete removes every row.
async fn parts_follow_the_size_under_one_etag(backend: Backend) -> Result<()> {
    let service = backend.service();
    service.create_table(TABLE).await?;
    let table = service.table::<Doc>(TABLE);
    let raw = || async { raw_rows(service.engine().as_ref(), "docs").await };

    let first = table.insert(&doc("a", 40, 'x')).await?.etag.unwrap();
    assert_eq!(row_keys(&raw().await?), ["a", "a ~01", "a ~02"]);
    let read = table.get(Doc::key("a")?).await?.unwrap();
    assert_eq!(read.value, doc("a", 40, 'x'));
    assert_eq!(read.etag, first, "the base row's ETag is the entity's");

    let small = table
        .replace(&doc("a", 2, 'y'), IfMatch::Etag(first.clone()))
        .await?
        .etag
        .unwrap();
    assert_eq!(
        row_keys(&raw().await?),
        ["a"],
        "the parts no longer needed are gone"
    );
    assert_eq!(raw().await?[0].get("EntityParts"), None, "one plain row");

    let stale = table
        .replace(&doc("a", 40, 'z'), IfMatch::Etag(first))
        .await
        .unwrap_err();
    assert_eq!(stale.kind(), ErrorKind::PreconditionFailed, "{stale}");
    assert_eq!(row_keys(&raw().await?), ["a"], "a stale write adds no part");
    assert_eq!(
        table.get(Doc::key("a")?).await?.unwrap().value,
        doc("a", 2, 'y')
    );

    let grown = table
        .replace(&doc("a", 20, 'w'), IfMatch::Etag(small))
        .await?
        .etag
        .unwrap();
    assert_eq!(row_keys(&raw().await?), ["a", "a ~01"]);
    assert_eq!(
        table.get(Doc::key("a")?).await?.unwrap().value,
        doc("a", 20, 'w')
    );

    table.upsert(&doc("a", 40, 'v')).await?;
    assert_eq!(row_keys(&raw().await?), ["a", "a ~01", "a ~02"]);
    let err = table
        .delete(&Doc::key("a")?, IfMatch::Etag(grown))
        .await
        .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::PreconditionFailed, "{err}");
    assert_eq!(raw().await?.len(), 3, "a stale delete deletes nothing");
    table.delete(&Doc::key("a")?, IfMatch::Any).await?;
    assert!(raw().await?.is_empty(), "a delete removes every row");
    assert!(table.get(Doc::key("a")?).await?.is_none());
    Ok(())
}

/// A query over several wide entities returns each once and whole, whatever the
/// paging (one row per page splits every entity), with `take` counting entities.
async fn queries_return_whole_entities_never_parts(backend: Backend) -> Result<()> {
    let service = backend.service();
    service.create_table(TABLE).await?;
    let table = service.table::<Doc>(TABLE);
    let docs = [doc("a", 40, 'a'), doc("b", 1, 'b'), doc("c", 20, 'c')];
    for d in &docs {
        table.insert(d).await?;
    }
    assert_eq!(table.query().collect().await?, docs.to_vec());
    assert_eq!(
        table
            .query()
            .partition("docs")
            .order_in_client(1_000)
            .take(2)
            .collect()
            .await?,
        docs[..2].to_vec()
    );
    let titled = table
        .query()
        .filter(Doc::TITLE.eq("c (20 long pages)".to_owned()))
        .collect()
        .await?;
    assert_eq!(titled, vec![docs[2].clone()]);
    Ok(())
}

/// `set_point` on a point stored on a part row merges it under the entity's ETag.
async fn a_point_on_a_part_row_is_set_under_the_etag(backend: Backend) -> Result<()> {
    let service = backend.service();
    service.create_table(TABLE).await?;
    let table = service.table::<Counters>(TABLE);
    let etag = table
        .insert(&counters("home", "2026", 1))
        .await?
        .etag
        .unwrap();
    let key = Counters::key("home", "2026")?;
    table
        .set_point(&key, Counters::DAILY, 364, 7, IfMatch::Etag(etag.clone()))
        .await?;
    let stale = table
        .set_point(&key, Counters::DAILY, 0, 9, IfMatch::Etag(etag))
        .await
        .unwrap_err();
    assert_eq!(stale.kind(), ErrorKind::PreconditionFailed, "{stale}");
    let mut expected = counters("home", "2026", 1);
    expected.daily[364] = 7;
    assert_eq!(table.get(&key).await?.unwrap().value, expected);
    assert_eq!(raw_rows(service.engine().as_ref(), "home").await?.len(), 2);
    Ok(())
}

tables_tests::typed_matrix!(
    the_guides_365_counters_span_two_rows,
    parts_follow_the_size_under_one_etag,
    queries_return_whole_entities_never_parts,
    a_point_on_a_part_row_is_set_under_the_etag,
    a_filter_on_the_last_part_row_is_judged_whole,
    indexes_of_a_wide_type_hold_whole_copies,
);

/// Checks that the stored rows of `docs` are whole versions: every base row's parts
/// exist, carry its tag, and no part row is left without its base.
async fn assert_laid_out_whole(engine: &dyn Engine, case: &str) {
    let rows = raw_rows(engine, "docs").await.unwrap();
    for row in &rows {
        if let Some(Value::Int32(n)) = row.get("EntityParts") {
            for i in 1..=*n {
                let key = format!("{} ~{i:02}", row.row_key);
                let part = rows.iter().find(|r| r.row_key == key);
                let part = part.unwrap_or_else(|| panic!("{case}: {key} is missing"));
                assert_eq!(
                    part.get("EntityPartsTag"),
                    row.get("EntityPartsTag"),
                    "{case}: {key} is of another version"
                );
            }
            let extra = rows.iter().filter(|r| {
                r.row_key.starts_with(&format!("{} ~", row.row_key))
                    && !(1..=*n).any(|i| r.row_key == format!("{} ~{i:02}", row.row_key))
            });
            assert_eq!(
                extra.count(),
                0,
                "{case}: a part beyond the base row's count"
            );
        } else {
            let base = row.row_key.split(" ~").next().unwrap();
            assert!(
                rows.iter().any(|r| r.row_key == base),
                "{case}: the part {} has no base row",
                row.row_key
            );
        }
    }
}

/// The crash matrix: an insert, a grow, a shrink and a delete, each with its
/// transaction refused, applied with the answer lost, or in doubt, and with the
/// read before it failing; afterwards the entity reads back as the old version or
/// the new, whole, and no row is left over or missing.
#[tokio::test]
async fn crash_matrix_leaves_whole_versions() {
    let faults: Vec<(&str, Fault)> = vec![
        (
            "transaction refused",
            Fault::fail(ErrorKind::Server).on(CallKind::Batch),
        ),
        (
            "transaction lost",
            Fault::fail_after_applying(ErrorKind::Timeout).on(CallKind::Batch),
        ),
        (
            "transaction in doubt",
            Fault::fail_in_doubt(ErrorKind::Timeout).on(CallKind::Batch),
        ),
        (
            "read refused",
            Fault::fail(ErrorKind::Server).on(CallKind::Query),
        ),
    ];
    #[derive(Debug, Clone, Copy)]
    enum Step {
        Insert,
        Grow,
        Shrink,
        Delete,
    }
    for step in [Step::Insert, Step::Grow, Step::Shrink, Step::Delete] {
        for (name, fault) in faults.clone() {
            let case = format!("{step:?}, {name}");
            let engine = FaultInjector::new(MemEngine::new());
            let service = TableServiceClient::new(engine.clone());
            service.create_table(TABLE).await.unwrap();
            let table = service.table::<Doc>(TABLE);
            let before = match step {
                Step::Insert => None,
                Step::Grow => Some(doc("a", 2, 'o')),
                Step::Shrink | Step::Delete => Some(doc("a", 40, 'o')),
            };
            if let Some(before) = &before {
                table.insert(before).await.unwrap();
            }
            let after = match step {
                Step::Insert | Step::Grow => Some(doc("a", 40, 'n')),
                Step::Shrink => Some(doc("a", 1, 'n')),
                Step::Delete => None,
            };
            engine.faults().inject(fault);
            let key = Doc::key("a").unwrap();
            let outcome = match &after {
                Some(after) if before.is_none() => table.insert(after).await.map(|_| ()),
                Some(after) => table.upsert(after).await.map(|_| ()),
                None => table.delete(&key, IfMatch::Any).await.map(|_| ()),
            };
            engine.faults().clear();

            let got = table
                .get(&key)
                .await
                .unwrap_or_else(|e| panic!("{case}: does not read: {e}"))
                .map(|v| v.value);
            assert!(
                got == before || got == after,
                "{case}: neither the old version nor the new"
            );
            match &outcome {
                Ok(()) => assert!(got == after, "{case}: succeeded but not applied"),
                Err(e) if !e.may_have_applied() => {
                    assert!(got == before, "{case}: said not applied, but applied: {e}")
                }
                Err(_) => {}
            }
            assert_laid_out_whole(&engine, &case).await;
        }
    }
}

/// Concurrent unconditional writers of different sizes and deleters: each call
/// succeeds or says it lost every race, and the rows left are one whole version.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn concurrent_writers_leave_one_whole_version() {
    let engine = MemEngine::new();
    let service = TableServiceClient::new(engine.clone());
    service.create_table(TABLE).await.unwrap();
    let mut tasks = Vec::new();
    for writer in 0..8usize {
        let table = service.table::<Doc>(TABLE);
        tasks.push(tokio::spawn(async move {
            let mut written = Vec::new();
            for round in 0..6usize {
                let long = (writer * 7 + round * 13) % 41;
                let seed = char::from(b'a' + u8::try_from(writer).unwrap());
                let outcome = if (writer + round) % 5 == 4 {
                    table
                        .delete(Doc::key("shared").unwrap(), IfMatch::Any)
                        .await
                        .map(|_| None)
                } else {
                    let value = doc("shared", long, seed);
                    table.upsert(&value).await.map(|_| Some(value))
                };
                match outcome {
                    Ok(value) => written.push(value),
                    Err(e) if e.kind() == ErrorKind::EntityNotFound => written.push(None),
                    Err(e) => assert_eq!(e.kind(), ErrorKind::PreconditionFailed, "{e}"),
                }
            }
            written
        }));
    }
    let mut outcomes = Vec::new();
    for task in tasks {
        outcomes.extend(task.await.unwrap());
    }
    let table = service.table::<Doc>(TABLE);
    let last = table
        .get(Doc::key("shared").unwrap())
        .await
        .unwrap()
        .map(|v| v.value);
    assert!(
        outcomes.contains(&last),
        "the entity is a version some writer wrote"
    );
    assert_laid_out_whole(&engine, "after the writers").await;
}

/// Under the wide layer, the storage engine never holds a row over the service's
/// limits; without it (a raw engine), the same entity is refused before anything
/// is written.
#[tokio::test]
async fn the_raw_engine_refuses_an_entity_it_cannot_hold() {
    let engine = MemEngine::new();
    engine.create_table(TABLE).await.unwrap();
    let row = tables_client::model::Row::to_entity(&doc("a", 40, 'x')).unwrap();
    let err = engine
        .write(TABLE, &tables_client::WriteOp::Insert(row.clone()))
        .await
        .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::EntityTooLarge, "{err}");
    assert!(all_rows(&engine, TABLE).await.unwrap().is_empty());
    let wide = WideEngine::new(Arc::new(engine.clone()), 8);
    wide.write(TABLE, &tables_client::WriteOp::Insert(row))
        .await
        .unwrap();
    assert_eq!(all_rows(&engine, TABLE).await.unwrap().len(), 3);
}

/// An engine that, right after the next query it answers (the wide layer's read
/// before a write), lets another client write a value: the write in flight then
/// works from a stale read.
#[derive(Debug)]
struct Meddler {
    inner: MemEngine,
    next: std::sync::Mutex<Option<Doc>>,
}

#[tables_client::async_trait]
impl tables_tests::forward::Forward for Meddler {
    fn inner(&self) -> &dyn Engine {
        &self.inner
    }

    async fn query(
        &self,
        table: &str,
        spec: &tables_client::QuerySpec,
        continuation: Option<&tables_client::ContinuationToken>,
    ) -> Result<tables_client::Page<DynamicEntity>> {
        let page = self.inner.query(table, spec, continuation).await?;
        let meddle = self.next.lock().unwrap().take();
        if let Some(value) = meddle {
            let other = TableServiceClient::new(self.inner.clone());
            other.table::<Doc>(TABLE).upsert(&value).await?;
        }
        Ok(page)
    }
}

/// Each unconditional write works from a read that a concurrent writer makes stale
/// at once (growing a one-row entity to three rows, or shrinking it): the write is
/// planned again, and leaves one whole version with no part row left over.
#[tokio::test]
async fn a_write_from_a_stale_read_is_planned_again() {
    #[derive(Debug, Clone, Copy)]
    enum Step {
        Delete,
        Upsert,
        Merge,
    }
    for step in [Step::Delete, Step::Upsert, Step::Merge] {
        for (before, meddled) in [(1, 40), (40, 1)] {
            let case = format!("{step:?} after {before} -> {meddled} long pages");
            let inner = MemEngine::new();
            let engine = Arc::new(tables_tests::forward::Forwarding(Meddler {
                inner: inner.clone(),
                next: std::sync::Mutex::new(None),
            }));
            let service = TableServiceClient::from_engine(engine.clone());
            service.create_table(TABLE).await.unwrap();
            let table = service.table::<Doc>(TABLE);
            table.insert(&doc("a", before, 'o')).await.unwrap();
            *engine.next.lock().unwrap() = Some(doc("a", meddled, 'm'));
            let key = Doc::key("a").unwrap();
            let written = match step {
                Step::Delete => table.delete(&key, IfMatch::Any).await.map(|_| ()),
                Step::Upsert => table.upsert(&doc("a", 20, 'n')).await.map(|_| ()),
                Step::Merge => table
                    .patch(
                        &key,
                        Patch::new().set(Doc::TITLE, "merged".to_owned()),
                        IfMatch::Any,
                    )
                    .await
                    .map(|_| ()),
            };
            assert!(
                engine.next.lock().unwrap().is_none(),
                "{case}: did not meddle"
            );
            written.unwrap_or_else(|e| panic!("{case}: {e}"));
            assert_laid_out_whole(&inner, &case).await;
            let now = table.get(&key).await.unwrap().map(|v| v.value);
            let expected = match step {
                Step::Delete => None,
                Step::Upsert => Some(doc("a", 20, 'n')),
                Step::Merge => Some(Doc {
                    title: "merged".to_owned(),
                    ..doc("a", meddled, 'm')
                }),
            };
            assert!(
                now == expected,
                "{case}: not the value written after the meddling"
            );
        }
    }
}

/// A wide type whose points are doubles, over six rows.
#[derive(Entity, Debug, Clone, PartialEq)]
#[entity(kind = "Minutes", partition_key = "{sensor}", row_key = "{day}", wide)]
struct Minutes {
    sensor: String,
    day: String,
    unit: String,
    #[entity(series)]
    minutes: [f64; 1440],
}

fn minutes(day: &str, base: f64) -> Minutes {
    let mut value = Minutes {
        sensor: "s".into(),
        day: day.into(),
        unit: "C".into(),
        minutes: [0.0; 1440],
    };
    for (m, reading) in value.minutes.iter_mut().enumerate() {
        *reading = base + f64::from(u32::try_from(m % 60).unwrap()) / 10.0;
    }
    value
}

/// A filter on the last point (on the last part row) inside a partition keeps
/// exactly the entities whose whole value matches.
async fn a_filter_on_the_last_part_row_is_judged_whole(backend: Backend) -> Result<()> {
    let service = backend.service();
    service.create_table(TABLE).await?;
    let table = service.table::<Minutes>(TABLE);
    table.insert(&minutes("1", 20.0)).await?;
    table.insert(&minutes("2", 30.0)).await?;
    let raw = raw_rows(service.engine().as_ref(), "s").await?;
    assert_eq!(raw.len(), 12, "six rows a day");
    let last = Minutes::MINUTES.point(1439).unwrap();
    let hot = table
        .query()
        .partition("s")
        .filter(last.gt(30.0))
        .collect()
        .await?;
    assert_eq!(hot, vec![minutes("2", 30.0)]);
    let both = table.query().filter(last.gt(25.0)).collect().await?;
    assert_eq!(both.len(), 2);
    Ok(())
}

/// A wide type with indexes: a unique copy index in the partition (written in the
/// entity's transaction) and a copy index in another partition (through intents).
/// Both copies are wide entities too.
#[derive(Entity, Debug, Clone, PartialEq)]
#[entity(
    kind = "Station",
    partition_key = "{site}",
    row_key = "st_{id:04}",
    wide
)]
#[entity(unique_index(name = "code", row_key = "code_{code}"))]
#[entity(index(
    name = "by_region",
    partition_key = "region_{region}",
    row_key = "by_region_{id:04}_{site}"
))]
struct Station {
    site: String,
    id: u32,
    code: String,
    region: String,
    #[entity(series)]
    pages: [String; 40],
}

fn station(id: u32, code: &str, region: &str, long: usize) -> Station {
    Station {
        site: "north".into(),
        id,
        code: code.into(),
        region: region.into(),
        pages: doc("s", long, 's').pages,
    }
}

/// Writes, moves and deletes of a wide indexed entity keep every copy whole and
/// findable, and the index check finds nothing to repair; no part row is left over.
async fn indexes_of_a_wide_type_hold_whole_copies(backend: Backend) -> Result<()> {
    let service = backend.service();
    service.create_table(TABLE).await?;
    let table = service.table::<Station>(TABLE);
    // 2.4 MB with its copy in the partition is more than one transaction carries:
    // refused whole, before anything is written.
    let err = table
        .insert(&station(1, "N1", "east", 40))
        .await
        .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::RequestTooLarge, "{err}");
    assert!(err.to_string().contains("wide"), "{err}");
    assert!(all_rows(service.engine().as_ref(), TABLE).await?.is_empty());

    let first = station(1, "N1", "east", 20);
    let outcome = table.insert(&first).await?;
    // The copy in the other partition, settled right after the write, is laid out
    // over rows too (it was rebuilt from a read, which drops the layout's marks).
    assert!(
        outcome.pending_upkeep.is_none(),
        "{:?}",
        outcome.pending_upkeep
    );
    let by_code = table
        .get_by_index(Station::code_key("north", "N1")?)
        .await?;
    assert_eq!(by_code.map(|v| v.value), Some(first.clone()));
    let by_region = table
        .get_by_index(Station::by_region_key("east", 1, "north")?)
        .await?;
    assert_eq!(by_region.map(|v| v.value), Some(first.clone()));

    // Shrink, recode and move region: the old copies go, the new ones are whole.
    let moved = station(1, "N9", "west", 3);
    table.upsert(&moved).await?;
    assert!(table
        .get_by_index(Station::code_key("north", "N1")?)
        .await?
        .is_none());
    assert!(table
        .get_by_index(Station::by_region_key("east", 1, "north")?)
        .await?
        .is_none());
    let found = table
        .get_by_index(Station::by_region_key("west", 1, "north")?)
        .await?;
    assert_eq!(found.map(|v| v.value), Some(moved.clone()));
    table.reconcile().await?;
    let check = table.verify_indexes().run().await?;
    assert!(check.is_clean(), "{check:?}");

    let raw = all_rows(service.engine().as_ref(), TABLE).await?;
    let stray = raw
        .iter()
        .filter(|r| r.row_key.contains(" ~"))
        .filter(|r| {
            let base = r.row_key.split(" ~").next().unwrap();
            !raw.iter().any(|b| {
                b.partition_key == r.partition_key
                    && b.row_key == base
                    && b.get("EntityPartsTag") == r.get("EntityPartsTag")
            })
        })
        .count();
    assert_eq!(stray, 0, "a part row without its base version");

    table
        .delete(Station::key("north", 1)?, IfMatch::Any)
        .await?;
    table.reconcile().await?;
    let left: Vec<String> = all_rows(service.engine().as_ref(), TABLE)
        .await?
        .into_iter()
        .filter(|r| !r.row_key.starts_with('$'))
        .map(|r| format!("{}/{}", r.partition_key, r.row_key))
        .collect();
    assert!(left.is_empty(), "rows left after the delete: {left:?}");
    Ok(())
}
