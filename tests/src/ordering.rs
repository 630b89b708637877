//! Result order: PartitionKey, then RowKey, compared by UTF-16 code units.

use crate::prelude::*;

async fn insert_keys(engine: &dyn Engine, table: &str, keys: &[(&str, &str)]) -> Result<()> {
    for (pk, rk) in keys {
        engine
            .write(table, &WriteOp::Insert(DynamicEntity::new(*pk, *rk)))
            .await?;
    }
    Ok(())
}

fn owned(keys: &[(&str, &str)]) -> Vec<(String, String)> {
    keys.iter()
        .map(|(p, r)| ((*p).to_owned(), (*r).to_owned()))
        .collect()
}

/// Rows come back by PartitionKey, then RowKey, whatever the insertion order.
pub async fn rows_come_in_partition_then_row_order(engine: &dyn Engine, ctx: &Ctx) -> Result<()> {
    let table = ctx.create_table(engine).await?;
    insert_keys(
        engine,
        &table,
        &[
            ("b", "2"),
            ("a", "9"),
            ("b", "1"),
            ("c", "0"),
            ("a", "10"),
            ("a", "1"),
        ],
    )
    .await?;
    let expected = owned(&[
        ("a", "1"),
        ("a", "10"),
        ("a", "9"),
        ("b", "1"),
        ("b", "2"),
        ("c", "0"),
    ]);
    assert_eq!(keys(&all_rows(engine, &table).await?), expected);
    Ok(())
}

/// Keys sort ordinally: upper case before lower case, shorter prefix first,
/// digits as text, no locale rules.
pub async fn key_order_is_ordinal(engine: &dyn Engine, ctx: &Ctx) -> Result<()> {
    let table = ctx.create_table(engine).await?;
    let shuffled = ["b", "a", "B", "aa", "", " ", "Z", "é", "e", "~", "0"];
    for rk in shuffled {
        insert_keys(engine, &table, &[("p", rk)]).await?;
    }
    let expected = ["", " ", "0", "B", "Z", "a", "aa", "b", "e", "~", "é"];
    let got: Vec<String> = all_rows(engine, &table)
        .await?
        .into_iter()
        .map(|e| e.row_key)
        .collect();
    assert_eq!(got, expected);
    Ok(())
}

/// Keys sort by UTF-16 code units: a supplementary-plane character (a surrogate
/// pair, 0xD83D..) sorts before U+E000..U+FFFF, unlike Rust's `str` order.
pub async fn key_order_is_utf16(engine: &dyn Engine, ctx: &Ctx) -> Result<()> {
    let table = ctx.create_table(engine).await?;
    insert_keys(
        engine,
        &table,
        &[
            ("\u{FFFD}", "x"),
            ("\u{1F600}", "x"),
            ("p", "\u{FFFD}"),
            ("p", "\u{1F600}"),
            ("p", "\u{E000}"),
            ("p", "\u{D7FF}"),
        ],
    )
    .await?;
    let expected = owned(&[
        ("p", "\u{D7FF}"),
        ("p", "\u{1F600}"),
        ("p", "\u{E000}"),
        ("p", "\u{FFFD}"),
        ("\u{1F600}", "x"),
        ("\u{FFFD}", "x"),
    ]);
    assert_eq!(keys(&all_rows(engine, &table).await?), expected);
    Ok(())
}

/// Key range filters compare by UTF-16 code units too.
pub async fn key_range_filters_use_utf16_order(engine: &dyn Engine, ctx: &Ctx) -> Result<()> {
    let table = ctx.create_table(engine).await?;
    insert_keys(
        engine,
        &table,
        &[("p", "\u{FFFD}"), ("p", "\u{1F600}"), ("p", "a")],
    )
    .await?;
    let ge_e000 = row_keys_matching(engine, &table, Column::row_key().ge("\u{E000}")).await?;
    assert_eq!(ge_e000, vec!["\u{FFFD}"], "the emoji sorts below U+E000");
    let lt_fffd = row_keys_matching(engine, &table, Column::row_key().lt("\u{FFFD}")).await?;
    assert_eq!(lt_fffd, vec!["a", "\u{1F600}"]);
    Ok(())
}

/// Filtered and selected queries keep the key order.
pub async fn filtered_queries_keep_key_order(engine: &dyn Engine, ctx: &Ctx) -> Result<()> {
    let table = ctx.create_table(engine).await?;
    for i in (0..30).rev() {
        let pk = format!("p{}", i % 3);
        let e = DynamicEntity::new(pk, format!("r{i:02}")).with("N", Value::Int32(i));
        engine.write(&table, &WriteOp::Insert(e)).await?;
    }
    let spec = QuerySpec::new()
        .filter(col("N").ge(Value::Int32(10)))
        .select(["N"]);
    let rows = query_all(engine, &table, &spec).await?;
    let got = keys(&rows);
    let mut expected = got.clone();
    expected.sort();
    assert_eq!(got, expected, "sorted by (PartitionKey, RowKey)");
    assert_eq!(got.len(), 20);
    Ok(())
}
