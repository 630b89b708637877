//! Paging: continuation loops at page size 1 and 1,000 across partitions, tokens
//! resumed later, short and empty pages.

use crate::prelude::*;

/// Inserts `per_partition` rows into each of `partitions` partitions, in batches of
/// 100, and returns their keys in service order.
async fn fill(
    engine: &dyn Engine,
    table: &str,
    partitions: usize,
    per_partition: usize,
) -> Result<Vec<(String, String)>> {
    let mut expected = Vec::new();
    for p in 0..partitions {
        let pk = format!("p{p:02}");
        let ops: Vec<WriteOp> = (0..per_partition)
            .map(|r| {
                let e = DynamicEntity::new(pk.as_str(), format!("r{r:05}"))
                    .with("N", Value::Int32((p * per_partition + r) as i32));
                WriteOp::Insert(e)
            })
            .collect();
        for chunk in ops.chunks(MAX_BATCH_OPERATIONS) {
            engine.submit_batch(table, chunk).await?;
        }
        expected.extend((0..per_partition).map(|r| (pk.clone(), format!("r{r:05}"))));
    }
    Ok(expected)
}

/// Follows tokens by hand and returns the pages' sizes and the keys seen (in the
/// client's order, [`in_client_order`]: as they came, or sorted on an unordered
/// engine after checking none came twice).
async fn walk(
    engine: &dyn Engine,
    table: &str,
    spec: &QuerySpec,
) -> Result<(Vec<usize>, Vec<(String, String)>)> {
    let mut sizes = Vec::new();
    let mut seen = Vec::new();
    let mut token = None;
    loop {
        let page = engine.query(table, spec, token.as_ref()).await?;
        sizes.push(page.items.len());
        seen.extend(keys(&page.items));
        match page.continuation {
            Some(t) => token = Some(t),
            None => return Ok((sizes, in_client_order(engine, seen))),
        }
        assert!(sizes.len() <= MAX_PAGES, "paging never ended");
    }
}

/// Follows `token` (if any) to the end of the query.
async fn resume(
    engine: &dyn Engine,
    table: &str,
    spec: &QuerySpec,
    mut token: Option<ContinuationToken>,
) -> Result<Vec<DynamicEntity>> {
    let mut rows = Vec::new();
    for _ in 0..MAX_PAGES {
        let Some(t) = token.take() else {
            return Ok(rows);
        };
        let page = engine.query(table, spec, Some(&t)).await?;
        rows.extend(page.items);
        token = page.continuation;
    }
    panic!("paging never ended");
}

/// With `$top` 1, the continuation loop yields every row exactly once, in order,
/// across partition boundaries.
pub async fn paging_top_1_visits_every_row_once(engine: &dyn Engine, ctx: &Ctx) -> Result<()> {
    let table = ctx.create_table(engine).await?;
    let expected = fill(engine, &table, 3, 7).await?;
    let (sizes, seen) = walk(engine, &table, &QuerySpec::new().top(1)).await?;
    assert!(
        sizes.iter().all(|&n| n <= 1),
        "pages of at most 1: {sizes:?}"
    );
    assert!(sizes.len() >= expected.len(), "at least one page per row");
    assert_eq!(seen, expected, "every row once, in order");
    Ok(())
}

/// 2,500 rows over five partitions: with `$top` 1,000 and without `$top`, pages hold
/// at most 1,000 rows and the loop yields every row once, in order.
pub async fn paging_2500_rows_at_page_size_1000(engine: &dyn Engine, ctx: &Ctx) -> Result<()> {
    let table = ctx.create_table(engine).await?;
    let expected = fill(engine, &table, 5, 500).await?;
    for spec in [QuerySpec::new().top(1000), QuerySpec::new()] {
        let (sizes, seen) = walk(engine, &table, &spec).await?;
        assert!(
            sizes.iter().all(|&n| n <= 1000),
            "pages of at most 1,000: {sizes:?}"
        );
        assert!(sizes.len() >= 3, "2,500 rows need at least 3 pages");
        assert_eq!(seen.len(), expected.len());
        assert!(
            seen == expected,
            "every row once, in order ({:?})",
            spec.top
        );
    }
    Ok(())
}

/// A page is never larger than 1,000 even without `$top`, so a single partition of
/// 1,500 rows takes more than one page.
pub async fn paging_default_page_is_at_most_1000(engine: &dyn Engine, ctx: &Ctx) -> Result<()> {
    let table = ctx.create_table(engine).await?;
    let expected = fill(engine, &table, 1, 1500).await?;
    let first = engine.query(&table, &QuerySpec::new(), None).await?;
    assert!(
        first.items.len() <= 1000,
        "first page: {}",
        first.items.len()
    );
    assert!(
        first.continuation.is_some(),
        "1,500 rows need a second page"
    );
    let rows = query_all(engine, &table, &QuerySpec::new()).await?;
    assert!(keys(&rows) == expected, "every row once, in order");
    Ok(())
}

/// A filter that matches few rows still pages correctly: short and empty pages with
/// a token are followed to the end.
pub async fn paging_sparse_filter_across_pages(engine: &dyn Engine, ctx: &Ctx) -> Result<()> {
    let table = ctx.create_table(engine).await?;
    fill(engine, &table, 4, 25).await?;
    let spec = QuerySpec::new()
        .filter(
            col("N").ge(Value::Int32(99)).or(col("N")
                .lt(Value::Int32(30))
                .and(col("N").gt(Value::Int32(26)))),
        )
        .top(2);
    let (sizes, seen) = walk(engine, &table, &spec).await?;
    assert!(
        sizes.iter().all(|&n| n <= 2),
        "pages of at most 2: {sizes:?}"
    );
    let expected: Vec<(String, String)> = [
        ("p01", "r00002"),
        ("p01", "r00003"),
        ("p01", "r00004"),
        ("p03", "r00024"),
    ]
    .iter()
    .map(|(p, r)| ((*p).to_owned(), (*r).to_owned()))
    .collect();
    assert_eq!(seen, expected);
    Ok(())
}

/// Ranges of PartitionKeys (`ge`, `gt`, `lt`, `le`, a bound between two
/// partitions, two ranges joined by `or`), read two rows a page: every row in the
/// range once, in key order, and none outside it. An engine may start such a scan
/// at the lower bound and stop it past the upper one; it must not cut it short.
pub async fn paging_partition_key_ranges(engine: &dyn Engine, ctx: &Ctx) -> Result<()> {
    let table = ctx.create_table(engine).await?;
    let all = fill(engine, &table, 6, 5).await?;
    let pk = || col("PartitionKey");
    // Each filter and the partitions it holds.
    let cases: [(Filter, &[&str]); 6] = [
        (pk().ge("p02").and(pk().lt("p04")), &["p02", "p03"]),
        (pk().gt("p02").and(pk().le("p04")), &["p03", "p04"]),
        (pk().ge("p02x").and(pk().lt("p04")), &["p03"]),
        (pk().lt("p01").or(pk().ge("p05")), &["p00", "p05"]),
        (
            pk().ge("p04").and(col("N").ne(Value::Int32(-1))),
            &["p04", "p05"],
        ),
        (pk().lt("p00"), &[]),
    ];
    for (filter, inside) in cases {
        let spec = QuerySpec::new().filter(filter.clone()).top(2);
        let (_, seen) = walk(engine, &table, &spec).await?;
        let expected: Vec<(String, String)> = all
            .iter()
            .filter(|(p, _)| inside.contains(&p.as_str()))
            .cloned()
            .collect();
        assert_eq!(seen, expected, "{filter}");
    }
    Ok(())
}

/// A query on an empty table returns no rows and ends.
pub async fn paging_empty_table(engine: &dyn Engine, ctx: &Ctx) -> Result<()> {
    let table = ctx.create_table(engine).await?;
    for top in [None, Some(1)] {
        let spec = QuerySpec {
            top,
            ..QuerySpec::new()
        };
        let (_, seen) = walk(engine, &table, &spec).await?;
        assert!(seen.is_empty());
    }
    Ok(())
}

/// A token resumed after more rows were written does not repeat rows: rows written
/// behind the cursor are not returned, rows ahead of it are.
pub async fn paging_resume_after_writes_does_not_repeat(
    engine: &dyn Engine,
    ctx: &Ctx,
) -> Result<()> {
    let table = ctx.create_table(engine).await?;
    for rk in ["b", "d", "f", "h"] {
        engine
            .write(&table, &WriteOp::Insert(DynamicEntity::new("p", rk)))
            .await?;
    }
    let spec = QuerySpec::new().top(2);
    let mut seen = Vec::new();
    let mut token = None;
    // Read until at least two rows are seen, so the cursor is past "d".
    for _ in 0..MAX_PAGES {
        if seen.len() >= 2 {
            break;
        }
        let page = engine.query(&table, &spec, token.as_ref()).await?;
        seen.extend(page.items.into_iter().map(|e| e.row_key));
        token = Some(page.continuation.expect("more rows remain, so a token"));
    }
    if !engine.capabilities().ordered_results {
        return resume_after_writes_unordered(engine, &table, &spec, seen, token).await;
    }
    assert_eq!(seen, ["b", "d"]);
    // Behind the cursor ("a", "c") and ahead of it ("g", "i"). Nothing between "d"
    // and "f": whether a token resumes at the next existing key or after the last
    // returned one is the backend's business.
    for rk in ["a", "c", "g", "i"] {
        engine
            .write(&table, &WriteOp::Insert(DynamicEntity::new("p", rk)))
            .await?;
    }
    engine
        .write(
            &table,
            &WriteOp::Merge {
                entity: DynamicEntity::new("p", "b").with("Touched", true),
                if_match: IfMatch::Any,
            },
        )
        .await?;
    let rest = resume(engine, &table, &spec, token).await?;
    seen.extend(rest.into_iter().map(|e| e.row_key));
    assert_eq!(
        seen,
        ["b", "d", "f", "g", "h", "i"],
        "no repeats, new rows ahead included"
    );
    Ok(())
}

/// [`paging_resume_after_writes_does_not_repeat`] on an engine whose results come in
/// any order: "behind" and "ahead of" the cursor are the engine's own order, so rows
/// written meanwhile may or may not come; what holds is that no row comes twice and
/// every row present throughout comes once.
async fn resume_after_writes_unordered(
    engine: &dyn Engine,
    table: &str,
    spec: &QuerySpec,
    mut seen: Vec<String>,
    token: Option<ContinuationToken>,
) -> Result<()> {
    for rk in ["a", "c", "g", "i"] {
        engine
            .write(table, &WriteOp::Insert(DynamicEntity::new("p", rk)))
            .await?;
    }
    let rest = resume(engine, table, spec, token).await?;
    seen.extend(rest.into_iter().map(|e| e.row_key));
    let count = seen.len();
    seen.sort_unstable();
    seen.dedup();
    assert_eq!(seen.len(), count, "no row twice: {seen:?}");
    for rk in ["b", "d", "f", "h"] {
        assert!(
            seen.iter().any(|s| s == rk),
            "{rk}, present throughout, was not returned: {seen:?}"
        );
    }
    Ok(())
}

/// Rows deleted ahead of the cursor are not returned when the token is resumed.
/// (On an engine whose results come in any order, "ahead" is every row the first
/// page did not return: the comparison is of the sets, in the client's order.)
pub async fn paging_resume_after_deletes(engine: &dyn Engine, ctx: &Ctx) -> Result<()> {
    let table = ctx.create_table(engine).await?;
    let expected = fill(engine, &table, 2, 5).await?;
    let spec = QuerySpec::new().top(3);
    let first = engine.query(&table, &spec, None).await?;
    let first_keys = keys(&first.items);
    let mut seen = first_keys.clone();
    let token = first.continuation;
    assert!(token.is_some(), "10 rows with $top 3 need more pages");
    let ahead: Vec<&(String, String)> = expected
        .iter()
        .filter(|k| !first_keys.contains(k))
        .collect();
    for (pk, rk) in ahead.into_iter().skip(1).step_by(2) {
        engine
            .write(
                &table,
                &WriteOp::Delete {
                    key: EntityKey::new(pk.as_str(), rk.as_str()),
                    if_match: IfMatch::Any,
                },
            )
            .await?;
    }
    seen.extend(keys(&resume(engine, &table, &spec, token).await?));
    let remaining = keys(&all_rows(engine, &table).await?);
    let expected_seen: Vec<(String, String)> = first_keys
        .iter()
        .cloned()
        .chain(remaining.into_iter().filter(|k| !first_keys.contains(k)))
        .collect();
    assert_eq!(
        in_client_order(engine, seen),
        in_client_order(engine, expected_seen),
        "the first page, then exactly the rows still present after it"
    );
    Ok(())
}

/// A token survives a round trip through its string form, so paging can resume in
/// another process; a malformed token fails with `InvalidContinuationToken`,
/// whatever is wrong with it, before anything is sent.
pub async fn paging_token_resumes_from_its_string_form(
    engine: &dyn Engine,
    ctx: &Ctx,
) -> Result<()> {
    let table = ctx.create_table(engine).await?;
    let expected = fill(engine, &table, 2, 4).await?;
    let spec = QuerySpec::new().top(3);
    let mut seen = Vec::new();
    let mut text: Option<String> = None;
    for _ in 0..MAX_PAGES {
        let token = text
            .as_deref()
            .map(str::parse::<ContinuationToken>)
            .transpose()?;
        let page = engine.query(&table, &spec, token.as_ref()).await?;
        seen.extend(keys(&page.items));
        text = page.continuation.map(|t| t.to_string());
        if text.is_none() {
            break;
        }
    }
    assert_eq!(in_client_order(engine, seen), expected);
    let good = ContinuationToken::new("p1", Some("r1".to_owned())).to_string();
    let malformed = [
        ("not a token", "not-a-token".to_owned()),
        ("truncated", good[..good.len() / 2].to_owned()),
        ("not base64url", format!("{good}!")),
        ("not UTF-8", "ct1._w".to_owned()),
        ("an unknown version", good.replacen("ct1", "ct9", 1)),
        ("an extra part", format!("{good}.AA")),
    ];
    for (what, text) in malformed {
        let err = expect_kind(
            text.parse::<ContinuationToken>(),
            ErrorKind::InvalidContinuationToken,
            what,
        );
        assert_eq!(err.origin(), Origin::Local, "{what}: {err:?}");
    }
    Ok(())
}

/// Every page of a selected, filtered query keeps the `$select` projection.
pub async fn paging_keeps_select_on_every_page(engine: &dyn Engine, ctx: &Ctx) -> Result<()> {
    let table = ctx.create_table(engine).await?;
    for i in 0..9 {
        let e = DynamicEntity::new(format!("p{}", i % 3), format!("r{i}"))
            .with("A", Value::Int32(i))
            .with("B", "drop me");
        engine.write(&table, &WriteOp::Insert(e)).await?;
    }
    let spec = QuerySpec::new().select(["A"]).top(2);
    let rows = query_all(engine, &table, &spec).await?;
    assert_eq!(rows.len(), 9);
    for row in &rows {
        assert_eq!(props(row).keys().collect::<Vec<_>>(), ["A"], "{row:?}");
    }
    Ok(())
}

/// A token resumes at its position even when the row it points at was deleted
/// meanwhile: the query goes on with the rows after it.
pub async fn paging_resume_after_the_next_row_is_deleted(
    engine: &dyn Engine,
    ctx: &Ctx,
) -> Result<()> {
    let table = ctx.create_table(engine).await?;
    for rk in ["1", "3", "5", "7"] {
        engine
            .write(&table, &WriteOp::Insert(DynamicEntity::new("p", rk)))
            .await?;
    }
    let spec = QuerySpec::new().top(2);
    let key = |rk: &str| ("p".to_owned(), rk.to_owned());
    // Pages up to the second row (one page, or two on an engine of one-row pages).
    let mut seen = Vec::new();
    let mut token = None;
    while seen.len() < 2 {
        let page = engine.query(&table, &spec, token.as_ref()).await?;
        seen.extend(keys(&page.items));
        token = page.continuation;
        assert!(token.is_some(), "4 rows with $top 2 need more pages");
    }
    if !engine.capabilities().ordered_results {
        // Any order: which row the token points at is the engine's secret, so every
        // row not yet returned is deleted (the one it points at among them).
        for rk in ["1", "3", "5", "7"] {
            if !seen.contains(&key(rk)) {
                engine
                    .write(
                        &table,
                        &WriteOp::Delete {
                            key: EntityKey::new("p", rk),
                            if_match: IfMatch::Any,
                        },
                    )
                    .await?;
            }
        }
        let rest = keys(&resume(engine, &table, &spec, token).await?);
        for k in &rest {
            assert!(
                !seen.contains(k) && [key("2"), key("6")].contains(k),
                "after its row was deleted the token returned {k:?} (seen before: {seen:?}); \
                 only rows written since may come"
            );
        }
        return Ok(());
    }
    assert_eq!(seen, [key("1"), key("3")]);
    engine
        .write(
            &table,
            &WriteOp::Delete {
                key: EntityKey::new("p", "5"),
                if_match: IfMatch::Any,
            },
        )
        .await?;
    for rk in ["2", "6"] {
        engine
            .write(&table, &WriteOp::Insert(DynamicEntity::new("p", rk)))
            .await?;
    }
    let rest = keys(&resume(engine, &table, &spec, token).await?);
    assert_eq!(
        rest,
        [key("6"), key("7")],
        "the rows after the position, none behind it"
    );
    Ok(())
}
