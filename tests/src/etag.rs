//! ETags and Timestamps: every write changes them, reads agree with writes.

use crate::prelude::*;

/// Every successful write (all five modes that store an entity) sets a new ETag and a
/// new Timestamp, and returns them.
pub async fn every_write_changes_etag_and_timestamp(engine: &dyn Engine, ctx: &Ctx) -> Result<()> {
    let table = ctx.create_table(engine).await?;
    let e = |v: i32| DynamicEntity::new("p", "r").with("V", Value::Int32(v));
    let ops = [
        WriteOp::Insert(e(0)),
        WriteOp::Replace {
            entity: e(1),
            if_match: IfMatch::Any,
        },
        WriteOp::Merge {
            entity: e(2),
            if_match: IfMatch::Any,
        },
        WriteOp::UpsertReplace(e(3)),
        WriteOp::UpsertMerge(e(4)),
    ];
    let mut seen_etags: Vec<ETag> = Vec::new();
    let mut seen_times: Vec<DateTime> = Vec::new();
    for op in ops {
        let what = format!("{:?}", op.mode());
        let outcome = engine.write(&table, &op).await?;
        let got = get(engine, &table, "p", "r").await?.expect("exists");
        let etag = got.etag.clone().expect("stored ETag");
        let ts = got.timestamp.expect("stored Timestamp");
        assert_eq!(
            outcome.etag.as_ref(),
            Some(&etag),
            "{what}: returned ETag is stored"
        );
        if let Some(returned) = outcome.timestamp {
            assert_eq!(returned, ts, "{what}: returned Timestamp is stored");
        }
        assert!(
            !seen_etags.contains(&etag),
            "{what}: a new ETag, got a previous one"
        );
        assert!(!seen_times.contains(&ts), "{what}: a new Timestamp");
        seen_etags.push(etag);
        seen_times.push(ts);
    }
    Ok(())
}

/// Writing identical content still produces a new ETag, and the old one goes stale.
pub async fn identical_rewrite_changes_etag(engine: &dyn Engine, ctx: &Ctx) -> Result<()> {
    let table = ctx.create_table(engine).await?;
    let e = DynamicEntity::new("p", "r").with("V", 1);
    let first = engine.write(&table, &WriteOp::Insert(e.clone())).await?;
    let old = first.etag.expect("ETag");
    let second = engine
        .write(
            &table,
            &WriteOp::Replace {
                entity: e.clone(),
                if_match: IfMatch::Etag(old.clone()),
            },
        )
        .await?;
    assert_ne!(second.etag.as_ref(), Some(&old));
    expect_kind(
        engine
            .write(
                &table,
                &WriteOp::Replace {
                    entity: e,
                    if_match: IfMatch::Etag(old),
                },
            )
            .await,
        ErrorKind::PreconditionFailed,
        "replace with the pre-rewrite ETag",
    );
    Ok(())
}

/// The ETag and Timestamp a query returns are those a get returns.
pub async fn query_and_get_agree_on_etag_and_timestamp(
    engine: &dyn Engine,
    ctx: &Ctx,
) -> Result<()> {
    let table = ctx.create_table(engine).await?;
    for i in 0..5 {
        engine
            .write(
                &table,
                &WriteOp::Insert(DynamicEntity::new("p", format!("r{i}")).with("I", i)),
            )
            .await?;
    }
    for row in all_rows(engine, &table).await? {
        expect_system_properties(&row, "query row");
        let got = get(engine, &table, &row.partition_key, &row.row_key)
            .await?
            .expect("exists");
        assert_eq!(got.etag, row.etag, "ETag of {}", row.row_key);
        assert_eq!(got.timestamp, row.timestamp, "Timestamp of {}", row.row_key);
    }
    Ok(())
}

/// A write that fails changes neither the ETag nor the Timestamp.
pub async fn failed_write_keeps_etag(engine: &dyn Engine, ctx: &Ctx) -> Result<()> {
    let table = ctx.create_table(engine).await?;
    engine
        .write(
            &table,
            &WriteOp::Insert(DynamicEntity::new("p", "r").with("A", 1)),
        )
        .await?;
    let before = get(engine, &table, "p", "r").await?.expect("exists");
    expect_kind(
        engine
            .write(&table, &WriteOp::Insert(DynamicEntity::new("p", "r")))
            .await,
        ErrorKind::EntityAlreadyExists,
        "insert again",
    );
    expect_kind(
        engine
            .write(
                &table,
                &WriteOp::Merge {
                    entity: DynamicEntity::new("p", "r").with("A", 2),
                    if_match: IfMatch::Etag(ETag::new(
                        "W/\"datetime'2000-01-01T00%3A00%3A00.0000000Z'\"",
                    )),
                },
            )
            .await,
        ErrorKind::PreconditionFailed,
        "merge with a made-up ETag",
    );
    let after = get(engine, &table, "p", "r").await?.expect("exists");
    assert_eq!(after, before, "ETag, Timestamp and properties unchanged");
    Ok(())
}

/// A user-supplied Timestamp or ETag on the written entity is ignored: the server
/// sets both.
pub async fn client_timestamp_and_etag_are_ignored(engine: &dyn Engine, ctx: &Ctx) -> Result<()> {
    let table = ctx.create_table(engine).await?;
    let fake_ts = dt(TICKS_2024);
    let fake_etag = ETag::new("W/\"datetime'2024-01-01T00%3A00%3A00.0000000Z'\"");
    let mut e = DynamicEntity::new("p", "r").with("A", 1);
    e.timestamp = Some(fake_ts);
    e.etag = Some(fake_etag.clone());
    let outcome = engine.write(&table, &WriteOp::Insert(e)).await?;
    let got = get(engine, &table, "p", "r").await?.expect("exists");
    assert_ne!(got.timestamp, Some(fake_ts), "server Timestamp");
    assert_ne!(got.etag.as_ref(), Some(&fake_etag), "server ETag");
    assert_eq!(outcome.etag, got.etag);
    Ok(())
}
