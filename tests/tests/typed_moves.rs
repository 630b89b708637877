//! `Table::move_to` and `Table::move_to_table` on every engine of the typed matrix:
//! an entity whose key fields change keeps every property and its index rows follow;
//! a `unique_index` value passes from the old row to the new without a moment where
//! it is free; and the entity is never lost or doubled.
//!
//! - within a partition (one transaction), across partitions and to another table;
//! - refusals before anything is written (same key, a key the type doesn't write,
//!   nothing there, a stale version, the new key taken, a unique value another
//!   entity holds), each leaving the old row as it was and writable;
//! - a crash matrix, for an entity with every kind of index and one with none:
//!   every engine call of a move across partitions fails in turn,
//!   five ways (refused, answer lost, request in doubt, the process dying before or
//!   right after it); right after, the entity is at one key at least and a typed
//!   write of a half-moved row is refused; after `reconcile()` it is at exactly one,
//!   the one the move's answer named (or either, when the answer said it may have
//!   applied), with exact index rows and no mark or move left;
//! - concurrent moves of the same entities to two different keys and writers
//!   updating them: each entity ends at exactly one key, with every update a writer
//!   was told succeeded.

#![allow(clippy::unwrap_used)] // tests

use std::sync::Arc;
use std::time::Duration;

use tables_client::mem::Fault;
use tables_client::model::{MOVED_FROM_PROPERTY, MOVING_TO_PROPERTY};
use tables_client::{
    ClientOptions, Engine, EntityKey, ErrorKind, IfMatch, Key, Result, Row, TableServiceClient,
};
use tables_tests::read::all_rows;
use tables_tests::typed::{
    check, create_tables, employee, intents, Backend, Department, Employee, Fixture, BY_EMAIL,
    STAFF,
};

const ARCHIVE: &str = "StaffArchive";

fn key(department: &str, id: u32) -> EntityKey {
    Employee::key(department, id).unwrap().into_entity_key()
}

/// A client over the fixture's engine whose `reconcile()` undoes an unfinished move
/// at once (its mover is known to be gone) and removes tombstones.
fn reconciler(fixture: &Fixture) -> TableServiceClient {
    let engine: Arc<dyn Engine> = Arc::new(fixture.engine.clone());
    TableServiceClient::with_options(
        engine,
        ClientOptions::default().with_intent_retention(Duration::ZERO),
    )
}

/// Employees Sales 1 and 2, Ops 3.
async fn setup(service: &TableServiceClient) -> Result<()> {
    create_tables(service).await?;
    let staff = service.table::<Employee>(STAFF);
    for (department, id) in [("Sales", 1), ("Sales", 2), ("Ops", 3)] {
        staff.insert(&employee(department, id, 0)).await?;
    }
    Ok(())
}

/// `value` as stored at another key.
fn rekeyed(mut value: Employee, department: &str, id: u32) -> Employee {
    value.department = department.into();
    value.employee_id = id;
    value
}

/// Where the employee `value` (at `old` or `new`, by its non-key fields) is: the
/// keys of `STAFF` holding it.
async fn places(engine: &dyn Engine, value: &Employee, keys: [&EntityKey; 2]) -> Vec<EntityKey> {
    let mut found = Vec::new();
    for key in keys {
        if let Some(row) = engine.get_entity(STAFF, key, None).await.unwrap() {
            let mut row = row;
            row.remove(MOVING_TO_PROPERTY);
            row.remove(MOVED_FROM_PROPERTY);
            let stored = Employee::from_entity(row).unwrap();
            assert_eq!(
                rekeyed(stored, &value.department, value.employee_id),
                *value,
                "the row at {key} is not the entity moved"
            );
            found.push(key.clone());
        }
    }
    found
}

async fn moves_within_a_partition(backend: Backend) {
    let fixture = backend.fresh();
    let (engine, service) = (&fixture.engine, &fixture.service);
    setup(service).await.unwrap();
    let staff = service.table::<Employee>(STAFF);
    let read = staff.get(Employee::key("Sales", 1).unwrap()).await.unwrap();
    let read = read.unwrap();
    let moved = staff
        .move_to(
            Employee::key("Sales", 1).unwrap(),
            Employee::key("Sales", 9).unwrap(),
            IfMatch::Etag(read.etag.clone()),
        )
        .await
        .unwrap();
    assert_eq!(moved.value, rekeyed(employee("Sales", 1, 0), "Sales", 9));
    assert_ne!(moved.etag, read.etag);
    assert!(staff
        .get(Employee::key("Sales", 1).unwrap())
        .await
        .unwrap()
        .is_none());
    // Its unique values went with it (the same-partition `email` copy, the
    // other-partition `by_badge` copy and the other-table `by_email` copy).
    let badge = staff
        .get_by_index(Employee::by_badge_key("b1v0").unwrap())
        .await
        .unwrap()
        .unwrap();
    assert_eq!(badge.value.employee_id, 9);
    // Nothing of the move is left: one transaction, no move row.
    let primaries = check::<Employee>(engine, STAFF).await.unwrap();
    assert_eq!(primaries.len(), 3);
    assert!(all_rows(engine, STAFF)
        .await
        .unwrap()
        .iter()
        .all(|r| !r.row_key.starts_with("$move")));
    // The moved version is the one to write next.
    let mut next = moved.value.clone();
    next.age = 77;
    staff
        .replace(&next, IfMatch::Etag(moved.etag))
        .await
        .unwrap();
    fixture.drop_tables().await;
}

async fn moves_across_partitions(backend: Backend) {
    let fixture = backend.fresh();
    let (engine, service) = (&fixture.engine, &fixture.service);
    setup(service).await.unwrap();
    let staff = service.table::<Employee>(STAFF);
    let moved = staff
        .move_to(
            Employee::key("Sales", 1).unwrap(),
            Employee::key("Ops", 1).unwrap(),
            IfMatch::Any,
        )
        .await
        .unwrap();
    let expected = rekeyed(employee("Sales", 1, 0), "Ops", 1);
    assert_eq!(moved.value, expected);
    assert_eq!(
        places(engine, &expected, [&key("Sales", 1), &key("Ops", 1)]).await,
        [key("Ops", 1)]
    );
    // The `by_badge` value passed on; the `by_email` copy (partitioned by
    // department) moved to the new department's partition.
    let by_badge = staff
        .get_by_index(Employee::by_badge_key("b1v0").unwrap())
        .await
        .unwrap()
        .unwrap();
    assert_eq!(by_badge.value, expected);
    let by_email = engine
        .get_entity(
            BY_EMAIL,
            &Employee::by_email_key("Ops", "e1v0@contoso.com")
                .unwrap()
                .into_entity_key(),
            None,
        )
        .await
        .unwrap();
    assert!(by_email.is_some());
    // Finished by the move itself: reconcile finds only its tombstone.
    let report = staff.reconcile().await.unwrap();
    assert_eq!(
        (
            report.moves_found,
            report.moves_finished,
            report.moves_undone
        ),
        (1, 0, 0),
        "{report}"
    );
    assert_eq!(report.tombstones_kept, 1, "{report}");
    check::<Employee>(engine, STAFF).await.unwrap();
    // The moved entity is writable at once; the old key is free.
    let mut next = moved.value.clone();
    next.age = 41;
    staff
        .replace(&next, IfMatch::Etag(moved.etag))
        .await
        .unwrap();
    staff.insert(&employee("Sales", 1, 5)).await.unwrap();
    // The tombstone and its fence go once they are older than the retention period.
    let report = reconciler(&fixture)
        .table::<Employee>(STAFF)
        .reconcile()
        .await
        .unwrap();
    assert_eq!(report.tombstones_removed, 1, "{report}");
    assert!(all_rows(engine, STAFF)
        .await
        .unwrap()
        .iter()
        .all(|r| !r.row_key.starts_with('$')));
    check::<Employee>(engine, STAFF).await.unwrap();
    fixture.drop_tables().await;
}

async fn moves_to_another_table(backend: Backend) {
    let fixture = backend.fresh();
    let (engine, service) = (&fixture.engine, &fixture.service);
    create_tables(service).await.unwrap();
    let staff = service.table::<Employee>(STAFF);
    let archive = service.table::<Employee>(ARCHIVE);
    archive.create_if_not_exists().await.unwrap();
    staff.insert(&employee("Sales", 1, 0)).await.unwrap();
    // Under the same key the two rows would own the same index rows: refused.
    let same_key = staff
        .move_to_table(
            Employee::key("Sales", 1).unwrap(),
            &archive,
            Employee::key("Sales", 1).unwrap(),
            IfMatch::Any,
        )
        .await
        .unwrap_err();
    assert_eq!(same_key.kind(), ErrorKind::InvalidInput, "{same_key}");
    assert!(same_key.message().contains("same key"), "{same_key}");
    let moved = archive_move(&staff, &archive).await;
    assert_eq!(moved.value, rekeyed(employee("Sales", 1, 0), "Archived", 1));
    assert!(staff
        .get(Employee::key("Sales", 1).unwrap())
        .await
        .unwrap()
        .is_none());
    // Every index row is the archive's now (the shared index tables included).
    reconciler(&fixture)
        .table::<Employee>(STAFF)
        .reconcile()
        .await
        .unwrap();
    let archived = check::<Employee>(engine, ARCHIVE).await.unwrap();
    assert_eq!(archived.len(), 1);
    assert!(all_rows(engine, STAFF).await.unwrap().is_empty());
    fixture.drop_tables().await;
}

async fn archive_move(
    staff: &tables_client::Table<Employee>,
    archive: &tables_client::Table<Employee>,
) -> tables_client::Versioned<Employee> {
    staff
        .move_to_table(
            Employee::key("Sales", 1).unwrap(),
            archive,
            Employee::key("Archived", 1).unwrap(),
            IfMatch::Any,
        )
        .await
        .unwrap()
}

/// A refused move wrote nothing: the old row is as it was, unmarked and writable,
/// the new key `empty` still empty, the index rows exact.
async fn assert_untouched(fixture: &Fixture, empty: Option<&EntityKey>) {
    let (engine, service) = (&fixture.engine, &fixture.service);
    let staff = service.table::<Employee>(STAFF);
    let old = staff
        .get(Employee::key("Sales", 1).unwrap())
        .await
        .unwrap()
        .unwrap();
    assert_eq!(old.value, employee("Sales", 1, 0));
    if let Some(to) = empty {
        assert!(engine.get_entity(STAFF, to, None).await.unwrap().is_none());
    }
    reconciler(fixture)
        .table::<Employee>(STAFF)
        .reconcile()
        .await
        .unwrap();
    check::<Employee>(engine, STAFF).await.unwrap();
    staff
        .replace(&employee("Sales", 1, 0), IfMatch::Etag(old.etag))
        .await
        .unwrap();
}

async fn refused_moves_write_nothing(backend: Backend) {
    let fixture = backend.fresh();
    let service = &fixture.service;
    setup(service).await.unwrap();
    let staff = service.table::<Employee>(STAFF);
    let from = || Employee::key("Sales", 1).unwrap();
    let read = staff.get(from()).await.unwrap().unwrap();

    let same = staff
        .move_to(from(), from(), IfMatch::Any)
        .await
        .unwrap_err();
    assert_eq!(same.kind(), ErrorKind::InvalidInput, "{same}");
    assert_untouched(&fixture, None).await;

    // A key the type doesn't write: its fields don't read back as it.
    let garbage = EntityKey::new("Ops", "empid_7");
    let err = staff
        .move_to(from(), Key::from_entity_key(garbage.clone()), IfMatch::Any)
        .await
        .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::InvalidInput, "{err}");
    assert!(err.message().contains("key builder"), "{err}");
    assert_untouched(&fixture, Some(&garbage)).await;

    let err = staff
        .move_to(
            Employee::key("Sales", 8).unwrap(),
            Employee::key("Ops", 8).unwrap(),
            IfMatch::Any,
        )
        .await
        .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::EntityNotFound, "{err}");

    // A version that is no longer the stored one (read, then rewritten).
    let current = staff.get(from()).await.unwrap().unwrap();
    assert_ne!(current.etag, read.etag, "assert_untouched rewrote it");
    for to in [key("Sales", 9), key("Ops", 9)] {
        let err = staff
            .move_to(
                from(),
                Key::from_entity_key(to.clone()),
                IfMatch::Etag(read.etag.clone()),
            )
            .await
            .unwrap_err();
        assert_eq!(err.kind(), ErrorKind::PreconditionFailed, "{to}: {err}");
        assert!(!err.may_have_applied(), "{err}");
        assert_untouched(&fixture, Some(&to)).await;
    }

    // The new key is taken (within the partition and across).
    for (to, kind) in [
        (key("Sales", 2), ErrorKind::EntityAlreadyExists),
        (key("Ops", 3), ErrorKind::EntityAlreadyExists),
    ] {
        let err = staff
            .move_to(from(), Key::from_entity_key(to.clone()), IfMatch::Any)
            .await
            .unwrap_err();
        assert_eq!(err.kind(), kind, "{to}: {err}");
        assert!(!err.may_have_applied(), "{err}");
        assert_untouched(&fixture, None).await;
    }

    // The new key gives it a unique value another entity holds: Ops 4 has the
    // email Sales 1 would have in Ops (by_email is partitioned by department).
    let mut holder = employee("Ops", 4, 7);
    holder.email = "e1v0@contoso.com".into();
    staff.insert(&holder).await.unwrap();
    let err = staff
        .move_to(from(), Employee::key("Ops", 1).unwrap(), IfMatch::Any)
        .await
        .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::UniqueViolation, "{err}");
    assert!(!err.may_have_applied(), "{err}");
    assert_untouched(&fixture, Some(&key("Ops", 1))).await;
    fixture.drop_tables().await;
}

/// One way the call `n` of a move fails.
fn faults(n: u64) -> Vec<(&'static str, Vec<Fault>)> {
    vec![
        ("refused", vec![Fault::fail(ErrorKind::Server).nth(n)]),
        (
            "answer lost",
            vec![Fault::fail_after_applying(ErrorKind::Server).nth(n)],
        ),
        (
            "in doubt",
            vec![Fault::fail_in_doubt(ErrorKind::Timeout).nth(n)],
        ),
        (
            "dies before",
            vec![Fault::fail(ErrorKind::Server).nth(n).times(u64::MAX)],
        ),
        (
            "dies after",
            vec![
                Fault::fail_after_applying(ErrorKind::Server).nth(n),
                Fault::fail(ErrorKind::Server).nth(n + 1).times(u64::MAX),
            ],
        ),
    ]
}

/// A move across partitions of `table` to crash: the entity at `from` (as `old`)
/// becomes the entity at `to` (as `new`); `rewrite` is a later typed write of
/// whichever key ends up holding it.
struct CrashCase<T> {
    table: &'static str,
    seed: fn() -> Vec<T>,
    from: Key<T>,
    to: Key<T>,
    old: T,
    new: T,
    rewrite: fn(&EntityKey) -> T,
}

impl<T: tables_client::Entity + PartialEq + std::fmt::Debug + Send + Sync + 'static> CrashCase<T> {
    async fn setup(&self, service: &TableServiceClient) -> Result<()> {
        let table = service.table::<T>(self.table);
        table.create_if_not_exists().await?;
        for value in (self.seed)() {
            table.insert(&value).await?;
        }
        Ok(())
    }

    async fn perform(&self, service: &TableServiceClient) -> Result<()> {
        service
            .table::<T>(self.table)
            .move_to(self.from.clone(), self.to.clone(), IfMatch::Any)
            .await
            .map(drop)
    }

    /// The keys (old, new) holding the entity, each checked to hold it as it
    /// should be there.
    async fn places(&self, engine: &dyn Engine) -> Vec<EntityKey> {
        let mut found = Vec::new();
        for (key, value) in [(&self.from, &self.old), (&self.to, &self.new)] {
            let key = key.clone().into_entity_key();
            if let Some(mut row) = engine.get_entity(self.table, &key, None).await.unwrap() {
                row.remove(MOVING_TO_PROPERTY);
                row.remove(MOVED_FROM_PROPERTY);
                assert_eq!(T::from_entity(row).unwrap(), *value, "the row at {key}");
                found.push(key);
            }
        }
        found
    }

    async fn crash_at_every_step(&self, backend: &Backend) {
        // A clean run: how many engine calls the move makes.
        let clean = backend.fresh();
        self.setup(&clean.service).await.unwrap();
        let calls = clean.engine.faults().calls();
        self.perform(&clean.service).await.unwrap();
        let steps = clean.engine.faults().calls() - calls;
        assert!(steps >= 4, "a move across partitions makes {steps} calls");
        clean.drop_tables().await;

        let (old, new) = (
            self.from.clone().into_entity_key(),
            self.to.clone().into_entity_key(),
        );
        let (mut failed, mut in_doubt, mut moved_anyway) = (0, 0, 0);
        for n in backend.crash_steps(steps) {
            for (how, armed) in faults(n) {
                let fixture = backend.fresh();
                let (engine, service) = (&fixture.engine, &fixture.service);
                self.setup(service).await.unwrap();
                for fault in armed {
                    engine.faults().inject(fault);
                }
                let outcome = self.perform(service).await;
                engine.faults().clear();
                let case = format!("call {n} of {steps}, {how}");
                // Right after: never lost, whatever stopped where.
                let found = self.places(engine).await;
                assert!(!found.is_empty(), "{case}: the entity is at neither key");
                // A half-moved row is the move's: typed writes that read it first
                // (every write of an indexed type, and update()) are refused.
                if found.len() == 2 {
                    let table = service.table::<T>(self.table);
                    let err = table.update(self.from.clone(), |_| {}).await.unwrap_err();
                    assert_eq!(err.kind(), ErrorKind::PreconditionFailed, "{case}: {err}");
                    if T::HAS_INDEXES {
                        let err = table
                            .replace(&(self.rewrite)(&old), IfMatch::Any)
                            .await
                            .unwrap_err();
                        assert_eq!(err.kind(), ErrorKind::PreconditionFailed, "{case}: {err}");
                    }
                }
                let report = reconciler(&fixture)
                    .table::<T>(self.table)
                    .reconcile()
                    .await
                    .unwrap_or_else(|e| panic!("{case}: reconcile failed: {e:?}"));
                let found = self.places(engine).await;
                match &outcome {
                    Ok(()) => assert_eq!(found, std::slice::from_ref(&new), "{case}: {report}"),
                    Err(err) if err.may_have_applied() => {
                        in_doubt += 1;
                        moved_anyway += usize::from(found == [new.clone()]);
                        assert_eq!(found.len(), 1, "{case}: at {found:?}; {report}");
                    }
                    Err(err) => assert_eq!(
                        found,
                        std::slice::from_ref(&old),
                        "{case}: the move said it wrote nothing ({err}); {report}"
                    ),
                }
                failed += usize::from(outcome.is_err());
                assert_eq!(intents(engine, self.table).await.unwrap(), 0, "{case}");
                check::<T>(engine, self.table)
                    .await
                    .unwrap_or_else(|e| panic!("{case}: {e:?}"));
                // Whichever key holds it, it is writable again.
                service
                    .table::<T>(self.table)
                    .replace(&(self.rewrite)(&found[0]), IfMatch::Any)
                    .await
                    .unwrap_or_else(|e| panic!("{case}: {e}"));
                fixture.drop_tables().await;
            }
        }
        assert!(failed > 0, "no injected fault made the move fail");
        assert!(
            in_doubt > 0 && moved_anyway > 0,
            "no fault left a move in doubt that had committed ({in_doubt} in doubt)"
        );
    }
}

/// An employee (every kind of index) moved from Sales to Ops.
async fn a_move_survives_a_crash_at_every_step(backend: Backend) {
    CrashCase {
        table: STAFF,
        seed: || {
            vec![
                employee("Sales", 1, 0),
                employee("Sales", 2, 0),
                employee("Ops", 3, 0),
            ]
        },
        from: Employee::key("Sales", 1).unwrap(),
        to: Employee::key("Ops", 1).unwrap(),
        old: employee("Sales", 1, 0),
        new: rekeyed(employee("Sales", 1, 0), "Ops", 1),
        rewrite: |at| rekeyed(employee("Sales", 1, 4), &at.partition_key, 1),
    }
    .crash_at_every_step(&backend)
    .await;
}

/// A department (no index: its writes are sent as asked, with no intent to tell
/// whether a lost answer's write committed) renamed.
async fn an_unindexed_move_survives_a_crash_at_every_step(backend: Backend) {
    let department = |name: &str, employee_count| Department {
        name: name.into(),
        employee_count,
    };
    CrashCase {
        table: STAFF,
        seed: || {
            vec![
                Department {
                    name: "Sales".into(),
                    employee_count: 4,
                },
                Department {
                    name: "Ops".into(),
                    employee_count: 2,
                },
            ]
        },
        from: Department::key("Sales").unwrap(),
        to: Department::key("Revenue").unwrap(),
        old: department("Sales", 4),
        new: department("Revenue", 4),
        rewrite: |at| Department {
            name: at.partition_key.clone(),
            employee_count: 9,
        },
    }
    .crash_at_every_step(&backend)
    .await;
}

async fn concurrent_moves_and_writers_lose_nothing(backend: Backend) {
    let fixture = backend.fresh();
    let (engine, service) = (&fixture.engine, &fixture.service);
    create_tables(service).await.unwrap();
    let staff = service.table::<Employee>(STAFF);
    // Two employees, each under sixteen concurrent tasks: eight moves to different
    // departments (one wins) and eight writers counting up its age.
    const DEPARTMENTS: [&str; 8] = [
        "Ops", "Dev", "Legal", "Support", "Finance", "Research", "Admin", "Audit",
    ];
    let ids = 1..=2u32;
    for id in ids.clone() {
        staff.insert(&employee("Sales", id, 0)).await.unwrap();
    }
    let mut movers = Vec::new();
    let mut writers = Vec::new();
    for id in ids.clone() {
        for to in DEPARTMENTS {
            let staff = service.table::<Employee>(STAFF);
            movers.push(tokio::spawn(async move {
                let moved = staff
                    .move_to(
                        Employee::key("Sales", id).unwrap(),
                        Employee::key(to, id).unwrap(),
                        IfMatch::Any,
                    )
                    .await;
                (id, to, moved)
            }));
            let staff = service.table::<Employee>(STAFF);
            writers.push(tokio::spawn(async move {
                let mut counted = 0;
                for _ in 0..3 {
                    match staff
                        .update(Employee::key("Sales", id).unwrap(), |e| e.age += 1)
                        .await
                    {
                        Ok(_) => counted += 1,
                        // The old row of an entity a concurrent move has already
                        // given its unique values to: refused, nothing written, naming
                        // the moved copy as the owner (seen on a loaded Azurite).
                        Err(err)
                            if err.unique_violation().is_some_and(|v| {
                                v.owner().row_key == v.writer().row_key
                                    && v.writer().partition_key == "Sales"
                                    && v.owner().partition_key != "Sales"
                            }) => {}
                        Err(err) => assert!(
                            matches!(
                                err.kind(),
                                ErrorKind::PreconditionFailed | ErrorKind::EntityNotFound
                            ),
                            "{err}"
                        ),
                    }
                    tokio::task::yield_now().await;
                }
                (id, counted)
            }));
        }
    }
    let mut moved_to = std::collections::BTreeMap::new();
    for task in movers {
        let (id, to, moved) = task.await.unwrap();
        match moved {
            Ok(_) => {
                let previous = moved_to.insert(id, to);
                assert!(previous.is_none(), "employee {id} moved twice");
            }
            Err(err) => assert!(
                matches!(
                    err.kind(),
                    ErrorKind::PreconditionFailed | ErrorKind::EntityNotFound
                ),
                "{err}"
            ),
        }
    }
    let mut counted = std::collections::BTreeMap::<u32, i32>::new();
    for task in writers {
        let (id, n) = task.await.unwrap();
        *counted.entry(id).or_default() += n;
    }
    reconciler(&fixture)
        .table::<Employee>(STAFF)
        .reconcile()
        .await
        .unwrap();
    let primaries = check::<Employee>(engine, STAFF).await.unwrap();
    assert_eq!(primaries.len(), 2, "every employee once");
    for id in ids {
        let department = moved_to.get(&id).copied().unwrap_or("Sales");
        let stored = staff
            .get(Employee::key(department, id).unwrap())
            .await
            .unwrap()
            .unwrap_or_else(|| panic!("employee {id} is not in {department}"));
        assert_eq!(
            stored.value.age,
            30 + counted[&id],
            "employee {id}: {} updates said they succeeded",
            counted[&id]
        );
    }
    assert!(!moved_to.is_empty(), "no move succeeded");
    fixture.drop_tables().await;
}

tables_tests::typed_matrix!(
    #[tokio::test]
    moves_within_a_partition,
    #[tokio::test]
    moves_across_partitions,
    #[tokio::test]
    moves_to_another_table,
    #[tokio::test]
    refused_moves_write_nothing,
    #[tokio::test]
    a_move_survives_a_crash_at_every_step,
    #[tokio::test]
    an_unindexed_move_survives_a_crash_at_every_step,
    #[tokio::test(flavor = "multi_thread", worker_threads = 4)]
    concurrent_moves_and_writers_lose_nothing,
);
