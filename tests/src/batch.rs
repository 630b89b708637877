//! Entity group transactions: rules, outcomes and atomicity.

use crate::prelude::*;

fn ins(rk: &str) -> WriteOp {
    WriteOp::Insert(DynamicEntity::new("p", rk).with("V", 1))
}

async fn snapshot(engine: &dyn Engine, table: &str) -> Result<Vec<DynamicEntity>> {
    all_rows(engine, table).await
}

/// One batch with all six modes commits them all and returns one outcome per
/// operation, in order, with the ETags a read returns.
pub async fn batch_with_every_mode_commits(engine: &dyn Engine, ctx: &Ctx) -> Result<()> {
    let table = ctx.create_table(engine).await?;
    for rk in ["replace", "merge", "umerge", "delete"] {
        let e = DynamicEntity::new("p", rk).with("Old", 1).with("V", 0);
        engine.write(&table, &WriteOp::Insert(e)).await?;
    }
    let merge_etag = get(engine, &table, "p", "merge")
        .await?
        .and_then(|e| e.etag)
        .expect("ETag");
    let ops = vec![
        WriteOp::Insert(DynamicEntity::new("p", "insert").with("V", 1)),
        WriteOp::Replace {
            entity: DynamicEntity::new("p", "replace").with("V", 2),
            if_match: IfMatch::Any,
        },
        WriteOp::Merge {
            entity: DynamicEntity::new("p", "merge").with("V", 3),
            if_match: IfMatch::Etag(merge_etag),
        },
        WriteOp::UpsertReplace(DynamicEntity::new("p", "ureplace").with("V", 4)),
        WriteOp::UpsertMerge(DynamicEntity::new("p", "umerge").with("V", 5)),
        WriteOp::Delete {
            key: EntityKey::new("p", "delete"),
            if_match: IfMatch::Any,
        },
    ];
    let outcomes = engine.submit_batch(&table, &ops).await?;
    assert_eq!(outcomes.len(), ops.len(), "one outcome per operation");
    assert_eq!(outcomes[5].etag, None, "delete returns no ETag");
    for (op, outcome) in ops.iter().zip(&outcomes).take(5) {
        let got = get(engine, &table, "p", op.row_key())
            .await?
            .expect("written");
        assert_eq!(
            outcome.etag,
            got.etag,
            "{:?}: returned ETag is stored",
            op.mode()
        );
    }
    let v = |e: &DynamicEntity| (e.row_key.clone(), props(e));
    let rows: Vec<_> = snapshot(engine, &table).await?.iter().map(v).collect();
    let expected = vec![
        ("insert".to_owned(), props_of([("V", Value::Int32(1))])),
        (
            "merge".to_owned(),
            props_of([("Old", Value::Int32(1)), ("V", Value::Int32(3))]),
        ),
        ("replace".to_owned(), props_of([("V", Value::Int32(2))])),
        (
            "umerge".to_owned(),
            props_of([("Old", Value::Int32(1)), ("V", Value::Int32(5))]),
        ),
        ("ureplace".to_owned(), props_of([("V", Value::Int32(4))])),
    ];
    assert_eq!(rows, expected);
    Ok(())
}

/// A batch of 100 operations commits; 101 fail with `InvalidBatch` at index 0
/// (`InvalidInput`) and write nothing.
pub async fn batch_of_more_than_100_is_rejected(engine: &dyn Engine, ctx: &Ctx) -> Result<()> {
    let table = ctx.create_table(engine).await?;
    let ops: Vec<WriteOp> = (0..101).map(|i| ins(&format!("r{i:03}"))).collect();
    expect_batch_error(
        engine.submit_batch(&table, &ops).await,
        ErrorKind::InvalidBatch,
        Some("InvalidInput"),
        0,
        "101 operations",
    );
    assert!(
        snapshot(engine, &table).await?.is_empty(),
        "nothing written"
    );
    let outcomes = engine.submit_batch(&table, &ops[..100]).await?;
    assert_eq!(outcomes.len(), 100);
    assert_eq!(snapshot(engine, &table).await?.len(), 100);
    Ok(())
}

/// An empty batch fails with `InvalidBatch`.
pub async fn empty_batch_is_rejected(engine: &dyn Engine, ctx: &Ctx) -> Result<()> {
    let table = ctx.create_table(engine).await?;
    expect_kind(
        engine.submit_batch(&table, &[]).await,
        ErrorKind::InvalidBatch,
        "empty batch",
    );
    Ok(())
}

/// Operations on two PartitionKeys fail with `InvalidBatch`
/// (`CommandsInBatchActOnDifferentPartitions`) at the first differing operation, and
/// nothing is written.
pub async fn batch_across_partitions_is_rejected(engine: &dyn Engine, ctx: &Ctx) -> Result<()> {
    if !ctx.capabilities().enforces_same_partition_in_batch {
        return Ok(());
    }
    let table = ctx.create_table(engine).await?;
    let ops = vec![
        ins("a"),
        ins("b"),
        WriteOp::Insert(DynamicEntity::new("q", "c")),
        ins("d"),
    ];
    expect_batch_error(
        engine.submit_batch(&table, &ops).await,
        ErrorKind::InvalidBatch,
        Some("CommandsInBatchActOnDifferentPartitions"),
        2,
        "two partitions",
    );
    assert!(
        snapshot(engine, &table).await?.is_empty(),
        "nothing written"
    );
    Ok(())
}

/// The same entity twice fails with `InvalidBatch` (`InvalidDuplicateRow`) at the
/// second occurrence, whatever the modes, and nothing is written.
pub async fn batch_with_duplicate_row_is_rejected(engine: &dyn Engine, ctx: &Ctx) -> Result<()> {
    let table = ctx.create_table(engine).await?;
    let ops = vec![ins("a"), ins("b"), ins("c"), ins("b")];
    expect_batch_error(
        engine.submit_batch(&table, &ops).await,
        ErrorKind::InvalidBatch,
        Some("InvalidDuplicateRow"),
        3,
        "insert b twice",
    );
    let mixed = vec![
        ins("x"),
        WriteOp::UpsertMerge(DynamicEntity::new("p", "y")),
        WriteOp::Delete {
            key: EntityKey::new("p", "y"),
            if_match: IfMatch::Any,
        },
    ];
    expect_batch_error(
        engine.submit_batch(&table, &mixed).await,
        ErrorKind::InvalidBatch,
        Some("InvalidDuplicateRow"),
        2,
        "upsert then delete of y",
    );
    assert!(
        snapshot(engine, &table).await?.is_empty(),
        "nothing written"
    );
    Ok(())
}

/// Sets up `a` and `b`, then runs a batch that first changes them and inserts `c`,
/// then fails at operation 3 with `failing`. Checks the error and that nothing of
/// the batch took effect.
async fn rolls_back(
    engine: &dyn Engine,
    table: &str,
    failing: WriteOp,
    kind: ErrorKind,
    code: &str,
) -> Result<()> {
    for rk in ["a", "b", "exists"] {
        engine
            .write(
                table,
                &WriteOp::Insert(DynamicEntity::new("p", rk).with("V", 0)),
            )
            .await?;
    }
    let before = snapshot(engine, table).await?;
    let ops = vec![
        WriteOp::Replace {
            entity: DynamicEntity::new("p", "a").with("V", 1),
            if_match: IfMatch::Any,
        },
        WriteOp::Delete {
            key: EntityKey::new("p", "b"),
            if_match: IfMatch::Any,
        },
        ins("c"),
        failing,
        ins("d"),
    ];
    let what = format!("batch failing at 3 with {kind:?}");
    expect_batch_error(
        engine.submit_batch(table, &ops).await,
        kind,
        Some(code),
        3,
        &what,
    );
    let after = snapshot(engine, table).await?;
    assert_eq!(
        after, before,
        "{what}: no operation took effect (ETags included)"
    );
    Ok(())
}

/// An insert of an existing entity fails the batch with `EntityAlreadyExists` at its
/// index, and the earlier operations are rolled back.
pub async fn batch_failing_insert_rolls_back(engine: &dyn Engine, ctx: &Ctx) -> Result<()> {
    let table = ctx.create_table(engine).await?;
    let failing = WriteOp::Insert(DynamicEntity::new("p", "exists"));
    rolls_back(
        engine,
        &table,
        failing,
        ErrorKind::EntityAlreadyExists,
        "EntityAlreadyExists",
    )
    .await
}

/// A replace of an absent entity fails the batch with `EntityNotFound` at its index,
/// and the earlier operations are rolled back.
pub async fn batch_failing_replace_rolls_back(engine: &dyn Engine, ctx: &Ctx) -> Result<()> {
    let table = ctx.create_table(engine).await?;
    let failing = WriteOp::Replace {
        entity: DynamicEntity::new("p", "absent"),
        if_match: IfMatch::Any,
    };
    rolls_back(
        engine,
        &table,
        failing,
        ErrorKind::EntityNotFound,
        "ResourceNotFound",
    )
    .await
}

/// A delete of an absent entity fails the batch with `EntityNotFound` at its index,
/// and the earlier operations are rolled back.
pub async fn batch_failing_delete_rolls_back(engine: &dyn Engine, ctx: &Ctx) -> Result<()> {
    let table = ctx.create_table(engine).await?;
    let failing = WriteOp::Delete {
        key: EntityKey::new("p", "absent"),
        if_match: IfMatch::Any,
    };
    rolls_back(
        engine,
        &table,
        failing,
        ErrorKind::EntityNotFound,
        "ResourceNotFound",
    )
    .await
}

/// A merge with a stale ETag fails the batch with `PreconditionFailed` at its index,
/// and the earlier operations are rolled back.
pub async fn batch_failing_etag_rolls_back(engine: &dyn Engine, ctx: &Ctx) -> Result<()> {
    let table = ctx.create_table(engine).await?;
    let stale = engine
        .write(&table, &WriteOp::Insert(DynamicEntity::new("p", "m")))
        .await?
        .etag
        .expect("ETag");
    engine
        .write(
            &table,
            &WriteOp::UpsertMerge(DynamicEntity::new("p", "m").with("X", 1)),
        )
        .await?;
    let failing = WriteOp::Merge {
        entity: DynamicEntity::new("p", "m").with("X", 2),
        if_match: IfMatch::Etag(stale),
    };
    rolls_back(
        engine,
        &table,
        failing,
        ErrorKind::PreconditionFailed,
        "UpdateConditionNotSatisfied",
    )
    .await
}

/// An invalid operation (a bad key character) fails the batch with its own
/// validation kind at its index, and nothing is written.
pub async fn batch_with_invalid_operation_is_rejected(
    engine: &dyn Engine,
    ctx: &Ctx,
) -> Result<()> {
    let table = ctx.create_table(engine).await?;
    let ops = vec![ins("a"), ins("b"), ins("c"), ins("bad/key"), ins("e")];
    let err = expect_kind(
        engine.submit_batch(&table, &ops).await,
        ErrorKind::InvalidKey,
        "bad key in a batch",
    );
    assert_eq!(
        err.batch_index(),
        Some(3),
        "index of the bad operation: {err:?}"
    );
    assert!(
        snapshot(engine, &table).await?.is_empty(),
        "nothing written"
    );
    Ok(())
}

/// A batch payload above 4 MiB fails with `RequestTooLarge` and writes nothing.
pub async fn batch_over_4_mib_is_rejected(engine: &dyn Engine, ctx: &Ctx) -> Result<()> {
    let table = ctx.create_table(engine).await?;
    let big = "x".repeat(30_000); // 60 KB as UTF-16, under the 64 KiB value limit
    let ops: Vec<WriteOp> = (0..80)
        .map(|i| {
            WriteOp::Insert(
                DynamicEntity::new("p", format!("r{i:02}"))
                    .with("S", big.as_str())
                    .with("T", big.as_str()),
            )
        })
        .collect();
    expect_kind(
        engine.submit_batch(&table, &ops).await,
        ErrorKind::RequestTooLarge,
        "a ~9.6 MB batch",
    );
    assert!(
        snapshot(engine, &table).await?.is_empty(),
        "nothing written"
    );
    let outcomes = engine.submit_batch(&table, &ops[..20]).await?;
    assert_eq!(outcomes.len(), 20, "a ~2.4 MB batch commits");
    Ok(())
}

/// A batch on a missing table fails with `TableNotFound`.
pub async fn batch_on_missing_table_fails(engine: &dyn Engine, ctx: &Ctx) -> Result<()> {
    let table = ctx.table_name("missing");
    expect_kind(
        engine.submit_batch(&table, &[ins("a"), ins("b")]).await,
        ErrorKind::TableNotFound,
        "batch on a missing table",
    );
    Ok(())
}

/// A single-operation batch behaves like the plain write; its failure is reported
/// at index 0.
pub async fn single_operation_batch_behaves_like_write(
    engine: &dyn Engine,
    ctx: &Ctx,
) -> Result<()> {
    let table = ctx.create_table(engine).await?;
    let outcomes = engine.submit_batch(&table, &[ins("a")]).await?;
    let got = get(engine, &table, "p", "a").await?.expect("inserted");
    assert_eq!(outcomes[0].etag, got.etag);
    expect_batch_error(
        engine.submit_batch(&table, &[ins("a")]).await,
        ErrorKind::EntityAlreadyExists,
        Some("EntityAlreadyExists"),
        0,
        "single insert of an existing entity",
    );
    Ok(())
}

/// A merge in a batch that would leave the entity with more than 252 properties
/// fails the batch with `TooManyProperties` at its index; nothing is written.
pub async fn batch_merge_beyond_252_properties_fails_at_its_index(
    engine: &dyn Engine,
    ctx: &Ctx,
) -> Result<()> {
    if !ctx.capabilities().enforces_property_count_on_merge {
        return Ok(());
    }
    let table = ctx.create_table(engine).await?;
    engine.write(&table, &ins("wide")).await?;
    let before = snapshot(engine, &table).await?;
    let wide = (0..252).fold(DynamicEntity::new("p", "wide"), |e, i| {
        e.with(format!("P{i:03}"), Value::Int32(i))
    });
    let ops = [ins("other"), WriteOp::UpsertMerge(wide)];
    expect_batch_error(
        engine.submit_batch(&table, &ops).await,
        ErrorKind::TooManyProperties,
        None,
        1,
        "a merge to 253 properties",
    );
    assert_eq!(snapshot(engine, &table).await?, before, "nothing written");
    Ok(())
}

/// Every row a batch writes gets an ETag of its own: one row's ETag is no
/// precondition for another's.
pub async fn every_row_of_a_batch_gets_its_own_etag(engine: &dyn Engine, ctx: &Ctx) -> Result<()> {
    let table = ctx.create_table(engine).await?;
    engine.write(&table, &ins("merged")).await?;
    let ops = [
        ins("inserted"),
        WriteOp::Merge {
            entity: DynamicEntity::new("p", "merged").with("W", 1),
            if_match: IfMatch::Any,
        },
        WriteOp::UpsertReplace(DynamicEntity::new("p", "upserted").with("V", 2)),
    ];
    let outcomes = engine.submit_batch(&table, &ops).await?;
    let etags: Vec<ETag> = outcomes
        .iter()
        .map(|o| o.etag.clone().expect("every write returns an ETag"))
        .collect();
    for (i, a) in etags.iter().enumerate() {
        for b in &etags[i + 1..] {
            assert_ne!(a, b, "two rows of one batch share an ETag");
        }
    }
    expect_kind(
        engine
            .write(
                &table,
                &WriteOp::Replace {
                    entity: DynamicEntity::new("p", "upserted"),
                    if_match: IfMatch::Etag(etags[0].clone()),
                },
            )
            .await,
        ErrorKind::PreconditionFailed,
        "replace with another row's ETag from the same batch",
    );
    Ok(())
}
