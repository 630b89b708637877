//! The binary's HTTPS and bearer-token settings: `--oauth` needs `--cert` and
//! `--key`, each needs the other, an unreadable key is refused naming the file, and
//! with all three the server answers over HTTPS (its first line says so).

#![allow(clippy::unwrap_used)] // a test: a failure is a panic

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};

fn binary() -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_tables-server"));
    command.args(["--port", "0", "--threads", "1", "--log-level", "error"]);
    command
}

fn refused(args: &[&str]) -> String {
    let out = binary().args(args).output().unwrap();
    assert_eq!(out.status.code(), Some(2), "{args:?}: {out:?}");
    String::from_utf8_lossy(&out.stderr).into_owned()
}

#[test]
fn https_and_oauth_settings() {
    let dir = std::env::temp_dir().join(format!("tables-server-https-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let key = rcgen::KeyPair::generate().unwrap();
    let cert = rcgen::CertificateParams::new(vec!["127.0.0.1".to_owned()])
        .unwrap()
        .self_signed(&key)
        .unwrap();
    let (cert_path, key_path) = (dir.join("cert.pem"), dir.join("key.pem"));
    std::fs::write(&cert_path, cert.pem()).unwrap();
    std::fs::write(&key_path, key.serialize_pem()).unwrap();
    let (cert_arg, key_arg) = (cert_path.to_str().unwrap(), key_path.to_str().unwrap());

    assert!(refused(&["--oauth"]).contains("--oauth needs HTTPS"));
    assert!(refused(&["--cert", cert_arg]).contains("--cert needs --key"));
    assert!(refused(&["--key", key_arg]).contains("--key needs --cert"));
    assert!(refused(&["--oauth-role", "alice"]).contains("OID=ROLE"));
    assert!(refused(&["--oauth-role", "alice=owner"]).contains("not a table data role"));
    let missing = dir.join("missing.pem");
    let message = refused(&["--cert", cert_arg, "--key", missing.to_str().unwrap()]);
    assert!(message.contains("missing.pem"), "{message}");
    // A certificate given as its own key.
    let message = refused(&["--cert", cert_arg, "--key", cert_arg]);
    assert!(message.contains("private key"), "{message}");

    let mut child = binary()
        .args(["--cert", cert_arg, "--key", key_arg, "--oauth"])
        .args(["--oauth-role", "alice=reader", "--oauth-require-role"])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let stdout = child.stdout.take().unwrap();
    let mut lines = BufReader::new(stdout).lines();
    let first = lines.next().unwrap().unwrap();
    let second = lines.next().unwrap().unwrap();
    child.kill().unwrap();
    let _ = child.wait();
    let _ = std::fs::remove_dir_all(&dir);
    assert!(
        first.starts_with("tables-server listening on https://127.0.0.1:"),
        "{first}"
    );
    assert!(
        second.contains("DefaultEndpointsProtocol=https;"),
        "{second}"
    );
    assert!(second.contains("TableEndpoint=https://"), "{second}");
}
