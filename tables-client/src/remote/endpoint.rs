//! The account endpoint: base URL, account name, and the URL style.

use std::net::IpAddr;

use reqwest::Url;
use tables_core::{Error, ErrorKind, Result};

/// How resources are addressed under the endpoint.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum UrlStyle {
    /// `https://{account}.table.core.windows.net/{resource}`: the account is the host's
    /// first label.
    Host,
    /// `http://127.0.0.1:10002/{account}/{resource}`: the account is the first path
    /// segment (emulators, IP endpoints).
    Path,
}

/// Whether plain HTTP may be used with a host that is not a loopback address.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum HttpPolicy {
    /// HTTPS, or HTTP to a loopback host (an emulator on this machine).
    LoopbackOnly,
    /// HTTP to any host: explicitly allowed by the caller.
    Allowed,
}

/// A parsed account endpoint.
#[derive(Debug, Clone)]
pub(crate) struct Endpoint {
    /// The account URL, parsed once, e.g. `http://127.0.0.1:10002/devstoreaccount1`:
    /// request URLs are this with another path and query.
    url: Url,
    account: String,
    /// Whether the host is the Cosmos DB Table API's (asked on every write).
    cosmos: bool,
}

fn invalid(message: String) -> Error {
    Error::new(ErrorKind::InvalidInput, message)
}

/// Whether a host names this machine.
fn is_loopback(host: &str) -> bool {
    let bare = host.trim_start_matches('[').trim_end_matches(']');
    if bare.eq_ignore_ascii_case("localhost") {
        return true;
    }
    bare.parse::<IpAddr>().is_ok_and(|ip| ip.is_loopback())
}

impl Endpoint {
    /// Parses an endpoint URL. The account comes from `account` when given, else from
    /// the URL (first path segment for path-style URLs, first host label otherwise).
    pub(crate) fn parse(url: &str, account: Option<&str>, http: HttpPolicy) -> Result<Endpoint> {
        const FORMS: &str = "expected an account URL such as \
            https://myaccount.table.core.windows.net or http://127.0.0.1:10002/devstoreaccount1";
        let trimmed = url.trim().trim_end_matches('/');
        let parsed = Url::parse(trimmed).map_err(|e| {
            invalid(format!(
                "the endpoint {trimmed:?} is not a URL ({e}); {FORMS}"
            ))
        })?;
        if parsed.query().is_some() || parsed.fragment().is_some() {
            return Err(invalid(format!(
                "the endpoint {:?} has a query or fragment; pass a SAS token as a credential \
                 (Credential::Sas), not in the endpoint URL",
                format_args!(
                    "{}://{}{}",
                    parsed.scheme(),
                    parsed.host_str().unwrap_or(""),
                    parsed.path()
                )
            )));
        }
        if !parsed.username().is_empty() || parsed.password().is_some() {
            return Err(invalid(
                "the endpoint URL carries user information; pass credentials as a Credential"
                    .to_owned(),
            ));
        }
        let host = parsed
            .host_str()
            .ok_or_else(|| invalid(format!("the endpoint {trimmed:?} has no host; {FORMS}")))?
            .to_owned();
        match parsed.scheme() {
            "https" => {}
            "http" if http == HttpPolicy::Allowed || is_loopback(&host) => {}
            "http" => {
                return Err(invalid(format!(
                    "refusing plain HTTP to {host}: requests and their signatures would cross \
                     the network unencrypted. Use https, or allow HTTP explicitly with \
                     RemoteEngineBuilder::allow_http() for a trusted network (for example an \
                     emulator in a container)"
                )))
            }
            other => {
                return Err(invalid(format!(
                    "the endpoint scheme {other:?} is not supported; use https (or http for \
                     an emulator on this machine)"
                )))
            }
        }
        let segments: Vec<&str> = parsed
            .path_segments()
            .map(|s| s.filter(|seg| !seg.is_empty()).collect())
            .unwrap_or_default();
        let host_is_ip = host
            .trim_start_matches('[')
            .trim_end_matches(']')
            .parse::<IpAddr>()
            .is_ok();
        let path_style = host_is_ip
            || host.eq_ignore_ascii_case("localhost")
            || host.eq_ignore_ascii_case("host.docker.internal")
            || !segments.is_empty();
        let (style, url_account) = if path_style {
            match segments.as_slice() {
                [account] => (UrlStyle::Path, Some((*account).to_owned())),
                [] => (UrlStyle::Path, None),
                _ => {
                    return Err(invalid(format!(
                        "the endpoint {trimmed:?} has more than one path segment; {FORMS}"
                    )))
                }
            }
        } else {
            let label = host.split('.').next().unwrap_or_default().to_owned();
            (UrlStyle::Host, (!label.is_empty()).then_some(label))
        };
        let account = match (account, url_account) {
            (Some(given), _) if !given.is_empty() => given.to_owned(),
            (_, Some(from_url)) => from_url,
            _ => {
                return Err(invalid(format!(
                    "cannot tell the account name from the endpoint {trimmed:?}: for an IP or \
                     localhost endpoint put it in the path (http://127.0.0.1:10002/devstoreaccount1) \
                     or give AccountName"
                )))
            }
        };
        let base = if style == UrlStyle::Path && segments.is_empty() {
            // An IP endpoint without the account segment: add it, as the emulator expects.
            format!("{}/{account}", trimmed)
        } else {
            trimmed.to_owned()
        };
        let url = Url::parse(&base)
            .map_err(|e| invalid(format!("the endpoint {base:?} is not a URL ({e}); {FORMS}")))?;
        let lower = host.to_ascii_lowercase();
        let cosmos = lower.ends_with(".table.cosmos.azure.com")
            || lower.ends_with(".table.cosmosdb.azure.com");
        Ok(Endpoint {
            url,
            account,
            cosmos,
        })
    }

    /// The URL of a resource: `{base}/{path}?{query}`. `path` and `query` are
    /// already encoded; the result is what parsing that text would give, without
    /// parsing the scheme and host again on every request.
    pub(crate) fn resource_url(&self, path: &str, query: &str) -> Url {
        let mut url = self.url.clone();
        let base_path = self.url.path().trim_end_matches('/');
        let mut full = String::with_capacity(base_path.len() + 1 + path.len());
        full.push_str(base_path);
        full.push('/');
        full.push_str(path);
        url.set_path(&full);
        url.set_query((!query.is_empty()).then_some(query));
        url
    }

    /// The account URL, without a trailing slash.
    pub(crate) fn base(&self) -> &str {
        self.url.as_str().trim_end_matches('/')
    }

    /// The account name (used in signatures).
    pub(crate) fn account(&self) -> &str {
        &self.account
    }

    /// The host, for tracing (`server.address`).
    pub(crate) fn host(&self) -> &str {
        self.url.host_str().unwrap_or_default()
    }

    /// The port, for tracing (`server.port`).
    pub(crate) fn port(&self) -> u16 {
        self.url.port_or_known_default().unwrap_or(443)
    }

    /// `scheme://host:port`, the port always written: where requests go, for error
    /// messages. Never a path, query or credential.
    pub(crate) fn origin(&self) -> String {
        format!("{}://{}:{}", self.url.scheme(), self.host(), self.port())
    }

    /// Whether requests go over HTTPS.
    pub(crate) fn is_https(&self) -> bool {
        self.url.scheme() == "https"
    }

    /// Whether the endpoint looks like the Cosmos DB Table API.
    pub(crate) fn is_cosmos(&self) -> bool {
        self.cosmos
    }

    /// Whether the host is the Table service's own, in any Azure cloud
    /// (`*.table.core.<cloud suffix>`) or the Cosmos DB Table API: not an emulator.
    pub(crate) fn is_service(&self) -> bool {
        self.cosmos || self.host().to_ascii_lowercase().contains(".table.core.")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A resource URL is exactly what parsing its text gives (what gets signed is
    /// what goes on the wire).
    #[test]
    fn resource_urls_equal_parsed_text() {
        for endpoint in [
            "http://127.0.0.1:10002/devstoreaccount1",
            "http://127.0.0.1:10002",
            "https://myaccount.table.core.windows.net",
            "https://myaccount.table.core.windows.net/",
        ] {
            let e =
                Endpoint::parse(endpoint, Some("devstoreaccount1"), HttpPolicy::Allowed).unwrap();
            for (path, query) in [
                ("Tables", ""),
                ("$batch", ""),
                ("t1()", "$filter=PartitionKey%20eq%20'a%27b'&$top=5"),
                (
                    "t1(PartitionKey='o''hara',RowKey='a%20b%25c%C3%A9')",
                    "$select=A,B",
                ),
                (
                    "t1(PartitionKey='%E2%82%AC',RowKey='')",
                    "NextPartitionKey=1!8!U21pdGg-&sv=x&sig=a%2Bb%3D",
                ),
                ("Tables('t1')", ""),
            ] {
                let mut text = format!("{}/{path}", e.base());
                if !query.is_empty() {
                    text.push('?');
                    text.push_str(query);
                }
                let parsed = Url::parse(&text).unwrap();
                assert_eq!(e.resource_url(path, query), parsed, "{text}");
                assert_eq!(e.resource_url(path, query).as_str(), parsed.as_str());
            }
        }
    }

    #[test]
    fn path_style_for_ip_and_localhost() {
        let e = Endpoint::parse(
            "http://127.0.0.1:10002/devstoreaccount1/",
            None,
            HttpPolicy::LoopbackOnly,
        )
        .unwrap();
        assert_eq!(e.base(), "http://127.0.0.1:10002/devstoreaccount1");
        assert_eq!(e.account(), "devstoreaccount1");
        assert_eq!(e.port(), 10002);
        let e = Endpoint::parse(
            "http://localhost:10002",
            Some("acct"),
            HttpPolicy::LoopbackOnly,
        )
        .unwrap();
        assert_eq!(e.base(), "http://localhost:10002/acct");
    }

    #[test]
    fn host_style_takes_the_first_label() {
        let e = Endpoint::parse(
            "https://myacct.table.core.windows.net/",
            None,
            HttpPolicy::LoopbackOnly,
        )
        .unwrap();
        assert_eq!(e.base(), "https://myacct.table.core.windows.net");
        assert_eq!(e.account(), "myacct");
        assert_eq!(e.port(), 443);
        assert!(!e.is_cosmos());
        let cosmos = Endpoint::parse(
            "https://x.table.cosmos.azure.com",
            None,
            HttpPolicy::LoopbackOnly,
        )
        .unwrap();
        assert!(cosmos.is_cosmos());
    }

    #[test]
    fn plain_http_only_to_loopback_unless_allowed() {
        for ok in [
            "http://127.0.0.1:1/a",
            "http://[::1]:1/a",
            "http://localhost:1/a",
        ] {
            assert!(
                Endpoint::parse(ok, None, HttpPolicy::LoopbackOnly).is_ok(),
                "{ok}"
            );
        }
        let err = Endpoint::parse(
            "http://myacct.table.core.windows.net",
            None,
            HttpPolicy::LoopbackOnly,
        )
        .unwrap_err();
        assert_eq!(err.kind(), ErrorKind::InvalidInput);
        assert!(err.message().contains("allow_http"), "{err}");
        assert!(Endpoint::parse(
            "http://myacct.table.core.windows.net",
            None,
            HttpPolicy::Allowed
        )
        .is_ok());
        assert!(
            Endpoint::parse("http://10.0.0.1:10002/a", None, HttpPolicy::LoopbackOnly).is_err()
        );
    }

    #[test]
    fn malformed_endpoints_are_refused() {
        for bad in [
            "not a url",
            "ftp://x.table.core.windows.net",
            "https://x.table.core.windows.net/?sig=abc",
            "http://127.0.0.1:10002/a/b",
            "http://127.0.0.1:10002",
            "https://user:pw@x.table.core.windows.net",
        ] {
            let err = Endpoint::parse(bad, None, HttpPolicy::LoopbackOnly).unwrap_err();
            assert_eq!(err.kind(), ErrorKind::InvalidInput, "{bad}");
            assert!(!err.message().contains("sig=abc"), "{err}");
        }
    }
}
