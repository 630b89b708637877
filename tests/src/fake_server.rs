//! [`FakeServer`]: a scripted HTTP/1.1 server on loopback, for testing the remote
//! engine's transport (retries, timeouts, broken connections, error answers) and
//! for benchmarking it without a real service.
//!
//! Every complete request is recorded and numbered (0-based, in arrival order
//! across all connections), then answered with whatever the handler returns:
//!
//! ```
//! # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
//! use tables_tests::fake_server::{FakeServer, Reply};
//!
//! // Throttle the first request, then succeed.
//! let server = FakeServer::start(|request, n| match n {
//!     0 => Reply::empty(503).with_header("Retry-After", "1"),
//!     _ if request.method == "GET" => Reply::json(200, r#"{"value":[]}"#),
//!     _ => Reply::empty(204),
//! })
//! .await;
//! assert!(server.url().starts_with("http://127.0.0.1:"));
//! assert!(server.url().ends_with("/devstoreaccount1"));
//! assert_eq!(server.request_count(), 0);
//! # });
//! ```
//!
//! A handler may also be async ([`FakeServer::start_async`]): a proxy's, which
//! forwards each request elsewhere before it answers (see
//! [`crate::fault_proxy`]).
//!
//! What it speaks: HTTP/1.1 with persistent (keep-alive) connections and
//! pipelining, request bodies framed by `Content-Length` only (a chunked request
//! is answered `400` and the connection closed), `Expect: 100-continue`. Malformed
//! input gets a `400` and a closed connection; it never stops the server. Replies
//! carry exactly the scripted headers plus `Content-Length` (unless the script gives
//! one, which is then sent as is, even if wrong). Nothing is logged.

use std::fmt;
use std::future::Future;
use std::io::Write as _;
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::task::{JoinHandle, JoinSet};

/// Largest request head (request line and headers) accepted.
const MAX_HEAD: usize = 64 * 1024;
/// Largest request body accepted.
const MAX_BODY: usize = 64 * 1024 * 1024;
/// The account path of [`FakeServer::url`], as Azurite's.
const ACCOUNT: &str = "devstoreaccount1";

/// One request as the server received it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Recorded {
    /// The method, as sent (`GET`, `POST`, `MERGE`...).
    pub method: String,
    /// The request target, as sent: path and query (`/devstoreaccount1/Tables?$top=1`).
    pub path_and_query: String,
    /// The headers in the order sent, names as sent (lossy UTF-8 values).
    pub headers: Vec<(String, String)>,
    /// The body (empty without `Content-Length`).
    pub body: Vec<u8>,
}

impl Recorded {
    /// The first header called `name` (compared case-insensitively).
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    /// The path, without the query string.
    pub fn path(&self) -> &str {
        self.path_and_query
            .split_once('?')
            .map_or(self.path_and_query.as_str(), |(path, _)| path)
    }

    /// The query string without `?`; empty if there is none.
    pub fn query(&self) -> &str {
        self.path_and_query
            .split_once('?')
            .map_or("", |(_, query)| query)
    }
}

/// What the server does with a request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Reply {
    /// Answer with this status, these headers and this body. `Content-Length` is
    /// added unless given; a `Connection: close` header closes the connection after
    /// the answer. No body is sent for 1xx, 204 and 304 answers, nor to `HEAD`.
    Respond {
        /// The status code.
        status: u16,
        /// Headers, sent in this order.
        headers: Vec<(String, String)>,
        /// The body.
        body: Vec<u8>,
    },
    /// Wait, then do what the inner reply says (the connection stays open).
    Delay(Duration, Box<Reply>),
    /// Close the connection without answering, abortively: the client sees a
    /// connection reset.
    Drop,
    /// Close the connection without answering, cleanly, after the whole request was
    /// read: the client sees the connection end before any response.
    DropAfterReading,
    /// Send only the first bytes (status line and headers included) of the inner
    /// answer, then close the connection: the client sees the answer end early. An
    /// inner reply that is not an answer closes without sending anything.
    Cut(usize, Box<Reply>),
}

impl Reply {
    /// A JSON answer as the service sends one (`Content-Type:
    /// application/json;odata=minimalmetadata;streaming=true;charset=utf-8`).
    pub fn json(status: u16, body: &str) -> Reply {
        Reply::Respond {
            status,
            headers: vec![(
                "Content-Type".to_owned(),
                "application/json;odata=minimalmetadata;streaming=true;charset=utf-8".to_owned(),
            )],
            body: body.as_bytes().to_vec(),
        }
    }

    /// An answer with no headers (but `Content-Length`) and no body.
    pub fn empty(status: u16) -> Reply {
        Reply::Respond {
            status,
            headers: Vec::new(),
            body: Vec::new(),
        }
    }

    /// Adds a header to the answer (to the inner answer of a [`Reply::Delay`]; a
    /// dropping reply is returned unchanged).
    pub fn with_header(self, name: impl Into<String>, value: impl Into<String>) -> Reply {
        match self {
            Reply::Respond {
                status,
                mut headers,
                body,
            } => {
                headers.push((name.into(), value.into()));
                Reply::Respond {
                    status,
                    headers,
                    body,
                }
            }
            Reply::Delay(delay, inner) => {
                Reply::Delay(delay, Box::new(inner.with_header(name, value)))
            }
            Reply::Cut(keep, inner) => Reply::Cut(keep, Box::new(inner.with_header(name, value))),
            other @ (Reply::Drop | Reply::DropAfterReading) => other,
        }
    }

    /// This reply, after waiting `delay`: [`Reply::Delay`]`(delay, self)`.
    pub fn after(self, delay: Duration) -> Reply {
        Reply::Delay(delay, Box::new(self))
    }

    /// The first `keep` bytes of this answer, then the end of the connection:
    /// [`Reply::Cut`]`(keep, self)`.
    pub fn cut(self, keep: usize) -> Reply {
        Reply::Cut(keep, Box::new(self))
    }
}

/// A reply still being worked out, as an async handler returns it.
pub type ReplyFuture = Pin<Box<dyn Future<Output = Reply> + Send>>;

/// A handler that replies at once.
type ReplyNow = Box<dyn Fn(&Recorded, usize) -> Reply + Send + Sync>;

/// A handler that replies later.
type ReplyLater = Box<dyn Fn(Recorded, usize) -> ReplyFuture + Send + Sync>;

/// The handler: request and its number to reply, at once or later.
enum Handler {
    Now(ReplyNow),
    Later(ReplyLater),
}

/// State shared by the server's tasks and its handle.
struct Shared {
    handler: Handler,
    record: bool,
    count: AtomicUsize,
    requests: Mutex<Vec<Recorded>>,
}

impl Shared {
    /// Counts (and, when recording, stores) a request; returns its number.
    fn arrive(&self, request: &Recorded) -> usize {
        if !self.record {
            return self.count.fetch_add(1, Ordering::SeqCst);
        }
        let mut requests = self.requests.lock().unwrap_or_else(PoisonError::into_inner);
        requests.push(request.clone());
        self.count.fetch_add(1, Ordering::SeqCst)
    }
}

/// A scripted HTTP/1.1 server on `127.0.0.1` (a free port). It stops when dropped:
/// the listener closes and every open connection is cut.
pub struct FakeServer {
    addr: SocketAddr,
    shared: Arc<Shared>,
    task: JoinHandle<()>,
}

impl fmt::Debug for FakeServer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("FakeServer")
            .field("addr", &self.addr)
            .field("request_count", &self.request_count())
            .finish_non_exhaustive()
    }
}

impl FakeServer {
    /// Starts a server answering every request with `handler(request, n)`, `n`
    /// being the request's number (0-based, across all connections). Must be called
    /// within a Tokio runtime, which then runs the server.
    ///
    /// # Panics
    ///
    /// If no loopback port can be bound.
    pub async fn start(
        handler: impl Fn(&Recorded, usize) -> Reply + Send + Sync + 'static,
    ) -> FakeServer {
        FakeServer::launch(Handler::Now(Box::new(handler)), true).await
    }

    /// Like [`FakeServer::start_unrecorded`], with an async handler: the connection
    /// waits for the reply future (other connections go on meanwhile). The handler
    /// gets its own copy of the request.
    ///
    /// # Panics
    ///
    /// If no loopback port can be bound.
    pub async fn start_async(
        handler: impl Fn(Recorded, usize) -> ReplyFuture + Send + Sync + 'static,
    ) -> FakeServer {
        FakeServer::launch(Handler::Later(Box::new(handler)), false).await
    }

    /// Like [`FakeServer::start`], but keeps no copy of the requests
    /// ([`FakeServer::requests`] stays empty; they are still counted), so a long
    /// benchmark does not accumulate them.
    ///
    /// # Panics
    ///
    /// If no loopback port can be bound.
    pub async fn start_unrecorded(
        handler: impl Fn(&Recorded, usize) -> Reply + Send + Sync + 'static,
    ) -> FakeServer {
        FakeServer::launch(Handler::Now(Box::new(handler)), false).await
    }

    async fn launch(handler: Handler, record: bool) -> FakeServer {
        let listener = TcpListener::bind(("127.0.0.1", 0))
            .await
            .expect("FakeServer: cannot bind a loopback port");
        let addr = listener
            .local_addr()
            .expect("FakeServer: the bound listener has no address");
        let shared = Arc::new(Shared {
            handler,
            record,
            count: AtomicUsize::new(0),
            requests: Mutex::new(Vec::new()),
        });
        let task = tokio::spawn(accept_loop(listener, Arc::clone(&shared)));
        FakeServer { addr, shared, task }
    }

    /// The account URL to give the remote engine:
    /// `http://127.0.0.1:<port>/devstoreaccount1`.
    pub fn url(&self) -> String {
        format!("http://{}/{ACCOUNT}", self.addr)
    }

    /// The server's socket address.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// Every request received so far, in the order of their numbers.
    pub fn requests(&self) -> Vec<Recorded> {
        self.shared
            .requests
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    /// How many complete requests have been received so far.
    pub fn request_count(&self) -> usize {
        self.shared.count.load(Ordering::SeqCst)
    }
}

impl Drop for FakeServer {
    fn drop(&mut self) {
        // Cancelling the accept loop drops its listener and its `JoinSet`, which
        // aborts every connection task.
        self.task.abort();
    }
}

async fn accept_loop(listener: TcpListener, shared: Arc<Shared>) {
    let mut connections = JoinSet::new();
    loop {
        tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok((stream, _)) => {
                    connections.spawn(serve(stream, Arc::clone(&shared)));
                }
                // Out of descriptors or similar: back off instead of spinning.
                Err(_) => tokio::time::sleep(Duration::from_millis(5)).await,
            },
            Some(_) = connections.join_next(), if !connections.is_empty() => {}
        }
    }
}

/// Why reading a request stopped.
enum Stop {
    /// The peer closed or broke the connection (mid-request or not).
    Closed,
    /// The input is not an acceptable request; answer 400 and close.
    Bad(&'static str),
}

/// A parsed request and how the connection continues after it.
struct Incoming {
    request: Recorded,
    keep_alive: bool,
}

/// Serves one connection until it closes, a reply drops it or input is malformed.
async fn serve(mut stream: TcpStream, shared: Arc<Shared>) {
    let _ = stream.set_nodelay(true);
    let mut input = Vec::with_capacity(8 * 1024);
    let mut output = Vec::with_capacity(8 * 1024);
    loop {
        let incoming = match read_request(&mut stream, &mut input).await {
            Ok(Some(incoming)) => incoming,
            Ok(None) | Err(Stop::Closed) => return,
            Err(Stop::Bad(reason)) => {
                output.clear();
                let _ = write!(
                    output,
                    "HTTP/1.1 400 Bad Request\r\ncontent-type: text/plain\r\n\
                     content-length: {}\r\nconnection: close\r\n\r\n{reason}",
                    reason.len()
                );
                let _ = stream.write_all(&output).await;
                let _ = stream.shutdown().await;
                linger(&mut stream, &mut input).await;
                return;
            }
        };
        let number = shared.arrive(&incoming.request);
        let head_only = incoming.request.method.eq_ignore_ascii_case("HEAD");
        let mut reply = match &shared.handler {
            Handler::Now(handler) => handler(&incoming.request, number),
            Handler::Later(handler) => handler(incoming.request, number).await,
        };
        loop {
            match reply {
                Reply::Delay(delay, inner) => {
                    tokio::time::sleep(delay).await;
                    reply = *inner;
                }
                Reply::Drop => {
                    let _ = stream.set_zero_linger();
                    return;
                }
                Reply::DropAfterReading => {
                    let _ = stream.shutdown().await;
                    return;
                }
                Reply::Cut(keep, inner) => {
                    if let Reply::Respond {
                        status,
                        headers,
                        body,
                    } = *inner
                    {
                        encode_response(&mut output, status, &headers, &body, head_only, true);
                        let sent = &output[..keep.min(output.len())];
                        let _ = stream.write_all(sent).await;
                    }
                    let _ = stream.shutdown().await;
                    return;
                }
                Reply::Respond {
                    status,
                    headers,
                    body,
                } => {
                    let close = encode_response(
                        &mut output,
                        status,
                        &headers,
                        &body,
                        head_only,
                        !incoming.keep_alive,
                    );
                    if stream.write_all(&output).await.is_err() {
                        return;
                    }
                    if close {
                        let _ = stream.shutdown().await;
                        return;
                    }
                    break;
                }
            }
        }
    }
}

/// Reads one request from `stream`, buffering in `input` (which keeps any bytes of
/// the next, pipelined request). `Ok(None)` on a clean close between requests.
async fn read_request(
    stream: &mut TcpStream,
    input: &mut Vec<u8>,
) -> Result<Option<Incoming>, Stop> {
    let mut scanned = 0;
    let (head_len, body_start) = loop {
        // Empty lines before a request line are ignored (RFC 9112 §2.2).
        let blank = input
            .iter()
            .take_while(|b| matches!(b, b'\r' | b'\n'))
            .count();
        if blank > 0 {
            input.drain(..blank);
            scanned = 0;
        }
        let found = find_head_end(input, scanned);
        // Without an end yet, everything buffered is head.
        if found.map_or(input.len(), |(head_len, _)| head_len) > MAX_HEAD {
            return Err(Stop::Bad("request head too large"));
        }
        if let Some(found) = found {
            break found;
        }
        scanned = input.len().saturating_sub(3);
        if fill(stream, input).await? == 0 {
            return if input.is_empty() {
                Ok(None)
            } else {
                Err(Stop::Closed)
            };
        }
    };
    let head = parse_head(&input[..head_len])?;
    let needed = body_start + head.content_length;
    if head.expect_continue && head.content_length > 0 && input.len() < needed {
        stream
            .write_all(b"HTTP/1.1 100 Continue\r\n\r\n")
            .await
            .map_err(|_| Stop::Closed)?;
    }
    while input.len() < needed {
        if fill(stream, input).await? == 0 {
            return Err(Stop::Closed);
        }
    }
    let body = input[body_start..needed].to_vec();
    input.drain(..needed);
    Ok(Some(Incoming {
        request: Recorded {
            method: head.method,
            path_and_query: head.target,
            headers: head.headers,
            body,
        },
        keep_alive: head.keep_alive,
    }))
}

/// Reads and discards what the client still sends (for a short while), so that
/// closing does not reset the connection before the client has read the answer.
async fn linger(stream: &mut TcpStream, input: &mut Vec<u8>) {
    let drain = async {
        let mut total = 0;
        while total < MAX_HEAD * 16 {
            input.clear();
            match fill(stream, input).await {
                Ok(0) | Err(_) => return,
                Ok(n) => total += n,
            }
        }
    };
    let _ = tokio::time::timeout(Duration::from_millis(200), drain).await;
}

/// Reads more bytes into `input`; the count read, 0 at end of stream.
async fn fill(stream: &mut TcpStream, input: &mut Vec<u8>) -> Result<usize, Stop> {
    input.reserve(8 * 1024);
    stream.read_buf(input).await.map_err(|_| Stop::Closed)
}

/// The end of the head in `input`, searching from `from`: the head's length without
/// its blank line, and where the body starts. Accepts CRLF and bare LF.
fn find_head_end(input: &[u8], from: usize) -> Option<(usize, usize)> {
    let mut i = from;
    while i < input.len() {
        if input[i] == b'\n' {
            match input.get(i + 1..) {
                Some([b'\n', ..]) => return Some((i + 1, i + 2)),
                Some([b'\r', b'\n', ..]) => return Some((i + 1, i + 3)),
                _ => {}
            }
        }
        i += 1;
    }
    None
}

/// A parsed request head.
struct Head {
    method: String,
    target: String,
    headers: Vec<(String, String)>,
    content_length: usize,
    keep_alive: bool,
    expect_continue: bool,
}

/// Parses the request line and headers (`head` ends with the last header's line
/// break).
fn parse_head(head: &[u8]) -> Result<Head, Stop> {
    let mut lines = head
        .split(|&b| b == b'\n')
        .map(|line| line.strip_suffix(b"\r").unwrap_or(line));
    let request_line = lines.next().ok_or(Stop::Bad("missing request line"))?;
    let mut parts = request_line.split(|&b| b == b' ');
    let (Some(method), Some(target), Some(version), None) =
        (parts.next(), parts.next(), parts.next(), parts.next())
    else {
        return Err(Stop::Bad("malformed request line"));
    };
    if method.is_empty() || !method.iter().all(|b| is_token_byte(*b)) {
        return Err(Stop::Bad("malformed method"));
    }
    if target.is_empty() || !target.iter().all(|b| (0x21..=0x7e).contains(b)) {
        return Err(Stop::Bad("malformed request target"));
    }
    let http10 = match version {
        b"HTTP/1.1" => false,
        b"HTTP/1.0" => true,
        _ => return Err(Stop::Bad("unsupported HTTP version")),
    };
    let mut headers = Vec::new();
    let mut content_length: Option<usize> = None;
    let mut connection_close = http10;
    let mut expect_continue = false;
    for line in lines.filter(|line| !line.is_empty()) {
        let colon = line
            .iter()
            .position(|&b| b == b':')
            .ok_or(Stop::Bad("header line without a colon"))?;
        let name = &line[..colon];
        if name.is_empty() || !name.iter().all(|b| is_token_byte(*b)) {
            return Err(Stop::Bad("malformed header name"));
        }
        let name = String::from_utf8_lossy(name).into_owned();
        let value = String::from_utf8_lossy(line[colon + 1..].trim_ascii()).into_owned();
        if name.eq_ignore_ascii_case("content-length") {
            let length = parse_length(&value)?;
            if content_length.is_some_and(|earlier| earlier != length) {
                return Err(Stop::Bad("conflicting Content-Length headers"));
            }
            content_length = Some(length);
        } else if name.eq_ignore_ascii_case("transfer-encoding") {
            return Err(Stop::Bad("request bodies must use Content-Length"));
        } else if name.eq_ignore_ascii_case("connection") {
            for option in value.split(',').map(str::trim) {
                if option.eq_ignore_ascii_case("close") {
                    connection_close = true;
                } else if option.eq_ignore_ascii_case("keep-alive") {
                    connection_close = false;
                }
            }
        } else if name.eq_ignore_ascii_case("expect") {
            expect_continue = value.eq_ignore_ascii_case("100-continue");
        }
        headers.push((name, value));
    }
    Ok(Head {
        method: String::from_utf8_lossy(method).into_owned(),
        target: String::from_utf8_lossy(target).into_owned(),
        headers,
        content_length: content_length.unwrap_or(0),
        keep_alive: !connection_close,
        expect_continue,
    })
}

/// A `Content-Length` value: ASCII digits, at most [`MAX_BODY`].
fn parse_length(value: &str) -> Result<usize, Stop> {
    if value.is_empty() || !value.bytes().all(|b| b.is_ascii_digit()) {
        return Err(Stop::Bad("malformed Content-Length"));
    }
    match value.parse::<usize>() {
        Ok(length) if length <= MAX_BODY => Ok(length),
        _ => Err(Stop::Bad("request body too large")),
    }
}

/// A `tchar` of RFC 9110 (method and header-name characters).
fn is_token_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b)
}

/// Writes a response into `output` (cleared first); returns whether the connection
/// closes after it (`close` requested, or a `Connection: close` header).
fn encode_response(
    output: &mut Vec<u8>,
    status: u16,
    headers: &[(String, String)],
    body: &[u8],
    head_only: bool,
    close: bool,
) -> bool {
    output.clear();
    // Clients ignore the reason phrase; one word keeps the status line valid.
    let _ = write!(output, "HTTP/1.1 {status} Fake\r\n");
    let mut has_length = false;
    let mut close = close;
    for (name, value) in headers {
        has_length |= name.eq_ignore_ascii_case("content-length");
        if name.eq_ignore_ascii_case("connection") && value.to_ascii_lowercase().contains("close") {
            close = true;
        }
        output.extend_from_slice(name.as_bytes());
        output.extend_from_slice(b": ");
        output.extend_from_slice(value.as_bytes());
        output.extend_from_slice(b"\r\n");
    }
    let bodiless = (100..200).contains(&status) || status == 204 || status == 304;
    if !has_length && !bodiless {
        let _ = write!(output, "content-length: {}\r\n", body.len());
    }
    let scripted_close = headers
        .iter()
        .any(|(name, _)| name.eq_ignore_ascii_case("connection"));
    if close && !scripted_close {
        output.extend_from_slice(b"connection: close\r\n");
    }
    output.extend_from_slice(b"\r\n");
    if !bodiless && !head_only {
        output.extend_from_slice(body);
    }
    close
}

#[cfg(test)]
mod tests;
