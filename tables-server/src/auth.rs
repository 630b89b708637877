//! Who may do what: SharedKey and SharedKeyLite signatures, account SAS and table
//! SAS, checked with the code the client signs with (`tables_core::auth`), then
//! each operation checked against what the credential grants.

use std::net::IpAddr;
use std::time::{Duration, SystemTime};

use hyper::header;
use tables_core::auth::{
    parse_sas_time, request_canonical_resource, AccountSasFields, Authorization, SasKeyRange,
    SasToken, TableSasFields, SAS_PARAMETERS,
};
use tables_core::service::acl::SignedIdentifier;
use tables_core::{DateTime, Engine as _};

use crate::access::Access;
use crate::account::Account;
use crate::context::AccountState;
use crate::reply::{names, Failure};
use crate::request::Request;

/// How far a request's date may be from the server's clock, as Azure allows.
const MAX_CLOCK_SKEW: Duration = Duration::from_secs(15 * 60);

/// Checks the request's credentials for the account: an `Authorization` header, or
/// a shared access signature in the query.
///
/// # Errors
///
/// `403 AuthenticationFailed` with what was wrong: no credentials, a malformed
/// `Authorization` header, another account's name, a missing or stale date, a
/// signature made with another key or over another request, a SAS outside its time
/// window or naming a stored policy the table does not hold;
/// `403 AuthorizationSourceIPMismatch` or `AuthorizationProtocolMismatch` for a SAS
/// used from another address or over HTTP when it asks for HTTPS;
/// `403 AuthorizationServiceMismatch` for an account SAS without the table service.
pub(crate) fn authenticate(request: &Request, state: &AccountState) -> Result<Access, Failure> {
    let account: &Account = &state.account;
    let authorization_header = request.header(header::AUTHORIZATION);
    // A shared access signature speaks for the request on its own: a Shared Key
    // header beside it is not consulted (docs/service-behaviour.md, "A SAS beside
    // an Authorization header"). The SAS grants what it grants either way.
    let shared_key_beside_sas =
        authorization_header.is_none_or(|value| value.starts_with("SharedKey"));
    if request.param("sig").is_some() && shared_key_beside_sas {
        return authenticate_sas(request, state, DateTime::now());
    }
    let Some(authorization_header) = authorization_header else {
        return Err(failed(
            "the request has no Authorization header and no shared access signature; \
             sign it with the account key (SharedKey) or add a SAS",
        ));
    };
    if authorization_header.starts_with("Bearer") {
        let Some(oauth) = &state.oauth else {
            return Err(failed(
                "the request carries a bearer token, and this server accepts them only when \
                 started with --oauth (over HTTPS, --cert and --key); sign with the account \
                 key or a SAS, or start it so",
            ));
        };
        return oauth
            .authenticate(
                authorization_header,
                request.scheme == "https",
                account.name(),
                state.engine.capabilities().service,
                SystemTime::now(),
            )
            .map(Access::Bearer);
    }
    let authorization = Authorization::parse(authorization_header).ok_or_else(|| {
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
        .header(names::X_MS_DATE)
        .or_else(|| request.header(header::DATE))
        .ok_or_else(|| failed("a signed request needs an x-ms-date (or Date) header"))?;
    check_fresh(date)?;
    let method = request.original_method();
    let content_md5 = request.header(names::CONTENT_MD5).unwrap_or("");
    let content_type = request.header(header::CONTENT_TYPE).unwrap_or("");
    // Over the path exactly as sent, never a decoded form of it: the router decodes
    // this same string once, so the resource reached is the one that was signed
    // (docs/protocol.md §3.1).
    let resource = request_canonical_resource(
        account.name(),
        request.raw_path(),
        request.uri.query().unwrap_or_default(),
    );
    let signed = account
        .keys()
        .iter()
        .any(|key| authorization.verify(key, method, content_md5, content_type, date, &resource));
    if signed {
        Ok(Access::Full)
    } else {
        Err(failed(format!(
            "the {} signature does not match: check the account key, and that the request \
             is signed over the canonicalized resource {resource:?} (the path exactly as \
             sent, never decoded or encoded again, and comp), the date header and, for \
             SharedKey, the method, Content-MD5 and Content-Type",
            match authorization.scheme {
                tables_core::auth::SharedKeyScheme::SharedKey => "SharedKey",
                tables_core::auth::SharedKeyScheme::SharedKeyLite => "SharedKeyLite",
            },
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

/// Checks a shared access signature: its signature with the account's keys, its
/// stored policy, time window, address and protocol.
fn authenticate_sas(
    request: &Request,
    state: &AccountState,
    now: DateTime,
) -> Result<Access, Failure> {
    let mut params = Vec::new();
    for (name, value) in &request.query {
        if SAS_PARAMETERS.contains(&name.as_str()) {
            if params.iter().any(|(n, _): &(String, String)| n == name) {
                return Err(failed(format!(
                    "the SAS parameter {name} appears more than once"
                )));
            }
            params.push((name.clone(), value.clone()));
        }
    }
    let token = SasToken::from_params(params).map_err(|e| failed(e.message().to_owned()))?;
    let account = &state.account;
    let version = token
        .version()
        .ok_or_else(|| failed("the SAS has no signed version (sv)"))?;
    let signature = token.param("sig").unwrap_or_default();
    let signed = |string_to_sign: &str| {
        account
            .keys()
            .iter()
            .any(|key| key.signed(string_to_sign, signature))
    };
    let is_account_sas = token.param("ss").is_some() || token.param("srt").is_some();
    let access = if is_account_sas {
        let fields = AccountSasFields::of(&token);
        if !fields.services.contains('t') {
            return Err(Failure::new(
                403,
                "AuthorizationServiceMismatch",
                format!(
                    "the account SAS grants services {:?} (ss), without the table service `t`",
                    fields.services
                ),
            ));
        }
        if !signed(&fields.string_to_sign(account.name())) {
            return Err(signature_mismatch(version));
        }
        check_window(fields.start, fields.expiry, now)?;
        Access::Account {
            resource_types: fields.resource_types.to_owned(),
            permissions: fields.permissions.to_owned(),
        }
    } else {
        let fields = TableSasFields::of(&token);
        if fields.table.is_empty() {
            return Err(failed(
                "the SAS names no table (tn) and no services (ss): it is neither a table nor \
                 an account SAS",
            ));
        }
        if !signed(&fields.string_to_sign(account.name())) {
            return Err(signature_mismatch(version));
        }
        let policy = match fields.policy_id {
            "" => None,
            id => Some(stored_policy(state, fields.table, id)?),
        };
        let pick = |field: &str, own: &str, stored: Option<String>| match (own, stored) {
            ("", stored) => Ok(stored.unwrap_or_default()),
            (own, None) => Ok(own.to_owned()),
            // "If a field is specified in both the SAS URL and the stored access
            // policy, the request fails with status code 400 (Bad Request)"
            // (Create a service SAS; docs/service-behaviour.md).
            (_, Some(_)) => Err(Failure::new(
                400,
                tables_core::error_code::INVALID_QUERY_PARAMETER_VALUE,
                format!(
                    "Value for one of the query parameters specified in the request URI is \
                     invalid. The SAS gives {field} and so does its stored access policy {:?}; \
                     give it in one place only",
                    fields.policy_id
                ),
            )),
        };
        let policy = policy.as_ref().map(|p| &p.policy);
        let permissions = pick(
            "sp",
            fields.permissions,
            policy.and_then(|p| p.permission.clone()),
        )?;
        let start = pick(
            "st",
            fields.start,
            policy.and_then(|p| p.start).map(|t| t.to_string()),
        )?;
        let expiry = pick(
            "se",
            fields.expiry,
            policy.and_then(|p| p.expiry).map(|t| t.to_string()),
        )?;
        if let Some(bad) = permissions.chars().find(|c| !"raud".contains(*c)) {
            return Err(failed(format!(
                "the table SAS permission {bad:?} is not one of `raud`"
            )));
        }
        check_window(&start, &expiry, now)?;
        Access::Table {
            table: fields.table.to_owned(),
            permissions,
            range: SasKeyRange::from_sas(&token),
        }
    };
    check_address(token.param("sip"), request.peer)?;
    check_protocol(token.param("spr"), request.scheme)?;
    Ok(access)
}

fn signature_mismatch(version: &str) -> Failure {
    failed(format!(
        "the SAS signature does not match: it was not made with this account's key over \
         these parameters (signed version {version}); make the token again with the account \
         key, and pass every parameter as given"
    ))
}

/// The stored access policy `id` of `table`.
fn stored_policy(state: &AccountState, table: &str, id: &str) -> Result<SignedIdentifier, Failure> {
    let acls = state.acls();
    acls.get(&table.to_ascii_lowercase())
        .and_then(|policies| policies.iter().find(|p| p.id == id))
        .cloned()
        .ok_or_else(|| {
            failed(format!(
                "the SAS names stored access policy {id:?} (si), which table {table:?} does not \
                 hold: it was never set, or was removed (revoking the token)"
            ))
        })
}

/// The SAS is valid now: after its start (if any), before its expiry.
fn check_window(start: &str, expiry: &str, now: DateTime) -> Result<(), Failure> {
    let read = |field: &str, text: &str| {
        parse_sas_time(text).ok_or_else(|| {
            failed(format!(
                "the SAS {field} {text:?} is not an ISO 8601 UTC time such as \
                 2030-01-01T00:00:00Z"
            ))
        })
    };
    if expiry.is_empty() {
        return Err(failed(
            "the SAS has no expiry (se), in itself or in its stored access policy",
        ));
    }
    let expiry_at = read("expiry (se)", expiry)?;
    let start_at = if start.is_empty() {
        None
    } else {
        Some(read("start (st)", start)?)
    };
    if start_at.is_some_and(|start| now < start) || now >= expiry_at {
        return Err(failed(format!(
            "Signature not valid in the specified time frame: Start [{start}] - Expiry \
             [{expiry}] - Current [{now}]"
        )));
    }
    Ok(())
}

/// The client's address is the one (or in the range) the SAS allows.
fn check_address(range: Option<&str>, peer: IpAddr) -> Result<(), Failure> {
    let Some(range) = range.filter(|r| !r.is_empty()) else {
        return Ok(());
    };
    let (first, last) = range.split_once('-').unwrap_or((range, range));
    let bound = |text: &str| {
        text.trim()
            .parse::<IpAddr>()
            .ok()
            .map(|ip| ip.to_canonical())
    };
    let (Some(first), Some(last)) = (bound(first), bound(last)) else {
        return Err(failed(format!(
            "the SAS address range {range:?} (sip) is not an address or `first-last` range"
        )));
    };
    let peer = peer.to_canonical();
    if peer < first || peer > last {
        return Err(Failure::new(
            403,
            "AuthorizationSourceIPMismatch",
            format!(
                "This request is not authorized to perform this operation using this source IP \
                 {peer}: the SAS allows {range}"
            ),
        ));
    }
    Ok(())
}

/// The request came over a protocol the SAS allows.
fn check_protocol(protocols: Option<&str>, scheme: &str) -> Result<(), Failure> {
    match protocols.filter(|p| !p.is_empty()) {
        None | Some("https,http") => Ok(()),
        Some("https") if scheme == "https" => Ok(()),
        Some("https") => Err(Failure::new(
            403,
            "AuthorizationProtocolMismatch",
            "This request is not authorized to perform this operation using this protocol: \
             the SAS allows HTTPS only (spr=https) and the request came over HTTP",
        )),
        Some(other) => Err(failed(format!(
            "the SAS protocol {other:?} (spr) is not `https` or `https,http`"
        ))),
    }
}

fn failed(message: impl Into<String>) -> Failure {
    Failure::new(403, "AuthenticationFailed", message)
}
