//! Queries on the mem engine: order, filter, select, top, paging and continuation.

// Test code: a panic is a test failure.
#![allow(clippy::unwrap_used)]

use tables_core::{
    col, ContinuationToken, DynamicEntity, Engine, EntityKey, ErrorKind, Filter, IfMatch, Page,
    QuerySpec, WriteOp,
};
use tables_mem::{MemEngine, MemOptions};

const T: &str = "Queries";

async fn engine_with(options: MemOptions, keys: &[(&str, &str)]) -> MemEngine {
    let engine = MemEngine::with_options(options);
    engine.create_table(T).await.unwrap();
    for (i, (pk, rk)) in keys.iter().enumerate() {
        let e = DynamicEntity::new(*pk, *rk)
            .with("n", i as i32)
            .with("tag", "x");
        engine.write(T, &WriteOp::Insert(e)).await.unwrap();
    }
    engine
}

fn keys(page: &Page<DynamicEntity>) -> Vec<(String, String)> {
    page.items
        .iter()
        .map(|e| (e.partition_key.clone(), e.row_key.clone()))
        .collect()
}

/// Every page of a query, following continuation tokens.
async fn pages(engine: &MemEngine, spec: &QuerySpec) -> Vec<Page<DynamicEntity>> {
    let mut out = Vec::new();
    let mut token: Option<ContinuationToken> = None;
    loop {
        let page = engine.query(T, spec, token.as_ref()).await.unwrap();
        token = page.continuation.clone();
        out.push(page);
        if token.is_none() {
            return out;
        }
    }
}

fn flat(pages: &[Page<DynamicEntity>]) -> Vec<(String, String)> {
    pages.iter().flat_map(keys).collect()
}

fn owned(keys: &[(&str, &str)]) -> Vec<(String, String)> {
    keys.iter()
        .map(|(p, r)| ((*p).to_owned(), (*r).to_owned()))
        .collect()
}

#[tokio::test]
async fn rows_come_in_utf16_key_order() {
    // Rust's `str` order would put U+FF01 before U+1F600; UTF-16 order is the reverse.
    let engine = engine_with(
        MemOptions::default(),
        &[
            ("\u{FF01}", "a"),
            ("p", "\u{FF01}"),
            ("p", "b"),
            ("\u{1F600}", "a"),
            ("p", "\u{1F600}"),
            ("p", "a"),
        ],
    )
    .await;
    let all = pages(&engine, &QuerySpec::new()).await;
    assert_eq!(
        flat(&all),
        owned(&[
            ("p", "a"),
            ("p", "b"),
            ("p", "\u{1F600}"),
            ("p", "\u{FF01}"),
            ("\u{1F600}", "a"),
            ("\u{FF01}", "a"),
        ])
    );
    // A RowKey range uses the same order.
    let spec = QuerySpec::new().filter(
        Filter::partition_key("p")
            .and(col("RowKey").gt("b"))
            .and(col("RowKey").lt("\u{FF01}")),
    );
    assert_eq!(
        flat(&pages(&engine, &spec).await),
        owned(&[("p", "\u{1F600}")])
    );
}

#[tokio::test]
async fn filter_select_and_point_queries() {
    let engine = engine_with(
        MemOptions::default(),
        &[("a", "1"), ("a", "2"), ("a", "3"), ("b", "1"), ("b", "2")],
    )
    .await;
    let spec = QuerySpec::new().filter(col("n").ge(2));
    assert_eq!(
        flat(&pages(&engine, &spec).await),
        owned(&[("a", "3"), ("b", "1"), ("b", "2")])
    );
    let spec = QuerySpec::new().filter(Filter::point("a", "2"));
    assert_eq!(flat(&pages(&engine, &spec).await), owned(&[("a", "2")]));
    let spec = QuerySpec::new().filter(Filter::point("a", "9"));
    assert!(flat(&pages(&engine, &spec).await).is_empty());
    let spec = QuerySpec::new().filter(Filter::partition_key("b").and(col("n").lt(4)));
    assert_eq!(flat(&pages(&engine, &spec).await), owned(&[("b", "1")]));

    let spec = QuerySpec::new().select(["tag", "absent"]);
    let page = engine.query(T, &spec, None).await.unwrap();
    assert_eq!(page.items.len(), 5);
    for e in &page.items {
        assert_eq!(e.len(), 1, "only the selected, present properties");
        assert!(e.contains("tag"));
        assert!(e.timestamp.is_some() && e.etag.is_some());
        assert!(!e.partition_key.is_empty() && !e.row_key.is_empty());
    }
}

#[tokio::test]
async fn top_bounds_each_page() {
    let rows: Vec<(String, String)> = (0..7).map(|i| ("p".into(), format!("{i}"))).collect();
    let refs: Vec<(&str, &str)> = rows.iter().map(|(p, r)| (p.as_str(), r.as_str())).collect();
    let engine = engine_with(MemOptions::default(), &refs).await;
    let all = pages(&engine, &QuerySpec::new().top(3)).await;
    let sizes: Vec<usize> = all.iter().map(|p| p.items.len()).collect();
    assert_eq!(sizes, [3, 3, 1]);
    assert_eq!(flat(&all), rows);
    for bad in [0, 1001] {
        let err = engine
            .query(T, &QuerySpec::new().top(bad), None)
            .await
            .unwrap_err();
        assert_eq!(err.kind(), ErrorKind::InvalidQuery);
    }
}

#[tokio::test]
async fn the_engine_page_size_bounds_pages_below_top() {
    let rows: Vec<(String, String)> = (0..5).map(|i| ("p".into(), format!("{i}"))).collect();
    let refs: Vec<(&str, &str)> = rows.iter().map(|(p, r)| (p.as_str(), r.as_str())).collect();
    let options = MemOptions::default().with_page_size(2);
    let engine = engine_with(options, &refs).await;
    let all = pages(&engine, &QuerySpec::new().top(1000)).await;
    let sizes: Vec<usize> = all.iter().map(|p| p.items.len()).collect();
    assert_eq!(sizes, [2, 2, 1]);
    // A smaller $top still wins.
    let all = pages(&engine, &QuerySpec::new().top(1)).await;
    assert_eq!(all.len(), 5);
    assert_eq!(flat(&all), rows);
}

#[tokio::test]
async fn pages_can_end_at_partition_boundaries() {
    let options = MemOptions::default()
        .with_page_size(1000)
        .with_break_at_partition_boundaries(true);
    let engine = engine_with(
        options,
        &[("a", "1"), ("a", "2"), ("b", "1"), ("c", "1"), ("c", "2")],
    )
    .await;
    let all = pages(&engine, &QuerySpec::new()).await;
    let sizes: Vec<usize> = all.iter().map(|p| p.items.len()).collect();
    assert_eq!(sizes, [2, 1, 2]);
    // Partitions without matches give empty pages that still carry a token.
    let spec = QuerySpec::new().filter(col("RowKey").eq("2"));
    let all = pages(&engine, &spec).await;
    let sizes: Vec<usize> = all.iter().map(|p| p.items.len()).collect();
    assert_eq!(sizes, [1, 0, 1]);
    assert!(all[1].continuation.is_some());
    assert_eq!(flat(&all), owned(&[("a", "2"), ("c", "2")]));
}

#[tokio::test]
async fn no_token_when_no_further_row_matches() {
    let engine = engine_with(MemOptions::default(), &[("a", "1"), ("a", "2"), ("a", "3")]).await;
    let spec = QuerySpec::new().filter(col("n").le(1)).top(2);
    let page = engine.query(T, &spec, None).await.unwrap();
    assert_eq!(keys(&page), owned(&[("a", "1"), ("a", "2")]));
    assert_eq!(page.continuation, None);
    let spec = QuerySpec::new().top(2);
    let page = engine.query(T, &spec, None).await.unwrap();
    let token = page.continuation.unwrap();
    assert_eq!(token.next_partition_key(), "a");
    assert_eq!(token.next_row_key(), Some("3"));
}

#[tokio::test]
async fn continuation_resumes_by_position_after_concurrent_writes() {
    let engine = engine_with(
        MemOptions::default(),
        &[("p", "1"), ("p", "3"), ("p", "5"), ("p", "7")],
    )
    .await;
    let spec = QuerySpec::new().top(2);
    let first = engine.query(T, &spec, None).await.unwrap();
    assert_eq!(keys(&first), owned(&[("p", "1"), ("p", "3")]));
    let token = first.continuation.unwrap();
    // Meanwhile: the token's own row is deleted, a row appears before the position
    // (already passed) and one after it.
    engine
        .write(
            T,
            &WriteOp::Delete {
                key: EntityKey::new("p", "5"),
                if_match: IfMatch::Any,
            },
        )
        .await
        .unwrap();
    for rk in ["2", "6"] {
        let e = DynamicEntity::new("p", rk);
        engine.write(T, &WriteOp::Insert(e)).await.unwrap();
    }
    let second = engine.query(T, &spec, Some(&token)).await.unwrap();
    assert_eq!(keys(&second), owned(&[("p", "6"), ("p", "7")]));
    assert_eq!(second.continuation, None);

    // Tokens survive their string form.
    let text = token.to_string();
    let parsed: ContinuationToken = text.parse().unwrap();
    let again = engine.query(T, &spec, Some(&parsed)).await.unwrap();
    assert_eq!(keys(&again), keys(&second));
}

#[tokio::test]
async fn a_token_narrows_but_never_widens_the_filter() {
    let engine = engine_with(
        MemOptions::default(),
        &[("a", "1"), ("b", "1"), ("b", "2"), ("b", "3"), ("c", "1")],
    )
    .await;
    let spec = QuerySpec::new().filter(Filter::partition_key("b"));
    // A token before the range starts at the range; one inside it resumes there.
    let before = ContinuationToken::new("a", Some("0".to_owned()));
    let page = engine.query(T, &spec, Some(&before)).await.unwrap();
    assert_eq!(keys(&page), owned(&[("b", "1"), ("b", "2"), ("b", "3")]));
    let inside = ContinuationToken::new("b", Some("2".to_owned()));
    let page = engine.query(T, &spec, Some(&inside)).await.unwrap();
    assert_eq!(keys(&page), owned(&[("b", "2"), ("b", "3")]));
    let after = ContinuationToken::new("b", Some("4".to_owned()));
    let page = engine.query(T, &spec, Some(&after)).await.unwrap();
    assert!(page.items.is_empty() && page.continuation.is_none());
}

#[tokio::test]
async fn malformed_tokens_and_bad_specs_are_rejected() {
    let engine = engine_with(MemOptions::default(), &[("a", "1")]).await;
    let no_row_key = ContinuationToken::new("a", None);
    let err = engine
        .query(T, &QuerySpec::new(), Some(&no_row_key))
        .await
        .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::InvalidContinuationToken);
    let bad_key = ContinuationToken::new("a", Some("x/y".to_owned()));
    let err = engine
        .query(T, &QuerySpec::new(), Some(&bad_key))
        .await
        .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::InvalidContinuationToken);
    let err = engine
        .query(T, &QuerySpec::new().select(Vec::<String>::new()), None)
        .await
        .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::InvalidQuery);
    // More than 15 comparisons is an invalid filter.
    let mut filter = col("n").eq(0);
    for i in 1..16 {
        filter = filter.or(col("n").eq(i));
    }
    let err = engine
        .query(T, &QuerySpec::new().filter(filter), None)
        .await
        .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::InvalidFilter);
}
