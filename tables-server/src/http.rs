//! The HTTP side: accepting connections, reading each request whole, and writing
//! the answer with the headers every answer of the service carries.

use std::borrow::Cow;
use std::cell::RefCell;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::SystemTime;

use bytes::Bytes;
use http_body_util::Full;
use hyper::body::Incoming;
use hyper::header::{self, HeaderMap, HeaderName, HeaderValue};
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper::{Method, StatusCode};
use hyper_util::rt::{TokioIo, TokioTimer};
use tables_core::odata::header::API_VERSION;
use tables_core::odata::path::ResourcePath;
use tokio::net::{TcpListener, TcpStream};
use tokio::runtime::Handle;
use tokio::sync::{watch, OwnedSemaphorePermit, Semaphore};
use tokio::task::JoinSet;
use tokio::time::Instant;

use crate::context::State;
use crate::faults::{FaultEffect, FaultRule};
use crate::handle::handle;
use crate::limits::{
    accept_backoff, busy_connection, read_body, with_retry_after, Limits, MAX_CLIENT_REQUEST_ID,
    MAX_ECHOED_VERSION,
};
use crate::reply::{names, Failure, Reply};
use crate::request::{parse_query, Request};
use crate::{batch, cors};

/// The most a connection's read buffer holds: a request's line and headers must fit
/// (more is `431`), and a body is read in pieces of at most this size, so an open
/// connection holds little memory besides the bodies [`Limits`] counts.
const MAX_BUFFER_BYTES: usize = 64 << 10;

/// Connections past [`Limits::max_connections`] answered `503 ServerBusy` at once;
/// beyond them, a new connection is closed unanswered.
const BUSY_ANSWERS: usize = 32;

/// Accepts connections until `shutdown` turns true, then stops them all. The
/// connections are handed in turn to the current runtime and to `workers` (other
/// runtimes, each on a thread of its own); each stays where it was handed. Past
/// [`Limits::max_connections`], a connection is answered `503 ServerBusy`; a failed
/// accept (out of descriptors, say) pauses accepting, longer after each failure in a
/// row, instead of trying again at once.
pub(crate) async fn serve(
    listener: TcpListener,
    state: Arc<State>,
    mut shutdown: watch::Receiver<bool>,
    workers: Vec<Handle>,
) {
    let mut connections = JoinSet::new();
    let mut turn = 0;
    let permits = Arc::new(Semaphore::new(state.limits.max_connections));
    let busy = Arc::new(Semaphore::new(BUSY_ANSWERS));
    let mut failures = 0_u32;
    let mut paused: Option<Instant> = None;
    loop {
        tokio::select! {
            accepted = listener.accept(), if paused.is_none() => {
                let (stream, peer) = match accepted {
                    Ok(accepted) => {
                        failures = 0;
                        accepted
                    }
                    Err(err) => {
                        let wait = accept_backoff(failures);
                        if failures.is_multiple_of(100) {
                            tracing::warn!(
                                failures_in_a_row = failures + 1,
                                "can't accept a connection ({err}); accepting again in {} ms",
                                wait.as_millis()
                            );
                        }
                        failures = failures.saturating_add(1);
                        paused = Some(Instant::now() + wait);
                        continue;
                    }
                };
                let _ = stream.set_nodelay(true);
                let Ok(permit) = Arc::clone(&permits).try_acquire_owned() else {
                    // Over HTTPS the busy answer would need a handshake first, the work
                    // the limit saves: the connection is closed instead.
                    if state.tls.is_none() {
                        if let Ok(permit) = Arc::clone(&busy).try_acquire_owned() {
                            connections.spawn(answer_busy(stream, state.limits.clone(), permit));
                        }
                    }
                    continue;
                };
                let state = Arc::clone(&state);
                turn = (turn + 1) % (workers.len() + 1);
                match workers.get(turn) {
                    None => {
                        connections.spawn(serve_stream(stream, state, peer, permit));
                    }
                    Some(worker) => {
                        // Moved to the worker's runtime: registered there afresh.
                        let Ok(stream) = stream.into_std() else { continue };
                        connections.spawn_on(
                            async move {
                                if let Ok(stream) = TcpStream::from_std(stream) {
                                    serve_stream(stream, state, peer, permit).await;
                                }
                            },
                            worker,
                        );
                    }
                }
            }
            () = tokio::time::sleep_until(paused.unwrap_or_else(Instant::now)), if paused.is_some() => {
                paused = None;
            }
            // Reap finished connections so the set doesn't grow.
            Some(_) = connections.join_next(), if !connections.is_empty() => {}
            changed = shutdown.changed() => {
                if changed.is_err() || *shutdown.borrow() {
                    break;
                }
            }
        }
    }
    connections.shutdown().await;
}

/// hyper's HTTP/1 settings: the header timeout (with tokio's timer) and the read
/// buffer's size.
fn http1_builder(header_timeout: std::time::Duration) -> http1::Builder {
    let mut builder = http1::Builder::new();
    builder
        .timer(TokioTimer::new())
        .header_read_timeout(header_timeout)
        .max_buf_size(MAX_BUFFER_BYTES);
    builder
}

/// Serves one accepted connection: over TLS when the server has a certificate
/// (a handshake that doesn't finish within the header timeout closes it), plain
/// HTTP otherwise.
async fn serve_stream(
    stream: TcpStream,
    state: Arc<State>,
    peer: SocketAddr,
    permit: OwnedSemaphorePermit,
) {
    match state.tls.clone() {
        None => serve_connection(stream, state, peer, permit, false).await,
        Some(tls) => {
            let handshake = tls.acceptor().accept(stream);
            match tokio::time::timeout(state.limits.header_timeout, handshake).await {
                Ok(Ok(stream)) => serve_connection(stream, state, peer, permit, true).await,
                Ok(Err(err)) => {
                    tracing::debug!(%peer, "TLS handshake failed: {err}");
                }
                Err(_) => tracing::debug!(%peer, "TLS handshake timed out"),
            }
        }
    }
}

/// Answers the requests of one connection until it closes, or sends no request
/// in time.
async fn serve_connection<S>(
    stream: S,
    state: Arc<State>,
    peer: SocketAddr,
    permit: OwnedSemaphorePermit,
    https: bool,
) where
    S: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin + Send + 'static,
{
    let mut builder = http1_builder(state.limits.header_timeout);
    builder.keep_alive(true);
    let service = service_fn(move |request| {
        let state = Arc::clone(&state);
        async move { answer(&state, request, peer, https).await }
    });
    let _ = builder
        .serve_connection(TokioIo::new(stream), service)
        .await;
    drop(permit);
}

/// Answers a connection past the limit: `503 ServerBusy` with `Retry-After`, then
/// closes it.
async fn answer_busy(stream: TcpStream, limits: Limits, permit: OwnedSemaphorePermit) {
    let max = limits.max_connections;
    let service = service_fn(move |_request| async move {
        let request_id = request_id();
        let reply = with_retry_after(busy_connection(max).reply(&request_id, false));
        Ok::<_, std::convert::Infallible>(respond(reply, request_id, DEFAULT_VERSION, None))
    });
    let mut builder = http1_builder(limits.header_timeout.min(std::time::Duration::from_secs(5)));
    builder.keep_alive(false);
    let _ = builder
        .serve_connection(TokioIo::new(stream), service)
        .await;
    drop(permit);
}

/// A connection closed on purpose, without an answer (an injected fault).
#[derive(Debug)]
struct Dropped;

impl std::fmt::Display for Dropped {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("connection dropped by a fault rule")
    }
}

impl std::error::Error for Dropped {}

/// A new request id, UUID-shaped as the service's: a random base drawn once per
/// process, plus a counter in its low 64 bits. Unique per process without asking
/// the kernel for randomness on every request (a system call per request was a
/// tenth of the server's CPU time at one request at a time).
fn request_id() -> String {
    static BASE: std::sync::OnceLock<u128> = std::sync::OnceLock::new();
    static COUNTER: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let base = *BASE.get_or_init(|| uuid::Uuid::new_v4().as_u128());
    let n = COUNTER.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let id = (base & !u128::from(u64::MAX)) | u128::from((base as u64).wrapping_add(n));
    uuid::Uuid::from_u128(id).to_string()
}

/// Reads the request and answers it: every error is an answer; only a fault rule
/// drops the connection instead.
async fn answer(
    state: &State,
    request: hyper::Request<Incoming>,
    peer: SocketAddr,
    https: bool,
) -> Result<hyper::Response<Full<Bytes>>, Dropped> {
    let request_id = request_id();
    let (parts, body) = request.into_parts();
    // Echoed: shares the request's bytes, no copy; bounded.
    let version = parts
        .headers
        .get(names::VERSION)
        .filter(|v| v.len() <= MAX_ECHOED_VERSION && v.to_str().is_ok())
        .cloned()
        .unwrap_or(DEFAULT_VERSION);
    let client_request_id = parts
        .headers
        .get(names::CLIENT_REQUEST_ID)
        .filter(|v| v.to_str().is_ok());
    if let Some(id) = client_request_id.filter(|id| id.len() > MAX_CLIENT_REQUEST_ID) {
        let failure = Failure::new(
            400,
            "InvalidHeaderValue",
            format!(
                "The value for one of the HTTP headers is not in the correct format: \
                 x-ms-client-request-id is {} bytes long; the service takes at most \
                 {MAX_CLIENT_REQUEST_ID}",
                id.len()
            ),
        );
        let reply = failure.reply(&request_id, false);
        return Ok(respond(reply, request_id, version, None));
    }
    let client_request_id = client_request_id.cloned();
    let reply = match read_body(
        &parts.headers,
        body,
        &state.budget,
        state.limits.body_timeout,
    )
    .await
    {
        Err(failure) => {
            let reply = with_retry_after(failure.reply(&request_id, false));
            // What is left of the body can't be told from a next request.
            reply.with_header(header::CONNECTION, "close")
        }
        Ok((body, held)) => {
            let reply = match read(parts, body, peer, https) {
                Ok(request) => serve_request(state, &request, &request_id).await?,
                Err(failure) => failure.reply(&request_id, false),
            };
            drop(held);
            reply
        }
    };
    Ok(respond(reply, request_id, version, client_request_id))
}

/// Answers a request that was read: the fault control endpoint, an injected fault,
/// or the service's answer, with CORS headers.
async fn serve_request(
    state: &State,
    request: &Request,
    request_id: &str,
) -> Result<Reply, Dropped> {
    if state.fault_control && request.raw_path().trim_end_matches('/') == "/_faults" {
        return Ok(control(state, request));
    }
    let table = || {
        let target = request.target(|name| state.accounts.contains_key(name))?;
        match ResourcePath::parse(target.resource)? {
            ResourcePath::Entities(table)
            | ResourcePath::Entity(table, _)
            | ResourcePath::Table(table) => Some(table),
            ResourcePath::Batch => batch::table_of(request, target.account),
            ResourcePath::Service | ResourcePath::Tables => None,
        }
    };
    match state.faults.fire(request, table) {
        None => {}
        Some(FaultEffect::Latency(wait)) => tokio::time::sleep(wait).await,
        Some(FaultEffect::DropBefore) => return Err(Dropped),
        Some(FaultEffect::DropAfter) => {
            let _ = handle(state, request).await;
            return Err(Dropped);
        }
        Some(FaultEffect::Status {
            status,
            retry_after,
        }) => {
            let (code, message) = match status {
                500 => (
                    "InternalError",
                    "Server encountered an internal error. Please try again after some time.",
                ),
                503 => ("ServerBusy", "The server is busy."),
                _ => ("TooManyRequests", "The request rate is too large."),
            };
            let failure = Failure::new(
                status,
                code,
                format!("{message} (injected by a fault rule)"),
            );
            let mut reply = failure.reply(request_id, request.xml_api());
            if let Some(after) = retry_after {
                let millis = after.as_millis();
                reply = reply
                    .with_header(header::RETRY_AFTER, millis.div_ceil(1000).to_string())
                    .with_header(names::RETRY_AFTER_MS, millis.to_string());
            }
            return Ok(cors::decorate(state, request, reply));
        }
    }
    let reply = match handle(state, request).await {
        Ok(reply) => reply,
        Err(failure) => {
            tracing::debug!(
                request_id = %request_id,
                method = %request.method,
                path = %request.raw_path(),
                peer = %request.peer,
                status = failure.status,
                code = %failure.code,
                "refused: {}",
                failure.message
            );
            failure.reply(request_id, request.xml_api())
        }
    };
    Ok(cors::decorate(state, request, reply))
}

/// `/_faults`: `GET` the rules and the log, `POST` rules (one per line), `DELETE`
/// them all; for a loopback caller that signs with a served account's key only
/// (SharedKey or SharedKeyLite over `/<account>/_faults`).
fn control(state: &State, request: &Request) -> Reply {
    let text = |status: u16, body: String| {
        Reply::empty(status)
            .with_header(header::CONTENT_TYPE, "text/plain; charset=utf-8")
            .with_body(body.into_bytes())
    };
    if !request.peer.to_canonical().is_loopback() {
        return text(
            403,
            format!(
                "the fault control endpoint answers callers on this machine (loopback) only, \
                 not {}\n",
                request.peer
            ),
        );
    }
    let signer = request
        .header(header::AUTHORIZATION)
        .and_then(tables_core::auth::Authorization::parse)
        .and_then(|authorization| state.accounts.get(authorization.account));
    let signed = signer.map(|account| crate::auth::authenticate(request, account));
    if !matches!(signed, Some(Ok(crate::access::Access::Full))) {
        let why = match signed {
            Some(Err(failure)) => failure.message,
            _ => "no Authorization header of a served account".to_owned(),
        };
        return text(
            403,
            format!(
                "the fault control endpoint needs a request signed with a served account's \
                 key (SharedKey or SharedKeyLite, over /<account>/_faults): {why}\n"
            ),
        );
    }
    match request.method.as_str() {
        "GET" => text(200, state.faults.describe()),
        "DELETE" => {
            state.faults.clear();
            Reply::empty(204)
        }
        "POST" => {
            let Ok(body) = std::str::from_utf8(&request.body) else {
                return text(400, "the rules are not UTF-8 text\n".to_owned());
            };
            let rules: Result<Vec<FaultRule>, String> = body
                .lines()
                .map(str::trim)
                .filter(|line| !line.is_empty())
                .map(str::parse)
                .collect();
            match rules {
                Ok(rules) => {
                    for rule in rules {
                        state.faults.add(rule);
                    }
                    text(201, state.faults.describe())
                }
                Err(message) => text(400, format!("{message}\n")),
            }
        }
        other => text(
            405,
            format!("{other} is not supported on /_faults: use GET, POST or DELETE\n"),
        ),
    }
}

/// The request, read: the method (with `X-HTTP-Method` tunnelling), the path and
/// query, the headers and the body.
pub(crate) fn read(
    parts: hyper::http::request::Parts,
    body: Bytes,
    peer: SocketAddr,
    https: bool,
) -> Result<Request, Failure> {
    let wire_method = parts.method;
    let mut tunnelled = parts.headers.get_all(names::X_HTTP_METHOD).iter();
    let method = match (tunnelled.next(), tunnelled.next()) {
        (None, _) => wire_method.clone(),
        (Some(_), Some(_)) => {
            return Err(Failure::new(
                400,
                "XMethodIncorrectCount",
                "the request has more than one X-HTTP-Method header",
            ))
        }
        (Some(_), None) if wire_method != Method::POST => {
            return Err(Failure::new(
                400,
                "XMethodNotUsingPost",
                "X-HTTP-Method tunnels a method through POST only",
            ))
        }
        (Some(value), None) => {
            let text = value.to_str().unwrap_or_default().trim();
            match Method::from_bytes(text.as_bytes()) {
                Ok(method) if matches!(text, "MERGE" | "PATCH" | "DELETE" | "PUT" | "GET") => {
                    method
                }
                _ => {
                    return Err(Failure::new(
                        400,
                        "XMethodIncorrectValue",
                        format!("X-HTTP-Method {text:?} is not MERGE, PATCH, PUT, DELETE or GET"),
                    ))
                }
            }
        }
    };
    let query = parse_query(parts.uri.query().unwrap_or_default());
    Ok(Request {
        method,
        wire_method,
        uri: parts.uri,
        query,
        headers: parts.headers,
        body,
        scheme: if https { "https" } else { "http" },
        peer: peer.ip(),
    })
}

/// The `x-ms-version` of an answer to a request that names none.
const DEFAULT_VERSION: HeaderValue = HeaderValue::from_static(API_VERSION);

/// The answer with the headers every answer carries. A header value that can't be
/// written (nothing a client stores should lead to one, but an answer must never be
/// an empty 500) turns the answer into a `500 InternalError` that names the header.
fn respond(
    reply: Reply,
    request_id: String,
    version: HeaderValue,
    client_request_id: Option<HeaderValue>,
) -> hyper::Response<Full<Bytes>> {
    let status = StatusCode::from_u16(reply.status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    let base = base_headers(&request_id, version.clone(), client_request_id.clone());
    match answer_headers(reply.headers, base) {
        Ok(headers) => {
            let mut response = hyper::Response::new(Full::new(reply.body));
            *response.status_mut() = status;
            *response.headers_mut() = headers;
            response
        }
        Err(name) => {
            tracing::error!(
                request_id = %request_id,
                "an answer's {name} header held characters HTTP can't carry; answering 500"
            );
            let failure = Failure::new(
                500,
                "InternalError",
                format!(
                    "the server could not write its answer's {name} header: its value holds \
                     characters an HTTP header can't carry. The request may have been carried \
                     out; this is a server bug, please report it"
                ),
            );
            let error = failure.reply(&request_id, false);
            let base = base_headers(&request_id, version, client_request_id);
            // The error's own headers are literals and always valid.
            let headers = answer_headers(error.headers, base).unwrap_or_default();
            let mut response = hyper::Response::new(Full::new(error.body));
            *response.status_mut() = StatusCode::INTERNAL_SERVER_ERROR;
            *response.headers_mut() = headers;
            response
        }
    }
}

/// The headers every answer carries.
fn base_headers(
    request_id: &str,
    version: HeaderValue,
    client_request_id: Option<HeaderValue>,
) -> HeaderMap {
    let mut map = HeaderMap::with_capacity(12);
    if let Ok(id) = HeaderValue::try_from(request_id) {
        map.insert(names::REQUEST_ID, id);
    }
    map.insert(names::VERSION, version);
    map.insert(header::DATE, http_date(SystemTime::now()));
    map.insert(header::SERVER, SERVER);
    if let Some(id) = client_request_id {
        map.insert(names::CLIENT_REQUEST_ID, id);
    }
    map
}

/// The reply's headers added to `map`: a value written once (a name, a literal) is
/// shared, not copied. The name of a header whose value can't be written, if any.
fn answer_headers(
    headers: Vec<(HeaderName, Cow<'static, str>)>,
    mut map: HeaderMap,
) -> Result<HeaderMap, HeaderName> {
    for (name, value) in headers {
        let value = match value {
            Cow::Borrowed(text) => {
                HeaderValue::from_maybe_shared(Bytes::from_static(text.as_bytes()))
            }
            Cow::Owned(text) => HeaderValue::try_from(text),
        };
        match value {
            Ok(value) => {
                map.append(name, value);
            }
            Err(_) => return Err(name),
        }
    }
    Ok(map)
}

const SERVER: HeaderValue =
    HeaderValue::from_static(concat!("tables-server/", env!("CARGO_PKG_VERSION")));

/// `Date`: `now` in the HTTP format, written once a second per thread.
fn http_date(now: SystemTime) -> HeaderValue {
    thread_local! {
        static LAST: RefCell<Option<(u64, HeaderValue)>> = const { RefCell::new(None) };
    }
    let second = now
        .duration_since(SystemTime::UNIX_EPOCH)
        .map_or(0, |since| since.as_secs());
    LAST.with(|last| {
        let mut last = last.borrow_mut();
        match &*last {
            Some((at, value)) if *at == second => value.clone(),
            _ => {
                let value = HeaderValue::try_from(httpdate::fmt_http_date(now))
                    .unwrap_or(HeaderValue::from_static(""));
                *last = Some((second, value.clone()));
                value
            }
        }
    })
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_date_is_written_anew_each_second() {
        let start = std::time::UNIX_EPOCH + std::time::Duration::from_secs(1_700_000_000);
        let date = |millis| super::http_date(start + std::time::Duration::from_millis(millis));
        let expected = |secs| httpdate::fmt_http_date(start + std::time::Duration::from_secs(secs));
        assert_eq!(date(0), expected(0));
        assert_eq!(date(999), expected(0));
        assert_eq!(date(1_000), expected(1));
        assert_eq!(date(61_500), expected(61));
        // Back in time (the clock was set back): still right.
        assert_eq!(date(500), expected(0));
    }

    /// A header value that can't be written is an error answer with a body that
    /// names the header, never an empty 500.
    #[test]
    fn an_unwritable_header_is_an_error_answer_that_names_it() {
        let reply = crate::reply::Reply::empty(200).with_header(
            hyper::header::ACCESS_CONTROL_EXPOSE_HEADERS,
            "a\nb".to_owned(),
        );
        let version = hyper::header::HeaderValue::from_static("2019-02-02");
        let response = super::respond(reply, "id-1".to_owned(), version, None);
        assert_eq!(response.status(), 500);
        let headers = response.headers();
        assert_eq!(headers["x-ms-error-code"], "InternalError");
        assert_eq!(headers["x-ms-request-id"], "id-1");
        let body = futures_body(response);
        assert!(body.contains("access-control-expose-headers"), "{body}");
    }

    fn futures_body(response: hyper::Response<http_body_util::Full<bytes::Bytes>>) -> String {
        use http_body_util::BodyExt;
        let runtime = tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap();
        let collected = runtime.block_on(response.into_body().collect()).unwrap();
        String::from_utf8(collected.to_bytes().to_vec()).unwrap()
    }

    /// A signed request to `/_faults` is answered from a loopback address only.
    #[test]
    fn the_fault_control_endpoint_answers_signed_loopback_callers_only() {
        use std::collections::HashMap;
        use std::sync::Arc;
        use tables_core::auth::{request_canonical_resource, shared_key_authorization};

        let account = crate::account::Account::development();
        let name = account.name().to_owned();
        let state = super::State {
            accounts: HashMap::from([(
                name.clone(),
                crate::context::AccountState::new(account, tables_mem::MemEngine::new()),
            )]),
            faults: Arc::default(),
            fault_control: true,
            limits: crate::limits::Limits::default(),
            budget: crate::limits::Budget::new(1),
            tls: None,
        };
        let date = httpdate::fmt_http_date(std::time::SystemTime::now());
        let key = state.accounts[&name].account.keys()[0].clone();
        let resource = request_canonical_resource(&name, "/_faults", "");
        let signature = shared_key_authorization(&key, false, "GET", "", "", &date, &resource);
        let ask = |peer: [u8; 4], authorization: &str| {
            let (parts, ()) = hyper::Request::builder()
                .uri("/_faults")
                .header("x-ms-date", date.as_str())
                .header("authorization", authorization)
                .body(())
                .unwrap()
                .into_parts();
            let peer = std::net::SocketAddr::from((peer, 50_000));
            let request = super::read(parts, bytes::Bytes::new(), peer, false).unwrap();
            super::control(&state, &request).status
        };
        assert_eq!(ask([127, 0, 0, 1], &signature), 200);
        assert_eq!(ask([10, 0, 0, 1], &signature), 403);
        assert_eq!(ask([127, 0, 0, 1], "SharedKey devstoreaccount1:AAAA"), 403);
    }

    #[test]
    fn request_ids_are_unique_and_uuid_shaped() {
        let ids: std::collections::HashSet<String> =
            (0..10_000).map(|_| super::request_id()).collect();
        assert_eq!(ids.len(), 10_000);
        assert!(ids.iter().all(|id| uuid::Uuid::parse_str(id).is_ok()));
    }
}
