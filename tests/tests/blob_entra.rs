//! The blob companion (large entities) signs with the same bearer credential as the
//! tables: Azurite's blob service, started here over HTTPS with `--oauth basic`
//! (it checks a token's lifetime, issuer and audience, not its signature), serves a
//! remote blob store holding the `Credential::Bearer` the table engine uses;
//! without a token it refuses. Skipped loudly when Azurite is not installed (a
//! failure under `CI=true`: the test command installs it).

#![allow(clippy::unwrap_used, missing_docs)] // tests

use std::net::TcpListener;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime};

use tables_client::remote::{AccessToken, Credential, RemoteBlobStore};
use tables_core::blob::{BlobCondition, BlobStore};
use tables_tests::entra::{claims, token, TestCertificates, SECRET};

/// Azurite's blob service, stopped when dropped.
struct AzuriteBlob(Child);

impl Drop for AzuriteBlob {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn azurite_blob_or_skip() -> Option<PathBuf> {
    let bin = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../tools/azurite/node_modules/.bin/azurite-blob");
    if bin.exists() {
        return Some(bin);
    }
    let why = "SKIPPED blob_entra: tools/azurite is not installed (the test command installs it)";
    assert!(!tables_tests::azurite::under_ci(), "{why}");
    eprintln!("{why}");
    None
}

#[tokio::test]
async fn the_blob_companion_signs_with_the_bearer_credential() {
    let Some(bin) = azurite_blob_or_skip() else {
        return;
    };
    let certs = TestCertificates::new();
    let dir = std::env::temp_dir().join(format!("tables-blob-entra-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let (cert, key) = (dir.join("cert.pem"), dir.join("key.pem"));
    std::fs::write(&cert, &certs.server_pem).unwrap();
    std::fs::write(&key, &certs.server_key_pem).unwrap();
    let port = TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let _azurite = AzuriteBlob(
        Command::new(bin)
            .args(["--blobHost", "127.0.0.1", "--blobPort", &port.to_string()])
            .args([
                "--inMemoryPersistence",
                "--disableTelemetry",
                "--oauth",
                "basic",
            ])
            .arg("--cert")
            .arg(&cert)
            .arg("--key")
            .arg(&key)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap(),
    );
    let started = Instant::now();
    while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(
            started.elapsed() < Duration::from_secs(60),
            "Azurite blob did not start"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    let url = format!("https://127.0.0.1:{port}/devstoreaccount1");
    let token = AccessToken::new(
        token(&claims("alice"), SECRET),
        Some(SystemTime::now() + Duration::from_secs(3600)),
    );
    let bearer = Credential::Bearer(Arc::new(token));
    let store = RemoteBlobStore::builder(&url)
        .http_client(certs.client())
        .credential(bearer)
        .build()
        .unwrap();
    store.create_container("large").await.unwrap();
    store
        .put_blob("large", "photo", vec![7; 100_000], &BlobCondition::Absent)
        .await
        .unwrap();
    let read = store.get_blob("large", "photo").await.unwrap().unwrap();
    assert_eq!(read.data, vec![7; 100_000]);

    // Without a token the same service refuses: the bearer token is what let in.
    let anonymous = RemoteBlobStore::builder(&url)
        .http_client(certs.client())
        .credential(Credential::Anonymous)
        .build()
        .unwrap();
    assert!(anonymous.get_blob("large", "photo").await.is_err());
    store.delete_container("large").await.unwrap();
    let _ = std::fs::remove_dir_all(&dir);
}
