//! What the wire tests share: signing a request as a client does.

#![allow(dead_code, clippy::unwrap_used)] // each test binary uses a part

use std::time::SystemTime;

use tables_core::auth::{
    request_canonical_resource, shared_key_authorization, AccountKey, DEVELOPMENT_ACCOUNT,
    DEVELOPMENT_ACCOUNT_KEY,
};

/// The development account's key.
pub(crate) fn dev_key() -> AccountKey {
    AccountKey::new(DEVELOPMENT_ACCOUNT, DEVELOPMENT_ACCOUNT_KEY).unwrap()
}

/// The `Authorization` header (SharedKeyLite when `lite`) of a request of the
/// development account signed over `target` (path and query, as on the request
/// line), with this `Content-Type` (empty if none) and `x-ms-date`.
pub(crate) fn authorization(
    lite: bool,
    method: &str,
    target: &str,
    content_type: &str,
    date: &str,
) -> String {
    let (path, query) = target.split_once('?').unwrap_or((target, ""));
    let resource = request_canonical_resource(DEVELOPMENT_ACCOUNT, path, query);
    shared_key_authorization(&dev_key(), lite, method, "", content_type, date, &resource)
}

/// A request to `http://{addr}{target}` signed with SharedKey, with the headers
/// every request carries (and `Content-Type: application/json` with a body).
pub(crate) fn signed(
    client: &reqwest::Client,
    addr: std::net::SocketAddr,
    method: &str,
    target: &str,
    body: Option<(&str, String)>,
) -> reqwest::RequestBuilder {
    let date = httpdate::fmt_http_date(SystemTime::now());
    let content_type = body.as_ref().map_or("", |(ct, _)| *ct);
    let mut request = client
        .request(
            reqwest::Method::from_bytes(method.as_bytes()).unwrap(),
            format!("http://{addr}{target}"),
        )
        .header("x-ms-version", "2019-02-02")
        .header("x-ms-date", &date)
        .header("accept", "application/json;odata=nometadata")
        .header(
            "authorization",
            authorization(false, method, target, content_type, &date),
        );
    if let Some((content_type, body)) = body {
        request = request.header("content-type", content_type).body(body);
    }
    request
}
