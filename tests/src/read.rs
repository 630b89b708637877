//! Reading helpers: every scenario that is not about paging itself reads through
//! [`query_all`], so that it also passes when the engine returns the shortest pages.

use tables_core::key::cmp_ordinal;
use tables_core::{
    DynamicEntity, Engine, EntityKey, Filter, ListTablesOptions, QuerySpec, Result, MAX_PAGE_SIZE,
};

/// Most pages [`query_all`] follows before it decides the engine loops forever.
pub const MAX_PAGES: usize = 100_000;

/// Runs a query to the end, following continuation tokens, and checks the paging
/// contract on the way: no page holds more than `$top` (or 1,000) entities, and the
/// loop ends. On an engine whose results come in any order (Cosmos DB for Table,
/// [`tables_core::EngineCapabilities::ordered_results`]) it first checks that no
/// row came twice, then orders the rows by key as a client must: scenarios about
/// the order then check the set of rows and the client's order.
///
/// # Errors
///
/// The first page's error.
///
/// # Panics
///
/// If a page is larger than allowed or the engine never stops returning tokens.
pub async fn query_all(
    engine: &dyn Engine,
    table: &str,
    spec: &QuerySpec,
) -> Result<Vec<DynamicEntity>> {
    let limit = spec.top.unwrap_or(MAX_PAGE_SIZE) as usize;
    let mut all = Vec::new();
    let mut token = None;
    for _ in 0..MAX_PAGES {
        let page = engine.query(table, spec, token.as_ref()).await?;
        assert!(
            page.items.len() <= limit,
            "a page held {} entities; expected at most {limit} ($top {:?})",
            page.items.len(),
            spec.top
        );
        all.extend(page.items);
        match page.continuation {
            Some(next) => token = Some(next),
            None => {
                if !engine.capabilities().ordered_results {
                    sort_unique(&mut all, |e| (&e.partition_key, &e.row_key), table);
                }
                return Ok(all);
            }
        }
    }
    panic!("the query on {table} returned continuation tokens for {MAX_PAGES} pages; expected it to end");
}

/// Every entity of a table, in service order.
///
/// # Errors
///
/// The engine's error.
pub async fn all_rows(engine: &dyn Engine, table: &str) -> Result<Vec<DynamicEntity>> {
    query_all(engine, table, &QuerySpec::new()).await
}

/// The keys of every entity matching `filter`, in service order.
///
/// # Errors
///
/// The engine's error.
pub async fn keys_matching(
    engine: &dyn Engine,
    table: &str,
    filter: Filter,
) -> Result<Vec<(String, String)>> {
    let rows = query_all(engine, table, &QuerySpec::new().filter(filter)).await?;
    Ok(keys(&rows))
}

/// The RowKeys of every entity matching `filter`, in service order.
///
/// # Errors
///
/// The engine's error.
pub async fn row_keys_matching(
    engine: &dyn Engine,
    table: &str,
    filter: Filter,
) -> Result<Vec<String>> {
    let rows = query_all(engine, table, &QuerySpec::new().filter(filter)).await?;
    Ok(rows.into_iter().map(|e| e.row_key).collect())
}

/// `seen` (keys in the order pages returned them) as a client must read them: as
/// they came on an engine with ordered results; on an engine whose results come in
/// any order ([`tables_core::EngineCapabilities::ordered_results`] `false`), checked
/// to hold no key twice and then sorted by key (ordinal, as the service orders).
///
/// # Panics
///
/// If an unordered engine returned a key twice.
pub fn in_client_order(
    engine: &dyn Engine,
    mut seen: Vec<(String, String)>,
) -> Vec<(String, String)> {
    if !engine.capabilities().ordered_results {
        sort_unique(&mut seen, |(pk, rk)| (pk, rk), "the table");
    }
    seen
}

/// Sorts `rows` by (PartitionKey, RowKey), ordinal as the service orders, and
/// checks that the query on `table` returned no key twice.
fn sort_unique<T>(rows: &mut [T], key: impl Fn(&T) -> (&String, &String), table: &str) {
    rows.sort_by(|a, b| {
        let ((a_pk, a_rk), (b_pk, b_rk)) = (key(a), key(b));
        cmp_ordinal(a_pk, b_pk).then_with(|| cmp_ordinal(a_rk, b_rk))
    });
    let twice = rows.windows(2).find(|pair| key(&pair[0]) == key(&pair[1]));
    assert!(
        twice.is_none(),
        "the unordered query on {table} returned a row twice: {:?}",
        twice.map(|pair| key(&pair[0]))
    );
}

/// The (PartitionKey, RowKey) pairs of `rows`.
pub fn keys(rows: &[DynamicEntity]) -> Vec<(String, String)> {
    rows.iter()
        .map(|e| (e.partition_key.clone(), e.row_key.clone()))
        .collect()
}

/// Reads one entity.
///
/// # Errors
///
/// The engine's error.
pub async fn get(
    engine: &dyn Engine,
    table: &str,
    pk: &str,
    rk: &str,
) -> Result<Option<DynamicEntity>> {
    engine
        .get_entity(table, &EntityKey::new(pk, rk), None)
        .await
}

/// Every table name starting with `prefix`, following continuation.
///
/// # Errors
///
/// The engine's error.
///
/// # Panics
///
/// If a page is larger than `page_size` or listing never ends.
pub async fn list_all_tables(
    engine: &dyn Engine,
    prefix: &str,
    page_size: Option<u32>,
) -> Result<Vec<String>> {
    let limit = page_size.unwrap_or(MAX_PAGE_SIZE) as usize;
    let mut names = Vec::new();
    let mut continuation = None;
    for _ in 0..MAX_PAGES {
        let mut options = ListTablesOptions::default().with_prefix(prefix);
        options.page_size = page_size;
        options.continuation = continuation;
        let page = engine.list_tables(&options).await?;
        assert!(
            page.names.len() <= limit,
            "a table page held {} names; expected at most {limit}",
            page.names.len()
        );
        names.extend(page.names);
        match page.continuation {
            Some(next) => continuation = Some(next),
            None => return Ok(names),
        }
    }
    panic!("listing tables returned continuation for {MAX_PAGES} pages; expected it to end");
}
