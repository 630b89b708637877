//! Typed insert and get through `Table<T>` against the raw engine calls they stand
//! for, on the mem engine (target: typed within 1.3x of raw).
//!
//! - insert: `table.insert(&value)` (encodes the value, then writes) against
//!   `engine.write(table, &WriteOp::Insert(row))` with the row built beforehand (only
//!   its RowKey changes per call);
//! - get: `table.get(key)` (reads, then decodes into the struct) against
//!   `engine.get_entity(table, &key, None)`, over 10,000 stored entities; and
//!   against that read followed by a copy of each property value
//!   (`raw_engine_taking_values`): the engine's get shares the stored properties
//!   and reads none of them, where a decode must read (and copy) every one.
//!
//! The entity has no indexes and 8 stored properties (plus `EntityType` and
//! `EntityVersion`). Each sample inserts into a table of its own, so tables stay the
//! same size for both contenders (and is deleted after it).
//!
//! The `indexed` group prices index upkeep: the same entity with a unique copy in
//! its own partition (one transaction with the primary and its intent) and a unique
//! copy in another partition (claimed before, confirmed after the primary commits),
//! inserted and then found by each index (`get_by_index` reads the copy, then the
//! primary it names, to check the copy is current).
//!
//! Run: `cargo bench -p tables-client --bench typed_ops`.

#![allow(missing_docs)]

use std::fmt::Write as _;
use std::hint::black_box;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use criterion::measurement::WallTime;
use criterion::{criterion_group, criterion_main, BenchmarkGroup, Criterion};
use tables_client::mem::MemEngine;
use tables_client::model::CopyIndex;
use tables_client::{
    DateTime, DynamicEntity, Engine, Entity, IndexKey, Key, Row, Table, TableServiceClient, Value,
    WriteOp,
};

#[derive(Entity, Debug, Clone, PartialEq)]
#[entity(kind = "Employee", rename_all = "PascalCase")]
#[entity(partition_key = "{department}", row_key = "empid_{employee_id:08}")]
pub struct Employee {
    department: String,
    employee_id: u32,
    first_name: String,
    last_name: String,
    age: i32,
    email: String,
    salary: i64,
    active: bool,
    hired: DateTime,
    rating: f64,
}

#[derive(Entity, Debug, Clone, PartialEq)]
#[entity(kind = "IndexedEmployee", rename_all = "PascalCase")]
#[entity(partition_key = "{department}", row_key = "empid_{employee_id:08}")]
#[entity(unique_index(name = "email", row_key = "email_{email}"))]
#[entity(unique_index(
    name = "by_badge",
    partition_key = "badge_{badge}",
    row_key = "employee"
))]
pub struct IndexedEmployee {
    department: String,
    employee_id: u32,
    email: String,
    badge: String,
    first_name: String,
    last_name: String,
}

fn indexed_employee(employee_id: u32) -> IndexedEmployee {
    IndexedEmployee {
        department: "Sales".into(),
        employee_id,
        email: format!("e{employee_id}@contoso.com"),
        badge: format!("B{employee_id:06}"),
        first_name: "Ann".into(),
        last_name: "Jones".into(),
    }
}

fn employee(employee_id: u32) -> Employee {
    Employee {
        department: "Sales".into(),
        employee_id,
        first_name: "Ann".into(),
        last_name: "Jones".into(),
        age: 34,
        email: "jonesj@contoso.com".into(),
        salary: 95_000,
        active: true,
        hired: DateTime::from_ymd_hms(2019, 4, 1, 9, 0, 0).unwrap_or(DateTime::MIN),
        rating: 4.5,
    }
}

const STORED: u32 = 10_000;

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .build()
        .expect("a current-thread runtime")
}

/// A new, empty table on `service`, named uniquely.
async fn fresh_table(service: &TableServiceClient, tables: &AtomicUsize) -> String {
    let name = format!("Bench{}", tables.fetch_add(1, Ordering::Relaxed));
    service
        .create_table(&name)
        .await
        .expect("the table is created");
    name
}

fn bench_insert(c: &mut Criterion) {
    let rt = runtime();
    let engine = MemEngine::new();
    let service = TableServiceClient::new(engine.clone());
    let tables = AtomicUsize::new(0);
    let template = employee(0).to_entity().expect("the row encodes");

    let mut group = c.benchmark_group("insert");
    group.bench_function("typed", |b| {
        b.iter_custom(|iters| {
            rt.block_on(async {
                let table: Table<Employee> = service.table(fresh_table(&service, &tables).await);
                let mut value = employee(0);
                let start = Instant::now();
                for i in 0..iters {
                    value.employee_id = i as u32;
                    black_box(table.insert(&value).await.expect("the insert succeeds"));
                }
                let elapsed = start.elapsed();
                service
                    .delete_table(table.name())
                    .await
                    .expect("the table is deleted");
                elapsed
            })
        })
    });
    group.bench_function("raw_engine", |b| {
        b.iter_custom(|iters| {
            rt.block_on(async {
                let name = fresh_table(&service, &tables).await;
                let mut op = WriteOp::Insert(template.clone());
                let start = Instant::now();
                for i in 0..iters {
                    if let WriteOp::Insert(row) = &mut op {
                        set_row_key(row, i);
                    }
                    black_box(engine.write(&name, &op).await.expect("the write succeeds"));
                }
                let elapsed = start.elapsed();
                service
                    .delete_table(&name)
                    .await
                    .expect("the table is deleted");
                elapsed
            })
        })
    });
    group.finish();
}

/// The RowKey the derive writes for `employee_id`, in place.
fn set_row_key(row: &mut DynamicEntity, employee_id: u64) {
    row.row_key.clear();
    let _ = write!(row.row_key, "empid_{employee_id:08}");
}

fn bench_get(c: &mut Criterion) {
    let rt = runtime();
    let engine = MemEngine::new();
    let service = TableServiceClient::new(engine.clone());
    let table: Table<Employee> = service.table("Employees");
    let keys: Vec<Key<Employee>> = rt.block_on(async {
        table.create().await.expect("the table is created");
        let mut keys = Vec::new();
        for id in 0..STORED {
            let value = employee(id);
            table.insert(&value).await.expect("the insert succeeds");
            keys.push(value.entity_key().expect("the key encodes"));
        }
        keys
    });
    let got = rt.block_on(table.get(keys[7].clone()));
    assert_eq!(got.ok().flatten().map(|v| v.value), Some(employee(7)));

    let mut group = c.benchmark_group("get");
    group.bench_function("typed", |b| {
        b.iter_custom(|iters| {
            rt.block_on(async {
                let start = Instant::now();
                for i in 0..iters {
                    let key = &keys[i as usize % keys.len()];
                    black_box(table.get(key).await.expect("the read succeeds"));
                }
                start.elapsed()
            })
        })
    });
    group.bench_function("raw_engine", |b| {
        b.iter_custom(|iters| {
            rt.block_on(async {
                let start = Instant::now();
                for i in 0..iters {
                    let key = &keys[i as usize % keys.len()];
                    black_box(
                        engine
                            .get_entity("Employees", key, None)
                            .await
                            .expect("the read succeeds"),
                    );
                }
                start.elapsed()
            })
        })
    });
    // The raw read that takes its values as the typed one does: the engine's get
    // copies nothing (the row shares its properties with the store), so it never
    // reads them; a caller that keeps the data copies each value out, touching the
    // memory the typed decode touches.
    group.bench_function("raw_engine_taking_values", |b| {
        b.iter_custom(|iters| {
            rt.block_on(async {
                let start = Instant::now();
                for i in 0..iters {
                    let key = &keys[i as usize % keys.len()];
                    let row = engine
                        .get_entity("Employees", key, None)
                        .await
                        .expect("the read succeeds")
                        .expect("the row exists");
                    let values: Vec<Value> = row.properties().map(|(_, v)| v.clone()).collect();
                    black_box((row.etag, values));
                }
                start.elapsed()
            })
        })
    });
    group.finish();
}

fn bench_indexed(c: &mut Criterion) {
    let rt = runtime();
    let engine = MemEngine::new();
    let service = TableServiceClient::new(engine.clone());
    let tables = AtomicUsize::new(0);

    let mut group = c.benchmark_group("indexed");
    group.bench_function("insert_two_unique_copies", |b| {
        b.iter_custom(|iters| {
            rt.block_on(async {
                let table: Table<IndexedEmployee> =
                    service.table(fresh_table(&service, &tables).await);
                let start = Instant::now();
                for i in 0..iters {
                    let value = indexed_employee(i as u32);
                    black_box(table.insert(&value).await.expect("the insert succeeds"));
                }
                let elapsed = start.elapsed();
                service
                    .delete_table(table.name())
                    .await
                    .expect("the table is deleted");
                elapsed
            })
        })
    });

    let table: Table<IndexedEmployee> = rt.block_on(async {
        let table = service.table(fresh_table(&service, &tables).await);
        for i in 0..STORED {
            table
                .insert(&indexed_employee(i))
                .await
                .expect("the insert succeeds");
        }
        table
    });
    let email_keys: Vec<_> = (0..STORED)
        .map(|i| IndexedEmployee::email_key("Sales", &format!("e{i}@contoso.com")))
        .collect::<Result<_, _>>()
        .expect("the keys build");
    let badge_keys: Vec<_> = (0..STORED)
        .map(|i| IndexedEmployee::by_badge_key(&format!("B{i:06}")))
        .collect::<Result<_, _>>()
        .expect("the keys build");
    bench_lookup(
        &mut group,
        &rt,
        &table,
        "get_by_index_same_partition",
        &email_keys,
    );
    bench_lookup(
        &mut group,
        &rt,
        &table,
        "get_by_index_other_partition",
        &badge_keys,
    );
    group.finish();
}

fn bench_lookup<const I: usize>(
    group: &mut BenchmarkGroup<'_, WallTime>,
    rt: &tokio::runtime::Runtime,
    table: &Table<IndexedEmployee>,
    name: &str,
    keys: &[IndexKey<IndexedEmployee, I>],
) where
    IndexedEmployee: CopyIndex<I>,
{
    group.bench_function(name, |b| {
        b.iter_custom(|iters| {
            rt.block_on(async {
                let start = Instant::now();
                for i in 0..iters {
                    let key = keys[(i as usize * 7919) % keys.len()].clone();
                    let found = table.get_by_index(key).await;
                    black_box(found.expect("the read succeeds").expect("found"));
                }
                start.elapsed()
            })
        })
    });
}

fn config() -> Criterion {
    Criterion::default()
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(3))
}

criterion_group! {
    name = benches;
    config = config();
    targets = bench_insert, bench_get, bench_indexed
}
criterion_main!(benches);
