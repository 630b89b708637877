//! Fuzzing the signature's canonical form against the client's signer: a request
//! the remote engine signs (`tables_client::remote::table_authorization`, SharedKey
//! and SharedKeyLite) is accepted by the server's check (`auth::authenticate`), and
//! any change to what the service signs is refused: a byte of the path (an escape
//! decoded, encoded again or written in the other case; a character changed, added
//! or removed), the routed `comp` (changed, added, or hidden under an encoded name),
//! and each signed header (the method, `Content-Type` and `Content-MD5` for
//! SharedKey; the date for both). What the service does not sign still verifies,
//! as on Azure: the other query parameters, and for SharedKeyLite the method and
//! `Content-Type` (docs/protocol.md §3).
//!
//! It runs a hundredth of `TABLES_SERVER_FUZZ_CASES` cases (at least 500; 10,000
//! in the test command, about 10 s), each checked against about eight changes.

use std::net::SocketAddr;
use std::time::{Duration, SystemTime};

use bytes::Bytes;
use reqwest::Url;
use tables_client::remote::table_authorization;
use tables_core::{odata, EntityKey};
use tables_mem::MemEngine;

use super::case::escape;
use super::names::table_name;
use super::{dev_key, env_number, Rng, ACCOUNT};
use crate::account::Account;
use crate::auth::authenticate;
use crate::context::AccountState;
use crate::http::read;

/// A request as signed: the pieces the signature may cover.
#[derive(Debug, Clone)]
struct Signed {
    method: String,
    /// Path and query, as on the request line.
    target: String,
    content_type: String,
    content_md5: String,
    date: String,
    lite: bool,
    authorization: String,
}

/// Whether the server's check accepts the request; `None` when hyper would not
/// have read it (the target is not a valid request target).
fn accepted(account: &AccountState, request: &Signed) -> Option<bool> {
    let mut builder = hyper::Request::builder()
        .method(request.method.as_str())
        .uri(request.target.as_str())
        .header("x-ms-date", request.date.as_str())
        .header("authorization", request.authorization.as_str());
    if !request.content_type.is_empty() {
        builder = builder.header("content-type", request.content_type.as_str());
    }
    if !request.content_md5.is_empty() {
        builder = builder.header("content-md5", request.content_md5.as_str());
    }
    let (parts, ()) = builder.body(()).ok()?.into_parts();
    let peer = SocketAddr::from(([127, 0, 0, 1], 50_000));
    let request = read(parts, Bytes::new(), peer, false).ok()?;
    Some(authenticate(&request, account).is_ok())
}

/// A resource path below the account, as the client writes it or worse.
fn resource(rng: &mut Rng) -> String {
    let key = |rng: &mut Rng| match rng.below(4) {
        0 => rng
            .pick(&["a b", "a%20b", "a%2520b", "o'hara", "", "%", "+"])
            .to_owned(),
        _ => rng.text(10),
    };
    match rng.below(8) {
        0 => "Tables".to_owned(),
        1 => odata::table_resource_path(&table_name(rng)),
        2 => format!("{}()", table_name(rng)),
        3 => "$batch".to_owned(),
        4 => {
            let text = rng.text(16);
            escape(rng, text.as_bytes())
        }
        _ => {
            let key = EntityKey::new(key(rng), key(rng));
            let path = odata::entity_path(&table_name(rng), &key);
            if rng.percent(30) {
                escape(rng, path.as_bytes())
            } else {
                path
            }
        }
    }
}

/// A query string: nothing, unsigned parameters, and sometimes `comp`.
fn query(rng: &mut Rng) -> String {
    let mut pairs = Vec::new();
    for _ in 0..rng.below(4) {
        pairs.push(match rng.below(6) {
            0 => format!("comp={}", rng.one_of("acl|properties|stats|list|a%20b")),
            1 => "restype=service".to_owned(),
            2 => format!("$filter={}", odata::encode_query_value(&rng.text(12))),
            3 => "NextPartitionKey=cDE%3D&NextRowKey=cjE%3D".to_owned(),
            4 => "timeout=30".to_owned(),
            _ => {
                let text = rng.text(6);
                escape(rng, text.as_bytes())
            }
        });
    }
    pairs.join("&")
}

/// A request the client signs, from the seed's random parts.
fn signed(rng: &mut Rng) -> Option<Signed> {
    let method = rng
        .one_of("GET|PUT|POST|DELETE|MERGE|PATCH|HEAD")
        .to_owned();
    let prefix = if rng.percent(80) {
        "/devstoreaccount1/"
    } else {
        "/"
    };
    let (resource, query) = (resource(rng), query(rng));
    let question = if query.is_empty() && rng.percent(90) {
        ""
    } else {
        "?"
    };
    let url = Url::parse(&format!(
        "http://127.0.0.1:10002{prefix}{resource}{question}{query}"
    ))
    .ok()?;
    let target = match url.query() {
        Some(query) => format!("{}?{query}", url.path()),
        None => url.path().to_owned(),
    };
    let content_type = rng
        .pick(&[
            "",
            "",
            "application/json",
            "application/xml",
            "multipart/mixed; boundary=b",
        ])
        .to_owned();
    let lite = rng.percent(30);
    let date = httpdate::fmt_http_date(SystemTime::now());
    let authorization = table_authorization(
        dev_key(),
        lite,
        &method,
        ACCOUNT,
        &url,
        &content_type,
        &date,
    );
    Some(Signed {
        method,
        target,
        content_type,
        content_md5: String::new(),
        date,
        lite,
        authorization,
    })
}

/// The request with one byte of its path changed in a way that matters to the
/// string signed: an escape decoded, encoded again or its hex in the other case,
/// or a character replaced, added or removed.
fn change_path(rng: &mut Rng, request: &Signed) -> Signed {
    let (path, query) = request
        .target
        .split_once('?')
        .map_or((request.target.as_str(), None), |(p, q)| (p, Some(q)));
    let escapes: Vec<usize> = path.match_indices('%').map(|(i, _)| i).collect();
    let mut changed = path.to_owned();
    let escape_at = (!escapes.is_empty() && rng.percent(60)).then(|| rng.pick(&escapes));
    match escape_at {
        Some(at) if path.len() >= at + 3 => {
            let hex = &path[at + 1..at + 3];
            match rng.below(3) {
                // `%25` for `%`: what the decoded-path check used to accept.
                0 => changed.replace_range(at..=at, "%25"),
                1 if hex != hex.to_ascii_lowercase() => {
                    changed.replace_range(at + 1..at + 3, &hex.to_ascii_lowercase());
                }
                _ => {
                    let byte = u8::from_str_radix(hex, 16).unwrap_or(b'x');
                    let plain = if byte.is_ascii_graphic() && byte != b'?' && byte != b'#' {
                        (byte as char).to_string()
                    } else {
                        "x".to_owned()
                    };
                    changed.replace_range(at..at + 3, &plain);
                }
            }
        }
        _ => {
            let chars: Vec<(usize, char)> = path.char_indices().skip(1).collect();
            let with = rng.pick(&['a', 'Z', '0', '\'', '(', ')', ',', '=', '_', '-']);
            match chars.get(rng.below(chars.len().max(1))).copied() {
                Some((at, old)) if rng.percent(50) => {
                    let end = at + old.len_utf8();
                    if rng.percent(50) || old == with {
                        changed.replace_range(at..end, "");
                    } else {
                        changed.replace_range(at..end, &with.to_string());
                    }
                }
                _ => changed.push(with),
            }
        }
    }
    let mut request = request.clone();
    request.target = match query {
        Some(query) => format!("{changed}?{query}"),
        None => changed,
    };
    request
}

/// The request with its `comp` changed, added, or added under an encoded name:
/// the server routes by the first `comp`, so each changes what is signed.
fn change_comp(rng: &mut Rng, request: &Signed) -> Signed {
    let (path, query) = request
        .target
        .split_once('?')
        .unwrap_or((request.target.as_str(), ""));
    let comp = tables_core::auth::query_pairs(query)
        .find(|(name, _)| name == "comp")
        .map(|(_, value)| value.into_owned());
    let new_value = match comp.as_deref() {
        Some("acl") => "properties",
        _ => "acl",
    };
    let name = rng.one_of("comp|%63omp|co%6Dp|%63%6F%6D%70");
    let mut request = request.clone();
    request.target = if query.is_empty() {
        format!("{path}?{name}={new_value}")
    } else {
        format!("{path}?{name}={new_value}&{query}")
    };
    request
}

#[test]
fn client_signatures_verify_and_any_signed_change_is_refused() {
    let cases = (env_number("TABLES_SERVER_FUZZ_CASES").unwrap_or(20_000) / 100).max(500);
    let first = env_number("TABLES_FUZZ_FIRST").unwrap_or(0);
    let account = AccountState::new(Account::development(), MemEngine::new());
    let mut failures = Vec::new();
    let (mut checked, mut refused) = (0_u64, 0_u64);
    for seed in first..first + cases {
        let mut rng = Rng::new(seed ^ 0x5167_u64);
        let Some(request) = signed(&mut rng) else {
            continue;
        };
        let mut fail = |what: String| failures.push(format!("seed {seed}: {what}\n{request:?}"));
        match accepted(&account, &request) {
            Some(true) => {}
            Some(false) => {
                fail("the server refuses what the client signed".to_owned());
                continue;
            }
            // hyper reads every target the url crate writes.
            None => {
                fail("hyper refuses the client's target".to_owned());
                continue;
            }
        }
        let later = httpdate::fmt_http_date(SystemTime::now() + Duration::from_secs(1));
        let mut signed_changes = Vec::new();
        for _ in 0..4 {
            signed_changes.push(("path", change_path(&mut rng, &request)));
        }
        signed_changes.push(("comp", change_comp(&mut rng, &request)));
        signed_changes.push((
            "date",
            Signed {
                date: later,
                ..request.clone()
            },
        ));
        let mut unsigned_changes = vec![(
            "an unsigned parameter",
            Signed {
                target: format!(
                    "{}{}timeout=7",
                    request.target,
                    if request.target.contains('?') {
                        "&"
                    } else {
                        "?"
                    }
                ),
                ..request.clone()
            },
        )];
        let other_method = if request.method == "PUT" {
            "POST"
        } else {
            "PUT"
        }
        .to_owned();
        let method = Signed {
            method: other_method,
            ..request.clone()
        };
        let content_type = Signed {
            content_type: "text/plain".to_owned(),
            ..request.clone()
        };
        let md5 = Signed {
            content_md5: "1B2M2Y8AsgTpgAmY7PhCfg==".to_owned(),
            ..request.clone()
        };
        if request.lite {
            unsigned_changes.extend([("method", method), ("content type", content_type)]);
        } else {
            signed_changes.extend([("method", method), ("content type", content_type)]);
            signed_changes.push(("content md5", md5));
        }
        for (what, changed) in signed_changes {
            if changed.target == request.target && what.starts_with("path") {
                continue;
            }
            match accepted(&account, &changed) {
                Some(true) => fail(format!("a changed {what} still verifies: {changed:?}")),
                Some(false) => refused += 1,
                None => {}
            }
            checked += 1;
        }
        for (what, changed) in unsigned_changes {
            if accepted(&account, &changed) == Some(false) {
                fail(format!(
                    "a change of {what} (not signed) is refused: {changed:?}"
                ));
            }
        }
        if failures.len() >= 10 {
            break;
        }
    }
    eprintln!("signature fuzz: {cases} cases, {checked} changes checked, {refused} refused");
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
    assert!(
        refused > cases,
        "too few changes reached the check: {refused}"
    );
}
