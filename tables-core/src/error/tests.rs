//! Unit tests of the error model.

use super::*;

#[test]
fn error_is_pointer_sized() {
    assert_eq!(std::mem::size_of::<Error>(), std::mem::size_of::<usize>());
}

#[test]
fn every_kind_round_trips_through_its_service_code() {
    let kinds = [
        ErrorKind::TableNotFound,
        ErrorKind::EntityNotFound,
        ErrorKind::TableAlreadyExists,
        ErrorKind::EntityAlreadyExists,
        ErrorKind::TableBeingDeleted,
        ErrorKind::PreconditionFailed,
        ErrorKind::InvalidTableName,
        ErrorKind::InvalidProperty,
        ErrorKind::PropertyValueTooLarge,
        ErrorKind::TooManyProperties,
        ErrorKind::EntityTooLarge,
        ErrorKind::InvalidValue,
        ErrorKind::InvalidQuery,
        ErrorKind::RequestTooLarge,
        ErrorKind::InvalidInput,
        ErrorKind::Auth,
        ErrorKind::Throttled,
        ErrorKind::Timeout,
        ErrorKind::Server,
        ErrorKind::Unsupported,
    ];
    for kind in kinds {
        let (status, code) = kind.service_default();
        assert_eq!(ErrorKind::from_service(status, code), kind, "{code}");
    }
}

#[test]
fn batch_codes_and_unknown_codes_classify() {
    assert_eq!(
        ErrorKind::from_service(400, "CommandsInBatchActOnDifferentPartitions"),
        ErrorKind::InvalidBatch
    );
    assert_eq!(
        ErrorKind::from_service(400, "InvalidDuplicateRow"),
        ErrorKind::InvalidBatch
    );
    assert_eq!(ErrorKind::from_service(429, ""), ErrorKind::Throttled);
    assert_eq!(ErrorKind::from_service(502, "Whatever"), ErrorKind::Server);
    assert!(ErrorKind::from_service(503, "ServerBusy").is_transient());
    assert!(!ErrorKind::from_service(409, "EntityAlreadyExists").is_transient());
}

#[test]
fn origin_follows_the_constructor() {
    let local = Error::new(ErrorKind::InvalidKey, "bad key");
    assert_eq!(local.origin(), Origin::Local);
    assert_eq!(
        (local.status(), local.service_code()),
        (Some(400), Some("InvalidInput"))
    );
    assert_eq!(
        Error::new(ErrorKind::Decode, "x").origin(),
        Origin::Response
    );
    assert_eq!(
        Error::new(ErrorKind::Timeout, "x").origin(),
        Origin::Transport
    );
    let sas = Error::local(ErrorKind::InvalidInput, "bad SAS");
    assert_eq!(
        (sas.origin(), sas.status(), sas.service_code()),
        (Origin::Local, None, None)
    );
    let broken = Error::transport(ErrorKind::Transport, "refused");
    assert_eq!(
        (broken.origin(), broken.status()),
        (Origin::Transport, None)
    );
    assert_eq!(Error::decode("x").origin(), Origin::Response);
    assert_eq!(Error::decode("x").kind(), ErrorKind::Decode);
    let answer = Error::from_service(404, "TableNotFound", "gone");
    assert_eq!(answer.origin(), Origin::Service);
    assert_eq!(local.with_origin(Origin::Service).origin(), Origin::Service);
}

#[test]
fn display_tells_local_checks_from_the_services_answers() {
    let local = Error::new(ErrorKind::InvalidKey, "the RowKey holds '/'").to_string();
    assert!(
        local.contains("(checked locally, nothing was sent"),
        "{local}"
    );
    assert!(
        local.contains("the service would answer 400 InvalidInput"),
        "{local}"
    );
    assert!(!local.contains("[InvalidInput]"), "{local}");
    let bare = Error::local(ErrorKind::InvalidInput, "bad SAS").to_string();
    assert!(
        bare.ends_with("(checked locally, nothing was sent)"),
        "{bare}"
    );
    let answer = Error::from_service(400, "InvalidInput", "bad").to_string();
    assert!(answer.contains("[InvalidInput]"), "{answer}");
    assert!(!answer.contains("checked locally"), "{answer}");
    let debug = format!(
        "{:?}",
        Error::from_service(403, "AuthorizationFailure", "no")
            .with_auth_hint(AuthHint::SasExpired)
            .with_table("orders")
    );
    assert!(debug.contains("origin: Service"), "{debug}");
    assert!(
        debug.contains("SasExpired") && debug.contains("orders"),
        "{debug}"
    );
}

#[test]
fn batch_index_can_be_cleared() {
    let err = Error::new(ErrorKind::EntityAlreadyExists, "x").with_batch_index(0);
    assert_eq!(err.without_batch_index().batch_index(), None);
}

#[test]
fn display_names_index_key_and_code() {
    let err = Error::new(ErrorKind::EntityAlreadyExists, "the entity exists")
        .with_batch_index(3)
        .with_entity_key(EntityKey::new("Sales", "223"));
    let text = err.to_string();
    assert!(text.contains("batch operation 3"), "{text}");
    assert!(text.contains("EntityAlreadyExists"), "{text}");
    assert_eq!(err.batch_index(), Some(3));
    assert_eq!(err.entity_key().map(|k| k.row_key.as_str()), Some("223"));
}

#[test]
fn a_unique_violation_names_its_owner_as_the_owner_and_what_was_sent() {
    let owner = EntityKey::new("Sales", "empid_000001");
    let writer = EntityKey::new("Sales", "empid_000002");
    let err = Error::unique(UniqueViolation::new(
        "Employee",
        "email",
        "Employees",
        EntityKey::new("Sales", "email_a@x"),
        owner.clone(),
        writer.clone(),
    ));
    assert_eq!(err.origin(), Origin::Service);
    let text = err.to_string();
    assert!(!text.contains("nothing was sent"), "{text}");
    assert!(
        text.contains(&format!("entity {owner}, its owner")),
        "{text}"
    );
    assert!(
        text.contains(&format!("delete the owner {owner}")),
        "{text}"
    );
    assert!(
        text.contains(&format!("give {writer} another value")),
        "{text}"
    );
}
