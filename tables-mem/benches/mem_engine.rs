//! Benchmarks of the mem engine: point insert, point get and a 10k-entity partition
//! scan, with a bare `BTreeMap` baseline for the point get.
//!
//! The engine API is async; every call is driven with `futures::executor::block_on`
//! on the bench thread (no runtime, no task spawn), so the figures are the engine's
//! own cost plus one boxed future per call.
//!
//! Targets: point get within 3x of the baseline and >= 2M gets/s on one thread;
//! insert >= 500k/s; scan >= 5M entities/s.

// `criterion_group!` generates an undocumented public function.
#![allow(missing_docs)]

use std::collections::BTreeMap;
use std::hint::black_box;
use std::time::{Duration, Instant};

use criterion::{criterion_group, criterion_main, BatchSize, Criterion, Throughput};
use futures::executor::block_on;
use tables_core::{DynamicEntity, Engine, EntityKey, Filter, QuerySpec, WriteOp};
use tables_mem::MemEngine;

const TABLE: &str = "Bench";
const ROWS: usize = 10_000;

fn entity(pk: &str, i: usize) -> DynamicEntity {
    DynamicEntity::new(pk, format!("row{i:08}"))
        .with("Name", format!("name {i}"))
        .with("Age", i as i32)
        .with("Score", i as f64 / 3.0)
        .with("Active", i.is_multiple_of(2))
}

fn loaded_engine(pk: &str) -> MemEngine {
    let engine = MemEngine::new();
    block_on(async {
        engine.create_table(TABLE).await.expect("create table");
        for i in 0..ROWS {
            engine
                .write(TABLE, &WriteOp::Insert(entity(pk, i)))
                .await
                .expect("insert");
        }
    });
    engine
}

/// Keys in a scattered order, so lookups do not walk the tree in sequence.
fn scattered_keys(pk: &str) -> Vec<EntityKey> {
    (0..ROWS)
        .map(|i| EntityKey::new(pk, format!("row{:08}", (i * 7919) % ROWS)))
        .collect()
}

fn point_get(c: &mut Criterion) {
    let mut group = c.benchmark_group("point_get");
    group.throughput(Throughput::Elements(1));
    let engine = loaded_engine("p");
    let keys = scattered_keys("p");

    let mut i = 0;
    group.bench_function("mem_engine", |b| {
        b.iter(|| {
            let key = &keys[i % ROWS];
            i += 1;
            let got = block_on(engine.get_entity(TABLE, key, None)).expect("get");
            black_box(got)
        });
    });

    // The baseline: the same entities in a bare map keyed by (PartitionKey, RowKey).
    let map: BTreeMap<(String, String), DynamicEntity> = (0..ROWS)
        .map(|i| {
            let e = entity("p", i);
            ((e.partition_key.clone(), e.row_key.clone()), e)
        })
        .collect();
    let tuples: Vec<(String, String)> = keys
        .iter()
        .map(|k| (k.partition_key.clone(), k.row_key.clone()))
        .collect();
    let mut i = 0;
    group.bench_function("btreemap_lookup", |b| {
        b.iter(|| {
            let key = &tuples[i % ROWS];
            i += 1;
            black_box(map.contains_key(key))
        });
    });
    // Lookup plus the clone any owned result costs (what `get_entity` must return): a
    // `DynamicEntity` clone copies the two keys and shares the properties.
    let mut i = 0;
    group.bench_function("btreemap_lookup_clone", |b| {
        b.iter(|| {
            let key = &tuples[i % ROWS];
            i += 1;
            black_box(map.get(key).cloned())
        });
    });
    group.finish();
}

fn point_insert(c: &mut Criterion) {
    let mut group = c.benchmark_group("point_insert");
    group.throughput(Throughput::Elements(1));
    group.bench_function("mem_engine", |b| {
        b.iter_custom(|iters| {
            let engine = MemEngine::new();
            block_on(engine.create_table(TABLE)).expect("create table");
            let ops: Vec<WriteOp> = (0..iters as usize)
                .map(|i| WriteOp::Insert(entity("p", i)))
                .collect();
            let start = Instant::now();
            for op in &ops {
                black_box(block_on(engine.write(TABLE, op)).expect("insert"));
            }
            let elapsed: Duration = start.elapsed();
            drop((engine, ops));
            elapsed
        });
    });
    group.finish();
}

fn partition_scan(c: &mut Criterion) {
    let mut group = c.benchmark_group("partition_scan");
    group.throughput(Throughput::Elements(ROWS as u64));
    // The scanned partition sits between two others of the same size.
    let engine = loaded_engine("m");
    block_on(async {
        for pk in ["a", "z"] {
            for i in 0..ROWS {
                engine
                    .write(TABLE, &WriteOp::Insert(entity(pk, i)))
                    .await
                    .expect("insert");
            }
        }
    });
    let spec = QuerySpec::new().filter(Filter::partition_key("m"));
    group.bench_function("mem_engine_10k", |b| {
        b.iter_batched(
            || (),
            |()| {
                let mut count = 0;
                let mut token = None;
                loop {
                    let page = block_on(engine.query(TABLE, &spec, token.as_ref())).expect("query");
                    count += page.items.len();
                    token = page.continuation;
                    if token.is_none() {
                        break;
                    }
                }
                assert_eq!(count, ROWS);
                count
            },
            BatchSize::SmallInput,
        );
    });
    group.finish();
}

criterion_group!(benches, point_get, point_insert, partition_scan);
criterion_main!(benches);
