//! A request as the handlers see it: method, the account and the resource path it
//! addresses (path-style or host-style), query parameters, headers and the whole
//! body.

use std::net::IpAddr;

use bytes::Bytes;
use hyper::header::HeaderMap;
use percent_encoding::percent_decode_str;

/// One request, read whole.
#[derive(Debug)]
pub(crate) struct Request {
    /// The method; for a `POST` with `X-HTTP-Method`, the tunnelled method.
    pub(crate) method: String,
    /// The method of the request line (what a SharedKey signature covers).
    pub(crate) wire_method: String,
    /// The path as sent (percent-encoded), from the first `/`.
    pub(crate) raw_path: String,
    /// The query parameters, decoded, in order.
    pub(crate) query: Vec<(String, String)>,
    pub(crate) headers: HeaderMap,
    pub(crate) body: Bytes,
    /// `http` or `https`: how the client reached the server (always `http` here).
    pub(crate) scheme: &'static str,
    /// The client's address.
    pub(crate) peer: IpAddr,
}

/// Where a request is addressed: the account and the path below it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Target {
    pub(crate) account: String,
    /// The path relative to the account, as sent (percent-encoded), without the
    /// leading `/`.
    pub(crate) resource: String,
    /// The account's base URL as the client addressed it (no trailing `/`).
    pub(crate) base_url: String,
}

impl Request {
    /// The method of the request line.
    pub(crate) fn original_method(&self) -> &str {
        &self.wire_method
    }

    /// The first value of a header, if it is text.
    pub(crate) fn header(&self, name: &str) -> Option<&str> {
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

    /// The account and resource addressed. Host-style (`acct.table.localhost`)
    /// when the host is a name with a dot whose first label is a known account;
    /// otherwise path-style (`/acct/...`), where a first segment of
    /// `<account>-secondary` names the account too.
    pub(crate) fn target(&self, is_account: impl Fn(&str) -> bool) -> Option<Target> {
        let host = self.header("host").unwrap_or("127.0.0.1");
        let hostname = host_without_port(host);
        if hostname.parse::<IpAddr>().is_err() && hostname.contains('.') {
            let label = hostname.split('.').next().unwrap_or_default();
            let account = label.strip_suffix("-secondary").unwrap_or(label);
            if is_account(account) {
                return Some(Target {
                    account: account.to_owned(),
                    resource: self.raw_path.trim_start_matches('/').to_owned(),
                    base_url: format!("{}://{host}", self.scheme),
                });
            }
        }
        let path = self.raw_path.strip_prefix('/')?;
        let (segment, rest) = path.split_once('/').unwrap_or((path, ""));
        let account = segment.strip_suffix("-secondary").unwrap_or(segment);
        Some(Target {
            account: account.to_owned(),
            resource: rest.to_owned(),
            base_url: format!("{}://{host}/{segment}", self.scheme),
        })
    }
}

/// `host[:port]` or `[v6]:port` without the port.
fn host_without_port(host: &str) -> &str {
    if let Some(rest) = host.strip_prefix('[') {
        return rest.split(']').next().unwrap_or(rest);
    }
    host.rsplit_once(':').map_or(host, |(name, _)| name)
}

/// Reads a query string into decoded pairs (`+` is a space, as forms write it;
/// the SDKs encode spaces as `%20`).
pub(crate) fn parse_query(query: &str) -> Vec<(String, String)> {
    query
        .split('&')
        .filter(|pair| !pair.is_empty())
        .map(|pair| {
            let (name, value) = pair.split_once('=').unwrap_or((pair, ""));
            (decode(name), decode(value))
        })
        .collect()
}

fn decode(text: &str) -> String {
    let spaced = text.replace('+', " ");
    percent_decode_str(&spaced).decode_utf8_lossy().into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn request(host: &str, path: &str) -> Request {
        let mut headers = HeaderMap::new();
        headers.insert("host", host.parse().unwrap());
        Request {
            method: "GET".into(),
            wire_method: "GET".into(),
            raw_path: path.into(),
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
        let path = request("127.0.0.1:10002", "/acct/Tables")
            .target(known)
            .unwrap();
        assert_eq!(
            (
                path.account.as_str(),
                path.resource.as_str(),
                path.base_url.as_str()
            ),
            ("acct", "Tables", "http://127.0.0.1:10002/acct")
        );
        let host = request(
            "acct.table.localhost:10002",
            "/t(PartitionKey='a',RowKey='b')",
        )
        .target(known)
        .unwrap();
        assert_eq!(
            (
                host.account.as_str(),
                host.resource.as_str(),
                host.base_url.as_str()
            ),
            (
                "acct",
                "t(PartitionKey='a',RowKey='b')",
                "http://acct.table.localhost:10002"
            )
        );
        // `localhost` has no dot: path-style.
        let local = request("localhost:1", "/acct/").target(known).unwrap();
        assert_eq!(
            (local.account.as_str(), local.resource.as_str()),
            ("acct", "")
        );
        let secondary = request("[::1]:1", "/acct-secondary/Tables")
            .target(known)
            .unwrap();
        assert_eq!(secondary.account, "acct");
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
