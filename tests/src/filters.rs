//! `$filter` on every Edm type, strict typing, missing properties, boolean logic,
//! keys and Timestamp.

use crate::prelude::*;

/// Inserts rows `r0, r1, ..` with property `prop` set to `values[i]`, plus a row
/// `rx` without the property.
async fn rows_with(engine: &dyn Engine, table: &str, prop: &str, values: &[Value]) -> Result<()> {
    for (i, v) in values.iter().enumerate() {
        let e = DynamicEntity::new("p", format!("r{i}")).with(prop, v.clone());
        engine.write(table, &WriteOp::Insert(e)).await?;
    }
    engine
        .write(
            table,
            &WriteOp::Insert(DynamicEntity::new("p", "rx").with("Other", 1)),
        )
        .await?;
    Ok(())
}

#[track_caller]
fn same(got: Vec<String>, expected: &[&str], what: &str) {
    assert_eq!(got, expected, "{what}: matching RowKeys");
}

/// Checks all six operators on three ascending values `v[0] < v[1] < v[2]`; the
/// row without the property never matches.
async fn six_operators(engine: &dyn Engine, table: &str, prop: &str, v: &[Value; 3]) -> Result<()> {
    rows_with(engine, table, prop, v).await?;
    let c = col(prop);
    let m = v[1].clone();
    let cases: [(Filter, &[&str]); 6] = [
        (c.eq(m.clone()), &["r1"]),
        (c.ne(m.clone()), &["r0", "r2"]),
        (c.gt(m.clone()), &["r2"]),
        (c.ge(m.clone()), &["r1", "r2"]),
        (c.lt(m.clone()), &["r0"]),
        (c.le(m.clone()), &["r0", "r1"]),
    ];
    for (filter, expected) in cases {
        let what = format!("{prop} {filter:?}");
        same(
            row_keys_matching(engine, table, filter).await?,
            expected,
            &what,
        );
    }
    Ok(())
}

/// Checks `eq` and `ne` on two distinct values.
async fn equality_only(engine: &dyn Engine, table: &str, prop: &str, v: &[Value; 2]) -> Result<()> {
    rows_with(engine, table, prop, v).await?;
    let c = col(prop);
    same(
        row_keys_matching(engine, table, c.eq(v[0].clone())).await?,
        &["r0"],
        "eq v0",
    );
    same(
        row_keys_matching(engine, table, c.eq(v[1].clone())).await?,
        &["r1"],
        "eq v1",
    );
    same(
        row_keys_matching(engine, table, c.ne(v[0].clone())).await?,
        &["r1"],
        "ne v0",
    );
    Ok(())
}

/// String comparisons are ordinal and case-sensitive.
pub async fn filter_string(engine: &dyn Engine, ctx: &Ctx) -> Result<()> {
    let table = ctx.create_table(engine).await?;
    six_operators(engine, &table, "S", &[s("Apple"), s("apple"), s("banana")]).await
}

/// Int32 comparisons, including negative values and the bounds.
pub async fn filter_int32(engine: &dyn Engine, ctx: &Ctx) -> Result<()> {
    let table = ctx.create_table(engine).await?;
    let v = [
        Value::Int32(i32::MIN),
        Value::Int32(-1),
        Value::Int32(i32::MAX),
    ];
    six_operators(engine, &table, "I", &v).await
}

/// Int64 comparisons beyond the Int32 range, including the bounds.
pub async fn filter_int64(engine: &dyn Engine, ctx: &Ctx) -> Result<()> {
    let table = ctx.create_table(engine).await?;
    let v = [
        Value::Int64(i64::MIN),
        Value::Int64(5_000_000_000),
        Value::Int64(i64::MAX),
    ];
    six_operators(engine, &table, "L", &v).await
}

/// Double comparisons with negative and fractional values.
pub async fn filter_double(engine: &dyn Engine, ctx: &Ctx) -> Result<()> {
    let table = ctx.create_table(engine).await?;
    let v = [
        Value::Double(-1e10),
        Value::Double(-0.25),
        Value::Double(2.5),
    ];
    six_operators(engine, &table, "D", &v).await
}

/// Boolean `eq` and `ne`.
pub async fn filter_boolean(engine: &dyn Engine, ctx: &Ctx) -> Result<()> {
    let table = ctx.create_table(engine).await?;
    equality_only(
        engine,
        &table,
        "B",
        &[Value::Boolean(false), Value::Boolean(true)],
    )
    .await
}

/// DateTime comparisons at 100 ns precision (values one tick apart), and at the
/// range's ends.
pub async fn filter_datetime(engine: &dyn Engine, ctx: &Ctx) -> Result<()> {
    let table = ctx.create_table(engine).await?;
    let step = if ctx.capabilities().datetime_filter_precision_100ns {
        1
    } else {
        10_000 // 1 ms: the precision the backend declares.
    };
    let v = [
        Value::DateTime(dt(TICKS_2024)),
        Value::DateTime(dt(TICKS_2024 + step)),
        Value::DateTime(dt(TICKS_2024 + 2 * step)),
    ];
    six_operators(engine, &table, "T", &v).await?;
    let bounds = ctx.create_named(engine, "b").await?;
    let v = [
        Value::DateTime(DateTime::MIN),
        Value::DateTime(dt(TICKS_2024)),
        Value::DateTime(DateTime::MAX),
    ];
    six_operators(engine, &bounds, "T", &v).await
}

/// Guid `eq` and `ne`.
pub async fn filter_guid(engine: &dyn Engine, ctx: &Ctx) -> Result<()> {
    let table = ctx.create_table(engine).await?;
    let v = [
        Value::Guid(Uuid::from_u128(0xa455c695_df98_5678_aaaa_81d3367e5a34)),
        Value::Guid(Uuid::from_u128(0xa455c695_df98_5678_aaaa_81d3367e5a35)),
    ];
    equality_only(engine, &table, "G", &v).await
}

/// Binary `eq` and `ne`, including bytes that are not valid UTF-8.
pub async fn filter_binary(engine: &dyn Engine, ctx: &Ctx) -> Result<()> {
    let table = ctx.create_table(engine).await?;
    let v = [
        Value::Binary(vec![0x0a, 0x0b]),
        Value::Binary(vec![0xff, 0x00, 0x0b]),
    ];
    equality_only(engine, &table, "Bin", &v).await
}

/// A literal of one Edm type never matches a property of another: no coercion
/// between Int32, Int64, Double and String; across types only `ne` holds, and an
/// absent property matches nothing (docs/protocol.md §6.1). Every cell of that
/// table, on every engine that follows Azure.
pub async fn filter_types_are_strict(engine: &dyn Engine, ctx: &Ctx) -> Result<()> {
    if !ctx.capabilities().strict_filter_typing {
        return Ok(());
    }
    let table = ctx.create_table(engine).await?;
    let rows = [
        ("d5", Some(Value::Double(5.0))),
        ("d55", Some(Value::Double(5.5))),
        ("i32", Some(Value::Int32(5))),
        ("i64", Some(Value::Int64(5))),
        ("none", None),
        ("s", Some(s("5"))),
    ];
    for (rk, v) in rows {
        let mut e = DynamicEntity::new("p", rk).with("Other", 1);
        if let Some(v) = v {
            e = e.with("N", v);
        }
        engine.write(&table, &WriteOp::Insert(e)).await?;
    }
    let n = col("N");
    // For each constant: the rows matching eq, ne, gt, ge, lt, le.
    let table_of_cells: [(Value, [&[&str]; 6]); 5] = [
        (
            Value::Int32(5),
            [
                &["i32"],
                &["d5", "d55", "i64", "s"],
                &[],
                &["i32"],
                &[],
                &["i32"],
            ],
        ),
        (
            Value::Int64(5),
            [
                &["i64"],
                &["d5", "d55", "i32", "s"],
                &[],
                &["i64"],
                &[],
                &["i64"],
            ],
        ),
        (
            Value::Double(5.0),
            [
                &["d5"],
                &["d55", "i32", "i64", "s"],
                &["d55"],
                &["d5", "d55"],
                &[],
                &["d5"],
            ],
        ),
        (
            s("5"),
            [
                &["s"],
                &["d5", "d55", "i32", "i64"],
                &[],
                &["s"],
                &[],
                &["s"],
            ],
        ),
        (
            Value::Int32(6),
            [
                &[],
                &["d5", "d55", "i32", "i64", "s"],
                &[],
                &[],
                &["i32"],
                &["i32"],
            ],
        ),
    ];
    for (constant, expected) in table_of_cells {
        for (op, expected) in CmpOp::ALL.into_iter().zip(expected) {
            let filter = n.compare(op, constant.clone());
            let what = format!("N {} {constant:?}", op.keyword());
            same(
                row_keys_matching(engine, &table, filter).await?,
                expected,
                &what,
            );
        }
    }
    Ok(())
}

/// A comparison on a property the entity lacks never matches, not even `ne`.
pub async fn filter_missing_property_never_matches(engine: &dyn Engine, ctx: &Ctx) -> Result<()> {
    let table = ctx.create_table(engine).await?;
    let rows = [
        DynamicEntity::new("p", "a").with("N", 1).with("S", "x"),
        DynamicEntity::new("p", "b"),
        DynamicEntity::new("p", "c").with("N", 2).with("S", ""),
    ];
    for e in rows {
        engine.write(&table, &WriteOp::Insert(e)).await?;
    }
    let cases: [(Filter, &[&str]); 6] = [
        (col("N").ne(Value::Int32(1)), &["c"]),
        (col("N").ne(Value::Int32(3)), &["a", "c"]),
        (col("N").lt(Value::Int32(100)), &["a", "c"]),
        (col("S").ne(s("x")), &["c"]),
        (col("S").ge(s("")), &["a", "c"]),
        (col("Nope").ne(Value::Int32(0)), &[]),
    ];
    for (filter, expected) in cases {
        let what = format!("{filter:?}");
        same(
            row_keys_matching(engine, &table, filter).await?,
            expected,
            &what,
        );
    }
    Ok(())
}

/// `and`, `or` and `not` combine comparisons, nested as built.
pub async fn filter_and_or_not(engine: &dyn Engine, ctx: &Ctx) -> Result<()> {
    let table = ctx.create_table(engine).await?;
    for i in 0..10 {
        let e = DynamicEntity::new("p", format!("r{i}"))
            .with("A", Value::Int32(i))
            .with("Even", Value::Boolean(i % 2 == 0));
        engine.write(&table, &WriteOp::Insert(e)).await?;
    }
    let a = col("A");
    let even = col("Even");
    let cases: [(Filter, &[&str]); 5] = [
        (
            a.gt(Value::Int32(2)).and(even.eq(true)),
            &["r4", "r6", "r8"],
        ),
        (
            a.lt(Value::Int32(2)).or(a.gt(Value::Int32(8))),
            &["r0", "r1", "r9"],
        ),
        (a.lt(Value::Int32(8)).negate(), &["r8", "r9"]),
        (
            a.lt(Value::Int32(3))
                .or(a.gt(Value::Int32(7)))
                .and(even.eq(true).negate()),
            &["r1", "r9"],
        ),
        (
            a.lt(Value::Int32(3))
                .or(a.gt(Value::Int32(7)).and(even.eq(true).negate())),
            &["r0", "r1", "r2", "r9"],
        ),
    ];
    for (filter, expected) in cases {
        let what = format!("{filter:?}");
        same(
            row_keys_matching(engine, &table, filter).await?,
            expected,
            &what,
        );
    }
    Ok(())
}

/// Filters on PartitionKey and RowKey (points, ranges) combine with properties.
pub async fn filter_on_keys(engine: &dyn Engine, ctx: &Ctx) -> Result<()> {
    let table = ctx.create_table(engine).await?;
    for p in ["p1", "p2", "p3"] {
        for i in 0..5 {
            let e = DynamicEntity::new(p, format!("r{i}")).with("I", Value::Int32(i));
            engine.write(&table, &WriteOp::Insert(e)).await?;
        }
    }
    let pk = Column::partition_key();
    let rk = Column::row_key();
    let own = |v: &[(&str, &str)]| -> Vec<(String, String)> {
        v.iter()
            .map(|(a, b)| ((*a).to_owned(), (*b).to_owned()))
            .collect()
    };
    let point = keys_matching(engine, &table, Filter::point("p2", "r3")).await?;
    assert_eq!(point, own(&[("p2", "r3")]), "point");
    let range = pk.eq("p2").and(rk.ge("r1")).and(rk.lt("r3"));
    assert_eq!(
        keys_matching(engine, &table, range).await?,
        own(&[("p2", "r1"), ("p2", "r2")]),
        "row range in a partition"
    );
    let cross = pk.gt("p1").and(col("I").eq(Value::Int32(4)));
    assert_eq!(
        keys_matching(engine, &table, cross).await?,
        own(&[("p2", "r4"), ("p3", "r4")]),
        "partition range plus property"
    );
    let either = Filter::partition_key("p1")
        .and(rk.eq("r0"))
        .or(Filter::partition_key("p3").and(rk.eq("r4")));
    assert_eq!(
        keys_matching(engine, &table, either).await?,
        own(&[("p1", "r0"), ("p3", "r4")]),
        "two points"
    );
    assert!(keys_matching(engine, &table, Filter::partition_key("p9"))
        .await?
        .is_empty());
    Ok(())
}

/// Filters on Timestamp compare the server's write times. (On Cosmos DB for Table,
/// [`tables_core::EngineCapabilities::timestamp_filters`] `false`, every such filter
/// matches nothing, as that service answers: the scenario checks exactly that.)
pub async fn filter_on_timestamp(engine: &dyn Engine, ctx: &Ctx) -> Result<()> {
    let table = ctx.create_table(engine).await?;
    let mut times = Vec::new();
    for i in 0..3 {
        engine
            .write(
                &table,
                &WriteOp::Insert(DynamicEntity::new("p", format!("r{i}"))),
            )
            .await?;
        let got = get(engine, &table, "p", &format!("r{i}"))
            .await?
            .expect("exists");
        times.push(got.timestamp.expect("Timestamp"));
    }
    let max = *times.iter().max().expect("three times");
    let min = *times.iter().min().expect("three times");
    let ts = Column::timestamp();
    if !engine.capabilities().timestamp_filters {
        for filter in [
            ts.le(Value::DateTime(max)),
            ts.ge(Value::DateTime(min)),
            ts.eq(Value::DateTime(times[0])),
        ] {
            let rows = row_keys_matching(engine, &table, filter.clone()).await?;
            same(
                rows,
                &[],
                &format!("{filter:?} where Timestamp filters match nothing"),
            );
        }
        return Ok(());
    }
    let all = row_keys_matching(engine, &table, ts.le(Value::DateTime(max))).await?;
    same(all, &["r0", "r1", "r2"], "Timestamp le max");
    let all = row_keys_matching(engine, &table, ts.ge(Value::DateTime(min))).await?;
    same(all, &["r0", "r1", "r2"], "Timestamp ge min");
    let none = row_keys_matching(engine, &table, ts.gt(Value::DateTime(max))).await?;
    same(none, &[], "Timestamp gt max");
    let none = row_keys_matching(engine, &table, ts.lt(Value::DateTime(min))).await?;
    same(none, &[], "Timestamp lt min");
    let first = row_keys_matching(engine, &table, ts.eq(Value::DateTime(times[0]))).await?;
    assert!(
        first.contains(&"r0".to_owned()),
        "Timestamp eq r0's time finds r0"
    );
    Ok(())
}

/// String constants with quotes and other OData-special characters match exactly.
pub async fn filter_string_constants_are_escaped(engine: &dyn Engine, ctx: &Ctx) -> Result<()> {
    let table = ctx.create_table(engine).await?;
    let values = ["O'Brien", "it''s", "'", "a and b", "x eq 'y'", "%20&$=+/?#"];
    for (i, v) in values.iter().enumerate() {
        let e = DynamicEntity::new("p", format!("r{i}")).with("S", *v);
        engine.write(&table, &WriteOp::Insert(e)).await?;
    }
    for (i, v) in values.iter().enumerate() {
        let got = row_keys_matching(engine, &table, col("S").eq(*v)).await?;
        assert_eq!(got, vec![format!("r{i}")], "S eq {v:?}");
    }
    Ok(())
}

/// A filter parsed from OData text selects the same rows as the built one.
pub async fn filter_parsed_from_odata_text(engine: &dyn Engine, ctx: &Ctx) -> Result<()> {
    let table = ctx.create_table(engine).await?;
    for i in 0..6 {
        let e = DynamicEntity::new("p", format!("r{i}"))
            .with("Age", Value::Int32(20 + i * 5))
            .with("Name", if i % 2 == 0 { "even" } else { "odd" });
        engine.write(&table, &WriteOp::Insert(e)).await?;
    }
    let parsed = Filter::parse("Age gt 30 and not (Name eq 'odd') or RowKey eq 'r0'")?;
    same(
        row_keys_matching(engine, &table, parsed).await?,
        &["r0", "r4"],
        "parsed filter",
    );
    Ok(())
}

/// A filter with more than 15 comparisons fails with `InvalidFilter` before it runs;
/// 15 are accepted.
pub async fn filter_with_too_many_comparisons_is_invalid(
    engine: &dyn Engine,
    ctx: &Ctx,
) -> Result<()> {
    let table = ctx.create_table(engine).await?;
    let chain = |n: i32| {
        (1..n).fold(col("N").eq(Value::Int32(0)), |f, i| {
            f.or(col("N").eq(Value::Int32(i)))
        })
    };
    query_all(engine, &table, &QuerySpec::new().filter(chain(15))).await?;
    expect_kind(
        engine
            .query(&table, &QuerySpec::new().filter(chain(16)), None)
            .await,
        ErrorKind::InvalidFilter,
        "16 comparisons",
    );
    Ok(())
}

/// Unchecked filter text ([`Filter::unchecked_raw`]) is sent as written and, when
/// the parser reads it, matches what the checked filter matches, on its own and
/// combined (in parentheses) with checked parts; nothing checks it locally, so 16
/// comparisons are not refused before sending. Blank text is refused locally.
pub async fn filter_unchecked_text_matches_as_written(
    engine: &dyn Engine,
    ctx: &Ctx,
) -> Result<()> {
    let table = ctx.create_table(engine).await?;
    for i in 0..6 {
        let e = DynamicEntity::new(if i < 4 { "p" } else { "q" }, format!("r{i}"))
            .with("Age", Value::Int32(20 + i * 5))
            .with("Name", if i % 2 == 0 { "even" } else { "odd" });
        engine.write(&table, &WriteOp::Insert(e)).await?;
    }
    let text = "Age gt 30 and not (Name eq 'odd') or RowKey eq 'r0'";
    let checked = row_keys_matching(engine, &table, Filter::parse(text)?).await?;
    same(checked.clone(), &["r0", "r4"], "checked filter");
    same(
        row_keys_matching(engine, &table, Filter::unchecked_raw(text)).await?,
        &["r0", "r4"],
        "unchecked filter",
    );
    // Combined: the `or` inside stays inside its parentheses.
    same(
        row_keys_matching(
            engine,
            &table,
            Filter::partition_key("q").and(Filter::unchecked_raw(text)),
        )
        .await?,
        &["r4"],
        "unchecked filter within partition q",
    );
    let blank = engine
        .query(&table, &QuerySpec::new().filter_unchecked(" "), None)
        .await;
    let err = expect_kind(blank, ErrorKind::InvalidFilter, "blank unchecked filter");
    assert_eq!(err.origin(), Origin::Local, "{err:?}");
    Ok(())
}
