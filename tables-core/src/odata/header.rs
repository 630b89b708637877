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
/// The versions of the storage REST API (`x-ms-version`) the service has
/// published, oldest first ("Versioning for the Azure Storage services", Microsoft
/// Learn). Older than 2013-08-15 a table request can't speak JSON.
pub const SERVICE_VERSIONS: &[&str] = &[
    "2009-04-14",
    "2009-07-17",
    "2009-09-19",
    "2011-08-18",
    "2012-02-12",
    "2013-08-15",
    "2014-02-14",
    "2015-02-21",
    "2015-04-05",
    "2015-07-08",
    "2015-12-11",
    "2016-05-31",
    "2017-04-17",
    "2017-07-29",
    "2017-11-09",
    "2018-03-28",
    "2018-11-09",
    "2019-02-02",
    "2019-07-07",
    "2019-10-10",
    "2019-12-12",
    "2020-02-10",
    "2020-04-08",
    "2020-06-12",
    "2020-08-04",
    "2020-10-02",
    "2020-12-06",
    "2021-02-12",
    "2021-04-10",
    "2021-06-08",
    "2021-08-06",
    "2021-10-04",
    "2021-12-02",
    "2022-11-02",
    "2023-01-03",
    "2023-05-03",
    "2023-08-03",
    "2023-11-03",
    "2024-02-04",
    "2024-05-04",
    "2024-08-04",
    "2024-11-04",
    "2025-01-05",
    "2025-05-05",
    "2025-07-05",
    "2025-11-05",
];

/// Whether the service answers a request that names this `x-ms-version`: one of
/// [`SERVICE_VERSIONS`], or a well-formed date after the newest of them (a client
/// newer than this list, which the service knows). Anything else, `"invalid"` or a
/// date between two published versions, the service refuses (`400`).
///
/// ```
/// use tables_core::odata::header::is_service_version;
///
/// assert!(is_service_version("2019-02-02"));
/// assert!(is_service_version("2031-01-01"));
/// assert!(!is_service_version("invalid"));
/// assert!(!is_service_version("2019-02-03"));
/// ```
pub fn is_service_version(value: &str) -> bool {
    if SERVICE_VERSIONS.contains(&value) {
        return true;
    }
    let bytes = value.as_bytes();
    let well_formed = bytes.len() == 10
        && bytes.iter().enumerate().all(|(at, byte)| match at {
            4 | 7 => *byte == b'-',
            _ => byte.is_ascii_digit(),
        });
    let newest = SERVICE_VERSIONS.last().copied().unwrap_or_default();
    // ISO dates of one form order as text.
    well_formed && value > newest
}

/// What every request accepts: JSON with the annotations typed decoding needs.
pub const ACCEPT_JSON: &str = super::response::Metadata::Minimal.media_type();
/// The content type of entity and table bodies.
pub const JSON: &str = "application/json";
/// The `Prefer` value that asks an insert for no body back (204).
pub const RETURN_NO_CONTENT: &str = "return-no-content";
