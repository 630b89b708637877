//! Typed writes through `Table<T>` and `Transaction`: the six modes with `IfMatch`,
//! point reads, index upkeep (copies and index entities, in the primary's partition
//! and elsewhere through intents), lookups by index, and transaction validation.
//!
//! Each scenario is `async fn(Backend) -> Result<()>` and runs on every engine of
//! the typed matrix ([`tables_tests::typed_matrix!`]: the mem engine with default
//! paging and with one-row pages that end at partition boundaries, and the remote
//! engine on Azurite). They speak only the client and `Engine` APIs (a recording
//! wrapper around whatever engine the client has). After each scenario, the checker
//! proves the index rows equal exactly what the primaries imply.

#![allow(clippy::unwrap_used)] // tests

mod batch_index;

use std::collections::BTreeSet;

use batch_index::only_batch_errors_name_a_batch_index;
use tables_client::model::{primary_from_copy, row_role, RowRole};
use tables_client::{
    DynamicEntity, ETag, Engine, EntityKey, EntityUnion, ErrorKind, IfMatch, Key, OnNone, Result,
    Row, Value, WriteOp,
};
use tables_tests::read::{all_rows, get};
use tables_tests::typed::{
    check, create_tables, employee, intents, Backend, Call, Clerk, Department, Employee, Recorder,
    Tagged, BY_CITY, BY_EMAIL, STAFF,
};

const STALE: &str = "W/\"datetime'2000-01-01T00%3A00%3A00.0000000Z'\"";

fn stale() -> IfMatch {
    IfMatch::Etag(ETag::new(STALE))
}

fn members(row: &DynamicEntity) -> Vec<String> {
    tables_client::model::index_entity_members(row).unwrap()
}

async fn raw(
    engine: &dyn Engine,
    table: &str,
    key: impl AsRef<EntityKey>,
) -> Option<DynamicEntity> {
    let key = key.as_ref();
    get(engine, table, &key.partition_key, &key.row_key)
        .await
        .unwrap()
}

// ---- scenarios ----

async fn insert_and_get_round_trip(backend: Backend) -> Result<()> {
    let service = backend.service();
    create_tables(&service).await?;
    let staff = service.table::<Employee>(STAFF);
    let ann = employee("Sales", 1, 0);
    let outcome = staff.insert(&ann).await?;
    let got = staff.get(Employee::key("Sales", 1)?).await?.unwrap();
    assert_eq!(got.value, ann);
    assert_eq!(Some(got.etag.clone()), outcome.etag);
    assert_eq!(Some(got.timestamp), outcome.timestamp);
    let err = staff.insert(&ann).await.unwrap_err();
    assert_eq!(err.kind(), ErrorKind::EntityAlreadyExists);
    assert!(staff.get(Employee::key("Sales", 2)?).await?.is_none());
    // An index row is not an employee (a key from elsewhere, declared an
    // employee's: an index key itself does not compile here).
    let copy_key =
        Key::<Employee>::from_entity_key(Employee::email_key("Sales", &ann.email)?.into());
    assert_eq!(
        staff.get(copy_key).await.unwrap_err().kind(),
        ErrorKind::Decode
    );
    check::<Employee>(service.engine().as_ref(), STAFF).await?;
    Ok(())
}

async fn replace_and_merge_honour_if_match(backend: Backend) -> Result<()> {
    let service = backend.service();
    create_tables(&service).await?;
    let staff = service.table::<Employee>(STAFF);
    let key = Employee::key("Sales", 1)?;
    let ann = employee("Sales", 1, 0);
    assert!(ann.nickname.is_some());
    staff.insert(&ann).await?;
    let v1 = staff.get(key.clone()).await?.unwrap();

    let mut plain = ann.clone();
    plain.age = 41;
    plain.nickname = None;
    let err = staff.replace(&plain, stale()).await.unwrap_err();
    assert_eq!(err.kind(), ErrorKind::PreconditionFailed);
    staff
        .replace(&plain, IfMatch::Etag(v1.etag.clone()))
        .await?;
    let v2 = staff.get(key.clone()).await?.unwrap();
    assert_eq!(v2.value, plain, "replace drops the nickname");
    assert_ne!(v2.etag, v1.etag);
    let err = staff
        .replace(&plain, IfMatch::Etag(v1.etag.clone()))
        .await
        .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::PreconditionFailed);
    staff.replace(&ann, IfMatch::Any).await?;

    // Merge keeps what the value doesn't write (a `None` nickname).
    let current = staff.get(key.clone()).await?.unwrap();
    let mut patch = plain.clone();
    patch.age = 50;
    patch.email = "moved@contoso.com".into();
    let err = staff
        .merge(&patch, OnNone::KeepStored, stale())
        .await
        .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::PreconditionFailed);
    staff
        .merge(&patch, OnNone::KeepStored, IfMatch::Etag(current.etag))
        .await?;
    let merged = staff.get(key.clone()).await?.unwrap().value;
    assert_eq!(merged.age, 50);
    assert_eq!(merged.nickname, ann.nickname);
    assert_eq!(merged.email, "moved@contoso.com");
    staff
        .merge(&patch, OnNone::KeepStored, IfMatch::Any)
        .await?;

    let ghost = employee("Sales", 9, 0);
    for if_match in [IfMatch::Any, stale()] {
        let err = staff.replace(&ghost, if_match.clone()).await.unwrap_err();
        assert_eq!(err.kind(), ErrorKind::EntityNotFound);
        let err = staff
            .merge(&ghost, OnNone::KeepStored, if_match)
            .await
            .unwrap_err();
        assert_eq!(err.kind(), ErrorKind::EntityNotFound);
    }
    assert!(staff.get(ghost.entity_key()?).await?.is_none());
    check::<Employee>(service.engine().as_ref(), STAFF).await?;
    Ok(())
}

async fn upserts_insert_or_overwrite(backend: Backend) -> Result<()> {
    let service = backend.service();
    create_tables(&service).await?;
    let staff = service.table::<Employee>(STAFF);
    let key = Employee::key("Sales", 1)?;
    let ann = employee("Sales", 1, 0);
    staff.upsert(&ann).await?;
    assert_eq!(staff.get(key.clone()).await?.unwrap().value, ann);
    let mut plain = employee("Sales", 1, 1);
    plain.nickname = None;
    staff.upsert(&plain).await?;
    assert_eq!(staff.get(key.clone()).await?.unwrap().value, plain);
    check::<Employee>(service.engine().as_ref(), STAFF).await?;

    let mut nicknamed = employee("Sales", 1, 2);
    nicknamed.nickname = Some("Annie".into());
    staff.upsert_merge(&nicknamed, OnNone::KeepStored).await?;
    let mut moved = employee("Sales", 1, 3);
    moved.nickname = None;
    staff.upsert_merge(&moved, OnNone::KeepStored).await?;
    let stored = staff.get(key).await?.unwrap().value;
    assert_eq!(
        stored.nickname.as_deref(),
        Some("Annie"),
        "upsert_merge keeps it"
    );
    assert_eq!(stored.email, moved.email);
    let fresh = employee("Sales", 5, 0);
    staff.upsert_merge(&fresh, OnNone::KeepStored).await?;
    assert_eq!(staff.get(fresh.entity_key()?).await?.unwrap().value, fresh);
    check::<Employee>(service.engine().as_ref(), STAFF).await?;
    Ok(())
}

async fn deletes_honour_if_match(backend: Backend) -> Result<()> {
    let service = backend.service();
    create_tables(&service).await?;
    let staff = service.table::<Employee>(STAFF);
    let key = Employee::key("Sales", 1)?;
    staff.insert(&employee("Sales", 1, 0)).await?;
    staff.insert(&employee("Sales", 2, 0)).await?;
    let v = staff.get(key.clone()).await?.unwrap();
    let err = staff.delete(key.clone(), stale()).await.unwrap_err();
    assert_eq!(err.kind(), ErrorKind::PreconditionFailed);
    staff.delete(key.clone(), IfMatch::Etag(v.etag)).await?;
    assert!(staff.get(key.clone()).await?.is_none());
    let err = staff.delete(key.clone(), IfMatch::Any).await.unwrap_err();
    assert_eq!(err.kind(), ErrorKind::EntityNotFound);
    assert!(!staff.delete_if_exists(key.clone()).await?);
    check::<Employee>(service.engine().as_ref(), STAFF).await?;
    staff.insert(&employee("Sales", 1, 4)).await?;
    assert!(staff.delete_if_exists(key).await?);
    assert!(staff.delete_if_exists(Employee::key("Sales", 2)?).await?);
    let left = check::<Employee>(service.engine().as_ref(), STAFF).await?;
    assert!(left.is_empty());
    for table in [STAFF, BY_EMAIL, BY_CITY] {
        let rows = all_rows(service.engine().as_ref(), table).await?;
        assert!(rows.is_empty(), "{table} keeps {rows:?}");
    }
    Ok(())
}

async fn insert_writes_every_index_row(backend: Backend) -> Result<()> {
    let service = backend.service();
    create_tables(&service).await?;
    let engine = service.engine().as_ref();
    let staff = service.table::<Employee>(STAFF);
    let ann = employee("Sales", 1, 0);
    staff.insert(&ann).await?;
    staff.insert(&employee("Sales", 2, 0)).await?;

    let copy = raw(engine, STAFF, &Employee::email_key("Sales", &ann.email)?)
        .await
        .unwrap();
    assert_eq!(
        row_role(&copy),
        RowRole::IndexCopy {
            kind: "Employee",
            index: "email"
        }
    );
    assert_eq!(Employee::from_entity(primary_from_copy(copy)?)?, ann);

    let partial = raw(
        engine,
        BY_EMAIL,
        &Employee::by_email_key("Sales", &ann.email)?,
    )
    .await
    .unwrap();
    let mut names: Vec<_> = partial.properties().map(|(n, _)| n.to_owned()).collect();
    names.sort();
    assert_eq!(
        names,
        [
            "EntityType",
            "EntityVersion",
            "FirstName",
            "LastName",
            "PrimaryPartitionKey",
            "PrimaryRowKey"
        ]
    );
    let badge = raw(engine, STAFF, &Employee::by_badge_key(&ann.badge)?)
        .await
        .unwrap();
    assert_eq!(badge.partition_key, "badges");
    assert_eq!(Employee::from_entity(primary_from_copy(badge)?)?, ann);

    let last_names = raw(engine, STAFF, &Employee::last_name_key("Sales", "Jones")?)
        .await
        .unwrap();
    assert_eq!(
        row_role(&last_names),
        RowRole::IndexEntry {
            kind: "Employee",
            index: "last_name"
        }
    );
    assert_eq!(members(&last_names), ["empid_000001", "empid_000002"]);
    let city = raw(engine, BY_CITY, &Employee::by_city_key("Oslo")?)
        .await
        .unwrap();
    assert_eq!(
        members(&city),
        ["Sales\u{1f}empid_000001", "Sales\u{1f}empid_000002"]
    );
    assert_eq!(intents(engine, STAFF).await?, 0);
    check::<Employee>(engine, STAFF).await?;
    Ok(())
}

async fn replace_moving_indexed_fields_is_one_transaction(backend: Backend) -> Result<()> {
    let service = backend.service();
    const CLERKS: &str = "Clerks";
    service.create_table(CLERKS).await?;
    let (client, recorder) = Recorder::wrap(&service);
    let clerks = client.table::<Clerk>(CLERKS);
    let clerk = |id: u32, email: &str, team: &str| Clerk {
        department: "Sales".into(),
        id,
        email: email.into(),
        desk: format!("d{id}"),
        team: team.into(),
    };
    clerks.insert(&clerk(1, "a1@x.com", "red")).await?;
    clerks.insert(&clerk(2, "b1@x.com", "red")).await?;
    recorder.take();

    clerks
        .replace(&clerk(1, "a2@x.com", "blue"), IfMatch::Any)
        .await?;
    let writes: Vec<Call> = recorder
        .take()
        .into_iter()
        .filter(|c| matches!(c, Call::Write(..) | Call::Batch(..)))
        .collect();
    let [Call::Batch(table, ops)] = writes.as_slice() else {
        panic!("expected one transaction, got {writes:?}");
    };
    assert_eq!(table, CLERKS);
    let has = |mode: &str, row_key: &str| {
        ops.iter()
            .any(|op| format!("{:?}", op.mode()) == mode && op.row_key() == row_key)
    };
    assert!(matches!(
        &ops[0],
        WriteOp::Replace {
            if_match: IfMatch::Etag(_),
            ..
        }
    ));
    // Every copy is written conditionally: an insert where none is stored, else
    // If-Match the version read (so no other entity's copy is ever overwritten).
    assert!(has("Delete", "email_a1@x.com"), "{ops:#?}");
    assert!(has("Insert", "email_a2@x.com"), "{ops:#?}");
    assert!(
        has("Replace", "desk_d1"),
        "the copy follows the new values: {ops:#?}"
    );
    assert!(has("Replace", "team_red"), "clerk 2 stays in red: {ops:#?}");
    assert!(has("Insert", "team_blue"), "{ops:#?}");
    assert_eq!(ops.len(), 6);
    assert!(ops.iter().all(WriteOp::is_replay_safe), "{ops:#?}");
    check::<Clerk>(service.engine().as_ref(), CLERKS).await?;

    clerks.delete(Clerk::key("Sales", 1)?, IfMatch::Any).await?;
    let writes: Vec<Call> = recorder
        .take()
        .into_iter()
        .filter(|c| matches!(c, Call::Write(..) | Call::Batch(..)))
        .collect();
    let [Call::Batch(_, ops)] = writes.as_slice() else {
        panic!("expected one transaction, got {writes:?}");
    };
    assert!(ops.iter().all(|op| matches!(
        op,
        WriteOp::Delete {
            if_match: IfMatch::Etag(_),
            ..
        }
    )));
    let mut deleted: Vec<_> = ops.iter().map(WriteOp::row_key).collect();
    deleted.sort_unstable();
    assert_eq!(
        deleted,
        ["clerk_000001", "desk_d1", "email_a2@x.com", "team_blue"]
    );
    check::<Clerk>(service.engine().as_ref(), CLERKS).await?;
    Ok(())
}

async fn remote_rows_follow_through_intents(backend: Backend) -> Result<()> {
    let service = backend.service();
    create_tables(&service).await?;
    let engine = service.engine().as_ref();
    let (client, recorder) = Recorder::wrap(&service);
    let staff = client.table::<Employee>(STAFF);
    staff.insert(&employee("Sales", 1, 0)).await?;
    check::<Employee>(engine, STAFF).await?;
    recorder.take();

    let moved = employee("Sales", 1, 1);
    staff.replace(&moved, IfMatch::Any).await?;
    let calls = recorder.take();
    let batches: Vec<&Vec<WriteOp>> = calls
        .iter()
        .filter_map(|c| match c {
            Call::Batch(_, ops) => Some(ops),
            _ => None,
        })
        .collect();
    assert_eq!(batches.len(), 1);
    let intent = batches[0]
        .iter()
        .find(|op| op.row_key().starts_with("$intent_"))
        .expect("the transaction stores an intent");
    let entity = intent.entity().unwrap();
    assert_eq!(row_role(entity), RowRole::System("$intent"));
    let doc: serde_json::Value =
        serde_json::from_str(entity.get("Intent").and_then(Value::as_str).unwrap()).unwrap();
    assert_eq!(doc["primaries"][0]["kind"], "Employee");
    assert_eq!(doc["primaries"][0]["rk"], "empid_000001");
    // Old and new rows of by_email, by_badge and by_city.
    assert_eq!(doc["primaries"][0]["rows"].as_array().unwrap().len(), 6);
    let last = calls.iter().rev().find_map(|c| match c {
        Call::Write(table, op) => Some((table.clone(), op.clone())),
        _ => None,
    });
    let (table, op) = last.unwrap();
    assert_eq!(table, STAFF);
    assert!(
        matches!(op, WriteOp::Delete { ref key, .. } if key.row_key.starts_with("$intent_")),
        "the intent is deleted last: {op:?}"
    );
    check::<Employee>(engine, STAFF).await?;

    // A crash right after the commit leaves the intent. The new unique values were
    // claimed before the commit, so the new email already leads to the entity; the
    // old rows stay, and lead nowhere, until reconcile() finishes the intent.
    recorder.fail_writes_after_commit(true);
    let again = employee("Sales", 1, 2);
    let outcome = staff.replace(&again, IfMatch::Any).await?;
    recorder.fail_writes_after_commit(false);
    let pending = outcome
        .pending_upkeep
        .expect("the write says its upkeep is pending");
    assert_eq!(pending.error().kind(), ErrorKind::Transport);
    assert_eq!(intents(engine, STAFF).await?, 1);
    let new_key = Employee::by_email_key("Sales", &again.email)?;
    let old_key = Employee::by_email_key("Sales", &moved.email)?;
    let claim = raw(engine, BY_EMAIL, &new_key).await.expect("claimed");
    assert!(claim.get("PrimaryIntent").is_some(), "{claim:?}");
    assert!(raw(engine, BY_EMAIL, &old_key).await.is_some());
    let found = staff.get_by_index(new_key.clone()).await?;
    assert_eq!(found.map(|v| v.value), Some(again.clone()));
    assert!(
        staff.get_by_index(old_key).await?.is_none(),
        "a stale partial copy finds nothing"
    );
    let report = staff.reconcile().await?;
    assert_eq!(
        (report.intents_found, report.intents_finished),
        (1, 1),
        "{report:?}"
    );
    assert!(report.index_rows_written() > 0 && report.index_rows_removed() > 0);
    check::<Employee>(engine, STAFF).await?;
    let finished = raw(engine, BY_EMAIL, &new_key).await.expect("kept");
    assert!(
        finished.get("PrimaryIntent").is_none(),
        "the claim is final: {finished:?}"
    );
    let found = staff.get_by_index(new_key).await?.unwrap();
    assert_eq!(found.value, again);
    // The finished intent stays as a tombstone for a while; nothing is left to do.
    let report = staff.reconcile().await?;
    assert_eq!(
        (report.intents_found, report.tombstones_kept),
        (1, 1),
        "{report:?}"
    );
    assert_eq!(intents(engine, STAFF).await?, 0);
    Ok(())
}

async fn index_entities_list_their_members(backend: Backend) -> Result<()> {
    let service = backend.service();
    create_tables(&service).await?;
    let engine = service.engine().as_ref();
    let staff = service.table::<Employee>(STAFF);
    for id in 1..=3 {
        staff.insert(&employee("Sales", id, 0)).await?;
    }
    staff.insert(&employee("Ops", 4, 0)).await?;
    let ids = |found: Vec<tables_client::Versioned<Employee>>| -> Vec<u32> {
        found.into_iter().map(|v| v.value.employee_id).collect()
    };
    let jones = Employee::last_name_key("Sales", "Jones")?;
    assert_eq!(ids(staff.get_all_by_index(jones.clone()).await?), [1, 2, 3]);
    let oslo = Employee::by_city_key("Oslo")?;
    assert_eq!(
        ids(staff.get_all_by_index(oslo.clone()).await?),
        [4, 1, 2, 3]
    );

    staff
        .replace(&employee("Sales", 2, 1), IfMatch::Any)
        .await?;
    assert_eq!(ids(staff.get_all_by_index(jones.clone()).await?), [1, 3]);
    let smith = Employee::last_name_key("Sales", "Smith")?;
    assert_eq!(ids(staff.get_all_by_index(smith).await?), [2]);
    assert_eq!(ids(staff.get_all_by_index(oslo).await?), [4, 1, 3]);
    let rome = Employee::by_city_key("Rome")?;
    assert_eq!(ids(staff.get_all_by_index(rome).await?), [2]);

    for id in [1, 3] {
        staff
            .delete(Employee::key("Sales", id)?, IfMatch::Any)
            .await?;
    }
    assert!(raw(engine, STAFF, &jones).await.is_none(), "empty lists go");
    assert!(staff.get_all_by_index(jones).await?.is_empty());
    check::<Employee>(engine, STAFF).await?;
    Ok(())
}

async fn lookups_through_copies(backend: Backend) -> Result<()> {
    let service = backend.service();
    create_tables(&service).await?;
    let staff = service.table::<Employee>(STAFF);
    let ann = employee("Sales", 1, 0);
    staff.insert(&ann).await?;
    let primary = staff.get(ann.entity_key()?).await?.unwrap();

    let full = staff
        .get_by_index(Employee::email_key("Sales", &ann.email)?)
        .await?
        .unwrap();
    assert_eq!(full.value, ann);
    let partial = staff
        .get_by_index(Employee::by_email_key("Sales", &ann.email)?)
        .await?
        .unwrap();
    assert_eq!(partial.value, ann);
    assert_eq!(
        partial.etag, primary.etag,
        "a partial copy reads the primary"
    );
    let badge = staff
        .get_by_index(Employee::by_badge_key(&ann.badge)?)
        .await?
        .unwrap();
    assert_eq!(badge.value, ann);

    let nobody = Employee::email_key("Sales", "nobody@x.com")?;
    assert!(staff.get_by_index(nobody).await?.is_none());
    // A key of an unknown index, or of the wrong kind of index, does not compile
    // (compile-tests/ui/fail/index_key_*.rs).
    let none = Employee::last_name_key("Sales", "Nobody")?;
    assert!(staff.get_all_by_index(none).await?.is_empty());
    Ok(())
}

async fn transactions_mix_types_and_keep_indexes(backend: Backend) -> Result<()> {
    let service = backend.service();
    create_tables(&service).await?;
    let engine = service.engine().as_ref();
    let staff = service.table::<Employee>(STAFF);
    let ann = employee("Sales", 1, 0);
    let bob = employee("Sales", 2, 0);
    let sales = Department {
        name: "Sales".into(),
        employee_count: 2,
    };
    let outcomes = service
        .transaction(STAFF, "Sales")
        .insert(&sales)
        .insert(&ann)
        .insert(&bob)
        .submit()
        .await?;
    assert_eq!(outcomes.len(), 3);
    assert!(outcomes.iter().all(|o| o.etag.is_some()));
    let got = staff.get(ann.entity_key()?).await?.unwrap();
    assert_eq!(outcomes[1].etag.as_ref(), Some(&got.etag));
    let jones = raw(engine, STAFF, &Employee::last_name_key("Sales", "Jones")?)
        .await
        .unwrap();
    assert_eq!(members(&jones), ["empid_000001", "empid_000002"]);

    // Swap the two employees' emails in one transaction: every copy changes hands.
    let mut ann2 = ann.clone();
    let mut bob2 = bob.clone();
    std::mem::swap(&mut ann2.email, &mut bob2.email);
    service
        .transaction(STAFF, "Sales")
        .replace(&ann2, IfMatch::Any)
        .replace(
            &bob2,
            IfMatch::Etag(staff.get(bob.entity_key()?).await?.unwrap().etag),
        )
        .merge(
            &Department {
                employee_count: 3,
                ..sales.clone()
            },
            OnNone::KeepStored,
            IfMatch::Any,
        )
        .submit()
        .await?;
    check::<StaffRow>(engine, STAFF).await?;
    let found = staff
        .get_by_index(Employee::by_email_key("Sales", &ann.email)?)
        .await?
        .unwrap();
    assert_eq!(found.value, bob2);

    service
        .transaction(STAFF, "Sales")
        .delete::<Employee>(ann.entity_key()?, IfMatch::Any)
        .upsert(&Department {
            employee_count: 1,
            ..sales
        })
        .submit()
        .await?;
    check::<StaffRow>(engine, STAFF).await?;
    let jones = raw(engine, STAFF, &Employee::last_name_key("Sales", "Jones")?)
        .await
        .unwrap();
    assert_eq!(members(&jones), ["empid_000002"]);
    Ok(())
}

async fn transaction_errors_name_the_item(backend: Backend) -> Result<()> {
    let service = backend.service();
    create_tables(&service).await?;
    let engine = service.engine().as_ref();
    let staff = service.table::<Employee>(STAFF);
    let tx = || service.transaction(STAFF, "Sales");
    let ann = employee("Sales", 1, 0);
    let expect = |result: Result<Vec<tables_client::WriteOutcome>>, kind, index| {
        let err = result.unwrap_err();
        assert_eq!((err.kind(), err.batch_index()), (kind, index), "{err}");
    };

    expect(tx().submit().await, ErrorKind::InvalidBatch, None);
    let err = service
        .transaction("no", "Sales")
        .insert(&ann)
        .submit()
        .await
        .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::InvalidTableName);
    expect(
        tx().insert(&ann)
            .insert(&employee("Ops", 2, 0))
            .submit()
            .await,
        ErrorKind::InvalidBatch,
        Some(1),
    );
    expect(
        tx().insert(&ann).upsert(&ann).submit().await,
        ErrorKind::InvalidBatch,
        Some(1),
    );
    expect(
        tx().insert(&ann)
            .insert(&employee("Sales", 1_000_000, 0))
            .submit()
            .await,
        ErrorKind::InvalidKey,
        Some(1),
    );

    // 34 clerks with two copies each: 102 operations, refused at the 34th item.
    const CLERKS: &str = "Clerks";
    service.create_table(CLERKS).await?;
    let mut big = service.transaction(CLERKS, "Sales");
    for id in 0..34 {
        big = big.insert(&Clerk {
            department: "Sales".into(),
            id,
            email: format!("c{id}@x.com"),
            desk: format!("d{id}"),
            team: "red".into(),
        });
    }
    assert_eq!(big.len(), 34);
    expect(big.submit().await, ErrorKind::InvalidBatch, Some(33));
    assert!(all_rows(engine, CLERKS).await?.is_empty());

    // Failures found by the service or by reading map to the item too, and nothing
    // of the transaction is written.
    let bob = employee("Sales", 2, 0);
    staff.insert(&bob).await?;
    expect(
        tx().insert(&ann).insert(&bob).submit().await,
        ErrorKind::EntityAlreadyExists,
        Some(1),
    );
    expect(
        tx().insert(&ann).replace(&bob, stale()).submit().await,
        ErrorKind::PreconditionFailed,
        Some(1),
    );
    expect(
        tx().delete::<Employee>(Employee::key("Sales", 77)?, IfMatch::Any)
            .submit()
            .await,
        ErrorKind::EntityNotFound,
        Some(0),
    );
    assert!(staff.get(ann.entity_key()?).await?.is_none());
    check::<Employee>(engine, STAFF).await?;
    Ok(())
}

/// The padding of a long member's name: about 500 characters, or less where the
/// service's RowKeys are shorter (255 bytes on Cosmos DB for Table), and how many
/// members make as long a list as 100 of 500 characters.
fn long_members(service: &tables_client::TableServiceClient) -> (usize, usize) {
    let pad = service
        .engine()
        .capabilities()
        .max_row_key_bytes
        .saturating_sub(16)
        .min(490);
    (pad, 100 * 490 / pad)
}

/// A member list longer than one property holds continues over `Members_1`, ...:
/// every member is listed and found, removals shrink it back, and the rows stay
/// what the primaries imply. (A list over one entity's 1 MiB is refused: a unit
/// test of the row format.)
async fn long_index_entity_lists_continue_over_properties(backend: Backend) -> Result<()> {
    let service = backend.service();
    service.create_table("Tags").await?;
    let tags = service.table::<Tagged>("Tags");
    let (pad, count) = long_members(&service);
    let item = |i: usize| Tagged {
        group: "g".into(),
        name: format!("{i:04}{}", "x".repeat(pad)),
        tag: "hot".into(),
    };
    // 100 members of about 500 characters (or more, shorter ones): about 100 KB of
    // list, two properties.
    for i in 0..count {
        tags.insert(&item(i)).await?;
    }
    let row = raw(
        service.engine().as_ref(),
        "Tags",
        EntityKey::new("g", "tag_hot"),
    )
    .await
    .unwrap();
    assert!(row.get("Members_1").is_some(), "the list continues");
    assert_eq!(members(&row).len(), count);
    let all = tags
        .get_all_by_index(Tagged::by_tag_key("g", "hot")?)
        .await?;
    assert_eq!(all.len(), count);
    check::<Tagged>(service.engine().as_ref(), "Tags").await?;

    let kept = count * 3 / 10;
    for i in 0..count - kept {
        tags.delete(item(i).entity_key()?, IfMatch::Any).await?;
    }
    let row = raw(
        service.engine().as_ref(),
        "Tags",
        EntityKey::new("g", "tag_hot"),
    )
    .await
    .unwrap();
    assert!(
        row.get("Members_1").is_none(),
        "the list shrank back into one property"
    );
    assert_eq!(members(&row).len(), kept);
    check::<Tagged>(service.engine().as_ref(), "Tags").await?;
    Ok(())
}

/// Concurrent writers adding members to one long list (over several properties)
/// lose none: each change is a replace of the whole row under the ETag read. A
/// writer that loses too many races in a row is told so (the insert did not
/// apply); every insert that succeeded is listed, and only those.
async fn concurrent_writers_keep_every_member_of_a_long_list(backend: Backend) -> Result<()> {
    let service = backend.service();
    service.create_table("Tags").await?;
    let tags = service.table::<Tagged>("Tags");
    let (pad, count) = long_members(&service);
    let per_writer = count * 3 / 10;
    let tasks: Vec<_> = (0..4usize)
        .map(|writer| {
            let tags = tags.clone();
            tokio::spawn(async move {
                let mut written = Vec::new();
                for i in 0..per_writer {
                    let item = Tagged {
                        group: "g".into(),
                        name: format!("{writer}{i:03}{}", "y".repeat(pad)),
                        tag: "hot".into(),
                    };
                    match tags.insert(&item).await {
                        Ok(_) => written.push(item.entity_key().unwrap().into_entity_key().row_key),
                        Err(e) => assert!(
                            e.kind() == ErrorKind::PreconditionFailed && !e.may_have_applied(),
                            "a failed insert must say it did not apply: {e}"
                        ),
                    }
                }
                written
            })
        })
        .collect();
    let mut written = BTreeSet::new();
    for task in tasks {
        written.extend(task.await.expect("the writer finished"));
    }
    assert!(
        written.len() > 2 * per_writer,
        "most inserts go through ({} of {})",
        written.len(),
        4 * per_writer
    );
    let row = raw(
        service.engine().as_ref(),
        "Tags",
        EntityKey::new("g", "tag_hot"),
    )
    .await
    .unwrap();
    assert!(row.get("Members_1").is_some(), "the list continues");
    let listed: BTreeSet<String> = members(&row).into_iter().collect();
    assert_eq!(
        listed, written,
        "every written member listed, and only those"
    );
    check::<Tagged>(service.engine().as_ref(), "Tags").await?;
    Ok(())
}

#[derive(EntityUnion, Debug, Clone, PartialEq)]
enum StaffRow {
    Employee(Employee),
    Department(Department),
}

async fn unions_keep_their_variants_indexes(backend: Backend) -> Result<()> {
    let service = backend.service();
    create_tables(&service).await?;
    let rows = service.table::<StaffRow>(STAFF);
    let ann = employee("Sales", 1, 0);
    rows.insert(&StaffRow::Employee(ann.clone())).await?;
    rows.insert(&StaffRow::Department(Department {
        name: "Sales".into(),
        employee_count: 1,
    }))
    .await?;
    rows.replace(&StaffRow::Employee(employee("Sales", 1, 1)), IfMatch::Any)
        .await?;
    check::<StaffRow>(service.engine().as_ref(), STAFF).await?;
    let found = rows
        .get_by_index(Employee::by_badge_key("b1v1")?)
        .await?
        .unwrap();
    assert_eq!(found.value, StaffRow::Employee(employee("Sales", 1, 1)));
    assert_eq!(rows.reconcile().await?.intents_found, 0);
    Ok(())
}

/// Keys know their type and their index: a union's table takes its variants'
/// keys (reads, deletes, index lookups), and dynamic code gets plain `EntityKey`s
/// out of them and declares keys from elsewhere with `Key::from_entity_key`. (Keys
/// of another type or index do not compile: compile-tests/ui/fail/key_*.rs.)
async fn typed_keys_reach_their_rows(backend: Backend) -> Result<()> {
    let service = backend.service();
    create_tables(&service).await?;
    let rows = service.table::<StaffRow>(STAFF);
    let ann = employee("Sales", 1, 0);
    let sales = Department {
        name: "Sales".into(),
        employee_count: 1,
    };
    rows.insert(&StaffRow::Employee(ann.clone())).await?;
    rows.insert(&StaffRow::Department(sales.clone())).await?;

    // Variants' keys, by value and by reference, on the union's table.
    let ann_key = Employee::key("Sales", 1)?;
    let got = rows.get(&ann_key).await?.unwrap();
    assert_eq!(got.value, StaffRow::Employee(ann.clone()));
    let got = rows.get(sales.entity_key()?).await?.unwrap();
    assert_eq!(got.value, StaffRow::Department(sales.clone()));
    // The union's own key of a value is the variant's.
    let as_union = StaffRow::Employee(ann.clone()).entity_key()?;
    assert_eq!(as_union, EntityKey::from(ann_key.clone()));

    // An index key names its index: no string, and the lookup follows it.
    let by_email = rows
        .get_by_index(Employee::email_key("Sales", &ann.email)?)
        .await?
        .unwrap();
    assert_eq!(by_email.value, StaffRow::Employee(ann.clone()));
    let key = Employee::by_badge_key(&ann.badge)?;
    assert_eq!(key.index_name(), "by_badge");
    let listed = rows
        .get_all_by_index(Employee::last_name_key("Sales", &ann.last_name)?)
        .await?;
    assert_eq!(listed.len(), 1);

    // Dynamic code: the engine takes the plain key; a key read from a listing
    // reaches the typed API again through `from_entity_key`.
    let plain: EntityKey = ann_key.clone().into();
    assert!(raw(service.engine().as_ref(), STAFF, &plain)
        .await
        .is_some());
    let listed_key = Key::<Employee>::from_entity_key(plain);
    assert!(rows.delete_if_exists(&listed_key).await?);
    assert!(rows.get(&ann_key).await?.is_none());
    assert!(!rows.delete_if_exists(listed_key).await?);
    assert!(rows
        .get_by_index(Employee::email_key("Sales", &ann.email)?)
        .await?
        .is_none());
    check::<StaffRow>(service.engine().as_ref(), STAFF).await?;
    Ok(())
}

fn clerk(department: &str, id: u32) -> Clerk {
    Clerk {
        department: department.into(),
        id,
        email: format!("clerk{id}@contoso.com"),
        desk: format!("d{id}"),
        team: "blue".into(),
    }
}

/// A transaction starts from a value or a key of a type the table holds (no
/// PartitionKey string), takes many items at once, and still refuses items of
/// another partition before anything is sent.
async fn transactions_start_from_a_value_or_key(backend: Backend) -> Result<()> {
    let service = backend.service();
    create_tables(&service).await?;
    let clerks = service.table::<Clerk>(STAFF);
    let hires: Vec<Clerk> = (1..=12).map(|id| clerk("Sales", id)).collect();
    let outcomes = clerks
        .transaction(&hires[0])
        .insert_all(&hires)
        .submit()
        .await?;
    assert_eq!(outcomes.len(), hires.len());
    for hire in &hires {
        assert_eq!(clerks.get(hire.entity_key()?).await?.unwrap().value, *hire);
    }
    let moved: Vec<Clerk> = hires
        .iter()
        .map(|c| Clerk {
            desk: format!("{}-moved", c.desk),
            ..c.clone()
        })
        .collect();
    clerks
        .transaction(Clerk::key("Sales", 1)?)
        .replace_all(&moved[..6])
        .upsert_all(&moved[6..])
        .submit()
        .await?;
    check::<Clerk>(service.engine().as_ref(), STAFF).await?;
    assert_eq!(
        clerks.get(Clerk::key("Sales", 12)?).await?.unwrap().value,
        moved[11]
    );

    // An item of another partition is refused, naming it; nothing is written.
    let err = clerks
        .transaction(&hires[0])
        .insert(&clerk("Sales", 30))
        .insert(&clerk("Marketing", 31))
        .submit()
        .await
        .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::InvalidBatch);
    assert_eq!(err.batch_index(), Some(1));
    assert!(clerks.get(Clerk::key("Sales", 30)?).await?.is_none());

    // A key that can't be encoded fails at submit, before anything is sent.
    let bad = clerk("Sa/les", 40);
    let err = clerks
        .transaction(&bad)
        .insert(&clerk("Sales", 41))
        .submit()
        .await
        .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::InvalidKey);
    assert!(clerks.get(Clerk::key("Sales", 41)?).await?.is_none());

    let keys: Vec<_> = hires.iter().map(Row::entity_key).collect::<Result<_>>()?;
    clerks
        .transaction(&keys[0])
        .delete_all(keys.clone())
        .submit()
        .await?;
    for key in &keys {
        assert!(clerks.get(key).await?.is_none());
    }
    check::<Clerk>(service.engine().as_ref(), STAFF).await?;

    // A union's table starts from any variant's value; items of any type follow.
    let rows = service.table::<StaffRow>(STAFF);
    let sales = Department {
        name: "Sales".into(),
        employee_count: 1,
    };
    let ann = employee("Sales", 1, 0);
    rows.transaction(&sales)
        .insert(&sales)
        .insert(&ann)
        .submit()
        .await?;
    assert!(rows.get(Employee::key("Sales", 1)?).await?.is_some());

    check::<StaffRow>(service.engine().as_ref(), STAFF).await?;
    Ok(())
}

tables_tests::typed_matrix!(
    insert_and_get_round_trip,
    replace_and_merge_honour_if_match,
    upserts_insert_or_overwrite,
    deletes_honour_if_match,
    insert_writes_every_index_row,
    replace_moving_indexed_fields_is_one_transaction,
    remote_rows_follow_through_intents,
    index_entities_list_their_members,
    lookups_through_copies,
    transactions_mix_types_and_keep_indexes,
    transaction_errors_name_the_item,
    only_batch_errors_name_a_batch_index,
    long_index_entity_lists_continue_over_properties,
    #[tokio::test(flavor = "multi_thread", worker_threads = 4)]
    concurrent_writers_keep_every_member_of_a_long_list,
    unions_keep_their_variants_indexes,
    typed_keys_reach_their_rows,
    transactions_start_from_a_value_or_key,
);
