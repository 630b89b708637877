//! No silent loss in the typed layer: unique indexes, writes through types that
//! lack a kind's indexes, writes whose answer was lost, and the signals a write
//! gives (pending upkeep, attempts, client request ids, lookups' versions,
//! reconcile reports). Every scenario runs on every engine of the typed matrix
//! ([`tables_tests::typed_matrix!`]), with faults injected in front of the engine.

#![allow(clippy::unwrap_used)] // tests

use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use tables_client::mem::{CallKind, Fault};
use tables_client::{
    BulkMode, ClientRequestId, DynamicEntity, Engine, Entity, EntityKey, ErrorKind, IfMatch, Key,
    OnNone, ReconcileReport, Result, Row, RowChange, Table, TableServiceClient, WriteOp,
    WriteOutcome,
};
use tables_tests::read::{all_rows, get};
use tables_tests::typed::{
    check, create_tables, employee, intents, is_tombstone, Backend, Clerk, Department, Employee,
    Fixture, Recorder, BY_CITY, BY_EMAIL, STAFF,
};
use tables_tests::{Forward, Forwarding};

/// Engine calls that write (single writes and transactions).
fn writes(fixture: &Fixture) -> u64 {
    let faults = fixture.engine.faults();
    faults.calls_of(CallKind::Write) + faults.calls_of(CallKind::Batch)
}

// ---- 1. unique indexes ---------------------------------------------------------

/// A second entity with a unique value fails with a typed error naming the index,
/// the value's row and its owner, and writes nothing; the first keeps its copies
/// (the old defect: the second's insert overwrote the first's copy, and deleting the
/// second deleted it).
async fn a_second_entity_with_a_unique_value_fails_and_writes_nothing(backend: Backend) {
    let fixture = backend.fresh();
    let service = &fixture.service;
    create_tables(service).await.unwrap();
    let staff = service.table::<Employee>(STAFF);
    let ann = employee("Sales", 1, 0);
    staff.insert(&ann).await.unwrap();

    // The same email (an index in the partition).
    let mut bob = employee("Sales", 2, 0);
    bob.email.clone_from(&ann.email);
    let sent = writes(&fixture);
    let err = staff.insert(&bob).await.unwrap_err();
    assert_eq!(err.kind(), ErrorKind::UniqueViolation, "{err:?}");
    assert!(!err.may_have_applied());
    let violation = err.unique_violation().unwrap();
    assert_eq!(violation.index(), "email");
    assert_eq!(violation.owner(), &ann.entity_key().unwrap());
    assert_eq!(violation.writer(), &bob.entity_key().unwrap());
    assert_eq!(
        violation.index_key(),
        &Employee::email_key("Sales", &ann.email).unwrap()
    );
    assert_eq!(writes(&fixture), sent, "nothing was sent");

    // The same badge (an index in another partition: checked before any claim).
    let mut bob = employee("Sales", 2, 0);
    bob.badge.clone_from(&ann.badge);
    let err = staff.insert(&bob).await.unwrap_err();
    assert_eq!(err.unique_violation().unwrap().index(), "by_badge");
    assert_eq!(writes(&fixture), sent, "nothing was sent");
    assert!(staff
        .get(bob.entity_key().unwrap())
        .await
        .unwrap()
        .is_none());

    // An update to a taken value fails the same way and leaves the entity as it was.
    let bob = employee("Sales", 2, 0);
    staff.insert(&bob).await.unwrap();
    let mut taker = bob.clone();
    taker.email.clone_from(&ann.email);
    let err = staff.replace(&taker, IfMatch::Any).await.unwrap_err();
    assert_eq!(err.kind(), ErrorKind::UniqueViolation);
    assert_eq!(
        staff
            .get(bob.entity_key().unwrap())
            .await
            .unwrap()
            .unwrap()
            .value,
        bob
    );

    // Deleting the second leaves the first findable by every index.
    staff
        .delete(bob.entity_key().unwrap(), IfMatch::Any)
        .await
        .unwrap();
    let found = staff
        .get_by_index(Employee::email_key("Sales", &ann.email).unwrap())
        .await
        .unwrap();
    assert_eq!(found.map(|v| v.value), Some(ann.clone()));
    let found = staff
        .get_by_index(Employee::by_badge_key(&ann.badge).unwrap())
        .await
        .unwrap();
    assert_eq!(found.map(|v| v.value), Some(ann));
    check::<Employee>(&fixture.engine, STAFF).await.unwrap();
    fixture.drop_tables().await;
}

/// 16 writers claiming one email and one badge: exactly one wins, the others get
/// the typed error, and the indexes are exact afterwards.
async fn sixteen_writers_claiming_one_value_one_wins(backend: Backend) {
    let fixture = backend.fresh();
    let service = &fixture.service;
    create_tables(service).await.unwrap();
    let writers: Vec<_> = (1..=16)
        .map(|id| {
            let staff = service.table::<Employee>(STAFF);
            let mut e = employee(["Sales", "Ops"][(id % 2) as usize], id, 0);
            e.email = "shared@contoso.com".into();
            e.badge = "shared".into();
            tokio::spawn(async move { staff.insert(&e).await })
        })
        .collect();
    let mut won = 0;
    for writer in writers {
        match writer.await.unwrap() {
            Ok(_) => won += 1,
            Err(err) => {
                assert_eq!(err.kind(), ErrorKind::UniqueViolation, "{err:?}");
                assert!(!err.may_have_applied(), "{err:?}");
            }
        }
    }
    assert_eq!(won, 1);
    let staff = service.table::<Employee>(STAFF);
    staff.reconcile().await.unwrap();
    let primaries = check::<Employee>(&fixture.engine, STAFF).await.unwrap();
    assert_eq!(primaries.len(), 1);
    let winner = staff
        .get_by_index(Employee::by_badge_key("shared").unwrap())
        .await
        .unwrap()
        .unwrap();
    assert_eq!(winner.value.email, "shared@contoso.com");
    fixture.drop_tables().await;
}

/// A writer that dies between claiming a value in another partition and its
/// commit leaves a claim that blocks the value (its write may still be at work);
/// `reconcile()` fences the write and releases the claim.
async fn a_claim_left_by_a_crash_is_released_by_reconcile(backend: Backend) {
    let fixture = backend.fresh();
    let (engine, service) = (&fixture.engine, &fixture.service);
    create_tables(service).await.unwrap();
    let staff = service.table::<Employee>(STAFF);
    // Bob's insert: the intent (write 1), claims of by_email and by_badge (writes 2
    // and 3), then the transaction, which fails; and every later write fails, so
    // the writer can't release its claims either.
    engine
        .faults()
        .inject(Fault::fail(ErrorKind::Transport).on(CallKind::Batch).nth(1));
    engine.faults().inject(
        Fault::fail(ErrorKind::Transport)
            .on(CallKind::Write)
            .nth(4)
            .times(100),
    );
    let bob = employee("Sales", 2, 0);
    let err = staff.insert(&bob).await.unwrap_err();
    engine.faults().clear();
    assert_eq!(err.kind(), ErrorKind::Transport);
    assert!(
        !err.may_have_applied(),
        "the transaction was refused: {err:?}"
    );
    assert!(staff
        .get(bob.entity_key().unwrap())
        .await
        .unwrap()
        .is_none());
    let claim = get(engine, "Staff", "badges", &format!("badge_{}", bob.badge))
        .await
        .unwrap()
        .expect("the claim stays");
    assert!(claim.get("PrimaryIntent").is_some());
    assert!(
        staff
            .get_by_index(Employee::by_badge_key(&bob.badge).unwrap())
            .await
            .unwrap()
            .is_none(),
        "a claim of a write that didn't commit leads nowhere"
    );

    // The value is blocked while the claiming write may be at work...
    let mut carol = employee("Ops", 3, 0);
    carol.badge.clone_from(&bob.badge);
    let err = staff.insert(&carol).await.unwrap_err();
    assert_eq!(err.kind(), ErrorKind::UniqueViolation);
    // ... until reconcile() fences it and releases its claims.
    let report = staff.reconcile().await.unwrap();
    assert_eq!(report.intents_aborted, 1, "{report:?}");
    assert!(report.index_rows_removed() >= 2, "{report:?}");
    staff.insert(&carol).await.unwrap();
    check::<Employee>(engine, STAFF).await.unwrap();
    fixture.drop_tables().await;
}

/// A claim whose write committed stays its owner's even when its intent is lost
/// (deleted by other code before the upkeep finished): the owner holds the value,
/// so another entity's write of it is refused, not let to take the copy over; a
/// repair then makes the claim final.
async fn a_committed_claim_stays_its_owners_when_its_intent_is_lost(backend: Backend) {
    let fixture = backend.fresh();
    let (engine, service) = (&fixture.engine, &fixture.service);
    create_tables(service).await.unwrap();
    let staff = service.table::<Employee>(STAFF);
    // Ann's insert commits, and its process dies before the upkeep: her claims
    // keep their marks, and the intent is pending.
    let (crashing, recorder) = Recorder::wrap(service);
    recorder.fail_writes_after_commit(true);
    let ann = employee("Sales", 1, 0);
    let outcome = crashing
        .table::<Employee>(STAFF)
        .insert(&ann)
        .await
        .unwrap();
    assert!(outcome.pending_upkeep.is_some());
    let badge_key = Employee::by_badge_key(&ann.badge).unwrap();
    let claim = get(engine, STAFF, "badges", &format!("badge_{}", ann.badge))
        .await
        .unwrap()
        .expect("the claim");
    assert!(claim.get("PrimaryIntent").is_some(), "{claim:?}");
    // Other code deletes the intent.
    let intent = all_rows(engine, STAFF)
        .await
        .unwrap()
        .into_iter()
        .find(|r| r.row_key.starts_with("$intent_"))
        .expect("the intent");
    tables_tests::typed::lose_row(engine.inner().as_ref(), STAFF, intent.key())
        .await
        .unwrap();
    // Bob wants Ann's badge: refused, the claim is Ann's.
    let mut bob = employee("Ops", 2, 0);
    bob.badge.clone_from(&ann.badge);
    let err = staff.insert(&bob).await.unwrap_err();
    assert_eq!(err.kind(), ErrorKind::UniqueViolation, "{err}");
    let found = staff.get_by_index(badge_key.clone()).await.unwrap();
    assert_eq!(found.map(|v| v.value), Some(ann.clone()));
    staff.repair_indexes().run().await.unwrap();
    check::<Employee>(engine, STAFF).await.unwrap();
    let found = staff.get_by_index(badge_key).await.unwrap();
    assert_eq!(found.map(|v| v.value), Some(ann));
    fixture.drop_tables().await;
}

/// No write ever replaces or deletes a copy another entity holds, even where the
/// stored rows disagree with the entities (data written by other code).
async fn writes_never_touch_another_entitys_copy(backend: Backend) {
    let fixture = backend.fresh();
    let (engine, service) = (&fixture.engine, &fixture.service);
    create_tables(service).await.unwrap();
    let staff = service.table::<Employee>(STAFF);
    let ann = employee("Sales", 1, 0);
    staff.insert(&ann).await.unwrap();
    // Other code overwrote Ann's email copy with a copy claiming to be Carol's.
    let key = Employee::email_key("Sales", &ann.email).unwrap();
    let mut carols = get(engine, STAFF, &key.partition_key, &key.row_key)
        .await
        .unwrap()
        .unwrap();
    carols.insert("PrimaryRowKey", "empid_000009");
    carols.etag = None;
    carols.timestamp = None;
    engine
        .inner()
        .write(STAFF, &WriteOp::UpsertReplace(carols))
        .await
        .unwrap();
    let before = get(engine, STAFF, &key.partition_key, &key.row_key)
        .await
        .unwrap()
        .unwrap();
    // Ann moves away from the value: her write must not delete Carol's row.
    staff
        .replace(&employee("Sales", 1, 1), IfMatch::Any)
        .await
        .unwrap();
    let after = get(engine, STAFF, &key.partition_key, &key.row_key)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(after.etag, before.etag, "Carol's copy is untouched");
    // Nor does reconcile().
    staff.reconcile().await.unwrap();
    let again = get(engine, STAFF, &key.partition_key, &key.row_key)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(again.etag, before.etag);
    fixture.drop_tables().await;
}

// ---- 2. writes through a type that lacks the kind's indexes --------------------

/// A projection of `Employee`: the same kind and keys, none of its indexes.
#[derive(Entity, Debug, Clone, PartialEq)]
#[entity(kind = "Employee", rename_all = "PascalCase")]
#[entity(partition_key = "{department}", row_key = "empid_{employee_id:06}")]
struct EmployeeName {
    department: String,
    employee_id: u32,
    first_name: String,
    last_name: String,
}

/// Version 2 of a kind, and its older version 1.
#[derive(Entity, Debug, Clone, PartialEq)]
#[entity(
    kind = "Member",
    version = 2,
    partition_key = "{team}",
    row_key = "m_{id:04}"
)]
#[entity(unique_index(name = "email", row_key = "email_{email}"))]
struct Member {
    team: String,
    id: u16,
    email: String,
    nick: Option<String>,
}

#[derive(Entity, Debug, Clone, PartialEq)]
#[entity(
    kind = "Member",
    version = 1,
    partition_key = "{team}",
    row_key = "m_{id:04}"
)]
#[entity(unique_index(name = "email", row_key = "email_{email}"))]
struct MemberV1 {
    team: String,
    id: u16,
    email: String,
}

async fn writes_through_a_projection_or_an_older_version_are_refused(backend: Backend) {
    let fixture = backend.fresh();
    let service = &fixture.service;
    create_tables(service).await.unwrap();
    service.create_table("Members").await.unwrap();
    let staff = service.table::<Employee>(STAFF);
    let ann = employee("Sales", 1, 0);
    staff.insert(&ann).await.unwrap();
    let names = service.table::<EmployeeName>(STAFF);
    let name = EmployeeName {
        department: "Sales".into(),
        employee_id: 1,
        first_name: "Ann".into(),
        last_name: "Other".into(),
    };
    let refused = |err: tables_client::Error, write_through: &str| {
        assert_eq!(err.kind(), ErrorKind::InvalidInput, "{err:?}");
        let text = err.to_string();
        assert!(
            text.contains(&format!("Write through {write_through}")),
            "{text}"
        );
    };
    let sent = writes(&fixture);
    let employee_type = "tables_tests::typed::staff::Employee";
    refused(
        names
            .merge(&name, OnNone::KeepStored, IfMatch::Any)
            .await
            .unwrap_err(),
        employee_type,
    );
    refused(
        names.replace(&name, IfMatch::Any).await.unwrap_err(),
        employee_type,
    );
    refused(names.upsert(&name).await.unwrap_err(), employee_type);
    refused(names.insert(&name).await.unwrap_err(), employee_type);
    refused(
        names
            .delete(
                Key::from_entity_key(ann.entity_key().unwrap().into()),
                IfMatch::Any,
            )
            .await
            .unwrap_err(),
        employee_type,
    );
    refused(
        service
            .transaction(STAFF, "Sales")
            .merge(&name, OnNone::KeepStored, IfMatch::Any)
            .submit()
            .await
            .unwrap_err(),
        employee_type,
    );
    refused(
        service
            .bulk_writer::<EmployeeName>(STAFF)
            .mode(BulkMode::Upsert)
            .write_all([name.clone()])
            .await
            .unwrap_err(),
        employee_type,
    );
    let old = MemberV1 {
        team: "t".into(),
        id: 1,
        email: "m@x".into(),
    };
    refused(
        service
            .table::<MemberV1>("Members")
            .insert(&old)
            .await
            .unwrap_err(),
        "typed_integrity::Member",
    );
    assert_eq!(writes(&fixture), sent, "nothing was sent");
    // Reading through the projection is fine; the full types write.
    let read = staff
        .query()
        .partition("Sales")
        .select::<EmployeeName>()
        .collect()
        .await
        .unwrap();
    assert_eq!(read[0].first_name, ann.first_name);
    let member = Member {
        team: "t".into(),
        id: 1,
        email: "m@x".into(),
        nick: None,
    };
    service
        .table::<Member>("Members")
        .insert(&member)
        .await
        .unwrap();
    check::<Employee>(&fixture.engine, STAFF).await.unwrap();
    fixture.drop_tables().await;
}

// ---- 3. retries that lie -------------------------------------------------------

/// The answer of a write that committed is lost: the client reads the write's
/// intent (its commit marker), learns it committed and reports success, once; it
/// never sends the transaction again. The cases: an insert, a replace over
/// a later merge, an `upsert_merge`, a delete.
async fn a_lost_answer_is_settled_by_the_commit_marker(backend: Backend) {
    let fixture = backend.fresh();
    let (engine, service) = (&fixture.engine, &fixture.service);
    create_tables(service).await.unwrap();
    let staff = service.table::<Employee>(STAFF);
    let lose_next_answer = || {
        engine.faults().inject(
            Fault::fail_after_applying(ErrorKind::Timeout)
                .on(CallKind::Batch)
                .nth(1),
        );
    };
    let batches = || engine.faults().calls_of(CallKind::Batch);

    lose_next_answer();
    let before = batches();
    let outcome = staff.insert(&employee("Sales", 1, 0)).await.unwrap();
    assert_eq!(batches() - before, 1, "the transaction was sent once");
    assert_eq!(
        outcome.etag, None,
        "the version is unknown after a lost answer"
    );
    assert_eq!(outcome.pending_upkeep, None);

    for (version, write) in [(1, "replace"), (2, "upsert_merge")] {
        lose_next_answer();
        let before = batches();
        let e = employee("Sales", 1, version);
        match write {
            "replace" => staff.replace(&e, IfMatch::Any).await.map(drop),
            _ => staff.upsert_merge(&e, OnNone::KeepStored).await.map(drop),
        }
        .unwrap();
        assert_eq!(batches() - before, 1, "{write}: sent once");
        let stored = staff.get(e.entity_key().unwrap()).await.unwrap().unwrap();
        assert_eq!(stored.value.email, e.email, "{write} applied");
    }
    lose_next_answer();
    staff
        .delete(Employee::key("Sales", 1).unwrap(), IfMatch::Any)
        .await
        .unwrap();
    assert_eq!(intents(engine, STAFF).await.unwrap(), 0);
    check::<Employee>(engine, STAFF).await.unwrap();
    fixture.drop_tables().await;
}

/// A shift, indexed by day in another table (not unique: its keys hold the shift's
/// key), so its writes carry an intent but claim nothing.
#[derive(Entity, Debug, Clone, PartialEq)]
#[entity(kind = "Shift", partition_key = "{team}", row_key = "s_{id:04}")]
#[entity(index(
    name = "by_day",
    table = "ShiftsByDay",
    partition_key = "{day}",
    row_key = "{team}_{id:04}"
))]
struct Shift {
    team: String,
    id: u16,
    day: String,
}

/// The `Shifts` table, created, and a shift to write to it.
async fn shifts_and_monday(service: &TableServiceClient) -> (Table<Shift>, Shift) {
    let shifts = service.table::<Shift>("Shifts");
    shifts.create_if_not_exists().await.unwrap();
    let monday = Shift {
        team: "Sales".into(),
        id: 1,
        day: "Mon".into(),
    };
    (shifts, monday)
}

/// A request lost before it applied, whose sender can't tell (the error says it may
/// have applied): the marker says it did not commit, so the client fences it, so
/// that a late delivery can't commit, and reports an error that says the write did
/// not apply. Without claims, the fence is a tombstone where the transaction would
/// insert its intent; with claims, the claiming intent is aborted (the transaction
/// is conditional on it) and the claims are released.
async fn a_request_lost_in_doubt_is_fenced_and_reported_as_not_applied(backend: Backend) {
    let fixture = backend.fresh();
    let (engine, service) = (&fixture.engine, &fixture.service);
    create_tables(service).await.unwrap();
    let lose_next_request = || {
        engine.faults().inject(
            Fault::fail_in_doubt(ErrorKind::Timeout)
                .on(CallKind::Batch)
                .nth(1),
        );
    };
    let (shifts, monday) = shifts_and_monday(service).await;
    lose_next_request();
    let err = shifts.insert(&monday).await.unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Timeout);
    assert!(!err.may_have_applied(), "settled: not applied: {err:?}");
    assert!(shifts
        .get(monday.entity_key().unwrap())
        .await
        .unwrap()
        .is_none());
    let fences: Vec<DynamicEntity> = all_rows(engine, "Shifts")
        .await
        .unwrap()
        .into_iter()
        .filter(is_tombstone)
        .collect();
    assert_eq!(fences.len(), 1, "the fence stays for the retention period");
    // A late delivery of that transaction (it inserts the intent) fails on it.
    let mut late = fences[0].clone();
    late.etag = None;
    late.timestamp = None;
    let err = engine
        .inner()
        .write("Shifts", &WriteOp::Insert(late))
        .await
        .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::EntityAlreadyExists);
    shifts.insert(&monday).await.unwrap();

    // With claims.
    let staff = service.table::<Employee>(STAFF);
    let ann = employee("Sales", 1, 0);
    lose_next_request();
    let err = staff.insert(&ann).await.unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Timeout);
    assert!(!err.may_have_applied(), "settled: not applied: {err:?}");
    assert!(staff
        .get(ann.entity_key().unwrap())
        .await
        .unwrap()
        .is_none());
    assert_eq!(
        intents(engine, STAFF).await.unwrap(),
        0,
        "the claims are released"
    );
    staff.insert(&ann).await.unwrap();
    check::<Employee>(engine, STAFF).await.unwrap();
    fixture.drop_tables().await;
}

/// A transaction the transport sent twice (it lost the first answer) commits, and
/// the writer can't know whether the other copy is still on its way: so its intent
/// stays as a tombstone, not deleted. A copy delivered late, after the entity was
/// deleted, then fails on it, instead of inserting the deleted entity again.
async fn a_late_copy_of_a_committed_transaction_cannot_undo_a_later_write(backend: Backend) {
    let fixture = backend.fresh();
    let (engine, service) = (&fixture.engine, &fixture.service);
    let (shifts, monday) = shifts_and_monday(service).await;
    let (client, recorder) = Recorder::wrap(service);
    recorder.send_next_batch_twice();
    let outcome = client
        .table::<Shift>("Shifts")
        .insert(&monday)
        .await
        .unwrap();
    assert_eq!(outcome.attempts, 2, "{outcome:?}");
    let key = monday.entity_key().unwrap();
    shifts.delete(key.clone(), IfMatch::Any).await.unwrap();
    let late = recorder.deliver_late_copy().await.unwrap_err();
    assert_eq!(late.kind(), ErrorKind::EntityAlreadyExists, "{late}");
    assert!(
        shifts.get(key).await.unwrap().is_none(),
        "the deleted entity stays deleted"
    );
    shifts.reconcile().await.unwrap();
    check::<Shift>(engine, "Shifts").await.unwrap();
    fixture.drop_tables().await;
}

/// A transaction with claims whose request is still on its way when the writer
/// gives up: the writer reads the marker (`claiming`), fences it (`aborted`) and
/// releases the claims. The transaction is conditional on the claiming version, so
/// delivered while the claims are released it fails, and the write the writer
/// reported as not applied never applies.
async fn a_fenced_claiming_write_delivered_late_never_applies(backend: Backend) {
    /// Delivers the held transaction at the first read of `key` after it is held.
    fn deliver_at(recorder: Recorder, key: EntityKey, answer: Arc<Mutex<Option<Result<()>>>>) {
        let again = recorder.clone();
        recorder.before_get(STAFF, key.clone(), move || {
            Box::pin(async move {
                if again.holds_a_copy() {
                    let delivered = again.deliver_late_copy().await.map(drop);
                    *answer.lock().unwrap() = Some(delivered);
                } else {
                    deliver_at(again, key, answer);
                }
            })
        });
    }
    let fixture = backend.fresh();
    let (engine, service) = (&fixture.engine, &fixture.service);
    create_tables(service).await.unwrap();
    let (client, recorder) = Recorder::wrap(service);
    let ann = employee("Sales", 1, 0);
    let claim = Employee::by_badge_key(&ann.badge)
        .unwrap()
        .into_entity_key();
    let answer = Arc::new(Mutex::new(None));
    recorder.hold_next_batch();
    deliver_at(recorder.clone(), claim, Arc::clone(&answer));
    let err = client
        .table::<Employee>(STAFF)
        .insert(&ann)
        .await
        .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Timeout);
    assert!(!err.may_have_applied(), "settled: not applied: {err:?}");
    let late = answer
        .lock()
        .unwrap()
        .take()
        .expect("delivered while releasing");
    let late = late.unwrap_err();
    assert_eq!(late.kind(), ErrorKind::PreconditionFailed, "{late}");
    let staff = service.table::<Employee>(STAFF);
    assert!(
        staff
            .get(ann.entity_key().unwrap())
            .await
            .unwrap()
            .is_none(),
        "the write reported as not applied did not apply"
    );
    staff.reconcile().await.unwrap();
    check::<Employee>(engine, STAFF).await.unwrap();
    staff.insert(&ann).await.unwrap();
    check::<Employee>(engine, STAFF).await.unwrap();
    fixture.drop_tables().await;
}

/// An engine wrapper whose next transaction applies and then fails with a given
/// error: what the remote engine returns when an answer was lost and its retry met
/// the first attempt's effect (e.g. `412` at operation 0, marked may-have-applied).
#[derive(Debug)]
struct LostAnswer {
    inner: Arc<dyn Engine>,
    next: Mutex<Option<tables_client::Error>>,
}

#[async_trait]
impl Forward for LostAnswer {
    fn inner(&self) -> &dyn Engine {
        self.inner.as_ref()
    }

    async fn submit_batch(&self, table: &str, ops: &[WriteOp]) -> Result<Vec<WriteOutcome>> {
        let outcomes = self.inner.submit_batch(table, ops).await?;
        match self.next.lock().unwrap().take() {
            Some(err) => Err(err),
            None => Ok(outcomes),
        }
    }
}

/// Without a marker (indexes in the partition only, or none), a write whose answer
/// was lost is reported with the mark; it is never planned and sent again (the old
/// conflict loop took the retry's 412 for a lost race and re-applied the write).
async fn without_a_marker_a_doubtful_write_is_reported_not_repeated(backend: Backend) {
    let fixture = backend.fresh();
    let engine = &fixture.engine;
    let lost = Arc::new(Forwarding(LostAnswer {
        inner: Arc::new(engine.clone()),
        next: Mutex::new(None),
    }));
    let service = TableServiceClient::from_engine(lost.clone());
    service.create_table("Clerks").await.unwrap();
    let clerks = service.table::<Clerk>("Clerks");
    let clerk = |email: &str| Clerk {
        department: "Sales".into(),
        id: 1,
        email: email.into(),
        desk: "d1".into(),
        team: "red".into(),
    };
    clerks.insert(&clerk("a@x")).await.unwrap();
    *lost.next.lock().unwrap() = Some(
        tables_client::Error::new(ErrorKind::PreconditionFailed, "412 on the retry")
            .with_batch_index(0)
            .with_may_have_applied(),
    );
    let before = writes(&fixture);
    let err = clerks
        .replace(&clerk("b@x"), IfMatch::Any)
        .await
        .unwrap_err();
    assert_eq!(writes(&fixture) - before, 1, "not planned and sent again");
    assert!(err.may_have_applied(), "{err:?}");
    let stored = clerks
        .get(Clerk::key("Sales", 1).unwrap())
        .await
        .unwrap()
        .unwrap();
    assert_eq!(stored.value, clerk("b@x"), "it had applied, once");
    check::<Clerk>(engine, "Clerks").await.unwrap();

    // A type without indexes: the single write, reported with the mark.
    service.create_table(STAFF).await.unwrap();
    let departments = service.table::<Department>(STAFF);
    engine.faults().inject(
        Fault::fail_after_applying(ErrorKind::Timeout)
            .on(CallKind::Write)
            .nth(1),
    );
    let sales = Department {
        name: "Sales".into(),
        employee_count: 1,
    };
    let err = departments.upsert(&sales).await.unwrap_err();
    assert!(err.may_have_applied(), "{err:?}");
    fixture.drop_tables().await;
}

/// `delete_if_exists` keeps the doubt: an absent entity met after a lost answer is
/// no proof there was none. With a marker, the doubt is settled.
async fn delete_if_exists_keeps_the_doubt(backend: Backend) {
    let fixture = backend.fresh();
    let (engine, service) = (&fixture.engine, &fixture.service);
    create_tables(service).await.unwrap();
    let departments = service.table::<Department>(STAFF);
    let sales = Department {
        name: "Sales".into(),
        employee_count: 1,
    };
    departments.insert(&sales).await.unwrap();
    // The delete applied, its answer was lost, and the retry met no entity.
    engine.faults().inject(
        Fault::fail_after_applying(ErrorKind::EntityNotFound)
            .on(CallKind::Write)
            .nth(1),
    );
    let err = departments
        .delete_if_exists(sales.entity_key().unwrap())
        .await
        .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::EntityNotFound);
    assert!(err.may_have_applied(), "not Ok(false): {err:?}");
    // Certainly absent: Ok(false).
    assert!(!departments
        .delete_if_exists(sales.entity_key().unwrap())
        .await
        .unwrap());

    // An indexed entity's delete carries a marker: the doubt is settled.
    let staff = service.table::<Employee>(STAFF);
    let ann = employee("Sales", 1, 0);
    staff.insert(&ann).await.unwrap();
    engine.faults().inject(
        Fault::fail_after_applying(ErrorKind::Timeout)
            .on(CallKind::Batch)
            .nth(1),
    );
    assert!(staff
        .delete_if_exists(ann.entity_key().unwrap())
        .await
        .unwrap());
    check::<Employee>(engine, STAFF).await.unwrap();
    fixture.drop_tables().await;
}

// ---- 5. honest signals ---------------------------------------------------------

/// An engine wrapper that, once armed, changes a row right before the next
/// transaction (a concurrent writer winning the race), and records the client
/// request id of every call.
#[derive(Debug)]
struct Meddler {
    inner: Arc<dyn Engine>,
    meddle: Mutex<Option<(String, WriteOp)>>,
    ids: Mutex<Vec<Option<String>>>,
}

#[async_trait]
impl Forward for Meddler {
    fn inner(&self) -> &dyn Engine {
        self.inner.as_ref()
    }

    async fn get_entity(
        &self,
        table: &str,
        key: &EntityKey,
        select: Option<&[String]>,
    ) -> Result<Option<DynamicEntity>> {
        self.note();
        self.inner.get_entity(table, key, select).await
    }

    async fn write(&self, table: &str, op: &WriteOp) -> Result<WriteOutcome> {
        self.note();
        self.inner.write(table, op).await
    }

    async fn submit_batch(&self, table: &str, ops: &[WriteOp]) -> Result<Vec<WriteOutcome>> {
        self.note();
        let meddle = self.meddle.lock().unwrap().take();
        if let Some((table, op)) = meddle {
            self.inner.write(&table, &op).await?;
        }
        self.inner.submit_batch(table, ops).await
    }
}

impl Meddler {
    fn note(&self) {
        let id = ClientRequestId::current().map(|id| id.as_str().to_owned());
        self.ids.lock().unwrap().push(id);
    }
}

/// A write that lost a race says it took two attempts; every request of one call
/// carries one client request id, the caller's or one made for the call, and the
/// outcome reports it.
async fn attempts_and_client_request_ids(backend: Backend) {
    let fixture = backend.fresh();
    create_tables(&fixture.service).await.unwrap();
    let meddler = Arc::new(Forwarding(Meddler {
        inner: Arc::new(fixture.engine.clone()),
        meddle: Mutex::new(None),
        ids: Mutex::new(Vec::new()),
    }));
    let service = TableServiceClient::from_engine(meddler.clone());
    let staff = service.table::<Employee>(STAFF);
    let ann = employee("Sales", 1, 0);
    let first = staff.insert(&ann).await.unwrap();
    assert_eq!(first.attempts, 1);
    let calls: Vec<Option<String>> = std::mem::take(&mut *meddler.ids.lock().unwrap());
    assert!(calls.len() > 1);
    let id = first.client_request_id.clone().unwrap();
    assert!(
        calls.iter().all(|c| c.as_deref() == Some(id.as_str())),
        "{calls:?}"
    );

    // Another writer changes Ann right before the transaction: the write loses the
    // race, plans again, and says so.
    let mut other = ann.to_entity().unwrap();
    other.insert("Age", 99);
    *meddler.meddle.lock().unwrap() = Some((
        STAFF.to_owned(),
        WriteOp::Merge {
            entity: other,
            if_match: IfMatch::Any,
        },
    ));
    let mine = ClientRequestId::new("raise-ann-7").unwrap();
    let outcome = mine
        .clone()
        .scope(staff.replace(&employee("Sales", 1, 0), IfMatch::Any))
        .await
        .unwrap();
    assert_eq!(outcome.attempts, 2);
    assert_eq!(outcome.client_request_id.as_deref(), Some("raise-ann-7"));
    let calls = std::mem::take(&mut *meddler.ids.lock().unwrap());
    assert!(
        calls.iter().all(|c| c.as_deref() == Some("raise-ann-7")),
        "{calls:?}"
    );
    // Errors carry it too.
    let err = staff.insert(&ann).await.unwrap_err();
    assert_eq!(err.kind(), ErrorKind::EntityAlreadyExists);
    assert!(err.client_request_id().is_some());
    check::<Employee>(&fixture.engine, STAFF).await.unwrap();
    fixture.drop_tables().await;
}

/// `reconcile()` refuses a table scan a client forbids; `reconcile_partition`
/// works on one partition; the report lists every row touched and every failure,
/// and a partial failure is an error carrying the report.
async fn reconcile_per_partition_and_its_report(backend: Backend) {
    let fixture = backend.fresh();
    let (engine, service) = (&fixture.engine, &fixture.service);
    create_tables(service).await.unwrap();
    let strict = TableServiceClient::with_options(
        Arc::clone(service.engine()),
        service.options().clone().with_allow_table_scans(false),
    );
    let queries = engine.faults().calls_of(CallKind::Query);
    let err = strict
        .table::<Employee>(STAFF)
        .reconcile()
        .await
        .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::InvalidQuery);
    assert!(err.to_string().contains("reconcile_partition"), "{err}");
    assert_eq!(
        engine.faults().calls_of(CallKind::Query),
        queries,
        "nothing read"
    );

    // Two writes whose upkeep elsewhere fails after their commits (the writes after
    // the transaction: the intent, the claims of by_email and by_badge come first).
    let staff = service.table::<Employee>(STAFF);
    for (department, id) in [("Sales", 1), ("Ops", 2)] {
        engine.faults().inject(
            Fault::fail(ErrorKind::Transport)
                .on(CallKind::Write)
                .nth(4)
                .times(100),
        );
        let outcome = staff.insert(&employee(department, id, 0)).await.unwrap();
        engine.faults().clear();
        let pending = outcome.pending_upkeep.expect("the upkeep is pending");
        assert_eq!(pending.intent().partition_key, department);
    }
    assert_eq!(intents(engine, STAFF).await.unwrap(), 2);

    // One partition at a time, with a client that forbids table scans.
    let report = strict
        .table::<Employee>(STAFF)
        .reconcile_partition("Sales")
        .await
        .unwrap();
    assert_eq!((report.intents_found, report.intents_finished), (1, 1));
    assert!(report
        .touched
        .iter()
        .any(|t| t.table == BY_EMAIL && t.change == RowChange::CopyWritten));
    assert!(report
        .touched
        .iter()
        .any(|t| t.table == BY_CITY && t.change == RowChange::MemberAdded));
    assert_eq!(intents(engine, STAFF).await.unwrap(), 1);

    // A failure doesn't stop the others, and is reported with the whole report.
    service.delete_table(BY_CITY).await.unwrap();
    let err = staff.reconcile().await.unwrap_err();
    let report = ReconcileReport::from_error(&err).expect("the error carries the report");
    assert_eq!(report.failures.len(), 1, "{report:?}");
    assert_eq!(report.failures[0].intent.partition_key, "Ops");
    assert_eq!(err.kind(), report.failures[0].error.kind());
    service.create_table(BY_CITY).await.unwrap();
    let report = staff.reconcile().await.unwrap();
    assert_eq!(report.intents_finished, 1);
    // The table was dropped with Sales' membership in it: a repair rebuilds it.
    let repaired = staff.repair_indexes().run().await.unwrap();
    assert_eq!(repaired.repaired(), 1, "{repaired:?}");
    check::<Employee>(engine, STAFF).await.unwrap();
    fixture.drop_tables().await;
}

/// A lookup returns the entity with its own version: writing it back conditionally
/// works (also on Azure, where one transaction's rows need not share an ETag).
async fn get_by_index_returns_the_entitys_own_version(backend: Backend) {
    let fixture = backend.fresh();
    let service = &fixture.service;
    create_tables(service).await.unwrap();
    let staff = service.table::<Employee>(STAFF);
    let ann = employee("Sales", 1, 0);
    staff.insert(&ann).await.unwrap();
    let stored = staff.get(ann.entity_key().unwrap()).await.unwrap().unwrap();
    let lookups = [
        staff
            .get_by_index(Employee::email_key("Sales", &ann.email).unwrap())
            .await,
        staff
            .get_by_index(Employee::by_email_key("Sales", &ann.email).unwrap())
            .await,
        staff
            .get_by_index(Employee::by_badge_key(&ann.badge).unwrap())
            .await,
    ];
    for (index, found) in ["email", "by_email", "by_badge"].into_iter().zip(lookups) {
        let found = found.unwrap().unwrap();
        assert_eq!(found.etag, stored.etag, "{index}");
        assert_eq!(found.value, ann, "{index}");
    }
    let found = staff
        .get_by_index(Employee::email_key("Sales", &ann.email).unwrap())
        .await
        .unwrap()
        .unwrap();
    let older = Employee {
        age: 50,
        ..found.value
    };
    staff
        .replace(&older, IfMatch::Etag(found.etag))
        .await
        .unwrap();
    check::<Employee>(&fixture.engine, STAFF).await.unwrap();
    fixture.drop_tables().await;
}

tables_tests::typed_matrix!(
    #[tokio::test]
    a_second_entity_with_a_unique_value_fails_and_writes_nothing,
    #[tokio::test(flavor = "multi_thread", worker_threads = 4)]
    sixteen_writers_claiming_one_value_one_wins,
    #[tokio::test]
    a_claim_left_by_a_crash_is_released_by_reconcile,
    #[tokio::test]
    a_committed_claim_stays_its_owners_when_its_intent_is_lost,
    #[tokio::test]
    writes_never_touch_another_entitys_copy,
    #[tokio::test]
    writes_through_a_projection_or_an_older_version_are_refused,
    #[tokio::test]
    a_lost_answer_is_settled_by_the_commit_marker,
    #[tokio::test]
    a_request_lost_in_doubt_is_fenced_and_reported_as_not_applied,
    #[tokio::test]
    a_late_copy_of_a_committed_transaction_cannot_undo_a_later_write,
    #[tokio::test]
    a_fenced_claiming_write_delivered_late_never_applies,
    #[tokio::test]
    without_a_marker_a_doubtful_write_is_reported_not_repeated,
    #[tokio::test]
    delete_if_exists_keeps_the_doubt,
    #[tokio::test]
    attempts_and_client_request_ids,
    #[tokio::test]
    reconcile_per_partition_and_its_report,
    #[tokio::test]
    get_by_index_returns_the_entitys_own_version,
);
