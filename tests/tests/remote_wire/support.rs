//! Shared by the `remote_wire` tests: engines wired to a [`FakeServer`], canned
//! answers in the Table service's shapes (docs/protocol.md), and readers for what
//! the fake recorded.

use std::future::Future;
use std::time::{Duration, Instant};

use tables_client::remote::{AccountKey, Credential, RemoteEngine, RetryPolicy};
use tables_client::{DynamicEntity, EntityKey};
use tables_tests::fake_server::{FakeServer, Recorded, Reply};

/// The development account (docs/protocol.md#endpoints-and-connection-strings).
pub(crate) const DEV_ACCOUNT: &str = "devstoreaccount1";
/// The development account's well-known key (docs/protocol.md#endpoints-and-connection-strings).
pub(crate) const DEV_KEY: &str =
    "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw==";
/// The table every test talks to.
pub(crate) const TABLE: &str = "mytable";
/// The ETag the fake hands out (in the form of docs/protocol.md#writes-and-etags).
pub(crate) const ETAG: &str = r#"W/"datetime'2024-01-01T00%3A00%3A00.0000000Z'""#;
/// The `Timestamp` matching [`ETAG`].
pub(crate) const TIMESTAMP: &str = "2024-01-01T00:00:00.0000000Z";
/// A request timeout long enough that only scripted delays hit it.
pub(crate) const PATIENT: Duration = Duration::from_secs(10);

/// `n` milliseconds.
pub(crate) fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}

/// The default policy with short backoffs (10 ms, at most 50 ms), so retried tests
/// stay fast and a honoured server hint stands out from the backoff.
pub(crate) fn fast_retry() -> RetryPolicy {
    RetryPolicy {
        initial_backoff: ms(10),
        max_backoff: ms(50),
        ..RetryPolicy::default()
    }
}

/// SharedKey with the development key.
pub(crate) fn shared_key() -> Credential {
    Credential::SharedKey(AccountKey::new(DEV_ACCOUNT, DEV_KEY).expect("the dev key is valid"))
}

/// An engine for `url` with this credential, policy and request timeout.
pub(crate) fn engine_at(
    url: &str,
    credential: Credential,
    retry: RetryPolicy,
    timeout: Duration,
) -> RemoteEngine {
    RemoteEngine::builder(url)
        .credential(credential)
        .retry_policy(retry)
        .request_timeout(timeout)
        .build()
        .expect("a loopback endpoint builds")
}

/// The usual engine for `server`: SharedKey, [`fast_retry`], [`PATIENT`].
pub(crate) fn engine(server: &FakeServer) -> RemoteEngine {
    engine_at(&server.url(), shared_key(), fast_retry(), PATIENT)
}

/// A server answering every request with `reply()`, and the usual engine for it.
pub(crate) async fn always(
    reply: impl Fn() -> Reply + Send + Sync + 'static,
) -> (FakeServer, RemoteEngine) {
    let server = FakeServer::start(move |_, _| reply()).await;
    let engine = engine(&server);
    (server, engine)
}

/// Runs `future`, failing the test if it takes longer than 30 s (a hang, or a
/// server hint slept through), and returns its output and how long it took.
pub(crate) async fn timed<F: Future>(future: F) -> (F::Output, Duration) {
    let started = Instant::now();
    let output = tokio::time::timeout(Duration::from_secs(30), future)
        .await
        .expect("the operation did not finish within 30 s");
    (output, started.elapsed())
}

/// An entity with one property, `n = 1`.
pub(crate) fn sample(partition_key: &str, row_key: &str) -> DynamicEntity {
    DynamicEntity::new(partition_key, row_key).with("n", 1)
}

/// The key (`pk`, `rk`).
pub(crate) fn key(partition_key: &str, row_key: &str) -> EntityKey {
    EntityKey::new(partition_key, row_key)
}

/// An entity as the service returns it in minimalmetadata (docs/protocol.md#entities).
pub(crate) fn entity_value(partition_key: &str, row_key: &str) -> serde_json::Value {
    serde_json::json!({
        "odata.etag": ETAG,
        "PartitionKey": partition_key,
        "RowKey": row_key,
        "Timestamp": TIMESTAMP,
        "n": 1,
    })
}

/// `200` with one entity and its `ETag` header.
pub(crate) fn entity_reply(partition_key: &str, row_key: &str) -> Reply {
    Reply::json(200, &entity_value(partition_key, row_key).to_string()).with_header("ETag", ETAG)
}

/// `200` with a page of entities (`{"value":[..]}`).
pub(crate) fn page_reply(entities: &[serde_json::Value]) -> Reply {
    Reply::json(200, &serde_json::json!({ "value": entities }).to_string())
}

/// `204` with an `ETag`, as a successful write answers.
pub(crate) fn no_content() -> Reply {
    Reply::empty(204).with_header("ETag", ETAG)
}

/// The service's JSON error body (docs/protocol.md#errors), with the usual request tail.
pub(crate) fn error_body(code: &str, message: &str) -> String {
    serde_json::json!({
        "odata.error": {
            "code": code,
            "message": {
                "lang": "en-US",
                "value": format!("{message}\nRequestId:0f0e0d0c\nTime:2024-01-01T00:00:00.0000000Z"),
            }
        }
    })
    .to_string()
}

/// An error answer: the JSON body and `x-ms-error-code`.
pub(crate) fn error_reply(status: u16, code: &str) -> Reply {
    Reply::json(status, &error_body(code, "The service says no."))
        .with_header("x-ms-error-code", code)
}

/// An answer with exactly this content type and body.
pub(crate) fn raw_reply(status: u16, content_type: &str, body: &str) -> Reply {
    Reply::Respond {
        status,
        headers: vec![("Content-Type".to_owned(), content_type.to_owned())],
        body: body.as_bytes().to_vec(),
    }
}

/// The boundary of the fake's `$batch` answers.
pub(crate) const BATCH_BOUNDARY: &str = "batchresponse_5f0c1d2e";
/// The changeset boundary inside them.
pub(crate) const CHANGESET_BOUNDARY: &str = "changesetresponse_8a9b7c6d";

/// The multipart body of a `$batch` answer holding these sub-responses (each an
/// HTTP message: status line, headers, blank line, body) in one changeset.
pub(crate) fn batch_body(parts: &[String]) -> String {
    let mut body = format!(
        "--{BATCH_BOUNDARY}\r\nContent-Type: multipart/mixed; boundary={CHANGESET_BOUNDARY}\r\n\r\n"
    );
    for part in parts {
        body.push_str(&format!(
            "--{CHANGESET_BOUNDARY}\r\nContent-Type: application/http\r\n\
             Content-Transfer-Encoding: binary\r\n\r\n{part}\r\n"
        ));
    }
    body.push_str(&format!(
        "--{CHANGESET_BOUNDARY}--\r\n--{BATCH_BOUNDARY}--\r\n"
    ));
    body
}

/// `202` with [`batch_body`] and its multipart content type
/// (docs/protocol.md#entity-group-transactions).
pub(crate) fn batch_reply(parts: &[String]) -> Reply {
    raw_reply(
        202,
        &format!("multipart/mixed; boundary={BATCH_BOUNDARY}"),
        &batch_body(parts),
    )
}

/// A successful sub-response for operation `index` (0-based).
pub(crate) fn batch_ok_part(index: usize) -> String {
    format!(
        "HTTP/1.1 204 No Content\r\nContent-ID: {}\r\nDataServiceVersion: 3.0;\r\nETag: {ETAG}\r\n\r\n",
        index + 1
    )
}

/// The single failing sub-response of a failed batch: operation `index` (0-based)
/// failed with `status` and `code` (message prefixed `"<index>:"`).
pub(crate) fn batch_error_part(index: usize, status: u16, reason: &str, code: &str) -> String {
    format!(
        "HTTP/1.1 {status} {reason}\r\nContent-ID: {}\r\nDataServiceVersion: 3.0;\r\n\
         Content-Type: application/json;odata=minimalmetadata;charset=utf-8\r\n\r\n{}",
        index + 1,
        error_body(
            code,
            &format!("{index}:The specified entity already exists.")
        ),
    )
}

/// Percent-decodes `text` as a server would: `%XX` escapes, and in a query `+` as
/// a space (so a client that forgets to encode `+` is caught).
pub(crate) fn percent_decode(text: &str, plus_is_space: bool) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let escaped = (bytes[i] == b'%')
            .then(|| text.get(i + 1..i + 3))
            .flatten()
            .and_then(|hex| u8::from_str_radix(hex, 16).ok());
        match (bytes[i], escaped) {
            (_, Some(byte)) => {
                out.push(byte);
                i += 3;
            }
            (b'+', None) if plus_is_space => {
                out.push(b' ');
                i += 1;
            }
            (byte, None) => {
                out.push(byte);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// The query parameters of a request, names and values percent-decoded, in order.
pub(crate) fn query_params(request: &Recorded) -> Vec<(String, String)> {
    request
        .query()
        .split('&')
        .filter(|pair| !pair.is_empty())
        .map(|pair| {
            let (name, value) = pair.split_once('=').unwrap_or((pair, ""));
            (percent_decode(name, true), percent_decode(value, true))
        })
        .collect()
}

/// One decoded query parameter; fails the test if it appears more than once.
pub(crate) fn query_param(request: &Recorded, name: &str) -> Option<String> {
    let mut found = query_params(request)
        .into_iter()
        .filter(|(n, _)| n == name)
        .map(|(_, v)| v);
    let first = found.next();
    assert!(
        found.next().is_none(),
        "{name} appears twice in {}",
        request.path_and_query
    );
    first
}

/// A header that must be present.
pub(crate) fn must<'a>(request: &'a Recorded, name: &str) -> &'a str {
    request.header(name).unwrap_or_else(|| {
        panic!(
            "{} {} has no {name} header; headers: {:?}",
            request.method,
            request.path(),
            request.headers.iter().map(|(n, _)| n).collect::<Vec<_>>()
        )
    })
}
