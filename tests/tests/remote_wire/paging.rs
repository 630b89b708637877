//! Continuation (docs/protocol.md#paging): the engine hands back the service's tokens and
//! sends them back byte for byte, however odd their characters, and follows pages
//! that are empty but carry a token.

use tables_client::{Engine, Filter, ListTablesOptions, QuerySpec};
use tables_tests::fake_server::{FakeServer, Recorded, Reply};

use crate::support::*;

/// Pages served, one entity each except [`EMPTY_PAGE`].
const PAGES: usize = 61;
/// The page with no entities (but a token to the next one).
const EMPTY_PAGE: usize = 30;
/// The page reached through a token without a NextRowKey.
const NO_ROW_KEY: usize = 10;

/// The NextPartitionKey leading to page `page`: every character that needs
/// encoding in a query, and `%2F`, which must arrive as those three characters.
fn next_pk(page: usize) -> String {
    format!("1!{page}!a+b/c=d%2F e")
}

/// The NextRowKey leading to page `page`, if that token has one.
fn next_rk(page: usize) -> Option<String> {
    (page != NO_ROW_KEY).then(|| format!("r {page}/+=%25 ~&x"))
}

fn row(page: usize) -> String {
    format!("r{page:02}")
}

/// Which page a request asks for (by its token), if the token is one we gave.
fn page_of(request: &Recorded) -> Option<usize> {
    let pk = query_param(request, "NextPartitionKey");
    let rk = query_param(request, "NextRowKey");
    match pk {
        None => rk.is_none().then_some(0),
        Some(pk) => (1..PAGES).find(|&page| next_pk(page) == pk && next_rk(page) == rk),
    }
}

fn entity_page(request: &Recorded) -> Reply {
    let Some(page) = page_of(request) else {
        return error_reply(400, "InvalidInput");
    };
    let entities = if page == EMPTY_PAGE {
        Vec::new()
    } else {
        vec![entity_value("p", &row(page))]
    };
    let mut reply = page_reply(&entities);
    if page + 1 < PAGES {
        reply = reply.with_header("x-ms-continuation-NextPartitionKey", next_pk(page + 1));
        if let Some(rk) = next_rk(page + 1) {
            reply = reply.with_header("x-ms-continuation-NextRowKey", rk);
        }
    }
    reply
}

#[tokio::test]
async fn query_follows_odd_tokens_and_empty_pages() {
    let server = FakeServer::start(|request, _| entity_page(request)).await;
    let engine = engine(&server);
    let spec = QuerySpec::new().filter(Filter::partition_key("p")).top(1);
    let mut token = None;
    let mut seen = Vec::new();
    for round in 0.. {
        assert!(round < PAGES, "still paging after {PAGES} pages");
        let page = engine
            .query(TABLE, &spec, token.as_ref())
            .await
            .unwrap_or_else(|e| panic!("page {round}: {e:?}"));
        seen.extend(page.items.into_iter().map(|e| e.row_key));
        let Some(next) = page.continuation else { break };
        assert_eq!(next.next_partition_key(), next_pk(round + 1));
        assert_eq!(next.next_row_key(), next_rk(round + 1).as_deref());
        // Every other page resumes from the token's string form.
        token = Some(if round % 2 == 1 {
            next.to_string()
                .parse()
                .expect("a token's string form parses")
        } else {
            next
        });
    }
    let expected: Vec<String> = (0..PAGES).filter(|&p| p != EMPTY_PAGE).map(row).collect();
    assert_eq!(expected.len(), 60);
    assert_eq!(seen, expected, "every entity once, in order");

    let requests = server.requests();
    assert_eq!(requests.len(), PAGES);
    let filter = query_param(&requests[0], "$filter").expect("the filter is sent");
    for (page, request) in requests.iter().enumerate() {
        assert_eq!(request.method, "GET");
        assert_eq!(request.path(), format!("/{DEV_ACCOUNT}/{TABLE}()"));
        let sent_pk = query_param(request, "NextPartitionKey");
        let sent_rk = query_param(request, "NextRowKey");
        assert_eq!(sent_pk, (page > 0).then(|| next_pk(page)), "page {page}");
        assert_eq!(
            sent_rk,
            (page > 0).then(|| next_rk(page)).flatten(),
            "page {page}"
        );
        // The same query on every page.
        assert_eq!(
            query_param(request, "$filter").as_ref(),
            Some(&filter),
            "page {page}"
        );
        assert_eq!(
            query_param(request, "$top").as_deref(),
            Some("1"),
            "page {page}"
        );
    }
}

fn next_table(page: usize) -> String {
    format!("tok {page}+/=%3D")
}

const TABLE_PAGES: usize = 6;
const EMPTY_TABLE_PAGE: usize = 2;

fn table_page(request: &Recorded) -> Reply {
    let sent = query_param(request, "NextTableName");
    let page = match sent {
        None => Some(0),
        Some(token) => (1..TABLE_PAGES).find(|&page| next_table(page) == token),
    };
    let Some(page) = page else {
        return error_reply(400, "InvalidInput");
    };
    let names: Vec<serde_json::Value> = if page == EMPTY_TABLE_PAGE {
        Vec::new()
    } else {
        vec![serde_json::json!({ "TableName": format!("tbl{page}") })]
    };
    let reply = Reply::json(200, &serde_json::json!({ "value": names }).to_string());
    if page + 1 < TABLE_PAGES {
        reply.with_header("x-ms-continuation-NextTableName", next_table(page + 1))
    } else {
        reply
    }
}

#[tokio::test]
async fn list_tables_follows_odd_tokens_and_empty_pages() {
    let server = FakeServer::start(|request, _| table_page(request)).await;
    let engine = engine(&server);
    let mut options = ListTablesOptions {
        page_size: Some(1),
        ..ListTablesOptions::default()
    };
    let mut names = Vec::new();
    for round in 0.. {
        assert!(
            round < TABLE_PAGES,
            "still paging after {TABLE_PAGES} pages"
        );
        let page = engine
            .list_tables(&options)
            .await
            .unwrap_or_else(|e| panic!("page {round}: {e:?}"));
        names.extend(page.names);
        match page.continuation {
            Some(next) => {
                assert_eq!(next, next_table(round + 1));
                options.continuation = Some(next);
            }
            None => break,
        }
    }
    let expected: Vec<String> = (0..TABLE_PAGES)
        .filter(|&p| p != EMPTY_TABLE_PAGE)
        .map(|p| format!("tbl{p}"))
        .collect();
    assert_eq!(names, expected);

    let requests = server.requests();
    assert_eq!(requests.len(), TABLE_PAGES);
    for (page, request) in requests.iter().enumerate() {
        assert_eq!(request.path(), format!("/{DEV_ACCOUNT}/Tables"));
        let sent = query_param(request, "NextTableName");
        assert_eq!(sent, (page > 0).then(|| next_table(page)), "page {page}");
        assert_eq!(
            query_param(request, "$top").as_deref(),
            Some("1"),
            "page {page}"
        );
    }
}
