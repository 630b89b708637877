//! One HTTP exchange with the service: build the URL, sign, send, retry, and turn
//! error answers into the SDK's errors. Every operation of the remote engine goes
//! through [`Transport::send`].

use std::borrow::Cow;
use std::sync::atomic::{AtomicU8, Ordering as AtomicOrdering};
use std::time::{Duration, Instant, SystemTime};

use bytes::Bytes;
use reqwest::header::{
    HeaderMap, HeaderName, HeaderValue, ACCEPT, AUTHORIZATION, CONTENT_LENGTH, CONTENT_TYPE,
};
use reqwest::{Method, StatusCode, Url};
use tables_core::odata::service_error;
use tables_core::{Error, ErrorKind, FilterDialect, Result};
use tracing::Span;

use super::credential::Credential;
use super::diagnose::{self, explain_refusal, Needs, Refusal, ServerKind};
use super::endpoint::Endpoint;
use super::retry::{is_retryable_status, retry_after, status_may_have_applied, RetryPolicy};
use super::sign::{blob_shared_key_authorization, table_authorization};
use crate::request_id::ClientRequestId;
use std::sync::LazyLock;
use tables_core::blob::wire::BLOB_API_VERSION;
use tables_core::odata::header;

pub(crate) use tables_core::odata::header::{ACCEPT_JSON, API_VERSION, JSON};

const USER_AGENT: &str = concat!("tables-rs/", env!("CARGO_PKG_VERSION"));

// Header names parsed once: naming a header by `&str` parses the name on every
// request. The names are `tables_core::odata::header`'s.
static X_MS_VERSION: LazyLock<HeaderName> = LazyLock::new(|| name(header::X_MS_VERSION));
static X_MS_DATE: LazyLock<HeaderName> = LazyLock::new(|| name(header::X_MS_DATE));
static X_MS_CLIENT_REQUEST_ID: LazyLock<HeaderName> =
    LazyLock::new(|| name(header::X_MS_CLIENT_REQUEST_ID));
static DATA_SERVICE_VERSION: LazyLock<HeaderName> =
    LazyLock::new(|| name(header::DATA_SERVICE_VERSION));
static MAX_DATA_SERVICE_VERSION: LazyLock<HeaderName> =
    LazyLock::new(|| name(header::MAX_DATA_SERVICE_VERSION));
static X_HTTP_METHOD: LazyLock<HeaderName> = LazyLock::new(|| name(header::X_HTTP_METHOD));
static PREFER: LazyLock<HeaderName> = LazyLock::new(|| name(header::PREFER));

/// A header name of the protocol (a constant, tested to parse).
fn name(text: &'static str) -> HeaderName {
    HeaderName::from_bytes(text.as_bytes()).expect("the protocol's header names are valid")
}

/// Which storage service a transport talks to: the headers every request carries
/// and the way it is signed differ.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Service {
    /// The Table service: OData JSON headers, the Table service's signature.
    Table,
    /// The Blob service: its own version, every `x-ms-` header and the query signed.
    Blob,
}

/// One request, as the engine describes it; the transport adds the URL base,
/// version, date, authorization and request id headers.
#[derive(Debug)]
pub(crate) struct Request {
    /// The HTTP method (`MERGE` included).
    pub(crate) method: Method,
    /// The resource path under the account URL, already encoded (`Tables`,
    /// `mytable(PartitionKey='p',RowKey='r')`, `$batch`).
    pub(crate) path: String,
    /// The encoded query string without `?`; empty for none.
    pub(crate) query: String,
    /// `Content-Type` of the body, if any.
    pub(crate) content_type: Option<Cow<'static, str>>,
    /// `If-Match`, if any.
    pub(crate) if_match: Option<String>,
    /// `X-HTTP-Method`: the method tunnelled through a POST (MERGE on the Cosmos DB
    /// Table API, as the official SDKs send it).
    pub(crate) tunnelled_method: Option<&'static str>,
    /// `Prefer: return-no-content` for inserts and table creation.
    pub(crate) prefer_no_content: bool,
    /// The body, if any. `Bytes` clones share the buffer, so a retry resends without
    /// copying.
    pub(crate) body: Option<Bytes>,
    /// Whether the request can't take effect twice (a read, an insert, a write
    /// conditional on an ETag, ...): only such a request is retried after an attempt
    /// that may have been applied. See docs/service-behaviour.md, "Lost answers".
    pub(crate) replay_safe: bool,
    /// The operation's name (`InsertEntity`), for messages.
    pub(crate) operation: &'static str,
    /// The table the request is about; empty for listing tables.
    pub(crate) table: String,
    /// What the request needs from a SAS, to explain a refusal.
    pub(crate) needs: Needs,
    /// Further headers (the blob service's `x-ms-blob-type`, `x-ms-range`,
    /// `If-None-Match`, ...).
    pub(crate) headers: Vec<(HeaderName, HeaderValue)>,
}

impl Request {
    /// A request with no body and no conditions: a read, until the caller says
    /// otherwise.
    pub(crate) fn new(method: Method, path: String) -> Request {
        Request {
            method,
            path,
            query: String::new(),
            content_type: None,
            if_match: None,
            tunnelled_method: None,
            prefer_no_content: false,
            body: None,
            replay_safe: true,
            // Set from the operation when sent.
            operation: "",
            table: String::new(),
            needs: Needs::READ,
            headers: Vec::new(),
        }
    }
}

/// A response with a success status (< 300).
#[derive(Debug)]
pub(crate) struct Response {
    pub(crate) status: u16,
    pub(crate) headers: HeaderMap,
    pub(crate) body: Bytes,
    /// Whether an earlier attempt failed in a way that may have applied the request
    /// (the engine marks errors it finds inside this answer, such as a batch part's).
    pub(crate) may_have_applied: bool,
    /// How many attempts the request took, this one included.
    pub(crate) attempts: u32,
}

impl Response {
    /// A header as text, if present and valid.
    pub(crate) fn header(&self, name: &str) -> Option<&str> {
        self.headers.get(name).and_then(|v| v.to_str().ok())
    }
}

/// What one attempt gave.
enum Attempt {
    /// An answer from the service (any status).
    Answer(Response),
    /// No answer: the connection failed or the attempt timed out.
    Failed {
        error: Error,
        /// Whether the request may have reached the service (and been applied).
        may_have_applied: bool,
    },
}

/// The HTTP side of the remote engine: client pool, endpoint, credential, policy.
#[derive(Debug)]
pub(crate) struct Transport {
    pub(crate) http: reqwest::Client,
    pub(crate) endpoint: Endpoint,
    pub(crate) credential: Credential,
    /// The bearer tokens of a [`Credential::Bearer`], cached.
    pub(crate) tokens: Option<super::credential::TokenCache>,
    pub(crate) retry: RetryPolicy,
    pub(crate) request_timeout: Duration,
    pub(crate) service: Service,
    /// What answers, as its `Server` header names it (learned from every answer).
    pub(crate) server: ServerSeen,
}

/// The server behind the endpoint, as far as its answers tell: Azurite evaluates
/// filters in a dialect of its own ([`FilterDialect::Azurite`]), and an error
/// about a server that no longer answers names that server's settings.
#[derive(Debug, Default)]
pub(crate) struct ServerSeen(AtomicU8);

impl ServerSeen {
    const UNKNOWN: u8 = 0;

    /// Notes the server of an answer.
    fn saw(&self, headers: &HeaderMap) {
        let server = headers
            .get(reqwest::header::SERVER)
            .and_then(|v| v.to_str().ok())
            .unwrap_or_default();
        let kind = if server.starts_with("Azurite") {
            ServerKind::Azurite
        } else if server.starts_with("tables-server/") {
            ServerKind::TablesServer
        } else {
            ServerKind::Other
        };
        self.0.store(kind as u8 + 1, AtomicOrdering::Relaxed);
    }

    /// The server seen last; `None` before any answer.
    pub(crate) fn kind(&self) -> Option<ServerKind> {
        match self.0.load(AtomicOrdering::Relaxed) {
            Self::UNKNOWN => None,
            n if n == ServerKind::Azurite as u8 + 1 => Some(ServerKind::Azurite),
            n if n == ServerKind::TablesServer as u8 + 1 => Some(ServerKind::TablesServer),
            _ => Some(ServerKind::Other),
        }
    }

    /// The filter dialect of the server seen; `None` before any answer.
    pub(crate) fn dialect(&self) -> Option<FilterDialect> {
        self.kind().map(|kind| match kind {
            ServerKind::Azurite => FilterDialect::Azurite,
            ServerKind::TablesServer | ServerKind::Other => FilterDialect::Typed,
        })
    }
}

impl Transport {
    /// Sends `request`, retrying transient failures under the retry policy. Returns
    /// the first success (< 300); an error answer becomes the SDK error for its status
    /// and code, with the request id. If an attempt may have been applied (a timeout,
    /// a broken connection, a 500/502/504), a final error says so
    /// ([`Error::may_have_applied`]), and a request that could take effect twice
    /// (not [`Request::replay_safe`]) is not retried after it.
    ///
    /// Every attempt carries the client request id of the current
    /// [`ClientRequestId`] scope, or one made for this request.
    pub(crate) async fn send(&self, request: &Request) -> Result<Response> {
        let started = Instant::now();
        let scoped = ClientRequestId::current();
        let mut id_buffer = uuid::Uuid::encode_buffer();
        let client_request_id = match &scoped {
            Some(id) => id.as_str(),
            None => fresh_client_request_id(&mut id_buffer),
        };
        let url = self.url(request);
        let mut retries: u32 = 0;
        let mut uncertain = false;
        // The token a bearer challenge refused: replaced once, then the refusal is
        // the answer.
        let mut refused: Option<String> = None;
        let mut challenged = false;
        loop {
            let bearer = match &self.tokens {
                Some(tokens) => Some(tokens.token(refused.as_deref()).await?),
                None => None,
            };
            let attempt = self
                .attempt(request, &url, client_request_id, bearer.as_deref())
                .await?;
            let span = Span::current();
            span.record("http.request.resend_count", retries);
            let (error, may_have_applied, hint) = match attempt {
                Attempt::Answer(mut response) => {
                    self.server.saw(&response.headers);
                    span.record("http.response.status_code", response.status);
                    if let Some(id) = response.header(header::X_MS_REQUEST_ID) {
                        span.record("az.service_request_id", id);
                    }
                    if response.status < 300 {
                        if retries > 0 {
                            tracing::debug!(retries, "succeeded after retries");
                        }
                        response.may_have_applied = uncertain;
                        response.attempts = retries + 1;
                        return Ok(response);
                    }
                    if response.status == 401 && !challenged && is_bearer_challenge(&response) {
                        // The token was refused (revoked, or expired early): one more
                        // attempt with a new one, not counted as a retry.
                        tracing::debug!("bearer challenge: retrying once with a new token");
                        challenged = true;
                        refused = bearer;
                        continue;
                    }
                    let error = self.answer_error(request, &response);
                    if !is_retryable_status(response.status) {
                        return Err(finish(error, uncertain, retries, client_request_id));
                    }
                    let hint = retry_after(&response.headers, SystemTime::now());
                    (error, status_may_have_applied(response.status), hint)
                }
                Attempt::Failed {
                    error,
                    may_have_applied,
                } => (error, may_have_applied, None),
            };
            uncertain |= may_have_applied;
            if retries >= self.retry.max_retries {
                return Err(finish(error, uncertain, retries, client_request_id));
            }
            if uncertain && !request.replay_safe {
                tracing::debug!(
                    "not retrying: the attempt may have been applied, and this request could \
                     take effect twice"
                );
                return Err(finish(error, uncertain, retries, client_request_id));
            }
            let delay = self.retry.delay(retries, hint);
            if started.elapsed() + delay > self.retry.max_elapsed {
                tracing::debug!(
                    ?delay,
                    "not retrying: the next attempt would pass the retry time budget"
                );
                return Err(finish(error, uncertain, retries, client_request_id));
            }
            tracing::debug!(
                retry = retries + 1,
                ?delay,
                error.kind = %error.kind(),
                "transient failure; retrying"
            );
            tokio::time::sleep(delay).await;
            retries += 1;
        }
    }

    /// The full URL of a request, with a SAS token's parameters when the credential
    /// is one.
    fn url(&self, request: &Request) -> Url {
        let sas = match &self.credential {
            Credential::Sas(token) => token.expose_query(),
            _ => "",
        };
        if sas.is_empty() || request.query.is_empty() {
            let query = if sas.is_empty() { &request.query } else { sas };
            return self.endpoint.resource_url(&request.path, query);
        }
        let query = format!("{}&{sas}", request.query);
        self.endpoint.resource_url(&request.path, &query)
    }

    async fn attempt(
        &self,
        request: &Request,
        url: &Url,
        client_request_id: &str,
        bearer: Option<&str>,
    ) -> Result<Attempt> {
        let date = http_date(SystemTime::now());
        // An RFC 1123 date is ASCII, so it always reads back as text.
        let date_text = date.to_str().unwrap_or_default();
        let mut headers = HeaderMap::with_capacity(10 + request.headers.len());
        headers.insert(X_MS_DATE.clone(), date.clone());
        match self.service {
            Service::Table => {
                headers.insert(X_MS_VERSION.clone(), HeaderValue::from_static(API_VERSION));
                headers.insert(ACCEPT, HeaderValue::from_static(ACCEPT_JSON));
                headers.insert(
                    DATA_SERVICE_VERSION.clone(),
                    HeaderValue::from_static("3.0"),
                );
                headers.insert(
                    MAX_DATA_SERVICE_VERSION.clone(),
                    HeaderValue::from_static("3.0;NetFx"),
                );
            }
            Service::Blob => {
                headers.insert(
                    X_MS_VERSION.clone(),
                    HeaderValue::from_static(BLOB_API_VERSION),
                );
            }
        }
        headers.insert(
            X_MS_CLIENT_REQUEST_ID.clone(),
            header_value(client_request_id)?,
        );
        headers.insert(
            reqwest::header::USER_AGENT,
            HeaderValue::from_static(USER_AGENT),
        );
        match &request.content_type {
            Some(Cow::Borrowed(static_type)) => {
                headers.insert(CONTENT_TYPE, HeaderValue::from_static(static_type));
            }
            Some(Cow::Owned(content_type)) => {
                headers.insert(CONTENT_TYPE, header_value(content_type)?);
            }
            None => {}
        }
        if let Some(if_match) = &request.if_match {
            headers.insert(reqwest::header::IF_MATCH, header_value(if_match)?);
        }
        if let Some(method) = request.tunnelled_method {
            headers.insert(X_HTTP_METHOD.clone(), HeaderValue::from_static(method));
        }
        if request.prefer_no_content {
            headers.insert(
                PREFER.clone(),
                HeaderValue::from_static(header::RETURN_NO_CONTENT),
            );
        }
        for (name, value) in &request.headers {
            headers.insert(name.clone(), value.clone());
        }
        // An empty body is sent without a length unless told: the service wants
        // `Content-Length: 0` on a PUT with nothing in it.
        if request.body.as_ref().is_some_and(Bytes::is_empty) {
            headers.insert(CONTENT_LENGTH, HeaderValue::from_static("0"));
        }
        if let Some(authorization) =
            self.authorization(request, url, date_text, &headers, bearer)?
        {
            let mut value = header_value(&authorization)?;
            value.set_sensitive(true);
            headers.insert(AUTHORIZATION, value);
        }
        let mut http_request = reqwest::Request::new(request.method.clone(), url.clone());
        // Set whole: `RequestBuilder::headers` would insert them one by one again.
        *http_request.headers_mut() = headers;
        if let Some(body) = &request.body {
            *http_request.body_mut() = Some(body.clone().into());
        }
        // One timer for the whole attempt, from sending to the last byte of the answer
        // (reqwest's own per-request timeout arms two).
        let exchange = async {
            let mut response = self.http.execute(http_request).await?;
            let status = response.status().as_u16();
            let headers = std::mem::take(response.headers_mut());
            let body = response.bytes().await?;
            Ok::<_, reqwest::Error>(Response {
                status,
                headers,
                body,
                may_have_applied: false,
                attempts: 1,
            })
        };
        match tokio::time::timeout(self.request_timeout, exchange).await {
            Ok(Ok(response)) => Ok(Attempt::Answer(response)),
            Ok(Err(e)) => Ok(self.transport_failure(e, request, url)),
            // The request may have been sent and applied; only the answer is missing.
            Err(_) => Ok(Attempt::Failed {
                error: diagnose::timed_out(
                    &self.endpoint,
                    &describe(request, url),
                    self.request_timeout,
                    false,
                ),
                may_have_applied: true,
            }),
        }
    }

    /// A failed attempt without an answer, naming the endpoint and the request and
    /// saying what to check. reqwest's error text holds the URL, and a SAS signature
    /// in it, so the URL is dropped before the error is kept.
    fn transport_failure(&self, error: reqwest::Error, request: &Request, url: &Url) -> Attempt {
        let connect = error.is_connect();
        let timed_out = error.is_timeout();
        let error = error.without_url();
        let what = describe(request, url);
        let failure = if timed_out {
            diagnose::timed_out(&self.endpoint, &what, self.request_timeout, connect)
        } else {
            diagnose::connection_failure(
                &error,
                &self.endpoint,
                self.server.kind(),
                &what,
                !connect,
            )
        };
        Attempt::Failed {
            error: failure.with_source(error),
            // A connection that was never made carried no request.
            may_have_applied: !connect,
        }
    }

    /// The SDK error for an error answer; an auth failure says what most likely
    /// caused it.
    fn answer_error(&self, request: &Request, response: &Response) -> Error {
        let code = response.header(header::X_MS_ERROR_CODE);
        let mut error = service_error(response.status, code, &response.body);
        if let Some(id) = response.header(header::X_MS_REQUEST_ID) {
            error = error.with_request_id(id);
        }
        if response.status == StatusCode::TOO_MANY_REQUESTS.as_u16()
            && error.kind() != ErrorKind::Throttled
        {
            error = error.with_kind(ErrorKind::Throttled);
        }
        if matches!(response.status, 401 | 403) {
            let code = error.service_code().map(str::to_owned);
            let refusal = Refusal {
                credential: &self.credential,
                account: self.endpoint.account(),
                table: &request.table,
                needs: request.needs,
                operation: request.operation,
                code: code.as_deref(),
                service_time: response
                    .header(header::DATE)
                    .and_then(|d| httpdate::parse_http_date(d).ok()),
                now: SystemTime::now(),
            };
            error = explain_refusal(error, &refusal);
        }
        error
    }

    /// The `Authorization` header for this attempt, if the credential signs.
    fn authorization(
        &self,
        request: &Request,
        url: &Url,
        date: &str,
        headers: &HeaderMap,
        bearer: Option<&str>,
    ) -> Result<Option<String>> {
        let (key, lite) = match &self.credential {
            Credential::SharedKey(key) => (key, false),
            Credential::SharedKeyLite(key) => (key, true),
            Credential::Bearer(_) => return Ok(bearer.map(|token| format!("Bearer {token}"))),
            Credential::Sas(_) | Credential::Anonymous => return Ok(None),
        };
        if self.service == Service::Blob {
            let length = request.body.as_ref().map_or(0, Bytes::len);
            return Ok(Some(blob_shared_key_authorization(
                key,
                request.method.as_str(),
                headers,
                length,
                self.endpoint.account(),
                url,
            )));
        }
        Ok(Some(table_authorization(
            key,
            lite,
            request.method.as_str(),
            self.endpoint.account(),
            url,
            request.content_type.as_deref().unwrap_or(""),
            date,
        )))
    }
}

/// Whether a `401` carries a bearer challenge (`WWW-Authenticate: Bearer ...`).
fn is_bearer_challenge(response: &Response) -> bool {
    response
        .headers
        .get_all(reqwest::header::WWW_AUTHENTICATE)
        .iter()
        .any(|v| v.as_bytes().len() >= 6 && v.as_bytes()[..6].eq_ignore_ascii_case(b"bearer"))
}

/// The `x-ms-date` header of `now` (RFC 1123, whole seconds), formatted once per
/// second per thread; clones share its bytes.
fn http_date(now: SystemTime) -> HeaderValue {
    use std::cell::RefCell;
    thread_local! {
        static LAST: RefCell<(u64, HeaderValue)> =
            const { RefCell::new((u64::MAX, HeaderValue::from_static(""))) };
    }
    let second = now
        .duration_since(SystemTime::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    LAST.with(|last| {
        let mut last = last.borrow_mut();
        if last.0 != second {
            // `HeaderValue::from_maybe_shared` keeps the formatted bytes without a copy;
            // an RFC 1123 date is always a valid header value.
            let text = httpdate::fmt_http_date(now);
            if let Ok(value) = HeaderValue::from_maybe_shared(Bytes::from(text)) {
                *last = (second, value);
            }
        }
        last.1.clone()
    })
}

/// A fresh `x-ms-client-request-id` for a request sent outside any
/// [`ClientRequestId`] scope: a random (v4) UUID, from a fast thread-local generator,
/// written into `buffer` (no allocation).
fn fresh_client_request_id(buffer: &mut [u8]) -> &str {
    let bytes = fastrand::u128(..).to_le_bytes();
    uuid::Builder::from_random_bytes(bytes)
        .into_uuid()
        .hyphenated()
        .encode_lower(buffer)
}

fn header_value(text: &str) -> Result<HeaderValue> {
    HeaderValue::from_str(text).map_err(|_| {
        Error::new(
            ErrorKind::InvalidInput,
            "a header value holds characters HTTP headers cannot carry".to_owned(),
        )
    })
}

/// The request as `METHOD /path`, the path as sent (no query: a SAS lives there).
fn describe(request: &Request, url: &Url) -> String {
    format!("{} {}", request.method, url.path())
}

/// The error returned after the last attempt.
fn finish(error: Error, uncertain: bool, retries: u32, client_request_id: &str) -> Error {
    let error = if retries > 0 {
        let message = format!("{} (after {} attempts)", error.message(), retries + 1);
        error.with_message(message)
    } else {
        error
    };
    let error = error
        .with_attempts(retries + 1)
        .with_client_request_id(client_request_id);
    if uncertain {
        error.with_may_have_applied()
    } else {
        error
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_protocols_header_names_parse() {
        for text in [
            header::ACCEPT,
            header::CONTENT_TYPE,
            header::CONTENT_ID,
            header::DATA_SERVICE_VERSION,
            header::MAX_DATA_SERVICE_VERSION,
            header::DATE,
            header::ETAG,
            header::IF_MATCH,
            header::PREFER,
            header::RETRY_AFTER,
            header::X_HTTP_METHOD,
            header::X_MS_CLIENT_REQUEST_ID,
            header::X_MS_DATE,
            header::X_MS_ERROR_CODE,
            header::X_MS_REQUEST_ID,
            header::X_MS_RETRY_AFTER_MS,
            header::X_MS_VERSION,
        ] {
            assert!(name(text).as_str().eq_ignore_ascii_case(text), "{text}");
        }
        assert_eq!(*X_MS_VERSION, "x-ms-version");
    }
}
