//! Faults on demand in `tables-server`, seen through our remote engine: transient
//! statuses are retried (and logged by the server), a connection dropped after the
//! write applied is never a silent success or a silent loss, one dropped before
//! changes nothing, latency is added, and the control endpoint sets and clears
//! rules. Each test runs a server of its own (faults are per server).

#![allow(clippy::unwrap_used)] // tests

use std::time::{Duration, Instant};

use tables_client::remote::{RemoteEngine, RetryPolicy};
use tables_client::{DynamicEntity, Engine, EntityKey, IfMatch, WriteOp};
use tables_server::{FaultRule, RunningServer, Server};

async fn server(rules: &[&str]) -> RunningServer {
    let mut builder = Server::builder().port(0).fault_control(true);
    for rule in rules {
        builder = builder.fault(rule.parse::<FaultRule>().unwrap());
    }
    builder.start().await.unwrap()
}

fn engine(server: &RunningServer, retry: RetryPolicy) -> RemoteEngine {
    tables_tests::server::engine_at(&server.url(), retry)
}

fn quick_retries() -> RetryPolicy {
    RetryPolicy::default()
        .with_max_retries(4)
        .with_initial_backoff(Duration::from_millis(5))
        .with_max_backoff(Duration::from_millis(50))
}

async fn rows(engine: &RemoteEngine, table: &str) -> Vec<DynamicEntity> {
    tables_tests::read::all_rows(engine, table).await.unwrap()
}

#[tokio::test]
async fn transient_statuses_are_retried_and_each_fault_is_logged() {
    let server = server(&[
        "status=503,retry-after-ms=20,method=POST,table=faulty,times=2",
        "status=500,method=GET,table=faulty,times=1",
        "status=429,retry-after-ms=10,method=PUT,table=faulty,after=1,times=1",
    ])
    .await;
    let engine = engine(&server, quick_retries());
    engine.create_table("faulty").await.unwrap();
    let row = DynamicEntity::new("p", "r").with("N", 1);
    engine
        .write("faulty", &WriteOp::Insert(row.clone()))
        .await
        .unwrap();
    let key = EntityKey::new("p", "r");
    assert!(engine
        .get_entity("faulty", &key, None)
        .await
        .unwrap()
        .is_some());
    for n in 2..4 {
        engine
            .write("faulty", &WriteOp::UpsertReplace(row.clone().with("N", n)))
            .await
            .unwrap();
    }
    assert_eq!(rows(&engine, "faulty").await.len(), 1);
    let log = server.faults().log();
    assert_eq!(log.len(), 4, "{log:#?}");
    assert!(
        log[0].starts_with("status=503,retry-after-ms=20")
            && log[0].contains("POST /devstoreaccount1/faulty"),
        "{log:#?}"
    );
    assert!(log[2].starts_with("status=500"), "{log:#?}");
    assert!(
        log[3].starts_with("status=429") && log[3].contains("PUT"),
        "{log:#?}"
    );
    let counts: Vec<(u64, u64)> = server
        .faults()
        .rules_with_counts()
        .into_iter()
        .map(|(_, matched, fired)| (matched, fired))
        .collect();
    // GET: the failed get, its retry and the query.
    assert_eq!(counts, [(3, 2), (3, 1), (3, 1)]);
}

#[tokio::test]
async fn an_answer_lost_after_the_write_applied_is_never_silent() {
    let server = server(&[
        "drop=after,method=POST,table=lost,times=2",
        "drop=after,path=$batch,times=1",
    ])
    .await;
    let once = engine(&server, RetryPolicy::none());
    once.create_table("lost").await.unwrap();
    // Without retries: the insert applied on the server, its answer was lost, and
    // the caller is told it may have applied.
    let err = once
        .write("lost", &WriteOp::Insert(DynamicEntity::new("p", "zero")))
        .await
        .unwrap_err();
    assert!(err.may_have_applied(), "{err:?}");
    assert_eq!(rows(&once, "lost").await.len(), 1);
    // With retries: the caller hears either that it succeeded or that it may have
    // applied; the row is there once.
    let engine = engine(&server, quick_retries());
    match engine
        .write("lost", &WriteOp::Insert(DynamicEntity::new("p", "one")))
        .await
    {
        Ok(_) => {}
        Err(err) => assert!(err.may_have_applied(), "{err:?}"),
    }
    // The batch applied whole, then its answer was lost.
    let batch: Vec<WriteOp> = (0..3)
        .map(|i| WriteOp::Insert(DynamicEntity::new("b", format!("r{i}"))))
        .collect();
    match engine.submit_batch("lost", &batch).await {
        Ok(_) => {}
        Err(err) => assert!(err.may_have_applied(), "{err:?}"),
    }
    let keys: Vec<String> = rows(&engine, "lost")
        .await
        .into_iter()
        .map(|e| format!("{}/{}", e.partition_key, e.row_key))
        .collect();
    assert_eq!(keys, ["b/r0", "b/r1", "b/r2", "p/one", "p/zero"]);
    assert_eq!(server.faults().log().len(), 3);
}

/// A rule that names a table also selects the batches on it (the table is named
/// by the batch's operations, not its path), and no other table's batches.
#[tokio::test]
async fn a_table_rule_selects_the_batches_on_that_table() {
    let server = server(&[]).await;
    let engine = engine(&server, RetryPolicy::none());
    let batch: Vec<WriteOp> = (0..2)
        .map(|i| WriteOp::Insert(DynamicEntity::new("b", format!("r{i}"))))
        .collect();
    for table in ["orders", "others"] {
        engine.create_table(table).await.unwrap();
    }
    server
        .faults()
        .add("status=503,method=POST,table=Orders".parse().unwrap());
    let err = engine.submit_batch("orders", &batch).await.unwrap_err();
    assert_eq!(err.status(), Some(503), "{err:?}");
    assert!(rows(&engine, "orders").await.is_empty());
    engine.submit_batch("others", &batch).await.unwrap();
    assert_eq!(rows(&engine, "others").await.len(), 2);
    let log = server.faults().log();
    assert_eq!(log.len(), 1, "{log:#?}");
    assert!(
        log[0].ends_with("POST /devstoreaccount1/$batch (firing 1 of unlimited)"),
        "{log:#?}"
    );
}

#[tokio::test]
async fn a_connection_dropped_before_the_write_changes_nothing() {
    let server = server(&["drop=before,method=PUT,table=kept,times=1"]).await;
    let engine = engine(&server, RetryPolicy::none());
    engine.create_table("kept").await.unwrap();
    let stored = engine
        .write(
            "kept",
            &WriteOp::Insert(DynamicEntity::new("p", "r").with("N", 1)),
        )
        .await
        .unwrap();
    let replace = WriteOp::Replace {
        entity: DynamicEntity::new("p", "r").with("N", 2),
        if_match: IfMatch::Etag(stored.etag.clone().unwrap()),
    };
    let err = engine.write("kept", &replace).await.unwrap_err();
    // The client can't know the request never applied: it must say it may have.
    assert!(err.may_have_applied(), "{err:?}");
    let now = rows(&engine, "kept").await;
    assert_eq!(now[0].get("N"), Some(&tables_client::Value::Int32(1)));
    assert_eq!(now[0].etag, stored.etag);
    // The rule is spent: the same write now applies.
    engine.write("kept", &replace).await.unwrap();
}

#[tokio::test]
async fn latency_is_added_to_the_chosen_requests() {
    let server = server(&["latency=200,method=GET,table=slow,times=1"]).await;
    let engine = engine(&server, RetryPolicy::none());
    engine.create_table("slow").await.unwrap();
    let key = EntityKey::new("p", "r");
    let started = Instant::now();
    assert!(engine
        .get_entity("slow", &key, None)
        .await
        .unwrap()
        .is_none());
    assert!(started.elapsed() >= Duration::from_millis(200));
    assert_eq!(server.faults().log().len(), 1);
}

/// A request to the control endpoint, signed with the development account's key
/// as the endpoint asks (SharedKey over `/devstoreaccount1/_faults`).
fn control_request(
    http: &reqwest::Client,
    method: reqwest::Method,
    control: &str,
    body: &str,
) -> reqwest::RequestBuilder {
    let url = reqwest::Url::parse(control).unwrap();
    let date = httpdate::fmt_http_date(std::time::SystemTime::now());
    let authorization = tables_client::remote::table_authorization(
        &tables_tests::azurite::dev_key(),
        false,
        method.as_str(),
        "devstoreaccount1",
        &url,
        "",
        &date,
    );
    http.request(method, url)
        .header("x-ms-date", date)
        .header("authorization", authorization)
        .body(body.to_owned())
}

#[tokio::test]
async fn the_control_endpoint_sets_lists_and_clears_rules() {
    use reqwest::Method;
    let server = server(&[]).await;
    let http = reqwest::Client::new();
    let control = format!("http://{}/_faults", server.addr());
    let rule = "status=429,retry-after-ms=1500,path=/devstoreaccount1/Tables,times=1\n";
    // Unsigned, it is refused and nothing is added.
    let unsigned = http.post(&control).body(rule).send().await.unwrap();
    assert_eq!(unsigned.status(), 403);
    assert!(server.faults().rules_with_counts().is_empty());
    let added = control_request(&http, Method::POST, &control, rule)
        .send()
        .await
        .unwrap();
    assert_eq!(added.status(), 201);
    let tables = format!("{}/Tables", server.url());
    let refused = http.get(&tables).send().await.unwrap();
    assert_eq!(refused.status(), 429);
    assert_eq!(refused.headers()["retry-after"], "2");
    assert_eq!(refused.headers()["x-ms-retry-after-ms"], "1500");
    assert_eq!(refused.headers()["x-ms-error-code"], "TooManyRequests");
    // Spent after one: the next request reaches the service (and its auth check).
    assert_eq!(http.get(&tables).send().await.unwrap().status(), 403);
    let listed = control_request(&http, Method::GET, &control, "")
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert!(listed.contains("matched=2 fired=1"), "{listed}");
    assert!(
        listed.contains("-> GET /devstoreaccount1/Tables"),
        "{listed}"
    );
    let bad = control_request(&http, Method::POST, &control, "status=404")
        .send()
        .await
        .unwrap();
    assert_eq!(bad.status(), 400);
    assert!(bad.text().await.unwrap().contains("not 500, 503 or 429"));
    let cleared = control_request(&http, Method::DELETE, &control, "");
    assert_eq!(cleared.send().await.unwrap().status(), 204);
    assert!(server.faults().rules_with_counts().is_empty());

    // Without --fault-control the path is just an unknown account.
    let plain = Server::builder().port(0).start().await.unwrap();
    let answer = http
        .get(format!("http://{}/_faults", plain.addr()))
        .send()
        .await
        .unwrap();
    assert_eq!(answer.status(), 400);

    // Beside a host that is not loopback, it is refused unless allowed.
    let exposed = Server::builder()
        .host(std::net::IpAddr::from([0, 0, 0, 0]))
        .port(0)
        .fault_control(true)
        .start()
        .await
        .unwrap_err();
    assert_eq!(exposed.kind(), std::io::ErrorKind::InvalidInput);
    assert!(
        exposed.to_string().contains("--fault-control-any-host"),
        "{exposed}"
    );
}
