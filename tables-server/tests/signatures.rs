//! A signature is for one resource: the path exactly as sent (docs/protocol.md
//! §3.1). A request signed for the entity `a b`
//! (`PartitionKey='a%20b'`), replayed unchanged against `PartitionKey='a%2520b'`
//! (the entity `a%20b`), is refused for SharedKey and SharedKeyLite, as a read and
//! as a delete; so is a signature made over the decoded path, and a `comp` slipped
//! in under an encoded name. A table SAS reaches only the keys its range names.

#![allow(clippy::unwrap_used, missing_docs)] // tests

use std::time::SystemTime;

use reqwest::{Client, Method, StatusCode};
use tables_core::auth::{AccountKey, TableSasFields, DEVELOPMENT_ACCOUNT};
use tables_server::{RunningServer, Server};

mod common;

const SPACE: &str = "/devstoreaccount1/keytab(PartitionKey='a%20b',RowKey='r')";
const PERCENT: &str = "/devstoreaccount1/keytab(PartitionKey='a%2520b',RowKey='r')";

struct Wire {
    server: RunningServer,
    client: Client,
    key: AccountKey,
}

/// How a request is signed: the scheme, and the path and query the signature is
/// made over (which may differ from those sent, as a replay's do).
#[derive(Clone, Copy)]
struct Signed<'a> {
    lite: bool,
    over: &'a str,
}

impl Wire {
    async fn start() -> Wire {
        let wire = Wire {
            server: Server::builder().port(0).start().await.unwrap(),
            client: Client::new(),
            key: common::dev_key(),
        };
        let table = wire
            .send(
                "POST",
                "/devstoreaccount1/Tables",
                Some(r#"{"TableName":"keytab"}"#),
                None,
            )
            .await;
        assert_eq!(table.0, StatusCode::CREATED, "{}", table.1);
        for pk in ["a b", "a%20b"] {
            let body = format!(r#"{{"PartitionKey":"{pk}","RowKey":"r","Who":"{pk}"}}"#);
            let insert = wire
                .send("POST", "/devstoreaccount1/keytab", Some(&body), None)
                .await;
            assert_eq!(insert.0, StatusCode::CREATED, "{}", insert.1);
        }
        wire
    }

    /// Sends `method` to `target` (path and query), signed as `signed` says (by
    /// default SharedKey over `target` itself): the status and the body.
    async fn send(
        &self,
        method: &str,
        target: &str,
        json: Option<&str>,
        signed: Option<Signed<'_>>,
    ) -> (StatusCode, String) {
        let signed = signed.unwrap_or(Signed {
            lite: false,
            over: target,
        });
        let date = httpdate::fmt_http_date(SystemTime::now());
        let content_type = if json.is_some() {
            "application/json"
        } else {
            ""
        };
        let authorization =
            common::authorization(signed.lite, method, signed.over, content_type, &date);
        let url = format!("http://{}{target}", self.server.addr());
        let mut request = self
            .client
            .request(Method::from_bytes(method.as_bytes()).unwrap(), &url)
            .header("x-ms-version", "2019-02-02")
            .header("x-ms-date", &date)
            .header("accept", "application/json;odata=nometadata")
            .header("authorization", authorization);
        if method == "DELETE" {
            request = request.header("if-match", "*");
        }
        if let Some(json) = json {
            request = request
                .header("content-type", content_type)
                .body(json.to_owned());
        }
        let response = request.send().await.unwrap();
        // reqwest sends the path as given: the replay reaches the server unchanged.
        assert_eq!(response.url().as_str(), url);
        let status = response.status();
        (status, response.text().await.unwrap())
    }
}

fn refused(answer: &(StatusCode, String)) -> bool {
    answer.0 == StatusCode::FORBIDDEN && answer.1.contains("AuthenticationFailed")
}

#[tokio::test]
async fn a_signature_for_one_entity_is_refused_on_another() {
    let wire = Wire::start().await;
    // Signed and sent alike, each path reaches its own entity.
    for (path, who) in [(SPACE, "a b"), (PERCENT, "a%20b")] {
        let (status, body) = wire.send("GET", path, None, None).await;
        assert_eq!(status, StatusCode::OK, "{body}");
        assert!(body.contains(&format!(r#""Who":"{who}""#)), "{body}");
    }
    for lite in [false, true] {
        // The read of `a b`, replayed against `a%20b`.
        let replay = Signed { lite, over: SPACE };
        let answer = wire.send("GET", PERCENT, None, Some(replay)).await;
        assert!(refused(&answer), "lite={lite}: {answer:?}");
        // A signature over the decoded path is not one over the path sent.
        let decoded = Signed {
            lite,
            over: "/devstoreaccount1/keytab(PartitionKey='a b',RowKey='r')",
        };
        let answer = wire.send("GET", SPACE, None, Some(decoded)).await;
        assert!(refused(&answer), "lite={lite}: {answer:?}");
    }
    // The delete of `a b` (If-Match: *), replayed against `a%20b`, deletes nothing.
    let replay = Signed {
        lite: false,
        over: SPACE,
    };
    let answer = wire.send("DELETE", PERCENT, None, Some(replay)).await;
    assert!(refused(&answer), "{answer:?}");
    for path in [SPACE, PERCENT] {
        assert_eq!(wire.send("GET", path, None, None).await.0, StatusCode::OK);
    }
    // `comp` under an encoded name is routed as `comp`, so it is signed as `comp`: a
    // signature for the table's rows does not read its ACL.
    let rows = Signed {
        lite: false,
        over: "/devstoreaccount1/keytab",
    };
    let acl = "/devstoreaccount1/keytab?%63omp=acl";
    let answer = wire.send("GET", acl, None, Some(rows)).await;
    assert!(refused(&answer), "{answer:?}");
    let answer = wire.send("GET", acl, None, None).await;
    assert_eq!(answer.0, StatusCode::OK, "{answer:?}");
    assert!(answer.1.contains("SignedIdentifiers"), "{answer:?}");
}

#[tokio::test]
async fn a_table_sas_reaches_only_the_keys_it_names() {
    let wire = Wire::start().await;
    let expiry = "2099-01-01T00:00:00Z";
    let fields = TableSasFields {
        permissions: "r",
        start: "",
        expiry,
        table: "keytab",
        policy_id: "",
        ip_range: "",
        protocol: "",
        version: "2019-02-02",
        start_partition_key: "a b",
        start_row_key: "",
        end_partition_key: "a b",
        end_row_key: "",
    };
    let signature = wire.key.sign(&fields.string_to_sign(DEVELOPMENT_ACCOUNT));
    let encode = |v: &str| tables_core::odata::encode_query_value(v);
    let token = format!(
        "sv=2019-02-02&tn=keytab&sp=r&se={}&spk={}&epk={}&sig={}",
        encode(expiry),
        encode("a b"),
        encode("a b"),
        encode(&signature)
    );
    let get = |path: &str| {
        let url = format!("http://{}{path}?{token}", wire.server.addr());
        let request = wire
            .client
            .get(url)
            .header("x-ms-version", "2019-02-02")
            .header("accept", "application/json;odata=nometadata");
        async move {
            let response = request.send().await.unwrap();
            (response.status(), response.text().await.unwrap())
        }
    };
    let (status, body) = get(SPACE).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let (status, body) = get(PERCENT).await;
    assert_eq!(status, StatusCode::FORBIDDEN, "{body}");
    assert!(body.contains("outside the key range"), "{body}");
}
