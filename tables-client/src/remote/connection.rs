//! Storage connection strings: [`ConnectionString`].

use std::fmt::Write as _;
use std::str::FromStr;

use reqwest::Url;
use tables_core::{Error, ErrorKind, Result};

use super::credential::{AccountKey, Credential, SasToken};

pub use tables_core::auth::{DEVELOPMENT_ACCOUNT, DEVELOPMENT_ACCOUNT_KEY};
pub(crate) use DEVELOPMENT_ACCOUNT as DEV_ACCOUNT;
pub(crate) use DEVELOPMENT_ACCOUNT_KEY as DEV_ACCOUNT_KEY;
/// The development storage table endpoint.
const DEV_TABLE_ENDPOINT: &str = "http://127.0.0.1:10002/devstoreaccount1";
/// The development storage blob endpoint.
const DEV_BLOB_ENDPOINT: &str = "http://127.0.0.1:10000/devstoreaccount1";
/// The development storage table port, also behind a proxy URI that names none.
const DEV_TABLE_PORT: u16 = 10002;
/// The development storage blob port, also behind a proxy URI.
const DEV_BLOB_PORT: u16 = 10000;

const FORMS: &str = "expected UseDevelopmentStorage=true, or AccountName=..;AccountKey=.. \
    (with DefaultEndpointsProtocol/EndpointSuffix or TableEndpoint), or \
    TableEndpoint=..;SharedAccessSignature=..";

const USE_DEVELOPMENT_STORAGE: &str = "UseDevelopmentStorage";
const DEVELOPMENT_STORAGE_PROXY_URI: &str = "DevelopmentStorageProxyUri";
const DEFAULT_ENDPOINTS_PROTOCOL: &str = "DefaultEndpointsProtocol";
const ACCOUNT_NAME: &str = "AccountName";
const ACCOUNT_KEY: &str = "AccountKey";
const ENDPOINT_SUFFIX: &str = "EndpointSuffix";
const TABLE_ENDPOINT: &str = "TableEndpoint";
const BLOB_ENDPOINT: &str = "BlobEndpoint";
const SHARED_ACCESS_SIGNATURE: &str = "SharedAccessSignature";

/// The keys this parser reads (matched case-insensitively).
const KNOWN: [&str; 9] = [
    USE_DEVELOPMENT_STORAGE,
    DEVELOPMENT_STORAGE_PROXY_URI,
    DEFAULT_ENDPOINTS_PROTOCOL,
    ACCOUNT_NAME,
    ACCOUNT_KEY,
    ENDPOINT_SUFFIX,
    TABLE_ENDPOINT,
    BLOB_ENDPOINT,
    SHARED_ACCESS_SIGNATURE,
];

/// Keys of other storage services, found in full account connection strings; the
/// Table client has no use for them.
const OTHER_SERVICES: [&str; 6] = [
    "QueueEndpoint",
    "FileEndpoint",
    "BlobSecondaryEndpoint",
    "QueueSecondaryEndpoint",
    "FileSecondaryEndpoint",
    "TableSecondaryEndpoint",
];

fn invalid(what: impl std::fmt::Display) -> Error {
    Error::local(
        ErrorKind::InvalidInput,
        format!("invalid connection string: {what}; {FORMS}"),
    )
}

/// A parsed storage connection string: the table endpoint, the account name and the
/// credential.
///
/// Accepted forms (`;`-separated `Key=Value` pairs; keys case-insensitive; a value is
/// everything after the first `=`; empty segments ignored):
///
/// - `UseDevelopmentStorage=true`: the emulator's account `devstoreaccount1` at
///   `http://127.0.0.1:10002/devstoreaccount1` with its well-known key, or at
///   `{scheme}://{host}:{port}/devstoreaccount1` with
///   `DevelopmentStorageProxyUri={scheme}://{host}[:{port}]` (port 10002 when the URI
///   names none).
/// - `AccountName=..;AccountKey=..`, with `DefaultEndpointsProtocol` (default `https`)
///   and `EndpointSuffix` (default `core.windows.net`) making
///   `{protocol}://{account}.table.{suffix}`, or with `TableEndpoint=..` instead
///   (trailing `/` dropped). SharedKey authorization.
/// - `TableEndpoint=..;SharedAccessSignature=..` (or `AccountName` instead of
///   `TableEndpoint`): a SAS token.
/// - An endpoint (`TableEndpoint`, or `AccountName`) alone is refused: requests
///   would go out with no credential, which only a table open to anonymous access
///   answers, so a forgotten key would show only later, as a refusal from the
///   service. For anonymous access on purpose, build the engine from the endpoint
///   ([`RemoteEngine::builder`](crate::remote::RemoteEngine::builder), anonymous
///   unless given a credential).
///
/// The blob endpoint, for the blob companion
/// ([`RemoteBlobStore`](crate::remote::RemoteBlobStore)), is `BlobEndpoint` when
/// given, else `{protocol}://{account}.blob.{suffix}` for an account, else
/// `http://127.0.0.1:10000/devstoreaccount1` for the development storage (port 10000
/// on the proxy's host with `DevelopmentStorageProxyUri`).
/// `QueueEndpoint`, `FileEndpoint` and the secondaries are ignored.
/// `Debug` never shows the key or the SAS signature.
///
/// ```
/// use tables_client::remote::{ConnectionString, Credential};
///
/// let dev = ConnectionString::parse("UseDevelopmentStorage=true")?;
/// assert_eq!(dev.endpoint(), "http://127.0.0.1:10002/devstoreaccount1");
/// assert_eq!(dev.account_name(), Some("devstoreaccount1"));
/// assert!(dev.is_development_storage());
///
/// let azure = ConnectionString::parse(
///     "DefaultEndpointsProtocol=https;AccountName=myaccount;AccountKey=c2VjcmV0LWtleQ==;\
///      EndpointSuffix=core.windows.net",
/// )?;
/// assert_eq!(azure.endpoint(), "https://myaccount.table.core.windows.net");
/// assert!(matches!(azure.credential(), Credential::SharedKey(_)));
/// assert!(!format!("{azure:?}").contains("c2VjcmV0LWtleQ"));
///
/// let sas = ConnectionString::parse(
///     "TableEndpoint=https://myaccount.table.core.windows.net/;\
///      SharedAccessSignature=sv=2019-02-02&tn=orders&sp=r&sig=c2ln%3D",
/// )?;
/// assert!(matches!(sas.credential(), Credential::Sas(_)));
/// # Ok::<(), tables_client::Error>(())
/// ```
#[derive(Debug, Clone)]
pub struct ConnectionString {
    endpoint: String,
    blob_endpoint: Option<String>,
    account: Option<String>,
    credential: Credential,
    development: bool,
}

/// The pairs of a connection string, under their canonical key names.
struct Fields<'a> {
    pairs: Vec<(&'static str, &'a str)>,
}

impl<'a> Fields<'a> {
    fn parse(text: &'a str) -> Result<Fields<'a>> {
        let mut pairs: Vec<(&'static str, &'a str)> = Vec::new();
        for (index, segment) in text.split(';').enumerate() {
            let segment = segment.trim();
            if segment.is_empty() {
                continue;
            }
            let Some((name, value)) = segment.split_once('=') else {
                // The segment may be a stray piece of a key: never shown.
                return Err(invalid(format_args!(
                    "segment {} is not Key=Value",
                    index + 1
                )));
            };
            let (name, value) = (name.trim(), value.trim());
            let Some(canonical) = KNOWN.iter().find(|k| k.eq_ignore_ascii_case(name)) else {
                if OTHER_SERVICES.iter().any(|k| k.eq_ignore_ascii_case(name)) {
                    continue;
                }
                return Err(invalid(format_args!(
                    "unknown key {} (known keys: {}, {})",
                    describe_name(name),
                    KNOWN.join(", "),
                    OTHER_SERVICES.join(", ")
                )));
            };
            if pairs.iter().any(|(k, _)| k == canonical) {
                return Err(invalid(format_args!("{canonical} appears more than once")));
            }
            if value.is_empty() {
                return Err(invalid(format_args!("{canonical} has an empty value")));
            }
            pairs.push((canonical, value));
        }
        Ok(Fields { pairs })
    }

    fn get(&self, key: &str) -> Option<&'a str> {
        self.pairs.iter().find(|(k, _)| *k == key).map(|(_, v)| *v)
    }
}

/// An unknown key's name, quoted only if it looks like a key name: a name that is
/// long or holds symbols may be part of a secret split off by a stray `;`.
fn describe_name(name: &str) -> String {
    if !name.is_empty() && name.len() <= 32 && name.chars().all(|c| c.is_ascii_alphanumeric()) {
        format!("{name:?}")
    } else {
        "(a name that is not a key name, not shown)".to_owned()
    }
}

impl ConnectionString {
    /// Parses a connection string (see the type's documentation for the forms).
    ///
    /// # Errors
    ///
    /// [`ErrorKind::InvalidInput`] for an empty string, a segment that is not
    /// `Key=Value`, an unknown or repeated key, an empty value,
    /// `UseDevelopmentStorage` other than `true` or combined with account keys, an
    /// `AccountKey` without `AccountName` or one that is not base64, both
    /// `AccountKey` and `SharedAccessSignature`, a malformed SAS, a protocol other
    /// than `http`/`https`, an endpoint that is not an http(s) URL or carries a query,
    /// or no endpoint at all. Messages name the key at fault and list the accepted
    /// forms; they never repeat an `AccountKey` or `SharedAccessSignature` value.
    pub fn parse(text: &str) -> Result<ConnectionString> {
        let fields = Fields::parse(text)?;
        if fields.pairs.is_empty() {
            return Err(invalid("it is empty"));
        }
        if let Some(value) = fields.get(USE_DEVELOPMENT_STORAGE) {
            return ConnectionString::development(&fields, value);
        }
        if fields.get(DEVELOPMENT_STORAGE_PROXY_URI).is_some() {
            return Err(invalid(
                "DevelopmentStorageProxyUri needs UseDevelopmentStorage=true",
            ));
        }
        let account = fields.get(ACCOUNT_NAME);
        let credential = match (fields.get(ACCOUNT_KEY), fields.get(SHARED_ACCESS_SIGNATURE)) {
            (Some(_), Some(_)) => {
                return Err(invalid(
                    "both AccountKey and SharedAccessSignature are given; give one credential",
                ))
            }
            (Some(key), None) => {
                let Some(account) = account else {
                    return Err(invalid("AccountKey is given without AccountName"));
                };
                let key = AccountKey::new(account, key)
                    .map_err(|e| invalid(format_args!("AccountKey: {}", e.message())))?;
                Credential::SharedKey(key)
            }
            (None, Some(sas)) => {
                let token = SasToken::parse(sas)
                    .map_err(|e| invalid(format_args!("SharedAccessSignature: {}", e.message())))?;
                Credential::Sas(token)
            }
            // Refused below, once the endpoint is known to be well formed.
            (None, None) => Credential::Anonymous,
        };
        let blob_endpoint = match (fields.get(BLOB_ENDPOINT), account) {
            (Some(endpoint), _) => Some(check_url(BLOB_ENDPOINT, endpoint)?),
            (None, Some(account)) => Some(computed_endpoint(&fields, account, "blob")?),
            (None, None) => None,
        };
        let endpoint = match (fields.get(TABLE_ENDPOINT), account) {
            (Some(endpoint), _) => check_url(TABLE_ENDPOINT, endpoint)?,
            (None, Some(account)) => computed_endpoint(&fields, account, "table")?,
            (None, None) => {
                return Err(invalid(
                    "no endpoint: give TableEndpoint, or AccountName to use the Azure endpoint",
                ))
            }
        };
        if matches!(credential, Credential::Anonymous) {
            return Err(invalid(
                "it names no credential (neither AccountKey nor SharedAccessSignature), so \
                 requests would be sent anonymously, which only a table open to anonymous access \
                 answers; add AccountKey=.. (with AccountName) or SharedAccessSignature=.., or for \
                 anonymous access on purpose build the engine from the endpoint with \
                 RemoteEngine::builder(..)",
            ));
        }
        Ok(ConnectionString {
            endpoint,
            blob_endpoint,
            account: account.map(str::to_owned),
            credential,
            development: false,
        })
    }

    fn development(fields: &Fields<'_>, value: &str) -> Result<ConnectionString> {
        if !value.eq_ignore_ascii_case("true") {
            return Err(invalid(
                "UseDevelopmentStorage accepts only true; leave it out to name an account",
            ));
        }
        if let Some((other, _)) = fields
            .pairs
            .iter()
            .find(|(k, _)| *k != USE_DEVELOPMENT_STORAGE && *k != DEVELOPMENT_STORAGE_PROXY_URI)
        {
            return Err(invalid(format_args!(
                "UseDevelopmentStorage=true cannot be combined with {other} (only with \
                 DevelopmentStorageProxyUri); for another emulator account use \
                 AccountName=..;AccountKey=..;TableEndpoint=.."
            )));
        }
        let (endpoint, blob_endpoint) = match fields.get(DEVELOPMENT_STORAGE_PROXY_URI) {
            None => (DEV_TABLE_ENDPOINT.to_owned(), DEV_BLOB_ENDPOINT.to_owned()),
            Some(proxy) => {
                check_url(DEVELOPMENT_STORAGE_PROXY_URI, proxy)?;
                let url = Url::parse(proxy).map_err(|_| {
                    invalid("DevelopmentStorageProxyUri is not an http or https URL")
                })?;
                let host = url.host_str().unwrap_or_default();
                if !matches!(url.path(), "" | "/") {
                    return Err(invalid(format_args!(
                        "DevelopmentStorageProxyUri names a host and port, not a path ({}); for an \
                         emulator account URL write AccountName={DEV_ACCOUNT};AccountKey=<the \
                         development key>;TableEndpoint={proxy}",
                        url.path()
                    )));
                }
                let port = url.port().unwrap_or(DEV_TABLE_PORT);
                (
                    format!("{}://{host}:{port}/{DEV_ACCOUNT}", url.scheme()),
                    format!("{}://{host}:{DEV_BLOB_PORT}/{DEV_ACCOUNT}", url.scheme()),
                )
            }
        };
        let key = AccountKey::new(DEV_ACCOUNT, DEV_ACCOUNT_KEY)?;
        Ok(ConnectionString {
            endpoint,
            blob_endpoint: Some(blob_endpoint),
            account: Some(DEV_ACCOUNT.to_owned()),
            credential: Credential::SharedKey(key),
            development: true,
        })
    }

    /// The table endpoint: the account URL without a trailing `/`, such as
    /// `https://myaccount.table.core.windows.net` or
    /// `http://127.0.0.1:10002/devstoreaccount1`.
    pub fn endpoint(&self) -> &str {
        &self.endpoint
    }

    /// The blob endpoint, if the connection string gives or implies one (see the
    /// type's documentation), such as `https://myaccount.blob.core.windows.net`.
    pub fn blob_endpoint(&self) -> Option<&str> {
        self.blob_endpoint.as_deref()
    }

    /// The account name, if the connection string gives it (`AccountName`, or the
    /// development account). Without it, the account is read from the endpoint URL.
    pub fn account_name(&self) -> Option<&str> {
        self.account.as_deref()
    }

    /// The credential: [`Credential::SharedKey`] for an account key,
    /// [`Credential::Sas`] for a SAS, [`Credential::Anonymous`] for neither.
    pub fn credential(&self) -> &Credential {
        &self.credential
    }

    /// Whether this is `UseDevelopmentStorage=true` (the local emulator, which speaks
    /// plain HTTP).
    pub fn is_development_storage(&self) -> bool {
        self.development
    }
}

impl FromStr for ConnectionString {
    type Err = Error;

    /// As [`ConnectionString::parse`].
    fn from_str(text: &str) -> Result<ConnectionString> {
        ConnectionString::parse(text)
    }
}

/// `{protocol}://{account}.{service}.{suffix}`.
fn computed_endpoint(fields: &Fields<'_>, account: &str, service: &str) -> Result<String> {
    let protocol = fields.get(DEFAULT_ENDPOINTS_PROTOCOL).unwrap_or("https");
    let protocol = if protocol.eq_ignore_ascii_case("https") {
        "https"
    } else if protocol.eq_ignore_ascii_case("http") {
        "http"
    } else {
        return Err(invalid(format_args!(
            "DefaultEndpointsProtocol is {protocol:?}; use http or https"
        )));
    };
    if !account
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || c == '-')
    {
        return Err(invalid(format_args!(
            "AccountName {account:?} cannot be part of a host name; give TableEndpoint \
             for a custom endpoint"
        )));
    }
    let suffix = fields
        .get(ENDPOINT_SUFFIX)
        .unwrap_or("core.windows.net")
        .trim_matches('.');
    if suffix.is_empty() || suffix.contains(['/', ':', '?', '#', '@']) {
        return Err(invalid(format_args!(
            "EndpointSuffix {suffix:?} is not a DNS suffix such as core.windows.net"
        )));
    }
    let mut endpoint = String::with_capacity(protocol.len() + account.len() + suffix.len() + 10);
    // Writing to a String cannot fail.
    let _ = write!(endpoint, "{protocol}://{account}.{service}.{suffix}");
    check_url(ENDPOINT_SUFFIX, &endpoint)
}

/// Checks that `value` (the value of `key`) is an http(s) URL with a host and no
/// query, fragment or user information; returns it without trailing `/`.
fn check_url(key: &str, value: &str) -> Result<String> {
    // A value with `?`, `@` or `#` may carry a signature or a password: never shown.
    let shown = if value.contains(['?', '@', '#']) {
        String::new()
    } else {
        format!(" {value:?}")
    };
    let url =
        Url::parse(value).map_err(|e| invalid(format_args!("{key}{shown} is not a URL ({e})")))?;
    if !matches!(url.scheme(), "http" | "https") || url.host_str().is_none() {
        return Err(invalid(format_args!(
            "{key}{shown} is not an http or https URL with a host"
        )));
    }
    if url.query().is_some() || url.fragment().is_some() {
        return Err(invalid(format_args!(
            "{key} carries a query string or fragment; put a SAS token in \
             SharedAccessSignature=, not in the URL"
        )));
    }
    if !url.username().is_empty() || url.password().is_some() {
        return Err(invalid(format_args!(
            "{key} carries user information; give credentials as AccountKey or \
             SharedAccessSignature"
        )));
    }
    Ok(value.trim_end_matches('/').to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    const KEY: &str = "c2VjcmV0LWtleS1ieXRlcy10aGF0LW11c3Qtbm90LWxlYWs=";
    const SIG: &str = "U0VDUkVUU0lHTkFUVVJF%2B%2F%3D";

    fn parse(text: &str) -> ConnectionString {
        ConnectionString::parse(text).unwrap()
    }

    fn shared_key_account(c: &ConnectionString) -> &str {
        match c.credential() {
            Credential::SharedKey(key) => key.account(),
            other => panic!("not a shared key: {other:?}"),
        }
    }

    #[test]
    fn development_storage() {
        for text in [
            "UseDevelopmentStorage=true",
            "usedevelopmentstorage=TRUE;",
            " ; UseDevelopmentStorage = true ;;",
        ] {
            let c = parse(text);
            assert_eq!(c.endpoint(), "http://127.0.0.1:10002/devstoreaccount1");
            assert_eq!(c.account_name(), Some("devstoreaccount1"));
            assert!(c.is_development_storage());
            assert_eq!(shared_key_account(&c), "devstoreaccount1");
        }
        // The proxy's port is honoured (an Azurite on another port); without one, the
        // emulator's table port.
        let c = parse("UseDevelopmentStorage=true;DevelopmentStorageProxyUri=http://myproxy:8080/");
        assert_eq!(c.endpoint(), "http://myproxy:8080/devstoreaccount1");
        assert!(c.is_development_storage());
        let c = parse("UseDevelopmentStorage=true;DevelopmentStorageProxyUri=http://127.0.0.1");
        assert_eq!(c.endpoint(), "http://127.0.0.1:10002/devstoreaccount1");
        let err = ConnectionString::parse(
            "UseDevelopmentStorage=true;DevelopmentStorageProxyUri=http://127.0.0.1:10902/devstoreaccount1",
        )
        .unwrap_err();
        assert_eq!(err.kind(), ErrorKind::InvalidInput);
        assert!(
            err.message()
                .contains("TableEndpoint=http://127.0.0.1:10902/devstoreaccount1"),
            "{err}"
        );
    }

    #[test]
    fn account_key_forms() {
        let c = parse(&format!(
            "DefaultEndpointsProtocol=https;AccountName=myacct;AccountKey={KEY};EndpointSuffix=core.windows.net"
        ));
        assert_eq!(c.endpoint(), "https://myacct.table.core.windows.net");
        assert_eq!(c.account_name(), Some("myacct"));
        assert_eq!(shared_key_account(&c), "myacct");
        assert!(!c.is_development_storage());

        let c = parse(&format!("accountname=myacct;ACCOUNTKEY={KEY}"));
        assert_eq!(c.endpoint(), "https://myacct.table.core.windows.net");

        let c = parse(&format!(
            "DefaultEndpointsProtocol=HTTP;AccountName=myacct;AccountKey={KEY};EndpointSuffix=core.chinacloudapi.cn"
        ));
        assert_eq!(c.endpoint(), "http://myacct.table.core.chinacloudapi.cn");

        // Azurite's documented full form, with the other services' endpoints.
        let c = parse(&format!(
            "DefaultEndpointsProtocol=http;AccountName=devstoreaccount1;AccountKey={DEV_ACCOUNT_KEY};\
             BlobEndpoint=http://127.0.0.1:10000/devstoreaccount1;\
             QueueEndpoint=http://127.0.0.1:10001/devstoreaccount1;\
             TableEndpoint=http://127.0.0.1:10002/devstoreaccount1/;"
        ));
        assert_eq!(c.endpoint(), "http://127.0.0.1:10002/devstoreaccount1");
        assert_eq!(c.account_name(), Some("devstoreaccount1"));
        assert!(!c.is_development_storage());
        assert_eq!(
            c.blob_endpoint(),
            Some("http://127.0.0.1:10000/devstoreaccount1")
        );
    }

    #[test]
    fn blob_endpoints() {
        let c = parse(&format!(
            "DefaultEndpointsProtocol=https;AccountName=myacct;AccountKey={KEY};EndpointSuffix=core.chinacloudapi.cn"
        ));
        assert_eq!(
            c.blob_endpoint(),
            Some("https://myacct.blob.core.chinacloudapi.cn")
        );
        let c = parse("UseDevelopmentStorage=true");
        assert_eq!(
            c.blob_endpoint(),
            Some("http://127.0.0.1:10000/devstoreaccount1")
        );
        let c = parse("UseDevelopmentStorage=true;DevelopmentStorageProxyUri=http://myproxy:8080");
        assert_eq!(
            c.blob_endpoint(),
            Some("http://myproxy:10000/devstoreaccount1")
        );
        // A table SAS names no blob endpoint.
        let c = parse("TableEndpoint=https://a.table.core.windows.net;SharedAccessSignature=sv=2019-02-02&sig=c2ln");
        assert_eq!(c.blob_endpoint(), None);
        let c = parse(
            "TableEndpoint=https://a.table.core.windows.net;BlobEndpoint=https://b.example/;\
             SharedAccessSignature=sv=2019-02-02&sig=c2ln",
        );
        assert_eq!(c.blob_endpoint(), Some("https://b.example"));
        let err = ConnectionString::parse(
            "TableEndpoint=https://a.table.core.windows.net;BlobEndpoint=https://b.example/?sig=x",
        )
        .unwrap_err();
        assert!(err.message().contains("BlobEndpoint"), "{err}");
        assert!(!err.message().contains("sig=x"), "{err}");
    }

    #[test]
    fn sas_forms_and_no_credential() {
        let c = parse(&format!(
            "TableEndpoint=https://myacct.table.core.windows.net/;SharedAccessSignature=?sv=2019-02-02&tn=t1&sp=r&sig={SIG}"
        ));
        assert_eq!(c.endpoint(), "https://myacct.table.core.windows.net");
        assert_eq!(c.account_name(), None);
        let Credential::Sas(token) = c.credential() else {
            panic!("not a SAS: {c:?}");
        };
        assert_eq!(token.table_name(), Some("t1"));

        let c = parse(&format!(
            "AccountName=myacct;SharedAccessSignature=sp=r&sig={SIG}"
        ));
        assert_eq!(c.endpoint(), "https://myacct.table.core.windows.net");
        assert!(matches!(c.credential(), Credential::Sas(_)));

        // No credential at all: refused, saying how to be anonymous on purpose.
        for text in [
            "TableEndpoint=http://localhost:10002/acct",
            "AccountName=myacct",
        ] {
            let err = ConnectionString::parse(text).unwrap_err();
            assert_eq!(err.kind(), ErrorKind::InvalidInput, "{text}");
            let message = err.to_string();
            assert!(message.contains("names no credential"), "{message}");
            assert!(message.contains("RemoteEngine::builder"), "{message}");
        }
    }

    #[test]
    fn debug_never_shows_secrets() {
        let forms = [
            "UseDevelopmentStorage=true".to_owned(),
            format!("AccountName=myacct;AccountKey={KEY}"),
            format!("TableEndpoint=https://a.table.core.windows.net;SharedAccessSignature=sv=1&sig={SIG}"),
        ];
        for text in forms {
            let c = parse(&text);
            for shown in [format!("{c:?}"), format!("{c:#?}")] {
                assert!(!shown.contains("c2VjcmV0LWtle"), "{shown}");
                assert!(!shown.contains("U0VDUkVU"), "{shown}");
                assert!(!shown.contains("Eby8vdM02"), "{shown}");
            }
        }
    }

    #[test]
    fn errors_name_the_problem_never_the_secret() {
        let cases = [
            String::new(),
            " ; ;".to_owned(),
            format!("AccountName=a;{KEY}"),
            format!("AccountName=a;AccountKey={KEY};AccountKey={KEY}"),
            format!("AccountName=a;AccountKey;{KEY}"),
            format!("AccountName=a;AcountKey={KEY}"),
            "AccountName=a;AccountKey=".to_owned(),
            format!("AccountKey={KEY}"),
            "AccountName=a;AccountKey=U0VDUkVU!!not-base64".to_owned(),
            format!("AccountName=a;AccountKey={KEY};SharedAccessSignature=sig={SIG}"),
            "TableEndpoint=https://a.b;SharedAccessSignature=sv=1&sp=r".to_owned(),
            format!("TableEndpoint=https://a.b;SharedAccessSignature=sig={SIG}&sig={SIG}"),
            format!("TableEndpoint=https://a.b?sig={SIG}"),
            format!("TableEndpoint=https://user:{KEY}@a.b"),
            "TableEndpoint=not a url".to_owned(),
            "TableEndpoint=ftp://a.b".to_owned(),
            format!("SharedAccessSignature=sig={SIG}"),
            format!("DefaultEndpointsProtocol=ftp;AccountName=a;AccountKey={KEY}"),
            format!("AccountName=a;AccountKey={KEY};EndpointSuffix=https://x"),
            format!("AccountName=a b;AccountKey={KEY}"),
            "UseDevelopmentStorage=false".to_owned(),
            format!("UseDevelopmentStorage=true;AccountKey={KEY}"),
            "UseDevelopmentStorage=true;TableEndpoint=http://10.0.0.1:10002/x".to_owned(),
            "UseDevelopmentStorage=true;DevelopmentStorageProxyUri=nope".to_owned(),
            "DevelopmentStorageProxyUri=http://proxy".to_owned(),
            format!("{KEY}=x"),
        ];
        for text in &cases {
            let err = ConnectionString::parse(text).expect_err(text);
            assert_eq!(err.kind(), ErrorKind::InvalidInput, "{text}");
            let shown = format!("{err} {err:?}");
            assert!(shown.contains(FORMS), "{shown}");
            assert!(!shown.contains("c2VjcmV0LWtle"), "{shown}");
            assert!(!shown.contains("U0VDUkVU"), "{shown}");
        }
    }

    #[test]
    fn errors_name_the_key_at_fault() {
        let err = ConnectionString::parse("AccountName=a;Foo=1").unwrap_err();
        assert!(err.message().contains("\"Foo\""), "{err}");
        let err = ConnectionString::parse("AccountName=a;accountname=b").unwrap_err();
        assert!(
            err.message().contains("AccountName appears more than once"),
            "{err}"
        );
        let err = ConnectionString::parse(&format!("AccountKey={KEY}")).unwrap_err();
        assert!(err.message().contains("without AccountName"), "{err}");
    }

    #[test]
    fn from_str_matches_parse() {
        let c: ConnectionString = "UseDevelopmentStorage=true".parse().unwrap();
        assert!(c.is_development_storage());
        assert!("".parse::<ConnectionString>().is_err());
    }
}
