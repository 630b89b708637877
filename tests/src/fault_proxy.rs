//! [`FaultProxy`]: a loopback HTTP proxy in front of a real endpoint (the run's
//! Azurite, or a [`FakeServer`]) that breaks the transport the way networks and
//! services do, and logs every request it passed on with what the endpoint made of
//! it.
//!
//! The client under test talks to [`FaultProxy::url`]. Each request either passes
//! through untouched or meets one [`TransportFault`]: chosen at random at a seeded
//! rate ([`FaultProxy::set_rate`]) or scripted for the next requests
//! ([`FaultProxy::script`]). Some faults stop the request before the endpoint (a
//! `503`, a `429`, a `500`), some let it apply and break the answer (lost, cut, or
//! replaced by a `500`), and [`TransportFault::Late`] holds it past the client's
//! timeout and delivers it afterwards, as a slow network may.
//!
//! The [`Delivery`] log is the ground truth a test compares the client's results
//! with: which requests reached the endpoint, under which client request id, and
//! whether each write applied ([`Delivery::applied`]).
//!
//! ```
//! # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
//! use tables_tests::fake_server::{FakeServer, Reply};
//! use tables_tests::fault_proxy::{FaultProxy, TransportFault};
//!
//! let upstream = FakeServer::start(|_, _| Reply::empty(204)).await;
//! let proxy = FaultProxy::start(&upstream.url()).await;
//! proxy.script([Some(TransportFault::LoseAnswer)]);
//!
//! let http = reqwest::Client::new();
//! let url = format!("{}/Tables", proxy.url());
//! assert!(http.delete(&url).send().await.is_err()); // the answer is lost...
//! assert_eq!(upstream.request_count(), 1); // ...after the request arrived
//! assert_eq!(http.delete(&url).send().await.unwrap().status(), 204);
//!
//! let log = proxy.deliveries();
//! assert_eq!(log.len(), 2);
//! assert_eq!(log[0].fault, Some(TransportFault::LoseAnswer));
//! assert!(log[0].applied() && log[1].applied());
//! # });
//! ```
//!
//! Requests are forwarded with their headers (but for the hop-by-hop ones and
//! `Host`), so a SharedKey signature, which covers the path and not the host, stays
//! valid. Answers come back with their status, headers and body.

use std::collections::VecDeque;
use std::fmt;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use tables_core::odata::batch::{parse_batch_request, parse_batch_response};
use tables_core::odata::{decode_entity, entity_path};
use tables_core::EntityKey;

use crate::fake_server::{FakeServer, Recorded, Reply, ReplyFuture};

/// One way the proxy breaks an exchange.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum TransportFault {
    /// Forwarded (the request applies), then the connection is reset: the answer
    /// is lost.
    LoseAnswer,
    /// Forwarded, then only the first half of the answer is sent before the
    /// connection closes.
    CutAnswer,
    /// Not forwarded: `503 ServerBusy`, with `Retry-After: 1` (as Azure Storage
    /// sends it) when `hint`.
    Busy {
        /// Whether the answer says when to retry.
        hint: bool,
    },
    /// Not forwarded: `429 TooManyRequests`, with `x-ms-retry-after-ms` (as the
    /// Cosmos DB Table API sends it) when `hint`.
    Throttled {
        /// Whether the answer says when to retry.
        hint: bool,
    },
    /// Not forwarded: `500 InternalError`.
    FailBefore,
    /// Forwarded (the request applies), then answered `500 OperationTimedOut`
    /// instead of the endpoint's answer.
    FailAfter,
    /// Held past the client's timeout ([`FaultProxy::set_late_by`]), then forwarded:
    /// the request arrives after the client gave up on it.
    Late,
}

impl TransportFault {
    /// Every fault.
    pub const ALL: [TransportFault; 9] = [
        TransportFault::LoseAnswer,
        TransportFault::CutAnswer,
        TransportFault::Busy { hint: true },
        TransportFault::Busy { hint: false },
        TransportFault::Throttled { hint: true },
        TransportFault::Throttled { hint: false },
        TransportFault::FailBefore,
        TransportFault::FailAfter,
        TransportFault::Late,
    ];

    /// Whether the request reaches the endpoint.
    pub fn forwards(self) -> bool {
        matches!(
            self,
            TransportFault::LoseAnswer
                | TransportFault::CutAnswer
                | TransportFault::FailAfter
                | TransportFault::Late
        )
    }
}

impl fmt::Display for TransportFault {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            TransportFault::LoseAnswer => "answer lost",
            TransportFault::CutAnswer => "answer cut",
            TransportFault::Busy { hint: true } => "503 with Retry-After",
            TransportFault::Busy { hint: false } => "503 without hint",
            TransportFault::Throttled { hint: true } => "429 with x-ms-retry-after-ms",
            TransportFault::Throttled { hint: false } => "429 without hint",
            TransportFault::FailBefore => "500 before forwarding",
            TransportFault::FailAfter => "500 after forwarding",
            TransportFault::Late => "delivered late",
        })
    }
}

/// One request the proxy received, and what became of it.
#[derive(Debug, Clone)]
pub struct Delivery {
    /// The request's number (0-based, in arrival order).
    pub number: usize,
    /// Its `x-ms-client-request-id`.
    pub client_request_id: Option<String>,
    /// Its method.
    pub method: String,
    /// Its path (without the query string), as sent.
    pub path: String,
    /// The fault it met, if any.
    pub fault: Option<TransportFault>,
    /// What the endpoint answered, if the request reached it.
    pub forwarded: Option<Forwarded>,
}

/// A request as the endpoint received it, and its answer.
#[derive(Clone)]
pub struct Forwarded {
    /// The request's `Content-Type`.
    pub content_type: String,
    /// The request body.
    pub body: Vec<u8>,
    /// The endpoint's status; `None` if the endpoint could not be reached (then the
    /// request may or may not have applied, and [`Delivery::applied`] says it did).
    pub status: Option<u16>,
    /// The answer's `Content-Type`.
    pub answer_type: String,
    /// The answer's body.
    pub answer: Vec<u8>,
}

impl fmt::Debug for Forwarded {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Forwarded")
            .field("status", &self.status)
            .field("body_len", &self.body.len())
            .field("answer_len", &self.answer.len())
            .finish_non_exhaustive()
    }
}

impl Delivery {
    /// Whether this is a `$batch` request.
    pub fn is_batch(&self) -> bool {
        self.path.ends_with("/$batch")
    }

    /// Whether this request changed data at the endpoint: a request other than
    /// `GET` and `HEAD` that reached it and was answered with success (a batch:
    /// `202` and every part `< 300`). A request whose answer never came from the
    /// endpoint counts as applied, the cautious reading.
    pub fn applied(&self) -> bool {
        let Some(forwarded) = &self.forwarded else {
            return false;
        };
        if self.method == "GET" || self.method == "HEAD" {
            return false;
        }
        let Some(status) = forwarded.status else {
            return true;
        };
        if status >= 300 {
            return false;
        }
        if !self.is_batch() {
            return true;
        }
        let parts = parse_batch_request(&forwarded.content_type, &forwarded.body)
            .map_or(0, |parts| parts.len());
        parse_batch_response(&forwarded.answer_type, &forwarded.answer, parts).is_ok()
    }

    /// Whether this request writes the entity `key` of `table` (the table's full
    /// name): a single write addressing it, or a batch with a part that does. An
    /// insert names its key in its body.
    pub fn writes(&self, table: &str, key: &EntityKey) -> bool {
        let Some(forwarded) = &self.forwarded else {
            return false;
        };
        if self.method == "GET" || self.method == "HEAD" {
            return false;
        }
        let addressed = entity_path(table, key);
        let table_path = format!("/{}", entity_path_table(&addressed));
        let names = |url: &str, body: &[u8]| {
            let path = url.split_once('?').map_or(url, |(path, _)| path);
            path.ends_with(&format!("/{addressed}"))
                || (path.ends_with(&table_path)
                    && decode_entity(body).is_ok_and(|entity| entity.key() == *key))
        };
        if !self.is_batch() {
            return names(&self.path, &forwarded.body);
        }
        parse_batch_request(&forwarded.content_type, &forwarded.body).is_ok_and(|parts| {
            parts
                .iter()
                .any(|part| part.method != "GET" && names(&part.url, &part.body))
        })
    }
}

/// The table part of an entity path (`Table(PartitionKey=...)` to `Table`).
fn entity_path_table(path: &str) -> &str {
    path.split_once("(PartitionKey=")
        .map_or(path, |(table, _)| table)
}

/// How faults are chosen.
struct Plan {
    rng: fastrand::Rng,
    rate: f64,
    kinds: Vec<TransportFault>,
    script: VecDeque<Option<TransportFault>>,
    late_by: (Duration, Duration),
}

impl Plan {
    fn next(&mut self) -> (Option<TransportFault>, Duration) {
        let fault = match self.script.pop_front() {
            Some(scripted) => scripted,
            None if !self.kinds.is_empty() && self.rng.f64() < self.rate => {
                Some(self.kinds[self.rng.usize(..self.kinds.len())])
            }
            None => None,
        };
        let (low, high) = self.late_by;
        let spread = high.saturating_sub(low).as_millis() as u64;
        let late = low + Duration::from_millis(self.rng.u64(0..=spread));
        (fault, late)
    }
}

struct ProxyState {
    upstream: String,
    http: reqwest::Client,
    plan: Mutex<Plan>,
    log: Mutex<Vec<Delivery>>,
    in_flight: AtomicUsize,
}

/// A fault-injecting proxy on `127.0.0.1` (a free port). It stops when dropped,
/// cutting the requests it still holds.
pub struct FaultProxy {
    server: FakeServer,
    state: Arc<ProxyState>,
}

impl fmt::Debug for FaultProxy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("FaultProxy")
            .field("url", &self.url())
            .field("upstream", &self.state.upstream)
            .finish_non_exhaustive()
    }
}

/// Headers that belong to one connection, not to the request or answer.
const HOP_BY_HOP: [&str; 7] = [
    "host",
    "connection",
    "keep-alive",
    "transfer-encoding",
    "content-length",
    "expect",
    "upgrade",
];

impl FaultProxy {
    /// A proxy in front of the account URL `upstream`
    /// (`http://127.0.0.1:<port>/<account>`), passing everything through until
    /// told otherwise. Must be called within a Tokio runtime.
    ///
    /// # Panics
    ///
    /// If `upstream` is not an `http://` URL, or no loopback port can be bound.
    pub async fn start(upstream: &str) -> FaultProxy {
        let rest = upstream
            .strip_prefix("http://")
            .unwrap_or_else(|| panic!("FaultProxy: {upstream:?} is not an http:// URL"));
        let origin = format!("http://{}", rest.split('/').next().unwrap_or(rest));
        let state = Arc::new(ProxyState {
            upstream: origin,
            http: reqwest::Client::builder()
                .timeout(Duration::from_secs(30))
                .build()
                .expect("FaultProxy: cannot build an HTTP client"),
            plan: Mutex::new(Plan {
                rng: fastrand::Rng::with_seed(0),
                rate: 0.0,
                kinds: Vec::new(),
                script: VecDeque::new(),
                late_by: (Duration::from_millis(1500), Duration::from_millis(1500)),
            }),
            log: Mutex::new(Vec::new()),
            in_flight: AtomicUsize::new(0),
        });
        let handler_state = Arc::clone(&state);
        let server = FakeServer::start_async(move |request, number| -> ReplyFuture {
            Box::pin(Arc::clone(&handler_state).handle(request, number))
        })
        .await;
        FaultProxy { server, state }
    }

    /// The account URL to give the client: the proxy's origin and the upstream's
    /// path.
    pub fn url(&self) -> String {
        self.server.url()
    }

    /// From now on, each request meets a fault with probability `rate` (0 to 1),
    /// drawn uniformly from `kinds`, from a generator seeded with `seed`. With many
    /// clients at once, which request meets which fault depends on arrival order.
    pub fn set_rate(&self, seed: u64, rate: f64, kinds: &[TransportFault]) {
        let mut plan = self.plan();
        plan.rng = fastrand::Rng::with_seed(seed);
        plan.rate = rate.clamp(0.0, 1.0);
        plan.kinds = kinds.to_vec();
    }

    /// The next requests meet these faults (`None`: pass through), in order,
    /// before the random rate applies again.
    pub fn script(&self, faults: impl IntoIterator<Item = Option<TransportFault>>) {
        self.plan().script.extend(faults);
    }

    /// How long a [`TransportFault::Late`] request is held before it is forwarded:
    /// uniformly between `low` and `high`. Longer than the client's request timeout,
    /// so the client has given up on it; 1.5 s unless set.
    pub fn set_late_by(&self, low: Duration, high: Duration) {
        self.plan().late_by = (low, high.max(low));
    }

    /// Every request received so far, with what became of it (in the order their
    /// handling ended; [`Delivery::number`] gives the arrival order).
    pub fn deliveries(&self) -> Vec<Delivery> {
        self.state
            .log
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    /// Waits until no request is held or being forwarded (late deliveries
    /// included), for at most `limit`; returns whether it got there.
    pub async fn settle(&self, limit: Duration) -> bool {
        let deadline = tokio::time::Instant::now() + limit;
        while self.state.in_flight.load(Ordering::SeqCst) > 0 {
            if tokio::time::Instant::now() >= deadline {
                return false;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        true
    }

    fn plan(&self) -> std::sync::MutexGuard<'_, Plan> {
        self.state
            .plan
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
    }
}

/// Counts a request in flight for as long as it lives.
struct InFlight<'a>(&'a AtomicUsize);

impl<'a> InFlight<'a> {
    fn enter(counter: &'a AtomicUsize) -> InFlight<'a> {
        counter.fetch_add(1, Ordering::SeqCst);
        InFlight(counter)
    }
}

impl Drop for InFlight<'_> {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::SeqCst);
    }
}

impl ProxyState {
    async fn handle(self: Arc<Self>, request: Recorded, number: usize) -> Reply {
        let _in_flight = InFlight::enter(&self.in_flight);
        let (fault, late_by) = self
            .plan
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .next();
        let mut delivery = Delivery {
            number,
            client_request_id: request.header("x-ms-client-request-id").map(str::to_owned),
            method: request.method.clone(),
            path: request.path().to_owned(),
            fault,
            forwarded: None,
        };
        let reply = match fault {
            Some(TransportFault::Busy { hint }) => {
                let reply = service_error(503, "ServerBusy", "The server is busy.");
                if hint {
                    reply.with_header("Retry-After", "1")
                } else {
                    reply
                }
            }
            Some(TransportFault::Throttled { hint }) => {
                let reply = service_error(429, "TooManyRequests", "The request rate is too high.");
                if hint {
                    reply.with_header("x-ms-retry-after-ms", "20")
                } else {
                    reply
                }
            }
            Some(TransportFault::FailBefore) => service_error(
                500,
                "InternalError",
                "The server encountered an internal error.",
            ),
            Some(TransportFault::Late) => {
                tokio::time::sleep(late_by).await;
                let (forwarded, _) = self.forward(&request).await;
                delivery.forwarded = Some(forwarded);
                Reply::Drop
            }
            None
            | Some(TransportFault::LoseAnswer)
            | Some(TransportFault::CutAnswer)
            | Some(TransportFault::FailAfter) => {
                let (forwarded, answer) = self.forward(&request).await;
                delivery.forwarded = Some(forwarded);
                match fault {
                    Some(TransportFault::LoseAnswer) => Reply::Drop,
                    Some(TransportFault::CutAnswer) => {
                        let whole = encoded_len(&answer);
                        answer.cut(whole / 2)
                    }
                    Some(TransportFault::FailAfter) => service_error(
                        500,
                        "OperationTimedOut",
                        "The operation could not be completed within the permitted time.",
                    ),
                    _ => answer,
                }
            }
        };
        self.log
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push(delivery);
        reply
    }

    /// Sends `request` to the endpoint: what it received and answered, and the
    /// answer to pass back (`502` if the endpoint could not be reached).
    async fn forward(&self, request: &Recorded) -> (Forwarded, Reply) {
        let mut forwarded = Forwarded {
            content_type: request
                .header("content-type")
                .unwrap_or_default()
                .to_owned(),
            body: request.body.clone(),
            status: None,
            answer_type: String::new(),
            answer: Vec::new(),
        };
        let url = format!("{}{}", self.upstream, request.path_and_query);
        let Ok(method) = reqwest::Method::from_bytes(request.method.as_bytes()) else {
            return (forwarded, Reply::empty(400));
        };
        let mut outgoing = self.http.request(method, url).body(request.body.clone());
        for (name, value) in &request.headers {
            if !HOP_BY_HOP.iter().any(|h| name.eq_ignore_ascii_case(h)) {
                outgoing = outgoing.header(name.as_str(), value.as_str());
            }
        }
        let answered = async {
            let response = outgoing.send().await?;
            let status = response.status().as_u16();
            let headers: Vec<(String, String)> = response
                .headers()
                .iter()
                .filter(|(name, _)| !HOP_BY_HOP.contains(&name.as_str()))
                .map(|(name, value)| {
                    (
                        name.as_str().to_owned(),
                        String::from_utf8_lossy(value.as_bytes()).into_owned(),
                    )
                })
                .collect();
            let body = response.bytes().await?.to_vec();
            Ok::<_, reqwest::Error>((status, headers, body))
        };
        match answered.await {
            Ok((status, headers, body)) => {
                forwarded.status = Some(status);
                forwarded.answer_type = headers
                    .iter()
                    .find(|(name, _)| name == "content-type")
                    .map(|(_, value)| value.clone())
                    .unwrap_or_default();
                forwarded.answer.clone_from(&body);
                (
                    forwarded,
                    Reply::Respond {
                        status,
                        headers,
                        body,
                    },
                )
            }
            Err(_) => (forwarded, Reply::empty(502)),
        }
    }
}

/// A service error answer in the Table service's JSON form.
fn service_error(status: u16, code: &str, message: &str) -> Reply {
    let body = format!(
        r#"{{"odata.error":{{"code":"{code}","message":{{"lang":"en-US","value":"{message}"}}}}}}"#
    );
    Reply::json(status, &body).with_header("x-ms-error-code", code)
}

/// Roughly how many bytes an answer takes on the wire (status line, headers and
/// body), to cut it in the middle.
fn encoded_len(reply: &Reply) -> usize {
    match reply {
        Reply::Respond { headers, body, .. } => {
            let head: usize = headers.iter().map(|(n, v)| n.len() + v.len() + 4).sum();
            head + body.len() + 40
        }
        _ => 0,
    }
}
