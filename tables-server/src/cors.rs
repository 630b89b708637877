//! CORS, as the account's service properties set it: preflight (`OPTIONS`) answers,
//! and the `Access-Control-*` headers on answers to a browser's requests.

use hyper::header;
use tables_core::service::properties::CorsRule;

use crate::context::{AccountState, State};
use crate::reply::{Failure, Reply};
use crate::request::Request;

/// Answers a preflight request: `200` with what the first matching rule allows, or
/// `403 CorsPreflightFailure`.
///
/// # Errors
///
/// `400 MissingRequiredHeader` without `Origin` or `Access-Control-Request-Method`;
/// `403 CorsPreflightFailure` when no rule admits the origin, method and headers.
pub(crate) fn preflight(account: &AccountState, request: &Request) -> Result<Reply, Failure> {
    let missing = |name: &str| {
        Failure::new(
            400,
            "MissingRequiredHeader",
            format!(
                "A required CORS header is not present. A CORS preflight (OPTIONS) request \
                 needs the {name} header"
            ),
        )
    };
    let origin = request
        .header(header::ORIGIN)
        .ok_or_else(|| missing("Origin"))?;
    let method = request
        .header(header::ACCESS_CONTROL_REQUEST_METHOD)
        .ok_or_else(|| missing("Access-Control-Request-Method"))?;
    let asked_headers = request
        .header(header::ACCESS_CONTROL_REQUEST_HEADERS)
        .unwrap_or("");
    let headers: Vec<&str> = asked_headers
        .split(',')
        .map(str::trim)
        .filter(|h| !h.is_empty())
        .collect();
    let properties = account.properties();
    let rule = properties
        .cors_rule(origin, method, &headers)
        .ok_or_else(|| {
            Failure::new(
                403,
                "CorsPreflightFailure",
                format!(
                    "CORS not enabled or no matching rule found for this request. (Origin \
                     {origin:?}, method {method}, headers [{asked_headers}]; add a rule with \
                     Set Table Service Properties.)"
                ),
            )
        })?;
    let mut reply = allow_origin(Reply::empty(200), rule, origin)
        .with_header(header::ACCESS_CONTROL_ALLOW_METHODS, method.to_owned())
        .with_header(
            header::ACCESS_CONTROL_MAX_AGE,
            rule.max_age_seconds.to_string(),
        );
    if !headers.is_empty() {
        reply = reply.with_header(
            header::ACCESS_CONTROL_ALLOW_HEADERS,
            asked_headers.to_owned(),
        );
    }
    Ok(reply)
}

/// Adds the CORS headers of the first rule that admits the request's `Origin` and
/// method (none without an `Origin` or a matching rule).
pub(crate) fn decorate(state: &State, request: &Request, reply: Reply) -> Reply {
    let Some(origin) = request.header(header::ORIGIN) else {
        return reply;
    };
    let Some(account) = request
        .target(|name| state.accounts.contains_key(name))
        .and_then(|target| state.accounts.get(target.account))
    else {
        return reply;
    };
    let properties = account.properties();
    let method = request.method.as_str();
    let Some(rule) = properties
        .cors
        .iter()
        .find(|rule| rule.allows(origin, method, &[]))
    else {
        // With CORS on and no rule admitting this origin, a GET or HEAD answer
        // still varies by Origin: a cache must not hand it to an origin a rule
        // admits (docs/service-behaviour.md, "CORS").
        let varies = !properties.cors.is_empty() && matches!(method, "GET" | "HEAD");
        return if varies {
            reply.with_header(header::VARY, "Origin")
        } else {
            reply
        };
    };
    let reply = allow_origin(reply, rule, origin);
    if rule.exposed_headers.is_empty() {
        reply
    } else {
        reply.with_header(
            header::ACCESS_CONTROL_EXPOSE_HEADERS,
            rule.exposed_headers.join(","),
        )
    }
}

/// `Access-Control-Allow-Origin` (`*` for a rule that admits any origin, else the
/// origin with credentials allowed) and `Vary: Origin`.
fn allow_origin(reply: Reply, rule: &CorsRule, origin: &str) -> Reply {
    if rule.any_origin() {
        reply.with_header(header::ACCESS_CONTROL_ALLOW_ORIGIN, "*")
    } else {
        reply
            .with_header(header::ACCESS_CONTROL_ALLOW_ORIGIN, origin.to_owned())
            .with_header(header::ACCESS_CONTROL_ALLOW_CREDENTIALS, "true")
            .with_header(header::VARY, "Origin")
    }
}
