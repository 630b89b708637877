//! SharedKey and SharedKeyLite signatures, Table service variant: made by the client,
//! checked by the server, one implementation.
//!
//! The Table service signs less than blob and queue: no canonicalized headers and no
//! Content-Length line.
//!
//! ```text
//! SharedKey:     VERB \n Content-MD5 \n Content-Type \n Date \n CanonicalizedResource
//! SharedKeyLite: Date \n CanonicalizedResource
//! ```
//!
//! `CanonicalizedResource` is `/{account}` followed by the URL path exactly as sent
//! (so the account appears twice for path-style emulator URLs), plus `?comp=..` when
//! the URL has a `comp` parameter; no other query parameter is signed. "Exactly as
//! sent" is the whole rule: the service's page says that any part of the
//! canonicalized resource derived from the URI is encoded exactly as it is in the
//! URI, so a path is never decoded (or encoded again) before it is signed or
//! checked. A signature over `'a%20b'` is then one over the entity `a b` and no
//! other: `'a%2520b'` (the entity `a%20b`) is another string, so another signature.
//! [`request_canonical_resource`] is that rule, for the client that signs and the
//! server that checks alike (`docs/protocol.md` §3.1).
//!
//! See <https://learn.microsoft.com/rest/api/storageservices/authorize-with-shared-key>.

use std::borrow::Cow;

use percent_encoding::percent_decode_str;

use super::key::AccountKey;

/// The `Authorization` header value of a request: `SharedKey {account}:{signature}`,
/// or `SharedKeyLite {account}:{signature}` when `lite`.
///
/// `content_md5` and `content_type` are the header values exactly as sent (empty if
/// absent; SharedKeyLite signs neither, nor the method). `date` is the `x-ms-date`
/// value sent (never empty). `canonical_resource` comes from [`canonical_resource`].
pub fn shared_key_authorization(
    key: &AccountKey,
    lite: bool,
    method: &str,
    content_md5: &str,
    content_type: &str,
    date: &str,
    canonical_resource: &str,
) -> String {
    let mut string_to_sign = String::with_capacity(
        method.len()
            + content_md5.len()
            + content_type.len()
            + date.len()
            + canonical_resource.len()
            + 4,
    );
    let scheme = if lite {
        "SharedKeyLite"
    } else {
        for part in [method, content_md5, content_type] {
            string_to_sign.push_str(part);
            string_to_sign.push('\n');
        }
        "SharedKey"
    };
    string_to_sign.push_str(date);
    string_to_sign.push('\n');
    string_to_sign.push_str(canonical_resource);
    let mut header = String::with_capacity(scheme.len() + key.account().len() + 46);
    header.push_str(scheme);
    header.push(' ');
    header.push_str(key.account());
    header.push(':');
    key.sign_into(&string_to_sign, &mut header);
    header
}

/// The canonicalized resource of a request, from its target exactly as it goes on
/// the wire: `encoded_path` is the URL path (percent-encoded, from its first `/`)
/// and `encoded_query` the query string without `?` (empty if none). The `comp`
/// parameter that counts is the one the server routes by: the first whose name
/// reads `comp` once decoded ([`query_pairs`]), its value decoded.
///
/// The client signs with it and the server checks with it, so both keep one
/// canonical form; nothing in the path is decoded or normalized first.
///
/// ```
/// use tables_core::auth::request_canonical_resource;
///
/// assert_eq!(
///     request_canonical_resource("acct", "/acct/t(PartitionKey='a%20b',RowKey='r')", ""),
///     "/acct/acct/t(PartitionKey='a%20b',RowKey='r')"
/// );
/// assert_eq!(
///     request_canonical_resource("acct", "/mytable", "timeout=5&%63omp=acl"),
///     "/acct/mytable?comp=acl"
/// );
/// ```
pub fn request_canonical_resource(
    account: &str,
    encoded_path: &str,
    encoded_query: &str,
) -> String {
    let comp = query_pairs(encoded_query)
        .find(|(name, _)| name == "comp")
        .map(|(_, value)| value);
    canonical_resource(account, encoded_path, comp.as_deref())
}

/// The parameters of a query string (without `?`), decoded in order: `+` stands for a
/// space (as forms write it), then `%XX` escapes are decoded (invalid UTF-8 becomes
/// U+FFFD). Empty pairs are skipped; a pair without `=` has an empty value.
///
/// The one reading of a query string: the server routes by it and
/// [`request_canonical_resource`] finds the signed `comp` with it.
///
/// ```
/// let pairs: Vec<_> = tables_core::auth::query_pairs("$filter=a%20eq%20'b+c'&&flag")
///     .map(|(n, v)| (n.into_owned(), v.into_owned()))
///     .collect();
/// assert_eq!(pairs, [("$filter".into(), "a eq 'b c'".into()), ("flag".into(), String::new())]);
/// ```
pub fn query_pairs(query: &str) -> impl Iterator<Item = (Cow<'_, str>, Cow<'_, str>)> {
    query
        .split('&')
        .filter(|pair| !pair.is_empty())
        .map(|pair| {
            let (name, value) = pair.split_once('=').unwrap_or((pair, ""));
            (decode_query_part(name), decode_query_part(value))
        })
}

fn decode_query_part(text: &str) -> Cow<'_, str> {
    if !text.contains(['+', '%']) {
        return Cow::Borrowed(text);
    }
    let spaced = text.replace('+', " ");
    Cow::Owned(percent_decode_str(&spaced).decode_utf8_lossy().into_owned())
}

/// The canonicalized resource: `/{account}{encoded_path}`, plus `?comp={comp}`.
///
/// `account` is the primary account name (also for requests to the secondary host);
/// `encoded_path` is the URL path exactly as it goes on the wire, starting with `/`
/// (one is added if missing), e.g. `/devstoreaccount1/Tables` for a path-style URL
/// or `/mytable(PartitionKey='p',RowKey='r')` for a host-style one.
pub fn canonical_resource(account: &str, encoded_path: &str, comp: Option<&str>) -> String {
    let mut resource = String::with_capacity(account.len() + encoded_path.len() + 16);
    resource.push('/');
    resource.push_str(account);
    if !encoded_path.starts_with('/') {
        resource.push('/');
    }
    resource.push_str(encoded_path);
    if let Some(comp) = comp {
        resource.push_str("?comp=");
        resource.push_str(comp);
    }
    resource
}

#[cfg(test)]
mod tests {
    use super::super::DEVELOPMENT_ACCOUNT_KEY as DEV_ACCOUNT_KEY;
    use super::*;

    const DATE: &str = "Mon, 01 Jan 2024 00:00:00 GMT";

    fn dev_key() -> AccountKey {
        AccountKey::new("devstoreaccount1", DEV_ACCOUNT_KEY).unwrap()
    }

    #[test]
    fn canonical_resource_forms() {
        assert_eq!(
            canonical_resource("devstoreaccount1", "/devstoreaccount1/Tables", None),
            "/devstoreaccount1/devstoreaccount1/Tables"
        );
        assert_eq!(
            canonical_resource("acct", "/mytable", Some("acl")),
            "/acct/mytable?comp=acl"
        );
        assert_eq!(canonical_resource("acct", "Tables", None), "/acct/Tables");
        assert_eq!(canonical_resource("acct", "/", None), "/acct/");
    }

    // docs/protocol.md §3.2, signature 1.
    #[test]
    fn shared_key_get_tables() {
        let resource = canonical_resource("devstoreaccount1", "/devstoreaccount1/Tables", None);
        assert_eq!(
            shared_key_authorization(&dev_key(), false, "GET", "", "", DATE, &resource),
            "SharedKey devstoreaccount1:xTTIoWBK7u+nSgfft7uKiDmecLL9GEiBUE4qVj03gko="
        );
    }

    // docs/protocol.md §3.2, signature 2.
    #[test]
    fn shared_key_post_with_content_type() {
        let resource = canonical_resource("devstoreaccount1", "/devstoreaccount1/mytable", None);
        assert_eq!(
            shared_key_authorization(
                &dev_key(),
                false,
                "POST",
                "",
                "application/json",
                DATE,
                &resource
            ),
            "SharedKey devstoreaccount1:7Yhnlsng3syaRPfj2ayn/5qq4m3n8VzeRdyCJyDK4Jw="
        );
    }

    // docs/protocol.md §3.2, signature 3.
    #[test]
    fn shared_key_entity_path() {
        let resource = canonical_resource(
            "devstoreaccount1",
            "/devstoreaccount1/mytable(PartitionKey='pk',RowKey='rk')",
            None,
        );
        assert_eq!(
            shared_key_authorization(&dev_key(), false, "GET", "", "", DATE, &resource),
            "SharedKey devstoreaccount1:11+LtNmgWxdxfXfLil6TnETrLV2LSr721L+vTHFv3FM="
        );
    }

    // docs/protocol.md §3.2, signature 4.
    #[test]
    fn shared_key_lite_get_tables() {
        let resource = canonical_resource("devstoreaccount1", "/devstoreaccount1/Tables", None);
        // SharedKeyLite ignores method, MD5 and content type.
        for (method, content_type) in [("GET", ""), ("POST", "application/json")] {
            assert_eq!(
                shared_key_authorization(
                    &dev_key(),
                    true,
                    method,
                    "",
                    content_type,
                    DATE,
                    &resource
                ),
                "SharedKeyLite devstoreaccount1:13UOPPE/P1+LLsRFYJCHphuPCEQ21EO/4WbbW+OXG4U="
            );
        }
    }

    #[test]
    fn every_signed_field_matters() {
        let key = dev_key();
        let base = ("GET", "", "", DATE, "/a/a/Tables");
        let sign = |(m, md5, ct, d, r): (&str, &str, &str, &str, &str)| {
            shared_key_authorization(&key, false, m, md5, ct, d, r)
        };
        let reference = sign(base);
        for changed in [
            ("PUT", "", "", DATE, "/a/a/Tables"),
            ("GET", "x", "", DATE, "/a/a/Tables"),
            ("GET", "", "x", DATE, "/a/a/Tables"),
            (
                "GET",
                "",
                "",
                "Tue, 02 Jan 2024 00:00:00 GMT",
                "/a/a/Tables",
            ),
            ("GET", "", "", DATE, "/a/a/tables"),
        ] {
            assert_ne!(sign(changed), reference, "{changed:?}");
        }
    }
}
