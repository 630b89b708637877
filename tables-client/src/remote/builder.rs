//! What every remote client's builder sets: endpoint, account, credential, retry
//! policy, timeouts, HTTP policy and client. Held once here and turned into a
//! [`Transport`] for the service the client talks to.

use std::sync::Arc;
use std::time::Duration;

use tables_core::{Error, ErrorKind, Result};

use super::connection::ConnectionString;
use super::credential::Credential;
use super::endpoint::{Endpoint, HttpPolicy};
use super::retry::RetryPolicy;
use super::transport::{ServerSeen, Service, Transport};

/// The settings of a remote client's transport, before it is built.
#[derive(Debug)]
pub(crate) struct TransportConfig {
    pub(crate) endpoint: String,
    pub(crate) account: Option<String>,
    pub(crate) credential: Credential,
    pub(crate) retry: RetryPolicy,
    pub(crate) request_timeout: Duration,
    pub(crate) connect_timeout: Duration,
    pub(crate) http: HttpPolicy,
    pub(crate) client: Option<reqwest::Client>,
}

impl TransportConfig {
    /// Defaults for the account at `endpoint`: anonymous, the default retry policy,
    /// 30 s per attempt, 10 s to connect, plain HTTP only to loopback hosts.
    pub(crate) fn new(endpoint: String) -> TransportConfig {
        TransportConfig {
            endpoint,
            account: None,
            credential: Credential::Anonymous,
            retry: RetryPolicy::default(),
            request_timeout: Duration::from_secs(30),
            connect_timeout: Duration::from_secs(10),
            http: HttpPolicy::LoopbackOnly,
            client: None,
        }
    }

    /// `endpoint` (one of the connection string's services) with the connection
    /// string's account and credential; the development storage may use plain HTTP,
    /// also behind a proxy URI.
    pub(crate) fn from_connection_string(
        endpoint: &str,
        parsed: &ConnectionString,
    ) -> TransportConfig {
        let mut config = TransportConfig::new(endpoint.to_owned());
        config.credential = parsed.credential().clone();
        config.account = parsed.account_name().map(str::to_owned);
        if parsed.is_development_storage() {
            config.http = HttpPolicy::Allowed;
        }
        config
    }

    /// The transport to `service`.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::InvalidInput`] for an endpoint that is not a URL, has no account,
    /// or uses plain HTTP to a non-loopback host without `allow_http`;
    /// [`ErrorKind::Transport`] if the HTTP client cannot be set up.
    pub(crate) fn build(self, service: Service) -> Result<Transport> {
        let endpoint = Endpoint::parse(&self.endpoint, self.account.as_deref(), self.http)?;
        let http = match self.client {
            Some(client) => client,
            None => reqwest::Client::builder()
                .connect_timeout(self.connect_timeout)
                .tcp_nodelay(true)
                .pool_idle_timeout(Duration::from_secs(60))
                .build()
                .map_err(|e| {
                    Error::local(
                        ErrorKind::Transport,
                        format!("could not set up the HTTP client: {e}"),
                    )
                })?,
        };
        let tokens = match &self.credential {
            Credential::Bearer(source) => {
                if !endpoint.is_https() {
                    return Err(Error::local(
                        ErrorKind::InvalidInput,
                        format!(
                            "a bearer token (Entra ID) is sent over HTTPS only, as every Azure \
                             SDK does, and the endpoint {} is HTTP; use its https:// address \
                             (tables-server serves HTTPS with --cert and --key)",
                            self.endpoint
                        ),
                    ));
                }
                Some(super::credential::TokenCache::new(Arc::clone(source)))
            }
            _ => None,
        };
        Ok(Transport {
            http,
            endpoint,
            tokens,
            credential: self.credential,
            retry: self.retry,
            request_timeout: self.request_timeout,
            service,
            server: ServerSeen::default(),
        })
    }
}

/// The transport setters of a builder holding a `config: TransportConfig`.
macro_rules! transport_setters {
    ($builder:ident) => {
        impl $builder {
            /// The credential requests are signed with (default:
            /// [`Credential::Anonymous`](crate::remote::Credential::Anonymous)).
            #[must_use]
            pub fn credential(mut self, credential: $crate::remote::Credential) -> $builder {
                self.config.credential = credential;
                self
            }

            /// The account name, when the endpoint URL does not tell it (a custom
            /// domain).
            #[must_use]
            pub fn account_name(mut self, account: impl Into<String>) -> $builder {
                self.config.account = Some(account.into());
                self
            }

            /// How transient failures are retried (default:
            /// [`RetryPolicy::default`](crate::remote::RetryPolicy::default)).
            #[must_use]
            pub fn retry_policy(mut self, policy: $crate::remote::RetryPolicy) -> $builder {
                self.config.retry = policy;
                self
            }

            /// How long one attempt may take, from connecting to the last byte of the
            /// answer (default 30 s). A timed-out attempt is retried under the retry
            /// policy.
            #[must_use]
            pub fn request_timeout(mut self, timeout: ::std::time::Duration) -> $builder {
                self.config.request_timeout = timeout;
                self
            }

            /// How long connecting may take (default 10 s).
            #[must_use]
            pub fn connect_timeout(mut self, timeout: ::std::time::Duration) -> $builder {
                self.config.connect_timeout = timeout;
                self
            }

            /// Allows plain HTTP to hosts other than loopback addresses (for example
            /// an emulator in another container). Without it, HTTP is refused unless
            /// the host is this machine: account keys would not leak, but data and SAS
            /// tokens would cross the network unencrypted.
            #[must_use]
            pub fn allow_http(mut self) -> $builder {
                self.config.http = $crate::remote::endpoint::HttpPolicy::Allowed;
                self
            }

            /// Uses this HTTP client (and its connection pool), for sharing one pool
            /// between clients. Its own timeouts apply in addition to the client's.
            #[must_use]
            pub fn http_client(mut self, client: reqwest::Client) -> $builder {
                self.config.client = Some(client);
                self
            }
        }
    };
}
pub(crate) use transport_setters;
