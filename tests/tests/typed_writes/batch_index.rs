//! Which typed errors carry a batch index: a transaction's item errors do (even a
//! one-item transaction sent as a plain write); a single write's never do, though
//! it goes out as a transaction with its index rows.

use tables_client::{ErrorKind, IfMatch, Result};
use tables_tests::typed::{create_tables, employee, Backend, Department, Employee, STAFF};

use crate::stale;

/// A single typed write goes out with its index rows as a transaction, but the
/// caller made no batch: its errors name no batch index. A transaction's item
/// errors always do, even for a one-item transaction of a type without indexes
/// (sent as a plain write).
pub(crate) async fn only_batch_errors_name_a_batch_index(backend: Backend) -> Result<()> {
    let service = backend.service();
    create_tables(&service).await?;
    let staff = service.table::<Employee>(STAFF);
    let ann = employee("Sales", 1, 0);
    staff.insert(&ann).await?;
    let single = |err: tables_client::Error, what: &str| {
        assert_eq!(err.batch_index(), None, "{what}: {err:?}");
        assert!(
            !err.to_string().contains("batch operation"),
            "{what}: {err}"
        );
        err.kind()
    };
    assert_eq!(
        single(staff.insert(&ann).await.unwrap_err(), "insert"),
        ErrorKind::EntityAlreadyExists
    );
    assert_eq!(
        single(staff.replace(&ann, stale()).await.unwrap_err(), "replace"),
        ErrorKind::PreconditionFailed
    );
    assert_eq!(
        single(
            staff
                .replace(&employee("Sales", 9, 0), IfMatch::Any)
                .await
                .unwrap_err(),
            "replace of an absent entity"
        ),
        ErrorKind::EntityNotFound
    );
    assert_eq!(
        single(
            staff
                .delete(Employee::key("Sales", 9)?, stale())
                .await
                .unwrap_err(),
            "delete of an absent entity"
        ),
        ErrorKind::EntityNotFound
    );
    service.create_table("Departments").await?;
    let departments = service.table::<Department>("Departments");
    let sales = Department {
        name: "Sales".into(),
        employee_count: 1,
    };
    departments.insert(&sales).await?;
    assert_eq!(
        single(
            departments.insert(&sales).await.unwrap_err(),
            "plain insert"
        ),
        ErrorKind::EntityAlreadyExists
    );
    // A one-item transaction is a batch.
    for tx in [
        service.transaction("Departments", "Sales").insert(&sales),
        service.transaction(STAFF, "Sales").insert(&ann),
    ] {
        let err = tx.submit().await.unwrap_err();
        assert_eq!(err.kind(), ErrorKind::EntityAlreadyExists);
        assert_eq!(err.batch_index(), Some(0), "{err:?}");
    }
    Ok(())
}
