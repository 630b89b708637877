//! Entra ID end to end: the remote engine with a token credential against
//! `tables-server --oauth` over HTTPS (a certificate made at test time). Tokens
//! that are expired, not yet valid, for another audience or issuer, tampered, or
//! held by a reader trying to write are refused with Azure's codes; the client
//! caches tokens (one refresh under 64 concurrent requests), refreshes ahead of
//! expiry and retries a bearer challenge once.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use serde_json::Value;
use tables_client::remote::{AccessToken, Credential, RemoteEngine, TokenCredential};
use tables_client::{
    async_trait, DynamicEntity, Engine, EntityKey, ErrorKind, QuerySpec, Result, WriteOp,
};
use tables_server::{OAuth, Role, RunningServer, Server};
use tables_tests::entra::{
    bearer_engine as engine, claims, epoch_seconds, https_server, token, TestCertificates, SECRET,
};

/// Hands out tokens of `claims`, counting its calls; each lives `lifetime`.
#[derive(Debug)]
struct Tokens {
    claims: Value,
    lifetime: Duration,
    delay: Duration,
    calls: AtomicUsize,
}

impl Tokens {
    fn new(claims: Value) -> Arc<Tokens> {
        Arc::new(Tokens {
            claims,
            lifetime: Duration::from_secs(3600),
            delay: Duration::ZERO,
            calls: AtomicUsize::new(0),
        })
    }

    fn calls(&self) -> usize {
        self.calls.load(Ordering::SeqCst)
    }
}

#[async_trait]
impl TokenCredential for Tokens {
    async fn token(&self) -> Result<AccessToken> {
        let _ = self.calls.fetch_add(1, Ordering::SeqCst);
        tokio::time::sleep(self.delay).await;
        Ok(AccessToken::new(
            token(&self.claims, SECRET),
            Some(SystemTime::now() + self.lifetime),
        ))
    }
}

/// A credential whose sign-in fails.
#[derive(Debug)]
struct SignInFails;

#[async_trait]
impl TokenCredential for SignInFails {
    async fn token(&self) -> Result<AccessToken> {
        Err(tables_client::Error::new(
            ErrorKind::Auth,
            "AADSTS700016: application not found in the directory",
        ))
    }
}

fn checked() -> OAuth {
    OAuth::new().hs256_secret(SECRET)
}

#[tokio::test]
async fn a_token_credential_reads_and_writes_over_https() -> Result<()> {
    let certs = TestCertificates::new();
    let server = https_server(&certs, checked());
    assert!(server.url().starts_with("https://"), "{}", server.url());
    let tokens = Tokens::new(claims("alice"));
    let engine = engine(&server, &certs, tokens.clone());
    engine.create_table("Orders").await?;
    let row = DynamicEntity::new("p", "r").with("Total", 5);
    engine.write("Orders", &WriteOp::Insert(row)).await?;
    let got = engine
        .get_entity("Orders", &EntityKey::new("p", "r"), None)
        .await?
        .expect("the row");
    assert_eq!(got.get("Total"), Some(&tables_client::Value::Int32(5)));
    let page = engine.query("Orders", &QuerySpec::new(), None).await?;
    assert_eq!(page.items.len(), 1);
    engine.delete_table("Orders").await?;
    assert_eq!(tokens.calls(), 1, "one token served every request");
    let shown = format!("{engine:?}");
    assert!(
        !shown.contains(&token(&claims("alice"), SECRET)[..20]),
        "{shown}"
    );
    Ok(())
}

#[tokio::test]
async fn refused_tokens_get_azures_answers() {
    let certs = TestCertificates::new();
    let server = https_server(&certs, checked());
    let mut base = claims("alice");
    let set = |key: &str, value: Value| {
        let mut c = claims("alice");
        c[key] = value;
        c
    };
    let tampered = {
        let good = token(&base, SECRET);
        let mut parts: Vec<String> = good.split('.').map(str::to_owned).collect();
        let other = token(&set("oid", Value::from("mallory")), SECRET);
        parts[1] = other.split('.').nth(1).unwrap().to_owned();
        parts.join(".")
    };
    base["exp"] = Value::from(epoch_seconds(-10));
    let cases: Vec<(&str, String, &str)> = vec![
        ("expired", token(&base, SECRET), "The token is expired"),
        (
            "not yet valid",
            token(&set("nbf", Value::from(epoch_seconds(600))), SECRET),
            "not yet valid",
        ),
        (
            "another audience",
            token(&set("aud", Value::from("https://vault.azure.net")), SECRET),
            "Audience validation failed",
        ),
        (
            "another issuer",
            token(&set("iss", Value::from("https://evil.example/")), SECRET),
            "Issuer validation failed",
        ),
        ("tampered", tampered, "Signature validation failed"),
        (
            "signed with another secret",
            token(&claims("alice"), b"another secret"),
            "Signature validation failed",
        ),
        ("not a JWT", "not-a-token".to_owned(), "not a JWT"),
    ];
    for (what, bad, detail) in cases {
        let fixed = Arc::new(Fixed {
            token: bad.clone(),
            calls: AtomicUsize::new(0),
        });
        let engine = engine(&server, &certs, fixed.clone());
        let err = engine
            .list_tables(&Default::default())
            .await
            .expect_err(what);
        assert_eq!(err.status(), Some(401), "{what}: {err}");
        assert_eq!(
            err.service_code(),
            Some("InvalidAuthenticationInfo"),
            "{what}: {err}"
        );
        assert!(err.to_string().contains(detail), "{what}: {err}");
        assert!(
            !err.to_string().contains(&bad),
            "{what}: the token is not in {err}"
        );
        assert_eq!(
            fixed.calls.load(Ordering::SeqCst),
            2,
            "{what}: the challenge is retried once with a new token"
        );
        // The challenge as Azure sends it.
        let answer = certs
            .client()
            .get(format!("{}/Tables", server.url()))
            .header("Authorization", format!("Bearer {bad}"))
            .header("x-ms-version", "2019-02-02")
            .header("x-ms-date", httpdate::fmt_http_date(SystemTime::now()))
            .send()
            .await
            .unwrap();
        assert_eq!(answer.status().as_u16(), 401, "{what}");
        let challenge = answer.headers()["www-authenticate"]
            .to_str()
            .unwrap()
            .to_owned();
        assert!(
            challenge.starts_with("Bearer authorization_uri=https://login.microsoftonline.com/")
                && challenge.ends_with("/oauth2/authorize resource_id=https://storage.azure.com"),
            "{what}: {challenge}"
        );
    }
}

/// Always the same token, counting its calls.
#[derive(Debug)]
struct Fixed {
    token: String,
    calls: AtomicUsize,
}

#[async_trait]
impl TokenCredential for Fixed {
    async fn token(&self) -> Result<AccessToken> {
        let _ = self.calls.fetch_add(1, Ordering::SeqCst);
        Ok(AccessToken::new(self.token.clone(), None))
    }
}

#[tokio::test]
async fn a_reader_reads_and_cannot_write() -> Result<()> {
    let certs = TestCertificates::new();
    let oauth = checked()
        .role("reader-oid", Role::Reader)
        .role("writer-oid", Role::Contributor)
        .require_role();
    let server = https_server(&certs, oauth);
    let writer = engine(&server, &certs, Tokens::new(claims("writer-oid")));
    let reader = engine(&server, &certs, Tokens::new(claims("reader-oid")));
    let nobody = engine(&server, &certs, Tokens::new(claims("nobody-oid")));
    writer.create_table("Orders").await?;
    writer
        .write("Orders", &WriteOp::Insert(DynamicEntity::new("p", "r")))
        .await?;
    assert!(reader
        .get_entity("Orders", &EntityKey::new("p", "r"), None)
        .await?
        .is_some());
    assert_eq!(
        reader
            .query("Orders", &QuerySpec::new(), None)
            .await?
            .items
            .len(),
        1
    );
    let refusals = [
        (
            "insert",
            reader
                .write("Orders", &WriteOp::Insert(DynamicEntity::new("p", "s")))
                .await
                .expect_err("a reader can't insert"),
        ),
        (
            "create a table",
            reader
                .create_table("Other")
                .await
                .expect_err("a reader can't create"),
        ),
        (
            "delete a table",
            reader
                .delete_table("Orders")
                .await
                .expect_err("a reader can't delete"),
        ),
        (
            "read without a role",
            nobody
                .query("Orders", &QuerySpec::new(), None)
                .await
                .expect_err("no role, no access"),
        ),
    ];
    for (what, err) in refusals {
        assert_eq!(err.status(), Some(403), "{what}: {err}");
        assert_eq!(
            err.service_code(),
            Some("AuthorizationPermissionMismatch"),
            "{what}: {err}"
        );
    }
    assert_eq!(
        writer
            .query("Orders", &QuerySpec::new(), None)
            .await?
            .items
            .len(),
        1,
        "nothing written"
    );
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn one_refresh_under_64_concurrent_requests_and_ahead_of_expiry() -> Result<()> {
    let certs = TestCertificates::new();
    let server = https_server(&certs, checked());
    let tokens = Arc::new(Tokens {
        claims: claims("alice"),
        // Refreshed at half its lifetime (under five minutes).
        lifetime: Duration::from_secs(3),
        delay: Duration::from_millis(100),
        calls: AtomicUsize::new(0),
    });
    let engine = Arc::new(engine(&server, &certs, tokens.clone()));
    engine.create_table("Load").await?;
    assert_eq!(tokens.calls(), 1);
    tokio::time::sleep(Duration::from_millis(1_700)).await;
    let requests = (0..64).map(|i| {
        let engine = Arc::clone(&engine);
        tokio::spawn(async move {
            let row = DynamicEntity::new("p", format!("r{i:02}"));
            engine.write("Load", &WriteOp::Insert(row)).await
        })
    });
    for request in futures::future::join_all(requests).await {
        request.expect("the task ran")?;
    }
    assert_eq!(
        tokens.calls(),
        2,
        "64 concurrent requests past the refresh time ask the credential once"
    );
    assert_eq!(
        engine
            .query("Load", &QuerySpec::new(), None)
            .await?
            .items
            .len(),
        64
    );
    Ok(())
}

#[tokio::test]
async fn a_failing_credential_is_named_and_nothing_is_sent() {
    let certs = TestCertificates::new();
    let server = https_server(&certs, checked());
    let engine = engine(&server, &certs, Arc::new(SignInFails));
    let err = engine.create_table("Orders").await.expect_err("no token");
    assert_eq!(err.kind(), ErrorKind::Auth, "{err}");
    let message = err.to_string();
    assert!(
        message.contains("SignInFails"),
        "names the credential: {message}"
    );
    assert!(message.contains("AADSTS700016"), "says why: {message}");
    let listing = engine_with_key(&server, &certs)
        .list_tables(&Default::default())
        .await;
    assert!(
        listing.expect("the key still works").names.is_empty(),
        "nothing was created"
    );
}

fn engine_with_key(server: &RunningServer, certs: &TestCertificates) -> RemoteEngine {
    RemoteEngine::builder(server.url())
        .http_client(certs.client())
        .credential(Credential::SharedKey(tables_tests::azurite::dev_key()))
        .build()
        .expect("SharedKey over HTTPS")
}

#[tokio::test]
async fn bearer_tokens_over_http_are_refused_by_the_server() {
    // The client never sends one over HTTP (remote_wire); a client that does gets
    // the service's refusal.
    let server = Server::builder()
        .port(0)
        .oauth(checked())
        .start_on_own_thread(1)
        .expect("a server starts");
    let answer = reqwest::Client::new()
        .get(format!("{}/Tables", server.url()))
        .header(
            "Authorization",
            format!("Bearer {}", token(&claims("alice"), SECRET)),
        )
        .header("x-ms-version", "2019-02-02")
        .send()
        .await
        .unwrap();
    assert_eq!(answer.status().as_u16(), 403);
    assert_eq!(answer.headers()["x-ms-error-code"], "AuthenticationFailed");
    // SharedKey keeps working beside --oauth.
    let certs = TestCertificates::new();
    let https = https_server(&certs, checked());
    assert!(engine_with_key(&https, &certs)
        .list_tables(&Default::default())
        .await
        .is_ok());
}
