//! Writes on the mem engine: what only the mem engine does (its clock, its shared
//! store). The service's write rules (modes, preconditions, ETags, limits) are
//! checked on every engine by the conformance suite (`tests/src/crud.rs`,
//! `write_modes.rs`, `etag.rs`, `limits.rs`).

// Test code: a panic is a test failure.
#![allow(clippy::unwrap_used)]

use tables_core::{DynamicEntity, ETag, Engine, EntityKey, IfMatch, WriteOp, WriteOutcome};
use tables_mem::MemEngine;

const T: &str = "Rules";

async fn engine() -> MemEngine {
    let engine = MemEngine::new();
    engine.create_table(T).await.unwrap();
    engine
}

fn entity(pk: &str, rk: &str) -> DynamicEntity {
    DynamicEntity::new(pk, rk)
}

async fn get(engine: &MemEngine, pk: &str, rk: &str) -> Option<DynamicEntity> {
    engine
        .get_entity(T, &EntityKey::new(pk, rk), None)
        .await
        .unwrap()
}

async fn insert(engine: &MemEngine, e: DynamicEntity) -> WriteOutcome {
    engine.write(T, &WriteOp::Insert(e)).await.unwrap()
}

/// The mem engine's clock: every write gets a Timestamp strictly after the previous
/// one (even within the same 100 ns) and the ETag the service derives from it.
#[tokio::test]
async fn every_write_sets_a_new_timestamp_and_matching_etag() {
    let engine = engine().await;
    let first = insert(&engine, entity("p", "r").with("n", 1)).await;
    let stored = get(&engine, "p", "r").await.unwrap();
    assert_eq!(stored.etag, first.etag);
    assert_eq!(stored.timestamp, first.timestamp);
    let ts = first.timestamp.unwrap();
    assert_eq!(first.etag, Some(ETag::from_timestamp(ts)));

    let mut outcomes = vec![first];
    for op in [
        WriteOp::UpsertReplace(entity("p", "r").with("n", 2)),
        WriteOp::UpsertMerge(entity("p", "r").with("m", 3)),
        WriteOp::Replace {
            entity: entity("p", "r").with("n", 4),
            if_match: IfMatch::Any,
        },
        WriteOp::Merge {
            entity: entity("p", "r").with("n", 5),
            if_match: IfMatch::Any,
        },
    ] {
        let outcome = engine.write(T, &op).await.unwrap();
        let stored = get(&engine, "p", "r").await.unwrap();
        assert_eq!(stored.etag, outcome.etag);
        assert_eq!(stored.timestamp, outcome.timestamp);
        outcomes.push(outcome);
    }
    // Strictly increasing timestamps and pairwise distinct ETags, even for writes
    // within the same 100 ns.
    for pair in outcomes.windows(2) {
        assert!(pair[1].timestamp > pair[0].timestamp);
        assert_ne!(pair[1].etag, pair[0].etag);
    }
    let deleted = engine
        .write(
            T,
            &WriteOp::Delete {
                key: EntityKey::new("p", "r"),
                if_match: IfMatch::Any,
            },
        )
        .await
        .unwrap();
    assert_eq!(deleted, WriteOutcome::default());
    assert_eq!(get(&engine, "p", "r").await, None);
}

/// Clones of a mem engine are one store.
#[tokio::test]
async fn clones_share_the_store() {
    let engine = engine().await;
    let clone = engine.clone();
    insert(&clone, entity("p", "r")).await;
    assert!(get(&engine, "p", "r").await.is_some());
}
