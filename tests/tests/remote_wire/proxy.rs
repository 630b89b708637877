//! The fault proxy (`tables_tests::fault_proxy`) in front of the fake service: each
//! fault reaches the service or not as it says, the client sees what a broken
//! network shows it, and the delivery log tells which writes applied. The typed
//! layer's test through the same proxy in front of Azurite is
//! `typed_transport_faults.rs`.

use std::time::Duration;

use tables_client::remote::RetryPolicy;
use tables_client::{ETag, Engine, ErrorKind, IfMatch, WriteOp};
use tables_tests::fake_server::{FakeServer, Reply};
use tables_tests::fault_proxy::{FaultProxy, TransportFault};

use super::support::*;

/// A replay-safe write (a delete on an ETag).
fn conditional_delete(row_key: &str) -> WriteOp {
    WriteOp::Delete {
        key: key("p", row_key),
        if_match: IfMatch::Etag(ETag::new(ETAG)),
    }
}

/// Every fault once, on a client that never retries: the service sees the request
/// exactly when the fault forwards it (a late one only after the client gave up),
/// and the client's error says "may have applied" whenever it could have.
#[tokio::test]
async fn each_fault_reaches_the_service_or_not_as_it_says() {
    for fault in TransportFault::ALL {
        let upstream = FakeServer::start(|_, _| Reply::empty(204)).await;
        let proxy = FaultProxy::start(&upstream.url()).await;
        proxy.set_late_by(ms(400), ms(400));
        proxy.script([Some(fault)]);
        let engine = engine_at(&proxy.url(), shared_key(), RetryPolicy::none(), ms(200));

        let err = engine
            .write(TABLE, &conditional_delete("r"))
            .await
            .expect_err("every fault fails the only attempt");
        // A late request has not arrived when the client gives up.
        let arrived_before_the_error = upstream.request_count();
        assert!(proxy.settle(Duration::from_secs(5)).await, "{fault}");
        let arrived = upstream.request_count();
        assert_eq!(arrived, usize::from(fault.forwards()), "{fault}: {err}");
        if fault == TransportFault::Late {
            assert_eq!(
                arrived_before_the_error, 0,
                "late means after the client gave up"
            );
        }

        let expected_kind = match fault {
            TransportFault::LoseAnswer | TransportFault::CutAnswer => ErrorKind::Transport,
            // The proxy's 500 after forwarding is OperationTimedOut.
            TransportFault::Late | TransportFault::FailAfter => ErrorKind::Timeout,
            TransportFault::Throttled { .. } | TransportFault::Busy { .. } => ErrorKind::Throttled,
            TransportFault::FailBefore => ErrorKind::Server,
        };
        assert_eq!(err.kind(), expected_kind, "{fault}: {err}");
        // 500 is doubtful to the client whether or not it was forwarded: only the
        // proxy knows. 503 and 429 say the service did not take the request.
        let doubtful = !matches!(
            fault,
            TransportFault::Busy { .. } | TransportFault::Throttled { .. }
        );
        assert_eq!(err.may_have_applied(), doubtful, "{fault}: {err}");

        let log = proxy.deliveries();
        assert_eq!(log.len(), 1, "{fault}");
        assert_eq!(log[0].fault, Some(fault));
        assert_eq!(log[0].applied(), fault.forwards(), "{fault}");
        assert_eq!(log[0].method, "DELETE");
        assert!(
            log[0].client_request_id.as_deref() == err.client_request_id(),
            "{fault}: the log and the error name the same call"
        );
    }
}

/// 503 and 429 carry a retry hint exactly when asked; a cut answer is a prefix of
/// the real one.
#[tokio::test]
async fn throttling_answers_carry_hints_only_when_asked() {
    let upstream = FakeServer::start(|_, _| Reply::json(200, &"x".repeat(400))).await;
    let proxy = FaultProxy::start(&upstream.url()).await;
    proxy.script([
        Some(TransportFault::Busy { hint: true }),
        Some(TransportFault::Busy { hint: false }),
        Some(TransportFault::Throttled { hint: true }),
        Some(TransportFault::Throttled { hint: false }),
        Some(TransportFault::CutAnswer),
    ]);
    let http = reqwest::Client::new();
    let url = format!("{}/{TABLE}()", proxy.url());
    let mut hints = Vec::new();
    for _ in 0..4 {
        let answer = http.get(&url).send().await.unwrap();
        let header = |name: &str| {
            answer
                .headers()
                .get(name)
                .map(|v| v.to_str().unwrap().to_owned())
        };
        hints.push((
            answer.status().as_u16(),
            header("retry-after"),
            header("x-ms-retry-after-ms"),
            header("x-ms-error-code"),
        ));
    }
    assert_eq!(
        hints,
        [
            (503, Some("1".into()), None, Some("ServerBusy".into())),
            (503, None, None, Some("ServerBusy".into())),
            (429, None, Some("20".into()), Some("TooManyRequests".into())),
            (429, None, None, Some("TooManyRequests".into())),
        ]
    );
    assert_eq!(
        upstream.request_count(),
        0,
        "throttled requests are not forwarded"
    );

    let cut = async { http.get(&url).send().await?.bytes().await };
    assert!(cut.await.is_err(), "a cut answer cannot be read whole");
    assert_eq!(upstream.request_count(), 1);
    assert_eq!(
        http.get(&url)
            .send()
            .await
            .unwrap()
            .text()
            .await
            .unwrap()
            .len(),
        400
    );
}

/// An insert whose answer was lost is retried (it cannot apply twice); the retry
/// meets the first attempt's row, and the error says the write may have applied.
/// The log shows the first delivery applied and the second not.
#[tokio::test]
async fn a_lost_insert_answer_is_retried_and_reported_as_doubtful() {
    let upstream = FakeServer::start(|_, n| match n {
        0 => no_content(),
        _ => error_reply(409, "EntityAlreadyExists"),
    })
    .await;
    let proxy = FaultProxy::start(&upstream.url()).await;
    proxy.script([Some(TransportFault::LoseAnswer)]);
    let engine = engine_at(&proxy.url(), shared_key(), fast_retry(), PATIENT);

    let err = engine
        .write(TABLE, &WriteOp::Insert(sample("p", "r")))
        .await
        .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::EntityAlreadyExists);
    assert!(err.may_have_applied(), "{err}");
    assert_eq!(err.attempts(), Some(2));

    let log = proxy.deliveries();
    assert_eq!(log.len(), 2);
    assert!(log[0].applied() && !log[1].applied());
    assert!(log.iter().all(|d| d.writes(TABLE, &key("p", "r"))));
    assert!(!log[0].writes(TABLE, &key("p", "other")));
    assert!(!log[0].writes("othertable", &key("p", "r")));
}

/// An upsert whose answer was lost is not sent again (a second copy could land
/// over a later write): one delivery, and a doubtful error.
#[tokio::test]
async fn a_lost_upsert_answer_is_not_retried() {
    let upstream = FakeServer::start(|_, _| no_content()).await;
    let proxy = FaultProxy::start(&upstream.url()).await;
    proxy.script([Some(TransportFault::CutAnswer)]);
    let engine = engine_at(&proxy.url(), shared_key(), fast_retry(), PATIENT);

    let err = engine
        .write(TABLE, &WriteOp::UpsertReplace(sample("p", "r")))
        .await
        .unwrap_err();
    assert!(err.may_have_applied(), "{err}");
    assert_eq!(err.attempts(), Some(1));
    assert_eq!(upstream.request_count(), 1);
    assert!(proxy.deliveries()[0].writes(TABLE, &key("p", "r")));
}

/// A batch delivery is applied only when every part succeeded, and names the rows
/// its parts write.
#[tokio::test]
async fn batch_deliveries_tell_whether_they_applied_and_what_they_wrote() {
    let upstream = FakeServer::start(|_, n| match n {
        0 => batch_reply(&[batch_ok_part(0), batch_ok_part(1)]),
        _ => batch_reply(&[batch_error_part(
            1,
            412,
            "Precondition Failed",
            "UpdateConditionNotSatisfied",
        )]),
    })
    .await;
    let proxy = FaultProxy::start(&upstream.url()).await;
    let engine = engine_at(&proxy.url(), shared_key(), fast_retry(), PATIENT);
    let ops = [
        WriteOp::Insert(sample("p", "a")),
        WriteOp::Merge {
            entity: sample("p", "b"),
            if_match: IfMatch::Etag(ETag::new(ETAG)),
        },
    ];
    engine.submit_batch(TABLE, &ops).await.unwrap();
    let err = engine.submit_batch(TABLE, &ops).await.unwrap_err();
    assert_eq!(err.kind(), ErrorKind::PreconditionFailed);

    let log = proxy.deliveries();
    assert!(log.iter().all(|d| d.is_batch()));
    assert!(log[0].applied(), "every part succeeded");
    assert!(!log[1].applied(), "a part failed, so none applied");
    for delivery in &log {
        assert!(
            delivery.writes(TABLE, &key("p", "a")),
            "the insert names its key in its body"
        );
        assert!(
            delivery.writes(TABLE, &key("p", "b")),
            "the merge names it in its URL"
        );
        assert!(!delivery.writes(TABLE, &key("p", "c")));
    }
}
