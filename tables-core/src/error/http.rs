//! [`ErrorKind::suggested_http_status`]: what a web service built on the SDK answers
//! its own callers for each kind of error.

use super::ErrorKind;

impl ErrorKind {
    /// The HTTP status a service built on the SDK would answer *its own* callers
    /// with, when an SDK call fails with this kind: `404` for an entity that isn't
    /// there, `409` for a value or key already taken, `412` for a stale ETag, `400`
    /// for input the caller sent that the service's rules refuse (a key with `/`, a
    /// filter, a page token of another query), `413` for a request too large, `503`
    /// for throttling, `504` for a timeout, `502` when the storage endpoint failed or
    /// could not be reached, and `500` for what is the service's own fault (a
    /// missing table, its credentials, a row it can't read).
    ///
    /// Not the Table service's own answer (that is [`ErrorKind::service_default`]):
    /// a missing table is `404` from Azure but a deployment problem, `500`, for the
    /// caller of an application.
    ///
    /// ```
    /// use tables_core::ErrorKind;
    ///
    /// assert_eq!(ErrorKind::EntityNotFound.suggested_http_status(), 404);
    /// assert_eq!(ErrorKind::UniqueViolation.suggested_http_status(), 409);
    /// assert_eq!(ErrorKind::PreconditionFailed.suggested_http_status(), 412);
    /// assert_eq!(ErrorKind::TableNotFound.suggested_http_status(), 500);
    /// ```
    pub fn suggested_http_status(self) -> u16 {
        match self {
            ErrorKind::EntityNotFound | ErrorKind::BlobNotFound => 404,
            ErrorKind::EntityAlreadyExists
            | ErrorKind::UniqueViolation
            | ErrorKind::BlobAlreadyExists
            | ErrorKind::ContainerAlreadyExists
            | ErrorKind::TableAlreadyExists => 409,
            ErrorKind::PreconditionFailed => 412,
            ErrorKind::InvalidKey
            | ErrorKind::InvalidProperty
            | ErrorKind::PropertyValueTooLarge
            | ErrorKind::TooManyProperties
            | ErrorKind::EntityTooLarge
            | ErrorKind::InvalidValue
            | ErrorKind::InvalidFilter
            | ErrorKind::InvalidQuery
            | ErrorKind::InvalidContinuationToken
            | ErrorKind::InvalidBatch
            | ErrorKind::InvalidInput
            | ErrorKind::InvalidBlobName => 400,
            ErrorKind::RequestTooLarge => 413,
            ErrorKind::Throttled | ErrorKind::TableBeingDeleted => 503,
            ErrorKind::Timeout => 504,
            ErrorKind::Transport | ErrorKind::Server => 502,
            ErrorKind::Unsupported => 501,
            ErrorKind::TableNotFound
            | ErrorKind::ContainerNotFound
            | ErrorKind::InvalidTableName
            | ErrorKind::Auth
            | ErrorKind::Decode
            | ErrorKind::Encryption => 500,
        }
    }
}
