//! The cost of a large entity (`#[entity(blob)]`: the value in a blob, the row
//! holding its reference) against the same data stored inline in the row, on the
//! mem engine and mem blob store: what the blob layer itself costs (the read
//! before a replace, the upload, the reference, the fetch on read), without a
//! network.
//!
//! - write: `upsert` of an entity with a 60 KB photo (the most that still fits one
//!   property, so both forms can store it), replacing the same row each time;
//! - read: `get` of that entity.
//! - wide read and write: the guide's 365 daily counters as a series (a wide entity,
//!   two rows: base and one part) against the same 365 numbers inline, as JSON in
//!   one property of one row.
//!
//! Run: `cargo bench -p tables-client --bench large_entities`.

#![allow(missing_docs)]

use std::hint::black_box;
use std::sync::Arc;

use criterion::{criterion_group, criterion_main, Criterion};
use tables_client::blob::BlobStore;
use tables_client::mem::MemBlobStore;
use tables_client::{Entity, TableServiceClient};

const PHOTO_BYTES: usize = 60_000;

#[derive(Entity, Debug, Clone, PartialEq)]
#[entity(kind = "Inline", partition_key = "{department}", row_key = "{id}")]
pub struct Inline {
    department: String,
    id: String,
    name: String,
    photo: Vec<u8>,
}

#[derive(Entity, Debug, Clone, PartialEq)]
#[entity(kind = "InBlob", partition_key = "{department}", row_key = "{id}")]
pub struct InBlob {
    department: String,
    id: String,
    name: String,
    #[entity(blob)]
    photo: Vec<u8>,
}

#[derive(Entity, Debug, Clone, PartialEq)]
#[entity(kind = "WideCounters", partition_key = "{site}", row_key = "{year}")]
pub struct WideCounters {
    site: String,
    year: String,
    #[entity(series)]
    daily: [u32; 365],
}

#[derive(Entity, Debug, Clone, PartialEq)]
#[entity(kind = "JsonCounters", partition_key = "{site}", row_key = "{year}")]
pub struct JsonCounters {
    site: String,
    year: String,
    #[entity(json)]
    daily: Vec<u32>,
}

fn photo() -> Vec<u8> {
    (0..PHOTO_BYTES).map(|i| (i % 251) as u8).collect()
}

fn large_entities(c: &mut Criterion) {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .build()
        .expect("a runtime");
    let (inline, in_blob) = runtime.block_on(async {
        let blobs = Arc::new(MemBlobStore::new());
        blobs.create_container("photos").await.expect("container");
        let service = TableServiceClient::in_memory().with_blob_store(blobs, "photos");
        service.create_table("Staff").await.expect("table");
        let inline = service.table::<Inline>("Staff");
        let in_blob = service.table::<InBlob>("Staff");
        inline
            .upsert(&Inline {
                department: "hr".into(),
                id: "a".into(),
                name: "Ann".into(),
                photo: photo(),
            })
            .await
            .expect("inline");
        in_blob
            .upsert(&InBlob {
                department: "hr".into(),
                id: "b".into(),
                name: "Bob".into(),
                photo: photo(),
            })
            .await
            .expect("in blob");
        (inline, in_blob)
    });
    let inline_value = Inline {
        department: "hr".into(),
        id: "a".into(),
        name: "Ann".into(),
        photo: photo(),
    };
    let blob_value = InBlob {
        department: "hr".into(),
        id: "b".into(),
        name: "Bob".into(),
        photo: photo(),
    };
    let inline_key = Inline::key("hr", "a").expect("key");
    let blob_key = InBlob::key("hr", "b").expect("key");

    let mut write = c.benchmark_group("large_entity_write_60KB");
    write.bench_function("inline", |b| {
        b.iter(|| {
            runtime
                .block_on(inline.upsert(black_box(&inline_value)))
                .expect("write")
        });
    });
    write.bench_function("blob", |b| {
        b.iter(|| {
            runtime
                .block_on(in_blob.upsert(black_box(&blob_value)))
                .expect("write")
        });
    });
    write.finish();

    let mut read = c.benchmark_group("large_entity_read_60KB");
    read.bench_function("inline", |b| {
        b.iter(|| {
            runtime
                .block_on(inline.get(black_box(&inline_key)))
                .expect("read")
        });
    });
    read.bench_function("blob", |b| {
        b.iter(|| {
            runtime
                .block_on(in_blob.get(black_box(&blob_key)))
                .expect("read")
        });
    });
    read.finish();

    let daily: Vec<u32> = (0..365).map(|d| d * 7).collect();
    let wide_value = WideCounters {
        site: "home".into(),
        year: "2026".into(),
        daily: daily.clone().try_into().expect("365 days"),
    };
    let json_value = JsonCounters {
        site: "home".into(),
        year: "2025".into(),
        daily,
    };
    let (wide, json) = runtime.block_on(async {
        let service = TableServiceClient::in_memory();
        service.create_table("Counters").await.expect("table");
        let wide = service.table::<WideCounters>("Counters");
        let json = service.table::<JsonCounters>("Counters");
        wide.upsert(&wide_value).await.expect("wide");
        json.upsert(&json_value).await.expect("json");
        (wide, json)
    });
    let wide_key = WideCounters::key("home", "2026").expect("key");
    let json_key = JsonCounters::key("home", "2025").expect("key");

    let mut wide_read = c.benchmark_group("wide_entity_read_365_points");
    wide_read.bench_function("inline_json", |b| {
        b.iter(|| {
            runtime
                .block_on(json.get(black_box(&json_key)))
                .expect("read")
        });
    });
    wide_read.bench_function("wide_two_rows", |b| {
        b.iter(|| {
            runtime
                .block_on(wide.get(black_box(&wide_key)))
                .expect("read")
        });
    });
    wide_read.finish();

    let mut wide_write = c.benchmark_group("wide_entity_write_365_points");
    wide_write.bench_function("inline_json", |b| {
        b.iter(|| {
            runtime
                .block_on(json.upsert(black_box(&json_value)))
                .expect("write")
        });
    });
    wide_write.bench_function("wide_two_rows", |b| {
        b.iter(|| {
            runtime
                .block_on(wide.upsert(black_box(&wide_value)))
                .expect("write")
        });
    });
    wide_write.finish();
}

criterion_group!(benches, large_entities);
criterion_main!(benches);
