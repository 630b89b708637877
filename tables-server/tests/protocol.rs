//! The server's answers on the wire, request by request: what the official SDKs
//! rely on (headers, Prefer, metadata levels, X-HTTP-Method, host-style URLs,
//! `$batch` failures) and what a client gets wrong (credentials, Atom, malformed
//! bodies, unknown routes), each answered with the service's status and code,
//! never a 500.

#![allow(clippy::unwrap_used, missing_docs)] // tests

use std::time::{Duration, SystemTime};

use reqwest::{Client, Method, Response};
use serde_json::Value as Json;
use tables_core::auth::{
    canonical_resource, shared_key_authorization, AccountKey, AccountSasFields, TableSasFields,
    DEVELOPMENT_ACCOUNT, DEVELOPMENT_ACCOUNT_KEY,
};
use tables_server::{RunningServer, Server};

/// `Response::json` without reqwest's `json` feature (which the workspace's other
/// users of reqwest don't need).
trait ReadJson {
    async fn json(self) -> serde_json::Result<Json>;
}

impl ReadJson for Response {
    async fn json(self) -> serde_json::Result<Json> {
        serde_json::from_slice(&self.bytes().await.unwrap())
    }
}

struct Wire {
    server: RunningServer,
    client: Client,
    key: AccountKey,
}

/// One request: method, path below the host (`/devstoreaccount1/...`), headers,
/// body; signed with SharedKey unless `sign` is false.
struct Call<'a> {
    method: &'a str,
    path: &'a str,
    headers: Vec<(&'a str, String)>,
    body: Vec<u8>,
    sign: bool,
    key: Option<&'a AccountKey>,
    date: Option<SystemTime>,
    host: Option<&'a str>,
}

fn call<'a>(method: &'a str, path: &'a str) -> Call<'a> {
    Call {
        method,
        path,
        headers: vec![(
            "accept",
            "application/json;odata=minimalmetadata".to_owned(),
        )],
        body: Vec::new(),
        sign: true,
        key: None,
        date: None,
        host: None,
    }
}

impl<'a> Call<'a> {
    fn header(mut self, name: &'a str, value: impl Into<String>) -> Call<'a> {
        self.headers.retain(|(n, _)| *n != name);
        self.headers.push((name, value.into()));
        self
    }

    fn with_body(mut self, body: &str) -> Call<'a> {
        self.body = body.as_bytes().to_vec();
        self
    }

    fn json(self, body: &str) -> Call<'a> {
        let mut call = self.header("content-type", "application/json");
        call.body = body.as_bytes().to_vec();
        call
    }
}

impl Wire {
    async fn start() -> Wire {
        Wire::start_with(Server::builder().port(0)).await
    }

    async fn start_with(server: Server) -> Wire {
        Wire {
            server: server.start().await.unwrap(),
            client: Client::new(),
            key: AccountKey::new(DEVELOPMENT_ACCOUNT, DEVELOPMENT_ACCOUNT_KEY).unwrap(),
        }
    }

    async fn send(&self, call: Call<'_>) -> Response {
        let url = format!("http://{}{}", self.server.addr(), call.path);
        let method = Method::from_bytes(call.method.as_bytes()).unwrap();
        let date = httpdate::fmt_http_date(call.date.unwrap_or_else(SystemTime::now));
        let mut request = self.client.request(method, &url);
        // The call's own version or date, else the defaults.
        for (name, value) in [("x-ms-version", "2019-02-02"), ("x-ms-date", date.as_str())] {
            if !call.headers.iter().any(|(n, _)| *n == name) {
                request = request.header(name, value);
            }
        }
        if let Some(host) = call.host {
            request = request.header("host", host);
        }
        let content_type = call
            .headers
            .iter()
            .find(|(n, _)| *n == "content-type")
            .map_or("", |(_, v)| v.as_str())
            .to_owned();
        for (name, value) in &call.headers {
            request = request.header(*name, value);
        }
        if call.sign {
            let path = call.path.split('?').next().unwrap();
            let comp = call
                .path
                .split_once("comp=")
                .map(|(_, c)| c.split('&').next().unwrap());
            let resource = canonical_resource(DEVELOPMENT_ACCOUNT, path, comp);
            let key = call.key.unwrap_or(&self.key);
            let auth = shared_key_authorization(
                key,
                false,
                call.method,
                "",
                &content_type,
                &date,
                &resource,
            );
            request = request.header("authorization", auth);
        }
        request.body(call.body).send().await.unwrap()
    }

    /// The body of the answer to `call`, as text.
    async fn text(&self, call: Call<'_>) -> String {
        self.send(call).await.text().await.unwrap()
    }

    async fn create_table(&self, name: &str) {
        let response = self
            .send(
                call("POST", "/devstoreaccount1/Tables")
                    .json(&format!(r#"{{"TableName":"{name}"}}"#)),
            )
            .await;
        assert_eq!(response.status(), 201, "{}", response.text().await.unwrap());
    }
}

/// The `x-ms-error-code` header, empty if absent.
fn error_code_header(response: &Response) -> String {
    response
        .headers()
        .get("x-ms-error-code")
        .map(|v| v.to_str().unwrap().to_owned())
        .unwrap_or_default()
}

/// The status, the error code header and the JSON body's code.
async fn failure(response: Response) -> (u16, String, String) {
    let status = response.status().as_u16();
    let header = error_code_header(&response);
    let body: Json = response.json().await.unwrap();
    let code = body["odata.error"]["code"]
        .as_str()
        .unwrap_or_default()
        .to_owned();
    assert!(
        body["odata.error"]["message"]["value"]
            .as_str()
            .unwrap()
            .contains("RequestId:"),
        "{body}"
    );
    (status, header, code)
}

/// Set Table Service Properties with one CORS rule: `origin` may `GET`, for 30 s,
/// with `x-ms-*` headers, seeing `x-ms-request-id`.
fn set_cors(origin: &str) -> Call<'static> {
    let properties = format!(
        "<StorageServiceProperties><Cors><CorsRule><AllowedOrigins>{origin}</AllowedOrigins>\
         <AllowedMethods>GET</AllowedMethods><MaxAgeInSeconds>30</MaxAgeInSeconds>\
         <ExposedHeaders>x-ms-request-id</ExposedHeaders><AllowedHeaders>x-ms-*</AllowedHeaders>\
         </CorsRule></Cors></StorageServiceProperties>"
    );
    call("PUT", "/devstoreaccount1/?restype=service&comp=properties")
        .header("content-type", "application/xml")
        .with_body(&properties)
}

fn uuid_like(text: &str) -> bool {
    text.len() == 36 && text.chars().filter(|c| *c == '-').count() == 4
}

#[tokio::test]
async fn every_answer_carries_the_service_headers() {
    let wire = Wire::start().await;
    let response = wire
        .send(call("GET", "/devstoreaccount1/Tables").header("x-ms-client-request-id", "abc"))
        .await;
    assert_eq!(response.status(), 200);
    let headers = response.headers();
    assert!(uuid_like(headers["x-ms-request-id"].to_str().unwrap()));
    assert_eq!(headers["x-ms-version"], "2019-02-02");
    assert_eq!(headers["x-ms-client-request-id"], "abc");
    // Now, to the second (it is written once a second).
    let date = httpdate::parse_http_date(headers["date"].to_str().unwrap()).unwrap();
    let now = std::time::SystemTime::now();
    let off = now.duration_since(date).unwrap_or_else(|e| e.duration());
    assert!(
        off < std::time::Duration::from_secs(2),
        "{date:?} vs {now:?}"
    );
    assert!(headers["content-type"]
        .to_str()
        .unwrap()
        .starts_with("application/json;odata=minimalmetadata"));

    // The version asked for is the one answered; each answer has its own id.
    // (Unsigned: refused, with the same headers.)
    let second = wire
        .client
        .get(format!(
            "http://{}/devstoreaccount1/Tables",
            wire.server.addr()
        ))
        .header("x-ms-version", "2020-12-06")
        .send()
        .await
        .unwrap();
    assert_eq!(second.status(), 403);
    assert_eq!(second.headers()["x-ms-version"], "2020-12-06");
    assert!(second.headers().get("x-ms-client-request-id").is_none());
    assert_ne!(
        second.headers()["x-ms-request-id"],
        headers["x-ms-request-id"]
    );
}

#[tokio::test]
async fn prefer_and_etags() {
    let wire = Wire::start().await;
    let response = wire
        .send(
            call("POST", "/devstoreaccount1/Tables")
                .json(r#"{"TableName":"Quiet"}"#)
                .header("prefer", "return-no-content"),
        )
        .await;
    assert_eq!(response.status(), 204);
    assert_eq!(
        response.headers()["preference-applied"],
        "return-no-content"
    );

    let response = wire
        .send(
            call("POST", "/devstoreaccount1/Quiet")
                .json(r#"{"PartitionKey":"p","RowKey":"r","N":1}"#),
        )
        .await;
    assert_eq!(response.status(), 201);
    // No Prefer header: the entity, and no Preference-Applied (the service's
    // "Setting the Prefer header" page); asked for, it is said.
    assert!(response.headers().get("preference-applied").is_none());
    let asked = wire
        .send(
            call("POST", "/devstoreaccount1/Quiet")
                .header("prefer", "return-content")
                .json(r#"{"PartitionKey":"p","RowKey":"asked"}"#),
        )
        .await;
    assert_eq!(asked.status(), 201);
    assert_eq!(asked.headers()["preference-applied"], "return-content");
    let etag = response.headers()["etag"].to_str().unwrap().to_owned();
    assert!(etag.starts_with("W/\"datetime'"), "{etag}");
    let body: Json = response.json().await.unwrap();
    assert_eq!(body["odata.etag"], etag.as_str());
    assert_eq!(body["N"], 1);
    assert_eq!(
        body["odata.metadata"],
        format!("{}/$metadata#Quiet/@Element", wire.server.url())
    );

    let response = wire
        .send(
            call("POST", "/devstoreaccount1/Quiet")
                .json(r#"{"PartitionKey":"p","RowKey":"r2"}"#)
                .header("prefer", "return-no-content"),
        )
        .await;
    assert_eq!(response.status(), 204);
    assert!(response.headers().contains_key("etag"));

    // The current ETag applies; the same ETag again is stale: 412.
    let path = "/devstoreaccount1/Quiet(PartitionKey='p',RowKey='r')";
    let response = wire
        .send(
            call("PUT", path)
                .json(r#"{"N":2}"#)
                .header("if-match", etag.clone()),
        )
        .await;
    assert_eq!(response.status(), 204);
    let response = wire
        .send(
            call("PUT", path)
                .json(r#"{"N":3}"#)
                .header("if-match", etag),
        )
        .await;
    assert_eq!(
        failure(response).await,
        (
            412,
            "UpdateConditionNotSatisfied".into(),
            "UpdateConditionNotSatisfied".into()
        )
    );
}

#[tokio::test]
async fn metadata_levels_and_atom() {
    let wire = Wire::start().await;
    wire.create_table("Levels").await;
    let insert = call("POST", "/devstoreaccount1/Levels")
        .json(r#"{"PartitionKey":"p","RowKey":"r","L@odata.type":"Edm.Int64","L":"5"}"#)
        .header("prefer", "return-no-content");
    assert_eq!(wire.send(insert).await.status(), 204);
    let path = "/devstoreaccount1/Levels(PartitionKey='p',RowKey='r')";
    let read = |accept: &'static str| wire.send(call("GET", path).header("accept", accept));

    let none: Json = read("application/json;odata=nometadata")
        .await
        .json()
        .await
        .unwrap();
    assert!(
        none.get("odata.etag").is_none() && none.get("L@odata.type").is_none(),
        "{none}"
    );
    assert_eq!(none["L"], "5");
    let minimal: Json = read("application/json").await.json().await.unwrap();
    assert_eq!(minimal["L@odata.type"], "Edm.Int64");
    assert!(minimal.get("odata.etag").is_some() && minimal.get("odata.id").is_none());
    let full: Json = read("application/json;odata=fullmetadata")
        .await
        .json()
        .await
        .unwrap();
    assert_eq!(full["odata.type"], "devstoreaccount1.Levels");
    assert_eq!(
        full["odata.editLink"],
        "Levels(PartitionKey='p',RowKey='r')"
    );
    assert_eq!(full["Timestamp@odata.type"], "Edm.DateTime");

    for atom in ["application/atom+xml", "application/xml"] {
        let (status, header, code) = failure(read(atom).await).await;
        assert_eq!(
            (status, header.as_str(), code.as_str()),
            (415, "AtomFormatNotSupported", "AtomFormatNotSupported")
        );
    }
    // `$format` overrides Accept.
    let response = wire
        .send(call(
            "GET",
            "/devstoreaccount1/Levels()?$format=application/json;odata=nometadata",
        ))
        .await;
    let page: Json = response.json().await.unwrap();
    assert!(page.get("odata.metadata").is_none(), "{page}");
}

/// `GET /Tables('<name>')` returns that one table (the public reference's way to
/// "return a single table"; the legacy .NET and Python libraries' `Exists` call it):
/// its stored name, matched case-blind, in the Create Table body's shape at each
/// metadata level; a missing table is a 404.
#[tokio::test]
async fn one_table_reads_by_name() {
    let wire = Wire::start().await;
    wire.create_table("Single").await;
    let read = |accept: &'static str| {
        wire.send(call("GET", "/devstoreaccount1/Tables('single')").header("accept", accept))
    };
    let response = read("application/json;odata=minimalmetadata").await;
    assert_eq!(response.status(), 200);
    let minimal: Json = response.json().await.unwrap();
    assert_eq!(minimal["TableName"], "Single", "{minimal}");
    let metadata = minimal["odata.metadata"].as_str().unwrap();
    assert!(
        metadata.ends_with("/devstoreaccount1/$metadata#Tables/@Element"),
        "{minimal}"
    );
    let full: Json = read("application/json;odata=fullmetadata")
        .await
        .json()
        .await
        .unwrap();
    assert_eq!(full["odata.editLink"], "Tables('Single')", "{full}");
    assert_eq!(full["odata.type"], "devstoreaccount1.Tables", "{full}");
    let none: Json = read("application/json;odata=nometadata")
        .await
        .json()
        .await
        .unwrap();
    assert_eq!(none, serde_json::json!({"TableName": "Single"}));

    let missing = wire
        .send(call("GET", "/devstoreaccount1/Tables('NoSuchTable')"))
        .await;
    let (status, header, code) = failure(missing).await;
    assert_eq!(
        (status, header.as_str(), code.as_str()),
        (404, "ResourceNotFound", "ResourceNotFound")
    );
}

#[tokio::test]
async fn merge_through_x_http_method_and_host_style_urls() {
    let wire = Wire::start().await;
    wire.create_table("Tunnel").await;
    let insert =
        call("POST", "/devstoreaccount1/Tunnel").json(r#"{"PartitionKey":"p","RowKey":"r","A":1}"#);
    assert_eq!(wire.send(insert).await.status(), 201);
    let path = "/devstoreaccount1/Tunnel(PartitionKey='p',RowKey='r')";
    let merge = call("POST", path)
        .json(r#"{"B":2}"#)
        .header("x-http-method", "MERGE")
        .header("if-match", "*");
    assert_eq!(wire.send(merge).await.status(), 204);
    let got: Json = wire.send(call("GET", path)).await.json().await.unwrap();
    assert_eq!((got["A"].as_i64(), got["B"].as_i64()), (Some(1), Some(2)));

    let (status, _, code) = failure(
        wire.send(
            call("PUT", path)
                .json("{}")
                .header("x-http-method", "MERGE"),
        )
        .await,
    )
    .await;
    assert_eq!((status, code.as_str()), (400, "XMethodNotUsingPost"));
    let (status, _, code) = failure(
        wire.send(
            call("POST", path)
                .json("{}")
                .header("x-http-method", "FETCH"),
        )
        .await,
    )
    .await;
    assert_eq!((status, code.as_str()), (400, "XMethodIncorrectValue"));
    // Two of them (the names differ in case only, so the test client sends both).
    let (status, _, code) = failure(
        wire.send(
            call("POST", path)
                .json("{}")
                .header("x-http-method", "MERGE")
                .header("X-HTTP-Method", "MERGE"),
        )
        .await,
    )
    .await;
    assert_eq!((status, code.as_str()), (400, "XMethodIncorrectCount"));

    // Host-style: the account in the host name, the table first in the path; the
    // signature covers the path as sent.
    let mut host_style = call("GET", "/Tunnel(PartitionKey='p',RowKey='r')");
    host_style.host = Some("devstoreaccount1.table.localhost");
    let response = wire.send(host_style).await;
    assert_eq!(response.status(), 200);
    let got: Json = response.json().await.unwrap();
    assert_eq!(
        got["odata.metadata"],
        "http://devstoreaccount1.table.localhost/$metadata#Tunnel/@Element"
    );
}

#[tokio::test]
async fn credentials_are_checked() {
    let wire = Wire::start().await;
    let mut unsigned = call("GET", "/devstoreaccount1/Tables");
    unsigned.sign = false;
    assert_eq!(
        failure(wire.send(unsigned).await).await,
        (
            403,
            "AuthenticationFailed".into(),
            "AuthenticationFailed".into()
        )
    );
    let other = AccountKey::new(DEVELOPMENT_ACCOUNT, "c2VjcmV0").unwrap();
    let mut wrong_key = call("GET", "/devstoreaccount1/Tables");
    wrong_key.key = Some(&other);
    assert_eq!(failure(wire.send(wrong_key).await).await.0, 403);
    let mut stale = call("GET", "/devstoreaccount1/Tables");
    stale.date = Some(SystemTime::now() - Duration::from_secs(3600));
    assert_eq!(failure(wire.send(stale).await).await.0, 403);
    let unknown = call("GET", "/nosuchaccount/Tables");
    let (status, _, code) = failure(wire.send(unknown).await).await;
    assert_eq!((status, code.as_str()), (400, "InvalidUri"));
}

#[tokio::test]
async fn client_mistakes_get_the_service_codes_never_a_500() {
    let wire = Wire::start().await;
    wire.create_table("Mistakes").await;
    let insert = || call("POST", "/devstoreaccount1/Mistakes");
    let entity = "/devstoreaccount1/Mistakes(PartitionKey='p',RowKey='r')";
    let cases: Vec<(Call<'_>, u16, &str)> = vec![
        (insert().json("{not json"), 400, "InvalidInput"),
        (
            insert().json(r#"{"RowKey":"r"}"#),
            400,
            "PropertiesNeedValue",
        ),
        (
            insert()
                .json(r#"{"PartitionKey":"p","RowKey":"r","X@odata.type":"Edm.Nonsense","X":"1"}"#),
            400,
            "InvalidInput",
        ),
        (
            insert().json(r#"{"PartitionKey":"p","RowKey":"r","X":{"nested":1}}"#),
            400,
            "InvalidInput",
        ),
        (
            insert().json(r#"{"PartitionKey":"a/b","RowKey":"r"}"#),
            400,
            "InvalidInput",
        ),
        (
            call(
                "GET",
                "/devstoreaccount1/Mistakes()?$filter=startswith(RowKey,'a')",
            ),
            400,
            "InvalidInput",
        ),
        (
            call("GET", "/devstoreaccount1/Mistakes()?$top=1001"),
            400,
            "InvalidInput",
        ),
        (
            call(
                "GET",
                "/devstoreaccount1/Mistakes()?NextPartitionKey=garbage",
            ),
            400,
            "InvalidInput",
        ),
        (call("DELETE", entity), 400, "MissingRequiredHeader"),
        (
            call("PUT", entity)
                .json("{}")
                .header("if-match", "nonsense"),
            400,
            "InvalidInput",
        ),
        (
            call("PUT", entity).json(r#"{"PartitionKey":"other"}"#),
            400,
            "InvalidInput",
        ),
        (
            call(
                "GET",
                "/devstoreaccount1/Mistakes(PartitionKey='p',RowKey='absent')",
            ),
            404,
            "ResourceNotFound",
        ),
        (
            call("GET", "/devstoreaccount1/NoSuchTable()"),
            404,
            "TableNotFound",
        ),
        (
            call("DELETE", "/devstoreaccount1/Tables('NoSuchTable')"),
            404,
            "ResourceNotFound",
        ),
        (
            call("POST", "/devstoreaccount1/Tables").json(r#"{"TableName":"1bad"}"#),
            400,
            "InvalidResourceName",
        ),
        (
            call("POST", "/devstoreaccount1/Tables").json(r#"{"TableName":"mistakes"}"#),
            409,
            "TableAlreadyExists",
        ),
        (call("GET", "/devstoreaccount1/a/b/c"), 400, "InvalidUri"),
        (
            call("GET", "/devstoreaccount1/Mistakes(PartitionKey='p')"),
            400,
            "InvalidUri",
        ),
        (
            call("PATCH", "/devstoreaccount1/Tables"),
            405,
            "UnsupportedHttpVerb",
        ),
        (
            call("POST", "/devstoreaccount1/$batch")
                .json("garbage")
                .header("content-type", "multipart/mixed; boundary=batch_x"),
            400,
            "InvalidInput",
        ),
    ];
    for (index, (request, status, code)) in cases.into_iter().enumerate() {
        let what = format!("case {index}: {} {}", request.method, request.path);
        let response = wire.send(request).await;
        let got = failure(response).await;
        assert_eq!((got.0, got.2.as_str()), (status, code), "{what}");
        assert_eq!(got.1, code, "{what}: x-ms-error-code");
    }
}

#[tokio::test]
async fn bodies_are_read_whole_before_decoding() {
    // Properties of multi-byte characters whose bytes straddle the 64 KiB read
    // boundaries (Azurite 3.35 corrupts such bodies): read back exactly.
    let wire = Wire::start().await;
    wire.create_table("Wide").await;
    let text: String = "é中🦀".repeat(3_000); // 9 bytes a repeat: 27,000 bytes
    let filler = "x".repeat(20_000);
    // A pad that puts both 64 KiB boundaries inside a multi-byte character.
    let body = (0..81)
        .map(|pad| {
            format!(
                r#"{{"PartitionKey":"p","RowKey":"r","Pad":"{}","F1":"{filler}","F2":"{filler}","F3":"{filler}","Text":"{text}","More":"{text}","Again":"{text}"}}"#,
                "x".repeat(pad)
            )
        })
        .find(|body| {
            body.len() > 131_072
                && !body.is_char_boundary(65_536)
                && !body.is_char_boundary(131_072)
        })
        .unwrap();
    assert!(body.len() > 2 * 65_536);
    let response = wire
        .send(
            call("POST", "/devstoreaccount1/Wide")
                .json(&body)
                .header("prefer", "return-no-content"),
        )
        .await;
    assert_eq!(response.status(), 204, "{}", response.text().await.unwrap());
    let got: Json = wire
        .send(call(
            "GET",
            "/devstoreaccount1/Wide(PartitionKey='p',RowKey='r')",
        ))
        .await
        .json()
        .await
        .unwrap();
    for name in ["Text", "More", "Again"] {
        assert_eq!(got[name].as_str(), Some(text.as_str()), "{name}");
    }
}

#[tokio::test]
async fn a_failed_batch_names_its_operation_and_applies_nothing() {
    let wire = Wire::start().await;
    wire.create_table("Batch").await;
    let existing =
        call("POST", "/devstoreaccount1/Batch").json(r#"{"PartitionKey":"p","RowKey":"2"}"#);
    assert_eq!(wire.send(existing).await.status(), 201);
    let base = wire.server.url();
    let mut body =
        String::from("--batch_b\r\nContent-Type: multipart/mixed; boundary=changeset_c\r\n\r\n");
    for (id, rk) in [(1, "1"), (2, "2"), (3, "3")] {
        body.push_str(&format!(
            "--changeset_c\r\nContent-Type: application/http\r\nContent-Transfer-Encoding: binary\r\n\r\n\
             POST {base}/Batch HTTP/1.1\r\nContent-ID: {id}\r\nContent-Type: application/json\r\n\
             Prefer: return-no-content\r\n\r\n{{\"PartitionKey\":\"p\",\"RowKey\":\"{rk}\"}}\r\n"
        ));
    }
    body.push_str("--changeset_c--\r\n--batch_b--\r\n");
    let mut request = call("POST", "/devstoreaccount1/$batch")
        .header("content-type", "multipart/mixed; boundary=batch_b");
    request.body = body.into_bytes();
    let response = wire.send(request).await;
    assert_eq!(response.status(), 202);
    let content_type = response.headers()["content-type"]
        .to_str()
        .unwrap()
        .to_owned();
    assert!(content_type.starts_with("multipart/mixed; boundary=batchresponse_"));
    let text = response.text().await.unwrap();
    assert!(text.contains("HTTP/1.1 409 Conflict"), "{text}");
    assert!(text.contains("Content-ID: 2"), "{text}");
    assert!(text.contains(r#""value":"1:"#), "{text}");
    assert_eq!(text.matches("HTTP/1.1").count(), 1, "one part: {text}");
    let absent = wire
        .send(call(
            "GET",
            "/devstoreaccount1/Batch(PartitionKey='p',RowKey='1')",
        ))
        .await;
    assert_eq!(absent.status(), 404, "nothing of the batch applied");
}

/// A SAS query string for the dev account, signed over `string_to_sign` and made of
/// `params` (decoded; encoded here).
fn sas_query(string_to_sign: &str, params: &[(&str, &str)]) -> String {
    use percent_encoding::utf8_percent_encode;
    use tables_core::auth::QUERY_VALUE;
    let key = AccountKey::new(DEVELOPMENT_ACCOUNT, DEVELOPMENT_ACCOUNT_KEY).unwrap();
    let signature = key.sign(string_to_sign);
    params
        .iter()
        .filter(|(_, v)| !v.is_empty())
        .map(|(n, v)| (*n, *v))
        .chain([("sig", signature.as_str())])
        .map(|(n, v)| format!("{n}={}", utf8_percent_encode(v, QUERY_VALUE)))
        .collect::<Vec<_>>()
        .join("&")
}

fn table_sas(fields: TableSasFields<'_>) -> String {
    sas_query(
        &fields.string_to_sign(DEVELOPMENT_ACCOUNT),
        &[
            ("sv", fields.version),
            ("tn", fields.table),
            ("sp", fields.permissions),
            ("st", fields.start),
            ("se", fields.expiry),
            ("sip", fields.ip_range),
            ("spr", fields.protocol),
            ("si", fields.policy_id),
            ("spk", fields.start_partition_key),
            ("epk", fields.end_partition_key),
        ],
    )
}

fn account_sas(fields: AccountSasFields<'_>) -> String {
    sas_query(
        &fields.string_to_sign(DEVELOPMENT_ACCOUNT),
        &[
            ("sv", fields.version),
            ("ss", fields.services),
            ("srt", fields.resource_types),
            ("sp", fields.permissions),
            ("se", fields.expiry),
        ],
    )
}

/// The status and error code of an answer in either format (JSON, or XML for the
/// XML APIs).
async fn code_of(response: Response) -> (u16, String) {
    (response.status().as_u16(), error_code_header(&response))
}

const SAS_EXPIRY: &str = "2099-01-01T00:00:00Z";

#[tokio::test]
async fn shared_access_signatures_grant_what_they_say_and_no_more() {
    let wire = Wire::start().await;
    wire.create_table("sast").await;
    for pk in ["p1", "p2", "p3"] {
        let body = format!(r#"{{"PartitionKey":"{pk}","RowKey":"r"}}"#);
        let response = wire
            .send(call("POST", "/devstoreaccount1/sast").json(&body))
            .await;
        assert_eq!(response.status(), 201);
    }
    let read = TableSasFields {
        permissions: "r",
        expiry: SAS_EXPIRY,
        table: "sast",
        version: "2019-02-02",
        ..TableSasFields::default()
    };
    let get = |sas: String, pk: &str| {
        let path = format!("/devstoreaccount1/sast(PartitionKey='{pk}',RowKey='r')?{sas}");
        let wire = &wire;
        async move {
            let mut unsigned = call("GET", &path);
            unsigned.sign = false;
            wire.send(unsigned).await
        }
    };
    assert_eq!(get(table_sas(read), "p1").await.status(), 200);
    let cases: Vec<(TableSasFields<'_>, u16, &str)> = vec![
        (
            TableSasFields {
                ip_range: "10.0.0.1",
                ..read
            },
            403,
            "AuthorizationSourceIPMismatch",
        ),
        (
            TableSasFields {
                ip_range: "127.0.0.1-127.0.0.9",
                ..read
            },
            200,
            "",
        ),
        (
            TableSasFields {
                protocol: "https",
                ..read
            },
            403,
            "AuthorizationProtocolMismatch",
        ),
        (
            TableSasFields {
                protocol: "https,http",
                ..read
            },
            200,
            "",
        ),
        (
            TableSasFields {
                start: "2098-01-01",
                ..read
            },
            403,
            "AuthenticationFailed",
        ),
        (
            TableSasFields {
                expiry: "2001-01-01T00:00:00Z",
                ..read
            },
            403,
            "AuthenticationFailed",
        ),
        (
            TableSasFields {
                permissions: "a",
                ..read
            },
            403,
            "AuthorizationPermissionMismatch",
        ),
        (
            TableSasFields {
                table: "other",
                ..read
            },
            403,
            "AuthorizationFailure",
        ),
        (
            TableSasFields {
                start_partition_key: "p2",
                ..read
            },
            403,
            "AuthorizationFailure",
        ),
        (
            TableSasFields {
                end_partition_key: "p0",
                ..read
            },
            403,
            "AuthorizationFailure",
        ),
        (
            TableSasFields {
                start_partition_key: "p1",
                end_partition_key: "p1",
                ..read
            },
            200,
            "",
        ),
        (
            TableSasFields {
                policy_id: "none",
                ..read
            },
            403,
            "AuthenticationFailed",
        ),
    ];
    for (i, (fields, status, code)) in cases.into_iter().enumerate() {
        let (got_status, got_code) = code_of(get(table_sas(fields), "p1").await).await;
        assert_eq!((got_status, got_code.as_str()), (status, code), "case {i}");
    }
    // A parameter changed after signing: the signature no longer matches.
    let tampered = table_sas(read).replace("sp=r", "sp=raud");
    assert_eq!(
        code_of(get(tampered, "p1").await).await,
        (403, "AuthenticationFailed".to_owned())
    );

    // A query with a ranged token answers the rows inside the range only.
    let ranged = table_sas(TableSasFields {
        start_partition_key: "p2",
        ..read
    });
    let mut query = call("GET", "");
    let path = format!("/devstoreaccount1/sast()?{ranged}");
    query.path = &path;
    query.sign = false;
    let body: Json = wire.send(query).await.json().await.unwrap();
    let keys: Vec<&str> = body["value"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["PartitionKey"].as_str().unwrap())
        .collect();
    assert_eq!(keys, ["p2", "p3"]);

    // A table SAS is for entities: not the table list, not the ACL.
    let mut tables = call("GET", "");
    let path = format!("/devstoreaccount1/Tables?{}", table_sas(read));
    tables.path = &path;
    tables.sign = false;
    assert_eq!(
        code_of(wire.send(tables).await).await,
        (403, "AuthorizationFailure".to_owned())
    );

    // Account SAS: service, resource type and permission are each checked.
    let account = AccountSasFields {
        permissions: "rl",
        services: "t",
        resource_types: "sco",
        expiry: SAS_EXPIRY,
        version: "2020-12-06",
        ..AccountSasFields::default()
    };
    let account_cases: Vec<(&str, &str, AccountSasFields<'_>, u16, &str)> = vec![
        ("GET", "/devstoreaccount1/Tables", account, 200, ""),
        (
            "GET",
            "/devstoreaccount1/Tables",
            AccountSasFields {
                services: "bq",
                ..account
            },
            403,
            "AuthorizationServiceMismatch",
        ),
        (
            "GET",
            "/devstoreaccount1/Tables",
            AccountSasFields {
                resource_types: "o",
                ..account
            },
            403,
            "AuthorizationResourceTypeMismatch",
        ),
        (
            "GET",
            "/devstoreaccount1/sast()",
            AccountSasFields {
                resource_types: "c",
                ..account
            },
            403,
            "AuthorizationResourceTypeMismatch",
        ),
        ("GET", "/devstoreaccount1/sast()", account, 200, ""),
        (
            "POST",
            "/devstoreaccount1/Tables",
            account,
            403,
            "AuthorizationPermissionMismatch",
        ),
        (
            "GET",
            "/devstoreaccount1/sast?comp=acl",
            account,
            403,
            "AuthorizationFailure",
        ),
        (
            "GET",
            "/devstoreaccount1/?restype=service&comp=properties",
            account,
            200,
            "",
        ),
        (
            "PUT",
            "/devstoreaccount1/?restype=service&comp=properties",
            account,
            403,
            "AuthorizationPermissionMismatch",
        ),
    ];
    for (i, (method, path, fields, status, code)) in account_cases.into_iter().enumerate() {
        let separator = if path.contains('?') { '&' } else { '?' };
        let full = format!("{path}{separator}{}", account_sas(fields));
        let mut request = call(method, "").json(r#"{"TableName":"made"}"#);
        request.path = &full;
        request.sign = false;
        let (got_status, got_code) = code_of(wire.send(request).await).await;
        assert_eq!(
            (got_status, got_code.as_str()),
            (status, code),
            "account case {i}"
        );
    }

    // A batch under a read-only token: its insert is the failed operation.
    let boundary = "batch_1";
    let changeset = "changeset_1";
    let batch_body = format!(
        "--{boundary}\r\nContent-Type: multipart/mixed; boundary={changeset}\r\n\r\n\
         --{changeset}\r\nContent-Type: application/http\r\nContent-Transfer-Encoding: binary\r\n\r\n\
         POST http://127.0.0.1/devstoreaccount1/sast HTTP/1.1\r\nContent-Type: application/json\r\n\r\n\
         {{\"PartitionKey\":\"p9\",\"RowKey\":\"r\"}}\r\n--{changeset}--\r\n--{boundary}--\r\n"
    );
    let path = format!("/devstoreaccount1/$batch?{}", table_sas(read));
    let mut batch = call("POST", "").header(
        "content-type",
        format!("multipart/mixed; boundary={boundary}"),
    );
    batch.path = &path;
    batch.sign = false;
    batch.body = batch_body.into_bytes();
    let response = wire.send(batch).await;
    assert_eq!(response.status(), 202);
    let text = response.text().await.unwrap();
    assert!(
        text.contains("403")
            && text.contains("AuthorizationPermissionMismatch")
            && text.contains("0:"),
        "{text}"
    );
}

#[tokio::test]
async fn stored_access_policies_and_the_xml_apis() {
    let wire = Wire::start().await;
    let acl = |body: &str| {
        call("PUT", "/devstoreaccount1/polt?comp=acl")
            .header("content-type", "application/xml")
            .with_body(body)
    };
    let policy = "<?xml version=\"1.0\" encoding=\"utf-8\"?><SignedIdentifiers><SignedIdentifier>\
        <Id>readers</Id><AccessPolicy><Expiry>2099-01-01T00:00:00Z</Expiry><Permission>r</Permission>\
        </AccessPolicy></SignedIdentifier></SignedIdentifiers>";
    // No table yet: 404, in XML.
    let response = wire.send(acl(policy)).await;
    assert_eq!(response.status(), 404);
    assert_eq!(response.headers()["content-type"], "application/xml");
    let text = response.text().await.unwrap();
    assert!(
        text.starts_with("<?xml") && text.contains("<Code>"),
        "{text}"
    );

    wire.create_table("polt").await;
    let body = r#"{"PartitionKey":"p","RowKey":"r"}"#;
    assert_eq!(
        wire.send(call("POST", "/devstoreaccount1/polt").json(body))
            .await
            .status(),
        201
    );
    let (status, code) = code_of(wire.send(acl("<SignedIdentifiers><Signed")).await).await;
    assert_eq!((status, code.as_str()), (400, "InvalidXmlDocument"));
    assert_eq!(wire.send(acl(policy)).await.status(), 204);
    let read_back = wire
        .text(call("GET", "/devstoreaccount1/polt?comp=acl"))
        .await;
    assert!(
        read_back.contains("<Id>readers</Id>")
            && read_back.contains("<Expiry>2099-01-01T00:00:00.0000000Z</Expiry>"),
        "{read_back}"
    );

    let by_policy = TableSasFields {
        table: "polt",
        policy_id: "readers",
        version: "2019-02-02",
        ..TableSasFields::default()
    };
    let get = |sas: String| {
        let path = format!("/devstoreaccount1/polt(PartitionKey='p',RowKey='r')?{sas}");
        let wire = &wire;
        async move {
            let mut unsigned = call("GET", "");
            unsigned.path = &path;
            unsigned.sign = false;
            code_of(wire.send(unsigned).await).await
        }
    };
    assert_eq!(get(table_sas(by_policy)).await, (200, String::new()));
    // Given in both the token and its policy: refused as a bad request, as the
    // service documents ("Create a service SAS").
    let both = TableSasFields {
        permissions: "r",
        ..by_policy
    };
    assert_eq!(
        get(table_sas(both)).await,
        (400, "InvalidQueryParameterValue".to_owned())
    );
    // Deleting the table takes its policies: a new table of that name has none, and
    // the token is revoked.
    assert_eq!(
        wire.send(call("DELETE", "/devstoreaccount1/Tables('polt')"))
            .await
            .status(),
        204
    );
    wire.create_table("polt").await;
    let empty = wire
        .text(call("GET", "/devstoreaccount1/polt?comp=acl"))
        .await;
    assert!(!empty.contains("<SignedIdentifier>"), "{empty}");
    assert_eq!(get(table_sas(by_policy)).await.1, "AuthenticationFailed");

    // Service properties: CORS rules honoured on preflight and on answers.
    assert_eq!(
        wire.send(set_cors("https://app.example")).await.status(),
        202
    );
    let preflight = |origin: &'static str, headers: Option<&'static str>| {
        let mut request = call("OPTIONS", "/devstoreaccount1/Tables")
            .header("origin", origin)
            .header("access-control-request-method", "GET");
        if let Some(headers) = headers {
            request = request.header("access-control-request-headers", headers);
        }
        request.sign = false;
        request
    };
    let allowed = wire
        .send(preflight("https://app.example", Some("x-ms-date")))
        .await;
    assert_eq!(allowed.status(), 200);
    assert_eq!(
        allowed.headers()["access-control-allow-origin"],
        "https://app.example"
    );
    assert_eq!(allowed.headers()["access-control-max-age"], "30");
    for refused in [
        preflight("https://evil.example", None),
        preflight("https://app.example", Some("content-md5")),
    ] {
        assert_eq!(
            code_of(wire.send(refused).await).await,
            (403, "CorsPreflightFailure".to_owned())
        );
    }
    let mut no_method =
        call("OPTIONS", "/devstoreaccount1/Tables").header("origin", "https://app.example");
    no_method.sign = false;
    assert_eq!(code_of(wire.send(no_method).await).await.0, 400);
    // An answer to a browser's request, even a refusal, carries the CORS headers.
    let mut unsigned =
        call("GET", "/devstoreaccount1/Tables").header("origin", "https://app.example");
    unsigned.sign = false;
    let response = wire.send(unsigned).await;
    assert_eq!(response.status(), 403);
    assert_eq!(
        response.headers()["access-control-allow-origin"],
        "https://app.example"
    );
    assert_eq!(
        response.headers()["access-control-expose-headers"],
        "x-ms-request-id"
    );
    let other = wire
        .send(call("GET", "/devstoreaccount1/Tables").header("origin", "https://evil.example"))
        .await;
    assert_eq!(other.status(), 200);
    assert!(other.headers().get("access-control-allow-origin").is_none());
    // ... but, with CORS on, a GET's answer varies by Origin all the same (a cache
    // must not hand it to an origin a rule admits); without an Origin it doesn't.
    assert_eq!(other.headers()["vary"], "Origin");
    let plain = wire.send(call("GET", "/devstoreaccount1/Tables")).await;
    assert!(plain.headers().get("vary").is_none());
    // The service's own words open each refusal (clients match on them).
    let (_, _, body) = xml_failure(wire.send(preflight("https://evil.example", None)).await).await;
    assert!(
        body.contains("CORS not enabled or no matching rule found for this request."),
        "{body}"
    );
    let mut no_method =
        call("OPTIONS", "/devstoreaccount1/Tables").header("origin", "https://app.example");
    no_method.sign = false;
    let (status, _, body) = xml_failure(wire.send(no_method).await).await;
    assert_eq!(status, 400);
    assert!(
        body.contains("A required CORS header is not present."),
        "{body}"
    );

    let properties = wire
        .text(call(
            "GET",
            "/devstoreaccount1/?restype=service&comp=properties",
        ))
        .await;
    assert!(
        properties.contains("<AllowedOrigins>https://app.example</AllowedOrigins>"),
        "{properties}"
    );
    // The stats: only the secondary location serves them (path-style and
    // host-style), the primary refuses as Azure does.
    let (status, header, body) = xml_failure(
        wire.send(call("GET", "/devstoreaccount1/?restype=service&comp=stats"))
            .await,
    )
    .await;
    assert_eq!(
        (status, header.as_str()),
        (400, "InvalidQueryParameterValue")
    );
    assert!(
        body.contains("<Code>InvalidQueryParameterValue</Code>") && body.contains("-secondary"),
        "{body}"
    );
    let mut host_style = call("GET", "/?restype=service&comp=stats");
    host_style.host = Some("devstoreaccount1-secondary.table.localhost");
    for stats in [
        call(
            "GET",
            "/devstoreaccount1-secondary/?restype=service&comp=stats",
        ),
        host_style,
    ] {
        let stats = wire.send(stats).await;
        assert_eq!(stats.status(), 200);
        assert!(stats
            .text()
            .await
            .unwrap()
            .contains("<Status>live</Status>"));
    }
}

/// What other clients send, read as the service reads it (each learnt from
/// Azurite's own table tests and checked against the service's documentation:
/// docs/service-behaviour.md): a trailing slash, a SAS beside a Shared Key header,
/// `x-ms-version`, the 4 MiB body, an insert's `Location`, If-Match forms, empty
/// query options, the service's words in an entity-body refusal.
#[tokio::test]
async fn other_clients_dialects_as_the_service_reads_them() {
    let wire = Wire::start().await;
    let base = wire.server.url();

    // `Tables/` and `$batch/` name the same resources as without the slash.
    let created = wire
        .send(call("POST", "/devstoreaccount1/Tables/").json(r#"{"TableName":"dialects"}"#))
        .await;
    assert_eq!(created.status(), 201);
    let body = format!(
        "--batch_b\r\nContent-Type: multipart/mixed; boundary=changeset_c\r\n\r\n\
         --changeset_c\r\nContent-Type: application/http\r\nContent-Transfer-Encoding: binary\r\n\r\n\
         POST {base}/dialects HTTP/1.1\r\nContent-Type: application/json\r\n\
         Prefer: return-no-content\r\n\r\n{{\"PartitionKey\":\"b\",\"RowKey\":\"o'1\"}}\r\n\
         --changeset_c--\r\n--batch_b--\r\n"
    );
    let batch = call("POST", "/devstoreaccount1/$batch/")
        .header("content-type", "multipart/mixed; boundary=batch_b")
        .with_body(&body);
    let answer = wire.send(batch).await;
    assert_eq!(answer.status(), 202);
    // Each insert of a batch says where its entity lives (the JS SDK reads the
    // RowKey back from it), keys percent-encoded and quotes doubled.
    let text = answer.text().await.unwrap();
    let location = format!("{base}/dialects(PartitionKey='b',RowKey='o''1')");
    assert!(
        text.contains(&format!("Location: {location}\r\n")),
        "{text}"
    );
    assert!(
        text.contains(&format!("DataServiceId: {location}\r\n")),
        "{text}"
    );

    // So does a single insert, with or without content.
    for prefer in ["return-content", "return-no-content"] {
        let inserted = wire
            .send(
                call("POST", "/devstoreaccount1/dialects")
                    .header("prefer", prefer)
                    .json(&format!(r#"{{"PartitionKey":"%p","RowKey":"{prefer}"}}"#)),
            )
            .await;
        assert!(inserted.status().is_success());
        let location = format!("{base}/dialects(PartitionKey='%25p',RowKey='{prefer}')");
        assert_eq!(inserted.headers()["location"], location.as_str());
        assert_eq!(inserted.headers()["dataserviceid"], location.as_str());
    }

    // A SAS speaks for the request: a Shared Key header beside it (here one that
    // would fail) is not consulted, and grants nothing more than the SAS.
    let read = table_sas(TableSasFields {
        permissions: "r",
        expiry: SAS_EXPIRY,
        table: "dialects",
        version: "2019-02-02",
        ..TableSasFields::default()
    });
    let path = format!("/devstoreaccount1/dialects()?{read}");
    let mut beside = call("GET", &path).header(
        "authorization",
        "SharedKeyLite devstoreaccount1:bm90IGEgc2lnbmF0dXJl",
    );
    beside.sign = false;
    assert_eq!(wire.send(beside).await.status(), 200);
    let path = format!("/devstoreaccount1/dialects?{read}");
    let mut widen = call("POST", &path)
        .header(
            "authorization",
            "SharedKeyLite devstoreaccount1:bm90IGEgc2lnbmF0dXJl",
        )
        .json(r#"{"PartitionKey":"w","RowKey":"w"}"#);
    widen.sign = false;
    assert_eq!(
        code_of(wire.send(widen).await).await,
        (403, "AuthorizationPermissionMismatch".to_owned())
    );

    // x-ms-version: a published version or a later date is answered (and echoed);
    // anything else is refused before anything is read or written.
    for (version, status) in [
        ("2018-03-28", 200),
        ("2025-11-05", 200),
        ("2031-06-01", 200),
        ("invalid", 400),
        ("2019-02-03", 400),
        ("2019-2-2", 400),
    ] {
        let response = wire
            .send(call("GET", "/devstoreaccount1/Tables").header("x-ms-version", version))
            .await;
        assert_eq!(response.status(), status, "x-ms-version {version}");
        if status == 400 {
            assert_eq!(error_code_header(&response), "InvalidHeaderValue");
        } else {
            assert_eq!(response.headers()["x-ms-version"], version);
        }
    }

    // Any body over 4 MiB, not only a batch's: 413 RequestBodyTooLarge, unread.
    let big = format!(
        r#"{{"PartitionKey":"big","RowKey":"big","A":"{}"}}"#,
        "a".repeat(4 * 1024 * 1024)
    );
    let (status, header, code) = failure(
        wire.send(call("POST", "/devstoreaccount1/dialects").json(&big))
            .await,
    )
    .await;
    assert_eq!(
        (status, header.as_str(), code.as_str()),
        (413, "RequestBodyTooLarge", "RequestBodyTooLarge")
    );

    // If-Match: a weak ETag is compared (412 when stale, whatever it holds); a
    // strong or malformed one is refused as malformed (400).
    let entity = "/devstoreaccount1/dialects(PartitionKey='%25p',RowKey='return-content')";
    for (if_match, status) in [
        ("W/\"wrong\"", 412),
        ("w/\"datetime'2015-01-01T23%3A14%3A33.4980000Z'\"", 412),
        ("\"wrong\"", 400),
        ("\"datetime'2015-01-01T23%3A14%3A33.4980000Z'\"", 400),
        ("wrong", 400),
        ("\"", 400),
    ] {
        let response = wire
            .send(call("PUT", entity).header("if-match", if_match).json("{}"))
            .await;
        assert_eq!(response.status(), status, "If-Match {if_match}");
    }

    // `$filter=` and `$select=` given empty are absent: every row, every property.
    for query in ["$filter=", "$filter=%20&$select="] {
        let json: Json = wire
            .send(call(
                "GET",
                &format!("/devstoreaccount1/dialects()?{query}"),
            ))
            .await
            .json()
            .await
            .unwrap();
        assert_eq!(
            json["value"].as_array().unwrap().len(),
            3,
            "{query}: {json}"
        );
    }
    let tables: Json = wire
        .send(call("GET", "/devstoreaccount1/Tables?$filter="))
        .await
        .json()
        .await
        .unwrap();
    assert_eq!(tables["value"].as_array().unwrap().len(), 1, "{tables}");

    // `$top=0`: no rows, and a continuation at the first that matches, from
    // which the next page reads them all.
    let none = wire
        .send(call("GET", "/devstoreaccount1/dialects()?$top=0"))
        .await;
    assert_eq!(none.status(), 200);
    let (npk, nrk) = (
        none.headers()["x-ms-continuation-nextpartitionkey"]
            .to_str()
            .unwrap()
            .to_owned(),
        none.headers()["x-ms-continuation-nextrowkey"]
            .to_str()
            .unwrap()
            .to_owned(),
    );
    let json: Json = none.json().await.unwrap();
    assert_eq!(json["value"].as_array().unwrap().len(), 0, "{json}");
    let rest: Json = wire
        .send(call(
            "GET",
            &format!("/devstoreaccount1/dialects()?NextPartitionKey={npk}&NextRowKey={nrk}"),
        ))
        .await
        .json()
        .await
        .unwrap();
    assert_eq!(rest["value"].as_array().unwrap().len(), 3, "{rest}");

    // An entity body the service can't read: its own words first, then ours.
    let bad = r#"{"PartitionKey":"d","RowKey":"d","When":"","When@odata.type":"Edm.DateTime"}"#;
    let response = wire
        .send(call("POST", "/devstoreaccount1/dialects").json(bad))
        .await;
    assert_eq!(response.status(), 400);
    let json: Json = response.json().await.unwrap();
    let message = json["odata.error"]["message"]["value"].as_str().unwrap();
    assert!(
        message.starts_with("An error occurred while processing this request. "),
        "{message}"
    );
}

/// Batches as other clients write them (bodies shaped as Azurite's tests replay
/// them from the legacy .NET storage library, `Azure-Storage/9.3.2`, and from REST
/// clients): absolute sub-request URLs, `<table>()` for an insert,
/// `DataServiceVersion: 3.0;`, keys with `%25`, `PATCH` in a changeset, a read alone
/// in a batch. Each answers as the service does, and a failing one applies nothing.
#[tokio::test]
async fn batches_as_other_clients_send_them() {
    let wire = Wire::start().await;
    wire.create_table("legacy").await;
    let base = wire.server.url();
    let send = |parts: Vec<String>, changeset: bool| {
        let mut body = String::from("--batch_5b\r\n");
        if changeset {
            body.push_str("Content-Type: multipart/mixed; boundary=changeset_c7\r\n\r\n");
            for part in &parts {
                body.push_str("--changeset_c7\r\nContent-Type: application/http\r\n");
                body.push_str("Content-Transfer-Encoding: binary\r\n\r\n");
                body.push_str(part);
                body.push_str("\r\n");
            }
            body.push_str("--changeset_c7--\r\n--batch_5b--\r\n");
        } else {
            body.push_str(
                "Content-Type: application/http\r\nContent-Transfer-Encoding: binary\r\n\r\n",
            );
            body.push_str(&parts.concat());
            body.push_str("--batch_5b--\r\n");
        }
        let request = call("POST", "/devstoreaccount1/$batch")
            .header("content-type", "multipart/mixed; boundary=batch_5b")
            .with_body(&body);
        let wire = &wire;
        async move {
            let response = wire.send(request).await;
            assert_eq!(response.status(), 202);
            response.text().await.unwrap()
        }
    };
    let get = |rk: &'static str| {
        let path = format!("/devstoreaccount1/legacy(PartitionKey='0',RowKey='{rk}')");
        let wire = &wire;
        async move { wire.send(call("GET", &path)).await.status().as_u16() }
    };
    let put = |rk: &str, if_match: &str| {
        format!(
            "PUT {base}/legacy(PartitionKey='0',RowKey='{rk}') HTTP/1.1\r\n\
             Accept: application/json;odata=minimalmetadata\r\nContent-Type: application/json\r\n\
             DataServiceVersion: 3.0;\r\nIf-Match: {if_match}\r\n\r\n{{\"Bandwidth\":10000}}"
        )
    };
    let insert = |rk: &str| {
        format!(
            "POST {base}/legacy() HTTP/1.1\r\nAccept: application/json;odata=minimalmetadata\r\n\
             Content-Type: application/json\r\nPrefer: return-no-content\r\n\
             DataServiceVersion: 3.0;\r\n\r\n{{\"PartitionKey\":\"0\",\"RowKey\":\"{rk}\",\
             \"Owner\":\"00000000-0000-0000-0000-000000000000\",\"Owner@odata.type\":\"Edm.Guid\"}}"
        )
    };
    let stale = "W/\"datetime'2023-01-23T19%3A39%3A54.978799Z'\"";

    // The legacy .NET library's shape: replacing rows that don't exist fails on the
    // first operation, and the insert beside it is not applied.
    let text = send(
        vec![
            put("port%25fs3", stale),
            put("port%25fs4", stale),
            insert("pair"),
        ],
        true,
    )
    .await;
    assert!(text.contains("HTTP/1.1 404 Not Found"), "{text}");
    assert!(text.contains("\"value\":\"0:"), "{text}");
    assert_eq!(get("pair").await, 404);
    // Inserts alone apply, keys with `%` as they were meant
    // (the body holds the key itself; the URLs above encode its `%` as `%25`).
    let text = send(vec![insert("port%fs3"), insert("pair")], true).await;
    assert_eq!(
        text.matches("HTTP/1.1 204 No Content\r\n").count(),
        2,
        "{text}"
    );
    assert_eq!(get("port%25fs3").await, 200);
    // A stale weak ETag on a row that exists: 412, nothing applied.
    let text = send(vec![put("pair", stale), insert("other")], true).await;
    assert!(
        text.contains("HTTP/1.1 412 Precondition Failed\r\n"),
        "{text}"
    );
    assert_eq!(get("other").await, 404);
    // PATCH in a changeset merges, conditionally as MERGE does.
    let patch = format!(
        "PATCH {base}/legacy(PartitionKey='0',RowKey='absent')?$format=application%2Fjson%3Bodata%3Dminimalmetadata HTTP/1.1\r\n\
         x-ms-version: 2019-02-02\r\nDataServiceVersion: 3.0\r\nIf-Match: {stale}\r\n\
         Accept: application/json\r\nContent-Type: application/json\r\n\r\n\
         {{\"PartitionKey\":\"0\",\"RowKey\":\"absent\"}}"
    );
    let text = send(vec![patch], true).await;
    assert!(text.contains("HTTP/1.1 404 Not Found"), "{text}");
    // A read alone in a batch, not in a changeset: the entity, or 404 with `0:`.
    let read = |rk: &str| {
        format!(
            "GET {base}/legacy(PartitionKey='0',RowKey='{rk}') HTTP/1.1\r\n\
             Accept: application/json;odata=minimalmetadata\r\n"
        )
    };
    let text = send(vec![read("pair")], false).await;
    assert!(text.contains("HTTP/1.1 200 OK"), "{text}");
    assert!(text.contains("\"RowKey\":\"pair\""), "{text}");
    let text = send(vec![read("absent")], false).await;
    assert!(
        text.contains("0:The specified resource does not exist."),
        "{text}"
    );
}

/// The status, the error code header and the XML body of a refusal.
async fn xml_failure(response: Response) -> (u16, String, String) {
    let status = response.status().as_u16();
    let header = error_code_header(&response);
    (status, header, response.text().await.unwrap())
}

#[tokio::test]
async fn a_data_directory_keeps_rows_policies_and_properties_across_restarts() {
    let dir = std::env::temp_dir().join(format!("tables-protocol-data-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let first = Wire::start_with(Server::builder().port(0).data_dir(&dir)).await;
    first.create_table("kept").await;
    let inserted = first
        .send(
            call("POST", "/devstoreaccount1/kept")
                .json(r#"{"PartitionKey":"p","RowKey":"r","N":1}"#),
        )
        .await;
    assert_eq!(inserted.status(), 201);
    let mut etag = inserted.headers()["etag"].to_str().unwrap().to_owned();
    let policy = "<SignedIdentifiers><SignedIdentifier><Id>readers</Id><AccessPolicy>\
        <Expiry>2099-01-01T00:00:00Z</Expiry><Permission>r</Permission></AccessPolicy>\
        </SignedIdentifier></SignedIdentifiers>";
    let set_acl = call("PUT", "/devstoreaccount1/kept?comp=acl")
        .header("content-type", "application/xml")
        .with_body(policy);
    assert_eq!(first.send(set_acl).await.status(), 204);
    assert_eq!(
        first.send(set_cors("https://kept.example")).await.status(),
        202
    );
    first.server.stop();

    // The first restart replays the journal (and snapshots it); the second loads
    // that snapshot and replays the first restart's write; the third, the same
    // again. Each must give everything back.
    for restart in 0..3 {
        let wire = Wire::start_with(Server::builder().port(0).data_dir(&dir)).await;
        let row = wire
            .send(call(
                "GET",
                "/devstoreaccount1/kept(PartitionKey='p',RowKey='r')",
            ))
            .await;
        assert_eq!(row.status(), 200, "restart {restart}");
        assert_eq!(
            row.headers()["etag"].to_str().unwrap(),
            etag,
            "restart {restart}"
        );
        let acl = wire
            .text(call("GET", "/devstoreaccount1/kept?comp=acl"))
            .await;
        assert!(acl.contains("<Id>readers</Id>"), "restart {restart}: {acl}");
        let properties = wire
            .text(call(
                "GET",
                "/devstoreaccount1/?restype=service&comp=properties",
            ))
            .await;
        assert!(
            properties.contains("https://kept.example"),
            "restart {restart}: {properties}"
        );
        // A new write gets a new ETag, later than the restored one.
        let replaced = wire
            .send(
                call("PUT", "/devstoreaccount1/kept(PartitionKey='p',RowKey='r')")
                    .header("if-match", etag.clone())
                    .json(r#"{"N":2}"#),
            )
            .await;
        assert_eq!(replaced.status(), 204, "restart {restart}");
        let new_etag = replaced.headers()["etag"].to_str().unwrap().to_owned();
        assert_ne!(new_etag, etag);
        wire.server.stop();
        // The next start must give the replaced row back.
        etag = new_etag;
    }
    let _ = std::fs::remove_dir_all(&dir);
}
