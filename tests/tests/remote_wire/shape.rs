//! What goes on the wire: the headers of every request (docs/protocol.md §2), the
//! entity path (§1), the method and preconditions of each write mode (§5), and
//! each credential's mark on the request (§3): SharedKey, SAS, bearer.

use std::collections::HashSet;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use async_trait::async_trait;
use tables_client::remote::{AccessToken, Credential, RemoteEngine, SasToken, TokenCredential};
use tables_client::{ETag, Engine, ErrorKind, Filter, IfMatch, QuerySpec, Result, WriteOp};
use tables_core::odata::batch;
use tables_tests::fake_server::{FakeServer, Recorded, Reply};

use crate::support::*;

/// Answers as the service would, by method; the very first request gets a 503 so
/// that one operation is retried.
fn service(request: &Recorded, n: usize) -> Reply {
    if n == 0 {
        return error_reply(503, "ServerBusy");
    }
    match request.method.as_str() {
        "GET" => entity_reply("o'hara", "a b%c"),
        _ => no_content(),
    }
}

/// Checks the headers every request carries.
fn check_common_headers(request: &Recorded) {
    let what = format!("{} {}", request.method, request.path());
    assert_eq!(must(request, "x-ms-version"), "2019-02-02", "{what}");
    assert_eq!(
        must(request, "Accept"),
        "application/json;odata=minimalmetadata",
        "{what}"
    );
    // RFC 1123: `Mon, 01 Jan 2024 00:00:00 GMT`.
    let date = must(request, "x-ms-date");
    assert!(
        date.len() == 29 && date.ends_with(" GMT") && date.as_bytes()[3] == b',',
        "{what}: x-ms-date {date:?}"
    );
    // Azurite signs with `Date` when present: never two different dates.
    if let Some(plain) = request.header("Date") {
        assert_eq!(plain, date, "{what}");
    }
    assert!(
        !must(request, "x-ms-client-request-id").is_empty(),
        "{what}"
    );
    let authorization = must(request, "Authorization");
    let signature = authorization
        .strip_prefix(&format!("SharedKey {DEV_ACCOUNT}:"))
        .unwrap_or_else(|| panic!("{what}: Authorization is not SharedKey for {DEV_ACCOUNT}"));
    // base64 of a 32-byte HMAC-SHA256.
    assert!(
        signature.len() == 44
            && signature.ends_with('=')
            && signature[..43]
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'+' || b == b'/'),
        "{what}: the signature is not base64 of 32 bytes"
    );
}

#[tokio::test]
async fn requests_carry_the_protocol_headers_paths_and_preconditions() {
    let server = FakeServer::start(service).await;
    let engine = engine(&server);
    let key = key("o'hara", "a b%c");
    let entity = sample("o'hara", "a b%c");
    let etag = ETag::new(ETAG);

    let got = engine
        .get_entity(TABLE, &key, None)
        .await
        .expect("get after a 503");
    assert_eq!(got.map(|e| e.key()), Some(key.clone()));
    let writes = [
        WriteOp::Insert(entity.clone()),
        WriteOp::Replace {
            entity: entity.clone(),
            if_match: IfMatch::Etag(etag.clone()),
        },
        WriteOp::Merge {
            entity: entity.clone(),
            if_match: IfMatch::Any,
        },
        WriteOp::UpsertReplace(entity.clone()),
        WriteOp::UpsertMerge(entity.clone()),
        WriteOp::Delete {
            key: key.clone(),
            if_match: IfMatch::Etag(etag.clone()),
        },
    ];
    for op in &writes {
        let outcome = engine
            .write(TABLE, op)
            .await
            .unwrap_or_else(|e| panic!("{op:?}: {e:?}"));
        assert_eq!(outcome.etag.as_ref(), Some(&etag), "{:?}", op.mode());
    }

    let requests = server.requests();
    assert_eq!(requests.len(), 8);
    for request in &requests {
        check_common_headers(request);
    }

    // One client request id per operation, the same on its retry.
    let ids: Vec<&str> = requests
        .iter()
        .map(|r| must(r, "x-ms-client-request-id"))
        .collect();
    assert_eq!(
        ids[0], ids[1],
        "a retry keeps the operation's client request id"
    );
    let distinct: HashSet<&str> = ids[1..].iter().copied().collect();
    assert_eq!(
        distinct.len(),
        7,
        "operations have different client request ids"
    );

    // (method, If-Match, Prefer, has a body) per request.
    let expected: [(&str, Option<&str>, bool, bool); 8] = [
        ("GET", None, false, false),
        ("GET", None, false, false),
        ("POST", None, true, true),
        ("PUT", Some(ETAG), false, true),
        ("MERGE", Some("*"), false, true),
        ("PUT", None, false, true),
        ("MERGE", None, false, true),
        ("DELETE", Some(ETAG), false, false),
    ];
    let entity_path = format!("/{DEV_ACCOUNT}/{TABLE}(PartitionKey='o''hara',RowKey='a b%c')");
    for (request, (method, if_match, prefer, body)) in requests.iter().zip(expected) {
        let what = format!("request {method} {}", request.path());
        assert_eq!(request.method, method, "{what}");
        assert_eq!(request.header("If-Match"), if_match, "{what}");
        let sent_prefer = request.header("Prefer");
        assert_eq!(sent_prefer, prefer.then_some("return-no-content"), "{what}");
        if method == "POST" {
            assert_eq!(request.path(), format!("/{DEV_ACCOUNT}/{TABLE}"), "{what}");
        } else {
            // Quotes doubled, then percent-encoded (docs/protocol.md §1); `'` may be sent
            // literally or as %27, the structural `(),=` literally.
            assert_eq!(percent_decode(request.path(), false), entity_path, "{what}");
            assert!(request.path().contains("a%20b%25c"), "{what}");
            assert!(request.path().contains("(PartitionKey="), "{what}");
            assert!(request.path().contains(",RowKey="), "{what}");
        }
        if body {
            assert_eq!(must(request, "Content-Type"), "application/json", "{what}");
            let json: serde_json::Value =
                serde_json::from_slice(&request.body).expect("the body is JSON");
            assert_eq!(json["PartitionKey"], "o'hara", "{what}");
            assert_eq!(json["RowKey"], "a b%c", "{what}");
            assert_eq!(json["n"], 1, "{what}");
        } else {
            assert!(request.body.is_empty(), "{what}");
        }
    }
}

#[tokio::test]
async fn batch_requests_carry_absolute_sub_requests() {
    let server = FakeServer::start(|_, _| {
        batch_reply(&[batch_ok_part(0), batch_ok_part(1), batch_ok_part(2)])
    })
    .await;
    let engine = engine(&server);
    let ops = [
        WriteOp::Insert(sample("o'hara", "r1")),
        WriteOp::Merge {
            entity: sample("o'hara", "r2"),
            if_match: IfMatch::Any,
        },
        WriteOp::Delete {
            key: key("o'hara", "a b%c"),
            if_match: IfMatch::Etag(ETag::new(ETAG)),
        },
    ];
    let outcomes = engine
        .submit_batch(TABLE, &ops)
        .await
        .expect("the batch commits");
    assert_eq!(outcomes.len(), 3);

    let requests = server.requests();
    assert_eq!(requests.len(), 1);
    let request = &requests[0];
    check_common_headers(request);
    assert_eq!(request.method, "POST");
    assert_eq!(request.path(), format!("/{DEV_ACCOUNT}/$batch"));
    let content_type = must(request, "Content-Type");
    assert!(
        content_type.starts_with("multipart/mixed; boundary=batch_"),
        "{content_type}"
    );
    let parts = batch::parse_batch_request(content_type, &request.body).expect("a valid batch");
    let base = server.url();
    let expected = [
        ("POST", format!("{base}/{TABLE}"), None),
        (
            "MERGE",
            format!("{base}/{TABLE}(PartitionKey='o''hara',RowKey='r2')"),
            Some("*"),
        ),
        (
            "DELETE",
            format!("{base}/{TABLE}(PartitionKey='o''hara',RowKey='a b%c')"),
            Some(ETAG),
        ),
    ];
    assert_eq!(parts.len(), 3);
    for (part, (method, url, if_match)) in parts.iter().zip(expected) {
        assert_eq!(part.method, method);
        assert_eq!(percent_decode(&part.url, false), url);
        assert_eq!(part.header("If-Match"), if_match, "{method}");
        // Sub-requests are not signed on their own.
        assert_eq!(part.header("Authorization"), None, "{method}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn concurrent_operations_have_their_own_request_ids() {
    let server = FakeServer::start(|_, _| entity_reply("p", "r")).await;
    let engine = engine(&server);
    let tasks: Vec<_> = (0..32)
        .map(|i| {
            let engine = engine.clone();
            tokio::spawn(async move {
                engine
                    .get_entity(TABLE, &key("p", &format!("r{i}")), None)
                    .await
            })
        })
        .collect();
    for task in tasks {
        let got = task
            .await
            .expect("the task runs")
            .expect("the get succeeds");
        assert!(got.is_some());
    }
    let requests = server.requests();
    assert_eq!(requests.len(), 32);
    let ids: HashSet<&str> = requests
        .iter()
        .map(|r| must(r, "x-ms-client-request-id"))
        .collect();
    assert_eq!(ids.len(), 32);
}

const SAS: &str = "sv=2019-02-02&sp=r&se=2030-01-01T00%3A00%3A00Z&tn=t&sig=abc%2Bdef";

#[tokio::test]
async fn sas_parameters_are_appended_and_nothing_is_signed() {
    let server = FakeServer::start(|request, _| match request.path().ends_with("()") {
        true => page_reply(&[entity_value("p", "r")]),
        false => entity_reply("p", "r"),
    })
    .await;
    let token = SasToken::parse(SAS).expect("a valid SAS");
    let engine = engine_at(&server.url(), Credential::Sas(token), fast_retry(), PATIENT);
    engine
        .get_entity(TABLE, &key("p", "r"), None)
        .await
        .expect("get");
    let spec = QuerySpec::new().filter(Filter::partition_key("p")).top(5);
    engine.query(TABLE, &spec, None).await.expect("query");

    let requests = server.requests();
    assert_eq!(requests.len(), 2);
    for request in &requests {
        assert_eq!(request.header("Authorization"), None);
        for (name, value) in [
            ("sv", "2019-02-02"),
            ("sp", "r"),
            ("se", "2030-01-01T00:00:00Z"),
            ("tn", "t"),
            ("sig", "abc+def"),
        ] {
            let sent = query_param(request, name);
            assert_eq!(sent.as_deref(), Some(value), "{name} in {}", request.path());
        }
    }
    // The query's own parameters are kept beside the token's.
    assert_eq!(query_param(&requests[1], "$top").as_deref(), Some("5"));
    assert!(query_param(&requests[1], "$filter").is_some());
}

#[tokio::test]
async fn sas_key_range_refuses_outside_keys_before_sending() {
    let server = FakeServer::start(|_, _| entity_reply("p2", "r")).await;
    let token = SasToken::parse("sv=2019-02-02&sp=raud&spk=p2&epk=p2&sig=abc").expect("SAS");
    let engine = engine_at(&server.url(), Credential::Sas(token), fast_retry(), PATIENT);

    let err = engine
        .get_entity(TABLE, &key("p1", "r"), None)
        .await
        .expect_err("outside");
    assert_eq!(err.kind(), ErrorKind::Auth, "{err:?}");
    let spec = QuerySpec::new().filter(Filter::partition_key("p1"));
    let err = engine.query(TABLE, &spec, None).await.expect_err("outside");
    assert_eq!(err.kind(), ErrorKind::Auth, "{err:?}");
    let err = engine
        .write(TABLE, &WriteOp::Insert(sample("p3", "r")))
        .await
        .expect_err("outside");
    assert_eq!(err.kind(), ErrorKind::Auth, "{err:?}");
    assert_eq!(server.request_count(), 0, "refused before sending");

    // Inside the range, the request goes out.
    let got = engine
        .get_entity(TABLE, &key("p2", "r"), None)
        .await
        .expect("inside");
    assert!(got.is_some());
    assert_eq!(server.request_count(), 1);
}

#[tokio::test]
async fn shared_key_lite_and_anonymous_mark_requests_as_they_should() {
    let server = FakeServer::start(|_, _| entity_reply("p", "r")).await;
    let lite = Credential::SharedKeyLite(
        tables_client::remote::AccountKey::new(DEV_ACCOUNT, DEV_KEY).expect("the dev key"),
    );
    for credential in [lite, Credential::Anonymous] {
        let engine = engine_at(&server.url(), credential, fast_retry(), PATIENT);
        engine
            .get_entity(TABLE, &key("p", "r"), None)
            .await
            .expect("get");
    }
    let requests = server.requests();
    assert_eq!(requests.len(), 2);
    let lite = must(&requests[0], "Authorization");
    let signature = lite
        .strip_prefix(&format!("SharedKeyLite {DEV_ACCOUNT}:"))
        .expect("a SharedKeyLite header");
    assert_eq!(signature.len(), 44, "base64 of 32 bytes");
    assert_eq!(requests[1].header("Authorization"), None);
    assert_eq!(query_params(&requests[1]), Vec::new(), "nothing appended");
}

/// Hands out `token-1`, `token-2`, ... and counts the calls.
#[derive(Debug, Default)]
struct CountingTokens {
    calls: AtomicUsize,
}

#[async_trait]
impl TokenCredential for CountingTokens {
    async fn token(&self) -> Result<AccessToken> {
        let n = self.calls.fetch_add(1, Ordering::SeqCst) + 1;
        Ok(AccessToken::new(format!("token-{n}"), None))
    }
}

#[tokio::test]
async fn bearer_tokens_go_over_https_only() {
    // As every Azure SDK: a bearer token is never sent over plain HTTP, loopback
    // included. (Caching, refresh and challenges: tests/tests/server_oauth.rs, over
    // HTTPS.)
    let server = FakeServer::start(|_, _| entity_reply("p", "r")).await;
    let tokens = Arc::new(CountingTokens::default());
    let err = RemoteEngine::builder(server.url())
        .credential(Credential::Bearer(tokens.clone()))
        .build()
        .expect_err("bearer over HTTP");
    assert_eq!(err.kind(), ErrorKind::InvalidInput, "{err}");
    assert!(err.to_string().contains("HTTPS only"), "{err}");
    assert_eq!(tokens.calls.load(Ordering::SeqCst), 0, "no token asked for");
    assert_eq!(server.request_count(), 0, "nothing sent");
}
