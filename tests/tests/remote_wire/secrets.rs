//! Secrets (the account key, SAS signatures, request signatures) never reach
//! logs, `Debug` or `Display` output, while the request span's attributes do reach
//! the log.

use std::io;
use std::sync::{Arc, Mutex, PoisonError};

use tables_client::remote::{Credential, RemoteEngine, RetryPolicy, SasToken};
use tables_client::{Engine, Error, ErrorKind, WriteOp};
use tables_tests::fake_server::{FakeServer, Recorded, Reply};
use tracing_subscriber::fmt::format::FmtSpan;
use tracing_subscriber::fmt::MakeWriter;

use crate::support::*;

/// A SAS whose signature is easy to spot (`S3cr3tS1gnatur3+xyz=` decoded).
const SAS: &str =
    "sv=2019-02-02&sp=raud&se=2030-01-01T00%3A00%3A00Z&tn=mytable&sig=S3cr3tS1gnatur3%2Bxyz%3D";

/// What must never show: the key, its start, the SAS signature (any encoding of
/// it starts with this), and a SharedKey header (its signature is replayable).
fn secrets() -> [&'static str; 4] {
    [
        DEV_KEY,
        &DEV_KEY[..20],
        "S3cr3tS1gnatur3",
        "SharedKey devstoreaccount1:",
    ]
}

fn assert_no_secret(what: &str, text: &str) {
    for secret in secrets() {
        if let Some(at) = text.find(secret) {
            let start = text[..at]
                .char_indices()
                .rev()
                .nth(80)
                .map_or(0, |(i, _)| i);
            panic!(
                "{what} shows the secret {secret:?} at byte {at}: ...{}...",
                &text[start..at]
            );
        }
    }
}

/// An in-memory log sink shared with the subscriber.
#[derive(Clone, Default)]
struct Captured(Arc<Mutex<Vec<u8>>>);

impl Captured {
    fn text(&self) -> String {
        let bytes = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        String::from_utf8_lossy(&bytes).into_owned()
    }
}

impl io::Write for Captured {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.0
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .extend_from_slice(buf);
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

impl<'a> MakeWriter<'a> for Captured {
    type Writer = Captured;

    fn make_writer(&'a self) -> Captured {
        self.clone()
    }
}

/// The first request is throttled; gets succeed, inserts conflict, the rest
/// succeed; every answer carries a service request id.
fn service(request: &Recorded, n: usize) -> Reply {
    let reply = match (n, request.method.as_str()) {
        (0, _) => error_reply(503, "ServerBusy"),
        (_, "GET") => entity_reply("p", "r"),
        (_, "POST") => error_reply(409, "EntityAlreadyExists"),
        _ => no_content(),
    };
    reply.with_header("x-ms-request-id", "svc-req-42")
}

/// Runs successful, retried and failing operations on `engine`, keeping the
/// errors.
async fn exercise(engine: &RemoteEngine, errors: &mut Vec<Error>) {
    engine
        .get_entity(TABLE, &key("p", "r"), None)
        .await
        .expect("get");
    engine
        .write(TABLE, &WriteOp::UpsertReplace(sample("p", "r")))
        .await
        .expect("upsert");
    let err = engine
        .write(TABLE, &WriteOp::Insert(sample("p", "r")))
        .await
        .expect_err("the fake conflicts on inserts");
    assert_eq!(err.kind(), ErrorKind::EntityAlreadyExists);
    errors.push(err);
}

/// Engines that fail without an answer: nothing listening, and a server too slow.
async fn failing_engines(credential: &Credential, errors: &mut Vec<Error>) -> FakeServer {
    let port = {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
        listener.local_addr().expect("address").port()
    };
    let url = format!("http://127.0.0.1:{port}/{DEV_ACCOUNT}");
    let refused = engine_at(&url, credential.clone(), fast_retry(), PATIENT);
    let err = refused
        .get_entity(TABLE, &key("p", "r"), None)
        .await
        .expect_err("refused");
    assert_eq!(err.kind(), ErrorKind::Transport);
    errors.push(err);

    let slow = FakeServer::start(|_, _| entity_reply("p", "r").after(ms(2000))).await;
    let engine = engine_at(
        &slow.url(),
        credential.clone(),
        RetryPolicy::none(),
        ms(100),
    );
    let err = engine
        .get_entity(TABLE, &key("p", "r"), None)
        .await
        .expect_err("slow");
    assert_eq!(err.kind(), ErrorKind::Timeout);
    errors.push(err);
    slow
}

/// Engines refused with a `403` whose message echoes the request's signature, SAS
/// and all (the auth-failure path, which adds advice to the service's words).
async fn refused_engines(credentials: &[Credential], errors: &mut Vec<Error>) -> FakeServer {
    let server = FakeServer::start(crate::diagnostics::echo_refusal).await;
    for credential in credentials {
        let engine = engine_at(&server.url(), credential.clone(), fast_retry(), PATIENT);
        let err = engine
            .write(TABLE, &WriteOp::Insert(sample("p", "r")))
            .await
            .expect_err("refused");
        assert_eq!(err.kind(), ErrorKind::Auth);
        assert!(err.auth_hint().is_some(), "{err:?}");
        errors.push(err);
    }
    server
}

#[tokio::test]
async fn secrets_stay_out_of_logs_debug_and_errors() {
    let captured = Captured::default();
    let subscriber = tracing_subscriber::fmt()
        .with_max_level(tracing::Level::TRACE)
        .with_span_events(FmtSpan::CLOSE)
        .with_writer(captured.clone())
        .finish();
    let _guard = tracing::subscriber::set_default(subscriber);

    let mut errors = Vec::new();
    let server = FakeServer::start(service).await;
    let with_key = engine(&server);
    exercise(&with_key, &mut errors).await;
    let sas = Credential::Sas(SasToken::parse(SAS).expect("a valid SAS"));
    let with_sas = engine_at(&server.url(), sas.clone(), fast_retry(), PATIENT);
    exercise(&with_sas, &mut errors).await;
    assert_eq!(server.request_count(), 7, "one retry, six operations");
    let _slow_key = failing_engines(&shared_key(), &mut errors).await;
    let _slow_sas = failing_engines(&sas, &mut errors).await;
    let refusing = refused_engines(&[shared_key(), sas.clone()], &mut errors).await;
    assert_eq!(refusing.request_count(), 2, "a 403 is not retried");

    let log = captured.text();
    assert_no_secret("the log", &log);
    for expected in [
        "tables.request",
        "db.operation.name",
        "GetEntity",
        "InsertEntity",
        "db.collection.name",
        TABLE,
        "http.response.status_code",
        "http.request.resend_count=1",
        "503",
        "409",
        "az.service_request_id",
        "svc-req-42",
    ] {
        assert!(log.contains(expected), "the log lacks {expected:?}:\n{log}");
    }

    for engine in [&with_key, &with_sas] {
        assert_no_secret("an engine's Debug", &format!("{engine:?}"));
        assert_no_secret("an engine's alternate Debug", &format!("{engine:#?}"));
    }
    assert_no_secret("a credential's Debug", &format!("{:?}", shared_key()));
    assert_no_secret("a SAS credential's Debug", &format!("{sas:?}"));
    assert_eq!(errors.len(), 8);
    for err in &errors {
        assert_no_secret("an error's Debug", &format!("{err:?}"));
        assert_no_secret("an error's Display", &err.to_string());
        let mut source = std::error::Error::source(err);
        while let Some(inner) = source {
            assert_no_secret("an error source", &format!("{inner} / {inner:?}"));
            source = inner.source();
        }
    }
}
