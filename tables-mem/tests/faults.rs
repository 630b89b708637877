//! Fault injection on the mem engine.

// Test code: a panic is a test failure.
#![allow(clippy::unwrap_used)]

use std::time::Duration;

use tables_core::{DynamicEntity, Engine, EntityKey, ErrorKind, QuerySpec, WriteOp};
use tables_mem::{CallKind, Fault, MemEngine};

const T: &str = "Faulty";

async fn engine() -> MemEngine {
    let engine = MemEngine::new();
    engine.create_table(T).await.unwrap();
    engine
}

fn insert(rk: &str) -> WriteOp {
    WriteOp::Insert(DynamicEntity::new("p", rk))
}

async fn exists(engine: &MemEngine, rk: &str) -> bool {
    engine
        .get_entity(T, &EntityKey::new("p", rk), None)
        .await
        .unwrap()
        .is_some()
}

#[tokio::test]
async fn the_nth_call_of_a_kind_fails_and_changes_nothing() {
    let engine = engine().await;
    engine
        .faults()
        .inject(Fault::fail(ErrorKind::Server).on(CallKind::Write).nth(3));
    engine.write(T, &insert("1")).await.unwrap();
    // Calls of other kinds do not count towards the nth write.
    assert!(!exists(&engine, "x").await);
    engine.write(T, &insert("2")).await.unwrap();
    let err = engine.write(T, &insert("3")).await.unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Server);
    assert_eq!(err.status(), Some(500));
    assert_eq!(err.service_code(), Some("InternalError"));
    assert!(err.is_transient());
    assert!(!exists(&engine, "3").await, "a failed call writes nothing");
    engine.write(T, &insert("3")).await.unwrap();
    assert_eq!(engine.faults().fired(), 1);
    assert_eq!(engine.faults().pending(), 0, "an nth fault fires once");
    assert_eq!(engine.faults().calls_of(CallKind::Write), 4);
}

#[tokio::test]
async fn times_fails_consecutive_calls_then_lets_them_through() {
    let engine = engine().await;
    engine.faults().inject(
        Fault::fail(ErrorKind::Throttled)
            .on(CallKind::Query)
            .times(2),
    );
    for _ in 0..2 {
        let err = engine.query(T, &QuerySpec::new(), None).await.unwrap_err();
        assert_eq!(err.kind(), ErrorKind::Throttled);
        assert_eq!(err.service_code(), Some("ServerBusy"));
    }
    engine.query(T, &QuerySpec::new(), None).await.unwrap();
    assert_eq!(engine.faults().fired(), 2);
}

#[tokio::test]
async fn a_fault_without_kind_or_count_fails_everything_until_cleared() {
    let engine = engine().await;
    engine.faults().inject(Fault::fail(ErrorKind::Transport));
    assert_eq!(
        engine.create_table("Other").await.unwrap_err().kind(),
        ErrorKind::Transport
    );
    assert_eq!(
        engine
            .submit_batch(T, &[insert("1")])
            .await
            .unwrap_err()
            .kind(),
        ErrorKind::Transport
    );
    assert_eq!(
        engine
            .get_entity(T, &EntityKey::new("p", "1"), None)
            .await
            .unwrap_err()
            .kind(),
        ErrorKind::Transport
    );
    engine.faults().clear();
    assert_eq!(engine.faults().pending(), 0);
    assert!(
        !exists(&engine, "1").await,
        "the failed batch wrote nothing"
    );
    engine.create_table("Other").await.unwrap();
}

#[tokio::test]
async fn fail_after_applying_reports_an_error_for_a_write_that_happened() {
    let engine = engine().await;
    engine.faults().inject(
        Fault::fail_after_applying(ErrorKind::Timeout)
            .on(CallKind::Write)
            .on(CallKind::Batch)
            .nth(2),
    );
    engine.write(T, &insert("1")).await.unwrap();
    let err = engine.submit_batch(T, &[insert("2")]).await.unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Timeout);
    assert!(err.may_have_applied(), "a lost answer says so: {err:?}");
    assert!(exists(&engine, "2").await, "the batch was applied");
    // A retry of the lost insert now meets the applied row.
    let err = engine.write(T, &insert("2")).await.unwrap_err();
    assert_eq!(err.kind(), ErrorKind::EntityAlreadyExists);
}

#[tokio::test]
async fn a_call_that_fails_on_its_own_keeps_its_own_error() {
    let engine = engine().await;
    engine.write(T, &insert("1")).await.unwrap();
    engine
        .faults()
        .inject(Fault::fail_after_applying(ErrorKind::Timeout).on(CallKind::Write));
    let err = engine.write(T, &insert("1")).await.unwrap_err();
    assert_eq!(err.kind(), ErrorKind::EntityAlreadyExists);
    assert!(!err.may_have_applied(), "a refused write is not marked");
}

// Paused time: the delay elapses only once every other task is idle, so the
// ordering below is deterministic.
#[tokio::test(start_paused = true)]
async fn delays_hold_no_lock() {
    let engine = engine().await;
    engine.write(T, &insert("1")).await.unwrap();
    engine.faults().inject(
        Fault::delay(Duration::from_secs(3600))
            .on(CallKind::Write)
            .nth(1),
    );
    let slow = {
        let engine = engine.clone();
        tokio::spawn(async move { engine.write(T, &insert("2")).await })
    };
    tokio::task::yield_now().await;
    // While the delayed write waits, other calls (including writes) proceed.
    assert!(exists(&engine, "1").await);
    engine.write(T, &insert("3")).await.unwrap();
    assert!(!slow.is_finished());
    assert!(
        !exists(&engine, "2").await,
        "the delayed write has not happened yet"
    );
    slow.await.unwrap().unwrap();
    assert!(exists(&engine, "2").await);
    assert_eq!(engine.faults().fired(), 1);
}

#[tokio::test]
async fn counters_count_every_call_by_kind() {
    let engine = engine().await;
    engine.query(T, &QuerySpec::new(), None).await.unwrap();
    engine.query(T, &QuerySpec::new(), None).await.unwrap();
    let _ = engine.write(T, &insert("bad/key")).await;
    engine.list_tables(&Default::default()).await.unwrap();
    let faults = engine.faults();
    assert_eq!(faults.calls_of(CallKind::CreateTable), 1);
    assert_eq!(faults.calls_of(CallKind::Query), 2);
    assert_eq!(faults.calls_of(CallKind::Write), 1);
    assert_eq!(faults.calls_of(CallKind::ListTables), 1);
    assert_eq!(faults.calls(), 5);
    assert_eq!(faults.fired(), 0);
}

#[tokio::test]
async fn fail_in_doubt_writes_nothing_but_says_it_may_have() {
    let engine = engine().await;
    engine.faults().inject(
        Fault::fail_in_doubt(ErrorKind::Timeout)
            .on(CallKind::Write)
            .nth(1),
    );
    let err = engine.write(T, &insert("1")).await.unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Timeout);
    assert!(err.may_have_applied(), "{err:?}");
    assert!(!exists(&engine, "1").await, "nothing was applied");
}
