//! Entity group transactions on the mem engine: all or nothing, failing index and code.

// Test code: a panic is a test failure.
#![allow(clippy::unwrap_used)]

use tables_core::{DynamicEntity, ETag, Engine, EntityKey, ErrorKind, IfMatch, QuerySpec, WriteOp};
use tables_mem::MemEngine;

const T: &str = "Batches";

async fn engine_with(rows: &[&str]) -> MemEngine {
    let engine = MemEngine::new();
    engine.create_table(T).await.unwrap();
    for rk in rows {
        let e = DynamicEntity::new("p", *rk).with("v", 0);
        engine.write(T, &WriteOp::Insert(e)).await.unwrap();
    }
    engine
}

async fn snapshot(engine: &MemEngine) -> Vec<DynamicEntity> {
    engine
        .query(T, &QuerySpec::new(), None)
        .await
        .unwrap()
        .items
}

fn put(rk: &str, v: i32) -> WriteOp {
    WriteOp::UpsertReplace(DynamicEntity::new("p", rk).with("v", v))
}

#[tokio::test]
async fn a_successful_batch_applies_every_operation_and_returns_outcomes() {
    let engine = engine_with(&["1", "2", "3"]).await;
    let ops = vec![
        WriteOp::Insert(DynamicEntity::new("p", "0").with("v", 1)),
        WriteOp::Merge {
            entity: DynamicEntity::new("p", "1").with("w", 1),
            if_match: IfMatch::Any,
        },
        WriteOp::Delete {
            key: EntityKey::new("p", "2"),
            if_match: IfMatch::Any,
        },
        put("3", 5),
    ];
    let outcomes = engine.submit_batch(T, &ops).await.unwrap();
    assert_eq!(outcomes.len(), 4);
    assert!(outcomes[0].etag.is_some() && outcomes[0].timestamp.is_some());
    assert_eq!(outcomes[2].etag, None, "a delete has no ETag");
    let rows = snapshot(&engine).await;
    let keys: Vec<&str> = rows.iter().map(|e| e.row_key.as_str()).collect();
    assert_eq!(keys, ["0", "1", "3"]);
    assert!(
        rows[1].contains("v") && rows[1].contains("w"),
        "merge kept v"
    );
    assert_eq!(rows[0].etag, outcomes[0].etag);
    assert_eq!(rows[2].etag, outcomes[3].etag);
}

#[tokio::test]
async fn a_failing_operation_rolls_back_the_batch_and_names_its_index() {
    let engine = engine_with(&["1", "2"]).await;
    let stale = IfMatch::Etag(ETag::new(
        "W/\"datetime'2000-01-01T00%3A00%3A00.0000000Z'\"",
    ));
    let cases: Vec<(WriteOp, ErrorKind, &str)> = vec![
        (
            WriteOp::Insert(DynamicEntity::new("p", "2")),
            ErrorKind::EntityAlreadyExists,
            "EntityAlreadyExists",
        ),
        (
            WriteOp::Replace {
                entity: DynamicEntity::new("p", "9"),
                if_match: IfMatch::Any,
            },
            ErrorKind::EntityNotFound,
            "ResourceNotFound",
        ),
        (
            WriteOp::Delete {
                key: EntityKey::new("p", "2"),
                if_match: stale,
            },
            ErrorKind::PreconditionFailed,
            "UpdateConditionNotSatisfied",
        ),
    ];
    for (failing, kind, code) in cases {
        let before = snapshot(&engine).await;
        let ops = vec![put("0", 7), put("1", 7), failing, put("3", 7)];
        let err = engine.submit_batch(T, &ops).await.unwrap_err();
        assert_eq!(err.kind(), kind);
        assert_eq!(err.batch_index(), Some(2));
        assert_eq!(err.service_code(), Some(code));
        assert_eq!(snapshot(&engine).await, before, "nothing changed");
    }
}

#[tokio::test]
async fn batch_rule_violations_change_nothing() {
    let engine = engine_with(&["1"]).await;
    let before = snapshot(&engine).await;

    let other_partition = vec![
        put("a", 1),
        WriteOp::UpsertReplace(DynamicEntity::new("q", "b")),
    ];
    let err = engine.submit_batch(T, &other_partition).await.unwrap_err();
    assert_eq!(err.kind(), ErrorKind::InvalidBatch);
    assert_eq!(err.batch_index(), Some(1));
    assert_eq!(
        err.service_code(),
        Some("CommandsInBatchActOnDifferentPartitions")
    );

    let duplicate = vec![put("a", 1), put("b", 1), put("a", 2)];
    let err = engine.submit_batch(T, &duplicate).await.unwrap_err();
    assert_eq!(err.kind(), ErrorKind::InvalidBatch);
    assert_eq!(err.batch_index(), Some(2));

    let invalid = vec![put("a", 1), put("b?", 1)];
    let err = engine.submit_batch(T, &invalid).await.unwrap_err();
    assert_eq!(err.kind(), ErrorKind::InvalidKey);
    assert_eq!(err.batch_index(), Some(1));

    let too_many: Vec<WriteOp> = (0..101).map(|i| put(&i.to_string(), i)).collect();
    let err = engine.submit_batch(T, &too_many).await.unwrap_err();
    assert_eq!(err.kind(), ErrorKind::InvalidBatch);

    let err = engine.submit_batch(T, &[]).await.unwrap_err();
    assert_eq!(err.kind(), ErrorKind::InvalidBatch);

    assert_eq!(snapshot(&engine).await, before);
}

#[tokio::test]
async fn a_merge_that_would_overflow_the_entity_fails_with_its_index() {
    let engine = engine_with(&["1"]).await;
    let before = snapshot(&engine).await;
    let mut wide = DynamicEntity::new("p", "1");
    for i in 0..252 {
        wide.insert(format!("p{i}"), i);
    }
    let ops = vec![put("0", 1), WriteOp::UpsertMerge(wide)];
    let err = engine.submit_batch(T, &ops).await.unwrap_err();
    assert_eq!(err.kind(), ErrorKind::TooManyProperties);
    assert_eq!(err.batch_index(), Some(1));
    assert_eq!(snapshot(&engine).await, before);
}

#[tokio::test]
async fn a_batch_on_a_missing_table_is_table_not_found() {
    let engine = MemEngine::new();
    let err = engine
        .submit_batch("Nowhere", &[put("1", 1)])
        .await
        .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::TableNotFound);
}

/// The service doesn't give one Timestamp to a whole transaction (see
/// docs/service-behaviour.md, "Timestamps in an entity group transaction"): every
/// row gets its own, so one row's ETag never passes as another's.
#[tokio::test]
async fn every_row_of_a_batch_gets_its_own_etag() {
    let engine = engine_with(&["1"]).await;
    let ops = vec![
        WriteOp::Insert(DynamicEntity::new("p", "0").with("v", 1)),
        WriteOp::Merge {
            entity: DynamicEntity::new("p", "1").with("w", 1),
            if_match: IfMatch::Any,
        },
        put("2", 2),
    ];
    let outcomes = engine.submit_batch(T, &ops).await.unwrap();
    let etags: Vec<ETag> = outcomes.iter().map(|o| o.etag.clone().unwrap()).collect();
    for (i, a) in etags.iter().enumerate() {
        for b in &etags[i + 1..] {
            assert_ne!(a, b, "two rows of one batch share an ETag");
        }
    }
    // Row 0's ETag is no precondition for row 2.
    let err = engine
        .write(
            T,
            &WriteOp::Replace {
                entity: DynamicEntity::new("p", "2"),
                if_match: IfMatch::Etag(etags[0].clone()),
            },
        )
        .await
        .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::PreconditionFailed);
}
