//! The write rules of the mem engine, one test per rule.

// Test code: a panic is a test failure.
#![allow(clippy::unwrap_used)]

use tables_core::{
    DynamicEntity, ETag, Engine, EntityKey, ErrorKind, IfMatch, Value, WriteOp, WriteOutcome,
};
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

#[tokio::test]
async fn input_timestamp_and_etag_are_ignored() {
    let engine = engine().await;
    let mut e = entity("p", "r");
    e.etag = Some(ETag::new("W/\"forged\""));
    e.timestamp = tables_core::DateTime::from_ticks(tables_core::DateTime::MIN_TICKS);
    let outcome = insert(&engine, e).await;
    let stored = get(&engine, "p", "r").await.unwrap();
    assert_eq!(stored.etag, outcome.etag);
    assert_ne!(stored.etag, Some(ETag::new("W/\"forged\"")));
}

#[tokio::test]
async fn insert_on_an_existing_key_is_already_exists_and_changes_nothing() {
    let engine = engine().await;
    insert(&engine, entity("p", "r").with("n", 1)).await;
    let before = get(&engine, "p", "r").await;
    let err = engine
        .write(T, &WriteOp::Insert(entity("p", "r").with("n", 2)))
        .await
        .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::EntityAlreadyExists);
    assert_eq!(err.service_code(), Some("EntityAlreadyExists"));
    assert_eq!(err.status(), Some(409));
    assert_eq!(err.entity_key(), Some(&EntityKey::new("p", "r")));
    assert_eq!(get(&engine, "p", "r").await, before);
}

#[tokio::test]
async fn replace_merge_and_delete_of_a_missing_key_are_not_found() {
    let engine = engine().await;
    for if_match in [IfMatch::Any, IfMatch::Etag(ETag::new("W/\"x\""))] {
        for op in [
            WriteOp::Replace {
                entity: entity("p", "r"),
                if_match: if_match.clone(),
            },
            WriteOp::Merge {
                entity: entity("p", "r"),
                if_match: if_match.clone(),
            },
            WriteOp::Delete {
                key: EntityKey::new("p", "r"),
                if_match: if_match.clone(),
            },
        ] {
            let err = engine.write(T, &op).await.unwrap_err();
            assert_eq!(err.kind(), ErrorKind::EntityNotFound, "{op:?}");
            assert_eq!(err.service_code(), Some("ResourceNotFound"));
            assert_eq!(err.status(), Some(404));
        }
    }
    assert_eq!(get(&engine, "p", "r").await, None);
}

#[tokio::test]
async fn stale_etags_fail_the_precondition_and_change_nothing() {
    let engine = engine().await;
    let old = insert(&engine, entity("p", "r").with("n", 1))
        .await
        .etag
        .unwrap();
    let current = engine
        .write(T, &WriteOp::UpsertMerge(entity("p", "r").with("n", 2)))
        .await
        .unwrap()
        .etag
        .unwrap();
    let before = get(&engine, "p", "r").await;
    let stale = IfMatch::Etag(old);
    for op in [
        WriteOp::Replace {
            entity: entity("p", "r").with("n", 9),
            if_match: stale.clone(),
        },
        WriteOp::Merge {
            entity: entity("p", "r").with("n", 9),
            if_match: stale.clone(),
        },
        WriteOp::Delete {
            key: EntityKey::new("p", "r"),
            if_match: stale.clone(),
        },
    ] {
        let err = engine.write(T, &op).await.unwrap_err();
        assert_eq!(err.kind(), ErrorKind::PreconditionFailed, "{op:?}");
        assert_eq!(err.service_code(), Some("UpdateConditionNotSatisfied"));
        assert_eq!(err.status(), Some(412));
    }
    assert_eq!(get(&engine, "p", "r").await, before);
    // The current ETag passes.
    engine
        .write(
            T,
            &WriteOp::Replace {
                entity: entity("p", "r").with("n", 3),
                if_match: IfMatch::Etag(current),
            },
        )
        .await
        .unwrap();
    assert_eq!(
        get(&engine, "p", "r").await.unwrap().get("n"),
        Some(&Value::Int32(3))
    );
}

#[tokio::test]
async fn merge_keeps_unmentioned_properties_and_replace_drops_them() {
    let engine = engine().await;
    insert(&engine, entity("p", "r").with("a", 1).with("b", "x")).await;
    engine
        .write(
            T,
            &WriteOp::Merge {
                entity: entity("p", "r").with("b", "y").with("c", true),
                if_match: IfMatch::Any,
            },
        )
        .await
        .unwrap();
    let merged = get(&engine, "p", "r").await.unwrap();
    assert_eq!(merged.get("a"), Some(&Value::Int32(1)));
    assert_eq!(merged.get("b"), Some(&Value::String("y".into())));
    assert_eq!(merged.get("c"), Some(&Value::Boolean(true)));

    engine
        .write(
            T,
            &WriteOp::Replace {
                entity: entity("p", "r").with("c", false),
                if_match: IfMatch::Any,
            },
        )
        .await
        .unwrap();
    let replaced = get(&engine, "p", "r").await.unwrap();
    assert_eq!(replaced.len(), 1);
    assert_eq!(replaced.get("c"), Some(&Value::Boolean(false)));

    // A merge may change a property's type.
    engine
        .write(T, &WriteOp::UpsertMerge(entity("p", "r").with("c", 7_i64)))
        .await
        .unwrap();
    assert_eq!(
        get(&engine, "p", "r").await.unwrap().get("c"),
        Some(&Value::Int64(7))
    );
}

#[tokio::test]
async fn upserts_insert_when_absent_and_ignore_preconditions() {
    let engine = engine().await;
    engine
        .write(T, &WriteOp::UpsertReplace(entity("p", "1").with("a", 1)))
        .await
        .unwrap();
    engine
        .write(T, &WriteOp::UpsertMerge(entity("p", "2").with("a", 2)))
        .await
        .unwrap();
    assert_eq!(
        get(&engine, "p", "1").await.unwrap().get("a"),
        Some(&Value::Int32(1))
    );
    assert_eq!(
        get(&engine, "p", "2").await.unwrap().get("a"),
        Some(&Value::Int32(2))
    );
    // Upsert-replace over an existing entity drops its other properties; upsert-merge
    // keeps them.
    engine
        .write(T, &WriteOp::UpsertReplace(entity("p", "1").with("b", 1)))
        .await
        .unwrap();
    engine
        .write(T, &WriteOp::UpsertMerge(entity("p", "2").with("b", 2)))
        .await
        .unwrap();
    let one = get(&engine, "p", "1").await.unwrap();
    let two = get(&engine, "p", "2").await.unwrap();
    assert!(!one.contains("a") && one.contains("b"));
    assert!(two.contains("a") && two.contains("b"));
}

#[tokio::test]
async fn invalid_entities_are_rejected_before_anything_changes() {
    let engine = engine().await;
    insert(&engine, entity("p", "r").with("a", 1)).await;
    let before = get(&engine, "p", "r").await;

    let err = engine
        .write(T, &WriteOp::UpsertReplace(entity("p", "bad/key")))
        .await
        .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::InvalidKey);

    // Each merge alone is valid, but the merged entity would exceed 252 properties.
    let mut wide = entity("p", "r");
    for i in 0..252 {
        wide.insert(format!("p{i}"), i);
    }
    let err = engine
        .write(T, &WriteOp::UpsertMerge(wide))
        .await
        .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::TooManyProperties);
    assert_eq!(get(&engine, "p", "r").await, before);
}

#[tokio::test]
async fn get_entity_with_select_returns_only_those_properties() {
    let engine = engine().await;
    let outcome = insert(
        &engine,
        entity("p", "r").with("a", 1).with("b", 2).with("c", 3),
    )
    .await;
    let select = vec!["c".to_owned(), "a".to_owned(), "missing".to_owned()];
    let got = engine
        .get_entity(T, &EntityKey::new("p", "r"), Some(&select))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(
        (got.partition_key.as_str(), got.row_key.as_str()),
        ("p", "r")
    );
    assert_eq!(got.etag, outcome.etag);
    assert_eq!(got.timestamp, outcome.timestamp);
    assert_eq!(got.len(), 2);
    assert!(got.contains("a") && got.contains("c") && !got.contains("missing"));

    let twice = vec!["a".to_owned(), "a".to_owned()];
    let err = engine
        .get_entity(T, &EntityKey::new("p", "r"), Some(&twice))
        .await
        .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::InvalidQuery);
}

#[tokio::test]
async fn get_entity_checks_the_key_and_the_table() {
    let engine = engine().await;
    let err = engine
        .get_entity(T, &EntityKey::new("p", "a#b"), None)
        .await
        .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::InvalidKey);
    let err = engine
        .get_entity("Missing", &EntityKey::new("p", "r"), None)
        .await
        .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::TableNotFound);
    assert_eq!(err.service_code(), Some("TableNotFound"));
    assert_eq!(get(&engine, "p", "r").await, None);
}

#[tokio::test]
async fn clones_share_the_store() {
    let engine = engine().await;
    let clone = engine.clone();
    insert(&clone, entity("p", "r")).await;
    assert!(get(&engine, "p", "r").await.is_some());
}
