//! Reads whose answer depends on key order, on every backend of the typed matrix,
//! the Cosmos DB for Table profiles included (results in any order there): each
//! call gives the right answer or is refused before anything is sent, naming the
//! way out; never other rows with `Ok`.

#![allow(clippy::unwrap_used, missing_docs)] // tests

use futures::TryStreamExt;
use tables_client::{DateTime, Engine, Entity, ErrorKind, PageToken, Result, TableServiceClient};
use tables_tests::typed::Backend;

/// The design guide's log tail: newest first in each account's partition.
#[derive(Entity, Debug, Clone, PartialEq)]
#[entity(partition_key = "{account}", row_key = "{submitted:rticks}")]
pub struct Expense {
    pub account: String,
    pub submitted: DateTime,
    pub cents: i64,
}

fn at(minute: u32) -> DateTime {
    DateTime::from_ymd_hms(2026, 11, 27, 9 + minute / 60, minute % 60, 0).unwrap()
}

async fn filled(service: &TableServiceClient) -> tables_client::Table<Expense> {
    let expenses = service.table::<Expense>("Expenses");
    expenses.create().await.unwrap();
    // Written out of order, in two accounts.
    for i in 0..40u32 {
        let minute = (i * 17) % 40;
        for account in ["a-1", "a-2"] {
            let cents = i64::from(minute) + if account == "a-1" { 0 } else { 1_000 };
            expenses
                .insert(&Expense {
                    account: account.into(),
                    submitted: at(minute),
                    cents,
                })
                .await
                .unwrap();
        }
    }
    expenses
}

/// The minutes of `rows`, in their order.
fn minutes(rows: &[Expense]) -> Vec<i64> {
    rows.iter().map(|e| e.cents % 1_000).collect()
}

/// `outcome` is `expected`, or (on an engine whose results come in any order) the
/// refusal that names the way out.
fn right_or_refused<T: PartialEq + std::fmt::Debug>(
    ordered: bool,
    call: &str,
    outcome: Result<T>,
    expected: T,
) {
    match outcome {
        Ok(got) => assert_eq!(got, expected, "{call}"),
        Err(err) => {
            assert!(!ordered, "{call} refused on an ordered engine: {err}");
            assert_eq!(err.kind(), ErrorKind::InvalidQuery, "{call}: {err}");
            let text = err.to_string();
            assert!(
                text.contains("order_in_client") && text.contains("any_order"),
                "{call}: the refusal names the ways out: {text}"
            );
        }
    }
}

async fn a_log_tail_reads_the_newest_rows_or_refuses(backend: Backend) {
    let service = backend.service();
    let ordered = service.engine().capabilities().ordered_results;
    let expenses = filled(&service).await;
    let tail = || expenses.query().partition("a-1");
    let newest: Vec<i64> = (0..40).rev().collect();

    // The ten newest.
    right_or_refused(
        ordered,
        "take(10)",
        tail().take(10).collect().await.map(|r| minutes(&r)),
        newest[..10].to_vec(),
    );
    right_or_refused(
        ordered,
        "first()",
        tail().first().await.map(|r| r.map(|e| e.cents)),
        Some(39),
    );
    right_or_refused(
        ordered,
        "stream()",
        tail()
            .stream()
            .try_collect::<Vec<_>>()
            .await
            .map(|r| minutes(&r)),
        newest.clone(),
    );
    right_or_refused(
        ordered,
        "page()",
        tail()
            .page_size(5)
            .page(None)
            .await
            .map(|p| p.items.iter().map(|v| v.value.cents).collect::<Vec<_>>()),
        newest[..5].to_vec(),
    );

    // Always right: collect without take, and the client's order.
    assert_eq!(minutes(&tail().collect().await.unwrap()), newest);
    assert_eq!(
        minutes(
            &tail()
                .order_in_client(1_000)
                .take(10)
                .collect()
                .await
                .unwrap()
        ),
        newest[..10]
    );
    let query = tail().order_in_client(1_000).page_size(7);
    let mut token: Option<PageToken> = None;
    let mut paged = Vec::new();
    loop {
        let page = query.clone().page(token.as_ref()).await.unwrap();
        paged.extend(page.items.iter().map(|v| v.value.cents));
        if page.is_last() {
            break;
        }
        token = Some(page.next.to_string().parse().unwrap());
    }
    assert_eq!(paged, newest, "pages resume exactly, in key order");

    // A bound the query passes is an error, not a silent buffer.
    let err = tail().order_in_client(10).take(3).collect().await;
    if ordered {
        assert_eq!(minutes(&err.unwrap()), newest[..3]);
    } else {
        let err = err.unwrap_err();
        assert_eq!(err.kind(), ErrorKind::InvalidQuery, "{err}");
        assert!(err.to_string().contains("more than 10 rows"), "{err}");
    }

    // Any order: every row once.
    let mut any = minutes(&tail().any_order().collect().await.unwrap());
    any.sort_unstable();
    assert_eq!(any, (0..40).collect::<Vec<_>>());

    // Across partitions, merged in key order when each is ordered.
    let both = expenses
        .query()
        .order_in_client(1_000)
        .across_partitions(["a-1", "a-2"])
        .collect()
        .await
        .unwrap();
    assert_eq!(both.len(), 80);
    // By RowKey (newest first), then PartitionKey.
    assert!(both.windows(2).all(|w| w[0].submitted > w[1].submitted
        || (w[0].submitted == w[1].submitted && w[0].account < w[1].account)));
}

tables_tests::typed_matrix!(a_log_tail_reads_the_newest_rows_or_refuses);
