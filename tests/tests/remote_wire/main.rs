//! The remote engine on the wire, against a loopback fake of the Table service
//! (`tables_tests::fake_server`): retries and the server's hints, error kinds, honest
//! reporting of writes an earlier attempt may have applied, broken connections and
//! timeouts (this file); paging, malformed answers, request shape, credentials,
//! secrets in logs and the fault proxy (the modules under `remote_wire/`).

mod diagnostics;
mod malformed;
mod paging;
mod proxy;
mod secrets;
mod shape;
mod support;

use tables_client::remote::{RemoteEngine, RetryPolicy};
use tables_client::{Engine, ErrorKind, IfMatch, WriteOp};
use tables_tests::fake_server::{FakeServer, Reply};

use support::*;

fn insert(row_key: &str) -> WriteOp {
    WriteOp::Insert(sample("p", row_key))
}

// --- Retries and the server's hints -------------------------------------------

#[tokio::test]
async fn server_busy_hint_in_milliseconds_is_honoured() {
    let server = FakeServer::start(|_, n| match n {
        0 => error_reply(503, "ServerBusy").with_header("x-ms-retry-after-ms", "200"),
        _ => entity_reply("p", "r"),
    })
    .await;
    let engine = engine(&server);
    let (got, elapsed) = timed(engine.get_entity(TABLE, &key("p", "r"), None)).await;
    let got = got
        .expect("the retry succeeds")
        .expect("the entity is found");
    assert_eq!(got.key(), key("p", "r"));
    assert_eq!(server.request_count(), 2);
    // The policy's own backoff is at most 50 ms: only the hint explains 200 ms.
    assert!(
        elapsed >= ms(200),
        "retried after {elapsed:?}, before the 200 ms hint"
    );
}

#[tokio::test]
async fn too_many_requests_retry_after_seconds_is_honoured() {
    let server = FakeServer::start(|_, n| match n {
        0 => Reply::empty(429).with_header("Retry-After", "1"),
        _ => entity_reply("p", "r"),
    })
    .await;
    let engine = engine(&server);
    let (got, elapsed) = timed(engine.get_entity(TABLE, &key("p", "r"), None)).await;
    assert!(got.expect("the retry succeeds").is_some());
    assert_eq!(server.request_count(), 2);
    assert!(
        elapsed >= ms(1000),
        "retried after {elapsed:?}, before Retry-After: 1"
    );
}

#[tokio::test]
async fn hint_beyond_the_time_budget_fails_at_once() {
    let hints: [(u16, &str, &str, &str); 2] = [
        (429, "TooManyRequests", "Retry-After", "3600"),
        (503, "ServerBusy", "x-ms-retry-after-ms", "3600000"),
    ];
    for (status, code, header, value) in hints {
        let (server, engine) =
            always(move || error_reply(status, code).with_header(header, value)).await;
        let (result, elapsed) = timed(engine.get_entity(TABLE, &key("p", "r"), None)).await;
        let err = result.expect_err("an hour-long hint is not slept through");
        assert_eq!(err.kind(), ErrorKind::Throttled, "{status}: {err:?}");
        assert_eq!(err.status(), Some(status));
        assert_eq!(
            server.request_count(),
            1,
            "{status}: no retry within the budget"
        );
        assert!(elapsed < ms(5000), "{status}: took {elapsed:?}");
    }

    // A hint that fits the budget once but not twice: one retry, then the error.
    let server = FakeServer::start(|_, _| {
        error_reply(503, "ServerBusy").with_header("x-ms-retry-after-ms", "300")
    })
    .await;
    let policy = fast_retry().with_max_elapsed(ms(500));
    let engine = engine_at(&server.url(), shared_key(), policy, PATIENT);
    let (result, elapsed) = timed(engine.get_entity(TABLE, &key("p", "r"), None)).await;
    assert_eq!(result.expect_err("always 503").kind(), ErrorKind::Throttled);
    assert_eq!(
        server.request_count(),
        2,
        "0 ms + 300 ms fits 500 ms, 600 ms does not"
    );
    assert!(elapsed < ms(500), "took {elapsed:?}");
}

#[tokio::test]
async fn retries_are_exhausted_on_a_failing_server() {
    let policy = fast_retry();
    let attempts = policy.max_retries as usize + 1;

    let (server, engine) = always(|| error_reply(500, "InternalError")).await;
    let err = engine
        .get_entity(TABLE, &key("p", "r"), None)
        .await
        .expect_err("always 500");
    assert_eq!(err.kind(), ErrorKind::Server);
    assert_eq!(err.status(), Some(500));
    assert_eq!(err.service_code(), Some("InternalError"));
    assert_eq!(server.request_count(), attempts);

    // A 500 may come after the work was done: a write that kept getting 500 says so.
    let (server, engine) = always(|| error_reply(500, "InternalError")).await;
    let err = engine
        .write(TABLE, &insert("r"))
        .await
        .expect_err("always 500");
    assert_eq!(err.kind(), ErrorKind::Server);
    assert!(err.may_have_applied(), "{err:?}");
    assert_eq!(server.request_count(), attempts);

    // A 503 turns the request away before any work: nothing may have been applied.
    let (server, engine) = always(|| error_reply(503, "ServerBusy")).await;
    let err = engine
        .write(TABLE, &insert("r"))
        .await
        .expect_err("always 503");
    assert_eq!(err.kind(), ErrorKind::Throttled);
    assert!(!err.may_have_applied(), "{err:?}");
    assert_eq!(server.request_count(), attempts);

    // No retries at all under RetryPolicy::none().
    let server = FakeServer::start(|_, _| error_reply(500, "InternalError")).await;
    let engine = engine_at(&server.url(), shared_key(), RetryPolicy::none(), PATIENT);
    let err = engine
        .get_entity(TABLE, &key("p", "r"), None)
        .await
        .expect_err("500");
    assert_eq!(err.kind(), ErrorKind::Server);
    assert_eq!(server.request_count(), 1);
}

#[tokio::test]
async fn client_errors_are_not_retried_and_keep_their_kinds() {
    let replace = WriteOp::Replace {
        entity: sample("p", "r"),
        if_match: IfMatch::Any,
    };
    let delete = WriteOp::Delete {
        key: key("p", "r"),
        if_match: IfMatch::Any,
    };

    // get: 404 ResourceNotFound is "absent", a missing table is an error.
    let (server, engine) = always(|| error_reply(404, "ResourceNotFound")).await;
    let got = engine.get_entity(TABLE, &key("p", "r"), None).await;
    assert!(matches!(got, Ok(None)), "{got:?}");
    assert_eq!(server.request_count(), 1);
    let (server, engine) = always(|| error_reply(404, "TableNotFound")).await;
    let err = engine
        .get_entity(TABLE, &key("p", "r"), None)
        .await
        .expect_err("no table");
    assert_eq!(err.kind(), ErrorKind::TableNotFound);
    assert_eq!(server.request_count(), 1);

    let cases: Vec<(u16, &str, WriteOp, ErrorKind)> = vec![
        (400, "InvalidInput", insert("r"), ErrorKind::InvalidInput),
        (
            404,
            "ResourceNotFound",
            replace.clone(),
            ErrorKind::EntityNotFound,
        ),
        (404, "ResourceNotFound", delete, ErrorKind::EntityNotFound),
        (
            409,
            "EntityAlreadyExists",
            insert("r"),
            ErrorKind::EntityAlreadyExists,
        ),
        (
            412,
            "UpdateConditionNotSatisfied",
            replace,
            ErrorKind::PreconditionFailed,
        ),
    ];
    for (status, code, op, kind) in cases {
        let (server, engine) =
            always(move || error_reply(status, code).with_header("x-ms-request-id", "rid-4711"))
                .await;
        let err = engine.write(TABLE, &op).await.expect_err("an error answer");
        assert_eq!(err.kind(), kind, "{status} {code}: {err:?}");
        assert_eq!(err.status(), Some(status), "{code}");
        assert_eq!(err.service_code(), Some(code));
        assert_eq!(err.request_id(), Some("rid-4711"), "{code}");
        assert_eq!(err.entity_key(), Some(&key("p", "r")), "{code}");
        assert!(!err.may_have_applied(), "{code}: {err:?}");
        assert_eq!(
            server.request_count(),
            1,
            "{status} {code} must not be retried"
        );
    }

    let (server, engine) = always(|| error_reply(409, "TableAlreadyExists")).await;
    let err = engine.create_table(TABLE).await.expect_err("exists");
    assert_eq!(err.kind(), ErrorKind::TableAlreadyExists);
    assert_eq!(server.request_count(), 1);

    // Deleting a missing table answers 404 ResourceNotFound (docs/protocol.md §5).
    let (server, engine) = always(|| error_reply(404, "ResourceNotFound")).await;
    let err = engine.delete_table(TABLE).await.expect_err("no table");
    assert_eq!(err.kind(), ErrorKind::TableNotFound);
    assert_eq!(server.request_count(), 1);

    // A huge error page is not copied into the error.
    let page = format!("<html><body>{}</body></html>", "x".repeat(1 << 20));
    let (_server, engine) = always(move || raw_reply(400, "text/html", &page)).await;
    let err = engine.write(TABLE, &insert("r")).await.expect_err("400");
    assert_eq!(err.kind(), ErrorKind::InvalidInput);
    assert!(
        err.to_string().len() < 1000,
        "{} chars",
        err.to_string().len()
    );
}

#[tokio::test]
async fn applied_write_with_an_unreadable_optional_body_succeeds() {
    // The service applied the insert (201) but its optional entity body cannot be
    // read, and the ETag (Cosmos form) holds no timestamp. The write happened:
    // reporting a Decode error would invite a retry that then conflicts.
    let body = r#"{"PartitionKey":"p","RowKey":"r","n@odata.type":"Edm.Unknown","n":"1"}"#;
    let (server, engine) = always(move || {
        raw_reply(201, "application/json;odata=minimalmetadata", body)
            .with_header("ETag", r#"W/"0x8DC0FFEE12345678""#)
    })
    .await;
    let outcome = engine
        .write(TABLE, &insert("r"))
        .await
        .expect("the write was applied");
    assert_eq!(
        outcome.etag.as_ref().map(|e| e.as_str()),
        Some(r#"W/"0x8DC0FFEE12345678""#)
    );
    assert_eq!(outcome.timestamp, None);
    assert_eq!(server.request_count(), 1);
}

// --- Broken connections ------------------------------------------------------

#[tokio::test]
async fn dropped_connection_on_a_read_is_retried() {
    for cut in [Reply::Drop, Reply::DropAfterReading] {
        let first = cut.clone();
        let server = FakeServer::start(move |_, n| match n {
            0 => first.clone(),
            _ => entity_reply("p", "r"),
        })
        .await;
        let engine = engine(&server);
        let got = engine.get_entity(TABLE, &key("p", "r"), None).await;
        let got = got.unwrap_or_else(|e| panic!("{cut:?} then 200: {e:?}"));
        assert!(got.is_some());
        assert_eq!(server.request_count(), 2, "{cut:?}");
    }

    // An answer cut short in its body (Content-Length promises more, then the
    // connection closes) is a broken connection too.
    let server = FakeServer::start(|_, n| match n {
        0 => Reply::json(200, r#"{"PartitionKey":"p","Ro"#)
            .with_header("Content-Length", "500")
            .with_header("Connection", "close"),
        _ => entity_reply("p", "r"),
    })
    .await;
    let engine = engine(&server);
    let got = engine.get_entity(TABLE, &key("p", "r"), None).await;
    assert!(got.expect("the retry answers in full").is_some());
    assert_eq!(server.request_count(), 2);
}

/// A server whose first attempt is dropped after the request was read, and which
/// answers the retry with `then`.
async fn dropped_then(
    then: impl Fn() -> Reply + Send + Sync + 'static,
) -> (FakeServer, RemoteEngine) {
    let server = FakeServer::start(move |_, n| match n {
        0 => Reply::DropAfterReading,
        _ => then(),
    })
    .await;
    let engine = engine(&server);
    (server, engine)
}

#[tokio::test]
async fn insert_retried_after_a_lost_answer_says_it_may_have_applied() {
    let (server, engine) = dropped_then(|| error_reply(409, "EntityAlreadyExists")).await;
    let err = engine
        .write(TABLE, &insert("r"))
        .await
        .expect_err("409 on the retry");
    assert_eq!(err.kind(), ErrorKind::EntityAlreadyExists);
    assert!(err.may_have_applied(), "{err:?}");
    assert_eq!(server.request_count(), 2);

    // The contrast: a conflict on the first attempt is a plain conflict.
    let (_server, engine) = always(|| error_reply(409, "EntityAlreadyExists")).await;
    let err = engine.write(TABLE, &insert("r")).await.expect_err("409");
    assert_eq!(err.kind(), ErrorKind::EntityAlreadyExists);
    assert!(!err.may_have_applied(), "{err:?}");
}

#[tokio::test]
async fn delete_retried_after_a_lost_answer_says_it_may_have_applied() {
    let delete = WriteOp::Delete {
        key: key("p", "r"),
        if_match: IfMatch::Etag(tables_client::ETag::new(ETAG)),
    };
    let (server, engine) = dropped_then(|| error_reply(404, "ResourceNotFound")).await;
    let err = engine
        .write(TABLE, &delete)
        .await
        .expect_err("404 on the retry");
    assert_eq!(err.kind(), ErrorKind::EntityNotFound);
    assert!(err.may_have_applied(), "{err:?}");
    assert_eq!(server.request_count(), 2);

    let (_server, engine) = always(|| error_reply(404, "ResourceNotFound")).await;
    let err = engine.write(TABLE, &delete).await.expect_err("404");
    assert_eq!(err.kind(), ErrorKind::EntityNotFound);
    assert!(!err.may_have_applied(), "{err:?}");
}

/// Writes a second delivery could apply again (upserts, `If-Match: *`) are not
/// retried once an attempt may have been applied: the retry, or a late copy of the
/// first attempt, could land over another client's later write. The error says the
/// write may have applied. Turned away before any work (503), they are retried.
#[tokio::test]
async fn writes_that_could_apply_twice_are_not_retried_after_a_lost_answer() {
    let unsafe_writes = [
        WriteOp::UpsertReplace(sample("p", "r")),
        WriteOp::UpsertMerge(sample("p", "r")),
        WriteOp::Replace {
            entity: sample("p", "r"),
            if_match: IfMatch::Any,
        },
        WriteOp::Merge {
            entity: sample("p", "r"),
            if_match: IfMatch::Any,
        },
        WriteOp::Delete {
            key: key("p", "r"),
            if_match: IfMatch::Any,
        },
    ];
    for write in &unsafe_writes {
        assert!(!write.is_replay_safe(), "{write:?}");
        let (server, engine) = dropped_then(no_content).await;
        let err = engine.write(TABLE, write).await.expect_err("lost answer");
        assert_eq!(err.kind(), ErrorKind::Transport, "{write:?}: {err:?}");
        assert!(err.may_have_applied(), "{write:?}: {err:?}");
        assert_eq!(err.attempts(), Some(1));
        assert_eq!(server.request_count(), 1, "{write:?}: not retried");

        let (server, engine) = always_then_ok(503, "ServerBusy").await;
        engine
            .write(TABLE, write)
            .await
            .expect("retried after a 503");
        assert_eq!(server.request_count(), 2, "{write:?}");
    }
    // A batch with one operation that can't apply twice is safe as a whole: a second
    // delivery fails atomically. Only upserts: not retried.
    let upserts = [
        WriteOp::UpsertReplace(sample("p", "a")),
        WriteOp::UpsertReplace(sample("p", "b")),
    ];
    let (server, engine) =
        dropped_then(|| batch_reply(&[batch_ok_part(0), batch_ok_part(1)])).await;
    let err = engine
        .submit_batch(TABLE, &upserts)
        .await
        .expect_err("lost answer");
    assert!(err.may_have_applied(), "{err:?}");
    assert_eq!(server.request_count(), 1);
    let mixed = [insert("a"), WriteOp::UpsertReplace(sample("p", "b"))];
    let (server, engine) =
        dropped_then(|| batch_reply(&[batch_ok_part(0), batch_ok_part(1)])).await;
    let outcomes = engine.submit_batch(TABLE, &mixed).await.expect("retried");
    assert_eq!(server.request_count(), 2);
    assert!(outcomes.iter().all(|o| o.attempts == 2), "{outcomes:?}");
}

/// A server that answers `status`/`code` once, then 204.
async fn always_then_ok(status: u16, code: &'static str) -> (FakeServer, RemoteEngine) {
    let server = FakeServer::start(move |_, n| match n {
        0 => error_reply(status, code),
        _ => no_content(),
    })
    .await;
    let engine = engine(&server);
    (server, engine)
}

/// Outcomes and errors count the attempts, and every attempt of a call carries one
/// client request id: the caller's, or one made for the request.
#[tokio::test]
async fn attempts_and_client_request_ids() {
    let (server, engine) = always_then_ok(503, "ServerBusy").await;
    let outcome = engine.write(TABLE, &insert("r")).await.expect("retried");
    assert_eq!(outcome.attempts, 2);
    let ids: Vec<String> = server
        .requests()
        .iter()
        .map(|r| {
            r.header("x-ms-client-request-id")
                .unwrap_or_default()
                .to_owned()
        })
        .collect();
    assert_eq!(ids.len(), 2);
    assert_eq!(ids[0], ids[1], "the retry carries the same id");
    assert_eq!(ids[0].len(), 36);

    let (server, engine) = always(|| error_reply(500, "InternalError")).await;
    let id = tables_client::ClientRequestId::new("my-call-7").unwrap();
    let err = id
        .scope(engine.write(TABLE, &insert("r")))
        .await
        .expect_err("always 500");
    assert_eq!(err.attempts(), Some(fast_retry().max_retries + 1));
    assert_eq!(err.client_request_id(), Some("my-call-7"));
    assert!(server
        .requests()
        .iter()
        .all(|r| r.header("x-ms-client-request-id") == Some("my-call-7")));
}

#[tokio::test]
async fn create_table_retried_after_a_lost_answer_says_it_may_have_applied() {
    let (server, engine) = dropped_then(|| error_reply(409, "TableAlreadyExists")).await;
    let err = engine
        .create_table(TABLE)
        .await
        .expect_err("409 on the retry");
    assert_eq!(err.kind(), ErrorKind::TableAlreadyExists);
    assert!(err.may_have_applied(), "{err:?}");
    assert_eq!(server.request_count(), 2);
}

#[tokio::test]
async fn batch_retried_after_a_lost_answer_says_it_may_have_applied() {
    let ops = [insert("r1"), insert("r2")];
    let conflict = || batch_reply(&[batch_error_part(0, 409, "Conflict", "EntityAlreadyExists")]);

    let (server, engine) = dropped_then(conflict).await;
    let err = engine
        .submit_batch(TABLE, &ops)
        .await
        .expect_err("conflict on the retry");
    assert_eq!(err.kind(), ErrorKind::EntityAlreadyExists);
    assert_eq!(err.batch_index(), Some(0));
    assert!(err.may_have_applied(), "{err:?}");
    assert_eq!(server.request_count(), 2);

    let (_server, engine) = always(conflict).await;
    let err = engine
        .submit_batch(TABLE, &ops)
        .await
        .expect_err("conflict");
    assert_eq!(err.kind(), ErrorKind::EntityAlreadyExists);
    assert_eq!(err.batch_index(), Some(0));
    assert!(!err.may_have_applied(), "{err:?}");

    // A retried batch that succeeds returns every outcome.
    let (server, engine) =
        dropped_then(|| batch_reply(&[batch_ok_part(0), batch_ok_part(1)])).await;
    let outcomes = engine
        .submit_batch(TABLE, &ops)
        .await
        .expect("the retry commits");
    assert_eq!(outcomes.len(), 2);
    assert!(outcomes
        .iter()
        .all(|o| o.etag.as_ref().map(|e| e.as_str()) == Some(ETAG)));
    assert_eq!(server.request_count(), 2);
}

#[tokio::test]
async fn refused_connection_is_a_transport_error_that_applied_nothing() {
    let port = {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
        listener.local_addr().expect("address").port()
    };
    let url = format!("http://127.0.0.1:{port}/{DEV_ACCOUNT}");
    let engine = engine_at(&url, shared_key(), fast_retry(), PATIENT);
    let (result, _) = timed(engine.write(TABLE, &insert("r"))).await;
    let err = result.expect_err("nothing listens");
    assert_eq!(err.kind(), ErrorKind::Transport, "{err:?}");
    assert!(!err.may_have_applied(), "{err:?}");
    assert!(err.is_transient());
}

// --- Timeouts ----------------------------------------------------------------

#[tokio::test]
async fn slow_answer_times_out() {
    let server = FakeServer::start(|_, _| entity_reply("p", "r").after(ms(2000))).await;
    let engine = engine_at(&server.url(), shared_key(), RetryPolicy::none(), ms(200));
    let (result, elapsed) = timed(engine.get_entity(TABLE, &key("p", "r"), None)).await;
    let err = result.expect_err("2 s answer, 200 ms timeout");
    assert_eq!(err.kind(), ErrorKind::Timeout, "{err:?}");
    assert_eq!(server.request_count(), 1);
    assert!(elapsed < ms(1500), "the timeout fired after {elapsed:?}");
}

#[tokio::test]
async fn slow_first_attempt_is_retried() {
    let server = FakeServer::start(|_, n| match n {
        0 => entity_reply("p", "r").after(ms(2000)),
        _ => entity_reply("p", "r"),
    })
    .await;
    let engine = engine_at(&server.url(), shared_key(), fast_retry(), ms(200));
    let (got, elapsed) = timed(engine.get_entity(TABLE, &key("p", "r"), None)).await;
    assert!(got.expect("the second attempt answers").is_some());
    assert_eq!(server.request_count(), 2);
    assert!(elapsed < ms(1500), "took {elapsed:?}");

    // A timed-out insert may have been applied: its retry's conflict says so.
    let server = FakeServer::start(|_, n| match n {
        0 => no_content().after(ms(2000)),
        _ => error_reply(409, "EntityAlreadyExists"),
    })
    .await;
    let engine = engine_at(&server.url(), shared_key(), fast_retry(), ms(200));
    let (result, _) = timed(engine.write(TABLE, &insert("r"))).await;
    let err = result.expect_err("409 on the retry");
    assert_eq!(err.kind(), ErrorKind::EntityAlreadyExists);
    assert!(err.may_have_applied(), "{err:?}");
}

// --- Endpoints ---------------------------------------------------------------

#[test]
fn plain_http_to_a_remote_host_needs_allow_http() {
    let err = RemoteEngine::builder("http://example.com/acct")
        .build()
        .expect_err("plain HTTP off loopback");
    assert_eq!(err.kind(), ErrorKind::InvalidInput);
    let engine = RemoteEngine::builder("http://example.com/acct")
        .allow_http()
        .build()
        .expect("allowed explicitly");
    assert_eq!(engine.account(), "acct");
    assert!(RemoteEngine::builder("https://example.com/acct")
        .build()
        .is_ok());
}
