//! Assertions shared by the scenarios. A failed check panics with what was expected.

use std::collections::BTreeMap;
use std::fmt::Debug;

use tables_core::{DateTime, DynamicEntity, Error, ErrorKind, Result, Value};

/// Asserts that `result` failed with `kind` and returns the error for further checks.
///
/// # Panics
///
/// If `result` is `Ok` or fails with another kind; the message names `what`.
#[track_caller]
pub fn expect_kind<T: Debug>(result: Result<T>, kind: ErrorKind, what: &str) -> Error {
    match result {
        Ok(value) => panic!("{what}: expected error {kind:?}, got Ok({value:?})"),
        Err(err) => {
            assert_eq!(
                err.kind(),
                kind,
                "{what}: expected error kind {kind:?}, got {err:?}"
            );
            err
        }
    }
}

/// Asserts that `result` failed with `kind`, the service code `code` and, in a
/// batch, the operation index `index`.
///
/// # Panics
///
/// If any of the three differs.
#[track_caller]
pub fn expect_batch_error<T: Debug>(
    result: Result<T>,
    kind: ErrorKind,
    code: Option<&str>,
    index: usize,
    what: &str,
) -> Error {
    let err = expect_kind(result, kind, what);
    if let Some(code) = code {
        assert_eq!(
            err.service_code(),
            Some(code),
            "{what}: expected service code {code}, got {err:?}"
        );
    }
    assert_eq!(
        err.batch_index(),
        Some(index),
        "{what}: expected the error at batch index {index}, got {err:?}"
    );
    err
}

/// Asserts the HTTP status and service code the service answers with for `err`.
///
/// # Panics
///
/// If either differs.
#[track_caller]
pub fn expect_service(err: &Error, status: u16, code: &str, what: &str) {
    assert_eq!(
        err.status(),
        Some(status),
        "{what}: expected status {status}, got {err:?}"
    );
    assert_eq!(
        err.service_code(),
        Some(code),
        "{what}: expected service code {code}, got {err:?}"
    );
}

/// The user properties of an entity, by name (order-insensitive comparison).
pub fn props(entity: &DynamicEntity) -> BTreeMap<String, Value> {
    entity
        .properties()
        .map(|(n, v)| (n.to_owned(), v.clone()))
        .collect()
}

/// The user properties an entity is expected to have.
pub fn props_of<const N: usize>(pairs: [(&str, Value); N]) -> BTreeMap<String, Value> {
    pairs.into_iter().map(|(n, v)| (n.to_owned(), v)).collect()
}

/// `Value::String`.
pub fn s(text: &str) -> Value {
    Value::String(text.to_owned())
}

/// A DateTime from ticks (100 ns since 0001-01-01).
///
/// # Panics
///
/// If `ticks` is outside the service's range (a bug in the scenario).
pub fn dt(ticks: i64) -> DateTime {
    DateTime::from_ticks(ticks).expect("scenario uses a DateTime inside the service's range")
}

/// Ticks of 2024-01-01T00:00:00Z.
pub const TICKS_2024: i64 = 638_396_640_000_000_000;

/// Asserts that an entity read back carries a Timestamp and an ETag.
///
/// # Panics
///
/// If either is missing.
#[track_caller]
pub fn expect_system_properties(entity: &DynamicEntity, what: &str) {
    assert!(
        entity.timestamp.is_some(),
        "{what}: expected a Timestamp on {entity:?}"
    );
    assert!(
        entity.etag.is_some(),
        "{what}: expected an ETag on {entity:?}"
    );
}
