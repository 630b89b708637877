//! The six write modes and their preconditions.

use crate::prelude::*;

async fn seed(engine: &dyn Engine, table: &str) -> Result<DynamicEntity> {
    let e = DynamicEntity::new("p", "r")
        .with("Keep", "kept")
        .with("Change", Value::Int32(1));
    engine.write(table, &WriteOp::Insert(e)).await?;
    Ok(get(engine, table, "p", "r").await?.expect("seeded"))
}

fn update() -> DynamicEntity {
    DynamicEntity::new("p", "r")
        .with("Change", "now a string")
        .with("Added", Value::Int64(7))
}

async fn stored(engine: &dyn Engine, table: &str) -> Result<Option<DynamicEntity>> {
    get(engine, table, "p", "r").await
}

/// Replace removes every property not in the new entity.
pub async fn replace_drops_unmentioned_properties(engine: &dyn Engine, ctx: &Ctx) -> Result<()> {
    let table = ctx.create_table(engine).await?;
    seed(engine, &table).await?;
    let op = WriteOp::Replace {
        entity: update(),
        if_match: IfMatch::Any,
    };
    engine.write(&table, &op).await?;
    let got = stored(engine, &table).await?.expect("exists");
    assert_eq!(props(&got), props(&update()), "only the new properties");
    Ok(())
}

/// Merge overwrites the given properties (type included) and keeps the others.
pub async fn merge_keeps_unmentioned_properties(engine: &dyn Engine, ctx: &Ctx) -> Result<()> {
    let table = ctx.create_table(engine).await?;
    seed(engine, &table).await?;
    let op = WriteOp::Merge {
        entity: update(),
        if_match: IfMatch::Any,
    };
    engine.write(&table, &op).await?;
    let got = stored(engine, &table).await?.expect("exists");
    assert_eq!(
        props(&got),
        props_of([
            ("Keep", s("kept")),
            ("Change", s("now a string")),
            ("Added", Value::Int64(7)),
        ])
    );
    Ok(())
}

/// Upsert-replace inserts an absent entity and replaces a present one (dropping
/// unmentioned properties).
pub async fn upsert_replace_inserts_or_replaces(engine: &dyn Engine, ctx: &Ctx) -> Result<()> {
    let table = ctx.create_table(engine).await?;
    let first = DynamicEntity::new("p", "r").with("A", 1).with("B", 2);
    engine
        .write(&table, &WriteOp::UpsertReplace(first.clone()))
        .await?;
    let got = stored(engine, &table).await?.expect("inserted");
    assert_eq!(props(&got), props(&first));
    let second = DynamicEntity::new("p", "r").with("C", 3);
    engine
        .write(&table, &WriteOp::UpsertReplace(second.clone()))
        .await?;
    let got = stored(engine, &table).await?.expect("replaced");
    assert_eq!(props(&got), props(&second), "A and B are gone");
    Ok(())
}

/// Upsert-merge inserts an absent entity and merges into a present one (keeping
/// unmentioned properties).
pub async fn upsert_merge_inserts_or_merges(engine: &dyn Engine, ctx: &Ctx) -> Result<()> {
    let table = ctx.create_table(engine).await?;
    let first = DynamicEntity::new("p", "r").with("A", 1).with("B", 2);
    engine
        .write(&table, &WriteOp::UpsertMerge(first.clone()))
        .await?;
    let got = stored(engine, &table).await?.expect("inserted");
    assert_eq!(props(&got), props(&first));
    let second = DynamicEntity::new("p", "r").with("B", 20).with("C", 3);
    engine.write(&table, &WriteOp::UpsertMerge(second)).await?;
    let got = stored(engine, &table).await?.expect("merged");
    assert_eq!(
        props(&got),
        props_of([
            ("A", Value::Int32(1)),
            ("B", Value::Int32(20)),
            ("C", Value::Int32(3)),
        ])
    );
    Ok(())
}

/// Replace, merge and delete of an absent entity fail with `EntityNotFound`
/// (404 ResourceNotFound), with `*` or an ETag, and create nothing.
pub async fn conditional_writes_on_absent_entity_fail(
    engine: &dyn Engine,
    ctx: &Ctx,
) -> Result<()> {
    let table = ctx.create_table(engine).await?;
    // A real ETag, from an entity that has since been deleted.
    let outcome = engine
        .write(&table, &WriteOp::Insert(DynamicEntity::new("p", "r")))
        .await?;
    let etag = outcome.etag.expect("insert returns an ETag");
    engine
        .write(
            &table,
            &WriteOp::Delete {
                key: EntityKey::new("p", "r"),
                if_match: IfMatch::Any,
            },
        )
        .await?;
    let e = DynamicEntity::new("p", "r").with("A", 1);
    for if_match in [IfMatch::Any, IfMatch::Etag(etag)] {
        let ops = [
            WriteOp::Replace {
                entity: e.clone(),
                if_match: if_match.clone(),
            },
            WriteOp::Merge {
                entity: e.clone(),
                if_match: if_match.clone(),
            },
            WriteOp::Delete {
                key: e.key(),
                if_match: if_match.clone(),
            },
        ];
        for op in ops {
            let what = format!("{:?} with {if_match:?}", op.mode());
            let err = expect_kind(
                engine.write(&table, &op).await,
                ErrorKind::EntityNotFound,
                &what,
            );
            expect_service(&err, 404, "ResourceNotFound", &what);
        }
    }
    assert!(
        all_rows(engine, &table).await?.is_empty(),
        "nothing created"
    );
    Ok(())
}

/// Replace, merge and delete with the current ETag succeed.
pub async fn conditional_writes_with_current_etag_succeed(
    engine: &dyn Engine,
    ctx: &Ctx,
) -> Result<()> {
    let table = ctx.create_table(engine).await?;
    let seeded = seed(engine, &table).await?;
    let etag = seeded.etag.expect("stored entities carry an ETag");
    let outcome = engine
        .write(
            &table,
            &WriteOp::Replace {
                entity: update(),
                if_match: IfMatch::Etag(etag),
            },
        )
        .await?;
    let etag = outcome.etag.expect("replace returns the new ETag");
    let outcome = engine
        .write(
            &table,
            &WriteOp::Merge {
                entity: DynamicEntity::new("p", "r").with("M", true),
                if_match: IfMatch::Etag(etag),
            },
        )
        .await?;
    let got = stored(engine, &table).await?.expect("exists");
    assert!(got.contains("M") && got.contains("Added") && !got.contains("Keep"));
    let etag = outcome.etag.expect("merge returns the new ETag");
    engine
        .write(
            &table,
            &WriteOp::Delete {
                key: EntityKey::new("p", "r"),
                if_match: IfMatch::Etag(etag),
            },
        )
        .await?;
    assert_eq!(stored(engine, &table).await?, None);
    Ok(())
}

/// Replace, merge and delete with a stale ETag fail with `PreconditionFailed`
/// (412 UpdateConditionNotSatisfied) and change nothing.
pub async fn conditional_writes_with_stale_etag_fail(engine: &dyn Engine, ctx: &Ctx) -> Result<()> {
    let table = ctx.create_table(engine).await?;
    let seeded = seed(engine, &table).await?;
    let stale = seeded.etag.clone().expect("ETag");
    engine
        .write(
            &table,
            &WriteOp::Merge {
                entity: DynamicEntity::new("p", "r").with("Bump", 1),
                if_match: IfMatch::Any,
            },
        )
        .await?;
    let current = stored(engine, &table).await?.expect("exists");
    assert_ne!(
        current.etag.as_ref(),
        Some(&stale),
        "the merge changed the ETag"
    );
    let ops = [
        WriteOp::Replace {
            entity: update(),
            if_match: IfMatch::Etag(stale.clone()),
        },
        WriteOp::Merge {
            entity: update(),
            if_match: IfMatch::Etag(stale.clone()),
        },
        WriteOp::Delete {
            key: EntityKey::new("p", "r"),
            if_match: IfMatch::Etag(stale.clone()),
        },
    ];
    for op in ops {
        let what = format!("{:?} with a stale ETag", op.mode());
        let err = expect_kind(
            engine.write(&table, &op).await,
            ErrorKind::PreconditionFailed,
            &what,
        );
        expect_service(&err, 412, "UpdateConditionNotSatisfied", &what);
        assert_eq!(
            stored(engine, &table).await?.as_ref(),
            Some(&current),
            "{what}"
        );
    }
    Ok(())
}

/// `If-Match: *` succeeds whatever the stored version.
pub async fn if_match_any_ignores_the_version(engine: &dyn Engine, ctx: &Ctx) -> Result<()> {
    let table = ctx.create_table(engine).await?;
    seed(engine, &table).await?;
    for i in 0..3 {
        engine
            .write(
                &table,
                &WriteOp::Merge {
                    entity: DynamicEntity::new("p", "r").with("N", Value::Int32(i)),
                    if_match: IfMatch::Any,
                },
            )
            .await?;
        engine
            .write(
                &table,
                &WriteOp::Replace {
                    entity: DynamicEntity::new("p", "r").with("N", Value::Int32(i + 10)),
                    if_match: IfMatch::Any,
                },
            )
            .await?;
    }
    let got = stored(engine, &table).await?.expect("exists");
    assert_eq!(props(&got), props_of([("N", Value::Int32(12))]));
    engine
        .write(
            &table,
            &WriteOp::Delete {
                key: EntityKey::new("p", "r"),
                if_match: IfMatch::Any,
            },
        )
        .await?;
    assert_eq!(stored(engine, &table).await?, None);
    Ok(())
}

/// Upserts carry no precondition: they succeed after others changed the entity.
pub async fn upserts_ignore_concurrent_changes(engine: &dyn Engine, ctx: &Ctx) -> Result<()> {
    let table = ctx.create_table(engine).await?;
    let seeded = seed(engine, &table).await?;
    engine
        .write(
            &table,
            &WriteOp::Replace {
                entity: DynamicEntity::new("p", "r").with("Other", 1),
                if_match: IfMatch::Any,
            },
        )
        .await?;
    let changed = stored(engine, &table).await?.expect("exists");
    assert_ne!(changed.etag, seeded.etag);
    engine
        .write(
            &table,
            &WriteOp::UpsertMerge(DynamicEntity::new("p", "r").with("Mine", 2)),
        )
        .await?;
    let got = stored(engine, &table).await?.expect("exists");
    assert_eq!(
        props(&got),
        props_of([("Other", Value::Int32(1)), ("Mine", Value::Int32(2))])
    );
    engine
        .write(
            &table,
            &WriteOp::UpsertReplace(DynamicEntity::new("p", "r").with("Final", 3)),
        )
        .await?;
    let got = stored(engine, &table).await?.expect("exists");
    assert_eq!(props(&got), props_of([("Final", Value::Int32(3))]));
    Ok(())
}

/// An ETag from a deleted and re-inserted entity no longer matches.
pub async fn etag_of_previous_incarnation_is_stale(engine: &dyn Engine, ctx: &Ctx) -> Result<()> {
    let table = ctx.create_table(engine).await?;
    let old = engine
        .write(&table, &WriteOp::Insert(DynamicEntity::new("p", "r")))
        .await?
        .etag
        .expect("ETag");
    engine
        .write(
            &table,
            &WriteOp::Delete {
                key: EntityKey::new("p", "r"),
                if_match: IfMatch::Etag(old.clone()),
            },
        )
        .await?;
    engine
        .write(
            &table,
            &WriteOp::Insert(DynamicEntity::new("p", "r").with("V", 2)),
        )
        .await?;
    expect_kind(
        engine
            .write(
                &table,
                &WriteOp::Replace {
                    entity: DynamicEntity::new("p", "r"),
                    if_match: IfMatch::Etag(old),
                },
            )
            .await,
        ErrorKind::PreconditionFailed,
        "replace with the first incarnation's ETag",
    );
    Ok(())
}

/// Another entity's ETag does not satisfy the precondition.
pub async fn etag_of_another_entity_does_not_match(engine: &dyn Engine, ctx: &Ctx) -> Result<()> {
    let table = ctx.create_table(engine).await?;
    let a = engine
        .write(&table, &WriteOp::Insert(DynamicEntity::new("p", "a")))
        .await?
        .etag
        .expect("ETag");
    let b = engine
        .write(&table, &WriteOp::Insert(DynamicEntity::new("p", "b")))
        .await?
        .etag
        .expect("ETag");
    assert_ne!(a, b, "separately written entities have different ETags");
    expect_kind(
        engine
            .write(
                &table,
                &WriteOp::Merge {
                    entity: DynamicEntity::new("p", "b").with("X", 1),
                    if_match: IfMatch::Etag(a),
                },
            )
            .await,
        ErrorKind::PreconditionFailed,
        "merge into b with a's ETag",
    );
    let got = get(engine, &table, "p", "b").await?.expect("exists");
    assert!(got.is_empty(), "b unchanged");
    Ok(())
}
