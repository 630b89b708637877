//! Table lifecycle: create, list (prefix, paging), delete, missing and deleted tables,
//! table-name rules.

use crate::prelude::*;

/// A created table is listed under its name, with the case it was created with.
pub async fn create_table_is_listed_with_its_case(engine: &dyn Engine, ctx: &Ctx) -> Result<()> {
    let name = ctx.table_name("MiXed");
    engine.create_table(&name).await?;
    let listed = list_all_tables(engine, ctx.prefix(), None).await?;
    assert_eq!(listed, vec![name], "the new table, case preserved");
    Ok(())
}

/// Creating a table whose name differs only in case from an existing one fails with
/// `TableAlreadyExists` (409), and leaves one table.
pub async fn create_table_twice_in_any_case_conflicts(
    engine: &dyn Engine,
    ctx: &Ctx,
) -> Result<()> {
    let name = ctx.create_named(engine, "dup").await?;
    let err = expect_kind(
        engine.create_table(&name).await,
        ErrorKind::TableAlreadyExists,
        "same name",
    );
    expect_service(&err, 409, "TableAlreadyExists", "same name");
    let upper = name.to_uppercase();
    ctx.remember(&upper);
    if engine.capabilities().case_sensitive_table_names {
        // Cosmos DB for Table: another case is another table.
        engine.create_table(&upper).await?;
        // A prefix compares case-sensitively too: each case is listed under its own.
        let mut listed = list_all_tables(engine, ctx.prefix(), None).await?;
        if ctx.prefix() != ctx.prefix().to_uppercase() {
            listed.extend(list_all_tables(engine, &ctx.prefix().to_uppercase(), None).await?);
        }
        listed.sort();
        let mut both = vec![name, upper];
        both.sort();
        assert_eq!(listed, both, "two tables, one per case");
        return Ok(());
    }
    expect_kind(
        engine.create_table(&upper).await,
        ErrorKind::TableAlreadyExists,
        "upper-cased name",
    );
    let listed = list_all_tables(engine, ctx.prefix(), None).await?;
    assert_eq!(listed, vec![name], "still exactly one table");
    Ok(())
}

/// Entity operations address a table case-insensitively.
pub async fn table_names_are_case_insensitive_for_entities(
    engine: &dyn Engine,
    ctx: &Ctx,
) -> Result<()> {
    let name = ctx.create_named(engine, "Case").await?;
    let lower = name.to_lowercase();
    if !ctx.capabilities().table_names_case_insensitive_for_entities {
        // The backend's documented difference: only the name as created finds the
        // table.
        let row = DynamicEntity::new("p", "r").with("A", 1);
        expect_kind(
            engine.write(&lower, &WriteOp::Insert(row.clone())).await,
            ErrorKind::TableNotFound,
            "a write through another case of the name",
        );
        engine.write(&name, &WriteOp::Insert(row)).await?;
        assert_eq!(all_rows(engine, &name).await?.len(), 1);
        return Ok(());
    }
    let upper = name.to_uppercase();
    engine
        .write(
            &lower,
            &WriteOp::Insert(DynamicEntity::new("p", "r").with("A", 1)),
        )
        .await?;
    let got = get(engine, &upper, "p", "r").await?;
    assert!(
        got.is_some(),
        "entity written via {lower} is read via {upper}"
    );
    assert_eq!(all_rows(engine, &name).await?.len(), 1);
    Ok(())
}

/// Names the service rejects fail with `InvalidTableName` and create nothing.
pub async fn invalid_table_names_are_rejected(engine: &dyn Engine, ctx: &Ctx) -> Result<()> {
    let prefix = ctx.prefix();
    let too_long = format!("{prefix}{}", "x".repeat(64 - prefix.len()));
    let bad = [
        String::new(),
        "ab".to_owned(),
        format!("1{prefix}"),
        format!("{prefix}-x"),
        format!("{prefix}_x"),
        format!("{prefix} x"),
        format!("{prefix}é"),
        too_long,
        "tables".to_owned(),
        "Tables".to_owned(),
    ];
    for name in &bad {
        expect_kind(
            engine.create_table(name).await,
            ErrorKind::InvalidTableName,
            &format!("create_table({name:?})"),
        );
    }
    assert!(
        list_all_tables(engine, prefix, None).await?.is_empty(),
        "no table was created"
    );
    Ok(())
}

/// A 63-character name is the longest accepted (or the backend's shorter limit,
/// [`Capabilities::max_table_name_len`](crate::Capabilities::max_table_name_len)).
pub async fn table_name_of_63_characters_is_accepted(engine: &dyn Engine, ctx: &Ctx) -> Result<()> {
    let prefix = ctx.prefix();
    let longest = ctx.capabilities().max_table_name_len;
    let name = format!("{prefix}{}", "y".repeat(longest - prefix.len()));
    ctx.remember(&name);
    engine.create_table(&name).await?;
    let longer = format!("{name}y");
    ctx.remember(&longer);
    expect_kind(
        engine.create_table(&longer).await,
        ErrorKind::InvalidTableName,
        &format!("{} characters", longer.len()),
    );
    assert_eq!(list_all_tables(engine, prefix, None).await?, vec![name]);
    Ok(())
}

/// Listing with a prefix returns exactly the tables starting with it, in name order.
pub async fn list_tables_filters_by_prefix_in_order(engine: &dyn Engine, ctx: &Ctx) -> Result<()> {
    for suffix in ["b", "ab", "a", "ba", "c"] {
        ctx.create_named(engine, suffix).await?;
    }
    let p = ctx.prefix();
    let b_tables = list_all_tables(engine, &format!("{p}b"), None).await?;
    assert_eq!(b_tables, vec![format!("{p}b"), format!("{p}ba")]);
    let all = list_all_tables(engine, p, None).await?;
    let expected: Vec<String> = ["a", "ab", "b", "ba", "c"]
        .iter()
        .map(|s| format!("{p}{s}"))
        .collect();
    assert_eq!(all, expected, "every table of the prefix, in name order");
    Ok(())
}

/// Table listing pages: pages of at most the page size, every table exactly once.
pub async fn list_tables_pages_through_every_table(engine: &dyn Engine, ctx: &Ctx) -> Result<()> {
    let mut expected = Vec::new();
    for i in 0..7 {
        expected.push(ctx.create_named(engine, &format!("x{i}")).await?);
    }
    for page_size in [1, 2, 3, 1000] {
        let listed = list_all_tables(engine, ctx.prefix(), Some(page_size)).await?;
        assert_eq!(listed, expected, "page size {page_size}");
    }
    let first = engine
        .list_tables(
            &ListTablesOptions::default()
                .with_prefix(ctx.prefix())
                .with_page_size(2),
        )
        .await?;
    assert!(
        first.continuation.is_some(),
        "7 tables with page size 2 need a continuation after the first page"
    );
    Ok(())
}

/// A table page size outside 1 to 1,000 fails with `InvalidQuery`.
pub async fn list_tables_page_size_out_of_range_is_invalid(
    engine: &dyn Engine,
    ctx: &Ctx,
) -> Result<()> {
    for page_size in [0, 1001] {
        let options = ListTablesOptions::default()
            .with_prefix(ctx.prefix())
            .with_page_size(page_size);
        expect_kind(
            engine.list_tables(&options).await,
            ErrorKind::InvalidQuery,
            &format!("page size {page_size}"),
        );
    }
    Ok(())
}

/// Every operation on a table that never existed fails with `TableNotFound`.
pub async fn operations_on_missing_table_fail(engine: &dyn Engine, ctx: &Ctx) -> Result<()> {
    let table = ctx.table_name("never");
    check_table_gone(engine, ctx, &table).await;
    expect_kind(
        engine.delete_table(&table).await,
        ErrorKind::TableNotFound,
        "delete_table",
    );
    Ok(())
}

/// After `delete_table`, the table is not listed and every operation on it fails
/// with `TableNotFound`.
pub async fn deleted_table_is_gone(engine: &dyn Engine, ctx: &Ctx) -> Result<()> {
    let table = ctx.create_table(engine).await?;
    engine
        .write(&table, &WriteOp::Insert(DynamicEntity::new("p", "r")))
        .await?;
    engine.delete_table(&table).await?;
    assert!(list_all_tables(engine, ctx.prefix(), None)
        .await?
        .is_empty());
    check_table_gone(engine, ctx, &table).await;
    expect_kind(
        engine.delete_table(&table).await,
        ErrorKind::TableNotFound,
        "second delete_table",
    );
    Ok(())
}

/// Table names list in ordinal order: upper case before lower case.
pub async fn table_names_list_in_ordinal_order(engine: &dyn Engine, ctx: &Ctx) -> Result<()> {
    for suffix in ["beta", "alpha", "Gamma", "alpha2", "Alphabet"] {
        ctx.create_named(engine, suffix).await?;
    }
    let p = ctx.prefix();
    let expected: Vec<String> = ["Alphabet", "Gamma", "alpha", "alpha2", "beta"]
        .iter()
        .map(|s| format!("{p}{s}"))
        .collect();
    for page_size in [None, Some(2)] {
        assert_eq!(
            list_all_tables(engine, p, page_size).await?,
            expected,
            "page size {page_size:?}"
        );
    }
    Ok(())
}

/// A table deleted through another case of its name is gone, with its entities.
pub async fn table_deleted_in_another_case_is_gone(engine: &dyn Engine, ctx: &Ctx) -> Result<()> {
    let table = ctx.create_named(engine, "Temp").await?;
    engine
        .write(&table, &WriteOp::Insert(DynamicEntity::new("p", "r")))
        .await?;
    if engine.capabilities().case_sensitive_table_names {
        // Cosmos DB for Table: another case names no table.
        expect_kind(
            engine.delete_table(&table.to_uppercase()).await,
            ErrorKind::TableNotFound,
            "a delete through another case of the name",
        );
        engine.delete_table(&table).await?;
        check_table_gone(engine, ctx, &table).await;
        return Ok(());
    }
    engine.delete_table(&table.to_uppercase()).await?;
    assert!(
        list_all_tables(engine, ctx.prefix(), None)
            .await?
            .is_empty(),
        "the table is gone"
    );
    check_table_gone(engine, ctx, &table).await;
    Ok(())
}

/// Every operation on the missing `table` fails with `TableNotFound`, the
/// service's answer, naming the table (the service's own message does not).
async fn check_table_gone(engine: &dyn Engine, ctx: &Ctx, table: &str) {
    let key = EntityKey::new("p", "r");
    let entity = DynamicEntity::new("p", "r").with("A", 1);
    table_not_found(
        ctx,
        engine.get_entity(table, &key, None).await,
        table,
        "TableNotFound",
        "get_entity",
    );
    table_not_found(
        ctx,
        engine.query(table, &QuerySpec::new(), None).await,
        table,
        "TableNotFound",
        "query",
    );
    for op in every_mode(&entity) {
        table_not_found(
            ctx,
            engine.write(table, &op).await,
            table,
            "TableNotFound",
            &format!("write {:?}", op.mode()),
        );
    }
    table_not_found(
        ctx,
        engine
            .submit_batch(table, &[WriteOp::Insert(entity.clone())])
            .await,
        table,
        "TableNotFound",
        "submit_batch",
    );
    table_not_found(
        ctx,
        engine.delete_table(table).await,
        table,
        "ResourceNotFound",
        "delete_table",
    );
}

/// Asserts a `TableNotFound` answer that names `table`, with the service's status
/// and code: 404 `TableNotFound` for an entity call, 404 `ResourceNotFound` for
/// deleting the table.
#[track_caller]
fn table_not_found<T: std::fmt::Debug>(
    ctx: &Ctx,
    result: Result<T>,
    table: &str,
    code: &str,
    what: &str,
) {
    let err = expect_kind(result, ErrorKind::TableNotFound, what);
    if ctx.capabilities().table_errors_name_the_callers_table {
        assert_eq!(err.table(), Some(table), "{what}: {err:?}");
    } else {
        // The wrapped engine's name for it: the caller's, under a prefix.
        let named = err.table().unwrap_or_default();
        assert!(
            named.len() > table.len() && named.ends_with(table),
            "{what}: {err:?}"
        );
    }
    assert!(err.to_string().contains(table), "{what}: {err}");
    assert_eq!(err.origin(), Origin::Service, "{what}: {err:?}");
    expect_service(&err, 404, code, what);
}

/// One operation of each of the six write modes on `entity`'s key.
pub fn every_mode(entity: &DynamicEntity) -> Vec<WriteOp> {
    vec![
        WriteOp::Insert(entity.clone()),
        WriteOp::Replace {
            entity: entity.clone(),
            if_match: IfMatch::Any,
        },
        WriteOp::Merge {
            entity: entity.clone(),
            if_match: IfMatch::Any,
        },
        WriteOp::UpsertReplace(entity.clone()),
        WriteOp::UpsertMerge(entity.clone()),
        WriteOp::Delete {
            key: entity.key(),
            if_match: IfMatch::Any,
        },
    ]
}
