//! `$select` and `$top`.

use crate::prelude::*;

async fn seed(engine: &dyn Engine, table: &str, n: i32) -> Result<()> {
    for i in 0..n {
        let e = DynamicEntity::new("p", format!("r{i:03}"))
            .with("A", Value::Int32(i))
            .with("B", format!("b{i}"))
            .with("C", Value::Boolean(true));
        engine.write(table, &WriteOp::Insert(e)).await?;
    }
    Ok(())
}

/// `$select` returns only the named properties, plus the keys, Timestamp and ETag.
pub async fn select_returns_named_properties_and_system_ones(
    engine: &dyn Engine,
    ctx: &Ctx,
) -> Result<()> {
    let table = ctx.create_table(engine).await?;
    seed(engine, &table, 3).await?;
    let rows = query_all(engine, &table, &QuerySpec::new().select(["A", "C"])).await?;
    assert_eq!(rows.len(), 3, "select does not filter rows");
    for (i, row) in rows.iter().enumerate() {
        assert_eq!(row.partition_key, "p");
        assert_eq!(row.row_key, format!("r{i:03}"));
        expect_system_properties(row, "selected row");
        assert_eq!(
            props(row),
            props_of([("A", Value::Int32(i as i32)), ("C", Value::Boolean(true))]),
            "only A and C"
        );
    }
    Ok(())
}

/// Selecting a property an entity lacks returns the entity without it.
pub async fn select_of_missing_property_keeps_the_row(
    engine: &dyn Engine,
    ctx: &Ctx,
) -> Result<()> {
    let table = ctx.create_table(engine).await?;
    engine
        .write(
            &table,
            &WriteOp::Insert(DynamicEntity::new("p", "a").with("A", 1)),
        )
        .await?;
    engine
        .write(
            &table,
            &WriteOp::Insert(DynamicEntity::new("p", "b").with("B", 2)),
        )
        .await?;
    let rows = query_all(engine, &table, &QuerySpec::new().select(["A", "Nope"])).await?;
    assert_eq!(keys(&rows).len(), 2, "both rows");
    assert_eq!(props(&rows[0]), props_of([("A", Value::Int32(1))]));
    assert!(
        rows[1].is_empty(),
        "b has neither A nor Nope: {:?}",
        rows[1]
    );
    expect_system_properties(&rows[1], "row without selected properties");
    Ok(())
}

/// `get_entity` honours `select` the same way.
pub async fn select_on_get_entity(engine: &dyn Engine, ctx: &Ctx) -> Result<()> {
    let table = ctx.create_table(engine).await?;
    seed(engine, &table, 1).await?;
    let select = vec!["B".to_owned()];
    let got = engine
        .get_entity(&table, &EntityKey::new("p", "r000"), Some(&select))
        .await?
        .expect("exists");
    assert_eq!(props(&got), props_of([("B", s("b0"))]));
    expect_system_properties(&got, "selected get");
    let full = get(engine, &table, "p", "r000").await?.expect("exists");
    assert_eq!(got.etag, full.etag);
    assert_eq!(full.len(), 3, "select did not change the stored entity");
    Ok(())
}

/// `$select` combines with `$filter`: the filter sees every property, the result
/// only the selected ones.
pub async fn select_with_filter_on_unselected_property(
    engine: &dyn Engine,
    ctx: &Ctx,
) -> Result<()> {
    let table = ctx.create_table(engine).await?;
    seed(engine, &table, 5).await?;
    let spec = QuerySpec::new()
        .filter(col("A").ge(Value::Int32(3)))
        .select(["B"]);
    let rows = query_all(engine, &table, &spec).await?;
    let got: Vec<_> = rows.iter().map(props).collect();
    assert_eq!(
        got,
        vec![props_of([("B", s("b3"))]), props_of([("B", s("b4"))])]
    );
    Ok(())
}

/// `$top` bounds every page, not the total: following the tokens yields every row.
pub async fn top_bounds_each_page_not_the_total(engine: &dyn Engine, ctx: &Ctx) -> Result<()> {
    let table = ctx.create_table(engine).await?;
    seed(engine, &table, 10).await?;
    let spec = QuerySpec::new().top(3);
    let first = engine.query(&table, &spec, None).await?;
    assert!(first.items.len() <= 3, "first page bounded by $top");
    assert!(
        first.continuation.is_some(),
        "10 rows with $top 3 cannot fit one page"
    );
    let rows = query_all(engine, &table, &spec).await?;
    assert_eq!(rows.len(), 10, "every row over all pages");
    Ok(())
}

/// `$top` of 0 or above 1,000 fails with `InvalidQuery` before anything runs (even
/// on a missing table); 1 and 1,000 are accepted.
pub async fn top_out_of_range_is_invalid(engine: &dyn Engine, ctx: &Ctx) -> Result<()> {
    let table = ctx.create_table(engine).await?;
    seed(engine, &table, 2).await?;
    let missing = ctx.table_name("missing");
    for top in [0, 1001, u32::MAX] {
        for t in [&table, &missing] {
            expect_kind(
                engine.query(t, &QuerySpec::new().top(top), None).await,
                ErrorKind::InvalidQuery,
                &format!("$top {top} on {t}"),
            );
        }
    }
    for top in [1, 1000] {
        assert_eq!(
            query_all(engine, &table, &QuerySpec::new().top(top))
                .await?
                .len(),
            2
        );
    }
    Ok(())
}

/// An empty `$select` or one naming a property twice fails with `InvalidQuery`.
pub async fn select_empty_or_duplicate_is_invalid(engine: &dyn Engine, ctx: &Ctx) -> Result<()> {
    let table = ctx.create_table(engine).await?;
    seed(engine, &table, 1).await?;
    let empty: [&str; 0] = [];
    for spec in [
        QuerySpec::new().select(empty),
        QuerySpec::new().select(["A", "B", "A"]),
    ] {
        expect_kind(
            engine.query(&table, &spec, None).await,
            ErrorKind::InvalidQuery,
            &format!("select {:?}", spec.select),
        );
    }
    Ok(())
}

/// `get_entity` checks its `select` as a query does: empty or naming a property
/// twice fails with `InvalidQuery`.
pub async fn select_on_get_entity_empty_or_duplicate_is_invalid(
    engine: &dyn Engine,
    ctx: &Ctx,
) -> Result<()> {
    let table = ctx.create_table(engine).await?;
    seed(engine, &table, 1).await?;
    let key = EntityKey::new("p", "r000");
    for select in [Vec::new(), vec!["A".to_owned(), "A".to_owned()]] {
        expect_kind(
            engine.get_entity(&table, &key, Some(&select)).await,
            ErrorKind::InvalidQuery,
            &format!("get_entity with select {select:?}"),
        );
    }
    Ok(())
}
