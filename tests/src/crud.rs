//! Create, read, delete; keys; value round trips.

use crate::prelude::*;

fn every_type() -> DynamicEntity {
    DynamicEntity::new("p", "r")
        .with("S", "hello")
        .with("I", Value::Int32(42))
        .with("L", Value::Int64(9_007_199_254_740_993))
        .with("D", Value::Double(1.5))
        .with("B", Value::Boolean(true))
        .with("T", Value::DateTime(dt(TICKS_2024 + 1_234_567)))
        .with(
            "G",
            Value::Guid(Uuid::from_u128(0xc9da6455_213d_42c9_9a79_3e9149a57833)),
        )
        .with("Bin", Value::Binary(vec![1, 2, 3, 0, 255]))
}

/// An inserted entity reads back (by get and by query) with every Edm type intact,
/// plus a Timestamp and an ETag.
pub async fn insert_then_read_round_trips_every_type(engine: &dyn Engine, ctx: &Ctx) -> Result<()> {
    let table = ctx.create_table(engine).await?;
    let entity = every_type();
    engine
        .write(&table, &WriteOp::Insert(entity.clone()))
        .await?;
    let got = get(engine, &table, "p", "r")
        .await?
        .expect("the inserted entity exists");
    assert_eq!(got.key(), entity.key());
    assert_eq!(props(&got), props(&entity), "get returns every property");
    expect_system_properties(&got, "get");
    let rows = all_rows(engine, &table).await?;
    assert_eq!(rows.len(), 1);
    assert_eq!(
        props(&rows[0]),
        props(&entity),
        "query returns every property"
    );
    expect_system_properties(&rows[0], "query");
    Ok(())
}

/// Inserting a key that exists fails with `EntityAlreadyExists` (409) and leaves the
/// stored entity unchanged.
pub async fn insert_existing_entity_conflicts(engine: &dyn Engine, ctx: &Ctx) -> Result<()> {
    let table = ctx.create_table(engine).await?;
    let first = DynamicEntity::new("p", "r").with("V", 1);
    engine
        .write(&table, &WriteOp::Insert(first.clone()))
        .await?;
    let before = get(engine, &table, "p", "r").await?;
    let err = expect_kind(
        engine
            .write(
                &table,
                &WriteOp::Insert(DynamicEntity::new("p", "r").with("V", 2)),
            )
            .await,
        ErrorKind::EntityAlreadyExists,
        "second insert",
    );
    expect_service(&err, 409, "EntityAlreadyExists", "second insert");
    assert_eq!(get(engine, &table, "p", "r").await?, before, "unchanged");
    Ok(())
}

/// Reading an absent key is `Ok(None)`, not an error.
pub async fn get_missing_entity_returns_none(engine: &dyn Engine, ctx: &Ctx) -> Result<()> {
    let table = ctx.create_table(engine).await?;
    engine
        .write(&table, &WriteOp::Insert(DynamicEntity::new("p", "r")))
        .await?;
    assert_eq!(get(engine, &table, "p", "x").await?, None);
    assert_eq!(get(engine, &table, "x", "r").await?, None);
    Ok(())
}

/// Keys compare exactly: case and trailing spaces make different entities.
pub async fn keys_are_case_sensitive_and_exact(engine: &dyn Engine, ctx: &Ctx) -> Result<()> {
    let table = ctx.create_table(engine).await?;
    for (i, rk) in ["a", "A", "a "].into_iter().enumerate() {
        let e = DynamicEntity::new("p", rk).with("I", Value::Int32(i as i32));
        engine.write(&table, &WriteOp::Insert(e)).await?;
    }
    for (i, rk) in ["a", "A", "a "].into_iter().enumerate() {
        let got = get(engine, &table, "p", rk)
            .await?
            .expect("each key exists");
        assert_eq!(got.get("I"), Some(&Value::Int32(i as i32)), "RowKey {rk:?}");
    }
    assert_eq!(
        get(engine, &table, "P", "a").await?,
        None,
        "PartitionKey case"
    );
    assert_eq!(all_rows(engine, &table).await?.len(), 3);
    Ok(())
}

/// Empty PartitionKey and RowKey are valid keys.
pub async fn empty_keys_are_allowed(engine: &dyn Engine, ctx: &Ctx) -> Result<()> {
    let table = ctx.create_table(engine).await?;
    engine
        .write(
            &table,
            &WriteOp::Insert(DynamicEntity::new("", "").with("A", 1)),
        )
        .await?;
    engine
        .write(&table, &WriteOp::Insert(DynamicEntity::new("", "r")))
        .await?;
    assert!(get(engine, &table, "", "").await?.is_some());
    let rows = all_rows(engine, &table).await?;
    assert_eq!(
        keys(&rows),
        vec![
            (String::new(), String::new()),
            (String::new(), "r".to_owned())
        ]
    );
    Ok(())
}

/// Keys with non-ASCII characters, quotes and spaces round-trip through write, get,
/// filter and delete.
pub async fn unusual_but_valid_keys_round_trip(engine: &dyn Engine, ctx: &Ctx) -> Result<()> {
    let table = ctx.create_table(engine).await?;
    let keys_in = [
        ("día 1 ✓", "O'Brien"),
        ("😀", "a''b"),
        ("p+q=r&s", "50% off, ok; (yes)!"),
        ("€$@:~*", "\u{FFFD}\u{1F600}"),
    ];
    for (pk, rk) in keys_in {
        let e = DynamicEntity::new(pk, rk).with("Pk", pk).with("Rk", rk);
        engine.write(&table, &WriteOp::Insert(e)).await?;
    }
    for (pk, rk) in keys_in {
        let got = get(engine, &table, pk, rk).await?.expect("entity exists");
        assert_eq!(got.get("Pk"), Some(&s(pk)));
        assert_eq!(got.get("Rk"), Some(&s(rk)));
        let found = keys_matching(engine, &table, Filter::point(pk, rk)).await?;
        assert_eq!(found, vec![(pk.to_owned(), rk.to_owned())], "point filter");
        engine
            .write(
                &table,
                &WriteOp::Delete {
                    key: EntityKey::new(pk, rk),
                    if_match: IfMatch::Any,
                },
            )
            .await?;
    }
    assert!(all_rows(engine, &table).await?.is_empty(), "all deleted");
    Ok(())
}

/// Keys containing `/ \ # ?` or control characters fail with `InvalidKey`, for
/// writes and reads, and nothing is written.
pub async fn invalid_key_characters_are_rejected(engine: &dyn Engine, ctx: &Ctx) -> Result<()> {
    let table = ctx.create_table(engine).await?;
    for bad in [
        "a/b", "a\\b", "a#b", "a?b", "\u{0}", "a\u{1F}", "\u{7F}", "x\u{9F}",
    ] {
        for (pk, rk) in [(bad, "r"), ("p", bad)] {
            let e = DynamicEntity::new(pk, rk);
            let what = format!("key ({pk:?}, {rk:?})");
            for op in crate::tables::every_mode(&e) {
                expect_kind(
                    engine.write(&table, &op).await,
                    ErrorKind::InvalidKey,
                    &format!("{what} {:?}", op.mode()),
                );
            }
            expect_kind(
                engine.get_entity(&table, &e.key(), None).await,
                ErrorKind::InvalidKey,
                &format!("get {what}"),
            );
        }
    }
    assert!(
        all_rows(engine, &table).await?.is_empty(),
        "nothing written"
    );
    Ok(())
}

/// Keys far above the 1 KiB limit fail with `InvalidKey`; long keys under it work.
pub async fn overlong_keys_are_rejected(engine: &dyn Engine, ctx: &Ctx) -> Result<()> {
    let table = ctx.create_table(engine).await?;
    let ok = "k".repeat(250);
    engine
        .write(
            &table,
            &WriteOp::Insert(DynamicEntity::new(ok.as_str(), ok.as_str())),
        )
        .await?;
    let long = "k".repeat(3000);
    for (pk, rk) in [(long.as_str(), "r"), ("p", long.as_str())] {
        expect_kind(
            engine
                .write(&table, &WriteOp::Insert(DynamicEntity::new(pk, rk)))
                .await,
            ErrorKind::InvalidKey,
            "3000-character key",
        );
    }
    assert_eq!(all_rows(engine, &table).await?.len(), 1);
    Ok(())
}

/// Extreme and special values round-trip exactly: Int32/Int64 bounds, DateTime
/// MIN/MAX, NaN, ±infinity, -0.0, empty string and empty binary.
pub async fn extreme_values_round_trip(engine: &dyn Engine, ctx: &Ctx) -> Result<()> {
    let table = ctx.create_table(engine).await?;
    let e = DynamicEntity::new("p", "r")
        .with("I32Min", Value::Int32(i32::MIN))
        .with("I32Max", Value::Int32(i32::MAX))
        .with("I64Min", Value::Int64(i64::MIN))
        .with("I64Max", Value::Int64(i64::MAX))
        .with("DtMin", Value::DateTime(DateTime::MIN))
        .with("DtMax", Value::DateTime(DateTime::MAX))
        .with("PosInf", Value::Double(f64::INFINITY))
        .with("NegInf", Value::Double(f64::NEG_INFINITY))
        .with("Tiny", Value::Double(f64::MIN_POSITIVE))
        .with("Huge", Value::Double(f64::MAX))
        .with("Empty", s(""))
        .with("EmptyBin", Value::Binary(Vec::new()))
        .with("False", Value::Boolean(false))
        .with("NilGuid", Value::Guid(Uuid::nil()))
        .with("NaN", Value::Double(f64::NAN))
        .with("NegZero", Value::Double(-0.0));
    engine.write(&table, &WriteOp::Insert(e.clone())).await?;
    let from_get = get(engine, &table, "p", "r").await?.expect("exists");
    let from_query = all_rows(engine, &table).await?.remove(0);
    for got in [from_get, from_query] {
        let mut expected = props(&e);
        let mut actual = props(&got);
        let nan = actual.remove("NaN");
        assert!(
            matches!(nan, Some(Value::Double(x)) if x.is_nan()),
            "NaN round-trips, got {nan:?}"
        );
        let zero = actual.remove("NegZero");
        let keeps_sign = ctx.capabilities().keeps_negative_zero;
        assert!(
            matches!(zero, Some(Value::Double(x)) if x == 0.0 && x.is_sign_negative() == keeps_sign),
            "-0.0 is a zero whose sign is kept (capability: {keeps_sign}), got {zero:?}"
        );
        expected.remove("NaN");
        expected.remove("NegZero");
        assert_eq!(actual, expected);
    }
    Ok(())
}

/// Delete removes the entity from gets and queries; deleting it again fails with
/// `EntityNotFound`.
pub async fn delete_removes_entity(engine: &dyn Engine, ctx: &Ctx) -> Result<()> {
    let table = ctx.create_table(engine).await?;
    for rk in ["a", "b"] {
        engine
            .write(&table, &WriteOp::Insert(DynamicEntity::new("p", rk)))
            .await?;
    }
    let delete = WriteOp::Delete {
        key: EntityKey::new("p", "a"),
        if_match: IfMatch::Any,
    };
    let outcome = engine.write(&table, &delete).await?;
    assert_eq!(outcome.etag, None, "a delete returns no ETag");
    assert_eq!(get(engine, &table, "p", "a").await?, None);
    assert_eq!(
        keys(&all_rows(engine, &table).await?),
        vec![("p".to_owned(), "b".to_owned())]
    );
    expect_kind(
        engine.write(&table, &delete).await,
        ErrorKind::EntityNotFound,
        "second delete",
    );
    Ok(())
}

/// A deleted key can be inserted again, as a new entity with only its new
/// properties.
pub async fn deleted_key_can_be_inserted_again(engine: &dyn Engine, ctx: &Ctx) -> Result<()> {
    let table = ctx.create_table(engine).await?;
    engine
        .write(
            &table,
            &WriteOp::Insert(DynamicEntity::new("p", "r").with("Old", 1)),
        )
        .await?;
    engine
        .write(
            &table,
            &WriteOp::Delete {
                key: EntityKey::new("p", "r"),
                if_match: IfMatch::Any,
            },
        )
        .await?;
    engine
        .write(
            &table,
            &WriteOp::Insert(DynamicEntity::new("p", "r").with("New", 2)),
        )
        .await?;
    let got = get(engine, &table, "p", "r").await?.expect("re-inserted");
    assert_eq!(props(&got), props_of([("New", Value::Int32(2))]));
    Ok(())
}

/// The service's answer about an entity's state names the entity
/// ([`tables_core::Error::entity_key`]): an insert of an existing key, a replace of
/// an absent one, a merge with a stale ETag.
pub async fn entity_errors_name_the_entity(engine: &dyn Engine, ctx: &Ctx) -> Result<()> {
    let table = ctx.create_table(engine).await?;
    let row = DynamicEntity::new("p", "r").with("A", 1);
    let etag = engine
        .write(&table, &WriteOp::Insert(row.clone()))
        .await?
        .etag
        .expect("an insert returns an ETag");
    engine
        .write(&table, &WriteOp::UpsertMerge(row.clone().with("B", 2)))
        .await?;
    let cases = [
        (WriteOp::Insert(row.clone()), ErrorKind::EntityAlreadyExists),
        (
            WriteOp::Replace {
                entity: DynamicEntity::new("p", "absent"),
                if_match: IfMatch::Any,
            },
            ErrorKind::EntityNotFound,
        ),
        (
            WriteOp::Merge {
                entity: row.clone(),
                if_match: IfMatch::Etag(etag),
            },
            ErrorKind::PreconditionFailed,
        ),
    ];
    for (op, kind) in cases {
        let what = format!("{:?} of {:?}", op.mode(), op.row_key());
        let err = expect_kind(engine.write(&table, &op).await, kind, &what);
        let key = EntityKey::new("p", op.row_key());
        assert_eq!(err.entity_key(), Some(&key), "{what}: {err:?}");
    }
    Ok(())
}

/// Every error says where it came from: a mistake the engine checks before
/// anything is sent or written is [`Origin::Local`] (kind, status and code as the
/// service would answer; no request id), the answer about the table's state is the
/// service's ([`Origin::Service`]; the mem engine plays the service). Only a
/// batch's errors carry a batch index.
pub async fn errors_say_whether_they_were_checked_locally(
    engine: &dyn Engine,
    ctx: &Ctx,
) -> Result<()> {
    let table = ctx.create_table(engine).await?;
    let local = |err: &tables_core::Error, what: &str| {
        assert_eq!(err.origin(), Origin::Local, "{what}: {err:?}");
        assert_eq!(err.request_id(), None, "{what}: {err:?}");
        assert!(
            err.to_string()
                .contains("checked locally, nothing was sent"),
            "{what}: {err}"
        );
    };
    let service = |err: &tables_core::Error, what: &str| {
        assert_eq!(err.origin(), Origin::Service, "{what}: {err:?}");
        assert!(
            !err.to_string().contains("checked locally"),
            "{what}: {err}"
        );
    };
    let bad_key = DynamicEntity::new("p", "a/b");
    let err = expect_kind(
        engine.write(&table, &WriteOp::Insert(bad_key)).await,
        ErrorKind::InvalidKey,
        "a key with '/'",
    );
    local(&err, "a key with '/'");
    assert_eq!(err.batch_index(), None);
    let err = expect_kind(
        engine.query(&table, &QuerySpec::new().top(0), None).await,
        ErrorKind::InvalidQuery,
        "$top=0",
    );
    local(&err, "$top=0");
    let too_many: Vec<WriteOp> = (0..=MAX_BATCH_OPERATIONS)
        .map(|i| WriteOp::Insert(DynamicEntity::new("p", format!("r{i:03}"))))
        .collect();
    let err = expect_kind(
        engine.submit_batch(&table, &too_many).await,
        ErrorKind::InvalidBatch,
        "101 operations",
    );
    local(&err, "101 operations");

    let row = DynamicEntity::new("p", "r").with("A", 1);
    engine.write(&table, &WriteOp::Insert(row.clone())).await?;
    let err = expect_kind(
        engine.write(&table, &WriteOp::Insert(row.clone())).await,
        ErrorKind::EntityAlreadyExists,
        "insert of an existing entity",
    );
    service(&err, "insert of an existing entity");
    assert_eq!(err.batch_index(), None, "a single write is no batch");
    let absent = WriteOp::Replace {
        entity: DynamicEntity::new("p", "absent"),
        if_match: IfMatch::Any,
    };
    let err = expect_kind(
        engine.write(&table, &absent).await,
        ErrorKind::EntityNotFound,
        "replace of an absent entity",
    );
    service(&err, "replace of an absent entity");
    assert_eq!(err.batch_index(), None, "a single write is no batch");
    let batch = [
        WriteOp::Insert(DynamicEntity::new("p", "new")),
        WriteOp::Insert(row),
    ];
    let err = expect_kind(
        engine.submit_batch(&table, &batch).await,
        ErrorKind::EntityAlreadyExists,
        "batch inserting an existing entity",
    );
    service(&err, "batch inserting an existing entity");
    assert_eq!(err.batch_index(), Some(1), "{err:?}");
    Ok(())
}
