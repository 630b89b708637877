//! Partial and optimistic updates: typed patches (`Table::patch`), the explicit
//! `None` choice of a merge (`OnNone`), and read-modify-write with retries
//! (`Table::update`, `Table::update_or_insert`), on every engine of the typed matrix
//! ([`tables_tests::typed_matrix!`]). Every scenario ends by proving the index rows
//! equal what the primaries imply.

#![allow(clippy::unwrap_used)] // tests

use tables_client::{
    DynamicEntity, ETag, Entity, ErrorKind, IfMatch, OnNone, Patch, Result, TableServiceClient,
    Value, WriteOp,
};
use tables_tests::read::get;
use tables_tests::typed::{
    check, create_tables, employee, Backend, Call, Department, Employee, Recorder, STAFF,
};

/// A counter: the shape of the concurrency scenarios.
#[derive(Entity, Debug, Clone, PartialEq)]
#[entity(kind = "Counter", partition_key = "counters", row_key = "{name}")]
struct Counter {
    name: String,
    count: i64,
}

const COUNTERS: &str = "Counters";

/// A type without indexes: a sets-only patch of it is one Merge.
#[derive(Entity, Debug, Clone, PartialEq)]
#[entity(kind = "Note", partition_key = "notes", row_key = "{id}")]
struct Note {
    id: String,
    text: String,
    label: Option<String>,
}

async fn stored(service: &TableServiceClient, pk: &str, rk: &str) -> Option<DynamicEntity> {
    get(service.engine().as_ref(), STAFF, pk, rk).await.unwrap()
}

/// Adds a column no derived type names, as another program would.
async fn add_foreign_column(service: &TableServiceClient, pk: &str, rk: &str) {
    let column = DynamicEntity::new(pk, rk).with("Foreign", Value::Int64(7));
    service
        .engine()
        .write(
            STAFF,
            &WriteOp::Merge {
                entity: column,
                if_match: IfMatch::Any,
            },
        )
        .await
        .unwrap();
}

fn stale() -> IfMatch {
    IfMatch::Etag(ETag::new(
        "W/\"datetime'2000-01-01T00%3A00%3A00.0000000Z'\"",
    ))
}

// ---- patches ----

/// A patch sets and removes the properties it names and nothing else: a
/// sets-only patch is one Merge, a removal a read and a Replace; columns no type
/// names survive both.
async fn patches_set_and_remove_chosen_properties(backend: Backend) -> Result<()> {
    let service = backend.service();
    create_tables(&service).await?;
    let (client, recorder) = Recorder::wrap(&service);
    let staff = client.table::<Employee>(STAFF);
    let ann = employee("Sales", 1, 0); // nickname Some
    staff.insert(&ann).await?;
    add_foreign_column(&service, "Sales", "empid_000001").await;
    recorder.take();

    let key = Employee::key("Sales", 1)?;
    staff
        .patch(&key, Patch::new().set(Employee::AGE, 99), IfMatch::Any)
        .await?;
    let got = staff.get(&key).await?.unwrap().value;
    assert_eq!(
        got,
        Employee {
            age: 99,
            ..ann.clone()
        }
    );

    // Without indexes, sets are one Merge of just those properties.
    client.create_table_if_not_exists(COUNTERS).await?;
    let notes = client.table::<Note>(COUNTERS);
    let note = Note {
        id: "n1".into(),
        text: "draft".into(),
        label: Some("todo".into()),
    };
    notes.insert(&note).await?;
    recorder.take();
    notes
        .patch(
            Note::key("n1")?,
            Patch::new().set(Note::TEXT, "final"),
            IfMatch::Any,
        )
        .await?;
    let sent: Vec<_> = recorder
        .take()
        .iter()
        .map(|c| match c {
            Call::Write(_, WriteOp::Merge { entity, .. }) => entity.len(),
            other => panic!("a sets-only patch sends one merge, not {other:?}"),
        })
        .collect();
    assert_eq!(sent, [1], "one merge of one property");
    let got = notes.get(Note::key("n1")?).await?.unwrap().value;
    assert_eq!(got.text, "final");
    assert_eq!(got.label, note.label);

    staff
        .patch(
            &key,
            Patch::new()
                .remove(Employee::NICKNAME)
                .set(Employee::FIRST_NAME, "Annabel"),
            IfMatch::Any,
        )
        .await?;
    let got = staff.get(&key).await?.unwrap().value;
    let want = Employee {
        age: 99,
        nickname: None,
        first_name: "Annabel".into(),
        ..ann.clone()
    };
    assert_eq!(got, want);
    let row = stored(&service, "Sales", "empid_000001").await.unwrap();
    assert!(!row.contains("Nickname"));
    assert_eq!(
        row.get("Foreign"),
        Some(&Value::Int64(7)),
        "foreign column kept"
    );

    // The explicit Option form: Some sets, None removes.
    let nick: Option<&str> = Some("A");
    staff
        .patch(
            &key,
            Patch::new().set_or_remove(Employee::NICKNAME, nick),
            IfMatch::Any,
        )
        .await?;
    assert_eq!(
        staff.get(&key).await?.unwrap().value.nickname.as_deref(),
        Some("A")
    );
    staff
        .patch(
            &key,
            Patch::new().set_or_remove(Employee::NICKNAME, None::<&str>),
            IfMatch::Any,
        )
        .await?;
    assert_eq!(staff.get(&key).await?.unwrap().value.nickname, None);
    check::<Employee>(service.engine().as_ref(), STAFF).await?;
    Ok(())
}

/// A patch of indexed fields moves the index rows with the entity, in and out of
/// the partition, whichever path it takes.
async fn patches_keep_index_rows_right(backend: Backend) -> Result<()> {
    let service = backend.service();
    create_tables(&service).await?;
    let staff = service.table::<Employee>(STAFF);
    let ann = employee("Sales", 1, 0);
    staff.insert(&ann).await?;
    let key = Employee::key("Sales", 1)?;
    staff
        .patch(
            &key,
            Patch::new()
                .set(Employee::EMAIL, "new@contoso.com")
                .set(Employee::BADGE, "b-new"),
            IfMatch::Any,
        )
        .await?;
    check::<Employee>(service.engine().as_ref(), STAFF).await?;
    let by_email = staff
        .get_by_index(Employee::by_email_key("Sales", "new@contoso.com")?)
        .await?;
    assert_eq!(by_email.unwrap().value.badge, "b-new");
    assert!(staff
        .get_by_index(Employee::email_key("Sales", &ann.email)?)
        .await?
        .is_none());
    // A removal path (read and replace) that changes an index entity's key.
    staff
        .patch(
            &key,
            Patch::new()
                .set(Employee::LAST_NAME, "Brown")
                .remove(Employee::NICKNAME),
            IfMatch::Any,
        )
        .await?;
    check::<Employee>(service.engine().as_ref(), STAFF).await?;
    let browns = staff
        .get_all_by_index(Employee::last_name_key("Sales", "Brown")?)
        .await?;
    assert_eq!(browns.len(), 1);
    Ok(())
}

/// Under an ETag, a patch applies only to that version, on both paths; a stale
/// one writes nothing.
async fn patches_honour_if_match(backend: Backend) -> Result<()> {
    let service = backend.service();
    create_tables(&service).await?;
    let staff = service.table::<Employee>(STAFF);
    let ann = employee("Sales", 1, 0);
    staff.insert(&ann).await?;
    let key = Employee::key("Sales", 1)?;
    let sets = || Patch::new().set(Employee::AGE, 50);
    let removes = || Patch::new().remove(Employee::NICKNAME);
    for patch in [sets(), removes()] {
        let err = staff.patch(&key, patch, stale()).await.unwrap_err();
        assert_eq!(err.kind(), ErrorKind::PreconditionFailed);
        assert!(!err.may_have_applied());
    }
    assert_eq!(staff.get(&key).await?.unwrap().value, ann);
    let current = staff.get(&key).await?.unwrap().etag;
    let outcome = staff.patch(&key, sets(), IfMatch::Etag(current)).await?;
    let current = outcome.etag.unwrap();
    staff.patch(&key, removes(), IfMatch::Etag(current)).await?;
    let got = staff.get(&key).await?.unwrap().value;
    assert_eq!((got.age, got.nickname), (50, None));
    check::<Employee>(service.engine().as_ref(), STAFF).await?;
    Ok(())
}

/// Mistakes are refused before anything is written: a column of another type, a
/// removal that leaves an unreadable row, an absent entity, a transaction merge
/// asked to remove.
async fn patch_mistakes_write_nothing(backend: Backend) -> Result<()> {
    let service = backend.service();
    create_tables(&service).await?;
    let staff = service.table::<Employee>(STAFF);
    let ann = employee("Sales", 1, 0);
    staff.insert(&ann).await?;
    let key = Employee::key("Sales", 1)?;
    let before = stored(&service, "Sales", "empid_000001").await.unwrap();

    let foreign = Patch::new().set(Department::EMPLOYEE_COUNT, 3);
    let err = staff.patch(&key, foreign, IfMatch::Any).await.unwrap_err();
    assert_eq!(err.kind(), ErrorKind::InvalidInput);
    assert!(err.to_string().contains("EmployeeCount"), "{err}");
    let required = Patch::new().remove(Employee::AGE);
    let err = staff.patch(&key, required, IfMatch::Any).await.unwrap_err();
    assert_eq!(err.kind(), ErrorKind::InvalidInput);
    assert!(err.to_string().contains("can't read"), "{err}");
    assert_eq!(
        stored(&service, "Sales", "empid_000001").await.unwrap(),
        before
    );

    let ghost = Employee::key("Sales", 404)?;
    for patch in [
        Patch::new().set(Employee::AGE, 1),
        Patch::new().remove(Employee::NICKNAME),
    ] {
        let err = staff.patch(&ghost, patch, IfMatch::Any).await.unwrap_err();
        assert_eq!(err.kind(), ErrorKind::EntityNotFound);
    }
    assert!(staff.get(&ghost).await?.is_none());

    let err = service
        .transaction(STAFF, "Sales")
        .merge(&ann, OnNone::Remove, IfMatch::Any)
        .submit()
        .await
        .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::InvalidInput);
    assert!(err.to_string().contains("OnNone::Remove"), "{err}");
    assert_eq!(
        stored(&service, "Sales", "empid_000001").await.unwrap(),
        before
    );
    check::<Employee>(service.engine().as_ref(), STAFF).await?;
    Ok(())
}

/// A merge states what a `None` field does: keep the stored value, or remove it so
/// the row reads back as the value. Columns no type names are kept either way.
async fn merges_say_what_none_does(backend: Backend) -> Result<()> {
    let service = backend.service();
    create_tables(&service).await?;
    let staff = service.table::<Employee>(STAFF);
    let ann = employee("Sales", 1, 0);
    assert!(ann.nickname.is_some());
    staff.insert(&ann).await?;
    add_foreign_column(&service, "Sales", "empid_000001").await;
    let key = Employee::key("Sales", 1)?;
    let unnamed = Employee {
        nickname: None,
        age: 61,
        ..ann.clone()
    };

    staff
        .merge(&unnamed, OnNone::KeepStored, IfMatch::Any)
        .await?;
    let got = staff.get(&key).await?.unwrap().value;
    assert_eq!((got.age, got.nickname.clone()), (61, ann.nickname.clone()));

    staff.merge(&unnamed, OnNone::Remove, IfMatch::Any).await?;
    assert_eq!(staff.get(&key).await?.unwrap().value, unnamed);
    let row = stored(&service, "Sales", "empid_000001").await.unwrap();
    assert_eq!(row.get("Foreign"), Some(&Value::Int64(7)));

    // Under a stale ETag, OnNone::Remove writes nothing.
    let err = staff
        .merge(&ann, OnNone::Remove, stale())
        .await
        .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::PreconditionFailed);
    assert_eq!(staff.get(&key).await?.unwrap().value, unnamed);

    // upsert_merge: inserts when absent, then removes on a later merge.
    let bob = employee("Sales", 2, 0);
    staff.upsert_merge(&bob, OnNone::Remove).await?;
    let bob_key = Employee::key("Sales", 2)?;
    assert_eq!(staff.get(&bob_key).await?.unwrap().value, bob);
    let plain_bob = Employee {
        nickname: None,
        ..bob.clone()
    };
    staff.upsert_merge(&plain_bob, OnNone::KeepStored).await?;
    assert_eq!(staff.get(&bob_key).await?.unwrap().value, bob);
    staff.upsert_merge(&plain_bob, OnNone::Remove).await?;
    assert_eq!(staff.get(&bob_key).await?.unwrap().value, plain_bob);
    check::<Employee>(service.engine().as_ref(), STAFF).await?;
    Ok(())
}

// ---- optimistic updates ----

/// `update` reads, changes and replaces under the ETag read: indexes follow,
/// foreign columns stay, a key change or an absent entity is refused.
async fn updates_change_what_they_read(backend: Backend) -> Result<()> {
    let service = backend.service();
    create_tables(&service).await?;
    let staff = service.table::<Employee>(STAFF);
    let ann = employee("Sales", 1, 0);
    staff.insert(&ann).await?;
    add_foreign_column(&service, "Sales", "empid_000001").await;
    let key = Employee::key("Sales", 1)?;

    let updated = staff
        .update(&key, |e| {
            e.age += 1;
            e.email = "moved@contoso.com".into();
            e.nickname = None;
        })
        .await?;
    assert_eq!(updated.value.age, ann.age + 1);
    assert!(!updated.inserted);
    let got = staff.get(&key).await?.unwrap();
    assert_eq!(got.value, updated.value);
    assert_eq!(Some(got.etag), updated.outcome.etag);
    let row = stored(&service, "Sales", "empid_000001").await.unwrap();
    assert_eq!(row.get("Foreign"), Some(&Value::Int64(7)));
    assert!(
        !row.contains("Nickname"),
        "a None set by the change is removed"
    );
    assert!(staff
        .get_by_index(Employee::email_key("Sales", "moved@contoso.com")?)
        .await?
        .is_some());

    let err = staff.update(&key, |e| e.employee_id = 2).await.unwrap_err();
    assert_eq!(err.kind(), ErrorKind::InvalidInput);
    assert!(staff.get(Employee::key("Sales", 2)?).await?.is_none());
    let err = staff
        .update(Employee::key("Sales", 404)?, |e| e.age = 0)
        .await
        .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::EntityNotFound);
    check::<Employee>(service.engine().as_ref(), STAFF).await?;
    Ok(())
}

/// Concurrent read-modify-writes of one row lose nothing: each increment lands
/// exactly once, lost races are read again and retried.
async fn concurrent_updates_lose_nothing(backend: Backend) -> Result<()> {
    let service = backend.service();
    service.create_table_if_not_exists(COUNTERS).await?;
    let counters = service.table::<Counter>(COUNTERS);
    const WRITERS: i64 = 8;
    const EACH: i64 = 8;
    let tasks: Vec<_> = (0..WRITERS)
        .map(|_| {
            let counters = counters.clone();
            tokio::spawn(async move {
                let mut inserted = 0;
                for _ in 0..EACH {
                    let key = Counter::key("hits").unwrap();
                    let fresh = || Counter {
                        name: "hits".into(),
                        count: 0,
                    };
                    let done = counters
                        .update_or_insert(key, fresh, |c| c.count += 1)
                        .await
                        .unwrap();
                    inserted += i64::from(done.inserted);
                }
                inserted
            })
        })
        .collect();
    let mut inserted = 0;
    for task in tasks {
        inserted += task.await.unwrap();
    }
    assert_eq!(inserted, 1, "exactly one writer inserts");
    let total = counters.get(Counter::key("hits")?).await?.unwrap().value;
    assert_eq!(total.count, WRITERS * EACH);

    let tasks: Vec<_> = (0..WRITERS)
        .map(|_| {
            let counters = counters.clone();
            tokio::spawn(async move {
                for _ in 0..EACH {
                    let key = Counter::key("hits").unwrap();
                    counters.update(key, |c| c.count -= 1).await.unwrap();
                }
            })
        })
        .collect();
    for task in tasks {
        task.await.unwrap();
    }
    let total = counters.get(Counter::key("hits")?).await?.unwrap().value;
    assert_eq!(total.count, 0);
    Ok(())
}

tables_tests::typed_matrix!(
    runtime: #[tokio::test(flavor = "multi_thread", worker_threads = 2)];
    patches_set_and_remove_chosen_properties,
    patches_keep_index_rows_right,
    patches_honour_if_match,
    patch_mistakes_write_nothing,
    merges_say_what_none_does,
    updates_change_what_they_read,
    concurrent_updates_lose_nothing,
);
