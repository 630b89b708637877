//! What the remote engine costs on the client, next to a bare HTTP loop.
//!
//! # What it measures
//!
//! **`cpu/*` (the acceptance figure):** client CPU time per operation, read from the
//! bench thread's CPU clock (`CLOCK_THREAD_CPUTIME_ID`, through `rustix`, since the
//! workspace forbids `unsafe`). The loopback [`FakeServer`] runs on its own tokio
//! runtime (one worker thread), so its work is not counted; the client runs on a
//! `current_thread` runtime driven from the bench thread, so everything the client
//! does (reqwest and hyper's connection task, signing, URL and header building, JSON
//! encoding and decoding, the tracing span) is. Pairs:
//!
//! - `get/engine`: `RemoteEngine::get_entity` of a realistic entity (ten properties
//!   of every Edm type, `odata.metadata`, `odata.etag`, `Timestamp`, as Azure sends
//!   it with minimal metadata; docs/protocol.md#entities) answered 200 with an `ETag` header,
//!   decoded into a `DynamicEntity`.
//!   `get/raw_reqwest`: the same GET with reqwest alone: the URL parsed once, the
//!   headers built once (`x-ms-version`, `x-ms-date`, `Accept`, a fixed
//!   `Authorization`), then send, read the body, and
//!   `serde_json::from_slice::<serde_json::Value>` on it. The raw loop parses the
//!   body, because a loop that does not would compare unlike work: the engine must
//!   turn the body into something a caller can use.
//! - `insert/engine`: `Engine::write` of `WriteOp::Insert` (a POST, answered 204 +
//!   `ETag`; the fake accepts every insert), `upsert_replace/engine`:
//!   `WriteOp::UpsertReplace` (a PUT to the entity URL, answered 204 + `ETag`).
//!   The op is built once: cloning the caller's entity is not the engine's cost.
//!   `insert/raw_reqwest` and `upsert_replace/raw_reqwest`: the same method and URL
//!   with precomputed headers (plus `Content-Type`, and `Prefer` for the insert),
//!   reading the 204. The body is the same entity JSON, held as a
//!   `serde_json::Value` built once and serialized with `serde_json::to_vec` for
//!   each request: the write-side mirror of the raw GET's parse, since a program
//!   sending entities has to turn each one into bytes.
//!
//! Both sides use a reqwest client built like the engine's own (connect timeout,
//! `TCP_NODELAY`, pool idle timeout) and reuse one keep-alive connection. No tracing
//! subscriber is installed, so the engine's span costs what it costs in a program
//! that does not collect spans. What the engine does beyond the raw loop (signing
//! with HMAC-SHA256, formatting the date, a client request id, the per-request
//! timeout, building the URL and headers, decoding into typed values) is exactly the
//! overhead under test; the target is at most 1.2 times the raw loop's CPU.
//!
//! **`wall/*`:** the same pairs timed by the wall clock, for reference (these include
//! the server's time and the loopback round trip).
//!
//! **`azurite/*`:** engine throughput against a real Azurite, at concurrency 1 and 16
//! (`buffer_unordered`) on a multi-thread runtime: `insert/c{1,16}` inserts
//! [`AZURITE_BATCH`] entities with fresh keys per iteration, `get/c{1,16}` reads as
//! many existing entities. Only when `TABLES_TEST_AZURITE_URL` is set; otherwise the
//! run says it skipped them.
//!
//! **Summary.** At the end the run prints one line per pair: engine ns/op, raw
//! ns/op and their ratio, first as the medians of criterion's samples (every call
//! criterion made, warm-up included), then from an interleaved measurement by the
//! thread CPU clock: 40 rounds, each timing a block of 400 engine operations and a
//! block of 400 raw ones (alternating which goes first), reporting the median and
//! quartiles of the per-round ratios. Load from other processes that drifts during
//! the run weighs on both sides of a round alike, so this ratio is the acceptance
//! figure; criterion's separate runs of each side are minutes apart.
//!
//! # Running it
//!
//! ```text
//! cargo bench -p tables-tests --bench remote_overhead
//! cargo bench -p tables-tests --bench remote_overhead -- --warm-up-time 2 --measurement-time 5
//! ```
//!
//! With Azurite, started the way `scripts/test.sh` does it:
//!
//! ```text
//! (cd tools/azurite && npm ci)
//! tools/azurite/node_modules/.bin/azurite-table --inMemoryPersistence --disableTelemetry \
//!     --tableHost 127.0.0.1 --tablePort 10002 &
//! export TABLES_TEST_AZURITE_URL=http://127.0.0.1:10002/devstoreaccount1
//! cargo bench -p tables-tests --bench remote_overhead
//! ```
//!
//! `cargo test --all-targets` runs every benchmark once, as a smoke test: each setup
//! checks that the engine and the raw loop got the answers they should.

#![allow(clippy::print_stdout)] // a benchmark reports on stdout

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::future::Future;
use std::hint::black_box;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use criterion::{BenchmarkGroup, Criterion, Throughput};
use futures::StreamExt;
use reqwest::header::{HeaderMap, HeaderName, HeaderValue};
use reqwest::Url;
use tables_client::remote::{AccountKey, Credential, RemoteEngine};
use tables_core::{odata, DateTime, DynamicEntity, ETag, Engine, EntityKey, Value, WriteOp};
use tables_tests::azurite::{DEV_ACCOUNT, DEV_KEY, URL_VAR};
use tables_tests::fake_server::{FakeServer, Recorded, Reply};
use tokio::runtime::{Builder, Runtime};

/// The table every fake request names.
const TABLE: &str = "benchtable";
/// The fixed write time of the fake's entity.
const TIMESTAMP: &str = "2026-11-21T22:27:39.1328500Z";
/// Its ETag, as Azure sends it.
const ETAG: &str = "W/\"datetime'2026-11-21T22%3A27%3A39.1328500Z'\"";
/// The account URL the fake's `odata.metadata` names (clients ignore it; it is there
/// so the body has the length and shape of a real one).
const METADATA_BASE: &str = "http://127.0.0.1:10002/devstoreaccount1";
/// Entities per iteration of the Azurite throughput benchmarks (and entities the
/// point gets read).
const AZURITE_BATCH: u64 = 100;

fn main() {
    let mut criterion = Criterion::default().configure_from_args();
    // `cargo bench` passes --bench; `cargo test` runs each benchmark once.
    let measuring = std::env::args().any(|a| a == "--bench");
    let stats = Stats {
        measuring,
        samples: RefCell::default(),
        paired: RefCell::default(),
    };
    // Checked on a server that records what it receives, measured on one that
    // only counts (so a long run does not pile up requests).
    Fixture::start(true).check();
    let fixture = Fixture::start(false);
    for clock in [Clock::ThreadCpu, Clock::Wall] {
        let mut group = criterion.benchmark_group(clock.group());
        fixture.bench_pairs(&mut group, clock, &stats);
        group.finish();
    }
    let (rounds, block) = if measuring { (40, 400) } else { (2, 5) };
    for op in Op::ALL {
        if stats.measured_pair(op) {
            let paired = fixture.paired(op, rounds, block);
            stats.paired.borrow_mut().insert(op.name(), paired);
        }
    }
    drop(fixture);
    match std::env::var(URL_VAR) {
        Ok(url) if !url.trim().is_empty() => bench_azurite(&mut criterion, url.trim()),
        _ => println!(
            "azurite/*: skipped: set {URL_VAR} (scripts/test.sh starts Azurite) to measure \
             engine throughput against Azurite at concurrency 1 and 16"
        ),
    }
    criterion.final_summary();
    stats.print_summary();
}

// ---------------------------------------------------------------------------
// Clocks and the per-pair summary

/// What a benchmark's time is.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Clock {
    /// CPU time of the bench thread, which runs the whole client.
    ThreadCpu,
    /// Elapsed time.
    Wall,
}

impl Clock {
    fn group(self) -> &'static str {
        match self {
            Clock::ThreadCpu => "cpu",
            Clock::Wall => "wall",
        }
    }

    fn now(self) -> Duration {
        match self {
            Clock::ThreadCpu => thread_cpu_time(),
            Clock::Wall => wall_epoch().elapsed(),
        }
    }
}

/// The CPU time this thread has used.
#[cfg(unix)]
fn thread_cpu_time() -> Duration {
    let t = rustix::time::clock_gettime(rustix::time::ClockId::ThreadCPUTime);
    let secs = u64::try_from(t.tv_sec).unwrap_or(0);
    let nanos = u32::try_from(t.tv_nsec).unwrap_or(0);
    Duration::new(secs, nanos)
}

/// Without a thread CPU clock, the wall clock (the `cpu/*` figures then include the
/// server's time; the summary says so).
#[cfg(not(unix))]
fn thread_cpu_time() -> Duration {
    wall_epoch().elapsed()
}

fn wall_epoch() -> Instant {
    static EPOCH: std::sync::OnceLock<Instant> = std::sync::OnceLock::new();
    *EPOCH.get_or_init(Instant::now)
}

/// The 25th, 50th and 75th percentiles of some figures.
#[derive(Clone, Copy)]
struct Quantiles {
    p25: f64,
    median: f64,
    p75: f64,
}

fn quantiles(mut values: Vec<f64>) -> Quantiles {
    values.sort_by(f64::total_cmp);
    let at = |q: f64| {
        let last = values.len().saturating_sub(1);
        // Nearest rank: precise enough for a summary line.
        let index = (q * last as f64).round() as usize;
        values.get(index.min(last)).copied().unwrap_or(f64::NAN)
    };
    Quantiles {
        p25: at(0.25),
        median: at(0.5),
        p75: at(0.75),
    }
}

/// What an interleaved engine-versus-raw measurement gave (ns/op and ratios, per
/// round).
struct Paired {
    rounds: usize,
    block: u64,
    engine: Quantiles,
    raw: Quantiles,
    ratio: Quantiles,
}

/// Nanoseconds per operation of every call criterion made, per benchmark id, and
/// the interleaved measurements, per operation.
struct Stats {
    /// Whether this is a measuring run (`--bench`), not `cargo test`'s single pass.
    measuring: bool,
    samples: RefCell<BTreeMap<String, Vec<f64>>>,
    paired: RefCell<BTreeMap<&'static str, Paired>>,
}

impl Stats {
    fn record(&self, id: &str, iters: u64, took: Duration) {
        if iters == 0 {
            return;
        }
        let per_op = took.as_nanos() as f64 / iters as f64;
        self.samples
            .borrow_mut()
            .entry(id.to_owned())
            .or_default()
            .push(per_op);
    }

    fn median(&self, id: &str) -> Option<(f64, usize)> {
        let samples = self.samples.borrow();
        let values = samples.get(id).filter(|v| !v.is_empty())?;
        Some((quantiles(values.clone()).median, values.len()))
    }

    /// Whether criterion measured both sides of `op` by the CPU clock (a filter on
    /// the command line may have left one out).
    fn measured_pair(&self, op: Op) -> bool {
        [Side::Engine, Side::Raw].into_iter().all(|side| {
            let id = format!("{}/{}/{}", Clock::ThreadCpu.group(), op.name(), side.name());
            self.median(&id).is_some()
        })
    }

    fn print_summary(&self) {
        println!();
        println!("remote_overhead summary: client cost per operation, engine vs raw reqwest");
        if !self.measuring {
            println!("  note: a single pass (cargo test); for figures run cargo bench");
        }
        if !cfg!(unix) {
            println!("  note: no thread CPU clock on this platform; cpu/* is wall time");
        }
        println!("  criterion (median of its samples):");
        for clock in [Clock::ThreadCpu, Clock::Wall] {
            for op in Op::ALL {
                let label = format!("{}/{}", clock.group(), op.name());
                let id = |side: Side| format!("{label}/{}", side.name());
                match (self.median(&id(Side::Engine)), self.median(&id(Side::Raw))) {
                    (Some((engine, n)), Some((raw, m))) => println!(
                        "    {label:<20} engine {engine:>8.0} ns/op   raw {raw:>8.0} ns/op   \
                         ratio {:.3}x   [{n}/{m} samples]",
                        engine / raw
                    ),
                    _ => println!("    {label:<20} not measured in this run (filtered out)"),
                }
            }
        }
        let paired = self.paired.borrow();
        if paired.is_empty() {
            return;
        }
        println!(
            "  interleaved, thread CPU (median [p25-p75] over rounds; the acceptance figure):"
        );
        for (op, p) in paired.iter() {
            let verdict = if p.ratio.median <= 1.2 {
                "met"
            } else {
                "NOT met"
            };
            println!(
                "    cpu/{op:<16} engine {:>8.0} ns/op   raw {:>8.0} ns/op   ratio {:.3}x \
                 [{:.3}-{:.3}]   target <= 1.2x: {verdict}   ({} rounds of {} ops each)",
                p.engine.median,
                p.raw.median,
                p.ratio.median,
                p.ratio.p25,
                p.ratio.p75,
                p.rounds,
                p.block
            );
        }
    }
}

/// Runs `op` `iters` times on `rt`, timed by `clock` from inside the runtime.
fn timed<F, Fut>(rt: &Runtime, clock: Clock, iters: u64, mut op: F) -> Duration
where
    F: FnMut() -> Fut,
    Fut: Future<Output = ()>,
{
    rt.block_on(async {
        let start = clock.now();
        for _ in 0..iters {
            op().await;
        }
        clock.now().saturating_sub(start)
    })
}

// ---------------------------------------------------------------------------
// The entity and what the fake server answers

/// Ten properties of mixed types, like a typical business entity.
fn bench_entity(partition_key: &str, row_key: &str) -> DynamicEntity {
    let created = DateTime::from_ymd_hms(2024, 1, 2, 3, 4, 5)
        .and_then(|t| t.with_subsec_ticks(1_234_567))
        .expect("a valid date");
    let id = uuid::Uuid::parse_str("c9da6455-213d-42c9-9a79-3e9149a57833").expect("a valid GUID");
    DynamicEntity::new(partition_key, row_key)
        .with("FirstName", Value::String("Katherine".to_owned()))
        .with("LastName", Value::String("Johnson-Whitfield".to_owned()))
        .with(
            "Email",
            Value::String("katherine.johnson@example.com".to_owned()),
        )
        .with("Age", Value::Int32(47))
        .with("EmployeeNumber", Value::Int64(9_007_199_254_740_993))
        .with("Salary", Value::Double(123_456.75))
        .with("Active", Value::Boolean(true))
        .with("HiredAt", Value::DateTime(created))
        .with("Id", Value::Guid(id))
        .with("Avatar", Value::Binary((0u8..48).collect()))
}

/// The entity as the service returns it: what was written plus the write time and
/// ETag.
fn stored_entity() -> DynamicEntity {
    let mut entity = bench_entity("bench", "row-0001");
    entity.timestamp = Some(TIMESTAMP.parse().expect("a valid timestamp"));
    entity.etag = Some(ETag::new(ETAG));
    entity
}

/// The 200 body of a GET, as Azure writes it with `odata=minimalmetadata`
/// (docs/protocol.md#entities): `odata.metadata`, `odata.etag`, the keys, `Timestamp`, then the
/// properties with their type annotations.
fn get_body() -> Vec<u8> {
    let properties = odata::entity_to_json(&bench_entity("bench", "row-0001"));
    let inner = properties
        .strip_prefix('{')
        .and_then(|p| p.strip_suffix('}'))
        .expect("an entity encodes as a JSON object");
    let etag_json = ETAG.replace('"', "\\\"");
    format!(
        "{{\"odata.metadata\":\"{METADATA_BASE}/$metadata#{TABLE}/@Element\",\
         \"odata.etag\":\"{etag_json}\",{inner},\"Timestamp\":\"{TIMESTAMP}\"}}"
    )
    .into_bytes()
}

/// Response headers shared by every answer, as Azure sends them.
fn common_headers() -> Vec<(String, String)> {
    [
        ("Cache-Control", "no-cache"),
        ("Server", "Windows-Azure-Table/1.0 Microsoft-HTTPAPI/2.0"),
        ("x-ms-request-id", "9f8e0c7a-a002-0035-4b1a-1c2d3e000000"),
        ("x-ms-version", "2019-02-02"),
        ("X-Content-Type-Options", "nosniff"),
        ("Date", "Sat, 21 Nov 2026 22:27:39 GMT"),
        ("ETag", ETAG),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_owned(), v.to_owned()))
    .collect()
}

/// The fake's script: a GET gets the entity, any write gets 204 + ETag.
fn handler() -> impl Fn(&Recorded, usize) -> Reply + Send + Sync + 'static {
    let body = get_body();
    let mut get_headers = common_headers();
    get_headers.push((
        "Content-Type".to_owned(),
        "application/json;odata=minimalmetadata;streaming=true;charset=utf-8".to_owned(),
    ));
    let mut write_headers = common_headers();
    write_headers.push((
        "Preference-Applied".to_owned(),
        "return-no-content".to_owned(),
    ));
    move |request: &Recorded, _| {
        if request.method == "GET" {
            Reply::Respond {
                status: 200,
                headers: get_headers.clone(),
                body: body.clone(),
            }
        } else {
            Reply::Respond {
                status: 204,
                headers: write_headers.clone(),
                body: Vec::new(),
            }
        }
    }
}

// ---------------------------------------------------------------------------
// The loopback fixture: fake server, engine, raw loop

struct Fixture {
    engine: RemoteEngine,
    raw: RawClient,
    insert: WriteOp,
    upsert: WriteOp,
    key: EntityKey,
    /// The client side: one thread, the bench thread.
    rt: Runtime,
    server: FakeServer,
    /// The server side: its own worker thread.
    _server_rt: Runtime,
}

impl Fixture {
    /// A fresh server (recording its requests when `record`), engine and raw client.
    fn start(record: bool) -> Fixture {
        let server_rt = Builder::new_multi_thread()
            .worker_threads(1)
            .thread_name("fake-server")
            .enable_all()
            .build()
            .expect("a server runtime");
        // Started from inside the server runtime: its tasks run on that runtime's
        // worker, never on the bench thread.
        let server = server_rt.block_on(async {
            if record {
                FakeServer::start(handler()).await
            } else {
                FakeServer::start_unrecorded(handler()).await
            }
        });
        let rt = Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("a client runtime");
        let key = AccountKey::new(DEV_ACCOUNT, DEV_KEY).expect("the dev key");
        let engine = RemoteEngine::builder(server.url())
            .credential(Credential::SharedKey(key))
            .build()
            .expect("an engine for the fake server");
        let entity = bench_entity("bench", "row-0001");
        let raw = RawClient::new(&server.url(), &entity);
        Fixture {
            engine,
            raw,
            insert: WriteOp::Insert(entity.clone()),
            upsert: WriteOp::UpsertReplace(entity.clone()),
            key: entity.key(),
            rt,
            server,
            _server_rt: server_rt,
        }
    }

    /// Both sides get the answers they should, and send what they should.
    fn check(&self) {
        self.rt.block_on(async {
            let got = self
                .engine
                .get_entity(TABLE, &self.key, None)
                .await
                .expect("the engine's GET");
            assert_eq!(got, Some(stored_entity()), "the engine decodes the entity");
            let raw = self.raw.get().await;
            assert_eq!(
                raw["Avatar@odata.type"], "Edm.Binary",
                "the raw loop parses the body"
            );
            for op in [&self.insert, &self.upsert] {
                let outcome = self
                    .engine
                    .write(TABLE, op)
                    .await
                    .expect("the engine's write");
                assert_eq!(outcome.etag, Some(ETag::new(ETAG)));
            }
            self.raw.insert().await;
            self.raw.upsert().await;
        });
        let requests = self.server.requests();
        let methods: Vec<&str> = requests.iter().map(|r| r.method.as_str()).collect();
        assert_eq!(methods, ["GET", "GET", "POST", "PUT", "POST", "PUT"]);
        // The engine and the raw loop address the same resources.
        assert_eq!(requests[0].path_and_query, requests[1].path_and_query);
        assert_eq!(requests[2].path_and_query, requests[4].path_and_query);
        assert_eq!(requests[3].path_and_query, requests[5].path_and_query);
        // And write the same entity: the same JSON, the same length (serde_json
        // orders the raw loop's keys differently).
        let json = |body: &[u8]| -> serde_json::Value {
            serde_json::from_slice(body).expect("a JSON body")
        };
        assert_eq!(json(&requests[2].body), json(&requests[4].body));
        assert_eq!(requests[2].body.len(), requests[4].body.len());
    }

    /// One operation, by the engine or by the raw loop.
    async fn once(&self, op: Op, side: Side) {
        match (op, side) {
            (Op::Get, Side::Engine) => {
                let entity = self.engine.get_entity(TABLE, &self.key, None).await;
                black_box(entity.expect("a GET"));
            }
            (Op::Get, Side::Raw) => {
                black_box(self.raw.get().await);
            }
            (Op::Insert, Side::Engine) => {
                let outcome = self.engine.write(TABLE, &self.insert).await;
                black_box(outcome.expect("an insert"));
            }
            (Op::Insert, Side::Raw) => self.raw.insert().await,
            (Op::UpsertReplace, Side::Engine) => {
                let outcome = self.engine.write(TABLE, &self.upsert).await;
                black_box(outcome.expect("an upsert"));
            }
            (Op::UpsertReplace, Side::Raw) => self.raw.upsert().await,
        }
    }

    /// `iters` operations, timed by `clock`.
    fn run(&self, op: Op, side: Side, clock: Clock, iters: u64) -> Duration {
        timed(&self.rt, clock, iters, || self.once(op, side))
    }

    fn bench_pairs(
        &self,
        group: &mut BenchmarkGroup<'_, criterion::measurement::WallTime>,
        clock: Clock,
        stats: &Stats,
    ) {
        for op in Op::ALL {
            for side in [Side::Engine, Side::Raw] {
                let name = format!("{}/{}", op.name(), side.name());
                let id = format!("{}/{name}", clock.group());
                group.bench_function(name, |b| {
                    b.iter_custom(|iters| {
                        let took = self.run(op, side, clock, iters);
                        stats.record(&id, iters, took);
                        took
                    });
                });
            }
        }
    }

    /// The engine and the raw loop in alternating blocks of `block` operations
    /// (which side goes first alternates too), by the thread CPU clock: load that
    /// drifts during the run then weighs on both sides alike. One block of each is
    /// run first and discarded.
    fn paired(&self, op: Op, rounds: usize, block: u64) -> Paired {
        let per_op = |took: Duration| took.as_nanos() as f64 / block as f64;
        self.run(op, Side::Engine, Clock::ThreadCpu, block);
        self.run(op, Side::Raw, Clock::ThreadCpu, block);
        let (mut engine, mut raw, mut ratios) = (Vec::new(), Vec::new(), Vec::new());
        for round in 0..rounds {
            let (e, r) = if round % 2 == 0 {
                let e = self.run(op, Side::Engine, Clock::ThreadCpu, block);
                (e, self.run(op, Side::Raw, Clock::ThreadCpu, block))
            } else {
                let r = self.run(op, Side::Raw, Clock::ThreadCpu, block);
                (self.run(op, Side::Engine, Clock::ThreadCpu, block), r)
            };
            let (e, r) = (per_op(e), per_op(r));
            engine.push(e);
            raw.push(r);
            ratios.push(e / r);
        }
        Paired {
            rounds,
            block,
            engine: quantiles(engine),
            raw: quantiles(raw),
            ratio: quantiles(ratios),
        }
    }
}

/// The operations measured both ways.
#[derive(Clone, Copy)]
enum Op {
    Get,
    Insert,
    UpsertReplace,
}

impl Op {
    const ALL: [Op; 3] = [Op::Get, Op::Insert, Op::UpsertReplace];

    fn name(self) -> &'static str {
        match self {
            Op::Get => "get",
            Op::Insert => "insert",
            Op::UpsertReplace => "upsert_replace",
        }
    }
}

/// Who does the operation.
#[derive(Clone, Copy)]
enum Side {
    Engine,
    Raw,
}

impl Side {
    fn name(self) -> &'static str {
        match self {
            Side::Engine => "engine",
            Side::Raw => "raw_reqwest",
        }
    }
}

/// The baseline: reqwest alone, everything that can be precomputed precomputed.
struct RawClient {
    http: reqwest::Client,
    entity_url: Url,
    insert_url: Url,
    get_headers: HeaderMap,
    write_headers: HeaderMap,
    insert_headers: HeaderMap,
    /// The entity as JSON, built once; each write serializes it, as a program that
    /// sends entities with reqwest alone serializes each one it sends (and as the raw
    /// GET parses each body it reads).
    body: serde_json::Value,
}

impl RawClient {
    fn new(base_url: &str, entity: &DynamicEntity) -> RawClient {
        // As the engine builds its own client (RemoteEngineBuilder::build).
        let http = reqwest::Client::builder()
            .connect_timeout(Duration::from_secs(10))
            .tcp_nodelay(true)
            .pool_idle_timeout(Duration::from_secs(60))
            .build()
            .expect("a reqwest client");
        let entity_path = odata::entity_path(TABLE, &entity.key());
        let entity_url = Url::parse(&format!("{base_url}/{entity_path}")).expect("entity URL");
        let insert_url = Url::parse(&format!("{base_url}/{TABLE}")).expect("insert URL");
        let mut get_headers = HeaderMap::new();
        for (name, value) in [
            ("x-ms-version", "2019-02-02"),
            ("x-ms-date", "Sat, 21 Nov 2026 22:27:39 GMT"),
            ("accept", "application/json;odata=minimalmetadata"),
            (
                "authorization",
                "SharedKey devstoreaccount1:l4ZfSzBPqoTtMhXhA3cqMAQ0ZlGfqtoSY9N0p7Y3kxQ=",
            ),
        ] {
            get_headers.insert(
                HeaderName::from_static(name),
                HeaderValue::from_static(value),
            );
        }
        let mut write_headers = get_headers.clone();
        write_headers.insert(
            reqwest::header::CONTENT_TYPE,
            HeaderValue::from_static("application/json"),
        );
        let mut insert_headers = write_headers.clone();
        insert_headers.insert(
            HeaderName::from_static("prefer"),
            HeaderValue::from_static("return-no-content"),
        );
        let body: serde_json::Value =
            serde_json::from_str(&odata::entity_to_json(entity)).expect("the entity's JSON");
        RawClient {
            http,
            entity_url,
            insert_url,
            get_headers,
            write_headers,
            insert_headers,
            body,
        }
    }

    async fn get(&self) -> serde_json::Value {
        let response = self
            .http
            .get(self.entity_url.clone())
            .headers(self.get_headers.clone())
            .send()
            .await
            .expect("a raw GET");
        assert_eq!(response.status().as_u16(), 200);
        let body = response.bytes().await.expect("the GET body");
        serde_json::from_slice(&body).expect("a JSON entity")
    }

    async fn insert(&self) {
        self.write(
            reqwest::Method::POST,
            &self.insert_url,
            &self.insert_headers,
        )
        .await;
    }

    async fn upsert(&self) {
        self.write(reqwest::Method::PUT, &self.entity_url, &self.write_headers)
            .await;
    }

    async fn write(&self, method: reqwest::Method, url: &Url, headers: &HeaderMap) {
        let response = self
            .http
            .request(method, url.clone())
            .headers(headers.clone())
            .body(serde_json::to_vec(&self.body).expect("JSON"))
            .send()
            .await
            .expect("a raw write");
        assert_eq!(response.status().as_u16(), 204);
        black_box(response.bytes().await.expect("the write's answer"));
    }
}

// ---------------------------------------------------------------------------
// Throughput against Azurite

/// Fresh row keys for the insert benchmarks.
static NEXT_ROW: AtomicU64 = AtomicU64::new(0);

fn bench_azurite(criterion: &mut Criterion, url: &str) {
    let rt = Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("a client runtime");
    let key = AccountKey::new(DEV_ACCOUNT, DEV_KEY).expect("the dev key");
    let engine = RemoteEngine::builder(url)
        .credential(Credential::SharedKey(key))
        .build()
        .expect("an engine for Azurite");
    let table = format!("bench{}", &uuid::Uuid::new_v4().simple().to_string()[..12]);
    rt.block_on(async {
        engine
            .create_table(&table)
            .await
            .unwrap_or_else(|e| panic!("creating {table} on Azurite at {url}: {e}"));
        // The entities the point gets read.
        futures::stream::iter(0..AZURITE_BATCH)
            .map(|i| {
                let op = WriteOp::UpsertReplace(bench_entity("get", &format!("row-{i:06}")));
                let (engine, table) = (&engine, &table);
                async move { engine.write(table, &op).await.expect("a preload write") }
            })
            .buffer_unordered(16)
            .for_each(|_| async {})
            .await;
        let got = engine
            .get_entity(&table, &EntityKey::new("get", "row-000000"), None)
            .await
            .expect("a GET from Azurite");
        assert!(got.is_some(), "the preloaded entity is there");
    });

    let mut group = criterion.benchmark_group("azurite");
    group.sample_size(10);
    group.throughput(Throughput::Elements(AZURITE_BATCH));
    for concurrency in [1usize, 16] {
        group.bench_function(format!("insert/c{concurrency}"), |b| {
            b.iter_custom(|iters| {
                rt.block_on(async {
                    let start = Instant::now();
                    for _ in 0..iters {
                        futures::stream::iter(0..AZURITE_BATCH)
                            .map(|_| {
                                let n = NEXT_ROW.fetch_add(1, Ordering::Relaxed);
                                let op =
                                    WriteOp::Insert(bench_entity("insert", &format!("row-{n:09}")));
                                let (engine, table) = (&engine, &table);
                                async move { engine.write(table, &op).await.expect("an insert") }
                            })
                            .buffer_unordered(concurrency)
                            .for_each(|outcome| {
                                black_box(outcome);
                                async {}
                            })
                            .await;
                    }
                    start.elapsed()
                })
            });
        });
        group.bench_function(format!("get/c{concurrency}"), |b| {
            b.iter_custom(|iters| {
                rt.block_on(async {
                    let start = Instant::now();
                    for _ in 0..iters {
                        futures::stream::iter(0..AZURITE_BATCH)
                            .map(|i| {
                                let key = EntityKey::new("get", format!("row-{i:06}"));
                                let (engine, table) = (&engine, &table);
                                async move {
                                    let got = engine.get_entity(table, &key, None).await;
                                    got.expect("a GET").expect("an existing entity")
                                }
                            })
                            .buffer_unordered(concurrency)
                            .for_each(|entity| {
                                black_box(entity);
                                async {}
                            })
                            .await;
                    }
                    start.elapsed()
                })
            });
        });
    }
    group.finish();
    rt.block_on(async {
        if let Err(e) = engine.delete_table(&table).await {
            println!("could not delete the bench table {table} on Azurite: {e}");
        }
    });
}
