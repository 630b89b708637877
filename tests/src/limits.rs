//! Entity limits: property count, value size, entity size, property names.
//!
//! Sizes are tested well away from the exact boundaries, which the service itself
//! treats inconsistently (docs/service-behaviour.md#limits-and-checks-it-doesnt-make).

use crate::prelude::*;

fn with_n_properties(rk: &str, n: usize) -> DynamicEntity {
    (0..n).fold(DynamicEntity::new("p", rk), |e, i| {
        e.with(format!("P{i:03}"), Value::Int32(i as i32))
    })
}

/// 252 user properties are accepted; 253 fail with `TooManyProperties`, for insert,
/// upserts and merge (where the merged result counts).
pub async fn more_than_252_properties_are_rejected(engine: &dyn Engine, ctx: &Ctx) -> Result<()> {
    if !ctx.capabilities().enforces_property_limits {
        return Ok(());
    }
    let table = ctx.create_table(engine).await?;
    engine
        .write(&table, &WriteOp::Insert(with_n_properties("ok", 252)))
        .await?;
    let too_many = with_n_properties("bad", 253);
    for op in [
        WriteOp::Insert(too_many.clone()),
        WriteOp::UpsertReplace(too_many.clone()),
        WriteOp::UpsertMerge(too_many.clone()),
    ] {
        expect_kind(
            engine.write(&table, &op).await,
            ErrorKind::TooManyProperties,
            &format!("{:?} with 253 properties", op.mode()),
        );
    }
    let rows = all_rows(engine, &table).await?;
    assert_eq!(keys(&rows), vec![("p".to_owned(), "ok".to_owned())]);
    assert_eq!(rows[0].len(), 252);
    Ok(())
}

/// A merge that would leave more than 252 properties fails with
/// `TooManyProperties` and leaves the entity unchanged.
pub async fn merge_beyond_252_properties_is_rejected(engine: &dyn Engine, ctx: &Ctx) -> Result<()> {
    if !ctx.capabilities().enforces_property_count_on_merge {
        return Ok(());
    }
    let table = ctx.create_table(engine).await?;
    engine
        .write(&table, &WriteOp::Insert(with_n_properties("r", 200)))
        .await?;
    let before = get(engine, &table, "p", "r").await?;
    let extra = (0..60).fold(DynamicEntity::new("p", "r"), |e, i| {
        e.with(format!("Q{i:03}"), Value::Int32(i))
    });
    for op in [
        WriteOp::Merge {
            entity: extra.clone(),
            if_match: IfMatch::Any,
        },
        WriteOp::UpsertMerge(extra.clone()),
    ] {
        expect_kind(
            engine.write(&table, &op).await,
            ErrorKind::TooManyProperties,
            &format!("{:?} to 260 properties", op.mode()),
        );
    }
    assert_eq!(get(engine, &table, "p", "r").await?, before, "unchanged");
    Ok(())
}

/// A string of more than 64 KiB as UTF-16 fails with `PropertyValueTooLarge`; the
/// size counts UTF-16 units, so 20,000 emoji (40,000 units) are too large although
/// they are only 20,000 characters. 30,000 ASCII characters are accepted.
pub async fn oversized_string_is_rejected(engine: &dyn Engine, ctx: &Ctx) -> Result<()> {
    if !ctx.capabilities().enforces_property_limits {
        return Ok(());
    }
    let table = ctx.create_table(engine).await?;
    let ok = "a".repeat(30_000);
    engine
        .write(
            &table,
            &WriteOp::Insert(DynamicEntity::new("p", "ok").with("S", ok.as_str())),
        )
        .await?;
    let got = get(engine, &table, "p", "ok").await?.expect("exists");
    assert_eq!(got.get("S"), Some(&s(&ok)), "a 60 KB string round-trips");
    for (what, big) in [
        ("40,000 ASCII characters", "a".repeat(40_000)),
        ("20,000 emoji", "\u{1F600}".repeat(20_000)),
    ] {
        let e = DynamicEntity::new("p", "bad").with("S", big.as_str());
        let err = expect_kind(
            engine.write(&table, &WriteOp::Insert(e)).await,
            ErrorKind::PropertyValueTooLarge,
            what,
        );
        if let Some(name) = err.property() {
            assert_eq!(name, "S", "{what}: the error names the property");
        }
    }
    assert_eq!(all_rows(engine, &table).await?.len(), 1);
    Ok(())
}

/// Binary values above 64 KiB fail with `PropertyValueTooLarge`; 60,000 bytes are
/// accepted.
pub async fn oversized_binary_is_rejected(engine: &dyn Engine, ctx: &Ctx) -> Result<()> {
    if !ctx.capabilities().enforces_property_limits {
        return Ok(());
    }
    let table = ctx.create_table(engine).await?;
    let ok: Vec<u8> = (0..60_000u32).map(|i| (i % 251) as u8).collect();
    engine
        .write(
            &table,
            &WriteOp::Insert(DynamicEntity::new("p", "ok").with("B", Value::Binary(ok.clone()))),
        )
        .await?;
    let got = get(engine, &table, "p", "ok").await?.expect("exists");
    assert_eq!(got.get("B"), Some(&Value::Binary(ok)));
    let big = DynamicEntity::new("p", "bad").with("B", Value::Binary(vec![7; 80_000]));
    expect_kind(
        engine.write(&table, &WriteOp::Insert(big)).await,
        ErrorKind::PropertyValueTooLarge,
        "80,000 bytes",
    );
    assert_eq!(all_rows(engine, &table).await?.len(), 1);
    Ok(())
}

/// An entity above 1 MiB fails with `EntityTooLarge` even when each value is under
/// 64 KiB, on insert and replace; the stored entity is unchanged.
pub async fn oversized_entity_is_rejected(engine: &dyn Engine, ctx: &Ctx) -> Result<()> {
    if !ctx.capabilities().enforces_property_limits {
        return Ok(());
    }
    let table = ctx.create_table(engine).await?;
    let chunk = "z".repeat(30_000); // 60 KB each
    let big_as = |rk: &str, n: usize| {
        (0..n).fold(DynamicEntity::new("p", rk), |e, i| {
            e.with(format!("S{i:02}"), chunk.as_str())
        })
    };
    let big = |n: usize| big_as("r", n);
    engine.write(&table, &WriteOp::Insert(big(12))).await?; // ~720 KB
    let before = get(engine, &table, "p", "r").await?;
    for op in [
        WriteOp::Replace {
            entity: big(20), // ~1.2 MB
            if_match: IfMatch::Any,
        },
        WriteOp::UpsertReplace(big(20)),
    ] {
        expect_kind(
            engine.write(&table, &op).await,
            ErrorKind::EntityTooLarge,
            &format!("{:?} of ~1.2 MB", op.mode()),
        );
    }
    assert_eq!(get(engine, &table, "p", "r").await?, before, "unchanged");
    expect_kind(
        engine
            .write(&table, &WriteOp::Insert(big_as("other", 20)))
            .await,
        ErrorKind::EntityTooLarge,
        "insert of ~1.2 MB",
    );
    assert_eq!(all_rows(engine, &table).await?.len(), 1);
    Ok(())
}

/// Property names that are empty, not identifiers, or longer than 255 characters
/// fail with `InvalidProperty`; a 255-character name is accepted.
pub async fn invalid_property_names_are_rejected(engine: &dyn Engine, ctx: &Ctx) -> Result<()> {
    if !ctx.capabilities().enforces_property_limits {
        return Ok(());
    }
    let table = ctx.create_table(engine).await?;
    let longest = format!("N{}", "n".repeat(254));
    engine
        .write(
            &table,
            &WriteOp::Insert(DynamicEntity::new("p", "ok").with(longest.as_str(), 1)),
        )
        .await?;
    let too_long = format!("N{}", "n".repeat(255));
    for name in ["", "my-prop", "has space", "a/b", too_long.as_str()] {
        let e = DynamicEntity::new("p", "bad").with(name, 1);
        expect_kind(
            engine.write(&table, &WriteOp::Insert(e)).await,
            ErrorKind::InvalidProperty,
            &format!("property name {name:?}"),
        );
    }
    assert_eq!(all_rows(engine, &table).await?.len(), 1);
    Ok(())
}

/// Limits apply to every mode: an oversized value in a merge, upsert or replace is
/// rejected and leaves the stored entity unchanged.
pub async fn limits_apply_to_updates(engine: &dyn Engine, ctx: &Ctx) -> Result<()> {
    if !ctx.capabilities().enforces_property_limits {
        return Ok(());
    }
    let table = ctx.create_table(engine).await?;
    engine
        .write(
            &table,
            &WriteOp::Insert(DynamicEntity::new("p", "r").with("A", 1)),
        )
        .await?;
    let before = get(engine, &table, "p", "r").await?;
    let big = DynamicEntity::new("p", "r").with("S", "b".repeat(50_000).as_str());
    for op in [
        WriteOp::Replace {
            entity: big.clone(),
            if_match: IfMatch::Any,
        },
        WriteOp::Merge {
            entity: big.clone(),
            if_match: IfMatch::Any,
        },
        WriteOp::UpsertReplace(big.clone()),
        WriteOp::UpsertMerge(big.clone()),
    ] {
        expect_kind(
            engine.write(&table, &op).await,
            ErrorKind::PropertyValueTooLarge,
            &format!("{:?} with a 100 KB string", op.mode()),
        );
    }
    assert_eq!(get(engine, &table, "p", "r").await?, before, "unchanged");
    Ok(())
}
