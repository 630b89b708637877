//! `verify_indexes` and `repair_indexes`: every index row that differs from what the
//! entities imply is found (also rows no intent records) and repaired, per index or
//! partition, page by page with a resumable token, safely beside writers. On every
//! engine of the typed matrix ([`tables_tests::typed_matrix!`]).

#![allow(clippy::unwrap_used)] // tests

use std::collections::BTreeSet;
use std::sync::Arc;

use tables_client::mem::CallKind;
use tables_client::{
    CheckPhase, CheckToken, DynamicEntity, Engine, EntityKey, ErrorKind, IfMatch, Problem, Row,
    TableServiceClient, WriteOp,
};
use tables_tests::read::{all_rows, get};
use tables_tests::typed::{
    check, create_tables, employee, lose_row, Backend, Employee, Recorder, BY_CITY, BY_EMAIL, STAFF,
};

/// Every row of the entity table and its index tables, by table and key, versions
/// included: to tell that a verification changed nothing.
async fn snapshot(engine: &dyn Engine) -> Vec<(String, DynamicEntity)> {
    let mut rows = Vec::new();
    for table in [STAFF, BY_EMAIL, BY_CITY] {
        for row in all_rows(engine, table).await.unwrap() {
            rows.push((table.to_owned(), row));
        }
    }
    rows
}

/// A copy of `row` to write back raw (no version).
fn bare(mut row: DynamicEntity) -> DynamicEntity {
    row.etag = None;
    row.timestamp = None;
    row
}

/// The problems a report lists, by kind and index.
fn problems(findings: &[tables_client::Finding]) -> BTreeSet<(Problem, String)> {
    findings
        .iter()
        .map(|f| (f.problem, f.index.clone()))
        .collect()
}

/// Rows no intent records or other code broke: a copy delivered late (an orphan),
/// a lost copy, a stale copy, a lost and a stranger index entity member. A
/// verification reports each and changes nothing; a lookup never returns the
/// orphan; a repair fixes all; a second verification finds nothing.
async fn repair_finds_and_fixes_rows_no_intent_records(backend: Backend) {
    let fixture = backend.fresh();
    let (engine, service) = (&fixture.engine, &fixture.service);
    create_tables(service).await.unwrap();
    let staff = service.table::<Employee>(STAFF);
    for id in 1..=3 {
        staff.insert(&employee("Sales", id, 0)).await.unwrap();
    }
    let raw = engine.inner();
    // 1. A by_email copy of employee 1's old value, delivered after its intent was
    //    finished: an orphan.
    let current = Employee::by_email_key("Sales", "e1v0@contoso.com").unwrap();
    let mut late = get(engine, BY_EMAIL, &current.partition_key, &current.row_key)
        .await
        .unwrap()
        .unwrap();
    late.row_key = "e1v9@contoso.com".into();
    raw.write(BY_EMAIL, &WriteOp::Insert(bare(late)))
        .await
        .unwrap();
    //    And a full by_badge copy of its old value, likewise.
    let badge_now = Employee::by_badge_key("b1v0").unwrap();
    let mut late = get(engine, STAFF, &badge_now.partition_key, &badge_now.row_key)
        .await
        .unwrap()
        .unwrap();
    late.row_key = "badge_b1v9".into();
    raw.write(STAFF, &WriteOp::Insert(bare(late)))
        .await
        .unwrap();
    // 2. Employee 2's email copy (in its partition) lost.
    let lost = Employee::email_key("Sales", "e2v0@contoso.com").unwrap();
    lose_row(raw.as_ref(), STAFF, lost.into()).await.unwrap();
    // 3. Employee 3's badge copy stale.
    let badge = Employee::by_badge_key("b3v0").unwrap();
    let stale = get(engine, STAFF, &badge.partition_key, &badge.row_key)
        .await
        .unwrap()
        .unwrap();
    raw.write(STAFF, &WriteOp::UpsertReplace(bare(stale).with("Age", 99)))
        .await
        .unwrap();
    // 4. Employee 1 lost from the Oslo list; a stranger added to the Jones list.
    let oslo = get(engine, BY_CITY, "Oslo", "members")
        .await
        .unwrap()
        .unwrap();
    raw.write(
        BY_CITY,
        &WriteOp::UpsertReplace(bare(oslo).with(
            "Members",
            r#"["Sales\u001fempid_000002","Sales\u001fempid_000003"]"#,
        )),
    )
    .await
    .unwrap();
    let jones = get(engine, STAFF, "Sales", "lastname_Jones")
        .await
        .unwrap()
        .unwrap();
    raw.write(
        STAFF,
        &WriteOp::UpsertReplace(bare(jones).with(
            "Members",
            r#"["empid_000001","empid_000002","empid_000003","empid_000007"]"#,
        )),
    )
    .await
    .unwrap();

    let before = snapshot(engine).await;
    let report = staff.verify_indexes().run().await.unwrap();
    assert_eq!(
        problems(&report.findings),
        [
            (Problem::MissingCopy, "email".to_owned()),
            (Problem::StaleCopy, "by_badge".to_owned()),
            (Problem::MissingMember, "by_city".to_owned()),
            (Problem::OrphanCopy, "by_email".to_owned()),
            (Problem::OrphanCopy, "by_badge".to_owned()),
            (Problem::OrphanMember, "last_name".to_owned()),
        ]
        .into(),
        "{report:#?}"
    );
    assert_eq!(report.entities_checked, 3);
    assert_eq!(report.repaired(), 0);
    assert_eq!(
        snapshot(engine).await,
        before,
        "a verification changes nothing"
    );
    let orphan = Employee::by_email_key("Sales", "e1v9@contoso.com").unwrap();
    assert!(staff.get_by_index(orphan).await.unwrap().is_none());
    let orphan = Employee::by_badge_key("b1v9").unwrap();
    assert!(staff.get_by_index(orphan).await.unwrap().is_none());

    let report = staff.repair_indexes().run().await.unwrap();
    assert_eq!(report.repaired(), report.findings.len(), "{report:#?}");
    assert_eq!(report.findings.len(), 6);
    check::<Employee>(engine, STAFF).await.unwrap();
    assert!(staff.verify_indexes().run().await.unwrap().is_clean());
    fixture.drop_tables().await;
}

/// Entities written before their indexes were declared (past the client): the
/// repair builds every index; per index, it builds only that one.
async fn repair_builds_an_index_declared_later(backend: Backend) {
    let fixture = backend.fresh();
    let (engine, service) = (&fixture.engine, &fixture.service);
    create_tables(service).await.unwrap();
    let staff = service.table::<Employee>(STAFF);
    for id in 1..=4 {
        let row = employee(["Sales", "Ops"][(id % 2) as usize], id, id)
            .to_entity()
            .unwrap();
        engine
            .inner()
            .write(STAFF, &WriteOp::Insert(row))
            .await
            .unwrap();
    }
    let by_email = Employee::by_email_key("Sales", "e2v2@contoso.com").unwrap();
    assert!(staff
        .get_by_index(by_email.clone())
        .await
        .unwrap()
        .is_none());

    let report = staff
        .repair_indexes()
        .index("by_email")
        .run()
        .await
        .unwrap();
    assert_eq!(report.findings.len(), 4, "{report:#?}");
    assert!(report
        .findings
        .iter()
        .all(|f| f.problem == Problem::MissingCopy && f.repaired));
    assert!(staff.get_by_index(by_email).await.unwrap().is_some());
    // The other indexes are untouched so far.
    assert!(!staff.verify_indexes().run().await.unwrap().is_clean());
    let report = staff.repair_indexes().run().await.unwrap();
    assert!(report.repaired() > 0);
    check::<Employee>(engine, STAFF).await.unwrap();
    fixture.drop_tables().await;
}

/// Page by page: progress counts grow, a token (as text) resumes the check in a new
/// one, a token is refused by another check, and a table scan is refused before
/// anything is read when the client forbids it.
async fn checks_run_page_by_page_and_resume_from_a_token(backend: Backend) {
    let fixture = backend.fresh();
    let (engine, service) = (&fixture.engine, &fixture.service);
    create_tables(service).await.unwrap();
    let paged = TableServiceClient::with_options(
        Arc::clone(service.engine()),
        service.options().clone().with_page_size(2),
    );
    for id in 1..=5 {
        let row = employee("Sales", id, 0).to_entity().unwrap();
        engine
            .inner()
            .write(STAFF, &WriteOp::Insert(row))
            .await
            .unwrap();
    }
    let staff = paged.table::<Employee>(STAFF);
    let mut check = staff.repair_indexes().partition("Sales").index("email");
    let first = check.next_page().await.unwrap().unwrap();
    assert_eq!(first.progress.phase, CheckPhase::Entities);
    // A page checks at most the client's page size: fewer on an engine of shorter
    // pages.
    let checked = first.progress.entities_checked;
    assert!(
        (1..=2).contains(&checked),
        "{checked} entities on the first page"
    );
    assert_eq!(first.findings.len() as u64, checked);
    let token: CheckToken = first.next.unwrap().to_string().parse().unwrap();
    drop(check);
    // Another check refuses the token.
    let err = staff
        .repair_indexes()
        .partition("Ops")
        .index("email")
        .resume(token.clone())
        .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::InvalidContinuationToken);
    // The same check resumes where it stopped.
    let mut check = staff
        .repair_indexes()
        .partition("Sales")
        .index("email")
        .resume(token)
        .unwrap();
    let mut repaired = first.findings.iter().filter(|f| f.repaired).count();
    let mut last = None;
    while let Some(page) = check.next_page().await.unwrap() {
        repaired += page.findings.iter().filter(|f| f.repaired).count();
        last = Some(page.progress);
    }
    let last = last.unwrap();
    assert_eq!(last.entities_checked, 5);
    assert_eq!(
        last.phase,
        CheckPhase::IndexRows {
            index: "email".into()
        }
    );
    assert_eq!(
        last.index_rows_checked, 5,
        "the second pass read the 5 copies"
    );
    assert_eq!(repaired, 5);

    // A client that forbids table scans: a whole-table check is refused up front.
    let strict = TableServiceClient::with_options(
        Arc::clone(service.engine()),
        service.options().clone().with_allow_table_scans(false),
    );
    let queries = engine.faults().calls_of(CallKind::Query);
    let err = strict
        .table::<Employee>(STAFF)
        .verify_indexes()
        .run()
        .await
        .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::InvalidQuery);
    assert!(err.to_string().contains("allow_table_scans"), "{err}");
    assert_eq!(engine.faults().calls_of(CallKind::Query), queries);
    // Within a partition, an index kept there needs no scan.
    let report = strict
        .table::<Employee>(STAFF)
        .verify_indexes()
        .partition("Sales")
        .index("email")
        .run()
        .await
        .unwrap();
    assert!(report.is_clean(), "{report:#?}");
    fixture.drop_tables().await;
}

/// Repairs running beside writers (upserts moving every indexed value, deletes)
/// never break an index: afterwards it is exact.
async fn repairs_beside_writers_leave_exact_indexes(backend: Backend) {
    let fixture = backend.fresh();
    let (engine, service) = (&fixture.engine, &fixture.service);
    create_tables(service).await.unwrap();
    let writers: Vec<_> = (0..6u32)
        .map(|id| {
            let staff = service.table::<Employee>(STAFF);
            tokio::spawn(async move {
                let department = ["Sales", "Ops"][(id % 2) as usize];
                for version in 0..5 {
                    staff
                        .upsert(&employee(department, id, version + 10 * id))
                        .await
                        .unwrap();
                }
                if id % 3 == 0 {
                    staff
                        .delete_if_exists(Employee::key(department, id).unwrap())
                        .await
                        .unwrap();
                }
            })
        })
        .collect();
    let repairers: Vec<_> = ["Sales", "Ops"]
        .into_iter()
        .map(|department| {
            let staff = service.table::<Employee>(STAFF);
            tokio::spawn(async move {
                for _ in 0..4 {
                    staff
                        .repair_indexes()
                        .partition(department)
                        .run()
                        .await
                        .unwrap();
                    tokio::task::yield_now().await;
                }
            })
        })
        .collect();
    for task in writers.into_iter().chain(repairers) {
        task.await.unwrap();
    }
    let staff = service.table::<Employee>(STAFF);
    staff.reconcile().await.unwrap();
    let primaries = check::<Employee>(engine, STAFF).await.unwrap();
    assert_eq!(primaries.len(), 4);
    assert!(staff.verify_indexes().run().await.unwrap().is_clean());
    fixture.drop_tables().await;
}

/// Two entities claiming one unique value (written past the client): reported as
/// taken, never repaired, and the repair goes on with everything else.
async fn values_two_entities_claim_are_reported_not_repaired(backend: Backend) {
    let fixture = backend.fresh();
    let (engine, service) = (&fixture.engine, &fixture.service);
    create_tables(service).await.unwrap();
    let staff = service.table::<Employee>(STAFF);
    let ann = employee("Sales", 1, 0);
    staff.insert(&ann).await.unwrap();
    let mut twin = employee("Sales", 2, 0);
    twin.email.clone_from(&ann.email);
    engine
        .inner()
        .write(STAFF, &WriteOp::Insert(twin.to_entity().unwrap()))
        .await
        .unwrap();
    let report = staff.repair_indexes().run().await.unwrap();
    let taken: Vec<_> = report.unresolved().collect();
    assert_eq!(taken.len(), 2, "{report:#?}"); // email and by_email
    assert!(taken.iter().all(|f| f.problem == Problem::TakenCopy
        && f.entity == Some(EntityKey::new("Sales", "empid_000002"))));
    // Everything else of the twin was built.
    let badge = Employee::by_badge_key(&twin.badge).unwrap();
    assert!(staff.get_by_index(badge).await.unwrap().is_some());
    // Ann keeps her copies.
    let email = Employee::email_key("Sales", &ann.email).unwrap();
    assert_eq!(staff.get_by_index(email).await.unwrap().unwrap().value, ann);
    fixture.drop_tables().await;
}

/// The first pass reads an index entity once for a page of the entities it lists,
/// not once per entity: a list can hold thousands of members, and reading it for
/// each made a check quadratic in its length. 30 employees listed by one
/// `lastname_Jones` index entity cost at most one read per check running at once
/// (8) on each page of entities (one page, but on the engine of one-row pages).
/// Then the same with every member missing (the index written past the client's
/// upkeep): each is still found, and repaired, and the index entity is written
/// once for the page, not once per member (a list of thousands rewritten for each
/// made a repair quadratic in its length): a page's repair is one intent, one
/// write of the list and the intent's removal.
async fn an_index_entity_is_read_once_a_page_not_once_a_member(backend: Backend) {
    const STAFF_SIZE: u32 = 30;
    const AT_ONCE: u64 = 8;
    let fixture = backend.fresh();
    let (engine, service) = (&fixture.engine, &fixture.service);
    create_tables(service).await.unwrap();
    let staff = service.table::<Employee>(STAFF);
    for id in 1..=STAFF_SIZE {
        staff.insert(&employee("Sales", id, 0)).await.unwrap();
    }
    let first_pass = |repair: bool| async move {
        let staff = service.table::<Employee>(STAFF);
        let check = if repair {
            staff.repair_indexes()
        } else {
            staff.verify_indexes()
        };
        let mut check = check.index("last_name").partition("Sales");
        let (mut pages, mut reads, mut writes, mut findings) = (0, 0, 0, Vec::new());
        let faults = engine.faults();
        let writes_so_far = || faults.calls_of(CallKind::Write) + faults.calls_of(CallKind::Batch);
        loop {
            let (reads_before, writes_before) =
                (faults.calls_of(CallKind::GetEntity), writes_so_far());
            let page = check.next_page().await.unwrap().unwrap();
            if page.progress.phase != CheckPhase::Entities {
                break; // the second pass's page: its calls are not counted
            }
            reads += faults.calls_of(CallKind::GetEntity) - reads_before;
            writes += writes_so_far() - writes_before;
            pages += 1;
            findings.extend(page.findings);
        }
        (pages, reads, writes, findings)
    };
    let (pages, reads, _, findings) = first_pass(false).await;
    assert!(findings.is_empty(), "{findings:#?}");
    assert!(
        reads <= AT_ONCE * pages,
        "{reads} reads of the index entity for {STAFF_SIZE} members on {pages} page(s)"
    );

    let jones = EntityKey::new("Sales", "lastname_Jones");
    lose_row(engine.inner().as_ref(), STAFF, jones.clone())
        .await
        .unwrap();
    let (pages, _, writes, findings) = first_pass(true).await;
    assert_eq!(findings.len(), STAFF_SIZE as usize, "{findings:#?}");
    assert!(
        writes <= 3 * pages,
        "{writes} writes to repair {STAFF_SIZE} members of one index entity on {pages} page(s)"
    );
    assert!(findings
        .iter()
        .all(|f| f.problem == Problem::MissingMember && f.repaired && f.key == jones));
    assert!(staff.verify_indexes().run().await.unwrap().is_clean());
    check::<Employee>(engine, STAFF).await.unwrap();
    fixture.drop_tables().await;
}

/// A repair settles a page's entities together: it reads each, writes their
/// rows, then reads each again. An entity another writer changes in between
/// (moved from Jones to Smith after the repair read it, before the repair adds it
/// to the Jones index entity) is settled again on its own, so the repair never
/// leaves it listed under its old value.
async fn an_entity_changed_during_a_repair_is_settled_again(backend: Backend) {
    let fixture = backend.fresh();
    let (engine, service) = (&fixture.engine, &fixture.service);
    create_tables(service).await.unwrap();
    let staff = service.table::<Employee>(STAFF);
    for id in 1..=4 {
        staff.insert(&employee("Sales", id, 0)).await.unwrap(); // all Jones
    }
    let jones = EntityKey::new("Sales", "lastname_Jones");
    lose_row(engine.inner().as_ref(), STAFF, jones)
        .await
        .unwrap();
    // The repair reads employees 1 to 4 in turn: as it reads 3, employee 2 (read
    // already, as a Jones) moves to Smith through another client.
    let (client, recorder) = Recorder::wrap(service);
    let writer = service.clone();
    let moved = employee("Sales", 2, 1);
    assert_eq!(moved.last_name, "Smith");
    recorder.before_get(
        STAFF,
        Employee::key("Sales", 3).unwrap().into_entity_key(),
        move || {
            Box::pin(async move {
                let staff = writer.table::<Employee>(STAFF);
                staff.replace(&moved, IfMatch::Any).await.unwrap();
            })
        },
    );
    // The first pass only, over the four employees (the second, over the index
    // rows, would also remove a member left under its old value).
    let mut repair = client
        .table::<Employee>(STAFF)
        .repair_indexes()
        .index("last_name");
    let mut findings = Vec::new();
    loop {
        let page = repair.next_page().await.unwrap().unwrap();
        assert_eq!(page.progress.phase, CheckPhase::Entities);
        findings.extend(page.findings);
        if page.progress.entities_checked == 4 {
            break;
        }
    }
    assert_eq!(findings.len(), 4, "{findings:#?}");
    let stored = staff.get(Employee::key("Sales", 2).unwrap()).await.unwrap();
    assert_eq!(
        stored.unwrap().value.last_name,
        "Smith",
        "the other writer wrote"
    );
    check::<Employee>(engine, STAFF).await.unwrap();
    fixture.drop_tables().await;
}

tables_tests::typed_matrix!(
    #[tokio::test]
    an_index_entity_is_read_once_a_page_not_once_a_member,
    #[tokio::test]
    an_entity_changed_during_a_repair_is_settled_again,
    #[tokio::test]
    repair_finds_and_fixes_rows_no_intent_records,
    #[tokio::test]
    repair_builds_an_index_declared_later,
    #[tokio::test]
    checks_run_page_by_page_and_resume_from_a_token,
    #[tokio::test(flavor = "multi_thread", worker_threads = 4)]
    repairs_beside_writers_leave_exact_indexes,
    #[tokio::test]
    values_two_entities_claim_are_reported_not_repaired,
);
