//! Queries on the mem engine: what only the mem engine does (its page size, pages
//! that end at partition boundaries, its tokens' positions). The service's query
//! rules (order, filters, select, top, paging, tokens) are checked on every engine
//! by the conformance suite (`tests/src/ordering.rs`, `filters.rs`,
//! `select_top.rs`, `paging.rs`).

// Test code: a panic is a test failure.
#![allow(clippy::unwrap_used)]

use tables_core::{
    col, ContinuationToken, DynamicEntity, Engine, ErrorKind, Filter, Page, QuerySpec, WriteOp,
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

/// The mem engine looks ahead: no token when no further row matches, and a token
/// names the next row.
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

/// The mem engine reads a token as a position (the service's tokens are opaque):
/// one made by hand narrows the query but never widens its filter.
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

/// The mem engine checks a token's position: one without a RowKey, or with a key
/// the service rejects, is refused (the remote engine passes tokens on as they are).
#[tokio::test]
async fn tokens_without_a_usable_position_are_rejected() {
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
}
