//! Typed queries over an index's copies (`Table::query_index`) on every engine of the
//! typed matrix: the design guide's alternate sort orders, read in the index's
//! order with ranges, prefixes, filters, `take` and resumable pages; a partial copy
//! read through a projection; and what a reader of an eventually consistent index
//! sees while its upkeep is pending, with `verified` never returning a row its
//! entity disowns.

#![allow(clippy::unwrap_used, missing_docs)] // tests

use tables_client::{DateTime, Entity, IfMatch, KeyRange, PageToken, TableServiceClient};
use tables_tests::typed::{Backend, Recorder};

const TICKETS: &str = "Tickets";

#[derive(Entity, Debug, Clone, PartialEq)]
#[entity(kind = "Ticket", rename_all = "PascalCase")]
#[entity(partition_key = "{project}", row_key = "t{id:05}")]
// In the ticket's partition: by status, then id.
#[entity(index(name = "by_status", row_key = "status_{status}_{id:05}"))]
// In a table of its own, one partition per person: newest first.
#[entity(index(
    name = "by_assignee",
    table = "TicketsByAssignee",
    partition_key = "{assignee}",
    row_key = "{opened:rticks}_{project}_{id:05}"
))]
// A partial copy: only the title and status, one ticket per title and project.
#[entity(unique_index(
    name = "by_title",
    table = "TicketTitles",
    partition_key = "{project}",
    row_key = "{title}",
    include(title, status)
))]
pub struct Ticket {
    pub project: String,
    pub id: u32,
    pub title: String,
    pub status: String,
    pub assignee: String,
    pub opened: DateTime,
    pub points: u32,
}

/// What the by_title copies carry: a projection of `Ticket`.
#[derive(Entity, Debug, Clone, PartialEq)]
#[entity(kind = "Ticket", rename_all = "PascalCase")]
#[entity(partition_key = "{project}", row_key = "t{id:05}")]
pub struct TicketTitle {
    pub project: String,
    pub id: u32,
    pub title: String,
    pub status: String,
}

fn day(n: u32) -> DateTime {
    DateTime::from_ymd_hms(2026, 11, n, 9, 0, 0).unwrap()
}

fn ticket(id: u32, assignee: &str, status: &str, opened: u32, points: u32) -> Ticket {
    Ticket {
        project: "web".into(),
        id,
        title: format!("Fix {id:02}"),
        status: status.into(),
        assignee: assignee.into(),
        opened: day(opened),
        points,
    }
}

fn seeded() -> Vec<Ticket> {
    vec![
        ticket(1, "ann", "open", 3, 1),
        ticket(2, "ann", "done", 5, 8),
        ticket(3, "bob", "open", 4, 5),
        ticket(4, "ann", "open", 9, 3),
        ticket(5, "ann", "open", 7, 13),
        ticket(6, "bob", "done", 1, 2),
        ticket(7, "ann", "done", 2, 5),
    ]
}

async fn tickets(service: &TableServiceClient) -> tables_client::Table<Ticket> {
    let tickets = service.table::<Ticket>(TICKETS);
    tickets.create_if_not_exists().await.unwrap();
    for t in seeded() {
        tickets.insert(&t).await.unwrap();
    }
    tickets
}

fn ids<T, F: Fn(&T) -> u32>(items: &[T], id: F) -> Vec<u32> {
    items.iter().map(id).collect()
}

/// Each index reads in its own order; ranges, prefixes, filters, `take` and pages
/// apply to the copies.
async fn index_queries_read_in_the_indexs_order(backend: Backend) {
    let fixture = backend.fresh();
    let tickets = tickets(&fixture.service).await;
    // In the index's order on every engine (on an unordered one, the Cosmos
    // profile, ordered on the client; elsewhere this changes nothing).
    let ann = || {
        tickets
            .query_index(Ticket::by_assignee_partition("ann").unwrap())
            .order_in_client(1_000)
    };

    // Ann's tickets, newest first: the by_assignee order.
    let newest = ann().collect().await.unwrap();
    assert_eq!(ids(&newest, |t| t.id), [4, 5, 2, 1, 7]);
    assert_eq!(newest[0], seeded()[3], "a full copy reads as the ticket");
    // The two newest, and her newest still open.
    assert_eq!(
        ids(&ann().take(2).collect().await.unwrap(), |t| t.id),
        [4, 5]
    );
    let open = ann()
        .filter(Ticket::STATUS.eq("open"))
        .first()
        .await
        .unwrap();
    assert_eq!(open.map(|t| t.id), Some(4));
    // Those opened on the 3rd to the 7th, by the range helper of the time.
    let window = ann()
        .row_range(Ticket::by_assignee_opened_range(day(3)..=day(7)).unwrap())
        .collect()
        .await
        .unwrap();
    assert_eq!(ids(&window, |t| t.id), [5, 2, 1]);

    // In the ticket's partition: the open ones by id, through the status index.
    let open: Vec<Ticket> = tickets
        .query_index(Ticket::by_status_partition("web").unwrap())
        .row_range(KeyRange::prefix("status_open_"))
        .filter(Ticket::POINTS.ge(3))
        .collect()
        .await
        .unwrap();
    assert_eq!(ids(&open, |t| t.id), [3, 4, 5]);

    // Pages resume from their tokens, in the index's order; the end token ends it.
    let query = ann().page_size(2);
    let mut token: Option<PageToken> = None;
    let mut paged = Vec::new();
    loop {
        let page = query.clone().page(token.as_ref()).await.unwrap();
        paged.extend(page.items.iter().map(|v| v.value.id));
        if page.is_last() {
            break;
        }
        let text = page.next.to_string();
        token = Some(text.parse().unwrap());
    }
    assert_eq!(paged, [4, 5, 2, 1, 7]);
    // A token of the primary query is not one of the index query.
    let primary = tickets
        .query()
        .partition("web")
        .order_in_client(1_000)
        .page_size(2)
        .page(None);
    let primary_token = primary.await.unwrap().next;
    let err = query.page(Some(&primary_token)).await.unwrap_err();
    assert_eq!(
        err.kind(),
        tables_client::ErrorKind::InvalidContinuationToken
    );

    // A partial copy, through its projection: titles starting with "Fix 0", by
    // title.
    let titles: Vec<TicketTitle> = tickets
        .query_index(
            Ticket::by_title_partition("web")
                .unwrap()
                .project::<TicketTitle>(),
        )
        .row_range(Ticket::by_title_title_prefix("Fix 0").unwrap())
        .collect()
        .await
        .unwrap();
    assert_eq!(ids(&titles, |t| t.id), [1, 2, 3, 4, 5, 6, 7]);
    assert_eq!(
        titles[1],
        TicketTitle {
            project: "web".into(),
            id: 2,
            title: "Fix 02".into(),
            status: "done".into(),
        }
    );
    // A primary query never reads the copies.
    assert_eq!(
        tickets
            .query()
            .partition("web")
            .collect()
            .await
            .unwrap()
            .len(),
        7
    );
    fixture.drop_tables().await;
}

/// While an index in another table is behind (a writer died after its transaction),
/// an unverified read shows the copies as they are, stale and orphaned ones too;
/// `verified` returns only the tickets that still imply their copy, as stored, with
/// their own ETags; after `reconcile` both agree.
async fn a_reader_of_an_eventually_consistent_index(backend: Backend) {
    let fixture = backend.fresh();
    let tickets = tickets(&fixture.service).await;
    let (crashing, recorder) = Recorder::wrap(&fixture.service);
    let crashing = crashing.table::<Ticket>(TICKETS);
    // In the index's order on every engine (on an unordered one, the Cosmos
    // profile, ordered on the client; elsewhere this changes nothing).
    let ann = || {
        tickets
            .query_index(Ticket::by_assignee_partition("ann").unwrap())
            .order_in_client(1_000)
    };
    // In the index's order on every engine (on an unordered one, the Cosmos
    // profile, ordered on the client; elsewhere this changes nothing).
    let bob = || {
        tickets
            .query_index(Ticket::by_assignee_partition("bob").unwrap())
            .order_in_client(1_000)
    };

    // Ticket 5 moves from Ann to Bob, ticket 7 is deleted, ticket 8 is new for Ann:
    // each writer dies right after its transaction commits.
    let mut moved = seeded()[4].clone();
    moved.assignee = "bob".into();
    recorder.fail_writes_after_commit(true);
    let outcome = crashing.replace(&moved, IfMatch::Any).await.unwrap();
    assert!(outcome.pending_upkeep.is_some(), "{outcome:?}");
    recorder.fail_writes_after_commit(true);
    // A delete says nothing of its upkeep: the intent it left is checked below.
    crashing
        .delete(Ticket::key("web", 7).unwrap(), IfMatch::Any)
        .await
        .unwrap();
    recorder.fail_writes_after_commit(true);
    let outcome = crashing
        .insert(&ticket(8, "ann", "open", 11, 1))
        .await
        .unwrap();
    assert!(outcome.pending_upkeep.is_some(), "{outcome:?}");
    recorder.fail_writes_after_commit(false);

    // Unverified: the copies as they are. Ann still has 5 (stale: as it was) and 7
    // (an orphan); 8 is missing; Bob lacks 5.
    let seen = ann().collect().await.unwrap();
    assert_eq!(ids(&seen, |t| t.id), [4, 5, 2, 1, 7]);
    assert_eq!(seen[1].assignee, "ann", "the stale copy, as it was");
    assert_eq!(ids(&bob().collect().await.unwrap(), |t| t.id), [3, 6]);

    // Verified: only tickets that still imply their copy, as stored.
    let checked = ann().verified().collect().await.unwrap();
    assert_eq!(ids(&checked, |t| t.id), [4, 2, 1]);
    for t in &checked {
        assert_eq!(t.assignee, "ann");
    }
    // `take` counts what verified returns, and the versions are the tickets' own.
    let first = ann().verified().take(2).page(None).await.unwrap();
    assert_eq!(ids(&first.items, |t| t.value.id), [4, 2]);
    let stored = tickets
        .get(Ticket::key("web", 4).unwrap())
        .await
        .unwrap()
        .unwrap();
    assert_eq!(first.items[0].etag, stored.etag);
    // ...so a conditional write with it goes through.
    let mut done = first.items[0].value.clone();
    done.status = "done".into();
    tickets
        .replace(&done, IfMatch::Etag(first.items[0].etag.clone()))
        .await
        .unwrap();

    // After reconcile, both readings agree.
    tickets.reconcile().await.unwrap();
    assert_eq!(ids(&ann().collect().await.unwrap(), |t| t.id), [8, 4, 2, 1]);
    assert_eq!(
        ids(&ann().verified().collect().await.unwrap(), |t| t.id),
        [8, 4, 2, 1]
    );
    assert_eq!(ids(&bob().collect().await.unwrap(), |t| t.id), [5, 3, 6]);
    assert_eq!(
        ids(&bob().verified().collect().await.unwrap(), |t| t.id),
        [5, 3, 6]
    );
    fixture.drop_tables().await;
}

/// `verified` is for index queries: a primary query refuses it when it runs.
async fn verified_is_for_index_queries(backend: Backend) {
    let fixture = backend.fresh();
    let tickets = tickets(&fixture.service).await;
    let err = tickets
        .query()
        .partition("web")
        .verified()
        .collect()
        .await
        .unwrap_err();
    assert_eq!(err.kind(), tables_client::ErrorKind::InvalidQuery);
    fixture.drop_tables().await;
}

tables_tests::typed_matrix!(
    index_queries_read_in_the_indexs_order,
    a_reader_of_an_eventually_consistent_index,
    verified_is_for_index_queries,
);
