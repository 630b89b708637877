//! The protocol's header names and fixed header values (docs/protocol.md §2), in the
//! case the service documentation writes them. Header names compare
//! case-insensitively; the `$batch` writer sends these spellings, and the remote
//! engine reads and writes the same names.

/// `Accept`.
pub const ACCEPT: &str = "Accept";
/// `Content-Type`.
pub const CONTENT_TYPE: &str = "Content-Type";
/// `Content-ID`: numbers the operations of a `$batch` changeset.
pub const CONTENT_ID: &str = "Content-ID";
/// `DataServiceVersion`.
pub const DATA_SERVICE_VERSION: &str = "DataServiceVersion";
/// `MaxDataServiceVersion`.
pub const MAX_DATA_SERVICE_VERSION: &str = "MaxDataServiceVersion";
/// `Date`.
pub const DATE: &str = "Date";
/// `ETag`.
pub const ETAG: &str = "ETag";
/// `If-Match`.
pub const IF_MATCH: &str = "If-Match";
/// `Prefer`.
pub const PREFER: &str = "Prefer";
/// `Retry-After`: seconds, or an HTTP date.
pub const RETRY_AFTER: &str = "Retry-After";
/// `X-HTTP-Method`: the method a `POST` tunnels.
pub const X_HTTP_METHOD: &str = "X-HTTP-Method";
/// `x-ms-client-request-id`: the caller's id of a request, echoed back.
pub const X_MS_CLIENT_REQUEST_ID: &str = "x-ms-client-request-id";
/// `x-ms-date`: the request's date, signed.
pub const X_MS_DATE: &str = "x-ms-date";
/// `x-ms-error-code`: the service's error code.
pub const X_MS_ERROR_CODE: &str = "x-ms-error-code";
/// `x-ms-request-id`: the service's id of a request.
pub const X_MS_REQUEST_ID: &str = "x-ms-request-id";
/// `x-ms-retry-after-ms`: milliseconds to wait before a retry.
pub const X_MS_RETRY_AFTER_MS: &str = "x-ms-retry-after-ms";
/// `x-ms-version`: the REST API version of a request.
pub const X_MS_VERSION: &str = "x-ms-version";

/// The REST API version every request asks for.
pub const API_VERSION: &str = "2019-02-02";
/// What every request accepts: JSON with the annotations typed decoding needs.
pub const ACCEPT_JSON: &str = super::response::Metadata::Minimal.media_type();
/// The content type of entity and table bodies.
pub const JSON: &str = "application/json";
/// The `Prefer` value that asks an insert for no body back (204).
pub const RETURN_NO_CONTENT: &str = "return-no-content";
