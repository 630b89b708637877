//! Entra ID against `tables-server` over HTTPS: a certificate authority and a server
//! certificate made at test time, tokens signed HS256 with a secret the server is
//! given (Entra ID signs RS256 with keys no local server holds), and a server that
//! serves HTTPS and accepts bearer tokens.

use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use rcgen::{BasicConstraints, CertificateParams, DnType, IsCa, Issuer, KeyPair};
use serde_json::{json, Value};
use tables_client::remote::{Credential, RemoteEngine, TokenCredential};
use tables_server::{OAuth, RunningServer, Server, Tls};

/// The secret test tokens are signed with.
pub const SECRET: &[u8] = b"tables-tests: the HS256 secret of test tokens";

/// A tenant id for test tokens.
pub const TENANT: &str = "72f988bf-86f1-41af-91ab-2d7cd011db47";

/// A certificate authority of the test run and a server certificate it signed for
/// `localhost` and `127.0.0.1`.
#[derive(Debug)]
pub struct TestCertificates {
    /// The authority's certificate (PEM): what clients trust.
    pub ca_pem: String,
    /// The server's certificate (PEM).
    pub server_pem: String,
    /// The server's private key (PEM).
    pub server_key_pem: String,
}

impl TestCertificates {
    /// Makes a new authority and server certificate.
    ///
    /// # Panics
    ///
    /// If rcgen can't make them.
    pub fn new() -> TestCertificates {
        let ca_key = KeyPair::generate().expect("a CA key");
        let mut ca = CertificateParams::new(Vec::<String>::new()).expect("CA parameters");
        ca.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        ca.distinguished_name
            .push(DnType::CommonName, "tables-tests CA");
        let ca_cert = ca.self_signed(&ca_key).expect("the CA certificate");
        let issuer = Issuer::new(ca, ca_key);
        let server_key = KeyPair::generate().expect("a server key");
        let mut server =
            CertificateParams::new(vec!["localhost".to_owned(), "127.0.0.1".to_owned()])
                .expect("server parameters");
        server
            .distinguished_name
            .push(DnType::CommonName, "tables-server test");
        let server_cert = server
            .signed_by(&server_key, &issuer)
            .expect("the server certificate");
        TestCertificates {
            ca_pem: ca_cert.pem(),
            server_pem: server_cert.pem(),
            server_key_pem: server_key.serialize_pem(),
        }
    }

    /// The server's side, for [`Server::tls`].
    ///
    /// # Panics
    ///
    /// If the server refuses its own certificate.
    pub fn tls(&self) -> Tls {
        Tls::from_pem(self.server_pem.as_bytes(), self.server_key_pem.as_bytes())
            .expect("the test certificate serves")
    }

    /// An HTTP client that trusts the test authority (and nothing else).
    ///
    /// # Panics
    ///
    /// If reqwest refuses the authority's certificate.
    pub fn client(&self) -> reqwest::Client {
        let ca = reqwest::Certificate::from_pem(self.ca_pem.as_bytes()).expect("the CA as PEM");
        reqwest::Client::builder()
            .tls_built_in_root_certs(false)
            .add_root_certificate(ca)
            .build()
            .expect("a client trusting the test CA")
    }
}

impl Default for TestCertificates {
    fn default() -> TestCertificates {
        TestCertificates::new()
    }
}

/// Starts a server on a free loopback port serving HTTPS with `certificates` and
/// accepting bearer tokens as `oauth` says.
///
/// # Panics
///
/// If it can't start.
pub fn https_server(certificates: &TestCertificates, oauth: OAuth) -> RunningServer {
    Server::builder()
        .port(0)
        .tls(certificates.tls())
        .oauth(oauth)
        .start_on_own_thread(2)
        .expect("an HTTPS tables-server starts")
}

/// A remote engine on `server` trusting the test authority and signing with the
/// bearer tokens of `source`.
///
/// # Panics
///
/// If it can't be built (the server is not HTTPS).
pub fn bearer_engine(
    server: &RunningServer,
    certificates: &TestCertificates,
    source: Arc<dyn TokenCredential>,
) -> RemoteEngine {
    RemoteEngine::builder(server.url())
        .http_client(certificates.client())
        .credential(Credential::Bearer(source))
        .build()
        .expect("an HTTPS endpoint with a bearer credential builds")
}

/// Seconds since the Unix epoch, `offset` from now (negative: in the past).
pub fn epoch_seconds(offset: i64) -> i64 {
    let now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap_or(Duration::ZERO)
        .as_secs() as i64;
    now + offset
}

/// The claims of a valid storage token of principal `oid`: issued a minute ago,
/// valid for an hour.
pub fn claims(oid: &str) -> Value {
    json!({
        "aud": "https://storage.azure.com",
        "iss": format!("https://sts.windows.net/{TENANT}/"),
        "iat": epoch_seconds(-60),
        "nbf": epoch_seconds(-60),
        "exp": epoch_seconds(3600),
        "oid": oid,
        "tid": TENANT,
        "scp": "user_impersonation",
    })
}

/// A JWT of `claims`, signed HS256 with `secret` (the one JWT format,
/// [`tables_core::auth::Jwt`], the server checks tokens with).
pub fn token(claims: &Value, secret: &[u8]) -> String {
    tables_core::auth::Jwt::sign_hs256(claims, secret)
}
