//! Who may do what: SharedKey and SharedKeyLite signatures, checked with the code
//! the client signs with (`tables_core::auth`).

use std::time::{Duration, SystemTime};

use tables_core::auth::{canonical_resource, Authorization};

use crate::account::Account;
use crate::reply::Failure;
use crate::request::Request;

/// How far a request's date may be from the server's clock, as Azure allows.
const MAX_CLOCK_SKEW: Duration = Duration::from_secs(15 * 60);

/// What a request proved it may do.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Access {
    /// Signed with an account key: everything in the account.
    Full,
}

/// Checks the request's credentials for `account`.
///
/// # Errors
///
/// `403 AuthenticationFailed` with what was wrong: no credentials, a malformed
/// `Authorization` header, another account's name, a missing or stale date, or a
/// signature made with another key or over another request.
pub(crate) fn authenticate(request: &Request, account: &Account) -> Result<Access, Failure> {
    let Some(header) = request.header("authorization") else {
        return Err(failed(
            "the request has no Authorization header and no shared access signature; \
             sign it with the account key (SharedKey) or add a SAS",
        ));
    };
    let authorization = Authorization::parse(header).ok_or_else(|| {
        failed(
            "the Authorization header is not `SharedKey <account>:<signature>` or \
             `SharedKeyLite <account>:<signature>`",
        )
    })?;
    if authorization.account != account.name() {
        return Err(failed(format!(
            "the Authorization header is signed as account {:?}, but the request addresses \
             account {:?}",
            authorization.account,
            account.name()
        )));
    }
    let date = request
        .header("x-ms-date")
        .or_else(|| request.header("date"))
        .ok_or_else(|| failed("a signed request needs an x-ms-date (or Date) header"))?;
    check_fresh(date)?;
    let comp = request.param("comp");
    let method = request.original_method();
    let content_md5 = request.header("content-md5").unwrap_or("");
    let content_type = request.header("content-type").unwrap_or("");
    let signed_over = |path: &str| {
        let resource = canonical_resource(account.name(), path, comp);
        account.keys().iter().any(|key| {
            authorization.verify(key, method, content_md5, content_type, date, &resource)
        })
    };
    // The path as sent; a client that signed it decoded is accepted too (the
    // decoded form is only worked out when it differs).
    let signed = signed_over(&request.raw_path) || {
        let decoded = percent_encoding::percent_decode_str(&request.raw_path).decode_utf8_lossy();
        decoded != request.raw_path.as_str() && signed_over(&decoded)
    };
    if signed {
        Ok(Access::Full)
    } else {
        Err(failed(format!(
            "the {} signature does not match: check the account key, and that the request \
             is signed over the path as sent ({}), the date header and, for SharedKey, the \
             method, Content-MD5 and Content-Type",
            match authorization.scheme {
                tables_core::auth::SharedKeyScheme::SharedKey => "SharedKey",
                tables_core::auth::SharedKeyScheme::SharedKeyLite => "SharedKeyLite",
            },
            request.raw_path
        )))
    }
}

/// The date is within [`MAX_CLOCK_SKEW`] of now.
fn check_fresh(date: &str) -> Result<(), Failure> {
    let sent = httpdate::parse_http_date(date).map_err(|_| {
        failed(format!(
            "the date {date:?} is not an RFC 1123 date such as `Mon, 01 Jan 2024 00:00:00 GMT`"
        ))
    })?;
    let now = SystemTime::now();
    let skew = now
        .duration_since(sent)
        .or_else(|_| sent.duration_since(now))
        .unwrap_or_default();
    if skew > MAX_CLOCK_SKEW {
        return Err(failed(format!(
            "the request's date {date:?} is {} s from the server's clock; Azure allows 15 \
             minutes: check this machine's clock",
            skew.as_secs()
        )));
    }
    Ok(())
}

fn failed(message: impl Into<String>) -> Failure {
    Failure::new(403, "AuthenticationFailed", message)
}
