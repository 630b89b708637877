//! The one error type of the SDK.
//!
//! [`Error`] is pointer-sized and opaque: match on [`Error::kind`] and read the
//! accessors ([`Error::origin`], [`Error::service_code`], [`Error::status`],
//! [`Error::batch_index`], [`Error::entity_key`], [`Error::table`],
//! [`Error::property`], [`Error::request_id`], [`Error::auth_hint`]). Every engine
//! (the in-memory one and the remote one) reports the same kind, status and service
//! code for the same mistake, so code written against one engine handles the other.
//!
//! [`Error::origin`] tells where an error came from: this process's own checks before
//! anything was sent ([`Origin::Local`]), the service's answer ([`Origin::Service`];
//! the in-memory engine plays the service, so its answers count as the service's),
//! the connection ([`Origin::Transport`]), or what came back and could not be read
//! ([`Origin::Response`]).

use std::fmt;

use crate::entity_key::EntityKey;

pub mod code;

mod http;
mod origin;

pub use origin::{AuthHint, Origin};

/// A specialised `Result` for this crate.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// What went wrong, coarsely enough to branch on.
///
/// Kinds are stable; messages are not. Tests and callers should match on kinds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ErrorKind {
    /// The table does not exist (`404 TableNotFound`, or `404 ResourceNotFound` on delete).
    TableNotFound,
    /// The entity does not exist (`404 ResourceNotFound`).
    EntityNotFound,
    /// A table with that name (compared case-insensitively) exists (`409 TableAlreadyExists`).
    TableAlreadyExists,
    /// An entity with that PartitionKey and RowKey exists (`409 EntityAlreadyExists`).
    EntityAlreadyExists,
    /// The table is being deleted and its name cannot be used yet (`409 TableBeingDeleted`).
    TableBeingDeleted,
    /// The `If-Match` ETag did not match the stored entity (`412 UpdateConditionNotSatisfied`).
    PreconditionFailed,
    /// A PartitionKey or RowKey breaks the service's rules (characters, length).
    InvalidKey,
    /// A table name breaks the service's rules (`400 OutOfRangeInput` / `InvalidResourceName`).
    InvalidTableName,
    /// A property name is invalid, too long, reserved, or given twice.
    InvalidProperty,
    /// A property value is too large (`400 PropertyValueTooLarge`).
    PropertyValueTooLarge,
    /// More than 252 user properties (`400 TooManyProperties`).
    TooManyProperties,
    /// The entity is larger than 1 MiB (`400 EntityTooLarge`).
    EntityTooLarge,
    /// A value cannot be represented (e.g. a `u64` above `i64::MAX`) or has the wrong type.
    InvalidValue,
    /// A filter expression is malformed or unsupported by the service.
    InvalidFilter,
    /// A query option is out of range (for example `$top` above 1,000, an empty
    /// `$select`).
    InvalidQuery,
    /// A continuation or page token can't be used: it is not a token at all
    /// (truncated, not base64, an unknown version), or it belongs to another query,
    /// table or engine. Whatever is wrong with it, this is the kind; restart from
    /// the first page, or pass a token exactly as a previous page of the same query
    /// returned it.
    InvalidContinuationToken,
    /// A batch breaks the entity-group-transaction rules (count, partition, duplicates).
    InvalidBatch,
    /// The request body is larger than the service accepts (`413 RequestBodyTooLarge`).
    RequestTooLarge,
    /// The service rejected the input for another reason (`400 InvalidInput` and friends).
    InvalidInput,
    /// Authentication or authorisation failed (`403`).
    Auth,
    /// The service asked the client to slow down (`429`, `503 ServerBusy`).
    Throttled,
    /// The operation timed out (client-side, or `500 OperationTimedOut`).
    Timeout,
    /// The connection failed or broke.
    Transport,
    /// The service failed (`500 InternalError` and other 5xx).
    Server,
    /// A response or stored row could not be decoded.
    Decode,
    /// The operation is not supported by this engine or endpoint (`501`, `405`).
    Unsupported,
    /// A unique index already gives the value to another entity: the write would
    /// make two entities share it. Nothing was written. [`Error::unique_violation`]
    /// names the index, the index row and its owner.
    UniqueViolation,
    /// The blob container does not exist (`404 ContainerNotFound`).
    ContainerNotFound,
    /// The blob does not exist (`404 BlobNotFound`).
    BlobNotFound,
    /// A container with that name exists (`409 ContainerAlreadyExists`).
    ContainerAlreadyExists,
    /// A blob with that name exists and the write asked for a new one
    /// (`409 BlobAlreadyExists`).
    BlobAlreadyExists,
    /// A container or blob name breaks the service's naming rules
    /// (`400 InvalidResourceName`); checked before anything is sent.
    InvalidBlobName,
    /// An encrypted property could not be written or read: no key-encryption key is
    /// configured, the key that wrapped it is unknown or wrong, or the ciphertext
    /// was altered or moved to another row, column or table. Never a service answer.
    Encryption,
}

impl ErrorKind {
    /// Whether an operation failing with this kind may succeed if simply tried again.
    pub fn is_transient(self) -> bool {
        matches!(
            self,
            ErrorKind::Throttled | ErrorKind::Timeout | ErrorKind::Transport | ErrorKind::Server
        )
    }

    /// The HTTP status and service error code the Azure Table service answers with for
    /// this kind, where there is one canonical answer.
    ///
    /// The in-memory engine uses this so that its errors carry the service's codes.
    pub fn service_default(self) -> (u16, &'static str) {
        match self {
            ErrorKind::TableNotFound => (404, code::TABLE_NOT_FOUND),
            ErrorKind::EntityNotFound => (404, code::RESOURCE_NOT_FOUND),
            ErrorKind::TableAlreadyExists => (409, code::TABLE_ALREADY_EXISTS),
            ErrorKind::EntityAlreadyExists => (409, code::ENTITY_ALREADY_EXISTS),
            ErrorKind::TableBeingDeleted => (409, code::TABLE_BEING_DELETED),
            ErrorKind::PreconditionFailed => (412, code::UPDATE_CONDITION_NOT_SATISFIED),
            ErrorKind::InvalidKey => (400, code::INVALID_INPUT),
            ErrorKind::InvalidTableName => (400, code::INVALID_RESOURCE_NAME),
            ErrorKind::InvalidProperty => (400, code::PROPERTY_NAME_INVALID),
            ErrorKind::PropertyValueTooLarge => (400, code::PROPERTY_VALUE_TOO_LARGE),
            ErrorKind::TooManyProperties => (400, code::TOO_MANY_PROPERTIES),
            ErrorKind::EntityTooLarge => (400, code::ENTITY_TOO_LARGE),
            ErrorKind::InvalidValue => (400, code::INVALID_VALUE_TYPE),
            ErrorKind::InvalidFilter => (400, code::INVALID_INPUT),
            ErrorKind::InvalidQuery => (400, code::INVALID_QUERY_PARAMETER_VALUE),
            ErrorKind::InvalidContinuationToken => (400, code::INVALID_QUERY_PARAMETER_VALUE),
            ErrorKind::InvalidBatch => (400, code::INVALID_INPUT),
            ErrorKind::RequestTooLarge => (413, code::REQUEST_BODY_TOO_LARGE),
            ErrorKind::InvalidInput => (400, code::INVALID_INPUT),
            ErrorKind::Auth => (403, code::AUTHORIZATION_FAILURE),
            ErrorKind::Throttled => (503, code::SERVER_BUSY),
            ErrorKind::Timeout => (500, code::OPERATION_TIMED_OUT),
            ErrorKind::Transport => (0, ""),
            ErrorKind::Server => (500, code::INTERNAL_ERROR),
            ErrorKind::Decode => (0, ""),
            ErrorKind::Unsupported => (501, code::NOT_IMPLEMENTED),
            // The client's own rule: a conflict, but no code the service sends.
            ErrorKind::UniqueViolation => (409, ""),
            ErrorKind::ContainerNotFound => (404, code::CONTAINER_NOT_FOUND),
            ErrorKind::BlobNotFound => (404, code::BLOB_NOT_FOUND),
            ErrorKind::ContainerAlreadyExists => (409, code::CONTAINER_ALREADY_EXISTS),
            ErrorKind::BlobAlreadyExists => (409, code::BLOB_ALREADY_EXISTS),
            ErrorKind::InvalidBlobName => (400, code::INVALID_RESOURCE_NAME),
            ErrorKind::Encryption => (0, ""),
        }
    }

    /// Classifies a service answer (HTTP status plus `x-ms-error-code`) into a kind.
    ///
    /// Every error code of the service's error-code lists (docs/protocol.md §8) that a client can meet maps to
    /// a specific kind; unknown codes fall back on the status class.
    pub fn from_service(status: u16, code: &str) -> ErrorKind {
        match code {
            code::TABLE_NOT_FOUND => ErrorKind::TableNotFound,
            code::CONTAINER_NOT_FOUND => ErrorKind::ContainerNotFound,
            code::BLOB_NOT_FOUND => ErrorKind::BlobNotFound,
            code::CONTAINER_ALREADY_EXISTS => ErrorKind::ContainerAlreadyExists,
            code::BLOB_ALREADY_EXISTS => ErrorKind::BlobAlreadyExists,
            code::RESOURCE_NOT_FOUND | code::ENTITY_NOT_FOUND => ErrorKind::EntityNotFound,
            code::TABLE_ALREADY_EXISTS => ErrorKind::TableAlreadyExists,
            code::ENTITY_ALREADY_EXISTS => ErrorKind::EntityAlreadyExists,
            code::TABLE_BEING_DELETED => ErrorKind::TableBeingDeleted,
            code::UPDATE_CONDITION_NOT_SATISFIED | code::CONDITION_NOT_MET => {
                ErrorKind::PreconditionFailed
            }
            code::KEY_VALUE_TOO_LARGE => ErrorKind::InvalidKey,
            code::OUT_OF_RANGE_INPUT | code::INVALID_RESOURCE_NAME => ErrorKind::InvalidTableName,
            code::PROPERTY_NAME_INVALID
            | code::PROPERTY_NAME_TOO_LONG
            | code::DUPLICATE_PROPERTIES_SPECIFIED
            | code::PROPERTIES_NEED_VALUE => ErrorKind::InvalidProperty,
            code::PROPERTY_VALUE_TOO_LARGE => ErrorKind::PropertyValueTooLarge,
            code::TOO_MANY_PROPERTIES => ErrorKind::TooManyProperties,
            code::ENTITY_TOO_LARGE => ErrorKind::EntityTooLarge,
            code::INVALID_VALUE_TYPE => ErrorKind::InvalidValue,
            code::INVALID_QUERY_PARAMETER_VALUE => ErrorKind::InvalidQuery,
            code::INVALID_DUPLICATE_ROW | code::COMMANDS_IN_BATCH_ACT_ON_DIFFERENT_PARTITIONS => {
                ErrorKind::InvalidBatch
            }
            code::REQUEST_BODY_TOO_LARGE => ErrorKind::RequestTooLarge,
            code::INVALID_INPUT
            | code::INVALID_HEADER_VALUE
            | code::HOST_INFORMATION_NOT_PRESENT
            | code::X_METHOD_INCORRECT_COUNT
            | code::X_METHOD_INCORRECT_VALUE
            | code::X_METHOD_NOT_USING_POST
            | code::JSON_FORMAT_NOT_SUPPORTED
            | code::ATOM_FORMAT_NOT_SUPPORTED
            | code::INVALID_OPERATION => ErrorKind::InvalidInput,
            code::AUTHENTICATION_FAILED
            | code::AUTHORIZATION_FAILURE
            | code::AUTHORIZATION_PERMISSION_MISMATCH => ErrorKind::Auth,
            code::SERVER_BUSY => ErrorKind::Throttled,
            code::OPERATION_TIMED_OUT => ErrorKind::Timeout,
            code::INTERNAL_ERROR => ErrorKind::Server,
            code::NOT_IMPLEMENTED | code::METHOD_NOT_ALLOWED => ErrorKind::Unsupported,
            _ => match status {
                404 => ErrorKind::EntityNotFound,
                409 => ErrorKind::EntityAlreadyExists,
                412 => ErrorKind::PreconditionFailed,
                413 => ErrorKind::RequestTooLarge,
                401 | 403 => ErrorKind::Auth,
                408 => ErrorKind::Timeout,
                429 => ErrorKind::Throttled,
                405 | 501 => ErrorKind::Unsupported,
                400..=499 => ErrorKind::InvalidInput,
                _ => ErrorKind::Server,
            },
        }
    }
}

impl fmt::Display for ErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let text = match self {
            ErrorKind::TableNotFound => "table not found",
            ErrorKind::EntityNotFound => "entity not found",
            ErrorKind::TableAlreadyExists => "table already exists",
            ErrorKind::EntityAlreadyExists => "entity already exists",
            ErrorKind::TableBeingDeleted => "table is being deleted",
            ErrorKind::PreconditionFailed => "precondition failed (ETag mismatch)",
            ErrorKind::InvalidKey => "invalid key",
            ErrorKind::InvalidTableName => "invalid table name",
            ErrorKind::InvalidProperty => "invalid property",
            ErrorKind::PropertyValueTooLarge => "property value too large",
            ErrorKind::TooManyProperties => "too many properties",
            ErrorKind::EntityTooLarge => "entity too large",
            ErrorKind::InvalidValue => "invalid value",
            ErrorKind::InvalidFilter => "invalid filter",
            ErrorKind::InvalidQuery => "invalid query",
            ErrorKind::InvalidContinuationToken => "invalid continuation token",
            ErrorKind::InvalidBatch => "invalid batch",
            ErrorKind::RequestTooLarge => "request too large",
            ErrorKind::InvalidInput => "invalid input",
            ErrorKind::Auth => "authentication or authorization failed",
            ErrorKind::Throttled => "throttled",
            ErrorKind::Timeout => "timed out",
            ErrorKind::Transport => "transport error",
            ErrorKind::Server => "server error",
            ErrorKind::Decode => "decode error",
            ErrorKind::Unsupported => "unsupported",
            ErrorKind::UniqueViolation => "unique index value taken",
            ErrorKind::ContainerNotFound => "container not found",
            ErrorKind::BlobNotFound => "blob not found",
            ErrorKind::ContainerAlreadyExists => "container already exists",
            ErrorKind::BlobAlreadyExists => "blob already exists",
            ErrorKind::InvalidBlobName => "invalid container or blob name",
            ErrorKind::Encryption => "encryption failed",
        };
        f.write_str(text)
    }
}

/// The error of every fallible operation in the SDK.
///
/// ```
/// use tables_core::{Error, ErrorKind};
///
/// let err = Error::new(ErrorKind::EntityNotFound, "no entity (Sales, 223)");
/// assert_eq!(err.kind(), ErrorKind::EntityNotFound);
/// assert_eq!(err.status(), Some(404));
/// assert_eq!(err.service_code(), Some("ResourceNotFound"));
/// ```
pub struct Error {
    inner: Box<Inner>,
}

struct Inner {
    kind: ErrorKind,
    origin: Origin,
    message: String,
    service_code: Option<String>,
    status: Option<u16>,
    batch_index: Option<usize>,
    entity_key: Option<EntityKey>,
    table: Option<String>,
    property: Option<String>,
    request_id: Option<String>,
    auth_hint: Option<AuthHint>,
    client_request_id: Option<String>,
    attempts: u32,
    may_have_applied: bool,
    retry_after: Option<std::time::Duration>,
    unique: Option<Box<UniqueViolation>>,
    source: Option<Box<dyn std::error::Error + Send + Sync + 'static>>,
}

impl Error {
    /// A new error of `kind`. Status and service code default to the service's answer
    /// for that kind ([`ErrorKind::service_default`]).
    ///
    /// The origin follows from the kind: [`Origin::Response`] for
    /// [`ErrorKind::Decode`], [`Origin::Transport`] for [`ErrorKind::Transport`] and
    /// [`ErrorKind::Timeout`], and [`Origin::Local`] (found before anything was sent)
    /// for every other kind. An engine reporting the service's decision marks it
    /// with [`Error::with_origin`].
    pub fn new(kind: ErrorKind, message: impl Into<String>) -> Error {
        let (status, code) = kind.service_default();
        let origin = match kind {
            ErrorKind::Decode => Origin::Response,
            ErrorKind::Transport | ErrorKind::Timeout => Origin::Transport,
            _ => Origin::Local,
        };
        Error {
            inner: Box::new(Inner {
                kind,
                origin,
                message: message.into(),
                service_code: (!code.is_empty()).then(|| code.to_owned()),
                status: (status != 0).then_some(status),
                batch_index: None,
                entity_key: None,
                table: None,
                property: None,
                request_id: None,
                auth_hint: None,
                client_request_id: None,
                attempts: 0,
                retry_after: None,
                may_have_applied: false,
                unique: None,
                source: None,
            }),
        }
    }

    /// An error found by this process before anything was sent, for a mistake the
    /// service has no answer for (a malformed SAS token or connection string): no
    /// status and no service code, origin [`Origin::Local`].
    pub fn local(kind: ErrorKind, message: impl Into<String>) -> Error {
        let mut err = Error::new(kind, message);
        err.inner.status = None;
        err.inner.service_code = None;
        err.inner.origin = Origin::Local;
        err
    }

    /// An exchange that gave no usable answer (a connection that failed, a
    /// client-side timeout, a connection that broke): no status and no service
    /// code, origin [`Origin::Transport`].
    pub fn transport(kind: ErrorKind, message: impl Into<String>) -> Error {
        Error::local(kind, message).with_origin(Origin::Transport)
    }

    /// An answer that came back but cannot be read ([`ErrorKind::Decode`], origin
    /// [`Origin::Response`]): no status and no service code.
    pub fn decode(message: impl Into<String>) -> Error {
        Error::local(ErrorKind::Decode, message).with_origin(Origin::Response)
    }

    /// An error as the service reported it: kind from status and code, origin
    /// [`Origin::Service`].
    pub fn from_service(status: u16, code: &str, message: impl Into<String>) -> Error {
        let mut err = Error::new(ErrorKind::from_service(status, code), message);
        err.inner.status = Some(status);
        err.inner.service_code = (!code.is_empty()).then(|| code.to_owned());
        err.inner.origin = Origin::Service;
        err
    }

    /// Sets where the error came from: an engine playing the service marks its
    /// decisions [`Origin::Service`]; a layer that wraps another error keeps that
    /// error's origin.
    #[must_use]
    pub fn with_origin(mut self, origin: Origin) -> Error {
        self.inner.origin = origin;
        self
    }

    /// Sets the service error code (as in `x-ms-error-code`).
    #[must_use]
    pub fn with_service_code(mut self, code: impl Into<String>) -> Error {
        self.inner.service_code = Some(code.into());
        self
    }

    /// Sets how long the service asked the client to wait before it retries (a
    /// throttling answer's `x-ms-retry-after-ms` or `Retry-After`).
    #[must_use]
    pub fn with_retry_after(mut self, wait: std::time::Duration) -> Error {
        self.inner.retry_after = Some(wait);
        self
    }

    /// How long the service asked the client to wait before it retries, when it
    /// said (a `429` under a request-rate budget).
    pub fn retry_after(&self) -> Option<std::time::Duration> {
        self.inner.retry_after
    }

    /// Sets the HTTP status.
    #[must_use]
    pub fn with_status(mut self, status: u16) -> Error {
        self.inner.status = Some(status);
        self
    }

    /// Sets the index of the failing operation within a batch. Only errors of a
    /// batch (an entity group transaction, a bulk write) carry one.
    #[must_use]
    pub fn with_batch_index(mut self, index: usize) -> Error {
        self.inner.batch_index = Some(index);
        self
    }

    /// Clears the batch index: for a layer that ran a single write through batch
    /// machinery, whose caller never made a batch.
    #[must_use]
    pub fn without_batch_index(mut self) -> Error {
        self.inner.batch_index = None;
        self
    }

    /// Sets the name of the table the error is about.
    #[must_use]
    pub fn with_table(mut self, table: impl Into<String>) -> Error {
        self.inner.table = Some(table.into());
        self
    }

    /// Sets what most likely caused an authentication or authorisation failure.
    #[must_use]
    pub fn with_auth_hint(mut self, hint: AuthHint) -> Error {
        self.inner.auth_hint = Some(hint);
        self
    }

    /// Sets the key of the entity the error is about.
    #[must_use]
    pub fn with_entity_key(mut self, key: EntityKey) -> Error {
        self.inner.entity_key = Some(key);
        self
    }

    /// Sets the name of the property the error is about.
    #[must_use]
    pub fn with_property(mut self, name: impl Into<String>) -> Error {
        self.inner.property = Some(name.into());
        self
    }

    /// Sets the service's request id.
    #[must_use]
    pub fn with_request_id(mut self, id: impl Into<String>) -> Error {
        self.inner.request_id = Some(id.into());
        self
    }

    /// Replaces the message, keeping everything else.
    #[must_use]
    pub fn with_message(mut self, message: impl Into<String>) -> Error {
        self.inner.message = message.into();
        self
    }

    /// Changes the kind, keeping everything else (status, service code, request id).
    ///
    /// For an engine that knows more than the status and code say: the service answers
    /// a delete of a missing table with `404 ResourceNotFound`, which is a
    /// [`ErrorKind::TableNotFound`] there, not an [`ErrorKind::EntityNotFound`].
    #[must_use]
    pub fn with_kind(mut self, kind: ErrorKind) -> Error {
        self.inner.kind = kind;
        self
    }

    /// Marks the error as one whose write may have been applied: an attempt reached
    /// the service and its answer was lost (a timeout, a broken connection, a
    /// `500`/`502`/`504`), or a retry after such an attempt failed. See
    /// [`Error::may_have_applied`].
    #[must_use]
    pub fn with_may_have_applied(mut self) -> Error {
        self.inner.may_have_applied = true;
        self
    }

    /// Clears [`Error::may_have_applied`]: for a layer that learned afterwards that
    /// the write did not apply (the typed client does, through its commit marker).
    #[must_use]
    pub fn settled_not_applied(mut self) -> Error {
        self.inner.may_have_applied = false;
        self
    }

    /// Sets the client request id (`x-ms-client-request-id`) of the call that failed.
    #[must_use]
    pub fn with_client_request_id(mut self, id: impl Into<String>) -> Error {
        self.inner.client_request_id = Some(id.into());
        self
    }

    /// Sets how many times the operation was sent before it failed.
    #[must_use]
    pub fn with_attempts(mut self, attempts: u32) -> Error {
        self.inner.attempts = attempts;
        self
    }

    /// A [`ErrorKind::UniqueViolation`]: the write would give `violation`'s value to a
    /// second entity. The message says which and how to proceed.
    pub fn unique(violation: UniqueViolation) -> Error {
        let message = format!(
            "unique index `{}` of {} already gives the value of row {} (table {}) to entity {}, \
             its owner; the entity {} can't take it too. Nothing was written: give {} another \
             value, or change or delete the owner {} first",
            violation.index,
            violation.kind,
            violation.index_key,
            violation.table,
            violation.owner,
            violation.writer,
            violation.writer,
            violation.owner,
        );
        // Found by reading the index row: the service's answer, not a local check.
        let mut err = Error::new(ErrorKind::UniqueViolation, message)
            .with_origin(Origin::Service)
            .with_entity_key(violation.writer.clone());
        err.inner.unique = Some(Box::new(violation));
        err
    }

    /// Sets the underlying cause.
    #[must_use]
    pub fn with_source(mut self, source: impl std::error::Error + Send + Sync + 'static) -> Error {
        self.inner.source = Some(Box::new(source));
        self
    }

    /// What went wrong.
    pub fn kind(&self) -> ErrorKind {
        self.inner.kind
    }

    /// Where the error came from: this process's checks before anything was sent,
    /// the service's answer, the connection, or an answer that couldn't be read.
    pub fn origin(&self) -> Origin {
        self.inner.origin
    }

    /// The human-readable message (without the kind).
    pub fn message(&self) -> &str {
        &self.inner.message
    }

    /// The service's error code (`x-ms-error-code`), e.g. `"EntityAlreadyExists"`;
    /// for an error found before anything was sent ([`Origin::Local`]), the code the
    /// service would answer with.
    pub fn service_code(&self) -> Option<&str> {
        self.inner.service_code.as_deref()
    }

    /// The HTTP status the service answered with, or, for an error found before
    /// anything was sent ([`Origin::Local`]), the one it would answer with.
    pub fn status(&self) -> Option<u16> {
        self.inner.status
    }

    /// For a failed batch, the 0-based index of the operation that failed.
    pub fn batch_index(&self) -> Option<usize> {
        self.inner.batch_index
    }

    /// The key of the entity the error is about, when known.
    pub fn entity_key(&self) -> Option<&EntityKey> {
        self.inner.entity_key.as_ref()
    }

    /// The table the error is about, when known: every engine names the missing
    /// table of an [`ErrorKind::TableNotFound`].
    pub fn table(&self) -> Option<&str> {
        self.inner.table.as_deref()
    }

    /// For an [`ErrorKind::Auth`] error, what most likely caused it, when the client
    /// can tell (the message says what to check).
    pub fn auth_hint(&self) -> Option<AuthHint> {
        self.inner.auth_hint
    }

    /// The property the error is about, when known.
    pub fn property(&self) -> Option<&str> {
        self.inner.property.as_deref()
    }

    /// The service's request id, when the error came from a remote endpoint.
    pub fn request_id(&self) -> Option<&str> {
        self.inner.request_id.as_deref()
    }

    /// Whether the failed write may nevertheless have been applied.
    ///
    /// `false` means it certainly was not: the service (or engine) refused it, or it
    /// never left this process. `true` means an attempt reached the service and its
    /// answer was lost (a timeout, a broken connection, a `500`/`502`/`504`), so the
    /// write may have happened; a retry of it may then fail with
    /// [`ErrorKind::EntityAlreadyExists`], [`ErrorKind::EntityNotFound`] or
    /// [`ErrorKind::PreconditionFailed`] *because* the first attempt applied. Such
    /// errors say so here (and in their message) instead of pretending the write
    /// never happened: read the entity to learn its state.
    ///
    /// The typed client settles this itself where it can (a write that keeps index
    /// rows in other partitions carries a commit marker that tells exactly), and
    /// returns this mark only when it can't.
    pub fn may_have_applied(&self) -> bool {
        self.inner.may_have_applied
    }

    /// The client request id (`x-ms-client-request-id`) of the call that failed, to
    /// find it in the service's logs; see `tables_client::ClientRequestId`.
    pub fn client_request_id(&self) -> Option<&str> {
        self.inner.client_request_id.as_deref()
    }

    /// How many times the operation was sent before it failed (the remote engine's
    /// retries, the typed client's rounds after lost races); `None` when not counted.
    pub fn attempts(&self) -> Option<u32> {
        (self.inner.attempts > 0).then_some(self.inner.attempts)
    }

    /// For [`ErrorKind::UniqueViolation`]: the index, the row holding the value and
    /// the entity that owns it.
    pub fn unique_violation(&self) -> Option<&UniqueViolation> {
        self.inner.unique.as_deref()
    }

    /// Whether retrying the same operation may succeed.
    pub fn is_transient(&self) -> bool {
        self.inner.kind.is_transient()
    }

    /// Whether this is a "not found" error (table or entity).
    pub fn is_not_found(&self) -> bool {
        matches!(
            self.inner.kind,
            ErrorKind::TableNotFound | ErrorKind::EntityNotFound
        )
    }

    /// Whether this is an "already exists" error (table or entity).
    pub fn is_conflict(&self) -> bool {
        matches!(
            self.inner.kind,
            ErrorKind::TableAlreadyExists | ErrorKind::EntityAlreadyExists
        )
    }
}

impl fmt::Debug for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut d = f.debug_struct("Error");
        d.field("kind", &self.inner.kind);
        d.field("origin", &self.inner.origin);
        d.field("message", &self.inner.message);
        if let Some(code) = &self.inner.service_code {
            d.field("service_code", code);
        }
        if let Some(status) = self.inner.status {
            d.field("status", &status);
        }
        if let Some(index) = self.inner.batch_index {
            d.field("batch_index", &index);
        }
        if let Some(key) = &self.inner.entity_key {
            d.field("entity_key", key);
        }
        if let Some(table) = &self.inner.table {
            d.field("table", table);
        }
        if let Some(property) = &self.inner.property {
            d.field("property", property);
        }
        if let Some(id) = &self.inner.request_id {
            d.field("request_id", id);
        }
        if let Some(id) = &self.inner.client_request_id {
            d.field("client_request_id", id);
        }
        if self.inner.attempts > 0 {
            d.field("attempts", &self.inner.attempts);
        }
        if self.inner.may_have_applied {
            d.field("may_have_applied", &true);
        }
        if let Some(hint) = &self.inner.auth_hint {
            d.field("auth_hint", hint);
        }
        if let Some(unique) = &self.inner.unique {
            d.field("unique_violation", unique);
        }
        if let Some(source) = &self.inner.source {
            d.field("source", source);
        }
        d.finish()
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.inner.kind, self.inner.message)?;
        if let Some(index) = self.inner.batch_index {
            write!(f, " (batch operation {index})")?;
        }
        // Named once: not again when the message names it already.
        if let Some(key) = &self.inner.entity_key {
            let named = key.to_string();
            if !self.inner.message.contains(&named) {
                write!(f, " (entity {named})")?;
            }
        }
        match (self.inner.origin, &self.inner.service_code) {
            // A code the service never sent is not shown as if it had.
            (Origin::Local, Some(code)) => {
                write!(f, " ({}", Origin::Local)?;
                if let Some(status) = self.inner.status {
                    write!(f, "; the service would answer {status} {code}")?;
                }
                f.write_str(")")?;
            }
            (Origin::Local, None) => write!(f, " ({})", Origin::Local)?,
            (_, Some(code)) => write!(f, " [{code}]")?,
            (_, None) => {}
        }
        if self.inner.may_have_applied {
            f.write_str(
                " (the write may have been applied: an attempt reached the service and its answer was lost; read the entity to learn its state)",
            )?;
        }
        Ok(())
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        self.inner
            .source
            .as_deref()
            .map(|s| s as &(dyn std::error::Error + 'static))
    }
}

/// What a unique index refused ([`ErrorKind::UniqueViolation`]): the value's index
/// row is owned by another entity.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UniqueViolation {
    kind: String,
    index: String,
    table: String,
    index_key: EntityKey,
    owner: EntityKey,
    writer: EntityKey,
}

impl UniqueViolation {
    /// `index` of entity kind `kind` keeps the value in row `index_key` of `table`,
    /// owned by the entity at `owner`; the entity at `writer` tried to take it.
    pub fn new(
        kind: impl Into<String>,
        index: impl Into<String>,
        table: impl Into<String>,
        index_key: EntityKey,
        owner: EntityKey,
        writer: EntityKey,
    ) -> UniqueViolation {
        UniqueViolation {
            kind: kind.into(),
            index: index.into(),
            table: table.into(),
            index_key,
            owner,
            writer,
        }
    }

    /// The entity kind declaring the index.
    pub fn kind(&self) -> &str {
        &self.kind
    }

    /// The index name.
    pub fn index(&self) -> &str {
        &self.index
    }

    /// The table of the index row.
    pub fn table(&self) -> &str {
        &self.table
    }

    /// The key of the index row, which spells the value.
    pub fn index_key(&self) -> &EntityKey {
        &self.index_key
    }

    /// The key of the entity that owns the value.
    pub fn owner(&self) -> &EntityKey {
        &self.owner
    }

    /// The key of the entity whose write was refused.
    pub fn writer(&self) -> &EntityKey {
        &self.writer
    }
}

#[cfg(test)]
mod tests;
