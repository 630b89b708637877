//! Proves the Azurite machinery of `scripts/test.sh`: the pinned emulator is
//! installed, started on a loopback port and announced through
//! `TABLES_TEST_AZURITE_URL`, and it answers table-service requests.
//!
//! Without the variable the test is skipped loudly, except under `CI=true`, where
//! Azurite is required and its absence is a failure.

use std::io::{Read, Write};
use std::net::{IpAddr, Ipv4Addr, SocketAddr, TcpStream, ToSocketAddrs};
use std::path::PathBuf;
use std::time::Duration;

use tables_tests::azurite::URL_VAR;
const TIMEOUT: Duration = Duration::from_secs(10);

/// Where Azurite runs: from `http://127.0.0.1:<port>/<account>`.
#[derive(Debug)]
struct Endpoint {
    addr: SocketAddr,
    host_header: String,
    account: String,
}

/// Parses the endpoint URL the test script exports.
fn parse_endpoint(url: &str) -> Result<Endpoint, String> {
    let rest = url.strip_prefix("http://").ok_or_else(|| {
        format!("{URL_VAR}={url:?} must start with http:// (Azurite speaks plain HTTP)")
    })?;
    let (authority, path) = rest.split_once('/').unwrap_or((rest, ""));
    let account = path.trim_end_matches('/');
    if account.is_empty() || account.contains('/') {
        return Err(format!(
            "{URL_VAR}={url:?} must name the account as its only path segment, e.g. http://127.0.0.1:10002/devstoreaccount1"
        ));
    }
    let addr = authority
        .to_socket_addrs()
        .map_err(|e| format!("{URL_VAR}={url:?}: cannot resolve {authority:?}: {e}"))?
        .next()
        .ok_or_else(|| format!("{URL_VAR}={url:?}: {authority:?} resolves to no address"))?;
    Ok(Endpoint {
        addr,
        host_header: authority.to_owned(),
        account: account.to_owned(),
    })
}

/// The endpoint, or `None` (after a loud line on stderr) when the test must skip;
/// a missing Azurite fails under CI ([`tables_tests::azurite::url_or_skip`]).
fn endpoint_or_skip(test: &str) -> Option<Endpoint> {
    let url = tables_tests::azurite::url_or_skip(test)?;
    match parse_endpoint(&url) {
        Ok(endpoint) => Some(endpoint),
        Err(why) => panic!("{why}"),
    }
}

/// Reads the repository file `path` (relative to the workspace root).
fn repo_file(path: &str) -> String {
    let full = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("..")
        .join(path);
    std::fs::read_to_string(&full).unwrap_or_else(|e| panic!("cannot read {}: {e}", full.display()))
}

/// The text of the first JSON string value after the `anchors`, found one after the
/// other in `json`.
fn string_after(json: &str, anchors: &[&str]) -> Option<String> {
    let mut rest = json;
    for anchor in anchors {
        rest = &rest[rest.find(anchor)? + anchor.len()..];
    }
    let open = rest.find('"')? + 1;
    let len = rest[open..].find('"')?;
    Some(rest[open..open + len].to_owned())
}

/// The Azurite version `tools/azurite/package.json` pins.
fn pinned_version() -> String {
    let manifest = repo_file("tools/azurite/package.json");
    string_after(&manifest, &["\"dependencies\"", "\"azurite\":"])
        .expect("tools/azurite/package.json must list azurite under dependencies")
}

/// One parsed HTTP response head.
#[derive(Debug)]
struct ResponseHead {
    status: u16,
    headers: Vec<(String, String)>,
}

impl ResponseHead {
    fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }
}

/// Sends one bodiless request and returns the response head.
fn request(endpoint: &Endpoint, method: &str, path: &str) -> ResponseHead {
    let mut stream = TcpStream::connect_timeout(&endpoint.addr, TIMEOUT)
        .unwrap_or_else(|e| panic!("cannot connect to Azurite at {}: {e}", endpoint.addr));
    stream
        .set_read_timeout(Some(TIMEOUT))
        .expect("read timeout");
    stream
        .set_write_timeout(Some(TIMEOUT))
        .expect("write timeout");
    let head = format!(
        "{method} {path} HTTP/1.1\r\n\
         Host: {host}\r\n\
         x-ms-version: 2019-02-02\r\n\
         Accept: application/json;odata=minimalmetadata\r\n\
         DataServiceVersion: 3.0;NetFx\r\n\
         Connection: close\r\n\r\n",
        host = endpoint.host_header
    );
    stream.write_all(head.as_bytes()).expect("send request");
    let mut raw = Vec::new();
    stream
        .read_to_end(&mut raw)
        .expect("read response (Azurite closes the connection after it)");
    let text = String::from_utf8_lossy(&raw);
    let head = text
        .split("\r\n\r\n")
        .next()
        .expect("split yields at least one part");
    let mut lines = head.split("\r\n");
    let status_line = lines.next().unwrap_or_default();
    let status = status_line
        .strip_prefix("HTTP/1.")
        .and_then(|s| s.get(2..5))
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| panic!("not an HTTP/1.x status line: {status_line:?}"));
    let headers = lines
        .filter_map(|line| line.split_once(':'))
        .map(|(n, v)| (n.trim().to_owned(), v.trim().to_owned()))
        .collect();
    ResponseHead { status, headers }
}

#[test]
fn azurite_pin_in_package_json_matches_the_lockfile() {
    let pinned = pinned_version();
    assert!(
        pinned.split('.').count() == 3 && pinned.split('.').all(|p| p.parse::<u32>().is_ok()),
        "tools/azurite/package.json must pin an exact version, got {pinned:?}"
    );
    let lock = repo_file("tools/azurite/package-lock.json");
    let locked = string_after(&lock, &["\"node_modules/azurite\":", "\"version\":"])
        .expect("package-lock.json must lock node_modules/azurite; regenerate it with `npm install --package-lock-only` in tools/azurite");
    assert_eq!(
        locked, pinned,
        "package-lock.json locks a different Azurite than package.json pins"
    );
}

#[test]
fn azurite_answers_table_requests_on_loopback() {
    let Some(endpoint) = endpoint_or_skip("azurite_answers_table_requests_on_loopback") else {
        return;
    };
    assert_eq!(
        endpoint.addr.ip(),
        IpAddr::V4(Ipv4Addr::LOCALHOST),
        "Azurite must listen on 127.0.0.1 only, {URL_VAR} points at {}",
        endpoint.addr
    );

    let response = request(&endpoint, "GET", &format!("/{}/Tables", endpoint.account));

    // The emulator identifies itself, in the pinned version.
    let server = response.header("Server").unwrap_or_default();
    assert_eq!(
        server,
        format!("Azurite-Table/{}", pinned_version()),
        "the server at {} is not the pinned Azurite table service: {response:?}",
        endpoint.addr
    );
    // An unsigned request reaches the table service and is refused by its
    // authentication, as the real service does: the endpoint speaks the protocol.
    assert_eq!(response.status, 403, "{response:?}");
    assert_eq!(
        response.header("x-ms-error-code"),
        Some("AuthorizationFailure"),
        "{response:?}"
    );
    assert!(response.header("x-ms-request-id").is_some(), "{response:?}");
}

#[test]
fn endpoint_urls_are_checked() {
    let ok = parse_endpoint("http://127.0.0.1:10002/devstoreaccount1/").expect("valid URL");
    assert_eq!(ok.account, "devstoreaccount1");
    assert_eq!(ok.addr, SocketAddr::from(([127, 0, 0, 1], 10002)));
    for bad in [
        "https://127.0.0.1:10002/devstoreaccount1",
        "http://127.0.0.1:10002",
        "http://127.0.0.1:10002/a/b",
        "http://127.0.0.1/devstoreaccount1",
    ] {
        assert!(parse_endpoint(bad).is_err(), "{bad}");
    }
}
