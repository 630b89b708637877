//! A query answer's page as `tables-server` writes it: 1,000 stored rows at minimal
//! metadata, each a reader's clone of the stored row (sharing its property list,
//! as the mem engine hands them out), written again and again as repeated scans
//! of one partition write them.
//!
//! - `narrow`: the server bench's row (a string, an Int32, a Double, a Boolean);
//! - `wide`: nine properties, four with type annotations (Int64, DateTime, Guid,
//!   Binary), a string that needs escaping.
//!
//! `decode_page/*` is the client's side: the remote engine reading the same page
//! into entities.
//!
//! Run: `cargo bench -p tables-core --bench answer_encoding`.

#![allow(missing_docs)]

use std::hint::black_box;

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use tables_core::odata::decode_entity_page;
use tables_core::odata::response::{encode_entity_page, Metadata, Resource};
use tables_core::{DateTime, DynamicEntity, ETag};

const ROWS: usize = 1_000;

/// Makes the `i`th stored row of a kind.
type MakeRow = fn(usize) -> DynamicEntity;

fn stored(mut entity: DynamicEntity, i: usize) -> DynamicEntity {
    let timestamp =
        DateTime::from_ticks(638_450_000_000_000_000 + i as i64 * 10_001).unwrap_or(DateTime::MIN);
    entity.timestamp = Some(timestamp);
    entity.etag = Some(ETag::from_timestamp(timestamp));
    entity
}

fn narrow(i: usize) -> DynamicEntity {
    stored(
        DynamicEntity::new("s", format!("{i:08}"))
            .with("Name", format!("name {i}"))
            .with("Age", i as i32)
            .with("Score", i as f64 / 3.0)
            .with("Active", i & 1 == 0),
        i,
    )
}

fn wide(i: usize) -> DynamicEntity {
    stored(
        DynamicEntity::new("s", format!("{i:08}"))
            .with("Name", format!("name \"{i}\"\n"))
            .with("Age", i as i32)
            .with("Score", i as f64 / 3.0)
            .with("Active", i & 1 == 0)
            .with("Big", (i as i64) << 40)
            .with(
                "Hired",
                DateTime::from_ticks(630_000_000_000_000_000 + i as i64).unwrap_or(DateTime::MIN),
            )
            .with("Id", uuid::Uuid::from_u128(i as u128))
            .with("Blob", vec![i as u8; 24])
            .with("Email", format!("e{i}@contoso.com")),
        i,
    )
}

fn bench_pages(c: &mut Criterion) {
    let here = Resource {
        base_url: "http://127.0.0.1:10002/devstoreaccount1",
        account: "devstoreaccount1",
        table: "bench",
    };
    let mut group = c.benchmark_group("answer_page");
    group.throughput(Throughput::Elements(ROWS as u64));
    let rows: [(&str, MakeRow); 2] = [("narrow", narrow), ("wide", wide)];
    for (name, row) in rows {
        let store: Vec<DynamicEntity> = (0..ROWS).map(row).collect();
        let mut out = Vec::with_capacity(1 << 20);
        group.bench_function(name, |b| {
            b.iter(|| {
                // What a scan reads: clones of the stored rows.
                let page: Vec<DynamicEntity> = store.to_vec();
                out.clear();
                encode_entity_page(&page, None, Metadata::Minimal, &here, &mut out);
                black_box(out.len())
            })
        });
    }
    group.finish();

    let mut group = c.benchmark_group("decode_page");
    group.throughput(Throughput::Elements(ROWS as u64));
    for (name, row) in rows {
        let store: Vec<DynamicEntity> = (0..ROWS).map(row).collect();
        let mut body = Vec::new();
        encode_entity_page(&store, None, Metadata::Minimal, &here, &mut body);
        group.bench_function(name, |b| {
            b.iter(|| black_box(decode_entity_page(&body).map(|page| page.len())))
        });
    }
    group.finish();
}

criterion_group!(benches, bench_pages);
criterion_main!(benches);
