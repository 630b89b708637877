//! The Cosmos DB for Table profile (`MemOptions::cosmos`, `tables-server --profile
//! cosmos`) keeps the differences the service's FAQ documents
//! (docs/service-behaviour.md): results in an order the seed picks, within and
//! across pages, continuation resuming exactly; RowKeys over 255 bytes and batches
//! over 2 MB refused; case-sensitive table names; `Timestamp` filters matching
//! nothing; no service properties, statistics, CORS or ACLs; `429` with
//! `x-ms-retry-after-ms` past a request-rate budget. Each on the mem engine and over
//! HTTP on the server.

#![allow(clippy::unwrap_used)] // tests

use std::collections::BTreeSet;
use std::sync::Arc;

use tables_client::remote::{Credential, RemoteEngine};
use tables_client::{
    col, DynamicEntity, Engine, ErrorKind, PrefixedEngine, QuerySpec, ServiceKind, Value, WriteOp,
};
use tables_mem::{MemEngine, MemOptions};
use tables_server::Server;

/// The profile's engines: the mem engine with `seed`, and the run's Cosmos-profile
/// server (a table namespace of its own), named.
fn engines(seed: u64) -> Vec<(&'static str, Arc<dyn Engine>)> {
    vec![
        (
            "mem",
            Arc::new(MemEngine::with_options(MemOptions::cosmos(seed))),
        ),
        (
            "server",
            Arc::new(PrefixedEngine::unique(tables_tests::server::cosmos_engine())),
        ),
    ]
}

/// A remote engine on the Cosmos-profile server that does *not* know it is Cosmos:
/// it sends what the service must refuse itself.
fn unaware() -> Arc<dyn Engine> {
    let url = tables_tests::server::cosmos_url();
    Arc::new(PrefixedEngine::unique(
        RemoteEngine::builder(&url)
            .credential(Credential::SharedKey(tables_tests::azurite::dev_key()))
            .service(ServiceKind::AzureStorage)
            .build()
            .unwrap(),
    ))
}

async fn filled(engine: &dyn Engine, table: &str, rows: usize) {
    engine.create_table(table).await.unwrap();
    for i in 0..rows {
        let row = DynamicEntity::new(format!("p{}", i % 3), format!("r{i:04}")).with("N", i as i64);
        engine.write(table, &WriteOp::Insert(row)).await.unwrap();
    }
}

/// Every page of `spec`, following the continuation by hand.
async fn pages(engine: &dyn Engine, table: &str, spec: &QuerySpec) -> Vec<(String, String)> {
    let mut keys = Vec::new();
    let mut next = None;
    for _ in 0..10_000 {
        let page = engine.query(table, spec, next.as_ref()).await.unwrap();
        keys.extend(
            page.items
                .iter()
                .map(|e| (e.partition_key.clone(), e.row_key.clone())),
        );
        match page.continuation {
            Some(token) => next = Some(token),
            None => return keys,
        }
    }
    panic!("the query never ended");
}

#[tokio::test]
async fn results_come_in_an_order_the_seed_picks_and_pages_resume_exactly() {
    let mut orders = BTreeSet::new();
    for seed in [1, 2, 3] {
        for (name, engine) in engines(seed) {
            filled(engine.as_ref(), "Rows", 90).await;
            let spec = QuerySpec::new().top(7);
            let keys = pages(engine.as_ref(), "Rows", &spec).await;
            let mut sorted = keys.clone();
            sorted.sort();
            sorted.dedup();
            assert_eq!(sorted.len(), 90, "{name}: every row once");
            assert_eq!(keys.len(), 90, "{name}: no row twice");
            assert_ne!(
                keys, sorted,
                "{name}, seed {seed}: the rows came in key order"
            );
            // Within one partition too: the first page is not the partition's start.
            let one = pages(
                engine.as_ref(),
                "Rows",
                &QuerySpec::new().filter(col("PartitionKey").eq("p1")).top(5),
            )
            .await;
            let mut in_order = one.clone();
            in_order.sort();
            assert_ne!(one, in_order, "{name}: one partition in key order");
            if name == "mem" {
                orders.insert(keys);
            }
        }
    }
    assert_eq!(orders.len(), 3, "each seed gives another order");
}

#[tokio::test]
async fn a_row_key_over_255_bytes_is_refused() {
    let long = "r".repeat(256);
    let fits = "r".repeat(255);
    let mut engines = engines(1);
    engines.push(("server, sent unchecked", unaware()));
    for (name, engine) in engines {
        engine.create_table("Keys").await.unwrap();
        let refused = engine
            .write(
                "Keys",
                &WriteOp::Insert(DynamicEntity::new("p", long.clone())),
            )
            .await
            .unwrap_err();
        assert!(
            matches!(
                refused.kind(),
                ErrorKind::InvalidKey | ErrorKind::InvalidInput
            ),
            "{name}: {refused}"
        );
        assert!(refused.to_string().contains("255"), "{name}: {refused}");
        engine
            .write(
                "Keys",
                &WriteOp::Insert(DynamicEntity::new("p", fits.clone())),
            )
            .await
            .unwrap_or_else(|e| panic!("{name}: 255 bytes fit: {e}"));
    }
}

#[tokio::test]
async fn batches_over_2_mb_are_refused() {
    let mut engines = engines(1);
    engines.push(("server, sent unchecked", unaware()));
    for (name, engine) in engines {
        engine.create_table("Big").await.unwrap();
        // 40 rows of 60,000 bytes: about 3.2 MB encoded (base64), under Azure
        // Storage's 4 MiB, over Cosmos's 2 MB.
        let ops: Vec<WriteOp> = (0..40)
            .map(|i| {
                WriteOp::Insert(
                    DynamicEntity::new("p", format!("r{i:02}"))
                        .with("Blob", Value::Binary(vec![7; 60_000])),
                )
            })
            .collect();
        let err = engine.submit_batch("Big", &ops).await.unwrap_err();
        assert_eq!(err.kind(), ErrorKind::RequestTooLarge, "{name}: {err}");
        assert!(engine
            .query("Big", &QuerySpec::new(), None)
            .await
            .unwrap()
            .items
            .is_empty());
        // Half of it goes through.
        engine.submit_batch("Big", &ops[..15]).await.unwrap();
    }
}

#[tokio::test]
async fn table_names_are_case_sensitive_and_timestamp_filters_match_nothing() {
    for (name, engine) in engines(1) {
        engine.create_table("Orders").await.unwrap();
        engine
            .create_table("orders")
            .await
            .unwrap_or_else(|e| panic!("{name}: `orders` beside `Orders` is another table: {e}"));
        engine
            .write("Orders", &WriteOp::Insert(DynamicEntity::new("p", "r")))
            .await
            .unwrap();
        let lower = engine
            .query("orders", &QuerySpec::new(), None)
            .await
            .unwrap();
        assert!(
            lower.items.is_empty(),
            "{name}: `orders` holds `Orders`' row"
        );
        let since = QuerySpec::new().filter(col("Timestamp").ge(tables_client::DateTime::MIN));
        let found = engine.query("Orders", &since, None).await.unwrap();
        assert!(found.items.is_empty(), "{name}: a Timestamp filter matched");
        assert!(!engine.capabilities().timestamp_filters);
        assert!(engine.capabilities().case_sensitive_table_names);
    }
}

#[tokio::test]
async fn service_properties_statistics_cors_and_acls_answer_405() {
    let base = tables_tests::server::cosmos_url();
    let http = reqwest::Client::new();
    for (method, path) in [
        ("GET", "?restype=service&comp=properties"),
        ("PUT", "?restype=service&comp=properties"),
        ("GET", "?restype=service&comp=stats"),
        ("GET", "Orders?comp=acl"),
        ("OPTIONS", "Orders()"),
    ] {
        let answer = http
            .request(method.parse().unwrap(), format!("{base}/{path}"))
            .header("Origin", "https://example.com")
            .header("Access-Control-Request-Method", "GET")
            .send()
            .await
            .unwrap();
        assert_eq!(answer.status().as_u16(), 405, "{method} {path}");
        assert_eq!(
            answer.headers().get("x-ms-error-code").unwrap(),
            "MethodNotAllowed",
            "{method} {path}"
        );
    }
    // Azure's profile serves them.
    let azure = tables_tests::server::url();
    let stats = http
        .get(format!("{azure}/?restype=service&comp=stats"))
        .send()
        .await
        .unwrap();
    assert_ne!(stats.status().as_u16(), 405);
}

#[tokio::test]
async fn a_request_rate_budget_answers_429_with_retry_after_ms() {
    let mem = MemEngine::with_options(MemOptions::cosmos(1).with_requests_per_second(Some(5)));
    let mut throttled = None;
    for i in 0..20 {
        if let Err(err) = mem.create_table(&format!("Tab{i}")).await {
            throttled = Some(err);
            break;
        }
    }
    let err = throttled.expect("20 calls at once pass a budget of 5 a second");
    assert_eq!(err.kind(), ErrorKind::Throttled);
    assert_eq!(err.status(), Some(429));
    assert!(err.retry_after().is_some_and(|wait| wait.as_millis() >= 1));

    let server = Server::builder()
        .port(0)
        .engine_options(MemOptions::cosmos(1).with_requests_per_second(Some(5)))
        .start()
        .await
        .unwrap();
    // Signed, and without retries: the answer as the service gives it.
    let remote = RemoteEngine::builder(server.url())
        .credential(Credential::SharedKey(tables_tests::azurite::dev_key()))
        .service(ServiceKind::CosmosTable)
        .retry_policy(tables_client::remote::RetryPolicy::none())
        .build()
        .unwrap();
    let mut throttled = None;
    for i in 0..20 {
        if let Err(err) = remote.create_table(&format!("Tab{i}")).await {
            throttled = Some(err);
            break;
        }
    }
    let err = throttled.expect("20 requests at once pass a budget of 5 a second");
    assert_eq!(err.kind(), ErrorKind::Throttled, "{err}");
    assert_eq!(err.status(), Some(429));
    assert_eq!(err.service_code(), Some("TooManyRequests"));
    // With its retry policy, the remote engine waits as the answers say and every
    // create gets through.
    let patient = RemoteEngine::builder(server.url())
        .credential(Credential::SharedKey(tables_tests::azurite::dev_key()))
        .service(ServiceKind::CosmosTable)
        .build()
        .unwrap();
    for i in 0..12 {
        patient.create_table(&format!("Uab{i}")).await.unwrap();
    }
}
