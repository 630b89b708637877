//! The typed layer under transport faults: sixteen concurrent writers drive
//! employees with every kind of index (`tables_tests::typed::Employee`) through a loopback
//! proxy in front of the run's Azurite, and in front of the run's `tables-server`
//! (`tables_tests::fault_proxy`), that loses
//! answers after the write applied, cuts answers, answers 500/503/429 with and
//! without retry hints, and delivers requests after the client gave up on them.
//!
//! Every call runs under its own client request id, so the proxy's delivery log
//! says, per call, how many times the call's write of its entity reached the
//! endpoint and applied. The test then holds each call to its answer:
//!
//! - no call applied its write twice;
//! - a call that returned `Ok` applied it once (`delete_if_exists` → `Ok(false)`:
//!   not at all);
//! - an error not marked [`Error::may_have_applied`] applied nothing.
//!
//! After the writers, `reconcile()` (first still under faults, then without) and
//! `repair_indexes()` run, and the checker reads every row: no orphan, missing,
//! stale or duplicate copy or membership, no intent left.
//!
//! Seeded and bounded: `TABLES_FAULT_OPS` operations per rate (300 unless set, 600
//! under `TABLES_THOROUGH=1`), `TABLES_FAULT_SEED` (1 unless set; the server's runs
//! take the next seed).

#![allow(clippy::unwrap_used)] // tests

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use tables_client::remote::{Credential, RemoteEngine, RetryPolicy};
use tables_client::{
    ClientRequestId, EntityKey, Error, Finding, IfMatch, Key, OnNone, PrefixedEngine, Problem, Row,
    Table, TableServiceClient,
};
use tables_tests::azurite;
use tables_tests::fault_proxy::{Delivery, FaultProxy, TransportFault};
use tables_tests::typed::{check, create_tables, employee, Employee, STAFF};

/// Writers running at once.
const WRITERS: u64 = 16;
/// Employees they share (three departments), so writers race on the same rows.
const EMPLOYEES: u32 = 24;
/// The client's request timeout: a late delivery arrives after it.
const REQUEST_TIMEOUT: Duration = Duration::from_secs(1);

/// A number from the environment, or `default`.
fn env_number(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or(default)
}

fn department(id: u32) -> &'static str {
    ["Sales", "Support", "Legal"][(id % 3) as usize]
}

fn key_of(id: u32) -> Key<Employee> {
    Employee::key(department(id), id).unwrap()
}

/// The typed operations the writers choose from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Op {
    Insert,
    Upsert,
    UpsertMerge,
    ReplaceAny,
    ReplaceOnEtag,
    MergeAny,
    DeleteAny,
    DeleteOnEtag,
    DeleteIfExists,
}

impl Op {
    fn pick(rng: &mut fastrand::Rng) -> Op {
        match rng.u32(0..100) {
            0..=19 => Op::Insert,
            20..=34 => Op::Upsert,
            35..=44 => Op::UpsertMerge,
            45..=54 => Op::ReplaceAny,
            55..=64 => Op::ReplaceOnEtag,
            65..=74 => Op::MergeAny,
            75..=81 => Op::DeleteAny,
            82..=87 => Op::DeleteOnEtag,
            _ => Op::DeleteIfExists,
        }
    }
}

/// What a call returned.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Answer {
    Ok,
    /// `delete_if_exists` found nothing.
    NothingToDelete,
    Failed {
        may_have_applied: bool,
    },
}

/// One typed call and its answer.
#[derive(Debug)]
struct Call {
    id: String,
    op: Op,
    key: EntityKey,
    answer: Answer,
    /// The error's kind, and its message.
    error: Option<(String, String)>,
}

impl Call {
    fn new(id: String, op: Op, key: EntityKey, result: Result<Answer, Error>) -> Call {
        let (answer, error) = match result {
            Ok(answer) => (answer, None),
            Err(e) => (
                Answer::Failed {
                    may_have_applied: e.may_have_applied(),
                },
                Some((format!("{:?}", e.kind()), e.to_string())),
            ),
        };
        Call {
            id,
            op,
            key,
            answer,
            error,
        }
    }
}

/// A version of employee `id`: fresh indexed values, and now and then a badge or
/// an email another employee may hold (a `unique_index` race).
fn version_of(rng: &mut fastrand::Rng, id: u32, version: u32) -> Employee {
    let mut value = employee(department(id), id, version);
    match rng.u32(0..8) {
        0 => value.badge = format!("shared{}", rng.u32(0..3)),
        1 => value.email = format!("shared{}@contoso.com", rng.u32(0..3)),
        _ => {}
    }
    value
}

/// Runs one operation on employee `id` as the call `id`; `None` when an ETag
/// operation found nothing to read.
async fn perform(
    staff: &Table<Employee>,
    rng: &mut fastrand::Rng,
    op: Op,
    id: u32,
    version: u32,
    call_id: &str,
) -> Option<Result<Answer, Error>> {
    let value = version_of(rng, id, version);
    let key = key_of(id);
    let etag = if matches!(op, Op::ReplaceOnEtag | Op::DeleteOnEtag) {
        // The read is a call of its own (reads never write).
        let read = ClientRequestId::new(format!("{call_id}-read")).unwrap();
        match read.scope(staff.get(&key)).await {
            Ok(Some(found)) => Some(found.etag),
            Ok(None) | Err(_) => return None,
        }
    } else {
        None
    };
    let scope = ClientRequestId::new(call_id).unwrap();
    let on_etag = || IfMatch::Etag(etag.clone().unwrap());
    match op {
        Op::Insert => done(scope.scope(staff.insert(&value)).await),
        Op::Upsert => done(scope.scope(staff.upsert(&value)).await),
        Op::UpsertMerge => done(
            scope
                .scope(staff.upsert_merge(&value, OnNone::KeepStored))
                .await,
        ),
        Op::ReplaceAny => done(scope.scope(staff.replace(&value, IfMatch::Any)).await),
        Op::ReplaceOnEtag => done(scope.scope(staff.replace(&value, on_etag())).await),
        Op::MergeAny => done(
            scope
                .scope(staff.merge(&value, OnNone::KeepStored, IfMatch::Any))
                .await,
        ),
        Op::DeleteAny => done(scope.scope(staff.delete(&key, IfMatch::Any)).await),
        Op::DeleteOnEtag => done(scope.scope(staff.delete(&key, on_etag())).await),
        Op::DeleteIfExists => Some(scope.scope(staff.delete_if_exists(&key)).await.map(
            |deleted| {
                if deleted {
                    Answer::Ok
                } else {
                    Answer::NothingToDelete
                }
            },
        )),
    }
}

/// A write's result as an [`Answer`].
fn done<T>(result: Result<T, Error>) -> Option<Result<Answer, Error>> {
    Some(result.map(|_| Answer::Ok))
}

/// How often each call's write of its entity applied, by client request id.
fn applied_writes(deliveries: &[Delivery], table: &str, calls: &[Call]) -> Vec<usize> {
    let mut by_id: BTreeMap<&str, Vec<&Delivery>> = BTreeMap::new();
    for delivery in deliveries {
        if let Some(id) = &delivery.client_request_id {
            by_id.entry(id.as_str()).or_default().push(delivery);
        }
    }
    calls
        .iter()
        .map(|call| {
            by_id.get(call.id.as_str()).map_or(0, |list| {
                list.iter()
                    .filter(|d| d.applied() && d.writes(table, &call.key))
                    .count()
            })
        })
        .collect()
}

/// Whether `index` of [`Employee`] lives outside the primary's partition.
fn is_far_index(index: &str) -> bool {
    Employee::schemas().iter().any(|schema| {
        schema
            .indexes
            .iter()
            .any(|i| i.name == index && i.is_eventually_consistent())
    })
}

/// Runs `ops` operations at fault `rate` and checks every call's answer and the
/// indexes afterwards.
async fn run(url: &str, rate: f64, seed: u64, ops: u64) {
    let started = Instant::now();
    let proxy = FaultProxy::start(url).await;
    proxy.set_late_by(
        REQUEST_TIMEOUT + Duration::from_millis(100),
        2 * REQUEST_TIMEOUT,
    );
    let remote = RemoteEngine::builder(proxy.url())
        .credential(Credential::SharedKey(azurite::dev_key()))
        .retry_policy(
            RetryPolicy::default()
                .with_max_retries(4)
                .with_initial_backoff(Duration::from_millis(10))
                .with_max_backoff(Duration::from_millis(80))
                .with_max_elapsed(Duration::from_secs(30)),
        )
        .request_timeout(REQUEST_TIMEOUT)
        .build()
        .unwrap();
    let engine = Arc::new(PrefixedEngine::unique(remote));
    let table = format!("{}{STAFF}", engine.prefix());
    let service = TableServiceClient::new(Arc::clone(&engine));
    create_tables(&service).await.unwrap();

    proxy.set_rate(seed, rate, &TransportFault::ALL);
    let next_op = Arc::new(AtomicUsize::new(0));
    let calls = Arc::new(Mutex::new(Vec::new()));
    let writers: Vec<_> = (0..WRITERS)
        .map(|writer| {
            let staff = service.table::<Employee>(STAFF);
            let (next_op, calls) = (Arc::clone(&next_op), Arc::clone(&calls));
            tokio::spawn(async move {
                let mut rng = fastrand::Rng::with_seed(seed.wrapping_mul(1000) + writer);
                loop {
                    let n = next_op.fetch_add(1, Ordering::SeqCst) as u64;
                    if n >= ops {
                        break;
                    }
                    let (op, id) = (Op::pick(&mut rng), rng.u32(0..EMPLOYEES));
                    let call_id = format!("w{writer}-{n}");
                    if let Some(result) =
                        perform(&staff, &mut rng, op, id, n as u32, &call_id).await
                    {
                        let call = Call::new(call_id, op, key_of(id).into(), result);
                        calls.lock().unwrap().push(call);
                    }
                }
            })
        })
        .collect();
    for writer in writers {
        writer.await.unwrap();
    }
    let writing = started.elapsed();
    assert!(
        proxy.settle(Duration::from_secs(30)).await,
        "late deliveries still held after 30 s"
    );

    // Reconcile while faults go on (it may fail; it must not damage), then
    // without faults, then repair what no intent records.
    let staff = service.table::<Employee>(STAFF);
    let under_faults = staff.reconcile().await;
    proxy.set_rate(seed, 0.0, &[]);
    let reconciled = staff.reconcile().await.unwrap();
    assert!(reconciled.failures.is_empty(), "{:?}", reconciled.failures);
    let repaired = staff.repair_indexes().run().await.unwrap();
    assert_eq!(
        repaired.unresolved().count(),
        0,
        "repair left problems: {:?}",
        repaired.findings
    );
    check::<Employee>(engine.as_ref(), STAFF).await.unwrap();
    assert!(staff.verify_indexes().run().await.unwrap().is_clean());

    // Every call against the delivery log.
    let calls = std::mem::take(&mut *calls.lock().unwrap());
    let deliveries = proxy.deliveries();
    let applied = applied_writes(&deliveries, &table, &calls);
    let mut violations = Vec::new();
    for (call, &applied) in calls.iter().zip(&applied) {
        let wrong = match call.answer {
            _ if applied > 1 => Some("applied twice"),
            Answer::Ok if applied == 0 => Some("Ok, but nothing applied"),
            Answer::NothingToDelete if applied > 0 => Some("Ok(false), but it deleted"),
            Answer::Failed {
                may_have_applied: false,
            } if applied > 0 => Some("an error not marked may-have-applied, but it applied"),
            _ => None,
        };
        if let Some(wrong) = wrong {
            violations.push(format!(
                "{} {:?} {:?}: {wrong} ({applied} applied deliveries; {:?})",
                call.id, call.op, call.key, call.error
            ));
        }
    }

    // What repair may find after reconcile: only copies in another partition or
    // table whose write landed after its intent was finished (a claim or copy
    // insert delivered late). Anything else is a lost or wrong index row.
    let unexplained: Vec<&Finding> = repaired
        .findings
        .iter()
        .filter(|f| !(f.problem == Problem::OrphanCopy && is_far_index(&f.index)))
        .collect();
    let written_late = repaired
        .findings
        .iter()
        .filter(|f| {
            let table = format!("{}{}", engine.prefix(), f.table);
            deliveries.iter().any(|d| {
                d.fault == Some(TransportFault::Late) && d.applied() && d.writes(&table, &f.key)
            })
        })
        .count();
    if !unexplained.is_empty() || std::env::var("TABLES_FAULT_TRACE").is_ok() {
        trace(&repaired.findings, &calls, &deliveries);
    }

    // The figures.
    let mut faults: BTreeMap<String, usize> = BTreeMap::new();
    for delivery in &deliveries {
        if let Some(fault) = delivery.fault {
            *faults.entry(fault.to_string()).or_default() += 1;
        }
    }
    let count = |f: &dyn Fn(&Call) -> bool| calls.iter().filter(|c| f(c)).count();
    let mut ops_by_kind: BTreeMap<String, usize> = BTreeMap::new();
    for call in &calls {
        *ops_by_kind.entry(format!("{:?}", call.op)).or_default() += 1;
    }
    let mut errors: BTreeMap<String, usize> = BTreeMap::new();
    for call in &calls {
        if let (Answer::Failed { may_have_applied }, Some((kind, _))) = (call.answer, &call.error) {
            let mark = if may_have_applied {
                " (may have applied)"
            } else {
                ""
            };
            *errors.entry(format!("{kind}{mark}")).or_default() += 1;
        }
    }
    let mut problems: BTreeMap<String, usize> = BTreeMap::new();
    for finding in &repaired.findings {
        let problem = format!("{:?} in {}", finding.problem, finding.index);
        *problems.entry(problem).or_default() += 1;
    }
    eprintln!(
        "transport faults at {:.0}% (seed {seed}): {} calls in {:.1?} ({} ok, {} ok(false), \
         {} errors marked may-have-applied, {} errors not marked; ETag operations skipped \
         when the read failed: {}); ops {ops_by_kind:?}; errors {errors:?}; {} requests, {} faults {faults:?}; \
         reconcile under faults: {}; reconcile after: {} intents finished, {} aborted, \
         {} index rows touched; repair: {problems:?} ({written_late} written by a late \
         delivery); violations: {}",
        rate * 100.0,
        calls.len(),
        writing,
        count(&|c| c.answer == Answer::Ok),
        count(&|c| c.answer == Answer::NothingToDelete),
        count(&|c| c.answer == Answer::Failed { may_have_applied: true }),
        count(&|c| c.answer == Answer::Failed { may_have_applied: false }),
        ops as usize - calls.len(),
        deliveries.len(),
        faults.values().sum::<usize>(),
        match &under_faults {
            Ok(report) => format!("ok, {} intents finished", report.intents_finished),
            Err(e) => format!("failed ({:?})", e.kind()),
        },
        reconciled.intents_finished,
        reconciled.intents_aborted,
        reconciled.touched.len(),
        violations.len(),
    );
    assert!(
        unexplained.is_empty(),
        "repair found index rows no late delivery explains: {unexplained:?}"
    );
    assert!(
        violations.is_empty(),
        "{} calls answered wrongly:\n{}",
        violations.len(),
        violations.join("\n")
    );
    // The run must have met every fault, or it proves less than it says.
    if rate > 0.0 && ops >= 300 {
        for fault in TransportFault::ALL {
            assert!(
                faults.contains_key(&fault.to_string()),
                "no request met {fault}: {faults:?}"
            );
        }
    }
    engine.delete_all_tables().await.unwrap();
}

/// Prints, for each entity a repair finding concerns, every call on it and what
/// became of each of its requests.
fn trace(findings: &[Finding], calls: &[Call], deliveries: &[Delivery]) {
    for finding in findings {
        eprintln!("FINDING {finding:?}");
        let Some(entity) = &finding.entity else {
            continue;
        };
        for call in calls.iter().filter(|c| &c.key == entity) {
            eprintln!(
                "  CALL {} {:?} {:?} {:?}",
                call.id, call.op, call.answer, call.error
            );
            let mut own: Vec<_> = deliveries
                .iter()
                .filter(|d| d.client_request_id.as_deref() == Some(call.id.as_str()))
                .collect();
            own.sort_by_key(|d| d.number);
            for d in own {
                let status = d.forwarded.as_ref().and_then(|f| f.status);
                let body = d
                    .forwarded
                    .as_ref()
                    .map(|f| {
                        String::from_utf8_lossy(&f.body)
                            .chars()
                            .take(2000)
                            .collect::<String>()
                    })
                    .unwrap_or_default();
                eprintln!(
                    "    #{} {} {} fault={:?} status={status:?} applied={} {}",
                    d.number,
                    d.method,
                    d.path,
                    d.fault,
                    d.applied(),
                    if d.is_batch() { body } else { String::new() }
                );
            }
        }
    }
}

async fn at_rate(test: &str, rate: f64) {
    let Some(url) = azurite::url_or_skip(test) else {
        return;
    };
    let ops = u64::from(tables_tests::sizes::cases("TABLES_FAULT_OPS", 300, 600));
    let seed = env_number("TABLES_FAULT_SEED", 1);
    run(&url, rate, seed, ops).await;
}

/// The same through the proxy to `tables-server` (the run's, or one in process),
/// with a seed of its own, so the two endpoints meet different fault sequences,
/// and half the operations, so these runs end while Azurite's still go (the test
/// command's time is the sum of its test binaries').
async fn on_the_server_at_rate(rate: f64) {
    let ops = u64::from(tables_tests::sizes::cases("TABLES_FAULT_OPS", 300, 600));
    let seed = env_number("TABLES_FAULT_SEED", 1) + 1;
    run(&tables_tests::server::url(), rate, seed, ops).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn typed_writes_on_the_server_under_ten_percent_transport_faults() {
    on_the_server_at_rate(0.10).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn typed_writes_on_the_server_under_thirty_percent_transport_faults() {
    on_the_server_at_rate(0.30).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn typed_writes_under_ten_percent_transport_faults() {
    at_rate(
        "typed_transport_faults::typed_writes_under_ten_percent_transport_faults",
        0.10,
    )
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn typed_writes_under_thirty_percent_transport_faults() {
    at_rate(
        "typed_transport_faults::typed_writes_under_thirty_percent_transport_faults",
        0.30,
    )
    .await;
}
