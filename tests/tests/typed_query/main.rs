//! Typed queries through `Table<T>::query()`: partitions, RowKey ranges from the
//! derive's helpers, typed filters, projections, `take`, page sizes, plans, the
//! table-scan guard, resumable page tokens, unions, and the prefetching stream.
//!
//! Each scenario is `async fn(Backend) -> Result<()>` and runs on every engine of the
//! typed matrix ([`tables_tests::typed_matrix!`]: the mem engine with its default
//! paging and with pages of one entity that end at every partition boundary, and
//! the remote engine on Azurite); it speaks only the client and `Engine` APIs. Rows
//! are written by hand through the engine
//! (primary + same-partition copies in one batch, other copies in their table), so
//! the queries meet copies, index entries and intent rows exactly as the typed
//! writes leave them.

#![allow(clippy::unwrap_used)] // test helpers build known-good values

mod fixtures;
mod unchecked;

use std::collections::BTreeSet;
use std::sync::Arc;
use std::time::Duration;

use fixtures::{
    in_department, seed, unique, Department, Employee, EmployeeName, Recording, RecordingClient,
    SalesPartition, Staff, SALES,
};
use futures::{StreamExt, TryStreamExt};
use tables_client::model::KeyRange;
use tables_client::{
    col, ClientOptions, DynamicEntity, EntityKey, ErrorKind, Origin, PageToken, QueryPlan, Result,
    Row, TableServiceClient, WriteOp,
};
use tables_tests::typed::Backend;
use unchecked::unchecked_filter_text_narrows_like_a_typed_filter;

// ---- scenarios ----

async fn partition_query_reads_each_primary_once(backend: Backend) -> Result<()> {
    let service = backend.service();
    let (table, all) = seed(&service).await?;
    let employees = service.table::<Employee>(&table);
    let want = in_department(&all, "Sales");
    let collected = employees
        .query()
        .order_in_client(1_000)
        .partition("Sales")
        .collect()
        .await?;
    assert_eq!(collected.iter().collect::<Vec<_>>(), want);
    let streamed: Vec<Employee> = employees
        .query()
        .order_in_client(1_000)
        .partition("Sales")
        .stream()
        .try_collect()
        .await?;
    assert_eq!(streamed, collected);
    let versioned: Vec<_> = employees
        .query()
        .order_in_client(1_000)
        .partition("Dev")
        .stream_versioned()
        .try_collect()
        .await?;
    assert_eq!(versioned.len(), 3);
    for item in &versioned {
        let stored = service
            .engine()
            .get_entity(&table, item.value.entity_key()?.as_entity_key(), None)
            .await?
            .unwrap();
        assert_eq!(Some(&item.etag), stored.etag.as_ref());
        assert_eq!(Some(item.timestamp), stored.timestamp);
    }
    // A whole-table query: every employee once, in key order, nothing else.
    assert_eq!(
        employees.query().order_in_client(1_000).collect().await?,
        all
    );
    Ok(())
}

async fn row_ranges_come_from_the_derive(backend: Backend) -> Result<()> {
    let service = backend.service();
    let (table, _) = seed(&service).await?;
    let employees = service.table::<Employee>(&table);
    let ids = |found: Vec<Employee>| found.into_iter().map(|e| e.employee_id).collect::<Vec<_>>();
    let found = employees
        .query()
        .partition("Sales")
        .row_range(Employee::employee_id_range(100..200)?)
        .collect()
        .await?;
    assert_eq!(ids(found), [100, 120, 150, 199]);
    let found = employees
        .query()
        .partition("Sales")
        .row_range(Employee::employee_id_range(..=120)?)
        .collect()
        .await?;
    assert_eq!(ids(found), [90, 100, 120]);
    let found = employees
        .query()
        .partition("Sales")
        .row_range(KeyRange::prefix("empid_0002"))
        .collect()
        .await?;
    assert_eq!(ids(found), [200, 250]);
    // The range replaces an earlier one; an empty range reads nothing.
    let found = employees
        .query()
        .partition("Sales")
        .row_range(KeyRange::prefix("empid_0002"))
        .row_range(KeyRange::empty())
        .collect()
        .await?;
    assert!(found.is_empty());
    Ok(())
}

async fn typed_filters_narrow_the_rows(backend: Backend) -> Result<()> {
    let service = backend.service();
    let (table, all) = seed(&service).await?;
    let employees = service.table::<Employee>(&table);
    let found = employees
        .query()
        .partition("Sales")
        .filter(Employee::AGE.gt(30))
        .collect()
        .await?;
    let want: Vec<_> = in_department(&all, "Sales")
        .into_iter()
        .filter(|e| e.age > 30)
        .cloned()
        .collect();
    assert_eq!(found, want);
    assert_eq!(found.len(), 6);
    // Filters are ANDed with each other and with the range.
    let found = employees
        .query()
        .partition("Sales")
        .row_range(Employee::employee_id_range(100..300)?)
        .filter(Employee::AGE.gt(30))
        .filter(Employee::LAST_NAME.eq("Jones"))
        .collect()
        .await?;
    let want: Vec<_> = in_department(&all, "Sales")
        .into_iter()
        .filter(|e| (100..300).contains(&e.employee_id) && e.age > 30 && e.last_name == "Jones")
        .cloned()
        .collect();
    assert_eq!(found, want);
    assert!(!found.is_empty());
    assert!(found.iter().all(|e| e.last_name == "Jones" && e.age > 30));
    // Across the table.
    let old = employees
        .query()
        .filter(Employee::AGE.ge(50))
        .collect()
        .await?;
    let ids: Vec<_> = old
        .iter()
        .map(|e| (e.department.as_str(), e.employee_id))
        .collect();
    assert_eq!(ids, [("Ops", 7), ("Sales", 199), ("Sales", 300)]);
    Ok(())
}

async fn projection_sends_select_and_decodes(backend: Backend) -> Result<()> {
    let service = backend.service();
    let (table, all) = seed(&service).await?;
    let recording = Recording::over(&service, None);
    let client = recording.client(ClientOptions::default());
    let names = client
        .table::<Employee>(&table)
        .query()
        .partition("Sales")
        .select::<EmployeeName>()
        .collect()
        .await?;
    let want: Vec<_> = in_department(&all, "Sales")
        .into_iter()
        .map(|e| EmployeeName {
            department: e.department.clone(),
            employee_id: e.employee_id,
            first_name: e.first_name.clone(),
            last_name: e.last_name.clone(),
        })
        .collect();
    assert_eq!(names, want);
    let queries = recording.queries();
    assert!(!queries.is_empty());
    for query in &queries {
        assert_eq!(
            query.spec.select.as_deref(),
            Some(&["FirstName", "LastName", "EntityType", "EntityVersion"].map(String::from)[..])
        );
        for row in &query.rows {
            assert!(
                row.iter()
                    .all(|name| !["Age", "Email"].contains(&name.as_str())),
                "{row:?}"
            );
            assert!(row.iter().any(|name| name == "FirstName"), "{row:?}");
        }
    }
    assert_eq!(
        queries.iter().map(|q| q.rows.len()).sum::<usize>(),
        want.len()
    );

    // A projection of another kind is refused before anything is sent.
    let before = recording.count();
    let err = client
        .table::<Employee>(&table)
        .query()
        .select::<Department>()
        .collect()
        .await
        .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::InvalidInput);
    assert_eq!(recording.count(), before);

    // A union with a catch-all projected into one kind reads that kind only.
    let names = client
        .table::<SalesPartition>(&table)
        .query()
        .partition("Sales")
        .select::<EmployeeName>()
        .collect()
        .await?;
    assert_eq!(names, want);
    Ok(())
}

async fn take_bounds_the_total_across_pages(backend: Backend) -> Result<()> {
    let service = backend.service();
    let (table, all) = seed(&service).await?;
    let recording = Recording::over(&service, None);
    let employees = recording
        .client(ClientOptions::default())
        .table::<Employee>(&table);
    let sales = in_department(&all, "Sales");
    let query = employees
        .query()
        .order_in_client(1_000)
        .partition("Sales")
        .page_size(2)
        .take(5);
    let found = query.clone().collect().await?;
    assert_eq!(found.iter().collect::<Vec<_>>(), sales[..5]);
    let tops: Vec<_> = recording.queries().iter().map(|q| q.spec.top).collect();
    if backend.ordered() {
        assert!(tops.len() >= 3, "{tops:?}");
        assert!(
            tops.iter().all(|top| matches!(top, Some(1 | 2))),
            "{tops:?}"
        );
        assert_eq!(
            tops.last(),
            Some(&Some(1)),
            "the last request asks only for what is left"
        );
    } else {
        // Ordered on the client: the partition is read whole, in the largest pages,
        // whatever `take` and the page size say (the cost order_in_client states).
        assert!(
            !tops.is_empty() && tops.iter().all(|top| *top == Some(1_000)),
            "{tops:?}"
        );
    }

    let streamed: Vec<_> = query.clone().stream().try_collect().await?;
    assert_eq!(streamed, found);
    // Pages respect it too, and so does a resumed page.
    let first = query.clone().page(None).await?;
    assert_eq!(first.items.len(), 2);
    let second = query.clone().page(first.next_token()).await?;
    let third = query.clone().page(second.next_token()).await?;
    assert_eq!(third.items.len(), 1);
    assert!(third.is_last());

    assert_eq!(
        employees
            .query()
            .order_in_client(1_000)
            .partition("Sales")
            .first()
            .await?
            .as_ref(),
        Some(sales[0])
    );
    assert_eq!(
        employees
            .query()
            .order_in_client(1_000)
            .partition("Nobody")
            .first()
            .await?,
        None
    );
    let before = recording.count();
    assert!(employees
        .query()
        .order_in_client(1_000)
        .take(0)
        .collect()
        .await?
        .is_empty());
    assert_eq!(recording.count(), before, "take(0) sends nothing");
    // A smaller earlier take stays.
    assert_eq!(
        employees
            .query()
            .order_in_client(1_000)
            .partition("Sales")
            .take(2)
            .take(4)
            .collect()
            .await?
            .len(),
        2
    );
    Ok(())
}

async fn page_size_shapes_pages(backend: Backend) -> Result<()> {
    let service = backend.service();
    let (table, all) = seed(&service).await?;
    let employees = service.table::<Employee>(&table);
    let mut token: Option<PageToken> = None;
    let mut read = Vec::new();
    let mut sizes = Vec::new();
    loop {
        let page = employees
            .query()
            .order_in_client(1_000)
            .page_size(3)
            .page(token.as_ref())
            .await?;
        sizes.push(page.items.len());
        read.extend(page.items.into_iter().map(|v| v.value));
        if page.next.is_end() {
            // Resumed, the end token gives an empty last page: never the first again.
            let again = employees
                .query()
                .order_in_client(1_000)
                .page_size(3)
                .page(Some(&page.next))
                .await?;
            assert!(again.items.is_empty() && again.is_last());
            assert_eq!(again.next, page.next);
            break;
        }
        token = Some(page.next);
    }
    assert_eq!(read, all);
    let (last, full) = sizes.split_last().unwrap();
    assert!(full.iter().all(|&n| n == 3), "{sizes:?}");
    assert!(*last <= 3);
    for bad in [0, 1_001] {
        let err = employees
            .query()
            .order_in_client(1_000)
            .page_size(bad)
            .page(None)
            .await
            .unwrap_err();
        assert_eq!(err.kind(), ErrorKind::InvalidQuery, "{bad}");
        let mut stream = Box::pin(
            employees
                .query()
                .order_in_client(1_000)
                .page_size(bad)
                .stream(),
        );
        assert_eq!(
            stream.next().await.unwrap().unwrap_err().kind(),
            ErrorKind::InvalidQuery
        );
        assert!(stream.next().await.is_none());
    }
    // The client's default page size applies when the query names none.
    let small = TableServiceClient::with_options(
        Arc::clone(service.engine()),
        ClientOptions::default().with_page_size(4),
    );
    let page = small
        .table::<Employee>(&table)
        .query()
        .order_in_client(1_000)
        .page(None)
        .await?;
    assert_eq!(page.items.len(), 4);
    Ok(())
}

async fn plans_follow_the_cost_ladder(backend: Backend) -> Result<()> {
    let service = backend.service();
    let employees = service.table::<Employee>("Employees");
    let point = employees
        .query()
        .partition("Sales")
        .filter(col("RowKey").eq("empid_000223"));
    assert_eq!(
        point.plan(),
        QueryPlan::Point {
            partition_key: "Sales".into(),
            row_key: "empid_000223".into()
        }
    );
    let range = employees
        .query()
        .partition("Sales")
        .row_range(Employee::employee_id_range(100..200)?)
        .filter(Employee::AGE.gt(30));
    match range.plan() {
        QueryPlan::Range {
            partition_key,
            lower,
            upper,
        } => {
            assert_eq!(partition_key, "Sales");
            assert_eq!(lower.unwrap().key, "empid_000100");
            assert_eq!(upper.unwrap().key, "empid_000200");
        }
        other => panic!("expected a range, got {other:?}"),
    }
    let scan = employees
        .query()
        .partition("Sales")
        .filter(Employee::AGE.gt(30));
    assert_eq!(
        scan.plan(),
        QueryPlan::PartitionScan {
            partition_key: "Sales".into()
        }
    );
    assert_eq!(employees.query().plan(), QueryPlan::TableScan);
    assert_eq!(
        employees.query().filter(Employee::AGE.gt(30)).plan(),
        QueryPlan::TableScan
    );
    // Unions plan the same way.
    assert_eq!(
        service
            .table::<Staff>("Employees")
            .query()
            .partition("Sales")
            .plan(),
        QueryPlan::PartitionScan {
            partition_key: "Sales".into()
        }
    );
    Ok(())
}

async fn table_scans_can_be_forbidden(backend: Backend) -> Result<()> {
    let service = backend.service();
    let (table, all) = seed(&service).await?;
    let recording = Recording::over(&service, None);
    let strict = recording.client(ClientOptions::default().with_allow_table_scans(false));
    let employees = strict.table::<Employee>(&table);
    let err = employees.query().collect().await.unwrap_err();
    assert_eq!(err.kind(), ErrorKind::InvalidQuery);
    let err = employees
        .query()
        .filter(Employee::AGE.gt(30))
        .page(None)
        .await
        .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::InvalidQuery);
    let mut stream = Box::pin(employees.query().stream());
    assert_eq!(
        stream.next().await.unwrap().unwrap_err().kind(),
        ErrorKind::InvalidQuery
    );
    assert!(stream.next().await.is_none());
    assert_eq!(recording.count(), 0, "refused before anything is sent");
    // Partition queries still run.
    let dev = employees.query().partition("Dev").collect().await?;
    assert_eq!(dev.iter().collect::<Vec<_>>(), in_department(&all, "Dev"));
    Ok(())
}

async fn page_token_resumes_in_another_client(backend: Backend) -> Result<()> {
    let service = backend.service();
    let (table, all) = seed(&service).await?;
    let query = |client: &TableServiceClient| {
        client
            .table::<Employee>(&table)
            .query()
            .order_in_client(1_000)
            .partition("Sales")
            .filter(Employee::AGE.gt(26))
            .page_size(2)
    };
    let want: Vec<_> = in_department(&all, "Sales")
        .into_iter()
        .filter(|e| e.age > 26)
        .cloned()
        .collect();
    let first = query(&service).page(None).await?;
    assert_eq!(first.items.len(), 2);
    let text = first.next.to_string();

    // Another process: a new client over the same engine, from the token's text.
    let mut read: Vec<_> = first.items.into_iter().map(|v| v.value).collect();
    let mut token: Option<PageToken> = Some(text.parse()?);
    while let Some(current) = token.take() {
        let other = TableServiceClient::from_engine(Arc::clone(service.engine()));
        let page = query(&other).page(Some(&current)).await?;
        read.extend(page.items.into_iter().map(|v| v.value));
        token = (!page.next.is_end()).then_some(page.next);
    }
    assert_eq!(read, want);

    // With take, the count travels in the token.
    let first = query(&service).take(3).page(None).await?;
    let other = TableServiceClient::from_engine(Arc::clone(service.engine()));
    let rest = query(&other).take(3).page(first.next_token()).await?;
    assert_eq!(rest.items.len(), 1);
    assert!(rest.is_last());
    Ok(())
}

async fn a_token_refuses_another_query(backend: Backend) -> Result<()> {
    let service = backend.service();
    let (table, _) = seed(&service).await?;
    let employees = service.table::<Employee>(&table);
    let base = || {
        employees
            .query()
            .order_in_client(1_000)
            .partition("Sales")
            .page_size(2)
    };
    let token = base().page(None).await?.next;
    let others = [
        employees
            .query()
            .order_in_client(1_000)
            .partition("Dev")
            .page_size(2),
        base().page_size(3),
        base().filter(Employee::AGE.gt(1)),
        base().row_range(KeyRange::prefix("empid_")),
        base().take(5),
        service
            .table::<Employee>(unique("Other"))
            .query()
            .order_in_client(1_000)
            .partition("Sales")
            .page_size(2),
    ];
    for other in others {
        let err = other.page(Some(&token)).await.unwrap_err();
        assert_eq!(err.kind(), ErrorKind::InvalidContinuationToken);
        assert_eq!(err.origin(), Origin::Local);
    }
    let err = base()
        .select::<EmployeeName>()
        .page(Some(&token))
        .await
        .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::InvalidContinuationToken);
    let err = service
        .table::<Staff>(&table)
        .query()
        .order_in_client(1_000)
        .partition("Sales")
        .page_size(2)
        .page(Some(&token))
        .await
        .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::InvalidContinuationToken);
    // The same query, built again, accepts it.
    assert!(base().page(Some(&token)).await.is_ok());
    Ok(())
}

async fn a_token_round_trips_as_text(backend: Backend) -> Result<()> {
    let service = backend.service();
    let (table, _) = seed(&service).await?;
    let employees = service.table::<Employee>(&table);
    let token = employees
        .query()
        .order_in_client(1_000)
        .page_size(1)
        .page(None)
        .await?
        .next;
    let text = token.to_string();
    assert!(text.starts_with("pt1."));
    assert!(text
        .bytes()
        .all(|b| b.is_ascii_alphanumeric() || b"-_.".contains(&b)));
    let parsed: PageToken = text.parse()?;
    assert_eq!(parsed, token);
    assert_eq!(parsed.items_before(), 1);
    let json = serde_json::to_string(&token).unwrap();
    assert_eq!(json, format!("\"{text}\""));
    assert_eq!(serde_json::from_str::<PageToken>(&json).unwrap(), token);
    for bad in [
        "",
        "pt1",
        "ct1.AA",
        &text[..text.len() / 2],
        &text.replacen("pt1", "pt9", 1),
    ] {
        let err = bad.parse::<PageToken>().unwrap_err();
        assert_eq!(err.kind(), ErrorKind::InvalidContinuationToken, "{bad:?}");
    }
    Ok(())
}

async fn unions_decode_each_row_to_its_variant(backend: Backend) -> Result<()> {
    let service = backend.service();
    let (table, all) = seed(&service).await?;
    let rows = service
        .table::<SalesPartition>(&table)
        .query()
        .order_in_client(1_000)
        .partition("Sales")
        .page_size(1)
        .collect()
        .await?;
    let sales = in_department(&all, "Sales");
    assert_eq!(rows.len(), sales.len() + 2, "{rows:#?}");
    assert_eq!(
        rows[0],
        SalesPartition::Department(Department {
            name: "Sales".into(),
            employee_count: 8
        })
    );
    for (row, want) in rows[1..=sales.len()].iter().zip(&sales) {
        assert_eq!(row, &SalesPartition::Employee((*want).clone()));
    }
    match rows.last().unwrap() {
        SalesPartition::Other(row) => assert_eq!(row.row_key, "zz_note"),
        other => panic!("expected the note, got {other:?}"),
    }
    // Without a catch-all, only the known kinds come back.
    let staff: Vec<_> = service
        .table::<Staff>(&table)
        .query()
        .order_in_client(1_000)
        .partition("Sales")
        .stream()
        .try_collect()
        .await?;
    assert_eq!(staff.len(), sales.len() + 1);
    assert!(matches!(staff[0], Staff::Department(_)));
    assert!(staff[1..]
        .iter()
        .all(|row| matches!(row, Staff::Employee(_))));
    // Whole table: every primary of the catch-all union once (no copies, entries or
    // intents), in key order.
    let every: Vec<_> = service
        .table::<SalesPartition>(&table)
        .query()
        .order_in_client(1_000)
        .stream_versioned()
        .try_collect()
        .await?;
    let keys: Vec<_> = every
        .iter()
        .map(|v| EntityKey::from(v.value.entity_key().unwrap()))
        .collect();
    let mut want: Vec<_> = all
        .iter()
        .map(|e| EntityKey::from(e.entity_key().unwrap()))
        .collect();
    want.push(EntityKey::new("Sales", "department"));
    want.push(EntityKey::new("Sales", "zz_note"));
    want.sort();
    assert_eq!(keys, want);
    Ok(())
}

async fn each_primary_once_at_page_size_1(backend: Backend) -> Result<()> {
    let service = backend.service();
    let (table, all) = seed(&service).await?;
    let want: BTreeSet<_> = all.iter().map(|e| e.entity_key().unwrap()).collect();
    let employees = service.table::<Employee>(&table);
    let streamed: Vec<_> = employees
        .query()
        .order_in_client(1_000)
        .page_size(1)
        .stream()
        .try_collect()
        .await?;
    let keys: Vec<_> = streamed.iter().map(|e| e.entity_key().unwrap()).collect();
    assert_eq!(keys.len(), want.len(), "no duplicates, nothing missing");
    assert_eq!(keys.iter().cloned().collect::<BTreeSet<_>>(), want);
    let mut paged = Vec::new();
    let mut token = None;
    loop {
        let page = employees
            .query()
            .order_in_client(1_000)
            .page_size(1)
            .page(token.as_ref())
            .await?;
        assert!(page.items.len() <= 1);
        paged.extend(
            page.items
                .into_iter()
                .map(|v| v.value.entity_key().unwrap()),
        );
        if page.next.is_end() {
            break;
        }
        token = Some(page.next);
    }
    assert_eq!(paged, keys);
    Ok(())
}

async fn stream_prefetches_one_page_and_stops_when_dropped(backend: Backend) -> Result<()> {
    let service = backend.service();
    let (table, _) = seed(&service).await?;
    let recording = Recording::over(&service, None);
    let employees = recording
        .client(ClientOptions::default())
        .table::<Employee>(&table);
    // Any order will do (on an ordered engine that is key order): what is counted
    // is the requests, which `order_in_client` would change (it reads the query
    // whole on an unordered engine).
    let mut stream = Box::pin(
        employees
            .query()
            .partition("Sales")
            .any_order()
            .page_size(1)
            .stream(),
    );
    let first = stream.next().await.unwrap()?;
    if backend.ordered() {
        assert_eq!(first.employee_id, 90);
    }
    // While the caller holds the first page, the next one is fetched, and no more.
    for _ in 0..500 {
        if recording.count() >= 2 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert_eq!(recording.count(), 2, "the next page is prefetched");
    tokio::time::sleep(Duration::from_millis(50)).await;
    assert_eq!(recording.count(), 2, "one page ahead at most");
    drop(stream);
    tokio::time::sleep(Duration::from_millis(50)).await;
    assert_eq!(
        recording.count(),
        2,
        "dropping the stream stops the prefetch"
    );
    Ok(())
}

async fn stream_errors_end_the_stream(backend: Backend) -> Result<()> {
    let service = backend.service();
    let (table, _) = seed(&service).await?;
    // The third request fails: two items, then the error, then the end.
    let recording = Recording::over(&service, Some(3));
    let employees = recording
        .client(ClientOptions::default())
        .table::<Employee>(&table);
    let items: Vec<_> = employees
        .query()
        .partition("Sales")
        .any_order()
        .page_size(1)
        .stream()
        .collect()
        .await;
    assert_eq!(items.len(), 3);
    assert!(items[0].is_ok() && items[1].is_ok());
    assert_eq!(items[2].as_ref().unwrap_err().kind(), ErrorKind::Server);
    // A row that doesn't decode is an error in its place; the stream goes on.
    let broken = DynamicEntity::new("Sales", "empid_000095")
        .with("EntityType", "Employee")
        .with("EntityVersion", 1)
        .with("Age", "not a number");
    service
        .engine()
        .write(&table, &WriteOp::Insert(broken))
        .await?;
    let items: Vec<_> = service
        .table::<Employee>(&table)
        .query()
        .partition("Sales")
        .order_in_client(1_000)
        .stream()
        .collect()
        .await;
    assert_eq!(items.len(), SALES.len() + 1);
    assert_eq!(items[1].as_ref().unwrap_err().kind(), ErrorKind::Decode);
    assert_eq!(items.iter().filter(|i| i.is_ok()).count(), SALES.len());
    let err = service
        .table::<Employee>(&table)
        .query()
        .partition("Sales")
        .collect()
        .await
        .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Decode);
    Ok(())
}

tables_tests::typed_matrix!(
    runtime: #[tokio::test(flavor = "multi_thread", worker_threads = 2)];
    partition_query_reads_each_primary_once,
    row_ranges_come_from_the_derive,
    typed_filters_narrow_the_rows,
    unchecked_filter_text_narrows_like_a_typed_filter,
    projection_sends_select_and_decodes,
    take_bounds_the_total_across_pages,
    page_size_shapes_pages,
    plans_follow_the_cost_ladder,
    table_scans_can_be_forbidden,
    page_token_resumes_in_another_client,
    a_token_refuses_another_query,
    a_token_round_trips_as_text,
    unions_decode_each_row_to_its_variant,
    each_primary_once_at_page_size_1,
    stream_prefetches_one_page_and_stops_when_dropped,
    stream_errors_end_the_stream,
);

/// Outside any tokio runtime the stream fetches in-line.
#[test]
fn stream_without_a_runtime_fetches_in_line() {
    let service = Backend::OneRowPages.service();
    let runtime = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    let (table, all) = runtime.block_on(seed(&service)).unwrap();
    drop(runtime);
    assert!(tokio::runtime::Handle::try_current().is_err());
    let stream = service
        .table::<Employee>(&table)
        .query()
        .page_size(2)
        .stream();
    let found: Vec<Employee> = futures::executor::block_on(stream.try_collect()).unwrap();
    assert_eq!(found, all);
}
