//! Errors that say what to check: why a connection failed (nothing listening,
//! DNS, TLS, a timeout) and what most likely caused an authentication or
//! authorisation failure (a wrong key, an expired or not-yet-valid SAS, clock skew,
//! a missing permission), from what the client knows: its credential, the
//! operation, the answer's `Date` header and this machine's clock.
//!
//! Nothing here ever quotes a secret: endpoints are written as
//! `scheme://host:port`, SAS tokens by their public fields (`sp`, `st`, `se`, `tn`),
//! and an auth failure's message is scrubbed of anything shaped like a signature or
//! key before it is kept.

use std::error::Error as StdError;
use std::time::{Duration, SystemTime};

use tables_core::{AuthHint, DateTime, Error, ErrorKind};

use super::credential::{Credential, SasToken};
use super::endpoint::Endpoint;
use super::sas::TableSasPermissions;
use tables_core::auth::format_sas_time;

/// The clock difference the service tolerates on signed requests (about 15
/// minutes; docs/protocol.md §2).
pub(crate) const MAX_CLOCK_SKEW: Duration = Duration::from_secs(15 * 60);

/// What a request does, for messages and for telling which permission it needs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Needs {
    /// A table-level operation (create, delete or list tables): no table SAS grants
    /// one.
    TableLevel,
    /// An entity operation on one table, needing these SAS permissions.
    Entities(TableSasPermissions),
    /// A Blob service operation (a container or a blob).
    Blob,
}

impl Needs {
    /// Reading entities: `r`.
    pub(crate) const READ: Needs = Needs::Entities(TableSasPermissions::read_only());
}

/// Why a connection attempt gave no answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Cause {
    /// Nothing accepted the connection.
    Refused,
    /// The host name did not resolve.
    Dns,
    /// The TLS handshake failed (not HTTPS on that port, or an untrusted
    /// certificate).
    Tls,
    /// Something else on the way (a reset, a proxy).
    Other,
}

/// The innermost cause's words (`Connection refused`, `failed to lookup address
/// information: ...`), which say more than the outer layers' ("error sending
/// request").
fn innermost(error: &(dyn StdError + 'static)) -> String {
    let mut layer = error;
    while let Some(next) = layer.source() {
        layer = next;
    }
    layer.to_string()
}

/// Classifies a failed connection by its chain of causes: the operating system's
/// `ConnectionRefused`, the resolver's and the TLS stack's own words.
fn cause_of(error: &(dyn StdError + 'static), https: bool) -> Cause {
    let mut layer: Option<&(dyn StdError + 'static)> = Some(error);
    let mut text = String::new();
    while let Some(current) = layer {
        if let Some(io) = current.downcast_ref::<std::io::Error>() {
            if io.kind() == std::io::ErrorKind::ConnectionRefused {
                return Cause::Refused;
            }
        }
        text.push_str(&current.to_string().to_ascii_lowercase());
        text.push('\n');
        layer = current.source();
    }
    if [
        "dns error",
        "failed to lookup address",
        "name or service not known",
    ]
    .iter()
    .any(|needle| text.contains(needle))
    {
        return Cause::Dns;
    }
    if https
        && [
            "tls",
            "certificate",
            "handshake",
            "corrupt message",
            "invalid peer",
        ]
        .iter()
        .any(|needle| text.contains(needle))
    {
        return Cause::Tls;
    }
    Cause::Other
}

/// The servers an answer's `Server` header tells apart.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ServerKind {
    /// Azurite (`Azurite-Table/3.35.0`).
    Azurite,
    /// This workspace's emulator (`tables-server/0.1.0`).
    TablesServer,
    /// Anything else (the service's `Windows-Azure-Table/1.0 Microsoft-HTTPAPI/2.0`).
    Other,
}

/// The error of an attempt that could not connect (`connected` false) or whose
/// connection broke before the answer was complete. `what` is the request as
/// `METHOD /path`.
pub(crate) fn connection_failure(
    error_chain: &reqwest::Error,
    endpoint: &Endpoint,
    server: Option<ServerKind>,
    what: &str,
    connected: bool,
) -> Error {
    let origin = endpoint.origin();
    let host = endpoint.host();
    let error = innermost(error_chain);
    let message = if connected {
        format!(
            "the connection to {origin} broke during {what} ({error}); the service, a proxy or \
             a load balancer closed it before the whole answer arrived. Check the network \
             between here and {origin}; the request may have reached the service"
        )
    } else {
        match cause_of(error_chain, endpoint.is_https()) {
            Cause::Refused => format!(
                "could not connect to {origin} for {what}: nothing is listening there \
                 (connection refused). Check that the server is running and listening on \
                 that host and port{}, and that the endpoint is right",
                match server {
                    Some(ServerKind::Azurite) =>
                        " (it answered as Azurite before: its --tableHost and --tablePort)",
                    Some(ServerKind::TablesServer) =>
                        " (it answered as tables-server before: its --host and --port)",
                    Some(ServerKind::Other) | None => "",
                }
            ),
            Cause::Dns => format!(
                "could not connect to {origin} for {what}: the host name {host} does not \
                 resolve (DNS: {error}). Check the account name and endpoint suffix in the \
                 endpoint or connection string, and this machine's DNS and network"
            ),
            Cause::Tls => format!(
                "could not connect to {origin} for {what}: the TLS handshake failed ({error}). \
                 Check that the server speaks HTTPS on that port (an emulator usually speaks \
                 plain http) and that its certificate is valid for {host} and trusted here"
            ),
            Cause::Other => format!(
                "could not connect to {origin} for {what} ({error}). Check that the service is \
                 running and reachable there (firewall, proxy), that {host} resolves (DNS), \
                 and for https that its TLS certificate is valid"
            ),
        }
    };
    Error::transport(ErrorKind::Transport, message)
}

/// The error of an attempt that got no answer in time.
pub(crate) fn timed_out(
    endpoint: &Endpoint,
    what: &str,
    timeout: Duration,
    connecting: bool,
) -> Error {
    let origin = endpoint.origin();
    let message = if connecting {
        format!(
            "could not connect to {origin} for {what} within the connect timeout \
             (RemoteEngineBuilder::connect_timeout): check that the host is reachable from \
             here (a firewall or VPN that drops packets) and that the service running there \
             answers on that port (https to a plain-http port also never completes)"
        )
    } else {
        format!(
            "no answer from {origin} to {what} within the request timeout of {timeout:?}: the \
             service may be overloaded or unreachable (a firewall dropping packets), or the \
             timeout too short for the request (RemoteEngineBuilder::request_timeout)"
        )
    };
    Error::transport(ErrorKind::Timeout, message)
}

/// What the client knows about a refused request, to tell why it was refused.
pub(crate) struct Refusal<'a> {
    pub(crate) credential: &'a Credential,
    pub(crate) account: &'a str,
    /// The table the request is about; empty for listing tables.
    pub(crate) table: &'a str,
    pub(crate) needs: Needs,
    /// The operation, for messages (`InsertEntity`).
    pub(crate) operation: &'a str,
    /// The service's error code, if any.
    pub(crate) code: Option<&'a str>,
    /// The answer's `Date` header: the service's clock.
    pub(crate) service_time: Option<SystemTime>,
    /// This machine's clock when the answer came.
    pub(crate) now: SystemTime,
}

/// Adds to an auth failure (`401`/`403`) what most likely caused it and what to
/// check, and scrubs anything shaped like a signature or key from its message.
pub(crate) fn explain_refusal(error: Error, refusal: &Refusal<'_>) -> Error {
    let said = scrub(error.message(), refusal.credential, refusal.account);
    let (hint, advice) = diagnose(refusal);
    let message = format!("{}. {advice}", said.trim_end_matches('.'));
    let error = error.with_message(message);
    match hint {
        Some(hint) => error.with_auth_hint(hint),
        None => error,
    }
}

fn diagnose(r: &Refusal<'_>) -> (Option<AuthHint>, String) {
    let signed = !matches!(r.credential, Credential::Anonymous);
    if let (true, Some(service)) = (signed, r.service_time) {
        let (skew, ahead) = match r.now.duration_since(service) {
            Ok(d) => (d, "ahead of"),
            Err(e) => (e.duration(), "behind"),
        };
        if skew > MAX_CLOCK_SKEW {
            return (
                Some(AuthHint::ClockSkew),
                format!(
                    "This machine's clock ({}) is {} minutes {ahead} the service's ({}), more \
                     than the 15 minutes the service tolerates on signed requests: synchronise \
                     this machine's clock (NTP)",
                    httpdate::fmt_http_date(r.now),
                    skew.as_secs() / 60,
                    httpdate::fmt_http_date(service),
                ),
            );
        }
    }
    let mismatch = r.code == Some("AuthorizationPermissionMismatch");
    match r.credential {
        Credential::Anonymous => (
            Some(AuthHint::NoCredential),
            "No credential was given and the endpoint requires one: use an account key \
             (Credential::SharedKey), a SAS (Credential::Sas) or a token credential"
                .to_owned(),
        ),
        Credential::SharedKey(_) | Credential::SharedKeyLite(_) if mismatch => (
            Some(AuthHint::MissingPermission),
            format!("The account key does not grant {} here", r.operation),
        ),
        Credential::SharedKey(_) | Credential::SharedKeyLite(_) => (
            Some(AuthHint::WrongAccountOrKey),
            format!(
                "The service could not verify the request's signature: check the account name \
                 ({}) and its key (copy the key again from the portal or `az storage account \
                 keys list`; a regenerated key invalidates the old one)",
                r.account
            ),
        ),
        Credential::Bearer(_) if mismatch => (
            Some(AuthHint::MissingPermission),
            format!(
                "The identity behind the token has no data role that allows {}: assign it \
                 Storage {service} Data Contributor (or Reader, for reads) on the account or {scope}",
                r.operation,
                service = if r.needs == Needs::Blob { "Blob" } else { "Table" },
                scope = if r.needs == Needs::Blob { "container" } else { "table" },
            ),
        ),
        Credential::Bearer(_) => (
            None,
            "The service refused the bearer token: check that it is for the storage scope \
             (https://storage.azure.com/.default), for this tenant, and not expired"
                .to_owned(),
        ),
        Credential::Sas(token) => diagnose_sas(r, token, mismatch),
    }
}

fn diagnose_sas(r: &Refusal<'_>, token: &SasToken, mismatch: bool) -> (Option<AuthHint>, String) {
    // The service judges the token's window by its own clock.
    let at = to_datetime(r.service_time.unwrap_or(r.now));
    if let (Some(at), Some(expiry)) = (at, token.expiry()) {
        if at >= expiry {
            return (
                Some(AuthHint::SasExpired),
                format!(
                    "The SAS expired at {} (it is now {}): make a new token \
                     (TableSasBuilder) with a later expiry",
                    format_sas_time(expiry),
                    format_sas_time(at)
                ),
            );
        }
    }
    if let (Some(at), Some(start)) = (at, token.start()) {
        if at < start {
            return (
                Some(AuthHint::SasNotYetValid),
                format!(
                    "The SAS is valid only from {} (it is now {}): wait, or make a token whose \
                     start lies a few minutes in the past to allow for clock skew",
                    format_sas_time(start),
                    format_sas_time(at)
                ),
            );
        }
    }
    if let Some(for_table) = token.table_name() {
        if r.needs == Needs::Blob {
            return (
                Some(AuthHint::MissingPermission),
                format!(
                    "The SAS is a table SAS (for table {for_table:?}), which grants nothing in \
                     the Blob service: use an account SAS that includes the blob service \
                     (ss=b) or a container SAS"
                ),
            );
        }
        if r.needs == Needs::TableLevel {
            return (
                Some(AuthHint::MissingPermission),
                format!(
                    "The SAS is a table SAS (for table {for_table:?}), which grants entity \
                     operations on that table only; {} needs an account key or an account SAS",
                    r.operation
                ),
            );
        }
        if !r.table.is_empty() && !for_table.eq_ignore_ascii_case(r.table) {
            return (
                Some(AuthHint::MissingPermission),
                format!(
                    "The SAS is for table {for_table:?}, not {:?}: use a token made for this \
                     table",
                    r.table
                ),
            );
        }
    }
    if let Needs::Entities(needed) = r.needs {
        let granted = token.permissions().unwrap_or("");
        let missing: String = [
            (needed.read, 'r'),
            (needed.add, 'a'),
            (needed.update, 'u'),
            (needed.delete, 'd'),
        ]
        .iter()
        .filter(|(needs, letter)| *needs && !granted.contains(*letter))
        .map(|(_, letter)| *letter)
        .collect();
        if !missing.is_empty() || mismatch {
            return (
                Some(AuthHint::MissingPermission),
                format!(
                    "The SAS grants {granted:?}, but {} needs {:?}: make a token with those \
                     permissions (TableSasPermissions)",
                    r.operation,
                    needed.as_str().unwrap_or(""),
                ),
            );
        }
    }
    if mismatch {
        return (
            Some(AuthHint::MissingPermission),
            format!("The SAS does not grant {}", r.operation),
        );
    }
    (
        Some(AuthHint::WrongAccountOrKey),
        format!(
            "The service could not verify the SAS: it was signed with another key or for \
             another account than {}, or altered on the way; make a new token with the \
             account's current key",
            r.account
        ),
    )
}

fn to_datetime(time: SystemTime) -> Option<DateTime> {
    let nanos = time.duration_since(SystemTime::UNIX_EPOCH).ok()?.as_nanos();
    DateTime::from_unix_nanos(i128::try_from(nanos).ok()?)
}

/// `text` with every run of 40 or more base64 or base64url characters (a signature
/// is 44, an account key 88, a bearer token's parts longer) and the SAS token's own
/// signature, in any encoding, replaced by `<redacted>`, and a whole echoed
/// `SharedKey account:signature` header too: an auth failure's message may echo
/// what was signed.
fn scrub(text: &str, credential: &Credential, account: &str) -> String {
    let mut out = text.to_owned();
    if let Credential::Sas(token) = credential {
        for form in token.signature_forms() {
            if !form.is_empty() {
                out = out.replace(&form, "<redacted>");
            }
        }
    }
    let is_b64 = |c: char| c.is_ascii_alphanumeric() || matches!(c, '+' | '/' | '=' | '-' | '_');
    let mut scrubbed = String::with_capacity(out.len());
    let mut run = String::new();
    for c in out.chars().chain(std::iter::once('\u{0}')) {
        if is_b64(c) {
            run.push(c);
            continue;
        }
        if run.len() >= 40 {
            scrubbed.push_str("<redacted>");
        } else {
            scrubbed.push_str(&run);
        }
        run.clear();
        if c != '\u{0}' {
            scrubbed.push(c);
        }
    }
    for scheme in ["SharedKeyLite", "SharedKey"] {
        scrubbed = scrubbed.replace(&format!("{scheme} {account}:<redacted>"), "<redacted>");
    }
    scrubbed
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::remote::AccountKey;
    use crate::remote::DEVELOPMENT_ACCOUNT_KEY as DEV_KEY;

    fn refusal<'a>(credential: &'a Credential, needs: Needs, now: SystemTime) -> Refusal<'a> {
        Refusal {
            credential,
            account: "devstoreaccount1",
            table: "orders",
            needs,
            operation: "InsertEntity",
            code: Some("AuthorizationFailure"),
            service_time: Some(now),
            now,
        }
    }

    fn sas(query: &str) -> Credential {
        Credential::Sas(SasToken::parse(query).unwrap())
    }

    fn at(text: &str) -> SystemTime {
        httpdate::parse_http_date(text).unwrap()
    }

    #[test]
    fn each_cause_gets_its_hint() {
        let now = at("Mon, 01 Jan 2024 12:00:00 GMT");
        let key = Credential::SharedKey(AccountKey::new("devstoreaccount1", DEV_KEY).unwrap());
        let insert = Needs::Entities(TableSasPermissions {
            add: true,
            ..TableSasPermissions::default()
        });
        let hint = |r: &Refusal<'_>| diagnose(r).0;

        assert_eq!(
            hint(&refusal(&key, insert, now)),
            Some(AuthHint::WrongAccountOrKey)
        );
        let mut skewed = refusal(&key, insert, now);
        skewed.service_time = Some(now - Duration::from_secs(20 * 60));
        assert_eq!(hint(&skewed), Some(AuthHint::ClockSkew));
        skewed.service_time = Some(now + Duration::from_secs(16 * 60));
        assert_eq!(hint(&skewed), Some(AuthHint::ClockSkew));
        skewed.service_time = Some(now + Duration::from_secs(14 * 60));
        assert_eq!(hint(&skewed), Some(AuthHint::WrongAccountOrKey));

        let expired = sas("sv=2019-02-02&tn=orders&sp=raud&se=2024-01-01T11:00:00Z&sig=x");
        assert_eq!(
            hint(&refusal(&expired, insert, now)),
            Some(AuthHint::SasExpired)
        );
        let early = sas(
            "sv=2019-02-02&tn=orders&sp=raud&st=2024-01-01T13:00:00Z&se=2024-01-02T00:00:00Z&sig=x",
        );
        assert_eq!(
            hint(&refusal(&early, insert, now)),
            Some(AuthHint::SasNotYetValid)
        );
        let read_only = sas("sv=2019-02-02&tn=orders&sp=r&se=2030-01-01T00:00:00Z&sig=x");
        assert_eq!(
            hint(&refusal(&read_only, insert, now)),
            Some(AuthHint::MissingPermission)
        );
        assert_eq!(
            hint(&refusal(&read_only, Needs::READ, now)),
            Some(AuthHint::WrongAccountOrKey)
        );
        assert_eq!(
            hint(&refusal(&read_only, Needs::TableLevel, now)),
            Some(AuthHint::MissingPermission)
        );
        let mut other_table = refusal(&read_only, Needs::READ, now);
        other_table.table = "invoices";
        assert_eq!(hint(&other_table), Some(AuthHint::MissingPermission));
        let mut mismatch = refusal(&key, insert, now);
        mismatch.code = Some("AuthorizationPermissionMismatch");
        assert_eq!(hint(&mismatch), Some(AuthHint::MissingPermission));
        assert_eq!(
            hint(&refusal(&Credential::Anonymous, insert, now)),
            Some(AuthHint::NoCredential)
        );
    }

    #[test]
    fn scrub_removes_signatures_and_keys() {
        let token = sas("sv=2019-02-02&sp=r&sig=c2lnbmF0dXJl%2B%2F%3D");
        let text = format!(
            "The MAC signature found in the HTTP request 'SharedKey devstoreaccount1:xTTIoWBK7u+nSgfft7uKiDmecLL9GEiBUE4qVj03gko=' \
             is not the same; key {DEV_KEY}; sig=c2lnbmF0dXJl%2B%2F%3D or c2lnbmF0dXJl+/= ok"
        );
        let clean = scrub(&text, &token, "devstoreaccount1");
        for secret in [
            "SharedKey devstoreaccount1:",
            "xTTIoWBK7u",
            &DEV_KEY[..20],
            "c2lnbmF0dXJl%2B",
            "c2lnbmF0dXJl+/=",
        ] {
            assert!(!clean.contains(secret), "{clean}");
        }
        assert!(clean.contains("The MAC signature found"), "{clean}");
        assert!(clean.ends_with(" ok"), "{clean}");
    }
}
