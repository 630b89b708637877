//! A request as the handlers see it: method, the account and the resource path it
//! addresses (path-style or host-style), query parameters, headers and the whole
//! body.

use std::net::IpAddr;

use bytes::Bytes;
use hyper::header::{self, AsHeaderName, HeaderMap};
use hyper::{Method, Uri};

/// One request, read whole.
#[derive(Debug)]
pub(crate) struct Request {
    /// The method; for a `POST` with `X-HTTP-Method`, the tunnelled method.
    pub(crate) method: Method,
    /// The method of the request line (what a SharedKey signature covers).
    pub(crate) wire_method: Method,
    /// The request target as sent (its path is percent-encoded).
    pub(crate) uri: Uri,
    /// The query parameters, decoded, in order.
    pub(crate) query: Vec<(String, String)>,
    pub(crate) headers: HeaderMap,
    pub(crate) body: Bytes,
    /// `http` or `https`: how the client reached the server (always `http` here).
    pub(crate) scheme: &'static str,
    /// The client's address.
    pub(crate) peer: IpAddr,
}

/// Where a request is addressed: the account and the path below it (borrowed from
/// the request).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Target<'a> {
    pub(crate) account: &'a str,
    /// The path relative to the account, as sent (percent-encoded), without the
    /// leading `/`.
    pub(crate) resource: &'a str,
    /// The account's base URL as the client addressed it (no trailing `/`).
    pub(crate) base_url: String,
    /// Addressed as `<account>-secondary`: the read-access secondary location,
    /// which here holds the same data as the primary (replication is always in
    /// sync), and is the only place that serves the replication stats.
    pub(crate) secondary: bool,
}

impl Request {
    /// The method of the request line.
    pub(crate) fn original_method(&self) -> &str {
        self.wire_method.as_str()
    }

    /// The path as sent (percent-encoded), from the first `/`.
    pub(crate) fn raw_path(&self) -> &str {
        self.uri.path()
    }

    /// The first value of a header, if it is text. Named by a constant
    /// ([`hyper::header`], [`crate::reply::names`]) where the server looks often: a
    /// name given as text is parsed and lowercased on every lookup.
    pub(crate) fn header(&self, name: impl AsHeaderName) -> Option<&str> {
        self.headers.get(name).and_then(|v| v.to_str().ok())
    }

    /// Whether the request is for one of the XML APIs (table ACL, service
    /// properties and stats), whose errors are XML too.
    pub(crate) fn xml_api(&self) -> bool {
        matches!(self.param("comp"), Some("acl" | "properties" | "stats"))
    }

    /// The first query parameter of that name (names compare exactly).
    pub(crate) fn param(&self, name: &str) -> Option<&str> {
        self.query
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }

    /// A system query option (`$filter`, `$select`) as the service reads it: given
    /// empty or blank, it is absent (Azure answers `$filter=` with every row;
    /// docs/service-behaviour.md, "Empty query options").
    pub(crate) fn query_option(&self, name: &str) -> Option<&str> {
        self.param(name).filter(|value| !value.trim().is_empty())
    }

    /// The account and resource addressed. Host-style (`acct.table.localhost`)
    /// when the host is a name with a dot whose first label is a known account;
    /// otherwise path-style (`/acct/...`), where a first segment of
    /// `<account>-secondary` names the account too.
    pub(crate) fn target(&self, is_account: impl Fn(&str) -> bool) -> Option<Target<'_>> {
        let host = self.header(header::HOST).unwrap_or("127.0.0.1");
        let hostname = host_without_port(host);
        let base_url = |path: &[&str]| {
            let mut url = String::with_capacity(
                self.scheme.len() + 3 + host.len() + path.iter().map(|p| p.len()).sum::<usize>(),
            );
            for part in [self.scheme, "://", host].iter().chain(path) {
                url.push_str(part);
            }
            url
        };
        let raw_path = self.raw_path();
        if hostname.parse::<IpAddr>().is_err() && hostname.contains('.') {
            let label = hostname.split('.').next().unwrap_or_default();
            let (account, secondary) = without_secondary(label);
            if is_account(account) {
                return Some(Target {
                    account,
                    resource: raw_path.trim_start_matches('/'),
                    base_url: base_url(&[]),
                    secondary,
                });
            }
        }
        let path = raw_path.strip_prefix('/')?;
        let (segment, rest) = path.split_once('/').unwrap_or((path, ""));
        let (account, secondary) = without_secondary(segment);
        Some(Target {
            account,
            resource: rest,
            base_url: base_url(&["/", segment]),
            secondary,
        })
    }
}

/// What follows an account's name to address its secondary location.
pub(crate) const SECONDARY_SUFFIX: &str = "-secondary";

/// The account a host label or path segment names, and whether it names the
/// account's secondary location (`<account>-secondary`).
fn without_secondary(name: &str) -> (&str, bool) {
    match name.strip_suffix(SECONDARY_SUFFIX) {
        Some(account) => (account, true),
        None => (name, false),
    }
}

/// `host[:port]` or `[v6]:port` without the port.
fn host_without_port(host: &str) -> &str {
    if let Some(rest) = host.strip_prefix('[') {
        return rest.split(']').next().unwrap_or(rest);
    }
    host.rsplit_once(':').map_or(host, |(name, _)| name)
}

/// Reads a query string into decoded pairs, as `tables_core::auth::query_pairs`
/// reads it (the reading the signature's `comp` is found by, so what is routed is
/// what was signed).
pub(crate) fn parse_query(query: &str) -> Vec<(String, String)> {
    tables_core::auth::query_pairs(query)
        .map(|(name, value)| (name.into_owned(), value.into_owned()))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn request(host: &str, path: &str) -> Request {
        let mut headers = HeaderMap::new();
        headers.insert("host", host.parse().unwrap());
        Request {
            method: Method::GET,
            wire_method: Method::GET,
            uri: path.parse().unwrap(),
            query: Vec::new(),
            headers,
            body: Bytes::new(),
            scheme: "http",
            peer: IpAddr::from([127, 0, 0, 1]),
        }
    }

    #[test]
    fn path_and_host_style() {
        let known = |name: &str| name == "acct";
        // (host, path) -> (account, resource, base URL, secondary)
        for (host, path, expected) in [
            (
                "127.0.0.1:10002",
                "/acct/Tables",
                ("acct", "Tables", "http://127.0.0.1:10002/acct", false),
            ),
            (
                "acct.table.localhost:10002",
                "/t(PartitionKey='a',RowKey='b')",
                (
                    "acct",
                    "t(PartitionKey='a',RowKey='b')",
                    "http://acct.table.localhost:10002",
                    false,
                ),
            ),
            (
                "acct-secondary.table.localhost:10002",
                "/Tables",
                (
                    "acct",
                    "Tables",
                    "http://acct-secondary.table.localhost:10002",
                    true,
                ),
            ),
            // `localhost` has no dot: path-style.
            (
                "localhost:1",
                "/acct/",
                ("acct", "", "http://localhost:1/acct", false),
            ),
            (
                "[::1]:1",
                "/acct-secondary/Tables",
                ("acct", "Tables", "http://[::1]:1/acct-secondary", true),
            ),
        ] {
            let request = request(host, path);
            let target = request.target(known).unwrap();
            assert_eq!(
                (
                    target.account,
                    target.resource,
                    target.base_url.as_str(),
                    target.secondary
                ),
                expected,
                "{host} {path}"
            );
        }
    }

    #[test]
    fn query_strings_decode() {
        assert_eq!(
            parse_query("$filter=PartitionKey%20eq%20'a+b'&$top=5&&flag"),
            [
                ("$filter".to_owned(), "PartitionKey eq 'a b'".to_owned()),
                ("$top".to_owned(), "5".to_owned()),
                ("flag".to_owned(), String::new()),
            ]
        );
    }
}
