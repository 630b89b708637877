//! Malformed answers are `ErrorKind::Decode`, never a panic or a hang; error answers
//! whose body is not the JSON error (XML, HTML, empty) still get their kind from
//! `x-ms-error-code` or the body's code.

use tables_client::{Engine, ErrorKind, ListTablesOptions, QuerySpec, WriteOp};
use tables_tests::fake_server::Reply;

use crate::support::*;

const JSON: &str = "application/json;odata=minimalmetadata;streaming=true;charset=utf-8";

#[tokio::test]
async fn malformed_entities_are_decode_errors() {
    let bodies: [(&str, &str); 9] = [
        (JSON, "not json"),
        (JSON, r#"{"PartitionKey":1}"#),
        (JSON, r#"{"PartitionKey":"p"}"#),
        (JSON, r#"{"PartitionKey":"p","RowKey":"r","n":"#),
        (
            JSON,
            r#"{"PartitionKey":"p","RowKey":"r","n":{"nested":1}}"#,
        ),
        (
            JSON,
            r#"{"PartitionKey":"p","RowKey":"r","n@odata.type":"Edm.Nope","n":"1"}"#,
        ),
        (JSON, "[]"),
        (JSON, ""),
        (
            "text/html",
            "<html><body><h1>Welcome to nginx!</h1></body></html>",
        ),
    ];
    for (content_type, body) in bodies {
        let (server, engine) = always(move || raw_reply(200, content_type, body)).await;
        let (result, _) = timed(engine.get_entity(TABLE, &key("p", "r"), None)).await;
        let err = result.expect_err(body);
        assert_eq!(err.kind(), ErrorKind::Decode, "{body:?}: {err:?}");
        assert_eq!(
            server.request_count(),
            1,
            "{body:?}: a decode error is not retried"
        );
    }
}

#[tokio::test]
async fn malformed_pages_are_decode_errors() {
    for body in [
        r#"{"value":{}}"#,
        r#"{"value":[1]}"#,
        r#"{"value":[{"PartitionKey":"p"}]}"#,
        r#"{"value":"#,
    ] {
        let (_server, engine) = always(move || raw_reply(200, JSON, body)).await;
        let (result, _) = timed(engine.query(TABLE, &QuerySpec::new(), None)).await;
        let err = result.expect_err(body);
        assert_eq!(err.kind(), ErrorKind::Decode, "{body:?}: {err:?}");
    }
    for body in [r#"{"value":[{"TableName":5}]}"#, r#"{"value":{}}"#, "nope"] {
        let (_server, engine) = always(move || raw_reply(200, JSON, body)).await;
        let (result, _) = timed(engine.list_tables(&ListTablesOptions::default())).await;
        let err = result.expect_err(body);
        assert_eq!(err.kind(), ErrorKind::Decode, "{body:?}: {err:?}");
    }
}

#[tokio::test]
async fn malformed_batch_answers_are_decode_errors() {
    let ops = [
        WriteOp::Insert(sample("p", "r1")),
        WriteOp::Insert(sample("p", "r2")),
    ];
    let with_boundary = format!("multipart/mixed; boundary={BATCH_BOUNDARY}");
    let one_part_of_two = batch_body(&[batch_ok_part(0)]);
    let bad_status = batch_body(&[
        "HTTP/1.1 abc OK\r\n\r\n".to_owned(),
        "HTTP/1.1 204 No Content\r\n\r\n".to_owned(),
    ]);
    let cases: Vec<(String, String)> = vec![
        (with_boundary.clone(), "garbage, no parts at all".to_owned()),
        (
            "multipart/mixed".to_owned(),
            "garbage without a boundary".to_owned(),
        ),
        ("application/json".to_owned(), "{}".to_owned()),
        (with_boundary.clone(), one_part_of_two),
        (with_boundary, bad_status),
    ];
    for (content_type, body) in cases {
        let reply = raw_reply(202, &content_type, &body);
        let (server, engine) = always(move || reply.clone()).await;
        let (result, _) = timed(engine.submit_batch(TABLE, &ops)).await;
        let err = result.expect_err(&body);
        assert_eq!(
            err.kind(),
            ErrorKind::Decode,
            "{content_type} {body:?}: {err:?}"
        );
        assert_eq!(server.request_count(), 1);
    }
}

fn xml_error(code: &str) -> String {
    format!(
        "<?xml version=\"1.0\" encoding=\"utf-8\"?><Error><Code>{code}</Code>\
         <Message>Server failed to authenticate the request.\nRequestId:1\nTime:2</Message></Error>"
    )
}

#[tokio::test]
async fn error_answers_without_json_bodies_keep_their_kinds() {
    let insert = WriteOp::Insert(sample("p", "r"));
    let replace = WriteOp::Replace {
        entity: sample("p", "r"),
        if_match: tables_client::IfMatch::Any,
    };
    let cases: Vec<(Reply, WriteOp, ErrorKind)> = vec![
        // XML body and the header agree.
        (
            raw_reply(409, "application/xml", &xml_error("EntityAlreadyExists"))
                .with_header("x-ms-error-code", "EntityAlreadyExists"),
            insert.clone(),
            ErrorKind::EntityAlreadyExists,
        ),
        // Azurite's 403s: XML, no header.
        (
            raw_reply(403, "application/xml", &xml_error("AuthorizationFailure")),
            insert.clone(),
            ErrorKind::Auth,
        ),
        // Empty body: the header alone.
        (
            Reply::empty(412).with_header("x-ms-error-code", "UpdateConditionNotSatisfied"),
            replace.clone(),
            ErrorKind::PreconditionFailed,
        ),
        // A proxy's HTML page with the service's header.
        (
            raw_reply(400, "text/html", "<html><body>Bad Request</body></html>")
                .with_header("x-ms-error-code", "InvalidInput"),
            insert,
            ErrorKind::InvalidInput,
        ),
        // Neither body nor header: the status decides.
        (Reply::empty(404), replace, ErrorKind::EntityNotFound),
    ];
    for (reply, op, kind) in cases {
        let (server, engine) = always(move || reply.clone()).await;
        let (result, _) = timed(engine.write(TABLE, &op)).await;
        let err = result.expect_err("an error answer");
        assert_eq!(err.kind(), kind, "{err:?}");
        assert_eq!(server.request_count(), 1, "{kind:?}");
    }

    // 404 with an empty body and the header on a get: absent, not an error.
    let (_server, engine) =
        always(|| Reply::empty(404).with_header("x-ms-error-code", "ResourceNotFound")).await;
    let got = engine.get_entity(TABLE, &key("p", "r"), None).await;
    assert!(matches!(got, Ok(None)), "{got:?}");

    // A 500 with an empty body, not retried under RetryPolicy::none().
    let server = tables_tests::fake_server::FakeServer::start(|_, _| Reply::empty(500)).await;
    let engine = engine_at(
        &server.url(),
        shared_key(),
        tables_client::remote::RetryPolicy::none(),
        PATIENT,
    );
    let err = engine
        .get_entity(TABLE, &key("p", "r"), None)
        .await
        .expect_err("500");
    assert_eq!(err.kind(), ErrorKind::Server);
    assert_eq!(err.status(), Some(500));
}
