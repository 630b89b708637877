//! Credentials: account keys, SAS tokens and bearer tokens.
//!
//! Every type here keeps its secret out of `Debug` output and error messages: an
//! [`AccountKey`] prints as `AccountKey { account: "x", key: "<redacted>" }`, a
//! [`SasToken`] prints every parameter but `sig`, an [`AccessToken`] hides its token.

use std::fmt;
use std::sync::Arc;
use std::time::{Duration, SystemTime};

pub use tables_core::auth::{AccountKey, SasToken};
use tables_core::{Error, ErrorKind, Result};

const REDACTED: &str = "<redacted>";

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
    /// Whatever prevents getting a token; use [`ErrorKind::Auth`](crate::ErrorKind::Auth) for a refused
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

/// How long before its expiry a cached token is replaced (Azure's SDKs use five
/// minutes), at most half of the lifetime it had when it was fetched.
const REFRESH_AHEAD: Duration = Duration::from_secs(5 * 60);

/// The tokens of a [`Credential::Bearer`], as the transport uses them: one token
/// cached until shortly before it expires, refreshed by one caller while the others
/// wait for its answer (so 64 concurrent requests ask the credential once), and
/// replaced once when the service refuses it with a bearer challenge.
pub(crate) struct TokenCache {
    source: Arc<dyn TokenCredential>,
    cached: tokio::sync::Mutex<Option<Cached>>,
}

struct Cached {
    token: AccessToken,
    /// When the cached token is to be replaced.
    refresh_at: Option<SystemTime>,
}

impl fmt::Debug for TokenCache {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TokenCache")
            .field("source", &self.source)
            .finish_non_exhaustive()
    }
}

impl TokenCache {
    pub(crate) fn new(source: Arc<dyn TokenCredential>) -> TokenCache {
        TokenCache {
            source,
            cached: tokio::sync::Mutex::new(None),
        }
    }

    /// The token to send: the cached one while it is fresh and not `refused` (the
    /// token a `401` challenge refused), else a new one from the credential.
    ///
    /// # Errors
    ///
    /// The credential's error, saying which credential failed and what to check
    /// (never a token).
    pub(crate) async fn token(&self, refused: Option<&str>) -> Result<String> {
        let mut cached = self.cached.lock().await;
        let now = SystemTime::now();
        if let Some(current) = cached.as_ref() {
            let fresh = match current.refresh_at {
                None => true,
                Some(at) => now < at,
            };
            let is_refused = refused.is_some_and(|r| r == current.token.token);
            if fresh && !is_refused {
                return Ok(current.token.token.clone());
            }
        }
        let token = self.source.token().await.map_err(|err| {
            let message = format!(
                "the bearer token credential {:?} could not give a token: {}. Check its \
                 sign-in (for example `az login`, the managed identity's assignment, or the \
                 client secret) and that it may ask for the storage scope",
                self.source,
                err.message()
            );
            Error::local(ErrorKind::Auth, message)
        })?;
        let refresh_at = token.expires_on.map(|expires| {
            let lifetime = expires.duration_since(now).unwrap_or_default();
            expires - REFRESH_AHEAD.min(lifetime / 2)
        });
        let text = token.token.clone();
        *cached = Some(Cached { token, refresh_at });
        Ok(text)
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
    fn sas_credential_debug_hides_the_signature() {
        let token = SasToken::parse("sv=2019-02-02&tn=t1&sp=r&sig=SECRETSIG%2B%3D").unwrap();
        let credential = Credential::Sas(token);
        assert!(!format!("{credential:?}").contains("SECRETSIG"));
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
