//! Credentials: account keys, SAS tokens and bearer tokens.
//!
//! Every type here keeps its secret out of `Debug` output and error messages: an
//! [`AccountKey`] prints as `AccountKey { account: "x", key: "<redacted>" }`, a
//! [`SasToken`] prints every parameter but `sig`, an [`AccessToken`] hides its token.

use std::fmt;
use std::sync::Arc;
use std::time::SystemTime;

use percent_encoding::{percent_decode_str, utf8_percent_encode, AsciiSet, NON_ALPHANUMERIC};
pub use tables_core::auth::AccountKey;
use tables_core::{DateTime, Error, ErrorKind, Result};

use super::sas_time::parse_sas_time;

const REDACTED: &str = "<redacted>";

/// What a SAS query value may leave unencoded: ALPHA / DIGIT / `-._~`.
pub(crate) const QUERY_VALUE: &AsciiSet = &NON_ALPHANUMERIC
    .remove(b'-')
    .remove(b'.')
    .remove(b'_')
    .remove(b'~');

fn invalid(message: impl Into<String>) -> Error {
    Error::local(ErrorKind::InvalidInput, message)
}

/// How requests prove who sends them.
///
/// ```
/// use std::sync::Arc;
/// use tables_client::remote::{AccessToken, AccountKey, Credential, SasToken};
///
/// let key = AccountKey::new(
///     "devstoreaccount1",
///     "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw==",
/// )?;
/// let shared_key = Credential::SharedKey(key);
/// let sas = Credential::Sas(SasToken::parse("?sv=2019-02-02&tn=t1&sp=r&sig=abc%3D")?);
/// // A fixed token is a TokenCredential itself (real code uses a token source that
/// // refreshes, such as one backed by Entra ID).
/// let bearer = Credential::Bearer(Arc::new(AccessToken::new("eyJ0eXAi...", None)));
/// for credential in [shared_key, sas, bearer] {
///     let shown = format!("{credential:?}");
///     assert!(!shown.contains("Eby8vdM02") && !shown.contains("abc") && !shown.contains("eyJ0"));
/// }
/// # Ok::<(), tables_client::Error>(())
/// ```
#[derive(Debug, Clone)]
#[non_exhaustive]
pub enum Credential {
    /// Signs every request with the account key (`Authorization: SharedKey ..`):
    /// full access to the account.
    SharedKey(AccountKey),
    /// The shorter SharedKeyLite signature (`Authorization: SharedKeyLite ..`); same
    /// access as [`Credential::SharedKey`].
    SharedKeyLite(AccountKey),
    /// A shared access signature appended to every request URL: the access it
    /// grants (tables, permissions, key range, time window) is what the service
    /// allows. A key range is also applied before sending, as Azure applies it, so
    /// it holds on emulators that ignore it: a key outside the range, or a query of
    /// a partition outside it, is refused with [`ErrorKind::Auth`](crate::ErrorKind::Auth),
    /// and other queries return the rows inside the range only.
    Sas(SasToken),
    /// An OAuth bearer token (Entra ID), fetched from the source before every attempt.
    Bearer(Arc<dyn TokenCredential>),
    /// No credential: only for public endpoints or emulators that do not check.
    Anonymous,
}

/// A shared access signature: the query parameters of a service or account SAS.
///
/// Parsed from the text the portal, `az` or [`TableSasBuilder`](super::TableSasBuilder)
/// gives; the parameters are kept decoded, and [`SasToken::expose_query`] re-encodes
/// them canonically (every byte outside `A-Z a-z 0-9 - . _ ~` percent-encoded), so a
/// pasted token with a raw `+` or `/` in its signature still reaches the service
/// intact. `Debug` shows every parameter but `sig`.
///
/// ```
/// use tables_client::remote::SasToken;
///
/// let token = SasToken::parse(
///     "?sv=2019-02-02&tn=orders&sp=r&se=2030-01-01T00%3A00%3A00Z\
///      &spk=customer%2042&epk=customer%2042&sig=c2lnbmF0dXJl%2B%2F%3D",
/// )?;
/// assert_eq!(token.table_name(), Some("orders"));
/// assert_eq!(token.permissions(), Some("r"));
/// assert_eq!(token.start_key(), Some(("customer 42".to_owned(), None)));
/// assert_eq!(token.expiry().map(|t| t.to_string()).as_deref(), Some("2030-01-01T00:00:00.0000000Z"));
/// assert!(!format!("{token:?}").contains("c2lnbmF0dXJl"));
/// # Ok::<(), tables_client::Error>(())
/// ```
#[derive(Clone)]
pub struct SasToken {
    /// The canonical encoded query string, without `?`.
    query: String,
    /// The decoded parameters, in the token's order.
    params: Vec<(String, String)>,
}

impl SasToken {
    /// Parses a SAS query string, with or without the leading `?`.
    ///
    /// Parameter names are case-sensitive (`sv`, `sig`, ...); values are
    /// percent-decoded. Empty `&&` segments are ignored.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::InvalidInput`] if the text is a whole URL rather than its query,
    /// a segment has no `=` or an empty name, a parameter appears twice, a value is
    /// not UTF-8 once decoded, `sig` is missing or empty, or `srk`/`erk` appear
    /// without `spk`/`epk`. Messages name parameters, never the signature.
    pub fn parse(query: &str) -> Result<SasToken> {
        let text = query.trim();
        let text = text.strip_prefix('?').unwrap_or(text);
        let lower = text.get(..8).unwrap_or(text).to_ascii_lowercase();
        if lower.starts_with("https://") || lower.starts_with("http://") {
            return Err(invalid(
                "the SAS token is a whole URL; pass only its query string (the part after `?`)",
            ));
        }
        let mut params: Vec<(String, String)> = Vec::new();
        for (index, segment) in text.split('&').enumerate() {
            if segment.is_empty() {
                continue;
            }
            let Some((raw_name, raw_value)) = segment.split_once('=') else {
                return Err(invalid(format!(
                    "segment {} of the SAS token is not name=value",
                    index + 1
                )));
            };
            let name = percent_decode_str(raw_name)
                .decode_utf8()
                .map_err(|_| {
                    invalid(format!(
                        "the name of segment {} of the SAS token is not UTF-8",
                        index + 1
                    ))
                })?
                .into_owned();
            if name.is_empty() {
                return Err(invalid(format!(
                    "segment {} of the SAS token has an empty name",
                    index + 1
                )));
            }
            let value = percent_decode_str(raw_value)
                .decode_utf8()
                .map_err(|_| {
                    invalid(format!(
                        "the SAS parameter {name:?} is not UTF-8 once percent-decoded"
                    ))
                })?
                .into_owned();
            if params.iter().any(|(n, _)| *n == name) {
                return Err(invalid(format!(
                    "the SAS parameter {name:?} appears more than once"
                )));
            }
            params.push((name, value));
        }
        SasToken::from_params(params)
    }

    /// A token from decoded parameters (in order); checks them as [`SasToken::parse`]
    /// does.
    pub(crate) fn from_params(params: Vec<(String, String)>) -> Result<SasToken> {
        let has = |name: &str| params.iter().any(|(n, _)| n == name);
        match params.iter().find(|(n, _)| n == "sig") {
            None => {
                return Err(invalid(
                    "the SAS token has no `sig` parameter; pass the whole query string \
                     the portal or `az` gave (sv=..&..&sig=..)",
                ))
            }
            Some((_, sig)) if sig.is_empty() => {
                return Err(invalid("the SAS token's `sig` parameter is empty"))
            }
            Some(_) => {}
        }
        if has("srk") && !has("spk") {
            return Err(invalid(
                "the SAS token has `srk` without `spk`: a start RowKey needs its PartitionKey",
            ));
        }
        if has("erk") && !has("epk") {
            return Err(invalid(
                "the SAS token has `erk` without `epk`: an end RowKey needs its PartitionKey",
            ));
        }
        let mut query = String::new();
        for (name, value) in &params {
            if !query.is_empty() {
                query.push('&');
            }
            query.extend(utf8_percent_encode(name, QUERY_VALUE));
            query.push('=');
            query.extend(utf8_percent_encode(value, QUERY_VALUE));
        }
        Ok(SasToken { query, params })
    }

    /// The token as a query string (no leading `?`), every value percent-encoded:
    /// what is appended to request URLs. It holds the signature, so treat it as a
    /// secret: never log it.
    pub fn expose_query(&self) -> &str {
        &self.query
    }

    /// The signature as decoded and as encoded in the query: what to scrub from an
    /// answer that echoes it.
    pub(crate) fn signature_forms(&self) -> [String; 2] {
        let sig = self.param("sig").unwrap_or_default();
        [
            sig.to_owned(),
            utf8_percent_encode(sig, QUERY_VALUE).to_string(),
        ]
    }

    fn param(&self, name: &str) -> Option<&str> {
        self.params
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }

    /// The signed version (`sv`).
    pub fn version(&self) -> Option<&str> {
        self.param("sv")
    }

    /// The permissions (`sp`), such as `raud` for a table SAS.
    pub fn permissions(&self) -> Option<&str> {
        self.param("sp")
    }

    /// The table a service SAS is for (`tn`), as written in the token.
    pub fn table_name(&self) -> Option<&str> {
        self.param("tn")
    }

    /// When the token expires (`se`); `None` if absent (a stored access policy may
    /// give it) or not in one of the service's ISO 8601 forms (`YYYY-MM-DD`,
    /// `YYYY-MM-DDThh:mmZ`, `YYYY-MM-DDThh:mm:ssZ`, `YYYY-MM-DDThh:mm:ss.fffffffZ`).
    pub fn expiry(&self) -> Option<DateTime> {
        self.param("se").and_then(parse_sas_time)
    }

    /// When the token becomes valid (`st`), read as [`SasToken::expiry`] is.
    pub fn start(&self) -> Option<DateTime> {
        self.param("st").and_then(parse_sas_time)
    }

    /// The first key the token grants (inclusive): `spk` and, if given, `srk`.
    pub fn start_key(&self) -> Option<(String, Option<String>)> {
        self.key_bound("spk", "srk")
    }

    /// The last key the token grants (inclusive): `epk` and, if given, `erk`.
    pub fn end_key(&self) -> Option<(String, Option<String>)> {
        self.key_bound("epk", "erk")
    }

    fn key_bound(&self, pk: &str, rk: &str) -> Option<(String, Option<String>)> {
        let partition_key = self.param(pk)?;
        Some((partition_key.to_owned(), self.param(rk).map(str::to_owned)))
    }
}

impl fmt::Debug for SasToken {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut s = f.debug_struct("SasToken");
        for (name, value) in &self.params {
            if name == "sig" {
                s.field(name, &REDACTED);
            } else {
                s.field(name, value);
            }
        }
        s.finish()
    }
}

/// A source of OAuth bearer tokens (Entra ID) for [`Credential::Bearer`].
///
/// Implement it with the `async-trait` crate:
///
/// ```
/// use std::time::{Duration, SystemTime};
/// use tables_client::remote::{AccessToken, TokenCredential};
/// use tables_client::async_trait;
///
/// #[derive(Debug)]
/// struct FromEnvironment;
///
/// #[async_trait]
/// impl TokenCredential for FromEnvironment {
///     async fn token(&self) -> tables_client::Result<AccessToken> {
///         // A real source asks Entra ID and caches the answer until shortly before
///         // it expires.
///         let token = std::env::var("TABLES_TOKEN").unwrap_or_else(|_| "dev-token".to_owned());
///         Ok(AccessToken::new(token, Some(SystemTime::now() + Duration::from_secs(3600))))
///     }
/// }
/// ```
#[async_trait::async_trait]
pub trait TokenCredential: Send + Sync + fmt::Debug {
    /// A token valid for the storage scope (`https://storage.azure.com/.default`).
    ///
    /// Called before every request attempt, retries included, so it should answer
    /// from a cache and refresh ahead of [`AccessToken::expires_on`]. Its `Debug`
    /// must not show tokens or client secrets.
    ///
    /// # Errors
    ///
    /// Whatever prevents getting a token; use [`ErrorKind::Auth`] for a refused
    /// sign-in. The error ends the operation without retrying.
    async fn token(&self) -> Result<AccessToken>;
}

/// A bearer token and when it expires.
///
/// A fixed token is a [`TokenCredential`] itself (it returns a copy of itself), for
/// tests and short-lived tools. `Debug` shows `token: "<redacted>"`.
#[derive(Clone)]
pub struct AccessToken {
    /// The token, sent as `Authorization: Bearer <token>`. A secret: never log it.
    pub token: String,
    /// When the token stops being valid, if known.
    pub expires_on: Option<SystemTime>,
}

impl AccessToken {
    /// A token that expires at `expires_on` (if known).
    pub fn new(token: impl Into<String>, expires_on: Option<SystemTime>) -> AccessToken {
        AccessToken {
            token: token.into(),
            expires_on,
        }
    }
}

impl fmt::Debug for AccessToken {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("AccessToken")
            .field("token", &REDACTED)
            .field("expires_on", &self.expires_on)
            .finish()
    }
}

#[async_trait::async_trait]
impl TokenCredential for AccessToken {
    /// A copy of this token, whether or not it has expired (the service decides).
    async fn token(&self) -> Result<AccessToken> {
        Ok(self.clone())
    }
}

#[cfg(test)]
mod tests {
    use super::super::connection::DEV_ACCOUNT_KEY as DEV_KEY;
    use super::*;

    #[test]
    fn account_key_debug_is_redacted() {
        let key = AccountKey::new("devstoreaccount1", DEV_KEY).unwrap();
        let shown = format!("{key:?}");
        assert_eq!(
            shown,
            r#"AccountKey { account: "devstoreaccount1", key: "<redacted>" }"#
        );
        for credential in [
            Credential::SharedKey(key.clone()),
            Credential::SharedKeyLite(key),
        ] {
            let shown = format!("{credential:?} {credential:#?}");
            assert!(!shown.contains("Eby8vdM02"), "{shown}");
            assert!(shown.contains("<redacted>"), "{shown}");
        }
    }

    #[test]
    fn account_key_rejects_bad_input_without_echoing_it() {
        for bad in ["not base64!", "Eby8vdM02x==NOcq", "%%%%", ""] {
            let err = AccountKey::new("acct", bad).unwrap_err();
            assert_eq!(err.kind(), ErrorKind::InvalidInput, "{bad:?}");
            if !bad.is_empty() {
                assert!(!err.to_string().contains(bad), "{err}");
                assert!(!format!("{err:?}").contains(bad), "{err:?}");
            }
        }
        assert_eq!(
            AccountKey::new("", DEV_KEY).unwrap_err().kind(),
            ErrorKind::InvalidInput
        );
        assert_eq!(
            AccountKey::new("a b", DEV_KEY).unwrap_err().kind(),
            ErrorKind::InvalidInput
        );
        // Padding is optional, surrounding whitespace ignored.
        let unpadded = DEV_KEY.trim_end_matches('=');
        let a = AccountKey::new("acct", unpadded).unwrap();
        let b = AccountKey::new("acct", &format!(" {DEV_KEY}\n")).unwrap();
        assert_eq!(a.sign("x"), b.sign("x"));
    }

    #[test]
    fn sas_parse_decodes_and_reencodes() {
        let token = SasToken::parse(
            "?sv=2019-02-02&&tn=MyTable&sp=raud&st=2024-01-01&se=2030-01-01T00:00:00Z\
             &spk=a%20b&srk=r%2B1&epk=z&sig=ab+/c%3D",
        )
        .unwrap();
        assert_eq!(token.version(), Some("2019-02-02"));
        assert_eq!(token.table_name(), Some("MyTable"));
        assert_eq!(token.permissions(), Some("raud"));
        assert_eq!(
            token.start_key(),
            Some(("a b".to_owned(), Some("r+1".to_owned())))
        );
        assert_eq!(token.end_key(), Some(("z".to_owned(), None)));
        assert_eq!(token.start(), DateTime::from_ymd_hms(2024, 1, 1, 0, 0, 0));
        assert_eq!(token.expiry(), DateTime::from_ymd_hms(2030, 1, 1, 0, 0, 0));
        assert_eq!(
            token.expose_query(),
            "sv=2019-02-02&tn=MyTable&sp=raud&st=2024-01-01&se=2030-01-01T00%3A00%3A00Z\
             &spk=a%20b&srk=r%2B1&epk=z&sig=ab%2B%2Fc%3D"
        );
        // Parsing the canonical form again changes nothing.
        let again = SasToken::parse(token.expose_query()).unwrap();
        assert_eq!(again.expose_query(), token.expose_query());
    }

    #[test]
    fn sas_accessors_are_none_when_absent_or_unreadable() {
        let token = SasToken::parse("sig=x&se=tomorrow").unwrap();
        assert_eq!(token.permissions(), None);
        assert_eq!(token.table_name(), None);
        assert_eq!(token.version(), None);
        assert_eq!(token.expiry(), None);
        assert_eq!(token.start(), None);
        assert_eq!(token.start_key(), None);
        assert_eq!(token.end_key(), None);
    }

    #[test]
    fn sas_debug_hides_only_the_signature() {
        let token = SasToken::parse("sv=2019-02-02&tn=t1&sp=r&sig=SECRETSIG%2B%3D").unwrap();
        for shown in [format!("{token:?}"), format!("{token:#?}")] {
            assert!(!shown.contains("SECRETSIG"), "{shown}");
            assert!(shown.contains("<redacted>"), "{shown}");
            assert!(
                shown.contains("2019-02-02") && shown.contains("t1"),
                "{shown}"
            );
        }
        let credential = Credential::Sas(token);
        assert!(!format!("{credential:?}").contains("SECRETSIG"));
    }

    #[test]
    fn sas_parse_rejects_malformed_tokens_without_echoing_sig() {
        let cases = [
            "sv=2019-02-02&sp=r",
            "sv=2019-02-02&sig=",
            "sig=SECRETSIG&sig=SECRETSIG",
            "sig=SECRETSIG&novalue",
            "sig=SECRETSIG&=x",
            "sig=SECRETSIG&srk=r",
            "sig=SECRETSIG&erk=r",
            "sig=SECRETSIG&tn=%FF",
            "https://acct.table.core.windows.net/t?sig=SECRETSIG",
            "",
            "?",
        ];
        for case in cases {
            let err = SasToken::parse(case).unwrap_err();
            assert_eq!(err.kind(), ErrorKind::InvalidInput, "{case}");
            let shown = format!("{err} {err:?}");
            assert!(!shown.contains("SECRETSIG"), "{shown}");
        }
    }

    #[tokio::test]
    async fn access_token_is_a_fixed_token_credential() {
        let token = AccessToken::new("SECRETTOKEN", None);
        assert!(!format!("{token:?}").contains("SECRETTOKEN"));
        let credential = Credential::Bearer(Arc::new(token));
        assert!(!format!("{credential:?}").contains("SECRETTOKEN"));
        let Credential::Bearer(source) = credential else {
            panic!("not a bearer credential");
        };
        assert_eq!(source.token().await.unwrap().token, "SECRETTOKEN");
    }
}
