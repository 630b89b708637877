//! Errors that say what to do and where they came from, on the wire: a failed
//! connection names the endpoint (never a SAS or key), the request and what to
//! check; a `403` says what most likely caused it; a missing table is named; checks
//! made before sending are marked local; unchecked filter text goes out as written.

use std::time::{Duration, SystemTime};

use tables_client::remote::{Credential, RemoteEngine, RetryPolicy, SasToken};
use tables_client::{
    AuthHint, Engine, Error, ErrorKind, Filter, IfMatch, Origin, QuerySpec, WriteOp,
};
use tables_tests::fake_server::{FakeServer, Recorded, Reply};

use crate::support::*;

/// A SAS whose public fields a test sets, with a signature easy to spot.
fn sas(fields: &str) -> Credential {
    let query = format!("sv=2019-02-02&tn={TABLE}&{fields}&sig=S1gnatur3S1gnatur3%2Bxyz%3D");
    Credential::Sas(SasToken::parse(&query).expect("a valid SAS"))
}

/// A SAS time `offset` from now (negative: in the past).
fn sas_time(offset: i64) -> String {
    let now = SystemTime::now()
        .duration_since(SystemTime::UNIX_EPOCH)
        .expect("after 1970")
        .as_secs() as i64;
    let at = tables_client::DateTime::from_unix_nanos(i128::from(now + offset) * 1_000_000_000)
        .expect("in range");
    let (y, mo, d, h, mi, s) = at.to_ymd_hms();
    format!("{y:04}-{mo:02}-{d:02}T{h:02}%3A{mi:02}%3A{s:02}Z")
}

/// A port nothing listens on.
fn free_port() -> u16 {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    listener.local_addr().expect("address").port()
}

fn no_retry_engine(url: &str, credential: Credential) -> RemoteEngine {
    engine_at(url, credential, RetryPolicy::none(), PATIENT)
}

/// Asserts the error is a transport failure that names `origin` and the request
/// `what`, says `check`, and shows no part of the SAS.
fn assert_names(err: &Error, kind: ErrorKind, origin: &str, what: &str, check: &str) {
    let text = err.to_string();
    assert_eq!(err.kind(), kind, "{err:?}");
    assert_eq!(err.origin(), Origin::Transport, "{err:?}");
    assert_eq!(err.status(), None, "{err:?}");
    assert!(text.contains(origin), "no endpoint {origin:?} in: {text}");
    assert!(text.contains(what), "no request {what:?} in: {text}");
    assert!(text.contains(check), "no advice {check:?} in: {text}");
    let debug = format!("{err:?}");
    for secret in ["S1gnatur3", "sig=", "sv=", "se="] {
        assert!(!text.contains(secret), "{secret:?} in: {text}");
        assert!(!debug.contains(secret), "{secret:?} in: {debug}");
    }
}

/// A refused connection names the settings of the server that answered there before
/// (its `Server` header), and none when nothing has answered yet.
#[tokio::test]
async fn a_refused_connection_names_the_server_seen_there() {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let cases: [(&str, Option<&str>); 3] = [
        ("Azurite-Table/3.35.0", Some("--tableHost and --tablePort")),
        ("tables-server/0.1.0", Some("its --host and --port")),
        ("Windows-Azure-Table/1.0 Microsoft-HTTPAPI/2.0", None),
    ];
    for (server, settings) in cases {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind");
        let port = listener.local_addr().expect("address").port();
        let answer = format!(
            "HTTP/1.1 404 Not Found\r\nServer: {server}\r\nx-ms-error-code: ResourceNotFound\r\n\
             Connection: close\r\nContent-Length: 0\r\n\r\n"
        );
        // One answer, then the server is gone.
        let once = tokio::spawn(async move {
            let (mut socket, _) = listener.accept().await.expect("accept");
            let mut request = [0u8; 4096];
            let _ = socket.read(&mut request).await;
            let _ = socket.write_all(answer.as_bytes()).await;
        });
        let engine = no_retry_engine(
            &format!("http://127.0.0.1:{port}/{DEV_ACCOUNT}"),
            sas("sp=raud&se=2099-01-01T00%3A00%3A00Z"),
        );
        // A 404: the entity is missing, and the answer named the server.
        let first = engine.get_entity(TABLE, &key("p", "r"), None).await;
        assert!(matches!(first, Ok(None)), "{server}: {first:?}");
        once.await.expect("the server task ends");
        let err = engine
            .get_entity(TABLE, &key("p", "r"), None)
            .await
            .unwrap_err();
        let text = err.to_string();
        assert!(text.contains("connection refused"), "{server}: {text}");
        match settings {
            Some(settings) => assert!(text.contains(settings), "{server}: {text}"),
            None => assert!(
                !text.contains("--tableHost") && !text.contains("--host"),
                "{server}: {text}"
            ),
        }
    }
}

#[tokio::test]
async fn connection_failures_name_the_endpoint_the_request_and_what_to_check() {
    let credential = sas("sp=raud&se=2099-01-01T00%3A00%3A00Z");
    // Nothing listening.
    let port = free_port();
    let origin = format!("http://127.0.0.1:{port}");
    let refused = no_retry_engine(&format!("{origin}/{DEV_ACCOUNT}"), credential.clone());
    let (result, _) = timed(refused.get_entity(TABLE, &key("p", "r"), None)).await;
    let err = result.unwrap_err();
    assert_names(
        &err,
        ErrorKind::Transport,
        &origin,
        &format!("GET /{DEV_ACCOUNT}/{TABLE}(PartitionKey='p',RowKey='r')"),
        "connection refused",
    );
    // Nothing answered there yet: no server's settings are named.
    let text = err.to_string();
    assert!(
        !text.contains("--tableHost") && !text.contains("--host"),
        "{text}"
    );
    let (result, _) = timed(refused.write(TABLE, &WriteOp::Insert(sample("p", "r")))).await;
    let err = result.unwrap_err();
    assert_names(
        &err,
        ErrorKind::Transport,
        &origin,
        &format!("POST /{DEV_ACCOUNT}/{TABLE}"),
        "is running",
    );
    assert!(!err.may_have_applied(), "never connected: {err:?}");
    let (result, _) = timed(refused.create_table(TABLE)).await;
    assert_names(
        &result.unwrap_err(),
        ErrorKind::Transport,
        &origin,
        &format!("POST /{DEV_ACCOUNT}/Tables"),
        "connection refused",
    );

    // A host name that does not resolve (`.invalid` never does: RFC 2606).
    let host = "nosuchaccount.table.core.invalid";
    let unresolved = no_retry_engine(&format!("https://{host}"), credential.clone());
    let (result, _) = timed(unresolved.query(TABLE, &QuerySpec::new(), None)).await;
    assert_names(
        &result.unwrap_err(),
        ErrorKind::Transport,
        &format!("https://{host}:443"),
        &format!("GET /{TABLE}()"),
        "does not resolve (DNS",
    );

    // HTTPS to a server that answers in plain HTTP.
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let port = listener.local_addr().expect("address").port();
    let plain = tokio::spawn(async move {
        use tokio::io::AsyncWriteExt;
        while let Ok((mut socket, _)) = listener.accept().await {
            let _ = socket
                .write_all(b"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n")
                .await;
        }
    });
    let origin = format!("https://127.0.0.1:{port}");
    let tls = no_retry_engine(&format!("{origin}/{DEV_ACCOUNT}"), credential.clone());
    let (result, _) = timed(tls.delete_table(TABLE)).await;
    assert_names(
        &result.unwrap_err(),
        ErrorKind::Transport,
        &origin,
        &format!("DELETE /{DEV_ACCOUNT}/Tables('{TABLE}')"),
        "the TLS handshake failed",
    );
    plain.abort();

    // No answer in time; an answer cut short.
    let slow = FakeServer::start(|_, _| entity_reply("p", "r").after(ms(2000))).await;
    let origin = slow.url().replace(&format!("/{DEV_ACCOUNT}"), "");
    let engine = engine_at(
        &slow.url(),
        credential.clone(),
        RetryPolicy::none(),
        ms(100),
    );
    let (result, _) = timed(engine.get_entity(TABLE, &key("p", "r"), None)).await;
    assert_names(
        &result.unwrap_err(),
        ErrorKind::Timeout,
        &origin,
        &format!("GET /{DEV_ACCOUNT}/{TABLE}(PartitionKey='p',RowKey='r')"),
        "request timeout",
    );
    let cut = FakeServer::start(|_, _| Reply::DropAfterReading).await;
    let origin = cut.url().replace(&format!("/{DEV_ACCOUNT}"), "");
    let engine = no_retry_engine(&cut.url(), credential);
    let (result, _) = timed(engine.write(TABLE, &WriteOp::UpsertReplace(sample("p", "r")))).await;
    let err = result.unwrap_err();
    assert_names(
        &err,
        ErrorKind::Transport,
        &origin,
        &format!("PUT /{DEV_ACCOUNT}/{TABLE}(PartitionKey='p',RowKey='r')"),
        "may have reached the service",
    );
    assert!(err.may_have_applied(), "{err:?}");
}

/// A `403` as Azure sends it (JSON), with the service's clock in `Date`.
fn refused(code: &'static str, service_time: SystemTime) -> Reply {
    error_reply(403, code).with_header("Date", httpdate::fmt_http_date(service_time))
}

/// The error of one insert against a server answering `reply`.
async fn refused_insert(credential: Credential, reply: Reply) -> Error {
    let server = FakeServer::start(move |_, _| reply.clone()).await;
    let engine = engine_at(&server.url(), credential, fast_retry(), PATIENT);
    let err = engine
        .write(TABLE, &WriteOp::Insert(sample("p", "r")))
        .await
        .expect_err("refused");
    assert_eq!(server.request_count(), 1, "a 403 is not retried");
    err
}

#[tokio::test]
async fn auth_failures_say_what_most_likely_caused_them() {
    let now = SystemTime::now();
    let hour = Duration::from_secs(3600);
    let cases: Vec<(&str, Credential, Reply, Option<AuthHint>, &str)> = vec![
        (
            "a key the account does not have",
            shared_key(),
            refused("AuthenticationFailed", now),
            Some(AuthHint::WrongAccountOrKey),
            DEV_ACCOUNT,
        ),
        (
            "this machine's clock an hour ahead of the service's",
            shared_key(),
            refused("AuthenticationFailed", now - hour),
            Some(AuthHint::ClockSkew),
            "synchronise",
        ),
        (
            "an expired SAS",
            sas(&format!(
                "sp=raud&st={}&se={}",
                sas_time(-7200),
                sas_time(-3600)
            )),
            refused("AuthenticationFailed", now),
            Some(AuthHint::SasExpired),
            "expired",
        ),
        (
            "a SAS not valid yet",
            sas(&format!(
                "sp=raud&st={}&se={}",
                sas_time(3600),
                sas_time(7200)
            )),
            refused("AuthenticationFailed", now),
            Some(AuthHint::SasNotYetValid),
            "valid only from",
        ),
        (
            "a read-only SAS for an insert",
            sas(&format!("sp=r&se={}", sas_time(3600))),
            refused("AuthorizationPermissionMismatch", now),
            Some(AuthHint::MissingPermission),
            "needs \"a\"",
        ),
        (
            "a SAS for another table",
            Credential::Sas(
                SasToken::parse(&format!(
                    "sv=2019-02-02&tn=other&sp=raud&se={}&sig=S1gnatur3",
                    sas_time(3600)
                ))
                .unwrap(),
            ),
            refused("AuthenticationFailed", now),
            Some(AuthHint::MissingPermission),
            "\"other\"",
        ),
        (
            "a SAS signed with another key",
            sas(&format!("sp=raud&se={}", sas_time(3600))),
            refused("AuthenticationFailed", now),
            Some(AuthHint::WrongAccountOrKey),
            "another key",
        ),
        (
            "no credential",
            Credential::Anonymous,
            // Azurite's form: XML, no Date header.
            raw_reply(
                403,
                "application/xml",
                "<?xml version=\"1.0\"?><Error><Code>AuthorizationFailure</Code>\
                 <Message>Server failed to authenticate the request.</Message></Error>",
            ),
            Some(AuthHint::NoCredential),
            "No credential",
        ),
    ];
    for (what, credential, reply, hint, advice) in cases {
        let err = refused_insert(credential, reply).await;
        assert_eq!(err.kind(), ErrorKind::Auth, "{what}: {err:?}");
        assert_eq!(err.origin(), Origin::Service, "{what}: {err:?}");
        assert_eq!(err.status(), Some(403), "{what}");
        assert_eq!(err.auth_hint(), hint, "{what}: {err}");
        assert!(err.to_string().contains(advice), "{what}: {err}");
        assert!(!err.is_transient(), "{what}");
    }
}

/// A `403` that echoes what the request carried, as Azure's
/// `AuthenticationErrorDetail` echoes the signature it found.
pub(crate) fn echo_refusal(request: &Recorded, _: usize) -> Reply {
    let authorization = request.header("Authorization").unwrap_or_default();
    let message = format!(
        "Server failed to authenticate the request. The MAC signature found in the HTTP \
         request '{authorization}' is not the same as any computed signature. Query: {}",
        request.query()
    );
    Reply::json(403, &error_body("AuthenticationFailed", &message))
        .with_header("x-ms-error-code", "AuthenticationFailed")
        .with_header("Date", httpdate::fmt_http_date(SystemTime::now()))
}

/// The key, its signatures and a SAS signature, echoed back in a `403`'s message,
/// never reach the error: its `Display`, its `Debug` or its sources.
#[tokio::test]
async fn refusals_never_repeat_the_secrets_the_request_carried() {
    let server = FakeServer::start(echo_refusal).await;
    let sas_credential = sas(&format!("sp=raud&se={}", sas_time(3600)));
    for credential in [shared_key(), sas_credential] {
        let engine = engine_at(&server.url(), credential, fast_retry(), PATIENT);
        let err = engine
            .get_entity(TABLE, &key("p", "r"), None)
            .await
            .expect_err("refused");
        assert_eq!(err.kind(), ErrorKind::Auth);
        let mut shown = format!("{err} {err:?}");
        let mut source = std::error::Error::source(&err);
        while let Some(inner) = source {
            shown.push_str(&format!(" {inner} {inner:?}"));
            source = inner.source();
        }
        assert!(shown.contains("The MAC signature found"), "{shown}");
        // What the request carried, and the server echoed: the request signature
        // or the SAS signature, raw and decoded, and the key.
        let requests = server.requests();
        let last = requests.last().expect("a request");
        let mut secrets = vec![DEV_KEY[..20].to_owned(), "S1gnatur3".to_owned()];
        if let Some(authorization) = last.header("Authorization") {
            let (_, signature) = authorization.split_once(':').expect("SharedKey a:sig");
            secrets.push(signature.to_owned());
        }
        if let Some(sig) = query_param(last, "sig") {
            secrets.push(sig.clone());
            let raw = last.query().split("sig=").nth(1).unwrap_or_default();
            secrets.push(raw.split('&').next().unwrap_or_default().to_owned());
        }
        assert!(secrets.len() > 2, "the request carried a secret: {last:?}");
        for secret in &secrets {
            assert!(!secret.is_empty());
            assert!(!shown.contains(secret.as_str()), "{secret:?} in: {shown}");
        }
    }
}

#[tokio::test]
async fn a_missing_table_is_named_by_the_remote_engine() {
    let not_found = || error_reply(404, "TableNotFound");
    let (_server, engine) = always(not_found).await;
    let mut errors = vec![
        (
            "get",
            engine.get_entity(TABLE, &key("p", "r"), None).await.err(),
        ),
        (
            "query",
            engine.query(TABLE, &QuerySpec::new(), None).await.err(),
        ),
        (
            "write",
            engine
                .write(TABLE, &WriteOp::Insert(sample("p", "r")))
                .await
                .err(),
        ),
    ];
    let (_server, batch_engine) =
        always(|| batch_reply(&[batch_error_part(0, 404, "Not Found", "TableNotFound")])).await;
    errors.push((
        "batch",
        batch_engine
            .submit_batch(TABLE, &[WriteOp::Insert(sample("p", "r"))])
            .await
            .err(),
    ));
    let (_server, delete_engine) = always(|| error_reply(404, "ResourceNotFound")).await;
    errors.push((
        "delete_table",
        delete_engine.delete_table(TABLE).await.err(),
    ));
    for (what, err) in errors {
        let err = err.unwrap_or_else(|| panic!("{what}: no error"));
        assert_eq!(err.kind(), ErrorKind::TableNotFound, "{what}: {err:?}");
        assert_eq!(err.table(), Some(TABLE), "{what}: {err:?}");
        assert!(err.to_string().contains(TABLE), "{what}: {err}");
        assert_eq!(err.origin(), Origin::Service, "{what}");
    }
}

/// Checks made before sending are marked local and send nothing; the service's
/// answers are marked as the service's; a single write's error names no batch
/// index, a batch's does.
#[tokio::test]
async fn local_checks_are_told_from_the_services_answers() {
    let (server, engine) = always(|| error_reply(409, "EntityAlreadyExists")).await;
    let bad_key = WriteOp::Insert(sample("p", "a/b"));
    let err = engine.write(TABLE, &bad_key).await.unwrap_err();
    assert_eq!(err.kind(), ErrorKind::InvalidKey);
    assert_eq!(err.origin(), Origin::Local);
    assert_eq!(err.request_id(), None);
    assert!(
        err.to_string()
            .contains("checked locally, nothing was sent"),
        "{err}"
    );
    let err = engine
        .query(TABLE, &QuerySpec::new().top(0), None)
        .await
        .unwrap_err();
    assert_eq!(
        (err.kind(), err.origin()),
        (ErrorKind::InvalidQuery, Origin::Local)
    );
    assert_eq!(server.request_count(), 0, "nothing was sent");

    let err = engine
        .write(TABLE, &WriteOp::Insert(sample("p", "r")))
        .await
        .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::EntityAlreadyExists);
    assert_eq!(err.origin(), Origin::Service);
    assert_eq!(err.batch_index(), None, "a single write is no batch");
    assert!(err.to_string().contains("[EntityAlreadyExists]"), "{err}");
    assert!(!err.to_string().contains("checked locally"), "{err}");
    let err = engine
        .write(
            TABLE,
            &WriteOp::Delete {
                key: key("p", "r"),
                if_match: IfMatch::Any,
            },
        )
        .await
        .unwrap_err();
    assert_eq!(err.batch_index(), None);
    assert_eq!(server.request_count(), 2);
}

#[tokio::test]
async fn unchecked_filter_text_is_sent_as_written() {
    let server = FakeServer::start(|_, _| page_reply(&[])).await;
    let engine = engine(&server);
    let text = "Age gt 30 AND Name eq \"x\"";
    engine
        .query(TABLE, &QuerySpec::new().filter_unchecked(text), None)
        .await
        .expect("sent");
    let combined = Filter::partition_key("p").and(Filter::unchecked_raw(text));
    engine
        .query(TABLE, &QuerySpec::new().filter(combined), None)
        .await
        .expect("sent");
    let requests = server.requests();
    assert_eq!(
        query_param(&requests[0], "$filter").as_deref(),
        Some(text),
        "exactly as written"
    );
    assert_eq!(
        query_param(&requests[1], "$filter"),
        Some(format!("PartitionKey eq 'p' and ({text})")),
    );
}
