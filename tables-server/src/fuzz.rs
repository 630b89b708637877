//! Fuzzing the request parsers: random and mutated requests (URL paths and escapes,
//! query strings, headers, entity JSON, `$batch` multipart, ACL and service
//! properties XML, SharedKey and SAS credentials) go through the code the HTTP layer
//! runs (`http::read`, `handle`, the error answer and the CORS headers), and no case
//! may panic or be answered with a 5xx: every client mistake is a 4xx.
//!
//! `TABLES_SERVER_FUZZ_CASES` sets the number of cases (default 20,000) and
//! `TABLES_FUZZ_FIRST` the first seed (default 0); `TABLES_FUZZ_SEED=<n>` replays one
//! case, printing it and its answer; `TABLES_FUZZ_SHOW=<code>` prints the cases
//! refused with that error code (to see what the generator reaches). Each case
//! starts from the same state, so a seed replays alone:
//!
//! ```text
//! TABLES_SERVER_FUZZ_CASES=1000000 cargo test -p tables-server --lib fuzz -- --nocapture
//! ```

mod body;
mod case;
mod names;
mod signing;

use std::collections::HashMap;
use std::net::SocketAddr;
use std::panic::{self, AssertUnwindSafe};
use std::sync::{Arc, OnceLock};
use std::time::Instant;

use bytes::Bytes;
use hyper::header::{HeaderName, HeaderValue};
use tables_core::auth::{
    request_canonical_resource, shared_key_authorization, AccountKey, DEVELOPMENT_ACCOUNT,
    DEVELOPMENT_ACCOUNT_KEY,
};
use tables_core::service::acl::decode_table_acl;
use tables_core::service::properties::decode_service_properties;
use tables_core::{DynamicEntity, Engine, WriteOp};
use tables_mem::{MemEngine, MemOptions};
use tokio::runtime::Runtime;

use crate::account::Account;
use crate::context::{AccountState, State};
use crate::cors;
use crate::faults::Faults;
use crate::handle::handle;
use crate::http::read;
use crate::reply::{Failure, Reply};
use crate::request::Request;

use case::{generate, Auth, Case};

const ACCOUNT: &str = DEVELOPMENT_ACCOUNT;
/// The tables of the starting state (`empty` has no rows).
const TABLES: &str = "fuzz|Other|empty";
const KEYS: [(&str, &str); 5] = [
    ("p1", "r1"),
    ("p1", "r2"),
    ("p2", "r1"),
    ("quo'te", "spa ce"),
    ("", ""),
];
const POLICY: &str = "<SignedIdentifiers><SignedIdentifier><Id>readers</Id><AccessPolicy>\
    <Expiry>2099-01-01T00:00:00Z</Expiry><Permission>r</Permission></AccessPolicy>\
    </SignedIdentifier></SignedIdentifiers>";
const CORS: &str = "<StorageServiceProperties><Cors><CorsRule>\
    <AllowedOrigins>https://app.example</AllowedOrigins><AllowedMethods>GET,PUT,POST,MERGE\
    </AllowedMethods><MaxAgeInSeconds>30</MaxAgeInSeconds><ExposedHeaders>x-ms-*\
    </ExposedHeaders><AllowedHeaders>x-ms-*</AllowedHeaders></CorsRule><CorsRule>\
    <AllowedOrigins>*</AllowedOrigins><AllowedMethods>DELETE</AllowedMethods>\
    <MaxAgeInSeconds>0</MaxAgeInSeconds><ExposedHeaders></ExposedHeaders>\
    <AllowedHeaders>*</AllowedHeaders></CorsRule></Cors></StorageServiceProperties>";

/// SplitMix64: small, fast, and each case is fully determined by its seed.
struct Rng(u64);

impl Rng {
    fn new(seed: u64) -> Rng {
        Rng(seed.wrapping_mul(0x2545_F491_4F6C_DD1D) ^ 0x5DEE_CE66_D1CE_4E5B)
    }

    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// 0 to `n - 1` (`n` > 0).
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }

    fn percent(&mut self, p: usize) -> bool {
        self.below(100) < p
    }

    fn pick<T: Copy>(&mut self, items: &[T]) -> T {
        items[self.below(items.len())]
    }

    /// One of `|`-separated alternatives.
    fn one_of(&mut self, alternatives: &'static str) -> &'static str {
        let count = alternatives.split('|').count();
        let chosen = self.below(count);
        alternatives.split('|').nth(chosen).unwrap_or_default()
    }

    /// Mostly one of the alternatives, sometimes garbage text.
    fn or_garbage(&mut self, alternatives: &'static str) -> String {
        if self.percent(75) {
            self.one_of(alternatives).to_owned()
        } else {
            self.text(8)
        }
    }

    fn bytes(&mut self, max: usize) -> Vec<u8> {
        let len = self.below(max + 1);
        (0..len).map(|_| self.next() as u8).collect()
    }

    /// Text of the characters parsers trip on: quotes, delimiters, escapes,
    /// controls, multi-byte characters.
    fn text(&mut self, max: usize) -> String {
        const CHARS: &str = "aZ0 '\"\\/#?%(),=&+$@.:;<>{}\t\n\0\u{7f}é中🦀\u{fffe}\u{200b}";
        let len = self.below(max + 1);
        let chars: Vec<char> = CHARS.chars().collect();
        (0..len).map(|_| self.pick(&chars)).collect()
    }
}

// ------------------------------------------------------------------ the state

fn dev_key() -> &'static AccountKey {
    static KEY: OnceLock<AccountKey> = OnceLock::new();
    KEY.get_or_init(|| AccountKey::new(ACCOUNT, DEVELOPMENT_ACCOUNT_KEY).unwrap())
}

fn new_runtime() -> Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
}

/// The development account with three tables, rows in two, a stored access policy
/// and CORS rules; two entities a page, so that queries continue.
async fn fresh_state() -> State {
    let engine = MemEngine::with_options(MemOptions::default().with_page_size(2));
    for table in TABLES.split('|') {
        engine.create_table(table).await.unwrap();
    }
    for (i, (pk, rk)) in KEYS.into_iter().enumerate() {
        let entity = DynamicEntity::new(pk, rk)
            .with("Name", format!("n{i}"))
            .with("Age", i as i32)
            .with("Big", 1i64 << 40)
            .with("Ratio", 0.5)
            .with("Flag", i % 2 == 0)
            .with("Data", vec![0u8, 255]);
        engine
            .write("fuzz", &WriteOp::Insert(entity))
            .await
            .unwrap();
    }
    let other = DynamicEntity::new("p1", "r1").with("Name", "o");
    engine
        .write("Other", &WriteOp::Insert(other))
        .await
        .unwrap();
    let account = AccountState::new(Account::development(), engine);
    let policies = decode_table_acl(POLICY.as_bytes()).unwrap();
    account.acls().insert("fuzz".to_owned(), policies);
    let cors = decode_service_properties(CORS.as_bytes()).unwrap();
    account.properties().apply(cors);
    State {
        accounts: HashMap::from([(ACCOUNT.to_owned(), account)]),
        faults: Arc::new(Faults::default()),
        fault_control: false,
        limits: crate::limits::Limits::default(),
        budget: crate::limits::Budget::new(1 << 20),
        tls: None,
    }
}

// ------------------------------------------------------------------ running

/// The hyper request parts of a case, signed as it asks; `None` when hyper would
/// not have read the request line (the method or target is not valid HTTP).
fn parts(case: &Case) -> Option<hyper::http::request::Parts> {
    let builder = hyper::Request::builder()
        .method(case.method.as_str())
        .uri(case.target.as_str());
    let (mut parts, ()) = builder.body(()).ok()?.into_parts();
    for (name, value) in &case.headers {
        // A header hyper would refuse is dropped, as if the client hadn't sent it.
        let name = HeaderName::from_bytes(name.as_bytes());
        if let (Ok(name), Ok(value)) = (name, HeaderValue::from_bytes(value)) {
            parts.headers.append(name, value);
        }
    }
    if case.auth != Auth::None {
        let header = |name: &str| {
            let value = parts.headers.get(name).and_then(|v| v.to_str().ok());
            value.unwrap_or_default()
        };
        let resource = request_canonical_resource(
            ACCOUNT,
            parts.uri.path(),
            parts.uri.query().unwrap_or_default(),
        );
        let date = match header("x-ms-date") {
            "" => header("date"),
            date => date,
        };
        let authorization = shared_key_authorization(
            dev_key(),
            case.auth == Auth::SharedKeyLite,
            parts.method.as_str(),
            header("content-md5"),
            header("content-type"),
            date,
            &resource,
        );
        let value = HeaderValue::from_str(&authorization).ok()?;
        parts.headers.insert("authorization", value);
    }
    Some(parts)
}

/// What is wrong with an answer, if anything: a status outside 1xx to 4xx (a
/// refusal outside 4xx), a 5xx part in a batch answer, or a header `http::respond`
/// could not write (it would answer 500 instead).
fn check(state: &State, request: &Request, outcome: Result<Reply, Failure>) -> Result<(), String> {
    let reply = match outcome {
        Ok(reply) => {
            if !(100..500).contains(&reply.status) {
                return Err(format!("answered {} {:?}", reply.status, reply.headers));
            }
            let multipart = reply
                .headers
                .iter()
                .any(|(n, v)| n == "content-type" && v.starts_with("multipart/"));
            let body = String::from_utf8_lossy(&reply.body);
            if multipart && body.contains("\nHTTP/1.1 5") {
                return Err(format!("a batch part answered 5xx: {body}"));
            }
            reply
        }
        Err(failure) if (400..500).contains(&failure.status) => {
            failure.reply("request-id", request.xml_api())
        }
        Err(failure) => return Err(format!("refused with {failure:?}")),
    };
    let reply = cors::decorate(state, request, reply);
    // Names are typed (checked when built); a value is checked when written.
    for (name, value) in &reply.headers {
        if HeaderValue::from_str(value).is_err() {
            return Err(format!(
                "the answer's header {name}: {value:?} is not valid HTTP"
            ));
        }
    }
    Ok(())
}

/// The status and error code of an answer.
type Answer = (u16, String);

/// Runs one case on `state`: its answer, or `None` when hyper would have refused it
/// before the server saw it.
fn run(
    runtime: &Runtime,
    state: &State,
    case: &Case,
    verbose: bool,
) -> Result<Option<Answer>, String> {
    let Some(parts) = parts(case) else {
        return Ok(None);
    };
    let peer = SocketAddr::new(case.peer, 50_000);
    let request = match read(parts, Bytes::from(case.body.clone()), peer, false) {
        Ok(request) => request,
        Err(failure) if (400..500).contains(&failure.status) => {
            if verbose {
                eprintln!("refused on reading {failure:?}");
            }
            return Ok(Some((failure.status, failure.code)));
        }
        Err(failure) => return Err(format!("read refused with {failure:?}")),
    };
    let outcome = runtime.block_on(handle(state, &request));
    let answer = match &outcome {
        Ok(reply) => (reply.status, String::new()),
        Err(failure) => (failure.status, failure.code.clone()),
    };
    if verbose {
        match &outcome {
            Ok(reply) => eprintln!(
                "answer {} {:?}\n{}",
                reply.status,
                reply.headers,
                String::from_utf8_lossy(&reply.body)
            ),
            Err(failure) => eprintln!("refused {failure:?}"),
        }
    }
    check(state, &request, outcome).map(|()| Some(answer))
}

fn env_number(name: &str) -> Option<u64> {
    let text = std::env::var(name).ok()?;
    let number = text.trim().replace('_', "").parse();
    Some(number.unwrap_or_else(|_| panic!("{name}={text:?} is not a number")))
}

#[test]
fn request_parsers_neither_panic_nor_answer_5xx() {
    let replay = env_number("TABLES_FUZZ_SEED");
    let (first, cases) = match replay {
        Some(seed) => (seed, 1),
        None => (
            env_number("TABLES_FUZZ_FIRST").unwrap_or(0),
            env_number("TABLES_SERVER_FUZZ_CASES").unwrap_or(20_000),
        ),
    };
    let show = std::env::var("TABLES_FUZZ_SHOW").ok();
    let mut runtime = new_runtime();
    let mut state = runtime.block_on(fresh_state());
    let mut failures = Vec::new();
    let mut unread = 0u64;
    let mut answers: HashMap<Answer, u64> = HashMap::new();
    let started = Instant::now();
    let mut ran = 0u64;
    for seed in first..first + cases {
        ran += 1;
        let case = generate(seed);
        if replay.is_some() {
            eprintln!("case {seed}:\n{case:?}");
        }
        let verbose = replay.is_some();
        let outcome =
            panic::catch_unwind(AssertUnwindSafe(|| run(&runtime, &state, &case, verbose)));
        let mut changed = false;
        let failure = match outcome {
            Ok(Ok(Some(answer))) => {
                changed = (200..300).contains(&answer.0);
                if show.as_deref() == Some(answer.1.as_str()) {
                    eprintln!("case {seed} answered {answer:?}:\n{case:?}\n");
                }
                *answers.entry(answer).or_default() += 1;
                None
            }
            Ok(Ok(None)) => {
                unread += 1;
                None
            }
            Ok(Err(what)) => Some(what),
            Err(_) => Some("panicked (the panic message is above)".to_owned()),
        };
        if let Some(what) = failure {
            eprintln!(
                "FUZZ FAILURE, seed {seed} (replay: TABLES_FUZZ_SEED={seed}): {what}\n{case:?}\n"
            );
            failures.push(seed);
            runtime = new_runtime();
            state = runtime.block_on(fresh_state());
            if failures.len() >= 10 {
                break;
            }
        } else if changed && !matches!(case.method.as_str(), "GET" | "HEAD" | "OPTIONS") {
            // The case may have changed the state (a refused one changes nothing):
            // the next starts afresh, so that every case replays alone.
            state = runtime.block_on(fresh_state());
        }
    }
    let elapsed = started.elapsed().as_secs_f64();
    let mut answers: Vec<(Answer, u64)> = answers.into_iter().collect();
    answers.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    let answers: Vec<String> = answers
        .iter()
        .map(|((status, code), n)| format!("{status} {code}: {n}"))
        .collect();
    eprintln!(
        "fuzz: {ran} cases from seed {first} in {elapsed:.1} s ({:.0} cases/s); {unread} \
         not valid HTTP; answers: {}",
        ran as f64 / elapsed.max(1e-9),
        answers.join(", ")
    );
    assert!(failures.is_empty(), "failing seeds: {failures:?}");
}
